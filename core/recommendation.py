"""The recommendation, worded once: every door (command line, form, e-mail draft, Excel) prints these sentences.

``recommend(job, **scope)`` plans the job (``planner.plan``) and composes, for the option the
planner ranks first: the setup and offer, its hours and cost, what a commitment costs, the
interruptible note, the payback of buying the same GPUs instead of renting through THAT offer,
the capital when buying, the network when it slows the job, and where the prices came from.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping

from .planner import Option, bought_instead, plan
from .text import spreadsheet_round


@dataclass(frozen=True)
class Recommendation:
    """The planner's first option and its sentences; ``option`` is None when nothing is acceptable."""
    option: Option | None
    sentences: tuple[str, ...]
    payback_months: float = float("nan")   # buying the same GPUs instead of renting this offer; -1 = never
    capital_usd: float = float("nan")      # buying: GPUs, servers and network (USD)
    plan: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def text(self) -> str:
        return " ".join(self.sentences)


def _fixed(x: float, digits: int) -> str:
    """``x`` with ``digits`` decimals and thousands separators, rounded as a spreadsheet's TEXT rounds: half away from
    zero on the number as written (26.825 -> 26.83; Python's own format rounds the binary value, 26.8249999..., down),
    so the answer in Python and the workbook's recalculated answer say the same cents (core.text.spreadsheet_round,
    the rule the planner's ties use too)."""
    if not math.isfinite(x):
        return f"{x:,.{digits}f}"
    return f"{spreadsheet_round(x, digits):,.{digits}f}"


def usd_text(usd: float) -> str:
    """Dollars as every door prints them; cents below $100 (a small job is not "$0")."""
    return f"${_fixed(usd, 2)}" if abs(usd) < 100 else f"${_fixed(usd, 0)}"


def _hours(hours: float) -> str:
    """Hours; two decimals below one hour."""
    return _fixed(hours, 2) if abs(hours) < 1 else _fixed(hours, 1)


def _term(months: float) -> str:
    years = months / 12
    return f"{years:g}-year" if years == int(years) else f"{months:g}-month"


# The headline: setup, offer, cost, hours and the payback of buying instead.  It is written twice, in Python
# (``headline``) and as an Excel formula (``headline_xl``, the workbook's Start sheet), right here side by side;
# tests recalculate workbooks in LibreOffice and compare the two texts.  Number formats: money "#,##0",
# hours "#,##0.0" (Python: ,.0f and ,.1f).
HEADLINE_FIELDS = ("acquire", "n_gpus", "gpu", "offer", "price_type", "cost_usd", "hours", "capital_usd", "payback_months",
                   "commitment_months")
HEADLINE_INPUTS = ("months", "hours_per_day", "commitment_fully_used")


def buying_instead(payback_months: float, months: float, hours_per_day: float, capital_usd: float) -> str:
    """The sentence on buying the rented GPUs instead (payback against the offer's price; -1 = never)."""
    if 0 < payback_months <= months:
        how = f"buying them instead pays back in {_fixed(payback_months, 1)} months at {hours_per_day:g} hours a day"
    elif payback_months > months:
        how = (f"buying them instead would pay back only after {_fixed(payback_months, 0)} months at {hours_per_day:g} hours a day, "
               f"beyond the {months:g} months of ownership")
    else:
        how = "buying them instead never pays back: renting costs less than running owned GPUs"
    return f"At this offer's price, {how} ({usd_text(capital_usd)} of capital)."


def no_purchase_price(gpu: str) -> str:
    return f"There is no purchase price for {gpu} to weigh buying against."


def headline(f: Mapping, inputs: Mapping) -> str:
    """The answer in one or two sentences, from an option's fields (HEADLINE_FIELDS) and inputs (HEADLINE_INPUTS)."""
    n, gpu, cost, hours = int(f["n_gpus"]), f["gpu"], f["cost_usd"], f["hours"]
    if f["acquire"] == "buy":
        return (f"Buy {n}x {gpu} ({usd_text(f['capital_usd'])} of capital): the job's share of owning is {usd_text(cost)} "
                f"and it takes {_hours(hours)} hours.")
    text = f"Rent {n}x {gpu} from {f['offer']} ({f['price_type']}): "
    if f["commitment_months"] > 0 and not inputs["commitment_fully_used"]:
        text += f"{usd_text(cost)} for the whole {_term(f['commitment_months'])} commitment; the job takes {_hours(hours)} hours of it."
    else:
        text += f"{usd_text(cost)} and {_hours(hours)} hours."
    if not f["capital_usd"] > 0:  # no purchase price in the catalog (nan or 0): nothing to weigh
        return text + " " + no_purchase_price(gpu)
    return text + " " + buying_instead(f["payback_months"], inputs["months"], inputs["hours_per_day"], f["capital_usd"])


