# gpu-tco for Windows: a private Python environment under %LOCALAPPDATA%\gpu-tco, the Excel functions
# (classic xlwings add-in) and Start-menu shortcuts for the desktop form and for uninstalling.
# Nothing needs administrator rights.
#
#   powershell -ExecutionPolicy Bypass -File install.ps1 [-Source WHEEL_OR_FOLDER] [-Extras excel,gui] [-NoExcel] [-HomeDir FOLDER]
#   (default source: the wheel beside this script in a release folder, or the project this script belongs to)
#
# What it refuses (and then changes nothing): an installation folder that exists and is not empty (unless it
# holds an earlier installation by this script, which is replaced), a Start-menu folder "gpu-tco" it did not
# create.  Every file and folder it creates is listed in installed-files.txt in the installation folder; the
# uninstaller removes only those.  A failed installation removes what it had created.  Paths are data: passed
# as literal paths (-LiteralPath: no wildcards) and as single arguments, never evaluated.
# Undo everything with the Start-menu shortcut "Uninstall gpu-tco" (or uninstall.ps1 in the folder).
param(
    [string]$Source = "",
    [string]$Extras = "excel,gui",
    [switch]$NoExcel,
    [string]$HomeDir = ""
)
$ErrorActionPreference = "Stop"

function Say([string]$Text) { Write-Host "gpu-tco installer: $Text" }
function Fail([string]$Text) { Write-Host "gpu-tco installer: error: $Text" -ForegroundColor Red; exit 2 }

