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

from . import catalog
from .planner import GEFORCE_LICENSE, Option, bought_instead, consumer_gpu, option_text, plan, purchase_refusal, ranks_purchases
from .text import spreadsheet_round, upper_first

CONSUMER_LICENSE = GEFORCE_LICENSE + "."


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
                   "commitment_months", "breakeven_hours_per_day", "own_hours_per_day")
HEADLINE_INPUTS = ("months", "commitment_fully_used")


def at_least_text(x: float) -> str:
    """A threshold with one decimal, rounded up (20.05 -> 20.1): "busy 20.0 hours a day or more" of a break-even at 20.05
    would name a use at which buying does not yet pay back.  The tenths are taken after rounding to 9 decimals, so a
    value written 20.1 that binary holds as 20.100000000000001 stays 20.1 (as the workbook's CEILING(ROUND(x*10,9),1)
    gives it)."""
    return f"{math.ceil(round(x * 10, 9)) / 10:,.1f}"


def buying_instead(breakeven_hours_per_day: float, months: float, capital_usd: float) -> str:
    """The one line on buying the rented GPUs instead: its capital, and the daily use over the months of ownership from
    which owning costs less than this rental, the resale value at the end counted (breakeven_hours_per_day, the total
    cost of owning against renting; above 24 or -1: never).  It names what it counts: the months until the rent saved
    repays the capital (payback_at_use) leave the resale value out, and a day's use can meet one and not the other."""
    head = (f"Buying these GPUs instead takes {usd_text(capital_usd)} of capital and, counting its resale value after "
            f"{months:g} months, ")
    if 0 < breakeven_hours_per_day <= 24:
        return head + f"costs less than this rental only if they stay busy {at_least_text(breakeven_hours_per_day)} hours a day or more."
    return head + "costs more than this rental even busy 24 hours a day."


def payback_at_use(payback_months: float, months: float, hours_per_day: float, saving_usd_per_month: float = 0.0,
                   discount_rate_pct: float = 0.0) -> str:
    """Buying against renting at an assumed daily use: the months until the rent saved repays the capital (payback_months,
    discounted at discount_rate_pct, resale value not counted; -1 = never: running owned GPUs costs more than the rent
    avoided, or, with a discount rate, the saving (own_saving_usd_per_month) does not even cover the capital's cost)."""
    discounted = f" (discounted at {discount_rate_pct:g} % a year)" if discount_rate_pct > 0 else ""
    if 0 < payback_months <= months:
        return (f"at {hours_per_day:g} hours a day the rent it saves repays the capital in {_fixed(payback_months, 1)} "
                f"months{discounted}")
    if payback_months > months:
        return (f"at {hours_per_day:g} hours a day the rent it saves repays the capital only after {_fixed(payback_months, 0)} "
                f"months{discounted}, beyond the {months:g} months of ownership")
    if saving_usd_per_month > 0 and discount_rate_pct > 0:
        return (f"at {hours_per_day:g} hours a day the rent it saves, {usd_text(saving_usd_per_month)} a month, never repays "
                f"the capital: it does not cover the capital's cost at {discount_rate_pct:g} % a year")
    return f"at {hours_per_day:g} hours a day the rent it saves never repays the capital: running owned GPUs costs more"


def no_purchase_price(gpu: str) -> str:
    return f"There is no purchase price for {gpu} to weigh buying against."


def headline(f: Mapping, inputs: Mapping) -> str:
    """The answer in one or two sentences, from an option's fields (HEADLINE_FIELDS) and inputs (HEADLINE_INPUTS)."""
    n, gpu, cost, hours = int(f["n_gpus"]), f["gpu"], f["cost_usd"], f["hours"]
    if f["acquire"] == "buy":
        return (f"Buy {n}x {gpu} ({usd_text(f['capital_usd'])} of capital, busy {f['own_hours_per_day']:g} hours a day over "
                f"{inputs['months']:g} months): the job's share of owning is {usd_text(cost)} and it takes {_hours(hours)} hours.")
    text = f"Rent {n}x {gpu} from {f['offer']} ({f['price_type']}): "
    if f["commitment_months"] > 0 and not inputs["commitment_fully_used"]:
        text += f"{usd_text(cost)} for the whole {_term(f['commitment_months'])} commitment; the job takes {_hours(hours)} hours of it."
    else:
        text += f"{usd_text(cost)} and {_hours(hours)} hours."
    if not f["capital_usd"] > 0:  # no purchase price in the catalog (nan or 0): nothing to weigh
        return text + " " + no_purchase_price(gpu)
    return text + " " + buying_instead(f["breakeven_hours_per_day"], inputs["months"], f["capital_usd"])


