"""``gpu-tco`` with no command: the main job (the usual setups compared, the recommendation, the workbook)."""
from __future__ import annotations

import argparse
import json

from .common import _collect_inputs, _jsonable, _money, table
from .plan import _serve_plan


def _main_table(rows: list[dict]) -> str:
    """The main job's table: one row per setup and method; a missing price reads "no offer" or "no price", never 0."""
    from ..core import NO_OFFER, NO_PRICE, fit_word
    body = []
    for r in rows:
        need = str(r["gpus_needed"]) if r["gpus_needed"] else "never"
        star = {"rent": "<- rent", "buy": "<- buy"}.get(r["recommended"], "")
        fits = fit_word(r["fits"], r["tight"], r["may_exceed"]) if r["fits"] else "NO"  # (a setup that does not fit stands out)
        rent = _money(r["rent_usd"]) if r["rent_priced"] else NO_OFFER
        own = _money(r["own_usd"]) if r["own_priced"] else NO_PRICE
        body.append([f"{r['n_gpus']}x {r['gpu']}", r["method"], fits,
                     f"{r['peak_gib_per_gpu']:.1f} / {r['gpu_memory_gib']:.0f}", need,
                     f"{r['job_hours']:.1f}" if r["fits"] else "-",
                     rent, f"{r['rent_usd_per_gpu_hour']:.2f}" if r["rent_priced"] else NO_OFFER,
                     own, _money(r["capital_usd"]) if r["own_priced"] else NO_PRICE, star])
    return table(["setup", "method", "fits", "peak GiB/GPU", "GPUs needed", "job hours", "rent USD",
                  "rent USD/GPU-h", "own USD (job's share)", "capital USD", "pick"], body)


def cmd_main(ns) -> int:
    from ..core import COMPARED_METHODS as METHODS
    from ..core import (
        DEFAULT_JOB,
        check_input,
        compared_setups,
        likely_hours_text,
        named_offer,
        packed_documents_text,
        resolve_inputs,
        worded_recommendations,
    )
    from ..core import compare_setups as compare

    job = _collect_inputs(ns)
    if "task" in job and check_input("task", job["task"]) == "serve":
        return _serve_main(ns, job)
    j = {**DEFAULT_JOB, **job}
    a = resolve_inputs(j)  # every input checked before anything is printed
    target = None
    if ns.workbook:
        from ..workbooks.xlsx import check_target
        target = check_target(ns.workbook)
    # a named offer (not auto) rents one GPU type: the setups compared and the recommendation are on that offer
    offer = named_offer(j)
    setups = compared_setups(j)
    methods = (a["method"],) if "method" in job else METHODS
    worded = worded_recommendations(job, methods)
    picks = {m: rec.option for m, rec in worded.items()}
    rows = compare(job, setups=setups, methods=methods, picks=picks)
    if ns.json:
        clean = lambda o: {k: _jsonable(v) for k, v in o.items()} if o else None  # noqa: E731
        print(json.dumps({"job": {k: _jsonable(v) for k, v in j.items()},
                          "rows": [{k: _jsonable(v) for k, v in r.items()} for r in rows],
                          "recommended": {m: clean(o) for m, o in picks.items()},
                          "answer": {m: list(rec.sentences) for m, rec in worded.items()},
                          "workbook": str(target.resolve()) if target else None}, indent=2))
    else:
        print(f"gpu-tco: fine-tuning {a['model']} with {a['framework']} on {a['tokens'] * a['epochs']:,.0f} tokens "
              f"(seq {a['seq_len']}{packed_documents_text(a)}, micro-batch {a['micro_batch']}, {a['sharding']}, recompute {a['recompute']}, "
              f"{a['precision']}, {a['optimizer']})")
        print()
        print(_main_table(rows))
        # a recommended row runs the planner's layout (plain data parallel where the model fits one GPU): say so
        from ..core import sharding_name
        for sharding in dict.fromkeys(r["sharding"] for r in rows if r["sharding"] != a["sharding"]):
            mine = [f"{r['n_gpus']}x {r['gpu']} {r['method']}" for r in rows if r["sharding"] == sharding]
            print(f"{', '.join(mine)}: {sharding_name(sharding)}, the planner's choice; the other rows {a['sharding']}.")
        print()
        from ..core import what_would_fit
        for r in rows:  # the cheapest change that makes a setup fit, as the recipes people use name it
            if not r["fits"]:
                change = what_would_fit({**j, "method": r["method"], "gpu": r["gpu"], "n_gpus": r["n_gpus"], "offer": r["offer"]})
                if change is not None:
                    print(f"{r['n_gpus']}x {r['gpu']} {r['method']} does not fit; it {change.sentence()}.")
        print()
        for m in methods:
            if picks[m] is None:
                where = f"through {offer}; see `gpu-tco plan --method {m} --gpus {setups[0][0]} --all`" if offer else \
                    f"on any GPU; see `gpu-tco plan --method {m} --all`"
                print(f"Recommended for {m}: nothing acceptable {where}.")
                continue
            print(f"Recommended for {m}: {worded[m].text}")
            print(f"  {likely_hours_text(picks[m], a['framework'])}")
        print()
        _print_rule(a, offer, setups)
    if target is not None:
        from ..workbooks import write_workbook
        path = write_workbook(target, job)
        if not ns.json:
            print(f"Workbook (every number a live Excel formula): {path.resolve()}")
    return 0


