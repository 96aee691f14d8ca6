"""Checking single input values and arrays of them against their declarations."""
from __future__ import annotations

import math

import numpy as np

from . import catalog
from .errors import InputError
from .inputs import INPUTS, Input


def allowed(inp: Input) -> str:
    """What an input allows, in words; a choice among a small catalog lists its names."""
    if inp.kind != "choice":
        return inp.allowed()
    names = catalog.tables()[inp.table].names
    listed = ", ".join(names) if len(names) <= 12 else f"a name from the {inp.table} catalog"
    extra = " or a parameter count in billions (70 or 70B)" if inp.accepts_number else ""
    auto = ' or "auto" (the GPU\'s cheapest on-demand offer)' if inp.name == "offer" else ""
    return f"{listed}{extra}{auto}"


def check_number(inp: Input, value, row=None) -> float:
    """A validated number for a numeric input (int for whole-number inputs)."""
    if isinstance(value, (bool, np.bool_)) and inp.kind != "flag":
        raise InputError(inp.name, value, f"is a yes/no value; allowed: {inp.allowed()}", row)
    if isinstance(value, str):
        raise InputError(inp.name, value, f"is text; allowed: {inp.allowed()}", row)
    if isinstance(value, (complex, np.complexfloating)):
        raise InputError(inp.name, value, f"is a complex number; allowed: {inp.allowed()}", row)
    try:
        x = float(value)
    except (TypeError, ValueError, OverflowError):
        raise InputError(inp.name, value, f"is not a number; allowed: {inp.allowed()}", row) from None
    if not math.isfinite(x):
        raise InputError(inp.name, value, f"is not finite; allowed: {inp.allowed()}", row)
    if inp.kind == "flag":
        if x not in (0.0, 1.0):
            raise InputError(inp.name, value, f"is not a flag; allowed: {inp.allowed()}", row)
        return x
    if inp.kind == "integer" and x != int(x):
        raise InputError(inp.name, value, f"is not a whole number; allowed: {inp.allowed()}", row)
    lo, hi = inp.minimum, inp.maximum
    if lo is not None and (x <= lo if inp.min_exclusive else x < lo):
        raise InputError(inp.name, value, f"is too small; allowed: {inp.allowed()}", row)
    if hi is not None and x > hi:
        raise InputError(inp.name, value, f"is too large; allowed: {inp.allowed()}", row)
    if inp.zero_or_min is not None and 0 < x < inp.zero_or_min:
        raise InputError(inp.name, value, f"is too small; allowed: {inp.allowed()}", row)
    return int(x) if inp.kind == "integer" else x


def number_list(field: str, values, what: str, above_zero: bool = False, minimum: float = 1.0) -> np.ndarray:
    """A list of numbers given to a function (batch sizes, monthly volumes) as a float array; InputError naming the
    field, the first bad value and what is allowed (``what``) for text, yes/no values, NaN, infinities, values out of
    range or anything that is not a flat list of numbers."""
    items = [values] if isinstance(values, (int, float, str, bool, np.generic)) or values is None else values
    try:
        items = list(items)
    except TypeError:
        raise InputError(field, values, f"is not a list of numbers; allowed: {what}") from None
    if not items:
        raise InputError(field, values, f"is an empty list; allowed: {what}")
    out = []
    for v in items:
        bad = isinstance(v, (bool, np.bool_, str, bytes)) or not isinstance(v, (int, float, np.integer, np.floating))
        x = math.nan if bad else float(v) if abs(v) < 1e300 else math.inf
        if bad or not math.isfinite(x) or (x <= 0 if above_zero else x < minimum):
            raise InputError(field, v, f"is not allowed; allowed: {what}")
        out.append(x)
    return np.asarray(out, dtype=float)


def _fast_bounds(inp: Input):
    """(lo, hi, integer) for a quick in-range test of plain numbers; None where the full check is needed."""
    if inp.kind in ("choice", "flag") or inp.minimum is None or inp.maximum is None or inp.min_exclusive \
            or inp.zero_or_min is not None:
        return None
    return (inp.minimum, inp.maximum, inp.kind == "integer")


