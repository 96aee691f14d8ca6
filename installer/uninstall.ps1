# Remove what install.ps1 installed, and nothing else: the files and folders its manifest (installed-files.txt
# in the installation folder) lists.  A listed file changed since it was installed stays (and is named); a
# listed folder is removed only when it is empty once gpu-tco's files are gone; the xlwings settings get back
# the values they had before the installation (your other xlwings settings stay).
#   powershell -ExecutionPolicy Bypass -File uninstall.ps1 [-HomeDir FOLDER]   (default: %LOCALAPPDATA%\gpu-tco)
param([string]$HomeDir = "")
$ErrorActionPreference = "Stop"
function Say([string]$Text) { Write-Host "gpu-tco uninstaller: $Text" }

if (-not $HomeDir) { $HomeDir = Join-Path $env:LOCALAPPDATA "gpu-tco" }
$HomeDir = [System.IO.Path]::GetFullPath($HomeDir).TrimEnd("\")
$Manifest = Join-Path $HomeDir "installed-files.txt"
$Py = Join-Path $HomeDir "venv\Scripts\python.exe"
$Record = Join-Path $HomeDir "xlwings-settings.json"
# the manifest the installer writes: never remove anything from a folder gpu-tco did not install into
if (-not (Test-Path -LiteralPath $Manifest -PathType Leaf)) { Say "no gpu-tco installation in $HomeDir"; exit 2 }
$Lines = @(Get-Content -LiteralPath $Manifest -Encoding UTF8)
if ($Lines[0] -ne "# gpu-tco installation manifest 1") { Say "$Manifest is not a manifest this uninstaller reads; nothing removed"; exit 2 }

if ((Test-Path -LiteralPath $Record -PathType Leaf) -and (Test-Path -LiteralPath $Py -PathType Leaf)) {
    & $Py -m gpu_tco.install_addin --uninstall --record $Record
    if ($LASTEXITCODE -ne 0) { Say "could not restore the xlwings settings; $Record notes what gpu-tco changed" }
}
# The xlwings add-in itself stays in Excel: other workbooks may use it ("xlwings addin remove" removes it).
# this script lives in the folder it removes: leave the folder first
Set-Location -LiteralPath $env:TEMP
$Kept = 0
# newest first, so a folder comes after its content
for ($i = $Lines.Count - 1; $i -ge 1; $i--) {
    $Parts = $Lines[$i].Split(" ", 3)
    if ($Parts.Count -lt 3) { continue }
    $Kind, $Sum, $Path = $Parts
    if ($Kind -eq "file") {
        if (Test-Path -LiteralPath $Path -PathType Leaf) {
            if ($Sum -eq "-" -or (Get-FileHash -LiteralPath $Path -Algorithm SHA256).Hash -eq $Sum) {
                Remove-Item -LiteralPath $Path -Force
                Say "removed $Path"
            } else { Say "kept ${Path}: it was changed after gpu-tco installed it"; $Kept = 1 }
        }
    } elseif ($Kind -eq "tree") {
        # only the environment, only inside the installation folder
        if ($Path.StartsWith($HomeDir + "\") -and (Test-Path -LiteralPath $Path -PathType Container)) {
            Remove-Item -LiteralPath $Path -Recurse -Force
            Say "removed $Path"
        }
    } elseif ($Kind -eq "dir") {
        if ($Path -eq $HomeDir) { Remove-Item -LiteralPath $Manifest -Force -ErrorAction SilentlyContinue }
        if (Test-Path -LiteralPath $Path -PathType Container) {
            if (-not (Get-ChildItem -LiteralPath $Path -Force)) {
                Remove-Item -LiteralPath $Path -Force
                if ($Path -eq $HomeDir) { Say "removed $Path" }
            } elseif ($Path -eq $HomeDir) { Say "kept ${Path}: it holds files gpu-tco did not install" }
        }
    }
}
Remove-Item -LiteralPath $Manifest -Force -ErrorAction SilentlyContinue
exit $Kept
