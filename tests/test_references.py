"""Estimates held against published numbers. Each test names its source."""
from __future__ import annotations

import math

import pytest

from gpu_tco import core
from gpu_tco.core.formulas import GIB


def gpt(layers, hidden, heads, vocab=51200, **extra):
    """A GPT-style architecture as in Megatron-LM / Korthikanti et al. (f = 4h, GeLU, MHA, dropout)."""
    spec = {"layers": layers, "hidden": hidden, "ffn": 4 * hidden, "heads": heads, "vocab": vocab,
            "gated_mlp": 0, "dropout": 1, "tied_embeddings": 1}
    spec.update(extra)
    return spec


# ---------------------------------------------------------------------------
@pytest.mark.parametrize("sharding, expected_gb", [("none", 120), ("zero1", 31.4), ("zero2", 16.6), ("zero3", 1.9)])
def test_zero_paper_model_states_7_5b_on_64_gpus(sharding, expected_gb):
    """ZeRO paper (Rajbhandari et al. 2020) Figure 1: Psi = 7.5B, N_d = 64, K = 12 (mixed-precision Adam):
    120 GB baseline, 31.4 GB P_os, 16.6 GB P_os+g, 1.9 GB P_os+g+p per GPU (GB = 1e9 bytes)."""
    r = core.evaluate(model="Llama-2-7B", method="full", precision="bf16_mixed", optimizer="adamw",
                      n_gpus=64, sharding=sharding)
    # model states are linear in the parameter count: scale Llama-2-7B's states to Psi = 7.5e9
    states_gb = r["states_gib"] * GIB * 7.5e9 / r["params_total"] / 1e9
    assert states_gb == pytest.approx(expected_gb, abs=0.05)


# ---------------------------------------------------------------------------
# Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer Models", Table 2
# (per-layer activation bytes, 16-bit) and section 4.2.3; configurations from Table 3 (s = 2048).
KORTHIKANTI_CONFIGS = {
    "22B": (gpt(48, 6144, 64), 8, 4),
    "175B": (gpt(96, 12288, 96), 8, 1),
    "530B": (gpt(105, 20480, 128), 8, 1),
    "1T": (gpt(128, 25600, 160), 8, 1),
}


@pytest.mark.parametrize("name", list(KORTHIKANTI_CONFIGS))
def test_korthikanti_table2_activation_formulas(name):
    arch, t, b = KORTHIKANTI_CONFIGS[name]
    s, h, a, L = 2048, arch["hidden"], arch["heads"], arch["layers"]
    # Korthikanti et al. count what Megatron-LM keeps (framework megatron: no eager extras)
    base = dict(model=arch, seq_len=s, micro_batch=b, flash_attention=0, n_gpus=t, sharding="none", framework="megatron")

    def per_layer(**kw):
        return core.evaluate({**base, **kw})["act_bytes_per_layer"]

    sbh = s * b * h
    # no parallelism: sbh(34 + 5as/h)
    assert per_layer(tensor_parallel=1, recompute="none") == pytest.approx(sbh * (34 + 5 * a * s / h), rel=1e-12)
    # tensor parallel: sbh(10 + 24/t + 5as/(ht))
    assert per_layer(tensor_parallel=t, recompute="none") == pytest.approx(sbh * (10 + 24 / t + 5 * a * s / (h * t)), rel=1e-12)
    # tensor + sequence parallel: sbh/t (34 + 5as/h)
    assert per_layer(tensor_parallel=t, sequence_parallel=1, recompute="none") == pytest.approx(sbh / t * (34 + 5 * a * s / h), rel=1e-12)
    # tensor parallel + selective recomputation: sbh(10 + 24/t)
    assert per_layer(tensor_parallel=t, recompute="selective") == pytest.approx(sbh * (10 + 24 / t), rel=1e-12)
    # tensor + sequence parallel + selective: 34 sbh / t
    assert per_layer(tensor_parallel=t, sequence_parallel=1, recompute="selective") == pytest.approx(34 * sbh / t, rel=1e-12)
    # full recomputation stores each layer's input: 2 sbh L
    r = core.evaluate({**base, "tensor_parallel": t, "recompute": "full"})
    assert r["act_checkpoint_bytes"] == pytest.approx(2 * sbh * L, rel=1e-12)


