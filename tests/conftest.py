"""Test set-up: helpers importable, the checkout itself not importable, LibreOffice batched."""
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# The tests use the installed package (gpu_tco.*): the checkout's folders must not shadow it as
# top-level "core" or "addin" packages (python -m pytest puts the current folder on sys.path).
sys.path[:] = [p for p in sys.path if p not in ("", ".") and Path(p).resolve() != ROOT]
sys.path.insert(0, str(Path(__file__).parent))  # helpers: lo, excel_eval
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # Qt without a screen, set before any Qt import
import qt_setup  # noqa: E402 - after sys.path has the helpers

# before pytest-qt loads Qt: the shared libraries Qt needs, installed (root, apt) when missing, and said
QT_MISSING = qt_setup.ensure_offscreen()


@pytest.fixture(scope="session")
def recalculated(tmp_path_factory):
    """Every workbook registered with lo.book(...), recalculated by LibreOffice in one batch."""
    import lo
    return lo.recalculate_all(tmp_path_factory.mktemp("libreoffice"), sorted(lo.BUILDERS))
