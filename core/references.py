"""The references registry: every source a formula, input or catalog row cites, in full.

Sources in ``formulas.py``, ``inputs.py`` and the catalogs name works by key in square
brackets, e.g. ``"[korthikanti2022] section 4"``; ``cite`` expands each key to the full
citation (authors or publisher, title, year, URL), which docs/quantities.md and
``gpu-tco explain`` print.  A test checks that every key resolves.
"""
from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Reference:
    key: str
    authors: str  # authors, or the publisher of an unsigned page
    title: str
    year: str
    url: str

    @property
    def own(self) -> bool:
        """The project's own measurement: its address is a file of this repository, not a web page."""
        return not self.url.startswith("https://")

    def addressed(self, root) -> bool:
        """A web address, or (own measurement) a file that exists under the repository ``root``."""
        return self.url.startswith("https://") or (self.own and (root / self.url).is_file())

    def full(self) -> str:
        where = f"{self.url} in gpu-tco's repository" if self.own else self.url
        return f"{self.authors} ({self.year}), \"{self.title}\", {where}"

    def short(self) -> str:
        first = self.authors.split(",")[0].split(" and ")[0]
        many = "," in self.authors or " and " in self.authors
        return f"{first}{' et al.' if many and ' ' not in first.strip() else ''} {self.year[:4]}"


