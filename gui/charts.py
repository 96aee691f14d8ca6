"""The form's charts (Qt Charts; the only module that uses it, so a later move to Qt Graphs stays here).

Each function takes series computed by core (through gui.model.compute) and returns a QChart;
none computes a number itself.  ``ChartViews`` holds the answer panel's three chart views.
"""
from __future__ import annotations

from PySide6.QtCharts import (
    QBarCategoryAxis,
    QBarSet,
    QChart,
    QChartView,
    QHorizontalBarSeries,
    QHorizontalStackedBarSeries,
    QLineSeries,
    QLogValueAxis,
    QValueAxis,
)
from PySide6.QtCore import QEvent, QMargins, QObject, Qt
from PySide6.QtGui import QPainter, QPalette, QPen
from PySide6.QtWidgets import QApplication

BAR_CHART_CHROME_LINES = 7  # a bar chart's title, axis labels and title, and margins, in text lines
MIN_BARS = 3
COMPONENT_LABELS = {"weights": "Weights", "gradients": "Gradients", "optimizer": "Optimizer",
                    "activations": "Activations", "logits": "Logits", "overhead": "CUDA, cache"}


def _chart(title: str) -> QChart:
    chart = QChart()
    chart.setTitle(title)
    chart.setAnimationOptions(QChart.AnimationOption.NoAnimation)
    chart.setMargins(QMargins(4, 4, 4, 4))
    chart.legend().setAlignment(Qt.AlignmentFlag.AlignBottom)
    if QApplication.palette().color(QPalette.ColorRole.Window).lightness() < 128:
        chart.setTheme(QChart.ChartTheme.ChartThemeDark)  # follow the system's dark palette
    return chart


def _value_axis(title: str, top: float) -> QValueAxis:
    axis = QValueAxis()
    axis.setTitleText(title)
    axis.setRange(0, top * 1.08 if top > 0 else 1)
    axis.setLabelFormat("%.0f" if top >= 10 else "%.2g")
    axis.applyNiceNumbers()
    return axis


def _category_axis(labels: list[str]) -> QBarCategoryAxis:
    """Bar labels drawn whole (Qt would cut them to "..." to leave the bars more room)."""
    axis = QBarCategoryAxis()
    axis.append(labels)
    axis.setTruncateLabels(False)
    return axis


def money_scale(top: float) -> tuple[float, str]:
    """(divisor, unit) so that money axes read 250 (1,000 USD) rather than 2.5e+05; the unit short enough to stand
    whole beside a chart squeezed by a long answer at 1024 x 700."""
    if top >= 1e7:
        return 1e6, "million USD"
    if top >= 1e4:
        return 1e3, "1,000 USD"
    return 1.0, "USD"


def cost_chart(costs: dict | None) -> QChart:
    """Job cost by option (USD), acceptable options in ranking order (the cheapest on top)."""
    chart = _chart("Job cost by option (acceptable options, cheapest first)")
    if not costs or not costs["labels"]:
        chart.setTitle("Job cost by option: no acceptable option")
        return chart
    ranked = [f"{k}. {label}" for k, label in enumerate(costs["labels"], start=1)]  # unique: one category per bar
    labels, values = list(reversed(ranked)), list(reversed(costs["usd"]))  # bars draw bottom-up
    divisor, unit = money_scale(max(values))
    scaled = [float(v) / divisor for v in values]
    bars = QBarSet(f"Job cost ({unit})")
    bars.append(scaled)
    series = QHorizontalBarSeries()
    series.append(bars)
    series.setLabelsVisible(True)
    series.setLabelsFormat("@value")
    series.setLabelsPrecision(max(2, len(str(int(max(scaled)))) + (1 if divisor > 1 else 0)))  # whole dollars
    chart.addSeries(series)
    y = _category_axis(labels)
    x = _value_axis(f"Job cost, {unit}", max(scaled))
    chart.addAxis(y, Qt.AlignmentFlag.AlignLeft)
    chart.addAxis(x, Qt.AlignmentFlag.AlignBottom)
    series.attachAxis(y)
    series.attachAxis(x)
    chart.legend().setVisible(False)
    return chart


def memory_chart(memory: dict | None) -> QChart:
    """Memory per GPU by component (GiB, stacked) for the first setups of the ranking, with each GPU's capacity."""
    chart = _chart("Memory per GPU by component; in brackets, the GPU's own")
    if not memory:
        return chart
    # the components listed at the right, one a line: in one line under the chart Qt gives each the same
    # width and cuts the longer names on a narrow window
    chart.legend().setAlignment(Qt.AlignmentFlag.AlignRight)
    series = QHorizontalStackedBarSeries()
    for comp, values in memory["components"].items():
        bars = QBarSet(COMPONENT_LABELS.get(comp, comp))
        bars.append(list(reversed(values)))
        series.append(bars)
    chart.addSeries(series)
    y = _category_axis([f"{s}<br>({cap:.0f} GiB)" for s, cap in zip(reversed(memory["setups"]), reversed(memory["capacity"]))])
    x = _value_axis("GiB per GPU (2^30 bytes)", max(max(memory["total"]), max(memory["capacity"])))
    chart.addAxis(y, Qt.AlignmentFlag.AlignLeft)
    chart.addAxis(x, Qt.AlignmentFlag.AlignBottom)
    series.attachAxis(y)
    series.attachAxis(x)
    return chart


