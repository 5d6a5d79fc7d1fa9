"""The run plan kept per model and settings (blocksim/engine/run_plan.py): a repeated run
gives the bits of a first run, settings no run can honour fail every run, and a plan is
never reused for settings that differ (values, their types, the backend from the
environment)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import blocksim
from blocksim.engine import run_plan
from blocksim.errors import CompileError
from tests.both_backends import HAS_NUMBA

DIAGRAMS = Path(__file__).resolve().parents[2] / "diagrams"
BACKENDS = ["python"] + (["numba"] if HAS_NUMBA else [])


def _same(a: blocksim.Results, b: blocksim.Results) -> None:
    assert np.array_equal(a.time, b.time)
    assert a.signals.keys() == b.signals.keys()
    for name in a.signals:
        assert np.array_equal(a[name], b[name]), name
    assert a.events == b.events
    assert (a.status, a.message, a.warnings) == (b.status, b.message, b.warnings)
    assert {k: v for k, v in a.stats.items() if k != "wall_time"} == {
        k: v for k, v in b.stats.items() if k != "wall_time"}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", ["bouncing_ball.json", "dde_delay.json"])
def test_a_repeated_run_gives_the_bits_of_a_first_run(name, backend):
    diagram = blocksim.load(DIAGRAMS / name)
    first = blocksim.simulate(blocksim.compile(diagram), backend=backend)
    model = blocksim.compile(diagram)
    for stop in (None, first.time[-1] / 2, None):  # another plan in between
        again = blocksim.simulate(model, backend=backend, stop_time=stop)
    assert len(model.derived["run_plans"]) == 2
    _same(first, again)
    assert first.events  # the runs are not trivial: the ball bounces, the delay acts


def test_settings_no_run_can_honour_fail_every_run():
    model = blocksim.compile(blocksim.load(DIAGRAMS / "bouncing_ball.json"))
    blocksim.simulate(model, rtol=1e-3)
    for _ in range(2):
        with pytest.raises(CompileError, match="rtol"):
            blocksim.simulate(model, rtol=-1.0)
    assert len(model.derived["run_plans"]) == 1  # only the run that could be made


def test_a_plan_is_kept_per_settings_value_and_type():
    model = blocksim.compile(blocksim.load(DIAGRAMS / "bouncing_ball.json"))
    settings = model.settings.replaced(stop=2.0)
    plan = run_plan.plan_for(model, settings)
    assert run_plan.plan_for(model, model.settings.replaced(stop=2.0)) is plan
    assert run_plan.plan_for(model, settings.replaced(stop=3.0)) is not plan
    interval = settings.output_interval or 2.0 / 500  # the grid's spacing, its points
    assert plan.interval == interval and plan.n_grid == round(2.0 / interval)
    # 1 and True are equal to Python but not to the settings check: a plan made for the
    # one must not let the other pass.
    blocksim.simulate(model, stop_time=2, max_step=1)
    with pytest.raises(CompileError, match="max_step"):
        blocksim.simulate(model, stop_time=2, max_step=True)


@pytest.mark.skipif(not HAS_NUMBA, reason="numba is not installed")
def test_the_backend_from_the_environment_is_read_at_every_run(monkeypatch):
    model = blocksim.compile(blocksim.load(DIAGRAMS / "bouncing_ball.json"))
    monkeypatch.setenv("BLOCKSIM_BACKEND", "numba")
    on_numba = blocksim.simulate(model)
    monkeypatch.setenv("BLOCKSIM_BACKEND", "python")
    on_python = blocksim.simulate(model)
    assert "python_events" in on_numba.stats  # counted by the compiled loop only
    assert "python_events" not in on_python.stats
    monkeypatch.setenv("BLOCKSIM_BACKEND", "fortran")
    with pytest.raises(CompileError, match="BLOCKSIM_BACKEND"):
        blocksim.simulate(model)
