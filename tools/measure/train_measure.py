"""Measure training speed and memory of one configuration on the GPU at hand, as gpu-tco's calibration rows need them.

Random weights are enough for speed and memory: the model is built from a Hugging Face config.json (no download), trained
for a few steps on random tokens, and the script prints one JSON object whose keys are gpu-tco's input names (model, method,
gpu, seq_len, micro_batch, precision, optimizer, recompute, framework, master_weights, optimizer_state_dtype,
qlora_fp32_casts, fused_loss, lora_rank, lora_targets) and the measured quantities:

- train_tokens_per_s: tokens per second over the timed steps (after the warm-up steps);
- allocator_peak_train_gib: torch.cuda.max_memory_allocated, GiB (what gpu-tco's allocator_peak_train_gib models);
- reserved_peak_train_gib: torch.cuda.max_memory_reserved, GiB;
- device_used_gib: total - free memory of the device at the end (CUDA context included; what nvidia-smi shows);
- out_of_memory: true when a step ran out of memory (the memory figures are then those at the failure).

It needs a GPU and: torch, transformers, peft (LoRA, QLoRA), accelerate, bitsandbytes (QLoRA, 8-bit AdamW) and
liger-kernel (--fused-loss).  The framework it measures is transformers (+ PEFT) in eager mode, the way the Hugging Face
Trainer runs a step: forward, loss, backward, optimizer step, zero_grad(set_to_none=True).

    python tools/measure/train_measure.py --config tests/data/hf_configs/Llama-3.1-8B/config.json \\
        --method full --precision bf16_pure --optimizer adamw_foreach --recompute full --seq-len 2048 > row.json

Nothing here runs in the test suite (it needs a GPU); tests/test_training_frameworks.py checks that it parses its options.
"""
from __future__ import annotations

import argparse
import sys
import time

from measure_common import GIB, add_model_arguments, add_step_arguments, emit, versions


def parse(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_model_arguments(p)
    p.add_argument("--precision", choices=("bf16_pure", "bf16_mixed"), default="bf16_pure",
                   help="bf16_pure: bf16 weights, no master copy; bf16_mixed: fp32 weights under bf16 autocast")
    p.add_argument("--optimizer", choices=("adamw_foreach", "adamw", "adamw_8bit"), default="adamw_foreach",
                   help="adamw_foreach: torch.optim.AdamW as it comes; adamw: fused=True; adamw_8bit: bitsandbytes")
    p.add_argument("--recompute", choices=("none", "full"), default="full")
    p.add_argument("--seq-len", type=int, default=2048)
    p.add_argument("--micro-batch", type=int, default=1)
    p.add_argument("--lora-rank", type=int, default=16)
    p.add_argument("--lora-targets", choices=tuple(TARGETS), default="all")
    p.add_argument("--lora-dropout", type=float, default=0.0,
                   help="PEFT's lora_dropout (0: no dropout module; the Hugging Face recipes often set 0.05-0.1)")
    p.add_argument("--adapter-dtype", choices=("fp32", "bf16"), default="fp32",
                   help="fp32: PEFT's default (get_peft_model autocast_adapter_dtype=True upcasts the adapters); bf16: "
                        "autocast_adapter_dtype=False, the adapters in the weights' dtype (PEFT before 0.12)")
    p.add_argument("--reentrant", action="store_true",
                   help="reentrant activation checkpointing (use_reentrant=True, transformers' default until its version 5, "
                        "which the Trainer then ran); without it use_reentrant=False")
    p.add_argument("--qlora-fp32-casts", choices=("fp32", "none"), default="fp32",
                   help="fp32: PEFT's prepare_model_for_kbit_training; none: keep norms and embeddings in bf16")
    p.add_argument("--fused-loss", action="store_true", help="Liger's fused linear cross-entropy")
    p.add_argument("--liger-kernels", action="store_true",
                   help="with --fused-loss, also Liger's RoPE, RMSNorm and SwiGLU kernels (liger-kernel's defaults; the "
                        "2026-11-26 H200 run of the fused loss had them)")
    p.add_argument("--attn", default="sdpa", help="attn_implementation (sdpa, flash_attention_2, eager)")
    p.add_argument("--phases", action="store_true",
                   help="also time forward (with the loss), backward and the optimizer step apart (ms per step)")
    add_step_arguments(p, steps=10)
    return p.parse_args(argv)


# gpu-tco's lora_targets table (core/data/lora_targets.csv) as Hugging Face module names
TARGETS = {"all": ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
           "attention": ["q_proj", "k_proj", "v_proj", "o_proj"], "qv": ["q_proj", "v_proj"],
           "qkv": ["q_proj", "k_proj", "v_proj"], "qvo_mlp": ["q_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
           "qkv_mlp": ["q_proj", "k_proj", "v_proj", "gate_proj", "up_proj", "down_proj"]}


def build(ns):
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM
    config = AutoConfig.from_pretrained(ns.config)
    dtype = torch.float32 if ns.precision == "bf16_mixed" else torch.bfloat16
    kwargs = {"attn_implementation": ns.attn}
    if ns.method == "qlora":
        from transformers import BitsAndBytesConfig
        kwargs["quantization_config"] = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4",
                                                           bnb_4bit_use_double_quant=True, bnb_4bit_compute_dtype=torch.bfloat16)
        # random weights, quantized as they load: save a random model once and load it through bitsandbytes
        import tempfile
        folder = tempfile.mkdtemp()
        began = time.perf_counter()
        with torch.device("cuda"):  # random init on the GPU: on the CPU it takes minutes for a 3B model
            dense = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)
        dense.save_pretrained(folder)
        del dense
        torch.cuda.empty_cache()
        print(f"random bf16 checkpoint written in {time.perf_counter() - began:.1f} s", file=sys.stderr, flush=True)
        model = AutoModelForCausalLM.from_pretrained(folder, device_map={"": 0}, dtype=torch.bfloat16, **kwargs)
        print(f"loaded as NF4 after {time.perf_counter() - began:.1f} s", file=sys.stderr, flush=True)
    else:
        with torch.device("cuda"):
            model = AutoModelForCausalLM.from_config(config, dtype=dtype, **kwargs)
    if ns.method == "qlora" and ns.qlora_fp32_casts == "fp32":
        from peft import prepare_model_for_kbit_training
        model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=ns.recompute == "full",
                                                gradient_checkpointing_kwargs={"use_reentrant": ns.reentrant})
    elif ns.recompute == "full":
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": ns.reentrant})
        if ns.method != "full":
            model.enable_input_require_grads()
    if ns.method != "full":
        from peft import LoraConfig, get_peft_model
        model = get_peft_model(model, LoraConfig(r=ns.lora_rank, lora_alpha=2 * ns.lora_rank, lora_dropout=ns.lora_dropout,
                                                 target_modules=TARGETS[ns.lora_targets], task_type="CAUSAL_LM"),
                               autocast_adapter_dtype=ns.adapter_dtype == "fp32")
    if ns.fused_loss:
        from liger_kernel.transformers import _apply_liger_kernel_to_instance
        # liger-kernel's apply functions default rope, rms_norm and swiglu to True: name them, so a run of the fused
        # loss measures the loss alone unless --liger-kernels asks for the rest
        _apply_liger_kernel_to_instance(model=model, fused_linear_cross_entropy=True, cross_entropy=False,
                                        rope=ns.liger_kernels, rms_norm=ns.liger_kernels, swiglu=ns.liger_kernels)
    return model, config


