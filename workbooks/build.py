"""Generate the formula-linked gpu-tco workbook (.xlsx) from core's single definitions.

Every input is a named cell on the Inputs sheet, every catalog column a named
range (``gpus_memory_gib``), every quantity a named cell on the Calc sheet whose
formula is ``core.QUANTITIES[name].expr.xl()``: the same expression tree the
Python value comes from.  Formula cells also carry the value core computed for
the generated inputs, so viewers that do not recalculate (Protected View,
preview panes, phones) show numbers; Excel recalculates on open.
"""
from __future__ import annotations

import datetime as _dt
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

import numpy as np
from openpyxl import Workbook
from openpyxl.chart import BarChart, LineChart, Reference, Series
from openpyxl.chart.data_source import AxDataSource, NumData, NumVal, StrData, StrRef, StrVal
from openpyxl.comments import Comment
from openpyxl.formatting.rule import FormulaRule
from openpyxl.styles import Alignment, Font, PatternFill, Protection
from openpyxl.utils import get_column_letter
from openpyxl.workbook.defined_name import DefinedName
from openpyxl.worksheet.datavalidation import DataValidation
from openpyxl.worksheet.pagebreak import Break

from gpu_tco import core
from gpu_tco.core import (
    AUTO_BASIS,
    AUTO_QUANTITY,
    INPUTS,
    NO_PRICE,
    PRICE_INPUTS,
    QUANTITIES,
    REJECTIONS,
    TIE_DIGITS,
    VERDICTS,
    __version__,
    catalog,
    cite,
    depending_on,
    headline,
    headline_xl,
    plan,
    same_option,
    tie_round,
)
from gpu_tco.core import FIRST_INPUTS as FIRST
from gpu_tco.core import INPUT_SECTIONS as SECTIONS
from gpu_tco.core import formula_text as expr_text
from gpu_tco.core import plan_scope as scope

from .xlsx import (
    BAD_FILL,
    GOOD_FILL,
    HEAD_FILL,
    HEAD_FONT,
    INPUT_FILL,
    NOTE_FONT,
    check_target,
    not_in_default_print,
    page_setup,
    put_text,
    save_atomically,
)

SPARE_ROWS = 50  # empty catalog rows inside the named ranges: a user's own GPU or offer can be added and selected
CATALOG_SHEETS = {"gpus": "GPUs", "models": "Models", "offers": "Cloud"}


# Excel number formats, one name each (what a reader sees in the cell)
USD = '"$"#,##0'                    # whole dollars
USD_CENTS = '"$"#,##0.00'           # a price per GPU-hour
USD_MILLS = '"$"#,##0.000'          # a price per million tokens
GIB = '0 "GiB"'
GIB_TENTHS = '0.0 "GiB"'
HOURS_TENTHS = '#,##0.0 "h"'
GPUS = '#,##0 "GPUs"'
MONTHS_OR_NEVER = '[<0]"never";[>=1200]"> 100 years";0.0 "months"'  # payback_months is -1 for never
WHOLE = "0"
TENTHS = "0.0"
FLAG = '0;-0;0'
PERCENT = "0%"
PERCENT_TENTHS = "0.0%"
TEXT = "@"
NUMBER = "#,##0.##"
PERCENT_NUMBER = '#,##0.##" %"'    # an input given in percent (50 means 50 %)


def _number_format(unit: str) -> str:
    """Excel number format showing the unit: "$"#,##0 for USD, 0.0 "GiB/GPU" for memory..."""
    if unit == "USD":
        return USD
    if unit.startswith("USD/"):
        return USD_MILLS + ' "' + unit[3:] + '"'
    if unit in ("flag", "bool", "code", "-"):
        return WHOLE
    if unit in ("params", "bytes", "FLOP", "FLOP/token", "tokens") or unit.startswith("bytes"):
        return '0.00E+00 "' + unit + '"'  # 1e9..1e25: scientific keeps the column narrow
    if unit in ("fraction",):
        return PERCENT_TENTHS
    if unit == "months":
        return MONTHS_OR_NEVER
    return '#,##0.00 "' + unit + '"'


INPUTS_HEADER_ROW = 4      # the Inputs sheet's table header; sections and inputs follow below it
INPUT_IN_USE_COL = 3       # column of the value in use for inputs whose 0 means "automatic" (core.auto)
INPUT_NAME_COL = 7         # column of the input names (what the formulas use; right of the printed columns)
CANDIDATE_FIRST_COL = 9    # the candidate options block (option, gpu, n_gpus, offer, buy) starts in column I
SECTION_FILL = PatternFill("solid", fgColor="DDEBF7")
SECTION_TITLES = {"first": "Change these first", "the job": "The job", "hardware": "Hardware", "renting": "Renting",
                  "owning": "Owning", "serving": "Serving (inference)", "advanced": "Advanced"}


def input_sections() -> list[tuple[str, list[str]]]:
    """The Inputs sheet's sections in order: the inputs changed first, then one section per
    core.inputs section (the same grouping the form and the command line use)."""
    first = [n for n in FIRST]
    rest = [i for i in INPUTS if i.name not in first]
    return [("first", first)] + [(s, [i.name for i in rest if i.section == s]) for s in SECTIONS]


def input_layout() -> list[tuple[str, int, list[tuple[str, int]]]]:
    """The Inputs sheet's rows: per section (section, heading row, [(input, row), ...])."""
    layout, r = [], INPUTS_HEADER_ROW + 1
    for section, names in input_sections():
        layout.append((section, r, [(name, r + 1 + k) for k, name in enumerate(names)]))
        r += 1 + len(names)
    return layout


def input_rows() -> dict[str, int]:
    """The row of each input on the Inputs sheet."""
    return {name: row for _, _, rows in input_layout() for name, row in rows}


