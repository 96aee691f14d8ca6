"""``gpu-tco tco`` and ``gpu-tco breakeven``: owning a setup, and buying against renting."""
from __future__ import annotations

import json

from .common import _collect_inputs, _jsonable, _money, _value_text, table


def _report(ns, title: str, names: list[str], inputs: dict | None = None) -> int:
    """A titled table of quantities (value, unit, meaning); ``inputs`` when the caller collected them."""
    from ..core import PRICE_FLAGS, evaluate, resolve_inputs
    from ..core import require_prices as require
    inputs = _collect_inputs(ns) if inputs is None else inputs
    res = evaluate(inputs, outputs=[*names, *PRICE_FLAGS])
    used = resolve_inputs(inputs)
    require({**used, **res}, names)  # a missing price is an error naming the input, never a $0 line
    from ..core import unsold_purchase_text
    unsold = unsold_purchase_text(str(used["gpu"]), float(used["n_gpus"]))
    if ns.json:
        print(json.dumps({"inputs": {k: _jsonable(v) for k, v in used.items() if "__" not in k},
                          "results": {n: _jsonable(res[n]) for n in names},
                          **({"not_sold_in_that_size": unsold} if unsold else {})}, indent=2))
        return 0
    print(title.format(**used))
    if unsold:  # said before the figures: an expert reading "2x B200 bought" would stop there
        print(unsold)
    print()
    import textwrap

    from ..core import QUANTITIES
    # a code is for machines (--json); the text says it in words below the table (the verdict)
    shown = [n for n in names if QUANTITIES[n].unit != "code"]
    print(table(["quantity", "value", "unit", "meaning"],
                [[n, _value_text(n, res[n]), QUANTITIES[n].unit, textwrap.fill(QUANTITIES[n].description, 64)] for n in shown],
                align=["<", ">", "<", "<"]))
    from ..core import SERVE_CONSUMER_LICENSE, consumer_gpu
    if consumer_gpu(str(used["gpu"])):  # owning GeForce cards: where they may run is the buyer's first question
        print("\n" + SERVE_CONSUMER_LICENSE.format(gpu=used["gpu"]) + ".")
    print(f"\ngpu-tco explain QUANTITY shows how one is computed, with its source (for example: gpu-tco explain {shown[-1]}).")
    return 0


TCO_LINES = ["own_gpu_capital_usd", "own_server_capital_usd", "own_network_capital_usd", "own_capital_usd", "own_setup_usd",
             "own_energy_usd", "own_fixed_usd", "own_residual_usd", "own_tco_usd", "own_tco_pv_usd", "own_hours_used",
             "own_utilization", "own_usd_per_gpu_hour", "own_avg_kw", "own_energy_usd_per_gpu_hour"]
BREAKEVEN_LINES = ["rent_usd_per_gpu_hour", "own_usd_per_gpu_hour", "rent_usd_per_month", "own_running_usd_per_month",
                   "payback_months", "breakeven_gpu_hours", "breakeven_hours", "breakeven_utilization", "verdict_code"]


def cmd_tco(ns) -> int:
    return _report(ns, "gpu-tco tco: owning {n_gpus}x {gpu} for {months:g} months at {hours_per_day:g} h/day "
                       "({depreciation} depreciation, ${usd_per_kwh:g}/kWh, PUE {pue:g})", TCO_LINES)


def cmd_breakeven(ns) -> int:
    from ..core import PRICE_FLAGS, breakeven_series, cheaper_listed_offer, evaluate, payback_text, resolve_inputs, verdict_text
    from ..core import require_prices as require
    inputs = _collect_inputs(ns)
    res = evaluate(inputs, outputs=[*BREAKEVEN_LINES, *PRICE_FLAGS])
    used = resolve_inputs(inputs)
    require({**used, **res}, BREAKEVEN_LINES)
    series = breakeven_series(inputs)
    cheaper = cheaper_listed_offer(inputs)
    if ns.json:
        from ..core import unsold_purchase_text
        unsold = unsold_purchase_text(str(used["gpu"]), float(used["n_gpus"]))
        print(json.dumps({"inputs": {k: _jsonable(v) for k, v in used.items() if "__" not in k},
                          "results": {n: _jsonable(res[n]) for n in BREAKEVEN_LINES},
                          **({"not_sold_in_that_size": unsold} if unsold else {}),
                          "verdict": verdict_text(res["verdict_code"]),
                          "cheaper_listed_offer": cheaper,
                          "series": {k: [_jsonable(x) for x in v] for k, v in series.items()}}, indent=2))
        return 0
    _report(ns, "gpu-tco breakeven: buy {n_gpus}x {gpu} or rent from " + used["offer"]
            + " ({hours_per_day:g} h/day for {months:g} months)", BREAKEVEN_LINES, inputs)
    print()
    print(f"Verdict: {verdict_text(res['verdict_code'])}{payback_text(res, used)}")
    if cheaper:
        print(f"Renting is priced at {used['offer']} (${res['rent_usd_per_gpu_hour']:.2f} per GPU-hour), the cheapest "
              f"on-demand offer; the cheapest offer listed for {int(used['n_gpus'])} GPUs is {cheaper['offer']} "
              f"({cheaper['price_type']}, ${cheaper['usd_per_gpu_hour']:.2f}): --offer \"{cheaper['offer']}\" compares buying "
              "with it.")
    print()
    step = max(1, len(series["month"]) // 12)
    rows = [[int(m), _money(o), _money(r), "own" if o < r else "rent"]
            for m, o, r in list(zip(series["month"], series["own_cumulative_usd"], series["rent_cumulative_usd"]))[::step]]
    print(table(["month", "own, cumulative", "rent, cumulative", "cheaper"], rows))
    if float(used["discount_rate_pct"]) > 0:  # the payback above is discounted, this table is not
        print(f"The table counts cash as it is spent, not discounted; the payback above counts it at its present value "
              f"({float(used['discount_rate_pct']):g} % a year), so it comes later than the month owning turns cheaper here.")
    return 0
