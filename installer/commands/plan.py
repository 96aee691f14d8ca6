"""``gpu-tco plan``: every way to run a job, ranked (training or serving)."""
from __future__ import annotations

import json

from ..core import number_text, packed_documents_text
from .common import _collect_inputs, _jsonable, _money, table


def cmd_plan(ns) -> int:
    from ..core import check_input, plan
    from ..core import plan_scope as scope

    given = _collect_inputs(ns)
    if "task" in given and check_input("task", given["task"]) == "serve":
        return _serve_plan(ns, given)
    # a gpu, n_gpus or offer the inputs name narrows the search (one GPU type, a fixed count, one offer)
    job, where = scope(given, ns.gpus.split(",") if ns.gpus else getattr(ns, "scenario_gpus", None))
    result = plan(job, **where, alike_kept=_kept(ns))
    if ns.json:
        clean = lambda o: {k: _jsonable(v) for k, v in o.items()}  # noqa: E731
        print(json.dumps({"job": {k: _jsonable(v) for k, v in result["job"].items()},
                          "recommended": clean(result["recommended"]) if result["recommended"] else None,
                          "options": [clean(o) for o in result["options"]],
                          "rejected_counts": result["rejected_counts"],
                          **({"offers_left_out": result["offers_left_out"]} if result["offers_left_out"] else {})}, indent=2))
        return 0
    job = result["job"]
    print(f"gpu-tco plan: {job['method']} {job['model']} with {job['framework']}, "
          f"{job['tokens'] * job['epochs']:,.0f} tokens, seq {job['seq_len']:g}{packed_documents_text(job)}, "
          f"micro-batch {job['micro_batch']:g}" + (f", deadline {job['deadline_hours']:g} h" if job["deadline_hours"] else "")
          + (f", budget ${job['budget_usd']:,.0f}" if job["budget_usd"] else ""))
    print()
    ok = [o for o in result["options"] if o["ok"]]
    shown = ok[: ns.top]
    body = [[i + 1, f"{o['n_gpus']}x {o['gpu']}", "buy" if o["acquire"] == "buy" else o["offer"],
             f"{o['peak_gib_per_gpu']:.1f}" + (" may not fit" if o["may_exceed"] else " tight" if o["tight"] else ""), f"{o['hours']:.1f}",
             f"{o['usd_per_gpu_hour']:.2f}", _money(o["cost_usd"]),
             f"{o['usd_per_mtok_train']:.2f}", _money(o["outlay_usd"])] for i, o in enumerate(shown)]
    if body:
        print(table(["#", "setup", "rent offer / buy", "peak GiB/GPU", "hours", "USD/GPU-h", "job cost", "USD/Mtok", "cash needed"], body))
        from ..core import ranks_purchases
        if not ranks_purchases(result["inputs"]):
            print("A one-off job: rentals only (--owned-busy-hours-per-day H for GPUs that stay busy after it, or "
                  "--consider-buying 1, ranks purchases too).")
    rec = result["recommended"]
    print()
    if rec:
        from ..core import compose_recommendation as compose
        from ..core import likely_hours_text
        print(f"Recommended: {compose(result).text}")
        print(f"{likely_hours_text(rec, job['framework']).capitalize()}; docs/training.md.")
    else:  # core's sentences, as the form, the e-mail draft and the workbook say them
        from ..core import compose_recommendation as compose
        print(compose(result).text)
    print(f"{len(ok)} of {len(result['options'])} options acceptable; rejected: "
          + (", ".join(f"{k} {v}" for k, v in result["rejected_counts"].items()) or "none") + ".")
    _left_out(result, _kept(ns))
    if ns.all:
        print()
        from ..core import option_inputs, what_would_fit
        fit_text: dict = {}  # the cheapest change that makes it fit, per GPU and count (the first 12 of them)
        for o in result["options"]:
            key = (o["gpu"], o["n_gpus"])
            if not o["ok"] and not o["fits"] and o["n_gpus"] and key not in fit_text and len(fit_text) < 12:
                change = what_would_fit(option_inputs(result["given"], o, result["price_gpu"]))
                fit_text[key] = f"; it {change.sentence()}" if change else ""
        rej = [[f"{o['n_gpus']}x {o['gpu']}" if o["n_gpus"] else o["gpu"], o["acquire"] if o["acquire"] != "rent" else o["offer"],
                "; ".join(o["reasons"]) + (fit_text.get((o["gpu"], o["n_gpus"]), "") if not o["fits"] else "")]
               for o in result["options"] if not o["ok"]]
        print(table(["setup", "rent offer / buy", "why not"], rej, align=["<", "<", "<"]))
    else:
        print("Rejected options and why: --all. Interruptible (spot) offers include re-work; owned costs are the job's share at the usage pattern.")
    return 0


