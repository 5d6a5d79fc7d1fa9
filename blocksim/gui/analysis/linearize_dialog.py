"""Analysis > Linearize: the linear model between the diagram's marked points, as a Bode plot
with the stability margins, a step response, a pole-zero map and the matrices, and an export.

The diagram linearized is the document's model when the dialog asks (unsaved edits
included); Recompute takes the marks and parameters afresh. The computation runs in a worker
thread (background.AnalysisTask) while the dialog says so; a failure is one message in the
dialog, never a traceback.
"""
from __future__ import annotations

import copy
import dataclasses
import logging
import math
from typing import TYPE_CHECKING

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QComboBox, QDialog, QHBoxLayout, QLabel, QPlainTextEdit,
                               QProgressBar, QPushButton, QTabWidget, QVBoxLayout)

from blocksim.diagram.analysis_points import AnalysisPoints, analysis_points
from blocksim.gui.analysis import core, response
from blocksim.gui.analysis.background import AnalysisTask
from blocksim.gui.analysis.export import FILTER, ExportError, write_model
from blocksim.gui.analysis.plots import BodePlot, PoleZeroPlot, StepPlot
from blocksim.gui.analysis.response import LinearModel, Margins
from blocksim.gui.window import dialogs

if TYPE_CHECKING:
    from blocksim.gui.window.mainwindow import MainWindow

log = logging.getLogger(__name__)

NO_MARKS = ("Mark the signals to linearize between first: right-click a wire and choose "
            "Linear Analysis Input, and another for Linear Analysis Output.")


def missing_marks(points: AnalysisPoints) -> str | None:
    """Why the marks do not make a linearization yet, or None."""
    if not points.inputs and not points.outputs:
        return NO_MARKS
    if not points.inputs:
        return "No wire is marked as a linear analysis input (right-click a wire)."
    if not points.outputs:
        return "No wire is marked as a linear analysis output (right-click a wire)."
    return None


def loop_sign(model: LinearModel, points: AnalysisPoints) -> float:
    """-1 when the pair is a loop transfer (input and output at one point where the loop is
    opened: what comes back around a negative-feedback loop is -L), else 1."""
    here = model.inputs[0]
    return -1.0 if here == model.outputs[0] and here in points.openings else 1.0


