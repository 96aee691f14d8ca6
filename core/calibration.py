"""The calibration set: published measurements, the fit of the model's efficiency defaults on them,
and leave-one-source-out errors.

``data/measurements.csv`` holds published measurements (training throughput, pre-training GPU-hours,
peak memory, decode and prefill speed), each with the recipe it was measured under, the source's URL
and date.  ``fit`` derives the defaults the time model uses from them:

- training: the MFU of each measured GPU (gpus.csv ``default_mfu``), the method factor (methods.csv
  ``mfu_factor``), the recomputation factor (recomputes.csv ``mfu_factor``), the FP8 factor of each
  recipe (precisions.csv ``fp8_mfu_factor``), the mixture-of-experts factor and the large-cluster factor,
  by least squares on the logarithm of measured / modelled speed (the time model is a product of these factors, so the fit is linear in their logarithms);
- decode: ``decode_bandwidth_efficiency`` (geometric mean over the decode rows);
- prefill: ``prefill_mfu`` and ``moe_prefill_efficiency``.

The efficiency is model FLOPs utilisation as PaLM defines it (Chowdhery et al. 2022, Appendix B):
model FLOPs per token are (6 full | 4 LoRA) x active parameters + 12 x layers x sequence x attention
width; recomputation is not counted as work, it lowers the efficiency (the recomputation factor).

A row is left out of the fit when the speed it reports needs more than ``EXECUTED_LIMIT`` of the GPU's
dense peak counting the FLOPs its stated recipe executes (recomputation included): no published
end-to-end training run comes close, so the recipe or the token count is not what the source says.
The excluded rows stay in the file and the tests check that the rule, not a choice, excludes them.

Parameters a fit cannot see (a source left out) fall back to ``PRIORS``, the values the catalogs
held before calibration: the fit is ridge-regularised towards them with a small weight.
"""
from __future__ import annotations

import csv
import math
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Mapping

import numpy as np

from . import codecache
from .errors import InputError
from .formulas import LARGE_CLUSTER_GPUS

DATA = Path(__file__).resolve().parent / "data"
MEASUREMENTS_PATH = DATA / "measurements.csv"
EXECUTED_LIMIT = 0.80
RIDGE = 1e-6  # weight of the priors in the fit: tiny, the data decide wherever they can
# before calibration: the GPU catalog's MFU by class, and factors of 1
PRIORS = {"gpu:RTX-4090": 0.30, "gpu:RTX-A6000": 0.35, "gpu:A100-80GB-SXM": 0.40, "gpu:H100-SXM": 0.40, "gpu:GB200": 0.40,
          "method:lora": 1.0, "method:qlora": 1.0, "recompute:full": 1.0, "recompute:selective": 1.0,
          "precision:fp8": 1.0, "precision:fp8_torchao": 1.0,
          "moe_train_efficiency": 1.0, "large_cluster_mfu_factor": 1.0,
          "decode_bandwidth_efficiency": 0.8, "prefill_mfu": 0.5, "moe_prefill_efficiency": 1.0,
          "framework:torchtune": 1.0}
# Framework speed factors (frameworks.csv speed_factor), relative to torchtitan's (the reference: 1).  Fitted only for
# torchtune, whose rows on the A100 (besides its GeForce and RTX A6000 rows) measure a GPU that other sources measured too;
# two sources fit it (the README's September 2024 table and its November 2024 'Optimization flags' table), so left out
# one, the other sets it (docs/training.md, "Calibration per framework").  Megatron's factor would
# trade against the mixture-of-experts factor (its sources measured most MoE rows), composer's one for one against the
# H100's MFU; they keep the catalog's 1, and transformers gpu-tco's own H100/H200 measurement (docs/training.md), which
# Answer.AI's FSDP + QLoRA runs over NVLink (A100 40GB, H100) check as a held-out source.  The
# rows' errors are reported per framework (leave_one_source_out "by_framework").
FITTED_FRAMEWORKS = ("torchtune",)
# gpu-tco's own runs (tools/measure/, one GPU, transformers + PEFT eager) check the model and set the transformers row's
# conventions and costs (frameworks.csv: speed factor, eager activations, LoRA and QLoRA costs); they do not enter the fit:
# one GPU at micro-batch 1 to 4 would pull the method and recomputation factors every source shares towards one eager stack
# gpu-tco's own torchtune runs (tools/measure/torchtune_measure.py, one H100) set nothing: they check the torchtune factor,
# which the README's 2024 tables set, held out (docs/training.md, "torchtune on one H100")
OWN_TORCHTUNE_SOURCES = ("gpu_tco_h100_torchtune",)
# ... and its runs on one H200, LoRA beside full fine-tuning of the same models, set torchtune's LoRA adapter costs
# (frameworks.csv lora_bytes_per_dim, lora_op_overhead_us): checks, not held out
SET_TORCHTUNE_SOURCES = ("gpu_tco_h200_torchtune",)
# gpu-tco's own Unsloth runs (tools/measure/unsloth_measure.py, one H100) set nothing either: they check Unsloth's row of
# frameworks.csv (speed factor 1, fused LoRA and loss kernels), which no measured row had set (docs/training.md, "Unsloth
# on one H100")
OWN_UNSLOTH_SOURCES = ("gpu_tco_h100_unsloth",)
# gpu-tco's own DeepSpeed runs (tools/measure/deepspeed_measure.py, one H100 or H200) set nothing: DeepSpeed's row takes the
# eager Hugging Face model's costs from transformers' row and its step's gradient copies from DeepSpeed's source
# (docs/training.md, "DeepSpeed on one H100")
OWN_DEEPSPEED_SOURCES = ("gpu_tco_deepspeed",)
# LoRA through transformers + PEFT on one H200 (fp32 against bf16 adapters, with and without recomputation, beside full
# fine-tuning, and with six sets of adapted layers), measured after the model counted fp32 adapters' states; the first
# set against figures computed before the runs, nothing set from any of them
OWN_TRANSFORMERS_SOURCES = ("gpu_tco_h200_adapter_pairs",)
# ... except its two Llama 3.2 1B ZeRO-3 runs, which beside the ZeRO-2 runs of the same settings set DeepSpeed's ZeRO-3
# hook cost (frameworks.csv zero3_layer_overhead_us, zero3_recompute_overhead_us): checks, not held out
SET_DEEPSPEED_SOURCES = ("gpu_tco_deepspeed_zero3",)
# own runs that nothing is fitted on or set from: their errors are held-out errors of their framework
HELD_OUT_OWN_SOURCES = (*OWN_TORCHTUNE_SOURCES, *OWN_UNSLOTH_SOURCES, *OWN_DEEPSPEED_SOURCES, *OWN_TRANSFORMERS_SOURCES)
OWN_SOURCES = ("gpu_tco_h200_2026", "gpu_tco_h200_lora_2026", "gpu_tco_h200_serve", "gpu_tco_h200_small", *HELD_OUT_OWN_SOURCES, *SET_DEEPSPEED_SOURCES,
               *SET_TORCHTUNE_SOURCES)
# Published sources that check the model without fitting it, and why.  (torchtune's README 'Optimization flags' table, one
# A100 with Alpaca packed into 4,096-token sequences, was one until LoRA's work was counted as it runs: recomputation
# repeats a third of LoRA's work, not a quarter (lora_recompute_factor), the adapters' own products count 6 FLOPs per
# adapter weight (rank 64 there) and torchtune's adapters cost what gpu-tco's own H200 runs say.
# Before that its LoRA rows, 8-10 % slower than modelled beside full fine-tunes 18-22 % faster, pulled the LoRA factors
# every framework shares; it is now fitted, a second torchtune source beside the README's September 2024 table.  Left a
# check with recomputation counted, the fit puts the RTX 4090's efficiency above 1; fitted, transformers' held-out error
# rises (docs/training.md, "Calibration per framework").)
# llama.cpp's January 2024 llama-bench table on one RTX 4090 (pull request 4766) checks the prefill and decode model on a
# GeForce card held out: its F16 prompt runs through cuBLAS with FP16 accumulation at 45 % of that peak, its Q8_0 and Q4_0
# prompts (dequantised first) at 31-32 %; the model has one prefill efficiency for every weight format, so fitted, that
# spread (1.4x) would go into the prefill efficiency every engine carries.
CHECK_SOURCES = {"llamacpp_4766": "llama.cpp on one GeForce RTX 4090, held out (a check)"}
# Sources whose speed rows are fitted and whose memory rows check, a choice by source: torchtune's 'Optimization flags'
# table measured full fine-tuning without the optimizer step in the backward pass at 25 GiB, where the model's peak is the
# optimizer step with foreach AdamW's moment-sized temporary (+20 %; 24.9 GiB is the weights, gradients and states alone,
# as a fused AdamW leaves them): a question of the recipe's optimizer, not of a framework's constants.  Its other two
# memory rows go with it: the table's memory is one check.
# IBM's fms-acceleration benchmark (the Hugging Face Trainer with TRL and PEFT on A100s, February 2025) reports rank 0's
# memory as the largest sum of the Trainer's stage probes, and on one GPU its QLoRA runs take TRL's partial casts (PEFT's
# prepare_model_for_kbit_training, then the embeddings and output layer back to bf16, the norms kept fp32), between
# gpu-tco's two conventions (docs/training.md, "Hugging Face transformers on A100s").
MEMORY_CHECK_SOURCES = {"torchtune_readme_flags": "one A100, full fine-tuning's peak phase (a check)",
                        "fms_acceleration_bench": "A100 80GB, rank 0's memory from the Trainer's stage probes (a check)"}

def _check_reason(m: Measurement) -> str | None:
    """Why a row of a published source checks the model rather than fitting it: its source's reason (CHECK_SOURCES,
    MEMORY_CHECK_SOURCES) or its own (measurements.csv column check)."""
    if m.source in CHECK_SOURCES:
        return CHECK_SOURCES[m.source]
    if m.check:
        return f"{m.check} (a check)"
    return MEMORY_CHECK_SOURCES.get(m.source) if m.kind == "memory" else None


CHECK_KINDS = ("training speed", "memory", "decode speed", "prefill speed")
# Published runs of small models on many GPUs, kept out of the fit to check it held out (docs/training.md, "Small models
# on large clusters"): TinyLlama 1.1B on 16 A100s and Pythia 1B on 64 (both read in the TinyLlama README)
HELD_OUT_SOURCES = ("tinyllama_readme", "llmfoundry_bench_a100")

TRAIN_QUANTITIES = ("train_tokens_per_s", "train_gpu_hours")
MEMORY_QUANTITIES = ("allocator_peak_train_gib", "peak_train_gib_per_gpu", "reserved_peak_train_gib")
KIND = {"train_tokens_per_s": "training speed", "train_gpu_hours": "training speed",
        "allocator_peak_train_gib": "memory", "peak_train_gib_per_gpu": "memory", "reserved_peak_train_gib": "memory",
        "decode_tokens_per_s_per_seq": "decode speed", "prefill_tokens_per_s": "prefill speed"}
TOLERANCE = {"training speed": 0.25, "decode speed": 0.25, "prefill speed": 0.25, "memory": 0.12}
INPUT_COLUMNS = ("model", "method", "gpu", "n_gpus", "seq_len", "micro_batch", "precision", "recompute", "sharding",
                 "optimizer", "fused_loss")

