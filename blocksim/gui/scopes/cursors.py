"""Measuring on a scope: two vertical cursors with every curve's value at each and their
differences (Δt, Δy), and the value under the mouse.

Values are read from the logged rows by linear interpolation, as the curve is drawn. At an
event instant the results hold two rows (left and right limit); a cursor exactly there reads
the right limit, the value the signal has from that instant on.
"""
from __future__ import annotations

import html
import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QObject, Signal

CURSOR_COLORS = ("#7B1FA2", "#00838F")  # two cursors told apart, neither a curve colour


def value_at(time: np.ndarray, column: np.ndarray, t: float) -> float:
    """The curve's value at `t` (linear between rows; the right limit at an event instant;
    NaN outside the logged time)."""
    n = len(time)
    if n == 0 or not math.isfinite(t) or t < time[0] or t > time[-1]:
        return math.nan
    i = int(np.searchsorted(time, t, side="right"))
    if i >= n:
        return float(column[-1])
    t0, t1 = time[i - 1], time[i]
    if t1 == t0 or t == t0:
        return float(column[i - 1])
    w = (t - t0) / (t1 - t0)
    return float(column[i - 1] + w * (column[i] - column[i - 1]))


@dataclass(frozen=True)
class CursorReading:
    """Both cursors' times, each curve's value at them, and the differences."""

    t1: float
    t2: float
    names: tuple[str, ...]
    y1: tuple[float, ...]
    y2: tuple[float, ...]

    @property
    def dt(self) -> float:
        return self.t2 - self.t1

    @property
    def dy(self) -> tuple[float, ...]:
        return tuple(b - a for a, b in zip(self.y1, self.y2))

    def as_html(self) -> str:
        """A small table: a row for time, then one per curve; columns C1, C2 and
        Δ = C2 − C1."""
        def row(name: str, a: float, b: float, d: float, unit: str = "") -> str:
            cells = "".join(f"<td align='right'>&nbsp;&nbsp;{_num(v)}{unit}</td>"
                            for v in (a, b, d))
            return f"<tr><td>{html.escape(name)}</td>{cells}</tr>"

        head = ("<tr><th></th>" + "".join(f"<th align='right' style='color:{c}'>{h}</th>"
                                          for c, h in zip((*CURSOR_COLORS, "#303030"),
                                                          ("C1", "C2", "Δ")))
                + "</tr>")
        rows = row("t", self.t1, self.t2, self.dt, " s")
        rows += "".join(row(name, a, b, d) for name, a, b, d in zip(self.names, self.y1,
                                                                   self.y2, self.dy))
        return f"<table cellspacing='0' cellpadding='1'>{head}{rows}</table>"

def read_cursors(t1: float, t2: float, time: np.ndarray,
                 curves: Sequence[tuple[str, np.ndarray]]) -> CursorReading:
    """Every curve's value at both cursors."""
    return CursorReading(t1, t2, tuple(name for name, _ in curves),
                         tuple(value_at(time, col, t1) for _, col in curves),
                         tuple(value_at(time, col, t2) for _, col in curves))


def hover_text(t: float, time: np.ndarray, curves: Sequence[tuple[str, np.ndarray]]) -> str:
    """"t = … s · name = value · …" for the mouse's time."""
    parts = [f"t = {_num(t)} s"]
    parts += [f"{name} = {_num(value_at(time, col, t))}" for name, col in curves]
    return " · ".join(parts)


def _num(value: float) -> str:
    return "–" if not math.isfinite(value) else f"{value:.6g}"


class CursorPair(QObject):
    """Two draggable vertical lines on a plot; `moved` whenever either is dragged or set.

    It is owned by the view (a Qt parent) and listens through a bound method, not a
    lambda: nothing here waits for Python's cyclic garbage collector, which would destroy
    Qt objects at an arbitrary moment (PySide6 can deadlock when that moment is inside a
    disconnect).
    """

    moved = Signal()

    def __init__(self, item: pg.PlotItem, parent: QObject | None = None):
        super().__init__(parent)
        self.lines: list[pg.InfiniteLine] = []
        for k, color in enumerate(CURSOR_COLORS):
            line = pg.InfiniteLine(angle=90, movable=True,
                                   pen=pg.mkPen(color, width=1.5),
                                   hoverPen=pg.mkPen(color, width=3),
                                   label=f"C{k + 1}",
                                   labelOpts={"position": 0.92, "color": color,
                                              "fill": pg.mkBrush(255, 255, 255, 220)})
            line.setZValue(20)
            line.sigPositionChanged.connect(self._line_moved)
            self.lines.append(line)
        for line in self.lines:  # always on the plot (owned by it), hidden until shown
            line.setVisible(False)
            item.addItem(line, ignoreBounds=True)
        self.shown = False

    def _line_moved(self, _line) -> None:
        self.moved.emit()

    def show(self, t1: float, t2: float) -> None:
        """Put both cursors on the plot at t1 and t2."""
        self.shown = True
        for line in self.lines:
            line.setVisible(True)
        self.place(t1, t2)

    def hide(self) -> None:
        self.shown = False
        for line in self.lines:
            line.setVisible(False)

    def place(self, t1: float, t2: float) -> None:
        for line, t in zip(self.lines, (t1, t2)):
            line.blockSignals(True)
            line.setValue(float(t))
            line.blockSignals(False)
        self.moved.emit()

    def times(self) -> tuple[float, float]:
        return float(self.lines[0].value()), float(self.lines[1].value())

