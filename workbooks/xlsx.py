"""Writing .xlsx files safely: styles shared by gpu-tco's workbooks, target checks, and an
atomic save that stores each formula cell's cached value.

Used by the workbook (``gpu_tco.workbooks.build``) and the add-in's demo workbook
(``gpu_tco.addin.demo``).  openpyxl writes formula cells without cached values; viewers that do
not recalculate (Protected View, preview panes, phones) would show them blank, so
``save_atomically`` adds the value gpu-tco computed to each.
"""
from __future__ import annotations

import gc
import io
import math
import os
import re
import zipfile
from pathlib import Path
from typing import Mapping
from xml.sax.saxutils import escape as xml_escape

from openpyxl import Workbook
from openpyxl.drawing.spreadsheet_drawing import SpreadsheetDrawing
from openpyxl.styles import Alignment, Font, PatternFill
from openpyxl.worksheet._writer import WorksheetWriter
from openpyxl.writer.excel import ExcelWriter

from ..core import STALE_SECONDS, TEMP_MARK, collector_paused, target_problem, write_atomically  # noqa: F401 - TEMP_MARK, STALE_SECONDS: re-exported

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


def _save_to(wb: Workbook, buffer, sheets=None) -> None:
    """``wb.save(buffer)``.  Without ``sheets`` its parts are stored uncompressed: ``_with_cached_values`` rewrites
    every part and compresses each once (openpyxl's own save deflates them first, which the rewrite undid).  With
    ``sheets`` ({title: (cached values by cell, shared rows)}, ``_plain_sheets``) each sheet's cells are written as
    text with their cached values and shared formulas (``_sheet_data``) and every part is deflated once here.
    When a write fails (a full disk), an abandoned sheet writer reports the same error again when it is collected
    ("Exception ignored in ..."), so the error is raised once, without the traceback that keeps the writer alive,
    and the second report is dropped."""
    import sys
    from datetime import datetime, timezone

    failed = None
    hook = sys.unraisablehook
    sys.unraisablehook = lambda unraisable: None
    try:
        try:
            # what Workbook.save does (openpyxl.writer.excel.save_workbook), into an archive of our choosing
            wb.properties.modified = datetime.now(tz=timezone.utc).replace(tzinfo=None)
            if sheets is None:
                ExcelWriter(wb, zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED, allowZip64=True)).save()
            else:
                archive = zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, allowZip64=True, compresslevel=DEFLATE_LEVEL)
                _TextCellsWriter(wb, archive, sheets).save()
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
    data = workbook_bytes(wb, cached)
    try:
        write_atomically(target, data)
    except OSError as err:
        raise WorkbookError(f"{target}: cannot be written ({err.strerror or err}; is it open in Excel or read-only?)") from None
    return target


def workbook_bytes(wb: Workbook, cached: Mapping[str, object], cells_as_text: bool = True) -> bytes:
    """The .xlsx file of ``wb``, each formula cell with its cached value from ``cached`` ({"Sheet!A1": value}), the
    rows of ``shared_rows(wb)`` as shared formulas.  Written as text (``_sheet_data``: about a third of a workbook's
    time less) unless a cell is of a kind only openpyxl's own cell writer writes (a date, an error value, rich text,
    a hyperlink) or ``cells_as_text`` is False; then openpyxl writes the cells and ``_with_cached_values`` adds the
    values.  Both give the same file (tests/test_workbook.py compares them)."""
    buffer = io.BytesIO()
    with collector_paused():
        sheets = _plain_sheets(wb, cached) if cells_as_text else None
        _save_to(wb, buffer, sheets)
    if sheets is not None:
        return buffer.getvalue()
    return _with_cached_values(buffer.getvalue(), wb, cached, shared_rows(wb))


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


def _formula_cell(ref: str, attrs: str, formula_xml: str, v) -> str | None:
    """A formula cell's XML with its cached value ``v``: a truth value, a text result or a number (``cached_number``);
    None for a number no spreadsheet holds (infinite, not a number), which is left to recalculation."""
    if isinstance(v, bool):
        return f'<c r="{ref}"{attrs} t="b">{formula_xml}<v>{int(v)}</v></c>'
    if isinstance(v, str):  # a formula's text result
        return f'<c r="{ref}"{attrs} t="str">{formula_xml}<v>{xml_escape(v)}</v></c>'
    if not math.isfinite(float(v)):
        return None
    return f'<c r="{ref}"{attrs}>{formula_xml}<v>{cached_number(float(v))}</v></c>'


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
                    return _formula_cell(ref, attrs, f"<f{fattrs}>{formula}</f>", cells[ref]) or m.group(0)
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


def _plain_sheets(wb: Workbook, cached: Mapping[str, object]) -> dict[str, tuple[dict, dict]] | None:
    """{sheet title: (cached values by cell, {row: (first column, last column)} of the shared rows)} when every cell
    is of a kind ``_sheet_data`` writes (empty, a number, a truth value, text, a formula or an array formula, without
    a hyperlink), else None."""
    from openpyxl.worksheet.formula import ArrayFormula
    if wb.write_only:
        return None
    for ws in wb.worksheets:
        for cell in ws._cells.values():
            v, kind = cell._value, cell.data_type
            if getattr(cell, "hyperlink", None) is not None or v is not None and not (
                    kind == "n" and type(v) in (int, float) and math.isfinite(v) or kind == "s" and type(v) is str
                    or kind == "b" and type(v) is bool
                    or kind == "f" and (type(v) is str and len(v) > 1
                                        or type(v) is ArrayFormula and type(v.text) is str and len(v.text) > 1)):
                return None
    sheets = {ws.title: ({}, {}) for ws in wb.worksheets}
    for key, value in cached.items():
        title, ref = key.split("!")
        sheets[title][0][ref] = value
    for title, groups in shared_rows(wb).items():
        sheets[title][1].update({row: (first, last) for row, first, last in groups})
    return sheets


