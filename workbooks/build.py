"""Generate the formula-linked gpu-tco workbook (.xlsx) from core's single definitions.

Every input is a named cell on the Inputs sheet, every catalog column a named
range (``gpus_memory_gib``), every quantity a named cell on the Calc sheet whose
formula is ``core.QUANTITIES[name].expr.xl()``: the same expression tree the
Python value comes from.  Formula cells also carry the value core computed for
the generated inputs, so viewers that do not recalculate (Protected View,
preview panes, phones) show numbers; Excel recalculates on open.
"""
from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Mapping

from openpyxl import Workbook
from openpyxl.chart import BarChart, LineChart, Reference, Series
from openpyxl.chart.data_source import AxDataSource, NumData, NumVal, StrData, StrRef, StrVal
from openpyxl.formatting.rule import FormulaRule
from openpyxl.styles import Font
from openpyxl.utils import get_column_letter
from openpyxl.worksheet.pagebreak import Break

from gpu_tco import core
from gpu_tco.core import (
    AUTO_BASIS,
    AUTO_QUANTITY,
    INPUTS_BY_NAME,
    NO_PRICE,
    PRICE_INPUTS,
    QUANTITIES,
    REJECTIONS,
    TIE_COLUMNS,
    TIE_DIGITS,
    VERDICTS,
    catalog,
    depending_on,
    headline,
    headline_xl,
    plan,
    same_option,
    tie_key,
)
from gpu_tco.core import plan_scope as scope

from .common import (
    CANDIDATE_COLS,
    CANDIDATE_FIRST_COL,
    COMPARE_HEAD_ROW,
    FLAG,
    GIB,
    GIB_TENTHS,
    GPUS,
    HOURS_A_DAY_OR_NEVER,
    HOURS_TENTHS,
    INPUTS_HEADER_ROW,
    LAYOUT_COLS,
    MONTHS_OR_NEVER,
    OPTION_LAYOUT_COLS,
    TENTHS,
    USD,
    USD_CENTS,
    USD_MILLS,
    WHOLE,
    Layout,
    Scenario,
    _calc_sheet,
    _catalog_sheets,
    _head,
    _input_format,
    _inputs_sheet,
    _note,
    _number_format,
    _plain,
    _scenario_ref,
    _start_ages,
    _widths,
    fit_heights,
    input_rows,
    resolved_offer_xl,
)
from .xlsx import (
    BAD_FILL,
    GOOD_FILL,
    NOTE_FONT,
    check_target,
    collector_paused,
    not_in_default_print,
    page_setup,
    save_atomically,
    shared_rows,
    top_aligned,
)


def default_options(inputs: Mapping | None = None, limit: int = 10) -> list[dict]:
    """Options for the Compare sheet: the scenario itself, then the planner's best option
    per GPU and way to get it (rent/buy), cheapest first, and the recommended GPU at one
    step fewer than it needs (so "does not fit" has a row to show)."""
    # a GPU, count or offer the scenario names is the planner's scope, as `gpu-tco plan --scenario` reads it
    job, where = scope(dict(inputs or {}))
    # a price on the Inputs sheet is the price of the GPU shown beside it (the GPU input, its default when not given)
    where.setdefault("price_gpu", core.DEFAULTS["gpu"])
    ranked = plan(job, **where)
    job_sharding = core.resolve_inputs({k: v for k, v in job.items() if k == "sharding"})["sharding"]
    seen, picks = set(), []
    acceptable = [o for o in ranked["options"] if o["ok"]]
    # the cheapest acceptable option is a row too: the sheet's tolerance is measured from it, as the planner's is
    cheapest = min(acceptable, key=lambda o: (o["cost_usd"], o["order"])) if acceptable else None
    for o in ranked["options"] + ([cheapest] if cheapest is not None else []):
        if o["ok"] and ((o["gpu"], o["acquire"]) not in seen or o is cheapest) and \
                not any(same_option(o, {**p, "acquire": "buy" if p["buy"] else "rent"}) for p in picks):
            seen.add((o["gpu"], o["acquire"]))
            picks.append({"gpu": o["gpu"], "n_gpus": o["n_gpus"], "offer": o["offer"] or catalog.AUTO_OFFER,
                          "buy": int(o["acquire"] == "buy"), **{n: int(o[n]) for n in LAYOUT_COLS},
                          "sharding": o["sharding"] or job_sharding})
        if len(picks) == limit and (cheapest is None or any(same_option(cheapest, {**p, "acquire": "buy" if p["buy"] else "rent"})
                                                              for p in picks)):
            break
    step = core.layout_unit(job)  # the smallest count the job's parallel layout allows
    need = 0
    if picks:  # the recommended GPU in its layout (the planner's choice when the job gives none)
        chosen = {**job, **{n: picks[0][n] for n in LAYOUT_COLS if picks[0][n] > 1}}
        if picks[0]["sharding"] != job_sharding:  # the planner's plain data parallel
            chosen["sharding"] = picks[0]["sharding"]
        unit = core.layout_unit(chosen)
        need = int(core.evaluate({**chosen, "gpu": picks[0]["gpu"], "n_gpus": unit}, outputs=("gpus_needed",))["gpus_needed"])
        need = need if need > unit else 0
        step = unit if need else step
    if need:  # the recommended GPU, one step below the smallest count that fits
        picks.append({**picks[0], "n_gpus": need - step})
    else:  # the largest whole GPU that runs the job's precision but cannot hold the job alone
        gpus = catalog.tables()["gpus"]
        names = [g for g, row in zip(gpus.names, gpus.rows) if not catalog.mig_profile(row)]
        r = core.evaluate({**job, "gpu": names, "n_gpus": step, "offer": catalog.AUTO_OFFER},
                          outputs=("gpu_memory_gib", "fits_train", "train_precision_supported"))
        small = [(r["gpu_memory_gib"][i], g) for i, g in enumerate(names)
                 if not r["fits_train"][i] and r["train_precision_supported"][i]]
        if small:
            job_layout = core.resolve_inputs({**job, "gpu": max(small)[1]})
            picks.append({"gpu": max(small)[1], "n_gpus": step, "offer": catalog.AUTO_OFFER, "buy": 0,
                          **{n: int(job_layout[n]) for n in LAYOUT_COLS}, "sharding": job_layout["sharding"]})
    return picks


