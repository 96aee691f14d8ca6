"""The Excel functions (addin/): values equal core, ranges broadcast, errors stay in their cells,
registration as Excel would see it (real xlwings.udfs decorators and VBA generator), the
xlwings Lite build in a fresh interpreter, the installer's config writer, the demo workbook."""
from __future__ import annotations

import importlib
import io
import math
import os
import re
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lo import book
from openpyxl import load_workbook

from gpu_tco import core
from gpu_tco.addin.codegen import param_name
from gpu_tco.addin.functions import FUNCTIONS, INFER_COMPONENTS, MAX_TEXT, TRAIN_COMPONENTS, call

ROOT = Path(__file__).resolve().parents[1]
QUANTITY_FUNCTIONS = {n: f for n, f in FUNCTIONS.items() if f.result}


def _close(a, b) -> bool:
    return a == b or abs(a - b) <= 1e-12 * max(abs(a), abs(b))


def test_every_function_without_arguments_gives_the_default_scenario():
    default = core.evaluate()
    for name, func in QUANTITY_FUNCTIONS.items():
        assert _close(call(name), float(default[func.result])), name
    assert call("GPU_SPEC") == core.catalog.tables()["gpus"].rows[core.catalog.tables()["gpus"].find(core.DEFAULTS["gpu"])]["memory_gib"]
    assert call("GPU_EXPLAIN").startswith("own_tco_usd [USD] = own_capital_usd")
    assert call("GPU_LIST")[0][0] == "name" and len(call("GPU_LIST")) == core.catalog.tables()["gpus"].file_rows + 1


GRID = [
    {"gpu": "H100-SXM", "n_gpus": 8, "model": "Llama-3-70B", "method": "lora"},
    {"gpu": "RTX-4090", "n_gpus": 2, "model": "Llama-3-8B", "method": "qlora", "months": 24, "hours_per_day": 20},
    {"gpu": "A100-80GB-SXM", "n_gpus": 16, "model": 13, "method": "full", "usd_per_kwh": 0.3, "pue": 1.5},
    {"gpu": "MI300X", "n_gpus": 1, "model": "Mistral-7B", "batch": 64, "context_tokens": 32768, "kv_dtype": "fp8"},
    {"gpu": "L40S", "n_gpus": 4, "usd_per_gpu_hour_rented": 1.2, "job_hours": 30, "tokens": 5e8, "mfu": 0.3},
]


def _args(func, cfg: dict) -> list:
    return [cfg.get("gpu") if a == "offer_or_gpu" else cfg.get(a) for a in func.args]


def test_each_function_equals_core_on_a_grid_of_inputs_single_cells_and_ranges():
    for name, func in QUANTITY_FUNCTIONS.items():
        expected = []
        for cfg in GRID:
            inputs = {a: cfg[a] for a in func.args if a in cfg}
            if "offer_or_gpu" in func.args:
                inputs["gpu"] = cfg["gpu"]
            if "weights_dtype" in func.args:  # an inference function: as released, requests of the context given
                inputs = core.inference_inputs(inputs)
            r = core.evaluate(inputs)
            # a training job's time or cost where the job does not fit: core's words, not a number
            gap = core.fit_gaps({**r, **{k: inputs[k] for k in core.FIT_INPUTS if k in inputs}}, [func.result])
            expected.append(gap[func.result] if gap else float(r[func.result]))
            got = call(name, *_args(func, cfg))
            assert got == expected[-1] if gap else _close(got, expected[-1]), (name, cfg, got)
        # the same grid as one call over ranges (columns), one vectorised evaluation
        columns = [[[cfg.get("gpu") if a == "offer_or_gpu" else cfg.get(a)] for cfg in GRID] for a in func.args]
        got = [row[0] for row in call(name, *columns)]
        assert [g for g in got if isinstance(g, str)] == [e for e in expected if isinstance(e, str)], name
        assert [g for g in got if not isinstance(g, str)] == pytest.approx([e for e in expected if not isinstance(e, str)],
                                                                           rel=1e-12), name


