"""Job planner: every GPU type x count x way to get it, in one vectorised evaluation.

The planner only enumerates and ranks; every number it reports is a quantity of the
formula layer (``option_cost_usd``, ``option_hours``, ``option_ok``, ...), so the
workbook and the Excel functions show the same values.

The ranking rule is defined once, here (``RANKING``, ``rank_key``): acceptable options
(``option_ok``: fits in memory, has a price, an allowed offer that sells this many GPUs,
meets the deadline, the budget and the capital budget) come first.  Among those costing at most
``cost_tolerance_pct`` more than the cheapest (the cheapest whose likely peak, the estimate plus the framework's
memory band, stays within the GPU's memory, where one does: ``train_memory_may_exceed``), those with room to spare
in memory win (first those whose likely peak fits, then those whose device total is at most 90 % of the GPU's memory,
``train_memory_tight``: more fails on a longer batch or a library's workspace), then renting (no capital at stake for a saving within the tolerance), then
fewer machines, then fewer hours, then fewer GPUs (a job that ends in 7
hours on one machine beats one of 18 hours at the same price; nobody spreads a job over 32 cards to
save a dollar); the rest follow by cost.  A job is one job unless it
says otherwise: purchases are ranked only when the GPUs stay busy after it
(``owned_busy_hours_per_day`` > 0) or the job asks for them (``consider_buying`` = 1).  Ties go to
the option listed first (GPU catalog order, count, offer catalog order, renting first).
Interruptible (spot) offers are listed but only eligible with ``allow_interruptible`` = 1.
The main job, GPU_PLAN and the workbook's Compare sheet all name ``plan(job)["recommended"]``.
"""
from __future__ import annotations

import math
import sys
from dataclasses import asdict, dataclass, replace
from typing import Mapping

import numpy as np

from . import catalog, layout
from .engine import check_input, evaluate, resolve_inputs
from .errors import InputError
from .formulas import VERDICTS
from .inputs import BY_NAME
from .job_fit import not_fit_text
from .text import significant_text, spreadsheet_round
from .validation import check_number

# counts tried above the smallest that fits: the minimum, then doublings up to this multiple (at least 8 GPUs)
COUNT_MULTIPLE = 4
# with a deadline, doublings go further: a job due sooner takes more GPUs (a 70B LoRA due in 2 hours needs 16-32 H100s
# where the smallest count that fits is 3)
DEADLINE_COUNT_MULTIPLE = 128
HISTORICAL = "historical"
# why an option is not acceptable, checked in this order: (flag quantity, word); the workbook's
# Compare sheet shows the first failing word
REJECTIONS = (("fits_train", "does not fit"), ("train_precision_supported", "GPU lacks the precision"), ("option_priced", "no price"),
              ("option_offer_allowed", "spot not allowed"), ("option_offer_sells", "larger than the offer sells"),
              ("option_meets_deadline", "too slow"), ("option_within_budget", "over budget"),
              ("option_within_capital_budget", "over the capital budget"))
# what the planner reports for each option: only these are computed
PLAN_OUTPUTS = ("peak_train_gib_per_gpu", "gpu_memory_gib", "option_hours", "option_outlay_usd", "option_cost_usd",
                "option_usd_per_mtok_train", "own_usd_per_gpu_hour", "rent_usd_per_gpu_hour", "option_ok", "job_machines",
                "offer_max_gpus", "rent_commitment_hours", "own_capital_usd", "comm_slowdown", "train_memory_tight",
                "train_memory_may_exceed", "fit_limit_gib", "own_hours_per_day", "option_hours_likely_low", "option_hours_likely_high",
                "cpu_offload_gib_per_machine", "host_memory_gib_per_machine", "fits_train_gpu_memory", "fits_host_memory",
                "allocator_peak_train_gib", *(flag for flag, _ in REJECTIONS))
RANKING = ("acceptable options first (option_ok); among those within cost_tolerance_pct of the cheapest job cost (of the "
           "options whose likely peak stays within the GPU's memory, not train_memory_may_exceed, where there is one), those with "
           "room to spare in memory (not train_memory_may_exceed, then not train_memory_tight), then renting (no capital at stake), then fewer machines, then fewer hours, then fewer GPUs; then the rest by job cost (option_cost_usd); ties go to the option listed "
           "first (GPU catalog order, count, offer catalog order, renting before buying); purchases are ranked only when "
           "owned_busy_hours_per_day > 0 or consider_buying = 1")


class Record:
    """An option record that reads like a mapping too (``option["gpu"]``, ``get``, ``keys``, ``items``), equal field by
    field with a NaN (no number) equal to a NaN; ``as_dict`` gives plain values (``reasons`` as a list)."""
    __slots__ = ()

    def __getitem__(self, key):
        return getattr(self, key)

    def get(self, key, default=None):
        return getattr(self, key, default)

    def keys(self):
        return self.__dataclass_fields__.keys()

    def __eq__(self, other):
        if type(other) is not type(self):
            return NotImplemented
        return all(a == b or (a != a and b != b) for a, b in ((getattr(self, k), getattr(other, k)) for k in self.keys()))

    __hash__ = None

    def items(self):
        return self.as_dict().items()

    def as_dict(self) -> dict:
        d = asdict(self)
        d["reasons"] = list(self.reasons)
        return d


@dataclass(eq=False, slots=True)  # not frozen: a frozen dataclass's __init__ costs 4 us per option, the planner makes hundreds
class Option(Record):
    """One way to run the job: a GPU type, a count, rented through an offer or bought, with its numbers.

    Money in USD, time in hours, memory in GiB per GPU.  ``reasons`` says why an option is not acceptable;
    ``price_source`` where its price came from.  Reads like a mapping too (``option["gpu"]``)."""
    gpu: str
    n_gpus: int
    acquire: str                      # "rent" or "buy"; "" when no count fits
    offer: str = ""                   # the rental offer ("" when buying)
    price_type: str = ""
    interruptible: bool = False
    commitment_months: float = 0.0    # a committed offer's term (0: pay as you go)
    order: int = 0
    fits: bool = False
    peak_gib_per_gpu: float = float("nan")
    hours: float = float("nan")
    cost_usd: float = float("nan")
    outlay_usd: float = float("nan")
    usd_per_mtok_train: float = float("nan")
    usd_per_gpu_hour: float = float("nan")
    machines: float = float("nan")    # rented machines, or owned servers
    capital_usd: float = float("nan")  # buying: GPUs + servers + network
    tight: bool = False               # fits, but the peak is above 90 % of the GPU's memory (train_memory_tight)
    may_exceed: bool = False          # fits, but the likely high end of the peak is above the memory (train_memory_may_exceed)
    own_hours_per_day: float = float("nan")  # buying: the daily use its cost assumes
    network_slowdown: float = 1.0     # how much GPU-to-GPU traffic stretches the job (1 = hidden behind compute)
    hours_likely_low: float = float("nan")   # the framework's likely range of the hours (docs/training.md)
    hours_likely_high: float = float("nan")
    pipeline_parallel: int = 1        # the layout the planner chose (core.layout) when the job gives none
    expert_parallel: int = 1
    sharding: str = ""                # the sharding the planner chose for this GPU ("": the job's)
    ok: bool = False
    reasons: tuple = ()
    price_source: str = ""
    within_tolerance: bool = False