def _sheet_data(ws, cached: Mapping[str, object], shared: Mapping[int, tuple[int, int]]) -> str:
    """The <sheetData> of ``ws`` as openpyxl's own writer (openpyxl 3.1, et_xmlfile) writes it, each formula cell
    with its cached value from ``cached`` (``_formula_cell``) and the rows of ``shared`` as shared formulas (as
    ``_share_rows``), in one pass of string formatting instead of an element per cell: the same bytes in about a
    third of the time (tests/test_workbook.py compares the files).  Only the cells ``_plain_sheets`` admits."""
    from xml.etree.ElementTree import _escape_attrib, _escape_cdata  # the escaping openpyxl's writer uses

    from openpyxl.comments.comment_sheet import CommentRecord
    from openpyxl.utils import get_column_letter
    rows: dict[int, list] = {}
    for (row, _), cell in sorted(ws._cells.items()):
        rows.setdefault(row, []).append(cell)
    for row in ws.row_dimensions.keys() - rows.keys():  # rows with only a height or a style
        rows[row] = []
    out, si = ["<sheetData>"], 0
    for row in sorted(rows):
        attrs = {"r": f"{row}"}
        attrs.update(ws.row_dimensions.get(row, {}))
        out.append("<row" + "".join(f' {k}="{_escape_attrib(v)}"' for k, v in attrs.items()) + ">")
        shared_formula = {}
        if row in shared:
            first, last = shared[row]
            cells = [c for c in rows[row] if first <= c.column <= last and c.data_type == "f" and type(c._value) is str]
            if len(cells) == last - first + 1 and len(cells) >= 2:
                span = f"{get_column_letter(first)}{row}:{get_column_letter(last)}{row}"
                shared_formula = {id(c): f'<f t="shared" si="{si}"/>' for c in cells[1:]}
                shared_formula[id(cells[0])] = f'<f t="shared" ref="{span}" si="{si}">{_escape_cdata(cells[0]._value[1:])}</f>'
                si += 1
        for cell in rows[row]:
            if cell._comment is not None:
                ws._comments.append(CommentRecord.from_cell(cell))
            v, kind = cell._value, cell.data_type
            if v is None and not cell.has_style and not cell._comment:
                continue
            ref = cell.coordinate
            style = f' s="{cell.style_id}"' if cell.has_style else ""
            if kind == "f":
                formula = shared_formula.get(id(cell)) or (
                    f"<f>{_escape_cdata(v[1:])}</f>" if type(v) is str
                    else "<f" + "".join(f' {k}="{_escape_attrib(x)}"' for k, x in v) + f">{_escape_cdata(v.text[1:])}</f>")
                out.append(ref in cached and _formula_cell(ref, style, formula, cached[ref])
                           or f'<c r="{ref}"{style}>{formula}<v /></c>')
            elif v is None or v == "":
                out.append(f'<c r="{ref}"{style} t="{"inlineStr" if kind == "s" else kind}" />')
            elif kind == "s":
                stripped = v.strip()
                space = ' xml:space="preserve"' if stripped and stripped != v else ""
                out.append(f'<c r="{ref}"{style} t="inlineStr"><is><t{space}>{_escape_cdata(v)}</t></is></c>')
            else:
                out.append(f'<c r="{ref}"{style} t="{kind}"><v>{"%.16g" % v}</v></c>')
        out.append("</row>")
    out.append("</sheetData>")
    return "".join(out)


class _TextCellsWriter(ExcelWriter):
    """openpyxl's workbook writer, each sheet written in memory with its cells as text (``_sheet_data``)."""

    def __init__(self, workbook: Workbook, archive: zipfile.ZipFile, sheets: Mapping[str, tuple[dict, dict]]):
        super().__init__(workbook, archive)
        self._sheets = sheets

    def write_worksheet(self, ws):
        # openpyxl 3.1's ExcelWriter.write_worksheet, the sheet kept in memory instead of a temporary file
        ws._drawing = SpreadsheetDrawing()
        ws._drawing.charts = ws._charts
        ws._drawing.images = ws._images
        writer = _TextCellsSheetWriter(ws, *self._sheets[ws.title])
        writer.write()
        ws._rels = writer._rels
        self._archive.writestr(ws.path[1:], writer.xml())
        self.manifest.append(ws)


class _TextCellsSheetWriter(WorksheetWriter):
    """openpyxl's sheet writer with an empty <sheetData>, filled by ``_sheet_data`` afterwards (whichever XML library
    openpyxl writes with)."""

    def __init__(self, ws, cached: Mapping[str, object], shared: Mapping[int, tuple[int, int]]):
        self._cached, self._shared = cached, shared
        super().__init__(ws, out=io.BytesIO())

    def write_rows(self):
        self._sheet_xml = _sheet_data(self.ws, self._cached, self._shared)
        xf = self.xf.send(True)
        with xf.element("sheetData"):
            pass
        self.xf.send(None)

    def xml(self) -> bytes:
        data, found = _EMPTY_SHEET_DATA.subn(lambda m: self._sheet_xml.encode("utf-8"), self.read(), count=1)
        if not found:  # an openpyxl that writes sheets otherwise: never a file without its cells
            raise RuntimeError("openpyxl wrote no <sheetData> to fill")
        return data


_EMPTY_SHEET_DATA = re.compile(rb"<sheetData\s*(?:/>|></sheetData>)")