# (header, quantity or special, number format or None for the quantity's unit, width).  Printed: "option" to
# "recommended", one page wide, the deciding columns first (the setup, rent or buy, hours, cost, cash needed); the
# GPU and its count (both in the option's name) and the ranking's helpers stay on screen, right of the printed part.
COMPARE_COLUMNS = [
    ("option", "label", None, 21), ("rent or buy", "acquire", None, 6), ("job hours", "option_hours", HOURS_TENTHS, 9),
    ("cost of this option", "option_cost_usd", USD, 11), ("cash needed", "option_outlay_usd", USD, 11),
    ("status", "status", None, 12), ("peak memory per GPU", "peak_train_gib_per_gpu", GIB_TENTHS, 9),
    ("GPU memory", "gpu_memory_gib", GIB, 8), ("offer", "offer_shown", None, 21), ("spot (may stop)", "spot", None, 7),
    ("rent: job cost", "rent_total_usd", USD, 11), ("own: job's share", "own_job_usd", USD, 11),
    ("own: capital", "own_capital_usd", USD, 11), ("own: TCO over the period", "own_tco_usd", USD, 11),
    ("USD per million tokens trained", "option_usd_per_mtok_train", USD_MILLS, 10), ("", "recommended", None, 13),
    # right of the printed columns (the print ends at "recommended"): Start states the recommended option's payback
    ("buying pays back after", "payback_months", MONTHS_OR_NEVER, 14),
    ("buying pays back from", "breakeven_hours_per_day", HOURS_A_DAY_OR_NEVER, 14),
    # the framework's likely range of the hours (frameworks catalog: the band of its measured runs held out of the fit)
    ("job hours, likely from", "option_hours_likely_low", HOURS_TENTHS, 11),
    ("job hours, likely to", "option_hours_likely_high", HOURS_TENTHS, 11),
    ("GPU", "gpu", None, 16), ("GPUs", "n_gpus", WHOLE, 7), ("ranked cost", "ranked", USD, 12),
    # the tolerance counts from the cheapest acceptable option whose likely peak fits the memory, where there is one
    ("ranked cost, likely peak fits", "ranked_fits", USD, 12),
    # the planner's rule, step by step: within cost_tolerance_pct of the cheapest (whose likely peak fits, where one
    # does), room to spare in memory (likely peak within the memory, then not tight),
    # renting, fewest machines, hours, GPUs, cost
    ("near: may run out of memory (4), tight (2), buying (1)", "tier_tight", WHOLE, 12), ("then machines", "tier_machines", WHOLE, 12), ("then hours", "tier_hours", TENTHS, 12),
    ("then GPUs", "tier_gpus", WHOLE, 12), ("then cost", "tier_cost", USD, 12),
]
TIERS = ("tier_tight", "tier_machines", "tier_hours", "tier_gpus", "tier_cost")
MEMORY_PARTS = ["weights_gib", "gradients_gib", "optimizer_gib", "activations_gib", "logits_gib", "overhead_train_gib"]


def build_workbook(inputs: Mapping | None = None, options: list[Mapping] | None = None,
                   gpus: list[str] | None = None) -> tuple[Workbook, dict]:
    """The workbook object and the {sheet!cell: cached value} map for its formula cells.

    ``options``: rows of the Compare sheet, each {gpu, n_gpus, offer ("auto" or a name), buy};
    default ``default_options(inputs)``.  The first row is always the scenario on Inputs.
    A serving scenario (task "serve") gets the serving workbook (``workbooks.serving_book``; ``gpus``: the GPU
    types its planner considers, default the whole catalog).
    """
    with collector_paused():  # (core.collector: an eighth of the time less)
        if inputs and "task" in inputs and core.check_input("task", inputs["task"]) == "serve":
            from .serving_book import build_serving_workbook
            return build_serving_workbook(inputs, gpus)
        return _training_workbook(inputs, options)


def _training_workbook(inputs: Mapping | None, options: list[Mapping] | None) -> tuple[Workbook, dict]:
    # the scenario runs the sharding the planner chooses for its GPU (plain data parallel where one GPU holds the model)
    job = Scenario.of(core.with_planned_sharding(inputs), options if options is not None else default_options(inputs))
    wb = Workbook()
    lay = Layout()
    tabs = catalog.tables()
    start = wb.active
    start.title = "Start"
    sheets = {title: wb.create_sheet(title) for title in ("Inputs", "Compare", "Break-even", "Options", "Calc")}
    _inputs_sheet(wb, sheets["Inputs"], job, lay)
    _calc_sheet(wb, sheets["Calc"], job, lay)
    _options_sheet(sheets["Options"], job, lay)
    _compare_sheet(sheets["Compare"], sheets["Options"], lay)
    _breakeven_sheet(sheets["Break-even"], job, lay)
    # a model given as a config.json, a parameter count or fields is a row of the Models sheet too, so the
    # formulas find it by name as they find a catalog model
    adhoc = job.values.get("model__adhoc")
    _catalog_sheets(wb, tabs, {"models": [adhoc]} if adhoc is not None and adhoc["name"] not in tabs["models"].names else {},
                    offer=str(job.values.get("offer", "")))
    _start_sheet(start, tabs, job, lay)
    wb.calculation.fullCalcOnLoad = True
    wb.properties.creator = "gpu-tco"
    wb.properties.lastModifiedBy = "gpu-tco"
    return wb, lay.cached


def _options_sheet(ws, job: Scenario, lay: Layout) -> None:
    """Options: the quantities that depend on the option, recomputed per option column (option k in column
    2 + k), plus the memory parts the chart stacks; the ones that do not change are the same formula as on Calc."""
    options = job.options
    # of those, what a training answer reads (core.ancestors with task "train"): the serving planner's internals that
    # only a serving job reads (a third of the rows) stay single cells on Calc; the serving workbook has its own
    read_by_training = set(core.ancestors([n for n, q in QUANTITIES.items() if q.group != "serving"], "train"))
    per_option = [n for n in depending_on(CANDIDATE_COLS) if n in read_by_training]
    per_option += [p for p in MEMORY_PARTS if p not in per_option]
    # a purchase or rental price on Inputs is the price of the scenario's GPU: an option of another GPU is priced
    # from the catalogs (the planner's rule, core.planner.plan's price_gpu)
    prices = {name: [float(job.values[name]) if core.resolve_inputs({"gpu": o["gpu"]})["gpu"] == job.values["gpu"] else 0.0
                     for o in options] for name in PRICE_INPUTS}
    computed = core.evaluate({**job.inputs, **{c: [o[c] for o in options] for c in CANDIDATE_COLS}, **prices},
                             outputs=per_option) if options else {}
    _head(ws, 1, ["quantity", "unit"] + [f"option {k}" for k in range(1, len(options) + 2)])
    ws.freeze_panes = "C2"
    rows = {"label": 2, "gpu": 3, "n_gpus": 4, "offer": 5, "buy": 6, **{name: 7 + i for i, name in enumerate(PRICE_INPUTS)}}
    rows.update({name: 7 + len(PRICE_INPUTS) + i for i, name in enumerate(OPTION_LAYOUT_COLS)})
    rows.update({name: 7 + len(PRICE_INPUTS) + len(OPTION_LAYOUT_COLS) + i for i, name in enumerate(per_option)})
    lay.option_rows = rows
    for name, r in rows.items():
        ws.cell(row=r, column=1, value=name)
        ws.cell(row=r, column=2, value=QUANTITIES[name].unit if name in QUANTITIES else
                INPUTS_BY_NAME[name].unit if name in INPUTS_BY_NAME else "")
    for k in range(1, len(options) + 2):
        if k == 1:
            vals = {**job.result, **{n: job.values[n] for n in (*CANDIDATE_COLS, *PRICE_INPUTS)}}
        else:
            j = k - 2
            vals = {n: computed[n][j] for n in per_option}
            vals.update({n: prices[n][j] for n in PRICE_INPUTS})
            chosen = core.resolve_inputs({**job.inputs, **options[j]})  # canonical names, offer "auto" resolved
            vals.update({n: chosen[n] for n in CANDIDATE_COLS})
        vals["label"] = f"{k}. {vals['gpu']} x{int(vals['n_gpus'])} {'buy' if vals['buy'] else 'rent'}"
        vals["cost_tolerance_pct"] = job.values["cost_tolerance_pct"]
        vals["buy_ranked"] = core.ranks_purchases(job.values)
        _option_column(ws, k, per_option, vals, lay)
        lay.option_values.append(vals)
    # each quantity's row is one formula shifted across the option columns (every reference in it is a cell of its own
    # column, a defined name or a constant): one shared formula per row, the largest part of the workbook's bytes
    shared_rows(ws.parent)[ws.title] = [(rows[n], 3, 2 + len(options) + 1) for n in (*PRICE_INPUTS, *per_option)]
    _widths(ws, {"A": 34, "B": 12, **{get_column_letter(2 + k): 20 for k in range(1, len(options) + 2)}})
    not_in_default_print(ws, 2 + len(options) + 1, title_rows="1:1")
    ws.protection.sheet = True


