"""Evaluation: validate inputs, resolve catalog names, run the compiled formulas.

The quantities in ``formulas.py`` are compiled once into two Python functions
(straight-line code, one assignment per quantity): a scalar one on floats and
a vectorised one on NumPy arrays.  Both are generated from the same
expression trees, so the scalar value, the sweep and the Excel formula
cannot disagree.
"""
from __future__ import annotations

import functools
import math
from typing import Mapping

import numpy as np

from . import catalog
from .errors import InputError, suggest
from .expr import Lookup, lookups, refs, text
from .formulas import QUANTITIES
from .inputs import BY_NAME, DEFAULTS, INPUTS, Input

QUANTITY_NAMES: tuple[str, ...] = tuple(QUANTITIES)
CHOICE_INPUTS = tuple(i.name for i in INPUTS if i.kind == "choice")


# ---------------------------------------------------------------------------
# code generation

def _vmin(*args):
    return functools.reduce(np.minimum, args)


def _vmax(*args):
    return functools.reduce(np.maximum, args)


def _vand(*args):
    return functools.reduce(np.logical_and, args)


def _vor(*args):
    return functools.reduce(np.logical_or, args)


_RUNTIME = {
    "_ceil": math.ceil, "_floor": math.floor, "_sqrt": math.sqrt,
    "_np": np, "_vmin": _vmin, "_vmax": _vmax, "_vand": _vand, "_vor": _vor, "_vif": np.where,
}


def _shared_subtrees() -> dict[int, "Expr"]:
    """Non-trivial subtrees used more than once (same object): computed once into a temporary."""
    from .expr import Const, Ref

    seen: dict[int, int] = {}
    nodes: dict[int, object] = {}

    def visit(node):
        if isinstance(node, (Const, Ref, Lookup)):
            return
        seen[id(node)] = seen.get(id(node), 0) + 1
        nodes[id(node)] = node
        if seen[id(node)] == 1:
            for child in node.children():
                visit(child)

    for qty in QUANTITIES.values():
        visit(qty.expr)
    return {i: nodes[i] for i, n in seen.items() if n > 1}


def _generate(vector: bool) -> str:
    """Straight-line Python: inputs, hoisted catalog fields, shared temporaries, one line per quantity."""
    from .expr import Ref

    used_inputs: dict[str, None] = {}
    fields: dict[str, Lookup] = {}
    shared = _shared_subtrees()
    temps: dict[int, str] = {}
    body: list[str] = []

    def render(node) -> str:
        # render with shared subtrees replaced by temporaries, defined just before first use
        if isinstance(node, Lookup):
            fields.setdefault(node.var(), node)
            return node.var()
        if id(node) in shared:
            if id(node) not in temps:
                code = node.render_with(render, vector)  # may allocate inner temporaries first
                name = f"_t{len(temps)}"
                temps[id(node)] = name
                body.append(f"    {name} = {code}")
            return temps[id(node)]
        return node.render_with(render, vector)

    for name, qty in QUANTITIES.items():
        for node in qty.expr.walk():
            if isinstance(node, Ref) and node.name in BY_NAME:
                used_inputs.setdefault(node.name)
        body.append(f"    {name} = {render(qty.expr)}")
    head = ["def _run(I, C):"]
    for name in used_inputs:
        head.append(f"    {name} = I[{name!r}]")
    for key in CHOICE_INPUTS:
        head.append(f"    {key}__row = I[{key + '__row'!r}]")
    if vector:
        for var, lk in fields.items():
            head.append(f"    {var} = C[{lk.table + '.' + lk.field!r}][{lk.key}__row]")
        tail = [f"    return ({', '.join(QUANTITY_NAMES)},)"]
    else:
        # scalar: one subscript per catalog row, unpacked into all the fields the formulas use
        for (table, key), names in _group_fields(fields).items():
            head.append(f"    ({', '.join(names)},) = C[{table!r}][{key}__row]")
        tail = ["    return {" + ", ".join(f"{n!r}: {n}" for n in QUANTITY_NAMES) + "}"]
    return "\n".join(head + body + tail) + "\n"


