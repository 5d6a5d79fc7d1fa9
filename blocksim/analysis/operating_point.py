"""Operating points (trim): states, inputs and discrete states at which the model rests,
found by solving its equations (`operating_point`) or by running it until it settles
(`steady_state`).

The unknowns are the continuous states (except those held at given values), the free
top-level Inports (the model's inputs; those given in `inputs` are held) and, in a
sampled model, the discrete slots of its sampled blocks. The conditions: every state's
derivative equals its target (0 unless `derivatives` says otherwise), every given output
equals its value, and every sampled slot is its own image under a sample hit (a fixed
point: the held outputs, the integrators' sums, the "first hit" flags cleared). They are
solved by Levenberg-Marquardt (scipy's least_squares) with the blocks' modes latched;
the modes are then settled at the solution as a run would settle them at its start (the
engine's event iteration), and the equations solved again while the modes change.
Algebraic loops are solved inside the generated functions, as in a run.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from blocksim.analysis.errors import AnalysisError, OperatingPointError
from blocksim.analysis.model import AnalysisModel
from blocksim.diagram.model import Diagram
from blocksim.compiler.compiled import CompiledModel
from blocksim.errors import shown

log = logging.getLogger(__name__)

TOLERANCE = 1e-9  # largest residual of a converged operating point
MODE_PASSES = 8  # solves with modes settled again at each solution


@dataclass
class OperatingPoint:
    """Where a model rests: values by name, the residual of every condition, whether all
    hold within the tolerance, and the time (sources read it) it holds at.

    `states`: continuous states ("speed", "pid[0]"); `inputs`: top-level Inports;
    `outputs`: the given output points and every logging block's signal; `discrete`: the
    discrete slots ("pi.d[1]"); `x`: the states as a flat array in `states`' order."""

    time: float
    states: dict[str, float]
    inputs: dict[str, float]
    outputs: dict[str, float]
    discrete: dict[str, float]
    residuals: dict[str, float]
    converged: bool
    tolerance: float = TOLERANCE
    method: str = "trim"
    source: str = ""
    modes: dict[str, str] = field(default_factory=dict)
    # (block path, parameter, value) that start a run here, and the blocks with states
    # no parameter sets (`initial_values.py`)
    initial_values: list[tuple[str, str, Any]] = field(default_factory=list)
    unwritten: list[str] = field(default_factory=list)

    @property
    def x(self) -> np.ndarray:
        return np.array(list(self.states.values()), dtype=float)

    @property
    def worst(self) -> tuple[str, float]:
        """The condition with the largest residual (name, residual)."""
        if not self.residuals:
            return "", 0.0
        name = max(self.residuals, key=lambda k: abs(self.residuals[k]))
        return name, self.residuals[name]

    def report(self) -> str:
        """The values and every condition's residual, as text."""
        status = "converged" if self.converged else "NOT converged"
        lines = [f"operating point ({self.method}) of {self.source} at t = {self.time:g}: "
                 f"{status} (largest residual {abs(self.worst[1]):.3g}, tolerance "
                 f"{self.tolerance:g})"]
        for title, values in (("states", self.states), ("inputs", self.inputs),
                              ("outputs", self.outputs), ("discrete", self.discrete)):
            if values:
                lines.append(f"{title}:")
                lines += [f"  {name:<24} {value: .12g}" for name, value in values.items()]
        if self.unwritten:
            lines.append("not writable as initial values: " + ", ".join(self.unwritten))
        if self.modes:
            lines.append("modes (latched zero-crossing signs):")
            lines += [f"  {name:<24} {mode}" for name, mode in self.modes.items()]
        lines.append("conditions (residual):")
        lines += [f"  {name:<24} {value: .3g}" + ("" if abs(value) <= self.tolerance
                                                   else "   <- does not hold")
                  for name, value in self.residuals.items()]
        return "\n".join(lines)

    def initial_value_changes(self, diagram: Diagram) -> list[tuple[str, str, Any]]:
        """The block parameters that would start a run at this point, as (block path,
        parameter, value), for the blocks of `diagram` whose initial state is a parameter
        (`initial_values.py` lists them; `unwritten` names the others); nothing is
        changed: an editor applies them as undoable commands."""
        from blocksim.analysis.initial_values import present

        return present(self.initial_values, diagram)

    def apply_to(self, diagram: Diagram) -> list[tuple[str, str, Any]]:
        """Write this point as the diagram's initial values (what
        `initial_value_changes` lists) and return the changes made."""
        from blocksim.analysis.initial_values import apply

        return apply(self.initial_values, diagram)


