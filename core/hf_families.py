"""Hugging Face config.json readers for the model families of 2025-2026 whose layers are not all alike:
hybrids of attention and fixed-size-state layers (Mamba-2, Gated DeltaNet, Kimi Delta Attention), sparse
attention with a lightning indexer (DeepSeek-V3.2, GLM-5), per-layer attention patterns with different KV
widths (Gemma 4, MiMo-V2, Step 3.x), latent mixture-of-experts (Nemotron 3), and heterogeneous blocks
(nemotron-nas).  Each reader fills the model catalog's fields (core/data/models.csv columns) so that
``params_total`` of core/formulas.py equals the model's tensors; parameters outside the catalog's per-layer
rules go to ``other_params``.  The source of each count is named at its reader (the model's modeling code in
Hugging Face transformers, vLLM or the model's own repository).

Multi-token-prediction modules (num_nextn_predict_layers, mtp_*) are not counted, like DeepSeek-V3's 671B
(DeepSeek-AI, "DeepSeek-V3 Technical Report", arXiv:2412.19437): they serve speculative decoding only.
"""
from __future__ import annotations

from .errors import InputError

# Bits of one element of a recurrent state as engines keep it: the config's mamba_ssm_cache_dtype /
# mamba_ssm_dtype (float32 in Nemotron 3 and Qwen3.5), else the model's 16-bit dtype (vLLM, "Hybrid models",
# mamba_ssm_cache_dtype engine argument, default "auto" = the model dtype).
_DTYPE_BITS = {"float32": 32, "fp32": 32, "bfloat16": 16, "float16": 16, "bf16": 16, "fp16": 16, "auto": 16}

NEW_FAMILIES = {
    "qwen3_5_text": "Qwen3.5", "qwen3_5_moe_text": "Qwen3.5 MoE", "qwen3_next": "Qwen3-Next",
    "qwen3_vl_text": "Qwen3-VL", "qwen3_vl_moe_text": "Qwen3-VL MoE",
    "deepseek_v32": "DeepSeek-V3.2", "glm_moe_dsa": "GLM-5", "kimi_k2": "Kimi K2", "kimi_linear": "Kimi Linear",
    "deepseek_v4": "DeepSeek-V4", "deepseek_ref": "DeepSeek-V4",
    "minimax_m2": "MiniMax-M2", "minimax_m3": "MiniMax-M3", "gemma4_text": "Gemma 4",
    "nemotron_h": "Nemotron-H", "nemotron-nas": "Nemotron (NAS)", "mimo": "MiMo", "mimo_v2_flash": "MiMo-V2",
    "step3p7": "Step 3.7",
}
# wrapper model_type (a vision-language config) -> the text model's type when text_config has none
WRAPPERS = {"qwen3_5": "qwen3_5_text", "qwen3_5_moe": "qwen3_5_moe_text", "qwen3_vl": "qwen3_vl_text",
            "qwen3_vl_moe": "qwen3_vl_moe_text", "gemma4": "gemma4_text", "kimi_k25": "kimi_k2", "kimi_k3": "kimi_linear",
            "minimax_m3_vl": "minimax_m3"}
NEEDED = {
    "qwen3_5_moe_text": ("num_experts", "num_experts_per_tok", "moe_intermediate_size"),
    "qwen3_vl_moe_text": ("num_experts", "num_experts_per_tok", "moe_intermediate_size"),
    "deepseek_v32": ("n_routed_experts", "num_experts_per_tok", "moe_intermediate_size", "kv_lora_rank", "qk_rope_head_dim",
                     "qk_nope_head_dim", "v_head_dim", "index_n_heads", "index_head_dim", "index_topk"),
    "glm_moe_dsa": ("n_routed_experts", "num_experts_per_tok", "moe_intermediate_size", "kv_lora_rank", "qk_rope_head_dim",
                    "qk_nope_head_dim", "v_head_dim", "index_n_heads", "index_head_dim", "index_topk"),
    "minimax_m2": ("num_local_experts", "num_experts_per_tok"),
    "nemotron_h": ("mamba_num_heads", "mamba_head_dim", "ssm_state_size", "n_groups"),
}
STATE_FLOPS_PER_ELEMENT = 6  # see core/formulas.py state_flops_per_token


