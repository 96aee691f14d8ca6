"""A generated demo workbook for add-in users: every GPU_* function in use, next to labelled inputs.

The formulas need the gpu-tco add-in (classic xlwings or xlwings Lite); every single-cell
example also stores the value gpu-tco computed, so the file reads before the add-in runs.
Range examples are classic array formulas (Ctrl+Shift+Enter style), which every Excel
version computes without dynamic arrays.
"""
from __future__ import annotations

import os
from pathlib import Path

from openpyxl import Workbook
from openpyxl.styles import Font
from openpyxl.worksheet.formula import ArrayFormula

from gpu_tco.workbooks.xlsx import HEAD_FILL, HEAD_FONT, INPUT_FILL, check_target, page_setup, save_atomically

from .functions import FUNCTIONS, call

# labelled inputs the examples refer to: (label, value)
DEMO_INPUTS = [("gpu", "H100-SXM"), ("n_gpus", 8), ("model", "Llama-3-70B"), ("method", "lora"), ("tokens", 1e8),
               ("months", 36), ("hours_per_day", 12), ("usd_per_kwh", 0.15), ("usd_per_gpu_hour_rented", 2.99),
               ("context_tokens", 8192), ("batch", 16), ("offer", "Lambda 8x H100 SXM"), ("job_hours", 24),
               ("api_usd_per_mtok", 0.60), ("requests_per_s", 20), ("prompt_tokens", 1000), ("output_tokens", 200),
               ("ttft_slo_ms", 2000), ("tpot_slo_ms", 50)]
# function -> the inputs passed, in its argument order (None = left empty: the default)
EXAMPLES = {
    "GPU_TCO": ["gpu", "n_gpus", "months", "hours_per_day", "usd_per_kwh"],
    "GPU_OWN_HOURLY": ["gpu", "n_gpus", "months", "hours_per_day"],
    "GPU_CLOUD_COST": ["offer", "job_hours", "n_gpus"],
    "GPU_BREAKEVEN": ["gpu", "usd_per_gpu_hour_rented", "n_gpus", "hours_per_day"],
    "GPU_WHOLE_SERVERS": ["gpu", "n_gpus"],
    "GPU_COST_PER_MTOK": ["model", "gpu", "n_gpus", "usd_per_gpu_hour_rented", "batch", "context_tokens"],
    "GPU_API_BREAKEVEN": ["model", "gpu", "n_gpus", "api_usd_per_mtok", "usd_per_gpu_hour_rented", "hours_per_day", "batch"],
    "GPU_API_BREAKEVEN_OWNED": ["model", "gpu", "n_gpus", "api_usd_per_mtok", "months", "usd_per_kwh", "batch"],
    "GPU_MEMORY_TRAIN": ["model", "method"],
    "GPU_MEMORY_INFER": ["model", "context_tokens", "batch"],
    "GPU_KV_CACHE": ["model", "context_tokens", "batch"],
    "GPUS_NEEDED": ["model", "gpu", "method"],
    "GPU_TRAIN_FIT": ["model", "gpu", "n_gpus", "method"],
    "GPU_NETWORK": ["gpu", "n_gpus"],
    "GPU_TRAIN_HOURS": ["model", "tokens", "gpu", "n_gpus", "method"],
    "GPU_TRAIN_HOURS_LOW": ["model", "tokens", "gpu", "n_gpus", "method"],
    "GPU_TRAIN_HOURS_HIGH": ["model", "tokens", "gpu", "n_gpus", "method"],
    "GPU_TOKENS_PER_SEC": ["model", "gpu", "n_gpus"],
    "GPU_SPEC": ["gpu"],
    "MODEL_SPEC": ["model"],
    "GPU_EXPLAIN": [],
    "GPU_SERVE_PLAN": ["model", "requests_per_s", "prompt_tokens", "output_tokens", "ttft_slo_ms", "tpot_slo_ms"],
}


def _store_array(ws, cached: dict, top: int, left: int, rows: list, number_format: str) -> None:
    """The values an array formula computes, stored with it (the first cell as its cached value, the others
    as the range's values), so the workbook reads before the add-in runs."""
    for i, row in enumerate(rows):
        for j, value in enumerate(row if isinstance(row, list) else [row]):
            cell = ws.cell(row=top + i, column=left + j)
            if i == 0 and j == 0:
                cached[f"{ws.title}!{cell.coordinate}"] = value
            else:
                cell.value = value if not isinstance(value, str) or not value.startswith("=") else "'" + value
            if isinstance(value, float):
                cell.number_format = number_format


