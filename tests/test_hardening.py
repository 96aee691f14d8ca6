"""Bad input, hostile catalogs: only the project's own errors, clear messages, no formula from text."""
from __future__ import annotations

import math
import re
import zipfile

import numpy as np
import pandas as pd
import pytest
from helpers import cli_batch
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from gpu_tco import core
from gpu_tco.core import catalog
from gpu_tco.core.inputs import INPUTS

NAMES = [i.name for i in INPUTS]
json_like = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-10**420, max_value=10**420) | st.floats(allow_nan=True)
    | st.text(max_size=30) | st.sampled_from(["H100-SXM", "Llama-3-8B", "70B", "auto", "qlora", "1e400", "=1+1"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8)
# never negative and never infinite for inputs that are accepted
NON_NEGATIVE = ("peak_train_gib_per_gpu", "peak_infer_gib_per_gpu", "kv_cache_gib", "train_hours", "rent_total_usd",
                "own_capital_usd", "own_tco_usd", "option_cost_usd")


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.sampled_from(NAMES), json_like, max_size=4))
@example(inputs={"model": "\n"})  # a line break echoed in the message broke it into two lines
def test_evaluate_raises_only_the_projects_errors_and_accepted_inputs_give_finite_results(inputs):
    try:
        result = core.evaluate(inputs, outputs=NON_NEGATIVE)
    except core.GpuTcoError as err:
        assert str(err) and "\n" not in str(err)
        return
    for name, value in result.items():
        arr = np.asarray(value, dtype=float)
        assert np.all(np.isfinite(arr)) and np.all(arr >= 0), (inputs, name, value)


@pytest.mark.slow  # over 0.45 s
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(json_like, st.dictionaries(st.sampled_from([n for n in NAMES if n not in ("gpu", "n_gpus", "offer", "buy")]),
                                            json_like, max_size=3)))
def test_plan_raises_only_the_projects_errors(job):
    try:
        result = core.plan(job)
    except core.GpuTcoError:
        return
    best = result["recommended"]
    assert best is None or (math.isfinite(best["cost_usd"]) and best["cost_usd"] >= 0)


@pytest.mark.parametrize("call, message", [
    (lambda: core.evaluate({"seq_len": [[1, 2], [3]]}), "ragged list"),
    (lambda: core.evaluate({"seq_len": pd.DataFrame({"a": [1, 2]})}), "is a table (DataFrame)"),
    (lambda: core.evaluate({"seq_len": pd.Series([512, 1024], index=[0, 1]), "micro_batch": pd.Series([1, 2], index=[5, 6])}),
     "another index"),
    (lambda: core.evaluate({"seq_len": [True, 2048]}), "yes/no value"),
    (lambda: core.evaluate({"seq_len": [1j, 2]}), "complex"),
    (lambda: core.evaluate({"seq_len": 10**400}), "characters)"),  # a 400-digit number is echoed cut, with its length
    (lambda: core.evaluate("abc"), "must be a mapping"),
    (lambda: core.plan(5), "must be a mapping"),
    (lambda: core.plan({}, gpus=[5]), "list of GPU names"),
    (lambda: core.explain(["a"]), "is not a quantity"),
    (lambda: core.breakdown({"a": 1}), "not a result of evaluate"),
    (lambda: core.evaluate({"gpu": "x" * 5000}), "(5,000 characters)"),
])
def test_bad_arguments_get_one_clear_project_error(call, message):
    with pytest.raises(core.GpuTcoError) as err:
        call()
    assert message in str(err.value) and isinstance(err.value, ValueError)
    assert len(str(err.value)) < 400


def test_a_categorical_and_an_aligned_series_are_read_by_label():
    out = core.evaluate({"gpu": pd.Categorical(["H100-SXM", "L40S"])}, outputs=["gpu_memory_gib"])
    assert list(out["gpu_memory_gib"]) == [80, 48]
    s = pd.Series([512, 1024], index=["a", "b"])
    out = core.evaluate({"seq_len": s, "micro_batch": pd.Series([1, 2], index=["a", "b"])}, outputs=["activations_gib"])
    assert list(out["activations_gib"].index) == ["a", "b"]