def state_bits(c: dict) -> int:
    """Bits of a recurrent-state element: the config's mamba_ssm_cache_dtype or mamba_ssm_dtype, else 16."""
    name = str(c.get("mamba_ssm_cache_dtype") or c.get("mamba_ssm_dtype") or "auto").lower().replace("torch.", "")
    return _DTYPE_BITS.get(name, 16)


def _moe_layer_count(c: dict, L: int, first_key="first_k_dense_replace") -> int:
    """Layers with experts: a list moe_layer_freq (1 = experts) or first_k_dense_replace and an integer frequency."""
    freq = c.get("moe_layer_freq")
    if isinstance(freq, list):
        return sum(1 for x in freq[:L] if x)
    first, step = c.get(first_key) or 0, freq or 1
    return sum(1 for i in range(L) if i >= first and i % step == 0)


def _mla(row: dict, c: dict, need) -> None:
    rope, nope = need("qk_rope_head_dim"), need("qk_nope_head_dim")
    row.update(head_dim=rope + nope, qk_rope_dim=rope, v_head_dim=need("v_head_dim"), kv_lora_rank=need("kv_lora_rank"),
               q_lora_rank=c.get("q_lora_rank") or 0, kv_heads=row["heads"])


def read(mtype: str, c: dict, top: dict, row: dict, need, window, sliding) -> tuple[float, float, float]:
    """Fill ``row`` for a family of NEW_FAMILIES; returns (other_params, sliding window, share of attention layers
    that slide)."""
    L, head_dim = int(row["layers"]), row["head_dim"]
    other = 0
    if mtype in ("qwen3_vl_text", "mimo"):
        # Qwen3-VL's text model is Qwen3 (per-head Q/K norms); MiMo-7B is Qwen2 (Q/K/V biases), its MTP layers not counted
        row["ffn"] = need("intermediate_size")
        if mtype == "mimo":
            row["qkv_bias"] = 1
        else:
            other += L * 2 * head_dim
        sliding = 0.0
    elif mtype == "qwen3_vl_moe_text":
        f = need("moe_intermediate_size")
        row.update(ffn=f, experts=need("num_experts"), active_experts=need("num_experts_per_tok"))
        other += L * 2 * head_dim
        sliding = 0.0
    if mtype in ("qwen3_vl_text", "qwen3_vl_moe_text") and isinstance(top.get("vision_config"), dict):
        row["encoder_params"] = qwen3_vl_vision_params(top["vision_config"])
    elif mtype in ("qwen3_5_text", "qwen3_5_moe_text", "qwen3_next"):
        other, sliding = _qwen3_5(mtype, c, row, need)
    elif mtype in ("deepseek_v32", "glm_moe_dsa", "kimi_k2"):
        _mla(row, c, need)
        row.update(ffn=need("moe_intermediate_size"), experts=need("n_routed_experts"),
                   active_experts=need("num_experts_per_tok"), shared_experts=c.get("n_shared_experts") or 0)
        moe = _moe_layer_count(c, L)
        if moe < L:
            row["dense_layers"], row["dense_ffn"] = L - moe, need("intermediate_size")
        other += moe * row["experts"]  # e_score_correction_bias (topk_method noaux_tc)
        if mtype != "kimi_k2":
            # lightning indexer: DeepSeek-AI, "DeepSeek-V3.2-Exp: Boosting Long-Context Efficiency with DeepSeek Sparse
            # Attention", 2025-09-29, section 2.1; weights counted by core/formulas.py indexer_params_per_layer
            row.update(indexer_heads=need("index_n_heads"), indexer_head_dim=need("index_head_dim"),
                       sparse_attention_tokens=need("index_topk"))
        sliding = 0.0
    elif mtype == "kimi_linear":
        other, sliding = _kimi_linear(c, row, need)
    elif mtype in ("deepseek_v4", "deepseek_ref"):
        other, window, sliding = _deepseek_v4(c, row, need)
    elif mtype in ("minimax_m2", "minimax_m3"):
        other, sliding = _minimax(mtype, c, row, need)
    elif mtype == "gemma4_text":
        other, sliding = _gemma4(c, row, need)
    elif mtype == "nemotron_h":
        other, sliding = _nemotron_h(c, row, need)
    elif mtype == "nemotron-nas":
        other, sliding = _nemotron_nas(c, row, need)
    elif mtype == "mimo_v2_flash":
        other, window, sliding = _mimo_v2(c, row, need)
    elif mtype == "step3p7":
        other, sliding = _step3p7(c, row, need)
    return other, window, sliding