def _input_format(inp) -> str:
    """A number format with thousands separators and the unit, as a reader expects to see the value."""
    unit = inp.unit
    if inp.kind == "choice":
        return TEXT
    if inp.kind == "flag":
        return FLAG
    if unit == "fraction":
        return PERCENT
    if unit == "USD":
        return USD
    if unit.startswith("USD/"):
        return USD_CENTS
    if unit in ("%", "%/year"):
        return PERCENT_NUMBER
    return NUMBER


def _head(ws, row: int, labels: list[str], first_col: int = 1, freeze: bool = True) -> None:
    for j, label in enumerate(labels, start=first_col):
        c = ws.cell(row=row, column=j, value=label)
        c.fill, c.font = HEAD_FILL, HEAD_FONT
        c.alignment = Alignment(wrap_text=True, vertical="top")
    if freeze:
        ws.freeze_panes = ws.cell(row=row + 1, column=first_col)


def _widths(ws, widths: Mapping[str, float]) -> None:
    for col, width in widths.items():
        ws.column_dimensions[col].width = width


def _fit_rows(ws, first_row: int, last_row: int, wrapped_cols: tuple[str, ...]) -> None:
    """Row heights for wrapped text (spreadsheets do not always re-measure rows of a generated file):
    about one line per column width of characters, 15 points a line."""
    import math
    for r in range(first_row, last_row + 1):
        lines = 1
        for col in wrapped_cols:
            value = ws[f"{col}{r}"].value
            if isinstance(value, str) and not value.startswith("="):
                width = ws.column_dimensions[col].width or 10
                lines = max(lines, math.ceil(len(value) * 1.1 / width))
        ws.row_dimensions[r].height = 15 * lines  # explicit: the reader's program need not measure every row


def _note(ws, cell: str, text: str, last_col: str, height: float, font=None) -> None:
    """A long line of text, wrapped across columns A..last_col (merged), so it prints within the page."""
    ws[cell] = text
    row = ws[cell].row
    ws.merge_cells(f"{cell}:{last_col}{row}")
    ws[cell].alignment = Alignment(wrap_text=True, vertical="top")
    ws.row_dimensions[row].height = height
    if font is not None:
        ws[cell].font = font


def resolved_offer_xl(gpu: str, offer: str) -> str:
    """Excel text of the offer actually used: "auto" becomes the GPU's reference offer
    (GPUs sheet, column auto_offer, computed by core.catalog.reference_offer_rows), or
    "none" for a GPU without one (a row the user added)."""
    auto = f"INDEX(gpus_auto_offer,MATCH({gpu},gpus_name,0))"
    return f'IF({offer}="{catalog.AUTO_OFFER}",IF({auto}="","none",{auto}),{offer})'


def _scenario_ref(name: str) -> str:
    """A name of the scenario on Inputs as Excel text: the defined name, with offer "auto" resolved."""
    return resolved_offer_xl("gpu", "offer") if name == "offer" else name


def default_options(inputs: Mapping | None = None, limit: int = 10) -> list[dict]:
    """Options for the Compare sheet: the scenario itself, then the planner's best option
    per GPU and way to get it (rent/buy), cheapest first, and the recommended GPU at one
    step fewer than it needs (so "does not fit" has a row to show)."""
    # a GPU, count or offer the scenario names is the planner's scope, as `gpu-tco plan --scenario` reads it
    job, where = scope(dict(inputs or {}))
    ranked = plan(job, **where)
    seen, picks = set(), []
    acceptable = [o for o in ranked["options"] if o["ok"]]
    # the cheapest acceptable option is a row too: the sheet's tolerance is measured from it, as the planner's is
    cheapest = min(acceptable, key=lambda o: (o["cost_usd"], o["order"])) if acceptable else None
    for o in ranked["options"] + ([cheapest] if cheapest is not None else []):
        if o["ok"] and ((o["gpu"], o["acquire"]) not in seen or o is cheapest) and \
                not any(same_option(o, {**p, "acquire": "buy" if p["buy"] else "rent"}) for p in picks):
            seen.add((o["gpu"], o["acquire"]))
            picks.append({"gpu": o["gpu"], "n_gpus": o["n_gpus"], "offer": o["offer"] or catalog.AUTO_OFFER,
                          "buy": int(o["acquire"] == "buy"), **{n: int(o[n]) for n in LAYOUT_COLS}})
        if len(picks) == limit and (cheapest is None or any(same_option(cheapest, {**p, "acquire": "buy" if p["buy"] else "rent"})
                                                              for p in picks)):
            break
    step = core.layout_unit(job)  # the smallest count the job's parallel layout allows
    need = 0
    if picks:  # the recommended GPU in its layout (the planner's choice when the job gives none)
        chosen = {**job, **{n: picks[0][n] for n in LAYOUT_COLS if picks[0][n] > 1}}
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
                          **{n: int(job_layout[n]) for n in LAYOUT_COLS}})
    return picks


# an option's parallel layout: the planner's choice for its GPU (core.layout) when the job gives none
LAYOUT_COLS = ("pipeline_parallel", "expert_parallel")
CANDIDATE_COLS = ("gpu", "n_gpus", "offer", "buy", *LAYOUT_COLS)
COMPARE_COLUMNS = [  # (header, quantity or special, number format or None for the quantity's unit, width)
    ("option", "label", None, 26), ("GPU", "gpu", None, 16), ("GPUs", "n_gpus", WHOLE, 7),
    ("rent or buy", "acquire", None, 8), ("offer", "offer_shown", None, 27), ("interruptible (spot)", "spot", None, 16),
    ("status", "status", None, 14),
    ("peak memory per GPU", "peak_train_gib_per_gpu", GIB_TENTHS, 11), ("GPU memory", "gpu_memory_gib", GIB, 9),
    ("job hours", "option_hours", HOURS_TENTHS, 11), ("rent: job cost", "rent_total_usd", USD, 13),
    ("own: job's share", "own_job_usd", USD, 13), ("own: capital", "own_capital_usd", USD, 14),
    ("own: TCO over the period", "own_tco_usd", USD, 14), ("buying pays back after", "payback_months", MONTHS_OR_NEVER, 14),
    ("cost of this option", "option_cost_usd", USD, 13), ("USD per million tokens trained", "option_usd_per_mtok_train", USD_MILLS, 13),
    ("", "recommended", None, 13), ("ranked cost", "ranked", USD, 12),
    # the planner's rule, step by step: within cost_tolerance_pct of the cheapest, fewest GPUs, machines, hours, cost
    ("near: GPUs", "tier_gpus", WHOLE, 12), ("then machines", "tier_machines", WHOLE, 12),
    ("then hours", "tier_hours", TENTHS, 12), ("then cost", "tier_cost", USD, 12),
]
TIERS = ("tier_gpus", "tier_machines", "tier_hours", "tier_cost")
MEMORY_PARTS = ["weights_gib", "gradients_gib", "optimizer_gib", "activations_gib", "logits_gib", "overhead_train_gib"]


