"""Rebuild core/data/serving_points.csv from NVIDIA AIConfigurator's measured serving points.

Source: NVIDIA, AIConfigurator 0.12.0 (the Python package aiconfigurator-core 0.12.0 on PyPI,
https://pypi.org/project/aiconfigurator-core/, https://github.com/ai-dynamo/aiconfigurator), file
aiconfigurator_core/systems/silicon_sample.csv, Apache License 2.0.  Kept: aggregated serving (one engine
does prefill and decode), models whose architecture the model catalog holds.  Usage:
    python tests/data/extract_serving_points.py PATH/TO/silicon_sample.csv
"""
import csv
import re
import sys
from pathlib import Path

MODELS = {"meta-llama/Llama-3.1-70B": "Llama-3.1-70B", "meta-llama/Llama-3.1-8B-Instruct": "Llama-3.1-8B",
          "nvidia/Llama-3.1-8B-Instruct-FP8": "Llama-3.1-8B", "Qwen/Qwen3-32B": "Qwen3-32B", "nvidia/Qwen3-32B-NVFP4": "Qwen3-32B",
          "Qwen/Qwen3-235B-A22B-FP8": "Qwen3-235B-A22B", "deepseek-ai/DeepSeek-R1": "DeepSeek-V3",
          "deepseek-ai/DeepSeek-V3": "DeepSeek-V3", "nvidia/DeepSeek-R1-NVFP4": "DeepSeek-V3",
          "nvidia/DeepSeek-V3.1-NVFP4": "DeepSeek-V3", "openai/gpt-oss-120b": "gpt-oss-120b",
          # 2026 architectures, a held-out check of the engine factors (core/serving_calibration.py NEW_MODELS)
          "MiniMaxAI/MiniMax-M2.5": "MiniMax-M2.5", "Qwen/Qwen3.5-397B-A17B": "Qwen3.5-397B-A17B",
          "moonshotai/Kimi-K2.5": "Kimi-K2.5", "zhipuai/GLM-5": "GLM-5"}
NEW_MODEL_PATHS = ("MiniMaxAI/MiniMax-M2.5", "Qwen/Qwen3.5-397B-A17B", "moonshotai/Kimi-K2.5", "zhipuai/GLM-5")
GPUS = {"h100_sxm": "H100-SXM", "h200_sxm": "H200-SXM", "b200_sxm": "B200", "gb200": "GB200", "b300_sxm": "B300", "gb300": "GB300"}
FORMATS = {"fp4": "nvfp4", "fp8": "fp8", "int4": "int4_awq", "bf16": "bf16", "": "bf16"}
COLUMNS = ("id", "engine", "engine_version", "model", "checkpoint", "gpu", "weights_dtype", "kv_dtype", "prompt_tokens",
           "output_tokens", "concurrency", "tensor_parallel", "attention_dp", "expert_parallel", "ttft_ms", "tpot_ms",
           "as_of", "source")


def number(text):
    return int(text) if text not in ("", None) and int(text) > 0 else 1


def main(path: str) -> None:
    out = []
    with open(path, newline="", encoding="utf-8") as fh:
        for r in csv.DictReader(fh):
            if r["mode"] != "agg" or r["model_path"] not in MODELS or int(r["pp_size"] or 1) != 1:
                continue
            meta = r["silicon_data_source"]
            conc = re.search(r"silicon_concurrency=(\d+)", meta)
            adp = number(r["attention_dp_size"])
            concurrency = int(conc.group(1)) if conc else int(r["batch_size"]) * adp
            date = re.search(r"measured=(\d{4}-\d{2}-\d{2})", meta)
            model = MODELS[r["model_path"]]
            fmt = FORMATS[r["precision"]]
            if model == "gpt-oss-120b" and fmt == "nvfp4":
                fmt = "mxfp4"  # gpt-oss ships its experts in MXFP4, which the engines run as they are
            if model == "Kimi-K2.5" and fmt == "int4_awq":
                fmt = "int4_gptq"  # Kimi K2.5 is released in INT4 (group-wise weights, 16-bit activations), run as released
            out.append({"id": r["id"], "engine": r["backend"], "engine_version": r["backend_version"], "model": model,
                        "checkpoint": r["model_path"], "gpu": GPUS[r["system"]], "weights_dtype": fmt,
                        "kv_dtype": "fp8" if fmt in ("fp8", "nvfp4", "mxfp4") else "bf16",
                        "prompt_tokens": r["isl"], "output_tokens": r["osl"], "concurrency": concurrency,
                        "tensor_parallel": number(r["tp_size"]), "attention_dp": adp,
                        "expert_parallel": number(r["moe_ep_size"]),
                        "ttft_ms": f"{float(r['silicon_ttft_ms']):.4g}", "tpot_ms": f"{float(r['silicon_tpot_ms']):.4g}",
                        "as_of": date.group(1) if date else "2026-04-27", "source": "aiconfigurator_silicon"})
    # the same measurement is listed under several checkpoint names (DeepSeek-R1 and -V3): keep it once
    seen, unique = set(), []
    for row in out:
        key = tuple(row[c] for c in COLUMNS if c not in ("id", "checkpoint", "as_of", "source"))
        if key not in seen:
            seen.add(key)
            unique.append(row)
    out = unique
    write_points(Path(__file__).resolve().parents[2] / "core" / "data" / "serving_points.csv", COLUMNS, out)


def write_points(target: Path, columns, rows: list) -> None:
    """The extracted points as a CSV file (one row a point), and a line saying how many went where."""
    with open(target, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, columns, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    print(f"{len(rows)} points -> {target}")


if __name__ == "__main__":
    main(sys.argv[1])
