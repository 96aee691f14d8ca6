"""The recommendation, worded once: every door (command line, form, e-mail draft, Excel) prints these sentences.

``recommend(job, **scope)`` plans the job (``planner.plan``) and composes, for the option the
planner ranks first: the setup and offer, its hours and cost, what a commitment costs, the
interruptible note, the payback of buying the same GPUs instead of renting through THAT offer,
the capital when buying, the network when it slows the job, and where the prices came from.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from .planner import Option, bought_instead, buying_text, plan


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
    sentences = []
    if o.acquire == "buy":
        sentences.append(f"{setup_text(o)} ({_money(o.capital_usd)} of capital): the job's share of owning is "
                         f"{_money(o.cost_usd)} and it takes {o.hours:,.1f} hours.")
    elif o.commitment_months > 0 and not inputs.get("commitment_fully_used"):
        sentences.append(f"{setup_text(o)}: {_money(o.cost_usd)} for the whole {_term(o.commitment_months)} commitment; "
                         f"the job takes {o.hours:,.1f} hours of it.")
    else:
        share = " (the job's share of the commitment)" if o.commitment_months > 0 else ""
        sentences.append(f"{setup_text(o)}: {_money(o.cost_usd)}{share} and {o.hours:,.1f} hours.")
    if o.interruptible:
        sentences.append(f"The provider can stop an interruptible offer at any time; the hours include "
                         f"{inputs['spot_rework_pct']:g} % re-work.")
    payback = float("nan")
    if o.acquire == "rent":
        bought = bought_instead(result["job"], o, result.get("price_gpu"))
        payback = float(bought["payback_months"])
        text = buying_text(payback, inputs["months"], inputs["hours_per_day"])
        sentences.append(f"Instead, {text} (against this offer's price; {_money(bought['own_capital_usd'])} of capital).")
    if o.network_slowdown > 1.05:
        sentences.append(f"Traffic between the GPUs makes the job {o.network_slowdown:.1f}x longer than its compute alone.")
    if o.within_tolerance:
        cheapest = min(x.cost_usd for x in result["options"] if x.within_tolerance)
        if cheapest < o.cost_usd:
            sentences.append(f"A setup with more GPUs or machines costs at most {inputs['cost_tolerance_pct']:g} % less "
                             f"({_money(cheapest)}); fewer GPUs win within that margin.")
    sentences.append(f"Prices: {o.price_source}.")
    capital = o.capital_usd if o.acquire == "buy" else float("nan")
    return Recommendation(o, tuple(sentences), payback, capital, plan=dict(result))


def recommend(job: Mapping | None = None, **scope) -> Recommendation:
    """Plan ``job`` (``scope``: gpus, count, offer, include_buy, price_gpu as for ``plan``) and word the answer."""
    return compose(plan(job, **scope))