def headline_xl(field) -> str:
    """``headline`` as an Excel expression: ``field(name)`` is the Excel expression of one of HEADLINE_FIELDS;
    the inputs are the workbook's defined names."""
    def money(x):  # usd_text: cents below $100
        return f'IF(ABS({x})<100,TEXT({x},"$#,##0.00"),TEXT({x},"$#,##0"))'
    h = field("hours")
    hours = f'IF(ABS({h})<1,TEXT({h},"#,##0.00"),TEXT({h},"#,##0.0"))'
    be, m, cm, cap = field("breakeven_hours_per_day"), "months", field("commitment_months"), field("capital_usd")
    buy_text = (f'"Buy "&{field("n_gpus")}&"x "&{field("gpu")}&" ("&{money(cap)}&" of capital, busy "&{field("own_hours_per_day")}'
                f'&" hours a day over "&{m}&" months): the job' + "'" +
                f's share of owning is "&{money(field("cost_usd"))}&" and it takes "&{hours}&" hours."')
    term = f'IF(FLOOR({cm},12)={cm},{cm}/12&"-year",{cm}&"-month")'
    how = (f'IF(AND({be}>0,{be}<=24),"costs less than this rental only if they stay busy "'
           f'&TEXT(CEILING(ROUND({be}*10,9),1)/10,"#,##0.0")&" hours a day or more.",'
           f'"costs more than this rental even busy 24 hours a day.")')
    buying = (f'IF(IF(ISNUMBER({cap}),{cap},0)>0," Buying these GPUs instead takes "&{money(cap)}'
              f'&" of capital and, counting its resale value after "&{m}&" months, "&{how},'
              f'" There is no purchase price for "&{field("gpu")}&" to weigh buying against.")')
    rent_text = (f'"Rent "&{field("n_gpus")}&"x "&{field("gpu")}&" from "&{field("offer")}&" ("&{field("price_type")}&"): "'
                 f'&IF(AND({cm}>0,commitment_fully_used=0),{money(field("cost_usd"))}&" for the whole "&{term}'
                 f'&" commitment; the job takes "&{hours}&" hours of it.",{money(field("cost_usd"))}&" and "&{hours}&" hours.")'
                 f'&{buying}')
    return f'IF({field("acquire")}="buy",{buy_text},{rent_text})'


def option_fields(o: Option, payback_months: float, capital_usd: float, breakeven_hours_per_day: float = float("nan"),
                  own_hours_per_day: float = float("nan")) -> dict:
    """An option's HEADLINE_FIELDS."""
    return {"acquire": o.acquire, "n_gpus": o.n_gpus, "gpu": o.gpu, "offer": o.offer, "price_type": o.price_type,
            "cost_usd": o.cost_usd, "hours": o.hours, "capital_usd": capital_usd, "payback_months": payback_months,
            "commitment_months": o.commitment_months, "breakeven_hours_per_day": breakeven_hours_per_day,
            "own_hours_per_day": own_hours_per_day}


LONG_RUN_HOURS = 30 * 24  # a job of over a month on the cheapest setup: the answer says a deadline would shorten it


def _nearest(result: Mapping) -> list[tuple[str, object]]:
    """[("budget", the cheapest option only the budget rules out), ("deadline", the fastest only the deadline rules out)],
    each where there is one; with neither, [("both", the cheapest option only those two rule out)] where there is one."""
    only = lambda o, word: (bool(o.reasons) and all(r.startswith(word + ":") for r in o.reasons)  # noqa: E731
                            and math.isfinite(o.outlay_usd) and math.isfinite(o.hours))
    out = []
    over = [o for o in result["options"] if only(o, "over budget")]
    if over:
        out.append(("budget", min(over, key=lambda x: (x.outlay_usd, x.order))))
    slow = [o for o in result["options"] if only(o, "too slow")]
    if slow:
        out.append(("deadline", min(slow, key=lambda x: (x.hours, x.order))))
    if not out:  # the budget and the deadline both rule everything out: the cheapest that only those two rule out
        both = [o for o in result["options"] if o.reasons and math.isfinite(o.outlay_usd) and math.isfinite(o.hours)
                and all(r.startswith(("over budget:", "too slow:")) for r in o.reasons)]
        if both:
            out.append(("both", min(both, key=lambda x: (x.outlay_usd, x.order))))
    return out


def nearest_option(result: Mapping):
    """The option a ``plan`` result with nothing acceptable comes nearest to: the cheapest that only the budget rules
    out, else the fastest that only the deadline rules out, else the cheapest that only those two rule out, else None
    (the one the answer's sentences name first)."""
    found = _nearest(result)
    return found[0][1] if found else None


