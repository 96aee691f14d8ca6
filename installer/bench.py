"""Speed figures (``gpu-tco bench``); targets live here, printed beside each figure, not in tests.

Measured on the project's 2-core machine: the engine (scalar call, sweep, import, main job,
planner), the Excel functions' Python side, and the workbook (generation, size, LibreOffice
recalculation when LibreOffice is installed).
"""
from __future__ import annotations

import statistics
import subprocess
import sys
import time


def _median_us(fn, calls=20000, repeats=7) -> float:
    per_call = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        per_call.append((time.perf_counter() - t0) / calls * 1e6)
    return statistics.median(per_call)


def run() -> dict:
    import numpy as np

    from gpu_tco import core

    config = {"model": "Llama-3-8B", "gpu": "RTX-4090", "n_gpus": 1, "method": "qlora", "seq_len": 2048}
    core.evaluate(config)
    scalar_us = _median_us(lambda: core.evaluate(config))

    rng = np.random.default_rng(0)
    n = 1_000_000
    sweep = {"seq_len": rng.integers(128, 32768, n), "micro_batch": rng.integers(1, 16, n),
             "n_gpus": rng.choice([1, 2, 4, 8], n), "lora_rank": rng.integers(4, 128, n)}
    core.evaluate({k: v[:10] for k, v in sweep.items()})
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        core.evaluate(sweep)
        times.append(time.perf_counter() - t0)
    sweep_s = statistics.median(times)

    from .core.planner import plan
    plan()
    plans = []
    for _ in range(7):
        t0 = time.perf_counter()
        result = plan()
        plans.append(time.perf_counter() - t0)
    plan_ms = statistics.median(plans) * 1000
    plan_rows = len(result["options"])

    from gpu_tco.addin.functions import call
    call("GPU_TCO", "H100-SXM", 8)
    udf_us = _median_us(lambda: call("GPU_TCO", "H100-SXM", 8), calls=5000)
    gpus = [[g] for g in (["H100-SXM", "A100-80GB-SXM", "RTX-4090", "L40S", "B200"] * 2000)]
    counts = [[float(n)] for n in rng.integers(1, 64, len(gpus))]
    hours = [[float(h)] for h in rng.uniform(1, 24, len(gpus))]
    call("GPU_TCO", gpus[:10], counts[:10], None, hours[:10])
    ranges = []
    for _ in range(5):
        t0 = time.perf_counter()
        call("GPU_TCO", gpus, counts, None, hours)
        ranges.append(time.perf_counter() - t0)
    range_ms = statistics.median(ranges) * 1000

    imports = []
    for _ in range(5):
        out = subprocess.run([sys.executable, "-c", "import time; t=time.perf_counter(); import gpu_tco; print(time.perf_counter()-t)"],
                             capture_output=True, text=True, check=True)
        imports.append(float(out.stdout))
    import_s = statistics.median(imports)

    import tempfile
    from pathlib import Path
    mains, books = [], []
    with tempfile.TemporaryDirectory() as tmp:  # the main job writes gpu-tco.xlsx in its folder
        for _ in range(3):
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-m", "gpu_tco"], capture_output=True, check=True, cwd=tmp)
            mains.append(time.perf_counter() - t0)
        from gpu_tco.workbooks import libreoffice, write_workbook
        for i in range(3):
            t0 = time.perf_counter()
            book = write_workbook(Path(tmp) / f"book{i}.xlsx")
            books.append(time.perf_counter() - t0)
        book_kb = book.stat().st_size / 1000
        recalc_s = None
        if libreoffice.find_soffice():
            t0 = time.perf_counter()
            libreoffice.convert([book], Path(tmp) / "recalc")
            recalc_s = time.perf_counter() - t0
    main_s = statistics.median(mains)

    figures = {
        "scalar_evaluate_us_median": (scalar_us, 50.0),
        "sweep_1M_rows_s": (sweep_s, 1.0),
        "import_gpu_tco_s": (import_s, 0.3),
        "main_job_wall_s": (main_s, 1.5),
        f"plan_default_job_ms ({plan_rows} options)": (plan_ms, 100.0),
        "excel_GPU_TCO_single_cell_us": (udf_us, 50.0),
        "excel_GPU_TCO_10k_row_range_ms": (range_ms, 50.0),
        "workbook_generate_s": (statistics.median(books), 1.0),
        "workbook_size_kb": (book_kb, 250.0),
    }
    if recalc_s is not None:  # LibreOffice start-up included, as a user would see it
        figures["workbook_libreoffice_recalc_s"] = (recalc_s, 5.0)
    if recalc_s is None:
        print("  (LibreOffice not installed: no recalculation figure)")
    print(f"gpu-tco benchmark ({len(core.QUANTITIES)} quantities; Python {sys.version.split()[0]})")
    for name, (value, target) in figures.items():
        print(f"  {name:36s} {value:10.4g}   target <= {target:g}   {'ok' if value <= target else 'OVER'}")
    return {k: v for k, (v, _) in figures.items()}


if __name__ == "__main__":
    run()
