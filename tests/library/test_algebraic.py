"""AlgebraicConstraint: algebraic loops solved by Newton iteration in generated code.

Checked against closed forms: z^3 + z = t (Cardano), a linear loop with an integrator
(an ODE with a known solution), a loop through a latched switch (its mode changes at a
located event), and the compile and run errors that name the block.
"""
import math

import numpy as np
import pytest
from builders import block, diagram
from hypothesis import given, settings, strategies as st

import blocksim
from blocksim.errors import CompileError, SimulationError

TIGHT = {"rtol": 1e-12, "atol": 1e-12}


def simulate(blocks, wires, parameters=None, **options):
    return blocksim.simulate(diagram(blocks, wires, parameters, **{**TIGHT, **options}))


def cardano(t):
    """The real root of z^3 + z - t."""
    d = math.sqrt(t * t / 4 + 1 / 27)
    return math.copysign(abs(t / 2 + d) ** (1 / 3), t / 2 + d) + math.copysign(
        abs(t / 2 - d) ** (1 / 3), t / 2 - d)


CUBIC = [block("t", "Clock"), block("solve", "AlgebraicConstraint"),
         block("res", "Expression", formula="z**3 + z - t", inputs="z, t"), block("z", "Output")]
CUBIC_WIRES = [("t.y", "res.t"), ("solve.z", "res.z"), ("res.y", "solve.f"), ("solve.z", "z.u")]


def test_cubic_matches_cardano():
    r = simulate(CUBIC, CUBIC_WIRES, stop=5.0)
    expected = np.array([cardano(t) for t in r.time])
    assert np.max(np.abs(r["z"] - expected)) < 1e-12


@settings(max_examples=25, deadline=None)
@given(st.floats(-1e3, 1e3), st.floats(-50.0, 50.0))
def test_any_start_guess_converges(z0, offset):
    blocks = [dict(CUBIC[0], type="Constant", params={"value": offset}),
              block("solve", "AlgebraicConstraint", z0=z0), *CUBIC[2:]]
    r = simulate(blocks, CUBIC_WIRES, stop=1.0)
    assert abs(r["z"][-1] - cardano(offset)) < 1e-11 * (1 + abs(offset))


def test_loop_through_an_integrator_state():
    # x' = -z with z defined implicitly by 2 z - x = 0: x' = -x / 2, x(0) = 1.
    r = simulate([block("x", "Integrator", x0=1.0), block("solve", "AlgebraicConstraint"),
                  block("res", "Expression", formula="2 * z - x", inputs="z, x"),
                  block("neg", "Gain", k=-1.0), block("out", "Output")],
                 [("x.y", "res.x"), ("solve.z", "res.z"), ("res.y", "solve.f"),
                  ("solve.z", "neg.u"), ("neg.y", "x.u"), ("x.y", "out.u")], stop=4.0)
    assert np.max(np.abs(r["out"] - np.exp(-r.time / 2))) < 1e-10


def test_loop_through_a_latched_switch():
    # z = t - 1 while the switch passes u1 = z - (t - 1) ... as a residual: below t = 2 the
    # equation is z - (t - 1) = 0, from t = 2 on (a located event) it is z - 3 = 0.
    r = simulate([block("t", "Clock"), block("solve", "AlgebraicConstraint"),
                  block("early", "Expression", formula="z - (t - 1)", inputs="z, t"),
                  block("late", "Expression", formula="z - 3", inputs="z"),
                  block("sw", "Switch", criterion="u2 >= a", threshold=2.0),
                  block("out", "Output")],
                 [("t.y", "early.t"), ("solve.z", "early.z"), ("solve.z", "late.z"),
                  ("late.y", "sw.u1"), ("t.y", "sw.u2"), ("early.y", "sw.u3"),
                  ("sw.y", "solve.f"), ("solve.z", "out.u")], stop=3.0)
    t, z = r.time, r["out"]
    expected = np.where(t < 2.0, t - 1.0, 3.0)
    left = np.flatnonzero(t == 2.0)
    assert len(left) == 2 and z[left[0]] == pytest.approx(1.0) and z[left[1]] == 3.0
    keep = np.ones(len(t), bool)
    keep[left] = False
    assert np.max(np.abs(z[keep] - expected[keep])) < 1e-12


def test_residual_that_ignores_z_is_refused():
    with pytest.raises(CompileError) as info:
        simulate([block("c", "Constant", value=1.0), block("solve", "AlgebraicConstraint"),
                  block("out", "Output")],
                 [("c.y", "solve.f"), ("solve.z", "out.u")], stop=1.0)
    assert info.value.block == "solve" and info.value.port == "f"
    assert "does not depend on output 'z'" in str(info.value)


def test_vector_residual_is_refused():
    with pytest.raises(CompileError) as info:
        simulate([block("solve", "AlgebraicConstraint"), block("c", "Constant", value=[1, 2]),
                  block("res", "Sum", signs="++"), block("out", "Output")],
                 [("solve.z", "res.u1"), ("c.y", "res.u2"), ("res.y", "solve.f"),
                  ("solve.z", "out.u")], stop=1.0)
    assert info.value.block == "solve" and "scalar" in str(info.value)


def test_nested_constraints_are_refused():
    # b's loop (b -> sum -> b.f) runs through a's unknown's loop and back.
    with pytest.raises(CompileError) as info:
        simulate([block("a", "AlgebraicConstraint"), block("b", "AlgebraicConstraint"),
                  block("fa", "Sum", signs="++"), block("fb", "Sum", signs="+-"),
                  block("out", "Output")],
                 [("a.z", "fa.u1"), ("b.z", "fa.u2"), ("fa.y", "b.f"),
                  ("fa.y", "fb.u1"), ("b.z", "fb.u2"), ("fb.y", "a.f"),
                  ("a.z", "out.u")], stop=1.0)
    assert "coupled (nested) algebraic constraints" in str(info.value)


def test_no_solution_fails_naming_the_block():
    # z^2 + 1 = 0 has no real root: the run fails at t = 0, naming the solver block.
    with pytest.raises(SimulationError) as info:
        simulate([block("solve", "AlgebraicConstraint", z0=0.5),
                  block("res", "Expression", formula="z**2 + 1", inputs="z"),
                  block("out", "Output")],
                 [("solve.z", "res.z"), ("res.y", "solve.f"), ("solve.z", "out.u")], stop=1.0)
    assert info.value.block == "solve" and "did not converge" in str(info.value)
    assert info.value.time == 0.0
