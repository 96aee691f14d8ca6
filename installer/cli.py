"""Command line: ``gpu-tco`` (the main job) and its subcommands.

    gpu-tco                      the default comparison (Llama 3 70B: own RTX 4090s vs rented H100/A100)
    gpu-tco estimate [--INPUT V ...] [--mode train|infer] [--json]
    gpu-tco gpus | models [--json]
    gpu-tco explain QUANTITY [--INPUT V ...] [--json]
    gpu-tco plan [--INPUT V ...] [--gpus A,B] [--all] [--json]   rank every way to run a job
    gpu-tco tco | breakeven [--INPUT V ...] [--json]            owning; buy versus rent
    gpu-tco offers [--gpu G] [--refresh] [--json]               the cloud offers catalog; --refresh: today's prices (gpuhunt)
    gpu-tco apis [--update FILE | --refresh] [--json]           API prices per million tokens (genai-prices data)
    gpu-tco workbook --out FILE [--email-draft F.eml] [--scenario FILE] [--INPUT V ...]   the formula-linked .xlsx
    gpu-tco form [--scenario FILE] [--screenshot FILE.png]   the desktop form (needs the gui extra)
    gpu-tco bench                speed figures (see README)
    gpu-tco calibrate [--write]  the model against published measurements (docs/calibration.md)
    gpu-tco docs [--out PATH]    regenerate docs/quantities.md, docs/calibration.md and docs/form.png

Every ``--INPUT`` option is generated from the input declarations (name,
unit, default, allowed values).  Bad input exits with code 2 and a one-line
message naming the input, the value and what is allowed.
"""
from __future__ import annotations

import os
import signal
import sys

EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT, what shells report for a command stopped by Ctrl-C
INTERRUPTED = "gpu-tco: interrupted"


def _exit_interrupted(signum=None, frame=None):
    """Ctrl-C outside a command's work (while Python loads the engine, or after the work is done):
    one line and exit 130 at once; nothing is being written then."""
    try:
        os.write(2, (INTERRUPTED + "\n").encode())
    finally:
        os._exit(EXIT_INTERRUPTED)


def _started_as_the_command() -> bool:
    """Whether this process is the gpu-tco command (its console script, or python -m gpu_tco), not a
    program that imports this module: only the command's own Ctrl-C handling may be changed."""
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    if spec is not None and spec.name in ("gpu_tco.__main__", "gpu_tco.cli"):
        return True
    return os.path.basename(sys.argv[0] if sys.argv else "").lower().startswith("gpu-tco")


# First of all (before argparse, and the engine's imports: NumPy and the catalogs, about 0.3 s), so that
# Ctrl-C during them is one line, not a traceback; main() replaces it while a command runs.
if _started_as_the_command():
    try:
        signal.signal(signal.SIGINT, _exit_interrupted)
    except ValueError:  # imported outside the main thread: Ctrl-C is not this module's to handle
        pass

import argparse  # noqa: E402 - after the Ctrl-C handler
import errno  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import subprocess  # noqa: E402
import threading  # noqa: E402

from .core import INPUTS, GpuTcoError, InputError, catalog, cite, is_whole_number, number_text  # noqa: E402


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


class Parser(argparse.ArgumentParser):
    """argparse with the manners of common command-line tools: a parse error is one line naming
    the problem and where to look, not the whole usage (exit code 2)."""

    def error(self, message):
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


# how --help groups the inputs: (heading, Input.group values)
HELP_GROUPS = (
    ("the job", ("model", "training", "job", "planning")),
    ("hardware", ("hardware",)),
    ("inference", ("inference",)),
    ("renting", ("renting",)),
    ("owning", ("owning",)),
    ("serving cost", ("serving",)),
    ("advanced (memory overheads)", ("overheads",)),
)


def _add_input_options(p: argparse.ArgumentParser, names=None) -> None:
    """One --option per input the command uses (``names``; all when None), grouped like a form."""
    p.add_argument("--preset", default=None, metavar="NAME",
                   help="start from a named preset (published articles' scenarios: gpu-tco presets); --INPUT options override it")
    p.add_argument("--scenario", default=None, metavar="FILE",
                   help="JSON or TOML file of inputs (the option names with _, e.g. seq_len); --INPUT options override it")
    from .core import AUTO_QUANTITY
    wanted = set(names) if names is not None else {i.name for i in INPUTS}
    for heading, groups in HELP_GROUPS:
        chosen = [i for i in INPUTS if i.group in groups and i.name in wanted]
        if not chosen:
            continue
        g = p.add_argument_group(f"{heading} (defaults in brackets)")
        for inp in chosen:
            unit = "" if inp.unit in ("-", "") else f", {inp.unit}"
            g.add_argument(f"--{inp.name.replace('_', '-')}", dest=f"in_{inp.name}", metavar="V",
                           help=f"{inp.description}{unit} [{'default: auto' if inp.name in AUTO_QUANTITY else inp.default}]"
                           .replace("%", "%%"))


def _collect_inputs(ns) -> dict:
    by = {i.name: i for i in INPUTS}
    out = {}
    if getattr(ns, "preset", None):
        from .core import preset
        out.update(preset(ns.preset))
    if getattr(ns, "scenario", None):
        from .core import read_scenario, split_scenario
        inputs, gpus = split_scenario(read_scenario(ns.scenario))
        out.update(inputs)
        ns.scenario_gpus = gpus  # the planner's scope; only `plan` uses it
    for key, value in vars(ns).items():
        if key.startswith("in_") and value is not None:
            name = key[3:]
            out[name] = _parse_value(by[name], value)
    _notes(out)
    return out


def _fmt(v) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float) and is_whole_number(v):
        return number_text(v)
    if isinstance(v, float):
        if abs(v) >= 1e6 or (abs(v) < 1e-3 and v != 0):
            return f"{v:.4g}"
        return f"{v:,.2f}"
    return str(v)


def table(headers, rows, align=None) -> str:
    """A plain fixed-width text table; a cell holding several lines (wrapped text) spans as many."""
    cells = [[str(h) for h in headers]] + [[_fmt(c) if not isinstance(c, str) else c for c in r] for r in rows]
    align = align or ["<"] + [">"] * (len(headers) - 1)
    if not any("\n" in c for r in cells for c in r):  # one line per row: one format string (100,000 offers in a second)
        widths = [max(map(len, column)) for column in zip(*cells)]
        fmt = "  ".join(f"{{:{a}{w}}}" for a, w in zip(align, widths))
        lines = [fmt.format(*r).rstrip() for r in cells]
        lines.insert(1, "  ".join("-" * w for w in widths))
        return "\n".join(lines)
    widths = [max(len(line) for r in cells for line in r[i].split("\n")) for i in range(len(headers))]
    lines = []
    for j, r in enumerate(cells):
        parts = [c.split("\n") for c in r]
        for k in range(max(len(x) for x in parts)):
            lines.append("  ".join(f"{(x[k] if k < len(x) else ''):{a}{w}}" for x, a, w in zip(parts, align, widths)).rstrip())
        if j == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _value_text(name: str, value) -> str:
    """A quantity's value as a person reads it: -1 where the description says "-1 = never" prints as never."""
    from .core import QUANTITIES
    if value == -1 and "-1 = never" in QUANTITIES[name].description:
        return "never"
    return _fmt(_jsonable(value))


def _safe(text: str) -> str:
    """Text for the terminal: control characters (escape sequences from a catalog or an argument) shown as
    \\xNN instead of being obeyed."""
    return "".join(c if c in "\n" or (" " <= c != "\x7f") else f"\\x{ord(c):02x}" for c in text)


def _notes(inputs: dict) -> None:
    """Say how a typed model or GPU name was read (a Hugging Face id, an -Instruct variant, a bare size)."""
    for key, table_name in (("model", "models"), ("gpu", "gpus")):
        value = inputs.get(key)
        if isinstance(value, str):
            note = catalog.tables()[table_name].match_note(value)
            if note:
                print(f"gpu-tco: note: {note}", file=sys.stderr)
    from .core import size_in_billions
    model = inputs.get("model")
    if isinstance(model, str) and catalog.models().find(model) is None:
        from .core import hf_config
        row = hf_config.resolve(model)  # a config.json or a Hub id: say which file the architecture came from
        if row is not None:
            print(f"gpu-tco: note: {_safe(hf_config.describe(row))}", file=sys.stderr)
    if isinstance(model, (int, float)) or (isinstance(model, str) and size_in_billions(model) is not None):
        print(f"gpu-tco: note: model {model!r} is read as a parameter count: the architecture is estimated "
              "(Llama-3 shape rules), and results say so", file=sys.stderr)


