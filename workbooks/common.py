"""What the training and the serving workbook share: number formats and styles, the layout helpers (headings,
widths, row heights, notes), the scenario and the cell map, and the sheets both print or read (Inputs, Calc, the
catalogs, the age of the numbers).

``workbooks.build`` (the training workbook) and ``workbooks.serving_book`` both import this module; neither imports
the other's sheets, so the two books stand side by side without an import circle.
"""
from __future__ import annotations

import datetime as _dt
import functools
from dataclasses import dataclass, field
from typing import Mapping

import numpy as np
from openpyxl import Workbook
from openpyxl.styles import Font, PatternFill, Protection
from openpyxl.utils import get_column_letter
from openpyxl.workbook.defined_name import DefinedName
from openpyxl.worksheet.datavalidation import DataValidation

from gpu_tco import core
from gpu_tco.core import (
    AUTO_QUANTITY,
    INPUTS,
    INPUTS_BY_NAME,
    PLAN_OUTPUTS,
    QUANTITIES,
    SERVE_OUTPUTS,
    __version__,
    catalog,
    cite,
    inputs_of,
)
from gpu_tco.core import FIRST_INPUTS as FIRST
from gpu_tco.core import INPUT_SECTIONS as SECTIONS
from gpu_tco.core import formula_text as expr_text

from .xlsx import (
    HEAD_FILL,
    HEAD_FONT,
    INPUT_FILL,
    NOTE_FONT,
    not_in_default_print,
    page_setup,
    put_text,
    top_aligned,
)

# the default workbook prints as a short report: its PDF (LibreOffice, A4) has at most this many pages (a test
# holds it; README and docs/workbook.md state it through `gpu-tco docs`)
PRINTED_PAGES_AT_MOST = 12
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
# breakeven_hours_per_day: -1 for never; above 24 hours a day it does not pay back within the period
HOURS_A_DAY_OR_NEVER = '[<0]"never";[>24]"> 24 h/day";0.0 "h/day"'
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
                  "owning": "Owning", "serving": "Serving (inference)", "advanced": "Advanced",
                  "unused": "Not used by {task} (not printed; kept for a what-if)"}


# what the printed report of each task reads: the planner's and the serving planner's outputs, and for training the
# Compare, Start and Break-even figures beyond them (their inputs are the ones printed)
TASK_OUTPUTS = {
    "train": (*PLAN_OUTPUTS, "rent_total_usd", "own_job_usd", "own_tco_usd", "payback_months", "verdict_code",
              "own_cumulative_usd", "rent_cumulative_usd", "job_wall_hours", "allocator_peak_train_gib",
              "weights_gib", "gradients_gib", "optimizer_gib", "activations_gib", "logits_gib", "overhead_train_gib"),
    "serve": tuple(SERVE_OUTPUTS),
}
TASK_WORDS = {"train": "this training job", "serve": "this serving deployment"}


def task_inputs(task: str) -> set[str]:
    """The inputs a report of ``task`` ("train" or "serve") depends on: the ones its printed Inputs sheet lists."""
    used = set(inputs_of(TASK_OUTPUTS[task], task))
    return used | {"task"} | ({"cost_tolerance_pct"} if task == "train" else set())


def input_sections(task: str = "train") -> list[tuple[str, list[str]]]:
    """The Inputs sheet's sections in order: the inputs changed first, then one section per core.inputs section
    (the same grouping the form and the command line use) with the inputs ``task`` uses, then ("unused", the
    rest): kept below the printed part so a what-if can still change them."""
    used = task_inputs(task)
    first = [n for n in FIRST]
    rest = [i for i in INPUTS if i.name not in first]
    sections = [("first", first)] + [(s, [i.name for i in rest if i.section == s and i.name in used]) for s in SECTIONS]
    return [x for x in sections if x[1]] + [("unused", [i.name for i in rest if i.name not in used])]


def input_layout(task: str = "train") -> list[tuple[str, int, list[tuple[str, int]]]]:
    """The Inputs sheet's rows: per section (section, heading row, [(input, row), ...])."""
    layout, r = [], INPUTS_HEADER_ROW + 1
    for section, names in input_sections(task):
        layout.append((section, r, [(name, r + 1 + k) for k, name in enumerate(names)]))
        r += 1 + len(names)
    return layout