def operating_point(model: Diagram | CompiledModel, *,
                    inputs: Mapping[str, float] | None = None,
                    outputs: Mapping[str, float] | None = None,
                    states: Mapping[str, float] | None = None,
                    derivatives: Mapping[str, float] | None = None,
                    guess: "OperatingPoint | Mapping[str, float] | None" = None,
                    time: float | None = None, params: Mapping[str, Any] | None = None,
                    tolerance: float = TOLERANCE, check: bool = True) -> OperatingPoint:
    """Trim: the point where the model rests under these conditions (module docstring).

    `inputs`: top-level Inport ids held at values (the others are free); `outputs`:
    analysis points (an Output's id, "block.port") that must take values; `states`:
    states held at values; `derivatives`: nonzero targets of states' derivatives;
    `guess`: where to start (an OperatingPoint, or values by state, input or discrete
    name; default the diagram's initial values); `time`: when (default the start time:
    the sources' values then). OperatingPointError (with `.point`) if the conditions do
    not hold within `tolerance` after solving, unless `check` is False."""
    outputs = dict(outputs or {})
    am = AnalysisModel(model, params, outputs=list(outputs))
    return _trim(am, dict(inputs or {}), outputs, dict(states or {}),
                 dict(derivatives or {}), guess, time, tolerance, check)


def _check_names(am: AnalysisModel, given: Mapping[str, float], known: list[str],
                 what: str) -> None:
    for name in given:
        if name not in known:
            listed = ", ".join(known[:12]) + (" ..." if len(known) > 12 else "")
            raise AnalysisError(f"unknown {what} '{shown(name)}' (the model's {what}s: "
                                f"{listed or 'none'})", file=am.source)


def start_vectors(am: AnalysisModel, guess: Any, time: float | None
                  ) -> tuple[float, np.ndarray, np.ndarray]:
    """(t, x, m) of a guess: an OperatingPoint, values by name, or None (the initial
    values at the start time)."""
    if isinstance(guess, OperatingPoint):
        # (a TransportDelay's Pade states, where this model simulates the delay itself)
        blocks = {b.path for b in am.blocks}
        states = {k: v for k, v in guess.states.items() if k.split("[")[0] not in blocks
                  or k in am.state_names}
        _check_names(am, states, am.state_names, "state of this operating point")
        _check_names(am, guess.inputs, list(am.plan.inports),
                     "input of this operating point")
        t = guess.time if time is None else float(time)
        x, m = am.vectors(guess.states, guess.discrete, guess.inputs)
        return t, x, m
    values = dict(guess or {})
    _check_names(am, values, am.state_names + list(am.plan.inports) + am.discrete_names,
                 "state, input or discrete slot")
    t = float(am.model.settings.start if time is None else time)
    x, m = am.vectors(values, values, {k: v for k, v in values.items()
                                       if k in am.plan.inports})
    return t, x, m