def _jsonable(v):
    if hasattr(v, "tolist"):
        v = v.tolist()
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


# ---------------------------------------------------------------------------
def _money(v) -> str:
    return "-" if v != v else f"${v:,.0f}"


def _main_table(rows: list[dict]) -> str:
    """The main job's table: one row per setup and method; a missing price reads "no offer" or "no price", never 0."""
    from .core import NO_OFFER, NO_PRICE
    body = []
    for r in rows:
        need = str(r["gpus_needed"]) if r["gpus_needed"] else "never"
        star = {"rent": "<- rent", "buy": "<- buy"}.get(r["recommended"], "")
        fits = ("tight" if r["tight"] else "yes") if r["fits"] else "NO"
        rent = _money(r["rent_usd"]) if r["rent_priced"] else NO_OFFER
        own = _money(r["own_usd"]) if r["own_priced"] else NO_PRICE
        body.append([f"{r['n_gpus']}x {r['gpu']}", r["method"], fits,
                     f"{r['peak_gib_per_gpu']:.1f} / {r['gpu_memory_gib']:.0f}", need,
                     f"{r['job_hours']:.1f}" if r["fits"] else "-",
                     rent, f"{r['rent_usd_per_gpu_hour']:.2f}" if r["rent_priced"] else NO_OFFER,
                     own, _money(r["capital_usd"]) if r["own_priced"] else NO_PRICE, star])
    return table(["setup", "method", "fits", "peak GiB/GPU", "GPUs needed", "job hours", "rent USD",
                  "rent USD/GPU-h", "own USD (job's share)", "capital USD", "pick"], body)


def cmd_main(ns) -> int:
    from .core import COMPARED_METHODS as METHODS
    from .core import DEFAULT_JOB, NO_OFFER, check_input, resolve_inputs, worded_recommendations
    from .core import compare_setups as compare

    job = _collect_inputs(ns)
    if "task" in job and check_input("task", job["task"]) == "serve":
        return _serve_main(ns, job)
    j = {**DEFAULT_JOB, **job}
    a = resolve_inputs(j)  # every input checked before anything is printed
    target = None
    if ns.workbook:
        from .workbooks.xlsx import check_target
        target = check_target(ns.workbook)
    methods = (a["method"],) if "method" in job else METHODS
    worded = worded_recommendations(job, methods)
    picks = {m: rec.option for m, rec in worded.items()}
    rows = compare(job, methods=methods, picks=picks)
    if ns.json:
        clean = lambda o: {k: _jsonable(v) for k, v in o.items()} if o else None  # noqa: E731
        print(json.dumps({"job": {k: _jsonable(v) for k, v in j.items()},
                          "rows": [{k: _jsonable(v) for k, v in r.items()} for r in rows],
                          "recommended": {m: clean(o) for m, o in picks.items()},
                          "answer": {m: list(rec.sentences) for m, rec in worded.items()},
                          "workbook": str(target.resolve()) if target else None}, indent=2))
    else:
        print(f"gpu-tco: fine-tuning {a['model']} with {a['framework']} on {a['tokens'] * a['epochs']:,.0f} tokens "
              f"(seq {a['seq_len']}, micro-batch {a['micro_batch']}, {a['sharding']}, recompute {a['recompute']}, "
              f"{a['precision']}, {a['optimizer']})")
        print()
        print(_main_table(rows))
        print()
        from .core import what_would_fit
        for r in rows:  # the cheapest change that makes a setup fit, as the recipes people use name it
            if not r["fits"]:
                change = what_would_fit({**j, "method": r["method"], "gpu": r["gpu"], "n_gpus": r["n_gpus"], "offer": r["offer"]})
                if change is not None:
                    print(f"{r['n_gpus']}x {r['gpu']} {r['method']} does not fit; it {change.sentence()}.")
        print()
        for m in methods:
            if picks[m] is None:
                print(f"Recommended for {m}: nothing acceptable on any GPU; see `gpu-tco plan --method {m} --all`.")
                continue
            print(f"Recommended for {m}: {worded[m].text}")
            print(f"  likely {picks[m]['hours_likely_low']:.3g} to {picks[m]['hours_likely_high']:.3g} hours with {a['framework']}")
        print()
        from .core import ranks_purchases
        if ranks_purchases(a):
            how = (f"renting through every cloud offer or buying (bought GPUs busy {a['owned_busy_hours_per_day'] or a['hours_per_day']:g} "
                   f"hours a day over {a['months']:g} months)")
        else:
            how = ("renting through every cloud offer (a one-off job: --owned-busy-hours-per-day H for GPUs that stay busy "
                   "after it, or --consider-buying 1, ranks purchases too)")
        print(f"Recommended = the cheapest option that fits (peak at most {100 - a['memory_margin_pct']:g} % of the GPU's memory; "
              f"tight: above 90 %), has a price, meets the deadline and budget, over every GPU, count and {how}; within "
              f"{a['cost_tolerance_pct']:g} % of the cheapest, fewer machines, then fewer hours, then fewer GPUs win. "
              "The table shows the usual setups.")
        if not a["allow_interruptible"]:
            print("Interruptible (spot) offers are not recommended, since the provider can stop them at any time; "
                  "--allow-interruptible 1 includes them.")
        print("GiB = 2^30 bytes. Job hours = training time (dense BF16 TFLOPS x MFU) x (1 + "
              f"{a['debug_overhead_pct']:g} % debugging). 'GPUs needed' = smallest count that fits ({a['sharding']}).")
        print("Rent = each setup at the offer the recommendation rule picks for it (column rent USD/GPU-h; `gpu-tco offers`; "
              f"'{NO_OFFER}': none rents it), billed per increment, plus {a['storage_gb']:g} GB storage; a row marked <- is the "
              "recommendation, with its own offer, hours and cost. Job hours: the rental's, or the purchase's on a row marked <- buy.")
        print(f"Own = share of the total cost of owning for {a['months']:g} months at {a['hours_per_day']:g} h/day: GPUs + "
              f"{a['server_overhead_pct']:g} % server, {a['pue']:g} PUE at ${a['usd_per_kwh']:g}/kWh, colocation "
              f"${a['colo_usd_per_kw_month']:g}/kW-month, {a['maintenance_pct_per_year']:g} %/year upkeep, "
              f"{a['value_loss_pct_per_year']:g} %/year value loss.")
        print("Every assumption is an input (--hours-per-day, --usd-per-kwh, ...). Formulas and sources: "
              "gpu-tco explain QUANTITY, docs/quantities.md.")
    if target is not None:
        from .workbooks import write_workbook
        path = write_workbook(target, job)
        if not ns.json:
            print(f"Workbook (every number a live Excel formula): {path.resolve()}")
    return 0


def _serve_main(ns, job: dict) -> int:
    """gpu-tco with a serving scenario: the serving planner's answer as `gpu-tco plan --task serve` prints it (the
    first options), then the serving workbook when --workbook names one."""
    import argparse
    target = None
    if ns.workbook:
        from .workbooks.xlsx import check_target
        target = check_target(ns.workbook)
    _serve_plan(argparse.Namespace(**{**vars(ns), "gpus": None, "top": 15, "all": False}), job)
    if target is not None:
        from .workbooks import write_workbook
        path = write_workbook(target, job, gpus=getattr(ns, "scenario_gpus", None))
        if not ns.json:
            print(f"Workbook (every number a live Excel formula): {path.resolve()}")
    return 0


def cmd_workbook(ns) -> int:
    from .workbooks import write_workbook

    inputs = _collect_inputs(ns)
    if ns.email_draft:  # a draft target that cannot be used is refused before anything is written
        from .workbooks.email_draft import check_draft_target
        check_draft_target(ns.email_draft, ns.out)
    path = write_workbook(ns.out, inputs, gpus=getattr(ns, "scenario_gpus", None))
    print(f"wrote {path.resolve()}")
    if ns.email_draft:
        from .workbooks.email_draft import draft_text, write_draft
        subject, body = draft_text(inputs, getattr(ns, "scenario_gpus", None))
        try:
            draft = write_draft(ns.email_draft, path, subject, body)
        except OSError as err:
            raise InputError("email-draft", ns.email_draft, f"cannot be written ({err.strerror or err})") from None
        print(f"wrote {draft.resolve()} (an e-mail draft with the workbook attached: open it in your mail program)")
    return 0


