"""Serving: batched decode as engines run it, the serving planner, and its doors (command line, Python)."""
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import gpu_tco
from gpu_tco import core

ROOT = Path(__file__).resolve().parents[1]
DSV3_H200 = {"model": "DeepSeek-V3", "gpu": "H200-SXM", "n_gpus": 8, "weights_dtype": "fp8", "kv_dtype": "fp8"}


@pytest.mark.slow  # over 0.45 s
@pytest.mark.parametrize("batch", [1, 4, 32, 256])
def test_distinct_experts_read_match_routing_by_sampling(batch):
    """Each token picks 8 different experts of 256 (DeepSeek-V3); the distinct experts a batch touches, averaged over
    sampled routings, equal E x (1 - (1 - k/E)^B) (the formula's exact expectation) within sampling error."""
    r = core.evaluate({**DSV3_H200, "batch": batch}, outputs=("experts_read_per_layer",))
    rng = np.random.default_rng(7)
    trials = 300
    # k distinct experts per token: the first k of a random permutation of the E experts
    picks = np.argsort(rng.random((trials, batch, 256)), axis=2)[:, :, :8]
    touched = np.zeros((trials, 256), dtype=bool)
    for t in range(trials):
        touched[t, picks[t].ravel()] = True
    sampled = touched.sum(axis=1)
    exact = 256 * (1 - (1 - 8 / 256) ** batch)
    assert r["experts_read_per_layer"] == pytest.approx(exact, rel=1e-12)
    assert r["experts_read_per_layer"] == pytest.approx(sampled.mean(), abs=4 * sampled.std() / trials ** 0.5 + 1e-9)


def test_deepseek_v3_decode_step_grows_with_the_experts_a_batch_reads():
    """DeepSeek-V3 in fp8 on 8x H200: 32 tokens routed 8-of-256 touch ~163 experts of each layer instead of 8, so a
    step reads several times the weights of a batch of one (the step grows from batch 1 to 32, not by 7 %)."""
    one = core.evaluate({**DSV3_H200, "batch": 1})
    many = core.evaluate({**DSV3_H200, "batch": 32})
    assert one["experts_read_per_layer"] == pytest.approx(8)
    assert many["experts_read_per_layer"] == pytest.approx(163.3, abs=0.1)
    assert many["decode_bytes_per_step_per_gpu"] > 5 * one["decode_bytes_per_step_per_gpu"]
    assert many["decode_step_s"] > 3 * one["decode_step_s"]
    # a dense model reads its whole MLP at any batch: weights per step do not grow with the batch
    dense = [core.evaluate({"model": "Llama-3-70B", "gpu": "H100-SXM", "n_gpus": 8, "batch": b, "context_tokens": 1},
                           outputs=("decode_bytes_per_step_per_gpu",))["decode_bytes_per_step_per_gpu"] for b in (1, 32)]
    assert dense[1] == pytest.approx(dense[0], rel=0.01)


def test_tensor_parallel_decode_pays_its_all_reduces():
    """Two all-reduces per layer per step: latency x 2 x layers plus bytes over the link; none on one GPU, more over
    PCIe (L40S has no NVLink) than over NVLink (H100 SXM)."""
    job = {"model": "Llama-3-70B", "batch": 64, "weights_dtype": "fp8"}
    outputs = ("tp_allreduce_fixed_s", "tp_allreduce_s_per_token", "decode_step_s", "intra_node_gb_per_s")
    h100 = core.evaluate({**job, "gpu": "H100-SXM", "n_gpus": 8}, outputs=outputs)
    l40s = core.evaluate({**job, "gpu": "L40S", "n_gpus": 8}, outputs=outputs)
    single = core.evaluate({**job, "gpu": "H200-SXM", "n_gpus": 1}, outputs=outputs)
    latency_s = core.resolve_inputs({})["allreduce_latency_us"] * 1e-6
    assert h100["tp_allreduce_fixed_s"] == pytest.approx(2 * 80 * latency_s)
    # 2 x 80 layers x 2 x 7/8 x 8,192 x 2 bytes over 450 GB/s x 0.8
    assert h100["tp_allreduce_s_per_token"] == pytest.approx(2 * 80 * 2 * 7 / 8 * 8192 * 2 / (450e9 * 0.8))
    assert l40s["tp_allreduce_s_per_token"] > 10 * h100["tp_allreduce_s_per_token"]
    assert single["tp_allreduce_fixed_s"] == 0 and single["tp_allreduce_s_per_token"] == 0
    assert h100["decode_step_s"] > h100["tp_allreduce_fixed_s"] + 64 * h100["tp_allreduce_s_per_token"]


