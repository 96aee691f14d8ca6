"""The command line, run for real in a subprocess."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def gpu_tco(*args):
    return subprocess.run([sys.executable, "-m", "gpu_tco", *args], capture_output=True, text=True, cwd=ROOT, timeout=120)


def test_main_job_prints_the_comparison(tmp_path):
    out = gpu_tco("--workbook", str(tmp_path / "main.xlsx"))
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "Llama-3-70B" in text
    for setup in ("4x RTX-4090", "2x H100-SXM", "8x A100-80GB-SXM"):
        assert setup in text
    header = next(line for line in text.splitlines() if line.startswith("setup"))
    for col in ("fits", "peak GiB/GPU", "GPUs needed", "job hours", "rent USD", "own USD", "capital USD"):
        assert col in header
    # QLoRA on an 8x H100 node fits, a full fine-tune of 70B does not
    rows = [line for line in text.splitlines() if line.startswith("8x H100-SXM")]
    assert any(" qlora " in r and " yes " in r for r in rows)
    assert any(" full " in r and " NO " in r for r in rows)
    from gpu_tco import core
    for method in ("qlora", "lora", "full"):  # the planner's recommendation, in words
        pick = core.plan({"method": method})["recommended"]
        line = next(x for x in text.splitlines() if x.startswith(f"Recommended for {method}:"))
        assert f"{pick['n_gpus']}x {pick['gpu']} from {pick['offer']}" in line, line
    assert "--allow-interruptible 1" in text  # how spot offers are treated is said


def test_main_job_json_matches_core():
    from gpu_tco import core

    out = gpu_tco("--json", "--workbook", "")
    data = json.loads(out.stdout)
    row = next(r for r in data["rows"] if r["gpu"] == "H100-SXM" and r["n_gpus"] == 8 and r["method"] == "lora")
    ref = core.evaluate({**data["job"], "gpu": "H100-SXM", "n_gpus": 8, "method": "lora"})
    assert row["peak_gib_per_gpu"] == pytest.approx(ref["peak_train_gib_per_gpu"], rel=1e-12)
    assert row["train_hours"] == pytest.approx(ref["train_hours"], rel=1e-12)
    assert row["rent_usd"] == pytest.approx(ref["rent_total_usd"], rel=1e-12)
    own = core.evaluate({**data["job"], "gpu": "H100-SXM", "n_gpus": 8, "method": "lora", "buy": 1})
    assert row["own_usd"] == pytest.approx(own["own_job_usd"], rel=1e-12)
    # the recommendation per method is the planner's (the one ranking rule); a table row is marked
    # only when it is that option
    from gpu_tco.core.planner import same_option
    for method, pick in data["recommended"].items():
        assert same_option(pick, core.plan({**data["job"], "method": method})["recommended"])
        for r in data["rows"]:
            if r["method"] == method and r["recommended"]:
                assert same_option({**r, "acquire": r["recommended"]}, pick)


def test_estimate_json_has_breakdown_and_assumptions():
    out = gpu_tco("estimate", "--model", "llama 3 8b", "--gpu", "rtx 4090", "--n-gpus", "1", "--method", "qlora", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    comp = data["breakdown_train_gib_per_gpu"]
    assert set(comp) == {"weights", "gradients", "optimizer", "activations", "logits", "kv_cache", "overhead", "total"}
    parts = sum(v for k, v in comp.items() if k != "total")
    assert parts == pytest.approx(comp["total"], rel=1e-12)
    assert data["assumptions"]["inputs"]["gpu"] == "RTX-4090"
    assert "Ada" in data["assumptions"]["gpu_source"]
    assert data["units"]["peak_train_gib_per_gpu"] == "GiB/GPU"


def test_estimate_inference_table():
    out = gpu_tco("estimate", "--mode", "infer", "--model", "Llama-3-70B", "--gpu", "H100-SXM", "--n-gpus", "2",
                  "--weights-dtype", "fp8", "--context-tokens", "32768", "--batch", "8")
    assert out.returncode == 0, out.stderr
    assert "kv_cache" in out.stdout and "largest batch that fits" in out.stdout


def test_model_as_parameter_count_is_flagged_estimate():
    out = gpu_tco("estimate", "--model", "13")
    assert out.returncode == 0 and "ESTIMATED architecture" in out.stdout


@pytest.mark.parametrize("args, message", [
    (("estimate", "--gpu", "H1000"), 'gpu: unknown "H1000" (did you mean H100-SXM'),
    (("estimate", "--seq-len", "-5"), "seq_len: -5 is too small"),
    (("estimate", "--n-gpus", "many"), 'n_gpus: "many" is text'),
    (("estimate", "--flash-attention", "maybe"), 'flash_attention: "maybe" is not a flag'),
    (("explain", "kv_cach_gib"), "did you mean kv_cache_gib"),
    (("--mfu", "nan"), "mfu: nan is not finite"),
])
def test_bad_input_exits_2_with_a_clear_message(args, message):
    out = gpu_tco(*args)
    assert out.returncode == 2
    assert message in out.stderr
    assert "Traceback" not in out.stderr


def test_catalog_listings():
    gpus = gpu_tco("gpus")
    assert gpus.returncode == 0 and "RTX-4090" in gpus.stdout and "165.2" in gpus.stdout
    models = json.loads(gpu_tco("models", "--json").stdout)
    assert any(m["name"] == "Mixtral-8x22B" and m["experts"] == 8 for m in models)
    assert all(m["source"] for m in models)


def test_explain_prints_formula_excel_and_inputs():
    out = gpu_tco("explain", "peak_train_gib_per_gpu", "--gpu", "A100-40GB-SXM")
    assert out.returncode == 0
    assert "formula: states_gib + activations_gib + logits_gib + overhead_train_gib" in out.stdout
    assert "Excel:   =states_gib+activations_gib+logits_gib+overhead_train_gib" in out.stdout


def test_installed_console_script_runs():
    """The `gpu-tco` entry point exists where the package is installed (the README's first command uses it)."""
    exe = Path(sys.executable).with_name("gpu-tco")
    if not exe.exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"gpu-tco is not installed beside {sys.executable}; the README setup command installs it")
        pytest.skip("package not installed in this interpreter; CI installs it")
    out = subprocess.run([str(exe), "gpus"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "H100-SXM" in out.stdout
