"""A large sweep computes what depends only on inputs that take few values together once per combination of their
values (engine._run_split): the results must be the plain vector code's, bit for bit, type, sign of zero and
broadcast views included, for every length (one row, a block, a block and one) and shape."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from gpu_tco import core
from gpu_tco.core import codegen, engine
from gpu_tco.core.codegen import compile_formulas, split_by_inputs

NAMES = list(core.QUANTITIES)


def _identical(a, b, b_may_be_one_value: bool = False) -> bool:
    """Same type, shape, broadcast or not, and bits (NaN payloads aside: every NaN equals every NaN).
    ``b_may_be_one_value``: ``b`` may also be one value broadcast where ``a``'s rows all hold that value (a split sweep
    returns what is one value in every combination so)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if (0 in a.strides) != (0 in b.strides) and not (b_may_be_one_value and 0 in b.strides):
        return False
    if a.dtype.kind != "f":
        return bool(np.array_equal(a, b))
    return bool(np.all(((a == b) & (np.signbit(a) == np.signbit(b))) | (np.isnan(a) & np.isnan(b))))


def _split_like_plain(plain, split) -> bool:
    """A split sweep's result against the plain vector code's: the same bits, broadcast where the plain one is and
    perhaps where the plain one's rows all hold one value."""
    return _identical(plain, split, b_may_be_one_value=True)


def _plain_and_split(monkeypatch, sweep: dict, outputs=None) -> tuple[dict, dict]:
    monkeypatch.setattr(engine, "FEW_VALUES_MIN_ROWS", 10**18)
    plain = core.evaluate(sweep, outputs=outputs)
    monkeypatch.setattr(engine, "FEW_VALUES_MIN_ROWS", 1)
    monkeypatch.setattr(engine, "FEW_VALUES_ROWS_PER_COMBINATION", 1)  # small sweeps split too
    calls = []
    real = engine._run_split
    monkeypatch.setattr(engine, "_run_split", lambda *a: calls.append(real(*a)) or calls[-1])
    split = core.evaluate(sweep, outputs=outputs)
    assert calls and calls[-1] is not None  # it did split
    monkeypatch.setattr(engine, "_run_split", real)
    return plain, split


def _sweep(rng: np.random.Generator, n: int) -> dict:
    """Four inputs of few values (GPU counts, batch sizes, ranks, GPUs) and one of many (sequence lengths)."""
    return {"seq_len": rng.integers(128, 32768, n), "micro_batch": rng.integers(1, 16, n),
            "n_gpus": rng.choice([1, 2, 4, 8], n), "lora_rank": rng.integers(4, 128, n).astype(float),
            "gpu": rng.choice(["H100-SXM", "A100-80GB-SXM", "L40S"], n).astype(object), "method": "lora"}


@pytest.mark.parametrize(("rows", "chunk"), [(1, 7), (7, 7), (8, 7), (29, 7), (300, 64), (65, 64)])
def test_split_sweeps_equal_the_plain_vector_code_bit_for_bit(monkeypatch, rows, chunk):
    monkeypatch.setattr(engine, "CHUNK_ROWS", chunk)
    plain, split = _plain_and_split(monkeypatch, _sweep(np.random.default_rng(rows), rows))
    assert list(plain) == list(split) == NAMES
    wrong = [n for n in NAMES if not _split_like_plain(plain[n], split[n])]
    assert not wrong, wrong[:5]
    assert all(split[n].shape == (rows,) for n in NAMES)


