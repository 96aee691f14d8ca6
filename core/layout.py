"""The planner's choice of pipeline- and expert-parallel degrees for each GPU type.

A job that names none of ``pipeline_parallel``, ``expert_parallel`` and ``context_parallel`` lets the planner try
pipeline stages (and, for a mixture-of-experts model, expert-parallel degrees) on each GPU: a degree is taken
where the job does not fit without it, or where it lowers the GPU-hours (pipeline point-to-point traffic instead of
data-parallel gathers over a slow network between machines, expert parallelism instead of replicated experts).
Two rules an engineer would hold the planner to come first:

- a model that fits one GPU (its tensor-parallel group) at its smallest count is not split: each GPU keeps a whole
  copy (plain data parallel), as everyone runs a model that fits; a pipeline for it only adds a bubble and sends;
- pipeline stages are chosen only for a framework that runs a pipeline schedule (frameworks.csv
  ``pipeline_schedule``: Megatron, torchtitan).  The Hugging Face Trainer has none ([hf_multi_gpu]: a
  ``device_map`` split runs one GPU at a time), nor do torchtune, Unsloth, Composer or DeepSpeed as the Trainer runs it:
  they shard with FSDP/ZeRO;
  likewise expert-parallel degrees only for a framework that trains with them (``expert_parallel_training``).

A job that names no ``sharding`` and no layout runs plain data parallel (``sharding`` none, DDP) on each GPU that holds
the whole training state with room to spare (it fits one GPU and is not tight): torchrun's and the Trainer's default,
the simplest run and only the gradients cross the links.  Where it does not, the job's sharding (ZeRO-3 / FSDP full
shard by default) spreads the states.

Every number comes from the formulas (``gpus_needed``, ``train_gpu_hours``); this module only enumerates.
"""
from __future__ import annotations

import math
from typing import Mapping

import numpy as np

from . import catalog
from .engine import evaluate, resolve_inputs, row_of
from .inputs import BY_NAME
from .validation import check_number, sharding_row_level

PIPELINE_DEGREES = (1, 2, 4, 8, 16)
EXPERT_DEGREES = (1, 2, 4, 8, 16, 32, 64)
LAYOUT_INPUTS = ("pipeline_parallel", "expert_parallel")
DATA_PARALLEL = "none"  # the sharding of plain data parallel (DDP): every GPU holds all states
GIVEN_LAYOUT = ("pipeline_parallel", "expert_parallel", "context_parallel")


def degrees(job: Mapping) -> dict[str, int]:
    """The job's tensor, pipeline, context and expert parallel degrees (checked; 1 where not given)."""
    names = ("tensor_parallel",) + GIVEN_LAYOUT
    return {n: int(check_number(BY_NAME[n], job[n])) if n in job else 1 for n in names}


def unit(job: Mapping) -> int:
    """The smallest GPU count the job's layout allows: tensor x pipeline x lcm(context, expert) parallel (n_gpus must be a
    multiple of tensor x pipeline x context, and n_gpus / (tensor x pipeline) a multiple of expert parallel)."""
    d = degrees(job)
    return d["tensor_parallel"] * d["pipeline_parallel"] * math.lcm(d["context_parallel"], d["expert_parallel"])


