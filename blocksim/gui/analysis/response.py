"""What the Linearize dialog shows of a linear model, on top of the library's responses
without python-control (blocksim.analysis.response: frequency response, step, margins):
which frequencies and how long a step to show, the Bode phase's starting branch, poles,
transmission zeros, the minimal realization of one input-output pair, and whether its
transfer is zero.

A model is continuous (dt == 0) or sampled with period dt (frequency response on the unit
circle, z = exp(j w dt), up to the Nyquist frequency; step response at the sample instants).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from blocksim.analysis import response as library
from blocksim.analysis.response import Margins
from blocksim.analysis.statespace import transmission_zeros

FREQUENCIES = 600  # points of the Bode plot
STEP_POINTS = 600  # samples of a continuous step response


@dataclass
class LinearModel:
    """A, B, C, D with names and a sample period (0: continuous)."""

    A: np.ndarray
    B: np.ndarray
    C: np.ndarray
    D: np.ndarray
    dt: float = 0.0
    states: list[str] = field(default_factory=list)
    inputs: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)

    @classmethod
    def from_system(cls, system: Any) -> "LinearModel":
        """From a python-control StateSpace or any object with A, B, C, D (and optionally
        dt and state, input and output names)."""
        D = np.atleast_2d(np.asarray(system.D, dtype=float))
        n_out, n_in = D.shape
        A = np.asarray(system.A, dtype=float)
        n = A.shape[0] if A.ndim == 2 else math.isqrt(A.size)
        B = np.asarray(system.B, dtype=float).reshape(n, n_in)
        C = np.asarray(system.C, dtype=float).reshape(n_out, n)
        dt = getattr(system, "dt", 0.0)
        dt = 0.0 if dt is None or dt is False else (1.0 if dt is True else float(dt))
        return cls(A.reshape(n, n), B, C, D, dt,
                   _names(system, ("state_labels", "states", "state_names"), n, "x"),
                   _names(system, ("input_labels", "inputs", "input_names"), n_in, "u"),
                   _names(system, ("output_labels", "outputs", "output_names"), n_out, "y"))

    @property
    def discrete(self) -> bool:
        return self.dt > 0

    def pair(self, output: int, input: int) -> "LinearModel":
        """The single-input single-output model from input `input` to output `output`."""
        return LinearModel(self.A, self.B[:, [input]], self.C[[output], :],
                           self.D[[output]][:, [input]], self.dt, list(self.states),
                           [self.inputs[input]], [self.outputs[output]])


def _names(system: Any, attributes: tuple[str, ...], count: int, stem: str) -> list[str]:
    for attribute in attributes:
        names = getattr(system, attribute, None)
        if isinstance(names, (list, tuple)) and len(names) == count \
                and all(isinstance(n, str) for n in names):
            return list(names)
    return [f"{stem}[{i}]" for i in range(count)]


def minimal(model: LinearModel, tolerance: float = 1e-10) -> LinearModel:
    """The same transfer with only the states the inputs reach and the outputs see (an
    orthogonal staircase: reachable subspace, then its observable part). A loop opened at
    the input leaves the controller's states in the model, driven by the plant but unseen
    at its output; they would put poles where the transfer has none (a DC gain of inf)."""
    V = _reachable(model.A, model.B, tolerance)
    A, B, C = V.T @ model.A @ V, V.T @ model.B, model.C @ V
    W = _reachable(A.T, C.T, tolerance)
    return LinearModel(W.T @ A @ W, W.T @ B, C @ W, model.D.copy(), model.dt,
                       [f"z[{k}]" for k in range(W.shape[1])], list(model.inputs),
                       list(model.outputs))


def _reachable(A: np.ndarray, B: np.ndarray, tolerance: float) -> np.ndarray:
    """An orthonormal basis of the subspace B, AB, A²B, ... span (columns)."""
    n = A.shape[0]
    basis = np.zeros((n, 0))
    block = B
    floor = tolerance * max(np.linalg.norm(B, 2) if B.size else 0.0, 1e-300)
    for _ in range(n):
        for _ in range(2):  # twice: orthogonal to working precision
            block = block - basis @ (basis.T @ block)
        if block.size == 0:
            break
        u, sv, _ = np.linalg.svd(block, full_matrices=False)
        new = u[:, sv > floor]
        if new.shape[1] == 0:
            break
        basis = np.hstack([basis, new])
        if basis.shape[1] >= n:
            break
        block = A @ new
        floor = tolerance * max(np.linalg.norm(A, 2), 1e-300)
    return basis


def poles(model: LinearModel) -> np.ndarray:
    return np.linalg.eigvals(model.A) if model.A.size else np.zeros(0, complex)


def relative_degree(model: LinearModel) -> int | None:
    """How many integrations separate a single-input single-output pair's output from its
    input: 0 with a direct feedthrough, else the first k with C A^(k-1) B not negligible
    (Markov parameters, scaled by the size of A); None when every one is negligible, an
    identically zero transfer."""
    scale = max(1.0, float(np.abs(model.A).max(initial=0.0)))
    size = (np.abs(model.B).max(initial=0.0) * np.abs(model.C).max(initial=0.0)
            + np.abs(model.D).max(initial=0.0))
    if size == 0.0:
        return None
    if np.abs(model.D).max(initial=0.0) > 1e-12 * size:
        return 0
    term = model.B  # C A^(k-1) B / |A|^(k-1): rounding makes it about 1e-16 |B| |C|
    for k in range(1, model.A.shape[0] + 1):
        if np.abs(model.C @ term).max(initial=0.0) > 1e-12 * size:
            return k
        term = model.A @ term / scale
    return None


def is_zero(model: LinearModel) -> bool:
    """Whether the transfer is identically zero: the output does not depend on the input,
    say through a saturated block in its latched mode."""
    return relative_degree(model) is None


def zeros(model: LinearModel) -> np.ndarray:
    """Transmission zeros of a single-input single-output pair (minimal): the finite
    generalized eigenvalues of its Rosenbrock pencil (statespace.transmission_zeros), as
    many as it has (states minus relative degree), the smallest; the pencil's others are
    rounding images of the zeros at infinity. None for an identically zero transfer."""
    degree = relative_degree(model)
    count = model.A.shape[0] - (degree or 0)
    if degree is None or count <= 0:
        return np.zeros(0, complex)
    values = transmission_zeros(model.A, model.B, model.C, model.D)
    return np.asarray(sorted(values, key=abs)[:count], dtype=complex)


def evaluate(model: LinearModel, w: np.ndarray) -> np.ndarray:
    """The frequency response at angular frequencies `w` [rad/s]: shape (outputs, inputs, w);
    inf at a frequency that is exactly a pole (an integrator's DC gain)."""
    w = np.atleast_1d(np.asarray(w, dtype=float))
    with np.errstate(all="ignore"):
        try:
            return library.frequency(model, w)
        except np.linalg.LinAlgError:  # on a pole: one frequency at a time
            out = np.full(model.D.shape + (len(w),), complex(np.inf))
            for k in range(len(w)):
                try:
                    out[:, :, k] = library.frequency(model, w[k:k + 1])[:, :, 0]
                except np.linalg.LinAlgError:
                    pass
            return out


def frequency_grid(model: LinearModel, points: int = FREQUENCIES) -> np.ndarray:
    """Log-spaced frequencies two decades either side of the model's poles and zeros
    (0.01 to 100 rad/s when it has none); a sampled model stops at its Nyquist frequency."""
    corners = np.abs(np.concatenate([poles(model), zeros(model)]))
    if model.discrete:  # where the poles and zeros sit as continuous frequencies
        with np.errstate(divide="ignore"):
            corners = np.abs(np.log(np.concatenate([poles(model), zeros(model)])
                                    .astype(complex))) / model.dt
    corners = corners[np.isfinite(corners) & (corners > 1e-12)]
    low = float(corners.min()) / 100 if corners.size else 0.01
    high = float(corners.max()) * 100 if corners.size else 100.0
    if model.discrete:
        high = math.pi / model.dt
        low = min(low, high / 1e3)
    return np.logspace(math.log10(low), math.log10(high), points)


def bode(model: LinearModel, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Magnitude in dB and unwrapped phase in degrees of each pair, shape (outputs, inputs, w)."""
    h = evaluate(model, w)
    with np.errstate(divide="ignore"):
        magnitude = 20 * np.log10(np.abs(h))
    phase = np.degrees(np.unwrap(np.angle(h), axis=-1))
    # start the phase in (-270°, 90°] at the lowest frequency: lags and integrators start
    # at 0°, -90°, -180°, a differentiator at 90°, and a negative gain (a loop transfer -L)
    # at -180°, where the phase margin is read
    first = phase[..., :1]
    phase = phase - 360 * np.ceil((first - 90) / 360)
    return magnitude, phase


def step(model: LinearModel, stop: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The response of each output to a unit step on each input from rest: times and an
    array (outputs, inputs, times). Exact at the points (zero-order hold of a constant).
    Without `stop`, a stable model is shown until it has settled within 2 % of its final
    value (doubling the span from `settle_time`, at most 16 times longer)."""
    if stop is None:
        stop = settle_time(model)
        final = dc_gain(model)
        for _ in range(4):
            t, y = step(model, stop)
            spread = np.maximum(np.ptp(y, axis=-1), np.abs(final))
            if not is_stable(model) or np.all(np.abs(y[..., -1] - final) <= 0.02 * spread):
                return t, y
            stop *= 2
    if model.discrete:
        count = int(min(max(math.ceil(stop / model.dt), 10), 20000)) + 1
        t = np.arange(count) * model.dt
    else:
        t = np.linspace(0.0, stop, STEP_POINTS)
    y = np.stack([library.step(model, t, input=i) for i in range(model.B.shape[1])], axis=1)
    return t, y


def is_stable(model: LinearModel) -> bool:
    """Every pole in the open left half-plane (inside the unit circle when sampled)."""
    p = poles(model)
    return bool(np.all(np.abs(p) < 1)) if model.discrete else bool(np.all(p.real < 0))


def settle_time(model: LinearModel) -> float:
    """How long to show a step response at first: seven time constants of the slowest
    stable pole (ten seconds with no usable pole, or a hundred samples)."""
    p = poles(model)
    if model.discrete:
        p = np.log(p[np.abs(p) > 1e-12].astype(complex)) / model.dt
    decay = -p.real[p.real < -1e-9]
    if decay.size:
        return float(min(7.0 / decay.min(), 1e4 * 7.0 / decay.max()))
    return 100 * model.dt if model.discrete else 10.0


def margins(model: LinearModel) -> Margins | None:
    """The library's stability margins of a single-input single-output loop transfer
    (unit negative feedback); None for a zero transfer, which has none."""
    if is_zero(model):
        return None
    with np.errstate(all="ignore"):
        return library.margins(model)


def dc_gain(model: LinearModel) -> np.ndarray:
    """G(0) (G(1) when sampled); inf where a pole sits there, to rounding (an integrator
    after a change of coordinates is a pole of 1e-13, not 0)."""
    p = poles(model)
    scale = max(1.0, float(np.max(np.abs(p), initial=1.0)))
    at = 1.0 if model.discrete else 0.0
    if np.any(np.abs(p - at) <= 1e-9 * scale):
        return np.full(model.D.shape, np.inf)
    return evaluate(model, np.array([0.0]))[:, :, 0].real