# an option's column in its formulas' templates (_option_templates), replaced by the column's letter
_COLUMN = "\x00"


@functools.lru_cache(maxsize=8)
def _option_templates(per_option: tuple[str, ...], rows: tuple[tuple[str, int], ...]) -> dict[str, str]:
    """Each per-option quantity's formula on Options with its column left open: every reference is a cell of the option's
    own column (``_COLUMN`` and the row), a defined name or a constant, so the formulas are rendered once per layout of
    the sheet and each column fills in its letter."""
    row_of = dict(rows)

    def ref(name: str) -> str:
        return f"{_COLUMN}{row_of[name]}" if name in row_of else name
    return {name: "=" + QUANTITIES[name].expr.xl(ref) for name in per_option}


def _option_column(ws, k: int, per_option: list[str], vals: Mapping, lay: Layout) -> None:
    """Option k's column: its candidate from Inputs, its prices, and each quantity's formula over them."""
    col = get_column_letter(2 + k)
    rows = lay.option_rows
    # the option's cells in the candidate block on Inputs
    cand_cell = {n: f"Inputs!${get_column_letter(CANDIDATE_FIRST_COL + 1 + j)}${INPUTS_HEADER_ROW + k}"
                 for j, n in enumerate(CANDIDATE_COLS)}
    formulas = {
        "label": f'="{k}. "&{col}3&" x"&{col}4&IF({col}6=1," buy"," rent")',
        "gpu": f"={cand_cell['gpu']}", "n_gpus": f"={cand_cell['n_gpus']}",
        "offer": "=" + resolved_offer_xl(f"{col}3", cand_cell["offer"], f"{col}4"), "buy": f"={cand_cell['buy']}",
        **{name: f"=IF({col}3=gpu,{name},0)" for name in PRICE_INPUTS},
        **{name: f"={cand_cell[name]}" for name in OPTION_LAYOUT_COLS},
    }
    templates = _option_templates(tuple(per_option), tuple(rows.items()))
    formulas.update({name: templates[name].replace(_COLUMN, col) for name in per_option})
    for name, formula in formulas.items():
        c = ws.cell(row=rows[name], column=2 + k, value=formula)
        lay.cached[f"Options!{c.coordinate}"] = _plain(vals[name])
        if name in QUANTITIES:
            c.number_format = _number_format(QUANTITIES[name].unit)
        elif name in ("n_gpus", "buy", *LAYOUT_COLS):
            c.number_format = GPUS if name in ("n_gpus", *LAYOUT_COLS) else FLAG
        elif name in PRICE_INPUTS:
            c.number_format = USD if name == "purchase_usd_per_gpu" else USD_CENTS


# a purchase in a one-off job: listed, not ranked (core.planner.ranks_purchases)
BUY_NOT_RANKED = "buying not ranked: a one-off job"


def _status(v: Mapping) -> str:
    """Why an option is not acceptable: the first failing check of core.planner.REJECTIONS, or a purchase in a one-off
    job (owned_busy_hours_per_day 0 and consider_buying 0: the planner ranks rentals only)."""
    if v["option_ok"]:
        return BUY_NOT_RANKED if v["buy"] and not v["buy_ranked"] else "ok"
    return next((word for flag, word in REJECTIONS if not v[flag]), "ok")


def _status_xl(cell) -> str:
    """The same rule as an Excel formula; ``cell(quantity)`` is that option's cell."""
    text = '"ok"'
    for flag, word in reversed(REJECTIONS):
        text = f'IF(NOT({cell(flag)}),"{word}",{text})'
    one_off = f'AND({cell("buy")}=1,owned_busy_hours_per_day<=0,consider_buying=0)'
    return f'=IF({cell("option_ok")},IF({one_off},"{BUY_NOT_RANKED}","ok"),{text})'


