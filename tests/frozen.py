"""The frozen desktop form (PyInstaller one-folder build), built once per session in the background."""
from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "installer" / "gpu-tco-form.spec"
TEST_NAME = "test_frozen_form_builds_and_starts"
_build: dict = {}
WANTED = False


def start_if_wanted() -> None:
    if WANTED:
        start_build()


def start_build() -> None:
    if _build:
        return
    work = Path(tempfile.mkdtemp(prefix="gpu-tco-frozen-"))
    log = open(work / "build.log", "w")
    _build.update(work=work, log=log, started=time.perf_counter(), process=subprocess.Popen(
        [sys.executable, "-m", "PyInstaller", "--noconfirm", "--log-level", "WARN", "--distpath", str(work / "dist"),
         "--workpath", str(work / "build"), str(SPEC)], cwd=ROOT, stdout=log, stderr=subprocess.STDOUT))


def result(timeout: float = 600) -> tuple[int, Path, float, str]:
    """(exit code, the app folder, seconds from start to finish, the build log)."""
    start_build()
    code = _build["process"].wait(timeout)
    _build.setdefault("seconds", time.perf_counter() - _build["started"])
    _build["log"].close()
    return code, _build["work"] / "dist" / "gpu-tco-form", _build["seconds"], (_build["work"] / "build.log").read_text()


def cleanup() -> None:
    if _build:
        shutil.rmtree(_build["work"], ignore_errors=True)