def headline_xl(field) -> str:
    """``headline`` as an Excel expression: ``field(name)`` is the Excel expression of one of HEADLINE_FIELDS;
    the inputs are the workbook's defined names."""
    def money(x):  # usd_text: cents below $100
        return f'IF(ABS({x})<100,TEXT({x},"$#,##0.00"),TEXT({x},"$#,##0"))'
    h = field("hours")
    hours = f'IF(ABS({h})<1,TEXT({h},"#,##0.00"),TEXT({h},"#,##0.0"))'
    pay, m, cm, cap = field("payback_months"), "months", field("commitment_months"), field("capital_usd")
    buy_text = (f'"Buy "&{field("n_gpus")}&"x "&{field("gpu")}&" ("&{money(cap)}&" of capital): the job' + "'" +
                f's share of owning is "&{money(field("cost_usd"))}&" and it takes "&{hours}&" hours."')
    term = f'IF(FLOOR({cm},12)={cm},{cm}/12&"-year",{cm}&"-month")'
    how = (f'IF(AND({pay}>0,{pay}<={m}),"buying them instead pays back in "&TEXT({pay},"#,##0.0")&" months at "'
           f'&hours_per_day&" hours a day",IF({pay}>{m},"buying them instead would pay back only after "&TEXT({pay},"#,##0")'
           f'&" months at "&hours_per_day&" hours a day, beyond the "&{m}&" months of ownership",'
           f'"buying them instead never pays back: renting costs less than running owned GPUs"))')
    buying = (f'IF(IF(ISNUMBER({cap}),{cap},0)>0," At this offer' + "'" + f's price, "&{how}&" ("&{money(cap)}'
              f'&" of capital).'+ '"' + f'," There is no purchase price for "&{field("gpu")}&" to weigh buying against.")')
    rent_text = (f'"Rent "&{field("n_gpus")}&"x "&{field("gpu")}&" from "&{field("offer")}&" ("&{field("price_type")}&"): "'
                 f'&IF(AND({cm}>0,commitment_fully_used=0),{money(field("cost_usd"))}&" for the whole "&{term}'
                 f'&" commitment; the job takes "&{hours}&" hours of it.",{money(field("cost_usd"))}&" and "&{hours}&" hours.")'
                 f'&{buying}')
    return f'IF({field("acquire")}="buy",{buy_text},{rent_text})'


def option_fields(o: Option, payback_months: float, capital_usd: float) -> dict:
    """An option's HEADLINE_FIELDS."""
    return {"acquire": o.acquire, "n_gpus": o.n_gpus, "gpu": o.gpu, "offer": o.offer, "price_type": o.price_type,
            "cost_usd": o.cost_usd, "hours": o.hours, "capital_usd": capital_usd, "payback_months": payback_months,
            "commitment_months": o.commitment_months}


def compose(result: Mapping) -> Recommendation:
    """The sentences for a ``plan`` result's recommended option."""
    o = result["recommended"]
    inputs = result["inputs"]
    if o is None:
        counts = ", ".join(f"{k} {v}" for k, v in result["rejected_counts"].items()) or "none"
        return Recommendation(None, (f"No option meets every requirement (rejected: {counts}).",), plan=dict(result))
    payback, capital = float("nan"), o.capital_usd
    if o.acquire == "rent":  # buying the same GPUs instead, against THIS offer's price
        bought = bought_instead(result["given"], o, result["price_gpu"])
        payback, capital = float(bought["payback_months"]), float(bought["own_capital_usd"])
    sentences = [headline(option_fields(o, payback, capital), inputs)]
    if o.interruptible:
        sentences.append(f"The provider can stop an interruptible offer at any time; the hours include "
                         f"{inputs['spot_rework_pct']:g} % re-work.")
    if o.network_slowdown > 1.05:
        sentences.append(f"Traffic between the GPUs makes the job {o.network_slowdown:.1f}x longer than its compute alone.")
    split = []  # a parallel layout the planner chose (core.layout), said in words
    if o.pipeline_parallel > 1 and "pipeline_parallel" not in result["given"]:
        split.append(f"the model is split into {o.pipeline_parallel} pipeline stages (pipeline_parallel)")
    if o.expert_parallel > 1 and "expert_parallel" not in result["given"]:
        split.append(f"its experts are spread over {o.expert_parallel} GPUs (expert_parallel)")
    if split:
        sentences.append(f"In this setup {' and '.join(split)}.")
    if o.within_tolerance:
        cheapest = min(x.cost_usd for x in result["options"] if x.within_tolerance)
        if cheapest < o.cost_usd:
            sentences.append(f"A setup with more GPUs or machines costs at most {inputs['cost_tolerance_pct']:g} % less "
                             f"({usd_text(cheapest)}); fewer GPUs win within that margin.")
    sentences.append(f"Prices: {o.price_source}.")
    return Recommendation(o, tuple(sentences), payback, capital, plan=dict(result))


def recommend(job: Mapping | None = None, **scope) -> Recommendation:
    """Plan ``job`` (``scope``: gpus, count, offer, include_buy, price_gpu as for ``plan``) and word the answer."""
    return compose(plan(job, **scope))


