"""What the test set-up builds before pytest starts (``tests/prepare.py``): the project's wheel and the frozen desktop
form, each in ``build/test-artifacts/`` with the fingerprint of what it was built from.

A test uses a prepared artifact only when its fingerprint is that of the checkout and the environment as they are now
(the package folders, pyproject.toml, for the wheel README.md, the Python and the build tools); otherwise it builds
its own, as it always could.  So an edited file never meets a stale wheel or app: the set-up only moves the build ahead
of the timed run, it never replaces it with something older."""
from __future__ import annotations

import hashlib
import sys
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDER = ROOT / "build" / "test-artifacts"  # build/ is ignored by git
PACKAGE_FOLDERS = ("core", "installer", "workbooks", "addin", "gui")
WHEEL_FOLDER = FOLDER / "wheel"
FROZEN_FOLDER = FOLDER / "frozen"
FINGERPRINT_FILE = "fingerprint"


def _version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "absent"


def fingerprint(kind: str) -> str:
    """SHA-256 over every source file a build reads (path and bytes), the Python running it and, for the frozen form,
    the versions of PyInstaller and PySide6 it bundles."""
    digest = hashlib.sha256(f"{kind}\n{sys.version}\n{sys.prefix}\n".encode())
    if kind == "frozen":
        digest.update(f"{_version('pyinstaller')} {_version('PySide6')}\n".encode())
    files = [ROOT / "pyproject.toml"] + ([ROOT / "README.md"] if kind == "wheel" else [])  # the wheel's description
    for folder in PACKAGE_FOLDERS:
        files += [p for p in (ROOT / folder).rglob("*") if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"]
    for path in sorted(files):
        digest.update(path.relative_to(ROOT).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def _prepared(folder: Path, kind: str) -> bool:
    stamp = folder / FINGERPRINT_FILE
    return stamp.is_file() and stamp.read_text().strip() == fingerprint(kind)


def prepared_wheel() -> Path | None:
    """The wheel the set-up built from this very checkout, or None."""
    wheels = sorted(WHEEL_FOLDER.glob("gpu_tco-*.whl"))
    return wheels[0] if len(wheels) == 1 and _prepared(WHEEL_FOLDER, "wheel") else None


def prepared_frozen_app() -> Path | None:
    """The frozen form's folder (``gpu-tco-form/``) the set-up built from this very checkout, or None."""
    app = FROZEN_FOLDER / "dist" / "gpu-tco-form"
    return app if (app / "gpu-tco-form").is_file() and _prepared(FROZEN_FOLDER, "frozen") else None
