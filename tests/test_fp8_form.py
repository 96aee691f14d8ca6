"""The desktop form's precision field with real Qt widgets (pytest-qt, offscreen): it lists the precisions catalog,
so the FP8 recipes are there as rows of that catalog, with nothing in the form that names them."""
from __future__ import annotations

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QComboBox

from gpu_tco.core import catalog
from gpu_tco.gui.controller import Controller
from gpu_tco.gui.window import MainWindow

pytestmark = pytest.mark.gui


def test_the_form_offers_the_fp8_precisions(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("GPU_TCO_CONFIG_DIR", str(tmp_path / "config"))
    w = MainWindow(Controller(), QSettings(str(tmp_path / "form.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(w)
    box = w.fields["precision"].editor
    assert isinstance(box, QComboBox)
    items = [box.itemText(i) for i in range(box.count())]
    assert items == list(catalog.tables()["precisions"].names)
    assert {"fp8", "fp8_torchao", "mxfp8"} <= set(items)
