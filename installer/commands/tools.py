"""``gpu-tco addin``, ``form``, ``bench``, ``calibrate`` and ``docs``: the commands that run tools or write files."""
from __future__ import annotations

import argparse
import os
import subprocess
import sys

from .common import _add_input_options, table
from .exits import EXIT_BAD_INPUT


def cmd_bench(ns) -> int:
    from ..bench import run

    run(engine_only=ns.engine_only, cpu_time=ns.cpu_time)
    return 0


def _calibrate_to_fixed_point(rounds: int = 30) -> int:
    """``calibrate --write`` until the written catalogs stop changing: each round is a new process, because the fit
    reads the network slowdown and the defaults at the values the catalogs hold when the process starts."""
    from ..core import calibration as cal

    def files() -> dict:
        return {p: p.read_bytes() for p in sorted(cal.DATA.glob("*.csv"))}
    before = files()
    for done in range(1, rounds + 1):
        run = subprocess.run([sys.executable, "-m", "gpu_tco", "calibrate", "--write", "--once"], capture_output=True, text=True)
        if run.returncode:
            sys.stderr.write(run.stderr or run.stdout)
            return run.returncode
        after = files()
        changed = [p.name for p in after if after[p] != before.get(p)]
        if not changed:
            print(f"calibrate --write: the fitted values hold still after {done} round{'' if done == 1 else 's'}")
            _write_bands()
            print("Run `gpu-tco docs` to refresh docs/calibration.md.")
            return 0
        print(f"round {done}: wrote {', '.join(changed)}")
        before = after
    print(f"calibrate --write: still moving after {rounds} rounds (see the last files written)", file=sys.stderr)
    _write_bands()
    return 1


def _write_bands() -> None:
    """The frameworks' uncertainty bands from the leave-one-source-out errors, in a new process that reads the values
    just written."""
    run = subprocess.run([sys.executable, "-c", "from gpu_tco.core import calibration as c; print(c.write_bands())"],
                         capture_output=True, text=True)
    print(f"bands: wrote {run.stdout.strip()}" if run.returncode == 0 else run.stderr)


def cmd_calibrate(ns) -> int:
    """The calibration set against the model: every row, the fitted values, leave-one-source-out errors."""
    from ..core import calibration as cal

    rows = cal.load_measurements()
    if ns.write and not ns.once:
        return _calibrate_to_fixed_point()
    if ns.write:
        params = cal.fit(rows)
        for path in cal.apply(params, rows):
            print(f"wrote {path}")
        decision = cal.serving_family_decision()
        for path in cal.apply_serving(decision):
            print(f"wrote {path} (serving efficiency per GPU family: "
                  + (", ".join(f"{k} {v:.3g}" for k, v in decision["factors"].items()) or "none supported") + ")")
        from ..core import serving_calibration as engines
        points = engines.fit_points()
        factors = engines.fit(points)
        path = engines.apply(factors, engines.bands(points, factors))
        print(f"wrote {path} (engine factors fitted on {len(points)} H100 and B200 serving points)")
        print("Run `gpu-tco docs` (a new process reads the new values) to refresh docs/calibration.md.")
        return 0
    print(table(["row", "source", "quantity", "measured", "modelled", "error", "in the fit"],
                [[r[0], r[1], r[3], r[4], r[5], r[6], r[7]] for r in cal.rows_table(rows)],
                align=["<", "<", "<", ">", ">", ">", "<"]))
    loso = cal.leave_one_source_out(rows)  # with the full fit ("fitted"), done once
    fitted, current = loso["fitted"], cal.catalog_values()
    used = cal.informed(rows)
    print()
    print(table(["parameter", "prior", "fitted", "in the catalog"],
                [[n, f"{p:g}", f"{fitted[n]:.4g}" if n in used else "(no rows)", f"{current[n]:g}"]
                 for n, p in cal.PARAMETER_PRIORS.items()], align=["<", ">", ">", ">"]))
    print("\nLeave one source out (refit without the source, predict its rows):")
    print(table(["quantity", "rows", "median error", "worst error"],
                [[k, str(v["rows"]), f"{v['median']:.1%}", f"{v['worst']:.1%}"] for k, v in loso.items()
                 if k not in ("by_source", "by_framework", "checks", "fitted")]
                + [[f"{kind}, {framework}", str(v["rows"]), f"{v['median']:.1%}", f"{v['worst']:.1%}"]
                   for (framework, kind), v in loso["by_framework"].items()],
                align=["<", ">", ">", ">"]))
    print("\nChecks (rows never fitted, predicted by the fit on all the others):")
    print(table(["quantity, framework: why not fitted", "rows", "median error", "worst error"],
                [[f"{kind}, {framework}: {why}", str(v["rows"]), f"{v['median']:.1%}", f"{v['worst']:.1%}"]
                 for (framework, kind, why), v in loso["checks"].items()], align=["<", ">", ">", ">"]))
    serving = cal.serving_measurements()
    decision = cal.serving_family_decision(serving)
    print("\nServing rows (the serving formulas at each row's workload):")
    print(table(["row", "source", "quantity", "measured", "modelled", "error", "in the fit"],
                [[m.id, m.source, m.quantity, f"{m.value:,.4g}", f"{p:,.4g}", f"{e:+.1%}", "yes" if cal.serving_in_fit(m) else "no"]
                 for m, p, e in cal.serving_errors(rows=serving)], align=["<", "<", "<", ">", ">", ">", "<"]))
    print(table(["serving errors (rows in the fit)", "rows", "median error", "worst error"],
                [[f"{label}: {k}", str(v["rows"]), f"{v['median']:.1%}", f"{v['worst']:.1%}"]
                 for label, loso in (("as shipped", decision["without"]), ("family factors, leave one source out", decision["with"]))
                 for k, v in loso.items() if k != "by_source"], align=["<", ">", ">", ">"]))
    print("Family factors " + ("kept" if decision["supported"] else "not supported by held-out sources: none kept") + ".")
    from ..core import serving_calibration as engines
    points = engines.load_points()
    print("\nServing engines against NVIDIA's measured points (AIConfigurator 0.12.0): fitted on H100 and B200, "
          "checked on the other GPUs and on the 2026 architectures:")
    groups = [("H100 and B200 (fitted on)", engines.fit_points(points)), ("other GPUs (held out)", engines.held_out_points(points)),
              ("2026 architectures (held out)", engines.new_model_points(points))]
    body = []
    for label, chosen in groups:
        for engine in ("all", *engines.FITTED_ENGINES):
            mine = [p for p in chosen if engine == "all" or p["engine"] == engine]
            if not mine:  # (no measured point of this engine in the group)
                continue
            s = engines.summary(mine)
            body.append([label, engine, str(s["points"]), f"{s['tpot_within']:.0%}", f"{s['ttft_median_ratio']:.2f}"])
    print(table(["points", "engine", "n", "TPOT within 30 %", "TTFT median ratio"], body, align=["<", "<", ">", ">", ">"]))
    print(f"\n{len(rows)} measurements from {len({m.source for m in rows})} sources, and {len(serving)} serving rows; "
          "details and citations: docs/calibration.md")
    return 0