def cmd_plan(ns) -> int:
    from .core import check_input, plan
    from .core import plan_scope as scope

    given = _collect_inputs(ns)
    if "task" in given and check_input("task", given["task"]) == "serve":
        return _serve_plan(ns, given)
    # a gpu, n_gpus or offer the inputs name narrows the search (one GPU type, a fixed count, one offer)
    job, where = scope(given, ns.gpus.split(",") if ns.gpus else getattr(ns, "scenario_gpus", None))
    result = plan(job, **where)
    if ns.json:
        clean = lambda o: {k: _jsonable(v) for k, v in o.items()}  # noqa: E731
        print(json.dumps({"job": {k: _jsonable(v) for k, v in result["job"].items()},
                          "recommended": clean(result["recommended"]) if result["recommended"] else None,
                          "options": [clean(o) for o in result["options"]],
                          "rejected_counts": result["rejected_counts"]}, indent=2))
        return 0
    job = result["job"]
    print(f"gpu-tco plan: {job['method']} {job['model']} with {job['framework']}, "
          f"{job['tokens'] * job['epochs']:,.0f} tokens, seq {job['seq_len']:g}, "
          f"micro-batch {job['micro_batch']:g}" + (f", deadline {job['deadline_hours']:g} h" if job["deadline_hours"] else "")
          + (f", budget ${job['budget_usd']:,.0f}" if job["budget_usd"] else ""))
    print()
    ok = [o for o in result["options"] if o["ok"]]
    shown = ok[: ns.top]
    body = [[i + 1, f"{o['n_gpus']}x {o['gpu']}", "buy" if o["acquire"] == "buy" else o["offer"],
             f"{o['peak_gib_per_gpu']:.1f}" + (" tight" if o["tight"] else ""), f"{o['hours']:.1f}",
             f"{o['usd_per_gpu_hour']:.2f}", _money(o["cost_usd"]),
             f"{o['usd_per_mtok_train']:.2f}", _money(o["outlay_usd"])] for i, o in enumerate(shown)]
    if body:
        print(table(["#", "setup", "rent offer / buy", "peak GiB/GPU", "hours", "USD/GPU-h", "job cost", "USD/Mtok", "cash needed"], body))
        from .core import ranks_purchases
        if not ranks_purchases(result["inputs"]):
            print("A one-off job: rentals only (--owned-busy-hours-per-day H for GPUs that stay busy after it, or "
                  "--consider-buying 1, ranks purchases too).")
    rec = result["recommended"]
    print()
    if rec:
        from .core import compose_recommendation as compose
        print(f"Recommended: {compose(result).text}")
        print(f"Likely {rec['hours_likely_low']:.3g} to {rec['hours_likely_high']:.3g} hours with {job['framework']} "
              "(the range of its held-out published runs; docs/training.md).")
    else:
        print("No option meets every requirement; see the reasons below.")
    print(f"{len(ok)} of {len(result['options'])} options acceptable; rejected: "
          + (", ".join(f"{k} {v}" for k, v in result["rejected_counts"].items()) or "none") + ".")
    if ns.all:
        print()
        from .core import option_inputs, what_would_fit
        fit_text: dict = {}  # the cheapest change that makes it fit, per GPU and count (the first 12 of them)
        for o in result["options"]:
            key = (o["gpu"], o["n_gpus"])
            if not o["ok"] and not o["fits"] and o["n_gpus"] and key not in fit_text and len(fit_text) < 12:
                change = what_would_fit(option_inputs(result["given"], o, result["price_gpu"]))
                fit_text[key] = f"; it {change.sentence()}" if change else ""
        rej = [[f"{o['n_gpus']}x {o['gpu']}" if o["n_gpus"] else o["gpu"], o["acquire"] if o["acquire"] != "rent" else o["offer"],
                "; ".join(o["reasons"]) + (fit_text.get((o["gpu"], o["n_gpus"]), "") if not o["fits"] else "")]
               for o in result["options"] if not o["ok"]]
        print(table(["setup", "rent offer / buy", "why not"], rej, align=["<", "<", "<"]))
    else:
        print("Rejected options and why: --all. Interruptible (spot) offers include re-work; owned costs are the job's share at the usage pattern.")
    return 0


def _serve_plan(ns, given: dict) -> int:
    """gpu-tco plan --task serve: the serving planner's options, its answer and the reasons others fail."""
    from .core import serve_option_text, serve_plan

    gpus = ns.gpus.split(",") if ns.gpus else getattr(ns, "scenario_gpus", None)
    result = serve_plan(given, gpus=gpus)
    if ns.json:
        clean = lambda o: {k: _jsonable(v) for k, v in o.items()} if o is not None else None  # noqa: E731
        print(json.dumps({"task": "serve", "job": {k: _jsonable(v) for k, v in result["job"].items()},
                          "demand": result["demand"], "api": result["api"], "choice": result["choice"],
                          "recommendation": result["recommendation"], "recommended": clean(result["recommended"]),
                          "best_rent": clean(result["best_rent"]), "best_buy": clean(result["best_buy"]),
                          "rent_beats_api_mtok_per_month": result["rent_beats_api_mtok_per_month"],
                          "buy_beats_api_mtok_per_month": result["buy_beats_api_mtok_per_month"],
                          "options": [clean(o) for o in result["options"]],
                          "rejected_counts": result["rejected_counts"], "engine": result["engine"],
                          "launch": result["launch"]}, indent=2))
        return 0
    i = result["inputs"]
    targets = ", ".join(t for t in (f"first token within {number_text(i['ttft_slo_ms'])} ms" if i["ttft_slo_ms"] else "",
                                    f"{number_text(i['tpot_slo_ms'])} ms per token" if i["tpot_slo_ms"] else "") if t) or "no latency targets"
    print(f"gpu-tco plan (serving): {i['model']}, {number_text(result['demand']['requests_per_s'])} requests/s of {number_text(i['prompt_tokens'])} prompt + "
          f"{number_text(i['output_tokens'])} output tokens, {number_text(i['hours_per_day'])} h/day; {targets}")
    print()
    ok = [o for o in result["options"] if o.ok]
    body = [[n + 1, serve_option_text(o).split(" from ")[0].removeprefix("rent ").removeprefix("buy "),
             "buy" if o.acquire == "buy" else o.offer, o.batch, f"{o.ttft_at_load_ms:,.0f}", f"{o.tpot_ms:.1f}",
             f"{o.load_fraction:.0%}", o.gpus_bought if o.acquire == "buy" else o.gpus_total,
             f"{o.usd_per_mtok_input:.3f}", f"{o.usd_per_mtok_output:.3f}", _money(o.usd_per_month)]
            for n, o in enumerate(ok[: ns.top])]
    if body:
        print(table(["#", "setup (replicas x GPUs, weights)", "rent offer / buy", "batch", "TTFT ms (queued)", "TPOT ms",
                     "load", "GPUs", "USD/Mtok in", "USD/Mtok out", "USD/month"], body))
        print()
    print(result["recommendation"])
    if result["launch"]:
        print("Start one replica with:")
        for item in result["launch"]:
            print(f"  {item['command']}")
        print(f"  ({result['launch'][0]['note']}; the first line is {result['engine'].split(' (')[0]}, then the equivalents)")
    print(f"{len(ok)} of {len(result['options'])} options acceptable; rejected: "
          + (", ".join(f"{k} {v}" for k, v in result["rejected_counts"].items()) or "none") + ".")
    if ns.all:
        print()
        rej = [[f"{o.n_gpus}x {o.gpu} ({o.weights_dtype})", o.acquire if o.acquire != "rent" else o.offer, "; ".join(o.reasons)]
               for o in result["options"] if not o.ok]
        print(table(["setup", "rent offer / buy", "why not"], rej, align=["<", "<", "<"]))
    else:
        print("Rejected options and why: --all. Per-token time at full load (the batch each replica runs); first token with its "
              "queueing wait at the planned load; costs for the traffic hours; bought setups are whole servers.")
    return 0