COMPARE_HEAD_ROW = 4  # the Compare sheet's table header; one row per option below it


@dataclass
class Scenario:
    """What the workbook is about: the inputs as given, resolved (canonical names, offer "auto" resolved) and
    evaluated, the offer as the Inputs sheet shows it ("auto" or a name), and the Compare sheet's options."""
    inputs: dict
    values: dict
    result: dict
    offer_cell: str
    options: list[dict]

    @classmethod
    def of(cls, inputs: Mapping | None, options: list[Mapping] | None) -> Scenario:
        inputs = dict(inputs or {})
        values = core.resolve_inputs(inputs)  # canonical names; offer "auto" resolved; validates
        result = core.evaluate(inputs)
        given_offer = str(inputs.get("offer", catalog.AUTO_OFFER))
        offer_cell = catalog.AUTO_OFFER if given_offer.strip().lower() == catalog.AUTO_OFFER else values["offer"]
        options = [{**{n: int(values[n]) for n in LAYOUT_COLS}, **o}  # an option without a layout has the scenario's
                   for o in (options if options is not None else default_options(inputs))]
        return cls(inputs, values, result, offer_cell, options)


@dataclass
class Layout:
    """Where each sheet puts what the others read, and the value each formula cell shows before a recalculation.

    ``option_rows``: the Options sheet's row of each name (option k in column 2 + k); ``option_values``: each
    option's values as that column computes them; ``compare_cols``: the Compare sheet's column letter of each
    COMPARE_COLUMNS key, its options in rows ``compare_first`` to ``compare_last``; ``best``: the index of the
    recommended option (None: none acceptable); ``cached``: {"Sheet!A1": value} for formula cells."""
    cached: dict[str, object] = field(default_factory=dict)
    option_rows: dict[str, int] = field(default_factory=dict)
    option_values: list[dict] = field(default_factory=list)
    compare_cols: dict[str, str] = field(default_factory=dict)
    compare_first: int = COMPARE_HEAD_ROW + 1
    compare_last: int = COMPARE_HEAD_ROW
    best: int | None = None

    def option_cell(self, k: int, name: str) -> str:
        """Option k's cell of ``name`` on the Options sheet."""
        return f"Options!${get_column_letter(2 + k)}${self.option_rows[name]}"

    def compare_range(self, key: str) -> str:
        """The Compare sheet's column of ``key`` over the options' rows (absolute, without the sheet)."""
        col = self.compare_cols[key]
        return f"${col}${self.compare_first}:${col}${self.compare_last}"

    @property
    def recommended_range(self) -> str:
        return f"Compare!{self.compare_range('recommended')}"

    def pick(self, key: str) -> str:
        """Excel text of the recommended option's cell of ``key`` on Compare."""
        return f'INDEX(Compare!{self.compare_range(key)},MATCH("recommended",{self.recommended_range},0))'

    @property
    def best_values(self) -> dict | None:
        return self.option_values[self.best] if self.best is not None else None

    @property
    def best_label(self) -> str:
        return self.option_values[self.best]["label"] if self.best is not None else "none acceptable"


def build_workbook(inputs: Mapping | None = None, options: list[Mapping] | None = None,
                   gpus: list[str] | None = None) -> tuple[Workbook, dict]:
    """The workbook object and the {sheet!cell: cached value} map for its formula cells.

    ``options``: rows of the Compare sheet, each {gpu, n_gpus, offer ("auto" or a name), buy};
    default ``default_options(inputs)``.  The first row is always the scenario on Inputs.
    A serving scenario (task "serve") gets the serving workbook (``workbooks.serving_book``; ``gpus``: the GPU
    types its planner considers, default the whole catalog).
    """
    if inputs and "task" in inputs and core.check_input("task", inputs["task"]) == "serve":
        from .serving_book import build_serving_workbook
        return build_serving_workbook(inputs, gpus)
    job = Scenario.of(inputs, options)
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
    _catalog_sheets(wb, tabs, {"models": [adhoc]} if adhoc is not None and adhoc["name"] not in tabs["models"].names else {})
    _start_sheet(start, tabs, job, lay)
    wb.calculation.fullCalcOnLoad = True
    wb.properties.creator = "gpu-tco"
    wb.properties.lastModifiedBy = "gpu-tco"
    return wb, lay.cached


