"""One scope's plot: every logged element as a curve (several inputs, vectors) with a legend
naming the signals, a y label with units, the event instants marked, and the tools an
engineer measures with: two cursors with readouts, the value under the mouse, time-only
wheel zoom, auto range, an XY mode, the previous run kept in a lighter colour, exports.

Events are drawn as hollow markers at the left-limit value of each event instant (a bouncing
ball has hundreds); when there are few instants, dashed vertical lines mark them as well.
The toolbar is built in `scopes.tools`; the numbers under the cursors in `scopes.cursors`.
"""
from __future__ import annotations

import inspect

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QHBoxLayout, QLabel, QVBoxLayout, QWidget

from blocksim.engine import Event
from blocksim.gui.scopes import export
from blocksim.gui.scopes.cursors import CursorPair, hover_text, read_cursors
from blocksim.gui.scopes.tools import ScopeTools
from blocksim.gui.scopes.traces import ScopeTraces, fallback_traces
from blocksim.gui.scopes.zoom import TimeZoomViewBox

# A colour-blind-safe qualitative palette (Okabe-Ito), dark enough on white.
COLORS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000")
MAX_EVENT_LINES = 30
DOWNSAMPLE_ABOVE = 20_000
PREVIOUS_ALPHA = 80  # of 255: the previous run's curves, lighter than the current ones
FOREGROUND = "#303030"
# pyqtgraph 0.14 scales an axis whose values are all below 1 (a current of milliamperes)
# by a power of 1000 even with its automatic SI prefix off, and with no units to carry
# the prefix the label says nothing of it: the values read 1000 times too large. No
# ranges where prefixes apply keep an axis at its values (older versions never scale).
NO_SI_SCALING = ({"siPrefixEnableRanges": ()} if "siPrefixEnableRanges" in
                 inspect.signature(pg.AxisItem.setLabel).parameters else {})


def event_instants(events: tuple[Event, ...] | list[Event]) -> np.ndarray:
    """Distinct times of the model's events (a user's interruption is not one)."""
    times = [e.time for e in events if e.kind != "interrupted"]
    return np.unique(np.asarray(times, dtype=float))


def lighter(color: str, alpha: int = PREVIOUS_ALPHA) -> QColor:
    """The same hue, see-through: how the previous run is drawn."""
    qcolor = QColor(color)
    qcolor.setAlpha(alpha)
    return qcolor


def style_axes(item: pg.PlotItem) -> None:
    """Dark axes and text on the white background, a light grid."""
    item.showGrid(x=True, y=True, alpha=0.25)
    for name in ("left", "bottom"):
        axis = item.getAxis(name)
        axis.setPen(pg.mkPen(FOREGROUND))
        axis.setTextPen(pg.mkPen(FOREGROUND))


def adopt_orphans(owner: QWidget, item: pg.PlotItem) -> None:
    """Give the Qt objects pyqtgraph makes without a parent (the plot's and its ViewBox's
    context menus and their widget groups) a parent, so they go with `owner`. Otherwise
    they die only when Python's cyclic garbage collector frees their wrappers, at an
    arbitrary moment; a collection inside a PySide6 disconnect then deadlocks the editor
    (seen in the scope tests: ~QObject waiting on the connection lock held by the
    disconnect)."""
    vb = item.getViewBox()
    menus = [getattr(vb, "menu", None), getattr(item, "ctrlMenu", None)]
    groups = [*getattr(vb.menu, "widgetGroups", ()), getattr(item, "stateGroup", None)]
    for obj in menus + groups:
        if obj is None or obj.parent() is not None:
            continue
        if isinstance(obj, QWidget):
            obj.setParent(owner, obj.windowFlags())  # still a popup menu
        else:
            obj.setParent(owner)


def as_columns(values: np.ndarray) -> np.ndarray:
    """Logged values as one column per element."""
    return values.reshape(len(values), -1) if values.ndim > 1 else values[:, None]


