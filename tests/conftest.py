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
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # Qt without a screen, set before any Qt import
import qt_setup  # noqa: E402 - after sys.path has the helpers

# before pytest-qt loads Qt: the shared libraries Qt needs, installed (root, apt) when missing, and said
QT_MISSING = qt_setup.ensure_offscreen()


@pytest.fixture(scope="session")
def recalculated(tmp_path_factory):
    """Every workbook registered with lo.book(...), recalculated by LibreOffice in one batch."""
    import frozen
    import lo
    try:
        return lo.recalculate_all(tmp_path_factory.mktemp("libreoffice"), sorted(lo.BUILDERS))
    finally:
        frozen.start_if_wanted()  # the second core is free again: the rest of the tests run in one process


@pytest.fixture(scope="session")
def built_wheel(tmp_path_factory):
    """The project's wheel, built once per session (the test extra installs setuptools: no isolated build)."""
    import subprocess
    dist = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(dist), str(ROOT)],
                   check=True, capture_output=True, timeout=300)
    (wheel,) = dist.glob("gpu_tco-*.whl")
    return wheel


def pytest_collection_finish(session):
    """The frozen form's PyInstaller build (about 20 s) runs in the background when its test is selected:
    after the LibreOffice batch, which uses both cores, or at once when that batch is not part of the run;
    the other tests run in one process, so it uses the core they leave idle.  With pytest-xdist every worker
    collects every test but runs only some: the build then starts in the worker that runs the frozen test's
    group (the LibreOffice batch's, below), after the batch, or when the test itself asks for it."""
    import frozen
    ids = [item.nodeid for item in session.items]
    if any(i.endswith(frozen.TEST_NAME) for i in ids):
        frozen.WANTED = True
        if not XDIST_WORKER and not any("recalculated" in getattr(item, "fixturenames", ()) for item in session.items):
            frozen.start_if_wanted()


# Markers by the fixtures a test uses (pyproject.toml declares them): python -m pytest -m "not slow" runs the
# fast part; the README's command runs everything, and nothing here skips a test.
# pytest-xdist (pyproject's addopts: -n auto --dist loadgroup) sends the tests of one group to one worker: the
# LibreOffice batch (a session fixture, so once per worker that uses it) and the frozen form's build run once in
# the whole run, in one worker, and the wheel is built once; every other test goes to whichever worker is free.
XDIST_WORKER = os.environ.get("PYTEST_XDIST_WORKER")
GROUP_OF_FIXTURE = {"recalculated": "libreoffice", "built_wheel": "wheel"}

MARKS_OF_FIXTURE = {
    "recalculated": ("libreoffice", "slow"),  # the LibreOffice batch: about 30 s of both cores
    "built_wheel": ("slow",),                 # pip wheel, then installs of it
    "qtbot": ("gui",),
}


def pytest_itemcollected(item):
    """The groups, as each test is collected: before any pytest_collection_modifyitems (pytest-xdist's worker reads
    them in its own, which is registered after this file and so would run before a hook of this file)."""
    import frozen
    fixtures = set(getattr(item, "fixturenames", ()))
    groups = sorted({GROUP_OF_FIXTURE[f] for f in fixtures & set(GROUP_OF_FIXTURE)})
    if item.name == frozen.TEST_NAME:
        groups = ["libreoffice"]  # its build starts when the batch is done, in the batch's worker
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
    for item in items:
        for fixture in set(getattr(item, "fixturenames", ())) & set(MARKS_OF_FIXTURE):
            for mark in MARKS_OF_FIXTURE[fixture]:
                item.add_marker(mark)
