"""The generated code's faster forms equal the plain ones, and its cache on disk never gets in the way.

The code of every quantity is generated per task (an IF on the serve flag keeps its branch), with the parts of
formulas that read one catalog row alone computed once per row, and subtrees that may raise shared where they are
first computed on every path; the results must equal the plain code's.  The cache (core/codecache.py) keeps each
generated function in a folder of the user's cache; a stale, torn, corrupt or unwritable cache is rebuilt or
passed over without a word.  Each cache test runs the real engine in a fresh Python process."""
from __future__ import annotations

import csv
import io
import json
import math
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import random_config, run_compiled

from gpu_tco import core
from gpu_tco.core import codecache, codegen, engine

NAMES = list(core.QUANTITIES)


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-13, abs_tol=0)
    return a == b and type(a) is type(b)


_GENERATED: dict = {}


def _plain_scalar(values: dict, task: str | None, hoist: bool) -> dict:
    """Every quantity from code generated with or without the task folded and the row parts hoisted."""
    if (task, hoist) not in _GENERATED:
        saved = codegen.HOIST_ROW_SUBTREES
        codegen.HOIST_ROW_SUBTREES = hoist
        try:
            _GENERATED[task, hoist] = codegen._generate(False, codegen.QUANTITY_NAMES, None, task)[0]
        finally:
            codegen.HOIST_ROW_SUBTREES = saved
    compiled = _GENERATED[task, hoist]
    return run_compiled(compiled, values)


@pytest.mark.slow  # over 0.45 s
def test_code_per_task_with_row_parts_hoisted_equals_the_plain_code_on_random_inputs():
    checked = 0
    for i in range(30):
        cfg = random_config(random.Random(3700 + i))
        cfg["task"] = random.Random(i).choice(["train", "serve"])
        try:
            values = core.resolve_inputs(cfg)
        except core.InputError:
            continue
        task = engine._task_kinds()[values["task__row"]]
        plain = _plain_scalar(values, None, hoist=False)
        fast = _plain_scalar(values, task, hoist=True)
        evaluated = core.evaluate(cfg)
        assert all(_same(fast[n], evaluated[n]) for n in NAMES)
        bad = [n for n in NAMES if not _same(plain[n], fast[n])]
        assert not bad, (cfg, bad[:5])
        checked += 1
    assert checked >= 20


def test_generated_code_folds_the_task_and_computes_row_parts_once_per_row():
    train = codegen.compile_formulas(False, ("own_tco_usd",), None, "train")
    any_task = codegen.compile_formulas(False, ("own_tco_usd",))
    # owning a training job's GPUs never sizes a serving fleet: the serving chain is not in its code at all
    assert "serve_gpus" in any_task.source and "serve_gpus" not in train.source
    assert len(train.source) < len(any_task.source) / 2
    everything = codegen.compile_formulas(False, None, None, "train")
    assert "tasks__serve" not in everything.source  # every IF on the task flag kept its branch
    hoisted = [v for t, d in everything.derived.items() for v in d.names if v.startswith("_h")]
    assert len(hoisted) >= 10  # e.g. a mixture-of-experts model's active share k / E, once per model
    assert "(1 if 1 < 1 else 1)" not in everything.source and "_m" in everything.source  # MIN(1, 1) folded, not all MINs


def test_a_shared_subtree_that_may_raise_is_bound_only_where_every_path_computes_it():
    from gpu_tco.core.expr import IF, Ref
    x, y = Ref("n_gpus"), Ref("tensor_parallel")
    emitter = codegen._Emitter((), False, {})
    shared = x / y
    emitter.inline_memo = {}
    key = codegen._structure(shared, True, emitter.inline_memo)
    emitter.inline_shared = {key}
    guarded = emitter.render(IF(y > 0, shared, 0), False)
    assert ":=" not in guarded  # inside a branch: computed there, bound nowhere
    first = emitter.render(shared + 1, False)
    assert first.startswith("(_s0 := ") and emitter.render(shared - 2, False) == "_s0 - 2"


