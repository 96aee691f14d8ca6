"""Command line: ``gpu-tco`` (the main job) and its subcommands.

    gpu-tco                      the default comparison (Llama 3 70B: own RTX 4090s vs rented H100/A100)
    gpu-tco estimate [--INPUT V ...] [--mode train|infer] [--json]
    gpu-tco gpus | models [--json]
    gpu-tco explain QUANTITY [--INPUT V ...] [--json]
    gpu-tco bench                speed figures (see README)
    gpu-tco docs [--out PATH]    regenerate docs/quantities.md

Every ``--INPUT`` option is generated from the input declarations (name,
unit, default, allowed values).  Bad input exits with code 2 and a one-line
message naming the input, the value and what is allowed.
"""
from __future__ import annotations

import argparse
import json
import math
import sys

from . import catalog
from .errors import CatalogError, InputError
from .inputs import INPUTS

EXIT_BAD_INPUT = 2


def _parse_value(inp, text: str):
    """Command-line text to the value core expects (validation happens in core)."""
    if inp.kind == "choice":
        if inp.accepts_number:
            try:
                return float(text)
            except ValueError:
                return text
        return text
    if inp.kind == "flag":
        low = text.strip().lower()
        if low in ("1", "yes", "true", "on", "y"):
            return 1
        if low in ("0", "no", "false", "off", "n"):
            return 0
        raise InputError(inp.name, text, f"is not a flag; allowed: {inp.allowed()}")
    try:
        x = float(text.replace("_", ""))
    except ValueError:
        raise InputError(inp.name, text, f"is text; allowed: {inp.allowed()}") from None
    return int(x) if inp.kind == "integer" and math.isfinite(x) and x == int(x) else x


def _add_input_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("inputs (defaults in brackets; docs/quantities.md lists them all)")
    for inp in INPUTS:
        unit = "" if inp.unit in ("-", "") else f", {inp.unit}"
        g.add_argument(f"--{inp.name.replace('_', '-')}", dest=f"in_{inp.name}", metavar="V",
                       help=f"{inp.description}{unit} [{inp.default}]".replace("%", "%%"))


def _collect_inputs(ns) -> dict:
    by = {i.name: i for i in INPUTS}
    out = {}
    for key, value in vars(ns).items():
        if key.startswith("in_") and value is not None:
            name = key[3:]
            out[name] = _parse_value(by[name], value)
    return out


def _fmt(v) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, (int,)) or (isinstance(v, float) and v.is_integer() and abs(v) < 1e15):
        return f"{int(v):,}"
    if isinstance(v, float):
        if abs(v) >= 1e6 or (abs(v) < 1e-3 and v != 0):
            return f"{v:.4g}"
        return f"{v:,.2f}"
    return str(v)


