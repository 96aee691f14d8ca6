"""Code generation: the quantities' expression trees compiled into straight-line Python.

One function per (scalar or vector, set of outputs): inputs are read once, the catalog
fields the formulas use are bound once per looked-up row, subtrees that several formulas
spell out alike are computed once into temporaries, then one assignment per quantity.
Quantities of one catalog row alone (a model's parameter counts) are computed once per row
by a function generated from the same trees and unpacked with the row's fields.  The scalar
function works on floats (MIN/MAX as conditional expressions), the vector one on NumPy arrays,
generated for the inputs a sweep gives as arrays: what does not vary is computed once per call,
the rest per block of rows.  Both come from the same trees as the Excel formulas
(``expr.Expr.xl``), so they cannot disagree beyond rounding.

The walks over the trees (what a quantity reads, what depends on an input, which subtrees are alike)
are here too, in one section: the generator is their main user.
"""
from __future__ import annotations

import copy
import functools
import itertools
import marshal
import math
import operator
import re
from dataclasses import dataclass
from typing import Callable, NamedTuple

import numpy as np

from . import codecache
from .expr import BinOp, Call, Cmp, Const, Expr, Lookup, Neg, Ref, vector_function
from .formulas import QUANTITIES
from .inputs import BY_NAME, INPUTS

QUANTITY_NAMES: tuple[str, ...] = tuple(QUANTITIES)
CHOICE_INPUTS = tuple(i.name for i in INPUTS if i.kind == "choice")


def _reduce(ufunc, args, out):
    """ufunc over the arguments left to right; the last step writes into ``out`` when given."""
    if len(args) == 1:
        return args[0]
    return ufunc(functools.reduce(ufunc, args[:-1]), args[-1], out=out)


def _vmin(*args, out=None):
    return _reduce(np.minimum, args, out)


def _vmax(*args, out=None):
    return _reduce(np.maximum, args, out)


def _vand(*args, out=None):
    return _reduce(np.logical_and, args, out)


def _vor(*args, out=None):
    return _reduce(np.logical_or, args, out)


# Rounding to whole counts (GPUs, instances, billed seconds) first nudges the argument by one
# part in 1e12 towards the integer below (ceil) or above (floor).  Without it binary noise
# decides: 0.56 h x 3600 is 2016.0000000000002 s, which Python rounds up to 2017 while Excel
# and LibreOffice snap it to 2016; with it every engine gives 2016.  No real count or duration
# is within 1e-12 of a whole number above it.  The formulas and their Excel text stay plain.
_DOWN, _UP = 0.999999999999, 1.000000000001  # also inlined by expr.Call for scalar code


def _vceil(x, out=None):
    return np.ceil(x * _DOWN, out=out)


def _vfloor(x, out=None):
    return np.floor(x * _UP, out=out)


_SAME_TYPE_SCALARS = (np.float64, np.bool_, np.int64)


def _vif(condition, a, b):
    """np.where(condition, a, b), except when the condition is one value for the whole block: then
    the chosen branch itself, in np.where's type, without the element-wise select.  A branch that
    is one value stays one value (its rows all equal it), so what is computed from it downstream
    costs scalar arithmetic, and an output made of it costs no memory (engine broadcasts it)."""
    if not (isinstance(condition, np.ndarray) and condition.ndim):  # np.ndim(condition) == 0, without its dispatch
        chosen, other = (a, b) if condition else (b, a)
        if type(a) is type(b) and type(a) in _SAME_TYPE_SCALARS:  # np.where's type is theirs: no promotion to work out
            return chosen
        dtype = np.result_type(a, b)
        if np.ndim(chosen) == 0:
            return np.asarray(chosen, dtype=dtype)
        if chosen.dtype == dtype and (np.ndim(other) == 0 or other.shape == chosen.shape):
            return chosen
    return np.where(condition, a, b)


def _lif(seen: list, k: int, condition, a, b):
    """IF in the per-row code of a sweep whose condition is one value for the whole sweep: the branch it takes alone,
    in the type ``_vif`` gives.  ``a`` and ``b`` compute the branches (functions of no argument).  In the first block
    both run, as ``_vif`` runs them, and ``seen[k]`` notes how its result relates to the branch taken: that branch
    itself (True), or that branch in a wider type (the NumPy type, ``np.where``'s promotion).  Every later block of
    the sweep computes the branch taken alone (the types of a block's values are those of every block)."""
    how = seen[k]
    if how is None:
        av, bv = a(), b()
        result = _vif(condition, av, bv)
        seen[k] = True if result is (av if condition else bv) else np.result_type(av, bv)
        return result
    chosen = a() if condition else b()
    if how is True:
        return chosen
    return np.asarray(chosen, dtype=how) if np.ndim(chosen) == 0 else chosen.astype(how)


def _factor(x):
    """A gathered product of whole-number factors in a form NumPy combines with an int64 array:
    a Python int beyond 64 bits would raise OverflowError there, so it becomes a float."""
    return float(x) if type(x) is int and not -2**63 <= x < 2**63 else x


def _switch_state(st: list, lv: tuple, vk: tuple, parks: dict, last: int, parkable: tuple, weights: tuple):
    """The state ``_staged`` starts from (``_staged_lines``): the last call's ``st`` (its swept values ``lv``), or a
    state parked when an earlier call moved away from this call's value of a swept input that reaches many quantities
    (a planner's loop over GPU counts returns to the counts it left).  The parked one is taken when the quantities of
    the swept inputs it differs in (``weights``: per swept input, the quantities of the stages that read it) are fewer
    than those of the input that changed since the last call; the last state is then returned too, with the key to
    park it under (the caller reads the stages it holds that the parked one does not, then parks it).  Where no state
    is parked for this value, a copy of the last is, for the call that comes back to that value.  Every state is a
    call's whole state (kept results by stage, and the result they make), so the code continues from either alike; at
    most ``PARKED_KEPT`` are kept.  Returns (state, its swept values, the last state or None, its key)."""
    for j in parkable:  # (the caller found one changed)
        if vk[j] != lv[j]:
            break
    base = parks.pop((j, vk[j]), None)
    if base is None:
        if len(parks) >= PARKED_KEPT:
            parks.clear()
        kept = st.copy()
        kept[2] = st[2].copy()  # (the result is filled in place; the stage entries are not)
        parks[j, lv[j]] = kept
        return st, lv, None, None
    base_values = base[last]
    if sum(itertools.compress(weights, map(operator.ne, vk, base_values))) < weights[j]:  # (the last call's: at least)
        return base, base_values, st, (j, lv[j])  # the last state, parked by the caller once it read what it needs
    parks[j, vk[j]] = base
    return st, lv, None, None


