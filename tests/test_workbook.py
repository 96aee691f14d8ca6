"""The generated workbook, recalculated by real LibreOffice and compared with core.

Every quantity is a named formula cell on the Calc sheet; LibreOffice recomputes it
(forced full recalculation, see tests/lo.py) and the value must equal core.evaluate
for the same inputs to 1e-9.
"""
from __future__ import annotations

import math
import random
import stat
import zipfile
from pathlib import Path

import pytest
from openpyxl import load_workbook
from openpyxl.formula import Tokenizer

import core
from core import catalog
from core.formulas import QUANTITIES
from core.inputs import INPUTS
from lo import convert
from test_formula_layer import random_config
from workbooks import WorkbookError, write_workbook

ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"
ERRORS = ("#NAME?", "#REF!", "#VALUE!", "#DIV/0!", "#N/A", "#NUM!", "Err:")
PORTABLE = {"INDEX", "MATCH", "IF", "AND", "OR", "NOT", "MIN", "MAX", "CEILING", "FLOOR", "SQRT"}

EDGE_CASES = [
    {},  # the defaults
    {"model": "Llama-3.2-1B", "gpu": "RTX-3090", "n_gpus": 1},
    {"model": "Llama-3.1-405B", "gpu": "B200", "n_gpus": 64, "method": "full", "tensor_parallel": 8},
    {"gpu": "H100-SXM", "n_gpus": 1, "depreciation": "straight_line", "residual_pct": 0, "hours_per_day": 24},
    {"gpu": "RTX-4090", "n_gpus": 4096, "buy": 1, "budget_usd": 1000, "deadline_hours": 1},
    {"offer": "AWS p5.48xlarge spot", "n_gpus": 5, "discount_rate_pct": 8, "months": 60},
    {"gpu": "MI325X", "buy": 1},  # no purchase price, no offer
]


def _rel_equal(a, b) -> bool:
    a, b = float(a), float(b)
    if math.isinf(b) or math.isnan(b):
        return False
    return a == b or abs(a - b) <= 1e-9 * max(abs(a), abs(b), 1e-300)


def _calc_values(path: Path) -> dict:
    wb = load_workbook(path, data_only=True)
    ws = wb["Calc"]
    return {ws.cell(row=i, column=2).value: ws.cell(row=i, column=3).value for i in range(2, ws.max_row + 1)}


def _error_cells(path: Path) -> list[str]:
    wb = load_workbook(path, data_only=True)
    bad = []
    for ws in wb.worksheets:
        for row in ws.iter_rows():
            for c in row:
                if isinstance(c.value, str) and c.value.startswith(ERRORS):
                    bad.append(f"{ws.title}!{c.coordinate}={c.value}")
    return bad


def _assert_matches_core(path: Path, cfg: dict) -> None:
    ref = core.evaluate(cfg)
    got = _calc_values(path)
    wrong = [(n, got.get(n), ref[n]) for n in QUANTITIES if not _rel_equal(got.get(n) if got.get(n) is not None else math.nan, ref[n])]
    assert not wrong, wrong[:5]
    assert not _error_cells(path)


def test_50_random_scenarios_and_edge_cases_recalculate_to_core(tmp_path):
    scenarios = [random_config(random.Random(9000 + i)) for i in range(50)] + EDGE_CASES
    files = [write_workbook(tmp_path / f"s{i:02d}.xlsx", cfg) for i, cfg in enumerate(scenarios)]
    out = convert(files, tmp_path / "recalc")
    for cfg, path in zip(scenarios, out):
        _assert_matches_core(path, cfg)


def test_what_if_changed_inputs_recalculate_to_core_at_the_new_inputs(tmp_path):
    path = write_workbook(tmp_path / "book.xlsx")
    wb = load_workbook(path)
    ws = wb["Inputs"]
    change = {"gpu": "A100-80GB-SXM", "n_gpus": 16, "usd_per_kwh": 0.31, "hours_per_day": 6, "offer": "Lambda 8x A100 80GB SXM",
              "method": "full", "tokens": 3e8, "months": 24, "depreciation": "straight_line"}
    rows = {ws.cell(row=i, column=1).value: i for i in range(2, ws.max_row + 1)}
    for name, value in change.items():
        ws.cell(row=rows[name], column=2, value=value)
    wb.save(tmp_path / "whatif.xlsx")
    (out,) = convert([tmp_path / "whatif.xlsx"], tmp_path / "recalc")
    _assert_matches_core(out, change)
    assert _calc_values(out)["own_tco_usd"] != pytest.approx(core.evaluate()["own_tco_usd"])


def test_a_user_added_gpu_row_flows_through(tmp_path):
    path = write_workbook(tmp_path / "book.xlsx")
    wb = load_workbook(path)
    gpus = wb["GPUs"]
    header = [c.value for c in gpus[1]]
    new_row = gpus.max_row + 1
    mine = {"name": "MyCard-48", "memory_gib": 48, "memory_bandwidth_gbps": 1200, "bf16_dense_tflops": 250,
            "tf32_dense_tflops": 125, "tdp_w": 400, "default_mfu": 0.35, "purchase_usd": 9000, "multi_gpu_fabric": 0}
    for j, col in enumerate(header, start=1):
        gpus.cell(row=new_row, column=j, value=mine.get(col, "" if col in catalog.TEXT_COLUMNS else 0))
    inputs = wb["Inputs"]
    rows = {inputs.cell(row=i, column=1).value: i for i in range(2, inputs.max_row + 1)}
    inputs.cell(row=rows["gpu"], column=2, value="MyCard-48")
    inputs.cell(row=rows["offer"], column=2, value="none")
    inputs.cell(row=rows["usd_per_gpu_hour_rented"], column=2, value=1.1)
    wb.save(tmp_path / "mine.xlsx")
    (out,) = convert([tmp_path / "mine.xlsx"], tmp_path / "recalc")
    try:
        catalog.gpus().add(mine)
        _assert_matches_core(out, {"gpu": "MyCard-48", "offer": "none", "usd_per_gpu_hour_rented": 1.1})
    finally:
        catalog.reload()
    assert _calc_values(out)["gpu_memory_gib"] == 48


