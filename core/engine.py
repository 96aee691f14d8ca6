"""Evaluation: resolve and validate inputs, then run the compiled formulas.

``evaluate`` is the one entry point for values: scalars in, scalars out; any list, NumPy
array or pandas Series in, arrays (or Series) of the broadcast shape out.  The code it runs
is generated from the expression trees in ``formulas.py`` (see ``codegen.py``), the same
trees the Excel formulas are rendered from.
"""
from __future__ import annotations

import functools
import math
import operator
import os
import sys
import threading
from typing import Mapping

import numpy as np

from . import catalog, hf_config, offers
from .architectures import check_params_b, custom_row, estimate_architecture, size_in_billions
from .codegen import QUANTITY_NAMES, STAGE_INPUTS, compile_formulas, lookups, refs, split_by_inputs
from .errors import InputError
from .expr import text
from .formulas import INFER_COMPONENTS, QUANTITIES, TRAIN_COMPONENTS
from .hf_config import looks_like_path
from .inputs import BY_NAME, INPUTS, Input
from .names import normalize, split_weight_format
from .references import cite
from .text import did_you_mean
from .validation import (
    FAST_BOUNDS,
    allowed,
    check_array,
    check_context_parallel,
    check_context_rows,
    check_number,
    check_slice_rows,
    cross_check,
    mig_serving_count,
    serving_counts_rows,
)

_PLAIN_SCALARS = (str, int, float, bool)
_PLAIN_TYPES = frozenset(_PLAIN_SCALARS)
_BYTES = (bytes, bytearray, memoryview)


def _cached(name, build):
    """A value built once per catalog snapshot: defaults and row tuples follow reloads and added rows."""
    memo = catalog.snapshot().memo  # Snapshot.derived, inlined: every evaluation asks
    try:
        return memo[name]
    except KeyError:
        return memo.setdefault(name, build())


# ---------------------------------------------------------------------------
# resolving single values

def _resolve_choice(inp: Input, value, row=None):
    """The catalog row index for a choice input, or (for a model given as a parameter count
    or as architecture fields) the architecture row itself, which stays out of the catalog."""
    table = catalog.tables()[inp.table]
    if inp.name == "offer" and isinstance(value, str) and value.strip().lower() == catalog.AUTO_OFFER:
        return -1  # resolved against the GPU by offers.link
    if isinstance(value, _BYTES):
        raise InputError(inp.name, value, f"is bytes, not text or a number; allowed: {allowed(inp)}", row)
    if inp.accepts_number:
        if isinstance(value, Mapping):
            return custom_row(value)
        if isinstance(value, str) and size_in_billions(value) is not None:
            return estimate_architecture(check_params_b(size_in_billions(value), inp.name, row))
        if not isinstance(value, (str, bool, np.bool_)):
            try:
                x = float(value)
            except (TypeError, ValueError, OverflowError):
                raise InputError(inp.name, value, f"is neither a name nor a number; allowed: {allowed(inp)}", row) from None
            return estimate_architecture(check_params_b(x, inp.name, row))
    if isinstance(value, str):
        if inp.accepts_number and value.strip() and looks_like_path(value):
            return _config_row(value, row)  # a Hugging Face config.json, or a folder holding one
        try:
            return table.resolve(value, inp.name)
        except InputError as err:
            adhoc = _config_row(value, row) if inp.accepts_number and value.strip() else None
            if adhoc is not None:  # a local folder or a Hub id ("org/name") from the Hugging Face cache
                return adhoc
            if row is not None:
                raise InputError(err.field, err.value, err.allowed, row, err.verb) from None
            raise
    raise InputError(inp.name, value, f"is not a name; allowed: {allowed(inp)}", row)


def _config_row(value: str, row=None) -> dict | None:
    """The architecture read from a Hugging Face config.json (see hf_config.resolve), checked like fields a user
    gives; a sweep's row in errors."""
    try:
        spec = hf_config.resolve(value)
        return None if spec is None else dict(_checked_fields(tuple(spec.items())))
    except InputError as err:
        if row is not None:
            raise InputError(err.field, err.value, err.allowed, row, err.verb) from None
        raise


@functools.lru_cache(maxsize=64)
def _checked_fields(items: tuple) -> tuple:
    return tuple(custom_row(dict(items)).items())


def row_of(values: Mapping, key: str) -> dict:
    """The catalog row (or the architecture row of a model given by count or fields) that
    choice input ``key`` resolved to in ``resolve_inputs``'s result."""
    if values.get(key + "__adhoc") is not None:
        return values[key + "__adhoc"]
    return catalog.tables()[BY_NAME[key].table].rows[values[key + "__row"]]


def _build_defaults() -> dict:
    values: dict = {}
    for inp in INPUTS:
        if inp.kind == "choice":
            i = _resolve_choice(inp, inp.default)
            values[inp.name] = catalog.tables()[inp.table].rows[i]["name"] if i >= 0 else inp.default
            values[inp.name + "__row"] = i
        else:
            values[inp.name] = check_number(inp, inp.default)
    return values


def _resolved_defaults() -> dict:
    # (``_cached`` without its closure: every scalar evaluation asks)
    memo = catalog.snapshot().memo
    try:
        return memo["defaults"]
    except KeyError:
        return memo.setdefault("defaults", _build_defaults())


def _unknown(name) -> InputError:
    return InputError(str(name), None, f"is not an input{did_you_mean(name, BY_NAME)}; see docs/quantities.md")


def _is_array(value) -> bool:
    if isinstance(value, (str, bytes, Mapping)):
        return False
    return isinstance(value, (list, tuple, np.ndarray)) or type(value).__module__.startswith("pandas")


def _given(inputs, kw) -> dict:
    if inputs is not None and type(inputs) is not dict and not isinstance(inputs, Mapping):
        raise InputError("inputs", inputs, "must be a mapping of input names to values, e.g. {\"gpu\": \"H100-SXM\"}")
    given = dict(inputs) if inputs else {}
    if kw:
        given.update(kw)
    if not _INPUT_NAMES >= given.keys():
        raise _unknown(sorted(map(str, given.keys() - BY_NAME.keys()))[0])
    if not _PLAIN_TYPES.issuperset(map(type, given.values())):  # (one pass in C for the common case)
        for name, value in given.items():
            if type(value) not in _PLAIN_SCALARS and isinstance(value, _BYTES):  # float(b"8") is 8.0: bytes would pass as a number unnoticed
                raise InputError(name, value, f"is bytes, not text or a number; allowed: {allowed(BY_NAME[name])}")
    model = given.get("model")
    if isinstance(model, str) and "weights_dtype" not in given:
        # (a str subclass is asked anew: the remembered answers are keyed by plain names)
        fmt = _weights_dtype_of_model_name(model) if type(model) is str else weights_dtype_of_model_name(model)
        if fmt is not None:  # "Qwen/Qwen3-235B-A22B-FP8": the base model with FP8 weights (a weights_dtype given wins)
            given["weights_dtype"] = fmt
    return given


_INPUT_NAMES = frozenset(BY_NAME)
_FORMATS_KEPT = 4096  # model names whose weight format is remembered per catalog snapshot


def _weights_dtype_of_model_name(model: str) -> str | None:
    """``weights_dtype_of_model_name``, remembered per catalog snapshot (whether the catalog holds the name is the one
    part that depends on it): every evaluation that names a model asks, and the answer costs microseconds."""
    formats = _cached("weight formats of model names", dict)
    try:
        return formats[model]
    except KeyError:
        fmt = weights_dtype_of_model_name(model)
        if len(formats) < _FORMATS_KEPT:
            formats[model] = fmt
        return fmt


