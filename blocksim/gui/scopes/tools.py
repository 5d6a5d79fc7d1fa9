"""The small toolbar above each scope: cursors, auto range, XY mode, keep previous run and
export. It only calls the view's methods; the view does the work.
"""
from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING, Callable

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import QComboBox, QLabel, QMenu, QSizePolicy, QToolBar, QToolButton

from blocksim.gui.window import dialogs

if TYPE_CHECKING:
    from blocksim.gui.scopes.plot import ScopeView

log = logging.getLogger(__name__)


def file_stem(path: str) -> str:
    """A scope path as a file name: "sub/scope" -> "sub_scope"."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", path)


class ScopeTools(QToolBar):
    """Cursors, Auto range, XY (with the x signal, and Equal scale), Keep previous run,
    Export."""

    def __init__(self, view: "ScopeView", xy: bool = True, cursors: bool = True):
        super().__init__(view)
        self.view = view
        self.setMovable(False)
        self.setIconSize(QSize(14, 14))
        self.setToolButtonStyle(Qt.ToolButtonTextOnly)
        self.setStyleSheet("QToolBar { border: 0; spacing: 2px; padding: 0 2px; }")
        self.cursors = self.addAction("Cursors")
        self.cursors.setCheckable(True)
        self.cursors.setToolTip("Two vertical cursors: each curve's value at both and the "
                                "differences Δt, Δy (drag them)")
        self.cursors.toggled.connect(view.show_cursors)
        self.cursors.setVisible(cursors)
        self.auto_range = self.addAction("Auto range")
        self.auto_range.setToolTip("Fit all the data (after zooming with the wheel)")
        self.auto_range.triggered.connect(self._auto_range)
        self.xy = self.addAction("XY")
        self.xy.setCheckable(True)
        self.xy.setToolTip("Plot the other signals against the one chosen for x")
        self.xy.toggled.connect(self._xy_toggled)
        self.x_label = QLabel(" x:", self)
        self.x_choice = QComboBox(self)
        self.x_choice.setSizeAdjustPolicy(QComboBox.AdjustToContents)
        self.x_choice.currentIndexChanged.connect(self._x_changed)
        self._x_actions = [self.addWidget(self.x_label), self.addWidget(self.x_choice)]
        self.xy.setVisible(xy)
        self.equal = self.addAction("Equal scale")
        self.equal.setCheckable(True)
        self.equal.setToolTip("One unit as long on x as on y (phase portraits, orbits)")
        self.equal.toggled.connect(view.set_equal_scale)
        self._always_xy = not xy  # an XY graph's own view: the plot is always y against x
        self.keep = self.addAction("Keep previous run")
        self.keep.setCheckable(True)
        self.keep.setToolTip("At the next run, keep this run's curves in a lighter colour")
        self.keep.toggled.connect(view.set_keep_previous)
        menu = QMenu(self)
        self.export_csv = menu.addAction("Visible curves as CSV…")
        self.export_png = menu.addAction("Plot as PNG…")
        self.export_svg = menu.addAction("Plot as SVG…")
        # Bound methods, not lambdas: no cycle for the garbage collector (see cursors.py).
        self.export_csv.triggered.connect(self._export_csv)
        self.export_png.triggered.connect(self._export_png)
        self.export_svg.triggered.connect(self._export_svg)
        self.export_button = QToolButton(self)
        self.export_button.setText("Export")
        self.export_button.setPopupMode(QToolButton.InstantPopup)
        self.export_button.setMenu(menu)
        self.addWidget(self.export_button)
        self.refresh()

    def add_hint(self, hint: QLabel) -> None:
        """The view's hint or hover readout in the rest of the toolbar (clipped when long:
        never pushed into the toolbar's overflow menu)."""
        hint.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Preferred)
        hint.setMinimumWidth(40)
        self.addWidget(hint)

    def refresh(self) -> None:
        """Offer XY only with two or more signals; list them as x candidates."""
        names = self.view.names()
        several = len(names) >= 2
        self.xy.setEnabled(several)
        if [self.x_choice.itemText(i) for i in range(self.x_choice.count())] != names:
            self.x_choice.blockSignals(True)
            self.x_choice.clear()
            self.x_choice.addItems(names)
            chosen = self.view.x_source
            self.x_choice.setCurrentIndex(chosen if chosen is not None and chosen < len(names)
                                          else 0)
            self.x_choice.blockSignals(False)
        for action in self._x_actions:
            action.setVisible(self.xy.isChecked())
        self.equal.setVisible(self._always_xy or self.xy.isChecked())
        if not several and self.xy.isChecked():
            self.xy.setChecked(False)

    def _xy_toggled(self, on: bool) -> None:
        for action in self._x_actions:
            action.setVisible(on)
        self.equal.setVisible(on)
        if not on:
            self.equal.setChecked(False)  # against time, equal scale means nothing
        if on:
            self.cursors.setChecked(False)
        self.cursors.setEnabled(not on)
        self.view.set_xy(max(self.x_choice.currentIndex(), 0) if on else None)

    def _x_changed(self, index: int) -> None:
        if self.xy.isChecked() and index >= 0:
            self.view.set_xy(index)

    def _auto_range(self, _checked: bool = False) -> None:
        self.view.auto_range()

    def _export_csv(self, _checked: bool = False) -> None:
        self._export("csv", "CSV (*.csv)", self.view.export_csv)

    def _export_png(self, _checked: bool = False) -> None:
        self._export("png", "PNG image (*.png)", self.view.export_png)

    def _export_svg(self, _checked: bool = False) -> None:
        self._export("svg", "SVG drawing (*.svg)", self.view.export_svg)

    def _export(self, suffix: str, filters: str, write: Callable[[str], None]) -> None:
        path = dialogs.save_path(self.view, f"{file_stem(self.view.path)}.{suffix}", filters)
        if not path:
            return
        try:
            write(path)
        except OSError as exc:
            dialogs.message(self.view, "Export failed", str(exc))
            return
        log.info("exported %s of %s to %s", suffix.upper(), self.view.path, path)
