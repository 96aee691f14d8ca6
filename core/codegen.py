"""Code generation: the quantities' expression trees compiled into straight-line Python.

One function per (scalar or vector, set of outputs): inputs are read once, the catalog
fields the formulas use are bound once per looked-up row, subtrees that several formulas
spell out alike are computed once into temporaries, then one assignment per quantity.
Quantities of one catalog row alone (a model's parameter counts) are computed once per row
by a function generated from the same trees and unpacked with the row's fields.  The scalar
function works on floats (MIN/MAX as conditional expressions), the vector one on NumPy arrays;
both come from the same trees as the Excel formulas (``expr.Expr.xl``), so they cannot disagree.
"""
from __future__ import annotations

import functools
import itertools
import math
import re
from dataclasses import dataclass
from typing import Callable, NamedTuple

import numpy as np

from .expr import Call, Const, Lookup, Ref
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


def _vif(condition, a, b):
    """np.where(condition, a, b), except when the condition is one value for the whole block: then
    the chosen branch itself, in np.where's type, without the element-wise select.  A branch that
    is one value stays one value (its rows all equal it), so what is computed from it downstream
    costs scalar arithmetic, and an output made of it costs no memory (engine broadcasts it)."""
    if np.ndim(condition) == 0:
        chosen, other = (a, b) if condition else (b, a)
        dtype = np.result_type(a, b)
        if np.ndim(chosen) == 0:
            return np.asarray(chosen, dtype=dtype)
        if chosen.dtype == dtype and (np.ndim(other) == 0 or other.shape == chosen.shape):
            return chosen
    return np.where(condition, a, b)


RUNTIME = {
    "_mceil": math.ceil, "_mfloor": math.floor, "_sqrt": math.sqrt, "_vceil": _vceil, "_vfloor": _vfloor,
    "_np": np, "_vmin": _vmin, "_vmax": _vmax, "_vand": _vand, "_vor": _vor, "_vif": _vif,
}


_SIMPLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9.]+")
_TEMP_IDS = itertools.count()  # names of the scalar code's MIN/MAX operands, unique in any function


def _min_max(fn: str, args: list[str]) -> str:
    """MIN/MAX as conditional expressions (a builtin call costs ~70 ns, a comparison ~15).  Same
    result as Python's min/max, NaN included: a later argument replaces the running value only
    when strictly smaller (MIN) or larger (MAX).  Operands that are expressions are bound once
    with := so none is computed twice."""
    op = ">" if fn == "MIN" else "<"

    def bind(code):
        if _SIMPLE.fullmatch(code):
            return code, code
        name = f"_m{next(_TEMP_IDS)}"
        return f"({name} := {code})", name

    first, acc = bind(args[0])
    for i, code in enumerate(args[1:], 2):
        bound, name = bind(code)
        first = f"({name} if {first} {op} {bound} else {acc})"
        if i < len(args):  # the running value is compared again
            first, acc = bind(first)
    return first


class RowDerived(NamedTuple):
    """The quantities of one catalog row alone (``row_derived``) for one table."""

    fields: tuple[str, ...]  # the raw catalog fields they read, in ``fn``'s argument order
    names: tuple[str, ...]   # the quantities, in ``fn``'s result order
    fn: Callable             # fn(*raw fields of a row) -> their values
    key: str                 # the choice input that names the row


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
    derived: dict[str, RowDerived]          # table -> its row-derived quantities

    @functools.cached_property
    def adhoc_keys(self) -> tuple[tuple[str, str], ...]:
        """(``<choice>__adhoc``, table) per looked-up table whose row may come from outside the catalog
        (a model given as a parameter count or as architecture fields)."""
        return tuple((key + "__adhoc", table) for table, key in self.row_keys.items()
                     if BY_NAME[key].accepts_number)

    def table_rows(self, table: str, column) -> list[tuple]:
        """The rows of ``table`` as the scalar code unpacks them: ``column(field)`` gives a raw
        catalog column (a sequence); quantities derived from the row alone are appended."""
        return list(zip(*self.table_columns(table, column).values()))

    def table_columns(self, table: str, column) -> dict[str, list]:
        """Every entry of ``row_fields[table]`` as a list over the rows: raw fields from
        ``column(field)``, row-derived quantities computed once per row."""
        derived = self.derived.get(table)
        cols = {f: list(column(f)) for f in self.row_fields[table] if not derived or f not in derived.names}
        if derived:
            per_row = [_derive_row(derived, raw) for raw in zip(*(column(f) for f in derived.fields))]
            for i, name in enumerate(derived.names):
                cols[name] = [r[i] for r in per_row]
        return {f: cols[f] for f in self.row_fields[table]}


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


