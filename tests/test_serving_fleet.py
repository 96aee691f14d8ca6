"""Serving fleets a buyer can order and run: whole servers, headroom below full load, the queueing wait in the first
token, spare replicas, and weight formats below 8 bits only when allowed, with their published accuracy effect."""
from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from gpu_tco import core

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = {**json.loads((ROOT / "examples" / "serve-llama3-70b.json").read_text()), "serving_layout": 1}  # aggregated: the rules below are its
GPUS = EXAMPLE.pop("gpus")


@pytest.fixture(scope="module")
def example():
    return core.serve_plan(dict(EXAMPLE), gpus=GPUS)


def test_bought_fleets_are_whole_servers_of_the_catalogs_sizes(example):
    """Every bought option orders servers the GPU is sold in (4- or 8-GPU boards for H100/H200 SXM, 8 for B200), its replicas
    packed into them, and its capital is that of the whole servers."""
    bought = [o for o in example["options"] if o.acquire == "buy" and o.ok]
    assert bought
    for o in bought:
        sizes = core.catalog.server_sizes(core.catalog.tables()["gpus"].row(o.gpu))
        assert o.server_gpus in sizes and o.server_gpus >= o.n_gpus
        per_server = o.server_gpus // o.n_gpus
        assert o.servers == math.ceil(o.replicas / per_server)
        assert o.gpus_bought == o.servers * o.server_gpus >= o.gpus_total
        same = core.evaluate({**EXAMPLE, "task": "train", "gpu": o.gpu, "n_gpus": o.gpus_bought, "buy": 1},
                             outputs=("own_gpu_capital_usd",))
        assert o.capital_usd >= same["own_gpu_capital_usd"]  # the cards of whole servers, and the rest of them
    # a 72-GPU rack is never bought for a replica of a few GPUs
    rack = core.serve_plan(dict(EXAMPLE), gpus=["GB200", "B200"])
    racks = [o for o in rack["options"] if o.acquire == "buy" and o.ok and o.gpu == "GB200"]
    assert racks and all(o.gpus_bought % 72 == 0 and o.servers >= 1 for o in racks)
    best = rack["recommended"]
    assert best.gpu == "B200" and (best.acquire == "rent" or best.server_gpus == 8)
    assert min(o.usd_per_month for o in racks) > 5 * best.usd_per_month
    # HGX B200 is an 8-GPU board (server-parts.eu, "NVIDIA B200, HGX B200, DGX B200 & GB200 Comparison", 2026): no
    # bought B200 fleet is of 4-GPU servers
    b200 = [o for o in rack["options"] if o.acquire == "buy" and o.gpu == "B200"]
    assert b200 and all(o.server_gpus == 8 for o in b200)


def test_capacity_is_planned_at_the_target_utilization_with_a_spare(example):
    """No acceptable option runs above the target utilization on the replicas carrying the demand; one spare replica
    by default; a lower target buys more replicas."""
    ok = [o for o in example["options"] if o.ok]
    assert ok and all(o.spare_replicas == 1 for o in ok)
    for o in ok:
        carrying = o.replicas - o.spare_replicas
        assert example["demand"]["requests_per_s"] / (carrying * o.requests_per_s_per_replica) <= 0.8 + 1e-9
        assert o.load_fraction < 0.8
    rec = example["recommended"]
    lower = core.evaluate({**core.serve_option_inputs(example["given"], rec), "target_utilization": 0.5},
                          outputs=("serve_replicas", "serve_load_fraction"))
    assert lower["serve_replicas"] > rec.replicas and lower["serve_load_fraction"] < rec.load_fraction
    none = core.evaluate({**core.serve_option_inputs(example["given"], rec), "spare_replicas": 0},
                         outputs=("serve_replicas",))
    assert none["serve_replicas"] == rec.replicas - 1


