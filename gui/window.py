"""The form's window: the inputs panel beside the answer panel, the File menu and the status bar.

The panels hold the widgets (``gui.inputs_panel``, ``gui.answer_panel``); the window passes the controller's
signals to them and handles files, settings and dialogs.
"""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings, Qt, QUrl
from PySide6.QtGui import QAction, QDesktopServices, QKeySequence
from PySide6.QtWidgets import QApplication, QFileDialog, QMainWindow, QMessageBox, QProgressBar, QProgressDialog, QSplitter

from ..core import GpuTcoError
from . import model
from .answer_panel import AnswerPanel
from .controller import Controller, short_message
from .inputs_panel import InputsPanel

MAX_RECENT = 8


class MainWindow(QMainWindow):
    def __init__(self, controller: Controller | None = None, settings: QSettings | None = None):
        super().__init__()
        self.controller = controller or Controller(self)
        self.settings = settings
        self.setWindowTitle("gpu-tco: plan a GPU job")
        self.inputs_panel = InputsPanel(self.controller)
        self.answer_panel = AnswerPanel(self.controller)
        self._name_widgets()
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.inputs_panel)
        splitter.addWidget(self.answer_panel)
        splitter.setStretchFactor(0, 0)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([400, 880])
        self.setCentralWidget(splitter)
        self._menus()
        self.progress = QProgressBar()
        self.progress.setRange(0, 0)  # busy: an indeterminate bar
        self.progress.setMaximumWidth(160)
        self.progress.hide()
        self.statusBar().addPermanentWidget(self.progress)
        c = self.controller
        c.answered.connect(self.show_answer)
        c.field_message.connect(self.inputs_panel.show_message)
        c.stale.connect(self._stale)
        c.problem.connect(self._problem)
        c.busy.connect(self.progress.setVisible)
        c.loaded.connect(self.refresh_fields)
        c.finished.connect(self._finished)
        self._restore()
        self._update_title()
        c.schedule()

    def _name_widgets(self) -> None:
        """The panels' widgets that tests, the screenshot and scripts reach from the window."""
        self.fields, self.hardware, self.advanced_toggle = self.inputs_panel.fields, self.inputs_panel.hardware, self.inputs_panel.advanced_toggle
        a, o = self.answer_panel, self.answer_panel.options_tab
        self.stale_banner, self.headline, self.figures, self.explanation, self.tabs = (
            a.stale_banner, a.headline, a.figures, a.explanation, a.tabs)
        self.show_rejected, self.table, self.table_model, self.proxy = o.show_rejected, o.table, o.table_model, o.proxy
        self.cost_view, self.memory_view, self.cash_view = a.charts.views()

    def _menus(self) -> None:
        menu = self.menuBar().addMenu("&File")

        def action(text, slot, shortcut=None, name=None):
            act = QAction(text, self)
            if shortcut:
                act.setShortcut(QKeySequence(shortcut))
            act.triggered.connect(slot)
            if name:
                act.setObjectName(name)
            menu.addAction(act)
            return act
        action("&New", self.new_scenario, QKeySequence.StandardKey.New)
        action("&Open scenario...", self.open_dialog, QKeySequence.StandardKey.Open)
        self.recent_menu = menu.addMenu("Open &recent")
        action("&Save scenario", self.save, QKeySequence.StandardKey.Save)
        action("Save scenario &as...", self.save_as, QKeySequence.StandardKey.SaveAs)
        menu.addSeparator()
        action("&Export workbook...", self.export_dialog, "Ctrl+E", "export")
        action("E-&mail workbook...", self.email_dialog, "Ctrl+M", "email")
        action("&Copy results", self.copy_results, "Ctrl+Shift+C", "copy_results")
        action("&Refresh prices...", self.refresh_prices, None, "refresh_prices")
        menu.addSeparator()
        action("&Quit", self.close, QKeySequence.StandardKey.Quit)
        self._fill_recent()

    # --- showing the answer ---------------------------------------------------------------
    def show_answer(self, answer: dict) -> None:
        self.answer_panel.show_answer(answer)
        self.inputs_panel.show_auto(model.auto_placeholders(answer))
        options = answer["options"]
        self.statusBar().showMessage(f"{sum(o['ok'] for o in options)} of {len(options)} options acceptable", 5000)

    def answer_text(self) -> str:
        return self.answer_panel.answer_text()

    def current_rows(self) -> tuple[list[str], list[list]]:
        return self.answer_panel.options_tab.current_rows()

    def _stale(self, stale: bool) -> None:
        self.stale_banner.setVisible(stale)
        errors = self.controller.state.blocking()
        if self.controller.answer is None and errors:  # nothing is being computed: say what stands in the way
            labels = [self.inputs_panel.label(n) for n in errors]
            self.headline.setText(f"No answer yet: fix the field{'s' if len(labels) > 1 else ''} marked in red "
                                  f"({', '.join(labels)}).")

    def _problem(self, field: str, message: str) -> None:
        """A problem of the inputs taken together (field: the input it names, or "")."""
        self.inputs_panel.show_problem(field, message)
        if message:
            self.statusBar().showMessage(message)
            if self.controller.answer is None:
                self.headline.setText(message)

    # --- files -------------------------------------------------------------------------------
    def refresh_fields(self) -> None:
        self.inputs_panel.refresh()
        self._update_title()

    def new_scenario(self) -> None:
        self.controller.new()

    def open_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open scenario", self._folder(), "Scenarios (*.json *.toml);;All files (*)")
        if path:
            self.open_file(path)

    def open_file(self, path: str) -> bool:
        try:
            errors = self.controller.open(path)
        except GpuTcoError as err:
            self._say("Open scenario", short_message(err))
            return False
        self._remember(path)
        if errors:
            self.statusBar().showMessage(f"Opened {Path(path).name}: {len(errors)} value(s) need fixing (marked in red).")
        return True

    def save(self) -> None:
        if self.controller.path is None:
            self.save_as()
        else:
            self.save_file(str(self.controller.path))

    def save_as(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Save scenario", str(Path(self._folder()) / "scenario.json"),
                                              "JSON (*.json);;TOML (*.toml)")
        if path:
            self.save_file(path)

    def save_file(self, path: str) -> bool:
        try:
            self.controller.save(path)
        except GpuTcoError as err:
            self._say("Save scenario", short_message(err))
            return False
        self._remember(path)
        self.statusBar().showMessage(f"Saved {path}", 5000)
        return True

    def export_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export workbook", str(Path(self._folder()) / "gpu-plan.xlsx"), "Excel (*.xlsx)")
        if path:
            self.controller.export(path)

    def email_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Save the workbook to attach", str(Path(self._folder()) / "gpu-plan.xlsx"),
                                              "Excel (*.xlsx)")
        if path:
            self.controller.email(path)

    def refresh_prices(self) -> None:
        """File > Refresh prices: today's cloud offers through gpuhunt, with progress and Cancel."""
        dialog = QProgressDialog("Fetching today's cloud offers...", "Cancel", 0, 0, self)
        dialog.setWindowTitle("Refresh prices")
        dialog.setMinimumDuration(0)
        dialog.setAutoClose(False)
        dialog.setAutoReset(False)
        dialog.canceled.connect(self.controller.cancel_refresh)
        self.refresh_dialog = dialog

        def step(done, total, provider):
            dialog.setMaximum(total)
            dialog.setValue(done)
            dialog.setLabelText("Writing the offers..." if provider == "done" else
                                f"Reading {provider} ({done + 1} of {total})...")
        self.controller.refresh_progress.step.connect(step)
        self._refresh_step = step
        dialog.show()
        self.controller.refresh_prices()

    def _refreshed(self, result, error) -> None:
        dialog = getattr(self, "refresh_dialog", None)
        if dialog is not None:
            self.controller.refresh_progress.step.disconnect(self._refresh_step)
            dialog.close()
            self.refresh_dialog = None
        if error is not None:
            self._say("Refresh prices", short_message(error))
            return
        self.inputs_panel.hardware.reload_offers()
        text = result.summary() + "."
        if result.unmapped_line():
            text += " " + result.unmapped_line() + "."
        self.last_refresh = result
        self._say("Refresh prices", text, QMessageBox.Icon.Information)
        self.controller.schedule()  # the answer again, with today's prices

    def _finished(self, action: str, outcome: tuple) -> None:
        result, error = outcome
        if action == "refresh":
            self._refreshed(result, error)
            return
        if error is not None:
            self._say("Export workbook" if action == "export" else "E-mail workbook", short_message(error))
            return
        if action == "export":
            self.statusBar().showMessage(f"Workbook saved: {result}", 8000)
            self._set_folder(str(Path(result).parent))
        elif action == "email":
            self.statusBar().showMessage(result.message, 10000)
            if result.method == "eml-saved":  # nothing opened it: show where it is
                QDesktopServices.openUrl(QUrl.fromLocalFile(str(result.path.parent)))
                self._say("E-mail workbook", result.message, QMessageBox.Icon.Information)

    def copy_results(self) -> None:
        headers, rows = self.answer_panel.options_tab.current_rows()
        QApplication.clipboard().setText(model.tab_separated(headers, rows))
        self.statusBar().showMessage(f"Copied {len(rows)} rows: paste them into Excel as a table", 5000)

    def _say(self, title: str, message: str, icon=QMessageBox.Icon.Warning) -> None:
        """One short sentence in a dialog (tests replace it to record the sentence)."""
        box = QMessageBox(icon, title, message, QMessageBox.StandardButton.Ok, self)
        box.open()
        self.last_dialog = box

    # --- settings ------------------------------------------------------------------------------
    def _folder(self) -> str:
        return str(self.settings.value("last_folder", str(Path.home()))) if self.settings else str(Path.home())

    def _set_folder(self, folder: str) -> None:
        if self.settings:
            self.settings.setValue("last_folder", folder)

    def _remember(self, path: str) -> None:
        self._set_folder(str(Path(path).resolve().parent))
        if self.settings:
            recent = [p for p in _list(self.settings.value("recent_files")) if p != str(Path(path).resolve())]
            self.settings.setValue("recent_files", [str(Path(path).resolve()), *recent][:MAX_RECENT])
        self._fill_recent()
        self._update_title()

    def _fill_recent(self) -> None:
        self.recent_menu.clear()
        recent = _list(self.settings.value("recent_files")) if self.settings else []
        for p in recent:
            act = self.recent_menu.addAction(p)
            act.triggered.connect(lambda _=False, p=p: self.open_file(p))
        self.recent_menu.setEnabled(bool(recent))

    def _restore(self) -> None:
        if self.settings and self.settings.value("geometry") is not None:
            self.restoreGeometry(self.settings.value("geometry"))
        else:
            self.resize(1280, 800)

    def _update_title(self) -> None:
        name = self.controller.path.name if self.controller.path else "new scenario"
        self.setWindowTitle(f"gpu-tco: {name}")

    def closeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        if self.settings:
            self.settings.setValue("geometry", self.saveGeometry())
            self.settings.sync()
        super().closeEvent(event)



def _list(value) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else [str(v) for v in value]