def _group_fields(fields: dict) -> dict:
    """Lookup variables grouped by (table, key input); records the field order for _scalar_columns."""
    groups: dict = {}
    for var, lk in fields.items():
        groups.setdefault((lk.table, lk.key), []).append(var)
        _SCALAR_ROW_FIELDS.setdefault(lk.table, [])
        if lk.field not in _SCALAR_ROW_FIELDS[lk.table]:
            _SCALAR_ROW_FIELDS[lk.table].append(lk.field)
    tables = [t for t, _ in groups]
    assert len(tables) == len(set(tables)), "each catalog is looked up by one input"
    return groups


_SCALAR_ROW_FIELDS: dict = {}  # table -> fields the scalar code unpacks, in order


def _compile(vector: bool):
    source = _generate(vector)
    namespace = dict(_RUNTIME)
    exec(compile(source, f"<gpu-tco {'vector' if vector else 'scalar'} formulas>", "exec"), namespace)
    return namespace["_run"], source


_SCALAR_FN, SCALAR_SOURCE = _compile(False)

_VECTOR_FN, VECTOR_SOURCE = _compile(True)
_COLUMN_KEYS = sorted({(lk.table, lk.field) for qty in QUANTITIES.values() for lk in lookups(qty.expr)})


# ---------------------------------------------------------------------------
# validation of single values

def _check_number(inp: Input, value, row=None) -> float:
    if isinstance(value, (bool, np.bool_)) and inp.kind != "flag":
        raise InputError(inp.name, value, f"is a yes/no value; allowed: {inp.allowed()}", row)
    if isinstance(value, str):
        raise InputError(inp.name, value, f"is text; allowed: {inp.allowed()}", row)
    try:
        x = float(value)
    except (TypeError, ValueError):
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


def _fast_bounds(inp: Input):
    """(lo, hi, integer) for a quick in-range test of plain numbers; None where the full check is needed."""
    if inp.kind in ("choice", "flag") or inp.minimum is None or inp.maximum is None or inp.min_exclusive \
            or inp.zero_or_min is not None:
        return None
    return (inp.minimum, inp.maximum, inp.kind == "integer")


_FAST_BOUNDS = {i.name: _fast_bounds(i) for i in INPUTS}

_MODEL_FIELDS_REQUIRED = ("layers", "hidden", "ffn", "heads", "vocab")


def _custom_model_row(spec: Mapping) -> dict:
    """A user-given architecture (mapping of model catalog fields)."""
    table = catalog.models()
    allowed = set(table.numeric) | {"name", "aliases", "family", "source", "as_of"}
    for key in spec:
        if key not in allowed:
            close = suggest(str(key), sorted(allowed))
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise InputError(f"model.{key}", spec[key], f"is not an architecture field{hint}")
    for key in _MODEL_FIELDS_REQUIRED:
        if key not in spec:
            raise InputError(f"model.{key}", None, f"is missing; a custom architecture needs {', '.join(_MODEL_FIELDS_REQUIRED)}")
    row: dict = {}
    for key in table.numeric:
        if key in spec:
            v = spec[key]
            if isinstance(v, (bool, str)) or not isinstance(v, (int, float, np.number)) or not math.isfinite(float(v)) or float(v) < 0:
                raise InputError(f"model.{key}", v, "must be a finite number >= 0")
            row[key] = float(v)
    for key in ("layers", "hidden", "ffn", "heads", "vocab"):
        if row[key] < 1 or row[key] != int(row[key]):
            raise InputError(f"model.{key}", spec[key], "must be a whole number >= 1")
    row.setdefault("kv_heads", row["heads"])
    row.setdefault("head_dim", row["hidden"] / row["heads"])
    defaults = {"tied_embeddings": 0, "gated_mlp": 1, "experts": 1, "active_experts": 1, "qkv_bias": 0,
                "norms_per_layer": 2, "dropout": 0, "other_params": 0, "max_context": 4096,
                "sliding_window": 0, "sliding_layer_fraction": 0, "params_published_b": 0, "is_estimate": 0}
    for key, v in defaults.items():
        row.setdefault(key, float(v))
    if row["active_experts"] > row["experts"]:
        raise InputError("model.active_experts", row["active_experts"], f"must be <= experts ({row['experts']:g})")
    if row["kv_heads"] > row["heads"] or row["kv_heads"] < 1:
        raise InputError("model.kv_heads", row["kv_heads"], f"must be between 1 and heads ({row['heads']:g})")
    fields = ",".join(f"{k}={row[k]:g}" for k in sorted(row))
    row["name"] = str(spec.get("name") or f"custom[{fields}]")
    row["source"] = str(spec.get("source") or "user-given architecture")
    row["family"] = str(spec.get("family") or "custom")
    return row