def _report(ns, title: str, names: list[str], inputs: dict | None = None) -> int:
    """A titled table of quantities (value, unit, meaning); ``inputs`` when the caller collected them."""
    from .core import PRICE_FLAGS, evaluate, resolve_inputs
    from .core import require_prices as require
    inputs = _collect_inputs(ns) if inputs is None else inputs
    res = evaluate(inputs, outputs=[*names, *PRICE_FLAGS])
    used = resolve_inputs(inputs)
    require({**used, **res}, names)  # a missing price is an error naming the input, never a $0 line
    if ns.json:
        print(json.dumps({"inputs": {k: _jsonable(v) for k, v in used.items() if "__" not in k},
                          "results": {n: _jsonable(res[n]) for n in names}}, indent=2))
        return 0
    print(title.format(**used))
    print()
    import textwrap

    from .core import QUANTITIES
    print(table(["quantity", "value", "unit", "meaning"],
                [[n, _value_text(n, res[n]), QUANTITIES[n].unit, textwrap.fill(QUANTITIES[n].description, 64)] for n in names],
                align=["<", ">", "<", "<"]))
    return 0


TCO_LINES = ["own_gpu_capital_usd", "own_server_capital_usd", "own_network_capital_usd", "own_capital_usd", "own_setup_usd",
             "own_energy_usd", "own_fixed_usd", "own_residual_usd", "own_tco_usd", "own_tco_pv_usd", "own_hours_used",
             "own_utilization", "own_usd_per_gpu_hour", "own_avg_kw", "own_energy_usd_per_gpu_hour"]
BREAKEVEN_LINES = ["rent_usd_per_gpu_hour", "own_usd_per_gpu_hour", "rent_usd_per_month", "own_running_usd_per_month",
                   "payback_months", "breakeven_gpu_hours", "breakeven_hours", "breakeven_utilization", "verdict_code"]


def cmd_tco(ns) -> int:
    return _report(ns, "gpu-tco tco: owning {n_gpus}x {gpu} for {months:g} months at {hours_per_day:g} h/day "
                       "({depreciation} depreciation, ${usd_per_kwh:g}/kWh, PUE {pue:g})", TCO_LINES)