def cash_chart(cash: dict | None) -> QChart:
    """Cumulative cash (USD) owning versus renting the recommended setup, month by month."""
    chart = _chart("Cumulative cash: owning versus renting" + (f" {cash['label']}" if cash else ""))
    if not cash:
        return chart
    divisor, unit = money_scale(max(max(cash["own_cumulative_usd"]), max(cash["rent_cumulative_usd"])))
    top = 0.0
    for key, name in (("own_cumulative_usd", "Owning (capital, set-up, running costs)"),
                      ("rent_cumulative_usd", "Renting the same hours")):
        line = QLineSeries()
        line.setName(name)
        for month, usd in zip(cash["month"], cash[key]):
            line.append(float(month), float(usd) / divisor)
            top = max(top, float(usd) / divisor)
        chart.addSeries(line)
    x = QValueAxis()
    x.setTitleText("Month")
    x.setRange(0, max(cash["month"]) or 1)
    x.setLabelFormat("%d")
    y = _value_axis(unit, top)  # the title says what accumulates
    _attach_axes(chart, x, y)
    return chart


def _attach_axes(chart: QChart, x, y) -> None:
    """The x axis at the bottom and the y axis at the left, for every series of the chart."""
    chart.addAxis(x, Qt.AlignmentFlag.AlignBottom)
    chart.addAxis(y, Qt.AlignmentFlag.AlignLeft)
    for s in chart.series():
        s.attachAxis(x)
        s.attachAxis(y)


def _log_axis(title: str, low: float, high: float) -> QLogValueAxis:
    axis = QLogValueAxis()
    axis.setTitleText(title)
    axis.setBase(10)
    axis.setLabelFormat("%g")
    axis.setRange(low, high)
    return axis


def volume_chart(volume: dict | None) -> QChart:
    """Cost per million tokens (USD, log scale) against monthly tokens (millions, log scale): the cheapest rented and
    bought setups, whose replicas follow the volume, and the API; the demand marked."""
    chart = _chart("USD per million tokens (prompt + generated) by volume")
    if not volume:
        return chart
    chart.legend().setAlignment(Qt.AlignmentFlag.AlignRight)  # one line each: whole names (at the bottom Qt cuts them)
    x = volume["mtok_per_month"]
    values = [v for line in volume["lines"] for v in line["usd_per_mtok"] if v > 0]
    if not values:
        return chart
    low, high = min(values) / 1.5, max(values) * 1.5
    for line in volume["lines"]:
        series = QLineSeries()
        series.setName(line["label"])
        for v, usd in zip(x, line["usd_per_mtok"]):
            if usd > 0:
                series.append(float(v), float(usd))
        chart.addSeries(series)
    demand = QLineSeries()
    demand.setName(f"Demand ({volume['demand_mtok_per_month']:,.0f} Mtok/month)")
    demand.setPen(QPen(Qt.GlobalColor.gray, 1, Qt.PenStyle.DashLine))
    demand.append(volume["demand_mtok_per_month"], low)
    demand.append(volume["demand_mtok_per_month"], high)
    chart.addSeries(demand)
    ax = _log_axis("Million tokens a month (log)", min(x), max(x))
    ay = _log_axis("USD/Mtok (log)", low, high)
    _attach_axes(chart, ax, ay)
    return chart


def latency_chart(latency: dict | None) -> QChart:
    """Time per generated token and time to first token (ms) against the batch one replica runs, with the targets
    (those in the chart's range) and the batch the setup serves at."""
    chart = _chart("Latency by batch" + (f": {latency['label']}" if latency else ""))
    if not latency:
        return chart
    chart.legend().setAlignment(Qt.AlignmentFlag.AlignRight)
    top = max(max(latency["tpot_ms"]), max(latency["ttft_ms"]))
    lines = [("tpot_ms", "Time per generated token"), ("ttft_ms", "Time to first token")]
    for key, name in lines:
        series = QLineSeries()
        series.setName(name)
        for b, ms in zip(latency["batch"], latency[key]):
            series.append(float(b), float(ms))
        chart.addSeries(series)
    right = max(latency["batch"])
    for key, name in (("tpot_slo_ms", "Target per token"), ("ttft_slo_ms", "Target for the first token")):
        target = latency[key]
        if 0 < target <= top * 1.5:  # a target far above the curves would flatten them
            series = QLineSeries()
            series.setName(f"{name} ({target:g} ms)")
            series.setPen(QPen(Qt.GlobalColor.gray, 1, Qt.PenStyle.DashLine))
            series.append(1.0, target)
            series.append(float(right), target)
            chart.addSeries(series)
            top = max(top, target)
    if latency["serving_batch"] >= 1:
        mark = QLineSeries()
        mark.setName(f"Serving batch ({latency['serving_batch']})")
        mark.setPen(QPen(Qt.GlobalColor.darkGreen, 1, Qt.PenStyle.DotLine))
        mark.append(float(latency["serving_batch"]), 0.0)
        mark.append(float(latency["serving_batch"]), top)
        chart.addSeries(mark)
    x = QValueAxis()
    x.setTitleText("Batch (requests at once)")
    x.setRange(1, right if right > 1 else 2)
    x.setLabelFormat("%d")
    y = _value_axis("ms", top)
    _attach_axes(chart, x, y)
    return chart


