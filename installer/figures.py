"""The figures README.md and docs/*.md state, generated so that none goes stale.

A figure in the text is written between markers, ``<!-- figure: offers -->104<!-- /figure -->`` (the markers do not
show on a rendered page); ``gpu-tco docs`` rewrites every marked figure from its source, and tests/test_docs.py
fails when a file shows another value than its source gives or states a count of GPUs, offers, models,
measurements, sources or pages outside the markers.

Sources: the catalogs (``core/data/*.csv``), the published measurements (``core/data/measurements.csv``), the
generated calibration report (``docs/calibration.md``: its leave-one-source-out and serving tables, which
``gpu-tco docs`` writes first), the calibrated defaults (``core/data/calibrated.csv`` through core), the printed
report's page limit (``workbooks.PRINTED_PAGES_AT_MOST``, which the LibreOffice test holds the PDF to) and the test
suite's measured times (a table row of ``docs/benchmarks.md``).
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Callable

FIGURE = re.compile(r"<!-- figure: ([a-z0-9_]+) -->(.*?)<!-- /figure -->", re.S)
ROOT = Path(__file__).resolve().parent.parent  # the checkout (installer/ holds the package root)
CALIBRATION_DOC = ROOT / "docs" / "calibration.md"
GENERATED_DOCS = ("quantities.md", "calibration.md")  # written whole by their generators, no figure markers


def hand_written() -> list[Path]:
    """README.md and every docs/*.md that people write (the generated references excepted)."""
    docs = sorted(p for p in (ROOT / "docs").glob("*.md") if p.name not in GENERATED_DOCS)
    return [ROOT / "README.md", *docs]


def _catalog() -> dict[str, str]:
    from gpu_tco.core import catalog
    tables = catalog.tables()
    gpus = [row for row in tables["gpus"].rows[:tables["gpus"].file_rows]]
    offers = [row for row in tables["offers"].rows[:tables["offers"].file_rows] if row["name"] != "none"]
    return {"gpu_types": f"{sum(1 for row in gpus if not catalog.mig_profile(row)):,}",
            "mig_slices": f"{sum(1 for row in gpus if catalog.mig_profile(row)):,}",
            "models": f"{tables['models'].file_rows:,}", "offers": f"{len(offers):,}",
            "api_prices": f"{tables['apis'].file_rows:,}"}


def _measurements() -> dict[str, str]:
    from gpu_tco.core import calibration
    rows, serving = calibration.load_measurements(), calibration.serving_measurements()
    return {"measurements": f"{len(rows):,}", "measurement_sources": f"{len({m.source for m in rows}):,}",
            "serving_measurements": f"{len(serving):,}", "serving_measurement_sources": f"{len({m.source for m in serving}):,}"}


def calibration_table(text: str, first_column: str) -> tuple[int, str, str]:
    """(rows, median, worst) of the row of a table in docs/calibration.md whose first cell is ``first_column``."""
    m = re.search(rf"^\| {re.escape(first_column)} \| (\d+) \| ([\d.]+%) \| ([\d.]+%) \|$", text, re.M)
    if m is None:
        raise LookupError(f"docs/calibration.md has no row {first_column!r}: run `gpu-tco docs`")
    return int(m.group(1)), m.group(2), m.group(3)


def _errors() -> dict[str, str]:
    text = CALIBRATION_DOC.read_text(encoding="utf-8")
    out = {}
    for key, row in (("training", "training speed"), ("memory", "memory"), ("decode", "decode speed"),
                     ("serving_throughput", "global efficiencies only (as shipped): serving throughput"),
                     ("serving_latency", "global efficiencies only (as shipped): serving latency")):
        _, median, worst = calibration_table(text, row)
        out[f"{key}_median"], out[f"{key}_worst"] = median, worst
    return out


# a row of docs/calibration.md's table "Per training framework": framework | quantity | rows | median | worst | range
FRAMEWORK_ROW = re.compile(r"^\| ([a-z.]+) \| (training speed|memory) \| \d+ \| ([\d.]+%) \| [\d.]+% \| [^|]+ \|$", re.M)


def _frameworks() -> dict[str, str]:
    """Each training framework's leave-one-source-out median errors (``torchtune_speed_median``,
    ``torchtune_memory_median``) and its likely ranges (``torchtune_speed_band``, ``torchtune_memory_band``: frameworks.csv
    speed_band_pct and memory_band_pct)."""
    from gpu_tco.core import catalog
    out = {f"{m.group(1)}_{'speed' if m.group(2) == 'training speed' else 'memory'}_median": m.group(3)
           for m in FRAMEWORK_ROW.finditer(CALIBRATION_DOC.read_text(encoding="utf-8"))}
    for row in catalog.tables()["frameworks"].rows:
        out[f"{row['name']}_speed_band"] = f"{row['speed_band_pct']:g} %"
        out[f"{row['name']}_memory_band"] = f"{row['memory_band_pct']:g} %"
    return out


# the rows of docs/calibration.md's table "Rows that check the model" the text states: (check group of
# core.calibration.CHECK_GROUPS, kind, figure name prefix); each gives <prefix>_median and <prefix>_worst
CHECK_FIGURES = (("own", "training speed", "own_transformers_speed"), ("own", "memory", "own_transformers_memory"),
                 ("own_torchtune", "training speed", "own_torchtune_h100_speed"),
                 ("own_torchtune", "memory", "own_torchtune_h100_memory"),
                 ("own_torchtune_set", "training speed", "own_torchtune_h200_speed"),
                 ("own_torchtune_set", "memory", "own_torchtune_h200_memory"),
                 ("own_unsloth", "training speed", "own_unsloth_speed"), ("own_unsloth", "memory", "own_unsloth_memory"),
                 ("own_deepspeed", "training speed", "own_deepspeed_speed"), ("own_deepspeed", "memory", "own_deepspeed_memory"),
                 ("own_transformers", "training speed", "own_pairs_speed"), ("own_transformers", "memory", "own_pairs_memory"),
                 ("fms_acceleration_bench", "memory", "ibm_transformers_memory"))


def _checks() -> dict[str, str]:
    """The median and worst errors of the rows that check the model, per check group (calibration.check_label) and kind
    (CHECK_FIGURES)."""
    from gpu_tco.core import calibration
    text, out = CALIBRATION_DOC.read_text(encoding="utf-8"), {}
    for group, kind, prefix in CHECK_FIGURES:
        label = re.escape(calibration.check_label(group))
        m = re.search(rf"^\| [a-z.]+ \| {kind} \| {label} \| \d+ \| ([\d.]+%) \| ([\d.]+%) \|", text, re.M)
        if m is None:
            raise LookupError(f"docs/calibration.md has no check row {group!r} ({kind}): run `gpu-tco docs`")
        out[f"{prefix}_median"], out[f"{prefix}_worst"] = m.groups()
    return out


BENCHMARKS_DOC = ROOT / "docs" / "benchmarks.md"
SUITE_ROW = "the README's figures"


def _suite() -> dict[str, str]:
    """The test suite's times as last measured, from the row of docs/benchmarks.md's table whose first cell is
    ``SUITE_ROW``: pytest after the set-up, the whole ``.ci/run`` from a clean clone, the fast part, the machine's load."""
    text = BENCHMARKS_DOC.read_text(encoding="utf-8")
    m = re.search(rf"^\| {re.escape(SUITE_ROW)} \| ([^|]+?) \| ([^|]+?) \| ([^|]+?) \| ([^|]+?) \|$", text, re.M)
    if m is None:
        raise LookupError(f"docs/benchmarks.md has no table row {SUITE_ROW!r}")
    return dict(zip(("suite_time", "suite_whole_time", "fast_part_time", "suite_load"), m.groups()))


def _calibrated() -> dict[str, str]:
    from gpu_tco.core import DEFAULTS, auto_in_use, catalog
    tables = catalog.tables()
    return {"moe_train_efficiency": f"{DEFAULTS['moe_train_efficiency']:g}",
            "auto_mfu_h100": auto_in_use({"gpu": "H100-SXM"})["mfu"]["short"],
            "fp8_factor_te": f"{tables['precisions'].row('fp8')['fp8_mfu_factor']:.2f}",
            "fp8_factor_torchao": f"{tables['precisions'].row('fp8_torchao')['fp8_mfu_factor']:.2f}",
            "gb200_default_mfu": f"{tables['gpus'].row('GB200')['default_mfu']:.2f}",
            "selective_recompute_factor": f"{tables['recomputes'].row('selective')['mfu_factor']:.2f}",
            "full_recompute_factor": f"{tables['recomputes'].row('full')['mfu_factor']:.2f}"}


def _report() -> dict[str, str]:
    from gpu_tco.workbooks import PRINTED_PAGES_AT_MOST
    return {"report_pages_at_most": str(PRINTED_PAGES_AT_MOST)}


SOURCES: tuple[Callable[[], dict[str, str]], ...] = (_catalog, _measurements, _errors, _frameworks, _checks, _calibrated,
                                                      _report, _suite)


def figures() -> dict[str, str]:
    """Every figure's value as the text shows it."""
    out: dict[str, str] = {}
    for source in SOURCES:
        out.update(source())
    return out


def fill(text: str, values: dict[str, str]) -> str:
    """``text`` with each marked figure set to its value; an unknown name raises KeyError."""
    return FIGURE.sub(lambda m: f"<!-- figure: {m.group(1)} -->{values[m.group(1)]}<!-- /figure -->", text)


def stale(values: dict[str, str] | None = None) -> list[str]:
    """'file: name shows X, its source gives Y' for each marked figure that is out of date."""
    values = figures() if values is None else values
    found = []
    for path in hand_written():
        for m in FIGURE.finditer(path.read_text(encoding="utf-8")):
            if m.group(1) not in values:
                found.append(f"{path.name}: unknown figure {m.group(1)!r}")
            elif m.group(2) != values[m.group(1)]:
                found.append(f"{path.name}: {m.group(1)} shows {m.group(2)}, its source gives {values[m.group(1)]}")
    return found


def refresh() -> list[Path]:
    """Rewrite the marked figures of README.md and docs/*.md; returns the files that changed."""
    from gpu_tco.core import write_atomically
    values, written = figures(), []
    for path in hand_written():
        text = path.read_text(encoding="utf-8")
        new = fill(text, values)
        if new != text:
            write_atomically(path, new.encode("utf-8"))
            written.append(path)
    return written