def test_the_split_really_happens_and_broadcast_quantities_stay_broadcast(monkeypatch):
    """The bench's kind of sweep: most quantities depend on the GPU count, batch size and rank alone."""
    monkeypatch.setattr(engine, "CHUNK_ROWS", 64)
    seen = []
    real = engine.split_by_inputs

    def spy(outputs, varying, narrow, task):
        seen.append((varying, narrow))
        return real(outputs, varying, narrow, task)

    monkeypatch.setattr(engine, "split_by_inputs", spy)
    sweep = {k: v for k, v in _sweep(np.random.default_rng(5), 1000).items() if k not in ("gpu", "method")}
    plain, split = _plain_and_split(monkeypatch, sweep)
    # 4 GPU counts x 15 batch sizes fit in 1,000 rows; 124 ranks more would not (one GPU, and every count picks the
    # same offer "auto": the GPU's and the offer's rows are one value for the whole sweep, neither an input that varies)
    assert seen and seen[-1][1] == {"n_gpus", "micro_batch"}, seen
    assert "offer" not in seen[-1][0]
    few, rest, given = real(tuple(NAMES), seen[-1][0], seen[-1][1], "train")
    per_row = set(rest) & set(codegen.depending_on(seen[-1][0] - seen[-1][1]))  # (the rest: per row, or one value)
    assert len(few) > len(per_row) and given <= set(few)
    broadcast = {n for n in NAMES if 0 in np.asarray(plain[n]).strides}
    one_value = {n for n in NAMES if 0 in np.asarray(split[n]).strides}
    assert broadcast and broadcast < one_value  # and more: what is one value in every combination of counts and sizes
    assert "dp_link_gb_per_s" in one_value - broadcast  # (one link speed for every GPU count of this sweep)
    assert not [n for n in NAMES if not _split_like_plain(plain[n], split[n])]


def test_a_sweep_of_gpu_counts_that_all_pick_one_offer_reads_that_offer_once():
    """Offer "auto" over GPU counts the same offer sells: the offer's row is one value for the whole sweep, so what
    depends on the offer alone (its price, its link speeds) comes back as one value broadcast to every row, as a
    quantity no swept input reaches does, and equals each row's own answer."""
    counts = np.array([1, 2, 4, 8, 2, 1, 4])
    swept = core.evaluate({"gpu": "H100-SXM", "n_gpus": counts, "seq_len": 4096})
    for name in ("rent_usd_per_gpu_hour", "offer_node_gpus", "inter_node_gb_per_s"):
        assert 0 in swept[name].strides, name  # one value, not an array written row by row
    rows = [core.evaluate({"gpu": "H100-SXM", "n_gpus": int(k), "seq_len": 4096}) for k in counts]
    picked = {core.resolve_inputs({"gpu": "H100-SXM", "n_gpus": int(k)})["offer"] for k in counts}
    assert len(picked) == 1  # (the premise: every count picks the same offer)
    wrong = [n for n in NAMES if isinstance(rows[0][n], (int, float))
             and not np.allclose(swept[n], [row[n] for row in rows], rtol=1e-13, atol=0, equal_nan=True)]
    assert not wrong, wrong[:5]


@pytest.mark.slow  # over 0.45 s
def test_grids_requested_outputs_and_series_keep_their_shape(monkeypatch):
    monkeypatch.setattr(engine, "CHUNK_ROWS", 5)
    grid = {"seq_len": np.array([[512], [2048], [8192]]), "n_gpus": np.array([1, 2, 4, 8])}
    asked = ["peak_train_gib_per_gpu", "gpu_memory_gib", "train_hours"]
    plain, split = _plain_and_split(monkeypatch, grid, asked)
    assert list(split) == asked and all(_split_like_plain(plain[n], split[n]) for n in asked)
    assert split["train_hours"].shape == (3, 4)
    import pandas as pd
    s = pd.Series([1, 2, 4, 4, 2, 1], index=list("abcdef"))  # (GPU counts spanning fewer values than rows: split)
    plain, split = _plain_and_split(monkeypatch, {"n_gpus": s, "seq_len": [512, 1024] * 3}, asked)
    assert list(split["train_hours"].index) == list("abcdef")
    assert all(_split_like_plain(plain[n].to_numpy(), split[n].to_numpy()) for n in asked)