def _compare_sheet(ws, opt_ws, lay: Layout) -> None:
    """One row per option, every number read from that option's column on Options; the recommended row marked
    by the planner's rule in formulas; then the charts."""
    all_vals = lay.option_values
    head_row, first = COMPARE_HEAD_ROW, lay.compare_first
    last = lay.compare_last = first + len(all_vals) - 1
    ws["A1"] = "Compare options for this job"
    ws["A1"].font = Font(bold=True, size=14)
    compare_note = ("Each row is one way to run the job on the Inputs sheet (option 1 is the scenario itself; "
                    "change options 2+ on Inputs, columns I-M). Red: does not fit in GPU memory. Green: recommended "
                    "(among the options that fit, have a price, meet the deadline and budget, and are not interruptible "
                    "offers unless allow_interruptible is 1, the cheapest, or within the cost tolerance the one with more room "
                    "in memory; one whose likely peak is above the GPU's memory only where no other is acceptable: the same "
                    "rule as gpu-tco's planner).")
    letter = lay.compare_cols = {key: get_column_letter(j) for j, (_, key, _, _) in enumerate(COMPARE_COLUMNS, start=1)}
    _note(ws, "A2", compare_note, letter["recommended"], 32, NOTE_FONT)
    _head(ws, head_row, [h for h, *_ in COMPARE_COLUMNS])
    ranked = [v["option_cost_usd"] if _status(v) == "ok" else None for v in all_vals]
    lay.best, tier_values = _recommended_row(all_vals, ranked)
    for k, v in enumerate(all_vals, start=1):
        r = first + k - 1
        formulas = _compare_formulas(lay, k, v, ranked[k - 1], tier_values[k - 1])
        for j, (_, key, fmt, _) in enumerate(COMPARE_COLUMNS, start=1):
            formula, value = formulas.get(key) or (f"={lay.option_cell(k, key)}", v[key])
            c = ws.cell(row=r, column=j, value=formula)
            if value != "":
                lay.cached[f"Compare!{c.coordinate}"] = _plain(value)
            if fmt:
                c.number_format = fmt
            if key in ("acquire", "n_gpus", "spot"):
                c.alignment = top_aligned("center")
            elif isinstance(value, str) and value == NO_PRICE:
                c.alignment = top_aligned("right")
            else:  # names wrap within their column: the table stays one page wide
                c.alignment = top_aligned(wrap=key in ("label", "offer_shown", "status"))
        for key in ("status", "recommended", "ranked_fits", *TIERS):
            lay.cached.setdefault(f"Compare!{letter[key]}{r}", "")
    span = f"A{first}:{letter['ranked']}{last}"
    st, rc = letter["status"], letter["recommended"]
    ws.conditional_formatting.add(span, FormulaRule(formula=[f'${st}{first}="does not fit"'], fill=BAD_FILL, stopIfTrue=True))
    ws.conditional_formatting.add(span, FormulaRule(formula=[f'${rc}{first}="recommended"'], fill=GOOD_FILL,
                                                    font=Font(bold=True), stopIfTrue=True))
    ws.conditional_formatting.add(span, FormulaRule(formula=[f'${st}{first}<>"ok"'], font=Font(color="808080")))
    _widths(ws, {letter[key]: width for _, key, _, width in COMPARE_COLUMNS})
    for key in ("ranked", "ranked_fits", *TIERS):  # helpers for the recommendation
        ws.column_dimensions[letter[key]].hidden = True
    ws.freeze_panes = f"B{first}"
    fit_heights(ws, lay.cached)
    _compare_charts(ws, opt_ws, lay)


def _compare_formulas(lay: Layout, k: int, v: Mapping, ranked, tiers: tuple) -> dict[str, tuple[str, object]]:
    """Option k's row on Compare where it is more than its Options cell: {key: (formula, cached value)}."""
    def opt_cell(name: str) -> str:  # that option's cell on the Options sheet
        return lay.option_cell(k, name)
    letter, r = lay.compare_cols, lay.compare_first + k - 1
    rk, rk_range, fits_range = letter["ranked"], lay.compare_range("ranked"), lay.compare_range("ranked_fits")
    # the cheapest acceptable option whose likely peak fits the memory, or the cheapest acceptable one where none does
    # (MIN of a column of blanks is 0; a cost is never below 0, so a 0 there also leaves MIN of every cost, 0 as well)
    anchor = f"IF(MIN({fits_range})>0,MIN({fits_range}),MIN({rk_range}))"
    col_range = {key: lay.compare_range(key) for key in TIERS}
    return {
        "label": (f"={opt_cell('label')}", v["label"]),
        "gpu": (f"={opt_cell('gpu')}", v["gpu"]),
        "n_gpus": (f"={opt_cell('n_gpus')}", v["n_gpus"]),
        "acquire": (f'=IF({opt_cell("buy")}=1,"buy","rent")', "buy" if v["buy"] else "rent"),
        "offer_shown": (f'=IF({opt_cell("buy")}=1,"-",{opt_cell("offer")})', "-" if v["buy"] else v["offer"]),
        # an interruptible (spot) offer can be stopped by the provider at any time
        "spot": (f'=IF({opt_cell("buy")}=1,"no",IF(INDEX(offers_interruptible,MATCH({opt_cell("offer")},offers_name,0))=1,"yes","no"))',
                 "yes" if _interruptible(v) else "no"),
        "status": (_status_xl(opt_cell), _status(v)),
        # no rental price (no offer for this GPU): say so rather than show $0
        "rent_total_usd": (f'=IF({opt_cell("rent_available")},{opt_cell("rent_total_usd")},"no price")',
                           v["rent_total_usd"] if v["rent_available"] else "no price"),
        "ranked": (f'=IF({letter["status"]}{r}="ok",{opt_cell("option_cost_usd")},"")', "" if ranked is None else ranked),
        "ranked_fits": (f'=IF(AND(ISNUMBER({rk}{r}),NOT({opt_cell("train_memory_may_exceed")})),{rk}{r},"")',
                        "" if ranked is None or v["train_memory_may_exceed"] else ranked),
        # no purchase price in the catalog: owning has no cost to show, and the option none (not $0)
        **{key: (f'=IF({opt_cell("own_purchase_usd_per_gpu")}>0,{opt_cell(key)},"{NO_PRICE}")',
                 v[key] if v["own_purchase_usd_per_gpu"] > 0 else NO_PRICE)
           for key in ("own_job_usd", "own_capital_usd", "own_tco_usd", "payback_months", "breakeven_hours_per_day")},
        **{key: (f'=IF({opt_cell("option_priced")},{opt_cell(key)},"{NO_PRICE}")', v[key] if v["option_priced"] else NO_PRICE)
           for key in ("option_cost_usd", "option_outlay_usd", "option_usd_per_mtok_train")},
        # core.planner's rule (planner.rank): acceptable options within cost_tolerance_pct of the cheapest; among
        # them room in memory, then renting, then the fewest machines, then hours, then GPUs, then cost; the first listed
        # on a tie (one row only)
        # room in memory first (tight: 2), then renting (buying: 1): no capital at stake for a saving within the tolerance
        "tier_tight": (f'=IF(ISNUMBER({rk}{r}),IF({rk}{r}<=({anchor})*(1+cost_tolerance_pct/100),'
                       f'IF({opt_cell("train_memory_may_exceed")},4,0)+IF({opt_cell("train_memory_tight")},2,0)'
                       f'+IF({opt_cell("buy")}=1,1,0),""),"")', tiers[0]),
        "tier_machines": (f'=IF(ISNUMBER({letter["tier_tight"]}{r}),IF({letter["tier_tight"]}{r}=MIN({col_range["tier_tight"]}),'
                          f'{opt_cell("job_machines")},""),"")', tiers[1]),
        "tier_hours": (f'=IF(ISNUMBER({letter["tier_machines"]}{r}),IF({letter["tier_machines"]}{r}=MIN({col_range["tier_machines"]}),'
                       f'ROUND({opt_cell("option_hours")},{TIE_DIGITS}),""),"")', tiers[2]),
        "tier_gpus": (f'=IF(ISNUMBER({letter["tier_hours"]}{r}),IF({letter["tier_hours"]}{r}=MIN({col_range["tier_hours"]}),'
                      f'{opt_cell("n_gpus")},""),"")', tiers[3]),
        "tier_cost": (f'=IF(ISNUMBER({letter["tier_gpus"]}{r}),IF({letter["tier_gpus"]}{r}=MIN({col_range["tier_gpus"]}),'
                      f'ROUND({rk}{r},{TIE_DIGITS}),""),"")', tiers[4]),
        "recommended": (f'=IF(ISNUMBER({letter["tier_cost"]}{r}),IF({k}=MATCH(MIN({col_range["tier_cost"]}),'
                        f'{col_range["tier_cost"]},0),"recommended",""),"")',
                        "recommended" if k - 1 == lay.best else ""),
    }