def _inputs_sheet(wb: Workbook, ws, job: Scenario, lay: Layout) -> None:
    """Inputs: sections a reader knows, the inputs changed first at the top; the Compare sheet's candidate
    options to their right."""
    ws["A1"] = "Inputs: change the yellow cells"
    ws["A1"].font = Font(bold=True, size=14)
    _note(ws, "A2", "Every other number in this workbook follows these cells. The name column is what the formulas use "
                    "(the same names as gpu-tco's command line and scenario files). Where 0 means automatic, "
                    "the column in use shows the value the formulas use (Calc sheet).", "F", 30, NOTE_FONT)
    _head(ws, INPUTS_HEADER_ROW, ["input", "value", "in use", "unit", "allowed values", "what it means (and its source)",
                                  "name in formulas"])
    layout = input_layout()
    for section, heading_row, rows in layout:
        heading = ws.cell(row=heading_row, column=1, value=SECTION_TITLES[section])
        for j in range(1, 8):
            ws.cell(row=heading_row, column=j).fill = SECTION_FILL
        heading.font = Font(bold=True)
        for name, r in rows:
            _input_row(wb, ws, core.inputs.BY_NAME[name], r, job, lay)
    last_input_row = max(r for _, heading_row, rows in layout for r in [heading_row, *(row for _, row in rows)])
    if job.values.get("task") != "serve":  # a serving workbook's setups are on its Serving sheet
        _candidate_block(ws, job, lay)
    cand = [get_column_letter(CANDIDATE_FIRST_COL + j) for j in range(1 + len(CANDIDATE_COLS))]
    _widths(ws, {"A": 30, "B": 16, "C": 18, "D": 10, "E": 24, "F": 48, "G": 24, "H": 3,
                 cand[0]: 7, cand[1]: 16, cand[2]: 7, cand[3]: 30, cand[4]: 6, cand[5]: 16, cand[6]: 14})
    _fit_rows(ws, INPUTS_HEADER_ROW + 1, last_input_row, ("A", "C", "E", "F"))
    # printed: the columns a reader needs (label to meaning), as wide as the page; the names and options stay on screen
    page_setup(ws, f"A1:F{last_input_row}", title_rows=f"{INPUTS_HEADER_ROW}:{INPUTS_HEADER_ROW}", fit_width=True)
    ws.protection.sheet = True


def _input_row(wb: Workbook, ws, inp, r: int, job: Scenario, lay: Layout) -> None:
    """One input's row: label, value (a named, validated yellow cell), value in use, unit, what is allowed, meaning."""
    values = job.values
    ws.cell(row=r, column=1, value=inp.label)
    v = job.offer_cell if inp.name == "offer" else values[inp.name]
    cell = put_text(ws.cell(row=r, column=2), v if inp.kind == "choice" else float(v))
    cell.fill = INPUT_FILL
    cell.protection = Protection(locked=False)
    cell.alignment = Alignment(horizontal="right" if inp.kind != "choice" else "left", vertical="top")
    cell.number_format = _input_format(inp)
    in_use = ws.cell(row=r, column=INPUT_IN_USE_COL)
    if inp.name in AUTO_QUANTITY:  # the value the formulas use: the input above 0, else the automatic one
        in_use.value = f"={AUTO_QUANTITY[inp.name]}"
        in_use.number_format = _input_format(inp)
        lay.cached[f"Inputs!{in_use.coordinate}"] = _plain(job.result[AUTO_QUANTITY[inp.name]])
    elif inp.name == "offer":
        in_use.value = "=" + resolved_offer_xl("gpu", "offer")
        lay.cached[f"Inputs!{in_use.coordinate}"] = str(values["offer"])
    ws.cell(row=r, column=4, value="" if inp.unit in ("-", "flag") else inp.unit)
    allowed = inp.allowed() if inp.kind != "choice" else f"a name from the {CATALOG_SHEETS.get(inp.table, 'Tables')} sheet"
    if inp.name == "offer":
        allowed += ', or "auto" (the GPU\'s cheapest on-demand offer)'
    ws.cell(row=r, column=5, value=allowed)
    ws.cell(row=r, column=INPUT_NAME_COL, value=inp.name).font = NOTE_FONT
    source = cite(inp.source, short=True)  # full citations: docs/quantities.md, section References
    ws.cell(row=r, column=6, value=inp.description + (f". Source: {source}" if source else ""))
    for j in (1, 3, 4, 5, 6, 7):
        ws.cell(row=r, column=j).alignment = Alignment(wrap_text=j in (1, 3, 5, 6), vertical="top")
    cell.comment = Comment(f"{inp.label}: {inp.description}\nUnit: {inp.unit}\nAllowed: {allowed}", "gpu-tco")
    wb.defined_names[inp.name] = DefinedName(inp.name, attr_text=f"Inputs!$B${r}")
    _validate(ws, cell, inp.name, allowed, kind=inp.kind, table=inp.table, lo=inp.minimum, hi=inp.maximum)


def _candidate_block(ws, job: Scenario, lay: Layout) -> None:
    """The candidate options (the Compare sheet's rows) beside the inputs: option 1 is the scenario on the left."""
    first_col = CANDIDATE_FIRST_COL
    _head(ws, INPUTS_HEADER_ROW, ["option", *CANDIDATE_COLS], first_col=first_col, freeze=False)
    ws.cell(row=INPUTS_HEADER_ROW + len(job.options) + 2, column=first_col,
            value="Options 2+ are yours to change (buy: 1 = buy, 0 = rent; offer: a Cloud name or auto; pipeline and "
                  "expert parallel degrees as the planner chose them).").font = NOTE_FONT
    for k, opt in enumerate([{}] + job.options, start=1):
        r = INPUTS_HEADER_ROW + k
        ws.cell(row=r, column=first_col, value=k)
        for j, name in enumerate(CANDIDATE_COLS, start=first_col + 1):
            c = ws.cell(row=r, column=j)
            if k == 1:
                c.value = f"={name}"  # the scenario: follows the inputs on the left
                lay.cached[f"Inputs!{c.coordinate}"] = job.offer_cell if name == "offer" else job.values[name]
                c.font = NOTE_FONT
            else:
                put_text(c, opt[name] if name in ("gpu", "offer") else int(opt[name]))
                c.fill = INPUT_FILL
                c.protection = Protection(locked=False)
                inp = core.inputs.BY_NAME[name]
                _validate(ws, c, name, "", kind=inp.kind, table=inp.table, lo=inp.minimum, hi=inp.maximum)