def _derive_row(derived: RowDerived, raw) -> tuple:
    try:
        return derived.fn(*raw)
    except (ZeroDivisionError, ValueError, OverflowError):  # NaN, as the vector code gives
        return (math.nan,) * len(derived.names)


def row_derived(names) -> dict[str, str]:
    """Quantities among ``names`` that depend on one catalog row alone (no input, one table): the
    architecture block of a model, for instance.  Computed once per catalog row, not per call.
    Returns quantity -> table."""
    table_of: dict[str, str] = {}
    for name in names:  # definition order: a quantity's ancestors come first
        tables = set()
        for node in QUANTITIES[name].expr.walk():
            if isinstance(node, Lookup):
                tables.add(node.table)
            elif isinstance(node, Ref):
                tables.add(table_of.get(node.name, "<input>"))
        if len(tables) == 1 and "<input>" not in tables:
            table_of[name] = tables.pop()
    return table_of


# Operations that can raise on Python floats (x / 0, 0 ** -1, sqrt(-1), ceil(inf)).  In scalar code
# a temporary is computed before its quantity's line, outside any IF that guards it; so distinct
# but equal subtrees holding one of these are not merged there (the vector code ignores errors).
_RAISING_OPS = {"/", "^", "SQRT", "CEILING", "FLOOR"}


def _structure(node, vector: bool, memo: dict):
    """A key equal for subtrees that compute the same thing (same operations on the same names
    and constants), so each is computed once however many formulas spell it out."""
    key = memo.get(id(node))
    if key is None:
        if isinstance(node, Const):
            key = ("const", type(node.value).__name__, node.value)
        elif isinstance(node, Ref):
            key = ("ref", node.name)
        elif isinstance(node, Lookup):
            key = ("lookup", node.table, node.key, node.field)
        else:
            op = getattr(node, "op", None) or getattr(node, "fn", None)
            children = tuple(_structure(c, vector, memo) for c in node.children())
            unsafe = op in _RAISING_OPS or any(c[0] == "id" for c in children)
            key = ("id", id(node)) if unsafe and not vector else (type(node).__name__, op, children)
        memo[id(node)] = key
    return key


def _shared_subtrees(names, vector: bool) -> tuple[dict, dict]:
    """Non-trivial subtrees computed more than once: (node id -> structure key, key -> count>1)."""
    memo: dict = {}
    seen: dict = {}
    visited: set[int] = set()

    def visit(node):
        if isinstance(node, (Const, Ref, Lookup)):
            return
        key = _structure(node, vector, memo)
        seen[key] = seen.get(key, 0) + 1
        if id(node) not in visited:
            visited.add(id(node))
            if seen[key] == 1:  # the children of a repeat are computed inside its temporary
                for child in node.children():
                    visit(child)

    for name in names:
        visit(QUANTITIES[name].expr)
    return memo, {k for k, n in seen.items() if n > 1}


def _body(names, vector: bool, fields: dict, skip=frozenset()) -> list[str]:
    """Assignments computing ``names`` in order; catalog fields used are recorded in ``fields``
    (variable -> Lookup).  Names in ``skip`` are bound elsewhere (unpacked from a row)."""
    memo, shared = _shared_subtrees([n for n in names if n not in skip], vector)
    temps: dict = {}
    body: list[str] = []

    def render(node) -> str:
        # shared subtrees become temporaries, defined just before their first use
        if isinstance(node, Lookup):
            fields.setdefault(node.var(), node)
            return node.var()
        key = memo.get(id(node))
        if key in shared:
            if key not in temps:
                code = own(node)  # may allocate inner temporaries first
                temps[key] = f"_t{len(temps)}"
                body.append(f"    {temps[key]} = {code}")
            return temps[key]
        return own(node)

    def own(node) -> str:
        if not vector and isinstance(node, Call) and node.fn in ("MIN", "MAX"):
            return _min_max(node.fn, [render(a) for a in node.args])
        return node.render_with(render, vector)

    for name in names:
        if name not in skip:
            body.append(f"    {name} = {render(QUANTITIES[name].expr)}")
    return body


