"""Test set-up: helpers importable, the checkout itself not importable, LibreOffice batched."""
import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings

# In CI the property tests draw the same examples every run, so a red run is reproducible and never
# a coin toss; on a developer's machine they keep exploring new ones (which is how a GPU priced at
# 3.7e305 was found), and anything they find goes into an @example.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI") == "true":
    settings.load_profile("ci")

# One BLAS thread in the workers and every process they start, as the command line sets for itself: OpenBLAS's thread per
# core otherwise spins beside the other worker (it doubled a short command's CPU time on two cores).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parents[1]
# The tests use the installed package (gpu_tco.*): the checkout's folders must not shadow it as
# top-level "core" or "addin" packages (python -m pytest puts the current folder on sys.path).
sys.path[:] = [p for p in sys.path if p not in ("", ".") and Path(p).resolve() != ROOT]
sys.path.insert(0, str(Path(__file__).parent))  # helpers: helpers, lo, excel_eval
# The generated code's cache (core/codecache.py) in a folder of this run, shared by its processes (the command-line
# runs, the xdist workers, which inherit it), never the user's own cache folder.
if not os.environ.get("GPU_TCO_CACHE_DIR"):
    os.environ["GPU_TCO_CACHE_DIR"] = tempfile.mkdtemp(prefix="gpu-tco-test-cache-")
    atexit.register(shutil.rmtree, os.environ["GPU_TCO_CACHE_DIR"], ignore_errors=True)  # by the process that made it
# The project's modules compiled to bytecode beside their sources (__pycache__, which git ignores), as pip does for an
# installed package: where Python writes no bytecode itself (PYTHONDONTWRITEBYTECODE, as on the project's test machine),
# an editable install's modules would be compiled again by every process, and every command-line run in a subprocess
# (hundreds per run) would spend about 0.14 s of its 0.4 s on it.  Up-to-date files are left as they are.
# The same for the test modules: pytest keeps their assert-rewritten code in tests/__pycache__ only when Python may write
# bytecode, so it may while the tests are collected (about 2.5 s of each collecting process's 4.5 s once the cache
# exists); collection done, this process is back to writing none (pytest_collection_finish).
WROTE_NO_BYTECODE = sys.dont_write_bytecode
if WROTE_NO_BYTECODE:
    import compileall
    for _folder in ("core", "installer", "workbooks", "addin", "gui"):
        compileall.compile_dir(ROOT / _folder, quiet=2)
    sys.dont_write_bytecode = False
# The frozen form's build folder (tests/frozen.py), shared the same way: the build may run in one worker, its test in another.
if not os.environ.get("GPU_TCO_TEST_FROZEN_DIR"):
    os.environ["GPU_TCO_TEST_FROZEN_DIR"] = tempfile.mkdtemp(prefix="gpu-tco-frozen-")
    atexit.register(shutil.rmtree, os.environ["GPU_TCO_TEST_FROZEN_DIR"], ignore_errors=True)
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # Qt without a screen, set before any Qt import
import qt_setup  # noqa: E402 - after sys.path has the helpers

# before pytest-qt loads Qt: the shared libraries Qt needs, installed (root, apt) when missing, and said
QT_MISSING = qt_setup.ensure_offscreen()


# The form recomputes after a pause in typing (gui/controller.py, DEBOUNCE_MS: 150 ms), and a form test waits out that
# pause after each edit: about 8.5 s of a run's form tests in which the worker only waits.  The tests run the form with a
# shorter pause (how long it waits, not what it computes or in which order); the tests of the pause itself carry the
# mark real_recompute_pause and keep the form's own.  Processes of their own (the command line, the frozen form) keep it.
@pytest.fixture(autouse=True)
def _short_recompute_pause(request, monkeypatch):
    controller = sys.modules.get("gpu_tco.gui.controller")  # (imported by the form's test modules as they are collected)
    if controller is not None and request.node.get_closest_marker("real_recompute_pause") is None:
        monkeypatch.setattr(controller, "DEBOUNCE_MS", qt_setup.TEST_RECOMPUTE_PAUSE_MS)


@pytest.fixture(scope="session")
def recalculated(tmp_path_factory):
    """Every workbook registered with lo.book(...), recalculated by LibreOffice in one batch."""
    import lo
    return lo.recalculate_all(tmp_path_factory.mktemp("libreoffice"), sorted(lo.BUILDERS))


