"""Helpers the tests share: random scenarios and the ways two results are compared."""
from __future__ import annotations

import json
import math
import random
import subprocess
import sys
from dataclasses import dataclass

import numpy as np

from gpu_tco.core import INPUTS, catalog

CHOICES = {i.name: catalog.tables()[i.table].names for i in INPUTS if i.kind == "choice"}


def random_config(rng: random.Random) -> dict:
    cfg = {
        "model": rng.choice(CHOICES["model"]),
        "gpu": rng.choice(CHOICES["gpu"]),
        "method": rng.choice(CHOICES["method"]),
        "precision": rng.choice(CHOICES["precision"]),
        "optimizer": rng.choice(CHOICES["optimizer"]),
        "sharding": rng.choice(CHOICES["sharding"]),
        "recompute": rng.choice(CHOICES["recompute"]),
        "lora_targets": rng.choice(CHOICES["lora_targets"]),
        "weights_dtype": rng.choice(CHOICES["weights_dtype"]),
        "kv_dtype": rng.choice(CHOICES["kv_dtype"]),
        "flash_attention": rng.randint(0, 1),
        "fused_loss": rng.randint(0, 1),
        "offload_optimizer": rng.randint(0, 1),
        "fp32_grads": rng.randint(0, 1),
        "sequence_parallel": rng.randint(0, 1),
        "seq_len": rng.choice([128, 512, 2048, 4096, 8192, 32768]),
        "micro_batch": rng.randint(1, 16),
        "lora_rank": rng.choice([4, 8, 16, 64, 256]),
        "context_tokens": rng.choice([256, 4096, 32768, 131072]),
        "batch": rng.randint(1, 64),
        "mfu": rng.choice([0, 0.2, 0.5]),
    }
    # engines and frameworks split whole attention heads over tensor-parallel GPUs: a degree the heads divide
    heads = int(catalog.tables()["models"].row(cfg["model"])["heads"])
    t = rng.choice([d for d in (1, 2, 4, 8) if heads % d == 0])
    cfg["tensor_parallel"] = t
    cfg["n_gpus"] = t * rng.choice([1, 2, 3, 8])
    # the cost model: an offer of this GPU (or auto), and owning assumptions across their ranges
    gpu_offers = [o["name"] for o in catalog.tables()["offers"].rows if o["gpu"] == cfg["gpu"]]
    cfg.update({
        "offer": rng.choice(gpu_offers + ["auto"]),
        "usd_per_gpu_hour_rented": rng.choice([0, 0, 2.5]),
        "job_hours": rng.choice([0, 0.3, 168]),
        "debug_overhead_pct": rng.choice([0, 20]),
        "restarts": rng.randint(0, 5),
        "off_peak_discount_pct": rng.choice([0, 30]),
        "storage_gb": rng.choice([0, 500]),
        "egress_gb": rng.choice([0, 100]),
        "storage_pct_of_compute": rng.choice([0, 10]),
        "rent_utilization_pct": rng.choice([100, 40]),
        "purchase_usd_per_gpu": rng.choice([0, 0, 30000]),
        "server_overhead_pct": rng.choice([0, 60]),
        "other_hardware_usd": rng.choice([0, 5000]),
        "gpus_per_server": rng.choice([1, 4, 8]),
        "auto_system_power": rng.randint(0, 1),
        "system_w_per_server": rng.choice([0, 4600]),
        "depreciation": rng.choice(CHOICES["depreciation"]),
        "residual_pct": rng.choice([0, 20]),
        "discount_rate_pct": rng.choice([0, 8]),
        "months": rng.choice([1, 12, 36, 60]),
        "hours_per_day": rng.choice([0.5, 12, 24]),
        "at_month": rng.choice([0, 7]),
        "measured_tokens_per_s": rng.choice([0, 5000]),
        "buy": rng.randint(0, 1),
        "deadline_hours": rng.choice([0, 10]),
        "budget_usd": rng.choice([0, 1000]),
    })
    # an FP8 precision runs only on GPUs with FP8 tensor cores and not with QLoRA (refused with a message): keep the
    # draw where it is valid, so the random scenarios still exercise FP8 on the GPUs that run it
    prec = catalog.tables()["precisions"].row(cfg["precision"])
    gpu = catalog.tables()["gpus"].row(cfg["gpu"])
    method = catalog.tables()["methods"].row(cfg["method"])
    if catalog.mig_profile(gpu):  # a MIG slice runs a job on one slice
        cfg.update(n_gpus=1, tensor_parallel=1)
    if prec["fp8_linears"] and (gpu["fp8_dense_tflops"] == 0 or method["quantized_base"]
                                or (prec["block_scaled"] and not (gpu["fp4_dense_tflops"] > 0 and gpu["multi_gpu_fabric"]))):
        cfg["precision"] = "bf16_mixed"
    return cfg


