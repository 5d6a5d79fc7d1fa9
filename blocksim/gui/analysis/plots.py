"""The Linearize dialog's plots (pyqtgraph, on white like the scopes): Bode magnitude and phase
with the margins marked, the step response, and the pole-zero map."""
from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QVBoxLayout, QWidget

from blocksim.gui.analysis import response
from blocksim.gui.analysis.response import LinearModel, Margins
from blocksim.gui.scopes.plot import COLORS, FOREGROUND, NO_SI_SCALING, adopt_orphans, style_axes

MARGIN_COLOUR = "#C00000"


def _plot(owner: QWidget, bottom: str, left: str) -> pg.PlotWidget:
    widget = pg.PlotWidget(owner, background="w")
    item = widget.getPlotItem()
    style_axes(item)
    adopt_orphans(owner, item)
    item.setLabel("bottom", bottom, color=FOREGROUND, **NO_SI_SCALING)
    item.setLabel("left", left, color=FOREGROUND, **NO_SI_SCALING)
    for name in ("left", "bottom"):
        item.getAxis(name).enableAutoSIPrefix(False)
    return widget


class BodePlot(QWidget):
    """Magnitude (dB) over phase (degrees) against a logarithmic frequency axis, the two
    x axes linked; the crossover frequencies of the margins drawn as dashed lines."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.magnitude = _plot(self, "frequency (rad/s)", "magnitude (dB)")
        self.phase = _plot(self, "frequency (rad/s)", "phase (°)")
        for widget in (self.magnitude, self.phase):
            widget.getPlotItem().setLogMode(x=True, y=False)
        self.phase.setXLink(self.magnitude)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.magnitude, 1)
        layout.addWidget(self.phase, 1)
        self.w = np.zeros(0)
        self.curves: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # label -> (dB, degrees)

    def show_model(self, model: LinearModel, label: str, margins: Margins | None) -> None:
        for widget in (self.magnitude, self.phase):
            widget.getPlotItem().clear()
        # the pair as a title, not a legend: a legend covers the curve or the Nyquist label
        self.magnitude.getPlotItem().setTitle(label, color=FOREGROUND, size="9pt")
        self.w = response.frequency_grid(model)
        magnitude, phase = response.bode(model, self.w)
        self.curves = {label: (magnitude[0, 0], phase[0, 0])}
        pen = pg.mkPen(COLORS[0], width=2)
        finite = np.isfinite(magnitude[0, 0])
        if response.is_zero(model):  # -inf dB everywhere: nothing to draw but the reason
            finite[:] = False
            for widget in (self.magnitude, self.phase):
                widget.getPlotItem().setXRange(math.log10(self.w[0]), math.log10(self.w[-1]))
                widget.getPlotItem().setYRange(-1, 1)
            note = pg.TextItem("zero transfer: the output does not depend on the input",
                               color=MARGIN_COLOUR, anchor=(0.5, 0.5))
            note.setPos(math.log10(math.sqrt(self.w[0] * self.w[-1])), 0)
            self.magnitude.addItem(note)
            return
        self.magnitude.plot(self.w[finite], magnitude[0, 0][finite], pen=pen)
        self.phase.plot(self.w[finite], phase[0, 0][finite], pen=pen)
        if margins is not None:
            self._mark(margins, phase[0, 0])
        if model.discrete:
            nyquist = math.pi / model.dt
            for widget in (self.magnitude, self.phase):
                widget.addItem(pg.InfiniteLine(math.log10(nyquist), angle=90, pen=pg.mkPen(
                    FOREGROUND, style=pg.QtCore.Qt.PenStyle.DotLine), label="Nyquist",
                    labelOpts={"color": FOREGROUND, "position": 0.9}))
        self.magnitude.getPlotItem().enableAutoRange()
        self.phase.getPlotItem().enableAutoRange()

    def _mark(self, margins: Margins, phase: np.ndarray) -> None:
        dashed = pg.mkPen(MARGIN_COLOUR, width=1, style=pg.QtCore.Qt.PenStyle.DashLine)
        if math.isfinite(margins.gain_crossover):
            self.magnitude.addItem(pg.InfiniteLine(0.0, angle=0, pen=dashed))
            self.phase.addItem(pg.InfiniteLine(
                math.log10(margins.gain_crossover), angle=90, pen=dashed,
                label=f"PM {margins.phase_margin_deg:.3g}°",
                labelOpts={"color": MARGIN_COLOUR, "position": 0.85}))
        if math.isfinite(margins.phase_crossover):
            self.magnitude.addItem(pg.InfiniteLine(
                math.log10(margins.phase_crossover), angle=90, pen=dashed,
                label=f"GM {margins.gain_margin_db:.3g} dB",
                labelOpts={"color": MARGIN_COLOUR, "position": 0.15}))
            # the -180° line on the branch of the plotted phase that crosses it
            drawn = float(np.interp(math.log10(margins.phase_crossover), np.log10(self.w),
                                    phase))
            self.phase.addItem(pg.InfiniteLine(-180 + 360 * round((drawn + 180) / 360),
                                               angle=0, pen=dashed))


class StepPlot(QWidget):
    """The output's response to a unit step on the input, from rest."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.plot = _plot(self, "time (s)", "output")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.plot)
        self.t = np.zeros(0)
        self.y = np.zeros(0)

    def show_model(self, model: LinearModel, label: str) -> None:
        item = self.plot.getPlotItem()
        item.clear()
        self.t, y = response.step(model)
        self.y = y[0, 0]
        item.setLabel("left", f"{model.outputs[0]}", color=FOREGROUND, **NO_SI_SCALING)
        item.setTitle(f"unit step on {model.inputs[0]}", color=FOREGROUND)
        pen = pg.mkPen(COLORS[0], width=2)
        if model.discrete and len(self.t) <= 200:  # the samples, while they can be told apart
            item.plot(self.t, self.y, pen=pen, symbol="o", symbolSize=4,
                      symbolBrush=COLORS[0], symbolPen=None)
        else:
            item.plot(self.t, self.y, pen=pen)
        final = response.dc_gain(model)[0, 0]
        if math.isfinite(final) and response.is_stable(model):
            item.addItem(pg.InfiniteLine(final, angle=0, pen=pg.mkPen(
                FOREGROUND, style=pg.QtCore.Qt.PenStyle.DotLine),
                label=f"final value {final:.4g}",
                labelOpts={"color": FOREGROUND, "position": 0.9}))
        item.enableAutoRange()


