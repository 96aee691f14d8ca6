"""Every quantity gpu-tco computes, each defined exactly once.

Each ``q(...)`` call registers one quantity: its name, unit, description,
the expression (over inputs, earlier quantities and catalog lookups) and
the source of the formula.  Python values, NumPy sweeps, Excel formulas and
explanations are all rendered from these expressions (see ``expr.py``).

Symbols.  The formulas read as algebra; each short name below stands for exactly
one thing, defined once further down (M: a field of the chosen model's row, G: of
the GPU's row, OF: of the offer's row, T: of another catalog's row, I: an input):

    ========  =================================================  ============  =====================
    symbol    meaning                                            unit          defined as
    ========  =================================================  ============  =====================
    L         layers of the model                                layers        M("layers")
    h         hidden size (width of the residual stream)         -             M("hidden")
    f         MLP (feed-forward) width of one expert             -             M("ffn")
    f_dense   MLP width of the dense layers of a mixture model   -             dense_ffn, else f
    a         attention (query) heads                            heads         M("heads")
    n_kv      key/value heads (fewer with grouped queries)       heads         M("kv_heads")
    d         width of one attention head                        -             M("head_dim")
    d_v       width of one value head (latent attention)         -             v_head_dim, else d
    V         vocabulary size                                    tokens        M("vocab")
    E         routed experts per layer (1: a dense model)        experts       M("experts")
    k_act     routed experts each token uses                     experts       M("active_experts")
    S         shared experts every token uses                    experts       M("shared_experts")
    n_dense   dense layers of a mixture-of-experts model         layers        M("dense_layers")
    r_q       query low-rank width (latent attention)            -             M("q_lora_rank")
    r_kv      cached key/value low-rank width (latent attention) -             M("kv_lora_rank")
    d_rope    rotary key width per head (latent attention)       -             M("qk_rope_dim")
    t         tensor-parallel degree                             GPUs          I.tensor_parallel
    N         data-parallel (sharding) degree = n_gpus / t       GPUs          dp_size
    s         training sequence length                           tokens        I.seq_len
    b         micro-batch per GPU                                sequences     I.micro_batch
    e         bytes of one stored activation value               bytes         precision's activation_bytes
    frag      memory lost to allocator fragmentation, fraction   -             fragmentation_pct / 100
    ctx       context a served sequence holds                    tokens        I.context_tokens
    years     the ownership period                               years         I.months / 12
    r         discount rate per year, as a fraction              1/year        discount_rate_pct / 100
    ========  =================================================  ============  =====================

The lookups ``prec``, ``opt``, ``shard``, ``rec``, ``wd`` and ``tgt`` read a field of the chosen
precision, optimizer, sharding, recomputation, inference weight format and LoRA targets rows.

Quantities are registered per group (the section of docs/quantities.md and of the workbook's
Calc sheet they are listed in): ``q = quantities_of("memory")`` starts a group, and every
``q(...)`` below it, up to the next such line, belongs to that group.
"""
from __future__ import annotations

from dataclasses import dataclass

from .expr import AND, CEILING, EQ, FLOOR, IF, LN, MAX, MIN, NOT, OR, SQRT, Expr, Lookup, Ref, wrap
from .inputs import BY_NAME, HOST_MEMORY_USABLE

GIB = 2 ** 30  # bytes in a GiB: GPU memory is sold in binary units (an "80 GB" H100 holds 80 GiB)


@dataclass(frozen=True)
class Quantity:
    name: str
    unit: str
    description: str
    expr: Expr
    source: str
    group: str


QUANTITIES: dict[str, Quantity] = {}


def quantities_of(group: str):
    """The function that registers the quantities of ``group``: ``q(name, unit, description, expr, source)``
    adds one to QUANTITIES and returns a reference to it for the formulas below."""
    def q(name: str, unit: str, description: str, expr, source: str = "") -> Ref:
        if name in QUANTITIES or name in BY_NAME:
            raise ValueError(f"{name} is defined twice")
        QUANTITIES[name] = Quantity(name, unit, description, wrap(expr), source, group)
        return Ref(name)
    return q


class _Inputs:
    def __getattr__(self, name):
        if name not in BY_NAME:
            raise AttributeError(f"no input named {name}")
        return Ref(name)


I = _Inputs()


def M(field):  # field of the model row
    return Lookup("models", "model", field)


def G(field):  # field of the GPU row
    return Lookup("gpus", "gpu", field)


def T(table, key, field):
    return Lookup(table, key, field)


def OF(field):  # field of the offer row
    return Lookup("offers", "offer", field)


KORTHIKANTI = "[korthikanti2022] section 4"
ZERO = "[zero2020] sections 3-5"

# ---------------------------------------------------------------------------
q = quantities_of("architecture")
L, h, f = M("layers"), M("hidden"), M("ffn")
a, n_kv, d, V = M("heads"), M("kv_heads"), M("head_dim"), M("vocab")
E, k_act = M("experts"), M("active_experts")

S = M("shared_experts")
n_dense = M("dense_layers")
moe_layers = q("expert_layers", "layers", "Layers with experts (a dense model's layers count here, with one expert each) = layers - dense_layers",
               L - n_dense, "[deepseekv3_2024] (3 of 61 dense); [llama4_2025] (Maverick: 24 of 48 dense)")
f_dense = q("dense_ffn_width", "-", "MLP width of the dense layers of a mixture-of-experts model (dense_ffn; ffn when 0)",
            IF(M("dense_ffn") > 0, M("dense_ffn"), f))
r_q, r_kv, d_rope = M("q_lora_rank"), M("kv_lora_rank"), M("qk_rope_dim")
mla = Ref("latent_attention")  # multi-head latent attention (DeepSeek-V2/V3): K and V cached as one compressed vector
d_v = IF(M("v_head_dim") > 0, M("v_head_dim"), d)

q("latent_attention", "flag", "1 = multi-head latent attention (kv_lora_rank > 0): K and V come from one cached low-rank vector",
  r_kv > 0, "[deepseekv2_2024] section 2.1")
q_dim = q("q_dim", "-", "Width of the query and attention-output projections = heads x head_dim", a * d)
mla_kv_down = q("mla_kv_down_width", "-", "Latent attention: the cached vector per token and layer = kv_lora_rank + rotary key width",
                r_kv + d_rope, "[deepseekv2_2024] section 2.1")
mla_kv_up = q("mla_kv_up_width", "-", "Latent attention: K (without the rotary part) and V widths of all heads, rebuilt from the cached vector",
              a * (d - d_rope + d_v), "[deepseekv2_2024] section 2.1")
mla_value = q("mla_value_width", "-", "Latent attention: value width of all heads = heads x v_head_dim (the output projection's input)",
              a * d_v)
kv_dim = q("kv_dim", "-", "Width of the key and value projections = kv_heads x head_dim (grouped-query attention: fewer KV heads)",
           n_kv * d)
n_state = M("state_layers")
attn_layers = q(
    "attention_layers_used", "layers",
    "Layers with softmax attention, whose KV cache grows with the context: attention_layers, or layers - state_layers when 0",
    IF(M("attention_layers") > 0, M("attention_layers"), L - n_state),
    "[qwen3next_2025] (3 of 4 layers Gated DeltaNet); [nemotronh_2025] (Mamba-2 hybrids); [kimilinear_2025]")
state_mixer_params = q(
    "state_mixer_params", "params",
    "Weights of the fixed-state token mixers (Mamba-2, Gated DeltaNet, Kimi Delta Attention) = state_layers x state_layer_params",
    n_state * M("state_layer_params"), "[mamba2_2024] section 7; [gateddeltanet2024] section 3; [kimilinear_2025] section 3")
H_idx, d_idx = M("indexer_heads"), M("indexer_head_dim")
indexer_params = q(
    "indexer_params_per_layer", "params",
    "Sparse attention's lightning indexer per attention layer: query up-projection (from the query low-rank vector, or the "
    "hidden state) to indexer_heads x indexer_head_dim, one shared key projection and its LayerNorm, one weight per head",
    IF(H_idx > 0, IF(r_q > 0, r_q, h) * H_idx * d_idx + h * d_idx + 2 * d_idx + h * H_idx, 0),
    "[dsa_2025] section 2.1 (lightning indexer); [dsa_code_2025] (Indexer: wq_b, wk, k_norm, weights_proj)")
attn_params_per_layer = q(
    "attn_params_per_layer", "params",
    "Attention weights per layer: Q, K, V, O projections (+ QKV biases); with latent attention the down- and up-projections "
    "of Q (rank q_lora_rank) and of K/V (rank kv_lora_rank, plus the shared rotary key) and their norms",
    IF(mla,
       q("mla_attn_params_per_layer", "params",
         "Latent attention weights per layer: Q down (rank q_lora_rank) and up, K/V down (rank kv_lora_rank, plus the shared "
         "rotary key) and up, O, and the two low-rank norms",
         IF(r_q > 0, h * r_q + r_q + r_q * q_dim, h * q_dim) + h * mla_kv_down + r_kv + r_kv * mla_kv_up + mla_value * h,
         "[deepseekv2_2024] section 2.1"),
       IF(M("attention_layer_params") > 0, M("attention_layer_params"),
          h * (q_dim + 2 * kv_dim) + q_dim * h + M("qkv_bias") * (q_dim + 2 * kv_dim))),
    "[gqa2023]: K and V projections have kv_heads heads; [llama2_2023]; [deepseekv2_2024] section 2.1 (latent attention); "
    "attention_layer_params where the attention layers differ from one another (read from the config.json)")
mlp_params_per_expert = q(
    "mlp_params_per_expert", "params",
    "MLP weights of one expert (gated: gate, up, down; plain: up, down), in moe_latent_dim when the experts work in a latent width",
    (2 + M("gated_mlp")) * IF(M("moe_latent_dim") > 0, M("moe_latent_dim"), h) * f,
    "[glu2020]; gated (SwiGLU) MLPs in [llama2_2023] and [mixtral2024]; latent experts in [nemotron3_2025]")
dense_mlp_params = q(
    "dense_mlp_params", "params", "MLP weights of a dense layer in a mixture-of-experts model (width dense_ffn; 0 layers in most models)",
    (2 + M("gated_mlp")) * h * f_dense, "[deepseekv3_2024] (first 3 layers dense); [llama4_2025] (Maverick: every other layer dense)")
router_params_per_layer = q(
    "router_params_per_layer", "params", "MoE router weights per layer (0 for dense models)",
    IF(E > 1, h * E, 0), "[mixtral2024] section 2.1")
layer_params = q(
    "layer_params", "params", "All weights of one transformer layer (an expert layer: routed and shared experts, router, norms)",
    attn_params_per_layer + q("experts_held_per_layer", "experts", "Experts held per expert layer: routed + shared", E + S)
    * mlp_params_per_expert + router_params_per_layer + M("norms_per_layer") * h)
embedding_params = q(
    "embedding_params", "params", "Token embedding plus LM head (one matrix when tied)",
    V * h * (2 - M("tied_embeddings")))
params_total = q(
    "params_total", "params", "Total parameters P (MoE: all experts); memory uses this",
    attn_layers * (attn_params_per_layer + indexer_params) + state_mixer_params
    + moe_layers * (Ref("experts_held_per_layer") * mlp_params_per_expert + router_params_per_layer)
    + n_dense * dense_mlp_params + L * M("norms_per_layer") * h
    + embedding_params + h + M("other_params") + M("encoder_params"),
    "P = V*h*(2 if untied) + attention layers x (attention + indexer) + state layers x their mixer + expert layers x ((routed "
    "+ shared experts) x MLP + router) + dense layers x MLP + layers x norms + h + an image encoder's parameters; checked "
    "against the published counts ([llama3_2024] Table 3, [mixtral2024], [deepseekv3_2024], [llama4_2025], and the "
    "2025-2026 model cards in tests)")
embedding_lookup_params = q(
    "embedding_lookup_params", "params",
    "Input embedding matrix of an untied model: a table lookup (one row per token read), not a matrix product, so not "
    "active compute (0 when tied: the one matrix is the output projection, which is a matmul and counts)",
    V * h * (1 - M("tied_embeddings")), "[gptoss2025] Table 1 (active parameters count the unembedding, not the embedding)")
params_active = q(
    "params_active", "params",
    "Parameters multiplied per text token, as compute counts them: MoE active experts only, no image encoder, no input "
    "embedding lookup (the output projection counts, tied or not); FLOPs per token and the weights a decode step reads use "
    "this. OpenAI's convention: gpt-oss-120b 5.13 B active",
    params_total - moe_layers * (E - k_act) * mlp_params_per_expert - M("encoder_params") - embedding_lookup_params,
    "[gptoss2025] Table 1 (5.13B active for gpt-oss-120b, counting the unembedding but not the embedding); "
    "[mixtral2024]: 47B parameters, 13B active per token")
q("params_total_b", "billion params", "Total parameters in billions", params_total / 1e9)
q("params_active_b", "billion params",
  "Active parameters per token in billions, without the input embedding lookup (OpenAI's gpt-oss convention: 5.13 B for "
  "gpt-oss-120b); the figure Mistral, Meta and Qwen publish adds the embedding (params_active_incl_embedding_b)",
  params_active / 1e9, "[gptoss2025] Table 1")
q("params_active_incl_embedding_b", "billion params",
  "Active parameters per token in billions counting the input embedding matrix too, as Mistral (Mixtral 8x7B: 12.9 B), "
  "Meta (Llama 4 Maverick: 17 B) and Qwen (Qwen3-30B-A3B: 3.3 B) publish them; DeepSeek-V3's 37 B fits either convention "
  "(36.6 B without, 37.6 B with)",
  (params_active + embedding_lookup_params) / 1e9, "[mixtral2024]; [llama4_2025]; [deepseekv3_2024]")
linear_params = q(
    "linear_params", "params", "Weights inside transformer-layer linears (what QLoRA/AWQ/GPTQ quantize)",
    attn_layers * (attn_params_per_layer + indexer_params) + state_mixer_params
    + moe_layers * Ref("experts_held_per_layer") * mlp_params_per_expert + n_dense * dense_mlp_params)
STATE_FLOPS_PER_ELEMENT = 6  # forward FLOPs per state element and token, see state_flops_per_token
state_flops_per_token = q(
    "state_flops_per_token", "FLOP/token",
    "Forward FLOPs of the fixed-state layers' recurrences per token (their projections are in the active parameters) = "
    "state_layers x 6 x state elements: decay the state, read it with the key, write the rank-1 update, read it with the query",
    n_state * STATE_FLOPS_PER_ELEMENT * M("state_elements_per_layer"),
    "[mamba2_2024] section 3 (recurrent form h = A h + B x, y = C h: about 5 FLOPs per state element); [gateddeltanet2024] "
    "section 3 (delta rule: S = a S (I - b k k^T) + b v k^T, o = S q: about 7)")
sparse_k = M("sparse_attention_tokens")


def attention_span(tokens):
    """Tokens each query attends to: all ``tokens``, or the sparse attention's top-k selection when fewer."""
    return IF(sparse_k > 0, MIN(tokens, sparse_k), tokens)


def mixer_flops(tokens, per_pair):
    """Attention FLOPs per token over ``tokens`` keys, ``per_pair`` FLOPs per query-key pair and query width (4: forward
    QK and PV; 12: training), in the attention layers (sparse: the top-k keys, and the indexer's 2 x heads x dim
    per key over all of them), plus the fixed-state layers' recurrences (per_pair / 4 forward passes)."""
    return per_pair * attn_layers * (attention_span(tokens) * q_dim + tokens * H_idx * d_idx / 2) \
        + per_pair / 4 * state_flops_per_token


q("model_is_estimate", "flag", "1 = the architecture was estimated from a bare parameter count", M("is_estimate"))

# ---------------------------------------------------------------------------
q = quantities_of("lora")
tgt = lambda fld: T("lora_targets", "lora_targets", fld)  # noqa: E731
is_lora = T("methods", "method", "lora")
lora_mla_attn_dims = q(
    "lora_mla_attn_dims_per_layer", "-",
    "Latent attention: (d_in + d_out) over the adapted Q down/up, KV down/up (for K or V targets) and O projections",
    tgt("q") * IF(r_q > 0, h + 2 * r_q + q_dim, h + q_dim)
    + MAX(tgt("k"), tgt("v")) * (h + mla_kv_down + r_kv + mla_kv_up) + tgt("o") * (mla_value + h),
    "[deepseekv2_2024] section 2.1 (the projections of latent attention)")
lora_attn_dims = q(
    "lora_attn_dims_per_layer", "-", "Sum of (d_in + d_out) over the adapted attention projections of one layer (Q, K, V, O)",
    IF(mla, lora_mla_attn_dims, tgt("q") * (h + q_dim) + (tgt("k") + tgt("v")) * (h + kv_dim) + tgt("o") * (q_dim + h)))
mlp_dims = lambda width: tgt("gate") * M("gated_mlp") * (h + width) + tgt("up") * (h + width) + tgt("down") * (width + h)  # noqa: E731
lora_mlp_dims = q(
    "lora_mlp_dims_per_layer", "-", "Sum of (d_in + d_out) over the adapted MLP matrices of one layer (gate, up, down; each expert)",
    Ref("experts_held_per_layer") * mlp_dims(f))
lora_dims_per_layer = q(
    "lora_dims_per_layer", "-", "Sum of (d_in + d_out) over the adapted linears of one layer (experts counted each)",
    lora_attn_dims + lora_mlp_dims,
    "[lora2021] section 4.1: adapter B (d_out x r) A (r x d_in) per adapted matrix")
# The input each adapter reads: PEFT keeps every adapter in fp32 (get_peft_model's autocast_adapter_dtype, on by default)
# and casts each adapted layer's input to fp32 before A; A keeps that copy for its weight gradient, one per adapted
# matrix (q, k and v each cast the same normed input).  Per token, a mixture-of-experts layer feeds its active experts.
lora_attn_in_dims = q(
    "lora_attention_input_dims_per_layer", "-", "Sum of d_in over the adapted attention projections of one layer, each matrix "
    "counted (latent attention: the Q and KV down-projections read the hidden state, O reads the value width)",
    IF(mla, (tgt("q") + MAX(tgt("k"), tgt("v"))) * h + tgt("o") * mla_value, (tgt("q") + tgt("k") + tgt("v")) * h + tgt("o") * q_dim),
    "[lora2021] section 4.1 (A reads the layer's input)")
lora_in_dims = q(
    "lora_input_dims_per_layer", "-", "Sum of d_in over the adapted linears of one layer, each matrix counted (a token's active "
    "experts for the expert MLPs)",
    lora_attn_in_dims + IF(E > 1, k_act, 1) * (tgt("gate") * M("gated_mlp") * h + tgt("up") * h + tgt("down") * f),
    "[lora2021] section 4.1 (A reads the layer's input); [peft_adapter_dtype] (the input cast to the adapter's dtype per layer)")
lora_params = q(
    "lora_params", "params", "Trainable LoRA adapter parameters r*(d_in+d_out) summed over adapted linears (0 unless LoRA/QLoRA)",
    is_lora * I.lora_rank * (moe_layers * lora_dims_per_layer + n_dense * (lora_attn_dims + mlp_dims(f_dense))),
    "[lora2021]; all seven linears adapted as in [qlora2023] (Llama-3-8B at r 16: 41,943,040)")
trainable_params = q(
    "trainable_params", "params", "Parameters that receive gradients and optimizer states",
    IF(is_lora, lora_params, params_total))

# ---------------------------------------------------------------------------
q = quantities_of("training memory")
prec = lambda fld: T("precisions", "precision", fld)  # noqa: E731
opt = lambda fld: T("optimizers", "optimizer", fld)  # noqa: E731
shard = lambda fld: T("shardings", "sharding", fld)  # noqa: E731
rec = lambda fld: T("recomputes", "recompute", fld)  # noqa: E731
fw = lambda fld: T("frameworks", "framework", fld)  # noqa: E731
mw = lambda fld: T("master_weights", "master_weights", fld)  # noqa: E731
sdt = lambda fld: T("state_dtypes", "optimizer_state_dtype", fld)  # noqa: E731
qc = lambda fld: T("qlora_casts", "qlora_fp32_casts", fld)  # noqa: E731
ad = lambda fld: T("adapter_dtypes", "lora_adapter_dtype", fld)  # noqa: E731
t = I.tensor_parallel
pp, cp, ep = I.pipeline_parallel, I.context_parallel, I.expert_parallel
dp_size = q("dp_size", "GPUs",
            "Sharding degree N = n_gpus / (tensor_parallel x pipeline_parallel): the GPUs that hold the same layers; "
            "context-parallel GPUs count here (they hold the same weights and average their gradients)",
            I.n_gpus / (t * pp), "[megatron_cp] (the distributed optimizer shards over data x context parallel GPUs)")
q("data_parallel_size", "GPUs", "Data-parallel degree (model replicas) = n_gpus / (tensor x pipeline x context parallel)",
  I.n_gpus / (t * pp * cp), "[narayanan2021] section 2 (n = t x p x d); [megatron_cp]")
m_pipe = q("pipeline_microbatches_used", "micro-batches",
           "Micro-batches per optimizer step of one data-parallel rank (a pipeline step's micro-batches, gradient accumulation): "
           "pipeline_microbatches, or 8 x pipeline_parallel with pipelining and 1 without",
           IF(I.pipeline_microbatches > 0, I.pipeline_microbatches, IF(pp > 1, 8 * pp, 1)), "[narayanan2021] section 2.2")
expert_share = q(
    "routed_expert_share", "fraction", "Share of the parameters in routed experts (what expert parallelism splits); 0 for a dense model",
    IF(E > 1, moe_layers * E * mlp_params_per_expert / params_total, 0), "[megatron_moe] (expert parallelism)")
ep_keep = q(
    "expert_parallel_keep", "fraction",
    "Share of the unsharded states one GPU keeps under expert parallelism = 1 - routed share x (1 - 1/expert_parallel)",
    1 - expert_share * (1 - 1 / ep), "[megatron_moe]: each GPU of an expert-parallel group holds experts / EP")

fp32_adapters = q(
    "lora_fp32_adapters_on", "flag",
    "1 = LoRA adapters kept in fp32 (the lora_adapter_dtype input, or with auto the framework's convention, frameworks "
    "catalog lora_fp32_adapter_inputs: PEFT 0.12 and later); 0 without LoRA or with 16-bit adapters",
    AND(is_lora, IF(ad("follows_framework"), fw("lora_fp32_adapter_inputs") > 0, ad("fp32_adapters") > 0)),
    "[peft_adapter_dtype] (get_peft_model autocast_adapter_dtype=True upcasts the adapters to fp32)")
weight_bytes_per_param = q(
    "train_weight_bytes_per_param", "bytes/param",
    "Bytes per weight held for training: the precision's, or 4 with fp32 weights under autocast (master_weights fp32_autocast)",
    IF(mw("weight_bytes") > 0, mw("weight_bytes"), prec("weight_bytes")),
    "[pytorch_amp] (autocast keeps the weights in fp32 and casts them per operation)")
base_bits = T("methods", "method", "base_bits_per_param")
quantized_base = T("methods", "method", "quantized_base")
adapter_bytes = q(
    "lora_adapter_bytes_per_param", "bytes/param",
    "Bytes per LoRA adapter weight: 4 for adapters kept in fp32 (lora_fp32_adapters_on; their gradients and torch "
    "optimizer states are fp32 too), else QLoRA's 2 (bf16 adapters beside the 4-bit base) or the training weights' bytes",
    IF(fp32_adapters, 4, IF(quantized_base, 2, weight_bytes_per_param)),
    "[peft_adapter_dtype] (get_peft_model upcasts the adapter weights to fp32); [pytorch_adamw] (states in the "
    "parameter's dtype); [qlora2023] section 3 (bf16 adapters)")
qlora_casts_on = q(
    "qlora_fp32_casts_on", "flag",
    "1 = a QLoRA run whose embeddings, output layer and norms are cast to fp32 (PEFT's prepare_model_for_kbit_training: the "
    "framework's convention or the qlora_fp32_casts input); the hidden states then flow in fp32",
    AND(quantized_base, IF(qc("follows_framework"), fw("qlora_fp32_casts"), qc("fp32_casts"))),
    "[peft_kbit] (every non-quantized parameter cast to float32); [bnb_linear4bit] (the 4-bit layer returns its input's dtype)")
trained_bytes = q(
    "trained_bytes_per_param", "bytes/param",
    "Bytes per element of the weights the optimizer trains: LoRA's adapters (lora_adapter_bytes_per_param), else the "
    "training weights", IF(is_lora, adapter_bytes, weight_bytes_per_param))
master_bytes = q(
    "master_bytes_per_param", "bytes/param",
    "Bytes of the master copy per trainable parameter: the precision's (bf16_mixed 4, bf16_pure 0), 4 where the framework "
    "always keeps an fp32 copy of 16-bit weights (Megatron, DeepSpeed, torchtitan), none when the trained weights are fp32 "
    "already (fp32 LoRA adapters, fp32 weights under autocast), or as master_weights says",
    IF(mw("follows_precision"),
       IF(trained_bytes >= 4, 0, IF(fw("fp32_master"), 4, prec("master_bytes"))),
       mw("master_bytes")),
    "[zero2020] section 3.1 (fp32 master copy); [megatron_distopt]; [pytorch_fsdp] (fp32 sharded parameters)")
updated_bytes = q(
    "optimizer_updates_bytes", "bytes/param",
    "Bytes per element of the tensor the optimizer updates: the master copy when there is one, else the trainable weights "
    "(LoRA: the adapters', lora_adapter_bytes_per_param)",
    IF(master_bytes > 0, master_bytes, trained_bytes))
state_elem_bytes = q(
    "optimizer_state_bytes_per_element", "bytes",
    "Bytes per element of an optimizer moment: the optimizer_state_dtype input, or the framework's convention (fp32 where "
    "it keeps fp32 states; otherwise torch.optim's: the dtype of the tensor it updates, so bf16 in pure bf16)",
    IF(sdt("follows_framework"), IF(fw("fp32_optimizer_states"), 4, updated_bytes),
       IF(sdt("bytes_per_element") > 0, sdt("bytes_per_element"), updated_bytes)),
    "[pytorch_adamw] (state created with torch.zeros_like(param)); [megatron_distopt] (fp32 states); [adam8bit2022]")
opt_state_bytes = q(
    "optimizer_state_bytes_per_param", "bytes/param",
    "Optimizer state per trainable parameter = moments x bytes per moment (8-bit optimizers: 1 byte per moment whatever "
    "the convention)",
    opt("moments") * IF(opt("fixed_moment_bytes") > 0, opt("fixed_moment_bytes"), state_elem_bytes),
    "[adamw2019] (two moments); [adam8bit2022]; [pytorch_sgd] (one momentum buffer)")
fp8_copy_bytes = q(
    "fp8_weight_copy_bytes", "bytes",
    "FP8 copies of the transformer layers' linear weights that an FP8 recipe keeps beside the 16-bit weights: Transformer "
    "Engine casts each weight once per step and keeps it and its transpose (the backward multiplies by the transpose); "
    "MXFP8 keeps row-wise and column-wise copies with one scale per 32 values; 0 for 16/32-bit precisions and for QLoRA",
    IF(quantized_base, 0, linear_params * prec("fp8_weight_copy_bytes")),
    "[te_fp8] (FP8 weight caching, transposes for the backward); [te_mxfp8] (1-D blocks of 32, row- and column-wise)")
weights_bytes_total = q(
    "weights_bytes_total", "bytes", "Model weights held for training (QLoRA: NF4 linears + 16-bit rest) plus adapters, plus "
    "an FP8 recipe's FP8 weight copies",
    IF(quantized_base,
       linear_params * base_bits / 8 + (params_total - linear_params) * IF(qlora_casts_on, 4, 2),
       params_total * weight_bytes_per_param)
    + lora_params * adapter_bytes + fp8_copy_bytes,
    "[qlora2023] section 3: embeddings, LM head and norms stay 16-bit (fp32 after [peft_kbit]'s casts); adapters in bf16; [te_fp8]")