FAST_BOUNDS = {i.name: _fast_bounds(i) for i in INPUTS}


def _whole_numbers_allowed(inp: Input, arr: np.ndarray) -> bool:
    """Whether every value of an array of integers (or of truth values, for a flag) is allowed, from its lowest and
    highest values alone: two passes over the array instead of one per condition (whole numbers are finite and whole,
    so what is left to check is the range).  False where the full check must decide."""
    if arr.dtype.kind not in ("iub" if inp.kind == "flag" else "iu") or not arr.size:
        return False
    lo, hi = arr.min(), arr.max()
    if inp.kind == "flag":
        return bool(lo >= 0 and hi <= 1)
    if not -2**53 < lo <= hi < 2**53:  # (each then exact as a float)
        return False
    if inp.minimum is not None and not (lo > inp.minimum if inp.min_exclusive else lo >= inp.minimum):
        return False
    if inp.maximum is not None and not hi <= inp.maximum:
        return False
    return inp.zero_or_min is None or lo >= inp.zero_or_min  # (below it, only 0 is allowed: the full check decides)


def check_array(inp: Input, arr: np.ndarray) -> np.ndarray:
    """A validated float array for a numeric input; the first bad element raises, naming its row."""
    if _whole_numbers_allowed(inp, arr):
        return arr.astype(float)
    if arr.dtype.kind not in "biuf":
        for j, v in enumerate(arr.ravel()):
            check_number(inp, v, row=j)  # raises for the first bad element
        arr = arr.astype(float)
    if arr.dtype.kind == "b" and inp.kind != "flag":
        check_number(inp, bool(arr.ravel()[0]), row=0)
    x = arr.astype(float)
    ok = np.isfinite(x)
    if inp.kind == "flag":
        ok &= (x == 0) | (x == 1)
    else:
        if inp.kind == "integer":
            ok &= x == np.floor(x)
        if inp.minimum is not None:
            ok &= (x > inp.minimum) if inp.min_exclusive else (x >= inp.minimum)
        if inp.maximum is not None:
            ok &= x <= inp.maximum
        if inp.zero_or_min is not None:
            ok &= (x == 0) | (x >= inp.zero_or_min)
    if not ok.all():
        j = int(np.flatnonzero(~ok.ravel())[0])
        check_number(inp, x.ravel()[j], row=j)
    return x


# engines that run prefill and decode on separate replicas, the KV cache sent between them ([dynamo_disagg]: vLLM
# NixlConnector, SGLang --disaggregation-mode, TensorRT-LLM disaggregated serving); core.serving names their flags
def engines_with_disaggregation() -> tuple[str, ...]:
    """The engines that run prefill and decode on separate replicas (engines.csv disaggregated_mode = 1)."""
    table = catalog.tables()["engines"]
    return tuple(n for n in table.names[: table.file_rows] if float(table.row(n).get("disaggregated_mode") or 0) > 0)