def input_rows(task: str = "train") -> dict[str, int]:
    """The row of each input on the Inputs sheet."""
    return {name: row for _, _, rows in input_layout(task) for name, row in rows}


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
        c.alignment = top_aligned(wrap=True)
    if freeze:
        ws.freeze_panes = ws.cell(row=row + 1, column=first_col)


def _widths(ws, widths: Mapping[str, float]) -> None:
    for col, width in widths.items():
        ws.column_dimensions[col].width = width


# How much text a printed cell holds.  A column width is in widths of the digit 0 of the default font; wrapped
# text of the default 11 pt font sets about 1.1 characters per width unit in Excel (Calibri) and in LibreOffice where
# Calibri is missing (DejaVu Sans, measured on its PDF); 1.12 (0.95 bold) leaves a little room for the wider fonts.  A line takes
# 1.2 times the font size, and a row 4 points more for the cell's padding.
CHARS_PER_WIDTH = 1.12
BOLD_CHARS_PER_WIDTH = 0.95
LINE_PITCH = 1.2
ROW_PADDING_PT = 4.0


def text_lines(text: str, width: float, size: float = 11, bold: bool = False) -> int:
    """The lines ``text`` wraps to in a cell ``width`` units wide (word by word, as spreadsheets wrap)."""
    per_line = max(1, int(width * (BOLD_CHARS_PER_WIDTH if bold else CHARS_PER_WIDTH) * 11 / size))
    lines = 0
    for paragraph in str(text).split("\n"):
        lines += 1
        used = 0
        for word in paragraph.split():
            if used and used + 1 + len(word) > per_line:
                lines += 1
                used = 0
            used += (1 if used else 0) + len(word)
            while used > per_line:  # a word longer than the line breaks inside
                lines += 1
                used -= per_line
    return max(lines, 1)


def printed_width(ws, first_col: int, last_col: int) -> float:
    """Width units of columns first_col..last_col (hidden ones print nothing)."""
    total = 0.0
    for j in range(first_col, last_col + 1):
        dim = ws.column_dimensions[get_column_letter(j)]
        total += 0 if dim.hidden else (dim.width or 8.43)  # 8.43: the spreadsheets' default width
    return total


def text_height(text: str, width: float, font=None) -> float:
    """Points a row needs to show ``text`` whole in a wrapped cell ``width`` units wide."""
    size = float(font.sz or 11) if font is not None else 11.0
    bold = bool(font is not None and font.b)
    return text_lines(text, width, size, bold) * LINE_PITCH * size + ROW_PADDING_PT


def fit_heights(ws, cached: Mapping[str, object], first_row: int = 1) -> None:
    """Each row holding wrapped text as high as its longest text needs (merged cells: their whole width), so
    nothing prints clipped; a formula's text is the value it shows when the file is written (``cached``).
    Spreadsheets do not re-measure the rows of a generated file, so the heights are written out."""
    spans = {(m.min_row, m.min_col): (m.min_col, m.max_col) for m in ws.merged_cells.ranges}
    hidden = {letter for letter, dim in ws.column_dimensions.items() if dim.hidden}
    need: dict[int, float] = {}
    # the cells written (a sheet's grid holds only those), not every position of its used range: a catalog sheet
    # has thousands of plain values and few wrapped texts
    for (r, col), c in ws._cells.items():
        if r < first_row or c.value is None or not c.has_style or not c.alignment.wrap_text or c.column_letter in hidden:
            continue
        text = c.value
        if isinstance(text, str) and text.startswith("="):
            text = cached.get(f"{ws.title}!{c.coordinate}")
        if not isinstance(text, str) or not text:
            continue
        first, last = spans.get((r, col), (col, col))
        need[r] = max(need.get(r, 0.0), text_height(text, printed_width(ws, first, last), c.font))
    for r, height in need.items():
        if height:
            ws.row_dimensions[r].height = max(height, 15.0)


def _note(ws, cell: str, text: str, last_col: str, height: float, font=None) -> None:
    """A long line of text, wrapped across columns A..last_col (merged), so it prints within the page."""
    ws[cell] = text
    row = ws[cell].row
    ws.merge_cells(f"{cell}:{last_col}{row}")
    ws[cell].alignment = top_aligned(wrap=True)
    ws.row_dimensions[row].height = height
    if font is not None:
        ws[cell].font = font