def _hours_past(hours: float, deadline: float) -> str:
    """Hours as a refusal for a deadline states them: one decimal, or as many more as show them above the deadline
    (0.10047 h against 0.1 h reads "0.1005", never "0.1 h > deadline 0.1 h")."""
    for digits in range(1, 7):
        text = f"{hours:.{digits}f}"
        if float(text) > deadline:
            return text
    return f"{hours:.6g}"

def _reason(word: str, r: Mapping, j: int, base: Mapping, buy: bool) -> str:
    """Why option ``j`` fails the check ``word``, with its numbers."""
    if word == "no price":
        return "no price: " + ("no purchase price in the catalog" if buy else "the offer has no rental price")
    if word == "spot not allowed":
        return "spot not allowed: an interruptible offer (set Allow interruptible (spot) offers to 1 to consider it)"
    if word == "GPU lacks the precision":
        return f"GPU lacks the precision: no {base['precision']} tensor cores (the precision's FP8 matmuls need them)"
    if word == "over the capital budget":
        return f"over the capital budget: ${r['own_capital_usd'][j]:,.0f} of capital > ${base['capital_budget_usd']:,.0f}"
    if word == "larger than the offer sells":
        return f"larger than the offer sells: at most {r['offer_max_gpus'][j]:,.0f} GPUs in one job"
    if word == "does not fit":  # the words every door uses for a job that does not fit (core.job_fit)
        return not_fit_text(r["peak_train_gib_per_gpu"][j], r["fit_limit_gib"][j], r["gpu_memory_gib"][j],
                            host_need_gib=r["cpu_offload_gib_per_machine"][j], host_gib=r["host_memory_gib_per_machine"][j],
                            gpu_fits=bool(r["fits_train_gpu_memory"][j]), host_fits=bool(r["fits_host_memory"][j]),
                            tensors_gib=r["allocator_peak_train_gib"][j])
    detail = {
        "too slow": lambda: f"{_hours_past(r['option_hours'][j], base['deadline_hours'])} h > deadline {base['deadline_hours']:g} h",
        "over budget": lambda: f"${r['option_outlay_usd'][j]:,.0f} > ${base['budget_usd']:,.0f}",
    }[word]()
    return f"{word}: {detail}"


TIE_DIGITS = 6  # hours and costs are compared rounded to a millionth, as the workbook's ROUND does (spreadsheets
# compare doubles approximately, so two options a rounding error apart are a tie in both)


def tie_round(x: float) -> float:
    """``x`` rounded to TIE_DIGITS decimals as a spreadsheet's ROUND does it: on the 15 significant digits the sheet
    keeps, halves away from zero (Python's round of the binary double would turn 55.7818625 down, ROUND turns it up)."""
    if not math.isfinite(x) or abs(x) >= 1e15:
        return x
    return float(spreadsheet_round(x, TIE_DIGITS))


def tie_key(tight: bool, buy: bool, machines: float, hours: float, n_gpus: float, cost_usd: float,
            may_exceed: bool = False) -> tuple:
    """The tie-breaks among the options within the cost tolerance of the cheapest, in order (the least wins): room in
    memory, then renting (4 x may run out of memory + 2 x tight + buying: no capital at stake for a saving within the
    tolerance), the fewest machines, hours, GPUs, then the cost.  Hours and costs compare rounded as the workbook's ROUND does (``tie_round``).  The
    planner sorts by it and the workbook's Compare sheet forms it column by column (TIE_COLUMNS)."""
    return (4 * int(bool(may_exceed)) + 2 * int(bool(tight)) + int(bool(buy)), machines, tie_round(hours), n_gpus, tie_round(cost_usd))


# the quantities behind tie_key's places after the first, as the workbook's helper columns read them
TIE_COLUMNS = ("job_machines", "option_hours", "n_gpus", "option_cost_usd")


def rank(options: list, tolerance_pct: float) -> list:
    """The one ranking rule (see RANKING): the options sorted, the first is recommended.  The tolerance counts from the
    cheapest acceptable option whose likely peak stays within the GPU's memory (not may_exceed), where there is one: a
    setup that may run out of memory never wins on price over one that will not."""
    ok = [o for o in options if o.ok]
    within = [o for o in ok if not o.may_exceed] or ok
    cheapest = min((o.cost_usd for o in within), default=float("inf"))
    limit = cheapest * (1 + tolerance_pct / 100)
    near = {id(o) for o in ok if o.cost_usd <= limit}

    def key(o):
        if id(o) in near:
            return (0, *tie_key(o.tight, o.acquire == "buy", o.machines, o.hours, o.n_gpus, o.cost_usd, o.may_exceed), o.order)
        return (1 if o.ok else 2, o.cost_usd if o.ok else 0.0, 0, 0, 0, 0, o.order)
    return sorted(options, key=key), near


# Consumer (GeForce) cards are bought as one server at most: a cluster of them would join its servers without
# GPUDirect RDMA (NVIDIA supports it on data-centre and workstation GPUs only: NVIDIA, "GPUDirect RDMA User Manual",
# System Requirements, https://docs.nvidia.com/networking/display/GPUDirectRDMAv18/System+Requirements+and+Recommendations),
# every transfer between machines staged through host memory, over a network nobody buys for such cards.
CONSUMER_ONE_SERVER = ("one server at most: {gpu} is a consumer card (no GPUDirect RDMA between machines); "
                       "bought, at most {most} in one server")


# A purchase is sized by the job: a GPU sold only in large servers or racks (a 72-GPU NVL72 rack) is not bought for a
# job that fits on a few of them, however busy the team says its GPUs stay.
OVERSIZED_PURCHASE = ("larger than the job needs: {n}x {gpu} is the smallest purchase (whole servers or racks) and the "
                      "job fits on {need}; the planner weighs up to {most}")


# NVIDIA, "License For Customer Use of NVIDIA GeForce Software", section 2.1.3 "No Datacenter Deployment" (in every GeForce
# driver since 2017-11-30), https://www.nvidia.com/en-us/drivers/geforce-license/: what a purchase of GeForce cards says,
# in training and serving answers alike (the serving workbook's sentence takes the words after {gpu})
GEFORCE_LICENSE = ("{gpu} is a GeForce card: NVIDIA's GeForce driver license excludes datacenter deployment (an office or "
                   "lab, not the colocation the cost of owning assumes: Colocation price on the inputs)")


