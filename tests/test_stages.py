"""Scalar evaluation in stages (core/codegen.py ``_staged``) gives what the plain generated code gives, bit for bit.

A stage's results are kept by the exact values it reads and reused by later calls; these tests run sequences of
random configurations, each followed by neighbours that change one swept input (as a spreadsheet or a planner
does), through ``core.evaluate`` and through the plain code (``Compiled.fn``, no kept results) and compare every
quantity's value, type and sign, and the order of the result's keys; then the same after a catalog changes, with
inputs of other types (8 and 8.0, 0.0 and -0.0, 1 and True), from several threads, and with a model outside the
catalog.  The kept results stay within their bounds."""
from __future__ import annotations

import math
import random
import threading

import pytest
from helpers import random_config, run_compiled
from hypothesis import given, settings
from hypothesis import strategies as st

from gpu_tco import core
from gpu_tco.core import catalog, codegen, engine


def _plain(cfg: dict) -> dict:
    """Every quantity from the plain generated code: nothing kept between calls."""
    values = core.resolve_inputs(cfg)
    compiled = codegen.compile_formulas(False, None, None, engine._task_kinds()[values["task__row"]])
    return run_compiled(compiled, values)


def _identical(a: dict, b: dict) -> list[str]:
    """Quantities whose value differs in any bit, or in type (repr tells 8 from 8.0 and 0.0 from -0.0)."""
    assert list(a) == list(b)
    return [k for k in a if type(a[k]) is not type(b[k]) or repr(a[k]) != repr(b[k])]


def _check(cfg: dict) -> bool:
    try:
        plain = _plain(cfg)
    except core.InputError:
        with pytest.raises(core.InputError):
            core.evaluate(cfg)
        return False
    staged = core.evaluate(cfg)
    assert not _identical(staged, plain), (cfg, _identical(staged, plain)[:5])
    return True


def _neighbours(cfg: dict, rng: random.Random) -> list[dict]:
    """Configurations a sweep would visit next: one or two swept inputs changed, some back to earlier values."""
    out = []
    for _ in range(6):
        step = dict(cfg)
        for name in rng.sample(["seq_len", "n_gpus", "tokens", "micro_batch", "lora_rank", "hours_per_day", "months",
                                "prompt_tokens", "output_tokens", "requests_per_s", "mfu", "epochs"], rng.choice([1, 2])):
            step[name] = {"seq_len": rng.choice([512, 2048, 4096, 8192]),
                          "n_gpus": cfg["n_gpus"] * rng.choice([1, 2]),
                          "tokens": rng.choice([1e6, 1e8, 3e9]), "micro_batch": rng.randint(1, 8),
                          "lora_rank": rng.choice([8, 16, 64]), "hours_per_day": rng.choice([1, 12, 24]),
                          "months": rng.choice([6, 36]), "prompt_tokens": rng.choice([100, 1000, 8000]),
                          "output_tokens": rng.choice([50, 200, 1000]), "requests_per_s": rng.choice([0.5, 10, 80]),
                          "mfu": rng.choice([0, 0.3]), "epochs": rng.choice([1, 3])}[name]
        out.append(step)
    return out


@pytest.mark.slow  # over 0.45 s
@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_staged_results_equal_the_plain_code_over_random_sequences(seed):
    rng = random.Random(seed)
    cfg = random_config(rng)
    cfg["task"] = rng.choice(["train", "serve"])
    steps = _neighbours(cfg, rng)
    # values seen once are computed, seen twice kept, then read back: each configuration comes three times
    for step in [cfg, *steps, cfg, *steps[::-1], cfg, *steps]:
        _check(step)


@pytest.mark.slow  # over 0.45 s
def test_staged_results_equal_the_plain_code_on_hundreds_of_configurations():
    rng = random.Random(37)
    checked = 0
    for _ in range(60):
        cfg = random_config(rng)
        cfg["task"] = rng.choice(["train", "serve"])
        for step in [cfg, *_neighbours(cfg, rng)]:
            checked += _check(step)
    assert checked >= 250


