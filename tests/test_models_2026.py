"""Models of 2025-2026 read from the config.json files NVIDIA ships with AIConfigurator (tests/data/
aiconfigurator_configs, source and license in its README): every file reads; totals and active parameters match
the sizes in the model names (3 %) and the model cards (1 %); KV and fixed-size state memory per sequence match
the engines' own figures; hybrid, sparse and latent-expert terms enter memory, decode reads and FLOPs; checkpoint
names with a weight-format suffix read as the base model with that weight format."""
from __future__ import annotations

import math
import re
import subprocess
import sys
from pathlib import Path

import pytest

from gpu_tco import core
from gpu_tco.core import catalog, hf_config
from gpu_tco.core.errors import InputError

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "tests" / "data" / "aiconfigurator_configs"
FOLDERS = sorted(p.name for p in CONFIGS.iterdir() if p.is_dir())
GIB = 2**30


def _path(folder: str) -> str:
    return str(CONFIGS / folder / "config.json")


def _eval(folder: str, outputs, **inputs) -> dict:
    return core.evaluate({"model": _path(folder), **inputs}, outputs=outputs)


def test_every_shipped_config_is_listed_and_reads():
    readme = (CONFIGS / "README.md").read_text(encoding="utf-8")
    assert len(FOLDERS) == 89  # every model config.json of aiconfigurator-core 0.12.0
    for folder in FOLDERS:
        assert f"`{folder}/config.json`" in readme, folder
        r = _eval(folder, ["params_total_b", "params_active_b", "kv_bytes_per_token", "state_bytes_per_seq",
                           "flops_per_token_train", "decode_step_s", "peak_infer_gib_per_gpu"])
        assert all(math.isfinite(v) for v in r.values()), (folder, r)
        assert 0 < r["params_active_b"] <= r["params_total_b"], folder
        assert r["kv_bytes_per_token"] > 0 and r["state_bytes_per_seq"] >= 0, folder
        spec = hf_config.resolve(_path(folder))
        assert spec["family"] in set(hf_config.FAMILIES.values()), (folder, spec["family"])


# ---------------------------------------------------------------------------------------------------------------
# Sizes in the names.  A name's first size is the total ("Qwen3-235B-A22B": 235), "-A<n>B" the active parameters;
# Llama 4 names the active size first ("Maverick-17B-128E") and Mixtral the expert shape ("8x7B"): not totals.
_TOTAL = re.compile(r"(?<![xA\d.])(\d+(?:\.\d+)?)[Bb](?![a-z])")
_ACTIVE = re.compile(r"-A(\d+(?:\.\d+)?)B")
# Names whose size is a size class further than 3 % from the count; each is checked another way below.
NAME_ROUNDED = {
    # NVIDIA's card: 31.6B total (test_model_cards); the name says 30B
    "NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", "NVIDIA-Nemotron-3-Nano-30B-A3B-NVFP4",
    "NVIDIA-Nemotron-3.5-Lightning-30B-A3B-NVFP4",  # the same architecture as Nemotron 3 Nano
    "gpt-oss-20b",  # OpenAI's card: 20.9B (the catalog row gpt-oss-20b)
    "Qwen3-VL-2B-Instruct",  # text model of Qwen3-1.7B's shape plus a 0.41B vision encoder: 2.13B (test below)
    "MiMo-7B-Base",  # 7.62B counted (Qwen2 layout, untied 151,680-token vocabulary); no published total found
}


def _named(folder: str):
    name = folder.split("--", 1)[1]
    total = _TOTAL.findall(re.sub(r"-(Maverick|Scout)-\d+B", "", name))
    active = _ACTIVE.findall(name)
    return name, (float(total[0]) if total else None), (float(active[0]) if active else None)


SIZED = [f for f in FOLDERS if _named(f)[1] and _named(f)[0] not in NAME_ROUNDED]


@pytest.mark.parametrize("folder", SIZED)
def test_named_total_within_3_percent(folder):
    """The total (text model: a vision encoder is not in the name's size, as Qwen3-VL-8B's 8.19B text model shows)."""
    name, total_b, _ = _named(folder)
    r = _eval(folder, ["params_total_b"])
    text_b = r["params_total_b"] - hf_config.resolve(_path(folder)).get("encoder_params", 0) / 1e9
    assert abs(text_b - total_b) / total_b < 0.03, (name, text_b, total_b)


