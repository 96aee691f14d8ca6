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
from openpyxl.styles import Alignment, Font, PatternFill

from ..core import STALE_SECONDS, TEMP_MARK, target_problem, write_atomically  # noqa: F401 - TEMP_MARK, STALE_SECONDS: re-exported

INPUT_FILL = PatternFill("solid", fgColor="FFF2CC")
HEAD_FILL = PatternFill("solid", fgColor="1F4E78")
HEAD_FONT = Font(bold=True, color="FFFFFF")
NOTE_FONT = Font(italic=True, color="595959")
BAD_FILL = PatternFill("solid", fgColor="F8CBAD")
GOOD_FILL = PatternFill("solid", fgColor="C6EFCE")
# Every cell's alignment is one of these, shared: openpyxl hashes a style object each time a cell takes it, and a new
# object per cell (about 6,000 in a workbook) cost more than the rest of the styling together.
_TOP_ALIGNED = {(h, w): Alignment(horizontal=h, wrap_text=w, vertical="top")
                for h in (None, "left", "right", "center") for w in (None, False, True)}


def top_aligned(horizontal: str | None = None, wrap: bool | None = None) -> Alignment:
    """The shared alignment at the top of the cell: ``horizontal`` None, "left", "right" or "center"; ``wrap`` the
    text within the column (None: the spreadsheet's default, no wrap)."""
    return _TOP_ALIGNED[horizontal, None if wrap is None else bool(wrap)]


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
    """``wb.save(buffer)``, its parts stored uncompressed: ``_with_cached_values`` rewrites every part and compresses
    each once (openpyxl's own save deflates them first, which the rewrite undid: about a seventh of a workbook's time).
    openpyxl streams each sheet through a temporary file; when that write fails (a full disk),
    the abandoned sheet writer reports the same error again when it is collected ("Exception ignored in ..."), so the
    error is raised once, without the traceback that keeps the writer alive, and the second report is dropped."""
    import gc
    import sys
    from datetime import datetime, timezone

    from openpyxl.writer.excel import ExcelWriter
    failed = None
    hook = sys.unraisablehook
    sys.unraisablehook = lambda unraisable: None
    try:
        try:
            # what Workbook.save does (openpyxl.writer.excel.save_workbook), into an archive that stores
            wb.properties.modified = datetime.now(tz=timezone.utc).replace(tzinfo=None)
            ExcelWriter(wb, zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED, allowZip64=True)).save()
        except OSError as err:
            failed = OSError(err.errno, err.strerror)
        if failed is not None:
            gc.collect()
    finally:
        sys.unraisablehook = hook
    if failed is not None:
        raise failed


def shared_rows(wb: Workbook) -> dict[str, list[tuple[int, int, int]]]:
    """{sheet title: [(row, first column, last column)]}: the rows whose formula cells are one formula shifted across
    the columns, written as one shared formula by ``save_atomically`` (the builder that writes a row says so here; a
    reader such as Excel, LibreOffice or openpyxl shifts the formula back into each cell)."""
    if not hasattr(wb, "_gpu_tco_shared_rows"):
        wb._gpu_tco_shared_rows = {}
    return wb._gpu_tco_shared_rows


def save_atomically(wb: Workbook, cached: Mapping[str, object], target: Path) -> Path:
    """Save ``wb`` with the cached formula values so that ``target`` is always either the old or the
    new complete file: the file is built in memory, then written by ``gpu_tco.core.files.write_atomically``
    (the one writer and the one rule for temporaries, see there).  Rows named in ``shared_rows(wb)`` are written
    as shared formulas."""
    buffer = io.BytesIO()
    _save_to(wb, buffer)
    data = _with_cached_values(buffer.getvalue(), wb, cached, shared_rows(wb))
    try:
        write_atomically(target, data)
    except OSError as err:
        raise WorkbookError(f"{target}: cannot be written ({err.strerror or err}; is it open in Excel or read-only?)") from None
    return target