def test_first_token_adds_the_queueing_wait_at_the_planned_load(example):
    """TTFT at load = the service TTFT with the sequences a replica runs at that load + ttft_queue_wait_ms (M/M/c for a
    slot, Sakasegawa; M/D/1 for the prefill, Pollaczek-Khinchine), checked against the target; the wait grows without
    bound as the load nears 1.  The sequences running at the load are its arrivals x the time a request holds a slot
    (Little's law), so below full load the service time and the time per token are those of a smaller batch."""
    rec = example["recommended"]
    assert rec.ttft_queue_wait_ms > 0
    inputs = core.serve_option_inputs(example["given"], rec)
    names = ("ttft_queue_wait_ms", "serve_prefill_wait_ms", "serve_slot_wait_ms", "serve_prefill_load", "serve_prefill_service_s",
             "serve_load_fraction", "serve_batch", "serve_slot_hold_s", "serve_meets_ttft_at_load", "serve_running_at_load",
             "serve_replica_arrivals_per_s", "serve_ttft_service_at_load_ms", "serve_tpot_at_load_ms")
    r = core.evaluate(inputs, outputs=names)
    assert r["serve_running_at_load"] == max(1, min(r["serve_batch"], math.ceil(r["serve_replica_arrivals_per_s"] * r["serve_slot_hold_s"])))
    assert r["serve_running_at_load"] < r["serve_batch"]  # planned below full load
    assert rec.ttft_at_load_ms == pytest.approx(r["serve_ttft_service_at_load_ms"] + rec.ttft_queue_wait_ms)
    assert r["serve_ttft_service_at_load_ms"] < rec.ttft_ms and r["serve_tpot_at_load_ms"] < rec.tpot_ms
    assert rec.ttft_at_load_ms <= EXAMPLE["ttft_slo_ms"]
    full = core.evaluate({**inputs, "concurrency": int(r["serve_running_at_load"])}, outputs=("load_tpot_ms", "load_ttft_ms"))
    assert r["serve_tpot_at_load_ms"] == pytest.approx(full["load_tpot_ms"])  # the engine's step at that many sequences
    rho, d = r["serve_prefill_load"], r["serve_prefill_service_s"]
    assert r["serve_prefill_wait_ms"] == pytest.approx(1000 * rho * d / (2 * (1 - rho)))  # M/D/1
    c, u = r["serve_batch"], r["serve_load_fraction"]
    assert r["serve_slot_wait_ms"] == pytest.approx(1000 * r["serve_slot_hold_s"] * u ** (math.sqrt(2 * (c + 1)) - 1) / (c * (1 - u)))
    # M/M/1 (c = 1): Sakasegawa's form is exact, Wq = rho / (mu - lambda)
    one = core.evaluate({**inputs, "max_num_seqs": 1, "spare_replicas": 0, "target_utilization": 0.9},
                        outputs=("serve_slot_wait_ms", "serve_load_fraction", "serve_slot_hold_s"))
    u1, s1 = one["serve_load_fraction"], one["serve_slot_hold_s"]
    assert one["serve_slot_wait_ms"] == pytest.approx(1000 * s1 * u1 / (1 - u1))
    # near full load, the wait is a multiple of the service time and the first-token target fails
    hot = core.evaluate({**inputs, "target_utilization": 0.99, "spare_replicas": 0, "ttft_slo_ms": 0}, outputs=("ttft_queue_wait_ms",))
    cool = core.evaluate({**inputs, "target_utilization": 0.5, "spare_replicas": 0, "ttft_slo_ms": 0}, outputs=("ttft_queue_wait_ms",))
    assert hot["ttft_queue_wait_ms"] > cool["ttft_queue_wait_ms"]
    # a first-token target barely above the service time: the plan lowers the utilization rather than miss the target
    tight = core.evaluate({**inputs, "target_utilization": 0.99, "spare_replicas": 0, "ttft_slo_ms": rec.ttft_ms * 1.05},
                          outputs=("serve_planned_utilization", "serve_meets_ttft_at_load"))
    assert tight["serve_planned_utilization"] < 0.99 and tight["serve_meets_ttft_at_load"]


def test_the_answer_says_when_one_failure_stops_the_service():
    """With no spare, a fleet at the target utilization cannot lose a replica; a single replica stops the service;
    the default spare keeps one failure survivable."""
    job = {"task": "serve", "model": "Llama-3-8B", "gpu": "L40S", "n_gpus": 1, "requests_per_s": 1, "prompt_tokens": 500,
           "output_tokens": 100, "api_usd_per_mtok_input": 50, "api_usd_per_mtok_output": 50}  # an API dearer than any setup
    single = core.serve_plan({**job, "spare_replicas": 0}, gpus=["L40S"])
    rec = single["recommended"]
    assert rec.replicas == 1 and rec.single_failure_stops
    assert "one failure stops the service: a single replica" in single["recommendation"]
    spared = core.serve_plan(job, gpus=["L40S"])
    assert spared["recommended"].replicas == 2 and not spared["recommended"].single_failure_stops
    assert "one failed replica leaves the rest at" in spared["recommendation"]
    many = core.evaluate({**job, "requests_per_s": 40, "spare_replicas": 0},
                         outputs=("serve_replicas", "serve_single_failure_stops", "serve_load_after_failure"))
    assert many["serve_replicas"] > 1
    assert bool(many["serve_single_failure_stops"]) == (many["serve_load_after_failure"] > 1)