def weights_dtype_of_model_name(model: str) -> str | None:
    """The weight format a model name's suffix names ("nvidia/DeepSeek-V3.1-NVFP4": "nvfp4"), or None: none named, or a
    path (a config.json says its own format) or a name the models catalog holds as it is."""
    if looks_like_path(model):
        return None
    models = catalog.models()
    if models.holds_name(model):  # a catalog name, or an alias naming a release in a format ("Qwen/Qwen3-32B-FP8")
        i = models.find(model)
        if i is None or normalize(str(models.rows[i]["name"])) == normalize(model):
            return None
    return split_weight_format(model.strip().rsplit("/", 1)[-1])[1]


def inference_inputs(given: Mapping) -> dict:
    """The inputs of one inference setup as it is served: ``given`` with the weight format the model was released in
    (``release_weights_dtype``: gpt-oss's MXFP4, DeepSeek-V3's FP8) where no weights_dtype is given, as the serving
    planner and the launch commands take it; otherwise unchanged (16-bit by default)."""
    out = dict(given)
    if "weights_dtype" not in out:
        released = release_weights_dtype(out.get("model"))
        if released is not None:
            out["weights_dtype"] = released
    return out


def release_weights_dtype(model) -> str | None:
    """The weight format a model is served in by default: the one its checkpoint's name carries ("...-NVFP4"), else the
    one its publisher released it in (models catalog ``release_weights_dtype``: gpt-oss's MXFP4 experts, DeepSeek-V3's
    FP8); None for a 16-bit release, a path or a model outside the catalog.  The serving planner, the launch commands
    and the inference estimate (``inference_inputs``) use it; ``evaluate`` keeps the weights_dtype input (16-bit unless
    given)."""
    if not isinstance(model, str) or looks_like_path(model):
        return None
    named = weights_dtype_of_model_name(model)
    if named is not None:
        return named
    models = catalog.models()
    i = models.find(model)
    return (str(models.rows[i].get("release_weights_dtype") or "") or None) if i is not None else None


_CHOICE_TABLES = {i.name: (i.table, i.name + "__row") for i in INPUTS if i.kind == "choice"}  # asked per input given


def _scalar_values(given: Mapping) -> dict:
    """Defaults overlaid with validated, resolved scalar inputs (choice inputs also get their row)."""
    values = dict(_resolved_defaults())
    tabs = catalog.tables()
    for name, value in given.items():
        choice = _CHOICE_TABLES.get(name)
        if choice is not None:
            table = tabs[choice[0]]
            i = table.known(value) if type(value) is str else None
            if i is None:
                i = _resolve_choice(BY_NAME[name], value)
            if isinstance(i, dict):
                values[name], values[name + "__row"], values[name + "__adhoc"] = i["name"], -1, i
            else:
                values[name] = table.col["name"][i] if i >= 0 else catalog.AUTO_OFFER
                values[choice[1]] = i
        else:
            fast = FAST_BOUNDS[name]
            if type(value) in (int, float) and fast is not None and fast[0] <= value <= fast[1] \
                    and (not fast[2] or value == int(value)):
                values[name] = value  # common case: a plain in-range number
            else:
                values[name] = check_number(BY_NAME[name], value)
    return values


def resolve_inputs(inputs: Mapping | None = None) -> dict:
    """Every input's value as used for scalar inputs: defaults filled in, names canonical,
    numbers checked, offer "auto" resolved.

    Choice inputs also carry ``<name>__row``, their row in the catalog (``row_of`` gives the
    row itself, also for a model given as a parameter count or as architecture fields).
    """
    return _resolved(_given(inputs, {}))


def check_input(name: str, value):
    """One input's value checked on its own (unit, range, catalog name), without the checks between inputs
    (tensor_parallel versus n_gpus, offer versus GPU); returns the value as used.  Raises ``InputError``."""
    return _scalar_values(_given({name: value}, {}))[name]


def _resolved(given: Mapping) -> dict:
    """Scalar inputs validated, defaults filled in, the offer linked to the GPU, cross-checked."""
    values = _scalar_values(given)
    _linked_and_checked(values, given)
    return values


def _linked_and_checked(values: dict, given: Mapping) -> None:
    """``_resolved`` after ``_scalar_values``: the offer linked to the GPU, a serving replica's count, the checks."""
    offers.link(values, "gpu" in given)
    mig_serving_count(values, given)
    if "model__adhoc" in values:  # a model outside the catalog: its fields are the model row itself
        cross_check(values, model=values["model__adhoc"])
        return
    _checked_between(values)


def _checked_between(values: dict) -> None:
    """``cross_check`` for a model of the catalog.  The checks read only the values in CROSS_CHECKED_NAMES and
    CHECKED_EVERY_CALL (a test holds them to it) and the catalog rows those name, and compare numbers by value (8 and
    8.0 alike): a combination that passed once passes again in this catalog snapshot, but for the sequence length
    against the context-parallel GPUs, checked on every call (one comparison; a sweep changes seq_len most).  One that
    raises is never kept, so its message always names the value given."""
    key = _cross_checked(values)
    passed = catalog.snapshot().memo.get("cross checks passed")
    if passed is not None and key in passed:
        check_context_parallel(values.get("context_parallel", 1), values.get("seq_len"))
        return
    cross_check(values, model=row_of(values, "model"))
    passed = catalog.snapshot().memo.setdefault("cross checks passed", {})
    if len(passed) >= _CROSS_CHECKS_KEPT:
        passed.clear()
    passed[key] = None


# every value cross_check reads (choice inputs by their row; a model outside the catalog is checked every time) but
# those of the check run on every call; the serving request's length is here too, for the check of a request against
# the model's context
CROSS_CHECKED_NAMES = ("n_gpus", "tensor_parallel", "attention_dp", "pipeline_parallel", "context_parallel",
                       "expert_parallel", "pipeline_virtual_stages", "serving_layout", "precision",
                       "prompt_tokens", "output_tokens",
                       "offload_params", "offload_optimizer",
                       "task__row", "engine__row", "gpu__row", "precision__row", "method__row", "model__row",
                       "framework__row", "sharding__row")
CHECKED_EVERY_CALL = ("context_parallel", "seq_len")  # validation.check_context_parallel
_cross_checked = operator.itemgetter(*CROSS_CHECKED_NAMES)
_CROSS_CHECKS_KEPT = 4096


# ---------------------------------------------------------------------------
# evaluation

def _task_kinds() -> tuple[str, ...]:
    """Per row of the tasks catalog, "serve" or "train" (its serve flag): the scalar code is generated per task."""
    memo = catalog.snapshot().memo  # (``_cached`` without its closure: every scalar evaluation asks)
    try:
        return memo["task_kinds"]
    except KeyError:
        return memo.setdefault("task_kinds", tuple("serve" if float(flag) else "train"
                                                   for flag in catalog.tables()["tasks"].col["serve"]))


def _scalar_rows(compiled) -> dict:
    """Per table, its rows as tuples of the fields the compiled code unpacks."""
    key = ("rows", compiled.source)  # a str caches its hash; a tuple of 170 names does not
    memo = catalog.snapshot().memo  # (``_cached`` without its closure: every scalar evaluation asks)
    try:
        return memo[key]
    except KeyError:
        tabs = catalog.tables()
        return memo.setdefault(key, {t: compiled.table_rows(t, tabs[t].col.__getitem__) for t in compiled.row_fields})


def _outputs(outputs) -> tuple[str, ...] | None:
    """The requested quantities as a tuple (None: all), each checked."""
    if outputs is None:
        return None
    if isinstance(outputs, str):
        outputs = (outputs,)
    try:
        names = tuple(outputs)
    except TypeError:
        raise InputError("outputs", outputs, "must be a list of quantity names (docs/quantities.md)") from None
    for name in names:
        if not isinstance(name, str) or name not in QUANTITIES:
            hint = did_you_mean(name, QUANTITIES) if isinstance(name, str) else ""
            raise InputError("outputs", name, f"is not a quantity{hint}; see docs/quantities.md")
    return names


