"""Checks of the simulation settings, so that settings that cannot work fail at compile time.

`blocksim validate` and `blocksim run` compile before they run; a stop time before the
start, a NaN tolerance or a step below the time resolution is then a CompileError (exit 2)
naming the setting and its value, instead of a hang or a failure minutes into a run.
"""
from __future__ import annotations

import logging
import math
import numbers
from typing import Any

from blocksim.compiler import limits
from blocksim.errors import CompileError
from blocksim.diagram.model import BACKENDS, SOLVERS, SimulationSettings

log = logging.getLogger(__name__)

FIXED_STEP = ("euler", "rk4")


def _fail(name: str, value: Any, why: str, source: str | None) -> CompileError:
    return CompileError(f"simulation setting '{name}' = {_show(value)}: {why}", file=source)


def _show(value: Any) -> str:
    if isinstance(value, float):
        return repr(value)
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _number(settings: SimulationSettings, name: str, source: str | None,
            allow_inf: bool = False) -> float:
    """The setting as a float; it must be a real number (finite unless allow_inf)."""
    value = getattr(settings, name)
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise _fail(name, value, "must be a number", source)
    value = float(value)
    if math.isnan(value) or (math.isinf(value) and not allow_inf):
        raise _fail(name, value, "must be a finite number", source)
    return value


def check_settings(settings: SimulationSettings, source: str | None = None) -> None:
    """Refuse settings no run can honour; CompileError names the setting and its value."""
    start = _number(settings, "start", source)
    stop = _number(settings, "stop", source)
    if not stop > start:
        raise _fail("stop", stop, f"the stop time must be after the start time "
                    f"(start = {start!r})", source)
    scale = max(abs(start), abs(stop))
    span = stop - start
    if math.isinf(span):
        raise _fail("stop", stop, f"stop - start overflows (start = {start!r})", source)
    if span < limits.MIN_SPAN_ULPS * math.ulp(scale):
        raise _fail("stop", stop, f"the run from {start!r} spans fewer than "
                    f"{limits.MIN_SPAN_ULPS} distinct time values (the time resolution "
                    f"there is {math.ulp(scale):.3g})", source)
    if settings.solver not in SOLVERS:
        raise _fail("solver", settings.solver, f"unknown solver; choose one of "
                    f"{', '.join(SOLVERS)}", source)
    _check_tolerances(settings, source)
    min_dt = limits.MIN_STEP_ULPS * math.ulp(scale)
    for name in ("step", "output_interval", "max_step"):
        if name == "max_step" or getattr(settings, name) is not None:
            _check_interval(settings, name, span, scale, min_dt, source)
    if settings.solver in FIXED_STEP and settings.step is None:
        raise CompileError(f"simulation setting 'step' is missing: the fixed-step solver "
                           f"'{settings.solver}' needs a step size (simulation.step, --step)",
                           file=source)
    backend = settings.resolved_backend
    if backend not in BACKENDS:
        origin = "" if settings.backend else " (from the BLOCKSIM_BACKEND environment variable)"
        raise _fail("backend", backend, f"unknown backend{origin}; choose one of "
                    f"{', '.join(BACKENDS)}", source)


def _check_tolerances(settings: SimulationSettings, source: str | None) -> None:
    rtol = _number(settings, "rtol", source)
    if not rtol > 0:
        raise _fail("rtol", rtol, "must be a finite number > 0", source)
    if rtol < limits.MIN_RTOL:
        raise _fail("rtol", rtol, f"below the resolution of double precision "
                    f"(eps = {limits.EPS:.3g}); the solvers honour at most "
                    f"{limits.HONOURED_RTOL:.3g}", source)
    if rtol < limits.HONOURED_RTOL:
        log.warning("%s: simulation setting 'rtol' = %r is below 100 eps: the solvers work to "
                    "%.3g", source or "<diagram>", rtol, limits.HONOURED_RTOL)
    atol = _number(settings, "atol", source)
    if not atol > 0:
        raise _fail("atol", atol, "must be a finite number > 0", source)


def _check_interval(settings: SimulationSettings, name: str, span: float, scale: float,
                    min_dt: float, source: str | None) -> None:
    """A step, output interval or max step: positive, resolvable in time, not absurdly many."""
    no_limit = name == "max_step"
    value = _number(settings, name, source, allow_inf=no_limit)
    if not value > 0:
        raise _fail(name, value, "must be a number > 0" + (" (or left out: no limit)"
                                                           if no_limit else ""), source)
    if math.isinf(value):
        return
    if value < min_dt:
        raise _fail(name, value, f"below {limits.MIN_STEP_ULPS} units of roundoff of the "
                    f"time scale {scale:g} ({min_dt:.3g}): t + {name} cannot be computed "
                    f"accurately there", source)
    counted = name if name != "step" or settings.solver in FIXED_STEP else None
    if counted in ("step", "max_step") and span / value > limits.MAX_STEPS:
        raise _fail(name, value, f"a run of {span:g} s would need {span / value:.3g} steps "
                    f"(at most {limits.MAX_STEPS:.0e}); use a larger {name} or a shorter "
                    f"run", source)