def _layer_types(c: dict, L: int) -> list[str]:
    types = c.get("layer_types")
    if isinstance(types, list) and len(types) == L:
        return [str(t) for t in types]
    interval = c.get("full_attention_interval") or 4
    return ["full_attention" if (i + 1) % interval == 0 else "linear_attention" for i in range(L)]


def _qwen3_5(mtype: str, c: dict, row: dict, need) -> tuple[float, float]:
    """Qwen3.5 / Qwen3-Next: Gated DeltaNet layers (layer_types "linear_attention") between full-attention layers
    whose query projection also yields an output gate (attn_output_gate: Q width doubled) with per-head Q/K norms.
    Gated DeltaNet layer (transformers models/qwen3_next/modeling_qwen3_next.py, Qwen3NextGatedDeltaNet): q, k
    (linear_num_key_heads x linear_key_head_dim each), v and the output gate z (linear_num_value_heads x
    linear_value_head_dim each) from the hidden state, per-value-head beta and decay (2 x value heads), a
    depthwise causal convolution of kernel linear_conv_kernel_dim over q, k, v, A_log and dt_bias per value head,
    a gated RMSNorm of the value head width, and the output projection.  Its state per sequence: value heads x
    key dim x value dim (the delta rule's fast-weight matrix; S. Yang, J. Kautz, A. Hatamizadeh, "Gated Delta
    Networks: Improving Mamba2 with Delta Rule", arXiv:2412.06464, 2024-12-09, section 3) plus the convolution's
    last kernel - 1 inputs."""
    L, h, head_dim = int(row["layers"]), row["hidden"], row["head_dim"]
    types = _layer_types(c, L)
    n_lin = sum(1 for t in types if "linear" in t)
    nk, dk = need("linear_num_key_heads"), need("linear_key_head_dim")
    nv, dv = need("linear_num_value_heads"), need("linear_value_head_dim")
    kernel = c.get("linear_conv_kernel_dim") or 4
    key_dim, value_dim = nk * dk, nv * dv
    conv_dim = 2 * key_dim + value_dim
    mixer = h * (2 * key_dim + 2 * value_dim) + h * 2 * nv + conv_dim * kernel + 2 * nv + dv + value_dim * h
    row.update(state_layers=n_lin, attention_layers=L - n_lin, state_layer_params=mixer,
               state_elements_per_layer=nv * dk * dv, state_conv_elements_per_layer=conv_dim * (kernel - 1),
               state_bits=state_bits(c))
    other = (L - n_lin) * 2 * head_dim  # q_norm, k_norm
    if c.get("attn_output_gate", True):  # q_proj also yields the output gate: a linear like the others (quantized with them)
        q_dim, kv_dim = row["heads"] * head_dim, row["kv_heads"] * head_dim
        row["attention_layer_params"] = h * (2 * q_dim + 2 * kv_dim) + q_dim * h
    if mtype == "qwen3_5_text":
        row["ffn"] = need("intermediate_size")
    else:
        f = need("moe_intermediate_size")
        row.update(ffn=f, experts=need("num_experts"), active_experts=need("num_experts_per_tok"))
        shared = c.get("shared_expert_intermediate_size") or 0
        if shared:
            row["shared_experts"] = shared / f
            other += L * h  # shared_expert_gate
        only = set(c.get("mlp_only_layers") or [])
        step = c.get("decoder_sparse_step") or 1
        moe = sum(1 for i in range(L) if i not in only and (i + 1) % step == 0)
        if moe < L:
            row["dense_layers"], row["dense_ffn"] = L - moe, need("intermediate_size")
    return other, 0.0


