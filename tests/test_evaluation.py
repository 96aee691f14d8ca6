"""Compute only what is asked, in bounded memory: pruned and chunked evaluation equal the full path."""
from __future__ import annotations

import math
import random
import re
import weakref

import numpy as np
import pandas as pd
import pytest
from helpers import random_config, same_array
from hypothesis import given, settings
from hypothesis import strategies as st

from gpu_tco import core
from gpu_tco.core import engine
from gpu_tco.core.codegen import _factor, _min_max, _structure, _vif, ancestors, compile_formulas, inputs_of, row_derived
from gpu_tco.core.expr import Ref

NAMES = list(core.QUANTITIES)


@pytest.mark.slow  # over 0.45 s
def test_pruned_scalar_evaluation_equals_the_full_path_on_random_inputs():
    rng = random.Random(16)
    for i in range(40):
        cfg = random_config(random.Random(1600 + i))
        full = core.evaluate(cfg)
        wanted = tuple(rng.sample(NAMES, rng.randint(1, 6)))
        pruned = core.evaluate(cfg, outputs=wanted)
        assert set(pruned) == set(wanted)
        for name in wanted:
            # equal to rounding: the full path computes shared subterms once (x * (r / 100) as a temporary), the
            # pruned path writes x * r / 100; the last bit may differ, the formula does not
            assert math.isclose(pruned[name], full[name], rel_tol=1e-13, abs_tol=0) or pruned[name] == full[name] \
                or (math.isnan(pruned[name]) and math.isnan(full[name])), (cfg, name)


def test_pruned_code_computes_only_the_ancestors():
    compiled = compile_formulas(False, ("own_tco_usd",))
    assert "peak_train_gib_per_gpu" not in compiled.source and "kv_cache_gib" not in compiled.source
    # owning reads the serving fleet size too, and the fleet its layout (aggregated or prefill and decode apart): 186 of 465
    assert len(ancestors(["own_tco_usd"])) < 0.45 * len(NAMES)
    assert "seq_len" not in inputs_of(["own_tco_usd"]) and "usd_per_kwh" in inputs_of(["own_tco_usd"])
    assert compile_formulas(False, ("own_tco_usd",)) is compiled  # cached per set of outputs


def _random_sweep(rng: np.random.Generator, n: int) -> dict:
    return {
        "seq_len": rng.choice([512, 2048, 8192], n), "micro_batch": rng.integers(1, 8, n),
        "gpu": rng.choice(["H100-SXM", "RTX-4090", "A100-80GB-SXM", "L40S"], n).astype(object),
        "model": rng.choice(np.array(["Llama-3-8B", "Mistral-7B", "Mixtral-8x7B", "13B", 70.0], dtype=object), n),
        "n_gpus": rng.choice([1, 2, 8], n), "hours_per_day": rng.uniform(1, 24, n),
        "usd_per_kwh": 0.2, "method": "qlora",
    }


