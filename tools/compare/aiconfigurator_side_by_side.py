"""gpu-tco beside NVIDIA AIConfigurator on six serving workloads, and beside NVIDIA's measured points where they exist.

Not part of gpu-tco and not a test dependency: a comparison run by hand.  AIConfigurator (the PyPI packages
``aiconfigurator`` and ``aiconfigurator-core`` 0.12.0, Apache License 2.0, NVIDIA, https://github.com/ai-dynamo/aiconfigurator)
estimates serving layouts from its database of measured kernels; install it in a virtual environment of its own:

    python3 -m venv /work/aicvenv && /work/aicvenv/bin/pip install aiconfigurator
    .venv/bin/python tools/compare/aiconfigurator_side_by_side.py --aiconfigurator /work/aicvenv/bin/aiconfigurator \\
        --out /tmp/aic-runs            # runs `aiconfigurator cli default` six times (a minute or two each), then compares
    .venv/bin/python tools/compare/aiconfigurator_side_by_side.py --out /tmp/aic-runs --no-run    # compare saved runs

For each workload (8 GPUs, 4,000 prompt + 1,000 output tokens, first token within 2,000 ms, 20 ms per token,
TensorRT-LLM) it prints a Markdown table: AIConfigurator's best aggregated and disaggregated configuration (output
tokens/s per GPU and tokens/s per user), gpu-tco at AIConfigurator's aggregated layout and concurrency, gpu-tco's own
best aggregated point and its disaggregated estimate within the same targets, and the measured points of
core/data/serving_points.csv with the same model, GPU, engine, weight format and prompt/output lengths.
"""
from __future__ import annotations

import argparse
import csv
import subprocess
import sys
from pathlib import Path

import numpy as np

from gpu_tco import core

ISL, OSL, TTFT_MS, TPOT_MS, GPUS = 4000, 1000, 2000.0, 20.0, 8
# (name, gpu-tco model, weight format, AIConfigurator model path, AIConfigurator system, gpu-tco GPU)
WORKLOADS = (
    ("llama31_8b_bf16", "Llama-3.1-8B", "bf16", "meta-llama/Meta-Llama-3.1-8B", "h200_sxm", "H200-SXM"),
    ("llama31_70b_bf16", "Llama-3.1-70B", "bf16", "meta-llama/Meta-Llama-3.1-70B", "h200_sxm", "H200-SXM"),
    ("llama31_70b_fp8", "Llama-3.1-70B", "fp8", "nvidia/Llama-3.1-70B-Instruct-FP8", "h200_sxm", "H200-SXM"),
    ("qwen3_32b_fp8", "Qwen3-32B", "fp8", "Qwen/Qwen3-32B-FP8", "h100_sxm", "H100-SXM"),
    ("qwen3_30b_a3b_bf16", "Qwen3-30B-A3B", "bf16", "Qwen/Qwen3-30B-A3B", "h200_sxm", "H200-SXM"),
    ("deepseek_v3_fp8", "DeepSeek-V3", "fp8", "deepseek-ai/DeepSeek-V3", "h200_sxm", "H200-SXM"),
)
CONCURRENCIES = np.unique(np.round(np.geomspace(1, 1024, 61))).astype(int)
POINTS = Path(__file__).resolve().parents[2] / "core" / "data" / "serving_points.csv"


def run_aiconfigurator(exe: str, out: Path, name: str, path: str, system: str) -> None:
    cmd = [exe, "cli", "default", "--model-path", path, "--total-gpus", str(GPUS), "--system", system, "--backend", "trtllm",
           "--isl", str(ISL), "--osl", str(OSL), "--ttft", str(TTFT_MS), "--tpot", str(TPOT_MS), "--save-dir", str(out / name)]
    with open(out / f"{name}.log", "w") as log:
        subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, check=False, timeout=1800)


def best_rows(out: Path, name: str) -> dict:
    """{"agg": row, "disagg": row} of AIConfigurator's best_config_topn.csv (first row: the best tokens/s/gpu)."""
    found = {}
    for mode in ("agg", "disagg"):
        files = sorted((out / name).glob(f"*/*/{mode}/best_config_topn.csv"))
        if files:
            with open(files[-1], newline="") as fh:
                rows = list(csv.DictReader(fh))
            if rows:
                found[mode] = rows[0]
    return found


def _job(model, dtype, gpu, kv="bf16"):
    return {"task": "serve", "model": model, "gpu": gpu, "weights_dtype": dtype, "kv_dtype": kv, "engine": "trtllm",
            "prompt_tokens": ISL, "output_tokens": OSL, "requests_per_s": 1, "max_num_seqs": 100_000}