def _kimi_linear(c: dict, row: dict, need) -> tuple[float, float]:
    """Kimi Linear: Kimi Delta Attention layers (linear_attn_config.kda_layers, 1-based) between multi-head latent
    attention layers (full_attn_layers); mixture of experts as DeepSeek-V3 (num_experts, num_shared_experts,
    first_k_dense_replace).  KDA layer (Moonshot AI, "Kimi Linear: An Expressive, Efficient Attention
    Architecture", arXiv:2510.26692, 2025-10-30, section 3; modeling_kimi.py KimiDeltaAttention): q, k, v
    projections (num_heads x head_dim each), short convolutions over q, k, v (short_conv_kernel_size), the
    channel-wise decay gate (low-rank h -> head_dim -> heads x head_dim, or full rank), beta per head, the
    output gate (same shape as the decay gate), A_log and dt_bias, the output norm and projection.  State per
    sequence: heads x head_dim x head_dim (float32) plus the convolutions' last kernel - 1 inputs.
    Routed experts of width routed_expert_hidden_size (a latent width) count h -> latent -> h projections in
    other_params."""
    L, h = int(row["layers"]), row["hidden"]
    lin = c.get("linear_attn_config") or {}
    kda = [x for x in (lin.get("kda_layers") or []) if 1 <= x <= L]
    H, d = lin.get("num_heads") or row["heads"], lin.get("head_dim") or 128
    kernel = lin.get("short_conv_kernel_size") or 4
    width = H * d
    gate = h * width if lin.get("use_full_rank_gate") else h * d + d * width
    mixer = 3 * h * width + 3 * width * kernel + 2 * gate + h * H + 2 * H + width + d + width * h
    _mla(row, c, need)
    E = c.get("num_experts") or c.get("n_routed_experts")
    row.update(state_layers=len(kda), attention_layers=L - len(kda), state_layer_params=mixer,
               state_elements_per_layer=H * d * d, state_conv_elements_per_layer=3 * width * (kernel - 1), state_bits=32,
               ffn=need("moe_intermediate_size"), experts=E,
               active_experts=c.get("num_experts_per_token") or c.get("num_experts_per_tok"),
               shared_experts=c.get("num_shared_experts") or c.get("n_shared_experts") or 0)
    moe = _moe_layer_count(c, L)
    if moe < L:
        row["dense_layers"], row["dense_ffn"] = L - moe, need("intermediate_size")
    other = moe * E
    latent = c.get("routed_expert_hidden_size") or 0
    if latent and latent != h:
        row["moe_latent_dim"] = latent
        # shared experts stay at the full width: count them in routed-expert units of the latent width
        row["shared_experts"] = row["shared_experts"] * h / latent
        other += moe * 2 * h * latent
    if c.get("mla_use_output_gate"):
        other += (L - len(kda)) * h * row["heads"] * row["v_head_dim"]
    return other, 0.0


def _deepseek_v4(c: dict, row: dict, need) -> tuple[float, float, float]:
    """DeepSeek-V4 (DeepSeek-AI, "DeepSeek-V4: Towards Highly Efficient Million-Token Context Intelligence", model card,
    2026-04-24, https://huggingface.co/deepseek-ai/DeepSeek-V4-Pro; read approximately): one shared key-value vector of
    head_dim per token (multi-query attention), queries through a q_lora_rank bottleneck, the output through o_groups
    grouped projections of rank o_lora_rank; every layer attends to a window of sliding_window raw tokens and, where
    compress_ratios gives r > 0, to one compressed entry per r tokens (r = 4: compressed sparse attention, whose
    lightning indexer (index_n_heads, index_head_dim) picks the top index_topk entries; r = 128: heavily compressed
    attention, dense); experts as DeepSeek-V3 (the first num_hash_layers route by token hash, no dense layers).  The
    compressed entries count in compressed_kv_layers and indexer_kv_layers as full-context layer equivalents (sum of
    1/r).  Left out: the hyper-connections' few weights (hc_mult); the indexer's weights are counted on every layer.
    q_lora_rank is kept for the indexer (its queries start from the query's low-rank vector); without kv_lora_rank the
    attention is not latent attention, and attention_layer_params holds its weights."""
    L, h, heads, d = int(row["layers"]), row["hidden"], row["heads"], need("head_dim")
    rq, ro, groups = c.get("q_lora_rank") or 0, c.get("o_lora_rank") or 0, c.get("o_groups") or 1
    kv = c.get("num_key_value_heads") or 1
    row.update(kv_heads=kv, ffn=need("moe_intermediate_size"), experts=need("n_routed_experts"),
               active_experts=need("num_experts_per_tok"), shared_experts=c.get("n_shared_experts") or 0,
               indexer_heads=c.get("index_n_heads") or 0, indexer_head_dim=c.get("index_head_dim") or 0,
               sparse_attention_tokens=c.get("index_topk") or 0, q_lora_rank=rq)  # the indexer's queries start from it
    q_part = (h * rq + rq + rq * heads * d) if rq else h * heads * d
    o_part = (heads * d * ro + groups * ro * h) if ro else heads * d * h
    # one cached vector of head_dim per token and KV head serves as key and value: half the K-and-V width each
    row.update(head_dim=d / 2, attention_layer_params=q_part + h * kv * d + o_part)
    ratios = [r for r in (c.get("compress_ratios") or [])[:L] if isinstance(r, (int, float)) and r > 0]
    if ratios:
        sparse_ratio = min(ratios)  # the compressed sparse attention layers, which have the indexer
        row["compressed_kv_layers"] = sum(1 / r for r in ratios)
        row["indexer_kv_layers"] = sum(1 / r for r in ratios if r == sparse_ratio)
    window = c.get("sliding_window") or 0
    return L * row["experts"], window, 1.0 if window else 0.0


