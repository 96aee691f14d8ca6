"""Real LibreOffice, headless, in one batch for the whole test session.

Tests register the workbooks they want recalculated with ``@book(name)``: a function that
writes an .xlsx into the folder it is given and returns (path, anything JSON-like to keep).
The session fixture ``recalculated`` (conftest.py) builds every registered workbook in two
forked workers, has LibreOffice recalculate all of them in two parallel instances (forced
full recalculation, see gpu_tco.workbooks.libreoffice) and export every sheet as CSV, and
hands each test a ``Recalculated`` view of its workbook.  One LibreOffice start per process
instead of one per test is what keeps the suite fast.
"""
from __future__ import annotations

import csv
import multiprocessing
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest
from openpyxl.utils import column_index_from_string

from gpu_tco.workbooks import libreoffice

# recalculation; PDF to PNG (pdftoppm, pdftotext); fonts for readable renders
DEBIAN_PACKAGES = ["libreoffice-calc-nogui", "poppler-utils", "fonts-dejavu-core"]
ERRORS = ("#NAME?", "#REF!", "#VALUE!", "#DIV/0!", "#N/A", "#NUM!", "Err:")


def say(message: str) -> None:
    """A line on the terminal even while pytest captures output (what the set-up installs)."""
    print(f"\n[gpu-tco tests] {message}", file=sys.__stderr__, flush=True)


