"""The form's inputs panel: one box per section of core's input declarations, the planner's hardware scope
after the job, and the advanced inputs folded away.

Every label, unit, tooltip and list of choices is read from core's input declarations
(``core.inputs``) and catalogs; nothing here restates them.
"""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
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
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QRadioButton,
    QScrollArea,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ..core import AUTO_QUANTITY, DEFAULTS, REQUIRED_FIELDS, Input, catalog, cite
from ..core import INPUTS_BY_NAME as BY_NAME
from . import model
from .controller import Controller

SECTION_TITLES = {"the job": "The job", "hardware": "Hardware", "renting": "Renting", "owning": "Owning",
                  "serving": "Serving", "advanced": "Advanced inputs"}
UNIT_SHOWN = {"-": "", "flag": ""}
HARDWARE_FIELDS = ("n_gpus", "gpu", "gpus", "offer")  # the planner's scope: their problems show in the hardware box

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
        self.home = (grid, row)  # where the field sits in training mode (a serving job's fields move to the job's box)
        self.shown = True
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

    def place(self, grid: QGridLayout, row: int) -> None:
        """Put the field's widgets at ``row`` of ``grid`` (Qt takes them out of the layout they were in)."""
        for widget, r, c, span in ((self.label, row, 0, 1), (self.editor, row, 1, 1), (self.unit, row, 2, 1),
                                   (self.message, row + 1, 0, 3)):
            grid.addWidget(widget, r, c, 1, span)

    def set_shown(self, shown: bool) -> None:
        """Show or hide the field (a training-only field in serving mode and the other way round)."""
        self.shown = shown
        for widget in (self.label, self.editor, self.unit):
            widget.setVisible(shown)
        self.message.setVisible(shown and bool(self.message.text()))

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
        self.message.setVisible(bool(text) and self.shown)
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
        self.count_label = QLabel(n_inp.label)  # "GPUs per replica" when serving (set_mode)
        grid.addWidget(self.count_label, 3, 0)
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



class TaskChoice(QWidget):
    """Train or Serve: the job's kind (the ``task`` input); the panel shows that kind's inputs."""

    def __init__(self, controller: Controller, on_change):
        super().__init__()
        self.controller, self.on_change = controller, on_change
        inp = BY_NAME["task"]
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        label = QLabel("Task")
        label.setToolTip(tooltip(inp))
        row.addWidget(label)
        self.train, self.serve = QRadioButton("Train"), QRadioButton("Serve")
        self.train.setObjectName("task_train")
        self.serve.setObjectName("task_serve")
        self.train.setToolTip("Plan a training or fine-tuning job: GPUs, count, hours and cost")
        self.serve.setToolTip("Plan a deployment answering requests within latency targets: rent, buy or use an API")
        group = QButtonGroup(self)
        for button in (self.train, self.serve):
            group.addButton(button)
            row.addWidget(button)
        row.addStretch(1)
        self.train.setChecked(True)
        self.serve.toggled.connect(self._toggled)

    def _toggled(self, serve: bool) -> None:
        task = "serve" if serve else "train"
        self.controller.edit("task", task)
        self.on_change(task)

    def show_task(self, task: str) -> None:
        for button in (self.train, self.serve):
            button.blockSignals(True)
        (self.serve if task == "serve" else self.train).setChecked(True)
        for button in (self.train, self.serve):
            button.blockSignals(False)