def cmd_docs(ns) -> int:
    """Regenerate what is generated from the declarations: docs/quantities.md, docs/calibration.md, the classic
    add-in module (addin/udfs.py), the table of Excel functions in docs/excel.md and the figures README.md and
    docs/*.md state (gpu_tco.figures)."""
    from ..addin.codegen import write_generated
    from ..core import QUANTITIES_DOC_PATH as DOC_PATH
    from ..core import write_calibration_doc as write_doc
    from ..core import write_quantities_doc as write

    checkout = DOC_PATH.parent.parent
    if not (checkout / "pyproject.toml").is_file():
        # installed from the wheel: the project's docs/, README and add-in module are not here to refresh (and
        # nothing is written into the installed package); the quantities reference goes where --out says
        print(f"wrote {write(ns.out or 'quantities.md')}")
        print("(docs/calibration.md, the add-in module and the README's table are refreshed in a copy of the project)")
        return 0
    print(f"wrote {write(ns.out)}")
    print(f"wrote {write_doc()}")
    for path in write_generated(checkout / "docs" / "excel.md"):
        print(f"wrote {path}")
    from ..figures import refresh  # after docs/calibration.md: README's error bands are read from it
    for path in refresh():
        print(f"wrote {path}")
    return _form_picture(DOC_PATH.parent / FORM_PICTURE)


FORM_PICTURE = "form.png"
FORM_PICTURE_SIZE = "1280x800"
FORM_PICTURE_SCENARIO = "examples/llama3-70b-lora.toml"  # relative to the repository