def test_serving_batch_is_the_largest_within_the_per_token_target():
    """Dense model: the step is linear in the batch, so the batch is closed form; a target set to the reported time
    per token keeps the batch, a slightly tighter one lowers it, and costs per token fall far below batch 1's."""
    job = {"model": "Llama-3-70B", "gpu": "H100-SXM", "n_gpus": 8, "tpot_slo_ms": 50, "ttft_slo_ms": 0}
    r = core.evaluate(job)
    assert r["serve_ok"] and 8 < r["serve_batch"] < r["serve_kv_batch"]
    assert r["tpot_ms"] <= 50
    same = core.evaluate({**job, "tpot_slo_ms": r["tpot_ms"] + 1e-9})
    assert same["serve_batch"] == r["serve_batch"]
    tighter = core.evaluate({**job, "tpot_slo_ms": r["tpot_ms"] * 0.98})
    assert tighter["serve_batch"] < r["serve_batch"]
    # Little's law: a replica serves batch / (output tokens x time per token) requests per second
    assert r["serve_replica_requests_per_s"] == pytest.approx(r["serve_batch"] / (200 * r["tpot_ms"] / 1000))
    # at batch 1 the same 8 GPUs would cost tens of dollars per million generated tokens; the serving costs (and the
    # cost per generated token every door shows) use the sustained batch
    batch_1 = 8 * r["rent_usd_per_gpu_hour"] / (1000 / r["serve_tpot_ms_at_batch_1"] * 3600) * 1e6
    # (the served cost carries the spare replica and the 80 % target utilization: still a tenth of batch 1's)
    assert batch_1 > 20 and r["serve_rent_usd_per_mtok_output"] < batch_1 / 10
    assert r["serve_tokens_per_s"] == pytest.approx(r["serve_replica_output_tokens_per_s"])
    assert r["decode_usd_per_mtok_rent"] == pytest.approx(8 * r["rent_usd_per_gpu_hour"] / (r["serve_tokens_per_s"] * 3600) * 1e6)
    assert r["decode_usd_per_mtok_rent"] < batch_1 / 10


def test_replicas_and_costs_follow_the_demand():
    job = {"model": "Llama-3-8B", "gpu": "L40S", "n_gpus": 1, "requests_per_s": 2, "serving_layout": 1}  # aggregated replicas
    small = core.evaluate(job)
    # replicas carry the demand at the target utilization (0.8), plus one spare
    big = core.evaluate({**job, "requests_per_s": 19.5 * 0.8 * small["serve_replica_requests_per_s"]})
    assert small["serve_replicas"] == math.ceil(2 / (0.8 * small["serve_replica_requests_per_s"])) + 1 == 2
    assert big["serve_replicas"] == 20 + 1
    assert big["serve_load_fraction"] == pytest.approx(19.5 * 0.8 / 21)
    assert big["serve_rent_usd_per_month"] == pytest.approx(21 / 2 * small["serve_rent_usd_per_month"])
    # a monthly token volume in place of a request rate: the same demand
    volume = core.evaluate({**job, "monthly_mtok": small["serve_mtok_per_month"]})
    assert volume["serve_demand_requests_per_s"] == pytest.approx(2)
    # the API bill for the same tokens, and the volume above which one rented replica beats it
    api = core.evaluate({**job, "api_usd_per_mtok_input": 5.0, "api_usd_per_mtok_output": 5.0})
    assert api["serve_api_usd_per_month"] == pytest.approx(api["serve_mtok_per_month"] * 5.0)
    # with an API this dear, one carrying replica and the spare beat it: (1 + 1) x a replica's cost / price
    assert api["serve_rent_beats_api_mtok_per_month"] == pytest.approx(2 * api["serve_rent_usd_per_replica_month"] / 5.0)