def test_formulas_use_only_portable_functions_and_names():
    wb, _ = __import__("workbooks").build_workbook()
    names = set(wb.defined_names.keys())
    for ws in wb.worksheets:
        for row in ws.iter_rows():
            for c in row:
                if isinstance(c.value, str) and c.value.startswith("="):
                    tokens = Tokenizer(c.value).items
                    funcs = {t.value.rstrip("(").upper() for t in tokens if t.type == "FUNC" and t.subtype == "OPEN"}
                    assert funcs <= PORTABLE, (ws.title, c.coordinate, funcs - PORTABLE)
                    operands = {t.value for t in tokens if t.type == "OPERAND" and t.subtype == "RANGE"}
                    assert operands <= names, (ws.title, c.coordinate, operands - names)
                    assert "[" not in c.value  # no external workbook links


def test_safe_to_email_and_cached_values_present(tmp_path):
    path = write_workbook(tmp_path / "book.xlsx")
    with zipfile.ZipFile(path) as z:
        listing = z.namelist()
        assert not any("vbaProject" in n or "externalLink" in n for n in listing)
        props = z.read("docProps/core.xml").decode()
        sheets = "".join(z.read(n).decode() for n in listing if n.startswith("xl/worksheets/"))
    import getpass
    import socket
    for private in {getpass.getuser(), socket.gethostname(), str(Path.home())} - {"", "root"}:
        # whole text nodes and attribute values, so a short host name like "vm" does not match "xmlns:vml"
        for text in (props, sheets):
            assert f">{private}<" not in text and f'"{private}"' not in text and (len(private) < 4 or private not in text)
    assert "<dc:creator>gpu-tco</dc:creator>" in props
    # every Calc formula carries core's value, so a viewer that does not recalculate shows numbers
    wb = load_workbook(path, data_only=True)
    values = _calc_values(path)
    ref = core.evaluate()
    assert all(_rel_equal(values[n], ref[n]) for n in QUANTITIES)
    assert wb["Inputs"].protection.sheet and not wb["Inputs"]["B2"].protection.locked


def test_unwritable_targets_give_clear_errors_and_leave_no_file(tmp_path):
    with pytest.raises(WorkbookError, match="does not exist"):
        write_workbook(tmp_path / "missing" / "book.xlsx")
    with pytest.raises(WorkbookError, match="xlsx"):
        write_workbook(tmp_path / "book.xlsm")
    ro = tmp_path / "ro"
    ro.mkdir()
    (ro / "book.xlsx").write_bytes(b"old")
    ro.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        if not __import__("os").access(ro, __import__("os").W_OK):  # root ignores permissions
            with pytest.raises(WorkbookError, match="cannot"):
                write_workbook(ro / "book.xlsx")
            assert (ro / "book.xlsx").read_bytes() == b"old"
    finally:
        ro.chmod(stat.S_IRWXU)
    with pytest.raises(core.InputError, match="gpu: unknown"):
        write_workbook(tmp_path / "bad.xlsx", {"gpu": "H1000"})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ro"]  # no temporary or half-written file


def test_inputs_sheet_lists_every_input_with_validation():
    wb, _ = __import__("workbooks").build_workbook()
    ws = wb["Inputs"]
    names = [ws.cell(row=i, column=1).value for i in range(2, ws.max_row + 1)]
    assert names == [i.name for i in INPUTS]
    assert len(ws.data_validations.dataValidation) == len(INPUTS)
    assert all(ws.cell(row=i, column=2).comment for i in range(2, ws.max_row + 1))


def test_cli_workbook_scenario_files_and_main_job(tmp_path):
    import json as _json
    import subprocess
    import sys
    root = Path(__file__).resolve().parents[1]
    (tmp_path / "s.toml").write_text('gpu = "A100-80GB-SXM"\nn_gpus = 16\nusd_per_kwh = 0.2\n')
    run = lambda *a: subprocess.run([sys.executable, "-m", "core.cli", *a], capture_output=True, text=True, cwd=root, timeout=120)  # noqa: E731
    out = run("workbook", "--out", str(tmp_path / "t.xlsx"), "--scenario", str(tmp_path / "s.toml"))
    assert out.returncode == 0, out.stderr
    values = _calc_values(tmp_path / "t.xlsx")  # cached values written by the generator
    assert values["own_tco_usd"] == pytest.approx(core.evaluate(gpu="A100-80GB-SXM", n_gpus=16, usd_per_kwh=0.2)["own_tco_usd"])
    (tmp_path / "bad.json").write_text(_json.dumps({"gpu": "H1000"}))
    bad = run("workbook", "--out", str(tmp_path / "b.xlsx"), "--scenario", str(tmp_path / "bad.json"))
    assert bad.returncode == 2 and 'gpu: unknown "H1000"' in bad.stderr and "Traceback" not in bad.stderr
    main = run("--workbook", str(tmp_path / "main.xlsx"))
    assert main.returncode == 0 and str(tmp_path / "main.xlsx") in main.stdout
    assert (tmp_path / "main.xlsx").exists()
