"""Code generation: the quantities' expression trees compiled into straight-line Python.

One function per (scalar or vector, set of outputs): inputs are read once, the catalog
fields the formulas use are bound once per looked-up row, shared subtrees are computed
once into temporaries, then one assignment per quantity.  The scalar function works on
floats, the vector one on NumPy arrays; both come from the same trees as the Excel
formulas (``expr.Expr.xl``), so they cannot disagree.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from .expr import Const, Expr, Lookup, Ref
from .formulas import QUANTITIES
from .inputs import BY_NAME, INPUTS

QUANTITY_NAMES: tuple[str, ...] = tuple(QUANTITIES)
CHOICE_INPUTS = tuple(i.name for i in INPUTS if i.kind == "choice")


def _vmin(*args):
    return functools.reduce(np.minimum, args)


def _vmax(*args):
    return functools.reduce(np.maximum, args)


def _vand(*args):
    return functools.reduce(np.logical_and, args)


def _vor(*args):
    return functools.reduce(np.logical_or, args)


# Rounding to whole counts (GPUs, instances, billed seconds) first nudges the argument by one
# part in 1e12 towards the integer below (ceil) or above (floor).  Without it binary noise
# decides: 0.56 h x 3600 is 2016.0000000000002 s, which Python rounds up to 2017 while Excel
# and LibreOffice snap it to 2016; with it every engine gives 2016.  No real count or duration
# is within 1e-12 of a whole number above it.  The formulas and their Excel text stay plain.
_DOWN, _UP = 0.999999999999, 1.000000000001  # also inlined by expr.Call for scalar code


def _vceil(x):
    return np.ceil(x * _DOWN)


def _vfloor(x):
    return np.floor(x * _UP)


RUNTIME = {
    "_mceil": math.ceil, "_mfloor": math.floor, "_sqrt": math.sqrt, "_vceil": _vceil, "_vfloor": _vfloor,
    "_np": np, "_vmin": _vmin, "_vmax": _vmax, "_vand": _vand, "_vor": _vor, "_vif": np.where,
}


@dataclass(frozen=True)
class Compiled:
    """A generated function and what it needs.

    ``fn(I, C)``: ``I`` maps input names (and ``<choice>__row``) to values; ``C`` maps, in the
    scalar form, a table to its rows as tuples of ``row_fields[table]``, and in the vector form
    ``"table.field"`` to a NumPy column.  Returns a tuple in ``outputs`` order.
    """

    fn: Callable
    source: str
    outputs: tuple[str, ...]
    inputs: tuple[str, ...]
    row_fields: dict[str, tuple[str, ...]]  # table -> fields of the looked-up row, in unpacking order
    row_keys: dict[str, str]                # table -> the choice input that names its row
    template: dict                          # the outputs as keys: a scalar result is a copy of it, filled


def ancestors(outputs) -> list[str]:
    """The quantities ``outputs`` need (themselves included), in definition order."""
    needed: set[str] = set()
    stack = list(outputs)
    while stack:
        name = stack.pop()
        if name in needed:
            continue
        needed.add(name)
        for node in QUANTITIES[name].expr.walk():
            if isinstance(node, Ref) and node.name in QUANTITIES and node.name not in needed:
                stack.append(node.name)
    return [n for n in QUANTITIES if n in needed]


def _shared_subtrees(names) -> dict[int, Expr]:
    """Non-trivial subtrees used more than once (same object): computed once into a temporary."""
    seen: dict[int, int] = {}
    nodes: dict[int, Expr] = {}

    def visit(node):
        if isinstance(node, (Const, Ref, Lookup)):
            return
        seen[id(node)] = seen.get(id(node), 0) + 1
        nodes[id(node)] = node
        if seen[id(node)] == 1:
            for child in node.children():
                visit(child)

    for name in names:
        visit(QUANTITIES[name].expr)
    return {i: nodes[i] for i, n in seen.items() if n > 1}


@functools.lru_cache(maxsize=64)
def compile_formulas(vector: bool, outputs: tuple[str, ...] | None = None) -> Compiled:
    """Generate and compile the code for ``outputs`` (all quantities when None)."""
    outputs = QUANTITY_NAMES if outputs is None else tuple(outputs)
    names = ancestors(outputs)
    used_inputs: dict[str, None] = {}
    fields: dict[str, Lookup] = {}
    shared = _shared_subtrees(names)
    temps: dict[int, str] = {}
    body: list[str] = []

    def render(node) -> str:
        # shared subtrees become temporaries, defined just before their first use
        if isinstance(node, Lookup):
            fields.setdefault(node.var(), node)
            return node.var()
        if id(node) in shared:
            if id(node) not in temps:
                code = node.render_with(render, vector)  # may allocate inner temporaries first
                temps[id(node)] = f"_t{len(temps)}"
                body.append(f"    {temps[id(node)]} = {code}")
            return temps[id(node)]
        return node.render_with(render, vector)

    for name in names:
        for node in QUANTITIES[name].expr.walk():
            if isinstance(node, Ref) and node.name in BY_NAME:
                used_inputs.setdefault(node.name)
        body.append(f"    {name} = {render(QUANTITIES[name].expr)}")

    row_fields: dict[str, list[str]] = {}
    row_keys: dict[str, str] = {}
    by_row: dict[str, list[str]] = {}
    for var, lk in fields.items():
        if row_keys.setdefault(lk.table, lk.key) != lk.key:
            raise ValueError(f"catalog {lk.table} is looked up by two inputs ({row_keys[lk.table]}, {lk.key})")
        row_fields.setdefault(lk.table, []).append(lk.field)
        by_row.setdefault(lk.table, []).append(var)

    head = ["def _run(I, C):"]
    head += [f"    {name} = I[{name!r}]" for name in used_inputs]
    head += [f"    {key}__row = I[{key + '__row'!r}]" for key in dict.fromkeys(row_keys.values())]
    if vector:
        head += [f"    {var} = C[{lk.table + '.' + lk.field!r}][{lk.key}__row]" for var, lk in fields.items()]
        tail = [f"    return ({', '.join(outputs)},)"]
    else:
        # one subscript per catalog row, unpacked into every field the formulas use
        head += [f"    ({', '.join(vars_)},) = C[{table!r}][{row_keys[table]}__row]" for table, vars_ in by_row.items()]
        # a tuple: evaluate() copies a prebuilt dict of the names and fills it, which is faster than a
        # dict display of ~170 entries (measured: 8 against 15 microseconds)
        tail = [f"    return ({', '.join(outputs)},)"]
    source = "\n".join(head + body + tail) + "\n"
    namespace = dict(RUNTIME)
    label = f"<gpu-tco {'vector' if vector else 'scalar'} formulas, {len(outputs)} outputs>"
    exec(compile(source, label, "exec"), namespace)  # noqa: S102 - code generated from our own expression trees
    return Compiled(namespace["_run"], source, outputs, tuple(used_inputs),
                    {t: tuple(f) for t, f in row_fields.items()}, row_keys, dict.fromkeys(outputs))


def inputs_of(outputs) -> list[str]:
    """The inputs (in declaration order) that ``outputs`` depend on, catalog keys included."""
    used: set[str] = set()
    for name in ancestors(outputs):
        for node in QUANTITIES[name].expr.walk():
            if isinstance(node, Ref) and node.name in BY_NAME:
                used.add(node.name)
            elif isinstance(node, Lookup):
                used.add(node.key)
    return [i.name for i in INPUTS if i.name in used]
