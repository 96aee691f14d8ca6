"""Set up the gpu-tco Excel functions for the classic xlwings add-in (Windows; see README).

    python installer/install_addin.py            # writes ~/.xlwings/xlwings.conf, runs `xlwings addin install`
    python installer/install_addin.py --no-excel # only the settings (no Excel on this machine)
    python -m gpu_tco.install_addin --no-excel --record F.json   # also note what was changed (installers)
    python -m gpu_tco.install_addin --uninstall --record F.json  # undo exactly that, keep everything else

Run it with the Python of the environment gpu-tco is installed in (pip install "gpu-tco[excel]"):
that interpreter is what Excel will start.  Existing settings in xlwings.conf are kept; only
"UDF MODULES" and this platform's interpreter key are set.  Standard library only.
"""
from __future__ import annotations

import argparse
import base64
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

UDF_MODULE = "gpu_tco.addin.udfs"
INTERPRETER_KEY = {"win32": "INTERPRETER_WIN", "darwin": "INTERPRETER_MAC"}


def conf_path(home: Path | None = None) -> Path:
    return Path(home or Path.home()) / ".xlwings" / "xlwings.conf"


def _key_of(line: str) -> str | None:
    values = re.findall(r'"[^"]*"', line)
    return values[0].strip('"') if len(values) >= 2 else None


def _read_lines(path: Path) -> list[str]:
    # bytes that are not UTF-8 pass through unchanged (surrogateescape): the user's lines are written back as read
    # lines end where xlwings' reading ends them (\n, \r\n, \r), not at the other breaks str.splitlines knows (U+0085, U+2028, ...)
    text = path.read_bytes().decode("utf-8", "surrogateescape") if path.is_file() else ""
    return re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", text)


def read_conf(path: Path) -> dict[str, str]:
    """xlwings.conf lines are "KEY","VALUE" (xlwings.utils.read_user_config reads them the same way)."""
    conf: dict[str, str] = {}
    for line in _read_lines(path):
        values = re.findall(r'"[^"]*"', line)
        if len(values) >= 2:
            conf[values[0].strip('"')] = values[1].strip('"')
    return conf


def unwritable(value: str) -> str | None:
    """Why ``value`` cannot be an xlwings.conf setting, or None.  A line holds "KEY","VALUE" with no escape for
    a double quote or a line break, and xlwings expands $NAME, ${NAME} and (on Windows) %NAME% and %% in values
    (os.path.expandvars in xlwings.utils.read_user_config), so a path holding them would name another file."""
    if '"' in value or any(ord(c) < 32 or ord(c) == 127 for c in value):
        return "holds a double quote or a control character, which xlwings.conf cannot hold"
    # whether or not such a variable exists now: the file is read later, maybe by another account or machine
    if re.search(r"\$[\w{]", value) or value.count("%") >= 2:
        return "holds $NAME or %NAME%, which xlwings would replace by an environment variable"
    return None