def _form_picture(path) -> int:
    """docs/form.png: the form at FORM_PICTURE_SIZE with the example scenario open, drawn offscreen
    (no display needed) in a process of its own (Qt starts once per process)."""
    import importlib.util
    import subprocess
    from pathlib import Path
    scenario = Path(path).parent.parent / FORM_PICTURE_SCENARIO
    if importlib.util.find_spec("PySide6") is None or not scenario.exists():
        print(f"skipped {path}: needs the gui extra (pip install 'gpu-tco[gui]') and {FORM_PICTURE_SCENARIO}")
        return 0
    import tempfile
    with tempfile.TemporaryDirectory() as config:  # the built-in catalogs and no saved window geometry, whoever runs it
        env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "GPU_TCO_CONFIG_DIR": config}
        run = subprocess.run([sys.executable, "-m", "gpu_tco", "form", "--scenario", str(scenario), "--screenshot", str(path),
                              "--size", FORM_PICTURE_SIZE], capture_output=True, text=True, env=env, timeout=300)
    if run.returncode:
        print(f"gpu-tco: error: {path}: {run.stderr.strip().splitlines()[-1] if run.stderr.strip() else 'the form did not answer'}",
              file=sys.stderr)
        return 1
    print(f"wrote {path}")
    return 0


def _tool_commands(command) -> None:
    """The commands that write files or run tools: workbook, addin, form, bench, calibrate, docs."""
    wbp = command("workbook", "write the formula-linked Excel workbook", "--out FILE [--email-draft FILE.eml] [--scenario FILE] [--INPUT VALUE ...]")
    wbp.add_argument("--out", required=True, metavar="FILE", help="target .xlsx file")
    wbp.add_argument("--email-draft", default=None, metavar="FILE.eml",
                     help="also write an e-mail draft (.eml, opens as a draft in Outlook or Thunderbird) with the workbook attached")
    _add_input_options(wbp)
    ad = command("addin", "Excel functions: build the xlwings Lite files or the demo workbook", "{lite,demo} --out PATH")
    ad_sub = ad.add_subparsers(dest="addin_command", required=True, metavar="{lite,demo}")
    lite = ad_sub.add_parser("lite", allow_abbrev=False, prog="gpu-tco addin lite", help="write main.py and requirements.txt for xlwings Lite")
    lite.add_argument("--out", required=True, metavar="FOLDER", help="folder for main.py and requirements.txt")
    demo = ad_sub.add_parser("demo", allow_abbrev=False, prog="gpu-tco addin demo", help="write a workbook showing every GPU_* function")
    demo.add_argument("--out", required=True, metavar="FILE", help="target .xlsx file")
    fm = command("form", "open the desktop form (needs the gui extra: pip install 'gpu-tco[gui]')",
                 "[--scenario FILE] [--screenshot FILE.png] [--size WxH]")
    fm.add_argument("--scenario", default=None, metavar="FILE", help="open a scenario (JSON or TOML)")
    fm.add_argument("--screenshot", default=None, metavar="FILE.png", help="compute, save a picture of the window and exit")
    fm.add_argument("--size", default=None, metavar="WxH", help="window size in pixels, e.g. 1280x800")
    bn = command("bench", "print the speed figures", "[--engine-only] [--cpu-time]")
    bn.add_argument("--engine-only", action="store_true", help="the engine, planners and Excel functions only (no sweeps in "
                    "fresh processes, form, main job or workbook)")
    bn.add_argument("--cpu-time", action="store_true", help="time the figures measured in one process by its CPU time (a "
                    "machine shared with other busy processes: what they would be on an idle one)")
    cal = command("calibrate", "compare the model with the published measurements it is calibrated on", "[--write]")
    cal.add_argument("--write", action="store_true", help="refit and write the fitted values into the catalogs (repeated until "
                     "they hold still: the fit reads the network slowdown at the catalogs' current values)")
    cal.add_argument("--once", action="store_true", help=argparse.SUPPRESS)  # one round of --write (a fresh process each)
    dc = command("docs", "regenerate docs/quantities.md, docs/calibration.md, docs/form.png, the add-in module, docs/excel.md's "
                         "function table and the figures README and docs state", "[--out PATH]")
    dc.add_argument("--out", default=None, metavar="PATH",
                    help="where to write the quantities reference [docs/quantities.md; installed: quantities.md here]")


def cmd_addin(ns) -> int:
    if ns.addin_command == "lite":
        from gpu_tco.addin.lite import build
        for path in build(ns.out):
            print(path)
        print("Paste main.py into xlwings Lite's main.py tab and requirements.txt into its requirements.txt tab.")
    else:
        from gpu_tco.addin.demo import write_demo
        print(write_demo(ns.out))
    return 0


def cmd_form(ns) -> int:
    import importlib.util
    if importlib.util.find_spec("PySide6") is None:  # Qt itself is imported by gpu_tco.gui only
        print("gpu-tco: error: the desktop form needs PySide6: pip install 'gpu-tco[gui]'", file=sys.stderr)
        return EXIT_BAD_INPUT
    from ..gui.app import main as form_main
    argv = [*(["--scenario", ns.scenario] if ns.scenario else []), *(["--screenshot", ns.screenshot] if ns.screenshot else []),
            *(["--size", ns.size] if ns.size else [])]
    return form_main(argv)