def cmd_breakeven(ns) -> int:
    from .core import PRICE_FLAGS, breakeven_series, evaluate, resolve_inputs, verdict_text
    from .core import require_prices as require
    inputs = _collect_inputs(ns)
    res = evaluate(inputs, outputs=[*BREAKEVEN_LINES, *PRICE_FLAGS])
    used = resolve_inputs(inputs)
    require({**used, **res}, BREAKEVEN_LINES)
    series = breakeven_series(inputs)
    if ns.json:
        print(json.dumps({"inputs": {k: _jsonable(v) for k, v in used.items() if "__" not in k},
                          "results": {n: _jsonable(res[n]) for n in BREAKEVEN_LINES},
                          "verdict": verdict_text(res["verdict_code"]),
                          "series": {k: [_jsonable(x) for x in v] for k, v in series.items()}}, indent=2))
        return 0
    _report(ns, "gpu-tco breakeven: buy {n_gpus}x {gpu} or rent from " + used["offer"]
            + " ({hours_per_day:g} h/day for {months:g} months)", BREAKEVEN_LINES, inputs)
    print()
    print(f"Verdict: {verdict_text(res['verdict_code'])}" + (f" ({res['payback_months']:.1f} months)." if res["payback_months"] > 0 else "."))
    print()
    step = max(1, len(series["month"]) // 12)
    rows = [[int(m), _money(o), _money(r), "own" if o < r else "rent"]
            for m, o, r in list(zip(series["month"], series["own_cumulative_usd"], series["rent_cumulative_usd"]))[::step]]
    print(table(["month", "own, cumulative", "rent, cumulative", "cheaper"], rows))
    return 0


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
    rows.sort(key=lambda r: (r["gpu"], r["usd_per_gpu_hour"]))
    from .core import evaluate
    # the largest job each offer sells and what connects its machines, as the planner reads them
    sold = evaluate({"gpu": [r["gpu"] for r in rows], "offer": [r["name"] for r in rows]},
                    outputs=("offer_max_gpus", "offer_node_gpus")) if rows else {"offer_max_gpus": [], "offer_node_gpus": []}

    def largest(i: int, r) -> str:
        most, node = float(sold["offer_max_gpus"][i]), int(sold["offer_node_gpus"][i])
        if r["fabric_gbps_per_gpu"] > 0:
            limit = "any size" if most >= 1e9 else f"up to {most:,.0f}"
            return f"{limit}, {r['fabric_gbps_per_gpu']:g} Gbit/s per GPU"
        return f"one machine of {node}"
    print(table(["offer", "GPU", "GPUs", "type", "USD/GPU-h", "USD/instance-h", "billing s", "largest job, network", "as of"],
                [[r["name"], r["gpu"], int(r["gpus_per_instance"]), r["price_type"], f"{r['usd_per_gpu_hour']:.3f}",
                  f"{r['usd_per_instance_hour']:.2f}", int(r["billing_increment_s"]), largest(i, r), r["as_of"]]
                 for i, r in enumerate(rows)],
                align=["<", "<", ">", "<", ">", ">", ">", "<", "<"]))
    print(f"\n{len(rows)} offers from {', '.join(tab.files)}; sources per row: --json.")
    dates = sorted(str(r["as_of"]) for r in rows if r.get("as_of"))
    if dates:
        import datetime
        today = datetime.date.today()
        y, m = (int(x) for x in dates[-1][:7].split("-"))
        from .core import refreshed_note
        note = refreshed_note(rows)
        print(f"Prices as of {dates[0]} to {dates[-1]}: the newest is {(today.year - y) * 12 + today.month - m} months old "
              f"on {today.isoformat()}" + (f" ({note})" if note else "") +
              ". Prices move: gpu-tco offers --refresh brings today's (needs the live extra); check the offer's page before you rent.")
    return 0


def _refresh_offers(ns) -> int:
    """offers --refresh: today's offers through gpuhunt, progress on stderr, a summary on stdout."""
    from .core import refresh_offers as refresh
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
    from .core import api_prices
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


# the two memory views, named so nobody adds the allocator peak to the parts
MEMORY_ROW = {"allocator_peak": "allocator peak (PyTorch max_memory_allocated)", "total": "device total (must fit; nvidia-smi)"}


DEMAND_INPUTS = ("requests_per_s", "monthly_mtok")


def serving_demand_given(given: dict) -> bool:
    """Whether the user gave a serving demand (a request rate or a monthly volume): only then is a serving cost shown."""
    return any(k in given for k in DEMAND_INPUTS)


def _plan_differs(ns, given: dict, used: dict, res: dict) -> str:
    """One line: what `gpu-tco plan --task serve` recommends for the same inputs, and what it chose differently from this
    estimate (GPU, GPUs per replica, weight format, batch, rent or buy)."""
    from .core import SERVE_CHOSEN, serve_option_text, serve_plan
    job = {k: v for k, v in given.items() if k not in SERVE_CHOSEN}
    job["task"] = "serve"
    plan = serve_plan(job, gpus=getattr(ns, "scenario_gpus", None))
    rec = plan["recommended"]
    if rec is None:
        return "gpu-tco plan on the same demand finds no setup meeting the targets: " + plan["recommendation"]
    diffs = []
    if rec.gpu != used["gpu"]:
        diffs.append(f"GPU {rec.gpu} instead of {used['gpu']}")
    if rec.n_gpus != int(used["n_gpus"]):
        diffs.append(f"{rec.n_gpus} {'GPU' if rec.n_gpus == 1 else 'GPUs'} per replica instead of {int(used['n_gpus'])}")
    if rec.weights_dtype != used["weights_dtype"]:
        diffs.append(f"weights {rec.weights_dtype} instead of {used['weights_dtype']}")
    if rec.acquire == "rent" and rec.offer != used["offer"]:
        diffs.append(f"the offer {rec.offer} instead of {used['offer']}")
    elif rec.acquire == "buy" and int(used["buy"]) == 0:
        diffs.append("buying instead of renting")
    if rec.batch != int(res["serve_batch"]):
        diffs.append(f"batch {rec.batch} instead of {int(res['serve_batch'])}")
    what = "; it chooses " + ", ".join(diffs) if diffs else "; the same GPU, GPUs per replica, format and batch"
    return (f"gpu-tco plan on the same demand recommends: {serve_option_text(rec)} at {_money(rec.usd_per_month)} a month"
            f"{what} (this estimate keeps the GPU, count, format and offer given, or their defaults).")


def _estimate_serving(ns, given: dict, used: dict, res: dict) -> tuple[list, list]:
    """estimate --mode infer's serving block: (the table's rows, the notes below it) for the demand given; no rows and
    a note saying so when no demand was given (a serving cost is shown only for a demand the user gave)."""
    n = number_text
    if not serving_demand_given(given):
        return [], ["Serving cost: no demand given (requests_per_s or monthly_mtok), so none is shown; "
                    "gpu-tco plan --task serve --requests-per-s N plans a deployment for a demand."]
    print(f"serving the demand given, {n(res['serve_demand_requests_per_s'])} requests/s of {n(used['prompt_tokens'])} prompt + "
          f"{n(used['output_tokens'])} output tokens, on replicas of {n(used['n_gpus'])}x {used['gpu']} ({used['weights_dtype']}), "
          f"within {n(used['ttft_slo_ms'])} ms to the first token and {n(used['tpot_slo_ms'])} ms per token (0 = no target), "
          f"at a target utilization of {used['target_utilization']:g} with {n(used['spare_replicas'])} spare:")
    shown = [("meets the targets", "serve_ok"), ("batch per replica at full load", "serve_batch"),
             ("utilization planned", "serve_planned_utilization"),
             ("time to first token, service (ms)", "ttft_ms"), ("queueing wait at the planned load (ms)", "ttft_queue_wait_ms"),
             ("time to first token at the planned load (ms)", "serve_ttft_at_load_ms"), ("time per output token (ms)", "tpot_ms"),
             ("requests/s per replica", "serve_replica_requests_per_s"), ("replicas", "serve_replicas"),
             ("load of the replicas", "serve_load_fraction"), ("load with one replica down", "serve_load_after_failure"),
             ("servers if bought (whole servers)", "serve_servers"), ("GPUs bought", "own_gpus"),
             ("rented: USD per million input tokens", "serve_rent_usd_per_mtok_input"),
             ("rented: USD per million output tokens", "serve_rent_usd_per_mtok_output"),
             ("owned: USD per million input tokens", "serve_own_usd_per_mtok_input"),
             ("owned: USD per million output tokens", "serve_own_usd_per_mtok_output"),
             ("rented: USD per month", "serve_rent_usd_per_month"), ("owned: USD per month", "serve_own_usd_per_month"),
             ("API: USD per month for the same tokens", "serve_api_usd_per_month")]
    from .core import NO_PRICE, evaluate, price_gaps
    if used["task"] != "serve":  # what is owned is the deployment (whole servers), whatever task the estimate names
        res = {**res, **evaluate({**given, "task": "serve"}, outputs=[q for _, q in shown])}
    missing = price_gaps({**used, **res}, [q for _, q in shown])  # a missing price reads "no price", never 0
    facts = [[label, NO_PRICE if q in missing else bool(res[q]) if q == "serve_ok" else res[q]] for label, q in shown]
    notes = list(dict.fromkeys(missing.values()))
    notes.append(_plan_differs(ns, given, used, res))
    return facts, notes
def _fits_text(res, used) -> str:
    """Whether training fits, in words: yes, tight (peak above 90 % of the memory) or no (above the fit limit)."""
    if not res["fits_train"]:
        return f"no (more than {100 - used['memory_margin_pct']:g} % of the memory)"
    return "tight (above 90 % of the memory)" if res["train_memory_tight"] else "yes"


def _network_text(given) -> str:
    from .core import cluster_network
    return cluster_network(given)


def cmd_estimate(ns) -> int:
    from .core import QUANTITIES, breakdown, evaluate, resolve_inputs, row_of

    given = _collect_inputs(ns)
    res = evaluate(given)
    resolved = resolve_inputs(given)
    network = _network_text(given) if ns.mode == "train" else ""  # a named offer too small for the job is refused
    used = {i.name: resolved[i.name] for i in INPUTS}
    gpu_row, model_row = row_of(resolved, "gpu"), row_of(resolved, "model")
    model_name = model_row["name"]
    from .core import heads_problem, kv_replication_note
    split = int(resolved["n_gpus"]) if ns.mode == "infer" else int(resolved["tensor_parallel"])
    if ns.mode == "infer" and heads_problem(model_row, split):  # inference splits the model over all n_gpus
        raise InputError("n_gpus", split, f"GPUs in tensor parallel for inference {heads_problem(model_row, split)}")
    if kv_replication_note(model_row, split) and not ns.json:
        print(f"gpu-tco: note: {kv_replication_note(model_row, split)}", file=sys.stderr)
    assumptions = {
        "inputs": used,
        "gpu_source": f"{cite(gpu_row['source'], short=True)} (as of {gpu_row['as_of']})",
        "model_source": f"{cite(model_row['source'], short=True)}" + (f" (as of {model_row['as_of']})" if model_row.get("as_of") else ""),
        "model_is_estimate": bool(res["model_is_estimate"]),
        "network": network,
        # the serving quantities (serve_*) are for this demand: the user's, or the default one when none was given
        "serving_demand": "given" if serving_demand_given(given) else "default (not given: requests_per_s or monthly_mtok)",
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
        print(f"training with {used['framework']}: {used['method']}, {used['precision']}, {used['optimizer']}, "
              f"sharding {used['sharding']}, recompute {used['recompute']}, seq {used['seq_len']}, micro-batch {used['micro_batch']}")
        comp = breakdown(res, "train")
        print(table(["component", "GiB/GPU"], [[MEMORY_ROW.get(k, k), v] for k, v in comp.items() if k != "kv_cache"]))
        print()
        facts = [
            ["fits", _fits_text(res, used)], ["GPUs needed (this GPU)", res["gpus_needed"] or "never"],
            ["longest sequence that fits", res["max_train_seq_len"]],
            ["trainable parameters", res["trainable_params"]], ["training tokens", res["train_tokens_total"]],
            ["MFU used", res["mfu_effective"]], ["throughput (tokens/s)", res["train_tokens_per_s"]],
            ["training hours", res["train_hours"]],
            ["training hours, likely range", f"{res['train_hours_likely_low']:.3g} to {res['train_hours_likely_high']:.3g}"],
            ["device total GiB/GPU, likely range", f"{res['peak_train_gib_likely_low']:.3g} to "
                                                   f"{res['peak_train_gib_likely_high']:.3g}"],
            ["GPU-hours", res["train_gpu_hours"]],
        ]
    else:
        print(f"inference: weights {used['weights_dtype']}, KV {used['kv_dtype']}, context {used['context_tokens']}, batch {used['batch']}")
        comp = breakdown(res, "infer")
        print(table(["component", "GiB/GPU"], [[MEMORY_ROW.get(k, k), v] for k, v in comp.items()
                                               if k not in ("gradients", "optimizer", "logits")]))
        print()
        facts = [
            ["fits", res["fits_infer"]], ["KV cache, whole batch (GiB)", res["kv_cache_gib"]],
            ["KV bytes per token", res["kv_bytes_per_token"]], ["largest batch that fits", res["max_batch_fit"]],
            ["longest context that fits", res["max_context_fit"]],
            ["decode tokens/s per sequence", res["decode_tokens_per_s_per_seq"]],
            ["decode tokens/s, whole batch", res["decode_tokens_per_s"]], ["prefill tokens/s", res["prefill_tokens_per_s"]],
        ]
        if res["state_bytes_per_seq"] > 0:  # hybrid models: the state layers' fixed memory per sequence, in the kv_cache row
            facts.insert(3, ["fixed-size state bytes per sequence", res["state_bytes_per_seq"]])
        print(table(["result", "value"], facts))
        print()
        facts, notes = _estimate_serving(ns, given, used, res)
        if facts:  # the engine's figures (its fixed costs, the latency at a concurrency) after the per-token time
            at = next(i for i, (label, _) in enumerate(facts) if label.startswith("time per output token")) + 1
            facts[at:at] = _engine_facts(used, res)
    if facts:
        print(table(["result", "value"], facts))
    for note in notes if ns.mode == "infer" else ():
        print(note)
    if network:
        print(network)
    print()
    print(f"GPU data: {assumptions['gpu_source']}")
    print(f"Model data: {assumptions['model_source']}")
    return 0


ENGINE_FACTS = ("tpot_ms_likely_low", "tpot_ms_likely_high", "ttft_ms_likely_low", "ttft_ms_likely_high", "load_tpot_ms",
                "load_ttft_ms", "load_tpot_ms_likely_low", "load_tpot_ms_likely_high", "load_ttft_ms_likely_low",
                "load_ttft_ms_likely_high", "load_output_tokens_per_s_per_gpu", "serve_concurrency")


def _engine_facts(used: dict, res: dict) -> list:
    """Rows of the serving table for the engine: its name, the likely ranges, and the latency at the concurrency given."""
    from .core import engine_text, evaluate
    extra = evaluate(used, outputs=ENGINE_FACTS)
    rows = [["serving engine", engine_text(str(used["engine"]))],
            ["time to first token, likely range (ms)", f"{extra['ttft_ms_likely_low']:,.0f}-{extra['ttft_ms_likely_high']:,.0f}"],
            ["time per output token, likely range (ms)", f"{extra['tpot_ms_likely_low']:.1f}-{extra['tpot_ms_likely_high']:.1f}"]]
    if float(used["concurrency"]) > 0:
        c = number_text(extra["serve_concurrency"])
        rows += [[f"with {c} requests in flight: time to first token (ms)",
                  f"{extra['load_ttft_ms']:,.0f} (likely {extra['load_ttft_ms_likely_low']:,.0f}-{extra['load_ttft_ms_likely_high']:,.0f})"],
                 [f"with {c} requests in flight: time per output token (ms)",
                  f"{extra['load_tpot_ms']:.1f} (likely {extra['load_tpot_ms_likely_low']:.1f}-{extra['load_tpot_ms_likely_high']:.1f})"],
                 [f"with {c} requests in flight: output tokens/s per GPU", f"{extra['load_output_tokens_per_s_per_gpu']:,.0f}"]]
    return rows


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
    from .core import NO_PRICE

    def cell(r, c):  # a missing purchase price reads "no price", never 0
        if c == "purchase_usd" and not r[c] > 0:
            return NO_PRICE
        return _safe(str(r[c])) if isinstance(r[c], str) else r[c]
    print(table(heads, [[cell(r, c) for c in cols] for r in tab.rows]))
    print(f"\n{len(tab.rows)} rows from {', '.join(tab.files)}; every row's source: --json")
    for builtin, (typed, file) in tab.overrides.items():
        print(f"Your row {typed!r} in {file} overrides the built-in {builtin}.")
    return 0


def cmd_explain(ns) -> int:
    from .core import explain

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

    run(engine_only=ns.engine_only, cpu_time=ns.cpu_time)
    return 0


def _calibrate_to_fixed_point(rounds: int = 30) -> int:
    """``calibrate --write`` until the written catalogs stop changing: each round is a new process, because the fit
    reads the network slowdown and the defaults at the values the catalogs hold when the process starts."""
    from .core import calibration as cal

    def files() -> dict:
        return {p: p.read_bytes() for p in sorted(cal.DATA.glob("*.csv"))}
    before = files()
    for done in range(1, rounds + 1):
        run = subprocess.run([sys.executable, "-m", "gpu_tco", "calibrate", "--write", "--once"], capture_output=True, text=True)
        if run.returncode:
            sys.stderr.write(run.stderr or run.stdout)
            return run.returncode
        after = files()
        changed = [p.name for p in after if after[p] != before.get(p)]
        if not changed:
            print(f"calibrate --write: the fitted values hold still after {done} round{'' if done == 1 else 's'}")
            _write_bands()
            print("Run `gpu-tco docs` to refresh docs/calibration.md.")
            return 0
        print(f"round {done}: wrote {', '.join(changed)}")
        before = after
    print(f"calibrate --write: still moving after {rounds} rounds (see the last files written)", file=sys.stderr)
    _write_bands()
    return 1


def _write_bands() -> None:
    """The frameworks' uncertainty bands from the leave-one-source-out errors, in a new process that reads the values
    just written."""
    run = subprocess.run([sys.executable, "-c", "from gpu_tco.core import calibration as c; print(c.write_bands())"],
                         capture_output=True, text=True)
    print(f"bands: wrote {run.stdout.strip()}" if run.returncode == 0 else run.stderr)


def cmd_calibrate(ns) -> int:
    """The calibration set against the model: every row, the fitted values, leave-one-source-out errors."""
    from .core import calibration as cal

    rows = cal.load_measurements()
    if ns.write and not ns.once:
        return _calibrate_to_fixed_point()
    if ns.write:
        params = cal.fit(rows)
        for path in cal.apply(params, rows):
            print(f"wrote {path}")
        decision = cal.serving_family_decision()
        for path in cal.apply_serving(decision):
            print(f"wrote {path} (serving efficiency per GPU family: "
                  + (", ".join(f"{k} {v:.3g}" for k, v in decision["factors"].items()) or "none supported") + ")")
        from .core import serving_calibration as engines
        points = engines.fit_points()
        factors = engines.fit(points)
        path = engines.apply(factors, engines.bands(points, factors))
        print(f"wrote {path} (engine factors fitted on {len(points)} H100 and B200 serving points)")
        print("Run `gpu-tco docs` (a new process reads the new values) to refresh docs/calibration.md.")
        return 0
    print(table(["row", "source", "quantity", "measured", "modelled", "error", "in the fit"],
                [[r[0], r[1], r[3], r[4], r[5], r[6], r[7]] for r in cal.rows_table(rows)],
                align=["<", "<", "<", ">", ">", ">", "<"]))
    fitted, current = cal.fit(rows), cal.catalog_values()
    used = cal.informed(rows)
    print()
    print(table(["parameter", "prior", "fitted", "in the catalog"],
                [[n, f"{p:g}", f"{fitted[n]:.4g}" if n in used else "(no rows)", f"{current[n]:g}"]
                 for n, p in cal.PARAMETER_PRIORS.items()], align=["<", ">", ">", ">"]))
    loso = cal.leave_one_source_out(rows)
    print("\nLeave one source out (refit without the source, predict its rows):")
    print(table(["quantity", "rows", "median error", "worst error"],
                [[k, str(v["rows"]), f"{v['median']:.1%}", f"{v['worst']:.1%}"] for k, v in loso.items() if k != "by_source"],
                align=["<", ">", ">", ">"]))
    serving = cal.serving_measurements()
    decision = cal.serving_family_decision(serving)
    print("\nServing rows (the serving formulas at each row's workload):")
    print(table(["row", "source", "quantity", "measured", "modelled", "error", "in the fit"],
                [[m.id, m.source, m.quantity, f"{m.value:,.4g}", f"{p:,.4g}", f"{e:+.1%}", "yes" if cal.serving_in_fit(m) else "no"]
                 for m, p, e in cal.serving_errors(rows=serving)], align=["<", "<", "<", ">", ">", ">", "<"]))
    print(table(["serving errors (rows in the fit)", "rows", "median error", "worst error"],
                [[f"{label}: {k}", str(v["rows"]), f"{v['median']:.1%}", f"{v['worst']:.1%}"]
                 for label, loso in (("as shipped", decision["without"]), ("family factors, leave one source out", decision["with"]))
                 for k, v in loso.items() if k != "by_source"], align=["<", ">", ">", ">"]))
    print("Family factors " + ("kept" if decision["supported"] else "not supported by held-out sources: none kept") + ".")
    from .core import serving_calibration as engines
    points = engines.load_points()
    print("\nServing engines against NVIDIA's measured points (AIConfigurator 0.12.0): fitted on H100 and B200, "
          "checked on the other GPUs:")
    groups = [("H100 and B200 (fitted on)", engines.fit_points(points)), ("other GPUs (held out)", engines.held_out_points(points))]
    body = []
    for label, chosen in groups:
        for engine in ("all", *engines.FITTED_ENGINES):
            mine = [p for p in chosen if engine == "all" or p["engine"] == engine]
            s = engines.summary(mine)
            body.append([label, engine, str(s["points"]), f"{s['tpot_within']:.0%}", f"{s['ttft_median_ratio']:.2f}"])
    print(table(["points", "engine", "n", "TPOT within 30 %", "TTFT median ratio"], body, align=["<", "<", ">", ">", ">"]))
    print(f"\n{len(rows)} measurements from {len({m.source for m in rows})} sources, and {len(serving)} serving rows; "
          "details and citations: docs/calibration.md")
    return 0


def cmd_docs(ns) -> int:
    """Regenerate what is generated from the declarations: docs/quantities.md, docs/calibration.md, the classic
    add-in module (addin/udfs.py), the table of Excel functions in docs/excel.md and the figures README.md and
    docs/*.md state (gpu_tco.figures)."""
    from .addin.codegen import write_generated
    from .core import QUANTITIES_DOC_PATH as DOC_PATH
    from .core import write_calibration_doc as write_doc
    from .core import write_quantities_doc as write

    checkout = DOC_PATH.parent.parent
    if not (checkout / "pyproject.toml").is_file():
        # installed from the wheel: the project's docs/, README and add-in module are not here to refresh (and
        # nothing is written into the installed package); the quantities reference goes where --out says
        print(f"wrote {write(ns.out or 'quantities.md')}")
        print("(docs/calibration.md, the add-in module and the README's table are refreshed in a copy of the project)")
        return 0
    print(f"wrote {write(ns.out)}")
    print(f"wrote {write_doc()}")
    for path in write_generated(checkout / "docs" / "excel.md"):
        print(f"wrote {path}")
    from .figures import refresh  # after docs/calibration.md: README's error bands are read from it
    for path in refresh():
        print(f"wrote {path}")
    return _form_picture(DOC_PATH.parent / FORM_PICTURE)


FORM_PICTURE = "form.png"
FORM_PICTURE_SIZE = "1280x800"
FORM_PICTURE_SCENARIO = "examples/llama3-70b-lora.toml"  # relative to the repository


def _form_picture(path) -> int:
    """docs/form.png: the form at FORM_PICTURE_SIZE with the example scenario open, drawn offscreen
    (no display needed) in a process of its own (Qt starts once per process)."""
    import importlib.util
    import subprocess
    from pathlib import Path
    scenario = Path(path).parent.parent / FORM_PICTURE_SCENARIO
    if importlib.util.find_spec("PySide6") is None or not scenario.exists():
        print(f"skipped {path}: needs the gui extra (pip install 'gpu-tco[gui]') and {FORM_PICTURE_SCENARIO}")
        return 0
    import tempfile
    with tempfile.TemporaryDirectory() as config:  # the built-in catalogs and no saved window geometry, whoever runs it
        env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "GPU_TCO_CONFIG_DIR": config}
        run = subprocess.run([sys.executable, "-m", "gpu_tco", "form", "--scenario", str(scenario), "--screenshot", str(path),
                              "--size", FORM_PICTURE_SIZE], capture_output=True, text=True, env=env, timeout=300)
    if run.returncode:
        print(f"gpu-tco: error: {path}: {run.stderr.strip().splitlines()[-1] if run.stderr.strip() else 'the form did not answer'}",
              file=sys.stderr)
        return 1
    print(f"wrote {path}")
    return 0


MAIN_QUANTITIES = ["option_cost_usd", "option_ok", "option_hours", "option_usd_per_mtok_train", "peak_train_gib_per_gpu",
                   "gpu_memory_gib", "gpus_needed", "train_hours", "job_wall_hours", "mfu_effective", "rent_usd_per_gpu_hour",
                   "own_usd_per_gpu_hour", "own_capital_usd", "payback_months", "verdict_code"]
ESTIMATE_GROUPS = ("architecture", "lora", "training memory", "training compute", "inference", "serving")
CHOSEN_BY_THE_TOOL = {"gpu", "n_gpus", "offer", "buy"}  # the main job and the planner choose these themselves


def _inputs_for(quantities, drop=(), planner: bool = False) -> list[str]:
    """The inputs ``quantities`` read (and, for a command that plans, the planner's own), less ``drop``."""
    from .core import PLANNER_INPUTS, inputs_of
    names = inputs_of(quantities) + [n for n in (PLANNER_INPUTS if planner else ()) if n not in inputs_of(quantities)]
    return [n for n in names if n not in set(drop)]


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number; allowed: a whole number >= 1") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is too small; allowed: a whole number >= 1")
    return value


