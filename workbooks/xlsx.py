"""Writing .xlsx files safely: styles shared by gpu-tco's workbooks, target checks, and an
atomic save that stores each formula cell's cached value.

Used by the workbook (``gpu_tco.workbooks.build``) and the add-in's demo workbook
(``gpu_tco.addin.demo``).  openpyxl writes formula cells without cached values; viewers that do
not recalculate (Protected View, preview panes, phones) would show them blank, so
``save_atomically`` adds the value gpu-tco computed to each.
"""
from __future__ import annotations

import io
import math
import os
import re
import zipfile
from pathlib import Path
from typing import Mapping
from xml.sax.saxutils import escape as xml_escape

from openpyxl import Workbook
from openpyxl.styles import Font, PatternFill

from ..core import STALE_SECONDS, TEMP_MARK, target_problem, write_atomically  # noqa: F401 - TEMP_MARK, STALE_SECONDS: re-exported

INPUT_FILL = PatternFill("solid", fgColor="FFF2CC")
HEAD_FILL = PatternFill("solid", fgColor="1F4E78")
HEAD_FONT = Font(bold=True, color="FFFFFF")
NOTE_FONT = Font(italic=True, color="595959")
BAD_FILL = PatternFill("solid", fgColor="F8CBAD")
GOOD_FILL = PatternFill("solid", fgColor="C6EFCE")


MIN_PRINT_SCALE = 70  # percent: below this printed text is too small to read


def page_setup(ws, area: str, scale: int = MIN_PRINT_SCALE, landscape: bool = True, title_rows: str | None = None,
               fit_width: bool = False) -> None:
    """Print setup: the area, landscape A4 (fits Letter too), at ``scale`` percent (never below
    MIN_PRINT_SCALE: wide sheets continue on further pages instead of shrinking) or, with
    ``fit_width``, as wide as the page (as many pages down as needed), the header row repeated,
    and the sheet's name and page number in the page header."""
    ws.print_area = area
    ws.page_setup.orientation = "landscape" if landscape else "portrait"
    ws.page_setup.paperSize = ws.PAPERSIZE_A4
    ws.page_setup.scale = max(scale, MIN_PRINT_SCALE)
    ws.sheet_properties.pageSetUpPr.fitToPage = fit_width
    if fit_width:
        ws.page_setup.fitToWidth, ws.page_setup.fitToHeight = 1, 0  # 0: no limit on the pages down
    ws.print_options.gridLines = False
    ws.oddHeader.left.text = "gpu-tco"
    ws.oddHeader.center.text = "&A"  # the sheet's name
    ws.oddHeader.right.text = "page &P of &N"
    if title_rows:
        ws.print_title_rows = title_rows


def not_in_default_print(ws, last_col: int, title_rows: str | None = None) -> None:
    """A sheet printed only on request: fit to the page width, with a print area of one empty cell
    right of its table, so printing the whole workbook leaves it out (spreadsheets skip an empty
    print range).  To print it: clear its print area (Excel: Page Layout > Print Area > Clear Print
    Area; LibreOffice: Format > Print Ranges > Clear), then print the sheet."""
    from openpyxl.utils import get_column_letter
    page_setup(ws, f"{get_column_letter(last_col + 2)}1", title_rows=title_rows, fit_width=True)


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")  # what spreadsheets may take as the start of a formula


def put_text(cell, value):
    """Write a value that came from a catalog, a scenario or a user (a name, a vendor, a source): text
    always stays text, whatever it starts with, so a name like =HYPERLINK(...) never becomes a live
    formula in a workbook that is e-mailed."""
    cell.value = value
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        cell.data_type = "s"
    return cell


class WorkbookError(Exception):
    """A workbook could not be written; the message says where and why."""