grad_bytes_per_param = q(
    "grad_bytes_per_param", "bytes/param", "Bytes per gradient element",
    IF(OR(I.fp32_grads, fw("fp32_grads"), fp32_adapters), 4, IF(mw("grad_bytes") > 0, mw("grad_bytes"), prec("grad_bytes"))),
    "[zero2020] (2-byte gradients, 16 bytes per parameter in all) versus [hf_one_gpu] (4-byte gradients, 18 bytes); "
    "[peft_adapter_dtype] (fp32 adapters get fp32 gradients); "
    "[megatron_distopt] (fp32 main_grad); [pytorch_amp] (fp32 weights get fp32 gradients)")
gradients_bytes_total = q(
    "gradients_bytes_total", "bytes",
    "Gradients of trainable parameters (unsharded); with the optimizer step in the backward pass only the largest tensor's at a time",
    IF(I.optimizer_in_backward, MIN(trainable_params, MAX(V * h, h * f)), trainable_params) * grad_bytes_per_param,
    "[torchtune_memory] (optimizer in backward: each gradient is applied and freed as soon as it is computed)")
lora_matrices = q(
    "lora_matrices_per_layer", "matrices", "Adapted matrices per layer (each gets an A and a B factor)",
    tgt("q") + tgt("k") + tgt("v") + tgt("o") + Ref("experts_held_per_layer") * (tgt("gate") * M("gated_mlp") + tgt("up") + tgt("down")))
adafactor_full_rows_cols = q(
    "adafactor_full_rows_cols", "-", "Rows + columns summed over every weight matrix (full training)",
    L * (2 * h + 2 * q_dim + 2 * (h + kv_dim))
    + q("mlp_rows_cols", "-", "Rows + columns over every MLP matrix (experts of the expert layers, and the dense layers)",
        moe_layers * Ref("experts_held_per_layer") * (M("gated_mlp") * (h + f) + 2 * (h + f))
        + n_dense * (M("gated_mlp") * (h + f_dense) + 2 * (h + f_dense)))
    + (V + h) * (2 - M("tied_embeddings")))
adafactor_rows_cols = q(
    "adafactor_rows_cols", "-", "Rows + columns summed over the trainable matrices (adapters for LoRA, every weight matrix otherwise)",
    IF(is_lora, L * (lora_dims_per_layer + 2 * I.lora_rank * lora_matrices), adafactor_full_rows_cols))
adafactor_state_bytes = q(
    "adafactor_state_bytes", "bytes", "Adafactor factored second moment: 4*(rows+cols) per trainable matrix",
    4 * adafactor_rows_cols,
    "[adafactor2018] section 3 (factored second moment)")
optimizer_bytes_total = q(
    "optimizer_bytes_total", "bytes", "Optimizer states plus the fp32 master copy of trainable weights (unsharded)",
    trainable_params * (opt_state_bytes + master_bytes) + opt("factored") * adafactor_state_bytes,
    "[zero2020] section 3.1 (K = 12: fp32 master 4 + Adam 8 bytes); [adam8bit2022] (2 bytes); SGD momentum 4 bytes")

# per GPU: tensor parallel splits every state by t; ZeRO splits by N what it shards
optimizer_off_gpu = q(
    "optimizer_off_gpu", "bool", "Optimizer states are not in GPU memory: offloaded to the CPU, or a paged optimizer (moved out when the GPU is full)",
    OR(I.offload_optimizer, I.offload_params, opt("paged")), "[zero_offload2021]; [bnb_paged]")
# every state is split by tensor x pipeline parallel; a sharded state by N as well (routed experts: over the N / EP
# expert-data ranks of an expert-parallel group of EP, so N in all); an unsharded one keeps expert_parallel_keep
split = lambda flag: t * pp * IF(shard(flag), dp_size, 1 / ep_keep)  # noqa: E731
state_split = split  # the same, for the CPU offload below (``split`` names a serving quantity further down)
weights_gib = q(
    "weights_gib", "GiB/GPU", "Training weights per GPU (0 when parameters are offloaded to the CPU; the gathered layers count as transients)",
    (1 - I.offload_params) * weights_bytes_total / split("shard_weights") / GIB, ZERO + "; [pytorch_fsdp] (CPU offload); [megatron_moe]")
gradients_gib = q(
    "gradients_gib", "GiB/GPU", "Gradients per GPU (0 when parameters are offloaded to the CPU, or the optimizer is offloaded "
    "under a framework that streams the gradients to CPU memory in the backward pass: frameworks catalog "
    "offload_streams_gradients, DeepSpeed's ZeRO-Offload)",
    (1 - I.offload_params) * (1 - I.offload_optimizer * fw("offload_streams_gradients"))
    * gradients_bytes_total / split("shard_gradients") / GIB,
    ZERO + "; [megatron_moe]; [zero_offload2021] section 4 (gradients offloaded with the optimizer states)")
optimizer_gib = q(
    "optimizer_gib", "GiB/GPU", "Optimizer states and master weights per GPU (0 when offloaded to CPU or paged)",
    IF(optimizer_off_gpu, 0, optimizer_bytes_total / split("shard_optimizer") / GIB),
    ZERO + "; [zero_offload2021]; [megatron_moe]")
states_gib = q("states_gib", "GiB/GPU", "Weights + gradients + optimizer per GPU", weights_gib + gradients_gib + optimizer_gib)

# activations, bytes per layer, generalised from Korthikanti et al. to GQA, gated MLPs, no dropout and FlashAttention
e = q("activation_bytes_per_element", "bytes",
      "Bytes per stored activation: the precision's, or 4 for a QLoRA run with fp32 casts (the fp32 norms pass fp32 hidden "
      "states on, and the 4-bit layers return their input's dtype)",
      IF(qlora_casts_on, 4, prec("activation_bytes")), "[peft_kbit]; [bnb_linear4bit]")
li = q("linear_input_bytes", "bytes/element",
       "Bytes per element of the activations saved as linear-layer inputs for the weight gradient: the precision's "
       "activation bytes, or 1 where an FP8 recipe keeps the FP8-cast input (Transformer Engine; MXFP8 adds a scale per 32)",
       IF(AND(prec("linear_input_bytes") > 0, NOT(qlora_casts_on)), prec("linear_input_bytes"), e), "[te_fp8]; [te_mxfp8]")
s, b = I.seq_len, I.micro_batch
sp_div = IF(I.sequence_parallel, t, 1)
act_unsplit_bytes_per_layer = q(
    "act_unsplit_bytes_per_layer", "bytes", "Activations per layer outside tensor-parallel regions: norm inputs, QKV and MLP inputs, dropout masks",
    s * b * h * (e * M("norms_per_layer") + 2 * li + 2 * M("dropout")),
    KORTHIKANTI + ": the '10' in 10 + 24/t (4 norm + 2 QKV-in + 2 MLP-in + 2 dropout masks); QKV and MLP inputs at the "
    "linear-input width ([te_fp8]: FP8 with an FP8 recipe)")
attention_score_bytes_per_layer = q(
    "attention_score_bytes_per_layer", "bytes", "Stored s x s attention scores per layer (0 with FlashAttention)",
    IF(I.flash_attention, 0, a * s * s * b * (e + 3 * M("dropout"))),
    KORTHIKANTI + ": 5as^2b = softmax 2 + dropout mask 1 + dropout output 2; [flashattention2022] stores none")
act_split_bytes_per_layer = q(
    "act_split_bytes_per_layer", "bytes", "Activations per layer inside tensor-parallel regions (before dividing by t): Q, K, V, attention output, MLP intermediates, scores",
    s * b * (e * (q_dim + 2 * kv_dim + (1 + M("gated_mlp")) * f) + li * (q_dim + f))
    + IF(I.flash_attention, 4 * s * b * a, 0)
    + attention_score_bytes_per_layer * (1 - rec("drop_attention_scores")),
    KORTHIKANTI + ": the '24' (Q,K 4 + V 2 + O 2 + MLP 16); a gated MLP stores gate, up and their product; the inputs of the "
    "output and down projections at the linear-input width ([te_fp8]); [flashattention2022] keeps fp32 softmax statistics")
fp32_adapter_inputs = q(
    "lora_fp32_adapter_inputs_on", "flag",
    "1 = LoRA adapters kept in fp32 that each save an fp32 copy of their input for backward (the framework's convention, "
    "frameworks catalog lora_fp32_adapter_inputs: PEFT); 0 without LoRA, or when the hidden states are fp32 already "
    "(QLoRA with fp32 casts: the input is not copied)",
    AND(fp32_adapters, NOT(qlora_casts_on)),
    "[peft_adapter_dtype] (get_peft_model autocast_adapter_dtype=True upcasts the adapters to fp32; LoRA Linear.forward "
    "casts x to the adapter's dtype)")
replaced_in_dims = q(
    "lora_replaced_input_dims_per_layer", "-", "Widths of the distinct linear inputs of a layer that an adapted matrix reads and "
    "the layer count holds at 16 bits: the QKV input, the output projection's, the MLP input and the down projection's",
    h * MAX(tgt("q"), tgt("k"), tgt("v")) + IF(mla, mla_value, q_dim) * tgt("o") + h * MAX(tgt("gate"), tgt("up")) + f * tgt("down"),
    KORTHIKANTI + " (the linear inputs counted in act_unsplit_bytes_per_layer and act_split_bytes_per_layer)")
# one layer's fp32 adapter input copies, less the 16-bit linear inputs they replace; where they are live depends on
# recomputation (below: kept by every layer without it, made again by the one recomputed layer with it)
adapter_copies_bytes = fp32_adapter_inputs * s * b * (4 * lora_in_dims - li * replaced_in_dims)
adapter_input_bytes_per_layer = q(
    "lora_adapter_input_bytes_per_layer", "bytes",
    "Per layer: the fp32 copies the adapters keep = tokens x 4 bytes x the adapted matrices' input widths, less the 16-bit "
    "linear inputs they replace (QKV, output, MLP and down inputs of adapted matrices, counted above); 0 unless "
    "lora_fp32_adapter_inputs_on, and 0 under full recomputation: a checkpointed layer saves only its input in the forward "
    "pass and makes the copies again while its backward runs, after the logits, the peak's other part, are freed",
    adapter_copies_bytes * (1 - rec("checkpoint_layers")),
    "[peft_adapter_dtype]; gpu-tco's own H200 rows (Llama 3.1 8B LoRA r16 without recomputation: 36.5 GiB measured; "
    "Mistral 7B LoRA r64 on every linear with recomputation, fp32 against bf16 adapters: 0.95 GiB apart, what the "
    "adapters' fp32 weights and AdamW states add; [gpu_tco_h200_2026], [gpu_tco_h200_lora_2026])")
adapter_input_recomputed_bytes = q(
    "lora_adapter_input_bytes_recomputed", "bytes",
    "Under full recomputation: the fp32 copies one recomputed layer's adapters make again while its backward pass runs "
    "(the size of lora_adapter_input_bytes_per_layer without recomputation), live at the end of the backward pass, not at "
    "the end of the forward pass; 0 otherwise",
    adapter_copies_bytes * rec("checkpoint_layers"),
    "[peft_adapter_dtype]; [chen2016] (a checkpointed layer's forward pass runs again in its backward pass)")
act_bytes_per_layer = q(
    "act_bytes_per_layer", "bytes", "Activation bytes of one layer per GPU (context parallelism splits the sequence: / context_parallel)",
    ((act_unsplit_bytes_per_layer / sp_div + act_split_bytes_per_layer / t) / cp + adapter_input_bytes_per_layer / (t * cp))
    * fw("activation_factor"),
    KORTHIKANTI + ": sbh(10 + 24/t + 5as/(ht)); with sequence parallel sbh/t(34 + 5as/h); [megatron_cp] (s / cp tokens per GPU); "
    "x the framework's activation_factor (eager layers keep more: fp32 norm inputs, the SwiGLU intermediates; frameworks catalog)")
layers_in_flight = q(
    "activation_layers_per_gpu", "layers",
    "Layers whose activations one GPU holds: all layers without pipelining; with pipeline parallelism the first stage's "
    "layers / p times the micro-batches in flight under 1F1B, min(p, micro-batches)",
    L * MIN(pp, m_pipe) / pp, KORTHIKANTI + " section 4.2.3 (the first stage holds p micro-batches); [narayanan2021] section 2.2.1")
act_checkpoint_bytes = q(
    "act_checkpoint_bytes", "bytes", "Full recomputation: each layer's stored input (e*s*b*h per layer)",
    layers_in_flight * e * s * b * h / sp_div / cp, KORTHIKANTI + " section 4.2.3: 2sbhL")
activations_gib = q(
    "activations_gib", "GiB/GPU", "Activations kept for the backward pass (full recompute: checkpoints + one live layer)",
    IF(rec("checkpoint_layers"), act_checkpoint_bytes + act_bytes_per_layer, layers_in_flight * act_bytes_per_layer) / GIB, KORTHIKANTI)
fused_on = q("fused_loss_on", "flag",
             "1 = the loss is chunked or fused (logits held a chunk at a time): the fused_loss input (Liger's fused linear "
             "cross-entropy), or a framework whose loss always is (torchtune, Unsloth)",
             OR(I.fused_loss, fw("chunked_loss")), "[torchtune_readme]; [liger2024]; [unsloth_kernels]")
logit_tokens = IF(fused_on, MIN(s * b / cp, I.fused_loss_chunk_tokens), s * b / cp)
logits_gib = q(
    "logits_gib", "GiB/GPU", "Logits and loss: tokens x vocabulary x logits_bytes_per_element (a fused/chunked loss keeps fused_loss_chunk_tokens)",
    logit_tokens * V * I.logits_bytes_per_element / t / GIB,
    "[hf_llama]: logits upcast to fp32 for the loss; a fused, chunked loss keeps one chunk ([liger2024])")
# ZeRO-3/FSDP gathers two layers' full weights (current + prefetch); only when there is more than one rank to gather from
unit_bytes = q("layer_weight_bytes", "bytes", "One layer's full weights as held for training (NF4 for QLoRA)",
              layer_params * IF(quantized_base, base_bits / 8, weight_bytes_per_param))
vocab_matrix_bytes = q("vocab_matrix_bytes", "bytes", "The embedding (or output) matrix as held for training: vocabulary x hidden",
                       V * h * IF(quantized_base, 2, weight_bytes_per_param))
largest_unit_params = q("largest_unit_params", "params", "Parameters of the largest unit ZeRO-3/FSDP gathers: a layer or the vocabulary matrix",
                        MAX(layer_params, V * h))
gathered_layers_gib = q(
    "gathered_layers_gib", "GiB/GPU",
    "Full weights ZeRO-3/FSDP gathers at once: the current unit and the next (a layer, or the embedding/output matrix "
    "when larger), plus the largest unit's unsharded gradients before they are reduced (full training); 0 without weight sharding",
    shard("shard_weights")
    * (unit_bytes + MAX(unit_bytes, vocab_matrix_bytes) + NOT(is_lora) * largest_unit_params * grad_bytes_per_param) / t / GIB,
    "[pytorch_fsdp] (one unit per layer; embeddings and output sharded as units of their own, as [torchtune_memory] recommends)")
offload_buffers_gib = q(
    "offload_buffers_gib", "GiB/GPU",
    "What stays on the GPU with parameters offloaded to the CPU: offload_prefetch_layers units gathered at once (the one computed "
    "and the ones prefetched; the embedding or output matrix is a unit when larger than a layer), the copies of their shards "
    "brought in from the CPU before the gather, and in full training the unsharded gradients of the largest unit on their "
    "way out; 0 without parameter offload",
    I.offload_params * ((I.offload_prefetch_layers - 1) * unit_bytes + MAX(unit_bytes, vocab_matrix_bytes)
                        + I.offload_prefetch_layers * unit_bytes / IF(shard("shard_weights"), dp_size, 1)
                        + NOT(is_lora) * largest_unit_params * grad_bytes_per_param) / t / GIB,
    "[zero_infinity2021] section 5 (parameters fetched ahead of use, gradients streamed out in buckets); [pytorch_fsdp] "
    "(CPUOffload: the shard is copied to the GPU, then all-gathered); [deepspeed_config] (stage3_prefetch_bucket_size, "
    "reduce_bucket_size)")
zero3_prefetch_gib = q(
    "zero3_prefetch_gib", "GiB/GPU", "ZeRO-3/FSDP: two layers' full weights gathered at once (current + prefetch); with parameter "
    "offload the buffers that stay on the GPU (offload_buffers_gib)",
    IF(I.offload_params, offload_buffers_gib, IF(dp_size > 1, gathered_layers_gib, 0)),
    "[pytorch_fsdp] (forward and backward prefetch); [deepspeed_memory]")
flat_grad_copy_on = q(
    "step_flat_grad_copy_on", "flag",
    "1 = the optimizer step flattens the 16-bit gradients of what a GPU updates and converts them to fp32 in one piece: "
    "a framework with step_flat_grad_bytes (DeepSpeed) under a sharding of the optimizer states only, without the "
    "weights (ZeRO-1, ZeRO-2), updating an fp32 master copy after the backward pass (not in it)",
    AND(fw("step_flat_grad_bytes") > 0, shard("shard_optimizer"), NOT(shard("shard_weights")), master_bytes > 0,
        NOT(I.optimizer_in_backward)),
    "[deepspeed_zero_step] (DeepSpeedZeroOptimizer, stage_1_and_2.py)")
# fp32 temporary of the embedding gradient during the optimizer step (before any ZeRO sharding)
step_temp_tp_gib = q(
    "step_temp_tp_gib", "GiB/GPU",
    "Temporaries of the optimizer step, before ZeRO sharding: the fp32 copy of the embedding gradient when an fp32 master "
    "copy is updated from 16-bit gradients, plus with a foreach optimizer (torch.optim.AdamW's default) one whole-model "
    "tensor the size of a moment; a framework that flattens the gradients of what a GPU updates and converts them to fp32 "
    "in one piece (DeepSpeed ZeRO-1 and -2, not its stage 0 or 3: frameworks catalog step_flat_grad_bytes) holds those bytes per trainable "
    "parameter instead (its 16-bit gradients are freed before the step, so a foreach temporary fits in their place), less, "
    "under ZeRO-1, the gradients of the other ranks' partitions, which it frees before flattening its own",
    IF(NOT(optimizer_off_gpu),
       IF(flat_grad_copy_on, (fw("step_flat_grad_bytes") - NOT(shard("shard_gradients")) * (dp_size - 1) * grad_bytes_per_param)
          * trainable_params / (t * pp),
          IF(AND(NOT(is_lora), master_bytes > 0), 4 * V * h / t, 0) + opt("step_temp_moments") * trainable_params * state_elem_bytes / (t * pp)),
       0) / GIB,
    "[pytorch_adam_source] (_multi_tensor_adam: torch._foreach_sqrt of the second moments); [deepspeed_zero_step] "
    "(DeepSpeedZeroOptimizer.step: flat_grad_partition, then .to(fp32) of it, both held; the 16-bit gradients released "
    "before the optimizer runs)")
step_transient_gib = q(
    "step_transient_gib", "GiB/GPU", "Optimizer step's temporaries per GPU (step_temp_tp_gib, divided by the data-parallel "
    "ranks where the optimizer states are sharded): the fp32 copy of the embedding gradient and a foreach optimizer's "
    "moment-sized temporary, or DeepSpeed ZeRO-1/2's flattened fp32 copy of the partition's gradients",
    MAX(0, step_temp_tp_gib / IF(shard("shard_optimizer"), dp_size, 1)),
    "[pytorch_adamw] (foreach implementation works per tensor group); [deepspeed_zero_step]")
# A framework that frees the gradients after each optimizer step (zero_grad(set_to_none=True)) starts the next forward
# pass without them: at the end of the forward pass, its peak, the activations and the logits stand where the gradients
# will be; the gradients then grow in the backward pass while the activations are freed.  Under gradient accumulation the
# gradients stay from the second micro-batch on; Megatron keeps them in a persistent buffer.
freed_base = q(
    "grads_freed_between_steps_base", "flag",
    "1 = the framework frees the gradients after each optimizer step (frameworks catalog grads_freed_between_steps), one "
    "micro-batch makes a step, and the optimizer step is not in the backward pass (there each gradient is applied and "
    "freed as the backward pass makes it, the output layer's first, while the logits are still live)",
    AND(fw("grads_freed_between_steps") > 0, m_pipe <= 1, NOT(I.optimizer_in_backward)),
    "[pytorch_zero_grad]; the Hugging Face Trainer, torchtune, torchtitan and Unsloth call it; [megatron_distopt] (main_grad "
    "buffers persist)")
freed_on = q(
    "grads_freed_between_steps_on", "flag",
    "1 = the gradients are absent at the end of the forward pass: grads_freed_between_steps_base, on one data-parallel "
    "rank or with the gradients sharded (FSDP, ZeRO-2 and -3); under plain data parallelism (DDP) the gradient buckets "
    "the all-reduce fills stay allocated between steps",
    AND(freed_base, OR(dp_size <= 1, shard("shard_gradients"))),
    "[pytorch_zero_grad]; [pytorch_ddp] (gradient buckets)")
lm_grad_tp = q(
    "output_layer_gradient_gib", "GiB/GPU",
    "The output layer's gradient at tensor-parallel degree t, before ZeRO sharding (full training; 0 for LoRA, whose output "
    "layer is frozen): made at the start of the backward pass, beside the logits, so never absent at the peak",
    NOT(is_lora) * (1 - I.offload_params) * V * h * grad_bytes_per_param / t / GIB, "[hf_llama] (the output projection)")
grads_freed_gib = q(
    "grads_freed_at_forward_gib", "GiB/GPU",
    "Gradients absent at the end of the forward pass = gradients_gib less the output layer's gradient, where "
    "grads_freed_between_steps_on, else 0",
    MAX(0, gradients_gib - lm_grad_tp / IF(shard("shard_gradients"), dp_size, 1)) * freed_on, "[pytorch_zero_grad]")
act_live_gib = q(
    "backward_live_gib", "GiB/GPU", "Activations live at the end of the backward pass, beside every gradient: one layer's "
    "(its recomputed or stored activations, with the fp32 adapter input copies a recomputed layer makes again)",
    (act_bytes_per_layer + adapter_input_recomputed_bytes / (t * cp) * fw("activation_factor")) / GIB)
forward_backward_gib = q(
    "forward_backward_gib", "GiB/GPU",
    "Transient memory of the forward/backward phase beyond the states: activations + logits less the gradients not yet "
    "there at the end of the forward pass, at least one layer's activations (the end of the backward pass), + the layers "
    "ZeRO-3/FSDP gathers",
    MAX(activations_gib + logits_gib - grads_freed_gib, MIN(act_live_gib, activations_gib)) + zero3_prefetch_gib,
    "[pytorch_zero_grad]; [pytorch_memory]")
transient_peak_gib = q(
    "transient_peak_gib", "GiB/GPU", "Largest transient over phases (forward/backward vs optimizer step)",
    MAX(forward_backward_gib, step_transient_gib), "[llm_analysis]: states plus the largest phase, not a sum of phases")
frag = I.fragmentation_pct / 100
overhead_train_gib = q(
    "overhead_train_gib", "GiB/GPU", "CUDA context + allocator fragmentation + phase extras (prefetch, step temporaries)",
    I.cuda_context_gib + frag * (states_gib + transient_peak_gib) + transient_peak_gib - activations_gib - logits_gib,
    "[hf_anatomy] (CUDA kernels 1.3 GB); [pytorch_memory]")
allocator_peak_train_gib = q("allocator_peak_train_gib", "GiB/GPU",
  "Allocator peak: the tensors alone at the peak = weights + gradients + optimizer + the largest phase's transients "
  "(what torch.cuda.max_memory_allocated reports, the figure published measurements quote)",
  states_gib + transient_peak_gib, "[pytorch_memory] (memory_allocated counts tensors; memory_reserved adds the cache)")
q("reserved_peak_train_gib", "GiB/GPU",
  "Allocator reserved peak: the allocator peak plus its cache and fragmentation (what torch.cuda.max_memory_reserved reports; "
  "the device total less the CUDA context)", (states_gib + transient_peak_gib) * (1 + frag), "[pytorch_memory] (memory_reserved)")
peak_train_gib_per_gpu = q(
    "peak_train_gib_per_gpu", "GiB/GPU",
    "Device total per GPU, what must fit (and what nvidia-smi shows) = weights + gradients + optimizer + activations + logits + "
    "overhead = allocator peak x (1 + fragmentation) + CUDA context",
    states_gib + activations_gib + logits_gib + overhead_train_gib)
gpu_memory_gib = q("gpu_memory_gib", "GiB", "Memory of one GPU", G("memory_gib"), "GPU catalog (vendor datasheets, per row)")
memory_band = fw("memory_band_pct") / 100
q("peak_train_gib_likely_low", "GiB/GPU",
  "Low end of the likely device total per GPU = peak_train_gib_per_gpu / (1 + the framework's memory band: twice the median "
  "error of its measured runs held out of the fit; docs/calibration.md)",
  peak_train_gib_per_gpu / (1 + memory_band), "frameworks catalog memory_band_pct, written by gpu-tco calibrate --write")
peak_likely_high = q("peak_train_gib_likely_high", "GiB/GPU", "High end of the likely device total per GPU = peak_train_gib_per_gpu x (1 + memory band)",
  peak_train_gib_per_gpu * (1 + memory_band), "frameworks catalog memory_band_pct, written by gpu-tco calibrate --write")
fit_limit_gib = q("fit_limit_gib", "GiB/GPU", "Most the tensors may take per GPU = GPU memory x (1 - memory_margin_pct): the margin "
                  "covers the estimate's error and what allocators and libraries add at run time",
                  gpu_memory_gib * (1 - I.memory_margin_pct / 100))
# the issue's rule and the measured case agree: Llama-3-8B full fine-tuning in pure bf16 took 74.9 GiB of tensors on an
# 80 GB H100 and ran; the device total (cache, fragmentation, CUDA context) must still be within the memory itself
q("train_headroom_gib", "GiB/GPU", "GPU memory left at peak (negative: does not fit)", gpu_memory_gib - peak_train_gib_per_gpu)

# smallest GPU count: per-GPU memory is  cuda_context + (1 + frag) x (fixed states + sharded states / N + max(activations, step))
usable_gib = q("usable_train_gib", "GiB/GPU", "Memory available to tensors: the fit limit, and at most (GPU memory - CUDA "
               "context) / (1 + fragmentation) so that the device total fits too",
               MIN(fit_limit_gib, (gpu_memory_gib - I.cuda_context_gib) / (1 + frag)))
w_tp = q("weights_tp_gib", "GiB/GPU", "Weights per GPU at tensor x pipeline parallel degree, before ZeRO sharding (0 when offloaded)",
         (1 - I.offload_params) * weights_bytes_total / (t * pp) / GIB)
g_tp = q("gradients_tp_gib", "GiB/GPU", "Gradients per GPU at tensor x pipeline parallel degree, before ZeRO sharding (0 when offloaded)",
         (1 - I.offload_params) * gradients_bytes_total / (t * pp) / GIB)
o_tp = q("optimizer_tp_gib", "GiB/GPU", "Optimizer states per GPU at tensor x pipeline parallel degree, before ZeRO sharding (0 when offloaded)",
         IF(optimizer_off_gpu, 0, optimizer_bytes_total / (t * pp) / GIB))
sharded_states_tp_gib = q(
    "sharded_states_tp_gib", "GiB/GPU", "States that ZeRO divides by N, at tensor-parallel degree t (before sharding)",
    w_tp * shard("shard_weights") + g_tp * shard("shard_gradients") + o_tp * shard("shard_optimizer"))
fixed_states_tp_gib = q(
    "fixed_states_tp_gib", "GiB/GPU", "States every data-parallel GPU keeps whole (routed experts: its expert-parallel share)",
    (w_tp * (1 - shard("shard_weights")) + g_tp * (1 - shard("shard_gradients")) + o_tp * (1 - shard("shard_optimizer"))) * ep_keep)