# Serving measurements: published results of engines that batch continuously (vLLM, SGLang, TensorRT-LLM, MLPerf
# Inference submissions).  decode_tokens_per_s is the output tokens per second of the whole measured system under
# load; ttft_ms the time to the first token and tpot_ms the time per output token after it (the mean, or the median
# where the row's recipe says so).  A row's n_gpus are the GPUs of one replica (its tensor-parallel group, as the
# engine reads n_gpus for inference) and ``replicas`` (other_inputs) how many such replicas the system ran.  The workload is in other_inputs:
# ``prompt_tokens`` and ``output_tokens`` (means per request), ``batch`` (the concurrency the client held) or
# ``offline=1`` (every request queued at once: the engine batches as many as its scheduler and KV cache allow),
# ``requests_per_s`` (the arrival rate of a server run) and ``requests`` (how many were sent).
# These rows load and are checked like the others (load_measurements(include_serving=True), serving_measurements());
# the fit and the error tables above use the other kinds until the serving model is fitted on them.
SERVING_KIND = {"decode_tokens_per_s": "serving throughput", "ttft_ms": "serving latency", "tpot_ms": "serving latency"}
KIND.update(SERVING_KIND)
TOLERANCE.update({"serving throughput": 0.25, "serving latency": 0.30})
SERVING_KINDS = tuple(dict.fromkeys(SERVING_KIND.values()))
# workload settings of a serving row; checked here (a number > 0, offline 0 or 1) and as inputs once they are declared
SERVING_SETTINGS = ("prompt_tokens", "output_tokens", "offline", "requests_per_s", "requests", "replicas")


# The training framework each source ran (the frameworks catalog name the row is evaluated under, unless its other_inputs
# name one): the conventions of its memory and its speed factor.  Meta's and DeepSeek's in-house pre-training stacks have
# no row of their own: they are evaluated as torchtitan (the reference, speed factor 1: PyTorch-native 3D/4D parallelism with
# fp32 master weights and states, what torchtitan was built to show); NeMo AutoModel runs FSDP2 as torchtitan does.
FRAMEWORK_OF = {"torchtune": "torchtune", "torchtune 0.6.1 (gpu-tco's own run)": "torchtune",
                "unsloth 2026.10.9 (gpu-tco's own run)": "unsloth", "deepspeed 0.19.8 (gpu-tco's own run)": "deepspeed", "torchtitan": "torchtitan", "torchtitan + torchao (torch.compile, FSDP2)": "torchtitan",
                "LLM Foundry (Composer)": "composer", "Hugging Face + FlashAttention 2": "transformers",
                "fsdp_qlora (FSDP + bitsandbytes)": "transformers", "fms-hf-tuning (transformers + TRL + PEFT)": "transformers",
                "transformers 5.17 + PEFT 0.21 (gpu-tco's own run)": "transformers",
                "DeepSeek-AI (HAI-LLM)": "torchtitan",
                "Meta (Llama 2)": "torchtitan", "Meta (Llama 3)": "torchtitan", "NeMo AutoModel (FSDP2 + DeepEP)": "torchtitan",
                "NeMo AutoModel (LoRA, TE + Triton)": "torchtitan",
                "Megatron Bridge (NeMo 25.11)": "megatron", "Megatron Bridge (NeMo 26.02)": "megatron",
                "NeMo 24.07 (Megatron-Core + Transformer Engine)": "megatron",
                "NeMo 25.04 (Megatron-Core + Transformer Engine)": "megatron",
                "lit-gpt (TinyLlama: FSDP, FlashAttention 2, fused kernels)": "torchtitan",
                "GPT-NeoX (Pythia: Megatron-LM layers on DeepSpeed)": "megatron"}


def _check_serving_settings(inputs: dict, line: int) -> dict:
    """The row's inputs without the serving settings no input declares yet (those are checked here)."""
    from .inputs import BY_NAME
    for key in SERVING_SETTINGS:
        if key in inputs and key not in BY_NAME:
            value = inputs[key]
            ok = value in (0, 1) if key == "offline" else isinstance(value, float) and 0 < value < 1e12
            if not ok:
                raise InputError(f"measurements.csv line {line}: {key}", value,
                                 "allowed: 0 or 1" if key == "offline" else "allowed: a number > 0")
    return {k: v for k, v in inputs.items() if k not in SERVING_SETTINGS or k in BY_NAME}


@dataclass(frozen=True)
class Measurement:
    id: str
    source: str  # a key of core.references
    framework: str
    quantity: str
    measured: float
    unit: str
    inputs: dict = field(hash=False)
    recipe: str = ""
    date: str = ""
    bound: str = ""  # "at_most": the true value is at most ``measured`` and close to it (a card's memory at the longest context that ran)
    # why this row checks the model rather than fitting it, when the row rests on something the model does not time
    # (paged optimizer states spilling over PCIe; fp32 hidden states from TRL's fp32 norms): its recipe says more
    check: str = ""

    @property
    def kind(self) -> str:
        return KIND[self.quantity]

    @property
    def target(self) -> float:
        """What the fit aims at: the value, or for an upper bound the middle of the band [1 - tolerance, 1] x value."""
        return self.value * (1 - TOLERANCE[self.kind] / 2 if self.bound == "at_most" else 1)

    @property
    def value(self) -> float:
        """The measurement in the unit of the quantity it is compared with (tokens/s of the whole job, not per GPU)."""
        return self.measured * (self.inputs["n_gpus"] if self.unit == "tokens/s/GPU" else 1)


def _parse_number(text: str):
    try:
        return float(text)
    except ValueError:
        return text


def serving_measurements(path=None) -> list[Measurement]:
    """The serving rows of the calibration set (kinds SERVING_KINDS)."""
    return [m for m in load_measurements(path, include_serving=True) if m.kind in SERVING_KINDS]


def load_measurements(path=None, include_serving: bool = False) -> list[Measurement]:
    """The calibration set, one Measurement per row of measurements.csv; the serving rows (SERVING_KINDS) only
    with ``include_serving`` (every row is checked either way)."""
    from . import engine  # the rows' inputs are checked like any other inputs
    rows = []
    with open(path or MEASUREMENTS_PATH, newline="", encoding="utf-8") as fh:
        for line, row in enumerate(csv.DictReader(fh), start=2):
            inputs = {k: _parse_number(row[k]) for k in INPUT_COLUMNS if row[k] != ""}
            for pair in filter(None, row["other_inputs"].split(";")):
                key, _, value = pair.partition("=")
                inputs[key.strip()] = _parse_number(value.strip())
            if row["framework"] in FRAMEWORK_OF and "framework" not in inputs:
                inputs["framework"] = FRAMEWORK_OF[row["framework"]]
            if row["quantity"] not in KIND:
                raise InputError(f"measurements.csv line {line}: quantity", row["quantity"], f"allowed: {', '.join(KIND)}")
            try:  # an unknown name or a bad value fails here, naming the line and the field
                engine.resolve_inputs(_check_serving_settings(inputs, line))
            except InputError as err:
                if str(err.field).startswith("measurements.csv"):
                    raise
                raise InputError(f"measurements.csv line {line}: {err.field}", err.value, err.allowed, verb=err.verb) from None
            if KIND[row["quantity"]] in SERVING_KINDS and not include_serving:
                continue
            rows.append(Measurement(row["id"], row["source"], row["framework"], row["quantity"], float(row["measured"]),
                                    row["unit"], inputs, row["recipe"], row["date"], row["bound"],
                                    row["check"]))
    return rows


def _evaluate(m: Measurement, **overrides) -> Mapping:
    """The engine's result for the row, with the row's resolved inputs beside it (names, not aliases), read-only.  Kept
    per catalog snapshot, row and overrides: a fit asks for the same rows and probes again and again, and leaving each
    source out refits once per source (a new snapshot, after a rewrite of the catalogs, starts afresh)."""
    from . import catalog
    key = ("calibration evaluation", m, tuple(sorted(overrides.items())))
    return catalog.snapshot().derived(key, lambda: MappingProxyType(_evaluate_now(m, overrides)))


def _evaluate_now(m: Measurement, overrides: dict) -> dict:
    """``_evaluate`` without keeping the result: for the memory fit's trial values, each asked for once."""
    from . import engine
    # a measurement ran on the cluster its source describes, not on a rental offer: it is evaluated as an owned
    # setup, whose network between servers is own_fabric_gbps_per_gpu (a row gives it where its source states it)
    given = {"buy": 1, **m.inputs, **overrides}
    return {**engine.resolve_inputs(given), **engine.evaluate(given)}


def predict(m: Measurement) -> float:
    """What the model (with the catalogs' current defaults) says for the measured quantity."""
    return _evaluate(m)[m.quantity]


def executed_utilisation(m: Measurement) -> float | None:
    """For a training-speed row: the fraction of the GPUs' dense peak the reported speed needs, counting
    every FLOP the recipe executes (model FLOPs plus a forward pass of recomputation with full checkpointing)."""
    if m.quantity != "train_tokens_per_s":
        return None
    r = _evaluate(m)
    # full checkpointing runs each layer's forward twice: 2 x P (+ 2 x the LoRA adapters') + the attention forward
    # 4*L*s*a*d, a third of its FLOPs
    recomputed = (2 * r["params_active"] + 2 * r["lora_params"] + r["train_mixer_flops_per_token"] / 3
                  if r["recompute"] == "full" else 0)
    executed = r["flops_per_token_train"] + recomputed
    return m.value * executed / (m.inputs["n_gpus"] * r["train_tflops_per_gpu_peak"] * 1e12)


def in_fit(m: Measurement) -> bool:
    """Rows the fit uses: not beyond EXECUTED_LIMIT of peak; a training-speed row only on a GPU whose MFU the fit has
    (PRIORS: GPUs with dense rows), so that a mixture-of-experts row on another card does not set that card's MFU; a
    reserved-memory row (the allocator's cache under CPU offload) checks the memory model, it does not fit it; gpu-tco's
    own runs (OWN_SOURCES) are checks too."""
    if m.quantity == "reserved_peak_train_gib" or m.source in OWN_SOURCES or _check_reason(m) \
            or m.source in HELD_OUT_SOURCES:
        return False
    gpu = _evaluate(m)["gpu"]
    if m.kind == "training speed" and f"gpu:{CHIP_OF.get(gpu, gpu)}" not in PRIORS:
        return False
    u = executed_utilisation(m)
    return u is None or u <= EXECUTED_LIMIT


# ---------------------------------------------------------------------------
# the fit.  Speed: log(measured) = log(model at efficiency 1) + the log-factors that apply to the row, a
# linear system in the factors' logarithms.  Memory: the inputs below, by Gauss-Newton on the relative error.
# Both minimise the sum of the 8th powers of the errors (close to the largest error), because what the
# calibration promises is a bound on every row, not a small average.
SPEED_PARAMS = tuple(n for n in PRIORS)
# logits_bytes_per_element: of the bf16 logits (2), their fp32 copy (4), the fp32 log-softmax (4) and the gradients
# (fp32 4, bf16 2), about 12 bytes per logit are live at the peak in gpu-tco's own transformers runs (docs/training.md);
# the sum of all five (16) overstates it, and a source left out fell back to it (the Unsloth rows' error then grew
# with the context, to +13 %)
MEMORY_PRIORS = {"fused_loss_chunk_tokens": 1024.0, "cuda_context_gib": 1.0, "fragmentation_pct": 5.0,
                 "logits_bytes_per_element": 12.0}
P_NORM = 8
IRLS_ITERATIONS = 40