def _write_bytes(path: Path, data: bytes) -> None:
    """Replace ``path``'s content atomically; a symbolic link (a dotfiles folder's xlwings.conf) stays a link."""
    path = path.resolve() if path.is_symlink() else path
    fd, tmp = tempfile.mkstemp(prefix=".xlwings-", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        if path.exists():
            shutil.copymode(path, tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _save_conf(path: Path, conf: dict[str, str]) -> None:
    """Set the keys of ``conf`` (a value of None removes the key): the line of a key present is replaced in
    place, a new key is appended; every other line (the user's settings, comments) stays byte for byte."""
    for k, v in conf.items():
        if v is not None and (unwritable(k) or unwritable(v)):
            raise ValueError(f"{path}: the setting {k} = {v!r} {unwritable(k) or unwritable(v)}")
    lines, done = [], set()
    for line in _read_lines(path):
        key = _key_of(line)
        if key in conf:
            if key not in done and conf[key] is not None:
                ending = "\r\n" if line.endswith("\r\n") else "\n"
                lines.append(f'"{key}","{conf[key]}"{ending}')
            done.add(key)
        else:
            lines.append(line)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    lines += [f'"{k}","{v}"\n' for k, v in conf.items() if k not in done and v is not None]
    path.parent.mkdir(parents=True, exist_ok=True)
    _write_bytes(path, "".join(lines).encode("utf-8", "surrogateescape"))


def record_changes(before: dict[str, str], after: dict[str, str]) -> dict:
    """What the installer changed: per key, the value it wrote and the value it replaced (None: absent)."""
    return {k: {"wrote": v, "was": before.get(k)} for k, v in after.items() if before.get(k) != v}


def merge_records(earlier: dict | None, now: dict) -> dict:
    """A second installation over the first: each key keeps the value it had before the first one, and the file
    the bytes it had then, so uninstalling restores the state before gpu-tco was ever installed."""
    if not earlier:
        return now
    keys = dict(now["keys"])
    for k, change in earlier.get("keys", {}).items():
        keys[k] = {"wrote": keys[k]["wrote"] if k in keys else change["wrote"], "was": change["was"]}
    if "after" not in earlier:  # an earlier version's record holds no bytes: undo key by key
        return {**now, "keys": keys, "after": None}
    return {**now, "keys": keys, "before": earlier.get("before"), "created_folder": earlier.get("created_folder", False)}


def undo_conf(record: dict, home: Path | None = None) -> Path:
    """Undo ``record``: when xlwings.conf still holds exactly what the installation left, its earlier bytes come
    back (or it is removed, with the .xlwings folder the installation created, when there was none); otherwise a
    key still holding the value gpu-tco wrote gets its old value back, or is removed when there was none, and
    keys the user changed since, and all other lines, stay."""
    path = conf_path(home)
    if "keys" not in record:  # the record of an earlier version: the changes only
        record = {"keys": record}
    current = path.read_bytes() if path.is_file() else None
    after = record.get("after")
    if after is not None and current is not None and current == base64.b64decode(after):
        before = record.get("before")
        if before is None:
            path.unlink()
            if record.get("created_folder"):
                try:
                    path.parent.rmdir()
                except OSError:  # the user's files are in it
                    pass
        else:
            _write_bytes(path, base64.b64decode(before))
        return path
    if current is None:
        return path
    conf = read_conf(path)
    changes = {}
    for key, change in record["keys"].items():
        if conf.get(key) == change["wrote"]:
            changes[key] = change["was"]
    if changes:
        _save_conf(path, changes)
    return path


def write_conf(home: Path | None = None, interpreter: str | None = None, platform: str | None = None) -> Path:
    """Merge gpu-tco's settings into the user's xlwings.conf, atomically; returns its path."""
    platform = platform or sys.platform
    interpreter = interpreter or sys.executable
    if platform == "win32" and interpreter.lower().endswith("python.exe"):
        windowless = interpreter[:-len("python.exe")] + "pythonw.exe"
        interpreter = windowless if Path(windowless).exists() else interpreter  # no console window per call
    path = conf_path(home)
    conf = read_conf(path)
    updates = {"UDF MODULES": UDF_MODULE}
    key = INTERPRETER_KEY.get(platform)
    if key:
        updates[key] = interpreter
    else:  # Linux and others: Excel does not run here; record both so the file can be copied
        updates.update({k: interpreter for k in ("INTERPRETER_WIN", "INTERPRETER_MAC") if k not in conf})
    _save_conf(path, updates)
    return path


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Install the gpu-tco Excel functions (classic xlwings add-in).")
    p.add_argument("--no-excel", action="store_true", help="only write xlwings.conf; do not run `xlwings addin install`")
    p.add_argument("--home", type=Path, help="home folder holding .xlwings/ (default: yours)")
    p.add_argument("--record", type=Path, help="JSON file noting what was changed (written on install, read by --uninstall)")
    p.add_argument("--uninstall", action="store_true", help="undo what --record notes; the user's other settings stay")
    args = p.parse_args(argv)
    if args.uninstall:
        if not args.record or not args.record.is_file():
            print("error: --uninstall needs the --record file the installation wrote", file=sys.stderr)
            return 2
        try:
            record = json.loads(args.record.read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            print(f"error: {args.record} cannot be read ({err}); xlwings.conf is left as it is", file=sys.stderr)
            return 2
        path = undo_conf(record, args.home)
        print(f"removed gpu-tco's settings from {path}; other settings kept")
        return 0
    try:
        import gpu_tco.addin.udfs  # noqa: F401 - proves this interpreter can load the functions Excel will call
    except ImportError as err:
        print(f"error: this Python cannot import {UDF_MODULE} ({err}); install with: pip install \"gpu-tco[excel]\"",
              file=sys.stderr)
        return 2
    why = unwritable(sys.executable)
    if why:
        print(f"skipped the Excel settings: this environment's path {sys.executable!r} {why}; install into a folder "
              "without it to use the Excel functions (the form and the gpu-tco command work regardless)")
        return 0
    path = conf_path(args.home)
    earlier = None
    if args.record and args.record.is_file():  # installed again over an installation: keep what was there first
        try:
            earlier = json.loads(args.record.read_text(encoding="utf-8"))
            earlier = earlier if "keys" in earlier else {"keys": earlier}
        except (OSError, ValueError):
            earlier = None
    before_bytes = path.read_bytes() if path.is_file() else None
    created_folder = not path.parent.exists()
    before = read_conf(path)
    write_conf(args.home)
    if args.record:
        now = {"file": str(path), "keys": record_changes(before, read_conf(path)), "created_folder": created_folder,
               "before": None if before_bytes is None else base64.b64encode(before_bytes).decode("ascii"),
               "after": base64.b64encode(path.read_bytes()).decode("ascii")}
        args.record.write_text(json.dumps(merge_records(earlier, now), indent=2), encoding="utf-8")
    print(f"wrote {path}: UDF MODULES = {UDF_MODULE}, interpreter = {sys.executable}")
    if args.no_excel or sys.platform not in INTERPRETER_KEY:
        print("skipped `xlwings addin install` (no Excel here); run it on the machine with Excel")
        return 0
    exe = shutil.which("xlwings") or str(Path(sys.executable).with_name("xlwings"))
    done = subprocess.run([exe, "addin", "install"])
    if done.returncode != 0:
        print("error: `xlwings addin install` failed; is Excel installed and closed?", file=sys.stderr)
        return 2
    print("Next: open Excel, xlwings tab > Import Functions, then type =GPU_TCO(\"H100-SXM\", 8)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