def test_inputs_equal_in_value_but_not_in_type_or_sign_are_kept_apart():
    base = {"model": "Llama-3-8B", "gpu": "H100-SXM", "n_gpus": 8, "seq_len": 2048, "mfu": 0.0}
    variants = [base, {**base, "n_gpus": 8.0}, {**base, "seq_len": 2048.0}, {**base, "mfu": -0.0}, {**base, "mfu": 0},
                {**base, "flash_attention": True}, {**base, "flash_attention": 1}, {**base, "flash_attention": 1.0},
                {**base, "n_gpus": 8.0, "seq_len": 2048.0}]
    for cfg in variants + variants[::-1]:
        assert _check(cfg)
    # the tag names types, not values: a spreadsheet's floats keep one key of the other inputs while they change
    tags = {engine._type_tag(cfg, core.resolve_inputs(cfg)) for cfg in ({**base, "n_gpus": float(n)} for n in (8, 16, 24))}
    assert tags == {(("n_gpus", float),)}
    # an int count gives an int GPU count, a float count a float one: the int results kept are not handed back
    assert type(core.evaluate(base)["serve_gpus"]) is int
    assert type(core.evaluate({**base, "n_gpus": 8.0})["serve_gpus"]) is float


def test_a_changed_catalog_is_never_answered_from_results_kept_for_the_old_one(tmp_path, monkeypatch):
    job = {"model": "Llama-3-8B", "gpu": "H100-SXM", "n_gpus": 8, "buy": 1, "seq_len": 2048}
    before = core.evaluate(job)
    for seq in (1024, 4096, 2048):
        core.evaluate({**job, "seq_len": seq})
    (tmp_path / "gpus.csv").write_text("name,purchase_usd,purchase_basis,as_of\nH100-SXM,19000,our vendor quote,2026-11-20\n")
    monkeypatch.setenv("GPU_TCO_CONFIG_DIR", str(tmp_path))
    try:
        catalog.reload()
        after = core.evaluate(job)
        assert after["own_purchase_usd_per_gpu"] == 19000 != before["own_purchase_usd_per_gpu"]
        assert not _identical(after, _plain(job))
        gpus = catalog.gpus()  # a row added to a table publishes a new snapshot too
        gpus.add({**gpus.rows[gpus.find("H100-SXM")], "name": "Staged-Test-GPU", "aliases": "", "purchase_usd": 12345})
        added = core.evaluate({**job, "gpu": "Staged-Test-GPU"})
        assert added["own_purchase_usd_per_gpu"] == 12345
        assert not _identical(added, _plain({**job, "gpu": "Staged-Test-GPU"}))
        assert not _identical(core.evaluate(job), _plain(job))
    finally:
        monkeypatch.undo()
        catalog.reload()
    assert not _identical(core.evaluate(job), before)


@pytest.mark.slow  # over 0.45 s
def test_kept_results_stay_within_their_bounds():
    rng = random.Random(5)
    base = random_config(rng)
    compiled = codegen.compile_formulas(False, None, None, engine._task_kinds()[core.resolve_inputs(base)["task__row"]])
    memo = engine._stage_memo(compiled)
    for i in range(codegen.STAGE_KEYS_KEPT * 2 + 10):  # more distinct values of one swept input than a stage keeps
        _check({**base, "tokens": 1e6 + i})
    staged = [p for k, p in memo.items() if k is not None and p is not False]
    assert staged and all(0 < len(stage) <= codegen.STAGE_KEYS_KEPT for p in staged for stage in p[1:] if stage)
    for i in range(codegen.SLOW_KEYS_KEPT * 3):  # more distinct values of an input outside the swept ones
        _check({**base, "restarts": i % 20, "setup_hours": 10 + i})
    kept = [k for k in memo if k is not None]
    assert 1 <= len(kept) <= codegen.SLOW_KEYS_KEPT
    # values of the other inputs seen once are computed by the plain code, and only their key is kept
    assert all(memo[k] is False for k in kept)


