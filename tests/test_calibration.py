"""The calibration set (core/data/measurements.csv): published measurements of training speed, pre-training
GPU-hours, peak memory and serving speed; the defaults fitted on them; leave-one-source-out errors.

Sources (full citations in docs/calibration.md): PyTorch torchtune README (2024-09), PyTorch torchtitan
docs/performance.md (2024-04), MosaicML LLM Foundry MPT benchmarks (2023), Touvron et al. 2023 (Llama 2, Table 2),
Unsloth's Llama 3.1 maximum-context table (2024), llama.cpp pull request 19053 llama-bench tables (2026-01),
MLC AI llm-perf-bench (2023-08)."""
import csv
import math
from pathlib import Path

import numpy as np
import pytest

import gpu_tco.core as core
from gpu_tco.core import calibration as cal
from gpu_tco.core.references import REFERENCES

ROWS = cal.load_measurements()
ROOT = Path(__file__).resolve().parents[1]


def test_the_set_is_large_varied_and_sourced():
    assert len(ROWS) >= 30
    assert len({m.source for m in ROWS}) >= 4
    assert {m.kind for m in ROWS} == {"training speed", "memory", "decode speed", "prefill speed"}
    with open(cal.MEASUREMENTS_PATH, newline="", encoding="utf-8") as fh:
        raw = list(csv.DictReader(fh))
    assert len({r["id"] for r in raw}) == len(raw)
    for row in raw:
        ref = REFERENCES[row["source"]]  # every source is a full citation with a URL
        assert ref.addressed(ROOT), row["id"]
        assert len(row["date"]) == 10 and row["date"][:2] == "20", row["id"]
        assert row["recipe"] and row["framework"], row["id"]
        if row["quantity"] in cal.TRAIN_QUANTITIES + cal.MEMORY_QUANTITIES:
            for column in ("model", "method", "gpu", "n_gpus", "seq_len", "micro_batch", "precision", "recompute", "fused_loss"):
                assert row[column] != "", (row["id"], column)


FITTED = [m for m in ROWS if cal.in_fit(m)]  # the others: test_exclusions_follow_the_rule


@pytest.mark.parametrize("m", FITTED, ids=[m.id for m in FITTED])
def test_every_row_within_tolerance(m):
    """Time and speed within 25 %, memory within 12 %, with the catalogs as shipped; an upper bound (the card's
    memory at the longest context that ran) must not be exceeded: the model would call a run that worked 'does not fit'."""
    error = cal.predict(m) / m.value - 1
    assert abs(error) <= cal.TOLERANCE[m.kind], f"{m.id}: {error:+.1%}"
    if m.bound == "at_most":
        assert error <= 0


def test_exclusions_follow_the_rule():
    """Rows are left out only by rule: a speed that needs more than 80 % of the dense peak counting the FLOPs the
    recipe executes (torchtune's single-GPU LoRA figures and the RTX A6000 full fine-tune); a training-speed row on a
    GPU without dense rows of its chip (the H800 is the H100's chip; its MFU would be set by mixture-of-experts rows: they are checks); reserved memory (checks); gpu-tco's own runs and the sources of CHECK_SOURCES (checks), the memory rows of
    MEMORY_CHECK_SOURCES (checks), and the rows whose check column gives a reason (torchtune's 8B full fine-tune on one RTX 4090,
    whose paged optimizer states spill over PCIe: a check)."""
    for m in ROWS:
        u = cal.executed_utilisation(m)
        by_rule = (u is None or u <= cal.EXECUTED_LIMIT) and m.quantity != "reserved_peak_train_gib" \
            and m.source not in cal.OWN_SOURCES and m.source not in cal.CHECK_SOURCES and m.source not in cal.HELD_OUT_SOURCES \
            and not (m.kind == "memory" and m.source in cal.MEMORY_CHECK_SOURCES) and not m.check \
            and not (m.kind == "training speed" and f"gpu:{cal.CHIP_OF.get(m.inputs['gpu'], m.inputs['gpu'])}" not in cal.PRIORS)
        assert cal.in_fit(m) == by_rule, m.id
    excluded = {m.id for m in ROWS if not cal.in_fit(m) and (cal.executed_utilisation(m) or 0) > cal.EXECUTED_LIMIT}
    assert excluded == {"tt-8b-full-a6000-speed", "tt-8b-lora-4090-speed", "tt-8b-lora-a6000-speed"}
    # the RTX A6000 full fine-tune sits just above the limit (80.4 %: its FLOPs per token leave the embedding lookup out)
    assert all(cal.executed_utilisation(m) > cal.EXECUTED_LIMIT for m in ROWS if m.id in excluded)
    # what is kept spans 36-72 % of peak: the rule removes outliers, not the awkward rows
    kept = [cal.executed_utilisation(m) for m in ROWS if m.quantity == "train_tokens_per_s" and cal.in_fit(m)]
    assert min(kept) < 0.4 and max(kept) > 0.7