# from N = 2 on, ZeRO-3 gathers layers: count that when solving for N >= 2
step_any_n = step_temp_tp_gib
gathered_any_n = IF(I.offload_params, offload_buffers_gib, gathered_layers_gib)
# gradients freed between steps (grads_freed_between_steps_on) are not there at the end of the forward pass: the whole
# ones leave their room to the activations, the sharded ones a share per rank; the end of the backward pass holds every
# gradient beside one layer's activations
freed_sharded_gib = MAX(0, g_tp - lm_grad_tp) * shard("shard_gradients") * freed_base  # from 2 ranks on: sharded only
room_fb = q("room_forward_backward_gib", "GiB/GPU",
            "Memory left for sharded states (less the sharded gradients freed between steps) at the end of the forward pass "
            "from 2 ranks on (usable - whole states - activations, logits, gathered layers)",
            usable_gib - fixed_states_tp_gib - (activations_gib + logits_gib + gathered_any_n))
room_live = q("room_backward_end_gib", "GiB/GPU",
              "Memory left for sharded states at the end of the backward pass from 2 ranks on (usable - whole states - one "
              "layer's activations - gathered layers)",
              usable_gib - fixed_states_tp_gib - (MIN(act_live_gib, activations_gib) + gathered_any_n))
room_step = q("room_step_gib", "GiB/GPU", "Memory left for sharded states during the optimizer step (usable - whole states - unsharded step temporary)",
              usable_gib - fixed_states_tp_gib - step_any_n * (1 - shard("shard_optimizer")))
# one data-parallel rank: nothing to gather, no prefetch
fits_at_one_rank = q("fits_one_rank", "bool", "The job fits one data-parallel rank (t GPUs)",
                     fixed_states_tp_gib + sharded_states_tp_gib
    + MAX(MAX(activations_gib + logits_gib - MAX(0, g_tp * ep_keep - lm_grad_tp) * freed_base,
              MIN(act_live_gib, activations_gib)), step_any_n)
    <= usable_gib)
can_fit = q(
    "can_fit", "bool", "Some number of these GPUs holds the job (with this sharding and tensor parallelism)",
    OR(fits_at_one_rank,
       AND(room_fb > 0, room_live > 0, room_step > 0, sharded_states_tp_gib > 0)))
dp_needed = q("dp_needed", "GPUs", "Smallest sharding degree N >= 2 whose share of the sharded states fits both phases",
              MAX(2, CEILING(MAX(sharded_states_tp_gib - freed_sharded_gib, 0) / MAX(room_fb, 1e-9)),
                  CEILING(sharded_states_tp_gib / MAX(room_live, 1e-9)),
                  CEILING((sharded_states_tp_gib + step_any_n * shard("shard_optimizer")) / MAX(room_step, 1e-9))))
n_unit = MAX(cp, ep)  # N is a multiple of the context- and expert-parallel degrees (powers of two in practice)
gpus_needed = q(
    "gpus_needed", "GPUs", "Smallest GPU count that fits (t x p x smallest N, N a multiple of the context- and expert-parallel "
    "degrees); 0 = no count of this GPU fits this configuration",
    t * pp * IF(AND(fits_at_one_rank, n_unit <= 1), 1, IF(can_fit, CEILING(MAX(IF(fits_at_one_rank, 1, dp_needed), n_unit) / n_unit) * n_unit, 0)),
    "solves ctx + (1+frag)(S_fixed + S_shard/N + max(A, step)) <= memory for N (ZeRO-3 prefetch counted from N = 2); " + ZERO)
# longest sequence that fits at this micro-batch: activations = c1*s + c2*s^2 (c2 = 0 with FlashAttention or recompute)
budget_tokens_gib = q(
    "seq_budget_gib", "GiB/GPU", "Memory left for sequence-dependent tensors: usable - states - prefetch - a fused loss's fixed chunk",
    usable_gib - states_gib - zero3_prefetch_gib
    - IF(fused_on, I.fused_loss_chunk_tokens * V * I.logits_bytes_per_element / t / GIB, 0))
# stored attention scores (the s^2 term): per layer without checkpointing, one live layer with it
scores_gib = q("scores_gib", "GiB/GPU", "Stored attention scores at this sequence length (the s^2 term; 0 with FlashAttention)",
               attention_score_bytes_per_layer * (1 - rec("drop_attention_scores")) / t / cp / GIB * IF(rec("checkpoint_layers"), 1, layers_in_flight))
lin_per_token = q("seq_linear_gib_per_token", "GiB/token", "Memory that grows linearly with the sequence length, per token (activations, unfused logits)",
                  (activations_gib - scores_gib) / s + IF(fused_on, 0, b * V * I.logits_bytes_per_element / t / cp / GIB))
quad_per_token2 = q("seq_quadratic_gib_per_token2", "GiB/token^2", "Memory that grows with the square of the sequence length, per token^2",
                    scores_gib / (s * s))
def _longest(quad, lin, budget):
    """The largest s with quad*s^2 + lin*s <= budget (0 when the budget is not positive)."""
    return IF(quad > 0, (SQRT(lin * lin + 4 * quad * MAX(budget, 0)) - lin) / (2 * quad), MAX(budget, 0) / lin)


# the one layer live at the end of the backward pass: its s^2 score term (without FlashAttention) and the rest, per token
live_quad = q("seq_live_gib_per_token2", "GiB/token^2", "The one layer live at the end of the backward pass: its memory that "
              "grows with the square of the sequence length (stored scores without FlashAttention), per token^2",
              attention_score_bytes_per_layer * (1 - rec("drop_attention_scores")) * fw("activation_factor") / (t * cp) / GIB / (s * s))
live_lin = q("seq_live_gib_per_token", "GiB/token", "The one layer live at the end of the backward pass: its memory that grows "
             "linearly with the sequence length, per token", (act_live_gib - live_quad * s * s) / s)
seq_forward_end = q("longest_seq_forward_end", "tokens", "Longest sequence whose activations and logits fit at the end of the "
                    "forward pass, beside the states less the gradients freed between steps",
                    _longest(quad_per_token2, lin_per_token, budget_tokens_gib + grads_freed_gib))
seq_backward_end = q("longest_seq_backward_end", "tokens", "Longest sequence whose one live layer fits at the end of the "
                     "backward pass, beside every state", _longest(live_quad, live_lin, budget_tokens_gib))
max_train_seq_len = q(
    "max_train_seq_len", "tokens", "Longest training sequence that fits one GPU at this micro-batch (0 = none; none either when "
    "the optimizer step's temporaries alone do not fit beside the states)",
    IF(step_transient_gib > usable_gib - states_gib, 0, MAX(0, FLOOR(MIN(seq_forward_end, seq_backward_end)))),
    "solves c2*s^2 + c1*s <= memory left after states twice and takes the shorter: the end of the forward pass (activations "
    "and logits, linear in s, plus the s^2 score term without FlashAttention, in the memory left beside the states less the "
    "gradients freed between steps) and the end of the backward pass (every gradient there, beside the one layer's "
    "activations then live); the optimizer step's temporaries checked apart")

# ---------------------------------------------------------------------------
q = quantities_of("training compute")
# packed short documents with per-document masks: each token attends within its own document where the kernel skips
# the blocks between documents (FlashAttention's variable-length kernels, FlexAttention's document masks); eager
# attention with a block-diagonal mask still computes every pair of the sequence
train_attention_tokens = q(
    "train_attention_tokens", "tokens",
    "Tokens a training token's attention spans: the sequence length, or, with FlashAttention (flash_attention 1), the "
    "packed documents' mean length when shorter",
    IF(AND(I.packed_document_tokens > 0, I.flash_attention), MIN(I.packed_document_tokens, s), s),
    "[torchtune_packing]; [hf_packing_fa2]")
train_mixer_flops = q(
    "train_mixer_flops_per_token", "FLOP/token",
    "Attention's (and the fixed-state layers') FLOPs per training token, forward and backward: 12*L_attention*s*a*d over "
    "the tokens attention spans, + 3 x the fixed-state layers' recurrences; a third of it is the forward pass",
    mixer_flops(train_attention_tokens, 12), "[narayanan2021] (attention 12*L*s*h); [dsa_2025]; [mamba2_2024]")
LARGE_CLUSTER_GPUS = 512  # from here on the large-cluster factor applies (the calibration set has 8-64 and 2,048 GPUs)
flops_per_token_train = q(
    "flops_per_token_train", "FLOP/token",
    "Model FLOPs per training token: (6 full | 4 LoRA) x P_active (+ 6 x the LoRA adapters' parameters: their forward, "
    "input-gradient and weight-gradient products) + attention 12*L_attention*s*a*d, s the tokens attention spans "
    "(packed documents: their mean length; sparse attention: the "
    "top-k tokens, plus its indexer) + 3 x the fixed-state layers' recurrences; recomputation is not counted (it lowers the "
    "efficiency instead)",
    IF(is_lora, 4 * params_active + 6 * lora_params, 6 * params_active) + train_mixer_flops,
    "[kaplan2020] (6N); [narayanan2021] (attention 12*L*s*h); [palm2022] Appendix B (model FLOPs exclude recomputation); "
    "LoRA skips the frozen weights' gradient (4N) and trains r*(d_in+d_out) per adapted matrix ([lora2021] section 4.1: "
    "6 FLOPs per adapter weight and token, 4.5 % of Llama 3.2 3B's LoRA work at rank 64); [dsa_2025] (top-k attention, "
    "indexer); [mamba2_2024]")
train_tokens_total = q("train_tokens_total", "tokens", "Tokens processed in training = tokens x epochs", I.tokens * I.epochs)
train_flops = q("train_flops", "FLOP", "Total training FLOPs", train_tokens_total * flops_per_token_train)
active_linear_params = q(
    "active_linear_params", "params",
    "Weights of the transformer layers' linear layers used per token (attention projections, active and shared experts, "
    "dense MLPs): the matmuls an FP8 recipe runs in FP8; embedding, output layer, router, norms and attention stay 16-bit",
    moe_layers * (attn_params_per_layer + (k_act + S) * mlp_params_per_expert)
    + n_dense * (attn_params_per_layer + dense_mlp_params),
    "[te_fp8] (te.Linear / LayerNormLinear / LayerNormMLP run in FP8; the rest of the model in its own precision); "
    "[torchao_training] (Float8Linear swaps nn.Linear; the output layer is left in bf16)")
gpu_block_scaled = q(
    "gpu_block_scaled_fp8", "flag",
    "1 = the GPU has block-scaled (MX) FP8 tensor cores in a data-centre part: the catalog's GPUs with FP4 tensor cores on "
    "NVLink or Infinity Fabric (B200, B300, GB200, GB300, MI355X); workstation and GeForce Blackwell cards are left out "
    "(the MXFP8 training recipes target data-centre Blackwell)",
    AND(G("fp4_dense_tflops") > 0, G("multi_gpu_fabric")),
    "[te_mxfp8] (MXFP8: native on Blackwell, SM 10.0); [ocp_mx2023] (the MX formats)")
precision_supported = q(
    "train_precision_supported", "flag",
    "1 = the GPU runs the training precision: every GPU runs 16/32-bit; FP8 needs FP8 tensor cores (Hopper, Ada, "
    "Blackwell, MI300 and later); MXFP8 needs block-scaled ones (gpu_block_scaled_fp8)",
    OR(NOT(prec("fp8_linears")), AND(G("fp8_dense_tflops") > 0, OR(NOT(prec("block_scaled")), gpu_block_scaled))),
    "[te_fp8]; [te_mxfp8]; GPU catalog fp8_dense_tflops")
fp8_runs = q(
    "fp8_linears_active", "flag",
    "1 = the linear layers' matmuls run at the GPU's FP8 rate: an FP8 precision, a GPU that runs it, and weights that are "
    "not NF4 (QLoRA dequantizes its base to 16 bit for every matmul)",
    AND(prec("fp8_linears"), precision_supported, NOT(quantized_base)))
fp8_share = q(
    "fp8_flops_share", "fraction",
    "Share of the model FLOPs per token that run in FP8 = (6 full | 4 LoRA) x active linear weights / FLOPs per token "
    "(0 unless fp8_linears_active): attention scores, the output layer and the rest stay 16-bit",
    IF(fp8_runs, IF(is_lora, 4, 6) * active_linear_params / flops_per_token_train, 0), "[te_fp8]; [torchao_training]")
train_tflops_per_gpu_peak = q(
    "train_tflops_per_gpu_peak", "TFLOPS",
    "Dense peak per GPU at the training precision (BF16 with FP32 accumulate; TF32 for fp32); with an FP8 recipe the peak "
    "of the FLOP mix: 1 / (FP8 share / FP8 rate + 16-bit share / BF16 rate)",
    IF(prec("fp32_compute"), G("tf32_dense_tflops"),
       1 / (fp8_share / MAX(G("fp8_dense_tflops"), 1e-9) + (1 - fp8_share) / G("bf16_dense_tflops"))),
    "GPU catalog: dense (not 2:4 sparse) tensor TFLOPS; GeForce at the FP32-accumulate rate ([nvidia_ada] Appendix A); "
    "[te_fp8] (FP8 GEMMs at twice the BF16 rate on Hopper)")
# A recomputed forward pass repeats the forward's work: per weight and token 2 of full training's 6 units (8 in all), but 2
# of LoRA's 4 (6 in all), since LoRA computes no gradients for its frozen weights; attention's forward is a third of its
# work either way.  The recomputation factor (recomputes catalog mfu_factor) is fitted as full training pays it; LoRA pays
# it times its own share of work kept over full training's, (4/6) / (6/8) = 0.889 where the weights' products dominate,
# nearer 1 as attention grows with the sequence.
lora_work = 4 * params_active + 6 * lora_params + train_mixer_flops
full_work = 6 * params_active + train_mixer_flops
lora_recompute = q(
    "lora_recompute_factor", "fraction",
    "What full recomputation costs LoRA beyond what it costs full training: with LoRA or QLoRA and full recomputation, "
    "(LoRA's work / (its work + the recomputed forward)) / (the same for full training), the recomputed forward being 2 "
    "x the active parameters (+ 2 x the adapters') + a third of attention; else 1.  0.889 where the weights' products "
    "dominate (LoRA's forward is a third of its work, full training's a quarter), nearer 1 at long sequences",
    IF(AND(is_lora, rec("checkpoint_layers")),
       lora_work / (lora_work + 2 * params_active + 2 * lora_params + train_mixer_flops / 3)
       / (full_work / (full_work + 2 * params_active + train_mixer_flops / 3)), 1),
    "[chen2016] (checkpointing repeats the forward pass); [lora2021] section 4 (no gradients for the frozen weights); "
    "[gpu_tco_h200_torchtune] (torchtune on one H200: checkpointing cost LoRA 0.884 and 0.916 of what it cost full "
    "fine-tuning of the same model, against 0.899 and 0.914 counted)")
mfu_effective = q(
    "mfu_effective", "fraction",
    "MFU used: the input, or the calibrated default = GPU default x method factor x recomputation factor (x "
    "lora_recompute_factor for LoRA) x framework factor "
    "x FP8 factor (an FP8 recipe: casts and scaling cost time the FP8 peak does not show) "
    "x mixture-of-experts factor x large-cluster factor x PCIe multi-GPU penalty (CPU offload costs time through its "
    "PCIe transfers and the CPU optimizer step, not through this factor)",
    IF(I.mfu > 0, I.mfu,
       G("default_mfu") * T("methods", "method", "mfu_factor") * rec("mfu_factor") * lora_recompute
       * q("framework_speed_factor", "fraction",
           "Efficiency of the framework relative to the compiled or fused stacks the GPUs' MFU was fitted on (eager layers: "
           "below 1)", fw("speed_factor"), "frameworks catalog speed_factor (docs/training.md)")
       * IF(AND(fp8_runs, prec("fp8_mfu_factor") > 0), prec("fp8_mfu_factor"), 1)
       * IF(E > 1, I.moe_train_efficiency, 1)
       * IF(I.n_gpus >= LARGE_CLUSTER_GPUS, I.large_cluster_mfu_factor, 1)
       * IF(AND(I.n_gpus > 1, G("multi_gpu_fabric") < 1), I.pcie_multi_gpu_efficiency, 1)),
    "fitted on the calibration set (docs/calibration.md: [torchtitan_perf], [llmfoundry_bench], [torchtune_readme], [llama2_2023], "
    "[llama3_2024], [nemo_perf]); "
    "PCIe scaling: gpu-tco assumption")

# What connects the GPUs.  Each micro-batch step, data-parallel ranks exchange weights or gradients and
# tensor-parallel GPUs exchange activations; FSDP prefetch and bucketed gradient reduction overlap this
# traffic with compute, so a step takes the longer of the two.
q = quantities_of("owning")
server_gpus = q("own_server_gpus", "GPUs", "GPUs per owned server: gpus_per_server, or the GPU's largest server as sold",
                IF(I.gpus_per_server > 0, I.gpus_per_server, IF(G("server_gpus") > 0, G("server_gpus"), 8)),
                "GPU catalog server_sizes (8 when a row gives none)")
own_servers = q("own_servers", "servers", "Servers = n_gpus / GPUs per server, rounded up", CEILING(I.n_gpus / server_gpus))
q = quantities_of("communication")
offer_node_gpus = q(
    "offer_node_gpus", "GPUs", "GPUs one machine of the offer holds, linked by the GPU's own NVLink or PCIe (gpus_per_node; "
    "the instance size when not given)",
    IF(OF("gpus_per_node") > 0, OF("gpus_per_node"), OF("gpus_per_instance")), "offers catalog (provider instance pages)")
offer_max_gpus = q(
    "offer_max_gpus", "GPUs", "Largest job the offer sells: max_gpus_per_job, else one machine when no network between "
    "machines is given, else no limit",
    IF(OF("max_gpus_per_job") > 0, OF("max_gpus_per_job"), IF(OF("fabric_gbps_per_gpu") > 0, 1e9, offer_node_gpus)),
    "offers catalog (provider cluster pages)")
job_machines = q("job_machines", "machines", "Machines the job spans: owned servers, or rented GPUs / GPUs per machine, rounded up",
                 IF(I.buy, own_servers, CEILING(I.n_gpus / offer_node_gpus)))
intra_gb_per_s = q(
    "intra_node_gb_per_s", "GB/s", "Bandwidth per GPU and direction inside one machine: half the NVLink total, or pcie_gb_per_s "
    "(also for a card whose row gives no NVLink rate)",
    IF(AND(G("multi_gpu_fabric"), G("nvlink_gbps") > 0), G("nvlink_gbps") / 2, I.pcie_gb_per_s),
    "GPU catalog nvlink_gbps (both directions, [nvidia_h100]); [pcie4_spec]")
inter_gb_per_s = q(
    "inter_node_gb_per_s", "GB/s",
    "Bandwidth per GPU between machines = Gbit/s per GPU / 8 (owned: own_fabric_gbps_per_gpu; rented: the offer's fabric; an "
    "offer that names none sells one machine (offer_max_gpus): a larger job on it is not sold, and is timed as on an owned cluster)",
    IF(I.buy, I.own_fabric_gbps_per_gpu, IF(OF("fabric_gbps_per_gpu") > 0, OF("fabric_gbps_per_gpu"), I.own_fabric_gbps_per_gpu)) / 8,
    "offers catalog (provider network pages); [nvidia_dgx_h100]")
dp_link_gb_per_s = q(
    "dp_link_gb_per_s", "GB/s", "Slowest link of the data-parallel ring: between machines when the job spans several, else inside one",
    IF(job_machines > 1, MIN(inter_gb_per_s, intra_gb_per_s), intra_gb_per_s), "[nccl_tests] (a ring runs at its slowest link)")
ring_share = (dp_size - 1) / dp_size
trainable_grad_bytes = trainable_params * grad_bytes_per_param
dp_comm_bytes = q(
    "dp_comm_bytes_per_step", "bytes/GPU",
    "Bytes each GPU sends per micro-batch for data parallelism: ZeRO-3/FSDP all-gathers the weights twice (forward, backward) and "
    "reduce-scatters the gradients every micro-batch (the 16-bit weights: FP8 copies are cast after the gather); otherwise "
    "the gradients are all-reduced (twice their size) once per optimizer step, i.e. over its micro-batches; ring share "
    "(N-1)/N; each GPU exchanges its tensor x pipeline share (routed experts: its expert-parallel share)",
    ring_share * IF(shard("shard_weights"), 2 * (weights_bytes_total - fp8_copy_bytes) + trainable_grad_bytes,
                    2 * trainable_grad_bytes / m_pipe)
    * ep_keep / (t * pp),
    "[nccl_tests] (all-gather and reduce-scatter move (N-1)/N of the data per GPU, all-reduce 2(N-1)/N); [zero2020] section 7 "
    "(ZeRO-3: 1.5x the all-reduce volume); [pytorch_fsdp]")
tp_comm_bytes = q(
    "tp_comm_bytes_per_step", "bytes/GPU",
    "Bytes each GPU sends per micro-batch for tensor parallelism: 4 all-reduces of the layer's activations per layer "
    "(2 forward, 2 backward), 2(t-1)/t each",
    IF(t > 1, 8 * (t - 1) / t * s * b * h * e * L / (pp * cp), 0),
    "[megatron2019] section 3 (two all-reduces forward and two backward per layer); a stage holds layers / p, a GPU s / cp tokens")
node_gpus = q("node_gpus", "GPUs", "GPUs one machine of the job holds (owned servers, or the offer's machine)",
              IF(I.buy, server_gpus, offer_node_gpus))
pp_comm_bytes = q(
    "pp_comm_bytes_per_step", "bytes/GPU",
    "Bytes each GPU sends per micro-batch between pipeline stages: the stage's output activations forward and their gradients "
    "backward (s x b x h each, split over the tensor-parallel GPUs), once per model chunk of an interleaved schedule",
    IF(pp > 1, 2 * I.pipeline_virtual_stages * s * b * h * e / (t * cp), 0),
    "[narayanan2021] sections 2.2 and 4.1 (point-to-point between stages, scattered over the tensor-parallel ranks)")
cp_comm_bytes = q(
    "cp_comm_bytes_per_step", "bytes/GPU",
    "Bytes each GPU sends per micro-batch for context parallelism: keys and values of its sequence part go round the ring in the "
    "forward pass and again, with their gradients, in the backward pass: 4 x (cp-1)/cp x s x b x KV width per layer of the stage",
    IF(cp > 1, 4 * (cp - 1) / cp * s * b * IF(mla, a * d, kv_dim) * e / t * L / pp, 0),
    "[megatron_cp] (all-gather of K and V forward, reduce-scatter of their gradients backward); [ring_attention2023]")
ep_comm_bytes = q(
    "ep_comm_bytes_per_step", "bytes/GPU",
    "Bytes each GPU sends per micro-batch for expert parallelism: per expert layer of the stage four all-to-alls (dispatch and "
    "combine, forward and backward) of its tokens x top_k x hidden, the share (EP-1)/EP leaving the GPU; the busiest GPU "
    "receives moe_load_imbalance times the mean",
    IF(AND(E > 1, ep > 1), 4 * (ep - 1) / ep * s * b / (t * cp) * k_act * h * e * moe_layers / pp * I.moe_load_imbalance, 0),
    "[gshard2020]; [megatron_moe] (token dispatcher: all-to-all before and after the experts)")
cp_link = q("cp_link_gb_per_s", "GB/s", "Link of the context-parallel ring: inside a machine when tensor x context parallel GPUs fit one",
            IF(t * cp <= node_gpus, intra_gb_per_s, dp_link_gb_per_s), "[megatron_cp] (context-parallel ranks placed next to tensor-parallel ones)")
ep_link = q("ep_link_gb_per_s", "GB/s", "Link of the expert all-to-all: inside a machine when tensor x context x expert parallel GPUs fit one",
            IF(t * cp * ep <= node_gpus, intra_gb_per_s, dp_link_gb_per_s), "[megatron_moe] (expert groups inside a node where they fit)")
# Tensor-parallel all-reduces sit between a layer's matrix products (the next one needs their result), so they do not
# hide behind compute as the data-parallel gathers and reductions do: Megatron-LM's --tp-comm-overlap and torchtitan's
# async tensor parallel, which split the matmuls to overlap them, are options that are off by default.
tp_comm_s = q(
    "tp_comm_s_per_step", "s", "Tensor-parallel all-reduce time per micro-batch = tensor-parallel bytes / (link inside the "
    "machine x collective_efficiency); on the critical path, not overlapped with compute (0 with an MFU given: a measured "
    "run's MFU holds it)",
    (I.mfu <= 0) * tp_comm_bytes / (intra_gb_per_s * 1e9 * I.collective_efficiency),
    "[megatron2019] section 3 (the all-reduces f and g between the layer's matrix products); [megatron_core_args] "
    "(--tp-comm-overlap off by default); [torchtitan_async_tp] (async tensor parallel: off by default)")
comm_s = q(
    "comm_s_per_step", "s", "Communication time per micro-batch: data-parallel bytes over the slowest link + tensor-parallel bytes "
    "inside the machine, at collective_efficiency",
    dp_comm_bytes / (dp_link_gb_per_s * 1e9 * I.collective_efficiency)
    + tp_comm_s
    + pp_comm_bytes / (dp_link_gb_per_s * 1e9 * I.collective_efficiency)
    + cp_comm_bytes / (cp_link * 1e9 * I.collective_efficiency)
    + ep_comm_bytes / (ep_link * 1e9 * I.collective_efficiency), "[nccl_tests]")
expert_flop_share = q(
    "expert_flop_share", "fraction", "Share of the training FLOPs per token in the routed experts (0 for a dense model)",
    IF(E > 1, IF(is_lora, 4, 6) * moe_layers * k_act * mlp_params_per_expert / flops_per_token_train, 0),
    "[kaplan2020] (6N per token), N the active expert weights: layers x top-k x one expert's MLP")
imbalance_stretch = q(
    "moe_imbalance_stretch", "x",
    "How much uneven routing stretches a step with expert parallelism = 1 + expert FLOP share x (moe_load_imbalance - 1): "
    "every GPU waits for the one whose experts got the most tokens",
    IF(AND(E > 1, ep > 1), 1 + expert_flop_share * (I.moe_load_imbalance - 1), 1),
    "[switch2021] section 2.2 (expert capacity: tokens above the busiest expert's share wait or are dropped); [megablocks2022]")
compute_s = q(
    "compute_s_per_step", "s", "Compute time per micro-batch on one GPU = FLOPs per token x s x b / (t x p x cp) / (dense TFLOPS x MFU) "
    "x the MoE imbalance stretch",
    flops_per_token_train * s * b / (t * pp * cp) / (train_tflops_per_gpu_peak * 1e12 * mfu_effective) * imbalance_stretch)
# LoRA's own work besides the frozen weights' matmuls (counted in the 4 x P of the model FLOPs): each adapter adds small
# matmuls and elementwise operations (A, B, the scaling, the add, their backward) that move activations through memory and
# each cost a kernel launch and dispatch; a recomputed forward repeats the forward share of them
LORA_RECOMPUTE_SHARE = 0.4  # forward operations of an adapter / forward + backward ones (PEFT: about 5 of 13)
lora_passes = q(
    "lora_adapter_passes", "x", "How many times the adapters' forward and backward work runs per micro-batch: 1, plus the "
    "forward share again with full recomputation", 1 + LORA_RECOMPUTE_SHARE * rec("checkpoint_layers"),
    "[chen2016] (checkpointing repeats the forward)")
lora_adapter_s = q(
    "lora_adapter_s_per_step", "s",
    "Time of the LoRA adapters' own work per micro-batch on one GPU (0 without LoRA or with an MFU given): activations moved "
    "= tokens x sum over adapted matrices of (d_in + d_out) x the framework's bytes per token and width (for 16-bit "
    "adapters; twice that for fp32 adapters, lora_fp32_adapters_on), at the GPU's memory bandwidth x "
    "decode_bandwidth_efficiency; plus adapters x operations per adapter x the framework's overhead per operation; both x "
    "the passes",
    is_lora * (I.mfu <= 0) * lora_passes * (
        s * b / (t * cp) * lora_dims_per_layer * L / pp * fw("lora_bytes_per_dim") * (1 + fp32_adapters)
        / (G("memory_bandwidth_gbps") * 1e9 * I.decode_bandwidth_efficiency)
        + L / pp * lora_matrices * fw("lora_ops_per_adapter") * fw("lora_op_overhead_us") * 1e-6),
    "[lora2021] section 4.1 (h = W0 x + B A x); [peft_lora] (the adapter as separate eager operations); [unsloth_kernels] "
    "(fused LoRA kernels); frameworks catalog (bytes and operations per adapter)")
