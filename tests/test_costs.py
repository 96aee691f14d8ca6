"""The cost model: seed articles reproduced under their own assumptions, published TCO
methods, no double counting, properties, the planner and the cost CLI.

The articles (full citations in gpu_tco.core.references): AiManual's 4090-versus-AWS calculator
(aimanual_4090_h100, the first article gpu-tco reproduced), AiManual's rental tactics (aimanual_cheap_gpus), the
CSDN A100/4090 cost note (csdn_a100_4090) and APIYI's GPU-selection guide (apiyi_gpu_selection);
presets in core/presets.py.
"""
from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpu_tco import core
from gpu_tco.core import catalog
from gpu_tco.core.planner import plan
from gpu_tco.core.presets import PRESETS, preset

ROOT = Path(__file__).resolve().parents[1]


def ev(name: str, **over) -> dict:
    return core.evaluate({**PRESETS[name], **over})


# ---------------------------------------------------------------------------
# AiManual (aimanual_4090_h100): 4090 farm versus AWS p5.48xlarge, 7 days of Llama 3 70B fine-tuning

def test_seed000_farm_investment_energy_and_cooling():
    farm = ev("aimanual-4090-farm")
    assert farm["own_capital_usd"] == 17000  # 6 cards x $2,000 + $5,000 other hardware
    assert farm["own_avg_kw"] * 168 == pytest.approx(537.6)  # (6 x 450 + 500) W x 24 h x 7 days = 537.6 kWh
    electricity = farm["own_avg_kw"] * 168 * 0.15
    assert electricity == pytest.approx(80.64)
    # the article's "cooling = 30 % of electricity" is a PUE of 1.3: energy x PUE = electricity + cooling
    assert farm["own_energy_usd_per_gpu_hour"] * 6 * 168 == pytest.approx(80.64 + 24.192)  # operational 104.832
    assert farm["own_capital_usd"] + farm["own_energy_usd_per_gpu_hour"] * 6 * 168 == pytest.approx(17104.832)


def test_seed000_aws_week_with_ten_percent_storage():
    aws = ev("aimanual-aws-p5")
    assert aws["rent_billed_hours"] == 168
    assert aws["rent_compute_usd"] == pytest.approx(16517.76)  # 168 h x $98.32
    assert aws["rent_storage_usd"] == pytest.approx(1651.776)  # 10 %
    assert aws["rent_total_usd"] == pytest.approx(18169.536)


def test_seed000_days_to_roi_and_where_it_goes_wrong():
    farm, aws = ev("aimanual-4090-farm"), ev("aimanual-aws-p5")
    daily_aws = aws["rent_total_usd"] / 7
    assert daily_aws == pytest.approx(2595.648)
    seed_days = farm["own_capital_usd"] / daily_aws
    assert seed_days == pytest.approx(6.549, abs=1e-3)  # the article: "pays back after 6.5 days of training"
    # 1. it ignores the farm's own power bill: our payback (rent avoided minus running cost) is longer
    ours = ev("aimanual-4090-farm", usd_per_gpu_hour_rented=98.32 * 1.1 / 6)  # the node's price spread over the 6 cards
    assert ours["payback_months"] * 30.4375 == pytest.approx(6.587, abs=1e-3)
    assert ours["verdict_code"] == 1  # still "within a month" under the article's assumptions
    # 2. the price it uses fell 44 % in June 2025: at today's $55.04 the payback takes 11.7 days
    now = core.evaluate({**PRESETS["aimanual-aws-p5"], "offer": "AWS p5.48xlarge"})
    assert farm["own_capital_usd"] / (now["rent_total_usd"] / 7) == pytest.approx(11.70, abs=0.01)
    # 3. a day of six 4090s is not a day of an 8x H100 node: the same LoRA job takes far longer on the farm
    job = {"model": "Llama-3-70B", "method": "lora"}
    h100 = core.evaluate({**job, "gpu": "H100-SXM", "n_gpus": 8})
    farm_job = core.evaluate({**job, "gpu": "RTX-4090", "n_gpus": 6})
    # 8 x 989 dense TFLOPS at the H100's calibrated MFU against 6 x 165 at the 4090's, the PCIe transfers timed: nearly 4x longer
    assert farm_job["train_hours"] / h100["train_hours"] > 3.5
    assert not farm_job["fits_train"]  # and 6 x 24 GB does not hold a 70B LoRA fine-tune at all (140 GB is weights only)


# ---------------------------------------------------------------------------
# AiManual (aimanual_cheap_gpus): rental tactics

def test_seed001_hourly_arithmetic():
    one = core.evaluate(gpu="H100-SXM", n_gpus=1, usd_per_gpu_hour_rented=8, job_hours=72, debug_overhead_pct=0, model_load_minutes=0, storage_gb=0)
    assert one["rent_total_usd"] == pytest.approx(576)
    four = core.evaluate(gpu="H100-SXM", n_gpus=4, usd_per_gpu_hour_rented=8, job_hours=72, debug_overhead_pct=0, model_load_minutes=0, storage_gb=0)
    assert four["rent_total_usd"] == pytest.approx(2304)


def test_seed001_a100_72h_versus_h100_24h():
    a100, h100 = ev("aimanual-rental-a100-72h"), ev("aimanual-rental-h100-24h")
    assert a100["rent_total_usd"] == pytest.approx(345.60)
    assert h100["rent_total_usd"] == pytest.approx(336.00)
    assert a100["rent_total_usd"] - h100["rent_total_usd"] == pytest.approx(9.60)
    # The article assumes H100 is exactly 3x faster.  Our dense-BF16 x MFU ratio for the same job: the peaks differ
    # 3.17x (989.4 / 312), but the calibrated MFU of the H100 is lower (0.46 against 0.71: LLM Foundry, torchtitan, NeMo
    # and the Hugging Face runs on A100s): under 2x, well short of the article's 3x
    job = {"model": "Llama-3-70B", "method": "lora", "n_gpus": 4}
    ratio = core.evaluate({**job, "gpu": "A100-80GB-SXM"})["train_hours"] / core.evaluate({**job, "gpu": "H100-SXM"})["train_hours"]
    assert 1.7 < ratio < 2.5


