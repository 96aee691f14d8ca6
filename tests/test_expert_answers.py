"""Answers an experienced ML infrastructure engineer would sign, asked as a hostile expert user would ask them.

Each test runs a question through the real command line (or core's public API where no door differs) and asserts
the rule the answer must keep, not a fitted number: calibration may move the hours and dollars.
"""
from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import run_main

from gpu_tco import core
from gpu_tco.core import layout

# each test runs the command line or a whole plan (0.2 to 0.8 s): the full suite runs them, the fast part does not
pytestmark = pytest.mark.slow

@functools.cache  # a command run once per worker: several tests read the same answer (each assertion still reads it)
def cli(*args: str) -> subprocess.CompletedProcess:
    """What ``gpu-tco ARGS`` says, run through its entry point in this process (helpers.run_main)."""
    out = run_main(*args)
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr
    return out


def plan_json(*args: str) -> dict:
    return json.loads(cli("plan", *args, "--json", "--all").stdout)


# ---------------------------------------------------------------------------
# pipeline stages: only where the framework runs a pipeline schedule, never for a model that fits one GPU

def test_the_default_framework_is_never_planned_into_pipeline_stages():
    """The Hugging Face Trainer has no pipeline schedule (Hugging Face, "Efficient Training on Multiple GPUs",
    https://huggingface.co/docs/transformers/perf_train_gpu_many: "none of the models supports full-PP"; a
    device_map split runs one GPU at a time): a transformers answer that splits the model into 1F1B stages
    assumes a schedule its framework cannot run."""
    data = plan_json("--method", "lora", "--owned-busy-hours-per-day", "20")
    assert all(o["pipeline_parallel"] == 1 for o in data["options"])
    text = cli("plan", "--method", "lora", "--owned-busy-hours-per-day", "20").stdout
    assert "pipeline stages" not in text and "with transformers" in text
    # the same job on a framework that runs a pipeline schedule may take stages where they help
    assert layout.runs_pipelines({"framework": "megatron"}) and layout.runs_pipelines({"framework": "torchtitan"})
    # DeepSpeed as the Hugging Face Trainer runs it: ZeRO data parallelism, no pipeline (its PipelineModule needs the
    # model rewritten as a list of layers, as Megatron-DeepSpeed does)
    assert not layout.runs_pipelines({"framework": "deepspeed"})
    assert not layout.runs_pipelines({"framework": "transformers"}) and not layout.runs_pipelines({})
    assert layout.choose({"model": "Llama-3-70B", "method": "lora"}, ["RTX-4090"], None, 1) == {}
    assert layout.choose({"model": "Llama-3-70B", "method": "lora", "framework": "megatron"}, ["RTX-4090"], None, 1)


def test_a_model_that_fits_one_gpu_is_not_split_into_stages():
    """TinyLlama 1.1B full fine-tuning fits one RTX 4090: every GPU keeps a whole copy (data parallel); a pipeline
    for it only adds a bubble and sends, whatever framework runs it."""
    text = cli("plan", "--model", "TinyLlama-1.1B", "--method", "full").stdout
    assert "pipeline stages" not in text
    data = plan_json("--model", "TinyLlama-1.1B", "--method", "full")
    assert all(o["pipeline_parallel"] == 1 for o in data["options"])
    for framework in ("megatron", "deepspeed", "torchtitan"):
        job = {"model": "TinyLlama-1.1B", "method": "full", "framework": framework}
        assert core.evaluate({**job, "gpu": "RTX-4090", "n_gpus": 1})["fits_train"]
        chosen = layout.choose(job, ["RTX-4090", "H100-SXM"], None, 1)
        assert all(lay["pipeline_parallel"] == 1 and lay["expert_parallel"] == 1 for lay in chosen.values()), framework


def test_pipeline_stages_run_only_beside_the_sharding_their_framework_allows():
    """Megatron runs its stages beside the distributed optimizer (ZeRO stage 1), as DeepSpeed's pipeline engine refuses
    ZeRO stages 2 and 3 (Microsoft DeepSpeed, deepspeed/runtime/pipe/engine.py: "ZeRO-2 and ZeRO-3 are incompatible with
    pipeline parallelism").  A planned split under it takes that sharding, its figures are that sharding's, and the
    answer says so; a job that names ZeRO-3 itself gets no stages from the planner."""
    job = {"model": "Llama-3.1-70B", "method": "full", "framework": "megatron"}
    assert layout.pipeline_sharding(job) == "zero1" and layout.pipeline_sharding({**job, "sharding": "zero3"}) is None
    assert layout.pipeline_sharding({**job, "framework": "torchtitan"}) == "zero3"  # FSDP2 beside stages
    result = core.plan(job)
    staged = [o for o in result["options"] if o.pipeline_parallel > 1]
    assert staged and all(o.sharding == "zero1" for o in staged)
    o = staged[0]
    inputs = core.planner.option_inputs(result["given"], o)
    assert inputs["sharding"] == "zero1" and inputs["pipeline_parallel"] == o.pipeline_parallel
    assert core.evaluate(inputs)["option_hours"] == pytest.approx(o.hours, rel=1e-12)
    text = core.recommend(job).text
    if core.recommend(job).option.pipeline_parallel > 1:
        assert "ZeRO stage 1" in text and "ZeRO stage 3" not in text and "runs pipeline stages with ZeRO stage 1 at most" in text
    given = core.plan({**job, "sharding": "zero3"})
    assert all(o.pipeline_parallel == 1 for o in given["options"])
    # a catalog value that is no sharding is refused with the column and what is allowed
    row = core.catalog.tables()["frameworks"].row("deepspeed")
    with pytest.raises(core.CatalogError, match="pipeline_max_sharding.*allowed: empty"):
        core.catalog._check_row("frameworks", {**row, "pipeline_max_sharding": "zero4"}, "frameworks.csv", 7)


def test_a_users_own_sharding_is_weighed_by_what_it_shards(tmp_path):
    """A sharding row of the user's own (shardings.csv in the config folder) is compared with a framework's limit by
    what it splits (optimizer states, gradients, weights), as the built-in ones are: a run of the command line with
    it and a framework that limits the sharding beside pipeline stages answers, with no internal error."""
    header = (Path(core.catalog.DATA_DIR) / "shardings.csv").read_text(encoding="utf-8").splitlines()[0]
    (tmp_path / "shardings.csv").write_text(header + "\nhsdp,,1,1,1,Hybrid sharded data parallel,mine\n", encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "gpu_tco", "plan", "--model", "Llama-3.1-70B", "--method", "full",
                          "--framework", "megatron", "--sharding", "hsdp"], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "GPU_TCO_CONFIG_DIR": str(tmp_path)})
    assert out.returncode == 0 and "internal error" not in out.stderr, out.stderr
    assert "Recommended:" in out.stdout
    assert layout.sharding_level("zero1") == 1 and layout.sharding_level("zero3") == 3 and layout.sharding_level("none") == 0


def test_what_would_fit_suggests_stages_only_to_a_framework_that_runs_them():
    job = dict(model="Llama-3-70B", method="full", sharding="zero1", n_gpus=32, gpu="H100-SXM", recompute="full")
    fix = core.what_would_fit(job)
    assert fix is None or "pipeline_parallel" not in fix.changes


# ---------------------------------------------------------------------------
# purchases an engineer would make: consumer cards in one server, a purchase sized by the job

def test_consumer_cards_are_not_bought_as_a_cluster():
    """GeForce cards have no GPUDirect RDMA (NVIDIA, GPUDirect RDMA User Manual, System Requirements: Tesla and Quadro
    GPUs): a cluster of them joins its servers through host memory.  Bought, they are one server at most; the
    default 70B LoRA at 20 busy hours a day once bought 24 RTX 4090s in 3 servers."""
    data = plan_json("--method", "lora", "--owned-busy-hours-per-day", "20")
    rec = data["recommended"]
    assert not (rec["gpu"] == "RTX-4090" and rec["n_gpus"] > 8)
    for o in data["options"]:
        if o["acquire"] == "buy" and o["gpu"] in ("RTX-4090", "RTX-5090", "RTX-3090") and o["n_gpus"] > 8:
            assert not o["ok"] and any(r.startswith("one server at most: ") for r in o["reasons"]), o
    assert any(r.startswith("one server at most: RTX-4090 is a consumer card") for o in data["options"] for r in o["reasons"])


def test_a_rack_is_not_bought_for_a_job_that_fits_a_few_gpus():
    """A GB200 NVL72 is sold as a 72-GPU rack; the 70B LoRA fits on one or two of its GPUs.  Busy hours or not,
    nobody buys a $4.8M rack for it: the purchase is refused as larger than the job needs."""
    data = plan_json("--method", "lora", "--owned-busy-hours-per-day", "20")
    racks = [o for o in data["options"] if o["acquire"] == "buy" and o["gpu"] == "GB200"]
    assert racks and all(not o["ok"] for o in racks)
    assert all(any(r.startswith("larger than the job needs: 72x GB200") for r in o["reasons"]) for o in racks)
    assert data["recommended"]["gpu"] != "GB200"


# ---------------------------------------------------------------------------
# plain data parallel where one GPU holds the model

