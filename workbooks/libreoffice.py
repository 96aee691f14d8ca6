"""Headless LibreOffice: open workbooks with a forced full recalculation and save them again.

LibreOffice trusts the cached values in an .xlsx unless told otherwise, and gpu-tco's
workbooks carry core's values as caches; a private profile with OOXMLRecalcMode=0
("always recalculate") makes LibreOffice compute every formula itself.  Used by the
tests (parity with core) and by ``gpu-tco bench`` (recalculation time).
"""
from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

RECALC_ALWAYS_XCU = """<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.Office.Calc/Formula/Load"><prop oor:name="OOXMLRecalcMode" oor:op="fuse"><value>0</value></prop></item>
<item oor:path="/org.openoffice.Office.Calc/Formula/Load"><prop oor:name="ODFRecalcMode" oor:op="fuse"><value>0</value></prop></item>
</oor:items>
"""


def find_soffice() -> str | None:
    return shutil.which("soffice") or shutil.which("libreoffice")


def convert(files: list[Path], outdir: Path, to: str = "xlsx", exe: str | None = None) -> list[Path]:
    """Open each file in LibreOffice (full recalculation) and save it as ``to`` ("xlsx", "pdf")
    in ``outdir``; returns the written paths.  Raises RuntimeError when LibreOffice fails."""
    exe = exe or find_soffice()
    if not exe:
        raise RuntimeError("LibreOffice (soffice) is not installed")
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as profile:
        user = Path(profile) / "user"
        user.mkdir()
        (user / "registrymodifications.xcu").write_text(RECALC_ALWAYS_XCU)
        # a private profile: a second soffice sharing one silently does nothing
        cmd = [exe, f"-env:UserInstallation=file://{profile}", "--headless", "--norestore",
               "--convert-to", to, "--outdir", str(outdir), *map(str, files)]
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    results = [outdir / (Path(f).stem + "." + to.split(":")[0]) for f in files]
    missing = [r for r in results if not r.exists()]
    if out.returncode != 0 or missing:
        raise RuntimeError(f"LibreOffice did not write {missing or 'its output'}: {out.stdout} {out.stderr}")
    return results
