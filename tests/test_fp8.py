"""FP8 training (precisions fp8, fp8_torchao, mxfp8), the H800 and A10G catalog rows, and what the FP8 rows of the
calibration set say.

Sources:
- NVIDIA, NeMo Framework performance summary, FP8 on DGX-H100 (container NeMo 24.07), 2024-09-09,
  https://github.com/NVIDIA/NeMo/blob/8e3d65dcfe3504689bfc5b6e67d502780aacad41/docs/source/performance/performance_summary.md
- NVIDIA, NeMo Framework performance summary (NeMo 25.04), FP8 on DGX-GB200, 2025,
  https://docs.nvidia.com/nemo-framework/user-guide/latest/performance/archive/25.04-performance-summary.html
- PyTorch (torchao), training workflow: float8 e2e benchmarks with torchtitan on 8x H100 (first published 2025-03-12),
  https://github.com/pytorch/ao/blob/b8708a2dd3a6a5150a198fbf3772ca9e968570ca/docs/source/workflows/training.md
- NVIDIA, Transformer Engine: Using FP8 with Transformer Engine; MXFP8 (one E8M0 scale per 32 values, Blackwell)
- DeepSeek-AI, Insights into DeepSeek-V3: Scaling Challenges and Reflections on Hardware for AI Architectures
  (ISCA 2025), https://arxiv.org/abs/2505.09343: the H800 is the H100 with NVLink cut from 900 to 400 GB/s
- Baseten, NVIDIA A10 vs A10G for ML model inference (2023): 24 GB at 600 GB/s, BF16 70 dense TFLOPS
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gpu_tco import core
from gpu_tco.addin.functions import call
from gpu_tco.core import calibration as cal
from gpu_tco.core.errors import InputError

ROOT = Path(__file__).resolve().parents[1]
GIB = 2 ** 30
ROWS = {m.id: m for m in cal.load_measurements()}
FP8_ROWS = [m for m in ROWS.values() if str(m.inputs.get("precision", "")).startswith(("fp8", "mxfp8"))]
# NeMo's DGX-H100 FP8 table: the H100 at 400 Gbit/s per GPU between nodes, Megatron's distributed optimizer
NEMO = dict(framework="megatron", gpu="H100-SXM", buy=1, own_fabric_gbps_per_gpu=400, optimizer="adamw", fused_loss=0, recompute="none",
            sharding="zero1", model="Llama-3-8B", method="full", n_gpus=8, seq_len=8192, micro_batch=1)
# torchao's float8 benchmark: 8x H100, batch 1, sequence 8,192, FSDP2, per-operator selective checkpointing
TORCHAO = dict(framework="torchtitan", gpu="H100-SXM", buy=1, model="Llama-3-8B", method="full", n_gpus=8, seq_len=8192, micro_batch=1,
               recompute="selective", sharding="zero3", fused_loss=0, optimizer="adamw")


def test_the_set_holds_published_fp8_runs_of_two_recipes():
    assert {m.source for m in FP8_ROWS} == {"nemo_perf_2407", "nemo_perf_2504", "torchao_training", "deepseekv3_2024"}
    assert {m.inputs["gpu"] for m in FP8_ROWS} == {"H100-SXM", "GB200", "H800-SXM"}
    assert {m.inputs["precision"] for m in FP8_ROWS} == {"fp8", "fp8_torchao"}
    assert {m.inputs["method"] for m in FP8_ROWS} == {"full", "lora"}
    assert ROWS["nemo-l3-8b-fp8"].measured == 12273 and ROWS["nemo-l2-70b-lora-fp8"].measured == 2621


@pytest.mark.parametrize("m", FP8_ROWS, ids=[m.id for m in FP8_ROWS])
def test_fp8_speeds_within_tolerance_of_their_published_rows(m):
    """Every published FP8 run within the training tolerance (25 %); the nearest 16-bit setting misses it by
    more than that tolerance on the pre-training rows, the gap the FP8 precision closes."""
    assert cal.in_fit(m)
    error = cal.predict(m) / m.value - 1
    assert abs(error) <= cal.TOLERANCE["training speed"], f"{m.id}: {error:+.1%}"
    if m.inputs["method"] == "full" and m.source == "nemo_perf_2407":
        as_bf16 = cal._evaluate(m, precision="bf16_mixed")["train_tokens_per_s"]
        assert as_bf16 / m.value - 1 < -cal.TOLERANCE["training speed"]


def test_the_speedup_is_on_the_linear_layers_only():
    """Transformer Engine and torchao run the transformer layers' linears in FP8; attention scores, the output layer,
    norms and the embedding stay in bf16.  At a fixed efficiency the speed-up is the FLOP mix's peak over the BF16
    peak, below the 2x of the FP8 tensor cores."""
    bf16 = core.evaluate(NEMO, precision="bf16_mixed", mfu=0.4)
    fp8 = core.evaluate(NEMO, precision="fp8", mfu=0.4)
    h, V, L, f = 4096, 128256, 32, 14336
    # Llama 3 8B: active linear weights = active parameters less the output matrix and the norms
    assert fp8["active_linear_params"] == fp8["params_active"] - V * h - (2 * L + 1) * h
    assert fp8["active_linear_params"] == L * (h * (4096 + 2 * 1024) + 4096 * h + 3 * h * f)
    share = 6 * fp8["active_linear_params"] / fp8["flops_per_token_train"]
    assert fp8["fp8_flops_share"] == pytest.approx(share) and 0.70 < share < 0.75
    peak = 1 / (share / 1978.9 + (1 - share) / 989.4)
    assert fp8["train_tflops_per_gpu_peak"] == pytest.approx(peak)
    assert fp8["train_tokens_per_s"] / bf16["train_tokens_per_s"] == pytest.approx(peak / 989.4)
    assert 1.5 < peak / 989.4 < 1.6
    # the same FLOPs are counted: FP8 changes the rate, not the work
    assert fp8["flops_per_token_train"] == bf16["flops_per_token_train"]


def test_torchao_float8_speedup_as_published():
    """torchao's table: tensorwise float8 with float8 all-gather 7,689.5 tokens/s against 6,150 in bf16 (+25.03 %)."""
    bf16 = core.evaluate(TORCHAO, precision="bf16_mixed")["train_tokens_per_s"]
    fp8 = core.evaluate(TORCHAO, precision="fp8_torchao")["train_tokens_per_s"]
    assert fp8 / bf16 == pytest.approx(7689.5 / 6150, rel=0.10)


