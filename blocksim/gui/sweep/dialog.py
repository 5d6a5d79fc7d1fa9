"""Simulation > Sweep…: sweep the open diagram's parameters in the background, tabulate and
plot a metric per run, and overlay a signal of the runs picked in the table or the plot.

The diagram swept is the document's model as it is when Start is pressed (unsaved edits
included; later edits do not reach the sweep). Picked runs are run again with their
signals kept (a sweep of just those rows, keep="signals"), so the sweep itself ships only
metrics, as on the command line.
"""
from __future__ import annotations

import copy
import logging
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (QDialog, QHBoxLayout, QLabel, QProgressBar, QPushButton,
                               QSplitter, QVBoxLayout, QWidget)

from blocksim.errors import BlocksimError
from blocksim.gui.sweep.background import SweepRunner
from blocksim.gui.sweep.form import SweepForm
from blocksim.gui.sweep.overlay import OverlayScope
from blocksim.gui.sweep.results import GOOD, MetricPlot, RunTable
from blocksim.gui.sweep.spec import SweepRequest, choices, run_label
from blocksim.gui.window import dialogs
from blocksim.sweeps.files import counts_line
from blocksim.sweeps.table import SweepTable

if TYPE_CHECKING:
    from blocksim.gui.window.mainwindow import MainWindow

log = logging.getLogger(__name__)

SELECTION_DELAY_MS = 250  # a drag over several rows re-runs once, at its end
MAX_OVERLAY = 12  # runs overlaid at most (the first ones picked)