def _compile(source: str, label: str, name: str):
    namespace = dict(RUNTIME)
    exec(compile(source, label, "exec"), namespace)  # noqa: S102 - code generated from our own expression trees
    return namespace[name]


@functools.lru_cache(maxsize=64)
def compile_formulas(vector: bool, outputs: tuple[str, ...] | None = None) -> Compiled:
    """Generate and compile the code for ``outputs`` (all quantities when None).

    Quantities that depend on one catalog row alone (``row_derived``) are computed by a scalar
    function once per row and unpacked with the row's fields, like a field."""
    outputs = QUANTITY_NAMES if outputs is None else tuple(outputs)
    names = ancestors(outputs)
    table_of = row_derived(names)

    derived: dict[str, RowDerived] = {}
    for table in dict.fromkeys(table_of.values()):
        mine = [n for n in names if table_of.get(n) == table]
        raw: dict[str, Lookup] = {}
        body = _body(mine, False, raw)
        src = "\n".join([f"def _derive({', '.join(raw)}):"] + body + [f"    return ({', '.join(mine)},)"]) + "\n"
        fn = _compile(src, f"<gpu-tco formulas of one {table} row>", "_derive")
        derived[table] = RowDerived(tuple(lk.field for lk in raw.values()), tuple(mine), fn,
                                    next(iter(raw.values())).key)

    fields: dict[str, Lookup] = {}
    body = _body(names, vector, fields, skip=table_of.keys())
    used_inputs: dict[str, None] = {}
    for name in names:
        if name not in table_of:
            for node in QUANTITIES[name].expr.walk():
                if isinstance(node, Ref) and node.name in BY_NAME:
                    used_inputs.setdefault(node.name)

    # per table: the fields the code unpacks, then the row-derived quantities it uses
    row_fields: dict[str, list[str]] = {}
    row_keys: dict[str, str] = {}
    by_row: dict[str, list[str]] = {}
    entries = [(var, lk.table, lk.key, lk.field) for var, lk in fields.items()]
    unpacked = set(outputs)  # row-derived quantities the code needs: requested, or used by the rest
    for name in names:
        if name not in table_of:
            unpacked.update(n.name for n in QUANTITIES[name].expr.walk() if isinstance(n, Ref))
    entries += [(name, table_of[name], derived[table_of[name]].key, name) for name in names
                if name in table_of and name in unpacked]
    for var, table, key, field in entries:
        if row_keys.setdefault(table, key) != key:
            raise ValueError(f"catalog {table} is looked up by two inputs ({row_keys[table]}, {key})")
        row_fields.setdefault(table, []).append(field)
        by_row.setdefault(table, []).append(var)

    head = ["def _run(I, C):"]
    head += [f"    {name} = I[{name!r}]" for name in used_inputs]
    head += [f"    {key}__row = I[{key + '__row'!r}]" for key in dict.fromkeys(row_keys.values())]
    if vector:
        head += [f"    {var} = C[{table + '.' + field!r}][{key}__row]" for var, table, key, field in entries]
    else:
        # one subscript per catalog row, unpacked into every field the formulas use
        head += [f"    ({', '.join(vars_)},) = C[{table!r}][{row_keys[table]}__row]" for table, vars_ in by_row.items()]
    # a tuple: evaluate() copies a prebuilt dict of the names and fills it, which is faster than a
    # dict display of ~170 entries (measured: 8 against 15 microseconds)
    tail = [f"    return ({', '.join(outputs)},)"]
    source = "\n".join(head + body + tail) + "\n"
    label = f"<gpu-tco {'vector' if vector else 'scalar'} formulas, {len(outputs)} outputs>"
    return Compiled(_compile(source, label, "_run"), source, outputs, tuple(used_inputs),
                    {t: tuple(f) for t, f in row_fields.items()}, row_keys, dict.fromkeys(outputs), derived)


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