lora_slowdown = q(
    "lora_slowdown", "x", "How much the adapters' own work stretches a LoRA micro-batch = (compute + adapter time) / compute",
    (compute_s + lora_adapter_s) / compute_s)
# Work each step does once, whatever its tokens: it weighs on a step of few tokens (one GPU, micro-batch 1) and vanishes
# behind a large one.  QLoRA dequantizes every NF4 weight before each matmul that uses it (forward, backward and a
# recomputed forward); the optimizer reads and writes every trainable weight, its gradient and its states.
qlora_dequant_s = q(
    "qlora_dequant_s_per_step", "s",
    "Time QLoRA spends dequantizing its 4-bit weights per micro-batch on one GPU (0 without QLoRA or with an MFU given) = "
    "passes (forward, backward, and the recomputed forward) x (the GPU's linear weights x the framework's time per weight "
    "+ its 4-bit matrices x the framework's fixed time per matrix)",
    quantized_base * (I.mfu <= 0) * (2 + rec("checkpoint_layers")) / (t * pp)
    * (linear_params * fw("qlora_dequant_ps_per_weight") * 1e-12
       + L * (4 + Ref("experts_held_per_layer") * (M("gated_mlp") + 2)) * fw("qlora_dequant_us_per_matrix") * 1e-6),
    "[bnb_linear4bit] (dequantize_4bit before each matmul, forward and backward); frameworks catalog "
    "qlora_dequant_ps_per_weight from [gpu_tco_h200_2026] (docs/training.md)")
optimizer_step_bytes = q(
    "optimizer_step_bytes_per_param", "bytes/param",
    "Bytes per trainable parameter the optimizer step touches once: the tensor it updates, the gradient, the states, and "
    "the 16-bit copy written back when it updates an fp32 master",
    updated_bytes + grad_bytes_per_param + opt_state_bytes + IF(master_bytes > 0, weight_bytes_per_param, 0),
    "[pytorch_adam_source]; [zero2020] section 3.1")
optimizer_step_s = q(
    "optimizer_step_s_per_step", "s",
    "GPU time of the optimizer step per micro-batch (0 with the optimizer on the CPU or an MFU given) = trainable "
    "parameters on the GPU x the larger of (bytes touched x the optimizer's passes over them / (memory bandwidth x "
    "decode_bandwidth_efficiency)) and the optimizer's arithmetic time per parameter (8-bit blockwise optimizers), once "
    "per optimizer step (shared by its micro-batches)",
    (1 - OR(I.offload_optimizer, I.offload_params)) * (I.mfu <= 0) * trainable_params
    * MAX(optimizer_step_bytes * opt("step_passes") / (G("memory_bandwidth_gbps") * 1e9 * I.decode_bandwidth_efficiency),
          opt("step_ps_per_param") * 1e-12)
    / split("shard_optimizer") / m_pipe,
    "optimizers catalog step_passes ([pytorch_adam_source]: foreach AdamW's separate passes; fused AdamW's one kernel) "
    "and step_ps_per_param ([gpu_tco_h200_phases]: bitsandbytes AdamW8bit on an H200)")
# Work that grows with the layers' widths, not with their products: every matrix product reads its input and writes its
# output through memory (forward, and twice in the backward pass), and the elementwise operations between them (norms,
# activation functions, residual adds, rotary embeddings; the loss over the vocabulary) move the same activations again.
# Per token this is proportional to h and ffn while the FLOPs grow with h x ffn, so its share of a step grows as the
# model narrows: SmolLM2 135M (h 576) runs at about 20 % of the H200's dense peak where Llama 3.2 1B (h 2048) reaches 40 %.
mlp_io_dims = lambda width: (2 + M("gated_mlp")) * (h + width)  # noqa: E731
attn_io_dims = q(
    "activation_io_attn_dims_per_layer", "-",
    "Sum of (d_in + d_out) over one layer's attention projections: Q, K, V and O (latent attention: its down and up "
    "projections)",
    IF(mla, IF(r_q > 0, h + 2 * r_q + q_dim, h + q_dim) + h + mla_kv_down + r_kv + mla_kv_up + mla_value + h,
       2 * (h + q_dim) + 2 * (h + kv_dim)), "[megatron2019] section 3; [deepseekv2_2024] section 2.1")
mlp_io = q("activation_io_mlp_dims_per_expert", "-",
           "Sum of (d_in + d_out) over one MLP's (one expert's) matrices: (2 + gated) x (hidden + ffn)", mlp_io_dims(f))
io_dims_per_token = q(
    "activation_io_dims_per_token", "-",
    "Sum of (d_in + d_out) over the matrix products one token passes through: every layer's attention projections and "
    "active MLP matrices (active and shared experts, dense layers), plus the output layer (hidden + vocabulary)",
    moe_layers * (attn_io_dims + (k_act + S) * mlp_io) + n_dense * (attn_io_dims + mlp_io_dims(f_dense)) + h + V,
    "[megatron2019] section 3 (the layer's matrices); [kaplan2020] (the output layer)")
activation_io_s = q(
    "activation_io_s_per_step", "s",
    "Time per micro-batch on one GPU spent moving activations through memory around the matrix products (0 with an MFU "
    "given) = tokens x activation_io_dims_per_token x bytes per width (activation_bytes_per_dim, fitted on published "
    "small-model runs, x the framework's activation_traffic_share: 0 where torch.compile or hand-written Triton kernels fuse "
    "the norms, activation functions and residual adds into few kernels; + its eager_bytes_per_dim) / (memory bandwidth x "
    "decode_bandwidth_efficiency); split as the FLOPs are, a third each to the forward "
    "pass, the input gradients and the weight gradients: a recomputed forward adds a third, LoRA's frozen weights take "
    "no weight gradients (a third less)",
    (I.mfu <= 0) * s * b / (t * cp * pp) * io_dims_per_token * (I.activation_bytes_per_dim * fw("activation_traffic_share") + fw("eager_bytes_per_dim"))
    * (1 + rec("checkpoint_layers") / 3 - is_lora / 3) / (G("memory_bandwidth_gbps") * 1e9 * I.decode_bandwidth_efficiency),
    "[williams2009] (roofline: a kernel below the ridge point is bound by memory traffic); activation_bytes_per_dim "
    "fitted on [llmfoundry_bench_a100]; frameworks catalog eager_bytes_per_dim fitted on [gpu_tco_h200_small] "
    "(docs/training.md)")
zero3_hooks_s = q(
    "zero3_hooks_s_per_step", "s",
    "Fixed time per micro-batch of a framework that gathers and releases each layer's parameters through module hooks "
    "under a sharding of the weights (DeepSpeed ZeRO-3) = the GPU's layers x (the framework's zero3_layer_overhead_us "
    "+ its zero3_recompute_overhead_us with full recomputation, whose second forward pass fires the hooks again)",
    shard("shard_weights") * L / pp * (fw("zero3_layer_overhead_us") + rec("checkpoint_layers") * fw("zero3_recompute_overhead_us")) * 1e-6,
    "frameworks catalog zero3_layer_overhead_us and zero3_recompute_overhead_us, from [gpu_tco_deepspeed_zero3] "
    "(ZeRO-3 against ZeRO-2 on the same runs; docs/training.md)")
layer_overhead_s = q(
    "layer_overhead_s_per_step", "s",
    "Fixed time per micro-batch on one GPU for launching each layer's operations, whatever its tokens (0 with an MFU "
    "given) = the GPU's layers x the framework's microseconds per layer (forward and backward; eager PyTorch issues "
    "each operation from Python)",
    (I.mfu <= 0) * L / pp * fw("layer_overhead_us") * 1e-6,
    "frameworks catalog layer_overhead_us, fitted on [gpu_tco_h200_small] (two micro-batch sizes of SmolLM2 135M and "
    "Pythia 160M; docs/training.md)")
step_work_slowdown = q(
    "step_work_slowdown", "x",
    "How much work besides the model's matmuls stretches a micro-batch = (compute + LoRA adapters + QLoRA dequantization + "
    "optimizer step + activation traffic + per-layer launch overhead) / compute",
    (compute_s + lora_adapter_s + qlora_dequant_s + optimizer_step_s + activation_io_s + layer_overhead_s) / compute_s)
mfu_whole_step = q(
    "mfu_whole_step", "fraction",
    "GPU efficiency over the whole step, the value the mfu input stands for: the input when above 0, else the calibrated "
    "efficiency of the matrix products (mfu_effective) divided by how much everything a typed MFU replaces stretches "
    "them: the step's other work (step_work_slowdown), the tensor-parallel all-reduces and ZeRO-3's parameter hooks.  "
    "Typed as mfu it gives the same step time wherever the GPU's work, not overlapped data-parallel traffic or CPU "
    "offload, sets the step; the pipeline bubble and the CPU optimizer step come on top of either",
    IF(I.mfu > 0, I.mfu, mfu_effective / (step_work_slowdown + (tp_comm_s + zero3_hooks_s) / compute_s)),
    "[palm2022] Appendix B (MFU: model FLOPs per second over the peak, whatever else the step does)")
offload_bytes = q(
    "offload_pcie_bytes_per_step", "bytes/GPU",
    "Bytes each GPU moves over its PCIe link to and from CPU memory per micro-batch: with parameter offload its weight shard "
    "comes in twice (forward, backward) and its gradient shard goes out; with optimizer offload alone the gradients go out "
    "and the updated trainable weights come back once per optimizer step (16-bit weights, or fp32 LoRA adapters at 4 bytes)",
    I.offload_params * (2 * (weights_bytes_total - fp8_copy_bytes) / split("shard_weights") + trainable_grad_bytes / split("shard_gradients"))
    + (1 - I.offload_params) * I.offload_optimizer * trainable_params * (grad_bytes_per_param + trained_bytes)
    / split("shard_gradients") / m_pipe,
    "[zero_offload2021] section 4 (gradients to the CPU, parameters back, once per step); [zero_infinity2021] section 5; "
    "[pytorch_fsdp] (CPUOffload)")
offload_s = q("offload_pcie_s_per_step", "s", "Time of the offload transfers per micro-batch = bytes / pcie_gb_per_s (they overlap compute)",
              offload_bytes / (I.pcie_gb_per_s * 1e9), "[pcie4_spec]")
cpu_optimizer_s = q(
    "cpu_optimizer_s_per_step", "s",
    "CPU optimizer step per micro-batch when the optimizer is offloaded: the GPU's share of trainable parameters / "
    "cpu_optimizer_params_per_s, once per optimizer step (it waits for the gradients and does not overlap compute)",
    OR(I.offload_optimizer, I.offload_params) * trainable_params / split("shard_optimizer") / I.cpu_optimizer_params_per_s
    / m_pipe, "[zero_offload2021] section 5 (CPU-Adam; the step sits between backward and the next forward)")
gpu_busy_s = compute_s * step_work_slowdown  # the GPU's own work per micro-batch: what overlapped traffic hides behind
comm_slowdown = q(
    "comm_slowdown", "x", "How much communication and CPU offload stretch the step = max(1, GPU communication other than "
    "tensor-parallel / GPU work, offload transfers / GPU work) + (tensor-parallel all-reduces + CPU optimizer time + "
    "ZeRO-3's parameter hooks) / GPU work, GPU work = compute x step_work_slowdown: data-parallel, pipeline, context and "
    "expert traffic overlaps all the GPU's work (the matmuls, the adapters, the activation traffic, the launches) and only "
    "the part that does not fit behind it costs time; the tensor-parallel all-reduces, the CPU optimizer step and the "
    "hooks that issue and wait for ZeRO-3's gathers (zero3_hooks_s_per_step) do not overlap",
    MAX(1, (comm_s - tp_comm_s) / gpu_busy_s, offload_s / gpu_busy_s)
    + (tp_comm_s + cpu_optimizer_s + (I.mfu <= 0) * zero3_hooks_s) / gpu_busy_s,
    "[pytorch_fsdp] (prefetch overlaps all-gathers with compute); [zero_offload2021] section 4 (transfers overlap compute); "
    "[megatron2019] section 3 (tensor-parallel all-reduces between matmuls); [gpu_tco_deepspeed_zero3] (the hooks)")
bubble = q(
    "pipeline_bubble_fraction", "fraction",
    "Share of a pipeline step the GPUs idle (the bubble) = (p-1) / (v x m + p - 1) with p stages, m micro-batches, v model chunks per GPU",
    (pp - 1) / (I.pipeline_virtual_stages * m_pipe + pp - 1),
    "[narayanan2021] section 2.2.1 (1F1B: bubble time (p-1)/m of the ideal) and 2.2.2 (interleaved: (p-1)/(v m))")

q = quantities_of("training memory")
offloaded_param_bytes = q(
    "cpu_offload_param_bytes_per_gpu", "bytes/GPU",
    "CPU memory one GPU's offloaded parameters and gradients take (offload_params): its share of each, as sharded "
    "(unsharded, a whole copy)",
    I.offload_params * ((weights_bytes_total - fp8_copy_bytes) / state_split("shard_weights")
                        + gradients_bytes_total / state_split("shard_gradients")),
    "[pytorch_fsdp] (CPU offload keeps the sharded parameters and gradients in host memory)")
offloaded_optimizer_bytes = q(
    "cpu_offload_optimizer_bytes_per_gpu", "bytes/GPU",
    "CPU memory one GPU's offloaded optimizer takes (either offload): its share of the optimizer states and master "
    "weights and, where the framework streams them out (offload_streams_gradients), of the gradients in fp32",
    OR(I.offload_optimizer, I.offload_params) * optimizer_bytes_total / state_split("shard_optimizer")
    + (1 - I.offload_params) * I.offload_optimizer * fw("offload_streams_gradients") * 4 * trainable_params
    / state_split("shard_optimizer"),
    "[zero_offload2021] (ZeRO-Offload: fp32 gradients beside the optimizer states in CPU memory)")
q("cpu_offload_gib_per_machine", "GiB/machine",
  "CPU memory each machine holds for offloaded states: what each of its GPUs offloads (parameters and gradients, "
  "optimizer) x its GPUs per machine",
  (offloaded_param_bytes + offloaded_optimizer_bytes) / GIB * I.n_gpus / job_machines,
  "[zero_offload2021]; [pytorch_fsdp] (CPU offload keeps the sharded states in host memory)")

host_gib_per_gpu = q(
    "host_memory_gib_per_gpu_used", "GiB/GPU", "CPU memory per GPU in use: host_memory_gib_per_gpu, or 2 x the GPU's memory",
    IF(I.host_memory_gib_per_gpu > 0, I.host_memory_gib_per_gpu, 2 * gpu_memory_gib),
    "[aws_p4] (1,152 GiB for 8 A100 80GB); [aws_p5] (2,048 GiB for 8 H100); gpu-tco assumption: 2x")
host_gib_per_machine = q(
    "host_memory_gib_per_machine", "GiB/machine", "CPU memory of each machine of the job = CPU memory per GPU x the job's GPUs "
    "per machine", host_gib_per_gpu * I.n_gpus / job_machines)
fits_host = q("fits_host_memory", "bool",
  f"Offloaded states fit the machines' CPU memory: CPU memory they need per machine <= {100 * HOST_MEMORY_USABLE:g} % of its CPU memory",
  Ref("cpu_offload_gib_per_machine") <= HOST_MEMORY_USABLE * host_gib_per_machine,
  "gpu-tco assumption: a fifth of the host memory kept for the system, the data loader and pinned transfer buffers")

fits_gpu = q("fits_train_gpu_memory", "bool", "The GPUs hold the job: allocator peak (the tensors) <= the fit limit (GPU "
             "memory less the margin), and the device total <= the GPU's memory",
             AND(allocator_peak_train_gib <= fit_limit_gib, peak_train_gib_per_gpu <= gpu_memory_gib))
fits_train = q("fits_train", "bool", "Training fits: the GPUs hold it (fits_train_gpu_memory) and offloaded states fit the "
               "machines' CPU memory (fits_host_memory)", AND(fits_gpu, fits_host))
q("train_memory_tight", "flag", "1 = fits, but the device total is above 90 % of the GPU's memory: little room for a longer batch "
  "or another library's workspace", AND(fits_train, peak_train_gib_per_gpu > 0.9 * gpu_memory_gib))
q("train_fit_code", "code", "Whether training fits: 0 = does not fit (tensors above the fit limit, or the device total above the "
  "memory), 1 = fits, 2 = fits but tight (device total above 90 % of the GPU's memory)",
  IF(NOT(fits_train), 0, IF(peak_train_gib_per_gpu > 0.9 * gpu_memory_gib, 2, 1)))
# the estimate fits, but its likely range does not: a planner recommends such a setup only where no acceptable one
# keeps its likely peak within the memory (core.planner.rank)
q("train_memory_may_exceed", "flag", "1 = fits by the estimate, but the high end of the likely device total (the framework's "
  "memory band) is above the GPU's memory: the setup may run out of memory",
  AND(fits_train, peak_likely_high > gpu_memory_gib), "frameworks catalog memory_band_pct (docs/calibration.md)")

q = quantities_of("training compute")
train_tokens_per_s = q(
    "train_tokens_per_s", "tokens/s", "Training throughput of the whole job (communication that does not overlap compute included)",
    I.n_gpus * train_tflops_per_gpu_peak * 1e12 * mfu_effective / flops_per_token_train / comm_slowdown * (1 - bubble)
    / imbalance_stretch / step_work_slowdown)
q("train_mfu_achieved", "fraction",
  "Model FLOPs utilization the estimate comes to, as papers report it = training tokens/s x model FLOPs per token / (GPUs "
  "x dense peak): mfu_effective after the step's other work, communication and the pipeline bubble",
  train_tokens_per_s * flops_per_token_train / (I.n_gpus * train_tflops_per_gpu_peak * 1e12), "[palm2022] appendix B")
train_hours = q(
    "train_hours", "h", "Wall-clock training time = FLOPs / (GPUs x dense TFLOPS x MFU) x communication slowdown / (1 - pipeline bubble)",
    train_flops / (I.n_gpus * train_tflops_per_gpu_peak * 1e12 * mfu_effective) / 3600 * comm_slowdown / (1 - bubble)
    * imbalance_stretch * step_work_slowdown,
    "[palm2022] Appendix B (model FLOPs utilization); [narayanan2021] section 5.1")
q("train_gpu_hours", "GPU-h", "GPU-hours of the training job", train_hours * I.n_gpus)
speed_band = fw("speed_band_pct") / 100
q("train_hours_likely_low", "h",
  "Low end of the likely training time = train_hours / (1 + the framework's speed band): the band is twice the median error of "
  "its measured runs held out of the fit (published runs left out one source at a time, or gpu-tco's own runs where it has no published one; docs/calibration.md)",
  train_hours / (1 + speed_band), "frameworks catalog speed_band_pct, written by gpu-tco calibrate --write")
q("train_hours_likely_high", "h", "High end of the likely training time = train_hours x (1 + the framework's speed band)",
  train_hours * (1 + speed_band), "frameworks catalog speed_band_pct, written by gpu-tco calibrate --write")

# ---------------------------------------------------------------------------
q = quantities_of("inference")
wd = lambda fld: T("weight_dtypes", "weights_dtype", fld)  # noqa: E731
tp_inf = I.n_gpus
other_bits = IF(OR(wd("quantizes_embeddings"), wd("bits_per_param") >= 16), wd("bits_per_param"), 16)  # embeddings, norms
infer_weights_bytes = q(
    "infer_weights_bytes", "bytes", "Inference weights: layer linears at the format's bits, embeddings/norms at 16 bit unless the format quantizes them",
    linear_params * wd("bits_per_param") / 8
    + (params_total - linear_params) * other_bits / 8,
    "bits per parameter: [gptq2022], [awq2023] (4.16-4.25 with group scales), [qlora2023] (NF4 4.5, 4.127 with double quantization), [llamacpp_quantize] (Q4_K_M 4.89)")
infer_weights_gib = q("infer_weights_gib", "GiB/GPU", "Inference weights per GPU (tensor parallel over n_gpus)",
                      infer_weights_bytes / tp_inf / GIB)
kv_elements_layer = q(
    "kv_elements_per_token_layer", "-",
    "Elements cached per token and layer: K and V (2 x kv_heads x head_dim), or with latent attention kv_lora_rank + rotary dim",
    IF(mla, mla_kv_down, 2 * kv_dim), "[gqa2023]; [deepseekv2_2024] section 2.1")
window = M("sliding_window")
slide_frac = M("sliding_layer_fraction")
global_kv_elements = q(
    "global_kv_elements_per_token_layer", "-",
    "Elements cached per token in a full-attention layer when those layers have their own KV heads and width "
    "(2 x global_kv_heads x global_head_dim; else the same as every layer)",
    IF(M("global_kv_heads") > 0, 2 * M("global_kv_heads") * IF(M("global_head_dim") > 0, M("global_head_dim"), d), kv_elements_layer),
    "[gemma4_2026] (full-attention layers: 2 to 4 KV heads of 512); [mimov2_2025]")
kv_dtype_bytes = T("kv_dtypes", "kv_dtype", "bits_per_element") / 8
INDEXER_KEY_BYTES_PER_ELEMENT = 1 + 4 / 128  # FP8 keys with one fp32 scale per 128 values ([dsa_code_2025])
indexer_bytes_per_token = q(
    "indexer_bytes_per_token", "bytes/token",
    "Sparse attention's indexer keys cached per token, whole model: layers with an indexer (indexer_kv_layers, counted in "
    "full-context layer equivalents where the keys are compressed; else the attention layers) x indexer_head_dim x (1 byte "
    "FP8 + a 4-byte scale per 128), whatever the KV format",
    IF(M("indexer_kv_layers") > 0, M("indexer_kv_layers"), attn_layers) * d_idx * INDEXER_KEY_BYTES_PER_ELEMENT, "[dsa_2025] section 2.1 (FP8 indexer); [dsa_code_2025] (k_cache and k_scale_cache: 128 + 4 bytes)")
kv_bytes_per_token = q(
    "kv_bytes_per_token", "bytes/token",
    "KV cache per token, whole model: attention layers x cached width x bytes (2 x n_kv x d with grouped-query attention; "
    "full-attention layers at their own width where they differ), plus compressed layers' entries (compressed_kv_layers: "
    "one entry per compression ratio tokens, in full-context layer equivalents) and a sparse-attention indexer's keys",
    (attn_layers * ((1 - slide_frac) * global_kv_elements + slide_frac * kv_elements_layer) + M("compressed_kv_layers")
     * kv_elements_layer) * kv_dtype_bytes + indexer_bytes_per_token,
    "[vllm2023] section 2.3: OPT-13B holds 800 KB per token; [gqa2023]; state layers hold none ([mamba2_2024]); compressed "
    "attention ([deepseekv4_2026]: one entry per 4 or 128 tokens beside a 128-token window)")
sliding_kv_share = q(
    "sliding_kv_share", "fraction",
    "Share of a token's KV bytes held by sliding-window layers (their tokens cap at the window) = sliding layers' bytes / all",
    IF(kv_bytes_per_token > 0, attn_layers * slide_frac * kv_elements_layer * kv_dtype_bytes / kv_bytes_per_token, 0),
    "[gemma2_2024] (alternating local and global layers)")
ctx = I.context_tokens


def _windowed(n):
    """Tokens of ``n`` a sequence's KV holds, weighted by bytes: sliding-window layers' share capped at the window."""
    return IF(window > 0, (1 - sliding_kv_share) * n + sliding_kv_share * MIN(n, window), n)


kv_tokens_effective = q(
    "kv_tokens_effective", "tokens", "Tokens cached per sequence after sliding-window layers cap at the window",
    _windowed(ctx),
    "[mistral2023] (rolling buffer cache); [gemma2_2024] (alternating local and global layers)")
kv_cache_gib = q("kv_cache_gib", "GiB", "KV cache of the whole batch, all GPUs together",
                 I.batch * kv_tokens_effective * kv_bytes_per_token / GIB)
# Latent attention caches one vector per token shared by every head: tensor parallelism cannot split it, and
# engines keep the whole latent cache on every rank (SGLang's and vLLM's MLA backends; TensorRT-LLM's).
kv_split = q("kv_split", "GPUs", "GPUs the KV cache is split over: tensor parallel up to the KV heads (replicated beyond); "
             "1 with latent attention (the one latent vector per token is kept whole on every rank); every GPU with an engine "
             "that splits the layers (each holds its layers' cache)",
             IF(T("engines", "engine", "layer_split") > 0, tp_inf, IF(mla, 1, MIN(tp_inf, n_kv))),
             "[megatron2019]: heads split across t GPUs; [deepseekv2_2024] section 2.1 (one latent vector per token for all heads); "
             "[sglang_dp_attention] (the latent cache is replicated across tensor-parallel ranks)")
kv_cache_gib_per_gpu = q(
    "kv_cache_gib_per_gpu", "GiB/GPU", "KV cache per GPU: split by tensor parallel up to n_kv (KV heads are replicated beyond; "
    "latent attention: whole on every GPU)",
    kv_cache_gib / kv_split, "[megatron2019]: heads split across t GPUs; KV heads are replicated once t exceeds them")
state_bytes_per_seq = q(
    "state_bytes_per_seq", "bytes/sequence",
    "Fixed-size state of one sequence, whole model, whatever its length: state layers x (recurrent state elements x "
    "state_bits/8 (16 when not given) + convolution window elements x 2 bytes)",
    n_state * (M("state_elements_per_layer") * IF(M("state_bits") > 0, M("state_bits"), 16) / 8
               + M("state_conv_elements_per_layer") * 2),
    "[mamba2_2024]; [gateddeltanet2024]; [vllm_hybrid] (engines hold one state per running sequence, in "
    "mamba_ssm_cache_dtype: the config's float32 for Nemotron 3 and Qwen3.5); [sglang_qwen3next] (float32 by default); "
    "[vllm_ascend_qwen35] (Qwen3.5-35B-A3B: 262,144 bytes per layer and request at tensor parallel 8, as counted here)")
state_cache_gib_per_gpu = q(
    "state_cache_gib_per_gpu", "GiB/GPU", "Fixed-size states of the batch per GPU (split over tensor parallel like the heads)",
    I.batch * state_bytes_per_seq / tp_inf / GIB, "[vllm_hybrid]")


kv_attended_bytes_per_token = q(
    "kv_attended_bytes_per_token", "bytes/token", "KV bytes per token that attention reads (the KV cache without an indexer's keys)",
    kv_bytes_per_token - indexer_bytes_per_token)


def kv_read_bytes(tokens, attended):
    """KV bytes one decode step reads for a sequence holding ``tokens`` of which it attends to ``attended`` (all, or the
    sparse attention's top-k), whole model: their KV (sliding layers up to the window) plus every token's indexer key."""
    return _windowed(attended) * kv_attended_bytes_per_token + tokens * indexer_bytes_per_token


q("kv_and_state_gib_per_gpu", "GiB/GPU",
  "Memory per GPU that the batch's sequences hold: KV cache + the fixed-size states of state layers (the memory table's "
  "KV-cache row)", kv_cache_gib_per_gpu + state_cache_gib_per_gpu, "[vllm2023]; [vllm_hybrid]")
infer_activation_gib = q(
    "infer_activation_gib", "GiB/GPU", "Inference workspace: one prefill chunk's layer intermediates + fp32 logits of the batch",
    (MIN(I.prefill_chunk_tokens, ctx * I.batch) * 2 * (4 * h + 2 * f) / tp_inf + I.batch * V * 4) / GIB,
    "[vllm_engine_args]: the profiling run is one max_num_batched_tokens forward pass")
overhead_infer_gib = q(
    "overhead_infer_gib", "GiB/GPU", "CUDA context + allocator fragmentation",
    I.cuda_context_gib + frag * (infer_weights_gib + kv_cache_gib_per_gpu + state_cache_gib_per_gpu + infer_activation_gib))
