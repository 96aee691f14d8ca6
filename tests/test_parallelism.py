"""Pipeline, context and expert parallelism, mixture-of-experts training and CPU offload: the formulas against the
papers they come from, against published runs, and through every door (command line, Python, Excel functions, form)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gpu_tco import core
from gpu_tco.core import calibration as cal
from gpu_tco.core.layout import choose

ROOT = Path(__file__).resolve().parents[1]
ROWS = {m.id: m for m in cal.load_measurements()}
GIB = 2 ** 30


# ---------------------------------------------------------------------------
# the pipeline bubble: Narayanan et al. 2021, "Efficient Large-Scale Language Model Training on GPU Clusters Using
# Megatron-LM" (SC21, https://arxiv.org/abs/2104.04473), section 2.2.1: with p stages and m micro-batches the bubble
# takes (p - 1) / m of the ideal step time; section 2.2.2: v model chunks per GPU divide it by v.

@pytest.mark.parametrize("p, m, v", [(4, 8, 1), (8, 64, 1), (16, 32, 4), (2, 1, 1), (8, 16, 2)])
def test_bubble_is_the_papers(p, m, v):
    r = core.evaluate(model="Llama-3-70B", method="full", n_gpus=8 * p, pipeline_parallel=p, pipeline_microbatches=m,
                      pipeline_virtual_stages=v, sharding="zero1", mfu=0.4)
    bubble = r["pipeline_bubble_fraction"]
    assert bubble / (1 - bubble) == pytest.approx((p - 1) / (v * m), rel=1e-12)  # bubble time / ideal time
    # the same job without pipelining (the same GPUs, the same per-GPU efficiency) is faster by exactly the bubble
    # when communication hides behind compute in both
    flat = core.evaluate(model="Llama-3-70B", method="full", n_gpus=8 * p, sharding="zero1", mfu=0.4, own_fabric_gbps_per_gpu=1e5,
                         buy=1)
    piped = core.evaluate(model="Llama-3-70B", method="full", n_gpus=8 * p, pipeline_parallel=p, pipeline_microbatches=m,
                          pipeline_virtual_stages=v, sharding="zero1", mfu=0.4, own_fabric_gbps_per_gpu=1e5, buy=1)
    assert flat["comm_slowdown"] == piped["comm_slowdown"] == 1
    assert piped["train_tokens_per_s"] == pytest.approx(flat["train_tokens_per_s"] * (1 - bubble), rel=1e-12)


def test_automatic_micro_batches_are_eight_per_stage_and_one_without_pipelining():
    r = core.evaluate(pipeline_parallel=4, n_gpus=8, method="full", sharding="zero1")
    assert r["pipeline_microbatches_used"] == 32 and r["pipeline_bubble_fraction"] == pytest.approx(3 / 35)
    default = core.evaluate()
    assert default["pipeline_bubble_fraction"] == 0 and default["pipeline_microbatches_used"] == 1
    # gradient accumulation: the gradients are all-reduced once per optimizer step (ZeRO-1), not per micro-batch
    job = dict(model="Llama-3-8B", method="full", n_gpus=16, sharding="zero1", buy=1)
    one, four = core.evaluate(job), core.evaluate(job, pipeline_microbatches=4)
    assert four["dp_comm_bytes_per_step"] == pytest.approx(one["dp_comm_bytes_per_step"] / 4)


def test_pipeline_stage_holds_its_layers_and_the_first_stage_p_micro_batches():
    """Korthikanti et al. 2022 (https://arxiv.org/abs/2205.05198) section 4.2.3: with 1F1B the first stage keeps
    p micro-batches in flight, so its activations are those of all L layers (L/p layers x p micro-batches)."""
    job = dict(model="Llama-3-70B", method="full", n_gpus=32, sharding="zero1", recompute="none", seq_len=4096)
    one = core.evaluate(job)
    four = core.evaluate(job, pipeline_parallel=4)
    assert four["weights_gib"] == pytest.approx(one["weights_gib"] / 4)
    assert four["optimizer_gib"] == pytest.approx(one["optimizer_gib"])  # ZeRO-1: the shard over N = 32/4 of a quarter
    assert four["activations_gib"] == pytest.approx(one["activations_gib"])
    # fewer micro-batches than stages: only m are in flight
    two = core.evaluate(job, pipeline_parallel=4, pipeline_microbatches=2)
    assert two["activations_gib"] == pytest.approx(one["activations_gib"] / 2)


def test_context_parallel_splits_the_sequence():
    job = dict(model="Llama-3-70B", method="full", n_gpus=16, sharding="zero1", recompute="none", seq_len=32768, tensor_parallel=8)
    one, two = core.evaluate(job), core.evaluate(job, context_parallel=2)
    assert two["activations_gib"] == pytest.approx(one["activations_gib"] / 2)
    assert two["compute_s_per_step"] == pytest.approx(one["compute_s_per_step"] / 2)
    # keys and values go round the ring: 4 x (cp-1)/cp x s x b x KV width x 2 bytes / t per layer
    assert two["cp_comm_bytes_per_step"] == pytest.approx(4 * 0.5 * 32768 * 8 * 128 * 2 / 8 * 80)


def test_expert_parallel_splits_the_experts_only():
    """Megatron-Core MoE: each GPU of an expert-parallel group of EP holds experts / EP; attention, norms, router and
    embeddings stay whole.  With ZeRO-3 every state is sharded over all N GPUs anyway."""
    job = dict(model="Mixtral-8x7B", method="full", n_gpus=8, sharding="zero1", precision="bf16_mixed")
    one, eight = core.evaluate(job), core.evaluate(job, expert_parallel=8)
    expert = 32 * 8 * 3 * 4096 * 14336  # 32 layers x 8 experts x gate, up, down of 4,096 x 14,336
    assert one["routed_expert_share"] == pytest.approx(expert / one["params_total"])
    assert eight["weights_gib"] == pytest.approx((one["params_total"] - expert * 7 / 8) * 2 / GIB)
    assert eight["gradients_gib"] == pytest.approx(eight["weights_gib"])
    assert eight["optimizer_gib"] == pytest.approx(one["optimizer_gib"])  # ZeRO-1 shards the optimizer over all 8
    z3 = dict(job, sharding="zero3")
    assert core.evaluate(z3, expert_parallel=8)["weights_gib"] == pytest.approx(core.evaluate(z3)["weights_gib"])
    # four all-to-alls of tokens x top-2 x hidden per expert layer, 7/8 of them leave the GPU
    assert eight["ep_comm_bytes_per_step"] == pytest.approx(4 * 7 / 8 * 4096 * 2 * 4096 * 2 * 32)
    assert one["ep_comm_bytes_per_step"] == 0
    # a dense model has no experts to split
    assert core.evaluate(model="Llama-3-8B")["expert_parallel_keep"] == 1


# ---------------------------------------------------------------------------
# each regime against a published run (the calibration set; the tolerance of its kind)

@pytest.mark.parametrize("row_id", [
    "nemo-gptoss120b-h100-2511",      # MoE, PP 4 x EP 8 on 64 H100 (Megatron Bridge)
    "automodel-gptoss120b-h100",      # MoE, FSDP x EP 64 across 8 machines (NeMo AutoModel)
    "llama3-405b-8k-8192gpu",         # TP 8 x PP 16 on 8,192 H100 (Llama 3 paper, Table 4)
    "llama3-405b-128k-16384gpu",      # TP 8 x CP 16 x PP 16 on 16,384 H100
    "answerai-70b-qlora-4xh100-speed",  # FSDP + QLoRA on 4 H100 (Answer.AI; its PCIe RTX 4090 rows are checks)
    "tt-70b-full-a100-speed",         # full fine-tune with CPU offload (FSDP) on 8 A100: the CPU optimizer step
    "tt-70b-full-a100-mem",           # ... and the memory it leaves on the GPU
])
def test_a_published_run_of_each_regime_within_tolerance(row_id):
    m = ROWS[row_id]
    assert cal.in_fit(m)
    error = cal.predict(m) / m.value - 1
    assert abs(error) <= cal.TOLERANCE[m.kind], f"{row_id}: {error:+.1%}"


def test_moe_rows_on_cards_without_a_dense_row_are_checks():
    """B200 has no dense row in the set, so its MoE rows do not set that card's MFU; they stay checks of the catalog's
    prior MFU (0.40) x the MoE factor fitted on H100 and GB200.  GB200 has dense rows (NeMo 25.04's FP8 pre-training),
    so its MoE rows are in the fit like the H100's (all-to-all inside the NVLink domain) and within the tolerance.  On
    64 B200 the model is too fast, by less than 90 % (83 % at the last refit): Megatron Bridge's gpt-oss-120b runs 1.46 times the H100 speed on
    a card of 2.27 times the dense peak, so MoE keeps less of Blackwell's peak than of Hopper's, which one factor for
    every GPU does not describe."""
    for row_id in ("nemo-gptoss120b-gb200-2602", "nemo-dsv3-gb200-2511", "nemo-qwen3-235b-gb200-2511"):
        m = ROWS[row_id]
        assert cal.in_fit(m)
        assert abs(cal.predict(m) / m.value - 1) < cal.TOLERANCE["training speed"], row_id
    for row_id in ("nemo-gptoss120b-b200-2511", "nemo-gptoss120b-b200-2602"):
        m = ROWS[row_id]
        assert not cal.in_fit(m)
        assert 0 < cal.predict(m) / m.value - 1 < 0.90, row_id


def test_offload_memory_against_the_published_70b_qlora_run():
    """Answer.AI, "Benchmarking QLoRA+FSDP" (2024-03, https://github.com/AnswerDotAI/fsdp_qlora/blob/main/benchmarks_03_2024.md):
    Llama 2 70B QLoRA with CPU offload on two RTX 4090, batch 2, context 2,048: 14.92 GiB peak reserved per GPU.
    On the GPU stay two gathered units (computed and prefetched), the copies of their shards from the CPU,
    checkpoints, one live layer and the logits.  The estimate is a third low: the run's train.py resets the peak
    statistics after loading, but the allocator keeps the blocks that loading reserved (with low_memory it quantizes
    the bf16 layers on the GPU, several in parallel, before moving them to the CPU), and that cache is part of the
    reserved peak; the model describes training, not loading.  It must not be above the measurement, nor more than
    40 % below it (the allocator terms are fitted on Hugging Face QLoRA runs whose fp32 casts the model now counts, which
    lowers the cache it adds here by a few points)."""
    m = ROWS["answerai-70b-qlora-offload-4090-mem"]
    r = core.evaluate({"buy": 1, **m.inputs})
    layer = r["layer_weight_bytes"]
    # the layer computed and the next unit (the 32,000 x 8,192 output matrix in bf16 is larger than an NF4 layer),
    # plus the halves of two layers copied in from the CPU before the gather
    assert r["vocab_matrix_bytes"] == 32000 * 8192 * 2 > layer
    assert r["offload_buffers_gib"] == pytest.approx((layer + r["vocab_matrix_bytes"] + 2 * layer / 2) / GIB)
    assert r["weights_gib"] == r["gradients_gib"] == r["optimizer_gib"] == 0
    assert -0.40 <= r["reserved_peak_train_gib"] / m.value - 1 < 0
    # the same card and recipe on Llama 2 7B (batch 12): 22.38 GiB measured, about the memory tolerance below it (a check,
    # not fitted: 12.2 % at the 11.8 bytes per logit the fit rounds to, 11.9 % at 11.9)
    small = ROWS["answerai-7b-qlora-offload-4090-mem"]
    assert abs(cal.predict(small) / small.value - 1) <= cal.TOLERANCE["memory"] + 0.005


def test_offload_time_is_pcie_bytes_against_compute_plus_the_cpu_step():
    job = dict(model="Llama-3.1-70B", method="full", gpu="A100-80GB-SXM", n_gpus=8, sharding="zero3", precision="bf16_pure",
               seq_len=2048, micro_batch=2, offload_params=1, buy=1)
    r = core.evaluate(job)
    # weights in twice and gradients out, of each GPU's eighth, at pcie_gb_per_s
    assert r["offload_pcie_bytes_per_step"] == pytest.approx((2 * r["weights_bytes_total"] + r["gradients_bytes_total"]) / 8)
    rate = core.resolve_inputs(job)["cpu_optimizer_params_per_s"]
    assert r["cpu_optimizer_s_per_step"] == pytest.approx(r["params_total"] / 8 / rate)
    busy = r["compute_s_per_step"] * r["step_work_slowdown"]  # the transfers overlap all the GPU's work
    expected = max(1, r["comm_s_per_step"] / busy, r["offload_pcie_s_per_step"] / busy) + r["cpu_optimizer_s_per_step"] / busy
    assert r["comm_slowdown"] == pytest.approx(expected)
    # a slow host link makes the transfers the bottleneck
    slow = core.evaluate(job, pcie_gb_per_s=0.5)
    assert slow["offload_pcie_s_per_step"] > slow["compute_s_per_step"] and slow["train_hours"] > r["train_hours"]


# ---------------------------------------------------------------------------
# bad combinations: one line naming the field, the value and what is allowed

@pytest.mark.parametrize("inputs, message", [
    ({"n_gpus": 8, "pipeline_parallel": 3}, "pipeline_parallel: 3 times tensor_parallel (1) must divide n_gpus (8)"),
    ({"n_gpus": 8, "tensor_parallel": 2, "context_parallel": 3}, "context_parallel: 3 times tensor_parallel x pipeline_parallel (2) must divide n_gpus (8)"),
    ({"n_gpus": 64, "pipeline_parallel": 64, "model": "Llama-3-8B"}, "pipeline_parallel: 64 is more than the model's 32 layers; allowed: 1 to 32"),
    ({"n_gpus": 16, "expert_parallel": 16, "model": "Mixtral-8x7B"}, "expert_parallel: 16 must divide the model's 8 experts"),
    ({"n_gpus": 8, "expert_parallel": 2, "model": "Llama-3-8B"}, "expert_parallel: 2 needs a mixture-of-experts model"),
    ({"n_gpus": 8, "pipeline_parallel": 2, "expert_parallel": 8, "model": "Mixtral-8x7B"},
     "expert_parallel: 8 must divide n_gpus / (tensor_parallel x pipeline_parallel) (4)"),
])
def test_impossible_layouts_are_refused_in_one_line(inputs, message):
    with pytest.raises(core.InputError) as err:
        core.evaluate(inputs)
    assert str(err.value).startswith(message) and "\n" not in str(err.value)


def test_a_sweep_names_the_row_of_a_bad_layout():
    with pytest.raises(core.InputError, match=r"pipeline_parallel \(row 1\): 3 times"):
        core.evaluate(n_gpus=8, pipeline_parallel=[2, 3])


# ---------------------------------------------------------------------------
# the planner tries pipeline (and expert) degrees where they help

def test_planner_pipelines_a_job_that_needs_it_and_leaves_a_small_one_alone():
    job = {"model": "Llama-3.1-405B", "method": "full", "sharding": "zero1", "seq_len": 8192, "tokens": 1e10, "tensor_parallel": 8,
           "framework": "megatron"}
    layouts = choose(job, ["H100-SXM", "B200"], None, 8)
    assert layouts["H100-SXM"]["pipeline_parallel"] > 1
    # with tensor parallelism alone, ZeRO-1 keeps 405B's bf16 weights and gradients whole on each of 8 GPUs: no count fits
    assert core.evaluate(job, gpu="H100-SXM", n_gpus=8)["gpus_needed"] == 0
    result = core.plan(job, gpus=["H100-SXM"], include_buy=False)
    rec = result["recommended"]
    assert rec is not None and rec.pipeline_parallel > 1 and rec.n_gpus % rec.pipeline_parallel == 0
    inputs = core.planner.option_inputs(result["job"], rec)
    assert inputs["pipeline_parallel"] == rec.pipeline_parallel
    assert core.evaluate(inputs)["option_cost_usd"] == pytest.approx(rec.cost_usd)
    # an 8B LoRA job fits one GPU and gains nothing from pipelining
    assert all(lay["pipeline_parallel"] == 1 for lay in choose({"model": "Llama-3-8B", "method": "lora"}, ["H100-SXM"], None, 1).values())
    # a layout the job gives is kept
    assert choose({**job, "pipeline_parallel": 2}, ["H100-SXM"], None, 1) == {}


# ---------------------------------------------------------------------------
# every door: command line, Excel functions, the form

@pytest.mark.slow  # over 0.45 s
def test_command_line_takes_the_layout_flags():
    out = subprocess.run([sys.executable, "-m", "gpu_tco", "estimate", "--model", "Llama-3.1-405B", "--gpu", "H100-SXM",
                          "--n-gpus", "128", "--method", "full", "--sharding", "zero1", "--tensor-parallel", "8",
                          "--pipeline-parallel", "4", "--context-parallel", "2", "--json"],
                         capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    ref = core.evaluate(model="Llama-3.1-405B", gpu="H100-SXM", n_gpus=128, method="full", sharding="zero1",
                        tensor_parallel=8, pipeline_parallel=4, context_parallel=2)
    for name in ("peak_train_gib_per_gpu", "pipeline_bubble_fraction", "cp_comm_bytes_per_step", "train_hours"):
        assert data["quantities"][name] == pytest.approx(ref[name], rel=1e-12), name
    assert data["quantities"]["data_parallel_size"] == 2  # 128 / (8 x 4 x 2)
    bad = subprocess.run([sys.executable, "-m", "gpu_tco", "estimate", "--n-gpus", "8", "--pipeline-parallel", "3"],
                         capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert bad.returncode != 0 and "pipeline_parallel: 3 times tensor_parallel (1) must divide n_gpus (8)" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_excel_functions_take_the_layout():
    from gpu_tco.addin.functions import FUNCTIONS, call
    args = FUNCTIONS["GPU_MEMORY_TRAIN"].args
    values = {"model": "Mixtral-8x7B", "method": "full", "n_gpus": 16, "sharding": "zero1", "pipeline_parallel": 2,
              "expert_parallel": 8}
    got = call("GPU_MEMORY_TRAIN", *[values.get(a) for a in args])
    assert got == pytest.approx(core.evaluate(values)["peak_train_gib_per_gpu"], rel=1e-12)
    bad = call("GPU_MEMORY_TRAIN", *[{**values, "expert_parallel": 3}.get(a) for a in args])
    assert bad.startswith("#INPUT! expert_parallel: 3")
    hours_args = FUNCTIONS["GPU_TRAIN_HOURS"].args
    job = {"model": "Llama-3-70B", "n_gpus": 32, "method": "full", "pipeline_parallel": 4, "pipeline_microbatches": 16}
    assert call("GPU_TRAIN_HOURS", *[job.get(a) for a in hours_args]) == pytest.approx(core.evaluate(job)["train_hours"], rel=1e-12)


def test_the_form_offers_the_layout_fields():
    from gpu_tco.gui import model
    shown = {i.name for _, inputs in model.sections() for i in inputs}
    assert {"pipeline_parallel", "pipeline_microbatches", "context_parallel", "expert_parallel", "moe_train_efficiency",
            "cpu_optimizer_params_per_s", "offload_prefetch_layers"} <= shown
    st = model.FormState()
    assert st.set_text("pipeline_parallel", "4") is None and st.values["pipeline_parallel"] == 4


def test_planner_and_workbook_keep_a_given_layout():
    """A layout the job gives is the planner's constraint: every option's count is a multiple of tensor x pipeline x
    lcm(context, expert) parallel, and a fixed count that the layout does not divide is refused by name."""
    job = {"model": "Mixtral-8x7B", "method": "full", "sharding": "zero1", "tensor_parallel": 2, "pipeline_parallel": 4,
           "context_parallel": 2, "expert_parallel": 4}
    assert core.layout_unit(job) == 32
    result = core.plan(job, gpus=["H100-SXM", "A100-80GB-SXM"])
    counts = [o.n_gpus for o in result["options"] if o.n_gpus]
    assert counts and all(n % 32 == 0 for n in counts)
    assert all(o.pipeline_parallel == 4 and o.expert_parallel == 4 for o in result["options"] if o.n_gpus)  # the job's own
    with pytest.raises(core.InputError, match=r"^context_parallel: 2 times tensor_parallel x pipeline_parallel \(8\) must divide n_gpus \(8\)"):
        core.plan(job, count=8)


def test_load_imbalance_stretches_the_expert_share_of_the_step():
    """Switch Transformer (Fedus et al. 2021, section 2.2): with expert parallelism every GPU waits for the one whose
    experts got the most tokens.  Mixtral 8x7B: 32 layers x top-2 x 3 x 4,096 x 14,336 expert weights per token."""
    job = dict(model="Mixtral-8x7B", method="full", n_gpus=8, expert_parallel=8, sharding="zero1", seq_len=4096, buy=1)
    balanced, skewed = core.evaluate(job), core.evaluate(job, moe_load_imbalance=1.25)
    share = 6 * 32 * 2 * 3 * 4096 * 14336 / balanced["flops_per_token_train"]
    assert balanced["expert_flop_share"] == pytest.approx(share) and balanced["moe_imbalance_stretch"] == 1
    assert skewed["moe_imbalance_stretch"] == pytest.approx(1 + share * 0.25)
    assert skewed["ep_comm_bytes_per_step"] == pytest.approx(balanced["ep_comm_bytes_per_step"] * 1.25)
    assert skewed["compute_s_per_step"] == pytest.approx(balanced["compute_s_per_step"] * (1 + share * 0.25))
    # without expert parallelism the experts of a layer sit on every GPU: nobody waits for another
    assert core.evaluate(job, expert_parallel=1, moe_load_imbalance=1.25)["moe_imbalance_stretch"] == 1


def test_the_answer_says_the_layout_the_planner_chose():
    job = {"model": "Llama-3.1-405B", "method": "full", "sharding": "zero1", "seq_len": 8192, "tokens": 1e10, "tensor_parallel": 8,
           "framework": "megatron"}
    rec = core.recommend(job, gpus=["H100-SXM"], include_buy=False)
    p = rec.option.pipeline_parallel
    assert p > 1 and f"the model is split into {p} pipeline stages " in " ".join(rec.sentences)
    assert "pipeline_parallel" not in rec.text  # an input's name is not an answer's words
    # a layout the job gives is the job's: nothing to say
    given = core.recommend({**job, "pipeline_parallel": 8}, gpus=["H100-SXM"], include_buy=False)
    assert "pipeline stages" not in " ".join(given.sentences)


@pytest.mark.slow  # over 0.45 s
def test_workbook_options_carry_the_planners_layout():
    """The Compare sheet's options are the planner's, each with its pipeline and expert degrees on the Inputs sheet's
    candidate block, so the workbook recalculates the same setup the planner ranked."""
    from openpyxl import load_workbook

    from gpu_tco.workbooks.build import default_options, write_workbook
    from gpu_tco.workbooks.common import LAYOUT_COLS
    job = {"model": "Llama-3.1-405B", "method": "full", "sharding": "zero1", "tensor_parallel": 8, "framework": "megatron"}
    options = default_options(job)
    assert any(o["pipeline_parallel"] > 1 for o in options)
    planned = core.plan(job)["recommended"]
    assert (options[0]["gpu"], options[0]["n_gpus"], options[0]["pipeline_parallel"]) == \
        (planned.gpu, planned.n_gpus, planned.pipeline_parallel)
    import tempfile
    with tempfile.TemporaryDirectory() as folder:
        path = write_workbook(Path(folder) / "book.xlsx", job)
        ws = load_workbook(path)["Options"]
        names = {ws.cell(row=r, column=1).value: r for r in range(1, ws.max_row + 1)}
        assert all(n in names for n in LAYOUT_COLS)
        assert ws.cell(row=names["pipeline_parallel"], column=4).value.startswith("=Inputs!")  # option 2: the planner's pick


def test_what_would_fit_names_pipeline_stages():
    """Llama 3 70B full training with ZeRO-1 keeps whole bf16 weights and gradients on every GPU (280 GB): on 32 H100s
    it does not fit; split into stages, each GPU holds its stage's share, and the cheapest change names them."""
    job = dict(model="Llama-3-70B", method="full", sharding="zero1", n_gpus=32, gpu="H100-SXM", recompute="full",
               framework="megatron")
    assert not core.evaluate(job)["fits_train"]
    fix = core.what_would_fit(job)
    p = fix.changes["pipeline_parallel"]
    assert fix.text == f"{p} pipeline stages" and core.evaluate(job, pipeline_parallel=p)["fits_train"]
    assert not core.evaluate(job, pipeline_parallel=4)["fits_train"]