def tradeoff_chart(curve: dict | None) -> QChart:
    """Output tokens per second per GPU against tokens per second each user sees, one line per GPUs per replica, each
    point a number of requests in flight (core's ``tradeoff_curve``: closed loop, the engine on the form)."""
    chart = _chart("Per GPU against per user" + (f": {curve['gpu']} ({curve['weights_dtype']}, {curve['engine']})" if curve else ""))
    if not curve or not curve["points"]:
        return chart
    chart.legend().setAlignment(Qt.AlignmentFlag.AlignRight)
    right = top = 0.0
    for n in sorted({p["n_gpus"] for p in curve["points"]}):
        line = QLineSeries()
        line.setName(f"{n} GPU{'s' if n > 1 else ''} per replica")
        for p in sorted((p for p in curve["points"] if p["n_gpus"] == n), key=lambda p: p["tokens_per_s_per_user"]):
            line.append(p["tokens_per_s_per_user"], p["output_tokens_per_s_per_gpu"])
            right, top = max(right, p["tokens_per_s_per_user"]), max(top, p["output_tokens_per_s_per_gpu"])
        chart.addSeries(line)
    x = _value_axis("tokens/s each user sees", right)
    y = _value_axis("output tokens/s per GPU", top)
    _attach_axes(chart, x, y)
    return chart


RENDER_HINT = QPainter.RenderHint.Antialiasing


class ChartViews(QObject):
    """The answer's three charts: job cost and memory per GPU as bars (as many as have room for their labels),
    owning against renting as cash over time."""

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self.cost_view, self.memory_view, self.cash_view = QChartView(), QChartView(), QChartView()
        for view in self.views():
            view.setRenderHint(RENDER_HINT)
        self.bar_series: dict = {}
        self.bars_shown: dict = {}
        for view in (self.cost_view, self.memory_view):
            view.installEventFilter(self)  # resized: as many bars as have room for their labels

    def views(self) -> tuple[QChartView, QChartView, QChartView]:
        return self.cost_view, self.memory_view, self.cash_view

    def titled(self, task: str = "train") -> tuple[tuple[QChartView, str], ...]:
        if task == "serve":
            return (self.cost_view, "Cost per million tokens"), (self.memory_view, "Latency"), (self.cash_view, "Per GPU vs per user")
        return (self.cost_view, "Job cost"), (self.memory_view, "Memory per GPU"), (self.cash_view, "Owning vs renting")

    def show_answer(self, answer: dict) -> None:
        if answer.get("task") == "serve":  # line charts: no bars to fit to the view
            self.bar_series, self.bars_shown = {}, {}
            self.cost_view.setChart(volume_chart(answer["volume"]))
            self.memory_view.setChart(latency_chart(answer["latency"]))
            self.cash_view.setChart(tradeoff_chart(answer.get("tradeoff")))
            return
        self.bar_series = {self.cost_view: answer["costs"], self.memory_view: answer["memory"]}
        self.bars_shown = {}
        self._fit_bar_charts()
        self.cash_view.setChart(cash_chart(answer["cash"]))

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt's name
        if watched in self.bar_series and event.type() == QEvent.Type.Resize:
            self._fit_bar_charts()
        return super().eventFilter(watched, event)

    def _fit_bar_charts(self) -> None:
        """The bar charts with as many of their first bars as have room for their labels (cost: one text
        line a bar, memory: two), at least MIN_BARS: on a short window Qt would drop every other label."""
        line = self.cost_view.fontMetrics().height()
        for view, draw, lines, key in ((self.cost_view, cost_chart, 1, "labels"), (self.memory_view, memory_chart, 2, "setups")):
            series = self.bar_series.get(view)
            total = len(series[key]) if series else 0
            room = view.height() - BAR_CHART_CHROME_LINES * line
            n = min(total, max(MIN_BARS, room // (lines * line + 4)))
            if self.bars_shown.get(view) != n:
                self.bars_shown[view] = n
                view.setChart(draw(_first(series, n) if series else series))


def _first(series: dict, n: int) -> dict:
    """A chart's series with the first ``n`` entries of every list (also inside nested dicts)."""
    return {k: _first(v, n) if isinstance(v, dict) else v[:n] if isinstance(v, list) else v for k, v in series.items()}