def test_ranges_broadcast_like_excel_and_keep_their_orientation():
    models = [["Llama-3-8B"], ["Llama-3-70B"]]
    contexts = [[4096, 8192, 32768]]
    table = call("GPU_KV_CACHE", models, contexts, 1)
    assert np.shape(table) == (2, 3)
    for i, m in enumerate(("Llama-3-8B", "Llama-3-70B")):
        for j, c in enumerate((4096, 8192, 32768)):
            assert _close(table[i][j], core.evaluate(model=m, context_tokens=c, batch=1)["kv_cache_gib"])
    row = call("GPU_TCO", [["H100-SXM", "A100-80GB-SXM"]], 8)
    assert np.shape(row) == (1, 2)
    assert call("GPU_TCO", [["H100-SXM"], ["B200"]], [[1], [2], [3]]).startswith("#INPUT! ranges of different sizes")


def test_bad_rows_carry_their_own_error_and_the_rest_compute():
    gpus = [["H100-SXM"], ["H1000"], [None], ["RTX-4090"]]
    counts = [[8], [8], [8], [-1]]
    out = [r[0] for r in call("GPU_TCO", gpus, counts)]
    assert _close(out[0], core.evaluate(gpu="H100-SXM", n_gpus=8)["own_tco_usd"])
    assert out[1] == '#INPUT! gpu: unknown "H1000" (did you mean H100-SXM, H100-NVL, H100-PCIe?); allowed: a name from the gpus catalog'
    assert _close(out[2], core.evaluate(n_gpus=8)["own_tco_usd"])  # empty cell: the default GPU
    assert out[3].startswith("#INPUT! n_gpus: -1 is too small")
    # a cross-field error (the offer rents another GPU) marks only its row
    mixed = [r[0] for r in call("GPU_CLOUD_COST", [["Lambda 8x H100 SXM"], ["RTX-4090"]], 10, 8)]
    assert all(isinstance(v, float) for v in mixed)
    tp = [r[0] for r in call("GPU_MEMORY_TRAIN", "Llama-3-70B", "lora", 2048, 1, [[8], [6]])]
    assert isinstance(tp[0], float) and isinstance(tp[1], float)


def test_a_mig_slice_in_a_range_is_checked_with_its_own_rows_count():
    """A GPU name is checked on its own, not with the default count of 8 (which no MIG slice runs): a slice in a range
    gives what its single cell gives, and a row asking for two slices names the count it asked for."""
    mig = next(g["name"] for g in core.catalog.tables()["gpus"].rows if core.catalog.mig_profile(g))
    one = [r[0] for r in call("GPU_CLOUD_COST", [[mig], ["H100-SXM"]], 100, [[1], [1]])]
    assert one == [call("GPU_CLOUD_COST", mig, 100, 1), call("GPU_CLOUD_COST", "H100-SXM", 100, 1)]
    two = [r[0] for r in call("GPU_CLOUD_COST", [[mig], ["H100-SXM"]], 100, [[2], [2]])]
    with pytest.raises(core.InputError) as alone:
        core.evaluate({"gpu": mig, "n_gpus": 2})
    assert two[0] == f"#INPUT! {alone.value}" and two[0].startswith("#INPUT! n_gpus: 2 is more than one slice")
    assert two[1] == call("GPU_CLOUD_COST", "H100-SXM", 100, 2)


COLUMN_CELLS = st.one_of(st.sampled_from(["H100-SXM", "RTX-4090", " L40S ", "h100", "no-such-gpu", "", "8"]),
                         st.floats(allow_nan=True, allow_infinity=True), st.integers(-5, 5000), st.none(), st.booleans())


@pytest.mark.slow  # over 0.45 s
@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(COLUMN_CELLS, COLUMN_CELLS, COLUMN_CELLS), min_size=2, max_size=12))
def test_column_fast_path_equals_the_cell_by_cell_path(rows):
    """Columns of plain names and numbers take a one-pass path; anything else (blanks, text numbers, NaN, a name
    core refuses) falls back to the cell-by-cell path.  Either way every cell gets what the general path gives."""
    from gpu_tco.addin import functions as addin
    func = FUNCTIONS["GPU_TCO"]
    gpus, counts, hours = ([[r[i]] for r in rows] for i in range(3))
    named = dict(zip(func.args, (gpus, counts, None, hours)))
    assert call("GPU_TCO", gpus, counts, None, hours) == addin._vector(func, named, False)
    clean = [[g] for g in ["H100-SXM", "RTX-4090", " L40S "] * 4], [[float(k)] for k in range(1, 13)]
    fast = addin._columns_fast(func, dict(zip(func.args, clean)))
    assert fast is not None and fast == addin._vector(func, dict(zip(func.args, clean)), False)