def test_a_model_that_fits_one_gpu_runs_plain_data_parallel_and_the_answer_says_why():
    """Nobody shards a 1.1B model with ZeRO-3: it fits one GPU, so every GPU keeps a whole copy (DDP, torchrun's and the
    Trainer's default) and only the gradients are exchanged.  The answer names the choice and its reason."""
    text = cli("plan", "--model", "TinyLlama-1.1B", "--method", "full").stdout
    assert "Plain data parallel (PyTorch DDP): the model's weights, gradients and optimizer states fit one GPU" in text
    rec = plan_json("--model", "TinyLlama-1.1B", "--method", "full")["recommended"]
    assert rec["n_gpus"] > 1 and rec["sharding"] == "none"
    # the option's figures are those of DDP: every door evaluates the option with the planner's sharding
    job = {"model": "TinyLlama-1.1B", "method": "full"}
    result = core.plan(job)
    o = result["recommended"]
    inputs = core.planner.option_inputs(result["given"], o)
    assert inputs["sharding"] == "none"
    assert core.evaluate(inputs)["option_hours"] == pytest.approx(o.hours, rel=1e-12)
    # a 70B model does not fit one GPU: its states are sharded, and the answer says so
    lora70 = core.recommend({"model": "Llama-3-70B", "method": "lora"})
    assert lora70.option.sharding in ("", "zero3") and ("One GPU does not hold the model's weights, gradients and optimizer "
                                                        "states with room to spare, so all three are split across the GPUs "
                                                        "(ZeRO stage 3, as FSDP does).") in lora70.text
    assert "sharding zero3" not in lora70.text  # the input's value is not an answer's words
    # under Megatron-Core, ZeRO stage 3 is Megatron-FSDP, not the distributed optimizer its recipes default to: the
    # answer says which one the estimate assumes, and how to ask for the other
    megatron = core.recommend({"model": "Llama-3.1-70B", "method": "full", "framework": "megatron"}, gpus=["B200"])
    assert "Megatron-FSDP, not its default distributed optimizer" in megatron.text
    assert "State sharding zero1" in megatron.text
    # a sharding the job names is the job's: the planner keeps it and says nothing about it
    given = core.recommend({**job, "sharding": "zero3"})
    assert given.option.sharding == "" and "Plain data parallel" not in given.text and "split across" not in given.text


def test_the_main_job_table_and_the_workbook_carry_the_planners_sharding():
    """The main job's table row of the recommendation and the workbook's options state the hours of the planner's
    sharding, so the row, the sentence and the workbook agree."""
    from gpu_tco.workbooks.build import default_options
    job = {"model": "TinyLlama-1.1B", "method": "full"}
    pick = core.worded_recommendations(job, methods=("full",))["full"].option
    rows = core.compare_setups(job, methods=("full",))
    mine = [r for r in rows if r["recommended"]]
    assert pick.sharding == "none" and mine and mine[0]["job_hours"] == pytest.approx(pick.hours, rel=1e-12)
    options = default_options(job)
    assert options[0]["sharding"] == "none"
    assert (options[0]["gpu"], options[0]["n_gpus"]) == (pick.gpu, pick.n_gpus)


# ---------------------------------------------------------------------------
# serving: the batch the plan counts on is the batch the engine's command gives

def _serve_share(job: dict) -> tuple[float, float, dict]:
    result = core.serve_plan(job)
    lead = core.lead_option(result)
    assert lead is not None
    r = core.evaluate(core.serve_option_inputs(job, lead))
    return float(r["serve_memory_share"]), float(r["serve_batch"]), lead


def test_a_serving_plan_fits_the_memory_the_engine_is_given():
    """vLLM takes gpu_memory_utilization (0.9 by default) of the GPU's memory for weights, activations and KV cache
    (vLLM project, Engine arguments, https://docs.vllm.ai/en/latest/configuration/engine_args.html).  Llama 3 70B in FP8
    on one 80 GB H100 once counted on 21 sequences of KV cache in 99.7 % of the memory; `vllm serve` as printed would
    hold about 8.  The plan's memory stays within the share the printed command gives the engine."""
    job = {"task": "serve", "model": "Llama-3-70B", "requests_per_s": 5}
    share, batch, lead = _serve_share(job)
    assert 0 < share <= 0.9 + 1e-9 and batch >= 1
    one_h100 = core.evaluate({**job, "gpu": "H100-SXM", "n_gpus": 1, "weights_dtype": "fp8"})
    assert one_h100["serve_memory_share"] <= 0.9 + 1e-9
    assert one_h100["serve_kv_batch"] < 21
    out = cli("plan", "--task", "serve", "--model", "Llama-3-70B", "--requests-per-s", "5").stdout
    assert "vllm serve " in out and "--gpu-memory-utilization" not in out  # vLLM's default share: nothing to pass
    # a larger share is the user's to give, and the command passes it on
    given = cli("plan", "--task", "serve", "--model", "Llama-3-70B", "--requests-per-s", "5",
                "--gpu-memory-utilization", "0.95").stdout
    vllm = [line for line in given.splitlines() if line.strip().startswith("vllm serve ")]
    sglang = [line for line in given.splitlines() if "sglang.launch_server" in line]
    assert vllm and vllm[0].rstrip().endswith("--gpu-memory-utilization 0.95")
    assert sglang and "--mem-fraction-static 0.95" in sglang[0]
    share95, _, _ = _serve_share({**job, "gpu_memory_utilization": 0.95})
    assert share95 <= 0.95 + 1e-9


def test_each_engine_takes_its_own_share_of_memory():
    """TensorRT-LLM gives the KV cache a share of the memory the weights leave free (kv_cache_free_gpu_memory_fraction),
    vLLM a share of the whole memory: with 68 GiB of weights on an 80 GB GPU, TensorRT-LLM holds more sequences."""
    base = {"task": "serve", "model": "Llama-3-70B", "gpu": "H100-SXM", "n_gpus": 1, "weights_dtype": "fp8"}
    vllm, trt = (core.evaluate({**base, "engine": e}) for e in ("vllm", "trtllm"))
    context_gib = float(core.resolve_inputs({})["cuda_context_gib"])
    assert vllm["serve_usable_gib"] == pytest.approx(vllm["gpu_memory_gib"] * 0.9 - context_gib)
    assert trt["serve_kv_batch"] > vllm["serve_kv_batch"] >= 1
    assert trt["serve_usable_gib"] > vllm["serve_usable_gib"]


# ---------------------------------------------------------------------------
# experts, memory headroom and whole machines

def test_the_default_framework_does_not_spread_experts_over_gpus():
    """The Hugging Face Trainer has no expert-parallel all-to-all: Mixtral under it keeps its experts with the data-parallel
    sharding.  Megatron-Core spreads them (NVIDIA, Megatron-Core MoE package)."""
    data = plan_json("--model", "Mixtral-8x7B", "--method", "lora")
    assert all(o["expert_parallel"] == 1 for o in data["options"])
    assert "experts are spread" not in cli("plan", "--model", "Mixtral-8x7B", "--method", "lora").stdout
    assert layout.runs_expert_parallel({"framework": "megatron"}) and not layout.runs_expert_parallel({})


def test_a_setup_with_room_to_spare_wins_within_the_cost_tolerance():
    """At about the same cost an engineer takes the setup whose memory is not above 90 % of the card: a longer batch or a
    library's workspace does not kill it.  Llama 3.1 405B full fine-tuning on H100s: the cheapest count runs at the
    edge of the memory; a larger one within the tolerance does not."""
    result = core.plan({"model": "Llama-3.1-405B", "method": "full"}, gpus=["H100-SXM"])
    rec = result["recommended"]
    near = [o for o in result["options"] if o.within_tolerance]
    assert any(o.tight for o in near) and any(not o.tight for o in near)
    assert not rec.tight
    text = core.recommend({"model": "Llama-3.1-405B", "method": "full"}, gpus=["H100-SXM"]).text
    assert "leaves less room in memory" in text or "may run out of memory" in text or "cheaper" not in text
    # the rule holds in every plan: a tight recommendation means no setup near its cost has room to spare
    for job in ({"model": "Llama-3-70B", "method": "lora"}, {"model": "Mixtral-8x7B", "method": "full"},
                {"model": "Llama-3-8B", "method": "full"}):
        r = core.plan(job)
        if r["recommended"].tight:
            assert all(o.tight for o in r["options"] if o.within_tolerance), job


def test_a_job_over_several_machines_rents_whole_machines_and_names_their_network():
    """Clouds rent multi-node clusters by the machine: 405B on H100s is never 178 GPUs (22 1/4 machines of 8).  The
    answer names the network that joins the machines, a link someone chose (the offer's)."""
    data = plan_json("--model", "Llama-3.1-405B", "--method", "full")
    for o in data["options"]:
        if o["acquire"] == "rent" and o["machines"] > 1:
            assert (o["n_gpus"] / o["machines"]).is_integer(), o  # machines x GPUs per machine, none rented half
    rec = data["recommended"]
    text = cli("plan", "--model", "Llama-3.1-405B", "--method", "full").stdout
    if rec["machines"] > 1:
        assert f"The {rec['machines']:,.0f} machines are joined by {rec['offer']}'s network:" in text


