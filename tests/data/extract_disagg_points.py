"""Build tests/data/serving_points_disagg.csv from NVIDIA AIConfigurator's measured disaggregated serving points.

Source: NVIDIA, AIConfigurator 0.12.0 (the Python package aiconfigurator-core 0.12.0 on PyPI,
https://pypi.org/project/aiconfigurator-core/, https://github.com/ai-dynamo/aiconfigurator), file
aiconfigurator_core/systems/silicon_sample.csv, Apache License 2.0.  Kept: disaggregated serving (prefill and decode
workers apart, NVIDIA Dynamo), models whose architecture the model catalog holds, one replica per server (workers of
at most 8 GPUs).  Usage:
    python tests/data/extract_disagg_points.py PATH/TO/silicon_sample.csv
"""
import csv
import re
import sys
from pathlib import Path

from extract_serving_points import FORMATS, GPUS, MODELS, NEW_MODEL_PATHS, number, write_points

COLUMNS = ("id", "engine", "model", "gpu", "weights_dtype", "kv_dtype", "prompt_tokens", "output_tokens", "concurrency",
           "prefill_workers", "prefill_tp", "prefill_attention_dp", "decode_workers", "decode_tp", "decode_attention_dp",
           "ttft_ms", "tpot_ms", "as_of")


def main(path: str) -> None:
    out, seen = [], set()
    with open(path, newline="", encoding="utf-8") as fh:
        for r in csv.DictReader(fh):
            # the 2026 architectures' disaggregated rows (Kimi-K2.5, GLM-5 on GB200) are not kept: the aggregated check
            # holds them (core/serving_calibration.py NEW_MODELS)
            if r["mode"] != "disagg" or r["model_path"] not in MODELS or r["model_path"] in NEW_MODEL_PATHS:
                continue
            if number(r["prefill_pp_size"]) != 1 or number(r["decode_pp_size"]) != 1:
                continue
            ptp, padp = number(r["prefill_tp_size"]), number(r["prefill_attention_dp_size"])
            dtp, dadp = number(r["decode_tp_size"]), number(r["decode_attention_dp_size"])
            if ptp * padp > 8 or dtp * dadp > 8:
                continue
            meta = r["silicon_data_source"]
            conc = re.search(r"silicon_concurrency=(\d+)", meta)
            date = re.search(r"measured=(\d{4}-\d{2}-\d{2})", meta)
            model, fmt = MODELS[r["model_path"]], FORMATS[r["precision"]]
            if model == "gpt-oss-120b" and fmt == "nvfp4":
                fmt = "mxfp4"
            row = {"id": r["id"], "engine": r["backend"], "model": model, "gpu": GPUS[r["system"]], "weights_dtype": fmt,
                   "kv_dtype": "fp8" if fmt in ("fp8", "nvfp4", "mxfp4") else "bf16", "prompt_tokens": r["isl"],
                   "output_tokens": r["osl"], "concurrency": int(conc.group(1)) if conc else "",
                   "prefill_workers": number(r["prefill_num_workers"]), "prefill_tp": ptp, "prefill_attention_dp": padp,
                   "decode_workers": number(r["decode_num_workers"]), "decode_tp": dtp, "decode_attention_dp": dadp,
                   "ttft_ms": f"{float(r['silicon_ttft_ms']):.4g}", "tpot_ms": f"{float(r['silicon_tpot_ms']):.4g}",
                   "as_of": date.group(1) if date else "2026-04-27"}
            key = tuple(row[c] for c in COLUMNS if c not in ("id", "as_of"))
            if row["concurrency"] != "" and key not in seen:
                seen.add(key)
                out.append(row)
    write_points(Path(__file__).resolve().parent / "serving_points_disagg.csv", COLUMNS, out)


if __name__ == "__main__":
    main(sys.argv[1])