def test_formats_below_8_bits_only_when_allowed_and_named_with_their_accuracy_cost():
    job = {**EXAMPLE, "task": "serve"}
    default = core.serve_plan(dict(job), gpus=["H100-SXM", "B200"])
    assert all(o.weights_bits >= 8 for o in default["options"] if o.ok)
    low = [o for o in default["options"] if o.weights_bits < 8]
    assert low and all(o.reasons == (o.reasons[0],) and o.reasons[0].startswith("weights below the lowest bit width accepted")
                       for o in low)
    # a format named in the job but below the bits accepted: rejected with the reason, never chosen silently
    fixed = core.serve_plan({**job, "weights_dtype": "nvfp4"}, gpus=["B200"])
    assert fixed["recommended"] is None and "weights below the lowest bit width accepted" in fixed["rejected_counts"]
    allowed = core.serve_plan({**job, "min_weight_bits": 4}, gpus=["H100-SXM", "B200"])
    formats = {o.weights_dtype for o in allowed["options"]}
    assert {"int4_awq", "nvfp4"} <= formats
    for o in allowed["options"]:
        if o.weights_bits < 8:
            assert o.accuracy_effect and "[" in o.accuracy_effect  # a published figure with its source
    low = next(o for o in allowed["options"] if o.ok and o.weights_bits < 8)
    notes = core.serve_option_notes(low, allowed["inputs"])
    assert f"weights in {low.weights_dtype}" in notes and low.accuracy_effect in notes
    # every weight format of the catalog states its accuracy effect
    for row in core.catalog.tables()["weight_dtypes"].rows:
        assert row["accuracy_effect"], row["name"]


