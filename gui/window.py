"""The form's window: widgets and layout only.  Values come from the controller, which asks core.

Every label, unit, tooltip and list of choices is read from core's input declarations
(``core.inputs``) and catalogs; nothing here restates them.
"""
from __future__ import annotations

import html
import math
from pathlib import Path

from PySide6.QtCharts import QChartView
from PySide6.QtCore import QEvent, QSettings, Qt, QUrl
from PySide6.QtGui import QAction, QDesktopServices, QKeySequence, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QCompleter,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMainWindow,
    QMessageBox,
    QProgressBar,
    QProgressDialog,
    QRadioButton,
    QScrollArea,
    QSpinBox,
    QSplitter,
    QTableView,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QTextBrowser,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ..core import AUTO_QUANTITY, DEFAULTS, REQUIRED_FIELDS, GpuTcoError, Input, catalog, cite, explain, option_inputs
from ..core import INPUTS_BY_NAME as BY_NAME
from . import charts, model
from .controller import Controller, short_message

SECTION_TITLES = {"the job": "The job", "hardware": "Hardware", "renting": "Renting", "owning": "Owning",
                  "serving": "Serving", "advanced": "Advanced inputs"}
MAX_RECENT = 8
UNIT_SHOWN = {"-": "", "flag": ""}


def tooltip(inp: Input) -> str:
    """Description, what is allowed and the source, from the declaration."""
    parts = [inp.description, f"Allowed: {inp.allowed()}.", f"Default: {model.value_text(inp, inp.default)}."]
    if inp.source:
        parts.append(f"Source: {cite(inp.source, short=True)}")
    parts.append(f"Name in scenario files and Excel: {inp.name}")
    return "\n".join(parts)


