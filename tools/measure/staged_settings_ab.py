"""Compare settings of the staged scalar code (core/codegen.py) in one process, alternating.

    python tools/measure/staged_settings_ab.py FIRST_STAGE_APART False True
    python tools/measure/staged_settings_ab.py STAGE_MIN_GROUP 6 8 10

For each value the code of all quantities is generated with the setting changed, then each version evaluates the
bench's cycle (``gpu_tco.bench._changing``: Llama-2-7B on 8x A100, each call a new seq_len, the next GPU count or a new
token count) in four rounds, the order reversed every round, and the microseconds per call of each round are printed
with the best.  This machine changes speed for minutes at a time, so only versions timed side by side in one process
are compared; a difference smaller than the spread of one version's rounds is noise.
"""
from __future__ import annotations

import ast
import sys
import time

from gpu_tco import bench
from gpu_tco.core import codegen, engine

ROUNDS = 4
CALLS = 3000


def _per_call_us(calls: int = CALLS, repeats: int = 5) -> float:
    """Best microseconds per call of the bench's cycle, its kept stages started afresh."""
    call = bench._changing(bench.COMPARABLE)
    for _ in range(300):
        call()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            call()
        best = min(best, (time.perf_counter() - t0) / calls * 1e6)
    return best


def main(argv: list[str]) -> int:
    if len(argv) < 3 or not hasattr(codegen, argv[0]):
        print("\n".join(__doc__.strip().splitlines()[:4]), file=sys.stderr)
        return 2
    setting, values = argv[0], [ast.literal_eval(v) for v in argv[1:]]
    bench._changing(bench.COMPARABLE)()  # the plan of this configuration, whose staged code is swapped below
    compiled = engine._scalar_plan(None, engine.resolve_inputs(bench.COMPARABLE)["task__row"])[0]
    original = getattr(codegen, setting)
    staged = {}
    try:
        for value in values:
            setattr(codegen, setting, value)
            staged[repr(value)] = codegen._generate(False, codegen.QUANTITY_NAMES, None, "train")[0].staged
    finally:
        setattr(codegen, setting, original)
    rounds: dict[str, list[float]] = {key: [] for key in staged}
    for r in range(ROUNDS):
        for key in (list(staged) if r % 2 == 0 else list(reversed(staged))):
            compiled.__dict__["staged"] = staged[key]
            engine._stage_memo(compiled).clear()
            rounds[key].append(_per_call_us())
    for key, times in rounds.items():
        print(f"{setting} = {key}: " + " / ".join(f"{t:.2f}" for t in times) + f" us a call, best {min(times):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
