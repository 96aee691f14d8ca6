"""A small evaluator for the Excel formula subset core renders, with Excel's own rules.

It exists to check the Excel text independently of the Python rendering:
it parses the formula string with Excel's operator precedence (unary minus
binds tighter than ^, ^ is left-associative, = and <> compare) and its
function semantics (CEILING/FLOOR with a significance, INDEX/MATCH over
named columns).  The LibreOffice recalculation of real workbooks is the
workbook issue's test; this one runs in milliseconds on every formula.
"""
from __future__ import annotations

import math
import re

TOKEN = re.compile(r"\s*(?:(\d+\.\d*(?:[eE][-+]?\d+)?|\d+(?:[eE][-+]?\d+)?)|([A-Za-z_][A-Za-z0-9_.]*)|(<=|>=|<>|[-+*/^(),=<>]))")
ALLOWED_FUNCTIONS = {"INDEX", "MATCH", "MIN", "MAX", "CEILING", "FLOOR", "SQRT", "LN", "IF", "AND", "OR", "NOT"}


def tokenize(formula: str):
    pos, out = 0, []
    s = formula.lstrip("=")
    while pos < len(s):
        m = TOKEN.match(s, pos)
        if not m or m.end() == pos:
            raise SyntaxError(f"bad token at {s[pos:pos + 20]!r}")
        num, name, op = m.groups()
        out.append(("num", float(num)) if num else ("name", name) if name else ("op", op))
        pos = m.end()
    return out


class Parser:
    def __init__(self, tokens, names, columns):
        self.t, self.i, self.names, self.columns = tokens, 0, names, columns
        self.functions: set[str] = set()

    def peek(self):
        return self.t[self.i] if self.i < len(self.t) else (None, None)

    def take(self, value=None):
        tok = self.peek()
        if value is not None and tok[1] != value:
            raise SyntaxError(f"expected {value}, got {tok}")
        self.i += 1
        return tok

    def parse(self):
        v = self.comparison()
        if self.i != len(self.t):
            raise SyntaxError(f"trailing tokens {self.t[self.i:]}")
        return v

    def comparison(self):
        v = self.additive()
        while self.peek()[1] in ("=", "<>", "<", "<=", ">", ">="):
            op = self.take()[1]
            w = self.additive()
            v = {"=": v == w, "<>": v != w, "<": v < w, "<=": v <= w, ">": v > w, ">=": v >= w}[op]
        return v

    def additive(self):
        v = self.term()
        while self.peek()[1] in ("+", "-"):
            op = self.take()[1]
            w = self.term()
            v = v + w if op == "+" else v - w
        return v

    def term(self):
        v = self.power()
        while self.peek()[1] in ("*", "/"):
            op = self.take()[1]
            w = self.power()
            v = v * w if op == "*" else v / w
        return v

    def power(self):  # Excel: left-associative, operands are unary expressions
        v = self.unary()
        while self.peek()[1] == "^":
            self.take()
            v = v ** self.unary()
        return v

    def unary(self):
        if self.peek()[1] == "-":
            self.take()
            return -self.unary()
        if self.peek()[1] == "+":
            self.take()
            return self.unary()
        return self.atom()

    def atom(self):
        kind, value = self.take()
        if kind == "num":
            return value
        if kind == "op" and value == "(":
            v = self.comparison()
            self.take(")")
            return v
        if kind == "name":
            if self.peek()[1] == "(":
                return self.call(value)
            if value in self.names:
                return self.names[value]
            if value in self.columns:
                return self.columns[value]
            raise NameError(value)
        raise SyntaxError(f"unexpected {value}")

    def call(self, fn):
        self.functions.add(fn)
        self.take("(")
        if fn == "IF":  # lazy like Excel
            cond = self.comparison()
            self.take(",")
            a = self._skip_or_eval(cond)
            self.take(",")
            b = self._skip_or_eval(not cond)
            self.take(")")
            return a if cond else b
        args = []
        if self.peek()[1] != ")":
            args.append(self.comparison())
            while self.peek()[1] == ",":
                self.take()
                args.append(self.comparison())
        self.take(")")
        simple = {
            "MIN": lambda: min(args), "MAX": lambda: max(args), "SQRT": lambda: math.sqrt(args[0]), "LN": lambda: math.log(args[0]),
            # Excel and LibreOffice round to 15 significant digits before rounding to a multiple,
            # so 2016.0000000000002 seconds bill as 2016, not 2017
            "CEILING": lambda: math.ceil(float(f"{args[0] / args[1]:.15g}")) * args[1],
            "FLOOR": lambda: math.floor(float(f"{args[0] / args[1]:.15g}")) * args[1],
            "AND": lambda: all(args), "OR": lambda: any(args), "NOT": lambda: not args[0],
        }
        if fn in simple:
            return simple[fn]()
        if fn == "MATCH":
            value, column, mode = args
            assert mode == 0
            return [str(x).lower() for x in column].index(str(value).lower()) + 1
        if fn == "INDEX":
            column, pos = args
            return column[int(pos) - 1]
        raise NameError(fn)

    def _skip_or_eval(self, evaluate: bool):
        if evaluate:
            return self.comparison()
        depth, start = 0, self.i
        while True:
            kind, value = self.peek()
            if value == "(":
                depth += 1
            elif value in (")", ",") and depth == 0:
                return None
            elif value == ")":
                depth -= 1
            self.i += 1
            if self.i > len(self.t):
                raise SyntaxError(f"unbalanced IF from {start}")


def evaluate_excel(formula: str, names: dict, columns: dict):
    p = Parser(tokenize(formula), names, columns)
    value = p.parse()
    return value, p.functions