@pytest.mark.slow  # command-line runs in processes of their own
def test_seed001_marketplace_commission_from_a_user_offer_file(tmp_path):
    # users add offers in their own file; a 20 % commission turns $3.00 into $3.60
    (tmp_path / "offers.csv").write_text(
        "name,gpu,gpus_per_instance,usd_per_gpu_hour,billing_increment_s,commission_pct,price_type\n"
        "seed001 marketplace H100,H100 SXM5 80GB,1,3.00,1,20,marketplace\n")
    out = subprocess.run([sys.executable, "-m", "gpu_tco", "breakeven", "--offer", "seed001 marketplace H100", "--json"],
                         capture_output=True, text=True, cwd=ROOT, timeout=120,
                         env={**os.environ, "GPU_TCO_CONFIG_DIR": str(tmp_path)})
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["inputs"]["gpu"] == "H100-SXM"  # the offer set the GPU (canonical name from the file's alias)
    assert data["results"]["rent_usd_per_gpu_hour"] == pytest.approx(3.60)


def test_seed001_model_loading_cost_is_inconsistent():
    # "5-7 minutes to load 70B onto 4x H100 at $4/h per card = $2.33": 7 minutes cost $1.87
    base = dict(gpu="H100-SXM", n_gpus=4, usd_per_gpu_hour_rented=4, job_hours=1, debug_overhead_pct=0, storage_gb=0,
                model_load_minutes=7)
    one_load = core.evaluate(base, restarts=1)["rent_total_usd"] - core.evaluate(base, restarts=0)["rent_total_usd"]
    assert one_load == pytest.approx(16 * 7 / 60)  # $1.87
    assert 2.33 / 16 * 60 == pytest.approx(8.74, abs=0.01)  # the article's $2.33 implies 8.7 minutes
    ten = core.evaluate(base, restarts=10)["rent_total_usd"] - core.evaluate(base, restarts=0)["rent_total_usd"]
    assert ten == pytest.approx(18.67, abs=0.01)  # the article: $23.30 for 10 restarts


def test_seed001_local_4x4090_breaks_even_after_700_hours():
    local = ev("aimanual-rental-local-4x4090")
    assert local["own_capital_usd"] == 6000
    assert local["own_fixed_usd"] == pytest.approx(1000)  # "electricity, cooling, risks: $1000 a year"
    assert local["breakeven_hours"] == pytest.approx(700)  # (6000 + 1000) / $10 per hour
    assert local["breakeven_hours"] / 24 == pytest.approx(29.17, abs=0.01)  # "29 days of continuous training"
    # Without the resale value or the power actually drawn, 700 h is pessimistic for owning; with our defaults
    # (30 %/year value loss, metered energy at 0.15 $/kWh, colocation) renting 4x 4090 at $2.50/GPU-h:
    ours = core.evaluate(gpu="RTX-4090", n_gpus=4, purchase_usd_per_gpu=1500, usd_per_gpu_hour_rented=2.5, months=12)
    assert 0 < ours["breakeven_hours"] < 8766


def test_seed001_naive_versus_smart_120b_budget():
    naive, smart = ev("aimanual-rental-naive-120b"), ev("aimanual-rental-smart-120b")
    assert naive["rent_total_usd"] == pytest.approx(1126.80)  # 5 h prep $90 + 48 h $864 + 20 % debugging $172.80
    cpu_filtering = 10 * 0.10
    assert smart["rent_total_usd"] + cpu_filtering == pytest.approx(375.40)  # 72 h x $5.20 + $1
    saving = 1 - (smart["rent_total_usd"] + cpu_filtering) / naive["rent_total_usd"]
    assert saving == pytest.approx(0.667, abs=1e-3)
    # where it goes wrong: "LoRA cuts training time by 40 %" is listed but not applied, and the smart plan
    # drops the 20 % debugging allowance the naive plan carried
    lora = ev("aimanual-rental-smart-120b", job_hours=72 * 0.6)
    assert lora["rent_total_usd"] + cpu_filtering == pytest.approx(225.64)
    fair = ev("aimanual-rental-smart-120b", debug_overhead_pct=20)
    assert fair["rent_total_usd"] == pytest.approx(449.28)


# ---------------------------------------------------------------------------
# CSDN (csdn_a100_4090): an 8x H100 server amortized over three years

def test_seed002_server_per_hour():
    s = ev("csdn-h100-server")
    hours = 3 * 365 * 24
    assert s["own_hours_used"] == pytest.approx(hours)
    assert s["own_annual_capital_usd"] * 3 / hours == pytest.approx(11.4, abs=0.05)  # $300k / 3 years
    assert s["own_energy_usd_per_gpu_hour"] * 8 == pytest.approx(1.0)  # 10 kW x $0.10
    assert s["own_fixed_usd_per_month"] * 12 / (365 * 24) == pytest.approx(1.0, abs=0.05)  # $1,500/rack-month, 2 servers
    assert s["own_usd_per_gpu_hour"] * 8 == pytest.approx(13.4, abs=0.05)  # "13.4 dollars an hour"
    # GPT-3.5 Turbo's $0.002 / 1K tokens as the API price: self-hosting needs this many million tokens a month
    api = ev("csdn-h100-server", api_usd_per_mtok=2.0, measured_tokens_per_s=10_000)
    assert api["selfhost_breakeven_mtok_per_month"] > 0


