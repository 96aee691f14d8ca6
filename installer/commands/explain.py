"""``gpu-tco explain``: a quantity's formula, Excel formula, source and inputs."""
from __future__ import annotations

import json

from .common import _collect_inputs, _fmt, _jsonable


def cmd_explain(ns) -> int:
    from ..core import explain

    info = explain(ns.quantity, _collect_inputs(ns))
    if ns.json:
        print(json.dumps({k: ([list(map(_jsonable, x)) for x in v] if k == "inputs" else _jsonable(v)) for k, v in info.items()}, indent=2))
        return 0
    print(f"{info['name']} = {_fmt(_jsonable(info['value']))} {info['unit']}")
    print(f"  {info['description']}")
    print(f"  formula: {info['formula']}")
    print(f"  Excel:   {info['excel']}")
    if info["source"]:
        print(f"  source:  {info['source']}")
    print("  from:")
    for name, value, unit in info["inputs"]:
        label = {"catalog": "(catalog)", "-": ""}.get(unit, unit)
        print(f"    {name} = {_fmt(_jsonable(value))} {label}".rstrip())
    return 0
