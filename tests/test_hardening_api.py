"""The Python API and the Excel entry point under hostile input: only the project's own errors, one-line
messages, and call() never raising nor returning anything but what a cell or a spilled range holds."""
from __future__ import annotations

import math
import signal
import subprocess
import sys
import time
from pathlib import Path

try:
    import resource
except ImportError:  # Windows
    resource = None

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gpu_tco
from gpu_tco.addin.functions import FUNCTIONS, call
from gpu_tco.core.errors import InputError, show

CELL_TYPES = (str, float, int, bool, type(None))


def _is_excel(value) -> bool:
    """A cell value, or a non-empty list of equally long rows of cell values."""
    if type(value) in CELL_TYPES:
        return True
    return (type(value) is list and len(value) > 0 and all(type(r) is list and len(r) == len(value[0]) for r in value)
            and all(type(c) in CELL_TYPES for r in value for c in r))


# --- the Python API ------------------------------------------------------------------------------------

def test_empty_outputs_give_an_empty_result_after_checking_the_inputs():
    assert gpu_tco.evaluate({}, outputs=[]) == {}
    assert gpu_tco.evaluate({"seq_len": [1024, 2048]}, outputs=()) == {}
    with pytest.raises(gpu_tco.InputError, match=r"^seq_len: -1 is too small"):
        gpu_tco.evaluate({"seq_len": -1}, outputs=[])


@pytest.mark.parametrize("value", [0, -1, None, math.nan, math.inf, 1e300, 1e-9, "7", b"7", True, [7], {"a": 1}, 1j])
def test_estimate_architecture_refuses_what_is_not_a_parameter_count(value):
    with pytest.raises(gpu_tco.InputError) as err:
        gpu_tco.estimate_architecture(value)
    assert str(err.value).startswith("params_b: ")
    assert "0.001 to 100,000" in str(err.value)


def test_estimate_architecture_at_the_ends_of_its_range():
    for params_b in (0.001, 100_000, np.float32(7), 7):
        arch = gpu_tco.estimate_architecture(params_b)
        assert arch["layers"] >= 1 and arch["params_published_b"] == float(params_b)


def test_breakdown_refuses_a_mode_that_is_not_text():
    r = gpu_tco.evaluate({})
    for mode in (pd.NA, None, 1, np.array(["train"])):
        with pytest.raises(gpu_tco.InputError, match="^mode: "):
            gpu_tco.breakdown(r, mode)
    assert gpu_tco.breakdown(r, "infer")["total"] == r["peak_infer_gib_per_gpu"]


@pytest.mark.parametrize("value", [b"8", bytearray(b"8"), memoryview(b"8")])
def test_bytes_are_not_numbers(value):
    with pytest.raises(gpu_tco.InputError, match=r"^n_gpus: .* is bytes, not text or a number"):
        gpu_tco.evaluate({"n_gpus": value})


@pytest.mark.parametrize("name", ["n_gpus", "model", "gpu"])
@pytest.mark.parametrize("value", [[b"8", b"4"], np.array([b"8"]), pd.Series([b"8"]), [bytearray(b"8")], [[1, b"2"]],
                                   np.array([1, b"2"], dtype=object), ["8", b"8"]])
def test_bytes_are_refused_inside_sweeps_too(name, value):
    # a bytearray in a list would otherwise become a row of byte values (b"8" -> 56 GPUs)
    with pytest.raises(gpu_tco.InputError, match=rf"^{name}( \(row \d\))?: ") as err:
        gpu_tco.evaluate({name: value}, outputs=["peak_train_gib_per_gpu"])
    assert "bytes" in str(err.value) or str(err.value).startswith("gpu (row 0): 1 is not a name")


def test_messages_are_one_line_and_show_values_by_repr_cut():
    with pytest.raises(gpu_tco.InputError) as err:
        gpu_tco.evaluate({"x\ny": 1})
    assert str(err.value).startswith("x\\ny: is not an input")
    with pytest.raises(gpu_tco.InputError) as err:
        gpu_tco.evaluate({"model": "Llama\u2028\r\n\x85" + "z" * 500})
    text = str(err.value)
    assert "\\u2028\\r\\n\\x85" in text and "(5" in text and len(text) < 400
    series = pd.Series(range(1000))
    assert show(series) == "Series of 1,000 values [0, 1, 2, 3, ...]"
    assert str(InputError("n_gpus", series, "bad")).splitlines() == ["n_gpus: Series of 1,000 values [0, 1, 2, 3, ...] bad"]
    assert str(InputError("a" * 500, "\ud800", "bad")).startswith("a" * 80 + "... (500 characters): \"\\ud800\" bad")