def build_parser() -> argparse.ArgumentParser:
    from .core import QUANTITIES, SERVE_OUTPUTS, __version__

    p = Parser(prog="gpu-tco", allow_abbrev=False, usage="gpu-tco [--INPUT VALUE ...] [--json] [--workbook PATH] [COMMAND ...]",
               description="Which GPUs, how many, how long, rent or buy, how much: memory, time and cost of LLM work "
                           "from sourced formulas. Without a command: compare the usual setups for a fine-tuning job, "
                           "name the recommended option and write the workbook.",
               epilog="Commands: estimate, plan, tco, breakeven, offers, apis, gpus, models, presets, explain, workbook, addin, "
                      "bench, calibrate, docs. Help on one: gpu-tco COMMAND --help.")
    p.add_argument("--version", action="version", version=f"gpu-tco {__version__}")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--workbook", default="gpu-tco.xlsx", metavar="PATH",
                   help="where the main job writes its workbook [gpu-tco.xlsx]; '' to skip")
    _add_input_options(p, _inputs_for(MAIN_QUANTITIES, drop={"gpu", "n_gpus", "buy"}, planner=True))
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    p.commands = {}

    def command(name, text, usage_args="[--INPUT VALUE ...] [--json]"):
        parser = sub.add_parser(name, allow_abbrev=False, help=text, description=text + ".", prog=f"gpu-tco {name}",
                                usage=f"gpu-tco {name} {usage_args}")
        p.commands[name] = parser
        return parser

    est = command("estimate", "memory, GPU count and time of one configuration", "[--mode train|infer] [--INPUT VALUE ...] [--json]")
    est.add_argument("--mode", choices=["train", "infer"], default="train", help="training (default) or inference")
    est.add_argument("--json", action="store_true", help="machine-readable output")
    _add_input_options(est, _inputs_for([n for n, q in QUANTITIES.items() if q.group in ESTIMATE_GROUPS]))
    pl = command("plan", "rank every GPU x count x (cloud offer or buying) for a job", "[--gpus A,B] [--top N] [--all] [--INPUT VALUE ...] [--json]")
    pl.add_argument("--gpus", default=None, metavar="A,B", help="comma-separated GPUs to consider (default: the whole catalog)")
    pl.add_argument("--top", type=_positive_int, default=15, metavar="N", help="acceptable options to list [15]")
    pl.add_argument("--all", action="store_true", help="also list rejected options and why")
    pl.add_argument("--json", action="store_true", help="machine-readable output")
    _add_input_options(pl, ["task"] + _inputs_for([n for n in QUANTITIES if n.startswith("option_")] + ["peak_train_gib_per_gpu"]
                                                  + list(SERVE_OUTPUTS), drop=CHOSEN_BY_THE_TOOL, planner=True))
    for name, text, lines in (("tco", "total cost of owning a setup, line by line", TCO_LINES),
                              ("breakeven", "buy versus rent: payback, break-even, month by month",
                               BREAKEVEN_LINES + ["own_cumulative_usd", "rent_cumulative_usd"])):
        c = command(name, text)
        c.add_argument("--json", action="store_true", help="machine-readable output")
        _add_input_options(c, _inputs_for(lines, drop={"at_month"}))
    _catalog_commands(command)
    ex = command("explain", "formula, Excel formula, source and inputs of a quantity", "QUANTITY [--INPUT VALUE ...] [--json]")
    ex.add_argument("quantity", help="a quantity name, e.g. peak_train_gib_per_gpu (docs/quantities.md lists them)")
    ex.add_argument("--json", action="store_true", help="machine-readable output")
    _add_input_options(ex)
    _tool_commands(command)
    return p


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


