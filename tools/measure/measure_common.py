"""What the measuring scripts share: the versions they report and how they print a row (one JSON object)."""
from __future__ import annotations

import json
import sys
import time

GIB = 2 ** 30


def versions(names) -> dict:
    """{package: version} of the packages given that are installed (only the options that need one fail without it)."""
    out = {}
    for name in names:
        try:
            out[name] = __import__(name).__version__
        except Exception:  # not installed, or no version attribute
            pass
    return out


def emit(row: dict) -> int:
    """Print the row as JSON on standard output (what run_plan.py collects); the exit status 0."""
    json.dump(row, sys.stdout, indent=2)
    print()
    return 0


def add_model_arguments(p, method_default: str = "full") -> None:
    """The options every measuring script built from a config.json takes: the config, the names to report, the method."""
    p.add_argument("--config", required=True, help="path of a Hugging Face config.json (or its folder)")
    p.add_argument("--model-name", default="", help="the gpu-tco model name to report (default: the config's folder)")
    p.add_argument("--gpu", default="", help="the gpu-tco GPU name to report (default: torch's device name)")
    p.add_argument("--method", choices=("full", "lora", "qlora"), default=method_default)


def add_step_arguments(p, steps: int) -> None:
    """The options every measuring script times its steps with: warm-up steps (not timed) and timed steps."""
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--steps", type=int, default=steps)


def time_steps(step, warmup: int, steps: int, cuda: bool = True) -> tuple[float, bool]:
    """Run ``step()`` warmup + steps times: (seconds the timed steps took, whether one ran out of memory).  The GPU's
    peak-memory statistics restart where the timed steps begin; each warm-up step's time goes to standard error."""
    import torch
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    timed = 0.0
    try:
        for i in range(warmup + steps):
            if i == warmup and cuda:
                torch.cuda.reset_peak_memory_stats()
            sync()
            start = time.perf_counter()
            step()
            sync()
            if i < warmup:
                print(f"warm-up step {i}: {time.perf_counter() - start:.1f} s", file=sys.stderr, flush=True)
            else:
                timed += time.perf_counter() - start
    except torch.OutOfMemoryError:
        return timed, True
    return timed, False