def cross_check(values, row=None, model: dict | None = None) -> None:
    """Checks that involve two inputs (and, given the model's row, the model's layers and experts)."""
    n, t = values["n_gpus"], values["tensor_parallel"]
    if n % t:
        raise InputError("tensor_parallel", t, f"must divide n_gpus ({n})", row)
    adp = values.get("attention_dp", 1)
    if n % adp:
        raise InputError("attention_dp", adp, f"must divide n_gpus ({n}); allowed: {_divisors(n)}", row)
    check_layout(n, t, values.get("pipeline_parallel", 1), values.get("context_parallel", 1),
                 values.get("expert_parallel", 1), model, row, virtual_stages=values.get("pipeline_virtual_stages", 1),
                 seq_len=values.get("seq_len"))
    serving = _is_serving(values)
    if serving and model is not None:  # a serving replica is n_gpus GPUs in tensor parallel: the engines split its heads
        problem = heads_problem(model, int(n))
        if problem:
            raise InputError("n_gpus", n, f"GPUs per serving replica (tensor parallel) {problem}", row)
        refusal = context_refusal(values, model)
        if refusal is not None:
            raise InputError(*refusal, row)
    if serving and values.get("serving_layout", 0) == 2 and "engine__row" in values:
        engine = _row(values, "engine", "engines")
        if engine is not None and not float(engine.get("disaggregated_mode") or 0) > 0:
            raise InputError("serving_layout", 2, f"(prefill and decode on separate replicas) is not a mode of {engine['name']}; "
                                                 f"allowed: 0 or 1 with this engine, or 2 with engine "
                                                 f"{', '.join(engines_with_disaggregation())}", row)
    gpu = _row(values, "gpu", "gpus") if n > 1 and "gpu__row" in values else None
    if gpu is not None and catalog.mig_profile(gpu):  # no NVLink or peer-to-peer between MIG instances
        raise InputError("n_gpus", n, _more_than_one_slice(gpu), row)
    if "precision__row" in values:
        problem = precision_problem(values)
        if problem:
            raise InputError("precision", values["precision"], problem, row)
    if "framework__row" in values and "sharding__row" in values:
        refusal = framework_refusal(values)
        if refusal is not None:
            raise InputError(*refusal, row)


def _more_than_one_slice(gpu: dict) -> str:
    return (f"is more than one slice of {gpu['name']}: a job runs on one MIG slice (no NVLink between slices); "
            "allowed: 1 (more slices serve as more replicas)")


def check_slice_rows(values, shape, extra_rows: dict) -> None:
    """A sweep: the first row that asks for more than one GPU of a MIG slice raises, naming the row, as ``cross_check``
    refuses one configuration (``extra_rows["gpus"]``: the sweep's GPUs outside the catalog)."""
    gpus = list(catalog.tables()["gpus"].rows) + list(extra_rows.get("gpus", ()))
    slices = _slice_flags(gpus)
    if not isinstance(values["gpu__row"], np.ndarray) and not slices[int(values["gpu__row"])]:
        return  # (one GPU for the whole sweep, not a slice: a million-row sweep reads no row)
    gpu_rows = np.broadcast_to(np.asarray(values["gpu__row"], dtype=int), shape)
    bad = np.flatnonzero((slices[gpu_rows] & (np.broadcast_to(np.asarray(values["n_gpus"], dtype=float), shape) > 1)).ravel())
    if bad.size:
        j = int(bad[0])
        n = np.broadcast_to(np.asarray(values["n_gpus"]), shape).flat[j]
        raise InputError("n_gpus", int(n) if float(n) == int(n) else float(n), _more_than_one_slice(gpus[int(gpu_rows.flat[j])]),
                         row=j)


def _slice_flags(gpus: list) -> np.ndarray:
    """Per GPU row, whether it is a MIG slice (the catalog's kept per catalog snapshot)."""
    shipped = catalog.snapshot().derived("gpu slices", lambda: np.array([bool(catalog.mig_profile(g))
                                                                         for g in catalog.tables()["gpus"].rows]))
    extra = gpus[len(shipped):]
    return np.concatenate([shipped, [bool(catalog.mig_profile(g)) for g in extra]]).astype(bool) if extra else shipped


def sharding_row_level(row: dict) -> int:
    """How much a sharding splits across the data-parallel GPUs, from its shardings.csv row: the optimizer states, the
    gradients and the weights counted (none 0, ZeRO stages 1-3; a user's own row by what it shards)."""
    return sum(int(float(row[k] or 0)) for k in ("shard_optimizer", "shard_gradients", "shard_weights"))


