"""What a scenario exercises in the formulas, for choosing which random scenarios go through LibreOffice.

Every workbook's formulas render from the same expressions as core's code (core/formulas.py), so a scenario reaches
the same branches in both.  ``formula_outcomes(cfg)`` is the set of outcomes a scenario reaches: the branch each
IF takes, the argument each MIN and MAX picks, and each quantity's sign (zero, positive, negative, not finite, text).
A random scenario whose outcomes the others already reach checks no formula path they do not; the tests that send a
subset of their random scenarios through LibreOffice assert that the ones left out add no outcome."""
from __future__ import annotations

import math
from functools import lru_cache

from gpu_tco import core
from gpu_tco.core import catalog, codegen, engine
from gpu_tco.core.expr import Call, Lookup
from gpu_tco.core.formulas import QUANTITIES


@lru_cache(maxsize=1)
def _branches() -> tuple[list, set, dict]:
    nodes = [(name, i, node) for name, q in QUANTITIES.items() for i, node in enumerate(q.expr.walk())
             if isinstance(node, Call) and node.fn in ("IF", "MIN", "MAX")]
    lookups = {node for q in QUANTITIES.values() for node in q.expr.walk() if isinstance(node, Lookup)}
    code = {id(node): [compile(arg.py(False), "<outcome>", "eval") for arg in node.args] for _, _, node in nodes}
    return nodes, lookups, code


def _sign(value) -> str:
    try:
        v = float(value)
    except (TypeError, ValueError):
        return "text"
    return "not finite" if not math.isfinite(v) else "0" if v == 0 else "+" if v > 0 else "-"


def formula_outcomes(cfg: dict) -> set:
    """The outcomes ``cfg`` reaches: (quantity, node, IF's branch or MIN's/MAX's argument) and (quantity, sign)."""
    nodes, lookups, code = _branches()
    values = engine.resolve_inputs(cfg)
    results = core.evaluate(cfg)
    names = {**codegen.RUNTIME, **values, **results}
    for lookup in lookups:  # the catalog field each Lookup reads, under the name the generated code binds it to
        row_index = values.get(f"{lookup.key}__row")
        if row_index is not None:
            names[lookup.var()] = catalog.tables()[lookup.table].rows[row_index].get(lookup.field)
    reached = {(name, "sign", _sign(v)) for name, v in results.items()}
    for name, i, node in nodes:
        try:
            args = [eval(c, names) for c in (code[id(node)][:1] if node.fn == "IF" else code[id(node)])]  # noqa: S307
        except Exception:  # an argument of a model outside the catalog, say: that node says nothing here
            continue
        if node.fn == "IF":
            reached.add((name, i, bool(args[0])))
        else:
            pick = min if node.fn == "MIN" else max
            reached.add((name, i, pick(range(len(args)), key=args.__getitem__)))
    return reached


def plan_outcomes(plan: dict) -> set:
    """What a plan reaches: each option's kind (acquisition, price type, interruptible, commitment, fit, tightness,
    within the tolerance, machines, parallel layout, capital and outlay), every reason an option is refused, and the
    recommendation's kind (none when nothing is acceptable)."""
    fields = ("acquire", "price_type", "interruptible", "commitment_months", "fits", "tight", "ok", "within_tolerance",
              "machines", "pipeline_parallel", "expert_parallel", "network_slowdown", "capital_usd", "outlay_usd",
              "own_hours_per_day")
    reached = set()
    for option in plan["options"]:
        reached |= {("option", f, _kind(getattr(option, f, None))) for f in fields}
        reached |= {("reason", str(r).split(":")[0][:30]) for r in option.reasons or ()}  # its kind, not its figures
    rec = plan["recommended"]
    reached |= ({("recommended", None)} if rec is None else
                {("recommended", f, _kind(getattr(rec, f, None))) for f in ("acquire", "price_type", "interruptible", "tight")})
    return reached


def _kind(value) -> str:
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, (int, float)):
        return _sign(value)
    return value if isinstance(value, str) and len(value) < 25 else type(value).__name__


def left_out_adds_nothing(outcomes: list[set], kept) -> list:
    """The indices of ``outcomes`` not in ``kept`` that reach an outcome no kept one reaches (empty: nothing lost)."""
    covered = set().union(*(outcomes[i] for i in kept))
    return [(i, sorted(map(str, outcomes[i] - covered))[:3]) for i in range(len(outcomes)) if i not in kept and outcomes[i] - covered]
