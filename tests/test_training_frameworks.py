"""The training framework input: the conventions each framework keeps (optimizer state dtype, master weights, gradient
dtype, QLoRA's fp32 casts, what eager layers keep), LoRA's time from the work it does, and the likely ranges.

Sources (full citations in core/references.py):
- PyTorch, torch.optim.AdamW (2025), https://pytorch.org/docs/stable/generated/torch.optim.AdamW.html: the state tensors are
  created like the parameter (torch.zeros_like), so a bf16 parameter gets bf16 moments; torch/optim/adam.py
  (_multi_tensor_adam, https://github.com/pytorch/pytorch/blob/main/torch/optim/adam.py) takes torch._foreach_sqrt of
  every second moment at once in the foreach implementation (the default).
- Hugging Face, transformers TrainingArguments (2026), https://github.com/huggingface/transformers/blob/main/src/transformers/training_args.py:
  optim defaults to adamw_torch_fused on torch >= 2.8.
- Hugging Face, PEFT prepare_model_for_kbit_training (2025), https://github.com/huggingface/peft/blob/main/src/peft/utils/other.py:
  casts every non-quantized parameter to float32.
- NVIDIA, Megatron-Core distributed optimizer (2025),
  https://github.com/NVIDIA/Megatron-LM/blob/main/docs/source/api-guide/dist_optimizer.md: bf16 weights with fp32
  gradients take 18 bytes per parameter (2 + 4 + fp32 main parameters 4 + Adam 8).
- Rajbhandari et al., ZeRO (2020), https://arxiv.org/abs/1910.02054, section 3.1: 16 bytes per parameter in mixed precision.
- gpu-tco's own measurement with tools/measure/train_measure.py (transformers 5.17, PEFT 0.21, PyTorch 2.11, random
  weights, SDPA, torch.optim.AdamW): Llama-3-8B full fine-tuning in pure bf16 with recomputation at 2,048 tokens peaked at
  74.9 GiB on one H100 SXM; with fp32 weights under bf16 autocast the same ran out of the H200's 139.8 GiB; LoRA (rank 16,
  all linears, recomputation) ran at about the tokens per second of full fine-tuning on the H200.
"""
import csv
import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import cli_batch

from gpu_tco import core
from gpu_tco.core import calibration as cal
from gpu_tco.core.references import REFERENCES, keys_in

ROOT = Path(__file__).resolve().parent.parent
JOB_8B = dict(model="Llama-3-8B", method="full", n_gpus=1, sharding="none", seq_len=2048, micro_batch=1, recompute="full",
              fused_loss=0)


def test_every_framework_row_names_its_sources_and_date():
    rows = list(csv.DictReader(open(ROOT / "core" / "data" / "frameworks.csv", encoding="utf-8")))
    assert {"transformers", "torchtune", "unsloth", "torchtitan", "megatron", "deepspeed"} <= {r["name"] for r in rows}
    for r in rows:
        assert r["as_of"][:4].isdigit() and keys_in(r["source"]), r["name"]
        assert all(k in REFERENCES for k in keys_in(r["source"])), r["name"]


def test_the_default_is_the_hugging_face_stack_and_aliases_reach_it():
    """Axolotl and LLaMA-Factory run the Hugging Face Trainer (their READMEs); torchtune stopped active development
    (2025-07-15): the default is transformers, and the tools built on it resolve to it."""
    assert core.DEFAULTS["framework"] == "transformers"
    for alias in ("axolotl", "LLaMA-Factory", "trl", "peft"):
        assert core.resolve_inputs({"framework": alias})["framework"] == "transformers"
    assert core.resolve_inputs({"framework": "NeMo"})["framework"] == "megatron"
    with pytest.raises(core.InputError, match="framework"):
        core.evaluate(framework="keras")


@pytest.mark.parametrize("framework, precision, optimizer, expected", [
    ("transformers", "bf16_pure", "adamw", 2 + 2 + 4),        # torch.optim: bf16 moments on bf16 weights
    ("torchtune", "bf16_pure", "adamw", 2 + 2 + 4),
    ("transformers", "bf16_mixed", "adamw", 2 + 2 + 4 + 8),   # an fp32 master copy: fp32 moments beside it
    ("deepspeed", "bf16_pure", "adamw", 2 + 2 + 4 + 8),       # ZeRO: always an fp32 copy and fp32 states (16 bytes)
    ("megatron", "bf16_mixed", "adamw", 2 + 4 + 4 + 8),       # Megatron: fp32 main gradients too (18 bytes)
    ("transformers", "bf16_pure", "adamw_8bit", 2 + 2 + 2),   # 8-bit moments whatever the convention
])
def test_bytes_per_parameter_follow_the_framework(framework, precision, optimizer, expected):
    r = core.evaluate(JOB_8B, framework=framework, precision=precision, optimizer=optimizer)
    per_param = (r["weights_bytes_total"] + r["gradients_bytes_total"] + r["optimizer_bytes_total"]) / r["params_total"]
    assert per_param == pytest.approx(expected)


def test_conventions_as_inputs_override_the_framework():
    base = dict(JOB_8B, framework="transformers", precision="bf16_pure")
    assert core.evaluate(base, optimizer_state_dtype="fp32")["optimizer_state_bytes_per_param"] == 8
    assert core.evaluate(base, optimizer_state_dtype="8bit")["optimizer_state_bytes_per_param"] == 2
    assert core.evaluate(base, master_weights="fp32_copy")["master_bytes_per_param"] == 4
    auto = core.evaluate(base, master_weights="fp32_autocast")
    assert (auto["train_weight_bytes_per_param"], auto["grad_bytes_per_param"], auto["optimizer_state_bytes_per_param"]) == (4, 4, 8)


def test_llama3_8b_full_bf16_fits_one_h100_as_measured():
    """gpu-tco's own run: 74.9 GiB peak (torch.cuda.max_memory_allocated, in the foreach AdamW step) on one H100 SXM.
    Before the framework conventions, the estimate counted fp32 moments (94 to 101 GiB) and sent the job to two GPUs."""
    r = core.evaluate(JOB_8B, gpu="H100-SXM", precision="bf16_pure", optimizer="adamw_foreach")
    assert r["allocator_peak_train_gib"] == pytest.approx(74.9, rel=0.03)
    assert r["fits_train"] and r["gpus_needed"] == 1
    # the Hugging Face Trainer's default (fused AdamW) has no whole-model temporary in its step
    assert core.evaluate(JOB_8B, gpu="H100-SXM", precision="bf16_pure")["allocator_peak_train_gib"] < 66


