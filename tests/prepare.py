"""The test set-up after the install (the README's test command runs it before pytest): builds the project's wheel and
the frozen desktop form side by side into build/test-artifacts/, each with the fingerprint of what it was built from
(tests/artifacts.py).  The tests that need them use these when the fingerprint still matches the checkout and build
their own otherwise, so this only moves the two builds (about 30 s of CPU) ahead of the timed run.  While they build,
the Debian packages the tests would install on demand are installed (as root with apt) and the test modules compiled.

A build that fails here is said on the terminal and leaves no fingerprint: the tests then build it again themselves and
fail with its log.  Exit code 0 either way; ``python tests/prepare.py`` may be run again at any time."""
from __future__ import annotations

import shutil
import subprocess
import sys
import time

import artifacts


def say(message: str) -> None:
    print(f"[gpu-tco tests] set-up: {message}", flush=True)


def _start(kind: str, folder, command: list[str]) -> tuple:
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    log = open(folder / "build.log", "w")
    # the fingerprint of the sources the build starts from: a file edited meanwhile makes it stale, and the tests rebuild
    source = artifacts.fingerprint(kind)
    started = time.monotonic()
    return kind, folder, subprocess.Popen(command, cwd=artifacts.ROOT, stdin=subprocess.DEVNULL, stdout=log,
                                          stderr=subprocess.STDOUT), started, log, source


def main() -> int:
    builds = []
    if artifacts.prepared_wheel() is None:
        builds.append(_start("wheel", artifacts.WHEEL_FOLDER,
                             [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w",
                              str(artifacts.WHEEL_FOLDER), str(artifacts.ROOT)]))
    else:
        say("the wheel is up to date")
    if artifacts.prepared_frozen_app() is None:
        folder = artifacts.FROZEN_FOLDER
        builds.append(_start("frozen", folder,
                             [sys.executable, "-m", "PyInstaller", "--noconfirm", "--log-level", "WARN", "--distpath",
                              str(folder / "dist"), "--workpath", str(folder / "work"), str(artifacts.ROOT / "installer" / "gpu-tco-form.spec")]))
    else:
        say("the frozen form is up to date")
    # while they build: the Debian packages the tests use (when root with apt: a CI machine), in one apt run, and the
    # test modules compiled (pytest's assert rewriting), which each test process would otherwise do first
    _debian_packages()
    _compile_tests()
    for kind, folder, process, started, log, source in builds:
        code = process.wait()
        log.close()
        what = "the wheel" if kind == "wheel" else "the frozen form"
        if code == 0:
            (folder / artifacts.FINGERPRINT_FILE).write_text(source + "\n")
            say(f"built {what} in {time.monotonic() - started:.0f} s ({folder.relative_to(artifacts.ROOT)})")
        else:
            say(f"building {what} failed (exit {code}); the tests build it again and show why ({folder / 'build.log'})")
    return 0


def _debian_packages() -> None:
    """What the tests install on demand (tests/lo.py, tests/qt_setup.py, tests/test_installer.py) installed here at
    once, so the timed run installs nothing: LibreOffice and Poppler, the libraries offscreen Qt loads, Xvfb and XCB,
    desktop-file-validate."""
    import lo
    import qt_setup
    missing = [] if shutil.which("soffice") and shutil.which("pdftotext") else list(lo.DEBIAN_PACKAGES)
    missing += qt_setup._missing(qt_setup.OFFSCREEN) + qt_setup._missing(qt_setup.XCB)
    missing += [pkg for exe, pkg in qt_setup.XCB_PROGRAMS.items() if not shutil.which(exe)]
    missing += [] if shutil.which("desktop-file-validate") else ["desktop-file-utils"]
    missing += [qt_setup.FONT_PACKAGE] if qt_setup._fonts_missing() else []
    wanted = list(dict.fromkeys(missing))
    if wanted:
        try:
            if not lo.apt_install(wanted, "the tests use them"):
                say(f"not installed (not root, or no apt): {' '.join(wanted)}; the tests say what they miss")
        except (subprocess.CalledProcessError, OSError) as err:  # the builds are still waited for
            say(f"apt-get failed ({err}); the tests try again and say why")


def _compile_tests() -> None:
    started = time.monotonic()
    run = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "-n", "0"],
                         cwd=artifacts.ROOT, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if run.returncode == 0:
        say(f"compiled the test modules in {time.monotonic() - started:.0f} s")
    else:
        say(f"collecting the tests failed (exit {run.returncode}); the test run shows why")


if __name__ == "__main__":
    sys.exit(main())