class SweepDialog(QDialog):
    """The sweep of one window's diagram."""

    def __init__(self, window: "MainWindow"):
        super().__init__(window)
        self.setObjectName("sweep-dialog")
        self.window_ = window
        self.setWindowTitle(f"Sweep — {window.doc.title}")
        diagram = window.doc.diagram
        self.choices = choices(diagram)
        self.table: SweepTable | None = None
        self.request: SweepRequest | None = None
        self.swept = None  # the diagram as swept (for re-running picked runs)
        self.runner = SweepRunner(self)
        self.rerunner = SweepRunner(self)
        self._picked: list[int] = []
        self._rerunning: tuple[list[int], tuple[str, ...]] = ([], ())
        self.allow_write: set[str] = set()  # block files the user let each run write
        self.setAttribute(Qt.WA_DeleteOnClose)  # opened again: afresh, for the diagram then

        self.form = SweepForm(self.choices, diagram.simulation.resolved_backend, self)
        self.start_button = QPushButton("Start", self)
        self.cancel_button = QPushButton("Cancel", self)
        self.cancel_button.setEnabled(False)
        self.progress = QProgressBar(self)
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.message = QLabel(self.choices.problem, self)
        self.message.setObjectName("sweep-message")
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextSelectableByMouse)
        buttons = QHBoxLayout()
        buttons.addWidget(self.start_button)
        buttons.addWidget(self.cancel_button)
        buttons.addWidget(self.progress, 1)

        self.run_table = RunTable(self)
        self.metric_plot = MetricPlot(self)
        self.overlay = OverlayScope(self.choices.signals, self)
        top = QSplitter(Qt.Horizontal, self)
        top.addWidget(self.run_table)
        top.addWidget(self.metric_plot)
        top.setSizes([520, 520])
        split = QSplitter(Qt.Vertical, self)
        split.addWidget(top)
        split.addWidget(self.overlay)
        split.setSizes([400, 360])
        layout = QVBoxLayout(self)
        layout.addWidget(self.form)
        layout.addLayout(buttons)
        layout.addWidget(self.message)
        layout.addWidget(split, 1)

        self._selection_timer = QTimer(self)
        self._selection_timer.setSingleShot(True)
        self._selection_timer.setInterval(SELECTION_DELAY_MS)
        self._selection_timer.timeout.connect(self.rerun_picked)
        self.start_button.clicked.connect(self.start)
        self.cancel_button.clicked.connect(self.runner.cancel)
        self.runner.progressed.connect(self._progressed)
        self.runner.finished.connect(self._finished)
        self.runner.failed.connect(self._failed)
        self.rerunner.finished.connect(self._rerun_finished)
        self.rerunner.failed.connect(lambda text: self.overlay.status.setText(text))
        self.run_table.itemSelectionChanged.connect(self._selection_timer.start)
        self.metric_plot.pointClicked.connect(self._point_clicked)
        for button in self.findChildren(QPushButton):  # Return in a field adds, not starts
            button.setAutoDefault(False)
        if self.choices.parameters:
            self.form.add_row()
        elif not self.choices.problem:
            self.say("This diagram has no named parameters to sweep: add them in the "
                     "Diagram panel (Diagram parameters) and use their names in blocks.",
                     error=True)
        self.resize(1180, 900)

    # ----- the sweep -----
    def start(self) -> None:
        """Check the fields (the CLI's messages) and start the sweep in the background."""
        if self.runner.is_running():
            return
        try:
            request = self.form.request()
        except BlocksimError as exc:
            self.progress.setValue(0)
            self.say(str(exc), error=True)
            return
        self.request = request
        self.swept = copy.deepcopy(self.window_.doc.diagram)
        self.table = None
        self._picked = []
        self.overlay.show_runs([])
        self.overlay.status.setText("Select runs in the table or click points in the plot.")
        self.progress.setRange(0, len(request.plan))
        self.progress.setValue(0)
        self.say(f"Running {len(request.plan)} runs…")
        self._running(True)
        try:
            self.runner.start(self.swept, allow_write=sorted(self.allow_write),
                              **request.arguments())
        except Exception as exc:  # cannot even start a thread: said, never a traceback
            self._running(False)
            self.say(f"cannot start the sweep: {exc}", error=True)

    def cancel(self) -> None:
        self.runner.cancel()

    def _running(self, on: bool) -> None:
        self.start_button.setEnabled(not on)
        self.cancel_button.setEnabled(on)
        self.form.setEnabled(not on)

    def _progressed(self, table: SweepTable) -> None:
        self.progress.setValue(len(table))
        self._show(table)
        self.say(f"{len(table)} of {table.total} runs: {counts_line(table.counts())}")

    def _finished(self, table: SweepTable) -> None:
        self._running(False)
        self.progress.setRange(0, max(table.total, 1))
        self.progress.setValue(len(table))
        self._show(table)
        ended = "cancelled after" if table.interrupted else "done:"
        bad = sum(n for status, n in table.counts().items() if status not in GOOD)
        self.say(f"Sweep {ended} {len(table)} of {table.total} runs: "
                 f"{counts_line(table.counts())}", error=bool(bad))

    def _failed(self, message: str) -> None:
        self._running(False)
        self.progress.setValue(0)
        if dialogs.allowed_after_asking(self, self.runner.error, self.allow_write):
            self.start()  # again, with the files the user allowed
            return
        self.say(message, error=True)

    def _show(self, table: SweepTable) -> None:
        self.table = table
        self.run_table.show_table(table)
        self.metric_plot.show_table(table)

    def say(self, text: str, error: bool = False) -> None:
        self.message.setStyleSheet("color: #C00000;" if error else "")
        self.message.setText(text)

    # ----- picked runs: their signals overlaid -----
    def _point_clicked(self, run: int, add: bool) -> None:
        self.run_table.select_runs([run], add=add)

    def rerun_picked(self) -> None:
        """Run the runs selected in the table again, keeping their signals."""
        if self.table is None or self.runner.is_running() or self.request is None:
            return
        runs = self.run_table.selected_runs()[:MAX_OVERLAY]
        self.metric_plot.mark(runs)
        self._picked = runs
        if self.rerunner.is_running():
            if runs != self._rerunning[0]:
                self.rerunner.cancel()  # its end starts the runs picked now
            return
        if not runs:
            self.overlay.show_runs([])
            return
        names, plan = self.request.plan.names, self.request.plan
        samples = [plan.values(run) for run in runs]
        self.overlay.status.setText(f"Running {len(runs)} picked runs again…")
        self.rerunner.start(self.swept, samples=samples, keep="signals", workers=1,
                            backend=self.request.backend,
                            allow_write=sorted(self.allow_write))
        self._rerunning = (runs, names)

    def _rerun_finished(self, table: SweepTable) -> None:
        runs, names = self._rerunning
        if table.interrupted or runs != self._picked:  # the selection changed meanwhile
            self.rerun_picked()
            return
        plan = self.request.plan
        shown: list[tuple[str, Any]] = []
        for k, run in enumerate(runs):
            results = table.results.get(k)
            if results is not None:
                shown.append((run_label(names, plan.rows[run]), results))
        self.overlay.show_runs(shown)
        missing = len(runs) - len(shown)
        self.overlay.status.setText(
            f"{len(shown)} runs shown" + (f"; {missing} have no signals (failed before "
                                          f"running)" if missing else ""))

    def closeEvent(self, event: QCloseEvent) -> None:
        self.runner.wait()
        self.rerunner.wait()
        super().closeEvent(event)

    def reject(self) -> None:  # Escape
        self.runner.wait()
        self.rerunner.wait()
        super().reject()


def open_sweep_dialog(window: QWidget) -> SweepDialog:
    """Simulation > Sweep…: the window's sweep dialog, made on first use."""
    dialog = window.findChild(SweepDialog, "sweep-dialog")
    if dialog is None:
        dialog = SweepDialog(window)
    dialog.show()
    dialog.raise_()
    dialog.activateWindow()
    return dialog