ACTIVE_ROUNDED = {  # card figures in test_model_cards
    "gemma-4-26B-A4B": 3.8, "Gemma-4-26B-A4B-NVFP4": 3.8, "NVIDIA-Nemotron-3-Nano-30B-A3B-BF16": 3.2,
    "NVIDIA-Nemotron-3-Nano-30B-A3B-NVFP4": 3.2, "NVIDIA-Nemotron-3.5-Lightning-30B-A3B-NVFP4": 3.2,
}


@pytest.mark.parametrize("folder", [f for f in FOLDERS if _named(f)[2]])
def test_named_active_within_3_percent(folder):
    """Active parameters: publishers count them with the input embedding (Qwen, NVIDIA) or without (OpenAI); one of
    the two is within 3 % of the name's -A<n>B, or within 1 % of the card where the name rounds further."""
    name, _, active_b = _named(folder)
    r = _eval(folder, ["params_active_b", "params_active_incl_embedding_b"])
    if name in ACTIVE_ROUNDED:
        active_b, tolerance = ACTIVE_ROUNDED[name], 0.01
    else:
        tolerance = 0.03
    errors = [abs(r[k] - active_b) / active_b for k in ("params_active_b", "params_active_incl_embedding_b")]
    assert min(errors) < tolerance, (name, r, active_b)


def test_qwen3_vl_2b_is_qwen3_1_7b_with_a_vision_encoder():
    vl = hf_config.resolve(_path("Qwen--Qwen3-VL-2B-Instruct"))
    text = _eval("Qwen--Qwen3-1.7B", ["params_total"])["params_total"]
    total = _eval("Qwen--Qwen3-VL-2B-Instruct", ["params_total"])["params_total"]
    assert total - vl["encoder_params"] == pytest.approx(text, rel=1e-3)  # Qwen3-1.7B's config ties its embeddings
    assert 0.40e9 < vl["encoder_params"] < 0.42e9 and total / 1e9 == pytest.approx(2.13, abs=0.01)


# ---------------------------------------------------------------------------------------------------------------
# Model cards: (total B, active B, active counted with the input embedding?, source)
CARDS = {
    "google--gemma-4-26B-A4B": (25.2, 3.8, True, "Google DeepMind, Gemma 4 model card, 2026-04-02, "
                                                 "https://ai.google.dev/gemma/docs/core/model_card_4 (25.2B total, 3.8B active)"),
    "nvidia--Gemma-4-31B-IT-NVFP4": (30.7, None, True, "Google DeepMind, Gemma 4 model card, 2026-04-02 (31B: 30.7B)"),
    "nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-BF16": (
        31.6, 3.2, False, "NVIDIA, NVIDIA-Nemotron-3-Nano-30B-A3B-BF16 model card, 2025-12-15, "
                          "https://huggingface.co/nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16 (31.6B total, 3.2B active, "
                          "3.6B with embeddings)"),
    "zai-org--GLM-5": (744, None, True, "Zhipu AI and Tsinghua University, GLM-5: from Vibe Coding to Agentic Engineering, "
                                       "arXiv:2602.15763, 2026-02 (744B total, 40B active)"),
    "MiniMaxAI--MiniMax-M2.5": (230, None, True, "MiniMax, MiniMax-M2.5 model card, 2026, "
                                                "https://huggingface.co/MiniMaxAI/MiniMax-M2.5 (230B total, 10B active)"),
    "deepseek-ai--DeepSeek-V3.2": (671, None, True, "DeepSeek-AI, DeepSeek-V3.2-Exp, 2025-09-29, "
                                                 "https://github.com/deepseek-ai/DeepSeek-V3.2-Exp: DeepSeek-V3.1-Terminus's "
                                                 "architecture (671B total; 685B with the MTP module) plus the indexer"),
    "moonshotai--Kimi-K2.5": (None, 32.86, True, "NVIDIA Technical Blog, Build with Kimi K2.5 Multimodal VLM Using NVIDIA "
                                                 "GPU-Accelerated Endpoints, 2026-02-04, https://developer.nvidia.com/blog/"
                                                 "build-with-kimi-k2-5-multimodal-vlm-using-nvidia-gpu-accelerated-endpoints"),
    "Qwen--Qwen3.5-397B-A17B": (397, None, True, "Qwen Team, Qwen3.5-397B-A17B model card, 2026, "
                                                "https://huggingface.co/Qwen/Qwen3.5-397B-A17B (397B total, 17B active)"),
    "openai--gpt-oss-120b": (116.83, 5.13, False, "OpenAI, gpt-oss-120b & gpt-oss-20b Model Card, 2025-08-05, Table 1"),
    "deepseek-ai--DeepSeek-V4-Flash": (284, None, True, "DeepSeek-AI, DeepSeek-V4 model card, 2026-04-24, "
                                                       "https://huggingface.co/deepseek-ai/DeepSeek-V4-Pro (V4-Flash: 284B total)"),
    "deepseek-ai--DeepSeek-V4-Pro": (None, 49, True, "DeepSeek-AI, DeepSeek-V4 model card, 2026-04-24 (V4-Pro: 1.6T total, "
                                                     "49B active)"),
}


