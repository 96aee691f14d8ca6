# Remove what install.ps1 installed: the environment under %LOCALAPPDATA%\gpu-tco, the Start-menu
# shortcuts and the xlwings.conf settings it wrote (your other xlwings settings stay).
$ErrorActionPreference = "Stop"
$HomeDir = Join-Path $env:LOCALAPPDATA "gpu-tco"
$Py = Join-Path $HomeDir "venv\Scripts\python.exe"
$Record = Join-Path $HomeDir "xlwings-settings.json"
if (-not (Test-Path $HomeDir)) { Write-Host "gpu-tco uninstaller: no installation in $HomeDir"; exit 2 }
if ((Test-Path $Record) -and (Test-Path $Py)) {
    & $Py -m gpu_tco.install_addin --uninstall --record $Record
}
# The xlwings add-in itself stays in Excel: other workbooks may use it ("xlwings addin remove" removes it).
$Menu = Join-Path ([Environment]::GetFolderPath("Programs")) "gpu-tco"
if (Test-Path $Menu) { Remove-Item -Recurse -Force $Menu }
# this script lives in the folder it removes: leave the folder first
Set-Location $env:TEMP
Remove-Item -Recurse -Force $HomeDir
Write-Host "gpu-tco uninstaller: removed $HomeDir and the Start-menu shortcuts"