def resolved_offer_xl(gpu: str, offer: str, n_gpus: str = "1") -> str:
    """Excel text of the offer actually used: "auto" becomes the GPU's cheapest on-demand offer that sells ``n_gpus``
    as one job (GPUs sheet: auto_offer from 1 GPU, auto_offer_K from auto_offer_K_from GPUs, computed by
    core.catalog.auto_offer_steps; auto_offer when none sells that many), or "none" for a GPU without one."""
    row = f"MATCH({gpu},gpus_name,0)"
    auto = f"INDEX(gpus_auto_offer,{row})"
    for k in range(2, catalog.AUTO_OFFER_STEPS + 1):
        start = f"INDEX(gpus_auto_offer_{k}_from,{row})"
        auto = f"IF(AND({start}>0,{n_gpus}>={start},{n_gpus}<=INDEX(gpus_auto_offer_sells,{row})),INDEX(gpus_auto_offer_{k},{row}),{auto})"
    return f'IF({offer}="{catalog.AUTO_OFFER}",IF({auto}="","none",{auto}),{offer})'


def _scenario_ref(name: str) -> str:
    """A name of the scenario on Inputs as Excel text: the defined name, with offer "auto" resolved."""
    return resolved_offer_xl("gpu", "offer", "n_gpus") if name == "offer" else name


# an option's parallel layout: the planner's choice for its GPU (core.layout) when the job gives none
LAYOUT_COLS = ("pipeline_parallel", "expert_parallel")
# and its sharding: plain data parallel where one GPU holds the model with room to spare (core.layout)
OPTION_LAYOUT_COLS = (*LAYOUT_COLS, "sharding")
CANDIDATE_COLS = ("gpu", "n_gpus", "offer", "buy", *OPTION_LAYOUT_COLS)
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
    def of(cls, inputs: Mapping | None, options: list[Mapping]) -> Scenario:
        inputs = dict(inputs or {})
        values = core.resolve_inputs(inputs)  # canonical names; offer "auto" resolved; validates
        result = core.evaluate(inputs)
        given_offer = str(inputs.get("offer", catalog.AUTO_OFFER))
        offer_cell = catalog.AUTO_OFFER if given_offer.strip().lower() == catalog.AUTO_OFFER else values["offer"]
        options = [{**{n: int(values[n]) for n in LAYOUT_COLS}, "sharding": values["sharding"], **o}  # an option without a layout has the scenario's
                   for o in options]
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


def _inputs_sheet(wb: Workbook, ws, job: Scenario, lay: Layout) -> None:
    """Inputs: sections a reader knows, the inputs changed first at the top; the Compare sheet's candidate
    options to their right."""
    ws["A1"] = "Inputs: change the yellow cells"
    ws["A1"].font = Font(bold=True, size=14)
    _note(ws, "A2", "Every other number in this workbook follows these cells. The name column is what the formulas use "
                    "(the same names as gpu-tco's command line and scenario files). Where 0 means automatic, "
                    "the column in use shows the value the formulas use (Calc sheet).", "E", 30, NOTE_FONT)
    _head(ws, INPUTS_HEADER_ROW, ["input", "value", "in use", "unit", "what it means (and its source)", "allowed values",
                                  "name in formulas"])
    task = "serve" if job.values.get("task") == "serve" else "train"
    layout = input_layout(task)
    for section, heading_row, rows in layout:
        heading = ws.cell(row=heading_row, column=1, value=SECTION_TITLES[section].format(task=TASK_WORDS[task]))
        for j in range(1, 8):
            ws.cell(row=heading_row, column=j).fill = SECTION_FILL
        heading.font = Font(bold=True)
        for name, r in rows:
            _input_row(wb, ws, INPUTS_BY_NAME[name], r, job, lay)
    # printed: the task's inputs, down to the heading of the ones it does not use
    last_printed_row = layout[-1][1] - 1
    if task != "serve":  # a serving workbook's setups are on its Serving sheet
        _candidate_block(ws, job, lay)
    cand = [get_column_letter(CANDIDATE_FIRST_COL + j) for j in range(1 + len(CANDIDATE_COLS))]
    _widths(ws, {"A": 26, "B": 15, "C": 15, "D": 13, "E": 90, "F": 40, "G": 24, "H": 3,
                 cand[0]: 7, cand[1]: 16, cand[2]: 7, cand[3]: 30, cand[4]: 6, cand[5]: 16, cand[6]: 14, cand[7]: 10})
    fit_heights(ws, lay.cached)
    # printed: the columns a reader needs (label to meaning), as wide as the page; what is allowed (also in each value's
    # comment and checked when typed), the names and the options stay on screen
    page_setup(ws, f"A1:E{last_printed_row}", title_rows=f"{INPUTS_HEADER_ROW}:{INPUTS_HEADER_ROW}", fit_width=True)
    ws.protection.sheet = True


