#!/bin/sh
# Remove what install.sh installed: the environment, the launchers, the applications-menu entry and
# the xlwings settings it wrote (your other xlwings settings stay).
#   sh uninstall.sh        (the copy in the installation folder knows where it is)
set -eu
say() { printf 'gpu-tco uninstaller: %s\n' "$*"; }

here=$(cd "$(dirname "$0")" && pwd)
if [ -f "$here/installed-files.txt" ]; then
    home_dir=$here
else
    case "$(uname -s)" in
        Darwin) data_dir="$HOME/Library/Application Support" ;;
        *) data_dir=${XDG_DATA_HOME:-$HOME/.local/share} ;;
    esac
    home_dir=${GPU_TCO_HOME:-$data_dir/gpu-tco}
fi
# the marker the installer writes: never remove a folder gpu-tco did not create
[ -f "$home_dir/installed-files.txt" ] || { say "no gpu-tco installation in $home_dir"; exit 2; }

if [ -f "$home_dir/xlwings-settings.json" ] && [ -x "$home_dir/venv/bin/python" ]; then
    "$home_dir/venv/bin/python" -m gpu_tco.install_addin --uninstall --record "$home_dir/xlwings-settings.json"
fi
while IFS= read -r file; do
    [ -n "$file" ] && rm -f "$file" && say "removed $file"
done < "$home_dir/installed-files.txt"
rm -rf "$home_dir"
say "removed $home_dir"
