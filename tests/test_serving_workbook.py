"""The workbook of a serving scenario, recalculated by real LibreOffice (the session's batch) and compared with core:
every serving quantity of the Calc sheet and of each setup on the Serving sheet, and Start's answer with core's sentence."""
from __future__ import annotations

from pathlib import Path

import pytest
from helpers import rel_equal
from lo import book
from openpyxl import load_workbook

from gpu_tco import core
from gpu_tco.core import read_scenario, serve_plan, split_scenario
from gpu_tco.core.recommendation import usd_text
from gpu_tco.core.serving import serve_option_inputs
from gpu_tco.workbooks import build_workbook, write_workbook
from gpu_tco.workbooks.xlsx import save_atomically

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "serve-llama3-70b.json"
SERVING_GROUPS = ("serving", "serving cost")
# a what-if typed on Inputs: the demand doubles and the API's prices are typed in
WHATIF = {"requests_per_s": 40, "api_usd_per_mtok_input": 0.2, "api_usd_per_mtok_output": 0.6}


def _example() -> tuple[dict, list[str]]:
    return split_scenario(read_scenario(EXAMPLE))


@book("serving-example", pdf=True)
def _serving_example(folder: Path):
    inputs, gpus = _example()
    return write_workbook(folder / "serve.xlsx", inputs, gpus=gpus), None


@book("serving-whatif")
def _serving_whatif(folder: Path):
    # typed before the save rather than into the saved file reopened with openpyxl (about 0.5 s of CPU less): the same
    # sheets and formulas; the cached values are the example's (openpyxl's save drops them), which the recalculation replaces
    inputs, gpus = _example()
    wb, cached = build_workbook(inputs, gpus=gpus)
    ws = wb["Inputs"]
    rows = {ws.cell(row=r, column=7).value: r for r in range(5, ws.max_row + 1)}
    for name, value in WHATIF.items():
        ws.cell(row=rows[name], column=2).value = value
    return save_atomically(wb, cached, folder / "serve.xlsx"), None


# long prompts under a tight per-token target: prefill and decode on separate replicas win
# (on Llama 3.1 70B, Llama 3 70B's architecture with a 128k context: 8,000 + 500 tokens exceed Llama 3 70B's 8,192)
LONG_PROMPTS = {"model": "Llama-3.1-70B", "requests_per_s": 20, "prompt_tokens": 8000, "output_tokens": 500, "ttft_slo_ms": 3000, "tpot_slo_ms": 25}
# the other branches of Start's sentence: the API wins at a small demand; renting only (no bought setup)
VARIANTS = {"serving-api-wins": {"requests_per_s": 0.05}, "serving-rent-only": {"buy": 0}}


def _variant(name: str):
    def build(folder: Path):
        inputs, gpus = _example()
        return write_workbook(folder / "serve.xlsx", {**inputs, **VARIANTS[name]}, gpus=gpus), None
    return build


for _name in VARIANTS:
    book(_name)(_variant(_name))

OTHER_MODEL = {"model": "Qwen3-30B-A3B", "requests_per_s": 0.2}  # no API in the catalog serves it


def _other_model_inputs():
    inputs, gpus = _example()
    return {**{k: v for k, v in inputs.items() if k != "api_model"}, **OTHER_MODEL}, gpus


GEFORCE_BUY = {"model": "Llama-3-8B", "requests_per_s": 50, "buy": 1}  # a bought fleet of GeForce cards


def _geforce_inputs():
    inputs, _ = _example()
    return {**{k: v for k, v in inputs.items() if k != "api_model"}, **GEFORCE_BUY}, ["RTX-4090"]


@book("serving-geforce-buy")
def _serving_geforce_buy(folder: Path):
    inputs, gpus = _geforce_inputs()
    return write_workbook(folder / "serve.xlsx", inputs, gpus=gpus), None


@book("serving-other-model-api")
def _serving_other_model_api(folder: Path):
    inputs, gpus = _other_model_inputs()
    return write_workbook(folder / "serve.xlsx", inputs, gpus=gpus), None


@book("serving-disaggregated")
def _serving_disaggregated(folder: Path):
    inputs, gpus = _example()
    return write_workbook(folder / "serve.xlsx", {**inputs, **LONG_PROMPTS}, gpus=["H100-SXM"]), None