@pytest.mark.parametrize("folder", sorted(CARDS))
def test_model_cards_within_1_percent(folder):
    total_b, active_b, with_embedding, _source = CARDS[folder]
    r = _eval(folder, ["params_total_b", "params_active_b", "params_active_incl_embedding_b"])
    if total_b:
        assert r["params_total_b"] == pytest.approx(total_b, rel=0.01), (folder, r)
    if active_b:
        key = "params_active_incl_embedding_b" if with_embedding else "params_active_b"
        assert r[key] == pytest.approx(active_b, rel=0.01), (folder, r)


# ---------------------------------------------------------------------------------------------------------------
NEW_ROWS = {
    "DeepSeek-V3.2": "deepseek-ai--DeepSeek-V3.2", "Kimi-K2.5": "moonshotai--Kimi-K2.5", "GLM-5": "zai-org--GLM-5",
    "MiniMax-M2.5": "MiniMaxAI--MiniMax-M2.5", "Qwen3.5-27B": "Qwen--Qwen3.5-27B", "Qwen3.5-35B-A3B": "Qwen--Qwen3.5-35B-A3B",
    "Qwen3.5-122B-A10B": "Qwen--Qwen3.5-122B-A10B", "Qwen3.5-397B-A17B": "Qwen--Qwen3.5-397B-A17B",
    "Gemma-4-26B-A4B": "google--gemma-4-26B-A4B", "Gemma-4-31B": "nvidia--Gemma-4-31B-IT-NVFP4",
    "Nemotron-3-Nano-30B-A3B": "nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-BF16",
    "Nemotron-3-Super-120B-A12B": "nvidia--NVIDIA-Nemotron-3-Super-120B-A12B-FP8",
    "Nemotron-3-Ultra-550B-A55B": "nvidia--NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16",
}


@pytest.mark.parametrize("name", sorted(NEW_ROWS))
def test_catalog_row_gives_the_answer_of_its_config(name):
    row = catalog.models().row(name)
    assert row["source"] and re.fullmatch(r"\d{4}-\d{2}-\d{2}", row["as_of"]), name
    inputs = {"context_tokens": 32768, "batch": 4, "n_gpus": 8, "gpu": "H200"}
    keys = ["params_total", "params_active", "kv_bytes_per_token", "state_bytes_per_seq", "flops_per_token_train",
            "kv_read_bytes_per_seq", "peak_infer_gib_per_gpu", "serve_tpot_s"]
    from_row = core.evaluate({"model": name, **inputs}, outputs=keys)
    from_config = core.evaluate({"model": _path(NEW_ROWS[name]), **inputs}, outputs=keys)
    for key in keys:
        assert from_row[key] == pytest.approx(from_config[key], rel=1e-9), (name, key)


# ---------------------------------------------------------------------------------------------------------------
# KV and state memory per sequence against the engines' own figures.