# random junk: only the project's errors escape
junk = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=12), st.binary(max_size=4), st.complex_numbers(),
    st.sampled_from([pd.NA, pd.NaT, np.nan, np.datetime64("NaT"), np.int64(8), np.float32(2.5), object(), {1, 2}, (),
                     pd.Series([1, 2]), pd.Series([], dtype=float), pd.Series(["a"], index=[5]), pd.Index([1, 2]),
                     pd.DataFrame({"a": [1]}), np.zeros((2, 2)), np.array("x"), [[1], [2, 3]], [[[1]]], {"layers": 2},
                     "70B", "H100-SXM", "qlora", float("inf"), -0.0, 10 ** 400, 2 ** 63]),
    st.lists(st.one_of(st.integers(-3, 10), st.floats(), st.text(max_size=3), st.none()), max_size=4),
)
input_names = st.one_of(st.sampled_from([i.name for i in gpu_tco.INPUTS]), st.text(max_size=6))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(input_names, junk, max_size=3), st.one_of(st.none(), junk, st.lists(st.text(max_size=8), max_size=2)))
def test_evaluate_raises_only_the_projects_errors(inputs, outputs):
    try:
        gpu_tco.evaluate(inputs, outputs=outputs)
    except gpu_tco.GpuTcoError as err:
        assert len(str(err).splitlines()) == 1 and len(str(err)) < 1000, str(err)


@settings(max_examples=60, deadline=None)
@given(junk, junk)
def test_estimate_architecture_breakdown_and_explain_raise_only_the_projects_errors(value, mode):
    for action in (lambda: gpu_tco.estimate_architecture(value), lambda: gpu_tco.breakdown(gpu_tco.evaluate({}), mode),
                   lambda: gpu_tco.breakdown(value), lambda: gpu_tco.explain(value),
                   lambda: gpu_tco.explain("peak_train_gib_per_gpu", value), lambda: gpu_tco.resolve_inputs(value),
                   lambda: gpu_tco.explain("peak_train_gib_per_gpu", {"seq_len": value}),
                   lambda: gpu_tco.breakeven_series(value), lambda: gpu_tco.breakeven_series({"months": value})):
        try:
            action()
        except gpu_tco.GpuTcoError as err:
            assert len(str(err).splitlines()) == 1, str(err)


# --- the Excel entry point ----------------------------------------------------------------------------

def test_call_answers_bad_names_and_empty_ranges_with_input_texts():
    assert call("NOPE").startswith('#INPUT! function: "NOPE" is not a gpu-tco function; allowed: GPU_TCO')
    assert call(["GPU_TCO"]).startswith("#INPUT! function: ['GPU_TCO'] is not a gpu-tco function")
    assert "did you mean GPU_TCO" in call("gpu_tco")
    assert call("GPU_PLAN", []) == "#INPUT! model: is an empty range; select at least one cell"
    assert call("GPU_EXPLAIN", []) == "#INPUT! quantity: is an empty range; select at least one cell"
    assert call("GPU_TCO", "H100-SXM", [[]]) == "#INPUT! n_gpus: is an empty range; select at least one cell"
    with pytest.raises(ValueError, match="^#INPUT! function"):
        call("NOPE", raise_errors=True)


def test_call_marks_a_nat_in_a_range_and_keeps_the_other_rows():
    out = call("GPU_TCO", "H100-SXM", [[8], [pd.NaT], [pd.NA], [4]])
    assert out[0][0] == call("GPU_TCO", "H100-SXM", 8) and out[3][0] == call("GPU_TCO", "H100-SXM", 4)
    assert out[1][0] == "#INPUT! n_gpus: NaT is not a number; allowed: a whole number >= 1 and <= 100,000 (GPUs)"
    assert out[2][0].startswith("#INPUT! n_gpus: <NA> is not a number")
    assert call("GPU_TCO", "H100-SXM", [[8, [2]]])[0][1].startswith("#INPUT! n_gpus: [2] is not a number")


def test_call_given_pandas_and_numpy_returns_plain_lists():
    gpus = pd.Series(["H100-SXM", "A100-80GB"])
    expected = [[call("GPU_TCO", "H100-SXM")], [call("GPU_TCO", "A100-80GB")]]
    for arg in (gpus, pd.Index(gpus), gpus.to_numpy(), tuple(gpus), pd.DataFrame({"gpu": gpus})):
        out = call("GPU_TCO", arg)
        assert out == expected and _is_excel(out), type(arg)
    one = call("GPU_TCO", "H100-SXM", np.int64(8))
    assert type(one) is float and one == call("GPU_TCO", "H100-SXM", 8)
    assert type(call("GPU_SPEC", pd.Series(["H100-SXM"]))[0][0]) is float


cells = st.one_of(
    st.none(), st.booleans(), st.integers(-10, 10 ** 6), st.floats(), st.text(max_size=10),
    st.sampled_from(["H100-SXM", "Llama-3-8B", "qlora", "all", "total", "decode", "8", "70B", " ", "", pd.NaT, pd.NA,
                     np.int64(4), np.float64(0.5), np.datetime64("NaT"), b"8", 1j, object(), {"layers": 2}, [1], 10 ** 400]),
)
arguments = st.one_of(
    cells, st.lists(st.lists(cells, min_size=0, max_size=3), max_size=3), st.lists(cells, max_size=3),
    st.builds(lambda v: pd.Series(v, dtype=object), st.lists(cells, max_size=3)),
    st.builds(lambda v: np.array(v, dtype=object), st.lists(cells, min_size=1, max_size=3)),
)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.sampled_from(sorted(FUNCTIONS)), st.text(max_size=8), st.none(), st.lists(st.just("GPU_TCO"), max_size=1)),
       st.lists(arguments, max_size=4))