def _serve_plan(ns, given: dict) -> int:
    """gpu-tco plan --task serve: the serving planner's options, its answer and the reasons others fail."""
    from ..core import serve_option_text, serve_plan

    gpus = ns.gpus.split(",") if ns.gpus else getattr(ns, "scenario_gpus", None)
    result = serve_plan(given, gpus=gpus, alike_kept=_kept(ns))
    if ns.json:
        clean = lambda o: {k: _jsonable(v) for k, v in o.items()} if o is not None else None  # noqa: E731
        print(json.dumps({"task": "serve", "job": {k: _jsonable(v) for k, v in result["job"].items()},
                          "demand": result["demand"], "api": result["api"], "choice": result["choice"],
                          "recommendation": result["recommendation"], "recommended": clean(result["recommended"]),
                          "best_rent": clean(result["best_rent"]), "best_buy": clean(result["best_buy"]),
                          "rent_beats_api_mtok_per_month": result["rent_beats_api_mtok_per_month"],
                          "buy_beats_api_mtok_per_month": result["buy_beats_api_mtok_per_month"],
                          "options": [clean(o) for o in result["options"]],
                          "rejected_counts": result["rejected_counts"], "engine": result["engine"],
                          "launch": result["launch"],
                          **({"offers_left_out": result["offers_left_out"]} if result["offers_left_out"] else {})}, indent=2))
        return 0
    i = result["inputs"]
    targets = ", ".join(t for t in (f"first token within {number_text(i['ttft_slo_ms'])} ms" if i["ttft_slo_ms"] else "",
                                    f"{number_text(i['tpot_slo_ms'])} ms per token" if i["tpot_slo_ms"] else "") if t) or "no latency targets"
    print(f"gpu-tco plan (serving): {i['model']}, {number_text(result['demand']['requests_per_s'])} requests/s of {number_text(i['prompt_tokens'])} prompt + "
          f"{number_text(i['output_tokens'])} output tokens, {number_text(i['hours_per_day'])} h/day; {targets}")
    print()
    ok = [o for o in result["options"] if o.ok]
    body = [[n + 1, serve_option_text(o).split(" from ")[0].removeprefix("rent ").removeprefix("buy "),
             "buy" if o.acquire == "buy" else o.offer, o.batch, f"{o.ttft_at_load_ms:,.0f}", f"{o.tpot_ms:.1f}",
             f"{o.load_fraction:.0%}", o.gpus_bought if o.acquire == "buy" else o.gpus_total,
             f"{o.usd_per_mtok_input:.3f}", f"{o.usd_per_mtok_output:.3f}", _money(o.usd_per_month)]
            for n, o in enumerate(ok[: ns.top])]
    if body:
        print(table(["#", "setup (replicas x GPUs, weights)", "rent offer / buy", "batch", "TTFT ms (queued)", "TPOT ms",
                     "load", "GPUs", "USD/Mtok in", "USD/Mtok out", "USD/month"], body))
        print()
    print(result["recommendation"])
    if result["launch"]:
        print("Start one replica with:")
        first = result["launch"][0]
        for item in result["launch"]:
            # an equivalent's own assumptions (TensorRT-LLM's FP8 checkpoint, llama.cpp's GGUF file) under its line
            extra = "; ".join(n for n in item["note"].split("; ") if n not in first["note"].split("; "))
            print(f"  {item['command']}" + (f"\n    ({extra})" if item is not first and extra else ""))
        print(f"  ({first['note']}; the first line is {result['engine'].split(' (')[0]}, then the equivalents)")
    print(f"{len(ok)} of {len(result['options'])} options acceptable; rejected: "
          + (", ".join(f"{k} {v}" for k, v in result["rejected_counts"].items()) or "none") + ".")
    _left_out(result, _kept(ns))
    if ns.all:
        print()
        rej = [[f"{o.n_gpus}x {o.gpu} ({o.weights_dtype})", o.acquire if o.acquire != "rent" else o.offer, "; ".join(o.reasons)]
               for o in result["options"] if not o.ok]
        print(table(["setup", "rent offer / buy", "why not"], rej, align=["<", "<", "<"]))
    else:
        print("Rejected options and why: --all. Per-token time at full load (the batch each replica runs); first token with its "
              "queueing wait at the planned load; costs for the traffic hours; bought setups are whole servers.")
    return 0


def _kept(ns) -> int:
    """Offers alike the planners keep (core.planned_offers): enough that the listed options are those of every offer."""
    from ..core import offers_kept_for
    return offers_kept_for(ns.top)


def _left_out(result, kept: int) -> None:
    """The line on offers the planner left out (none: no line)."""
    if result.get("offers_left_out"):
        print(f"{result['offers_left_out']:,} more offers left out: each costs at least as much as {kept} other "
              "offers of the same machine (GPU, GPUs per machine, network, billing and terms), so none of them could rank "
              f"among the first {kept}.")


CHOSEN_BY_THE_TOOL = {"gpu", "n_gpus", "offer", "buy"}  # the main job and the planner choose these themselves