def check_target(path: str | os.PathLike) -> Path:
    """An .xlsx path in an existing folder, or WorkbookError saying what is wrong (the rule every
    writer follows: ``gpu_tco.core.files.target_problem``)."""
    target = Path(path)
    if target.suffix.lower() != ".xlsx":
        raise WorkbookError(f"{target}: the workbook must be an .xlsx file (no macros)")
    problem = target_problem(target, "a file name ending in .xlsx")
    if problem:
        raise WorkbookError(f"{str(target)[:120] if problem.startswith('cannot be used') else target}: {problem}")
    return target


def _save_to(wb: Workbook, buffer) -> None:
    """``wb.save(buffer)``.  openpyxl streams each sheet through a temporary file; when that write fails (a full disk),
    the abandoned sheet writer reports the same error again when it is collected ("Exception ignored in ..."), so the
    error is raised once, without the traceback that keeps the writer alive, and the second report is dropped."""
    import gc
    import sys
    failed = None
    hook = sys.unraisablehook
    sys.unraisablehook = lambda unraisable: None
    try:
        try:
            wb.save(buffer)
        except OSError as err:
            failed = OSError(err.errno, err.strerror)
        if failed is not None:
            gc.collect()
    finally:
        sys.unraisablehook = hook
    if failed is not None:
        raise failed


def save_atomically(wb: Workbook, cached: Mapping[str, object], target: Path) -> Path:
    """Save ``wb`` with the cached formula values so that ``target`` is always either the old or the
    new complete file: the file is built in memory, then written by ``gpu_tco.core.files.write_atomically``
    (the one writer and the one rule for temporaries, see there)."""
    buffer = io.BytesIO()
    _save_to(wb, buffer)
    data = _with_cached_values(buffer.getvalue(), wb, cached)
    try:
        write_atomically(target, data)
    except OSError as err:
        raise WorkbookError(f"{target}: cannot be written ({err.strerror or err}; is it open in Excel or read-only?)") from None
    return target


# a formula cell as openpyxl writes it: plain (<f>) or the first cell of an array formula (<f t="array" ref=...>)
_CELL = re.compile(r'<c r="([A-Z]+[0-9]+)"([^>]*)><f([^>]*)>(.*?)</f><v\s*/?>(?:</v>)?</c>', re.S)


def _with_cached_values(xlsx: bytes, wb: Workbook, cached: Mapping[str, object]) -> bytes:
    """openpyxl writes formula cells without a cached <v>; add core's value to each."""
    sheet_files = {ws.title: f"xl/worksheets/sheet{i}.xml" for i, ws in enumerate(wb.worksheets, start=1)}
    by_sheet: dict[str, dict[str, object]] = {}
    for key, value in cached.items():
        sheet, cell = key.split("!")
        by_sheet.setdefault(sheet_files[sheet], {})[cell] = value
    with zipfile.ZipFile(io.BytesIO(xlsx)) as zin:
        items = [(i, zin.read(i.filename)) for i in zin.infolist()]
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zout:
        for info, data in items:
            if info.filename in by_sheet:
                cells = by_sheet[info.filename]

                def put(m, cells=cells):
                    ref, attrs, fattrs, formula = m.group(1), m.group(2), m.group(3), m.group(4)
                    if ref not in cells:
                        return m.group(0)
                    v = cells[ref]
                    f = f"<f{fattrs}>{formula}</f>"
                    if isinstance(v, bool):
                        return f'<c r="{ref}"{attrs} t="b">{f}<v>{int(v)}</v></c>'
                    if isinstance(v, str):  # a formula's text result
                        return f'<c r="{ref}"{attrs} t="str">{f}<v>{xml_escape(v)}</v></c>'
                    if not math.isfinite(float(v)):  # no number a spreadsheet holds: left to recalculation
                        return m.group(0)
                    return f'<c r="{ref}"{attrs}>{f}<v>{repr(float(v))}</v></c>'
                data = _CELL.sub(put, data.decode("utf-8")).encode("utf-8")
            zout.writestr(info, data)
    return out.getvalue()
