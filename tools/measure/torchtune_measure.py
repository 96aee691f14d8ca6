"""Measure training speed and memory of one torchtune configuration on the GPU at hand, as gpu-tco's calibration needs.

torchtune's own parts, set up the way its single-device recipes (recipes/full_finetune_single_device.py and
recipes/lora_finetune_single_device.py in torchtune 0.6.1) set them up: the model from torchtune's builder
(llama3_1_8b, lora_llama3_1_8b, qlora_llama3_1_8b, llama3_2_1b, llama3_2_3b, ...) under bf16, built directly on the
GPU with random weights (speed and memory do not depend on the values); `training.compile_model` (each decoder layer
compiled) and `training.compile_loss` with --compile; `training.set_activation_checkpointing` over the decoder layers
with --recompute full; torchtune's chunked cross-entropy (`CEWithChunkedOutputLoss`, the model's output in chunks);
the labels shifted as the recipe shifts them; the optimizer as the configs name it (bitsandbytes PagedAdamW8bit
applied in the backward pass through `training.register_optim_in_bwd_hooks` for full fine-tuning, fused torch AdamW
on the adapters for LoRA and QLoRA); `zero_grad(set_to_none=True)`.  Random tokens fill every sequence (no packing,
no padding), so tokens/s counts every position, as gpu-tco's train_tokens_per_s does.

The script prints one JSON object whose keys are gpu-tco's input names (model, method, gpu, seq_len, micro_batch,
optimizer, recompute, framework, fused_loss, lora_rank, lora_targets) and the measured quantities, as
train_measure.py does: train_tokens_per_s over the timed steps (after the warm-up steps, which include compiling),
allocator_peak_train_gib (torch.cuda.max_memory_allocated over the timed steps), reserved_peak_train_gib,
device_used_gib, out_of_memory.

It needs a GPU and torch, torchtune (0.6.1), torchao (0.13 runs with torch 2.11 to 2.13; newer torchao releases
dropped names torchtune 0.6.1 imports), torchtune's import-time needs (datasets, omegaconf, tokenizers, ...), and
bitsandbytes for the 8-bit optimizer.

    python tools/measure/torchtune_measure.py --builder llama3_1_8b --model-name Llama-3.1-8B --method full \\
        --optimizer adamw_8bit_paged --optimizer-in-backward --recompute full --compile --seq-len 2048 --micro-batch 2

Nothing here runs in the test suite (it needs a GPU); tests/test_training_frameworks.py checks that it parses its options.
"""
from __future__ import annotations

import argparse
import sys
import time

from measure_common import GIB, add_step_arguments, emit, time_steps, versions

# torchtune's names of the projections that LoRA adapts, for gpu-tco's lora_targets choices
# gpu-tco's lora_targets table (core/data/lora_targets.csv) as torchtune's attention modules, and whether the MLP is adapted
ATTENTION_MODULES = {"all": ["q_proj", "k_proj", "v_proj", "output_proj"], "attention": ["q_proj", "k_proj", "v_proj", "output_proj"],
                     "qv": ["q_proj", "v_proj"], "qkv": ["q_proj", "k_proj", "v_proj"], "qvo_mlp": ["q_proj", "v_proj", "output_proj"],
                     "qkv_mlp": ["q_proj", "k_proj", "v_proj"]}
WITH_MLP = ("all", "qvo_mlp", "qkv_mlp")


