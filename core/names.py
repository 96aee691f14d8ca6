"""Matching names as people type them: normalisation and close-match suggestions.

Pure string functions (no catalog, no NumPy), shared by the catalogs, the engine and the
error messages.
"""
from __future__ import annotations

import difflib
import re

_NOISE_WORDS = re.compile(r"\b(nvidia|geforce|amd|instinct|tesla)\b")
_WORD = re.compile(r"[a-z0-9]+(?:\.[0-9]+)?")


def normalize(name) -> str:
    """Lower-case, drop vendor words and everything but letters and digits ("NVIDIA H100 SXM" -> "h100sxm")."""
    s = _NOISE_WORDS.sub("", str(name).lower())
    return re.sub(r"[^a-z0-9.]", "", s).replace(".", "")


def words(name) -> list[str]:
    """The words of a name, split at spaces and punctuation: "H100 80GB" -> ["h100", "80gb"]."""
    return _WORD.findall(_NOISE_WORDS.sub(" ", str(name).lower()))


def _ratio(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, a, b).ratio()


def similarity(typed: str, candidate: str) -> float:
    """How alike two names are, 0..1.  Each typed word is matched to the candidate's most alike
    word; the first word with a digit is the model number ("h100"), and a candidate without it
    (or a near miss such as "h1000") scores a third, so "H100 80GB" suggests H100 variants before A100-80GB.  The spelling of the
    whole name counts a quarter."""
    a, b = words(typed), words(candidate)
    if not a or not b:
        return 0.0
    best = [max(_ratio(w, c) for c in b) for w in a]
    word_score = sum(r for r in best if r >= 0.6) / len(a)
    model_number = next((w for w in a if any(ch.isdigit() for ch in w)), None)
    if model_number is not None and max(_ratio(model_number, c) for c in b) < 0.85:
        word_score *= 0.3
    return 0.75 * word_score + 0.25 * _ratio(normalize(typed), normalize(candidate))


def suggest(typed, candidates, n: int = 3, cutoff: float = 0.4) -> list[str]:
    """Up to ``n`` close matches for a mistyped name, most alike first."""
    typed = str(typed)[:200]  # a pasted novel is no name; compare its start only
    scored = sorted(((similarity(typed, c), i, c) for i, c in enumerate(dict.fromkeys(map(str, candidates)))),
                    key=lambda t: (-t[0], t[1]))
    return [c for score, _, c in scored[:n] if score >= cutoff]