def _train_features(m: Measurement) -> dict:
    r = _evaluate(m)
    feats = {f"gpu:{CHIP_OF.get(r['gpu'], r['gpu'])}": 1.0}
    if r["method"] != "full":
        feats[f"method:{'qlora' if r['method'].startswith('qlora') else r['method']}"] = 1.0
    if r["recompute"] != "none":
        feats[f"recompute:{r['recompute']}"] = 1.0
    if r["fp8_linears_active"]:
        feats[f"precision:{FP8_RECIPE.get(r['precision'], r['precision'])}"] = 1.0
    if r["routed_expert_share"] > 0:
        feats["moe_train_efficiency"] = 1.0
    if r["n_gpus"] >= LARGE_CLUSTER_GPUS:
        feats["large_cluster_mfu_factor"] = 1.0
    if r["framework"] in FITTED_FRAMEWORKS:
        feats[f"framework:{r['framework']}"] = 1.0
    return feats


def _fixed_factors(m: Measurement) -> float:
    """The fixed factors the engine applies that the fit does not fit: the multi-GPU penalty without NVLink (an
    assumption), the framework's speed factor (frameworks.csv speed_factor, FITTED_FRAMEWORKS aside) and what full
    recomputation costs LoRA beyond full training (lora_recompute_factor, counted from the work: 0.889 for the weights'
    products, nearer 1 with attention)."""
    r = _evaluate(m)
    gpu = _gpu_row(r["gpu"])
    framework = 1.0 if r["framework"] in FITTED_FRAMEWORKS else r["framework_speed_factor"]
    pcie = r["pcie_multi_gpu_efficiency"] if r["n_gpus"] > 1 and gpu["multi_gpu_fabric"] < 1 else 1.0
    return pcie * framework * r["lora_recompute_factor"]


def _gpu_row(name: str) -> dict:
    from . import catalog
    return catalog.tables()["gpus"].row(name)


def _log_ratio(m: Measurement) -> float:
    """log(measured speed / modelled speed at efficiency 1): what the factors of this row multiply to."""
    if m.kind == "training speed":
        # the factors describe compute; communication that does not overlap it (comm_slowdown, at the catalog's
        # current efficiencies) is divided out of both sides, so a network-bound row does not bend the compute fit
        ideal = _evaluate(m, mfu=1.0)
        # the LoRA adapters' own time (lora_slowdown, 1 at mfu=1 where it is not modelled) is divided out the same way
        shipped = _evaluate(m)
        slowdown = shipped["comm_slowdown"] / ideal["comm_slowdown"] * shipped["step_work_slowdown"]
        at_one = ideal[m.quantity]
        at_one = at_one / _fixed_factors(m) if m.quantity == "train_gpu_hours" else at_one * _fixed_factors(m)
        at_one = at_one * slowdown if m.quantity == "train_gpu_hours" else at_one / slowdown
        # GPU-hours fall as the efficiency rises: the speed ratio is modelled / measured hours
        return math.log(at_one / m.value) if m.quantity == "train_gpu_hours" else math.log(m.value / at_one)
    if m.kind == "decode speed":
        return math.log(m.value / _evaluate(m, decode_bandwidth_efficiency=1.0)[m.quantity])
    if m.kind == "prefill speed":
        # the speed at prefill_mfu 1, from a small reference: the engine's compute factor multiplies prefill_mfu under a
        # cap of the dense peak (MIN(1, ...)), which 1 x a factor above 1 would reach; the speed is linear below it
        at_ref = _evaluate(m, prefill_mfu=PREFILL_MFU_REFERENCE, moe_prefill_efficiency=1.0)[m.quantity]
        return math.log(m.value / (at_ref / PREFILL_MFU_REFERENCE))
    raise ValueError(m.kind)


def _features(m: Measurement) -> dict:
    if m.kind == "training speed":
        return _train_features(m)
    if m.kind == "decode speed":
        return {"decode_bandwidth_efficiency": 1.0}
    if m.kind == "prefill speed":
        r = _evaluate(m)
        # the engine's test for a mixture-of-experts model: more than one expert per layer (a dense model's active
        # parameters are fewer than its total too: the embedding lookup is not compute)
        return {"prefill_mfu": 1.0, **({"moe_prefill_efficiency": 1.0} if r["experts_held_per_layer"] > 1 else {})}
    return {}


def _minimax(X: np.ndarray, y: np.ndarray, prior: np.ndarray) -> np.ndarray:
    """theta making max |X theta - y| small: least squares first, then damped iteratively reweighted least squares
    for sum |X theta - y|^p with p rising to P_NORM (close to the largest error, while every row keeps a say).
    Parameters no row touches keep ``prior``; a tiny ridge pull settles what the rows leave open."""
    theta = np.array(prior, dtype=float)
    used = X.any(axis=0)
    if not used.any():
        return theta
    Xu, yu, pu = X[:, used], y - X[:, ~used] @ theta[~used], theta[used]
    ridge = RIDGE * np.eye(Xu.shape[1])

    def solve(weights):
        # the normal equations of the weighted rows and the ridge, (X'WX + RIDGE I) theta = X'Wy + RIDGE prior: the ridge
        # keeps them well conditioned, and they solve in a fraction of the time of a least-squares solver
        weighted = Xu.T * weights
        return np.linalg.solve(weighted @ Xu + ridge, weighted @ yu + RIDGE * pu)

    th = solve(np.ones(len(yu)))
    for p in range(3, P_NORM + 1):
        for _ in range(IRLS_ITERATIONS):
            residual = np.abs(Xu @ th - yu)
            weights = (residual / max(residual.max(), 1e-12) + 1e-3) ** (p - 2)
            weights *= len(weights) / weights.sum()  # the ridge stays small against the rows
            th = th + (solve(weights) - th) / (p - 1)  # damped (a Newton step for |r|^p): plain IRLS diverges for p > 3
    theta[used] = th
    return theta


def offloaded(m: Measurement) -> bool:
    """A training row whose states live in CPU memory: its time is compute overlapped with PCIe transfers plus the CPU
    optimizer step, so it informs ``cpu_optimizer_params_per_s`` (``fit_offload``), not the compute factors."""
    return m.kind == "training speed" and bool(m.inputs.get("offload_params") or m.inputs.get("offload_optimizer"))


# Factors with a ceiling: a fit that would put one above its bound holds it at the bound and fits the others without it
# (a cluster of 512 GPUs or more is not faster per GPU than the communication model says; a GPU's efficiency is a share
# of its dense peak, at most 1, which the catalog's default_mfu enforces too).
UPPER_BOUND = {"large_cluster_mfu_factor": 1.0, **{n: 1.0 for n in PRIORS if n.startswith("gpu:")}}


# Activation traffic around the matrix products (activation_bytes_per_dim, bytes per token and unit of layer width) is work
# besides the compute the factors describe, taken out of each training row as time (_activation_terms).  Its value is
# counted, not fitted: 6 bytes, each matrix product's bf16 input and output read or written once by the forward product,
# once by the input-gradient product and once by the weight-gradient product (3 x 2 bytes per unit of d_in + d_out), the
# traffic no fusion of the elementwise work removes.  LLM Foundry's MPT 125M to 3B runs, TinyLlama and Pythia check it held
# out (HELD_OUT_SOURCES; docs/training.md, "Small models").  fit_activation can fit it on the rows of ACTIVATION_SOURCES
# instead (the MPT rows would give 13-15 bytes, the elementwise work the fused stacks leave), but then it has one source:
# left out, the value falls back to this count and the held-out errors of composer (its framework) and torchtune rise.
ACTIVATION_SOURCES: tuple = ()
ACTIVATION_BYTES_PRIOR = 6.0
ACTIVATION_BYTES_RANGE = (0.0, 60.0)


def _step_work(m: Measurement) -> tuple[float, float, float, float]:
    """(step_work_slowdown at activation_bytes_per_dim 0, its rise per byte, its value as the catalogs stand, and
    _log_ratio as they stand), once per row and state of the catalogs."""
    from . import catalog

    def build():
        at0 = _evaluate(m, activation_bytes_per_dim=0.0)["step_work_slowdown"]
        at1 = _evaluate(m, activation_bytes_per_dim=1.0)["step_work_slowdown"]
        return at0, at1 - at0, _evaluate(m)["step_work_slowdown"], _log_ratio(m)
    # kept in the catalog snapshot: a rewrite of the catalogs publishes a new one
    return catalog.snapshot().derived(("calibration step work", m.id, m.source, m.value), build)


def _activation_terms(m: Measurement) -> tuple[float, float, float, float]:
    """A training row's time in units of its compute time at factors 1 (C): (measured time / C, the other step work's
    stretch at the catalogs' factors, activation traffic per byte per width / C x the catalogs' factors, the catalogs'
    factor product).  The traffic is a time of its own, not a share of the compute: a fit that raised the factors would
    otherwise raise the share with them, and the fixed point would run away."""
    at0, per_byte, now, log_ratio = _step_work(m)
    from . import catalog
    factors_now = catalog.snapshot().derived(("calibration factors", m.id, m.source, m.value),
                                             lambda: _evaluate(m)["mfu_effective"] / _fixed_factors(m))
    return math.exp(-(log_ratio - math.log(now))), at0, per_byte / factors_now, factors_now


def _log_ratio_at(m: Measurement, activation_bytes: float | None) -> float:
    """log of the factor product the row needs (what _log_ratio gives) with the activation traffic at ``activation_bytes``
    per width taken out as time."""
    if activation_bytes is None or m.kind != "training speed":
        return _log_ratio(m)
    measured, at0, per_byte, _now = _activation_terms(m)
    left = measured - activation_bytes * per_byte
    return math.log(at0) - math.log(max(left, 1e-3 * measured))  # more traffic than the measured time: a large error


def _activation_prediction_ratio(m: Measurement, factors: float, activation_bytes: float) -> float:
    """modelled / measured for a training row with the factor product ``factors`` and ``activation_bytes`` per width."""
    measured, at0, per_byte, _now = _activation_terms(m)
    modelled = at0 / factors + activation_bytes * per_byte
    return measured / modelled if m.quantity != "train_gpu_hours" else modelled / measured


# Factors in a fixed order: recomputing only the attention scores (selective) costs at most what recomputing whole layers
# (full) costs, so its factor is at least full's.  A fit that would order them the other way fits one factor for both.
AT_LEAST = {"recompute:selective": "recompute:full"}


def _fit_factors(X: np.ndarray, y: np.ndarray, prior: np.ndarray) -> np.ndarray:
    """The minimax fit with the factors of UPPER_BOUND held at their bounds where the fit would pass them, and those of
    AT_LEAST no lower than the factor they name (the two fitted as one where the fit would put it lower); holding one
    moves the others, so the holding repeats until none passes its bound."""
    X, y, prior = X.copy(), y.copy(), prior.copy()
    theta = _minimax(X, y, prior)
    tied: dict[int, int] = {}
    for _ in range(len(SPEED_PARAMS) + len(AT_LEAST)):  # at most one round per factor and tie
        held = [j for j, n in enumerate(SPEED_PARAMS) if n in UPPER_BOUND and X[:, j].any()
                and theta[j] > math.log(UPPER_BOUND[n]) + 1e-12]
        ties = [(SPEED_PARAMS.index(n), SPEED_PARAMS.index(m)) for n, m in AT_LEAST.items()
                if X[:, SPEED_PARAMS.index(n)].any() and theta[SPEED_PARAMS.index(n)] < theta[SPEED_PARAMS.index(m)] - 1e-12]
        if not held and not ties:
            break
        for j in held:
            y = y - X[:, j] * math.log(UPPER_BOUND[SPEED_PARAMS[j]])
            X[:, j] = 0.0
            prior[j] = math.log(UPPER_BOUND[SPEED_PARAMS[j]])
        for j, k in ties:  # the rows of j take k's factor
            X[:, k] += X[:, j]
            X[:, j] = 0.0
            tied[j] = k
        theta = _minimax(X, y, prior)
    for j, k in tied.items():
        theta[j] = theta[k]
    return theta