def nearest(result: Mapping) -> tuple[str, ...]:
    """When no option of a ``plan`` result is acceptable, what comes nearest, in sentences: the cheapest option that only
    the budget rules out and the fastest that only the deadline rules out, with the budget or deadline that would let it
    through; or, with no option at all, why there is none."""
    if not result["options"]:
        why = "" if ranks_purchases(result["inputs"]) else (
            ", and a one-off job weighs renting only (Rank buying for a one-off job set to 1, or Use of bought GPUs, "
            "weighs buying them)")
        return (f"No option to weigh: no rental offer sells the GPUs chosen{why}.",)
    out = []
    for kind, o in _nearest(result):
        if kind == "budget":
            out.append(f"The cheapest option the budget alone rules out: {option_text(o)}, {usd_text(o.outlay_usd)} and "
                       f"{_hours(o.hours)} hours (a budget of {usd_text(math.ceil(o.outlay_usd))} or more takes it).")
        elif kind == "deadline":
            out.append(f"The fastest option the deadline alone rules out: {option_text(o)}, {_hours(o.hours)} hours and "
                       f"{usd_text(o.cost_usd)} (a deadline of {math.ceil(o.hours * 10) / 10:,.1f} hours or more takes it).")
            out += _start_beyond_deadline(result["inputs"])
        else:
            out.append(f"The cheapest option only the budget and the deadline rule out: {option_text(o)}, "
                       f"{usd_text(o.outlay_usd)} and {_hours(o.hours)} hours (a budget of {usd_text(math.ceil(o.outlay_usd))} "
                       f"and a deadline of {math.ceil(o.hours * 10) / 10:,.1f} hours or more take it).")
    if not out:
        out += _largest_to_be_had(result)
    return tuple(out)


START_INPUTS = ("count_first_start", "restarts", "model_load_minutes")


def _start_beyond_deadline(inputs: Mapping) -> list[str]:
    """The sentence for a deadline that the job's starts alone overrun (job_start_hours, part of job_wall_hours),
    before any work, on any number of GPUs."""
    from .engine import evaluate
    deadline = inputs.get("deadline_hours", 0)
    if not deadline:
        return []
    start_minutes = 60 * evaluate({k: inputs[k] for k in START_INPUTS}, outputs=("job_start_hours",))["job_start_hours"]
    if start_minutes < deadline * 60:
        return []
    return [f"Its start alone (loading the model) takes {start_minutes:,.0f} of the deadline's {deadline * 60:,.0f} "
            "minutes, on any number of GPUs: set the minutes a start takes (Minutes to start) if yours is quicker."]


# reasons that only say an option is larger than can be had: an offer's limit on one job, or one bought server of
# consumer cards (the job needs more GPUs than that to fit)
TOO_LARGE = ("larger than the offer sells:", "one server at most:")


def _largest_to_be_had(result: Mapping) -> list[str]:
    """With nothing acceptable because every count that holds the job is more than can be had: the most GPUs the
    cheapest such option's offer sells as one job (or one bought server), and the cheapest change that makes the job
    fit on them (``what_would_fit``), in one sentence; [] where that is not the case."""
    from .engine import evaluate
    from .errors import InputError
    from .planner import option_inputs
    big = next((o for o in result["options"] if o.reasons and not o.interruptible
                and all(r.startswith(TOO_LARGE) for r in o.reasons)), None)
    if big is None:
        return []
    inputs = option_inputs(result["given"], big, result["price_gpu"])
    if big.acquire == "buy":
        gpus = catalog.tables()["gpus"]
        count, where = int(catalog.server_sizes(gpus.rows[gpus.find(big.gpu)])[-1]), "one bought server holds"
    else:
        count, where = int(evaluate(inputs, outputs=("offer_max_gpus",))["offer_max_gpus"]), f"{big.offer} sells as one job"
    if not 0 < count < big.n_gpus:
        return []
    try:
        change = what_would_fit({**inputs, "n_gpus": count})
    except InputError:  # a layout the count does not divide
        return []
    setup = f"{count}x {big.gpu}, the most {where},"
    return [f"{setup} does not hold the job; it {change.sentence()}." if change is not None
            else f"{setup} does not hold the job, and no change tried makes it fit."]


