"""The form's answer: the headline and key figures, the ranked options, the charts and the explanation of a
selected number.  Values come from the controller's answer (``gui.model.compute``); nothing here computes."""
from __future__ import annotations

import html
import math
import re

from PySide6.QtCore import QSortFilterProxyModel, Qt
from PySide6.QtGui import QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QFrame,
    QHeaderView,
    QLabel,
    QScrollArea,
    QSizePolicy,
    QSplitter,
    QTableView,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from ..core import GpuTcoError, explain, option_inputs, serve_option_inputs
from . import charts, model
from .controller import Controller

# the ranked table's long texts, elided (the whole text is in the cell's tooltip and in Copy results)
LONG_COLUMNS = ("Cloud offer", "Why not")
LONG_COLUMN_CHARS = 16
SETUP_COLUMN_CHARS = 11  # in a narrow table a setup's name elides rather than pushing the costs out of view
HEADER_LINE_CHARS = 9    # a header is wrapped to lines about this long (at most three), so a column is as narrow as its numbers


def wrapped_header(header: str) -> str:
    """A header as the table shows it: word-wrapped to lines of about HEADER_LINE_CHARS, at most three."""
    width = max(HEADER_LINE_CHARS, -(-len(header) // 3) + 3)
    lines: list[str] = []
    for word in header.split():
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return "\n".join(lines)


def header_name(table_model, column: int) -> str:
    """A column's name (its header on one line)."""
    return table_model.horizontalHeaderItem(column).text().replace("\n", " ")
# quantities whose -1 means "never"
NEVER_WHEN_NEGATIVE = ("payback_months", "selfhost_rent_breakeven_mtok_per_month", "selfhost_breakeven_mtok_per_month",
                       "serve_rent_beats_api_mtok_per_month", "serve_own_beats_api_mtok_per_month")
# units counted in whole things (a serving setup's replicas, the requests a replica decodes at once)
WHOLE_UNITS = ("replicas", "sequences")
# the options table's columns that are quantities (header -> key of the planner's option)
COLUMN_KEYS = {"GiB per GPU": "peak_gib_per_gpu", "Hours": "hours", "USD per GPU-hour": "usd_per_gpu_hour",
               "Job cost (USD)": "cost_usd", "Cash needed (USD)": "outlay_usd", "USD per million tokens": "usd_per_mtok_train"}


class OptionsTab(QWidget):
    """The planner's options, ranked, as a sortable table; the rejected ones and why on request."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.options: list[dict] = []
        layout = QVBoxLayout(self)
        self.show_rejected = QCheckBox("Show rejected options and why")
        self.show_rejected.setObjectName("show_rejected")
        self.show_rejected.toggled.connect(lambda _on: self.fill())
        layout.addWidget(self.show_rejected)
        self.table_model = QStandardItemModel(self)
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.table_model)
        self.proxy.setSortRole(Qt.ItemDataRole.UserRole)
        self.table = QTableView()
        self.table.setObjectName("options_table")
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        # a click on a header still sorts; no room kept beside every header for the arrow, so the deciding columns fit
        self.table.horizontalHeader().setSortIndicatorShown(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectItems)
        self.table.verticalHeader().setDefaultSectionSize(self.table.fontMetrics().height() + 8)
        self.table.verticalHeader().setToolTip("Rank: the planner's order")
        layout.addWidget(self.table)

    def show_options(self, options: list[dict]) -> None:
        self.options = options
        self.fill()

    def fill(self) -> None:
        # with nothing acceptable, the rejected options are the answer: show them and why
        rejected = self.show_rejected.isChecked() or not any(o["ok"] for o in self.options)
        headers, rows = model.results_table(self.options, rejected)
        self.shown_options = [o for o in self.options if o["ok"] or rejected]
        self.table_model.clear()
        self.table_model.setHorizontalHeaderLabels([wrapped_header(h) for h in headers])
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
        # the rank as the row's number (it follows the row when the table is sorted), not a column of its own
        self.table_model.setVerticalHeaderLabels([str(row[0]) for row in rows])
        self.table.setColumnHidden(0, True)
        self.table.resizeColumnsToContents()
        self._arrange_columns(headers)
        self.table.scrollTo(self.proxy.index(0, 0))  # the first columns in view, whatever the table showed before
        self.proxy.sort(-1)  # the planner's order until the user sorts by a column

    def _arrange_columns(self, headers: list[str]) -> None:
        """The long texts (offer, reasons) at most LONG_COLUMN_CHARS wide and the setup SETUP_COLUMN_CHARS (elided; the
        whole text is in the cell's tooltip and in Copy results)."""
        header = self.table.horizontalHeader()
        for name in LONG_COLUMNS:
            widest = self.table.fontMetrics().horizontalAdvance("M" * LONG_COLUMN_CHARS)
            if name in headers and header.sectionSize(headers.index(name)) > widest:
                header.resizeSection(headers.index(name), widest)
        # the setup elided only where the table is narrower than its columns (a small window)
        if "Setup" in headers and header.length() > self.table.viewport().width():
            widest = self.table.fontMetrics().horizontalAdvance("M" * SETUP_COLUMN_CHARS)
            if header.sectionSize(headers.index("Setup")) > widest:
                header.resizeSection(headers.index("Setup"), widest)

    def current_rows(self) -> tuple[list[str], list[list]]:
        """The table as shown (sort order included), as values."""
        headers = [header_name(self.table_model, c) for c in range(self.table_model.columnCount())]
        rows = [[self.proxy.index(r, c).data(Qt.ItemDataRole.UserRole) for c in range(self.proxy.columnCount())]
                for r in range(self.proxy.rowCount())]
        return headers, rows

    def option_at(self, index) -> tuple[str | None, dict | None]:
        """The column's quantity key (None for a text column) and the option of a table cell."""
        header = header_name(self.table_model, index.column())
        order = self.proxy.index(index.row(), 0).data(Qt.ItemDataRole.UserRole + 1)
        return COLUMN_KEYS.get(header), next((o for o in self.options if o["order"] == order), None)


HEADLINE_LINES = 6  # the answer's lines in view before it scrolls (the serving answer with its notes runs to 15 at 1024 px)


class AnswerPanel(QWidget):
    """The answer's side of the window: a banner when the answer is stale, the headline, the key figures, the
    tabs (options, charts) and the explanation of the figure or cell selected."""

    def __init__(self, controller: Controller):
        super().__init__()
        self.controller = controller
        self.figure_data: list = []
        column = QVBoxLayout(self)
        column.addWidget(self._stale_banner())
        column.addWidget(self._headline_area())
        self.launch = QLabel("")
        self.launch.setObjectName("launch_command")
        self.launch.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.launch.setVisible(False)
        # one line as wide as the panel (cut at its edge), never widening the window
        self.launch.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        column.addWidget(self.launch)
        self.figures = self._figures_table()
        self.options_tab = OptionsTab()
        self.options_tab.table.selectionModel().currentChanged.connect(self._explain_cell)
        self.charts = charts.ChartViews(self)
        self.tabs = QTabWidget()
        self.tabs.addTab(self.options_tab, "Options, ranked")
        for view, title in self.charts.titled():
            self.tabs.addTab(view, title)
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

    def _stale_banner(self) -> QLabel:
        self.stale_banner = QLabel("These results are for your last valid inputs: fix the marked fields to update them.")
        self.stale_banner.setObjectName("stale_banner")
        self.stale_banner.setWordWrap(True)
        self.stale_banner.setStyleSheet("background: #fff3cd; color: #5c4400; padding: 4px;")
        self.stale_banner.hide()
        return self.stale_banner

    def _headline_area(self) -> QScrollArea:
        """The headline in a frame of at most HEADLINE_LINES lines: a long answer (a serving fleet with its notes)
        scrolls there instead of pushing the key figures and the ranked table out of a small window."""
        label = self._headline()
        area = QScrollArea()
        area.setObjectName("headline_area")
        area.setWidget(label)
        area.setWidgetResizable(True)
        area.setFrameShape(QFrame.Shape.NoFrame)
        area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        area.setMaximumHeight(label.fontMetrics().lineSpacing() * HEADLINE_LINES + 6)
        return area

    def _headline(self) -> QLabel:
        self.headline = QLabel("Computing...")
        self.headline.setObjectName("headline")
        self.headline.setWordWrap(True)
        self.headline.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        font = self.headline.font()
        font.setPointSizeF(font.pointSizeF() * 1.15)
        font.setBold(True)
        self.headline.setFont(font)
        return self.headline

    def _figures_table(self) -> QTableWidget:
        figures = QTableWidget(0, 3)
        figures.setObjectName("figures")
        figures.setHorizontalHeaderLabels(["Key figure", "Value", "Unit"])
        figures.horizontalHeaderItem(0).setToolTip("Select a key figure to see how it is computed")
        figures.verticalHeader().hide()
        figures.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        figures.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        figures.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        header = figures.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        figures.itemSelectionChanged.connect(self._explain_figure)
        row_height = figures.fontMetrics().height() + 8
        figures.verticalHeader().setDefaultSectionSize(row_height)
        figures.setMinimumHeight(row_height * 8 + 4)  # the first seven figures and the header; the rest scroll
        return figures

    # --- showing the answer ---------------------------------------------------------------
    def show_answer(self, answer: dict) -> None:
        self.headline.setText(answer["headline"])
        launch = answer.get("launch") or []
        command = "Start one replica with: " + launch[0]["command"] if launch else ""
        self.launch.setText(command)  # one line: the whole command is in the tooltip and Copy results
        self.launch.setToolTip("\n".join(f"{item['command']}\n({item['note']})" for item in launch))
        self.launch.setVisible(bool(launch))
        self.figures.setRowCount(len(answer["figures"]))
        for r, fig in enumerate(answer["figures"]):
            value = fig.text or ("never" if fig.quantity in NEVER_WHEN_NEGATIVE and fig.value < 0 else _number(fig.value, fig.unit))
            # words in place of the number ("never", "no price", "not within the months of ownership") carry no unit
            unit = fig.unit if re.fullmatch(r"[-$]*[\d,.]+", value) else ""
            for c, text in enumerate((fig.label, value, unit)):
                item = QTableWidgetItem(text)
                if c == 1:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.figures.setItem(r, c, item)
        self.figure_data = answer["figures"]
        self.answer = answer
        self.options_tab.show_options(answer["options"])
        self.charts.show_answer(answer)
        serving = answer.get("task") == "serve"
        for k, (_view, title) in enumerate(self.charts.titled(answer.get("task", "train")), start=1):
            self.tabs.setTabText(k, title)
        self.tabs.setTabVisible(3, True)  # training: owning against renting over months; serving: per GPU against per user
        del serving

    def answer_text(self) -> str:
        """The answer as the window shows it, in words: the headline and the key figures, one a line
        (stored in screenshots, so a test can tell a stale picture from words rather than pixels)."""
        lines = [self.headline.text()] + ([self.launch.text()] if self.launch.text() else [])
        for r in range(self.figures.rowCount()):
            lines.append(" ".join(self.figures.item(r, c).text() for c in range(3) if self.figures.item(r, c)))
        return "\n".join(lines)

    # --- explanations ---------------------------------------------------------------------
    def _explain_figure(self) -> None:
        rows = {i.row() for i in self.figures.selectedIndexes()}
        if rows:
            fig = self.figure_data[min(rows)]
            self.show_explanation(fig.quantity, fig.inputs)

    def _explain_cell(self, current, _previous) -> None:
        if not current.isValid():
            return
        if getattr(self, "answer", {}).get("task") == "serve":
            self._explain_serving_cell(current)
            return
        key, option = self.options_tab.option_at(current)
        if key is None or option is None or not option["n_gpus"]:
            return
        quantity = model.OPTION_QUANTITIES[key]
        if key == "usd_per_gpu_hour" and option["acquire"] == "buy":
            quantity = "own_usd_per_gpu_hour"
        self.show_explanation(quantity, option_inputs(self.controller.state.job(), option))

    def _explain_serving_cell(self, index) -> None:
        """A serving table's number: its quantity at the setup's inputs (the planner's own)."""
        header = header_name(self.options_tab.table_model, index.column())
        order = self.options_tab.proxy.index(index.row(), 0).data(Qt.ItemDataRole.UserRole + 1)
        option = next((o for o in self.options_tab.options if o["order"] == order), None)
        if header not in model.SERVE_COLUMN_QUANTITIES or option is None:
            return
        quantity = model.SERVE_COLUMN_QUANTITIES[header].format(way="own" if option.acquire == "buy" else "rent")
        self.show_explanation(quantity, serve_option_inputs(self.answer["plan"]["given"], option))

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


def _number(value: float, unit: str) -> str:
    if not math.isfinite(value):
        return "-"
    if unit == "USD":
        return f"${value:,.0f}" if abs(value) >= 100 else f"${value:,.2f}"
    if unit in WHOLE_UNITS:
        return f"{value:,.0f}"
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