def fit_speed(rows: list[Measurement], activation_bytes: float | None = None) -> dict:
    """Efficiency parameters from the speed rows that are ``in_fit``: {parameter: value}, the activation traffic at
    ``activation_bytes`` per width (the catalogs' value when None); a parameter of UPPER_BOUND that the rows would put
    above its bound is held there.  The small-model rows (ACTIVATION_SOURCES) fit the activation traffic instead."""
    rows = [m for m in rows if m.kind != "memory" and in_fit(m) and not offloaded(m) and m.source not in ACTIVATION_SOURCES]
    features = [_features(m) for m in rows]
    X = np.array([[f.get(n, 0.0) for n in SPEED_PARAMS] for f in features]).reshape(len(rows), len(SPEED_PARAMS))
    y = np.array([_log_ratio_at(m, activation_bytes) for m in rows])
    prior = np.log([PRIORS[n] for n in SPEED_PARAMS])
    return {n: float(math.exp(t)) for n, t in zip(SPEED_PARAMS, _fit_factors(X, y, prior))}


def _activation_log_error(m: Measurement, speed: dict, activation_bytes: float) -> float:
    """log(modelled / measured) for a training row at ``activation_bytes`` per width and the factors ``speed``."""
    params = {**catalog_values(), **speed}
    factors = math.exp(sum(math.log(params[n]) * v for n, v in _features(m).items()))
    return math.log(_activation_prediction_ratio(m, factors, activation_bytes))


def fit_activation(rows: list[Measurement], speed: dict, sources: tuple = ACTIVATION_SOURCES) -> dict:
    """``activation_bytes_per_dim`` from the small-model rows of ``sources``: the value making their largest log error
    smallest (golden-section search), the compute factors as ``speed``; the prior without such rows."""
    rows = [m for m in rows if m.source in sources and m.kind == "training speed"
            and (in_fit(m) or m.source in HELD_OUT_SOURCES)]
    if not rows:
        return {"activation_bytes_per_dim": ACTIVATION_BYTES_PRIOR}
    worst = lambda x: max(abs(_activation_log_error(m, speed, x)) for m in rows)  # noqa: E731
    return {"activation_bytes_per_dim": _golden_min(worst, *ACTIVATION_BYTES_RANGE)}


def _golden_min(f, lo: float, hi: float) -> float:
    """Where the unimodal ``f`` is smallest in [lo, hi] (golden-section search, 40 steps)."""
    golden = (math.sqrt(5) - 1) / 2
    for _ in range(40):
        a, b = hi - golden * (hi - lo), lo + golden * (hi - lo)
        if f(a) <= f(b):
            hi = b
        else:
            lo = a
    return (lo + hi) / 2


def _memory_prediction(m: Measurement, params: dict) -> float:
    return _evaluate_now(m, params)[m.quantity]


def _gauss_newton(rows: list[Measurement], names: list[str], fixed: dict) -> dict:
    """``names`` (relative to their priors) fitted on ``rows`` by Gauss-Newton steps on the relative error, the
    other memory terms held at ``fixed``."""
    scale = np.array([MEMORY_PRIORS[n] for n in names])
    x = np.ones(len(names))
    meas = np.array([m.target for m in rows])
    for _ in range(6):
        params = {**fixed, **dict(zip(names, x * scale))}
        base = np.array([_memory_prediction(m, params) for m in rows])
        J = np.zeros((len(rows), len(names)))
        for j, name in enumerate(names):
            step = 0.05
            bumped = dict(params, **{name: (x[j] + step) * scale[j]})
            J[:, j] = (np.array([_memory_prediction(m, bumped) for m in rows]) - base) / step
        # relative error after a step dx: (base + J dx) / meas - 1 -> make max |J/meas dx - (1 - base/meas)| small
        dx = _minimax(J / meas[:, None], 1 - base / meas, 1 - x) if rows else np.zeros(len(names))
        x = np.maximum(x + dx, 0.05)
    return dict(zip(names, (float(v) for v in x * scale)))


def fit_memory(rows: list[Measurement]) -> dict:
    """The memory model's small-scale terms, in two steps so that no two of them trade off against each other:
    first the rows with an unfused loss fix the CUDA context, fragmentation and bytes per logit; then the rows with
    a chunked loss fix how many tokens' logits it holds at once (its working set is tokens x vocabulary x bytes)."""
    rows = [m for m in rows if m.kind == "memory" and in_fit(m)]
    unfused = [m for m in rows if not m.inputs.get("fused_loss")]
    fused = [m for m in rows if m.inputs.get("fused_loss")]
    params = dict(MEMORY_PRIORS)
    params.update(_gauss_newton(unfused, ["cuda_context_gib", "fragmentation_pct", "logits_bytes_per_element"], params))
    params.update(_gauss_newton(fused, ["fused_loss_chunk_tokens"], params))
    return params


CPU_OPTIMIZER_PRIOR = 1e9  # params/s per GPU process: [zero_offload2021] Figure 7 (CPU-Adam on a 1B-10B model, seconds per step)


# every fitted parameter with its prior, as the reports list them
PARAMETER_PRIORS = {**PRIORS, "activation_bytes_per_dim": ACTIVATION_BYTES_PRIOR, "cpu_optimizer_params_per_s": CPU_OPTIMIZER_PRIOR,
                    **MEMORY_PRIORS}


def _offload_log_error(m: Measurement, speed: dict, rate: float) -> float:
    """log(modelled / measured) for an offloaded row at CPU optimizer speed ``rate`` and the fitted compute factors: the
    engine's step as the catalogs stand, its compute rescaled to the factors and its CPU step to ``rate`` (the transfers
    overlap all the GPU's work, the CPU step does not: comm_slowdown)."""
    r = _evaluate(m)
    mfu = math.exp(sum(math.log(speed[n]) * v for n, v in _features(m).items())) * _fixed_factors(m)
    at0, per_byte, now, _ratio = _step_work(m)
    activation = speed.get("activation_bytes_per_dim", r["activation_bytes_per_dim"])
    compute_now = r["compute_s_per_step"]
    overlapped = max(r["comm_s_per_step"] - r["tp_comm_s_per_step"], r["offload_pcie_s_per_step"])
    fixed = r["tp_comm_s_per_step"]
    step_now = max(compute_now * now, overlapped) + fixed + r["cpu_optimizer_s_per_step"]
    compute = compute_now * r["mfu_effective"] / mfu
    work = compute_now * (at0 + activation * per_byte - 1)
    step = max(compute + work, overlapped) + fixed + r["cpu_optimizer_s_per_step"] * r["cpu_optimizer_params_per_s"] / rate
    pred = r[m.quantity] * (step / step_now if m.quantity == "train_gpu_hours" else step_now / step)
    return math.log(pred / m.value)


def fit_offload(rows: list[Measurement], speed: dict) -> dict:
    """``cpu_optimizer_params_per_s`` from the offloaded training rows whose CPU step matters (full training): the value
    making the largest log error smallest (golden-section search over its logarithm), the compute factors as ``speed``."""
    rows = [m for m in rows if offloaded(m) and in_fit(m) and _evaluate(m)["trainable_params"] > 1e9]
    if not rows:
        return {"cpu_optimizer_params_per_s": CPU_OPTIMIZER_PRIOR}
    worst = lambda x: max(abs(_offload_log_error(m, speed, math.exp(x))) for m in rows)  # noqa: E731
    return {"cpu_optimizer_params_per_s": math.exp(_golden_min(worst, math.log(1e7), math.log(1e11)))}


def fit(rows: list[Measurement] | None = None, fits_done: dict | None = None) -> dict:
    """Every fitted parameter: the speed factors, the CPU optimizer speed of offloaded runs and the memory terms.

    ``fits_done``: a dict kept across calls on subsets of the same rows while the catalogs stay as they are (leaving
    one source out): the speed part reads only the speed rows and the memory part only the memory rows, so a subset
    whose rows of one kind are those of an earlier call reuses that part's fit, the same numbers without computing
    them again."""
    rows = rows if rows is not None else load_measurements()
    fits_done = {} if fits_done is None else fits_done
    speed_rows = [m for m in rows if m.kind != "memory"]
    memory_rows = [m for m in rows if m.kind == "memory"]
    speed_key = ("speed", *map(id, speed_rows))
    if speed_key not in fits_done:
        fits_done[speed_key] = _fit_speed_part(speed_rows)
    memory_key = ("memory", *map(id, memory_rows))
    if memory_key not in fits_done:
        fits_done[memory_key] = fit_memory(memory_rows)
    return {**fits_done[speed_key], **fits_done[memory_key]}


def _fit_speed_part(rows: list[Measurement]) -> dict:
    """The speed factors, the activation traffic and the CPU optimizer speed of offloaded runs, from the speed rows."""
    from .inputs import DEFAULTS
    speed = fit_speed(rows, DEFAULTS["activation_bytes_per_dim"])
    activation = fit_activation(rows, speed)
    speed = fit_speed(rows, activation["activation_bytes_per_dim"])  # the factors again, at the fitted traffic
    return {**speed, **activation, **fit_offload(rows, speed)}


PREFILL_MFU_REFERENCE = 0.05  # times any engine's compute factor (at most 10) stays below the cap of 1


def predict_with(m: Measurement, params: dict) -> float:
    """The model's value for a row under ``params`` (speed: the product of the factors, exactly as the engine
    forms it; memory: the engine with the memory terms as inputs)."""
    if m.kind == "memory":
        return _memory_prediction(m, {n: params[n] for n in MEMORY_PRIORS})
    if m.kind == "training speed":
        params = {**catalog_values(), **params}  # a GPU the fit has no MFU for keeps its catalog value
    if offloaded(m):
        return m.value * math.exp(_offload_log_error(m, params, params["cpu_optimizer_params_per_s"]))
    factors = math.exp(sum(math.log(params[n]) * v for n, v in _features(m).items()))
    if m.kind == "training speed" and "activation_bytes_per_dim" in params:
        return m.value * _activation_prediction_ratio(m, factors, params["activation_bytes_per_dim"])
    ratio = factors / math.exp(_log_ratio(m))
    return m.value * ratio if m.quantity != "train_gpu_hours" else m.value / ratio


def errors(params: dict | None = None, rows: list[Measurement] | None = None) -> list[tuple[Measurement, float, float]]:
    """(row, prediction, relative error) for every row: under ``params``, or the engine with the catalogs as they are."""
    rows = rows if rows is not None else load_measurements()
    out = []
    for m in rows:
        pred = predict_with(m, params) if params is not None else predict(m)
        out.append((m, pred, pred / m.value - 1))
    return out