@pytest.mark.slow  # over 0.45 s
def test_catalogs_hold_the_fitted_values():
    """One definition: the values in gpus.csv, methods.csv, recomputes.csv and calibrated.csv are what the fit gives
    (to the written rounding); editing one without refitting (gpu-tco calibrate --write) fails here."""
    fitted = cal.rounded(cal.fit(ROWS))
    current = cal.catalog_values()
    for name in cal.informed(ROWS):
        # within one unit of the written rounding: where the fixed point lies between two rounded values, the rounds of
        # calibrate --write alternate between them
        unit = 10.0 ** -cal.ROUNDING.get(name, 3)
        assert abs(current[name] - fitted[name]) <= unit * 1.001 + 2e-3 * abs(fitted[name]), name
    for name in set(cal.PRIORS) - cal.informed(ROWS):
        assert current[name] == cal.PRIORS[name], name
    gpus = core.catalog.tables()["gpus"]
    for name, twins in cal.SAME_CHIP.items():
        for twin in twins:
            assert gpus.row(twin)["default_mfu"] == gpus.row(name)["default_mfu"]


def test_the_fit_is_the_engine():
    """The fit predicts speed rows as a product of factors; the engine forms mfu_effective from the same factors,
    so both give the same number (up to the catalog's rounding)."""
    params = cal.catalog_values()
    for m in ROWS:
        assert cal.predict_with(m, params) == pytest.approx(cal.predict(m), rel=1e-9), m.id


def test_the_fit_reduces_the_errors_it_was_asked_to():
    """Before calibration (the priors) the rows the issue named were far off: 4090 LoRA/QLoRA speed a third to a
    half of the measurement, single-GPU LoRA/QLoRA memory 13-22 % high.  After: within the tolerances."""
    prior = {**cal.PRIORS, **cal.MEMORY_PRIORS}
    before = {m.id: abs(e) for m, _p, e in cal.errors(prior, ROWS) if cal.in_fit(m)}
    after = {m.id: abs(e) for m, _p, e in cal.errors(rows=ROWS) if cal.in_fit(m)}
    assert before["tt-8b-qlora-4090-speed"] > 0.35 and after["tt-8b-qlora-4090-speed"] < 0.25
    assert before["tt-8b-qlora-4090-mem"] > 0.13 and after["tt-8b-qlora-4090-mem"] < 0.12
    assert max(after.values()) < max(before.values())


@pytest.mark.slow  # over 0.45 s: five fits
def test_a_fit_reusing_the_part_of_an_earlier_fit_gives_the_same_numbers():
    """Leaving one source out reuses the speed part or the memory part of an earlier fit when the source held no row of
    that kind: the numbers are those of a fit from scratch, and a source with both kinds reuses neither."""
    speed_only = next(s for s in sorted({m.source for m in ROWS}) if {m.kind for m in ROWS if m.source == s} == {"training speed"})
    memory_only = next(s for s in sorted({m.source for m in ROWS}) if {m.kind for m in ROWS if m.source == s} == {"memory"})
    both = next(s for s in sorted({m.source for m in ROWS}) if {m.kind for m in ROWS if m.source == s} == {"memory", "training speed"})
    fits_done: dict = {}
    cal.fit(ROWS, fits_done)
    assert len(fits_done) == 2
    for source in (speed_only, memory_only):
        rest = [m for m in ROWS if m.source != source]
        assert cal.fit(rest, fits_done) == cal.fit(rest), source
        assert len(fits_done) == 3 if source == speed_only else 4  # one part new, the other reused
    cal.fit([m for m in ROWS if m.source != both], fits_done)
    assert len(fits_done) == 6