def estimate_architecture(params_b: float) -> dict:
    """A Llama-3-style architecture with about ``params_b`` billion parameters.

    Shape rules (from the Llama 3 family): head_dim 128, 8 KV heads, gated
    MLP with f = 3.5 h, vocabulary 128,256 (tied below 4B), depth about
    h / 128.  h is chosen so that the count matches, then rounded to a
    multiple of 128; L is re-fitted to the rounded h.  Results built on it
    carry ``model_is_estimate = 1``.
    """
    target = params_b * 1e9
    vocab = 128_256
    tied = 1 if params_b < 4 else 0

    def count(h, layers):
        heads = max(1, h // 128)
        kv = min(8, heads)
        f = 3.5 * h
        per_layer = h * 128 * (heads + 2 * kv) + heads * 128 * h + 3 * h * f + 2 * h
        return layers * per_layer + vocab * h * (2 - tied) + h

    best = None
    for h in range(256, 65_536 + 1, 128):
        heads = h // 128
        per_layer = count(h, 1) - count(h, 0)
        layers = max(1, round((target - count(h, 0)) / per_layer))
        aspect_err = abs(math.log(max(h / 128, 1) / layers))
        err = abs(count(h, layers) - target) / target + 0.05 * aspect_err
        if best is None or err < best[0]:
            best = (err, h, layers, heads)
    _, h, layers, heads = best
    return {
        "name": f"{params_b:g}B (estimated)", "family": "estimated", "layers": float(layers), "hidden": float(h),
        "ffn": 3.5 * h, "heads": float(heads), "kv_heads": float(min(8, heads)), "head_dim": 128.0, "vocab": float(vocab),
        "tied_embeddings": float(tied), "gated_mlp": 1.0, "experts": 1.0, "active_experts": 1.0, "qkv_bias": 0.0,
        "norms_per_layer": 2.0, "dropout": 0.0, "other_params": 0.0, "max_context": 8192.0, "sliding_window": 0.0,
        "sliding_layer_fraction": 0.0, "params_published_b": float(params_b), "is_estimate": 1.0,
        "source": "estimated from the parameter count with Llama-3 shape rules", "as_of": "",
    }


_AD_HOC: dict = {}


def _resolve_choice(inp: Input, value, row=None) -> int:
    table = catalog.tables()[inp.table]
    if inp.name == "offer" and isinstance(value, str) and catalog.normalize(value) == catalog.AUTO_OFFER:
        return -1  # resolved against the GPU by _link_offer
    if inp.accepts_number and isinstance(value, Mapping):
        spec = _custom_model_row(value)
        key = ("custom", spec["name"])
        if key not in _AD_HOC:
            _AD_HOC[key] = table.add(spec)
        return _AD_HOC[key]
    if inp.accepts_number and not isinstance(value, (str, bool, np.bool_)):
        try:
            x = float(value)
        except (TypeError, ValueError):
            raise InputError(inp.name, value, f"is neither a name nor a number; allowed: {inp.allowed()}", row) from None
        if not math.isfinite(x) or x <= 0 or x > 100_000:
            raise InputError(inp.name, value, "is not a parameter count between 0 and 100,000 billion", row)
        key = ("estimate", x)
        if key not in _AD_HOC:
            _AD_HOC[key] = table.add(estimate_architecture(x))
        return _AD_HOC[key]
    if isinstance(value, str):
        try:
            return table.resolve(value, inp.name)
        except InputError as err:
            if row is not None:
                raise InputError(err.field, err.value, err.allowed, row, err.verb) from None
            raise
    raise InputError(inp.name, value, f"is not a name; allowed: {inp.allowed()}", row)


def _offer_mismatch(offer_row: int, gpu_row: int, row=None) -> InputError:
    tabs = catalog.tables()
    offer_gpu = tabs["offers"].col["gpu"][offer_row]
    gpu = tabs["gpus"].names[gpu_row]
    rows = np.flatnonzero(catalog.offer_gpu_rows() == gpu_row)
    listed = ", ".join(tabs["offers"].names[i] for i in rows[:8]) or "none in the catalog"
    return InputError("offer", tabs["offers"].names[offer_row],
                      f"rents {offer_gpu}, but gpu is {gpu}; offers for {gpu}: {listed} (or offer auto)", row)


def _link_offer(values: dict, gpu_given: bool) -> None:
    """Resolve offer "auto" to the GPU's reference offer; an explicit offer sets the GPU
    when none was given, and must rent the same GPU when one was."""
    off, gpu_row = values["offer__row"], values["gpu__row"]
    gpu_of_offer, reference = catalog._offer_maps()
    if off < 0:
        off = int(reference[gpu_row])
    elif gpu_of_offer[off] >= 0 and gpu_of_offer[off] != gpu_row:
        if gpu_given:
            raise _offer_mismatch(off, gpu_row)
        gpu_row = int(gpu_of_offer[off])
        values["gpu__row"], values["gpu"] = gpu_row, catalog.tables()["gpus"].col["name"][gpu_row]
    values["offer__row"], values["offer"] = off, catalog.tables()["offers"].col["name"][off]


def _link_offer_vector(values: dict, shape, gpu_given: bool) -> None:
    off = np.broadcast_to(np.asarray(values["offer__row"]), shape).copy()
    gpu_row = np.broadcast_to(np.asarray(values["gpu__row"]), shape).copy()
    gpu_of_offer = catalog.offer_gpu_rows()
    auto = off < 0
    off[auto] = catalog.reference_offer_rows()[gpu_row[auto]]
    explicit_gpu = np.where(auto, -1, gpu_of_offer[off])
    bad = (explicit_gpu >= 0) & (explicit_gpu != gpu_row)
    if bad.any():
        if gpu_given:
            j = int(np.flatnonzero(bad.ravel())[0])
            raise _offer_mismatch(int(off.flat[j]), int(gpu_row.flat[j]), row=j)
        gpu_row[bad] = explicit_gpu[bad]
    tabs = catalog.tables()
    values["offer__row"], values["gpu__row"] = off, gpu_row
    values["offer"] = np.asarray(tabs["offers"].names, dtype=object)[off]
    values["gpu"] = np.asarray(tabs["gpus"].names, dtype=object)[gpu_row]


def _cross_check(values: Mapping, row=None) -> None:
    n, t = values["n_gpus"], values["tensor_parallel"]
    if n % t:
        raise InputError("tensor_parallel", t, f"must divide n_gpus ({n})", row)


# ---------------------------------------------------------------------------
# public entry points

@functools.lru_cache(maxsize=1)
def _resolved_defaults() -> dict:
    values: dict = {}
    for inp in INPUTS:
        if inp.kind == "choice":
            i = _resolve_choice(inp, inp.default)
            values[inp.name] = catalog.tables()[inp.table].rows[i]["name"] if i >= 0 else inp.default
            values[inp.name + "__row"] = i
        else:
            values[inp.name] = _check_number(inp, inp.default)
    return values


def _scalar_columns() -> dict:
    """Per table, a list of row tuples holding the fields the scalar code unpacks (rebuilt when rows are added)."""
    tabs = catalog.tables()
    key = (catalog.VERSION, id(tabs))
    if _ROWS_CACHE.get("key") != key:
        _ROWS_CACHE["key"] = key
        _ROWS_CACHE["rows"] = {t: list(zip(*(tabs[t].col[f] for f in fields))) for t, fields in _SCALAR_ROW_FIELDS.items()}
    return _ROWS_CACHE["rows"]


_ROWS_CACHE: dict = {}


def _reset_caches() -> None:
    _resolved_defaults.cache_clear()
    _ROWS_CACHE.clear()
    _AD_HOC.clear()


def _unknown(name) -> InputError:
    close = suggest(str(name), list(BY_NAME))
    hint = f" (did you mean {', '.join(close)}?)" if close else ""
    return InputError(str(name), None, f"is not an input{hint}; see docs/quantities.md")


_PLAIN_SCALARS = (str, int, float, bool)


def _is_array(value) -> bool:
    if isinstance(value, (str, bytes, Mapping)):
        return False
    return isinstance(value, (list, tuple, np.ndarray)) or type(value).__module__.startswith("pandas")


def _scalar_values(given: Mapping) -> dict:
    """Defaults overlaid with validated, resolved scalar inputs (choice inputs also get their row index)."""
    values = dict(_resolved_defaults())
    tabs = catalog.tables()
    for name, value in given.items():
        inp = BY_NAME[name]
        if inp.kind == "choice":
            table = tabs[inp.table]
            i = table._found.get(value) if type(value) is str else None
            if i is None:
                i = _resolve_choice(inp, value)
            values[name] = table.col["name"][i] if i >= 0 else catalog.AUTO_OFFER
            values[name + "__row"] = i
        else:
            fast = _FAST_BOUNDS[name]
            if type(value) in (int, float) and fast is not None and fast[0] <= value <= fast[1] \
                    and (not fast[2] or value == int(value)):
                values[name] = value  # common case: a plain in-range number
            else:
                values[name] = _check_number(inp, value)
    return values


def evaluate(inputs: Mapping | None = None, **kw) -> dict:
    """Every quantity for one configuration, or a whole sweep.

    ``inputs`` maps input names (see ``core.INPUTS`` / docs/quantities.md) to
    values; missing inputs take their defaults.  Scalars in, scalars out.
    If any value is a list, NumPy array or pandas Series, all inputs are
    broadcast together and every quantity comes back as an array of that
    shape (a Series with the input's index if a Series came in).

    Raises ``core.InputError`` naming the input, the value and what is
    allowed.
    """
    given = dict(inputs or {})
    given.update(kw)
    for name, value in given.items():
        if name not in BY_NAME:
            raise _unknown(name)
        if type(value) not in _PLAIN_SCALARS and _is_array(value):
            return _evaluate_vector(given)
    values = _scalar_values(given)
    _link_offer(values, "gpu" in given)
    _cross_check(values)
    try:
        return _SCALAR_FN(values, _scalar_columns())
    except (ZeroDivisionError, ValueError, OverflowError) as err:  # pragma: no cover - guarded by validation
        raise InputError("inputs", None, f"produce no finite result ({err})") from None


def _evaluate_vector(given: Mapping) -> dict:
    series_index = None
    arrays: dict[str, np.ndarray] = {}
    for name, value in given.items():
        if _is_array(value):
            if type(value).__module__.startswith("pandas"):
                series_index = value.index if series_index is None else series_index
                value = value.to_numpy()
            arrays[name] = np.asarray(value, dtype=object if BY_NAME[name].kind == "choice" else None)
            if arrays[name].size == 0:
                raise InputError(name, None, "is an empty list; give at least one value")
    try:
        shape = np.broadcast_shapes(*(a.shape for a in arrays.values()))
    except ValueError:
        shapes = ", ".join(f"{k}{a.shape}" for k, a in arrays.items())
        raise InputError("inputs", shapes, "have shapes that do not broadcast together") from None

    values = _scalar_values({k: v for k, v in given.items() if k not in arrays})
    for name, arr in arrays.items():
        inp = BY_NAME[name]
        if inp.kind == "choice":
            flat = arr.ravel()
            idx = np.empty(flat.shape, dtype=np.intp)
            memo: dict = {}
            for j, v in enumerate(flat):
                key = (type(v).__name__, v) if not isinstance(v, Mapping) else ("map", id(v))
                if key not in memo:
                    memo[key] = _resolve_choice(inp, v, row=j)
                idx[j] = memo[key]
            values[name + "__row"] = idx.reshape(arr.shape)
            values[name] = np.asarray(catalog.tables()[inp.table].names + [catalog.AUTO_OFFER], dtype=object)[values[name + "__row"]]
        else:
            values[name] = _check_array(inp, arr)
    _link_offer_vector(values, shape, "gpu" in given)
    n = np.broadcast_to(np.asarray(values["n_gpus"]), shape)
    tp = np.broadcast_to(np.asarray(values["tensor_parallel"]), shape)
    bad = np.flatnonzero(np.mod(n, tp) != 0)
    if bad.size:
        j = int(bad[0])
        _cross_check({"n_gpus": int(n.flat[j]), "tensor_parallel": int(tp.flat[j])}, row=j)
    tabs = catalog.tables()
    columns = {f"{t}.{f}": tabs[t].np_column(f) for t, f in _COLUMN_KEYS}
    with np.errstate(all="ignore"):
        out = _VECTOR_FN(values, columns)
    result = {}
    for name, v in zip(QUANTITY_NAMES, out):
        arr = np.broadcast_to(np.asarray(v), shape)
        result[name] = arr
    if series_index is not None:
        import pandas as pd
        result = {k: pd.Series(np.array(v), index=series_index, name=k) for k, v in result.items()}
    return result


def _check_array(inp: Input, arr: np.ndarray) -> np.ndarray:
    if arr.dtype.kind not in "biuf":
        for j, v in enumerate(arr.ravel()):
            _check_number(inp, v, row=j)  # raises for the first bad element
        arr = arr.astype(float)
    if arr.dtype.kind == "b" and inp.kind != "flag":
        _check_number(inp, bool(arr.ravel()[0]), row=0)
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
        _check_number(inp, x.ravel()[j], row=j)
    return x


def resolve_inputs(inputs: Mapping | None = None) -> dict:
    """Every input's value as used for scalar inputs: defaults filled in, names canonical, numbers checked.

    Choice inputs also carry ``<name>__row``, their row in the catalog.
    """
    given = dict(inputs or {})
    for name in given:
        if name not in BY_NAME:
            raise _unknown(name)
    values = _scalar_values(given)
    _link_offer(values, "gpu" in given)
    _cross_check(values)
    return values


def explain(quantity: str, inputs: Mapping | None = None) -> dict:
    """The formula of a quantity and the values that fed it.

    Returns a dict with name, unit, description, source, formula (readable),
    excel (defined-name formula), python (scalar source), value, and
    ``inputs``: a list of (name, value, unit) for every input, quantity and
    catalog field the formula reads directly.
    """
    if quantity not in QUANTITIES:
        close = suggest(quantity, list(QUANTITIES))
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        raise InputError("quantity", quantity, f"is not a quantity{hint}; see docs/quantities.md")
    qty = QUANTITIES[quantity]
    result = evaluate(inputs or {})
    values = resolve_inputs(inputs)
    fed = []
    for lk in lookups(qty.expr):
        row = values[lk.key + "__row"]
        entry = (lk.text(), catalog.tables()[lk.table].col[lk.field][row], "catalog")
        if entry not in fed:
            fed.append(entry)
    for r in refs(qty.expr):
        if r in QUANTITIES:
            fed.append((r, result[r], QUANTITIES[r].unit))
        elif r in BY_NAME and not any(e[0] == r for e in fed):
            fed.append((r, values[r], BY_NAME[r].unit))
    return {
        "name": quantity, "unit": qty.unit, "description": qty.description, "source": qty.source,
        "formula": text(qty.expr), "excel": "=" + qty.expr.xl(), "python": qty.expr.py(False),
        "value": result[quantity], "inputs": fed,
    }


def breakdown(result: Mapping, mode: str = "train") -> dict:
    """Memory components (weights, gradients, optimizer, activations, logits, kv_cache, overhead, total) in GiB/GPU."""
    from .formulas import INFER_COMPONENTS, TRAIN_COMPONENTS

    if mode not in ("train", "infer"):
        raise InputError("mode", mode, "allowed: train, infer")
    table = TRAIN_COMPONENTS if mode == "train" else INFER_COMPONENTS
    return {comp: (result[name] if name else 0.0) for comp, name in table.items()}
