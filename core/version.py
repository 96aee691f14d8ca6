"""The installed version of gpu-tco, read from the package metadata (pyproject.toml holds it)."""
from __future__ import annotations

from importlib import metadata
from pathlib import Path


def _version() -> str:
    try:
        return metadata.version("gpu-tco")
    except metadata.PackageNotFoundError:
        # not installed: the xlwings Lite bundle writes the version beside this file
        stamp = Path(__file__).with_name("VERSION")
        return stamp.read_text(encoding="utf-8").strip() if stamp.is_file() else "0+unknown"


__version__ = _version()