class ScopeView(QWidget):
    """A pyqtgraph plot of one Scope block's signals, with its event instants marked."""

    def __init__(self, path: str, parent: QWidget | None = None):
        super().__init__(parent)
        self.path = path
        self.viewbox = TimeZoomViewBox()
        self.plot = pg.PlotWidget(self, background="w", viewBox=self.viewbox)
        item = self.plot.getPlotItem()
        item.setLabel("bottom", "time", units="s", color=FOREGROUND)
        style_axes(item)
        adopt_orphans(self, item)
        self.viewbox.setAutoVisible(y=True)  # y fits the visible time span
        self.legend: pg.LegendItem | None = None
        self.curves: list[pg.PlotDataItem] = []
        self.markers: list[pg.ScatterPlotItem] = []
        self.lines: list[pg.InfiniteLine] = []
        self.previous_curves: list[pg.PlotDataItem] = []
        self.time = np.zeros(0)
        self.values = np.zeros(0)
        self.events: tuple[Event, ...] = ()
        self.traces: ScopeTraces | None = None
        self.previous: tuple[np.ndarray, np.ndarray] | None = None  # (time, columns)
        self.keep_previous = False
        self._has_events = False  # the legend names the event markers only when there are
        self._previous_shown: tuple | None = None  # what _draw_previous last drew
        self.x_source: int | None = None  # XY mode: the element on the x axis
        self.cursors = CursorPair(item, self)
        self.cursors.moved.connect(self._update_readout)
        self.hover = ""
        # The cursors' table beside the plot (a bottom dock is wide and low); the value
        # under the mouse, or a hint, in the toolbar's free room.
        self.readout = QLabel(self)
        self.readout.setTextFormat(Qt.RichText)
        self.readout.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.readout.setAlignment(Qt.AlignTop | Qt.AlignLeft)
        self.readout.setToolTip("Each curve's value at the cursors C1 and C2 (drag them) and "
                                "Δ = C2 − C1; at an event instant, the value just after it")
        self.readout.setStyleSheet("QLabel { padding: 4px 6px; background: white; }")
        self.hint = QLabel(self)  # in the toolbar's free room when there is a toolbar
        self.hint.setStyleSheet("QLabel { padding: 1px 6px; color: #505050; }")
        self.hint.setToolTip("The wheel zooms time only; Ctrl or Shift with the wheel, or the "
                             "wheel over the y axis, zooms y. Drag to pan; Auto range fits "
                             "all again. Values under the mouse show here.")
        self.plot.scene().sigMouseMoved.connect(self._mouse_moved)
        self.plot.viewport().installEventFilter(self)  # the mouse leaving: no hover value
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        self.tools = self._make_tools()
        if self.tools is not None:
            layout.addWidget(self.tools)
            self.tools.add_hint(self.hint)
        row = QHBoxLayout()
        row.setSpacing(0)
        row.addWidget(self.plot, 1)
        row.addWidget(self.readout)
        layout.addLayout(row, 1)
        if self.tools is None:
            layout.addWidget(self.hint)
        self.show_title(False)
        self._update_readout()

    def show_title(self, shown: bool) -> None:
        """The scope's path above the plot: needed side by side, not under its own tab."""
        self.plot.getPlotItem().setTitle(self.path if shown else None, color=FOREGROUND,
                                         size="11pt")

    def _make_tools(self) -> ScopeTools | None:
        return ScopeTools(self)

    # ----- data -----
    def set_data(self, time: np.ndarray, values: np.ndarray, events=()) -> None:
        """Show `values` (1-D, or 2-D with one column per element) against `time`."""
        self.time, self.values, self.events = time, values, tuple(events)
        self.redraw()

    def set_traces(self, traces: ScopeTraces) -> None:
        """Name the curves (legend, y label, readouts) and give the y axis its units."""
        self.traces = traces
        self._relabel()
        if self.tools is not None:
            self.tools.refresh()

    def clear(self) -> None:
        """Forget the data (a new run is about to start); with "keep previous run" on, the
        curves shown so far stay, lighter, under the new ones."""
        if self.keep_previous and len(self.time):
            self.previous = (self.time, as_columns(self.values).copy())
        self.time, self.values, self.events = np.zeros(0), np.zeros(0), ()
        for obj in (*self.curves, *self.markers):
            obj.setData([], [])
        self._set_lines(np.zeros(0))
        self._draw_previous()
        self._update_readout()

    def data(self) -> tuple[np.ndarray, np.ndarray]:
        """(time, values) as shown."""
        return self.time, self.values

    def columns(self) -> np.ndarray:
        """The logged values, one column per element (0 columns before any data)."""
        return as_columns(self.values) if len(self.time) else np.zeros((0, 0))

    def names(self) -> list[str]:
        """One name per element: the signal labels, else `path` / `path[k]`."""
        width = max(self.columns().shape[1], len(self.curves), 1)
        traces = self.traces
        if traces is None or len(traces.labels) != width:
            traces = fallback_traces(self.path, width)
        return list(traces.labels)

    # ----- modes -----
    def set_keep_previous(self, keep: bool) -> None:
        """Keep the previous run's curves, lighter, when the next run starts."""
        self.keep_previous = keep
        if not keep:
            self.previous = None
            self._draw_previous()

    def set_xy(self, x_source: int | None) -> None:
        """Plot the other elements against element `x_source`; None: against time."""
        self.x_source = x_source
        self.hover = ""
        self.viewbox.time_zoom = x_source is None
        self.viewbox.setAutoVisible(y=x_source is None)
        if x_source is not None:
            self.cursors.hide()
        self.redraw()
        self._relabel()  # the x axis is named after the x signal
        self.viewbox.auto_range()

    def set_equal_scale(self, equal: bool) -> None:
        """Lock the aspect ratio so a unit is as long on x as on y (a circle stays round)."""
        self.viewbox.setAspectLocked(equal, ratio=1.0)
        self.viewbox.auto_range()

    def show_cursors(self, shown: bool) -> None:
        """Two cursors at a third and two thirds of the visible time span, or none."""
        if shown and self.viewbox.time_zoom:
            (lo, hi), _ = self.viewbox.viewRange()
            self.cursors.show(lo + (hi - lo) / 3, lo + 2 * (hi - lo) / 3)
        else:
            self.cursors.hide()
        self._update_readout()

    def auto_range(self) -> None:
        self.viewbox.auto_range()

    # ----- exports -----
    def visible_table(self) -> tuple[list[str], list[np.ndarray]]:
        """The visible curves inside the visible x range: header and columns (time first;
        in XY mode also the x element)."""
        columns = self.columns()
        if not len(self.time):
            return ["time"], [np.zeros(0)]
        shown = [k for curve, k in zip(self.curves, self._plotted()) if curve.isVisible()]
        names = self.names()
        keep = ([self.x_source] if self.x_source is not None else []) + shown
        x = self.time if self.x_source is None else columns[:, self.x_source]
        (lo, hi), _ = self.viewbox.viewRange()
        rows = export.visible_rows(x, (lo, hi))
        header = ["time"] + [names[k] for k in keep]
        return header, [self.time[rows]] + [columns[rows, k] for k in keep]

    def export_csv(self, path: str) -> None:
        """Write the visible curves inside the visible range as CSV."""
        header, columns = self.visible_table()
        export.write_csv(path, header, columns)

    def export_png(self, path: str, width: int = 1000) -> None:
        """Write the plot as a PNG image `width` pixels wide, atomically (a failure keeps
        the old file and raises OSError naming the file)."""
        try:
            export.write_png(self.plot.getPlotItem(), path, width)
        except OSError as exc:
            raise OSError(f"{exc} (scope {self.path})") from exc

    def export_svg(self, path: str) -> None:
        """Write the plot as SVG, atomically."""
        export.write_svg(self.plot.getPlotItem(), path)

    # ----- drawing -----
    def _width(self) -> int:
        return self.columns().shape[1] if len(self.time) else len(self.curves)

    def pairs(self, width: int) -> list[tuple[int | None, int]]:
        """The curves as (x element or None for time, y element): every element against
        time, or in XY mode every other element against the x one."""
        return [(self.x_source, k) for k in range(width) if k != self.x_source]

    def _plotted(self) -> list[int]:
        """The elements drawn as curves (their y)."""
        return [k for _, k in self.pairs(self._width())]

    def redraw(self) -> None:
        """Draw the data in the current mode."""
        time = self.time
        if not len(time):
            return
        columns = as_columns(self.values)
        if self.x_source is not None and self.x_source >= columns.shape[1]:
            self.x_source = None
        plotted = self._plotted()
        self._ensure_curves(len(plotted))
        many = len(time) > DOWNSAMPLE_ABOVE
        instants = event_instants(self.events)
        # Each event instant has two rows (left and right limit): mark the left one.
        rows = np.searchsorted(time, instants, side="left")
        inside = rows < len(time)
        instants, rows = instants[inside], rows[inside]
        for curve, marker, (j, k) in zip(self.curves, self.markers, self.pairs(columns.shape[1])):
            x = time if j is None else columns[:, j]
            curve.setDownsampling(ds=None if many else 1, auto=many, method="peak")
            curve.setData(x, columns[:, k])
            marker.setData(x[rows], columns[rows, k])
        if bool(len(instants)) != self._has_events:
            self._has_events = bool(len(instants))
            self._relabel()
        few = len(instants) <= MAX_EVENT_LINES and self.viewbox.time_zoom
        self._set_lines(instants if few else np.zeros(0))
        self._draw_previous()
        self._update_readout()

    def _ensure_curves(self, count: int) -> None:
        if len(self.curves) == count:
            return
        item = self.plot.getPlotItem()
        for obj in (*self.curves, *self.markers):
            item.removeItem(obj)
        self.curves, self.markers = [], []
        for k in range(count):
            color = COLORS[k % len(COLORS)]
            curve = item.plot(pen=pg.mkPen(color, width=1.6), antialias=True, clipToView=True)
            marker = pg.ScatterPlotItem(symbol="o", size=6, pen=pg.mkPen(color, width=1.2),
                                        brush=pg.mkBrush("w"), antialias=True)
            marker.setZValue(10)
            item.addItem(marker)
            self.curves.append(curve)
            self.markers.append(marker)
        self._relabel()
        if self.tools is not None:
            self.tools.refresh()

    def _draw_previous(self) -> None:
        """The previous run's curves, redrawn only when they or the mode change (not on
        every snapshot of a live run)."""
        shown = None
        if self.previous is not None:
            shown = (id(self.previous), tuple(self.pairs(self.previous[1].shape[1])))
        if shown == self._previous_shown:
            return
        self._previous_shown = shown
        item = self.plot.getPlotItem()
        for curve in self.previous_curves:
            item.removeItem(curve)
        self.previous_curves = []
        if self.previous is not None:
            time, columns = self.previous
            for n, (j, k) in enumerate(self.pairs(columns.shape[1])):
                x = time if j is None else columns[:, j]
                pen = pg.mkPen(lighter(COLORS[n % len(COLORS)]), width=1.6)
                # Data after adding: a clipped curve added with data asks the widget, not
                # the ViewBox, for its range (pyqtgraph 0.14).
                curve = item.plot(pen=pen, antialias=True, clipToView=True)
                curve.setData(x, columns[:, k])
                curve.setZValue(-2)
                self.previous_curves.append(curve)
        self._relabel()

    def _relabel(self) -> None:
        """Legend entries and axis labels from the signal names."""
        item = self.plot.getPlotItem()
        names = self.names()
        plotted = self._plotted()
        wanted = len(self.curves) > 1 or bool(self.previous_curves)
        if self.legend is None and wanted:
            self.legend = item.addLegend(offset=(-10, 10), labelTextColor=FOREGROUND,
                                         brush=pg.mkBrush(255, 255, 255, 220),
                                         pen=pg.mkPen("#c0c0c0"))
        if self.legend is not None:
            self.legend.clear()
            if wanted:
                for curve, k in zip(self.curves, plotted):
                    self.legend.addItem(curve, names[k] if k < len(names) else f"[{k}]")
                if self.previous_curves:
                    self.legend.addItem(self.previous_curves[0], "previous run")
                if self.markers and self._has_events:
                    self.legend.addItem(self.markers[0], "event")
                # One row while it fits: a tall legend would hide a low plot's curves.
                self.legend.setColumnCount(min(len(self.legend.items), 4))
            self.legend.setVisible(wanted)
        units = self.traces.units if self.traces is not None else ""
        left = item.getAxis("left")
        left.enableAutoSIPrefix(False)
        if self.x_source is None:
            y_name = names[0] if len(names) == 1 else self.path
            item.setLabel("bottom", "time", units="s", color=FOREGROUND)
        else:
            y_name = ", ".join(names[k] for k in plotted) if len(plotted) <= 2 else self.path
            bottom = item.getAxis("bottom")
            bottom.enableAutoSIPrefix(False)
            x_name = names[self.x_source] if self.x_source < len(names) else "x"
            item.setLabel("bottom", x_name, units=units or None, color=FOREGROUND,
                          **NO_SI_SCALING)
        item.setLabel("left", y_name, units=units or None, color=FOREGROUND, **NO_SI_SCALING)

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

    # ----- readouts -----
    def _curve_columns(self) -> list[tuple[str, np.ndarray]]:
        if not len(self.time):
            return []
        columns, names = as_columns(self.values), self.names()
        return [(names[k], columns[:, k]) for curve, k in zip(self.curves, self._plotted())
                if curve.isVisible()]

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 (Qt's name)
        if event.type() == QEvent.Leave and self.hover:
            self.hover = ""
            self._update_readout()
        return super().eventFilter(watched, event)

    def _mouse_moved(self, pos) -> None:
        if not self.viewbox.time_zoom or not self.viewbox.sceneBoundingRect().contains(pos):
            self.hover = ""
        else:
            t = self.viewbox.mapSceneToView(pos).x()
            self.hover = hover_text(t, self.time, self._curve_columns())
        self._update_readout()

    def cursor_reading(self):
        """What the cursors read now (None when they are hidden)."""
        if not self.cursors.shown:
            return None
        t1, t2 = self.cursors.times()
        return read_cursors(t1, t2, self.time, self._curve_columns())

    def _update_readout(self) -> None:
        reading = self.cursor_reading()
        self.readout.setVisible(reading is not None)
        if reading is not None:
            self.readout.setText(reading.as_html())
        hint = ("wheel: zoom time · Ctrl+wheel: zoom y · drag: pan" if self.viewbox.time_zoom
                else "wheel: zoom · drag: pan")
        self.hint.setText(self.hover or hint)