def at_point(job: dict, tp: int, adp: int, conc: int) -> dict:
    r = core.evaluate({**job, "n_gpus": tp * adp, "attention_dp": adp, "concurrency": conc, "max_num_seqs": conc,
                       "ttft_slo_ms": 0, "tpot_slo_ms": 0},
                      outputs=("load_output_tokens_per_s_per_gpu", "load_tokens_per_s_per_user", "load_ttft_ms", "load_tpot_ms"))
    return {k: float(v) for k, v in r.items()}


def own_best(job: dict, moe: bool) -> dict:
    """gpu-tco's best aggregated point within the targets over GPUs per replica (and attention data parallel for MoE)."""
    best = None
    layouts = [(t, 1) for t in (1, 2, 4, 8)] + ([(1, 8), (2, 4)] if moe else [])
    for tp, adp in layouts:
        n = len(CONCURRENCIES)
        r = core.evaluate({**job, "n_gpus": np.full(n, tp * adp), "attention_dp": np.full(n, adp), "concurrency": CONCURRENCIES,
                           "max_num_seqs": CONCURRENCIES, "ttft_slo_ms": 0, "tpot_slo_ms": 0},
                          outputs=("load_output_tokens_per_s_per_gpu", "load_tokens_per_s_per_user", "load_ttft_ms",
                                   "load_tpot_ms", "serve_kv_batch", "serve_fits"))
        r = {k: np.broadcast_to(np.asarray(v, dtype=float), (n,)) for k, v in r.items()}
        for j, c in enumerate(CONCURRENCIES):
            if r["serve_kv_batch"][j] >= c and r["load_tpot_ms"][j] <= TPOT_MS and r["load_ttft_ms"][j] <= TTFT_MS:
                tps = r["load_output_tokens_per_s_per_gpu"][j]
                if best is None or tps > best["tps_gpu"]:
                    best = {"tps_gpu": tps, "tps_user": r["load_tokens_per_s_per_user"][j], "tp": tp, "adp": adp, "conc": int(c)}
    return best or {}


def own_disagg(job: dict) -> dict:
    """gpu-tco's disaggregated estimate within the targets: x prefill and y decode replicas of tp GPUs filling the 8 GPUs
    (whole replicas, as AIConfigurator counts workers), the best x, y and tp; and the ideal-ratio figure
    (disagg_output_tokens_per_s_per_gpu) beside it."""
    best = None
    for tp in (1, 2, 4):
        r = core.evaluate({**job, "n_gpus": tp, "serving_layout": 2, "ttft_slo_ms": TTFT_MS, "tpot_slo_ms": TPOT_MS},
                          outputs=("disagg_ok", "disagg_output_tokens_per_s_per_gpu", "disagg_decode_step_s", "disagg_decode_batch",
                                   "disagg_prefill_replica_requests_per_s", "disagg_decode_replica_requests_per_s"))
        if not r["disagg_ok"]:
            continue
        p_rps, d_rps = float(r["disagg_prefill_replica_requests_per_s"]), float(r["disagg_decode_replica_requests_per_s"])
        slots = GPUS // tp
        for x in range(1, slots):
            y = slots - x
            tps = min(x * p_rps, y * d_rps) * OSL / GPUS
            if best is None or tps > best["tps_gpu"]:
                best = {"tps_gpu": tps, "tps_user": 1 / float(r["disagg_decode_step_s"]), "tp": tp, "x": x, "y": y,
                        "batch": int(r["disagg_decode_batch"]), "ideal": float(r["disagg_output_tokens_per_s_per_gpu"])}
    return best or {}


def measured(model: str, gpu: str, dtype: str) -> list[dict]:
    with open(POINTS, newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["model"] == model and r["gpu"] == gpu and r["engine"] == "trtllm"
                and r["weights_dtype"] == dtype and float(r["prompt_tokens"]) == ISL and float(r["output_tokens"]) == OSL]
    out = []
    for r in rows:
        tp, adp, conc = int(r["tensor_parallel"]), int(r["attention_dp"]), int(float(r["concurrency"]))
        ttft, tpot = float(r["ttft_ms"]), float(r["tpot_ms"])
        out.append({"tp": tp, "adp": adp, "conc": conc, "ttft": ttft, "tpot": tpot, "kv": r["kv_dtype"],
                    "tps_gpu": conc * OSL / ((ttft + (OSL - 1) * tpot) / 1000) / (tp * adp), "tps_user": 1000 / tpot})
    return out


def _f(x, digits=0):
    return "-" if x is None or x != x else f"{x:,.{digits}f}"