class Field:
    """One input's widgets: label, editor, unit and the line for core's message."""

    def __init__(self, inp: Input, controller: Controller, grid: QGridLayout, row: int):
        self.inp, self.controller = inp, controller
        self.label = QLabel(inp.label)
        self.label.setToolTip(tooltip(inp))
        self.editor = self._editor()
        self.editor.setToolTip(tooltip(inp))
        self.editor.setObjectName(f"field_{inp.name}")
        self.editor.setAccessibleName(inp.label)
        self.label.setBuddy(self.editor)
        self.unit = QLabel(UNIT_SHOWN.get(inp.unit, inp.unit))
        self.message = QLabel()
        self.message.setObjectName(f"message_{inp.name}")
        self.message.setWordWrap(True)
        self.message.setStyleSheet("color: #c62828;")
        self.message.hide()
        grid.addWidget(self.label, row, 0)
        if inp.name == "model":
            box = QHBoxLayout()
            box.setContentsMargins(0, 0, 0, 0)
            box.addWidget(self.editor, 1)
            self.custom = QToolButton(text="Custom...")
            self.custom.setToolTip("Describe your own architecture (layers, hidden size, heads, ...)")
            self.custom.clicked.connect(self._custom_architecture)
            box.addWidget(self.custom)
            grid.addLayout(box, row, 1)
        else:
            grid.addWidget(self.editor, row, 1)
        grid.addWidget(self.unit, row, 2)
        grid.addWidget(self.message, row + 1, 0, 1, 3)
        self.refresh()

    def _editor(self) -> QWidget:
        inp = self.inp
        if inp.kind == "flag":
            box = QCheckBox()
            box.toggled.connect(lambda on: self.controller.edit(inp.name, "1" if on else "0"))
            return box
        if inp.kind == "choice":
            names = catalog.tables()[inp.table].names
            box = QComboBox()
            box.addItems(names)
            # as wide as the column allows, not as wide as the longest catalog name
            box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            box.setMinimumContentsLength(8)
            if inp.accepts_number:  # the model: type to search, or a parameter count such as 70B
                box.setEditable(True)
                box.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
                completer = QCompleter(names, box)
                completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
                completer.setFilterMode(Qt.MatchFlag.MatchContains)
                box.setCompleter(completer)
                box.lineEdit().setPlaceholderText("a model name, a size such as 70B, or a config.json path")
                box.lineEdit().editingFinished.connect(lambda: self.controller.edit(inp.name, box.currentText()))
            box.activated.connect(lambda _i: self.controller.edit(inp.name, box.currentText()))
            return box
        edit = QLineEdit()
        edit.setMinimumWidth(edit.fontMetrics().horizontalAdvance("0" * 11))
        # an input whose 0 means "automatic" shows an empty field and, as placeholder, the value in use (show_answer)
        edit.setPlaceholderText("auto" if inp.name in AUTO_QUANTITY else model.value_text(inp, inp.default))
        edit.textEdited.connect(lambda text: self.controller.edit(inp.name, text if text.strip() else model.value_text(inp, inp.default)))
        return edit

    def value(self):
        return self.controller.state.values.get(self.inp.name, DEFAULTS[self.inp.name])

    def refresh(self) -> None:
        """Show the controller's value (after New or Open)."""
        value = self.value()
        ed = self.editor
        ed.blockSignals(True)
        if isinstance(ed, QCheckBox):
            ed.setChecked(bool(value))
        elif isinstance(ed, QComboBox):
            text = model.value_text(self.inp, value)
            i = ed.findText(text)
            if i >= 0:
                ed.setCurrentIndex(i)
            elif ed.isEditable():
                ed.setEditText(text)
        else:
            auto = self.inp.name in AUTO_QUANTITY and isinstance(value, (int, float)) and not value > 0
            ed.setText("" if auto else model.value_text(self.inp, value))
        ed.blockSignals(False)
        self.show_message(self.controller.state.errors.get(self.inp.name, ""))

    def show_auto(self, text: str, short: str) -> None:
        """The value in use as the empty field's placeholder: the whole sentence when it fits the field,
        else the value alone, else "auto"; the sentence is always in the tooltip."""
        ed = self.editor
        room = ed.contentsRect().width() - 2 * ed.fontMetrics().horizontalAdvance("x")  # the text margins
        ed.setPlaceholderText(next((t for t in (text, short) if ed.fontMetrics().horizontalAdvance(t) <= room), "auto"))
        ed.setToolTip(f"In use: {text}.\n{tooltip(self.inp)}")

    def show_message(self, text: str) -> None:
        self.message.setText(text)
        self.message.setVisible(bool(text))
        self.editor.setProperty("invalid", bool(text))
        self.editor.setStyleSheet("border: 1px solid #c62828;" if text and not isinstance(self.editor, QCheckBox) else "")

    def _custom_architecture(self) -> None:
        dialog = ArchitectureDialog(self.editor)
        if dialog.exec() == QDialog.DialogCode.Accepted:
            message = self.controller.set_value("model", dialog.value())
            if not message:
                self.editor.setEditText(model.value_text(self.inp, dialog.value()))