def evaluate(inputs: Mapping | None = None, outputs=None, **kw) -> dict:
    """Every quantity for one configuration, or a whole sweep.

    ``inputs`` maps input names (``gpu_tco.INPUTS``, docs/quantities.md) to values; missing
    inputs take their defaults.  Scalars in, scalars out.  If any value is a list, NumPy array
    or pandas Series, all inputs are broadcast together and every quantity comes back as an
    array of that shape (a Series with the input's index if a Series came in); sweeps run in
    blocks of ``CHUNK_ROWS`` rows, so memory grows with the inputs and the requested outputs only.
    What does not vary with the inputs given as arrays is computed once per call; in a large sweep,
    what varies only with inputs that take few values together (GPU counts, batch sizes, catalog
    rows) is computed once per combination of their values (the same numbers).  A sweep reuses
    the result arrays of the previous sweep of the same size once nothing refers to them any more
    (``free_sweep_memory()`` lets that memory go).  What does not vary comes back as one value
    broadcast to every row, read-only.  In a sweep of more than ``CHUNK_ROWS`` rows, quantities
    equal in every row may share one read-only array; in one that computes part of its work once per
    combination of its inputs of few values (``FEW_VALUES_MIN_ROWS`` rows or more), what turns out
    to be one value in every combination comes back broadcast too (copy one,
    ``np.array(result[name])``, to change it).

    ``outputs``: names of the quantities wanted; only those and what they depend on are
    computed (the generated code is cached per set of outputs and of inputs given as arrays).
    Default: all.  An empty list gives an empty dict (after the inputs are checked as usual).

    Raises ``InputError`` naming the input, the value and what is allowed.
    """
    if type(inputs) is dict and not kw:  # a call like the previous one but for a few numbers: from what it resolved
        result = _evaluate_again(inputs, outputs)
        if result is not None:
            return result
    given = _given(inputs, kw)
    wanted = _outputs(outputs)
    if wanted == ():  # no quantity asked for: the inputs are still checked, the result is empty
        evaluate(given, outputs=_CHECK_ONLY)
        return {}
    for value in given.values():
        if type(value) not in _PLAIN_SCALARS and _is_array(value):
            return _evaluate_vector(given, wanted)
    values = _scalar_values(given)
    offer_given = values["offer__row"]  # before linking: offer "auto" is linked again when n_gpus changes
    _linked_and_checked(values, given)
    plan = _scalar_plan(wanted, values["task__row"])
    tag = None if plan[0].staged_code is None else _type_tag(given, values)
    # kept for the next call: a dict of plain values (an object of another type might change in place unseen)
    raw = (tuple(inputs), tuple(inputs.values())) if type(inputs) is dict and not kw \
        and _PLAIN_TYPES.issuperset(map(type, inputs.values())) else None
    return _run_scalar(wanted, values, (raw, offer_given, "gpu" in given, plan, tag, None))


def _evaluate_again(inputs: dict, outputs) -> dict | None:
    """``evaluate`` of a call whose inputs differ from the previous call's with the same outputs only in plain numbers
    (``_like_last``): from the values that call resolved, kept per set of outputs in the catalog snapshot's memo and
    taken out while a call runs (calls from several threads never share it; a new snapshot starts without it).  None:
    resolve afresh."""
    try:
        wanted = None if outputs is None else _outputs(outputs)
    except InputError:
        return None  # (the full call names what is wrong, inputs first)
    states = catalog.snapshot().memo.get(_LAST_CALLS)
    last = None if states is None else states.pop(wanted, None)
    if last is None:
        return None
    state = _like_last(inputs, last)
    if state is None:  # (nothing of it was changed: kept for the next scalar call, e.g. after a sweep of arrays)
        states.setdefault(wanted, last)
        return None
    values, plan, slow_key = state[2], state[5], state[7]
    compiled, rows, kept = plan
    if compiled.staged_code is None or not kept or slow_key is None:
        return _run_scalar(wanted, values, ((state[0], state[1]), *state[3:]))
    # the staged code with the key of the previous call (``_run_scalar``'s common case, without what it settles anew:
    # the values hold this call's type tag already, and a model outside the catalog is never kept as a last call)
    try:
        result = compiled.staged(values, rows, compiled.template, kept, slow_key)
    except (ZeroDivisionError, ValueError, OverflowError) as err:  # pragma: no cover - guarded by validation
        raise InputError("inputs", None, f"produce no finite result ({err})") from None
    if len(states) >= _PLANS_KEPT:
        states.clear()
    states[wanted] = state
    return result


def _run_scalar(wanted, values: dict, state: tuple) -> dict:
    """The scalar code for ``values``; ``state`` (what ``_like_last`` reads next time) is kept after it ran."""
    raw, offer_given, gpu_given, plan, tag, slow_key = state
    compiled, rows, kept = plan
    for adhoc_key, table in compiled.adhoc_keys:
        adhoc = values.get(adhoc_key)
        if adhoc is not None:  # a model outside the catalog: a one-row table for this call, nothing kept from it
            rows = {**rows, table: compiled.table_rows(table, lambda f, adhoc=adhoc: (adhoc[f],))}
            values[adhoc_key[:-len("__adhoc")] + "__row"] = 0
            kept, raw = {}, None
    try:
        if compiled.staged_code is not None and kept:  # results kept per stage, by the exact values each reads
            values["__tag"] = tag
            if slow_key is None:
                slow_key = compiled.slow_key(values)
            result = compiled.staged(values, rows, compiled.template, kept, slow_key)
        else:
            if compiled.staged_code is not None:  # the first call: the plain code (the staged code loads from the next)
                kept[0] = False
            result = compiled.template.copy()
            compiled.fn(values, rows, result)
    except (ZeroDivisionError, ValueError, OverflowError) as err:  # pragma: no cover - guarded by validation
        raise InputError("inputs", None, f"produce no finite result ({err})") from None
    if raw is not None:  # (inputs given as a dict, no model outside the catalog)
        memo = catalog.snapshot().memo
        states = memo.get(_LAST_CALLS)
        if states is None:
            states = memo.setdefault(_LAST_CALLS, {})
        if len(states) >= _PLANS_KEPT:  # as many sets of outputs as compile_formulas keeps
            states.clear()
        states[wanted] = (*raw, values, offer_given, gpu_given, plan, tag, slow_key)
    return result


_LAST_CALLS = "last scalar calls"  # in a catalog snapshot's memo: per set of outputs, (inputs' names, their values, ...)
_CROSS_CHECKED = frozenset(CROSS_CHECKED_NAMES)  # a change of one of these needs the checks between inputs again
_SWEPT = frozenset(STAGE_INPUTS)
_PLAIN_NUMBERS = {name: bounds for name, bounds in FAST_BOUNDS.items() if bounds is not None}


