"""Event semantics of the engine: location, limits, time events, iteration, Zeno, failures."""
import math

import numpy as np
import pytest

from builders import block, diagram
import blocksim
from blocksim.errors import SimulationError


def ramp_to_limit(**sim):
    blocks = [block("c", "Constant", value=2.0), block("i", "Integrator", x0=1.0, upper=3.0),
              block("x", "Output")]
    return diagram(blocks, [("c.y", "i.u"), ("i.y", "x.u")], **sim)


def test_state_event_located_to_machine_precision_and_recorded_twice():
    r = blocksim.simulate(ramp_to_limit(stop=2.0, output_interval=0.25, rtol=1e-8))
    hits = r.events_of("state")
    assert len(hits) == 1 and hits[0].block == "i"
    assert abs(hits[0].time - 1.0) <= 4 * math.ulp(1.0)
    rows = np.flatnonzero(r.time == hits[0].time)
    assert len(rows) == 2  # left and right limit
    assert r["x"][-1] == 3.0  # held exactly at the limit
    assert np.all(r["x"] <= 3.0)


def test_time_event_hit_exactly_with_left_and_right_limits():
    blocks = [block("s", "Step", time=0.3, before=1.0, after=-2.0), block("y", "Output")]
    r = blocksim.simulate(diagram(blocks, [("s.y", "y.u")], stop=1.0, output_interval=0.1))
    rows = np.flatnonzero(r.time == 0.3)
    assert len(rows) == 2
    assert r["y"][rows[0]] == 1.0 and r["y"][rows[1]] == -2.0
    assert [e.kind for e in r.events] == ["step"]


def test_grid_point_on_an_event_is_not_tripled():
    blocks = [block("s", "Step", time=0.5), block("y", "Output")]
    r = blocksim.simulate(diagram(blocks, [("s.y", "y.u")], stop=1.0, output_interval=0.25))
    assert list(r.time) == [0.0, 0.25, 0.5, 0.5, 0.75, 1.0]


def test_sliding_mode_ends_with_clear_error_naming_blocks():
    # x' = +1 if x < 0 else -1: at x = 0 the mode can never settle.
    blocks = [block("zero", "Constant", value=0.0), block("up", "Constant", value=1.0),
              block("down", "Constant", value=-1.0), block("neg", "RelationalOperator"),
              block("sw", "Switch", criterion="u2 != 0"), block("i", "Integrator", x0=1.0),
              block("x", "Output")]
    wires = [("i.y", "neg.u1"), ("zero.y", "neg.u2"), ("up.y", "sw.u1"), ("neg.y", "sw.u2"),
             ("down.y", "sw.u3"), ("sw.y", "i.u"), ("i.y", "x.u")]
    with pytest.raises(SimulationError) as info:
        blocksim.simulate(diagram(blocks, wires, stop=3.0))
    err = info.value
    assert "did not settle" in str(err) and "neg" in str(err)
    assert err.time == pytest.approx(1.0, abs=1e-12)
    assert err.results is not None and err.results.time[-1] == pytest.approx(1.0, abs=1e-12)


def unguarded_ball():
    blocks = [block("gravity", "Constant", value=-9.81), block("zero", "Constant", value=0.0),
              block("velocity", "ResetIntegrator", edge="rising"),
              block("restitution", "Gain", k=-0.9), block("below", "RelationalOperator"),
              block("position", "Integrator", x0=10.0), block("x", "Output")]
    wires = [("gravity.y", "velocity.u"), ("below.y", "velocity.reset"),
             ("velocity.state", "restitution.u"), ("position.y", "below.u1"),
             ("zero.y", "below.u2"), ("restitution.y", "velocity.x0"),
             ("velocity.y", "position.u"), ("position.y", "x.u")]
    return diagram(blocks, wires, stop=30.0, rtol=1e-10, atol=1e-10)


def test_zeno_point_of_unguarded_ball_is_an_error_not_a_hang():
    with pytest.raises(SimulationError) as info:
        blocksim.simulate(unguarded_ball())
    err = info.value
    assert "Zeno" in str(err)
    t_inf = math.sqrt(2 * 10 / 9.81) * 1.9 / 0.1
    assert err.time == pytest.approx(t_inf, abs=1e-6)
    partial = err.results
    assert partial.status == "failed" and partial.time[-1] == pytest.approx(t_inf, abs=1e-6)
    assert len(partial.events_of("reset")) > 100


def test_fixed_step_rk4_matches_exponential():
    blocks = [block("k", "Gain", k=-1.0), block("i", "Integrator", x0=1.0), block("x", "Output")]
    r = blocksim.simulate(
        diagram(blocks, [("i.y", "k.u"), ("k.y", "i.u"), ("i.y", "x.u")], stop=1.0,
                solver="rk4", step=0.01, output_interval=0.1))
    assert r["x"][-1] == pytest.approx(math.exp(-1.0), rel=1e-9)


def test_fixed_step_solver_without_step_is_bad_input():
    blocks = [block("c", "Constant"), block("i", "Integrator"), block("x", "Output")]
    with pytest.raises(Exception) as info:
        blocksim.simulate(diagram(blocks, [("c.y", "i.u"), ("i.y", "x.u")], solver="euler"))
    assert "step" in str(info.value)


@pytest.mark.parametrize("solver", ["dopri5", "dop853", "radau", "bdf"])
def test_every_adaptive_solver_locates_the_same_event(solver):
    r = blocksim.simulate(ramp_to_limit(stop=2.0, solver=solver, rtol=1e-10, atol=1e-12))
    assert r.events_of("state")[0].time == pytest.approx(1.0, abs=1e-9)


def test_grid_point_within_roundoff_of_an_event_is_the_event():
    # 3 * 0.1 = 0.30000000000000004: that grid point is the step at 0.3, not a third row.
    blocks = [block("s", "Step", time=0.3), block("y", "Output")]
    r = blocksim.simulate(diagram(blocks, [("s.y", "y.u")], stop=0.5, output_interval=0.1))
    assert len(r.time) == 7 and list(r.time[3:5]) == [0.3, 0.3]
