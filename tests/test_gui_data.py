"""The form's doors to current data, with real widgets (pytest-qt, offscreen): the Custom... dialog opens a
Hugging Face config.json, and File > Refresh prices runs gpuhunt (installed, reading the local fixture catalog
tests/data/gpuhunt) in the background with progress, then recomputes with the new prices."""
from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt

from gpu_tco.core import catalog
from gpu_tco.core.engine import evaluate
from gpu_tco.gui.controller import Controller
from gpu_tco.gui.inputs_panel import ArchitectureDialog
from gpu_tco.gui.window import MainWindow

pytestmark = pytest.mark.gui

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "tests" / "data" / "hf_configs" / "Mixtral-8x7B-v0.1" / "config.json"


@pytest.fixture
def window(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("GPU_TCO_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("GPUHUNT_CATALOG_DIR", str(ROOT / "tests" / "data" / "gpuhunt"))
    w = MainWindow(Controller(), QSettings(str(tmp_path / "form.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(w)
    w.show()
    with qtbot.waitSignal(w.controller.answered, timeout=20_000):
        pass
    yield w
    w.controller.wait()
    monkeypatch.undo()
    catalog.reload()


@pytest.mark.slow
def test_custom_dialog_opens_a_config_json(qtbot, window):
    dialog = ArchitectureDialog(window)
    qtbot.addWidget(dialog)
    assert dialog.open_button.text() == "Open config.json..."
    assert not dialog.open_config(str(CONFIG.parent.parent / "README.md"))  # not a config: core's line, in the dialog
    assert dialog.message.text().startswith("model:") and dialog.config_path is None
    assert dialog.open_config(str(CONFIG))
    assert dialog.edits["layers"].text() == "32" and dialog.edits["ffn"].text() == "14,336"
    dialog._check()
    assert dialog.result() == 1 and dialog.value() == str(CONFIG)
    with qtbot.waitSignal(window.controller.answered, timeout=20_000) as blocker:
        window.controller.set_value("model", dialog.value())
    best = blocker.args[0]["recommended"]
    expected = evaluate({"model": "Mixtral-8x7B", "gpu": best["gpu"], "n_gpus": best["n_gpus"]},
                        outputs=("peak_train_gib_per_gpu",))["peak_train_gib_per_gpu"]
    assert best["peak_gib_per_gpu"] == pytest.approx(float(expected))  # the same answer as the catalog model
    # the model field itself takes the path typed in, and says what is wrong with a path that is not a config
    assert window.controller.edit("model", str(CONFIG.parent)) == ""
    assert window.controller.edit("model", str(CONFIG.parent.parent)).startswith("model:")
    # typing over a field after opening uses the typed fields instead
    qtbot.keyClicks(dialog.edits["layers"], "0")
    assert dialog.config_path is None and isinstance(dialog.value(), dict)


@pytest.mark.slow
def test_refresh_prices_runs_in_the_background_and_recomputes(qtbot, window):
    steps, said = [], []
    window.controller.refresh_progress.step.connect(lambda d, t, p: steps.append(p))
    window._say = lambda title, message, *a: said.append((title, message))
    offers_before = window.hardware.offer.count()
    with qtbot.waitSignal(window.controller.answered, timeout=30_000):
        window.findChild(type(window.menuBar().actions()[0]), "refresh_prices").trigger()
        assert window.refresh_dialog.isVisible()
    assert steps[:5] == ["aws", "azure", "gcp", "lambdalabs", "runpod"] and steps[-1] == "done"
    assert window.refresh_dialog is None and window.last_refresh.added == 9
    assert window.hardware.offer.count() == offers_before + 9  # the new offers are choices now
    assert said[0][0] == "Refresh prices" and "9 added" in said[0][1] and "T4 16 GB (2)" in said[0][1]
    assert catalog.offers().find("Lambda gpu_8x_h100_sxm5") is not None


def test_refresh_cancelled_leaves_the_offers_as_they_were(qtbot, window, tmp_path):
    """Cancel while the first provider is read (what the dialog's Cancel button calls, here from the worker's thread
    so the moment is the same on every run): the refresh stops before the next provider and writes nothing."""
    said = []
    window._say = lambda title, message, *a: said.append((title, message))
    window.controller.refresh_progress.step.connect(lambda d, t, p: window.controller.cancel_refresh() if d == 0 else None,
                                                    Qt.ConnectionType.DirectConnection)
    with qtbot.waitSignal(window.controller.finished, timeout=30_000):
        window.refresh_prices()
    assert said == [("Refresh prices", "offers --refresh: cancelled; the offers file is unchanged")]
    assert not (tmp_path / "config" / "offers.csv").exists() and window.refresh_dialog is None