def _like_last(inputs: dict, last: tuple) -> tuple | None:
    """The state of a call (as ``last``) with the previous call's resolved values brought up to ``inputs`` when they
    differ from that call's (a dict of the same names in the same order) only in plain in-range numbers of the same
    type, none of them zero (so the type tag and what ``_given`` adds stay as they were); else None.  ``last`` is that
    call's (names and values of its inputs, resolved values, offer row before linking, whether a GPU was given, plan,
    type tag, the staged code's key of the inputs it does not sweep); the key becomes None when it may differ."""
    names, befores, values, offer_given, gpu_given, plan, tag, slow_key = last
    if tuple(inputs) != names:  # other inputs, or in another order: resolved afresh
        return None
    changed = []
    values_now = tuple(inputs.values())
    i = -1
    for value in values_now:  # (a loop of identity tests: about half the time of compress(map(is_not)) here)
        i += 1
        before = befores[i]
        if value is before:
            continue
        kind = type(value)
        if kind is str and type(before) is str and value == before:
            continue
        name = names[i]
        fast = _PLAIN_NUMBERS.get(name)  # as ``_scalar_values`` takes a plain in-range number
        if fast is None or kind is not type(before) or (kind is not int and kind is not float) or not value \
                or not before or not (fast[0] <= value <= fast[1] and (not fast[2] or value == int(value))):
            return None
        changed.append(name)
    for name in changed:  # the values are this call's alone: the state was taken out of the memo
        values[name] = inputs[name]
    if "n_gpus" in changed and offer_given < 0:  # offer "auto" picks an offer that sells that many GPUs
        # (an offer named links as in the previous call: its GPU is set, and the count is not read)
        linked = _auto_offer(values["gpu__row"], values["n_gpus"])
        if linked[0] != values["offer__row"]:
            slow_key = None
        values["offer__row"], values["offer"] = linked
    if not _CROSS_CHECKED.isdisjoint(changed):
        _checked_between(values)
    elif "seq_len" in changed:  # the other checks read none of the values changed, and they passed for the others
        if values.get("context_parallel", 1) > values["seq_len"]:  # (seq_len is a whole number: the check's own test)
            check_context_parallel(values.get("context_parallel", 1), values["seq_len"])
    if slow_key is not None and not _SWEPT.issuperset(changed):
        slow_key = None
    return names, values_now, values, offer_given, gpu_given, plan, tag, slow_key


def _auto_offer(gpu_row: int, n_gpus) -> tuple[int, str]:
    """(row, name) of the offer "auto" picks for ``n_gpus`` of the GPU of ``gpu_row`` (``offers.link``), kept per
    catalog snapshot: a sweep of GPU counts asks again at every call."""
    memo = catalog.snapshot().memo
    picked = memo.get("auto offers")
    if picked is None:
        picked = memo.setdefault("auto offers", {})
    try:
        return picked[gpu_row, n_gpus]
    except KeyError:
        values = {"offer__row": -1, "gpu__row": gpu_row, "n_gpus": n_gpus}
        offers.link(values, True)
        if len(picked) >= _CROSS_CHECKS_KEPT:
            picked.clear()
        return picked.setdefault((gpu_row, n_gpus), (values["offer__row"], values["offer"]))


def _scalar_plan(wanted: tuple[str, ...] | None, task_row: int) -> tuple:
    """(the scalar code for ``wanted`` and the task of ``task_row``, ``_scalar_rows`` of it, the staged code's kept
    results), found in one lookup per call and kept per catalog snapshot: a reloaded or refreshed catalog (a user's
    file, new offers, an added row) starts with nothing kept, and nothing computed from the old rows is read again."""
    memo = catalog.snapshot().memo  # (``_cached`` without its closure: every scalar evaluation asks)
    try:
        return memo["scalar plans"][wanted, task_row]
    except KeyError:
        compiled = compile_formulas(False, wanted, None, _task_kinds()[task_row])
        kept = memo.setdefault(("stages", compiled.source), {})  # shared by the task rows of one task
        plans = memo.setdefault("scalar plans", {})
        if len(plans) >= _PLANS_KEPT:  # as many sets of outputs as compile_formulas keeps
            plans.clear()
        return plans.setdefault((wanted, task_row), (compiled, _scalar_rows(compiled), kept))


_PLANS_KEPT = 64


def _stage_memo(compiled) -> dict:
    """The staged code's kept results for ``compiled`` in the current catalog snapshot (tests read it)."""
    return catalog.snapshot().memo.setdefault(("stages", compiled.source), {})


def _default_types() -> dict:
    memo = catalog.snapshot().memo
    try:
        return memo["default types"]
    except KeyError:
        return memo.setdefault("default types", {k: type(v) for k, v in _resolved_defaults().items()})


def _type_tag(given: Mapping, values: dict) -> tuple:
    """What the staged code's keys must hold beside the values: equal values of other types (8 and 8.0, 1 and True)
    or signs (0.0 and -0.0) may give results that differ (an int or a float, -0.0), so an input given with another
    type than its default's, or a negative zero, is named here.  Inputs not given hold their defaults' types (the
    offer and GPU rows, a count set by the checks: ints)."""
    types = _default_types()
    tag = ()
    for name in given:
        value = values[name]
        kind = type(value)
        if kind is not types[name]:
            tag += ((name, kind),)
        if kind is float and value == 0.0 and math.copysign(1.0, value) < 0:
            tag += ((name, "-0.0"),)
    return tag


_CHECK_ONLY = ("params_total_b",)  # a cheap quantity: evaluating it checks every input given (outputs=[])


# Rows per block of a sweep: each intermediate of a block is 128 KiB of float64, so a block's working
# set (about 20 MB with every quantity) is small enough for the C allocator to reuse from block to block.
# Smaller blocks pay the per-block Python overhead more often; much larger ones hand their memory back to
# the operating system after each block and pay page faults for it again (installer/bench.py times it).
CHUNK_ROWS = 16_384