def build_demo() -> tuple[Workbook, dict]:
    wb = Workbook()
    ws = wb.active
    ws.title = "Functions"
    ws["A1"] = "gpu-tco Excel functions: examples"
    ws["A1"].font = Font(bold=True, size=14)
    ws["A2"] = ("Needs the gpu-tco add-in (docs/excel.md). Change the yellow inputs; the examples follow. "
                "Values shown before the add-in runs were computed by gpu-tco when this file was generated.")
    cached: dict[str, object] = {}
    for j, head in enumerate(["input", "value"], start=1):
        c = ws.cell(row=4, column=j, value=head)
        c.fill, c.font = HEAD_FILL, HEAD_FONT
    cell_of, value_of = {}, {}
    for i, (label, value) in enumerate(DEMO_INPUTS, start=5):
        ws.cell(row=i, column=1, value=label)
        c = ws.cell(row=i, column=2, value=value)
        c.fill = INPUT_FILL
        cell_of[label], value_of[label] = f"$B${i}", value
    top = 4
    for j, head in enumerate(["function", "example formula", "result", "unit", "what it returns"], start=4):
        c = ws.cell(row=top, column=j, value=head)
        c.fill, c.font = HEAD_FILL, HEAD_FONT
    r = top + 1
    for name, used in EXAMPLES.items():
        func = FUNCTIONS[name]
        # arguments up to the last one used, the others left empty (their defaults)
        names = [("offer_or_gpu" if a == "offer" else a) for a in used]
        positions = [func.args.index(n) if n in func.args else func.args.index("offer_or_gpu") for n in names]
        args = [""] * (max(positions) + 1 if positions else 0)
        values = [None] * len(args)
        for label, pos in zip(used, positions):
            args[pos], values[pos] = cell_of[label], value_of[label]
        formula = f"={name}({','.join(args)})"
        ws.cell(row=r, column=4, value=name).font = Font(bold=True)
        text = ws.cell(row=r, column=5, value=formula.replace("$", ""))
        text.data_type = "s"  # shown as text: the formula to type
        c = ws.cell(row=r, column=6, value=formula)
        cached[f"Functions!{c.coordinate}"] = call(name, *values)
        c.number_format = "#,##0.00" if isinstance(cached[f"Functions!{c.coordinate}"], float) else "General"
        ws.cell(row=r, column=7, value=func.unit)
        ws.cell(row=r, column=8, value=func.doc)
        r += 1

    # ranges: one call over a column (array formula), and the planner's table
    r += 2
    ws.cell(row=r, column=4, value="One call over a range (array formula over F:F)").font = Font(bold=True)
    models = ["Llama-3.2-1B", "Llama-3-8B", "Mistral-7B", "Llama-3-70B", 405]
    for k, m in enumerate(models, start=r + 1):
        ws.cell(row=k, column=5, value=m).fill = INPUT_FILL
    first, last = r + 1, r + len(models)
    ws[f"F{first}"] = ArrayFormula(f"F{first}:F{last}", f"=GPU_MEMORY_TRAIN(E{first}:E{last},{cell_of['method']})")
    _store_array(ws, cached, first, 6, call("GPU_MEMORY_TRAIN", [[m] for m in models], value_of["method"]), "#,##0.0")
    ws.cell(row=r, column=6, value="GiB per GPU")
    r = last + 2
    ws.cell(row=r, column=4, value="GPU_PLAN: the ranked options (array formula, 6 rows x 11 columns)").font = Font(bold=True)
    ws[f"D{r + 1}"] = ArrayFormula(f"D{r + 1}:N{r + 6}", f"=GPU_PLAN({cell_of['model']},{cell_of['method']},{cell_of['tokens']},,,,,,5)")
    planned = call("GPU_PLAN", value_of["model"], value_of["method"], value_of["tokens"], None, None, None, None, None, 5)
    _store_array(ws, cached, r + 1, 4, [row[:11] for row in planned[:6]], "#,##0.00")
    ws.cell(row=r + 8, column=4, value="More: GPU_LIST(), MODEL_LIST(), GPU_MEMORY_TRAIN(...,\"all\") return tables the same way.")
    for col, width in zip("ABCDEFGH", (24, 20, 3, 22, 60, 16, 10, 100)):
        ws.column_dimensions[col].width = width
    ws.sheet_properties.tabColor = "1F4E78"
    page_setup(ws, f"A1:H{r + 8}", title_rows="4:4")
    ws.freeze_panes = "A5"
    wb.properties.creator = "gpu-tco"
    return wb, cached


def write_demo(path: str | os.PathLike) -> Path:
    """Write the demo workbook atomically (same rules and errors as the main workbook)."""
    target = check_target(path)
    wb, cached = build_demo()
    return save_atomically(wb, cached, target)
