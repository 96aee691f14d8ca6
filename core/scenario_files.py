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
from pathlib import Path
from typing import Mapping

from .errors import InputError
from .files import write_atomically
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
        with open(p, "rb") as fh:
            raw = fh.read(MAX_SCENARIO_BYTES + 1)
    except OSError as err:
        raise InputError("scenario", str(path), f"cannot be read ({err.strerror or err})") from None
    if len(raw) > MAX_SCENARIO_BYTES:
        raise InputError("scenario", str(path), f"is larger than {MAX_SCENARIO_BYTES // 2**20} MB; a scenario names a few inputs")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise InputError("scenario", str(path), f"is not UTF-8 text (byte {err.start}); save it as UTF-8") from None
    kind = "TOML" if p.suffix.lower() == ".toml" else "JSON"
    try:
        if kind == "TOML":
            import tomllib
            data = tomllib.loads(text)
        else:
            data = json.loads(text)
    except RecursionError:
        raise InputError("scenario", str(path), f"is nested too deeply to be a scenario ({kind})") from None
    except ValueError as err:
        raise InputError("scenario", str(path), f"is not valid {kind} ({str(err)[:120]})") from None
    if not isinstance(data, dict):
        raise InputError("scenario", str(path), "must hold a table/object of input names and values")
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
    """A scenario as JSON (default) or TOML text; inputs in the order given."""
    if not toml:
        return json.dumps(dict(data), indent=2, ensure_ascii=False) + "\n"
    plain = [(k, v) for k, v in data.items() if not isinstance(v, Mapping)]
    tables = [(k, v) for k, v in data.items() if isinstance(v, Mapping)]
    lines = ["# gpu-tco scenario: input names as in docs/quantities.md; anything left out keeps its default."]
    lines += [f"{k} = {_toml_value(k, v)}" for k, v in plain]
    for k, table in tables:  # a custom architecture: [model]
        lines += ["", f"[{k}]"] + [f"{kk} = {_toml_value(f'{k}.{kk}', vv)}" for kk, vv in table.items()]
    return "\n".join(lines) + "\n"


def _toml_value(key: str, v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if not math.isfinite(v):
            raise InputError(key, v, "must be a finite number to be saved")
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)  # a JSON string is a valid TOML basic string
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(key, x) for x in v) + "]"
    raise InputError(key, v, "cannot be saved in a scenario (a number, a text or a list of texts)")


def write_scenario(path: str | os.PathLike, data: Mapping) -> Path:
    """Write a scenario (TOML for a .toml path, JSON otherwise) atomically: the old file stays
    whole until the new one is complete (temporary file in the same folder, then rename)."""
    target = Path(path)
    text = scenario_text(data, toml=target.suffix.lower() == ".toml")
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise InputError("scenario", str(path), "cannot be written: the folder does not exist")
    try:
        write_atomically(target, text.encode("utf-8"))
    except OSError as err:
        raise InputError("scenario", str(path), f"cannot be written ({err.strerror or err})") from None
    return target