class ArchitectureDialog(QDialog):
    """A model's architecture fields (the models catalog's columns), for a model not in the catalog."""
    FIELDS = (("name", "Name", "My model"), ("layers", "Layers", "32"), ("hidden", "Hidden size", "4096"),
              ("ffn", "Feed-forward size", "14336"), ("heads", "Attention heads", "32"),
              ("kv_heads", "Key/value heads (grouped-query attention)", "8"), ("vocab", "Vocabulary", "128256"))

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setWindowTitle("Custom architecture")
        form = QFormLayout(self)
        self.edits = {}
        for key, label, example in self.FIELDS:
            edit = QLineEdit(example)
            edit.textEdited.connect(self._typed)
            form.addRow(label, edit)
            self.edits[key] = edit
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setStyleSheet("color: #c62828;")
        form.addRow(self.message)
        self.config_path: str | None = None  # a Hugging Face config.json the fields were read from
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.open_button = buttons.addButton("Open config.json...", QDialogButtonBox.ButtonRole.ActionRole)
        self.open_button.setToolTip("Read the architecture from a model's Hugging Face config.json")
        self.open_button.clicked.connect(self._open_dialog)
        buttons.accepted.connect(self._check)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)

    def _typed(self, _text: str) -> None:
        self.config_path = None  # the user's own fields from now on

    def _open_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open a Hugging Face config.json", "", "config.json (*.json);;All files (*)")
        if path:
            self.open_config(path)

    def open_config(self, path: str) -> bool:
        """Read a config.json: its fields fill the dialog, or core's one-line message shows; True when read."""
        message = model.field_error(BY_NAME["model"], path)
        if message:
            self.message.setStyleSheet("color: #c62828;")
            self.message.setText(message)
            return False
        from ..core import resolve_inputs, row_of
        row = row_of(resolve_inputs({"model": path}), "model")
        for key, edit in self.edits.items():
            edit.setText(str(row[key]) if key == "name" else model.value_text(BY_NAME["n_gpus"], row[key]))
        self.config_path = path
        self.message.setStyleSheet("")
        self.message.setText(f"Read from {path} ({row['family']}). OK uses the whole file; "
                             "changing a field above uses the fields instead.")
        return True

    def value(self):
        """What the model field takes: the config.json's path when one was opened and its fields left as read,
        else the fields typed."""
        if self.config_path is not None:
            return self.config_path
        return self.spec()

    def spec(self) -> dict:
        out: dict = {}
        for key, edit in self.edits.items():
            text = edit.text().strip()
            if key == "name":
                if text:
                    out[key] = text
            elif text:
                out[key] = model.parse_number(text)
        return out

    def _check(self) -> None:
        if self.config_path is not None:  # read and checked when opened
            self.accept()
            return
        spec = self.spec()
        message = model.field_error(BY_NAME["model"], spec)
        if any(k not in spec for k in REQUIRED_FIELDS) and not message:
            message = "Fill in every field."
        if message:
            self.message.setText(message)
            return
        self.accept()