def _calc_sheet(wb: Workbook, calc, job: Scenario, lay: Layout) -> None:
    """Calc: every quantity, a named live formula with its cached value."""
    _head(calc, 1, ["group", "quantity", "value", "unit", "description", "formula"])
    for i, (name, q) in enumerate(QUANTITIES.items(), start=2):
        calc.cell(row=i, column=1, value=q.group)
        calc.cell(row=i, column=2, value=name)
        c = calc.cell(row=i, column=3, value="=" + q.expr.xl(_scenario_ref))
        c.number_format = _number_format(q.unit)
        calc.cell(row=i, column=4, value=q.unit)
        calc.cell(row=i, column=5, value=q.description)
        calc.cell(row=i, column=6, value=expr_text(q.expr))
        wb.defined_names[name] = DefinedName(name, attr_text=f"Calc!$C${i}")
        lay.cached[f"Calc!C{i}"] = _plain(job.result[name])
    _widths(calc, {"A": 16, "B": 32, "C": 26, "D": 12, "E": 46, "F": 46})
    for row in calc.iter_rows(min_row=2, min_col=1, max_col=6):
        for c in row:  # every cell of a row at the top, next to its wrapped description
            c.alignment = Alignment(wrap_text=c.column >= 5, vertical="top")
    _fit_rows(calc, 2, len(QUANTITIES) + 1, ("E", "F"))
    not_in_default_print(calc, 6, title_rows="1:1")
    calc.protection.sheet = True


def _options_sheet(ws, job: Scenario, lay: Layout) -> None:
    """Options: the quantities that depend on the option, recomputed per option column (option k in column
    2 + k), plus the memory parts the chart stacks; the ones that do not change are the same formula as on Calc."""
    options = job.options
    per_option = depending_on(CANDIDATE_COLS)
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
    rows.update({name: 7 + len(PRICE_INPUTS) + i for i, name in enumerate(LAYOUT_COLS)})
    rows.update({name: 7 + len(PRICE_INPUTS) + len(LAYOUT_COLS) + i for i, name in enumerate(per_option)})
    lay.option_rows = rows
    for name, r in rows.items():
        ws.cell(row=r, column=1, value=name)
        ws.cell(row=r, column=2, value=QUANTITIES[name].unit if name in QUANTITIES else
                core.inputs.BY_NAME[name].unit if name in core.inputs.BY_NAME else "")
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
        _option_column(ws, k, per_option, vals, lay)
        lay.option_values.append(vals)
    _widths(ws, {"A": 34, "B": 12, **{get_column_letter(2 + k): 20 for k in range(1, len(options) + 2)}})
    not_in_default_print(ws, 2 + len(options) + 1, title_rows="1:1")
    ws.protection.sheet = True


def _option_column(ws, k: int, per_option: list[str], vals: Mapping, lay: Layout) -> None:
    """Option k's column: its candidate from Inputs, its prices, and each quantity's formula over them."""
    col = get_column_letter(2 + k)
    rows = lay.option_rows
    # the option's cells in the candidate block on Inputs
    cand_cell = {n: f"Inputs!${get_column_letter(CANDIDATE_FIRST_COL + 1 + j)}${INPUTS_HEADER_ROW + k}"
                 for j, n in enumerate(CANDIDATE_COLS)}

    def ref(name: str) -> str:
        return f"{col}{rows[name]}" if name in rows else name
    formulas = {
        "label": f'="{k}. "&{col}3&" x"&{col}4&IF({col}6=1," buy"," rent")',
        "gpu": f"={cand_cell['gpu']}", "n_gpus": f"={cand_cell['n_gpus']}",
        "offer": "=" + resolved_offer_xl(f"{col}3", cand_cell["offer"]), "buy": f"={cand_cell['buy']}",
        **{name: f"=IF({col}3=gpu,{name},0)" for name in PRICE_INPUTS},
        **{name: f"={cand_cell[name]}" for name in LAYOUT_COLS},
    }
    formulas.update({name: "=" + QUANTITIES[name].expr.xl(ref) for name in per_option})
    for name, formula in formulas.items():
        c = ws.cell(row=rows[name], column=2 + k, value=formula)
        lay.cached[f"Options!{c.coordinate}"] = _plain(vals[name])
        if name in QUANTITIES:
            c.number_format = _number_format(QUANTITIES[name].unit)
        elif name in ("n_gpus", "buy", *LAYOUT_COLS):
            c.number_format = GPUS if name in ("n_gpus", *LAYOUT_COLS) else FLAG
        elif name in PRICE_INPUTS:
            c.number_format = USD if name == "purchase_usd_per_gpu" else USD_CENTS


def _plain(v):
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (str, np.str_)):
        return str(v)
    return float(v)


BY_NAME_ZERO_OR_MIN = {i.name: i.zero_or_min for i in INPUTS}


def _validate(ws, cell, name: str, allowed: str, kind: str, table: str | None, lo, hi) -> None:
    """Data validation for an input cell: catalog list, 0/1 flag or numeric range."""
    if name == "offer":
        ref = cell.coordinate
        dv = DataValidation(type="custom", formula1=f'OR({ref}="{catalog.AUTO_OFFER}",ISNUMBER(MATCH({ref},offers_name,0)))')
    elif kind == "choice":
        dv = DataValidation(type="list", formula1=f"{table}_name", allow_blank=False)
    elif kind == "flag":
        dv = DataValidation(type="list", formula1='"0,1"')
    elif BY_NAME_ZERO_OR_MIN.get(name) is not None:  # 0 (automatic) or at least the least value the input takes
        ref, least = cell.coordinate, BY_NAME_ZERO_OR_MIN[name]
        whole = f",INT({ref})={ref}" if kind == "integer" else ""
        dv = DataValidation(type="custom", formula1=f"AND(ISNUMBER({ref}),OR({ref}=0,AND({ref}>={least!r},{ref}<={float(hi)!r})){whole})")
    else:
        lo = lo if lo is not None else -1e300
        hi = hi if hi is not None else 1e300
        dv = DataValidation(type="whole" if kind == "integer" else "decimal", operator="between",
                            formula1=repr(float(lo)), formula2=repr(float(hi)))
    dv.error = f"{name}: allowed {allowed or core.inputs.BY_NAME[name].allowed()}"
    dv.errorTitle, dv.showErrorMessage = "gpu-tco", True
    ws.add_data_validation(dv)
    dv.add(cell)


