"""Small models: their catalog rows, the work that costs them their efficiency (activation traffic around the matrix
products, a fixed launch cost per layer), gpu-tco's own H200 rows, and published runs of small models on many GPUs held
out of the fit.

Sources:
- gpu-tco's own measurement, tools/measure/results/h200-2026-11-26b/small_train_rows.jsonl (NVIDIA H200, 2026-11-26,
  transformers 5.17 eager, SDPA, bf16, torch AdamW foreach, no recomputation, 2,048 tokens per sequence).
- Zhang, Zeng, Wang and Lu, "TinyLlama" README (Training Details, Blazingly Fast), 2023-09-04,
  https://github.com/jzhang38/TinyLlama/blob/026587c0fbc5cf756eba92e0220566550df66ca7/README.md: 24k tokens/s per
  A100-40G on 16 GPUs (56 % MFU, no activation checkpointing); Pythia-1.0B 4,830 A100 GPU hours on 300B tokens.
- Biderman, Schoelkopf, Anthony et al., "Pythia: A Suite for Analyzing Large Language Models Across Training and
  Scaling", 2023-04-03, https://arxiv.org/abs/2304.01373, and its configuration models/1B/pythia-1b.yml (64 GPUs).
- EleutherAI, Hugging Face model cards EleutherAI/pythia-160m, -410m, -1b (exact parameter counts), 2023.
"""
from __future__ import annotations

import math
import statistics

import pytest

from gpu_tco import core
from gpu_tco.core import calibration as cal

SMALL = [m for m in cal.load_measurements() if m.source == "gpu_tco_h200_small" and m.kind == "training speed"]
SMALL_MEMORY = [m for m in cal.load_measurements() if m.source == "gpu_tco_h200_small" and m.kind == "memory"]
HELD_OUT = {m.id: m for m in cal.load_measurements() if m.source in cal.HELD_OUT_SOURCES}
JOB = dict(method="full", gpu="H200-SXM", n_gpus=1, seq_len=2048, precision="bf16_pure", recompute="none",
           optimizer="adamw_foreach", framework="transformers")


def test_pythia_counts_every_bias_exactly():
    """GPT-NeoX has a bias on every linear layer and LayerNorm; the catalog rows give the model cards' exact counts."""
    published = {"Pythia-160M": 162_322_944, "Pythia-410M": 405_334_016, "Pythia-1B": 1_011_781_632}
    for name, count in published.items():
        assert core.evaluate(model=name)["params_total"] == count, name
    # SmolLM2 135M (Hugging Face, HuggingFaceTB/SmolLM2-135M config.json: 30 layers of 576, 9 heads, 3 KV heads, tied)
    assert core.evaluate(model="HuggingFaceTB/SmolLM2-135M")["params_total"] == 134_515_008


def test_narrow_models_lose_more_of_their_step_to_activation_traffic():
    """Per token the activation traffic grows with the widths (h, ffn) and the FLOPs with their product, so the share of
    a step the traffic takes falls as the model widens; the fixed launch cost per layer weighs on a short micro-batch."""
    share = {}
    for name in ("SmolLM2-135M", "Qwen2.5-0.5B", "TinyLlama-1.1B", "Llama-3.1-8B"):
        r = core.evaluate(JOB, model=name, micro_batch=8 if name != "Llama-3.1-8B" else 1)
        share[name] = r["activation_io_s_per_step"] / r["compute_s_per_step"]
    assert share["SmolLM2-135M"] > share["Qwen2.5-0.5B"] > share["TinyLlama-1.1B"] > share["Llama-3.1-8B"]
    assert share["SmolLM2-135M"] > 0.4 and share["Llama-3.1-8B"] < 0.15
    small, large = (core.evaluate(JOB, model="SmolLM2-135M", micro_batch=b) for b in (8, 32))
    assert small["layer_overhead_s_per_step"] == large["layer_overhead_s_per_step"] > 0
    assert small["step_work_slowdown"] > large["step_work_slowdown"]
    # a compiled or fused stack keeps the elementwise work inside its kernels but still moves every matrix product's
    # inputs and outputs (activation_bytes_per_dim), and launches no per-layer Python; a given MFU already holds it all
    fused = core.evaluate(JOB, model="SmolLM2-135M", micro_batch=8, framework="torchtitan")
    assert 0 < fused["activation_io_s_per_step"] < small["activation_io_s_per_step"] and fused["layer_overhead_s_per_step"] == 0
    given = core.evaluate(JOB, model="SmolLM2-135M", micro_batch=8, mfu=0.3)
    assert given["activation_io_s_per_step"] == given["layer_overhead_s_per_step"] == 0


def test_own_small_model_rows_within_28_percent():
    """gpu-tco's own full fine-tuning of eight small models on one H200: the estimate was 2.3x the measured tokens/s for
    SmolLM2 135M (median error of the ten rows 44 %) before the activation traffic and launch cost were modelled; now the
    median error is 13 % and every row within 27 % (11 % before the Hugging Face runs on A100s joined the fit and moved the
    H100's and recomputation's factors)."""
    assert len(SMALL) == 10 and not any(cal.in_fit(m) for m in SMALL)
    errors = {m.id: cal.predict(m) / m.value - 1 for m in SMALL}
    assert statistics.median(abs(e) for e in errors.values()) < 0.14, errors
    assert max(abs(e) for e in errors.values()) < 0.28, errors
    # the measured MFU falls with the hidden size, and so does the estimate: SmolLM2 135M (576) below Llama 3.2 1B (2048)
    def mfu(m, tokens_per_s):
        r = cal._evaluate(m)
        return tokens_per_s * r["flops_per_token_train"] / (r["train_tflops_per_gpu_peak"] * 1e12)
    by = {f"{m.inputs['model']}x{int(m.inputs['micro_batch'])}": m for m in SMALL}
    smol, llama = by["SmolLM2-135Mx8"], by["Llama-3.2-1Bx8"]
    assert mfu(smol, smol.value) < 0.6 * mfu(llama, llama.value)
    assert mfu(smol, cal.predict(smol)) < 0.7 * mfu(llama, cal.predict(llama))