@pytest.mark.parametrize("row_by_row", [4096, 0])  # a planner's few rows looked up one by one; a large sweep per GPU
def test_a_sweep_picks_the_auto_offer_of_each_row_as_one_configuration_does(monkeypatch, row_by_row):
    # a sweep over GPUs and job sizes (sizes no offer sells included) picks, row by row, the offer a scalar call picks
    import numpy as np
    monkeypatch.setattr(core.offers, "_ROW_BY_ROW", row_by_row)
    rng = np.random.default_rng(37)
    gpus = [g["name"] for g in core.catalog.tables()["gpus"].rows if "MIG" not in g["name"]]
    n = 400
    sweep = {"gpu": list(rng.choice(gpus, n)), "n_gpus": rng.choice([1, 2, 4, 8, 16, 24, 64, 256, 1024, 4096], n)}
    values = {"offer__row": -1, "gpu__row": np.array([core.catalog.tables()["gpus"].find(g) for g in sweep["gpu"]], dtype=np.intp),
              "n_gpus": sweep["n_gpus"].astype(float)}
    core.offers.link_vector(values, (n,), True)
    one_by_one = [core.resolve_inputs({"gpu": g, "n_gpus": int(k)})["offer__row"] for g, k in zip(sweep["gpu"], sweep["n_gpus"])]
    assert values["offer__row"].tolist() == one_by_one
    assert len(set(one_by_one)) > 20  # many GPUs, and several offers of one GPU by job size


def test_a_sweep_of_job_sizes_on_one_gpu_picks_the_auto_offer_of_each_row_as_one_configuration_does():
    # one GPU, offer auto, an array of GPU counts (the benchmark's million-row sweep): each row's offer found by its
    # size step, as a scalar call finds it, for every GPU of the catalog (sizes between and beyond the steps included)
    import numpy as np
    counts = np.array([1, 2, 3, 4, 7, 8, 9, 16, 17, 24, 64, 100, 256, 1024, 4096, 100_000], dtype=float)
    picked = 0
    for g in core.catalog.tables()["gpus"].rows:
        values = {"offer__row": -1, "gpu__row": core.catalog.tables()["gpus"].find(g["name"]), "n_gpus": counts}
        core.offers.link_vector(values, counts.shape, True)
        one_by_one = []
        for k in counts.tolist():  # the link of a scalar call (without the checks a count may fail on this GPU)
            one = {"offer__row": -1, "gpu__row": int(values["gpu__row"]), "n_gpus": k}
            core.offers.link(one, True)
            one_by_one.append(one["offer__row"])
        assert np.broadcast_to(values["offer__row"], counts.shape).tolist() == one_by_one, g["name"]
        assert np.ndim(values["gpu__row"]) == 0  # one GPU: its row stays one value for the whole sweep
        # every count picking the same offer: the offer's row is one value for the whole sweep too
        assert (np.ndim(values["offer__row"]) == 0) == (len(set(one_by_one)) == 1), g["name"]
        picked += len(set(one_by_one)) > 1
        for start in range(counts.size - 1):  # narrower sweeps: within one step, across one, from one GPU up
            window = counts[start:start + 3]
            values = {"offer__row": -1, "gpu__row": values["gpu__row"], "n_gpus": window}
            core.offers.link_vector(values, window.shape, True)
            expected = one_by_one[start:start + 3]
            assert np.broadcast_to(values["offer__row"], window.shape).tolist() == expected, (g["name"], window)
            assert (np.ndim(values["offer__row"]) == 0) == (len(set(expected)) == 1), (g["name"], window)
    assert picked >= 5  # GPUs whose larger jobs take another offer


# --- the cache on disk ------------------------------------------------------------------------------------

_FIRST = """
import json, os, sys, time
t = time.perf_counter()
from gpu_tco import core
from gpu_tco.core import codecache
imported = time.perf_counter()
r = core.evaluate({"model": "Llama-3-8B", "gpu": "RTX-4090", "method": "qlora"})
done = time.perf_counter()
print(json.dumps({"peak": r["peak_train_gib_per_gpu"], "hours": r["train_hours"], "first_ms": (done - imported) * 1000,
                  "folder": str(codecache._folder())}))
"""