# ---------------------------------------------------------------------------
# APIYI (apiyi_gpu_selection): purchase + power TCO and cost per 1K tokens

@pytest.mark.parametrize("label,tco,power,daily,per_1k", [
    ("h100-80gb", 36814.40, 1814.40, 1.68, 0.000005),
    ("a100-80gb", 19036.80, 1036.80, 0.96, 0.000004),
    ("l40s", 8907.20, 907.20, 0.84, 0.000003),
    ("rtx-4090", 2966.40, 1166.40, 1.08, 0.000001),
])
def test_seed004_tco_and_cost_per_1k_tokens(label, tco, power, daily, per_1k):
    t = ev(f"apiyi-{label}-tco")
    assert t["own_tco_usd"] == pytest.approx(tco)
    assert t["own_energy_usd"] == pytest.approx(power)
    assert t["own_energy_usd_per_gpu_hour"] * 20 == pytest.approx(daily)
    p = ev(f"apiyi-{label}-per-token")
    assert round(p["decode_usd_per_mtok_own"] / 1000, 6) == pytest.approx(per_1k)
    # where it goes wrong: 30-day months undercount a year by 1.4 %, and per-token cost assumes 24 h/day at full
    # throughput while the TCO assumes 20 h/day; at the TCO's own 20 h/day the capital share per token is 24/20 higher
    real = ev(f"apiyi-{label}-tco")
    assert real["decode_usd_per_mtok_own"] > p["decode_usd_per_mtok_own"] * 1.1


# ---------------------------------------------------------------------------
# published TCO methods

def test_epoch_ai_amortized_capex_plus_energy_per_gpu_hour_within_2pct():
    """Cottier et al. 2024 (arXiv 2405.21015), as coded in epoch-research/training-cost-trends
    training_cost_trends/cost_estimation.py: per chip-hour = server value per chip x 0.14 ln(10) / 8766,
    interconnect = that x 0.19 / 0.81, energy = chip TDP x (10.2 kW / 8 / 0.7) x 0.75 x PUE x price."""
    price, overhead, pue, usd_kwh = 33569, 1.64, 1.25, 0.0826  # Epoch's H100 card price, average server overhead, 2025 US industrial
    value = price * overhead
    rate = 0.14 * math.log(10)  # hardware value falls 0.14 orders of magnitude per year
    hardware = value * rate / (24 * 365.25)
    epoch = hardware / (1 - 0.19) + 0.7 * (10.2 / 8 / 0.7) * 0.75 * pue * usd_kwh
    ours = core.evaluate(
        gpu="H100-SXM", purchase_usd_per_gpu=price, n_gpus=16, gpus_per_server=8, server_overhead_pct=64, cluster_network_pct=19, setup_hours=0,
        colo_usd_per_kw_month=0, maintenance_pct_per_year=0, auto_system_power=0, system_w_per_server=8 * (1275 - 700),
        gpu_load_factor=0.75, pue=pue, usd_per_kwh=usd_kwh, depreciation="exponential",
        value_loss_pct_per_year=100 * (1 - math.exp(-rate)), months=1, hours_per_day=24)
    assert ours["own_usd_per_gpu_hour"] == pytest.approx(epoch, rel=0.02)
    # Epoch's energy line alone is reproduced exactly (same draw, PUE and price)
    assert ours["own_energy_usd_per_gpu_hour"] == pytest.approx(0.7 * (10.2 / 8 / 0.7) * 0.75 * pue * usd_kwh, rel=1e-12)


@pytest.mark.parametrize("gpu,published_kw", [("A100-80GB-SXM", 6.5), ("H100-SXM", 10.2), ("H200-SXM", 10.2), ("B200", 14.3)])
def test_eight_owned_gpus_draw_the_vendors_eight_gpu_server_at_most(gpu, published_kw):
    """NVIDIA's DGX user guides give each 8-GPU system's maximum power: DGX A100 6.5 kW
    (https://docs.nvidia.com/dgx/dgxa100-user-guide/introduction-to-dgxa100.html), DGX H100/H200 10.2 kW
    (https://www.nvidia.com/en-us/data-center/dgx-h100/), DGX B200 14.3 kW
    (https://docs.nvidia.com/dgx/dgxb200-user-guide/introduction-to-dgxb200.html).  One figure per slot for every
    generation (575 W, the DGX H100's) put 8 B200 at 12.6 kW and 8 A100 at 7.8 kW; power sets both the energy and the
    colocation (per kW) of owning."""
    r = core.evaluate(gpu=gpu, n_gpus=8, buy=1)
    assert r["own_nameplate_kw"] == pytest.approx(published_kw, rel=1e-12)
    half = core.evaluate(gpu=gpu, n_gpus=4, buy=1)  # a half-filled server draws for the slots in use
    assert half["own_nameplate_kw"] == pytest.approx(published_kw / 2, rel=1e-12)
    mine = core.evaluate(gpu=gpu, n_gpus=8, buy=1, auto_system_power=0, system_w_per_server=3000)  # the user's own figure wins
    assert mine["own_nameplate_kw"] == pytest.approx((8 * float(catalog.tables()["gpus"].row(gpu)["tdp_w"]) + 3000) / 1000)


def test_a_newer_or_smaller_card_never_gets_an_odd_server_power():
    """Without its vendor's figure a card takes the nearest one, so the order holds: 8 B300 (1,100 W, the B200's server
    class) draw more than 8 B200, and 8 A100 PCIe (300 W, the DGX A100's generation) less than a DGX A100."""
    kw = {g: core.evaluate(gpu=g, n_gpus=8, buy=1)["own_nameplate_kw"] for g in ("B200", "B300", "A100-80GB-PCIe", "A100-80GB-SXM")}
    assert kw["B300"] > kw["B200"] == pytest.approx(14.3)
    assert kw["A100-80GB-PCIe"] < kw["A100-80GB-SXM"] == pytest.approx(6.5)