def test_what_would_fit_proposes_a_setup_that_can_be_had_with_room_to_spare():
    """The main job once said 4 RTX 4090s for the 70B QLoRA "fit with 28 GPUs: 24.0 of 24 GiB per GPU" (no offer rents
    28 consumer cards as one job, and the memory is full) and 2 H100s for the full fine-tune "fit with 19 GPUs: 76.8 of
    80 GiB".  A suggestion is a setup someone can rent or buy, with room in memory where one exists."""
    base = {"model": "Llama-3-70B", "tokens": 1e8, "seq_len": 4096, "recompute": "full"}
    for inputs in ({**base, "method": "qlora", "gpu": "RTX-4090", "n_gpus": 4},
                   {**base, "method": "full", "gpu": "H100-SXM", "n_gpus": 2}):
        fix = core.what_would_fit(inputs)
        assert fix is not None, inputs
        assert fix.peak_gib_per_gpu <= 0.9 * fix.gpu_memory_gib, (inputs, fix.sentence())
        if "n_gpus" in fix.changes:
            sold = core.evaluate({**inputs, **fix.changes, "offer": "auto"})["option_offer_sells"]
            assert sold and fix.changes["n_gpus"] % 8 == 0, fix.sentence()
    main = cli("--workbook", "").stdout
    assert "fits with 28 GPUs" not in main and "24.0 of 24 GiB" not in main


def test_an_api_of_another_model_is_named_as_such_and_never_chosen_for_it():
    """Qwen3 30B-A3B has no API row in the catalog: the comparison price is another model's (gpt-oss 20B, the nearest in
    size: a mixture of experts of about 3 billion active parameters), which is no substitute for serving Qwen.  The
    answer says so and never answers "Use the API" on that price when a setup meets the targets."""
    out = cli("plan", "--task", "serve", "--model", "Qwen3-30B-A3B", "--requests-per-s", "0.2").stdout
    assert "though it serves another model (gpt-oss-20b): no API in the catalog serves Qwen3-30B-A3B" in out
    assert "api_model" not in out and "api_usd_per_mtok" not in out  # the inputs named by their labels, for a person
    assert "Use the API" not in out
    result = core.serve_plan({"task": "serve", "model": "Qwen3-30B-A3B", "requests_per_s": 0.2})
    assert result["api"]["same_model"] is False and result["choice"] in ("rent", "buy")
    # an API serving the model (Llama 3.1 8B for Llama 3 8B: the same architecture) is a substitute
    small = core.serve_plan({"task": "serve", "model": "Llama-3-8B", "requests_per_s": 0.5})
    assert small["api"]["same_model"] is True and small["choice"] == "api"
    # prices typed in are the user's own API for this model
    typed = core.serve_plan({"task": "serve", "model": "Qwen3-30B-A3B", "requests_per_s": 0.2,
                             "api_usd_per_mtok_input": 0.1, "api_usd_per_mtok_output": 0.3})
    assert typed["api"]["same_model"] is True


def test_a_deadline_is_met_with_more_gpus_rather_than_no_answer():
    """The default 70B LoRA due in 2 hours: the planner once tried counts up to 4 x the smallest that fits (3 H100s, so
    at most 8) and answered "No option meets every requirement".  A deadline is what more GPUs are for."""
    data = plan_json("--method", "lora", "--deadline-hours", "2")
    rec = data["recommended"]
    assert rec is not None and rec["hours"] <= 2 and rec["n_gpus"] > 8
    text = cli("plan", "--method", "lora", "--deadline-hours", "2").stdout
    assert "No option meets every requirement" not in text
    if rec["machines"] > 1:
        assert "(the offer the planner rents this setup through)" in text


def test_a_purchase_within_the_tolerance_of_a_rental_is_not_worth_the_capital():
    """Busy 20 hours a day, 8 RTX 4090s bought for the 8B QLoRA once won on a job share 1.5 % below the rental, while
    the same answer said buying would pay back only after 50 months, beyond the 36 of ownership.  Within the cost
    tolerance, renting (no capital at stake) wins."""
    data = plan_json("--model", "Llama-3-8B", "--method", "qlora", "--owned-busy-hours-per-day", "20")
    rec = data["recommended"]
    near = [o for o in data["options"] if o["within_tolerance"]]
    if any(o["acquire"] == "rent" and not o["tight"] for o in near):
        assert rec["acquire"] == "rent", rec


def test_bought_geforce_cards_carry_the_license_caveat():
    """NVIDIA's GeForce driver license (section 2.1.3, "No Datacenter Deployment") excludes the colocation the cost of
    owning assumes: a purchase of GeForce cards says so."""
    job = {"model": "Llama-3-8B", "method": "qlora", "owned_busy_hours_per_day": 20}
    result = core.plan(job, gpus=["RTX-4090"], include_buy=True)
    buy = next(o for o in result["options"] if o.ok and o.acquire == "buy")
    words = core.compose_recommendation({**result, "recommended": buy}).text
    assert "RTX-4090 is a GeForce card: NVIDIA's GeForce driver license excludes datacenter deployment" in words
    h100 = core.plan(job, gpus=["H100-SXM"], include_buy=True)
    buy = next(o for o in h100["options"] if o.ok and o.acquire == "buy")
    assert "GeForce" not in core.compose_recommendation({**h100, "recommended": buy}).text


def test_a_bought_geforce_serving_fleet_carries_the_license_caveat():
    """Eight RTX 5090s in a server serving Llama 3 8B around the clock: NVIDIA's GeForce driver license excludes
    datacenter deployment, so the answer says where such a fleet may run."""
    out = cli("plan", "--task", "serve", "--model", "Llama-3-8B", "--requests-per-s", "50",
              "--owned-busy-hours-per-day", "24").stdout
    result = core.serve_plan({"task": "serve", "model": "Llama-3-8B", "requests_per_s": 50, "owned_busy_hours_per_day": 24})
    lead = core.lead_option(result)
    if lead is not None and lead.acquire == "buy" and lead.gpu.startswith("RTX-"):
        assert f"{lead.gpu} is a GeForce card: NVIDIA's GeForce driver license excludes datacenter deployment" in out
    h100 = core.serve_plan({"task": "serve", "model": "Llama-3-8B", "requests_per_s": 50, "owned_busy_hours_per_day": 24},
                           gpus=["H100-SXM"])
    assert "GeForce" not in h100["recommendation"]
    geforce = core.serve_plan({"task": "serve", "model": "Llama-3-8B", "requests_per_s": 50, "owned_busy_hours_per_day": 24},
                              gpus=["RTX-4090"])
    if geforce["best_buy"] is not None:
        assert "RTX-4090 is a GeForce card" in core.serve_option_notes(geforce["best_buy"], geforce["inputs"])


# ---------------------------------------------------------------------------
# a price typed for one GPU is never silently given to another

def test_a_purchase_price_is_the_price_of_the_gpu_planned_never_of_a_hidden_default():
    """`gpu-tco plan --purchase-usd-per-gpu 2000` ranking every GPU priced the H100 SXM (the GPU input's default, which
    plan does not even offer) at $2,000 and recommended buying H100s; the RTX 4090 the user priced stayed at its
    catalog price.  With several GPU types the price is refused in one line naming it; with one GPU planned, the price
    is that GPU's."""
    job = ("--model", "Llama-3.1-8B", "--method", "qlora", "--owned-busy-hours-per-day", "22", "--purchase-usd-per-gpu", "2000")
    refused = subprocess.run([sys.executable, "-m", "gpu_tco", "plan", *job, "--gpus", "RTX-4090,H100-SXM"],
                             capture_output=True, text=True, timeout=300)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr, refused.stderr
    (line,) = refused.stderr.strip().splitlines()
    assert "purchase_usd_per_gpu: 2000 is the price of one GPU type, and the plan weighs 2" in line, line
    with pytest.raises(core.InputError, match="purchase_usd_per_gpu"):
        core.plan({"model": "Llama-3.1-8B", "purchase_usd_per_gpu": 2000})  # every GPU, no GPU named for the price
    answer = cli("plan", *job, "--gpus", "RTX-4090").stdout
    rec = plan_json(*job, "--gpus", "RTX-4090")["recommended"]
    assert rec["gpu"] == "RTX-4090"
    # the recommendation's purchase (or its buying alternative) costs what the typed price makes it, not the catalog's
    capital = {p: core.evaluate({"model": "Llama-3.1-8B", "method": "qlora", "gpu": "RTX-4090", "n_gpus": rec["n_gpus"], "buy": 1,
                                 "purchase_usd_per_gpu": p}, outputs=["own_capital_usd"])["own_capital_usd"] for p in (2000, 0)}
    assert capital[2000] != capital[0]
    assert f"${capital[2000]:,.0f} of capital" in answer and f"${capital[0]:,.0f} of capital" not in answer, answer


