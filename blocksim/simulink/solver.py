"""Simulink's solver settings onto blocksim's: stop time, solver, tolerances, fixed step.

ode45 -> dopri5; ode23/ode113/VariableStepAuto -> dopri5; ode15s/ode23s/ode23t/ode23tb ->
radau (stiff; blocksim's bdf is also stiff, radau is the closer to ode23tb's implicit RK);
ode1 -> euler and ode4 -> rk4 with the fixed step; other fixed-step solvers (ode2, ode3,
ode5, ode8) -> rk4 with the same step (noted). 'auto' tolerances take Simulink's rules:
AbsTol auto is 1e-6 (its initial value; Simulink then adapts it per state), FixedStep
auto is (stop - start) / 50."""
from __future__ import annotations

import math
from typing import Any

from blocksim.diagram.model import SimulationSettings
from blocksim.simulink.mexpr import Untranslatable, translate

_VARIABLE = {"ode45": "dopri5", "ode23": "dopri5", "ode113": "dop853", "ode15s": "radau",
             "ode23s": "radau", "ode23t": "radau", "ode23tb": "radau", "daessc": "radau",
             "odeN": "dopri5", "VariableStepAuto": "dopri5", "VariableStepDiscrete": "dopri5"}
_FIXED = {"ode1": "euler", "ode4": "rk4", "ode2": "rk4", "ode3": "rk4", "ode5": "rk4",
          "ode8": "rk4", "ode14x": "rk4", "ode1be": "euler", "FixedStepAuto": "rk4",
          "FixedStepDiscrete": "rk4"}


def _number(text: str, workspace: dict[str, Any]) -> float | None:
    from blocksim.expressions.language import evaluate
    from blocksim.errors import ExpressionError
    try:
        t = translate(text)
        names = {n: workspace[n] for n in t.names if n in workspace}
        if set(t.names) - set(names):
            return None
        value = float(evaluate(t.text, {k: evaluate(v) if isinstance(v, str) else
                                        _as_array(v) for k, v in names.items()}))
    except (Untranslatable, ExpressionError, TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def _as_array(value: Any) -> Any:
    import numpy as np
    return np.asarray(value, dtype=float) if isinstance(value, list) else float(value)


def map_solver(config: dict[str, str], workspace: dict[str, Any], lines: list[str],
               sample_times: list[str] = ()) -> SimulationSettings:
    """blocksim's settings for Simulink's; `lines` gets one line per choice made."""
    settings = SimulationSettings()
    start = _number(config.get("StartTime", "0.0"), workspace)
    stop = _number(config.get("StopTime", "10.0"), workspace)
    if start is not None:
        settings.start = start
    if stop is None:
        lines.append(f"stop time `{config.get('StopTime')}` is not a number: 10 s used "
                     "(--stop-time on run)")
        stop = settings.start + 10.0
    elif stop <= settings.start:
        lines.append(f"stop time {stop:g} is not after the start: start + 10 s used")
        stop = settings.start + 10.0
    settings.stop = stop
    name = config.get("SolverName") or config.get("Solver") or "ode45"
    solver_type = config.get("SolverType", "")
    fixed = name in _FIXED or solver_type.lower().startswith("fixed")
    rtol = _number(config.get("RelTol", "1e-3"), workspace)
    atol_text = config.get("AbsTol", "auto")
    atol = _number(atol_text, workspace) if atol_text.lower() != "auto" else None
    if fixed:
        settings.solver = _FIXED.get(name, "rk4")
        step_text = config.get("FixedStep", "auto")
        step = _number(step_text, workspace) if step_text.lower() != "auto" else None
        if step is None or step <= 0:
            rates = [r for r in (_period(t, workspace) for t in sample_times) if r]
            step = min([(settings.stop - settings.start) / 50.0, *rates])
            lines.append(f"fixed step `{step_text}`: {step:g} s (Simulink's auto: the span / 50 "
                         "or the fastest sample time, the smaller)")
        settings.step = step
        exact = name in ("ode1", "ode4")
        lines.append(f"{name} (fixed step {step:g} s) -> {settings.solver}"
                     + ("" if exact else f" (no {name} in blocksim; a fixed-step method of "
                                         "the same step)"))
    else:
        settings.solver = _VARIABLE.get(name, "dopri5")
        settings.rtol = rtol if rtol and rtol > 0 else 1e-3
        settings.atol = atol if atol and atol > 0 else 1e-6
        lines.append(f"{name} -> {settings.solver}, rtol {settings.rtol:g}, atol "
                     f"{settings.atol:g}" + (" (AbsTol auto: 1e-6)" if atol is None else ""))
        if name == "VariableStepAuto":
            lines.append("Simulink's automatic choice is ode45 for a model like this; should "
                         "blocksim find the system stiff, run it with --solver radau")
        max_text = config.get("MaxStep", "auto")
        max_step = _number(max_text, workspace) if max_text.lower() != "auto" else None
        if max_step and max_step > 0:
            settings.max_step = max_step
    lines.append(f"stop time {settings.stop:g} s")
    return settings


def _period(text: str, workspace: dict[str, Any]) -> float | None:
    """The period of a sample time ("0.01", "[0.1 0.05]", "Ts"), or None (continuous,
    inherited, constant, not a number)."""
    text = text.strip()
    if text.startswith("["):
        text = text.strip("[]").replace(",", " ").split()[0] if text.strip("[]").strip() else ""
    value = _number(text, workspace) if text else None
    return value if value is not None and value > 0 else None