def _minimax(mtype: str, c: dict, row: dict, need) -> tuple[float, float]:
    """MiniMax-M2 (transformers models/minimax_m2): grouped-query attention with RMSNorm over the whole Q and K
    (qk_norm_type per_layer: heads x head_dim and kv_heads x head_dim weights), num_local_experts experts of
    intermediate_size, a router bias per expert (use_routing_bias).  MiniMax-M3 adds dense first layers
    (first_k_dense_replace, dense_intermediate_size), a shared expert and per-head Q/K norms, and block-sparse
    attention (sparse_attention_config: sparse_topk_blocks of sparse_block_size tokens chosen by
    sparse_num_index_heads index heads of sparse_index_dim) in the layers sparse_attention_freq marks."""
    L, heads, head_dim = int(row["layers"]), row["heads"], row["head_dim"]
    E = need("num_local_experts")
    f = c.get("moe_intermediate_size") or need("intermediate_size")
    row.update(ffn=f, experts=E, active_experts=need("num_experts_per_tok"))
    shared = c.get("shared_intermediate_size") or 0
    if shared:
        row["shared_experts"] = shared / f * (c.get("n_shared_experts") or 1)
    moe = _moe_layer_count(c, L) if mtype == "minimax_m3" else L
    if moe < L:
        row["dense_layers"], row["dense_ffn"] = L - moe, c.get("dense_intermediate_size") or need("intermediate_size")
    per_layer_norm = c.get("qk_norm_type", "per_layer") == "per_layer"
    qk_norm = (heads + row["kv_heads"]) * head_dim if per_layer_norm else 2 * head_dim
    other = (L * qk_norm if c.get("use_qk_norm", True) else 0) + (moe * E if c.get("use_routing_bias") else 0)
    sparse = c.get("sparse_attention_config") or {}
    if sparse.get("use_sparse_attention"):
        row.update(sparse_attention_tokens=(sparse.get("sparse_topk_blocks") or 0) * (sparse.get("sparse_block_size") or 0),
                   indexer_heads=sparse.get("sparse_num_index_heads") or 0, indexer_head_dim=sparse.get("sparse_index_dim") or 0)
        marks = sparse.get("sparse_attention_freq")
        if isinstance(marks, list) and any(marks):  # only the marked layers keep index keys (the top-k applies to all here)
            row["indexer_kv_layers"] = sum(1 for x in marks[:L] if x)
    return other, 0.0