def test_deepseek_v32_kv_per_token_is_the_latent_vector_plus_the_indexer_key():
    """bf16 latent attention caches kv_lora_rank + rotary = 576 values per token and layer (DeepSeek-AI, FlashMLA README,
    2025-09-29, https://github.com/deepseek-ai/FlashMLA: head_dim_k 576 in MQA mode); the indexer caches 128 FP8 keys and
    one fp32 scale per 128 (DeepSeek-AI, DeepSeek-V3.2-Exp inference/model.py, 2025-09-29: k_cache, k_scale_cache)."""
    r = core.evaluate(model="DeepSeek-V3.2", kv_dtype="bf16", context_tokens=1000, batch=1)
    assert r["indexer_bytes_per_token"] == 61 * (128 + 4)
    assert r["kv_bytes_per_token"] == 61 * ((512 + 64) * 2 + 132)
    assert r["kv_cache_gib"] * GIB == pytest.approx(1000 * 61 * 1284)
    # GLM-5 has the same cache per layer over 78 layers (indexer keys of 128 too)
    assert core.evaluate(model="GLM-5", kv_dtype="bf16")["kv_bytes_per_token"] == 78 * 1284


def test_qwen3_5_state_per_layer_matches_vllm():
    """vLLM-Ascend prints Qwen3.5-35B-A3B at tensor parallel 8 with a Gated DeltaNet state page of 262,144 bytes per
    layer and request (NickPan7779, "Questions about Mamba page size align with attn size in Qwen3.5",
    vLLM-Ascend project on GitHub, 2026-03-17, https://github.com/vllm-project/vllm-ascend/issues/7393): 32 value
    heads x 128 x 128 float32 values (the config's mamba_ssm_dtype) split over 8 GPUs.  Its attention page, 2 x head
    size x KV heads x bytes per token, is the full-attention layers' KV."""
    row = catalog.models().row("Qwen3.5-35B-A3B")
    assert row["state_layers"] == 30 and row["state_bits"] == 32
    assert row["state_elements_per_layer"] * row["state_bits"] / 8 / 8 == 262_144
    conv_bytes = row["state_conv_elements_per_layer"] * 2  # (2 x 16 x 128 + 32 x 128) channels x 3 inputs, bf16
    r = core.evaluate(model="Qwen3.5-35B-A3B", n_gpus=8, batch=1, context_tokens=4096, kv_dtype="bf16")
    assert r["state_bytes_per_seq"] == 30 * (32 * 128 * 128 * 4 + conv_bytes)
    assert r["state_cache_gib_per_gpu"] * GIB == pytest.approx(r["state_bytes_per_seq"] / 8)
    assert r["kv_bytes_per_token"] == 10 * 2 * 256 * 2 * 2  # 10 full-attention layers, 2 KV heads of 256


def test_nemotron_3_nano_kv_and_mamba_state():
    """6 attention blocks with 2 KV heads of 128; 23 Mamba-2 blocks of 64 heads x 64 x 128 state (float32, the config's
    mamba_ssm_cache_dtype) plus the convolution's last 3 inputs of 4096 + 2 x 8 x 128 channels."""
    r = core.evaluate(model="Nemotron-3-Nano-30B-A3B", kv_dtype="bf16", context_tokens=8192, batch=1)
    assert r["kv_bytes_per_token"] == 6 * 2 * 2 * 128 * 2
    assert r["state_bytes_per_seq"] == 23 * (64 * 64 * 128 * 4 + (4096 + 2 * 8 * 128) * 3 * 2)


def test_gemma_4_full_layers_cache_at_their_own_width():
    """Gemma 4 31B: 50 sliding layers (16 KV heads of 256, capped at 1,024 tokens) and 10 full-attention layers (4 KV
    heads of 512) - the full layers' width, not the sliding layers', is what grows with the context."""
    ctx = 65536
    r = core.evaluate(model="Gemma-4-31B", kv_dtype="bf16", context_tokens=ctx, batch=1)
    expected = 50 * min(ctx, 1024) * 2 * 16 * 256 * 2 + 10 * ctx * 2 * 4 * 512 * 2
    assert r["kv_cache_gib"] * GIB == pytest.approx(expected, rel=1e-12)