def _trim(am: AnalysisModel, inputs: dict, outputs: dict, states: dict, derivatives: dict,
          guess: Any, time: float | None, tolerance: float, check: bool) -> OperatingPoint:
    _check_names(am, inputs, list(am.plan.inports), "input (top-level Inport)")
    _check_names(am, states, am.state_names, "state")
    _check_names(am, derivatives, am.state_names, "state")
    t, x, m = start_vectors(am, guess, time)
    for name, value in inputs.items():
        x[am.injected[name]] = value
    for name, i in zip(am.state_names, am.state_index):
        if name in states:
            x[i] = states[name]
    free_x = [i for name, i in zip(am.state_names, am.state_index) if name not in states]
    free_x += [am.injected[name] for name in am.plan.inports if name not in inputs]
    sampled = _sampled_slots(am)
    if not free_x and not sampled and not inputs:
        raise AnalysisError("the model has no states, no inputs (top-level Inports) and no "
                            "sampled discrete states: it has no operating point to find",
                            file=am.source)
    targets = np.array([derivatives.get(name, 0.0) for name in am.state_names])
    out_index = [am.measured[name] for name in outputs]
    out_values = np.array(list(outputs.values()), dtype=float)
    labels = ([f"d {name}/dt" for name in am.state_names]
              + [f"output {name}" for name in outputs]
              + [f"{am.discrete_names[am.discrete_index.index(i)]} (fixed point)"
                 for i in sampled])

    def unpack(u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        xu, mu = x.copy(), m.copy()
        xu[free_x] = u[:len(free_x)]
        mu[sampled] = u[len(free_x):]
        return xu, mu

    def residual(u: np.ndarray, z: np.ndarray) -> np.ndarray:
        xu, mu = unpack(u)
        parts = [am.deriv(t, xu, mu, z)[am.state_index] - targets]
        if out_index:
            parts.append(am.signals(t, xu, mu, z)[out_index] - out_values)
        if sampled:
            parts.append(am.hit(t, xu, mu, z)[1][sampled] - mu[sampled])
        return np.concatenate(parts)

    x, m, z = am.settle(t, x, m)
    u = np.concatenate([x[free_x], m[sampled]])
    for _ in range(MODE_PASSES):
        u = _solve(lambda v: residual(v, z), u)
        x, m = unpack(u)
        x2, m2, z2 = am.settle(t, x, m)
        same = np.array_equal(z2, z)
        x, m, z = x2, m2, z2
        u = np.concatenate([x[free_x], m[sampled]])
        if same:
            break
    res = residual(u, z)
    point = _point(am, t, x, m, z, dict(zip(labels, res.tolist())), tolerance, outputs)
    if check and not point.converged:
        name, value = point.worst
        raise OperatingPointError(
            f"no operating point found: the condition '{name}' is off by {value:.3g} "
            f"(tolerance {tolerance:g}); other residuals: " + ", ".join(
                f"{k} {v:.3g}" for k, v in point.residuals.items() if k != name)[:400],
            point, file=am.source)
    return point


def _sampled_slots(am: AnalysisModel) -> list[int]:
    """The discrete slots of the sampled blocks (their rate a period): unknowns of a
    fixed point; other slots are modes and flags the event iteration sets."""
    slots = []
    rates = am.model.block_rates
    for k, b in enumerate(am.blocks):
        if len(b.discrete) and k < len(rates) and rates[k].discrete:
            slots += [i for i in b.discrete if i in set(am.discrete_index)]
    return slots


def _solve(f, u0: np.ndarray) -> np.ndarray:
    """Levenberg-Marquardt (trust region for an underdetermined system) from u0, with
    central-difference Jacobians."""
    import scipy.optimize

    if not len(u0):
        return u0
    r0 = f(u0)
    if not np.all(np.isfinite(r0)):
        return u0

    def jac(u: np.ndarray) -> np.ndarray:
        cols = []
        for j in range(len(u)):
            h = 1e-6 * max(1.0, abs(u[j]))
            up, down = u.copy(), u.copy()
            up[j] += h
            down[j] -= h
            cols.append((f(up) - f(down)) / (up[j] - down[j]))
        return np.array(cols).T

    method = "lm" if len(r0) >= len(u0) else "trf"
    with np.errstate(all="ignore"):
        try:
            sol = scipy.optimize.least_squares(f, u0, jac=jac, method=method, xtol=1e-15,
                                               ftol=1e-15, gtol=1e-15,
                                               max_nfev=200 * (len(u0) + 1))
        except (ArithmeticError, ValueError, AnalysisError) as exc:
            log.debug("operating point solver stopped: %s", exc)
            return u0
    return sol.x if np.all(np.isfinite(sol.x)) else u0


def _point(am: AnalysisModel, t: float, x: np.ndarray, m: np.ndarray, z: np.ndarray,
           residuals: dict[str, float], tolerance: float, outputs: Mapping[str, float],
           method: str = "trim") -> OperatingPoint:
    signals = am.signals(t, x, m, z)
    out = {name: float(signals[am.measured[name]]) for name in outputs}
    for name, indices in am.logged.items():
        if len(indices) == 1:
            out.setdefault(name, float(signals[indices[0]]))
        else:
            for k, i in enumerate(indices):
                out.setdefault(f"{name}[{k}]", float(signals[i]))
    from blocksim.analysis.initial_values import candidates

    initial, unwritten = candidates(am, x, m)
    converged = all(np.isfinite(v) and abs(v) <= tolerance
                                        for v in residuals.values())
    return OperatingPoint(
        time=float(t),
        states={n: float(x[i]) for n, i in zip(am.state_names, am.state_index)},
        inputs=am.inport_values(x),
        outputs=out,
        discrete={n: float(m[i]) for n, i in zip(am.discrete_names, am.discrete_index)},
        residuals=residuals, converged=converged, tolerance=tolerance, method=method,
        source=am.source, modes=modes_of(am, z), initial_values=initial,
        unwritten=unwritten)


def modes_of(am: AnalysisModel, z: np.ndarray) -> dict[str, str]:
    """Each block with zero crossings: its latched signs ("+-")."""
    found: dict[str, str] = {}
    model = am.model
    for i, owner in enumerate(model.zc_owner):
        path = model.block_ids[owner]
        if path.split("/")[-1].startswith("__lin_"):
            continue
        sign = "+" if z[i] > 0 else "-" if z[i] < 0 else "0"
        found[path] = found.get(path, "") + sign
    return found


def steady_state(model: Diagram | CompiledModel, *, stop_time: float | None = None,
                 params: Mapping[str, Any] | None = None, tolerance: float = 1e-8,
                 check: bool = True) -> OperatingPoint:
    """Steady state by simulation: run the model (from its initial values, with its
    sources) to `stop_time` (default the diagram's stop time) and take where it is; the
    residuals are the states' derivatives there (and, sampled, how far a hit moves the
    discrete slots). OperatingPointError if they exceed `tolerance`, unless `check` is
    False (a model that has not settled yet, or never does)."""
    am = AnalysisModel(model, params, delay_order=None)  # delays simulated as they are
    t, x, m = simulate_to(am, stop_time)
    x, m, z = am.settle(t, x, m)
    res = dict(zip([f"d {n}/dt" for n in am.state_names],
                   am.deriv(t, x, m, z)[am.state_index].tolist()))
    sampled = _sampled_slots(am)
    if sampled:
        moved = am.hit(t, x, m, z)[1][sampled] - m[sampled]
        names = [am.discrete_names[am.discrete_index.index(i)] for i in sampled]
        res.update({f"{n} (fixed point)": float(v) for n, v in zip(names, moved)})
    point = _point(am, t, x, m, z, res, tolerance, {}, method="simulation")
    if not res:
        point.converged = True
    if check and not point.converged:
        name, value = point.worst
        raise OperatingPointError(f"the model has not settled by t = {t:g}: '{name}' is "
                                  f"{value:.3g} (tolerance {tolerance:g}); run longer "
                                  f"(stop_time) or trim it (operating_point)", point,
                                  file=am.source)
    return point


def simulate_to(am: AnalysisModel, stop_time: float | None,
                x0: np.ndarray | None = None, m0: np.ndarray | None = None
                ) -> tuple[float, np.ndarray, np.ndarray]:
    """(t, x, m) at the end of a run of the analysis model to `stop_time`."""
    from blocksim.engine.simulator import Simulator

    settings = am.model.settings
    stop = settings.stop if stop_time is None else float(stop_time)
    settings = settings.replaced(stop=stop, backend="python")
    model = with_initial(am.model, x0, m0)
    sim = Simulator(model, settings)
    sim.run()
    st = sim._state  # the run's last state (the engine's RunState)
    return float(st.t), st.x.copy(), st.m.copy()


def with_initial(model: CompiledModel, x0: np.ndarray | None, m0: np.ndarray | None
                 ) -> CompiledModel:
    """The model starting from other values (nothing compiled again)."""
    from dataclasses import replace

    if x0 is None and m0 is None:
        return model
    x = np.array(model.x0 if x0 is None else x0, dtype=float)
    m = np.array(model.m0 if m0 is None else m0, dtype=float)
    x.flags.writeable = False
    m.flags.writeable = False
    return replace(model, x0=x, m0=m, derived={})