$Here = Split-Path -Parent $MyInvocation.MyCommand.Path
if (-not $Source) {
    # a release folder holds the wheel beside this script; a copy of the project holds pyproject.toml above it
    $Wheel = Get-ChildItem -LiteralPath $Here -Filter "gpu_tco-*.whl" -ErrorAction SilentlyContinue | Sort-Object Name | Select-Object -Last 1
    if ($Wheel) { $Source = $Wheel.FullName }
    elseif (Test-Path -LiteralPath (Join-Path $Here "..\pyproject.toml")) { $Source = (Resolve-Path -LiteralPath (Join-Path $Here "..")).Path }
    else { Fail "no gpu-tco wheel beside this script; name it: install.ps1 -Source gpu_tco-VERSION-py3-none-any.whl" }
} elseif (Test-Path -LiteralPath $Source) {
    $Source = (Resolve-Path -LiteralPath $Source).Path
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

if (-not $HomeDir) { $HomeDir = Join-Path $env:LOCALAPPDATA "gpu-tco" }
$HomeDir = [System.IO.Path]::GetFullPath($HomeDir).TrimEnd("\")
$Venv = Join-Path $HomeDir "venv"
$Py = Join-Path $Venv "Scripts\python.exe"
$PyW = Join-Path $Venv "Scripts\pythonw.exe"
$Manifest = Join-Path $HomeDir "installed-files.txt"
$Header = "# gpu-tco installation manifest 1"
$Menu = Join-Path ([Environment]::GetFolderPath("Programs")) "gpu-tco"

# an earlier installation by this script is replaced; any other content of the folder is the user's
if ((Test-Path -LiteralPath $Manifest -PathType Leaf) -and (Test-Path -LiteralPath (Join-Path $HomeDir "uninstall.ps1") -PathType Leaf)) {
    if ((Get-Content -LiteralPath $Manifest -TotalCount 1) -ne $Header) {
        Fail "an older gpu-tco installation is in $HomeDir; remove it first with its uninstall.ps1, then install again"
    }
    Say "replacing the gpu-tco installation in $HomeDir"
    & (Join-Path $Here "uninstall.ps1") -HomeDir $HomeDir
    if ($LASTEXITCODE -ne 0) { Fail "could not remove the earlier installation in $HomeDir" }
}
if (Test-Path -LiteralPath $HomeDir) {
    if (-not (Test-Path -LiteralPath $HomeDir -PathType Container)) { Fail "$HomeDir exists and is not a folder; choose another -HomeDir" }
    if (Get-ChildItem -LiteralPath $HomeDir -Force) { Fail "$HomeDir exists and is not empty; gpu-tco installs only into a new or empty folder (-HomeDir)" }
}
# never overwrite what gpu-tco did not write
if (Test-Path -LiteralPath $Menu) { Fail "the Start-menu folder $Menu already exists and was not created by this installer; remove it, then install again" }

# From here on every file and folder created is listed in the manifest at once ("dir - PATH": removed when
# empty; "file SHA256 PATH": removed while unchanged; "tree - PATH": the environment); a failure removes them.
$Pending = New-Object System.Collections.Generic.List[string]
function Note([string]$Kind, [string]$Path) {
    $Sum = "-"
    if ($Kind -eq "file") { $Sum = (Get-FileHash -LiteralPath $Path -Algorithm SHA256).Hash }
    Add-Content -LiteralPath $Manifest -Value "$Kind $Sum $Path" -Encoding UTF8
}
function Make-Dir([string]$Path) {
    if (Test-Path -LiteralPath $Path -PathType Container) { return }
    Make-Dir (Split-Path -Parent $Path)
    [System.IO.Directory]::CreateDirectory($Path) | Out-Null  # .NET: the path is taken literally
    if (Test-Path -LiteralPath $Manifest) { Note "dir" $Path } else { $Pending.Add("dir - $Path") }
}

try {
    Make-Dir $HomeDir
    Set-Content -LiteralPath $Manifest -Value (@($Header) + $Pending) -Encoding UTF8
    Copy-Item -LiteralPath (Join-Path $Here "uninstall.ps1") -Destination (Join-Path $HomeDir "uninstall.ps1")
    Note "file" (Join-Path $HomeDir "uninstall.ps1")

    Say "creating the environment in $Venv"
    Note "tree" $Venv
    & $Python[0] @($Python | Select-Object -Skip 1) -m venv $Venv
    if ($LASTEXITCODE -ne 0) { throw "could not create the environment in $Venv" }
    $Requirement = if ($Extras) { "$Source[$Extras]" } else { $Source }
    Say "installing $Requirement (this takes a few minutes)"
    & $Py -m pip install -q --disable-pip-version-check $Requirement
    if ($LASTEXITCODE -ne 0) { throw "pip could not install $Requirement" }

    # Excel: xlwings.conf (UDF MODULES, the interpreter; other settings kept) and `xlwings addin install`
    $Record = Join-Path $HomeDir "xlwings-settings.json"
    Add-Content -LiteralPath $Manifest -Value "file - $Record" -Encoding UTF8
    $AddinArgs = @("-m", "gpu_tco.install_addin", "--record", $Record)
    if ($NoExcel) { $AddinArgs += "--no-excel" }
    & $Py @AddinArgs
    if ($LASTEXITCODE -ne 0) { Say "the Excel add-in was not installed (is Excel installed and closed?); the form works regardless" }

    # Start-menu shortcuts: the form (no console window) and the uninstaller; each path is one property, never parsed
    Make-Dir $Menu
    $Shell = New-Object -ComObject WScript.Shell
    $FormLink = Join-Path $Menu "gpu-tco form.lnk"
    $Form = $Shell.CreateShortcut($FormLink)
    $Form.TargetPath = $PyW
    $Form.Arguments = "-m gpu_tco.gui"
    $Form.WorkingDirectory = [Environment]::GetFolderPath("MyDocuments")
    $Form.Description = "Which GPUs, how many, rent or buy, how long, how much"
    $Form.Save()
    Note "file" $FormLink
    $RemoveLink = Join-Path $Menu "Uninstall gpu-tco.lnk"
    $Remove = $Shell.CreateShortcut($RemoveLink)
    $Remove.TargetPath = Join-Path $env:SystemRoot "System32\WindowsPowerShell\v1.0\powershell.exe"
    # -File takes the script's path literally (a Windows path holds no double quote)
    $Remove.Arguments = "-ExecutionPolicy Bypass -File `"$(Join-Path $HomeDir 'uninstall.ps1')`" -HomeDir `"$HomeDir`""
    $Remove.Save()
    Note "file" $RemoveLink
} catch {
    Write-Host "gpu-tco installer: error: $($_.Exception.Message)" -ForegroundColor Red
    if (Test-Path -LiteralPath $Manifest) {
        Say "installation failed: removing what it had created"
        & (Join-Path $Here "uninstall.ps1") -HomeDir $HomeDir | Out-Null
    }
    exit 2
}

Say "done: $(& $Py -m gpu_tco --version). Start menu > gpu-tco > gpu-tco form; in Excel: =GPU_TCO(""H100-SXM"", 8)"
