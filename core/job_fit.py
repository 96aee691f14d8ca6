"""Time and cost of a job that does not fit in GPU memory: which quantities give them, and the words for it.

A training job whose tensors do not fit on its GPUs does not run, nor does a serving replica whose weights leave no
room for one request's KV cache: their hours, throughput and what they cost are not answers.  The planners reject
such options ("does not fit: ..."), the main command's table shows "-", and every other door (the Excel functions,
``gpu-tco estimate``) says the same words instead of a number: ``gaps`` gives them, for the quantities found from
the formulas themselves (everything computed from the training time, or from the serving throughput), so a new
formula is covered without a list to keep.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Mapping

import numpy as np

from . import codecache
from .codegen import refs
from .formulas import QUANTITIES

NOT_FIT = "does not fit"  # the planners' rejection word (core.planner.REJECTIONS, core.serving.SERVE_REJECTIONS)


def _depending(start: Iterable[str], stop: Iterable[str] = ()) -> list[str]:
    """The quantities computed from ``start`` (not through ``stop``), in definition order; kept in the code cache,
    as every process that imports this module asks the same."""
    start, stop = tuple(start), tuple(stop)
    return codecache.remembered(("depending", start, stop), lambda: _walk_depending(start, stop))


def _walk_depending(start: tuple[str, ...], stop: tuple[str, ...]) -> list[str]:
    changed, stop, out = set(start), set(stop), []
    for name, qty in QUANTITIES.items():
        if name not in stop and changed.intersection(refs(qty.expr)):
            changed.add(name)
            out.append(name)
    return out


def _time_or_cost(names: Iterable[str]) -> frozenset[str]:
    """Of ``names``, those that are a time, a rate or an amount (yes/no flags and codes say fit or not themselves)."""
    return frozenset(n for n in names if QUANTITIES[n].unit not in ("bool", "flag", "code"))


def not_fit_text(peak_gib: float, limit_gib: float, memory_gib: float, gpus_needed: float | None = None,
                 host_need_gib: float = 0.0, host_gib: float = 0.0, gpu_fits: bool = False, host_fits: bool = True,
                 tensors_gib: float | None = None) -> str:
    """"does not fit: 1,110.9 GiB/GPU > 22.8 GiB (95 % of 24 GiB)" (the training planner's words), and with
    ``gpus_needed`` the count of this GPU that holds the job ("; 223 GPUs hold it", "; no count of this GPU holds it").
    Offloaded states the machines' CPU memory does not hold (``host_fits``: fits_host_memory; ``host_need_gib`` per
    machine of ``host_gib``) are said too: "does not fit: the offloaded states need 1,051 GiB of CPU memory per machine >
    154 GiB (80 % of 192 GiB ...)"; ``gpu_fits`` (fits_train_gpu_memory): the GPUs themselves hold it.  With
    ``tensors_gib`` (allocator_peak_train_gib) the words name the limit that failed, as fits_train_gpu_memory tests
    it: the tensors against the fit limit ("1,050.2 GiB/GPU of tensors > 22.8 GiB (95 % of 24 GiB)"), or, the tensors
    within it, the device total (``peak_gib``) against the GPU's memory."""
    from .inputs import HOST_MEMORY_USABLE
    host_text = "" if host_fits else (
        f"the offloaded states need {host_need_gib:,.0f} GiB of CPU memory per machine > "
        f"{HOST_MEMORY_USABLE * host_gib:,.0f} GiB ({100 * HOST_MEMORY_USABLE:g} % of {host_gib:,.0f} GiB; host_memory_gib_per_gpu sets it)")
    if gpu_fits and host_text:
        return f"{NOT_FIT}: {host_text}"
    share = 100 * limit_gib / memory_gib if memory_gib > 0 else 0.0
    if tensors_gib is not None and tensors_gib <= limit_gib and peak_gib > memory_gib:
        text = (f"{NOT_FIT}: {peak_gib:,.1f} GiB/GPU in all (the tensors, the CUDA context and the allocator's slack) > "
                f"{memory_gib:,.0f} GiB")
    else:
        shown, what = (peak_gib, "") if tensors_gib is None else (tensors_gib, " of tensors")
        text = f"{NOT_FIT}: {shown:,.1f} GiB/GPU{what} > {limit_gib:,.1f} GiB ({share:.4g} % of {memory_gib:,.0f} GiB)"
    if host_text:
        text += f", and {host_text}"
    if gpus_needed is None:
        return text
    return text + (f"; {int(gpus_needed):,} GPUs hold it" if gpus_needed > 0 else "; no count of this GPU holds it")