def test_leave_one_source_out_is_reported_and_honest(training_loso):
    loso = training_loso  # cal.leave_one_source_out(ROWS), shared with the tests below (conftest.py)
    for kind in ("training speed", "memory", "decode speed", "prefill speed"):
        assert 0 < loso[kind]["median"] <= loso[kind]["worst"]
    # out of sample the errors are larger than in sample: the figures are not the fit's own residuals
    in_sample = max(abs(e) for m, _p, e in cal.errors(rows=ROWS) if cal.in_fit(m) and m.kind == "training speed")
    assert loso["training speed"]["worst"] > in_sample
    assert set(loso["by_source"]) == {m.source for m in ROWS if cal.in_fit(m)}  # every source with rows in the fit
    assert set(cal.OWN_SOURCES) <= {m.source for m in ROWS} - set(loso["by_source"])  # gpu-tco's own runs are checks


def test_checks_are_reported_per_framework(training_loso):
    """Rows that never enter the fit are still reported: gpu-tco's own transformers runs, and the memory rows of torchtune's
    second README table (Llama 3.2 3B on one A100, Alpaca's short examples packed into 4,096 tokens with per-document
    attention masks).  Its speed rows are fitted since LoRA's work is counted as it runs (recomputation, the adapters'
    products, torchtune's adapter traffic): before, its LoRA rows sat 8-10 % fast beside full fine-tunes 18-22 % slow.
    Counted over the whole pack, attention was 18 % of the modelled work and the full fine-tunes came out 31-34 % slow."""
    checks = training_loso["checks"]
    assert checks[("transformers", "training speed", cal.CHECK_GROUPS["own"])]["rows"] >= 10
    flags = [m for m in ROWS if m.source == "torchtune_readme_flags"]
    assert {cal.in_fit(m) for m in flags if m.kind == "training speed"} == {True}
    packed = checks[("torchtune", "memory", cal.check_label("torchtune_readme_flags"))]
    assert packed["rows"] == 3 and packed["median"] < 0.12  # 11.4 %: -11 % without recomputation, +20 % (foreach AdamW)
    # left out, the table's rows are predicted from the September 2024 table and every other source: its full fine-tunes
    # 19-25 % slow (torchtune's compiled full fine-tunes gain more over its LoRA runs than the shared factors allow)
    left_out = dict(training_loso["by_source"]["torchtune_readme_flags"])
    assert len(left_out) == 6 and max(abs(e) for e in left_out.values()) < 0.30
    row = next(m for m in ROWS if m.id == "tt3b-full-ccel-noac-a100-speed")
    assert row.inputs["packed_document_tokens"] == 120
    r, whole_pack = cal._evaluate(row), cal._evaluate(row, packed_document_tokens=0)
    share = lambda x: (x["flops_per_token_train"] - 6 * x["params_active"]) / x["flops_per_token_train"]  # noqa: E731
    assert share(whole_pack) > 0.15 and share(r) < 0.01  # attention within ~120-token documents, not the 4,096-token pack
    # counted over the whole pack, the model would miss the row by a tenth more than counted within each document
    assert abs(whole_pack[row.quantity] / row.value - 1) > abs(r[row.quantity] / row.value - 1) + 0.10