def framework_refusal(values) -> tuple[str, object, str] | None:
    """A layout, sharding or offload the training framework does not run with the other inputs, as (field, value, what
    is allowed); None where it runs.

    - A framework that refuses layouts it does not run (frameworks.csv refuses_unrun_layouts: DeepSpeed as the Hugging
      Face Trainer runs it) takes no pipeline stages without a pipeline schedule and no expert-parallel degree without
      expert-parallel training; other frameworks are estimated with the layout the job gives.

    - Beside pipeline stages a framework runs at most its pipeline_max_sharding (frameworks.csv; DeepSpeed's pipeline
      engine asserts that ZeRO-2 and -3 do not run with it: Microsoft DeepSpeed, deepspeed/runtime/pipe/engine.py).
    - A framework that offloads as ZeRO-Offload does (offload_streams_gradients: DeepSpeed) offloads the optimizer under
      a ZeRO stage and the parameters under ZeRO-3 only (DeepSpeed configuration JSON: zero_optimization.offload_optimizer
      and offload_param, https://www.deepspeed.ai/docs/config-json/)."""
    fw, sh = _row(values, "framework", "frameworks"), _row(values, "sharding", "shardings")
    if fw is None or sh is None:
        return None
    if float(fw.get("refuses_unrun_layouts") or 0) > 0:  # a degree the framework's integration does not run
        for field, column, what in (("pipeline_parallel", "pipeline_schedule", "no pipeline schedule"),
                                    ("expert_parallel", "expert_parallel_training", "no expert parallelism")):
            degree = values.get(field, 1)
            if degree > 1 and not float(fw.get(column) or 0) > 0:
                return (field, degree, f"is not run under {fw['name']}: as the Hugging Face Trainer runs it, it has {what} "
                                       "(DeepSpeed's PipelineModule and MoE layers need the model rewritten, as "
                                       "Megatron-DeepSpeed does: framework megatron); allowed: 1")
    shardings = catalog.tables()["shardings"]
    limit = str(fw.get("pipeline_max_sharding") or "")
    pp = values.get("pipeline_parallel", 1)
    if pp > 1 and limit and sharding_row_level(sh) > sharding_row_level(shardings.row(limit)):
        allowed = [r["name"] for r in shardings.rows if sharding_row_level(r) <= sharding_row_level(shardings.row(limit))]
        return ("sharding", sh["name"], f"does not run beside pipeline stages under {fw['name']} (its pipeline engine takes "
                                        f"{limit} at most); allowed with pipeline_parallel {pp:g}: {', '.join(allowed)}")
    if float(fw.get("offload_streams_gradients") or 0) > 0:
        if values.get("offload_params", 0) and not float(sh["shard_weights"] or 0):
            return ("offload_params", 1, f"needs sharding zero3 under {fw['name']}, which offloads parameters under ZeRO "
                                         f"stage 3 only; allowed with sharding {sh['name']}: 0")
        if values.get("offload_optimizer", 0) and not float(sh["shard_optimizer"] or 0):
            return ("offload_optimizer", 1, f"needs a ZeRO stage under {fw['name']} (sharding zero1, zero2 or zero3); "
                                            f"allowed with sharding {sh['name']}: 0")
    return None


def context_is_default(model: dict) -> bool:
    """Whether the model's max_context is a default rather than the model's own: an architecture estimated from a
    parameter count, or fields / a config.json that give no context length (``architectures.CONTEXT_IS_DEFAULT``)."""
    from .architectures import CONTEXT_IS_DEFAULT
    return bool(float(model.get(CONTEXT_IS_DEFAULT, 0) or 0))


def context_refusal(values, model: dict) -> tuple[str, object, str] | None:
    """(field, value, what is allowed) when a serving request (prompt_tokens + output_tokens) is longer than the model's
    context, from the model catalog or the model's own config (an engine refuses such a request: vLLM's "This model's
    maximum context length is N tokens" error, the prompt plus max_tokens against max_model_len); None when it fits, or
    when the context is only a default (``context_is_default``: the answer then says so, ``context_note``)."""
    context = float(model.get("max_context", 0) or 0)
    prompt, output = float(values.get("prompt_tokens", 0)), float(values.get("output_tokens", 0))
    if context <= 0 or prompt + output <= context or context_is_default(model):
        return None
    name = model.get("name", "the model")
    where = "model catalog" if name in catalog.tables()["models"].names else "the model's config.json or fields"
    if prompt > context:
        return ("prompt_tokens", values["prompt_tokens"], f"is longer than {name}'s context of {context:,.0f} tokens ({where}, "
                                                          f"max_context); allowed: prompt_tokens + output_tokens up to "
                                                          f"{context:,.0f}")
    return ("output_tokens", values["output_tokens"], f"with prompt_tokens {prompt:,.0f} is longer than {name}'s context of "
                                                      f"{context:,.0f} tokens ({where}, max_context); allowed: "
                                                      f"output_tokens up to {context - prompt:,.0f}")


