"""Input declarations: name, unit, default, allowed values, description.

Validation, Excel argument help, form labels and docs/quantities.md all read
these declarations; nothing restates them.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from .text import number_text


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
    zero_or_min: float | None = None  # 0 means "automatic" (zero_means); other values must be >= this
    label: str = ""               # a short plain-language label for forms and the workbook (LABELS below)
    advanced: bool = False        # folded away in forms, in the workbook's Advanced section
    zero_means: str = "automatic"  # what 0 stands for when zero_or_min is set, in words

    @property
    def section(self) -> str:
        """Where forms and the workbook show this input: the job, hardware, renting, owning, serving, advanced."""
        return "advanced" if self.advanced else SECTION_OF_GROUP[self.group]

    def allowed(self) -> str:
        """What is allowed, in words (for messages and help)."""
        if self.kind == "flag":
            return "0 or 1 (no / yes)"
        if self.kind == "choice":  # validation.allowed lists the names of small catalogs
            extra = " or a parameter count in billions" if self.accepts_number else ""
            return f"a name from the {self.table} catalog{extra}"
        lo = "" if self.minimum is None else (f"> {number_text(self.minimum)}" if self.min_exclusive else f">= {number_text(self.minimum)}")
        hi = "" if self.maximum is None else f"<= {number_text(self.maximum)}"
        what = "a whole number" if self.kind == "integer" else "a number"
        if self.zero_or_min is not None:
            lo = f">= {number_text(self.zero_or_min)}"
            what = f"0 ({self.zero_means}) or a whole number" if self.kind == "integer" else f"0 ({self.zero_means}) or a number"
        bounds = " and ".join(b for b in (lo, hi) if b)
        return f"{what} {bounds}".strip() + (f" ({self.unit})" if self.unit not in ("", "-") else "")


# share of a machine's CPU memory offloaded states may take (the rest: the system, the data loader, pinned transfer
# buffers; gpu-tco assumption), the rule of fits_host_memory and every sentence that states it
HOST_MEMORY_USABLE = 0.8


def _n(name, unit, default, description, lo=None, hi=None, excl=False, kind="number", source="", group="general"):
    return Input(name, unit, default, description, kind, lo, hi, excl, source=source, group=group)


def _z(name, unit, default, description, least, hi, zero_means, group, source=""):
    """A number where 0 stands for something else (an estimate, a catalog value) and any other value
    must be at least ``least``: a tiny positive value would be divided by (hours, prices, speeds) and
    give results beyond what a float holds."""
    return Input(name, unit, default, description, minimum=0, maximum=hi, zero_or_min=least, zero_means=zero_means,
                 group=group, source=source)


def _c(name, table, default, description, group="general", accepts_number=False, source=""):
    return Input(name, "-", default, description, "choice", table=table, group=group,
                 accepts_number=accepts_number, source=source)


def _f(name, default, description, group="general", source=""):
    return Input(name, "flag", default, description, "flag", 0, 1, group=group, source=source)


def _calibrated() -> dict:
    """Defaults fitted on the calibration set (data/calibrated.csv, written by ``gpu-tco calibrate --write``)."""
    import csv
    from pathlib import Path
    with open(Path(__file__).resolve().parent / "data" / "calibrated.csv", newline="", encoding="utf-8") as fh:
        return {row["name"]: float(row["value"]) for row in csv.DictReader(fh)}


CALIBRATED = _calibrated()

INPUTS: tuple[Input, ...] = (
    # the job and the hardware
    _c("model", "models", "Llama-3-70B", "Model: a catalog name, a parameter count in billions, architecture fields, or the path of a Hugging Face config.json",
       group="model", accepts_number=True),
    _c("gpu", "gpus", "H100-SXM", "GPU type (catalog name; tolerant matching)", group="hardware"),
    _n("n_gpus", "GPUs", 8, "GPUs working on the job (training: data x tensor parallel; inference: one replica, tensor parallel)",
       1, 100_000, kind="integer", group="hardware"),
    # training configuration
    _c("method", "methods", "lora", "Training method: full, lora, qlora (NF4 + double quantization), qlora_nodq", group="training"),
    _c("precision", "precisions", "bf16_mixed", "Numeric precision: bf16_mixed (fp32 master), bf16_pure, fp32, fp8 (linear layers in FP8, "
       "Transformer Engine / torchao float8; needs FP8 tensor cores), mxfp8 (block-scaled FP8 on data-centre Blackwell)", group="training"),
    _c("optimizer", "optimizers", "adamw", "Optimizer: adamw (fused), adamw_foreach (torch.optim.AdamW's default), adamw_8bit, sgd_momentum, lion, adafactor", group="training"),
    _c("framework", "frameworks", "transformers",
       "Training framework whose conventions and speed the estimate assumes: transformers (the Hugging Face Trainer, TRL and "
       "PEFT, also under Axolotl and LLaMA-Factory), torchtune, unsloth, torchtitan, megatron (NeMo, Megatron-Bridge), "
       "deepspeed, composer", group="training",
       source="frameworks catalog (source and date per row); the default: [hf_training_args], [axolotl_readme] and "
              "[llamafactory_readme] (both run the Hugging Face Trainer), [torchtune_future] (torchtune development stopped)"),
    _c("master_weights", "master_weights", "auto",
       "Master weights: auto (the precision's and the framework's convention), none, fp32_copy (an fp32 copy beside 16-bit "
       "weights), fp32_autocast (fp32 weights and gradients under bf16 autocast)", group="training",
       source="[zero2020] section 3.1; [pytorch_amp]; [megatron_distopt]"),
    _c("optimizer_state_dtype", "state_dtypes", "auto",
       "Optimizer state dtype: auto (the framework's convention), param (the dtype of the weights it updates), fp32, bf16, 8bit",
       group="training", source="[pytorch_adamw] (states like the parameter); [megatron_distopt] (fp32 states); [adam8bit2022]"),
    _c("qlora_fp32_casts", "qlora_casts", "auto",
       "QLoRA: auto (the framework's convention), fp32 (embeddings, output layer and norms cast to fp32, as PEFT's "
       "prepare_model_for_kbit_training does), none", group="training", source="[peft_kbit]"),
    _c("lora_adapter_dtype", "adapter_dtypes", "auto",
       "LoRA adapters' number format: auto (the framework's convention), fp32 (PEFT 0.12 and later: every adapter casts its "
       "input to fp32 and works in fp32; counted at twice the memory traffic of 16-bit adapters and 4 bytes per adapter "
       "weight, gradient and optimizer moment), bf16 (the base weights' format)",
       group="training", source="[peft_adapter_dtype]"),
    _c("sharding", "shardings", "zero3", "State sharding across data-parallel GPUs: none, zero1, zero2, zero3 (FSDP)", group="training"),
    _f("offload_optimizer", 0, "1 = optimizer states and master weights live in CPU memory (ZeRO-Offload)", group="training"),
    _f("offload_params", 0, "1 = parameters, gradients and optimizer states live in CPU memory; the GPU holds the layers being computed "
       "(FSDP CPU offload, ZeRO-Infinity)", group="training", source="[pytorch_fsdp] (CPUOffload); [torchtune_memory]"),
    _z("host_memory_gib_per_gpu", "GiB/GPU", 0,
       f"CPU memory of the machine per GPU, for offloaded states (they may take {100 * HOST_MEMORY_USABLE:g} % of it); 0 = 2 x the "
       "GPU's memory, about "
       "what cloud GPU machines carry (AWS p4de.24xlarge 1.8x, p5.48xlarge 3.2x)", 1, 1e6,
       "2 x the GPU's memory", group="training", source="[aws_p4]; [aws_p5]; gpu-tco assumption: 2x and the fifth kept free"),
    _f("optimizer_in_backward", 0, "1 = each gradient is applied and freed during the backward pass, so only one tensor's gradient is held "
       "(no gradient accumulation)", group="training", source="[torchtune_memory] (optimizer_in_bwd)"),
    _f("fp32_grads", 0, "1 = gradients kept in fp32 (18-byte convention) instead of the weight precision", group="training",
       source="[hf_one_gpu] and [deepspeed_memory]: 18 bytes per parameter"),
    _c("recompute", "recomputes", "full", "Activation recomputation: none, selective, full (gradient checkpointing)", group="training"),
    _f("flash_attention", 1, "1 = FlashAttention (no s x s attention matrix stored)", group="training",
       source="[flashattention2022]"),
    _f("fused_loss", 0, "1 = a chunked/fused cross-entropy (logits materialised a chunk at a time) even where the framework "
       "computes the loss whole (transformers with Liger's fused linear cross-entropy); torchtune and Unsloth always chunk it; "
       "0 = the framework's own loss", group="training",
       source="[torchtune_readme] (recipes use a chunked cross-entropy); [liger2024] (fused linear cross-entropy); [hf_llama] "
              "(transformers upcasts the whole batch's logits)"),
    _n("fused_loss_chunk_tokens", "tokens", CALIBRATED["fused_loss_chunk_tokens"], "Tokens whose logits a chunked/fused loss holds at once (its working set)", 1, 10_000_000,
       group="training", source="[liger2024] (chunked loss); fitted on [torchtune_readme] peak memory; docs/calibration.md"),
    _n("logits_bytes_per_element", "bytes", CALIBRATED["logits_bytes_per_element"],
       "Peak bytes per logit (token x vocabulary entry) in an unfused loss: of bf16 logits 2, fp32 upcast 4, fp32 log-softmax 4, fp32 grad 4 and bf16 grad 2, about 12 live at once",
       1, 64, group="training",
       source="[hf_llama] loss path; calibrated on [unsloth_llama31] (maximum contexts of Llama 3.1 8B QLoRA with Hugging Face + FlashAttention 2)"),
    _n("tensor_parallel", "GPUs", 1, "Tensor-parallel degree t (must divide n_gpus)", 1, 1024, kind="integer", group="training"),
    # pipeline, context and expert parallelism: n_gpus = tensor x pipeline x context x data (experts split inside data)
    _n("pipeline_parallel", "GPUs", 1, "Pipeline-parallel degree: the layers are split into this many stages, one per GPU group "
       "(n_gpus = tensor x pipeline x context x data parallel)", 1, 1024, kind="integer", group="training",
       source="[narayanan2021] section 2.2 (1F1B schedule)"),
    Input("pipeline_microbatches", "micro-batches", 0,
          "Micro-batches per optimizer step of one data-parallel rank (gradient accumulation; with pipelining the micro-batches "
          "of a pipeline step); 0 = 8 x pipeline_parallel with pipelining, 1 without",
          kind="integer", minimum=0, maximum=1_000_000, zero_or_min=1, zero_means="8 x pipeline_parallel, or 1", group="training",
          source="[narayanan2021] section 2.2: the bubble (p-1)/(m+p-1) is small once m is several times p"),
    _n("pipeline_virtual_stages", "stages/GPU", 1, "Interleaved pipeline: model chunks per GPU (Megatron virtual pipeline); "
       "the bubble shrinks by this factor, point-to-point traffic grows by it", 1, 128, kind="integer", group="training",
       source="[narayanan2021] section 2.2.2 (interleaved schedule)"),
    _n("context_parallel", "GPUs", 1, "Context-parallel degree: each sequence is split into this many parts on different GPUs "
       "(ring attention exchanges keys and values)", 1, 1024, kind="integer", group="training",
       source="[megatron_cp] (context parallelism); [ring_attention2023]"),
    _n("expert_parallel", "GPUs", 1, "Expert-parallel degree (mixture-of-experts models): the experts are split over this many "
       "data-parallel GPUs, tokens travel to their experts by all-to-all", 1, 4096, kind="integer", group="training",
       source="[gshard2020]; [megatron_moe] (expert parallelism inside data parallelism)"),
    _n("moe_train_efficiency", "fraction", CALIBRATED.get("moe_train_efficiency", 1.0),
       "Efficiency kept in training by mixture-of-experts models: grouped expert matrix products on uneven token counts, routing, "
       "token permutation and load imbalance (all-to-all time is modelled separately)", 0.01, 1, group="training",
       source="fitted on [nemo_perf] (gpt-oss-120b, DeepSeek-V3, Qwen3 pre-training); [megablocks2022] (grouped GEMMs); docs/calibration.md"),
    _n("moe_load_imbalance", "x", 1.0,
       "Mixture-of-experts with expert parallelism: tokens the busiest GPU's experts receive / the mean (1 = balanced, as the "
       "calibration runs force; a token-dropping router caps it at its capacity factor, e.g. 1.25)", 1, 64, group="training",
       source="[switch2021] section 2.2 (capacity factor 1.0-1.25); [nemo_perf] and [automodel_perf] (routing forced to balance)"),
    _n("cpu_optimizer_params_per_s", "params/s", CALIBRATED.get("cpu_optimizer_params_per_s", 1e9),
       "Parameters per second one GPU's process updates on the CPU when the optimizer is offloaded (CPU Adam)", 1e6, 1e13,
       group="training", source="[zero_offload2021] section 5 (CPU-Adam); fitted on [torchtune_readme] (Llama 3.1 70B, FSDP CPU offload); "
       "docs/calibration.md"),
    _n("offload_prefetch_layers", "layers", 2,
       "Parameter offload: layers whose 16-bit weights sit on the GPU at once (the one computed and the one prefetched)",
       1, 64, kind="integer", group="training",
       source="[pytorch_fsdp] (forward and backward prefetch); [zero_infinity2021] section 5 (prefetching)"),
    _f("sequence_parallel", 0, "1 = Megatron sequence parallelism (norm/dropout activations split by t)", group="training",
       source="[korthikanti2022] section 4.2.2"),
    _n("seq_len", "tokens", 4096, "Training sequence length s", 1, 10_000_000, kind="integer", group="training"),
    _z("packed_document_tokens", "tokens", 0,
       "Packed short documents: their mean length when each training sequence packs several documents and attention "
       "stays within each one (per-document masks); attention then spans the document, not the whole sequence",
       1, 10_000_000, "one document per sequence: attention spans the whole sequence", "training",
       source="[torchtune_packing] (packed=True: document masks through FlexAttention); [hf_packing_fa2] (padding-free "
       "packing: FlashAttention's variable-length kernels)"),
    _n("micro_batch", "sequences", 1, "Micro-batch per GPU b (sequences per forward pass)", 1, 1_000_000, kind="integer", group="training"),
    _n("lora_rank", "-", 16, "LoRA rank r", 1, 65_536, kind="integer", group="training"),
    _c("lora_targets", "lora_targets", "all", "Linears that get LoRA adapters (all, attention, qv, qkv, qvo_mlp, qkv_mlp: the lora_targets table)", group="training"),
    # at least one token and a thousandth of a pass: smaller amounts of work are divided by (cost per token, per useful hour)
    _n("tokens", "tokens", 100_000_000, "Training tokens per epoch (dataset size)", 1, 1e16, group="training"),
    _n("epochs", "epochs", 1, "Passes over the dataset", 0.001, 100_000, group="training"),
    Input("mfu", "fraction", 0,
          "Model FLOPs utilisation as papers report it: model FLOPs per second ((6 full | 4 LoRA) x active parameters + attention; "
          "recomputation not counted, no embedding lookup) over the dense peak (with an FP8 precision: the peak of its FLOP "
          "mix, train_tflops_per_gpu_peak); 0 = the calibrated default for this GPU, method, recomputation and precision",
          minimum=0, maximum=1, zero_or_min=0.01, group="training",
          source="[palm2022] Appendix B (definition); [llama3_2024] 38-43 % on H100 (405B); calibration: docs/calibration.md"),
    _n("large_cluster_mfu_factor", "fraction", CALIBRATED["large_cluster_mfu_factor"],
       "Efficiency kept on clusters of 512 GPUs or more (collectives across many nodes, stragglers, restarts)", 0.01, 1,
       group="training", source="fitted on [llama2_2023] Table 2 (GPU-hours on 2,048 A100) against 8-64 GPU runs; docs/calibration.md"),
    _n("activation_bytes_per_dim", "bytes", CALIBRATED["activation_bytes_per_dim"],
       "Bytes per token and unit of layer width that training moves through GPU memory around the matrix products "
       "(their inputs and outputs, the norms, activation functions and residual adds between them), forward and backward; "
       "eager frameworks add their own (frameworks.csv eager_bytes_per_dim)", 0, 1000,
       group="training", source="gpu-tco's count: each matrix product's bf16 input and output, read or written by the forward, "
       "input-gradient and weight-gradient products (3 x 2 bytes); checked held out on [llmfoundry_bench_a100] (MPT 125M "
       "to 3B on 8 to 128 A100s and H100s), [tinyllama_readme]; docs/training.md"),
    _n("pcie_multi_gpu_efficiency", "fraction", 1.0,
       "Scaling efficiency of multi-GPU training without an NVLink-class fabric (applied when n_gpus > 1), on top of the "
       "PCIe transfers the communication model already times", 0.01, 1,
       group="training", source="[answerai_fsdp_qlora_bench]: Llama 2 7B LoRA and QLoRA on two RTX 4090s over PCIe are within "
       "8 % of the estimate with 1 and 16-24 % below it with 0.7 (the earlier assumption): the modelled transfers carry the "
       "cost; lower it for machines whose GPUs cannot reach each other directly"),
    _n("collective_efficiency", "fraction", 0.8,
       "Share of a link's bandwidth that collective operations (all-gather, reduce-scatter, all-reduce) achieve",
       0.01, 1, group="overheads",
       source="[nccl_h100_busbw] (ring: about 370 of 450 GB/s on 8x H100 NVLink, 0.82); [nccl_ndr_busbw] (46-48 of 50 GB/s per NDR NIC)"),
    _n("pcie_gb_per_s", "GB/s", 20,
       "Bandwidth per GPU and direction between GPUs of one machine without NVLink (PCIe, through the CPU when peer-to-peer is off)",
       0.1, 10_000, group="overheads", source="[pcie4_spec] (PCIe 4.0 x16: 31.5 GB/s per direction; less through the CPU)"),
    _n("own_fabric_gbps_per_gpu", "Gbit/s", 400,
       "Owned setups of more than one server: network bandwidth per GPU between the servers (InfiniBand NDR: 400)",
       0.1, 100_000, group="owning", source="[nvidia_dgx_h100] (eight 400 Gbit/s ConnectX-7 ports, one per GPU)"),
    _n("cuda_context_gib", "GiB", CALIBRATED["cuda_context_gib"], "CUDA context, kernels and libraries per GPU", 0, 64, group="overheads",
       source="[hf_anatomy]: 1,343 MB for the CUDA kernels on a V100"),
    _n("fragmentation_pct", "%", CALIBRATED["fragmentation_pct"], "Allocator cache and fragmentation on top of tensors (reserved vs allocated)", 0, 100,
       group="overheads", source="gpu-tco assumption; the caching allocator reserves more than it allocates ([pytorch_memory])"),
    # inference
    _n("context_tokens", "tokens", 8192, "Tokens per sequence held in the KV cache (prompt + generated)", 1, 100_000_000,
       kind="integer", group="inference"),
    _n("batch", "sequences", 1, "Concurrent sequences served (inference batch)", 1, 1_000_000, kind="integer", group="inference"),
    _c("weights_dtype", "weight_dtypes", "bf16", "Inference weight format: bf16, fp16, fp8, int8, int4_awq, int4_gptq, nf4, mxfp4, nvfp4, q4_k_m, ...",
       group="inference"),
    _c("kv_dtype", "kv_dtypes", "bf16", "KV-cache element type: bf16, fp16, fp8, fp32", group="inference"),
    _n("prefill_chunk_tokens", "tokens", 2048, "Tokens prefilled per forward step (chunked prefill budget)", 1, 10_000_000,
       kind="integer", group="inference", source="[vllm_engine_args]: max_num_batched_tokens default with chunked prefill"),
    _n("decode_bandwidth_efficiency", "fraction", CALIBRATED["decode_bandwidth_efficiency"], "Achieved fraction of peak memory bandwidth while decoding", 0.01, 1,
       group="inference", source="fitted on [llamacpp_19053] and [mlcperf_2023] (decode rarely reaches the datasheet bandwidth; [pope2022]); docs/calibration.md"),
    _n("prefill_mfu", "fraction", CALIBRATED["prefill_mfu"], "Achieved fraction of dense peak FLOPS during prefill", 0.01, 1, group="inference",
       source="fitted on [llamacpp_19053]; prefill is compute-bound ([pope2022]); docs/calibration.md"),
    _n("moe_prefill_efficiency", "fraction", CALIBRATED["moe_prefill_efficiency"],
       "Efficiency kept in prefill by mixture-of-experts models (each expert multiplies only its share of the tokens)", 0.01, 1,
       group="inference", source="fitted on [llamacpp_19053] (gpt-oss 20B); docs/calibration.md"),
    # the job's wall time, shared by renting and owning
    _z("job_hours", "h", 0, "Hours of work on n_gpus; 0 = the estimated training time (train_hours)", 0.01, 1e9,
       "the estimated training time", group="job"),
    _n("debug_overhead_pct", "%", 10, "Extra GPU time for debugging and failed runs, on top of the job", 0, 1000,
       group="job", source="gpu-tco assumption; [aimanual_cheap_gpus] budgets +20 %"),
    _f("count_first_start", 1, "1 = the first start costs its minutes too (0: restarts only, as some published cost sheets "
       "count)", group="job"),
    _n("restarts", "restarts", 0, "Times the job restarts after its first start, each loading the model again", 0, 100_000,
       kind="integer", group="job"),
    _n("model_load_minutes", "min", 6, "Minutes from start to first step (load the model) at the first start and each restart", 0,
       10_000, group="job",
       source="[aimanual_cheap_gpus]: 5-7 minutes to load a 70B model onto 4x H100"),
    _n("extra_rented_hours", "h", 0, "Further hours the GPUs are held: data preparation, evaluation, idle", 0, 1e9, group="job"),
    # renting
    Input("offer", "-", "auto", "Rental offer (catalog name); auto = the GPU's cheapest on-demand offer",
          "choice", table="offers", group="renting", source="offers catalog (provider price pages; source and date per row)"),
    _z("usd_per_gpu_hour_rented", "USD/GPU-h", 0, "Rental price per GPU-hour; 0 = the offer's price", 0.0001, 1e6,
       "the offer's price", group="renting"),
    _n("off_peak_discount_pct", "%", 0, "Discount for renting off-peak (nights, weekends)", 0, 100, group="renting",
       source="[aimanual_cheap_gpus]: marketplaces are 30-40 % cheaper at night"),
    _f("commitment_fully_used", 0,
       "Committed offers (reserved instances, savings plans): 1 = other work keeps the GPUs busy for the whole term, so the "
       "job pays only its own hours at the committed price; 0 = the job pays the whole commitment", group="renting"),
    _n("spot_rework_pct", "%", 10, "Extra hours lost to interruptions on spot/interruptible offers (work since the last checkpoint, restarts)",
       0, 1000, group="renting", source="gpu-tco assumption: work since the last checkpoint is redone after a preemption"),
    _n("storage_gb", "GB", 500, "Disk kept for data and checkpoints during the job", 0, 1e9, group="renting",
       source="[aimanual_4090_h100]: a 500 GB EBS volume for the p5 job"),
    _n("egress_gb", "GB", 0, "Data downloaded out of the cloud (results, checkpoints)", 0, 1e12, group="renting"),
    _n("storage_pct_of_compute", "%", 0, "Storage and traffic as a share of compute cost (a rule of thumb instead of GB prices)", 0, 1000,
       group="renting", source="[aimanual_4090_h100] uses 10 %"),
    _n("rent_utilization_pct", "%", 100, "Share of rented hours spent serving at the modelled throughput (100 = rent only while busy)",
       1, 100, group="renting"),
    # owning
    _n("purchase_usd_per_gpu", "USD/GPU", 0, "Price of one GPU card; 0 = the GPU catalog's purchase_usd", 0, 1e8, group="owning"),
    _n("server_overhead_pct", "%", 60, "Rest of the server (CPU, RAM, board, PSU, chassis) as % of the GPU cards' price", 0, 1000,
       group="owning", source="[cottier2024]: a whole server costs 1.54-1.69 x its GPUs; [aimanual_4090_h100]: $5,000 on 4x $2,000"),
    _n("other_hardware_usd", "USD", 0, "Further hardware bought once for the whole setup (an amount instead of or besides the %)", 0, 1e12,
       group="owning"),
    Input("gpus_per_server", "GPUs", 0, "GPUs per server or rack (sets the server count for system power and networking); "
          "0 = the GPU's largest server as sold (GPU catalog server_sizes: 8 for HGX and PCIe servers, 72 for NVL72 racks)",
          "integer", 0, 576, zero_or_min=1, group="owning"),
    _n("cluster_network_pct", "%", 19, "Cluster networking as % of the total hardware cost, when there is more than one server", 0, 90,
       group="owning", source="[epoch_costs_code]: cluster interconnect = 19 % of the cluster cost"),
    _n("setup_hours", "h", 40, "Engineering hours to build and install the setup", 0, 1e6, group="owning",
       source="gpu-tco assumption; [aimanual_4090_h100]: 2-4 weeks to build a 4090 farm, hours for a cloud node"),
    _n("labour_usd_per_hour", "USD/h", 100, "Cost of an engineering hour", 0, 1e5, group="owning", source="gpu-tco assumption"),
    _n("gpu_load_factor", "fraction", 0.75, "Average draw as a fraction of nameplate power (GPUs and the rest of the server)", 0.01, 1,
       group="owning", source="[cottier2024]: servers draw about 75 % of their rated power during training"),
    _f("auto_system_power", 1,
       "1 = a server's power besides its GPUs follows the GPU (500 W per consumer workstation; per data-centre GPU slot "
       "the vendor's reference server: 412.5 W A100, 575 W H100/H200 and cards without a figure, 787.5 W B200 and B300); 0 = system_w_per_server",
       group="owning", source="[aimanual_4090_h100]: +500 W per workstation; [nvidia_dgx_a100] 6.5 kW, [nvidia_dgx_h100] 10.2 kW, "
       "[nvidia_dgx_b200_guide] 14.3 kW, each for 8 GPUs with their TDP"),
    _n("system_w_per_server", "W", 0, "Nameplate power of one server besides its GPUs (used when auto_system_power is 0)",
       0, 1e6, group="owning"),
    _n("pue", "ratio", 1.25, "Power usage effectiveness: facility power / IT power (cooling etc.)", 1, 5, group="owning",
       source="[epoch_costs_code]: 1.25 outside hyperscalers (1.1 for hyperscalers); [uptime2025]: average 1.54"),
    _n("usd_per_kwh", "USD/kWh", 0.15, "Electricity price", 0, 10, group="owning",
       source="between US industrial (~0.08) and commercial (~0.19) prices ([eia_prices]); [aimanual_4090_h100] uses 0.15"),
    _n("colo_usd_per_kw_month", "USD/kW-month", 184, "Colocation price per kW of provisioned (nameplate) power, electricity excluded",
       0, 1e5, group="owning", source="[cbre2024]: $184/kW-month"),
    _n("rack_usd_per_month", "USD/month", 0, "Rack or space rent per month for the setup (instead of or besides per-kW colocation)", 0, 1e9,
       group="owning"),
    _n("maintenance_pct_per_year", "%/year", 10, "Maintenance, spares and staff per year as % of capital", 0, 1000, group="owning",
       source="gpu-tco assumption: about 10 % of capital per year"),
    Input("depreciation", "-", "exponential", "How resale value falls: exponential (yearly loss) or straight_line (to a residual)",
          "choice", table="depreciations", group="owning"),
    _n("value_loss_pct_per_year", "%/year", 30, "Exponential depreciation: value lost per year", 0, 100, group="owning",
       source="[cottier2024]: 27-32 %/year (0.14 orders of magnitude); [aimanual_4090_h100]: 30-40 %/year"),
    _n("life_years", "years", 5, "Straight-line depreciation: years to reach the residual value", 0.1, 100, group="owning",
       source="[irs_depreciation]: computers and peripherals are 5-year property"),
    _n("residual_pct", "%", 0, "Straight-line depreciation: value left at the end of life_years, % of capital", 0, 100, group="owning"),
    Input("discount_rate_pct", "%/year", 0, "Cost of capital for the present-value and annualised view (0 = no discounting)",
          minimum=0, maximum=100, zero_or_min=0.01, group="owning", source="capital recovery factor r(1+r)^n/((1+r)^n-1)"),
    _n("months", "months", 36, "Period of ownership (and of the rent comparison)", 1, 1200, group="owning"),
    _n("hours_per_day", "h/day", 12, "Hours per day the owned GPUs do useful work (utilization = hours_per_day / 24)", 0.01, 24,
       group="owning", source="gpu-tco assumption: 50 % utilization"),
    _n("days_per_month", "days", 30.4375, "Days per month (365.25 / 12; some articles use 30)", 28, 31, group="owning"),
    _n("at_month", "months", 12, "Month at which the cumulative own-versus-rent costs are read (the break-even chart sweeps it)",
       0, 1200, group="owning"),
    # serving economics
    _z("measured_tokens_per_s", "tokens/s", 0, "Measured generation throughput of the setup; 0 = the modelled decode_tokens_per_s",
       0.001, 1e12, "the modelled rate", group="serving"),
    _z("api_usd_per_mtok", "USD/Mtok", 0.60, "API price per million generated tokens to compare self-hosting with", 0.0001, 1e6,
       "a free API", group="serving", source="[aigateway_llama]"),
    # planning
    _f("buy", 0, "1 = the option buys the GPUs; 0 = it rents them through the offer", group="planning"),
    _f("allow_interruptible", 0,
       "1 = interruptible (spot) offers may be recommended; 0 = they are listed but not recommended, since the provider "
       "can stop them at any time", group="renting"),
    _n("deadline_hours", "h", 0, "Latest acceptable wall-clock hours for the job; 0 = no deadline", 0, 1e9, group="planning"),
    _n("budget_usd", "USD", 0, "Most the job may cost (buying: the capital outlay); 0 = no budget", 0, 1e15, group="planning"),
    _n("cost_tolerance_pct", "%", 5,
       "Options costing at most this much more than the cheapest (the cheapest whose likely peak fits the GPU's memory, "
       "where one does) count as equal: among them room to spare in memory (not tight), then renting, then fewer machines, then fewer hours, then fewer GPUs win", 0, 1000, group="planning", source="gpu-tco assumption"),
    _z("owned_busy_hours_per_day", "h/day", 0,
       "Hours per day bought GPUs stay busy over the months of ownership, this job and the work after it; 0 = a one-off job: "
       "rentals are ranked, and the answer says at what daily use buying would pay back. Above 0, purchases are ranked too, "
       "their cost per working hour at this use", 0.01, 24, "a one-off job", group="owning",
       source="gpu-tco rule: a purchase pays only for the hours it works"),
    _f("consider_buying", 0,
       "1 = rank buying the GPUs beside renting even for a one-off job (at hours_per_day of use over the months of ownership); "
       "0 = buying is ranked only when owned_busy_hours_per_day is above 0", group="planning"),
    _n("capital_budget_usd", "USD", 0, "Most capital a purchase may take (GPUs, servers, network); 0 = no limit", 0, 1e15,
       group="owning"),
    _n("memory_margin_pct", "%", 5,
       "Share of each GPU's memory kept free: a setup fits when its tensors at their peak take at most (100 - this) % of the "
       "memory (and the device total fits). The peak is an estimate, and library workspaces and longer batches move it by a "
       "few per cent; within 10 % of the memory the answer says tight", 0, 50, group="planning",
       source="gpu-tco assumption: the estimate's error against measured peaks is a few per cent (docs/calibration.md)"),
    # serving: the demand and the latency targets of a deployment (the serving planner, core/serving.py)
    Input("task", "-", "train", "What the job is: train (training or fine-tuning) or serve (a deployment answering requests)",
          "choice", table="tasks", group="job"),
    _n("requests_per_s", "requests/s", 10, "Requests per second the deployment answers while the traffic runs (hours_per_day)",
       0.0001, 1e9, group="serving"),
    _z("monthly_mtok", "Mtok/month", 0, "Tokens per month (prompt + generated, millions) instead of a request rate; "
       "0 = from requests_per_s", 0.000001, 1e12, "from requests_per_s", group="serving"),
    _n("prompt_tokens", "tokens", 1000, "Prompt (input) tokens per request (a mean: need not be whole)", 1, 10_000_000, group="serving"),
    _n("output_tokens", "tokens", 200, "Generated (output) tokens per request (a mean: need not be whole)", 1, 10_000_000, group="serving"),
    Input("ttft_slo_ms", "ms", 2000, "Target time to the first token of an answer; 0 = no target", minimum=0, maximum=1e9,
          zero_or_min=0.001, zero_means="no target", group="serving",
          source="[mlperf_inference_rules] (Llama 2 70B server: 2 s to the first token, 200 ms per token; interactive: 450 ms and 40 ms)"),
    Input("tpot_slo_ms", "ms", 50, "Target time per generated token after the first (the speed each user sees: 50 ms = 20 tokens/s); "
          "0 = no target", minimum=0, maximum=1e9, zero_or_min=0.001, zero_means="no target", group="serving",
          source="[mlperf_inference_rules] (interactive: 40 ms per token)"),
    _z("api_usd_per_mtok_input", "USD/Mtok", 0, "Price of the API per million prompt (input) tokens; 0 = the api_model's price",
       0.000001, 1e6, "the api_model's price", group="serving"),
    _z("api_usd_per_mtok_output", "USD/Mtok", 0, "Price of the API per million generated (output) tokens; 0 = the api_model's price",
       0.000001, 1e6, "the api_model's price", group="serving"),
    _n("max_num_seqs", "sequences", 256, "Most sequences a serving engine runs in one batch (vLLM max_num_seqs)", 1, 1_000_000,
       kind="integer", group="serving", source="[vllm_engine_args] (max_num_seqs, default 256)"),
    _n("gpu_memory_utilization", "fraction", 0.9,
       "Share of each GPU's memory the serving engine may take for weights, workspace and KV cache (vLLM "
       "--gpu-memory-utilization; the launch command passes it when it is not vLLM's 0.9)", 0.1, 1, group="serving",
       source="[vllm_engine_args] (gpu_memory_utilization, default 0.9: the share of GPU memory the engine uses)"),
    _n("target_utilization", "fraction", 0.8,
       "Share of the replicas' capacity the demand may use (the rest is headroom for bursts: a queue's wait grows as "
       "load / (1 - load), 4x the service time at 0.8, 19x at 0.95: Kingman 1961; headroom as in Google's Site "
       "Reliability Engineering, 2016)", 0.05, 0.99, group="serving",
       source="[kingman1961] (waiting time grows as load / (1 - load)); [sre_book2016] chapter 21 (capacity planned with "
              "headroom, N+1 or N+2); gpu-tco assumption: 0.8"),
    _n("spare_replicas", "replicas", 1,
       "Replicas kept beyond what the demand needs at the target utilization, so that one failed or restarting replica "
       "(a GPU, a driver or engine update) leaves the demand served; 0 = none (the answer says what one server's failure does)", 0, 1000, kind="integer", group="serving",
       source="[sre_book2016] chapter 21 (N+1 / N+2 redundancy for production services)"),
    _n("min_weight_bits", "bits", 8,
       "Lowest weight bit width the planner may choose (8 = bf16, fp8 and int8 only; 4 allows 4-bit formats such as "
       "nvfp4 and AWQ, whose accuracy cost the answer names)", 1, 32, group="serving",
       source="weight formats' published accuracy effects (weight_dtypes catalog: accuracy_effect)"),
    _n("allreduce_latency_us", "us", 10, "Fixed latency of one small all-reduce between tensor-parallel GPUs (kernel launch and "
       "synchronisation), paid twice per layer per decode step", 0, 1e6, group="overheads",
       source="[nccl_tests] (small-message all-reduce latency on one NVLink machine: 10-20 us); gpu-tco assumption"),
)



# Where each declaration group is shown (forms, the workbook's Inputs sheet, --help groups).
SECTION_OF_GROUP = {"model": "the job", "training": "the job", "job": "the job", "planning": "the job",
                    "hardware": "hardware", "inference": "serving", "serving": "serving", "renting": "renting",
                    "owning": "owning", "overheads": "advanced"}
SECTIONS = ("the job", "hardware", "renting", "owning", "serving", "advanced")
# the inputs a finance or operations reader changes first (shown at the top of the workbook's Inputs sheet)
FIRST = ("gpu", "n_gpus", "offer", "usd_per_kwh", "hours_per_day", "months", "purchase_usd_per_gpu")

# Short labels a person reads (the name stays what formulas and scenario files use).
LABELS = {
    "model": "Model", "gpu": "GPU type", "n_gpus": "Number of GPUs", "method": "Training method",
    "precision": "Number precision", "optimizer": "Optimizer", "framework": "Training framework", "master_weights": "Master weights",
    "optimizer_state_dtype": "Optimizer state format", "qlora_fp32_casts": "QLoRA fp32 casts", "lora_adapter_dtype": "LoRA adapter format", "sharding": "State sharding (ZeRO / FSDP)",
    "offload_optimizer": "Optimizer in CPU memory", "offload_params": "Parameters in CPU memory",
    "host_memory_gib_per_gpu": "CPU memory per GPU", "fused_loss_chunk_tokens": "Chunked loss: tokens at once",
    "optimizer_in_backward": "Optimizer step in the backward pass",
    "large_cluster_mfu_factor": "Efficiency kept on 512+ GPUs", "moe_prefill_efficiency": "Prefill efficiency kept by MoE models", "fp32_grads": "Gradients in fp32", "recompute": "Activation recomputation",
    "flash_attention": "FlashAttention", "fused_loss": "Chunked (fused) loss", "logits_bytes_per_element": "Bytes per logit",
    "tensor_parallel": "Tensor-parallel GPUs", "sequence_parallel": "Sequence parallelism", "seq_len": "Sequence length", "packed_document_tokens": "Packed documents: mean length",
    "micro_batch": "Sequences per GPU per step", "lora_rank": "LoRA rank", "lora_targets": "Layers with LoRA adapters",
    "tokens": "Training tokens per epoch", "epochs": "Epochs", "mfu": "GPU efficiency (MFU)",
    "pcie_multi_gpu_efficiency": "Multi-GPU efficiency without NVLink", "cuda_context_gib": "CUDA context per GPU",
    "fragmentation_pct": "Memory fragmentation", "context_tokens": "Context length (serving)", "batch": "Concurrent sequences (serving)",
    "weights_dtype": "Weight format (serving)", "kv_dtype": "KV-cache format (serving)", "prefill_chunk_tokens": "Prefill chunk",
    "decode_bandwidth_efficiency": "Memory-bandwidth efficiency (decode)", "prefill_mfu": "GPU efficiency (prefill)",
    "job_hours": "Job hours (0 = estimated)", "debug_overhead_pct": "Extra time for debugging", "count_first_start": "Count the first start", "restarts": "Restarts after the first start",
    "model_load_minutes": "Minutes to start (load the model)", "extra_rented_hours": "Extra hours the GPUs are held",
    "offer": "Cloud offer", "usd_per_gpu_hour_rented": "Rental price per GPU-hour (0 = the offer's)",
    "off_peak_discount_pct": "Off-peak discount", "spot_rework_pct": "Re-work on interruptible offers",
    "storage_gb": "Storage kept during the job", "egress_gb": "Data downloaded (egress)",
    "storage_pct_of_compute": "Storage as a share of compute", "rent_utilization_pct": "Share of rented hours busy (serving)",
    "purchase_usd_per_gpu": "Purchase price per GPU (0 = catalog)", "server_overhead_pct": "Rest of the server",
    "other_hardware_usd": "Other hardware", "gpus_per_server": "GPUs per server", "cluster_network_pct": "Cluster networking",
    "setup_hours": "Setup work", "labour_usd_per_hour": "Cost of an engineering hour", "gpu_load_factor": "Average power draw",
    "auto_system_power": "Server power from the GPU class", "system_w_per_server": "Server power besides GPUs",
    "pue": "Data-centre PUE", "usd_per_kwh": "Electricity price", "colo_usd_per_kw_month": "Colocation price",
    "rack_usd_per_month": "Rack or space rent", "maintenance_pct_per_year": "Maintenance and staff",
    "depreciation": "Depreciation method", "value_loss_pct_per_year": "Value lost per year", "life_years": "Useful life",
    "residual_pct": "Value left at end of life", "discount_rate_pct": "Cost of capital", "months": "Months of ownership",
    "hours_per_day": "Working hours per day", "days_per_month": "Days per month", "at_month": "Month for the cash comparison",
    "measured_tokens_per_s": "Measured tokens per second (0 = modelled)", "api_usd_per_mtok": "API price per million tokens",
    "buy": "Buy (1) or rent (0)", "allow_interruptible": "Allow interruptible (spot) offers", "deadline_hours": "Deadline (0 = none)",
    "budget_usd": "Budget (0 = none)", "collective_efficiency": "Efficiency of GPU-to-GPU transfers",
    "pcie_gb_per_s": "GPU-to-GPU bandwidth without NVLink", "own_fabric_gbps_per_gpu": "Network between owned servers",
    "commitment_fully_used": "Committed GPUs busy all term", "cost_tolerance_pct": "Cost tolerance for the practical choice",
    "owned_busy_hours_per_day": "Use of bought GPUs (0 = one job)", "consider_buying": "Rank buying for a one-off job",
    "capital_budget_usd": "Capital budget (0 = none)", "memory_margin_pct": "Memory kept free",
    # serving
    "task": "Task (train or serve)", "requests_per_s": "Requests per second", "monthly_mtok": "Tokens per month (0 = from requests)",
    "prompt_tokens": "Prompt tokens per request", "output_tokens": "Generated tokens per request",
    "ttft_slo_ms": "Target time to first token (0 = none)", "tpot_slo_ms": "Target time per generated token (0 = none)",
    "max_num_seqs": "Most sequences in one batch", "gpu_memory_utilization": "Engine's share of GPU memory", "target_utilization": "Target utilization of the replicas",
    "spare_replicas": "Spare replicas", "min_weight_bits": "Lowest weight bit width accepted", "allreduce_latency_us": "Latency of one all-reduce",
    "api_usd_per_mtok_input": "API price per million input tokens (0 = the API's)",
    "api_usd_per_mtok_output": "API price per million output tokens (0 = the API's)",
    "pipeline_parallel": "Pipeline-parallel stages", "pipeline_microbatches": "Micro-batches per optimizer step (0 = automatic)",
    "pipeline_virtual_stages": "Interleaved stages per GPU", "context_parallel": "Context-parallel GPUs",
    "expert_parallel": "Expert-parallel GPUs", "moe_train_efficiency": "Training efficiency kept by MoE models",
    "cpu_optimizer_params_per_s": "CPU optimizer speed per GPU", "activation_bytes_per_dim": "Activation traffic per unit of layer width", "moe_load_imbalance": "MoE load imbalance (busiest / mean)", "offload_prefetch_layers": "Layers on the GPU with parameter offload",
}
# Inputs most readers never change: folded away in forms, last on the Inputs sheet.
ADVANCED = {"packed_document_tokens", "activation_bytes_per_dim", "host_memory_gib_per_gpu", "master_weights", "optimizer_state_dtype", "qlora_fp32_casts", "lora_adapter_dtype", "offload_optimizer", "fused_loss_chunk_tokens", "offload_params", "optimizer_in_backward", "large_cluster_mfu_factor",
            "moe_prefill_efficiency", "fp32_grads", "flash_attention", "fused_loss", "logits_bytes_per_element", "tensor_parallel",
            "sequence_parallel", "lora_targets", "pcie_multi_gpu_efficiency", "prefill_chunk_tokens",
            "decode_bandwidth_efficiency", "prefill_mfu", "gpu_load_factor", "auto_system_power", "system_w_per_server",
            "days_per_month", "at_month", "storage_pct_of_compute", "cluster_network_pct", "buy",
            "collective_efficiency", "pcie_gb_per_s", "own_fabric_gbps_per_gpu", "commitment_fully_used", "cost_tolerance_pct",
            "max_num_seqs", "allreduce_latency_us", "consider_buying", "memory_margin_pct",
            "pipeline_parallel", "pipeline_microbatches", "pipeline_virtual_stages", "context_parallel", "expert_parallel",
            "moe_train_efficiency", "cpu_optimizer_params_per_s", "offload_prefetch_layers", "moe_load_imbalance"}

# the API a serving job is compared with: a row of the API price catalog (data/apis.csv)
INPUTS += (
    _c("api_model", "apis", "together/Llama-3.3-70B-Instruct-Turbo",
       "API offer to compare serving with (provider/model from the API price catalog, `gpu-tco apis`): its prices per "
       "million input and output tokens", group="serving",
       source="apis catalog: providers' price pages as listed in [genai_prices] (source and date per row)"),
)
LABELS["api_model"] = "API to compare with"

# the serving engine and its calibrated factors (data/engines.csv; each 0 below = the engine's catalog value)
ENGINE_SOURCE = "engines catalog (data/engines.csv): fitted on [aiconfigurator_silicon] (H100 and B200 points) or the row's source"
INPUTS += (
    _c("engine", "engines", "vllm",
       "Serving engine: vllm, sglang, trtllm (TensorRT-LLM), llamacpp (llama.cpp), transformers (Hugging Face generate, eager); "
       "its calibrated per-step and per-request overheads and efficiencies", group="serving",
       source="default vllm: the open engine most deployments start from (it runs every catalog model on NVIDIA and AMD GPUs, "
              "with no build step; TensorRT-LLM is NVIDIA-only, SGLang is close to vLLM in the calibration set); " + ENGINE_SOURCE),
    _n("attention_dp", "GPUs", 1, "Serving: GPUs of a replica that run attention data parallel, each on its own requests, with "
       "the experts (or MLP) spread over all the replica's GPUs (DeepSeek-style); 1 = tensor parallel throughout", 1, 1024,
       kind="integer", group="serving",
       source="[sglang_dp_attention] (data-parallel attention with expert parallel MoE for DeepSeek models)"),
    _n("concurrency", "sequences", 0, "Requests in flight the clients hold (a closed-loop benchmark's --max-concurrency); "
       "0 = the serving batch", 0, 1_000_000, kind="integer", group="serving",
       source="closed-loop load as benchmarks run it ([vllm_bench_serve] --max-concurrency)"),
    _n("serving_layout", "code", 0, "Serving layout: 0 = the planner compares aggregated serving (each replica prefills and "
       "decodes) with disaggregated serving (separate prefill and decode replicas, the KV cache sent between them) and keeps "
       "the one needing fewer GPUs within the targets; 1 = aggregated only; 2 = disaggregated only", 0, 2, kind="integer",
       group="serving", source="[distserve2024]; [splitwise2024]; [dynamo_disagg]; [aiconfigurator_disagg]"),
    _n("disaggregation_min_saving_pct", "%", 15, "Serving: prefill and decode on separate replicas are chosen (serving_layout 0) "
       "only when they need at least this share fewer GPUs than aggregated serving: they run two kinds of replicas and a KV "
       "transfer network, and their estimate is checked only against mixture-of-experts measurements", 0, 100, group="serving",
       source="gpu-tco assumption: beside NVIDIA AIConfigurator 0.12 on six workloads, gpu-tco's disaggregated estimate gains "
              "1.1-1.9x over its aggregated one where AIConfigurator finds 0.8-1.3x (docs/serving.md)"),
    _z("kv_transfer_gb_per_s", "GB/s", 0, "Bandwidth per GPU that carries a prompt's KV cache from a prefill replica to a "
       "decode replica (disaggregated serving); 0 = the network between machines (inter_node_gb_per_s)", 0.001, 1e6,
       "the network between machines", group="serving", source="[dynamo_disagg] (NIXL over RDMA or NVLink); [splitwise2024]"),
    _z("engine_step_overhead_us_per_layer", "us", 0, "Fixed time of each decode step per model layer (kernel launches, "
       "scheduling, sampling); 0 = the engine's", 0.0001, 1e6, "the engine's", group="overheads", source=ENGINE_SOURCE),
    _z("engine_request_overhead_ms", "ms", 0, "Fixed time per request before its first token (tokenizing, scheduling, "
       "the server's round trip); 0 = the engine's", 0.0001, 1e6, "the engine's", group="overheads", source=ENGINE_SOURCE),
    _z("engine_bandwidth_factor", "factor", 0, "The engine's memory-bandwidth efficiency relative to decode_bandwidth_efficiency; "
       "0 = the engine's", 0.01, 10, "the engine's", group="overheads", source=ENGINE_SOURCE),
    _z("engine_compute_factor", "factor", 0, "The engine's compute efficiency (prefill and compute-bound steps) relative to "
       "prefill_mfu; 0 = the engine's", 0.01, 10, "the engine's", group="overheads", source=ENGINE_SOURCE),
    _z("grouped_gemm_efficiency", "fraction", 0, "Share of the memory bandwidth a mixture-of-experts layer's grouped GEMM reaches "
       "reading its experts, relative to a dense layer; 0 = the engine's", 0.01, 10, "the engine's", group="overheads",
       source=ENGINE_SOURCE),
    _z("prefill_queue_share", "fraction", 0, "Share of the other in-flight requests' prompts a new request waits for before "
       "its first token (closed loop); 0 = the engine's", 0.0001, 10, "the engine's", group="overheads", source=ENGINE_SOURCE),
    _z("interleaved_prefill_share", "fraction", 0, "Share of the other requests' prefill that lands between a request's decode "
       "steps (chunked prefill); 0 = the engine's", 0.0001, 10, "the engine's", group="overheads", source=ENGINE_SOURCE),
)
LABELS.update({"serving_layout": "Prefill and decode apart (0 = choose)",
               "kv_transfer_gb_per_s": "KV transfer GB/s per GPU (0 = network)",
               "disaggregation_min_saving_pct": "Least GPU saving to split prefill and decode",
               "engine": "Serving engine", "attention_dp": "Attention data-parallel GPUs (serving)", "concurrency": "Requests in flight (0 = the serving batch)",
               "engine_step_overhead_us_per_layer": "Fixed time per decode step and layer (0 = the engine's)",
               "engine_request_overhead_ms": "Fixed time per request (0 = the engine's)",
               "engine_bandwidth_factor": "Engine memory-bandwidth factor (0 = the engine's)",
               "engine_compute_factor": "Engine compute factor (0 = the engine's)",
               "grouped_gemm_efficiency": "Expert (grouped GEMM) efficiency (0 = the engine's)",
               "prefill_queue_share": "Share of other prompts waited for (0 = the engine's)",
               "interleaved_prefill_share": "Share of other prompts between tokens (0 = the engine's)"})
ADVANCED |= {"kv_transfer_gb_per_s", "disaggregation_min_saving_pct", "attention_dp", "concurrency", "engine_step_overhead_us_per_layer", "engine_request_overhead_ms", "engine_bandwidth_factor",
             "engine_compute_factor", "grouped_gemm_efficiency", "prefill_queue_share", "interleaved_prefill_share"}

INPUTS = tuple(replace(i, label=LABELS[i.name], advanced=i.name in ADVANCED) for i in INPUTS)
BY_NAME = {i.name: i for i in INPUTS}
DEFAULTS = {i.name: i.default for i in INPUTS}