def _input_row(wb: Workbook, ws, inp, r: int, job: Scenario, lay: Layout) -> None:
    """One input's row: label, value (a named, validated yellow cell), value in use, unit, what is allowed, meaning."""
    values = job.values
    ws.cell(row=r, column=1, value=inp.label)
    v = job.offer_cell if inp.name == "offer" else values[inp.name]
    cell = put_text(ws.cell(row=r, column=2), v if inp.kind == "choice" else float(v))
    cell.fill = INPUT_FILL
    cell.protection = Protection(locked=False)
    cell.alignment = top_aligned("right" if inp.kind != "choice" else "left")
    cell.number_format = _input_format(inp)
    in_use = ws.cell(row=r, column=INPUT_IN_USE_COL)
    if inp.name in AUTO_QUANTITY:  # the value the formulas use: the input above 0, else the automatic one
        in_use.value = f"={AUTO_QUANTITY[inp.name]}"
        in_use.number_format = _input_format(inp)
        lay.cached[f"Inputs!{in_use.coordinate}"] = _plain(job.result[AUTO_QUANTITY[inp.name]])
    elif inp.name == "offer":
        in_use.value = "=" + resolved_offer_xl("gpu", "offer", "n_gpus")
        lay.cached[f"Inputs!{in_use.coordinate}"] = str(values["offer"])
    ws.cell(row=r, column=4, value="" if inp.unit in ("-", "flag") else inp.unit)
    allowed = inp.allowed() if inp.kind != "choice" else f"a name from the {CATALOG_SHEETS.get(inp.table, 'Tables')} sheet"
    if inp.name == "offer":
        allowed += ', or "auto" (the GPU\'s cheapest on-demand offer)'
    ws.cell(row=r, column=6, value=allowed)
    ws.cell(row=r, column=INPUT_NAME_COL, value=inp.name).font = NOTE_FONT
    source = cite(inp.source, short=True)  # full citations: docs/quantities.md, section References
    ws.cell(row=r, column=5, value=inp.description + (f". Source: {source}" if source else ""))
    for j in (1, 3, 4, 5, 6, 7):
        ws.cell(row=r, column=j).alignment = top_aligned(wrap=j in (1, 3, 5, 6))
    wb.defined_names[inp.name] = DefinedName(inp.name, attr_text=f"Inputs!$B${r}")
    # selecting the cell shows the input, its unit and what is allowed (the validation's input message, as Excel's
    # and Calc's own forms do it); its description is beside it (column E)
    _validate(ws, cell, inp.name, allowed, kind=inp.kind, table=inp.table, lo=inp.minimum, hi=inp.maximum,
              prompt=f"{inp.label}{_unit_line(inp.unit)}\nAllowed: {allowed}")


def _unit_line(unit: str) -> str:
    """The input message's unit line; none where the Inputs sheet's unit column is empty (a count, a name, a flag)."""
    return "" if unit in ("-", "flag") else f"\nUnit: {unit}"