def check_context_rows(values, shape, extra_models, task: str | None) -> None:
    """A sweep (``core.evaluate`` over arrays) of a serving job: the first row whose request (prompt_tokens +
    output_tokens) is longer than its model's known context raises ``context_refusal``'s InputError, naming the row.
    ``task``: "serve" or "train" when one task holds for every row, None when it varies; ``extra_models``: the rows of
    models outside the catalog the sweep uses (their indices follow the catalog's)."""
    if task == "train":
        return
    models = catalog.tables()["models"].rows
    kinds = [bool(float(flag)) for flag in catalog.tables()["tasks"].col["serve"]]
    serve = np.broadcast_to(np.asarray(kinds)[np.asarray(values["task__row"], dtype=int)], shape)
    if not serve.any():
        return
    rows = np.broadcast_to(np.asarray(values["model__row"], dtype=int), shape)
    every = list(models) + list(extra_models)
    context = np.array([0.0 if context_is_default(r) else float(r.get("max_context", 0) or 0) for r in every])[rows]
    asked = np.broadcast_to(np.asarray(values["prompt_tokens"], dtype=float) + np.asarray(values["output_tokens"], dtype=float),
                            shape)
    bad = np.flatnonzero((serve & (context > 0) & (asked > context)).ravel())
    if bad.size:
        j = int(bad[0])
        one = {k: float(np.broadcast_to(np.asarray(values[k], dtype=float), shape).flat[j]) for k in ("prompt_tokens", "output_tokens")}
        raise InputError(*context_refusal(one, every[int(rows.flat[j])]), row=j)


def serving_counts_rows(values, shape, extra_rows: dict, task: str | None, given) -> None:
    """A sweep of a serving job, row by row as one configuration is (``mig_serving_count`` and ``cross_check``): without
    an n_gpus given, each row's GPUs per replica are ``serving_default_count``'s; with n_gpus given, the first row whose
    count cannot split its model's heads raises, naming the row.  ``task`` and the models outside the catalog
    (``extra_rows["models"]``) as for ``check_context_rows``."""
    if task == "train":
        return
    kinds = [bool(float(flag)) for flag in catalog.tables()["tasks"].col["serve"]]
    serve = np.broadcast_to(np.asarray(kinds)[np.asarray(values["task__row"], dtype=int)], shape)
    if not serve.any():
        return
    every = list(catalog.tables()["models"].rows) + list(extra_rows.get("models", ()))
    rows = np.broadcast_to(np.asarray(values["model__row"], dtype=int), shape)
    if "n_gpus" not in given:  # (one default count for every row)
        default = int(values["n_gpus"])
        gpus = list(catalog.tables()["gpus"].rows) + list(extra_rows.get("gpus", ()))
        slices = _slice_flags(gpus)
        model_row = values["model__row"]
        used = range(len(every)) if isinstance(model_row, np.ndarray) else (int(model_row),)
        counts = np.zeros((2, len(every)), dtype=int)  # on a slice or not, per model row (those the sweep can use)
        for i in used:
            counts[:, i] = [serving_default_count(every[i], on_a_slice, default) for on_a_slice in (False, True)]
        counts = np.where(serve, counts[slices[np.asarray(values["gpu__row"], dtype=int)].astype(int), rows], default)
        first = int(counts.flat[0])
        if first != default or (counts != default).any():  # one count for every row stays one value
            values["n_gpus"] = first if (counts == first).all() else counts.astype(float)
        return
    n = np.broadcast_to(np.asarray(values["n_gpus"], dtype=float), shape)
    heads, kv = np.array([_heads_kv(m) for m in every]).T
    with np.errstate(invalid="ignore", divide="ignore"):
        bad = np.flatnonzero((serve & (n > 1) & ~heads_split(heads[rows], kv[rows], n)).ravel())
    if bad.size:
        j = int(bad[0])
        count = int(n.flat[j])
        raise InputError("n_gpus", count, f"GPUs per serving replica (tensor parallel) "
                                          f"{heads_problem(every[int(rows.flat[j])], count)}", row=j)


