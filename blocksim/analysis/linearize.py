"""Linearization: the model's A, B, C, D at an operating point, between analysis points.

Continuous model: x' = f(x, u), y = g(x, u) differentiated at the point (`jacobian.py`),
u the values injected at the input points (added to the signal there, or replacing it
where the loop is opened), y the signals measured at the output points (as their
sources make them). The blocks' modes stay latched as the point has them, so a
saturated Saturation (or a PID held at a limit) contributes gain 0, and the notes say
which blocks were linearised in which mode.

Sampled model (one discrete rate, period T): the result is discrete-time. Its state is
(x, m) just before a sample hit; a hit maps it to (x+, m+) (`sample`), the outputs are
read just after the hit, and between hits the continuous part follows x' = f(x, m+, u)
with m+ and u held (a zero-order hold of the inputs: the analysis injects constant
values along the flow), discretised exactly by the matrix exponential of the augmented
system, as c2d(zoh) does. Discrete slots that nothing reads (held copies overwritten at
each hit, flags) are left out, as are slots no hit changes and nothing drives.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from blocksim.analysis import statespace
from blocksim.analysis.errors import AnalysisError
from blocksim.analysis.jacobian import jacobian
from blocksim.analysis.model import DEFAULT_DELAY_ORDER, AnalysisModel, finite_or_fail
from blocksim.analysis.operating_point import (OperatingPoint, modes_of, simulate_to,
                                               start_vectors)
from blocksim.compiler.compiled import CompiledModel
from blocksim.diagram.model import Diagram
from blocksim.errors import shown


def linearize(model: Diagram | CompiledModel, inputs: Sequence[str], outputs: Sequence[str],
              *, at: OperatingPoint | float | None = None, open_loops: Sequence[str] = (),
              params: Mapping[str, Any] | None = None,
              delay_order: int = DEFAULT_DELAY_ORDER, reduce: bool = True,
              use_control: bool | None = None) -> Any:
    """The linear model from `inputs` to `outputs` (analysis points: an Inport's or
    Output's id, "block.port" for a signal, "block.inport" for one branch) at `at`: an
    OperatingPoint, a time (the state a run from the initial values reaches then), or
    None (the initial values, settled as a run starts). `open_loops`: points whose
    readers see only the injected value (the loop cut there; with the same point as
    input and output, the loop transfer at it, with its sign). A python-control
    StateSpace (or `statespace.LinearModel` without python-control, or `use_control`
    False), with names; `.notes` says which blocks were linearised how. `reduce`: only
    the states on a path from an input to an output (`statespace.on_path`; False keeps
    every continuous state)."""
    inputs, outputs = _names(inputs, "inputs"), _names(outputs, "outputs")
    am = AnalysisModel(model, params, inputs=inputs, outputs=outputs, open_loops=open_loops,
                       delay_order=delay_order)
    t, x, m, z = linearization_point(am, at)
    period = am.period()
    in_slots = [am.injected[p.name] for p in am.inputs]
    out_signals = [am.measured[p.name] for p in am.outputs]
    with np.errstate(all="ignore"):
        if period is None:
            A, B, C, D, names = _continuous(am, t, x, m, z, in_slots, out_signals)
        else:
            A, B, C, D, names = _sampled(am, t, x, m, z, in_slots, out_signals, period)
    for what, matrix in (("A", A), ("B", B), ("C", C), ("D", D)):
        finite_or_fail(matrix.ravel(), f"an entry of {what}", [], am.source)
    if reduce:
        keep = statespace.on_path(A, B, C)
        A, B, C = A[np.ix_(keep, keep)], B[keep, :], C[:, keep]
        names = [names[i] for i in keep]
    return statespace.make(A, B, C, D, period or 0.0, names, inputs, outputs,
                           _notes(am, z, period), use_control)


def _names(points: Sequence[str], what: str) -> list[str]:
    if isinstance(points, str):
        points = [points]
    points = list(points)
    if not points:
        raise AnalysisError(f"linearize needs at least one point in `{what}`")
    if len(set(points)) != len(points):
        raise AnalysisError(f"`{what}` names a point twice: {', '.join(points)}")
    return points


def linearization_point(am: AnalysisModel, at: Any
                        ) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
    """(t, x, m, z) of `at` in this model, settled, the opened loops' values set."""
    if at is None or isinstance(at, OperatingPoint):
        t, x, m = start_vectors(am, at, None)
    elif isinstance(at, (int, float)) and not isinstance(at, bool):
        start = am.model.settings.start
        if not at > start:
            t, x, m = start_vectors(am, None, None)
        else:
            t, x, m = simulate_to(am, float(at))
    else:
        raise AnalysisError(f"`at` must be an OperatingPoint, a time or None, got "
                            f"{shown(type(at).__name__)}", file=am.source)
    x, m, z = am.settle(t, x, m)
    if am.opened:
        am.close_opened(t, x, m, z)
        x, m, z = am.settle(t, x, m)
    return t, x, m, z


def _continuous(am: AnalysisModel, t: float, x: np.ndarray, m: np.ndarray, z: np.ndarray,
                in_slots: list[int], out_signals: list[int]):
    states = am.state_index

    def f(v: np.ndarray) -> np.ndarray:
        return np.concatenate([am.deriv(t, v, m, z)[states],
                               am.signals(t, v, m, z)[out_signals]])

    jac, _ = jacobian(f, x, columns=states + in_slots)
    n = len(states)
    return jac[:n, :n], jac[:n, n:], jac[n:, :n], jac[n:, n:], list(am.state_names)


def _sampled(am: AnalysisModel, t: float, x: np.ndarray, m: np.ndarray, z: np.ndarray,
             in_slots: list[int], out_signals: list[int], period: float):
    """The discrete-time model over one period (module docstring)."""
    import scipy.linalg

    nx = len(x)
    slots = list(am.discrete_index)  # the m slots that are variables (no history rings)
    nv = nx + len(slots)
    v0 = np.concatenate([x, m[slots]])

    def split(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        mv = m.copy()
        mv[slots] = v[nx:]
        return v[:nx], mv

    def hit_then_read(v: np.ndarray) -> np.ndarray:
        xv, mv = split(v)
        xh, mh = am.hit(t, xv, mv, z)
        return np.concatenate([xh, mh[slots], am.signals(t, xh, mh, z)[out_signals]])

    def flow(v: np.ndarray) -> np.ndarray:
        xv, mv = split(v)
        return am.deriv(t, xv, mv, z)

    jh, _ = jacobian(hit_then_read, v0)
    xh, mh = am.hit(t, x, m, z)
    jf, _ = jacobian(flow, np.concatenate([xh, mh[slots]]))
    augmented = np.zeros((nv, nv))
    augmented[:nx, :] = jf
    step = scipy.linalg.expm(augmented * period) @ jh[:nv, :]
    read = jh[nv:, :]
    keep = list(am.state_index) + [nx + k for k in range(len(slots))]
    names = list(am.state_names) + list(am.discrete_names)
    keep, names = _pruned(step, read, keep, names, nx, in_slots)
    return (step[np.ix_(keep, keep)], step[np.ix_(keep, in_slots)],
            read[:, keep], read[:, in_slots], names)


def _pruned(step: np.ndarray, read: np.ndarray, keep: list[int], names: list[str],
            nx: int, in_slots: list[int]) -> tuple[list[int], list[str]]:
    """Without the discrete slots that do not matter between inputs and outputs: one
    that no other state and no output reads (a held copy a hit overwrites, a flag), and
    one that nothing drives (its next value is none of the others' or the inputs')."""
    keep, names = list(keep), list(names)
    changed = True
    while changed:
        changed = False
        for pos in range(len(keep) - 1, -1, -1):
            i = keep[pos]
            if i < nx:
                continue  # continuous states stay, named
            others = [j for j in keep if j != i]
            unread = not np.any(step[others, i]) and not np.any(read[:, i])
            undriven = not np.any(step[i, others]) and not np.any(step[i, in_slots])
            if unread or undriven:
                del keep[pos], names[pos]
                changed = True
    return keep, names


def _notes(am: AnalysisModel, z: np.ndarray, period: float | None) -> list[str]:
    notes = []
    types = dict(zip(am.model.block_ids, am.model.block_types))
    for path, signs in modes_of(am, z).items():
        notes.append(f"{path} ({types.get(path, '?')}): linearised in its latched mode "
                     f"(zero-crossing signs {signs})")
    for path in am.plan.delays:
        notes.append(f"{path} (TransportDelay): as its Pade approximation of order "
                     f"{am.delay_order}")
    for point in am.opened:
        notes.append(f"loop opened at {point.name}")
    if period is not None:
        notes.append(f"sampled at {period:g} s: discrete-time model; continuous states "
                     f"discretised with a zero-order hold of the inputs")
    return notes