def _fresh(cache, extra_env=None) -> dict:
    env = {**os.environ, "GPU_TCO_CACHE_DIR": str(cache), **(extra_env or {})}
    out = subprocess.run([sys.executable, "-c", _FIRST], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0 and out.stderr == "", out.stderr
    return json.loads(out.stdout)


@pytest.fixture(scope="module")
def expected():
    r = core.evaluate({"model": "Llama-3-8B", "gpu": "RTX-4090", "method": "qlora"})
    return {"peak": r["peak_train_gib_per_gpu"], "hours": r["train_hours"]}


def _entries(folder) -> list:
    return sorted(p for p in folder.glob("code-*/*.bin"))


@pytest.fixture(scope="module")
def first_run(tmp_path_factory) -> tuple[Path, dict]:
    """A cache folder as a fresh process leaves it (its entries written) and what that process printed: the tests that
    damage a cache copy it rather than start a process of their own to fill one (about 0.3 s of CPU each)."""
    folder = tmp_path_factory.mktemp("filled-cache")
    return folder, _fresh(folder)


def _filled(tmp_path, first_run) -> dict:
    """``tmp_path`` holding a copy of ``first_run``'s cache; what its process printed, the folder named in ``tmp_path``."""
    folder, printed = first_run
    shutil.copytree(folder, tmp_path, dirs_exist_ok=True)
    return {**printed, "folder": str(tmp_path / os.path.basename(printed["folder"]))}


@pytest.mark.slow  # fresh Python processes
def test_a_fresh_process_writes_the_code_once_and_the_next_reads_it(tmp_path, expected):
    first = _fresh(tmp_path)
    entries = _entries(tmp_path)
    assert entries and {k: first[k] for k in expected} == expected
    stamps = {p: p.stat().st_mtime_ns for p in entries}
    second = _fresh(tmp_path)
    assert {k: second[k] for k in expected} == expected
    assert {p: p.stat().st_mtime_ns for p in _entries(tmp_path)} == stamps  # read, not written again
    assert not list(tmp_path.rglob(f"*{core.TEMP_MARK}*"))  # written atomically: no temporaries left


@pytest.mark.slow  # fresh Python processes
@pytest.mark.parametrize("damage", ["truncated", "garbage", "bit flipped", "empty", "folder"])
def test_a_corrupt_entry_is_rebuilt_silently(tmp_path, expected, damage, first_run):
    _filled(tmp_path, first_run)
    assert _entries(tmp_path)
    for path in _entries(tmp_path):
        data = path.read_bytes()
        if damage == "truncated":
            path.write_bytes(data[: len(data) // 2])
        elif damage == "garbage":
            path.write_bytes(os.urandom(len(data)))
        elif damage == "bit flipped":  # the checksum still catches a single bit inside the code object
            pos = len(data) * 3 // 4
            path.write_bytes(data[:pos] + bytes([data[pos] ^ 0x10]) + data[pos + 1:])
        elif damage == "empty":
            path.write_bytes(b"")
        else:
            path.unlink()
            path.mkdir()
    again = _fresh(tmp_path)  # no error, no output on stderr (checked in _fresh), the same answer
    assert {k: again[k] for k in expected} == expected
    if damage != "folder":
        assert all(codecache.MAGIC in p.read_bytes()[:64] for p in _entries(tmp_path))  # rewritten whole


@pytest.mark.slow  # fresh Python processes
def test_a_stale_cache_of_another_version_is_replaced(tmp_path, expected, first_run):
    first = _filled(tmp_path, first_run)
    current = tmp_path / os.path.basename(first["folder"])
    stale = tmp_path / "code-0123456789abcdef01234567"
    current.rename(stale)  # what an older gpu-tco (other formulas or catalogs) left behind
    again = _fresh(tmp_path)
    assert {k: again[k] for k in expected} == expected
    assert not stale.exists() and current.is_dir()
    # an entry whose recorded fingerprint is not this version's is not used, even under this version's name
    entry = _entries(tmp_path)[0]
    key_and_value = codecache.marshal.loads(entry.read_bytes()[len(codecache.MAGIC) + 32:])
    assert key_and_value["fingerprint"] == os.path.basename(first["folder"])[len("code-"):]


def test_the_fingerprint_follows_the_formulas_and_catalogs(tmp_path, monkeypatch):
    before = codecache.fingerprint()
    codecache.fingerprint.cache_clear()
    try:
        import hashlib
        real = codecache.Path.read_bytes
        monkeypatch.setattr(codecache.Path, "read_bytes",
                            lambda self: real(self) + (b"# changed" if self.name == "formulas.py" else b""))
        assert codecache.fingerprint() != before
    finally:
        monkeypatch.undo()
        codecache.fingerprint.cache_clear()
    assert codecache.fingerprint() == before
    assert hashlib  # the hash is sha256 over every core/*.py and core/data/*.csv


@pytest.mark.slow  # fresh Python processes
def test_an_unwritable_cache_folder_is_passed_over(tmp_path, expected):
    if sys.platform.startswith("linux"):
        # /proc takes no new folders, not even from root (the tests may run as root, who writes anywhere else)
        again = _fresh("/proc/self/gpu-tco-cache")
    else:
        tmp_path.chmod(0o500)
        try:
            again = _fresh(tmp_path / "cache")
        finally:
            tmp_path.chmod(0o700)
        assert not (tmp_path / "cache").exists()
    assert {k: again[k] for k in expected} == expected


@pytest.mark.slow  # fresh Python processes
def test_a_cache_path_that_is_a_file_is_passed_over(tmp_path, expected):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder would be")
    again = _fresh(blocker)
    assert {k: again[k] for k in expected} == expected
    assert blocker.read_text() == "a file where the cache folder would be"


def test_without_readable_sources_the_cache_is_not_used(tmp_path, monkeypatch):
    """A frozen application holds compiled modules only: no fingerprint could tell two of its versions apart."""
    monkeypatch.setenv(codecache.CACHE_ENV, str(tmp_path))
    codecache.fingerprint.cache_clear()
    real_glob = codecache.Path.glob
    monkeypatch.setattr(codecache.Path, "glob", lambda self, pattern: [] if pattern == "*.py" else real_glob(self, pattern))
    try:
        assert codecache.fingerprint() is None
        assert not codecache.save(("k",), {"source": ""}) and codecache.load(("k",)) is None
        assert not list(tmp_path.iterdir())
    finally:
        monkeypatch.undo()
        codecache.fingerprint.cache_clear()
    assert codecache.fingerprint() is not None


def test_no_cache_root_is_created(tmp_path, monkeypatch):
    """gpu-tco makes its own folder inside an existing cache root (~/.cache), never the root itself: a home without
    one stays as it was."""
    monkeypatch.setenv(codecache.CACHE_ENV, str(tmp_path / "no-root" / "gpu-tco"))
    assert not codecache.save(("k",), {"source": ""})
    assert not (tmp_path / "no-root").exists()


def test_save_and_load_round_trip_and_refuse_another_key(tmp_path, monkeypatch):
    monkeypatch.setenv(codecache.CACHE_ENV, str(tmp_path))
    value = {"source": "x = 1\n", "code": compile("x = 1\n", "<t>", "exec"), "n": (1, 2)}
    assert codecache.save(("k", 1), value)
    back = codecache.load(("k", 1))
    assert back["source"] == "x = 1\n" and back["n"] == (1, 2)
    path = codecache._entry_path(("k", 1))
    other = codecache._entry_path(("k", 2))
    other.write_bytes(path.read_bytes())  # an entry copied under another key's name is not that key's
    assert codecache.load(("k", 2)) is None
    assert codecache.load(("never", "stored")) is None


def test_walks_over_the_formulas_are_read_back_from_the_cache_and_recomputed_when_damaged(tmp_path, monkeypatch):
    """``codecache.remembered``: what the command line's options and the fit rules walk the expression trees for at
    each start is stored once and read back; a damaged entry is computed again, never trusted."""
    monkeypatch.setenv(codecache.CACHE_ENV, str(tmp_path))
    outputs = ("train_hours", "own_tco_usd")
    walked = codegen._inputs_of(outputs, "train")
    assert "seq_len" in walked and "purchase_usd_per_gpu" in walked and "requests_per_s" not in walked
    assert codecache.remembered(("t", outputs), lambda: walked) == walked
    (entry,) = _entries(tmp_path)

    def never():
        raise AssertionError("computed again although stored")
    assert codecache.remembered(("t", outputs), never) == walked  # read back, not computed
    entry.write_bytes(entry.read_bytes()[:-5] + b"xxxxx")  # damaged: the checksum fails
    assert codecache.remembered(("t", outputs), lambda: ["computed", "again"]) == ["computed", "again"]
    assert codecache.remembered(("t", outputs), never) == ["computed", "again"]  # the fresh value was stored
    # the public walks answer as the trees do, from a fresh cache or the stored one
    codegen._inputs_of_kept.cache_clear()
    assert core.inputs_of(list(outputs)) == walked
    codegen._inputs_of_kept.cache_clear()
    assert core.inputs_of(list(outputs)) == walked
    from gpu_tco.core import job_fit
    assert job_fit._depending(("train_hours",)) == job_fit._walk_depending(("train_hours",), ())


def test_a_refit_kept_in_the_cache_is_read_back_for_the_same_rows_only(tmp_path, monkeypatch):
    """``codecache.kept``: the calibration's refits are stored per set of rows, read back for the same rows (NumPy
    numbers as Python's), computed again for other rows or a damaged entry."""
    import numpy as np
    monkeypatch.setenv(codecache.CACHE_ENV, str(tmp_path))
    rows = [{"id": "a", "value": 1.5}, {"id": "b", "value": 2.0}]
    first = codecache.kept("refit", rows, lambda: {"median": np.float64(0.25), ("x", "y"): [np.int64(3), "z"]})
    assert first == {"median": 0.25, ("x", "y"): [3, "z"]} and type(first["median"]) is float
    assert type(first[("x", "y")][0]) is int

    def never():
        raise AssertionError("computed again for the same rows")
    assert codecache.kept("refit", rows, never) == first
    assert codecache.kept("refit", [*rows, {"id": "c", "value": 1.0}], lambda: {"median": 0.5}) == {"median": 0.5}
    assert codecache.kept("another refit", rows, lambda: {"median": 0.75}) == {"median": 0.75}
    for entry in _entries(tmp_path):
        entry.write_bytes(entry.read_bytes()[:40])
    assert codecache.kept("refit", rows, lambda: {"median": 1.0}) == {"median": 1.0}


def test_a_kept_refit_follows_the_users_catalogs(tmp_path, monkeypatch):
    """The calibration's refits kept in the code cache are keyed by the catalogs as loaded: a user's own GPU file
    (an H100 with a third of its memory bandwidth) gives its own serving errors, not those stored for the shipped
    catalogs, and back."""
    from gpu_tco.core import calibration, catalog
    monkeypatch.setenv(codecache.CACHE_ENV, str(tmp_path / "cache"))
    rows = calibration.serving_measurements()
    sources = sorted({m.source for m in rows if "H100" in str(m.inputs.get("gpu"))})[:2]
    mine = [m for m in rows if m.source in sources]
    shipped = calibration.serving_family_decision(mine)["without"]
    config = tmp_path / "config"
    config.mkdir()
    text = (catalog.DATA_DIR / "gpus.csv").read_text(encoding="utf-8").splitlines()
    header = text[0].split(",")
    h100 = next(line for line in text if line.startswith("H100-SXM,"))
    fields = next(csv.reader([h100]))
    fields[header.index("memory_bandwidth_gbps")] = "1000"
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows([header, fields])
    (config / "gpus.csv").write_text(buffer.getvalue(), encoding="utf-8")
    monkeypatch.setenv("GPU_TCO_CONFIG_DIR", str(config))
    catalog.reload()
    try:
        slower = calibration.serving_family_decision(mine)["without"]
    finally:
        monkeypatch.delenv("GPU_TCO_CONFIG_DIR")
        catalog.reload()
    assert slower != shipped
    assert calibration.serving_family_decision(mine)["without"] == shipped  # the shipped catalogs' entry, read back