def optimizer_for(ns, params):
    import torch
    if ns.optimizer == "adamw_8bit":
        import bitsandbytes as bnb
        return bnb.optim.AdamW8bit(params, lr=1e-5)
    return torch.optim.AdamW(params, lr=1e-5, fused=ns.optimizer == "adamw" or None)


def main(argv=None) -> int:
    ns = parse(argv)
    import torch
    model, config = build(ns)
    model.train()
    opt = optimizer_for(ns, [p for p in model.parameters() if p.requires_grad])
    vocab = config.get_text_config().vocab_size if hasattr(config, "get_text_config") else config.vocab_size
    tokens = torch.randint(0, vocab, (ns.micro_batch, ns.seq_len), device="cuda")
    autocast = torch.autocast("cuda", dtype=torch.bfloat16, enabled=ns.precision == "bf16_mixed")
    torch.cuda.reset_peak_memory_stats()
    oom, timed = False, 0.0
    phases = {"forward": 0.0, "backward": 0.0, "optimizer": 0.0}  # seconds over the timed steps
    try:
        for step in range(ns.warmup + ns.steps):
            torch.cuda.synchronize()
            start = time.perf_counter()
            with autocast:
                loss = model(input_ids=tokens, labels=tokens).loss
            if ns.phases:  # a synchronisation between phases: microseconds, and each phase's share is known
                torch.cuda.synchronize()
            forward_done = time.perf_counter()
            loss.backward()
            if ns.phases:
                torch.cuda.synchronize()
            backward_done = time.perf_counter()
            opt.step()
            opt.zero_grad(set_to_none=True)
            torch.cuda.synchronize()
            if step >= ns.warmup:
                end = time.perf_counter()
                timed += end - start
                phases["forward"] += forward_done - start
                phases["backward"] += backward_done - forward_done
                phases["optimizer"] += end - backward_done
    except torch.OutOfMemoryError:
        oom = True
    free, total = torch.cuda.mem_get_info()
    framework_inputs = {"framework": "transformers",
                        "master_weights": "fp32_autocast" if ns.precision == "bf16_mixed" else "none",
                        "optimizer_state_dtype": "auto",
                        "qlora_fp32_casts": ns.qlora_fp32_casts if ns.method == "qlora" else "auto"}
    row = {"model": ns.model_name or ns.config.rstrip("/").replace("/config.json", "").split("/")[-1],
           "gpu": ns.gpu or torch.cuda.get_device_name(0), "n_gpus": 1, "method": ns.method,
           "precision": "bf16_pure", "optimizer": ns.optimizer, "recompute": ns.recompute, "sharding": "none",
           "seq_len": ns.seq_len, "micro_batch": ns.micro_batch, "fused_loss": int(ns.fused_loss),
           "lora_rank": ns.lora_rank, "lora_targets": ns.lora_targets, "lora_dropout": ns.lora_dropout,
           "reentrant_checkpointing": ns.reentrant, "lora_adapter_dtype": ns.adapter_dtype if ns.method != "full" else "auto",
           **framework_inputs,
           "liger_kernels": "rope, rms_norm, swiglu, fused_linear_cross_entropy" if ns.fused_loss and ns.liger_kernels
           else ("fused_linear_cross_entropy" if ns.fused_loss else "none"),
           "train_tokens_per_s": None if oom else ns.steps * ns.micro_batch * ns.seq_len / timed,
           "allocator_peak_train_gib": torch.cuda.max_memory_allocated() / GIB,
           "reserved_peak_train_gib": torch.cuda.max_memory_reserved() / GIB,
           **({f"{k}_ms_per_step": 1000 * v / ns.steps for k, v in phases.items()} if ns.phases and not oom else {}),
           "device_used_gib": (total - free) / GIB, "device_total_gib": total / GIB, "out_of_memory": oom,
           "versions": {"torch": torch.__version__, **versions(("transformers", "peft", "bitsandbytes", "liger_kernel"))}}
    return emit(row)


if __name__ == "__main__":
    sys.exit(main())