def test_a_stage_value_seen_once_keeps_its_key_alone_and_seen_again_its_results():
    job = {"model": "Llama-2-7B", "gpu": "A100-80GB-SXM", "n_gpus": 8, "seq_len": 2048, "tokens": 1e8}
    compiled = codegen.compile_formulas(False, None, None, engine._task_kinds()[core.resolve_inputs(job)["task__row"]])
    memo = engine._stage_memo(compiled)
    memo.clear()
    for tokens in (1e8, 2e8, 1e8, 2e8, 1e8, 3e8):  # the other inputs kept from the second call; 3e8 seen once
        job["tokens"] = tokens  # (one dict changed in place: a call like the previous one)
        assert _check(job)

    def entries(stage, tokens):
        return [v for k, v in stage.items() if tokens in (k if type(k) is tuple else (k,))]

    stages = [stage for key, p in memo.items() if key is not None and p is not False for stage in p[1:]]
    by_tokens = [stage for stage in stages if entries(stage, 3e8)]
    assert by_tokens  # the stages that read tokens, keyed by it
    job["tokens"] = 1e8  # read back from what was kept, equal to the plain code's
    assert _check(job)
    result = _plain(job)
    for stage in by_tokens:
        assert all(not v for v in entries(stage, 3e8))  # seen once: the key alone
        kept = entries(stage, 1e8)  # seen again: its results, the very values a call returns
        assert kept and all(type(v) is tuple and type(v[1]) is dict for v in kept)
        assert all(repr(result[n]) == repr(x) for v in kept for n, x in v[1].items())


def test_the_stage_keyed_by_every_swept_input_is_computed_whenever_one_changes_and_keeps_nothing():
    """Its key would be a whole configuration of the swept inputs, found again only where that configuration repeats:
    it is neither looked up nor kept (the others are), and its results still equal the plain code's."""
    job = {"model": "Llama-2-7B", "gpu": "A100-80GB-SXM", "n_gpus": 8, "seq_len": 2048, "tokens": 1e8}
    task = engine._task_kinds()[core.resolve_inputs(job)["task__row"]]
    compiled = codegen.compile_formulas(False, None, None, task)
    names = codegen.ancestors(codegen.QUANTITY_NAMES, task)
    keys = [set(key) for key, _ in codegen.stages(names, codegen.row_derived(names), task)]
    whole = [i for i, key in enumerate(keys) if key and key == set().union(*keys)]
    assert len(whole) == 1 and len(keys[whole[0]]) > 5
    memo = engine._stage_memo(compiled)
    memo.clear()
    rng = random.Random(3)
    for i in range(40):  # earlier values again and again: a kept key would be found
        job[("seq_len", "tokens", "n_gpus", "micro_batch")[i % 4]] = rng.choice(
            {0: [1024, 2048], 1: [1e8, 2e8], 2: [4, 8], 3: [1, 2]}[i % 4])
        assert _check(job)
    kept = [p for key, p in memo.items() if key is not None and p is not False]
    assert kept and all(not p[whole[0]] for p in kept)
    assert all(any(p[i] for p in kept) for i, key in enumerate(keys) if key and i != whole[0] and key & {"seq_len", "tokens"})


def _staged_blocks(task: str) -> tuple[dict, dict]:
    """The staged code of every quantity for ``task``, as (the temporaries each stage's computing block assigns after
    its last quantity, the temporaries it reads) by stage number."""
    import builtins
    import re
    sources = {}

    def capture(source, label, mode, *args, **kw):
        sources[label] = source
        return builtins.compile(source, label, mode, *args, **kw)
    codegen.compile = capture
    try:
        codegen._generate(False, codegen.QUANTITY_NAMES, None, task)
    finally:
        del codegen.compile
    staged = next(source for label, source in sources.items() if "in stages" in label)
    stores: dict[int, set] = {}
    loads: dict[int, set] = {}
    block = None
    for line in staged.splitlines():
        opened = re.fullmatch(r" {8}if _d(\d+):", line)
        if opened:
            block = int(opened.group(1))
            continue
        if block is not None and not line.startswith(" " * 12):
            block = None
        if block is not None and line.startswith(" " * 12 + "L["):
            block = None  # (the results stored, then what the stage keeps: no formula past this line)
        if block is not None:
            target, _, expression = line.strip().partition(" = ")
            if re.fullmatch(r"[a-z]\w*", target):  # a quantity: the temporaries before it are its own
                stores[block] = set()
            elif re.fullmatch(r"_t\d+", target):
                stores.setdefault(block, set()).add(target)
            loads.setdefault(block, set()).update(re.findall(r"\b_t\d+\b", expression))
    return stores, loads


