"""The GPU_* spreadsheet functions as plain Python: what every Excel front end calls.

Each function is a row of ``FUNCTIONS``: its positional arguments (core input names,
or one of a few selector arguments), the core quantity it returns, and its help text.
``call(name, *args)`` does the spreadsheet work around ``core.evaluate``:

* an argument that is ``None`` (an empty cell, an omitted argument) takes core's default;
* arguments may be single values or ranges (lists, lists of lists); ranges broadcast
  against each other like NumPy arrays and go through one vectorised ``core.evaluate``;
* bad input gives ``#INPUT! <field>: <what is wrong>; allowed: ...`` in the cell it
  concerns (only that row of a range), never a traceback; ``raise_errors=True`` raises
  ``ValueError`` with the same text instead (xlwings Lite shows it as #VALUE!).

No formula lives here: values are core quantities, tables come from core's planner and
catalogs.  The xlwings modules (``gpu_tco.addin.udfs`` and the generated xlwings Lite main.py)
are generated from ``FUNCTIONS`` by ``addin.codegen``.
"""
from __future__ import annotations

import itertools
import operator
from dataclasses import dataclass, field
from numbers import Integral, Real
from typing import Callable, Mapping

import numpy as np

from gpu_tco import core
from gpu_tco.core import (
    FIT_INPUTS,
    NEEDS_FIT,
    NEEDS_PURCHASE_PRICE,
    NEEDS_RENTAL_PRICE,
    NOT_ADDITIVE,
    PRICE_FLAGS,
    InputError,
    allowed_hint,
    catalog,
    did_you_mean,
    fit_gaps,
    fit_outputs,
    fit_word,
    formula_text,
    not_fitting_rows,
    number_text,
    one_line,
    price_gaps,
    row_of,
)
from gpu_tco.core import INFER_COMPONENTS as CORE_INFER
from gpu_tco.core import INPUTS_BY_NAME as BY_NAME
from gpu_tco.core import TRAIN_COMPONENTS as CORE_TRAIN
from gpu_tco.core import show_value as show

CATEGORY = "GPU TCO"
ERROR_PREFIX = "#INPUT! "
MAX_TEXT = 255  # Excel shows at most this much of a function's help, and long cell errors read badly

# component -> quantity, "total" first (the default); from core's tables (core.formulas)
TRAIN_COMPONENTS = {"total": CORE_TRAIN["total"], **{k: v for k, v in CORE_TRAIN.items() if v and k != "total"}}
INFER_COMPONENTS = {"total": CORE_INFER["total"], **{k: v for k, v in CORE_INFER.items() if v and k != "total"}}
# MODEL_SPEC fields computed by core from the architecture ("params_b" as users write it)
ARCHITECTURE_QUANTITIES = {n for n, q in core.QUANTITIES.items() if q.group == "architecture"}
MODEL_DERIVED = {"params_b": "params_total_b", "active_params_b": "params_active_b"}
TOKEN_MODES = {"decode": "decode_tokens_per_s", "prefill": "prefill_tokens_per_s", "train": "train_tokens_per_s"}

# arguments that are not core inputs: name -> help text
SELECTOR_DOCS = {
    "component": "total (default; the device total that must fit), weights, gradients, optimizer, activations, logits, "
                 "overhead, allocator_peak (what PyTorch reports); or all for a table",
    "infer_component": "total (default), weights, kv_cache, activations, overhead, allocator_peak; or all for a table",
    "mode": "decode (default: generated tokens/s), prefill (prompt tokens/s) or train (training tokens/s)",
    "offer_or_gpu": "a Cloud offer name (e.g. Lambda 8x H100 SXM) or a GPU name (its cheapest on-demand offer)",
    "gpu_field": "a GPUs catalog column, default memory_gib (e.g. bf16_dense_tflops, tdp_w, purchase_usd)",
    "model_field": "a Models catalog column, default layers (e.g. hidden, kv_heads, vocab), or params_b / active_params_b",
    "quantity": "a gpu-tco quantity name (see docs/quantities.md), default own_tco_usd; e.g. peak_train_gib_per_gpu",
    "top": "number of options to list, default 10 (0 = all, rejected ones included)",
    "serve_top": "empty (default): the answer in one cell (rent, buy or use the API); a number: a table of that many "
                 "acceptable setups (0 = all, rejected ones included)",
}


@dataclass(frozen=True)
class Function:
    name: str
    doc: str  # <= 255 characters: Excel's Function Wizard shows this
    args: tuple[str, ...]  # positional, all optional; core input names or SELECTOR_DOCS keys
    result: str = ""  # the core quantity returned, or "" for a special function
    unit: str = ""
    special: Callable | None = field(default=None, compare=False)

    def arg_doc(self, arg: str) -> str:
        """Help for one argument: meaning, unit and default (what the Function Wizard shows)."""
        if arg in SELECTOR_DOCS:
            return SELECTOR_DOCS[arg][:MAX_TEXT]
        if arg == "field":
            return SELECTOR_DOCS["gpu_field" if self.args[0] == "gpu" else "model_field"]
        inp = BY_NAME[arg]
        default = inp.default if isinstance(inp.default, str) else number_text(inp.default, grouped=False)
        unit = f" [{inp.unit}]" if inp.unit and inp.unit != "-" else ""
        text = f"{inp.description}{unit}. Default {default}"
        if arg == "weights_dtype":  # _as_released
            text = f"{inp.description}. Default: the format the model was released in (gpt-oss: mxfp4), else {default}"
        if arg == "model":
            text = "Catalog name (e.g. Llama-3-70B) or billions of parameters. " + text
        return text[:MAX_TEXT]


def _error(err: Exception) -> str:
    """The cell text for an error; a row number from a vectorised run would point into our
    own sub-batch, so it is dropped (the error sits in the cell it concerns)."""
    if isinstance(err, InputError) and err.row is not None:
        err = InputError(err.field, err.value, err.allowed, None, err.verb)
    return (ERROR_PREFIX + str(err))[:MAX_TEXT]


class _RowError(Exception):
    """An input error already formatted for one cell."""


# ---------------------------------------------------------------------------
# argument handling

def _is_range(value) -> bool:
    return isinstance(value, (list, tuple, np.ndarray))


_first = operator.itemgetter(0)