def table(headers, rows, align=None) -> str:
    """A plain fixed-width text table."""
    cells = [[str(h) for h in headers]] + [[_fmt(c) if not isinstance(c, str) else c for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    align = align or ["<"] + [">"] * (len(headers) - 1)
    lines = []
    for j, r in enumerate(cells):
        lines.append("  ".join(f"{c:{a}{w}}" for c, a, w in zip(r, align, widths)).rstrip())
        if j == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _jsonable(v):
    if hasattr(v, "tolist"):
        v = v.tolist()
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


# ---------------------------------------------------------------------------
def cmd_main(ns) -> int:
    from .scenarios import DEFAULT_JOB, compare

    job = _collect_inputs(ns)
    rows = compare(job)
    if ns.json:
        print(json.dumps({"job": {**DEFAULT_JOB, **job}, "rows": rows}, indent=2))
        return 0
    j = {**DEFAULT_JOB, **job}
    print(f"gpu-tco: fine-tuning {j['model']} on {j['tokens'] * j['epochs']:,.0f} tokens "
          f"(seq {j['seq_len']}, micro-batch {j['micro_batch']}, {j['sharding']}, recompute {j['recompute']}, {j['precision']}, {j['optimizer']})")
    print()
    body = []
    for r in rows:
        need = str(r["gpus_needed"]) if r["gpus_needed"] else "never"
        body.append([f"{r['n_gpus']}x {r['gpu']} ({r['acquire']})", r["method"], "yes" if r["fits"] else "NO",
                     f"{r['peak_gib_per_gpu']:.1f} / {r['gpu_memory_gib']:.0f}", need,
                     f"{r['train_hours']:.1f}" if r["fits"] else "-", f"{r['mfu']:.2f}"])
    print(table(["setup", "method", "fits", "peak GiB/GPU", "GPUs needed", "train hours", "MFU"], body))
    print()
    print("GiB = 2^30 bytes (GPU memory is sold in binary units). Hours at the listed GPU count, dense BF16 TFLOPS x MFU.")
    print("'GPUs needed' = smallest count of that GPU that fits this configuration with ZeRO-3 sharding; 'never' = no count fits.")
    print("Costs (rent vs own) arrive with the cost model. Formulas and sources: gpu-tco explain QUANTITY, docs/quantities.md.")
    return 0


def cmd_estimate(ns) -> int:
    from .engine import breakdown, evaluate, resolve_inputs
    from .formulas import QUANTITIES

    given = _collect_inputs(ns)
    res = evaluate(given)
    resolved = resolve_inputs(given)
    used = {i.name: resolved[i.name] for i in INPUTS}
    gpu_row = catalog.gpus().rows[resolved["gpu__row"]]
    model_row = catalog.models().rows[resolved["model__row"]]
    model_name = model_row["name"]
    assumptions = {
        "inputs": used,
        "gpu_source": f"{gpu_row['source']} (as of {gpu_row['as_of']})",
        "model_source": f"{model_row['source']}" + (f" (as of {model_row['as_of']})" if model_row.get("as_of") else ""),
        "model_is_estimate": bool(res["model_is_estimate"]),
    }
    if ns.json:
        print(json.dumps({"quantities": {k: _jsonable(v) for k, v in res.items()},
                          "units": {k: q.unit for k, q in QUANTITIES.items()},
                          "breakdown_train_gib_per_gpu": {k: _jsonable(v) for k, v in breakdown(res, "train").items()},
                          "breakdown_infer_gib_per_gpu": {k: _jsonable(v) for k, v in breakdown(res, "infer").items()},
                          "assumptions": assumptions}, indent=2))
        return 0
    print(f"{model_name} ({res['params_total_b']:.2f}B params{', ESTIMATED architecture' if res['model_is_estimate'] else ''})"
          f" on {used['n_gpus']}x {used['gpu']} ({res['gpu_memory_gib']:.0f} GiB each)")
    if ns.mode == "train":
        print(f"training: {used['method']}, {used['precision']}, {used['optimizer']}, sharding {used['sharding']}, "
              f"recompute {used['recompute']}, seq {used['seq_len']}, micro-batch {used['micro_batch']}")
        comp = breakdown(res, "train")
        print(table(["component", "GiB/GPU"], [[k, v] for k, v in comp.items() if k != "kv_cache"]))
        print()
        facts = [
            ["fits", res["fits_train"]], ["GPUs needed (this GPU)", res["gpus_needed"] or "never"],
            ["longest sequence that fits", res["max_train_seq_len"]],
            ["trainable parameters", res["trainable_params"]], ["training tokens", res["train_tokens_total"]],
            ["MFU used", res["mfu_effective"]], ["throughput (tokens/s)", res["train_tokens_per_s"]],
            ["training hours", res["train_hours"]], ["GPU-hours", res["train_gpu_hours"]],
        ]
    else:
        print(f"inference: weights {used['weights_dtype']}, KV {used['kv_dtype']}, context {used['context_tokens']}, batch {used['batch']}")
        comp = breakdown(res, "infer")
        print(table(["component", "GiB/GPU"], [[k, v] for k, v in comp.items() if k not in ("gradients", "optimizer", "logits")]))
        print()
        facts = [
            ["fits", res["fits_infer"]], ["KV cache, whole batch (GiB)", res["kv_cache_gib"]],
            ["KV bytes per token", res["kv_bytes_per_token"]], ["largest batch that fits", res["max_batch_fit"]],
            ["longest context that fits", res["max_context_fit"]],
            ["decode tokens/s per sequence", res["decode_tokens_per_s_per_seq"]],
            ["decode tokens/s, whole batch", res["decode_tokens_per_s"]], ["prefill tokens/s", res["prefill_tokens_per_s"]],
        ]
    print(table(["result", "value"], facts))
    print()
    print(f"GPU data: {assumptions['gpu_source']}")
    print(f"Model data: {assumptions['model_source']}")
    return 0


def cmd_catalog(ns) -> int:
    tab = catalog.tables()[ns.command]
    if ns.json:
        print(json.dumps(tab.rows, indent=2))
        return 0
    if ns.command == "gpus":
        cols = ["name", "memory_gib", "memory_bandwidth_gbps", "bf16_dense_tflops", "fp8_dense_tflops", "tdp_w", "purchase_usd", "as_of"]
        heads = ["GPU", "GiB", "GB/s", "BF16 dense TFLOPS", "FP8 dense TFLOPS", "TDP W", "USD (0=unknown)", "as of"]
    else:
        cols = ["name", "params_published_b", "layers", "hidden", "heads", "kv_heads", "vocab", "experts", "max_context", "as_of"]
        heads = ["model", "params (B)", "layers", "hidden", "heads", "KV heads", "vocab", "experts", "context", "as of"]
    print(table(heads, [[r[c] for c in cols] for r in tab.rows]))
    print(f"\n{len(tab.rows)} rows from {', '.join(tab.files)}; every row's source: --json")
    return 0


def cmd_explain(ns) -> int:
    from .engine import explain

    info = explain(ns.quantity, _collect_inputs(ns))
    if ns.json:
        print(json.dumps({k: ([list(map(_jsonable, x)) for x in v] if k == "inputs" else _jsonable(v)) for k, v in info.items()}, indent=2))
        return 0
    print(f"{info['name']} = {_fmt(_jsonable(info['value']))} {info['unit']}")
    print(f"  {info['description']}")
    print(f"  formula: {info['formula']}")
    print(f"  Excel:   {info['excel']}")
    if info["source"]:
        print(f"  source:  {info['source']}")
    print("  from:")
    for name, value, unit in info["inputs"]:
        label = {"catalog": "(catalog)", "-": ""}.get(unit, unit)
        print(f"    {name} = {_fmt(_jsonable(value))} {label}".rstrip())
    return 0


def cmd_bench(ns) -> int:
    from .bench import run

    run()
    return 0


def cmd_docs(ns) -> int:
    from .docs import write

    path = write(ns.out)
    print(f"wrote {path}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="gpu-tco", description="GPU memory, count, time and cost for LLM work (sourced formulas).")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    _add_input_options(p)
    sub = p.add_subparsers(dest="command")
    est = sub.add_parser("estimate", help="memory, GPU count and time for any configuration")
    est.add_argument("--mode", choices=["train", "infer"], default="train")
    est.add_argument("--json", action="store_true")
    _add_input_options(est)
    for name in ("gpus", "models"):
        c = sub.add_parser(name, help=f"list the {name} catalog")
        c.add_argument("--json", action="store_true")
    ex = sub.add_parser("explain", help="formula, source and inputs of a quantity")
    ex.add_argument("quantity")
    ex.add_argument("--json", action="store_true")
    _add_input_options(ex)
    sub.add_parser("bench", help="print the speed figures")
    dc = sub.add_parser("docs", help="regenerate docs/quantities.md")
    dc.add_argument("--out", default=None)
    return p


def main(argv=None) -> int:
    parser = build_parser()
    ns = parser.parse_args(argv)
    handlers = {None: cmd_main, "estimate": cmd_estimate, "gpus": cmd_catalog, "models": cmd_catalog,
                "explain": cmd_explain, "bench": cmd_bench, "docs": cmd_docs}
    try:
        return handlers[ns.command](ns)
    except (InputError, CatalogError) as err:
        print(f"gpu-tco: error: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except BrokenPipeError:  # e.g. piped into head
        return 0


if __name__ == "__main__":
    sys.exit(main())
