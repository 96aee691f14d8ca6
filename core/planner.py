"""Job planner: every GPU type x count x way to get it, in one vectorised evaluation.

The planner only enumerates and ranks; every number it reports is a quantity of the
formula layer (``option_cost_usd``, ``option_hours``, ``option_ok``, ...), so the
workbook and the Excel functions show the same values.

The ranking rule is defined once, here (``RANKING``, ``rank_key``): acceptable options
(``option_ok``: fits in memory, has a price, an allowed offer, meets the deadline and the
budget) come first, the cheapest job cost first; ties go to the option listed first
(GPU catalog order, then count, then offer catalog order, renting before buying).
Interruptible (spot) offers are listed but only eligible with ``allow_interruptible`` = 1.
The main job, GPU_PLAN and the workbook's Compare sheet all name ``plan(job)["recommended"]``.
"""
from __future__ import annotations

import math
from typing import Mapping

import numpy as np

from . import catalog
from .engine import evaluate, resolve_inputs
from .errors import InputError
from .formulas import VERDICTS
from .inputs import BY_NAME
from .validation import check_number

# counts tried above the smallest that fits: the minimum, then doublings up to this multiple (at least 8 GPUs)
COUNT_MULTIPLE = 4
HISTORICAL = "historical"
# why an option is not acceptable, checked in this order: (flag quantity, word); the workbook's
# Compare sheet shows the first failing word
REJECTIONS = (("fits_train", "does not fit"), ("option_priced", "no price"),
              ("option_offer_allowed", "spot not allowed"),
              ("option_meets_deadline", "too slow"), ("option_within_budget", "over budget"))
# what the planner reports for each option: only these are computed
PLAN_OUTPUTS = ("peak_train_gib_per_gpu", "gpu_memory_gib", "option_hours", "option_outlay_usd", "option_cost_usd",
                "option_usd_per_mtok_train", "own_usd_per_gpu_hour", "rent_usd_per_gpu_hour", "option_ok",
                *(flag for flag, _ in REJECTIONS))
RANKING = ("acceptable options first (option_ok); then the lowest job cost (option_cost_usd); "
           "ties go to the option listed first (GPU catalog order, count, offer catalog order, renting before buying)")


def _reason(word: str, r: Mapping, j: int, base: Mapping, buy: bool) -> str:
    """Why option ``j`` fails the check ``word``, with its numbers."""
    if word == "no price":
        return "no price: " + ("no purchase price in the catalog" if buy else "the offer has no rental price")
    if word == "spot not allowed":
        return "spot not allowed: an interruptible offer (allow_interruptible = 1 considers it)"
    detail = {
        "does not fit": lambda: f"{r['peak_train_gib_per_gpu'][j]:.1f} GiB/GPU > {r['gpu_memory_gib'][j]:.0f} GiB",
        "too slow": lambda: f"{r['option_hours'][j]:.1f} h > deadline {base['deadline_hours']:g} h",
        "over budget": lambda: f"${r['option_outlay_usd'][j]:,.0f} > ${base['budget_usd']:,.0f}",
    }[word]()
    return f"{word}: {detail}"


def rank_key(option: Mapping) -> tuple:
    """The one ranking rule (see RANKING): sort options by this key, the first is recommended."""
    ok = bool(option["ok"])
    return (not ok, option["cost_usd"] if ok else float("inf"), option["order"])


def _counts(minimum: int) -> list[int]:
    top = max(8, minimum * COUNT_MULTIPLE)
    counts, n = [minimum], 1
    while n <= top:
        if n > minimum:
            counts.append(n)
        n *= 2
    return counts


def _offers_by_gpu() -> dict[int, list[int]]:
    tabs = catalog.tables()
    offers = tabs["offers"]
    gpu_rows = catalog.offer_gpu_rows()
    out: dict[int, list[int]] = {}
    for i, row in enumerate(offers.rows):
        if gpu_rows[i] >= 0 and HISTORICAL not in str(row["price_type"]) and row["usd_per_gpu_hour"] > 0:
            out.setdefault(int(gpu_rows[i]), []).append(i)
    return out