def _as_2d(value) -> np.ndarray:
    if isinstance(value, list) and value and set(map(type, value)) == {list} and set(map(len, value)) == {1}:
        # a column, as Excel hands it over (one-cell rows): building the object array flat is much faster
        column = np.empty(len(value), dtype=object)
        column[:] = list(map(_first, value))
        return column.reshape(-1, 1)
    arr = np.array(value, dtype=object)
    if arr.ndim == 0:
        return arr.reshape(1, 1)
    if arr.ndim == 1:  # a plain list from Python: a column
        return arr.reshape(-1, 1)
    return arr


def _distinct_cells(cells: list) -> list:
    """The distinct values of a list of cells."""
    try:
        return list(dict.fromkeys(cells))
    except TypeError:
        return [v for v in cells if not _hashable(v)] + list(dict.fromkeys(v for v in cells if _hashable(v)))


def _blank(value) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def _clean(value):
    """Excel hands numbers as floats; whole numbers become ints so integer inputs accept them."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        return value.strip()
    return value


def _offer_or_gpu(value) -> dict:
    """A name from the Cloud catalog (an offer) or the GPU catalog (its reference offer)."""
    tabs = catalog.tables()
    offers, gpus = tabs["offers"], tabs["gpus"]
    row = offers.find(value)
    if row is not None:
        gpu = offers.rows[row]["gpu"]
        spec = {"offer": offers.names[row]}
        if gpu and gpu != "-":
            spec["gpu"] = gpu
        return spec
    if gpus.find(value) is not None:
        return {"gpu": gpus.canonical(value, "gpu"), "offer": catalog.AUTO_OFFER}
    raise InputError("offer_or_gpu", value, allowed_hint(value, [*offers.names, *gpus.names])
                     + "allowed: a Cloud offer or a GPU name", verb="unknown")


def _selector(table: dict, arg: str, value, allow_all: bool = True) -> str:
    key = "total" if _blank(value) else str(value).strip().lower()
    if key in table or (allow_all and key == "all"):
        return key
    names = list(table) + (["all"] if allow_all else [])
    raise InputError(arg, value, allowed_hint(key, names) + "allowed: " + ", ".join(names), verb="unknown")


def _row_inputs(values: dict) -> dict:
    """Core inputs for one set of argument values (blank ones left to core's defaults)."""
    inputs = {}
    for arg, value in values.items():
        if _blank(value) or arg in ("component", "infer_component", "mode", "top"):
            continue
        if arg == "offer_or_gpu":
            inputs.update(_offer_or_gpu(value))
        else:
            inputs[arg] = _clean(value)
    return inputs


def _pick(func: Function, values: dict) -> str:
    """The quantity this call returns (component and mode select among several)."""
    if "component" in values:
        return TRAIN_COMPONENTS[_selector(TRAIN_COMPONENTS, "component", values["component"])]
    if "infer_component" in values:
        return INFER_COMPONENTS[_selector(INFER_COMPONENTS, "component", values["infer_component"])]
    if "mode" in values:
        mode = "decode" if _blank(values["mode"]) else str(values["mode"]).strip().lower()
        if mode not in TOKEN_MODES:
            raise InputError("mode", values["mode"], allowed_hint(mode, TOKEN_MODES) + "allowed: " + ", ".join(TOKEN_MODES),
                             verb="unknown")
        return TOKEN_MODES[mode]
    return func.result


def _plain(value):
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value)
    return value


def _breakdown(inputs: dict, table: dict) -> list[list]:
    r = core.evaluate(inputs, outputs=tuple(table.values()))
    rows = [["component", "GiB per GPU"]]
    # the parts, their sum (the device total that must fit), then the allocator peak: tensors only, not a part
    rows += [[k, float(r[q])] for k, q in table.items() if k not in NOT_ADDITIVE] + [["total", float(r[table["total"]])]]
    rows += [["allocator_peak", float(r[table["allocator_peak"]])]]
    return rows


# ---------------------------------------------------------------------------
# the entry point

class _CellError(ValueError):
    """The text of a failed call, raised instead of returned when ``raise_errors`` is set."""


# what a spreadsheet cell holds as xlwings hands it over (a blank is None)
_CELL_TYPES = frozenset({str, int, float, bool, type(None)})


class _Odd:
    """A value no cell holds (a NaT, a date, bytes, a list inside a cell, pandas' NA): core refuses it
    like any wrong value, naming it by its repr.  Compared by identity, so NaT != NaT cannot hide it."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __repr__(self) -> str:
        return show(self.value)


def _is_sequence(value) -> bool:
    """A range as Python callers pass one: a list, tuple, NumPy array or pandas Series, Index or DataFrame."""
    if isinstance(value, (list, tuple, np.ndarray)):
        return True
    return (type(value).__module__ or "").startswith("pandas") and getattr(value, "ndim", 0) >= 1


def _cell(value):
    """One cell as a spreadsheet would hand it over: NumPy scalars as Python numbers, anything else odd."""
    if type(value) in _CELL_TYPES:
        return value
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (Integral, np.integer)):
        return int(value)
    if isinstance(value, Real):
        try:
            return float(value)
        except (TypeError, ValueError, OverflowError):
            return _Odd(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, (Mapping, complex)):  # a custom architecture from Python callers; core names a complex number
        return value
    return _Odd(value)


def _argument(value):
    """An argument as cells: a scalar cell, or a list (a column) or list of lists (rows) of cells.  NumPy
    arrays and pandas objects become lists here, so what comes back is plain lists too."""
    if type(value) in _CELL_TYPES:  # one cell, the commonest argument
        return value
    if type(value) is list and set(map(type, value)) == {list} \
            and set(map(type, itertools.chain.from_iterable(value))) <= _CELL_TYPES:
        return value  # the usual range from Excel: already plain, no per-cell Python work
    if not _is_sequence(value):
        return _cell(value)
    if not isinstance(value, (list, tuple)):
        try:
            value = np.asarray(value, dtype=object)
        except Exception:  # noqa: BLE001 - an object NumPy cannot take in is one odd cell
            return _Odd(value)
        if value.ndim == 0:
            return _cell(value[()])
        value = value.tolist()
    return [[_cell(c) for c in (r.tolist() if isinstance(r, np.ndarray) else r)] if _is_sequence(r) else _cell(r)
            for r in value]


def _excel(result):
    """A result as only Excel types: a str, float, int, bool or None, or a list of rows of those."""
    if type(result) in _CELL_TYPES:
        return result
    if type(result) is list and set(map(type, result)) <= {list} \
            and set(map(type, itertools.chain.from_iterable(result))) <= _CELL_TYPES:
        return result
    if not _is_sequence(result):
        return _excel_cell(result)
    rows = _argument(result)
    if not isinstance(rows, list):
        return _excel_cell(rows)
    return [[_excel_cell(c) for c in r] if isinstance(r, list) else [_excel_cell(r)] for r in rows] or ""


def _excel_cell(value):
    value = _cell(value)
    if type(value) in _CELL_TYPES:
        return value
    return (ERROR_PREFIX + one_line(f"a value of type {type(getattr(value, 'value', value)).__name__}"))[:MAX_TEXT]


class _Plain:
    """A result built from NumPy's tolist() and the module's own texts: Excel types by construction."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


