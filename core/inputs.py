"""Input declarations: name, unit, default, allowed values, description.

Validation, Excel argument help, form labels and docs/quantities.md all read
these declarations; nothing restates them.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Input:
    name: str
    unit: str
    default: object
    description: str
    kind: str = "number"          # number | integer | flag | choice
    minimum: float | None = None
    maximum: float | None = None
    min_exclusive: bool = False   # True: value must be > minimum
    table: str | None = None      # for kind == "choice": the catalog it names a row of
    source: str = ""
    group: str = "general"
    accepts_number: bool = False  # model: a bare parameter count in billions is allowed
    zero_or_min: float | None = None  # 0 means "automatic"; other values must be >= this

    def allowed(self) -> str:
        """What is allowed, in words (for messages and help)."""
        if self.kind == "flag":
            return "0 or 1 (no / yes)"
        if self.kind == "choice":
            from .catalog import tables
            names = tables()[self.table].names
            listed = ", ".join(names) if len(names) <= 12 else f"a name from the {self.table} catalog"
            extra = " or a parameter count in billions" if self.accepts_number else ""
            return f"{listed}{extra}"
        lo = "" if self.minimum is None else (f"> {_num(self.minimum)}" if self.min_exclusive else f">= {_num(self.minimum)}")
        hi = "" if self.maximum is None else f"<= {_num(self.maximum)}"
        what = "a whole number" if self.kind == "integer" else "a number"
        if self.zero_or_min is not None:
            lo = f">= {_num(self.zero_or_min)}"
            what = "0 (automatic) or a number"
        bounds = " and ".join(b for b in (lo, hi) if b)
        return f"{what} {bounds}".strip() + (f" ({self.unit})" if self.unit not in ("", "-") else "")


def _num(x: float) -> str:
    return f"{int(x):,}" if float(x).is_integer() and abs(x) < 1e15 else f"{x:g}"


def _n(name, unit, default, description, lo=None, hi=None, excl=False, kind="number", source="", group="general"):
    return Input(name, unit, default, description, kind, lo, hi, excl, source=source, group=group)


def _c(name, table, default, description, group="general", accepts_number=False, source=""):
    return Input(name, "-", default, description, "choice", table=table, group=group,
                 accepts_number=accepts_number, source=source)


def _f(name, default, description, group="general", source=""):
    return Input(name, "flag", default, description, "flag", 0, 1, group=group, source=source)


INPUTS: tuple[Input, ...] = (
    # the job and the hardware
    _c("model", "models", "Llama-3-70B", "Model: a catalog name, a parameter count in billions, or architecture fields",
       group="model", accepts_number=True),
    _c("gpu", "gpus", "H100-SXM", "GPU type (catalog name; tolerant matching)", group="hardware"),
    _n("n_gpus", "GPUs", 8, "GPUs working on the job (training: data x tensor parallel; inference: one replica, tensor parallel)",
       1, 100_000, kind="integer", group="hardware"),
    # training configuration
    _c("method", "methods", "lora", "Training method: full, lora, qlora (NF4 + double quantization), qlora_nodq", group="training"),
    _c("precision", "precisions", "bf16_mixed", "Numeric precision: bf16_mixed (fp32 master), bf16_pure, fp32", group="training"),
    _c("optimizer", "optimizers", "adamw", "Optimizer: adamw, adamw_8bit, sgd_momentum, lion, adafactor", group="training"),
    _c("sharding", "shardings", "zero3", "State sharding across data-parallel GPUs: none, zero1, zero2, zero3 (FSDP)", group="training"),
    _f("offload_optimizer", 0, "1 = optimizer states and master weights live in CPU memory (ZeRO-Offload)", group="training"),
    _f("fp32_grads", 0, "1 = gradients kept in fp32 (18-byte convention) instead of the weight precision", group="training",
       source="HF docs / Megatron / DeepSpeed ZeRO-3 estimator: 18 bytes per parameter"),
    _c("recompute", "recomputes", "full", "Activation recomputation: none, selective, full (gradient checkpointing)", group="training"),
    _f("flash_attention", 1, "1 = FlashAttention (no s x s attention matrix stored)", group="training",
       source="Dao et al. 2022, FlashAttention"),
    _f("fused_loss", 0, "1 = chunked/fused cross-entropy (logits materialised 1,024 tokens at a time)", group="training"),
    _n("logits_bytes_per_element", "bytes", 16,
       "Peak bytes per logit (token x vocabulary entry) in an unfused loss: bf16 logits 2 + fp32 upcast 4 + fp32 log-softmax 4 + fp32 grad 4 + bf16 grad 2",
       1, 64, group="training",
       source="HF Transformers Llama loss path; calibrated on Unsloth's published HF+FA2 max-context table (Llama 3.1 8B QLoRA)"),
    _n("tensor_parallel", "GPUs", 1, "Tensor-parallel degree t (must divide n_gpus)", 1, 1024, kind="integer", group="training"),
    _f("sequence_parallel", 0, "1 = Megatron sequence parallelism (norm/dropout activations split by t)", group="training",
       source="Korthikanti et al. 2022"),
    _n("seq_len", "tokens", 4096, "Training sequence length s", 1, 10_000_000, kind="integer", group="training"),
    _n("micro_batch", "sequences", 1, "Micro-batch per GPU b (sequences per forward pass)", 1, 1_000_000, kind="integer", group="training"),
    _n("lora_rank", "-", 16, "LoRA rank r", 1, 65_536, kind="integer", group="training"),
    _c("lora_targets", "lora_targets", "all", "Linears that get LoRA adapters: all, attention, qv", group="training"),
    _n("tokens", "tokens", 100_000_000, "Training tokens per epoch (dataset size)", 0, 1e16, excl=True, group="training"),
    _n("epochs", "epochs", 1, "Passes over the dataset", 0, 100_000, excl=True, group="training"),
    Input("mfu", "fraction", 0, "Model FLOPs utilisation, counting recomputed FLOPs; 0 = the GPU's catalog default",
          minimum=0, maximum=1, zero_or_min=0.01, group="training",
          source="Megatron-LM 45-52 % (A100); Llama 2 ~40 %; Llama 3 405B 38-43 % (H100)"),
    _n("pcie_multi_gpu_efficiency", "fraction", 0.7,
       "Scaling efficiency of multi-GPU training without an NVLink-class fabric (applied when n_gpus > 1)", 0.01, 1,
       group="training", source="assumption: PCIe 4.0 x16 is ~32 GB/s vs 600-900 GB/s NVLink (NVIDIA datasheets); override with measurements"),
    _n("cuda_context_gib", "GiB", 1.0, "CUDA context, kernels and libraries per GPU", 0, 64, group="overheads",
       source="HF Transformers 'Model training anatomy': 1,343 MB for the CUDA kernels on a V100"),
    _n("fragmentation_pct", "%", 5, "Allocator cache and fragmentation on top of tensors (reserved vs allocated)", 0, 100,
       group="overheads", source="assumption; PyTorch caching allocator reserves more than it allocates"),
    # inference
    _n("context_tokens", "tokens", 8192, "Tokens per sequence held in the KV cache (prompt + generated)", 1, 100_000_000,
       kind="integer", group="inference"),
    _n("batch", "sequences", 1, "Concurrent sequences served (inference batch)", 1, 1_000_000, kind="integer", group="inference"),
    _c("weights_dtype", "weight_dtypes", "bf16", "Inference weight format: bf16, fp16, fp8, int8, int4_awq, int4_gptq, nf4, q4_k_m, ...",
       group="inference"),
    _c("kv_dtype", "kv_dtypes", "bf16", "KV-cache element type: bf16, fp16, fp8, fp32", group="inference"),
    _n("prefill_chunk_tokens", "tokens", 2048, "Tokens prefilled per forward step (chunked prefill budget)", 1, 10_000_000,
       kind="integer", group="inference", source="vLLM max_num_batched_tokens default with chunked prefill"),
    _n("decode_bandwidth_efficiency", "fraction", 0.8, "Achieved fraction of peak memory bandwidth while decoding", 0.01, 1,
       group="inference", source="notes/estimation.md: 0.7-0.9 typical"),
    _n("prefill_mfu", "fraction", 0.5, "Achieved fraction of dense peak FLOPS during prefill", 0.01, 1, group="inference",
       source="assumption; prefill is compute-bound"),
)

BY_NAME: dict[str, Input] = {i.name: i for i in INPUTS}
DEFAULTS: dict[str, object] = {i.name: i.default for i in INPUTS}