alloc_peak_infer = q("allocator_peak_infer_gib", "GiB/GPU", "Allocator peak of inference: weights + KV cache + fixed-size states + workspace (tensors only)",
  infer_weights_gib + kv_cache_gib_per_gpu + state_cache_gib_per_gpu + infer_activation_gib, "[pytorch_memory]")
peak_infer_gib_per_gpu = q(
    "peak_infer_gib_per_gpu", "GiB/GPU",
    "Inference memory per GPU, device total = weights + KV cache + fixed-size states + workspace + overhead (CUDA context and "
    "allocator cache)",
    infer_weights_gib + kv_cache_gib_per_gpu + state_cache_gib_per_gpu + infer_activation_gib + overhead_infer_gib)
# the engine takes at most gpu_memory_utilization of the memory (vLLM's default 0.9) for everything but what it does not
# count as its own; the allocator's cache and fragmentation come out of what is left
def engine_budget_gib(weights_gib):
    """GiB per GPU the engine takes for weights, workspace and KV cache with ``weights_gib`` of weights: its share
    (gpu_memory_utilization) of the whole memory (vLLM, SGLang), of the memory left after the weights (TensorRT-LLM), or
    all of it (llama.cpp, transformers: they allocate what they are asked for); the allocator's cache and fragmentation
    come out of it too."""
    device = (gpu_memory_gib - I.cuda_context_gib) / (1 + frag)
    share_of = T("engines", "engine", "memory_share_of")
    return MIN(device, IF(EQ(share_of, 1), gpu_memory_gib * I.gpu_memory_utilization - I.cuda_context_gib,
                          IF(EQ(share_of, 2), weights_gib + I.gpu_memory_utilization * (device - weights_gib), device)))


ENGINE_MEMORY_SOURCE = ("[vllm_engine_args] (gpu_memory_utilization); [sglang_server_args] (mem_fraction_static); "
                        "[trtllm_serve] (kv_cache_free_gpu_memory_fraction); engines catalog memory_share_of; [pytorch_memory]")
usable_infer = q("infer_usable_gib", "GiB/GPU",
                 "Memory the engine gives the weights, workspace and KV cache = the smaller of (GPU memory - CUDA context) / "
                 "(1 + fragmentation) and the engine's share of it: gpu_memory_utilization of the whole memory less the CUDA "
                 "context (vLLM, SGLang), the weights + that share of what they leave (TensorRT-LLM), or all (llama.cpp)",
                 engine_budget_gib(infer_weights_gib), ENGINE_MEMORY_SOURCE)
per_seq_gib = kv_tokens_effective * kv_bytes_per_token / kv_split / GIB + state_bytes_per_seq / tp_inf / GIB + V * 4 / GIB
q("fits_infer", "bool",
  "Inference fits: weights + KV cache + fixed-size states + workspace (the allocator's peak) <= the memory the engine takes "
  "(infer_usable_gib: vLLM's 90 % share by default), the budget the largest batch and the longest context that fit are "
  "measured against, so a batch is said to fit only where the engine would hold it",
  alloc_peak_infer <= usable_infer, ENGINE_MEMORY_SOURCE)
q("max_batch_fit", "sequences", "Most concurrent sequences of context_tokens that fit (0 = none)",
  MAX(0, FLOOR((usable_infer - infer_weights_gib - MIN(I.prefill_chunk_tokens, ctx * I.batch) * 2 * (4 * h + 2 * f) / tp_inf / GIB) / per_seq_gib)))
# the KV tokens per sequence that fit, then the context that caches that many (_windowed inverted: beyond the window
# only the full-attention layers' share grows; a model of sliding layers only caches the window at any length)
kv_tokens_fit = q("infer_kv_tokens_fit", "tokens", "KV tokens per sequence (sliding layers' share capped at the window) that "
                  "fit at this batch beside the weights, workspace and states",
                  (usable_infer - infer_weights_gib - infer_activation_gib - state_cache_gib_per_gpu) * GIB * kv_split
                  / (I.batch * kv_bytes_per_token))
context_cap = q("model_context_limit", "tokens", "The model's own context length (max_context; 1e9 where it is not known: "
                "an architecture estimated from a parameter count)",
                IF(AND(M("max_context") > 0, NOT(M("is_estimate"))), M("max_context"), 1e9))
q("max_context_fit", "tokens", "Longest context per sequence at this batch that fits, at most the model's own: the KV tokens "
  "per sequence that fit, beyond the sliding window counted at the full-attention layers' share (sliding layers hold the "
  "window only) (0 = none)",
  MAX(0, MIN(context_cap, FLOOR(IF(OR(window <= 0, kv_tokens_fit <= window), kv_tokens_fit,
                                   IF(sliding_kv_share < 1, (kv_tokens_fit - sliding_kv_share * window)
                                      / MAX(1e-12, 1 - sliding_kv_share), 1e9))))),
  "[mistral2023] (rolling buffer cache); [gemma2_2024] (alternating local and global layers)")

fp16_acc_peak = q(
    "fp16_accumulate_tflops_per_gpu_peak", "TFLOPS",
    "Dense 16-bit peak at the accumulation the engine uses: an engine that accumulates in FP16 (llama.cpp) on a GPU whose "
    "FP16-accumulate rate is listed (GeForce cards: twice their FP32-accumulate rate) gets that rate; otherwise the BF16 rate "
    "with FP32 accumulation (PyTorch, vLLM, SGLang and TensorRT-LLM accumulate in FP32; data-centre and workstation cards run "
    "both at one rate)",
    IF(AND(T("engines", "engine", "fp16_accumulate") > 0, G("fp16_accumulate_dense_tflops") > 0),
       G("fp16_accumulate_dense_tflops"), G("bf16_dense_tflops")),
    "GPU catalog fp16_accumulate_dense_tflops ([nvidia_ada] Appendix A, [nvidia_ampere_ga102], [nvidia_rtx_blackwell] Table 3); "
    "engines catalog fp16_accumulate ([llamacpp_cublas_f16])")
infer_tflops = q(
    "infer_tflops_per_gpu_peak", "TFLOPS",
    "Dense peak used for inference: FP4 when the weights are FP4 (NVFP4, MXFP4) and the GPU has FP4 tensor cores, FP8 when "
    "they are FP8 and the GPU has FP8, else the 16-bit peak at the engine's accumulation (weights widened to 16 bit for the "
    "multiply)",
    IF(AND(wd("fp4_compute"), G("fp4_dense_tflops") > 0), G("fp4_dense_tflops"),
       IF(AND(wd("fp8_compute"), G("fp8_dense_tflops") > 0), G("fp8_dense_tflops"), fp16_acc_peak)),
    "GPU catalog dense rates; [nvidia_rtx_blackwell], [verda_blackwell_ultra] (FP4 tensor cores on Blackwell)")
# Efficiencies per GPU family: the input (fitted on every measured GPU) x the family's factor where the calibration
# set has measurements of that family (GPU catalog columns; 1 elsewhere), at most 1.
decode_eff = q(
    "decode_bandwidth_efficiency_used", "fraction",
    "Share of peak memory bandwidth decoding achieves = decode_bandwidth_efficiency x the GPU family's factor (gpus.csv), at most 1",
    MIN(1, I.decode_bandwidth_efficiency * IF(G("decode_efficiency_factor") > 0, G("decode_efficiency_factor"), 1)),
    "fitted per GPU family on the calibration set (docs/calibration.md)")
prefill_eff = q(
    "prefill_mfu_used", "fraction",
    "Share of dense peak FLOPS prefill (and compute-bound decoding) achieves = prefill_mfu x the GPU family's factor (gpus.csv), at most 1",
    MIN(1, I.prefill_mfu * IF(G("prefill_efficiency_factor") > 0, G("prefill_efficiency_factor"), 1)),
    "fitted per GPU family on the calibration set (docs/calibration.md)")
# What one decode step reads.  A batch of B tokens, each routed to k of E experts, reads the distinct experts
# they chose: E x (1 - (1 - k/E)^B) per layer in expectation (a token picks k different experts, so a given
# expert is missed by one token with probability 1 - k/E, by all B independently with (1 - k/E)^B).  A dense
# model is the case E = k = 1.  The input embedding is a lookup of B rows, not a read of the table.
infer_expert_bytes = q(
    "infer_expert_bytes", "bytes", "Weights of one routed expert at the inference weight format (a dense model's MLP counts as one)",
    mlp_params_per_expert * wd("bits_per_param") / 8)
infer_input_embedding_bytes = q(
    "infer_input_embedding_bytes", "bytes", "Input embedding table at the inference format (0 when tied to the LM head, which is read)",
    embedding_lookup_params * other_bits / 8, "[gptoss2025] Table 1 (the embedding is not active)")
infer_fixed_read_bytes = q(
    "infer_fixed_read_bytes", "bytes",
    "Weights every decode step reads whatever the batch: all but the routed experts, the input embedding and an image encoder "
    "(attention, dense layers, shared experts, norms, LM head)",
    infer_weights_bytes - moe_layers * E * infer_expert_bytes - infer_input_embedding_bytes - M("encoder_params") * other_bits / 8)


EXPERT_BATCH_CAP = 1000  # (1 - k/E)^B is taken at B <= 1000: beyond, it is below 1e-3 for every catalog model, and
# spreadsheets return an error (not 0) when a power underflows the smallest double


def experts_read(batch):
    """Expected distinct routed experts a batch of ``batch`` tokens reads per layer: E x (1 - (1 - k/E)^B)."""
    return E * (1 - (1 - k_act / E) ** MIN(batch, EXPERT_BATCH_CAP))


def weights_read_bytes(batch):
    """Weight bytes one decode step of ``batch`` sequences reads, whole model (divide by the tensor-parallel degree)."""
    return infer_fixed_read_bytes + moe_layers * experts_read(batch) * infer_expert_bytes


q("experts_read_per_layer", "experts",
  "Routed experts a decode step of the batch reads per expert layer, expected: E x (1 - (1 - k/E)^batch) (shared experts besides)",
  experts_read(I.batch), "expectation under independent routing of each token to k of E experts ([deepseekv3_2024]: 8 of 256)")
# Tensor parallelism: two all-reduces of the layer's activations (bf16, hidden wide) per layer and step
# ([megatron2019] section 3), each a fixed latency plus 2(t-1)/t of the bytes over the link ([nccl_tests]).
tp_allreduce_fixed_s = q(
    "tp_allreduce_fixed_s", "s", "Tensor parallel: fixed latency per step = 2 all-reduces x layers x allreduce_latency_us (0 on one GPU)",
    IF(tp_inf > 1, 2 * L * I.allreduce_latency_us * 1e-6, 0), "[megatron2019] section 3 (two all-reduces per layer); [nccl_tests]")
tp_allreduce_s_per_token = q(
    "tp_allreduce_s_per_token", "s/token",
    "Tensor parallel: transfer time per token in a step = 2 all-reduces x layers x 2(t-1)/t x hidden x 2 bytes / (link x collective_efficiency)",
    IF(tp_inf > 1, 2 * L * 2 * (tp_inf - 1) / tp_inf * h * 2 / (intra_gb_per_s * 1e9 * I.collective_efficiency), 0),
    "[megatron2019] section 3; [nccl_tests] (ring all-reduce moves 2(t-1)/t of the data per GPU)")
kv_attended_tokens = q(
    "kv_attended_tokens", "tokens",
    "Tokens a query of a sequence of context_tokens attends to: all, or the sparse attention's top-k (sparse_attention_tokens) when fewer",
    attention_span(ctx), "[dsa_2025]")
kv_read_per_seq = q(
    "kv_read_bytes_per_seq", "bytes",
    "KV bytes a decode step reads for one sequence of context_tokens, whole model (sliding layers capped at the window; sparse "
    "attention: the top-k tokens' KV and every token's indexer key)", kv_read_bytes(ctx, kv_attended_tokens), "[dsa_2025]")
kv_state_read = q(
    "kv_state_read_bytes_per_step_per_gpu", "bytes",
    "KV and state bytes a decode step moves per GPU: each sequence's KV read + its fixed-size state read and written back",
    I.batch * (kv_read_per_seq / kv_split + 2 * state_bytes_per_seq / tp_inf),
    "[pope2022] section 2; [dsa_2025] (top-k KV); [vllm_hybrid] (state updated in place)")
decode_bytes_per_step = q(
    "decode_bytes_per_step_per_gpu", "bytes",
    "Bytes read per decode step per GPU: the weights the batch reads (the distinct experts its tokens chose) + the batch's KV "
    "and state traffic",
    weights_read_bytes(I.batch) / tp_inf + kv_state_read,
    "[pope2022] section 2: small-batch decoding reads all weights and the KV cache per step")
decode_step_s = q(
    "decode_step_s", "s", "Time of one decode step: the larger of memory time and compute time, plus the tensor-parallel all-reduces",
    MAX(decode_bytes_per_step / (G("memory_bandwidth_gbps") * 1e9 * decode_eff),
        2 * params_active * I.batch / tp_inf / (infer_tflops * 1e12 * prefill_eff))
    + tp_allreduce_fixed_s + I.batch * tp_allreduce_s_per_token,
    "[pope2022] section 2: memory time versus compute time per step; [megatron2019] (all-reduces)")
q("decode_tokens_per_s_per_seq", "tokens/s", "Generation speed of one sequence", 1 / decode_step_s)
q("decode_tokens_per_s", "tokens/s", "Aggregate generated tokens per second of the batch", I.batch / decode_step_s)
# A short prefill pass leaves every matmul a few hundred rows tall and the fixed work of each layer (kernel launches,
# norms, rotary, the attention kernel's launch) weighs: the time of a pass of n tokens is a fixed part plus n x the
# long-pass time per token, so its efficiency is n / (n + n_half) of the long-pass efficiency, n_half = fixed time /
# time per token.  gpu-tco's own H200 rows (Llama 3.1 8B, eager transformers, SDPA) follow n / (n + 180) of one
# asymptote within 2 % from 512 to 32,768 prompt tokens (42, 54, 55 and 57 % of the dense peak).  n_half is the
# engine's (engines.csv prefill_half_tokens): eager PyTorch launches each operation from Python; the serving engines
# capture CUDA graphs and fuse kernels, fitted on NVIDIA's points.  One definition for the inference estimate and
# the serving planner's first token.
def prefill_pass_share(tokens):
    """Share of its long-pass efficiency a prefill pass of ``tokens`` tokens reaches: tokens / (tokens + the engine's
    prefill_half_tokens); 1 where the engine gives none."""
    return tokens / (tokens + T("engines", "engine", "prefill_half_tokens"))


prefill_length = q(
    "prefill_length_factor", "fraction",
    "Share of its long-prompt efficiency a prefill of context_tokens reaches = s / (s + the engine's prefill_half_tokens)",
    prefill_pass_share(ctx),
    "[gpu_tco_h200_serve] (Llama 3.1 8B prefill at 512, 2,048, 8,192 and 32,768 tokens on one H200, eager transformers: "
    "42, 54, 55 and 57 % of the dense peak, causal attention counted: s / (s + 180)); engines catalog prefill_half_tokens")

# ---------------------------------------------------------------------------
# Serving a demand within latency targets, as engines run it: continuous batching over a paged KV cache with
# chunked prefill ([vllm2023], [sarathi2024]).  One replica is n_gpus GPUs in tensor parallel (as for inference
# above); a deployment runs as many replicas as the demand needs.  In steady state a replica decodes B
# sequences; each step also prefills the prompts of the requests that arrive meanwhile (B x prompt/output
# tokens per step on average: a sequence generates output_tokens over its life and brings prompt_tokens), so
#   step(B) = max(memory, compute)(B) + all-reduces(B) + B x (prompt/output) x prefill time per token.
# For a dense model step(B) is linear in B (t0 + B x k) and the largest batch within the targets is closed
# form; for mixture-of-experts the weights read grow with B (distinct experts), and a short fixed iteration
# over that closed form gives a batch that meets the targets (each iterate from above is a safe one).
q = quantities_of("serving")
NO_TARGET_S = 1e9  # a target of 0 means none: a latency no setup reaches
p_tok, o_tok = I.prompt_tokens, I.output_tokens
traffic_hours = q("serve_traffic_hours_per_month", "h/month", "Hours per month the traffic runs = hours_per_day x days_per_month",
                  I.hours_per_day * I.days_per_month)
serve_rps = q(
    "serve_demand_requests_per_s", "requests/s",
    "Requests per second to serve: requests_per_s, or monthly_mtok x 1e6 / ((prompt + output tokens) x 3,600 x traffic hours)",
    IF(I.monthly_mtok > 0, I.monthly_mtok * 1e6 / ((p_tok + o_tok) * 3600 * traffic_hours), I.requests_per_s))


kv_mean_tokens = q("serve_kv_tokens_mean", "tokens",
                   "Tokens a decoding sequence holds on average = prompt + half its output (sliding-window layers capped at the window)",
                   _windowed(p_tok + o_tok / 2), "[mistral2023] (rolling buffer cache)")
# The serving engine (data/engines.csv; each factor may be overridden by its input, 0 = the engine's): a fixed time per
# decode step (kernel launches, scheduling, sampling) and per request, its bandwidth and compute efficiency relative to
# the global ones, the grouped GEMM's efficiency reading experts, and how prompts share the steps under closed-loop load.
EN = lambda fld: T("engines", "engine", fld)  # noqa: E731
ENGINE_FIT = "engines catalog: fitted on [aiconfigurator_silicon] (H100 and B200 points; docs/calibration.md)"
step_us = q("serve_step_overhead_us_per_layer", "us", "Fixed time of a decode step per layer in use: engine_step_overhead_us_per_layer, "
            "else the engine's (kernel launches, scheduling, sampling)",
            IF(I.engine_step_overhead_us_per_layer > 0, I.engine_step_overhead_us_per_layer, EN("step_overhead_us_per_layer")), ENGINE_FIT)
step_overhead_s = q("serve_step_overhead_s", "s", "Fixed time of each decode step = layers x the time per layer, in seconds",
                    L * step_us / 1e6, ENGINE_FIT)
request_ms = q("serve_request_overhead_ms", "ms", "Fixed time per request before its first token in use: engine_request_overhead_ms, "
               "else the engine's", IF(I.engine_request_overhead_ms > 0, I.engine_request_overhead_ms, EN("request_overhead_ms")),
               ENGINE_FIT)
request_overhead_s = q("serve_request_overhead_s", "s", "Fixed time per request before its first token, in seconds", request_ms / 1000)
bw_factor = q("serve_engine_bandwidth_factor", "factor", "The engine's bandwidth factor in use: engine_bandwidth_factor, else the engine's",
              IF(I.engine_bandwidth_factor > 0, I.engine_bandwidth_factor, EN("bandwidth_factor")), ENGINE_FIT)
serve_bw_eff = q("serve_bandwidth_efficiency", "fraction", "Share of peak memory bandwidth the engine's decode steps reach = "
                 "decode_bandwidth_efficiency_used x the engine's bandwidth factor, at most 1", MIN(1, decode_eff * bw_factor), ENGINE_FIT)
compute_factor = q("serve_engine_compute_factor", "factor", "The engine's compute factor in use: engine_compute_factor, else the engine's",
                   IF(I.engine_compute_factor > 0, I.engine_compute_factor, EN("compute_factor")), ENGINE_FIT)
serve_flops_eff = q("serve_compute_efficiency", "fraction", "Share of dense peak FLOPS the engine's prefill and compute-bound steps reach = "
                    "prefill_mfu_used x the engine's compute factor, at most 1", MIN(1, prefill_eff * compute_factor), ENGINE_FIT)
# The inference estimate's prefill is the engine's, as the serving planner's first token counts it: the engine's compute
# efficiency (prefill_mfu x the GPU family's factor x the engine's compute factor) x the prompt-length factor.
quantities_of("inference")(
    "prefill_tokens_per_s", "tokens/s",
    "Prompt tokens processed per second by the engine: n_gpus x TFLOPS x the engine's compute efficiency "
    "(serve_compute_efficiency) x the prompt-length factor / (2P + causal attention 4*L_attention*(s/2)*a*d + sparse indexer "
    "+ state recurrences)",
    tp_inf * infer_tflops * 1e12 * serve_flops_eff * prefill_length * IF(E > 1, I.moe_prefill_efficiency, 1)
    / (2 * params_active + mixer_flops(ctx / 2, 4)),
    "[kaplan2020] (2N forward FLOPs per token) plus attention 4*L*s*h per token, a causal prompt attending to s/2 tokens on "
    "average (as serve_prefill_s_per_token counts it); " + ENGINE_FIT)
gg_engine = q("serve_grouped_gemm_efficiency", "fraction", "The engine's grouped-GEMM efficiency in use: grouped_gemm_efficiency, "
              "else the engine's", IF(I.grouped_gemm_efficiency > 0, I.grouped_gemm_efficiency, EN("grouped_gemm_efficiency")), ENGINE_FIT)
gg_eff = q("serve_expert_read_efficiency", "fraction", "Expert reads relative to dense reads: the grouped-GEMM efficiency for "
           "mixture-of-experts models, 1 for dense ones", IF(E > 1, gg_engine, 1), ENGINE_FIT)
queue_share = q("serve_prefill_queue_share", "fraction", "Share of the other in-flight requests' prompts a new request waits for "
                "(prefill_queue_share, else the engine's)",
                IF(I.prefill_queue_share > 0, I.prefill_queue_share, EN("prefill_queue_share")), ENGINE_FIT)
interleave_share = q("serve_interleaved_prefill_share", "fraction", "Share of the other requests' prefill that lands between a "
                     "request's tokens (interleaved_prefill_share, else the engine's)",
                     IF(I.interleaved_prefill_share > 0, I.interleaved_prefill_share, EN("interleaved_prefill_share")), ENGINE_FIT)
split = q("serve_layer_split", "flag", "1 = the engine splits the layers across the replica's GPUs (llama.cpp --split-mode layer): "
          "one GPU works at a time while decoding, and no all-reduces", EN("layer_split") > 0, "[llamacpp_server]")
time_div = q("serve_decode_parallel_gpus", "GPUs", "GPUs that share a decode step's work: n_gpus in tensor parallel, 1 with a layer "
             "split (each GPU reads its own layers in turn)", IF(split, 1, tp_inf), "[llamacpp_server]; [megatron2019]")
# Attention data parallel (DeepSeek-style): attention_dp groups of GPUs each run attention on their own requests with
# tensor parallel inside the group; the experts (a dense model's MLP) spread over all the replica's GPUs, reached by an
# all-to-all (dispatch and combine) per expert layer.
adp = q("serve_attention_dp", "GPUs", "Attention data-parallel groups of a replica (at most n_gpus)", MIN(I.attention_dp, tp_inf),
        "[sglang_dp_attention]")
t_attn = q("serve_attention_tp", "GPUs", "GPUs in tensor parallel inside an attention group = n_gpus / attention_dp", tp_inf / adp,
           "[sglang_dp_attention]")
expert_all_bytes = moe_layers * E * infer_expert_bytes
kv_split_attn = q("serve_kv_split", "GPUs", "GPUs one sequence's KV cache is split over: kv_split with attention's own tensor "
                  "parallel (n_gpus / attention_dp)",
                  IF(EN("layer_split") > 0, tp_inf, IF(mla, 1, MIN(t_attn, n_kv))), "[megatron2019]; [deepseekv2_2024]")
serve_weights_gib = q("serve_weights_gib", "GiB/GPU", "Serving weights per GPU: attention, embeddings and dense parts over the "
                      "attention group's GPUs, the experts (a dense model's MLP) over all the replica's GPUs",
                      ((infer_weights_bytes - expert_all_bytes) / t_attn + expert_all_bytes / tp_inf) / GIB, "[sglang_dp_attention]")
a2a_fixed_s = q("serve_all_to_all_fixed_s", "s", "Expert all-to-all latency per step with attention data parallel: dispatch and "
                "combine per expert layer x allreduce_latency_us (0 without)",
                IF(AND(adp > 1, E > 1), 2 * moe_layers * I.allreduce_latency_us * 1e-6, 0), "[deepseekv3_2024] section 3.2; [nccl_tests]")
a2a_tok_s = q("serve_all_to_all_s_per_token", "s/token", "Expert all-to-all transfer per token of the batch with attention data "
              "parallel: dispatch and combine of k experts x hidden x 2 bytes per expert layer, over the link, shared by the groups",
              IF(AND(adp > 1, E > 1), 2 * moe_layers * k_act * h * 2 / (intra_gb_per_s * 1e9 * I.collective_efficiency) / adp, 0),
              "[deepseekv3_2024] section 3.2")
ar_fixed_s = q("serve_allreduce_fixed_s", "s", "Tensor-parallel all-reduce latency per step inside an attention group, plus the "
               "expert all-to-all latency (0 with a layer split)",
               IF(split, 0, IF(t_attn > 1, 2 * L * I.allreduce_latency_us * 1e-6, 0) + a2a_fixed_s),
               "[megatron2019] section 3; [nccl_tests]")
ar_tok_s = q("serve_allreduce_s_per_token", "s/token", "Tensor-parallel all-reduce transfer per token inside an attention group "
             "(each group runs 1 / attention_dp of the batch), plus the expert all-to-all (0 with a layer split)",
             IF(split, 0, IF(t_attn > 1, 2 * L * 2 * (t_attn - 1) / t_attn * h * 2 / (intra_gb_per_s * 1e9 * I.collective_efficiency), 0)
                / adp + a2a_tok_s), "[megatron2019] section 3; [nccl_tests]")
membw = G("memory_bandwidth_gbps") * 1e9 * serve_bw_eff
serve_attended = q(
    "serve_kv_attended_tokens", "tokens",
    "Tokens a decoding query attends to, on average: prompt + half the output, or the sparse attention's top-k when fewer",
    attention_span(p_tok + o_tok / 2), "[dsa_2025]")
serve_kv_read = q(
    "serve_kv_read_bytes_per_seq", "bytes",
    "KV bytes a decode step reads for one sequence holding prompt + half its output, whole model (sliding layers capped at the "
    "window; sparse attention: the top-k tokens' KV and every token's indexer key)",
    kv_read_bytes(p_tok + o_tok / 2, serve_attended), "[dsa_2025]")
kv_read_s_per_seq = q(
    "serve_kv_s_per_seq", "s", "Memory time per sequence per decode step: its KV read per GPU (sparse attention: the top-k "
    "tokens and every indexer key; attention data parallel: over its group) + its fixed-size state read and written / "
    "(bandwidth x the engine's efficiency)",
    (serve_kv_read / IF(split, 1, kv_split_attn) / adp + 2 * state_bytes_per_seq / tp_inf) / membw,
    "[vllm2023]; [pope2022] section 2")
flops_per_gpu_s = infer_tflops * 1e12 * serve_flops_eff
static_batch = q("serve_static_batching", "flag", "1 = the engine prefills a batch's prompts together in one forward pass before it "
                 "decodes and samples the first token from that pass (eager Hugging Face generate); 0 = chunked prefill: a prompt's "
                 "chunks ride on the decode steps of the running requests", EN("static_batching") > 0,
                 "[hf_llm_optims] (generate runs the prompt's forward pass, then one step per token); [sarathi2024]")
own_pass_tokens = q("serve_own_prefill_pass_tokens", "tokens", "Tokens in the forward pass that prefills a lone prompt: the prompt, "
                    "at most one prefill chunk (static batching: the whole prompt)",
                    IF(static_batch, p_tok, MIN(p_tok, I.prefill_chunk_tokens)), "[vllm_engine_args]; [sarathi2024]")
queue_pass_tokens = q("serve_queue_prefill_pass_tokens", "tokens", "Tokens in a prefill pass while prompts queue: the engine fills its "
                      "prefill chunk (prefill_chunk_tokens) from the queue, at least one prompt's pass",
                      MAX(own_pass_tokens, I.prefill_chunk_tokens), "[vllm_engine_args]; [sarathi2024]")
own_pass_share = q("serve_own_prefill_length_factor", "fraction", "Share of its long-pass efficiency a lone prompt's prefill pass "
                   "reaches = n / (n + the engine's prefill_half_tokens), n = serve_own_prefill_pass_tokens (as prefill_length_factor)",
                   prefill_pass_share(own_pass_tokens), "[gpu_tco_h200_serve]; engines catalog prefill_half_tokens")