def _status(v: Mapping) -> str:
    """Why an option is not acceptable: the first failing check of core.planner.REJECTIONS."""
    return "ok" if v["option_ok"] else next((word for flag, word in REJECTIONS if not v[flag]), "ok")


def _status_xl(cell) -> str:
    """The same rule as an Excel formula; ``cell(quantity)`` is that option's cell."""
    text = '"ok"'
    for flag, word in reversed(REJECTIONS):
        text = f'IF(NOT({cell(flag)}),"{word}",{text})'
    return f'=IF({cell("option_ok")},"ok",{text})'


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
                    "(the cheapest option that fits, has a price, meets the deadline and budget, and is not an interruptible "
                    "offer unless allow_interruptible is 1: the same rule as gpu-tco's planner).")
    _note(ws, "A2", compare_note, "J", 32, NOTE_FONT)
    _head(ws, head_row, [h for h, *_ in COMPARE_COLUMNS])
    ws.row_dimensions[head_row].height = 45
    letter = lay.compare_cols = {key: get_column_letter(j) for j, (_, key, _, _) in enumerate(COMPARE_COLUMNS, start=1)}
    ranked = [v["option_cost_usd"] if v["option_ok"] else None for v in all_vals]
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
                c.alignment = Alignment(horizontal="center")
            elif isinstance(value, str) and value == NO_PRICE:
                c.alignment = Alignment(horizontal="right")
        for key in ("status", "recommended", *TIERS):
            lay.cached.setdefault(f"Compare!{letter[key]}{r}", "")
    span = f"A{first}:{letter['ranked']}{last}"
    st, rc = letter["status"], letter["recommended"]
    ws.conditional_formatting.add(span, FormulaRule(formula=[f'${st}{first}="does not fit"'], fill=BAD_FILL, stopIfTrue=True))
    ws.conditional_formatting.add(span, FormulaRule(formula=[f'${rc}{first}="recommended"'], fill=GOOD_FILL,
                                                    font=Font(bold=True), stopIfTrue=True))
    ws.conditional_formatting.add(span, FormulaRule(formula=[f'${st}{first}<>"ok"'], font=Font(color="808080")))
    _widths(ws, {letter[key]: width for _, key, _, width in COMPARE_COLUMNS})
    for key in ("ranked", *TIERS):  # helpers for the recommendation
        ws.column_dimensions[letter[key]].hidden = True
    ws.freeze_panes = f"B{first}"
    _compare_charts(ws, opt_ws, lay)


def _compare_formulas(lay: Layout, k: int, v: Mapping, ranked, tiers: tuple) -> dict[str, tuple[str, object]]:
    """Option k's row on Compare where it is more than its Options cell: {key: (formula, cached value)}."""
    def opt_cell(name: str) -> str:  # that option's cell on the Options sheet
        return lay.option_cell(k, name)
    letter, r = lay.compare_cols, lay.compare_first + k - 1
    rk, rk_range = letter["ranked"], lay.compare_range("ranked")
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
        "ranked": (f'=IF({opt_cell("option_ok")},{opt_cell("option_cost_usd")},"")', "" if ranked is None else ranked),
        # no purchase price in the catalog: owning has no cost to show, and the option none (not $0)
        **{key: (f'=IF({opt_cell("own_purchase_usd_per_gpu")}>0,{opt_cell(key)},"{NO_PRICE}")',
                 v[key] if v["own_purchase_usd_per_gpu"] > 0 else NO_PRICE)
           for key in ("own_job_usd", "own_capital_usd", "own_tco_usd", "payback_months")},
        **{key: (f'=IF({opt_cell("option_priced")},{opt_cell(key)},"{NO_PRICE}")', v[key] if v["option_priced"] else NO_PRICE)
           for key in ("option_cost_usd", "option_usd_per_mtok_train")},
        # core.planner's rule (planner.rank): acceptable options within cost_tolerance_pct of the cheapest; among
        # them the fewest GPUs, then machines, then hours, then cost; the first listed on a tie (one row only)
        "tier_gpus": (f'=IF(ISNUMBER({rk}{r}),IF({rk}{r}<=MIN({rk_range})*(1+cost_tolerance_pct/100),{opt_cell("n_gpus")},""),"")',
                      tiers[0]),
        "tier_machines": (f'=IF(ISNUMBER({letter["tier_gpus"]}{r}),IF({letter["tier_gpus"]}{r}=MIN({col_range["tier_gpus"]}),'
                          f'{opt_cell("job_machines")},""),"")', tiers[1]),
        "tier_hours": (f'=IF(ISNUMBER({letter["tier_machines"]}{r}),IF({letter["tier_machines"]}{r}=MIN({col_range["tier_machines"]}),'
                       f'ROUND({opt_cell("option_hours")},{TIE_DIGITS}),""),"")', tiers[2]),
        "tier_cost": (f'=IF(ISNUMBER({letter["tier_hours"]}{r}),IF({letter["tier_hours"]}{r}=MIN({col_range["tier_hours"]}),'
                      f'ROUND({rk}{r},{TIE_DIGITS}),""),"")', tiers[3]),
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
    page_setup(ws, f"A1:{letter['recommended']}{memory_row + chart_rows}", title_rows=f"{COMPARE_HEAD_ROW}:{COMPARE_HEAD_ROW}")
    ws.print_title_cols = "A:A"  # the option's name on the pages with the table's further columns
    ws.row_dimensions[2].height = 45  # the note above the table: three lines at these column widths


