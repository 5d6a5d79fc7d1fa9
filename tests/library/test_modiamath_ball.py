"""ModiaMath's bouncing ball in ModiaMath's own formulation, from library blocks
(diagrams/modiamath_ball.json): the ResetIntegrator's `state` holds the impact speed for
the whole event, so 'impact AND rebound < v_small' latches only at the last impact."""

import numpy as np
import pytest
from both_backends import run_both
from references import modia_ball_impacts

import blocksim
from blocksim.diagram.examples import examples_dir

H0, E, G, V_SMALL = 1.0, 0.7, 9.81, 0.01


@pytest.fixture(scope="module")
def results():
    return run_both(blocksim.load(examples_dir() / "modiamath_ball.json"))


def test_eighteen_impacts_at_the_closed_form_instants(results):
    expected = modia_ball_impacts(H0, E, G, V_SMALL)
    assert len(expected) == 18
    resets = [e.time for e in results.events if e.block == "velocity" and e.kind == "reset"]
    assert len(resets) == 18
    assert resets[0] == pytest.approx(0.451523640986, abs=1e-12)
    np.testing.assert_allclose(resets, expected, rtol=0, atol=1e-9)
    # v jumps at each: from -v_k to e*v_k (the last to 0), seen in the left/right rows.
    for k, t in enumerate(resets):
        rows = np.flatnonzero(results.time == t)
        assert len(rows) == 2
        before, after = results["v"][rows]
        assert before == pytest.approx(-G * expected[0] * E ** k, rel=1e-8)
        assert after == (0.0 if k == 17 else pytest.approx(-E * before, rel=1e-12))


def test_then_at_rest_with_h_and_v_zero(results):
    rest = results.time > modia_ball_impacts(H0, E, G, V_SMALL)[-1]
    assert rest.any() and np.all(results["v"][rest] == 0.0)
    assert np.all(np.abs(results["h"][rest]) <= 1e-12)
    assert [e.block for e in results.events if e.kind == "reset" and e.block == "flying"]


def test_state_holds_the_pre_reset_value_during_the_event():
    # state -> Output: the event's rows show the value before the reset (left and right),
    # the next grid row the value set by it.
    from builders import block, diagram
    blocks = [block("one", "Constant", value=1.0), block("clock", "Clock"),
              block("at", "CompareToConstant", operator=">=", constant=0.25),
              block("i", "ResetIntegrator", edge="rising"),
              block("x0", "Constant", value=-5.0), block("s", "Output"), block("y", "Output")]
    wires = [("one.y", "i.u"), ("clock.y", "at.u"), ("at.y", "i.reset"), ("x0.y", "i.x0"),
             ("i.state", "s.u"), ("i.y", "y.u")]
    r = run_both(diagram(blocks, wires, stop=0.5, output_interval=0.125))
    rows = np.flatnonzero(r.time == 0.25)
    np.testing.assert_allclose(r["s"][rows], [0.25, 0.25], rtol=0, atol=1e-15)
    np.testing.assert_allclose(r["y"][rows], [0.25, -5.0], rtol=0, atol=1e-15)
    assert r["s"][-1] == pytest.approx(-4.75, abs=1e-14)
