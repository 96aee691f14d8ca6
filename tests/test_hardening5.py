"""Hardening of the answers a hostile user can drive into contradiction: a request longer than the model's context,
an attention data-parallel degree no replica takes, time and cost of a training job that does not fit, the main
command with one cloud offer, and the workbook's size.  Every door is driven for real: core, the command line in a
subprocess (exit code 2, one line), the Excel functions (a short text in the cell), the form (pytest-qt, offscreen)
and real .xlsx files."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from gpu_tco import core
from gpu_tco.core.errors import InputError

ROOT = Path(__file__).resolve().parents[1]
QWEN_CONFIG = ROOT / "tests" / "data" / "hf_configs" / "Qwen2.5-7B" / "config.json"
SERVE = {"task": "serve", "model": "Llama-3-8B", "requests_per_s": 2, "ttft_slo_ms": 2000, "tpot_slo_ms": 50}


def _cli(*args, timeout=300):
    return subprocess.run([sys.executable, "-m", "gpu_tco", *args], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "HF_HUB_OFFLINE": "1"})


def _one_line_exit_2(out, *words) -> str:
    assert out.returncode == 2, (out.returncode, out.stdout[-400:], out.stderr[-600:])
    assert "internal error" not in out.stderr and "Traceback" not in out.stderr, out.stderr[-600:]
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gpu-tco: error: "), out.stderr[-600:]
    assert all(w in lines[0] for w in words), (words, lines[0])
    return lines[0]


# --- a request longer than the model's context ------------------------------------------------------------------------

def test_a_prompt_longer_than_a_catalog_models_context_is_refused_in_core():
    """Llama 3 8B takes 8,192 tokens (model catalog, max_context; Meta's config.json max_position_embeddings): a
    200,000-token prompt is refused naming prompt_tokens, the value and the context, not planned into a fleet that
    no engine would start (vLLM refuses a request over max_model_len)."""
    with pytest.raises(InputError) as err:
        core.serve_plan({**SERVE, "prompt_tokens": 200_000, "output_tokens": 100})
    assert err.value.field == "prompt_tokens" and err.value.value == 200_000
    assert "8,192" in str(err.value) and "Llama-3-8B" in str(err.value)
    # the prompt alone fits, prompt + output does not: output_tokens is what to change, and by how much
    with pytest.raises(InputError) as err:
        core.serve_plan({**SERVE, "prompt_tokens": 8000, "output_tokens": 500})
    assert err.value.field == "output_tokens" and "up to 192" in str(err.value)
    # at the context exactly: planned
    assert core.serve_plan({**SERVE, "prompt_tokens": 8000, "output_tokens": 192})["options"]
    # the same check for one setup (evaluate of a serving job) and for the Python API's plan
    with pytest.raises(InputError, match="prompt_tokens"):
        core.evaluate({**SERVE, "gpu": "H100-SXM", "n_gpus": 1, "prompt_tokens": 9000})
    # a model with a long context takes the same prompt
    assert core.serve_plan({**SERVE, "model": "Llama-3.1-8B", "prompt_tokens": 100_000, "output_tokens": 100})["options"]


def test_a_sweep_of_serving_rows_refuses_the_first_row_longer_than_its_models_context():
    """core.evaluate over arrays: the row is named; training rows and models with a default context are not refused."""
    one = {"task": "serve", "gpu": "H100-SXM", "n_gpus": 1}
    with pytest.raises(InputError) as err:
        core.evaluate({**one, "model": "Llama-3-8B", "prompt_tokens": [1000, 200_000]}, outputs=("ttft_ms",))
    assert err.value.field == "prompt_tokens" and err.value.row == 1 and "8,192" in str(err.value)
    with pytest.raises(InputError, match=r"output_tokens \(row 0\).*up to 96"):
        core.evaluate({**one, "model": ["Llama-2-7B", "Llama-3.1-8B"], "prompt_tokens": 4000, "output_tokens": [500, 500]},
                      outputs=("ttft_ms",))
    assert len(core.evaluate({**one, "task": ["train", "serve"], "model": "Llama-3-8B", "prompt_tokens": [200_000, 1000]},
                             outputs=("ttft_ms",))["ttft_ms"]) == 2
    assert len(core.evaluate({**one, "model": 8, "prompt_tokens": [200_000, 1000]}, outputs=("ttft_ms",))["ttft_ms"]) == 2


def test_a_default_context_is_planned_with_a_note_not_refused():
    """A model estimated from a parameter count (or fields, or a config.json without max_position_embeddings) has
    only a default context: the plan goes ahead and the answer says the context is not known."""
    long = {**SERVE, "prompt_tokens": 200_000, "output_tokens": 100}
    result = core.serve_plan({**long, "model": 8})
    assert "longer than the 8,192 tokens assumed" in result["recommendation"]
    assert "context length is not known" in result["context_note"]
    assert core.serve_plan({**SERVE, "model": 8, "prompt_tokens": 2000})["context_note"] is None
    fields = {"layers": 32, "hidden": 4096, "ffn": 14336, "heads": 32, "kv_heads": 8, "vocab": 128256}
    assert "not known" in core.serve_plan({**long, "model": fields})["recommendation"]
    # the same fields with their context given: refused, naming the model's own context
    with pytest.raises(InputError, match="prompt_tokens.*context of 16,384 tokens"):
        core.serve_plan({**long, "model": {**fields, "max_context": 16384}})


def test_a_config_json_without_its_context_gets_the_note_and_with_it_the_refusal(tmp_path):
    config = json.loads(QWEN_CONFIG.read_text())
    with pytest.raises(InputError, match="prompt_tokens.*131,072"):
        core.serve_plan({**SERVE, "model": str(QWEN_CONFIG), "prompt_tokens": 200_000})
    config.pop("max_position_embeddings")
    folder = tmp_path / "no-context"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(config))
    result = core.serve_plan({**SERVE, "model": str(folder / "config.json"), "prompt_tokens": 200_000})
    assert "not known" in result["recommendation"]


@pytest.mark.parametrize("value", [float("nan"), "long", -5, 1e300, True])
def test_bad_prompt_values_are_refused_by_the_inputs_own_rule(value):
    with pytest.raises(InputError) as err:
        core.serve_plan({**SERVE, "prompt_tokens": value})
    assert err.value.field == "prompt_tokens"


@pytest.mark.slow  # over 0.45 s
def test_the_command_line_refuses_a_prompt_longer_than_the_context_in_one_line(tmp_path):
    out = _cli("plan", "--task", "serve", "--model", "Llama-3-8B", "--requests-per-s", "2", "--prompt-tokens", "200000",
               "--output-tokens", "100")
    line = _one_line_exit_2(out, "prompt_tokens: 200000", "8,192")
    assert "allowed:" in line and not out.stdout
    # the main command with a serving scenario, and the serving workbook: the same line, no file written
    scenario = tmp_path / "long.json"
    scenario.write_text(json.dumps({"task": "serve", "model": "Llama-3-8B", "prompt_tokens": 200000}))
    out = _cli("--scenario", str(scenario), "--workbook", str(tmp_path / "serve.xlsx"))
    _one_line_exit_2(out, "prompt_tokens: 200000", "8,192")
    assert not (tmp_path / "serve.xlsx").exists()
    # an estimated model: planned (exit 0), the answer says the context is only assumed
    out = _cli("plan", "--task", "serve", "--model", "8", "--requests-per-s", "2", "--prompt-tokens", "200000")
    assert out.returncode == 0, out.stderr[-600:]
    assert "context length is not known" in out.stdout


def test_the_serving_workbook_is_not_written_for_a_prompt_longer_than_the_context(tmp_path):
    target = tmp_path / "serve.xlsx"
    out = _cli("workbook", "--out", str(target), "--task", "serve", "--model", "Llama-3-8B", "--prompt-tokens", "9000")
    _one_line_exit_2(out, "prompt_tokens: 9000")
    assert not target.exists() and not list(tmp_path.iterdir())


def test_excel_serve_plan_answers_a_prompt_longer_than_the_context_in_a_short_text():
    from gpu_tco.addin.functions import call
    text = call("GPU_SERVE_PLAN", "Llama-3-8B", 2, 200000, 100, 2000, 50)
    assert isinstance(text, str) and text.startswith("#INPUT!") and "prompt_tokens" in text and "8,192" in text
    assert len(text) < 300
    answer = call("GPU_SERVE_PLAN", "8", 2, 200000, 100, 2000, 50)  # an estimated model: planned, with the note
    assert not answer.startswith("#") and "context length is not known" in answer


@pytest.mark.slow  # over 0.45 s
@pytest.mark.gui
def test_the_form_shows_the_context_refusal_at_the_prompt_field(qtbot, tmp_path, monkeypatch):
    """The form: the message under the prompt field, the last answer kept and marked stale, no dialog; a prompt
    that fits brings the answer back."""
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication, QLabel, QMessageBox, QRadioButton

    from gpu_tco.gui.controller import Controller
    from gpu_tco.gui.window import MainWindow
    monkeypatch.setenv("GPU_TCO_CONFIG_DIR", str(tmp_path / "config"))
    w = MainWindow(Controller(), QSettings(str(tmp_path / "form.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(w)
    w.show()
    with qtbot.waitSignal(w.controller.answered, timeout=20_000):
        pass
    with qtbot.waitSignal(w.controller.answered, timeout=20_000):
        w.findChild(QRadioButton, "task_serve").click()
    before = w.headline.text()
    prompt = w.fields["prompt_tokens"].editor
    prompt.setFocus()
    prompt.selectAll()
    with qtbot.waitSignal(w.controller.problem, timeout=20_000):
        qtbot.keyClicks(prompt, "200000")
    message = w.findChild(QLabel, "message_prompt_tokens")
    qtbot.waitUntil(message.isVisible, timeout=10_000)
    assert message.text().startswith("prompt_tokens: 200000 is longer than Llama-3-70B's context of 8,192 tokens")
    assert w.stale_banner.isVisible() and w.headline.text() == before
    assert not [d for d in QApplication.topLevelWidgets() if isinstance(d, QMessageBox) and d.isVisible()]
    with qtbot.waitSignal(w.controller.answered, timeout=20_000):
        prompt.selectAll()
        qtbot.keyClicks(prompt, "2000")
    assert not message.isVisible() and not w.stale_banner.isVisible()


# --- attention data parallel ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("adp", [3, 16, 5])
def test_attention_dp_that_divides_no_replica_is_refused_naming_attention_dp(adp):
    """The serving planner picks the GPUs per replica (1, 2, 4, 8, the ones the model's 64 heads split over): a degree
    that divides none of them is attention_dp's problem, never an n_gpus the user did not give."""
    with pytest.raises(InputError) as err:
        core.serve_plan({"task": "serve", "model": "Llama-3-70B", "requests_per_s": 2, "attention_dp": adp})
    assert err.value.field == "attention_dp" and err.value.value == adp
    assert "n_gpus" not in str(err.value) and str(err.value).endswith("allowed: 1, 2, 4, 8")


def test_attention_dp_that_divides_a_replica_plans_replicas_it_divides():
    result = core.serve_plan({"task": "serve", "model": "Llama-3-70B", "requests_per_s": 2, "attention_dp": 4})
    assert result["options"] and all(o["n_gpus"] % 4 == 0 for o in result["options"])
    # a model whose heads 8 GPUs cannot split (Qwen2.5-7B: 28 heads, 4 KV heads): 8 is refused with what it allows
    with pytest.raises(InputError) as err:
        core.serve_plan({"task": "serve", "model": str(QWEN_CONFIG), "requests_per_s": 2, "attention_dp": 8})
    assert err.value.field == "attention_dp" and "allowed: 1, 2, 4" in str(err.value)


def test_attention_dp_is_checked_against_the_gpu_named_and_whatever_else_the_job_gives():
    """A MIG slice serves on one slice: attention_dp 2 is refused naming the slice and allowing 1; the job's other
    inputs (a tensor-parallel degree, a prompt) do not turn the refusal into a message about them."""
    with pytest.raises(InputError) as err:
        core.serve_plan({"task": "serve", "model": "Llama-3-8B", "requests_per_s": 2, "attention_dp": 2,
                         "gpu": "A100-40GB-SXM MIG 1g.5gb"})
    assert err.value.field == "attention_dp" and "MIG 1g.5gb" in str(err.value) and str(err.value).endswith("allowed: 1")
    for other in ({"tensor_parallel": 2}, {"expert_parallel": 8}, {"prompt_tokens": 9000}):
        with pytest.raises(InputError) as err:
            core.serve_plan({"task": "serve", "model": "Llama-3-70B", "requests_per_s": 2, "attention_dp": 3, **other})
        assert err.value.field == "attention_dp", other


@pytest.mark.parametrize("value", ["3", float("nan"), 2.5, 0, -1, 10**9, True])
def test_bad_attention_dp_values_are_refused_naming_attention_dp(value):
    with pytest.raises(InputError) as err:
        core.serve_plan({"task": "serve", "model": "Llama-3-70B", "requests_per_s": 2, "attention_dp": value})
    assert err.value.field == "attention_dp"


def test_the_command_line_refuses_attention_dp_3_naming_it():
    out = _cli("plan", "--task", "serve", "--model", "Llama-3-70B", "--requests-per-s", "2", "--attention-dp", "3")
    line = _one_line_exit_2(out, "attention_dp: 3", "allowed: 1, 2, 4, 8")
    assert "n_gpus" not in line


# --- the main command with one cloud offer ----------------------------------------------------------------------------

@pytest.mark.slow  # over 0.45 s
def test_the_main_command_with_an_offer_compares_the_offers_gpu_and_recommends_through_it(tmp_path):
    """`gpu-tco --offer NAME` (the main job) used to compare RTX 4090s and A100s too and then refuse the offer for not
    renting them; an offer rents one GPU type, so the comparison is that GPU at the usual counts, rented through the
    offer, and the recommendation is the planner's on that offer.  The workbook is written as `gpu-tco workbook --offer`
    writes it."""
    offer = "Lambda 8x H100 SXM"
    book = tmp_path / "main.xlsx"
    out = _cli("--offer", offer, "--json", "--workbook", str(book))
    assert out.returncode == 0, out.stderr[-600:]
    answer = json.loads(out.stdout)
    assert {(r["gpu"], r["offer"]) for r in answer["rows"]} == {("H100-SXM", offer)}
    assert sorted({r["n_gpus"] for r in answer["rows"]}) == [2, 4, 8]
    picked = {m: o for m, o in answer["recommended"].items() if o}
    assert picked and all(o["offer"] == offer and o["gpu"] == "H100-SXM" for o in picked.values())
    # the table's rented cost of the recommended row is the planner's on that offer
    plan = core.plan({**core.DEFAULT_JOB, "method": "lora"}, gpus=["H100-SXM"], offer=offer)["recommended"]
    row = next(r for r in answer["rows"] if r["recommended"] == "rent" and r["method"] == "lora")
    assert row["n_gpus"] == plan["n_gpus"] and row["rent_usd"] == pytest.approx(plan["cost_usd"], rel=1e-9)
    import openpyxl
    assert openpyxl.load_workbook(book)["Inputs"] is not None
    text = _cli("--offer", offer.lower(), "--workbook", "")  # the name as typed, in another case
    assert text.returncode == 0, text.stderr[-600:]
    assert f"from {offer}" in text.stdout and "RTX-4090" not in text.stdout
    assert "for full: nothing acceptable through Lambda 8x H100 SXM" in text.stdout


def test_the_main_command_with_a_one_gpu_offer_compares_the_size_it_sells():
    out = _cli("--offer", "Lambda 1x A10", "--json", "--workbook", "")
    assert out.returncode == 0, out.stderr[-600:]
    rows = json.loads(out.stdout)["rows"]
    assert {(r["gpu"], r["n_gpus"]) for r in rows} == {("A10", 1)}


@pytest.mark.slow  # over 0.45 s
@pytest.mark.parametrize("offer", ["Lambda 8x H100", "", "nan", "=HYPERLINK(1)"])
def test_the_main_command_refuses_an_unknown_offer_in_one_line(offer, tmp_path):
    book = tmp_path / "main.xlsx"
    _one_line_exit_2(_cli("--offer", offer, "--workbook", str(book)), "offer:")
    assert not book.exists()


def test_compared_setups_are_the_offers_gpu_or_the_usual_ones():
    assert core.compared_setups({}) == core.compared_setups({"offer": "auto"}) != ()
    assert {g for g, _ in core.compared_setups({"offer": "Lambda 8x H100 SXM"})} == {"H100-SXM"}
    with pytest.raises(InputError, match="offer"):
        core.compared_setups({"offer": "no such offer"})
    # the "none" placeholder rents no GPU (the job gives the price): the usual setups, as before
    assert core.named_offer({"offer": "none"}) is None and core.compared_setups({"offer": "none"}) == core.compared_setups({})


# --- time and cost of a training job that does not fit ----------------------------------------------------------------

BIG_ON_ONE_4090 = ("Llama-3-70B", 1e8, "RTX-4090", 1, "full")  # 1,063 GiB per GPU of tensors on a 24 GiB card


def test_excel_training_hours_of_a_job_that_does_not_fit_say_so_as_the_planner_does():
    """GPU_MEMORY_TRAIN says 1,111 GiB on a 24 GiB card and GPU_TRAIN_FIT 0; GPU_TRAIN_HOURS (and its likely range)
    used to give 156 hours for that job all the same.  Now every one says the planner's words."""
    from gpu_tco.addin.functions import MAX_TEXT, call
    assert call("GPU_TRAIN_FIT", "Llama-3-70B", "RTX-4090", 1, "full") == 0
    r = core.evaluate(dict(zip(("model", "tokens", "gpu", "n_gpus", "method"), BIG_ON_ONE_4090)))
    words = core.not_fit_text(r["peak_train_gib_per_gpu"], r["fit_limit_gib"], r["gpu_memory_gib"], r["gpus_needed"],
                              tensors_gib=r["allocator_peak_train_gib"])
    # the limit that failed, as fits_train_gpu_memory tests it: the tensors (allocator peak) against 95 % of the card
    tensors = f"{r['allocator_peak_train_gib']:,.1f}"
    assert words.startswith(f"does not fit: {tensors} GiB/GPU of tensors > 22.8 GiB (95 % of 24 GiB)")
    # 195: sharded over 24 GB cards; the count moves with the fitted CUDA context and fragmentation (each GPU keeps a
    # fixed share of 22.8 GiB beside its 1,055 / N GiB of states)
    assert 180 < r["gpus_needed"] < 260 and f"{r['gpus_needed']:.0f} GPUs hold it" in words
    assert r["allocator_peak_train_gib"] > 1000 and r["peak_train_gib_per_gpu"] > r["allocator_peak_train_gib"]
    for name in ("GPU_TRAIN_HOURS", "GPU_TRAIN_HOURS_LOW", "GPU_TRAIN_HOURS_HIGH"):
        assert call(name, *BIG_ON_ONE_4090) == words, name
    # the planner rejects the same option with the same words (core.planner's reason)
    planned = core.plan({"model": "Llama-3-70B", "method": "full", "tokens": 1e8}, gpus=["RTX-4090"], count=1)
    reasons = [reason for o in planned["options"] for reason in o["reasons"] if reason.startswith("does not fit")]
    assert reasons and all(reason == words.split("; ")[0] for reason in reasons)
    # a job that fits: the hours, as before
    hours = call("GPU_TRAIN_HOURS", "Llama-3-8B", 1e8, "H100-SXM", 8, "lora")
    assert isinstance(hours, float) and hours == pytest.approx(
        core.evaluate({"model": "Llama-3-8B", "tokens": 1e8, "gpu": "H100-SXM", "n_gpus": 8, "method": "lora"})["train_hours"])
    assert len(words) <= MAX_TEXT


def test_excel_ranges_mark_only_the_rows_that_do_not_fit():
    from gpu_tco.addin.functions import call
    column = call("GPU_TRAIN_HOURS", [["Llama-3-8B"], ["Llama-3-70B"]], 1e8, "RTX-4090", 1, "qlora")
    assert isinstance(column[0][0], float) and column[1][0].startswith("does not fit: ")
    row = call("GPU_TRAIN_HOURS_HIGH", [["Llama-3-8B", "Llama-3-70B"]], 1e8, "RTX-4090", 1, "qlora")
    assert isinstance(row[0][0], float) and row[0][1].startswith("does not fit: ")
    # throughput of the training job (GPU_TOKENS_PER_SEC mode train) too; decode is serving, which fits here
    modes = call("GPU_TOKENS_PER_SEC", "Llama-3-8B", "RTX-4090", 1, [["train"], ["decode"]])
    assert modes[0][0].startswith("does not fit: ") and isinstance(modes[1][0], float)
    # the cost of renting for the estimated training time: none; for hours the user gives, the cost of those hours
    assert call("GPU_CLOUD_COST", "RTX-4090", 0, 1).startswith("does not fit: ")
    assert isinstance(call("GPU_CLOUD_COST", "RTX-4090", 10, 1), float)
    mixed = call("GPU_CLOUD_COST", [["RTX-4090"], ["RTX-4090"]], [[0], [10]], 1)
    assert mixed[0][0].startswith("does not fit: ") and isinstance(mixed[1][0], float)


@pytest.mark.parametrize("tokens", [float("nan"), "many", -1, 1e300, True])
def test_excel_training_hours_refuse_bad_tokens_before_the_fit(tokens):
    from gpu_tco.addin.functions import call
    cell = call("GPU_TRAIN_HOURS", "Llama-3-70B", tokens, "RTX-4090", 1, "full")
    assert cell.startswith("#INPUT! tokens"), cell


@pytest.mark.slow  # over 0.45 s
def test_estimate_gives_no_hours_for_a_job_that_does_not_fit():
    out = _cli("estimate", "--model", "Llama-3-70B", "--gpu", "RTX-4090", "--n-gpus", "1", "--method", "full")
    assert out.returncode == 0, out.stderr[-600:]
    rows = {line[:36].strip(): line[36:].strip() for line in out.stdout.splitlines()}
    tensors = core.evaluate(model="Llama-3-70B", gpu="RTX-4090", n_gpus=1, method="full")["allocator_peak_train_gib"]
    assert rows["training hours"].startswith(f"does not fit: {tensors:,.1f} GiB/GPU of tensors > 22.8 GiB (95 % of 24 GiB)")
    assert rows["training hours, likely range"] == rows["GPU-hours"] == rows["throughput (tokens/s)"] == "-"
    fits = _cli("estimate", "--model", "Llama-3-8B", "--gpu", "H100-SXM", "--n-gpus", "1", "--method", "lora")
    rows = {line[:36].strip(): line[36:].strip() for line in fits.stdout.splitlines()}
    assert float(rows["training hours"]) > 0 and " to " in rows["training hours, likely range"]


def test_the_quantities_that_need_a_fit_are_the_time_and_cost_of_a_job_and_what_follows_from_them():
    assert {"train_hours", "train_hours_likely_low", "train_hours_likely_high", "train_tokens_per_s", "train_gpu_hours",
            "rent_total_usd", "option_cost_usd"} <= core.NEEDS_FIT
    assert {"decode_tokens_per_s", "prefill_tokens_per_s", "serve_tokens_per_s", "decode_usd_per_mtok_rent",
            "selfhost_rent_breakeven_mtok_per_month", "selfhost_breakeven_mtok_per_month"} <= core.NEEDS_FIT
    assert not core.NEEDS_FIT & {"fits_train", "option_ok", "peak_train_gib_per_gpu", "serve_fits", "own_tco_usd",
                                 "kv_cache_gib", "peak_infer_gib_per_gpu"}


def test_excel_serving_costs_of_a_replica_that_does_not_fit_say_so_as_the_serving_planner_does():
    """Llama 3 70B in bf16 on one RTX 4090: 131 GiB of weights on a 24 GiB card.  GPU_COST_PER_MTOK used to price the
    tokens of that replica (about $16 per million), GPU_TOKENS_PER_SEC to give its speed; now they say what the
    serving planner says when it rejects that setup."""
    from gpu_tco.addin.functions import call
    words = call("GPU_COST_PER_MTOK", "Llama-3-70B", "RTX-4090", 1)
    assert words.startswith("does not fit: weights 131.4 GiB/GPU leave no room for one request's KV cache in 24 GiB")
    for name, args in (("GPU_API_BREAKEVEN", ()), ("GPU_API_BREAKEVEN_OWNED", ()), ("GPU_TOKENS_PER_SEC", (1, "decode")),
                       ("GPU_TOKENS_PER_SEC", (1, "prefill"))):
        assert call(name, "Llama-3-70B", "RTX-4090", *(args or (1,))) == words, name
    planned = core.serve_plan({"model": "Llama-3-70B", "requests_per_s": 1, "gpu": "RTX-4090", "n_gpus": 1,
                               "weights_dtype": "bf16"}, include_buy=False)
    assert any(reason == words for o in planned["options"] for reason in o["reasons"])
    mixed = call("GPU_COST_PER_MTOK", [["Llama-3-70B"], ["Llama-3-8B"]], "RTX-4090", 1)
    assert mixed[0][0] == words and isinstance(mixed[1][0], float)
    assert isinstance(call("GPU_COST_PER_MTOK", "Llama-3-70B", "H100-SXM", 8), float)


def test_estimate_gives_no_speed_for_a_replica_that_does_not_fit():
    out = _cli("estimate", "--mode", "infer", "--model", "Llama-3-70B", "--gpu", "RTX-4090", "--n-gpus", "1")
    assert out.returncode == 0, out.stderr[-600:]
    lines = {line.split("  ")[0]: line for line in out.stdout.splitlines()}
    assert "does not fit: weights 131.4 GiB/GPU" in next(v for k, v in lines.items() if k.startswith("decode tokens/s per sequence"))
    assert lines["decode tokens/s, whole batch"].split()[-1] == lines["prefill tokens/s"].split()[-1] == "-"


# --- the workbook's size ----------------------------------------------------------------------------------------------

WORKBOOK_TARGET_KB = 250  # installer/bench.py's figure workbook_size_kb


@pytest.mark.slow  # over 0.45 s
def test_the_default_workbook_is_under_its_size_target_with_every_formula_live(tmp_path):
    """The Options sheet repeats each quantity's formula across the option columns: written once per row as a shared
    formula (the file held 281 KB with a formula per cell).  Read back, every cell's formula is the one the generator
    wrote (openpyxl shifts a shared formula into each cell as Excel and LibreOffice do), and every formula cell keeps
    its cached value."""
    import zipfile

    import openpyxl

    from gpu_tco.workbooks import write_workbook
    from gpu_tco.workbooks.build import build_workbook
    path = write_workbook(tmp_path / "book.xlsx")
    assert path.stat().st_size / 1000 < WORKBOOK_TARGET_KB, path.stat().st_size
    written, _ = build_workbook()
    read = openpyxl.load_workbook(path)
    checked = 0
    for ws in written.worksheets:
        back = read[ws.title]
        for row in ws.iter_rows():
            for cell in row:
                if isinstance(cell.value, str) and cell.value.startswith("="):
                    assert back[cell.coordinate].value == cell.value, (ws.title, cell.coordinate)
                    checked += 1
    assert checked > 4000
    with zipfile.ZipFile(path) as z:
        sheets = [z.read(n).decode() for n in z.namelist() if n.startswith("xl/worksheets/sheet")]
    options = [x for x in sheets if 't="shared"' in x]
    assert len(options) == 1 and options[0].count('<f t="shared" si=') > 3000
    # each shared cell carries its own cached value (a viewer that does not recalculate shows numbers)
    assert options[0].count('<f t="shared" si=') == len(re.findall(r'<f t="shared" si="\d+"/><v>[^<]+</v>', options[0]))


@pytest.mark.parametrize("value, text", [(75.94827586206897, "75.948275862"), (2.0, "2.0"), (70553706496.0, "70553706496.0"),
                                         (0.1 + 0.2, "0.3"), (3.650908e-13, "3.650908e-13"), (-1.5e300, "-1.5e+300"),
                                         (1 / 3, "0.33333333333")])
def test_cached_numbers_keep_eleven_significant_digits(value, text):
    from gpu_tco.workbooks.xlsx import cached_number
    assert cached_number(value) == text
    assert float(text) == pytest.approx(value, rel=1e-10)


def test_rows_are_shared_only_where_every_cell_is_a_plain_formula():
    """The writer shares a row only when each cell of the range holds a plain formula; an empty row before it, a cell
    missing or an array formula leaves the row as openpyxl wrote it."""
    from gpu_tco.workbooks.xlsx import _share_rows
    row = '<row r="2"><c r="C2" s="5"><f>C1+1</f><v>1</v></c><c r="D2" s="5"><f>D1+1</f><v>2</v></c></row>'
    shared = _share_rows(f'<sheetData><row r="1"/>{row}</sheetData>', [(2, 3, 4)])
    assert '<c r="C2" s="5"><f t="shared" ref="C2:D2" si="0">C1+1</f><v>1</v></c>' in shared
    assert '<c r="D2" s="5"><f t="shared" si="0"/><v>2</v></c>' in shared
    for groups in ([(2, 3, 5)], [(3, 3, 4)], [(2, 3, 3)]):  # a cell missing, another row, a single cell
        assert _share_rows(f"<sheetData>{row}</sheetData>", groups) == f"<sheetData>{row}</sheetData>"
    array = row.replace("<f>D1+1</f>", '<f t="array" ref="D2">D1+1</f>')
    assert _share_rows(f"<sheetData>{array}</sheetData>", [(2, 3, 4)]) == f"<sheetData>{array}</sheetData>"


def test_the_words_of_a_job_that_does_not_fit_name_the_limit_it_fails():
    """fits_train_gpu_memory holds two limits: the tensors (allocator peak) within 95 % of the card, and everything on
    it (device total: the tensors, the CUDA context, the allocator's slack) within the card.  The words name the one
    that failed; they compared the device total with the tensors' limit, so that a "fits with" line at 78.7 of 80 GiB
    read as if above a 76.0 GiB limit just stated."""
    tensors = core.not_fit_text(30.0, 22.8, 24.0, tensors_gib=28.0)
    assert tensors.startswith("does not fit: 28.0 GiB/GPU of tensors > 22.8 GiB (95 % of 24 GiB)")
    total = core.not_fit_text(24.6, 22.8, 24.0, tensors_gib=22.5)  # the tensors within their limit, the whole above the card
    assert total.startswith("does not fit: 24.6 GiB/GPU in all (the tensors, the CUDA context and the allocator's slack) > 24 GiB")
    # a configuration the engine itself refuses on the device total alone: the words say so
    job = {"model": "Llama-3.1-8B", "gpu": "RTX-4090", "n_gpus": 1, "method": "qlora", "fragmentation_pct": 30}
    for seq in (4096, 6144, 8192, 12288, 16384):
        r = core.evaluate({**job, "seq_len": seq})
        if not r["fits_train"] and r["allocator_peak_train_gib"] <= r["fit_limit_gib"]:
            assert r["peak_train_gib_per_gpu"] > r["gpu_memory_gib"]
            words = core.fit_gaps(r, ["train_hours"])["train_hours"]
            assert "GiB/GPU in all" in words and "of tensors" not in words
            break
    else:
        pytest.fail("no sequence length puts only the device total above the card")
