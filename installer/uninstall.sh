#!/bin/sh
# Remove what install.sh installed, and nothing else: the files and folders its manifest
# (installed-files.txt in the installation folder) lists.  A listed file that was changed since it was
# installed stays (and is named); a listed folder is removed only when it is empty once gpu-tco's files
# are gone; the xlwings settings get back the values they had before the installation (other settings stay).
#   sh uninstall.sh [INSTALLATION FOLDER]   (the copy in the installation folder knows where it is)
set -eu
say() { printf 'gpu-tco uninstaller: %s\n' "$*"; }

here=$(cd -- "$(dirname -- "$0")" && pwd)
if [ -n "${1:-}" ]; then
    home_dir=${1%/}
elif [ -f "$here/installed-files.txt" ]; then
    home_dir=$here
else
    case "${GPU_TCO_SYSTEM:-$(uname -s)}" in
        Darwin|macos) data_dir="$HOME/Library/Application Support" ;;
        *) data_dir=${XDG_DATA_HOME:-$HOME/.local/share} ;;
    esac
    home_dir=${GPU_TCO_HOME:-$data_dir/gpu-tco}
fi
manifest="$home_dir/installed-files.txt"
# the manifest the installer writes: never remove anything from a folder gpu-tco did not install into
[ -f "$manifest" ] || { say "no gpu-tco installation in $home_dir"; exit 2; }
head -n 1 "$manifest" | grep -q '^# gpu-tco installation manifest 1$' || {
    say "$manifest is not a manifest this uninstaller reads; nothing removed"; exit 2; }

record="$home_dir/xlwings-settings.json"
if [ -f "$record" ]; then
    if [ -x "$home_dir/venv/bin/python" ]; then
        "$home_dir/venv/bin/python" -m gpu_tco.install_addin --uninstall --record "$record" ||
            say "could not restore the xlwings settings; $record notes what gpu-tco changed"
    else
        say "the environment is gone: the xlwings settings $record lists stay as they are"
    fi
fi

# newest first, so a folder comes after its content (paths hold no line breaks: the installer refuses them)
kept=0
entries=$(awk 'NR > 1 { line[NR] = $0 } END { for (i = NR; i > 1; i--) print line[i] }' "$manifest")
while IFS= read -r line; do
    kind=${line%% *}
    rest=${line#* }
    sum=${rest%% *}
    path=${rest#* }
    case "$kind" in
        file)
            if [ -f "$path" ] && [ ! -L "$path" ]; then
                if [ "$sum" = - ] || [ "$(cksum < "$path" | tr ' ' '-')" = "$sum" ]; then
                    rm -f -- "$path" && say "removed $path"
                else
                    say "kept $path: it was changed after gpu-tco installed it"; kept=1
                fi
            fi ;;
        tree)
            # only the environment, only inside the installation folder
            case "$path" in "$home_dir"/*) if [ -d "$path" ]; then rm -rf -- "$path" && say "removed $path"; fi ;; esac ;;
        dir)
            [ "$path" = "$home_dir" ] && rm -f -- "$manifest"
            if [ -d "$path" ] && [ ! -L "$path" ]; then
                if [ -z "$(ls -A -- "$path")" ]; then
                    rmdir -- "$path"
                    [ "$path" = "$home_dir" ] && say "removed $path"
                elif [ "$path" = "$home_dir" ]; then
                    say "kept $path: it holds files gpu-tco did not install"
                fi
            fi ;;
    esac
done <<ENTRIES
$entries
ENTRIES
rm -f -- "$manifest"
[ "$kept" -eq 0 ] || exit 1
exit 0