def compare(out: Path) -> str:
    head = ("| workload (8 GPUs, TensorRT-LLM) | AIC agg: layout, conc | AIC agg tok/s/GPU, tok/s/user | gpu-tco at AIC's agg layout "
            "| gpu-tco best agg: layout, conc | gpu-tco best agg | AIC disagg: xPyD | AIC disagg tok/s/GPU, tok/s/user "
            "| gpu-tco disagg: tok/s/GPU, tok/s/user (xPyD, decode bs) | AIC best / gpu-tco best |")
    lines = [head, "|" + "|".join(["---"] * (head.count("|") - 1)) + "|"]
    notes = []
    for name, model, dtype, _path, _system, gpu in WORKLOADS:
        rows = best_rows(out, name)
        agg, dis = rows.get("agg"), rows.get("disagg")
        kv = "fp8" if agg and agg.get("kvcache", "").startswith("fp8") else "bf16"
        job = _job(model, dtype, gpu, kv)
        moe = float(core.catalog.tables()["models"].row(model)["experts"]) > 1
        cells = [f"{model} {dtype} on {gpu}, kv {kv}"]
        if agg:
            # one replica of tp x dp GPUs (num_total_gpus) holding `concurrency` requests
            tp, dp, conc = int(agg["tp"]), int(agg["dp"]), int(float(agg["concurrency"]))
            mine = at_point(job, tp, dp, conc)
            cells += [f"tp{tp} dp{dp}, conc {conc}", f"{_f(float(agg['tokens/s/gpu']))}, {_f(float(agg['tokens/s/user']), 1)}",
                      f"{_f(mine['load_output_tokens_per_s_per_gpu'])}, {_f(mine['load_tokens_per_s_per_user'], 1)} "
                      f"(TTFT {_f(mine['load_ttft_ms'])} ms, TPOT {_f(mine['load_tpot_ms'], 1)} ms)"]
        else:
            cells += ["no result", "-", "-"]
        best = own_best(job, moe)
        cells += [f"tp{best['tp']} dp{best['adp']}, conc {best['conc']}" if best else "none within the targets",
                  f"{_f(best.get('tps_gpu'))}, {_f(best.get('tps_user'), 1)}" if best else "-"]
        if dis:
            cells += [f"{dis['(p)workers']}P(tp{dis['(p)tp']}) {dis['(d)workers']}D(tp{dis['(d)tp']}, bs {dis['(d)bs']})",
                      f"{_f(float(dis['tokens/s/gpu']))}, {_f(float(dis['tokens/s/user']), 1)}"]
        else:
            cells += ["no result", "-"]
        mine_d = own_disagg(job)
        cells += [f"{_f(mine_d.get('tps_gpu'))}, {_f(mine_d.get('tps_user'), 1)} ({mine_d['x']}P {mine_d['y']}D tp{mine_d['tp']}, "
                  f"bs {mine_d['batch']}; ideal ratio {_f(mine_d['ideal'])})" if mine_d else "none within the targets"]
        aic_best = max([float(r["tokens/s/gpu"]) for r in (agg, dis) if r] or [float("nan")])
        own = max([best.get("tps_gpu", float("nan")), mine_d.get("tps_gpu", float("nan"))])
        cells.append(f"{aic_best / own:.2f}" if own == own and own > 0 and aic_best == aic_best else "-")
        lines.append("| " + " | ".join(cells) + " |")
        for m in measured(model, gpu, dtype):
            mine = at_point({**job, "kv_dtype": m["kv"]}, m["tp"], m["adp"], m["conc"])
            notes.append(f"| {model} {dtype} on {gpu} | tp{m['tp']} dp{m['adp']}, conc {m['conc']} | {_f(m['tps_gpu'])}, "
                         f"{_f(m['tps_user'], 1)} (TTFT {_f(m['ttft'])} ms, TPOT {_f(m['tpot'], 1)} ms) | "
                         f"{_f(mine['load_output_tokens_per_s_per_gpu'])}, {_f(mine['load_tokens_per_s_per_user'], 1)} "
                         f"(TTFT {_f(mine['load_ttft_ms'])} ms, TPOT {_f(mine['load_tpot_ms'], 1)} ms) |")
    text = "\n".join(lines)
    if notes:
        text += ("\n\nNVIDIA's measured points with the same model, GPU, engine, weight format and prompt/output lengths "
                 "(output tokens/s per GPU by Little's law from the measured TTFT and TPOT):\n\n"
                 "| workload | layout, concurrency | measured tok/s/GPU, tok/s/user | gpu-tco at the same point |\n"
                 "|---|---|---|---|\n" + "\n".join(notes))
    return text


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--aiconfigurator", default="aiconfigurator", help="the aiconfigurator executable")
    ap.add_argument("--out", default="/tmp/aic-runs", help="folder for AIConfigurator's results")
    ap.add_argument("--no-run", action="store_true", help="compare results already in --out")
    ns = ap.parse_args(argv)
    out = Path(ns.out)
    out.mkdir(parents=True, exist_ok=True)
    if not ns.no_run:
        for name, _model, _dtype, path, system, _gpu in WORKLOADS:
            run_aiconfigurator(ns.aiconfigurator, out, name, path, system)
    print(compare(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
