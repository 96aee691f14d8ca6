"""How messages word two small things the same way everywhere: close-match hints and numbers.

Pure string functions (no catalog, no NumPy), used by input validation, catalog lookups and files,
the Excel functions, the command line and the form, so one rule and one wording hold for all of them.
"""
from __future__ import annotations

import math
from collections.abc import Iterable

from .names import suggest

WHOLE_NUMBER_LIMIT = 1e15  # from here on a float's digits are no longer all exact: shown in exponent form


def close_matches(typed, candidates: Iterable, n: int = 3) -> list[str]:
    """Up to ``n`` names ``typed`` may have meant: the candidates it starts (a name typed in part, "H100"
    for H100-SXM), then the most alike (``names.suggest``), each once, most likely first."""
    candidates = list(dict.fromkeys(map(str, candidates)))
    word = str(typed).strip().lower()
    starts = [c for c in candidates if c.lower().startswith(word)] if word else []
    return list(dict.fromkeys(starts[:n] + suggest(str(typed), candidates, n)))[:n]


def did_you_mean(typed, candidates: Iterable, before: str = " ", after: str = "") -> str:
    """The one wording of a close-match hint: ``"(did you mean A, B?)"`` naming ``close_matches``,
    between ``before`` and ``after``; "" when nothing is close.

    ``f"is not a quantity{did_you_mean(x, QUANTITIES)}"`` gives "is not a quantity (did you mean y?)";
    a list of what is allowed is led by ``allowed_hint``, which also says when nothing is close."""
    close = close_matches(typed, candidates)
    return f"{before}(did you mean {', '.join(close)}?){after}" if close else ""


def allowed_hint(typed, candidates: Iterable) -> str:
    """What leads the list of what is allowed after an unknown name: ``"(did you mean A, B?); "``, or with nothing
    close ``"(no close match); "`` (``unknown "xyz" (no close match); allowed: ...``)."""
    return did_you_mean(typed, candidates, before="", after="; ") or "(no close match); "


def is_whole_number(x) -> bool:
    """Whether a number prints without decimals: whole and below ``WHOLE_NUMBER_LIMIT`` in size."""
    return float(x).is_integer() and abs(x) < WHOLE_NUMBER_LIMIT


def number_text(x, grouped: bool = True) -> str:
    """A number as messages, fields and tables show it: a whole number below 1e15 without decimals (with
    thousands separators when ``grouped``: 4,096), anything else in shortest form (0.5, 1e+15, inf)."""
    if isinstance(x, bool):
        return str(int(x))
    if is_whole_number(x):
        return f"{int(x):,}" if grouped else str(int(x))
    return f"{x:g}"


def upper_first(text: str) -> str:
    """``text`` with its first letter in capitals, the rest as it is ("plain data parallel (PyTorch DDP)" starting a
    sentence; str.capitalize would lower "PyTorch DDP")."""
    return text[:1].upper() + text[1:]


def significant_text(x: float, digits: int = 3) -> str:
    """``x`` to ``digits`` significant digits as a sentence shows it: 0.000015, 9.58, 12, 5,710 (thousands separators,
    never an exponent: "5.71e+03 hours" reads as a typo to most people); not finite: "-"."""
    if not math.isfinite(x):
        return "-"
    rounded = float(f"{x:.{digits}g}")
    if rounded == 0 or abs(rounded) >= 10 ** (digits - 1):
        return f"{rounded:,.0f}"
    decimals = digits - 1 - math.floor(math.log10(abs(rounded)))  # as many as the significant digits need
    return f"{rounded:.{decimals}f}".rstrip("0").rstrip(".") if decimals > 0 else f"{rounded:.0f}"


def spreadsheet_round(x: float, digits: int):
    """``x`` rounded to ``digits`` decimals as a spreadsheet rounds (ROUND, and TEXT when it shows a number): on the
    15 significant digits the sheet keeps, halves away from zero.  Python's round and format work on the binary
    double instead (26.825 is 26.8249999... there and goes down; the sheet shows 26.83).  A decimal.Decimal, so
    that a caller can compare it (the planner's ties) or print it (the answer's dollars and hours) without a second
    rounding."""
    from decimal import ROUND_HALF_UP, Decimal
    return Decimal(f"{float(x):.15g}").quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")  # what Excel, LibreOffice and Google Sheets may read as a formula's start


def formula_safe(text: str) -> str:
    """Text from outside (a provider's instance or region name, a model name) as a spreadsheet shows it: text that
    starts like a formula (=, +, -, @, a tab or a carriage return) gets a leading apostrophe, which spreadsheets read
    as "this cell is text" (OWASP, "CSV Injection", https://owasp.org/www-community/attacks/CSV_Injection).  A lone
    "-" and a plain number ("-5") stay as they are: no spreadsheet runs them."""
    text = str(text)
    if not text.startswith(FORMULA_STARTS) or text == "-":
        return text
    try:
        float(text)
        return text
    except ValueError:
        return "'" + text


def packed_documents_text(inputs) -> str:
    """", packed documents of N tokens" where the job packs short documents into each sequence with per-document
    attention (the input packed_document_tokens), else "": the job's description in every door names what its attention
    spans."""
    tokens, seq = inputs.get("packed_document_tokens") or 0, inputs.get("seq_len") or 0
    if not 0 < tokens < seq:  # a document as long as the sequence or longer: one document per sequence
        return ""
    return f", packed documents of {number_text(tokens)} tokens"


def fit_word(fits, tight, may_exceed) -> str:
    """Whether a setup fits, in the one word every table gives: "no", "may not fit" (fits by the estimate, its likely
    peak above the memory: train_memory_may_exceed), "tight" (the device total above 90 % of the memory:
    train_memory_tight) or "yes"."""
    return ("may not fit" if may_exceed else "tight" if tight else "yes") if fits else "no"