def test_call_never_raises_and_returns_only_excel_types(name, args):
    out = call(name, *args)
    assert _is_excel(out), (name, args, out)
    if isinstance(out, str) and out.startswith("#"):
        assert "\n" not in out and len(out) <= 255


# --- the command line under Ctrl-C and a full disk (real subprocesses) --------------------------------

def _command(*args):
    return [sys.executable, "-m", "gpu_tco", *args]


def _interrupt(cmd, cwd, when) -> tuple[int, str]:
    """Run ``cmd``, send SIGINT once ``when(proc, seconds since start)`` is true, return (exit code, stderr)."""
    started = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        while proc.poll() is None and not when(proc, time.monotonic() - started) and time.monotonic() - started < 30:
            time.sleep(0.001)
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, err


def _loading_numpy(proc, seconds) -> bool:
    """Whether the process has mapped NumPy's core library: it is inside the engine's imports."""
    try:
        return "_multiarray_umath" in Path(f"/proc/{proc.pid}/maps").read_text()
    except OSError:
        return False


def _after(proc, seconds, delay, seen) -> bool:
    if not seen and _loading_numpy(proc, seconds):
        seen.append(seconds)
    return bool(seen) and seconds - seen[0] > delay


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads /proc to catch the process during its imports")
def test_ctrl_c_at_any_moment_exits_130_with_one_line_and_leaves_the_old_workbook(tmp_path):
    """Ctrl-C while NumPy loads (the first few tenths of a second), then at later moments of writing a workbook:
    exit 130 and the one line, or (signal too late) a complete new workbook; never a traceback or a temporary."""
    target = tmp_path / "plan.xlsx"
    target.write_bytes(b"the older file")
    cases = {"while NumPy loads": _loading_numpy}
    # later moments, counted once the engine loads: on a busy machine, 0.4 s can still be inside the
    # interpreter's own start, before any of gpu-tco's code runs
    cases.update({f"{delay} s after NumPy": (lambda proc, seconds, delay=delay, seen=[]: _after(proc, seconds, delay, seen))
                  for delay in (0.2, 0.5, 0.8)})
    codes = {}
    for label, when in cases.items():
        code, err = _interrupt(_command("workbook", "--out", str(target)), tmp_path, when)
        codes[label] = code
        if code == 0:  # finished before the signal: a complete new workbook
            assert target.read_bytes()[:2] == b"PK", label
            continue
        assert (code, err) == (130, "gpu-tco: interrupted\n"), label
        assert target.read_bytes() == b"the older file" or target.read_bytes()[:2] == b"PK", label
    assert codes["while NumPy loads"] == 130
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plan.xlsx"]  # no temporary left behind


def _small_file_limit():
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the write fails with EFBIG instead of killing the process
    resource.setrlimit(resource.RLIMIT_FSIZE, (50 * 1024, 50 * 1024))


@pytest.mark.slow
@pytest.mark.skipif(resource is None, reason="needs setrlimit")
def test_a_full_disk_exits_2_with_one_line_and_keeps_the_old_workbook(tmp_path):
    target = tmp_path / "plan.xlsx"
    target.write_bytes(b"the older file")
    out = subprocess.run(_command("workbook", "--out", str(target)), cwd=tmp_path, capture_output=True, text=True,
                         preexec_fn=_small_file_limit, timeout=120)
    assert out.returncode == 2, out.stderr
    assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr, out.stderr
    assert out.stderr.startswith("gpu-tco: error: ") and "File too large" in out.stderr, out.stderr
    assert target.read_bytes() == b"the older file"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plan.xlsx"]


def test_a_huge_whole_number_is_quoted_in_short_form():
    """1e300 for a whole-number input (serving_layout) or for tokens reaches the message as a whole number; it is quoted
    as 1e+300, not as its 301 digits cut short."""
    from gpu_tco.addin.functions import call
    cli = subprocess.run([sys.executable, "-m", "gpu_tco", "plan", "--task", "serve", "--serving-layout", "1e300"],
                         capture_output=True, text=True, timeout=300)
    assert cli.returncode == 2 and "serving_layout: 1e+300 is too large" in cli.stderr, cli.stderr
    assert call("GPU_TRAIN_HOURS", "Llama-3.1-8B", 1e300).startswith("#INPUT! tokens: 1e+300 is too large")
    assert call("GPU_SERVE_PLAN", "Llama-3.1-8B", 10, 1000, 200, 2000, 50, None, None, None, None, None, None, None,
                None, 1e300).startswith("#INPUT! serving_layout: 1e+300 is too large")