class LinearizeDialog(QDialog):
    """The linearization of one window's diagram between its marked points."""

    def __init__(self, window: "MainWindow"):
        super().__init__(window)
        self.setObjectName("linearize-dialog")
        self.setAttribute(Qt.WA_DeleteOnClose)
        self.window_ = window
        self.result: core.Linearization | None = None
        self.margins: Margins | None = None
        self.task = AnalysisTask(self)
        self.task.finished.connect(self._computed)
        self.task.failed.connect(self._failed)

        self.at_choice = QComboBox(self)
        for key, text in core.AT.items():
            self.at_choice.addItem(text, key)
        self.pair_choice = QComboBox(self)
        self.recompute_button = QPushButton("Recompute", self)
        self.progress = QProgressBar(self)
        self.progress.setRange(0, 0)  # busy, of unknown length
        self.progress.setMaximumWidth(160)
        self.progress.hide()
        top = QHBoxLayout()
        top.addWidget(QLabel("Linearize at", self))
        top.addWidget(self.at_choice)
        top.addSpacing(16)
        top.addWidget(QLabel("Input → output", self))
        top.addWidget(self.pair_choice, 1)
        top.addWidget(self.recompute_button)
        top.addWidget(self.progress)

        self.status = QLabel(self)
        self.status.setObjectName("linearize-status")
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.bode = BodePlot(self)
        self.step = StepPlot(self)
        self.pole_zero = PoleZeroPlot(self)
        self.matrices = QPlainTextEdit(self)
        self.matrices.setReadOnly(True)
        self.matrices.setLineWrapMode(QPlainTextEdit.NoWrap)
        font = self.matrices.font()
        font.setFamily("monospace")
        font.setStyleHint(font.StyleHint.Monospace)
        self.matrices.setFont(font)
        self.tabs = QTabWidget(self)
        self.tabs.addTab(self.bode, "Bode")
        self.tabs.addTab(self.step, "Step response")
        self.tabs.addTab(self.pole_zero, "Poles and zeros")
        self.tabs.addTab(self.matrices, "Model")
        self.summary = QLabel(self)
        self.summary.setObjectName("linearize-summary")
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextSelectableByMouse)

        self.export_button = QPushButton("Export Model…", self)
        self.export_button.setToolTip("Write A, B, C, D with their names to .npz, .mat or .json")
        close = QPushButton("Close", self)
        buttons = QHBoxLayout()
        buttons.addWidget(self.export_button)
        buttons.addStretch(1)
        buttons.addWidget(close)

        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.status)
        layout.addWidget(self.tabs, 1)
        layout.addWidget(self.summary)
        layout.addLayout(buttons)
        self.resize(900, 720)

        self.recompute_button.clicked.connect(self.compute)
        self.at_choice.currentIndexChanged.connect(lambda _: self.compute())
        self.pair_choice.currentIndexChanged.connect(lambda _: self.show_pair())
        self.export_button.clicked.connect(self.export)
        close.clicked.connect(self.close)
        self._set_result(None)

    # ----- computing -----
    def compute(self) -> bool:
        """Linearize the diagram as it is now, in the background; False (and the reason in
        the dialog) if its marks do not allow it."""
        if self.task.is_running():
            return False
        diagram = self.window_.doc.diagram
        points = analysis_points(diagram)
        problem = missing_marks(points)
        if problem:
            self._failed(problem)
            return False
        at = self.at_choice.currentData()
        self._busy(True, f"Linearizing from {', '.join(points.inputs)} to "
                         f"{', '.join(points.outputs)} at {core.AT[at]}…")
        frozen = copy.deepcopy(diagram)  # here: the worker must not read a model being edited
        self.task.start(lambda: core.linearize(frozen, points, at))
        return True

    def _busy(self, on: bool, text: str = "") -> None:
        self.progress.setVisible(on)
        self.tabs.setEnabled(not on)  # greyed while the plots are out of date
        self.recompute_button.setEnabled(not on)
        self.at_choice.setEnabled(not on)
        if text:
            self.status.setText(text)

    def _computed(self, result: core.Linearization) -> None:
        self._busy(False)
        self._set_result(result)

    def _failed(self, message: str) -> None:
        self._busy(False)
        self._set_result(None)
        self.status.setText(f"<span style='color:#C00000'>Cannot linearize:</span> "
                            f"{_html(message)}")
        dialogs.message(self, "Cannot linearize", message)

    # ----- showing -----
    def _set_result(self, result: core.Linearization | None) -> None:
        self.result = result
        self.export_button.setEnabled(result is not None)
        self.pair_choice.blockSignals(True)
        self.pair_choice.clear()
        if result is not None:
            model = result.model
            for o, output in enumerate(model.outputs):
                for i, input_ in enumerate(model.inputs):
                    loop = (" (loop transfer)" if input_ == output
                            and input_ in result.points.openings else "")
                    self.pair_choice.addItem(f"{input_} → {output}{loop}", (o, i))
            kind = "continuous" if not model.discrete else f"sampled every {model.dt:g} s"
            at = f"at {core.AT[result.at]}"
            self.status.setText(f"{len(model.states)} state{'s' * (len(model.states) != 1)}, "
                                f"{kind}, {len(model.inputs)} input(s), "
                                f"{len(model.outputs)} output(s), {at}."
                                + "".join(f"<br>{_html(note)}" for note in result.notes))
            notes = "".join(f"note: {note}\n" for note in result.notes)
            self.matrices.setPlainText(notes + ("\n" if notes else "") + matrices_text(model))
        else:
            self.matrices.setPlainText("")
        self.pair_choice.setEnabled(self.pair_choice.count() > 1)
        self.pair_choice.blockSignals(False)
        self.show_pair()

    def show_pair(self) -> None:
        """Draw the chosen input-output pair in every tab and sum it up below them."""
        if self.result is None or self.pair_choice.currentData() is None:
            self.summary.setText("")
            self.margins = None
            return
        o, i = self.pair_choice.currentData()
        pair = self.result.model.pair(o, i)
        label = self.pair_choice.currentText()
        sign = loop_sign(pair, self.result.points)
        if sign < 0:  # a loop transfer point: every tab shows L = -G, what the margins judge
            pair = dataclasses.replace(pair, C=-pair.C, D=-pair.D)
            label = f"L at {pair.inputs[0]} (−G)"
        full = pair
        pair = response.minimal(full)  # without the modes this input and output do not see
        try:
            self.margins = response.margins(pair) if pair.A.size else None
        except (ValueError, ArithmeticError, np.linalg.LinAlgError):
            log.debug("no margins for %s", label, exc_info=True)
            self.margins = None
        self.bode.show_model(pair, label, self.margins)
        self.step.show_model(pair, label)
        self.pole_zero.show_model(pair)
        self.summary.setText(summary_text(pair, self.margins, sign, full))

    def model_names(self) -> tuple[list[str], list[str]]:
        """The inputs and outputs of the model shown (empty without one)."""
        if self.result is None:
            return [], []
        return list(self.result.model.inputs), list(self.result.model.outputs)

    # ----- export -----
    def export(self) -> None:
        if self.result is None:
            return
        stem = self.window_.doc.path.stem if self.window_.doc.path else "model"
        path = dialogs.save_path(self, f"{stem}_linear.npz", FILTER)
        if not path:
            return
        source = self.window_.doc.diagram.source
        try:
            write_model(self.result.model, path, self.result.notes, source, self.result.at)
        except ExportError as exc:
            dialogs.message(self, "Cannot export the model", str(exc))
            return
        self.window_.statusBar().showMessage(f"Saved the linear model to {path}", 10000)

    def closeEvent(self, event) -> None:
        try:  # a late result has nowhere to go
            self.task.finished.disconnect(self._computed)
            self.task.failed.disconnect(self._failed)
        except (RuntimeError, TypeError):  # closed before: disconnected already
            pass
        super().closeEvent(event)