@pytest.mark.slow  # command-line runs in processes of their own
def test_command_line_and_excel_show_servers_load_and_queueing():
    """Real runs: plan --task serve prints the queued first token, the load and whole servers; GPU_SERVE_PLAN's table
    carries the same fields."""
    code = ("from gpu_tco.cli import main\n"
            f"main(['plan', '--scenario', {str(ROOT / 'examples' / 'serve-llama3-70b.json')!r}, '--top', '20'])\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "TTFT ms (queued)" in run.stdout and "load" in run.stdout
    assert "servers of 4x" in run.stdout or "server of 8x" in run.stdout or "servers of 8x" in run.stdout
    assert "of queueing (Poisson arrivals" in run.stdout
    from gpu_tco.addin.functions import call
    rows = call("GPU_SERVE_PLAN", "Llama-3-70B", 20, 1000, 200, 2000, 50, None, 24, None, 5)
    head = rows[0]
    for field in ("servers", "load_fraction", "ttft_queue_wait_ms", "ttft_at_load_ms", "single_failure_stops"):
        assert field in head
    first = dict(zip(head, rows[1]))
    assert first["ttft_at_load_ms"] >= first["ttft_queue_wait_ms"] and first["load_fraction"] < 0.8


@pytest.mark.parametrize("way, buy", [("rent", 0), ("own", 1)])
def test_the_volume_above_which_a_fleet_beats_the_api_is_where_its_cost_crosses_the_apis(example, way, buy):
    """Just above the stated volume the deployment (replicas at the target utilization, the spare, whole servers when
    bought) costs no more than the API for the same tokens; just below, it costs more."""
    option = example["best_rent" if way == "rent" else "best_buy"]
    inputs = core.serve_option_inputs(example["given"], option)
    above = core.evaluate(inputs, outputs=(f"serve_{way}_beats_api_mtok_per_month",))[f"serve_{way}_beats_api_mtok_per_month"]
    assert above > 0
    names = (f"serve_{way}_usd_per_month", "serve_api_usd_per_month")
    over = core.evaluate({**inputs, "monthly_mtok": above * 1.001, "requests_per_s": 1}, outputs=names)
    under = core.evaluate({**inputs, "monthly_mtok": above * 0.999, "requests_per_s": 1}, outputs=names)
    # owned, the GPU-hour cost is the planned deployment's: a smaller fleet spreads its one-off setup over fewer GPUs
    slack = 1.0 if way == "rent" else 1.03
    assert over[f"serve_{way}_usd_per_month"] <= over["serve_api_usd_per_month"] * slack
    assert under[f"serve_{way}_usd_per_month"] * slack > under["serve_api_usd_per_month"]


def test_a_bought_fleet_says_what_one_server_failure_does():
    """Replicas packed into one server fail together: the answer says so, and with several servers it gives the load
    the others carry when one goes (its replicas lost at once)."""
    whole = core.serve_plan({**EXAMPLE, "task": "serve"}, gpus=["B200"])
    one = next(o for o in whole["options"] if o.ok and o.acquire == "buy" and o.servers == 1)
    assert "one server failure stops the service" in core.serve_option_notes(one, whole["inputs"])
    many = core.serve_plan({**EXAMPLE, "task": "serve", "requests_per_s": 200, "gpus_per_server": 4}, gpus=["B200"])
    fleet = next(o for o in many["options"] if o.ok and o.acquire == "buy" and o.servers > 2)
    per_server = fleet.server_gpus // fleet.n_gpus
    expected = many["demand"]["requests_per_s"] / ((fleet.replicas - per_server) * fleet.requests_per_s_per_replica)
    assert fleet.load_after_server_failure == pytest.approx(expected)
    assert f"{expected:.0%}" in core.serve_option_notes(fleet, many["inputs"])


def test_replicas_are_added_when_queueing_at_the_target_would_break_the_first_token_target():
    """A replica with a small batch queues long at 80 % load (a slot is held for output x time per token): the planner
    plans it at 3/4, 1/2 or 1/4 of the target utilization, whichever first keeps the first token within its target."""
    job = {**EXAMPLE, "task": "serve", "gpu": "L40S", "n_gpus": 4, "weights_dtype": "fp8", "offer": "auto", "buy": 0}
    names = ("serve_planned_utilization", "serve_queue_wait_s_at_100pct", "serve_queue_budget_s", "serve_meets_ttft_at_load",
             "serve_load_fraction", "serve_replicas", "serve_replicas_for_load", "serve_ttft_at_load_ms", "serve_batch")
    r = core.evaluate(job, outputs=names)
    assert r["serve_queue_wait_s_at_100pct"] > r["serve_queue_budget_s"] > 0  # at the target, the queue breaks it
    assert any(r["serve_planned_utilization"] == pytest.approx(u) for u in (0.6, 0.4, 0.2))
    assert r["serve_meets_ttft_at_load"] and r["serve_ttft_at_load_ms"] <= EXAMPLE["ttft_slo_ms"]
    at_target = core.evaluate({**job, "ttft_slo_ms": 0}, outputs=("serve_replicas",))  # no target: planned at 0.8
    assert r["serve_replicas"] > at_target["serve_replicas"]
    plan = core.serve_plan({**EXAMPLE, "gpu": "L40S", "n_gpus": 4, "weights_dtype": "fp8"}, gpus=["L40S"])
    option = next(o for o in plan["options"] if o.ok)
    assert option.planned_utilization < 0.8
    assert f"lowered to {option.planned_utilization:.0%} for the first-token target" in core.serve_option_notes(option, plan["inputs"])


def test_excel_function_takes_the_utilization_the_spares_and_the_weight_bits():
    """GPU_SERVE_PLAN(..., top, target_utilization, spare_replicas, min_weight_bits): the one-cell answer is core's for
    those inputs, and the table's setups respect them."""
    from gpu_tco.addin.functions import call
    args = ("Llama-3-70B", 20, 1000, 200, 2000, 50, None, 24, None)
    answer = call("GPU_SERVE_PLAN", *args, None, 0.5, 0, 4)
    expected = core.serve_plan({"model": "Llama-3-70B", "requests_per_s": 20, "prompt_tokens": 1000, "output_tokens": 200,
                                "ttft_slo_ms": 2000, "tpot_slo_ms": 50, "hours_per_day": 24, "target_utilization": 0.5,
                                "spare_replicas": 0, "min_weight_bits": 4})
    assert answer == expected["recommendation"]
    rows = call("GPU_SERVE_PLAN", *args, 5, 0.5, 0, 4)
    table = [dict(zip(rows[0], row)) for row in rows[1:]]
    assert table and all(r["load_fraction"] <= 0.5 + 1e-9 and r["spare_replicas"] == 0 for r in table)
    assert all(r["accuracy_effect"] for r in table if r["weights_dtype"] in ("int4_awq", "nvfp4"))
    bad = call("GPU_SERVE_PLAN", *args, None, 1.5)
    assert isinstance(bad, str) and "target_utilization" in bad
