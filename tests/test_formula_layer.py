"""One definition per formula: scalar, vectorised and Excel renderings agree."""
from __future__ import annotations

import math
import random

import numpy as np
import pandas as pd
import pytest
from excel_eval import ALLOWED_FUNCTIONS, evaluate_excel, tokenize
from helpers import random_config, same_number

from gpu_tco import core
from gpu_tco.core import catalog
from gpu_tco.core.engine import QUANTITY_NAMES
from gpu_tco.core.formulas import QUANTITIES
from gpu_tco.core.inputs import INPUTS


def test_every_quantity_is_documented_and_has_a_unit():
    assert len(QUANTITIES) >= 60
    for name, q in QUANTITIES.items():
        assert q.unit and q.description, name
    for inp in INPUTS:
        assert inp.unit and inp.description and inp.allowed(), inp.name


def test_evaluate_returns_every_quantity_for_scalars():
    r = core.evaluate()
    assert tuple(r) == QUANTITY_NAMES
    for name, v in r.items():
        assert isinstance(v, (int, float, bool)), (name, type(v))
        assert math.isfinite(float(v)), name


def test_vectorised_sweep_equals_scalar_rows():
    rng = random.Random(1)
    configs = [random_config(rng) for _ in range(60)]
    sweep = {k: [c[k] for c in configs] for k in configs[0]}
    res = core.evaluate(sweep)
    for i, cfg in enumerate(configs):
        one = core.evaluate(cfg)
        for name in QUANTITY_NAMES:
            assert same_number(res[name][i], one[name]), (i, name, res[name][i], one[name], cfg)


def test_series_in_series_out_with_index():
    seq = pd.Series([1024, 2048, 4096], index=["a", "b", "c"])
    res = core.evaluate({"seq_len": seq, "model": "Llama-3-8B"})
    assert isinstance(res["activations_gib"], pd.Series)
    assert list(res["activations_gib"].index) == ["a", "b", "c"]
    assert res["activations_gib"]["c"] > res["activations_gib"]["a"]
    assert same_number(res["activations_gib"]["b"], core.evaluate(seq_len=2048, model="Llama-3-8B")["activations_gib"])


def test_numpy_broadcasting_of_two_axes():
    seq = np.array([1024, 4096])[:, None]
    batch = np.array([1, 2, 4])[None, :]
    res = core.evaluate(seq_len=seq, micro_batch=batch)
    assert res["peak_train_gib_per_gpu"].shape == (2, 3)
    assert same_number(res["peak_train_gib_per_gpu"][1, 2], core.evaluate(seq_len=4096, micro_batch=4)["peak_train_gib_per_gpu"])


def _names_for(cfg: dict) -> tuple[dict, dict]:
    """Defined-name values (inputs with canonical names, every quantity) and catalog columns."""
    res = core.evaluate(cfg)
    resolved = core.resolve_inputs(cfg)  # canonical names; offer "auto" resolved against the GPU
    names = {inp.name: resolved[inp.name] for inp in INPUTS}
    names.update(res)
    columns = {f"{t}_{c}": tab.col[c] for t, tab in catalog.tables().items() for c in tab.columns}
    return names, columns


@pytest.mark.parametrize("seed", range(8))
def test_excel_formula_text_computes_the_same_value(seed):
    """Each quantity's Excel text, evaluated with Excel's precedence rules, equals core's value."""
    cfg = random_config(random.Random(100 + seed))
    names, columns = _names_for(cfg)
    for name, q in QUANTITIES.items():
        formula = "=" + q.expr.xl()
        value, functions = evaluate_excel(formula, names, columns)
        assert functions <= ALLOWED_FUNCTIONS, (name, functions - ALLOWED_FUNCTIONS)
        assert same_number(value, names[name]), (name, formula, value, names[name])


def test_excel_formulas_use_only_portable_functions_and_defined_names():
    defined = {i.name for i in INPUTS} | set(QUANTITIES)
    for name, q in QUANTITIES.items():
        xl = q.expr.xl()
        assert "XLOOKUP" not in xl and "LET(" not in xl and "FILTER(" not in xl
        for word in (value for kind, value in tokenize(xl) if kind == "name"):
            if word in ALLOWED_FUNCTIONS or word in defined:
                continue
            table = next((t for t in catalog.TABLE_NAMES if word.startswith(t + "_")), None)
            assert table is not None, (name, word)
            assert word[len(table) + 1:] in catalog.tables()[table].columns, (name, word)


def test_explain_lists_formula_and_the_values_that_fed_it():
    info = core.explain("kv_bytes_per_token", {"model": "Llama-3-8B"})
    assert info["value"] == 131072
    assert info["excel"].startswith("=(attention_layers_used*((1-INDEX(models_sliding_layer_fraction,MATCH(model,models_name,0)))")
    fed = {name: value for name, value, _ in info["inputs"]}
    assert fed["attention_layers_used"] == 32 and fed["kv_elements_per_token_layer"] == 2 * 8 * 128  # GQA: K and V of 8 KV heads of 128
    assert "https://arxiv.org/abs/2309.06180" in info["source"]  # the vLLM paper, cited in full


def test_explain_unknown_quantity_suggests():
    with pytest.raises(core.InputError, match="did you mean kv_cache_gib"):
        core.explain("kv_cach_gib")


def test_rounding_to_whole_counts_ignores_binary_noise():
    """0.3 h x 1.2 + (the first start + 1 restart) x 6 min = 0.56 h = 2016 s exactly; in binary it is
    2016.0000000000002 s. Billing per second must charge 2016 s, as LibreOffice and Excel
    (which snap such values) compute it - found by the workbook parity test."""
    r = core.evaluate({"job_hours": 0.3, "debug_overhead_pct": 20, "restarts": 1, "model_load_minutes": 6,
                       "offer": "RunPod Community RTX-3090"})
    assert r["rent_billed_hours"] * 3600 == pytest.approx(2016, abs=1e-9)


def test_excel_formulas_are_chains_of_named_cells_not_walls_of_text():
    """Intermediates are named quantities, so no Excel formula is longer than a reader can follow."""
    longest = max(QUANTITIES.items(), key=lambda kv: len(kv[1].expr.xl()))
    assert len(longest[1].expr.xl()) <= 700, longest[0]


def test_rounding_guard_stays_out_of_the_formula_text():
    """CEILING/FLOOR are guarded against binary noise in the generated Python only; what people read is plain."""
    from gpu_tco.core.engine import explain
    info = explain("rent_instances")
    assert "0.999999" not in info["formula"] + info["excel"] + QUANTITIES["rent_billed_hours"].expr.xl()
    assert info["excel"] == "=CEILING(n_gpus/INDEX(offers_gpus_per_instance,MATCH(offer,offers_name,0)),1)"
