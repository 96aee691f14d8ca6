"""Where the suite's processor time goes: ``PYTHONPATH=tests python -m pytest -p cpu_probe`` prints, at the end, the
tests that took the most CPU (user + system) in their own process and in the processes they started and waited for
(LibreOffice, pip, the command line), and the totals.  Wall times (``--durations``) say little on a machine shared
with other work; processor time does.  Set-up of a session fixture counts in the first test that uses it.  Works with
pytest-xdist: each worker writes its rows to a file of the run's folder, and the controlling process adds them up."""
from __future__ import annotations

import os
import resource
import shutil
import tempfile
from pathlib import Path

import pytest

SHOWN = 25
FOLDER_VARIABLE = "GPU_TCO_TEST_CPU_PROBE_DIR"


def _cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


_MADE_HERE = "GPU_TCO_TEST_CPU_PROBE_MADE"


def _folder() -> Path:
    # made by the first process (the controller with pytest-xdist), inherited by the workers; a folder named by the
    # caller keeps its rows (one file per worker: seconds, tab, test) for sums per file
    if not os.environ.get(FOLDER_VARIABLE):
        os.environ[FOLDER_VARIABLE] = tempfile.mkdtemp(prefix="gpu-tco-cpu-probe-")
        os.environ[_MADE_HERE] = "1"
    return Path(os.environ[FOLDER_VARIABLE])


def pytest_configure(config):
    _folder()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    before = _cpu()
    yield
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    with open(_folder() / f"{worker}.tsv", "a", encoding="utf-8") as fh:
        fh.write(f"{_cpu() - before:.3f}\t{item.nodeid}\n")


def pytest_terminal_summary(terminalreporter):
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return
    rows = []
    for path in _folder().glob("*.tsv"):
        for line in path.read_text(encoding="utf-8").splitlines():
            seconds, nodeid = line.split("\t", 1)
            rows.append((float(seconds), nodeid))
    rows.sort(reverse=True)
    total = sum(s for s, _ in rows)
    terminalreporter.section("processor time per test (its process and the processes it waited for)")
    for seconds, nodeid in rows[:SHOWN]:
        terminalreporter.write_line(f"{seconds:8.2f} s  {nodeid}")
    terminalreporter.write_line(f"{total:8.2f} s  in {len(rows)} tests; this process and the processes it waited for "
                                f"(with pytest-xdist: the workers that ended): {_cpu():.2f} s")
    if os.environ.get(_MADE_HERE):
        shutil.rmtree(_folder(), ignore_errors=True)