def _recommended_row(all_vals: list[dict], ranked: list) -> tuple[int | None, list[tuple]]:
    """The row the Compare sheet's formulas mark, computed as they compute it (cached values): the planner's
    rule over these rows (core.planner.rank), with each row's helper values ("" where a step leaves it out)."""
    costs = [x for x in ranked if x is not None]
    if not costs:
        return None, [("", "", "", "")] * len(all_vals)
    limit = min(costs) * (1 + all_vals[0]["cost_tolerance_pct"] / 100)
    tiers = [[float(v["n_gpus"]) if x is not None and x <= limit else "" for v, x in zip(all_vals, ranked)]]
    for key in ("job_machines", "option_hours", "option_cost_usd"):
        prev = tiers[-1]
        low = min(t for t in prev if t != "")
        exact = key == "job_machines"  # whole numbers; hours and cost compare rounded, as the sheet's ROUND does
        tiers.append([(float(v[key]) if exact else tie_round(float(v[key]))) if t != "" and t == low else ""
                      for v, t in zip(all_vals, prev)])
    last = tiers[-1]
    best = last.index(min(t for t in last if t != ""))
    return best, list(zip(*tiers))


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
    page_setup(ws, f"A1:L{max(last, 28)}", scale=75, title_rows=f"{head}:{head}")
    ws.protection.sheet = True


def _breakeven_note(ws, job: Scenario, lay: Layout, months: int) -> None:
    """The sheet's note: which option it shows (the scenario on Inputs), and whether that one is recommended."""
    values, rec_range = job.values, lay.recommended_range
    tail = (f" Months 0 to {months} (the period when generated; regenerate for a longer one). Renting covers the same "
            "working hours (hours_per_day) at the rental price paid.")
    how = f'IF(buy=1,"bought","rented from "&{resolved_offer_xl("gpu", "offer")})'
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


def _catalog_sheets(wb: Workbook, tabs: Mapping, extra: Mapping | None = None) -> None:
    """The catalogs as plain ranges; each column a defined name <table>_<column> with spare rows.
    ``extra``: rows to add after a table's own (a model the scenario gives outside the catalog)."""
    extra = extra or {}
    small = wb.create_sheet("Tables")
    small_col = 1
    auto_offer = catalog.reference_offer_rows()
    for tname, table in tabs.items():
        if tname in CATALOG_SHEETS:
            sheet, origin_col = wb.create_sheet(CATALOG_SHEETS[tname]), 1
        else:
            origin_col, sheet = small_col, small
            small_col += len(table.columns) + 1
        cols = list(table.columns) + (["auto_offer"] if tname == "gpus" else [])
        rows = list(table.rows) + list(extra.get(tname, []))
        last = len(rows) + 1 + SPARE_ROWS
        for j, col in enumerate(cols):
            h = sheet.cell(row=1, column=origin_col + j, value=col)
            h.fill, h.font = HEAD_FILL, HEAD_FONT
            for i, row in enumerate(rows, start=2):
                if col == "auto_offer":  # the offer "auto" picks for this GPU (core.catalog.reference_offer_rows)
                    value = tabs["offers"].names[int(auto_offer[i - 2])]
                else:
                    value = row.get(col, "" if col in catalog.TEXT_COLUMNS else 0)
                put_text(sheet.cell(row=i, column=origin_col + j), value)
            letter = get_column_letter(origin_col + j)
            if col in ("name", "auto_offer", "price_type") or col in table.numeric or (tname, col) in (("apis", "as_of"), ("engines", "label")):
                # price_type and the API's date: read by the Start answers
                ref = f"'{sheet.title}'!${letter}$2:${letter}${last}"
                wb.defined_names[f"{tname}_{col}"] = DefinedName(f"{tname}_{col}", attr_text=ref)
            sheet.column_dimensions[letter].width = (30 if col in ("name", "source", "auto_offer", "description")
                                                     else 10 if col == "aliases" else 13)
        if sheet is not small:
            sheet.freeze_panes = "B2"
            not_in_default_print(sheet, len(cols), title_rows="1:1")
    not_in_default_print(small, max(small_col - 1, 1), title_rows="1:1")


NOTHING_ACCEPTABLE = "No option fits, has a price and meets the deadline and budget: see the status column on Compare."


def _answer_text(v: Mapping | None, values: Mapping) -> str:
    """The answer for the recommended option (the cached value of the Start sheet's formula): core's headline."""
    if v is None:
        return NOTHING_ACCEPTABLE
    offer = catalog.offers().row(v["offer"]) if not v["buy"] else {"price_type": "", "commitment_months": 0}
    fields = {"acquire": "buy" if v["buy"] else "rent", "n_gpus": v["n_gpus"], "gpu": v["gpu"], "offer": v["offer"],
              "price_type": offer["price_type"], "cost_usd": v["option_cost_usd"], "hours": v["option_hours"],
              "capital_usd": v["own_capital_usd"] if v["own_purchase_usd_per_gpu"] > 0 else float("nan"),
              "payback_months": v["payback_months"], "commitment_months": offer["commitment_months"]}
    return headline(fields, values)