class HardwareBox(QGroupBox):
    """The planner's scope: which GPU types, how many, which cloud offer."""

    def __init__(self, controller: Controller):
        super().__init__(SECTION_TITLES["hardware"])
        self.controller = controller
        grid = QGridLayout(self)
        gpu_inp, n_inp, offer_inp = BY_NAME["gpu"], BY_NAME["n_gpus"], BY_NAME["offer"]
        grid.addWidget(QLabel("GPU types to consider"), 0, 0, 1, 3)
        self.all_gpus, self.some_gpus = self._either("All in the catalog", "Only the checked ones:")
        grid.addWidget(self.all_gpus, 1, 0)
        grid.addWidget(self.some_gpus, 1, 1, 1, 2)
        self.gpu_list = QListWidget()
        self.gpu_list.setObjectName("gpu_list")
        self.gpu_list.setToolTip(gpu_inp.description)
        for name in catalog.gpus().names:
            item = QListWidgetItem(name)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Unchecked)
            self.gpu_list.addItem(item)
        self.gpu_list.setMaximumHeight(110)
        self.gpu_list.setEnabled(False)
        grid.addWidget(self.gpu_list, 2, 0, 1, 3)
        grid.addWidget(QLabel(n_inp.label), 3, 0)
        self.auto_count, self.fixed_count = self._either("Smallest that fits, and more", "Exactly:")
        self.count = QSpinBox()
        self.count.setObjectName("field_n_gpus")
        self.count.setRange(int(n_inp.minimum), int(min(n_inp.maximum, 2**31 - 1)))
        self.count.setValue(int(n_inp.default))
        self.count.setSuffix(f" {n_inp.unit}")
        self.count.setToolTip(n_inp.description)
        self.count.setEnabled(False)
        row = QHBoxLayout()
        row.addWidget(self.auto_count)
        row.addWidget(self.fixed_count)
        row.addWidget(self.count)
        row.addStretch(1)
        grid.addLayout(row, 4, 0, 1, 3)
        grid.addWidget(QLabel(offer_inp.label), 5, 0)
        self.offer = QComboBox()
        self.offer.setObjectName("field_offer")
        self.offer.setToolTip(offer_inp.description)
        self.offer.addItem("Every offer (the cheapest wins)", None)
        for name in catalog.offers().names:
            self.offer.addItem(name, name)
        grid.addWidget(self.offer, 5, 1, 1, 2)
        self.message = QLabel()  # a problem of the GPU count or offer with the rest of the job (core's words)
        self.message.setObjectName("message_hardware")
        self.message.setWordWrap(True)
        self.message.setStyleSheet("color: #c62828;")
        self.message.hide()
        grid.addWidget(self.message, 6, 0, 1, 3)
        self.all_gpus.toggled.connect(self._gpus_changed)
        self.gpu_list.itemChanged.connect(self._gpus_changed)
        self.auto_count.toggled.connect(self._count_changed)
        self.count.valueChanged.connect(self._count_changed)
        self.offer.activated.connect(lambda _i: self.controller.set_scope(offer=self.offer.currentData()))

    def reload_offers(self) -> None:
        """The offer list again, after File > Refresh prices rewrote the offers catalog; the choice stays if it still exists."""
        chosen = self.offer.currentData()
        self.offer.blockSignals(True)
        self.offer.clear()
        self.offer.addItem("Every offer (the cheapest wins)", None)
        for name in catalog.offers().names:
            self.offer.addItem(name, name)
        self.offer.setCurrentIndex(max(0, self.offer.findData(chosen)) if chosen else 0)
        self.offer.blockSignals(False)

    def _either(self, default: str, other: str) -> tuple[QRadioButton, QRadioButton]:
        """Two exclusive choices, the first selected."""
        first, second = QRadioButton(default), QRadioButton(other)
        first.setChecked(True)
        group = QButtonGroup(self)
        group.addButton(first)
        group.addButton(second)
        return first, second

    def _gpus_changed(self, *_):
        self.gpu_list.setEnabled(self.some_gpus.isChecked())
        checked = [self.gpu_list.item(i).text() for i in range(self.gpu_list.count())
                   if self.gpu_list.item(i).checkState() == Qt.CheckState.Checked]
        self.controller.set_scope(gpus=checked if self.some_gpus.isChecked() and checked else None)

    def _count_changed(self, *_):
        self.count.setEnabled(self.fixed_count.isChecked())
        self.controller.set_scope(count=self.count.value() if self.fixed_count.isChecked() else None)

    def refresh(self) -> None:
        st = self.controller.state
        for w in (self.all_gpus, self.some_gpus, self.gpu_list, self.auto_count, self.fixed_count, self.count, self.offer):
            w.blockSignals(True)
        chosen = set(st.gpus or [])
        for i in range(self.gpu_list.count()):
            item = self.gpu_list.item(i)
            item.setCheckState(Qt.CheckState.Checked if item.text() in chosen else Qt.CheckState.Unchecked)
        (self.some_gpus if st.gpus else self.all_gpus).setChecked(True)
        self.gpu_list.setEnabled(bool(st.gpus))
        (self.fixed_count if st.count is not None else self.auto_count).setChecked(True)
        self.count.setEnabled(st.count is not None)
        if st.count is not None:
            self.count.setValue(st.count)
        self.offer.setCurrentIndex(max(0, self.offer.findData(st.offer)) if st.offer else 0)
        for w in (self.all_gpus, self.some_gpus, self.gpu_list, self.auto_count, self.fixed_count, self.count, self.offer):
            w.blockSignals(False)