@pytest.mark.parametrize("task", ["train", "serve"])
def test_a_part_of_a_later_stages_formula_is_computed_with_the_earliest_stage_holding_its_inputs(task):
    """A subtree of a formula whose swept inputs an earlier stage's key holds (a GPU count's share of a sum that also
    reads the sequence length) is computed with that stage and read by the later one; the results stay the plain
    code's, bit for bit, in a sweep that changes each stage's inputs in turn."""
    stores, loads = _staged_blocks(task)
    ahead = {name: i for i, names in stores.items() for name in names
             if any(name in loads.get(j, ()) for j in loads if j > i)}
    assert len(ahead) > 10 and len(set(ahead.values())) > 2, ahead
    job = ({"model": "Llama-2-7B", "gpu": "A100-80GB-SXM", "n_gpus": 8, "seq_len": 2048, "tokens": 1e8} if task == "train"
           else {"task": "serve", "model": "Llama-3-8B", "gpu": "H100-SXM", "prompt_tokens": 1000, "requests_per_s": 5.0})
    swept = ("n_gpus", "seq_len", "tokens", "micro_batch") if task == "train" else \
        ("prompt_tokens", "requests_per_s", "output_tokens", "hours_per_day")
    rng = random.Random(11)
    for i in range(48):
        name = swept[i % len(swept)]
        job[name] = rng.choice({"n_gpus": [1, 2, 4, 8], "seq_len": [1024, 2048, 4096], "tokens": [1e8, 2e8],
                                "micro_batch": [1, 2], "prompt_tokens": [500, 1000, 2000], "requests_per_s": [1.0, 5.0],
                                "output_tokens": [100, 400], "hours_per_day": [8, 24]}[name])
        assert _check(job), job


def test_a_sweep_returning_to_earlier_values_of_an_input_of_many_quantities_starts_from_their_parked_states():
    """A loop over GPU counts (or a serving demand's lengths) with other inputs changing between: a call that comes
    back to a count starts from the state parked when an earlier call left it, taking from the last call's state the
    stages that count does not reach; every result equals the plain code's, and the parked states stay bounded."""
    jobs = [({"model": "Llama-2-7B", "gpu": "A100-80GB-SXM", "n_gpus": 1, "seq_len": 2048, "tokens": 1e8},
             ("seq_len", "n_gpus", "tokens"), (1, 2, 4, 8)),
            ({"task": "serve", "model": "Llama-3-8B", "gpu": "H100-SXM", "prompt_tokens": 1000, "requests_per_s": 5.0},
             ("requests_per_s", "prompt_tokens", "hours_per_day"), (500, 1000, 2000))]
    for job, kinds, values in jobs:
        compiled = codegen.compile_formulas(False, None, None, engine._task_kinds()[core.resolve_inputs(job)["task__row"]])
        memo = engine._stage_memo(compiled)
        memo.clear()
        for i in range(60):
            name = kinds[i % 3]
            if i % 3 == 1:  # the input of many quantities: back to earlier values
                job[name] = values[i // 3 % len(values)]
            else:  # the others: a new value every time
                job[name] = job[name] + 1 if name != "hours_per_day" else 1 + i % 23
            assert _check(job), job
        parked = [p[-1] for key, p in memo.items() if key is not None and p is not False]
        assert any(parked) and all(len(states) <= codegen.PARKED_KEPT for states in parked)


def test_a_stage_computed_alone_reads_only_what_it_uses_of_the_first_stage(monkeypatch):
    """The later stages never look a catalog row or an input up: what each reads of the inputs not swept, the rows'
    fields and the first stage's values comes with the first stage's entry as one tuple per stage, unpacked only when
    that stage is computed, and holding only names its code reads."""
    import re
    made = []
    staged_lines = codegen._staged_lines
    monkeypatch.setattr(codegen, "_staged_lines", lambda *a: made.append(staged_lines(*a)) or made[-1])
    for task in set(engine._task_kinds()):
        codegen._generate(False, tuple(core.QUANTITIES), None, task)
    assert made
    for lines in made:
        later = lines[lines.index("    if _any:"):]
        assert not any("C[" in line or "I[" in line or "_sk" in line for line in later)
        starts = [i for i, line in enumerate(later) if re.fullmatch(r" {8}if _d\d+:", line)]
        unpacked = 0
        for start, end in zip(starts, [*starts[1:], len(later)]):
            block = later[start + 1:end]
            reads = [line for line in block if re.fullmatch(r" {16}\(.*\) = _X\[\d+\]", line)]
            body = " ".join(line for line in block if line not in reads)
            used = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", body))
            for line in reads:
                names = line.strip()[1:line.strip().index(")")].rstrip(",").split(", ")
                assert set(names) <= used
                unpacked += len(names)
            if "models__" in body:  # a stage reading a model's fields has them from its tuple
                assert any("models__" in line for line in reads)
        assert unpacked > 50


def test_a_result_changed_by_the_caller_changes_nothing_kept():
    job = {"model": "Llama-3-8B", "gpu": "RTX-4090", "n_gpus": 1, "method": "qlora", "seq_len": 2048}
    first = core.evaluate(job)
    expected = dict(first)
    for k in first:
        first[k] = -1
    core.evaluate({**job, "seq_len": 4096})
    assert not _identical(core.evaluate(job), expected)


def test_a_model_outside_the_catalog_is_computed_in_full_and_keeps_nothing():
    for model in (7, "13B", {"params_b": 3, "layers": 24, "hidden": 2560, "heads": 20}):
        for seq in (1024, 2048, 1024):
            cfg = {"model": model, "gpu": "A100-80GB-SXM", "seq_len": seq}
            try:
                _plain(cfg)
            except core.InputError:
                continue
            assert _check(cfg)
    assert _check({"model": "Llama-3-8B", "gpu": "A100-80GB-SXM", "seq_len": 1024})  # a catalog row of index 0 after


def test_threads_evaluating_at_once_get_the_plain_codes_results():
    rng = random.Random(11)
    configs = []
    while len(configs) < 12:
        cfg = random_config(rng)
        try:
            configs.append((cfg, _plain(cfg)))
        except core.InputError:
            pass
    errors: list = []

    def work(offset: int):
        try:
            for i in range(150):
                cfg, expected = configs[(offset + i) % len(configs)]
                bad = _identical(core.evaluate(cfg), expected)
                if bad:
                    errors.append((cfg, bad[:3]))
        except Exception as err:  # noqa: BLE001 - reported below
            errors.append(err)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:2]


