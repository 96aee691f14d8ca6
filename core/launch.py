"""The command that starts a serving setup with its engine: ``vllm serve ...``, SGLang, TensorRT-LLM, llama.cpp, transformers.

Each engine's command is a template in the engines catalog (data/engines.csv, column ``launch``), filled here from the
setup: the model's Hugging Face id (its instruction-tuned release among the model row's aliases, else the first alias with
an organisation, else its name), GPUs per
replica (tensor parallel), the most sequences in one batch, the prefill chunk, the KV-cache format and the weight
format.  Flag names: vLLM [vllm_engine_args], SGLang [sglang_server_args], TensorRT-LLM [trtllm_serve], llama.cpp
[llamacpp_server].
"""
from __future__ import annotations

from typing import Mapping

from . import catalog
from .engine import evaluate, release_weights_dtype, resolve_inputs, row_of
from .names import split_weight_format

# weight formats engines apply to a 16-bit checkpoint themselves (a pre-quantized checkpoint needs no flag)
QUANT_FLAGS = {"vllm": {"fp8": " --quantization fp8", "int4_awq": " --quantization awq", "int4_gptq": " --quantization gptq"},
               "sglang": {"fp8": " --quantization fp8", "int4_awq": " --quantization awq", "int4_gptq": " --quantization gptq"},
               "trtllm": {}}
PREQUANTIZED = {"nvfp4": "an NVFP4 checkpoint (e.g. NVIDIA's -NVFP4 or -FP4 releases)", "mxfp4": "an MXFP4 checkpoint",
                "int4_awq": "an AWQ checkpoint", "int4_gptq": "a GPTQ checkpoint"}


GGUF_NAMES = {"bf16": "BF16", "fp16": "F16", "fp8": "Q8_0", "int8": "Q8_0", "int4_awq": "Q4_K_M", "int4_gptq": "Q4_K_M",
              "nf4": "Q4_K_M", "mxfp4": "MXFP4"}


MODEL_PLACEHOLDER = "MODEL"  # in the command of a model outside the catalog: its Hugging Face id or local folder
FP8_PLACEHOLDER = "FP8_CHECKPOINT"  # an FP8 checkpoint, where the 16-bit one does not fit to be quantized as it loads


def hf_id(model, chat: bool = False, weights: str | None = None) -> str:
    """The model's Hugging Face id: the first alias with an organisation that names no weight format
    ("meta-llama/Meta-Llama-3-70B"), else the name.
    ``chat``: the instruction-tuned release when the catalog lists one among the aliases ("meta-llama/Meta-Llama-3-70B-Instruct":
    what a deployment answering requests serves; a base checkpoint only continues text), else the same id.
    ``weights``: a weight format whose release to prefer where the aliases list one ("fp8": its publisher's -FP8
    release); an alias naming a format is never returned for another.
    ``model``: a catalog name, or a model's row (an architecture outside the catalog, estimated from a parameter count
    or given as fields, has no id: MODEL_PLACEHOLDER stands for it)."""
    row = model if isinstance(model, Mapping) else catalog.tables()["models"].row(model)
    ids = [a.strip() for a in str(row.get("aliases", "") or "").split(";") if "/" in a]
    formatted = {a: split_weight_format(a.rsplit("/", 1)[-1])[1] for a in ids}
    # a release in a weight format only where that format is asked for ("meta-llama/Llama-3.1-405B-Instruct-FP8")
    ids = [a for a in ids if formatted[a] == weights] + [a for a in ids if formatted[a] is None] if weights else \
        [a for a in ids if formatted[a] is None]
    if chat:
        tuned = [a for a in ids if any(s.lower() in catalog.CHAT_SUFFIXES for s in catalog.base_model_name(a)[1])]
        ids = [a for a in tuned if formatted[a] == weights] + tuned + ids
    if ids:
        return ids[0]
    if isinstance(model, Mapping) and str(row.get("name", "")) not in catalog.tables()["models"].names:
        return MODEL_PLACEHOLDER
    return str(row["name"])


ENGINE_MEMORY_DEFAULT = 0.9  # vLLM's gpu_memory_utilization default [vllm_engine_args]


def memory_flag(r: Mapping, flag: str) -> str:
    """`` --flag 0.95`` when the plan's gpu_memory_utilization is not the engine default (0.9), else ""."""
    share = float(r["gpu_memory_utilization"])
    return "" if abs(share - ENGINE_MEMORY_DEFAULT) < 1e-9 else f"{flag} {share:g}"


def _max_model_len(job: Mapping, r: Mapping) -> int:
    """The longest request (prompt and output tokens) one replica's KV cache holds at a batch of one
    (``max_context_fit``), rounded down to a multiple of 1,024 but never below the planned request, where that is
    less than the model's own context (``max_context``); else 0 (the engine's default, the model's context, fits).
    vLLM refuses to start when one request of its maximum length does not fit the KV cache [vllm_engine_args]."""
    model_context = int(float(row_of(r, "model").get("max_context") or 0))
    fit = int(evaluate({**job, "batch": 1}, outputs=("max_context_fit",))["max_context_fit"])
    if model_context <= 0 or fit <= 0 or fit >= model_context:
        return 0
    planned = int(float(r["prompt_tokens"]) + float(r["output_tokens"]))
    rounded = fit // 1024 * 1024
    return rounded if rounded >= planned else min(fit, max(planned, rounded))