def summary_text(model: LinearModel, margins: Margins | None, sign: float,
                 full: LinearModel | None = None) -> str:
    """Poles, zeros, DC gain and margins of one pair (`model`, minimal), in a few lines;
    `full` is the pair with every state of the model, to say what is hidden."""
    p, z = response.poles(model), response.zeros(model)
    hidden = ""
    if full is not None and full.A.shape[0] > model.A.shape[0]:
        count = full.A.shape[0] - model.A.shape[0]
        kind = stability(full) if stability(full) != "stable" else ""
        hidden = (f" ({count} more mode{'s' * (count != 1)} of the model "
                  f"{'are' if count != 1 else 'is'} not seen between this input and output"
                  + (f"; with them the model is {kind}" if kind and kind != stability(model)
                     else "") + ": Model tab)")
    if response.is_zero(model):
        whole = full if full is not None else model
        poles = response.poles(whole)
        return _html(f"The transfer is zero: {model.outputs[0]} does not depend on "
                     f"{model.inputs[0]} here (a block saturated in its latched mode? try "
                     f"the operating point). The model's poles: "
                     f"{_numbers(poles) if poles.size else 'none'} — {stability(whole)}")
    lines = [f"Poles: {_numbers(p) if p.size else 'none'} — {stability(model)}{hidden}",
             f"Zeros: {_numbers(z) if z.size else 'none'}"]
    gain = response.dc_gain(model)[0, 0]
    lines.append(f"{'DC gain' if not model.discrete else 'Static gain'}: {gain:.6g}")
    if margins is not None:
        loop = " of the loop transfer L = −G" if sign < 0 else ""
        gm = ("∞ (the phase never crosses −180°)" if not math.isfinite(margins.gain_margin_db)
              else f"{margins.gain_margin_db:.4g} dB at {margins.phase_crossover:.4g} rad/s")
        pm = ("∞ (the gain never crosses 0 dB)" if not math.isfinite(margins.phase_margin_deg)
              else f"{margins.phase_margin_deg:.4g}° at {margins.gain_crossover:.4g} rad/s")
        lines.append(f"Gain margin{loop}: {gm}; phase margin: {pm}")
    return "<br>".join(_html(line) for line in lines)