def _tool_commands(command) -> None:
    """The commands that write files or run tools: workbook, addin, form, bench, calibrate, docs."""
    wbp = command("workbook", "write the formula-linked Excel workbook", "--out FILE [--email-draft FILE.eml] [--scenario FILE] [--INPUT VALUE ...]")
    wbp.add_argument("--out", required=True, metavar="FILE", help="target .xlsx file")
    wbp.add_argument("--email-draft", default=None, metavar="FILE.eml",
                     help="also write an e-mail draft (.eml, opens as a draft in Outlook or Thunderbird) with the workbook attached")
    _add_input_options(wbp)
    ad = command("addin", "Excel functions: build the xlwings Lite files or the demo workbook", "{lite,demo} --out PATH")
    ad_sub = ad.add_subparsers(dest="addin_command", required=True, metavar="{lite,demo}")
    lite = ad_sub.add_parser("lite", allow_abbrev=False, prog="gpu-tco addin lite", help="write main.py and requirements.txt for xlwings Lite")
    lite.add_argument("--out", required=True, metavar="FOLDER", help="folder for main.py and requirements.txt")
    demo = ad_sub.add_parser("demo", allow_abbrev=False, prog="gpu-tco addin demo", help="write a workbook showing every GPU_* function")
    demo.add_argument("--out", required=True, metavar="FILE", help="target .xlsx file")
    fm = command("form", "open the desktop form (needs the gui extra: pip install 'gpu-tco[gui]')",
                 "[--scenario FILE] [--screenshot FILE.png] [--size WxH]")
    fm.add_argument("--scenario", default=None, metavar="FILE", help="open a scenario (JSON or TOML)")
    fm.add_argument("--screenshot", default=None, metavar="FILE.png", help="compute, save a picture of the window and exit")
    fm.add_argument("--size", default=None, metavar="WxH", help="window size in pixels, e.g. 1280x800")
    bn = command("bench", "print the speed figures", "[--engine-only] [--cpu-time]")
    bn.add_argument("--engine-only", action="store_true", help="the engine, planners and Excel functions only (no sweeps in "
                    "fresh processes, form, main job or workbook)")
    bn.add_argument("--cpu-time", action="store_true", help="time the figures measured in one process by its CPU time (a "
                    "machine shared with other busy processes: what they would be on an idle one)")
    cal = command("calibrate", "compare the model with the published measurements it is calibrated on", "[--write]")
    cal.add_argument("--write", action="store_true", help="refit and write the fitted values into the catalogs (repeated until "
                     "they hold still: the fit reads the network slowdown at the catalogs' current values)")
    cal.add_argument("--once", action="store_true", help=argparse.SUPPRESS)  # one round of --write (a fresh process each)
    dc = command("docs", "regenerate docs/quantities.md, docs/calibration.md, docs/form.png, the add-in module, docs/excel.md's "
                         "function table and the figures README and docs state", "[--out PATH]")
    dc.add_argument("--out", default=None, metavar="PATH",
                    help="where to write the quantities reference [docs/quantities.md; installed: quantities.md here]")