def _serving_rows(out, sheet: str) -> dict:
    names = {out.cell(sheet, r, 1): r for r in range(2, out.max_row(sheet) + 1)}
    return {n: r for n, r in names.items() if isinstance(n, str)}


def _check(out, inputs: dict, gpus: list[str]) -> dict:
    """Every serving output of the recalculated workbook against core at the same inputs; returns core's plan."""
    result = serve_plan(inputs, gpus=gpus)
    assert not out.errors(), out.errors()[:5]  # no error cell on any sheet
    # Calc: the scenario on Inputs is the recommended setup
    scenario = serve_option_inputs(result["given"], result["recommended"])
    expected = core.evaluate(scenario)
    checked = 0
    for r in range(2, out.max_row("Calc") + 1):
        name = out.cell("Calc", r, 2)
        if name in core.QUANTITIES and core.QUANTITIES[name].group in SERVING_GROUPS:
            value, want = out.cell("Calc", r, 3), float(expected[name])
            if want == want and abs(want) != float("inf"):
                assert rel_equal(value, want) or abs(float(value) - want) <= 1e-9, (name, value, want)
                checked += 1
    assert checked > 60
    # Serving: each setup's column against core at that setup
    rows = _serving_rows(out, "Serving")
    for col, key in ((3, "rent"), (4, "buy")):
        option = result[f"best_{key}"]
        want = core.evaluate(serve_option_inputs(result["given"], option))
        n = 0
        for name, r in rows.items():
            if name in core.QUANTITIES:
                assert rel_equal(out.cell("Serving", r, col), float(want[name])) or \
                    abs(float(out.cell("Serving", r, col)) - float(want[name])) <= 1e-9, (key, name)
                n += 1
        assert n > 50 and out.cell("Serving", rows["serve_replicas"], col) == option.replicas
        assert rel_equal(out.cell("Serving", rows["serve_option_usd_per_month"], col), option.usd_per_month)
    return result


def test_serving_workbook_answers_with_cores_numbers_and_sentence(recalculated):
    out = recalculated["serving-example"]
    inputs, gpus = _example()
    result = _check(out, inputs, gpus)
    assert out.value("Start", "A7") == result["recommendation"]  # the answer as a live formula, word for word
    assert out.value("Start", "A4").startswith(f"Serve {inputs['model']} at 20 requests a second")
    # the table beside it: the setups' latency against the targets, their cost against the API's
    labels = {out.cell("Start", r, 1): r for r in range(10, 40)}
    rent, buy = result["best_rent"], result["best_buy"]
    assert out.cell("Start", labels["setup"], 2) == core.serve_option_text(rent)
    assert out.cell("Start", labels["setup"], 3) == core.serve_option_text(buy)
    assert rel_equal(out.cell("Start", labels["time per generated token at full load"], 2), rent.tpot_ms)
    assert out.cell("Start", labels["time per generated token at full load"], 5) == inputs["tpot_slo_ms"]
    assert rel_equal(out.cell("Start", labels["time per generated token at the planned load"], 3), buy.tpot_at_load_ms)
    assert rel_equal(out.cell("Start", labels["cost per month"], 4), result["api"]["usd_per_month"])
    assert rel_equal(out.cell("Start", labels["beats the API above (million tokens a month)"], 3), buy.beats_api_above_mtok_per_month)
    assert [out.cell("Start", labels["rent or buy"], c) for c in (2, 3)] == ["rent", "buy"]
    assert [out.cell("Start", labels["cloud offer"], c) for c in (2, 3)] == [rent.offer, "-"]
    assert [out.cell("Start", labels["meets both targets"], c) for c in (2, 3)] == ["yes", "yes"]
    # the fleet as ordered and as loaded: whole servers when bought, the load, the first token with its queueing
    assert [out.cell("Start", labels["servers bought (whole servers)"], c) for c in (2, 3)] == ["-", buy.servers]
    assert rel_equal(out.cell("Start", labels["load of the replicas"], 3), buy.load_fraction)
    assert rel_equal(out.cell("Start", labels["time to first token at the planned load"], 2), rent.ttft_at_load_ms)
    assert out.cell("Start", labels["time to first token at the planned load"], 5) == inputs["ttft_slo_ms"]
    assert out.cell("Start", labels["API prices as of"], 4) == result["api"]["as_of"]
    # the engine and each latency's likely range (engines catalog, fitted on NVIDIA AIConfigurator 0.12.0's measured points)
    assert out.cell("Start", labels["serving engine"], 2) == "vllm"
    low, high = rent.tpot_ms_likely
    assert out.cell("Start", labels["time per generated token, likely range"], 2) == f"{low:.1f}-{high:.1f} ms"
    # the launch command of the recommended setup, and the trade-off sheet's live curve against core's
    assert any(str(out.cell("Start", r, 1)).startswith("vllm serve") for r in range(20, 50))
    curve = core.tradeoff_curve(core.serve_option_inputs(result["given"], result["recommended"]),
                                tensor_parallel=[result["recommended"].n_gpus])["points"]
    rows = _serving_rows(out, "Trade-off")
    for j, point in enumerate(curve):
        assert out.cell("Trade-off", rows["concurrency"], 3 + j) == point["concurrency"]
        assert rel_equal(out.cell("Trade-off", rows["load_tokens_per_s_per_user"], 3 + j), point["tokens_per_s_per_user"])
        assert rel_equal(out.cell("Trade-off", rows["load_output_tokens_per_s_per_gpu"], 3 + j), point["output_tokens_per_s_per_gpu"])


