"""Stop time and solver in the toolbar, where a user changes them between runs.

The fields show the document's simulation settings and follow every change (undo, the
Diagram panel, opening a file); an edit is checked by the same code that starts a run
(`validation.check_settings`) and becomes one `SetSimulation` undo step, so the Diagram
panel, the toolbar and Save always agree.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QComboBox, QLabel, QLineEdit, QToolBar

from blocksim.gui.document import validation
from blocksim.gui.document.commands import SetSimulation
from blocksim.gui.document.values import value_to_text
from blocksim.gui.panels.forms import mark_invalid
from blocksim.diagram.model import SOLVERS

if TYPE_CHECKING:
    from blocksim.gui.window.mainwindow import MainWindow


class SimulationFields:
    """The toolbar's `Stop [s]` field and solver choice for one window."""

    def __init__(self, window: "MainWindow", tools: QToolBar):
        self.window = window
        self.doc = window.doc
        self._showing = False  # filling the fields in: their signals are not edits
        tools.addWidget(QLabel(" Stop [s] ", tools))
        self.stop = QLineEdit(tools)
        self.stop.setObjectName("toolbar-stop-time")
        self.stop.setMaximumWidth(80)
        self.stop.setToolTip("Simulation stop time in seconds (Enter applies; undoable)")
        tools.addWidget(self.stop)
        tools.addWidget(QLabel(" Solver ", tools))
        self.solver = QComboBox(tools)
        self.solver.setObjectName("toolbar-solver")
        self.solver.addItems(SOLVERS)
        self.solver.setToolTip("Integration method (applies when chosen; undoable)")
        tools.addWidget(self.solver)
        self.stop.editingFinished.connect(self._stop_edited)
        self.solver.activated.connect(lambda _i: self._solver_chosen())
        self.doc.changed.connect(lambda _level: self.show_settings())
        self.doc.reset.connect(self.show_settings)
        self.show_settings()

    def show_settings(self) -> None:
        """Show the document's stop time and solver (a field being typed in keeps its text
        only while it differs from what was there: a change from elsewhere wins)."""
        sim = self.doc.diagram.simulation
        self._showing = True
        try:
            self.stop.setText(value_to_text(sim.stop))
            mark_invalid(self.stop, False)
            mark_invalid(self.solver, False)
            if self.solver.currentText() != sim.solver:
                self.solver.setCurrentText(sim.solver)
        finally:
            self._showing = False

    def _stop_edited(self) -> None:
        if self._showing:
            return
        text = self.stop.text().strip()
        sim = self.doc.diagram.simulation
        try:
            stop = float(text)
        except ValueError:
            self._refuse(f"stop time: '{text}' is not a number", self.stop)
            return
        if not math.isfinite(stop):
            self._refuse("stop time: must be finite", self.stop)
            return
        if stop != sim.stop:
            self._apply(sim.replaced(stop=stop), f"Set stop time to {value_to_text(stop)} s",
                        self.stop)

    def _solver_chosen(self) -> None:
        sim = self.doc.diagram.simulation
        solver = self.solver.currentText()
        if not self._showing and solver != sim.solver:
            self._apply(sim.replaced(solver=solver), f"Set solver to {solver}", self.solver)

    def _apply(self, settings, text: str, field) -> None:
        problem = validation.check_settings(settings)
        if problem:
            self._refuse(problem, field)
            return
        command = SetSimulation(self.doc, settings)
        command.setText(text)
        self.doc.push(command)

    def _refuse(self, why: str, field) -> None:
        """Say why in the status bar, outline the field, and show the settings again."""
        self.window.statusBar().showMessage(f"Not applied: {why}", 8000)
        self.show_settings()
        mark_invalid(field, True, why)