def test_serve_plan_meets_the_targets_and_says_why_others_fail():
    result = core.serve_plan({"model": "Llama-3-70B", "requests_per_s": 20, "prompt_tokens": 1000, "output_tokens": 200,
                              "ttft_slo_ms": 1000, "tpot_slo_ms": 40},
                             gpus=["H100-SXM", "A100-80GB-SXM", "L40S", "RTX-4090", "H200-SXM"])
    best = result["recommended"]
    assert best is not None and best.ok
    assert best.tpot_ms <= 40 and best.ttft_ms <= 1000
    assert best.replicas * best.requests_per_s_per_replica >= 20
    acceptable = [o for o in result["options"] if o.ok]
    assert all(o.tpot_ms <= 40 and o.ttft_ms <= 1000 for o in acceptable)
    assert best.usd_per_month <= min(o.usd_per_month for o in acceptable) * 1.05 + 1e-9
    reasons = [r for o in result["options"] for r in o.reasons]
    assert any(r.startswith("does not fit: weights") for r in reasons)  # 70B in bf16 on one 24 GiB card
    assert any(r.startswith("too slow per token:") and "> target 40 ms" in r for r in reasons)
    assert result["choice"] in ("rent", "buy", "api")
    assert "API" in result["recommendation"] and "million tokens a month" in result["recommendation"]
    # every format the search tried is one the GPU runs well: no FP8 on an A100
    assert not any(o.gpu == "A100-80GB-SXM" and o.weights_dtype == "fp8" for o in result["options"])


def test_an_api_cheaper_than_any_setup_is_the_answer():
    result = core.serve_plan({"model": "Llama-3-8B", "requests_per_s": 0.01, "api_model": "groq/llama-3.1-8b-instant"}, gpus=["H100-SXM"])
    assert result["choice"] == "api"
    assert result["recommendation"].startswith("Use the API")


def test_python_plan_with_task_serve():
    result = gpu_tco.plan({"task": "serve", "model": "Llama-3-8B", "requests_per_s": 5}, gpus=["L40S", "RTX-4090"])
    assert result["task"] == "serve" and result["recommended"] is not None
    assert result["recommended"]["gpu"] in ("L40S", "RTX-4090")
    with pytest.raises(core.InputError, match="task"):
        gpu_tco.plan({"task": "dance", "model": "Llama-3-8B"})