def test_serving_workbook_follows_its_inputs(recalculated):
    """Inputs changed in the file: Start's answer and every serving number follow, as core says for the new inputs
    at the setups chosen when the file was written."""
    out = recalculated["serving-whatif"]
    inputs, gpus = _example()
    written = serve_plan(inputs, gpus=gpus)
    changed = {**inputs, **WHATIF}
    fixed = {}
    for key in ("rent", "buy"):
        o = written[f"best_{key}"]
        fixed[key] = core.evaluate({**serve_option_inputs(written["given"], o), **WHATIF})
    rows = _serving_rows(out, "Serving")
    for col, key in ((3, "rent"), (4, "buy")):
        for name in ("serve_replicas", "serve_option_usd_per_month", "tpot_ms", f"serve_{'own' if key == 'buy' else 'rent'}_beats_api_mtok_per_month"):
            assert rel_equal(out.cell("Serving", rows[name], col), float(fixed[key][name])), (key, name)
    text = out.value("Start", "A7")
    assert "the API at the prices given ($0.2 input, $0.6 output per million tokens)" in text
    hours = changed.get("hours_per_day", core.DEFAULTS["hours_per_day"])
    assert f"({changed['requests_per_s']:g} requests/s for {float(hours):g} h a day)" in text  # the traffic hours priced
    month = float(fixed["rent"]["serve_option_usd_per_month"])
    assert usd_text(month) in text or usd_text(float(fixed["buy"]["serve_option_usd_per_month"])) in text


def test_serving_workbook_names_an_api_of_another_model_and_does_not_choose_it(recalculated):
    """An API of another model is named for scale, never the answer: the workbook's live sentence says what core says."""
    inputs, gpus = _other_model_inputs()
    result = serve_plan(inputs, gpus=gpus)
    assert result["api"]["same_model"] is False and result["choice"] != "api"
    text = recalculated["serving-other-model-api"].value("Start", "A7")
    assert text == result["recommendation"] and "though it serves another model" in text
    assert not text.startswith("Use the API")
    # the API's cost as a substitute is priced out of every comparison; its cell says why, not "1E+300"
    book = recalculated["serving-other-model-api"]
    row = next(i for i in range(1, book.max_row("Serving") + 1) if book.cell("Serving", i, 1) == "the API's cost a month, as a substitute")
    assert book.cell("Serving", row, 3) >= 1e299
    shown = load_workbook(book.path)["Serving"].cell(row=row, column=3).number_format
    assert shown.startswith('[>=1E+299]"none: it serves another model"')


def test_serving_workbook_states_the_geforce_license_of_a_bought_fleet(recalculated):
    """A bought fleet of GeForce cards: the live sentence carries core's words on NVIDIA's GeForce driver license."""
    inputs, gpus = _geforce_inputs()
    result = serve_plan(inputs, gpus=gpus)
    text = recalculated["serving-geforce-buy"].value("Start", "A7")
    assert text == result["recommendation"]
    assert "RTX-4090 is a GeForce card: NVIDIA's GeForce driver license excludes datacenter deployment" in text