CHECK_GROUPS = {"own": "gpu-tco's own runs (they set the transformers speed factor and LoRA costs: not held out)",
                "own_torchtune": "gpu-tco's own torchtune runs on one H100 (held out: nothing is fitted on them)",
                "own_torchtune_set": "gpu-tco's own torchtune runs on one H200 (they set torchtune's LoRA adapter costs: not held out)",
                "own_unsloth": "gpu-tco's own Unsloth runs on one H100 (held out: nothing is fitted on them)",
                "own_deepspeed": "gpu-tco's own DeepSpeed runs on one H100 or H200 (held out: nothing is fitted on them)",
                "own_deepspeed_set": "gpu-tco's own DeepSpeed ZeRO-3 runs on one H100 (they set its ZeRO-3 hook cost: not held out)",
                "own_transformers": "gpu-tco's own LoRA pairs on one H200 (held out: nothing is fitted on them)"}
OWN_GROUP_OF = {**{s: "own_torchtune" for s in OWN_TORCHTUNE_SOURCES}, **{s: "own_torchtune_set" for s in SET_TORCHTUNE_SOURCES},
                **{s: "own_unsloth" for s in OWN_UNSLOTH_SOURCES},
                **{s: "own_deepspeed" for s in OWN_DEEPSPEED_SOURCES}, **{s: "own_deepspeed_set" for s in SET_DEEPSPEED_SOURCES},
                **{s: "own_transformers" for s in OWN_TRANSFORMERS_SOURCES}}


def _check_group(m: Measurement) -> str | None:
    """Which kind of check a training or memory row outside the fit is (None: in the fit, or left out by another rule)."""
    if m.kind not in CHECK_KINDS or in_fit(m) or m.quantity == "reserved_peak_train_gib":
        return None
    if m.source in OWN_SOURCES and m.kind in ("training speed", "memory"):
        return CHECK_GROUPS[OWN_GROUP_OF.get(m.source, "own")]
    reason = _check_reason(m)
    return reason.removesuffix(" (a check)") if reason else None


def check_label(key: str) -> str:
    """The label a check group has in `gpu-tco calibrate` and docs/calibration.md (what ``checks`` keys it by): a group
    of gpu-tco's own runs (CHECK_GROUPS) or a published source checked by rule (CHECK_SOURCES, MEMORY_CHECK_SOURCES)."""
    if key in CHECK_GROUPS:
        return CHECK_GROUPS[key]
    return (CHECK_SOURCES.get(key) or MEMORY_CHECK_SOURCES[key]).removesuffix(" (a check)")


def checks(params: dict | None = None, rows: list[Measurement] | None = None) -> dict:
    """The errors of the rows that check the model without fitting it (gpu-tco's own runs,
    CHECK_SOURCES, several GPUs over PCIe), under ``params`` (the fit on every other row: what leaving them out gives):
    {(framework, kind, why): {"median", "worst", "rows", "low", "high"}}."""
    rows = rows if rows is not None else load_measurements()
    params = params if params is not None else fit(rows)
    out: dict[tuple, list[float]] = {}
    for m in rows:
        group = _check_group(m)
        stack = m.inputs.get("framework") or (m.framework if m.kind in ("decode speed", "prefill speed") else None)
        if group and stack:
            out.setdefault((stack, m.kind, group), []).append(predict_with(m, params) / m.value - 1)
    return {key: {"median": float(np.median(np.abs(v))), "worst": float(np.max(np.abs(v))), "rows": len(v),
                  "low": float(np.min(v)), "high": float(np.max(v))} for key, v in sorted(out.items())}


def leave_one_source_out(rows: list[Measurement] | None = None) -> dict:
    """For each source: refit without it, predict its rows (those in the fit).
    {kind: {"median": |error|, "worst": |error|, "rows": n}, "by_source": {source: [(id, error), ...]},
    "by_framework": {(framework, kind): ...}, "fitted": the fit on every row, "checks": checks() under it}

    A refit per source takes some seconds; the result is kept in the code cache (``codecache``), keyed by the rows
    themselves, so ``gpu-tco calibrate`` and ``gpu-tco docs`` compute it once per version of the model and catalogs
    (the cache's fingerprint covers both)."""
    rows = rows if rows is not None else load_measurements()
    return codecache.kept("leave one source out", rows, lambda: _leave_one_source_out(rows))


def _leave_one_source_out(rows: list[Measurement]) -> dict:
    by_kind: dict[str, list[float]] = {}
    by_source: dict[str, list] = {}
    by_framework: dict[tuple, list[float]] = {}
    fits_done: dict = {}  # most sources hold rows of one kind only: the other kind's fit is the same without them
    for source in sorted({m.source for m in rows}):
        params = fit([m for m in rows if m.source != source], fits_done)
        for m, _pred, err in errors(params, [m for m in rows if m.source == source and in_fit(m)]):
            by_kind.setdefault(m.kind, []).append(abs(err))
            by_source.setdefault(source, []).append((m.id, err))
            if m.inputs.get("framework"):
                by_framework.setdefault((m.inputs["framework"], m.kind), []).append(err)
    summary: dict = {k: {"median": float(np.median(v)), "worst": float(max(v)), "rows": len(v)} for k, v in by_kind.items()}
    summary["by_source"] = by_source
    # per framework and kind: the spread of the held-out errors (modelled / measured - 1), what the bands are built from
    summary["by_framework"] = {key: {"median": float(np.median(np.abs(v))), "worst": float(np.max(np.abs(v))), "rows": len(v),
                                     "low": float(np.min(v)), "high": float(np.max(v))}
                               for key, v in sorted(by_framework.items())}
    # rows that never enter the fit, predicted by the fit on all the others (for them, leaving their source out)
    summary["fitted"] = fit(rows, fits_done)
    summary["checks"] = checks(summary["fitted"], rows)
    return summary


# ---------------------------------------------------------------------------
# where the fitted values live, and writing them there
ROUNDING = {"activation_bytes_per_dim": 1, "cpu_optimizer_params_per_s": -7, "fused_loss_chunk_tokens": 0, "cuda_context_gib": 2, "fragmentation_pct": 1, "logits_bytes_per_element": 1}
# cards built on the same chip at the same clocks and power as a measured one take its value
SAME_CHIP = {"A100-80GB-SXM": ("A100-40GB-SXM",), "H100-SXM": ("H200-SXM", "H800-SXM")}
# a card sold under another name with the same compute chip shares its efficiency (H800: the H100 SXM with NVLink cut
# to 400 GB/s, which the communication model carries)
CHIP_OF = {twin: name for name, twins in SAME_CHIP.items() for twin in twins}
# FP8 recipes that share a fitted factor: MXFP8 is Transformer Engine's FP8 recipe with block scales (no published
# MXFP8 row in the set yet), so it takes the factor of fp8
FP8_RECIPE = {"mxfp8": "fp8"}
INPUT_PARAMS = ("moe_train_efficiency", "activation_bytes_per_dim", "cpu_optimizer_params_per_s", "large_cluster_mfu_factor", "decode_bandwidth_efficiency", "prefill_mfu",
                "moe_prefill_efficiency", *MEMORY_PRIORS)


def informed(rows: list[Measurement] | None = None) -> set:
    """Parameters at least one row of the fit touches (the others keep their prior and are not written)."""
    rows = rows if rows is not None else load_measurements()
    names = {n for m in rows if m.kind != "memory" and in_fit(m) and not offloaded(m) for n in _features(m)}
    if any(offloaded(m) and in_fit(m) for m in rows):
        names.add("cpu_optimizer_params_per_s")
    if any(m.source in ACTIVATION_SOURCES and m.kind == "training speed" and in_fit(m) for m in rows):
        names.add("activation_bytes_per_dim")
    names -= {n for n in SPEED_PARAMS if not any(n in _features(m) for m in rows if m.kind != "memory" and in_fit(m)
                                                   and not offloaded(m) and m.source not in ACTIVATION_SOURCES)}
    return names | (set(MEMORY_PRIORS) if any(m.kind == "memory" and in_fit(m) for m in rows) else set())


def rounded(params: dict) -> dict:
    return {n: round(v, ROUNDING.get(n, 3)) if ROUNDING.get(n, 3) else float(round(v)) for n, v in params.items()}


def catalog_values() -> dict:
    """The values the catalogs and input defaults hold now, under the fit's parameter names."""
    from . import catalog
    from .inputs import DEFAULTS
    tabs = catalog.tables()
    gpus, methods, recomputes, precisions = tabs["gpus"], tabs["methods"], tabs["recomputes"], tabs["precisions"]
    out = {f"gpu:{row['name']}": float(row["default_mfu"]) for row in gpus.rows}  # every GPU, fitted or not
    for name in PRIORS:
        kind, _, key = name.partition(":")
        if kind == "method":
            out[name] = float(methods.row(key)["mfu_factor"])
        elif kind == "recompute":
            out[name] = float(recomputes.row(key)["mfu_factor"])
        elif kind == "precision":
            out[name] = float(precisions.row(key)["fp8_mfu_factor"])
        elif kind == "framework":
            out[name] = float(tabs["frameworks"].row(key)["speed_factor"])
    out.update({n: float(DEFAULTS[n]) for n in INPUT_PARAMS})
    return out


def _rewrite_csv(path: Path, key_column: str, value_column: str, values: dict) -> None:
    """Write ``values`` (by the row's ``key_column``) into ``value_column`` of a catalog file; "" leaves it empty."""
    from .files import write_atomically
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    head = rows[0]
    k, v = head.index(key_column), head.index(value_column)
    for row in rows[1:]:
        if row[k] in values:
            row[v] = values[row[k]] if values[row[k]] == "" else f"{values[row[k]]:g}"
    import io
    text = io.StringIO()
    csv.writer(text, lineterminator="\n").writerows(rows)
    write_atomically(path, text.getvalue().encode("utf-8"))


def apply(params: dict, rows: list[Measurement] | None = None) -> list[Path]:
    """Write the fitted values (rounded) where the model reads them: gpus.csv default_mfu, methods.csv and
    recomputes.csv mfu_factor, calibrated.csv (input defaults).  Only parameters the rows inform are written."""
    values = rounded({n: v for n, v in params.items() if n in informed(rows)})
    gpu = {n.split(":", 1)[1]: v for n, v in values.items() if n.startswith("gpu:")}
    gpu.update({twin: gpu[name] for name, twins in SAME_CHIP.items() if name in gpu for twin in twins})
    method = {n.split(":", 1)[1]: v for n, v in values.items() if n.startswith("method:")}
    if "qlora" in method:
        method["qlora_nodq"] = method["qlora"]  # the same dequantisation work, a different scale format
    recompute = {n.split(":", 1)[1]: v for n, v in values.items() if n.startswith("recompute:")}
    precision = {n.split(":", 1)[1]: v for n, v in values.items() if n.startswith("precision:")}
    precision.update({twin: precision[name] for twin, name in FP8_RECIPE.items() if name in precision})
    framework = {n.split(":", 1)[1]: v for n, v in values.items() if n.startswith("framework:")}
    scalars = {n: v for n, v in values.items() if n in INPUT_PARAMS}
    written = []
    for path, key, column, vals in ((DATA / "gpus.csv", "name", "default_mfu", gpu),
                                    (DATA / "methods.csv", "name", "mfu_factor", method),
                                    (DATA / "recomputes.csv", "name", "mfu_factor", recompute),
                                    (DATA / "precisions.csv", "name", "fp8_mfu_factor", precision),
                                    (DATA / "frameworks.csv", "name", "speed_factor", framework),
                                    (DATA / "calibrated.csv", "name", "value", scalars)):
        if vals:
            _rewrite_csv(path, key, column, vals)
            written.append(path)
    return written


