"""Peaks per accumulate type (GeForce FP16 with FP16 accumulation, which llama.cpp uses) and the likely training hours
in Excel cells.

Sources (full citations in core/references.py):
- NVIDIA, NVIDIA Ada GPU Architecture (whitepaper v2.1, 2023), Appendix A,
  https://images.nvidia.com/aem-dam/Solutions/geforce/ada/nvidia-ada-gpu-architecture.pdf: GeForce RTX 4090 peak FP16
  tensor TFLOPS with FP16 accumulate 330.3, with FP32 accumulate 165.2 (dense).
- NVIDIA, NVIDIA Ampere GA102 GPU Architecture (whitepaper, 2021),
  https://www.nvidia.com/content/PDF/nvidia-ampere-ga-102-gpu-architecture-whitepaper-v2.pdf: GeForce RTX 3090 142 and 71.
- NVIDIA, NVIDIA RTX Blackwell GPU Architecture (whitepaper, 2025), Table 3,
  https://images.nvidia.com/aem-dam/Solutions/geforce/blackwell/nvidia-rtx-blackwell-gpu-architecture.pdf: GeForce RTX 5090
  419 and 209.5.
- ggml-org, llama.cpp ggml/src/ggml-cuda/ggml-cuda.cu (2026),
  https://github.com/ggml-org/llama.cpp/blob/00108827d87949b538ad1821f81a6b111827fcda/ggml/src/ggml-cuda/ggml-cuda.cu:
  16-bit and dequantized weights multiply through cuBLAS with CUBLAS_COMPUTE_16F.
"""
import csv
from pathlib import Path

import pytest

from gpu_tco import core
from gpu_tco.addin.functions import FUNCTIONS, MAX_TEXT, call

ROOT = Path(__file__).resolve().parent.parent
GEFORCE_FP16_ACCUMULATE = {"RTX-3090": 142.0, "RTX-4090": 330.3, "RTX-5090": 419.0}


def test_geforce_cards_list_their_fp16_accumulate_rate_with_its_source():
    rows = {r["name"]: r for r in csv.DictReader(open(ROOT / "core" / "data" / "gpus.csv", encoding="utf-8"))}
    for name, row in rows.items():
        if name in GEFORCE_FP16_ACCUMULATE:
            rate = float(row["fp16_accumulate_dense_tflops"])
            assert rate == GEFORCE_FP16_ACCUMULATE[name]
            assert rate == pytest.approx(2 * float(row["bf16_dense_tflops"]), rel=0.01), name  # twice the FP32-accumulate rate
            assert "FP16 accumulate" in row["source"], name
        else:  # data-centre and workstation cards run FP16 accumulation at their one 16-bit rate
            assert row["fp16_accumulate_dense_tflops"] == "", name


@pytest.mark.parametrize("gpu,ratio", [("RTX-4090", 2.0), ("RTX-3090", 2.0), ("H100-SXM", 1.0), ("RTX-6000-Ada", 1.0)])
def test_llamacpp_prefill_runs_at_the_fp16_accumulate_peak(gpu, ratio):
    job = dict(model="Llama-3-8B", gpu=gpu, n_gpus=1, context_tokens=2048, weights_dtype="bf16")
    vllm, llamacpp = core.evaluate(job, engine="vllm"), core.evaluate(job, engine="llamacpp")
    assert vllm["infer_tflops_per_gpu_peak"] == core.row_of(core.resolve_inputs({"gpu": gpu}), "gpu")["bf16_dense_tflops"]
    # twice as fast on GeForce (the whitepapers' two rates), the same elsewhere
    assert llamacpp["prefill_tokens_per_s"] / vllm["prefill_tokens_per_s"] == pytest.approx(ratio, rel=1e-3)
    # weights with their own tensor-core rate (FP8 on the RTX 4090) keep it: the accumulate type concerns 16-bit matmuls
    fp8 = dict(job, gpu="RTX-4090", weights_dtype="fp8")
    assert core.evaluate(fp8, engine="llamacpp")["infer_tflops_per_gpu_peak"] == \
        core.evaluate(fp8, engine="vllm")["infer_tflops_per_gpu_peak"]


def test_training_keeps_the_fp32_accumulate_peak_on_geforce():
    """PyTorch's matmuls accumulate in FP32: a training job on an RTX 4090 is timed at 165.2, whatever the engine input."""
    r = core.evaluate(dict(model="Llama-3-8B", gpu="RTX-4090", n_gpus=1, method="qlora", engine="llamacpp"))
    assert r["train_tflops_per_gpu_peak"] == 165.2


def test_excel_gives_the_likely_training_hours():
    args = ("Llama-3-70B", 1e8, "H100-SXM", 8, "lora")
    hours, low, high = (call(name, *args) for name in ("GPU_TRAIN_HOURS", "GPU_TRAIN_HOURS_LOW", "GPU_TRAIN_HOURS_HIGH"))
    r = core.evaluate(dict(model="Llama-3-70B", tokens=1e8, gpu="H100-SXM", n_gpus=8, method="lora"))
    assert (low, high) == (pytest.approx(r["train_hours_likely_low"], rel=1e-12), pytest.approx(r["train_hours_likely_high"], rel=1e-12))
    assert low < hours < high
    band = core.row_of(core.resolve_inputs({}), "framework")["speed_band_pct"] / 100
    assert high / hours == pytest.approx(1 + band) and hours / low == pytest.approx(1 + band)
    # the framework argument moves the range (torchtune's band is its own)
    n = len(FUNCTIONS["GPU_TRAIN_HOURS_HIGH"].args)
    tt = [*args] + [None] * (n - len(args) - 1) + ["torchtune"]
    assert call("GPU_TRAIN_HOURS_HIGH", *tt) / call("GPU_TRAIN_HOURS", *tt) != pytest.approx(1 + band)
    # bad input: one short text in the cell, naming the field
    cell = call("GPU_TRAIN_HOURS_LOW", "Llama-3-70B", 1e8, "H1000", 8, "lora")
    assert isinstance(cell, str) and "gpu" in cell and len(cell) <= MAX_TEXT
    for name in ("GPU_TRAIN_HOURS_LOW", "GPU_TRAIN_HOURS_HIGH"):
        assert len(FUNCTIONS[name].doc) <= 255