queue_pass_share = q("serve_queue_prefill_length_factor", "fraction", "Share of its long-pass efficiency a prefill pass of queued "
                     "prompts reaches = n / (n + the engine's prefill_half_tokens), n = serve_queue_prefill_pass_tokens",
                     prefill_pass_share(queue_pass_tokens), "[gpu_tco_h200_serve]; engines catalog prefill_half_tokens")
compute_s_per_seq = q(
    "serve_compute_s_per_seq", "s", "Compute time per sequence per decode step = (2 x active params + attention 4 x L_attention x "
    "tokens x q_dim (sparse: top-k tokens and the indexer) + state recurrences) / (GPUs sharing the step x TFLOPS x prefill_mfu)",
    (2 * params_active + mixer_flops(kv_mean_tokens, 4)) / time_div / flops_per_gpu_s,
    "[kaplan2020] (2N forward FLOPs per token); [pope2022] section 2")
prefill_s_per_token = q(
    "serve_prefill_s_per_token", "s/token",
    "Prefill time per prompt token on one replica = (2 x active params + causal attention 4 x L_attention x prompt/2 x q_dim "
    "(sparse: top-k, and the indexer) + state recurrences) / (n_gpus x TFLOPS x prefill_mfu x MoE factor x the length factor "
    "of a pass of queued prompts) + its tensor-parallel all-reduces",
    (2 * params_active + mixer_flops(p_tok / 2, 4)) / tp_inf
    / (flops_per_gpu_s * IF(E > 1, I.moe_prefill_efficiency, 1) * queue_pass_share) + ar_tok_s, "[kaplan2020]; prefill is compute-bound ([pope2022]); [megatron2019]")
prefill_per_seq_step = q(
    "serve_prefill_s_per_seq_step", "s", "Prefill riding on each decode step per sequence of the batch = interleaved share x prompt/output "
    "x prefill time per token",
    interleave_share * p_tok / o_tok * prefill_s_per_token,
    "[sarathi2024] (chunked prefill piggybacks on decode steps); the share landing between one request's tokens: " + ENGINE_FIT)
prefill_chunks = q("serve_prefill_chunks", "steps", "Steps a prompt's prefill spreads over = prompt / prefill_chunk_tokens, rounded up",
                   CEILING(p_tok / I.prefill_chunk_tokens), "[vllm_engine_args]; [sarathi2024]")
first_token_steps = q("serve_first_token_steps", "steps", "Decode steps of the running requests a prompt's first token waits through: "
                      "its prefill chunks, each riding on a step; 0 with static batching (the first token comes from the prompt's "
                      "own forward pass)", IF(static_batch, 0, prefill_chunks), "[sarathi2024]; [hf_llm_optims]")
routed_active = q("serve_routed_expert_params_active", "params", "Routed-expert (a dense model's MLP) weights each token multiplies "
                  "= expert layers x experts per token x one expert's weights", moe_layers * k_act * mlp_params_per_expert)
prompt_prefill_s_per_token = q(
    "serve_prompt_prefill_s_per_token", "s/token",
    "Prefill time per token of one prompt: its attention and other weights but the experts on its attention group's GPUs "
    "(n_gpus / attention_dp), the experts (a dense model's MLP) on all the replica's GPUs, + all-reduces; without attention "
    "data parallel the same as serve_prefill_s_per_token but for the length factor of the prompt's own pass",
    ((2 * (params_active - routed_active) + mixer_flops(p_tok / 2, 4)) / t_attn + 2 * routed_active / tp_inf)
    / (flops_per_gpu_s * IF(E > 1, I.moe_prefill_efficiency, 1) * own_pass_share) + ar_tok_s,
    "[sglang_dp_attention] (each attention group prefills its own requests); [kaplan2020]")
own_prefill_s = q("serve_own_prefill_s", "s", "A request's own prompt: prompt tokens x the prefill time per token of one prompt",
                  p_tok * prompt_prefill_s_per_token)
queue_prefill_s_per_seq = q(
    "serve_queue_prefill_s_per_seq", "s", "First-token wait each other in-flight request adds: the queue share of its prompt's prefill "
    "at the replica's rate (prompt x serve_prefill_s_per_token)",
    queue_share * p_tok * prefill_s_per_token, "closed loop: requests arriving together queue for the prefill ([sarathi2024] section 2); " + ENGINE_FIT)
fixed_step_s = ar_fixed_s + step_overhead_s


def _weights_s(batch):
    """Weight read time of a step: the dense part at the engine's bandwidth, the experts at its grouped-GEMM efficiency."""
    return (infer_fixed_read_bytes / IF(split, 1, t_attn)
            + moe_layers * experts_read(MAX(1, batch)) * infer_expert_bytes / gg_eff / time_div) / membw


def _decode_s(batch):  # a decode step of `batch` sequences without the piggybacked prefill
    return MAX(_weights_s(batch) + batch * kv_read_s_per_seq, batch * compute_s_per_seq) \
        + fixed_step_s + batch * ar_tok_s


def _tpot_s(batch, step=None):
    """A step of the batch + the prefill of the other batch - 1 requests' prompts that lands between this one's tokens (its
    own prompt was prefilled before its first token).  ``step``: the batch's decode step when it is a quantity already."""
    return (_decode_s(batch) if step is None else step) + MAX(0, batch - 1) * prefill_per_seq_step


# Attention data parallel: the engine runs a prompt's prefill when the other attention groups have one too (TensorRT-LLM's
# attention-DP balancing), so a new request waits for (attention_dp - 1) / 2 more arrivals on average; in a closed loop
# of `batch` requests one arrives every request lifetime / batch = output x time per token / batch.
adp_wait_share = q("serve_attention_dp_wait_arrivals", "arrivals", "Arrivals a new request waits for before its prefill with "
                   "attention data parallel: (attention_dp - 1) / 2 (0 without)", (adp - 1) / 2, "[trtllm_attention_dp]")


def _ttft_s(batch, step=None):
    """Closed loop: the request's fixed overhead, its own prefill, the queue share of the other batch - 1 prompts, and the
    decode steps its prefill chunks share; with attention data parallel, the arrivals it waits for while the engine
    balances its groups (none for a lone request: there is nothing to balance)."""
    step = _decode_s(batch) if step is None else step
    balancing = 0 if isinstance(batch, int) and batch <= 1 else IF(batch > 1, adp_wait_share * o_tok * _tpot_s(batch, step) / batch, 0)
    return request_overhead_s + own_prefill_s + (batch - 1) * queue_prefill_s_per_seq + first_token_steps * step + balancing


tpot_target_s = q("serve_tpot_target_s", "s", "Per-token target in seconds (no target: 1e9 s)", IF(I.tpot_slo_ms > 0, I.tpot_slo_ms / 1000, NO_TARGET_S))
ttft_target_s = q("serve_ttft_target_s", "s", "First-token target in seconds (no target: 1e9 s)", IF(I.ttft_slo_ms > 0, I.ttft_slo_ms / 1000, NO_TARGET_S))
# First token within its target: overhead + own + (B - 1) x queue + steps x (fixed + B x per-sequence time) <= target, so
# B <= (target - overhead - own + queue - steps x fixed) / (steps x per-sequence time + queue), on each line.
ttft_room_s = q(
    "serve_ttft_room_s", "s", "First-token time the decode steps and the queue may take within the target = target - request "
    "overhead - own prefill + one queue share", ttft_target_s - request_overhead_s - own_prefill_s + queue_prefill_s_per_seq)
tpot_slope = q("serve_tpot_s_per_seq", "s", "Memory-bound step time each sequence of the batch adds to a token: KV read + all-reduce bytes + carried prefill",
               kv_read_s_per_seq + ar_tok_s + prefill_per_seq_step)
ttft_slope = q("serve_decode_s_per_seq", "s", "First-token time each sequence adds on the memory line: the steps it waits through x "
               "(KV read + all-reduce bytes) + its queued prefill", first_token_steps * (kv_read_s_per_seq + ar_tok_s) + queue_prefill_s_per_seq)
compute_batch = q(
    "serve_compute_batch_limit", "sequences", "Largest batch the compute-bound step allows within both targets (the compute line of each)",
    MIN((tpot_target_s - fixed_step_s + prefill_per_seq_step) / (compute_s_per_seq + ar_tok_s + prefill_per_seq_step),
        (ttft_room_s - first_token_steps * fixed_step_s)
        / (first_token_steps * (compute_s_per_seq + ar_tok_s) + queue_prefill_s_per_seq)))


def _largest_batch(weights_s):
    """Largest batch with the weight time held at ``weights_s``: both targets, each against the memory and the compute line."""
    return MIN((tpot_target_s - weights_s - fixed_step_s + prefill_per_seq_step) / tpot_slope,
               (ttft_room_s - first_token_steps * (weights_s + fixed_step_s)) / ttft_slope, compute_batch)


w_s = q("serve_weights_s_bound_1", "s", "Weight read time of a step whose batch reads one token's experts (per GPU)", _weights_s(1))
b_iter = q("serve_batch_bound_1", "sequences", "Largest batch within the targets if a step read only one token's experts (an upper bound)",
           _largest_batch(w_s))
for _i in (2, 3, 4):
    w_s = q(f"serve_weights_s_bound_{_i}", "s", f"Weight read time of a step at batch bound {_i - 1} (per GPU)", _weights_s(b_iter))
    b_iter = q(f"serve_batch_bound_{_i}", "sequences",
               f"Largest batch within the targets with the experts read at bound {_i - 1} ({'a safe batch' if _i % 2 == 0 else 'an upper bound'}; "
               "dense models: the same as bound 1)", _largest_batch(w_s))
eng_step_s = q("engine_decode_step_s", "s", "Decode step of `batch` sequences as the serving engine runs it: the serving model's "
               "step (weights and experts at the engine's efficiency, each sequence's KV for prompt + half the output, "
               "all-reduces, the engine's fixed time per step), without prefill between tokens", _decode_s(MAX(1, I.batch)),
               "[pope2022] section 2; " + ENGINE_FIT)
q("engine_decode_tokens_per_s_per_seq", "tokens/s", "Generation speed of one sequence in a batch of `batch` with the engine = "
  "1 / engine_decode_step_s (at batch 1: 1000 / serve_tpot_ms_at_batch_1)", 1 / eng_step_s, ENGINE_FIT)
q("engine_decode_tokens_per_s", "tokens/s", "Tokens per second a batch of `batch` sequences generates with the engine = batch / "
  "engine_decode_step_s", MAX(1, I.batch) / eng_step_s, ENGINE_FIT)
step_1 = q("serve_decode_step_s_at_batch_1", "s", "Decode step of a lone request (batch 1)", _decode_s(1), "[pope2022] section 2")
tpot_1 = q("serve_tpot_ms_at_batch_1", "ms", "Time per output token of a lone request (batch 1), milliseconds", _tpot_s(1, step_1) * 1000)
ttft_1 = q("serve_ttft_ms_at_batch_1", "ms", "Time to the first token of a lone request (batch 1), milliseconds", _ttft_s(1, step_1) * 1000)
latency_batch = q("serve_latency_batch", "sequences", "Largest batch (whole sequences) whose steps meet both latency targets; 0 = none",
                  MAX(FLOOR(MAX(0, b_iter)), IF(AND(tpot_1 / 1000 <= tpot_target_s, ttft_1 / 1000 <= ttft_target_s), 1, 0)))
workspace_gib = q("serve_workspace_gib", "GiB/GPU", "Serving workspace: one prefill chunk's layer intermediates",
                  MIN(I.prefill_chunk_tokens, I.max_num_seqs * (p_tok + o_tok)) * 2 * (4 * h + 2 * f) / tp_inf / GIB,
                  "[vllm_engine_args]: the profiling run is one max_num_batched_tokens forward pass")
q("serve_usable_gib", "GiB/GPU", "Memory the engine gives a replica's weights, workspace and KV cache per GPU (as "
  "infer_usable_gib, with the serving weights)", engine_budget_gib(serve_weights_gib), ENGINE_MEMORY_SOURCE)
seq_gib = q("serve_gib_per_seq", "GiB/GPU", "Memory per sequence: its whole KV cache (prompt + output, per GPU) + its fp32 logits",
            _windowed(p_tok + o_tok) * kv_bytes_per_token / kv_split_attn / GIB + state_bytes_per_seq / tp_inf / GIB + V * 4 / GIB,
            "[vllm2023]; fixed-size states: [vllm_hybrid]")
kv_batch = q("serve_kv_batch", "sequences",
             "Most sequences of prompt + output tokens whose KV cache fits beside the weights and the prefill workspace (paged: no padding)",
             FLOOR(MAX(0, (Ref("serve_usable_gib") - serve_weights_gib - workspace_gib) / seq_gib) * adp),
             "[vllm2023] (paged KV cache); with attention data parallel each group holds its own requests ([sglang_dp_attention])")
serve_batch = q("serve_batch", "sequences",
                "Sequences a replica decodes at once at full load: the smallest of the latency batch, the KV-cache batch and max_num_seqs",
                MIN(latency_batch, kv_batch, I.max_num_seqs))
b_run = MAX(1, serve_batch)
q("serve_memory_share", "fraction",
  "Share of each GPU's memory the replica's plan takes = (CUDA context + weights + prefill workspace + the serving batch's KV "
  "cache and logits) / GPU memory: at most gpu_memory_utilization, what the engine is allowed to take (vLLM's "
  "--gpu-memory-utilization, 0.9 unless given)",
  (I.cuda_context_gib + serve_weights_gib + workspace_gib + serve_batch / adp * seq_gib) / gpu_memory_gib,
  "[vllm_engine_args] (gpu_memory_utilization: the share of GPU memory the engine may use, default 0.9)")
serve_step_s = q("serve_decode_step_s", "s", "Decode step at the serving batch (without the prefill between tokens)", _decode_s(b_run),
                 "[pope2022] section 2")
q("serve_fits", "flag", "1 = the weights and at least one request's KV cache fit in the replica's memory", kv_batch >= 1)
meets_tpot = q("serve_meets_tpot", "flag", "1 = a batch of one meets the per-token target (no target: 1)", tpot_1 / 1000 <= tpot_target_s)
meets_ttft = q("serve_meets_ttft", "flag", "1 = a batch of one meets the first-token target (no target: 1)", ttft_1 / 1000 <= ttft_target_s)
tpot_s = q("serve_tpot_s", "s", "Time per generated token at the serving batch: decode step + the prefill it carries", _tpot_s(b_run, serve_step_s),
           "[sarathi2024]; [pope2022]")
q("serve_aggregated_tpot_ms", "ms", "Aggregated serving (each replica prefills and decodes): time per output token at full load "
  "(the serving batch), milliseconds", tpot_s * 1000)
ttft_s = q("serve_ttft_s", "s", "Time to the first token at the serving batch, closed loop: request overhead + own prefill + the queue "
           "share of the other prompts + the decode steps the prompt's chunks share", _ttft_s(b_run, serve_step_s), "[sarathi2024] (chunked prefill)")
q("serve_aggregated_ttft_ms", "ms", "Aggregated serving: time to the first token at full load, closed loop (the batch's other "
  "prompts counted; no open-loop wait), milliseconds", ttft_s * 1000, "[sarathi2024] (chunked prefill)")
q("serve_experts_read_per_layer", "experts", "Routed experts a step of the serving batch reads per expert layer, expected", experts_read(b_run))
# Likely ranges: the 10th-90th percentile of measured / modelled over the engine's calibration points of this model kind
# (dense or mixture-of-experts), engines catalog columns tpot_low_dense ... ttft_high_moe.
is_moe = E > 1


def _band(quantity: str, side: str):
    return IF(is_moe, EN(f"{quantity}_{side}_moe"), EN(f"{quantity}_{side}_dense"))


BAND_SOURCE = "10th-90th percentile of measured / modelled on the engine's calibration points of this model kind ([aiconfigurator_silicon])"
# Closed-loop load as benchmarks run it: `concurrency` requests in flight, each sent again as soon as it ends.
conc = q("serve_concurrency", "sequences", "Requests in flight: concurrency, or the serving batch when 0", IF(I.concurrency > 0, I.concurrency, b_run))
running = q("load_running_sequences", "sequences", "Requests the engine runs at once at the concurrency: all of them, or as many as "
            "the KV cache holds (the rest wait for a running one to end)", MAX(1, MIN(conc, kv_batch)), "[vllm2023] (paged KV cache)")
load_step_s = q("load_decode_step_s", "s", "Decode step of the running sequences (without the prefill between tokens)",
                _decode_s(running), "[pope2022] section 2")
load_tpot_s = q("load_tpot_s", "s", "Time per output token with `concurrency` requests in flight: decode step of the running "
                "sequences + the share of the others' prefill between tokens", _tpot_s(running, load_step_s),
                "[sarathi2024]; [pope2022]")
running_ttft_s = q("load_running_ttft_s", "s", "Time to the first token of a request admitted at once: request overhead + own "
                   "prefill + the queue share of the other running prompts + the steps its chunks share",
                   _ttft_s(running, load_step_s),
                   "[sarathi2024]")
load_ttft_s = q("load_ttft_s", "s", "Time to the first token with `concurrency` requests in flight: request overhead + own prefill + "
                "the queue share of the others' prompts + the steps the chunks share; requests beyond what the KV cache holds "
                "first wait (concurrency - running) / running request lifetimes",
                running_ttft_s + MAX(0, conc - running) / running * (running_ttft_s + MAX(0, o_tok - 1) * load_tpot_s),
                "[sarathi2024]; Little's law for the requests waiting outside the batch")
q("load_tpot_ms", "ms", "Time per output token at the concurrency, milliseconds", load_tpot_s * 1000)
q("load_ttft_ms", "ms", "Time to the first token at the concurrency, milliseconds", load_ttft_s * 1000)
q("load_tpot_ms_likely_low", "ms", "Time per output token at the concurrency, low end of the likely range", load_tpot_s * 1000 * _band("tpot", "low"), BAND_SOURCE)
q("load_tpot_ms_likely_high", "ms", "Time per output token at the concurrency, high end of the likely range", load_tpot_s * 1000 * _band("tpot", "high"), BAND_SOURCE)
q("load_ttft_ms_likely_low", "ms", "Time to the first token at the concurrency, low end of the likely range", load_ttft_s * 1000 * _band("ttft", "low"), BAND_SOURCE)
q("load_ttft_ms_likely_high", "ms", "Time to the first token at the concurrency, high end of the likely range", load_ttft_s * 1000 * _band("ttft", "high"), BAND_SOURCE)
q("load_tokens_per_s_per_user", "tokens/s", "Generation speed each user sees at the concurrency = 1 / time per output token", 1 / load_tpot_s)
q("load_output_tokens_per_s_per_gpu", "tokens/s/GPU",
  "Generated tokens per second per GPU at the concurrency, closed loop = concurrency x output tokens / (first token + (output - 1) x "
  "time per token) / GPUs", conc * o_tok / (load_ttft_s + MAX(0, o_tok - 1) * load_tpot_s) / I.n_gpus,
  "Little's law: concurrency = rate x time in the system")
replica_rps = q("serve_aggregated_replica_requests_per_s", "requests/s",
                "Aggregated serving: requests per second one replica sustains within the targets = batch / (output tokens x time "
                "per token); 0 = none", IF(serve_batch >= 1, serve_batch / (o_tok * tpot_s), 0),
                "Little's law: concurrency = rate x time in the system")
# The queues before the first token (below: serve_slot_wait_ms, serve_prefill_wait_ms), as functions of a replica's load.
slot_s = q("serve_slot_hold_s", "s", "Time a request holds its sequence slot = output tokens x time per token", o_tok * tpot_s)
slots = MAX(1, serve_batch)
prefill_service_s = q("serve_prefill_service_s", "s", "Prefill work of one prompt on a replica = prompt x prefill time per token",
                      p_tok * prefill_s_per_token)


def _slot_wait_s(u):
    """Mean wait for a free sequence slot at load ``u``: M/M/c, Sakasegawa's closed form (1e9 s at u >= 1)."""
    return IF(u < 1, slot_s * u ** (SQRT(2 * (slots + 1)) - 1) / (slots * (1 - u)), NO_TARGET_S)


def _prefill_wait_s(rho):
    """Mean wait for the prefill ahead at prefill load ``rho``: M/D/1, Pollaczek-Khinchine (1e9 s at rho >= 1)."""
    return IF(rho < 1, rho * prefill_service_s / (2 * (1 - rho)), NO_TARGET_S)


def _wait_at_s(u):
    """The whole queueing wait of a replica run at load ``u`` (its arrivals u x requests/s at full load)."""
    return _slot_wait_s(u) + _prefill_wait_s(u * replica_rps * prefill_service_s)


# The utilization planned: the target, or lower when the queueing wait at the target would push the first token past
# its target (a smaller batch queues longer): the first of target x 1, 3/4, 1/2, 1/4 whose wait fits.
wait_budget_s = q("serve_queue_budget_s", "s", "Queueing the first-token target leaves = target - service time (ttft_ms)",
                  ttft_target_s - ttft_s)
UTILIZATION_STEPS = (1, 0.75, 0.5, 0.25)
waits = {step: q(f"serve_queue_wait_s_at_{round(step * 100)}pct", "s",
                 f"Queueing wait of a replica run at {round(step * 100)} % of target_utilization (slot + prefill)",
                 _wait_at_s(I.target_utilization * step), "[sakasegawa1977]; [kleinrock1975] chapter 5")
         for step in UTILIZATION_STEPS}
planned_u = I.target_utilization
for _step in reversed(UTILIZATION_STEPS):
    planned_u = IF(waits[_step] <= wait_budget_s, I.target_utilization * _step, planned_u)
planned_u = q("serve_planned_utilization", "fraction",
              "Utilization the replicas are planned at: target_utilization, or the first of 3/4, 1/2 and 1/4 of it at which the "
              "queueing wait keeps the first token within its target (the target when none does)",
              planned_u, "[kingman1961]; [sakasegawa1977]; [kleinrock1975] chapter 5")
agg_replicas_for_load = q(
    "serve_aggregated_replicas_for_load", "replicas",
    "Aggregated serving: replicas that carry the demand at the planned utilization = demand / (one replica's requests per second x "
    "serve_planned_utilization), rounded up (0 = none serves it)",
    IF(replica_rps > 0, CEILING(serve_rps / (replica_rps * planned_u)), 0),
    "[kingman1961] (a queue's wait grows as load / (1 - load): capacity is planned below full load)")
agg_replicas = q("serve_aggregated_replicas", "replicas", "Aggregated serving: replicas of the deployment = those carrying the "
                 "demand at the planned utilization + spare_replicas (0 = none serves it)",
                 IF(replica_rps > 0, agg_replicas_for_load + I.spare_replicas, 0), "[sre_book2016] chapter 18 (N + 1, N + 2 redundancy)")
agg_load = q("serve_aggregated_load_fraction", "fraction", "Aggregated serving: share of the replicas' capacity the demand uses",
             IF(agg_replicas > 0, serve_rps / (agg_replicas * replica_rps), 0))
agg_wait_s = q("serve_aggregated_queue_wait_s", "s", "Aggregated serving: wait before a request's prefill starts at its load "
               "(a free sequence slot, M/M/c, + the prefill of the prompts ahead, M/D/1)", _wait_at_s(agg_load),
               "[sakasegawa1977]; [kleinrock1975] chapter 5")
agg_ok = q("serve_aggregated_ok", "flag", "1 = aggregated serving fits, runs a batch of at least one within both targets and its "
           "first token, queueing included, meets its target", AND(kv_batch >= 1, serve_batch >= 1, ttft_s + agg_wait_s <= ttft_target_s))
agg_gpus = q("serve_aggregated_gpus", "GPUs", "Aggregated serving: GPUs of the deployment = replicas x n_gpus", agg_replicas * I.n_gpus)

# Disaggregated prefill and decode ([distserve2024], [splitwise2024], [dynamo_disagg]): prefill replicas only prefill
# prompts (no decode steps beside them), decode replicas only decode (no prefill chunks between tokens), and each prompt's
# KV cache travels from its prefill replica to a decode replica over kv_transfer_gb_per_s per GPU (the network between
# machines by default).  Both pools use the option's GPU, GPUs per replica and weight format; the prefill pool is an M/D/1
# queue per replica, planned at the utilization whose wait keeps the first token within its target (closed form:
# rho D / (2 (1 - rho)) <= budget  <=>  rho <= 2 budget / (D + 2 budget)); the decode pool at target_utilization with the
# largest batch whose step meets the per-token target.  Each pool keeps spare_replicas of its own.
# A rented offer that states no network between its machines (a marketplace or community machine) has no link anybody
# chose for the KV cache: disaggregation is weighed there only with kv_transfer_gb_per_s given.
kv_link_code = q("disagg_kv_link_code", "code", "Which link carries the KV cache from prefill to decode replicas: 1 = "
                 "kv_transfer_gb_per_s as given, 2 = the network between one's own servers (own_fabric_gbps_per_gpu), 3 = the "
                 "offer's stated network, 0 = none (a rented offer that states no network, or bought consumer cards, which "
                 "have no GPUDirect RDMA: prefill and decode are not run apart)",
                 IF(I.kv_transfer_gb_per_s > 0, 1, IF(I.buy, IF(G("consumer"), 0, 2), IF(OF("fabric_gbps_per_gpu") > 0, 3, 0))),
                 "[gpudirect_rdma] (GPUDirect RDMA: Tesla and Quadro GPUs)")
kv_link = q("disagg_kv_link_gb_per_s", "GB/s", "Bandwidth per GPU carrying the KV cache from prefill to decode replicas: "
            "kv_transfer_gb_per_s, else the network between machines (disagg_kv_link_code; 0 = none)",
            IF(I.kv_transfer_gb_per_s > 0, I.kv_transfer_gb_per_s, IF(kv_link_code > 0, inter_gb_per_s, 0)),
            "[dynamo_disagg] (NIXL over RDMA); [splitwise2024] (KV cache over InfiniBand)")
kv_xfer_bytes = q("disagg_kv_transfer_bytes_per_gpu", "bytes", "KV cache of one prompt each GPU of a decode replica receives = "
                  "prompt tokens x KV bytes per token (sliding layers capped at the window) / the GPUs it is split over + the "
                  "fixed-size state per GPU", _windowed(p_tok) * kv_bytes_per_token / kv_split_attn + state_bytes_per_seq / tp_inf,
                  "[distserve2024] section 4 (KV transfer between phases)")
kv_xfer_s = q("disagg_kv_transfer_s", "s", "Time to send one prompt's KV cache from its prefill replica to a decode replica = bytes "
              "per GPU / (link x collective_efficiency) + one transfer latency (allreduce_latency_us); each GPU sends its own share",
              IF(kv_link > 0, kv_xfer_bytes / (kv_link * 1e9 * I.collective_efficiency) + I.allreduce_latency_us * 1e-6, NO_TARGET_S),
              "[distserve2024] section 4; [splitwise2024] section 4")
q("disagg_kv_transfer_ms", "ms", "Time to send one prompt's KV cache to its decode replica, milliseconds", kv_xfer_s * 1000)
p_forward_s = q("disagg_prefill_service_s", "s", "Prefill replica: one prompt's prefill with no decode beside it = prompt x prefill "
                "time per token + chunks x the engine's fixed time of a step", own_prefill_s + prefill_chunks * fixed_step_s,
                "[distserve2024] (no decode interference)")
p_rps = q("disagg_prefill_replica_requests_per_s", "requests/s", "Prompts per second one prefill replica prefills at full load",
          1 / p_forward_s)
ttft_d_s = q("disagg_ttft_service_s", "s", "Disaggregated: time to the first token without queueing = request overhead + the "
             "prompt's prefill on a prefill replica + the KV transfer", request_overhead_s + p_forward_s + kv_xfer_s,
             "[distserve2024]; [dynamo_disagg]")
p_budget_s = (ttft_target_s - ttft_d_s) / 2  # half the queueing budget for the prefill wait, the rest for a decode slot
p_util = q("disagg_prefill_planned_utilization", "fraction", "Load the prefill replicas are planned at: target_utilization, or "
           "lower so that the M/D/1 wait rho D / (2 (1 - rho)) stays within half the first token's queueing budget (rho = 2 "
           "budget / (D + 2 budget)); 0 = the target cannot be met", MIN(I.target_utilization, MAX(0, 2 * p_budget_s / (p_forward_s + 2 * p_budget_s))),
           "[kleinrock1975] chapter 5 (M/D/1)")
