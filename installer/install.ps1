# gpu-tco for Windows: a private Python environment under %LOCALAPPDATA%\gpu-tco, the Excel functions
# (classic xlwings add-in) and Start-menu shortcuts for the desktop form and for uninstalling.
# Nothing needs administrator rights.
#
#   powershell -ExecutionPolicy Bypass -File install.ps1 [-Source WHEEL_OR_FOLDER] [-Extras excel,gui] [-NoExcel]
#   (default source: the wheel beside this script in a release folder, or the project this script belongs to)
#
# Undo everything with the Start-menu shortcut "Uninstall gpu-tco" (or uninstall.ps1 in the folder).
param(
    [string]$Source = "",
    [string]$Extras = "excel,gui",
    [switch]$NoExcel
)
$ErrorActionPreference = "Stop"

function Say([string]$Text) { Write-Host "gpu-tco installer: $Text" }
function Fail([string]$Text) { Write-Host "gpu-tco installer: error: $Text" -ForegroundColor Red; exit 2 }

$Here = Split-Path -Parent $MyInvocation.MyCommand.Path
if (-not $Source) {
    # a release folder holds the wheel beside this script; a copy of the project holds pyproject.toml above it
    $Wheel = Get-ChildItem -Path $Here -Filter "gpu_tco-*.whl" -ErrorAction SilentlyContinue | Sort-Object Name | Select-Object -Last 1
    if ($Wheel) { $Source = $Wheel.FullName }
    elseif (Test-Path (Join-Path $Here "..\pyproject.toml")) { $Source = (Resolve-Path (Join-Path $Here "..")).Path }
    else { Fail "no gpu-tco wheel beside this script; name it: install.ps1 -Source gpu_tco-VERSION-py3-none-any.whl" }
} elseif (Test-Path $Source) {
    $Source = (Resolve-Path $Source).Path
}

# Python 3.11 or newer: the py launcher first (python.org installs it), then python on PATH
$Python = $null
foreach ($candidate in @(@("py", "-3"), @("python"))) {
    $exe = Get-Command $candidate[0] -ErrorAction SilentlyContinue
    if ($exe) {
        $args0 = @($candidate | Select-Object -Skip 1)
        & $exe.Source @args0 -c "import sys; sys.exit(sys.version_info < (3, 11))"
        if ($LASTEXITCODE -eq 0) { $Python = @($exe.Source) + $args0; break }
    }
}
if (-not $Python) { Fail "Python 3.11 or newer not found; install it from python.org (tick 'Add python.exe to PATH')" }

$HomeDir = Join-Path $env:LOCALAPPDATA "gpu-tco"
$Venv = Join-Path $HomeDir "venv"
$Py = Join-Path $Venv "Scripts\python.exe"
$PyW = Join-Path $Venv "Scripts\pythonw.exe"
Say "creating the environment in $Venv"
New-Item -ItemType Directory -Force -Path $HomeDir | Out-Null
& $Python[0] @($Python | Select-Object -Skip 1) -m venv $Venv
if ($LASTEXITCODE -ne 0) { Fail "could not create the environment in $Venv" }
$Requirement = if ($Extras) { "$Source[$Extras]" } else { $Source }
Say "installing $Requirement (this takes a few minutes)"
& $Py -m pip install -q --disable-pip-version-check $Requirement
if ($LASTEXITCODE -ne 0) { Fail "pip could not install $Requirement" }

# Excel: xlwings.conf (UDF MODULES, the interpreter; other settings kept) and `xlwings addin install`
$Record = Join-Path $HomeDir "xlwings-settings.json"
$AddinArgs = @("-m", "gpu_tco.install_addin", "--record", $Record)
if ($NoExcel) { $AddinArgs += "--no-excel" }
& $Py @AddinArgs
if ($LASTEXITCODE -ne 0) { Say "the Excel add-in was not installed (is Excel installed and closed?); the form works regardless" }

# Start-menu shortcuts: the form (no console window) and the uninstaller
$Menu = Join-Path ([Environment]::GetFolderPath("Programs")) "gpu-tco"
New-Item -ItemType Directory -Force -Path $Menu | Out-Null
Copy-Item (Join-Path $Here "uninstall.ps1") (Join-Path $HomeDir "uninstall.ps1") -Force
$Shell = New-Object -ComObject WScript.Shell
$Form = $Shell.CreateShortcut((Join-Path $Menu "gpu-tco form.lnk"))
$Form.TargetPath = $PyW
$Form.Arguments = "-m gpu_tco.gui"
$Form.WorkingDirectory = [Environment]::GetFolderPath("MyDocuments")
$Form.Description = "Which GPUs, how many, rent or buy, how long, how much"
$Form.Save()
$Remove = $Shell.CreateShortcut((Join-Path $Menu "Uninstall gpu-tco.lnk"))
$Remove.TargetPath = Join-Path $env:SystemRoot "System32\WindowsPowerShell\v1.0\powershell.exe"
$Remove.Arguments = "-ExecutionPolicy Bypass -File `"$(Join-Path $HomeDir 'uninstall.ps1')`""
$Remove.Save()

Say "done: $(& $Py -m gpu_tco --version). Start menu > gpu-tco > gpu-tco form; in Excel: =GPU_TCO(""H100-SXM"", 8)"