def test_a_plan_nothing_satisfies_names_what_comes_nearest():
    """`gpu-tco plan --budget-usd 50` said "No option meets every requirement; see the reasons below" and showed no
    reason; a GPU no offer rents said "0 of 0 options".  The answer names the cheapest option the budget alone rules out
    (with the budget that takes it), the fastest the deadline alone rules out, or why there is no option at all."""
    over = core.plan({"method": "lora", "budget_usd": 50})
    assert over["recommended"] is None
    (cheapest,) = core.nearest_options(over)
    alone = [o for o in over["options"] if o.reasons and all(r.startswith("over budget:") for r in o.reasons)]
    best = min(alone, key=lambda o: o.outlay_usd)
    assert cheapest.startswith("The cheapest option the budget alone rules out: " + core.option_text(best))
    again = core.plan({"method": "lora", "budget_usd": float(best.outlay_usd) + 1})
    assert again["recommended"] is not None  # the budget named takes it
    slow = core.plan({"deadline_hours": 0.5})
    (fastest,) = core.nearest_options(slow)
    quick = min((o for o in slow["options"] if o.reasons and all(r.startswith("too slow:") for r in o.reasons)), key=lambda o: o.hours)
    assert fastest.startswith("The fastest option the deadline alone rules out: " + core.option_text(quick))
    assert core.plan({"deadline_hours": quick.hours * 1.01})["recommended"] is not None
    text = cli("plan", "--gpus", "H800-SXM").stdout
    assert "No option to weigh: no rental offer sells the GPUs chosen" in text and "Rank buying for a one-off job" in text, text
    assert "see the reasons below" not in cli("plan", "--method", "lora", "--budget-usd", "50").stdout
    # the form's headline and the e-mail draft say the same
    from gpu_tco.gui import model as form_model
    from gpu_tco.workbooks.email_draft import draft_text
    state = form_model.FormState()
    state.set_text("method", "lora")
    state.set_text("budget_usd", "50")
    assert cheapest in form_model.compute(state)["headline"]
    assert cheapest in draft_text({"method": "lora", "budget_usd": 50})[1]


def test_each_launch_command_carries_its_own_assumptions():
    """The serving answer listed `trtllm-serve` for an FP8 plan with vLLM's note only: TensorRT-LLM does not quantize a
    16-bit checkpoint on load, so its line must say it reads an FP8 checkpoint (NVIDIA, TensorRT-LLM, "trtllm-serve",
    https://nvidia.github.io/TensorRT-LLM/commands/trtllm-serve.html; quantized checkpoints from TensorRT Model Optimizer)."""
    out = cli("plan", "--task", "serve").stdout.splitlines()
    start = out.index("Start one replica with:")
    trt = next(i for i in range(start, len(out)) if out[i].strip().startswith("trtllm-serve"))
    assert "--quantization fp8" in out[start + 1]  # the default plan serves FP8 weights (vLLM quantizes on load)
    assert "FP8 checkpoint" in out[trt + 1], out[trt:trt + 2]


def test_the_main_table_says_which_rows_run_another_sharding_than_its_heading():
    """The main job's heading names the job's sharding (zero3) while a recommended row runs the planner's plain data
    parallel: 65.6 GiB per GPU beside 28.1 GiB for the same model and method read as a contradiction.  The rows carry
    their sharding and the table says which run another."""
    rows = json.loads(cli("--json", "--workbook", "").stdout)["rows"]
    text = cli("--workbook", "").stdout
    heading = text.splitlines()[0]
    other = [r for r in rows if f", {r['sharding']}," not in heading]
    assert other, "the default job recommends a setup the planner runs without sharding"
    for r in other:
        line = next(x for x in text.splitlines() if f"{r['n_gpus']}x {r['gpu']} {r['method']}" in x and "planner's choice" in x)
        assert ("plain data parallel" in line) == (r["sharding"] == "none"), line


def test_a_long_job_is_planned_to_its_deadline_and_a_months_long_run_says_so():
    """Pre-training Llama 3.1 8B on a trillion tokens within 30 days needs about 128 H100s (6 x 8e9 x 1e12 FLOPs at
    about 40 % of 989 TFLOPS is some 34,000 GPU-hours); the planner stopped doubling at 64 GPUs and answered that no
    option meets the deadline.  Without a deadline the cheapest answer runs for most of a year on 8 GPUs, and says so."""
    job = {"model": "Llama-3.1-8B", "method": "full", "tokens": 1e12}
    timed = core.plan({**job, "deadline_hours": 720})
    rec = timed["recommended"]
    assert rec is not None and rec.hours <= 720 and rec.n_gpus >= 128
    slow = core.plan(job)
    assert slow["recommended"].hours > 30 * 24
    text = core.compose_recommendation(slow).text
    assert f"It runs {slow['recommended'].hours / 24:,.0f} days on {slow['recommended'].n_gpus} GPUs" in text
    assert "It runs" not in core.compose_recommendation(timed).text


# ---------------------------------------------------------------------------
# CPU offload: the offloaded states must fit the machines' CPU memory

def test_offloaded_states_must_fit_the_machines_cpu_memory():
    """Offloading the states of a 70B full fine-tune to CPU memory needs about 1 TB per machine; a 4-GPU RTX 4090 box
    carries a few hundred GB.  Such a setup does not fit, and the answer says why in CPU memory, not GPU memory.  The
    default CPU memory is 2 x the GPU's memory per GPU, the lower end of cloud GPU machines (Amazon Web Services,
    "Amazon EC2 P4 instances", https://aws.amazon.com/ec2/instance-types/p4/: p4de.24xlarge, 1,152 GiB for 8 A100 80GB;
    "Amazon EC2 P5 instances", https://aws.amazon.com/ec2/instance-types/p5/: p5.48xlarge, 2,048 GiB for 8 H100)."""
    job = {"model": "Llama-3-70B", "gpu": "RTX-4090", "n_gpus": 4, "method": "full", "offload_params": 1}
    r = core.evaluate(job, outputs=("fits_train", "fits_host_memory", "cpu_offload_gib_per_machine",
                                    "host_memory_gib_per_machine", "peak_train_gib_per_gpu", "fit_limit_gib"))
    assert r["peak_train_gib_per_gpu"] <= r["fit_limit_gib"]  # the GPUs hold their share ...
    assert r["cpu_offload_gib_per_machine"] > 0.8 * r["host_memory_gib_per_machine"] == pytest.approx(0.8 * 4 * 2 * 24)
    assert not r["fits_host_memory"] and not r["fits_train"]  # ... the machine's CPU memory does not
    out = cli("estimate", "--model", "Llama-3-70B", "--gpu", "RTX-4090", "--n-gpus", "4", "--method", "full", "--offload-params", "1")
    assert "offloaded states need 1,0" in out.stdout and "GiB of CPU memory per machine > 154 GiB" in out.stdout
    # a machine with the CPU memory says so: 512 GiB per GPU
    assert core.evaluate({**job, "host_memory_gib_per_gpu": 512}, outputs=("fits_train",))["fits_train"]
    # no suggestion of the main job offloads more than its machines hold
    text = cli("--workbook", "").stdout
    for line in (x for x in text.splitlines() if "of CPU memory per machine" in x):
        setup = line.split(" does not fit")[0]  # "4x RTX-4090 full"
        count, gpu = setup.split()[0].rstrip("x"), setup.split()[1]
        need = float(line.split(" GiB of CPU memory per machine")[0].rsplit("with ", 1)[1].replace(",", ""))
        memory = core.evaluate({"gpu": gpu}, outputs=("gpu_memory_gib",))["gpu_memory_gib"]
        assert need <= 0.8 * 2 * memory * min(int(count), 8), line


def test_a_setup_that_may_run_out_of_memory_is_recommended_only_when_nothing_safer_is_acceptable(tmp_path):
    """Llama 3.1 405B QLoRA on 8 A100 80GB is estimated at 78.9 GiB per GPU, likely up to 86.8 (the framework's memory
    band, from its measured runs held out of the fit): past the 80 GiB.  An engineer does not plan a job on a setup that
    probably runs out of memory while another one is acceptable, whatever it saves: the answer rents the cheapest setup
    whose likely peak fits, and says what the cheaper one would save and risk.  Where nothing else is acceptable (a
    budget only the risky setup meets), it is recommended, with its likely range and the warning right after the price."""
    rec = core.recommend({"model": "Llama-3.1-405B", "method": "qlora"})
    assert not rec.option.may_exceed
    cheaper = min((o for o in rec.plan["options"] if o.ok and o.within_tolerance), key=lambda o: o.cost_usd)
    assert cheaper.may_exceed and cheaper.cost_usd < rec.option.cost_usd
    r = core.evaluate(core.option_inputs(rec.plan["given"], cheaper, rec.plan["price_gpu"]),
                      outputs=("peak_train_gib_likely_high", "gpu_memory_gib"))
    assert r["peak_train_gib_likely_high"] > r["gpu_memory_gib"]
    assert (f"(${cheaper.cost_usd:,.0f}, {cheaper.n_gpus:,}x {cheaper.gpu}) may run out of memory: its estimated "
            f"peak, {cheaper.peak_gib_per_gpu:.1f} GiB per GPU, is likely up to {float(r['peak_train_gib_likely_high']):.1f} GiB") in rec.text
    only = core.recommend({"model": "Llama-3.1-405B", "method": "qlora", "budget_usd": 400})
    o = only.option
    assert o.may_exceed and o.tight and o.gpu == cheaper.gpu and o.n_gpus == cheaper.n_gpus
    text = only.text
    assert f"(likely up to {float(r['peak_train_gib_likely_high']):.1f} GiB)" in text
    assert "may run out of memory" in text and "No acceptable setup has more room." in text
    assert only.sentences[1].startswith("Memory is tight")  # the risk right after the price it buys
    # the workbook's Start sheet states the same risk in core's words beside its live answer
    from openpyxl import load_workbook

    from gpu_tco.workbooks.build import write_workbook
    write_workbook(tmp_path / "w.xlsx", {"model": "Llama-3.1-405B", "method": "qlora", "budget_usd": 400})
    assert load_workbook(tmp_path / "w.xlsx")["Start"]["A10"].value == f"When this file was generated, gpu-tco warned: {only.sentences[1]}"