def allows(n, t, pp, cp, ep):
    """Whether GPU counts ``n`` (numbers or arrays) suit the layout t x pp x cp with expert parallel ep."""
    n = np.asarray(n)
    return (n % (t * pp * cp) == 0) & ((n // (t * pp)) % ep == 0)


def candidates(layers: int, experts: int) -> list[tuple[int, int]]:
    """(pipeline, expert) degrees to try: pipeline stages up to the layers, expert degrees that divide the experts."""
    eps = [e for e in EXPERT_DEGREES if e <= experts and experts % e == 0] if experts > 1 else [1]
    return [(p, e) for p in PIPELINE_DEGREES if p <= layers for e in eps]


def _framework_does(job: Mapping, column: str) -> bool:
    """A yes/no column of the job's framework's row in frameworks.csv (the default framework where the job names none)."""
    fw = row_of(resolve_inputs({k: v for k, v in job.items() if k == "framework"}), "framework")
    return bool(int(fw[column]))


def runs_pipelines(job: Mapping) -> bool:
    """Whether the job's framework runs a pipeline schedule (frameworks.csv pipeline_schedule: 1F1B or interleaved)."""
    return _framework_does(job, "pipeline_schedule")


def whole_copy_gpus(job: Mapping, gpu_names: list[str], tp: int) -> list[str]:
    """The GPUs on which a job that names no sharding and no layout runs plain data parallel: with sharding none, one GPU
    (its tensor-parallel group) holds the whole training state, and not tightly (train_memory_tight: the device total
    within 90 % of the memory).  [] when the job names a sharding or a layout."""
    if "sharding" in job or any(k in job for k in GIVEN_LAYOUT) or not gpu_names or not _runs_unsharded(job):
        return []
    r = evaluate({**job, "gpu": list(gpu_names), "n_gpus": tp, "sharding": DATA_PARALLEL},
                 outputs=("fits_train", "train_memory_tight"))
    fits, tight = np.atleast_1d(r["fits_train"]).tolist(), np.atleast_1d(r["train_memory_tight"]).tolist()
    return [g for g, f, t in zip(gpu_names, fits, tight) if f and not t]


def _runs_unsharded(job: Mapping) -> bool:
    """Whether the job's framework runs it without sharding (DeepSpeed offloads under a ZeRO stage only:
    validation.framework_refusal)."""
    from .errors import InputError
    try:
        resolve_inputs({**{k: v for k, v in job.items() if k in ("framework", "offload_optimizer", "offload_params")},
                        "sharding": DATA_PARALLEL})
    except InputError:
        return False
    return True


def sharding_level(name: str) -> int:
    """How much a sharding splits across the data-parallel GPUs, from its row in shardings.csv: the optimizer states,
    the gradients and the weights counted (none 0, ZeRO stages 1-3; a user's own row by what it shards)."""
    return sharding_row_level(catalog.tables()["shardings"].row(name))


def pipeline_sharding(job: Mapping) -> str | None:
    """The sharding pipeline stages run with under the job's framework: the job's own where the framework allows it
    beside a pipeline schedule (frameworks.csv pipeline_max_sharding; empty: any), else the framework's highest
    (DeepSpeed's pipeline engine and Megatron's distributed optimizer: ZeRO stage 1); None where the job names a
    sharding the framework does not run beside pipeline stages (then it gets none)."""
    resolved = resolve_inputs({k: v for k, v in job.items() if k in ("framework", "sharding")})
    limit = str(row_of(resolved, "framework").get("pipeline_max_sharding") or "")
    wanted = str(resolved["sharding"])
    if not limit or sharding_level(wanted) <= sharding_level(limit):
        return wanted
    return None if "sharding" in job else limit


def runs_expert_parallel(job: Mapping) -> bool:
    """Whether the job's framework trains with expert parallelism (frameworks.csv expert_parallel_training)."""
    return _framework_does(job, "expert_parallel_training")


LIGHTER_SHARDING = "zero2"  # optimizer states and gradients split, every GPU keeping the weights


def lighter_shardings(job: Mapping, sweep: Mapping) -> list[str] | None:
    """Per row of ``sweep`` (its gpu, n_gpus, offer, buy and sharding): ZeRO-2 where the job names no sharding and no
    layout, the row would run ZeRO-3 under a framework whose ZeRO-3 costs time of its own beyond its gathers
    (frameworks.csv zero3_layer_overhead_us: DeepSpeed's parameter hooks), and ZeRO-2 holds the job with room to spare
    (fits, not tight); None where nothing changes.  Hugging Face's DeepSpeed guide orders the stages by speed (stage 2
    before stage 3) and takes stage 3 only where the model does not fit otherwise (Hugging Face, "DeepSpeed", How to
    choose which ZeRO stage and offloads to use, https://huggingface.co/docs/transformers/deepspeed)."""
    if "sharding" in job or any(k in job for k in GIVEN_LAYOUT):
        return None
    resolved = resolve_inputs({k: v for k, v in job.items() if k == "framework"})
    if not float(row_of(resolved, "framework").get("zero3_layer_overhead_us") or 0) > 0:
        return None
    n_rows = max(len(np.atleast_1d(np.asarray(v, dtype=object))) for k, v in sweep.items() if k in ("gpu", "n_gpus", "offer", "buy"))
    given = sweep.get("sharding", resolve_inputs({})["sharding"])
    current = [str(x) for x in np.broadcast_to(np.asarray(given, dtype=object), (n_rows,)).tolist()]
    if not any(sharding_level(s) >= 3 for s in current):
        return None
    r = evaluate({**sweep, "sharding": LIGHTER_SHARDING}, outputs=("fits_train", "train_memory_tight"))
    fits = np.broadcast_to(np.asarray(r["fits_train"]), (n_rows,)).tolist()
    tight = np.broadcast_to(np.asarray(r["train_memory_tight"]), (n_rows,)).tolist()
    return [LIGHTER_SHARDING if sharding_level(s) >= 3 and f and not t else s for s, f, t in zip(current, fits, tight)]


def with_planned_sharding(scenario: Mapping | None) -> dict:
    """A training scenario's inputs with the sharding the planner chooses for its own GPU: plain data parallel (sharding
    none) where that GPU holds the model with room to spare and the scenario names no sharding and no layout
    (``whole_copy_gpus``), ZeRO-2 where the framework's ZeRO-3 costs time of its own and ZeRO-2 holds it
    (``lighter_shardings``); otherwise unchanged.  The workbook's scenario is then the planner's option for it."""
    scenario = dict(scenario or {})
    if "sharding" in scenario or any(k in scenario for k in GIVEN_LAYOUT) or str(scenario.get("task", "train")) != "train":
        return scenario
    job = {k: v for k, v in scenario.items() if k not in ("gpu", "n_gpus", "offer", "buy")}
    gpu = str(resolve_inputs({k: v for k, v in scenario.items() if k == "gpu"})["gpu"])
    tp = degrees(scenario)["tensor_parallel"]
    if whole_copy_gpus(job, [gpu], tp):
        return {**scenario, "sharding": DATA_PARALLEL}
    lighter = lighter_shardings(job, {k: v for k, v in scenario.items() if k != "sharding"} | {"gpu": gpu})
    return {**scenario, "sharding": lighter[0]} if lighter and lighter[0] == LIGHTER_SHARDING else scenario


def choose(job: Mapping, gpu_names: list[str], count: int | None, tp: int) -> dict[str, dict]:
    """For each GPU whose best layout is not (1, 1): {gpu: {"pipeline_parallel", "expert_parallel", "gpus_needed"}}.

    The best layout fits (``gpus_needed`` > 0; with a fixed ``count``, that count is a valid and large enough layout) and
    has the fewest GPU-hours at its own smallest count (or at ``count``); ties go to fewer pipeline stages, then fewer
    expert-parallel GPUs.  A job that gives a layout input keeps it: {}.  A job that names no sharding and no layout
    runs plain data parallel on each GPU that holds the model with room to spare (``whole_copy_gpus``):
    {gpu: {"pipeline_parallel": 1, "expert_parallel": 1, "sharding": "none", "gpus_needed": tp}}."""
    if any(k in job for k in GIVEN_LAYOUT) or not gpu_names:
        return {}
    out = {g: {"pipeline_parallel": 1, "expert_parallel": 1, "sharding": DATA_PARALLEL, "gpus_needed": tp}
           for g in whole_copy_gpus(job, gpu_names, tp)}
    gpu_names = [g for g in gpu_names if g not in out]
    if not gpu_names:
        return out
    model = row_of(resolve_inputs({k: v for k, v in job.items() if k == "model"}), "model")
    cands = candidates(int(model["layers"]), int(model["experts"]))
    staged = pipeline_sharding(job) if runs_pipelines(job) else None
    if staged is None:  # no pipeline schedule, or none beside the job's sharding: stages only as the job gives them
        cands = [(p, e) for p, e in cands if p == 1]
    if not runs_expert_parallel(job):  # nor expert parallelism: the experts stay with the data-parallel sharding
        cands = [(p, e) for p, e in cands if e == 1]
    if len(cands) == 1:
        return out
    g_col = [g for g in gpu_names for _ in cands]
    p_col = np.array([p for _ in gpu_names for p, _e in cands])
    e_col = np.array([e for _ in gpu_names for _p, e in cands])
    unit = tp * p_col * e_col  # the smallest count each layout allows
    # pipeline stages run with the sharding the framework allows beside them (the job's where it may)
    own = str(resolve_inputs({k: v for k, v in job.items() if k == "sharding"})["sharding"])
    lowered = staged is not None and staged != own
    sharded = {"sharding": [staged if p > 1 else own for p in p_col.tolist()]} if lowered else {}
    need = np.asarray(evaluate({**job, **sharded, "gpu": g_col, "n_gpus": unit, "pipeline_parallel": p_col, "expert_parallel": e_col},
                               outputs=("gpus_needed",))["gpus_needed"], dtype=float)
    valid = need > 0
    if count is None:
        n = np.where(valid, np.ceil(need / unit) * unit, unit)
    else:  # a fixed count: layouts it does not divide, or does not hold, are out (evaluated at their own unit)
        valid &= (count % (tp * p_col) == 0) & ((count // (tp * p_col)) % e_col == 0) & (need <= count)
        n = np.where(valid, count, unit)
    hours = np.asarray(evaluate({**job, **sharded, "gpu": g_col, "n_gpus": n.astype(int), "pipeline_parallel": p_col,
                                 "expert_parallel": e_col, "buy": 1}, outputs=("train_gpu_hours",))["train_gpu_hours"], dtype=float)
    # Python lists: the loop reads each element several times (a NumPy element costs ten times a list's)
    # (np.round: what round() of a NumPy float does, element by element)
    valid_l, hours_l, p_l, e_l = valid.tolist(), np.round(hours, 9).tolist(), p_col.tolist(), e_col.tolist()
    for i, g in enumerate(gpu_names):
        rows = [j for j in range(i * len(cands), (i + 1) * len(cands)) if valid_l[j]]
        if not rows:
            continue
        whole = i * len(cands)  # the (1, 1) layout comes first: a model that fits one GPU (group) is not split
        if valid_l[whole] and need[whole] <= tp:
            continue
        best = min(rows, key=lambda j: (hours_l[j], p_l[j], e_l[j]))
        if (p_l[best], e_l[best]) != (1, 1):
            out[g] = {"pipeline_parallel": int(p_l[best]), "expert_parallel": int(e_l[best]), "gpus_needed": int(n[best]),
                      **({"sharding": staged} if lowered and p_l[best] > 1 else {})}
    return out
