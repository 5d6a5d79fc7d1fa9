"""Frequency response by simulation (sine sweeps): for models that do not linearise well
(relays, quantizers, sampled loops), and to check a linearization against the model.

At each frequency w the model runs from the operating point with a sine of amplitude A
added at the input point (u = A sin(w (t - t0)), made as the integral of a cosine so that
it starts from the operating value without a jump), and the output's first harmonic is
taken by a discrete Fourier sum over whole periods, on a grid of `points` samples per
period (exact for a periodic response up to harmonic `points/2`). The response is
H(jw) = Y1 / (A e^{0}) over the last `periods` periods. The transient is removed by
waiting: the estimate over the last `periods` periods is compared with the one over the
`periods` before them, and the run is made twice as long (up to `max_periods`) until the
two agree to `settle_tolerance` (relative); `settled` says where they did.
"""
from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from blocksim.analysis.errors import AnalysisError
from blocksim.analysis.model import AnalysisModel
from blocksim.analysis.operating_point import OperatingPoint, with_initial
from blocksim.compiler.compiled import CompiledModel
from blocksim.diagram.model import Diagram
from blocksim.errors import shown


@dataclass
class FrequencyResponse:
    """H(j omega) at each frequency (rad/s), with magnitude in dB and phase in degrees
    (unwrapped), and whether each estimate settled."""

    omega: np.ndarray
    response: np.ndarray
    settled: np.ndarray
    input: str = ""
    output: str = ""

    @property
    def magnitude_db(self) -> np.ndarray:
        return 20.0 * np.log10(np.abs(self.response))

    @property
    def phase_deg(self) -> np.ndarray:
        return np.degrees(np.unwrap(np.angle(self.response)))

    def to_control(self) -> Any:
        """python-control's FrequencyResponseData."""
        import control

        return control.frd(self.response, self.omega)


def frequency_response(model: Diagram | CompiledModel, input: str, output: str,
                       frequencies: Sequence[float], *,
                       at: OperatingPoint | None = None, amplitude: float = 1e-3,
                       open_loops: Sequence[str] = (), periods: int = 2, points: int = 64,
                       settle_periods: int = 4, max_periods: int = 4096,
                       settle_tolerance: float = 1e-4, rtol: float = 1e-10,
                       atol: float = 1e-12, params: Mapping[str, Any] | None = None
                       ) -> FrequencyResponse:
    """H(jw) from `input` to `output` (analysis points, as for `linearize`) at the
    frequencies (rad/s), by simulation from `at` (default the initial values; a model
    that is not at rest there drifts, and the drift's harmonic is part of the result).
    `amplitude`: of the sine (small for a nonlinear model, large enough for a quantizer
    to see); see the module docstring for the rest. Continuous TransportDelays are
    simulated as they are (only their `linearize` is a Pade approximation)."""
    omega = np.asarray(frequencies, dtype=float).ravel()
    if not len(omega) or not np.all(np.isfinite(omega)) or np.any(omega <= 0):
        raise AnalysisError(f"frequencies must be positive and finite (rad/s), got "
                            f"{shown(list(omega[:5]))}")
    if not amplitude > 0 or periods < 1 or points < 8:
        raise AnalysisError("amplitude must be > 0, periods >= 1, points >= 8")
    # The runs simulate the model itself: its delays stay delays (delay_order None).
    am = AnalysisModel(model, params, inputs=[input], outputs=[output],
                       open_loops=open_loops, delay_order=None)
    from blocksim.analysis.linearize import linearization_point

    t0, x, m, _ = linearization_point(am, at)
    names = am.plan.excitation[input]
    probe = am.plan.measured[output]
    responses, settled = [], []
    quiet = _NoStiffness()
    engine = logging.getLogger("blocksim.engine")
    engine.addFilter(quiet)
    try:
        for w in omega:
            value, ok = _one(am, t0, x, m, w, amplitude, names, probe, periods, points,
                             settle_periods, max_periods, settle_tolerance, rtol, atol)
            responses.append(value)
            settled.append(ok)
    finally:
        engine.removeFilter(quiet)
    return FrequencyResponse(omega, np.array(responses), np.array(settled), input, output)