def plan(job: Mapping | None = None, gpus: list[str] | None = None, include_buy: bool = True,
         count: int | None = None, offer: str | None = None) -> dict:
    """Rank every way to run ``job`` (inputs as for ``core.evaluate``).

    The scope: ``gpus`` (GPU names; default every GPU in the catalog), ``count`` (a fixed
    GPU count; default the smallest that fits, then doublings), ``offer`` (one rental offer;
    default every priced offer of each GPU) and ``include_buy``.
    Returns ``{"job", "inputs", "options", "recommended", "rejected_counts"}`` (``inputs``: every input as
    resolved for the job, at a GPU count the planner may choose): options sorted
    with acceptable ones first (cheapest first), each with ``ok`` and, when not ok,
    ``reasons`` (does not fit / no price / too slow / over budget).
    """
    if job is not None and not isinstance(job, Mapping):
        raise InputError("job", job, "must be a mapping of input names to values, e.g. {\"model\": \"Llama-3-8B\"}")
    if isinstance(gpus, str):
        gpus = [gpus]  # one GPU named
    if gpus is not None and (not isinstance(gpus, (list, tuple)) or not all(isinstance(g, str) for g in gpus)):
        raise InputError("gpus", gpus, "must be a list of GPU names, e.g. [\"H100-SXM\", \"L40S\"]")
    job = dict(job or {})
    if count is not None:
        if isinstance(count, bool) or not isinstance(count, (int, np.integer, float)) or not math.isfinite(count) \
                or count != int(count) or not 1 <= count <= BY_NAME["n_gpus"].maximum:
            raise InputError("n_gpus", count, f"allowed: {BY_NAME['n_gpus'].allowed()}")
        count = int(count)
    for key in ("gpu", "n_gpus", "offer", "buy"):
        if key in job:
            raise InputError(key, job[key], "is chosen by the planner; restrict GPUs with gpus=[...] instead")
    # validates the job once, with field names in messages; the GPU count is the planner's to choose, so the
    # job is checked at a count the tensor-parallel degree divides (the default 8 need not be one)
    tp = int(check_number(BY_NAME["tensor_parallel"], job["tensor_parallel"])) if "tensor_parallel" in job else 1
    if count is not None and count % tp:
        raise InputError("n_gpus", count, f"must be a multiple of tensor_parallel ({tp})")
    base = resolve_inputs({**job, "n_gpus": count or tp})
    tabs = catalog.tables()
    gpu_table = tabs["gpus"]
    gpu_names = [gpu_table.canonical(g, "gpu") for g in gpus] if gpus else list(gpu_table.names)
    gpu_names = list(dict.fromkeys(gpu_names))  # a GPU named twice is one GPU
    chosen_offer = None
    if offer is not None and not (isinstance(offer, str) and offer.strip().lower() == catalog.AUTO_OFFER):
        if not isinstance(offer, str):
            raise InputError("offer", offer, "must be an offer name (gpu-tco offers lists them) or auto")
        chosen_offer = tabs["offers"].resolve(offer, "offer")

    # 1. the smallest count of each GPU that fits (one vectorised call)
    need = evaluate({**job, "gpu": gpu_names, "n_gpus": count or tp}, outputs=("gpus_needed",))["gpus_needed"]

    # 2. enumerate GPU x count x (each offer, or buying)
    offers = _offers_by_gpu()
    o_gpu, o_n, o_offer, o_buy = [], [], [], []
    never = []
    for g, k in zip(gpu_names, need):
        k = int(k)
        if k <= 0 and count is None:
            never.append(g)
            continue
        row = gpu_table.find(g)
        mine = offers.get(row, [])
        if chosen_offer is not None:  # one offer: rent only through it (for the GPU it rents out)
            mine = [chosen_offer] if catalog.offer_gpu_rows()[chosen_offer] == row else []
        for n in ([count] if count is not None else _counts(k)):
            for off in mine:
                o_gpu.append(g), o_n.append(n), o_offer.append(tabs["offers"].names[off]), o_buy.append(0)
            if include_buy:
                o_gpu.append(g), o_n.append(n), o_offer.append(catalog.AUTO_OFFER), o_buy.append(1)
    options: list[dict] = []
    if o_gpu:
        sweep = {**job, "gpu": o_gpu, "n_gpus": np.array(o_n), "offer": o_offer, "buy": np.array(o_buy)}
        if "tensor_parallel" in job:
            # a count the tensor-parallel degree does not divide is not an option
            keep = np.array(o_n) % int(base["tensor_parallel"]) == 0
            sweep = {k: (np.asarray(v, dtype=object if k in ("gpu", "offer") else None)[keep] if isinstance(v, (list, np.ndarray)) else v)
                     for k, v in sweep.items()}
        r = evaluate(sweep, outputs=PLAN_OUTPUTS)
        n_rows = len(r["option_cost_usd"])
        gpu_col = np.asarray(sweep["gpu"], dtype=object)
        n_col = np.asarray(sweep["n_gpus"])
        buy_col = np.asarray(sweep["buy"])
        offer_rows = tabs["offers"].rows
        offer_index = {name: i for i, name in enumerate(tabs["offers"].names)}
        offer_col = np.asarray(sweep["offer"], dtype=object)
        r = {k: np.asarray(v).tolist() for k, v in r.items()}  # Python floats: cheap to read one by one
        for j in range(n_rows):
            buy = bool(buy_col[j])
            offer_name = str(offer_col[j])
            failing = [word for flag, word in REJECTIONS if not r[flag][j]]
            reasons = [_reason(word, r, j, base, buy) for word in failing]
            hourly = r["own_usd_per_gpu_hour" if buy else "rent_usd_per_gpu_hour"][j]
            priced = all(math.isfinite(x) for x in (r["option_cost_usd"][j], r["option_outlay_usd"][j], hourly))
            if not priced and "no price" not in failing:  # e.g. a purchase price of 1e308: never ranked, never "$inf"
                reasons.append("no price: the cost is not a finite number (check the price inputs)")
            offer_row = offer_rows[offer_index[offer_name]] if not buy else None
            options.append({
                "gpu": str(gpu_col[j]), "n_gpus": int(n_col[j]),
                "acquire": "buy" if buy else "rent",
                "offer": "" if buy else offer_name,
                "price_type": "" if buy else offer_row["price_type"],
                "interruptible": bool(not buy and offer_row["interruptible"]),
                "order": j,
                "fits": bool(r["fits_train"][j]),
                "peak_gib_per_gpu": float(r["peak_train_gib_per_gpu"][j]),
                "hours": float(r["option_hours"][j]),
                "cost_usd": float(r["option_cost_usd"][j]),
                "outlay_usd": float(r["option_outlay_usd"][j]),
                "usd_per_mtok_train": float(r["option_usd_per_mtok_train"][j]),
                "usd_per_gpu_hour": float(r["own_usd_per_gpu_hour"][j] if buy else r["rent_usd_per_gpu_hour"][j]),
                "ok": bool(r["option_ok"][j]) and priced,
                "reasons": reasons,
            })
    for g in never:
        options.append({"gpu": g, "n_gpus": 0, "acquire": "", "offer": "", "price_type": "", "interruptible": False,
                        "order": len(options), "fits": False,
                         "peak_gib_per_gpu": float("nan"), "hours": float("nan"), "cost_usd": float("nan"),
                         "outlay_usd": float("nan"), "usd_per_mtok_train": float("nan"), "usd_per_gpu_hour": float("nan"),
                         "ok": False, "reasons": ["does not fit at any GPU count"]})
    options.sort(key=rank_key)
    counts: dict[str, int] = {}
    for o in options:
        for reason in o["reasons"]:
            key = reason.split(":")[0]
            counts[key] = counts.get(key, 0) + 1
    recommended = options[0] if options and options[0]["ok"] else None
    return {"job": {k: base[k] for k in BY_NAME if k in job or k in _JOB_FIELDS}, "inputs": base,
            "options": options, "recommended": recommended, "rejected_counts": counts, "ranking": RANKING}