def same_number(a, b) -> bool:
    """Equal as floats, to 1e-12 (relative or absolute): one formula rendered two ways."""
    a, b = float(a), float(b)
    return a == b or math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)


def same_array(a, b) -> bool:
    """Same shape and exactly equal values, NaN equal to NaN: one evaluation path against another."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return a.shape == b.shape and bool(np.all((a == b) | (np.isnan(a) & np.isnan(b))))


def rel_equal(a, b) -> bool:
    """Equal to 1e-9 relative (what a spreadsheet keeps of a double), or both within 1e-12 of each other: LibreOffice
    writes a number below about 1e-10 with 7 significant digits (a queueing wait of 3.65e-13 ms is 3.650908e-13 in its
    file); never for an infinite or NaN reference ``b``."""
    a, b = float(a), float(b)
    if math.isinf(b) or math.isnan(b):
        return False
    return a == b or abs(a - b) <= 1e-9 * max(abs(a), abs(b), 1e-300) or abs(a - b) < 1e-12


def same_cell(a, b) -> bool:
    """Two workbook cells alike: numbers by ``rel_equal``, blanks (None or "") alike, anything else equal."""
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool) and not isinstance(b, bool):
        return rel_equal(a, b)
    return (a in (None, "") and b in (None, "")) or a == b


def run_compiled(compiled, values: dict) -> dict:
    """Every quantity of scalar ``compiled`` code for resolved ``values``, run directly (no kept stages): the catalog
    rows it reads, and a model outside the catalog as a one-row table."""
    tabs = catalog.tables()
    rows = {t: compiled.table_rows(t, tabs[t].col.__getitem__) for t in compiled.row_fields}
    for adhoc_key, table in compiled.adhoc_keys:
        adhoc = values.get(adhoc_key)
        if adhoc is not None:
            rows[table] = compiled.table_rows(table, lambda f, adhoc=adhoc: (adhoc[f],))
            values = {**values, adhoc_key[:-len("__adhoc")] + "__row": 0}
    result = compiled.template.copy()
    compiled.fn(values, rows, result)
    return result


_BATCH = """
import json, os, sys
sys.path.insert(0, sys.argv[1])  # the tests' folder: run_main below
from helpers import run_main
from gpu_tco.core import GpuTcoError, catalog
import gc
gc.freeze()  # as the command does in a process of its own (gpu_tco/cli.py)
results = []
for config, args in json.loads(sys.stdin.read()):
    if config is None:
        os.environ.pop("GPU_TCO_CONFIG_DIR", None)
    else:
        os.environ["GPU_TCO_CONFIG_DIR"] = config
    try:
        catalog.reload()  # each case reads its own catalogs, as a new process would
    except GpuTcoError:
        pass
    ran = run_main(*args)
    results.append([ran.returncode, ran.stderr, ran.stdout])
print(json.dumps(results))
"""


def run_main(*args: str) -> subprocess.CompletedProcess:
    """The command line ``gpu-tco ARGS`` run in this process through the command's own entry point
    (``gpu_tco.cli.main``), its stdout and stderr captured: for the tests of what a command says (each process of its
    own pays about 0.25 s of CPU to load NumPy and the engine first).  What a process of its own adds (the console
    script, Ctrl-C, the exit status the shell sees, a traceback Python would print) is tested by the tests that start
    one."""
    import contextlib
    import io

    from gpu_tco import cli
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli.main(list(args))
        except SystemExit as exit_:
            code = exit_.code
    return subprocess.CompletedProcess(["gpu-tco", *args], code, out.getvalue(), err.getvalue())


@dataclass
class Ran:
    returncode: int
    stderr: str
    stdout: str = ""


def cli_batch(cases: list[tuple[tuple, str | None]], cwd=None) -> list[Ran]:
    """Many command lines run through the command's own entry point (``gpu_tco.cli.main``) in one process (each
    process pays about 0.15 s of CPU to load NumPy and the engine before it does anything): each case with its
    configuration folder (None: none), its exit code and what it wrote to stdout and stderr.  What a process of its own
    adds (the console script, Ctrl-C, the exit status the shell sees) is tested by the tests that start one."""
    from pathlib import Path
    out = subprocess.run([sys.executable, "-c", _BATCH, str(Path(__file__).resolve().parent)],
                         input=json.dumps([[c, list(a)] for a, c in cases]),
                         capture_output=True, text=True, timeout=300, cwd=cwd)
    assert out.returncode == 0, out.stderr[-2000:]
    return [Ran(code, err, text) for code, err, text in json.loads(out.stdout.strip().splitlines()[-1])]