def test_planner_never_recommends_what_it_cannot_price(monkeypatch):
    row = dict(catalog.gpus().rows[catalog.gpus().find("RTX-4090")])
    row.update(name="My-GPU", aliases="", purchase_usd=1e308)
    try:
        catalog.gpus().add(row)
        result = core.plan({"method": "qlora", "owned_busy_hours_per_day": 24}, gpus=["My-GPU"])
        bought = [o for o in result["options"] if o["acquire"] == "buy"]
        assert bought and not any(o["ok"] for o in bought)
        assert all(any("not a finite number" in r for r in o["reasons"]) for o in bought)
        assert result["recommended"] is None or result["recommended"]["acquire"] == "rent"
    finally:
        catalog.reload()


HOSTILE = ['=HYPERLINK("http://evil.example","click")', "=cmd|' /C calc'!A0", "+1+2", "-2+3", "@SUM(1)", "\t=1+1", "\r=1"]


@pytest.mark.slow
def test_catalog_and_scenario_text_is_written_as_text_never_as_a_formula(tmp_path, monkeypatch):
    """Every text field of every catalog, filled with formula-like strings, stays text in the workbook."""
    cols = catalog.gpus().columns
    base = catalog.gpus().rows[catalog.gpus().find("RTX-4090")]
    lines = [",".join(cols)]
    for k, hostile in enumerate(HOSTILE):
        row = dict(base)
        for c in cols:
            if c in catalog.TEXT_COLUMNS and c not in ("as_of", "server_sizes"):  # server_sizes: numbers, checked on load
                row[c] = hostile + ("" if c != "name" else f"{k}")
        row["aliases"] = ""
        lines.append(",".join('"' + str(row[c]).replace('"', '""') + '"' for c in cols))
    (tmp_path / "gpus.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    monkeypatch.setenv("GPU_TCO_CONFIG_DIR", str(tmp_path))
    try:
        catalog.reload()
        from gpu_tco.workbooks import write_workbook
        path = write_workbook(tmp_path / "book.xlsx", {"gpu": HOSTILE[0] + "0", "offer": "none", "usd_per_gpu_hour_rented": 1.0})
        with zipfile.ZipFile(path) as z:
            xml = "".join(z.read(n).decode("utf-8") for n in z.namelist() if n.startswith("xl/worksheets/"))
        formulas = re.findall(r"<f[^>]*>(.*?)</f>", xml, re.S)
        assert formulas and not [f for f in formulas if "HYPERLINK" in f or "cmd|" in f or "SUM(1)" in f]
    finally:
        monkeypatch.undo()
        catalog.reload()


def test_control_characters_in_a_catalog_are_refused_naming_file_row_and_column(tmp_path, monkeypatch):
    cols = catalog.gpus().columns
    row = dict(catalog.gpus().rows[catalog.gpus().find("L40S")], name="Bell\x07GPU", aliases="")
    _refused_on_load(tmp_path, monkeypatch, ",".join(cols) + "\n" + ",".join(str(row[c]) for c in cols) + "\n",
                     r"gpus.csv, row 2, column name: holds a control character \(code 7\)")
    with pytest.raises(core.InputError, match="model.name"):
        core.evaluate(model={"layers": 2, "hidden": 256, "ffn": 512, "heads": 4, "vocab": 1000, "name": "a\x1bb"})


# --- the command line: files and arguments -------------------------------------------------------

import os  # noqa: E402
import signal  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402


def _cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "gpu_tco", *args], capture_output=True, text=True, cwd=cwd, timeout=120)


