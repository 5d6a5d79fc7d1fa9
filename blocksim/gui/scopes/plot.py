"""One scope's plot: the logged signal (one curve per element of a vector), a legend for
vectors, and the event instants marked on each curve.

Events are drawn as hollow markers at the left-limit value of each event instant (a bouncing
ball has hundreds); when there are few instants, dashed vertical lines mark them as well.
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pyqtgraph.exporters
from PySide6.QtCore import QBuffer, QByteArray, QIODevice, Qt
from PySide6.QtWidgets import QVBoxLayout, QWidget

from blocksim.engine import Event
from blocksim.fileio import atomic_write

# A colour-blind-safe qualitative palette (Okabe-Ito), dark enough on white.
COLORS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000")
MAX_EVENT_LINES = 30
DOWNSAMPLE_ABOVE = 20_000
_FOREGROUND = "#303030"


def event_instants(events: tuple[Event, ...] | list[Event]) -> np.ndarray:
    """Distinct times of the model's events (a user's interruption is not one)."""
    times = [e.time for e in events if e.kind != "interrupted"]
    return np.unique(np.asarray(times, dtype=float))


class ScopeView(QWidget):
    """A pyqtgraph plot of one Scope block's signal, with its event instants marked."""

    def __init__(self, path: str, parent: QWidget | None = None):
        super().__init__(parent)
        self.path = path
        self.plot = pg.PlotWidget(self, background="w")
        item = self.plot.getPlotItem()
        item.setTitle(path, color=_FOREGROUND, size="11pt")
        item.showGrid(x=True, y=True, alpha=0.25)
        item.setLabel("bottom", "time", units="s", color=_FOREGROUND)
        for name in ("left", "bottom"):
            axis = item.getAxis(name)
            axis.setPen(pg.mkPen(_FOREGROUND))
            axis.setTextPen(pg.mkPen(_FOREGROUND))
        self.legend = None
        self.curves: list[pg.PlotDataItem] = []
        self.markers: list[pg.ScatterPlotItem] = []
        self.lines: list[pg.InfiniteLine] = []
        self.time = np.zeros(0)
        self.values = np.zeros(0)
        self.events: tuple[Event, ...] = ()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.plot)

    def set_data(self, time: np.ndarray, values: np.ndarray, events=()) -> None:
        """Show `values` (1-D, or 2-D with one column per element) against `time`."""
        self.time, self.values, self.events = time, values, tuple(events)
        columns = values.reshape(len(values), -1) if values.ndim > 1 else values[:, None]
        self._ensure_curves(columns.shape[1], vector=values.ndim > 1)
        # Peak downsampling keeps long runs fast but draws jagged lines: only when needed.
        many = len(time) > DOWNSAMPLE_ABOVE
        instants = event_instants(self.events)
        # Each event instant has two rows (left and right limit): mark the left one.
        rows = np.searchsorted(time, instants, side="left")
        inside = rows < len(time)
        instants, rows = instants[inside], rows[inside]
        for k, (curve, marker) in enumerate(zip(self.curves, self.markers)):
            curve.setDownsampling(ds=None if many else 1, auto=many, method="peak")
            curve.setData(time, columns[:, k])
            marker.setData(instants, columns[rows, k])
        self._set_lines(instants if len(instants) <= MAX_EVENT_LINES else np.zeros(0))

    def clear(self) -> None:
        """Forget the data (a new run is about to start)."""
        self.time, self.values, self.events = np.zeros(0), np.zeros(0), ()
        for obj in (*self.curves, *self.markers):
            obj.setData([], [])
        self._set_lines(np.zeros(0))

    def data(self) -> tuple[np.ndarray, np.ndarray]:
        """(time, values) as shown."""
        return self.time, self.values

    def export_png(self, path: str, width: int = 1000) -> None:
        """Write the plot as a PNG image `width` pixels wide, atomically (a failure keeps
        the old file and raises OSError naming the file)."""
        exporter = pyqtgraph.exporters.ImageExporter(self.plot.getPlotItem())
        exporter.parameters()["width"] = width
        image = exporter.export(toBytes=True)
        data = QByteArray()
        buffer = QBuffer(data)
        buffer.open(QIODevice.WriteOnly)
        if image is None or image.isNull() or not image.save(buffer, "PNG"):
            raise OSError(f"{path}: the plot of {self.path} could not be drawn as a PNG")
        buffer.close()
        try:
            atomic_write(path, lambda fh: fh.write(bytes(data.data())), binary=True)
        except (OSError, ValueError) as exc:
            raise OSError(f"{path}: {getattr(exc, 'strerror', None) or exc}") from exc

    def _ensure_curves(self, count: int, vector: bool) -> None:
        if len(self.curves) == count:
            return
        item = self.plot.getPlotItem()
        for obj in (*self.curves, *self.markers):
            item.removeItem(obj)
        if self.legend is not None:
            self.legend.clear()
        elif vector:
            self.legend = item.addLegend(offset=(-10, 10), labelTextColor=_FOREGROUND,
                                         brush=pg.mkBrush(255, 255, 255, 220),
                                         pen=pg.mkPen("#c0c0c0"))
        self.curves, self.markers = [], []
        for k in range(count):
            color = COLORS[k % len(COLORS)]
            name = f"{self.path}[{k}]" if vector else self.path
            curve = item.plot(pen=pg.mkPen(color, width=1.6), name=name if vector else None,
                              antialias=True, clipToView=True)
            marker = pg.ScatterPlotItem(symbol="o", size=6, pen=pg.mkPen(color, width=1.2),
                                        brush=pg.mkBrush("w"), antialias=True)
            marker.setZValue(10)
            item.addItem(marker)
            self.curves.append(curve)
            self.markers.append(marker)
        if self.legend is not None and vector:
            self.legend.addItem(self.markers[0], "event")

    def _set_lines(self, instants: np.ndarray) -> None:
        item = self.plot.getPlotItem()
        for line in self.lines[len(instants):]:
            item.removeItem(line)
        self.lines = self.lines[:len(instants)]
        pen = pg.mkPen("#9e9e9e", width=1, style=Qt.PenStyle.DashLine)
        while len(self.lines) < len(instants):
            line = pg.InfiniteLine(angle=90, movable=False, pen=pen)
            line.setZValue(-5)
            item.addItem(line, ignoreBounds=True)
            self.lines.append(line)
        for line, t in zip(self.lines, instants):
            line.setValue(float(t))