def test_inputs_of_few_values_are_found_and_numbered_exactly():
    rng = np.random.default_rng(3)
    n = 4000
    flat = {"ints": rng.choice([3, 7, 11], n), "whole_floats": rng.choice([1.0, 2.0, 8.0], n),
            "flags": rng.choice([True, False], n), "many": rng.integers(0, 10**6, n).astype(float),
            "halves": rng.choice([0.5, 1.5], n), "negative_zero": rng.choice([-0.0, 1.0], n),
            "nan": np.where(rng.random(n) < 0.5, np.nan, 1.0), "one": np.full(n, 4.0), "zeros": np.zeros(n)}
    flat["zeros"][n // 2] = -0.0
    names, combination, values_of = engine._few_values(flat, n)
    assert names == ["one", "flags", "ints", "whole_floats"]  # fewest values first; the rest are not whole numbers or too many
    assert combination.dtype == np.intp and combination.max() + 1 == len(values_of["ints"]) == 18
    for name in names:  # each row's combination gives back its own values, of its own type
        assert values_of[name].dtype == flat[name].dtype
        assert np.array_equal(values_of[name][combination], flat[name])


def test_validation_messages_are_those_of_the_plain_path(monkeypatch):
    sweep = {"n_gpus": [8] * 40 + [3] + [8] * 9, "tensor_parallel": 2, "seq_len": list(range(512, 562))}
    messages = []
    for few_min in (10**18, 1):
        monkeypatch.setattr(engine, "FEW_VALUES_MIN_ROWS", few_min)
        monkeypatch.setattr(engine, "FEW_VALUES_ROWS_PER_COMBINATION", 1)
        with pytest.raises(core.InputError) as err:
            core.evaluate(sweep)
        messages.append(str(err.value))
    assert messages[0] == messages[1] and "row 40" in messages[0], messages


def test_the_per_row_code_reads_what_was_computed_per_combination_instead_of_computing_it():
    outputs = ("peak_train_gib_per_gpu", "train_hours")
    varying = frozenset({"seq_len", "n_gpus"})
    few, rest, given = split_by_inputs(outputs, varying, frozenset({"n_gpus"}), "train")
    assert "states_gib" in few and "states_gib" in given and not set(rest) & set(few)
    assert set(few) | set(rest) >= set(outputs)
    whole = compile_formulas(True, outputs, varying, "train")
    part = compile_formulas(True, rest, varying, "train", given, outputs)
    assert part is not whole and part.source != whole.source
    block = part.source.split("def _block(V, O):")[1]
    assert "states_gib = V['states_gib']" in block and "states_gib = _np" not in block
    assert "dp_size" not in block  # read only by what was computed per combination


@pytest.mark.slow  # a fresh process sweeping ten million rows
def test_ten_million_rows_of_one_quantity_stay_within_their_memory():
    from gpu_tco.bench import _BIG_SWEEP
    out = subprocess.run([sys.executable, "-c", _BIG_SWEEP, "cpu"], capture_output=True, text=True, check=True, timeout=300)
    assert json.loads(out.stdout)["peak_mb"] <= 400


@pytest.mark.slow  # over 0.45 s
def test_models_outside_the_catalog_serving_jobs_and_inputs_of_many_values_split_alike(monkeypatch):
    """Catalog rows past the catalog's own (a parameter count, architecture fields), a serving task, a float input
    of many values (hours a day) beside counts of few."""
    monkeypatch.setattr(engine, "CHUNK_ROWS", 16)
    rng = np.random.default_rng(11)
    n = 200
    spec = {"layers": 32, "hidden": 4096, "ffn": 14336, "heads": 32, "kv_heads": 8, "vocab": 128256}
    models = np.empty(n, dtype=object)
    models[:] = [["Llama-3-8B", "13B", 70.0, spec][i] for i in rng.integers(0, 4, n)]
    for task in ("train", "serve"):
        sweep = {"model": models, "n_gpus": rng.choice([1, 2, 8], n), "hours_per_day": rng.uniform(1, 24, n),
                 "micro_batch": rng.integers(1, 4, n), "task": task}
        plain, split = _plain_and_split(monkeypatch, sweep)
        wrong = [q for q in NAMES if not _split_like_plain(plain[q], split[q])]
        assert not wrong, (task, wrong[:5])


@pytest.mark.parametrize("ahead", [False, True])
def test_spreading_on_a_second_thread_gives_the_results_of_one(monkeypatch, ahead):
    """The second thread spreading what the per-row code does not read, and (``ahead``) first, step by step ahead of
    it, what it reads: the results of one thread."""
    monkeypatch.setattr(engine, "CHUNK_ROWS", 64)
    monkeypatch.setattr(engine, "_SPREAD_ROWS", 100)  # several calls per output on the second thread, the last short
    monkeypatch.setattr(engine, "SPREAD_AHEAD", ahead)
    sweep = _sweep(np.random.default_rng(9), 1001)
    results = []
    for second_thread in (False, True):
        monkeypatch.setattr(engine, "SPREAD_ON_A_SECOND_THREAD", second_thread)
        results.append(_plain_and_split(monkeypatch, sweep))
    (plain, one), (_, two) = results
    assert not [n for n in NAMES if not (_split_like_plain(plain[n], one[n]) and _identical(one[n], two[n]))]


def test_an_error_on_the_second_thread_is_raised_by_the_sweep_and_never_leaves_it_waiting(monkeypatch):
    import threading
    monkeypatch.setattr(engine, "CHUNK_ROWS", 64)
    monkeypatch.setattr(engine, "FEW_VALUES_MIN_ROWS", 1)
    monkeypatch.setattr(engine, "FEW_VALUES_ROWS_PER_COMBINATION", 1)
    monkeypatch.setattr(engine, "SPREAD_AHEAD", True)
    monkeypatch.setattr(engine, "_SPREAD_ROWS", 0)  # range() of step 0: the second thread fails at once
    monkeypatch.setattr(engine.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)  # (two cores anywhere)
    outcome = []

    def sweep() -> None:
        try:
            core.evaluate(_sweep(np.random.default_rng(2), 1001))
        except ValueError as err:
            outcome.append(err)

    caller = threading.Thread(target=sweep, daemon=True)
    caller.start()
    caller.join(60)
    assert not caller.is_alive() and outcome and "must not be zero" in str(outcome[0])


def test_results_held_are_never_written_over_by_the_next_split_sweep(monkeypatch):
    """The arrays of a sweep nobody holds any more are lent to the next sweep of the same size; those of a held
    result never are (a held result's arrays are views of the lent arrays)."""
    monkeypatch.setattr(engine, "CHUNK_ROWS", 64)
    monkeypatch.setattr(engine, "FEW_VALUES_MIN_ROWS", 1)
    monkeypatch.setattr(engine, "FEW_VALUES_ROWS_PER_COMBINATION", 1)
    rng = np.random.default_rng(21)
    first = core.evaluate(_sweep(rng, 1001))
    kept = {n: np.array(v) for n, v in first.items()}
    second = core.evaluate(_sweep(rng, 1001))
    assert not [n for n in NAMES if not _identical(np.array(first[n]), kept[n])]
    assert any(not np.array_equal(first[n], second[n]) for n in NAMES)
    del first
    third = core.evaluate(_sweep(rng, 1001))  # may reuse the first's arrays, never the second's
    assert not [n for n in NAMES if 0 not in second[n].strides and np.shares_memory(second[n], third[n])]


@pytest.mark.parametrize("job", [{"method": "lora"}, {"method": "full", "flash_attention": 0},
                                 {"task": "serve", "gpu": "L40S"}])
def test_per_row_ifs_computing_the_branch_taken_alone_give_the_results_of_both_branches(monkeypatch, job):
    """An IF whose condition is one value for the whole sweep computes, after the first block, only the branch it
    takes (codegen._lif): every quantity's type, broadcast or not and bits equal those of the code computing both
    branches of every IF, in sweeps of many blocks, split or not."""
    monkeypatch.setattr(engine, "CHUNK_ROWS", 64)
    rng = np.random.default_rng(17)
    sweep = {**{k: v for k, v in _sweep(rng, 1000).items() if k not in ("gpu", "method")}, **job}
    results = []
    for lazy in (False, True):
        monkeypatch.setattr(codegen, "LAZY_IF", lazy)
        codegen.compile_formulas.cache_clear()
        results.append(_plain_and_split(monkeypatch, sweep))
    codegen.compile_formulas.cache_clear()
    (both_plain, both_split), (lazy_plain, lazy_split) = results
    assert "_lif(" in codegen.compile_formulas(True, None, frozenset(sweep) - set(job), engine._task_kinds()[
        core.resolve_inputs(job)["task__row"]]).source  # (the premise: the per-row code has such IFs)
    codegen.compile_formulas.cache_clear()
    assert not [n for n in NAMES if not _identical(both_plain[n], lazy_plain[n])]
    assert not [n for n in NAMES if not _identical(both_split[n], lazy_split[n])]


def test_an_if_computing_the_branch_taken_alone_gives_what_both_branches_give():
    """codegen._lif against codegen._vif over branches of every kind the per-row code meets: arrays and single values
    of yes/no, whole and real numbers, each taken and not taken; its first call and later calls alike."""
    rows = np.array([0.5, -0.0, 3.0])
    kinds = [rows > 0, rows.astype(np.int64), rows, np.float64(2.5), np.int64(3), np.bool_(True), 0, 1.5, True]
    checked = 0
    for a in kinds:
        for b in kinds:
            for condition in (True, False, np.bool_(True), np.bool_(False)):
                expected = codegen._vif(condition, a, b)
                notes = [None]
                for _ in range(3):  # the first call notes, the later ones compute the branch taken alone
                    got = codegen._lif(notes, 0, condition, lambda a=a: a, lambda b=b: b)
                    assert type(got) is type(expected), (a, b, condition, got, expected)
                    assert np.asarray(got).dtype == np.asarray(expected).dtype and np.shape(got) == np.shape(expected)
                    assert _identical(np.asarray(got), np.asarray(expected))
                    checked += 1
    assert checked == 9 * 9 * 4 * 3
    calls = []
    notes = [None]
    for _ in range(3):
        codegen._lif(notes, 0, True, lambda: calls.append("taken") or rows, lambda: calls.append("not taken") or rows)
    assert calls == ["taken", "not taken", "taken", "taken"]  # both branches in the first call only


def test_inputs_given_as_integers_are_numbered_as_their_values_tested_one_by_one_would_be():
    """engine._few_values skips testing each value of an input given as integers (floats made from integers are whole
    numbers and never -0.0): the same names, combinations and values as the value-by-value test gives."""
    rng = np.random.default_rng(8)
    n = 5000
    flat = {"counts": rng.choice([1, 2, 4, 8], n).astype(float), "sizes": rng.integers(-3, 12, n).astype(float),
            "lengths": rng.integers(128, 4096, n).astype(float)}
    tested = engine._few_values(flat, n)
    trusted = engine._few_values(flat, n, frozenset(flat))
    assert tested[0] == trusted[0] == ["counts", "sizes"]
    assert np.array_equal(tested[1], trusted[1])
    assert all(np.array_equal(tested[2][k], trusted[2][k]) for k in tested[0])
    swept = {"n_gpus": rng.choice([1, 2, 4, 8], 70_000), "seq_len": rng.integers(128, 4096, 70_000)}
    seen = []
    real = engine._few_values
    try:
        engine._few_values = lambda flat, size, whole=frozenset(): seen.append(whole) or real(flat, size, whole)
        core.evaluate(swept, outputs=["train_hours"])
        core.evaluate({**swept, "n_gpus": swept["n_gpus"].astype(float)}, outputs=["train_hours"])
    finally:
        engine._few_values = real
    assert seen == [{"n_gpus", "seq_len"}, {"seq_len"}]  # floats given: each value tested


def test_quantities_equal_in_every_row_share_one_read_only_array(monkeypatch):
    """A large sweep gives quantities that are equal in every row one result array: those computed once per
    combination when their values are equal in every combination, those of the per-row code when it returns one as the
    very array of another (job_hours_base is train_hours when job_hours is 0).  A shared array is read-only; the others
    stay writable, also in the next sweep, which may reuse the memory of the first."""
    monkeypatch.setattr(engine, "CHUNK_ROWS", 64)
    sweep = {k: v for k, v in _sweep(np.random.default_rng(4), 3000).items() if k not in ("gpu", "method")}
    plain, split = _plain_and_split(monkeypatch, sweep)
    assert not [n for n in NAMES if not _split_like_plain(plain[n], split[n])]
    arrays = {n: v for n, v in split.items() if 0 not in v.strides}
    groups: dict[int, list[str]] = {}
    for name, v in arrays.items():
        groups.setdefault(id(v.base if v.base is not None else v), []).append(name)
    shared = [g for g in groups.values() if len(g) > 1]
    assert any({"lora_params", "trainable_params"} <= set(g) for g in shared)  # per combination
    assert any({"train_hours", "job_hours_base"} <= set(g) for g in shared)    # per row
    for group in shared:
        assert all(_identical(arrays[group[0]], arrays[n]) for n in group)
        assert not any(arrays[n].flags.writeable for n in group)
    alone = [g[0] for g in groups.values() if len(g) == 1]
    assert alone and all(arrays[n].flags.writeable for n in alone)
    with pytest.raises(ValueError, match="read-only"):
        split["trainable_params"][0] = 1.0
    del split, arrays, groups
    again = core.evaluate(sweep)  # (the same kind of sweep: the first's arrays may be lent again)
    assert all(again[n].flags.writeable for n in alone)
    assert not [n for n in NAMES if not _split_like_plain(plain[n], again[n])]


def test_work_shared_by_two_threads_comes_back_in_order_and_an_error_on_either_is_raised(monkeypatch):
    monkeypatch.setattr(engine.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)  # (two cores anywhere)
    import threading
    ran_on = {}

    def work(i):
        ran_on[i] = threading.current_thread().name
        return i * i

    assert engine._on_two_cores([lambda i=i: work(i) for i in range(7)]) == [i * i for i in range(7)]
    assert len(set(ran_on.values())) == 2  # every second one on the helper thread
    for failing in (0, 1):  # on the calling thread, on the helper
        with pytest.raises(ZeroDivisionError):
            engine._on_two_cores([lambda i=i, f=failing: 1 / (i != f) for i in range(4)])


def test_a_large_sweep_with_several_bad_inputs_names_the_first_as_a_small_one_does(monkeypatch):
    """A large sweep checks its columns of numbers on two threads: the error is still the first bad input's, in the
    order given, as in a sweep checked one column after the other."""
    monkeypatch.setattr(engine.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)  # (two cores anywhere)
    n = 2 * engine.FEW_VALUES_MIN_ROWS
    seq, batch, gpus = np.full(n, 4096), np.full(n, 2), np.array(["H100-SXM"] * n, dtype=object)
    seq[100], batch[7], gpus[5] = -1, 0, "H1000"
    messages = []
    for order in (("seq_len", "gpu", "micro_batch"), ("gpu", "seq_len", "micro_batch"), ("micro_batch", "seq_len", "gpu")):
        columns = {"seq_len": seq, "micro_batch": batch, "gpu": gpus}
        for rows in (n, 200):  # large, then small (checked one column after the other)
            sweep = {k: columns[k][:rows] for k in order}
            with pytest.raises(core.InputError) as err:
                core.evaluate(sweep)
            messages.append((order[0], err.value.field))
    assert all(first == field for first, field in messages), messages


def test_an_output_asked_for_twice_is_no_shared_array():
    """Two slots of one quantity (outputs=["x", "x"]) return the same array: that is no second quantity sharing it,
    so the result stays writable."""
    sweep = {"seq_len": np.random.default_rng(5).integers(128, 32768, engine.CHUNK_ROWS + 100)}
    assert core.evaluate(sweep, outputs=["train_hours", "train_hours"])["train_hours"].flags.writeable


def test_a_sweep_whose_per_row_code_reads_nothing_spread_never_waits_for_the_second_thread(monkeypatch):
    """With SPREAD_AHEAD and nothing of what the second thread spreads read by the per-row code, the calling thread
    does not wait for it before its first block (the two run at once)."""
    monkeypatch.setattr(engine.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)  # (two cores anywhere)
    progress_made = []
    real = engine._spread_later

    def spy(*args):
        started = real(*args)
        progress_made.append(started[2])
        return started

    monkeypatch.setattr(engine, "_spread_later", spy)
    n = engine.FEW_VALUES_MIN_ROWS + 1000
    rng = np.random.default_rng(5)
    sweep = {"seq_len": rng.integers(128, 32768, n), "n_gpus": rng.choice([1, 2, 4, 8], n)}
    core.evaluate(sweep, outputs=["train_hours", "data_parallel_size", "weights_gib"])
    assert progress_made == [None]  # (nothing the per-row code reads: no progress to wait on)