def test_deepspeed_full_fine_tuning_of_deepseek_v3_is_not_a_thousand_machines_at_the_edge_of_memory():
    """DeepSpeed under the Hugging Face Trainer has no expert parallelism: each ZeRO-3 rank gathers a whole mixture-of-
    experts layer, about 79 GiB per GPU however many GPUs share the states.  On 80 GB H100s that fits only at the edge
    (8,136 GPUs, 1,017 machines, for minutes, likely up to 88 GiB), and its 6-minute start on each of 8,136 GPUs costs
    more than the job's work: it is no longer the cheapest.  The plan rents H200s whose likely peak fits, and the
    cheaper setup whose likely peak does not (176 H200s) is named with its risk."""
    rec = core.recommend({"model": "DeepSeek-V3", "method": "full", "framework": "deepspeed", "tokens": 1e8})
    o = rec.option
    assert not o.may_exceed and not o.tight and o.gpu != "H100-SXM" and o.machines <= 64
    assert "may run out of memory" in rec.text and f"{o.gpu}) may run out of memory" in rec.text
    edge = min((x for x in rec.plan["options"] if x.ok and x.gpu == "H100-SXM"), key=lambda x: x.cost_usd)
    assert edge.machines > 1000 and edge.may_exceed and edge.cost_usd > 1.5 * o.cost_usd
    # the rule in every plan of the ranking jobs: a recommendation that may run out of memory means nothing acceptable
    # keeps its likely peak within the memory
    from test_ranking import JOBS
    for job in JOBS:
        r = core.plan(job)
        if r["recommended"] is not None and r["recommended"].may_exceed:
            assert all(x.may_exceed for x in r["options"] if x.ok), job


def test_an_offloading_answer_says_how_much_cpu_memory_each_machine_needs():
    """A setup that fits only with its states in CPU memory needs machines with that memory: the answer says where the
    states live, how much they take per machine and the least CPU memory each machine needs (they take at most 80 %
    of it), instead of saying the states are split across the GPUs."""
    from gpu_tco.core.formulas import HOST_MEMORY_USABLE
    rec = core.recommend({"model": "Llama-3-70B", "method": "lora", "offload_params": 1}, gpus=["RTX-4090"])
    need = core.evaluate(core.option_inputs(rec.plan["given"], rec.option, rec.plan["price_gpu"]),
                         outputs=("cpu_offload_gib_per_machine",))["cpu_offload_gib_per_machine"]
    assert f"{float(need):,.0f} GiB per machine" in rec.text
    assert f"each machine needs at least {float(need) / HOST_MEMORY_USABLE:,.0f} GiB of CPU memory" in rec.text
    assert "split across the GPUs" not in rec.text and "live in CPU memory" in rec.text


def test_unsharded_states_offloaded_take_a_copy_per_gpu_in_cpu_memory():
    """Without sharding every data-parallel rank keeps the whole optimizer state; offloaded, each rank's copy sits in
    its machine's CPU memory (DeepSpeed, "ZeRO-Offload", https://www.deepspeed.ai/tutorials/zero-offload/, offloads the
    partitions of ZeRO stages 1-3)."""
    job = {"model": "Llama-3-8B", "gpu": "L40S", "n_gpus": 8, "method": "full", "offload_optimizer": 1}
    sharded, whole = (core.evaluate({**job, "sharding": s}, outputs=("cpu_offload_gib_per_machine", "fits_host_memory"))
                      for s in ("zero1", "none"))
    assert whole["cpu_offload_gib_per_machine"] == pytest.approx(8 * sharded["cpu_offload_gib_per_machine"])
    assert sharded["fits_host_memory"] and not whole["fits_host_memory"]


def test_an_fp8_serving_command_names_an_fp8_checkpoint_where_the_16_bit_one_does_not_fit():
    """vLLM's online FP8 quantization loads the model at its original precision before quantizing it (vLLM project,
    "FP8 W8A8", https://docs.vllm.ai/en/latest/features/quantization/fp8.html): Mixtral 8x7B's 16-bit weights (87 GiB)
    cannot be loaded on one 80 GB H100 to be quantized, so the command names an FP8 checkpoint; Llama 3.1 70B on two
    H100s can, so its command quantizes the 16-bit release as it loads."""
    for model, n, online in (("Mixtral-8x7B", 1, False), ("Llama-3.1-70B", 2, True)):
        job = {"model": model, "gpu": "H100-SXM", "n_gpus": n, "weights_dtype": "fp8", "engine": "vllm", "max_num_seqs": 8}
        sixteen = core.evaluate({**job, "weights_dtype": "bf16"}, outputs=("infer_weights_gib", "gpu_memory_gib"))
        assert (sixteen["infer_weights_gib"] <= 0.9 * sixteen["gpu_memory_gib"]) == online
        cmd = core.launch_command(job)
        assert ("--quantization fp8" in cmd["command"]) == online
        assert ("FP8_CHECKPOINT" in cmd["command"]) == (not online)
        assert online or "an FP8 checkpoint of mistralai/Mixtral-8x7B-Instruct-v0.1" in cmd["note"]


def test_no_tensorrt_llm_command_for_a_gpu_it_does_not_run_on():
    """TensorRT-LLM runs on NVIDIA GPUs only (NVIDIA, "TensorRT-LLM", https://nvidia.github.io/TensorRT-LLM/): a setup
    of AMD MI300X gets the vLLM and SGLang commands, an H100 setup all three."""
    amd = core.serve_plan({"model": "Llama-3-8B", "requests_per_s": 1}, gpus=["MI300X"])
    nvidia = core.serve_plan({"model": "Llama-3-8B", "requests_per_s": 1}, gpus=["H100-SXM"])
    assert [c["engine"] for c in amd["launch"]] == ["vllm", "sglang"]
    assert [c["engine"] for c in nvidia["launch"]] == ["vllm", "sglang", "trtllm"]


def test_with_the_budget_and_the_deadline_ruling_everything_out_the_answer_names_the_cheapest_of_those():
    """Nothing meets a 3-minute deadline and a $20 budget: the answer names the cheapest option only those two rule out,
    with the budget and deadline that take it, and the form's key figures are that option's."""
    result = core.plan({"model": "Llama-3-70B", "method": "lora", "deadline_hours": 0.05, "budget_usd": 20})
    assert result["recommended"] is None
    named = core.nearest_option(result)
    assert named is not None and set(r.split(":")[0] for r in named.reasons) <= {"over budget", "too slow"}
    cheapest = min((o for o in result["options"] if o.reasons and all(r.startswith(("over budget:", "too slow:")) for r in o.reasons)),
                   key=lambda o: o.outlay_usd)
    assert named.outlay_usd == cheapest.outlay_usd
    sentence = core.nearest_options(result)[0]
    assert sentence.startswith("The cheapest option only the budget and the deadline rule out: " + core.option_text(named))


def test_a_model_released_in_a_low_bit_format_is_served_in_it():
    """gpt-oss-120b is released with its experts in MXFP4 and runs on one 80 GB GPU (OpenAI, "gpt-oss-120b & gpt-oss-20b
    Model Card", 2025, https://arxiv.org/abs/2508.10925); DeepSeek-V3 is released in FP8 (DeepSeek-AI, "DeepSeek-V3
    Technical Report", 2024, https://arxiv.org/abs/2412.19437).  The serving plan serves each in its release format,
    whose accuracy is the published one (not refused as below 8 bits), and the command starts the release checkpoint
    without a quantization flag.  A checkpoint whose name carries its format ("-NVFP4") is served in that format."""
    result = core.serve_plan({"model": "gpt-oss-120b"}, gpus=["H100-SXM"])  # 10 requests/s: renting wins
    rec = result["recommended"]
    assert rec is not None and rec.weights_dtype == "mxfp4" and rec.n_gpus == 1
    assert "the format the model was released in" in result["recommendation"]
    vllm = result["launch"][0]["command"]
    assert vllm.startswith("vllm serve openai/gpt-oss-120b ") and "--quantization" not in vllm
    deepseek = core.launch_command({"model": "DeepSeek-V3", "gpu": "H200-SXM", "n_gpus": 8, "engine": "vllm", "max_num_seqs": 8})
    assert deepseek["command"].startswith("vllm serve deepseek-ai/DeepSeek-V3 ") and "FP8_CHECKPOINT" not in deepseek["command"]
    assert "--quantization" not in deepseek["command"] and "as the model was released" in deepseek["note"]
    named = core.serve_plan({"model": "meta-llama/Llama-3.3-70B-Instruct-NVFP4"}, gpus=["B200"])
    assert named["recommended"] is not None and named["recommended"].weights_dtype == "nvfp4"
    assert "weights in nvfp4" in named["recommendation"] and "accuracy" in named["recommendation"]  # its published cost