def test_fp32_master_weights_under_autocast_do_not_fit_an_h200():
    """gpu-tco's own run: fp32 weights under bf16 autocast (the Trainer with bf16=True on a model loaded in fp32) ran out
    of the H200's 139.8 GiB; the estimate said 124 GiB and fits before the conventions were modelled."""
    r = core.evaluate(JOB_8B, gpu="H200-SXM", precision="bf16_pure", optimizer="adamw_foreach", master_weights="fp32_autocast")
    assert not r["fits_train"] and r["allocator_peak_train_gib"] > 139.8


def test_qlora_fp32_casts_of_the_peft_recipe():
    """prepare_model_for_kbit_training casts embeddings, output layer and norms to fp32 and the hidden states flow in fp32:
    those weights take 4 bytes, the activations twice the bf16 bytes; torchtune and Unsloth keep them in bf16."""
    job = dict(JOB_8B, method="qlora", gpu="H100-SXM", precision="bf16_pure")
    peft, tune = core.evaluate(job, framework="transformers"), core.evaluate(job, framework="torchtune")
    assert peft["qlora_fp32_casts_on"] == 1 and tune["qlora_fp32_casts_on"] == 0
    non_linear = peft["params_total"] - peft["linear_params"]
    # and PEFT's adapters in fp32 (4 bytes against torchtune's 2)
    assert peft["lora_fp32_adapters_on"] == 1 and tune["lora_fp32_adapters_on"] == 0
    assert peft["weights_bytes_total"] - tune["weights_bytes_total"] == pytest.approx(2 * non_linear + 2 * peft["lora_params"])
    assert peft["act_checkpoint_bytes"] == pytest.approx(2 * tune["act_checkpoint_bytes"])
    assert core.evaluate(job, framework="transformers", qlora_fp32_casts="none")["qlora_fp32_casts_on"] == 0


def test_eager_layers_keep_more_activations():
    """Without recomputation gpu-tco's own runs kept 24 % more activations than the count of what the layers need (fp32
    norm inputs, the SwiGLU intermediates): the transformers row's activation_factor; compiled stacks keep the count."""
    job = dict(JOB_8B, recompute="none", method="full", gpu="H200-SXM", precision="bf16_pure")
    eager, compiled = core.evaluate(job, framework="transformers"), core.evaluate(job, framework="torchtune")
    assert eager["activations_gib"] / compiled["activations_gib"] == pytest.approx(1.24)


def test_peft_adapters_keep_an_fp32_copy_of_their_input():
    """PEFT keeps LoRA adapters in fp32 (get_peft_model(..., autocast_adapter_dtype=True), the default: BaseTuner.
    _cast_adapter_dtype upcasts bf16 and fp16 adapter weights; Hugging Face, PEFT src/peft/tuners/tuners_utils.py, 2026,
    https://github.com/huggingface/peft/blob/main/src/peft/tuners/tuners_utils.py) and each adapted layer casts its input
    to the adapter's dtype before A (LoRA Linear.forward, _cast_input_dtype; src/peft/tuners/lora/layer.py): A keeps that
    fp32 copy for its weight gradient, one per adapted matrix (q, k and v each copy the same input).  gpu-tco's own run
    (tools/measure/results/h200-2026-11-26/train_rows.jsonl: Llama 3.1 8B, LoRA r16 on all linears, no recomputation,
    2,048 tokens, one H200) peaked at 36.46 GiB; without the copies the model said 28.71 (-21 %)."""
    row = next(m for m in cal.load_measurements() if m.id == "own-h200-l31-8b-lora-norc-2048x1-mem")
    assert cal.predict(row) == pytest.approx(row.value, rel=0.03)
    job = dict(JOB_8B, model="Llama-3.1-8B", recompute="none", method="lora", gpu="H200-SXM", precision="bf16_pure",
               lora_rank=16, lora_targets="all")
    names = ("lora_adapter_input_bytes_per_layer", "lora_input_dims_per_layer", "lora_fp32_adapter_inputs_on")
    peft, tune = core.evaluate(job, framework="transformers", outputs=names), core.evaluate(job, framework="torchtune", outputs=names)
    h, q_dim, f = 4096, 4096, 14336
    assert peft["lora_input_dims_per_layer"] == 5 * h + q_dim + f  # q, k, v, gate, up read h; o reads q_dim; down reads f
    # fp32 copies (4 bytes) of every adapted input, less the four 16-bit inputs the layer count already holds
    assert peft["lora_adapter_input_bytes_per_layer"] == 2048 * (4 * (5 * h + q_dim + f) - 2 * (h + q_dim + h + f))
    assert tune["lora_fp32_adapter_inputs_on"] == 0 and tune["lora_adapter_input_bytes_per_layer"] == 0  # adapters in bf16
    # QLoRA through prepare_model_for_kbit_training: the hidden states are fp32 already, nothing is copied
    qlora = core.evaluate(dict(job, method="qlora"), framework="transformers", outputs=names)
    assert qlora["lora_fp32_adapter_inputs_on"] == 0
    assert core.evaluate(dict(job, method="qlora", qlora_fp32_casts="none"), outputs=names)["lora_fp32_adapter_inputs_on"] == 1
    assert core.evaluate(dict(job, method="full"), outputs=names)["lora_adapter_input_bytes_per_layer"] == 0