@pytest.mark.slow  # the three together about 1 s
@pytest.mark.parametrize("chunk", [1, 7, 64])
def test_chunked_sweeps_equal_the_unchunked_path(monkeypatch, chunk):
    rng = np.random.default_rng(chunk)
    # blocks of one row: 60 rows are 60 blocks (300 took five times as long, every block alike)
    rows = 60 if chunk == 1 else 300
    sweep = _random_sweep(rng, rows)
    monkeypatch.setattr(engine, "CHUNK_ROWS", 10**9)
    whole = core.evaluate(sweep)
    monkeypatch.setattr(engine, "CHUNK_ROWS", chunk)
    blocks = core.evaluate(sweep)
    assert set(whole) == set(blocks) == set(NAMES)
    wrong = [n for n in NAMES if not same_array(whole[n], blocks[n]) or whole[n].dtype != blocks[n].dtype]
    assert not wrong, wrong[:5]  # blocks after the first write their results in place: same values, same types
    # and equal to scalar calls, row by row, to rounding: the sweep gathers the factors of a product
    # that are one value for every row first (x * (a / b) for x * a / b), a few units in the last
    # place apart (measured: at most 2.2e-15 relative over every quantity)
    for j in (0, rows // 2, rows - 1):
        row = {k: (v[j] if isinstance(v, np.ndarray) else v) for k, v in sweep.items()}
        scalar = core.evaluate(row)
        for n in NAMES:
            assert same_array(scalar[n], blocks[n][j]) or math.isclose(scalar[n], blocks[n][j], rel_tol=1e-13), (n, j)


def test_chunked_broadcasting_shapes_series_and_requested_outputs(monkeypatch):
    monkeypatch.setattr(engine, "CHUNK_ROWS", 5)
    seq = np.array([[512], [2048], [8192]])
    batch = np.array([1, 2, 4, 8])
    grid = core.evaluate({"seq_len": seq, "micro_batch": batch}, outputs=["peak_train_gib_per_gpu", "gpu_memory_gib"])
    assert grid["peak_train_gib_per_gpu"].shape == (3, 4) and grid["gpu_memory_gib"].shape == (3, 4)
    assert grid["peak_train_gib_per_gpu"][2, 3] == core.evaluate(seq_len=8192, micro_batch=8)["peak_train_gib_per_gpu"]
    s = pd.Series([1024, 4096, 16384], index=["a", "b", "c"])
    out = core.evaluate({"seq_len": s}, outputs="kv_cache_gib")
    assert list(out) == ["kv_cache_gib"] and list(out["kv_cache_gib"].index) == ["a", "b", "c"]


def test_unknown_outputs_are_named_with_close_matches():
    with pytest.raises(core.InputError, match=r"outputs: \"own_tco\" is not a quantity \(did you mean own_tco_usd"):
        core.evaluate(outputs=["own_tco"])
    with pytest.raises(core.InputError, match="outputs"):
        core.evaluate(outputs=[3])


def test_front_ends_ask_only_for_what_they_show(monkeypatch):
    """The Excel functions and the planner request their quantities by name (a spy records the calls;
    the real engine computes)."""
    from gpu_tco.addin import functions
    asked = []
    real = core.evaluate

    def spy(inputs=None, outputs=None, **kw):
        asked.append(outputs)
        return real(inputs, outputs=outputs, **kw)

    monkeypatch.setattr(functions.core, "evaluate", spy)
    functions.call("GPU_TCO", "H100-SXM", 8)
    functions.call("GPU_TCO", [["H100-SXM"], ["L40S"]], 8)
    functions.call("GPU_MEMORY_TRAIN", "Llama-3-8B", "qlora")
    assert asked and all(o is not None and len(o) <= 8 for o in asked), asked
    monkeypatch.setattr(engine, "evaluate", spy)
    import gpu_tco.core.planner as planner
    monkeypatch.setattr(planner, "evaluate", spy)
    asked.clear()
    planner.plan({"method": "qlora"})
    assert asked and all(o is not None and len(o) < len(NAMES) / 5 for o in asked), asked


# ---------------------------------------------------------------------------
# how the generated code saves work: each saving must give the same numbers as the plain form

def test_quantities_of_one_catalog_row_are_computed_once_per_row_not_per_call():
    derived = row_derived(NAMES)
    assert derived["params_total"] == "models" and derived["kv_dim"] == "models"
    assert "lora_params" not in derived and "kv_bytes_per_token" not in derived  # an input or a second table
    compiled = compile_formulas(False, None)
    assert "    params_total = " not in compiled.source  # unpacked with the row, like a field
    assert "params_total" in compiled.row_fields["models"]
    # a model outside the catalog gets its derived quantities too, scalar and in a sweep
    spec = {"layers": 32, "hidden": 4096, "ffn": 14336, "heads": 32, "kv_heads": 8, "vocab": 128256}
    one = core.evaluate(model=spec)
    assert one["params_total"] == pytest.approx(core.evaluate(model="Llama-3-8B")["params_total"], rel=1e-3)
    sweep = core.evaluate(model=[spec, "Llama-3-8B", spec], outputs=["params_total", "kv_dim", "peak_train_gib_per_gpu"])
    assert sweep["params_total"][0] == one["params_total"] == sweep["params_total"][2]
    assert sweep["peak_train_gib_per_gpu"][0] == one["peak_train_gib_per_gpu"]


def test_min_and_max_without_calls_give_what_python_gives_nan_and_types_included():
    values = [1, 2.5, -3, 0, 0.0, -0.0, True, math.nan, math.inf, -math.inf]
    rng = random.Random(5)
    for _ in range(400):
        args = [rng.choice(values) for _ in range(rng.randint(2, 4))]
        names = [f"x{i}" for i in range(len(args))]
        for fn, builtin in (("MIN", min), ("MAX", max)):
            code = _min_max(fn, [f"({n} + 0)" if i % 2 else n for i, n in enumerate(names)])
            got = eval(f"lambda {', '.join(names)}: {code}")(*args)  # noqa: S307 - our own generated text
            want = builtin(*(a + 0 if i % 2 else a for i, a in enumerate(args)))
            assert type(got) is type(want) and (got == want or (math.isnan(got) and math.isnan(want))), (fn, args)


@given(st.booleans(), st.sampled_from(["scalar", "array", "other"]), st.sampled_from(["scalar", "array", "other"]),
       st.sampled_from([np.float64, np.int64, np.bool_]), st.sampled_from([np.float64, np.int64, np.bool_]))
@settings(max_examples=200, deadline=None)
def test_if_with_one_condition_for_the_block_gives_what_np_where_gives(cond, kind_a, kind_b, dt_a, dt_b):
    def make(kind, dt, seed):
        if kind == "scalar":
            return dt(seed)
        if kind == "other":
            return 7 if seed else 0.5  # Python numbers, as the formulas' constants
        return np.arange(seed, seed + 5).astype(dt)
    a, b = make(kind_a, dt_a, 1), make(kind_b, dt_b, 0)
    got, want = _vif(cond, a, b), np.where(cond, a, b)
    assert got.dtype == want.dtype
    assert np.array_equal(np.broadcast_to(got, want.shape), want)


def test_equal_subtrees_are_computed_once_but_never_a_guarded_division_in_scalar_code():
    x, y = Ref("a"), Ref("b")
    sum1, sum2, div1, div2 = x + y, x + y, x / y, x / y
    for vector in (False, True):
        memo = {}
        assert _structure(sum1, vector, memo) == _structure(sum2, vector, memo)
        # scalar code computes a temporary before the IF that guards it: x / 0 must stay guarded
        assert (_structure(div1, vector, memo) == _structure(div2, vector, memo)) is vector
    # and the result: every quantity with every default is finite, so nothing unguarded raised
    assert all(math.isfinite(float(v)) for v in core.evaluate(n_gpus=1, discount_rate_pct=0, months=12).values())
    assert core.evaluate(usd_per_gpu_hour_rented=0.01, purchase_usd_per_gpu=1e6)["breakeven_hours"] == -1


@pytest.mark.slow  # over 0.45 s
def test_sweeps_with_any_inputs_varying_equal_scalar_rows(monkeypatch):
    """The vector code is generated for the inputs a call gives as arrays: what does not vary is
    computed once, products gather their fixed factors, results are written in place from the
    second block on (blocks of 4 rows here).  Random subsets of inputs as arrays (the rest one
    value), against scalar calls row by row."""
    monkeypatch.setattr(engine, "CHUNK_ROWS", 4)
    rng = random.Random(161)
    # inputs that must change together: an offer belongs to its GPU, tp divides n_gpus, a MIG slice runs one GPU, FP8
    # needs a GPU that has it and a base it can multiply (QLoRA's NF4 is multiplied in 16 bit)
    linked = {"gpu": {"offer", "precision", "n_gpus"}, "offer": {"gpu"}, "n_gpus": {"tensor_parallel", "gpu"},
              "tensor_parallel": {"n_gpus"},
              "precision": {"gpu", "method"}, "method": {"precision"}}
    for _ in range(12):
        rows = [random_config(rng) for _ in range(25)]
        moving = set(rng.sample(sorted(rows[0]), rng.randint(1, 6)))
        while not (grown := moving | {j for k in moving for j in linked.get(k, ())}) <= moving:
            moving = grown
        for row in rows[1:]:
            row.update({k: rows[0][k] for k in row if k not in moving})
        sweep = {k: ([r[k] for r in rows] if k in moving else rows[0][k]) for k in rows[0]}
        result = core.evaluate(sweep)
        for j in (0, 7, 24):
            one = core.evaluate(rows[j])
            for n in NAMES:
                got = np.broadcast_to(result[n], (25,))[j]
                assert same_array(one[n], got) or math.isclose(one[n], got, rel_tol=1e-13), (sorted(moving), n, j)


def test_a_serving_sweep_sizes_each_replica_as_its_row_alone_would_be_sized():
    """Without an n_gpus, a serving replica is one GPU on a MIG slice, else the largest count up to the default whose
    GPUs split the model's attention heads (validation.mig_serving_count): a sweep over models and GPUs sizes each row
    so, as a call of that row alone does.  A count given that cannot split a row's heads is refused, naming the row."""
    mig = next(g["name"] for g in core.catalog.tables()["gpus"].rows if core.catalog.mig_profile(g))
    combos = [(m, g) for m in ("Qwen2.5-7B", "Llama-3-8B", "MPT-3B") for g in (mig, "H100-SXM")]  # 28, 32, 20 heads
    sweep = core.evaluate({"model": [m for m, _ in combos], "gpu": [g for _, g in combos], "task": "serve"})
    # (the premise: the rows alone take one (a MIG slice), four, eight and five GPUs per replica)
    assert {core.resolve_inputs({"model": m, "gpu": g, "task": "serve"})["n_gpus"] for m, g in combos} == {1, 4, 5, 8}
    for j, (model, gpu) in enumerate(combos):
        one = core.evaluate({"model": model, "gpu": gpu, "task": "serve"})
        for n in NAMES:
            got = np.broadcast_to(sweep[n], (len(combos),))[j]
            assert same_array(one[n], got) or math.isclose(one[n], got, rel_tol=1e-13), (model, gpu, n, one[n], got)
    with pytest.raises(core.InputError) as alone:
        core.evaluate({"gpu": "L4", "n_gpus": 9, "task": "serve"})
    with pytest.raises(core.InputError) as swept:
        core.evaluate({"gpu": "L4", "n_gpus": [1, 8, 9], "task": "serve"})
    assert swept.value.row == 2 and str(swept.value) == str(alone.value).replace("n_gpus:", "n_gpus (row 2):", 1)


def test_a_sweep_refuses_more_than_one_slice_of_a_mig_gpu_as_one_configuration_does():
    """A job runs on one MIG slice (no NVLink between slices): a row asking for more, given or by the default count,
    is refused with the line a call of that row alone gives, naming the row; one slice per row is computed."""
    mig = next(g["name"] for g in core.catalog.tables()["gpus"].rows if core.catalog.mig_profile(g))
    with pytest.raises(core.InputError) as alone:
        core.evaluate({"gpu": mig, "n_gpus": 2})
    with pytest.raises(core.InputError) as swept:
        core.evaluate({"gpu": ["H100-SXM", mig], "n_gpus": [2, 2]})
    assert swept.value.row == 1 and str(swept.value) == str(alone.value).replace("n_gpus:", "n_gpus (row 1):", 1)
    with pytest.raises(core.InputError, match=r"^n_gpus \(row 0\): 8 is more than one slice"):
        core.evaluate({"gpu": [mig, "H100-SXM"]})  # the training default, 8 GPUs
    one_each = core.evaluate({"gpu": ["H100-SXM", mig], "n_gpus": [2, 1]})
    assert math.isclose(np.broadcast_to(one_each["peak_train_gib_per_gpu"], (2,))[1],
                        core.evaluate({"gpu": mig, "n_gpus": 1})["peak_train_gib_per_gpu"], rel_tol=1e-13)


def test_what_does_not_vary_is_computed_once_and_products_gather_fixed_factors():
    compiled = compile_formulas(True, None, frozenset({"seq_len", "micro_batch"}))
    once, per_block = compiled.source.split("    def _block(V, O):\n")
    assert "    own_tco_usd = " in once and "own_tco_usd = " not in per_block  # no sequence length in it
    assert "V['seq_len']" in per_block and "I['seq_len']" not in once
    # layers x activation bytes x seq_len x micro_batch x hidden / tensor-parallel split: two
    # operations per row, the fixed factors multiplied once per call; the last one writes straight
    # into the block's rows of the result (no copy afterwards)
    line = next(x.strip() for x in per_block.splitlines() if x.strip().startswith("act_checkpoint_bytes ="))
    k = compiled.outputs.index("act_checkpoint_bytes")
    assert re.fullmatch(rf"act_checkpoint_bytes = _np.multiply\(seq_len \* micro_batch, _t\d+, out=O\[{k}\]\)", line), line
    # every input varying: the code computes everything per block, as before
    everything = compile_formulas(True, None, frozenset(i.name for i in core.INPUTS))
    assert "    own_tco_usd = " in everything.source.split("    def _block(V, O):\n")[1]


def test_a_gathered_whole_number_factor_too_large_for_int64_becomes_a_float():
    assert _factor(2**70) == float(2**70) and type(_factor(2**70)) is float
    assert _factor(6) == 6 and type(_factor(6)) is int and _factor(0.5) == 0.5


def test_a_sweeps_result_memory_is_reused_only_when_nobody_holds_it():
    sweep = {"seq_len": np.arange(1, 40_001) * 16, "n_gpus": 8}
    asked = ["activations_gib", "peak_train_gib_per_gpu"]
    first = core.evaluate(sweep, outputs=asked)
    kept = first["activations_gib"][10:20]  # a slice keeps the whole array in use
    want = kept.copy()
    dropped = weakref.ref(first["peak_train_gib_per_gpu"].base)  # the array the engine allocated
    del first
    later = {**sweep, "seq_len": sweep["seq_len"] + 1}
    second = core.evaluate(later, outputs=asked)
    assert np.array_equal(kept, want)  # the held slice was not written over
    assert dropped() is not None and any(v.base is dropped() for v in second.values())  # the dropped one was reused
    assert kept.base is not second["activations_gib"].base
    fresh = {k: v.copy() for k, v in second.items()}
    del second
    engine.free_sweep_memory()
    assert not len(engine.SWEEP_MEMORY) and dropped() is None
    assert all(np.array_equal(v, core.evaluate(later, outputs=asked)[k]) for k, v in fresh.items())


def test_a_division_read_twice_inside_a_branch_is_not_computed_ahead_of_its_guard():
    """Owning beats the API above a break-even that divides by (API price - energy per Mtok): with both 0 (no API price,
    free energy) the guard says never, and the generated code must not divide first (a case hypothesis found)."""
    r = core.evaluate({"model": "Llama-2-7B", "usd_per_kwh": 0.0, "api_usd_per_mtok": 0, "prompt_tokens": 1, "output_tokens": 1})
    assert r["selfhost_breakeven_mtok_per_month"] == -1
