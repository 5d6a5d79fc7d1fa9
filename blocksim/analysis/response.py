"""Responses of a linear model without python-control: frequency response, Bode data,
step response and stability margins of what `linearize` returns (a python-control
StateSpace or a `LinearModel`), so that the editor's analysis dialogs need only numpy and
scipy (python-control, where installed, gives the same: `sys(s)`, `bode_plot`,
`step_response`, `stability_margins`)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


def matrices(sys: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float]:
    """(A, B, C, D, dt) of a StateSpace or LinearModel; dt 0 for continuous time."""
    dt = getattr(sys, "dt", 0.0)
    dt = 0.0 if dt in (None, False, True) else float(dt)  # python-control's True: unspecified
    return (np.atleast_2d(np.asarray(sys.A, dtype=float)), np.asarray(sys.B, dtype=float),
            np.asarray(sys.C, dtype=float), np.asarray(sys.D, dtype=float), dt)


def frequency(sys: Any, omega: np.ndarray) -> np.ndarray:
    """H(jw) (continuous) or H(e^{jwT}) (discrete) at each w (rad/s): shape (outputs,
    inputs, frequencies)."""
    A, B, C, D, dt = matrices(sys)
    omega = np.asarray(omega, dtype=float).ravel()
    points = np.exp(1j * omega * dt) if dt else 1j * omega
    n = A.shape[0] if A.size else 0
    out = np.empty((C.shape[0], B.shape[1], len(omega)), dtype=complex)
    for k, s in enumerate(points):
        if n:
            out[:, :, k] = C @ np.linalg.solve(s * np.eye(n) - A, B) + D
        else:
            out[:, :, k] = D
    return out


def bode(sys: Any, omega: np.ndarray, output: int = 0, input: int = 0
         ) -> tuple[np.ndarray, np.ndarray]:
    """(magnitude in dB, phase in degrees, unwrapped) from one input to one output."""
    h = frequency(sys, omega)[output, input]
    return 20.0 * np.log10(np.abs(h)), np.degrees(np.unwrap(np.angle(h)))


def step(sys: Any, t: np.ndarray, input: int = 0) -> np.ndarray:
    """The outputs' response to a unit step of one input at t[0] (t uniform), exact at the
    grid points: (outputs, len(t)). A discrete model steps at its own period (t's spacing
    is then ignored: sample k of the result is the k-th hit)."""
    import scipy.linalg

    A, B, C, D, dt = matrices(sys)
    t = np.asarray(t, dtype=float).ravel()
    n, b, d = A.shape[0] if A.size else 0, B[:, input], D[:, input]
    y = np.empty((C.shape[0], len(t)))
    if n == 0:
        y[:] = d[:, None]
        return y
    if dt:
        phi, gamma = A, b
    else:
        h = float(t[1] - t[0]) if len(t) > 1 else 0.0
        big = np.zeros((n + 1, n + 1))
        big[:n, :n], big[:n, n] = A, b
        e = scipy.linalg.expm(big * h)
        phi, gamma = e[:n, :n], e[:n, n]
    x = np.zeros(n)
    for k in range(len(t)):
        y[:, k] = C @ x + d
        x = phi @ x + gamma
    return y


@dataclass
class Margins:
    """Gain margin (dB, at the phase crossover w180) and phase margin (degrees, at the gain
    crossover wc) of a loop transfer L (negative feedback: 1 + L); inf where the
    crossover does not happen in the searched band."""

    gain_margin_db: float
    phase_margin_deg: float
    phase_crossover: float
    gain_crossover: float


def margins(loop: Any, output: int = 0, input: int = 0, omega: np.ndarray | None = None
            ) -> Margins:
    """Stability margins of a loop transfer, found on a log grid (default 1e-3 to 1e4
    times the poles' range, 4000 points; up to pi/T for a discrete model) and refined by
    interpolation between grid points."""
    A, _, _, _, dt = matrices(loop)
    if omega is None:
        poles = np.abs(np.linalg.eigvals(A)) if A.size else np.ones(1)
        poles = poles[poles > 0] if np.any(poles > 0) else np.ones(1)
        if dt:
            poles = np.abs(np.log(np.maximum(poles, 1e-300))) / dt
            poles = poles[poles > 0] if np.any(poles > 0) else np.array([1.0 / dt])
        low, high = np.min(poles) * 1e-3, np.max(poles) * 1e4
        if dt:
            high = min(high, np.pi / dt * (1 - 1e-9))
        omega = np.logspace(np.log10(low), np.log10(high), 4000)
    mag, phase = bode(loop, omega, output, input)
    gm, w180 = np.inf, np.nan
    pm, wc = np.inf, np.nan
    # phase crossings of -180 (mod 360)
    wrapped = (phase + 180.0) / 360.0
    cross = np.flatnonzero(np.floor(wrapped[:-1]) != np.floor(wrapped[1:]))
    for i in cross:
        level = np.round(max(wrapped[i], wrapped[i + 1])) * 360.0 - 180.0
        f = (level - phase[i]) / (phase[i + 1] - phase[i])
        w = np.exp(np.log(omega[i]) + f * (np.log(omega[i + 1]) - np.log(omega[i])))
        g = -(mag[i] + f * (mag[i + 1] - mag[i]))
        if abs(g) < abs(gm):
            gm, w180 = float(g), float(w)
    cross = np.flatnonzero(np.sign(mag[:-1]) != np.sign(mag[1:]))
    for i in cross:
        f = -mag[i] / (mag[i + 1] - mag[i])
        w = np.exp(np.log(omega[i]) + f * (np.log(omega[i + 1]) - np.log(omega[i])))
        p = phase[i] + f * (phase[i + 1] - phase[i])
        margin = float((p + 180.0 + 180.0) % 360.0 - 180.0)
        if abs(margin) < abs(pm):
            pm, wc = margin, float(w)
    return Margins(gm, pm, w180, wc)