def test_the_stages_cover_every_quantity_once_and_follow_what_they_read():
    names = codegen.ancestors(codegen.QUANTITY_NAMES, "train")
    table_of = codegen.row_derived(names)
    stages = codegen.stages(names, table_of, "train")
    placed = [n for _, members in stages for n in members]
    assert sorted(placed) == sorted(n for n in names if n not in table_of)
    stage_of = {n: i for i, (_, members) in enumerate(stages) for n in members}
    deps = codegen._input_sets(names, "train")
    for name, i in stage_of.items():
        assert deps[name] & set(codegen.STAGE_INPUTS) <= set(stages[i][0])  # its key holds every swept input it reads
        assert all(stage_of[r] <= i for r in codegen._quantities_read([name], "train") if r in stage_of)
    assert len(stages) >= 5 and stages[0][0] == ()


class _Recording(dict):
    """A dict that notes every key read (by subscript, get or in)."""

    def __init__(self, *args):
        super().__init__(*args)
        self.read: set = set()

    def __getitem__(self, key):
        self.read.add(key)
        return super().__getitem__(key)

    def get(self, key, default=None):
        self.read.add(key)
        return super().get(key, default)

    def __contains__(self, key):
        self.read.add(key)
        return super().__contains__(key)


def test_the_checks_between_inputs_read_only_the_values_their_kept_passes_are_keyed_by():
    """A combination of inputs that passed the checks between inputs is not checked again (engine.CROSS_CHECKED_NAMES
    keys it; the check of engine.CHECKED_EVERY_CALL runs every time): every value cross_check reads must be among
    those names, over random configurations of both tasks."""
    from gpu_tco.core import validation
    rng = random.Random(41)
    allowed = set(engine.CROSS_CHECKED_NAMES) | set(engine.CHECKED_EVERY_CALL)
    checked = 0
    for _ in range(150):
        cfg = random_config(rng)
        cfg["task"] = rng.choice(["train", "serve"])
        cfg["serving_layout"] = rng.choice([0, 1, 2])
        try:
            values = core.resolve_inputs(cfg)
        except core.InputError:
            continue
        recording = _Recording(values)
        validation.cross_check(recording, model=engine.row_of(values, "model"))
        # the other choice inputs' "__adhoc" keys are never set (only a model may come from outside the catalog)
        read = {k for k in recording.read if not (k.endswith("__adhoc") and k != "model__adhoc")}
        assert read <= allowed, sorted(read - allowed)
        checked += 1
    assert checked >= 60