_REFS: list[Reference] = [
    # papers: memory, compute, parallelism
    Reference("korthikanti2022", "Korthikanti, Casper, Lym, McAfee, Andersch, Shoeybi and Catanzaro",
              "Reducing Activation Recomputation in Large Transformer Models", "2022", "https://arxiv.org/abs/2205.05198"),
    Reference("zero2020", "Rajbhandari, Rasley, Ruwase and He",
              "ZeRO: Memory Optimizations Toward Training Trillion Parameter Models", "2020", "https://arxiv.org/abs/1910.02054"),
    Reference("zero_offload2021", "Ren, Rajbhandari, Aminabadi, Ruwase, Yang, Zhang, Li and He",
              "ZeRO-Offload: Democratizing Billion-Scale Model Training", "2021", "https://arxiv.org/abs/2101.06840"),
    Reference("megatron2019", "Shoeybi, Patwary, Puri, LeGresley, Casper and Catanzaro",
              "Megatron-LM: Training Multi-Billion Parameter Language Models Using Model Parallelism", "2019",
              "https://arxiv.org/abs/1909.08053"),
    Reference("narayanan2021", "Narayanan, Shoeybi, Casper, LeGresley, Patwary, Korthikanti et al.",
              "Efficient Large-Scale Language Model Training on GPU Clusters Using Megatron-LM", "2021",
              "https://arxiv.org/abs/2104.04473"),
    Reference("hf_multi_gpu", "Hugging Face", "Efficient Training on Multiple GPUs (Transformers documentation: "
              "\"Transformers status: as of this writing none of the models supports full-PP\"; naive model parallel runs one "
              "GPU at a time)", "2024", "https://huggingface.co/docs/transformers/perf_train_gpu_many"),
    Reference("deepspeed_pipeline", "Microsoft DeepSpeed", "Pipeline Parallelism tutorial (PipelineModule, 1F1B schedule)", "2023",
              "https://www.deepspeed.ai/tutorials/pipeline/"),
    Reference("deepspeed_pipe_engine", "Microsoft DeepSpeed", "deepspeed/runtime/pipe/engine.py, PipelineEngine: 'ZeRO-2 and ZeRO-3 are "
              "incompatible with pipeline parallelism' (asserted when the engine starts)", "2025",
              "https://github.com/deepspeedai/DeepSpeed/blob/master/deepspeed/runtime/pipe/engine.py"),
    Reference("torch_pipelining", "PyTorch", "torch.distributed.pipelining (pipeline schedules torchtitan runs)", "2025",
              "https://pytorch.org/docs/stable/distributed.pipelining.html"),
    Reference("deepspeed_moe", "Microsoft DeepSpeed", "Mixture of Experts tutorial (expert parallelism: ep_size)", "2023",
              "https://www.deepspeed.ai/tutorials/mixture-of-experts/"),
    Reference("kaplan2020", "Kaplan, McCandlish, Henighan, Brown, Chess, Child et al.", "Scaling Laws for Neural Language Models",
              "2020", "https://arxiv.org/abs/2001.08361"),
    Reference("palm2022", "Chowdhery, Narang, Devlin et al.", "PaLM: Scaling Language Modeling with Pathways (Appendix B: model FLOPs utilization)",
              "2022", "https://arxiv.org/abs/2204.02311"),
    Reference("chen2016", "Chen, Xu, Zhang and Guestrin", "Training Deep Nets with Sublinear Memory Cost", "2016",
              "https://arxiv.org/abs/1604.06174"),
    Reference("flashattention2022", "Dao, Fu, Ermon, Rudra and Re",
              "FlashAttention: Fast and Memory-Efficient Exact Attention with IO-Awareness", "2022", "https://arxiv.org/abs/2205.14135"),
    Reference("gqa2023", "Ainslie, Lee-Thorp, de Jong, Zemlyanskiy, Lebron and Sanghai",
              "GQA: Training Generalized Multi-Query Transformer Models from Multi-Head Checkpoints", "2023",
              "https://arxiv.org/abs/2305.13245"),
    Reference("glu2020", "Shazeer", "GLU Variants Improve Transformer", "2020", "https://arxiv.org/abs/2002.05202"),
    Reference("pope2022", "Pope, Douglas, Chowdhery, Devlin, Bradbury et al.", "Efficiently Scaling Transformer Inference", "2022",
              "https://arxiv.org/abs/2211.05102"),
    Reference("vllm2023", "Kwon, Li, Zhuang, Sheng, Zheng, Yu, Gonzalez, Zhang and Stoica",
              "Efficient Memory Management for Large Language Model Serving with PagedAttention", "2023",
              "https://arxiv.org/abs/2309.06180"),
    Reference("liger2024", "Hsu, Dai, Sahni et al.", "Liger Kernel: Efficient Triton Kernels for LLM Training (fused linear cross-entropy)",
              "2024", "https://arxiv.org/abs/2410.10989"),
    # fine-tuning and quantization
    Reference("lora2021", "Hu, Shen, Wallis, Allen-Zhu, Li, Wang, Wang and Chen", "LoRA: Low-Rank Adaptation of Large Language Models",
              "2021", "https://arxiv.org/abs/2106.09685"),
    Reference("qlora2023", "Dettmers, Pagnoni, Holtzman and Zettlemoyer", "QLoRA: Efficient Finetuning of Quantized LLMs", "2023",
              "https://arxiv.org/abs/2305.14314"),
    Reference("hf_training_args", "Hugging Face", "transformers TrainingArguments (optim: adamw_torch, adamw_torch_fused on torch >= 2.8; bf16 mixed precision)",
              "2026", "https://github.com/huggingface/transformers/blob/main/src/transformers/training_args.py"),
    Reference("hf_dtype_auto", "Hugging Face", "Transformers v5 release notes (from_pretrained loads the checkpoint's dtype by default)",
              "2025-12", "https://github.com/huggingface/transformers/releases/tag/v5.0.0"),
    Reference("peft_kbit", "Hugging Face", "PEFT prepare_model_for_kbit_training (casts the non-quantized parameters to float32, enables gradient checkpointing)",
              "2025", "https://github.com/huggingface/peft/blob/main/src/peft/utils/other.py"),
    Reference("bnb_linear4bit", "bitsandbytes", "Linear4bit (matmul in the compute dtype, output cast back to the input's dtype)",
              "2025", "https://github.com/bitsandbytes-foundation/bitsandbytes/blob/main/bitsandbytes/nn/modules.py"),
    Reference("pytorch_amp", "PyTorch", "Automatic mixed precision: torch.autocast (weights stay fp32, ops cast them)", "2025",
              "https://pytorch.org/docs/stable/amp.html"),
    Reference("pytorch_adam_source", "PyTorch", "torch/optim/adam.py: _multi_tensor_adam (foreach implementation and its temporaries)", "2025",
              "https://github.com/pytorch/pytorch/blob/main/torch/optim/adam.py"),
    Reference("megatron_core_args", "NVIDIA", "Megatron-LM megatron/training/arguments.py: --tp-comm-overlap (store_true: "
              "the overlap of tensor-parallel communication and GEMM kernels is off unless asked for)", "2025",
              "https://github.com/NVIDIA/Megatron-LM/blob/main/megatron/training/arguments.py"),
    Reference("torchtitan_async_tp", "PyTorch (torchtitan)", "torchtitan torchtitan/config/job_config.py: "
              "enable_async_tensor_parallel: bool = False (async tensor parallel, effective only with torch.compile)", "2025",
              "https://github.com/pytorch/torchtitan/blob/main/torchtitan/config/job_config.py"),
    Reference("megatron_distopt", "NVIDIA", "Megatron-Core distributed optimizer (bytes per parameter: bf16 weights, fp32 gradients, fp32 main parameters and Adam states)",
              "2025", "https://github.com/NVIDIA/Megatron-LM/blob/main/docs/source/api-guide/dist_optimizer.md"),
    Reference("unsloth_kernels", "Unsloth", "Unsloth README (hand-written Triton kernels, manual backpropagation for LoRA layers)", "2025",
              "https://github.com/unslothai/unsloth"),
    Reference("torchtune_future", "PyTorch (torchtune)", "The future of torchtune (active development stopped)", "2025-07-15",
              "https://github.com/meta-pytorch/torchtune/issues/2883"),
    Reference("axolotl_readme", "Axolotl", "Axolotl README (fine-tuning on Hugging Face transformers, PEFT and TRL)", "2025",
              "https://github.com/axolotl-ai-cloud/axolotl"),
    Reference("llamafactory_readme", "hiyouga", "LLaMA-Factory README (fine-tuning on Hugging Face transformers, PEFT and TRL)", "2025",
              "https://github.com/hiyouga/LLaMA-Factory"),
    Reference("int8_2022", "Dettmers, Lewis, Belkada and Zettlemoyer", "LLM.int8(): 8-bit Matrix Multiplication for Transformers at Scale",
              "2022", "https://arxiv.org/abs/2208.07339"),
    Reference("adam8bit2022", "Dettmers, Lewis, Shleifer and Zettlemoyer", "8-bit Optimizers via Block-wise Quantization", "2022",
              "https://arxiv.org/abs/2110.02861"),
    Reference("gptq2022", "Frantar, Ashkboos, Hoefler and Alistarh", "GPTQ: Accurate Post-Training Quantization for Generative Pre-trained Transformers",
              "2022", "https://arxiv.org/abs/2210.17323"),
    Reference("ocp_mx2023", "Open Compute Project (AMD, Arm, Intel, Meta, Microsoft, NVIDIA, Qualcomm)",
              "OCP Microscaling Formats (MX) Specification, version 1.0", "2023",
              "https://www.opencompute.org/documents/ocp-microscaling-formats-mx-v1-0-spec-final-pdf"),
    Reference("nvidia_nvfp4", "NVIDIA (Alvarez, Almog, Chung, Layton, Stosic, Krashinsky and Aubrey)",
              "Introducing NVFP4 for Efficient and Accurate Low-Precision Inference (Table 1: 4-bit formats compared; "
              "Figure 6: DeepSeek-R1-0528 in FP8 and NVFP4)", "2025-06-24", "https://developer.nvidia.com/blog/introducing-nvfp4-for-efficient-and-accurate-low-precision-inference/"),
    Reference("gptoss2025", "OpenAI", "gpt-oss-120b & gpt-oss-20b Model Card", "2025", "https://arxiv.org/abs/2508.10925"),
    Reference("awq2023", "Lin, Tang, Tang, Yang, Dang, Gan and Han", "AWQ: Activation-aware Weight Quantization for LLM Compression and Acceleration",
              "2023", "https://arxiv.org/abs/2306.00978"),
    Reference("llamacpp_perplexity", "ggml-org (Gaessler et al.)", "llama.cpp perplexity tool README: LLaMA 3 8B quantization "
              "scoreboard (WikiText-2 perplexity and KL divergence against FP16), LLaMA 3 BF16 vs. FP16 comparison and "
              "Llama 2 70B scoreboard", "2024",
              "https://github.com/ggml-org/llama.cpp/blob/master/tools/perplexity/README.md"),
    Reference("neuralmagic_fp8_405b", "Neural Magic (Red Hat)", "Meta-Llama-3.1-405B-Instruct-FP8-dynamic model card, version 1.1 "
              "(recovery against bf16: 99.0 % Arena-Hard, 100.0 % OpenLLM v1, 99.9 % OpenLLM v2)", "2024-08-22",
              "https://huggingface.co/neuralmagic/Meta-Llama-3.1-405B-Instruct-FP8-dynamic"),
    Reference("nvidia_llama33_70b_fp8", "NVIDIA", "Llama-3.3-70B-Instruct-FP8 model card (TensorRT Model Optimizer)", "2025",
              "https://huggingface.co/nvidia/Llama-3.3-70B-Instruct-FP8"),
    Reference("nvidia_llama33_70b_fp4", "NVIDIA", "Llama-3.3-70B-Instruct-FP4 model card (NVFP4, TensorRT Model Optimizer; "
              "evaluation: MMLU, GSM8K_COT, ARC Challenge, IFEVAL in BF16 and FP4)", "2025",
              "https://huggingface.co/nvidia/Llama-3.3-70B-Instruct-FP4"),
    # queueing: the wait of a request before its first token, and the headroom capacity keeps
    Reference("kingman1961", "Kingman, J. F. C.", "The single server queue in heavy traffic", "1961",
              "https://doi.org/10.1017/S0305004100036094"),
    Reference("sakasegawa1977", "Sakasegawa, H.", "An approximation formula Lq = alpha rho^beta / (1 - rho)", "1977",
              "https://doi.org/10.1007/BF02532775"),
    Reference("kleinrock1975", "Kleinrock, L.", "Queueing Systems, Volume 1: Theory (chapter 5: the M/G/1 queue and the "
              "Pollaczek-Khinchine mean-value formula)", "1975", "https://www.wiley.com/en-us/Queueing+Systems%2C+Volume+1%3A+Theory-p-9780471491101"),
    Reference("sre_book2016", "Beyer, Jones, Petoff and Murphy (Google)", "Site Reliability Engineering: How Google Runs Production "
              "Systems (chapter 18: intent-based capacity planning, N + 2 redundancy; chapter 21: handling overload)", "2016",
              "https://sre.google/sre-book/table-of-contents/"),
    Reference("llamacpp_quantize", "ggml-org", "llama.cpp quantize tool README (bits per weight of the k-quant formats)", "2025",
              "https://github.com/ggml-org/llama.cpp/blob/master/tools/quantize/README.md"),
    Reference("vllm_fp8", "vLLM project", "FP8 W8A8 and quantized KV cache (FP8) documentation", "2025",
              "https://docs.vllm.ai/en/latest/features/quantization/fp8.html"),
    Reference("vllm_engine_args", "vLLM project", "Engine arguments: max_num_batched_tokens and chunked prefill", "2025",
              "https://docs.vllm.ai/en/latest/configuration/engine_args.html"),
    # optimizers
    Reference("adamw2019", "Loshchilov and Hutter", "Decoupled Weight Decay Regularization", "2019", "https://arxiv.org/abs/1711.05101"),
    Reference("adafactor2018", "Shazeer and Stern", "Adafactor: Adaptive Learning Rates with Sublinear Memory Cost", "2018",
              "https://arxiv.org/abs/1804.04235"),
    Reference("lion2023", "Chen, Liang, Huang et al.", "Symbolic Discovery of Optimization Algorithms", "2023", "https://arxiv.org/abs/2302.06675"),
    # models
    Reference("llama2_2023", "Touvron, Martin, Stone et al.", "Llama 2: Open Foundation and Fine-Tuned Chat Models", "2023",
              "https://arxiv.org/abs/2307.09288"),
    Reference("llama3_2024", "Llama Team, Meta AI", "The Llama 3 Herd of Models", "2024", "https://arxiv.org/abs/2407.21783"),
    Reference("williams2009", "Williams, Waterman and Patterson", "Roofline: An Insightful Visual Performance Model for "
              "Multicore Architectures (Communications of the ACM 52(4))", "2009-04", "https://doi.org/10.1145/1498765.1498785"),
    Reference("pythia2023", "Biderman, Schoelkopf, Anthony et al.", "Pythia: A Suite for Analyzing Large Language Models Across "
              "Training and Scaling", "2023-04-03", "https://arxiv.org/abs/2304.01373"),
    Reference("pythia_configs", "EleutherAI", "Pythia: GPT-NeoX training configurations (models/1B/pythia-1b.yml: "
              "\"trained on 64 gpus\", micro-batch 16, activation checkpointing, fp16, ZeRO stage 1)", "2023",
              "https://github.com/EleutherAI/pythia/blob/b14d5af9ae1809046209c079852e8891dca4678f/models/1B/pythia-1b.yml"),
    Reference("tinyllama2024", "Zhang, Zeng, Wang and Lu", "TinyLlama: An Open-Source Small Language Model", "2024-01-04",
              "https://arxiv.org/abs/2401.02385"),
    Reference("tinyllama_readme", "Zhang, Zeng, Wang and Lu (TinyLlama)", "TinyLlama README: Training Details and Blazingly "
              "Fast (24k tokens per second per A100-40G, 56 % MFU without activation checkpointing; A100 GPU hours on 300B "
              "tokens: TinyLlama-1.1B 3456, Pythia-1.0B 4830 from the Pythia paper)", "2023-09-04",
              "https://github.com/jzhang38/TinyLlama/blob/026587c0fbc5cf756eba92e0220566550df66ca7/README.md"),
    Reference("mistral2023", "Jiang, Sablayrolles, Mensch et al.", "Mistral 7B", "2023", "https://arxiv.org/abs/2310.06825"),
    Reference("mixtral2024", "Jiang, Sablayrolles, Roux et al.", "Mixtral of Experts", "2024", "https://arxiv.org/abs/2401.04088"),
    Reference("deepseekv2_2024", "DeepSeek-AI", "DeepSeek-V2: A Strong, Economical, and Efficient Mixture-of-Experts Language Model",
              "2024", "https://arxiv.org/abs/2405.04434"),
    Reference("deepseekv3_2024", "DeepSeek-AI", "DeepSeek-V3 Technical Report", "2024", "https://arxiv.org/abs/2412.19437"),
    Reference("llama4_2025", "Meta AI", "The Llama 4 herd: The beginning of a new era of natively multimodal AI innovation", "2025",
              "https://ai.meta.com/blog/llama-4-multimodal-intelligence/"),
    Reference("mamba2_2024", "Dao, Gu", "Transformers are SSMs: Generalized Models and Efficient Algorithms Through Structured "
              "State Space Duality", "2024", "https://arxiv.org/abs/2405.21060"),
    Reference("gateddeltanet2024", "Yang, Kautz, Hatamizadeh", "Gated Delta Networks: Improving Mamba2 with Delta Rule", "2024",
              "https://arxiv.org/abs/2412.06464"),
    Reference("kimilinear_2025", "Kimi Team, Moonshot AI", "Kimi Linear: An Expressive, Efficient Attention Architecture", "2025",
              "https://arxiv.org/abs/2510.26692"),
    Reference("qwen3next_2025", "Qwen Team, Alibaba", "Qwen3-Next-80B-A3B model card (hybrid Gated DeltaNet and gated attention, "
              "3:1)", "2025-09-10", "https://huggingface.co/Qwen/Qwen3-Next-80B-A3B-Instruct"),
    Reference("nemotronh_2025", "NVIDIA", "Nemotron-H: A Family of Accurate and Efficient Hybrid Mamba-Transformer Models", "2025",
              "https://arxiv.org/abs/2504.03624"),
    Reference("nemotron3_2025", "NVIDIA", "NVIDIA-Nemotron-3-Nano-30B-A3B model card (hybrid Mamba-2, attention and MoE)",
              "2025-12-15", "https://huggingface.co/nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16"),
    Reference("dsa_2025", "DeepSeek-AI", "DeepSeek-V3.2-Exp: Boosting Long-Context Efficiency with DeepSeek Sparse Attention",
              "2025-09-29", "https://github.com/deepseek-ai/DeepSeek-V3.2-Exp/blob/main/DeepSeek_V3_2.pdf"),
    Reference("dsa_code_2025", "DeepSeek-AI", "DeepSeek-V3.2-Exp inference code, inference/model.py (Indexer: FP8 key cache of "
              "index_head_dim with one fp32 scale per 128)", "2025-09-29",
              "https://github.com/deepseek-ai/DeepSeek-V3.2-Exp/blob/main/inference/model.py"),
    Reference("flashmla_2025", "Li, Liu (DeepSeek-AI)", "FlashMLA: Efficient Multi-head Latent Attention Kernels (README: the FP8 "
              "sparse-attention KV cache of DeepSeek-V3.2 is 656 bytes per token and layer)", "2025-09-29",
              "https://github.com/deepseek-ai/FlashMLA"),
    Reference("vllm_hybrid", "vLLM project", "vLLM documentation: hybrid models and the mamba_ssm_cache_dtype engine argument",
              "2025", "https://docs.vllm.ai/en/latest/configuration/engine_args.html"),
    Reference("deepseekv4_2026", "DeepSeek-AI", "DeepSeek-V4: Towards Highly Efficient Million-Token Context Intelligence "
              "(model card: compressed sparse attention, one entry per 4 tokens with a top-k indexer; heavily compressed "
              "attention, one entry per 128 tokens; a 128-token window; at 1M tokens V4-Pro holds 10 % of V3.2's KV cache)",
              "2026-04-24", "https://huggingface.co/deepseek-ai/DeepSeek-V4-Pro"),
    Reference("sglang_qwen3next", "SGLang project", "Qwen3-Next usage: --mamba-ssm-dtype (bfloat16 or float32; default float32) "
              "and --max-mamba-cache-size", "2025-12-17", "https://github.com/sgl-project/sglang/pull/15337"),
    Reference("vllm_ascend_qwen35", "vLLM-Ascend project", "Questions about Mamba page size align with attn size in Qwen3.5 "
              "(Qwen3.5-35B-A3B at TP 8: ssm_block_page_size 262144 bytes per layer and request)", "2026-03-17",
              "https://github.com/vllm-project/vllm-ascend/issues/7393"),
    Reference("gemma4_2026", "Google DeepMind", "Gemma 4 model card", "2026", "https://ai.google.dev/gemma/docs/core/model_card_4"),
    Reference("mimov2_2025", "Xiaomi MiMo Team", "MiMo-V2-Flash model card", "2025", "https://huggingface.co/XiaomiMiMo/MiMo-V2-Flash"),
    Reference("qwen3_2025", "Qwen Team (Yang, Li, Yang et al.)", "Qwen3 Technical Report", "2025", "https://arxiv.org/abs/2505.09388"),
    Reference("gemma3_2025", "Gemma Team, Google DeepMind", "Gemma 3 Technical Report", "2025", "https://arxiv.org/abs/2503.19786"),
    Reference("gemma2_2024", "Gemma Team, Google DeepMind", "Gemma 2: Improving Open Language Models at a Practical Size", "2024",
              "https://arxiv.org/abs/2408.00118"),
    Reference("phi3_2024", "Abdin, Jacobs, Awan et al.", "Phi-3 Technical Report", "2024", "https://arxiv.org/abs/2404.14219"),
    Reference("opt2022", "Zhang, Roller, Goyal et al.", "OPT: Open Pre-trained Transformer Language Models", "2022",
              "https://arxiv.org/abs/2205.01068"),
    Reference("qwen2_5_2024", "Qwen Team", "Qwen2.5 Technical Report", "2024", "https://arxiv.org/abs/2412.15115"),
    Reference("mixtral_8x22b", "Mistral AI", "Cheaper, Better, Faster, Stronger (Mixtral 8x22B announcement)", "2024",
              "https://mistral.ai/news/mixtral-8x22b"),
    # frameworks and documentation
    Reference("hf_anatomy", "Hugging Face", "Model training anatomy (Transformers documentation)", "2023",
              "https://huggingface.co/docs/transformers/model_memory_anatomy"),
    Reference("hf_one_gpu", "Hugging Face", "Efficient training on a single GPU: anatomy of model memory (18 bytes per parameter)", "2023",
              "https://huggingface.co/docs/transformers/perf_train_gpu_one"),
    Reference("hf_llama", "Hugging Face", "Transformers LlamaForCausalLM (logits upcast to float32 for the loss)", "2024",
              "https://github.com/huggingface/transformers/blob/main/src/transformers/models/llama/modeling_llama.py"),
    Reference("hf_ultrascale", "Hugging Face (Tazi, Mom, Zhao et al.)", "The Ultra-Scale Playbook: Training LLMs on GPU Clusters", "2025",
              "https://huggingface.co/spaces/nanotron/ultrascale-playbook"),
    Reference("peft_lora", "Hugging Face", "PEFT LoRA configuration and default target modules", "2024",
              "https://huggingface.co/docs/peft/package_reference/lora"),
    Reference("peft_adapter_dtype", "Hugging Face", "PEFT BaseTuner._cast_adapter_dtype (get_peft_model autocast_adapter_dtype=True "
              "upcasts bf16 and fp16 adapters to fp32) and LoRA Linear.forward (the input cast to the adapter's dtype before A)", "2026",
              "https://github.com/huggingface/peft/blob/main/src/peft/tuners/tuners_utils.py"),
    Reference("deepspeed_memory", "DeepSpeed", "Memory requirements (ZeRO-3 model-states estimator)", "2023",
              "https://deepspeed.readthedocs.io/en/latest/memory.html"),
    Reference("pytorch_fsdp", "PyTorch", "FullyShardedDataParallel (forward and backward prefetch)", "2024",
              "https://pytorch.org/docs/stable/fsdp.html"),
    Reference("pytorch_ddp", "PyTorch", "DistributedDataParallel", "2024", "https://pytorch.org/docs/stable/generated/torch.nn.parallel.DistributedDataParallel.html"),
    Reference("pytorch_memory", "PyTorch", "CUDA semantics: memory management (the caching allocator)", "2024",
              "https://pytorch.org/docs/stable/notes/cuda.html#memory-management"),
    Reference("pytorch_adamw", "PyTorch", "torch.optim.AdamW (foreach implementation)", "2024",
              "https://pytorch.org/docs/stable/generated/torch.optim.AdamW.html"),
    Reference("pytorch_sgd", "PyTorch", "torch.optim.SGD", "2024", "https://pytorch.org/docs/stable/generated/torch.optim.SGD.html"),
    Reference("pytorch_zero_grad", "PyTorch", "torch.optim.Optimizer.zero_grad (set_to_none=True by default since PyTorch 2.0: the "
              "gradients are freed, not zeroed)", "2024", "https://pytorch.org/docs/stable/generated/torch.optim.Optimizer.zero_grad.html"),
    Reference("torchtune", "PyTorch", "torchtune recipes (bf16 full fine-tuning)", "2024", "https://github.com/pytorch/torchtune"),
    # published measurements in the calibration set (core/data/measurements.csv)
    Reference("torchtune_readme", "PyTorch (torchtune)", "torchtune README: Memory and training speed (Llama 3.1, batch 2, packed to 2,048 tokens, torch.compile)",
              "2024-09-24", "https://github.com/pytorch/torchtune/blob/30b8519e86d2094879576e16ab1f8d21a6f6f9f7/README.md"),
    Reference("torchtune_readme_flags", "PyTorch (torchtune; Felipe Mello)",
              "torchtune README: Optimization flags (Llama 3.2 3B, full_finetune_single_device, batch 2, sequence 4,096, bf16, one A100)",
              "2024-11-18", "https://github.com/pytorch/torchtune/blob/1814feb17a9038e1a8053ce93111bd26774a8db6/README.md"),
    Reference("torchtune_packing", "PyTorch (torchtune)", "Sample packing (packed=True: document masks and relative positions "
              "through FlexAttention)", "2025", "https://pytorch.org/torchtune/main/basics/packing.html"),
    Reference("hf_packing_fa2", "Achintya Kundu, Rhui Dih Lee, Laura Wynter, Raghu Kiran Ganti, Mayank Mishra (IBM Research)",
              "Enhancing Training Efficiency Using Packing with Flash Attention (padding-free packing in Hugging Face "
              "transformers 4.44)", "2024", "https://arxiv.org/abs/2407.09105"),
    Reference("alpaca_split_card", "disham993 (Hugging Face)", "alpaca-train-validation-test-split dataset card: the 52,002 "
              "examples of tatsu-lab/alpaca in 47,764,738 bytes, each with its fields (instruction, input, output) and its "
              "formatted text", "2024", "https://huggingface.co/datasets/disham993/alpaca-train-validation-test-split"),
    Reference("torchtune_memory", "PyTorch (torchtune)", "Memory Optimization Overview (optimizer in backward, paged optimizers, CPU offload)",
              "2024", "https://pytorch.org/torchtune/main/tutorials/memory_optimizations.html"),
    Reference("torchtitan_perf", "PyTorch (torchtitan)", "torchtitan performance numbers: Llama 2 and Llama 3 with FSDP2 on 64 A100 80GB",
              "2024-04-24", "https://github.com/pytorch/torchtitan/blob/041336434916bdc0f88c1f89fda176fd3c2092e4/docs/performance.md"),
    Reference("llmfoundry_bench", "MosaicML (Databricks)", "LLM Foundry: MPT Training Benchmarks (H100 80GB BF16 table)",
              "2023-10-19", "https://github.com/mosaicml/llm-foundry/blob/b2a43a1477a45f40f4086a1c72f851b0ab42d0ac/scripts/train/benchmarking/README.md"),
    Reference("llmfoundry_bench_a100", "MosaicML (Databricks)", "LLM Foundry: MPT Training Benchmarks (the H100 80GB BF16, A100 "
              "80GB and A100 40GB tables with MPT 125M to 3B; 1,600 Gbit/s RoCE between the 8-GPU nodes)", "2023-10-19",
              "https://github.com/mosaicml/llm-foundry/blob/061f2c7ce64e655100286584a7629e2a09f827ba/scripts/train/benchmarking/README.md"),
    Reference("llmfoundry_yamls", "MosaicML (Databricks)", "LLM Foundry pre-training configurations scripts/train/yamls/pretrain/"
              "mpt-125m.yaml, mpt-350m.yaml, mpt-760m.yaml, mpt-1b.yaml, mpt-3b.yaml (the benchmarks' models)", "2023",
              "https://github.com/mosaicml/llm-foundry/tree/34c28fc9199278b10193e69fb52979043b7dc1bd/scripts/train/yamls/pretrain"),
    Reference("llamacpp_4766", "Georgi Gerganov for ggml-org", "llama.cpp pull request 4766: ggml-backend integration (llama-bench "
              "of CodeLlama 7B F16, Q8_0 and Q4_0 on one GeForce RTX 4090, comment of 2024-01-10)",
              "2024-01-10", "https://github.com/ggml-org/llama.cpp/pull/4766"),
    Reference("llamacpp_19053", "Oliver Simons (NVIDIA) for ggml-org", "llama.cpp pull request 19053: CUDA loop unrolling for Blackwell in mul_mat_q_stream_k_fixup (llama-bench tables)",
              "2026-01-23", "https://github.com/ggml-org/llama.cpp/pull/19053"),
    Reference("gpu_tco_h200_2026", "gpu-tco (own measurement)", "gpu-tco's own measurement, tools/measure/train_measure.py, NVIDIA "
              "H200, 2026-11-26: PyTorch 2.11.0+cu130, transformers 5.17.0, PEFT 0.21.0, bitsandbytes 0.50.2, liger-kernel "
              "0.8.5; random weights from config.json, SDPA attention, eager, 2 warm-up and 4 timed steps; one process per row",
              "2026-11-26", "tools/measure/results/h200-2026-11-26/train_rows.jsonl"),
    Reference("gpu_tco_h200_lora_2026", "gpu-tco (own measurement)", "gpu-tco's own measurement, tools/measure/train_measure.py, "
              "NVIDIA H200, 2026-11-27: Mistral 7B at 4 x 4,096 and 1 x 4,096 tokens, full fine-tuning against PEFT LoRA (rank 16 "
              "on q, k, v, o, with and without lora_dropout 0.1 and reentrant checkpointing) and QLoRA, as IBM's A100 benchmark "
              "ran them, and LoRA with fp32 against bf16 adapters (rank 16 on q, k, v, o; rank 64 on every linear layer); PyTorch 2.11.0+cu130, transformers 5.17.0, PEFT 0.21.0, bitsandbytes 0.50.2; random weights, SDPA, eager, "
              "2 warm-up and 4 timed steps; one process per row", "2026-11-27", "tools/measure/results/h200-2026-11-27b/README.md"),
    Reference("gpu_tco_h200_adapter_pairs", "gpu-tco (own measurement)", "gpu-tco's own measurement, tools/measure/train_measure.py, "
              "NVIDIA H200, 2026-11-27 (third to fifth sets): LoRA through transformers 5.17.0 + PEFT 0.21.0 with fp32 against "
              "bf16 adapters, Llama 3.1 8B rank 16 on every linear layer at 1 and 4 x 2,048 tokens with and without "
              "recomputation beside full fine-tuning, Mistral 7B rank 64 without recomputation, and Llama 3.1 8B with six "
              "sets of adapted layers (tools/measure/results/h200-2026-11-27d/ and -27e/); PyTorch 2.11.0+cu130; random "
              "weights, SDPA, eager, torch AdamW (foreach); the third set's figures computed before the runs", "2026-11-27",
              "tools/measure/results/h200-2026-11-27c/README.md"),
    Reference("gpu_tco_h200_small", "gpu-tco (own measurement)", "gpu-tco's own measurement, tools/measure/train_measure.py, NVIDIA "
              "H200, 2026-11-26 (second set): full fine-tuning of eight models of 135 million to 1.2 billion parameters without "
              "recomputation, 2,048 tokens per sequence; PyTorch 2.11.0+cu130, transformers 5.17.0; random weights from "
              "config.json, SDPA attention, eager, bf16 weights, torch AdamW (foreach); 3 warm-up and 8 timed steps",
              "2026-11-26", "tools/measure/results/h200-2026-11-26b/small_train_rows.jsonl"),
    Reference("gpu_tco_h200_serve", "gpu-tco (own measurement)", "gpu-tco's own measurement, tools/measure/serve_measure.py, NVIDIA "
              "H200, 2026-11-26: Llama 3.1 8B (random weights, bf16) through eager Hugging Face generate, PyTorch 2.11.0+cu130, "
              "transformers 5.17.0, SDPA: one forward pass over 512 to 32,768 prompt tokens, decode at 1, 8 and 32 sequences",
              "2026-11-26", "tools/measure/results/h200-2026-11-26/serve_rows.jsonl"),
    Reference("gpu_tco_h200_phases", "gpu-tco (own measurement)", "gpu-tco's own measurement, tools/measure/train_measure.py "
              "--phases, NVIDIA H200, 2026-11-26: Llama 3.1 8B and Mistral 7B, forward with the loss, backward and the optimizer "
              "step timed apart (bitsandbytes 0.50.2 AdamW8bit, torch AdamW foreach and fused, PEFT LoRA, Liger fused loss)",
              "2026-11-26", "tools/measure/results/h200-2026-11-26b/phase_train_rows.jsonl"),
    Reference("gpu_tco_h100_torchtune", "gpu-tco (own measurement)", "gpu-tco's own measurement, tools/measure/torchtune_measure.py, "
              "NVIDIA H100 SXM 80GB, 2026-11-26 and 2026-11-27: torchtune 0.6.1's model builders, chunked loss, compile, "
              "activation checkpointing and optimizer-in-backward as its single-device recipes set them up; PyTorch "
              "2.11.0+cu130, torchao 0.13.0, bitsandbytes 0.50.2; random weights and random tokens (no packing), 3 warm-up and "
              "5 timed steps (the second day's runs: tools/measure/results/h100-2026-11-27/)",
              "2026-11-26", "tools/measure/results/h100-2026-11-26/README.md"),
    Reference("gpu_tco_h200_torchtune", "gpu-tco (own measurement)", "gpu-tco's own measurement, tools/measure/torchtune_measure.py, "
              "NVIDIA H200 141GB, 2026-11-27: torchtune 0.6.1 as on the H100, and each of Llama 3.1 8B and Llama 3.2 3B in full "
              "fine-tuning and LoRA with and without activation checkpointing on the same GPU; PyTorch 2.11.0+cu130, torchao "
              "0.13.0, bitsandbytes 0.50.2; random weights and random tokens (no packing), 3 warm-up and 5 timed steps",
              "2026-11-27", "tools/measure/results/h200-2026-11-27/README.md"),
    Reference("gpu_tco_h100_unsloth", "gpu-tco (own measurement)", "gpu-tco's own measurement, tools/measure/unsloth_measure.py, "
              "NVIDIA H100 SXM 80GB, 2026-11-26: Unsloth 2026.10.9 as its notebooks set it up (FastLanguageModel, get_peft_model, "
              "Unsloth's gradient checkpointing, AdamW8bit); PyTorch 2.11.0+cu130, transformers 5.17.0, PEFT 0.21.0, "
              "bitsandbytes 0.50.2, SDPA attention; random weights and random tokens (no packing), 3 warm-up and 5 timed steps",
              "2026-11-26", "tools/measure/results/h100-2026-11-26c/README.md"),
    Reference("gpu_tco_deepspeed", "gpu-tco (own measurement)", "gpu-tco's own measurement, tools/measure/deepspeed_measure.py, "
              "NVIDIA H100 SXM 80GB (ZeRO stages 0 to 3) and H200 (ZeRO-Offload), 2026-11-26: DeepSpeed 0.19.8 with bf16 enabled "
              "on a Hugging Face Llama model (transformers 5.17.0, SDPA attention, eager), DeepSpeed's FusedAdam, torch AdamW or "
              "DeepSpeed's CPU Adam; PyTorch 2.11.0+cu130; random weights and random tokens, 3 warm-up and 5 timed steps (2 and "
              "4 offloaded)",
              "2026-11-26", "tools/measure/results/deepspeed-2026-11-26/README.md"),
    Reference("gpu_tco_deepspeed_zero3", "gpu-tco (own measurement)", "gpu-tco's own measurement, "
              "tools/measure/deepspeed_measure.py, NVIDIA H100 SXM 80GB, 2026-11-26: DeepSpeed 0.19.8 ZeRO-3 with bf16 on "
              "Llama 3.2 1B (Hugging Face model, SDPA, eager), 4 x 2,048 tokens, with and without activation checkpointing, "
              "torch AdamW; beside the ZeRO-2 runs of the same settings (gpu_tco_deepspeed)", "2026-11-26",
              "tools/measure/results/deepspeed-2026-11-26/README.md"),
    Reference("deepspeed_zero_step", "Microsoft DeepSpeed", "deepspeed/runtime/zero/stage_1_and_2.py, DeepSpeedZeroOptimizer.step "
              "(v0.19.8): the partition's 16-bit gradients flattened (flat_grad_partition) and converted to fp32 "
              "(single_grad_partition) before the optimizer runs on the fp32 partition", "2026",
              "https://github.com/deepspeedai/DeepSpeed/blob/v0.19.8/deepspeed/runtime/zero/stage_1_and_2.py"),
    Reference("hf_deepspeed", "Hugging Face", "Transformers documentation, DeepSpeed (the Trainer's integration: ZeRO stages from a "
              "ds_config.json, the Hugging Face model as the module DeepSpeed wraps)", "2025",
              "https://huggingface.co/docs/transformers/deepspeed"),
    Reference("mlcperf_2023", "MLC AI", "MLC LLM Performance Benchmarking (llm-perf-bench), RTX 4090 results for MLC LLM and ExLlama",
              "2023-08-05", "https://github.com/mlc-ai/llm-perf-bench/pull/1"),
    Reference("bnb_paged", "Hugging Face (bitsandbytes)", "bitsandbytes: 8-bit optimizers and paged optimizers",
              "2024", "https://huggingface.co/docs/bitsandbytes/main/en/explanations/optimizers"),
    Reference("verda_blackwell_ultra", "Verda (formerly DataCrunch)", "NVIDIA GB300 NVL72: GPU Architecture & Performance (per-GPU specifications without sparsity)",
              "2026", "https://verda.com/blog/gb300-nvl72-architecture"),
    Reference("lockwood_b300", "Glenn K. Lockwood", "B300 (Blackwell Ultra) notes: HGX B300 performance table", "2025",
              "https://glennklockwood.com/garden/processors/B300"),
    Reference("runlocalai_2026", "RunLocalAI Pulse", "NVIDIA B200 production ramps: used H100 SXM softens to ~$22-25k (H200 SXM $28-31k, B200 $40-43k retail)",
              "2026", "https://runlocalai.co/pulse/nvidia-b200-production-ramp-pricing"),
    Reference("visualfoodie_2026", "Visual Foodie", "RTX 5090 vs RTX 4090: a price comparison (current and used prices, Q2 2026)",
              "2026", "https://visualfoodie.com/rtx-5090-vs-rtx-4090-a-price-comparison"),
    Reference("unsloth_llama31", "Unsloth", "Finetune Llama 3.1 with Unsloth (maximum context lengths, Hugging Face + FlashAttention 2)",
              "2024", "https://unsloth.ai/blog/llama3-1"),
    Reference("llm_analysis", "Cheng Li", "llm-analysis: latency and memory analysis of transformer models for training and inference",
              "2023", "https://github.com/cli99/llm-analysis"),
    Reference("ml_engineering", "Stas Bekman", "Machine Learning Engineering Open Book: accelerators", "2025",
              "https://github.com/stas00/ml-engineering/blob/master/compute/accelerator/README.md"),
    # hardware
    Reference("nvidia_h100", "NVIDIA", "NVIDIA H100 Tensor Core GPU Architecture (whitepaper v1.04)", "2023",
              "https://resources.nvidia.com/en-us-tensor-core/gtc22-whitepaper-hopper"),
    Reference("nvidia_h200", "NVIDIA", "NVIDIA H200 Tensor Core GPU", "2024", "https://www.nvidia.com/en-us/data-center/h200/"),
    Reference("nvidia_a100", "NVIDIA", "NVIDIA A100 Tensor Core GPU datasheet", "2021",
              "https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf"),
    Reference("nvidia_ampere_ga102", "NVIDIA", "NVIDIA Ampere GA102 GPU Architecture (whitepaper)", "2021",
              "https://www.nvidia.com/content/PDF/nvidia-ampere-ga-102-gpu-architecture-whitepaper-v2.pdf"),
    Reference("nvidia_ada", "NVIDIA", "NVIDIA Ada GPU Architecture (whitepaper v2.1)", "2023",
              "https://images.nvidia.com/aem-dam/Solutions/geforce/ada/nvidia-ada-gpu-architecture.pdf"),
    Reference("nvidia_rtx_blackwell", "NVIDIA", "NVIDIA RTX Blackwell GPU Architecture (whitepaper)", "2025",
              "https://images.nvidia.com/aem-dam/Solutions/geforce/blackwell/nvidia-rtx-blackwell-gpu-architecture.pdf"),
    Reference("nvidia_rtx_pro_6000", "NVIDIA", "NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "2025",
              "https://www.nvidia.com/en-us/products/workstations/professional-desktop-gpus/rtx-pro-6000/"),
    Reference("nvidia_l40s", "NVIDIA", "NVIDIA L40S datasheet", "2023", "https://www.nvidia.com/en-us/data-center/l40s/"),
    Reference("nvidia_l40", "NVIDIA", "NVIDIA L40 GPU", "2023", "https://www.nvidia.com/en-us/data-center/l40/"),
    Reference("nvidia_l4", "NVIDIA", "NVIDIA L4 Tensor Core GPU", "2023", "https://www.nvidia.com/en-us/data-center/l4/"),
    Reference("nvidia_a10", "NVIDIA", "NVIDIA A10 Tensor Core GPU", "2021", "https://www.nvidia.com/en-us/data-center/products/a10-gpu/"),
    Reference("nvidia_a40", "NVIDIA", "NVIDIA A40 GPU", "2021", "https://www.nvidia.com/en-us/data-center/a40/"),
    Reference("nvidia_rtx6000ada", "NVIDIA", "NVIDIA RTX 6000 Ada Generation", "2023",
              "https://www.nvidia.com/en-us/design-visualization/rtx-6000/"),
    Reference("nvidia_dgx_h100", "NVIDIA", "NVIDIA DGX H100 datasheet (10.2 kW system power)", "2023",
              "https://www.nvidia.com/en-us/data-center/dgx-h100/"),
    Reference("nccl_tests", "NVIDIA", "nccl-tests: PERFORMANCE.md (algorithm and bus bandwidth of NCCL collectives)", "2024",
              "https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md"),
    Reference("nccl_h100_busbw", "Jeaugey (NVIDIA)", "NCCL on H100 (nccl-tests discussion): 450 GB/s NVLink line rate, about 370 GB/s effective "
              "with the ring protocol on 8x H100", "2024-05-06", "https://github.com/NVIDIA/nccl-tests/issues/212"),
    Reference("nccl_ndr_busbw", "Addison (NVIDIA)", "NCCL across nodes (nccl-tests discussion): 46-48 GB/s per 400 Gbit/s NDR NIC across nodes",
              "2025-03-03", "https://github.com/NVIDIA/nccl-tests/issues/290"),
    Reference("pcie4_spec", "PCI-SIG", "PCI Express Base Specification Revision 4.0 (16 GT/s per lane)", "2017",
              "https://pcisig.com/specifications"),
    Reference("aws_efa", "Amazon Web Services", "Maximize network bandwidth on accelerated computing instances with EFA (P5: up to 3,200 Gbps; G6e: up to 400 Gbps)", "2026", "https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/p5-efa.html"),
    Reference("aws_p6", "Amazon Web Services", "Amazon EC2 P6 instances (P6-B200: 8 B200 GPUs, 3.2 Tbps EFA)", "2025", "https://aws.amazon.com/ec2/instance-types/p6/"),
    Reference("aws_p4", "Amazon Web Services", "Amazon EC2 P4 instances (p4d.24xlarge and p4de.24xlarge: 8 A100, 1,152 GiB of memory)",
              "2026", "https://aws.amazon.com/ec2/instance-types/p4/"),
    Reference("aws_p5", "Amazon Web Services", "Amazon EC2 P5 instances (p5.48xlarge: 8 H100 80GB, 2 TiB of memory)", "2026",
              "https://aws.amazon.com/ec2/instance-types/p5/"),
    Reference("aws_p4d", "Amazon Web Services", "Amazon EC2 P4d instances deep dive (8 A100, 400 Gbps EFA)", "2020-11-03", "https://aws.amazon.com/blogs/compute/amazon-ec2-p4d-instances-deep-dive/"),
    Reference("deploybase_l40s_aws", "DeployBase", "L40S on AWS: g6e instance architecture", "2026-03", "https://deploybase.ai/articles/l40s-aws"),
    Reference("gcp_gpu_network", "Google Cloud", "Networking and GPU machines (A3 Ultra 3,200 Gbps RoCE; A3 High 1,000 Gbps; A2 100 Gbps)", "2026", "https://cloud.google.com/compute/docs/gpus/gpu-network-bandwidth"),
    Reference("azure_nd_h100_v5", "Microsoft", "ND H100 v5 series (a 400 Gb/s InfiniBand NDR connection per GPU, 3.2 Tbps per VM)", "2024-08-01", "https://github.com/MicrosoftDocs/azure-docs/blob/main/articles/virtual-machines/sizes/gpu-accelerated/includes/ndh100v5-series-summary.md"),
    Reference("azure_nd_a100_v4", "Microsoft", "ND A100 v4 series (200 Gb/s HDR InfiniBand per GPU)", "2024-07-31", "https://github.com/MicrosoftDocs/azure-docs/blob/main/articles/virtual-machines/sizes/gpu-accelerated/includes/ndasra100v4-series-summary.md"),
    Reference("azure_nc_h100_v5", "Microsoft", "NCads H100 v5 series specifications (40,000-80,000 Mbps network, no InfiniBand)", "2024-07-31", "https://github.com/MicrosoftDocs/azure-docs/blob/main/articles/virtual-machines/sizes/gpu-accelerated/includes/ncadsh100v5-series-specs.md"),
    Reference("azure_nc_a100_v4", "Microsoft", "NC A100 v4 series specifications (20,000-80,000 Mbps network, no InfiniBand)", "2024-07-31", "https://github.com/MicrosoftDocs/azure-docs/blob/main/articles/virtual-machines/sizes/gpu-accelerated/includes/nca100v4-series-specs.md"),
    Reference("lambda_instances", "Lambda", "Pricing: on-demand instances (1x-8x) and 1-Click Clusters (16 to 2,000+ GPUs on InfiniBand)", "2026", "https://lambda.ai/pricing"),
    Reference("runpod_networking", "RunPod", "Global networking (100 Mbps between pods)", "2026", "https://docs.runpod.io/pods/networking"),
    Reference("vast_faq", "Vast.ai", "Vast.ai FAQ (instances run on separate host machines)", "2026", "https://vast.ai/faq/"),
    Reference("coreweave_network", "CoreWeave", "HPC Interconnect (non-blocking, rail-optimised InfiniBand on HGX nodes)", "2026", "https://docs.coreweave.com/docs/platform/networking/hpc-interconnect"),
    Reference("nebius_network", "SiliconANGLE", "Nebius' GTC session highlights best practices for building an AI cloud platform (400 Gbit/s InfiniBand)", "2025-03-27", "https://siliconangle.com/2025/03/27/nebius-gtc-session-highlights-best-practices-building-ai-cloud-platform"),
    Reference("crusoe_network", "Crusoe", "Managing InfiniBand Networking (h100-80gb-sxm-ib.8x: 8 HCAs, 3,200 Gbps)", "2025", "https://docs.crusoecloud.com/networking/infiniband/managing-infiniband-networks/index.html"),
    Reference("together_infiniband", "SkyPilot", "Using InfiniBand in Together AI", "2025", "https://docs.skypilot.co/en/latest/examples/performance/together_infiniband.html"),
    Reference("oci_bm_gpu_h100", "Oracle", "Scaling AI: OCI and NVIDIA breakthroughs in MLPerf v4.1 (BM.GPU.H100.8 on RoCE v2, 3,072 GPUs)", "2024", "https://blogs.oracle.com/cloud-infrastructure/scaling-ai-oci-nvidia-breakthroughs-mlperf-v41"),
    Reference("verda_instances", "Verda (ex-DataCrunch)", "GPU instances of 1-8 GPUs", "2026", "https://verda.com/"),
    Reference("hyperstack_instances", "Hyperstack", "GPU virtual machines (1-8 GPUs) and pricing", "2026", "https://www.hyperstack.cloud/gpu-pricing"),
    Reference("ornn_b300_2026", "Ornn AI", "NVIDIA B200 vs B300: why use one instead of the other? (B300 module about 53,000 USD; GB300 NVL72 rack 3.7-5.0M USD)", "2026", "https://www.ornnai.com/research/nvidia-b200-vs-b300-why-use-one-instead-of-the-other"),
    Reference("runlocalai_l4", "RunLocalAI", "NVIDIA L4 hardware page (2,500 USD retail, 1,800-2,200 used)", "2026", "https://www.runlocalai.co/hardware/nvidia-l4"),
    Reference("chipversus_l40", "ChipVERSUS", "NVIDIA L40: average price 8,174 USD", "2026", "https://chipversus.com/hardware/gpu/l40"),
    Reference("hsbc_mi355x_2025", "MoneyCheck (reporting an HSBC note by Frank Lee)", "AMD stock: why this analyst still loves AMD despite price cut (MI355 average selling price 23,000 USD)", "2025", "https://moneycheck.com/amd-stock-why-this-analyst-still-loves-amd-despite-price-cut"),
    Reference("newgearhub_rtxpro6000", "NewGearHub", "Nvidia GTC 2026: what Blackwell GPUs mean for pro workstations (RTX PRO 6000: MSRP 8,565 USD, retail 8,000-9,200)", "2026-04-06", "https://www.newgearhub.com/review/nvidia-gtc-2026-blackwell-gpus-pro-workstations"),
    Reference("nvidia_dgx_b200", "NVIDIA", "NVIDIA DGX B200", "2024", "https://www.nvidia.com/en-us/data-center/dgx-b200/"),
    Reference("discounted_payback", "Investopedia (Jason Fernando)", "Discounted Payback Period: What It Is, and How to Calculate "
              "It (each period's cash flow at its present value; the period at which their sum reaches the investment)", "2024",
              "https://www.investopedia.com/terms/d/discounted-payback-period.asp"),
    Reference("gpudirect_rdma", "NVIDIA", "GPUDirect RDMA User Manual: System Requirements and Recommendations (GPUDirect RDMA "
              "is supported on Tesla and Quadro GPUs)", "2018",
              "https://docs.nvidia.com/networking/display/GPUDirectRDMAv18/System+Requirements+and+Recommendations"),
    Reference("vultr_hgx_b200", "Vultr", "NVIDIA HGX B200 Hardware Overview (HGX B200 servers provide 8 GPUs per node)", "2026-03-11",
              "https://docs.vultr.com/inference-cookbook/cuda/getting-started/hardware-overview"),
    Reference("serverparts_blackwell", "server-parts.eu", "NVIDIA B200, HGX B200, DGX B200 & GB200 Comparison: What Is the "
              "Difference? (HGX B200: 8-GPU OEM platform)", "2026",
              "https://www.server-parts.eu/post/nvidia-b200-gb200-blackwell-gpu-server-comparison"),
    Reference("nvidia_dgx_b200_guide", "NVIDIA", "NVIDIA DGX B200 User Guide: Introduction to NVIDIA DGX B200 Systems, Power Specifications (14.3 kW max.)",
              "2025", "https://docs.nvidia.com/dgx/dgxb200-user-guide/introduction-to-dgxb200.html"),
    Reference("nvidia_dgx_a100", "NVIDIA", "NVIDIA DGX A100 User Guide: Introduction to the NVIDIA DGX A100 System, Power Specifications (6.5 kW max.)",
              "2020", "https://docs.nvidia.com/dgx/dgxa100-user-guide/introduction-to-dgxa100.html"),
    Reference("nvidia_gb200", "NVIDIA", "NVIDIA GB200 NVL72", "2024", "https://www.nvidia.com/en-us/data-center/gb200-nvl72/"),
    Reference("amd_mi300x", "AMD", "AMD Instinct MI300X accelerator", "2023",
              "https://www.amd.com/en/products/accelerators/instinct/mi300/mi300x.html"),
    Reference("amd_mi355x", "AMD", "AMD Instinct MI355X GPU", "2025",
              "https://www.amd.com/en/products/accelerators/instinct/mi350/mi355x.html"),
    Reference("amd_mi325x", "AMD", "AMD Instinct MI325X accelerator", "2024",
              "https://www.amd.com/en/products/accelerators/instinct/mi300/mi325x.html"),
    Reference("epoch_hardware", "Epoch AI", "Data on Machine Learning Hardware (prices and specifications)", "2025",
              "https://epoch.ai/data/machine-learning-hardware"),
    # costs
    Reference("cottier2024", "Cottier, Rahman, Fattorini, Maslej and Owen", "The rising costs of training frontier AI models", "2024",
              "https://arxiv.org/abs/2405.21015"),
    Reference("epoch_costs_code", "Epoch AI", "training-cost-trends: cost estimation code and hardware price data", "2024",
              "https://github.com/epoch-research/training-cost-trends"),
    Reference("cbre2024", "CBRE", "North America Data Center Trends H2 2024", "2025",
              "https://www.cbre.com/insights/reports/north-america-data-center-trends-h2-2024"),
    Reference("uptime2025", "Uptime Institute", "Global Data Center Survey 2025 (average PUE)", "2025",
              "https://uptimeinstitute.com/resources/research-and-reports/uptime-institute-global-data-center-survey-results-2025"),
    Reference("eia_prices", "U.S. Energy Information Administration", "Electric Power Monthly, Table 5.6.A: average price of electricity by sector",
              "2025", "https://www.eia.gov/electricity/monthly/epm_table_grapher.php?t=epmt_5_6_a"),
    Reference("irs_depreciation", "U.S. Internal Revenue Service", "Publication 946: How To Depreciate Property (recovery periods)",
              "2024", "https://www.irs.gov/publications/p946"),
    Reference("aws_per_second", "Amazon Web Services", "Amazon EC2 per-second billing", "2017",
              "https://aws.amazon.com/about-aws/whats-new/2017/10/announcing-amazon-ec2-per-second-billing/"),
    Reference("aws_pricing", "Amazon Web Services", "Amazon EC2 On-Demand pricing (instances and data transfer)", "2026",
              "https://aws.amazon.com/ec2/pricing/on-demand/"),
    Reference("aigateway_llama", "aigateway.sh", "Model page meta/llama-3.1-70b-instruct (USD 0.29 input / 0.60 output per million tokens)",
              "2026", "https://aigateway.sh/"),
    # the articles gpu-tco grew from (reproduced under their own assumptions in the tests)
    Reference("aimanual_4090_h100", "AiManual",
              "Децентрализованные 4090 vs AWS H100: калькулятор для тонкой настройки Llama 3 70B "
              "(Decentralised RTX 4090s versus AWS H100: a cost calculator for fine-tuning Llama 3 70B)", "2025-12-31",
              "https://www.ai-manual.ru/article/detsentralizovannyie-4090-vs-aws-h100-kalkulyator-dlya-tonkoj-nastrojki-llama-3-70b"),
    Reference("aimanual_cheap_gpus", "AiManual",
              "Дешёвые GPU для тонкой настройки 120B моделей: тактика выживания (Cheap GPUs for fine-tuning 120B models: survival tactics)",
              "2026", "https://www.ai-manual.ru/article/deshyovyie-gpu-dlya-tonkoj-nastrojki-120b-modelej-taktika-vyizhivaniya-kogda-schyot-idyot-na-tyisyachi"),
    Reference("csdn_a100_4090", "CSDN blog (qq_42700796)", "浅淡A100-4090-性价比 (On the price-performance of the A100 and the RTX 4090)",
              "2024-01-10", "https://blog.csdn.net/qq_42700796/article/details/135483959"),
    Reference("kaitchup_benchmarking", "Benjamin Marie, The Kaitchup", "GPU Benchmarking: What Is the Best GPU for LoRA, QLoRA, and Inference?",
              "2024", "https://kaitchup.substack.com/p/gpu-benchmarking-what-is-the-best"),
    Reference("apiyi_gpu_selection", "APIYI documentation", "GPU选型 (Choosing GPUs for training and inference: performance and cost comparison)",
              "2025", "https://docs.apiyi.com/wiki/infrastructure/gpu-selection"),
    # cloud price pages (the offers catalog; each row also carries its as-of date)
    Reference("aws_savings", "Amazon Web Services", "Compute Savings Plans and Reserved Instances pricing", "2026",
              "https://aws.amazon.com/savingsplans/compute-pricing/"),
    Reference("aws_spot", "Amazon Web Services", "Amazon EC2 Spot Instances pricing", "2026", "https://aws.amazon.com/ec2/spot/pricing/"),
    Reference("gcp_gpus", "Google Cloud", "GPU pricing (Compute Engine)", "2026", "https://cloud.google.com/compute/gpus-pricing"),
    Reference("gcp_cud", "Google Cloud", "Committed use discounts", "2026",
              "https://cloud.google.com/compute/docs/instances/committed-use-discounts-overview"),
    Reference("azure_vms", "Microsoft Azure", "Linux Virtual Machines pricing", "2026",
              "https://azure.microsoft.com/en-us/pricing/details/virtual-machines/linux/"),
    Reference("lambda_pricing", "Lambda", "GPU cloud pricing", "2026", "https://lambda.ai/pricing"),
    Reference("runpod_pricing", "RunPod", "GPU pricing (Community and Secure Cloud)", "2026", "https://www.runpod.io/pricing"),
    Reference("vast_pricing", "Vast.ai", "GPU marketplace pricing (offers API: dph_total)", "2026", "https://vast.ai/pricing"),
    Reference("coreweave_pricing", "CoreWeave", "GPU cloud pricing", "2026", "https://www.coreweave.com/pricing"),
    Reference("nebius_pricing", "Nebius", "AI Cloud prices", "2026", "https://nebius.com/prices"),
    Reference("crusoe_pricing", "Crusoe", "Cloud pricing", "2026", "https://crusoe.ai/cloud/pricing"),
    Reference("together_pricing", "Together AI", "GPU clusters pricing", "2026", "https://www.together.ai/pricing"),
    Reference("oci_pricing", "Oracle Cloud Infrastructure", "Compute pricing (GPU shapes)", "2026", "https://www.oracle.com/cloud/compute/pricing/"),
    Reference("verda_pricing", "Verda (formerly DataCrunch)", "GPU instance pricing", "2026", "https://verda.com/pricing"),
    Reference("hyperstack_pricing", "Hyperstack", "GPU pricing", "2026", "https://www.hyperstack.cloud/gpu-pricing"),
    Reference("tensordock_pricing", "TensorDock", "GPU marketplace pricing", "2026", "https://www.tensordock.com/pricing"),
    Reference("modal_l40s", "Modal", "NVIDIA L40S price comparison across clouds", "2025-08-12",
              "https://modal.com/blog/nvidia-l40s-price-article"),
    Reference("sanskrit_renting", "DS436", "sanskrit-token: RENTING_A_GPU.md (provider pages and APIs read 2026-09-09)", "2026",
              "https://github.com/DS436/sanskrit-token/blob/main/RENTING_A_GPU.md"),
    # pipeline, context and expert parallelism; CPU offload (their own block)
    Reference("megatron_cp", "NVIDIA", "Megatron-Core User Guide: context_parallel package (context parallelism)", "2024",
              "https://docs.nvidia.com/megatron-core/developer-guide/latest/api-guide/context_parallel.html"),
    Reference("ring_attention2023", "Liu, Zaharia and Abbeel", "Ring Attention with Blockwise Transformers for Near-Infinite Context",
              "2023", "https://arxiv.org/abs/2310.01889"),
    Reference("gshard2020", "Lepikhin, Lee, Xu, Chen, Firat, Huang, Krikun, Shazeer and Chen",
              "GShard: Scaling Giant Models with Conditional Computation and Automatic Sharding", "2020",
              "https://arxiv.org/abs/2006.16668"),
    Reference("megatron_moe", "NVIDIA", "Megatron-Core User Guide: Mixture of Experts package (expert parallelism, token dispatcher)",
              "2024", "https://docs.nvidia.com/megatron-core/developer-guide/latest/api-guide/moe.html"),
    Reference("switch2021", "Fedus, Zoph and Shazeer",
              "Switch Transformers: Scaling to Trillion Parameter Models with Simple and Efficient Sparsity", "2021",
              "https://arxiv.org/abs/2101.03961"),
    Reference("megablocks2022", "Gale, Narayanan, Young and Zaharia",
              "MegaBlocks: Efficient Sparse Training with Mixture-of-Experts", "2022", "https://arxiv.org/abs/2211.15841"),
    Reference("zero_infinity2021", "Rajbhandari, Ruwase, Rasley, Smith and He",
              "ZeRO-Infinity: Breaking the GPU Memory Wall for Extreme Scale Deep Learning", "2021", "https://arxiv.org/abs/2104.07857"),
    Reference("deepspeed_config", "Microsoft DeepSpeed", "DeepSpeed Configuration JSON: ZeRO optimizations (stage 3 and offload options)",
              "2024", "https://www.deepspeed.ai/docs/config-json/"),
    Reference("nemo_perf", "NVIDIA NeMo", "Megatron Bridge performance summary (pre-training throughput per GPU, NeMo containers 25.11 and 26.02)",
              "2026", "https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/main/docs/performance-summary-archive.md"),
    Reference("automodel_perf", "NVIDIA NeMo", "NeMo AutoModel performance summary (pre-training on DGX-H100, BF16; last updated 2025-10-02) "
              "and its benchmark configurations", "2025-10-02",
              "https://github.com/NVIDIA-NeMo/Automodel/blob/main/docs/performance-summary.md"),
    Reference("automodel_perf_lora", "NVIDIA NeMo", "NeMo AutoModel performance summary, 'Finetuning (LoRA) Performance' "
              "(DGX-H100, BF16: Llama 3.1 8B and Qwen2.5 7B LoRA on one GPU), with the benchmark configurations "
              "examples/llm_finetune/llama3_1/llama3_1_8b_peft_benchmark.yaml and qwen/qwen2_5_7b_peft_benchmark.yaml at the "
              "same commit", "2025-12-16",
              "https://github.com/NVIDIA-NeMo/Automodel/blob/507bfb7514f0060b45fda40da97b050425ec11c8/docs/performance-summary.md"),
    Reference("answerai_fsdp_qlora_bench", "Answer.AI (Jonathan Whitaker, Benjamin Warner, Kerem Turgutlu)",
              "Benchmarking QLoRA+FSDP: exploring training performance across different hardware configurations", "2024-03",
              "https://github.com/AnswerDotAI/fsdp_qlora/blob/main/benchmarks_03_2024.md"),
    Reference("fms_acceleration_bench", "IBM (Yu Chin Fabian Lim, Anh Uong et al.), foundation-model-stack/fms-acceleration",
              "Benchmark reference results on A100 80GB (scripts/benchmarks/refs/a100_80gb.csv): the 'none' and 'baseline-peft-bnb' "
              "rows, plain fms-hf-tuning (Hugging Face transformers 4.48.1, TRL 0.13, PEFT 0.13.2, torch 2.4.1)", "2025-02-07",
              "https://github.com/foundation-model-stack/fms-acceleration/blob/24bdadb228e2d55bc0c69deec034b86a73da6917/scripts/benchmarks/refs/a100_80gb.csv"),
    # FP8 training, and GPUs sold under other names (H800, A10G)
    Reference("te_fp8", "NVIDIA", "Transformer Engine user guide: Using FP8 with Transformer Engine", "2024",
              "https://docs.nvidia.com/deeplearning/transformer-engine/user-guide/examples/fp8_primer.html"),
    Reference("te_mxfp8", "NVIDIA", "Transformer Engine: low-precision training, MXFP8 (one E8M0 scale per 32 values; native on "
              "Blackwell, SM 10.0)", "2026", "https://nvidia.github.io/TransformerEngine/features/low_precision_training/mxfp8/mxfp8.html"),
    Reference("fp8formats2022", "Micikevicius, Stosic, Burgess, Cornea, Dubey, Grisenthwaite, Ha, Heinecke, Judd, Kamalu, Mellempudi, "
              "Oberman, Shoeybi, Siu and Wu", "FP8 Formats for Deep Learning", "2022", "https://arxiv.org/abs/2209.05433"),
    Reference("mx_formats2023", "Rouhani, Zhao, More, Hall, Khodamoradi, Deng et al.", "Microscaling Data Formats for Deep Learning", "2023",
              "https://arxiv.org/abs/2310.10537"),
    Reference("torchao_training", "PyTorch (torchao)", "torchao training workflow: float8 and MX e2e training benchmarks with "
              "torchtitan (Llama 3 8B on 8x H100 and 8x B200)", "2026-03-03",
              "https://github.com/pytorch/ao/blob/b8708a2dd3a6a5150a198fbf3772ca9e968570ca/docs/source/workflows/training.md"),
    Reference("pytorch_float8_fsdp2", "PyTorch (IBM and Meta)", "Supercharging Training using float8 and FSDP2", "2024-11-25",
              "https://pytorch.org/blog/training-using-float8-fsdp2/"),
    Reference("nemo_perf_2407", "NVIDIA", "NeMo Framework performance summary: pre-training and fine-tuning at FP8 on DGX-H100 "
              "(container NeMo 24.07)", "2024-09-09",
              "https://github.com/NVIDIA/NeMo/blob/8e3d65dcfe3504689bfc5b6e67d502780aacad41/docs/source/performance/performance_summary.md"),
    Reference("nemo_perf_2504", "NVIDIA", "NeMo Framework performance summary (NeMo 25.04): pre-training at FP8 on DGX-GB200", "2025",
              "https://docs.nvidia.com/nemo-framework/user-guide/latest/performance/archive/25.04-performance-summary.html"),
    Reference("deepseek_hw2025", "Zhao, Deng, Ruan, Dai, Gao, Li, Zhang, Huang, Zhou, Ma, Liang, He, Wang, Liu and Wei (DeepSeek-AI)",
              "Insights into DeepSeek-V3: Scaling Challenges and Reflections on Hardware for AI Architectures (ISCA 2025; the H800: "
              "H100 compute, NVLink cut from 900 to 400 GB/s)", "2025", "https://arxiv.org/abs/2505.09343"),
    Reference("baseten_a10g", "Baseten", "NVIDIA A10 vs A10G for ML model inference (spec sheet: the A10G has 24 GB GDDR6 at 600 GB/s "
              "like the A10, less tensor throughput, more FP32)", "2023",
              "https://www.baseten.co/blog/nvidia-a10-vs-a10g-for-ml-model-inference/"),
    Reference("aws_g5", "Amazon Web Services", "Amazon EC2 G5 instances (up to 8 NVIDIA A10G Tensor Core GPUs, 24 GB each)", "2021",
              "https://aws.amazon.com/ec2/instance-types/g5/"),
    Reference("factualminds_ec2_2026", "FactualMinds", "Amazon EC2 On-Demand Pricing: Instance Families, Regional Multipliers, and the "
              "Graviton Crossover (2026) (us-east-1, June 2026: g5.xlarge 1.006 USD/h)", "2026-06-17",
              "https://www.factualminds.com/blog/amazon-ec2-on-demand-pricing-instance-families-2026/"),
    # serving
    Reference("mlperf_inference_rules", "MLCommons LLM task force", "LLM inference benchmarks in MLPerf Inference v5.0 (Llama 2 Chat 70B "
              "interactive scenario: 450 ms to the first token, 40 ms per output token)", "2025-04",
              "https://mlcommons.org/2025/04/llm-inference-v5"),
    Reference("sarathi2024", "Agrawal, Kedia, Panwar, Mohan, Kwatra, Gulavani, Tumanov and Ramjee",
              "Taming Throughput-Latency Tradeoff in LLM Inference with Sarathi-Serve (chunked prefill)", "2024",
              "https://arxiv.org/abs/2403.02310"),
]