def _candidate_block(ws, job: Scenario, lay: Layout) -> None:
    """The candidate options (the Compare sheet's rows) beside the inputs: option 1 is the scenario on the left."""
    first_col = CANDIDATE_FIRST_COL
    _head(ws, INPUTS_HEADER_ROW, ["option", *CANDIDATE_COLS], first_col=first_col, freeze=False)
    ws.cell(row=INPUTS_HEADER_ROW + len(job.options) + 2, column=first_col,
            value="Options 2+ are yours to change (buy: 1 = buy, 0 = rent; offer: a Cloud name or auto; pipeline and "
                  "expert parallel degrees and the sharding as the planner chose them).").font = NOTE_FONT
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
                put_text(c, opt[name] if name in ("gpu", "offer", "sharding") else int(opt[name]))
                c.fill = INPUT_FILL
                c.protection = Protection(locked=False)
                inp = INPUTS_BY_NAME[name]
                _validate(ws, c, name, "", kind=inp.kind, table=inp.table, lo=inp.minimum, hi=inp.maximum)


@functools.cache
def calc_formula(name: str) -> tuple[str, str]:
    """A quantity's formula on Calc and its readable text: functions of the formula alone (a catalog lookup is an INDEX
    over the catalog's named columns, whatever its rows), so rendered once per process, not once per workbook (about
    500 of them, a tenth of a workbook's time)."""
    q = QUANTITIES[name]
    return "=" + q.expr.xl(_scenario_ref), expr_text(q.expr)


def _calc_sheet(wb: Workbook, calc, job: Scenario, lay: Layout) -> None:
    """Calc: every quantity, a named live formula with its cached value."""
    _head(calc, 1, ["group", "quantity", "value", "unit", "description", "formula"])
    for i, (name, q) in enumerate(QUANTITIES.items(), start=2):
        calc.cell(row=i, column=1, value=q.group)
        calc.cell(row=i, column=2, value=name)
        formula, text = calc_formula(name)
        c = calc.cell(row=i, column=3, value=formula)
        c.number_format = _number_format(q.unit)
        calc.cell(row=i, column=4, value=q.unit)
        calc.cell(row=i, column=5, value=q.description)
        calc.cell(row=i, column=6, value=text)
        wb.defined_names[name] = DefinedName(name, attr_text=f"Calc!$C${i}")
        lay.cached[f"Calc!C{i}"] = _plain(job.result[name])
    _widths(calc, {"A": 16, "B": 32, "C": 26, "D": 12, "E": 46, "F": 46})
    for row in calc.iter_rows(min_row=2, min_col=1, max_col=6):
        for c in row:  # every cell of a row at the top, next to its wrapped description
            c.alignment = top_aligned(wrap=c.column >= 5)
    fit_heights(calc, lay.cached, 2)
    not_in_default_print(calc, 6, title_rows="1:1")
    calc.protection.sheet = True


def _plain(v):
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (str, np.str_)):
        return str(v)
    return float(v)
BY_NAME_ZERO_OR_MIN = {i.name: i.zero_or_min for i in INPUTS}


# Excel refuses a file whose input message passes its Data Validation dialog's limits: a title of 32 characters
# (this one is shorter), a message of 255
PROMPT_MAX_CHARS = 255
PROMPT_TITLE = "What this cell takes"


def _validate(ws, cell, name: str, allowed: str, kind: str, table: str | None, lo, hi, prompt: str = "") -> None:
    """Data validation for an input cell: catalog list, 0/1 flag or numeric range; ``prompt``: the message shown
    while the cell is selected (cut to the length Excel takes)."""
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
    dv.error = f"{name}: allowed {allowed or INPUTS_BY_NAME[name].allowed()}"
    dv.errorTitle, dv.showErrorMessage = "gpu-tco", True
    if prompt:
        dv.promptTitle, dv.showInputMessage = PROMPT_TITLE, True
        dv.prompt = prompt if len(prompt) <= PROMPT_MAX_CHARS else prompt[:PROMPT_MAX_CHARS - 3] + "..."
    ws.add_data_validation(dv)
    dv.add(cell)


AUTO_COLUMNS = ["auto_offer", *[c for k in range(2, catalog.AUTO_OFFER_STEPS + 1)
                                 for c in (f"auto_offer_{k}", f"auto_offer_{k}_from")], "auto_offer_sells"]


def _auto_step(gpu_row: int, col: str):
    """A GPU's size step of the offer "auto" (AUTO_COLUMNS): the offer's name, the GPU count it starts at (0: no such
    step), or the largest job any of its offers sells (1e9: no limit)."""
    steps, most = catalog.auto_offer_steps(gpu_row)
    if col == "auto_offer_sells":
        return float(min(most, 1e9))
    k = int(col.split("_")[2]) - 1
    if k >= len(steps):
        return 0 if col.endswith("_from") else ""
    return steps[k][0] if col.endswith("_from") else catalog.offers().names[steps[k][1]]