def test_every_framework_meets_the_held_out_aims(training_loso):
    """Leave one source out, per framework with published rows in the fit: median training-speed error at most 15 %, memory
    at most 10 % (the aims docs/calibration.md reports against).  torchtune met its speed aim only once each README row
    named the adapters its recipe set (below): modelled on every linear, its 3B LoRA rows and 70B LoRA row left out came
    out 15.6 % off in median."""
    framework_rows = {k: v for k, v in training_loso["by_framework"].items() if k[1] in ("training speed", "memory")}
    assert {fw for fw, _kind in framework_rows} >= {"transformers", "torchtune", "torchtitan", "megatron", "composer"}
    for (framework, kind), v in framework_rows.items():
        assert v["median"] <= (0.15 if kind == "training speed" else 0.10), (framework, kind, v)


def test_rows_name_the_adapters_their_recipes_set():
    """The adapter sets of the published LoRA rows follow the recipes as they stood at each table's date: torchtune's
    llama3_1/70B_lora (2024-09-14: q, k, v), llama3_2/3B_lora_single_device and 3B_qlora_single_device (2024-11-07: q, v,
    output and the MLP) (PyTorch, torchtune recipes/configs, https://github.com/pytorch/torchtune/tree/main/recipes/configs);
    Answer.AI's fsdp_qlora train.py "all" (q, k, v, gate, up, down; Whitaker, Warner and Turgutlu, "Benchmarking
    QLoRA+FSDP", 2024-03, https://github.com/AnswerDotAI/fsdp_qlora/blob/main/benchmarks_03_2024.md).  Fewer adapted linears
    mean fewer adapter parameters: in Llama 3.1 8B (grouped-query attention: k is a quarter of o's width out)
    qv < qkv < qkv_mlp < qvo_mlp < all."""
    by_id = {m.id: m for m in ROWS}
    assert by_id["tt-70b-lora-a100-speed"].inputs["lora_targets"] == "qkv"
    assert {by_id[i].inputs["lora_targets"] for i in ("tt3b-lora-a100-speed", "tt3b-qlora-a100-speed")} == {"qvo_mlp"}
    answerai = [m for m in ROWS if m.source == "answerai_fsdp_qlora_bench" and m.inputs.get("method") != "full"]
    assert answerai and {m.inputs["lora_targets"] for m in answerai} == {"qkv_mlp"}
    params = [core.evaluate(model="Llama-3.1-8B", method="lora", lora_targets=t)["lora_params"]
              for t in ("qv", "qkv", "qkv_mlp", "qvo_mlp", "all")]
    assert params == sorted(params) and len(set(params)) == len(params)


def test_lora_on_one_h100_published_by_nemo_automodel(training_loso):
    """NVIDIA NeMo AutoModel, performance summary, 'Finetuning (LoRA) Performance' (commit 507bfb7, 2025-12-16,
    https://github.com/NVIDIA-NeMo/Automodel/blob/507bfb7514f0060b45fda40da97b050425ec11c8/docs/performance-summary.md):
    Llama 3.1 8B and Qwen2.5 7B, LoRA rank 16 on every linear layer, one DGX-H100 GPU, 4,096-token sequences, local batch
    2, global batch 32: 10.51 and 9.29 s per global step (12,473 and 14,110 tokens/s).  Fitted under torchtitan (AutoModel
    runs FSDP2 as it does), within 15 % in the fit and left out."""
    rows = [m for m in ROWS if m.source == "automodel_perf_lora"]
    assert len(rows) == 2 and all(cal.in_fit(m) and m.inputs["framework"] == "torchtitan" for m in rows)
    for m in rows:
        assert m.value == pytest.approx(32 * 4096 / (10.51 if "l31" in m.id else 9.29), rel=1e-3)
        assert m.inputs["n_gpus"] == 1 and m.inputs["lora_targets"] == "all" and m.inputs["recompute"] == "none"
        assert abs(cal.predict(m) / m.value - 1) < 0.15, m.id
    assert all(abs(e) < 0.15 for _i, e in training_loso["by_source"]["automodel_perf_lora"])
    assert "507bfb7" in REFERENCES["automodel_perf_lora"].url


