"""One place each: one catalog snapshot (replaced as a whole on reload; everything derived from the catalogs follows it);
one wording for close-match hints and one rule for showing numbers wherever a message is made; one symbol table."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from gpu_tco import core
from gpu_tco.core import catalog, engine
from gpu_tco.core.expr import Const

ROOT = Path(__file__).resolve().parents[1]

USER_OFFER = ("name,gpu,gpus_per_instance,usd_per_gpu_hour,billing_increment_s,price_type\n"
              "Our H100 deal,H100-SXM,8,0.99,1,on-demand\n")


@pytest.fixture
def user_catalog(tmp_path, monkeypatch):
    (tmp_path / "offers.csv").write_text(USER_OFFER, encoding="utf-8")
    (tmp_path / "gpus.csv").write_text("name,purchase_usd,purchase_basis,as_of\nH100-SXM,19000,our vendor quote,2026-11\n",
                                       encoding="utf-8")
    monkeypatch.setenv("GPU_TCO_CONFIG_DIR", str(tmp_path))
    yield tmp_path
    monkeypatch.undo()
    catalog.reload()


def test_reload_replaces_the_snapshot_as_a_whole_and_the_caches_follow(user_catalog, monkeypatch):
    monkeypatch.delenv("GPU_TCO_CONFIG_DIR")
    catalog.reload()
    before = catalog.snapshot()
    h100 = before.tables["gpus"].find("H100-SXM")
    old_offer = catalog.reference_offer_rows()[h100]
    old = core.evaluate(gpu="H100-SXM", buy=1)
    monkeypatch.setenv("GPU_TCO_CONFIG_DIR", str(user_catalog))
    catalog.reload()
    after = catalog.snapshot()
    assert after is not before and after.version > before.version
    assert after.tables is not before.tables and after.tables["offers"] is not before.tables["offers"]
    # the old snapshot is untouched: whoever still holds it sees the catalogs it was built from
    assert "Our H100 deal" not in before.tables["offers"].names and "Our H100 deal" in after.tables["offers"].names
    assert before.offer_maps()[1][h100] == old_offer
    # the derived maps and the engine's cached defaults are the new snapshot's
    deal = after.tables["offers"].find("Our H100 deal")
    assert catalog.reference_offer_rows()[after.tables["gpus"].find("H100-SXM")] == deal
    new = core.evaluate(gpu="H100-SXM", buy=1)
    assert old["own_purchase_usd_per_gpu"] != 19000 and new["own_purchase_usd_per_gpu"] == 19000
    assert old["rent_usd_per_gpu_hour_list"] != 0.99 and new["rent_usd_per_gpu_hour_list"] == 0.99  # "auto" picks the deal
    assert core.resolve_inputs({"gpu": "H100-SXM"})["offer"] == "Our H100 deal"
    assert catalog.snapshot() is after  # evaluating neither reloads nor republishes


def test_a_snapshot_cannot_be_changed_in_place():
    snap = catalog.snapshot()
    with pytest.raises(AttributeError):
        snap.version = 0
    with pytest.raises(TypeError):
        snap.tables["gpus"] = None  # type: ignore[index]
    assert catalog.snapshot() is snap


def test_a_row_added_to_a_table_publishes_a_new_snapshot():
    gpus = catalog.gpus()
    before = catalog.snapshot()
    n = len(catalog.reference_offer_rows())
    try:
        gpus.add({**gpus.rows[gpus.find("L40S")], "name": "Snapshot-Card", "aliases": ""})
        after = catalog.snapshot()
        assert after is not before and after.version == before.version + 1 and after.tables["gpus"] is gpus
        assert len(catalog.reference_offer_rows()) == n + 1  # the offer maps follow the new row
        assert core.evaluate(gpu="Snapshot-Card", offer="none")["gpu_memory_gib"] == gpus.rows[gpus.find("L40S")]["memory_gib"]
    finally:
        catalog.reload()
    assert "Snapshot-Card" not in catalog.gpus().names


def test_the_sweep_memory_lends_only_arrays_nobody_holds_and_keeps_within_its_limit():
    memory = engine.SweepMemory(limit_bytes=3 * 8 * 1000)
    arrays = [memory.take(1000, "float64") for _ in range(4)]
    memory.keep(arrays)
    assert len(memory) == 3  # the fourth would pass the limit
    held = arrays[0]  # a caller still holds this result
    free = {id(a) for a in arrays[1:3]}
    del arrays
    lent = [memory.take(1000, "float64") for _ in range(3)]
    assert {id(a) for a in lent[:2]} == free  # the two nobody held are lent again
    assert all(a is not held for a in lent) and len(memory) == 1  # the held one never is; the third is new
    memory.prepare(5)  # a sweep of another size: kept arrays would only add to its peak memory
    assert len(memory) == 0
    memory.keep(lent)
    core.free_sweep_memory()
    assert len(memory) == 3 and not len(engine.SWEEP_MEMORY)  # each object lets go of its own


# ---------------------------------------------------------------------------
# one wording for "did you mean", one rule for numbers

def test_did_you_mean_wording():
    assert core.did_you_mean("H1000", catalog.gpus().names).startswith(" (did you mean H100-SXM")
    assert core.did_you_mean("H100", catalog.gpus().names, before="", after="; ") == \
        "(did you mean H100-SXM, H100-PCIe, H100-NVL?); "  # the names a prefix completes come first
    assert core.did_you_mean("zzzzqqq", ["layers", "hidden"]) == ""
    assert core.close_matches("seqlen", core.INPUTS_BY_NAME)[0] == "seq_len"


@pytest.mark.slow  # over 0.45 s
def test_close_matches_rank_every_candidate_as_the_full_comparison_does():
    """``names.suggest`` compares a candidate's whole spelling only while it can still reach the top n: it names what
    comparing every candidate in full names (``names.similarity``), in the same order, for any n and cutoff."""
    import random

    from gpu_tco.core import names

    def ranked(typed, candidates):  # every candidate compared in full, most alike first
        return sorted(((names.similarity(str(typed)[:200], c), i, c) for i, c in enumerate(dict.fromkeys(candidates))),
                      key=lambda t: (-t[0], t[1]))
    rng = random.Random(37)
    lists = [list(core.QUANTITIES), catalog.gpus().names, catalog.tables()["models"].names]
    compared = 0
    for candidates in lists:
        typed = ["", " ", "--", "H10", "train_hour", "llama 3 70b", "x" * 300] + \
                [rng.choice(candidates)[:rng.randint(1, 12)] + rng.choice(["", "x", " 9"]) for _ in range(20)]
        for t in typed:
            full = ranked(t, candidates)
            for n, cutoff in ((3, 0.4), (0, 0.4), (5, 0.0), (1, -1.0), (2, 0.9)):
                want = [c for score, _, c in full[:max(n, 0)] if score >= cutoff]
                assert names.suggest(t, candidates, n, cutoff) == want, (t, n, cutoff)
                compared += 1
    assert compared > 400


def test_every_message_words_its_hint_the_same_way():
    """Input validation, catalog lookups, presets, the Excel functions and the command line all say it in
    did_you_mean's words."""
    hint = core.did_you_mean("H1000", catalog.gpus().names, before="", after="; ")
    assert hint
    with pytest.raises(core.InputError) as validation:
        core.evaluate(gpu="H1000")
    with pytest.raises(core.InputError) as lookup:
        catalog.gpus().resolve("H1000", "gpu")
    from gpu_tco.addin.functions import call
    cell = call("GPU_SPEC", "H1000", "memory_gib")
    cli = subprocess.run([sys.executable, "-m", "gpu_tco", "estimate", "--gpu", "H1000"], capture_output=True, text=True,
                         cwd=ROOT, timeout=120)
    for message in (str(validation.value), str(lookup.value), cell, cli.stderr):
        assert f'gpu: unknown "H1000" {hint}allowed' in message, message
    with pytest.raises(core.InputError) as preset:
        core.preset("qlorra")
    assert core.did_you_mean("qlorra", core.PRESETS, before="", after="; ") in str(preset.value)
    with pytest.raises(core.InputError) as field:
        core.evaluate(seqlen=4096)
    assert f"is not an input{core.did_you_mean('seqlen', core.INPUTS_BY_NAME)};" in str(field.value)