def _empty_range(value) -> bool:
    return isinstance(value, list) and all(isinstance(r, list) and not r for r in value)


def call(name: str, *args, raise_errors: bool = False):
    """Evaluate spreadsheet function ``name`` with positional ``args`` (values or ranges).

    Never raises (unless ``raise_errors``) and returns only what a cell or a spilled range holds: a str,
    float, int, bool or None, or a list of rows of those.  Ranges may come as lists, NumPy arrays or
    pandas objects; what comes back is plain Python either way."""
    try:
        result = _call(name, args, raise_errors)
        return result.value if type(result) is _Plain else _excel(result)
    except _CellError:
        raise
    except RecursionError:
        return _fail(ERROR_PREFIX + "an argument is nested too deeply", raise_errors)
    except Exception as err:  # noqa: BLE001 - the last resort: a cell gets one line of text, never a traceback
        return _fail(f"#ERROR! {one_line(str(name))[:40]}: {type(err).__name__}: {one_line(str(err))[:120]}", raise_errors)


def _call(name, args: tuple, raise_errors: bool):
    if not isinstance(name, str) or name not in FUNCTIONS:
        word = name.strip().upper() if isinstance(name, str) else ""
        return _fail(_error(InputError("function", name, f"is not a gpu-tco function{did_you_mean(word, FUNCTIONS)}; allowed: "
                                       + ", ".join(FUNCTIONS))), raise_errors)
    func = FUNCTIONS[name]
    if len(args) > len(func.args):
        return _fail(f"{name} takes at most {len(func.args)} arguments ({', '.join(func.args)}), got {len(args)}", raise_errors)
    given = dict(zip(func.args, args))
    if func.special is None and set(map(type, args)) <= _CELL_TYPES:  # single cells, the commonest call
        try:
            return _scalar(func, given)
        except (InputError, core.CatalogError) as err:
            return _fail(_error(err), raise_errors)
    if func.special is None and any(type(v) is list for v in given.values()):
        # Excel's usual call, columns of plain cells: answered before any per-cell work (anything odd makes
        # the fast path decline, and the cells are then taken apart one by one below)
        fast = _columns_fast(func, given)
        if fast is not None:
            return _Plain(fast)
    named = {arg: _argument(value) for arg, value in given.items()}
    try:
        for arg, value in named.items():
            if _empty_range(value):
                raise InputError(arg, None, "is an empty range; select at least one cell")
        if func.special is None and any(_is_range(v) for v in named.values()) \
                and any(named[a] is not given[a] for a in named):  # NumPy or pandas arguments, which _argument turns into plain lists
            fast = _columns_fast(func, named)
            if fast is not None:
                return _Plain(fast)
        for arg, value in named.items():
            if _is_range(value) and _ragged(value):
                raise InputError(arg, None, "is a range whose rows differ in length; select a rectangular range")
        if func.special is not None:
            return func.special(named)
        if not any(_is_range(v) for v in named.values()):
            return _scalar(func, named)
        return _Plain(_vector(func, named, raise_errors))
    except (InputError, core.CatalogError, _RowError) as err:
        return _fail(_error(err), raise_errors)


def _columns_fast(func: Function, named: dict):
    """The common case in one pass: every range a column of the same length, names as text, numbers as
    numbers, nothing blank inside a range.  Anything else, or any value core refuses, returns None and
    the general path (which marks bad cells one by one) answers instead; both give the same values.
    A result that rests on a price the catalogs lack leaves its cells to the general path, which says "no price"."""
    priced = func.result in NEEDS_PURCHASE_PRICE or func.result in NEEDS_RENTAL_PRICE
    timed = func.result in NEEDS_FIT  # a job's time or cost: a row whose job does not fit says so (general path)
    n = 0
    given: dict = {}
    for arg, value in named.items():
        if not _is_range(value):
            if not _blank(value):
                if arg not in BY_NAME:
                    return None
                given[arg] = value
            continue
        if arg not in BY_NAME or not isinstance(value, list) or set(map(type, value)) != {list} or set(map(len, value)) != {1}:
            return None
        cells = list(map(_first, value))
        if n and len(cells) != n:
            return None
        n = len(cells)
        given[arg] = cells
    if n < 2:
        return None
    inputs: dict = {}
    for arg, value in given.items():
        inp = BY_NAME[arg]
        text = inp.kind == "choice" and not inp.accepts_number
        if not isinstance(value, list):  # one cell beside the columns
            if (type(value) is not str) if text else (type(value) not in (int, float) or value != value):
                return None
            inputs[arg] = _clean(value)
        elif text:
            if set(map(type, value)) != {str}:
                return None
            cleaned = {v: v.strip() for v in dict.fromkeys(value)}
            if not all(cleaned.values()):
                return None
            inputs[arg] = list(map(cleaned.__getitem__, value))
        else:
            if not set(map(type, value)) <= {int, float}:
                return None
            numbers = np.array(value, dtype=float)
            if np.isnan(numbers).any():
                return None
            inputs[arg] = numbers
    try:
        result = core.evaluate(inputs, outputs=(func.result, *(PRICE_FLAGS if priced else ()), *fit_outputs(func.result)))
    except (InputError, core.CatalogError):
        return None
    if priced and not all(bool((np.asarray(result[k]) > 0).all()) for k in PRICE_FLAGS):
        return None  # some row has no price
    if timed and len(not_fitting_rows({**result, **_fit_inputs(inputs)}, func.result, n)):
        return None  # some row's job does not fit
    return np.broadcast_to(np.asarray(result[func.result]), (n,)).reshape(n, 1).tolist()  # a column, built in C


def _ragged(value) -> bool:
    """Whether a range (a list of rows) has rows of different lengths."""
    types = set(map(type, value))
    if types <= {list, tuple}:  # the usual case, every row a list: no per-row Python work
        return len(set(map(len, value))) > 1
    rows = [r for r in value if isinstance(r, (list, tuple))]
    return bool(rows) and (len(rows) != len(value) or len({len(r) for r in rows}) > 1)


