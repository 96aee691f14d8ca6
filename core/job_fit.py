"""Time and cost of a training job that does not fit in GPU memory: which quantities give them, and the words for it.

A job whose tensors do not fit on its GPUs does not run: its hours, its likely range, its throughput and what it
costs are not answers.  The planner rejects such an option ("does not fit: ..."), the main command's table shows "-",
and every other door (the Excel functions, ``gpu-tco estimate``) says the same words instead of a number: ``gaps``
gives them, for the quantities found from the formulas themselves (everything computed from ``train_hours`` or
``train_tokens_per_s``), so a new formula is covered without a list to keep.
"""
from __future__ import annotations

from typing import Iterable, Mapping

import numpy as np

from .codegen import refs
from .formulas import QUANTITIES

NOT_FIT = "does not fit"  # the planner's rejection word (core.planner.REJECTIONS), the start of every message here
_TRAINING_TIME = ("train_hours", "train_tokens_per_s")
_THROUGH_JOB_HOURS = "job_hours_base"  # job_hours when given, else train_hours: a given job_hours needs no fit


def _depending(start: Iterable[str], stop: Iterable[str] = ()) -> list[str]:
    changed, stop, out = set(start), set(stop), []
    for name, qty in QUANTITIES.items():
        if name not in stop and changed.intersection(refs(qty.expr)):
            changed.add(name)
            out.append(name)
    return out


def _time_or_cost(names: Iterable[str]) -> frozenset[str]:
    """Of ``names``, those that are a time, a rate or an amount (yes/no flags and codes say fit or not themselves)."""
    return frozenset(n for n in names if QUANTITIES[n].unit not in ("bool", "flag", "code"))


NEEDS_FIT = _time_or_cost([*_TRAINING_TIME, *_depending(_TRAINING_TIME)])
# the ones that read the training time whatever job_hours says (not through job_hours_base)
NEEDS_FIT_ALWAYS = _time_or_cost([*_TRAINING_TIME, *_depending(_TRAINING_TIME, stop=(_THROUGH_JOB_HOURS,))])
FIT_OUTPUTS = ("fits_train", "peak_train_gib_per_gpu", "fit_limit_gib", "gpu_memory_gib", "gpus_needed")


def not_fit_text(peak_gib: float, limit_gib: float, memory_gib: float, gpus_needed: float | None = None) -> str:
    """"does not fit: 1,110.9 GiB/GPU > 22.8 GiB (95 % of 24 GiB)" (the planner's words), and with ``gpus_needed``
    the count of this GPU that holds the job ("; 223 GPUs hold it", "; no count of this GPU holds it")."""
    share = 100 * limit_gib / memory_gib if memory_gib > 0 else 0.0
    text = f"{NOT_FIT}: {peak_gib:,.1f} GiB/GPU > {limit_gib:,.1f} GiB ({share:.4g} % of {memory_gib:,.0f} GiB)"
    if gpus_needed is None:
        return text
    return text + (f"; {int(gpus_needed):,} GPUs hold it" if gpus_needed > 0 else "; no count of this GPU holds it")


def gaps(values: Mapping, quantities: Iterable[str]) -> dict[str, str]:
    """For each of ``quantities`` that is a time or cost of a training job that does not fit, the words saying so.

    ``values``: one evaluation's results (``FIT_OUTPUTS``, scalars) and, where it was given, the ``job_hours`` input
    (a job_hours > 0 is the job's own hours: the rental cost then needs no fit)."""
    if bool(values["fits_train"]):
        return {}
    job_hours_given = float(values.get("job_hours", 0) or 0) > 0
    text = not_fit_text(float(values["peak_train_gib_per_gpu"]), float(values["fit_limit_gib"]),
                        float(values["gpu_memory_gib"]), float(values["gpus_needed"]))
    return {name: text for name in quantities
            if name in NEEDS_FIT_ALWAYS or (name in NEEDS_FIT and not job_hours_given)}


def not_fitting_rows(values: Mapping, quantity: str, size: int) -> np.ndarray:
    """Positions (of ``size`` rows of a sweep) whose ``quantity`` is a time or cost of a job that does not fit.
    ``values``: the sweep's ``FIT_OUTPUTS`` (arrays or scalars) and its ``job_hours`` input when given."""
    if quantity not in NEEDS_FIT:
        return np.zeros(0, dtype=int)
    bad = ~np.broadcast_to(np.asarray(values["fits_train"], dtype=bool), (size,))
    if quantity not in NEEDS_FIT_ALWAYS and "job_hours" in values:
        bad = bad & ~(np.broadcast_to(np.asarray(values["job_hours"], dtype=float), (size,)) > 0)
    return np.flatnonzero(bad)
