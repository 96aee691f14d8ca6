"""Bad input gets a clear InputError; valid input never raises; memory moves the right way (hypothesis)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpu_tco import core
from gpu_tco.core import catalog
from gpu_tco.core.inputs import INPUTS

NUMERIC = [i for i in INPUTS if i.kind in ("number", "integer")]
FLAGS = [i for i in INPUTS if i.kind == "flag"]
CHOICE = [i for i in INPUTS if i.kind == "choice"]


def valid_value(inp):
    if inp.kind == "choice":
        return st.sampled_from(catalog.tables()[inp.table].names)
    if inp.kind == "flag":
        return st.sampled_from([0, 1, True, False])
    lo = inp.minimum if inp.minimum is not None else 0
    hi = inp.maximum
    if inp.name in ("seq_len", "context_tokens"):
        hi = 131072  # keep sizes realistic; the bounds themselves are tested below
    if inp.name in ("micro_batch", "batch", "n_gpus"):
        hi = 4096
    if inp.name in ("tensor_parallel", "pipeline_parallel", "context_parallel", "expert_parallel", "attention_dp",
                    "pipeline_virtual_stages"):
        return st.just(1)  # degrees must divide n_gpus (and experts): their messages are tested in test_parallelism.py
    if inp.zero_or_min is not None:
        if inp.kind == "integer":
            return st.one_of(st.just(0), st.integers(int(math.ceil(inp.zero_or_min)), int(hi)))
        return st.one_of(st.just(0), st.floats(inp.zero_or_min, hi))
    if inp.kind == "integer":
        return st.integers(int(math.ceil(lo + (1 if inp.min_exclusive else 0))), int(hi))
    return st.floats(lo, hi, exclude_min=inp.min_exclusive, allow_nan=False, allow_infinity=False)


def _consistent_offer(cfg: dict) -> dict:
    """An explicit offer rents one GPU: keep the pair consistent (a mismatch is an error, tested below); an FP8
    precision runs only where the GPU and the method allow it (refused with a message: tests/test_fp8.py)."""
    offer = cfg.get("offer")
    if offer not in (None, "auto", "none"):
        cfg["gpu"] = catalog.tables()["offers"].row(offer)["gpu"]
    if catalog.mig_profile(catalog.tables()["gpus"].row(cfg.get("gpu", "H100-SXM"))):
        cfg["n_gpus"] = 1  # a MIG slice runs a job on one slice (more is refused: tested in test_mig.py)
    if "task" in cfg and "n_gpus" in cfg and core.check_input("task", cfg["task"]) == "serve":
        # a serving replica is n_gpus GPUs in tensor parallel: a count the model's heads divide (refusal: test_hardening3)
        model = catalog.tables()["models"].row(cfg.get("model", core.DEFAULTS["model"]))
        n = max(1, int(cfg["n_gpus"]))
        cfg["n_gpus"] = max(d for d in range(1, n + 1) if not core.heads_problem(model, d))
    if "prompt_tokens" in cfg or "output_tokens" in cfg:
        # a prompt and its output longer than the model's context are refused (tests/test_hardening5.py): keep them within it
        model = catalog.tables()["models"].row(cfg.get("model", core.DEFAULTS["model"]))
        context = int(model.get("max_context") or 0)
        if context:
            prompt = min(int(cfg.get("prompt_tokens", core.DEFAULTS["prompt_tokens"])), context - 1)
            cfg["prompt_tokens"] = prompt
            cfg["output_tokens"] = max(1, min(int(cfg.get("output_tokens", core.DEFAULTS["output_tokens"])), context - prompt))
    if cfg.get("serving_layout") == 2 and "engine" in cfg:
        # prefill and decode apart only with an engine that has the mode (refusal: test_disaggregated.py)
        engine = catalog.tables()["engines"].row(core.check_input("engine", cfg["engine"]))
        if not float(engine.get("disaggregated_mode") or 0) > 0:
            cfg["serving_layout"] = 0
    if cfg.get("framework") is not None:
        # a sharding or offload the framework does not run (DeepSpeed: ZeRO-2/3 beside pipeline stages, offload below
        # its ZeRO stage) is refused with a message (tests/test_training_frameworks.py): another framework runs it
        from gpu_tco.core.validation import framework_refusal
        keys = ("framework", "sharding", "offload_optimizer", "offload_params")
        try:
            values = core.resolve_inputs({k: cfg[k] for k in keys if k in cfg})
            refused = framework_refusal({**values, "pipeline_parallel": cfg.get("pipeline_parallel", 1),
                                         "expert_parallel": cfg.get("expert_parallel", 1)}) is not None
        except core.InputError:
            refused = True
        if refused:
            cfg["framework"] = "transformers"
    if "precision" in cfg and catalog.tables()["precisions"].row(cfg["precision"])["fp8_linears"]:
        # as a one-row sweep: a sweep marks what it cannot run instead of refusing it
        supported = core.evaluate({**cfg, "gpu": [cfg.get("gpu", "H100-SXM")]}, outputs=("train_precision_supported",))
        qlora = "method" in cfg and catalog.tables()["methods"].row(cfg["method"])["quantized_base"]
        if qlora or not supported["train_precision_supported"][0]:
            cfg["precision"] = "bf16_mixed"
    return cfg


configs = st.fixed_dictionaries({}, optional={i.name: valid_value(i) for i in INPUTS}).map(_consistent_offer)


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configs)
def test_valid_inputs_never_raise_and_give_finite_memory(cfg):
    r = core.evaluate(cfg)
    for name in ("peak_train_gib_per_gpu", "peak_infer_gib_per_gpu", "train_hours", "kv_cache_gib", "gpus_needed",
                 "rent_total_usd", "own_tco_usd", "own_usd_per_gpu_hour", "option_cost_usd", "own_cumulative_usd"):
        assert math.isfinite(float(r[name])) and r[name] >= 0, (name, r[name])


def invalid_value(inp):
    bad = [float("nan"), float("inf"), -float("inf"), "text", None, [[]]]
    if inp.kind in ("number", "integer"):
        if inp.minimum is not None:
            bad.append(inp.minimum - 1)
            if inp.min_exclusive:
                bad.append(inp.minimum)
        if inp.maximum is not None:
            bad.append(inp.maximum * 10 + 1)
        if inp.kind == "integer":
            bad.append(2.5)
        if inp.zero_or_min is not None:
            bad.append(inp.zero_or_min / 2)
        bad.append(True)
    if inp.kind == "flag":
        bad += [2, 0.5, -1]
    if inp.kind == "choice":
        bad = ["no-such-thing", 3.5 if not inp.accepts_number else -1, None, ""]
    return st.sampled_from(bad)


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(st.sampled_from(INPUTS).flatmap(lambda i: st.tuples(st.just(i), invalid_value(i))))
def test_invalid_inputs_always_raise_input_error_naming_the_field(case):
    inp, value = case
    if value == [[]]:
        value = []  # an empty sweep is not a value either
    with pytest.raises(core.InputError) as err:
        core.evaluate({inp.name: value})
    assert str(err.value).startswith(inp.name), str(err.value)


def test_unknown_input_name_suggests():
    with pytest.raises(core.InputError, match=r"seqlen: is not an input \(did you mean seq_len"):
        core.evaluate(seqlen=10)


def test_messages_name_value_and_what_is_allowed():
    with pytest.raises(core.InputError) as err:
        core.evaluate(seq_len=-5)
    assert str(err.value) == "seq_len: -5 is too small; allowed: a whole number >= 1 and <= 10,000,000 (tokens)"
    with pytest.raises(core.InputError, match=r'n_gpus: "eight" is text'):
        core.evaluate(n_gpus="eight")
    with pytest.raises(core.InputError, match="tensor_parallel: 3 must divide n_gpus"):
        core.evaluate(n_gpus=8, tensor_parallel=3)


def test_sweep_error_names_the_bad_row():
    with pytest.raises(core.InputError) as err:
        core.evaluate(seq_len=np.array([1024, 2048, -1, 4096]))
    assert err.value.row == 2 and "seq_len (row 2)" in str(err.value)
    with pytest.raises(core.InputError, match=r'gpu \(row 1\): unknown "H1000"'):
        core.evaluate(gpu=["H100-SXM", "H1000"])


def test_nothing_is_silently_clamped():
    with pytest.raises(core.InputError):
        core.evaluate(mfu=1.5)
    with pytest.raises(core.InputError):
        core.evaluate(fragmentation_pct=-1)


# monotonicity --------------------------------------------------------------------------
train_cfg = st.fixed_dictionaries({
    "method": st.sampled_from(["full", "lora", "qlora"]),
    "sharding": st.sampled_from(["none", "zero1", "zero2", "zero3"]),
    "recompute": st.sampled_from(["none", "selective", "full"]),
    "flash_attention": st.sampled_from([0, 1]),
    "precision": st.sampled_from(["bf16_mixed", "bf16_pure", "fp32"]),
    "optimizer": st.sampled_from(["adamw", "adamw_8bit", "sgd_momentum", "adafactor"]),
    "seq_len": st.integers(64, 16384),
    "micro_batch": st.integers(1, 8),
    "n_gpus": st.integers(1, 64),
})


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(train_cfg, st.floats(1, 400))
def test_memory_grows_with_parameters(cfg, params_b):
    small = core.evaluate({**cfg, "model": params_b})["peak_train_gib_per_gpu"]
    large = core.evaluate({**cfg, "model": params_b * 1.5})["peak_train_gib_per_gpu"]
    assert large > small


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(train_cfg, st.sampled_from(["Llama-3-8B", "Mistral-7B", "Qwen2.5-14B", "Mixtral-8x7B"]))
def test_memory_grows_with_sequence_and_batch(cfg, model):
    r = core.evaluate({**cfg, "model": model})
    base = r["peak_train_gib_per_gpu"]
    longer = core.evaluate({**cfg, "model": model, "seq_len": cfg["seq_len"] * 2})["peak_train_gib_per_gpu"]
    wider = core.evaluate({**cfg, "model": model, "micro_batch": cfg["micro_batch"] + 1})["peak_train_gib_per_gpu"]
    # peak = states + max(forward/backward, optimizer step): it can only stay flat while the step phase dominates
    assert longer >= base * (1 - 1e-12) and wider >= base * (1 - 1e-12)  # equal up to rounding when flat
    if r["forward_backward_gib"] > r["step_transient_gib"]:
        assert longer > base and wider > base


@pytest.mark.slow  # over 0.45 s
@settings(max_examples=200, deadline=None)
@given(train_cfg.filter(lambda c: c["sharding"] != "none"), st.sampled_from(["Llama-3-8B", "Llama-3-70B", "Mixtral-8x7B"]))
def test_memory_falls_with_more_gpus_under_sharding(cfg, model):
    """More GPUs never need more memory each, but for one step: from one GPU to data parallelism with whole gradients
    (ZeRO-1), the gradients the framework frees between steps stay as the all-reduce's buckets, so the end of the
    forward pass holds them again (at most that much more)."""
    r = core.evaluate({**cfg, "model": model})
    fewer = r["peak_train_gib_per_gpu"]
    more = core.evaluate({**cfg, "model": model, "n_gpus": cfg["n_gpus"] * 2})["peak_train_gib_per_gpu"]
    buckets = r["grads_freed_at_forward_gib"] if cfg["n_gpus"] == 1 and cfg["sharding"] in ("none", "zero1") else 0
    assert more <= fewer + buckets * (1 + core.resolve_inputs(cfg)["fragmentation_pct"] / 100) + 1e-9
    if cfg["n_gpus"] > 1 and cfg["method"] == "full":
        assert more < fewer


@pytest.mark.slow  # over 0.45 s
@settings(max_examples=100, deadline=None)
@given(train_cfg.filter(lambda c: c["sharding"] == "zero3"), st.sampled_from(["RTX-4090", "A100-40GB-SXM", "H100-SXM"]),
       st.sampled_from(["Llama-3-8B", "Llama-2-13B", "Llama-3-70B"]))
def test_gpus_needed_is_the_smallest_count_that_fits(cfg, gpu, model):
    cfg = {**cfg, "model": model, "gpu": gpu}
    need = core.evaluate(cfg)["gpus_needed"]
    if need == 0:
        assert not core.evaluate({**cfg, "n_gpus": 4096})["fits_train"]
        return
    assert core.evaluate({**cfg, "n_gpus": need})["fits_train"]
    if need > 1:
        assert not core.evaluate({**cfg, "n_gpus": need - 1})["fits_train"]


def test_offer_and_gpu_must_agree():
    # an explicit offer rents one GPU: naming another GPU is an error that lists that GPU's offers
    with pytest.raises(core.InputError, match=r'offer: "AWS p5.48xlarge" rents H100-SXM, but gpu is RTX-4090; offers for RTX-4090: .*RunPod'):
        core.evaluate(offer="AWS p5.48xlarge", gpu="RTX-4090")
    # an offer without a GPU sets the GPU; "auto" picks the GPU's cheapest on-demand offer
    assert core.resolve_inputs({"offer": "lambda 8x a100 80gb sxm"})["gpu"] == "A100-80GB-SXM"
    auto = core.resolve_inputs({"gpu": "RTX-4090"})["offer"]
    prices = [o["usd_per_gpu_hour"] for o in catalog.tables()["offers"].rows
              if o["gpu"] == "RTX-4090" and o["price_type"].startswith("on-demand")]
    assert catalog.tables()["offers"].row(auto)["usd_per_gpu_hour"] == min(prices)
    # in a sweep, only the bad row is named
    with pytest.raises(core.InputError, match=r"offer \(row 1\)"):
        core.evaluate(gpu=["H100-SXM", "RTX-4090"], offer=["AWS p5.48xlarge", "AWS p5.48xlarge"])
    with pytest.raises(core.InputError, match=r'offer: unknown "AWS p5.48xlage" \(did you mean AWS p5.48xlarge'):
        core.evaluate(offer="AWS p5.48xlage")


def test_arrays_of_whole_numbers_are_checked_by_their_range_as_every_value_alone_would_be():
    """validation.check_array reads an array of integers's lowest and highest values instead of testing each
    condition on every value: the same array back, and for a bad value the message of the check of every value
    (the first bad row named), for every numeric input, in range and out at both ends."""
    from gpu_tco.core.validation import check_array
    rng = np.random.default_rng(5)
    checked = 0
    for inp in core.INPUTS:
        if inp.kind == "choice":
            continue
        lo = -5 if inp.minimum is None else int(np.ceil(inp.minimum))
        hi = lo + 50 if inp.maximum is None else int(np.floor(inp.maximum))
        for low, high in ((lo, hi), (lo - 1, hi), (lo, hi + 1), (0, 1), (-1, 0)):
            if high < low or high - low > 2**40:
                continue
            arr = rng.integers(low, high + 1, 300, dtype=np.int64)
            arr[[7, 200]] = (low, high)  # both ends present
            outcomes = []
            for passed in (arr, arr.astype(float)):  # (floats: the check of every value)
                try:
                    outcomes.append(check_array(inp, passed))
                except core.InputError as err:
                    outcomes.append(str(err))
            if isinstance(outcomes[1], str):
                assert isinstance(outcomes[0], str) and outcomes[0] == outcomes[1], (inp.name, low, high)
            else:
                assert outcomes[0].dtype == outcomes[1].dtype and np.array_equal(outcomes[0], outcomes[1]), inp.name
            checked += 1
    assert checked > 200
    flags = [i for i in core.INPUTS if i.kind == "flag"]
    assert flags and np.array_equal(check_array(flags[0], np.array([True, False])), [1.0, 0.0])
