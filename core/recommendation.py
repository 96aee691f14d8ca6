"""The recommendation, worded once: every door (command line, form, e-mail draft, Excel) prints these sentences.

``recommend(job, **scope)`` plans the job (``planner.plan``) and composes, for the option the
planner ranks first: the setup and offer, its hours and cost, what a commitment costs, the
interruptible note, the payback of buying the same GPUs instead of renting through THAT offer,
the capital when buying, the network when it slows the job, and where the prices came from.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from .planner import Option, bought_instead, plan


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


def _money(usd: float) -> str:
    return f"${usd:,.0f}"


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
        how = f"buying them instead pays back in {payback_months:,.1f} months at {hours_per_day:g} hours a day"
    elif payback_months > months:
        how = (f"buying them instead would pay back only after {payback_months:,.0f} months at {hours_per_day:g} hours a day, "
               f"beyond the {months:g} months of ownership")
    else:
        how = "buying them instead never pays back: renting costs less than running owned GPUs"
    return f"At this offer's price, {how} ({_money(capital_usd)} of capital)."


def no_purchase_price(gpu: str) -> str:
    return f"There is no purchase price for {gpu} to weigh buying against."


def headline(f: Mapping, inputs: Mapping) -> str:
    """The answer in one or two sentences, from an option's fields (HEADLINE_FIELDS) and inputs (HEADLINE_INPUTS)."""
    n, gpu, cost, hours = int(f["n_gpus"]), f["gpu"], f["cost_usd"], f["hours"]
    if f["acquire"] == "buy":
        return (f"Buy {n}x {gpu} ({_money(f['capital_usd'])} of capital): the job's share of owning is {_money(cost)} "
                f"and it takes {hours:,.1f} hours.")
    text = f"Rent {n}x {gpu} from {f['offer']} ({f['price_type']}): "
    if f["commitment_months"] > 0 and not inputs["commitment_fully_used"]:
        text += f"{_money(cost)} for the whole {_term(f['commitment_months'])} commitment; the job takes {hours:,.1f} hours of it."
    else:
        text += f"{_money(cost)} and {hours:,.1f} hours."
    if not f["capital_usd"] > 0:  # no purchase price in the catalog (nan or 0): nothing to weigh
        return text + " " + no_purchase_price(gpu)
    return text + " " + buying_instead(f["payback_months"], inputs["months"], inputs["hours_per_day"], f["capital_usd"])


def headline_xl(field) -> str:
    """``headline`` as an Excel expression: ``field(name)`` is the Excel expression of one of HEADLINE_FIELDS;
    the inputs are the workbook's defined names."""
    def money(x):
        return f'TEXT({x},"$#,##0")'
    hours = f'TEXT({field("hours")},"#,##0.0")'
    pay, m, cm, cap = field("payback_months"), "months", field("commitment_months"), field("capital_usd")
    buy_text = (f'"Buy "&{field("n_gpus")}&"x "&{field("gpu")}&" ("&{money(cap)}&" of capital): the job' + "'" +
                f's share of owning is "&{money(field("cost_usd"))}&" and it takes "&{hours}&" hours."')
    term = f'IF(MOD({cm},12)=0,{cm}/12&"-year",{cm}&"-month")'
    how = (f'IF(AND({pay}>0,{pay}<={m}),"buying them instead pays back in "&TEXT({pay},"#,##0.0")&" months at "'
           f'&hours_per_day&" hours a day",IF({pay}>{m},"buying them instead would pay back only after "&TEXT({pay},"#,##0")'
           f'&" months at "&hours_per_day&" hours a day, beyond the "&{m}&" months of ownership",'
           f'"buying them instead never pays back: renting costs less than running owned GPUs"))')
    buying = (f'IF(N({cap})>0," At this offer' + "'" + f's price, "&{how}&" ("&{money(cap)}'
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


def setup_text(o: Option) -> str:
    """"Rent 8x H100-SXM from Lambda 8x H100 SXM (on-demand)" or "Buy 8x H100-SXM"."""
    if o.acquire == "buy":
        return f"Buy {o.n_gpus}x {o.gpu}"
    return f"Rent {o.n_gpus}x {o.gpu} from {o.offer} ({o.price_type})"


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
    if o.within_tolerance:
        cheapest = min(x.cost_usd for x in result["options"] if x.within_tolerance)
        if cheapest < o.cost_usd:
            sentences.append(f"A setup with more GPUs or machines costs at most {inputs['cost_tolerance_pct']:g} % less "
                             f"({_money(cheapest)}); fewer GPUs win within that margin.")
    sentences.append(f"Prices: {o.price_source}.")
    return Recommendation(o, tuple(sentences), payback, capital, plan=dict(result))


def recommend(job: Mapping | None = None, **scope) -> Recommendation:
    """Plan ``job`` (``scope``: gpus, count, offer, include_buy, price_gpu as for ``plan``) and word the answer."""
    return compose(plan(job, **scope))