def test_an_fp8_command_starts_the_publishers_fp8_release_where_there_is_one():
    """Meta publishes Llama 3.1 405B Instruct in FP8 (meta-llama/Llama-3.1-405B-Instruct-FP8) and Qwen Qwen3 235B A22B
    (Qwen/Qwen3-235B-A22B-FP8): an FP8 plan starts that release as it is, in every engine, instead of a placeholder or a
    16-bit checkpoint that does not fit to be quantized.  The release's id typed as a model is read as the model with FP8
    weights, and the command line says so.  Kimi K2.5 ships its routed experts as 4-bit integers (moonshotai/Kimi-K2.5,
    config.json quantization_config: compressed-tensors, groups of 32) and is served so."""
    for model, n, release in (("Llama-3.1-405B", 8, "meta-llama/Llama-3.1-405B-Instruct-FP8"),
                              ("Qwen3-235B-A22B", 2, "Qwen/Qwen3-235B-A22B-FP8")):
        for engine in ("vllm", "sglang", "trtllm"):
            cmd = core.launch_command({"model": model, "gpu": "B200", "n_gpus": n, "weights_dtype": "fp8", "engine": engine,
                                       "max_num_seqs": 8})
            assert f" {release} " in cmd["command"] and "--quantization" not in cmd["command"], cmd
            assert "the publisher's FP8 release" in cmd["note"]
        assert core.resolve_inputs({"model": release})["weights_dtype"] == "fp8"
        assert "with weights in fp8" in core.catalog.models().match_note(release)
    kimi = core.serve_plan({"model": "Kimi-K2.5"}, gpus=["H200-SXM", "B200"])
    assert kimi["recommended"] is not None and kimi["recommended"].weights_dtype == "int4_gptq"
    assert kimi["launch"][0]["command"].startswith("vllm serve moonshotai/Kimi-K2.5 ")
    assert "--quantization" not in kimi["launch"][0]["command"]


@pytest.mark.slow  # one command-line process
def test_estimate_of_a_job_that_does_not_fit_says_what_makes_it_fit():
    """The main job, the plan, the form and the workbook name the cheapest change that makes a setup fit; `estimate`
    said only "does not fit" and a GPU count (24 RTX 4090s for Llama 3 70B LoRA, where FSDP's CPU offload runs it on
    the 8 given).  Now it says the change in the same words, in text and in its JSON (fits_with; null when it fits)."""
    from helpers import cli_batch
    job = ("--model", "Llama-3-70B", "--gpu", "RTX-4090", "--n-gpus", "8", "--method", "lora")
    text, as_json, fitting = cli_batch([(("estimate", *job), None), (("estimate", *job, "--json"), None),
                                        (("estimate", "--json"), None)])
    change = core.what_would_fit({"model": "Llama-3-70B", "gpu": "RTX-4090", "n_gpus": 8, "method": "lora"})
    assert change is not None and "CPU memory" in change.sentence()
    assert text.returncode == 0 and f"It does not fit as given; it {change.sentence()}." in text.stdout
    assert json.loads(as_json.stdout)["fits_with"] == change.sentence()
    assert json.loads(fitting.stdout)["fits_with"] is None


@pytest.mark.slow  # one command-line process
def test_when_every_count_that_fits_is_more_than_can_be_had_the_answer_names_the_fix_on_the_most_there_is():
    """Full fine-tuning of Llama 3.1 8B on RTX 4090s holds only from 16 of them; no offer rents more than 8 as one job
    and a bought consumer server holds 8.  'No option meets every requirement' said nothing an engineer could act on;
    now every door adds the most GPUs an offer sells and the change that makes the job fit on them (a chunked loss on
    8x RTX 4090), in core's words: the plan, the e-mail draft and the form."""
    from helpers import cli_batch

    from gpu_tco.gui import model as form_model
    from gpu_tco.workbooks.email_draft import draft_text
    job = {"model": "Llama-3.1-8B", "method": "full", "tokens": 5e8, "owned_busy_hours_per_day": 20}
    result = core.plan(job, gpus=["RTX-4090"])
    assert result["recommended"] is None
    words = core.compose_recommendation(result).text
    change = core.what_would_fit({**core.option_inputs(result["given"], result["options"][0], result["price_gpu"]), "n_gpus": 8})
    assert change is not None and f"8x RTX-4090, the most RunPod Community RTX-4090 sells as one job, does not hold the job; " \
                                  f"it {change.sentence()}." in words
    (ran,) = cli_batch([(("plan", "--model", "Llama-3.1-8B", "--method", "full", "--tokens", "5e8", "--owned-busy-hours-per-day",
                          "20", "--gpus", "RTX-4090"), None)])
    assert ran.returncode == 0 and words in ran.stdout
    assert words in draft_text({**job, "gpu": "RTX-4090"}, gpus=["RTX-4090"])[1]
    form = form_model.compute(form_model.FormState(values=job, gpus=["RTX-4090"]))
    assert form["headline"].startswith(words)
    # the workbook's Start sheet: its live answer says nothing is acceptable; beside it, core's words when generated
    from gpu_tco.workbooks import build_workbook
    book, _ = build_workbook({**job, "gpu": "RTX-4090"})
    note = book["Start"]["A10"].value
    assert note.startswith(f"When this file was generated, gpu-tco answered: {words}") and note.count("fits with") == 1


def test_every_start_loads_the_model_the_first_one_too():
    """A job loads its model before its first step, not only after a restart: the GPUs are held (1 + restarts) x
    model_load_minutes longer (AiManual, "Cheap GPUs for fine-tuning 120B models": 5-7 minutes to load a 70B model).
    So a job of minutes is not spread over more GPUs than it needs to save seconds: the start is paid on every GPU."""
    base = dict(gpu="H100-SXM", n_gpus=8, job_hours=1, debug_overhead_pct=0)
    assert core.evaluate(base)["job_wall_hours"] == pytest.approx(1 + 6 / 60)
    assert core.evaluate(base, restarts=2)["job_wall_hours"] == pytest.approx(1 + 3 * 6 / 60)
    assert core.evaluate(base, model_load_minutes=0)["job_wall_hours"] == pytest.approx(1)
    short = {"model": "Llama-3-70B", "method": "lora", "tokens": 1.5e6}  # five minutes of work on one 8-GPU machine
    no_start = core.recommend({**short, "model_load_minutes": 0}, gpus=["H100-SXM"]).option
    started = core.recommend(short, gpus=["H100-SXM"]).option
    assert no_start.n_gpus == 8 and no_start.hours < 0.1
    assert started.n_gpus < 8 and started.machines == 1 and started.hours > 6 / 60
    # the main job says what its job hours hold
    said = run_main("--workbook", "", "--model", "Llama-3-70B", "--restarts", "2").stdout
    assert "x (1 + 10 % debugging) + 6 minutes to start (loading the model) at each of its 3 starts." in said


def test_a_deadline_the_start_alone_overruns_is_said_to_be_one():
    """No number of GPUs meets a deadline shorter than the job's start: the answer says so, with what to change,
    instead of only naming 128 GPUs that miss it too."""
    job = {"model": "Llama-3.1-8B", "method": "lora", "tokens": 1e6, "deadline_hours": 0.1}
    rec = core.recommend(job)
    assert rec.option is None
    assert "Its start alone (loading the model) takes 6 of the deadline's 6 minutes, on any number of GPUs" in rec.text
    quicker = core.recommend({**job, "model_load_minutes": 2})
    assert quicker.option is not None and quicker.option.hours <= 0.1
    assert "Its start alone" not in core.recommend({**job, "deadline_hours": 0.2}).text
    assert "Its start alone" not in core.recommend({**job, "count_first_start": 0}).text  # restarts only: none here


def test_a_fits_with_change_takes_the_planners_near_ties_not_a_dollar_saved_for_days():
    """2 H100s do not hold Llama 3 70B LoRA.  3 H100s fit for about 1 % less than the 8-GPU machine, which ends the job
    in 4.3 hours instead of 11.4: within the planner's cost tolerance, the one machine that ends soonest is named, as
    the planner ranks near-ties; across machines, fewer machines first."""
    from gpu_tco.core.recommendation import what_would_fit
    job = {"model": "Llama-3-70B", "method": "lora", "gpu": "H100-SXM", "n_gpus": 2}
    change = what_would_fit(job)
    three = core.evaluate({**job, "n_gpus": 3}, outputs=("option_cost_usd", "option_hours", "fits_train"))
    assert three["fits_train"] and three["option_cost_usd"] < change.cost_usd <= 1.05 * three["option_cost_usd"]
    assert change.changes == {"n_gpus": 8} and change.machines == 1 and change.hours < three["option_hours"] / 2
    assert "it fits with 8 GPUs" in run_main("estimate", "--gpu", "H100-SXM", "--n-gpus", "2", "--method", "lora").stdout


# ---------------------------------------------------------------------------
# serving: the API compared with, and the command that starts a replica

@pytest.mark.parametrize("model, nearest", [("Qwen3-8B", "Llama-3.1-8B"), ("Llama-3.2-1B", "Llama-3.1-8B")])
def test_a_model_no_api_serves_is_compared_with_the_api_of_the_model_nearest_in_size(model, nearest):
    """No API in the catalog serves Qwen3 8B or Llama 3.2 1B: the plan compares them with the cheapest API of the
    catalog's open-weight model nearest in size (an 8B model's, $0.05/$0.08 per million tokens at Groq), not with the
    default 70B API ($0.88) that made renting look 16 times cheaper than it is, and says which model that API serves."""
    result = core.serve_plan({"model": model, "requests_per_s": 0.5, "hours_per_day": 24})
    from gpu_tco.core import catalog
    apis = catalog.tables()["apis"]
    served = apis.rows[apis.find(result["inputs"]["api_model"])]["catalog_model"]
    assert served == nearest and not result["api"]["same_model"]
    seventy_b = core.serve_plan({"model": model, "requests_per_s": 0.5, "hours_per_day": 24,
                                 "api_model": "together/Llama-3.3-70B-Instruct-Turbo"})["api"]["usd_per_month"]
    assert result["api"]["usd_per_month"] < seventy_b / 5
    assert f"though it serves another model ({nearest}): no API in the catalog serves {model}" in result["recommendation"]


