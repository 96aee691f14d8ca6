"""The one reader of JSON files from outside (a Hugging Face config.json, genai-prices' data.json, a JSON
scenario): numbers gpu-tco cannot compute with are refused where the file is read, naming the file, the
field and the value, before any arithmetic sees them.

Refused anywhere in the file: an integer beyond 2**53 (9,007,199,254,740,992; from there on a float no
longer holds every whole number exactly, and a 401-digit one cannot become a float at all), NaN,
Infinity and -Infinity (not JSON; Python's json module reads them) and a fraction too large for a float
(1e999).  Booleans are refused where a field is read as a number (``number``): JSON ``true`` is not 1.
"""
from __future__ import annotations

import json
import math

from .errors import GpuTcoError, InputError, show

LARGEST_WHOLE = 2**53  # 9,007,199,254,740,992: the largest whole number a float holds exactly (with all below it)


class _Unusable:
    """A number in the file text that no float can hold: its text, kept to name it in the message."""

    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text

    def __repr__(self):
        return self.text if len(self.text) <= 24 else f"{self.text[:12]}...({len(self.text)} digits)"


def _int(text: str):
    return int(text) if len(text) <= 17 and abs(int(text)) <= LARGEST_WHOLE else _Unusable(text)


def _float(text: str):
    x = float(text)
    return x if math.isfinite(x) else _Unusable(text)


class JsonNumberError(GpuTcoError):
    """A number in a JSON file gpu-tco cannot use; ``field`` is its path ("text_config.hidden_size")."""

    def __init__(self, where: str, field: str, value_text: str, problem: str):
        self.where, self.field, self.value_text = where, field, value_text
        super().__init__(f"{where}, field {field}: {value_text} {problem}")


PROBLEM = ("is not a number gpu-tco can use; allowed: a finite number, whole numbers up to "
           f"{LARGEST_WHOLE:,} (no NaN, Infinity or numbers beyond that)")


def loads(text: str | bytes, where: str, anywhere: bool = True, whole_limit: bool = True):
    """The JSON value in ``text`` (str, or bytes in UTF-8 with or without a byte-order mark), with every number checked
    (see the module's text); raises JsonNumberError naming ``where`` (the file), the field and the value, and
    ValueError / UnicodeDecodeError / RecursionError as ``json.loads`` does for text that is not JSON.

    ``anywhere=False`` keeps such a number as a marker that no arithmetic accepts (``is_unusable``), for files whose
    readers check the fields they use and ignore the rest (a published config.json holds ``Infinity`` in a field of
    training settings gpu-tco never reads).  ``whole_limit=False`` keeps whole numbers of any size as Python ints (a
    scenario, whose values are checked as inputs, round-trips through TOML, which has no such limit)."""
    if isinstance(text, bytes):
        text = text.decode("utf-8-sig")
    data = json.loads(text, parse_int=_int if whole_limit else int, parse_float=_float, parse_constant=_Unusable)
    bad = first_unusable(data) if anywhere else None
    if bad is not None:
        field, value = bad
        raise JsonNumberError(where, field or "(the whole file)", repr(value), PROBLEM)
    return data


def first_unusable(data) -> tuple[str, object] | None:
    """(field path, value) of the first number ``loads`` marked unusable, or None (walks without recursion, so a
    deeply nested file cannot exhaust the stack)."""
    stack = [("", data)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, _Unusable):
            return path, value
        if isinstance(value, dict):
            stack.extend((f"{path}.{k}" if path else str(k), v) for k, v in reversed(list(value.items())))
        elif isinstance(value, list):
            stack.extend((f"{path}[{i}]", v) for i, v in reversed(list(enumerate(value))))
    return None


def number(value, field: str, where: str, allowed: str, minimum: float | None = None, maximum: float | None = None,
           whole: bool = False) -> float | int:
    """One number read from a file's field: a JSON number (never a boolean or text), finite, whole when ``whole``,
    within [minimum, maximum]; raises InputError naming the field (``field``), the value and, in ``allowed``, what
    is allowed, with the file (``where``)."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) \
        and abs(value) <= LARGEST_WHOLE
    if ok and whole:
        ok = float(value).is_integer()
    if ok and minimum is not None:
        ok = value >= minimum
    if ok and maximum is not None:
        ok = value <= maximum
    if not ok:
        kind = " (a yes/no value)" if isinstance(value, bool) else " (text)" if isinstance(value, str) else ""
        raise InputError(field, _Raw(value), f"in {where}{kind} is not allowed; allowed: {allowed}")
    return int(value) if whole else value


class _Raw:
    """A JSON value as the file spells it (true, "false", 12), for messages."""

    def __init__(self, value):
        self.value = value

    def __repr__(self):
        if isinstance(self.value, _Unusable):
            return repr(self.value)
        try:
            return json.dumps(self.value)[:80]
        except (TypeError, ValueError):
            return show(self.value)


def is_unusable(value) -> bool:
    return isinstance(value, _Unusable)


__all__ = ["LARGEST_WHOLE", "JsonNumberError", "loads", "number", "first_unusable", "is_unusable", "InputError"]