class InputsPanel(QScrollArea):
    """The inputs, one box per section in core's order, the hardware box after the job's own box, the advanced
    inputs behind a fold.  Each section's box is in ``boxes`` by section name, so a form with more than one kind
    of job adds its job section the same way and shows the box of the job chosen."""

    def __init__(self, controller: Controller):
        super().__init__()
        self.controller = controller
        self.fields: dict[str, Field] = {}
        self.boxes: dict[str, QGroupBox] = {}
        self.section_of: dict[str, str] = {}
        inner = QWidget()
        self.column = QVBoxLayout(inner)
        for section, inputs in model.sections():
            self._add_section(section, inputs)
        self.column.addStretch(1)
        self.setWidget(inner)
        self.setWidgetResizable(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.mode_widths: dict[str, int] = {}
        for task in model.TASKS:  # each mode as wide as its fields need
            self.set_mode(task)
            self.mode_widths[task] = self._needed_width()
        self.set_mode(controller.state.task())

    def _needed_width(self) -> int:
        """The width the shown fields need (each box's layout brought up to date first: Qt would do it later)."""
        for box in self.boxes.values():
            box.layout().activate()
        self.column.activate()
        return self.widget().minimumSizeHint().width() + self.verticalScrollBar().sizeHint().width() + 8

    def _add_section(self, section: str, inputs) -> None:
        if section == "advanced":
            self.advanced_toggle = QToolButton(text=SECTION_TITLES["advanced"], checkable=True)
            self.advanced_toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
            self.advanced_toggle.setArrowType(Qt.ArrowType.RightArrow)
            self.column.addWidget(self.advanced_toggle)
        box = self._section_box(section, inputs)
        self.column.addWidget(box)
        if section == "the job":
            self.hardware = HardwareBox(self.controller)
            self.column.addWidget(self.hardware)
        if section == "advanced":
            box.setVisible(False)
            self.advanced_toggle.toggled.connect(self._toggle_advanced)

    def _section_box(self, section: str, inputs) -> QGroupBox:
        box = QGroupBox("" if section == "advanced" else SECTION_TITLES[section])
        grid = QGridLayout(box)
        grid.setColumnStretch(1, 1)
        first = 0
        if section == "the job":  # Train or Serve first; a serving job's own fields go below the job's
            self.task_choice = TaskChoice(self.controller, self.set_mode)
            grid.addWidget(self.task_choice, 0, 0, 1, 3)
            first = 2
            self.job_grid, self.serve_row = grid, first + 2 * len(inputs)
        for k, inp in enumerate(inputs):
            self.fields[inp.name] = Field(inp, self.controller, grid, first + 2 * k)
            self.section_of[inp.name] = section
        self.boxes[section] = box
        return box

    def set_mode(self, task: str) -> None:
        """Show the inputs of a training job or of a serving deployment: a serving job's demand, targets and API
        in the job's box, the fields the other kind of job reads hidden, and a box with nothing to show hidden."""
        self.mode = task
        self.task_choice.show_task(task)
        for k, name in enumerate(model.SERVE_JOB_INPUTS):
            if name in self.fields:
                field = self.fields[name]
                field.place(*((self.job_grid, self.serve_row + 2 * k) if task == "serve" else field.home))
        shown = model.SHOWN[task]
        for name, field in self.fields.items():
            field.set_shown(name in shown)
        if task in getattr(self, "mode_widths", {}):
            self.setMinimumWidth(self.mode_widths[task])
        if hasattr(self, "hardware"):
            self.hardware.count_label.setText("GPUs per replica (tensor parallel)" if task == "serve" else BY_NAME["n_gpus"].label)
        moved = set(model.SERVE_JOB_INPUTS) if task == "serve" else set()
        for section, box in self.boxes.items():
            if section != "advanced":
                box.setVisible(section == "the job" or any(
                    f.shown for n, f in self.fields.items() if self.section_of[n] == section and n not in moved))

    def _toggle_advanced(self, on: bool) -> None:
        self.boxes["advanced"].setVisible(on)
        self.advanced_toggle.setArrowType(Qt.ArrowType.DownArrow if on else Qt.ArrowType.RightArrow)

    def show_message(self, name: str, message: str) -> None:
        """Core's message for one field ("" clears it); an opened scenario's value the form refused is shown as
        given, beside why."""
        if name not in self.fields:
            return
        field = self.fields[name]
        refused = self.controller.refused.pop(name, None) if message else None
        if refused is not None:
            editor = field.editor
            text = model.value_text(field.inp, refused)
            editor.blockSignals(True)
            if isinstance(editor, QLineEdit):
                editor.setText(text)
                editor.setCursorPosition(0)  # the start of a long value, not its end
            elif isinstance(editor, QComboBox) and editor.isEditable():
                editor.setEditText(text)
                editor.lineEdit().setCursorPosition(0)
            editor.blockSignals(False)
        field.show_message(message)
        if message and name in {i.name for i in model.sections()[-1][1]} and not self.advanced_toggle.isChecked():
            self.advanced_toggle.setChecked(True)  # never hide a message behind the fold

    def show_problem(self, field: str, message: str) -> None:
        """A problem of the inputs taken together: in the hardware box when it is about the planner's scope."""
        scope = field in HARDWARE_FIELDS
        self.hardware.message.setText(message if scope else "")
        self.hardware.message.setVisible(bool(message) and scope)

    def show_auto(self, placeholders: dict[str, tuple[str, str]]) -> None:
        """The values in use of the inputs left on automatic, as their empty fields' placeholders; a list left as it
        was (the API compared with) shows the entry the answer used, its words as the tooltip."""
        for name, (text, short) in placeholders.items():
            if name not in self.fields:
                continue
            editor = self.fields[name].editor
            if isinstance(editor, QLineEdit):
                self.fields[name].show_auto(text, short)
            elif isinstance(editor, QComboBox) and name not in self.controller.state.values and editor.findText(short) >= 0:
                editor.blockSignals(True)  # shown, not chosen: the user's choice stays "none"
                editor.setCurrentIndex(editor.findText(short))
                editor.blockSignals(False)
                editor.setToolTip(text)

    def label(self, name: str) -> str:
        return self.fields[name].inp.label if name in self.fields else name

    def refresh(self) -> None:
        """Every field shows the controller's value again (after New or Open)."""
        for f in self.fields.values():
            f.refresh()
        self.hardware.refresh()
        self.set_mode(self.controller.state.task())
