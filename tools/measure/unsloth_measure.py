"""Measure training speed and memory of one Unsloth configuration on the GPU at hand, as gpu-tco's calibration needs.

Unsloth as its notebooks run it: `FastLanguageModel.from_pretrained` (bf16 weights for LoRA and full fine-tuning, bitsandbytes
NF4 for QLoRA), `FastLanguageModel.get_peft_model` (rank r, alpha r, no dropout, on q, k, v, o and the MLP) and Unsloth's
gradient checkpointing (`use_gradient_checkpointing="unsloth"`); Unsloth's patched forward computes the loss with its
fused cross-entropy from `labels`.  The optimizer is the notebooks' `adamw_8bit` (bitsandbytes AdamW8bit) unless
--optimizer adamw (torch AdamW fused=True).  A plain PyTorch loop drives the steps (no Trainer, so nothing but the model,
the loss and the optimizer is timed).

Random weights are enough for speed and memory: the model is built on the GPU from a Hugging Face config.json with
random weights and saved to --workdir with a word-level tokenizer over the config's vocabulary (no download), which
`from_pretrained` then loads as it loads any local checkpoint.  Random tokens fill every sequence (no packing, no
padding), so tokens/s counts every position, as gpu-tco's train_tokens_per_s does.

The script prints one JSON object keyed by gpu-tco's input names, with the measured quantities, as train_measure.py
does: train_tokens_per_s over the timed steps (after the warm-up steps, which include Unsloth's compiling),
allocator_peak_train_gib (torch.cuda.max_memory_allocated over the timed steps), reserved_peak_train_gib,
device_used_gib, out_of_memory.  It needs a GPU, torch, transformers, peft, trl, bitsandbytes, unsloth and unsloth_zoo.

    UNSLOTH_DISABLE_STATISTICS=1 HF_HUB_OFFLINE=1 python tools/measure/unsloth_measure.py \\
        --config tests/data/hf_configs/Llama-3.1-8B --method lora --seq-len 2048 --micro-batch 2

Nothing here runs in the test suite (it needs a GPU); tests/test_training_frameworks.py checks that it parses its options.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

from measure_common import GIB, add_model_arguments, add_step_arguments, emit, time_steps, versions

LORA_TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


def parse(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_model_arguments(p, method_default="lora")
    p.add_argument("--optimizer", choices=("adamw_8bit", "adamw"), default="adamw_8bit",
                   help="adamw_8bit: bitsandbytes AdamW8bit (Unsloth's notebooks); adamw: torch AdamW fused=True")
    p.add_argument("--recompute", choices=("unsloth", "none"), default="unsloth",
                   help="unsloth: use_gradient_checkpointing='unsloth' (activations offloaded to CPU memory); none: off")
    p.add_argument("--seq-len", type=int, default=2048)
    p.add_argument("--micro-batch", type=int, default=2)
    p.add_argument("--lora-rank", type=int, default=16)
    p.add_argument("--workdir", default="", help="where the random checkpoint is written (default: "
                   "/tmp/unsloth_random/MODEL; one written earlier for the same model is used again)")
    add_step_arguments(p, steps=5)
    return p.parse_args(argv)


def write_random_checkpoint(config_path: str, workdir: str):
    """A checkpoint with random bf16 weights for the config, and a word-level tokenizer over its vocabulary (kept: a
    later run for the same model loads it again)."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import AutoConfig, AutoModelForCausalLM, PreTrainedTokenizerFast
    folder = config_path if os.path.isdir(config_path) else os.path.dirname(config_path)
    cfg = AutoConfig.from_pretrained(folder)
    if os.path.exists(os.path.join(workdir, "tokenizer_config.json")):
        return cfg
    with torch.device("cuda"):
        model = AutoModelForCausalLM.from_config(cfg, dtype=torch.bfloat16)
    model.save_pretrained(workdir)
    del model
    torch.cuda.empty_cache()
    first = lambda v: v[0] if isinstance(v, (list, tuple)) else v  # noqa: E731 (Llama 3.1 lists three end tokens)
    bos, eos = first(cfg.bos_token_id) or 1, first(cfg.eos_token_id) or 2
    pad = next(i for i in range(cfg.vocab_size - 1, 0, -1) if i not in (bos, eos))
    word = Tokenizer(models.WordLevel(vocab={f"t{i}": i for i in range(cfg.vocab_size)}, unk_token="t0"))
    word.pre_tokenizer = pre_tokenizers.Whitespace()
    PreTrainedTokenizerFast(tokenizer_object=word, bos_token=f"t{bos}", eos_token=f"t{eos}", pad_token=f"t{pad}",
                            unk_token="t0").save_pretrained(workdir)
    return cfg