BAND_MIN_ROWS = 3  # a framework with fewer held-out rows of a kind takes the band of all frameworks' rows of that kind
BAND_FLOOR_PCT = 10  # no band narrower than this: the set's sources each carry a few percent of their own


def bands(loso: dict | None = None) -> dict:
    """{framework: (speed_band_pct, memory_band_pct)}: twice the larger of two held-out median errors of the framework's
    rows of that kind, each where it rests on at least BAND_MIN_ROWS rows: its published rows with their source left out
    of the fit (leave one source out), and gpu-tco's own runs of it that nothing is fitted on (OWN_GROUP_OF, held out);
    with neither, of every row of the kind; at least BAND_FLOOR_PCT.  Twice the median covers most held-out rows (see
    docs/calibration.md), what "likely" means here; the larger of the two, because a framework's published runs and
    today's release on today's GPUs can disagree (torchtune: its 2024 tables against its compiled runs on one H100)."""
    from . import catalog
    loso = loso if loso is not None else leave_one_source_out()
    held_out = {CHECK_GROUPS[OWN_GROUP_OF[s]] for s in HELD_OUT_OWN_SOURCES}
    out = {}
    for row in catalog.tables()["frameworks"].rows:
        name, pair = row["name"], []
        for kind in ("training speed", "memory"):
            groups = [loso["by_framework"].get((name, kind)),
                      *(v for (fw, k, group), v in loso["checks"].items() if fw == name and k == kind and group in held_out)]
            medians = [g["median"] for g in groups if g and g["rows"] >= BAND_MIN_ROWS]
            median = max(medians) if medians else loso[kind]["median"]
            pair.append(float(max(BAND_FLOOR_PCT, round(200 * median))))
        out[name] = tuple(pair)
    return out


def write_bands(loso: dict | None = None) -> Path:
    """Write ``bands()`` into frameworks.csv (speed_band_pct, memory_band_pct)."""
    b = bands(loso)
    _rewrite_csv(DATA / "frameworks.csv", "name", "speed_band_pct", {n: v[0] for n, v in b.items()})
    _rewrite_csv(DATA / "frameworks.csv", "name", "memory_band_pct", {n: v[1] for n, v in b.items()})
    return DATA / "frameworks.csv"


# ---------------------------------------------------------------------------
# the report: docs/calibration.md (``gpu-tco docs``) and ``gpu-tco calibrate``
DOC_PATH = Path(__file__).resolve().parent.parent / "docs" / "calibration.md"
PARAMETER_HOME = {"gpu": "gpus.csv default_mfu", "method": "methods.csv mfu_factor", "recompute": "recomputes.csv mfu_factor",
                  "precision": "precisions.csv fp8_mfu_factor", "framework": "frameworks.csv speed_factor"}


def _pct(x: float) -> str:
    return f"{x * 100:+.1f} %"


def _setup(m: Measurement) -> str:
    i = m.inputs
    parts = [str(i.get("model", "")), str(i.get("method", "") or "serving")]
    parts.append(f"{int(i.get('n_gpus', 1))} x {i.get('gpu', '')}")
    if m.kind in ("training speed", "memory"):
        parts.append(f"seq {int(i.get('seq_len', 0)):,} x {int(i.get('micro_batch', 1))}")
        parts.append(f"recompute {i.get('recompute', 'full')}")
    else:
        parts.append(str(i.get("weights_dtype", "")))
    return ", ".join(p for p in parts if p)


def _why_out(m: Measurement) -> str:
    """Why a row is not in the fit, in words."""
    if m.quantity == "reserved_peak_train_gib":
        return "no: reserved memory (a check)"
    if m.source in OWN_SOURCES:
        return "no: gpu-tco's own run (a check)"
    reason = _check_reason(m)
    if reason:
        return "no: " + reason
    if m.source in HELD_OUT_SOURCES:
        return "no: small model (a held-out check)"
    gpu = _evaluate(m)["gpu"]
    if m.kind == "training speed" and f"gpu:{CHIP_OF.get(gpu, gpu)}" not in PRIORS:
        return "no: no dense row on this GPU (a check)"
    return f"no: needs {executed_utilisation(m):.0%} of peak"


def rows_table(rows: list[Measurement] | None = None) -> list[list[str]]:
    """One line per measurement: id, source, setup, quantity, measured, modelled, error, in the fit."""
    from .engine import QUANTITIES
    rows = rows if rows is not None else load_measurements()
    out = []
    for m, pred, err in errors(rows=rows):
        unit = QUANTITIES[m.quantity].unit
        out.append([m.id, m.source, _setup(m), m.quantity, f"{m.value:,.4g} {unit}", f"{pred:,.4g} {unit}", _pct(err),
                    "yes" if in_fit(m) else _why_out(m)])
    return out


def _prose() -> list[str]:
    """docs/calibration.md's explanation: what the efficiency counts, the parallel layouts, mixture-of-experts models
    and CPU offload."""
    return [
        "## What the efficiency counts",
        "",
        "`mfu` (and `mfu_effective`) is model FLOPs utilisation as PaLM defines it (Chowdhery et al. 2022, Appendix B):",
        "model FLOPs per token = (6 for full training | 4 for LoRA and QLoRA, which compute no weight gradients for frozen",
        "weights) x active parameters (+ 6 x the LoRA adapters' parameters) + 12 x layers x sequence x attention width;",
        "recomputation is not counted as work.",
        "Active parameters leave out the input embedding: it is a table lookup, not a matrix product (OpenAI's convention",
        "for gpt-oss; NVIDIA NeMo's model TFLOP/s count the same).  A published MFU that counts 6 x all parameters",
        "(torchtitan's 2024 figures) is scaled by ours / theirs before it is entered.  A figure that counts",
        "recomputed FLOPs (Megatron-LM's TFLOP/s, LLM Foundry's HFU) must be scaled by 6/8 with full recomputation first.",
        "",
        "With `mfu` = 0 the model uses the calibrated default:",
        "GPU MFU (gpus.csv `default_mfu`) x method factor x recomputation factor (fitted as full training pays it; LoRA",
        "with full recomputation pays it x its share of work kept over full training's, `lora_recompute_factor`: (4/6) / (6/8)",
        "= 0.889 for the weights' products, the recomputed forward being a third of LoRA's work and a quarter of full",
        "training's, nearer 1 as attention grows) x FP8 factor (an FP8 precision on a GPU",
        "that runs it; its peak is then that of the FLOP mix, the linear layers at the FP8 rate and the rest at the BF16",
        "rate) x mixture-of-experts factor",
        "(`moe_train_efficiency`, models with experts) x large-cluster factor (512 GPUs or more; a fit above 1 is held at 1:",
        "a large cluster is not faster per GPU than its communication says) x PCIe multi-GPU penalty (several GPUs without",
        "NVLink).",
        "",
        "## Parallelism, mixture-of-experts and CPU offload",
        "",
        "n_gpus = tensor x pipeline x context x data parallel; expert parallelism splits the routed experts over GPUs of the",
        "data x context group, as Megatron-Core does.  States are divided by tensor x pipeline parallel; ZeRO shards them over",
        "N = n_gpus / (tensor x pipeline); without sharding a GPU keeps 1 - routed share x (1 - 1/EP) of them.  With pipeline",
        "parallelism the first stage holds min(p, m) micro-batches of its layers' activations (1F1B; Korthikanti et al. 2022),",
        "and a step idles the bubble (p - 1) / (v m + p - 1) (Narayanan et al. 2021, with v model chunks per GPU of the",
        "interleaved schedule).  Context parallelism splits the sequence (activations / cp) and sends keys and values round a",
        "ring (Megatron-Core context parallelism; Liu et al. 2023, Ring Attention).  Communication per micro-batch, each over",
        "its link: data-parallel gathers and reductions (gradients once per optimizer step), tensor-parallel all-reduces,",
        "point-to-point activations between stages, the context-parallel ring, and four all-to-alls of tokens x top-k x hidden",
        "per expert layer (dispatch and combine, forward and backward), inside a machine when the expert group fits one.  That",
        "traffic overlaps compute and only the excess costs time (`comm_slowdown`), except the tensor-parallel all-reduces:",
        "they sit between a layer's matrix products (Shoeybi et al. 2019, section 3), and the options that overlap them",
        "(Megatron-LM's --tp-comm-overlap, torchtitan's async tensor parallel) are off by default, so their time adds to the",
        "step.  Adding them (before: overlapped like the rest) brought the leave-one-source-out median training-speed error",
        "from 19.6 % to 10.9 %: Meta's Llama 2 runs (tensor parallel 8) and torchtitan's FSDP runs on the same A100s no",
        "longer disagree by a quarter.",
        "",
        "`moe_train_efficiency` is what mixture-of-experts models keep of the dense efficiency besides the all-to-all time:",
        "grouped expert matrix products on uneven token counts, routing and token permutation (Gale et al. 2022, MegaBlocks).",
        "The rows that inform it (Megatron Bridge's H100 and GB200 and NeMo AutoModel's H100 pre-training tables; DeepSeek-V3",
        "on H800) balance the tokens over the experts (forced, or without an auxiliary loss); uneven routing is the input `moe_load_imbalance` (1 by default), which stretches the experts'",
        "share of the step and the all-to-all under expert parallelism (Fedus et al. 2021, Switch Transformer capacity).",
        "",
        "CPU offload has no efficiency factor: a step is the longer of compute and the PCIe transfers (weights in twice, gradients",
        "out, at `pcie_gb_per_s`; Ren et al. 2021, ZeRO-Offload; Rajbhandari et al. 2021, ZeRO-Infinity) plus the CPU optimizer",
        "step (trainable parameters of the GPU's shard / `cpu_optimizer_params_per_s`), which does not overlap.  The CPU speed is",
        "fitted on the offloaded full-training rows, with the compute factors fitted on the other rows.  On the GPU stay the",
        "gathered units (current and prefetched), the shards copied in before the gather, and in full training the gradients",
        "of the largest unit on their way out (`offload_buffers_gib`).",
        "",
    ]