@pytest.mark.slow
def test_scenario_and_path_problems_end_in_one_line_and_exit_2(tmp_path):
    (tmp_path / "latin1.json").write_bytes(b'{"gpu": "caf\xe9"}')
    (tmp_path / "bom.json").write_bytes(b'\xef\xbb\xbf{"gpu": "L40S"}')
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (tmp_path / "deep.toml").write_text("a = " + "[" * 50_000 + "]" * 50_000)
    (tmp_path / "huge.json").write_bytes(b" " * (11 * 2**20))
    (tmp_path / "afolder").mkdir()
    (tmp_path / "afile").write_text("x")
    long = "x" * 300
    cases = [
        (("estimate", "--scenario", str(tmp_path / "latin1.json")), "is not UTF-8 text"),
        (("estimate", "--scenario", str(tmp_path / "deep.json")), "nested too deeply"),
        (("estimate", "--scenario", str(tmp_path / "deep.toml")), "deep"),
        (("estimate", "--scenario", str(tmp_path / "huge.json")), "larger than 10 MB"),
        (("estimate", "--scenario", str(tmp_path / "afolder")), "cannot be read"),
        (("estimate", "--scenario", str(tmp_path / long / "s.json")), "cannot be read"),
        (("workbook", "--out", str(tmp_path / long / "b.xlsx")), "cannot be used"),
        (("workbook", "--out", str(tmp_path / "afolder")), ".xlsx"),
        (("addin", "lite", "--out", str(tmp_path / "afile")), "is a file"),
        (("docs", "--out", str(tmp_path / "afolder")), "is a folder"),
        (("estimate", "--gpu", "H1\x1b[31mX"), "\\x1b"),
        (("estimate", "--gpu", "y" * 100_000), "(100,000 characters)"),
    ]
    # one process runs every case through the command's entry point (the exit status a shell sees: the tests above)
    *outs, ok = cli_batch([(args, None) for args, _ in cases] + [(("estimate", "--scenario", str(tmp_path / "bom.json")), None)])
    for (args, message), out in zip(cases, outs, strict=True):
        assert out.returncode == 2, (args[:2], out.stderr[-300:])
        lines = out.stderr.strip().splitlines()
        assert len(lines) == 1 and message in lines[0] and "Traceback" not in out.stderr, (args[:2], out.stderr[:300])
        assert "\x1b" not in out.stderr and len(lines[0]) < 500
    assert ok.returncode == 0 and "L40S" in ok.stdout  # a UTF-8 byte-order mark is fine


@pytest.mark.slow  # command-line runs in processes of their own
def test_a_read_only_target_is_refused_and_left_untouched(tmp_path):
    target = tmp_path / "plan.xlsx"
    target.write_bytes(b"old")
    target.chmod(0o444)
    out = _cli("workbook", "--out", str(target))
    assert out.returncode == 2 and "read-only" in out.stderr
    assert target.read_bytes() == b"old"


@pytest.mark.slow  # over 0.45 s
def test_stale_temporaries_are_removed_and_fresh_ones_kept(tmp_path):
    from gpu_tco.workbooks import write_workbook
    from gpu_tco.workbooks.xlsx import TEMP_MARK
    stale, fresh = tmp_path / f".plan.xlsx{TEMP_MARK}1-aa", tmp_path / f".plan.xlsx{TEMP_MARK}2-bb"
    stale.write_bytes(b"x")
    fresh.write_bytes(b"x")
    os.utime(stale, (time.time() - 7200, time.time() - 7200))
    write_workbook(tmp_path / "plan.xlsx")
    assert not stale.exists() and fresh.exists()
    assert sorted(p.name for p in tmp_path.iterdir() if TEMP_MARK not in p.name) == ["plan.xlsx"]


_WRITER = """
import sys
from gpu_tco.workbooks import write_workbook
while True:
    write_workbook(sys.argv[1], {"months": 120})  # a larger workbook: ten years of break-even rows
"""


@pytest.mark.slow
def test_kill_9_during_writes_leaves_the_old_or_the_new_complete_file_and_no_temporary(tmp_path):
    from openpyxl import load_workbook

    from gpu_tco.workbooks import write_workbook
    target = tmp_path / "plan.xlsx"
    write_workbook(target)  # the old, complete file
    for delay in (0.35, 0.8, 1.25):  # during start-up, and during the first and later writes
        proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(target)])
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        wb = load_workbook(target, read_only=True)  # opens: a complete file, old or new
        assert "Start" in wb.sheetnames
        wb.close()
        assert [p.name for p in tmp_path.iterdir()] == ["plan.xlsx"], list(tmp_path.iterdir())


@pytest.mark.slow
def test_concurrent_writers_end_with_one_complete_file(tmp_path):
    from openpyxl import load_workbook
    target = tmp_path / "plan.xlsx"
    code = "import sys\nfrom gpu_tco.workbooks import write_workbook\nfor _ in range(3): write_workbook(sys.argv[1])"
    procs = [subprocess.Popen([sys.executable, "-c", code, str(target)]) for _ in range(2)]
    assert all(p.wait(timeout=120) == 0 for p in procs)
    assert "Compare" in load_workbook(target, read_only=True).sheetnames
    assert [p.name for p in tmp_path.iterdir()] == ["plan.xlsx"]