def launch_command(job: Mapping) -> dict:
    """{"engine", "command", "note"}: the command line that starts ``job``'s setup (inputs as for ``evaluate``: model,
    n_gpus = GPUs per replica, weights_dtype, kv_dtype, max_num_seqs = the batch, prefill_chunk_tokens, prompt and
    output tokens, engine).  ``note`` says what the command assumes (a pre-quantized checkpoint, one per replica)."""
    job = dict(job)
    if "weights_dtype" not in job:  # the checkpoint's own format: gpt-oss's MXFP4, DeepSeek-V3's FP8
        release = release_weights_dtype(job.get("model"))
        if release is not None:
            job["weights_dtype"] = release
    r = resolve_inputs(job)
    engine = str(r["engine"])
    row = catalog.tables()["engines"].row(engine)
    fmt, kv = str(r["weights_dtype"]), str(r["kv_dtype"])
    batch = max(1, int(r["max_num_seqs"]))
    model_id = hf_id(row_of(r, "model"), chat=True)
    # The format the model was released in needs no flag: the engine reads it from the checkpoint (gpt-oss's MXFP4,
    # DeepSeek-V3's FP8).  FP8 weights come from the publisher's FP8 release where the aliases list one (its scales
    # calibrated by the publisher), read as it is; else the engine quantizes the 16-bit checkpoint as it loads, which
    # reads it whole first [vllm_fp8]: where those weights do not fit the replica's GPUs, the command names an FP8
    # checkpoint (FP8_PLACEHOLDER) instead.
    released = fmt == release_weights_dtype(str(r["model"]))
    fp8_release = hf_id(row_of(r, "model"), chat=True, weights="fp8") if fmt == "fp8" and not released else ""
    publisher_fp8 = split_weight_format(fp8_release.rsplit("/", 1)[-1])[1] == "fp8" if fp8_release else False
    if publisher_fp8:
        model_id = fp8_release
    online = fmt == "fp8" and fmt in QUANT_FLAGS.get(engine, {}) and not (released or publisher_fp8)
    sixteen_bit_gib = room_gib = 0.0
    if online and model_id != MODEL_PLACEHOLDER:
        sized = evaluate({**job, "weights_dtype": "bf16"}, outputs=("infer_weights_gib", "gpu_memory_gib"))
        sixteen_bit_gib = float(sized["infer_weights_gib"])
        room_gib = float(sized["gpu_memory_gib"]) * float(r["gpu_memory_utilization"])
    fp8_checkpoint = online and sixteen_bit_gib > room_gib
    max_len = _max_model_len(job, r)
    values = {"hf_id": FP8_PLACEHOLDER if fp8_checkpoint else model_id, "tp": int(r["n_gpus"]), "max_num_seqs": batch,
              "chunk": int(r["prefill_chunk_tokens"]),
              "kv_dtype_vllm": "fp8" if kv == "fp8" else "auto", "kv_dtype_sglang": "fp8_e4m3" if kv == "fp8" else "auto",
              "quant_vllm": "" if fp8_checkpoint or released or publisher_fp8 else QUANT_FLAGS["vllm"].get(fmt, ""),
              "quant_sglang": "" if fp8_checkpoint or released or publisher_fp8 else QUANT_FLAGS["sglang"].get(fmt, ""),
              "quant_trtllm": "", "gguf_file": f"{r['model']}-{GGUF_NAMES.get(fmt, fmt.upper())}.gguf",
              "ctx_total": int(batch * (float(r["prompt_tokens"]) + float(r["output_tokens"]))),
              # the engine's share of GPU memory the plan assumed, when it is not vLLM's default
              "memory_vllm": memory_flag(r, " --gpu-memory-utilization"),
              "memory_sglang": memory_flag(r, " --mem-fraction-static"),
              # the longest request a replica holds, where it is shorter than the model's own context: an engine that
              # cannot hold one request of the model's whole context refuses to start without it
              "max_len_vllm": f" --max-model-len {max_len}" if max_len else "",
              "max_len_sglang": f" --context-length {max_len}" if max_len else "",
              "max_len_trtllm": f" --max_seq_len {max_len}" if max_len else ""}
    command = str(row["launch"]).format(**values)
    notes = [] if model_id != MODEL_PLACEHOLDER else [f"{MODEL_PLACEHOLDER}: the model's Hugging Face id or local folder"]
    if fp8_checkpoint:
        notes.append(f"{FP8_PLACEHOLDER}: an FP8 checkpoint of {model_id} (its publisher's -FP8 release, or one made with "
                     f"LLM Compressor): its 16-bit weights, {sixteen_bit_gib:,.0f} GiB per GPU, do not fit the replica's GPUs "
                     f"({room_gib:,.0f} GiB each for the engine), and quantizing to FP8 as it loads reads them whole first")
    if max_len and engine in ("vllm", "sglang", "trtllm"):
        notes.append(f"requests up to {max_len:,} tokens (prompt and output): the most one replica's KV cache holds beside "
                     f"its weights, of the {int(float(row_of(r, 'model')['max_context'])):,} the model allows")
    if released:
        notes.append(f"{fmt} weights as the model was released")
    elif publisher_fp8:
        notes.append("the publisher's FP8 release of the model")
    elif fmt in PREQUANTIZED and fmt not in QUANT_FLAGS.get(engine, {}):
        notes.append(f"point it at {PREQUANTIZED[fmt]} of the model")
    if engine == "trtllm" and ((fmt == "fp8" and not released and not publisher_fp8) or kv == "fp8"):
        notes.append("FP8 weights and KV cache come from an FP8 checkpoint (NVIDIA's -FP8 releases or TensorRT Model Optimizer)")
    if engine == "llamacpp":
        notes.append("llama.cpp reads GGUF files; --ctx-size is shared by the --parallel slots")
    if engine == "transformers":
        notes.append("generate() runs one static batch at a time: no continuous batching")
    notes.append("one command per replica")
    return {"engine": engine, "command": command, "note": "; ".join(notes)}