def parse(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--builder", required=True, help="torchtune model builder without the lora_/qlora_ prefix, e.g. llama3_1_8b")
    p.add_argument("--model-name", required=True, help="the gpu-tco model name to report, e.g. Llama-3.1-8B")
    p.add_argument("--gpu", default="", help="the gpu-tco GPU name to report (default: torch's device name)")
    p.add_argument("--method", choices=("full", "lora", "qlora"), default="full")
    p.add_argument("--optimizer", choices=("adamw_8bit_paged", "adamw", "adamw_foreach"), default="adamw",
                   help="adamw_8bit_paged: bitsandbytes PagedAdamW8bit; adamw: torch AdamW fused=True; adamw_foreach: as it comes")
    p.add_argument("--optimizer-in-backward", action="store_true", help="each parameter's step in the backward pass")
    p.add_argument("--recompute", choices=("none", "full"), default="full")
    p.add_argument("--compile", action="store_true", help="training.compile_model and compile_loss, as compile: True")
    p.add_argument("--seq-len", type=int, default=2048)
    p.add_argument("--micro-batch", type=int, default=2)
    p.add_argument("--lora-rank", type=int, default=8)
    p.add_argument("--lora-targets", choices=tuple(ATTENTION_MODULES), default="all",
                   help="all: q, k, v, output projections and the MLP; attention: the four projections; qv: q and v; qkv: "
                        "q, k and v; qvo_mlp: q, v, output and the MLP; qkv_mlp: q, k, v and the MLP")
    p.add_argument("--device", default="cuda", help="cuda; cpu only to check the script on a machine without a GPU")
    add_step_arguments(p, steps=8)
    return p.parse_args(argv)


def build(ns):
    import importlib

    import torch
    from torchtune import modules, training
    package = importlib.import_module("torchtune.models." + ns.builder.rsplit("_", 1)[0])  # llama3_1_8b -> torchtune.models.llama3_1
    with training.set_default_dtype(torch.bfloat16), torch.device(ns.device):
        if ns.method == "full":
            model = getattr(package, ns.builder)()
        else:
            builder = getattr(package, ("lora_" if ns.method == "lora" else "qlora_") + ns.builder)
            model = builder(lora_attn_modules=ATTENTION_MODULES[ns.lora_targets],
                            apply_lora_to_mlp=ns.lora_targets in WITH_MLP, apply_lora_to_output=False,
                            lora_rank=ns.lora_rank, lora_alpha=2 * ns.lora_rank, lora_dropout=0.0)
    if ns.method != "full":
        from torchtune.modules.peft import get_adapter_params, set_trainable_params
        set_trainable_params(model, get_adapter_params(model))
    if ns.compile:
        training.compile_model(model)
    if ns.recompute == "full":
        training.set_activation_checkpointing(model, auto_wrap_policy={modules.TransformerSelfAttentionLayer})
    return model


def optimizer_for(ns, model):
    """The optimizer as the recipe sets it up; None when its steps run inside the backward pass."""
    import torch
    from torchtune import training

    def make(params):
        if ns.optimizer == "adamw_8bit_paged":
            import bitsandbytes as bnb
            return bnb.optim.PagedAdamW8bit(params, lr=2e-5)
        return torch.optim.AdamW(params, lr=2e-5, fused=ns.optimizer == "adamw" or None)
    params = [p for p in model.parameters() if p.requires_grad]
    if ns.optimizer_in_backward:
        training.register_optim_in_bwd_hooks(model=model, optim_dict={p: make([p]) for p in params})
        return None
    return make(params)


def main(argv=None) -> int:
    ns = parse(argv)
    import torch
    from torchtune import training
    from torchtune.modules.loss import CEWithChunkedOutputLoss
    began = time.perf_counter()
    model = build(ns)
    opt = optimizer_for(ns, model)
    loss_fn = CEWithChunkedOutputLoss()
    model.set_num_output_chunks(loss_fn.num_output_chunks)
    if ns.compile:
        training.compile_loss(loss_fn)
    vocab = model.output.out_features if hasattr(model.output, "out_features") else 128_256
    tokens = torch.randint(0, vocab, (ns.micro_batch, ns.seq_len), device=ns.device)
    ignore = torch.full((ns.micro_batch, 1), loss_fn.ignore_index, device=ns.device, dtype=tokens.dtype)
    labels = torch.hstack((tokens[..., 1:], ignore))  # the recipe's shift: no slicing of the logits
    print(f"built in {time.perf_counter() - began:.1f} s", file=sys.stderr, flush=True)
    cuda = torch.device(ns.device).type == "cuda"

    def step():
        logits = model(tokens)
        loss = loss_fn(logits, labels)
        del logits  # the recipe frees the logits before the backward pass
        loss.backward()
        if opt is not None:
            opt.step()
            opt.zero_grad(set_to_none=True)
    timed, oom = time_steps(step, ns.warmup, ns.steps, cuda)
    free, total = torch.cuda.mem_get_info() if cuda else (0, 0)
    peak = torch.cuda.max_memory_allocated() if cuda else 0
    row = {"model": ns.model_name, "gpu": ns.gpu or (torch.cuda.get_device_name(0) if cuda else "cpu"), "n_gpus": 1, "method": ns.method,
           "precision": "bf16_pure", "optimizer": ns.optimizer, "optimizer_in_backward": int(ns.optimizer_in_backward),
           "recompute": ns.recompute, "sharding": "none", "seq_len": ns.seq_len, "micro_batch": ns.micro_batch,
           "fused_loss": 1, "compile": int(ns.compile), "lora_rank": ns.lora_rank, "lora_targets": ns.lora_targets,
           "framework": "torchtune",
           "train_tokens_per_s": None if oom or not timed else ns.steps * ns.micro_batch * ns.seq_len / timed,
           "allocator_peak_train_gib": peak / GIB,
           "reserved_peak_train_gib": (torch.cuda.max_memory_reserved() if cuda else 0) / GIB,
           "device_used_gib": (total - free) / GIB, "device_total_gib": total / GIB, "out_of_memory": oom,
           "versions": {"torch": torch.__version__, **versions(("torchtune", "torchao", "bitsandbytes"))}}
    return emit(row)


if __name__ == "__main__":
    sys.exit(main())