def _listed_offer_rows(tabs: Mapping, named: str = "") -> list:
    """The Cloud sheet's rows: every offer but those no planner weighs (core.offer_rows_left_out: each costs at least
    as much as 25 offers alike, so no answer names it; a refresh of 100,000 instances lists a few thousand), and
    the offer the scenario names whatever it costs."""
    from gpu_tco.core import offer_rows_left_out
    left_out = offer_rows_left_out()
    rows = tabs["offers"].rows
    return rows if not left_out else [row for i, row in enumerate(rows) if i not in left_out or row["name"] == named]


def _catalog_sheets(wb: Workbook, tabs: Mapping, extra: Mapping | None = None, offer: str = "") -> None:
    """The catalogs as plain ranges; each column a defined name <table>_<column> with spare rows.
    ``extra``: rows to add after a table's own (a model the scenario gives outside the catalog); ``offer``: the
    scenario's offer, listed even where the planners leave it out (``_listed_offer_rows``)."""
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
        cols = list(table.columns) + (AUTO_COLUMNS if tname == "gpus" else [])
        rows = (_listed_offer_rows(tabs, offer) if tname == "offers" else list(table.rows)) + list(extra.get(tname, []))
        last = len(rows) + 1 + SPARE_ROWS
        for j, col in enumerate(cols):
            h = sheet.cell(row=1, column=origin_col + j, value=col)
            h.fill, h.font = HEAD_FILL, HEAD_FONT
            for i, row in enumerate(rows, start=2):
                if col == "auto_offer":  # the offer "auto" picks for this GPU (core.catalog.reference_offer_rows)
                    value = tabs["offers"].names[int(auto_offer[i - 2])]
                elif col in AUTO_COLUMNS:  # the offers "auto" picks for larger jobs (core.catalog.auto_offer_steps)
                    value = _auto_step(i - 2, col) if i - 2 < len(table.rows) else ""
                else:
                    value = row.get(col, "" if col in catalog.TEXT_COLUMNS else 0)
                put_text(sheet.cell(row=i, column=origin_col + j), value)
            letter = get_column_letter(origin_col + j)
            if col in ("name", "price_type", *AUTO_COLUMNS) or col in table.numeric or (tname, col) in (
                    ("apis", "as_of"), ("weight_dtypes", "accuracy_effect"), ("engines", "label")):
                # price_type, the API's date and a weight format's accuracy effect: read by the Start answers
                ref = f"'{sheet.title}'!${letter}$2:${letter}${last}"
                wb.defined_names[f"{tname}_{col}"] = DefinedName(f"{tname}_{col}", attr_text=ref)
            sheet.column_dimensions[letter].width = (30 if col in ("name", "source", "auto_offer", "description")
                                                     else 10 if col == "aliases" else 13)
        if sheet is not small:
            sheet.freeze_panes = "B2"
            not_in_default_print(sheet, len(cols), title_rows="1:1")
    not_in_default_print(small, max(small_col - 1, 1), title_rows="1:1")


def _start_ages(ws, tabs: Mapping, r: int, offer: str = "") -> int:
    """From row r: how old the catalogs and prices are (``offer``: the scenario's, listed on Cloud whatever it costs);
    returns the next free row after a blank one."""
    ws.cell(row=r, column=1, value="How old the numbers are").font = Font(bold=True, size=12)
    today = _dt.date.today()
    lines = []
    for t, sheet in CATALOG_SHEETS.items():
        dates = sorted({str(x.get("as_of", "")) for x in tabs[t].rows if x.get("as_of")}) or ["-"]
        listed, total = (len(_listed_offer_rows(tabs, offer)), len(tabs[t].rows)) if t == "offers" else (len(tabs[t].rows),) * 2
        left = (f" ({total - listed} offers that cost at least as much as 25 offers alike are left out: no answer "
                "names them)") if listed < total else ""
        lines.append(f"{sheet} sheet: {listed} rows{left}, as of {dates[0]} to {dates[-1]}; each row names its source.")
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
