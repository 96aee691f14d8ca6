"""The frozen desktop form (PyInstaller one-folder build).

The README's test command builds it in the set-up, before pytest starts (tests/prepare.py); its test uses that app
when it was built from this very checkout (tests/artifacts.py).  Otherwise it is built once per test run in the
background: the build (about 25 s of one core) starts as soon as a process of the run has collected the frozen form's
test, and the test, which runs last, waits for it.  With pytest-xdist the build may run in one worker and the test in
another: the build's folder is one the run's processes share (``BUILD_DIR_VARIABLE``, made by the first process, which
the workers inherit), the first process to create its ``started`` file builds, and the test reads the exit code from
``rc``."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import artifacts

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "installer" / "gpu-tco-form.spec"
TEST_NAME = "test_frozen_form_builds_and_starts"
BUILD_DIR_VARIABLE = "GPU_TCO_TEST_FROZEN_DIR"
_started: list[subprocess.Popen] = []  # the build, when this process started it


def shared_folder() -> Path:
    """The run's folder for the build (conftest.py sets the variable before pytest-xdist starts its workers)."""
    folder = os.environ.get(BUILD_DIR_VARIABLE)
    if not folder:
        folder = os.environ[BUILD_DIR_VARIABLE] = tempfile.mkdtemp(prefix="gpu-tco-frozen-")
    return Path(folder)


def start_build() -> None:
    """Start the build unless the set-up built the app from this checkout (tests/prepare.py) or a process of this run
    already started it: creating ``started`` is the lock."""
    if artifacts.prepared_frozen_app() is not None:
        return
    work = shared_folder()
    try:
        fd = os.open(work / "started", os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return
    os.write(fd, repr(time.time()).encode())
    os.close(fd)
    # the exit code is written by the shell around PyInstaller, so it arrives even when this process has ended
    script = '"$@" >"$0/build.log" 2>&1; echo $? >"$0/rc.tmp" && mv "$0/rc.tmp" "$0/rc"'
    _started.append(subprocess.Popen(["sh", "-c", script, str(work), sys.executable, "-m", "PyInstaller", "--noconfirm", "--log-level", "WARN",
                      "--distpath", str(work / "dist"), "--workpath", str(work / "build"), str(SPEC)],
                     cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))


def result(timeout: float = 600) -> tuple[int, Path, float | None, str]:
    """(exit code, the app folder, seconds from start to finish, the build log); starts the build if nobody has.  The
    app the set-up built from this checkout, when there is one: (0, its folder, None, its log)."""
    prepared = artifacts.prepared_frozen_app()
    if prepared is not None:
        return 0, prepared, None, (artifacts.FROZEN_FOLDER / "build.log").read_text(errors="replace")
    start_build()
    work = shared_folder()
    deadline = time.monotonic() + timeout
    while not (work / "rc").exists():
        if time.monotonic() > deadline:
            raise TimeoutError(f"the frozen form's build did not finish in {timeout:.0f} s")
        time.sleep(0.2)
    seconds = (work / "rc").stat().st_mtime - float((work / "started").read_text())
    log = (work / "build.log").read_text(errors="replace") if (work / "build.log").exists() else ""
    return int((work / "rc").read_text()), work / "dist" / "gpu-tco-form", seconds, log


def cleanup() -> None:
    """The app this run built is about 250 MB: removed once its test has run (the folder itself goes with the run).
    The set-up's app stays in build/test-artifacts for the next run of an unchanged checkout."""
    for name in ("dist", "build"):
        shutil.rmtree(shared_folder() / name, ignore_errors=True)


def reap(timeout: float = 600) -> None:
    """Wait for the build this process started (at the end of its session): no process is left behind, and the build's
    processor time is counted with this process's children (/usr/bin/time of the run includes it)."""
    for process in _started:
        process.wait(timeout)