def _prose_fp8_and_fit() -> list[str]:
    """docs/calibration.md's explanation, continued: FP8 training, the fit and the rule for leaving a row out."""
    return [
        "## FP8 training",
        "",
        "An FP8 precision (precisions.csv `fp8_linears` = 1) runs the transformer layers' linear matmuls at the GPU's FP8",
        "rate and everything else (attention scores, norms, embeddings, the output layer, the router) at the BF16 rate, so",
        "the peak it is measured against is that of the FLOP mix: 1 / (share / FP8 rate + (1 - share) / BF16 rate), the",
        "share being (6 | 4 for LoRA) x active linear weights / FLOPs per token (72 % for Llama 3 8B at 8,192 tokens).",
        "Each recipe then has its own efficiency factor against the GPU's BF16 efficiency (`precision:*` below):",
        "`fp8` is Transformer Engine's per-tensor recipe as Megatron and NeMo run it (fitted on NVIDIA's NeMo 24.07",
        "DGX-H100 table; NeMo 25.04's GB200 rows then inform the GB200's efficiency), `fp8_torchao` is torchao float8 with FSDP2 and torch.compile (fitted on torchao's torchtitan",
        "benchmark), and `mxfp8` (block-scaled, data-centre Blackwell) takes `fp8`'s factor until a published MXFP8 run is",
        "in the set.  Memory follows the recipes: Transformer Engine keeps an FP8 copy of each linear weight and of its",
        "transpose and saves linear inputs in FP8; torchao keeps neither, so its memory is bf16_mixed's, as its published",
        "peaks are.  GPUs without FP8 tensor cores are refused for these precisions.  Runs laid out with pipeline,",
        "context and expert parallelism across nodes are in the set with their layouts: NeMo's Llama 3 70B (TP 4, PP 4,",
        "CP 2, 5 model chunks per GPU on 64 H100) and DeepSeek-V3's pre-training (PP 16, EP 64, ZeRO-1 on 2,048 H800,",
        "GPU-hours for 14.8T tokens; the H800 is the H100's chip with NVLink cut to 400 GB/s, so its rows inform the",
        "H100's efficiency and the communication model carries the slower links).",
        "",
        "## The fit",
        "",
        "The time model is a product of these factors, so the fit is linear in their logarithms.  It minimises the",
        f"sum of the {P_NORM}th powers of the log errors (close to the largest error, while every row counts), because",
        "what the calibration promises is a bound on every row.  Memory terms are fitted the same way by Gauss-Newton.",
        "A parameter no row informs keeps its prior.  A maximum-context row (Unsloth) is an upper bound: the device",
        "total at the longest context that ran is at most the card, so the fit aims at the middle of the allowed band.",
        "",
        f"Rule for leaving a row out: a training-speed row whose speed needs more than {EXECUTED_LIMIT:.0%} of the GPUs'",
        "dense peak, counting every FLOP its stated recipe executes (recomputation included), is not used: no published",
        "end-to-end training run comes close (torchtitan's best here is 61 %), so the recipe or the token count is not",
        "what the source states.  Three more kinds of row are checks, not fitted: a training-speed row on a GPU without",
        "dense rows of its chip in the set (its mixture-of-experts rows would otherwise set that card's MFU: B200), a",
        "reserved-memory row (the allocator's cache), and gpu-tco's own runs (tools/measure/, one H200, transformers eager:",
        "they set the transformers row's costs and the prompt-length factor of prefill, docs/training.md).  The rows stay in",
        "the file and in the table below.",
        "",
    ]


def _parameter_lines(params: dict, current: dict, used: set) -> list[str]:
    """The table of fitted parameters: where each lives, its prior, the fit and the catalog's value."""
    lines = [
        "| parameter | where it lives | prior | fitted | now in the catalog |",
        "|---|---|---:|---:|---:|",
    ]
    for name, prior in PARAMETER_PRIORS.items():
        kind = name.split(":", 1)[0]
        home = PARAMETER_HOME.get(kind, "input default (data/calibrated.csv)")
        fitted = f"{params[name]:.4g}" if name in used else "(no rows: prior kept)"
        lines.append(f"| `{name}` | {home} | {prior:g} | {fitted} | {current[name]:g} |")
    return lines + ["", "Cards on the same chip as a measured one take its value (and its rows count as that chip's): "
                    + "; ".join(f"{', '.join(t)} from {n}" for n, t in SAME_CHIP.items()) + ".  Other GPUs keep their prior MFU.", ""]