def test_error_texts_name_the_argument_and_suggest():
    cases = {
        ("GPU_TCO", "H1000"): "gpu: unknown",
        ("GPU_CLOUD_COST", "Lamda 8x H100"): "offer_or_gpu: unknown \"Lamda 8x H100\" (did you mean Lambda",
        ("GPU_MEMORY_TRAIN", "Llama-3-8B", "lorra"): "method: unknown",
        ("GPU_MEMORY_TRAIN", None, None, None, None, None, None, None, None, None, None, "weight"): "component: unknown \"weight\" (did you mean weights",
        ("GPU_MEMORY_INFER", None, None, None, None, None, None, "kv"): "component: unknown \"kv\" (did you mean kv_cache",
        ("GPU_TOKENS_PER_SEC", None, None, None, "decod"): "mode: unknown \"decod\" (did you mean decode",
        ("GPU_SPEC", "H100", "bf16"): "field: unknown \"bf16\" (did you mean bf16_dense_tflops",
        ("GPU_EXPLAIN", "kv_cache"): "quantity: unknown \"kv_cache\" (did you mean kv_cache_gib",
        ("GPU_PLAN", None, None, None, None, None, None, None, None, -1): "top: -1 is too small",
        ("GPU_KV_CACHE", "Llama-3-8B", -5): "context_tokens: -5 is too small",
        ("GPU_TCO", "H100", 8, 1, 2, 3, 4, 5, 6, 7, 8, 9): "at most 10 arguments",
    }
    for (name, *args), expected in cases.items():
        text = call(name, *args)
        assert isinstance(text, str) and text.startswith("#INPUT! ") and expected in text, (name, text)
        assert len(text) <= MAX_TEXT
        with pytest.raises(ValueError, match=re.escape(text[:40])):  # xlwings Lite: the same message, raised
            call(name, *args, raise_errors=True)


_cell = st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True), st.integers(-10**6, 10**12),
                  st.text(max_size=12), st.booleans(), st.sampled_from(["H100", "all", "fp8", "qlora", "", " "]))


@pytest.mark.slow  # over 0.45 s
@settings(max_examples=150, deadline=None)
@given(name=st.sampled_from(sorted(FUNCTIONS)), args=st.lists(st.one_of(_cell, st.lists(st.lists(_cell, min_size=1, max_size=3),
                                                                                         min_size=1, max_size=3)), max_size=6))
def test_nothing_escapes_a_function(name, args):
    """Any cell contents: a value, a table, or "#..." text - never an exception (classic add-in)."""
    args = [[row[:min(map(len, a))] for row in a] if isinstance(a, list) else a for a in args]  # Excel ranges are rectangles
    try:
        out = call(name, *args)
    except Exception as err:  # pragma: no cover - the assertion below reports it
        pytest.fail(f"{name}{tuple(args)} raised {type(err).__name__}: {err}")
    flat = np.asarray(out, dtype=object).ravel() if isinstance(out, list) else [out]
    for v in flat:
        assert isinstance(v, (int, float, bool, str)), (name, args, v)
        if isinstance(v, float) and isinstance(out, (int, float)):
            assert math.isfinite(v)


def test_component_all_returns_the_breakdown_table():
    table = call("GPU_MEMORY_TRAIN", "Llama-3-8B", "qlora", None, None, None, None, None, None, None, None, "all")
    parts = [k for k in list(TRAIN_COMPONENTS)[1:] if k != "allocator_peak"]
    assert table[0] == ["component", "GiB per GPU"] and [r[0] for r in table[1:]] == [*parts, "total", "allocator_peak"]
    r = core.evaluate(model="Llama-3-8B", method="qlora")
    assert sum(v for _, v in table[1:-2]) == pytest.approx(table[-2][1]) == pytest.approx(r["peak_train_gib_per_gpu"])
    assert table[-1][1] == pytest.approx(r["allocator_peak_train_gib"]) and table[-1][1] < table[-2][1]  # tensors only
    infer = call("GPU_MEMORY_INFER", "Llama-3-70B", 8192, 8, None, None, None, "all")
    assert [row[0] for row in infer[1:]] == [*[k for k in list(INFER_COMPONENTS)[1:] if k != "allocator_peak"], "total",
                                             "allocator_peak"]
    assert call("GPU_MEMORY_TRAIN", [["Llama-3-8B"], [70]], None, None, None, None, None, None, None, None, None, "all")[0][0] \
        .startswith("#INPUT! component: \"all\" returns a table")