_PLAIN_NUMBER_TYPES = {int, float, type(None)}


def _fail(message: str, raise_errors: bool):
    message = message if message.startswith("#") else ERROR_PREFIX + message
    if raise_errors:
        raise _CellError(message)
    return message


def _as_released(func: Function, inputs: dict, blank_formats=None) -> dict:
    """An inference function's inputs with no weight format given: each row's model as it was released
    (``core.inference_inputs``: gpt-oss's MXFP4, DeepSeek-V3's FP8), as the command line's estimate and the serving
    planner take it.  ``blank_formats``: in a range of weight formats, the rows whose cell is blank (each takes its
    model's release format, as a blank single cell does)."""
    if "weights_dtype" not in func.args:
        return inputs
    model = inputs.get("model", core.DEFAULTS["model"])
    if "weights_dtype" not in inputs and np.ndim(model) == 0:
        return core.inference_inputs(inputs)
    rows = max(np.size(model), np.size(inputs.get("weights_dtype", "")))
    if "weights_dtype" in inputs and (blank_formats is None or not np.any(blank_formats)):
        return inputs
    models = np.broadcast_to(np.asarray(model, dtype=object), (rows,)).tolist()
    default = core.DEFAULTS["weights_dtype"]
    released = [core.inference_inputs({"model": m}).get("weights_dtype", default) for m in models]
    if "weights_dtype" in inputs:  # a range with blanks: those rows as released
        given = np.broadcast_to(np.asarray(inputs["weights_dtype"], dtype=object), (rows,)).tolist()
        blank = np.broadcast_to(np.asarray(blank_formats, dtype=bool), (rows,)).tolist()
        released = [r if b else g for r, g, b in zip(released, given, blank)]
    elif all(f == default for f in released):
        return inputs
    return {**inputs, "weights_dtype": np.array(released, dtype=object)}


def _scalar(func: Function, named: dict):
    for sel, table in (("component", TRAIN_COMPONENTS), ("infer_component", INFER_COMPONENTS)):
        if sel in named and _selector(table, "component", named[sel]) == "all":
            return _breakdown(_as_released(func, _row_inputs(named)), table)
    quantity = _pick(func, named)
    inputs = _as_released(func, _row_inputs(named))
    needs_fit = quantity in NEEDS_FIT  # the time or cost of a job: none for a job that does not fit
    priced = quantity in NEEDS_PURCHASE_PRICE or quantity in NEEDS_RENTAL_PRICE
    # one evaluation gives the value and what decides whether it can be shown
    r = core.evaluate(inputs, outputs=(quantity, *(fit_outputs(quantity) if needs_fit else ()),
                                       *(PRICE_FLAGS if priced else ())))
    if needs_fit:
        gap = fit_gaps({**r, **_fit_inputs(inputs)}, [quantity])
        if gap:
            return gap[quantity][:MAX_TEXT]
    if priced and not all(r[k] > 0 for k in PRICE_FLAGS):  # the usual case (both prices known) skips this
        gap = price_gaps({**core.resolve_inputs(inputs), **r}, [quantity])
        if gap:
            return gap[quantity][:MAX_TEXT]
    return _plain(r[quantity])


def _vector(func: Function, named: dict, raise_errors: bool):
    arrays = {k: _as_2d(v) for k, v in named.items()}
    try:
        shape = np.broadcast_shapes(*(a.shape for a in arrays.values()))
    except ValueError:
        sizes = ", ".join(f"{k} {a.shape[0]}x{a.shape[1]}" for k, a in arrays.items() if a.size > 1)
        return _fail(f"ranges of different sizes do not line up: {sizes}", raise_errors)
    flat = {k: np.broadcast_to(a, shape).ravel() for k, a in arrays.items()}
    n = int(np.prod(shape))
    out = np.empty(n, dtype=object)
    ok = np.ones(n, dtype=bool)
    cells_of = {arg: column.tolist() for arg, column in flat.items()}  # Python values, converted once
    # 1. each distinct name checked once (a bad one marks only its cells); numbers in step 2
    floats = _check_names(func, flat, cells_of, out, ok)
    wanted, priced = _wanted(func, flat)
    # 2. the good rows in one vectorised evaluation; a row that fails a cross-check
    #    (offer versus GPU, tensor_parallel versus n_gpus) is marked and the rest re-run
    while ok.any():
        idx = np.flatnonzero(ok)
        every_row = len(idx) == n  # the usual case: no row was marked, the columns are used as they are
        blank = [_blank(v) for v in (flat["weights_dtype"] if every_row else flat["weights_dtype"][idx])] \
            if "weights_dtype" in flat else None
        inputs = _as_released(func, _sweep_inputs(flat, floats, cells_of, idx, every_row), blank)
        try:
            result = core.evaluate(inputs, outputs=wanted)  # no inputs left (all blank): the default scenario, once
        except InputError as err:
            j = idx[err.row] if err.row is not None and len(idx) > 1 else idx[0]
            out[j] = _error(err)
            ok[j] = False
            continue
        if not any(k in flat for k in ("component", "infer_component", "mode")):
            out[idx] = np.broadcast_to(np.asarray(result[func.result]), idx.shape).tolist()
            if priced:
                _mark_missing_prices(func.result, inputs, result, idx, out)
            _mark_not_fitting(func.result, inputs, result, idx, out)
            break
        for pos, j in enumerate(idx):
            selectors = {k: flat[k][j] for k in ("component", "infer_component", "mode") if k in flat}
            quantity = _pick(func, selectors) if selectors else func.result
            value = result[quantity]
            out[j] = _plain(value[pos] if np.ndim(value) else value)
            if quantity in NEEDS_FIT:
                _mark_not_fitting(quantity, inputs, result, idx[pos:pos + 1], out, pos)
        break
    if raise_errors and n == 1 and isinstance(out[0], str) and out[0].startswith("#"):
        raise _CellError(out[0])
    return out.reshape(shape).tolist()