def test_serving_workbook_sentence_when_the_api_wins_and_when_only_renting_is_weighed(recalculated):
    inputs, gpus = _example()
    for name, change in VARIANTS.items():
        result = serve_plan({**inputs, **change}, gpus=gpus)
        out = recalculated[name]
        assert out.value("Start", "A7") == result["recommendation"] and not out.errors(), name
    assert recalculated["serving-api-wins"].value("Start", "A7").startswith("Use the API: ")
    assert out.cell("Start", 10, 3) == "the API"  # one setup column, then the API's


@pytest.mark.slow  # over 0.45 s
def test_serving_workbook_formulas_are_portable_and_name_only_what_exists(tmp_path):
    """Functions Excel 2010+ and LibreOffice both compute (the training workbook's, and UPPER, LEFT and MID for the
    sentence's first letter); every name a formula reads is a defined name or a cell; no external link."""
    import re

    from openpyxl.formula import Tokenizer
    cell = re.compile(r"^(?:(?:'[^']+'|[A-Za-z][\w.-]*)!)?\$?[A-Z]{1,3}\$?[0-9]+(?::\$?[A-Z]{1,3}\$?[0-9]+)?$")
    inputs, gpus = _example()
    wb = load_workbook(write_workbook(tmp_path / "serve.xlsx", inputs, gpus=gpus))
    names = set(wb.defined_names.keys())
    allowed = {"INDEX", "MATCH", "IF", "AND", "OR", "NOT", "MIN", "MAX", "CEILING", "FLOOR", "SQRT", "LN", "ISNUMBER", "CHOOSE",
               "COUNTIF", "TEXT", "ROUND", "ABS", "UPPER", "LEFT", "MID"}
    formulas = 0
    for ws in wb.worksheets:
        for row in ws.iter_rows():
            for c in row:
                if isinstance(c.value, str) and c.value.startswith("="):
                    tokens = Tokenizer(c.value).items
                    funcs = {t.value.rstrip("(").upper() for t in tokens if t.type == "FUNC" and t.subtype == "OPEN"}
                    assert funcs <= allowed, (ws.title, c.coordinate, funcs - allowed)
                    operands = {t.value for t in tokens if t.type == "OPERAND" and t.subtype == "RANGE"}
                    assert all(o in names or cell.match(o) for o in operands), (ws.title, c.coordinate)
                    assert "[" not in c.value
                    formulas += 1
    assert formulas > 400 and len(wb["Start"]["A7"].value) < 8192  # Excel's longest formula


@pytest.mark.slow  # over 0.45 s
def test_serving_workbook_when_no_setup_meets_the_targets(tmp_path):
    """Nothing to rent or buy: Start says use the API in core's words (text: no setup's cells to compute it from)."""
    job = {"task": "serve", "tpot_slo_ms": 1}
    wb = load_workbook(write_workbook(tmp_path / "none.xlsx", job))
    assert wb["Start"]["A7"].value == serve_plan(job)["recommendation"]
    assert [c.value for c in wb["Start"][10]][1:3] == ["the API", "target"]


def test_printed_serving_workbook_fits_the_page(recalculated):
    """LibreOffice's PDF of the serving workbook: Start on one page, nothing past the page's edge or drawn over
    other text, and its Inputs without the training job's fields."""
    from lo import pdf_pages, print_problems, sheet_of
    pdf = recalculated["serving-example"].pdf
    assert print_problems(pdf) == []
    pages = [lines for _, _, lines in pdf_pages(pdf)]
    sheets = [sheet_of(pg) for pg in pages]
    assert sheets.count("Start") == 1 and set(sheets) == {"Start", "Inputs"} and len(pages) <= 6, sheets
    text = " ".join(line.text for pg in pages for line in pg)
    assert "The answer" in text and "LoRA rank" not in text and "Training tokens" not in text


def test_serving_workbook_states_the_disaggregated_layout(recalculated):
    """Long prompts, 25 ms per token: the answer (a live formula) names the prefill and decode replicas and why, word for
    word as core says it, and the Serving sheet's numbers are core's."""
    out = recalculated["serving-disaggregated"]
    inputs, _gpus = _example()
    result = _check(out, {**inputs, **LONG_PROMPTS}, ["H100-SXM"])
    assert result["recommended"].layout == "disaggregated"
    assert out.value("Start", "A7") == result["recommendation"]
    assert "prefill and" in out.value("Start", "A7") and "layout: disaggregated prefill and decode" in out.value("Start", "A7")
