"""The Data Inspector: every logged signal of the last few runs, listed per run, ticked on
and off to plot them together (to compare a run with the one before, after changing a
parameter), with the scopes' two cursors reading every plotted curve (each on its own run's
time rows). It observes the scope manager's run history and never touches the model.
"""
from __future__ import annotations

import logging

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QHBoxLayout, QLabel, QPushButton, QSplitter, QTreeWidget,
                               QTreeWidgetItem, QVBoxLayout, QWidget)

from blocksim.gui.panels.forms import muted_label
from blocksim.gui.scopes.cursors import CursorPair, CursorReading, value_at
from blocksim.gui.scopes.history import RunHistory, RunRecord, distinguishing
from blocksim.gui.scopes.plot import COLORS, FOREGROUND, adopt_orphans, style_axes
from blocksim.gui.scopes.zoom import TimeZoomViewBox

log = logging.getLogger(__name__)

_KEY = Qt.UserRole + 1  # (run number, column name) on a signal's tree item
_NO_RUNS = "Runs appear here as they end (the last five are kept)."
_NOTHING_TICKED = "Tick signals of one or more runs to plot them together."
_PLOTTED = "Tick more signals to compare them; Cursors reads every plotted curve."


class DataInspector(QWidget):
    """A tree of runs and their signals beside one plot of the ticked signals."""

    def __init__(self, history: RunHistory, parent: QWidget | None = None):
        super().__init__(parent)
        self.history = history
        self.tree = QTreeWidget(self)
        self.tree.setHeaderLabels(["Run / signal"])
        self.tree.setMinimumWidth(180)
        self.tree.itemChanged.connect(self._item_changed)
        # The plot is made when the panel is first shown or a signal ticked: a window that
        # never opens the inspector pays nothing for it.
        self.plot: pg.PlotWidget | None = None
        self.viewbox: TimeZoomViewBox | None = None
        self.legend: pg.LegendItem | None = None
        self._plot_room = QWidget(self)
        QVBoxLayout(self._plot_room).setContentsMargins(0, 0, 0, 0)
        self.curves: dict[tuple[int, str], pg.PlotDataItem] = {}
        self.hint = muted_label(_NO_RUNS, self)
        self.clear_button = QPushButton("Clear runs", self)
        self.clear_button.clicked.connect(self.clear_runs)
        self.fit_button = QPushButton("Auto range", self)
        self.fit_button.clicked.connect(self._fit)
        self.cursor_button = QPushButton("Cursors", self)
        self.cursor_button.setCheckable(True)
        self.cursor_button.setToolTip("Two vertical cursors: every plotted curve's value at "
                                      "both and the differences (drag them)")
        self.cursor_button.toggled.connect(self.show_cursors)
        self.cursors: CursorPair | None = None
        self.readout = QLabel(self)
        self.readout.setTextFormat(Qt.RichText)
        self.readout.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.readout.setStyleSheet("QLabel { padding: 4px 6px; background: white; }")
        self.readout.setVisible(False)
        left = QWidget(self)
        column = QVBoxLayout(left)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.tree, 1)
        buttons = QHBoxLayout()
        buttons.addWidget(self.fit_button)
        buttons.addWidget(self.cursor_button)
        buttons.addWidget(self.clear_button)
        column.addLayout(buttons)
        splitter = QSplitter(Qt.Horizontal, self)
        splitter.addWidget(left)
        right = QWidget(self)
        beside = QHBoxLayout(right)
        beside.setContentsMargins(0, 0, 0, 0)
        beside.addWidget(self._plot_room, 1)
        beside.addWidget(self.readout, 0, Qt.AlignTop)
        splitter.addWidget(right)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([240, 700])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.hint)
        layout.addWidget(splitter, 1)
        for record in history.runs:
            self.add_run(record)

    def showEvent(self, event) -> None:  # noqa: N802 (Qt's name)
        self._ensure_plot()
        super().showEvent(event)

    def _ensure_plot(self) -> pg.PlotWidget:
        if self.plot is None:
            self.viewbox = TimeZoomViewBox()
            self.plot = pg.PlotWidget(self._plot_room, background="w", viewBox=self.viewbox)
            item = self.plot.getPlotItem()
            item.setLabel("bottom", "time", units="s", color=FOREGROUND)
            style_axes(item)
            adopt_orphans(self, item)
            self.viewbox.setAutoVisible(y=True)
            self.legend = item.addLegend(offset=(-10, 10), labelTextColor=FOREGROUND,
                                         brush=pg.mkBrush(255, 255, 255, 220),
                                         pen=pg.mkPen("#c0c0c0"))
            self.legend.setVisible(bool(self.curves))
            self.cursors = CursorPair(item, self)
            self.cursors.moved.connect(self._update_readout)
            self._plot_room.layout().addWidget(self.plot)
        return self.plot

    # ----- cursors -----
    def show_cursors(self, shown: bool) -> None:
        """Two cursors at a third and two thirds of the visible time span, or none."""
        self._ensure_plot()
        if shown:
            (lo, hi), _ = self.viewbox.viewRange()
            self.cursors.show(lo + (hi - lo) / 3, lo + 2 * (hi - lo) / 3)
        else:
            self.cursors.hide()
        self._update_readout()

    def cursor_reading(self) -> CursorReading | None:
        """Every plotted curve's value at both cursors (None when they are hidden); runs
        have rows at different times, so each curve is read on its own."""
        if self.cursors is None or not self.cursors.shown:
            return None
        t1, t2 = self.cursors.times()
        names, y1, y2 = [], [], []
        runs = self._run_names()
        for number, name in self.curves:
            record = self.history.run(number)  # the logged rows, not the drawn (clipped) ones
            values = record.column(name).values
            names.append(f"{runs[number]}: {name}")
            y1.append(value_at(record.time, values, t1))
            y2.append(value_at(record.time, values, t2))
        return CursorReading(t1, t2, tuple(names), tuple(y1), tuple(y2))

    def _update_readout(self) -> None:
        reading = self.cursor_reading()
        self.readout.setVisible(reading is not None)
        if reading is not None:
            self.readout.setText(reading.as_html())

    def _fit(self, _checked: bool = False) -> None:
        if self.viewbox is not None:
            self.viewbox.auto_range()

    # ----- runs -----
    def add_run(self, record: RunRecord) -> None:
        """List a new run (newest on top, expanded); runs the history dropped go away."""
        kept = {r.number for r in self.history.runs}
        for i in reversed(range(self.tree.topLevelItemCount())):
            number = self.tree.topLevelItem(i).data(0, _KEY)
            if number not in kept:
                self._drop_run(i, number)
        self.tree.blockSignals(True)
        top = QTreeWidgetItem([f"{record.title} · {len(record.columns)} signals"])
        top.setData(0, _KEY, record.number)
        top.setToolTip(0, f"t = {record.time[0]:.6g} … {record.time[-1]:.6g} s, "
                          f"{len(record.time)} rows" if len(record.time) else "no rows")
        for col in record.columns:
            text = col.name if col.label == col.name else f"{col.name}  ({col.label})"
            child = QTreeWidgetItem([text])
            child.setData(0, _KEY, (record.number, col.name))
            child.setFlags(child.flags() | Qt.ItemIsUserCheckable)
            child.setCheckState(0, Qt.Unchecked)
            top.addChild(child)
        self.tree.insertTopLevelItem(0, top)
        plotted = {number for number, _ in self.curves}
        for i in range(1, self.tree.topLevelItemCount()):  # older runs fold unless plotted
            item = self.tree.topLevelItem(i)
            item.setExpanded(item.data(0, _KEY) in plotted)
        top.setExpanded(True)
        self.tree.blockSignals(False)
        self._show_hint()

    def clear_runs(self) -> None:
        """Forget every run (and its curves)."""
        for key in list(self.curves):
            self._remove_curve(key)
        self.tree.clear()
        self.history.clear()
        self._show_hint()

    def _show_hint(self) -> None:
        """Say what to do next; the legend only with curves. The hint line stays (only its
        text changes): hiding it moved the list up a row under the pointer at the first
        tick, and down again at the last untick."""
        self.hint.setText(_PLOTTED if self.curves else
                          _NOTHING_TICKED if self.tree.topLevelItemCount() else _NO_RUNS)
        if self.legend is not None:
            self.legend.setVisible(bool(self.curves))

    def _drop_run(self, index: int, number: int) -> None:
        for key in [k for k in self.curves if k[0] == number]:
            self._remove_curve(key)
        self.tree.takeTopLevelItem(index)

    # ----- ticking -----
    def set_checked(self, number: int, name: str, on: bool = True) -> None:
        """Tick (or untick) signal `name` of run `number`, as a click on its box does."""
        item = self._signal_item(number, name)
        if item is None:
            raise KeyError(f"run {number} has no signal {name!r} (or is no longer kept)")
        item.setCheckState(0, Qt.Checked if on else Qt.Unchecked)

    def plotted(self) -> list[tuple[int, str]]:
        """(run number, column name) of every plotted signal, in the order they were ticked."""
        return list(self.curves)

    def _signal_item(self, number: int, name: str) -> QTreeWidgetItem | None:
        for i in range(self.tree.topLevelItemCount()):
            top = self.tree.topLevelItem(i)
            for j in range(top.childCount()):
                if top.child(j).data(0, _KEY) == (number, name):
                    return top.child(j)
        return None

    def _item_changed(self, item: QTreeWidgetItem, _column: int) -> None:
        key = item.data(0, _KEY)
        if not isinstance(key, tuple):
            return
        key = (int(key[0]), str(key[1]))
        if item.checkState(0) == Qt.Checked and key not in self.curves:
            self._add_curve(key)
        elif item.checkState(0) != Qt.Checked and key in self.curves:
            self._remove_curve(key)

    def _add_curve(self, key: tuple[int, str]) -> None:
        record = self.history.run(key[0])
        col = record.column(key[1])
        used = {curve.opts["pen"].color().name().upper() for curve in self.curves.values()}
        color = next((c for c in COLORS if c.upper() not in used),
                     COLORS[len(self.curves) % len(COLORS)])
        curve = self._ensure_plot().getPlotItem().plot(pen=pg.mkPen(color, width=1.6),
                                              antialias=True, clipToView=True)
        curve.setData(record.time, col.values)  # after adding it: see plot._draw_previous
        self.curves[key] = curve
        self._paint_item(key, color)
        self._relabel()
        self._update_readout()

    def _remove_curve(self, key: tuple[int, str]) -> None:
        curve = self.curves.pop(key)
        self.plot.getPlotItem().removeItem(curve)
        self._paint_item(key, FOREGROUND)
        self._relabel()
        self._update_readout()

    def _relabel(self) -> None:
        """Legend entries "Run 2: ball.x (mu = 0.7)": the run, the signal, and the
        parameters that set the plotted runs apart ("Run 2 (zoh_loop): y" when they come
        from several diagrams)."""
        if self.legend is None:
            return
        self.legend.clear()
        records = {n: self.history.run(n) for n, _ in self.curves
                   if any(r.number == n for r in self.history.runs)}
        # parameters tell runs of one diagram apart; runs of several, their diagrams' names
        one_diagram = len({r.diagram for r in records.values()}) <= 1
        apart = distinguishing(list(records.values())) if one_diagram else {}
        runs = self._run_names()
        for (number, name), curve in self.curves.items():
            if number not in records:
                continue
            label = f"{runs[number]}: {records[number].column(name).label}"
            if apart.get(number):
                label += f" ({apart[number]})"
            self.legend.addItem(curve, label)
        self._show_hint()

    def _run_names(self) -> dict[int, str]:
        """{run number: "Run 2"} for the plotted runs, "Run 2 (bouncing_ball)" when they
        come from more than one diagram."""
        records = [r for r in self.history.runs if any(n == r.number for n, _ in self.curves)]
        several = len({r.diagram for r in records}) > 1
        return {r.number: f"Run {r.number}" + (f" ({r.diagram})" if several else "")
                for r in records}

    def _paint_item(self, key: tuple[int, str], color: str) -> None:
        """A plotted signal's name in its curve's colour, its run unfolded (no
        itemChanged: not a tick)."""
        item = self._signal_item(*key)
        if item is not None:
            self.tree.blockSignals(True)
            item.setForeground(0, pg.mkBrush(color))
            if key in self.curves:
                item.parent().setExpanded(True)
            self.tree.blockSignals(False)