def _gemma4(c: dict, row: dict, need) -> tuple[float, float]:
    """Gemma 4 (transformers models/gemma4): sliding-window layers (head_dim, num_key_value_heads) and full-attention
    layers (layer_types) with their own key-value heads and width (num_global_key_value_heads, global_head_dim),
    whose values are their keys (attention_k_eq_v: no V projection); Q, K norms per head; four norms per layer and
    a learned per-layer scale; in the mixture-of-experts model (enable_moe_block) every layer has a dense MLP of
    intermediate_size beside num_experts experts of moe_intermediate_size (top_k_experts), a router with a
    per-hidden scale and per-expert scales, and three more norms.  The vision and audio towers are not counted,
    like Gemma 3's text parameters."""
    L, h, heads, d = int(row["layers"]), row["hidden"], row["heads"], row["head_dim"]
    types = _layer_types(c, L) if c.get("layer_types") else ["sliding_attention"] * L
    n_full = sum(1 for t in types if t.startswith("full"))
    g_kv, g_d = c.get("num_global_key_value_heads") or row["kv_heads"], c.get("global_head_dim") or d
    k_eq_v = bool(c.get("attention_k_eq_v"))
    row["norms_per_layer"] = 4
    if n_full:
        row.update(global_kv_heads=g_kv, global_head_dim=g_d)
    local = h * (heads * d + 2 * row["kv_heads"] * d) + heads * d * h
    full = h * (heads * g_d + (1 if k_eq_v else 2) * g_kv * g_d) + heads * g_d * h
    row["attention_layer_params"] = (n_full * full + (L - n_full) * local) / L
    other = (L - n_full) * 2 * d + n_full * 2 * g_d + L  # Q/K norms, layer scale
    if c.get("enable_moe_block"):
        f, E = need("moe_intermediate_size"), need("num_experts")
        f_dense = need("intermediate_size")
        row.update(ffn=f, experts=E, active_experts=c.get("top_k_experts") or need("num_experts_per_tok"),
                   shared_experts=f_dense / f)  # the dense MLP beside the experts runs for every token, like a shared expert
        other += L * (h + E + 3 * h)  # router scale, per-expert scale, three more norms
    else:
        row["ffn"] = need("intermediate_size")
    return other, (L - n_full) / L


def _block_kinds(c: dict) -> list[str]:
    kinds = c.get("layers_block_type")
    if isinstance(kinds, list) and kinds:
        return [{"mamba": "M", "attention": "*", "moe": "E", "mlp": "-"}.get(str(k), "?") for k in kinds]
    pattern = str(c.get("hybrid_override_pattern") or "")
    if not pattern:
        raise InputError("model.hybrid_override_pattern", None, "is missing from this nemotron_h config.json; it needs "
                                                                "hybrid_override_pattern or layers_block_type")
    return list(pattern)


def _nemotron_h(c: dict, row: dict, need) -> tuple[float, float]:
    """Nemotron-H and Nemotron 3 (transformers models/nemotron_h, NVIDIA's modeling_nemotron_h.py): a stack of
    blocks, each one norm and one mixer: Mamba-2 ("M"), attention ("*"), an MLP ("-", squared-ReLU, not gated) or
    a mixture of experts ("E": routed experts, a shared expert of moe_shared_expert_intermediate_size, a router
    with a per-expert correction bias; with moe_latent_size the routed experts work in that latent width between
    two projections).  The catalog's layers are the MLP or expert blocks; attention_layers and state_layers count
    the others; norms_per_layer spreads the blocks' norms over them.
    Mamba-2 block (T. Dao, A. Gu, "Transformers are SSMs", arXiv:2405.21060, 2024-05-31, section 7): in_proj to
    z and x (d_inner = mamba_num_heads x mamba_head_dim each), B and C (n_groups x ssm_state_size each) and dt
    (one per head); a depthwise convolution with bias over x, B, C (conv_kernel); A_log, D, dt_bias per head; a
    gated RMSNorm of d_inner; out_proj.  State per sequence: heads x head_dim x ssm_state_size, plus the
    convolution's last conv_kernel - 1 inputs."""
    h = row["hidden"]
    kinds = _block_kinds(c)
    n = {k: kinds.count(k) for k in "M*E-"}
    ffn_blocks = n["E"] + n["-"]
    if not ffn_blocks:
        raise InputError("model.hybrid_override_pattern", "".join(kinds), "has no MLP or expert block; gpu-tco reads "
                                                                          "Nemotron-H stacks with MLP (-) or expert (E) blocks")
    H, P, N, G = need("mamba_num_heads"), need("mamba_head_dim"), need("ssm_state_size"), need("n_groups")
    kernel = c.get("conv_kernel") or 4
    d_inner = H * P
    conv_dim = d_inner + 2 * G * N
    mixer = h * (2 * d_inner + 2 * G * N + H) + conv_dim * kernel + (conv_dim if c.get("use_conv_bias", True) else 0) \
        + 3 * H + d_inner + d_inner * h
    head_dim = c.get("head_dim") or c.get("attention_head_dim") or h / row["heads"]
    row.update(layers=ffn_blocks, attention_layers=n["*"], state_layers=n["M"], state_layer_params=mixer,
               state_elements_per_layer=H * P * N, state_conv_elements_per_layer=conv_dim * (kernel - 1),
               state_bits=state_bits(c), gated_mlp=0, head_dim=head_dim,
               norms_per_layer=len(kinds) / ffn_blocks)
    if row["attention_layers"] == 0:
        raise InputError("model.hybrid_override_pattern", "".join(kinds), "has no attention block (*); gpu-tco reads hybrids")
    other = 0
    if n["E"]:
        f, E = need("moe_intermediate_size"), need("n_routed_experts")
        latent = c.get("moe_latent_size") or 0
        width = latent or h
        shared = (c.get("moe_shared_expert_intermediate_size") or 0) * (c.get("n_shared_experts") or 1)
        row.update(ffn=f, experts=E, active_experts=need("num_experts_per_tok"), shared_experts=shared * h / (f * width))
        other += n["E"] * E  # e_score_correction_bias
        if latent:
            row["moe_latent_dim"] = latent
            other += n["E"] * 2 * h * latent  # fc1_latent_proj, fc2_latent_proj
        if n["-"]:
            row["dense_layers"], row["dense_ffn"] = n["-"], need("intermediate_size")
    else:
        row["ffn"] = need("intermediate_size")
    return other, 0.0