def test_a_combination_that_fails_the_checks_fails_every_time_and_a_new_catalog_checks_again(tmp_path, monkeypatch):
    bad = {"model": "Llama-3-8B", "gpu": "H100-SXM", "n_gpus": 8, "tensor_parallel": 3}
    for _ in range(3):
        with pytest.raises(core.InputError, match="tensor_parallel"):
            core.evaluate(bad)
    good = {**bad, "tensor_parallel": 2}
    core.evaluate(good)
    assert engine._cross_checked(core.resolve_inputs(good)) in catalog.snapshot().memo["cross checks passed"]
    catalog.reload()
    assert "cross checks passed" not in catalog.snapshot().memo  # a new snapshot keeps no passes
    assert not _identical(core.evaluate(good), _plain(good))


def test_a_call_that_changes_numbers_alone_starts_from_the_previous_one_and_checks_what_changed():
    """A call whose inputs differ from the previous call's only in plain numbers starts from the values that call
    resolved (engine._like_last): the offer "auto" follows the GPU count, the checks between inputs run for what
    changed, a bad number, a zero, another type, another output list or a changed name resolve afresh; every result
    equals the plain code's and every error the error of a call without a previous one."""
    from gpu_tco.core import validation
    gpus = catalog.tables()["gpus"]
    gpu = next(name for name in ("H100-SXM", "A100-80GB-SXM", *gpus.names) if name in gpus.names
               and len({catalog.auto_offer_row(gpus.find(name), n, -1) for n in (1, 8, 16, 64)}) > 1)
    job = {"model": "Llama-3-8B", "gpu": gpu, "n_gpus": 1, "seq_len": 2048, "tensor_parallel": 1, "mfu": 0.3}
    steps = [{"n_gpus": 8}, {"n_gpus": 16}, {"seq_len": 4096}, {"n_gpus": 64, "tensor_parallel": 8},
             {"n_gpus": 8, "tensor_parallel": 1},
             {"mfu": 0.0}, {"mfu": 0.4}, {"n_gpus": 8.0}, {"seq_len": 1024.0}, {"gpu": "RTX-4090", "n_gpus": 1},
             {"gpu": gpu, "task": "serve", "n_gpus": 2, "prompt_tokens": 1000}, {"prompt_tokens": 2000}]
    cfg = dict(job)
    offers, checked = set(), 0
    for step in steps + steps[::-1] + steps:
        cfg.update(step)
        if not _check(cfg):  # (a serving replica of 64 GPUs cannot split the model's heads: refused both ways)
            continue
        checked += 1
        offers.add(core.resolve_inputs(cfg)["offer__row"])
        assert not _identical(core.evaluate(cfg, outputs=["train_hours", "own_tco_usd"]),
                              {k: _plain(cfg)[k] for k in ("train_hours", "own_tco_usd")})
    assert checked >= 30 and len(offers) > 1  # the offer "auto" picked changed with the count
    # a sweep of arrays between two scalar calls (the state of the scalar call is kept for the next one)
    core.evaluate(cfg)
    assert len(core.evaluate({**cfg, "seq_len": [1024, 2048]})["train_hours"]) == 2
    cfg["seq_len"] = 3072
    assert _check(cfg)
    # a negative zero after another number is named by the type tag, as in a call without a previous one
    for share in (5.0, -0.0, 5.0, 0.0, -0.0, 5.0):
        cfg["fragmentation_pct"] = share
        assert _check(cfg)
        state = catalog.snapshot().memo[engine._LAST_CALLS][None]
        assert (("fragmentation_pct", "-0.0") in state[-2]) == (math.copysign(1.0, share) < 0)
    # numbers that fail their own check or a check between inputs, after a call that passed
    good = {**job, "n_gpus": 8, "tensor_parallel": 2, "context_parallel": 2, "seq_len": 4096}
    for bad, field in (({"n_gpus": 7}, "tensor_parallel"), ({"seq_len": 1}, "context_parallel"),
                       ({"seq_len": -5}, "seq_len"), ({"n_gpus": 1.5}, "n_gpus"), ({"mfu": float("nan")}, "mfu"),
                       ({"tensor_parallel": 3}, "tensor_parallel")):
        core.evaluate(good)
        core.evaluate(good)
        with pytest.raises(core.InputError) as after:
            core.evaluate({**good, **bad})
        assert after.value.field == field
        catalog.reload()  # nothing kept: the same error from a fresh snapshot
        with pytest.raises(core.InputError) as fresh:
            core.evaluate({**good, **bad})
        assert str(after.value) == str(fresh.value)
    # the sequence length against the context-parallel GPUs is checked on every call, the other checks' pass kept
    values = core.resolve_inputs(good)
    assert engine._cross_checked(values) in catalog.snapshot().memo["cross checks passed"]
    with pytest.raises(core.InputError) as direct:
        validation.cross_check({**values, "seq_len": 1}, model=engine.row_of(values, "model"))
    with pytest.raises(core.InputError) as kept:
        core.resolve_inputs({**good, "seq_len": 1})
    assert str(kept.value) == str(direct.value)