def _answer_xl(pick, rec_range: str) -> str:
    """The same answer as a formula over Compare's recommended row (``pick(key)`` reads that row's cell)."""
    offer_row = f'MATCH({pick("offer_shown")},offers_name,0)'
    fields = {"acquire": pick("acquire"), "n_gpus": pick("n_gpus"), "gpu": pick("gpu"), "offer": pick("offer_shown"),
              "price_type": f"INDEX(offers_price_type,{offer_row})", "cost_usd": pick("option_cost_usd"),
              "hours": pick("option_hours"), "capital_usd": pick("own_capital_usd"), "payback_months": pick("payback_months"),
              "commitment_months": f"INDEX(offers_commitment_months,{offer_row})"}
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
    r = _start_ages(ws, tabs, r + 2)
    i = _start_scenario(ws, job, lay, r)
    _note(ws, f"A{i}", "Printing this workbook prints Start, Inputs, Compare and Break-even. Calc, Options and the catalog "
                       "sheets (GPUs, Models, Cloud, Tables) are left out: to print one, clear its print area (Excel: Page "
                       "Layout > Print Area > Clear Print Area; LibreOffice: Format > Print Ranges > Clear) and print that "
                       "sheet; it fits the page width.", "D", 48, NOTE_FONT)
    _widths(ws, {"A": 40, "B": 21, "C": 28, "D": 26})  # fits one landscape page at 90 %
    page_setup(ws, f"A1:D{i}", scale=90)


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
                    "budget (Inputs) and is not an interruptible offer unless you allow those; among those costing at most "
                    "cost_tolerance_pct more than the cheapest, the fewest GPUs, then machines, then hours win. Compare shows "
                    "the others and why.", "D", 30, NOTE_FONT)
    if not job.result["fits_train"]:  # the scenario itself does not fit: the cheapest change that makes it fit
        from gpu_tco.core import what_would_fit
        change = what_would_fit(job.inputs)
        if change is not None:
            _note(ws, "A10", f"Your scenario ({int(values['n_gpus'])}x {values['gpu']}, {values['method']}) does not fit in GPU "
                             f"memory; it {change.sentence()} (worked out when this file was generated).", "D", 30, NOTE_FONT)


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
        inp = core.inputs.BY_NAME[m["input"]]
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
        ws.cell(row=k, column=4, value=where).alignment = Alignment(wrap_text=True, vertical="top")
        ws.row_dimensions[k].height = 30 if m["input"] in AUTO_QUANTITY else 15
    r = r + 3 + max(len(movers), 1)
    _note(ws, f"A{r}", "(each raised on its own by 20 % for the recommended option, when this file was generated)", "D", 16, NOTE_FONT)
    return r


def _start_ages(ws, tabs: Mapping, r: int) -> int:
    """From row r: how old the catalogs and prices are; returns the next free row after a blank one."""
    ws.cell(row=r, column=1, value="How old the numbers are").font = Font(bold=True, size=12)
    today = _dt.date.today()
    lines = []
    for t, sheet in CATALOG_SHEETS.items():
        dates = sorted({str(x.get("as_of", "")) for x in tabs[t].rows if x.get("as_of")}) or ["-"]
        lines.append(f"{sheet} sheet: {len(tabs[t].rows)} rows, as of {dates[0]} to {dates[-1]}; each row names its source.")
    offer_dates = sorted({str(x["as_of"])[:7] for x in tabs["offers"].rows if x.get("as_of")})
    if offer_dates:
        y, mth = map(int, offer_dates[-1].split("-")[:2])
        age = (today.year - y) * 12 + today.month - mth
        from gpu_tco.core import refreshed_note
        refreshed = refreshed_note(tabs["offers"].rows)
        lines.append(f"Cloud prices move: the newest is {age} months old on {today.isoformat()}"
                     + (f" ({refreshed})" if refreshed else "; gpu-tco offers --refresh brings today's")
                     + "; check the offer's page before you rent.")
    lines.append(f"Generated by gpu-tco {__version__} on {today.isoformat()}. Every number is a live formula; "
                 "Excel recalculates when a yellow cell on Inputs changes.")
    for k, text in enumerate(lines, start=r + 1):
        _note(ws, f"A{k}", text, "D", 30)
    return r + len(lines) + 2


def _start_scenario(ws, job: Scenario, lay: Layout, r: int) -> int:
    """From row r: the scenario on Inputs in key numbers, and the recommended option; returns the row for the
    printing note."""
    values, result = job.values, job.result
    ws.cell(row=r, column=1, value="The scenario on Inputs").font = Font(bold=True, size=12)
    c = ws.cell(row=r + 1, column=1, value='=model&", "&method&", "&n_gpus&" x "&gpu')
    lay.cached[f"Start!{c.coordinate}"] = f"{values['model']}, {values['method']}, {int(values['n_gpus'])} x {values['gpu']}"
    rows = [("peak memory per GPU (device total, must fit)", "=peak_train_gib_per_gpu", GIB_TENTHS, result["peak_train_gib_per_gpu"]),
            ("of which tensors (PyTorch allocator peak)", "=allocator_peak_train_gib", GIB_TENTHS, result["allocator_peak_train_gib"]),
            ("memory of one GPU", "=gpu_memory_gib", GIB, result["gpu_memory_gib"]),
            ("fits in memory", '=IF(fits_train,"yes","no")', None, "yes" if result["fits_train"] else "no"),
            ("hours the GPUs are occupied", "=job_wall_hours", HOURS_TENTHS, result["job_wall_hours"]),
            ("rent: cost of the job", "=rent_total_usd", USD, result["rent_total_usd"]),
            ("own: total cost over the period", "=own_tco_usd", USD, result["own_tco_usd"]),
            ("own: cost per working GPU-hour", "=own_usd_per_gpu_hour", USD_CENTS, result["own_usd_per_gpu_hour"]),
            ("buying pays back after", "=payback_months", _number_format("months"), result["payback_months"])]
    for i, (label, formula, fmt, value) in enumerate(rows, start=r + 2):
        ws.cell(row=i, column=1, value=label)
        c = ws.cell(row=i, column=2, value=formula)
        c.alignment = Alignment(horizontal="right")
        if fmt:
            c.number_format = fmt
        lay.cached[f"Start!{c.coordinate}"] = _plain(value)
    i = r + 2 + len(rows)
    ws.cell(row=i, column=1, value="recommended option (Compare)").font = Font(bold=True)
    c = ws.cell(row=i, column=2, value=f'=IF(COUNTIF({lay.recommended_range},"recommended")=0,"none acceptable",'
                                          f'{lay.pick("label")})')
    c.font, c.alignment = Font(bold=True), Alignment(horizontal="right")
    lay.cached[f"Start!{c.coordinate}"] = lay.best_label
    return i + 2


def write_workbook(path: str | os.PathLike, inputs: Mapping | None = None, gpus: list[str] | None = None) -> Path:
    """Write the workbook atomically (temporary file in the target folder, then rename).

    Raises ``core.InputError`` for bad inputs and ``WorkbookError`` when the target cannot be
    written (missing folder, read-only, open in Excel); an existing file is never left half-written.
    """
    target = check_target(path)
    wb, cached = build_workbook(inputs, gpus=gpus)
    return save_atomically(wb, cached, target)