def _compare_charts(ws, opt_ws, lay: Layout) -> None:
    """Cost by option and memory per GPU by component below the table, each printed whole on a page of its own."""
    all_vals, n = lay.option_values, len(lay.option_values)
    first, last, letter = lay.compare_first, lay.compare_last, lay.compare_cols
    labels = [v["label"] for v in all_vals]
    cost = BarChart()
    cost.type, cost.grouping = "bar", "clustered"
    cost.title = "Cost of the job by option"
    cost.y_axis.title, cost.x_axis.title = "USD", "option"
    cats = Reference(ws, min_col=1, min_row=first, max_row=last)
    j = [k for _, k, _, _ in COMPARE_COLUMNS].index("option_cost_usd") + 1
    cost.series.append(Series(Reference(ws, min_col=j, min_row=first, max_row=last),
                              title="cost of the job (renting: the bill; buying: the job's share of owning)"))
    _cache_chart(cost, cats, labels, [[v["option_cost_usd"] for v in all_vals]])
    memory = BarChart()
    memory.type, memory.grouping, memory.overlap = "bar", "stacked", 100
    memory.title = "Peak memory per GPU by component"
    memory.y_axis.title, memory.x_axis.title = "GiB per GPU", "option"
    opt_cats = Reference(opt_ws, min_col=3, max_col=2 + n, min_row=lay.option_rows["label"])
    for part in MEMORY_PARTS:
        memory.series.append(Series(Reference(opt_ws, min_col=3, max_col=2 + n, min_row=lay.option_rows[part]),
                                    title=part.replace("_train", "").replace("_gib", "")))
    _cache_chart(memory, opt_cats, labels, [[v[p] for v in all_vals] for p in MEMORY_PARTS])
    for chart in (cost, memory):
        chart.height, chart.width = 9 + 0.45 * n, 17
        chart.x_axis.scaling.orientation = "maxMin"  # option 1 on top, like the table
        chart.legend.position = "b"
        chart.x_axis.delete = chart.y_axis.delete = False
    cost.y_axis.number_format, memory.y_axis.number_format = USD, WHOLE
    # printed: the table on the first page, then each chart whole on a page of its own below it
    chart_rows = int((9 + 0.45 * n) / 0.5) + 2  # ~0.5 cm per row
    cost_row, memory_row = last + 2, last + 3 + chart_rows
    ws.add_chart(cost, f"A{cost_row}")
    ws.add_chart(memory, f"A{memory_row}")
    ws.row_breaks.append(Break(id=cost_row - 1))
    ws.row_breaks.append(Break(id=memory_row - 1))
    # one page wide; no repeated header rows: the table fits its first page, and the chart pages hold only the chart
    page_setup(ws, f"A1:{letter['recommended']}{memory_row + chart_rows}", fit_width=True)


def _recommended_row(all_vals: list[dict], ranked: list) -> tuple[int | None, list[tuple]]:
    """The row the Compare sheet's formulas mark, computed as they compute it (cached values): the planner's
    tie-breaks (core.planner.tie_key) over the rows within the cost tolerance, one place at a time, with each row's
    helper values ("" where an earlier place left it out)."""
    costs = [x for x in ranked if x is not None]
    if not costs:
        return None, [("", "", "", "", "")] * len(all_vals)
    # the tolerance counts from the cheapest whose likely peak fits, where one does (core.planner.rank)
    fitting = [x for v, x in zip(all_vals, ranked) if x is not None and not v["train_memory_may_exceed"]]
    limit = min(fitting or costs) * (1 + all_vals[0]["cost_tolerance_pct"] / 100)
    keys = [tie_key(v["train_memory_tight"], v["buy"], *(float(v[c]) for c in TIE_COLUMNS[:3]), x, v["train_memory_may_exceed"])
            if x is not None and x <= limit else None for v, x in zip(all_vals, ranked)]
    alive = [k is not None for k in keys]
    columns = []
    for place in range(len(TIE_COLUMNS) + 1):
        column = [k[place] if a else "" for k, a in zip(keys, alive)]
        low = min(c for c in column if c != "")
        alive = [a and k[place] == low for k, a in zip(keys, alive)]
        columns.append(column)
    return alive.index(True), list(zip(*columns))


def _interruptible(v: Mapping) -> bool:
    """Whether an option rents an interruptible (spot) offer."""
    if v["buy"]:
        return False
    offers = catalog.tables()["offers"]
    return bool(offers.rows[offers.names.index(v["offer"])]["interruptible"])


def _cache_chart(chart, cats: Reference, labels: list[str], series_values: list[list[float]]) -> None:
    """Charts carry their data too (openpyxl writes none), so viewers that do not
    recalculate draw them."""
    ref = str(cats)
    for series, vals in zip(chart.series, series_values):
        series.val.numRef.numCache = NumData(pt=[NumVal(idx=i, v=float(x)) for i, x in enumerate(vals)],
                                             ptCount=len(vals), formatCode="General")
        series.cat = AxDataSource(strRef=StrRef(f=ref, strCache=StrData(
            pt=[StrVal(idx=i, v=str(x)) for i, x in enumerate(labels)], ptCount=len(labels))))