def compose(result: Mapping) -> Recommendation:
    """The sentences for a ``plan`` result's recommended option."""
    o = result["recommended"]
    inputs = result["inputs"]
    if o is None:
        counts = ", ".join(f"{k} {v}" for k, v in result["rejected_counts"].items()) or "no GPU in the selection"
        return Recommendation(None, (f"No option meets every requirement ({counts}).", *nearest(result)),
                              plan=dict(result))
    # buying the same GPUs instead, against THIS offer's price (a purchase: against the offer the rental rule picks
    # for its GPU and count, the cheapest on-demand offer that sells that size)
    bought = bought_instead(result["given"], o, result["price_gpu"])
    payback, capital = float(bought["payback_months"]), float(bought["own_capital_usd"])
    breakeven, use = float(bought["breakeven_hours_per_day"]), float(bought["own_hours_per_day"])
    at_use = payback_at_use(payback, inputs["months"], use, float(bought["own_saving_usd_per_month"]),
                            float(inputs["discount_rate_pct"]))
    ranked = ranks_purchases(inputs)
    sentences = [headline(option_fields(o, payback, capital, breakeven, use), inputs)]
    offloads = _given_flag(result, "offload_params") or _given_flag(result, "offload_optimizer")
    memory = _memory_figures(result, o) if o.tight or o.may_exceed or offloads else {}  # one evaluation for both sentences
    if o.tight or o.may_exceed:  # the risk first, beside the price it buys
        roomy = next((x for x in result["options"] if x.ok and not x.tight and not x.may_exceed), None)
        alternative = (f" The best setup with room to spare: {option_text(roomy)}, {usd_text(roomy.cost_usd)} and "
                       f"{_hours(roomy.hours)} hours." if roomy is not None else " No acceptable setup has more room.")
        sentences.append(_tight_sentence(o, memory) + alternative)
    offload = _offload_sentence(result, memory) if offloads else ""
    if offload:
        sentences.append(offload)
    if not float(inputs["deadline_hours"]) > 0 and o.hours > LONG_RUN_HOURS:  # the cheapest way may take most of a year
        sentences.append(f"It runs {o.hours / 24:,.0f} days on {o.n_gpus} GPUs: a deadline (Deadline on the inputs) plans "
                         "more GPUs to finish sooner.")
    if o.acquire == "buy":
        rentals = [x for x in result["options"] if x.ok and x.acquire == "rent"]
        offer = rental_offer_text(result, o)
        best = (f" The best rental: {option_text(rentals[0])}, {usd_text(rentals[0].cost_usd)} and {_hours(rentals[0].hours)} hours."
                if rentals else " No rental offer is acceptable for this job.")
        if offer:
            sentences.append(f"Against renting the same GPUs from {offer}: {at_use}; "
                             + (f"counting its resale value, owning costs less from {at_least_text(breakeven)} hours a day."
                                if 0 < breakeven <= 24 else "counting its resale value, owning costs more at any daily use.")
                             + best)
        else:
            sentences.append(f"No offer rents {o.n_gpus}x {o.gpu} as one job: there is no rental of the same GPUs to weigh "
                             "it against." + best)
    elif ranked and capital > 0:
        sentences.append(f"Buying was weighed: {at_use}.")
    if o.interruptible:
        sentences.append(f"The provider can stop an interruptible offer at any time; the hours include "
                         f"{inputs['spot_rework_pct']:g} % re-work.")
    if o.network_slowdown > 1.05:
        sentences.append(f"Traffic between the GPUs makes the job {o.network_slowdown:.1f}x longer than its compute alone.")
    split = []  # a parallel layout the planner chose (core.layout), said in words, with why
    if o.pipeline_parallel > 1 and "pipeline_parallel" not in result["given"]:
        split.append(f"the model is split into {o.pipeline_parallel} pipeline stages "
                     f"{_why_split(result, o)}")
    if o.expert_parallel > 1 and "expert_parallel" not in result["given"]:
        split.append(f"its experts are spread over {o.expert_parallel} GPUs (expert parallelism)")
    if split:
        sentences.append(f"In this setup {' and '.join(split)}.")
    data_parallel = "" if offload and _given_flag(result, "offload_params") else sharding_text(result, o)
    if data_parallel:
        sentences.append(data_parallel)
    if o.acquire == "buy" and consumer_gpu(o.gpu):
        sentences.append(CONSUMER_LICENSE.format(gpu=o.gpu))
    if o.machines > 1:  # which network joins the machines: a link the answer names, never one nobody chose
        from .planner import cluster_network, option_inputs
        network = cluster_network(option_inputs(result["given"], o, result["price_gpu"]), planned=True)
        if network:
            sentences.append(network)
    if o.within_tolerance:
        cheapest = min((x for x in result["options"] if x.within_tolerance), key=lambda x: x.cost_usd)
        if usd_text(cheapest.cost_usd) != usd_text(o.cost_usd):  # cheaper in the cents the answer shows
            sentences.append(_cheaper_sentence(result, cheapest, o, inputs["cost_tolerance_pct"]))
    sentences.append(f"Prices: {o.price_source}.")
    return Recommendation(o, tuple(sentences), payback, capital, plan=dict(result))