def serve_not_fit_text(weights_gib: float, memory_gib: float) -> str:
    """"does not fit: weights 131.4 GiB/GPU leave no room for one request's KV cache in 24 GiB" (the serving
    planner's words)."""
    return f"{NOT_FIT}: weights {weights_gib:,.1f} GiB/GPU leave no room for one request's KV cache in {memory_gib:,.0f} GiB"


@dataclass(frozen=True)
class _Kind:
    """One kind of job: the quantities that are its time or cost, whether it fits, and the input that, given, stands
    for that time (hours worked, a measured throughput): the quantities reading the time only through ``given``'s
    quantity then need no fit."""
    fits: str
    outputs: tuple[str, ...]
    given: str  # the input
    needs: frozenset[str]
    needs_always: frozenset[str]
    words: Callable[[Mapping], str]


def _kind(start: tuple[str, ...], through: str, fits: str, outputs: tuple[str, ...], given: str, words) -> _Kind:
    direct = tuple(s for s in start if s != through)  # what reads the time whatever the given input says
    return _Kind(fits, outputs, given, _time_or_cost([*start, *_depending(start)]),
                 _time_or_cost([*direct, *_depending(direct, stop=(through,))]), words)


TRAINING = _kind(("train_hours", "train_tokens_per_s"), "job_hours_base", "fits_train",
                 ("fits_train", "peak_train_gib_per_gpu", "fit_limit_gib", "gpu_memory_gib", "gpus_needed",
                  "cpu_offload_gib_per_machine", "host_memory_gib_per_machine", "fits_train_gpu_memory", "fits_host_memory",
                  "allocator_peak_train_gib"),
                 "job_hours",
                 lambda v: not_fit_text(float(v["peak_train_gib_per_gpu"]), float(v["fit_limit_gib"]),
                                        float(v["gpu_memory_gib"]), float(v["gpus_needed"]),
                                        float(v["cpu_offload_gib_per_machine"]), float(v["host_memory_gib_per_machine"]),
                                        bool(v["fits_train_gpu_memory"]), bool(v["fits_host_memory"]),
                                        float(v["allocator_peak_train_gib"])))
SERVING = _kind(("serve_tokens_per_s", "decode_tokens_per_s", "prefill_tokens_per_s"), "serve_tokens_per_s", "serve_fits",
                ("serve_fits", "infer_weights_gib", "gpu_memory_gib"), "measured_tokens_per_s",
                lambda v: serve_not_fit_text(float(v["infer_weights_gib"]), float(v["gpu_memory_gib"])))
KINDS = (TRAINING, SERVING)
NEEDS_FIT = TRAINING.needs | SERVING.needs
FIT_OUTPUTS = tuple(dict.fromkeys(TRAINING.outputs + SERVING.outputs))
FIT_INPUTS = (TRAINING.given, SERVING.given)  # inputs that, given, stand for the time or throughput (hours, tokens/s)


def fit_outputs(quantity: str) -> tuple[str, ...]:
    """What ``gaps`` reads to judge ``quantity`` (nothing for a quantity that is no time or cost of a job)."""
    return tuple(dict.fromkeys(o for k in KINDS if quantity in k.needs for o in k.outputs))


def _kind_of(quantity: str) -> _Kind | None:
    return next((k for k in KINDS if quantity in k.needs), None)


def gaps(values: Mapping, quantities: Iterable[str]) -> dict[str, str]:
    """For each of ``quantities`` that is a time or cost of a job that does not fit, the words saying so.

    ``values``: one evaluation's results (``fit_outputs`` of each quantity, scalars) and, where they were given, the
    inputs ``FIT_INPUTS`` (job_hours > 0 or measured_tokens_per_s > 0 stand for the job's time: no fit needed)."""
    out = {}
    for name in quantities:
        kind = _kind_of(name)
        if kind is None or bool(values[kind.fits]):
            continue
        if name in kind.needs_always or not float(values.get(kind.given, 0) or 0) > 0:
            out[name] = kind.words(values)
    return out


def not_fitting_rows(values: Mapping, quantity: str, size: int) -> np.ndarray:
    """Positions (of ``size`` rows of a sweep) whose ``quantity`` is a time or cost of a job that does not fit.
    ``values``: the sweep's ``fit_outputs(quantity)`` (arrays or scalars) and the ``FIT_INPUTS`` it was given."""
    kind = _kind_of(quantity)
    if kind is None:
        return np.zeros(0, dtype=int)
    bad = ~np.broadcast_to(np.asarray(values[kind.fits], dtype=bool), (size,))
    if quantity not in kind.needs_always and kind.given in values:
        bad = bad & ~(np.broadcast_to(np.asarray(values[kind.given], dtype=float), (size,)) > 0)
    return np.flatnonzero(bad)