def _breakeven_sheet(ws, job: Scenario, lay: Layout) -> None:
    """Month-by-month cumulative cash of owning versus renting the same working hours:
    own_cumulative_usd and rent_cumulative_usd with at_month set per row.  The note says which option that is
    (the scenario on Inputs) and whether it is the recommended one."""
    from gpu_tco.core import breakeven_series
    series = breakeven_series(job.inputs)
    months = len(series["month"]) - 1
    ws["A1"] = "Break-even: cumulative cash spent owning versus renting"
    ws["A1"].font = Font(bold=True, size=14)
    _breakeven_note(ws, job, lay, months)
    ws["A3"], ws["B3"] = "buying pays back after", "=payback_months"
    ws["B3"].number_format = _number_format("months")
    lay.cached["Break-even!B3"] = _plain(job.result["payback_months"])
    ws["A4"] = "verdict"
    ws["B4"] = "=CHOOSE(verdict_code," + ",".join(f'"{VERDICTS[i]}"' for i in sorted(VERDICTS)) + ")"
    lay.cached["Break-even!B4"] = VERDICTS[int(job.result["verdict_code"])]
    head, first = 6, 7
    _head(ws, head, ["month", "own: cumulative cash", "rent: cumulative cash"])
    cols = {"at_month": "A", "own_cumulative_usd": "B", "rent_cumulative_usd": "C"}
    chain = depending_on(["at_month"])
    assert set(chain) <= set(cols), chain  # a new at_month-dependent quantity needs a column here
    for m in range(months + 1):
        r = first + m
        ws.cell(row=r, column=1, value=m)

        def ref(name: str, r=r) -> str:
            return f"{cols[name]}{r}" if name in cols else _scenario_ref(name)
        for name in chain:
            c = ws[f"{cols[name]}{r}"]
            c.value = "=" + QUANTITIES[name].expr.xl(ref)
            c.number_format = _number_format("USD")
            lay.cached[f"Break-even!{c.coordinate}"] = float(series[name][m])
    last = first + months
    chart = LineChart()
    chart.title, chart.y_axis.title, chart.x_axis.title = "Cumulative cash: own versus rent", "USD", "month"
    for col, title in (("B", "own"), ("C", "rent")):
        s = Series(Reference(ws, range_string=f"'Break-even'!${col}${first}:${col}${last}"), title=title)
        s.smooth = False
        chart.series.append(s)
    _cache_chart(chart, Reference(ws, range_string=f"'Break-even'!$A${first}:$A${last}"),
                 [str(m) for m in range(months + 1)], [series["own_cumulative_usd"], series["rent_cumulative_usd"]])
    chart.height, chart.width = 10, 14  # within the printed page beside the table
    chart.x_axis.delete = chart.y_axis.delete = False
    chart.y_axis.number_format = USD
    chart.legend.position = "b"
    ws.add_chart(chart, "E6")
    _widths(ws, {"A": 24, "B": 22, "C": 22, "D": 3})
    ws.freeze_panes = f"A{first}"
    fit_heights(ws, lay.cached)
    # one page: the table of months beside its chart (a few dozen rows; a longer period shrinks rather than splits)
    page_setup(ws, f"A1:L{max(last, 28)}", title_rows=f"{head}:{head}", fit_width=True)
    ws.page_setup.fitToHeight = 1
    ws.protection.sheet = True


def _breakeven_note(ws, job: Scenario, lay: Layout, months: int) -> None:
    """The sheet's note: which option it shows (the scenario on Inputs), and whether that one is recommended."""
    values, rec_range = job.values, lay.recommended_range
    tail = (f" Months 0 to {months} (the period when generated; regenerate for a longer one). Renting covers the same "
            "working hours (hours_per_day) at the rental price paid.")
    how = f'IF(buy=1,"bought","rented from "&{resolved_offer_xl("gpu", "offer", "n_gpus")})'
    formula = (f'="This sheet shows the scenario on Inputs ("&n_gpus&"x "&gpu&", "&{how}&"). "&'
               f'IF(COUNTIF({rec_range},"recommended")=0,"No option is recommended (see Compare).",'
               f'IF(MATCH("recommended",{rec_range},0)=1,"It is the recommended option.",'
               f'"The recommended option is "&{lay.pick("label")}&" (Compare): set gpu, n_gpus, offer and buy on Inputs to it to see '
               f'its break-even here."))&"{tail}"')
    shown = f"{int(values['n_gpus'])}x {values['gpu']}, " + ("bought" if values["buy"] else f"rented from {values['offer']}")
    if lay.best is None:
        which = "No option is recommended (see Compare)."
    elif lay.best == 0:
        which = "It is the recommended option."
    else:
        which = (f"The recommended option is {lay.best_label} (Compare): set gpu, n_gpus, offer and buy on Inputs to it to see "
                 "its break-even here.")
    _note(ws, "A2", formula, "K", 30, NOTE_FONT)
    lay.cached["Break-even!A2"] = f"This sheet shows the scenario on Inputs ({shown}). {which}{tail}"


NOTHING_ACCEPTABLE = "No option fits, has a price and meets the deadline and budget: see the status column on Compare."


def _answer_text(v: Mapping | None, values: Mapping) -> str:
    """The answer for the recommended option (the cached value of the Start sheet's formula): core's headline."""
    if v is None:
        return NOTHING_ACCEPTABLE
    offer = catalog.offers().row(v["offer"]) if not v["buy"] else {"price_type": "", "commitment_months": 0}
    fields = {"acquire": "buy" if v["buy"] else "rent", "n_gpus": v["n_gpus"], "gpu": v["gpu"], "offer": v["offer"],
              "price_type": offer["price_type"], "cost_usd": v["option_cost_usd"], "hours": v["option_hours"],
              "capital_usd": v["own_capital_usd"] if v["own_purchase_usd_per_gpu"] > 0 else float("nan"),
              "payback_months": v["payback_months"], "commitment_months": offer["commitment_months"],
              "breakeven_hours_per_day": v["breakeven_hours_per_day"],
              "own_hours_per_day": float(core.evaluate({k: values[k] for k in ("owned_busy_hours_per_day", "hours_per_day")},
                                                       outputs=("own_hours_per_day",))["own_hours_per_day"])}
    return headline(fields, values)


def _answer_xl(pick, rec_range: str) -> str:
    """The same answer as a formula over Compare's recommended row (``pick(key)`` reads that row's cell)."""
    offer_row = f'MATCH({pick("offer_shown")},offers_name,0)'
    fields = {"acquire": pick("acquire"), "n_gpus": pick("n_gpus"), "gpu": pick("gpu"), "offer": pick("offer_shown"),
              "price_type": f"INDEX(offers_price_type,{offer_row})", "cost_usd": pick("option_cost_usd"),
              "hours": pick("option_hours"), "capital_usd": pick("own_capital_usd"), "payback_months": pick("payback_months"),
              "commitment_months": f"INDEX(offers_commitment_months,{offer_row})",
              "breakeven_hours_per_day": pick("breakeven_hours_per_day"), "own_hours_per_day": "own_hours_per_day"}
    return f'=IF(COUNTIF({rec_range},"recommended")=0,"{NOTHING_ACCEPTABLE}",{headline_xl(fields.__getitem__)})'


def _spot_text(v: Mapping | None, values: Mapping) -> str:
    if v is None:
        return ""
    if _interruptible(v):
        return (f"This is an interruptible (spot) offer: the provider can stop it at any time; the cost includes "
                f"{values['spot_rework_pct']:g} % extra hours for re-work.")
    if not v["buy"]:
        return "It is an on-demand offer: it runs until you stop it."
    return (f"Buying: the cost is this job's share of owning the GPUs for {values['months']:g} months "
            f"at {values['hours_per_day']:g} hours a day.")