@pytest.mark.parametrize("years,published", [(3, 1.64), (5, 0.98)])
def test_computetape_depreciation_example_within_2pct(years, published):
    """computetape.com 'How fast does an H100 depreciate?': $30,000 straight-line over 3 (5) years at ~70 %
    utilization = $1.64 ($0.98) per hour, hardware only."""
    r = core.evaluate(gpu="H100-SXM", n_gpus=1, purchase_usd_per_gpu=30000, server_overhead_pct=0, setup_hours=0,
                      usd_per_kwh=0, colo_usd_per_kw_month=0, maintenance_pct_per_year=0, depreciation="straight_line",
                      residual_pct=0, life_years=years, months=12 * years, hours_per_day=24 * 0.7)
    assert r["own_usd_per_gpu_hour"] == pytest.approx(published, rel=0.02)


# ---------------------------------------------------------------------------
# no double counting

def test_capital_is_counted_once():
    # with every running cost and the resale value at zero, the TCO is the capital: not capital + depreciation
    bare = dict(preset("csdn-h100-server"), usd_per_kwh=0, rack_usd_per_month=0)
    r = core.evaluate(bare)
    assert r["own_tco_usd"] == pytest.approx(r["own_capital_usd"])
    assert r["own_annual_capital_usd"] * 3 == pytest.approx(r["own_capital_usd"])
    # in general: TCO = capital + setup + energy + fixed - residual, and the hourly cost rebuilds it exactly
    d = core.evaluate(gpu="A100-80GB-SXM", n_gpus=16)
    assert d["own_tco_usd"] == pytest.approx(d["own_capital_usd"] + d["own_setup_usd"] + d["own_energy_usd"]
                                             + d["own_fixed_usd"] - d["own_residual_usd"], rel=1e-12)
    assert d["own_usd_per_gpu_hour"] * 16 * d["own_hours_used"] == pytest.approx(d["own_tco_usd"], rel=1e-12)
    # buying a job that uses the whole period costs the whole TCO, once
    whole = core.evaluate(gpu="A100-80GB-SXM", n_gpus=16, buy=1, job_hours=d["own_hours_used"], debug_overhead_pct=0, model_load_minutes=0)
    assert whole["option_cost_usd"] == pytest.approx(d["own_tco_usd"], rel=1e-12)


def test_tokens_are_counted_once():
    one = core.evaluate(epochs=1, model_load_minutes=0)
    three = core.evaluate(epochs=3, model_load_minutes=0)
    assert three["train_tokens_total"] == 3 * one["train_tokens_total"]
    assert three["train_hours"] == pytest.approx(3 * one["train_hours"], rel=1e-12)
    assert three["option_usd_per_mtok_train"] == pytest.approx(one["option_usd_per_mtok_train"], rel=0.01)  # billing rounding
    # the start-up (loading the model) is paid once per start, not once per epoch
    started = core.evaluate(epochs=3)
    assert started["job_wall_hours"] - three["job_wall_hours"] == pytest.approx(6 / 60, rel=1e-9)
    r = core.evaluate(job_hours=10, debug_overhead_pct=0, storage_gb=0)
    assert r["option_usd_per_mtok_train"] * r["train_tokens_total"] / 1e6 == pytest.approx(r["option_cost_usd"], rel=1e-12)


# ---------------------------------------------------------------------------
# renting rules

def test_whole_instances_billing_increments_and_spot_rework():
    node = core.evaluate(offer="AWS p5.48xlarge", n_gpus=5, job_hours=10, debug_overhead_pct=0, model_load_minutes=0, storage_gb=0)
    assert node["rent_instances"] == 1 and node["rent_billed_gpu_hours"] == 80  # 5 GPUs still rent a whole 8-GPU node
    minute = core.evaluate(offer="Lambda 1x H100 SXM", n_gpus=1, job_hours=1.001, debug_overhead_pct=0, model_load_minutes=0, storage_gb=0)
    assert minute["rent_billed_hours"] == pytest.approx(61 / 60)  # per-minute billing rounds 60.06 min up to 61
    spot = core.evaluate(offer="AWS p5.48xlarge spot", job_hours=10, debug_overhead_pct=0, model_load_minutes=0, spot_rework_pct=25, storage_gb=0)
    assert spot["rent_hours_needed"] == pytest.approx(12.5)
    od = core.evaluate(offer="AWS p5.48xlarge", job_hours=10, debug_overhead_pct=0, model_load_minutes=0, spot_rework_pct=25, storage_gb=0)
    assert od["rent_hours_needed"] == pytest.approx(10)
    night = core.evaluate(offer="AWS p5.48xlarge", off_peak_discount_pct=30)
    assert night["rent_usd_per_gpu_hour"] == pytest.approx(6.88 * 0.7)


def test_every_offer_row_has_a_source_a_date_and_a_catalog_gpu():
    offers = catalog.tables()["offers"]
    gpus = set(catalog.tables()["gpus"].names)
    for row in offers.rows:
        if row["name"] == "none":
            continue
        assert row["source"] and row["as_of"], row["name"]
        assert row["gpu"] in gpus
        assert row["usd_per_gpu_hour"] > 0
        if row["usd_per_instance_hour"]:
            assert row["usd_per_instance_hour"] == pytest.approx(row["usd_per_gpu_hour"] * row["gpus_per_instance"], rel=1e-3)
    names = {r["name"] for r in offers.rows}
    # the minimum coverage, including AWS p5 before and after the June 2025 cut
    for needed in ("AWS p5.48xlarge", "AWS p5.48xlarge (before June 2025)", "AWS p4d.24xlarge", "AWS p4de.24xlarge",
                   "AWS g6e.xlarge", "GCP a3-highgpu-8g", "GCP a2-highgpu-8g", "Azure ND96isr H100 v5",
                   "Azure ND96asr A100 v4", "Lambda 8x H100 SXM", "RunPod Community RTX-4090", "vast.ai RTX-4090",
                   "CoreWeave HGX H100", "Nebius H100"):
        assert needed in names
    before, after = offers.row("AWS p5.48xlarge (before June 2025)"), offers.row("AWS p5.48xlarge")
    assert 1 - after["usd_per_instance_hour"] / before["usd_per_instance_hour"] == pytest.approx(0.44, abs=0.005)