def _evaluate_vector(given: Mapping, wanted: tuple[str, ...] | None = None) -> dict:
    series_index = None
    arrays: dict[str, np.ndarray] = {}
    for name, value in given.items():
        if _is_array(value):
            arrays[name], index = _as_array(name, value)
            if index is not None:
                if series_index is not None and not series_index.equals(index):
                    raise InputError("inputs", None, f"{name} is a Series with another index than the other Series; "
                                                     "align them first (a.align(b)) or pass plain lists")
                series_index = index
    try:
        shape = np.broadcast_shapes(*(a.shape for a in arrays.values()))
    except ValueError:
        shapes = ", ".join(f"{k}{a.shape}" for k, a in arrays.items())
        raise InputError("inputs", shapes, "have shapes that do not broadcast together") from None

    values = _scalar_values({k: v for k, v in given.items() if k not in arrays})
    tabs = catalog.tables()
    extra_rows: dict[str, list[dict]] = {}  # table -> rows outside the catalog used in this call
    for name in [k for k in values if k.endswith("__adhoc")]:
        key = name[:-len("__adhoc")]
        extra_rows.setdefault(BY_NAME[key].table, []).append(values.pop(name))
        values[key + "__row"] = len(tabs[BY_NAME[key].table].rows)
    numbers = [name for name in arrays if BY_NAME[name].kind != "choice"]
    checked = dict(zip(numbers, _checked_arrays([(BY_NAME[name], arrays[name]) for name in numbers])))
    for name, arr in arrays.items():  # (in order: the first bad input raises, as one by one)
        inp = BY_NAME[name]
        if inp.kind == "choice":
            idx = _choice_rows(inp, arr.ravel().tolist(), extra_rows)
            values[name + "__row"] = idx.reshape(arr.shape)
            values.pop(name, None)  # the formulas read catalog rows by index, never the names
        else:
            if isinstance(checked[name], InputError):
                raise checked[name]
            values[name] = checked[name]
    offers.link_vector(values, shape, "gpu" in given)
    task_row = values["task__row"]
    task = None if isinstance(task_row, np.ndarray) and task_row.ndim else _task_kinds()[int(task_row)]
    if task != "train":  # each row's GPUs per serving replica, as for one configuration (after the offers, as there)
        serving_counts_rows(values, shape, extra_rows, task, given)
    check_slice_rows(values, shape, extra_rows)
    split = [values[k] for k in ("tensor_parallel", "pipeline_parallel", "context_parallel", "expert_parallel")]
    if all(type(v) is not np.ndarray and v == 1 for v in split):  # one GPU per replica divides every count
        bad = ()
    else:
        n = np.broadcast_to(np.asarray(values["n_gpus"]), shape)
        tp, pp_, cp_, ep_ = (np.broadcast_to(np.asarray(v), shape) for v in split)
        bad = np.flatnonzero((np.mod(n, tp) != 0) | (np.mod(n, tp * pp_ * cp_) != 0) | (np.mod(n // (tp * pp_), ep_) != 0))
    if len(bad):
        j = int(bad[0])
        cross_check({"n_gpus": int(n.flat[j]), "tensor_parallel": int(tp.flat[j]), "pipeline_parallel": int(pp_.flat[j]),
                     "context_parallel": int(cp_.flat[j]), "expert_parallel": int(ep_.flat[j])}, row=j)
    varying = frozenset(k[:-5] if k.endswith("__row") else k for k, v in values.items()
                        if isinstance(v, np.ndarray) and v.ndim)
    if task != "train":  # a serving request longer than its model's context (validation.context_refusal), per row
        check_context_rows(values, shape, extra_rows.get("models", ()), task)
    compiled = compile_formulas(True, wanted, varying, task)
    result = None
    if int(np.prod(shape)) >= FEW_VALUES_MIN_ROWS:
        # inputs given as integers (or truth values), whole numbers as checked (their values not replaced since)
        whole = frozenset(n for n in numbers if arrays[n].dtype.kind in "iub" and values.get(n) is checked[n])
        result = _run_split(compiled, values, shape, varying, task, extra_rows, whole)
    if result is None:
        result = _run_in_chunks(compiled, values, _columns(compiled, extra_rows), shape)
    if series_index is not None:
        import pandas as pd  # only when a Series came in: pandas is not a dependency of the engine
        result = {k: pd.Series(np.array(v), index=series_index, name=k) for k, v in result.items()}
    return result


def _checked_arrays(columns: list[tuple[Input, np.ndarray]]) -> list:
    """``check_array`` of each (input, array): the checked array or the InputError it raised; a large sweep's columns
    on two cores."""
    def checked(inp: Input, arr: np.ndarray):
        try:
            return check_array(inp, arr)
        except InputError as err:
            return err
    work = [functools.partial(checked, inp, arr) for inp, arr in columns]
    if sum(arr.size for _, arr in columns) < FEW_VALUES_MIN_ROWS:
        return [w() for w in work]
    return _on_two_cores(work)


def _columns(compiled, extra_rows: dict) -> dict[str, np.ndarray]:
    """``"table.field"`` -> NumPy column for every table the vector code reads, rows outside the catalog appended."""
    columns = {}
    for table in compiled.row_fields:
        columns.update(_vector_columns(compiled, table))
        if table in extra_rows:
            extra = compiled.table_columns(table, lambda f, rs=extra_rows[table]: [r[f] for r in rs])
            for f, vals in extra.items():
                col = columns[f"{table}.{f}"]
                columns[f"{table}.{f}"] = np.concatenate([col, np.asarray(vals, dtype=col.dtype)])
    return columns


def _vector_columns(compiled, table: str) -> dict[str, np.ndarray]:
    """``"table.field"`` -> NumPy column for what the vector code reads of ``table``: raw fields
    as the catalog holds them, row-derived quantities as computed by the scalar code (floats;
    truth values stay booleans)."""
    def build():
        tab = catalog.tables()[table]
        derived = compiled.derived[table].names if table in compiled.derived else ()
        cols = compiled.table_columns(table, tab.col.__getitem__)
        out = {}
        for f, vals in cols.items():
            if f in derived:
                arr = np.asarray(vals)
                out[f"{table}.{f}"] = arr if arr.dtype == bool else arr.astype(float)
            else:
                out[f"{table}.{f}"] = tab.np_column(f)
        return out
    return _cached(("columns", compiled.source, table), build)


def _choice_rows(inp: Input, cells: list, extra_rows: dict) -> np.ndarray:
    """Row indices for a column of choice values; each distinct value is resolved once.  A model
    outside the catalog (a count, or fields) gets an index past the catalog's rows, into
    ``extra_rows[table]``.  An error names the first row holding the bad value."""
    table = catalog.tables()[inp.table]

    def resolve(v, j):
        found = _resolve_choice(inp, v, row=j)
        if isinstance(found, dict):
            extra = extra_rows.setdefault(inp.table, [])
            extra.append(found)
            found = len(table.rows) + len(extra) - 1
        return found

    if set(map(type, cells)) == {str}:  # the common case, names: per-cell work stays in C
        memo = dict.fromkeys(cells)  # each value once, in the order of its first row
        unknown = []
        for v in memo:  # a catalog name as written: no resolving (the planner passes every GPU's)
            i = table.known(v)
            if i is None:
                unknown.append(v)
            memo[v] = i
        if unknown:  # resolved in the order of their first rows (an error names the first bad row)
            # a row's own name (GPUs, offers: not a model, which may also be a path or a count) needs no resolving: a
            # column of 100,000 refreshed offer names is looked up in one dictionary
            exact = table.exact_names() if not inp.accepts_number else {}
            first: dict = {}
            for j, v in enumerate(cells):
                first.setdefault(v, j)
            for v in unknown:
                i = exact.get(v)
                memo[v] = resolve(v, first[v]) if i is None else i
        return np.fromiter(map(memo.__getitem__, cells), dtype=np.intp, count=len(cells))
    idx = np.empty(len(cells), dtype=np.intp)
    memo = {}
    for j, v in enumerate(cells):
        try:
            key = (type(v).__name__, v)
            hash(key)
        except TypeError:  # a dict of architecture fields, or anything else unhashable: resolved on its own
            key = ("object", id(v))
        if key not in memo:
            memo[key] = resolve(v, j)
        idx[j] = memo[key]
    return idx


def _has_bytes(value) -> bool:
    """Whether a (nested) list holds bytes, which NumPy would read as text or, for a bytearray, as a row of
    small numbers (the type check runs in C: a list of a million names costs milliseconds)."""
    types = set(map(type, value))
    if types & set(_BYTES) or any(issubclass(t, _BYTES) for t in types):
        return True
    return bool(types & {list, tuple}) and any(isinstance(v, (list, tuple)) and _has_bytes(v) for v in value)


def _has_bool(value) -> bool:
    """Whether a (nested) list holds a True or False, which NumPy would silently turn into 1 or 0."""
    return any(type(v) is bool or (isinstance(v, (list, tuple)) and _has_bool(v)) for v in value)


def _as_array(name: str, value) -> tuple[np.ndarray, object]:
    """A sweep input as a NumPy array (and the pandas index it came with), or InputError saying why not."""
    inp = BY_NAME[name]
    index = None
    kind = type(value).__name__
    if type(value).__module__.startswith("pandas"):
        if kind == "DataFrame":
            raise InputError(name, None, "is a table (DataFrame); pass one column of it, e.g. df[\"seq_len\"]")
        if kind == "Series":
            index = value.index
        value = np.asarray(value, dtype=object if inp.kind == "choice" else None)  # Series, Categorical, Index
    if isinstance(value, (list, tuple)) and _has_bytes(value):
        raise InputError(name, None, f"holds bytes, not text or numbers; allowed: {allowed(inp)}")
    if isinstance(value, (list, tuple)) and inp.kind != "choice" and inp.kind != "flag" and _has_bool(value):
        raise InputError(name, None, f"holds a yes/no value (True/False) among numbers; allowed: {inp.allowed()}")
    try:
        arr = np.asarray(value, dtype=object if inp.kind == "choice" else None)
    except ValueError:
        raise InputError(name, None, "is a ragged list (rows of different lengths); give a flat list or equal rows") from None
    if arr.size == 0:
        raise InputError(name, None, "is an empty list; give at least one value")
    if arr.dtype.kind in "SV" or (arr.dtype == object and inp.kind != "choice"
                                  and any(isinstance(v, _BYTES) for v in arr.ravel().tolist())):
        raise InputError(name, None, f"holds bytes, not text or numbers; allowed: {allowed(inp)}")
    if arr.dtype.kind == "c":
        raise InputError(name, None, f"holds complex numbers; allowed: {inp.allowed()}")
    return arr, index


class SweepMemory:
    """The result arrays of the last large sweep, lent to the next sweep of the same size.

    Why: a large sweep's results are large (1,000,000 rows x 115 quantities = 0.9 GB), and fresh memory
    is the dearest part of it: the operating system maps and zeroes every page on first write, which
    costs about twice all the arithmetic, and whether C's malloc hands back the last call's memory or
    fresh pages depends on the heap's history.  Reusing the last results' arrays makes a sweep's time
    depend on the sweep alone.

    An array is lent again only when nothing outside this object refers to it: ``sys.getrefcount`` is 2
    for an array only this object's list holds (the list and getrefcount's own argument), and a view or
    slice a caller still holds refers to the array too (NumPy views keep their base alive), so results a
    caller keeps are never overwritten.  One instance serves the process (``SWEEP_MEMORY``); a lock
    guards it, since sweeps may run in several threads (the form computes in one).
    """

    def __init__(self, limit_bytes: int):
        self.limit_bytes = limit_bytes
        self._arrays: list[np.ndarray] = []
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._arrays)

    def prepare(self, size: int) -> None:
        """Before a sweep of ``size`` rows: arrays kept for another size would only add to its peak memory."""
        with self._lock:
            if self._arrays and self._arrays[0].size != size:
                self._arrays.clear()

    def take(self, size: int, dtype) -> np.ndarray:
        """An empty array for one result of a large sweep: a kept array of this size and type that
        nothing outside refers to any more (its memory is already mapped), else a new one."""
        dtype = np.dtype(dtype)
        with self._lock:
            kept = self._arrays
            for i in range(len(kept)):  # by index: a loop variable would be one more reference
                if kept[i].dtype == dtype and kept[i].size == size and sys.getrefcount(kept[i]) == 2:
                    arr = kept.pop(i)
                    arr.flags.writeable = True  # (read-only while several quantities shared it)
                    return arr
        return np.empty(size, dtype=dtype)

    def keep(self, arrays: list[np.ndarray]) -> None:
        """Remember a large sweep's result arrays (up to ``limit_bytes``) for the next sweep."""
        total = 0
        with self._lock:
            self._arrays.clear()
            for arr in {id(a): a for a in arrays}.values():  # an array several quantities share, once
                total += arr.nbytes
                if total > self.limit_bytes:
                    break
                self._arrays.append(arr)

    def clear(self) -> None:
        with self._lock:
            self._arrays.clear()


def _spare_bytes() -> int:
    """How much of a large sweep's results is kept for the next: an eighth of the machine's memory, at least 1 GiB.
    A million rows of every quantity are 2.1 GB of results; keeping only 1 GiB of them, the next sweep faulted in
    the rest anew, a third of its time."""
    try:
        physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):  # no sysconf (Windows) or no such name
        physical = 0
    return max(1 << 30, physical // 8)


SPARE_BYTES = _spare_bytes()
SWEEP_MEMORY = SweepMemory(SPARE_BYTES)


def free_sweep_memory() -> None:
    """Let go of the memory kept from the last sweep's results (up to an eighth of the machine's memory, at least
    1 GiB)."""
    SWEEP_MEMORY.clear()


def _flat(values: dict, shape) -> dict[str, np.ndarray]:
    """The inputs that are arrays, flattened to the full length (a view when they already have the full shape)."""
    flat = {}
    for name, v in values.items():
        if isinstance(v, np.ndarray) and v.ndim:
            flat[name] = np.broadcast_to(v, shape).reshape(-1) if v.shape != shape else v.reshape(-1)
    return flat


def _run_in_chunks(compiled, values: dict, columns: dict, shape, spread=None, memory: SweepMemory | None = SWEEP_MEMORY,
                   keep: bool = True) -> dict:
    """Run the vector code over blocks of CHUNK_ROWS rows and assemble arrays of ``shape``.

    Inputs that are arrays are flattened to the full length; scalars stay scalars.  A quantity that does not
    vary comes back as a broadcast view of one value, costing no memory.  ``spread(start, stop)``: more of the
    block's inputs (quantities computed elsewhere), run before each block.  ``memory``: where the result arrays of
    a large sweep come from (None: new arrays); ``keep``: whether they are kept there for the next sweep.

    In a large sweep, an output the code returns as the very array of an earlier output (an IF or a name: job_hours_base
    is train_hours when job_hours is 0) shares that output's result array instead of being copied into its own; a
    shared array is read-only (``_shared_read_only``)."""
    size = int(np.prod(shape)) if shape else 1
    # only a sweep of several blocks reuses result arrays (a plan's 400 rows gain nothing)
    large = size > CHUNK_ROWS and memory is not None
    keep = keep and large
    if keep:
        memory.prepare(size)
    flat = _flat(values, shape)
    out: dict[str, np.ndarray] = {}
    written: list[tuple[int, np.ndarray]] = []  # (position in the outputs, result array)
    same: list[tuple[int, int]] = []  # (output, the earlier output whose array it is in every block: one result array)
    # per output, the block's rows of its result array: the generated code writes an output's last
    # operation there (None in the first block, whose results tell each array's type)
    into: list = [None] * len(compiled.outputs)
    names = compiled.outputs
    with np.errstate(all="ignore"):
        block = compiled.fn(values, columns)  # what is one value for every row, computed once
        for start in range(0, size, CHUNK_ROWS):
            stop = min(size, start + CHUNK_ROWS)
            chunk = {k: v[start:stop] for k, v in flat.items()}
            if spread is not None:
                chunk.update(spread(start, stop))
            results = block(chunk, into)
            if start == 0:
                first_of: dict[int, int] = {}  # id of an array result -> the first output returning it
                for i, (name, v) in enumerate(zip(names, results)):
                    if large and type(v) is np.ndarray and v.ndim and id(v) in first_of and names[first_of[id(v)]] != name:
                        same.append((i, first_of[id(v)]))
                        out[name] = out[names[first_of[id(v)]]]
                        continue
                    first_of.setdefault(id(v), i)
                    v = np.asarray(v)
                    if v.ndim == 0:
                        out[name] = np.broadcast_to(v, shape)
                    else:
                        out[name] = memory.take(size, v.dtype) if large else np.empty(size, dtype=v.dtype)
                        written.append((i, out[name]))
            elif same:
                for k, (i, j) in enumerate(same):
                    if results[i] is not results[j]:  # (not the same array in this block after all: an array of its own)
                        arr = memory.take(size, out[names[j]].dtype)
                        arr[:start] = out[names[j]][:start]
                        out[names[i]] = arr
                        written.append((i, arr))
                        same[k] = (i, i)
                same = [(i, j) for i, j in same if i != j]
            for i, arr in written:
                if results[i] is not into[i]:  # computed elsewhere (an IF, a name, a shared subtree)
                    arr[start:stop] = results[i]
                into[i] = arr[stop:stop + CHUNK_ROWS]
    if keep:
        memory.keep([arr for _, arr in written])
    _shared_read_only([out[names[j]] for _, j in same])
    return {k: (v if 0 in v.strides else v.reshape(shape)) for k, v in out.items()}


def _shared_read_only(arrays) -> None:
    """Result arrays that several quantities share (equal in every row) are read-only: a change made through one
    name would show under the other.  (``SweepMemory.take`` makes one writable again when it lends it out.)"""
    for arr in arrays:
        arr.flags.writeable = False


# A sweep of at least this many rows looks for inputs that take few values together (``_few_values``) ...
FEW_VALUES_MIN_ROWS = 4 * CHUNK_ROWS
# ... and computes what depends on those inputs alone once per combination of their values, when there is at most
# one combination in this many rows.  (A million rows of four inputs, three of them 4, 15 and 124 GPU counts, batch
# sizes and ranks: two thirds of the work depends on those alone, 7,440 combinations.)
FEW_VALUES_ROWS_PER_COMBINATION = 16
_CODING_ROWS = 1 << 18  # rows coded at a time (bounds the temporaries of a 10-million-row sweep)


def _offsets(rows: np.ndarray, lowest) -> np.ndarray:
    """Each value's distance from ``lowest`` (whole numbers, int64)."""
    if rows.dtype.kind == "f":
        return (rows - lowest).astype(np.int64)
    return rows.astype(np.int64) - lowest


def _value_positions(column: np.ndarray, span_limit: int, whole: bool = False) -> tuple[int, np.ndarray, np.ndarray] | None:
    """For a column of whole numbers (integers, or floats that are whole numbers below 2**53 and no -0.0, which
    would come back as 0.0) or truth values spanning fewer than ``span_limit`` values: (its lowest value, a table from
    value - lowest to the value's position among its distinct values, the distinct values); else None.  ``whole``:
    the column is floats made from integers below 2**53 (each a whole number, no -0.0): not tested value by value."""
    kind = column.dtype.kind
    if kind not in "biuf" or column.dtype == np.uint64:
        return None
    lowest, highest = column.min(), column.max()
    if kind == "f" and not (np.isfinite(lowest) and np.isfinite(highest) and lowest == np.floor(lowest)
                            and max(-lowest, highest) < 2**53):
        return None
    lowest = float(lowest) if kind == "f" else int(lowest)
    if highest - lowest >= span_limit:
        return None
    if highest == lowest and (kind != "f" or lowest != 0):  # one value (a zero might be 0.0 and -0.0)
        return lowest, np.zeros(1, dtype=np.intp), column[:1].copy()
    present = np.zeros(int(highest - lowest) + 1, dtype=bool)
    for start in range(0, column.size, _CODING_ROWS):
        rows = column[start:start + _CODING_ROWS]
        offsets = _offsets(rows, lowest)
        if kind == "f" and not whole and not (np.array_equal(offsets, rows - lowest)
                                              and not np.signbit(rows[rows == 0]).any()):
            return None
        present[offsets] = True
    distinct = np.flatnonzero(present)
    position = np.zeros(present.size, dtype=np.intp)
    position[distinct] = np.arange(distinct.size)
    return lowest, position, (distinct + lowest).astype(column.dtype)


def _few_values(flat: dict[str, np.ndarray], size: int, whole=frozenset()) -> tuple[list[str], np.ndarray, dict] | None:
    """The sweep's inputs that take few values together, fewest first: (their names, each row's combination of their
    values as a number 0..n-1, per name its value in each combination), or None when no input does.  ``whole``: the
    inputs given as integers (``_value_positions``)."""
    limit = size // FEW_VALUES_ROWS_PER_COMBINATION
    coded = []
    columns = list(flat.items())
    positions = _on_two_cores([functools.partial(_value_positions, column, limit, name in whole) for name, column in columns])
    for (name, column), found in zip(columns, positions):
        if found is not None:
            coded.append((found[2].size, name, column, *found))
    chosen, combinations = [], 1
    for entry in sorted(coded, key=lambda c: c[0]):
        if combinations * entry[0] > limit:
            break
        chosen.append(entry)
        combinations *= entry[0]
    if not chosen:
        return None
    combination = np.empty(size, dtype=np.intp)  # mixed radix: each input's position, the first the most significant
    present = np.zeros(combinations, dtype=bool)

    def number(start: int) -> None:
        rows = slice(start, start + _CODING_ROWS)
        code = 0
        for count, _, column, lowest, position, _ in chosen:
            if count > 1:  # an input of one value adds nothing to the number
                code = code * count + position[_offsets(column[rows], lowest)]
        combination[rows] = code
        present[combination[rows]] = True  # (both threads write only True)

    _on_two_cores([functools.partial(number, start) for start in range(0, size, _CODING_ROWS)])
    used = np.flatnonzero(present)  # the combinations that occur, numbered densely
    dense = np.zeros(combinations, dtype=np.intp)
    dense[used] = np.arange(used.size)

    def renumber(start: int) -> None:
        rows = slice(start, start + _CODING_ROWS)
        dense.take(combination[rows], out=combination[rows])

    _on_two_cores([functools.partial(renumber, start) for start in range(0, size, _CODING_ROWS)])
    values_of = {}
    for count, name, _, _, _, distinct in reversed(chosen):
        values_of[name] = distinct[used % count]
        used = used // count
    return [entry[1] for entry in chosen], combination, values_of


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # no sched_getaffinity (macOS, Windows)
        return os.cpu_count() or 1


def _on_two_cores(work: list) -> list:
    """The results of the functions of no argument in ``work``, every second one run on a second thread when the
    machine has two cores or more (NumPy's operations on large arrays run without Python's lock, so both run at once).
    An error in either is raised here."""
    if len(work) < 2 or _cores() < 2:
        return [w() for w in work]
    results: list = [None] * len(work)
    errors: list = []

    def run() -> None:
        try:
            for i in range(1, len(work), 2):
                results[i] = work[i]()
        except BaseException as err:  # noqa: BLE001 - raised again in the caller's thread
            errors.append(err)

    helper = threading.Thread(target=run, name="gpu-tco sweep numbering", daemon=True)
    helper.start()
    try:
        for i in range(0, len(work), 2):
            results[i] = work[i]()
    finally:
        helper.join()
    if errors:
        raise errors[0]
    return results


class _Progress:
    """Rows up to which the second thread has spread what the per-row code reads (``SPREAD_AHEAD``)."""

    def __init__(self):
        self.rows = 0
        self._changed = threading.Condition()

    def advance(self, rows: int) -> None:
        with self._changed:
            self.rows = rows
            self._changed.notify_all()

    def wait(self, rows: int) -> None:
        if self.rows < rows:
            with self._changed:
                self._changed.wait_for(lambda: self.rows >= rows)


def _spread_later(gathered: dict, on_this_thread, combination: np.ndarray, out: dict):
    """Spreads the outputs computed once per combination on a second thread, while the per-row code runs (NumPy's
    gather runs without Python's lock, so on two cores both run at once); they leave ``gathered``.  With
    ``SPREAD_AHEAD``, first the arrays the per-row code reads (``on_this_thread``), a step of rows at a time, each
    step announced to the calling thread by the returned ``_Progress``; then the others.  Without it, the calling
    thread spreads those itself.  Returns (the started thread, the errors it met, the progress or None), or None on
    one core."""
    if _cores() < 2:
        return None
    taken = {name: gathered.pop(name) for name in list(gathered) if name not in on_this_thread}
    read = {name: gathered.pop(name) for name in list(gathered)} if SPREAD_AHEAD else {}
    progress = _Progress() if read else None  # (nothing read: the calling thread never waits)
    errors: list = []
    size = combination.size

    def run() -> None:
        try:
            for start in range(0, size, _SPREAD_ROWS) if read else ():
                stop = min(size, start + _SPREAD_ROWS)
                for v, into in [(v, out[name][start:stop]) for name, v in read.items()]:
                    v.take(combination[start:stop], out=into, mode="wrap")
                progress.advance(stop)
            for name, v in taken.items():
                for start in range(0, size, _SPREAD_ROWS):
                    stop = start + _SPREAD_ROWS
                    v.take(combination[start:stop], out=out[name][start:stop], mode="wrap")
        except BaseException as err:  # noqa: BLE001 - raised again in the caller's thread
            errors.append(err)
        finally:
            if progress is not None:
                progress.advance(size)  # (never leaves the caller waiting; an error is raised there after the join)

    thread = threading.Thread(target=run, name="gpu-tco sweep spread", daemon=True)
    thread.start()
    return thread, errors, progress


SPREAD_ON_A_SECOND_THREAD = True
SPREAD_AHEAD = True  # the second thread spreads first what the per-row code reads, ahead of it (``_spread_later``)
_SPREAD_ROWS = 1 << 16  # rows gathered per call on the second thread: each call long enough to pass the lock rarely


def _per_combination_results(per_combination: dict, outputs: set, shape, size: int) -> tuple[dict, dict, dict, dict]:
    """How a split sweep returns what it computed once per combination: (the outputs to spread to their rows, by
    name, their values per combination; the quantities one value (bit for bit) in every combination, by name, that
    value; per output spread, the output whose result array it shares; the result arrays and broadcast values).

    What is one value in every combination is one value for the whole sweep: an output comes back as that value
    broadcast to every row, as one no swept input reaches does, and the per-row code reads it as one value.  Outputs
    equal in every combination (bit for bit, of one type) are equal in every row: they share one result array, spread
    once (read-only: ``_shared_read_only``)."""
    gathered, one_value, owner, out = {}, {}, {}, {}
    alike: dict[tuple, list[str]] = {}  # (type, a few values) -> outputs spread, to find those equal in every combination
    for name, v in per_combination.items():
        bits = v.view(f"u{v.itemsize}")
        if v.strides == (0,) or (bits == bits[0]).all():
            one_value[name] = v[0]
            if name in outputs:
                out[name] = np.broadcast_to(v[0], shape)
        elif name in outputs:
            candidates = alike.setdefault((v.dtype.str, bits[::max(1, bits.size // 8)].tobytes()), [])
            twin = next((t for t in candidates if np.array_equal(bits, per_combination[t].view(bits.dtype))), None)
            if twin is not None:
                owner[name] = twin
                out[name] = out[twin]
                continue
            candidates.append(name)
            owner[name] = name
            out[name] = SWEEP_MEMORY.take(size, v.dtype)
            gathered[name] = v
    return gathered, one_value, owner, out


def _run_split(compiled, values: dict, shape, varying: frozenset, task, extra_rows: dict,
               whole=frozenset()) -> dict | None:
    """A large sweep where some inputs take few values together (``_few_values``): what depends on those alone is
    computed once per combination of their values, and spread to the rows (the same operations on the same values:
    the same numbers, bit for bit); the rest runs per block.  None when no quantity gains from it."""
    size = int(np.prod(shape))
    flat = _flat(values, shape)
    found = _few_values(flat, size, whole)
    if found is None:
        return None
    names, combination, values_of = found
    narrow = frozenset(n[:-len("__row")] if n.endswith("__row") else n for n in names)
    few, rest, given = split_by_inputs(compiled.outputs, varying, narrow, task)
    if not few:
        return None
    few_code = compile_formulas(True, few, narrow, task, part_of=compiled.outputs)
    few_values = {k: v for k, v in values.items() if k not in flat or k in values_of}
    few_values.update(values_of)
    combinations = len(next(iter(values_of.values())))
    per_combination = _run_in_chunks(few_code, few_values, _columns(few_code, extra_rows), (combinations,), memory=None)
    SWEEP_MEMORY.prepare(size)
    gathered, one_value, owner, out = _per_combination_results(per_combination, set(compiled.outputs), shape, size)
    given_one = {q: one_value[q] for q in given if q in one_value}
    given_rows = [q for q in given if q not in one_value]
    # spread on the calling thread, before each block: the arrays the per-row code reads
    on_this_thread = {owner[q] for q in given_rows if q in owner}

    later = None

    def spread(start: int, stop: int) -> dict:
        rows = combination[start:stop]
        if later is not None and later[2] is not None:
            later[2].wait(stop)  # (spread by the second thread)
        for name, v in gathered.items():
            v.take(rows, out=out[name][start:stop], mode="wrap")  # every index is in range
        block = {q: (out[q][start:stop] if q in owner else per_combination[q].take(rows, mode="wrap"))
                 for q in given_rows}
        block.update(given_one)
        return block

    if rest:
        rest_code = compile_formulas(True, rest, varying, task, given, compiled.outputs)
        later = _spread_later(gathered, on_this_thread, combination, out) if SPREAD_ON_A_SECOND_THREAD else None
        try:
            out.update(_run_in_chunks(rest_code, values, _columns(rest_code, extra_rows), shape, spread, keep=False))
        finally:
            if later is not None:
                later[0].join()
        if later is not None and later[1]:
            raise later[1][0]
    else:
        for start in range(0, size, CHUNK_ROWS):
            spread(start, min(size, start + CHUNK_ROWS))
    _shared_read_only([out[t] for t in {owner[n] for n in owner if owner[n] != n}])
    # the arrays themselves, not views of them (the per-row part returns views): a caller holding a result holds its
    # array through the view's base, so the array is never lent to the next sweep while held
    SWEEP_MEMORY.keep([v if v.base is None else v.base for v in out.values() if 0 not in v.strides])
    return {k: (out[k] if 0 in out[k].strides else out[k].reshape(shape)) for k in compiled.outputs}


# ---------------------------------------------------------------------------
# explanations and breakdowns

def explain(quantity: str, inputs: Mapping | None = None) -> dict:
    """The formula of a quantity and the values that fed it.

    Returns a dict with name, unit, description, source (full citations), formula
    (readable), excel (defined-name formula), python (scalar source), value, and
    ``inputs``: a list of (name, value, unit) for every input, quantity and catalog field the
    formula reads directly.
    """
    if not isinstance(quantity, str) or quantity not in QUANTITIES:
        hint = did_you_mean(quantity, QUANTITIES) if isinstance(quantity, str) else ""
        raise InputError("quantity", quantity, f"is not a quantity{hint}; see docs/quantities.md")
    qty = QUANTITIES[quantity]
    result = evaluate({} if inputs is None else inputs, outputs=[quantity, *(r for r in refs(qty.expr) if r in QUANTITIES)])
    values = resolve_inputs(inputs)
    fed = []
    for lk in lookups(qty.expr):
        entry = (lk.text(), row_of(values, lk.key)[lk.field], "catalog")
        if entry not in fed:
            fed.append(entry)
    for r in refs(qty.expr):
        if r in QUANTITIES:
            fed.append((r, result[r], QUANTITIES[r].unit))
        elif r in BY_NAME and not any(e[0] == r for e in fed):
            fed.append((r, values[r], BY_NAME[r].unit))
    return {
        "name": quantity, "unit": qty.unit, "description": qty.description, "source": cite(qty.source),
        "formula": text(qty.expr), "excel": "=" + qty.expr.xl(), "python": qty.expr.py(False),
        "value": result[quantity], "inputs": fed,
    }


def breakdown(result: Mapping, mode: str = "train") -> dict:
    """Memory components (weights, gradients, optimizer, activations, logits, kv_cache, overhead,
    total) in GiB/GPU, read from a result of ``evaluate``."""
    if not isinstance(mode, str) or mode not in ("train", "infer"):
        raise InputError("mode", mode, "allowed: train, infer")
    table = TRAIN_COMPONENTS if mode == "train" else INFER_COMPONENTS
    if not isinstance(result, Mapping) or any(name and name not in result for name in table.values()):
        raise InputError("result", None, "is not a result of evaluate(); pass what evaluate() returned")
    return {comp: (result[name] if name else 0.0) for comp, name in table.items()}


__all__ = ["evaluate", "resolve_inputs", "check_input", "explain", "breakdown", "row_of", "estimate_architecture", "QUANTITY_NAMES"]