RUNTIME = {
    "_mceil": math.ceil, "_mfloor": math.floor, "_sqrt": math.sqrt, "_ln": math.log, "_vceil": _vceil, "_vfloor": _vfloor,
    "_np": np, "_vmin": _vmin, "_vmax": _vmax, "_vand": _vand, "_vor": _vor, "_vif": _vif,
    "_lif": _lif, "_factor": _factor, "_nan": math.nan, "_itemgetter": operator.itemgetter, "_switch_state": _switch_state,
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

    ``I`` maps input names (and ``<choice>__row``) to values; ``C`` maps, in the scalar form, a
    table to its rows as tuples of ``row_fields[table]``, and in the vector form
    ``"table.field"`` to a NumPy column.  Scalar: ``fn(I, C, R)`` stores each output into ``R``
    (a copy of ``template``).  Vector: see ``compile_formulas``.
    """

    fn: Callable
    source: str
    outputs: tuple[str, ...]
    inputs: tuple[str, ...]
    row_fields: dict[str, tuple[str, ...]]  # table -> fields of the looked-up row, in unpacking order
    row_keys: dict[str, str]                # table -> the choice input that names its row
    template: dict                          # the outputs as keys: a scalar result is a copy of it, filled
    derived: dict[str, RowDerived]          # table -> its row-derived quantities
    staged_code: bytes | None = None        # the marshalled code of ``staged`` (None: this code is not staged)

    @functools.cached_property
    def staged(self) -> Callable:
        """The scalar code in stages (``_staged_lines``): staged(I, C, T, M, K) -> R, run beside ``fn`` (which it calls
        for values seen once); loaded on first use, so a process that evaluates once never loads it."""
        exec(marshal.loads(self.staged_code), self.fn.__globals__)  # noqa: S102 - code generated from our own trees
        return self.fn.__globals__["_staged"]

    @functools.cached_property
    def slow_key(self) -> Callable:
        """The key ``staged`` is passed: the values of the inputs (and catalog rows) it reads but does not sweep, and
        ``I["__tag"]``, as one tuple from ``I``."""
        return self.staged.__globals__["_igs"]  # defined beside ``_staged``, in the namespace it was loaded into

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


def _derive_row(derived: RowDerived, raw) -> tuple:
    try:
        return derived.fn(*raw)
    except (ZeroDivisionError, ValueError, OverflowError):  # NaN, as the vector code gives
        return (math.nan,) * len(derived.names)


# --- walks over the expression trees: what reads what, and which subtrees are alike ----------------------------
# (Expr.walk and Expr.children, in core.expr, are the trees' own structure; every analysis over them is here.)

def refs(expr: Expr) -> list[str]:
    """Names (inputs or quantities) an expression reads directly, in order."""
    return list(_refs(expr))


@functools.lru_cache(maxsize=None)
def _refs(expr: Expr) -> tuple[str, ...]:
    # Once per tree: trees never change once built and hash by identity, and the command line's options, the
    # catalogs' price sets and the fit rules walk every quantity's tree again at each start (about 0.1 s).
    seen: dict[str, None] = {}
    for node in expr.walk():
        if isinstance(node, Ref):
            seen.setdefault(node.name)
        elif isinstance(node, Lookup):
            seen.setdefault(node.key)
    return tuple(seen)


def lookups(expr: Expr) -> list[Lookup]:
    """The catalog lookups an expression makes, in order."""
    return [n for n in expr.walk() if isinstance(n, Lookup)]


def ancestors(outputs, task: str | None = None) -> list[str]:
    """The quantities ``outputs`` need (themselves included), in definition order.  With ``task`` ("train" or
    "serve"), a branch the task never takes is not followed (``_reads``): what a training answer shows does not
    need the serving demand that sizes an owned serving deployment."""
    needed: set[str] = set()
    stack = list(outputs)
    while stack:
        name = stack.pop()
        if name in needed:
            continue
        needed.add(name)
        for node in _leaves(QUANTITIES[name].expr, task):
            if isinstance(node, Ref) and node.name in QUANTITIES and node.name not in needed:
                stack.append(node.name)
    return [n for n in QUANTITIES if n in needed]


def _task_flag(expr: Expr, task: str | None) -> bool | None:
    """The value of a condition that only the task decides (the tasks catalog's ``serve`` flag, and AND/OR/NOT of
    it), else None."""
    if task is None:
        return None
    if isinstance(expr, Lookup) and expr.table == "tasks" and expr.key == "task" and expr.field == "serve":
        return task == "serve"
    if isinstance(expr, Call) and expr.fn in ("AND", "OR", "NOT"):
        known = [_task_flag(a, task) for a in expr.args]
        if expr.fn == "NOT":
            return None if known[0] is None else not known[0]
        if expr.fn == "AND" and False in known or expr.fn == "OR" and True in known:
            return expr.fn == "OR"
    return None


def _reads(expr: Expr, task: str | None):
    """Every node of ``expr``, leaving out the branch of an IF that ``task`` never takes."""
    yield expr
    if isinstance(expr, Call) and expr.fn == "IF":
        known = _task_flag(expr.args[0], task)
        if known is not None:
            yield from _reads(expr.args[1] if known else expr.args[2], task)
            return
    for child in expr.children():
        yield from _reads(child, task)


@functools.lru_cache(maxsize=None)
def _leaves(expr: Expr, task: str | None) -> tuple[Ref | Lookup, ...]:
    """The names and catalog lookups among ``_reads(expr, task)``, in the same order: every walk below reads only
    these, and they are found once per tree and task (trees never change once built and hash by identity), where
    walking whole trees again and again took about 0.15 s of each command-line start."""
    return tuple(node for node in _reads(expr, task) if isinstance(node, (Ref, Lookup)))


def depending_on(inputs) -> list[str]:
    """Quantities whose value changes with any of ``inputs`` (directly or through other
    quantities), in definition order, so each is computed after what it reads.

    The workbook recomputes exactly these per option (gpu, n_gpus, offer, buy) and per
    break-even month (at_month); everything else stays a single shared cell.
    """
    changed = set(inputs)
    out = []
    for name, qty in QUANTITIES.items():
        if changed.intersection(refs(qty.expr)):
            changed.add(name)
            out.append(name)
    return out


def inputs_of(outputs, task: str | None = "train") -> list[str]:
    """The inputs (in declaration order) that ``outputs`` depend on, catalog keys included, for a job of ``task``
    (default "train": a serving output reads its demand directly, so the serving doors need no other; None: every
    branch).  Kept in the code cache: the command line asks for every command's inputs at each start."""
    return list(_inputs_of_kept(tuple(outputs), task))


@functools.lru_cache(maxsize=64)
def _inputs_of_kept(outputs: tuple[str, ...], task: str | None) -> tuple[str, ...]:
    return tuple(codecache.remembered(("inputs_of", outputs, task), lambda: _inputs_of(outputs, task)))


def _inputs_of(outputs: tuple[str, ...], task: str | None) -> list[str]:
    used: set[str] = set()
    for name in ancestors(outputs, task):
        for node in _leaves(QUANTITIES[name].expr, task):
            if isinstance(node, Ref) and node.name in BY_NAME:
                used.add(node.name)
            elif isinstance(node, Lookup):
                used.add(node.key)
    return [i.name for i in INPUTS if i.name in used]


def _inputs_read(names, table_of: dict, task: str | None = None) -> dict[str, None]:
    """The inputs the formulas of ``names`` read by name (those computed per catalog row excepted), in first-use order;
    with ``task``, leaving out the branches that task never takes."""
    used: dict[str, None] = {}
    for name in names:
        if name not in table_of:
            for node in _leaves(QUANTITIES[name].expr, task):
                if isinstance(node, Ref) and node.name in BY_NAME:
                    used.setdefault(node.name)
    return used


def _quantities_read(names, task: str | None = None) -> set[str]:
    """Every name (quantity or input) the formulas of ``names`` read (with ``task``: in the branches it takes)."""
    return {n.name for name in names for n in _leaves(QUANTITIES[name].expr, task) if isinstance(n, Ref)}


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


# Per node, its structure key (``_structure``), for the scalar code and the vector code: trees never change once built,
# so every function generated in a process reads the keys its trees got the first time.  Keyed by the node itself
# (nodes hash by identity), which also keeps a node built for a moment alive, so no later node takes its id.
_STRUCTURES: dict[bool, dict] = {False: {}, True: {}}


def _structure(node, vector: bool, memo: dict):
    """A key equal for subtrees that compute the same thing (same operations on the same names
    and constants), so each is computed once however many formulas spell it out."""
    key = memo.get(node)
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
        memo[node] = key
    return key


def _taken_branch(node, task: str | None):
    """The branch an IF on the task flag takes for ``task`` (the scalar code is generated per task), else None."""
    if task is not None and isinstance(node, Call) and node.fn == "IF":
        known = _task_flag(node.args[0], task)
        if known is not None:
            return node.args[1] if known else node.args[2]
    return None


def _shared_subtrees(names, vector: bool, task: str | None = None) -> tuple[dict, frozenset]:
    """Non-trivial subtrees computed more than once: (node -> structure key, the keys of those subtrees); with ``task``,
    in the branches that task takes.  Kept per set of quantities: the vector code of one set of outputs is generated
    for each set of inputs a sweep varies."""
    return _shared_subtrees_kept(tuple(names), vector, task)


@functools.lru_cache(maxsize=64)
def _shared_subtrees_kept(names: tuple[str, ...], vector: bool, task: str | None) -> tuple[dict, frozenset]:
    memo = _STRUCTURES[vector]
    seen: dict = {}
    visited: set[int] = set()

    def visit(node):
        if isinstance(node, (Const, Ref, Lookup)):
            return
        taken = _taken_branch(node, task)
        if taken is not None:
            return visit(taken)
        key = _structure(node, vector, memo)
        seen[key] = seen.get(key, 0) + 1
        if id(node) not in visited:
            visited.add(id(node))
            if seen[key] == 1:  # the children of a repeat are computed inside its temporary
                for child in node.children():
                    visit(child)

    for name in names:
        visit(QUANTITIES[name].expr)
    return memo, frozenset(k for k, n in seen.items() if n > 1)


# --- the generated code --------------------------------------------------------------------------------------
def _paren(code: str) -> str:
    return code if _SIMPLE.fullmatch(code) else f"({code})"


def _nodes(node, task: str | None):
    """Every node of ``node``'s tree as the code for ``task`` renders it (an IF on the task flag: its branch)."""
    stack = [node]
    while stack:
        n = stack.pop()
        taken = _taken_branch(n, task)
        if taken is not None:
            stack.append(taken)
            continue
        yield n
        if not isinstance(n, (Const, Ref, Lookup)):
            stack.extend(n.children())


def _operations(node, task: str | None) -> int:
    """The operations in ``node``'s tree (each node but constants, names and catalog fields)."""
    return sum(not isinstance(n, (Const, Ref, Lookup)) for n in _nodes(node, task))


class _Emitter:
    """Writes the assignments computing some quantities, in order, into two lists of lines: ``once`` and
    ``per_block``.  Catalog fields used are recorded in ``fields`` (variable -> Lookup).

    Without ``moving`` everything goes to per_block.  With ``moving`` (vector code only: the inputs whose
    values differ between rows; the quantities computed from them are added to it) what is one value for all
    rows goes to ``once``, computed once per call, and the rest to per_block, run per block of rows: there a
    subtree that does not vary is computed once too, and a chain of products and quotients gathers its factors
    that do not vary into one number first, so x * a / b / c costs one operation per row instead of three.
    Subtrees several formulas spell out alike become temporaries ``_t<n>``, defined just before their first use."""

    def __init__(self, names, vector: bool, fields: dict, skip=frozenset(), moving: set | None = None,
                 task: str | None = None, row_tables: dict | None = None, sharing: list[str] | None = None,
                 swept: bool = True):
        # ``sharing``: the quantities whose alike subtrees become temporaries (default: those computed here); code for
        # part of a sweep's quantities names all of them, so that its products gather their factors as the whole does
        shared_over = [n for n in names if n not in skip] if sharing is None else sharing
        self.memo, self.shared = _shared_subtrees(shared_over, vector, task)
        self.vector, self.fields, self.moving, self.skip, self.task = vector, fields, moving, skip, task
        # scalar code: subtrees that read one catalog row alone (fields of one table, quantities derived from that
        # row, constants) are computed once per catalog row and unpacked with its fields, like a field
        self.row_tables = row_tables  # row-derived quantity -> its table; None: no such hoisting
        self.hoisted: dict = {}       # structure key -> (variable, table, node)
        self._table_of_node: dict[int, str | None] = {}
        # scalar code: subtrees that may raise (x / y) and that several formulas spell out alike are not computed
        # ahead on a line of their own (an IF may guard them), but bound where they are first computed on every
        # path (outside the branches of IF, AND, OR): (_s3 := x / y); later uses read _s3
        names_computed = [n for n in names if n not in skip]
        self.inline_memo, self.inline_shared = _shared_subtrees(names_computed, True, task) if not vector else ({}, set())
        self.inline_temps: dict = {}
        # scalar code: a quantity no other formula reads goes into the result alone, with no name of its own
        self.read_later = _quantities_read(names_computed, task) if not vector else set()
        self.conditional = 0  # > 0 while rendering a branch that runs only on some paths
        self.lazy_ifs = 0     # vector code: IFs of the per-row code computing the branch taken alone (``_lif``)
        self.outputs_as_locals = False  # scalar code in stages: every quantity a local, collected per stage
        self.temps: dict = {}
        self.once: list[str] = []
        self.per_block: list[str] = []
        self._moves: dict[int, bool] = {}
        # scalar code: the inputs a spreadsheet or a planner sweeps (``STAGE_INPUTS``) and the quantities computed
        # from them.  A chain of products and quotients of a quantity that varies with them gathers its factors that
        # do not into one parenthesised factor, x * (a / (b * c)), in the plain code and in the staged code alike, so
        # that the staged code (``hoist_fixed``) computes that factor, and every other subtree of such a quantity that
        # reads none of them, once per configuration of the other inputs (its first stage) with the same result bits
        self.swept: set | None = set(STAGE_INPUTS) if swept and GATHER_FIXED and not vector else None
        self.hoist_fixed = False  # staged code: those subtrees go to ``once``, computed with the first stage
        self.in_varying = False   # rendering a quantity that varies with the swept inputs
        # staged code (``STAGE_HOIST``): per stage, the lines of subtrees of later stages' formulas computed with it
        # (``stage_temp``); None: not staged code
        self.stage_extra: list[list[str]] | None = None
        self.stage_keys: list[frozenset] = []      # per stage, its key's swept inputs
        self.quantity_stage: dict[str, int] = {}   # quantity -> its stage
        self.def_stage: dict[str, int] = {}        # temporary -> the stage whose lines define it
        self._swept_memo: dict[int, frozenset] = {}
        self.stage_index = 0                       # the stage being rendered

    def body(self, names, slots: dict | None = None) -> tuple[list[str], list[str]]:
        """(once, per_block) computing ``names`` (those in ``skip`` are bound elsewhere: unpacked from a row);
        ``slots``: output -> its index in the result (the scalar code stores it into ``R``, the vector code
        writes its last operation into ``O[index]``)."""
        slots = slots or {}
        for name in names:
            self.quantity(name, name in self.skip, slots)
        return self.once, self.per_block

    def quantity(self, name: str, skipped: bool, slots: dict) -> None:
        expr = QUANTITIES[name].expr
        moving = self.moving
        varying = moving if moving is not None else self.swept
        self.in_varying = varying is not None and self.varies(expr)
        if self.in_varying:
            varying.add(name)  # definition order: before any quantity that reads it is rendered
        if skipped:
            return
        if moving is None:  # scalar code: an output also goes straight into the result dict
            if name not in slots or self.outputs_as_locals:
                target = name
            else:
                target = f"R[{name!r}] = {name}" if name in self.read_later else f"R[{name!r}]"
            self.per_block.append(f"    {target} = {self.render(expr, False)}")
        elif name not in moving:
            self.once.append(f"    {name} = {self.render(expr, True)}")
        elif name in slots:
            self.per_block.append(f"    {name} = {self.into(expr, f'O[{slots[name]}]')}")
        else:
            self.per_block.append(f"    {name} = {self.render(expr, False)}")

    def varies(self, node) -> bool:
        """Whether ``node``'s value differs between the rows of a sweep (it reads a moving input)."""
        v = self._moves.get(id(node))
        if v is None:
            if isinstance(node, Const):
                v = False
            elif isinstance(node, Ref):
                v = node.name in (self.moving if self.moving is not None else self.swept)
            elif isinstance(node, Lookup):
                v = node.key in (self.moving if self.moving is not None else self.swept)
            elif _taken_branch(node, self.task) is not None:
                v = self.varies(_taken_branch(node, self.task))
            else:
                v = any(self.varies(c) for c in node.children())
            self._moves[id(node)] = v
        return v

    def temp(self, key, node, fixed: bool) -> str:
        """The temporary holding ``node`` (a shared subtree), defined at its first use."""
        if key is None:
            key = ("id", id(node))
        if key not in self.temps:
            saved, self.conditional = self.conditional, 0  # a line of its own runs on every path
            code = self.own(node, fixed)  # may allocate inner temporaries first
            self.conditional = saved
            self.temps[key] = f"_t{len(self.temps)}"
            (self.once if fixed else self.per_block).append(f"    {self.temps[key]} = {code}")
            if self.stage_extra is not None:
                self.def_stage[self.temps[key]] = 0 if fixed else self.stage_index
        return self.temps[key]

    def render(self, node, fixed: bool) -> str:
        """Code for ``node``; ``fixed``: rendering code that runs once per call (all its operands are one value)."""
        if isinstance(node, Lookup):
            self.fields.setdefault(node.var(), node)
            return node.var()
        if isinstance(node, (Const, Ref)):
            return node.render_with(None, self.vector)
        taken = _taken_branch(node, self.task)
        if taken is not None:  # an IF on the task flag, for code generated for one task: its branch alone
            return self.render(taken, fixed)
        if self.row_tables is not None:
            table = self.row_table(node)
            if table == "":  # constants alone: computed now, as the code would compute it on every call
                folded = _folded(node.render_with(lambda c: self.render(c, fixed), self.vector))
                if folded is not None:
                    return folded
            elif table is not None:
                return self.hoist(node, table)
        key = self.memo.get(node)
        if self.moving is not None and not fixed and not self.varies(node):
            return self.temp(key, node, True)  # one value for every row: computed once per call
        if self.hoist_fixed and self.in_varying and not fixed and not self.varies(node):
            return self.temp(key, node, True)  # one value while only swept inputs change: with the first stage
        if self.stage_extra is not None and self.in_varying and not fixed and not self.conditional:
            hoisted = self.stage_temp(node)
            if hoisted is not None:
                return hoisted
        if key in self.shared:
            if not self.vector and self.conditional and key[0] == "id":
                # one expression object read twice inside a branch (IF(x > 0, IF(y / x < z, y / x, -1), -1)): a
                # subtree that may raise is computed where its branch runs, never ahead on a line of its own
                return self.own(node, fixed)
            return self.temp(key, node, fixed)
        inline_key = self.inline_memo.get(node)
        if inline_key in self.inline_shared:
            if inline_key in self.inline_temps:
                return self.inline_temps[inline_key]
            code = self.own(node, fixed)
            if self.conditional:
                return code
            self.inline_temps[inline_key] = var = f"_s{len(self.inline_temps)}"
            if self.stage_extra is not None:
                self.def_stage[var] = self.stage_index
            return f"({var} := {code})"
        return self.own(node, fixed)

    def stage_temp(self, node) -> str | None:
        """Staged code: a subtree of a stage's formula whose swept inputs (its own and those of the stages of the
        quantities it reads) an earlier stage's key holds, computed with that stage into a temporary the later one
        reads (an export); None: computed where it is.  Only subtrees outside the branches of ``IF``, ``AND`` and
        ``OR`` (the caller's test), so the earlier stage computes nothing a call would not compute anyway, of at least
        ``STAGE_HOIST_MIN_OPS`` operations, and whose temporaries, if any exist already, are defined in that stage or
        before.  The same operations as in place: the same result bits."""
        target = self._earliest_stage(node)
        if target is None or target >= self.stage_index:
            return None
        key = ("stage", _structure(node, False, self.memo))
        name = self.temps.get(key)
        if name is not None:
            return name if self.def_stage.get(name, 0) <= self.stage_index else None
        if _operations(node, self.task) < STAGE_HOIST_MIN_OPS or not self._renders_in(node, target):
            return None
        saved = self.per_block, self.stage_index
        self.per_block, self.stage_index = self.stage_extra[target], target
        try:
            code = self.own(node, False)
        finally:
            self.per_block, self.stage_index = saved
        self.temps[key] = name = f"_t{len(self.temps)}"
        self.stage_extra[target].append(f"    {name} = {code}")
        self.def_stage[name] = target
        return name

    def _swept_of(self, node) -> frozenset:
        """The swept inputs ``node`` depends on, through a quantity: its stage's key."""
        found = self._swept_memo.get(id(node))
        if found is None:
            if isinstance(node, Const):
                found = frozenset()
            elif isinstance(node, Ref):
                found = (frozenset((node.name,)) if node.name in STAGE_INPUTS
                         else self.stage_keys[self.quantity_stage[node.name]] if node.name in self.quantity_stage
                         else frozenset())
            elif isinstance(node, Lookup):
                found = frozenset((node.key,)) if node.key in STAGE_INPUTS else frozenset()
            elif _taken_branch(node, self.task) is not None:
                found = self._swept_of(_taken_branch(node, self.task))
            else:
                found = frozenset().union(*(self._swept_of(c) for c in node.children()))
            self._swept_memo[id(node)] = found
        return found

    def _earliest_stage(self, node) -> int | None:
        need = self._swept_of(node)
        return next((i for i, key in enumerate(self.stage_keys) if need <= key), None) if need else None

    def _renders_in(self, node, stage: int) -> bool:
        """Whether every temporary ``node``'s code would read that exists already is defined in ``stage`` or before."""
        for n in _nodes(node, self.task):
            for name in (self.temps.get(self.memo.get(n)), self.temps.get(("id", id(n))),
                         self.inline_temps.get(self.inline_memo.get(n))):
                if name is not None and self.def_stage.get(name, 0) > stage:
                    return False
        return True

    def row_table(self, node) -> str | None:
        """The one catalog table ``node`` reads (its fields, quantities derived from its row), "" for constants
        alone, None when it reads an input or another quantity (or rows of several tables)."""
        if id(node) in self._table_of_node:
            return self._table_of_node[id(node)]
        if isinstance(node, Const):
            table = ""
        elif isinstance(node, Lookup):
            table = node.table
        elif isinstance(node, Ref):
            table = self.row_tables.get(node.name)
        else:
            tables = {self.row_table(c) for c in node.children()} - {""}
            table = None if None in tables or len(tables) > 1 else (tables.pop() if tables else "")
        self._table_of_node[id(node)] = table
        return table

    def hoist(self, node, table: str) -> str:
        """The variable holding ``node`` (one catalog row's value), computed once per row of ``table``."""
        key = _structure(node, True, _STRUCTURES[True])  # per row, each guarded on its own: alike is alike
        if key not in self.hoisted:
            self.hoisted[key] = (f"_h{len(self.hoisted)}", table, node)
        return self.hoisted[key][0]

    def own(self, node, fixed: bool) -> str:
        """Code for ``node`` itself (not through a temporary), its children rendered by ``render``."""
        if not self.vector and isinstance(node, Call) and node.fn in ("MIN", "MAX"):
            return _min_max(node.fn, [self.render(a, fixed) for a in node.args])
        if not self.vector and isinstance(node, Call) and node.fn in ("IF", "AND", "OR"):
            codes = []
            for i, arg in enumerate(node.args):  # all but the first (the condition) run on some paths only
                self.conditional += i > 0
                codes.append(self.render(arg, fixed))
                self.conditional -= i > 0
            rendered = iter(codes)
            return node.render_with(lambda _: next(rendered), self.vector)
        if self.vector and LAZY_IF and not fixed and isinstance(node, Call) and node.fn == "IF" \
                and not self.varies(node.args[0]):
            # per-row code, a condition computed once per call: the branch not taken is not computed (lambdas;
            # no name is bound with := inside them)
            condition = self.render(node.args[0], fixed)
            self.conditional += 1
            a, b = (self.render(arg, fixed) for arg in node.args[1:])
            self.conditional -= 1
            self.lazy_ifs += 1
            return f"_lif(_L, {self.lazy_ifs - 1}, {condition}, lambda: {a}, lambda: {b})"
        if (self.moving is not None or self.swept is not None) and not fixed and isinstance(node, BinOp) \
                and node.op in "*/" and self.varies(node):
            steps = self.regrouped(node)
            if steps is not None:
                return _chain(steps)
        return node.render_with(lambda c: self.render(c, fixed), self.vector)

    def into(self, node, slot: str) -> str:
        """Code for an output computed per block whose last operation writes into ``slot`` (the
        block's rows of the result array; None in the first block, which allocates), so the
        result is not copied afterwards.  An IF, a bare name or a shared subtree is copied."""
        render = self.render
        while _taken_branch(node, self.task) is not None:
            node = _taken_branch(node, self.task)
        if self.memo.get(node) in self.shared or not self.varies(node):
            return render(node, False)
        if isinstance(node, BinOp):
            steps = self.regrouped(node) if node.op in "*/" else None
            if steps is not None:
                *rest, (op, last) = steps
                return f"{_UFUNCS[op]}({_chain(rest)}, {last}, out={slot})"
            left, right = (render(c, False) for c in node.children())
            return f"{_UFUNCS[node.op]}({left}, {right}, out={slot})"
        if isinstance(node, Cmp):
            return f"{_UFUNCS[node.op]}({render(node.a, False)}, {render(node.b, False)}, out={slot})"
        if isinstance(node, Neg):
            return f"_np.negative({render(node.a, False)}, out={slot})"
        if isinstance(node, Call) and node.fn != "IF":  # IF: np.where, which takes no out
            args = ", ".join(render(a, False) for a in node.args)
            return f"{vector_function(node.fn)}({args}, out={slot})"
        return render(node, False)

    def regrouped(self, node) -> list[tuple[str, str]] | None:
        """x * a / b / c with a, b, c one value for all rows: x * _t where _t = a / (b * c) once
        per call.  Returns the steps [("", first), ("*" or "/", operand), ...], or None.  Scalar code: the factors
        that do not vary with the swept inputs, x * (a / (b * c)), rendered in place, or (``hoist_fixed``) as a
        temporary computed with the first stage: the same operations either way, so the same result bits."""
        num, den = self._factors(node)
        fixed_num = [n for n in num if not self.varies(n)]
        fixed_den = [n for n in den if not self.varies(n)]
        if len(fixed_num) + len(fixed_den) < 2:
            return None  # nothing to gather: the tree as written costs as many operations
        if self.moving is None:  # scalar code: rendered in the order it runs, so a name bound with := comes first
            first = [("*", _paren(self.render(n, False))) for n in num if self.varies(n)]
            fixed = self.hoist_fixed
            top = " * ".join(_paren(self.render(n, fixed)) for n in fixed_num) or "1"
            code = f"{top} / ({' * '.join(_paren(self.render(n, fixed)) for n in fixed_den)})" if fixed_den else top
            if fixed:
                key = ("factor", tuple(_structure(n, False, self.memo) for n in fixed_num),
                       tuple(_structure(n, False, self.memo) for n in fixed_den))
                if key not in self.temps:
                    self.temps[key] = f"_t{len(self.temps)}"
                    self.once.append(f"    {self.temps[key]} = {code}")
                factor = self.temps[key]
            else:
                factor = f"({code})"
            steps = first + [("*", factor)] + [("/", _paren(self.render(n, False))) for n in den if self.varies(n)]
            return [("", steps[0][1])] + steps[1:]
        key = ("factor", tuple(_structure(n, True, self.memo) for n in fixed_num),
               tuple(_structure(n, True, self.memo) for n in fixed_den))
        if key not in self.temps:
            top = " * ".join(_paren(self.render(n, True)) for n in fixed_num) or "1"
            if fixed_den:  # NumPy's division: x / 0 gives inf or nan in the results, as row by row
                code = f"_np.divide({top}, {' * '.join(_paren(self.render(n, True)) for n in fixed_den)})"
            else:
                code = f"_factor({top})"
            self.temps[key] = f"_t{len(self.temps)}"
            self.once.append(f"    {self.temps[key]} = {code}")
        steps = [("*", _paren(self.render(n, False))) for n in num if self.varies(n)] + [("*", self.temps[key])]
        steps += [("/", _paren(self.render(n, False))) for n in den if self.varies(n)]
        return [("", steps[0][1])] + steps[1:]

    def _factors(self, node) -> tuple[list, list]:
        """A varying chain of products and quotients as (numerator factors, denominator factors).  Vector code: a
        shared subtree inside it stays one factor (its temporary).  Scalar code: every product and quotient that
        varies is a part of the chain, shared or not, so that the factors, and the result bits, do not depend on which
        other quantities the code computes (a function of some outputs gives what the function of all gives)."""
        num: list = []
        den: list = []

        def flatten(n, inverted: bool, top: bool):
            if isinstance(n, BinOp) and n.op in "*/" and self.varies(n) and (top or not self.vector
                                                                             or self.memo.get(n) not in self.shared):
                flatten(n.a, inverted, False)
                flatten(n.b, inverted != (n.op == "/"), False)
            else:
                (den if inverted else num).append(n)

        flatten(node, False, True)
        return num, den


def _folded(code: str) -> str | None:
    """Python source of constants alone, replaced by its value (None when it is not a finite number or raises)."""
    try:
        value = eval(code, dict(RUNTIME))  # noqa: S307 - code rendered from our own constant subtrees
    except Exception:  # noqa: BLE001 - 1 / 0 and the like stay in the code, to raise where they always did
        return None
    if type(value) is bool:
        return repr(value)
    if type(value) in (int, float) and math.isfinite(value):
        return repr(value) if value >= 0 else f"({value!r})"
    return None


_UFUNCS = {"+": "_np.add", "-": "_np.subtract", "*": "_np.multiply", "/": "_np.divide", "^": "_np.power",
           "<": "_np.less", "<=": "_np.less_equal", ">": "_np.greater", ">=": "_np.greater_equal",
           "==": "_np.equal", "!=": "_np.not_equal"}


def _chain(steps: list[tuple[str, str]]) -> str:
    return "".join(f" {op} {code}" if op else code for op, code in steps)


# Scalar code: parts of formulas that read one catalog row alone are computed once per row (tests turn it off to
# compare the results with the plain code).
HOIST_ROW_SUBTREES = True
# Scalar code: products gather the factors that read no swept input, and the staged code computes them with its first
# stage (``_Emitter.swept``; tests and benchmarks turn it off to compare).
GATHER_FIXED = True
# Vector code: an IF whose condition is one value for the whole sweep computes, after the first block, only the branch
# it takes (``_lif``; tests turn it off to compare the results with both branches computed).
LAZY_IF = True


@functools.lru_cache(maxsize=64)
def compile_formulas(vector: bool, outputs: tuple[str, ...] | None = None,
                     varying: frozenset[str] | None = None, task: str | None = None,
                     given: frozenset[str] = frozenset(), part_of: tuple[str, ...] | None = None) -> Compiled:
    """Generate and compile the code for ``outputs`` (all quantities when None).

    Scalar code: ``fn(I, C, R)`` stores the outputs into the dict ``R``.  Vector code, generated for the inputs named
    in ``varying`` (those given as arrays; None: any input may be one): ``fn(I, C)`` computes
    once what is one value for every row and returns ``block(V, O)``, which computes the rest
    for a block of rows and returns the outputs.  ``V`` holds the varying inputs' rows (choice
    inputs as ``<choice>__row``); ``O`` holds per output the array its rows go into, or None.
    An output's last operation writes there, which saves copying it; an output that comes back
    as another array (an IF, a name) still has to be copied.

    ``task`` ("train" or "serve"): code for jobs of that task alone, where every IF on the
    task's serve flag is its branch and what only the other branch reads is neither read nor computed (the
    cost of owning a training job's GPUs then skips the serving fleet's whole chain).  None: any task.

    Quantities that depend on one catalog row alone (``row_derived``) are computed by a scalar
    function once per row and unpacked with the row's fields, like a field.

    Vector code for part of a sweep (``split_by_inputs``): ``given`` names quantities the block reads from ``V``
    (computed elsewhere) instead of computing them; ``part_of``: the outputs of the whole sweep, whose alike
    subtrees the code shares, so that every value is computed by the same operations in the same order as the
    code for ``part_of`` computes it (the same numbers, bit for bit).

    The generated code is kept on disk (``codecache``: the user's cache folder, keyed by a hash of the
    engine's code and catalogs), so a new process loads it instead of generating it again."""
    outputs = QUANTITY_NAMES if outputs is None else tuple(outputs)
    key = (vector, outputs, None if varying is None else tuple(sorted(varying)), task)
    if given or part_of is not None:
        key += (tuple(sorted(given)), part_of)
    if vector and not LAZY_IF:
        key += ("both branches of every IF",)
    stored = codecache.load(key)
    if stored is not None:
        try:
            return _from_stored(stored)
        except Exception:  # noqa: BLE001 - anything wrong with a stored entry: generate the code again
            pass
    compiled, stored = _generate(vector, outputs, varying, task, given, part_of)
    codecache.save(key, stored)
    return compiled


def _generate(vector: bool, outputs: tuple[str, ...], varying, task: str | None, given=frozenset(),
              part_of=None) -> tuple[Compiled, dict]:
    """The code for ``compile_formulas``, and what ``codecache`` stores of it (plain values and code objects)."""
    names = ancestors(outputs, task)
    table_of = row_derived(names)
    # vector code: the inputs given as arrays; the emitter adds every quantity computed from one of them
    moving = (set(BY_NAME) if varying is None else set(varying)) if vector else None
    fields: dict[str, Lookup] = {}
    sharing = None
    if part_of is not None:  # the whole sweep's quantities, computed (not unpacked with a row) as its code computes them
        whole = ancestors(part_of, task)
        unpacked = row_derived(whole)
        sharing = [n for n in whole if n not in unpacked]
    emitter = _Emitter(names, vector, fields, skip=table_of.keys() | given, moving=moving, task=task,
                       row_tables=None if vector or not HOIST_ROW_SUBTREES else table_of, sharing=sharing)
    once, per_block = emitter.body(names, slots={name: i for i, name in enumerate(outputs)})
    assert not given or given <= moving, "a quantity computed elsewhere is one value for every row"
    computed = [n for n in names if n not in given]
    if given:  # read from the block's rows, as inputs are
        read = _quantities_read([n for n in computed if n not in table_of], task)
        per_block[:0] = [f"    {n} = V[{n!r}]" for n in names if n in given and n in read]
    staged = not vector and STAGED and len(names) - len(table_of) >= STAGE_MIN_QUANTITIES
    bodies = _stage_bodies(names, table_of, emitter, task) if staged else None
    hoisted: dict[str, list] = {}
    for var, table, node in emitter.hoisted.values():
        hoisted.setdefault(table, []).append((var, node))
    derived_parts = {table: _derive_source(table, [n for n in names if table_of.get(n) == table], hoisted.get(table, ()))
                     for table in dict.fromkeys([*table_of.values(), *hoisted])}
    for table, part in hoisted.items():  # unpacked with the row's fields
        key = derived_parts[table][2]
        for var, _ in part:
            fields[var] = Lookup(table, key, var)
    used_inputs = _inputs_read(computed, table_of, task)
    rows = _Unpacking.of(computed, outputs, table_of, fields, derived_parts, task)
    if vector:
        lines = _vector_lines(outputs, used_inputs, rows, moving, once, per_block, emitter.lazy_ifs)
    else:
        lines = _scalar_lines(outputs, used_inputs, rows, table_of, per_block)
    source = "\n".join(lines) + "\n"
    label = f"<gpu-tco {'vector' if vector else 'scalar'} formulas, {len(outputs)} outputs>"
    staged_code = None
    if bodies is not None:  # compiled on its own and kept marshalled: a process loads it at its second call
        staged_source = "\n".join(_staged_lines(outputs, used_inputs, rows, table_of, bodies)) + "\n"
        staged_code = marshal.dumps(compile(staged_source, label.replace("formulas", "formulas in stages"), "exec"))
    stored = {
        "source": source, "code": compile(source, label, "exec"),
        "staged": staged_code, "outputs": outputs, "inputs": tuple(used_inputs),
        "row_fields": {t: tuple(f) for t, f in rows.fields.items()}, "row_keys": dict(rows.keys),
        "derived": {table: (part[0], part[1], part[2], compile(part[3], f"<gpu-tco formulas of one {table} row>", "exec"))
                    for table, part in derived_parts.items()},
    }
    return _from_stored(stored), stored


def _from_stored(stored: dict) -> Compiled:
    """A ``Compiled`` from what ``_generate`` made (or ``codecache`` read back): the code objects run once."""
    derived = {table: RowDerived(tuple(fields), tuple(names), _run_code(code)["_derive"], key)
               for table, (fields, names, key, code) in stored["derived"].items()}
    outputs = tuple(stored["outputs"])
    namespace = _run_code(stored["code"])
    return Compiled(namespace["_run"], stored["source"], outputs, tuple(stored["inputs"]),
                    {t: tuple(f) for t, f in stored["row_fields"].items()}, dict(stored["row_keys"]),
                    dict.fromkeys(outputs), derived, stored["staged"])


def _run_code(code) -> dict:
    namespace = dict(RUNTIME)
    exec(code, namespace)  # noqa: S102 - code generated from our own expression trees
    return namespace


def _derive_source(table: str, mine: list[str], hoisted=()) -> tuple[tuple, tuple, str, str]:
    """(raw fields, quantities, key input, source) of the scalar function computing from one ``table`` row's raw
    fields the quantities ``mine`` of that row alone, then ``hoisted`` (variable, subtree): the parts of other
    formulas that read that row alone, each NaN where it cannot be computed (x / 0: a branch an IF does not take)."""
    raw: dict[str, Lookup] = {}
    emitter = _Emitter(mine, False, raw, swept=False)  # (one catalog row's quantities: no input, nothing swept)
    body = emitter.body(mine)[1]
    for var, node in hoisted:
        code = _Emitter((), False, raw, swept=False).render(node, False)  # no temporaries: each computed within its own guard
        body += ["    try:", f"        {var} = {code}",
                 "    except (ZeroDivisionError, ValueError, OverflowError, TypeError):", f"        {var} = _nan"]
    results = [*mine, *(var for var, _ in hoisted)]
    src = "\n".join([f"def _derive({', '.join(raw)}):"] + body + [f"    return ({', '.join(results)},)"]) + "\n"
    return tuple(lk.field for lk in raw.values()), tuple(results), next(iter(raw.values())).key, src


@dataclass
class _Unpacking:
    """What the generated code reads of the catalogs: ``entries`` (variable, table, key input, field) per value
    it binds, then per table the fields in unpacking order, the choice input naming its row, and the variables."""
    entries: list[tuple[str, str, str, str]]
    fields: dict[str, list[str]]
    keys: dict[str, str]
    variables: dict[str, list[str]]

    @classmethod
    def of(cls, names, outputs, table_of: dict, fields: dict, derived: dict, task: str | None = None) -> _Unpacking:
        """Per table: the fields the code unpacks, then the row-derived quantities it uses (requested, or read
        by the rest); ``derived``: table -> (fields, quantities, key input, source)."""
        entries = [(var, lk.table, lk.key, lk.field) for var, lk in fields.items()]
        unpacked = set(outputs) | _quantities_read([n for n in names if n not in table_of], task)
        entries += [(name, table_of[name], derived[table_of[name]][2], name) for name in names
                    if name in table_of and name in unpacked]
        rows = cls(entries, {}, {}, {})
        for var, table, key, field in entries:
            if rows.keys.setdefault(table, key) != key:
                raise ValueError(f"catalog {table} is looked up by two inputs ({rows.keys[table]}, {key})")
            rows.fields.setdefault(table, []).append(field)
            rows.variables.setdefault(table, []).append(var)
        return rows


def _vector_lines(outputs, used_inputs, rows: _Unpacking, moving: set, once: list[str], per_block: list[str],
                  lazy_ifs: int = 0) -> list[str]:
    """``_run(I, C)``: reads and computes what is one value for every row, and returns ``_block(V, O)`` for the rest
    (``lazy_ifs``: the IFs of the per-row code that ``_lif`` computes, whose notes ``_L`` holds for one sweep)."""
    keys = list(dict.fromkeys(rows.keys.values()))
    tail = f"    return ({', '.join(outputs)},)"

    def reads(moves: bool, source: str, indent: str) -> list[str]:
        lines = [f"{indent}{name} = {source}[{name!r}]" for name in used_inputs if (name in moving) == moves]
        lines += [f"{indent}{key}__row = {source}[{key + '__row'!r}]" for key in keys if (key in moving) == moves]
        return lines + [f"{indent}{var} = C[{table + '.' + field!r}][{key}__row]"
                        for var, table, key, field in rows.entries if (key in moving) == moves]
    notes = [f"    _L = [None] * {lazy_ifs}"] if lazy_ifs else []
    lines = ["def _run(I, C):"] + reads(False, "I", "    ") + once + notes + ["    def _block(V, O):"]
    lines += reads(True, "V", "        ") + ["    " + line for line in per_block + [tail]]
    return lines + ["    return _block"]


def _scalar_lines(outputs, used_inputs, rows: _Unpacking, table_of: dict, per_block: list[str]) -> list[str]:
    """``_run(I, C, R)``: reads the inputs and catalog rows, and stores each output into ``R``."""
    keys = list(dict.fromkeys(rows.keys.values()))
    # Outputs are stored into R, a copy of a dict of the output names, as they are computed:
    # for 174 outputs 6 microseconds against 8.5 for returning a tuple and filling the copy
    # with update(zip(...)), and 9 for a dict display (measured on the project's machine).
    lines = ["def _run(I, C, R):"]
    lines += [f"    {name} = I[{name!r}]" for name in used_inputs]
    lines += [f"    {key}__row = I[{key + '__row'!r}]" for key in keys]
    # one subscript per catalog row, unpacked into every field the formulas use
    lines += [f"    ({', '.join(vars_)},) = C[{table!r}][{rows.keys[table]}__row]" for table, vars_ in rows.variables.items()]
    lines += [f"    R[{name!r}] = {name}" for name in outputs if name in table_of]
    return lines + per_block


# --- scalar code in stages: a call recomputes only what the inputs it changed reach ---------------------------
# A spreadsheet, a planner or a what-if loop evaluates configurations that differ in one or two inputs call after
# call.  ``_staged`` (generated beside ``_run`` for functions of many quantities) splits the quantities by which of
# the inputs such a sweep varies (``STAGE_INPUTS``) they depend on, and keeps each stage's results keyed by the
# exact values it reads: every other input and catalog row in one key per call, then per stage the varied inputs it
# reads.  A stage whose key was seen before is not computed: its results and the values later stages read are
# taken as they were computed.  The same code computes every stage, so a result is the same bit for bit.
STAGED = True
STAGE_INPUTS = ("n_gpus", "seq_len", "tokens", "micro_batch", "lora_rank", "epochs", "hours_per_day", "months",
                "job_hours", "mfu", "requests_per_s", "prompt_tokens", "output_tokens")
STAGE_MIN_QUANTITIES = 64  # fewer quantities: the lookups would cost about what they save
STAGE_MIN_GROUP = 8        # a smaller group of quantities joins a larger stage holding its inputs (each stage costs about
                           # 0.4 us a call to look up and keep: measured best at 8 over sweeps of each swept input)
SLOW_KEYS_KEPT = 8         # keys of everything but the varied inputs kept per function (then all are dropped)
STAGE_KEYS_KEPT = 128      # keys kept per stage and slow key (then that stage's are dropped)
PARK_MIN_SHARE = 1 / 3     # a swept input whose stages hold this share of the quantities has states parked by value
FIRST_STAGE_APART = True  # the first stage is a function of its own, ``_stage0`` (``_staged_lines``)
UNKEYED_LAST = True        # the stage keyed by every swept input is computed without a lookup (``_stage_lines``)
STAGE_HOIST = True         # a subtree is computed with the earliest stage whose key holds its swept inputs (``stage_temp``)
STAGE_HOIST_MIN_OPS = 2    # ... when it holds this many operations or more
PARKED_KEPT = 8            # states parked per slow key (then all are dropped)


@functools.lru_cache(maxsize=16)
def split_by_inputs(outputs: tuple[str, ...], varying: frozenset[str], narrow: frozenset[str],
                    task: str | None) -> tuple[tuple[str, ...], tuple[str, ...], frozenset[str]]:
    """How a sweep whose inputs ``varying`` vary, of which those in ``narrow`` take few values together, splits:
    (the quantities that vary with ``narrow`` alone, in definition order: computed once per combination of those
    inputs' values; the other outputs: computed per row; the first kind that the second reads, not computed again)."""
    names = ancestors(outputs, task)
    deps = _input_sets(names, task)
    few = tuple(n for n in names if deps[n] & varying and deps[n] & varying <= narrow)
    rest = tuple(n for n in outputs if n not in set(few))
    rest_names = set(ancestors(rest, task))
    table_of = row_derived(names)
    return few, rest, frozenset(n for n in few if n in rest_names and n not in table_of)


def _input_sets(names, task: str | None) -> dict[str, frozenset]:
    """Per quantity, every input it depends on (directly or through other quantities; catalog keys included)."""
    deps: dict[str, frozenset] = {}
    for name in names:
        used: set = set()
        for node in _leaves(QUANTITIES[name].expr, task):
            if isinstance(node, Ref):
                if node.name in BY_NAME:
                    used.add(node.name)
                elif node.name in deps:
                    used |= deps[node.name]
            elif isinstance(node, Lookup):
                used.add(node.key)
        deps[name] = frozenset(used)
    return deps


def stages(names, table_of: dict, task: str | None) -> list[tuple[tuple[str, ...], list[str]]]:
    """The stages of the staged scalar code: (varied inputs its key reads, its quantities in definition order), the
    stage of none of them first, every stage after the stages of the subsets of its inputs."""
    computed = [n for n in names if n not in table_of]
    deps = _input_sets(names, task)
    varied = frozenset(STAGE_INPUTS)
    own = {n: deps[n] & varied for n in computed}
    sizes: dict[frozenset, int] = {}
    for key in own.values():
        sizes[key] = sizes.get(key, 0) + 1
    big = sorted((k for k, n in sizes.items() if n >= STAGE_MIN_GROUP or not k), key=lambda k: (len(k), sorted(k)))
    last = frozenset().union(*own.values())

    def stage_of(key: frozenset) -> frozenset:
        """The smallest stage of many quantities whose key holds ``key`` (a small group joins it), else the last."""
        return next((k for k in big if key <= k), last)

    assigned: dict[str, frozenset] = {}
    for name in computed:  # definition order: what a quantity reads is assigned before it, to a stage before it
        key = own[name].union(*(assigned[r] for r in _quantities_read([name], task) if r in assigned))
        assigned[name] = stage_of(key)
    groups: dict[frozenset, list[str]] = {frozenset(): []}
    for name in computed:
        groups.setdefault(assigned[name], []).append(name)
    order = sorted(groups, key=lambda k: (len(k), sorted(k)))
    return [(tuple(sorted(k)), groups[k]) for k in order]


def _stage_bodies(names, table_of: dict, plain: _Emitter, task: str | None) -> list[tuple[tuple, list[str], list[str]]]:
    """(key inputs, quantities, lines) per stage, rendered by an emitter sharing ``plain``'s catalog fields and
    row-hoisted subtrees (the row unpacking is common to both functions); every quantity becomes a local."""
    emitter = copy.copy(plain)  # the same shared subtrees, fields and hoisted parts; its own lines and temporaries
    emitter.temps, emitter.inline_temps, emitter.once, emitter.per_block = {}, {}, [], []
    emitter.conditional, emitter.outputs_as_locals, emitter.hoist_fixed = 0, True, True
    hoisted_before = len(plain.hoisted)
    staged = stages(names, table_of, task)
    if STAGE_HOIST:
        emitter.stage_extra = [[] for _ in staged]
        emitter.stage_keys = [frozenset(key) for key, _ in staged]
        emitter.quantity_stage = {name: i for i, (_, members) in enumerate(staged) for name in members}
        emitter.def_stage, emitter._swept_memo = {}, {}
    bodies = []
    for i, (key, members) in enumerate(staged):
        emitter.stage_index = i
        start = len(emitter.per_block)
        for name in members:
            emitter.quantity(name, False, {})
        bodies.append((key, members, emitter.per_block[start:]))
    if STAGE_HOIST:  # each stage's part of later stages' formulas, after its own quantities
        bodies = [(key, members, lines + extra) for (key, members, lines), extra in zip(bodies, emitter.stage_extra)]
    assert len(plain.hoisted) == hoisted_before, "the staged code hoisted a row subtree the plain code did not"
    if emitter.once:
        # The parts of later stages' formulas that read no swept input, computed with the first stage.  Some lie in a
        # branch that the values never take, where they may fail (x / 0): then these values are computed by the plain
        # code at every call, which fails exactly where and as it always did.
        bodies[0] = (bodies[0][0], bodies[0][1], [
            *bodies[0][2], "    try:", *("    " + line for line in emitter.once),
            "    except (ZeroDivisionError, ValueError, OverflowError, TypeError):",
            *(["        return None"] if FIRST_STAGE_APART else ["    " + line for line in _FAILING_AHEAD])])
    return bodies


# What ``_staged`` does when the first stage of a slow key fails ahead (``_stage_bodies``): the plain code, for this
# call and, marked in ``M``, for every later call with that key.
_FAILING_AHEAD = ["    M[_sk] = True", "    if _st is not None:", "        M[None] = _st", "    R = T.copy()",
                  "    _run(I, C, R)", "    return R"]


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_BOUND = re.compile(r"([A-Za-z_][A-Za-z0-9_]*) :=")


def _stores_and_loads(lines: list[str]) -> tuple[set[str], set[str]]:
    """The names the generated lines (each ``name = expression``) bind, and every name their expressions may read (a
    superset: a name in a constant counts too, which costs at most a value passed on that no stage reads)."""
    stores: set[str] = set()
    loads: set[str] = set()
    for line in lines:
        target, _, expression = line.strip().partition(" = ")
        stores.add(target)
        stores.update(_BOUND.findall(expression))
        loads.update(_IDENTIFIER.findall(expression))
    return stores, loads


def _tuple(names) -> str:
    return f"({', '.join(names)},)" if names else "()"


def _staged_reads(outputs, used_inputs, rows: _Unpacking, table_of: dict, bodies) -> tuple:
    """What ``_staged_lines`` generates around the stages: (names each stage exports to later ones, results of the
    first stage, the item getters by name (a stage's key by position in the swept inputs' values), the swept inputs
    it reads, the lines reading every input and row, per stage the names it reads of what the first stage holds)."""
    keys = list(dict.fromkeys(rows.keys.values()))
    wanted = set(outputs)
    varied = set(STAGE_INPUTS)
    names_used = [_stores_and_loads(lines) for _, _, lines in bodies]
    exports = []
    for i in range(len(bodies)):
        later_loads = set().union(*(loads for _, loads in names_used[i + 1:]))
        exports.append(sorted(names_used[i][0] & later_loads))
    slow = [name for name in used_inputs if name not in varied] + [f"{key}__row" for key in keys]
    base_results = [n for n in bodies[0][1] if n in wanted] + [n for n in outputs if n in table_of]
    getters = {"_igs": ["__tag", *slow]}
    moving = [n for n in used_inputs if n in varied]
    getters["_igm"] = moving
    reads_all = [f"{_tuple(['_tag', *slow])} = _sk"]
    reads_all += [f"{_tuple(moving)} = _igm(I)" if len(moving) > 1 else f"{moving[0]} = _igm(I)"] if moving else []
    reads_all += [f"({', '.join(vars_)},) = C[{t!r}][{rows.keys[t]}__row]" for t, vars_ in rows.variables.items()]
    reads_all += ["_u = True"]
    # what each stage after the first reads of the inputs it does not sweep, the catalog rows' fields and the values
    # the first stage computes: one tuple per stage, made with the first stage and unpacked by that stage alone when
    # it is computed in a call that did not compute the first (the swept inputs are locals from the start: the stages'
    # keys are made of them; what a later stage reads of another is read back from that stage's entry)
    from_first = set(slow).union(*rows.variables.values(), exports[0])
    stage_reads = [[]] + [sorted(loads & from_first) for _, loads in names_used[1:]]
    return exports, base_results, {k: v for k, v in getters.items() if v}, moving, reads_all, stage_reads


def _staged_lines(outputs, used_inputs, rows: _Unpacking, table_of: dict, bodies) -> list[str]:
    """``_staged(I, C, T, M, K)``: the quantities of ``_run`` in stages; returns a filled copy of ``T``.  ``K`` is
    ``_igs(I)`` (``Compiled.slow_key``): the caller passes the previous call's key when it knows the inputs it holds
    did not change.

    ``M`` (a dict the caller keeps per catalog snapshot) holds per key of the inputs outside ``STAGE_INPUTS`` (and
    ``I["__tag"]``: what the values do not say themselves, e.g. an input given as an int where its default is a float) the
    first stage's results and one dict per later stage: its key (its varied inputs' values) -> its results and the
    values later stages read.  ``M[None]`` holds the last call's state: its keys and stage values, and its results as
    one dict, so a stage whose key did not change since then costs a comparison.  The state is taken out of ``M``
    while a call runs: a call in another thread meanwhile starts from the stored stages instead.  A stage that is
    computed reads every input and catalog row into locals once, and the values of the stages before it that were not
    computed are read back from the state.  The first stage, computed once per key of the other inputs, is a function
    of its own (``_stage0``; ``FIRST_STAGE_APART``): Python sets up and clears every local of a function's frame at
    every call, and ``_staged``'s 1,553 locals with the first stage inside cost about 6 % of a call of all quantities
    (1,159 without it; docs/benchmarks.md).  Values of
    the other inputs seen for the first time are computed by ``_run`` and only their key kept: a sweep that changes
    them every call (a GPU, a model) pays the plain code and one key, not the storing of every stage."""
    wanted = set(outputs)
    exports, base_results, getters, moving, reads_all, stage_reads = _staged_reads(
        outputs, used_inputs, rows, table_of, bodies)
    lines = [""] + [f"{name} = _itemgetter({', '.join(repr(n) for n in names)})" for name, names in getters.items()]
    lines += ["def _staged(I, C, T, M, _sk, " + ", ".join(f"{name}={name}" for name in getters if name != "_igs") + "):"]
    lines += ["    _u = False  # whether every input and row is read into locals",
              "    _st = M.pop(None, None)",
              "    if _st is None or (_st[0] is not _sk and _st[0] != _sk):",
              "        _P = M.get(_sk)",
              "        if _P is None or _P is True:  # values first seen (nothing kept but their key), or failing ahead: the plain code",
              "            if _P is None:",
              f"                if len(M) >= {SLOW_KEYS_KEPT}:",
              "                    M.clear()",
              "                M[_sk] = False",
              "            if _st is not None:",
              "                M[None] = _st",
              "            R = T.copy()",
              "            _run(I, C, R)",
              "            return R",
              "        if _P is False:  # seen before: kept from now on",
              f"            _P = M[_sk] = [None{', {}' * (len(bodies) - 1)}, {{}}]  # the stages' kept results, parked states",
              "        _v = _P[0]"]
    first = ["    " + line for line in reads_all]
    first += bodies[0][2]
    first += ["    _R = T.copy()"]
    if base_results:
        first += [f"    _R.update({{{', '.join(f'{n!r}: {n}' for n in base_results)}}})"]
    first += [f"    return ((None, {', '.join(_tuple(names) for names in stage_reads[1:])}), _R)"]
    if FIRST_STAGE_APART:
        at = next(i for i, line in enumerate(lines) if line.startswith("def _staged("))
        lines[at:at] = ["def _stage0(I, C, T, _sk" + "".join(f", {name}={name}" for name in getters if name != "_igs") + "):",
                      *(line for line in first if line != "    _u = True")]
        lines += ["        if _v is None:  # the first stage of these values of the inputs not swept (``_stage0``)",
                  "            _v = _stage0(I, C, T, _sk)", "            if _v is None:",
                  *("            " + line for line in _FAILING_AHEAD), "            _P[0] = _v"]
    else:
        lines += ["        if _v is None:  # then every later stage is computed too: every local read here"]
        lines += ["        " + line for line in first[:-1]]
        lines += ["            _v = _P[0] = " + first[-1].strip()[len("return "):]]
    lines += [f"        _st = [_sk, _P, _v[1].copy(), _v[0]{', None' * (len(bodies) - 1)}, None]",
              "    else:", "        _P = _st[1]"]
    # which swept inputs differ from the last call's (all, after a change of the others): a stage none of whose
    # inputs changed is skipped on one test, its results already in L
    last = 3 + len(bodies)
    changed = {name: f"_c{j}" for j, name in enumerate(moving)}
    if moving:
        lines += ["    _vk = _igm(I)" if len(moving) > 1 else "    _vk = (_igm(I),)", f"    {_tuple(moving)} = _vk",
                  f"    _lv = _st[{last}]"]
        lines += _park_lines(bodies, moving, last)
        lines += ["    L = _st[2]",
                  "    if _lv is None:", f"        {' = '.join(changed.values())} = True", "    else:",
                  *[f"        _c{j} = {name} != _lv[{j}]" for j, name in enumerate(moving)]]
    else:
        lines += ["    L = _st[2]"]
    # first every stage whose inputs changed looks its key up (a stage kept: its results into L); then, if any is to be
    # computed, every input and row is read once and the stages run in order, each either computed or (for the
    # stages after it) its values read back from the state
    parking = any(line.startswith("    _ol = None") for line in lines)
    lines += _stage_lines(bodies, wanted, changed, exports, stage_reads, parking)
    lines += [f"    _st[{last}] = _vk"] if moving else []
    lines += ["    if _ol is not None:", "        _P[-1][_olk] = _ol"] if parking else []
    return lines + ["    M[None] = _st", "    return L.copy()"]


def _stage_from_last(i: int, key: tuple, results: list[str], changed: dict) -> list[str]:
    """Stage ``i``'s values taken from the last call's state ``_ol`` when none of its key's inputs changed since that
    call (``_o<j>``): its results copied into ``L`` from that state's, its entry (exports and kept results) with them."""
    unchanged = " or ".join(changed[n].replace("_c", "_o") for n in key)
    return [f"    if _ol is not None and not ({unchanged}):", "        _Lo = _ol[2]",
            *[f"        L[{n!r}] = _Lo[{n!r}]" for n in results], f"        _st[{3 + i}] = _ol[{3 + i}]"]


def _park_lines(bodies, moving: list[str], last: int) -> list[str]:
    """The lines of ``_staged`` that start from a parked state (``_switch_state``) when a swept input whose stages hold
    ``PARK_MIN_SHARE`` of the quantities or more changed; the function it calls is bound beside ``_staged``."""
    weights = tuple(sum(len(members) for key, members, _ in bodies if name in key) for name in moving)
    total = sum(len(members) for _, members, _ in bodies)
    parkable = tuple(j for j, weight in enumerate(weights) if weight >= PARK_MIN_SHARE * total)
    if not parkable:
        return []
    changed = " or ".join(f"{moving[j]} != _lv[{j}]" for j in parkable)
    return ["    _ol = None  # the last call's state, when this call starts from a parked one",
            f"    if _lv is not None and ({changed}):",
            f"        _st, _lv, _ol, _olk = _switch_state(_st, _lv, _vk, _P[-1], {last}, {parkable!r}, {weights!r})",
            "        if _ol is not None:", f"            _olv = _ol[{last}]",
            *[f"            _o{j} = {name} != _olv[{j}]" for j, name in enumerate(moving)]]


def _stage_lines(bodies, wanted: set, changed: dict, exports: list, stage_reads: list[list[str]],
                 parking: bool = False) -> list[str]:
    """The part of ``_staged`` that looks each stage after the first up, reads it back or computes it.  ``parking``:
    a stage whose key changed since the parked state this call starts from but not since the last call's (``_ol``)
    takes its values from that state (``_stage_from_last``).

    A stage keyed by every swept input (``unkeyed``) is neither looked up nor kept: whenever one of them changed,
    its key is a whole configuration of them, found again only where that exact configuration repeats, and the lookup
    and keeping cost about what computing it costs (the stage every small group joins: a few quantities)."""
    loads = [_stores_and_loads(lines)[1] for _, _, lines in bodies]
    unkeyed = [UNKEYED_LAST and set(key) == set(changed) for key, _, _ in bodies]
    # a key looked up for the first time is marked seen in the same lookup (one hash of it): its value is then this
    # call's marker ``_mk``; a key seen once before holds an earlier call's marker (an empty list, false), a kept stage
    # its (exports, results) tuple
    lines: list[str] = ["    _any = False", "    _mk = []", "    _Lu = L.update"]
    for i, (key, members, _) in enumerate(bodies[1:], 1):
        results = [n for n in members if n in wanted]
        if unkeyed[i]:
            lookup = [f"    _d{i} = _any = True"]
        else:
            lookup = [f"    _k{i} = {key[0] if len(key) == 1 else _tuple(key)}",
                      f"    _v{i} = _P[{i}].setdefault(_k{i}, _mk)", f"    if _v{i} is _mk or not _v{i}:",
                      f"        _d{i} = _any = True", "    else:"]
            lookup += [f"        _Lu(_v{i}[1])"] if results else []
            # (a stage's exports and results in the state, for the stages after it: only when it has exports to read back)
            lookup += [f"        _st[{3 + i}] = _v{i}"] if exports[i] else [] if results else ["        pass"]
        lines += [f"    _d{i} = False", f"    if {' or '.join(changed[n] for n in key)}:"]
        if parking and not unkeyed[i]:  # (an unkeyed stage's inputs include the one whose change switched states)
            lookup = _stage_from_last(i, key, results, changed) + ["    else:"] + ["    " + line for line in lookup]
        lines += ["    " + line for line in lookup]
    lines += ["    if _any:", "        _X = _st[3]  # per stage, what it reads of the first stage's values (``_staged_reads``)"]
    for i, (_, members, body) in enumerate(bodies[1:], 1):
        results = [n for n in members if n in wanted]
        lines += [f"        if _d{i}:"]
        if stage_reads[i]:  # (every local was read in a call that computed the first stage)
            lines += ["            if not _u:", f"                {_tuple(stage_reads[i])} = _X[{i}]"]
        lines += ["        " + line for line in body]
        lines += [f"            L[{n!r}] = {n}" for n in results]
        if unkeyed[i]:
            lines += [f"            _st[{3 + i}] = ({_tuple(exports[i])}, None)"] if exports[i] else []
        else:
            lines += [f"            _g = _P[{i}]",
                      f"            if _v{i} is _mk:  # seen for the first time: only the key kept (marked when looked up)",
                      f"                if len(_g) > {STAGE_KEYS_KEPT}:", "                    _g.clear()",
                      f"                    _g[_k{i}] = _mk"]
            lines += [f"                _st[{3 + i}] = ({_tuple(exports[i])}, None)"] if exports[i] else []
            lines += ["            else:",
                      f"                _g[_k{i}] = {'_st[' + str(3 + i) + '] = ' if exports[i] else ''}"
                      f"({_tuple(exports[i])}, {{{', '.join(f'{n!r}: {n}' for n in results)}}})"]
        readers = [f"_d{j}" for j in range(i + 1, len(bodies)) if loads[j].intersection(exports[i])]
        if readers:  # kept, and read by a stage computed in this call
            lines += [f"        elif {' or '.join(readers)}:", f"            {_tuple(exports[i])} = _st[{3 + i}][0]"]
    return lines
