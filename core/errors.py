"""The project's own errors: every bad input or catalog row becomes one of these.

Both are ``GpuTcoError`` and ``ValueError``, so callers can catch either.  ``str(err)`` is
one line fit for a spreadsheet cell, a dialog or a terminal.
"""
from __future__ import annotations

MAX_SHOWN = 80  # characters of a value echoed in a message; longer values are cut and their length given


class GpuTcoError(ValueError):
    """Base class of gpu-tco's errors."""


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
        super().__init__(f"{field}{where}: {verb + ' ' if verb else ''}{shown}{allowed}")


class CatalogError(GpuTcoError):
    """A malformed row in a catalog file, naming file, row and column."""

    def __init__(self, path, row: int | None, column: str | None, problem: str):
        self.path, self.row, self.column = str(path), row, column
        shown = self.path.encode("utf-8", "backslashreplace").decode("utf-8")  # a file name's undecodable bytes as \udcff
        shown = shown if len(shown) <= 160 else f"...{shown[-150:]}"  # a path too long to use is cut
        where = "".join(f", {w}" for w in (f"row {row}" if row is not None else "", f"column {column}" if column else "") if w)
        super().__init__(f"{shown}{where}: {problem}")


def show(value) -> str:
    """A value as a message quotes it: strings in double quotes, long ones cut with their length."""
    if isinstance(value, str):
        text = value if len(value) <= MAX_SHOWN else f"{value[:MAX_SHOWN]}... ({len(value):,} characters)"
        return f'"{text}"'
    if isinstance(value, float):
        return f"{value:g}"
    text = repr(value)
    return text if len(text) <= MAX_SHOWN else f"{text[:MAX_SHOWN]}... ({len(text):,} characters)"