def stability(model: LinearModel) -> str:
    """'stable', 'marginally stable' (poles on the stability boundary, none beyond) or
    'unstable', with a relative tolerance for poles computed in floating point."""
    p = response.poles(model)
    if p.size == 0 or response.is_stable(model):
        return "stable"
    scale = max(1.0, float(np.max(np.abs(p))))
    edge = np.abs(p) - 1 if model.discrete else p.real
    return "unstable" if np.any(edge > 1e-9 * scale) else "marginally stable"


def _numbers(values: np.ndarray, limit: int = 8) -> str:
    """Up to `limit` complex numbers, smallest first; rounding noise around 0 shown as 0."""
    ordered = sorted(values, key=lambda v: (abs(v), v.imag))
    scale = max([1.0] + [abs(v) for v in ordered])
    shown = [_complex(v if abs(v) > 1e-9 * scale else 0j) for v in ordered[:limit]]
    more = len(ordered) - limit
    return ", ".join(shown) + (f" and {more} more (Model tab)" if more > 0 else "")


def _complex(v: complex) -> str:
    if abs(v.imag) <= 1e-12 * max(1.0, abs(v)):
        return f"{v.real + 0.0:.5g}"
    return f"{v.real + 0.0:.5g} {'+' if v.imag > 0 else '−'} {abs(v.imag):.5g}j"


def matrices_text(model: LinearModel) -> str:
    """A, B, C, D with their rows and columns named, and the poles, as plain text."""
    def table(name: str, matrix: np.ndarray, rows: list[str], columns: list[str]) -> str:
        if matrix.size == 0:
            return f"{name}: (empty)\n"
        width = max([12] + [len(c) + 1 for c in columns])
        left = max([len(r) for r in rows] + [1])
        head = " " * (left + 1) + "".join(f"{c:>{width}}" for c in columns)
        body = [f"{r:<{left}} " + "".join(f"{v + 0.0:>{width}.6g}" for v in row)
                for r, row in zip(rows, matrix)]
        return "\n".join([f"{name} =", head, *body]) + "\n"

    kind = "continuous" if not model.discrete else f"discrete, dt = {model.dt:g} s"
    parts = [f"{kind}: dx/dt = A x + B u, y = C x + D u" if not model.discrete else
             f"{kind}: x[k+1] = A x[k] + B u[k], y[k] = C x[k] + D u[k]",
             table("A", model.A, model.states, model.states),
             table("B", model.B, model.states, model.inputs),
             table("C", model.C, model.outputs, model.states),
             table("D", model.D, model.outputs, model.inputs),
             "poles: " + ", ".join(_complex(v) for v in response.poles(model))]
    return "\n".join(parts)


def _html(text: str) -> str:
    from html import escape

    return escape(text).replace("\n", "<br>")


def open_linearize_dialog(window: "MainWindow") -> LinearizeDialog | None:
    """Analysis > Linearize: a message if nothing is marked, else the dialog, computing."""
    problem = missing_marks(analysis_points(window.doc.diagram))
    if problem:
        dialogs.message(window, "Linearize", problem, "information")
        return None
    dialog = LinearizeDialog(window)
    window.linearize_dialog = dialog
    dialog.show()
    dialog.compute()
    return dialog