def _cheaper_sentence(result: Mapping, cheapest: Option, o: Option, tolerance_pct: float) -> str:
    """Why the cheapest option near the recommended one is not recommended.  One that may run out of memory (its likely
    peak above the GPU's memory) may be any amount cheaper: the tolerance counts from the cheapest that will not."""
    if cheapest.may_exceed and not o.may_exceed:
        memory = _memory_figures(result, cheapest)
        cheaper_pct = 100 * (1 - cheapest.cost_usd / o.cost_usd)
        pct = _fixed(cheaper_pct, 0) if cheaper_pct >= 0.5 else "less than 1"
        bought = " bought" if cheapest.acquire == "buy" else ""
        return (f"A setup {pct} % cheaper ({usd_text(cheapest.cost_usd)}, {cheapest.n_gpus:,}x {cheapest.gpu}{bought}) may run "
                f"out of memory: its {_likely_over_memory(cheapest, memory)}.")
    why = ("leaves less room in memory (above 90 % of the GPU's)" if cheapest.tight and not o.tight
           else "needs more machines, hours or GPUs")
    return f"A setup at most {tolerance_pct:g} % cheaper ({usd_text(cheapest.cost_usd)}) {why}."


MEMORY_FIGURES = ("peak_train_gib_likely_high", "gpu_memory_gib", "cpu_offload_gib_per_machine", "host_memory_gib_per_machine")


def _memory_figures(result: Mapping, o: Option) -> dict[str, float]:
    """The option's memory figures the tight and offload sentences state (MEMORY_FIGURES), in one evaluation."""
    from .engine import evaluate
    from .planner import option_inputs
    r = evaluate(option_inputs(result["given"], o, result["price_gpu"]), outputs=MEMORY_FIGURES)
    return {k: float(r[k]) for k in MEMORY_FIGURES}


def _likely_over_memory(o: Option, memory: Mapping[str, float]) -> str:
    """A setup whose likely peak passes the GPU's memory, in words (the tight warning and the cheaper setup say it alike)."""
    return (f"estimated peak, {o.peak_gib_per_gpu:.1f} GiB per GPU, is likely up to {memory['peak_train_gib_likely_high']:.1f} "
            f"GiB, above the GPU's {memory['gpu_memory_gib']:.0f} GiB")


def _tight_sentence(o: Option, memory: Mapping[str, float]) -> str:
    """The warning for a setup whose memory is tight, with the likely range of the estimate (the framework's memory band,
    peak_train_gib_likely_high): where that range reaches past the GPU's memory, the setup may not run at all."""
    high, gib = memory["peak_train_gib_likely_high"], memory["gpu_memory_gib"]
    if not o.tight:  # within 90 % by the estimate, beyond the memory by its likely range (a framework with a wide band)
        return f"Memory may run out: the {_likely_over_memory(o, memory)}."
    text = (f"Memory is tight: the estimated peak, {o.peak_gib_per_gpu:.1f} GiB per GPU (likely up to {high:.1f} GiB), is "
            f"above 90 % of the GPU's {gib:.0f} GiB")
    if high > gib:
        return text + f"; the likely peak is above the {gib:.0f} GiB, so the setup may run out of memory."
    return text + "; a longer batch or another library's workspace may not fit."


def _given_flag(result: Mapping, name: str) -> bool:
    return bool(float(result["given"].get(name, 0) or 0))


def _offload_sentence(result: Mapping, memory: Mapping[str, float]) -> str:
    """With states offloaded to CPU memory (offload_params or offload_optimizer): what lives there, the CPU memory it
    takes per machine and the least each machine needs (the offloaded states at most HOST_MEMORY_USABLE of it)."""
    from .inputs import HOST_MEMORY_USABLE
    need, assumed = memory["cpu_offload_gib_per_machine"], memory["host_memory_gib_per_machine"]
    from .engine import row_of
    # a framework that offloads as ZeRO-Offload does (DeepSpeed) streams the gradients out too, and offloads
    # parameters under ZeRO-3 (the same catalog flag what_would_fit reads)
    zero_offload = float(row_of(result["inputs"], "framework").get("offload_streams_gradients") or 0) > 0
    what = (f"the parameters, gradients and optimizer states live in CPU memory "
            f"({'ZeRO-3 offload' if zero_offload else 'FSDP CPU offload'}), the GPUs holding the layers being computed"
            if _given_flag(result, "offload_params")
            else f"the optimizer states{' and gradients' if zero_offload else ''} live in CPU memory (ZeRO-Offload)")
    return (f"In this setup {what}: {need:,.0f} GiB per machine, so each machine needs at least "
            f"{need / HOST_MEMORY_USABLE:,.0f} GiB of CPU memory (the offloaded states at most "
            f"{100 * HOST_MEMORY_USABLE:g} % of it; {assumed:,.0f} GiB assumed, host_memory_gib_per_gpu).")


