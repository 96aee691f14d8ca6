"""The project's own errors: every bad input or catalog row becomes one of these.

Both are ``GpuTcoError`` and ``ValueError``, so callers can catch either.  ``str(err)`` is
one line fit for a spreadsheet cell, a dialog or a terminal.
"""
from __future__ import annotations

import itertools
import re

MAX_SHOWN = 80  # characters of a value echoed in a message; longer values are cut and their length given
MAX_ITEMS = 4  # items of a sequence (a pandas Series, a NumPy array) a message shows

# characters that would break a message over lines or hide text: C0/C1 controls, line and paragraph separators
# (and lone surrogates, which no file or terminal encoding can write)
_BREAKS = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")


def one_line(text: str) -> str:
    """``text`` with control characters and line separators written as escapes (a newline as ``\\n``), so
    a message is one line whatever the user typed; lone surrogates are escaped the same way."""
    return _BREAKS.sub(lambda m: repr(m.group())[1:-1], text)


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class GpuTcoError(ValueError):
    """Base class of gpu-tco's errors; the message is always one line (see ``one_line``)."""

    def __init__(self, *args):
        if len(args) == 1 and isinstance(args[0], str):
            args = (one_line(args[0]),)
        super().__init__(*args)


class InputError(GpuTcoError):
    """A bad input value, with the field, the value and what is allowed.

    ``str(err)`` is e.g. ``gpu: unknown "H1000" (did you mean H100-SXM?)``.
    """

    def __init__(self, field: str, value, allowed: str, row: int | None = None, verb: str = ""):
        self.field = field
        self.value = value
        self.allowed = allowed
        self.row = row
        self.verb = verb
        where = f" (row {row})" if row is not None else ""
        shown = "" if value is None else show(value) + " "
        super().__init__(f"{_cut(str(field))}{where}: {verb + ' ' if verb else ''}{shown}{allowed}")

    def __reduce__(self):  # picklable (a worker process hands its error back): the value as shown, not the object
        return (InputError, (self.field, None if self.value is None else _Shown(show(self.value)), self.allowed, self.row, self.verb))


class CatalogError(GpuTcoError):
    """A malformed row in a catalog file, naming file, row and column."""

    def __init__(self, path, row: int | None, column: str | None, problem: str):
        self.path, self.row, self.column = str(path), row, column
        shown = self.path.encode("utf-8", "backslashreplace").decode("utf-8")  # a file name's undecodable bytes as \udcff
        shown = shown if len(shown) <= 160 else f"...{shown[-150:]}"  # a path too long to use is cut
        where = "".join(f", {w}" for w in (f"row {row}" if row is not None else "", f"column {column}" if column else "") if w)
        super().__init__(f"{shown}{where}: {problem}")
        self.problem = problem

    def __reduce__(self):
        return (CatalogError, (self.path, self.row, self.column, self.problem))


class _Shown(str):
    """A value already turned into its message text (an error that crossed a process boundary)."""


def _cut(text: str) -> str:
    return text if len(text) <= MAX_SHOWN else f"{text[:MAX_SHOWN]}... ({len(text):,} characters)"


def show(value) -> str:
    """A value as a message quotes it: strings in double quotes, numbers as numbers, a pandas Series or NumPy
    array as its type, size and first items, anything else by ``repr``; long texts cut with their length
    given, and always on one line."""
    if isinstance(value, _Shown):
        return str(value)
    if isinstance(value, str):
        return f'"{_cut(one_line(str(value)))}"'
    if isinstance(value, float):
        return f"{float(value):g}"
    if isinstance(value, int) and not isinstance(value, bool) and 10 ** 16 <= abs(value) < 2 ** 1023:  # float-sized
        return f"{value:g}"  # a whole number past float precision (1e300 read as a whole number): 1e+300, not 301 digits
    try:
        module = type(value).__module__ or ""
        if module.startswith(("pandas", "numpy")) and getattr(value, "ndim", 0) >= 1:
            size = int(getattr(value, "size", 0))
            flat = value.flat if hasattr(value, "flat") and not module.startswith("pandas") else iter(value)
            items = ", ".join(map(_item, itertools.islice(flat, MAX_ITEMS)))
            text = f"{type(value).__name__} of {size:,} values [{items}{', ...' if size > MAX_ITEMS else ''}]"
        else:
            text = repr(value)
    except Exception:  # noqa: BLE001 - a value whose repr fails is still named by its type
        text = f"<{type(value).__name__}>"
    return _cut(one_line(text))


def _item(value) -> str:
    try:
        return repr(value.item() if hasattr(value, "item") else value)[:MAX_SHOWN]
    except Exception:  # noqa: BLE001
        return f"<{type(value).__name__}>"
