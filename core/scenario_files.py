"""Scenario files: a job as JSON or TOML with core's input names (read by the command line and the form).

A scenario holds input values (``{"model": "Llama-3-70B", "method": "lora", ...}``); anything
left out keeps its default.  One key is not an input: ``gpus``, the list of GPU types the
planner considers (the form's "GPUs to consider"; ``gpu-tco plan --gpus`` on the command line).
A model given as architecture fields is a table (``[model]`` in TOML, an object in JSON).
"""
from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path
from typing import Mapping

from . import json_numbers
from .errors import InputError, _Shown
from .files import read_regular_file, target_problem, write_atomically
from .hf_config import looks_like_path

MAX_SCENARIO_BYTES = 10 * 2**20  # a scenario is a few hundred bytes; a file that never ends is cut off here
PLANNER_KEYS = ("gpus",)         # scenario keys that are not inputs but the planner's scope


def read_scenario(path: str | os.PathLike) -> dict:
    """The mapping in a scenario file (UTF-8, a byte-order mark is fine; .toml is TOML, anything else JSON).

    Raises ``InputError`` (field ``scenario``) for an unreadable, oversized, non-UTF-8,
    malformed or non-table file.  Values are checked where they are used (``resolve_inputs``).
    """
    p = Path(path)
    try:
        raw = read_regular_file(p, MAX_SCENARIO_BYTES)
    except OSError as err:
        raise InputError("scenario", _escaped(str(path)), f"cannot be read ({err.strerror or err})") from None
    if len(raw) > MAX_SCENARIO_BYTES:
        raise InputError("scenario", _escaped(str(path)), f"is larger than {MAX_SCENARIO_BYTES // 2**20} MB; a scenario names a few inputs")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise InputError("scenario", _escaped(str(path)), f"is not UTF-8 text (byte {err.start}); save it as UTF-8") from None
    kind = "TOML" if p.suffix.lower() == ".toml" else "JSON"
    try:
        if kind == "TOML":
            import tomllib
            data = tomllib.loads(text)
        else:
            # no NaN or Infinity (the one JSON reader); whole numbers are checked as inputs, as TOML's are
            data = json_numbers.loads(text, str(path), whole_limit=False)
    except json_numbers.JsonNumberError as err:
        raise InputError(err.field, _Shown(err.value_text), f"in the scenario {_escaped(str(path))} {json_numbers.PROBLEM}") from None
    except RecursionError:
        raise InputError("scenario", _escaped(str(path)), f"is nested too deeply to be a scenario ({kind})") from None
    except ValueError as err:
        raise InputError("scenario", _escaped(str(path)), f"is not valid {kind} ({str(err)[:120]})") from None
    if not isinstance(data, dict):
        raise InputError("scenario", _escaped(str(path)), "must hold a table/object of input names and values")
    try:
        _check_savable(data, "", opening=True)  # what Save could not write back (a lone surrogate from a JSON escape)
    except InputError as err:
        raise InputError("scenario", _escaped(str(path)), f"cannot be used: {err}") from None
    model = data.get("model")
    if isinstance(model, str) and looks_like_path(model) and not Path(model).expanduser().is_absolute():
        # a config.json named relative to the scenario file, so a scenario and its model travel together
        beside = p.parent / model
        if beside.exists():
            data["model"] = str(beside)
    return data


def split_scenario(data: Mapping) -> tuple[dict, list[str] | None]:
    """(inputs, gpus): the planner's GPU list taken out of a scenario's mapping."""
    inputs = {k: v for k, v in data.items() if k not in PLANNER_KEYS}
    gpus = data.get("gpus")
    if gpus is None:
        return inputs, None
    if isinstance(gpus, str):
        gpus = [g.strip() for g in gpus.split(",") if g.strip()]
    if not isinstance(gpus, list) or not gpus or not all(isinstance(g, str) for g in gpus):
        raise InputError("gpus", gpus, "must be a list of GPU names, e.g. [\"H100-SXM\", \"L40S\"]")
    return inputs, gpus


