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
    "sharding": "zero3",
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
                   "train_hours", "job_wall_hours", "mfu_effective", "rent_usd_per_gpu_hour", "own_usd_per_gpu_hour",
                   "own_capital_usd", "payback_months", "verdict_code")


def compare(job: dict | None = None, setups=CANDIDATE_SETUPS, methods=METHODS, picks: dict | None = None) -> list[dict]:
    """One row per (setup, method): fits, peak GiB/GPU, GPUs needed, hours, and the job's cost
    rented (the GPU's offer, "auto" unless the job names one) and owned (the owned share).
    ``recommended`` is "rent" or "buy" on the row that is the planner's recommendation for its
    method (``picks``, default ``recommendations(job, methods)``), when that option is one of these setups."""
    base = dict(DEFAULT_JOB)
    base.update(job or {})
    rows = [(g, n, m) for (g, n) in setups for m in methods]
    sweep = dict(base)
    sweep.update({
        "gpu": [r[0] for r in rows] * 2,
        "n_gpus": np.array([r[1] for r in rows] * 2),
        "method": [r[2] for r in rows] * 2,
        "buy": np.array([0] * len(rows) + [1] * len(rows)),
    })
    sweep.setdefault("offer", "auto")
    res = evaluate(sweep, outputs=COMPARE_OUTPUTS)
    k = len(rows)
    # the offer each row rents: the engine's own resolution ("auto" -> the GPU's reference offer)
    offer_of = {g: resolve_inputs({"gpu": g, "offer": sweep["offer"]})["offer"] for g in dict.fromkeys(r[0] for r in rows)}
    out = []
    for i, (g, n, m) in enumerate(rows):
        fits = bool(res["fits_train"][i])
        rent, own = float(res["option_cost_usd"][i]), float(res["option_cost_usd"][k + i])
        rent_ok, own_ok = bool(res["option_ok"][i]), bool(res["option_ok"][k + i])  # option_ok includes fits_train
        out.append({
            "gpu": g, "n_gpus": n, "method": m,
            "fits": fits,
            "peak_gib_per_gpu": float(res["peak_train_gib_per_gpu"][i]),
            "gpu_memory_gib": float(res["gpu_memory_gib"][i]),
            "gpus_needed": int(res["gpus_needed"][i]),
            "train_hours": float(res["train_hours"][i]),
            "job_hours": float(res["job_wall_hours"][i]),
            "mfu": float(res["mfu_effective"][i]),
            "offer": offer_of[g],
            "rent_usd": rent if rent_ok else float("nan"),
            "rent_usd_per_gpu_hour": float(res["rent_usd_per_gpu_hour"][i]),
            "own_usd": own if own_ok else float("nan"),  # the job's owned share, when acceptable
            "own_usd_per_gpu_hour": float(res["own_usd_per_gpu_hour"][k + i]),
            "capital_usd": float(res["own_capital_usd"][k + i]),
            "payback_months": float(res["payback_months"][k + i]),
            "verdict_code": int(res["verdict_code"][k + i]),
            "recommended": "",
        })
    picks = recommendations(job, methods) if picks is None else picks
    for r in out:
        for how in ("rent", "buy"):
            mine = {"gpu": r["gpu"], "n_gpus": r["n_gpus"], "acquire": how, "offer": r["offer"]}
            if same_option(mine, picks.get(r["method"])):
                r["recommended"] = how
    # a recommendation that is none of the usual setups gets a row of its own, priced by its own offer
    for m in methods:
        pick = picks.get(m)
        if pick is not None and not any(r["recommended"] and r["method"] == m for r in out):
            out.append(_pick_row({**base, "method": m}, pick))
    return out


def _pick_row(job: dict, pick) -> dict:
    """A table row for the planner's pick: its GPU, count and offer (or buying), with the same columns as compare's rows."""
    rent = pick["acquire"] == "rent"
    inputs = {**job, "gpu": pick["gpu"], "n_gpus": pick["n_gpus"], "offer": pick["offer"] if rent else "auto"}
    rented = evaluate({**inputs, "buy": 0}, outputs=COMPARE_OUTPUTS)
    owned = evaluate({**inputs, "buy": 1}, outputs=COMPARE_OUTPUTS)
    return {
        "gpu": pick["gpu"], "n_gpus": int(pick["n_gpus"]), "method": job["method"], "fits": bool(rented["fits_train"]),
        "peak_gib_per_gpu": float(rented["peak_train_gib_per_gpu"]), "gpu_memory_gib": float(rented["gpu_memory_gib"]),
        "gpus_needed": int(rented["gpus_needed"]), "train_hours": float(rented["train_hours"]),
        "job_hours": float(rented["job_wall_hours"]), "mfu": float(rented["mfu_effective"]),
        "offer": pick["offer"] if rent else resolve_inputs(inputs)["offer"],
        "rent_usd": float(rented["option_cost_usd"]) if rented["option_ok"] else float("nan"),
        "rent_usd_per_gpu_hour": float(rented["rent_usd_per_gpu_hour"]),
        "own_usd": float(owned["option_cost_usd"]) if owned["option_ok"] else float("nan"),
        "own_usd_per_gpu_hour": float(owned["own_usd_per_gpu_hour"]), "capital_usd": float(owned["own_capital_usd"]),
        "payback_months": float(owned["payback_months"]), "verdict_code": int(owned["verdict_code"]),
        "recommended": pick["acquire"],
    }


def recommendations(job: dict | None = None, methods=METHODS) -> dict:
    """The planner's recommended option per method (None where nothing is acceptable)."""
    return {m: rec.option for m, rec in worded_recommendations(job, methods).items()}


def worded_recommendations(job: dict | None = None, methods=METHODS) -> dict:
    """The recommendation per method, with its sentences (``recommendation.Recommendation``)."""
    from .recommendation import recommend
    base = {**DEFAULT_JOB, **(job or {})}
    price_gpu = base.get("gpu")  # a price in the job belongs to its GPU
    base = {k: v for k, v in base.items() if k not in ("gpu", "n_gpus", "offer", "buy")}
    return {m: recommend({**base, "method": m}, price_gpu=price_gpu) for m in methods}
