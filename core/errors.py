"""The project's own errors: every bad input or catalog row becomes one of these.

Both are ``GpuTcoError`` and ``ValueError``, so callers can catch either.  ``str(err)`` is
one line fit for a spreadsheet cell, a dialog or a terminal.
"""
from __future__ import annotations

import re

MAX_SHOWN = 80  # characters of a value echoed in a message; longer values are cut and their length given


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


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

    def __init__(self, path, row: int, column: str, problem: str):
        self.path, self.row, self.column = str(path), row, column
        super().__init__(f"{path}, row {row}, column {column}: {problem}")


def show(value) -> str:
    """A value as a message quotes it: strings in double quotes, long ones cut with their length."""
    if isinstance(value, str):
        text = value if len(value) <= MAX_SHOWN else f"{value[:MAX_SHOWN]}... ({len(value):,} characters)"
        # a line break or other control character in a value is shown as its escape: the message stays one line
        text = _CONTROL.sub(lambda m: repr(m.group())[1:-1], text)
        return f'"{text}"'
    if isinstance(value, float):
        return f"{value:g}"
    text = repr(value)
    return text if len(text) <= MAX_SHOWN else f"{text[:MAX_SHOWN]}... ({len(text):,} characters)"