def _check_names(func: Function, flat: dict, cells_of: dict, out: np.ndarray, ok: np.ndarray) -> dict[str, np.ndarray]:
    """Step 1 of ``_vector``: each distinct name (GPU, model, offer, selector) checked once: a bad one marks only its
    cells (its message into ``out``, False into ``ok``); numbers are checked by core's vectorised validation in
    step 2.  Returns the columns of plain numbers and blanks as float arrays (NaN: blank)."""
    floats: dict[str, np.ndarray] = {}
    for arg, column in flat.items():
        numeric = arg in BY_NAME and BY_NAME[arg].kind != "choice"
        if numeric:
            cells = cells_of[arg]
            # the common case, a column of plain numbers and blanks: no per-cell Python work.  Only real
            # numbers take this path: "8", True and NaN are checked cell by cell below, as a single cell is.
            if set(map(type, cells)) <= _PLAIN_NUMBER_TYPES:
                try:
                    numbers = np.array(cells, dtype=float)  # blank (None) -> NaN, read as "the default"
                except (OverflowError, ValueError):
                    numbers = None  # a number too large for a float: marked below
                # a NaN that was not a blank is checked cell by cell below
                if numbers is not None and int(np.isnan(numbers).sum()) == cells.count(None):
                    floats[arg] = numbers
                    continue
        for value in _distinct_cells([v for v in cells_of[arg] if not _blank(v)]):
            try:
                if arg in ("component", "infer_component"):
                    if _selector(TRAIN_COMPONENTS if arg == "component" else INFER_COMPONENTS, "component", value) == "all":
                        raise InputError("component", value, "returns a table: use it with single-cell arguments")
                elif arg == "mode":
                    _pick(func, {"mode": value})
                else:  # the value on its own: the checks between inputs read the row's other cells (step 2)
                    for name, one in _row_inputs({arg: value}).items():
                        core.check_input(name, one)
            except (InputError, core.CatalogError) as err:
                bad = np.array([v is value or (_hashable(v) and _hashable(value) and v == value) for v in column], dtype=bool)
                out[bad & ok] = _error(err)
                ok &= ~bad
    return floats


def _wanted(func: Function, flat: dict) -> tuple[tuple[str, ...], bool]:
    """The quantities ``func`` can return for these arguments, and whether its result rests on a price."""
    if "component" in flat:
        wanted = tuple(TRAIN_COMPONENTS.values())
    elif "infer_component" in flat:
        wanted = tuple(INFER_COMPONENTS.values())
    elif "mode" in flat:
        wanted = tuple(TOKEN_MODES.values())
    else:
        wanted = (func.result,)
    # a result that rests on a price the catalogs lack reads "no price: ..." (never $0): the price flags come along
    priced = func.result in NEEDS_PURCHASE_PRICE or func.result in NEEDS_RENTAL_PRICE
    if priced and not any(k in flat for k in ("component", "infer_component", "mode")):
        wanted = (*wanted, *PRICE_FLAGS)
    fit = tuple(dict.fromkeys(o for w in wanted for o in fit_outputs(w)))  # a job's time or cost: whether it fits
    wanted = (*wanted, *(o for o in fit if o not in wanted))
    return wanted, priced


def _sweep_inputs(flat: dict, floats: dict, cells_of: dict, idx: np.ndarray, every_row: bool) -> dict:
    """core.evaluate's inputs for the rows ``idx`` (``every_row``: all of them): blanks read as the default,
    each distinct cell cleaned once, an offer_or_gpu cell split into offer and GPU."""
    inputs = {}
    for arg in flat:
        column = flat[arg] if every_row else flat[arg][idx]
        if arg in ("component", "infer_component", "mode", "top"):
            continue
        if arg == "offer_or_gpu":
            specs = [_offer_or_gpu(v) if not _blank(v) else {} for v in column]
            if any(specs):
                inputs["offer"] = np.array([s.get("offer", catalog.AUTO_OFFER) for s in specs], dtype=object)
                default_gpu = core.DEFAULTS["gpu"]
                if any("gpu" in s for s in specs) or "gpu" in flat:
                    inputs["gpu"] = np.array([s.get("gpu", default_gpu) for s in specs], dtype=object)
            continue
        default = core.DEFAULTS[arg]
        if arg in floats:
            numbers = floats[arg][idx]
            blank = np.isnan(numbers)
            if blank.all():
                continue
            inputs[arg] = np.where(blank, float(default), numbers)
            continue
        cells = cells_of[arg] if every_row else column.tolist()
        distinct = _distinct_cells(cells)
        if all(_blank(v) for v in distinct):
            continue
        # per distinct value, not per cell; unhashable cells (architecture fields) taken as they are
        cleaned = {v: (default if _blank(v) else _clean(v)) for v in distinct if _hashable(v)}
        values = list(map(cleaned.__getitem__, cells)) if len(cleaned) == len(distinct) else [
            cleaned[v] if _hashable(v) else v for v in cells]
        inputs[arg] = np.array(values, dtype=object if BY_NAME[arg].kind == "choice" or BY_NAME[arg].accepts_number else float)
    return inputs


def _fit_inputs(inputs: dict) -> dict:
    """The inputs a call gives that stand for a job's time (job_hours of GPU_CLOUD_COST, a measured throughput): the
    quantities read through them need no fit (core.job_fit.FIT_INPUTS)."""
    return {k: inputs[k] for k in FIT_INPUTS if k in inputs}


def _mark_not_fitting(quantity: str, inputs: dict, result: dict, idx: np.ndarray, out: np.ndarray, at: int | None = None) -> None:
    """Cells whose ``quantity`` is the time or cost of a training job that does not fit get core's "does not fit" text
    (``at``: the one row of the sweep ``idx`` holds, when the cells are marked one by one)."""
    if quantity not in NEEDS_FIT:
        return
    needed = fit_outputs(quantity)
    size = max((np.size(result[k]) for k in needed), default=1) if at is not None else idx.shape[0]
    columns = {k: np.broadcast_to(np.asarray(result[k]), (max(size, 1),)) for k in needed}
    columns.update({k: np.broadcast_to(np.asarray(v, dtype=float), (max(size, 1),)) for k, v in _fit_inputs(inputs).items()})
    rows = [at] if at is not None else range(idx.shape[0])
    for pos in rows:
        gap = fit_gaps({k: v[pos if v.shape[0] > 1 else 0] for k, v in columns.items()}, [quantity])
        if gap:
            out[idx[0] if at is not None else idx[pos]] = gap[quantity][:MAX_TEXT]