def test_korthikanti_figure1_parameters_match_table3_sizes():
    """Table 3 names the models by parameter count; the GPT architectures reproduce them (within 2 %)."""
    for name, (arch, _, _) in KORTHIKANTI_CONFIGS.items():
        p = core.evaluate(model=arch)["params_total_b"]
        nominal = {"22B": 22, "175B": 175, "530B": 530, "1T": 1000}[name]
        assert p == pytest.approx(nominal, rel=0.02), name


# ---------------------------------------------------------------------------
def test_vllm_paper_opt13b_kv_cache_800kb_per_token():
    """vLLM paper (Kwon et al. 2023, section 3): OPT-13B needs 800 KB of KV cache per token
    (2 (K,V) x 5120 hidden x 40 layers x 2 bytes)."""
    r = core.evaluate(model="OPT-13B", kv_dtype="fp16")
    assert r["kv_bytes_per_token"] == 2 * 5120 * 40 * 2 == 800 * 1024


@pytest.mark.parametrize("model, expected", [("Llama-2-7B", 524_288), ("Llama-3-8B", 131_072), ("Llama-3-70B", 327_680)])
def test_kv_bytes_per_token_gqa_aware(model, expected):
    """bf16, 2 x layers x KV heads x head_dim x 2 bytes: Llama-2-7B 524,288 B/token (MHA), Llama-3-8B 131,072 and Llama-3-70B 327,680 (GQA, 8 KV heads)."""
    assert core.evaluate(model=model)["kv_bytes_per_token"] == expected


def test_fp8_kv_halves_the_cache():
    assert core.evaluate(model="Llama-3-8B", kv_dtype="fp8")["kv_bytes_per_token"] == 65_536


# ---------------------------------------------------------------------------
BERT_BASE_CASED = {
    # bert-base-cased config.json: 12 layers, hidden 768, FFN 3072, 12 heads, vocab 28,996, GeLU, tied decoder.
    # other_params: per-layer biases (o 768 + MLP 3072 + 768 + two LayerNorm biases 1536 = 6,144 x 12),
    # position embeddings 512 x 768, token types 2 x 768, embedding LayerNorm bias 768, pooler 768 x 768 + 768.
    "layers": 12, "hidden": 768, "ffn": 3072, "heads": 12, "vocab": 28996, "gated_mlp": 0, "tied_embeddings": 1,
    "qkv_bias": 1, "other_params": 6144 * 12 + 512 * 768 + 2 * 768 + 768 + 768 * 768 + 768, "name": "bert-base-cased",
}


def test_accelerate_estimate_memory_bert_base_cased():
    """HF Accelerate docs, 'Model memory estimator': bert-base-cased float32 total 413.18 MB, training with
    Adam 1.61 GB; float16 total 206.59 MB (MB = MiB there: accelerate's convert_bytes divides by 1024)."""
    fp32 = core.evaluate(model=BERT_BASE_CASED, method="full", precision="fp32", optimizer="adamw", n_gpus=1, sharding="none")
    assert fp32["params_total"] == 108_310_272
    assert fp32["weights_bytes_total"] / 2**20 == pytest.approx(413.18, abs=0.01)
    train_gib = (fp32["weights_gib"] + fp32["gradients_gib"] + fp32["optimizer_gib"])
    assert train_gib == pytest.approx(1.61, abs=0.01)
    bf16 = core.evaluate(model=BERT_BASE_CASED, weights_dtype="fp16")
    assert bf16["infer_weights_bytes"] / 2**20 == pytest.approx(206.59, abs=0.01)
    # accelerate's float16 'training' column (826.36 MB = 4 x weights) has no fp32 master copy;
    # mixed-precision Adam needs 16 bytes/param, i.e. the same 1.61 GiB as fp32:
    mixed = core.evaluate(model=BERT_BASE_CASED, method="full", precision="bf16_mixed", n_gpus=1, sharding="none")
    assert mixed["states_gib"] == pytest.approx(1.61, abs=0.01)


