"""The expression layer: one definition per formula, several renderings.

A quantity is defined once as a small expression tree over named inputs,
other quantities and catalog lookups.  From that single tree this module
renders

* Python source for scalar evaluation (floats, ``min``/``max``),
* Python source for vectorised evaluation (NumPy ufuncs, ``np.where``),
* Excel formula text (defined names, INDEX/MATCH), restricted to functions
  that Excel 2010+ and LibreOffice 7.4 both compute,
* a human-readable formula for explanations.

The vocabulary is deliberately small: + - * / ^, unary minus, comparisons,
MIN, MAX, CEILING, FLOOR, SQRT, LN, IF, AND, OR, NOT and ``lookup``.  Anything a
formula needs beyond that is expressed with those, so every front end can
render it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

from .text import is_whole_number

# Precedence used for minimal parenthesisation.  Python and Excel order these
# operators the same way; the one difference (unary minus binds tighter than
# ^ in Excel, looser in Python) is avoided by always parenthesising the
# operand of unary minus and the base of a power.
_PRECEDENCE = {"cmp": 0, "+": 1, "-": 1, "*": 2, "/": 2, "neg": 3, "^": 4, "atom": 9}
_CMP_PY = {"<": "<", "<=": "<=", ">": ">", ">=": ">=", "==": "==", "!=": "!="}
_CMP_XL = {"<": "<", "<=": "<=", ">": ">", ">=": ">=", "==": "=", "!=": "<>"}


def wrap(value) -> "Expr":
    if isinstance(value, Expr):
        return value
    if isinstance(value, bool):
        return Const(1.0 if value else 0.0)
    if isinstance(value, (int, float)):
        return Const(value)
    raise TypeError(f"cannot use {value!r} in a formula")


class Expr:
    """Base class; operators build trees."""

    __slots__ = ()

    # arithmetic -----------------------------------------------------------
    def __add__(self, o): return BinOp("+", self, wrap(o))
    def __radd__(self, o): return BinOp("+", wrap(o), self)
    def __sub__(self, o): return BinOp("-", self, wrap(o))
    def __rsub__(self, o): return BinOp("-", wrap(o), self)
    def __mul__(self, o): return BinOp("*", self, wrap(o))
    def __rmul__(self, o): return BinOp("*", wrap(o), self)
    def __truediv__(self, o): return BinOp("/", self, wrap(o))
    def __rtruediv__(self, o): return BinOp("/", wrap(o), self)
    def __pow__(self, o): return BinOp("^", self, wrap(o))
    def __neg__(self): return Neg(self)

    # comparisons (== and != are functions, so Expr stays hashable) ---------
    def __lt__(self, o): return Cmp("<", self, wrap(o))
    def __le__(self, o): return Cmp("<=", self, wrap(o))
    def __gt__(self, o): return Cmp(">", self, wrap(o))
    def __ge__(self, o): return Cmp(">=", self, wrap(o))

    def __bool__(self):
        raise TypeError("a formula has no truth value; use IF(), AND(), OR()")

    # rendering -------------------------------------------------------------
    def precedence(self) -> int:
        return _PRECEDENCE["atom"]

    def py(self, vector: bool) -> str:
        return self.render_with(lambda e: e.py(vector), vector)

    def render_with(self, render, vector: bool) -> str:
        """Python source of this node, children rendered by ``render``."""
        raise NotImplementedError

    def xl(self, ref=None) -> str:
        """Excel formula text.  ``ref(name)`` renders an input or quantity name (default: the
        defined name itself); the workbook passes cell references to recompute a chain of
        quantities per option (a column of the Options sheet) from the same tree."""
        raise NotImplementedError

    def children(self) -> tuple["Expr", ...]:
        return ()

    def walk(self) -> Iterator["Expr"]:
        yield self
        for child in self.children():
            yield from child.walk()


@dataclass(frozen=True, eq=False)
class Const(Expr):
    value: float

    def render_with(self, render, vector):
        return repr(float(self.value)) if not float(self.value).is_integer() else repr(int(self.value))

    def xl(self, ref=None):
        v = float(self.value)
        return str(int(v)) if is_whole_number(v) else repr(v)  # repr: every digit Excel needs to read it back exactly

    def precedence(self):
        return _PRECEDENCE["neg"] if float(self.value) < 0 else _PRECEDENCE["atom"]


@dataclass(frozen=True, eq=False)
class Ref(Expr):
    """A named input or quantity (a defined name in the workbook)."""

    name: str

    def render_with(self, render, vector):
        return self.name

    def xl(self, ref=None):
        return ref(self.name) if ref else self.name


@dataclass(frozen=True, eq=False)
class Lookup(Expr):
    """Field ``field`` of the row of catalog ``table`` named by input ``key``."""

    table: str
    key: str
    field: str

    def render_with(self, render, vector):
        # the generated code binds each catalog field of the looked-up row to this name once
        return self.var()

    def var(self) -> str:
        return f"{self.table}__{self.field}"

    def xl(self, ref=None):
        # Catalog columns are defined names: <table>_<field>, <table>_name.
        key = ref(self.key) if ref else self.key
        return f"INDEX({self.table}_{self.field},MATCH({key},{self.table}_name,0))"

    def text(self):
        return f"{self.table}[{self.key}].{self.field}"


@dataclass(frozen=True, eq=False)
class BinOp(Expr):
    op: str
    a: Expr
    b: Expr

    def precedence(self):
        return _PRECEDENCE[self.op]

    def children(self):
        return (self.a, self.b)

    def _sides(self, render, as_built: bool = False):
        """The operands' text, parenthesised where the operator's precedence needs it; ``as_built``: a right
        operand of the same precedence too, so that a + (b + c) and a * (b / c) run in the order the tree gives
        (Python code, where a subtree may be computed ahead into a name: the same result bits either way)."""
        p = self.precedence()
        left, right = render(self.a), render(self.b)
        lp, rp = self.a.precedence(), self.b.precedence()
        if lp < p or (self.op == "^" and lp <= p):
            left = f"({left})"
        if rp < p or (rp == p and (as_built or self.op in "-/^")):
            right = f"({right})"
        return left, right

    def render_with(self, render, vector):
        left, right = self._sides(render, as_built=True)
        op = "**" if self.op == "^" else self.op
        return f"{left} {op} {right}"

    def xl(self, ref=None):
        left, right = self._sides(lambda e: e.xl(ref))
        return f"{left}{self.op}{right}"


@dataclass(frozen=True, eq=False)
class Neg(Expr):
    a: Expr

    def precedence(self):
        return _PRECEDENCE["neg"]

    def children(self):
        return (self.a,)

    def render_with(self, render, vector):
        return f"-({render(self.a)})"

    def xl(self, ref=None):
        return f"-({self.a.xl(ref)})"


@dataclass(frozen=True, eq=False)
class Cmp(Expr):
    op: str
    a: Expr
    b: Expr

    def precedence(self):
        return _PRECEDENCE["cmp"]

    def children(self):
        return (self.a, self.b)

    def render_with(self, render, vector):
        return f"({render(self.a)} {_CMP_PY[self.op]} {render(self.b)})"

    def xl(self, ref=None):
        return f"({self.a.xl(ref)}{_CMP_XL[self.op]}{self.b.xl(ref)})"


# name: (scalar python, vector python, excel, arity or None for n-ary)
_FUNCS = {
    "MIN": ("min", "_vmin", "MIN", None),
    "MAX": ("max", "_vmax", "MAX", None),
    "CEILING": ("_mceil", "_vceil", "CEILING", 1),  # scalar code inlines the binary-noise guard (Call.render_with)
    "FLOOR": ("_mfloor", "_vfloor", "FLOOR", 1),
    "SQRT": ("_sqrt", "_np.sqrt", "SQRT", 1),
    "LN": ("_ln", "_np.log", "LN", 1),  # natural logarithm (Excel and LibreOffice LN); its argument kept positive by the formula
    "AND": ("_and", "_vand", "AND", None),
    "OR": ("_or", "_vor", "OR", None),
    "NOT": ("_not", "_np.logical_not", "NOT", 1),
    "IF": ("_if", "_vif", "IF", 3),
}


@dataclass(frozen=True, eq=False)
class Call(Expr):
    fn: str
    args: tuple

    def children(self):
        return self.args

    def render_with(self, render, vector):
        scalar_name, vector_name, _, _ = _FUNCS[self.fn]
        args = [render(x) for x in self.args]
        if not vector:
            # plain Python operators: no call overhead on the scalar path
            if self.fn == "IF":
                return f"(({args[1]}) if ({args[0]}) else ({args[2]}))"
            if self.fn in ("AND", "OR"):
                return "(" + f" {self.fn.lower()} ".join(f"({x})" for x in args) + ")"
            if self.fn == "NOT":
                return f"(not ({args[0]}))"
        if not vector and self.fn in ("CEILING", "FLOOR"):
            # the binary-noise guard (codegen.RUNTIME) inlined: C's math.ceil/floor, no Python frame
            factor = "0.999999999999" if self.fn == "CEILING" else "1.000000000001"
            return f"{'_mceil' if self.fn == 'CEILING' else '_mfloor'}(({args[0]}) * {factor})"
        name = vector_name if vector else scalar_name
        return f"{name}({', '.join(args)})"

    def xl(self, ref=None):
        args = [a.xl(ref) for a in self.args]
        if self.fn in ("CEILING", "FLOOR"):
            args.append("1")  # significance 1: whole numbers, same in Excel 2010+ and LibreOffice
        return f"{_FUNCS[self.fn][2]}({','.join(args)})"


def vector_function(fn: str) -> str:
    """The name the vector code calls for function ``fn`` (MIN -> _vmin, SQRT -> _np.sqrt, ...)."""
    return _FUNCS[fn][1]


def _call(fn, *args):
    arity = _FUNCS[fn][3]
    if arity is not None and len(args) != arity:
        raise TypeError(f"{fn} takes {arity} arguments")
    return Call(fn, tuple(wrap(a) for a in args))


def MIN(*a): return _call("MIN", *a)
def MAX(*a): return _call("MAX", *a)
# CEILING and FLOOR round to whole numbers (GPUs, instances, billed seconds); the generated Python
# guards them against binary noise (codegen.RUNTIME), the formula text stays as a person writes it.
def CEILING(x): return _call("CEILING", x)
def FLOOR(x): return _call("FLOOR", x)
def SQRT(x): return _call("SQRT", x)
def LN(x): return _call("LN", x)
def AND(*a): return _call("AND", *a)
def OR(*a): return _call("OR", *a)
def NOT(x): return _call("NOT", x)
def IF(cond, then, otherwise): return _call("IF", cond, then, otherwise)
def EQ(a, b): return Cmp("==", wrap(a), wrap(b))
def NE(a, b): return Cmp("!=", wrap(a), wrap(b))


def text(expr: Expr) -> str:
    """Readable formula: Excel syntax, lookups written as table[key].field."""
    if isinstance(expr, Lookup):
        return expr.text()
    if isinstance(expr, (Const, Ref)):
        return expr.xl()
    if isinstance(expr, BinOp):
        left, right = expr._sides(text)
        return f"{left} {expr.op} {right}"
    if isinstance(expr, Neg):
        return f"-({text(expr.a)})"
    if isinstance(expr, Cmp):
        return f"{text(expr.a)} {_CMP_XL[expr.op]} {text(expr.b)}"
    if isinstance(expr, Call):
        return f"{expr.fn}({', '.join(text(a) for a in expr.args)})"
    raise TypeError(expr)