def test_gpus_over_pcie_pay_their_modelled_transfers_and_no_flat_penalty():
    """Answer.AI (Whitaker, Warner and Turgutlu), "Benchmarking QLoRA+FSDP" (2024-03,
    https://github.com/AnswerDotAI/fsdp_qlora/blob/main/benchmarks_03_2024.md): Llama 2 7B LoRA and QLoRA with DDP or FSDP
    on two RTX 4090s joined by PCIe.  With the PCIe transfers timed by the communication model and no flat penalty on top
    (pcie_multi_gpu_efficiency 1, the default) the rows are in the fit and within 15 % (the RTX 4090 held at its dense
    peak, the bound of its efficiency, the LoRA row with DDP is 14 % slow); the earlier flat 0.7 put every one of them more
    than 10 % low."""
    assert core.resolve_inputs({})["pcie_multi_gpu_efficiency"] == 1.0
    pcie = [m for m in ROWS if m.kind == "training speed" and m.inputs["n_gpus"] > 1
            and cal._gpu_row(cal._evaluate(m)["gpu"])["multi_gpu_fabric"] < 1]
    assert {m.source for m in pcie} == {"answerai_fsdp_qlora_bench"} and len(pcie) == 6
    for m in pcie:
        assert cal.in_fit(m), m.id
        assert abs(cal.predict(m) / m.value - 1) < 0.15, m.id
        with_old_penalty = cal._evaluate(m, pcie_multi_gpu_efficiency=0.7)[m.quantity] / m.value - 1
        assert with_old_penalty < -0.10, m.id


def test_docs_calibration_is_current(training_loso):
    with open(cal.DOC_PATH, encoding="utf-8") as fh:  # render() with the leave-one-source-out it would compute itself
        assert fh.read() == cal.render(loso=training_loso), "docs/calibration.md is stale: run `gpu-tco docs`"


def test_mfu_input_is_model_flops_utilisation():
    """A published MFU goes in once it counts the FLOPs ours counts: time = model FLOPs / (GPUs x dense peak x MFU),
    whatever the recomputation.  torchtitan reports Llama 3 8B at 58.2 % MFU on 64 A100s, 2,973 tokens/s per GPU:
    its 2024 count takes 6 x all 8.03 B parameters, the input embedding lookup included, so in ours (6 x 7.50 B, the
    lookup is not a matrix product) the same run is 58.2 % x ours / theirs."""
    # torchtitan's cluster: servers on InfiniBand (an owned setup), not 64 separate rented machines
    job = dict(model="Llama-3-8B", gpu="A100-80GB-SXM", n_gpus=64, seq_len=8192, micro_batch=1, method="full", tokens=1e9, buy=1)
    ours = core.evaluate(job, recompute="selective")
    theirs = ours["flops_per_token_train"] + 6 * ours["embedding_lookup_params"]
    mfu = 0.582 * ours["flops_per_token_train"] / theirs
    r = core.evaluate(job, recompute="selective", mfu=mfu)
    assert r["comm_slowdown"] == 1
    assert r["train_tokens_per_s"] / 64 == pytest.approx(2973, rel=0.02)
    assert r["train_tokens_per_s"] == pytest.approx(64 * 312e12 * mfu / r["flops_per_token_train"], rel=1e-12)
    # a published MFU already reflects the run's recomputation: with the MFU given, checkpointing changes nothing
    full = core.evaluate(model="Llama-3-8B", gpu="A100-80GB-SXM", n_gpus=64, seq_len=8192, micro_batch=1, method="full",
                         recompute="full", mfu=mfu, tokens=1e9, buy=1)
    assert full["train_hours"] == r["train_hours"]