# serving: API prices, MIG, batched serving measurements
_REFS += [
    Reference("genai_prices", "Pydantic (Samuel Colvin et al.)",
              "genai-prices: calculate prices for calling LLM inference APIs (price data per provider and model, MIT; package 0.2.3)",
              "2026-11-23", "https://github.com/pydantic/genai-prices"),
    Reference("nvidia_mig", "NVIDIA", "NVIDIA Multi-Instance GPU User Guide: Supported MIG Profiles (A100, H100, H200 tables: "
              "fraction of memory, fraction of SMs, instances per GPU)", "2026-10-13",
              "https://docs.nvidia.com/datacenter/tesla/mig-user-guide/supported-mig-profiles.html"),
    Reference("trtllm_perf_overview", "NVIDIA",
              "TensorRT-LLM documentation: Performance Overview (throughput of trtllm-bench at maximum load; the release 1.0 tables, "
              "pull requests 7848 and 7894)", "2025-09-22", "https://github.com/NVIDIA/TensorRT-LLM/blob/00f37686aa854010d68bcbd0f4ab000221541ca6/docs/source/performance/perf-overview.md"),
    Reference("gpustack_perflab", "GPUStack",
              "Performance Lab: optimizing throughput and latency of Qwen3, gpt-oss and others on NVIDIA H100 (vLLM, SGLang, "
              "TensorRT-LLM; pages qwen3-8b/h100-latency, qwen3-32b/h100, gpt-oss-20b/h100, qwen3-235b-a22b/h100)", "2025-10-15 to 2026-03-20",
              "https://github.com/gpustack/gpustack/tree/47277d79f4a5bae12a2d25e9ecbed2a2177a5f2d/docs/performance-lab"),
    Reference("sglang_vllm060_bench", "The SGLang Team (LMSYS)",
              "How to reproduce the benchmark results for SGLang v0.3.0 compared to vLLM v0.6.0 (online and offline ShareGPT "
              "benchmarks, Llama 3.1 8B on one A100 80G and 70B on 4 H100 80G)", "2024-09-04",
              "https://github.com/sgl-project/sglang/blob/120affb9613cc3f5bcd055ec09c7621d3ced0ebc/benchmark/benchmark_vllm_060/README.md"),
    Reference("mlperf_inference_v41", "MLCommons (NVIDIA submission)",
              "MLPerf Inference v4.1 results, closed division, datacenter: llama2-70b on DGX H100 and 8x H200 SXM "
              "(results/*/llama2-70b-99*/*/performance/run_1/mlperf_log_summary.txt; configs/llama2-70b)", "2024-08-28",
              "https://github.com/mlcommons/inference_results_v4.1/tree/main/closed/NVIDIA"),
]