def test_fp8_memory_as_the_recipes_keep_it():
    """torchao float8 with FSDP2 keeps no FP8 weight between uses and saves bf16 inputs: its published peak is the
    bf16 run's (47.77 against 47.65 GB).  Transformer Engine keeps an FP8 weight and its transpose for each linear
    (2 bytes per linear weight) and saves linear inputs in FP8; master weights and optimizer states are bf16_mixed's."""
    bf16 = core.evaluate(TORCHAO, precision="bf16_mixed")
    torchao = core.evaluate(TORCHAO, precision="fp8_torchao")
    assert torchao["peak_train_gib_per_gpu"] / bf16["peak_train_gib_per_gpu"] == pytest.approx(47.77 / 47.65, abs=0.01)
    job = dict(NEMO, sharding="none", n_gpus=1)
    b, te = (core.evaluate(job, precision=p) for p in ("bf16_mixed", "fp8"))
    assert te["weights_bytes_total"] - b["weights_bytes_total"] == 2 * te["linear_params"]
    assert te["optimizer_gib"] == b["optimizer_gib"] and te["gradients_gib"] == b["gradients_gib"]
    # activations without recomputation: per layer the QKV and MLP inputs (2 x s x h) and the inputs of the output and
    # down projections (s x (q_dim + ffn)) at 1 byte instead of 2
    s, h, L = 8192, 4096, 32
    saved = L * s * (2 * h + 4096 + 14336) * (2 - 1)
    assert (b["activations_gib"] - te["activations_gib"]) * GIB == pytest.approx(saved)
    mx = core.evaluate(dict(job, gpu="B200"), precision="mxfp8")
    assert mx["fp8_weight_copy_bytes"] == pytest.approx(2.0625 * mx["linear_params"])  # a 1-byte scale per 32 values