def _print_rule(a: dict, offer: str | None, setups) -> None:
    """The recommendation rule and what each column means, for the resolved inputs ``a`` (``offer``: the one offer the
    job names, whose GPU the table ``setups`` compares)."""
    from ..core import HOST_MEMORY_USABLE, NO_OFFER, job_hours_text, ranks_purchases
    if offer:
        how = f"renting through {offer}" + (" or buying its GPUs" if ranks_purchases(a) else "")
    elif ranks_purchases(a):
        how = (f"renting through every cloud offer or buying (bought GPUs busy {a['owned_busy_hours_per_day'] or a['hours_per_day']:g} "
               f"hours a day over {a['months']:g} months)")
    else:
        how = ("renting through every cloud offer (a one-off job: --owned-busy-hours-per-day H for GPUs that stay busy "
               "after it, or --consider-buying 1, ranks purchases too)")
    print(f"Recommended = the cheapest option that fits (tensors at most {100 - a['memory_margin_pct']:g} % of the GPU's "
          f"memory, the device total within it, states offloaded to CPU memory within {100 * HOST_MEMORY_USABLE:g} % of the machine's; tight: above 90 %; may not fit: the likely peak above the memory), has a price, meets the deadline and budget, over every {'count' if offer else 'GPU, count'} and {how}; within "
          f"{a['cost_tolerance_pct']:g} % of the cheapest (the cheapest whose likely peak fits the memory: a setup that may run out of "
          "memory never wins on price), room to spare in memory, then renting, then fewer machines, then fewer hours, "
          "then fewer GPUs win. "
          + (f"The table shows {setups[0][0]}, the GPU {offer} rents, at the usual counts." if offer
             else "The table shows the usual setups.")
          + " A setup that fits only with a change to the job (a \"fits with\" line: offload, a chunked loss, shorter "
            "sequences) is not ranked: the recommendation is for the job as given.")
    if not a["allow_interruptible"]:
        print("Interruptible (spot) offers are not recommended, since the provider can stop them at any time; "
              "--allow-interruptible 1 includes them.")
    print(f"GiB = 2^30 bytes. Job hours = {job_hours_text(a)}. 'GPUs needed' = smallest count that fits ({a['sharding']}).")
    print("Rent = each setup at the offer the recommendation rule picks for it (column rent USD/GPU-h; `gpu-tco offers`; "
          f"'{NO_OFFER}': none rents it), billed per increment, plus {a['storage_gb']:g} GB storage; a row marked <- is the "
          "recommendation, with its own offer, hours and cost. Job hours: the rental's, or the purchase's on a row marked <- buy.")
    print(f"Own = share of the total cost of owning for {a['months']:g} months at {a['hours_per_day']:g} h/day: GPUs + "
          f"{a['server_overhead_pct']:g} % server, {a['pue']:g} PUE at ${a['usd_per_kwh']:g}/kWh, colocation "
          f"${a['colo_usd_per_kw_month']:g}/kW-month, {a['maintenance_pct_per_year']:g} %/year upkeep, "
          f"{a['value_loss_pct_per_year']:g} %/year value loss.")
    print("Every assumption is an input (--hours-per-day, --usd-per-kwh, ...). Formulas and sources: "
          "gpu-tco explain QUANTITY, docs/quantities.md.")


def _serve_main(ns, job: dict) -> int:
    """gpu-tco with a serving scenario: the serving planner's answer as `gpu-tco plan --task serve` prints it (the
    first options), then the serving workbook when --workbook names one."""
    target = None
    if ns.workbook:
        from ..workbooks.xlsx import check_target
        target = check_target(ns.workbook)
    _serve_plan(argparse.Namespace(**{**vars(ns), "gpus": None, "top": 15, "all": False}), job)
    if target is not None:
        from ..workbooks import write_workbook
        path = write_workbook(target, job, gpus=getattr(ns, "scenario_gpus", None))
        if not ns.json:
            print(f"Workbook (every number a live Excel formula): {path.resolve()}")
    return 0


MAIN_QUANTITIES = ["option_cost_usd", "option_ok", "option_hours", "option_usd_per_mtok_train", "peak_train_gib_per_gpu",
                   "gpu_memory_gib", "gpus_needed", "train_hours", "job_wall_hours", "mfu_effective", "rent_usd_per_gpu_hour",
                   "own_usd_per_gpu_hour", "own_capital_usd", "payback_months", "verdict_code"]