p_load_reps = q("disagg_prefill_replicas_for_load", "replicas", "Prefill replicas carrying the demand = demand / (prompts per second "
                "of one x its planned load), rounded up (0 = none meets the first-token target)",
                IF(p_util > 0.001, CEILING(serve_rps / (p_rps * p_util)), 0), "[distserve2024] section 4 (replicas per phase)")
p_rho = IF(p_load_reps > 0, serve_rps / (p_load_reps * p_rps), 1)
p_wait_s = q("disagg_prefill_wait_s", "s", "Mean wait for a prefill replica at its load, M/D/1 (Pollaczek-Khinchine)",
             IF(p_rho < 1, p_rho * p_forward_s / (2 * (1 - p_rho)), NO_TARGET_S), "[kleinrock1975] chapter 5")


def _pure_decode_batch(weights_s):
    """Largest batch whose decode step alone (no prefill between tokens) meets the per-token target, memory and compute line."""
    return MIN((tpot_target_s - weights_s - fixed_step_s) / (kv_read_s_per_seq + ar_tok_s),
               (tpot_target_s - fixed_step_s) / (compute_s_per_seq + ar_tok_s))


# The largest batch within the per-token target: the largest power of two whose step meets it (a mixture-of-experts step
# reads more experts as the batch grows, so the step is tried at each), then the closed form between it and twice it
# with the experts read at twice it (safe: a smaller batch reads fewer).
DECODE_GRID = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
grid_steps = {g: q(f"disagg_decode_step_s_at_{g}", "s", f"Decode replica: step of {g} sequences without prefill between tokens",
                   _decode_s(g), "[pope2022] section 2") for g in DECODE_GRID}
d_grid = q("disagg_decode_grid_batch", "sequences", "Decode replica: the largest of 1, 2, 4 ... 1024 sequences whose step meets the "
           "per-token target (0 = none)", MAX(*(IF(grid_steps[g] <= tpot_target_s, g, 0) for g in DECODE_GRID)))
d_top = MIN(2 * d_grid, DECODE_GRID[-1])
d_top_w = q("disagg_decode_weights_s_at_top", "s", "Decode replica: weight read time of a step at twice the grid batch (per GPU)",
            _weights_s(MAX(1, d_top)))
d_closed = q("disagg_decode_batch_closed_form", "sequences", "Decode replica: largest batch within the per-token target with the "
             "experts read at twice the grid batch (memory and compute line)", _pure_decode_batch(d_top_w))
d_bound = q("disagg_decode_batch_bound", "sequences", "Decode replica: largest batch within the per-token target: the closed form "
            "with the experts read at twice the grid batch (up to twice it; beyond 1,024 every expert is read), at least the grid batch",
            IF(d_grid >= 1, MAX(d_grid, IF(d_grid >= DECODE_GRID[-1], d_closed, MIN(2 * d_grid, d_closed))), 0))
d_batch = q("disagg_decode_batch", "sequences", "Sequences a decode replica decodes at once: the largest batch within the per-token "
            "target, at most what the KV cache holds and max_num_seqs (0 = none)",
            MIN(FLOOR(MAX(0, d_bound)), kv_batch, I.max_num_seqs),
            "[distserve2024] (decode without prefill interference)")
d_step_s = q("disagg_decode_step_s", "s", "Decode replica: time per output token = the decode step of its batch (no prefill chunks "
             "between tokens)", _decode_s(MAX(1, d_batch)), "[distserve2024]; [pope2022] section 2")
d_rps = q("disagg_decode_replica_requests_per_s", "requests/s", "Requests per second one decode replica sustains = batch / (output "
          "tokens x time per token); 0 = none", IF(d_batch >= 1, d_batch / (o_tok * d_step_s), 0), "Little's law")
d_slots = MAX(1, d_batch)


def _decode_slot_wait_s(u):
    """Mean wait for a free slot on a decode replica at load ``u``: M/M/c, Sakasegawa (1e9 s at u >= 1)."""
    return IF(u < 1, o_tok * d_step_s * u ** (SQRT(2 * (d_slots + 1)) - 1) / (d_slots * (1 - u)), NO_TARGET_S)


d_budget_s = ttft_target_s - ttft_d_s - p_wait_s
d_budget_s = q("disagg_decode_wait_budget_s", "s", "Wait for a decode slot the first-token target leaves = target - service - "
               "prefill wait", d_budget_s)
d_waits = {step: q(f"disagg_decode_wait_s_at_{round(step * 100)}pct", "s", f"Decode replicas: wait for a sequence slot at "
                   f"{round(step * 100)} % of target_utilization (M/M/c, Sakasegawa)", _decode_slot_wait_s(I.target_utilization * step),
                   "[sakasegawa1977]") for step in UTILIZATION_STEPS}
d_util = I.target_utilization
for _step in reversed(UTILIZATION_STEPS):
    d_util = IF(d_waits[_step] <= d_budget_s, I.target_utilization * _step, d_util)
d_util = q("disagg_decode_planned_utilization", "fraction", "Load the decode replicas are planned at: target_utilization, or the "
           "first of 3/4, 1/2 and 1/4 of it whose wait for a sequence slot fits what the first-token target leaves",
           d_util, "[sakasegawa1977]; [kingman1961]")
d_load_reps = q("disagg_decode_replicas_for_load", "replicas", "Decode replicas carrying the demand at their planned utilization, "
                "rounded up", IF(d_rps > 0, CEILING(serve_rps / (d_rps * d_util)), 0), "[kingman1961]")
d_rho = IF(d_load_reps > 0, serve_rps / (d_load_reps * d_rps), 1)
d_wait_s = q("disagg_decode_slot_wait_s", "s", "Mean wait for a free sequence slot on a decode replica at its load, M/M/c "
             "(Sakasegawa)", _decode_slot_wait_s(d_rho), "[sakasegawa1977]")
d_ttft_load_s = q("disagg_ttft_at_load_s", "s", "Disaggregated: time to the first token at the planned load = service + the "
                  "prefill wait + the decode slot wait", ttft_d_s + p_wait_s + d_wait_s)
p_reps = q("disagg_prefill_replicas", "replicas", "Prefill replicas = those carrying the demand + spare_replicas (0 = none serves it)",
           IF(p_load_reps > 0, p_load_reps + I.spare_replicas, 0), "[sre_book2016] chapter 18")
d_reps = q("disagg_decode_replicas", "replicas", "Decode replicas = those carrying the demand + spare_replicas (0 = none serves it)",
           IF(d_load_reps > 0, d_load_reps + I.spare_replicas, 0), "[sre_book2016] chapter 18")
disagg_gpus = q("disagg_gpus", "GPUs", "Disaggregated: GPUs of the deployment = (prefill + decode replicas) x n_gpus",
                (p_reps + d_reps) * I.n_gpus)
disagg_ok = q("disagg_ok", "flag", "1 = disaggregated serving fits, its decode replicas run a batch of at least one within the "
              "per-token target and its first token, KV transfer and queueing included, meets its target",
              AND(kv_batch >= 1, d_batch >= 1, p_load_reps >= 1, d_step_s <= tpot_target_s, d_ttft_load_s <= ttft_target_s))
q("serve_aggregated_output_tokens_per_s_per_gpu", "tokens/s/GPU", "Aggregated serving: generated tokens per second per GPU of one "
  "replica at full load within the targets", replica_rps * o_tok / I.n_gpus, "Little's law")
q("disagg_output_tokens_per_s_per_gpu", "tokens/s/GPU", "Disaggregated: generated tokens per second per GPU of prefill and decode "
  "replicas in the ideal ratio at full load = output tokens / (GPUs x (1 / prefill rate + 1 / decode rate))",
  IF(AND(disagg_ok, d_rps > 0), o_tok / (I.n_gpus * (1 / p_rps + 1 / d_rps)), 0), "[distserve2024] (goodput per GPU)")
disagg_wins = q("serve_disaggregated_wins", "flag", "1 = the engine runs prefill and decode apart (engines.csv "
                "disaggregated_mode), disaggregated serving meets the targets and either aggregated serving does not, or it "
                "needs at least disaggregation_min_saving_pct fewer GPUs (else aggregated: one kind of replica)",
                AND(EN("disaggregated_mode") > 0, disagg_ok,
                    OR(NOT(agg_ok), disagg_gpus <= agg_gpus * (1 - I.disaggregation_min_saving_pct / 100))),
                "[aiconfigurator_disagg]; [distserve2024] (wins with long prompts under tight per-token targets)")
used = q("serve_disaggregated", "flag", "1 = the option serves disaggregated (prefill and decode replicas apart): serving_layout 2, "
         "or serving_layout 0 and disaggregation wins", IF(EQ(I.serving_layout, 2), 1, IF(EQ(I.serving_layout, 1), 0, disagg_wins)))
q("serve_layout_reason_code", "code", "Why the layout: 1 = disaggregated, aggregated misses the targets; 2 = disaggregated, fewer "
  "GPUs; 3 = aggregated, disaggregated saves fewer GPUs than disaggregation_min_saving_pct; 4 = aggregated, disaggregated misses the targets; 5 = set by "
  "serving_layout; 6 = aggregated, the engine has no disaggregated mode; 7 = aggregated, no link between the offer's machines "
  "for the KV cache; 8 = aggregated, bought consumer cards have no network for the KV cache",
  IF(I.serving_layout > 0, 5, IF(EN("disaggregated_mode") > 0, IF(disagg_wins, IF(NOT(agg_ok), 1, 2),
                                                                  IF(disagg_ok, 3, IF(kv_link > 0, 4, IF(I.buy, 8, 7)))), 6)))

# The deployment as chosen (aggregated or disaggregated): what the answer, the costs and the failure checks use.
q("serve_lowered_utilization", "fraction", "The load the answer says the replicas are planned at for the first-token "
  "target: the prefill replicas' when prefill and decode run apart (its decode replicas run at target_utilization), "
  "else the replicas'", IF(used, p_util, planned_u))
replicas_for_load = q("serve_replicas_for_load", "replicas", "Replicas that carry the demand at the planned utilization: aggregated "
                      "replicas, or prefill + decode replicas when disaggregated (0 = none serves it)",
                      IF(used, p_load_reps + d_load_reps, agg_replicas_for_load), "[kingman1961]")
replicas = q("serve_replicas", "replicas", "Replicas of the deployment = those carrying the demand + spare_replicas (one per pool "
             "when disaggregated; 0 = none serves it)", IF(used, IF(AND(p_reps > 0, d_reps > 0), p_reps + d_reps, 0), agg_replicas),
             "[sre_book2016] chapter 18 (N + 1, N + 2 redundancy)")
rps_used = q("serve_replica_requests_per_s", "requests/s", "Requests per second one replica sustains within the targets: "
             "aggregated, or for disaggregated serving the rate per replica of prefill and decode replicas in the ideal ratio "
             "= 1 / (1 / prefill rate + 1 / decode rate); 0 = none",
             IF(used, IF(AND(p_rps > 0, d_rps > 0), 1 / (1 / p_rps + 1 / d_rps), 0), replica_rps), "Little's law")
q("serve_replica_output_tokens_per_s", "tokens/s", "Generated tokens per second of one replica at full load", rps_used * o_tok)
q("serve_gpus", "GPUs", "GPUs of the deployment = replicas x n_gpus", replicas * I.n_gpus)
load = q("serve_load_fraction", "fraction", "Share of the deployment's capacity the demand uses (all replicas running; "
         "disaggregated: the busier pool)",
         IF(used, IF(AND(p_reps > 0, d_reps > 0), MAX(serve_rps / (p_reps * p_rps), serve_rps / (d_reps * d_rps)), 0), agg_load))


def _after_loss(lost):
    """Disaggregated: the busier pool's load with ``lost`` replicas of that pool down (1e9 when a pool would be empty)."""
    return MAX(IF(p_reps > lost, serve_rps / ((p_reps - lost) * p_rps), 1e9), IF(d_reps > lost, serve_rps / ((d_reps - lost) * d_rps), 1e9))


q("serve_load_after_failure", "fraction", "Share of the capacity the demand uses with one replica down (> 1: the rest cannot "
  "carry it; 1e9 with a single replica: nothing is left; disaggregated: one replica of the busier pool)",
  IF(used, _after_loss(1), IF(replicas > 1, serve_rps / ((replicas - 1) * replica_rps), 1e9)))
q("serve_single_failure_stops", "flag", "1 = one failed replica stops or overloads the service: a single replica, or the "
  "others cannot carry the demand (disaggregated: in either pool)",
  IF(used, _after_loss(1) > 1, OR(replicas <= 1, serve_rps > (replicas - 1) * replica_rps)),
  "[sre_book2016] chapter 18 (N + 1: the service survives one failure)")
# Whole servers: a bought deployment is ordered as servers (the GPU's server_sizes: 4- or 8-GPU boards, 72-GPU
# racks), the replicas packed into them; renting follows the offers' instance sizes (serve_rent_usd_per_month).
server_gpus_serve = server_gpus
replicas_per_server = q("serve_replicas_per_server", "replicas", "Replicas one owned server holds = GPUs per server / "
                        "GPUs per replica, rounded down (0: a replica is larger than the server)",
                        FLOOR(server_gpus_serve / I.n_gpus))
serve_servers = q("serve_servers", "servers", "Servers bought for the deployment = replicas / replicas per server, rounded up "
                  "(a replica larger than a server: its GPUs / GPUs per server, rounded up)",
                  IF(replicas_per_server >= 1, CEILING(replicas / MAX(1, replicas_per_server)),
                     CEILING(replicas * I.n_gpus / server_gpus_serve)), "GPU catalog server_sizes (what vendors sell)")
q("serve_idle_gpus", "GPUs", "GPUs bought with the servers that no replica uses", serve_servers * server_gpus_serve - replicas * I.n_gpus)
q("serve_load_after_server_failure", "fraction", "Owned: share of the capacity the demand uses with one server down (its "
  "replicas, as many as a server holds, lost together); 1e9 when all replicas share one server",
  IF(used, _after_loss(MAX(1, replicas_per_server)),
     IF(AND(serve_servers > 1, replicas > MAX(1, replicas_per_server)),
        serve_rps / ((replicas - MAX(1, replicas_per_server)) * replica_rps), 1e9)),
  "a server (power supply, board, NVSwitch) fails as one: [sre_book2016] chapter 18 (failure domains)")

# The wait before the first token at the planned load, on top of the service time (ttft_ms).  Requests arrive as a
# Poisson stream (open loop) spread evenly over the replicas; two queues in a row:
#   - a free sequence slot: a replica is c = serve_batch servers, each holding a request for output x time per token;
#     the M/M/c wait in Sakasegawa's closed form  Wq = S x rho^(sqrt(2(c+1)) - 1) / (c (1 - rho))  (exact for c = 1);
#   - the prefill of the prompts ahead: the replica's prefill work as one server with a fixed service time
#     D = prompt x prefill time per token, M/D/1 (Pollaczek-Khinchine)  Wq = rho_p x D / (2 (1 - rho_p)).
# A load of 1 or more has no steady state: the wait is then 1e9 s (no target is met).
arrivals = q("serve_replica_arrivals_per_s", "requests/s", "Aggregated serving: requests per second reaching one replica = "
             "demand / replicas", IF(agg_replicas > 0, serve_rps / agg_replicas, 0))
q("serve_slot_wait_ms", "ms", "Mean wait for a free sequence slot at the planned load, M/M/c with c = the serving batch "
  "(Sakasegawa's approximation; disaggregated: on a decode replica), milliseconds",
  IF(used, d_wait_s, _slot_wait_s(agg_load)) * 1000,
  "[sakasegawa1977] (Lq = rho^sqrt(2(c+1)) / (1 - rho) for M/M/c)")
prefill_load = q("serve_prefill_load", "fraction", "Share of a replica's time its prompts' prefill takes = arrivals x prefill work",
                 arrivals * prefill_service_s)
q("serve_prefill_wait_ms", "ms", "Mean wait for the prefill of the prompts ahead at the planned load, M/D/1 "
  "(Pollaczek-Khinchine; disaggregated: on a prefill replica), milliseconds",
  IF(used, p_wait_s, _prefill_wait_s(prefill_load)) * 1000,
  "[kleinrock1975] chapter 5 (Pollaczek-Khinchine mean-value formula, deterministic service)")
queue_wait_ms = q("ttft_queue_wait_ms", "ms", "Wait before a request's prefill starts at the planned load (open loop, Poisson "
                  "arrivals): a free sequence slot + the prefill of the prompts ahead, milliseconds",
                  Ref("serve_slot_wait_ms") + Ref("serve_prefill_wait_ms"),
                  "[sakasegawa1977] (M/M/c); [kleinrock1975] chapter 5 (M/D/1)")
# The latencies of the layout chosen: what every answer shows.
tpot_used_s = IF(used, d_step_s, tpot_s)
ttft_used_s = IF(used, ttft_d_s, ttft_s)
q("tpot_ms", "ms", "Time per output token at full load, milliseconds: aggregated (decode step + the prefill it carries) or, when "
  "disaggregated, a decode replica's step", tpot_used_s * 1000, "[sarathi2024]; [distserve2024]")
q("ttft_ms", "ms", "Time to the first token at full load without the open-loop wait, milliseconds: aggregated (closed loop, the "
  "batch's other prompts counted) or, when disaggregated, prefill + KV transfer", ttft_used_s * 1000,
  "[sarathi2024] (chunked prefill); [distserve2024]")
q("serve_layout_batch", "sequences", "Sequences a replica decodes at once: the serving batch, or a decode replica's batch when "
  "disaggregated", IF(used, d_batch, serve_batch))
q("tpot_ms_likely_low", "ms", "Time per output token at full load, low end of the likely range = tpot_ms x the engine's low factor",
  tpot_used_s * 1000 * _band("tpot", "low"), BAND_SOURCE)
q("tpot_ms_likely_high", "ms", "Time per output token at full load, high end of the likely range = tpot_ms x the engine's high factor",
  tpot_used_s * 1000 * _band("tpot", "high"), BAND_SOURCE)
q("engine_decode_tokens_per_s_per_seq_likely_low", "tokens/s", "Generation speed of one sequence with the engine, low end of "
  "the likely range = engine_decode_tokens_per_s_per_seq / the engine's high factor on the time per token",
  Ref("engine_decode_tokens_per_s_per_seq") / _band("tpot", "high"), BAND_SOURCE)
q("engine_decode_tokens_per_s_per_seq_likely_high", "tokens/s", "Generation speed of one sequence with the engine, high end of "
  "the likely range = engine_decode_tokens_per_s_per_seq / the engine's low factor on the time per token",
  Ref("engine_decode_tokens_per_s_per_seq") / _band("tpot", "low"), BAND_SOURCE)
q("ttft_ms_likely_low", "ms", "Time to the first token at full load, low end of the likely range", ttft_used_s * 1000 * _band("ttft", "low"),
  BAND_SOURCE)
q("ttft_ms_likely_high", "ms", "Time to the first token at full load, high end of the likely range", ttft_used_s * 1000 * _band("ttft", "high"),
  BAND_SOURCE)
# At the planned load a replica runs fewer sequences than its full batch: its arrivals x the time a request holds a slot
# (Little's law), so a lightly loaded service answers faster than its full-load design point.
running_at_load = q("serve_running_at_load", "sequences", "Sequences a replica runs at the planned load = arrivals x slot "
                    "hold time (Little's law), rounded up, 1 to the serving batch (disaggregated: the decode batch)",
                    IF(used, d_batch, MAX(1, MIN(b_run, CEILING(arrivals * slot_s)))), "Little's law")
load_run_step_s = q("serve_decode_step_s_at_load", "s", "Decode step of the sequences running at the planned load",
                    _decode_s(running_at_load), "[pope2022] section 2")
q("serve_tpot_at_load_ms", "ms", "Time per output token at the planned load, milliseconds (disaggregated: tpot_ms)",
  IF(used, d_step_s, _tpot_s(running_at_load, load_run_step_s)) * 1000, "[sarathi2024]; Little's law")
ttft_service_load_ms = q("serve_ttft_service_at_load_ms", "ms", "First token at the planned load before queueing, "
                         "milliseconds (disaggregated: ttft_ms)",
                         IF(used, ttft_d_s, _ttft_s(running_at_load, load_run_step_s)) * 1000, "[sarathi2024]; Little's law")
ttft_load_ms = q("serve_ttft_at_load_ms", "ms", "Time to the first token at the planned load = serve_ttft_service_at_load_ms + "
                 "queueing wait, milliseconds", ttft_service_load_ms + queue_wait_ms)
q("serve_meets_ttft_at_load", "flag", "1 = the first token, queueing included, meets its target at the planned load (no target: 1)",
  ttft_load_ms / 1000 <= ttft_target_s)
weights_allowed = q("serve_weights_allowed", "flag", "1 = the weight format has at least min_weight_bits bits per weight (whole "
                    "bits: AWQ's 4.25 counts as 4); formats below 8 bits cost accuracy (weight_dtypes accuracy_effect)",
                    FLOOR(wd("bits_per_param")) >= I.min_weight_bits,
                    "[awq2023]; [gptq2022]; [llamacpp_perplexity]; [nvidia_llama33_70b_fp4] (accuracy of 4-bit formats)")
q("serve_ok", "flag", "1 = fits, meets both targets at a batch of at least one, the first token meets its target "
  "with the queueing wait at the planned load, and the weight format is one the user accepts",
  AND(Ref("serve_fits"), IF(used, disagg_ok, AND(serve_batch >= 1, Ref("serve_meets_ttft_at_load"))), weights_allowed))
in_mtok = q("serve_input_mtok_per_month", "Mtok/month", "Prompt tokens per month, millions", serve_rps * p_tok * 3600 * traffic_hours / 1e6)
out_mtok = q("serve_output_mtok_per_month", "Mtok/month", "Generated tokens per month, millions", serve_rps * o_tok * 3600 * traffic_hours / 1e6)
q("serve_mtok_per_month", "Mtok/month", "Tokens per month, prompt and generated, millions", in_mtok + out_mtok)
prefill_share = q("serve_prefill_share", "fraction",
                  "Share of a replica's time spent on prompts = prompt x prefill time / (output x time per token / batch); disaggregated: "
                  "the prefill replicas' share of all replicas",
                  IF(used, p_reps / MAX(1, p_reps + d_reps), p_tok * prefill_s_per_token * b_run / (o_tok * tpot_s)))

# ---------------------------------------------------------------------------
# Costs.  Conventions: hours are wall-clock hours of the
# n_gpus setup, GPU-hours are hours x GPUs; money is USD; a month is
# days_per_month days.  Capital is counted once: as outlay in cash views,
# as (capital - residual value) in the TCO, never also as a depreciation line.
EPOCH = "[cottier2024]; [epoch_costs_code]"
pct = lambda x: x / 100  # noqa: E731

q = quantities_of("job")
hours_per_month = q("hours_per_month", "h/month", "Hours in a month = days_per_month x 24", I.days_per_month * 24)
job_hours_base = q("job_hours_base", "h", "Hours of useful work: job_hours, or the estimated training time when job_hours is 0",
                   IF(I.job_hours > 0, I.job_hours, train_hours))
job_starts = q("job_starts", "starts", "Starts the job pays for = the first start (count_first_start) + restarts",
               I.count_first_start + I.restarts)
job_start_hours = q(
    "job_start_hours", "h", "Hours the GPUs wait through the job's starts = starts x minutes to start / 60",
    job_starts * I.model_load_minutes / 60, "[aimanual_cheap_gpus] (5-7 minutes to load a 70B model)")
job_wall_hours = q(
    "job_wall_hours", "h", "Hours the GPUs are occupied: work x (1 + debug overhead) + the starts + extra hours",
    job_hours_base * (1 + pct(I.debug_overhead_pct)) + job_start_hours + I.extra_rented_hours,
    "[aimanual_cheap_gpus] (+20 % for debugging)")

q = quantities_of("renting")
rent_usd_per_gpu_hour_list = q(
    "rent_usd_per_gpu_hour_list", "USD/GPU-h", "Listed price per GPU-hour: usd_per_gpu_hour_rented, or the offer's",
    IF(I.usd_per_gpu_hour_rented > 0, I.usd_per_gpu_hour_rented, OF("usd_per_gpu_hour")),
    "offers catalog (provider price pages, dated per row)")
rent_usd_per_gpu_hour = q(
    "rent_usd_per_gpu_hour", "USD/GPU-h", "Price per GPU-hour paid: list x (1 - off-peak discount) x (1 + marketplace commission)",
    rent_usd_per_gpu_hour_list * (1 - pct(I.off_peak_discount_pct)) * (1 + pct(OF("commission_pct"))),
    "[aimanual_cheap_gpus] (marketplace commission on top of the listed price; 30-40 % lower off-peak)")
rent_hours_needed = q(
    "rent_hours_needed", "h", "Hours rented: occupied hours x (1 + spot re-work) on interruptible offers",
    job_wall_hours * (1 + OF("interruptible") * pct(I.spot_rework_pct)), "interruptions cost the work since the last checkpoint")
incr = OF("billing_increment_s")
rent_rounded_hours = q(
    "rent_rounded_hours", "h", "Rented hours rounded up to the offer's billing increment, and at least its minimum billed hours",
    MAX(CEILING(rent_hours_needed * 3600 / incr) * incr / 3600, OF("min_billed_hours")),
    "[aws_per_second]; billing increment and minimum per offer")
rent_commitment_hours = q(
    "rent_commitment_hours", "h", "Hours a committed offer bills whatever the use: commitment_months x hours per month "
    "(0 without a commitment, or when commitment_fully_used is 1: the job then pays only its own hours)",
    OF("commitment_months") * hours_per_month * (1 - I.commitment_fully_used),
    "[aws_pricing] (reserved instances and savings plans bill every hour of the term)")
rent_billed_hours = q(
    "rent_billed_hours", "h", "Hours billed: the rounded rented hours, or the whole commitment when that is longer",
    MAX(rent_rounded_hours, rent_commitment_hours))
rent_instances = q("rent_instances", "instances", "Instances rented: GPUs rounded up to whole instances (8-GPU nodes)",
                   CEILING(I.n_gpus / OF("gpus_per_instance")), "[aws_pricing]: p5.48xlarge rents 8 GPUs as one instance")
rent_billed_gpu_hours = q("rent_billed_gpu_hours", "GPU-h", "GPU-hours billed = instances x GPUs per instance x billed hours",
                          rent_instances * OF("gpus_per_instance") * rent_billed_hours)
rent_compute_usd = q("rent_compute_usd", "USD", "Compute bill = billed GPU-hours x price paid per GPU-hour",
                     rent_billed_gpu_hours * rent_usd_per_gpu_hour)
rent_storage_usd = q(
    "rent_storage_usd", "USD", "Storage: GB x USD/GB-month x months the job runs, plus storage_pct_of_compute of the compute bill",
    I.storage_gb * OF("usd_per_gb_month_storage") * rent_rounded_hours / hours_per_month
    + pct(I.storage_pct_of_compute) * rent_compute_usd, "provider storage price; [aimanual_4090_h100] uses 10 % of compute")
rent_egress_usd = q("rent_egress_usd", "USD", "Egress: GB downloaded x the offer's USD/GB", I.egress_gb * OF("usd_per_gb_egress"),
                    "[aws_pricing] data transfer out $0.09/GB; several GPU clouds charge none")
rent_total_usd = q("rent_total_usd", "USD", "Cost of renting the job = compute + storage + egress",
                   rent_compute_usd + rent_storage_usd + rent_egress_usd)
q("rent_usd_per_useful_gpu_hour", "USD/GPU-h", "What each GPU-hour of useful work cost when renting, all overheads included",
  IF(job_hours_base > 0, rent_total_usd / (I.n_gpus * job_hours_base), rent_usd_per_gpu_hour))
q("rent_available", "flag", "1 = a rental price is known (an offer with a price, or usd_per_gpu_hour_rented)",
  rent_usd_per_gpu_hour_list > 0)