def _nemotron_nas(c: dict, row: dict, need) -> tuple[float, float]:
    """nemotron-nas (Llama-3.3-Nemotron-Super/Ultra, DeciLM; NVIDIA's modeling_decilm.py): per-layer block_configs
    found by neural architecture search: attention with n_heads_in_group query heads per KV head, skipped (no_op)
    or replaced by one hidden x hidden linear; an MLP of ffn_mult (intermediate = 2/3 x ffn_mult x hidden rounded
    up to a multiple of 256), skipped, or a linear.  The catalog takes the mean MLP width of the layers (ffn) and
    counts attention in attention_layers with the most common KV-head count (the mean attention layer's weights
    in attention_layer_params when layers differ); linears replacing a block and the
    rest of the per-layer differences go to other_params."""
    L, h, heads, d = int(row["layers"]), row["hidden"], row["heads"], row["head_dim"]
    blocks = c.get("block_configs")
    if not isinstance(blocks, list) or len(blocks) != L:
        raise InputError("model.block_configs", None, "is missing or not one entry per layer in this nemotron-nas config.json")
    attn_kv, mlp_widths, other, norms = [], [], 0, 0
    for b in blocks:
        at, ff = b.get("attention") or {}, b.get("ffn") or {}
        if at.get("replace_with_linear"):
            other += h * h
        elif not at.get("no_op"):
            attn_kv.append(heads // (at.get("n_heads_in_group") or 1))
            norms += 1
        if ff.get("replace_with_linear"):
            other += h * h
        elif not ff.get("no_op"):
            width = int(2 * (ff.get("ffn_mult") or 0) * h / 3)
            mlp_widths.append(width + (-width) % 256)
            norms += 1
    kv = max(set(attn_kv), key=attn_kv.count) if attn_kv else 1
    row.update(kv_heads=kv, attention_layers=len(attn_kv), norms_per_layer=norms / L)
    if len(set(attn_kv)) > 1:  # layers differ in KV heads: the mean attention layer's weights
        row["attention_layer_params"] = sum(2 * h * heads * d + 2 * h * k * d for k in attn_kv) / len(attn_kv)
    total_mlp = sum(mlp_widths)
    row["ffn"] = max(1, total_mlp // L)
    other += 3 * h * (total_mlp - row["ffn"] * L)
    return other, 0.0


def _mimo_v2(c: dict, row: dict, need) -> tuple[float, float, float]:
    """MiMo-V2-Flash (XiaomiMiMo, modeling_mimo_v2_flash.py): sliding-window layers (hybrid_layer_pattern 1;
    swa_num_key_value_heads) and full-attention layers (num_key_value_heads) with query/key width head_dim and
    value width v_head_dim; a learned attention-sink bias per head in the sliding layers; experts as DeepSeek-V3
    without shared experts (moe_layer_freq lists the expert layers)."""
    L, h, heads = int(row["layers"]), row["hidden"], row["heads"]
    pattern = c.get("hybrid_layer_pattern") or [0] * L
    n_swa = sum(1 for x in pattern[:L] if x)
    dq, dv = need("head_dim"), c.get("v_head_dim") or need("head_dim")
    kv_full, kv_swa = row["kv_heads"], c.get("swa_num_key_value_heads") or row["kv_heads"]
    # head_dim (dq + dv) / 2: K and V widths, and the FLOPs of Q.K and P.V, as the catalog's rules count them
    row.update(kv_heads=kv_swa, head_dim=(dq + dv) / 2, global_kv_heads=kv_full, global_head_dim=(dq + dv) / 2,
               ffn=need("moe_intermediate_size"), experts=need("n_routed_experts"), active_experts=need("num_experts_per_tok"),
               shared_experts=c.get("n_shared_experts") or 0)
    moe = _moe_layer_count(c, L)
    if moe < L:
        row["dense_layers"], row["dense_ffn"] = L - moe, need("intermediate_size")
    per_layer = lambda kv: h * heads * dq + h * kv * (dq + dv) + heads * dv * h  # noqa: E731
    row["attention_layer_params"] = (n_swa * per_layer(kv_swa) + (L - n_swa) * per_layer(kv_full)) / L
    other = moe * row["experts"] + (n_swa * heads if c.get("add_swa_attention_sink_bias") else 0)
    return other, c.get("sliding_window") or c.get("sliding_window_size") or 0, n_swa / L


def _step3p7(c: dict, row: dict, need) -> tuple[float, float]:
    """Step 3.7 Flash (stepfun-ai, modeling_step3p7.py, read approximately): grouped-query attention with sliding and
    full layers (layer_types, sliding_window), dense first layers (first_k_dense_replace), num_experts experts of
    moe_intermediate_size with one shared expert of share_expert_dim and a router bias per expert."""
    L = int(row["layers"])
    f = need("moe_intermediate_size")
    row.update(ffn=f, experts=need("num_experts"), active_experts=need("num_experts_per_tok"),
               shared_experts=(c.get("share_expert_dim") or 0) / f * (c.get("n_shared_experts") or 1))
    moe = _moe_layer_count(c, L)
    if moe < L:
        row["dense_layers"], row["dense_ffn"] = L - moe, need("intermediate_size")
    types = _layer_types(c, L) if c.get("layer_types") else ["full_attention"] * L
    return moe * row["experts"] * bool(c.get("use_moe_router_bias")), sum(1 for t in types if "sliding" in t) / L


def qwen3_vl_vision_params(v: dict) -> int:
    """Parameters of Qwen3-VL's vision encoder (transformers models/qwen3_vl/modeling_qwen3_vl.py): a biased 3-D patch
    embedding (channels x temporal_patch_size x patch_size^2 -> hidden), learned positions, ``depth`` blocks (two
    LayerNorms, biased QKV and output projections, a biased two-layer MLP), and the patch merger plus one merger per
    deepstack_visual_indexes entry (a LayerNorm, then merged -> merged -> out_hidden_size, biased; merged = hidden x
    spatial_merge_size^2)."""
    d, f, depth = v["hidden_size"], v["intermediate_size"], v["depth"]
    patch, tp, ch = v.get("patch_size", 16), v.get("temporal_patch_size", 2), v.get("in_channels", 3)
    merged = d * v.get("spatial_merge_size", 2) ** 2
    out = v.get("out_hidden_size") or d
    block = 2 * 2 * d + (d * 3 * d + 3 * d) + (d * d + d) + (d * f + f) + (f * d + d)
    merger = (merged * merged + merged) + (merged * out + out)
    deepstack = len(v.get("deepstack_visual_indexes") or [])
    return int(ch * tp * patch * patch * d + d + v.get("num_position_embeddings", 0) * d + depth * block
               + (merger + 2 * d) + deepstack * (merger + 2 * merged))
