"""One XY graph's plot: y against x (one curve per element pair of vector inputs), from the
signal an XYGraph block logs (x's elements, then y's)."""
from __future__ import annotations

import numpy as np
from PySide6.QtWidgets import QWidget

from blocksim.gui.scopes import export
from blocksim.gui.scopes.plot import FOREGROUND, NO_SI_SCALING, ScopeView
from blocksim.gui.scopes.tools import ScopeTools


class XYView(ScopeView):
    """A ScopeView whose curves draw y against x; event instants are marked on them."""

    def __init__(self, path: str, parent: QWidget | None = None):
        super().__init__(path, parent)
        self.viewbox.time_zoom = False  # no time axis: the wheel zooms both
        self.viewbox.setAutoVisible(y=False)
        self._relabel()
        self._update_readout()

    def _make_tools(self) -> ScopeTools:
        return ScopeTools(self, xy=False, cursors=False)

    def pairs(self, width: int) -> list[tuple[int | None, int]]:
        """Element k of x against element k of y."""
        n = width // 2
        return [(k, n + k) for k in range(n)]

    def _relabel(self) -> None:
        super()._relabel()
        item = self.plot.getPlotItem()
        names = self.names()
        pairs = self.pairs(len(names)) if len(names) >= 2 else []
        single = len(pairs) == 1 and self.traces is not None
        x_name = names[pairs[0][0]] if single else "x"
        y_name = names[pairs[0][1]] if single else "y"
        item.setLabel("bottom", x_name, units=None, color=FOREGROUND, **NO_SI_SCALING)
        item.setLabel("left", y_name, units=None, color=FOREGROUND, **NO_SI_SCALING)

    def visible_table(self) -> tuple[list[str], list[np.ndarray]]:
        """Time and every x and y element, for the rows whose first x is visible."""
        columns = self.columns()
        if not len(self.time) or columns.shape[1] < 2:
            return ["time"], [np.zeros(0)]
        (lo, hi), _ = self.viewbox.viewRange()
        rows = export.visible_rows(columns[:, 0], (lo, hi))
        names = self.names()
        return (["time"] + names,
                [self.time[rows]] + [columns[rows, k] for k in range(columns.shape[1])])

    def curve_data(self, k: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """(x, y) of curve k as drawn."""
        x, y = self.curves[k].getData()
        return np.asarray(x), np.asarray(y)