q = quantities_of("owning")
# A MIG slice is bought as part of its card: the card's price over the slices one card splits into (7 of 1g, 3 of 2g,
# 2 of 3g, 1 of 4g or 7g), so a card holding fewer slices than its compute share suggests is still paid whole.
card_share = G("card_share")
slices_per_card = FLOOR(1 / card_share + 1e-6)
own_purchase_usd_per_gpu = q("own_purchase_usd_per_gpu", "USD/GPU", "Price of one GPU: purchase_usd_per_gpu, or the catalog's "
                             "(a MIG slice: the card's price / the slices one card splits into)",
                             IF(I.purchase_usd_per_gpu > 0, I.purchase_usd_per_gpu,
                                IF(card_share > 0, G("purchase_usd") / card_share / MAX(1, slices_per_card), G("purchase_usd"))),
                             "GPU catalog purchase_usd ([epoch_hardware], vendor MSRP; basis per row); [nvidia_mig] (slices per card)")
# What is bought: a training job's GPUs, or a serving deployment's (its replicas share servers, power and setup).
own_gpus = q("own_gpus", "GPUs", "GPUs bought: the deployment's whole servers (servers x GPUs per server) when serving, else "
             "n_gpus (one replica's when no replica serves the demand)",
             IF(AND(T("tasks", "task", "serve"), Ref("serve_gpus") > 0), Ref("serve_servers") * server_gpus, I.n_gpus),
             "GPU catalog server_sizes (servers are sold whole)")
own_gpu_capital_usd = q("own_gpu_capital_usd", "USD", "GPU cards = GPUs bought x price", own_gpus * own_purchase_usd_per_gpu)
own_server_capital_usd = q("own_server_capital_usd", "USD", "Rest of the servers = GPU cards x server_overhead_pct + other_hardware_usd",
                           own_gpu_capital_usd * pct(I.server_overhead_pct) + I.other_hardware_usd, EPOCH + ": server = 1.54-1.69 x GPUs")
hw = own_gpu_capital_usd + own_server_capital_usd
own_network_capital_usd = q(
    "own_network_capital_usd", "USD", "Cluster networking when there is more than one server: hardware x f / (1 - f)",
    IF(own_servers > 1, hw * pct(I.cluster_network_pct) / (1 - pct(I.cluster_network_pct)), 0), EPOCH + ": 19 % of the total")
own_capital_usd = q("own_capital_usd", "USD", "Capital = GPUs + rest of the servers + networking",
                    hw + own_network_capital_usd)
own_setup_usd = q("own_setup_usd", "USD", "One-off setup labour = setup_hours x labour_usd_per_hour",
                  I.setup_hours * I.labour_usd_per_hour)
# A data-centre server's power besides its GPUs grows with the generation (CPUs, NICs, NVSwitches, fans): NVIDIA's DGX
# systems of 8 GPUs draw 6.5 kW (A100, 8 x 400 W), 10.2 kW (H100 and H200, 8 x 700 W) and 14.3 kW (B200, 8 x 1,000 W)
# at most, so 412.5, 575 and 787.5 W per GPU slot (gpus.csv system_w_per_slot; the A100 PCIe cards and the B300 take
# their generation's figure); a card without one takes the DGX H100's 575 W
own_system_w = q("own_system_w_per_server", "W",
                 "Power of a server besides its GPUs: 500 W (consumer workstation) or per GPU slot the catalog's "
                 "system_w_per_slot (575 W when empty), or system_w_per_server",
                 IF(I.auto_system_power,
                    IF(G("consumer"), 500, IF(G("system_w_per_slot") > 0, G("system_w_per_slot"), 575) * server_gpus),
                    I.system_w_per_server),
                 "[aimanual_4090_h100] (+500 W per workstation); GPU catalog system_w_per_slot ([nvidia_dgx_a100] 6.5 kW, "
                 "[nvidia_dgx_h100] 10.2 kW, [nvidia_dgx_b200_guide] 14.3 kW for 8 GPUs, less their TDP)")
# A data-centre GPU pays its slot's share of the server's power (a server part-filled, or shared with the replicas of
# a deployment, draws for the slots in use); a MIG slice pays its share of the card's slot; a consumer workstation's
# 500 W is paid whole however many cards it holds.
slot_share = q("own_slot_share", "slots", "Server slots one GPU row takes: its card_share for a MIG slice (compute share), else 1",
               IF(G("card_share") > 0, G("card_share"), 1), "[nvidia_mig] (a slice is k/7 of the card's compute)")
own_nameplate_kw = q("own_nameplate_kw", "kW",
                     "Nameplate power = GPUs x TDP + system power: whole workstations (consumer cards), or per server slot used",
                     (own_gpus * G("tdp_w") + IF(G("consumer"), CEILING(own_gpus / server_gpus) * own_system_w,
                                                 own_gpus * slot_share * own_system_w / server_gpus)) / 1000,
                     "[nvidia_dgx_h100] (10.2 kW for 8 x 700 W GPUs: 575 W of the rest per slot); GPU catalog system_w_per_slot")
own_avg_kw = q("own_avg_kw", "kW", "Average IT draw while working = nameplate x load factor",
               own_nameplate_kw * I.gpu_load_factor, EPOCH + ": 75 % of server TDP during training")
own_energy_usd_per_gpu_hour = q(
    "own_energy_usd_per_gpu_hour", "USD/GPU-h", "Electricity per working GPU-hour = average kW x PUE x USD/kWh / n_gpus",
    own_avg_kw * I.pue * I.usd_per_kwh / own_gpus, "[cottier2024] (energy = average power x PUE x electricity price)")
years = I.months / 12
own_hours_per_day = q(
    "own_hours_per_day", "h/day", "Hours per day owned GPUs work over the period: owned_busy_hours_per_day when given, else hours_per_day",
    # written as "<= 0" so core.auto does not read it as an automatic input: 0 means a one-off job, not "auto"
    IF(I.owned_busy_hours_per_day <= 0, I.hours_per_day, I.owned_busy_hours_per_day))
own_hours_used = q("own_hours_used", "h", "Working hours over the period = months x hours_per_month x own_hours_per_day / 24",
                   I.months * hours_per_month * own_hours_per_day / 24)
own_utilization = q("own_utilization", "fraction", "Share of the period the GPUs work = own_hours_per_day / 24", own_hours_per_day / 24)
own_energy_usd = q("own_energy_usd", "USD", "Electricity over the period = energy per GPU-hour x GPUs x working hours",
                   own_energy_usd_per_gpu_hour * own_gpus * own_hours_used)
own_fixed_usd_per_month = q(
    "own_fixed_usd_per_month", "USD/month", "Costs that run whether or not the GPUs work: colocation per kW + rack + maintenance",
    own_nameplate_kw * I.colo_usd_per_kw_month + I.rack_usd_per_month + own_capital_usd * pct(I.maintenance_pct_per_year) / 12,
    "[cbre2024] ($184/kW-month); maintenance as a share of capital per year")
own_fixed_usd = q("own_fixed_usd", "USD", "Fixed running costs over the period", own_fixed_usd_per_month * I.months)
dep = T("depreciations", "depreciation", "exponential")
own_value_fraction = q(
    "own_value_fraction", "fraction", "Share of capital the hardware is still worth after the period",
    IF(dep, (1 - pct(I.value_loss_pct_per_year)) ** years,
       MAX(pct(I.residual_pct), 1 - (1 - pct(I.residual_pct)) * years / I.life_years)),
    EPOCH + " (exponential, ~28 %/year); straight-line to a residual")
own_residual_usd = q("own_residual_usd", "USD", "Resale value at the end of the period = capital x value fraction",
                     own_capital_usd * own_value_fraction)
own_tco_usd = q(
    "own_tco_usd", "USD", "Total cost of owning over the period = capital + setup + energy + fixed costs - residual value",
    own_capital_usd + own_setup_usd + own_energy_usd + own_fixed_usd - own_residual_usd,
    "capital counted once, as capital minus resale value (no separate depreciation line)")
r = pct(I.discount_rate_pct)
disc = IF(r > 0, 1 / (1 + r) ** years, 1)  # discount factor at the end of the period
own_annual_capital_usd = q(
    "own_annual_capital_usd", "USD/year", "Capital per year: (capital + setup - discounted residual) x capital recovery factor (1/years if r = 0)",
    (own_capital_usd + own_setup_usd - own_residual_usd * disc) * IF(r > 0, r / (1 - disc), 1 / years),
    "capital recovery factor r(1+r)^n/((1+r)^n-1) = r/(1-(1+r)^-n)")
own_tco_pv_usd = q(
    "own_tco_pv_usd", "USD", "Present value of owning: capital + setup - discounted residual + discounted yearly running costs",
    own_capital_usd + own_setup_usd - own_residual_usd * disc
    + (own_energy_usd + own_fixed_usd) / years * IF(r > 0, (1 - disc) / r, years))
own_usd_per_gpu_hour = q(
    "own_usd_per_gpu_hour", "USD/GPU-h", "Owned cost per working GPU-hour = (annual capital + yearly running costs) / (GPUs x working hours per year)",
    (own_annual_capital_usd + (own_energy_usd + own_fixed_usd) / years) / (own_gpus * own_hours_used / years),
    "utilization is in the denominator: an idle owned GPU still costs money ([cottier2024] amortizes over hours used)")
own_job_usd = q("own_job_usd", "USD", "Share of owning this job uses = owned USD/GPU-h x GPUs x occupied hours",
                own_usd_per_gpu_hour * I.n_gpus * job_wall_hours)

q = quantities_of("break-even")
rent_usd_per_month = q("rent_usd_per_month", "USD/month", "Renting the same GPUs for the working hours per month = GPUs bought x h/day x days x price paid",
                       own_gpus * own_hours_per_day * I.days_per_month * rent_usd_per_gpu_hour)
own_running_usd_per_month = q(
    "own_running_usd_per_month", "USD/month", "Owning's monthly running costs = fixed + energy of the working hours",
    own_fixed_usd_per_month + own_gpus * own_hours_per_day * I.days_per_month * own_energy_usd_per_gpu_hour)
saving = q("own_saving_usd_per_month", "USD/month", "What owning saves a month against renting the same working hours = rent "
           "avoided - owning's running costs (capital not counted)", rent_usd_per_month - own_running_usd_per_month)
# Discounted at discount_rate_pct (a month's rate m = (1 + r)^(1/12) - 1): the month n at which the present value of
# n months of saving S, S (1 - (1 + m)^-n) / m, reaches the capital C: n = ln(S / (S - m C)) / ln(1 + m), never when
# S <= m C (the saving does not even pay the capital's interest); C / S at a rate of 0.
month_rate = q("own_month_rate", "fraction", "Discount rate per month = (1 + discount_rate_pct / 100)^(1/12) - 1",
               (1 + r) ** (1 / 12) - 1)
outlay = own_capital_usd + own_setup_usd
payback_months = q(
    "payback_months", "months", "Months until buying pays back, discounted at discount_rate_pct: the month at which the present value "
    "of the monthly saving S (rent avoided - running costs) reaches capital + setup C = ln(S / (S - m C)) / ln(1 + m) with m the "
    "monthly rate (C / S at a rate of 0); -1 = never",
    IF(saving > month_rate * outlay,
       IF(month_rate > 0, LN(MAX(1, saving / MAX(1e-9, saving - month_rate * outlay))) / LN(1 + MAX(1e-12, month_rate)),
          outlay / MAX(1e-9, saving)), -1),
    "[discounted_payback] (discounted payback period: cash flows at their present value; simple payback at a rate of 0)")
margin = rent_usd_per_gpu_hour - own_energy_usd_per_gpu_hour
annuity_years = IF(r > 0, (1 - disc) / r, years)  # present value of one USD a year over the period
breakeven_gpu_hours = q(
    "breakeven_gpu_hours", "GPU-h", "GPU-hours over the period at which owning equals renting at their present value: (capital + "
    "setup - discounted residual + yearly fixed costs x A) / ((rent - energy per GPU-h) x A / years), A = the period's annuity "
    "factor (1 - (1 + r)^-years) / r (years at a rate of 0: then (capital + setup + fixed - residual) / (rent - energy)); -1 = never",
    IF(margin > 0, (outlay - own_residual_usd * disc + own_fixed_usd / years * annuity_years) / (margin * annuity_years / years), -1))
q("breakeven_hours", "h", "Break-even hours of the whole setup (GPU-hours / n_gpus); -1 = never",
  IF(margin > 0, breakeven_gpu_hours / own_gpus, -1), "[aimanual_cheap_gpus]: a local 4x RTX 4090 pays back after 700 hours against $10/h")
q("breakeven_utilization", "fraction", "Utilization over the period at which owning equals renting (> 1: not within the period); -1 = never",
  IF(margin > 0, breakeven_gpu_hours / (own_gpus * I.months * hours_per_month), -1))
q("breakeven_hours_per_day", "h/day",
  "Daily use over the months of ownership at which buying the GPUs costs what renting them through the offer does = "
  "break-even GPU-hours / (GPUs x months x days per month); above 24: never within the period; -1 = never (renting costs "
  "less than the electricity of owned GPUs)",
  IF(margin > 0, breakeven_gpu_hours / (own_gpus * I.months * I.days_per_month), -1),
  "owning's cost (capital + setup + fixed - resale) against the rent avoided less energy per GPU-hour")
q("verdict_code", "code", "Buying pays back: 1 within a month, 2 in 1-3 months, 3 later within the period, 4 not within the period",
  IF(OR(payback_months < 0, payback_months > I.months), 4, IF(payback_months <= 1, 1, IF(payback_months <= 3, 2, 3))),
  "[aimanual_4090_h100] (30 and 90 days)")
q("own_cumulative_usd", "USD", "Cash spent owning by month at_month = capital + setup + running costs x months",
  own_capital_usd + own_setup_usd + own_running_usd_per_month * I.at_month)
q("rent_cumulative_usd", "USD", "Cash spent renting the same working hours by month at_month", rent_usd_per_month * I.at_month)

q = quantities_of("serving")
rent_replica_month = q("serve_rent_usd_per_replica_month", "USD/month",
                       "Renting one replica for the traffic hours = whole instances x GPUs per instance x price paid x traffic hours",
                       rent_instances * OF("gpus_per_instance") * rent_usd_per_gpu_hour * traffic_hours)
own_replica_month = q("serve_own_usd_per_replica_month", "USD/month",
                      "Owning one replica per month = n_gpus x owned USD/GPU-h x traffic hours (capital, power, colocation, maintenance)",
                      I.n_gpus * own_usd_per_gpu_hour * traffic_hours)
rent_month = q("serve_rent_usd_per_month", "USD/month",
               "Renting the deployment = the replicas' GPUs rounded up to whole instances (replicas share an instance) x GPUs "
               "per instance x price paid x traffic hours",
               CEILING(replicas * I.n_gpus / OF("gpus_per_instance")) * OF("gpus_per_instance") * rent_usd_per_gpu_hour * traffic_hours,
               "[aws_pricing]: p5.48xlarge rents 8 GPUs as one instance")
own_month = q("serve_own_usd_per_month", "USD/month", "Owning the deployment = GPUs bought (whole servers) x owned USD/GPU-h x "
              "traffic hours", Ref("serve_servers") * server_gpus * own_usd_per_gpu_hour * traffic_hours)
for way, month in (("rent", rent_month), ("own", own_month)):
    q(f"serve_{way}_usd_per_mtok_input", "USD/Mtok", f"{'Rented' if way == 'rent' else 'Owned'}: USD per million prompt tokens "
      "= monthly cost x prefill share / prompt Mtok", IF(in_mtok > 0, month * prefill_share / in_mtok, 0))
    q(f"serve_{way}_usd_per_mtok_output", "USD/Mtok", f"{'Rented' if way == 'rent' else 'Owned'}: USD per million generated tokens "
      "= monthly cost x (1 - prefill share) / generated Mtok", IF(out_mtok > 0, month * (1 - prefill_share) / out_mtok, 0))
API = lambda fld: T("apis", "api_model", fld)  # noqa: E731
api_in = q("serve_api_usd_per_mtok_input", "USD/Mtok", "API price per million prompt tokens: api_usd_per_mtok_input, or the api_model's",
           IF(I.api_usd_per_mtok_input > 0, I.api_usd_per_mtok_input, API("usd_per_mtok_input")),
           "apis catalog (providers' price pages, dated per row)")
api_out = q("serve_api_usd_per_mtok_output", "USD/Mtok", "API price per million generated tokens: api_usd_per_mtok_output, or the api_model's",
            IF(I.api_usd_per_mtok_output > 0, I.api_usd_per_mtok_output, API("usd_per_mtok_output")),
            "apis catalog (providers' price pages, dated per row)")
api_blend = q("serve_api_usd_per_mtok", "USD/Mtok", "API price per million tokens at this prompt/output mix",
              (p_tok * api_in + o_tok * api_out) / (p_tok + o_tok))
api_month = q("serve_api_usd_per_month", "USD/month", "The API for the same tokens = prompt Mtok x input price + generated Mtok x output price",
              in_mtok * api_in + out_mtok * api_out)
# (disaggregated: what a replica's GPUs serve at the prefill and decode pools' ideal mix; the aggregated replica's rate
# would judge a deployment by a layout it does not run, and said "never beats the API" of one that costs less than it)
replica_mtok = q("serve_replica_mtok_per_month", "Mtok/month", "Tokens (prompt and generated) one replica serves per month at full "
                 "load; disaggregated: n_gpus x the generated tokens per second per GPU of the prefill and decode replicas in "
                 "their ideal ratio x (prompt + output) / output",
                 IF(used, Ref("disagg_output_tokens_per_s_per_gpu") * I.n_gpus * (p_tok + o_tok) / o_tok, replica_rps * (p_tok + o_tok))
                 * 3600 * traffic_hours / 1e6)
# Above which volume a deployment beats the API, planned as the planner plans it: n replicas carrying the volume at the
# target utilization (each at most replica Mtok x target_utilization) plus the spares, each costing c a month.  n
# carrying replicas beat the API at their fullest when (n + spares) x c <= n x m x U x price, i.e. from
# n* = max(1, ceiling(spares x c / (m x U x price - c))); the volume is then the larger of (n* - 1) x m x U and
# (n* + spares) x c / price.  Owning buys at least one whole server.
replica_mtok_at_target = q("serve_replica_mtok_at_target", "Mtok/month", "Tokens one replica serves per month at the target "
                           "utilization = full-load tokens x target_utilization", replica_mtok * I.target_utilization)
for way, per_replica in (("rent", rent_replica_month), ("own", own_replica_month)):
    word = "renting" if way == "rent" else "owning"
    margin_api = replica_mtok_at_target * api_blend - per_replica
    n_star = q(f"serve_{way}_beats_api_replicas", "replicas",
               f"Fewest carrying replicas at which {word} can beat the API = max(1, spares x replica cost / (replica Mtok at "
               "the target x API price - replica cost)), rounded up; 0 = never",
               IF(margin_api > 0, MAX(1, CEILING(I.spare_replicas * per_replica / margin_api)), 0))
    volume = MAX((n_star - 1) * replica_mtok_at_target, (n_star + I.spare_replicas) * per_replica / api_blend)
    if way == "own":
        volume = MAX(volume, server_gpus * own_usd_per_gpu_hour * traffic_hours / api_blend)
    q(f"serve_{way}_beats_api_mtok_per_month", "Mtok/month",
      f"Monthly tokens above which {word} beats the API, with replicas at the target utilization plus the spares"
      + (" and at least one whole server" if way == "own" else "") + "; -1 = never (a replica at the target utilization "
      "costs more per token than the API)",
      IF(AND(replica_mtok > 0, margin_api > 0), volume, -1),
      "replicas are paid whatever their load; the API is paid per token")
q("serve_best_code", "code", "Cheapest way at the demand: 1 rent, 2 buy, 3 the API (1 or 2 only when the setup meets the targets)",
  IF(OR(NOT(Ref("serve_ok")), AND(api_month <= rent_month, api_month <= own_month)), 3, IF(own_month < rent_month, 2, 1)))
q("serve_option_usd_per_month", "USD/month", "Monthly cost of this serving option: rented or owned deployment", IF(I.buy, own_month, rent_month))

q = quantities_of("serving cost")
serve_tps = q("serve_tokens_per_s", "tokens/s",
              "Generation throughput used for costs: measured_tokens_per_s, or what one replica generates at the batch it "
              "sustains within the latency targets (a lone request's rate when no batch meets them)",
              IF(I.measured_tokens_per_s > 0, I.measured_tokens_per_s,
                 IF(Ref("serve_batch") >= 1, Ref("serve_replica_output_tokens_per_s"), 1000 / Ref("serve_tpot_ms_at_batch_1"))),
              "the serving model (group serving): continuous batching within ttft_slo_ms and tpot_slo_ms")
prefill_tps = Ref("prefill_tokens_per_s")
rent_util = pct(I.rent_utilization_pct)
q("decode_usd_per_mtok_own", "USD/Mtok", "Owned: USD per million generated tokens = GPUs x owned USD/GPU-h / (tokens/s x 3600) x 1e6",
  I.n_gpus * own_usd_per_gpu_hour / (serve_tps * 3600) * 1e6, "USD per hour / (tokens per second x 3,600) x 1e6; utilization sits in the owned hourly cost")
q("decode_usd_per_mtok_rent", "USD/Mtok", "Rented: GPUs x price paid / (tokens/s x 3600 x utilization) x 1e6",
  I.n_gpus * rent_usd_per_gpu_hour / (serve_tps * 3600 * rent_util) * 1e6, "USD per hour / (tokens per second x 3,600 x utilization) x 1e6")
q("prefill_usd_per_mtok_own", "USD/Mtok", "Owned: USD per million prompt tokens", I.n_gpus * own_usd_per_gpu_hour / (prefill_tps * 3600) * 1e6)
q("prefill_usd_per_mtok_rent", "USD/Mtok", "Rented: USD per million prompt tokens",
  I.n_gpus * rent_usd_per_gpu_hour / (prefill_tps * 3600 * rent_util) * 1e6)
serve_capacity = q("serve_capacity_mtok_per_month", "Mtok/month", "Million tokens the setup (owned or rented) generates per month at hours_per_day",
                   serve_tps * 3600 * I.hours_per_day * I.days_per_month / 1e6)
energy_per_mtok = I.n_gpus * own_energy_usd_per_gpu_hour / (serve_tps * 3600) * 1e6
owned_breakeven = ((own_capital_usd + own_setup_usd - own_residual_usd) / I.months + own_fixed_usd_per_month) / \
    (I.api_usd_per_mtok - energy_per_mtok)
q("selfhost_breakeven_mtok_per_month", "Mtok/month",
  "Monthly generated tokens above which owning beats the API: (spread capital + fixed per month) / (API price - energy per Mtok); "
  "-1 = never (the API is cheaper per token, or the volume is more than the setup generates: serve_capacity_mtok_per_month)",
  # nested, not AND: the break-even divides by (API price - energy per Mtok), which is computed only where positive
  IF(I.api_usd_per_mtok > energy_per_mtok, IF(owned_breakeven <= serve_capacity, owned_breakeven, -1), -1),
  "against an API's price per million tokens; a break-even beyond what the setup can serve is none")
q("selfhost_rent_breakeven_mtok_per_month", "Mtok/month",
  "Monthly generated tokens above which renting the GPUs for the working hours beats the API: rent per month / API price; "
  "-1 = never (even fully used, the rented GPUs cost more per token than the API)",
  IF(I.api_usd_per_mtok * serve_capacity > rent_usd_per_month, rent_usd_per_month / I.api_usd_per_mtok, -1),
  "against an API's price per million tokens; the rent is paid for hours_per_day x days_per_month whether busy or not")

q = quantities_of("planning")
q("option_cost_usd", "USD", "Cost of the job for this option: rented total, or the owned share (owned USD/GPU-h x GPU-hours)",
  IF(I.buy, own_job_usd, rent_total_usd))
option_outlay = q("option_outlay_usd", "USD", "Cash needed: rented total, or capital + setup when buying",
                  IF(I.buy, own_capital_usd + own_setup_usd, rent_total_usd))
option_hours = q("option_hours", "h", "Wall-clock hours of the job for this option (renting includes spot re-work)",
                 IF(I.buy, job_wall_hours, rent_hours_needed))
fixed_hours = q("option_fixed_hours", "h", "The option's hours no speed estimate moves: the starts and the extra hours (renting: "
                "x spot re-work)", (job_start_hours + I.extra_rented_hours) * option_hours / MAX(job_wall_hours, 1e-12))
q("option_hours_likely_low", "h", "Low end of the option's likely wall-clock hours = fixed hours + the rest / (1 + the framework's "
  "speed band)", fixed_hours + (option_hours - fixed_hours) / (1 + speed_band),
  "frameworks catalog speed_band_pct (leave-one-source-out errors; docs/training.md)")
q("option_hours_likely_high", "h", "High end of the option's likely wall-clock hours = fixed hours + the rest x (1 + the framework's "
  "speed band)", fixed_hours + (option_hours - fixed_hours) * (1 + speed_band),
  "frameworks catalog speed_band_pct (leave-one-source-out errors; docs/training.md)")
q("option_usd_per_mtok_train", "USD/Mtok", "Cost per million training tokens processed (tokens x epochs)",
  IF(train_tokens_total > 0, IF(I.buy, own_job_usd, rent_total_usd) / train_tokens_total * 1e6, 0))
meets = q("option_meets_deadline", "flag", "1 = no deadline, or the job finishes within it",
          OR(EQ(I.deadline_hours, 0), option_hours <= I.deadline_hours))
within = q("option_within_budget", "flag", "1 = no budget, or the outlay fits it", OR(EQ(I.budget_usd, 0), option_outlay <= I.budget_usd))
within_capital = q("option_within_capital_budget", "flag", "1 = renting, no capital budget, or the purchase's capital fits it",
                   OR(NOT(I.buy), EQ(I.capital_budget_usd, 0), own_capital_usd <= I.capital_budget_usd))
priced = q("option_priced", "flag", "1 = the option has a price (rental price known, or a purchase price when buying)",
           IF(I.buy, own_purchase_usd_per_gpu > 0, rent_usd_per_gpu_hour_list > 0))
offer_allowed = q("option_offer_allowed", "flag",
                  "1 = buying, or renting an offer that may be recommended (interruptible offers only when allow_interruptible is 1)",
                  OR(I.buy, I.allow_interruptible, NOT(OF("interruptible"))))
sells = q("option_offer_sells", "flag", "1 = buying, or the offer sells this many GPUs as one job (offer_max_gpus)",
          OR(I.buy, I.n_gpus <= offer_max_gpus), "offers catalog max_gpus_per_job")
q("option_ok", "flag", "1 = fits in memory, the GPU runs the training precision, priced, an allowed offer that sells this many GPUs, "
  "meets the deadline, the budget and the capital budget",
  AND(Ref("fits_train"), precision_supported, priced, offer_allowed, sells, meets, within, within_capital))

VERDICTS = {
    1: "buying pays back within 1 month",
    2: "buying pays back in 1-3 months",
    3: "buying pays back after more than 3 months",
    4: "buying does not pay back within the period",
}

# names of the memory breakdown components: what a user passes as component= (breakdown, GPU_MEMORY_TRAIN), so they stay fixed
TRAIN_COMPONENTS = {
    "weights": "weights_gib", "gradients": "gradients_gib", "optimizer": "optimizer_gib",
    "activations": "activations_gib", "logits": "logits_gib", "kv_cache": None,
    "overhead": "overhead_train_gib", "allocator_peak": "allocator_peak_train_gib", "total": "peak_train_gib_per_gpu",
}
INFER_COMPONENTS = {
    "weights": "infer_weights_gib", "gradients": None, "optimizer": None,
    "activations": "infer_activation_gib", "logits": None, "kv_cache": "kv_and_state_gib_per_gpu",
    "overhead": "overhead_infer_gib", "allocator_peak": "allocator_peak_infer_gib", "total": "peak_infer_gib_per_gpu",
}
# not parts of the total: the allocator peak is the tensors alone (the total adds context and cache)
NOT_ADDITIVE = ("allocator_peak", "total")
