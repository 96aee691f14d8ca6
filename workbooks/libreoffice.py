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
# Every sheet to its own UTF-8 CSV file (<stem>-<sheet>.csv), raw values rather than formatted ones
# ("save cell contents as shown" off): the fastest way to read back what LibreOffice computed,
# about half the time of saving an .xlsx.  Token 12 (-1: all sheets) needs LibreOffice 7.2 or newer.
CSV_ALL_SHEETS = "csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,false,false,false,-1"


def find_soffice() -> str | None:
    return shutil.which("soffice") or shutil.which("libreoffice")


def convert(files: list[Path], outdir: Path, to: str = "xlsx", exe: str | None = None, processes: int = 1) -> list[Path]:
    """Open each file in LibreOffice (full recalculation) and save it as ``to`` ("xlsx", "pdf",
    ``CSV_ALL_SHEETS``) in ``outdir``; ``processes`` LibreOffice instances share the files, each
    with a private profile.  Returns the written paths (for CSV_ALL_SHEETS: ``outdir``/<stem>,
    to which "-<sheet>.csv" is appended).  Raises RuntimeError when LibreOffice fails."""
    exe = exe or find_soffice()
    if not exe:
        raise RuntimeError("LibreOffice (soffice) is not installed")
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    files = [Path(f) for f in files]
    chunks = [files[i::processes] for i in range(max(1, processes)) if files[i::processes]]
    with tempfile.TemporaryDirectory() as profiles:
        runs = []
        for k, chunk in enumerate(chunks):
            profile = Path(profiles) / str(k)
            (profile / "user").mkdir(parents=True)
            (profile / "user" / "registrymodifications.xcu").write_text(RECALC_ALWAYS_XCU)
            # a private profile each: a second soffice sharing one silently does nothing
            cmd = [exe, f"-env:UserInstallation=file://{profile}", "--headless", "--norestore",
                   "--convert-to", to, "--outdir", str(outdir), *map(str, chunk)]
            runs.append(subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        outputs = [run.communicate(timeout=900) for run in runs]
    if to == CSV_ALL_SHEETS:
        results = [outdir / f.stem for f in files]
        missing = [r for r in results if not list(outdir.glob(r.name + "-*.csv"))]
    else:
        results = [outdir / (f.stem + "." + to.split(":")[0]) for f in files]
        missing = [r for r in results if not r.exists()]
    if missing or any(run.returncode for run in runs):
        raise RuntimeError(f"LibreOffice did not write {missing or 'its output'}: {outputs}")
    return results
