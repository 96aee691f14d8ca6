"""gpu-tco offers --refresh: gpuhunt (installed, real) reads the local fixture catalog tests/data/gpuhunt
(GPUHUNT_CATALOG_DIR, gpuhunt's own columns); nothing here touches the network."""
from __future__ import annotations

import csv
import datetime
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gpu_tco import core
from gpu_tco.core import catalog, price_refresh
from gpu_tco.core.price_refresh import Offer, gpu_for

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "data" / "gpuhunt"
DAY = datetime.date(2026, 11, 2)


@pytest.fixture
def refreshed_env(tmp_path, monkeypatch):
    monkeypatch.setenv("GPU_TCO_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("GPUHUNT_CATALOG_DIR", str(FIXTURE))
    yield tmp_path / "config"
    monkeypatch.undo()
    catalog.reload()  # the other tests see the built-in catalog again


def _offer(gpu, mem, instance="x", provider="aws", gpus=8):
    return Offer(provider=provider, instance=instance, region="r", usd_per_instance_hour=10.0, gpus=gpus,
                 gpu_name=gpu, gpu_memory_gb=mem, spot=False)


def test_gpu_names_and_instance_facts_map_to_catalog_gpus():
    cases = [
        (_offer("H100", 80, "p5.48xlarge"), "H100-SXM"), (_offer("H100", 80, "gpu_1x_h100_pcie", "lambdalabs", 1), "H100-PCIe"),
        (_offer("H100", 80, "NVIDIA H100 PCIe", "runpod", 1), "H100-PCIe"), (_offer("H100NVL", 94, "Standard_NC40ads_H100_v5", "azure", 1), "H100-NVL"),
        (_offer("H100", 94, "NVIDIA H100 NVL", "runpod", 1), "H100-NVL"), (_offer("H200", 141, "p5en.48xlarge"), "H200-SXM"),
        (_offer("A100", 40, "p4d.24xlarge"), "A100-40GB-SXM"), (_offer("A100", 80, "p4de.24xlarge"), "A100-80GB-SXM"),
        (_offer("A100", 80, "Standard_NC24ads_A100_v4", "azure", 1), "A100-80GB-PCIe"),
        (_offer("A100", 40, "NVIDIA A100 PCIe 40GB", "runpod", 1), "A100-40GB-PCIe"),
        (_offer("B200", 180), "B200"), (_offer("MI300X", 192), "MI300X"), (_offer("RTX4090", 24, gpus=1), "RTX-4090"),
        (_offer("A10G", 24, "g5.xlarge", gpus=1), "A10G"), (_offer("L40S", 48, gpus=1), "L40S"),
        (_offer("T4", 16, gpus=1), None), (_offer("V100", 32), None),
        (_offer("L4", 48, gpus=1), None),  # memory 100 % off the catalog's L4: not the same GPU
    ]
    assert [gpu_for(o) for o, _ in cases] == [want for _, want in cases]


def test_refresh_from_a_local_gpuhunt_catalog(refreshed_env):
    progress = []
    result = price_refresh.refresh(progress=lambda done, total, p: progress.append((done, total, p)), today=DAY)
    assert [p for _, _, p in progress] == ["aws", "azure", "gcp", "lambdalabs", "runpod", "done"]
    rows = {r["name"]: r for r in result.rows}
    # one row per provider, instance and spot-or-not, at the cheapest region
    p5 = rows["AWS p5.48xlarge"]
    assert (p5["gpu"], p5["gpus_per_instance"], p5["usd_per_instance_hour"], p5["usd_per_gpu_hour"], p5["region"]) == \
        ("H100-SXM", 8, 55.04, 6.88, "us-east-1")
    assert "3 regions" in p5["description"] and p5["as_of"] == "2026-11-02" and p5["source"].startswith("gpuhunt catalog")
    spot = rows["AWS p5.48xlarge spot"]
    assert (spot["interruptible"], spot["price_type"], spot["usd_per_gpu_hour"]) == (1, "spot", 1.765)
    assert {n: r["gpu"] for n, r in rows.items() if "H100" in r["gpu"] or "A100" in r["gpu"]} == {
        "AWS p5.48xlarge": "H100-SXM", "AWS p5.48xlarge spot": "H100-SXM", "AWS p4d.24xlarge": "A100-40GB-SXM",
        "AWS p4de.24xlarge": "A100-80GB-SXM", "Azure NC40ads H100 v5": "H100-NVL", "Azure NC24ads A100 v4": "A100-80GB-PCIe",
        "Azure ND96asr v4": "A100-40GB-SXM", "GCP a3-highgpu-8g": "H100-SXM", "GCP a2-highgpu-1g": "A100-40GB-SXM",
        "GCP a2-highgpu-1g spot": "A100-40GB-SXM", "Lambda gpu_1x_h100_pcie": "H100-PCIe", "Lambda gpu_8x_h100_sxm5": "H100-SXM",
        "RunPod NVIDIA H100 80GB HBM3": "H100-SXM", "RunPod NVIDIA H100 PCIe": "H100-PCIe"}
    # 27 GPU offers in the fixture: 4 unmapped, 2 more regions of p5, 1 of the Azure NC H100, and RunPod's
    # "NVIDIA-H100-PCIe", one name with "NVIDIA H100 PCIe" to the catalog: the cheaper stays
    assert len(rows) == 20 and rows["RunPod NVIDIA H100 PCIe"]["usd_per_gpu_hour"] == 1.99
    assert sorted(u["gpu_name"] for u in result.unmapped) == ["A4000", "T4", "T4", "V100"]
    assert result.unmapped_line() == "4 offers not mapped to a catalog GPU (gpuhunt name, offers): T4 16 GB (2), A4000 16 GB (1), V100 16 GB (1)"
    # added / replaced / kept against the built-in file
    with open(catalog.DATA_DIR / "offers.csv", encoding="utf-8") as fh:
        builtin = {r["name"].lower() for r in csv.DictReader(fh)} - {"none"}
    replaced = {n for n in rows if n.lower() in builtin}
    assert "AWS p5.48xlarge" in replaced and "Azure NC40ads H100 v5" in replaced and "Lambda gpu_1x_a10" not in replaced
    assert (result.added, result.replaced, result.kept_builtin) == (20 - len(replaced), len(replaced), len(builtin) - len(replaced))
    # every door reads the catalog: the next evaluation uses the refreshed price, the replaced row's billing stays
    assert core.evaluate(gpu="H100-SXM", offer="GCP a3-highgpu-8g")["rent_usd_per_gpu_hour"] == pytest.approx(88.25 / 8)
    assert core.evaluate(gpu="H100-PCIe", offer="Lambda gpu_1x_h100_pcie")["rent_usd_per_gpu_hour"] == 2.49
    assert catalog.offers().row("AWS p5.48xlarge")["billing_increment_s"] == 1
    assert catalog.offers().row("Lambda gpu_1x_a10")["billing_increment_s"] == 60  # Lambda's built-in rows bill per minute
    assert len(catalog.offers().rows) == len(builtin) + 1 + result.added


def test_a_second_refresh_replaces_the_first_and_keeps_the_users_own_rows(refreshed_env):
    refreshed_env.mkdir(parents=True)
    own = "name,provider,instance,gpu,gpus_per_instance,usd_per_gpu_hour,billing_increment_s,source\n" \
          "My lab A100,lab,rack 3,A100-80GB-SXM,8,1.10,3600,our invoice 2026-10\n" \
          "GCP a3-highgpu-8g,GCP,a3-highgpu-8g,H100-SXM,8,9.00,1,our negotiated price\n"
    (refreshed_env / "offers.csv").write_text(own)
    first = price_refresh.refresh(today=DAY)
    text = (refreshed_env / "offers.csv").read_text()
    second = price_refresh.refresh(today=DAY)
    assert (refreshed_env / "offers.csv").read_text() == text  # the earlier refresh's rows are replaced, not doubled
    assert first.kept_own == second.kept_own == 2 and len(second.rows) == 19  # the user's GCP row wins over the refreshed one
    assert catalog.offers().row("My lab A100")["usd_per_gpu_hour"] == 1.10
    assert catalog.offers().row("GCP a3-highgpu-8g")["usd_per_gpu_hour"] == 9.00


def test_columns_the_offers_table_gains_are_written_too(tmp_path, refreshed_env, monkeypatch):
    """Another column in the built-in offers.csv (here a fabric speed): refreshed rows carry it, from the built-in
    row of the same instance when there is one, else empty (0)."""
    data = tmp_path / "data"
    shutil.copytree(catalog.DATA_DIR, data)
    with open(data / "offers.csv", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    header = list(rows[0]) + ["fabric_gbit_s_per_gpu"]
    for r in rows:
        r["fabric_gbit_s_per_gpu"] = "400" if r["name"] == "AWS p5.48xlarge" else "0"
    with open(data / "offers.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=header)
        w.writeheader()
        w.writerows(rows)
    monkeypatch.setattr(catalog, "DATA_DIR", data)
    catalog.reload()
    price_refresh.refresh(today=DAY)
    with open(refreshed_env / "offers.csv", encoding="utf-8") as fh:
        written = {r["name"]: r for r in csv.DictReader(fh)}
    assert written["AWS p5.48xlarge"]["fabric_gbit_s_per_gpu"] == "400"
    assert written["Lambda gpu_1x_a10"]["fabric_gbit_s_per_gpu"] == "0"
    assert catalog.offers().row("AWS p5.48xlarge")["fabric_gbit_s_per_gpu"] == 400


@pytest.mark.slow
def test_command_line_refresh_progress_json_and_one_line_errors(tmp_path):
    """One subprocess: a refresh with --json, the offers listing, then without the fixture and with an unreachable catalog address
    (a closed local port), then without gpuhunt."""
    script = (
        "import os, sys\n"
        "from gpu_tco.cli import main\n"
        "a = main(['offers', '--refresh', '--json'])\n"
        "print('=====', flush=True)\n"
        "d = main(['offers'])\n"
        "print('=====', flush=True); print('=====', file=sys.stderr, flush=True)\n"
        "del os.environ['GPUHUNT_CATALOG_DIR']; os.environ['GPUHUNT_CATALOG_URL'] = 'http://127.0.0.1:9'\n"
        "b = main(['offers', '--refresh'])\n"
        "print('=====', file=sys.stderr, flush=True)\n"
        "sys.modules['gpuhunt'] = None\n"
        "c = main(['offers', '--refresh'])\n"
        "print(a, d, b, c)\n")
    env = {"PATH": "/usr/bin:/bin", "GPU_TCO_CONFIG_DIR": str(tmp_path), "GPUHUNT_CATALOG_DIR": str(FIXTURE)}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=120, env=env)
    first, listing, codes = out.stdout.split("=====\n")
    assert codes.split() == ["0", "0", "2", "2"], out.stderr
    today = datetime.date.today().isoformat()
    assert f"20 of them refreshed through gpuhunt on {today}" in listing  # the price-age line counts them
    data = json.loads(first)
    assert len(data["rows"]) == 20 and len(data["unmapped"]) == 4 and data["added"] + data["replaced"] == 20
    progress, offline, missing = out.stderr.split("=====\n")
    assert "fetching offers: aws (1/5)" in progress and "runpod (5/5)" in progress
    assert offline.count("\n") == 2 and "cannot download the gpuhunt catalog" in offline  # progress line, then the error
    assert missing.strip() == "gpu-tco: error: offers --refresh needs gpuhunt: pip install 'gpu-tco[live]'"
    assert (tmp_path / "offers.csv").is_file()


def test_marketplace_listings_make_one_row_per_gpu_and_count_at_the_median():
    """vast.ai lists single machines by number (gpuhunt queries it live, so these offers are written here): one row
    per GPU, count and spot-or-not, at the median listing, priced as a marketplace (not the planner's on-demand default)."""
    listings = [Offer("vastai", str(n), "US", price, 8, "H100", 80.0, False) for n, price in
                ((101, 15.2), (102, 17.9), (103, 14.1), (104, 30.0), (105, 16.0))]
    listings += [Offer("vastai", "106", "SE", 0.31, 1, "RTX4090", 24.0, False), Offer("vastai", "106", "SE", 0.2, 1, "RTX4090", 24.0, True)]
    rows, unmapped = price_refresh.offer_rows(listings, "2026-11-02")
    by_name = {r["name"]: r for r in rows}
    assert sorted(by_name) == ["vast.ai 1x RTX-4090 (marketplace)", "vast.ai 1x RTX-4090 (marketplace) spot",
                               "vast.ai 8x H100-SXM (marketplace)"] and not unmapped
    h100 = by_name["vast.ai 8x H100-SXM (marketplace)"]
    assert (h100["usd_per_instance_hour"], h100["usd_per_gpu_hour"], h100["price_type"]) == (16.0, 2.0, "marketplace")
    assert "median of 5 listings ($14.10 to $30.00" in h100["description"]
    assert by_name["vast.ai 1x RTX-4090 (marketplace) spot"]["interruptible"] == 1
