"""The built-in default scenario: the question gpu-tco was built to answer.

"Can I fine-tune Llama 3 70B on 4x RTX 4090, or do I need 2x H100?" (the question of
AiManual's "RTX 4090 farm vs AWS p5" calculator article, 2025-12-31).  ``compare``
evaluates the usual candidate setups for every method, rented and bought, in one
vectorised call; ``recommendations`` names, per method, the planner's recommended
option over every GPU, count and offer (the one ranking rule, core.planner).
"""
from __future__ import annotations

import numpy as np

from .engine import evaluate, resolve_inputs
from .planner import same_option

DEFAULT_JOB = {
    "model": "Llama-3-70B",
    "tokens": 100_000_000,
    "epochs": 1,
    "seq_len": 4096,
    "micro_batch": 1,
    "recompute": "full",
    "precision": "bf16_mixed",
    "optimizer": "adamw",
}

# (GPU, count): consumer cards a team could buy versus data-centre GPUs it would rent
CANDIDATE_SETUPS = (
    ("RTX-4090", 4),
    ("RTX-4090", 8),
    ("H100-SXM", 2),
    ("H100-SXM", 8),
    ("A100-80GB-SXM", 8),
)
METHODS = ("qlora", "lora", "full")
COMPARE_OUTPUTS = ("fits_train", "option_cost_usd", "option_ok", "peak_train_gib_per_gpu", "gpu_memory_gib", "gpus_needed",
                   "train_hours", "job_wall_hours", "option_hours", "mfu_whole_step", "rent_usd_per_gpu_hour", "own_usd_per_gpu_hour",
                   "own_capital_usd", "payback_months", "verdict_code", "option_priced", "train_memory_tight",
                   "train_memory_may_exceed", "fit_limit_gib",
                   "breakeven_hours_per_day", "own_purchase_usd_per_gpu")


def named_offer(job: dict | None) -> str | None:
    """The cloud offer the job names (canonical name) when it rents one GPU type; None when the job names none, "auto",
    or an offer of no GPU (the "none" placeholder, whose price the job gives)."""
    from . import catalog
    offer = (job or {}).get("offer")
    if offer is None or (isinstance(offer, str) and offer.strip().lower() == catalog.AUTO_OFFER):
        return None
    name = str(resolve_inputs({"offer": offer})["offer"])
    gpu_rows = catalog.offer_map_lists()[0]
    return name if gpu_rows[catalog.tables()["offers"].names.index(name)] >= 0 else None


def compared_setups(job: dict | None = None) -> tuple:
    """The (GPU, count) setups the main job compares: CANDIDATE_SETUPS, or for a job that names one cloud offer, the
    offer's GPU at the counts the candidates use (and the offer's instance size), up to the largest job the offer sells
    (catalog.offer_max_gpus): an offer rents one GPU type, so the comparison is that GPU's."""
    from . import catalog
    offer = named_offer(job)
    if offer is None:
        return CANDIDATE_SETUPS
    row = catalog.tables()["offers"].row(offer)
    gpu = str(resolve_inputs({"offer": offer})["gpu"])
    largest = catalog.offer_max_gpus(row)
    counts = sorted({n for _, n in CANDIDATE_SETUPS} | {int(row["gpus_per_instance"] or 1)})
    counts = [n for n in counts if n <= largest] or [int(largest)]
    return tuple((gpu, n) for n in counts)


def setup_offer(job: dict, gpu: str, n_gpus: int) -> str:
    """The offer a setup is rented through: the one the recommendation rule picks for that GPU and count
    (``planner.plan`` over its offers, renting only), else "auto" (the cheapest on-demand offer that sells that size)."""
    from .planner import plan
    try:
        best = plan(job, gpus=[gpu], count=n_gpus, include_buy=False)["recommended"]
    except Exception:  # noqa: BLE001 - a count the job's layout does not allow: priced at the automatic offer
        best = None
    if best is not None:
        return best.offer
    return resolve_inputs({"gpu": gpu, "n_gpus": n_gpus, "offer": job.get("offer", "auto")})["offer"]


def _job_layout(job: dict) -> tuple:
    """(pipeline_parallel, expert_parallel, sharding) of a job, its defaults where it names none."""
    given = resolve_inputs({k: v for k, v in job.items() if k in ("pipeline_parallel", "expert_parallel", "sharding")})
    return given["pipeline_parallel"], given["expert_parallel"], given["sharding"]


