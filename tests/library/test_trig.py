"""Trigonometric against numpy on a sweep of inputs (every function, both backends), its
domain errors, and WrapToZero's jumps at the located instants a sine crosses the threshold."""
import math

import numpy as np
import pytest
from both_backends import SIN, run_both
from builders import block, diagram

import blocksim
from blocksim.errors import CompileError, SimulationError

TIGHT = {"rtol": 1e-12, "atol": 1e-12}

# function -> (numpy reference, ramp start, ramp end): inputs inside the domain
ONE_INPUT = {
    "sin": (np.sin, -4.0, 4.0), "cos": (np.cos, -4.0, 4.0), "tan": (np.tan, -1.4, 1.4),
    "asin": (np.arcsin, -1.0, 1.0), "acos": (np.arccos, -1.0, 1.0),
    "atan": (np.arctan, -5.0, 5.0), "sinh": (np.sinh, -3.0, 3.0),
    "cosh": (np.cosh, -3.0, 3.0), "tanh": (np.tanh, -3.0, 3.0),
    "asinh": (np.arcsinh, -5.0, 5.0), "acosh": (np.arccosh, 1.0, 6.0),
    "atanh": (np.arctanh, -0.99, 0.99),
}


def ramp_diagram(start, end, blocks, wires, stop=1.0):
    """`r.y` = start + (end - start) t on [0, stop], with an integrator watching it."""
    base = [block("r", "Ramp", slope=(end - start) / stop, start=0.0, initial=start),
            block("watch", "Integrator")]
    return diagram(base + blocks, [("r.y", "watch.u")] + wires, stop=stop,
                   output_interval=0.01, **TIGHT)


@pytest.mark.parametrize("function", sorted(ONE_INPUT))
def test_one_input_functions_match_numpy(function):
    reference, start, end = ONE_INPUT[function]
    d = ramp_diagram(start, end, [block("f", "Trigonometric", function=function),
                                  block("y", "Output")], [("r.y", "f.u"), ("f.y", "y.u")])
    r = run_both(d, events_compiled=False)
    u = start + (end - start) * r.time
    u = np.clip(u, min(start, end), max(start, end))  # roundoff at the ends of asin's domain
    np.testing.assert_allclose(r["y"], reference(u), rtol=4e-15, atol=4e-15)


def test_atan2_and_sincos_on_a_circle():
    d = diagram([block("s", "Sine", frequency=SIN), block("c", "Sine", frequency=SIN,
                                                          phase=math.pi / 2),
                 block("watch", "Integrator"), block("a", "Trigonometric", function="atan2"),
                 block("sc", "Trigonometric", function="sincos"), block("angle", "Output"),
                 block("sin", "Output"), block("cos", "Output")],
                [("s.y", "watch.u"), ("s.y", "a.u1"), ("c.y", "a.u2"), ("a.y", "angle.u"),
                 ("a.y", "sc.u"), ("sc.sin", "sin.u"), ("sc.cos", "cos.u")],
                stop=3.0, output_interval=0.01, **TIGHT)
    r = run_both(d, events_compiled=False)
    t = r.time
    np.testing.assert_allclose(r["angle"], np.arctan2(np.sin(t), np.cos(t)), atol=1e-15)
    np.testing.assert_allclose(r["angle"], t, atol=2e-15)  # below pi: the angle is t
    np.testing.assert_allclose(r["sin"], np.sin(t), atol=2e-15)
    np.testing.assert_allclose(r["cos"], np.cos(t), atol=2e-15)


def test_vector_input_and_atan2_scalar_expansion():
    d = diagram([block("u", "Constant", value=[0.5, -1.0, 2.0]), block("one", "Constant"),
                 block("f", "Trigonometric", function="atan"),
                 block("a", "Trigonometric", function="atan2"),
                 block("y", "Output"), block("z", "Output")],
                [("u.y", "f.u"), ("f.y", "y.u"), ("u.y", "a.u1"), ("one.y", "a.u2"),
                 ("a.y", "z.u")], stop=1.0)
    r = blocksim.simulate(d)
    np.testing.assert_array_equal(r["y"][-1], np.arctan([0.5, -1.0, 2.0]))
    np.testing.assert_array_equal(r["z"][-1], np.arctan2([0.5, -1.0, 2.0], 1.0))


@pytest.mark.parametrize("backend", ["python", "numba"])
@pytest.mark.parametrize("function, start, leaves", [("asin", 0.5, 1.0), ("acosh", 1.5, 1.0),
                                                     ("atanh", 0.5, 1.0)])
