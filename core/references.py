"""The references registry: every source a formula, input or catalog row cites, in full.

Sources in ``formulas.py``, ``inputs.py`` and the catalogs name works by key in square
brackets, e.g. ``"[korthikanti2022] section 4"``; ``cite`` expands each key to the full
citation (authors or publisher, title, year, URL), which docs/quantities.md and
``gpu-tco explain`` print.  A test checks that every key resolves.
"""
from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Reference:
    key: str
    authors: str  # authors, or the publisher of an unsigned page
    title: str
    year: str
    url: str

    def full(self) -> str:
        return f"{self.authors} ({self.year}), \"{self.title}\", {self.url}"


_REFS: list[Reference] = []

REFERENCES: dict[str, Reference] = {r.key: r for r in _REFS}
_KEY = re.compile(r"\[([a-z][a-z0-9_\-]*)\]")


def keys_in(text: str) -> list[str]:
    """The reference keys a source text names."""
    return _KEY.findall(str(text or ""))


def cite(text: str) -> str:
    """The source text with every [key] replaced by its full citation."""
    return _KEY.sub(lambda m: REFERENCES[m.group(1)].full() if m.group(1) in REFERENCES else m.group(0), str(text or ""))