def compare(job: dict | None = None, setups=None, methods=METHODS, picks: dict | None = None) -> list[dict]:
    """One row per (setup, method; ``setups``: default ``compared_setups(job)``): fits, peak GiB/GPU, GPUs needed, hours, and the job's cost rented (through the offer
    the recommendation rule picks for that setup, ``setup_offer``, or the job's own offer) and owned (the owned share).
    ``recommended`` is "rent" or "buy" on the row that is the planner's recommendation for its method (``picks``,
    default ``recommendations(job, methods)``); a recommendation that is none of these setups gets a row of its own.
    ``acquire`` says how a row's hours (``job_hours``: option_hours) are reached: a row marked "buy" states the
    purchase's hours, any other the rental's, so a row and the recommendation's sentence state the same figures."""
    base = dict(DEFAULT_JOB)
    base.update(job or {})
    setups = compared_setups(base) if setups is None else setups  # a job naming an offer compares the offer's GPU
    picks = recommendations(job, methods) if picks is None else picks
    named = base.get("offer", "auto")
    plan_job = {k: v for k, v in base.items() if k not in ("gpu", "n_gpus", "offer", "buy")}

    def offer_of(g, n, m):
        if str(named).strip().lower() != "auto":
            return resolve_inputs({"gpu": g, "offer": named})["offer"]
        return setup_offer({**plan_job, "method": m}, g, n)
    rows = [(g, n, m, offer_of(g, n, m)) for (g, n) in setups for m in methods]
    marks = [""] * len(rows)
    # the layout each row runs: the job's, or the planner's for the recommendation's row (it states the pick's hours)
    layouts = [_job_layout(base)] * len(rows)
    for m in methods:
        pick = picks.get(m)
        if pick is None:
            continue
        mine = [(k, how) for k, (g, n, mm, o) in enumerate(rows) if mm == m for how in ("rent", "buy")
                if same_option({"gpu": g, "n_gpus": n, "acquire": how, "offer": o}, pick)]
        layout = (pick.get("pipeline_parallel", layouts[0][0]), pick.get("expert_parallel", layouts[0][1]),
                  pick.get("sharding") or layouts[0][2])
        if mine:
            marks[mine[0][0]] = mine[0][1]
            layouts[mine[0][0]] = layout
        else:
            rent = pick["acquire"] == "rent"
            rows.append((pick["gpu"], int(pick["n_gpus"]), m, pick["offer"] if rent else offer_of(pick["gpu"], int(pick["n_gpus"]), m)))
            marks.append(pick["acquire"])
            layouts.append(layout)
    sweep = dict(base)
    sweep.update({
        "pipeline_parallel": np.array([lay[0] for lay in layouts] * 2),
        "expert_parallel": np.array([lay[1] for lay in layouts] * 2),
        "sharding": [lay[2] for lay in layouts] * 2,
        "gpu": [r[0] for r in rows] * 2,
        "n_gpus": np.array([r[1] for r in rows] * 2),
        "method": [r[2] for r in rows] * 2,
        "offer": [r[3] for r in rows] * 2,
        "buy": np.array([0] * len(rows) + [1] * len(rows)),
    })
    res = evaluate(sweep, outputs=COMPARE_OUTPUTS)
    return [{**_compare_row(res, i, len(rows), row, how), "sharding": lay[2]}
            for i, (row, how, lay) in enumerate(zip(rows, marks, layouts))]


def _compare_row(res: dict, i: int, k: int, row: tuple, how: str) -> dict:
    """compare()'s row ``i`` from the sweep's results ``res`` (its first ``k`` rows rented, the next ``k`` bought)."""
    g, n, m, o = row
    rent, own = float(res["option_cost_usd"][i]), float(res["option_cost_usd"][k + i])
    rent_ok, own_ok = bool(res["option_ok"][i]), bool(res["option_ok"][k + i])  # option_ok includes fits_train
    side = k + i if how == "buy" else i  # the row's hours: of its own acquisition
    rent_priced, own_priced = bool(res["option_priced"][i]), bool(res["option_priced"][k + i])
    return {
        "gpu": g, "n_gpus": n, "method": m,
        "acquire": "buy" if how == "buy" else "rent",
        "fits": bool(res["fits_train"][i]),
        "tight": bool(res["train_memory_tight"][i]),
        "may_exceed": bool(res["train_memory_may_exceed"][i]),
        "peak_gib_per_gpu": float(res["peak_train_gib_per_gpu"][i]),
        "gpu_memory_gib": float(res["gpu_memory_gib"][i]),
        "fit_limit_gib": float(res["fit_limit_gib"][i]),
        "gpus_needed": int(res["gpus_needed"][i]),
        "train_hours": float(res["train_hours"][side]),
        "job_hours": float(res["option_hours"][side]),
        "mfu": float(res["mfu_whole_step"][i]),
        "offer": o, "rent_priced": rent_priced, "own_priced": own_priced,
        "rent_usd": rent if rent_ok else float("nan"),
        "rent_usd_per_gpu_hour": float(res["rent_usd_per_gpu_hour"][i]) if rent_priced else float("nan"),
        "own_usd": own if own_ok else float("nan"),  # the job's owned share, when acceptable
        "own_usd_per_gpu_hour": float(res["own_usd_per_gpu_hour"][k + i]) if own_priced else float("nan"),
        "capital_usd": float(res["own_capital_usd"][k + i]) if own_priced else float("nan"),
        "payback_months": float(res["payback_months"][k + i]) if own_priced and rent_priced else float("nan"),
        "breakeven_hours_per_day": float(res["breakeven_hours_per_day"][k + i]) if own_priced and rent_priced else float("nan"),
        "verdict_code": int(res["verdict_code"][k + i]),
        "recommended": how,
    }


def recommendations(job: dict | None = None, methods=METHODS) -> dict:
    """The planner's recommended option per method (None where nothing is acceptable)."""
    return {m: rec.option for m, rec in worded_recommendations(job, methods).items()}


def worded_recommendations(job: dict | None = None, methods=METHODS) -> dict:
    """The recommendation per method, with its sentences (``recommendation.Recommendation``)."""
    from .recommendation import recommend
    base = {**DEFAULT_JOB, **(job or {})}
    price_gpu = base.get("gpu")  # a price in the job belongs to its GPU
    offer = named_offer(base)
    # a job naming one cloud offer is planned on that offer (its GPU; buying as the job's terms allow)
    scope = {} if offer is None else {"offer": offer, "gpus": [compared_setups(base)[0][0]]}
    base = {k: v for k, v in base.items() if k not in ("gpu", "n_gpus", "offer", "buy")}
    return {m: recommend({**base, "method": m}, price_gpu=price_gpu, **scope) for m in methods}
