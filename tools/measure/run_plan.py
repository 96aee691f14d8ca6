"""Run a list of measurements (a plan file, JSON) one process each, within a deadline, and collect their rows.

Each entry of the plan is {"script": "train_measure.py", "torchtune_measure.py" or "serve_measure.py", "args": [...],
"timeout_s": N}.
Entries run in the order given, each in a fresh Python process (so one run's memory or an out-of-memory error never
touches the next); an entry that would start after --deadline-s seconds is skipped and reported as skipped. Rows go to
OUT/train_rows.jsonl and OUT/serve_rows.jsonl, each process's error output to OUT/log.txt.

    python tools/measure/run_plan.py tools/measure/h200_plan.json --out results/ --deadline-s 420
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def _last_object(out: str) -> dict:
    """The row a script printed last (emit's indented JSON object), after whatever a library printed before it."""
    try:
        return json.loads(out)
    except ValueError:
        start = out.rfind("\n{\n")
        if start < 0:
            raise
        return json.loads(out[start + 1:])


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("plan")
    p.add_argument("--out", required=True)
    p.add_argument("--deadline-s", type=float, default=420.0)
    ns = p.parse_args(argv)
    os.makedirs(ns.out, exist_ok=True)
    start = time.monotonic()
    with open(ns.plan) as f:
        plan = json.load(f)
    log = open(os.path.join(ns.out, "log.txt"), "a")
    for i, entry in enumerate(plan):
        elapsed = time.monotonic() - start
        label = f"[{i}] {entry['script']} {' '.join(entry['args'])}"
        if elapsed + entry.get("timeout_s", 90) * 0.5 > ns.deadline_s:
            print(f"skipped (deadline) {label}", file=log, flush=True)
            continue
        began = time.monotonic()
        try:
            done = subprocess.run([sys.executable, os.path.join(HERE, entry["script"]), *entry["args"]],
                                  capture_output=True, text=True, timeout=entry.get("timeout_s", 90))
            out, err, rc = done.stdout, done.stderr, done.returncode
        except subprocess.TimeoutExpired as e:
            out, err, rc = (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or ""), "timeout", -9
        took = time.monotonic() - began
        print(f"{label}: rc={rc} {took:.1f} s\n{err[-3000:]}", file=log, flush=True)
        training = not entry["script"].startswith("serve")
        target = "train_rows.jsonl" if training else "serve_rows.jsonl"
        with open(os.path.join(ns.out, target), "a") as rows:
            if training:
                try:
                    row = _last_object(out)
                    row["seconds_whole_run"] = round(took, 1)
                    rows.write(json.dumps(row) + "\n")
                except ValueError:
                    rows.write(json.dumps({"failed": label, "rc": rc}) + "\n")
            else:
                rows.write(out)
    print(f"done in {time.monotonic() - start:.0f} s", file=log, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