# ---------------------------------------------------------------------------
# properties

prices = st.floats(0.1, 50)


@settings(max_examples=60, deadline=None)
@given(prices, prices, st.floats(1, 500), st.integers(1, 64))
def test_rent_cost_grows_with_price_hours_and_gpus(p1, p2, hours, n):
    lo, hi = sorted((p1, p2))
    base = dict(gpu="H100-SXM", job_hours=hours, n_gpus=n)
    a = core.evaluate(base, usd_per_gpu_hour_rented=lo)["rent_total_usd"]
    assert a <= core.evaluate(base, usd_per_gpu_hour_rented=hi)["rent_total_usd"]
    assert a <= core.evaluate(base, usd_per_gpu_hour_rented=lo, job_hours=hours * 1.5)["rent_total_usd"]
    assert a <= core.evaluate(base, usd_per_gpu_hour_rented=lo, n_gpus=n + 1)["rent_total_usd"]


@settings(max_examples=60, deadline=None)
@given(prices, prices, st.sampled_from(["RTX-4090", "H100-SXM", "A100-80GB-SXM"]))
def test_breakeven_falls_as_rental_price_rises(p1, p2, gpu):
    lo, hi = sorted((p1, p2))
    a = core.evaluate(gpu=gpu, usd_per_gpu_hour_rented=lo)
    b = core.evaluate(gpu=gpu, usd_per_gpu_hour_rented=hi)
    if a["breakeven_gpu_hours"] > 0:
        assert 0 < b["breakeven_gpu_hours"] <= a["breakeven_gpu_hours"]
    if a["payback_months"] > 0:
        assert 0 < b["payback_months"] <= a["payback_months"]


@settings(max_examples=60, deadline=None)
@given(st.floats(0.5, 24), st.floats(0.5, 24), st.sampled_from(["RTX-4090", "H100-SXM", "L40S"]))
def test_owned_cost_per_working_hour_falls_with_utilization(h1, h2, gpu):
    lo, hi = sorted((h1, h2))
    assert core.evaluate(gpu=gpu, hours_per_day=hi)["own_usd_per_gpu_hour"] <= \
        core.evaluate(gpu=gpu, hours_per_day=lo)["own_usd_per_gpu_hour"] * (1 + 1e-12)


def test_cumulative_series_crosses_at_the_payback_month():
    from gpu_tco.core.costs import breakeven_series
    job = dict(gpu="RTX-4090", n_gpus=8, usd_per_gpu_hour_rented=0.8, hours_per_day=20)
    r = core.evaluate(job)
    s = breakeven_series(job)
    assert len(s["month"]) == 37 and s["rent_cumulative_usd"][0] == 0
    assert s["own_cumulative_usd"][0] == pytest.approx(r["own_capital_usd"] + r["own_setup_usd"])
    cross = next(m for m, o, rr in zip(s["month"], s["own_cumulative_usd"], s["rent_cumulative_usd"]) if rr >= o)
    assert cross - 1 < r["payback_months"] <= cross


# ---------------------------------------------------------------------------
# the planner

def test_planner_recommends_the_cheapest_acceptable_option_and_explains_rejections():
    result = plan({"deadline_hours": 12})
    options = result["options"]
    ok = [o for o in options if o["ok"]]
    rec = result["recommended"]
    # among options within the cost tolerance (5 %) of the cheapest, fewer machines, then hours, then GPUs win
    cheapest = min(o["cost_usd"] for o in ok)
    assert rec is ok[0] and rec["cost_usd"] <= cheapest * 1.05
    near = [o for o in ok if o["cost_usd"] <= cheapest * 1.05]
    assert all((o["machines"], o["hours"]) >= (rec["machines"], rec["hours"]) for o in near)
    # a one-off job ranks rentals only
    assert all(o["acquire"] == "rent" for o in options)
    assert all(o["hours"] <= 12 for o in ok)
    slow = [o for o in options if any(r.startswith("too slow") for r in o["reasons"])]
    assert slow and all(o["hours"] > 12 for o in slow)
    assert all(o["reasons"] for o in options if not o["ok"])
    # every reported number is the formula layer's value for that option
    row = next(o for o in ok if o["acquire"] == "buy") if any(o["acquire"] == "buy" for o in ok) else rec
    r = core.evaluate(gpu=row["gpu"], n_gpus=row["n_gpus"], buy=1 if row["acquire"] == "buy" else 0,
                      offer=row["offer"] or "auto", deadline_hours=12)
    assert row["cost_usd"] == pytest.approx(r["option_cost_usd"], rel=1e-12)
    assert row["hours"] == pytest.approx(r["option_hours"], rel=1e-12)


