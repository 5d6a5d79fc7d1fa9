"""The Sweep dialog's results: the table of runs and a metric plotted against a parameter.

Runs that did not finish (failed, invalid, error) have NaN metrics; the plot marks them
as red crosses along the bottom of the axes at their parameter value, so they are seen
where they happened instead of silently missing.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QAbstractItemView, QComboBox, QHBoxLayout, QLabel,
                               QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

from blocksim.gui.scopes.plot import COLORS
from blocksim.sweeps.table import MESSAGE, STATUS, SweepTable

GOOD = ("finished", "stopped")
FAILED_COLOR = "#C00000"
_FOREGROUND = "#303030"


def _text(value: Any) -> str:
    if isinstance(value, float):
        return "nan" if math.isnan(value) else f"{value:.6g}"
    return str(value)


class RunTable(QTableWidget):
    """One row per run, in run order; the run index is the row header."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.setSelectionMode(QAbstractItemView.ExtendedSelection)
        self.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.indices: list[int] = []  # row -> run index

    def show_table(self, table: SweepTable) -> None:
        columns = list(table.columns)
        self.setSortingEnabled(False)
        self.clear()
        self.setColumnCount(len(columns))
        self.setHorizontalHeaderLabels(columns)
        self.indices = sorted(table.rows)
        self.setRowCount(len(self.indices))
        status_column = columns.index(STATUS)
        for r, index in enumerate(self.indices):
            self.setVerticalHeaderItem(r, QTableWidgetItem(str(index)))
            values = table.rows[index]
            for c, value in enumerate(values):
                item = QTableWidgetItem(_text(value))
                if columns[c] == MESSAGE:
                    item.setToolTip(str(value))
                if c == status_column and value not in GOOD:
                    item.setForeground(pg.mkColor(FAILED_COLOR))
                self.setItem(r, c, item)
        self.resizeColumnsToContents()
        if MESSAGE in columns:
            self.setColumnWidth(columns.index(MESSAGE), 260)

    def selected_runs(self) -> list[int]:
        rows = sorted({i.row() for i in self.selectionModel().selectedRows()})
        return [self.indices[r] for r in rows if r < len(self.indices)]

    def select_runs(self, runs: list[int], add: bool = False) -> None:
        if not add:
            self.clearSelection()
        mode = self.selectionMode()
        self.setSelectionMode(QAbstractItemView.MultiSelection)  # selectRow adds, not sets
        for run in runs:
            if run in self.indices:
                self.selectRow(self.indices.index(run))
        self.setSelectionMode(mode)


class MetricPlot(QWidget):
    """A chosen metric against a chosen swept parameter; a click on a point picks its run."""

    pointClicked = Signal(int, bool)  # run index, add to the selection (Ctrl held)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.table: SweepTable | None = None
        self.x_choice = QComboBox(self)
        self.y_choice = QComboBox(self)
        choose = QHBoxLayout()
        choose.addWidget(QLabel("Plot", self))
        choose.addWidget(self.y_choice, 1)
        choose.addWidget(QLabel("against", self))
        choose.addWidget(self.x_choice, 1)
        self.plot = pg.PlotWidget(self, background="w")
        item = self.plot.getPlotItem()
        item.showGrid(x=True, y=True, alpha=0.25)
        for name in ("left", "bottom"):
            axis = item.getAxis(name)
            axis.setPen(pg.mkPen(_FOREGROUND))
            axis.setTextPen(pg.mkPen(_FOREGROUND))
            axis.enableAutoSIPrefix(False)  # parameters have no units: "mu", not "mu (x0.001)"
        self.legend = item.addLegend(offset=(10, 10), labelTextColor=_FOREGROUND)
        self.good = pg.ScatterPlotItem(size=9, brush=pg.mkBrush(COLORS[0]),
                                       pen=pg.mkPen("w"), name="finished")
        self.line = pg.PlotDataItem(pen=pg.mkPen(COLORS[0], width=1))
        self.failed = pg.ScatterPlotItem(size=12, symbol="x", brush=pg.mkBrush(FAILED_COLOR),
                                         pen=pg.mkPen(FAILED_COLOR), name="failed")
        self.chosen = pg.ScatterPlotItem(size=15, brush=pg.mkBrush(None),
                                         pen=pg.mkPen(COLORS[1], width=2))
        for curve in (self.line, self.good, self.failed, self.chosen):
            item.addItem(curve)
        self.good.sigClicked.connect(self._clicked)
        self.failed.sigClicked.connect(self._clicked)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(choose)
        layout.addWidget(self.plot, 1)
        self.x_choice.currentTextChanged.connect(lambda _: self.redraw())
        self.y_choice.currentTextChanged.connect(lambda _: self.redraw())

    def show_table(self, table: SweepTable) -> None:
        """Show `table`; the axes' choices follow its columns (kept when still there)."""
        self.table = table
        for combo, names in ((self.x_choice, table.names), (self.y_choice, table.metric_names)):
            current = combo.currentText()
            if [combo.itemText(i) for i in range(combo.count())] != list(names):
                combo.blockSignals(True)
                combo.clear()
                combo.addItems(names)
                if current in names:
                    combo.setCurrentText(current)
                combo.blockSignals(False)
        self.redraw()

    def data(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(run indices, x, y, good) of the shown table for the chosen axes."""
        table, x_name, y_name = self.table, self.x_choice.currentText(), \
            self.y_choice.currentText()
        if table is None or x_name not in table.columns or y_name not in table.columns:
            empty = np.zeros(0)
            return empty.astype(int), empty, empty, empty.astype(bool)
        runs = np.array(sorted(table.rows), dtype=int)
        x = np.array(table.column(x_name), dtype=float)
        y = np.array(table.column(y_name), dtype=float)
        good = np.array([s in GOOD for s in table.column(STATUS)], dtype=bool)
        return runs, x, y, good

    def redraw(self) -> None:
        runs, x, y, good = self.data()
        shown = good & np.isfinite(y)
        self.good.setData(x[shown], y[shown], data=runs[shown])
        order = np.argsort(x[shown], kind="stable")
        single = self.table is not None and len(self.table.names) == 1
        self.line.setData(x[shown][order] if single else [], y[shown][order] if single else [])
        floor = float(np.min(y[shown])) if shown.any() else 0.0
        self.failed.setData(x[~good], np.full(int((~good).sum()), floor), data=runs[~good])
        item = self.plot.getPlotItem()
        item.setLabel("bottom", self.x_choice.currentText(), color=_FOREGROUND)
        item.setLabel("left", self.y_choice.currentText(), color=_FOREGROUND)
        self.mark([])

    def mark(self, chosen: list[int]) -> None:
        """Ring the points of the chosen runs."""
        runs, x, y, good = self.data()
        keep = np.isin(runs, chosen) & good & np.isfinite(y)
        self.chosen.setData(x[keep], y[keep])

    def _clicked(self, _item: Any, points: Any, event: Any = None) -> None:
        if len(points):
            add = bool(event is not None and event.modifiers() & Qt.ControlModifier)
            self.pointClicked.emit(int(points[0].data()), add)