def test_plan_spec_and_list_tables_come_from_core():
    from gpu_tco.core.planner import plan
    table = call("GPU_PLAN", "Llama-3-8B", "qlora", 1e8, None, None, None, None, None, 3)
    best = plan({"model": "Llama-3-8B", "method": "qlora", "tokens": 1e8})["recommended"]
    assert table[0][:3] == ["rank", "gpu", "n_gpus"] and len(table) == 4
    assert table[1][1:4] == [best["gpu"], best["n_gpus"], best["acquire"]] and table[1][6] == pytest.approx(best["cost_usd"])
    assert call("GPU_SPEC", "rtx 4090", "bf16_dense_tflops") == 165.2  # tolerant names, dense BF16 (not the 330 sparse)
    assert call("MODEL_SPEC", "Llama-3-70B", "kv_heads") == 8
    assert call("MODEL_SPEC", "Llama-3-70B", "params_b") == core.evaluate(model="Llama-3-70B")["params_total_b"]
    assert 70 < call("MODEL_SPEC", "Llama-3-70B", "params_b") < 71.5  # Meta: 70.6 B
    assert call("GPU_SPEC", [["H100-SXM"], ["B200"]], "memory_gib") == [[80.0], [180.0]]


ADDIN_BOOK = {"gpu": "A100-80GB-SXM", "n_gpus": 16, "usd_per_kwh": 0.2, "months": 24, "hours_per_day": 18}


@book("addin-functions")
def _addin_book(folder: Path):
    from gpu_tco.workbooks import write_workbook
    return write_workbook(folder / "b.xlsx", ADDIN_BOOK), None


def test_excel_functions_match_the_generated_workbook(recalculated):
    """Same inputs: the function's value equals the workbook's Calc cell after LibreOffice recalculates it."""
    out = recalculated["addin-functions"]
    calc = {out.cell("Calc", r, 2): out.cell("Calc", r, 3) for r in range(2, out.max_row("Calc") + 1)}
    assert _close(call("GPU_TCO", "A100-80GB-SXM", 16, 24, 18, 0.2), calc["own_tco_usd"])
    assert _close(call("GPU_OWN_HOURLY", "A100-80GB-SXM", 16, 24, 18, 0.2), calc["own_usd_per_gpu_hour"])
    assert _close(call("GPU_MEMORY_TRAIN", None, None, None, None, 16), calc["peak_train_gib_per_gpu"])
    assert call("GPUS_NEEDED", None, "A100-80GB-SXM") == calc["gpus_needed"]
    assert _close(call("GPU_CLOUD_COST", "A100-80GB-SXM", None, 16), calc["rent_total_usd"])


# --- registration as Excel sees it ---------------------------------------------------------------

VBA_RESERVED = {"name", "date", "error", "string", "integer", "type", "end", "sub", "function", "call", "option"}


@pytest.fixture
def registered(monkeypatch):
    """gpu_tco.addin.udfs imported with xlwings.udfs' real decorators (stub COM modules)."""
    for mod, attrs in {"pythoncom": {"CoInitialize": lambda: None, "IID_IDispatch": None,
                                     "CoMarshalInterThreadInterfaceInStream": None, "CoGetInterfaceAndReleaseStream": None},
                       "pywintypes": {"com_error": type("com_error", (Exception,), {})},
                       "win32com": {}, "win32com.client": {"Dispatch": lambda *a: None}}.items():
        monkeypatch.setitem(sys.modules, mod, types.SimpleNamespace(**attrs) if mod != "win32com" else types.ModuleType(mod))
    import xlwings
    udfs = importlib.import_module("xlwings.udfs")
    monkeypatch.setattr(xlwings, "func", udfs.xlfunc)
    monkeypatch.setattr(xlwings, "arg", udfs.xlarg)
    monkeypatch.setattr(xlwings, "ret", udfs.xlret)
    sys.modules.pop("gpu_tco.addin.udfs", None)
    module = importlib.import_module("gpu_tco.addin.udfs")
    yield udfs, module
    sys.modules.pop("gpu_tco.addin.udfs", None)  # others get the module with the plain decorators again