# What would make a setup fit: one change at a time (then pairs), each as the recipes people use name it.
FIT_CHANGES = (
    ({"fused_loss": 1}, "a chunked (fused) loss"),
    ({"recompute": "full"}, "full activation recomputation"),
    ({"offload_optimizer": 1}, "optimizer states in CPU memory"),
    ({"offload_params": 1}, "parameters in CPU memory (FSDP CPU offload)"),
    ({"method": "qlora"}, "QLoRA instead of LoRA"),
)
FIT_OUTPUTS = ("fits_train", "peak_train_gib_per_gpu", "gpu_memory_gib", "option_hours", "option_cost_usd", "option_priced",
               "gpus_needed", "cpu_offload_gib_per_machine")


@dataclass(frozen=True)
class FitChange:
    """A change that makes a setup fit, with the memory, hours and cost it gives (USD; GiB per GPU)."""
    text: str
    changes: dict
    peak_gib_per_gpu: float
    gpu_memory_gib: float
    hours: float
    cost_usd: float
    cpu_gib_per_machine: float = 0.0  # host memory the offloaded states need

    def sentence(self) -> str:
        cost = f", {usd_text(self.cost_usd)}" if self.cost_usd == self.cost_usd else ""
        cpu = f", with {self.cpu_gib_per_machine:,.0f} GiB of CPU memory per machine" if self.cpu_gib_per_machine > 0 else ""
        return (f"fits with {self.text}: {self.peak_gib_per_gpu:.1f} of {self.gpu_memory_gib:.0f} GiB per GPU{cpu}, "
                f"{_hours(self.hours)} hours{cost}")


def what_would_fit(inputs: Mapping) -> FitChange | None:
    """The cheapest single change (or pair of changes) that makes the setup ``inputs`` fit in GPU memory: a chunked
    loss, recomputation, offload of optimizer states or parameters, QLoRA instead of LoRA, pipeline stages, a shorter
    sequence or more GPUs; None when it fits already or nothing tried fits.  Ranked by the job's cost, then hours."""

    from .engine import evaluate, resolve_inputs
    base = dict(inputs)
    used = resolve_inputs(base)
    if evaluate(base, outputs=("fits_train",))["fits_train"]:
        return None
    tried: list[tuple[dict, str]] = []
    singles = [(c, t) for c, t in FIT_CHANGES if any(used[k] != v for k, v in c.items())
               and not (c.get("method") == "qlora" and used["method"] != "lora")]
    tried += singles
    tried += [({**a, **b}, f"{ta} and {tb}") for i, (a, ta) in enumerate(singles) for b, tb in singles[i + 1:]]
    from .engine import row_of
    n, t, cp, ep = (int(used[k]) for k in ("n_gpus", "tensor_parallel", "context_parallel", "expert_parallel"))
    for p in (2, 4, 8, 16, 32):  # pipeline stages the GPUs allow: each GPU holds the layers of its stage only
        if int(used["pipeline_parallel"]) < p <= int(row_of(used, "model")["layers"]) and n % (t * p * cp) == 0 \
                and (n // (t * p)) % ep == 0:
            tried.append(({"pipeline_parallel": p}, f"{p} pipeline stages"))
    seq = int(used["seq_len"])
    while seq > 512:
        seq //= 2
        tried.append(({"seq_len": seq}, f"sequences of {seq:,} tokens"))
    names = sorted({k for c, _ in tried for k in c})
    sweep = {**base, **{k: [c.get(k, used[k]) for c, _ in tried] for k in names}}
    r = evaluate(sweep, outputs=FIT_OUTPUTS)
    fits = [i for i in range(len(tried)) if r["fits_train"][i]]
    more = int(evaluate(base, outputs=("gpus_needed",))["gpus_needed"])
    candidates = [FitChange(tried[i][1], tried[i][0], float(r["peak_train_gib_per_gpu"][i]), float(r["gpu_memory_gib"][i]),
                            float(r["option_hours"][i]),
                            float(r["option_cost_usd"][i]) if r["option_priced"][i] else float("nan"),
                            float(r["cpu_offload_gib_per_machine"][i])) for i in fits]
    if more > int(used["n_gpus"]):
        m = evaluate({**base, "n_gpus": more}, outputs=FIT_OUTPUTS)
        if m["fits_train"]:
            candidates.append(FitChange(f"{more} GPUs", {"n_gpus": more}, float(m["peak_train_gib_per_gpu"]),
                                        float(m["gpu_memory_gib"]), float(m["option_hours"]),
                                        float(m["option_cost_usd"]) if m["option_priced"] else float("nan"),
                                        float(m["cpu_offload_gib_per_machine"])))
    if not candidates:
        return None
    inf = float("inf")
    return min(candidates, key=lambda c: (c.cost_usd if c.cost_usd == c.cost_usd else inf, len(c.changes), c.hours))