@pytest.mark.parametrize("first_stage_apart", [True, False])
def test_a_part_computed_ahead_that_fails_in_a_branch_never_taken_leaves_those_values_to_the_plain_code(
        monkeypatch, first_stage_apart):
    """Parts of formulas that read no swept input are computed with the first stage, outside the IF that may guard
    them: where one fails there (x / 0 in a branch these values never take), the values go to the plain code at every
    call, which gives the branch's own value; where the branch is taken, both fail alike.  (No formula of the catalog
    fails so for valid inputs; these three are made for the test from real inputs.)  The same with the first stage
    inside ``_staged`` (``FIRST_STAGE_APART`` off), as the benchmarks compare it."""
    from gpu_tco.core.expr import IF, Ref
    from gpu_tco.core.formulas import Quantity
    seq, packed, chunk = Ref("seq_len"), Ref("packed_document_tokens"), Ref("fused_loss_chunk_tokens")
    made = {
        "t_fixed": Quantity("t_fixed", "", "", chunk * 2, "", "test"),
        "t_guarded": Quantity("t_guarded", "", "", IF(packed > 0, seq * chunk / packed * 2, 0), "", "test"),
        "t_swept": Quantity("t_swept", "", "", seq * 3 + Ref("t_guarded"), "", "test"),
    }
    monkeypatch.setattr(codegen, "QUANTITIES", made)
    monkeypatch.setattr(codegen, "STAGE_MIN_QUANTITIES", 1)
    monkeypatch.setattr(codegen, "STAGE_MIN_GROUP", 1)
    monkeypatch.setattr(codegen, "FIRST_STAGE_APART", first_stage_apart)
    compiled = codegen._generate(False, tuple(made), None, None)[0]
    assert compiled.staged_code is not None

    def run(values: dict, kept: dict) -> dict:
        values = {**values, "__tag": ()}
        return compiled.staged(values, {}, compiled.template, kept, compiled.slow_key(values))

    def plain(values: dict) -> dict:
        result = compiled.template.copy()
        compiled.fn(values, {}, result)
        return result

    for packed_tokens in (0, 3000):  # the guarded part fails ahead, or computes
        kept: dict = {}
        for seq_len in (2048, 4096, 8192, 4096):  # seen once (plain code), then again: the staged code
            values = {"seq_len": seq_len, "packed_document_tokens": packed_tokens, "fused_loss_chunk_tokens": 559.0}
            got = run(values, kept)
            assert not _identical(got, plain(values)), (packed_tokens, seq_len)
        fell_back = [p for k, p in kept.items() if k is not None and p is True]
        assert bool(fell_back) == (packed_tokens == 0), kept.keys()
        assert got["t_guarded"] == pytest.approx(0 if packed_tokens == 0 else 4096 * 559.0 / 3000 * 2, rel=1e-12)
    # the branch taken and failing: both codes fail alike
    made["t_guarded"] = Quantity("t_guarded", "", "", seq * chunk / packed * 2, "", "test")
    compiled = codegen._generate(False, tuple(made), None, None)[0]
    kept = {}
    for seq_len in (2048, 4096):
        values = {"seq_len": seq_len, "packed_document_tokens": 0, "fused_loss_chunk_tokens": 559.0}
        with pytest.raises(ZeroDivisionError):
            run(values, kept)
        with pytest.raises(ZeroDivisionError):
            plain(values)
