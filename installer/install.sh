#!/bin/sh
# gpu-tco for macOS and Linux: a private Python environment, the gpu-tco command, a launcher for the
# desktop form, and the Excel functions (Linux: xlwings settings; macOS: the xlwings Lite files, since
# classic xlwings runs no Python functions on macOS).  Nothing outside your home folder is touched.
#
#   sh install.sh [WHEEL | PROJECT FOLDER]      default: the wheel beside this script (a release folder),
#                                                or the project this script belongs to
#
# Settings (environment variables): GPU_TCO_HOME (default: ~/.local/share/gpu-tco on Linux,
# ~/Library/Application Support/gpu-tco on macOS), GPU_TCO_EXTRAS (default: excel,gui),
# GPU_TCO_BIN (default: ~/.local/bin), PYTHON (default: python3; 3.11 or newer), GPU_TCO_PIP_ARGS
# (further pip options, e.g. --index-url of a company mirror).
# Undo everything with: sh "$GPU_TCO_HOME/uninstall.sh"
set -eu

say() { printf 'gpu-tco installer: %s\n' "$*"; }
fail() { printf 'gpu-tco installer: error: %s\n' "$*" >&2; exit 2; }

here=$(cd "$(dirname "$0")" && pwd)
source_spec=${1:-}
if [ -z "$source_spec" ]; then
    # a release folder holds the wheel beside this script; a copy of the project holds pyproject.toml above it
    wheel=$(ls "$here"/gpu_tco-*.whl 2>/dev/null | sort | tail -n 1)
    if [ -n "$wheel" ]; then
        source_spec=$wheel
    elif [ -f "$here/../pyproject.toml" ]; then
        source_spec=$(cd "$here/.." && pwd)
    else
        fail "no gpu-tco wheel beside this script; name it: sh install.sh gpu_tco-VERSION-py3-none-any.whl"
    fi
elif [ -e "$source_spec" ]; then
    source_spec=$(cd "$(dirname "$source_spec")" && pwd)/$(basename "$source_spec")
fi

case "$(uname -s)" in
    Darwin) system=macos; data_dir="$HOME/Library/Application Support" ;;
    *) system=linux; data_dir=${XDG_DATA_HOME:-$HOME/.local/share} ;;
esac
home_dir=${GPU_TCO_HOME:-$data_dir/gpu-tco}
extras=${GPU_TCO_EXTRAS-excel,gui}
bin_dir=${GPU_TCO_BIN:-$HOME/.local/bin}
python=${PYTHON:-python3}

command -v "$python" >/dev/null 2>&1 || fail "$python not found; install Python 3.11 or newer (python.org or your package manager)"
"$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' || fail "$python is older than 3.11"

say "creating the environment in $home_dir/venv"
mkdir -p "$home_dir"
manifest="$home_dir/installed-files.txt"   # files outside $home_dir that the uninstaller removes
: > "$manifest"
"$python" -m venv "$home_dir/venv"
py="$home_dir/venv/bin/python"
requirement=$source_spec
[ -n "$extras" ] && requirement="$source_spec[$extras]"
say "installing $requirement (this takes a minute)"
# GPU_TCO_PIP_ARGS: further pip options, e.g. --index-url for a company mirror
# shellcheck disable=SC2086
"$py" -m pip install -q --disable-pip-version-check ${GPU_TCO_PIP_ARGS:-} "$requirement"

mkdir -p "$bin_dir"
ln -sf "$home_dir/venv/bin/gpu-tco" "$bin_dir/gpu-tco"
echo "$bin_dir/gpu-tco" >> "$manifest"

launcher="$home_dir/gpu-tco-form"
printf '#!/bin/sh\nexec "%s" -m gpu_tco.gui "$@"\n' "$py" > "$launcher"
chmod +x "$launcher"

if [ "$system" = linux ]; then
    apps="$data_dir/applications"
    mkdir -p "$apps"
    desktop="$apps/gpu-tco-form.desktop"
    cat > "$desktop" <<DESKTOP
[Desktop Entry]
Type=Application
Name=gpu-tco
GenericName=GPU plan
Comment=Which GPUs, how many, rent or buy, how long, how much
Exec="$launcher" %f
Terminal=false
Categories=Office;Finance;
DESKTOP
    echo "$desktop" >> "$manifest"
    say "added the desktop form to your applications menu ($desktop)"
    "$py" -m gpu_tco.install_addin --no-excel --record "$home_dir/xlwings-settings.json"
else
    mkdir -p "$HOME/Applications"
    command_file="$HOME/Applications/gpu-tco form.command"
    cp "$launcher" "$command_file"
    chmod +x "$command_file"
    echo "$command_file" >> "$manifest"
    say "added $command_file (double-click it to open the form)"
    "$py" -m gpu_tco addin lite --out "$home_dir/xlwings-lite"
    say "Excel: classic xlwings runs no Python functions on macOS; paste $home_dir/xlwings-lite/main.py and"
    say "requirements.txt into the xlwings Lite add-in (Excel's Add-ins store) to get =GPU_TCO() and the others"
fi

cp "$here/uninstall.sh" "$home_dir/uninstall.sh"
say "done: $("$py" -m gpu_tco --version). Commands: gpu-tco (in $bin_dir), the form: $launcher"
say "to remove everything: sh \"$home_dir/uninstall.sh\""
