"""``gpu-tco offers``, ``apis``, ``gpus``, ``models`` and ``presets``: the catalogs, listed and refreshed."""
from __future__ import annotations

import json
import os
import sys

from ..core import catalog
from .common import _safe, column_table, table


def cmd_offers(ns) -> int:
    if ns.refresh:
        return _refresh_offers(ns)
    tab = catalog.offers()
    rows = [r for r in tab.rows if r["name"] != "none"]
    if ns.gpu:
        gpus = catalog.gpus()
        family = gpus.variants(ns.gpu)  # "h100": every H100 variant
        chosen = [gpus.names[i] for i in family] if len(family) > 1 else [gpus.canonical(ns.gpu, "gpu")]
        if len(chosen) > 1 and not ns.json:
            print(f"{ns.gpu!r} matches {len(chosen)} GPUs: {', '.join(chosen)}; listing the offers of each.\n")
        rows = [r for r in rows if r["gpu"] in chosen]
    if ns.json:
        print(json.dumps(rows, indent=2))
        return 0
    from operator import itemgetter

    import numpy as np

    from ..core import evaluate
    rows.sort(key=itemgetter("gpu", "usd_per_gpu_hour"))
    # the largest job each offer sells and what connects its machines, as the planner reads them
    sold = evaluate({"gpu": [r["gpu"] for r in rows], "offer": [r["name"] for r in rows]},
                    outputs=("offer_max_gpus", "offer_node_gpus")) if rows else {"offer_max_gpus": [], "offer_node_gpus": []}

    def largest(most: float, node: float, fabric: float) -> str:
        if fabric > 0:
            limit = "any size" if most >= 1e9 else f"up to {most:,.0f}"
            return f"{limit}, {fabric:g} Gbit/s per GPU"
        return f"one machine of {int(node)}"

    def column(key):
        return list(map(itemgetter(key), rows))
    # every cell as text, a column at a time (100,000 refreshed offers list in about a second)
    print(column_table(["offer", "GPU", "GPUs", "type", "USD/GPU-h", "USD/instance-h", "billing s", "largest job, network", "as of"],
                       [column("name"), column("gpu"), list(map("{:,}".format, map(int, column("gpus_per_instance")))),
                        column("price_type"), list(map("{:.3f}".format, column("usd_per_gpu_hour"))),
                        list(map("{:.2f}".format, column("usd_per_instance_hour"))),
                        list(map("{:,}".format, map(int, column("billing_increment_s")))),
                        list(map(largest, np.asarray(sold["offer_max_gpus"], dtype=float).tolist(),
                                 np.asarray(sold["offer_node_gpus"], dtype=float).tolist(), column("fabric_gbps_per_gpu"))),
                        column("as_of")],
                       align=["<", "<", ">", "<", ">", ">", ">", "<", "<"]))
    print(f"\n{len(rows)} offers from {', '.join(tab.files)}; sources per row: --json.")
    dates = [str(r["as_of"]) for r in rows if r.get("as_of")]
    if dates:
        import datetime
        today = datetime.date.today()
        oldest, newest = min(dates), max(dates)
        y, m = (int(x) for x in newest[:7].split("-"))
        from ..core import refreshed_note
        note = refreshed_note(rows)
        print(f"Prices as of {oldest} to {newest}: the newest is {(today.year - y) * 12 + today.month - m} months old "
              f"on {today.isoformat()}" + (f" ({note})" if note else "") +
              ". Prices move: gpu-tco offers --refresh brings today's (needs the live extra); check the offer's page before you rent.")
    return 0


def _refresh_offers(ns) -> int:
    """offers --refresh: today's offers through gpuhunt, progress on stderr, a summary on stdout."""
    from ..core import refresh_offers as refresh
    live = sys.stderr.isatty()

    def progress(done, total, provider):
        if provider == "done":
            text = f"gpu-tco: read {total} providers"
        else:
            text = f"gpu-tco: fetching offers: {provider} ({done + 1}/{total})"
        print(f"\r{text:<60}" if live else text, end="" if live and provider != "done" else "\n", file=sys.stderr, flush=True)

    result = refresh(progress=progress)
    if ns.json:
        print(json.dumps({"file": str(result.path), "as_of": result.as_of, "added": result.added, "replaced": result.replaced,
                          "kept_builtin": result.kept_builtin, "kept_own": result.kept_own, "rows": result.rows,
                          "unmapped": result.unmapped, "skipped_providers": result.skipped_providers,
                          "impossible": result.impossible}, indent=2, allow_nan=False))
        return 0
    print(_safe(result.summary()))
    if result.unmapped_line():
        print(_safe(result.unmapped_line()) + " (all of them: --json)")
    if result.impossible_line():
        print(_safe(result.impossible_line()))
    if result.skipped_providers:
        print(_safe(f"Providers that did not answer: {'; '.join(result.skipped_providers)}"))
    return 0