def test_gpus_without_fp8_are_refused_with_a_clear_message():
    """FP8 on an A100 (no FP8 tensor cores) is refused, as Transformer Engine and torchao refuse it, naming the GPUs
    that run it; MXFP8 needs a data-centre Blackwell-class part; QLoRA's NF4 base is multiplied in 16 bit."""
    with pytest.raises(InputError) as err:
        core.evaluate(NEMO, gpu="A100-80GB-SXM", precision="fp8")
    text = str(err.value)
    assert text.startswith('precision: "fp8" needs FP8 tensor cores, which A100-80GB-SXM does not have')
    assert "bf16_mixed" in text and "H100-SXM" in text and "\n" not in text
    with pytest.raises(InputError, match=r"block-scaled \(MX\) FP8 .* H100-SXM is not; use fp8"):
        core.evaluate(NEMO, precision="mxfp8")
    with pytest.raises(InputError, match="qlora keeps its base weights in 4 bits"):
        core.evaluate(NEMO, method="qlora", precision="fp8")
    b200 = core.evaluate(NEMO, gpu="B200", precision="mxfp8")
    assert b200["train_precision_supported"] and b200["fp8_linears_active"]
    assert b200["train_tflops_per_gpu_peak"] == pytest.approx(1 / (b200["fp8_flops_share"] / 4500 + (1 - b200["fp8_flops_share"]) / 2250))
    # a sweep does not stop at the first GPU without FP8: those options are marked instead
    sweep = core.evaluate(dict(NEMO, gpu=["H100-SXM", "A100-80GB-SXM", "L40S", "RTX-3090"]), precision="fp8",
                          outputs=("train_precision_supported", "option_ok"))
    assert list(sweep["train_precision_supported"]) == [True, False, True, False]
    assert not sweep["option_ok"][1] and not sweep["option_ok"][3]


def test_the_planner_says_which_gpus_lack_fp8():
    result = core.plan({"model": "Llama-3-8B", "method": "full", "precision": "fp8", "tokens": 1e8},
                       gpus=["A100-80GB-SXM", "H100-SXM"], include_buy=False)
    a100 = [o for o in result["options"] if o["gpu"] == "A100-80GB-SXM" and o["n_gpus"]]
    assert a100 and not any(o["ok"] for o in a100)
    assert all(any(r.startswith("GPU lacks the precision") for r in o["reasons"]) for o in a100)
    assert result["recommended"]["gpu"] == "H100-SXM"


def test_h800_nvlink_is_400_gb_per_s_in_the_interconnect_model():
    """The H800 is the H100 SXM with NVLink cut from 900 to 400 GB/s (both directions): the same compute, 200 GB/s
    per direction inside a server, so tensor-parallel traffic takes 2.25x as long."""
    job = dict(model="Llama-3-70B", method="full", n_gpus=8, tensor_parallel=8, seq_len=4096, micro_batch=1, buy=1)
    h100, h800 = core.evaluate(job, gpu="H100-SXM"), core.evaluate(job, gpu="H800")
    assert core.resolve_inputs({"gpu": "H800"})["gpu"] == "H800-SXM"
    assert h100["intra_node_gb_per_s"] == 450 and h800["intra_node_gb_per_s"] == 200
    assert h800["compute_s_per_step"] == h100["compute_s_per_step"]
    assert h800["comm_s_per_step"] / h100["comm_s_per_step"] == pytest.approx(450 / 200)
    assert h800["train_tokens_per_s"] <= h100["train_tokens_per_s"]
    gpus = core.catalog.tables()["gpus"]
    assert gpus.row("H800-PCIe")["nvlink_gbps"] == 400 and gpus.row("H800-SXM")["default_mfu"] == gpus.row("H100-SXM")["default_mfu"]


def test_a10g_is_its_own_card():
    """AWS's A10G has the A10's 24 GB at 600 GB/s but 70 dense BF16 TFLOPS, not 125."""
    gpus = core.catalog.tables()["gpus"]
    assert gpus.row("A10G")["name"] == "A10G" and gpus.row("A10")["name"] == "A10"
    assert (gpus.row("A10G")["memory_gib"], gpus.row("A10G")["memory_bandwidth_gbps"], gpus.row("A10G")["bf16_dense_tflops"]) == (24, 600, 70)
    offers = core.catalog.tables()["offers"]
    assert all(o["gpu"] == "A10G" for o in offers.rows if o["instance"].startswith("g5."))
    from gpu_tco.core.price_refresh import SIMPLE_NAMES
    assert SIMPLE_NAMES["A10G"] == "A10G"