def render(loso: dict | None = None) -> str:
    """docs/calibration.md: the set, the rule, the fitted values, every row's error, leave-one-source-out.
    ``loso``: ``leave_one_source_out()`` of the shipped measurements when the caller has it already (it is most of
    the work: one refit per source)."""
    from .references import REFERENCES
    rows = load_measurements()
    loso = loso if loso is not None else leave_one_source_out(rows)
    params, current = loso.get("fitted") or fit(rows), catalog_values()  # the full fit, done once with the checks
    used = informed(rows)
    sources = sorted({m.source for m in rows})
    kinds = sorted({m.kind for m in rows})
    lines = [
        "# Calibration against published measurements",
        "",
        "Generated by `gpu-tco docs` from `core/data/measurements.csv`; `gpu-tco calibrate` prints the same and",
        "`gpu-tco calibrate --write` refits and writes the values where the model reads them.  The tests hold every row the fit uses within its tolerance, and hold the rule that leaves the others out.",
        "",
        f"The set: {len(rows)} measurements from {len(sources)} independent sources, "
        f"{sum(m.source in OWN_SOURCES for m in rows)} of them gpu-tco's own runs on one H100 or H200 (tools/measure/) "
        f"({', '.join(f'{sum(m.kind == k for m in rows)} {k}' for k in kinds)}).  Each row names the model, method, GPUs,",
        "sequence, batch, precision, recomputation and loss of its recipe, what was measured, the source's URL and date.",
        "",
    ]
    lines += _prose() + _prose_fp8_and_fit()
    lines += _parameter_lines(params, current, used)
    lines += ["## Every row (the model as shipped)", "",
              "| id | source | setup | quantity | measured | modelled | error | in the fit |", "|---|---|---|---|---:|---:|---:|---|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows_table(rows)]
    worst = {}
    for m, _pred, err in errors(rows=rows):
        if in_fit(m):
            worst[m.kind] = max(worst.get(m.kind, 0.0), abs(err))
    lines += ["", "Largest error over the rows in the fit: "
              + "; ".join(f"{k} {worst[k]:.1%} (tolerance {TOLERANCE[k]:.0%})" for k in kinds) + ".", ""]
    lines += ["## Leave one source out", "",
              "Each source in turn is left out, the parameters refitted on the others, and its rows predicted.  Where a",
              "source is the only one informing a parameter (for example the mixture-of-experts factor), its rows fall back to the",
              "prior: this is the error to expect for a setup unlike anything measured.", "",
              "| quantity | rows | median error | worst error |", "|---|---:|---:|---:|"]
    lines += [f"| {k} | {loso[k]['rows']} | {loso[k]['median']:.1%} | {loso[k]['worst']:.1%} |" for k in kinds if k in loso]
    lines += ["", "Per training framework (the framework each source ran; its conventions and speed factor: docs/training.md):", "",
              "| framework | quantity | rows | median error | worst error | range (modelled / measured - 1) |",
              "|---|---|---:|---:|---:|---|"]
    lines += [f"| {fw} | {kind} | {v['rows']} | {v['median']:.1%} | {v['worst']:.1%} | {_pct(v['low'])} to {_pct(v['high'])} |"
              for (fw, kind), v in loso["by_framework"].items()]
    lines += ["", "Rows that check the model without entering the fit, per framework (predicted by the fit on every other row):", "",
              "| framework | quantity | checks | rows | median error | worst error | range (modelled / measured - 1) |",
              "|---|---|---|---:|---:|---:|---|"]
    lines += [f"| {fw} | {kind} | {why} | {v['rows']} | {v['median']:.1%} | {v['worst']:.1%} | {_pct(v['low'])} to {_pct(v['high'])} |"
              for (fw, kind, why), v in loso["checks"].items()]
    lines += ["", "| source left out | rows: error |", "|---|---|"]
    for source, items in loso["by_source"].items():
        lines.append(f"| {source} | " + "; ".join(f"{i} {_pct(e)}" for i, e in items) + " |")
    lines += [""] + render_serving()
    from . import serving_calibration
    lines += serving_calibration.render_lines()
    sources = sorted(set(sources) | {m.source for m in serving_measurements()} | {"aiconfigurator_silicon"})
    lines += ["## Sources", ""]
    lines += [f"- `{s}`: {REFERENCES[s].full()}" for s in sources]
    return "\n".join(lines) + "\n"


def write_doc(path=None) -> Path:
    from .files import write_atomically
    target = Path(path) if path else DOC_PATH
    write_atomically(target, render().encode("utf-8"))
    return target


# ---------------------------------------------------------------------------
# Serving: the batched-serving rows (SERVING_KINDS) predicted by the serving formulas (core/formulas.py group
# "serving"), and the efficiency factors per GPU family fitted on them.  A row's workload sets the batch the
# formulas run at: the concurrency the client held (``batch``); ``offline=1`` lets the engine batch as many as its
# scheduler allows (ENGINE_MAX_SEQS) and the KV cache holds; a server run at ``requests_per_s`` holds the batch
# Little's law gives (requests per replica x output tokens x time per token, solved by a fixed-point iteration).
# There are no latency targets in a measurement: the row's own load decides the latency.
ENGINE_MAX_SEQS = {"TensorRT-LLM": 2048, "vLLM": 1024, "SGLang": 1024}  # the schedulers' default largest batches
ENGINE_MAX_SEQS_SOURCE = ("TensorRT-LLM: trtllm-bench's default max batch size 2048; vLLM V1 on a GPU of 70 GiB or more "
                          "serving the OpenAI API: max_num_seqs 1024 ([vllm_engine_args]); SGLang: taken as vLLM's")
FAMILIES = {  # GPU name prefixes of each architecture; a MIG slice is its card's family
    "ampere": ("A100", "A10", "A40", "RTX-A6000", "RTX-3090"),
    "ada": ("RTX-4090", "RTX-6000-Ada", "L40", "L4"),
    "hopper": ("H100", "H200", "H800", "GH200"),
    "blackwell": ("B200", "B300", "GB200", "GB300", "RTX-5090", "RTX-PRO-6000"),
    "cdna3": ("MI300", "MI325", "MI355"),
}
SERVING_FACTORS = ("decode", "prefill")
SERVING_ITERATIONS = 8


ENGINE_OF_FRAMEWORK = (("TensorRT-LLM", "trtllm"), ("SGLang", "sglang"), ("vLLM", "vllm"), ("llama.cpp", "llamacpp"),
                       ("transformers", "transformers"))


def engine_of(framework: str) -> str:
    """The engines catalog row of a measurement's framework (vllm when none is named)."""
    return next((row for name, row in ENGINE_OF_FRAMEWORK if name.lower() in str(framework).lower()), "vllm")


def family(gpu: str) -> str | None:
    """The GPU's architecture family (FAMILIES), or None."""
    for name, prefixes in FAMILIES.items():
        if any(str(gpu).startswith(p) for p in prefixes):
            return name
    return None


def serving_in_fit(m: Measurement) -> bool:
    """A serving row is fitted when its workload is known (prompt and output tokens per request) and its engine's
    factors are fitted on NVIDIA's points (serving_calibration.FITTED_ENGINES): the family factors are relative to
    those.  An eager engine's step is mostly its host's kernel launches, not the GPU's efficiency."""
    from .serving_calibration import FITTED_ENGINES
    return ("prompt_tokens" in m.inputs and "output_tokens" in m.inputs
            and engine_of(m.framework) in FITTED_ENGINES)


def _engine_max_seqs(m: Measurement) -> int:
    return next((n for name, n in ENGINE_MAX_SEQS.items() if m.framework.startswith(name) or name in m.framework), 1024)


def _serving_inputs(m: Measurement) -> Mapping:
    """A serving row's inputs, every one resolved, no latency targets; kept per catalog snapshot (a fit asks again and
    again)."""
    from . import catalog, engine

    def build():
        given = {k: v for k, v in m.inputs.items() if k not in SERVING_SETTINGS or k in ("prompt_tokens", "output_tokens")}
        given.update(ttft_slo_ms=0, tpot_slo_ms=0, requests_per_s=1.0, monthly_mtok=0, engine=engine_of(m.framework),
                     serving_layout=1)  # the published runs are aggregated: one engine prefills and decodes
        if m.kind in SERVING_KINDS:
            given.pop("batch", None)
            given["max_num_seqs"] = int(m.inputs["batch"]) if "batch" in m.inputs else _engine_max_seqs(m)
        return MappingProxyType(engine.resolve_inputs(given))
    return catalog.snapshot().derived(("calibration serving inputs", m), build)


def _serving_columns(rows: list, factors: dict | None) -> dict:
    """The rows' inputs as columns for one vectorised evaluate: every input resolved per row, no latency targets,
    the row's family factors applied to the efficiency inputs (dividing out the catalog's own factor)."""
    from . import catalog
    from .inputs import BY_NAME
    gpus = catalog.tables()["gpus"]
    cols: dict = {}
    for m in rows:
        r = dict(_serving_inputs(m))
        if factors is not None:
            row = gpus.row(r["gpu"])
            fam = family(r["gpu"])
            for what, name, column in (("decode", "decode_bandwidth_efficiency", "decode_efficiency_factor"),
                                       ("prefill", "prefill_mfu", "prefill_efficiency_factor")):
                shipped = float(row.get(column) or 0) or 1.0
                # the engine uses min(1, input x the catalog's factor): the input carries factor / catalog factor
                r[name] = min(1.0, r[name] * factors.get(f"{what}:{fam}", 1.0) / shipped)
        for k, v in r.items():
            if k in BY_NAME:
                cols.setdefault(k, []).append(v)
    return {k: (v if isinstance(v[0], str) else np.asarray(v, dtype=float)) for k, v in cols.items()}


SERVING_OUTPUTS = ("decode_tokens_per_s_per_seq", "prefill_tokens_per_s", "serve_replica_output_tokens_per_s", "tpot_ms",
                   "ttft_ms", "serve_batch")


def serving_predictions(rows: list, factors: dict | None = None) -> np.ndarray:
    """The model's value for each row (decode, prefill and serving kinds): with the catalogs as shipped, or with
    ``factors`` ({"decode:<family>": x, "prefill:<family>": y}; 1 for a family not named) in place of the catalog's."""
    from . import engine
    if not rows:
        return np.zeros(0)
    cols = _serving_columns(rows, factors)
    server = np.array([m.kind in SERVING_KINDS and "requests_per_s" in m.inputs and not m.inputs.get("offline") for m in rows])
    replicas = np.array([float(m.inputs.get("replicas", 1)) for m in rows])
    r = engine.evaluate(cols, outputs=SERVING_OUTPUTS)
    if server.any():  # a server run: the batch at which one replica serves its share of the arrivals
        rate = np.array([float(m.inputs.get("requests_per_s", 0)) for m in rows]) / replicas
        out = cols["output_tokens"]
        top = cols["max_num_seqs"].copy()
        batch = np.where(server, 1.0, top)
        for _ in range(SERVING_ITERATIONS):
            cols["max_num_seqs"] = np.maximum(1, np.round(np.where(server, batch, top)))
            r = engine.evaluate(cols, outputs=SERVING_OUTPUTS)
            batch = np.minimum(top, np.maximum(1, rate * out * np.asarray(r["tpot_ms"]) / 1000))
    out = []
    for j, m in enumerate(rows):
        if m.quantity == "decode_tokens_per_s":
            value = r["serve_replica_output_tokens_per_s"][j] * replicas[j]
            if server[j]:  # at most what arrives
                value = min(value, float(m.inputs["requests_per_s"]) * cols["output_tokens"][j])
        else:
            value = r[m.quantity][j]
        out.append(float(value))
    return np.array(out)


def fit_serving(rows: list | None = None) -> dict:
    """The decode and prefill efficiency factors of each GPU family the serving rows measure, relative to the
    global decode_bandwidth_efficiency and prefill_mfu (fitted on the decode and prefill rows): Gauss-Newton on the
    log errors of the rows in the fit.  {"decode:<family>": factor, "prefill:<family>": factor}."""
    rows = [m for m in (rows if rows is not None else serving_measurements()) if m.kind in SERVING_KINDS and serving_in_fit(m)]
    families = sorted({family(m.inputs["gpu"]) for m in rows} - {None})
    names = [f"{w}:{f}" for f in families for w in SERVING_FACTORS]
    if not names:
        return {}
    y = np.log([m.value for m in rows])
    x = np.zeros(len(names))  # log factors
    for _ in range(10):
        params = dict(zip(names, np.exp(x)))
        base = np.log(serving_predictions(rows, params))
        J = np.zeros((len(rows), len(names)))
        for j, name in enumerate(names):
            bumped = dict(params, **{name: params[name] * math.exp(0.02)})
            J[:, j] = (np.log(serving_predictions(rows, bumped)) - base) / 0.02
        # a small pull towards 1 settles a factor its family's rows hardly move (decode-bound rows say little of prefill)
        A = np.vstack([J, 0.1 * np.eye(len(names))])
        b = np.concatenate([y - base, -0.1 * x])
        step = np.linalg.lstsq(A, b, rcond=None)[0]
        x = np.clip(x + step, math.log(0.2), math.log(1 / 0.3))
        if np.abs(step).max() < 1e-4:
            break
    return {n: float(v) for n, v in zip(names, np.exp(x))}


def serving_errors(factors: dict | None = None, rows: list | None = None) -> list[tuple[Measurement, float, float]]:
    """(row, prediction, relative error) of every serving row: under ``factors``, or the catalogs as shipped."""
    rows = rows if rows is not None else serving_measurements()
    preds = serving_predictions(rows, factors)
    return [(m, float(p), float(p) / m.value - 1) for m, p in zip(rows, preds)]


def serving_leave_one_source_out(rows: list | None = None) -> dict:
    """For each source of serving rows: refit the family factors without it and predict its rows in the fit
    (a family no other source measures falls back to factor 1: the global efficiencies).
    {kind: {"median", "worst", "rows"}, "by_source": {source: [(id, error), ...]}}"""
    rows = rows if rows is not None else serving_measurements()
    by_kind: dict[str, list[float]] = {}
    by_source: dict[str, list] = {}
    for source in sorted({m.source for m in rows}):
        factors = fit_serving([m for m in rows if m.source != source])
        mine = [m for m in rows if m.source == source and serving_in_fit(m)]
        for m, _p, err in serving_errors(factors, mine):
            by_kind.setdefault(m.kind, []).append(abs(err))
            by_source.setdefault(source, []).append((m.id, err))
    summary: dict = {k: {"median": float(np.median(v)), "worst": float(max(v)), "rows": len(v)} for k, v in by_kind.items()}
    summary["by_source"] = by_source
    return summary


def _median_throughput_error(loso: dict) -> float:
    return loso.get("serving throughput", {}).get("median", float("inf"))


def serving_family_decision(rows: list | None = None) -> dict:
    """Whether the measurements support efficiency factors per GPU family: the factors are used only when refitting
    them without each source predicts that source's throughput rows better (median leave-one-source-out error)
    than the global efficiencies alone.  {"factors": fitted (or {} when not supported), "fitted": the fit on every
    row, "with": loso with factors, "without": loso with the global efficiencies, "supported": bool}."""
    rows = rows if rows is not None else serving_measurements()
    return codecache.kept("serving family decision", rows, lambda: _serving_family_decision(rows))


def _serving_family_decision(rows: list) -> dict:
    fitted = fit_serving(rows)
    with_factors = serving_leave_one_source_out(rows)
    without = {}
    by_kind: dict[str, list[float]] = {}
    for m, _p, err in serving_errors({}, [m for m in rows if serving_in_fit(m)]):
        by_kind.setdefault(m.kind, []).append(abs(err))
    without = {k: {"median": float(np.median(v)), "worst": float(max(v)), "rows": len(v)} for k, v in by_kind.items()}
    supported = bool(fitted) and _median_throughput_error(with_factors) < _median_throughput_error(without)
    return {"factors": fitted if supported else {}, "fitted": fitted, "with": with_factors, "without": without,
            "supported": supported}


def apply_serving(decision: dict) -> list[Path]:
    """Write the family factors the decision keeps into gpus.csv (every GPU of the family; the others empty = 1)."""
    from . import catalog
    gpus = catalog.tables()["gpus"]
    written = []
    for what, column in (("decode", "decode_efficiency_factor"), ("prefill", "prefill_efficiency_factor")):
        values = {}
        for name in gpus.names[: gpus.file_rows]:
            factor = decision["factors"].get(f"{what}:{family(name)}")
            values[name] = round(factor, 3) if factor is not None else ""
        _rewrite_csv(DATA / "gpus.csv", "name", column, values)
        written.append(DATA / "gpus.csv")
    return sorted(set(written))


def render_serving() -> list[str]:
    """The serving section of docs/calibration.md."""
    rows = serving_measurements()
    decision = serving_family_decision(rows)
    lines = ["## Serving (batched, continuous batching)", "",
             f"{len(rows)} published serving measurements from {len({m.source for m in rows})} sources, predicted by the serving "
             "formulas (docs/quantities.md, group serving) at each row's own workload: the concurrency the client held, or",
             f"for an offline run the engine's largest batch ({ENGINE_MAX_SEQS_SOURCE}) as far as the KV cache holds it, or for a "
             "server run the batch Little's law gives at its arrival rate.  A row is in the fit when its prompt and output "
             "lengths are stated.", "",
             "| id | source | setup | quantity | measured | modelled | error | in the fit |", "|---|---|---|---|---:|---:|---:|---|"]
    from .engine import QUANTITIES
    for m, pred, err in serving_errors(rows=rows):
        unit = QUANTITIES["serve_replica_output_tokens_per_s"].unit if m.quantity == "decode_tokens_per_s" else "ms"
        setup = _setup(m) + (f", {m.inputs['replicas']:g} replicas" if m.inputs.get("replicas", 1) != 1 else "")
        load = ("offline" if m.inputs.get("offline") else f"{m.inputs['batch']:g} concurrent" if "batch" in m.inputs
                else f"{m.inputs.get('requests_per_s', 0):g} requests/s")
        lines.append(f"| {m.id} | {m.source} | {setup}, {load} | {m.quantity} | {m.value:,.4g} {unit} | {pred:,.4g} {unit} | "
                     f"{_pct(err)} | {'yes' if serving_in_fit(m) else 'no: prompt length not stated'} |")
    fitted = decision["fitted"]
    lines += ["", "Efficiency factors per GPU family (relative to the global decode_bandwidth_efficiency and prefill_mfu), "
              "fitted on every row in the fit: " + (", ".join(f"`{k}` {v:.3g}" for k, v in fitted.items()) or "none") + ".", "",
              "| errors of the rows in the fit | rows | median | worst |", "|---|---:|---:|---:|"]
    for label, loso in (("global efficiencies only (as shipped)", decision["without"]),
                        ("family factors, leave one source out", decision["with"])):
        for kind in SERVING_KINDS:
            if kind in loso:
                v = loso[kind]
                lines.append(f"| {label}: {kind} | {v['rows']} | {v['median']:.1%} | {v['worst']:.1%} |")
    verdict = ("The family factors predict held-out sources better, so the catalog holds them (gpus.csv)."
               if decision["supported"] else
               "Refitted without one source, the family factors predict that source worse than the global efficiencies "
               "do: the sources disagree by engine (TensorRT-LLM's offline runs are faster than the model, vLLM's runs of "
               "1,000 requests sent at once slower), not by GPU family.  The catalog keeps no family factor (gpus.csv "
               "columns empty = 1) until measurements of one family from independent engines agree.")
    lines += ["", verdict, ""]
    lines += ["| source left out (family factors refitted on the others) | rows: error |", "|---|---|"]
    for source, items in decision["with"]["by_source"].items():
        lines.append(f"| {source} | " + "; ".join(f"{i} {_pct(e)}" for i, e in items) + " |")
    return lines + [""]