def context_note(values, model: dict) -> str | None:
    """A sentence when a serving request is longer than a context length that is only a default (an estimated or
    ad-hoc architecture): planned, not refused, since the model's real context is not known."""
    context = float(model.get("max_context", 0) or 0)
    prompt, output = float(values.get("prompt_tokens", 0)), float(values.get("output_tokens", 0))
    if context <= 0 or prompt + output <= context or not context_is_default(model):
        return None
    return (f"A request of {prompt:,.0f} prompt + {output:,.0f} output tokens is longer than the {context:,.0f} tokens "
            f"assumed for {model.get('name', 'this model')}, whose context length is not known (no max_context given); "
            "check the model's own context (max_position_embeddings in its config.json) before serving it")


def _row(values, key: str, table: str) -> dict | None:
    adhoc_key, row_key = _ROW_KEYS.get(key) or (key + "__adhoc", key + "__row")
    adhoc = values.get(adhoc_key)
    if adhoc is not None:
        return adhoc
    i = values.get(row_key)
    return None if i is None or i < 0 else catalog.tables()[table].rows[i]


_ROW_KEYS = {i.name: (i.name + "__adhoc", i.name + "__row") for i in INPUTS if i.kind == "choice"}  # asked on every call


def fp8_gpus(block_scaled: bool) -> list[str]:
    """The catalog's GPUs that run an FP8 precision (block-scaled MXFP8: data-centre parts with FP4/MX tensor cores)."""
    gpus = catalog.tables()["gpus"]
    return [r["name"] for r in gpus.rows if float(r["fp8_dense_tflops"]) > 0
            and (not block_scaled or (float(r["fp4_dense_tflops"]) > 0 and float(r["multi_gpu_fabric"]) > 0))]


def precision_problem(values) -> str | None:
    """Why the training precision cannot run on the GPU (or with the method), in words; None when it can.

    An FP8 precision on a GPU without FP8 tensor cores (A100, A10, RTX 3090, ...) is refused rather than estimated at
    the BF16 rate: Transformer Engine and torchao refuse it too, and a silent fallback would quote an FP8 job at a
    speed no FP8 run has.  Sweeps over GPUs (the planner, compare) keep going and mark such options not acceptable
    (train_precision_supported)."""
    prec = _row(values, "precision", "precisions")
    if not prec or not float(prec.get("fp8_linears", 0) or 0):
        return None
    gpu = _row(values, "gpu", "gpus")
    method = _row(values, "method", "methods")
    if method and float(method.get("quantized_base", 0) or 0):
        return (f"runs the linear layers' matmuls in FP8, but {method['name']} keeps its base weights in 4 bits and "
                "multiplies them in 16 bits; allowed with qlora: bf16_mixed, bf16_pure")
    if gpu is None:
        return None
    block = bool(float(prec.get("block_scaled", 0) or 0))
    if float(gpu["fp8_dense_tflops"]) > 0 and (not block or (float(gpu["fp4_dense_tflops"]) > 0 and float(gpu["multi_gpu_fabric"]) > 0)):
        return None
    names = fp8_gpus(block)
    listed = ", ".join(names[:8]) + (", ..." if len(names) > 8 else "")
    if block:
        other = "fp8 (per-tensor scaling), " if float(gpu["fp8_dense_tflops"]) > 0 else ""
        return (f"needs a data-centre GPU with block-scaled (MX) FP8 tensor cores, which {gpu['name']} is not; use {other}"
                f"bf16_mixed or bf16_pure, or one of {listed}")
    return f"needs FP8 tensor cores, which {gpu['name']} does not have; use bf16_mixed or bf16_pure, or a GPU with them ({listed})"