def test_lora_time_from_its_work():
    """LoRA with PEFT in eager mode ran slower than full fine-tuning on the H200 (gpu-tco's own runs: Llama 3.1 8B at
    2,048 tokens, 5,061 against 5,890 tokens/s, 0.86; the fixed 4/6 of the work made it 1.4x faster).  The adapters' own
    time is its memory traffic (twice a 16-bit adapter's with PEFT's fp32 adapters) and per-operation overheads: fewer
    adapted matrices cost less, bf16 adapters less, fused kernels (Unsloth) less again, and a given MFU already holds them."""
    job = dict(JOB_8B, gpu="H200-SXM", precision="bf16_pure", fused_loss=1)
    full = core.evaluate(job, framework="transformers")
    lora = core.evaluate(job, method="lora", framework="transformers")
    assert lora["train_tokens_per_s"] / full["train_tokens_per_s"] == pytest.approx(0.86, abs=0.1)
    bf16 = core.evaluate(job, method="lora", framework="transformers", lora_adapter_dtype="bf16")
    assert lora["lora_fp32_adapters_on"] and not bf16["lora_fp32_adapters_on"]
    assert bf16["lora_adapter_s_per_step"] < lora["lora_adapter_s_per_step"] < 2 * bf16["lora_adapter_s_per_step"]
    assert lora["lora_slowdown"] > 1.3
    qv = core.evaluate(job, method="lora", framework="transformers", lora_targets="qv")
    assert qv["lora_adapter_s_per_step"] < lora["lora_adapter_s_per_step"] / 3  # 2 of 7 matrices, the narrow ones
    fused = core.evaluate(job, method="lora", framework="unsloth")
    assert fused["lora_slowdown"] < 1.1 < lora["lora_slowdown"]
    assert core.evaluate(job, method="lora", mfu=0.4)["lora_adapter_s_per_step"] == 0
    no_recompute = core.evaluate(job, method="lora", framework="transformers", recompute="none")
    assert no_recompute["lora_adapter_passes"] == 1 < lora["lora_adapter_passes"]


def test_likely_ranges_follow_the_framework_band():
    r = core.evaluate(JOB_8B, gpu="H100-SXM", framework="megatron", tokens=1e9)
    band = core.row_of(core.resolve_inputs({"framework": "megatron"}), "framework")["speed_band_pct"] / 100
    assert r["train_hours_likely_low"] == pytest.approx(r["train_hours"] / (1 + band))
    assert r["train_hours_likely_high"] == pytest.approx(r["train_hours"] * (1 + band))
    assert r["peak_train_gib_likely_low"] < r["peak_train_gib_per_gpu"] < r["peak_train_gib_likely_high"]


def test_the_likely_hours_of_a_long_job_read_as_plain_numbers():
    """Pre-training 8B on a trillion tokens takes thousands of hours: every door's sentence says "5,710 to 7,160
    hours", never "5.71e+03" (three significant digits, thousands separators)."""
    result = core.plan({"model": "Llama-3-8B", "method": "full", "tokens": 1e12})
    rec = result["recommended"]
    words = core.likely_hours_text(rec, result["job"]["framework"])
    low, high = re.match(r"likely ([\d,.]+) to ([\d,.]+) hours", words).groups()
    assert rec.hours_likely_low > 1000 and "e+" not in words and "," in low
    assert float(low.replace(",", "")) == pytest.approx(rec.hours_likely_low, rel=5e-3)
    assert float(high.replace(",", "")) == pytest.approx(rec.hours_likely_high, rel=5e-3)
    assert [core.significant_text(x) for x in (0.0123456, 9.58, 12.04, 99.95, 5710.4)] == ["0.0123", "9.58", "12", "100", "5,710"]
    assert [core.significant_text(x) for x in (1.5e-5, 5.35e-7, float("nan"))] == ["0.000015", "0.000000535", "-"]
    tiny = core.plan({"model": "Llama-3-8B", "method": "full", "tokens": 100})  # a hundred tokens: a fraction of a second
    assert "e-" not in core.likely_hours_text(tiny["recommended"], tiny["job"]["framework"])


def test_bands_are_twice_the_held_out_median_error(training_loso):
    """Each framework's band is twice the larger of the median leave-one-source-out error of its rows and that of its own
    runs held out (or of all rows of the kind when neither has three), at least 10 %: what frameworks.csv holds after
    calibrate --write."""
    loso = training_loso  # cal.leave_one_source_out(), shared (conftest.py)
    bands = cal.bands(loso)
    rows = {r["name"]: r for r in csv.DictReader(open(ROOT / "core" / "data" / "frameworks.csv", encoding="utf-8"))}
    for name, (speed, memory) in bands.items():
        assert (float(rows[name]["speed_band_pct"]), float(rows[name]["memory_band_pct"])) == (speed, memory), name
    own = loso["by_framework"][("megatron", "training speed")]
    assert bands["megatron"][0] == max(10, round(200 * own["median"]))
    # torchtune: the larger of its published rows' held-out error and that of its own runs on one H100 (held out),
    # which are every one faster than modelled and by more: the band covers them
    published = loso["by_framework"][("torchtune", "training speed")]["median"]
    h100 = loso["checks"][("torchtune", "training speed", cal.CHECK_GROUPS["own_torchtune"])]
    assert h100["median"] > published and bands["torchtune"][0] == round(200 * h100["median"])
    # the fastest of those runs (modelled / measured - 1 = low) lies within the range: modelled x (1 + band) >= measured
    assert (1 + h100["low"]) * (1 + bands["torchtune"][0] / 100) >= 1


def test_every_training_row_runs_under_a_framework():
    for m in cal.load_measurements():
        if m.kind in ("training speed", "memory"):
            assert m.inputs.get("framework") in {r["name"] for r in core.catalog.tables()["frameworks"].rows}, m.id


