"""The built-in default scenario: the seed question behind gpu-tco.

"Can I fine-tune Llama 3 70B on 4x RTX 4090, or do I need 2x H100?"
(../shared/seeds, the 4090-versus-AWS-H100 calculator).  The comparison
evaluates every candidate setup and method in one vectorised call.
"""
from __future__ import annotations

import numpy as np

from .engine import evaluate

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

# (GPU, count, how the user would get it): owned consumer cards versus rented data-centre GPUs
CANDIDATE_SETUPS = (
    ("RTX-4090", 4, "own"),
    ("RTX-4090", 8, "own"),
    ("H100-SXM", 2, "rent"),
    ("H100-SXM", 8, "rent"),
    ("A100-80GB-SXM", 8, "rent"),
)
METHODS = ("qlora", "lora", "full")


def compare(job: dict | None = None, setups=CANDIDATE_SETUPS, methods=METHODS) -> list[dict]:
    """One row per (setup, method): fits, peak GiB/GPU, GPUs needed, training hours."""
    base = dict(DEFAULT_JOB)
    base.update(job or {})
    rows = [(g, n, how, m) for (g, n, how) in setups for m in methods]
    sweep = dict(base)
    sweep.update({
        "gpu": [r[0] for r in rows],
        "n_gpus": np.array([r[1] for r in rows]),
        "method": [r[3] for r in rows],
    })
    res = evaluate(sweep)
    out = []
    for i, (g, n, how, m) in enumerate(rows):
        out.append({
            "gpu": g, "n_gpus": n, "acquire": how, "method": m,
            "fits": bool(res["fits_train"][i]),
            "peak_gib_per_gpu": float(res["peak_train_gib_per_gpu"][i]),
            "gpu_memory_gib": float(res["gpu_memory_gib"][i]),
            "gpus_needed": int(res["gpus_needed"][i]),
            "train_hours": float(res["train_hours"][i]),
            "mfu": float(res["mfu_effective"][i]),
        })
    return out
