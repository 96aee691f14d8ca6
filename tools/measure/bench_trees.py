#!/usr/bin/env python3
"""Run this tree's benchmark (installer/bench.py) against several source trees of gpu-tco on one machine, in turns.

Why: a before-and-after comparison is only fair on the same machine, in the same minutes, with the same benchmark
code.  Each tree (this checkout, or an older commit unpacked with ``git archive <commit> core addin gui workbooks
installer``) is laid out as the installed package would be (``gpu_tco`` = installer/, ``gpu_tco.core`` = core/, ...)
by symbolic links in a temporary folder, with this checkout's bench.py in place of the tree's own, and measured in a
fresh Python process with a code cache per tree (a tree's later runs read what its first wrote).  The runs go in the
order given and a tree may be named again
(head=. old=OLD head=. old=OLD), so the trees take turns and a slower spell of the machine does not fall on one alone.

    python3 tools/measure/bench_trees.py OUT_DIR [--engine-only | --sweep-only] NAME=PATH [NAME=PATH ...]

Writes OUT_DIR/reports.txt (each run's printed report, and any section that could not run), OUT_DIR/figures.json
({"<name>-<k>": {figure: [best, target, median]}}, k counting the runs of that name) and OUT_DIR/machine.txt.  A
section that fails for an old tree (a figure its code could not produce) is reported and the others still run.
"""
from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve()
CHECKOUT = HERE.parents[2]

_DRIVER = r"""
import json, sys, traceback
from gpu_tco import bench
out, engine_only = sys.argv[1], sys.argv[2] == "1"
sections = ["_engine_figures"] if engine_only else ["_sweep_figures"] if sys.argv[2] == "sweep" else ["_engine_figures", "_sweep_figures", "_planner_and_excel_figures",
                                                   "_form_figures", "_start_figures", "_large_offers_figures"]
figures = {}
for section in sections:
    try:
        getattr(bench, section)(figures)
    except Exception:
        print(f"section {section} could not run:\n{traceback.format_exc(limit=3)}", flush=True)
again = {}
try:
    if sys.argv[2] == "sweep":
        raise LookupError("(the sweep's figures alone)")  # as bench.run does: the engine's figures once more, the faster pass reported
    bench._engine_figures(again)
    if again[bench._PASS_FIGURE][0] < figures[bench._PASS_FIGURE][0]:
        figures.update(again)
except LookupError:
    pass
except Exception:
    print(f"second engine pass could not run:\n{traceback.format_exc(limit=3)}", flush=True)
bench._report(figures)
with open(out, "w") as fh:
    json.dump({k: [float(v[0]), v[1], getattr(v[0], "median", None)] for k, v in figures.items()}, fh, indent=1)
"""


def layout(tree: Path, dest: Path) -> Path:
    """``dest`` holding a ``gpu_tco`` package made of links into ``tree``, this checkout's bench.py among them."""
    package = dest / "gpu_tco"
    package.mkdir(parents=True)
    for item in (tree / "installer").iterdir():
        if item.name not in ("bench.py", "__pycache__"):
            (package / item.name).symlink_to(item.resolve())
    (package / "bench.py").symlink_to(CHECKOUT / "installer" / "bench.py")
    for part in ("core", "addin", "gui", "workbooks"):
        (package / part).symlink_to((tree / part).resolve())
    return dest


def machine() -> str:
    lines = [f"python {sys.version.split()[0]} ({sys.executable})", f"platform {platform.platform()}",
             f"cores {os.cpu_count()}", f"load average {os.getloadavg()}"]
    try:
        model = next(line for line in open("/proc/cpuinfo") if line.startswith("model name"))
        lines.append(model.strip())
    except (OSError, StopIteration):
        pass
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    out = Path(argv[0])
    rest = argv[1:]
    engine_only = "--engine-only" in rest
    sweep_only = "--sweep-only" in rest
    trees = [item.split("=", 1) for item in rest if item not in ("--engine-only", "--sweep-only")]
    out.mkdir(parents=True, exist_ok=True)
    (out / "machine.txt").write_text(machine())
    work = Path(tempfile.mkdtemp(prefix="gpu-tco-bench-trees-"))
    paths = {name: layout(Path(path), work / name) for name, path in dict(trees).items()}
    for path in dict.fromkeys(path for _, path in trees):  # byte-compiled once, as an installed package is (the first figures read no source)
        subprocess.run([sys.executable, "-m", "compileall", "-q", *(str(Path(path) / part) for part in
                                                                     ("core", "addin", "gui", "workbooks", "installer"))])
    figures, seen = {}, {}
    for name, _ in trees:
        seen[name] = k = seen.get(name, 0) + 1
        label = f"{name}-{k}"
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(paths[name])] + ([os.environ["PYTHONPATH"]]
                                                                                  if os.environ.get("PYTHONPATH") else [])),
               "GPU_TCO_CACHE_DIR": str(work / f"{name}-cache")}
        (work / f"{name}-cache").mkdir(exist_ok=True)
        run = subprocess.run([sys.executable, "-c", _DRIVER, str(work / f"{label}.json"),
                              "1" if engine_only else "sweep" if sweep_only else "0"],
                             env=env, cwd=work, capture_output=True, text=True)
        text = f"--- {label} (exit {run.returncode})\n{run.stdout}" + (f"{run.stderr[-3000:]}\n" if run.returncode else "")
        with open(out / "reports.txt", "a") as fh:
            fh.write(text)
        if (work / f"{label}.json").exists():
            figures[label] = json.loads((work / f"{label}.json").read_text())
            (out / "figures.json").write_text(json.dumps(figures, indent=1))
        print(text, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
