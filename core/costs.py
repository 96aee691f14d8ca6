"""Cost views built from the formula layer's quantities (no formula lives here).

``breakeven_series`` sweeps ``at_month`` through one vectorised evaluation:
the same ``own_cumulative_usd`` / ``rent_cumulative_usd`` quantities the
workbook's break-even sheet computes row by row.
"""
from __future__ import annotations

from typing import Mapping

import numpy as np

from .engine import evaluate, resolve_inputs


def breakeven_series(inputs: Mapping | None = None) -> dict[str, list[float]]:
    """Cumulative cash spent owning and renting at month 0, 1, ..., months (USD).

    Owning starts at capital + setup and grows by its running costs; renting
    grows by the rent of the same working hours (see docs/quantities.md).
    """
    inputs = dict(inputs or {})
    months = int(np.ceil(resolve_inputs(inputs)["months"]))
    inputs["at_month"] = np.arange(months + 1, dtype=float)
    res = evaluate(inputs, outputs=("own_cumulative_usd", "rent_cumulative_usd"))
    return {"month": inputs["at_month"].tolist(),
            "own_cumulative_usd": np.asarray(res["own_cumulative_usd"], dtype=float).tolist(),
            "rent_cumulative_usd": np.asarray(res["rent_cumulative_usd"], dtype=float).tolist()}
