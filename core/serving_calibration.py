"""Serving engines calibrated on NVIDIA's measured serving points.

``data/serving_points.csv`` holds measured points of aggregated serving (one engine does prefill and decode) from
NVIDIA AIConfigurator 0.12.0 (the package aiconfigurator-core on PyPI, file systems/silicon_sample.csv, Apache
License 2.0): the engine (vLLM, SGLang, TensorRT-LLM), model, GPU, weight format, tensor-parallel size, prompt and
output tokens, the concurrency the benchmark client held, and the measured time to first token (TTFT) and time per
output token (TPOT), both in milliseconds.  Only models the model catalog holds are kept (the file was made by
tests/data/extract_serving_points.py).

``fit`` derives each engine's factors (data/engines.csv: fixed time per decode step and per request, bandwidth and
compute factors, grouped-GEMM efficiency, the queue and interleaved shares of other prompts' prefill) on the H100 and
B200 points only, by iteratively reweighted Gauss-Newton on the logarithm of modelled / measured TPOT and TTFT (the
formulas are ``load_tpot_ms`` and ``load_ttft_ms`` of core/formulas.py, evaluated at each point's concurrency).  The
H200, GB200, B300 and GB300 points are never fitted on: they check how the model carries to other GPUs.  The points of
the 2026 architectures (``NEW_MODELS``: MiniMax-M2.5, Qwen3.5-397B-A17B, Kimi-K2.5, GLM-5), added after the factors were
fitted, are never fitted on either, on any GPU: they check how the model carries to new models.  Points across servers
(more than 8 GPUs in a replica) are not expressed and stay out.
"""
from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np

from . import codecache

DATA = Path(__file__).resolve().parent / "data"
POINTS_PATH = DATA / "serving_points.csv"
ENGINES_PATH = DATA / "engines.csv"
FIT_GPUS = ("H100-SXM", "B200")
# architectures of 2026 whose points arrived after the engine factors were fitted: held out on every GPU
NEW_MODELS = ("MiniMax-M2.5", "Qwen3.5-397B-A17B", "Kimi-K2.5", "GLM-5")
FITTED_ENGINES = ("vllm", "sglang", "trtllm")
# fitted factor -> (input that overrides it, lower bound, upper bound).  The upper bounds keep the engines physical with
# the global efficiencies as calibrated (data/calibrated.csv decode_bandwidth_efficiency and prefill_mfu): at most 90 % of
# peak memory bandwidth (what memory-copy benchmarks reach on HBM) and 80 % of dense peak FLOPS (large GEMMs).
with open(DATA / "calibrated.csv", newline="", encoding="utf-8") as _fh:
    _CALIBRATED = {row["name"]: float(row["value"]) for row in csv.DictReader(_fh)}
PARAMS = {"step_overhead_us_per_layer": ("engine_step_overhead_us_per_layer", 1.0, 1000.0),
          "request_overhead_ms": ("engine_request_overhead_ms", 1.0, 1000.0),
          "bandwidth_factor": ("engine_bandwidth_factor", 0.3, round(0.90 / _CALIBRATED["decode_bandwidth_efficiency"], 2)),
          "compute_factor": ("engine_compute_factor", 0.2, round(0.80 / _CALIBRATED["prefill_mfu"], 2)),
          "grouped_gemm_efficiency": ("grouped_gemm_efficiency", 0.1, 2.0),
          "prefill_queue_share": ("prefill_queue_share", 0.01, 1.5),
          "interleaved_prefill_share": ("interleaved_prefill_share", 0.01, 1.5)}
WITHIN = 0.30       # a TPOT is "within" when |modelled / measured - 1| <= 30 %
SOFT = 0.30         # residuals (log) beyond this weigh less in the fit (soft L1): a few odd points do not steer it
ITERATIONS = 25
TTFT_WEIGHT = 0.5   # TTFT residuals count half: the per-token time is what the fleet is sized on
BAND_PERCENTILES = (10, 90)
BAND_COLUMNS = tuple(f"{q}_{side}_{kind}" for q in ("tpot", "ttft") for kind in ("dense", "moe") for side in ("low", "high"))