def test_published_small_models_on_many_gpus_held_out():
    """Held out of the fit: TinyLlama 1.1B on 16 A100-40G at 24k tokens/s per GPU (fused kernels, FlashAttention 2, no
    recomputation) is estimated within 20 %; Pythia 1B on 64 A100-40G (GPT-NeoX 2022, fp16, activation checkpointing)
    took 4,830 GPU hours on 300B tokens, 35 % of the dense peak: the estimate is about 30 % short of that time
    (optimistic: its attention without FlashAttention and its older kernels are not modelled), within 35 %."""
    tiny, pythia = HELD_OUT["tinyllama-11b-16xa100"], HELD_OUT["pythia-1b-64xa100"]
    assert not cal.in_fit(tiny) and not cal.in_fit(pythia)
    assert cal.predict(tiny) / tiny.value - 1 == pytest.approx(0, abs=0.20)
    hours_error = cal.predict(pythia) / pythia.value - 1
    assert -0.35 < hours_error < 0
    r = cal._evaluate(pythia)
    measured_mfu = 3e11 * r["flops_per_token_train"] / (pythia.value * 3600 * r["train_tflops_per_gpu_peak"] * 1e12)
    assert measured_mfu == pytest.approx(0.35, abs=0.02)


def test_the_counted_activation_traffic_holds_the_published_small_models_held_out():
    """MosaicML's LLM Foundry benchmarks (README tables, 2023-10-19,
    https://github.com/mosaicml/llm-foundry/blob/061f2c7ce64e655100286584a7629e2a09f827ba/scripts/train/benchmarking/README.md):
    MPT 125M to 3B on 8 to 128 A100-40GB and 32 to 64 H100s run at 39 to 58 % MFU, the narrower the lower.  Without the
    activation traffic the factors fitted on the larger models overestimate them by 16 % (MPT 3B) to 68 % (MPT 125M).  The
    traffic as counted, not fitted (activation_bytes_per_dim 6: each matrix product's bf16 input and output, read or
    written once in the forward pass, by the input-gradient product and by the weight-gradient product), halves that
    error on every row, and on the rows it never saw: TinyLlama 1.1B on 16 A100s (Zhang et al., TinyLlama README,
    2023-09-04) within 12 %, Pythia 1B's 4,830 GPU hours on 64 A100s (Biderman et al. 2023, quoted there) within 35 % (it
    was within 30 % before full recomputation's factor, refitted with the Hugging Face runs on A100s, rose from 0.76 to 0.82).
    Fitted on the MPT rows the traffic would be 10-17 bytes: the elementwise work the fused stacks leave (not counted)."""
    rows = cal.load_measurements()
    assert cal.ACTIVATION_SOURCES == () and cal.ACTIVATION_BYTES_PRIOR == 6.0
    assert core.resolve_inputs({})["activation_bytes_per_dim"] == 6.0
    speed = cal.fit_speed(rows, 6.0)
    mpt = [m for m in rows if m.source == "llmfoundry_bench_a100"]
    assert len(mpt) == 10 and not any(cal.in_fit(m) for m in mpt)
    error = lambda m, x: math.exp(cal._activation_log_error(m, speed, x)) - 1  # noqa: E731
    before, counted = {m.id: error(m, 0.0) for m in mpt}, {m.id: error(m, 6.0) for m in mpt}
    assert min(before.values()) > 0.1 and before["mpt-125m-2k-128xa100-40"] > 0.55
    assert before["mpt-125m-2k-128xa100-40"] > before["mpt-350m-2k-128xa100-40"] > before["mpt-1b-2k-128xa100-40"]
    assert all(0 < counted[k] < 0.6 * before[k] for k in before)
    assert statistics.median(counted.values()) < 0.18  # 17 % (under 16 % before IBM's A100 runs joined the fit)
    fitted = cal.fit_activation(rows, speed, ("llmfoundry_bench_a100",))["activation_bytes_per_dim"]
    assert 10 < fitted < 17
    tiny, pythia = HELD_OUT["tinyllama-11b-16xa100"], HELD_OUT["pythia-1b-64xa100"]
    assert abs(cal.predict(tiny) / tiny.value - 1) < 0.12
    assert -0.35 < cal.predict(pythia) / pythia.value - 1 < 0


def test_own_small_model_memory_within_18_percent():
    """The same runs' allocator peaks (torch.cuda.max_memory_allocated): the memory model, whose eager activation factor
    (1.24) was measured on Llama-style layers, holds the Llama-style small models within 12 % (a little low: without
    recomputation their gradients, freed after each step, are not there at the peak, the end of the forward pass) and the
    GPT-NeoX ones (Pythia: one fused LayerNorm and a parallel residual, fewer tensors kept for the backward) within 18 %
    (high)."""
    assert len(SMALL_MEMORY) == 10 and not any(cal.in_fit(m) for m in SMALL_MEMORY)
    for m in SMALL_MEMORY:
        error = cal.predict(m) / m.value - 1
        if m.inputs["model"].startswith("Pythia"):
            assert 0 < error < 0.18, (m.id, error)
        else:
            assert -0.12 < error < 0, (m.id, error)