@pytest.fixture(scope="session")
def training_loso():
    """Leave-one-source-out over the shipped training measurements (one refit per source, a part of it reused where the
    source held no row of that kind: about 3 to 4 s), computed once for the tests that read it (one xdist group, below)."""
    from gpu_tco.core import calibration
    return calibration.leave_one_source_out(calibration.load_measurements())


@pytest.fixture(scope="session")
def built_wheel(tmp_path_factory):
    """The project's wheel: the one the set-up built from this checkout (tests/prepare.py, tests/artifacts.py), else
    built once per session (the test extra installs setuptools: no isolated build)."""
    import subprocess

    import artifacts
    prepared = artifacts.prepared_wheel()
    if prepared is not None:
        return prepared
    dist = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(dist), str(ROOT)],
                   check=True, capture_output=True, timeout=300)
    (wheel,) = dist.glob("gpu_tco-*.whl")
    return wheel


def pytest_collection_finish(session):
    """The frozen form's PyInstaller build (about 25 s of one core) starts in the background as soon as its test is
    collected, beside the LibreOffice batch and the installers (the longest chains, which start first); its test runs
    last and waits for it.  With pytest-xdist every worker collects every test: the first to start the build builds
    (tests/frozen.py), whichever worker runs the test waits for it."""
    import frozen
    sys.dont_write_bytecode = WROTE_NO_BYTECODE
    if session.config.option.collectonly:
        return
    # What the tests collected (the engine, its expression trees, the modules) lives as long as the worker: frozen,
    # the collector no longer walks it, and with passes less frequent a test's own objects are walked less often
    # (about 9 % less CPU over the fast part of the suite on the project's machine)
    import gc
    gc.freeze()
    gc.set_threshold(20_000, 20, 100)
    if any(item.name == frozen.TEST_NAME for item in session.items):
        frozen.start_build()


def pytest_sessionfinish(session):
    import frozen
    frozen.reap()


# Markers by the fixtures a test uses (pyproject.toml declares them): python -m pytest -m "not slow" runs the
# fast part; the README's command runs everything, and nothing here skips a test.
# pytest-xdist (pyproject's addopts: -n auto --dist loadgroup) sends the tests of one group to one worker: the
# LibreOffice batch (a session fixture, so once per worker that uses it) runs once in the whole run, in one worker, and
# the wheel is built once; the groups hold the most tests, so they are handed out first (the longest chains start
# first), and every other test goes to whichever worker is free.
XDIST_WORKER = os.environ.get("PYTEST_XDIST_WORKER")
GROUP_OF_FIXTURE = {"recalculated": "libreoffice", "built_wheel": "wheel", "training_loso": "calibration"}

MARKS_OF_FIXTURE = {
    "recalculated": ("libreoffice", "slow"),  # the LibreOffice batch: about 30 s of both cores
    "built_wheel": ("slow",),                 # pip wheel, then installs of it
    "training_loso": ("slow",),               # a refit per source
    "qtbot": ("gui",),
}


def pytest_itemcollected(item):
    """The groups, as each test is collected: before any pytest_collection_modifyitems (pytest-xdist's worker reads
    them in its own, which is registered after this file and so would run before a hook of this file)."""
    fixtures = set(getattr(item, "fixturenames", ()))
    groups = sorted({GROUP_OF_FIXTURE[f] for f in fixtures & set(GROUP_OF_FIXTURE)})
    if groups:
        item.add_marker(pytest.mark.xdist_group(groups[0]))
        if XDIST_WORKER and "@" not in item.nodeid:
            _set_group_in_test_id(item, groups[0])


def _set_group_in_test_id(item, group: str) -> None:
    """The group as pytest-xdist's scheduler reads it: the test id "...@group".  pytest-xdist 3.8 sets it by
    assigning ``item._nodeid``, which pytest 9.2 no longer reads (a test's id is the structured ``item._id``), so
    its --dist loadgroup would spread a group over the workers; this sets the id either way."""
    new = f"{item.nodeid}@{group}"
    if hasattr(item, "_id"):
        from _pytest.nodeid import coerce_node_id
        item._id = coerce_node_id(new)
    else:
        item._nodeid = new


def pytest_collection_modifyitems(config, items):
    import frozen
    # the frozen form's test last: its build runs in the background meanwhile (pytest-xdist hands out single tests
    # in this order, after the groups, which hold the most tests and so go first)
    items.sort(key=lambda item: item.name == frozen.TEST_NAME)
    for item in items:
        for fixture in set(getattr(item, "fixturenames", ())) & set(MARKS_OF_FIXTURE):
            for mark in MARKS_OF_FIXTURE[fixture]:
                item.add_marker(mark)
