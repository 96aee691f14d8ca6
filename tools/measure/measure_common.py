"""What the measuring scripts share: the versions they report and how they print a row (one JSON object)."""
from __future__ import annotations

import json
import sys

GIB = 2 ** 30


def versions(names) -> dict:
    """{package: version} of the packages given that are installed (only the options that need one fail without it)."""
    out = {}
    for name in names:
        try:
            out[name] = __import__(name).__version__
        except Exception:  # not installed, or no version attribute
            pass
    return out


def emit(row: dict) -> int:
    """Print the row as JSON on standard output (what run_plan.py collects); the exit status 0."""
    json.dump(row, sys.stdout, indent=2)
    print()
    return 0