def test_default_mfu_multiplies_the_calibrated_factors():
    job = dict(model="Llama-3.1-70B", gpu="A100-80GB-SXM", n_gpus=8, recompute="full")
    gpus, methods, recomputes = (core.catalog.tables()[t] for t in ("gpus", "methods", "recomputes"))
    # the default framework (transformers, eager layers) runs at its speed factor of the fitted MFU
    framework = core.catalog.tables()["frameworks"].row(core.DEFAULTS["framework"])["speed_factor"]
    base = gpus.row("A100-80GB-SXM")["default_mfu"] * recomputes.row("full")["mfu_factor"] * framework
    assert core.evaluate(job, method="full")["mfu_effective"] == pytest.approx(base)
    # with full recomputation the recomputed forward is a third of LoRA's work where it is a quarter of full training's
    # ((4/6) / (6/8) = 0.889 for the weights' products); attention's forward is a third of its work either way
    lora = core.evaluate(job, method="lora")
    p, adapters, mixer = lora["params_active"], lora["lora_params"], lora["train_mixer_flops_per_token"]
    lora_work, full_work = 4 * p + 6 * adapters + mixer, 6 * p + mixer
    counted = (lora_work / (lora_work + 2 * p + 2 * adapters + mixer / 3)) / (full_work / (full_work + 2 * p + mixer / 3))
    assert lora["lora_recompute_factor"] == pytest.approx(counted) and 8 / 9 < counted < 0.92
    longer = core.evaluate({**job, "seq_len": 131072}, method="lora")["lora_recompute_factor"]
    assert counted < longer < 1  # attention, which LoRA does not shrink, weighs more at long sequences
    assert lora["mfu_effective"] == pytest.approx(base * methods.row("lora")["mfu_factor"] * counted)
    assert core.evaluate({**job, "recompute": "none"}, method="lora")["lora_recompute_factor"] == 1
    assert core.evaluate(job, method="full")["lora_recompute_factor"] == 1
    # CPU offload has no efficiency factor: it costs time through PCIe transfers and the CPU optimizer step
    assert core.evaluate(job, method="full", offload_params=1)["mfu_effective"] == pytest.approx(base)
    moe = core.resolve_inputs({})["moe_train_efficiency"]
    assert core.evaluate({**job, "model": "Mixtral-8x7B"}, method="full")["mfu_effective"] == pytest.approx(base * moe)
    cluster = core.resolve_inputs({})["large_cluster_mfu_factor"]
    assert core.evaluate({**job, "n_gpus": 512}, method="full")["mfu_effective"] == pytest.approx(base * cluster)


# ---------------------------------------------------------------------------
# memory techniques the calibration recipes use (torchtune's "Memory Optimization Overview")

def test_full_finetune_of_8b_fits_one_4090_with_torchtunes_recipe():
    """torchtune lists a full fine-tune of Llama 3.1 8B as 'runnable on 1x 4090': paged 8-bit AdamW (states in
    unified memory), the optimizer step inside the backward pass, activation checkpointing and a chunked loss."""
    recipe = dict(model="Llama-3.1-8B", method="full", gpu="RTX-4090", n_gpus=1, sharding="none", seq_len=2048,
                  micro_batch=2, precision="bf16_pure", recompute="full", fused_loss=1)
    plain = core.evaluate(recipe, optimizer="adamw_8bit")
    tuned = core.evaluate(recipe, optimizer="paged_adamw_8bit", optimizer_in_backward=1)
    assert not plain["fits_train"] and tuned["fits_train"]
    assert tuned["optimizer_gib"] == 0  # paged states are moved to CPU memory when the GPU is full
    # only the largest tensor's gradient (the 128,256 x 4,096 embedding, bf16) is held at a time
    assert tuned["gradients_gib"] == pytest.approx(128256 * 4096 * 2 / 2**30)
    assert plain["gradients_gib"] == pytest.approx(tuned["params_total"] * 2 / 2**30)


