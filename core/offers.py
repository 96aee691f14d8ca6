"""Linking the offer input to the GPU input: "auto" picks the GPU's reference offer; an
explicit offer sets the GPU when none was given and must rent the same GPU when one was."""
from __future__ import annotations

import numpy as np

from . import catalog
from .errors import InputError


def mismatch(offer_row: int, gpu_row: int, row=None) -> InputError:
    tabs = catalog.tables()
    offer_gpu = tabs["offers"].col["gpu"][offer_row]
    gpu = tabs["gpus"].names[gpu_row]
    rows = np.flatnonzero(catalog.offer_gpu_rows() == gpu_row)
    listed = ", ".join(tabs["offers"].names[i] for i in rows[:8]) or "none in the catalog"
    return InputError("offer", tabs["offers"].names[offer_row],
                      f"rents {offer_gpu}, but gpu is {gpu}; offers for {gpu}: {listed} (or offer auto)", row)


def link(values: dict, gpu_given: bool) -> None:
    """Scalar inputs: resolve offer "auto", or check / set the GPU from an explicit offer."""
    off, gpu_row = values["offer__row"], values["gpu__row"]
    gpu_of_offer, reference = catalog.offer_map_lists()
    tabs = catalog.tables()
    if off < 0:
        off = reference[gpu_row]
        n = values.get("n_gpus", 1)
        if gpu_row >= 0 and n > 1:
            off = catalog.auto_offer_row(gpu_row, n, off)
    elif gpu_of_offer[off] >= 0 and gpu_of_offer[off] != gpu_row:
        if gpu_given:
            raise mismatch(off, gpu_row)
        gpu_row = gpu_of_offer[off]
        values["gpu__row"], values["gpu"] = gpu_row, tabs["gpus"].col["name"][gpu_row]
    values["offer__row"], values["offer"] = off, tabs["offers"].col["name"][off]


_ROW_BY_ROW = 4096  # up to this many rows of several GPUs, link_vector looks each up; more, it works per GPU on arrays


def link_vector(values: dict, shape, gpu_given: bool) -> None:
    """The same for arrays of rows; the first mismatching row raises, naming its row.  Rows that
    are one value for the whole sweep stay scalars (the generated code then reads one catalog row)."""
    if np.ndim(values["offer__row"]) == 0 and np.ndim(values["gpu__row"]) == 0 \
            and (np.ndim(values.get("n_gpus", 1)) == 0 or int(values["offer__row"]) >= 0):
        n = values.get("n_gpus", 1)  # read only for offer "auto", which takes this path with one n_gpus alone
        one = {"offer__row": int(values["offer__row"]), "gpu__row": int(values["gpu__row"]),
               "offer": values.get("offer"), "gpu": values.get("gpu"), "n_gpus": float(n) if np.ndim(n) == 0 else 1.0}
        link(one, gpu_given)
        one.pop("n_gpus")
        values.update(one)
        return
    if np.ndim(values["offer__row"]) == 0 and np.ndim(values["gpu__row"]) == 0 and int(values["offer__row"]) < 0:
        _link_counts(values, shape)
        return
    off = np.broadcast_to(np.asarray(values["offer__row"]), shape).copy()
    gpu_row = np.broadcast_to(np.asarray(values["gpu__row"]), shape).copy()
    gpu_of_offer = catalog.offer_gpu_rows()
    auto = off < 0
    off[auto] = catalog.reference_offer_rows()[gpu_row[auto]]
    # a job of several GPUs: the cheapest offer that sells that many as one job (catalog.auto_offer_row)
    n = np.broadcast_to(np.asarray(values.get("n_gpus", 1)), shape)
    several = auto & (n > 1) & (gpu_row >= 0)
    count = int(np.count_nonzero(several))
    if 0 < count <= _ROW_BY_ROW:  # a planner's few hundred rows: one call per distinct (GPU, count, reference offer)
        memo: dict = {}
        off[several] = [memo[key] if key in memo else memo.setdefault(key, catalog.auto_offer_row(*key))
                        for key in zip(gpu_row[several].tolist(), n[several].astype(float).tolist(), off[several].tolist())]
    elif count:
        # catalog.auto_offer_row vectorised: per GPU, its offers from the dearest to the cheapest each take the rows
        # they sell, so the cheapest that sells a row's size holds it last; a row no offer sells keeps the reference
        # offer.  (Row by row, a million rows took most of a sweep's time.)
        sized = catalog.sized_reference_offers()
        for g in np.flatnonzero(np.bincount(gpu_row[several])):
            rows = several & (gpu_row == g)
            picked, size = off[rows], n[rows]
            for most, i in reversed(sized.get(int(g), ())):
                picked[most >= size] = i
            off[rows] = picked
    explicit_gpu = np.where(auto, -1, gpu_of_offer[off])
    bad = (explicit_gpu >= 0) & (explicit_gpu != gpu_row)
    if bad.any():
        if gpu_given:
            j = int(np.flatnonzero(bad.ravel())[0])
            raise mismatch(int(off.flat[j]), int(gpu_row.flat[j]), row=j)
        gpu_row[bad] = explicit_gpu[bad]
    # names are not computed here: the formulas read the catalog rows, never the names
    values["offer__row"], values["gpu__row"] = off, gpu_row


def _link_counts(values: dict, shape) -> None:
    """``link_vector`` for offer "auto" and one GPU over an array of GPU counts: the offer "auto" picks is a step
    function of the count (the cheapest offer that sells that many, ``catalog.auto_offer_row``), so each row finds its
    step among the few sizes the GPU's offers sell instead of every offer being tried on every row."""
    gpu = int(values["gpu__row"])
    reference = int(catalog.reference_offer_rows()[gpu])
    n = np.broadcast_to(np.asarray(values.get("n_gpus", 1)), shape)
    sized = catalog.sized_reference_offers().get(gpu, ()) if gpu >= 0 else ()
    bounds = sorted({most for most, _ in sized})  # a count up to bounds[k] (above bounds[k - 1]) picks picks[k]
    picks = [next((i for most, i in sized if most >= bound), reference) for bound in bounds] + [reference]
    if n.size:  # the step is monotonic in the count: the lowest and highest counts bound the offers the rows pick
        lowest, highest = float(n.min()), float(n.max())
        steps = picks[sum(lowest > b for b in bounds):sum(highest > b for b in bounds) + 1] if highest > 1 else []
        offers_picked = set(steps) | ({reference} if not lowest > 1 else set())
        if len(offers_picked) == 1:  # one offer for every row, found without a pass over the rows per step
            values["offer__row"] = int(offers_picked.pop())
            return
    step = np.zeros(shape, dtype=np.intp)
    for bound in bounds:
        step += n > bound
    off = np.asarray(picks, dtype=np.broadcast_to(np.asarray(values["offer__row"]), ()).dtype)[step]
    off[~(n > 1)] = reference  # one GPU (or none): the reference offer
    # (every offer picked sells this GPU, so its row stays one value; when every row picks the same offer, the offer's
    # row is one value for the whole sweep too, and what depends on it alone is computed once and not written per row)
    values["offer__row"] = int(off.flat[0]) if off.size and off.min() == off.max() else off