_JOB_FIELDS = ("model", "method", "tokens", "epochs", "seq_len", "micro_batch", "deadline_hours", "budget_usd",
               "allow_interruptible")


def same_option(a: Mapping | None, b: Mapping | None) -> bool:
    """Whether two option descriptions (planner rows, or dicts with gpu, n_gpus, acquire, offer) are the same choice."""
    if a is None or b is None:
        return a is b
    return (a["gpu"], int(a["n_gpus"]), a["acquire"], a["offer"] if a["acquire"] == "rent" else "") == \
        (b["gpu"], int(b["n_gpus"]), b["acquire"], b["offer"] if b["acquire"] == "rent" else "")


def scope(scenario: Mapping, gpus: list[str] | None = None) -> tuple[dict, dict]:
    """(job, scope) for ``plan(job, **scope)`` from a scenario's inputs: a ``gpu`` named there
    becomes the list of GPUs considered, ``n_gpus`` a fixed count, an ``offer`` other than auto
    the one offer to rent; ``buy`` is left to the planner (it weighs renting and buying)."""
    job = {k: v for k, v in scenario.items() if k not in ("gpu", "n_gpus", "offer", "buy")}
    out: dict = {}
    if gpus:
        out["gpus"] = list(gpus)
    elif "gpu" in scenario:
        out["gpus"] = [scenario["gpu"]]
    if "n_gpus" in scenario:
        out["count"] = scenario["n_gpus"]
    if "offer" in scenario:
        out["offer"] = scenario["offer"]
    return job, out


