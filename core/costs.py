"""Cost views built from the formula layer's quantities (no formula lives here).

``breakeven_series`` sweeps ``at_month`` through one vectorised evaluation:
the same ``own_cumulative_usd`` / ``rent_cumulative_usd`` quantities the
workbook's break-even sheet computes row by row.
"""
from __future__ import annotations

from typing import Mapping

import numpy as np

from .auto import AUTO_QUANTITY
from .engine import evaluate, resolve_inputs


def breakeven_series(inputs: Mapping | None = None) -> dict[str, list[float]]:
    """Cumulative cash spent owning and renting at month 0, 1, ..., months (USD).

    Owning starts at capital + setup and grows by its running costs; renting
    grows by the rent of the same working hours (see docs/quantities.md).
    """
    values = resolve_inputs(inputs)  # checks that inputs is a mapping of valid inputs first
    inputs = dict(inputs) if inputs is not None else {}
    months = int(np.ceil(values["months"]))
    inputs["at_month"] = np.arange(months + 1, dtype=float)
    res = evaluate(inputs, outputs=("own_cumulative_usd", "rent_cumulative_usd"))
    return {"month": inputs["at_month"].tolist(),
            "own_cumulative_usd": np.asarray(res["own_cumulative_usd"], dtype=float).tolist(),
            "rent_cumulative_usd": np.asarray(res["rent_cumulative_usd"], dtype=float).tolist()}


# inputs whose 0 means "automatic": perturb the value actually used instead
_EFFECTIVE = AUTO_QUANTITY
SENSITIVITY_INPUTS = ("hours_per_day", "months", "usd_per_kwh", "purchase_usd_per_gpu", "usd_per_gpu_hour_rented", "mfu",
                      "tokens", "epochs", "debug_overhead_pct", "server_overhead_pct", "value_loss_pct_per_year",
                      "maintenance_pct_per_year", "colo_usd_per_kw_month", "pue", "storage_gb", "seq_len")


def sensitivities(option_inputs: Mapping, change: float = 0.2, top: int = 5) -> list[dict]:
    """The inputs that move an option's job cost (``option_cost_usd``) most when each is raised by
    ``change`` (20 %): [{input, value, cost_change_usd, cost_change_pct}], largest first.

    Each candidate input is raised on its own, all of them in one vectorised evaluation (row k
    raises input k); an input whose 0 means "from the catalog" is raised from the value actually
    used; inputs at the top of their range, or that leave the cost unchanged, are left out."""
    from .inputs import BY_NAME
    from .validation import check_number

    base_inputs = dict(option_inputs)
    used = resolve_inputs(base_inputs)
    base = evaluate(base_inputs, outputs=("option_cost_usd", *_EFFECTIVE.values()))
    raised: dict[str, tuple[float, float, float]] = {}  # input -> (value used, raised value, value given)
    for name in SENSITIVITY_INPUTS:
        inp = BY_NAME[name]
        # the automatic MFU in use is the whole step's (mfu_whole_step), what a typed MFU stands for
        value = float(used[name]) or float(base.get(_EFFECTIVE.get(name, ""), 0.0))
        up = float(round(value * (1 + change))) if inp.kind == "integer" else value * (1 + change)
        try:
            check_number(inp, up)
        except ValueError:  # at the top of its range
            continue
        raised[name] = (value, up, float(used[name]))
    if not raised:
        return []
    names = list(raised)
    sweep = {**base_inputs}
    for k, name in enumerate(names):
        # the other rows keep the value given (0 = automatic stays automatic), so only row k differs from the base
        column = np.full(len(names), raised[name][2])
        column[k] = raised[name][1]
        sweep[name] = column
    costs = evaluate(sweep, outputs=("option_cost_usd",))["option_cost_usd"]
    results = []
    for name, cost in zip(names, costs):
        delta = float(cost) - base["option_cost_usd"]
        if delta and np.isfinite(delta):
            results.append({"input": name, "value": raised[name][0], "cost_change_usd": delta,
                            "cost_change_pct": delta / base["option_cost_usd"] * 100 if base["option_cost_usd"] else 0.0})
    results.sort(key=lambda r: -abs(r["cost_change_usd"]))
    return results[:top]
