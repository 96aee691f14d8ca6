#!/bin/sh
# Build the folder users download: the wheel, the installers and uninstallers, and a short INSTALL.txt,
# zipped as gpu-tco-VERSION.zip.  Unzipped, one command installs gpu-tco:
#   Windows:        powershell -ExecutionPolicy Bypass -File install.ps1
#   macOS, Linux:   sh install.sh
#
#   sh installer/make-release.sh [OUT_DIR] [WHEEL]     defaults: dist/ and a wheel built from this project
set -eu
here=$(cd -- "$(dirname -- "$0")" && pwd)
root=$(cd -- "$here/.." && pwd)
out=${1:-$root/dist}
python=${PYTHON:-python3}
mkdir -p -- "$out"
wheel=${2:-}
if [ -z "$wheel" ]; then
    "$python" -m pip wheel -q --no-deps -w "$out" "$root"
    for candidate in "$out"/gpu_tco-*.whl; do [ -f "$candidate" ] && wheel=$candidate; done  # the last in name order
fi
[ -f "$wheel" ] || { echo "make-release: no wheel: $wheel" >&2; exit 2; }
version=$(basename -- "$wheel" | cut -d- -f2)
folder="$out/gpu-tco-$version"
rm -rf -- "$folder"
mkdir -p -- "$folder"
cp -- "$wheel" "$here/install.sh" "$here/uninstall.sh" "$here/install.ps1" "$here/uninstall.ps1" "$folder/"
cat > "$folder/INSTALL.txt" <<TEXT
gpu-tco $version: which GPUs, how many, rent or buy, how long, how much.

Install (needs Python 3.11 or newer; nothing needs administrator rights):
  Windows:       powershell -ExecutionPolicy Bypass -File install.ps1
  macOS, Linux:  sh install.sh

You get the desktop form (Start menu, applications menu or ~/Applications), the gpu-tco command and the
Excel functions (=GPU_TCO() and the others; on macOS the xlwings Lite files). To remove everything:
Start menu > gpu-tco > Uninstall gpu-tco, or sh ~/.local/share/gpu-tco/uninstall.sh
(macOS: sh ~/Library/Application\ Support/gpu-tco/uninstall.sh).
TEXT
(cd "$out" && "$python" -m zipfile -c "gpu-tco-$version.zip" "gpu-tco-$version")
echo "$out/gpu-tco-$version.zip"
