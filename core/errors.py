"""The project's own error type: every bad input becomes one of these."""
from __future__ import annotations

import difflib


class InputError(ValueError):
    """A bad input value, with the field, the value and what is allowed.

    ``str(err)`` is a one-line message fit for a spreadsheet cell or a
    dialog, e.g. ``gpu: unknown "H1000" (did you mean H100-SXM?)``.
    """

    def __init__(self, field: str, value, allowed: str, row: int | None = None, verb: str = ""):
        self.field = field
        self.value = value
        self.allowed = allowed
        self.row = row
        where = f" (row {row})" if row is not None else ""
        shown = "" if value is None else _show(value) + " "
        self.verb = verb
        super().__init__(f"{field}{where}: {verb + ' ' if verb else ''}{shown}{allowed}")


class CatalogError(ValueError):
    """A malformed row in a catalog file, naming file, row and column."""

    def __init__(self, path, row: int, column: str, problem: str):
        self.path, self.row, self.column = str(path), row, column
        super().__init__(f"{path}, row {row}, column {column}: {problem}")


def _show(value) -> str:
    if isinstance(value, str):
        return f'"{value}"'
    return repr(value) if not isinstance(value, float) else f"{value:g}"


def suggest(word: str, candidates, n: int = 3) -> list[str]:
    """Close matches for a mistyped name (case- and punctuation-insensitive)."""
    from .catalog import normalize  # local: catalog imports this module

    by_norm: dict[str, str] = {}
    for c in candidates:
        by_norm.setdefault(normalize(c), c)
    hits = difflib.get_close_matches(normalize(word), list(by_norm), n=n, cutoff=0.5)
    return [by_norm[h] for h in hits]