def _divisors(k: int, most: int | None = None) -> str:
    """The divisors of k (at most ``most``) in words, for "allowed: ..." (the first eight and the largest)."""
    found = [d for d in range(1, int(k) + 1) if k % d == 0 and (most is None or d <= most)]
    return ", ".join(map(str, found)) if len(found) <= 9 else ", ".join(map(str, found[:8])) + f", ..., {found[-1]}"


def mig_serving_count(values, given) -> None:
    """The GPUs per replica of a serving job that gives no n_gpus, instead of the training default (8) that the rules
    of ``cross_check`` would refuse although the user never gave it: 1 on a MIG slice (the only size a slice runs),
    else the largest count up to the default that the engines can split the model's heads over."""
    if "n_gpus" in given or not _is_serving(values):
        return
    gpu = _row(values, "gpu", "gpus") if "gpu__row" in values or "gpu__adhoc" in values else None
    model = _row(values, "model", "models") if "model__row" in values or "model__adhoc" in values else None
    count = serving_default_count(model, gpu is not None and bool(catalog.mig_profile(gpu)), int(values["n_gpus"]))
    if count != int(values["n_gpus"]):
        values["n_gpus"] = count


def serving_default_count(model: dict | None, on_a_slice: bool, default: int) -> int:
    """A serving replica's GPUs when none are given: 1 on a MIG slice (the only size a slice runs), else the largest
    count up to ``default`` that the engines can split the model's heads over (``heads_problem``)."""
    if on_a_slice:
        return 1
    if model is None or heads_problem(model, default) is None:
        return default
    return max(d for d in range(1, default + 1) if heads_problem(model, d) is None)


def _is_serving(values) -> bool:
    """Whether the job is a serving job (task serve): its n_gpus are the GPUs of one replica."""
    try:
        task = _row(values, "task", "tasks") if "task__row" in values else None
    except (IndexError, KeyError, TypeError):
        return False
    return bool(task is not None and float(task.get("serve", 0) or 0))


def heads_problem(model: dict, t: int) -> str | None:
    """Why ``t`` tensor-parallel GPUs cannot split the model's attention (in words, with the degrees allowed), or None.

    Megatron-LM, vLLM, SGLang and TensorRT-LLM give each tensor-parallel GPU a whole number of attention heads, so the
    degree divides the heads; KV heads (grouped-query attention) are split the same way, or, when the degree is a
    multiple of them, each KV head is replicated on degree / KV heads GPUs (vLLM and TensorRT-LLM do this; its cache
    then takes that many times the memory per GPU the split would).  Source: vLLM, vllm/model_executor/models/llama.py
    (LlamaAttention: "Number of KV heads is less than TP size, so we replicate the KV heads across multiple tensor
    parallel GPUs"), https://github.com/vllm-project/vllm."""
    if t <= 1:
        return None
    heads, kv = (int(x) for x in _heads_kv(model))
    if heads <= 0 or heads_split(heads, kv, t):  # (unknown heads first: no KV heads to divide by)
        return None
    ok = ", ".join(str(d) for d in range(1, heads + 1) if heads_split(heads, kv, d))
    if heads % t:
        return f"must divide the model's {heads} attention heads (each GPU holds whole heads); allowed: {ok}"
    return (f"must divide the model's {kv} KV heads, or be a multiple of them (the engines then replicate each KV head); "
            f"allowed: {ok}")


def _heads_kv(model: dict) -> tuple[float, float]:
    """A model's attention heads and KV heads (its heads where it names no KV heads)."""
    heads = float(model.get("heads", 0) or 0)
    return heads, float(model.get("kv_heads", 0) or 0) or heads


