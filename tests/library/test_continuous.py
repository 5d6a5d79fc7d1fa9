"""Integrator and ResetIntegrator against analytic values: limits, initial values, resets."""
import math

import numpy as np
import pytest

import blocksim
from builders import block, diagram


def test_initial_value_from_input_is_taken_at_the_start_time():
    blocks = [block("x0", "Constant", value=3.0), block("rate", "Constant", value=-1.0),
              block("i", "Integrator", ic_source="input"), block("x", "Output")]
    r = blocksim.simulate(diagram(blocks, [("x0.y", "i.x0"), ("rate.y", "i.u"), ("i.y", "x.u")],
                                  stop=2.0, output_interval=0.5))
    assert r["x"] == pytest.approx(3.0 - r.time, abs=1e-12)


def test_vector_integrator_width_from_initial_value():
    blocks = [block("rate", "Constant", value=[1.0, -2.0]),
              block("i", "Integrator", x0=[0.0, 1.0]), block("x", "Output")]
    r = blocksim.simulate(diagram(blocks, [("rate.y", "i.u"), ("i.y", "x.u")], stop=1.0))
    assert r["x"].shape[1] == 2
    assert r["x"][-1] == pytest.approx([1.0, -1.0], abs=1e-12)


def test_limited_integrator_holds_then_leaves_when_the_input_turns():
    # u = cos(t): x = sin(t) clipped to [-0.5, 0.5]; leaves the upper limit when cos < 0.
    blocks = [block("u", "Sine", amplitude=1.0, frequency=1 / (2 * math.pi), phase=math.pi / 2),
              block("i", "Integrator", lower=-0.5, upper=0.5), block("x", "Output"),
              block("sat", "Output")]
    r = blocksim.simulate(diagram(blocks, [("u.y", "i.u"), ("i.y", "x.u"), ("i.sat", "sat.u")],
                                  stop=4.0, rtol=1e-11, atol=1e-12))
    kinds = [(e.kind, e.time) for e in r.events if e.block == "i" and e.kind != "state"]
    assert [k for k, _ in kinds] == ["upper limit", "leave limit", "lower limit"]
    t_hit, t_leave = kinds[0][1], kinds[1][1]
    assert t_hit == pytest.approx(math.asin(0.5), abs=1e-9)
    assert t_leave == pytest.approx(math.pi / 2, abs=1e-9)
    # After leaving, x = 0.5 + sin(t) - 1 falls to -0.5 at sin(t) = 0.
    assert kinds[2][1] == pytest.approx(math.pi, abs=1e-9)
    assert np.all(np.abs(r["x"]) <= 0.5 + 1e-12) and r["sat"][-1] == -1.0  # left limits: roundoff


@pytest.mark.parametrize("edge, resets", [("rising", [1.0, 3.0]), ("falling", [2.0]),
                                          ("either", [1.0, 2.0, 3.0])])
def test_reset_integrator_edges(edge, resets):
    # The trigger is 1 on [1, 2) and from 3 on; each reset sets the state to 10.
    blocks = [block("on1", "Step", time=1.0), block("off2", "Step", time=2.0),
              block("on3", "Step", time=3.0), block("trigger", "Sum", signs="+-+"),
              block("one", "Constant", value=1.0), block("ten", "Constant", value=10.0),
              block("i", "ResetIntegrator", edge=edge), block("x", "Output")]
    wires = [("on1.y", "trigger.u1"), ("off2.y", "trigger.u2"), ("on3.y", "trigger.u3"),
             ("one.y", "i.u"), ("trigger.y", "i.reset"), ("ten.y", "i.x0"), ("i.y", "x.u")]
    r = blocksim.simulate(diagram(blocks, wires, stop=4.0, output_interval=0.5))
    assert [e.time for e in r.events if e.kind == "reset"] == resets
    assert r["x"][-1] == pytest.approx(10.0 + 4.0 - resets[-1], abs=1e-12)


def test_reset_value_from_the_state_port_is_the_value_before_the_reset():
    blocks = [block("one", "Constant", value=1.0), block("s", "Step", time=1.0),
              block("i", "ResetIntegrator"), block("half", "Gain", k=-0.5),
              block("x", "Output")]
    wires = [("one.y", "i.u"), ("s.y", "i.reset"), ("i.state", "half.u"),
             ("half.y", "i.x0"), ("i.y", "x.u")]
    r = blocksim.simulate(diagram(blocks, wires, stop=2.0, output_interval=0.5))
    rows = np.flatnonzero(r.time == 1.0)
    assert list(r["x"][rows]) == pytest.approx([1.0, -0.5], abs=1e-12)
    assert r["x"][-1] == pytest.approx(0.5, abs=1e-12)