# serving engines
_REFS += [
    Reference("aiconfigurator_silicon", "NVIDIA",
              "AIConfigurator 0.12.0: measured serving points (aiconfigurator-core on PyPI, aiconfigurator_core/systems/silicon_sample.csv; "
              "TensorRT-LLM, vLLM and SGLang on H100, H200, B200, GB200, B300 and GB300; Apache License 2.0)", "2026-04-27",
              "https://pypi.org/project/aiconfigurator-core/0.12.0/"),
    Reference("sglang_dp_attention", "The SGLang Team (LMSYS)",
              "SGLang v0.4: Zero-Overhead Batch Scheduler, Cache-Aware Load Balancer, Faster Structured Outputs (data-parallel attention "
              "for DeepSeek models: with one latent KV head, tensor parallelism duplicates the KV cache on every GPU)", "2024-12-04",
              "https://lmsys.org/blog/2024-12-04-sglang-v0-4/"),
    Reference("distserve2024", "Zhong, Liu, Chen, Hu, Zhu, Liu, Jin and Zhang",
              "DistServe: Disaggregating Prefill and Decoding for Goodput-optimized Large Language Model Serving (OSDI 2024: "
              "prefill and decode on separate GPUs remove their interference; the KV cache moves between them)", "2024",
              "https://arxiv.org/abs/2401.09670"),
    Reference("splitwise2024", "Patel, Choukse, Zhang, Shah, Goiri, Maleki and Bianchini",
              "Splitwise: Efficient Generative LLM Inference Using Phase Splitting (ISCA 2024: prompt and token phases on separate "
              "machines, the KV cache sent over InfiniBand layer by layer)", "2024", "https://arxiv.org/abs/2311.18677"),
    Reference("dynamo_disagg", "NVIDIA", "NVIDIA Dynamo documentation: Disaggregated Serving (prefill and decode workers, KV cache "
              "moved by NIXL over NVLink or RDMA; disaggregation helps long prompts under tight per-token targets)", "2025",
              "https://docs.nvidia.com/dynamo/latest/architecture/disagg_serving.html"),
    Reference("aiconfigurator_disagg", "NVIDIA", "AIConfigurator: aggregated against disaggregated (xPyD) serving, searched per "
              "workload and latency target (aiconfigurator cli default)", "2025", "https://github.com/ai-dynamo/aiconfigurator"),
    Reference("trtllm_attention_dp", "NVIDIA", "TensorRT-LLM LLM API reference: AttentionDpConfig (enable_balance, "
              "batching_wait_iters, timeout_iters: context requests wait until the attention data-parallel ranks can run them "
              "together)", "2025", "https://nvidia.github.io/TensorRT-LLM/llm-api/reference.html"),
    Reference("vllm_bench_serve", "vLLM project", "vllm bench serve (--max-concurrency: requests in flight; TTFT, TPOT)", "2025",
              "https://docs.vllm.ai/en/latest/cli/bench/serve.html"),
    Reference("sglang_server_args", "SGLang project", "Server Arguments (--tp-size, --max-running-requests, --chunked-prefill-size, "
              "--kv-cache-dtype, --quantization)", "2025", "https://docs.sglang.io/advanced_features/server_arguments.html"),
    Reference("trtllm_serve", "NVIDIA", "TensorRT-LLM: trtllm-serve (--tp_size, --max_batch_size, --max_num_tokens, "
              "--kv_cache_free_gpu_memory_fraction)", "2025", "https://nvidia.github.io/TensorRT-LLM/commands/trtllm-serve/index.html"),
    Reference("llamacpp_server", "ggml-org", "llama.cpp: Using multiple GPUs (--split-mode layer: each GPU holds a contiguous slice of "
              "layers and their KV cache) and llama-server's options (--n-gpu-layers, --parallel, --ctx-size, --batch-size)", "2025",
              "https://github.com/ggml-org/llama.cpp/blob/master/docs/multi-gpu.md"),
    Reference("llamacpp_cublas_f16", "ggml-org", "llama.cpp ggml/src/ggml-cuda/ggml-cuda.cu: matrix products of 16-bit and "
              "dequantized weights through cuBLAS with compute type CUBLAS_COMPUTE_16F (FP16 accumulation) on GPUs with fast FP16 "
              "(batched_mul_mat_traits<GGML_TYPE_F16>, ggml_cuda_mul_mat_cublas); pull request 3816 (2023-10-27) kept it after "
              "comparing CUBLAS_COMPUTE_32F", "2026",
              "https://github.com/ggml-org/llama.cpp/blob/00108827d87949b538ad1821f81a6b111827fcda/ggml/src/ggml-cuda/ggml-cuda.cu"),
    Reference("llamacpp_cuda_bench", "Georgi Gerganov (ggml-org)", "llama.cpp pull request 3776: cuda: improve text-generation and "
              "batched decoding performance (tokens per second at batch 1 to 64)", "2023-10-27",
              "https://github.com/ggml-org/llama.cpp/pull/3776"),
    Reference("hf_llm_optims", "Hugging Face", "Transformers documentation: LLM inference optimization (a static KV cache and "
              "torch.compile make generation up to 4x faster than the default eager generate)", "2025",
              "https://huggingface.co/docs/transformers/llm_optims"),
]

REFERENCES: dict[str, Reference] = {r.key: r for r in _REFS}
_KEY = re.compile(r"\[((?:hf:)?[A-Za-z][\w.\-/]*)\]")
HF_CONFIG = "https://huggingface.co/{model}/blob/main/config.json"


def resolve(key: str) -> str | None:
    """The full citation of a key: a registry entry, or ``hf:org/model`` for a model's published configuration."""
    if key.startswith("hf:"):
        model = key[3:]
        return f"{model.split('/')[0]} ({model}), \"config.json\" of the published model, {HF_CONFIG.format(model=model)}"
    ref = REFERENCES.get(key)
    return ref.full() if ref else None


def keys_in(text: str) -> list[str]:
    """The reference keys a source text names."""
    return _KEY.findall(str(text or ""))


def cite(text: str, short: bool = False) -> str:
    """The source text with every [key] replaced by its full citation (``short``: "authors year")."""
    def one(m):
        key = m.group(1)
        if short:
            if key.startswith("hf:"):
                return f"{key[3:]} config.json"
            ref = REFERENCES.get(key)
            return ref.short() if ref else m.group(0)
        return resolve(key) or m.group(0)
    return _KEY.sub(one, str(text or ""))