def _one(am: AnalysisModel, t0: float, x: np.ndarray, m: np.ndarray, w: float,
         amplitude: float, names: tuple[str, str, str], probe: str, periods: int,
         points: int, settle_periods: int, max_periods: int, tolerance: float,
         rtol: float, atol: float) -> tuple[complex, bool]:
    from blocksim.engine.simulator import Simulator

    amp, hz, phase = names
    # u = amplitude sin(w (t - t0)): the integral of amplitude w cos(w (t - t0)).
    shift = math.fmod(math.pi / 2 - w * t0, 2 * math.pi) or 2 * math.pi  # (never 0)
    model = am.model.with_params({amp: amplitude * w, hz: w / (2 * math.pi), phase: shift})
    model = with_initial(model, x, m)
    span = 2 * math.pi / w
    wait = settle_periods
    while True:
        total = wait + 2 * periods
        settings = model.settings.replaced(start=t0, stop=t0 + total * span,
                                           output_interval=span / points, rtol=rtol,
                                           atol=atol, backend="python")
        results = Simulator(model, settings).run()
        times, values = results.time, np.asarray(results[probe], dtype=float)
        end = t0 + total * span
        last = _window(times, values, end - periods * span, end, t0, w, span / points)
        prior = _window(times, values, end - 2 * periods * span, end - periods * span, t0,
                        w, span / points)
        last, prior = last / amplitude, prior / amplitude
        ok = abs(last - prior) <= tolerance * max(abs(last), 1e-300)
        if ok or total * 2 > max_periods:
            return complex(last), bool(ok)
        wait = 2 * wait + 2 * periods


class _NoStiffness(logging.Filter):
    """The runs at low frequencies last thousands of time constants, where dopri5 finds
    the model stiff: true, and no news to someone measuring a frequency response."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "looks stiff" not in record.getMessage()


def _window(times: np.ndarray, values: np.ndarray, start: float, stop: float, t0: float,
            w: float, dt: float) -> complex:
    """The first harmonic over [start, stop] (whole periods), as the complex gain of a
    sine about t0: y ~ Re(c) sin(w (t - t0)) + Im(c) cos(w (t - t0)). A smooth window (no
    event rows) by the discrete Fourier sum on the output grid; a window with events (a
    relay's jumps, a hold's steps: two rows at one time) by the exact integral of the
    rows joined by straight lines, which keeps the jumps where they happened."""
    tol = 1e-9 * dt
    inside = (times >= start - tol) & (times <= stop + tol)
    t, y = times[inside], values[inside]
    if len(t) > 1 and np.any(np.diff(t) <= tol):
        return _segments(t - t0, y, w) * 2.0 / (stop - start)
    k = np.rint((t - t0) / dt)
    on = np.abs(t - (t0 + k * dt)) <= tol + 4 * np.spacing(np.abs(t) + 1)
    on &= t < stop - tol
    tau, y = t[on] - t0, y[on]
    n = len(y)
    return complex(2.0 / n * np.sum(y * np.sin(w * tau)), 2.0 / n * np.sum(y * np.cos(w * tau)))


def _segments(tau: np.ndarray, y: np.ndarray, w: float) -> complex:
    """The integral of y sin(w tau) + i y cos(w tau) for y linear between the rows
    (segments of zero length, the jumps, contribute nothing)."""
    h = np.diff(tau)
    keep = h > 0
    a, b, h = tau[:-1][keep], tau[1:][keep], h[keep]
    y0, y1 = y[:-1][keep], y[1:][keep]
    ea, eb = np.exp(-1j * w * a), np.exp(-1j * w * b)
    flat = (ea - eb) / (1j * w)  # integral of e^{-i w tau} over the segment
    ramp = -h * eb / (1j * w) + (ea - eb) / (1j * w) ** 2  # of (tau - a) e^{-i w tau}
    total = np.sum(y0 * flat + (y1 - y0) / h * ramp)  # integral of y e^{-i w tau}
    return complex(-total.imag, total.real)  # (integral of y sin, of y cos)