def heads_split(heads, kv, t):
    """Whether ``t`` tensor-parallel GPUs split attention of ``heads`` heads and ``kv`` KV heads (``heads_problem``'s
    rule): numbers (heads > 0), or NumPy arrays row by row, where a row of unknown heads (0) is not refused."""
    return (heads <= 0) | ((heads % t == 0) & ((kv % t == 0) | (t % kv == 0)))


def kv_replication_note(model: dict, t: int) -> str | None:
    """A sentence when ``t`` tensor-parallel GPUs replicate the model's KV heads (more GPUs than KV heads), else None."""
    heads = int(model.get("heads", 0) or 0)
    kv = int(model.get("kv_heads", 0) or 0) or heads
    if t > 1 and kv and t > kv and t % kv == 0 and heads % t == 0:
        return (f"{t} tensor-parallel GPUs for {kv} KV heads: each KV head is replicated on {t // kv} GPUs, as vLLM and "
                "TensorRT-LLM do")
    return None


def check_context_parallel(cp, seq_len, row=None) -> None:
    """Context-parallel GPUs no more than the sequence's tokens (each holds a part of every sequence): the one check
    between inputs that reads ``seq_len``, which scalar evaluation runs on every call (engine.CHECKED_EVERY_CALL), so
    the kept passes of the other checks need no key per sequence length."""
    if seq_len is not None and cp > int(seq_len):
        cp = cp if type(cp) is int else int(cp)
        raise InputError("context_parallel", cp, f"is more than the sequence length ({int(seq_len)} tokens): each context-"
                                                 f"parallel GPU holds a part of every sequence; allowed: 1 to {int(seq_len)}", row)


def check_layout(n, t, pp, cp, ep, model: dict | None = None, row=None, virtual_stages=1, seq_len=None) -> None:
    """n_gpus = tensor x pipeline x context x data parallel, expert parallel inside data x context parallel;
    pipeline stages no more than the model's layers, expert-parallel degree a divisor of its experts."""
    # (int() only where needed: the common call passes ints, and each int() costs more than the check it feeds)
    if not type(n) is type(t) is type(pp) is type(cp) is type(ep) is int:
        n, t, pp, cp, ep = int(n), int(t), int(pp), int(cp), int(ep)
    check_context_parallel(cp, seq_len, row)
    if n % (t * pp):
        raise InputError("pipeline_parallel", pp, f"times tensor_parallel ({t}) must divide n_gpus ({n}); "
                                                  f"allowed: {_divisors(n // t)}", row)
    if n % (t * pp * cp):
        raise InputError("context_parallel", cp, f"times tensor_parallel x pipeline_parallel ({t * pp}) must divide n_gpus ({n}); "
                                                 f"allowed: {_divisors(n // (t * pp))}", row)
    if (n // (t * pp)) % ep:
        raise InputError("expert_parallel", ep, f"must divide n_gpus / (tensor_parallel x pipeline_parallel) ({n // (t * pp)}); "
                                                f"allowed: {_divisors(n // (t * pp))}", row)
    if model is None:
        return
    layers, experts = model["layers"], model["experts"]
    layers, experts = layers if type(layers) is int else int(layers), experts if type(experts) is int else int(experts)
    if pp > layers:
        raise InputError("pipeline_parallel", pp, f"is more than the model's {layers} layers; allowed: 1 to {layers}", row)
    v = int(virtual_stages or 1)
    if pp > 1 and pp * v > layers:
        raise InputError("pipeline_virtual_stages", v, f"x pipeline_parallel ({pp}) is more than the model's {layers} layers "
                                                       f"(each stage holds at least one layer); allowed: 1 to {max(1, layers // pp)}", row)
    problem = heads_problem(model, t) if t > 1 else None  # (heads_problem of one GPU is None)
    if problem:
        raise InputError("tensor_parallel", t, problem, row)
    if ep > 1 and experts <= 1:
        raise InputError("expert_parallel", ep, "needs a mixture-of-experts model (this model has no experts); allowed: 1", row)
    if ep > 1 and experts % ep:
        raise InputError("expert_parallel", ep, f"must divide the model's {experts} experts; allowed: "
                                                f"{_divisors(experts, n // (t * pp))}", row)