# a formula cell as openpyxl writes it: plain (<f>) or the first cell of an array formula (<f t="array" ref=...>)
_CELL = re.compile(r'<c r="([A-Z]+[0-9]+)"([^>]*)><f([^>]*)>(.*?)</f><v\s*/?>(?:</v>)?</c>', re.S)


# zlib level of the file's parts: 8 packs the default workbook about 2 % smaller than the default 6 for some 30 ms more
# (9 adds nothing over 8 here)
DEFLATE_LEVEL = 8
# significant digits of a cached value (a spreadsheet keeps 15; recalculation restores them all): 11 show every figure
# as its number format shows it, but for the billion-second stand-ins for "never" shown to a hundredth; each digit more
# costs the default workbook about 1.3 KB
CACHED_DIGITS = 11


def cached_number(x: float) -> str:
    """A formula cell's cached value as the file stores it: a whole number exactly ("70553706496.0"), any other to
    CACHED_DIGITS significant digits ("75.948275862" for 75.94827586206897): a viewer that does not recalculate
    shows the same figures at any number format, and the digits past the eleventh, which compress worst, are left out."""
    if x == int(x):
        return repr(x)
    return f"{x:.{CACHED_DIGITS}g}"


def _with_cached_values(xlsx: bytes, wb: Workbook, cached: Mapping[str, object],
                        shared: Mapping[str, list[tuple[int, int, int]]] | None = None) -> bytes:
    """openpyxl writes formula cells without a cached <v>; add core's value to each (and write the rows of
    ``shared`` as shared formulas, ``_share_rows``)."""
    sheet_files = {ws.title: f"xl/worksheets/sheet{i}.xml" for i, ws in enumerate(wb.worksheets, start=1)}
    shared_files = {sheet_files[title]: groups for title, groups in (shared or {}).items() if groups}
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
                    return f'<c r="{ref}"{attrs}>{f}<v>{cached_number(float(v))}</v></c>'
                data = _CELL.sub(put, data.decode("utf-8")).encode("utf-8")
            if info.filename in shared_files:
                data = _share_rows(data.decode("utf-8"), shared_files[info.filename]).encode("utf-8")
            zout.writestr(info, data, compress_type=zipfile.ZIP_DEFLATED, compresslevel=DEFLATE_LEVEL)
    return out.getvalue()


_ROW = re.compile(r'<row r="([0-9]+)"[^>]*(?<!/)>.*?</row>', re.S)  # (an empty row, <row r="5"/>, has no </row>)
_FORMULA_CELL = re.compile(r'(<c r="([A-Z]+)[0-9]+"[^>]*>)<f>(.*?)</f>', re.S)


def _share_rows(xml: str, groups: list[tuple[int, int, int]]) -> str:
    """The sheet's rows ``groups`` [(row, first column, last column)] as shared formulas (ECMA-376 Part 1, 18.3.1.40,
    t="shared"): the first cell keeps the formula with ref = the range and an index si, the others only the index;
    each keeps its cached value.  A row whose cells are not all plain formulas stays as it is."""
    from openpyxl.utils import column_index_from_string
    wanted = {row: (first, last) for row, first, last in groups}
    index = iter(range(len(wanted)))

    def share(row_match):
        row = int(row_match.group(1))
        if row not in wanted:
            return row_match.group(0)
        first, last = wanted[row]
        text = row_match.group(0)
        cells = [m for m in _FORMULA_CELL.finditer(text) if first <= column_index_from_string(m.group(2)) <= last]
        if len(cells) != last - first + 1 or len(cells) < 2:
            return row_match.group(0)
        si = next(index)
        out, at = [], 0
        for j, m in enumerate(cells):
            out.append(text[at:m.start()])
            if j == 0:
                out.append(f'{m.group(1)}<f t="shared" ref="{m.group(2)}{row}:{cells[-1].group(2)}{row}" si="{si}">{m.group(3)}</f>')
            else:
                out.append(f'{m.group(1)}<f t="shared" si="{si}"/>')
            at = m.end()
        out.append(text[at:])
        return "".join(out)
    return _ROW.sub(share, xml)