# ---------------------------------------------------------------------------
@pytest.mark.parametrize("arch, tokens, gpus, tflops, days", [
    (gpt(96, 12288, 96), 300e9, 1024, 140, 34),   # GPT-3 175B
    (gpt(128, 25600, 160), 450e9, 3072, 163, 84),  # 1T
])
def test_megatron_end_to_end_training_time(arch, tokens, gpus, tflops, days):
    """Narayanan et al. 2021 (Megatron-LM, SC21) section 5.1: time ~ 8TP/(nX); GPT-3 175B on 300B tokens with
    1024 A100s at 140 TFLOP/s per GPU takes ~34 days; the 1T model on 450B tokens with 3072 A100s at 163 takes ~84 days.
    X counts recomputed FLOPs (8P per token with full recomputation); our mfu is model FLOPs utilisation (6P, as
    PaLM defines it), so the same run is mfu = X x 6/8 / 312.  Layout as a data x tensor-parallel job on owned
    servers (Selene: 200 Gbit/s HDR InfiniBand per GPU, section 5): tensor parallel 8, the optimizer sharded, each
    data-parallel rank taking its share of the global batch (1,536 and 3,072 sequences); the paper's pipeline stages
    are not modelled, and the network time hides behind compute either way."""
    r = core.evaluate(model=arch, gpu="A100-80GB-SXM", n_gpus=gpus, tokens=tokens, epochs=1, method="full",
                      recompute="full", seq_len=2048, mfu=tflops * 6 / 8 / 312, buy=1, own_fabric_gbps_per_gpu=200,
                      tensor_parallel=8, sharding="zero1", micro_batch={1024: 12, 3072: 8}[gpus])
    assert r["comm_slowdown"] == 1
    # our count adds the attention FLOPs (12*L*s*h per token, ~2-3 %) that 8TP omits
    assert r["train_hours"] / 24 == pytest.approx(days, rel=0.05)


@pytest.mark.parametrize("model, gpu_hours", [("Llama-2-7B", 184_320), ("Llama-2-13B", 368_640), ("Llama-2-70B", 1_720_320)])
def test_llama2_pretraining_gpu_hours(model, gpu_hours):
    """Touvron et al. 2023 (Llama 2) Table 2: A100-80GB GPU-hours for 2.0T tokens at 4k context, within 25 % at the
    calibrated defaults (these rows are in the calibration set; 2,048 GPUs as for LLaMA 1).  Their tensor-parallel
    all-reduces sit between the matrix products and stretch the step (Shoeybi et al. 2019, section 3); with them counted,
    the fit holds the large-cluster factor at 1.  Layout as in the calibration set: model
    and sequence parallelism (LLaMA 1 section 2.4), 4 sequences per data-parallel rank (the 4M-token batch), owned
    servers on 200 Gbit/s per GPU (Llama 2 section 2.2.1)."""
    job = dict(model=model, gpu="A100-80GB-SXM", tokens=2.0e12, method="full", recompute="selective", seq_len=4096, buy=1,
               own_fabric_gbps_per_gpu=200, tensor_parallel=8, sequence_parallel=1, sharding="zero1", micro_batch=4)
    r = core.evaluate(job, n_gpus=2048)
    assert r["train_gpu_hours"] == pytest.approx(gpu_hours, rel=0.25)
    assert r["comm_slowdown"] > 1 + 0.5 * r["tp_comm_s_per_step"] / r["compute_s_per_step"] > 1
    assert r["mfu_effective"] <= core.evaluate(job, n_gpus=64)["mfu_effective"]


def test_llama31_405b_gpu_hours_at_documented_mfu():
    """Dubey et al. 2024 (Llama 3) Table 4: 405B pre-training at 38-43 % BF16 MFU on H100s; model card:
    30.84M H100-80GB GPU-hours for ~15.6T tokens (8k context).  At MFU 0.40: within 30 %."""
    # layout: tensor parallel 8 inside each server, the optimizer sharded, one 8,192-token sequence per data-parallel
    # rank (the 16M-token batch), owned servers on 400 Gbit/s per GPU (the paper's pipeline stages are not modelled)
    r = core.evaluate(model="Llama-3.1-405B", gpu="H100-SXM", n_gpus=16384, tokens=15.6e12, method="full",
                      recompute="selective", seq_len=8192, mfu=0.40, buy=1, tensor_parallel=8, sharding="zero1")
    assert r["comm_slowdown"] == 1
    assert r["train_gpu_hours"] == pytest.approx(30.84e6, rel=0.30)