def test_an_unknown_name_with_nothing_close_says_so_before_what_is_allowed():
    """With no close match the message still separates the name from the list of what is allowed, in one wording."""
    assert core.allowed_hint("zzzzqqq", ["layers", "hidden"]) == "(no close match); "
    assert core.allowed_hint("H1000", catalog.gpus().names) == core.did_you_mean("H1000", catalog.gpus().names, before="",
                                                                                  after="; ")
    with pytest.raises(core.InputError) as model:
        core.evaluate(model="zzzzqqqq")
    with pytest.raises(core.InputError) as preset:
        core.preset("zzzzqqqq")
    from gpu_tco.addin.functions import call
    cell = call("GPU_MEMORY_INFER", None, None, None, None, None, None, "zzzzqqqq")
    for message, field in ((str(model.value), "model"), (str(preset.value), "preset"), (cell, "component")):
        assert f'{field}: unknown "zzzzqqqq" (no close match); allowed: ' in message, message


def test_numbers_show_by_one_rule():
    assert [core.number_text(x) for x in (4096.0, 4096, 999_999_999_999_999.0, 1e15, 0.5, float("inf"))] == \
        ["4,096", "4,096", "999,999,999,999,999", "1e+15", "0.5", "inf"]
    assert core.number_text(200_000.0, grouped=False) == "200000"
    # the same rule in a field's allowed text, the form's fields, the command line's tables and Excel constants
    assert core.INPUTS_BY_NAME["n_gpus"].allowed() == "a whole number >= 1 and <= 100,000 (GPUs)"
    assert core.INPUTS_BY_NAME["budget_usd"].allowed() == "a number >= 0 and <= 1e+15 (USD)"
    from gpu_tco.commands.common import _fmt
    from gpu_tco.gui.model import value_text
    assert value_text(core.INPUTS_BY_NAME["seq_len"], 4096.0) == _fmt(4096.0) == "4,096"
    assert value_text(core.INPUTS_BY_NAME["seq_len"], 1e15) == "1e+15"
    assert Const(4096.0).xl() == "4096" and Const(1e15).xl() == repr(1e15) and Const(0.1).xl() == "0.1"


def test_the_symbol_table_of_formulas_says_what_each_symbol_is():
    """Every row of formulas.py's symbol table that names a model field or an input is exactly that."""
    from gpu_tco.core import expr, formulas
    rows = [line.split() for line in formulas.__doc__.splitlines() if line.startswith("    ") and "  " in line.strip()]
    checked = 0
    for row in rows:
        symbol, defined = row[0], row[-1]
        if defined.startswith('M("'):
            node = getattr(formulas, symbol)
            assert isinstance(node, expr.Lookup) and (node.table, node.field) == ("models", defined[3:-2]), symbol
            checked += 1
        elif defined.startswith("I."):
            node = getattr(formulas, symbol)
            assert isinstance(node, expr.Ref) and node.name == defined[2:], symbol
            checked += 1
    assert checked >= 18  # L, h, f, a, n_kv, d, V, E, k_act, S, n_dense, r_q, r_kv, d_rope, t, s, b, ctx
