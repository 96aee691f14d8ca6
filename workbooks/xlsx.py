"""Writing .xlsx files safely: styles shared by gpu-tco's workbooks, target checks, and an
atomic save that stores each formula cell's cached value.

Used by the workbook (``gpu_tco.workbooks.build``) and the add-in's demo workbook
(``gpu_tco.addin.demo``).  openpyxl writes formula cells without cached values; viewers that do
not recalculate (Protected View, preview panes, phones) would show them blank, so
``save_atomically`` adds the value gpu-tco computed to each.
"""
from __future__ import annotations

import io
import os
import re
import secrets
import time
import zipfile
from pathlib import Path
from typing import Mapping
from xml.sax.saxutils import escape as xml_escape

from openpyxl import Workbook
from openpyxl.styles import Font, PatternFill

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
    """An .xlsx path in an existing folder, or WorkbookError saying what is wrong."""
    target = Path(path)
    if target.suffix.lower() != ".xlsx":
        raise WorkbookError(f"{target}: the workbook must be an .xlsx file (no macros)")
    folder = target.parent if str(target.parent) else Path(".")
    try:
        if not folder.is_dir():
            raise WorkbookError(f"{target}: the folder {folder} does not exist")
        if target.is_dir():
            raise WorkbookError(f"{target}: is a folder; give a file name ending in .xlsx")
        if target.exists() and not (target.stat().st_mode & 0o222):  # refused also for root, who could write it
            raise WorkbookError(f"{target}: is read-only; make it writable or choose another name")
    except OSError as err:  # a name too long for the file system, a folder that cannot be read
        raise WorkbookError(f"{str(target)[:120]}: cannot be used ({err.strerror or err})") from None
    return target


TEMP_MARK = ".gpu-tco-tmp-"  # the one recognisable name of gpu-tco's temporaries: .<target>.gpu-tco-tmp-<random>
STALE_SECONDS = 3600


def save_atomically(wb: Workbook, cached: Mapping[str, object], target: Path) -> Path:
    """Save ``wb`` with the cached formula values so that ``target`` is always either the old or the
    new complete file: the file is built in memory, written to a temporary beside the target (on
    Linux an unnamed one, so a killed process leaves nothing behind), then renamed over the target.
    Stale temporaries of gpu-tco's own, older than an hour, are removed from the folder first."""
    folder = target.parent if str(target.parent) else Path(".")
    _remove_stale_temporaries(folder)
    buffer = io.BytesIO()
    wb.save(buffer)
    data = _with_cached_values(buffer.getvalue(), wb, cached)
    try:
        _write_replace(data, target, folder)
    except OSError as err:
        raise WorkbookError(f"{target}: cannot be written ({err.strerror or err}; is it open in Excel or read-only?)") from None
    return target


def _write_replace(data: bytes, target: Path, folder: Path) -> None:
    name = folder / f".{target.name}{TEMP_MARK}{os.getpid()}-{secrets.token_hex(4)}"
    fd = None
    if hasattr(os, "O_TMPFILE"):
        try:  # an unnamed file: it gets a name only once it is complete
            fd = os.open(folder, os.O_TMPFILE | os.O_WRONLY, 0o644)
        except OSError:
            fd = None
    if fd is not None:
        try:
            _write_all(fd, data)
            proc = os.open("/proc/self/fd", os.O_RDONLY | os.O_DIRECTORY)
            try:  # linkat(..., AT_SYMLINK_FOLLOW): Python uses it only when given a directory descriptor
                os.link(str(fd), name, src_dir_fd=proc, follow_symlinks=True)
            finally:
                os.close(proc)
        except OSError:
            fd_failed = True
        else:
            fd_failed = False
        finally:
            os.close(fd)
        if fd_failed:
            fd = None
    if fd is None:
        named = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            _write_all(named, data)
        except BaseException:
            os.close(named)
            name.unlink(missing_ok=True)
            raise
        os.close(named)
    try:
        os.replace(name, target)
    except BaseException:
        name.unlink(missing_ok=True)
        raise


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
    os.fsync(fd)


def _remove_stale_temporaries(folder: Path) -> None:
    now = time.time()
    try:
        for path in folder.glob(f".*{TEMP_MARK}*"):
            try:
                if now - path.stat().st_mtime > STALE_SECONDS:
                    path.unlink()
            except OSError:
                pass  # another process's, or already gone
    except OSError:
        pass


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
                    return f'<c r="{ref}"{attrs}>{f}<v>{repr(float(v))}</v></c>'
                data = _CELL.sub(put, data.decode("utf-8")).encode("utf-8")
            zout.writestr(info, data)
    return out.getvalue()