# The Unsloth maximum-context table (Hugging Face + FlashAttention 2) is in the calibration set
# (core/data/measurements.csv, tests/test_calibration.py): there the device total must lie within 12 % below the card.


def test_qlora_paper_65b_claims():
    """Dettmers et al. 2023 (QLoRA) abstract: 16-bit full fine-tuning of LLaMA 65B needs >780 GB;
    QLoRA fine-tunes it on a single 48 GB GPU. LLaMA-65B: 80 layers, h 8192, f 22016, 64 heads, vocab 32000."""
    llama65 = {"layers": 80, "hidden": 8192, "ffn": 22016, "heads": 64, "vocab": 32000, "name": "LLaMA-65B"}
    # the paper's 780 GB counts fp32 Adam states beside the 16-bit weights and gradients (12 bytes per parameter)
    full = core.evaluate(model=llama65, method="full", precision="bf16_pure", optimizer="adamw", n_gpus=1, sharding="none",
                         optimizer_state_dtype="fp32")
    assert full["params_total_b"] == pytest.approx(65.2, rel=0.01)
    assert full["weights_bytes_total"] + full["gradients_bytes_total"] + full["optimizer_bytes_total"] > 780e9
    # the paper's setup: bf16 adapters without an fp32 master copy, r = 64 on all linears, gradient checkpointing
    q = core.evaluate(model=llama65, method="qlora", gpu="RTX-A6000", n_gpus=1, sharding="none", seq_len=512,
                      micro_batch=1, recompute="full", lora_targets="all", lora_rank=64, precision="bf16_pure",
                      lora_adapter_dtype="bf16")
    assert q["fits_train"] and q["peak_train_gib_per_gpu"] > 35  # the weights alone are ~33.6 GB
    # near the limit, as the paper found (it needed paged optimizers for the spikes): the tensors fit within the memory
    # less the default 5 % margin, the device total at 85-90 % of the card (the adapters' gradients, freed after each
    # step, are not there at the end of the forward pass); a 20 % margin refuses it
    assert q["train_fit_code"] == 1 and 0.85 * q["gpu_memory_gib"] < q["peak_train_gib_per_gpu"] < 0.9 * q["gpu_memory_gib"]
    assert core.evaluate(model=llama65, method="qlora", gpu="RTX-A6000", n_gpus=1, sharding="none", seq_len=512,
                         micro_batch=1, recompute="full", lora_targets="all", lora_rank=64,
                         precision="bf16_pure", lora_adapter_dtype="bf16", memory_margin_pct=20)["train_fit_code"] == 0


def test_lora_trainable_params_llama3_8b():
    """LoRA (Hu et al. 2021) on Llama-3-8B, r 16, all 7 linears -> 41,943,040 trainable parameters."""
    assert core.evaluate(model="Llama-3-8B", method="lora", lora_rank=16, lora_targets="all")["lora_params"] == 41_943_040


def test_moe_memory_uses_total_speed_uses_active():
    """Mixtral paper (Jiang et al. 2024): 8x7B has 47B parameters, 13B active per token."""
    r = core.evaluate(model="Mixtral-8x7B")
    assert r["params_total_b"] == pytest.approx(46.7, rel=0.01)
    assert r["params_active_incl_embedding_b"] == pytest.approx(12.9, rel=0.01)  # Mistral counts the embedding
    dense_like = core.evaluate(model="Mixtral-8x7B", method="full", n_gpus=64)
    assert dense_like["flops_per_token_train"] < 8 * 13e9 * 1.2  # 6 x active (+ recompute), not 6 x 47B