class MainWindow(QMainWindow):
    def __init__(self, controller: Controller | None = None, settings: QSettings | None = None):
        super().__init__()
        self.controller = controller or Controller(self)
        self.settings = settings
        self.fields: dict[str, Field] = {}
        self.options: list[dict] = []
        self.setWindowTitle("gpu-tco: plan a GPU job")
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self._inputs_panel())
        splitter.addWidget(self._answer_panel())
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
        c.field_message.connect(self._field_message)
        c.stale.connect(self._stale)
        c.problem.connect(self._problem)
        c.busy.connect(self.progress.setVisible)
        c.loaded.connect(self.refresh_fields)
        c.finished.connect(self._finished)
        self._restore()
        self._update_title()
        c.schedule()

    # --- layout ------------------------------------------------------------------------------
    def _inputs_panel(self) -> QWidget:
        inner = QWidget()
        column = QVBoxLayout(inner)
        for section, inputs in model.sections():
            if section == "advanced":
                self.advanced_toggle = QToolButton(text=SECTION_TITLES["advanced"], checkable=True)
                self.advanced_toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
                self.advanced_toggle.setArrowType(Qt.ArrowType.RightArrow)
                column.addWidget(self.advanced_toggle)
            box = QGroupBox("" if section == "advanced" else SECTION_TITLES[section])
            grid = QGridLayout(box)
            grid.setColumnStretch(1, 1)
            for k, inp in enumerate(inputs):
                self.fields[inp.name] = Field(inp, self.controller, grid, 2 * k)
            column.addWidget(box)
            if section == "the job":
                self.hardware = HardwareBox(self.controller)
                column.addWidget(self.hardware)
            if section == "advanced":
                self.advanced_box = box
                box.setVisible(False)
                self.advanced_toggle.toggled.connect(self._toggle_advanced)
        column.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidget(inner)
        scroll.setWidgetResizable(True)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setMinimumWidth(inner.minimumSizeHint().width() + scroll.verticalScrollBar().sizeHint().width() + 8)
        return scroll

    def _toggle_advanced(self, on: bool) -> None:
        self.advanced_box.setVisible(on)
        self.advanced_toggle.setArrowType(Qt.ArrowType.DownArrow if on else Qt.ArrowType.RightArrow)

    def _answer_panel(self) -> QWidget:
        panel = QWidget()
        column = QVBoxLayout(panel)
        self.stale_banner = QLabel("These results are for your last valid inputs: fix the marked fields to update them.")
        self.stale_banner.setObjectName("stale_banner")
        self.stale_banner.setWordWrap(True)
        self.stale_banner.setStyleSheet("background: #fff3cd; color: #5c4400; padding: 4px;")
        self.stale_banner.hide()
        column.addWidget(self.stale_banner)
        self.headline = QLabel("Computing...")
        self.headline.setObjectName("headline")
        self.headline.setWordWrap(True)
        self.headline.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        font = self.headline.font()
        font.setPointSizeF(font.pointSizeF() * 1.15)
        font.setBold(True)
        self.headline.setFont(font)
        column.addWidget(self.headline)
        self.figures = QTableWidget(0, 3)
        self.figures.setObjectName("figures")
        self.figures.setHorizontalHeaderLabels(["Key figure (select one to see how it is computed)", "Value", "Unit"])
        self.figures.verticalHeader().hide()
        self.figures.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.figures.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.figures.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        header = self.figures.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        self.figures.itemSelectionChanged.connect(self._explain_figure)
        row_height = self.figures.fontMetrics().height() + 8
        self.figures.verticalHeader().setDefaultSectionSize(row_height)
        self.figures.setMinimumHeight(row_height * 8 + 4)  # the first seven figures and the header; the rest scroll
        self.tabs = QTabWidget()
        self.tabs.addTab(self._options_tab(), "Options, ranked")
        self.cost_view, self.memory_view, self.cash_view = QChartView(), QChartView(), QChartView()
        for view, title in ((self.cost_view, "Job cost"), (self.memory_view, "Memory per GPU"),
                            (self.cash_view, "Owning vs renting")):
            view.setRenderHint(charts.RENDER_HINT)
            self.tabs.addTab(view, title)
        self.bar_series, self.bars_shown = {}, {}
        for view in (self.cost_view, self.memory_view):
            view.installEventFilter(self)  # resized: as many bars as have room for their labels
        self.explanation = QTextBrowser()
        self.explanation.setObjectName("explanation")
        self.explanation.setOpenExternalLinks(True)
        self.explanation.setHtml("<span style='color: gray'>Select a key figure or a number in the table: its formula, "
                                 "inputs and source appear here.</span>")
        lower = QSplitter(Qt.Orientation.Vertical)
        top = QWidget()
        top_layout = QVBoxLayout(top)
        top_layout.setContentsMargins(0, 0, 0, 0)
        top_layout.addWidget(self.figures)
        lower.addWidget(top)
        lower.addWidget(self.tabs)
        lower.addWidget(self.explanation)
        lower.setSizes([280, 360, 110])
        column.addWidget(lower, 1)
        return panel

    def _options_tab(self) -> QWidget:
        tab = QWidget()
        layout = QVBoxLayout(tab)
        self.show_rejected = QCheckBox("Show rejected options and why")
        self.show_rejected.setObjectName("show_rejected")
        self.show_rejected.toggled.connect(lambda _on: self._fill_table())
        layout.addWidget(self.show_rejected)
        self.table_model = QStandardItemModel(self)
        from PySide6.QtCore import QSortFilterProxyModel
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.table_model)
        self.proxy.setSortRole(Qt.ItemDataRole.UserRole)
        self.table = QTableView()
        self.table.setObjectName("options_table")
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectItems)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(self.table.fontMetrics().height() + 8)
        self.table.selectionModel().currentChanged.connect(self._explain_cell)
        layout.addWidget(self.table)
        return tab

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
        self.options = answer["options"]
        self.headline.setText(answer["headline"])
        self.figures.setRowCount(len(answer["figures"]))
        for r, fig in enumerate(answer["figures"]):
            value = fig.text or ("never" if fig.quantity in NEVER_WHEN_NEGATIVE and fig.value < 0 else _number(fig.value, fig.unit))
            for c, text in enumerate((fig.label, value, fig.unit)):
                item = QTableWidgetItem(text)
                if c == 1:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.figures.setItem(r, c, item)
        self.figure_data = answer["figures"]
        self._fill_table()
        for name, (text, short) in model.auto_placeholders(answer).items():
            if name in self.fields and isinstance(self.fields[name].editor, QLineEdit):
                self.fields[name].show_auto(text, short)
        self.bar_series = {self.cost_view: answer["costs"], self.memory_view: answer["memory"]}
        self.bars_shown = {}
        self._fit_bar_charts()
        self.cash_view.setChart(charts.cash_chart(answer["cash"]))
        self.statusBar().showMessage(f"{sum(o['ok'] for o in self.options)} of {len(self.options)} options acceptable", 5000)

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt's name
        if watched in self.bar_series and event.type() == QEvent.Type.Resize:
            self._fit_bar_charts()
        return super().eventFilter(watched, event)

    def _fit_bar_charts(self) -> None:
        """The bar charts with as many of their first bars as have room for their labels (cost: one text
        line a bar, memory: two), at least MIN_BARS: on a short window Qt would drop every other label."""
        line = self.fontMetrics().height()
        for view, draw, lines, key in ((self.cost_view, charts.cost_chart, 1, "labels"), (self.memory_view, charts.memory_chart, 2, "setups")):
            series = self.bar_series.get(view)
            total = len(series[key]) if series else 0
            room = view.height() - BAR_CHART_CHROME_LINES * line
            n = min(total, max(MIN_BARS, room // (lines * line + 4)))
            if self.bars_shown.get(view) != n:
                self.bars_shown[view] = n
                view.setChart(draw(_first(series, n) if series else series))

    def _fill_table(self) -> None:
        # with nothing acceptable, the rejected options are the answer: show them and why
        rejected = self.show_rejected.isChecked() or not any(o["ok"] for o in self.options)
        headers, rows = model.results_table(self.options, rejected)
        self.shown_options = [o for o in self.options if o["ok"] or rejected]
        self.table_model.clear()
        self.table_model.setHorizontalHeaderLabels(headers)
        for row, option in zip(rows, self.shown_options):
            items = []
            for value in row:
                item = QStandardItem(_cell_text(value))
                item.setToolTip(_cell_text(value))
                item.setData(value if not (isinstance(value, float) and math.isnan(value)) else float("inf"), Qt.ItemDataRole.UserRole)
                item.setData(option["order"], Qt.ItemDataRole.UserRole + 1)
                if isinstance(value, (int, float)):
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                items.append(item)
            self.table_model.appendRow(items)
        self.table.resizeColumnsToContents()
        self._arrange_columns(headers)
        self.table.scrollTo(self.proxy.index(0, 0))  # the first columns in view, whatever the table showed before
        self.proxy.sort(-1)  # the planner's order until the user sorts by a column

    def _arrange_columns(self, headers: list[str]) -> None:
        """The long texts (offer, reasons; last in the table) at most LONG_COLUMN_CHARS wide (elided; the
        whole text is in the cell's tooltip and in Copy results)."""
        header = self.table.horizontalHeader()
        widest = self.table.fontMetrics().horizontalAdvance("M" * LONG_COLUMN_CHARS)
        for name in LONG_COLUMNS:
            if name in headers and header.sectionSize(headers.index(name)) > widest:
                header.resizeSection(headers.index(name), widest)

    def answer_text(self) -> str:
        """The answer as the window shows it, in words: the headline and the key figures, one a line
        (stored in screenshots, so a test can tell a stale picture from words rather than pixels)."""
        lines = [self.headline.text()]
        for r in range(self.figures.rowCount()):
            lines.append(" ".join(self.figures.item(r, c).text() for c in range(3) if self.figures.item(r, c)))
        return "\n".join(lines)

    def current_rows(self) -> tuple[list[str], list[list]]:
        """The table as shown (sort order included), as values."""
        headers = [self.table_model.horizontalHeaderItem(c).text() for c in range(self.table_model.columnCount())]
        rows = [[self.proxy.index(r, c).data(Qt.ItemDataRole.UserRole) for c in range(self.proxy.columnCount())]
                for r in range(self.proxy.rowCount())]
        return headers, rows

    def _field_message(self, name: str, message: str) -> None:
        if name in self.fields:
            refused = self.controller.refused.pop(name, None) if message else None
            if refused is not None:  # an opened scenario's value the form refused: shown as given, beside why
                editor = self.fields[name].editor
                text = model.value_text(self.fields[name].inp, refused)
                editor.blockSignals(True)
                if isinstance(editor, QLineEdit):
                    editor.setText(text)
                    editor.setCursorPosition(0)  # the start of a long value, not its end
                elif isinstance(editor, QComboBox) and editor.isEditable():
                    editor.setEditText(text)
                    editor.lineEdit().setCursorPosition(0)
                editor.blockSignals(False)
            self.fields[name].show_message(message)
            if message and name in {i.name for i in model.sections()[-1][1]} and not self.advanced_toggle.isChecked():
                self.advanced_toggle.setChecked(True)  # never hide a message behind the fold

    def _stale(self, stale: bool) -> None:
        self.stale_banner.setVisible(stale)
        errors = self.controller.state.errors
        if self.controller.answer is None and errors:  # nothing is being computed: say what stands in the way
            labels = [self.fields[n].inp.label if n in self.fields else n for n in errors]
            self.headline.setText(f"No answer yet: fix the field{'s' if len(labels) > 1 else ''} marked in red "
                                  f"({', '.join(labels)}).")

    def _problem(self, message: str) -> None:
        scope = message.split(":")[0] in ("n_gpus", "gpu", "gpus", "offer")  # the hardware box's fields
        self.hardware.message.setText(message if scope else "")
        self.hardware.message.setVisible(bool(message) and scope)
        if message:
            self.statusBar().showMessage(message)
            if self.controller.answer is None:
                self.headline.setText(message)

    # --- explanations ---------------------------------------------------------------------
    def _explain_figure(self) -> None:
        rows = {i.row() for i in self.figures.selectedIndexes()}
        if rows:
            fig = self.figure_data[min(rows)]
            self.show_explanation(fig.quantity, fig.inputs)

    def _explain_cell(self, current, _previous) -> None:
        if not current.isValid():
            return
        header = self.table_model.horizontalHeaderItem(current.column()).text()
        key = COLUMN_KEYS.get(header)
        order = self.proxy.index(current.row(), 0).data(Qt.ItemDataRole.UserRole + 1)
        option = next((o for o in self.options if o["order"] == order), None)
        if key is None or option is None or not option["n_gpus"]:
            return
        quantity = model.OPTION_QUANTITIES[key]
        if key == "usd_per_gpu_hour" and option["acquire"] == "buy":
            quantity = "own_usd_per_gpu_hour"
        self.show_explanation(quantity, option_inputs(self.controller.state.job(), option))

    def show_explanation(self, quantity: str, inputs: dict) -> None:
        try:
            e = explain(quantity, inputs)
        except GpuTcoError as err:
            self.explanation.setPlainText(str(err))
            return
        rows = "".join(f"<tr><td>{html.escape(str(n))}</td><td align='right'>{html.escape(_value(v))}</td>"
                       f"<td>{html.escape(u if u != 'catalog' else 'from the catalog')}</td></tr>" for n, v, u in e["inputs"])
        self.explanation.setHtml(
            f"<b>{html.escape(e['name'])}</b> = {html.escape(_value(e['value']))} {html.escape(e['unit'])}<br>"
            f"{html.escape(e['description'])}<br><br><b>Formula</b>: <code>{html.escape(e['formula'])}</code><br>"
            f"<b>In Excel</b>: <code>{html.escape(e['excel'])}</code><br><br><b>Inputs</b><table cellspacing='6'>{rows}</table>"
            f"<br><b>Source</b>: {html.escape(e['source'] or 'definition')}")

    # --- files -------------------------------------------------------------------------------
    def refresh_fields(self) -> None:
        for f in self.fields.values():
            f.refresh()
        self.hardware.refresh()
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
        self.hardware.reload_offers()
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
        headers, rows = self.current_rows()
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


BAR_CHART_CHROME_LINES = 7  # a bar chart's title, axis labels and title, and margins, in text lines
MIN_BARS = 3
# the ranked table's long texts, shown last and elided
LONG_COLUMNS = ("Cloud offer", "Why not")
LONG_COLUMN_CHARS = 16
# quantities whose -1 means "never"
NEVER_WHEN_NEGATIVE = ("payback_months", "selfhost_rent_breakeven_mtok_per_month", "selfhost_breakeven_mtok_per_month")
# the options table's columns that are quantities (header -> key of the planner's option)
COLUMN_KEYS = {"GiB per GPU": "peak_gib_per_gpu", "Hours": "hours", "USD per GPU-hour": "usd_per_gpu_hour",
               "Job cost (USD)": "cost_usd", "Cash needed (USD)": "outlay_usd", "USD per million tokens": "usd_per_mtok_train"}


def _first(series: dict, n: int) -> dict:
    """A chart's series with the first ``n`` entries of every list (also inside nested dicts)."""
    return {k: _first(v, n) if isinstance(v, dict) else v[:n] if isinstance(v, list) else v for k, v in series.items()}


def _list(value) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else [str(v) for v in value]


def _number(value: float, unit: str) -> str:
    if not math.isfinite(value):
        return "-"
    if unit == "USD":
        return f"${value:,.0f}" if abs(value) >= 100 else f"${value:,.2f}"
    return f"{value:,.1f}"


def _cell_text(value) -> str:
    if isinstance(value, float):
        return "-" if not math.isfinite(value) else (f"{value:,.0f}" if abs(value) >= 1000 else f"{value:,.2f}")
    return str(value)


def _value(v) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, (int, float)):
        return f"{v:,.6g}"
    try:
        return f"{float(v):,.6g}"
    except (TypeError, ValueError):
        return str(v)