@pytest.mark.slow  # command-line runs in processes of their own
def test_command_line_plans_a_serving_scenario():
    """Real runs: plan --task serve with flags named after the inputs (JSON), the serving example as a scenario, and
    estimate --mode infer printing latency and cost."""
    code = ("import sys, json\nfrom gpu_tco.cli import main\n"
            "for argv in " + json.dumps([
                ["plan", "--task", "serve", "--model", "Llama-3-8B", "--requests-per-s", "4", "--prompt-tokens", "500",
                 "--output-tokens", "100", "--ttft-slo-ms", "800", "--tpot-slo-ms", "30", "--gpus", "L40S,RTX-4090", "--json"],
                ["plan", "--scenario", str(ROOT / "examples" / "serve-llama3-70b.json"), "--top", "3"],
                ["estimate", "--mode", "infer", "--model", "Llama-3-70B", "--n-gpus", "8", "--gpu", "H100-SXM",
                 "--requests-per-s", "5"],
                ["estimate", "--mode", "infer", "--model", "Llama-3-70B", "--n-gpus", "8", "--gpu", "H100-SXM"]]) + ":\n"
            "    print('=====', main(argv), flush=True)\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    parts = run.stdout.split("=====")
    first = json.loads(parts[0])
    assert first["task"] == "serve" and first["recommended"]["tpot_ms"] <= 30 and first["recommended"]["ttft_ms"] <= 800
    assert first["recommended"]["gpu"] in ("L40S", "RTX-4090")
    assert "gpu-tco plan (serving): Llama-3-70B, 20 requests/s" in parts[1]
    assert "TPOT ms" in parts[1] and "million tokens a month" in parts[1]
    assert "time to first token at the planned load (ms)" in parts[2] and "rented: USD per million output tokens" in parts[2]
    # the demand given is named, and plan's different answer says what it chose differently
    assert "serving the demand given, 5 requests/s" in parts[2]
    assert "gpu-tco plan on the same demand recommends: " in parts[2] and "instead of" in parts[2]
    # no demand given: no serving cost, and the output says why
    assert "no demand given" in parts[3] and "USD per month" not in parts[3]
    # the JSON output labels the demand its serving quantities are for
    labelled = subprocess.run([sys.executable, "-m", "gpu_tco", "estimate", "--mode", "infer", "--model", "Llama-3-8B", "--json"],
                              capture_output=True, text=True, timeout=120)
    assert json.loads(labelled.stdout)["assumptions"]["serving_demand"].startswith("default (not given")
    assert "Traceback" not in run.stderr


# ---------------------------------------------------------------------------
# the serving model against published serving measurements (core/data/measurements.csv; docs/calibration.md)

def _serving_rows(*ids):
    from gpu_tco.core import calibration as cal
    rows = {m.id: m for m in cal.serving_measurements()}
    return [rows[i] for i in ids]


@pytest.mark.parametrize("row_id, tolerance", [
    # GPUStack performance lab, vLLM 0.11.0, Qwen3-8B bf16 on one H100 SXM, ShareGPT (233 prompt / 221 output tokens):
    # mean TPOT 7.28 ms at 1 concurrent request, 7.71 ms at 8 (2025-11)
    ("gpustack-qwen3-8b-h100-c1-tpot", 0.15), ("gpustack-qwen3-8b-h100-c8-tpot", 0.15),
    # NVIDIA TensorRT-LLM 1.0 performance overview (2025-09), 1,000/1,000 tokens, offline: Llama 3.1 405B FP8 on
    # 8x H100 2,919 output tokens/s; Llama 3.3 70B NVFP4 on one B200 7,007; Llama 4 Maverick FP8 on 8x H200 31,782
    ("trtllm-llama31-405b-8xh100-1000-1000", 0.25), ("trtllm-llama33-70b-b200-fp4-1000-1000", 0.25),
    ("trtllm-llama4-maverick-8xh200-1000-1000", 0.25),
])
def test_serving_estimates_match_published_runs(row_id, tolerance):
    from gpu_tco.core import calibration as cal
    (m,) = _serving_rows(row_id)
    ((_, predicted, error),) = cal.serving_errors(rows=[m])
    assert abs(error) <= tolerance, f"{row_id}: {predicted:,.4g} against {m.value:,.4g} ({error:+.1%})"


@pytest.mark.slow  # over 0.45 s
def test_family_factors_are_kept_only_when_held_out_sources_confirm_them():
    """The fit per GPU family is checked by leaving each source out; the catalog (gpus.csv) holds the factors only
    when that beats the global efficiencies, and holds what the decision says."""
    from gpu_tco.core import calibration as cal
    rows = cal.serving_measurements()
    assert len(rows) >= 15 and len({m.source for m in rows}) >= 3
    decision = cal.serving_family_decision(rows)
    with_, without = decision["with"]["serving throughput"]["median"], decision["without"]["serving throughput"]["median"]
    assert decision["supported"] == (with_ < without)
    assert set(decision["fitted"]) >= {"decode:hopper", "prefill:hopper"}
    gpus = core.catalog.tables()["gpus"]
    for name in gpus.names:
        for what, column in (("decode", "decode_efficiency_factor"), ("prefill", "prefill_efficiency_factor")):
            expected = decision["factors"].get(f"{what}:{cal.family(name)}", 0)
            assert float(gpus.row(name)[column] or 0) == pytest.approx(round(expected, 3)), (name, column)
    # every serving row is predicted (a finite time or rate) and listed in docs/calibration.md
    text = cal.DOC_PATH.read_text(encoding="utf-8")
    for m, predicted, _ in cal.serving_errors(rows=rows):
        assert predicted > 0 and np.isfinite(predicted) and m.id in text


def test_the_api_compared_with_serves_the_model():
    """Without api_model the answer compares with the cheapest catalog API serving this model (or its architecture)."""
    result = core.serve_plan({"model": "Llama-3-8B", "requests_per_s": 1}, gpus=["L4"])
    assert result["api"]["name"] == core.serving.api_for_model("Llama-3-8B")
    row = core.catalog.tables()["apis"].row(result["api"]["name"])
    assert core.catalog.tables()["models"].row(row["catalog_model"])["hidden"] == 4096  # an 8B Llama, not a 70B
    named = core.serve_plan({"model": "Llama-3-8B", "requests_per_s": 1, "api_model": "together/Llama-3.1-8B-Instruct-Turbo"},
                            gpus=["L4"])
    assert named["api"]["name"] == "together/Llama-3.1-8B-Instruct-Turbo" and named["api"]["usd_per_mtok_output"] == 0.18


def test_curves_for_the_charts_come_from_the_same_formulas():
    """Latency against batch and cost per million tokens against monthly volume, for the form's and the workbook's
    charts: time per token grows with the batch, throughput too; owned and rented cost per token fall with volume to
    a full replica's cost per token; the API's price stays flat."""
    result = core.serve_plan({"model": "Llama-3-8B", "requests_per_s": 5}, gpus=["L40S"])
    option = result["recommended"]
    curves = core.serve_curves(result["given"], option)
    lat = curves["latency"]
    assert lat["batch"][0] == 1 and all(b2 > b1 for b1, b2 in zip(lat["batch"], lat["batch"][1:]))
    assert all(t2 >= t1 for t1, t2 in zip(lat["tpot_ms"], lat["tpot_ms"][1:]))
    assert all(x2 > x1 for x1, x2 in zip(lat["output_tokens_per_s"], lat["output_tokens_per_s"][1:]))
    one = core.evaluate({**core.serve_option_inputs(result["given"], option), "max_num_seqs": 1, "ttft_slo_ms": 0,
                         "tpot_slo_ms": 0}, outputs=("tpot_ms",))
    assert lat["tpot_ms"][0] == pytest.approx(one["tpot_ms"])
    cost = curves["cost"]
    rent = cost["rent_usd_per_mtok" if option.acquire == "rent" else "buy_usd_per_mtok"]  # the recommended way
    assert rent[0] > 10 * rent[-1]  # one replica's month spread over 1 Mtok, against full replicas
    replica_mtok = (option.requests_per_s_per_replica * 1200 * 3600 * result["inputs"]["hours_per_day"]
                    * result["inputs"]["days_per_month"] / 1e6)  # a full replica's tokens per month
    volume = cost["mtok_per_month"][-1]
    # whole replicas carrying the volume at the target utilization (0.8), plus the spare one
    full = option.usd_per_month / option.replicas * (math.ceil(volume / (0.8 * replica_mtok)) + 1) / volume
    # owned, a larger fleet spreads its one-off setup over more GPUs: a little cheaper per token at full volume
    assert rent[-1] == pytest.approx(full, rel=1e-9 if option.acquire == "rent" else 0.03)
    assert len(set(round(x, 12) for x in cost["api_usd_per_mtok"])) == 1


def test_an_owned_deployment_is_bought_as_one_fleet_whose_replicas_share_servers():
    """Owning a deployment of one-GPU replicas costs what the same whole servers cost bought together: the replicas
    share servers, power and the one-off setup, and the servers are bought whole (8 GPUs for an H100 HGX board)."""
    job = {"task": "serve", "model": "Llama-3.1-8B", "gpu": "H100-SXM", "n_gpus": 1, "buy": 1, "weights_dtype": "bf16",
           "requests_per_s": 30, "prompt_tokens": 1000, "output_tokens": 200, "hours_per_day": 24}
    outs = ("serve_gpus", "own_gpus", "own_capital_usd", "own_usd_per_gpu_hour", "own_nameplate_kw", "serve_servers")
    serve = core.evaluate(job, outputs=outs)
    assert 1 < serve["serve_gpus"] <= 8 and serve["serve_servers"] == 1
    fleet = int(serve["own_gpus"])
    assert fleet == 8  # one whole server, some of its GPUs free
    bought_together = core.evaluate({**job, "task": "train", "n_gpus": fleet}, outputs=outs)
    for name in ("own_capital_usd", "own_usd_per_gpu_hour", "own_nameplate_kw"):
        assert serve[name] == pytest.approx(bought_together[name], rel=1e-12), name
    # a full 8-GPU server draws 10.2 kW (NVIDIA DGX H100 datasheet); each GPU pays its slot: 700 W + 575 W
    assert serve["own_nameplate_kw"] == pytest.approx(fleet * 1.275)


def test_a_mig_slice_pays_its_share_of_the_cards_server_slot():
    """Seven 1g.10gb slices of an H100 draw what the whole card in its server slot draws (700 W + 575 W)."""
    slice_kw = core.evaluate({"gpu": "H100-SXM MIG 1g.10gb", "n_gpus": 1, "buy": 1}, outputs=("own_nameplate_kw",))["own_nameplate_kw"]
    card_kw = core.evaluate({"gpu": "H100-SXM", "n_gpus": 1, "buy": 1}, outputs=("own_nameplate_kw",))["own_nameplate_kw"]
    assert 7 * slice_kw == pytest.approx(card_kw) and card_kw == pytest.approx(1.275)


def test_a_training_answer_does_not_list_the_serving_demand_that_sizes_an_owned_deployment():
    """The owned cost per GPU-hour reads the deployment's GPUs when serving (own_gpus): the inputs a door lists for
    a training job leave that branch out, a serving job's include it, and the generated code follows both."""
    from gpu_tco.core.codegen import inputs_of
    assert "requests_per_s" not in inputs_of(["own_usd_per_gpu_hour"])
    assert {"requests_per_s", "prompt_tokens"} <= set(inputs_of(["own_usd_per_gpu_hour"], task="serve"))
    assert "requests_per_s" in inputs_of(["own_usd_per_gpu_hour"], task=None)
    serve = {"task": "serve", "model": "Llama-3.1-8B", "gpu": "H100-SXM", "n_gpus": 1, "buy": 1}
    low, high = (core.evaluate({**serve, "requests_per_s": rps}, outputs=("own_gpus",))["own_gpus"] for rps in (1, 200))
    assert high > low >= 1


@pytest.mark.slow  # a command-line run
def test_estimate_for_inference_says_no_price_where_a_gpu_has_none_never_zero():
    out = subprocess.run([sys.executable, "-m", "gpu_tco", "estimate", "--mode", "infer", "--gpu", "H800-SXM", "--n-gpus", "8",
                          "--model", "Llama-3-70B", "--requests-per-s", "10"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    rows = {line.rsplit("  ", 1)[0].strip(): line.rsplit("  ", 1)[1].strip() for line in out.stdout.splitlines()
            if line.startswith(("rented:", "owned:"))}
    assert rows and set(rows.values()) == {"no price"}, rows
    assert "no rental offer with a price for H800-SXM" in out.stdout


def test_estimate_of_a_replica_that_meets_no_target_shows_no_cost(capsys):
    """llama.cpp's layer split on 2 H100s generates a 70B model's tokens slower than a 50 ms target: the replica serves
    nothing, so the estimate shows no replicas, load or cost ("none: ..."), never $0 or a load of 1e9."""
    from gpu_tco.cli import main
    from gpu_tco.core import SERVES_NOTHING
    code = main(["estimate", "--mode", "infer", "--model", "Llama-3-70B", "--gpu", "H100-SXM", "--n-gpus", "2",
                 "--engine", "llamacpp", "--requests-per-s", "1", "--tpot-slo-ms", "50"])
    out = capsys.readouterr().out
    assert code == 0
    rows = {line[:46].strip(): line[46:].strip() for line in out.splitlines() if "  " in line}
    for label in ("replicas", "load with one replica down", "rented: USD per month", "rented: USD per million output tokens"):
        assert rows[label] == SERVES_NOTHING, (label, rows.get(label))
    assert float(rows["API: USD per month for the same tokens"].replace(",", "")) > 0