def test_fixed_state_does_not_grow_with_the_context():
    short, long = (core.evaluate(model="Qwen3.5-27B", context_tokens=c, batch=2) for c in (16384, 65536))
    assert long["state_bytes_per_seq"] == short["state_bytes_per_seq"] > 0
    assert long["kv_cache_gib"] == pytest.approx(4 * short["kv_cache_gib"])
    # a hybrid holds 16 layers of KV where a dense model of the same shape would hold 64
    assert short["kv_bytes_per_token"] == 16 * 2 * 4 * 256 * 2
    # the states count in memory: the memory table's KV-cache row holds both, and the largest batch that fits drops
    assert short["kv_and_state_gib_per_gpu"] == pytest.approx(short["kv_cache_gib_per_gpu"] + short["state_cache_gib_per_gpu"])
    assert short["allocator_peak_infer_gib"] == pytest.approx(short["infer_weights_gib"] + short["kv_and_state_gib_per_gpu"]
                                                              + short["infer_activation_gib"])
    row = dict(catalog.models().row("Qwen3.5-27B"))
    stateless = {k: v for k, v in row.items() if k not in ("aliases", "as_of", "name")}
    stateless.update(state_layers=0, other_params=row["other_params"] + 48 * row["state_layer_params"])  # same weights
    # other_params stay 16-bit; the engine given the whole memory, so that one state more or less moves the batch
    # at 32,768 tokens a sequence: at 65,536 both batches round to 20, the fitted CUDA context (training's calibration,
    # read by serving too) leaving the state's share of a sequence too small to move the whole number
    inputs = {"context_tokens": 32768, "gpu": "H200", "n_gpus": 1, "weights_dtype": "bf16", "gpu_memory_utilization": 1.0}
    without = core.evaluate({"model": stateless, **inputs})
    with_state = core.evaluate({"model": "Qwen3.5-27B", **inputs})
    assert without["params_total"] == with_state["params_total"]
    assert without["kv_bytes_per_token"] == with_state["kv_bytes_per_token"]
    assert 0 < with_state["max_batch_fit"] < without["max_batch_fit"]


def test_sparse_attention_reads_the_top_k_tokens_and_every_indexer_key():
    small, big = (core.evaluate(model="DeepSeek-V3.2", context_tokens=c, batch=1, kv_dtype="bf16") for c in (1000, 100_000))
    per_token_kv = 61 * 576 * 2
    assert small["kv_read_bytes_per_seq"] == pytest.approx(1000 * (per_token_kv + 61 * 132))
    assert big["kv_attended_tokens"] == 2048
    assert big["kv_read_bytes_per_seq"] == pytest.approx(2048 * per_token_kv + 100_000 * 61 * 132)
    dense = core.evaluate(model="DeepSeek-V3", context_tokens=100_000, batch=1, kv_dtype="bf16")
    assert big["decode_bytes_per_step_per_gpu"] < dense["decode_bytes_per_step_per_gpu"]
    # attention FLOPs per prompt token: the top 2,048 keys plus the indexer's 64 heads x 128 over all of them
    q_dim = 128 * 192
    attention = big["prefill_tokens_per_s"]  # only checks the quantity exists and is finite
    assert math.isfinite(attention) and attention > 0
    train = core.evaluate(model="DeepSeek-V3.2", seq_len=100_000, method="full")
    expected = 6 * train["params_active"] + 12 * 61 * (2048 * q_dim + 100_000 * 64 * 128 / 2)
    assert train["flops_per_token_train"] == pytest.approx(expected)


def test_state_layers_count_their_recurrence_and_no_attention():
    r = core.evaluate(model="Qwen3.5-27B", seq_len=4096, method="full")
    row = catalog.models().row("Qwen3.5-27B")
    recurrence = 48 * 6 * row["state_elements_per_layer"]
    assert r["state_flops_per_token"] == recurrence
    assert r["flops_per_token_train"] == pytest.approx(6 * r["params_active"] + 12 * 16 * 4096 * 24 * 256 + 3 * recurrence)


