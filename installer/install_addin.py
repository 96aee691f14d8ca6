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


def read_conf(path: Path) -> dict[str, str]:
    """xlwings.conf lines are "KEY","VALUE" (xlwings.utils.read_user_config reads them the same way)."""
    conf: dict[str, str] = {}
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            values = re.findall(r'"[^"]*"', line)
            if len(values) >= 2:
                conf[values[0].strip('"')] = values[1].strip('"')
    return conf


def _save_conf(path: Path, conf: dict[str, str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if any('"' in k or '"' in v for k, v in conf.items()):
        raise ValueError(f"{path}: a setting contains a double quote, which xlwings.conf cannot hold")
    text = "".join(f'"{k}","{v}"\n' for k, v in conf.items())
    fd, tmp = tempfile.mkstemp(prefix=".xlwings-", dir=path.parent)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def record_changes(before: dict[str, str], after: dict[str, str]) -> dict:
    """What the installer changed: per key, the value it wrote and the value it replaced (None: absent)."""
    return {k: {"wrote": v, "was": before.get(k)} for k, v in after.items() if before.get(k) != v}


def undo_conf(record: dict, home: Path | None = None) -> Path:
    """Undo ``record`` (from record_changes): a key still holding the value gpu-tco wrote gets its old
    value back, or is removed when there was none; keys the user changed since, and all others, stay."""
    path = conf_path(home)
    conf = read_conf(path)
    for key, change in record.items():
        if conf.get(key) == change["wrote"]:
            if change["was"] is None:
                del conf[key]
            else:
                conf[key] = change["was"]
    _save_conf(path, conf)
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
    conf["UDF MODULES"] = UDF_MODULE
    key = INTERPRETER_KEY.get(platform)
    if key:
        conf[key] = interpreter
    else:  # Linux and others: Excel does not run here; record both so the file can be copied
        conf.setdefault("INTERPRETER_WIN", interpreter)
        conf.setdefault("INTERPRETER_MAC", interpreter)
    _save_conf(path, conf)
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
        path = undo_conf(json.loads(args.record.read_text(encoding="utf-8")), args.home)
        print(f"removed gpu-tco's settings from {path}; other settings kept")
        return 0
    try:
        import gpu_tco.addin.udfs  # noqa: F401 - proves this interpreter can load the functions Excel will call
    except ImportError as err:
        print(f"error: this Python cannot import {UDF_MODULE} ({err}); install with: pip install \"gpu-tco[excel]\"",
              file=sys.stderr)
        return 2
    before = read_conf(conf_path(args.home))
    path = write_conf(args.home)
    if args.record:
        args.record.write_text(json.dumps(record_changes(before, read_conf(path)), indent=2), encoding="utf-8")
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