def scenario_text(data: Mapping, toml: bool = False) -> str:
    """A scenario as JSON (default) or TOML text; inputs in the order given.

    What is written is exactly what ``read_scenario`` reads back: numbers must be finite, texts
    may hold any character but half of a UTF-16 surrogate pair (``InputError`` naming the key), and
    control characters are written as escapes (``\\u007f``), which JSON and TOML read back as the
    same character.  TOML holds texts, numbers, yes/no values, lists of these and one level of tables.
    """
    _check_savable(data, "")
    if not toml:
        return json.dumps(dict(data), indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    plain = [(k, v) for k, v in data.items() if not isinstance(v, Mapping)]
    tables = [(k, v) for k, v in data.items() if isinstance(v, Mapping)]
    lines = ["# gpu-tco scenario: input names as in docs/quantities.md; anything left out keeps its default."]
    lines += [f"{_toml_key(k)} = {_toml_value(k, v)}" for k, v in plain]
    for k, table in tables:  # a custom architecture: [model]
        lines += ["", f"[{_toml_key(k)}]"] + [f"{_toml_key(kk)} = {_toml_value(f'{k}.{kk}', vv)}" for kk, vv in table.items()]
    return "\n".join(lines) + "\n"


SURROGATE = re.compile("[\ud800-\udfff]")  # half of a UTF-16 pair: no UTF-8 form, so no file can hold it


def _text_problem(text: str) -> str | None:
    bad = SURROGATE.search(text)
    if bad is None:
        return None
    return (f"holds U+{ord(bad.group()):04X} at position {bad.start() + 1}, half of a UTF-16 surrogate pair "
            "(not a character; a file cannot hold it); remove it")


def _escaped(text: str) -> str:
    """Text a message can show: a lone surrogate as its escape (\\ud800), since no terminal or file takes it."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _check_savable(value, key: str, opening: bool = False) -> None:
    """InputError (naming the key) for what no scenario file can hold and read back.  ``opening``: only text no
    file can hold (a lone surrogate) is refused; a value of the wrong type (a TOML date for a number) is left for
    the inputs' own checks, which name the field where the form shows it."""
    if isinstance(value, Mapping):
        for k, v in value.items():
            if not isinstance(k, str):
                raise InputError(key or "scenario", k, "is not a text key; a scenario's keys are input names")
            name = f"{key}.{_escaped(k)}" if key else _escaped(k)
            problem = _text_problem(k)
            if problem:
                raise InputError(name, _escaped(k), f"as a name {problem}")
            _check_savable(v, name, opening)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _check_savable(v, key, opening)
    elif isinstance(value, str):
        problem = _text_problem(value)
        if problem:
            raise InputError(key, _escaped(value), problem)
    elif opening:
        return
    elif isinstance(value, float) and not math.isfinite(value):
        raise InputError(key, value, "must be a finite number to be saved")
    elif value is not None and not isinstance(value, (bool, int, float)):
        raise InputError(key, value, "cannot be saved in a scenario (a number, a text or a list of texts)")


_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_TOML_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}
_TOML_MUST_ESCAPE = re.compile('["\\\\\x00-\x1f\x7f-\x9f]')  # quote, backslash, C0, DEL, C1 (shown as escapes)


def _toml_string(text: str) -> str:
    """A TOML basic string: the quote, the backslash and control characters escaped (TOML allows no
    raw control character but tab; C1 controls are escaped too, so they are visible in the file)."""
    return '"' + _TOML_MUST_ESCAPE.sub(lambda m: _TOML_ESCAPES.get(m.group(), f"\\u{ord(m.group()):04X}"), text) + '"'


def _toml_key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else _toml_string(key)


def _toml_value(key: str, v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        if not -2**63 <= v < 2**63:
            raise InputError(key, v, "is too large to be saved as TOML (a whole number from -2^63 to 2^63-1); save as JSON")
        return str(v)
    if isinstance(v, float):
        if not math.isfinite(v):
            raise InputError(key, v, "must be a finite number to be saved")
        return repr(v)
    if isinstance(v, str):
        return _toml_string(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(key, x) for x in v) + "]"
    raise InputError(key, v, "cannot be saved as TOML (a number, a text, a yes/no value or a list of these)")


def write_scenario(path: str | os.PathLike, data: Mapping) -> Path:
    """Write a scenario (TOML for a .toml path, JSON otherwise) atomically: the old file stays
    whole until the new one is complete (temporary file in the same folder, then rename)."""
    target = Path(path)
    text = scenario_text(data, toml=target.suffix.lower() == ".toml")
    problem = target_problem(target, "a file name ending in .json or .toml")
    if problem:
        raise InputError("scenario", _escaped(str(path)), f"cannot be written: {problem}")
    try:
        write_atomically(target, text.encode("utf-8"))
    except OSError as err:
        raise InputError("scenario", _escaped(str(path)), f"cannot be written ({err.strerror or err})") from None
    return target