def test_latent_experts_are_counted_in_their_width():
    """Nemotron 3 Super: 512 routed experts of 2688 work in a 1,024-wide latent space (squared ReLU, two matrices)."""
    r = core.evaluate(model="Nemotron-3-Super-120B-A12B", outputs=["mlp_params_per_expert"])
    assert r["mlp_params_per_expert"] == 2 * 1024 * 2688


# ---------------------------------------------------------------------------------------------------------------
# Checkpoint names

@pytest.mark.parametrize("typed, base, fmt", [
    ("Qwen/Qwen3-235B-A22B-FP8", "Qwen3-235B-A22B", "fp8"),
    ("nvidia/Llama-3.1-8B-Instruct-FP8", "Llama-3.1-8B", "fp8"),
    ("nvidia/DeepSeek-V3.1-NVFP4", "DeepSeek-V3", "nvfp4"),
    ("nvidia/Qwen3.5-397B-A17B-NVFP4", "Qwen3.5-397B-A17B", "nvfp4"),
    ("Qwen/Qwen2.5-72B-Instruct-AWQ", "Qwen2.5-72B", "int4_awq"),
    ("Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4", "Qwen2.5-7B", "int4_gptq"),
    ("Qwen/Qwen3-32B-FP8-Static-PerTensor", "Qwen3-32B", "fp8"),
    ("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-NVFP4", "Nemotron-3-Nano-30B-A3B", "nvfp4"),
])
def test_checkpoint_name_reads_as_base_model_with_its_weight_format(typed, base, fmt):
    keys = ["params_total", "infer_weights_gib"]
    assert core.evaluate(model=typed, outputs=keys) == core.evaluate(model=base, weights_dtype=fmt, outputs=keys)
    note = catalog.models().match_note(typed)
    assert f"read as {base} with weights in {fmt}" in note


def test_a_given_weights_dtype_wins_over_the_name():
    given = core.evaluate(model="Qwen/Qwen3-235B-A22B-FP8", weights_dtype="bf16", outputs=["infer_weights_gib"])
    assert given == core.evaluate(model="Qwen3-235B-A22B", outputs=["infer_weights_gib"])
    with pytest.raises(InputError, match="model"):
        core.evaluate(model="NoSuchModel-70B-FP8")


