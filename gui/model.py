"""The form's state and its answer, without Qt: what the window shows, computed by core.

``FormState`` holds what the user typed (text per field, the GPU scope) and turns it into
core inputs, with core's own message for every field it rejects.  ``compute`` asks core
(plan, evaluate, breakdown, breakeven_series) for exactly what the window shows; no formula
and no ranking rule lives here (the planner ranks, the formula layer computes).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Mapping

import numpy as np

from ..core import (
    BOUGHT_OUTPUTS,
    NO_PRICE,
    NOT_ADDITIVE,
    PLAN_OUTPUTS,
    PRICE_FLAGS,
    SERVE_CHOSEN,
    SERVE_OUTPUTS,
    SERVES_NOTHING,
    TRAIN_COMPONENTS,
    GpuTcoError,
    Input,
    InputError,
    ServeOption,
    at_least_text,
    bought_instead,
    breakdown,
    breakeven_series,
    catalog,
    check_input,
    evaluate,
    fit_word,
    inputs_of,
    likely_hours_text,
    nearest_option,
    number_text,
    option_inputs,
    option_text,
    plan,
    ranks_purchases,
    serve_curves,
    serve_option_inputs,
    serve_plan,
    tradeoff_curve,
)
from ..core import INPUT_SECTIONS as SECTIONS
from ..core import INPUTS_BY_NAME as BY_NAME
from ..core import compose_recommendation as compose
from ..core import plan_scope as scope
from ..core import price_gaps as gaps

# what the headline reads for the recommended setup, bought and rented
HEADLINE_OUTPUTS = BOUGHT_OUTPUTS
CASH_OUTPUTS = ("own_cumulative_usd", "rent_cumulative_usd")
# serving the model on the same GPUs against an API's price (the serving section of the form)
# every one on the basis the costs use: the batch one replica sustains within the latency targets (serve_tokens_per_s)
SERVING_OUTPUTS = ("serve_tokens_per_s", "serve_batch", "decode_usd_per_mtok_rent", "decode_usd_per_mtok_own",
                   "selfhost_rent_breakeven_mtok_per_month", "selfhost_breakeven_mtok_per_month")
# chosen by the form's hardware controls (GPU list, count, offer) or swept by a chart, not typed
SCOPE_INPUTS = ("gpu", "n_gpus", "offer", "buy", "at_month")
TRAIN_ANSWER = list(PLAN_OUTPUTS) + list(HEADLINE_OUTPUTS) + list(CASH_OUTPUTS) + list(SERVING_OUTPUTS)
# the inputs the shown answers depend on (from the expression trees), in declaration order: a training job's and a
# serving deployment's (the serving planner chooses the weight format as it chooses the GPU)
# plus the planner's own switch for ranking purchases of a one-off job (no formula reads it)
FORM_INPUTS: tuple[Input, ...] = tuple(
    BY_NAME[n] for n in inputs_of(TRAIN_ANSWER + list(SERVE_OUTPUTS)) if n not in SCOPE_INPUTS) + (BY_NAME["consider_buying"],)
TASKS = ("train", "serve")
# training mode's serving figures (the trained model on the same GPUs, at the batch a replica sustains within the
# targets) read the demand and the prefill/decode layout too, through the layout the planner picks; those are serving
# mode's questions (shown and kept there), not a training job's
SERVE_DEMAND_INPUTS = ("requests_per_s", "monthly_mtok", "serving_layout", "kv_transfer_gb_per_s", "disaggregation_min_saving_pct")
SHOWN = {"train": frozenset(n for n in inputs_of(TRAIN_ANSWER) if n not in SCOPE_INPUTS and n not in SERVE_DEMAND_INPUTS)
         | {"consider_buying"},
         "serve": frozenset(n for n in inputs_of(list(SERVE_OUTPUTS)) if n not in SCOPE_INPUTS and n not in SERVE_CHOSEN)}
# a serving job's own questions, shown in the job's box in serving mode (the demand, the targets, the API)
SERVE_JOB_INPUTS = ("requests_per_s", "monthly_mtok", "prompt_tokens", "output_tokens", "ttft_slo_ms", "tpot_slo_ms",
                    "hours_per_day", "api_model")
MEMORY_COMPONENTS = tuple(k for k, v in TRAIN_COMPONENTS.items() if v and k not in NOT_ADDITIVE)
CHART_SETUPS = 6    # setups in the memory chart
CHART_OPTIONS = 10  # options in the cost chart
_SUFFIX = {"k": 1e3, "K": 1e3, "M": 1e6, "B": 1e9, "G": 1e9, "T": 1e12}
_NUMBER = re.compile(r"^\s*([-+]?(?:\d[\d,_ ]*(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)\s*([kKMBGT]?)\s*$")


def sections() -> list[tuple[str, list[Input]]]:
    """The form's inputs by section (core's SECTIONS order), the advanced ones last."""
    return [(s, [i for i in FORM_INPUTS if i.section == s]) for s in SECTIONS if any(i.section == s for i in FORM_INPUTS)]


def parse_number(text: str):
    """The number in ``text`` ("4096", "1e8", "200,000,000", "200M"), or the text itself when it
    is not one (core then names what is allowed)."""
    m = _NUMBER.match(text or "")
    if not m:
        return text.strip()
    x = float(re.sub(r"[,_ ]", "", m.group(1))) * _SUFFIX.get(m.group(2), 1.0)
    return int(x) if x.is_integer() and abs(x) < 2**53 else x


def value_text(inp: Input, value) -> str:
    """A value as the field shows it."""
    if inp.kind == "flag":
        return "1" if value else "0"
    if isinstance(value, Mapping):
        return str(value.get("name") or "custom architecture")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if not math.isfinite(value):
        return str(value)
    return number_text(value)


def field_error(inp: Input, value) -> str | None:
    """Core's message for one field's value, or None when it is allowed (checks between fields come with
    the answer: the planner chooses the GPU count, so tensor_parallel is checked against its choices)."""
    try:
        check_input(inp.name, value)
    except InputError as err:
        return str(err)
    except GpuTcoError as err:
        return str(err)
    return None


@dataclass
class FormState:
    """What the user entered: values by input name (what is not there keeps core's default),
    and the planner's scope (GPU types, a fixed count, one offer)."""
    values: dict = field(default_factory=dict)
    errors: dict = field(default_factory=dict)   # name -> message (core's words)
    gpus: list[str] | None = None                # None = every GPU in the catalog
    count: int | None = None                     # None = the smallest that fits, then doublings
    offer: str | None = None                     # None = every priced offer (the cheapest wins)

    def set_text(self, name: str, text: str) -> str | None:
        """Set a field from what was typed; returns core's message when it is not allowed."""
        return self.set_value(name, text.strip() if BY_NAME[name].kind == "choice" else parse_number(text))

    def set_value(self, name: str, value) -> str | None:
        inp = BY_NAME[name]
        message = field_error(inp, value)
        if message:
            self.errors[name] = message
        else:
            self.errors.pop(name, None)
            self.values[name] = value
        return message

    def task(self) -> str:
        """The job's kind as the form shows it: "serve" or "train" (a rejected value leaves the last valid one)."""
        return "serve" if self.values.get("task") == "serve" else "train"

    def blocking(self) -> dict:
        """The errors that hold the answer back: those of the fields the current task shows (and of the planner's
        scope); a rejected value of a field the other task reads stays marked there, and its default is used."""
        hidden = SHOWN["train" if self.task() == "serve" else "serve"] - SHOWN[self.task()]
        return {k: v for k, v in self.errors.items() if k not in hidden}

    def job(self) -> dict:
        """The valid inputs the user set (typed, chosen or opened), in the order they were first set."""
        return {k: v for k, v in self.values.items() if k not in self.errors}

    def scenario(self) -> dict:
        """The scenario as the command line reads it: the job, and the scope as inputs
        (one GPU type -> gpu, several -> gpus, a fixed count -> n_gpus, one offer -> offer)."""
        out = self.job()
        if self.gpus and len(self.gpus) == 1:
            out["gpu"] = self.gpus[0]
        elif self.gpus:
            out["gpus"] = list(self.gpus)
        if self.count is not None:
            out["n_gpus"] = self.count
        if self.offer is not None:
            out["offer"] = self.offer
        return out

    def workbook_inputs(self) -> tuple[dict, list[str] | None]:
        """(inputs, gpus) for the workbook and the e-mail: the scenario as `gpu-tco workbook --scenario`
        reads it (the GPU list is the planner's scope, not an input; the workbook lists every GPU)."""
        inputs = self.scenario()
        return inputs, inputs.pop("gpus", None)

    def load(self, data: Mapping) -> dict:
        """Replace the state with a scenario's (inputs, and gpu/gpus/n_gpus/offer as the scope).
        Returns the errors (name -> message) of values the form could not take."""
        from ..core import split_scenario
        inputs, gpus = split_scenario(data)
        self.values, self.errors = {}, {}
        job, where = scope(inputs, gpus)
        unknown = [k for k in job if k not in BY_NAME]
        if unknown:
            raise InputError(unknown[0], None, "is not an input; see docs/quantities.md")
        self.gpus = [catalog.gpus().canonical(g, "gpu") for g in where["gpus"]] if "gpus" in where else None
        self.count = None
        if "count" in where:
            message = field_error(BY_NAME["n_gpus"], where["count"])
            if message:
                raise InputError("n_gpus", where["count"], BY_NAME["n_gpus"].allowed())
            self.count = int(where["count"])
        self.offer = None
        if where.get("offer") not in (None, catalog.AUTO_OFFER):
            self.offer = catalog.offers().canonical(where["offer"], "offer")
        for name, value in job.items():
            self.set_value(name, value)
        return dict(self.errors)


@dataclass
class Figure:
    """One number of the headline: its label, value, unit, and what explains it."""
    label: str
    value: float
    unit: str
    quantity: str          # the quantity core.explain explains
    inputs: dict           # the inputs it was computed with
    text: str = ""         # shown instead of the value: "no price" when a price is missing


def _daily_use_text(breakeven_hours_per_day: float) -> str:
    """The break-even use as the answer's sentence words it: rounded up to a tenth (at 23.93 h/day owning does not yet
    pay at 23.9), or why there is none."""
    return at_least_text(breakeven_hours_per_day) if 0 < breakeven_hours_per_day <= 24 else "not within the months of ownership"


# which quantity each planner column is (for explanations)
OPTION_QUANTITIES = {"peak_gib_per_gpu": "peak_train_gib_per_gpu", "hours": "option_hours", "cost_usd": "option_cost_usd",
                     "outlay_usd": "option_outlay_usd", "usd_per_mtok_train": "option_usd_per_mtok_train",
                     "usd_per_gpu_hour": "rent_usd_per_gpu_hour"}


def _nothing_acceptable(result: dict, shown) -> str:
    """The headline when no option meets every requirement: how many failed which check, and the first option's fix."""
    text = f"{compose(result).text} The table lists every option and why it fails."  # core's sentences, as every door
    if shown is not None:
        text += f" The key figures are for {option_text(shown)}."
        if not shown["fits"]:
            from ..core import what_would_fit
            change = what_would_fit(option_inputs(result["given"], shown, result["price_gpu"]))
            if change is not None:
                text += f" It {change.sentence()}."
    return text


def compute(state: FormState) -> dict:
    """Everything the window shows for ``state``: the planner's result, the headline, and the
    charts' series.  Raises ``GpuTcoError`` when the inputs together are not allowed."""
    if state.task() == "serve":
        return compute_serve(state)
    job = state.job()
    where = {}
    if state.gpus:
        where["gpus"] = state.gpus
    if state.count is not None:
        where["count"] = state.count
    if state.offer is not None:
        where["offer"] = state.offer
    # a purchase or rental price typed in the form is the price of the GPU chosen, when one is
    price_gpu = state.gpus[0] if state.gpus and len(state.gpus) == 1 else None
    result = plan(job, **where, price_gpu=price_gpu)  # validates the job (at a GPU count the planner may choose)
    price_gpu = result["price_gpu"]
    options = result["options"]
    rec = result["recommended"]
    answer = {"job": job, "plan": result, "options": options, "recommended": rec,
              "figures": [], "headline": "", "memory": None, "costs": None, "cash": None}
    # nothing acceptable: the figures of the option the answer names first (the nearest), else of the first listed
    shown = rec or nearest_option(result) or next((o for o in options if o["n_gpus"] > 0), None)
    if rec is None:
        answer["headline"] = _nothing_acceptable(result, shown)
    if shown is not None:
        mine = option_inputs(job, shown, price_gpu)
        bought_in = {**mine, "buy": 1}  # the same GPUs bought: payback against the shown offer's price
        rented_in = {**mine, "buy": 0}
        bought = bought_instead(job, shown, price_gpu)
        rented = evaluate(rented_in, outputs=("option_cost_usd", "gpu_memory_gib", *SERVING_OUTPUTS, *PRICE_FLAGS))
        payback = float(bought["payback_months"])
        answer["figures"] = [
            Figure("Memory per GPU", shown["peak_gib_per_gpu"], "GiB", "peak_train_gib_per_gpu", mine),
            Figure("Job time", shown["hours"], "hours", "option_hours", mine),
            Figure("Job cost, rented", float(rented["option_cost_usd"]), "USD", "option_cost_usd", rented_in),
            Figure("Job cost, owned (its share)", float(bought["option_cost_usd"]), "USD", "option_cost_usd", bought_in),
            Figure("Capital to buy", float(bought["own_capital_usd"]), "USD", "own_capital_usd", bought_in),
            # a one-off job: the daily use from which owning costs less (resale counted); GPUs busy after the job: the
            # months until the rent saved repays the capital (discounted, resale not counted), as the answer's sentences word them
            Figure("Months until the rent saved repays buying (at the discount rate)", payback, "months", "payback_months", bought_in)
            if ranks_purchases(result["inputs"])
            else Figure("Owning costs less than renting from a daily use of", float(bought["breakeven_hours_per_day"]), "h/day",
                        "breakeven_hours_per_day", bought_in, _daily_use_text(float(bought["breakeven_hours_per_day"]))),
            Figure("Cost per million training tokens", shown["usd_per_mtok_train"], "USD", "option_usd_per_mtok_train", mine),
            # serving the model on the same GPUs (the serving inputs: context, batch, formats, API price)
            Figure(f"Serving: generated tokens per second ({serving_basis(rented)})", float(rented["serve_tokens_per_s"]),
                   "tokens/s", "serve_tokens_per_s", rented_in),
            Figure("Serving: cost per million tokens, rented", float(rented["decode_usd_per_mtok_rent"]), "USD",
                   "decode_usd_per_mtok_rent", rented_in),
            Figure("Serving: cost per million tokens, owned", float(rented["decode_usd_per_mtok_own"]), "USD",
                   "decode_usd_per_mtok_own", rented_in),
            Figure("Renting beats the API above", float(rented["selfhost_rent_breakeven_mtok_per_month"]), "Mtok/month",
                   "selfhost_rent_breakeven_mtok_per_month", rented_in),
            Figure("Owning beats the API above", float(rented["selfhost_breakeven_mtok_per_month"]), "Mtok/month",
                   "selfhost_breakeven_mtok_per_month", rented_in),
        ]
        gpu_gib = float(rented["gpu_memory_gib"])
        # a figure that rests on a price the catalogs lack says "no price" (never $0)
        for i, fig in enumerate(answer["figures"]):
            missing = gaps({**fig.inputs, "gpu": shown["gpu"], **rented}, [fig.quantity])
            if missing:
                answer["figures"][i] = Figure(fig.label, float("nan"), fig.unit, fig.quantity, fig.inputs, NO_PRICE)
        if rec is not None:
            worded = compose(result)
            answer["recommendation"] = worded
            how = ("It fits by the estimate; it may not fit" if rec["may_exceed"] else
                   "It fits, tightly" if rec["tight"] else "It fits")
            answer["headline"] = (f"Recommended: {worded.text} {how} ({rec['peak_gib_per_gpu']:.1f} of {gpu_gib:.0f} GiB "
                                  f"per GPU). Its hours: {likely_hours_text(rec, result['job']['framework'])}.")
        answer["cash"] = {"label": f"{shown['n_gpus']}x {shown['gpu']}", **breakeven_series(rented_in)}
    answer["memory"] = _memory_series(job, options)
    ok = [o for o in options if o["ok"]][:CHART_OPTIONS]
    answer["costs"] = {"labels": [option_label(o) for o in ok], "usd": [o["cost_usd"] for o in ok]}
    return answer


def option_label(option: Mapping) -> str:
    """A short name for an option in a chart: "8x H100-SXM rent" or "8x H100-SXM buy" (the offer is in the table)."""
    return f"{option['n_gpus']}x {option['gpu']} {option['acquire']}"


def _memory_series(job: Mapping, options: list[dict]) -> dict | None:
    """Memory per GPU by component (GiB) for the first distinct setups in the ranking."""
    setups = []
    for o in options:
        key = (o["gpu"], o["n_gpus"])
        if o["n_gpus"] > 0 and key not in setups:
            setups.append(key)
        if len(setups) == CHART_SETUPS:
            break
    if not setups:
        return None
    names = [v for v in TRAIN_COMPONENTS.values() if v] + ["gpu_memory_gib"]
    res = evaluate({**job, "gpu": [g for g, _ in setups], "n_gpus": [n for _, n in setups]}, outputs=names)
    parts = breakdown(res, "train")
    return {"setups": [f"{n}x {g}" for g, n in setups],
            "components": {c: [float(x) for x in parts[c]] for c in MEMORY_COMPONENTS},
            "total": [float(x) for x in parts["total"]],
            "capacity": [float(x) for x in res["gpu_memory_gib"]]}


# what decides first (setup, rent or buy, hours, cost, cash), the long texts (offer, reasons) last
# the deciding columns first (the setup, rent or buy, hours, cost, cash needed), then the offer that tells two rows of
# one setup apart, the other figures, and the reasons last
def serving_basis(values) -> str:
    """The basis of the training form's serving figures in words: the requests one replica decodes at once."""
    batch = int(float(values["serve_batch"]))
    return f"{batch:,} requests at once" if batch >= 1 else "one request at a time: no batch meets the targets"


TABLE_HEADERS = ("Rank", "Setup", "Rent or buy", "Hours", "Job cost (USD)", "Cash needed (USD)", "Cloud offer", "GiB per GPU",
                 "USD per GPU-hour", "USD per million tokens", "Acceptable", "Why not")


def results_table(options: list[dict], include_rejected: bool) -> tuple[list[str], list[list]]:
    """The ranked table as the window and Copy results show it: headers and rows of values."""
    if options and isinstance(options[0], ServeOption):
        return serve_table(options, include_rejected)
    headers = list(TABLE_HEADERS)
    rows = []
    for rank, o in enumerate(options, start=1):
        if not o["ok"] and not include_rejected:
            continue
        # a missing price reads "no price", never 0
        unpriced = any(r.startswith("no price") for r in o["reasons"])
        price = (lambda x: NO_PRICE) if unpriced else (lambda x: x)  # noqa: E731
        rows.append([rank, f"{o['n_gpus']}x {o['gpu']}" if o["n_gpus"] else o["gpu"], o["acquire"] or "-", o["hours"],
                     price(o["cost_usd"]), price(o["outlay_usd"]), o["offer"] or "-", o["peak_gib_per_gpu"],
                     price(o["usd_per_gpu_hour"]), price(o["usd_per_mtok_train"]),
                     fit_word(o["ok"], o["tight"], o["may_exceed"]),
                     "; ".join(o["reasons"])])
    return headers, rows


def tab_separated(headers: list[str], rows: list[list]) -> str:
    """Rows as tab-separated text (pastes into Excel as a table; numbers unformatted so they stay numbers)."""
    def cell(v):
        if isinstance(v, float):
            return "" if not math.isfinite(v) else repr(float(f"{v:.10g}"))  # 10 significant digits, small numbers too
        return str(v).replace("\t", " ").replace("\n", " ")
    return "\n".join("\t".join(cell(v) for v in row) for row in [headers, *rows]) + "\n"



def auto_placeholders(answer: Mapping) -> dict[str, tuple[str, str]]:
    """What each input left at 0 ("automatic") stands for in the shown answer, from core:
    {input: ("auto: 0.31, calibrated for H100-SXM", "auto: 0.31")} for the option the key figures describe; in serving
    mode, with no API chosen, the API the plan compared with (api_model: (its words, its name))."""
    from ..core import auto_in_use as in_use
    figures = answer.get("figures") or []
    out = {name: (d["text"], d["short"]) for name, d in in_use(figures[0].inputs).items()} if figures else {}
    plan = answer.get("plan") or {}
    if answer.get("task") == "serve" and "api_model" not in (answer.get("job") or {}) and plan.get("inputs"):
        # the API the plan compared with, chosen for the model (its own, one of its architecture, else the nearest in size)
        api = str(plan["inputs"]["api_model"])
        same = plan.get("api", {}).get("same_model", True)
        out["api_model"] = (f"{api}: chosen for this model ({'its own API' if same else 'no API serves it: the nearest in size'}); "
                            "choose another to compare with it", api)
    return out


# --- serving mode: the serving planner's answer (core.serve_plan) and its charts' series -------------------------
# the key figures of a serving setup: (label, quantity, unit); "{way}" is rent or own, by how the setup is had
SERVE_FIGURES = (("Time to first token at full load", "ttft_ms", "ms"), ("Time to first token, likely from", "ttft_ms_likely_low", "ms"),
                 ("Time to first token, likely to", "ttft_ms_likely_high", "ms"),
                 ("Queueing wait before the first token at the planned load", "ttft_queue_wait_ms", "ms"),
                 ("Time to first token at the planned load", "serve_ttft_at_load_ms", "ms"),
                 ("Time per generated token at the planned load", "serve_tpot_at_load_ms", "ms"),
                 ("Time per generated token at full load", "tpot_ms", "ms"), ("Time per generated token, likely from", "tpot_ms_likely_low", "ms"),
                 ("Time per generated token, likely to", "tpot_ms_likely_high", "ms"),
                 ("Requests at once per replica", "serve_layout_batch", "sequences"),
                 ("Prefill and decode apart (1 = yes)", "serve_disaggregated", "flag"),
                 ("Prefill replicas (disaggregated)", "disagg_prefill_replicas", "replicas"),
                 ("Decode replicas (disaggregated)", "disagg_decode_replicas", "replicas"),
                 ("KV cache sent per prompt (disaggregated)", "disagg_kv_transfer_ms", "ms"),
                 ("Requests per second per replica", "serve_replica_requests_per_s", "requests/s"),
                 ("Replicas (spares included)", "serve_replicas", "replicas"),
                 ("Load of the replicas", "serve_load_fraction", "fraction"),
                 ("Load with one replica down", "serve_load_after_failure", "fraction"),
                 ("Servers bought (whole servers)", "serve_servers", "servers"), ("Tokens per month", "serve_mtok_per_month", "Mtok/month"),
                 ("Monthly cost of the setup", "serve_option_usd_per_month", "USD"),
                 ("Cost per million input tokens", "serve_{way}_usd_per_mtok_input", "USD"),
                 ("Cost per million output tokens", "serve_{way}_usd_per_mtok_output", "USD"),
                 ("The API for the same tokens, per month", "serve_api_usd_per_month", "USD"),
                 ("The setup beats the API above", "serve_{way}_beats_api_mtok_per_month", "Mtok/month"))
VOLUME_POINTS = 41      # monthly volumes in the cost chart, from 1/30 to 30 times the demand
VOLUME_SPAN = 30.0
LATENCY_BATCHES = 24    # batches in the latency chart, from 1 to past the setup's serving batch


def compute_serve(state: FormState) -> dict:
    """The serving answer for ``state``: core's ``serve_plan`` (its ranked options and its sentence as the headline),
    the key figures of the recommended setup, and the charts' series (cost per million output tokens against monthly
    volume for renting, buying and the API; latency against batch for the setup)."""
    job = state.job()
    if state.count is not None:
        job["n_gpus"] = state.count
    if state.offer is not None:
        job["offer"] = state.offer
    result = serve_plan(job, gpus=state.gpus)
    options = result["options"]
    rec = result["recommended"]
    shown = rec or next((o for o in options if o.n_gpus > 0), None)
    answer = {"task": "serve", "job": job, "plan": result, "options": options, "recommended": rec, "figures": [],
              "headline": result["recommendation"], "memory": None, "costs": None, "cash": None,
              "volume": volume_series(result), "latency": None, "tradeoff": None, "launch": result["launch"]}
    if shown is not None:
        answer["figures"] = _serve_figures(result, shown)
        answer["latency"] = latency_series(result, shown)
        answer["tradeoff"] = tradeoff_curve(serve_option_inputs(result["given"], shown))
    return answer


def _serve_figures(result: Mapping, option: ServeOption) -> list[Figure]:
    inputs = serve_option_inputs(result["given"], option)
    way = "own" if option.acquire == "buy" else "rent"
    names = [q.format(way=way) for _, q, _ in SERVE_FIGURES]
    values = evaluate(inputs, outputs=names)
    unpriced = any(r.startswith(NO_PRICE) for r in option.reasons)
    # a setup that meets no target serves nothing: its cost is not $0, it has none to show
    idle = not option.ok or option.replicas <= 0
    out = []
    for (label, _, unit), name in zip(SERVE_FIGURES, names):
        missing = (unpriced or idle) and unit == "USD" and "api" not in name
        text = (NO_PRICE if unpriced else SERVES_NOTHING) if missing else ""
        out.append(Figure(label, float("nan") if missing else float(values[name]), unit, name, inputs, text))
    return out



def volume_series(result: Mapping) -> dict:
    """Cost per million tokens (USD, prompt + generated) against monthly tokens (millions) for the cheapest rented
    and the cheapest bought setup (whole replicas for each volume) and the API: core's ``serve_curves``."""
    demand = result["demand"]["mtok_per_month"]
    volumes = [float(v) for v in np.geomspace(demand / VOLUME_SPAN, demand * VOLUME_SPAN, VOLUME_POINTS)]
    lines, api = [], None
    for word, option, key in (("Renting", result["best_rent"], "rent_usd_per_mtok"), ("Buying", result["best_buy"], "buy_usd_per_mtok")):
        if option is None:
            continue
        cost = serve_curves(result["given"], option, volumes_mtok=volumes)["cost"]
        lines.append({"label": f"{word} {option.n_gpus}x {option.gpu} ({option.weights_dtype})", "usd_per_mtok": cost[key]})
        api = cost["api_usd_per_mtok"]
    if api is None and result["options"]:  # no setup meets the targets: the API alone (its price is the same for any)
        api = serve_curves(result["given"], result["options"][0], volumes_mtok=volumes)["cost"]["api_usd_per_mtok"]
    if api is not None:
        lines.append({"label": f"API {result['api']['name']}", "usd_per_mtok": api})
    return {"mtok_per_month": volumes, "lines": lines, "demand_mtok_per_month": float(demand)}


def latency_series(result: Mapping, option: ServeOption) -> dict:
    """Time per generated token and time to first token (ms) against the batch a replica of ``option`` runs, from 1
    to past its serving batch (at most what its KV cache holds): core's ``serve_curves``."""
    kv = float(evaluate(serve_option_inputs(result["given"], option), outputs=("serve_kv_batch",))["serve_kv_batch"])
    top = int(max(1.0, min(kv, max(8.0, 2.0 * option.batch))))
    batches = sorted({int(round(b)) for b in np.geomspace(1, top, LATENCY_BATCHES)} | ({option.batch} if option.batch >= 1 else set()))
    curve = serve_curves(result["given"], option, batches=batches)["latency"]
    targets = result["inputs"]
    return {"label": f"{option.n_gpus}x {option.gpu} ({option.weights_dtype})", "batch": curve["batch"],
            "tpot_ms": curve["tpot_ms"], "ttft_ms": curve["ttft_ms"], "serving_batch": option.batch,
            "tpot_slo_ms": float(targets["tpot_slo_ms"]), "ttft_slo_ms": float(targets["ttft_slo_ms"])}


# the deciding columns first (the setup, rent or buy, the costs), then the offer, the fleet, the latencies, the reasons last
SERVE_TABLE_HEADERS = ("Rank", "Setup", "Rent or buy", "Monthly cost (USD)", "USD per million input tokens",
                       "USD per million output tokens", "Cloud offer", "First token, queued (ms)", "Per token (ms)",
                       "Replicas", "Servers bought", "Load", "Acceptable", "Why not")
# the serving table's columns that are quantities (header -> quantity; "{way}" is rent or own)
SERVE_COLUMN_QUANTITIES = {"Replicas": "serve_replicas",
                           "First token, queued (ms)": "serve_ttft_at_load_ms", "Per token (ms)": "tpot_ms",
                           "Load": "serve_load_fraction",
                           "Monthly cost (USD)": "serve_option_usd_per_month",
                           "USD per million input tokens": "serve_{way}_usd_per_mtok_input",
                           "USD per million output tokens": "serve_{way}_usd_per_mtok_output"}


def serve_table(options: list[ServeOption], include_rejected: bool) -> tuple[list[str], list[list]]:
    """The ranked serving setups as the window and Copy results show them: headers and rows of values."""
    rows = []
    for rank, o in enumerate(options, start=1):
        if not o.ok and not include_rejected:
            continue
        rows.append([rank, f"{o.n_gpus}x {o.gpu} ({o.weights_dtype})", o.acquire, o.usd_per_month, o.usd_per_mtok_input,
                     o.usd_per_mtok_output, o.offer or "-", o.ttft_at_load_ms, o.tpot_ms, o.replicas,
                     f"{o.servers} x {o.server_gpus} GPUs" if o.acquire == "buy" else "-", o.load_fraction,
                     "yes" if o.ok else "no",
                     "; ".join(o.reasons)])
    return list(SERVE_TABLE_HEADERS), rows
