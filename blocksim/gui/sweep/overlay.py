"""A scope of the selected runs: one logged signal of each, overlaid, labelled by their
parameter values."""
from __future__ import annotations

from typing import Sequence

import pyqtgraph as pg
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from blocksim.engine import Results
from blocksim.gui.scopes.plot import COLORS

_FOREGROUND = "#303030"


class OverlayScope(QWidget):
    """Curves of one signal from several runs' Results, with a legend."""

    def __init__(self, signals: Sequence[str], parent: QWidget | None = None):
        super().__init__(parent)
        self.signal = QComboBox(self)
        self.signal.addItems(signals)
        self.status = QLabel("Select runs in the table or click points in the plot.", self)
        top = QHBoxLayout()
        top.addWidget(QLabel("Signal", self))
        top.addWidget(self.signal)
        top.addWidget(self.status, 1)
        self.plot = pg.PlotWidget(self, background="w")
        item = self.plot.getPlotItem()
        item.showGrid(x=True, y=True, alpha=0.25)
        item.setLabel("bottom", "time", units="s", color=_FOREGROUND)
        for name in ("left", "bottom"):
            axis = item.getAxis(name)
            axis.setPen(pg.mkPen(_FOREGROUND))
            axis.setTextPen(pg.mkPen(_FOREGROUND))
            axis.enableAutoSIPrefix(name == "bottom")  # time in s; signals have no units here
        self.legend = item.addLegend(offset=(-10, 10), labelTextColor=_FOREGROUND)
        self.curves: list[pg.PlotDataItem] = []
        self.runs: list[tuple[str, Results]] = []
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self.plot, 1)
        self.signal.currentTextChanged.connect(lambda _: self.redraw())

    def show_runs(self, runs: list[tuple[str, Results]]) -> None:
        """(label, results) of each selected run."""
        self.runs = list(runs)
        self.redraw()

    def redraw(self) -> None:
        item = self.plot.getPlotItem()
        for curve in self.curves:
            item.removeItem(curve)
        self.curves = []
        self.legend.clear()
        name = self.signal.currentText()
        item.setLabel("left", name, color=_FOREGROUND)
        for k, (label, results) in enumerate(self.runs):
            values = dict(results.columns()).get(name)
            if values is None or len(values) != len(results.time):
                continue
            curve = item.plot(results.time, values, name=label,
                              pen=pg.mkPen(COLORS[k % len(COLORS)], width=1.5))
            self.curves.append(curve)
