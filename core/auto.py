"""Inputs whose 0 means "automatic", and the value core uses in their place.

Read from the formula trees rather than listed: a quantity defined as ``IF(x > 0, x, fallback)``
of an input ``x`` is the value in use for ``x`` (``mfu`` -> ``mfu_whole_step``,
``usd_per_gpu_hour_rented`` -> ``rent_usd_per_gpu_hour_list``, ...).  Forms, the workbook's
Inputs sheet and the command line's help show "auto" and this value instead of a bare 0.
"""
from __future__ import annotations

from typing import Mapping

from .expr import Call, Cmp, Const, Ref
from .formulas import QUANTITIES
from .inputs import BY_NAME


def _input_resolved_by(expr) -> str | None:
    """The input ``x`` when ``expr`` is IF(x > 0, x, fallback), else None."""
    if not (isinstance(expr, Call) and expr.fn == "IF"):
        return None
    cond, then, _ = expr.args
    if (isinstance(cond, Cmp) and cond.op == ">" and isinstance(cond.a, Ref) and isinstance(cond.b, Const)
            and float(cond.b.value) == 0 and isinstance(then, Ref) and then.name == cond.a.name and cond.a.name in BY_NAME):
        return cond.a.name
    return None


# an input resolved by more than one quantity takes the one a typed value stands for: mfu_effective is the matrix
# products' efficiency alone, while a typed mfu replaces the whole step's work (mfu_whole_step)
PREFERRED_AUTO_QUANTITY = {"mfu": "mfu_whole_step"}
# input -> the quantity holding the value in use (the input when it is above 0, else the automatic value)
AUTO_QUANTITY: dict[str, str] = {inp: name for name, q in QUANTITIES.items()
                                  if (inp := _input_resolved_by(q.expr)) and PREFERRED_AUTO_QUANTITY.get(inp, name) == name}

# where the automatic value comes from, in words; {gpu} and {offer} are the option's
AUTO_BASIS = {
    # the calibrated value depends on the GPU, the count, the method and the framework; a typed value is the same for
    # every option the planner weighs, so typing the value shown can change the answer for the other GPUs
    "mfu": "calibrated for {gpu} at this count, method and framework; a typed value applies to every GPU and count",
    "job_hours": "the estimated training time",
    "usd_per_gpu_hour_rented": "the price of {offer}",
    "purchase_usd_per_gpu": "the catalog price of {gpu}",
    "measured_tokens_per_s": "the modelled generation rate",
    "gpus_per_server": "the largest server {gpu} is sold in",
    "host_memory_gib_per_gpu": "2 x the memory of {gpu}",
    "api_usd_per_mtok_input": "the price of the API compared with (api_model)",
    "api_usd_per_mtok_output": "the price of the API compared with (api_model)",
    "pipeline_microbatches": "8 x pipeline_parallel with pipelining, else 1",
    "concurrency": "the serving batch",
    "kv_transfer_gb_per_s": "the network between machines",
    **{name: "the serving engine's, calibrated" for name in (
        "engine_step_overhead_us_per_layer", "engine_request_overhead_ms", "engine_bandwidth_factor", "engine_compute_factor",
        "grouped_gemm_efficiency", "prefill_queue_share", "interleaved_prefill_share")},
}


def _number(value: float, unit: str, short: bool = False) -> str:
    """0.313, $1.87 per GPU-h, 9.41 h; ``short``: without a unit after a dollar amount ($1.87)."""
    if unit.startswith("USD"):
        from .recommendation import usd_text
        text = usd_text(value)
        return text + (f" per {unit[4:]}" if "/" in unit and not short else "")
    text = f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"
    return text if unit in ("fraction", "-", "") else f"{text} {unit}"


def in_use(inputs: Mapping | None = None) -> dict[str, dict]:
    """For every automatic input left at 0 in ``inputs``: {input: {quantity, value, text}}, where
    ``value`` is what core uses (the quantity of AUTO_QUANTITY) and ``text`` reads
    "auto: 0.45, calibrated for H100-SXM" (``short``: "auto: 0.45"; "auto: $1.87" for a price).  Inputs set above 0 are left out (they are their own value)."""
    from .engine import evaluate, resolve_inputs

    inputs = dict(inputs or {})
    used = resolve_inputs(inputs)
    auto = {name: q for name, q in AUTO_QUANTITY.items() if not float(used[name]) > 0}
    if not auto:
        return {}
    res = evaluate(inputs, outputs=tuple(auto.values()))
    out = {}
    for name, quantity in auto.items():
        value = float(res[quantity])
        basis = AUTO_BASIS.get(name, "automatic").format(gpu=used["gpu"], offer=used["offer"])
        unit = QUANTITIES[quantity].unit
        out[name] = {"quantity": quantity, "value": value, "text": f"auto: {_number(value, unit)}, {basis}",
                     "short": f"auto: {_number(value, unit, short=True)}"}
    return out