def load(ns):
    """The model as Unsloth's notebooks load it (adapters added for LoRA and QLoRA)."""
    import torch
    from unsloth import FastLanguageModel
    checkpointing = "unsloth" if ns.recompute == "unsloth" else False
    model, _tokenizer = FastLanguageModel.from_pretrained(
        ns.workdir, max_seq_length=ns.seq_len, dtype=torch.bfloat16, load_in_4bit=ns.method == "qlora",
        load_in_16bit=ns.method == "lora", full_finetuning=ns.method == "full", fix_tokenizer=False,
        use_gradient_checkpointing=checkpointing)
    if ns.method != "full":
        model = FastLanguageModel.get_peft_model(model, r=ns.lora_rank, lora_alpha=ns.lora_rank, lora_dropout=0,
                                                 target_modules=LORA_TARGETS, bias="none",
                                                 use_gradient_checkpointing=checkpointing, random_state=3407)
    FastLanguageModel.for_training(model)
    return model


def optimizer_for(ns, model):
    import torch
    params = [p for p in model.parameters() if p.requires_grad]
    if ns.optimizer == "adamw_8bit":
        import bitsandbytes as bnb
        return bnb.optim.AdamW8bit(params, lr=2e-4)
    return torch.optim.AdamW(params, lr=2e-4, fused=True)


def main(argv=None) -> int:
    ns = parse(argv)
    os.environ.setdefault("UNSLOTH_DISABLE_STATISTICS", "1")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    import unsloth  # noqa: F401  (before transformers, as Unsloth asks, so that its patches apply)
    began = time.perf_counter()
    name = ns.model_name or os.path.basename(os.path.normpath(ns.config if os.path.isdir(ns.config) else os.path.dirname(ns.config)))
    ns.workdir = ns.workdir or os.path.join("/tmp/unsloth_random", name)
    cfg = write_random_checkpoint(ns.config, ns.workdir)
    model = load(ns)
    opt = optimizer_for(ns, model)
    tokens = torch.randint(0, cfg.vocab_size, (ns.micro_batch, ns.seq_len), device="cuda")
    print(f"built in {time.perf_counter() - began:.1f} s", file=sys.stderr, flush=True)

    def step():
        model(input_ids=tokens, labels=tokens).loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    timed, oom = time_steps(step, ns.warmup, ns.steps)
    free, total = torch.cuda.mem_get_info()
    row = {"model": name, "gpu": ns.gpu or torch.cuda.get_device_name(0), "n_gpus": 1, "method": ns.method,
           "precision": "bf16_pure", "optimizer": ns.optimizer, "recompute": "full" if ns.recompute == "unsloth" else "none",
           "unsloth_gradient_checkpointing": ns.recompute == "unsloth", "sharding": "none", "seq_len": ns.seq_len,
           "micro_batch": ns.micro_batch, "fused_loss": 1, "lora_rank": ns.lora_rank, "lora_targets": "all",
           "framework": "unsloth",
           "train_tokens_per_s": None if oom or not timed else ns.steps * ns.micro_batch * ns.seq_len / timed,
           "allocator_peak_train_gib": torch.cuda.max_memory_allocated() / GIB,
           "reserved_peak_train_gib": torch.cuda.max_memory_reserved() / GIB,
           "device_used_gib": (total - free) / GIB, "device_total_gib": total / GIB, "out_of_memory": oom,
           "versions": {"torch": torch.__version__, **versions(("unsloth", "unsloth_zoo", "transformers", "peft", "trl",
                                                                "bitsandbytes", "triton", "xformers"))}}
    return emit(row)


if __name__ == "__main__":
    sys.exit(main())