# --- catalog rows checked like inputs ------------------------------------------------------------

import csv  # noqa: E402


def _user_catalog(tmp_path, table, rows):
    with open(catalog.DATA_DIR / f"{table}.csv", encoding="utf-8") as fh:  # the columns, without loading the catalogs
        cols = next(csv.reader(fh))
    with open(tmp_path / f"{table}.csv", "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=cols, extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            writer.writerow({c: row.get(c, "") for c in cols})


@pytest.mark.slow  # over 0.45 s
@pytest.mark.parametrize("table, base, change, message", [
    ("gpus", "L40S", {"bf16_dense_tflops": 0}, "gpus.csv, row 2, column bf16_dense_tflops: 0 is not allowed for My-Row; allowed: a number from 0.000001 to 1e15"),
    ("gpus", "L40S", {"memory_bandwidth_gbps": 5e-324}, "column memory_bandwidth_gbps: 4.94066e-324 is not allowed"),
    ("offers", "Lambda 8x H100 SXM", {"usd_per_gpu_hour": 1e-300}, "allowed: 0 or a number from 0.000001 to 1e15"),
    ("gpus", "L40S", {"default_mfu": 5}, "column default_mfu: 5 is not allowed"),
    ("gpus", "L40S", {"default_mfu": 1e-300}, "allowed: a number from 0.01 to 1"),
    ("gpus", "L40S", {"consumer": 2}, "allowed: 0 or 1"),
    ("gpus", "L40S", {"purchase_usd": 3.7e305}, "column purchase_usd: 3.7e+305 is not allowed for My-Row; allowed: 0 or a number from 0.000001 to 1e15"),
    ("models", "Llama-3-8B", {"vocab": 1e300}, "allowed: a whole number >= 1 and <= 1e15"),
    ("models", "Llama-3-8B", {"sliding_layer_fraction": 5}, "column sliding_layer_fraction: 5 is not allowed"),
    ("models", "Llama-3-8B", {"tied_embeddings": 5}, "allowed: 0 or 1"),
    ("models", "Llama-3-8B", {"kv_heads": 64}, "column kv_heads: 64 is more than heads (32)"),
    ("models", "Mixtral-8x7B", {"active_experts": 9}, "column active_experts: 9 is more than experts (8)"),
    ("models", "Llama-3-8B", {"layers": 2.5}, "allowed: a whole number >= 1"),
    ("offers", "Lambda 8x H100 SXM", {"gpus_per_instance": 0.5}, "allowed: a whole number >= 1"),
    ("offers", "Lambda 8x H100 SXM", {"billing_increment_s": 0}, "column billing_increment_s: 0 is not allowed"),
    ("offers", "Lambda 8x H100 SXM", {"name": "auto"}, '"auto" is reserved'),
    ("offers", "Lambda 8x H100 SXM", {"name": "None"}, '"None" is reserved'),
])
def test_hostile_catalog_rows_are_refused_naming_file_row_and_column(tmp_path, monkeypatch, table, base, change, message):
    t = catalog.tables()[table]
    row = {**t.rows[t.find(base)], "name": "My-Row", "aliases": "", **change}
    _user_catalog(tmp_path, table, [row])
    monkeypatch.setenv("GPU_TCO_CONFIG_DIR", str(tmp_path))
    try:
        with pytest.raises(core.CatalogError) as err:
            catalog.reload()
        assert message in str(err.value)
    finally:
        monkeypatch.undo()
        catalog.reload()


@pytest.mark.slow  # over 0.45 s
def test_duplicates_overrides_and_stolen_aliases(tmp_path, monkeypatch):
    t = catalog.gpus()
    base = {**t.rows[t.find("L40S")], "aliases": "", "source": ""}
    monkeypatch.setenv("GPU_TCO_CONFIG_DIR", str(tmp_path))
    try:
        _user_catalog(tmp_path, "gpus", [{**base, "name": "Lab-GPU"}, {**base, "name": "lab gpu"}])
        with pytest.raises(core.CatalogError, match=r'row 3, column name: "lab gpu" is also the name in row 2'):
            catalog.reload()
        _user_catalog(tmp_path, "gpus", [{**base, "name": "Mine", "aliases": "H100"}])
        with pytest.raises(core.CatalogError, match='"H100" already names H100-SXM'):
            catalog.reload()
        _user_catalog(tmp_path, "gpus", [{**base, "name": "H100 SXM", "memory_gib": 96}, {**base, "name": "Lab-GPU"}])
        catalog.reload()
        assert core.evaluate(gpu="H100-SXM")["gpu_memory_gib"] == 96  # the user's row overrides, by the built-in name
        assert catalog.gpus().overrides == {"H100-SXM": ("H100 SXM", "gpus.csv")}
        out = subprocess.run([sys.executable, "-m", "gpu_tco", "gpus"], capture_output=True, text=True, timeout=60,
                             env={**os.environ, "GPU_TCO_CONFIG_DIR": str(tmp_path)})
        assert "Your row 'H100 SXM' in gpus.csv overrides the built-in H100-SXM." in out.stdout
        from gpu_tco.addin.functions import call
        assert "Lab-GPU" in [row[0] for row in call("GPU_LIST")]  # the user's own rows are listed
        assert catalog.gpus().rows[catalog.gpus().find("Lab-GPU")]["source"] == "user catalog file gpus.csv"
    finally:
        monkeypatch.undo()
        catalog.reload()


# --- Excel functions: anything a cell or a range can hold ----------------------------------------

import datetime  # noqa: E402


@pytest.mark.parametrize("name, args, expect", [
    ("GPU_TCO", (None, [[True]]), "#INPUT! n_gpus: True is a yes/no value"),
    ("GPU_TCO", (None, [["8"]]), '#INPUT! n_gpus: "8" is text'),
    ("GPU_TCO", (None, [[float("nan")]]), "is not finite"),
    ("GPU_TCO", (None, [[10**400]]), "characters)"),
    ("GPU_TCO", (None, [[datetime.datetime(2026, 1, 1)]]), "is not a number"),
    ("GPU_TCO", ([["H100-SXM", None], ["L40S"]],), "rows differ in length"),
    ("GPU_PLAN", (None, None, None, None, None, None, None, None, "ten"), "top"),
    ("GPU_SPEC", ([["H100-SXM"], [None]], [[1.5]]), "field"),
    ("GPU_MEMORY_TRAIN", (None,) * 10 + ([["#N/A"]],), "component"),
])
def test_excel_functions_answer_every_cell_value_with_text_never_an_exception(name, args, expect):
    from gpu_tco.addin.functions import call
    out = call(name, *args)
    text = out if isinstance(out, str) else str(out)
    assert expect in text
    with pytest.raises(ValueError):  # xlwings Lite: a single-cell error raises the same text
        value = call(name, *args, raise_errors=True)
        if not isinstance(value, str):
            raise ValueError(str(value))  # ranges keep their per-cell texts


def test_range_and_single_cell_validate_alike():
    from gpu_tco.addin.functions import call
    for single in (True, "8", float("nan")):
        assert call("GPU_TCO", None, single).split(":")[0] == call("GPU_TCO", None, [[single]])[0][0].split(":")[0]


# --- property tests through the command line and with arbitrary catalog rows -------------------

_DRIVER = """
import contextlib, io, json, os, sys
from gpu_tco.cli import main
codes = []
for folder in sys.argv[1:]:
    os.environ["GPU_TCO_CONFIG_DIR"] = folder
    from gpu_tco.core import catalog
    with contextlib.suppress(Exception):  # a file refused here is refused again, and reported, by the command
        catalog.reload()  # each case reads its own catalog files
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(["estimate", "--scenario", os.path.join(folder, "scenario.json")])
    codes.append([code, err.getvalue()[-300:]])
print(json.dumps(codes))
"""


@pytest.mark.slow
@settings(max_examples=1, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.binary(max_size=300), st.binary(max_size=300), st.sampled_from(["gpus", "models", "offers"])),
                min_size=25, max_size=25))
