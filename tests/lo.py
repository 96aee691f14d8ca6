"""Real LibreOffice, headless: install it when missing (Debian), recalculate workbooks fully.

LibreOffice trusts cached values in an .xlsx unless told otherwise, and our workbooks carry
core's values as caches; the private profile sets OOXMLRecalcMode=0 ("always recalculate"),
so every formula is computed by LibreOffice itself (../shared/notes/toolchain.md).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

XCU = """<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.Office.Calc/Formula/Load"><prop oor:name="OOXMLRecalcMode" oor:op="fuse"><value>0</value></prop></item>
<item oor:path="/org.openoffice.Office.Calc/Formula/Load"><prop oor:name="ODFRecalcMode" oor:op="fuse"><value>0</value></prop></item>
</oor:items>
"""


def soffice() -> str:
    """Path of soffice; installs libreoffice-calc-nogui with apt when missing and allowed (root)."""
    exe = shutil.which("soffice")
    if exe:
        return exe
    if hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("apt-get"):
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "update", "-qq"], check=True, env=env, capture_output=True)
        subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", "libreoffice-calc-nogui", "poppler-utils"],
                       check=True, env=env, capture_output=True)
        exe = shutil.which("soffice")
        if exe:
            return exe
    if os.environ.get("CI"):
        pytest.fail("LibreOffice (soffice) is required in CI and could not be installed")
    pytest.skip("LibreOffice (soffice) is not installed and cannot be installed here (not root)")


def convert(files: list[Path], outdir: Path, to: str = "xlsx") -> list[Path]:
    """Open each file in LibreOffice (full recalculation) and save it as ``to`` in outdir."""
    exe = soffice()
    outdir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as profile:
        user = Path(profile) / "user"
        user.mkdir()
        (user / "registrymodifications.xcu").write_text(XCU)
        cmd = [exe, f"-env:UserInstallation=file://{profile}", "--headless", "--norestore",
               "--convert-to", to, "--outdir", str(outdir), *map(str, files)]
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        assert out.returncode == 0, out.stderr
    results = [outdir / (Path(f).stem + "." + to.split(":")[0]) for f in files]
    missing = [r for r in results if not r.exists()]
    assert not missing, f"LibreOffice did not write {missing}: {out.stdout} {out.stderr}"
    return results