def test_the_command_caps_a_request_where_one_of_the_models_whole_context_does_not_fit():
    """vLLM refuses to start when one request of the model's whole context (131,072 tokens for Llama 3.1 8B) does not
    fit the KV cache: on an RTX 4090 the command names the longest request that fits (a multiple of 1,024, at least
    the planned request, at most what fits at a batch of one), for vLLM, SGLang and TensorRT-LLM alike; on an H100,
    where the whole context fits, the engine's default stays."""
    job = {"model": "Llama-3.1-8B", "requests_per_s": 2, "ttft_slo_ms": 2000, "tpot_slo_ms": 50}
    small = {"gpu": "RTX-4090", "n_gpus": 1, "weights_dtype": "bf16", "batch": 33, "acquire": "rent", "offer": "auto"}
    for option, capped in ((small, True), ({**small, "gpu": "H100-SXM"}, False)):
        commands = {c["engine"]: c for c in core.launch_commands(job, option)}
        flags = {"vllm": "--max-model-len", "sglang": "--context-length", "trtllm": "--max_seq_len"}
        for engine, flag in flags.items():
            words = commands[engine]["command"].split()
            assert (flag in words) == capped, commands[engine]
            if capped:
                length = int(words[words.index(flag) + 1])
                fits = core.evaluate({**job, "gpu": option["gpu"], "n_gpus": 1, "weights_dtype": "bf16", "batch": 1,
                                      "engine": engine}, outputs=("max_context_fit",))["max_context_fit"]
                assert 1200 <= length <= fits < 131072 and length % 1024 == 0
                assert f"requests up to {length:,} tokens" in commands[engine]["note"]


def test_an_inference_estimate_takes_the_format_the_model_was_released_in():
    """gpt-oss-120b is released in MXFP4 and runs on one 80 GB GPU (OpenAI, "Introducing gpt-oss", 2025-08-05,
    https://openai.com/index/introducing-gpt-oss/): the inference estimate, like the serving plan, takes that format
    unless another is given, and says so; Excel's inference functions alike.  A 16-bit release stays 16-bit."""
    out = cli("estimate", "--mode", "infer", "--model", "gpt-oss-120b", "--gpu", "H100-SXM", "--n-gpus", "1").stdout
    assert "weights mxfp4 (as the model was released)" in out
    assert [line.split()[-1] for line in out.splitlines() if line.startswith("fits ")] == ["yes"]
    bf16 = cli("estimate", "--mode", "infer", "--model", "gpt-oss-120b", "--gpu", "H100-SXM", "--n-gpus", "1",
               "--weights-dtype", "bf16").stdout
    assert [line.split()[-1] for line in bf16.splitlines() if line.startswith("fits ")] == ["no"]
    assert "as the model was released" not in cli("estimate", "--mode", "infer", "--model", "Llama-3-8B").stdout
    from gpu_tco.addin import udfs
    released = core.evaluate({"model": "gpt-oss-120b", "weights_dtype": "mxfp4"})["peak_infer_gib_per_gpu"]
    assert udfs.GPU_MEMORY_INFER("gpt-oss-120b") == pytest.approx(released)
    assert udfs.GPU_MEMORY_INFER([["gpt-oss-120b"], ["Llama-3-8B"]]) == [
        [pytest.approx(released)], [pytest.approx(core.evaluate({"model": "Llama-3-8B"})["peak_infer_gib_per_gpu"])]]


def test_an_inference_setup_fits_only_where_the_engine_holds_its_batch():
    """Llama 3 70B in FP8 on two H100s at 32,768 tokens: the engine's memory (vLLM's 90 % share) holds 7 such
    sequences, so a batch of 8 does not fit, though the device total (78 of 80 GiB) would; the estimate said "fits yes"
    beside "largest batch that fits 7"."""
    setup = {"model": "Llama-3-70B", "gpu": "H100-SXM", "n_gpus": 2, "weights_dtype": "fp8", "context_tokens": 32768}
    for batch in (6, 7, 8, 9):
        r = core.evaluate({**setup, "batch": batch})
        assert bool(r["fits_infer"]) == (batch <= r["max_batch_fit"]) == (batch <= 7), batch


def test_a_lightly_loaded_service_is_said_to_answer_at_its_load_not_at_its_full_batch():
    """Llama 3.2 1B at 0.2 requests/s runs at about 1 % of two RTX 3090s: a request there meets almost no others, so its
    first token takes about what a lone request's does (95 ms), not the 1,085 ms of a full batch of 163 the answer
    gave as the latency "at the planned load".  The answer now names the full-load design point and the latency at the
    planned load apart, and the latter is near the lone request's."""
    job = {"model": "Llama-3.2-1B", "requests_per_s": 0.2, "ttft_slo_ms": 2000, "tpot_slo_ms": 60, "hours_per_day": 24}
    result = core.serve_plan(job)
    rec = result["recommended"]
    lone = core.evaluate(core.serve_option_inputs(result["given"], rec),
                         outputs=("serve_ttft_ms_at_batch_1", "serve_tpot_ms_at_batch_1"))
    assert rec.load_fraction < 0.05 and rec.batch > 100
    assert rec.ttft_at_load_ms < 1.5 * lone["serve_ttft_ms_at_batch_1"] + rec.ttft_queue_wait_ms
    assert rec.tpot_at_load_ms < 1.5 * lone["serve_tpot_ms_at_batch_1"] < rec.tpot_ms
    sentence = result["recommendation"]
    assert f"at full load (a batch of {rec.batch}); at the planned load" in sentence
    assert f"first token in {rec.ttft_at_load_ms:,.0f} ms with the queue" in sentence


def test_bought_consumer_cards_never_send_the_kv_cache_over_a_network_nobody_chose():
    """GeForce cards have no GPUDirect RDMA (NVIDIA, GPUDirect RDMA User Manual, System Requirements: Tesla and Quadro
    GPUs): bought RTX 4090 or 5090 servers were joined by the default 400 Gbit/s per GPU to carry the KV cache from
    prefill to decode replicas, a network nobody buys for such cards.  Bought consumer cards now serve aggregated and say
    why; a data-centre GPU bought keeps the owned network."""
    job = {"model": "Llama-3.1-70B", "requests_per_s": 10, "ttft_slo_ms": 2000, "tpot_slo_ms": 60, "hours_per_day": 24}
    result = core.serve_plan(job, gpus=["RTX-4090", "RTX-5090"])
    bought = [o for o in result["options"] if o.acquire == "buy"]
    assert bought and all(o.layout == "aggregated" for o in bought)
    option = {**job, "task": "serve", "gpu": "RTX-4090", "n_gpus": 4, "weights_dtype": "fp8", "buy": 1}
    r = core.evaluate(option, outputs=("disagg_kv_link_code", "serve_layout_reason_code", "disagg_kv_link_gb_per_s"))
    assert r["disagg_kv_link_code"] == 0 and r["disagg_kv_link_gb_per_s"] == 0
    assert "consumer cards have no GPUDirect RDMA, so bought ones do not run prefill and decode apart" in \
        core.layout_reason_text(r["serve_layout_reason_code"], "aggregated", 0, 0, 10)
    assert core.evaluate({**option, "gpu": "H100-SXM"}, outputs=("disagg_kv_link_code",))["disagg_kv_link_code"] == 2
    given = core.evaluate({**option, "kv_transfer_gb_per_s": 25}, outputs=("disagg_kv_link_code",))
    assert given["disagg_kv_link_code"] == 1  # a link the user names is used


def test_buying_pays_back_later_when_money_costs_something():
    """The discount rate changed what owning costs per GPU-hour but not the payback or the break-even: at 10 % a year 8
    H100s bought for 24 h a day paid back in the 29.6 months they did at 0 %.  The payback is now discounted (the month
    at which the present value of the monthly saving reaches the capital: Investopedia, "Discounted Payback Period"),
    equal to the simple one at 0 %, and the verdict says it against the months owned."""
    job = {"gpu": "H100-SXM", "n_gpus": 8, "hours_per_day": 24}
    names = ("payback_months", "breakeven_utilization", "rent_usd_per_month", "own_running_usd_per_month",
             "own_capital_usd", "own_setup_usd")
    simple, discounted = (core.evaluate({**job, "discount_rate_pct": rate}, outputs=names) for rate in (0, 10))
    saving = simple["rent_usd_per_month"] - simple["own_running_usd_per_month"]
    outlay = simple["own_capital_usd"] + simple["own_setup_usd"]
    assert simple["payback_months"] == pytest.approx(outlay / saving)
    m = 1.10 ** (1 / 12) - 1
    present = [sum(saving / (1 + m) ** k for k in range(1, n + 1)) for n in range(1, 61)]
    month = next(n for n, pv in enumerate(present, start=1) if pv >= outlay)  # the first whole month it has paid back
    assert month - 1 < discounted["payback_months"] <= month
    assert discounted["payback_months"] > simple["payback_months"] + 3
    assert discounted["breakeven_utilization"] > simple["breakeven_utilization"]
    out = cli("breakeven", "--gpu", "H100-SXM", "--n-gpus", "8", "--hours-per-day", "24", "--discount-rate-pct", "10").stdout
    assert f"(payback after {discounted['payback_months']:.1f} of the 36 months, discounted at 10 % a year)." in out
    from gpu_tco.addin.functions import call  # Excel takes the rate too
    assert call("GPU_BREAKEVEN", "H100-SXM", None, 8, 24, None, None, None, 10) == pytest.approx(discounted["payback_months"])