def _mark_missing_prices(quantity: str, inputs: dict, result: dict, idx: np.ndarray, out: np.ndarray) -> None:
    """Cells whose ``quantity`` rests on a missing purchase or rental price get core's "no price" text."""
    shape = idx.shape
    flags = {k: np.broadcast_to(np.asarray(result[k], dtype=float), shape) for k in PRICE_FLAGS}
    missing = np.zeros(shape, dtype=bool)
    for k in PRICE_FLAGS:
        missing |= ~(flags[k] > 0)
    if not missing.any():
        return
    gpus = np.broadcast_to(np.asarray(inputs.get("gpu", core.DEFAULTS["gpu"]), dtype=object), shape)
    buys = np.broadcast_to(np.asarray(inputs.get("buy", core.DEFAULTS["buy"]), dtype=float), shape)
    for pos in np.flatnonzero(missing):
        gpu = core.check_input("gpu", gpus[pos])  # (its name alone: the row's count was checked with the row)
        values = {"gpu": gpu, "buy": buys[pos], **{k: flags[k][pos] for k in PRICE_FLAGS}}
        gap = price_gaps(values, [quantity])
        if gap:
            out[idx[pos]] = gap[quantity][:MAX_TEXT]


def _hashable(value) -> bool:
    try:
        hash(value)
        return True
    except TypeError:
        return False


# ---------------------------------------------------------------------------
# table functions (single values in, a table out)

def _scalar_args(named: dict, func_name: str) -> dict:
    for k, v in named.items():
        if _is_range(v) and np.asarray(v, dtype=object).size > 1:
            raise InputError(k, None, f"is a range; {func_name} takes single cells")
    return {k: (np.asarray(v, dtype=object).ravel()[0] if _is_range(v) else v) for k, v in named.items()}


def _plan(named: dict):
    from gpu_tco.core import compose_recommendation as compose
    from gpu_tco.core import offers_kept_for, plan
    named = _scalar_args(named, "GPU_PLAN")
    top = named.pop("top", None)
    top = 10 if _blank(top) else _clean(top)
    if isinstance(top, bool) or not isinstance(top, int):
        raise InputError("top", top, "is not a whole number; allowed: a whole number >= 0 (0 = all options)")
    if top < 0:
        raise InputError("top", top, "is too small; allowed: a whole number >= 0 (0 = all options)")
    result = plan(_row_inputs(named), alike_kept=offers_kept_for(top))
    options = result["options"] if top == 0 else [o for o in result["options"] if o["ok"]][:top]
    head = ["rank", "gpu", "n_gpus", "acquire", "offer", "hours", "cost_usd", "outlay_usd", "usd_per_mtok_train", "ok", "reasons",
            "machines", "fit", "recommendation"]
    rows = [head]
    # the recommended option carries core's answer in words (the same sentences as the command line and the workbook)
    answer = compose(result).text if result["recommended"] is not None else ""
    for i, o in enumerate(options, start=1):
        rows.append([i, o["gpu"], o["n_gpus"], o["acquire"], o["offer"], _cell_number(o["hours"]), _cell_number(o["cost_usd"]),
                     _cell_number(o["outlay_usd"]), _cell_number(o["usd_per_mtok_train"]), o["ok"], "; ".join(o["reasons"]),
                     _cell_number(o["machines"]),
                     fit_word(o["fits"], o["tight"], o["may_exceed"]),
                     answer[:MAX_TEXT] if o is result["recommended"] else ""])
    if len(rows) == 1:
        rows.append(["no option fits, is priced and meets the deadline and budget; GPU_PLAN(...,0) lists all"] + [""] * (len(head) - 1))
    return rows


SERVE_HEAD = ("rank", "gpu", "n_gpus", "weights_dtype", "acquire", "offer", "replicas", "ttft_ms", "tpot_ms",
              "usd_per_mtok_input", "usd_per_mtok_output", "usd_per_month", "ok", "reasons",
              "servers", "server_gpus", "load_fraction", "ttft_queue_wait_ms", "ttft_at_load_ms", "spare_replicas",
              "single_failure_stops", "accuracy_effect", "engine", "ttft_ms_likely_low", "ttft_ms_likely_high",
              "tpot_ms_likely_low", "tpot_ms_likely_high", "launch_command", "layout", "prefill_replicas", "decode_replicas",
              "kv_transfer_ms", "recommendation")


def _serve_plan(named: dict):
    """GPU_SERVE_PLAN: core's serving answer (``serve_plan``) in one cell, or its ranked setups as a table."""
    from gpu_tco.core import lead_option, offers_kept_for, serve_plan
    named = _scalar_args(named, "GPU_SERVE_PLAN")
    top = named.pop("serve_top", None)
    if not _blank(top):
        top = _clean(top)
        if isinstance(top, bool) or not isinstance(top, int) or top < 0:
            raise InputError("top", top, "is not a whole number >= 0; allowed: empty (the answer), a number of setups "
                             "(0 = all options)")
    result = serve_plan(_row_inputs(named), alike_kept=None if _blank(top) else offers_kept_for(top))
    if _blank(top):
        return result["recommendation"]
    options = result["options"] if top == 0 else [o for o in result["options"] if o.ok][:top]
    rows = [list(SERVE_HEAD)]
    for i, o in enumerate(options, start=1):
        rows.append([i, o.gpu, o.n_gpus, o.weights_dtype, o.acquire, o.offer, o.replicas, _cell_number(o.ttft_ms),
                     _cell_number(o.tpot_ms), _cell_number(o.usd_per_mtok_input), _cell_number(o.usd_per_mtok_output),
                     _cell_number(o.usd_per_month), o.ok, "; ".join(o.reasons),
                     o.servers, o.server_gpus, _cell_number(o.load_fraction), _cell_number(o.ttft_queue_wait_ms),
                     _cell_number(o.ttft_at_load_ms), o.spare_replicas, o.single_failure_stops,
                     o.accuracy_effect if o.weights_bits < 8 else "", o.engine,
                     *(_cell_number(v) for v in (*o.ttft_ms_likely, *o.tpot_ms_likely)),
                     result["launch"][0]["command"] if o is lead_option(result) and result["launch"] else "",
                     o.layout, o.prefill_replicas, o.decode_replicas,
                     _cell_number(o.kv_transfer_ms) if o.layout == "disaggregated" else "",
                     result["recommendation"] if o is result["recommended"] else ""])
    if len(rows) == 1:
        rows.append(["no setup meets the targets; GPU_SERVE_PLAN(...,0) lists all with why"] + [""] * (len(SERVE_HEAD) - 1))
    return rows


def _cell_number(x):
    return "" if x != x else float(x)  # NaN (an option that never fits) shows as an empty cell


