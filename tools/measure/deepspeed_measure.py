"""Measure training speed and memory of one DeepSpeed ZeRO configuration on the GPU at hand, as gpu-tco's rows need them.

The model is built from a Hugging Face config.json with random bf16 weights (no download) and handed to
``deepspeed.initialize`` with the settings people write in a ds_config.json: bf16 enabled, a ZeRO stage, the AdamW
that DeepSpeed picks for ``"type": "AdamW"`` (its FusedAdam CUDA op, built on first use; where it cannot be built the
row says so and torch's AdamW runs instead), micro-batch as given and no gradient accumulation.  A step is
``engine(...)``, ``engine.backward(loss)``, ``engine.step()``; the script prints one JSON object whose keys are gpu-tco's
input names and the measured quantities (train_measure.py documents them).

It needs a GPU, torch, transformers and deepspeed (no network: DeepSpeed's wheel and what it imports travel as files).
One process is one rank: the script sets the rendezvous variables for a world of one, so no launcher is needed.

    python tools/measure/deepspeed_measure.py --config tools/measure/configs/Llama-3.2-3B/config.json \\
        --zero-stage 2 --recompute full --seq-len 2048 --micro-batch 2 > row.json

Nothing here runs in the test suite (it needs a GPU); tests/test_training_frameworks.py checks that it parses its options.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

from measure_common import GIB, add_model_arguments, add_step_arguments, emit, time_steps, versions


def parse(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_model_arguments(p)
    p.add_argument("--zero-stage", type=int, choices=(0, 1, 2, 3), default=2)
    p.add_argument("--recompute", choices=("none", "full"), default="full")
    p.add_argument("--seq-len", type=int, default=2048)
    p.add_argument("--micro-batch", type=int, default=1)
    p.add_argument("--torch-adam", action="store_true", help="torch.optim.AdamW instead of DeepSpeed's FusedAdam")
    p.add_argument("--offload-optimizer", action="store_true",
                   help="ZeRO-Offload: fp32 master weights and Adam states in CPU memory, DeepSpeed's CPU Adam")
    add_step_arguments(p, steps=5)
    return p.parse_args(argv)


def fused_adam_builds() -> str:
    """'' when DeepSpeed's FusedAdam op loads (it is compiled with nvcc the first time), else why not."""
    try:
        import torch
        from deepspeed.ops.adam import FusedAdam
        FusedAdam([torch.zeros(1, device="cuda", requires_grad=True)])
        return ""
    except Exception as e:  # a missing compiler or headers: the row records it and runs torch's AdamW
        return f"{type(e).__name__}: {e}"[:300]


def main(argv=None) -> int:
    ns = parse(argv)
    for name, value in (("RANK", "0"), ("LOCAL_RANK", "0"), ("WORLD_SIZE", "1"), ("MASTER_ADDR", "127.0.0.1"),
                        ("MASTER_PORT", "29517")):
        os.environ.setdefault(name, value)
    import deepspeed
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM
    torch.cuda.set_device(0)
    deepspeed.init_distributed(dist_backend="nccl")
    fused_error = "" if ns.torch_adam or ns.offload_optimizer else fused_adam_builds()
    torch_adam = ns.torch_adam or bool(fused_error)
    config = AutoConfig.from_pretrained(ns.config)
    began = time.perf_counter()
    with torch.device("cuda"):
        model = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16, attn_implementation="sdpa")
    if ns.recompute == "full":
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    offload = {"offload_optimizer": {"device": "cpu", "pin_memory": True}} if ns.offload_optimizer else {}
    ds_config = {"train_micro_batch_size_per_gpu": ns.micro_batch, "gradient_accumulation_steps": 1,
                 "bf16": {"enabled": True}, "zero_optimization": {"stage": ns.zero_stage, **offload},
                 "optimizer": {"type": "AdamW", "params": {"lr": 1e-5, "weight_decay": 0.0, "torch_adam": torch_adam}},
                 "steps_per_print": 10 ** 9}
    engine, _, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=ds_config)
    print(f"model and engine ready in {time.perf_counter() - began:.1f} s", file=sys.stderr, flush=True)
    vocab = config.vocab_size
    tokens = torch.randint(0, vocab, (ns.micro_batch, ns.seq_len), device="cuda")
    engine.train()

    def step():
        loss = engine(input_ids=tokens, labels=tokens).loss
        engine.backward(loss)
        engine.step()

    timed, oom = time_steps(step, ns.warmup, ns.steps)
    free, total = torch.cuda.mem_get_info()
    row = {"model": ns.model_name or ns.config.rstrip("/").replace("/config.json", "").split("/")[-1],
           "gpu": ns.gpu or torch.cuda.get_device_name(0), "n_gpus": 1, "method": "full", "framework": "deepspeed",
           "precision": "bf16_pure", "sharding": f"zero{ns.zero_stage}" if ns.zero_stage else "none",
           "optimizer": "adamw", "optimizer_ran": "deepspeed CPU Adam" if ns.offload_optimizer
           else ("torch.optim.AdamW" if torch_adam else "deepspeed FusedAdam"),
           "offload_optimizer": int(ns.offload_optimizer),
           "fused_adam_error": fused_error, "recompute": ns.recompute, "seq_len": ns.seq_len,
           "micro_batch": ns.micro_batch, "fused_loss": 0,
           "train_tokens_per_s": None if oom or not timed else ns.steps * ns.micro_batch * ns.seq_len / timed,
           "allocator_peak_train_gib": torch.cuda.max_memory_allocated() / GIB,
           "reserved_peak_train_gib": torch.cuda.max_memory_reserved() / GIB,
           "device_used_gib": (total - free) / GIB, "device_total_gib": total / GIB, "out_of_memory": oom,
           "versions": {"torch": torch.__version__, **versions(("deepspeed", "transformers"))}}
    return emit(row)


if __name__ == "__main__":
    sys.exit(main())