def test_every_function_registers_with_docs_within_excel_limits(registered):
    udfs, module = registered
    buf = io.StringIO()
    udfs.generate_vba_wrapper("gpu_tco.addin.udfs", module, buf, types.SimpleNamespace(Name="gpu_tco.xlam"))
    vba = buf.getvalue()
    for name, func in FUNCTIONS.items():
        meta = getattr(module, name).__xlfunc__
        assert meta["category"] == "GPU TCO" and meta["name"] == name
        assert 0 < len(meta["ret"]["doc"]) <= 255 and meta["ret"]["doc"] == func.doc
        params = [a["name"] for a in meta["args"]]
        assert params == [param_name(a) for a in func.args]
        for a in meta["args"]:
            assert "optional" in a, (name, a["name"])  # every argument optional
            assert 0 < len(a["doc"]) <= 255 and a["options"].get("ndim") == 2
            assert a["name"].lower() not in VBA_RESERVED and re.fullmatch(r"[A-Za-z][A-Za-z0-9_]{0,254}", a["name"])
        signature = f"Function {name}(" + ", ".join(f"Optional {p}" for p in params) + ")"
        assert signature in vba, signature
        assert f'XLPy.CallUDF("gpu_tco.addin.udfs", "{name}"' in vba
    assert len(FUNCTIONS) == vba.count("End Function")
    assert max(len(line) for line in vba.splitlines()) <= 1023  # VBA's line limit
    assert all(len(f.args) <= 255 for f in FUNCTIONS.values())
    assert module.GPU_TCO("H100-SXM", 8) == call("GPU_TCO", "H100-SXM", 8)


def test_udf_wrapper_turns_any_failure_into_text(monkeypatch):
    import gpu_tco.addin.udfs as udfs_module
    monkeypatch.setattr(udfs_module, "_functions_call", lambda *a: 1 / 0)
    assert udfs_module.GPU_TCO("H100").startswith("#ERROR! GPU_TCO: ZeroDivisionError")


# --- xlwings Lite ----------------------------------------------------------------------------------

@pytest.mark.slow
def test_lite_build_runs_in_a_fresh_interpreter_without_gpu_tco(tmp_path):
    out = subprocess.run([sys.executable, "-m", "gpu_tco", "addin", "lite", "--out", str(tmp_path / "lite")],
                         capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "lite" / "requirements.txt").read_text().split() == ["xlwings<1.0.0", "numpy"]
    import numpy
    site = str(Path(numpy.__file__).resolve().parents[1])  # numpy and xlwings, not the gpu-tco checkout
    script = f"""
import sys
sys.path = [p for p in sys.path if 'work/main' not in p and p not in ('', '.')] + [{site!r}]
try:
    from gpu_tco import core
    raise SystemExit('gpu-tco is importable before main.py: ' + core.__file__)
except ImportError:
    pass
sys.path.insert(0, {str(tmp_path / 'lite')!r})
import json, main
results = {{}}
for name in {sorted(FUNCTIONS)!r}:
    results[name] = getattr(main, name)()
results['range'] = main.GPU_KV_CACHE([['Llama-3-8B'], ['Llama-3-70B']], 8192)
try:
    main.GPU_TCO('H1000')
    results['error'] = None
except ValueError as err:
    results['error'] = str(err)
results['core_from'] = sys.modules['gpu_tco.core'].__file__
print(json.dumps(results))
"""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
    run = subprocess.run([sys.executable, "-S", "-c", script], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120)
    assert run.returncode == 0, run.stderr + run.stdout
    import json
    results = json.loads(run.stdout.splitlines()[-1])
    assert "gpu_tco_" in results["core_from"] and str(ROOT) not in results["core_from"]
    for name in FUNCTIONS:
        expected = call(name)
        assert results[name] == (pytest.approx(expected) if isinstance(expected, float) else expected), name
    assert [r[0] for r in results["range"]] == pytest.approx([call("GPU_KV_CACHE", m, 8192) for m in ("Llama-3-8B", "Llama-3-70B")])
    assert results["error"].startswith('#INPUT! gpu: unknown "H1000"')


# --- installer and demo -----------------------------------------------------------------------------