def _spot_xl(pick, rec_range: str) -> str:
    return (f'=IF(COUNTIF({rec_range},"recommended")=0,"",IF({pick("spot")}="yes",'
            f'"This is an interruptible (spot) offer: the provider can stop it at any time; the cost includes "'
            f'&spot_rework_pct&" % extra hours for re-work.",IF({pick("acquire")}="rent",'
            f'"It is an on-demand offer: it runs until you stop it.",'
            f'"Buying: the cost is this job\'s share of owning the GPUs for "&months&" months at "&hours_per_day&" hours a day.")))')


def _start_sheet(ws, tabs: Mapping, job: Scenario, lay: Layout) -> None:
    """An executive summary: the question, the answer in one sentence, what the offer is, the
    assumptions that move the answer most, the age of the prices; then the scenario's key numbers."""
    ws["A1"] = "gpu-tco: which GPUs, how many, rent or buy, how much"
    ws["A1"].font = Font(bold=True, size=16)
    _start_answer(ws, job, lay)
    r = _start_movers(ws, job, lay, 11)
    r = _start_ages(ws, tabs, r + 2, str(job.values.get("offer", "")))
    i = _start_scenario(ws, job, lay, r)
    _note(ws, f"A{i}", "Printing this workbook prints Start, Inputs, Compare and Break-even. Calc, Options and the catalog "
                       "sheets (GPUs, Models, Cloud, Tables) are left out: to print one, clear its print area (Excel: Page "
                       "Layout > Print Area > Clear Print Area; LibreOffice: Format > Print Ranges > Clear) and print that "
                       "sheet; it fits the page width.", "D", 48, NOTE_FONT)
    _widths(ws, {"A": 40, "B": 21, "C": 28, "D": 26})
    fit_heights(ws, lay.cached)
    page_setup(ws, f"A1:D{i}", fit_width=True)


def _start_answer(ws, job: Scenario, lay: Layout) -> None:
    """Rows 3-10: the question, the answer (the recommended option in core's headline), what its offer is, the rule
    that picked it, and for a scenario that does not fit the cheapest change that makes it fit."""
    values, rec_range, best = job.values, lay.recommended_range, lay.best_values
    ws["A3"] = "The question"
    ws["A3"].font = Font(bold=True, size=12)
    _note(ws, "A4", '="Fine-tune "&model&" ("&method&") on "&TEXT(tokens*epochs,"#,##0")&" tokens: which GPUs, how many, rent or buy?"',
          "D", 20)
    lay.cached["Start!A4"] = (f"Fine-tune {values['model']} ({values['method']}) on {values['tokens'] * values['epochs']:,.0f} "
                              "tokens: which GPUs, how many, rent or buy?")
    ws["A6"] = "The answer"
    ws["A6"].font = Font(bold=True, size=12)
    _note(ws, "A7", _answer_xl(lay.pick, rec_range), "D", 34, Font(bold=True, size=12))
    lay.cached["Start!A7"] = _answer_text(best, values)
    _note(ws, "A8", _spot_xl(lay.pick, rec_range), "D", 30)
    lay.cached["Start!A8"] = _spot_text(best, values)
    _note(ws, "A9", "The recommended option fits in GPU memory, has a price, is sold at that size, meets the deadline and "
                    "budget (Inputs) and is not an interruptible offer unless you allow those; among those within the cost "
                    "tolerance of the cheapest (Inputs: Cost tolerance for the practical choice; counted from the cheapest "
                    "whose likely peak fits the GPU's memory, so a setup that may run out of memory never wins on price), "
                    "room to spare in memory wins, then renting, then the fewest machines, then hours, then GPUs. Compare "
                    "shows the others and why.",
          "D", 30, NOTE_FONT)
    said = []
    if lay.best is None:  # nothing acceptable: core's answer, as the plan, the e-mail draft and the form give it
        said.append(f"When this file was generated, gpu-tco answered: {_core_answer(job.inputs).text}")
    elif best["train_memory_tight"] or best["train_memory_may_exceed"]:  # the memory risk, in core's words
        warning = next((s for s in _core_answer(job.inputs).sentences if s.startswith("Memory ")), "")
        if warning:
            said.append(f"When this file was generated, gpu-tco warned: {warning}")
    if not job.result["fits_train"]:  # the scenario itself does not fit: the cheapest change that makes it fit
        from gpu_tco.core import what_would_fit
        change = what_would_fit(job.inputs)
        if change is not None and not any(change.sentence() in words for words in said):  # said once
            said.append(f"Your scenario ({int(values['n_gpus'])}x {values['gpu']}, {values['method']}) does not fit in GPU "
                        f"memory; it {change.sentence()} (worked out when this file was generated).")
    if said:
        _note(ws, "A10", " ".join(said), "D", 30, NOTE_FONT)


def _core_answer(inputs: Mapping):
    """core's answer for the scenario (core.compose_recommendation over the plan the Compare sheet's options come from):
    where nothing is acceptable, what fails and, where the counts that fit are more than can be had, the most GPUs to be
    had and the change that makes the job fit on them; otherwise the recommendation with its memory risk, if any."""
    from gpu_tco.core import compose_recommendation
    job, where = scope(dict(inputs or {}))
    where.setdefault("price_gpu", core.DEFAULTS["gpu"])
    return compose_recommendation(plan(job, **where))


def _start_movers(ws, job: Scenario, lay: Layout, r: int) -> int:
    """From row r: the assumptions that move the recommended option's cost most; returns the row of the note below."""
    from gpu_tco.core import sensitivities
    best = lay.best_values
    ws.cell(row=r, column=1, value="The assumptions that move the answer most").font = Font(bold=True, size=12)
    _head(ws, r + 1, ["assumption", "value", "job cost if raised by 20 %", "change it on Inputs"], freeze=False)
    input_row = input_rows()
    movers = []
    if best is not None:
        option = {**job.inputs, "gpu": best["gpu"], "n_gpus": int(best["n_gpus"]), "offer": best["offer"], "buy": int(best["buy"])}
        movers = sensitivities(option)
    for k, m in enumerate(movers, start=r + 2):
        inp = INPUTS_BY_NAME[m["input"]]
        ws.cell(row=k, column=1, value=inp.label)
        given = f"Inputs!$B${input_row[m['input']]}"
        # the value the answer used: the input, or for 0 ("automatic") the value core used in its place
        c = ws.cell(row=k, column=2, value=f"=IF({given}>0,{given},{m['value']!r})" if m["input"] in AUTO_QUANTITY else f"={given}")
        c.number_format = _input_format(inp)
        lay.cached[f"Start!{c.coordinate}"] = float(m["value"])
        sign = "+" if m["cost_change_usd"] > 0 else "-"
        ws.cell(row=k, column=3, value=f"{sign}${abs(m['cost_change_usd']):,.2f} ({m['cost_change_pct']:+.0f} %)")
        where = f"row {input_row[m['input']]}"
        if m["input"] in AUTO_QUANTITY:
            where += " (0 = auto: " + AUTO_BASIS[m["input"]].format(gpu=best["gpu"], offer=best["offer"]) + ")"
        ws.cell(row=k, column=4, value=where).alignment = top_aligned(wrap=True)
        ws.row_dimensions[k].height = 30 if m["input"] in AUTO_QUANTITY else 15
    r = r + 3 + max(len(movers), 1)
    _note(ws, f"A{r}", "(each raised on its own by 20 % for the recommended option, when this file was generated)", "D", 16, NOTE_FONT)
    return r