class PoleZeroPlot(QWidget):
    """Poles (crosses) and zeros (circles) in the complex plane; the unit circle when the
    model is sampled."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.plot = _plot(self, "real", "imaginary")
        self.legend = self.plot.getPlotItem().addLegend(offset=(-10, 10),
                                                        labelTextColor=FOREGROUND)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.plot)
        self.poles = np.zeros(0, complex)
        self.zeros = np.zeros(0, complex)

    def show_model(self, model: LinearModel) -> None:
        item = self.plot.getPlotItem()
        item.clear()
        self.legend.clear()
        self.poles, self.zeros = response.poles(model), response.zeros(model)
        if model.discrete:
            angle = np.linspace(0, 2 * math.pi, 361)
            item.plot(np.cos(angle), np.sin(angle), pen=pg.mkPen(
                FOREGROUND, style=pg.QtCore.Qt.PenStyle.DotLine), name="unit circle")
        item.addItem(pg.InfiniteLine(0.0, angle=90, pen=pg.mkPen("#A0A0A0")))
        item.addItem(pg.InfiniteLine(0.0, angle=0, pen=pg.mkPen("#A0A0A0")))
        item.plot(self.poles.real, self.poles.imag, pen=None, symbol="x", symbolSize=12,
                  symbolPen=pg.mkPen(COLORS[1], width=2), symbolBrush=COLORS[1],
                  name=f"poles ({len(self.poles)})")
        item.plot(self.zeros.real, self.zeros.imag, pen=None, symbol="o", symbolSize=10,
                  symbolPen=pg.mkPen(COLORS[0], width=2), symbolBrush=None,
                  name=f"zeros ({len(self.zeros)})")
        # a sampled model's unit circle stays round; a continuous model's poles can lie
        # decades apart on the real axis, where equal scales would flatten the plot
        item.getViewBox().setAspectLocked(model.discrete)
        item.enableAutoRange()