@pytest.mark.slow  # over 0.45 s
def test_fp8_from_the_command_line_python_excel_and_the_form():
    """One catalog row, every door: the CLI (a real subprocess), the Python API, an Excel function, the form's
    choices (the precisions catalog)."""
    args = ["--model", "Llama-3-8B", "--method", "full", "--gpu", "H100-SXM", "--n-gpus", "8", "--seq-len", "8192"]
    ok = subprocess.run([sys.executable, "-m", "gpu_tco", "estimate", "--precision", "fp8", "--json", *args],
                        capture_output=True, text=True, cwd=ROOT)
    assert ok.returncode == 0, ok.stderr
    q = json.loads(ok.stdout)["quantities"]
    expected = core.evaluate(model="Llama-3-8B", method="full", gpu="H100-SXM", n_gpus=8, seq_len=8192, precision="fp8")
    assert q["train_tokens_per_s"] == pytest.approx(expected["train_tokens_per_s"]) and q["fp8_flops_share"] > 0.7
    refused = subprocess.run([sys.executable, "-m", "gpu_tco", "estimate", "--precision", "fp8", "--gpu", "A100"],
                             capture_output=True, text=True, cwd=ROOT)
    assert refused.returncode != 0 and "Traceback" not in refused.stderr
    assert "needs FP8 tensor cores" in refused.stderr and len(refused.stderr.strip().splitlines()) == 1
    # Excel: GPU_TRAIN_HOURS(model, tokens, gpu, n_gpus, method, mfu, epochs, precision)
    hours = call("GPU_TRAIN_HOURS", "Llama-3-8B", 1e9, "H100-SXM", 8, "full", 0, 1, "fp8")
    assert hours == pytest.approx(core.evaluate(model="Llama-3-8B", tokens=1e9, gpu="H100-SXM", n_gpus=8, method="full",
                                                precision="fp8")["train_hours"])
    assert hours < call("GPU_TRAIN_HOURS", "Llama-3-8B", 1e9, "H100-SXM", 8, "full", 0, 1, "bf16_mixed")
    cell = call("GPU_TRAIN_HOURS", "Llama-3-8B", 1e9, "A100", 8, "full", 0, 1, "fp8")
    assert isinstance(cell, str) and "FP8 tensor cores" in cell
    # the form lists the precisions catalog in its precision field and takes fp8 as typed
    from gpu_tco.gui import model as form
    assert {"fp8", "fp8_torchao", "mxfp8"} <= set(core.catalog.tables()["precisions"].names)
    state = form.FormState()
    assert state.set_text("precision", "fp8") is None and state.values["precision"] == "fp8"


def test_fp8_runs_with_pipeline_context_and_expert_parallelism():
    """The two published FP8 runs that need every parallel degree: NVIDIA's NeMo 24.07 DGX-H100 table, Llama 3 70B on
    64 H100 with TP 4, PP 4, CP 2 and 5 model chunks per GPU, 1,524 tokens/s per GPU (2024-09-09,
    https://github.com/NVIDIA/NeMo/blob/8e3d65dcfe3504689bfc5b6e67d502780aacad41/docs/source/performance/performance_summary.md);
    DeepSeek-AI, "DeepSeek-V3 Technical Report" (arXiv 2412.19437, 2024-12, Table 1 and section 3): 2,664K H800
    GPU-hours for 14.8T tokens on 2,048 H800 with PP 16, EP 64 and ZeRO-1 in FP8.  Both run at their layouts (data
    parallel 2 and 128), are in the fit, and land within the training tolerance; the H800 row informs the H100's
    efficiency (one chip) while its NVLink of 400 GB/s is its own."""
    nemo, deepseek = ROWS["nemo-l3-70b-fp8"], ROWS["deepseek-v3-pretrain"]
    assert nemo.measured == 1524 and deepseek.measured == 2664000
    r = cal._evaluate(nemo)
    assert (r["tensor_parallel"], r["pipeline_parallel"], r["context_parallel"], r["data_parallel_size"]) == (4, 4, 2, 2)
    d = cal._evaluate(deepseek)
    assert (d["pipeline_parallel"], d["expert_parallel"], d["data_parallel_size"]) == (16, 64, 128)
    assert d["fp8_linears_active"] and d["pipeline_bubble_fraction"] > 0
    for m in (nemo, deepseek):
        assert cal.in_fit(m)
        assert abs(cal.predict(m) / m.value - 1) <= cal.TOLERANCE["training speed"], m.id
    assert cal._train_features(deepseek).get("gpu:H100-SXM") == 1.0
    gpus = core.catalog.tables()["gpus"]
    assert gpus.row("H800-SXM")["default_mfu"] == gpus.row("H100-SXM")["default_mfu"]
    assert gpus.row("H800-SXM")["nvlink_gbps"] == 400
