"""Zooming a scope as an engineer reads a time plot: the wheel stretches time only, the y
range follows what is visible; Ctrl or Shift with the wheel, or the wheel over the y axis,
zooms y. In XY mode (no time axis) the wheel zooms both axes, as pyqtgraph does.
"""
from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Qt

Y_MODIFIERS = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier


class TimeZoomViewBox(pg.ViewBox):
    """A ViewBox whose plain wheel zooms the x axis only."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.time_zoom = True  # False in XY mode: both axes

    def wheelEvent(self, ev, axis=None):  # noqa: N802 (Qt's name)
        if axis is None and self.time_zoom:
            axis = 1 if ev.modifiers() & Y_MODIFIERS else 0
        super().wheelEvent(ev, axis=axis)

    def auto_range(self) -> None:
        """Fit all the data again and follow it (as after a run starts)."""
        self.enableAutoRange(axis=pg.ViewBox.XYAxes, enable=True)
        self.updateAutoRange()  # now, not at the next paint
