"""One XY graph's plot: y against x (one curve per element pair of vector inputs), from the
signal an XYGraph block logs (x's elements, then y's)."""
from __future__ import annotations

import numpy as np
from PySide6.QtWidgets import QWidget

from blocksim.gui.scopes.plot import _FOREGROUND, DOWNSAMPLE_ABOVE, ScopeView, event_instants


class XYView(ScopeView):
    """A ScopeView whose curves draw y against x; event instants are marked on them."""

    def __init__(self, path: str, parent: QWidget | None = None):
        super().__init__(path, parent)
        item = self.plot.getPlotItem()
        item.setLabel("bottom", "x", color=_FOREGROUND)
        item.setLabel("left", "y", color=_FOREGROUND)

    def set_data(self, time: np.ndarray, values: np.ndarray, events=()) -> None:
        """Show the logged (x, y) columns: values has 2n columns, x's n then y's n."""
        self.time, self.values, self.events = time, values, tuple(events)
        columns = values.reshape(len(values), -1)
        n = columns.shape[1] // 2
        self._ensure_curves(n, vector=n > 1)
        instants = self._instants(time)
        rows = np.searchsorted(time, instants, side="left")
        many = len(time) > DOWNSAMPLE_ABOVE
        for k, (curve, marker) in enumerate(zip(self.curves, self.markers)):
            curve.setDownsampling(ds=None if many else 1, auto=many, method="peak")
            curve.setData(columns[:, k], columns[:, n + k])
            marker.setData(columns[rows, k], columns[rows, n + k])
        self._set_lines(np.zeros(0))  # time has no axis here

    def curve_data(self, k: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """(x, y) of curve k as drawn."""
        x, y = self.curves[k].getData()
        return np.asarray(x), np.asarray(y)

    def _instants(self, time: np.ndarray) -> np.ndarray:
        instants = event_instants(self.events)
        return instants[np.searchsorted(time, instants, side="left") < len(time)]
