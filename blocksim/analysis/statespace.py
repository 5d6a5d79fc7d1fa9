"""The linear model `linearize` returns: a python-control StateSpace with state, input and
output names where python-control is installed (extra `blocksim[control]`), else a
`LinearModel` with the same A, B, C, D, dt and label attributes, poles() and zeros()."""
from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np


@dataclass
class LinearModel:
    """A, B, C, D (dt 0: continuous, else the sample period), with names; what
    `linearize` returns without python-control (`to_control()` converts later)."""

    A: np.ndarray
    B: np.ndarray
    C: np.ndarray
    D: np.ndarray
    dt: float = 0.0
    state_labels: list[str] = field(default_factory=list)
    input_labels: list[str] = field(default_factory=list)
    output_labels: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def poles(self) -> np.ndarray:
        return np.linalg.eigvals(self.A) if self.A.size else np.zeros(0)

    def zeros(self) -> np.ndarray:
        """Transmission zeros of a square system (the finite generalised eigenvalues of
        the Rosenbrock matrix)."""
        return transmission_zeros(self.A, self.B, self.C, self.D)

    def to_control(self) -> Any:
        return to_control(self)


def has_control() -> bool:
    return importlib.util.find_spec("control") is not None


def transmission_zeros(A: np.ndarray, B: np.ndarray, C: np.ndarray, D: np.ndarray
                       ) -> np.ndarray:
    """Finite zeros of a square system: eigenvalues s of [[A, B], [C, D]] v = s [[I, 0],
    [0, 0]] v (empty for a non-square one)."""
    import scipy.linalg

    n, m, p = A.shape[0], B.shape[1], C.shape[0]
    if m != p:
        return np.zeros(0)
    big = np.block([[A, B], [C, D]])
    eye = np.zeros_like(big)
    eye[:n, :n] = np.eye(n)
    values = scipy.linalg.eigvals(big, eye)
    return values[np.isfinite(values)]


def on_path(A: np.ndarray, B: np.ndarray, C: np.ndarray) -> list[int]:
    """The states between the inputs and the outputs, by the matrices' nonzero pattern:
    reached from an input (through B and A) and reaching an output (through A and C).
    The others cannot change the transfer from inputs to outputs (Simulink's block
    reduction): a controller's states behind an opened loop, a branch to a Scope."""
    n = A.shape[0]
    graph = A != 0.0

    def closure(start: np.ndarray, step: np.ndarray) -> np.ndarray:
        seen = start.copy()
        frontier = start.copy()
        while frontier.any():
            nxt = step[:, frontier].any(axis=1) & ~seen
            seen |= nxt
            frontier = nxt
        return seen

    reached = closure(B.any(axis=1) if B.size else np.zeros(n, bool), graph)
    reaching = closure(C.any(axis=0) if C.size else np.zeros(n, bool), graph.T)
    return [i for i in range(n) if reached[i] and reaching[i]]


def control_label(name: str) -> str:
    """A name as python-control allows it: "." (its separator of subsystem and signal)
    becomes ":" ("pid.u" -> "pid:u", the discrete slot "pi.d[1]" -> "pi:d[1]")."""
    return name.replace(".", ":")


def to_control(model: LinearModel) -> Any:
    """A python-control StateSpace of the model, names kept (`control_label`)."""
    import control

    def labels(names: Sequence[str]) -> list[str] | None:
        return [control_label(n) for n in names] or None

    return control.ss(model.A, model.B, model.C, model.D, model.dt or 0,
                      states=labels(model.state_labels), inputs=labels(model.input_labels),
                      outputs=labels(model.output_labels))


def make(A: np.ndarray, B: np.ndarray, C: np.ndarray, D: np.ndarray, dt: float,
         states: Sequence[str], inputs: Sequence[str], outputs: Sequence[str],
         notes: Sequence[str], use_control: bool | None = None) -> Any:
    """The model as python-control's StateSpace if it is installed (or as asked), else a
    LinearModel. The notes (which blocks were linearised how) go on `notes` either way."""
    model = LinearModel(np.atleast_2d(A).reshape(len(states), len(states)),
                        np.asarray(B, dtype=float).reshape(len(states), len(inputs)),
                        np.asarray(C, dtype=float).reshape(len(outputs), len(states)),
                        np.asarray(D, dtype=float).reshape(len(outputs), len(inputs)),
                        float(dt), list(states), list(inputs), list(outputs), list(notes))
    if use_control is None:
        use_control = has_control()
    if not use_control:
        return model
    sys = to_control(model)
    sys.notes = list(notes)  # (a plain attribute: python-control keeps it)
    return sys