def test_an_inference_estimate_says_when_it_times_other_requests_than_its_memory_holds():
    """The estimate sized memory for a 32,768-token context and timed decoding for the default 1,000-token prompt
    without saying so (a speed 64 % above that of 32k-token sequences).  The row now says so and how to time the long
    ones; with the request given, it times those and says nothing more."""
    args = ("estimate", "--mode", "infer", "--model", "Llama-3-70B", "--gpu", "H100-SXM", "--n-gpus", "2",
            "--weights-dtype", "fp8", "--context-tokens", "32768", "--batch", "7")
    out = cli(*args).stdout
    assert "1,000 prompt + 200 output tokens; not the 32,768-token sequences of the memory above: --prompt-tokens sets them" in out
    long = cli(*args, "--prompt-tokens", "32568").stdout
    assert "32,568 prompt + 200 output tokens)" in long and "not the" not in long
    speeds = [float(next(line for line in text.splitlines() if line.startswith("decode tokens/s per sequence (")).split()[-1])
              for text in (out, long)]
    assert speeds[1] < 0.75 * speeds[0]
    assert "not the" not in cli("estimate", "--mode", "infer", "--model", "Llama-3-8B", "--context-tokens", "1200").stdout


def test_a_blank_weight_format_in_an_excel_range_is_the_models_release_as_a_blank_cell_is():
    """A blank cell of a weight-format range read as 16-bit while a blank single cell reads as the model's release
    format (gpt-oss-120b: MXFP4): each blank row now takes its model's release format."""
    from gpu_tco.addin.functions import call
    single = call("GPU_MEMORY_INFER", "gpt-oss-120b", 8192, 1, None, None, 1, "weights")
    ranged = call("GPU_MEMORY_INFER", "gpt-oss-120b", 8192, 1, [["fp8"], [None]], None, 1, "weights")
    assert ranged[1][0] == pytest.approx(single)
    assert ranged[0][0] == pytest.approx(call("GPU_MEMORY_INFER", "gpt-oss-120b", 8192, 1, "fp8", None, 1, "weights"))


def test_a_payback_that_never_comes_says_why_and_one_past_the_period_says_so():
    """Discounted, a purchase can fail to pay back although running it costs less than renting: the saving does not
    cover the capital's cost.  The answer said "running owned GPUs costs more", which was false; and a payback beyond
    the period read "after 65.1 of the 36 months"."""
    out = cli("--workbook", "", "--owned-busy-hours-per-day", "24", "--discount-rate-pct", "100").stdout
    assert "never repays the capital: it does not cover the capital's cost at 100 % a year" in out
    assert "running owned GPUs costs more" not in out
    late = core.evaluate({"gpu": "B200", "n_gpus": 4, "hours_per_day": 12}, outputs=("payback_months",))["payback_months"]
    assert late > 36
    assert core.payback_text({"payback_months": late}, {"months": 36, "discount_rate_pct": 0}) == \
        f" (payback after {late:.1f} months, beyond the 36 owned, not discounted)."


def test_a_model_given_by_its_size_is_compared_with_the_api_of_the_nearest_size():
    """A model given as 8 billion parameters (outside the catalog) was compared with the 70B default API."""
    result = core.serve_plan({"model": "8", "requests_per_s": 1}, gpus=["RTX-4090"])
    assert result["inputs"]["api_model"] == core.serve_plan({"model": "Llama-3.1-8B", "requests_per_s": 1},
                                                            gpus=["RTX-4090"])["inputs"]["api_model"]


@pytest.mark.parametrize("model, gpu, context, batch", [("gpt-oss-120b", "H100-SXM", 32768, 4), ("gpt-oss-120b", "H100-SXM", 32768, 16),
                                                        ("gpt-oss-120b", "H100-SXM", 65536, 4), ("Mistral-7B", "H100-SXM", 32768, 100),
                                                        ("Mistral-7B", "L40S", 32768, 200), ("Llama-3-70B", "H200-SXM", 4096, 30),
                                                        ("Llama-3-70B", "H200-SXM", 8192, 30)])
def test_the_longest_context_that_fits_agrees_with_whether_the_context_asked_for_fits(model, gpu, context, batch):
    """Sliding-window layers hold only their window: "longest context that fits" counted every layer's cache at full
    length, so for gpt-oss and Mistral 7B it sat below the context the estimate said fits.  It now inverts the same
    count (and stops at the model's own context length)."""
    r = core.evaluate(core.inference_inputs({"model": model, "gpu": gpu, "n_gpus": 1, "context_tokens": context, "batch": batch,
                                             **({"weights_dtype": "fp8"} if model == "Llama-3-70B" else {})}),
                      outputs=("fits_infer", "max_context_fit", "model_context_limit"))
    assert r["max_context_fit"] <= r["model_context_limit"]
    assert bool(r["fits_infer"]) == (context <= r["max_context_fit"]), r


def test_owning_a_count_no_server_holds_is_said_and_the_count_that_can_be_bought_named():
    """`tco` and `breakeven` price the count they are given; 2 B200s are not a server (8-GPU HGX boards), so the
    answer says so under its title and names the count whole servers hold, as the planner refuses that purchase."""
    out = run_main("tco", "--gpu", "B200", "--n-gpus", "2")
    assert out.returncode == 0, out.stderr
    title, note = out.stdout.splitlines()[:2]
    assert title.startswith("gpu-tco tco: owning 2x B200")
    assert note == ("B200 is sold in servers of 8 GPUs, and gpu-tco buys whole servers (several of the largest beyond "
                    "one): these figures are for 2 GPUs; whole servers hold 8 (--n-gpus 8 prices them).")
    out = run_main("breakeven", "--gpu", "H100-SXM", "--n-gpus", "2", "--json")
    assert "whole servers hold 4 (" in json.loads(out.stdout)["not_sold_in_that_size"]
    said = run_main("tco", "--gpu", "RTX-4090", "--n-gpus", "3").stdout
    assert "servers of 1, 2, 4 or 8 GPUs, and gpu-tco buys whole servers" in said and "hold 4 (" in said
    assert "whole servers hold 16 (--n-gpus 16" in run_main("tco", "--gpu", "L40S", "--n-gpus", "9").stdout
    for gpu, n in (("B200", "8"), ("B200", "16"), ("H100-SXM", "4"), ("RTX-4090", "1")):  # whole servers: no such line
        assert "whole servers hold" not in run_main("breakeven", "--gpu", gpu, "--n-gpus", n).stdout, (gpu, n)
        assert "not_sold_in_that_size" not in json.loads(run_main("tco", "--gpu", gpu, "--n-gpus", n, "--json").stdout)
    # the planner's rule, in the same words of sizes: it proposes no purchase of 2 B200s
    from gpu_tco.core.planner import purchase_refusal
    assert purchase_refusal("B200", 2, (8,), {}, 1) == ["not sold in that size: B200 servers hold 8 GPUs"]


def test_excel_says_beside_gpu_tco_whether_a_count_fills_whole_servers():
    """GPU_TCO and GPU_BREAKEVEN return a number for any count (a cell holds one value); GPU_WHOLE_SERVERS, the cell
    beside them, says what the command line's `tco` says under its title, worded for a sheet, or that the count fills
    whole servers; bad input is the usual "#INPUT!" text naming the field."""
    from gpu_tco.addin.functions import call
    assert call("GPU_WHOLE_SERVERS", "B200", 2) == (
        "B200 is sold in servers of 8 GPUs, and gpu-tco buys whole servers (several of the largest beyond one): these "
        "figures are for 2 GPUs; whole servers hold 8 (n_gpus 8 prices them).")
    assert call("GPU_WHOLE_SERVERS", "h100", 8) == "8 H100-SXM fill whole servers (servers of 4 or 8 GPUs)"
    assert call("GPU_WHOLE_SERVERS") == call("GPU_WHOLE_SERVERS", "H100-SXM", core.DEFAULTS["n_gpus"])
    assert "whole servers hold 4 (n_gpus 4" in call("GPU_WHOLE_SERVERS", "RTX-4090", 3)
    assert call("GPU_WHOLE_SERVERS", "H1000", 8).startswith('#INPUT! gpu: unknown "H1000" (did you mean H100-SXM')
    assert call("GPU_WHOLE_SERVERS", "B200", 2.5).startswith("#INPUT! n_gpus: 2.5")
    assert isinstance(call("GPU_TCO", "B200", 2), float)  # the number itself is unchanged
    # a MIG slice is not bought alone: the command line and the cell say its figures are its share of the card
    slice_note = call("GPU_WHOLE_SERVERS", "A100-80GB-SXM MIG 1g.10gb", 1)
    assert slice_note.startswith("A100-80GB-SXM MIG 1g.10gb is a MIG slice of one A100-80GB-SXM: nobody buys a slice alone")
    out = run_main("tco", "--gpu", "A100-80GB-SXM MIG 1g.10gb", "--n-gpus", "1", "--json")
    assert out.returncode == 0 and json.loads(out.stdout)["not_sold_in_that_size"] == slice_note
