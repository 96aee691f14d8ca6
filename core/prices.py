"""Missing prices: which quantities rest on a price the catalogs do not have, and the words for it.

A GPU without a purchase price, or without a rental offer, has no cost of owning or renting: every
door shows "no price" and names the input that gives one, never $0.  The quantities that need each
price are found from the formulas themselves (everything computed from ``own_purchase_usd_per_gpu``
or from ``rent_usd_per_gpu_hour_list``), so a new formula is covered without a list to keep.
"""
from __future__ import annotations

from typing import Iterable, Mapping

from .codegen import depending_on
from .errors import InputError
from .formulas import QUANTITIES

NEEDS_PURCHASE_PRICE = frozenset(depending_on(("own_purchase_usd_per_gpu",))) | {"own_purchase_usd_per_gpu"}
NEEDS_RENTAL_PRICE = frozenset(depending_on(("rent_usd_per_gpu_hour_list",))) | {"rent_usd_per_gpu_hour_list"}
# a planning quantity reads one price or the other, by the option's buy flag
_BY_BUY_FLAG = frozenset(n for n, q in QUANTITIES.items() if q.group == "planning")
PRICE_FLAGS = ("own_purchase_usd_per_gpu", "rent_usd_per_gpu_hour_list")
NO_PRICE = "no price"
NO_OFFER = "no offer"  # a rental column where no offer rents the setup (never $0)


def purchase_text(gpu: str) -> str:
    return (f"{NO_PRICE}: the GPU catalog has no purchase price for {gpu}; give purchase_usd_per_gpu "
            "(USD per GPU; --purchase-usd-per-gpu on the command line) or add the price to your GPU catalog")


def rental_text(gpu: str) -> str:
    return (f"{NO_PRICE}: no rental offer with a price for {gpu}; name an offer that rents it or give "
            "usd_per_gpu_hour_rented (USD per GPU-hour; --usd-per-gpu-hour-rented on the command line)")


def gaps(values: Mapping, quantities: Iterable[str]) -> dict[str, str]:
    """For each of ``quantities`` that rests on a missing price, the message saying which and what to give.

    ``values``: the evaluation's results and resolved inputs together (``own_purchase_usd_per_gpu``,
    ``rent_usd_per_gpu_hour_list``, ``gpu`` and ``buy`` at least)."""
    no_purchase = not float(values["own_purchase_usd_per_gpu"]) > 0
    no_rental = not float(values["rent_usd_per_gpu_hour_list"]) > 0
    buy = bool(values.get("buy", 0))
    out = {}
    for name in quantities:
        by_flag = name in _BY_BUY_FLAG
        if no_purchase and name in NEEDS_PURCHASE_PRICE and (buy or not by_flag):
            out[name] = purchase_text(values["gpu"])
        elif no_rental and name in NEEDS_RENTAL_PRICE and (not buy or not by_flag):
            out[name] = rental_text(values["gpu"])
    return out


def require(values: Mapping, quantities: Iterable[str]) -> None:
    """Raise an ``InputError`` naming the price to give when any of ``quantities`` rests on a missing one."""
    missing = gaps(values, quantities)
    if missing:
        message = next(iter(missing.values()))
        field = "purchase_usd_per_gpu" if "purchase" in message else "usd_per_gpu_hour_rented"
        raise InputError(field, None, message)