@pytest.mark.slow
def test_installer_writes_xlwings_conf_that_xlwings_reads(tmp_path):
    conf = tmp_path / ".xlwings" / "xlwings.conf"
    conf.parent.mkdir()
    conf.write_text('"LICENSE_KEY","keep-me"\n"UDF MODULES","old_module"\n')
    env = {**os.environ, "HOME": str(tmp_path), "USERPROFILE": str(tmp_path)}
    out = subprocess.run([sys.executable, str(ROOT / "installer" / "install_addin.py"), "--no-excel"],
                         capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    assert str(conf) in out.stdout
    read = subprocess.run([sys.executable, "-c", "import json, xlwings.utils as u; print(json.dumps(u.read_user_config()))"],
                          capture_output=True, text=True, env=env, timeout=120)
    import json
    settings_read = json.loads(read.stdout)
    assert settings_read["udf modules"] == "gpu_tco.addin.udfs"
    assert settings_read["license_key"] == "keep-me"  # the user's other settings are kept
    assert settings_read["interpreter_win"] == sys.executable and settings_read["interpreter_mac"] == sys.executable
    sys.path.insert(0, str(ROOT / "installer"))
    try:
        import install_addin
        path = install_addin.write_conf(tmp_path / "w", interpreter=r"C:\envs\gpu\python.exe", platform="win32")
        assert install_addin.read_conf(path) == {"UDF MODULES": "gpu_tco.addin.udfs", "INTERPRETER_WIN": r"C:\envs\gpu\python.exe"}
    finally:
        sys.path.remove(str(ROOT / "installer"))


@pytest.mark.slow
def test_demo_workbook_shows_every_function_with_gpu_tco_values(tmp_path):
    from gpu_tco.addin.demo import DEMO_INPUTS, EXAMPLES
    out = subprocess.run([sys.executable, "-m", "gpu_tco", "addin", "demo", "--out", str(tmp_path / "demo.xlsx")],
                         capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    formulas = load_workbook(tmp_path / "demo.xlsx")["Functions"]
    cached = load_workbook(tmp_path / "demo.xlsx", data_only=True)["Functions"]
    text = " ".join(str(c.value) for row in formulas.iter_rows() for c in row if c.value is not None)
    text += " ".join(str(c.value.text) for row in formulas.iter_rows() for c in row if hasattr(c.value, "text"))
    assert all(name in text for name in FUNCTIONS), [n for n in FUNCTIONS if n not in text]
    inputs = {formulas.cell(row=r, column=1).value: formulas.cell(row=r, column=2).value for r in range(5, 5 + len(DEMO_INPUTS))}
    checked = 0
    for r in range(5, formulas.max_row + 1):
        f = formulas.cell(row=r, column=6).value
        if isinstance(f, str) and f.startswith("=GPU") or isinstance(f, str) and f.startswith("=MODEL"):
            name, argtext = re.match(r"=(\w+)\((.*)\)", f).groups()
            labels = {formulas.cell(row=i, column=2).coordinate: formulas.cell(row=i, column=1).value for i in range(5, 5 + len(DEMO_INPUTS))}
            args = [inputs[labels[a.replace("$", "")]] if a else None for a in argtext.split(",")] if argtext else []
            expected = call(name, *args)
            assert cached.cell(row=r, column=6).value == (pytest.approx(expected) if isinstance(expected, float) else expected)
            checked += 1
    assert checked == len(EXAMPLES)  # every example formula recomputed


def test_classic_module_is_the_generated_file():
    """addin/udfs.py is generated (`gpu-tco docs`) and committed, so Excel's tracebacks and readers see real source."""
    from gpu_tco.addin.codegen import UDFS_PATH, classic_module
    assert UDFS_PATH.read_text(encoding="utf-8") == classic_module(), "addin/udfs.py is stale: run `gpu-tco docs`"
    assert "exec(" not in classic_module()


def test_excel_docs_function_table_is_generated_from_the_code():
    from gpu_tco.addin.codegen import function_table_markdown
    assert function_table_markdown() in (ROOT / "docs" / "excel.md").read_text()


@pytest.mark.slow
def test_model_spec_of_a_parameter_count_reads_the_estimated_architecture():
    """A count is estimated outside the catalog; MODEL_SPEC must read that architecture, not a catalog row."""
    from gpu_tco.core import catalog
    rows_before = len(catalog.models().rows)
    assert call("MODEL_SPEC", 13, "layers") == core.estimate_architecture(13)["layers"]
    assert abs(call("MODEL_SPEC", "70B", "params_b") - 70) / 70 < 0.01
    for n in range(1, 300):  # many counts: the catalog does not grow
        core.evaluate(model=float(n))
    assert len(catalog.models().rows) == rows_before


def test_demo_array_examples_store_their_values(tmp_path):
    """The demo's array formulas carry the values gpu-tco computed, so the file reads without the add-in."""
    from gpu_tco.addin.demo import write_demo
    path = write_demo(tmp_path / "demo.xlsx")
    values = load_workbook(path, data_only=True)["Functions"]
    formulas = load_workbook(path)["Functions"]
    arrays = [(c.coordinate, c.value) for row in formulas.iter_rows() for c in row if type(c.value).__name__ == "ArrayFormula"]
    assert len(arrays) == 2
    for coord, array in arrays:
        first, last = array.ref.split(":")
        block = values[first:last]
        assert all(cell.value not in (None, "") for row in block for cell in row[:1]), coord
    memory = [c.value for (c,) in values[arrays[0][1].ref.split(":")[0]:arrays[0][1].ref.split(":")[1]]]
    expected = [row[0] for row in call("GPU_MEMORY_TRAIN", [["Llama-3.2-1B"], ["Llama-3-8B"], ["Mistral-7B"], ["Llama-3-70B"], [405]], "lora")]
    assert memory == pytest.approx(expected)


def test_a_missing_price_reads_no_price_in_a_cell_never_zero():
    """A10 has no purchase price in the catalog: GPU_TCO says so and names the input, in a single cell and in a range
    (the other rows compute); with a price given, the number comes back."""
    text = call("GPU_TCO", "A10", 1)
    assert isinstance(text, str) and text.startswith("no price") and "purchase_usd_per_gpu" in text
    column = call("GPU_TCO", [["A10"], ["H100-SXM"], ["A10"]], 1)
    assert column[0][0] == column[2][0] == text
    assert column[1][0] == pytest.approx(core.evaluate({"gpu": "H100-SXM", "n_gpus": 1})["own_tco_usd"])
    priced = call("GPU_TCO", "A10", 1, None, None, None, None, 3000)
    assert priced == pytest.approx(core.evaluate({"gpu": "A10", "n_gpus": 1, "purchase_usd_per_gpu": 3000})["own_tco_usd"])


def test_gpu_plan_carries_the_recommendation_in_words():
    from gpu_tco.core.recommendation import recommend
    table = call("GPU_PLAN", "Llama-3-8B", "qlora")
    head, first = table[0], dict(zip(table[0], table[1]))
    assert head[-1] == "recommendation" and all(row[-1] == "" for row in table[2:])
    assert first["recommendation"] == recommend({"model": "Llama-3-8B", "method": "qlora"}).text[:MAX_TEXT]


def test_serve_plan_function_says_core_serving_answer():
    """GPU_SERVE_PLAN: the answer in one cell is core's sentence; with top, the ranked setups as a table; bad input
    is one line of text in the cell."""
    from gpu_tco.core import serve_plan
    job = {"model": "Llama-3-70B", "requests_per_s": 20, "prompt_tokens": 1000, "output_tokens": 200, "ttft_slo_ms": 2000,
           "tpot_slo_ms": 50, "api_model": "together/Llama-3.3-70B-Instruct-Turbo", "hours_per_day": 24, "gpu": "H100-SXM"}
    args = [float(v) if isinstance(v, int) else v for v in job.values()]  # Excel hands numbers as floats
    result = serve_plan(job)
    assert call("GPU_SERVE_PLAN", *args) == result["recommendation"]
    best = result["recommended"]
    table = call("GPU_SERVE_PLAN", *args, 3)
    assert table[0][:7] == ["rank", "gpu", "n_gpus", "weights_dtype", "acquire", "offer", "replicas"] and len(table) == 4
    assert table[1][1:7] == [best.gpu, best.n_gpus, best.weights_dtype, best.acquire, best.offer, best.replicas]
    assert table[1][8] == pytest.approx(best.tpot_ms) and table[1][8] <= 50 and table[1][-1] == result["recommendation"]
    everything = call("GPU_SERVE_PLAN", *args, 0)
    assert len(everything) == len(result["options"]) + 1 and any(row[13] for row in everything[1:])  # rejected, with why
    for bad, expected in (((None, -5), "requests_per_s: -5 is too small"), ((None, None, None, None, None, None, "togther/Llama"),
                                                                             "api_model: unknown"),
                          ((*args[:9], -1), "top: -1 is not a whole number")):
        text = call("GPU_SERVE_PLAN", *bad)
        assert isinstance(text, str) and text.startswith("#INPUT! ") and expected in text and "\n" not in text, text
