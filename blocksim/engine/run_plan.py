"""What every run of one compiled model with one set of settings shares, made once.

A short run on the numba backend (the 100-lag chain: 60 µs in the compiled loop) spent
about as long again in Python setting itself up: checking the settings, laying out the
recorder, deriving the output grid, the event horizon and the loop's parameters. None of
that depends on the run, only on the model and the settings, so `plan_for` makes it once
and keeps it on the model (`CompiledModel.derived`, a few settings per model); a repeated
`simulate` then builds only what a run changes (its state, buffers, counts, warnings).

Settings a run cannot honour are never kept: `check_run` raises for them at every run.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from blocksim.compiler.compiled import CompiledModel, check_run
from blocksim.engine import derived, history
from blocksim.engine.event_iteration import MAX_EVENT_PASSES, ZENO_EVENTS, ZENO_SPAN
from blocksim.engine.segment import SMALL
from blocksim.engine.stiffness import LIMITS as STIFF_LIMITS
from blocksim.diagram.model import SimulationSettings

PLANS_KEPT = 8  # settings per model whose plans are kept


@dataclass(frozen=True)
class RunPlan:
    """The parts of a run fixed by the model and the settings (read only by the runs)."""

    max_step: float | None  # the history rings' bound on the step, if below the settings'
    names: list[str]  # the recorder's columns: logged signals and their state indices
    indices: list[list[int]]
    interval: float  # the output grid's spacing
    n_grid: int  # grid points after the start
    horizon: float  # how far past an event its signs are read (`Simulator`)
    event_limits: tuple[int, int, float]  # event iteration passes, Zeno count and span
    backend: str
    stiff_test: bool  # Hairer's stiffness test runs (the explicit solvers)
    small: bool  # event-time values in lists (`segment.py`)
    observe: Callable
    zc_moves: np.ndarray
    zc_moves_list: list[bool]
    deriv_list: Callable | None
    zc_list: Callable | None
    # The compiled loop's prepared parameters, per "watched" (`native.loop`): filled by
    # the first numba run of each kind.
    native: dict[Any, Any] = field(default_factory=dict, compare=False)


def settings_key(settings: SimulationSettings) -> tuple:
    """Equal for settings whose runs are alike (values and their types: 1 and True differ
    to the settings check), the backend as resolved now (it may come from the
    environment)."""
    values = tuple(settings.__dict__.values())
    return values, tuple(map(type, values)), settings.resolved_backend


def plan_for(model: CompiledModel, settings: SimulationSettings) -> RunPlan:
    """The plan of `model`'s runs with `settings`, made (and the settings checked) on the
    first such run; CompileError if no run can honour them."""
    key = settings_key(settings)
    plans = model.derived.setdefault("run_plans", {})
    plan = plans.get(key)
    if plan is None:
        plan = _make(model, settings)
        if len(plans) >= PLANS_KEPT:
            plans.clear()
        plans[key] = plan
    return plan


def _make(model: CompiledModel, s: SimulationSettings) -> RunPlan:
    check_run(model, s)  # settings given to a run bypass compile_diagram's checks
    max_step = None
    if model.history and history.max_step(model) < s.max_step:
        max_step = history.max_step(model)
    interval = s.output_interval or (s.stop - s.start) / 500
    scale = max(abs(s.start), abs(s.stop), s.stop - s.start)
    # How far past an event the signs are read: far above the roundoff that event
    # location leaves behind, far below any time scale a model resolves.
    horizon = 64 * math.ulp(scale)
    # (Not with history rings: the lists would copy them at every step.)
    small = model.n_states <= SMALL and model.n_zc <= SMALL and not model.history
    zc_moves = derived.zc_moves(model)  # zero crossings that move with t or x
    return RunPlan(
        max_step=max_step,
        names=[sig.name for sig in model.logged],
        indices=[sig.indices for sig in model.logged],
        interval=interval,
        n_grid=int(math.floor((s.stop - s.start) / interval + 1e-9)),
        horizon=horizon,
        event_limits=(MAX_EVENT_PASSES, ZENO_EVENTS, ZENO_SPAN * horizon),
        backend=s.resolved_backend,
        stiff_test=s.solver in STIFF_LIMITS,
        small=small,
        observe=derived.observe(model),
        zc_moves=zc_moves,
        zc_moves_list=zc_moves.tolist(),
        deriv_list=derived.list_function(model, "deriv") if small else None,
        zc_list=derived.list_function(model, "zc") if small else None)