@pytest.mark.slow  # command-line runs in processes of their own
def test_the_command_line_names_the_framework_and_the_likely_range():
    out = subprocess.run([sys.executable, "-m", "gpu_tco", "estimate", "--model", "Llama-3-8B", "--n-gpus", "1",
                          "--framework", "unsloth", "--sharding", "none"], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert "training with unsloth" in out.stdout and "training hours, likely range" in out.stdout
    plan = subprocess.run([sys.executable, "-m", "gpu_tco", "plan", "--model", "Llama-3-8B", "--method", "lora", "--framework",
                           "torchtune", "--gpus", "H100-SXM"], capture_output=True, text=True, cwd=ROOT)
    assert plan.returncode == 0, plan.stderr
    assert "with torchtune" in plan.stdout.splitlines()[0] and "hours with torchtune" in plan.stdout
    bad = subprocess.run([sys.executable, "-m", "gpu_tco", "estimate", "--framework", "keras"], capture_output=True, text=True)
    assert bad.returncode == 2 and "framework" in bad.stderr


def test_the_measuring_script_parses_its_options():
    """tools/measure/train_measure.py needs a GPU to run; its options parse here, without torch."""
    out = subprocess.run([sys.executable, str(ROOT / "tools" / "measure" / "train_measure.py"), "--help"],
                         capture_output=True, text=True)
    assert out.returncode == 0 and "--optimizer" in out.stdout and "--qlora-fp32-casts" in out.stdout


def test_the_torchtune_measuring_script_parses_its_options():
    """tools/measure/torchtune_measure.py needs a GPU and torchtune to run; its options parse here, without torch."""
    out = subprocess.run([sys.executable, str(ROOT / "tools" / "measure" / "torchtune_measure.py"), "--help"],
                         capture_output=True, text=True)
    assert out.returncode == 0 and "--optimizer-in-backward" in out.stdout and "--compile" in out.stdout


def _own_runs_held_out(training_loso, framework: str, rows: int) -> tuple[dict, dict]:
    """gpu-tco's own runs of a framework that nothing is fitted on: they are that many rows of the set, none in the fit,
    all evaluated under the framework, and reported as a check group of their own; (speed, memory) of that group."""
    from gpu_tco.core import calibration as cal
    sources = [s for s, g in cal.OWN_GROUP_OF.items() if g == f"own_{framework}"]
    own = [m for m in cal.load_measurements() if m.source in sources]
    assert len(own) == rows and not any(cal.in_fit(m) for m in own)
    assert all(m.inputs["framework"] == framework for m in own)
    assert not set(sources) & set(training_loso["by_source"])
    group = cal.CHECK_GROUPS[f"own_{framework}"]
    return (training_loso["checks"][(framework, "training speed", group)],
            training_loso["checks"][(framework, "memory", group)])


def test_own_torchtune_rows_check_the_torchtune_factor_held_out(training_loso):
    """gpu-tco's own torchtune 0.6.1 runs on one H100 SXM (tools/measure/results/h100-2026-11-26/, PyTorch 2.11, compiled
    as the README's tables ran): they enter no fit, and they are reported as a check of their own.  Every compiled run
    was faster than the torchtune factor fitted on the README's 2024 tables says (docs/training.md "torchtune on one
    H100"), while the memory model holds them (median within 7 %: LoRA without recomputation keeps 6-11 % more than
    modelled)."""
    speed, memory = _own_runs_held_out(training_loso, "torchtune", rows=24)
    assert speed["rows"] == 12 and speed["high"] < 0
    assert memory["rows"] == 12 and memory["median"] <= 0.07


def test_torchtune_lora_against_full_on_one_h200_sets_its_adapter_costs(training_loso):
    """gpu-tco's own torchtune runs on one H200 (tools/measure/results/h200-2026-11-27/) and, held out, on one H100
    (h100-2026-11-26 and -27): each of Llama 3.1 8B and Llama 3.2 3B in full fine-tuning and LoRA, with and without
    recomputation.  What recomputation costs LoRA against full fine-tuning, as the engine has it, is the measured one
    within 5 % on both GPUs (0.884 and 0.916 on the H200, 0.891 and 0.938 on the H100).  With the matrix products sped
    up until the full fine-tune of each pair is met, the time left for LoRA's adapters sets torchtune's adapter costs
    (12 bytes per unit of width and 7 us per operation) on the H200, where they hold it within 5 %; held out, the H100's
    pairs are within 25 % (the engine's adapter time up to 20 % above what is left)."""
    rows = {m.id: m for m in cal.load_measurements() if m.source in ("gpu_tco_h200_torchtune", "gpu_tco_h100_torchtune")}
    assert not any(cal.in_fit(m) for m in rows.values())
    other = lambda r: r["optimizer_step_s_per_step"] + r["activation_io_s_per_step"] + r["layer_overhead_s_per_step"]  # noqa: E731
    for gpu, adapter_tolerance in (("h200", 0.05), ("h100", 0.25)):
        for model, shape in (("l31-8b", "2048x2"), ("l32-3b", "4096x2")):
            speed = {(method, rc): rows[f"own-{gpu}-tt-{model}-{method}-{rc}-{shape}-adamw-speed"]
                     for method in ("full", "lora") for rc in ("rc", "norc")}
            measured = {method: speed[method, "rc"].value / speed[method, "norc"].value for method in ("full", "lora")}
            modelled = {method: cal.predict(speed[method, "rc"]) / cal.predict(speed[method, "norc"]) for method in ("full", "lora")}
            assert modelled["lora"] / modelled["full"] == pytest.approx(measured["lora"] / measured["full"], rel=0.05), (gpu, model)
            for rc in ("rc", "norc"):
                full, lora = speed["full", rc], speed["lora", rc]
                tokens = full.inputs["seq_len"] * full.inputs["micro_batch"]
                f, lo = cal._evaluate(full), cal._evaluate(lora)
                faster = f["compute_s_per_step"] / (tokens / full.value - other(f))
                adapters = tokens / lora.value - lo["compute_s_per_step"] / faster - other(lo)
                assert lo["lora_adapter_s_per_step"] == pytest.approx(adapters, rel=adapter_tolerance), (gpu, model, rc)
    group = cal.CHECK_GROUPS["own_torchtune_set"]
    assert training_loso["checks"][("torchtune", "training speed", group)]["rows"] == 12
    torchtune = core.catalog.tables()["frameworks"].row("torchtune")
    assert (torchtune["lora_bytes_per_dim"], torchtune["lora_op_overhead_us"]) == (12, 7)


def test_the_loss_follows_the_framework():
    """transformers upcasts the whole batch's logits for the loss (Hugging Face, LlamaForCausalLM) unless Liger's fused
    linear cross-entropy is switched on (fused_loss=1); torchtune's recipes chunk it and Unsloth fuses it, always."""
    job = dict(JOB_8B, method="lora", gpu="H100-SXM", seq_len=8192)
    job.pop("fused_loss")
    hf, liger, tune = (core.evaluate(job, **kw) for kw in ({}, {"fused_loss": 1}, {"framework": "torchtune"}))
    assert hf["fused_loss_on"] == 0 and liger["fused_loss_on"] == 1 and tune["fused_loss_on"] == 1
    vocab = 128256
    per_logit = core.resolve_inputs({})["logits_bytes_per_element"]
    assert hf["logits_gib"] == pytest.approx(8192 * vocab * per_logit / 2**30)
    assert liger["logits_gib"] < hf["logits_gib"] / 10


def test_longest_sequence_is_none_where_the_optimizer_step_alone_does_not_fit():
    """Full fine-tuning of Llama 3.1 8B with fp32 weights under autocast and torch's foreach AdamW cannot run on one
    H200 at any length: fp32 weights, gradients and two moments are 16 bytes x 8.03e9 = 120 GiB, and the foreach step
    adds a whole-model fp32 temporary (30 GiB).  The longest sequence that fits said 7,874 tokens while the fit said
    no: the step's temporary did not count there.  Where it fits, the longest sequence is the edge of the fit."""
    from gpu_tco import core
    base = {"model": "Llama-3.1-8B", "method": "full", "n_gpus": 1, "optimizer": "adamw_foreach", "recompute": "full",
            "seq_len": 2048}
    r = core.evaluate({**base, "gpu": "H200-SXM", "master_weights": "fp32_autocast"})
    assert not r["fits_train"] and r["max_train_seq_len"] == 0
    longest = core.evaluate({**base, "gpu": "H100-SXM", "precision": "bf16_pure"})["max_train_seq_len"]
    assert longest > 2048
    assert core.evaluate({**base, "gpu": "H100-SXM", "precision": "bf16_pure", "seq_len": longest})["fits_train"]
    assert not core.evaluate({**base, "gpu": "H100-SXM", "precision": "bf16_pure", "seq_len": int(longest * 1.05)})["fits_train"]


def test_the_unsloth_measuring_script_parses_its_options():
    """tools/measure/unsloth_measure.py needs a GPU and Unsloth to run; its options parse here, without torch."""
    out = subprocess.run([sys.executable, str(ROOT / "tools" / "measure" / "unsloth_measure.py"), "--help"],
                         capture_output=True, text=True)
    assert out.returncode == 0 and "--recompute" in out.stdout and "adamw_8bit" in out.stdout


def test_own_unsloth_rows_check_unsloth_held_out_and_set_its_band(training_loso):
    """gpu-tco's own Unsloth 2026.10.9 runs on one H100 SXM (tools/measure/results/h100-2026-11-26c/): Unsloth's row of
    frameworks.csv was written before they ran and nothing is set from them, so they are held out.  Memory holds the aim
    for a framework (median 10 %); speed misses the 15 % aim since the shared factors were refitted with IBM's A100 runs
    (17 %, from 14 %: the H100's factor fell from 0.50 to 0.46, and these runs were already faster than modelled).
    Unsloth, with no published speed row, takes its likely range from them (twice their median) rather than from every
    framework's rows."""
    from gpu_tco.core import calibration as cal
    speed, memory = _own_runs_held_out(training_loso, "unsloth", rows=12)
    assert speed["rows"] == 6 and speed["median"] <= 0.18
    assert memory["rows"] == 6 and memory["median"] <= 0.10
    assert ("unsloth", "training speed") not in training_loso["by_framework"]
    band = cal.bands(training_loso)["unsloth"]
    assert band == (max(cal.BAND_FLOOR_PCT, round(200 * speed["median"])), max(cal.BAND_FLOOR_PCT, round(200 * memory["median"])))
    assert band != (max(cal.BAND_FLOOR_PCT, round(200 * training_loso["training speed"]["median"])),
                    max(cal.BAND_FLOOR_PCT, round(200 * training_loso["memory"]["median"])))
    # the catalog carries the band the calibration writes
    from gpu_tco.core import catalog
    row = catalog.tables()["frameworks"].row("unsloth")
    assert (float(row["speed_band_pct"]), float(row["memory_band_pct"])) == band


def test_the_deepspeed_measuring_script_parses_its_options():
    """tools/measure/deepspeed_measure.py needs a GPU and DeepSpeed to run; its options parse here, without either."""
    out = subprocess.run([sys.executable, str(ROOT / "tools" / "measure" / "deepspeed_measure.py"), "--help"],
                         capture_output=True, text=True)
    assert out.returncode == 0 and "--zero-stage" in out.stdout and "--offload-optimizer" in out.stdout


def test_deepspeed_zero_1_and_2_hold_the_gradients_flattened_and_in_fp32_for_the_step():
    """DeepSpeed's ZeRO-1/2 step (DeepSpeedZeroOptimizer.step, deepspeed/runtime/zero/stage_1_and_2.py, v0.19.8)
    flattens the partition's bf16 gradients and converts them to fp32 before the optimizer runs: 6 bytes per parameter
    on top of the 16 of weights, gradients, master weights and moments.  Measured on one H100 (gpu-tco's own run,
    tools/measure/results/deepspeed-2026-11-26/): Llama 3.2 3B under ZeRO-1 and ZeRO-2 peaked at 65.89 GiB
    allocated with FusedAdam and with torch AdamW alike, 22 bytes x 3.21e9 = 65.8 GiB.  The step's copies are per
    partition (divided by the data-parallel ranks) and gone with the optimizer offloaded; ZeRO-3 steps in sub-groups."""
    job = {"model": "Llama-3.2-3B", "method": "full", "gpu": "H100-SXM", "n_gpus": 1, "seq_len": 2048, "micro_batch": 2,
           "precision": "bf16_pure", "recompute": "full", "optimizer": "adamw", "framework": "deepspeed"}
    params = core.evaluate(job)["trainable_params"]
    for sharding in ("zero1", "zero2"):
        r = core.evaluate(job, sharding=sharding)
        assert r["step_transient_gib"] == pytest.approx(6 * params / 2**30)
        assert r["allocator_peak_train_gib"] == pytest.approx(65.89, rel=0.02)  # the measured peak
    offload = core.evaluate(job, sharding="zero2", offload_optimizer=1)  # ZeRO-Offload: gradients leave for the CPU
    assert offload["gradients_gib"] == 0 and offload["allocator_peak_train_gib"] == pytest.approx(13.40, rel=0.06)
    assert offload["cpu_offload_gib_per_machine"] == pytest.approx(16 * params / 2**30)  # fp32 master, moments, grads
    assert core.evaluate(job, sharding="zero2", offload_optimizer=1, framework="megatron")["gradients_gib"] > 0
    eight = core.evaluate(job, sharding="zero2", n_gpus=8)
    assert eight["step_transient_gib"] == pytest.approx(6 * params / 8 / 2**30)
    # ZeRO-1 frees the other ranks' gradients before flattening its own: its step peak is ZeRO-2's
    two = {"model": "Llama-3.1-8B", "n_gpus": 2, "gpu": "H200-SXM", "seq_len": 1024, "micro_batch": 1}
    zero1, zero2 = (core.evaluate(job, **two, sharding=s)["allocator_peak_train_gib"] for s in ("zero1", "zero2"))
    assert zero1 == pytest.approx(zero2)
    # offloaded, each GPU's partition of the fp32 gradients sits in CPU memory, as DeepSpeed pins it, under ZeRO-1 too
    eight_params = core.evaluate(job, model="Llama-3.1-8B")["trainable_params"]
    for s in ("zero1", "zero2"):
        cpu = core.evaluate(job, model="Llama-3.1-8B", n_gpus=8, sharding=s, offload_optimizer=1)["cpu_offload_gib_per_machine"]
        assert cpu == pytest.approx(16 * eight_params / 2**30)
    # no copy where there is no fp32 master to convert for, or where the optimizer steps inside the backward pass
    assert core.evaluate(job, sharding="zero2", master_weights="none")["step_transient_gib"] < 6 * params / 2**30 / 2
    assert core.evaluate(job, sharding="zero2", optimizer_in_backward=1)["step_transient_gib"] < 6 * params / 2**30 / 2
    assert core.evaluate(job, sharding="zero2", offload_optimizer=1)["step_transient_gib"] == 0
    for sharding in ("zero3", "none"):  # ZeRO-3 steps in sub-groups; stage 0's bf16 optimizer keeps fp32 gradients
        assert core.evaluate(job, sharding=sharding)["step_transient_gib"] < 6 * params / 2**30 / 2
    # a framework without the convention keeps torch's: fused AdamW holds the fp32 embedding gradient only
    titan = core.evaluate(job, sharding="zero2", framework="torchtitan")
    assert titan["step_transient_gib"] < 1.5


def test_deepspeed_zero_3_pays_its_parameter_hooks_per_layer_and_micro_batch():
    """DeepSpeed ZeRO-3 gathers and releases each layer's parameters through module hooks.  On one H100 (gpu-tco's own
    runs, tools/measure/results/deepspeed-2026-11-26/), Llama 3.2 1B at 4 x 2,048 tokens ran at 24,619 tokens/s under
    ZeRO-3 against 33,951 under ZeRO-2 without recomputation (5.7 ms per layer per micro-batch more), and 16,636 against
    29,236 with it (13.3 ms): frameworks.csv zero3_layer_overhead_us 5,700 and zero3_recompute_overhead_us 7,500.
    Held out, the 3B run with recomputation (5,276 tokens/s) is estimated within 5 %."""
    job = {"model": "Llama-3.2-1B", "method": "full", "gpu": "H100-SXM", "n_gpus": 1, "seq_len": 2048, "micro_batch": 4,
           "precision": "bf16_pure", "optimizer": "adamw_foreach", "framework": "deepspeed"}
    for recompute, ms in (("none", 5.7), ("full", 13.2)):
        hooks = core.evaluate(job, recompute=recompute, sharding="zero3")["zero3_hooks_s_per_step"]
        assert hooks == pytest.approx(16 * ms / 1000)
        assert core.evaluate(job, recompute=recompute, sharding="zero2")["zero3_hooks_s_per_step"] == 0
    assert core.evaluate(job, recompute="full", sharding="zero3", framework="torchtitan")["zero3_hooks_s_per_step"] == 0
    three = core.evaluate(job, model="Llama-3.2-3B", micro_batch=2, recompute="full", sharding="zero3")
    assert three["train_tokens_per_s"] == pytest.approx(5276, rel=0.05)


def test_deepspeed_jobs_are_planned_under_zero_2_where_it_holds_them_and_zero_3_only_where_it_does_not():
    """Hugging Face's DeepSpeed guide ranks the stages by speed, stage 2 before stage 3, and takes stage 3 only where the
    model does not fit otherwise; with ZeRO-3's hooks counted, a DeepSpeed job that names no sharding is planned so:
    Llama 3.1 8B full fine-tuning on 8 H100s under ZeRO-2 (each GPU keeps the bf16 weights), Llama 3.1 70B under ZeRO-3
    (its 140 GB of weights fit no GPU).  FSDP's frameworks keep full sharding; the workbook's scenario takes the same."""
    from gpu_tco.core import layout
    job = {"model": "Llama-3.1-8B", "method": "full", "framework": "deepspeed", "tokens": 5e8}
    result = core.plan(job, gpus=["H100-SXM"], count=8)
    o = result["options"][0]
    assert o.sharding == "zero2" and o.ok
    assert "ZeRO stage 2" in core.recommend(job, gpus=["H100-SXM"], count=8).text
    zero3 = core.evaluate({**job, "gpu": "H100-SXM", "n_gpus": 8, "sharding": "zero3"})["option_hours"]
    assert o.hours < zero3  # the hooks ZeRO-2 does without
    big = core.plan({**job, "model": "Llama-3.1-70B"}, gpus=["H100-SXM"], count=16)["options"][0]
    assert big.sharding in ("", "zero3")
    assert core.plan({**job, "framework": "transformers"}, gpus=["H100-SXM"], count=8)["options"][0].sharding in ("", "zero3")
    assert core.plan({**job, "sharding": "zero3"}, gpus=["H100-SXM"], count=8)["options"][0].sharding in ("", "zero3")
    scenario = layout.with_planned_sharding({**job, "gpu": "H100-SXM", "n_gpus": 8})
    assert scenario["sharding"] == "zero2"
    # a model one GPU holds whole: plain data parallel, which under DeepSpeed is its stage 0, not PyTorch's DDP
    small = core.recommend({**job, "model": "Llama-3.2-1B"}, gpus=["H100-SXM"], count=8).text
    assert "Plain data parallel (DeepSpeed ZeRO stage 0)" in small and "PyTorch DDP" not in small
    assert layout.with_planned_sharding(job)["sharding"] == "zero2"  # the scenario's GPU and count the defaults


def test_deepspeed_runs_the_hugging_face_model_with_its_peft_and_bitsandbytes_costs():
    """DeepSpeed trains the module it is handed; through the Hugging Face Trainer that is the eager Hugging Face model,
    with PEFT's adapters and bitsandbytes' 4-bit layers for LoRA and QLoRA.  Their speed is transformers' with 16-bit
    adapters: DeepSpeed's bf16 engine casts the whole module, PEFT's fp32 adapters too, so LoRA runs faster under it than
    under the Trainer alone (QLoRA's dequantization is not free under DeepSpeed: it ran as fast as LoRA before); its
    memory is DeepSpeed's (fp32 states)."""
    job = {"model": "Llama-3.1-70B", "gpu": "H100-SXM", "n_gpus": 1, "seq_len": 2048, "sharding": "zero2"}
    for method in ("lora", "qlora"):
        ds = core.evaluate(job, method=method, framework="deepspeed")["train_tokens_per_s"]
        hf = core.evaluate(job, method=method, framework="transformers", lora_adapter_dtype="bf16")["train_tokens_per_s"]
        assert ds == pytest.approx(hf, rel=0.02), method
        assert ds > core.evaluate(job, method=method, framework="transformers")["train_tokens_per_s"], method
    assert core.evaluate(job, method="qlora", framework="deepspeed")["train_tokens_per_s"] < \
        0.7 * core.evaluate(job, method="lora", framework="deepspeed", n_gpus=2)["train_tokens_per_s"]


def test_deepspeed_offloads_parameters_only_under_zero_3_and_the_answer_says_so():
    """A DeepSpeed job that fits only with its parameters in CPU memory is told ZeRO-3 offload (DeepSpeed offloads
    parameters under stage 3 only: ds_config offload_param), not FSDP's."""
    from gpu_tco.core.recommendation import what_would_fit
    job = {"model": "Qwen2.5-14B", "method": "full", "gpu": "RTX-4090", "n_gpus": 8, "sharding": "zero2", "tokens": 5e8}
    fix = what_would_fit({**job, "framework": "deepspeed"})
    assert fix.changes == {"offload_params": 1, "sharding": "zero3"}
    assert "ZeRO-3 offload" in fix.sentence() and "FSDP" not in fix.sentence()
    from gpu_tco.core.recommendation import FIT_CHANGES  # other frameworks: FSDP's CPU offload, under any sharding
    assert ({"offload_params": 1}, "parameters in CPU memory (FSDP CPU offload)") in FIT_CHANGES


@pytest.mark.parametrize("given, field, allowed", [
    ({"pipeline_parallel": 2, "n_gpus": 16}, "pipeline_parallel", "no pipeline schedule"),
    ({"sharding": "zero1", "pipeline_parallel": 2, "n_gpus": 16}, "pipeline_parallel", "framework megatron); allowed: 1"),
    ({"model": "Mixtral-8x7B", "expert_parallel": 8, "n_gpus": 16}, "expert_parallel", "no expert parallelism"),
    ({"sharding": "none", "offload_optimizer": 1, "n_gpus": 8}, "offload_optimizer", "allowed with sharding none: 0"),
    ({"sharding": "zero2", "offload_params": 1}, "offload_params", "allowed with sharding zero2: 0"),
])
def test_settings_deepspeed_refuses_are_refused_with_what_it_allows(given, field, allowed):
    """DeepSpeed as the Hugging Face Trainer runs it has no pipeline schedule and no expert parallelism (its
    PipelineModule and MoE layers need the model rewritten); it offloads the optimizer under a ZeRO stage and parameters
    under ZeRO-3 only (DeepSpeed configuration JSON, zero_optimization.offload_optimizer and offload_param).  Such a job
    was estimated as if it ran (Mixtral 8x7B with 8 expert-parallel GPUs 3.2x faster than without); now the message names
    the field, the value and what is allowed.  Other frameworks keep them (FSDP offloads under any sharding)."""
    job = {"model": "Llama-3.1-70B", "method": "full", "gpu": "H100-SXM", **given}
    with pytest.raises(core.InputError) as err:
        core.evaluate(job, framework="deepspeed")
    assert err.value.field == field and allowed in str(err.value) and "deepspeed" in str(err.value)
    if field != "sharding":  # FSDP offloads under any sharding
        assert core.evaluate(job, framework="torchtitan")["peak_train_gib_per_gpu"] > 0


def test_a_deepspeed_job_that_offloads_is_planned_under_a_zero_stage():
    """A DeepSpeed job that offloads its optimizer and names no sharding ran into the refusal above through the planner,
    which gives plain data parallel to a GPU that holds the model: it now keeps the job's ZeRO stage there, and a
    change that makes a job fit by offloading under DeepSpeed names the stage it needs."""
    from gpu_tco.core.recommendation import what_would_fit
    job = {"model": "Llama-3.2-1B", "method": "full", "framework": "deepspeed", "offload_optimizer": 1, "tokens": 1e8}
    result = core.plan(job, gpus=["H100-SXM", "RTX-4090"])
    assert result["options"] and all(o.get("sharding", "") != "none" for o in result["options"])
    fix = what_would_fit({"model": "Llama-3.1-8B", "method": "full", "framework": "deepspeed", "gpu": "RTX-4090",
                          "n_gpus": 4, "sharding": "none", "tokens": 5e8})
    assert fix.changes == {"fused_loss": 1, "offload_optimizer": 1, "sharding": "zero2"} and "(ZeRO-2 offload)" in fix.text


def test_own_deepspeed_rows_check_deepspeed_held_out(training_loso):
    """gpu-tco's own DeepSpeed 0.19.8 runs on one H100 SXM (tools/measure/results/deepspeed-2026-11-26/): Llama 3.2
    1B and 3B under ZeRO stages 0 to 3.  Nothing is fitted on them: DeepSpeed's row takes the eager Hugging Face model's
    costs from transformers' row (the model DeepSpeed wraps) and its step's copies from DeepSpeed's source.  ZeRO-1 and
    ZeRO-2 are within the aims for a framework (speed 15 %, memory 10 %) row by row, and so is the 3B ZeRO-3 run, whose
    gather and release hooks cost 43 % of its step (the hook cost set from the 1B ZeRO-3 runs, a source of its own that
    is not held out; without it the model was 85 % fast there).  ZeRO-Offload
    (ZeRO-2 with the optimizer in CPU memory, on an H200) holds only the weights and the gradient buckets on the GPU,
    which the model now says (within 5 %); its speed is 30-60 % above the estimate, DeepSpeed's CPU Adam being faster
    than the CPU rate fitted on torchtune's offloaded runs (1.0e9 parameters a second per GPU since the torchtune factor
    rose from 0.77 to 0.89: the same 70B offloaded run leaves the CPU more of its time)."""
    speed, memory = _own_runs_held_out(training_loso, "deepspeed", rows=20)
    assert speed["rows"] == 10 and speed["median"] <= 0.15
    assert memory["rows"] == 10 and memory["median"] <= 0.10 and memory["worst"] <= 0.10
    params = cal.fit()
    for m in cal.load_measurements():
        if m.source == "gpu_tco_deepspeed" and m.inputs["sharding"] in ("zero1", "zero2", "zero3"):
            err = cal.predict_with(m, params) / m.measured - 1
            if m.kind == "memory":
                assert abs(err) <= 0.10, (m.id, err)
            elif not m.inputs.get("offload_optimizer"):
                assert abs(err) <= 0.15, (m.id, err)
            else:  # DeepSpeed's CPU Adam steps faster than the CPU rate fitted on torchtune's offloaded runs
                assert -0.6 < err < -0.3, (m.id, err)
    assert ("deepspeed", "training speed") not in training_loso["by_framework"]


@pytest.mark.slow  # a command-line run in a process of its own
def test_the_mfu_shown_is_model_flops_utilization_as_papers_report_it():
    """`gpu-tco estimate` showed "MFU used 0.78" for QLoRA of Llama 3.1 8B on an RTX 4090 whose throughput is 36 % of the
    dense peak in model FLOPs: 0.78 is the matrix products' calibrated efficiency, before the adapters, dequantization,
    the optimizer step and communication.  The MFU shown is now tokens/s x model FLOPs per token / (GPUs x dense peak)
    (Chowdhery et al., "PaLM: Scaling Language Modeling with Pathways", 2022, appendix B), beside that efficiency."""
    job = {"model": "Llama-3.1-8B", "method": "qlora", "gpu": "RTX-4090", "n_gpus": 1}
    r = core.evaluate(job)
    mfu = r["train_tokens_per_s"] * r["flops_per_token_train"] / (r["train_tflops_per_gpu_peak"] * 1e12)
    assert r["train_mfu_achieved"] == pytest.approx(mfu, rel=1e-12)
    assert r["train_mfu_achieved"] < 0.6 * r["mfu_effective"]  # the step's other work: well below the matmul efficiency
    # a published MFU given as the input is the figure the estimate then comes to (one GPU: no communication)
    given = core.evaluate({**job, "mfu": 0.36})
    assert given["train_mfu_achieved"] == pytest.approx(0.36, rel=1e-9)
    out = subprocess.run([sys.executable, "-m", "gpu_tco", "estimate", "--model", "Llama-3.1-8B", "--method", "qlora", "--gpu",
                          "RTX-4090", "--n-gpus", "1"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    line = next(x for x in out.stdout.splitlines() if x.startswith("MFU (model FLOPs / dense peak)"))
    assert float(line.split()[-1]) == pytest.approx(r["train_mfu_achieved"], abs=0.005)
    assert "MFU used" not in out.stdout


@pytest.mark.slow  # over 0.45 s: command-line runs
def test_packed_short_documents_shorten_the_attention_and_every_door_says_so(tmp_path):
    """Packed short documents with per-document attention masks (torchtune's packed=True through FlexAttention; PyTorch,
    "Sample packing", https://pytorch.org/torchtune/main/basics/packing.html; padding-free packing in transformers 4.44,
    Kundu et al., IBM Research, 2024, https://arxiv.org/abs/2407.09105): each token attends within its own document, so
    the attention term of the model FLOPs, 12 x attention layers x tokens attended x query width, takes the documents'
    mean length in place of the sequence length.  Memory is unchanged, and a length of 0 or of the sequence or more
    changes nothing."""
    job = dict(model="Llama-3.2-3B", gpu="A100-80GB-SXM", n_gpus=1, seq_len=4096, micro_batch=2, method="full", framework="torchtune")
    whole, packed = core.evaluate(job), core.evaluate(job, packed_document_tokens=120)
    attention = lambda r: r["flops_per_token_train"] - 6 * r["params_active"]  # noqa: E731
    assert packed["train_attention_tokens"] == 120 and whole["train_attention_tokens"] == 4096
    assert attention(packed) == pytest.approx(attention(whole) * 120 / 4096, rel=1e-12)
    assert 0.17 < attention(whole) / whole["flops_per_token_train"] < 0.19  # 3B at 4,096 tokens: about 18 % of the work
    assert packed["train_tokens_per_s"] > 1.15 * whole["train_tokens_per_s"]
    assert packed["peak_train_gib_per_gpu"] == whole["peak_train_gib_per_gpu"]
    for same in (0, 4096, 100_000):
        assert core.evaluate(job, packed_document_tokens=same)["flops_per_token_train"] == whole["flops_per_token_train"]
    # eager attention with a block-diagonal mask still computes every pair of the sequence: only FlashAttention's
    # variable-length kernels and FlexAttention's document masks skip the blocks between documents
    eager = dict(job, flash_attention=0)
    assert core.evaluate(eager, packed_document_tokens=120)["flops_per_token_train"] == core.evaluate(eager)["flops_per_token_train"]
    assert core.packed_documents_text({"packed_document_tokens": 4096, "seq_len": 4096}) == ""  # no packing to speak of
    # the doors name it with the job; a value between 0 and 1 is refused with what is allowed
    args = ["--model", "Llama-3.2-3B", "--method", "full", "--packed-document-tokens", "120"]
    ran = cli_batch([((*args, "--workbook", ""), None), (("plan", *args), None), (("estimate", *args), None),
                     (("workbook", *args, "--out", str(tmp_path / "w.xlsx"), "--email-draft", str(tmp_path / "d.eml")), None),
                     (("estimate", "--model", "Llama-3.2-3B", "--packed-document-tokens", "0.5"), None)])
    for r in ran[:3]:
        assert r.returncode == 0 and "packed documents of 120 tokens" in r.stdout, r.stdout + r.stderr
    assert ran[3].returncode == 0 and "packed documents of 120 tokens" in (tmp_path / "d.eml").read_text(encoding="utf-8")
    assert ran[4].returncode == 2 and "packed_document_tokens: 0.5" in ran[4].stderr and "one document per sequence" in ran[4].stderr
    # Excel: GPU_PLAN takes it as its last argument (after framework, so older sheets keep their arguments)
    from gpu_tco.addin.functions import FUNCTIONS, call
    assert FUNCTIONS["GPU_PLAN"].args[-2:] == ("framework", "packed_document_tokens")
    args = ["Llama-3.2-3B", "full", 1e9, None, 8192, None, None, None, 0] + [None] * 8
    hours = [{tuple(row[1:5]): row[5] for row in call("GPU_PLAN", *args, *extra)[1:]} for extra in ((), (120,))]
    one_h100 = ("H100-SXM", 1, "rent", "Nebius H100")
    assert hours[1][one_h100] < 0.85 * hours[0][one_h100]
