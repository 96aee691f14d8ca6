"""Real LibreOffice, headless: install it when missing (Debian), recalculate workbooks fully.

LibreOffice trusts cached values in an .xlsx unless told otherwise, and our workbooks carry
core's values as caches; the private profile sets OOXMLRecalcMode=0 ("always recalculate"),
so every formula is computed by LibreOffice itself (../shared/notes/toolchain.md).
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from gpu_tco.workbooks import libreoffice

DEBIAN_PACKAGES = ["libreoffice-calc-nogui", "poppler-utils"]  # recalculation; PDF to PNG (pdftoppm, pdftotext)


def _tool(exe_name: str) -> str:
    """Path of a program from DEBIAN_PACKAGES; installs them with apt when missing and allowed (root)."""
    exe = shutil.which(exe_name)
    if exe:
        return exe
    if hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("apt-get"):
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "update", "-qq"], check=True, env=env, capture_output=True)
        subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", *DEBIAN_PACKAGES],
                       check=True, env=env, capture_output=True)
        exe = shutil.which(exe_name)
        if exe:
            return exe
    if os.environ.get("CI"):
        pytest.fail(f"{exe_name} ({', '.join(DEBIAN_PACKAGES)}) is required in CI and could not be installed")
    pytest.skip(f"{exe_name} is not installed and cannot be installed here (not root)")


def soffice() -> str:
    return _tool("soffice")


def render_pages(pdf: Path, outdir: Path, wanted: dict[str, str], dpi: int = 110) -> dict[str, Path]:
    """PNG of the first PDF page whose text starts with each title: {name: title} -> {name: png}."""
    pdftoppm, pdftotext = _tool("pdftoppm"), _tool("pdftotext")
    pages = subprocess.run([pdftotext, "-layout", str(pdf), "-"], capture_output=True, text=True, check=True).stdout.split("\f")
    found = {}
    for name, title in wanted.items():
        index = next(i for i, page in enumerate(pages, start=1) if page.strip().startswith(title))
        stem = outdir / name
        subprocess.run([pdftoppm, "-png", "-r", str(dpi), "-f", str(index), "-l", str(index), "-singlefile", str(pdf), str(stem)],
                       check=True, capture_output=True)
        found[name] = stem.with_suffix(".png")
    return found


def convert(files: list[Path], outdir: Path, to: str = "xlsx") -> list[Path]:
    """Open each file in LibreOffice (full recalculation) and save it as ``to`` in outdir."""
    return libreoffice.convert(files, outdir, to, exe=soffice())
