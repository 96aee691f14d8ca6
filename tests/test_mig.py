"""MIG slices in the GPU catalog: their shares of the card as NVIDIA's MIG user guide gives them, ownable as a share
of the card's price, one slice per job, and left out of training plans.

tests/data/mig_profiles.csv: the profiles of NVIDIA, "NVIDIA Multi-Instance GPU User Guide: Supported MIG Profiles",
2026-10-13, https://docs.nvidia.com/datacenter/tesla/mig-user-guide/supported-mig-profiles.html (fraction of memory in
eighths, fraction of SMs in sevenths, instances per GPU; "Full" written as 8/8 and 7/7).
"""
from __future__ import annotations

import csv
from fractions import Fraction
from pathlib import Path

import pytest

from gpu_tco import core
from gpu_tco.core import catalog

GUIDE = list(csv.DictReader(open(Path(__file__).parent / "data" / "mig_profiles.csv", encoding="utf-8")))


def test_every_profile_of_the_guide_is_a_catalog_row_named_with_mig_and_the_profile():
    gpus = catalog.gpus()
    slices = [r for r in gpus.rows if catalog.mig_profile(r)]
    assert sorted(r["name"] for r in slices) == sorted(f"{p['card']} MIG {p['profile']}" for p in GUIDE)
    assert gpus.row("H100 MIG 1g.10gb")["name"] == "H100-SXM MIG 1g.10gb"
    assert gpus.row("H200-SXM MIG 1g.18gb+me")["name"] == "H200-SXM MIG 1g.18gb"  # media extensions: the same slice


@pytest.mark.parametrize("p", GUIDE, ids=[f"{p['card']} {p['profile']}" for p in GUIDE])
def test_a_slice_holds_its_share_of_the_card(p):
    card = catalog.gpus().row(p["card"])
    row = catalog.gpus().row(f"{p['card']} MIG {p['profile']}")
    memory, compute = Fraction(p["fraction_of_memory"]), Fraction(p["fraction_of_sms"])
    # memory and its bandwidth come in eighths (memory slices with their controllers), compute in sevenths
    assert row["memory_gib"] == pytest.approx(card["memory_gib"] * memory, rel=1e-5)
    assert row["memory_bandwidth_gbps"] == pytest.approx(card["memory_bandwidth_gbps"] * memory, rel=1e-5)
    for column in ("bf16_dense_tflops", "fp8_dense_tflops", "tf32_dense_tflops"):
        assert row[column] == pytest.approx(card[column] * compute, rel=1e-5), column
    # owned as the share of the card it takes from the others: the larger of the two shares
    share = max(memory, compute)
    assert row["purchase_usd"] == pytest.approx(card["purchase_usd"] * share, abs=0.5)
    assert "share of the" in row["purchase_basis"] and "not rented" in row["purchase_basis"]
    assert f"up to {p['instances_per_gpu']} per card" in row["form_factor"]
    # one slice per job: no fabric between slices
    assert (row["multi_gpu_fabric"], row["nvlink_gbps"], catalog.server_sizes(row)) == (0, 0, (1,))
    assert "[nvidia_mig]" in row["source"]


def test_the_training_planner_leaves_slices_out_and_rejects_a_named_one():
    job = {"model": "Llama-3.2-1B", "method": "lora", "tokens": 1e6}
    plan = core.plan(job)
    assert plan["recommended"] is not None
    assert not [o for o in plan["options"] if catalog.mig_profile(catalog.gpus().row(o.gpu))]
    named = core.plan(job, gpus=["H100 MIG 1g.10gb", "H100-SXM"])
    mig = [o for o in named["options"] if o.gpu == "H100-SXM MIG 1g.10gb"]
    assert len(mig) == 1 and not mig[0].ok
    assert mig[0].reasons == ("a MIG slice: planned for serving only; training is planned on whole GPUs",)
    assert named["recommended"].gpu == "H100-SXM"
    only = core.plan(job, gpus=["H100-SXM MIG 7g.80gb"])
    assert only["recommended"] is None and len(only["options"]) == 1


@pytest.mark.parametrize("change, message", [
    ({"multi_gpu_fabric": "1"}, r"gpus.csv, row 2, column multi_gpu_fabric: 1 is not allowed for the MIG slice"),
    ({"server_sizes": "8"}, r"gpus.csv, row 2, column server_sizes: \"8\" is not allowed for the MIG slice .*allowed: 1"),
    ({"name": "H100-SXN MIG 1g.10gb"}, r"gpus.csv, row 2, column name: .*H100-SXN.* is not a whole GPU .*did you mean H100-SXM"),
    ({"name": "My MIG slice"}, r"gpus.csv, row 2, column name: .*name it \"<card> MIG <profile>\""),
])
def test_a_user_mig_row_that_would_span_slices_or_name_no_card_is_refused(tmp_path, monkeypatch, change, message):
    base = dict(catalog.gpus().row("H100-SXM MIG 1g.10gb"))
    base.update(name="H100-SXM MIG 1g.12gb", aliases="")
    base.update(change)
    columns = [c for c in catalog.gpus().columns]
    lines = [",".join(columns), ",".join('"' + str(base[c]).replace('"', '""') + '"' for c in columns)]
    (tmp_path / "gpus.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    monkeypatch.setenv("GPU_TCO_CONFIG_DIR", str(tmp_path))
    try:
        with pytest.raises(core.CatalogError, match=message) as err:
            catalog.reload()
        assert "\n" not in str(err.value)
    finally:
        monkeypatch.undo()
        catalog.reload()


def test_a_job_on_more_than_one_slice_is_refused_naming_the_count():
    """A MIG instance has no NVLink and no peer-to-peer access: a job runs on one slice, more slices are replicas."""
    from gpu_tco.core import InputError
    with pytest.raises(InputError, match=r"^n_gpus: 2 is more than one slice of H100-SXM MIG 1g\.10gb: .*allowed: 1"):
        core.evaluate({"gpu": "H100-SXM MIG 1g.10gb", "n_gpus": 2})
    assert core.evaluate({"gpu": "H100-SXM MIG 1g.10gb", "n_gpus": 1}, outputs=("gpu_memory_gib",))["gpu_memory_gib"] == 10
