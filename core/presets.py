"""Named input presets: published articles' scenarios under their own stated assumptions.

Each preset is a plain dict of core inputs, so ``core.evaluate(PRESETS[name])``
reproduces an article's arithmetic with gpu-tco's formulas.  Where an article
is wrong, tests/test_costs.py says how and what the default model gives.
``gpu-tco tco --preset NAME`` (any subcommand) starts from a preset.
"""
from __future__ import annotations

from .errors import InputError
from .text import allowed_hint

# Assumptions that switch off every cost line an article does not count.
_BARE_OWNING = {
    "server_overhead_pct": 0, "other_hardware_usd": 0, "setup_hours": 0, "colo_usd_per_kw_month": 0,
    "rack_usd_per_month": 0, "maintenance_pct_per_year": 0, "gpu_load_factor": 1, "pue": 1,
    "auto_system_power": 0, "system_w_per_server": 0, "depreciation": "straight_line", "residual_pct": 0,
}
_BARE_RENTING = {"debug_overhead_pct": 0, "storage_gb": 0, "egress_gb": 0, "restarts": 0, "count_first_start": 0}

PRESETS: dict[str, dict] = {
    # AiManual, "Decentralised RTX 4090s versus AWS H100" (2025-12-31, references key aimanual_4090_h100):
    # a 4090 farm versus AWS p5 for a 7-day Llama 3 70B fine-tune
    "aimanual-4090-farm": {
        **_BARE_OWNING, "gpu": "RTX-4090", "n_gpus": 6, "purchase_usd_per_gpu": 2000, "other_hardware_usd": 5000,
        "gpus_per_server": 6, "system_w_per_server": 500, "usd_per_kwh": 0.15, "pue": 1.3,  # cooling = 30 % of energy
        "hours_per_day": 24,
    },
    "aimanual-aws-p5": {
        **_BARE_RENTING, "gpu": "H100-SXM", "n_gpus": 8, "offer": "AWS p5.48xlarge (before June 2025)",
        "job_hours": 7 * 24, "storage_pct_of_compute": 10,
    },
    # AiManual, "Cheap GPUs for fine-tuning 120B models" (aimanual_cheap_gpus): prices per GPU-hour as stated
    "aimanual-rental-a100-72h": {**_BARE_RENTING, "gpu": "A100-80GB-SXM", "n_gpus": 4, "usd_per_gpu_hour_rented": 1.20, "job_hours": 72},
    "aimanual-rental-h100-24h": {**_BARE_RENTING, "gpu": "H100-SXM", "n_gpus": 4, "usd_per_gpu_hour_rented": 3.50, "job_hours": 24},
    "aimanual-rental-local-4x4090": {
        **_BARE_OWNING, "gpu": "RTX-4090", "n_gpus": 4, "purchase_usd_per_gpu": 1500, "usd_per_kwh": 0,
        "maintenance_pct_per_year": 100 * 1000 / 6000,  # "electricity, cooling, risks = $1000 a year"
        "months": 12, "life_years": 1, "usd_per_gpu_hour_rented": 10 / 4, "hours_per_day": 24,
    },
    "aimanual-rental-naive-120b": {
        **_BARE_RENTING, "gpu": "H100-SXM", "n_gpus": 4, "usd_per_gpu_hour_rented": 4.50, "job_hours": 48,
        "debug_overhead_pct": 20, "extra_rented_hours": 5,  # 5 h of data preparation on the GPUs
    },
    "aimanual-rental-smart-120b": {**_BARE_RENTING, "gpu": "A100-80GB-SXM", "n_gpus": 4, "usd_per_gpu_hour_rented": 1.30, "job_hours": 72},
    # CSDN blog, "On the price-performance of the A100 and the RTX 4090" (2024-01-10, csdn_a100_4090):
    # an 8x H100 inference server amortized over 3 years
    "csdn-h100-server": {
        **_BARE_OWNING, "gpu": "H100-SXM", "n_gpus": 8, "purchase_usd_per_gpu": 30000, "other_hardware_usd": 60000,  # $300k with IB
        "system_w_per_server": 10000 - 8 * 700, "usd_per_kwh": 0.10, "rack_usd_per_month": 1500 / 2,  # a rack holds two servers
        "months": 36, "life_years": 3, "hours_per_day": 24, "days_per_month": 365 / 12,
    },
}

# APIYI documentation, "GPU selection" (2025, apiyi_gpu_selection): purchase price and power only, 30-day months,
# 20 h/day for 36 months;
# cost per 1K tokens at 24 h/day over 3 x 365 days with its stated inference throughput.
APIYI_GPUS = {  # our catalog name: (article name, purchase USD, inference tokens/s)
    "H100-SXM": ("H100-80GB", 35000, 80000),
    "A100-80GB-SXM": ("A100-80GB", 18000, 50000),
    "L40S": ("L40S", 8000, 35000),
    "RTX-4090": ("RTX-4090", 1800, 25000),
}
for _gpu, (_label, _price, _tps) in APIYI_GPUS.items():
    _base = {**_BARE_OWNING, "gpu": _gpu, "n_gpus": 1, "purchase_usd_per_gpu": _price, "usd_per_kwh": 0.12,
             "months": 36, "life_years": 3, "measured_tokens_per_s": _tps}
    PRESETS[f"apiyi-{_label.lower()}-tco"] = {**_base, "hours_per_day": 20, "days_per_month": 30}
    PRESETS[f"apiyi-{_label.lower()}-per-token"] = {**_base, "hours_per_day": 24, "days_per_month": 365 / 12}


def preset(name: str) -> dict:
    """A copy of a named preset; unknown names raise InputError with close matches."""
    if name not in PRESETS:
        hint = allowed_hint(name, PRESETS)
        raise InputError("preset", name, f"{hint}allowed: {', '.join(PRESETS)}", verb="unknown")
    return dict(PRESETS[name])