def option_inputs(job: Mapping, option: Mapping) -> dict:
    """The inputs of one planner option: the job with its GPU, count, offer and rent or buy."""
    buy = option["acquire"] == "buy"
    return {**job, "gpu": option["gpu"], "n_gpus": option["n_gpus"], "offer": "auto" if buy else option["offer"],
            "buy": 1 if buy else 0}


BOUGHT_OUTPUTS = ("payback_months", "verdict_code", "own_capital_usd", "option_cost_usd")


def bought_instead(job: Mapping, option: Mapping) -> dict:
    """The option's GPUs bought instead of rented: payback (months), verdict, capital and the job's owned share (USD)."""
    return evaluate(option_inputs(job, {**option, "acquire": "buy"}), outputs=BOUGHT_OUTPUTS)


def buying_text(payback_months: float, months: float, hours_per_day: float) -> str:
    """Buying in words, from ``payback_months`` (-1 = never) against the period owned."""
    if 0 < payback_months <= months:
        return f"buying pays back in {payback_months:.1f} months at {hours_per_day:g} hours a day"
    if payback_months > months:
        return (f"buying would pay back only after {payback_months:,.0f} months at {hours_per_day:g} hours a day, "
                f"beyond the {months:g} months of ownership")
    return "buying never pays back (renting costs less than running owned GPUs)"


def option_text(option: Mapping) -> str:
    """An option in words: "rent 8x H100-SXM from Lambda 8x H100 SXM (on-demand)" or "buy 8x H100-SXM"."""
    if option["acquire"] == "buy":
        return f"buy {option['n_gpus']}x {option['gpu']}"
    spot = ", interruptible: the provider can stop it" if option.get("interruptible") else ""
    return f"rent {option['n_gpus']}x {option['gpu']} from {option['offer']} ({option['price_type']}{spot})"


def verdict_text(code: float) -> str:
    """The words for a ``verdict_code`` (1-4)."""
    return VERDICTS[int(code)]