def load_points(path=None) -> list[dict]:
    """The measured points, numbers as floats."""
    with open(path or POINTS_PATH, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    for r in rows:
        for k in ("prompt_tokens", "output_tokens", "concurrency", "tensor_parallel", "attention_dp", "expert_parallel",
                  "ttft_ms", "tpot_ms"):
            r[k] = float(r[k])
    return rows


def expressible(point: dict) -> bool:
    """A point the serving model can state: one replica within one server (tensor parallel x attention data parallel
    at most 8 GPUs)."""
    return point["tensor_parallel"] * point["attention_dp"] <= 8


def fit_points(points=None) -> list[dict]:
    """The points the factors are fitted on: H100 and B200, expressible, of the models before ``NEW_MODELS``."""
    return [p for p in (points if points is not None else load_points())
            if p["gpu"] in FIT_GPUS and expressible(p) and p["model"] not in NEW_MODELS]


def held_out_points(points=None) -> list[dict]:
    """The check on other GPUs: the expressible points on H200, GB200, B300 and GB300 of the models fitted on."""
    return [p for p in (points if points is not None else load_points())
            if p["gpu"] not in FIT_GPUS and expressible(p) and p["model"] not in NEW_MODELS]


def new_model_points(points=None) -> list[dict]:
    """The check on new models: the expressible points of ``NEW_MODELS`` on every GPU, none of them fitted on."""
    return [p for p in (points if points is not None else load_points()) if p["model"] in NEW_MODELS and expressible(p)]


def _model_kind(model: str) -> str:
    from . import catalog
    return "moe" if float(catalog.tables()["models"].row(model)["experts"]) > 1 else "dense"


def predict(points: list[dict], factors: dict | None = None, columns: dict | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(TPOT ms, TTFT ms) the formulas give at each point's workload and concurrency: with the engines catalog as
    shipped, or with ``factors`` ({engine: {factor: value}}) in its place for the engines it names.  ``columns``:
    ``point_columns(points)``, built once by a caller that predicts the same points again and again (a fit)."""
    from .engine import evaluate
    if not points:
        return np.zeros(0), np.zeros(0)
    cols = dict(columns if columns is not None else point_columns(points))
    engines = cols.pop("engine names")
    if factors:
        for name, (inp, _lo, _hi) in PARAMS.items():
            per_engine = np.array([float(factors[e][name]) if e in factors else 0.0 for e in engines] + [0.0])
            cols[inp] = per_engine[cols["engine index"]]
    del cols["engine index"]
    r = evaluate(cols, outputs=("load_tpot_ms", "load_ttft_ms"))
    return np.asarray(r["load_tpot_ms"], dtype=float), np.asarray(r["load_ttft_ms"], dtype=float)


def point_columns(points: list[dict]) -> dict:
    """The engine's inputs for ``points`` as columns, with each point's engine as an index into "engine names"."""
    engines = sorted({p["engine"] for p in points})
    return {"model": [p["model"] for p in points], "gpu": [p["gpu"] for p in points],
            "engine": [p["engine"] for p in points],
            "n_gpus": np.array([int(p["tensor_parallel"] * p["attention_dp"]) for p in points]),
            "attention_dp": np.array([int(p["attention_dp"]) for p in points]),
            "weights_dtype": [p["weights_dtype"] for p in points], "kv_dtype": [p["kv_dtype"] for p in points],
            "prompt_tokens": np.array([p["prompt_tokens"] for p in points]),
            "output_tokens": np.array([p["output_tokens"] for p in points]),
            "concurrency": np.array([int(p["concurrency"]) for p in points]),
            "max_num_seqs": np.array([max(1, int(p["concurrency"])) for p in points]),
            "ttft_slo_ms": 0, "tpot_slo_ms": 0, "requests_per_s": 1.0, "task": "serve",
            "engine names": engines, "engine index": np.array([engines.index(p["engine"]) for p in points])}


def shipped_factors() -> dict:
    """{engine: {factor: value}} as the engines catalog holds them."""
    from . import catalog
    t = catalog.tables()["engines"]
    return {n: {k: float(t.row(n)[k]) for k in PARAMS} for n in t.names[: t.file_rows]}


def _loss(res, weight, pull) -> float:
    """What the reweighted Gauss-Newton steps lower: weight^2 x (r^2 within SOFT, 2 SOFT |r| - SOFT^2 beyond: soft L1) plus
    the pull towards the starting values."""
    a = np.abs(res)
    return float(np.sum(weight ** 2 * np.where(a <= SOFT, a ** 2, 2 * SOFT * a - SOFT ** 2)) + np.sum((0.05 * pull) ** 2))


def fit(points=None, start: dict | None = None, iterations: int | None = None) -> dict:
    """Each engine's factors fitted on ``points`` (default: the H100 and B200 points): {engine: {factor: value}}.
    Iteratively reweighted Gauss-Newton on log(modelled / measured) of TPOT and TTFT, in the logarithm of each factor,
    within PARAMS' bounds, with a small pull towards the starting values (a factor the points hardly move stays)."""
    points = fit_points() if points is None else points
    engines = sorted({p["engine"] for p in points})
    base = {**shipped_factors(), **(start or {})}
    names = list(PARAMS)
    lo = np.log([PARAMS[n][1] for n in names])
    hi = np.log([PARAMS[n][2] for n in names])
    x = {e: np.clip(np.log([base[e][n] for n in names]), lo, hi) for e in engines}  # a start beyond a bound starts at it
    x0 = {e: v.copy() for e, v in x.items()}
    meas = np.log(np.concatenate([[p["tpot_ms"] for p in points], [p["ttft_ms"] for p in points]]))
    eng_of = np.array([p["engine"] for p in points] * 2)
    weight = np.concatenate([np.ones(len(points)), np.full(len(points), TTFT_WEIGHT)])

    columns = point_columns(points)

    def residual(xs):
        t, f = predict(points, {e: dict(zip(names, np.exp(v))) for e, v in xs.items()}, columns)
        return np.log(np.concatenate([t, f])) - meas

    h = 0.05
    for _ in range(iterations or ITERATIONS):
        res = residual(x)
        J = np.zeros((len(res), len(names)))
        for j in range(len(names)):  # the engines' rows are disjoint: one evaluation moves factor j of every engine
            bumped = {e: v.copy() for e, v in x.items()}
            for e in engines:
                bumped[e][j] += h
            J[:, j] = (residual(bumped) - res) / h
        biggest = 0.0
        steps = {}
        for e in engines:
            m = eng_of == e
            w = weight[m] / np.sqrt(np.maximum(1, np.abs(res[m]) / SOFT))
            A = np.vstack([J[m] * w[:, None], 0.05 * np.eye(len(names))])
            b = np.concatenate([-res[m] * w, -0.05 * (x[e] - x0[e])])
            steps[e] = np.clip(np.linalg.lstsq(A, b, rcond=None)[0], -0.7, 0.7)
        # a step is kept only where it lowers the engine's loss, else halved (the model has kinks: the batch is a whole
        # number, the step the larger of memory and compute time), so the fit never ends worse than it started
        before = {e: _loss(res[eng_of == e], weight[eng_of == e], x[e] - x0[e]) for e in engines}
        for _half in range(5):
            trial = {e: np.clip(x[e] + steps[e], lo, hi) if e in steps else x[e] for e in engines}
            res_t = residual(trial)
            for e in list(steps):
                m = eng_of == e
                if _loss(res_t[m], weight[m], trial[e] - x0[e]) < before[e]:
                    biggest = max(biggest, float(np.abs(trial[e] - x[e]).max()))
                    x[e] = trial[e]
                    del steps[e]
                else:
                    steps[e] = steps[e] / 2
            if not steps:
                break
        if biggest < 1e-3:
            break
    return {e: {n: float(v) for n, v in zip(names, np.exp(x[e]))} for e in engines}


def errors(points: list[dict], factors: dict | None = None) -> dict:
    """Modelled / measured per point: {"tpot_ratio": array, "ttft_ratio": array}."""
    t, f = predict(points, factors)
    return {"tpot_ratio": t / np.array([p["tpot_ms"] for p in points]), "ttft_ratio": f / np.array([p["ttft_ms"] for p in points])}


def summary(points: list[dict], factors: dict | None = None) -> dict:
    """{"points", "tpot_within" (share of TPOT within 30 %), "tpot_median_error", "ttft_median_ratio", "ttft_within"}."""
    if not points:
        return {"points": 0, "tpot_within": float("nan"), "tpot_median_error": float("nan"), "ttft_median_ratio": float("nan"),
                "ttft_within": float("nan")}
    e = errors(points, factors)
    return _stats(e["tpot_ratio"], e["ttft_ratio"])


def _stats(tpot_ratio, ttft_ratio) -> dict:
    tpot_ratio, ttft_ratio = np.asarray(tpot_ratio), np.asarray(ttft_ratio)
    return {"points": int(len(tpot_ratio)), "tpot_within": float(np.mean(np.abs(tpot_ratio - 1) <= WITHIN)),
            "tpot_median_error": float(np.median(np.abs(tpot_ratio - 1))), "ttft_median_ratio": float(np.median(ttft_ratio)),
            "ttft_within": float(np.mean(np.abs(ttft_ratio - 1) <= WITHIN))}


def bands(points: list[dict], factors: dict | None = None) -> dict:
    """{engine: {column: factor}}: the 10th and 90th percentile of measured / modelled TPOT and TTFT per engine and model
    kind (dense, moe); a kind an engine has no points of takes the engine's other kind, widened by a quarter."""
    e = errors(points, factors)
    out: dict = {}
    for eng in sorted({p["engine"] for p in points}):
        cols = {}
        for kind in ("dense", "moe"):
            m = np.array([p["engine"] == eng and _model_kind(p["model"]) == kind for p in points])
            for q in ("tpot", "ttft"):
                if m.sum() >= 5:
                    lo, hi = np.percentile(1 / e[f"{q}_ratio"][m], BAND_PERCENTILES)
                    cols[f"{q}_low_{kind}"], cols[f"{q}_high_{kind}"] = min(float(lo), 1.0), max(float(hi), 1.0)
        for kind, other in (("dense", "moe"), ("moe", "dense")):
            for q in ("tpot", "ttft"):
                if f"{q}_low_{kind}" not in cols and f"{q}_low_{other}" in cols:
                    cols[f"{q}_low_{kind}"] = cols[f"{q}_low_{other}"] / 1.25
                    cols[f"{q}_high_{kind}"] = cols[f"{q}_high_{other}"] * 1.25
        cols["fitted_points"] = int(sum(1 for p in points if p["engine"] == eng))
        out[eng] = cols
    return out


def leave_one_out(points: list[dict], key: str, fitted: dict | None = None, iterations: int | None = None) -> dict:
    """Refit without each value of ``key`` ("engine" or "model") and predict its points.  An engine left out has no
    factors of its own: it takes the geometric mean of the other engines' factors.  {value: stats}.  Kept in the code
    cache (a refit per engine or model: about a second in all)."""
    return codecache.kept("serving leave one out", (points, key, fitted, iterations),
                          lambda: _leave_one_out(points, key, fitted, iterations))


def _leave_one_out(points: list[dict], key: str, fitted: dict | None, iterations: int | None) -> dict:
    out = {}
    for value in sorted({p[key] for p in points}):
        rest = [p for p in points if p[key] != value]
        mine = [p for p in points if p[key] == value]
        factors = fit(rest, start=fitted, iterations=iterations)
        if key == "engine":
            mean = {n: float(np.exp(np.mean([math.log(f[n]) for f in factors.values()]))) for n in PARAMS}
            factors = {**factors, value: mean}
        out[value] = summary(mine, factors)
    return out


def apply(factors: dict, band_values: dict) -> Path:
    """Write the fitted factors and bands into engines.csv (rounded), the other columns as they are."""
    from .files import write_atomically
    with open(ENGINES_PATH, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        fields = reader.fieldnames
        rows = list(reader)
    for r in rows:
        for n, v in factors.get(r["name"], {}).items():
            r[n] = f"{v:.4g}"
        for n, v in band_values.get(r["name"], {}).items():
            r[n] = f"{v:.3g}" if n != "fitted_points" else str(v)
    import io
    buf = io.StringIO()
    w = csv.DictWriter(buf, fields, lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    write_atomically(ENGINES_PATH, buf.getvalue().encode("utf-8"))
    return ENGINES_PATH


# The model before the engines existed (main at d418507: no per-step or per-request time, a prompt prefilled alone,
# the latent cache split by tensor parallel), on
# the same expressible points: measured with the serving formulas of that version at each point's concurrency.
BEFORE = {"points": 1374, "tpot_within": 0.526, "tpot_median_error": 0.287, "ttft_median_ratio": 0.155}
BEFORE_HELD_OUT = {"points": 489, "tpot_within": 0.421, "tpot_median_error": 0.359, "ttft_median_ratio": 0.279}
LOO_ITERATIONS = 8


def _row(label: str, s: dict) -> str:
    return (f"| {label} | {s['points']} | {s['tpot_within']:.0%} | {s['tpot_median_error']:.0%} | {s['ttft_median_ratio']:.2f} | "
            f"{s['ttft_within']:.0%} |")


def render_lines() -> list[str]:
    """The engines section of docs/calibration.md."""
    points = load_points()
    fitted_on, held, new_models = fit_points(points), held_out_points(points), new_model_points(points)
    shipped = shipped_factors()
    head = "| points | n | TPOT within 30 % | TPOT median error | TTFT median ratio | TTFT within 30 % |"
    rule = "|---|---:|---:|---:|---:|---:|"
    lines = ["## Serving engines (NVIDIA's measured points)", "",
             f"{len(points)} measured points of aggregated serving from NVIDIA AIConfigurator 0.12.0 (aiconfigurator-core on "
             "PyPI, systems/silicon_sample.csv, Apache License 2.0; `core/data/serving_points.csv`): vLLM, SGLang and "
             "TensorRT-LLM at a fixed concurrency, time to first token (TTFT) and time per output token (TPOT).  The engine "
             "factors (`core/data/engines.csv`) are fitted on the H100 and B200 points only "
             f"({len(fitted_on)} expressible); the {len(held)} H200, GB200, B300 and GB300 points are the held-out check and "
             f"never enter the fit, nor do the {len(new_models)} points of the 2026 architectures ({', '.join(NEW_MODELS)}; "
             "every GPU), which arrived after the factors were fitted and check how they carry to new models.  Not "
             f"expressed: replicas across servers (more than 8 GPUs) ({sum(1 for p in points if not expressible(p))} points).", "",
             "The formulas are `load_tpot_ms` and `load_ttft_ms` (docs/quantities.md, group serving): a decode step is the "
             "weights it reads (experts at the engine's grouped-GEMM efficiency) and the KV cache at the engine's bandwidth, "
             "or its compute, plus the tensor-parallel all-reduces and the engine's fixed time per step; TPOT adds the share "
             "of the other requests' prefill that lands between a request's tokens; TTFT is the engine's fixed time per "
             "request, the prompt's own prefill, the queue share of the other in-flight prompts and the decode steps the "
             "prompt's chunks share.", "",
             head, rule, _row("H100 and B200 without attention data parallel, before the engines (one prompt prefilled alone, "
                              "no per-step time)",
                              {**BEFORE, "ttft_within": float("nan")}).replace("nan%", "-"),
             _row("H200, GB200, B300, GB300, before the engines", {**BEFORE_HELD_OUT, "ttft_within": float("nan")}).replace("nan%", "-"),
             _row("H100 and B200 (fitted on)", summary(fitted_on)),
             _row("H200, GB200, B300, GB300 (held out)", summary(held))]
    for gpu in sorted({p["gpu"] for p in held}):
        lines.append(_row(f"held out: {gpu}", summary([p for p in held if p["gpu"] == gpu])))
    lines.append(_row("2026 architectures, every GPU (held out)", summary(new_models)))
    for model in NEW_MODELS:
        lines.append(_row(f"held out: {model}", summary([p for p in new_models if p["model"] == model])))
    e = errors(fitted_on)
    for key in ("engine", "model"):
        for value in sorted({p[key] for p in fitted_on}):
            m = np.array([p[key] == value for p in fitted_on])
            lines.append(_row(f"fitted on, {key} {value}", _stats(e["tpot_ratio"][m], e["ttft_ratio"][m])))
    lines += ["", "Leave one out: each engine (it takes the geometric mean of the other engines' factors) and each model "
              "in turn is left out, the factors refitted on the rest of the H100 and B200 points, and its points predicted.", "",
              head, rule]
    for key in ("engine", "model"):
        for value, s in leave_one_out(fitted_on, key, shipped, iterations=LOO_ITERATIONS).items():
            lines.append(_row(f"{key} {value} left out", s))
    lines += ["", "The factors as shipped (fixed time per decode step and layer in microseconds, per request in ms; the others are factors or shares):", "",
              "| engine | " + " | ".join(PARAMS) + " | points |", "|---|" + "---:|" * (len(PARAMS) + 1)]
    from . import catalog
    table = catalog.tables()["engines"]
    for name in table.names[: table.file_rows]:
        row = table.row(name)
        lines.append(f"| {name} | " + " | ".join(f"{float(row[k]):.3g}" for k in PARAMS) + f" | {int(float(row['fitted_points']))} |")
    lines += ["", "llama.cpp has no measured points here: its row is gpu-tco's assumptions guided by published figures (its "
              "source in engines.csv), not a fit.  transformers' fixed time per decode step, prefill compute factor and time "
              "per request are fitted on gpu-tco's own measurements of eager generate on an H200 (measurements.csv rows "
              "own-h200-*, tools/measure/serve_measure.py); its other factors are assumptions.  Both have wider likely ranges.  The likely ranges every serving answer gives are the 10th-90th "
              "percentiles of measured / modelled per engine and model kind (engines.csv tpot_low_dense ... ttft_high_moe).", ""]
    return lines