def test_leaving_the_domain_stops_the_run_naming_the_block(backend, function, start, leaves):
    if backend == "numba":
        pytest.importorskip("numba")
    # u = start - 1.0 t (acosh: leaves [1, inf) at t = 0.5) or start + t (asin, atanh: past 1)
    slope = -1.0 if function == "acosh" else 1.0
    d = diagram([block("r", "Ramp", slope=slope, start=0.0, initial=start),
                 block("watch", "Integrator"), block("f", "Trigonometric", function=function),
                 block("y", "Output")], [("r.y", "watch.u"), ("r.y", "f.u"), ("f.y", "y.u")],
                stop=2.0, output_interval=0.01)
    with pytest.raises(SimulationError) as info:
        blocksim.simulate(d, backend=backend)
    assert info.value.block == "f"
    assert "outside its domain" in str(info.value) or "infinite" in str(info.value)
    # The domain ends where u reaches `leaves`. Python stops in the step whose stages first
    # reach past it (the error's time is that step's start); the compiled loop at the
    # first output row past it (rows every 0.01 s).
    assert 0.0 <= info.value.time <= abs(leaves - start) + 0.01 + 1e-12


def test_a_domain_error_on_the_python_backend_says_domain():
    d = diagram([block("c", "Constant", value=1.5), block("f", "Trigonometric", function="asin"),
                 block("y", "Output")], [("c.y", "f.u"), ("f.y", "y.u")], stop=1.0)
    with pytest.raises(SimulationError, match="outside its domain") as info:
        blocksim.simulate(d)
    assert info.value.block == "f"


# ----- WrapToZero -----

def test_wrap_to_zero_of_a_sine_jumps_where_it_crosses_the_threshold():
    level, stop = 0.5, 9.5
    d = diagram([block("s", "Sine", frequency=SIN), block("watch", "Integrator"),
                 block("b", "WrapToZero", threshold=level), block("y", "Output")],
                [("s.y", "watch.u"), ("s.y", "b.u"), ("b.y", "y.u")], stop=stop,
                output_interval=0.01, **TIGHT)
    r = run_both(d)
    a = math.asin(level)
    expected = sorted(t for k in range(2) for t in (a + 2 * math.pi * k,
                                                    math.pi - a + 2 * math.pi * k) if t < stop)
    assert len(expected) == 4
    located = np.array([e.time for e in r.events if e.block == "b"])
    np.testing.assert_allclose(located, expected, rtol=0, atol=1e-12)
    u = np.sin(r.time)
    away = np.all(np.abs(r.time[:, None] - np.array(expected)[None, :]) > 1e-9, axis=1)
    np.testing.assert_allclose(r["y"][away], np.where(u > level, 0.0, u)[away], atol=1e-15)
    assert np.all(r["y"][away & (u > level)] == 0.0)  # exactly 0 above the threshold
    for t, before, after in zip(expected, (level, 0.0, level, 0.0), (0.0, level, 0.0, level)):
        rows = np.flatnonzero(r.time == r.time[np.argmin(np.abs(r.time - t))])
        assert len(rows) == 2  # the left and the right limit
        np.testing.assert_allclose(r["y"][rows], [before, after], atol=1e-14)


def test_wrap_to_zero_vector_threshold_and_equality():
    d = diagram([block("c", "Constant", value=[1.0, 2.0, 3.0]),
                 block("b", "WrapToZero", threshold=[0.5, 2.0, 5.0]), block("y", "Output")],
                [("c.y", "b.u"), ("b.y", "y.u")], stop=1.0)
    np.testing.assert_array_equal(blocksim.simulate(d)["y"][-1], [0.0, 2.0, 3.0])


@pytest.mark.parametrize("block_type, params, message", [
    ("Trigonometric", dict(function="sec"), "parameter 'function'"),
    ("WrapToZero", dict(threshold="nan"), "parameter 'threshold'"),
    ("WrapToZero", dict(threshold="inf"), "parameter 'threshold'"),
])
def test_bad_parameters_are_refused_naming_block_and_parameter(block_type, params, message):
    d = diagram([block("c", "Constant"), block("bad", block_type, **params)], [("c.y", "bad.u")])
    with pytest.raises(CompileError) as info:
        blocksim.compile(d)
    assert info.value.block == "bad" and message in str(info.value)


def test_wrap_to_zero_threshold_width_mismatch_names_the_input():
    d = diagram([block("c", "Constant", value=[1.0, 2.0]),
                 block("bad", "WrapToZero", threshold=[1.0, 2.0, 3.0])], [("c.y", "bad.u")])
    with pytest.raises(CompileError, match="input 'u' has 2 elements where 1 or 3") as info:
        blocksim.compile(d)
    assert info.value.block == "bad"