def cmd_addin(ns) -> int:
    if ns.addin_command == "lite":
        from gpu_tco.addin.lite import build
        for path in build(ns.out):
            print(path)
        print("Paste main.py into xlwings Lite's main.py tab and requirements.txt into its requirements.txt tab.")
    else:
        from gpu_tco.addin.demo import write_demo
        print(write_demo(ns.out))
    return 0


def _workbook_error():
    try:
        from gpu_tco.workbooks import WorkbookError
        return WorkbookError
    except ImportError:  # openpyxl missing: the workbook commands report it themselves
        return InputError


def cmd_form(ns) -> int:
    import importlib.util
    if importlib.util.find_spec("PySide6") is None:  # Qt itself is imported by gpu_tco.gui only
        print("gpu-tco: error: the desktop form needs PySide6: pip install 'gpu-tco[gui]'", file=sys.stderr)
        return EXIT_BAD_INPUT
    from .gui.app import main as form_main
    argv = [*(["--scenario", ns.scenario] if ns.scenario else []), *(["--screenshot", ns.screenshot] if ns.screenshot else []),
            *(["--size", ns.size] if ns.size else [])]
    return form_main(argv)


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
    from .core import PRESETS
    rows = [[name, _wrap_pairs([f"{k}={v}" for k, v in p.items()], PRESET_TEXT_WIDTH)] for name, p in PRESETS.items()]
    print(table(["preset", "inputs it sets"], rows, align=["<", "<"]))
    print("\nUse one with --preset NAME on any command; --INPUT options override it. Sources: core/presets.py.")
    return 0


def main(argv=None) -> int:
    """Run the command line ``argv`` (default: sys.argv); the exit code: 0 done, 2 bad input or a file that
    cannot be read or written (one line on stderr), 130 interrupted (Ctrl-C), 1 a bug (one line)."""
    interrupted: list[bool] = []

    def on_ctrl_c(signum, frame):
        if interrupted:  # a second Ctrl-C: at once
            _exit_interrupted()
        interrupted.append(True)
        raise KeyboardInterrupt  # unwinds the command, so a writer removes its temporary

    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGINT, on_ctrl_c)
    try:
        try:
            return _run(argv, interrupted)
        except KeyboardInterrupt:  # while an error line was being printed
            print(INTERRUPTED, file=sys.stderr)
            return EXIT_INTERRUPTED
    finally:
        if previous is not None:
            # the command's work is done: as the gpu-tco process itself, a Ctrl-C from here on has nothing to
            # interrupt (SIG_IGN also holds through Python's own shutdown, which resets other handlers to the
            # default and would let a late Ctrl-C end the process with -2 instead of its exit code)
            signal.signal(signal.SIGINT, signal.SIG_IGN if _started_as_the_command() else previous)


def _run(argv, interrupted: list) -> int:
    ns = None
    try:
        parser = build_parser()
        ns, extra = parser.parse_known_args(argv)
        if extra:  # name the command whose --help lists what it takes
            parser.commands.get(ns.command, parser).error(f"unrecognized arguments: {' '.join(extra)}")
        handlers = {None: cmd_main, "estimate": cmd_estimate, "gpus": cmd_catalog, "models": cmd_catalog,
                    "explain": cmd_explain, "bench": cmd_bench, "docs": cmd_docs, "plan": cmd_plan, "tco": cmd_tco,
                    "breakeven": cmd_breakeven, "offers": cmd_offers, "workbook": cmd_workbook, "addin": cmd_addin,
                    "presets": cmd_presets, "form": cmd_form, "calibrate": cmd_calibrate, "apis": cmd_apis}
        return handlers[ns.command](ns)
    except KeyboardInterrupt:
        print(INTERRUPTED, file=sys.stderr)
        return EXIT_INTERRUPTED
    except SystemExit:
        raise
    except BaseException as err:  # noqa: BLE001 - sorted below; the last resort is one line, never a traceback
        if interrupted:  # whatever a library made of the KeyboardInterrupt it was interrupted with
            print(INTERRUPTED, file=sys.stderr)
            return EXIT_INTERRUPTED
        if not isinstance(err, Exception):
            raise
        return _report_error(err, ns)


def _report_error(err: Exception, ns) -> int:
    if isinstance(err, (GpuTcoError, _workbook_error())):
        print(f"gpu-tco: error: {_safe(str(err))}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if isinstance(err, BrokenPipeError):  # e.g. piped into head
        return 0
    if isinstance(err, RecursionError):
        print("gpu-tco: error: an input is nested too deeply", file=sys.stderr)
        return EXIT_BAD_INPUT
    if isinstance(err, OSError):  # a full disk, a file too large, no permission: the machine's answer, in one line
        where = err.filename if err.filename is not None else getattr(ns, "out", None)
        room = " (not enough room: free some disk space or write elsewhere)" if err.errno in _NO_ROOM else ""
        print(f"gpu-tco: error: {_safe(str(where))[:200] + ': ' if where is not None else ''}"
              f"{_safe(err.strerror or str(err))}{room}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if os.environ.get("GPU_TCO_DEBUG"):
        raise err
    print(f"gpu-tco: internal error: {type(err).__name__}: {_safe(str(err))[:200]} "
          "(please report it; GPU_TCO_DEBUG=1 shows the details)", file=sys.stderr)
    return 1


_NO_ROOM = {getattr(errno, name) for name in ("ENOSPC", "EFBIG", "EDQUOT") if hasattr(errno, name)}


if __name__ == "__main__":
    sys.exit(main())