def test_parameter_offload_keeps_only_the_gathered_units_on_the_gpu():
    job = dict(model="Llama-3.1-70B", method="full", gpu="A100-80GB-SXM", n_gpus=8, sharding="zero3", precision="bf16_pure")
    on_gpu, off = core.evaluate(job), core.evaluate(job, offload_params=1)
    assert off["weights_gib"] == off["gradients_gib"] == off["optimizer_gib"] == 0
    # on the GPU: the gathered units as without offload, plus the shards copied in from the CPU before the gather
    r = core.evaluate(job)
    assert off["zero3_prefetch_gib"] == pytest.approx(on_gpu["zero3_prefetch_gib"] + 2 * r["layer_weight_bytes"] / 8 / 2**30)
    assert off["peak_train_gib_per_gpu"] < on_gpu["peak_train_gib_per_gpu"] / 3
    assert off["train_hours"] > on_gpu["train_hours"]  # the CPU optimizer step over 70B / 8 parameters per GPU
    # the gathered units: the output matrix (128,256 x 8,192) is larger than a layer, so it sets the size
    r = core.evaluate(job)
    assert r["largest_unit_params"] == 128256 * 8192 > r["layer_params"]
    # the current unit and the next (a layer, then the output matrix) plus the largest unit's bf16 gradient
    assert math.isclose(r["gathered_layers_gib"], (r["layer_weight_bytes"] + r["vocab_matrix_bytes"] + 128256 * 8192 * 2) / 2**30)


def test_llama_cpp_on_a_geforce_card_checks_prefill_and_decode_held_out(training_loso):
    """Georgi Gerganov, llama.cpp pull request 4766 "ggml-backend integration" (comment of 2024-01-10,
    https://github.com/ggml-org/llama.cpp/pull/4766): llama-bench of CodeLlama 7B on one RTX 4090, F16, Q8_0 and Q4_0,
    pp 512 and tg 128.  The rows enter no fit and are predicted held out: the prompt's peak is the FP16-accumulate rate
    (330 TFLOPS, twice the FP32-accumulate 165), the quantized prompts within 25 %; the F16 prompt ran faster than the
    model (45 % of that peak at 512 tokens: cuBLAS on FP16 weights with no dequantisation), one prefill efficiency for
    every weight format being what the model has.  Decode within 25 %."""
    rows = {m.id: m for m in ROWS if m.source == "llamacpp_4766"}
    assert len(rows) == 5 and not any(cal.in_fit(m) for m in rows.values())
    f16 = cal._evaluate(rows["lcpp-llama7b-f16-4090-pp"])
    assert f16["infer_tflops_per_gpu_peak"] == pytest.approx(2 * f16["train_tflops_per_gpu_peak"], rel=0.01)
    group = cal.check_label("llamacpp_4766")
    prefill = training_loso["checks"][("llama.cpp (CUDA)", "prefill speed", group)]
    decode = training_loso["checks"][("llama.cpp (CUDA)", "decode speed", group)]
    assert prefill["rows"] == 3 and decode["rows"] == 2 and decode["worst"] <= 0.25
    for key in ("lcpp-llama7b-q80-4090-pp", "lcpp-llama7b-q40-4090-pp"):
        assert abs(cal.predict(rows[key]) / rows[key].value - 1) <= 0.25
    assert cal.predict(rows["lcpp-llama7b-f16-4090-pp"]) < rows["lcpp-llama7b-f16-4090-pp"].value


def test_selective_recomputation_never_costs_more_than_full():
    """Recomputing the attention scores alone costs at most what recomputing whole layers costs: where the rows would fit
    selective's factor below full's, the fit gives both one factor (between what each set of rows says), and the catalog
    holds it so."""
    n = len(cal.SPEED_PARAMS)
    full, selective = cal.SPEED_PARAMS.index("recompute:full"), cal.SPEED_PARAMS.index("recompute:selective")
    X = np.zeros((4, n))
    X[:2, full] = 1.0
    X[2:, selective] = 1.0
    y = np.log([0.8, 0.8, 0.7, 0.7])
    theta = cal._fit_factors(X, y, np.zeros(n))
    assert theta[selective] == theta[full] and math.log(0.7) < theta[full] < math.log(0.8)
    y = np.log([0.7, 0.7, 0.8, 0.8])  # in the right order: fitted apart
    theta = cal._fit_factors(X, y, np.zeros(n))
    assert theta[selective] == pytest.approx(math.log(0.8), abs=1e-3) and theta[full] == pytest.approx(math.log(0.7), abs=1e-3)
    rows = core.catalog.tables()["recomputes"]
    assert rows.row("selective")["mfu_factor"] >= rows.row("full")["mfu_factor"]