@pytest.mark.slow  # over 0.45 s: a subprocess
def test_command_line_says_how_a_checkpoint_name_was_read():
    run = subprocess.run([sys.executable, "-m", "gpu_tco", "estimate", "--mode", "infer", "--model",
                          "nvidia/DeepSeek-V3.1-NVFP4", "--gpu", "B200", "--n-gpus", "8"],
                         capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert run.returncode == 0, run.stderr
    assert "read as DeepSeek-V3 with weights in nvfp4" in run.stderr
    assert "weights nvfp4" in run.stdout


def test_serving_plan_serves_the_named_checkpoint_format():
    named = core.plan({"task": "serve", "model": "nvidia/Qwen3.5-397B-A17B-NVFP4", "requests_per_s": 5}, gpus=["B200"])
    assert named["options"] and {o["weights_dtype"] for o in named["options"]} == {"nvfp4"}
    free = core.plan({"task": "serve", "model": "Qwen3.5-397B-A17B", "requests_per_s": 5}, gpus=["B200"])
    assert len({o["weights_dtype"] for o in free["options"]}) > 1  # without a format in the name, formats are searched


def test_a_config_says_the_format_its_weights_are_published_in():
    glm = hf_config.describe(hf_config.resolve(_path("zai-org--GLM-5-FP8")))
    assert "its weights are published in fp8, some layers in 16 bit" in glm
    assert "published in mxfp4, some layers in 16 bit" in hf_config.describe(hf_config.resolve(_path("openai--gpt-oss-20b")))
    assert "published" not in hf_config.describe(hf_config.resolve(_path("zai-org--GLM-5")))
    # the format is said, not applied: a config gives the same answer as the catalog model it describes
    keys = ["infer_weights_gib"]
    assert core.evaluate(model=_path("zai-org--GLM-5-FP8"), outputs=keys) == core.evaluate(model="GLM-5", outputs=keys)


def test_a_quantization_recipe_is_not_taken_for_a_model_config(tmp_path):
    recipe = tmp_path / "hf_quant_config.json"
    recipe.write_text('{"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "NVFP4"}}', encoding="utf-8")
    with pytest.raises(InputError, match="quantization recipe .*NVFP4.* give the config.json beside it"):
        core.evaluate(model=str(recipe))


@pytest.mark.parametrize("model", ["Qwen3.5-35B-A3B", "DeepSeek-V3.2", "Gemma-4-26B-A4B", "Nemotron-3-Super-120B-A12B"])
def test_excel_text_of_every_quantity_gives_core_value_for_new_architectures(model):
    """What a workbook computes for a hybrid, sparse, per-layer-width or latent-expert model equals core's value."""
    from excel_eval import evaluate_excel
    from helpers import same_number

    from gpu_tco.core.formulas import QUANTITIES
    from gpu_tco.core.inputs import INPUTS
    cfg = {"model": model, "context_tokens": 100_000, "batch": 3, "n_gpus": 8, "gpu": "H200", "seq_len": 8192,
           "method": "full"}
    res = core.evaluate(cfg)
    resolved = core.resolve_inputs(cfg)
    names = {inp.name: resolved[inp.name] for inp in INPUTS}
    names.update(res)
    columns = {f"{t}_{c}": tab.col[c] for t, tab in catalog.tables().items() for c in tab.columns}
    for name, q in QUANTITIES.items():
        value, _ = evaluate_excel("=" + q.expr.xl(), names, columns)
        assert same_number(value, names[name]), (model, name, value, names[name])


@pytest.mark.slow  # over 0.45 s: a subprocess
def test_command_line_shows_the_state_of_a_hybrid_model():
    run = subprocess.run([sys.executable, "-m", "gpu_tco", "estimate", "--mode", "infer", "--model", "Qwen3.5-35B-A3B",
                          "--gpu", "H100-SXM", "--n-gpus", "1"], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert run.returncode == 0, run.stderr
    assert re.search(r"fixed-size state bytes per sequence\s+64,389,120", run.stdout)  # 30 x (2 MiB + 24,576 x 2 bytes)
    dense = subprocess.run([sys.executable, "-m", "gpu_tco", "estimate", "--mode", "infer", "--model", "Llama-3-8B"],
                           capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert dense.returncode == 0 and "fixed-size state" not in dense.stdout


# Every model_path of the 5,221 measured serving points NVIDIA ships with AIConfigurator (aiconfigurator-core 0.12.0,
# systems/silicon_sample.csv, Apache-2.0), with the points on each: all read as a catalog model.
MEASURED_MODEL_PATHS = {
    "deepseek-ai/DeepSeek-R1": ("DeepSeek-V3", None), "MiniMaxAI/MiniMax-M2.5": ("MiniMax-M2.5", None),
    "deepseek-ai/DeepSeek-V3": ("DeepSeek-V3", None), "openai/gpt-oss-120b": ("gpt-oss-120b", None),
    "meta-llama/Llama-3.1-70B": ("Llama-3.1-70B", None), "Qwen/Qwen3-32B": ("Qwen3-32B", None),
    "Qwen/Qwen3.5-397B-A17B": ("Qwen3.5-397B-A17B", None), "moonshotai/Kimi-K2.5": ("Kimi-K2.5", None),
    "meta-llama/Llama-3.1-8B-Instruct": ("Llama-3.1-8B", None), "Qwen/Qwen3-235B-A22B-FP8": ("Qwen3-235B-A22B", "fp8"),
    "zhipuai/GLM-5": ("GLM-5", None), "nvidia/Llama-3.1-8B-Instruct-FP8": ("Llama-3.1-8B", "fp8"),
    "nvidia/DeepSeek-R1-NVFP4": ("DeepSeek-V3", "nvfp4"), "nvidia/Qwen3-32B-NVFP4": ("Qwen3-32B", "nvfp4"),
    "nvidia/DeepSeek-V3.1-NVFP4": ("DeepSeek-V3", "nvfp4"),
}


@pytest.mark.parametrize("path", sorted(MEASURED_MODEL_PATHS))
def test_every_model_of_nvidias_measured_points_is_read(path):
    base, fmt = MEASURED_MODEL_PATHS[path]
    assert catalog.models().canonical(path, "model") == base
    used = core.resolve_inputs({"model": path})
    assert used["weights_dtype"] == (fmt or "bf16")


def _one_config_per_type() -> list[str]:
    seen: dict[str, str] = {}
    for folder in FOLDERS:
        cfg = hf_config.read_config(_path(folder))
        text = cfg.get("text_config") if isinstance(cfg.get("text_config"), dict) else {}
        seen.setdefault(f"{cfg.get('model_type')}/{text.get('model_type')}", folder)
    return sorted(seen.values())


@pytest.mark.slow  # about 3 s over the 28 configs, some over 0.45 s each
@pytest.mark.parametrize("folder", _one_config_per_type())
def test_a_damaged_config_gives_fields_or_one_line(folder):
    """Each field of a published config dropped, emptied or given a wrong type: the architecture reads, or one InputError."""
    import copy

    from gpu_tco.core.architectures import custom_row
    cfg = hf_config.read_config(_path(folder))
    holders = [()] + ([("text_config",)] if isinstance(cfg.get("text_config"), dict) else [])
    for where in holders:
        keys = list((cfg[where[0]] if where else cfg).keys())
        for key in keys:
            for damaged in ("drop", "x", -3, [1, "a", None]):
                c = copy.deepcopy(cfg)
                holder = c[where[0]] if where else c
                if damaged == "drop":
                    holder.pop(key)
                else:
                    holder[key] = damaged
                try:
                    custom_row(hf_config.architecture(c))
                except InputError as err:
                    assert "\n" not in str(err), (folder, key, damaged)


def test_deepseek_v4_compressed_attention_holds_a_tenth_of_v32s_cache_at_1m_tokens():
    """DeepSeek-AI, DeepSeek-V4 model card, 2026-04-24, https://huggingface.co/deepseek-ai/DeepSeek-V4-Pro: at 1M tokens
    DeepSeek-V4-Pro holds 10 % of DeepSeek-V3.2's KV cache (one entry per 4 tokens in 30 layers, per 128 in 31, a
    128-token window in all 61)."""
    v4, v32 = (core.evaluate(model=m, kv_dtype="fp8", context_tokens=1_000_000, batch=1)
               for m in (_path("deepseek-ai--DeepSeek-V4-Pro"), "DeepSeek-V3.2"))
    assert 0.08 < v4["kv_cache_gib"] / v32["kv_cache_gib"] < 0.12
    row = hf_config.resolve(_path("deepseek-ai--DeepSeek-V4-Pro"))
    assert row["compressed_kv_layers"] == pytest.approx(30 / 4 + 31 / 128) and row["indexer_kv_layers"] == 30 / 4
    # per token beyond the window: the compressed entries (512 values each) and the indexer's keys on the 1-in-4 entries
    beyond = (core.evaluate(model=_path("deepseek-ai--DeepSeek-V4-Pro"), kv_dtype="fp8", context_tokens=2128, batch=1)
              ["kv_cache_gib"] - core.evaluate(model=_path("deepseek-ai--DeepSeek-V4-Pro"), kv_dtype="fp8",
                                               context_tokens=128, batch=1)["kv_cache_gib"]) * GIB / 2000
    assert beyond == pytest.approx((30 / 4 + 31 / 128) * 512 + 30 / 4 * 132)


def test_excel_function_reads_a_checkpoint_name_with_its_weight_format():
    from gpu_tco.addin.functions import call
    named = call("GPU_MEMORY_INFER", "Qwen/Qwen3-235B-A22B-FP8")
    assert named == call("GPU_MEMORY_INFER", "Qwen3-235B-A22B", None, None, "fp8") < call("GPU_MEMORY_INFER", "Qwen3-235B-A22B")
    assert call("GPU_MEMORY_INFER", "Qwen/Qwen3-235B-A22B-FP8", None, None, "bf16") == call("GPU_MEMORY_INFER", "Qwen3-235B-A22B")