def consumer_gpu(gpu: str) -> bool:
    """Whether the GPU catalog marks ``gpu`` as a consumer card (GeForce)."""
    table = catalog.tables()["gpus"]
    return bool(int(table.rows[table.find(gpu)]["consumer"] or 0))


def machine_gpus(offer_row) -> int:
    """GPUs in one machine of an offer (gpus_per_node, else the instance size; at least 1)."""
    return max(1, int(float(offer_row.get("gpus_per_node") or 0) or float(offer_row.get("gpus_per_instance") or 0) or 1))


def buyable_count(n: int, sizes: tuple[int, ...]) -> int:
    """The smallest GPU count >= n that can be bought as whole servers: one server of an allowed size, or
    several of the largest (GPU catalog server_sizes: HGX boards of 4 or 8, NVL72 racks of 72, PCIe servers 1-8)."""
    for size in sorted(sizes):
        if size >= n:
            return size
    top = max(sizes)
    return -(-n // top) * top


def sizes_text(sizes: tuple[int, ...]) -> str:
    """The GPU counts a GPU's servers are sold in, as words: "8", "4 or 8", "1, 2, 4 or 8"."""
    return " or ".join(map(str, sizes)) if len(sizes) < 3 else ", ".join(map(str, sizes[:-1])) + f" or {sizes[-1]}"


def unsold_purchase_text(gpu: str, n_gpus: float, prices_them: str = "--n-gpus {whole} prices them") -> str | None:
    """What owning ``n_gpus`` of ``gpu`` would mean when they do not fill whole servers as the planner buys them (one
    server of a size the GPU is sold in, or several of the largest: ``buyable_count``; the planner never proposes such
    a purchase, ``purchase_refusal``), where ``gpu-tco tco`` and ``breakeven`` price whatever count they are given:
    "B200 is sold in servers of 8 GPUs, and gpu-tco buys whole servers (several of the largest beyond one): these
    figures are for 2 GPUs; whole servers hold 8 (--n-gpus 8 prices them)."  None when the count fills them (GPU
    catalog server_sizes; a row without sizes: servers of 1 to 8, said as assumed).  A MIG slice is not bought on its
    own: the line says it is priced as its share of the card (GPU catalog card_share)."""
    gpus = catalog.tables()["gpus"]
    row = gpus.find(gpu)
    n = int(n_gpus)
    if row is None or n != n_gpus or n < 1:
        return None
    mig = catalog.mig_profile(gpus.rows[row])
    if mig:
        return (f"{gpu} is a MIG slice of one {mig[0]}: nobody buys a slice alone, so these figures are the slice's share "
                f"of owning the card.")
    sizes = catalog.server_sizes(gpus.rows[row])
    whole = buyable_count(n, sizes)
    if whole == n:
        return None
    held = sizes_text(sizes)
    given = str(gpus.rows[row].get("server_sizes", "") or "").strip() not in ("", "0")
    sold = (f"{gpu} is sold in servers of {held} GPUs" if given else
            f"{gpu}'s catalog row gives no server sizes (servers of {held} GPUs assumed)")
    return (f"{sold}, and gpu-tco buys whole servers (several of the largest beyond one): these figures are for {n} "
            f"GPUs; whole servers hold {whole} ({prices_them.format(whole=whole)}).")


def purchase_note(gpu: str, n_gpus: float) -> str:
    """What a count of a GPU means as a purchase, for a spreadsheet cell beside GPU_TCO or GPU_BREAKEVEN (which price
    any count): unsold_purchase_text, worded for a sheet ("n_gpus 8 prices them"), or that the count fills whole
    servers ("8 H100-SXM fill whole servers (servers of 4 or 8 GPUs)")."""
    used = resolve_inputs({"gpu": gpu, "n_gpus": n_gpus})  # the GPU's catalog name; a bad name or count says which
    name, n = str(used["gpu"]), float(used["n_gpus"])
    if n != int(n):
        raise InputError("n_gpus", n_gpus, "a whole number of GPUs to buy")
    unsold = unsold_purchase_text(name, n, prices_them="n_gpus {whole} prices them")
    if unsold:
        return unsold
    gpus = catalog.tables()["gpus"]
    sizes = catalog.server_sizes(gpus.rows[gpus.find(name)])
    return f"{int(n):,} {name} fill whole servers (servers of {sizes_text(sizes)} GPUs)"


def _counts(minimum: int, multiple: int = COUNT_MULTIPLE) -> list[int]:
    top = max(8, minimum * multiple)
    counts, n = [minimum], 1
    while n <= top:
        if n > minimum:
            counts.append(n)
        n *= 2
    return counts


# Offers alike in everything the formulas read but their price (the same GPU, GPUs per machine, network, billing, terms,
# commission, storage and egress prices; the name, provider, instance, region and sources aside) give options that
# differ only in price, and the cheaper (or, at the same price, the earlier) one ranks first under both planners' rules
# (RANKING, SERVE_RANKING: cost never decreases with the price per GPU-hour).  An offer that costs at least as much as
# ALIKE_OFFERS_KEPT earlier offers alike is left out: each of its options has that many options ranked before it, so it
# can never be recommended, be the best rental, nor appear among the first ALIKE_OFFERS_KEPT options of any list, and
# leaving it out changes no other option's rank.  A refresh of 100,000 instances is planned from a few thousand offers.
ALIKE_OFFERS_KEPT = 25
OFFER_LABEL_COLUMNS = ("name", "aliases", "provider", "instance", "region", "description", "source", "as_of", "notes")
OFFER_PRICE_COLUMNS = ("usd_per_gpu_hour", "usd_per_instance_hour")


def alike_offer_columns(columns) -> list[str]:
    """The offer columns two offers must share to be alike (all but OFFER_LABEL_COLUMNS and OFFER_PRICE_COLUMNS)."""
    return [c for c in columns if c not in OFFER_LABEL_COLUMNS and c not in OFFER_PRICE_COLUMNS]


def offers_kept_for(top: int) -> int:
    """Offers alike the planners must keep so that a list of the first ``top`` options (0 = every option) is the list
    every offer would give: max(ALIKE_OFFERS_KEPT, top), or all of them for every option.  ``top`` that is not a whole
    number >= 0 (a negative, a fraction, a yes/no value, text, NaN) is refused with an InputError naming ``top``."""
    whole = isinstance(top, (int, np.integer)) or (isinstance(top, float) and top.is_integer())
    if isinstance(top, (bool, np.bool_)) or not whole or top < 0:
        raise InputError("top", top, "must be a whole number >= 0 (options listed; 0 = every option)")
    return sys.maxsize if top == 0 else max(ALIKE_OFFERS_KEPT, int(top))


def planned_offers(keep: int | None = None) -> tuple[dict[int, list[int]], dict[int, int]]:
    """({GPU row: the offer rows the planners weigh, in catalog order}, {GPU row: offers left out}): priced, not
    historical, and not costing at least as much as ``keep`` (default ALIKE_OFFERS_KEPT) earlier offers alike.  Built
    once per catalog snapshot."""
    if keep is None:
        keep = ALIKE_OFFERS_KEPT
    elif isinstance(keep, bool) or not isinstance(keep, (int, np.integer)) or keep < 1:
        raise InputError("alike_kept", keep, f"must be a whole number >= 1 (offers alike kept; default {ALIKE_OFFERS_KEPT})")
    keep = int(keep)
    snap = catalog.snapshot()
    return snap.derived(("planned offers", keep), lambda: _build_planned_offers(snap.tables, keep))[:2]


def offer_rows_left_out() -> frozenset[int]:
    """The offer rows ``planned_offers`` leaves out (each costs at least as much as ALIKE_OFFERS_KEPT earlier offers
    alike): rows no planner weighs and no answer names, which a workbook need not list.  Built once per catalog snapshot."""
    snap = catalog.snapshot()
    return snap.derived(("planned offers", ALIKE_OFFERS_KEPT), lambda: _build_planned_offers(snap.tables, ALIKE_OFFERS_KEPT))[2]


def cheaper_listed_offer(job: Mapping) -> dict | None:
    """With the job's offer left to "auto" (the GPU's cheapest on-demand offer (not a marketplace), a provider's own list price: the
    reference for renting against buying), the offer of its GPU with a lower price paid per GPU-hour (list x (1 -
    off-peak discount) x (1 + commission), ``rent_usd_per_gpu_hour``) that the planner may recommend: sells n_gpus as one
    job, not interruptible unless allow_interruptible is 1, marketplaces and community clouds included.
    {"offer", "usd_per_gpu_hour", "price_type"}; None when the offer was named or nothing listed is cheaper."""
    if str(job.get("offer", catalog.AUTO_OFFER)).strip().lower() != catalog.AUTO_OFFER:
        return None
    used = resolve_inputs(dict(job))
    gpus = catalog.tables()["gpus"]
    rows = planned_offers()[0].get(gpus.find(str(used["gpu"])), [])
    offers = catalog.tables()["offers"]
    names = [offers.rows[i]["name"] for i in rows]
    if not names:
        return None
    r = evaluate({**dict(job), "buy": 0, "offer": [*names, catalog.AUTO_OFFER]},
                 outputs=("rent_usd_per_gpu_hour", "option_offer_sells", "option_offer_allowed", "option_priced"))
    price = r["rent_usd_per_gpu_hour"]
    ok = [j for j in range(len(names)) if r["option_offer_sells"][j] and r["option_offer_allowed"][j] and r["option_priced"][j]]
    best = min(ok, key=lambda j: (float(price[j]), j), default=None)
    # cheaper by more than a rounding of the price (the auto offer itself is among the listed)
    if best is None or not float(price[best]) < 0.995 * float(price[-1]):
        return None
    return {"offer": names[best], "usd_per_gpu_hour": float(price[best]), "price_type": str(offers.rows[rows[best]]["price_type"])}


def _build_planned_offers(tabs, keep: int) -> tuple[dict[int, list[int]], dict[int, int], frozenset[int]]:
    import heapq
    offers = tabs["offers"]
    gpu_rows = catalog.offer_map_lists()[0]
    alike = zip(*(offers.col[c] for c in alike_offer_columns(offers.columns)))
    cheapest: dict[tuple, list[float]] = {}  # per kind of offer: the ``keep`` lowest prices so far, negated (a max-heap)
    out: dict[int, list[int]] = {}
    left_out: dict[int, int] = {}
    dropped: list[int] = []
    for i, (g, price, price_type, kind) in enumerate(zip(gpu_rows, offers.col["usd_per_gpu_hour"], offers.col["price_type"], alike)):
        if g < 0 or HISTORICAL in str(price_type) or not price > 0:
            continue
        heap = cheapest.setdefault(kind, [])
        if len(heap) < keep:
            heapq.heappush(heap, -price)
        elif -heap[0] <= price:  # ``keep`` earlier offers alike cost no more
            left_out[g] = left_out.get(g, 0) + 1
            dropped.append(i)
            continue
        else:
            heapq.heapreplace(heap, -price)
        out.setdefault(g, []).append(i)
    return out, left_out, frozenset(dropped)


PRICE_INPUTS = ("purchase_usd_per_gpu", "usd_per_gpu_hour_rented")
# inputs the planner reads itself (no formula does): every door that plans takes them
PLANNER_INPUTS = ("cost_tolerance_pct", "consider_buying")


def ranks_purchases(inputs: Mapping) -> bool:
    """Whether a training job's purchases are ranked: the GPUs stay busy after the job (owned_busy_hours_per_day > 0)
    or the job asks for them (consider_buying = 1).  A one-off job ranks rentals only."""
    return float(inputs["owned_busy_hours_per_day"]) > 0 or bool(inputs["consider_buying"])


def _given_prices(job: dict, base: Mapping, owner_unknown: bool, gpu_types: int) -> dict:
    """The price inputs the job gives (taken out of ``job``); refused when it is not known whose price they are
    (``owner_unknown``: several GPU types weighed and none named for the price)."""
    given = {k: job.pop(k) for k in PRICE_INPUTS if k in job and float(base[k]) > 0}
    if given and owner_unknown:  # whose price it is would be a guess
        name = next(iter(given))
        raise InputError(name, given[name], f"is the price of one GPU type, and the plan weighs {gpu_types}: plan that "
                         "GPU type alone, or leave the price at 0 (each GPU at its catalog price)")
    return given


def plan(job: Mapping | None = None, gpus: list[str] | None = None, include_buy: bool | None = None,
         count: int | None = None, offer: str | None = None, price_gpu: str | None = None,
         alike_kept: int | None = None) -> dict:
    """Rank every way to run ``job`` (inputs as for ``core.evaluate``).

    The scope: ``gpus`` (GPU names; default every GPU in the catalog), ``count`` (a fixed
    GPU count; default the smallest that fits, then doublings), ``offer`` (one rental offer;
    default every priced offer of each GPU) and ``include_buy`` (default: ``ranks_purchases`` of the job: a one-off job
    ranks rentals only).  A purchase or rental price in
    the job (purchase_usd_per_gpu, usd_per_gpu_hour_rented) belongs to ``price_gpu``; every other GPU is priced
    from the catalogs.  Without ``price_gpu`` such a price is refused when several GPU types are weighed (whose price
    it is would be a guess), and belongs to H100-SXM, the GPU input's default, when one is.
    Buying counts are whole servers (GPU catalog server_sizes).
    A ``task`` in the job must be "train" here (``gpu_tco.plan`` sends "serve" to ``serving.serve_plan``).
    Returns ``{"job", "inputs", "given", "options", "recommended", "rejected_counts", "ranking", "price_gpu",
    "offers_left_out"}`` (``given``: the job as passed in; ``job`` and ``inputs``: resolved): ``options``
    are ``Option`` records, acceptable ones first in the order of ``RANKING``; ``recommended`` is
    the first when it is acceptable, else None; ``offers_left_out``: offers that cost at least as much as
    ``alike_kept`` (default ALIKE_OFFERS_KEPT) offers alike (``planned_offers``), which no list of the first
    ``alike_kept`` options would show.
    """
    gpus, count, tp = _checked_scope(job, gpus, count)
    weighed, left_out = planned_offers(alike_kept)  # checks alike_kept; built once per catalog snapshot
    job = dict(job or {})
    given_job = dict(job)  # as the caller gave it (a model as fields stays fields)
    if "task" in job and check_input("task", job.pop("task")) != "train":
        raise InputError("task", "serve", "is planned by serve_plan (gpu_tco.plan sends it there)")
    tabs = catalog.tables()
    gpu_table = tabs["gpus"]
    price_owner = gpu_table.canonical(price_gpu if price_gpu is not None else BY_NAME["gpu"].default, "gpu")
    step = layout.unit(job)  # the smallest count the job's parallel layout allows
    base = resolve_inputs({**job, "n_gpus": count or step, "gpu": price_owner})
    gpu_names = [gpu_table.canonical(g, "gpu") for g in gpus] if gpus else list(gpu_table.names)
    gpu_names = list(dict.fromkeys(gpu_names))  # a GPU named twice is one GPU
    # a MIG slice serves a model on its own (no NVLink, no peer-to-peer between slices): training is planned on
    # whole GPUs; a slice named in ``gpus`` is listed as rejected, the others are left out
    slices = [g for g in gpu_names if catalog.mig_profile(gpu_table.rows[gpu_table.find(g)])]
    gpu_names = [g for g in gpu_names if g not in slices]
    slices = slices if gpus else []
    chosen_offer = None
    if offer is not None and not (isinstance(offer, str) and offer.strip().lower() == catalog.AUTO_OFFER):
        if not isinstance(offer, str):
            raise InputError("offer", offer, "must be an offer name (gpu-tco offers lists them) or auto")
        chosen_offer = tabs["offers"].resolve(offer, "offer")
    given_prices = _given_prices(job, base, price_gpu is None and len(gpu_names) > 1, len(gpu_names))
    if include_buy is None:
        include_buy = ranks_purchases(base)

    # 1. the smallest count of each GPU that fits (one vectorised call)
    need = evaluate({**job, "gpu": gpu_names, "n_gpus": count or step}, outputs=("gpus_needed",))["gpus_needed"] if gpu_names else []
    # 1b. pipeline (and expert) parallel degrees where they make a GPU fit or lower its GPU-hours
    layouts = layout.choose(job, gpu_names, count, tp)
    need = [layouts[g]["gpus_needed"] if g in layouts else k for g, k in zip(gpu_names, need)]
    # 2. enumerate GPU x count x (each offer, or buying whole servers)
    multiple = DEADLINE_COUNT_MULTIPLE if float(base["deadline_hours"]) > 0 else COUNT_MULTIPLE
    candidates, never = _candidates(gpu_names, need, count, chosen_offer, include_buy, weighed, multiple)
    # 3. one sweep over the candidates, each becoming an Option with the reasons it is not acceptable
    options: list[Option] = []
    if candidates["gpu"]:
        sweep = _sweep(job, candidates, given_prices, price_owner, base, layouts, step)
        # a purchase is sized by the job: more GPUs than the counts tried for it (COUNT_MULTIPLE x the smallest that
        # fits, at least 8) only because the GPU is sold in larger servers or racks is not bought for it
        needs = {} if count is not None else {g: int(k) for g, k in zip(gpu_names, need) if int(k) > 0}
        options = _options(sweep, evaluate(sweep, outputs=PLAN_OUTPUTS), base, given_prices, price_owner, needs, multiple)
    offers_left_out = 0 if chosen_offer is not None else \
        sum(left_out.get(gpu_table.find(g), 0) for g in gpu_names if g not in never)
    for g in never:
        options.append(Option(gpu=g, n_gpus=0, acquire="", order=len(options), reasons=("does not fit at any GPU count",)))
    for g in slices:
        options.append(Option(gpu=g, n_gpus=0, acquire="", order=len(options),
                              reasons=("a MIG slice: planned for serving only; training is planned on whole GPUs",)))
    # 4. the planner's order
    ranked, near = rank(options, float(base["cost_tolerance_pct"]))
    options = [replace(o, within_tolerance=True) if id(o) in near else o for o in ranked]
    recommended = options[0] if options and options[0].ok else None
    inputs = {**base, **given_prices}
    return {"job": {k: inputs[k] for k in BY_NAME if k in job or k in given_prices or k in _JOB_FIELDS}, "inputs": inputs,
            "options": options, "recommended": recommended, "rejected_counts": _rejected_counts(options), "ranking": RANKING,
            "price_gpu": price_owner, "given": given_job, "offers_left_out": offers_left_out}


def _checked_scope(job, gpus, count) -> tuple[list[str] | None, int | None, int]:
    """The planner's arguments checked: (gpus as a list or None, count as an int or None, the job's
    tensor-parallel degree); an InputError names the argument otherwise."""
    if job is not None and not isinstance(job, Mapping):
        raise InputError("job", job, "must be a mapping of input names to values, e.g. {\"model\": \"Llama-3-8B\"}")
    if isinstance(gpus, str):
        gpus = [gpus]  # one GPU named
    if gpus is not None and (not isinstance(gpus, (list, tuple)) or not all(isinstance(g, str) for g in gpus)):
        raise InputError("gpus", gpus, "must be a list of GPU names, e.g. [\"H100-SXM\", \"L40S\"]")
    job = job or {}
    if count is not None:
        if isinstance(count, bool) or not isinstance(count, (int, np.integer, float)) or not math.isfinite(count) \
                or count != int(count) or not 1 <= count <= BY_NAME["n_gpus"].maximum:
            raise InputError("n_gpus", count, f"allowed: {BY_NAME['n_gpus'].allowed()}")
        count = int(count)
    for key in ("gpu", "n_gpus", "offer", "buy"):
        if key in job:
            raise InputError(key, job[key], "is chosen by the planner; restrict GPUs with gpus=[...] instead")
    # validates the job once, with field names in messages; the GPU count is the planner's to choose, so the
    # job is checked at a count the tensor-parallel degree divides (the default 8 need not be one)
    tp = int(check_number(BY_NAME["tensor_parallel"], job["tensor_parallel"])) if "tensor_parallel" in job else 1
    if count is not None and count % tp:
        raise InputError("n_gpus", count, f"must be a multiple of tensor_parallel ({tp})")
    return gpus, count, tp


def _candidates(gpu_names: list[str], need, count: int | None, chosen_offer: int | None,
                include_buy: bool, offers: Mapping[int, list[int]],
                multiple: int = COUNT_MULTIPLE) -> tuple[dict[str, list], list[str]]:
    """Every GPU x count x (each offer, or buying whole servers) as columns {gpu, n_gpus, offer, buy}, and the
    GPUs that fit at no count.  ``need``: each GPU's smallest count that fits (0: none); ``offers``: the offer rows
    weighed per GPU row (``planned_offers``)."""
    tabs = catalog.tables()
    gpu_table = tabs["gpus"]
    columns: dict[str, list] = {"gpu": [], "n_gpus": [], "offer": [], "buy": []}

    def add(gpu: str, n: int, offer_name: str, buy: int) -> None:
        for key, value in zip(("gpu", "n_gpus", "offer", "buy"), (gpu, n, offer_name, buy)):
            columns[key].append(value)
    never = []
    for g, k in zip(gpu_names, need):
        k = int(k)
        if k <= 0 and count is None:
            never.append(g)
            continue
        row = gpu_table.find(g)
        mine = offers.get(row, [])
        if chosen_offer is not None:  # one offer: rent only through it (for the GPU it rents out)
            mine = [chosen_offer] if catalog.offer_gpu_rows()[chosen_offer] == row else []
        counts = [count] if count is not None else _counts(k, multiple)
        for off in mine:
            # a job over several machines rents whole machines: its count rounds up to the offer's machine size
            node = machine_gpus(tabs["offers"].rows[off])
            sizes = counts if count is not None else sorted({n if n <= node else -(-n // node) * node for n in counts})
            for n in sizes:
                add(g, n, tabs["offers"].names[off], 0)
        if include_buy:
            sizes = catalog.server_sizes(gpu_table.rows[row])
            for n in [count] if count is not None else sorted({buyable_count(n, sizes) for n in counts}):
                add(g, n, catalog.AUTO_OFFER, 1)
    return columns, never


def _sweep(job: Mapping, candidates: Mapping[str, list], given_prices: Mapping, price_owner: str, base: Mapping,
           layouts: Mapping[str, dict], step: int) -> dict:
    """The inputs of one vectorised evaluation over the candidates: a given price applies to its own GPU only, each
    GPU takes the parallel layout the planner chose for it (``layouts``), a count the layout does not divide
    (``step``: the job's own layout unit) is left out, and a row takes ZeRO-2 instead of ZeRO-3 where its framework's
    ZeRO-3 costs time of its own and ZeRO-2 holds the job (``layout.lighter_shardings``)."""
    o_gpu, o_n = candidates["gpu"], candidates["n_gpus"]
    sweep = {**job, "gpu": o_gpu, "n_gpus": np.array(o_n), "offer": candidates["offer"], "buy": np.array(candidates["buy"])}
    for name, value in given_prices.items():  # a given price is the price of its own GPU only
        sweep[name] = np.where(np.asarray(o_gpu, dtype=object) == price_owner, float(value), 0.0)
    if layouts:
        for name in layout.LAYOUT_INPUTS:
            sweep[name] = np.array([layouts[g][name] if g in layouts else 1 for g in o_gpu])
        if any("sharding" in lay for lay in layouts.values()):  # plain data parallel where a GPU holds the model
            sweep["sharding"] = [layouts[g].get("sharding", base["sharding"]) if g in layouts else base["sharding"] for g in o_gpu]
    if step > 1 or layouts:
        # a count the parallel layout does not divide is not an option
        keep = layout.allows(o_n, int(base["tensor_parallel"]), np.asarray(sweep.get("pipeline_parallel", base["pipeline_parallel"])),
                             int(base["context_parallel"]), np.asarray(sweep.get("expert_parallel", base["expert_parallel"])))
        sweep = {k: (np.asarray(v, dtype=object if k in ("gpu", "offer", "sharding") else None)[keep] if isinstance(v, (list, np.ndarray)) else v)
                 for k, v in sweep.items()}
    lighter = layout.lighter_shardings(job, sweep)  # DeepSpeed: ZeRO-2 where it holds the job, before ZeRO-3
    if lighter is not None:
        sweep["sharding"] = np.asarray(lighter, dtype=object)
    return sweep


def purchase_refusal(gpu: str, n: int, sizes: tuple, needs: Mapping[str, int], multiple: int) -> list[str]:
    """Why ``n`` bought ``gpu`` is not a purchase to propose (empty: it is): a count no server holds, consumer cards
    beyond one server, or more GPUs than the counts tried for the job (``_counts`` above its smallest that fits)."""
    if buyable_count(n, sizes) != n:  # a fixed count that no server holds (2 SXM cards: HGX boards hold 4 or 8)
        return [f"not sold in that size: {gpu} servers hold {sizes_text(sizes)} GPUs"]
    if n > max(sizes) and consumer_gpu(gpu):
        return [CONSUMER_ONE_SERVER.format(gpu=gpu, most=max(sizes))]
    if gpu in needs and n > max(_counts(needs[gpu], multiple)):
        return [OVERSIZED_PURCHASE.format(n=n, gpu=gpu, need=needs[gpu], most=max(_counts(needs[gpu], multiple)))]
    return []


def _options(sweep: Mapping, r: Mapping, base: Mapping, given_prices: Mapping, price_owner: str,
             needs: Mapping[str, int] | None = None, multiple: int = COUNT_MULTIPLE) -> list[Option]:
    """One Option per row of the sweep ``r`` (its PLAN_OUTPUTS), in the sweep's order.  ``needs``: each GPU's smallest
    count that fits; a purchase above the counts tried for it (``_counts``) is not acceptable."""
    needs = needs or {}
    tabs = catalog.tables()
    gpu_table = tabs["gpus"]
    n_rows = len(r["option_cost_usd"])
    # every column as a Python list once: reading a list is cheap, a NumPy element (and converting it) is not
    gpu_col = [str(g) for g in np.asarray(sweep["gpu"], dtype=object).tolist()]
    n_col = [int(k) for k in np.asarray(sweep["n_gpus"]).tolist()]
    buy_col = [bool(b) for b in np.asarray(sweep["buy"]).tolist()]
    offer_col = [str(o) for o in np.asarray(sweep["offer"], dtype=object).tolist()]
    pp_col = [int(p) for p in np.broadcast_to(np.asarray(sweep.get("pipeline_parallel", 1)), (n_rows,)).tolist()]
    ep_col = [int(e) for e in np.broadcast_to(np.asarray(sweep.get("expert_parallel", 1)), (n_rows,)).tolist()]
    chosen_sharding = isinstance(sweep.get("sharding"), (list, np.ndarray))  # the planner chose it per GPU
    sharding_col = [str(x) for x in np.asarray(sweep["sharding"], dtype=object).tolist()] if chosen_sharding else [""] * n_rows
    offer_rows = tabs["offers"].rows
    offer_index = tabs["offers"].exact_names()  # {name: row}, built once per table
    # the rows that pass every check, and those whose cost, outlay and hourly price are finite numbers
    passes = np.ones(n_rows, dtype=bool)
    for flag, _ in REJECTIONS:
        passes &= np.asarray(r[flag], dtype=bool)
    hourly_col = np.where(np.asarray(sweep["buy"], dtype=bool), r["own_usd_per_gpu_hour"], r["rent_usd_per_gpu_hour"])
    finite = (np.isfinite(np.asarray(r["option_cost_usd"], dtype=float)) & np.isfinite(np.asarray(r["option_outlay_usd"], dtype=float))
              & np.isfinite(hourly_col.astype(float))).tolist()
    passes = passes.tolist()
    r = {k: np.asarray(v).tolist() for k, v in r.items()}  # Python floats: cheap to read one by one
    own_hourly, rent_hourly = r["own_usd_per_gpu_hour"], r["rent_usd_per_gpu_hour"]
    fits, peak, hours_col, cost = r["fits_train"], r["peak_train_gib_per_gpu"], r["option_hours"], r["option_cost_usd"]
    outlay, per_mtok, machines, capital = r["option_outlay_usd"], r["option_usd_per_mtok_train"], r["job_machines"], r["own_capital_usd"]
    slowdown, tight, own_hours, low, high = (r["comm_slowdown"], r["train_memory_tight"], r["own_hours_per_day"],
                                             r["option_hours_likely_low"], r["option_hours_likely_high"])
    may_exceed = r["train_memory_may_exceed"]
    option_ok = r["option_ok"]
    sizes_of: dict[str, tuple[int, ...]] = {}
    nan = float("nan")
    options = []
    for j in range(n_rows):
        buy = buy_col[j]
        offer_name = offer_col[j]
        gpu = gpu_col[j]
        n = n_col[j]
        failing = [] if passes[j] else [word for flag, word in REJECTIONS if not r[flag][j]]
        reasons = [_reason(word, r, j, base, buy) for word in failing]
        hourly = own_hourly[j] if buy else rent_hourly[j]
        priced = finite[j]
        if not priced and "no price" not in failing:  # e.g. a purchase price of 1e308: never ranked, never "$inf"
            reasons.append("no price: the cost is not a finite number (check the price inputs)")
        if buy:
            sizes = sizes_of.get(gpu) or sizes_of.setdefault(gpu, catalog.server_sizes(gpu_table.rows[gpu_table.find(gpu)]))
            why_not = purchase_refusal(gpu, n, sizes, needs, multiple)
            sold = not why_not
            reasons += why_not
            offer_row = None
            source = ("purchase_usd_per_gpu as given for " + gpu if "purchase_usd_per_gpu" in given_prices and gpu == price_owner
                      else "GPU catalog purchase price")
        else:
            sold = True
            offer_row = offer_rows[offer_index[offer_name]]
            source = ("usd_per_gpu_hour_rented as given for " + gpu if "usd_per_gpu_hour_rented" in given_prices
                      and gpu == price_owner else "offers catalog price")
        options.append(Option(
            gpu=gpu, n_gpus=n, acquire="buy" if buy else "rent",
            offer="" if buy else offer_name, price_type="" if buy else str(offer_row["price_type"]),
            interruptible=bool(not buy and offer_row["interruptible"]),
            commitment_months=0.0 if buy else float(offer_row["commitment_months"]),
            order=j, fits=bool(fits[j]), peak_gib_per_gpu=float(peak[j]),
            hours=float(hours_col[j]), cost_usd=float(cost[j]),
            outlay_usd=float(outlay[j]), usd_per_mtok_train=float(per_mtok[j]),
            usd_per_gpu_hour=float(hourly), machines=float(machines[j]),
            capital_usd=float(capital[j]) if buy else nan,
            network_slowdown=float(slowdown[j]), tight=bool(tight[j]), may_exceed=bool(may_exceed[j]),
            own_hours_per_day=float(own_hours[j]) if buy else nan,
            hours_likely_low=float(low[j]), hours_likely_high=float(high[j]),
            pipeline_parallel=pp_col[j], expert_parallel=ep_col[j], sharding=sharding_col[j],
            ok=bool(option_ok[j]) and priced and sold, reasons=tuple(reasons), price_source=source))
    return options


def _rejected_counts(options: list[Option]) -> dict[str, int]:
    """How many options each kind of reason rejects (the reason's words before its colon)."""
    counts: dict[str, int] = {}
    for o in options:
        for reason in o.reasons:
            key = reason.split(":")[0]
            counts[key] = counts.get(key, 0) + 1
    return counts


_JOB_FIELDS = ("model", "method", "framework", "tokens", "epochs", "seq_len", "micro_batch", "deadline_hours", "budget_usd",
               "allow_interruptible", "owned_busy_hours_per_day", "consider_buying", "capital_budget_usd", "memory_margin_pct")


def same_option(a: Mapping | None, b: Mapping | None) -> bool:
    """Whether two option descriptions (planner rows, or dicts with gpu, n_gpus, acquire, offer) are the same choice."""
    if a is None or b is None:
        return a is b
    return (a["gpu"], int(a["n_gpus"]), a["acquire"], a["offer"] if a["acquire"] == "rent" else "") == \
        (b["gpu"], int(b["n_gpus"]), b["acquire"], b["offer"] if b["acquire"] == "rent" else "")


def scope(scenario: Mapping, gpus: list[str] | None = None) -> tuple[dict, dict]:
    """(job, scope) for ``plan(job, **scope)`` from a scenario's inputs: a ``gpu`` named there
    becomes the list of GPUs considered, ``n_gpus`` a fixed count, an ``offer`` other than auto
    the one offer to rent; ``buy`` is left to the planner (it weighs renting and buying)."""
    job = {k: v for k, v in scenario.items() if k not in ("gpu", "n_gpus", "offer", "buy")}
    out: dict = {}
    if gpus:
        out["gpus"] = list(gpus)
    elif "gpu" in scenario:
        out["gpus"] = [scenario["gpu"]]
    if "n_gpus" in scenario:
        out["count"] = scenario["n_gpus"]
    if "offer" in scenario:
        out["offer"] = scenario["offer"]
    if "gpu" in scenario:  # a price in the scenario is the price of its GPU
        out["price_gpu"] = scenario["gpu"]
    elif gpus and len(set(gpus)) == 1:  # or of the one GPU planned
        out["price_gpu"] = gpus[0]
    return job, out


def option_inputs(job: Mapping, option: Mapping, price_gpu: str | None = None) -> dict:
    """The inputs of one planner option: the job with its GPU, count, offer and rent or buy.  A price given in the
    job belongs to ``price_gpu`` (the plan's ``price_gpu``): another GPU is priced from the catalogs."""
    buy = option["acquire"] == "buy"
    out = {**job, "gpu": option["gpu"], "n_gpus": option["n_gpus"], "offer": "auto" if buy else option["offer"],
           "buy": 1 if buy else 0}
    if price_gpu is not None and option["gpu"] != price_gpu:
        for name in PRICE_INPUTS:
            out.pop(name, None)
    for name in layout.LAYOUT_INPUTS:  # the layout the planner chose for this GPU
        if int(option.get(name, 1) or 1) > 1:
            out[name] = int(option[name])
    if option.get("sharding"):  # plain data parallel the planner chose for this GPU
        out["sharding"] = option["sharding"]
    return out


BOUGHT_OUTPUTS = ("payback_months", "verdict_code", "own_capital_usd", "option_cost_usd", "breakeven_hours_per_day",
                  "own_hours_per_day", "own_saving_usd_per_month")


def bought_instead(job: Mapping, option: Mapping, price_gpu: str | None = None) -> dict:
    """The option's GPUs bought instead of rented through THAT offer: payback (months, -1 = never) against the offer's
    price at own_hours_per_day of use, verdict, capital, the job's owned share (USD) and the daily use over the months
    of ownership at which buying pays back (breakeven_hours_per_day, h/day; above 24 or -1: never)."""
    return evaluate({**option_inputs(job, option, price_gpu), "buy": 1}, outputs=BOUGHT_OUTPUTS)


def likely_hours_text(option: Mapping, framework: str) -> str:
    """The option's likely job hours in words, the one wording every door uses: "likely 3.1 to 6 hours with
    transformers (the range of its measured runs held out of the fit)" (option_hours_likely_low/high: the framework's band)."""
    return (f"likely {significant_text(option['hours_likely_low'])} to {significant_text(option['hours_likely_high'])} hours with {framework} "
            "(the range of its measured runs held out of the fit)")


def option_text(option: Mapping) -> str:
    """An option in words: "rent 8x H100-SXM from Lambda 8x H100 SXM (on-demand)" or "buy 8x H100-SXM"."""
    if option["acquire"] == "buy":
        return f"buy {option['n_gpus']}x {option['gpu']}"
    spot = ", interruptible: the provider can stop it" if option.get("interruptible") else ""
    return f"rent {option['n_gpus']}x {option['gpu']} from {option['offer']} ({option['price_type']}{spot})"


def verdict_text(code: float) -> str:
    """The words for a ``verdict_code`` (1-4)."""
    return VERDICTS[int(code)]


def payback_text(values: Mapping, inputs: Mapping) -> str:
    """" (payback after 29.6 of the 36 months, discounted at 10 %)." for a verdict: the payback against the period owned,
    and the discount rate it is counted at (``payback_months``); "." when buying never pays back."""
    months, period = float(values["payback_months"]), float(inputs["months"])
    if months <= 0:
        return "."
    rate = float(inputs["discount_rate_pct"])
    discounted = f", discounted at {rate:g} % a year" if rate > 0 else ", not discounted"
    when = f"{months:.1f} of the {period:g} months" if months <= period else f"{months:.1f} months, beyond the {period:g} owned"
    return f" (payback after {when}{discounted})."


NETWORK_OUTPUTS = ("job_machines", "offer_max_gpus", "inter_node_gb_per_s", "option_offer_sells")


def cluster_network(job: Mapping, planned: bool = False) -> str:
    """Which network joins the machines of a job that spans more than one ("" for a job in one machine), in words.

    Owned GPUs: the owned cluster's own_fabric_gbps_per_gpu.  Renting with no offer named ("auto"): the cheapest
    on-demand offer that sells that many GPUs as one job (core.catalog.auto_offer_row) and its fabric; when none does,
    the job is timed on an owned cluster's network and is not sold (option_offer_sells).  A named offer that cannot
    sell the size raises InputError naming the largest job it sells (``check_offer_sells``).  ``planned``: the job is a
    planner's option, its offer the one the planner chose."""
    from .engine import resolve_inputs
    check_offer_sells(job)
    r = evaluate(job, outputs=NETWORK_OUTPUTS)
    if not r["job_machines"] > 1:
        return ""
    used = resolve_inputs(job)
    gbit = float(r["inter_node_gb_per_s"]) * 8
    n, gpu = int(used["n_gpus"]), used["gpu"]
    if used["buy"]:
        return (f"The {r['job_machines']:,.0f} machines are joined by an owned cluster's network: {gbit:,.0f} Gbit/s per GPU "
                "(own_fabric_gbps_per_gpu).")
    if r["option_offer_sells"]:
        auto = str(job.get("offer", catalog.AUTO_OFFER)).strip().lower() == catalog.AUTO_OFFER
        why = (" (the offer the planner rents this setup through)" if planned else
               f" (the cheapest on-demand offer that sells {n} GPUs as one job)" if auto else " (the offer named)")
        return (f"The {r['job_machines']:,.0f} machines are joined by {used['offer']}'s network: {gbit:,.0f} Gbit/s per GPU"
                f"{why}.")
    return (f"No on-demand offer sells {n}x {gpu} as one job (the cheapest, {used['offer']}, sells at most "
            f"{r['offer_max_gpus']:,.0f}): the hours are those of an owned cluster's network, {gbit:,.0f} Gbit/s per GPU "
            "(own_fabric_gbps_per_gpu), and no rental sells it.")


def check_offer_sells(job: Mapping) -> None:
    """A named offer (not "auto") that cannot sell the job's GPU count as one job is refused: InputError naming the
    largest job it sells, as the planner rejects the option ("larger than the offer sells")."""
    offer = job.get("offer", catalog.AUTO_OFFER)
    if not isinstance(offer, str) or offer.strip().lower() == catalog.AUTO_OFFER or job.get("buy"):
        return
    r = evaluate(job, outputs=("option_offer_sells", "offer_max_gpus"))
    if np.ndim(r["option_offer_sells"]) == 0 and not r["option_offer_sells"]:
        raise InputError("offer", offer, f"sells at most {r['offer_max_gpus']:,.0f} GPUs in one job, fewer than n_gpus "
                                         f"({int(np.asarray(job.get('n_gpus', 0)))}); choose fewer GPUs, another offer "
                                         "(gpu-tco offers) or offer auto")