def sharding_text(result: Mapping, o: Option) -> str:
    """How the GPUs of a multi-GPU option share the model, when the planner chose it (the job names no sharding and no
    layout): plain data parallel where one GPU holds the model with room to spare, else the job's sharding; "" for one
    GPU or a sharding the job gives."""
    from .layout import DATA_PARALLEL, GIVEN_LAYOUT, sharding_level
    given = result["given"]
    if o.n_gpus <= 1 or "sharding" in given or any(k in given for k in GIVEN_LAYOUT):
        return ""
    framework = result["inputs"].get("framework", "")
    if o.sharding == "none":
        name = SHARDING_NAME_UNDER.get((framework, "none"), sharding_name("none"))
        return (f"{upper_first(name)}: the model's weights, gradients and optimizer states fit one GPU "
                "with room to spare, so every GPU keeps a whole copy and only the gradients cross the links.")
    sharding = o.sharding or result["inputs"]["sharding"]  # the planner's where it chose one for the option's layout
    beside = (f"; {framework} runs pipeline stages with ZeRO stage {sharding_level(sharding)} at most"
              if o.sharding and o.sharding != DATA_PARALLEL and o.pipeline_parallel > 1 else "")
    words = SHARDING_WORDS.get(sharding, sharding).format(as_fsdp="" if framework in ZERO_NOT_FSDP else ", as FSDP does")
    return ("One GPU does not hold the model's weights, gradients and optimizer states with room to spare, so "
            f"{words}{SHARDING_UNDER.get((framework, sharding), '')}{beside}.")


def sharding_name(sharding: str) -> str:
    """A sharding in a few words: plain data parallel for "none", else its name (zero1, zero2, zero3)."""
    return "plain data parallel (PyTorch DDP)" if sharding == "none" else f"sharding {sharding}"


# What each sharding splits across the data-parallel GPUs, in words (the input's values are ZeRO's stage names)
SHARDING_WORDS = {"zero1": "the optimizer states are split across the GPUs (ZeRO stage 1)",
                  "zero2": "the optimizer states and gradients are split across the GPUs (ZeRO stage 2)",
                  "zero3": "all three are split across the GPUs (ZeRO stage 3{as_fsdp})"}
# a framework's own name for a sharding where it is not PyTorch's (DeepSpeed's stage 0: its own engine and, with bf16,
# its bf16 optimizer, not PyTorch's DDP), and the frameworks whose ZeRO-3 is their own rather than FSDP's
SHARDING_NAME_UNDER = {("deepspeed", "none"): "plain data parallel (DeepSpeed ZeRO stage 0)"}
ZERO_NOT_FSDP = ("deepspeed",)
# how a framework whose own name for the sharding differs runs it
SHARDING_UNDER = {("megatron", "zero1"): ", as Megatron's distributed optimizer does",
                  ("megatron", "zero3"): "; under Megatron-Core that is Megatron-FSDP, not its default distributed "
                                         "optimizer, which splits only the optimizer states (State sharding zero1)"}


def _why_split(result: Mapping, o: Option) -> str:
    """Why the planner split the model into pipeline stages: it does not fit the option's GPUs otherwise, or the stages
    cost fewer GPU-hours than data parallel's gathers over the GPUs' links; and the framework that runs the schedule."""
    from .engine import evaluate
    from .planner import option_inputs
    whole = evaluate({**option_inputs(result["given"], o, result["price_gpu"]), "pipeline_parallel": 1},
                     outputs=("fits_train",))["fits_train"]
    why = ("to fit: the model's states do not fit these GPUs without them" if not whole else
           "because they cost fewer GPU-hours than gathering the weights over these GPUs' links")
    return f"{why}; {result['inputs']['framework']} runs the pipeline schedule"