def _spec(table_name: str, key_arg: str, default_field: str):
    def spec(named: dict):
        table = catalog.tables()[table_name]
        keys, fields = named.get(key_arg), named.get("field")
        if not (_is_range(keys) or _is_range(fields)):
            return _one_spec(table, key_arg, default_field, keys, fields)
        a, b = _as_2d(keys), _as_2d(fields)
        try:
            shape = np.broadcast_shapes(a.shape, b.shape)
        except ValueError:
            raise InputError(key_arg, None, "is a range of another size than field; allowed: ranges that line up") from None
        pairs = zip(np.broadcast_to(a, shape).ravel(), np.broadcast_to(b, shape).ravel())
        cells = []
        for k, f in pairs:
            try:
                cells.append(_one_spec(table, key_arg, default_field, k, f))
            except (InputError, core.CatalogError) as err:
                cells.append(_error(err))
        return np.array(cells, dtype=object).reshape(shape).tolist()
    return spec


def _one_spec(table, key_arg: str, default_field: str, key, field_name):
    key = core.DEFAULTS[key_arg] if _blank(key) else _clean(key)
    if key_arg == "model":  # a name, or a parameter count (the estimated architecture, outside the catalog)
        row = row_of(core.resolve_inputs({"model": key}), "model")
    else:
        row = table.rows[table.resolve(key, key_arg)]
    name = default_field if _blank(field_name) else str(field_name).strip()
    if key_arg == "model" and MODEL_DERIVED.get(name, name) in ARCHITECTURE_QUANTITIES:
        # parameter counts are computed from the architecture (core's formulas), not stored
        quantity = MODEL_DERIVED.get(name, name)
        return _plain(core.evaluate({"model": key}, outputs=(quantity,))[quantity])
    columns = [c for c in table.columns if c != "aliases"]
    if name not in columns:
        raise InputError("field", field_name, allowed_hint(name, columns) + "allowed: " + ", ".join(columns), verb="unknown")
    return _plain(row.get(name, 0))


def _list(table_name: str):
    def listing(named: dict):
        table = catalog.tables()[table_name]
        columns = [c for c in table.columns if c != "aliases"]
        return [columns] + [[_plain(r.get(c, "")) for c in columns] for r in table.rows[:table.file_rows]]
    return listing


def _explain(named: dict):
    named = _scalar_args(named, "GPU_EXPLAIN")
    quantity = named.get("quantity")
    name = "own_tco_usd" if _blank(quantity) else str(quantity).strip()  # no argument: the headline quantity
    if name not in core.QUANTITIES:
        raise InputError("quantity", quantity, allowed_hint(name, core.QUANTITIES) + "allowed: a quantity of docs/quantities.md",
                         verb="unknown")
    q = core.QUANTITIES[name]
    text = f"{name} [{q.unit}] = {formula_text(q.expr)}. {q.description}."
    return text + (f" Source: {q.source}" if q.source else "")


def _network(named: dict):
    """GPU_NETWORK: which network joins a job's machines (core.cluster_network), or "one machine"."""
    from gpu_tco.core import cluster_network
    named = _scalar_args(named, "GPU_NETWORK")
    return cluster_network(_row_inputs(named))[:MAX_TEXT] or "one machine"


def _whole_servers(named: dict):
    """GPU_WHOLE_SERVERS: whether n_gpus of a GPU fill whole servers as gpu-tco buys them (core.purchase_note)."""
    given = _row_inputs(_scalar_args(named, "GPU_WHOLE_SERVERS"))  # a blank argument: core's default
    return core.purchase_note(given.get("gpu", core.DEFAULTS["gpu"]), given.get("n_gpus", core.DEFAULTS["n_gpus"]))[:MAX_TEXT]