def test_arbitrary_bytes_as_scenario_and_catalog_files_end_in_exit_0_or_2(tmp_path_factory, blobs):
    """25 cases of random bytes as a scenario file and as a user catalog file, run by the real CLI in one
    subprocess: every case ends with exit 0 or 2 and one line; 1 (an internal error) would be a bug."""
    import json
    folders = []
    for k, (scenario, catalog_bytes, table) in enumerate(blobs):
        folder = tmp_path_factory.mktemp(f"case{k}")
        (folder / "scenario.json").write_bytes(scenario)
        header = ",".join(catalog.tables()[table].columns).encode()
        (folder / f"{table}.csv").write_bytes(header + b"\n" + catalog_bytes)
        folders.append(str(folder))
    out = subprocess.run([sys.executable, "-c", _DRIVER, *folders], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    for code, err in json.loads(out.stdout):
        assert code in (0, 2), err
        assert "Traceback" not in err and len(err.strip().splitlines()) <= 1, err


numbers = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-5, 10**6), st.text(max_size=6))


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.dictionaries(st.sampled_from(["memory_gib", "memory_bandwidth_gbps", "bf16_dense_tflops", "fp8_dense_tflops",
                                        "tf32_dense_tflops", "tdp_w", "purchase_usd", "default_mfu", "consumer",
                                        "multi_gpu_fabric"]), numbers, min_size=1, max_size=4))