def rental_offer_text(result: Mapping, o: Option) -> str:
    """The offer a purchase's payback is weighed against: the rental rule's offer for its GPU and count ("" when no
    priced offer sells that many GPUs as one job)."""
    from .engine import evaluate, resolve_inputs
    from .planner import option_inputs
    inputs = {**option_inputs(result["given"], o, result["price_gpu"]), "buy": 0}
    if not evaluate(inputs, outputs=("option_offer_sells", "option_priced"))["option_priced"] or \
            not evaluate(inputs, outputs=("option_offer_sells",))["option_offer_sells"]:
        return ""
    return resolve_inputs(inputs)["offer"]


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
# DeepSpeed offloads parameters under ZeRO-3 only (ZeRO-Infinity; its ds_config's offload_param): its change says so
DEEPSPEED_PARAM_OFFLOAD = ({"offload_params": 1, "sharding": "zero3"}, "parameters in CPU memory (ZeRO-3 offload)")
FIT_OUTPUTS = ("fits_train", "peak_train_gib_per_gpu", "gpu_memory_gib", "option_hours", "option_cost_usd", "option_priced",
               "gpus_needed", "cpu_offload_gib_per_machine", "train_memory_tight", "train_memory_may_exceed", "job_machines")


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
    tight: bool = False  # train_memory_tight: the device total above 90 % of the card
    may_exceed: bool = False  # train_memory_may_exceed: the likely peak above the card's memory
    machines: int = 1  # job_machines: the machines the job spans with the change

    def sentence(self) -> str:
        cost = f", {usd_text(self.cost_usd)}" if self.cost_usd == self.cost_usd else ""
        cpu = f", with {self.cpu_gib_per_machine:,.0f} GiB of CPU memory per machine" if self.cpu_gib_per_machine > 0 else ""
        # option_hours: the job's hours as the planner's tables give them (debugging and the starts included), not
        # the bare training time estimate's table shows
        risk = " (likely more: it may not fit)" if self.may_exceed else ""
        return (f"fits with {self.text}: {self.peak_gib_per_gpu:.1f} of {self.gpu_memory_gib:.0f} GiB per GPU{risk}{cpu}, "
                f"{_hours(self.hours)} job hours{cost}")


