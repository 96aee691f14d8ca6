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
# (further pip options, e.g. --index-url of a company mirror), GPU_TCO_SYSTEM (macos or linux: the
# steps of that system whatever this one is; the tests run the macOS steps on Linux with it).
#
# What it refuses (and then changes nothing): an installation folder that exists and is not empty (unless
# it holds an earlier installation by this script, which is replaced), a file it would write that is
# already there and is not its own (e.g. another ~/.local/bin/gpu-tco), a path holding a control
# character (a line break, a tab), an installation folder whose path holds ':' (Python's venv refuses it).  Every file and folder it creates is listed in
# GPU_TCO_HOME/installed-files.txt; the uninstaller removes only those.  A failed or interrupted
# installation removes what it had created.  Paths are data: quoted for the shell, escaped for the
# desktop entry, passed to Python as arguments; no path is ever evaluated.
# Undo everything with: sh "$GPU_TCO_HOME/uninstall.sh"
set -eu

say() { printf 'gpu-tco installer: %s\n' "$*"; }
fail() { printf 'gpu-tco installer: error: %s\n' "$*" >&2; exit 2; }

# 'text' for the shell: single quotes, each ' written as '\''
shell_quote() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }
# one argument of a desktop entry's Exec key (freedesktop Desktop Entry Specification 1.5, "The Exec key"):
# double-quoted with \ " ` $ escaped by a backslash, then every backslash doubled by the string escaping
# that applies first, and % doubled (a single % starts a field code)
desktop_quote() {
    printf '"%s"' "$(printf '%s' "$1" | sed -e 's/[\\"`$]/\\&/g' -e 's/\\/\\\\/g' -e 's/%/%%/g')"
}

here=$(cd -- "$(dirname -- "$0")" && pwd)
source_spec=${1:-}
if [ -z "$source_spec" ]; then
    # a release folder holds the wheel beside this script; a copy of the project holds pyproject.toml above it
    wheel=
    for candidate in "$here"/gpu_tco-*.whl; do [ -f "$candidate" ] && wheel=$candidate; done
    if [ -n "$wheel" ]; then
        source_spec=$wheel
    elif [ -f "$here/../pyproject.toml" ]; then
        source_spec=$(cd -- "$here/.." && pwd)
    else
        fail "no gpu-tco wheel beside this script; name it: sh install.sh gpu_tco-VERSION-py3-none-any.whl"
    fi
elif [ -e "$source_spec" ]; then
    source_spec=$(cd -- "$(dirname -- "$source_spec")" && pwd)/$(basename -- "$source_spec")
fi

system=${GPU_TCO_SYSTEM:-}
if [ -z "$system" ]; then
    case "$(uname -s)" in Darwin) system=macos ;; *) system=linux ;; esac
fi
case "$system" in
    macos) data_dir="$HOME/Library/Application Support" ;;
    linux) data_dir=${XDG_DATA_HOME:-$HOME/.local/share} ;;
    *) fail "GPU_TCO_SYSTEM is '$system'; allowed: macos, linux" ;;
esac
home_dir=${GPU_TCO_HOME:-$data_dir/gpu-tco}
extras=${GPU_TCO_EXTRAS-excel,gui}
bin_dir=${GPU_TCO_BIN:-$HOME/.local/bin}
python=${PYTHON:-python3}
case "$home_dir" in /*) ;; *) home_dir=$(pwd)/$home_dir ;; esac
case "$bin_dir" in /*) ;; *) bin_dir=$(pwd)/$bin_dir ;; esac
home_dir=${home_dir%/}

venv="$home_dir/venv"
py="$venv/bin/python"
launcher="$home_dir/gpu-tco-form"
command_link="$bin_dir/gpu-tco"
manifest="$home_dir/installed-files.txt"
record="$home_dir/xlwings-settings.json"
if [ "$system" = linux ]; then
    apps="$data_dir/applications"
    menu_file="$apps/gpu-tco-form.desktop"
else
    apps="$HOME/Applications"
    menu_file="$apps/gpu-tco form.command"
fi

command -v "$python" >/dev/null 2>&1 || fail "$python not found; install Python 3.11 or newer (python.org or your package manager)"
"$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' || fail "$python is older than 3.11"

# a path in an error message: as it is, or as Python writes it (repr) when it holds a character that is not
# printable (a line break, U+0085, U+2028 ... would split the one-line message)
shown() { "$python" -c 'import sys; p = sys.argv[1]; print(p if p.isprintable() else repr(p))' "$1"; }
for path in "$home_dir" "$bin_dir" "$menu_file" "$source_spec"; do
    case "$path" in
        *[[:cntrl:]]*) fail "$(shown "$path") holds a control character (a line break or a tab); install into a folder without one (GPU_TCO_HOME, GPU_TCO_BIN)" ;;
    esac
done

# Python's venv refuses a path holding the PATH separator (its bin folder could not be put on PATH)
case "$venv" in
    *:*) fail "$(shown "$home_dir") holds ':', which the path of a Python environment cannot hold; install into a folder without it (GPU_TCO_HOME)" ;;
esac


# an earlier installation by this script is replaced; any other content of the folder is the user's
if [ -f "$manifest" ] && [ -f "$home_dir/uninstall.sh" ]; then
    if ! head -n 1 "$manifest" | grep -q '^# gpu-tco installation manifest 1$'; then
        fail "an older gpu-tco installation is in $(shown "$home_dir"); remove it first: sh $(shell_quote "$home_dir/uninstall.sh")"
    fi
    say "replacing the gpu-tco installation in $home_dir"
    sh "$here/uninstall.sh" "$home_dir" || fail "could not remove the earlier installation in $(shown "$home_dir")"
fi
if [ -e "$home_dir" ] || [ -L "$home_dir" ]; then
    [ -d "$home_dir" ] && [ ! -L "$home_dir" ] || fail "$(shown "$home_dir") exists and is not a folder; choose another GPU_TCO_HOME"
    [ -z "$(ls -A -- "$home_dir")" ] || fail "$(shown "$home_dir") exists and is not empty; gpu-tco installs only into a new or empty folder (GPU_TCO_HOME)"
fi
# never overwrite a file gpu-tco did not write
for path in "$command_link" "$menu_file"; do
    if [ -e "$path" ] || [ -L "$path" ]; then
        fail "$(shown "$path") already exists and was not written by this installer; move it away (or set GPU_TCO_BIN), then install again"
    fi
done

# From here on every file and folder created is listed in the manifest at once: "dir - PATH" (a folder it
# created; removed when empty), "file CHECKSUM PATH" (removed while unchanged), "tree - PATH" (a folder whose
# whole content it created: the environment).  A failure removes them all again.
pending=
make_dir() {  # mkdir -p that notes each folder it creates
    [ -d "$1" ] && return 0
    make_dir "$(dirname -- "$1")"
    mkdir -- "$1"
    if [ -f "$manifest" ]; then printf 'dir - %s\n' "$1" >> "$manifest"; else pending="${pending}dir - $1
"; fi
}
note_file() { printf 'file %s %s\n' "$(cksum < "$1" | tr ' ' '-')" "$1" >> "$manifest"; }

rollback() {
    status=$?
    trap - EXIT INT TERM HUP
    if [ "$status" -ne 0 ] && [ -f "$manifest" ]; then
        case "$status" in 130|143) say "installation interrupted: removing what it had created" ;;
                          *) say "installation failed: removing what it had created" ;; esac
        sh "$here/uninstall.sh" "$home_dir" >/dev/null 2>&1 || say "could not remove everything; see $manifest"
    fi
    exit "$status"
}
trap rollback EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

make_dir "$home_dir"
{ printf '# gpu-tco installation manifest 1\n'; printf '%s' "$pending"; } > "$manifest"
cp -- "$here/uninstall.sh" "$home_dir/uninstall.sh"
note_file "$home_dir/uninstall.sh"

# what Python and pip say goes to a file, shown when they fail: Ctrl-C while they run ends in the one line
# above, without the traceback Python prints when interrupted
errors="$home_dir/errors.txt"
printf 'file - %s\n' "$errors" >> "$manifest"
say "creating the environment in $venv"
printf 'tree - %s\n' "$venv" >> "$manifest"
"$python" -m venv --without-pip -- "$venv" 2> "$errors" || { cat -- "$errors" >&2; fail "could not create the environment in $(shown "$venv")"; }
# pip of the Python that made the environment installs into it (pip --python, pip 22.3 or newer): seconds faster
# than a copy of pip inside it; without such a pip, the environment gets its own (ensurepip)
if "$python" -c 'import sys, pip; sys.exit(tuple(int(n) for n in pip.__version__.split(".")[:2]) < (22, 3))' >/dev/null 2>&1; then
    pip() { "$python" -m pip --python "$py" "$@"; }
else
    "$py" -m ensurepip --default-pip >/dev/null 2> "$errors" || fail "$python has neither pip nor ensurepip (Debian, Ubuntu: apt install python3-venv)"
    pip() { "$py" -m pip "$@"; }
fi
requirement=$source_spec
[ -n "$extras" ] && requirement="$source_spec[$extras]"
say "installing $requirement (this takes a minute)"
# GPU_TCO_PIP_ARGS: further pip options, e.g. --index-url for a company mirror (split on spaces on purpose)
# shellcheck disable=SC2086
pip install -q --disable-pip-version-check ${GPU_TCO_PIP_ARGS:-} "$requirement" 2> "$errors" ||
    { cat -- "$errors" >&2; fail "pip could not install $(shown "$requirement")"; }
rm -f -- "$errors"

# pip's command wrappers start with the environment's path inside double quotes when it holds a space, which
# the shell would expand ($, backticks): each becomes a script that passes the path as one quoted word
"$py" - "$venv/bin" <<'PYTHON'
import os, sys
from pathlib import Path
bin_dir = Path(sys.argv[1])
python = str(bin_dir / "python")
quoted = "'" + python.replace("'", "'\\''") + "'"
runner = ("import sys; p = sys.argv[1]; sys.argv[:2] = [p]; s = open(p, encoding='utf-8').read(); "
          "exec(compile(s[s.index(chr(10) + '# python' + chr(10)):], p, 'exec'))")
for script in bin_dir.iterdir():
    if script.is_symlink() or not script.is_file():
        continue
    with open(script, "rb") as f:
        head = f.read(40)
    if not head.startswith(b"#!/bin/sh\n'''exec'"):
        continue
    text = script.read_text(encoding="utf-8")
    body = text.split("\n' '''\n", 1)[1]
    if script.name == "gpu-tco":
        new = f'#!/bin/sh\nexec {quoted} -m gpu_tco "$@"\n'
    else:
        new = f"#!/bin/sh\nexec {quoted} -c \"{runner}\" \"$0\" \"$@\"\n# python\n{body}"
    script.write_text(new, encoding="utf-8")
PYTHON

# the gpu-tco command and the form's launcher: the interpreter's path as one quoted word
make_dir "$bin_dir"
printf '#!/bin/sh\nexec %s -m gpu_tco "$@"\n' "$(shell_quote "$py")" > "$command_link"
chmod +x "$command_link"
note_file "$command_link"
printf '#!/bin/sh\nexec %s -m gpu_tco.gui "$@"\n' "$(shell_quote "$py")" > "$launcher"
chmod +x "$launcher"
note_file "$launcher"

make_dir "$apps"
if [ "$system" = linux ]; then
    cat > "$menu_file" <<DESKTOP
[Desktop Entry]
Type=Application
Name=gpu-tco
GenericName=GPU plan
Comment=Which GPUs, how many, rent or buy, how long, how much
Exec=$(desktop_quote "$launcher") %f
Terminal=false
Categories=Office;Finance;
DESKTOP
    note_file "$menu_file"
    say "added the desktop form to your applications menu ($menu_file)"
    case ",$extras," in
        *,excel,*)
            printf 'file - %s\n' "$record" >> "$manifest"
            "$py" -m gpu_tco.install_addin --no-excel --record "$record" ;;
        *) say "the Excel settings are not written: GPU_TCO_EXTRAS holds no excel" ;;
    esac
else
    cp -- "$launcher" "$menu_file"
    chmod +x "$menu_file"
    note_file "$menu_file"
    say "added $menu_file (double-click it to open the form)"
    lite="$home_dir/xlwings-lite"
    make_dir "$lite"
    printf 'file - %s\n' "$lite/main.py" "$lite/requirements.txt" >> "$manifest"
    "$py" -m gpu_tco addin lite --out "$lite" >/dev/null
    say "Excel: classic xlwings runs no Python functions on macOS; paste $lite/main.py and"
    say "requirements.txt into the xlwings Lite add-in (Excel's Add-ins store) to get =GPU_TCO() and the others"
fi

version=$("$py" -c 'import importlib.metadata as m; print(m.version("gpu-tco"))')
say "done: gpu-tco $version. Commands: gpu-tco (in $bin_dir), the form: $launcher"
say "to remove everything: sh $(shell_quote "$home_dir/uninstall.sh")"