@example({"purchase_usd": 3.745194030963158e+305})  # once loaded: 8 of them cost more than a float holds
def test_arbitrary_gpu_rows_load_cleanly_or_are_refused_and_evaluate_finitely(tmp_path_factory, changes):
    folder = tmp_path_factory.mktemp("row")
    base = {**catalog.gpus().rows[catalog.gpus().find("L40S")], "name": "Prop-GPU", "aliases": "", **changes}
    _user_catalog(folder, "gpus", [base])
    os.environ["GPU_TCO_CONFIG_DIR"] = str(folder)
    try:
        try:
            catalog.reload()
        except core.CatalogError as err:
            assert "gpus.csv, row 2" in str(err)
            return
        result = core.evaluate({"gpu": "Prop-GPU", "method": "qlora", "buy": 1}, outputs=NON_NEGATIVE)
        for name, value in result.items():
            assert math.isfinite(value) and value >= 0, (changes, name, value)
    finally:
        del os.environ["GPU_TCO_CONFIG_DIR"]
        catalog.reload()


@pytest.mark.parametrize("field, value", [("sliding_layer_fraction", 5), ("tied_embeddings", 5), ("experts", 2.5), ("dropout", 3)])
def test_custom_architectures_are_checked_like_catalog_rows(field, value):
    spec = {"layers": 2, "hidden": 256, "ffn": 512, "heads": 4, "vocab": 1000, field: value}
    with pytest.raises(core.InputError, match=f"model.{field}"):
        core.evaluate(model=spec)


@pytest.mark.slow  # over 0.45 s
def test_a_full_disk_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    """A full disk cannot be made here without mount privileges: the real writer gets ENOSPC from os.write."""
    import errno

    from gpu_tco.workbooks import WorkbookError, write_workbook
    target = tmp_path / "plan.xlsx"
    target.write_bytes(b"old")

    def full(fd, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", full)
    with pytest.raises(WorkbookError, match="No space left on device"):
        write_workbook(target)
    monkeypatch.undo()
    assert target.read_bytes() == b"old" and [p.name for p in tmp_path.iterdir()] == ["plan.xlsx"]


def test_server_sizes_that_are_not_counts_are_refused_naming_file_row_and_column(tmp_path, monkeypatch):
    _refused_on_load(tmp_path, monkeypatch, 'name,server_sizes\nH100-SXM,"=HYPERLINK(""x"");8"\n',
                     r"gpus.csv, row 2, column server_sizes: .* allowed: GPU counts per server")


def _refused_on_load(tmp_path, monkeypatch, gpus_csv: str, message: str) -> None:
    """A user gpus.csv of ``gpus_csv`` is refused when the catalogs load, with ``message``; the catalogs reload clean."""
    (tmp_path / "gpus.csv").write_text(gpus_csv, encoding="utf-8")
    monkeypatch.setenv("GPU_TCO_CONFIG_DIR", str(tmp_path))
    try:
        with pytest.raises(core.CatalogError, match=message):
            catalog.reload()
    finally:
        monkeypatch.undo()
        catalog.reload()