# Start's figures, each read from Compare: (label, Compare column key)
START_FIGURES = (("rent or buy", "acquire"), ("offer", "offer_shown"), ("peak memory per GPU (device total, must fit)", "peak_train_gib_per_gpu"),
                 ("memory of one GPU", "gpu_memory_gib"), ("hours the job takes", "option_hours"),
                 ("hours, likely from (the framework's range)", "option_hours_likely_low"),
                 ("hours, likely to", "option_hours_likely_high"),
                 ("cost of this option", "option_cost_usd"), ("cash needed", "option_outlay_usd"),
                 ("rent: cost of the job", "rent_total_usd"), ("own: total cost over the period", "own_tco_usd"),
                 ("buying pays back after", "payback_months"), ("status", "status"))


def _network_xl() -> str:
    """The network joining the scenario's machines, as a formula: one machine, an owned cluster's, the offer's, or
    (no offer sells the size) an owned cluster's network the job is timed on (core.cluster_network in words)."""
    speed = 'TEXT(inter_node_gb_per_s*8,"#,##0")&" Gbit/s per GPU, "'
    offer = resolved_offer_xl("gpu", "offer", "n_gpus")
    owned = "\"no offer sells this size: timed on an owned cluster's network\""
    return (f'=IF(job_machines<=1,"one machine",{speed}&IF(buy=1,"an owned cluster",IF(option_offer_sells,'
            f'{offer}&"' + "'" + f's network",{owned})))')


def _network_text(values: Mapping, result: Mapping) -> str:
    """``_network_xl``'s value, for the cached cell."""
    if not result["job_machines"] > 1:
        return "one machine"
    speed = f"{result['inter_node_gb_per_s'] * 8:,.0f} Gbit/s per GPU, "
    if values["buy"]:
        return speed + "an owned cluster"
    if result["option_offer_sells"]:
        return speed + f"{values['offer']}'s network"
    return speed + "no offer sells this size: timed on an owned cluster's network"


def _start_scenario(ws, job: Scenario, lay: Layout, r: int) -> int:
    """From row r: the recommended option's figures (the setup the answer names), and beside them, labelled as that
    scenario, the figures of the scenario on Inputs where it is another setup; every figure read from Compare, so
    both columns stand on the same basis.  Returns the row for the printing note."""
    first, best = lay.compare_first, lay.best
    fmt = {key: f for _, key, f, _ in COMPARE_COLUMNS}
    scenario_differs = best != 0
    ws.cell(row=r, column=1, value="The figures of the recommended option").font = Font(bold=True, size=12)
    heads = ["", "recommended option"] + (["the scenario on Inputs (another setup)"] if scenario_differs else [])
    _head(ws, r + 1, heads, freeze=False)
    label = ws.cell(row=r + 2, column=1, value="setup")
    label.font = Font(bold=True)
    columns = [(2, None)] + ([(3, first)] if scenario_differs else [])
    for col, row in columns:
        c = ws.cell(row=r + 2, column=col)
        if row is None:
            c.value = f'=IF(COUNTIF({lay.recommended_range},"recommended")=0,"none acceptable",{lay.pick("label")})'
            lay.cached[f"Start!{c.coordinate}"] = lay.best_label
        else:
            c.value = f"=Compare!${lay.compare_cols['label']}${row}"
            lay.cached[f"Start!{c.coordinate}"] = lay.option_values[0]["label"]
        c.font, c.alignment = Font(bold=True), top_aligned("right", True)
    for i, (text, key) in enumerate(START_FIGURES, start=r + 3):
        ws.cell(row=i, column=1, value=text)
        for col, row in columns:
            c = ws.cell(row=i, column=col)
            if row is None:
                c.value = f'=IF(COUNTIF({lay.recommended_range},"recommended")=0,"-",{lay.pick(key)})'
                shown = lay.cached.get(f"Compare!{lay.compare_cols[key]}{first + best}", "") if best is not None else "-"
            else:
                c.value = f"=Compare!${lay.compare_cols[key]}${row}"
                shown = lay.cached.get(f"Compare!{lay.compare_cols[key]}{row}", "")
            lay.cached[f"Start!{c.coordinate}"] = shown
            c.alignment = top_aligned("right", key == "offer_shown")
            if fmt.get(key):
                c.number_format = fmt[key]
    i = r + 3 + len(START_FIGURES)
    # the network is the scenario's (Compare has no column for it): labelled so, in the scenario's column
    ws.cell(row=i, column=1, value="network between machines (the scenario on Inputs)")
    c = ws.cell(row=i, column=3 if scenario_differs else 2, value=_network_xl())
    c.alignment = top_aligned("right", True)
    lay.cached[f"Start!{c.coordinate}"] = _network_text(job.values, job.result)
    i += 1
    # every figure above assumes this framework's conventions and speed (Inputs: framework)
    ws.cell(row=i, column=1, value="training framework the figures assume")
    c = ws.cell(row=i, column=2, value="=framework")
    c.alignment = top_aligned("right")
    lay.cached[f"Start!{c.coordinate}"] = str(job.values["framework"])
    i += 1
    if not scenario_differs:
        _note(ws, f"A{i}", "The scenario on Inputs is the recommended option (Compare, option 1).", "D", 16, NOTE_FONT)
    else:
        _note(ws, f"A{i}", "The scenario on Inputs is option 1 on Compare; the answer above is the recommended option. To "
                           "make the scenario the recommended one, set gpu, n_gpus, offer and buy on Inputs to it.", "D", 30, NOTE_FONT)
    return i + 2


def write_workbook(path: str | os.PathLike, inputs: Mapping | None = None, gpus: list[str] | None = None) -> Path:
    """Write the workbook atomically (temporary file in the target folder, then rename).

    Raises ``core.InputError`` for bad inputs and ``WorkbookError`` when the target cannot be
    written (missing folder, read-only, open in Excel); an existing file is never left half-written.
    """
    target = check_target(path)
    wb, cached = build_workbook(inputs, gpus=gpus)
    return save_atomically(wb, cached, target)