def test_sliding_window_caps_mistral_kv_cache():
    """Mistral 7B paper: rolling buffer cache of W = 4096 tokens; at 32k context the cache stays at 4k tokens."""
    short = core.evaluate(model="Mistral-7B", context_tokens=4096)["kv_cache_gib"]
    long = core.evaluate(model="Mistral-7B", context_tokens=32768)["kv_cache_gib"]
    assert long == short


def test_gqa_versus_mha_calculators():
    """KV caches that ignore GQA are 8x too big for Llama-3-70B (64 heads, 8 KV heads)."""
    r = core.evaluate(model="Llama-3-70B", context_tokens=8192, batch=1)
    mha = 2 * 80 * 64 * 128 * 2 * 8192 / GIB
    assert mha / r["kv_cache_gib"] == 8


def test_decode_is_bandwidth_bound_at_batch_1():
    """Llama-2-7B fp16 on one A100-80GB: ~13.2 GB of weights read per token (13.5 GB less the 0.26 GB input embedding
    table, of which a step reads one row; the output matrix is read whole) at 2,039 GB/s x the calibrated bandwidth
    efficiency (~0.73) -> ~110 tokens/s; memory time dominates compute time at batch 1 (Pope et al. 2022, section 2)."""
    efficiency = core.resolve_inputs({})["decode_bandwidth_efficiency"]
    r = core.evaluate(model="Llama-2-7B", gpu="A100-80GB-SXM", n_gpus=1, batch=1, context_tokens=512, weights_dtype="fp16")
    bytes_per_token = r["decode_bytes_per_step_per_gpu"]
    # the input embedding (32,000 x 4,096 x 2 bytes) is a lookup of one row per token, not a read of the table
    assert bytes_per_token == pytest.approx(13.48e9 - 32000 * 4096 * 2 + 512 * 524288, rel=0.01)
    assert r["decode_tokens_per_s_per_seq"] == pytest.approx(2039e9 * efficiency / bytes_per_token, rel=1e-9)
    assert 100 < r["decode_tokens_per_s"] < 130


def test_tflops_are_dense_not_sparse():
    """NVIDIA prints 2:4-sparse tensor TFLOPS: H100 SXM '1,979 BF16' is 989.4 dense; the RTX 4090's 330 is FP16
    accumulate, BF16 (FP32 accumulate) is 165.2 (Ada whitepaper); 82.6 is its non-tensor FP32 rate."""
    g = core.catalog.gpus()
    assert g.row("H100-SXM")["bf16_dense_tflops"] == 989.4
    assert g.row("RTX-4090")["bf16_dense_tflops"] == 165.2
    assert core.evaluate(gpu="RTX-4090")["train_tflops_per_gpu_peak"] == 165.2
    assert math.isclose(core.evaluate(gpu="RTX-4090", precision="fp32")["train_tflops_per_gpu_peak"], 82.6)


@pytest.mark.parametrize("dtype, bits", [("mxfp4", 4 + 8 / 32), ("nvfp4", 4 + 8 / 16)])
def test_fp4_weight_formats_carry_their_block_scales(dtype, bits):
    """OCP MX v1.0: MXFP4 = FP4 (E2M1) elements in blocks of 32 sharing an 8-bit E8M0 scale; NVIDIA's NVFP4:
    blocks of 16 with an FP8 E4M3 scale.  Layer weights at those bits, embeddings kept at 16 bits."""
    r = core.evaluate(model="Llama-3-70B", weights_dtype=dtype, n_gpus=1)
    linear = r["linear_params"]
    expected = linear * bits / 8 + (r["params_total"] - linear) * 2
    assert r["infer_weights_bytes"] == pytest.approx(expected, rel=1e-12)
    assert r["infer_weights_gib"] < core.evaluate(model="Llama-3-70B", weights_dtype="fp8", n_gpus=1)["infer_weights_gib"] * 0.6


def test_every_reference_key_is_defined_once():
    """A key defined twice would let the second silently replace the first in every citation."""
    import collections

    from gpu_tco.core import references
    keys = collections.Counter(r.key for r in references._REFS)
    assert not [k for k, n in keys.items() if n > 1]
