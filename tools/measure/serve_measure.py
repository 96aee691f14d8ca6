"""Measure prefill and decode of one model with Hugging Face transformers' eager generate on the GPU at hand.

This is the engine gpu-tco calls `transformers` (eager Hugging Face generate, no paged cache, no CUDA graphs). Random
weights are enough for speed: the model is built from a Hugging Face config.json (no download). The script prints one
JSON object per line (JSON Lines), each with gpu-tco's input names and what was measured:

- kind "prefill": one forward pass over `prompt_tokens` tokens (batch 1, only the last position's logits, as a server
  computes them), `prefill_ms` the median of the timed passes;
- kind "decode": `model.generate` of `output_tokens` new tokens after a prompt of `prompt_tokens` tokens for `batch`
  sequences at once, greedy; `tpot_ms` is the time per output token after the first:
  (time of generate(1 + n) - time of generate(1)) / n, so the prefill and the first token are left out.

    python tools/measure/serve_measure.py --config tests/data/hf_configs/Llama-3.1-8B/config.json \\
        --model-name Llama-3.1-8B --gpu H200-SXM > serve_rows.jsonl

It needs a GPU, torch and transformers. Nothing here runs in the test suite.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time


def parse(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--config", required=True, help="path of a Hugging Face config.json (or its folder)")
    p.add_argument("--model-name", required=True, help="the gpu-tco model name to report")
    p.add_argument("--gpu", required=True, help="the gpu-tco GPU name to report")
    p.add_argument("--prefill-tokens", default="512,2048,8192,32768", help="prompt lengths of the prefill passes")
    p.add_argument("--decode-batches", default="1,8,32", help="sequences decoded at once")
    p.add_argument("--decode-prompt", type=int, default=512, help="prompt tokens before decoding")
    p.add_argument("--decode-tokens", type=int, default=128, help="output tokens timed per generate")
    p.add_argument("--attn", default="sdpa")
    return p.parse_args(argv)


def _timed(fn, repeats: int) -> float:
    import torch
    times = []
    for _ in range(repeats):
        torch.cuda.synchronize()
        start = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(argv=None) -> int:
    ns = parse(argv)
    import torch
    import transformers
    from transformers import AutoConfig, AutoModelForCausalLM
    config = AutoConfig.from_pretrained(ns.config)
    with torch.device("cuda"):
        model = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16, attn_implementation=ns.attn)
    model.eval()
    vocab = config.vocab_size
    common = {"model": ns.model_name, "gpu": ns.gpu, "n_gpus": 1, "engine": "transformers", "weight_dtype": "bf16",
              "attention": ns.attn, "versions": {"torch": torch.__version__, "transformers": transformers.__version__}}
    with torch.inference_mode():
        for n in (int(x) for x in ns.prefill_tokens.split(",") if x):
            ids = torch.randint(0, vocab, (1, n), device="cuda")
            run = lambda ids=ids: model(input_ids=ids, use_cache=False, logits_to_keep=1)  # noqa: E731
            _timed(run, 2)  # warm-up: kernels chosen, allocator grown
            ms = _timed(run, 5) * 1e3
            print(json.dumps({**common, "kind": "prefill", "prompt_tokens": n, "batch": 1, "prefill_ms": ms}), flush=True)
        for batch in (int(x) for x in ns.decode_batches.split(",") if x):
            ids = torch.randint(0, vocab, (batch, ns.decode_prompt), device="cuda")
            mask = torch.ones_like(ids)

            def generate(new_tokens, ids=ids, mask=mask):
                return lambda: model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=new_tokens,
                                              min_new_tokens=new_tokens, do_sample=False, pad_token_id=0)
            _timed(generate(8), 1)
            first = _timed(generate(1), 3)
            whole = _timed(generate(1 + ns.decode_tokens), 2)
            tpot_ms = (whole - first) / ns.decode_tokens * 1e3
            print(json.dumps({**common, "kind": "decode", "prompt_tokens": ns.decode_prompt, "batch": batch,
                              "output_tokens": ns.decode_tokens, "ttft_ms": first * 1e3, "tpot_ms": tpot_ms}),
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