_TRAIN = ("model", "method", "seq_len", "micro_batch", "n_gpus", "sharding", "optimizer", "precision", "recompute", "lora_rank")
# how the GPUs split the work (appended last: sheets written before keep their meaning)
_LAYOUT = ("tensor_parallel", "pipeline_parallel", "pipeline_microbatches", "context_parallel", "expert_parallel", "offload_params")
FUNCTIONS: dict[str, Function] = {f.name: f for f in [
    Function("GPU_TCO", "Total cost of owning n_gpus of a GPU over months at hours_per_day: capital, setup, energy, colocation "
             "and upkeep, less resale value (USD).",
             ("gpu", "n_gpus", "months", "hours_per_day", "usd_per_kwh", "pue", "purchase_usd_per_gpu",
              "colo_usd_per_kw_month", "maintenance_pct_per_year", "value_loss_pct_per_year"), "own_tco_usd", "USD"),
    Function("GPU_OWN_HOURLY", "Cost per working GPU-hour of owned GPUs: annualised capital plus running costs over the hours "
             "they work (USD per GPU-hour).",
             ("gpu", "n_gpus", "months", "hours_per_day", "usd_per_kwh", "pue", "purchase_usd_per_gpu", "discount_rate_pct"),
             "own_usd_per_gpu_hour", "USD/GPU-h"),
    Function("GPU_CLOUD_COST", "Cost of renting for a job: billed GPU-hours at the offer's price (whole instances, billing "
             "increment, debugging allowance) plus storage and egress (USD).",
             ("offer_or_gpu", "job_hours", "n_gpus", "usd_per_gpu_hour_rented", "debug_overhead_pct", "storage_gb", "egress_gb"),
             "rent_total_usd", "USD"),
    Function("GPU_WHOLE_SERVERS", "Whether n_gpus of a GPU fill whole servers as it is sold (GPU_TCO and GPU_BREAKEVEN price any "
             "count; the planner buys whole servers only), as text.", ("gpu", "n_gpus"), unit="text", special=_whole_servers),
    Function("GPU_BREAKEVEN", "Months until buying n_gpus pays back against renting the same working hours at the given "
             "price, discounted at discount_rate_pct (-1 = never within reason).",
             ("gpu", "usd_per_gpu_hour_rented", "n_gpus", "hours_per_day", "months", "usd_per_kwh", "purchase_usd_per_gpu",
              "discount_rate_pct"),
             "payback_months", "months"),
    Function("GPU_COST_PER_MTOK", "Rented cost per million generated tokens when serving model on n_gpus at the batch "
             "size (USD per million tokens).",
             ("model", "gpu", "n_gpus", "usd_per_gpu_hour_rented", "batch", "context_tokens", "weights_dtype", "kv_dtype",
              "rent_utilization_pct"), "decode_usd_per_mtok_rent", "USD/Mtok"),
    Function("GPU_API_BREAKEVEN", "Monthly generated tokens (millions) above which renting n_gpus for hours_per_day beats an "
             "API's price per million tokens (-1 = never: even fully used, the rented GPUs cost more per token).",
             ("model", "gpu", "n_gpus", "api_usd_per_mtok", "usd_per_gpu_hour_rented", "hours_per_day", "batch",
              "context_tokens", "weights_dtype"), "selfhost_rent_breakeven_mtok_per_month", "Mtok/month"),
    Function("GPU_API_BREAKEVEN_OWNED", "Monthly generated tokens (millions) above which owning n_gpus beats an API's price "
             "per million tokens: spread capital and fixed costs over the API's margin over energy (-1 = never).",
             ("model", "gpu", "n_gpus", "api_usd_per_mtok", "purchase_usd_per_gpu", "months", "usd_per_kwh", "batch",
              "context_tokens", "weights_dtype"), "selfhost_breakeven_mtok_per_month", "Mtok/month"),
    Function("GPU_MEMORY_TRAIN", "Peak training memory per GPU (GiB) for full fine-tuning, LoRA, QLoRA or pre-training; "
             "component picks one part, \"all\" returns the breakdown table.",
             _TRAIN + ("component",) + _LAYOUT + ("framework",), "peak_train_gib_per_gpu", "GiB/GPU"),
    Function("GPU_MEMORY_INFER", "Inference memory per GPU (GiB): weights, KV cache of the batch, workspace and overhead; "
             "component picks one part, \"all\" returns the breakdown table.",
             ("model", "context_tokens", "batch", "weights_dtype", "kv_dtype", "n_gpus", "infer_component"),
             "peak_infer_gib_per_gpu", "GiB/GPU"),
    Function("GPU_KV_CACHE", "KV cache of batch sequences of context_tokens, all GPUs together (GiB); grouped-query "
             "attention and sliding windows counted.",
             ("model", "context_tokens", "batch", "kv_dtype"), "kv_cache_gib", "GiB"),
    Function("GPUS_NEEDED", "Smallest number of GPUs that holds the training job in memory (0 = no count of this GPU does).",
             ("model", "gpu", "method", "seq_len", "micro_batch", "sharding", "optimizer", "precision", "recompute", "lora_rank",
              "framework"), "gpus_needed", "GPUs"),
    Function("GPU_TRAIN_FIT", "Whether a training job fits on n_gpus: 0 = does not fit (tensors above the GPU memory less "
             "memory_margin_pct), 1 = fits, 2 = fits but tight (device total above 90 % of the memory).",
             ("model", "gpu", "n_gpus", "method", "seq_len", "micro_batch", "sharding", "optimizer", "precision", "recompute",
              "lora_rank", "memory_margin_pct") + _LAYOUT + ("framework",), "train_fit_code", "code"),
    Function("GPU_TRAIN_HOURS", "Wall-clock hours to train tokens x epochs on n_gpus: FLOPs / (GPUs x dense TFLOPS x MFU).",
             ("model", "tokens", "gpu", "n_gpus", "method", "mfu", "epochs", "precision") + _LAYOUT + ("framework",),
             "train_hours", "h"),
    Function("GPU_TRAIN_HOURS_LOW", "Low end of the likely training hours: GPU_TRAIN_HOURS / (1 + the framework's speed band, "
             "twice the median error of its published runs left out of the fit).",
             ("model", "tokens", "gpu", "n_gpus", "method", "mfu", "epochs", "precision") + _LAYOUT + ("framework",),
             "train_hours_likely_low", "h"),
    Function("GPU_TRAIN_HOURS_HIGH", "High end of the likely training hours: GPU_TRAIN_HOURS x (1 + the framework's speed "
             "band, twice the median error of its published runs left out of the fit).",
             ("model", "tokens", "gpu", "n_gpus", "method", "mfu", "epochs", "precision") + _LAYOUT + ("framework",),
             "train_hours_likely_high", "h"),
    Function("GPU_TOKENS_PER_SEC", "Throughput in tokens per second: decode (generated), prefill (prompt) or train.",
             ("model", "gpu", "n_gpus", "mode", "batch", "context_tokens", "weights_dtype"), "decode_tokens_per_s", "tokens/s"),
    Function("GPU_PLAN", "Ranked ways to run a training job: every GPU, count and offer or buying; cheapest acceptable first "
             "(a table that spills on Excel 365).",
             ("model", "method", "tokens", "epochs", "seq_len", "micro_batch", "deadline_hours", "budget_usd", "top",
              "allow_interruptible", "hours_per_day", "months", "owned_busy_hours_per_day", "consider_buying", "capital_budget_usd",
              "memory_margin_pct", "framework", "packed_document_tokens"), special=_plan),
    Function("GPU_SERVE_PLAN", "Serving a model at a demand within latency targets: rent, buy or the API, in one cell; "
             "with top, the ranked setups (servers, load, queued first token, ranges, USD per Mtok, launch "
             "command); engine: vllm (default), sglang, trtllm, llamacpp, transformers",
             ("model", "requests_per_s", "prompt_tokens", "output_tokens", "ttft_slo_ms", "tpot_slo_ms", "api_model",
              "hours_per_day", "gpu", "serve_top", "target_utilization", "spare_replicas", "min_weight_bits", "engine",
              "serving_layout"),
             special=_serve_plan),
    Function("GPU_SPEC", "A field of a GPU from the catalog, e.g. memory_gib (default), bf16_dense_tflops, tdp_w, purchase_usd.",
             ("gpu", "field"), special=_spec("gpus", "gpu", "memory_gib")),
    Function("MODEL_SPEC", "A field of a model: a catalog column, e.g. layers (default), hidden, kv_heads, vocab, or params_b / "
             "active_params_b (billions, computed from the architecture).",
             ("model", "field"), special=_spec("models", "model", "layers")),
    Function("GPU_LIST", "The GPU catalog as a table (name, memory, TFLOPS, power, price, source, as-of date).", (),
             special=_list("gpus")),
    Function("MODEL_LIST", "The model catalog as a table (architecture, sources).", (), special=_list("models")),
    Function("GPU_NETWORK", "Which network joins the machines of a job across machines: the named offer's, the cheapest "
             "offer that sells that many GPUs as one job, or an owned cluster's (buy = 1); \"one machine\" otherwise.",
             ("gpu", "n_gpus", "offer", "buy", "model"), unit="text", special=_network),
    Function("GPU_EXPLAIN", "The formula of a gpu-tco quantity, its unit, meaning and source, as text.", ("quantity",),
             unit="text", special=_explain),
]}