def apt_install(packages: list[str], why: str) -> bool:
    """Install Debian packages when running as root with apt; says so on the terminal."""
    if not (hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("apt-get")):
        return False
    import fcntl
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    # One apt at a time: pytest-xdist workers may each install something at once (LibreOffice in one, Xvfb in the
    # other), and a second apt-get fails at once on dpkg's lock; the lock file serialises ours, the timeout waits for
    # anyone else's.
    with open(Path(tempfile.gettempdir()) / "gpu-tco-tests-apt.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        say(f"installing {' '.join(packages)} with apt-get ({why}) ...")
        wait = ["-o", "DPkg::Lock::Timeout=600"]
        subprocess.run(["apt-get", *wait, "update", "-qq"], check=True, env=env, capture_output=True)
        subprocess.run(["apt-get", *wait, "install", "-y", "-qq", "--no-install-recommends", *packages],
                       check=True, env=env, capture_output=True)
    say(f"installed {' '.join(packages)}")
    return True


def _tool(exe_name: str) -> str:
    """Path of a program from DEBIAN_PACKAGES; installs them when missing and allowed (root)."""
    exe = shutil.which(exe_name)
    if exe:
        return exe
    if apt_install(DEBIAN_PACKAGES, "LibreOffice recalculates the generated workbooks"):
        exe = shutil.which(exe_name)
        if exe:
            return exe
    if os.environ.get("CI"):
        pytest.fail(f"{exe_name} ({', '.join(DEBIAN_PACKAGES)}) is required in CI and could not be installed")
    pytest.skip(f"{exe_name} is not installed and cannot be installed here (not root; CI installs it)")


def soffice() -> str:
    return _tool("soffice")


def render_pages(pdf: Path, outdir: Path, wanted: dict[str, str], dpi: int = 90) -> dict[str, Path]:
    """PNG of the first PDF page of each sheet, found by the sheet name in the page header (the first
    line of text): {name: sheet} -> {name: png}."""
    pdftoppm, pdftotext = _tool("pdftoppm"), _tool("pdftotext")
    pages = subprocess.run([pdftotext, "-layout", str(pdf), "-"], capture_output=True, text=True, check=True).stdout.split("\f")
    heads = [next((line.split() for line in page.splitlines() if line.strip()), []) for page in pages]
    found = {}
    for name, sheet in wanted.items():
        index = next(i for i, head in enumerate(heads, start=1) if len(head) > 1 and head[1] == sheet)
        stem = outdir / name
        subprocess.run([pdftoppm, "-png", "-r", str(dpi), "-f", str(index), "-l", str(index), "-singlefile", str(pdf), str(stem)],
                       check=True, capture_output=True)
        found[name] = stem.with_suffix(".png")
    return found


@dataclass
class PrintedLine:
    """A line of text as a PDF page draws it: its box in points (origin top left) and its words."""
    page: int
    x0: float
    y0: float
    x1: float
    y1: float
    text: str


def pdf_pages(pdf: Path) -> list[tuple[float, float, list[PrintedLine]]]:
    """Each page of ``pdf`` as (width, height, its lines), read with pdftotext -bbox-layout."""
    from html import unescape
    xml = subprocess.run([_tool("pdftotext"), "-bbox-layout", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    pages = []
    for n, (w, h, body) in enumerate(re.findall(r'<page width="([-\d.]+)" height="([-\d.]+)">(.*?)</page>', xml, re.S), start=1):
        lines = []
        for attrs, inner in re.findall(r"<line ([^>]*)>(.*?)</line>", body, re.S):
            x0, y0, x1, y1 = (float(v) for v in re.findall(r'="(-?[\d.]+)"', attrs))
            lines.append(PrintedLine(n, x0, y0, x1, y1, " ".join(unescape(x) for x in re.findall(r"<word [^>]*>(.*?)</word>", inner))))
        pages.append((float(w), float(h), lines))
    return pages


def sheet_of(lines: list[PrintedLine]) -> str:
    """The sheet a printed page belongs to: the middle of its page header ("gpu-tco", the sheet, "page n of N")."""
    top = min(line.y0 for line in lines)
    head = sorted((line for line in lines if line.y0 < top + 4), key=lambda line: line.x0)
    return head[1].text if len(head) == 3 else ""


def print_problems(pdf: Path, margin_pt: float = 14.0) -> list[str]:
    """Text that does not print whole: a line past the page's edge (a sheet wider than the page), and two lines
    drawn over each other (a wrapped cell taller than its row runs into the next row, or a note into a table)."""
    found = []
    for w, h, lines in pdf_pages(pdf):
        for i, a in enumerate(lines):
            if a.x1 > w - margin_pt or a.x0 < margin_pt or a.y1 > h - margin_pt:
                found.append(f"page {a.page}: off the page: {a.text[:60]!r}")
            for b in lines[i + 1:]:
                overlap_y = min(a.y1, b.y1) - max(a.y0, b.y0)
                if min(a.x1, b.x1) - max(a.x0, b.x0) > 1 and overlap_y > 0.25 * min(a.y1 - a.y0, b.y1 - b.y0):
                    found.append(f"page {a.page}: drawn over each other: {a.text[:50]!r} / {b.text[:50]!r}")
    return found


# ---------------------------------------------------------------------------
# the session batch

_COORD = re.compile(r"^([A-Z]{1,3})([0-9]+)$")


def parse(raw: str):
    """A CSV cell as LibreOffice computed it: number, TRUE/FALSE, text, or None when empty."""
    if raw == "":
        return None
    if raw in ("TRUE", "FALSE"):
        return raw == "TRUE"
    try:  # percent-formatted cells keep every digit but carry a %
        return float(raw[:-1]) / 100 if raw.endswith("%") else float(raw)
    except ValueError:
        return raw


@dataclass
class Recalculated:
    """The sheets of one workbook after LibreOffice recalculated it."""

    name: str
    path: Path                  # the workbook as written (before recalculation)
    meta: object                # what the builder kept
    sheets: dict[str, list[list[str]]]
    pdf: Path | None = None     # the workbook printed by LibreOffice, when registered with pdf=True

    def raw(self, sheet: str, coord: str) -> str:
        col, row = _COORD.match(coord).groups()
        rows = self.sheets[sheet]
        r, c = int(row) - 1, column_index_from_string(col) - 1
        return rows[r][c] if r < len(rows) and c < len(rows[r]) else ""

    def value(self, sheet: str, coord: str):
        return parse(self.raw(sheet, coord))

    def cell(self, sheet: str, row: int, column: int):
        rows = self.sheets[sheet]
        return parse(rows[row - 1][column - 1]) if row - 1 < len(rows) and column - 1 < len(rows[row - 1]) else None

    def max_row(self, sheet: str) -> int:
        return len(self.sheets[sheet])

    def errors(self) -> list[str]:
        return [f"{s}!R{i + 1}C{j + 1}={v}" for s, rows in self.sheets.items() for i, r in enumerate(rows)
                for j, v in enumerate(r) if v.startswith(ERRORS)]


BUILDERS: dict[str, Callable[[Path], tuple[Path, object]]] = {}
AS_PDF: set[str] = set()  # workbooks the batch also prints to PDF (Recalculated.pdf)


def book(name: str, pdf: bool = False):
    """Register a workbook for the session's LibreOffice batch (decorator); ``pdf``: also print it."""
    def register(fn):
        if name in BUILDERS:
            raise ValueError(f"two workbooks named {name}")
        BUILDERS[name] = fn
        if pdf:
            AS_PDF.add(name)
        return fn
    return register


def _build(args):
    name, folder = args
    path, meta = BUILDERS[name](Path(folder) / name)
    return name, str(path), meta


def recalculate_all(workdir: Path, names: list[str]) -> dict[str, Recalculated]:
    """Build the named workbooks (two forked workers), recalculate them in two LibreOffice
    instances, read every sheet back."""
    exe = soffice()
    for name in names:
        (workdir / name).mkdir(parents=True, exist_ok=True)
    with multiprocessing.get_context("fork").Pool(2) as pool:
        built = pool.map(_build, [(n, str(workdir)) for n in names])
    paths = {name: Path(path) for name, path, _ in built}
    # one flat folder of uniquely named copies: LibreOffice names its output after the file
    flat = workdir / "_in"
    flat.mkdir(exist_ok=True)
    inputs = []
    for name, path in paths.items():
        target = flat / f"{name}.xlsx"
        shutil.copyfile(path, target)
        inputs.append(target)
    out = workdir / "_csv"
    printed = [f for f in inputs if f.stem in AS_PDF]
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(2) as pool:  # the PDF prints while the CSV exports run
        pdfs = pool.submit(libreoffice.convert, printed, workdir / "_pdf", "pdf", exe) if printed else None
        libreoffice.convert(inputs, out, libreoffice.CSV_ALL_SHEETS, exe=exe, processes=2)
        pdf_paths = {p.stem: p for p in (pdfs.result() if pdfs else [])}
    results = {}
    for name, path, meta in built:
        sheets = {}
        for f in out.glob(f"{name}-*.csv"):
            with open(f, newline="", encoding="utf-8") as fh:
                sheets[f.name[len(name) + 1:-4]] = list(csv.reader(fh))
        results[name] = Recalculated(name, Path(path), meta, sheets, pdf_paths.get(name))
    return results