def _more_gpus(base: dict, used: Mapping, more: int) -> list[FitChange]:
    """``what_would_fit``'s candidates of more GPUs, from ``more`` (gpus_needed) up.  Counts as servers come: within one
    server, ``more`` and the sizes the GPU's servers are sold in above it (7 H100s that fill their memory where the
    8-GPU server costs the same and leaves room); across servers, whole 8-GPU machines and one more.  Rented: through
    the offer named when it sells that many as one job, else the cheapest that does, named in the text; bought: not a
    cluster of consumer cards."""
    from .engine import evaluate, resolve_inputs
    gpus = catalog.tables()["gpus"]
    sizes = catalog.server_sizes(gpus.rows[gpus.find(str(used["gpu"]))])
    whole = -(-more // 8) * 8
    counts = {more, *(size for size in sizes if size >= more)} if more <= 8 else {whole, whole + 8}
    named = not used["buy"] and str(base.get("offer", catalog.AUTO_OFFER)).strip().lower() != catalog.AUTO_OFFER
    split = int(used["tensor_parallel"]) * int(used["pipeline_parallel"])
    found = []
    for count in sorted(counts):
        if count % (split * int(used["context_parallel"])) or (count // split) % int(used["expert_parallel"]):
            continue
        tries = [{"n_gpus": count}] if used["buy"] or named else []
        tries += [] if used["buy"] else [{"n_gpus": count, "offer": catalog.AUTO_OFFER}]
        for change in tries:
            m = evaluate({**base, **change}, outputs=(*FIT_OUTPUTS, "option_offer_sells"))
            had = bool(m["option_offer_sells"]) if not used["buy"] else not purchase_refusal(str(used["gpu"]), count, sizes, {}, 1)
            if m["fits_train"] and had:
                offer = str(resolve_inputs({**base, **change})["offer"]) if "offer" in change and named else ""
                text = f"{count} GPUs" + (f" rented from {offer} (the offer named sells fewer as one job)" if offer else "")
                # the change as applied to the inputs given: the count, and the offer when it is not the one named
                change = {"n_gpus": count, **({"offer": offer} if offer else {})}
                found.append(FitChange(text, change, float(m["peak_train_gib_per_gpu"]), float(m["gpu_memory_gib"]),
                                       float(m["option_hours"]), float(m["option_cost_usd"]) if m["option_priced"] else float("nan"),
                                       float(m["cpu_offload_gib_per_machine"]), bool(m["train_memory_tight"]),
                                       bool(m["train_memory_may_exceed"]), int(m["job_machines"])))
                break
    return found


def what_would_fit(inputs: Mapping) -> FitChange | None:
    """The cheapest single change (or pair of changes) that makes the setup ``inputs`` fit in GPU memory: a chunked
    loss, recomputation, offload of optimizer states or parameters, QLoRA instead of LoRA, pipeline stages, a shorter
    sequence or more GPUs (only as many as an offer sells as one job, or, bought, not a cluster of consumer cards);
    None when it fits already or nothing tried fits.  Ranked: a likely peak within the memory and room in it (not
    tight) first, then the job's cost, near-ties within the cost tolerance going to fewer machines, then fewer hours."""

    from .engine import evaluate, resolve_inputs
    base = dict(inputs)
    used = resolve_inputs(base)
    if evaluate(base, outputs=("fits_train",))["fits_train"]:
        return None
    tried: list[tuple[dict, str]] = []
    from .engine import row_of
    changes = list(FIT_CHANGES)
    if float(row_of(used, "framework").get("offload_streams_gradients") or 0) > 0:  # ZeRO-Offload: under a ZeRO stage
        sharded = float(row_of(used, "sharding")["shard_optimizer"] or 0) > 0
        changes = [DEEPSPEED_PARAM_OFFLOAD if "offload_params" in c
                   else (({**c, "sharding": "zero2"}, f"{t} (ZeRO-2 offload)") if "offload_optimizer" in c and not sharded
                         else (c, t)) for c, t in changes]
    singles = [(c, t) for c, t in changes if any(used[k] != v for k, v in c.items())
               and not (c.get("method") == "qlora" and used["method"] != "lora")]
    tried += singles
    tried += [({**a, **b}, f"{ta} and {tb}") for i, (a, ta) in enumerate(singles) for b, tb in singles[i + 1:]]
    n, t, cp, ep = (int(used[k]) for k in ("n_gpus", "tensor_parallel", "context_parallel", "expert_parallel"))
    from .layout import pipeline_sharding, runs_pipelines
    # stages the GPUs allow, where the framework pipelines, with the sharding its pipeline engine takes beside them
    staged = pipeline_sharding(base) if runs_pipelines(base) else None
    with_sharding = {"sharding": staged} if staged is not None and staged != used["sharding"] else {}
    for p in (2, 4, 8, 16, 32) if staged is not None else ():
        if int(used["pipeline_parallel"]) < p <= int(row_of(used, "model")["layers"]) and n % (t * p * cp) == 0 \
                and (n // (t * p)) % ep == 0:
            tried.append(({"pipeline_parallel": p, **with_sharding}, f"{p} pipeline stages"
                          + (f" (with {staged})" if with_sharding else "")))
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
                            float(r["cpu_offload_gib_per_machine"][i]), bool(r["train_memory_tight"][i]),
                            bool(r["train_memory_may_exceed"][i]), int(r["job_machines"][i])) for i in fits]
    if more > int(used["n_gpus"]):
        candidates += _more_gpus(base, used, more)
    if not candidates:
        return None
    return _best_change(candidates, float(used["cost_tolerance_pct"]))


def _best_change(candidates: list, tolerance_pct: float):
    """A change whose likely peak fits, then one that leaves room in memory (device total within 90 % of the card),
    before one at the edge of it; among those, the cheapest and, within the planner's cost tolerance of it, the one on
    the fewest machines, then the one that ends soonest (the planner's near-ties: nobody waits 2.6 times as long to
    save 1 %)."""
    best = min((c.may_exceed, c.tight) for c in candidates)
    pool = [c for c in candidates if (c.may_exceed, c.tight) == best]
    priced = [c for c in pool if c.cost_usd == c.cost_usd]
    if not priced:
        return min(pool, key=lambda c: (len(c.changes), c.hours))
    cheapest = min(c.cost_usd for c in priced)
    near = [c for c in priced if c.cost_usd <= cheapest * (1 + tolerance_pct / 100)]
    return min(near, key=lambda c: (c.machines, c.hours, c.cost_usd, len(c.changes)))


def job_hours_text(inputs: Mapping) -> str:
    """What a job's hours hold (job_wall_hours), in words with the inputs' values: the work (the estimated training
    time or the hours given) x (1 + debugging), the starts, any further hours.  ``inputs``: resolved inputs."""
    from .engine import evaluate
    work = (f"the job hours given ({inputs['job_hours']:g})" if inputs["job_hours"] > 0
            else "training time (dense BF16 TFLOPS x MFU)")
    starts = evaluate({k: inputs[k] for k in START_INPUTS}, outputs=("job_starts",))["job_starts"]
    start = ("" if not starts or not inputs["model_load_minutes"] else
             f" + {inputs['model_load_minutes']:,g} minutes to start (loading the model)"
             + (f" at each of its {starts:,g} starts" if starts > 1 else ""))
    extra = f" + {inputs['extra_rented_hours']:g} further hours" if inputs["extra_rented_hours"] else ""
    return f"{work} x (1 + {inputs['debug_overhead_pct']:g} % debugging){start}{extra}"
