"""Whether an imported model is stiff for an explicit solver, from its Jacobian at the start.

Simulink's ode45 on a stiff model takes tiny steps and finishes; blocksim's dopri5 detects
stiffness and stops, saying to use radau or bdf. So where Simulink's variable-step solver
maps to an explicit one, the importer looks at the linearisation at the initial state (the
generated derivative function, differentiated numerically, never any code from the file):
if the fastest decaying mode would hold an explicit method to more stability-limited steps
than STEP_BUDGET over the run, it chooses radau and says why in the report.
"""
from __future__ import annotations

import logging
from typing import Any

import numpy as np

from blocksim.diagram.model import Diagram
from blocksim.errors import BlocksimError

log = logging.getLogger(__name__)

STEP_BUDGET = 50_000     # stability-limited steps of an explicit method that call for radau
STABILITY = 3.3          # dopri5's stability boundary on the negative real axis (|h lambda|)
MAX_STATES = 400         # a larger model is not linearised here (cost n derivative calls)


def fastest_mode(diagram: Diagram) -> float | None:
    """The largest decay rate -Re(lambda) of the Jacobian at the start, or None (no
    states, unset parameters, a model that does not compile or evaluate)."""
    if any(value == "" for value in diagram.parameters.values()):
        return None
    try:
        from blocksim.compiler import compile_diagram
        model = compile_diagram(diagram, None, diagram.simulation)
    except BlocksimError:
        return None
    n = len(model.x0)
    if n == 0 or n > MAX_STATES:
        return None
    deriv = model.functions["deriv"]
    t0 = diagram.simulation.start
    x0 = np.array(model.x0, dtype=float)
    z = np.zeros(len(model.zc_direction))

    def f(x: np.ndarray) -> np.ndarray:
        return np.asarray(deriv(t0, x, np.array(model.m0, dtype=float), z), dtype=float)

    try:
        with np.errstate(all="raise"):
            f0 = f(x0)
            jac = np.empty((n, n))
            for i in range(n):
                h = 1e-7 * max(1.0, abs(x0[i]))
                x = x0.copy()
                x[i] += h
                jac[:, i] = (f(x) - f0) / h
            eigenvalues = np.linalg.eigvals(jac)
    except (ArithmeticError, ValueError, TypeError, IndexError, np.linalg.LinAlgError) as exc:
        log.debug("no linearisation of %s: %s", diagram.source, exc)
        return None
    if not np.all(np.isfinite(eigenvalues)):
        return None
    return float(max(0.0, -float(np.min(eigenvalues.real))))


def choose_stiff_solver(diagram: Diagram, lines: list[str]) -> Any:
    """radau instead of an explicit variable-step solver where the model is stiff."""
    settings = diagram.simulation
    if settings.solver not in ("dopri5", "dop853"):
        return
    rate = fastest_mode(diagram)
    if rate is None:
        return
    steps = (settings.stop - settings.start) * rate / STABILITY
    if steps > STEP_BUDGET:
        settings.solver = "radau"
        lines[:] = [line for line in lines if "--solver radau" not in line]  # (done here)
        lines.append(f"radau instead: the model is stiff (a mode decaying at {rate:.3g}/s at "
                     f"the start would hold an explicit method to about {steps:.2g} steps); "
                     "Simulink's explicit solver would crawl through them")