def test_planner_counts_start_at_the_minimum_that_fits_and_budget_rejects():
    result = plan({"method": "full", "model": "Llama-3-8B", "budget_usd": 200}, gpus=["H100-SXM", "RTX-4090"])
    for gpu in ("H100-SXM", "RTX-4090"):
        mine = [o for o in result["options"] if o["gpu"] == gpu]
        # the smallest count that fits at the parallel layout the planner chose for this GPU (pipeline stages where
        # they make it fit or lower its GPU-hours)
        layout = {"pipeline_parallel": mine[0]["pipeline_parallel"], "expert_parallel": mine[0]["expert_parallel"]}
        k = core.evaluate(model="Llama-3-8B", method="full", gpu=gpu, **layout)["gpus_needed"]
        counts = sorted({o["n_gpus"] for o in mine})
        # beyond one 8-GPU machine a rental is whole machines: the count rounds up to them
        assert (counts[0] == k if k <= 8 else counts[0] == -(-k // 8) * 8) and all(c >= k for c in counts)
    over = [o for o in result["options"] if any(r.startswith("over budget") for r in o["reasons"])]
    assert over and all(o["outlay_usd"] > 200 for o in over)
    assert all(o["acquire"] == "buy" or o["outlay_usd"] <= 200 for o in result["options"] if o["ok"])


def test_planner_refuses_inputs_it_chooses_itself():
    with pytest.raises(core.InputError, match="gpu: .*chosen by the planner"):
        plan({"gpu": "H100-SXM"})
    with pytest.raises(core.InputError, match='method: unknown "lorra"'):
        plan({"method": "lorra"})


# ---------------------------------------------------------------------------
# the cost command line, in subprocesses

def run(*args):
    return subprocess.run([sys.executable, "-m", "gpu_tco", *args], capture_output=True, text=True, cwd=ROOT, timeout=120)


@pytest.mark.slow
def test_cli_plan_table_and_json():
    out = run("plan", "--model", "Llama-3-8B", "--method", "qlora", "--tokens", "2e8", "--deadline-hours", "24")
    assert out.returncode == 0, out.stderr
    assert "Recommended:" in out.stdout and "rejected" in out.stdout
    data = json.loads(run("plan", "--model", "Llama-3-8B", "--method", "qlora", "--tokens", "2e8", "--json").stdout)
    assert data["recommended"]["ok"] and data["recommended"] == data["options"][0]


@pytest.mark.slow
def test_cli_tco_breakeven_offers_and_presets():
    out = run("tco", "--preset", "csdn-h100-server", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["results"]["own_usd_per_gpu_hour"] * 8 == pytest.approx(13.44, abs=0.01)
    out = run("breakeven", "--gpu", "RTX-4090", "--n-gpus", "8", "--hours-per-day", "20")
    assert out.returncode == 0 and "Verdict:" in out.stdout and "month" in out.stdout
    # the verdict in words, never as a code the reader must look up; the table says how to see a formula
    assert "verdict_code" not in out.stdout and " code " not in out.stdout
    # owning GeForce cards: the driver license's datacenter clause is said (NVIDIA, "License For Customer Use of NVIDIA
    # GeForce Software", 2.1.3, https://www.nvidia.com/en-us/drivers/geforce-license/)
    assert "RTX-4090 is a GeForce card: NVIDIA's GeForce driver license excludes datacenter deployment" in out.stdout
    hint = re.search(r"gpu-tco explain QUANTITY .*\(for example: gpu-tco explain (\w+)\)", out.stdout)
    assert hint and run("explain", hint.group(1)).returncode == 0
    out = run("offers", "--gpu", "h100 sxm")
    assert out.returncode == 0 and "AWS p5.48xlarge" in out.stdout and "RTX-4090" not in out.stdout
    # how old the prices are: the range of the listed offers' dates and the newest one's age in months
    import datetime
    import re as _re
    first, last, months = _re.search(r"Prices as of (\S+) to (\S+): the newest is (\d+) months old", out.stdout).groups()
    shown = [r["as_of"] for r in catalog.tables()["offers"].rows if r["gpu"] == "H100-SXM" and r["as_of"]]
    assert (first, last) == (min(shown), max(shown))
    today = datetime.date.today()
    assert int(months) == (today.year - int(last[:4])) * 12 + today.month - int(last[5:7])
    bad = run("tco", "--preset", "csdn-h100-srever")
    assert bad.returncode == 2 and "did you mean csdn-h100-server" in bad.stderr and "Traceback" not in bad.stderr
    bad = run("breakeven", "--offer", "AWS p5.48xlarge", "--gpu", "RTX-4090")
    assert bad.returncode == 2 and "offer:" in bad.stderr and "Traceback" not in bad.stderr


@pytest.mark.slow  # a command-line run
def test_break_even_names_a_cheaper_listed_offer_than_its_on_demand_reference():
    """Break-even prices renting at the GPU's cheapest on-demand offer (not a marketplace) ("auto"); where a marketplace or another
    offer the planner may recommend sells the same GPUs for less, the answer names it, so the buyer sees both prices.
    No allowed offer that sells the job's GPUs is cheaper than the one named, and a named offer gets no such line."""
    from gpu_tco.core import cheaper_listed_offer, evaluate, planned_offers
    job = {"gpu": "H100-SXM", "n_gpus": 8}
    best = cheaper_listed_offer(job)
    auto = evaluate(job, outputs=("rent_usd_per_gpu_hour",))["rent_usd_per_gpu_hour"]
    assert best is not None and best["usd_per_gpu_hour"] < auto
    names = [catalog.tables()["offers"].rows[i]["name"] for i in planned_offers()[0][catalog.tables()["gpus"].find("H100-SXM")]]
    r = evaluate({**job, "offer": names}, outputs=("rent_usd_per_gpu_hour", "option_offer_sells", "option_offer_allowed"))
    allowed = [p for p, s, a in zip(r["rent_usd_per_gpu_hour"], r["option_offer_sells"], r["option_offer_allowed"]) if s and a]
    assert best["usd_per_gpu_hour"] == pytest.approx(min(allowed))
    assert evaluate({**job, "offer": best["offer"]}, outputs=("rent_usd_per_gpu_hour",))["rent_usd_per_gpu_hour"] == \
        pytest.approx(best["usd_per_gpu_hour"])
    assert cheaper_listed_offer({**job, "offer": "Nebius H100"}) is None  # the user chose the offer
    out = run("breakeven")
    assert out.returncode == 0 and '--offer "%s" compares buying with it' % best["offer"] in out.stdout


def test_rented_self_hosting_breaks_even_with_an_api_at_rent_over_price():
    """Renting GPUs for the working hours costs a fixed amount a month; an API costs its price per million
    tokens.  Above rent / price the rented GPUs are cheaper, provided they can generate that many tokens."""
    from gpu_tco.core import evaluate, inference_inputs
    outputs = ("selfhost_rent_breakeven_mtok_per_month", "rent_usd_per_month", "serve_capacity_mtok_per_month",
               "rent_usd_per_gpu_hour", "selfhost_breakeven_mtok_per_month")
    job = {"model": "Llama-3-8B", "gpu": "L40S", "n_gpus": 1, "usd_per_gpu_hour_rented": 1.00, "hours_per_day": 24,
           "batch": 64, "context_tokens": 4096, "api_usd_per_mtok": 2.0}
    r = evaluate(job, outputs=outputs)
    assert r["rent_usd_per_month"] == pytest.approx(1 * r["rent_usd_per_gpu_hour"] * 24 * 30.4375)
    assert r["serve_capacity_mtok_per_month"] * 2.0 > r["rent_usd_per_month"]  # the case where renting can win
    volume = r["selfhost_rent_breakeven_mtok_per_month"]
    assert volume == pytest.approx(r["rent_usd_per_month"] / 2.0)
    assert volume * 2.0 == pytest.approx(r["rent_usd_per_month"])  # at the break-even, API bill == rent
    # an API cheaper than the rented GPUs' cost per token at full use: never
    cheap = evaluate({**job, "api_usd_per_mtok": 0.5 * r["rent_usd_per_month"] / r["serve_capacity_mtok_per_month"]},
                     outputs=outputs)
    assert cheap["selfhost_rent_breakeven_mtok_per_month"] == -1
    # fewer hours rented: a smaller bill, so a lower break-even volume
    half = evaluate({**job, "hours_per_day": 12}, outputs=outputs)
    assert half["selfhost_rent_breakeven_mtok_per_month"] == pytest.approx(volume / 2)
    # the Excel function returns the same number
    from gpu_tco.addin.functions import call
    assert call("GPU_API_BREAKEVEN", "Llama-3-8B", "L40S", 1, 2.0, 1.00, 24, 64, 4096) == pytest.approx(volume)
    assert call("GPU_API_BREAKEVEN_OWNED", "Llama-3-8B", "L40S", 1, 2.0, None, None, None, 64, 4096, None) == \
        pytest.approx(evaluate(inference_inputs({k: v for k, v in job.items() if k not in ("usd_per_gpu_hour_rented", "hours_per_day")}),
                               outputs=outputs)["selfhost_breakeven_mtok_per_month"])  # Excel's inference functions: as released


def test_automatic_inputs_are_read_from_the_formulas_and_resolved_by_core():
    """An input whose 0 means "automatic" is one a quantity defines as IF(x > 0, x, fallback); core.auto finds
    each from the expression trees, says where the automatic value comes from, and gives the value in use;
    the sensitivities raise that value, not the 0."""
    from gpu_tco.core.auto import AUTO_BASIS, AUTO_QUANTITY, in_use
    from gpu_tco.core.costs import sensitivities
    from gpu_tco.core.inputs import BY_NAME
    assert AUTO_QUANTITY == {"mfu": "mfu_whole_step", "job_hours": "job_hours_base",
                             "usd_per_gpu_hour_rented": "rent_usd_per_gpu_hour_list",
                             "purchase_usd_per_gpu": "own_purchase_usd_per_gpu", "measured_tokens_per_s": "serve_tokens_per_s",
                             "host_memory_gib_per_gpu": "host_memory_gib_per_gpu_used",
                             "gpus_per_server": "own_server_gpus",
                             "api_usd_per_mtok_input": "serve_api_usd_per_mtok_input",
                             "api_usd_per_mtok_output": "serve_api_usd_per_mtok_output",
                             "pipeline_microbatches": "pipeline_microbatches_used", "concurrency": "serve_concurrency",
                             "engine_step_overhead_us_per_layer": "serve_step_overhead_us_per_layer",
                             "engine_request_overhead_ms": "serve_request_overhead_ms",
                             "engine_bandwidth_factor": "serve_engine_bandwidth_factor",
                             "engine_compute_factor": "serve_engine_compute_factor",
                             "grouped_gemm_efficiency": "serve_grouped_gemm_efficiency",
                             "prefill_queue_share": "serve_prefill_queue_share",
                             "interleaved_prefill_share": "serve_interleaved_prefill_share",
                             "kv_transfer_gb_per_s": "disagg_kv_link_gb_per_s"}
    assert set(AUTO_BASIS) == set(AUTO_QUANTITY) and all(BY_NAME[n].default == 0 for n in AUTO_QUANTITY)
    job = {"gpu": "H100-SXM", "n_gpus": 8, "offer": "AWS p5.48xlarge", "purchase_usd_per_gpu": 30_000}
    used = in_use(job)
    assert "purchase_usd_per_gpu" not in used  # set by the user: its own value
    values = core.evaluate(job, outputs=tuple(AUTO_QUANTITY.values()))
    for name, d in used.items():
        assert d["value"] == pytest.approx(float(values[AUTO_QUANTITY[name]])) and d["value"] > 0
        assert d["short"].startswith("auto: ") and d["text"].startswith(d["short"])
    assert used["usd_per_gpu_hour_rented"]["text"].endswith("the price of AWS p5.48xlarge")
    assert "calibrated for H100-SXM at this count" in used["mfu"]["text"]
    assert used["mfu"]["text"].endswith("a typed value applies to every GPU and count")
    raised = {m["input"]: m["value"] for m in sensitivities(job, top=20)}
    assert raised["mfu"] == pytest.approx(used["mfu"]["value"]) and raised["usd_per_gpu_hour_rented"] > 0


def test_the_automatic_mfu_is_the_one_a_typed_mfu_stands_for():
    """A typed MFU replaces the whole step's work (PaLM's definition: model FLOPs per second over the peak, whatever else
    the step does; Chowdhery et al. 2022, Appendix B), so the automatic value shown for it is the whole step's
    (mfu_whole_step), not the matrix products' efficiency alone (mfu_effective, before the adapters, the optimizer step and
    the memory traffic).  On one GPU, typing the value shown gives the same hours, and the sensitivity that raises it by
    20 % shortens the job by that much; before, the form showed a LoRA job on eight RTX 4090s at 0.81 while it ran at 0.29,
    and typing 0.81 would have cut its hours by nearly two thirds."""
    from gpu_tco.core.auto import in_use
    from gpu_tco.core.costs import sensitivities
    # ZeRO-3's parameter hooks and the tensor-parallel all-reduces, which a typed MFU replaces too, are in the value shown
    for job in ({"model": "Llama-3.1-8B", "method": "lora", "gpu": "RTX-4090", "n_gpus": 1},
                {"model": "Llama-3.1-8B", "method": "qlora", "gpu": "H100-SXM", "n_gpus": 1, "framework": "torchtune"},
                {"model": "Llama-3.2-3B", "method": "full", "gpu": "A100-80GB-SXM", "n_gpus": 1},
                {"model": "Llama-3.1-8B", "method": "full", "gpu": "H200-SXM", "n_gpus": 1, "framework": "deepspeed",
                 "sharding": "zero3"},
                {"model": "Llama-3.1-70B", "method": "full", "gpu": "H100-SXM", "n_gpus": 8, "tensor_parallel": 8}):
        shown = in_use(job)["mfu"]["value"]
        r = core.evaluate(job, outputs=("train_hours", "mfu_effective", "train_mfu_achieved"))
        if job["n_gpus"] == 1:
            assert shown == pytest.approx(float(r["train_mfu_achieved"]))
        assert shown < 0.95 * float(r["mfu_effective"])
        assert float(core.evaluate({**job, "mfu": shown}, outputs=("train_hours",))["train_hours"]) == \
            pytest.approx(float(r["train_hours"]), rel=1e-9)
        raised = next(m for m in sensitivities(job, top=20) if m["input"] == "mfu")
        assert raised["value"] == pytest.approx(shown)
        faster = float(core.evaluate({**job, "mfu": 1.2 * shown}, outputs=("train_hours",))["train_hours"])
        assert faster == pytest.approx(float(r["train_hours"]) / 1.2, rel=1e-9)


def test_owning_beats_an_api_only_within_what_the_setup_can_serve():
    """The volume above which owning beats an API is a volume the setup can generate (serve_capacity_mtok_per_month),
    or -1 (never): 3 H100s serving Llama 3 70B at about 1,100 million tokens a month cannot reach a break-even of
    about 9,000; a dearer API brings the break-even within the capacity."""
    from gpu_tco.core import evaluate
    outputs = ("selfhost_breakeven_mtok_per_month", "serve_capacity_mtok_per_month")
    setup = {"model": "Llama-3-70B", "gpu": "H100-SXM", "n_gpus": 3, "offer": "vast.ai H100-SXM"}
    for api in (0.5, 2.0, 10.0, 40.0, 200.0):
        r = evaluate({**setup, "api_usd_per_mtok": api}, outputs=outputs)
        volume, capacity = float(r["selfhost_breakeven_mtok_per_month"]), float(r["serve_capacity_mtok_per_month"])
        assert volume == -1 or 0 < volume <= capacity, (api, volume, capacity)
    assert evaluate({**setup, "api_usd_per_mtok": 2.0}, outputs=outputs)["selfhost_breakeven_mtok_per_month"] == -1
    assert evaluate({**setup, "api_usd_per_mtok": 200.0}, outputs=outputs)["selfhost_breakeven_mtok_per_month"] > 0


def test_a_rentals_cost_moves_with_its_own_assumptions_only():
    """Raising an owning assumption (hours a day, months, electricity, purchase price) leaves a rental's job cost as it
    was; raising the MFU by 20 % shortens the job by 1/1.2 (the whole job's MFU, LoRA's adapter time included)."""
    from gpu_tco.core import sensitivities
    movers = {m["input"]: m for m in sensitivities({"offer": "vast.ai H100-SXM", "gpu": "H100-SXM", "n_gpus": 8, "buy": 0})}
    assert not {"hours_per_day", "months", "usd_per_kwh", "purchase_usd_per_gpu"} & set(movers)
    assert movers["mfu"]["cost_change_pct"] == pytest.approx(100 * (1 / 1.2 - 1), abs=0.5)
    assert movers["tokens"]["cost_change_pct"] == pytest.approx(20, abs=0.5)


def test_a_preset_counts_its_restarts_but_not_the_first_start():
    """The published cost sheets reproduced as presets count no start; a restart added to one costs its reload."""
    base = preset("aimanual-rental-h100-24h")
    assert core.evaluate(base)["job_wall_hours"] == pytest.approx(24)
    assert core.evaluate(base, restarts=5)["job_wall_hours"] == pytest.approx(24 + 5 * 6 / 60)
    assert core.evaluate(base, count_first_start=1)["job_wall_hours"] == pytest.approx(24.1)