def cmd_apis(ns) -> int:
    """apis: the API price catalog; --update FILE / --refresh: new prices from the genai-prices data."""
    from ..core import api_prices
    if ns.update or ns.refresh:
        if ns.update:
            providers, what = api_prices.providers_from_file(ns.update), f"genai-prices data {os.path.basename(ns.update)}"
        else:
            providers, what = api_prices.providers_from_package()
        result = api_prices.update(providers, what, as_of=ns.as_of, out=ns.out)
        if ns.json:
            print(json.dumps({"file": str(result.path), "as_of": result.as_of, "updated": result.updated,
                              "changed": result.changed, "missing": result.missing}, indent=2))
        else:
            print(_safe(result.summary()))
        return 0
    tab = catalog.apis()
    rows = list(tab.rows)
    if ns.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(table(["API (api_model)", "provider", "model", "open model", "USD/Mtok input", "USD/Mtok output", "as of"],
                [[_safe(r["name"]), _safe(r["provider"]), _safe(r["model"]), _safe(r["catalog_model"]) or "-",
                  f"{r['usd_per_mtok_input']:.4g}", f"{r['usd_per_mtok_output']:.4g}", r["as_of"]] for r in rows],
                align=["<", "<", "<", "<", ">", ">", "<"]))
    dates = sorted(str(r["as_of"]) for r in rows if r.get("as_of"))
    print(f"\n{len(rows)} API prices per million tokens from {', '.join(tab.files)}; each row's price page: --json.")
    if dates:
        print(f"Prices as of {dates[0]} to {dates[-1]}. Prices move: gpu-tco apis --update data.json "
              f"(genai-prices' data, {api_prices.DATA_JSON_URL}) or --refresh (pip install genai-prices) brings newer ones.")
    for builtin, (typed, file) in tab.overrides.items():
        print(f"Your row {typed!r} in {file} overrides the built-in {builtin}.")
    return 0


def cmd_catalog(ns) -> int:
    tab = catalog.tables()[ns.command]
    if ns.json:
        print(json.dumps(tab.rows, indent=2))
        return 0
    if ns.command == "gpus":
        cols = ["name", "memory_gib", "memory_bandwidth_gbps", "bf16_dense_tflops", "fp8_dense_tflops", "tdp_w", "purchase_usd", "as_of"]
        heads = ["GPU", "GiB", "GB/s", "BF16 dense TFLOPS", "FP8 dense TFLOPS", "TDP W", "purchase USD per GPU", "as of"]
    else:
        cols = ["name", "params_published_b", "layers", "hidden", "heads", "kv_heads", "vocab", "experts", "max_context", "as_of"]
        heads = ["model", "params (B)", "layers", "hidden", "heads", "KV heads", "vocab", "experts", "context", "as of"]
    from ..core import NO_PRICE

    def cell(r, c):  # a missing purchase price reads "no price", never 0; a card without FP8 tensor cores "none"
        if c == "purchase_usd" and not r[c] > 0:
            return NO_PRICE
        if c == "fp8_dense_tflops" and not r[c] > 0:
            return "none"
        return _safe(str(r[c])) if isinstance(r[c], str) else r[c]
    print(table(heads, [[cell(r, c) for c in cols] for r in tab.rows]))
    print(f"\n{len(tab.rows)} rows from {', '.join(tab.files)}; every row's source: --json")
    for builtin, (typed, file) in tab.overrides.items():
        print(f"Your row {typed!r} in {file} overrides the built-in {builtin}.")
    return 0


def _catalog_commands(command) -> None:
    """The commands that list (and refresh) the catalogs: offers, apis, gpus, models, presets."""
    of = command("offers", "list the cloud offers catalog, or refresh it with today's prices", "[--gpu GPU] [--refresh] [--json]")
    of.add_argument("--refresh", action="store_true",
                    help="fetch today's offers through gpuhunt (pip install 'gpu-tco[live]') into your offers file")
    of.add_argument("--gpu", default=None, help="only this GPU's offers (every variant of a family: --gpu h100)")
    of.add_argument("--json", action="store_true", help="every field and source")
    ap = command("apis", "list the API prices per million tokens, or update them from the genai-prices data",
                 "[--update FILE | --refresh] [--as-of YYYY-MM-DD] [--out FILE] [--json]")
    ap.add_argument("--update", default=None, metavar="FILE",
                    help="new prices from genai-prices' data.json (https://github.com/pydantic/genai-prices) into your apis file")
    ap.add_argument("--refresh", action="store_true", help="new prices from the installed genai-prices package (pip install genai-prices)")
    ap.add_argument("--as-of", default=None, metavar="YYYY-MM-DD", help="the date the new prices hold on [today]")
    ap.add_argument("--out", default=None, metavar="FILE", help="write the updated catalog here [apis.csv in your configuration folder]")
    ap.add_argument("--json", action="store_true", help="every field and source")
    for name in ("gpus", "models"):
        c = command(name, f"list the {name} catalog", "[--json]")
        c.add_argument("--json", action="store_true", help="every field and source")
    command("presets", "list the named presets (published articles' scenarios under their own assumptions)", "")


PRESET_TEXT_WIDTH = 90  # with the name column, within a 120-column terminal


def _wrap_pairs(pairs: list[str], width: int) -> str:
    """name=value pairs, comma-separated, on lines of at most ``width`` characters, broken only between
    pairs (a value such as an offer name is never split)."""
    lines, line = [], ""
    for pair in pairs:
        if line and len(line) + 2 + len(pair) > width:
            lines.append(line + ",")
            line = pair
        else:
            line = f"{line}, {pair}" if line else pair
    return "\n".join([*lines, line])


def cmd_presets(ns) -> int:
    from ..core import PRESETS
    rows = [[name, _wrap_pairs([f"{k}={v}" for k, v in p.items()], PRESET_TEXT_WIDTH)] for name, p in PRESETS.items()]
    print(table(["preset", "inputs it sets"], rows, align=["<", "<"]))
    print("\nUse one with --preset NAME on any command; --INPUT options override it. Sources: core/presets.py.")
    return 0
