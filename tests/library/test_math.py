"""Product, MathFunction, Expression, Mux and Demux against numpy and analytic values.

Inputs come from stateless sources (exact on the grid, events located to a few ulps) or
from an integrator of a constant (exact: the solver integrates a line without error), so
values are compared to 1e-12 and event times to 1e-12 s.
"""
import math

import numpy as np
import pytest
from builders import block, diagram

from blocks.math_ops import IntegerPart
import blocksim
from blocksim.errors import CompileError, SimulationError

TIGHT = {"rtol": 1e-12, "atol": 1e-12}


def simulate(blocks, wires, parameters=None, **settings):
    return blocksim.simulate(diagram(blocks, wires, parameters, **{**TIGHT, **settings}))


def compile_error(blocks, wires, parameters=None) -> CompileError:
    with pytest.raises(CompileError) as info:
        simulate(blocks, wires, parameters, stop=1.0)
    return info.value


def ramp(block_id, lo, hi):
    """A Ramp from lo at t = 0 to hi at t = 1 (no states: exact on the grid)."""
    return block(block_id, "Ramp", slope=hi - lo, start=0.0, initial=lo)


def away_from(r, times, eps=1e-9):
    """Row mask of samples not within eps of any of the given times."""
    if not len(times):
        return np.ones(len(r.time), bool)
    return np.all(np.abs(r.time[:, None] - np.asarray(times)[None, :]) > eps, axis=1)


def event_times(r, block_id, kind):
    return [e.time for e in r.events_of(kind, block_id)]


# ----- Product -----

def test_product_multiplies_and_divides_elementwise_with_scalar_expansion():
    r = simulate([block("a", "Constant", value=[1.0, 2.0, 3.0]), block("t", "Clock"),
                  block("c", "Constant", value=4.0), block("p", "Product", ops="**/"),
                  block("y", "Output")],
                 [("a.y", "p.u1"), ("t.y", "p.u2"), ("c.y", "p.u3"), ("p.y", "y.u")],
                 stop=1.0, output_interval=0.25)
    assert r["y"] == pytest.approx(np.outer(r.time, [1.0, 2.0, 3.0]) / 4.0, rel=1e-15)


def test_product_leading_divide_is_a_reciprocal():
    r = simulate([ramp("u", 1.0, 3.0), block("k", "Constant", value=2.0),
                  block("p", "Product", ops="/*"), block("y", "Output")],
                 [("u.y", "p.u1"), ("k.y", "p.u2"), ("p.y", "y.u")], stop=1.0, output_interval=0.1)
    assert r["y"] == pytest.approx(2.0 / (1.0 + 2.0 * r.time), rel=1e-14)


def test_product_bad_ops_and_mismatched_widths_are_compile_errors_naming_the_block():
    err = compile_error([block("p", "Product", ops="*+")], [])
    assert err.block == "p" and "ops must be a non-empty string of * and /" in str(err)
    err = compile_error([block("a", "Constant", value=[1.0, 2.0]),
                         block("b", "Constant", value=[1.0, 2.0, 3.0]),
                         block("p", "Product"), block("y", "Output")],
                        [("a.y", "p.u1"), ("b.y", "p.u2"), ("p.y", "y.u")])
    assert err.block == "p" and "width 2" in str(err)


# ----- MathFunction: smooth functions against numpy -----

ONE_INPUT = [
    ("exp", np.exp, -2.0, 2.0), ("log", np.log, 0.1, 5.0), ("log10", np.log10, 0.1, 5.0),
    ("sqrt", np.sqrt, 0.0, 4.0), ("square", np.square, -3.0, 3.0),
    ("reciprocal", np.reciprocal, 0.5, 3.0), ("sin", np.sin, -3.0, 3.0),
    ("cos", np.cos, -3.0, 3.0), ("tan", np.tan, -1.2, 1.2), ("asin", np.arcsin, -0.99, 0.99),
    ("acos", np.arccos, -0.99, 0.99), ("atan", np.arctan, -5.0, 5.0),
    ("sinh", np.sinh, -2.0, 2.0), ("cosh", np.cosh, -2.0, 2.0), ("tanh", np.tanh, -3.0, 3.0),
]


@pytest.mark.parametrize("function, reference, lo, hi", ONE_INPUT, ids=[f[0] for f in ONE_INPUT])
def test_one_input_functions_match_numpy(function, reference, lo, hi):
    r = simulate([ramp("u", lo, hi), block("f", "MathFunction", function=function),
                  block("x", "Output"), block("y", "Output")],
                 [("u.y", "f.u"), ("u.y", "x.u"), ("f.y", "y.u")], stop=1.0, output_interval=0.02)
    assert r["x"][0] == lo and r["x"][-1] == pytest.approx(hi)
    assert r["y"] == pytest.approx(reference(r["x"]), rel=1e-13, abs=1e-15)


TWO_INPUTS = [("atan2", np.arctan2), ("pow", np.power), ("hypot", np.hypot)]


@pytest.mark.parametrize("function, reference", TWO_INPUTS, ids=[f[0] for f in TWO_INPUTS])
def test_two_input_functions_match_numpy_with_scalar_expansion(function, reference):
    r = simulate([block("a", "Ramp", slope=[1.0, 2.0, 3.0], initial=0.1),
                  block("b", "Sine", amplitude=2.0, bias=0.5),
                  block("f", "MathFunction", function=function),
                  block("xa", "Output"), block("xb", "Output"), block("y", "Output")],
                 [("a.y", "f.u1"), ("b.y", "f.u2"), ("a.y", "xa.u"), ("b.y", "xb.u"),
                  ("f.y", "y.u")], stop=1.0, output_interval=0.02)
    assert r["y"].shape == (len(r.time), 3)
    expected = reference(r["xa"], r["xb"][:, None])
    assert r["y"] == pytest.approx(expected, rel=1e-13, abs=1e-15)


def test_min_and_max_switch_branches_at_located_crossings():
    r = simulate([block("s", "Sine", frequency=1 / (2 * math.pi)), block("c", "Constant", value=0.3),
                  block("lo", "MathFunction", function="min"),
                  block("hi", "MathFunction", function="max"),
                  block("x", "Output"), block("ylo", "Output"), block("yhi", "Output")],
                 [("s.y", "lo.u1"), ("c.y", "lo.u2"), ("s.y", "hi.u1"), ("c.y", "hi.u2"),
                  ("s.y", "x.u"), ("lo.y", "ylo.u"), ("hi.y", "yhi.u")],
                 stop=7.0, output_interval=0.05)
    assert r["ylo"] == pytest.approx(np.minimum(r["x"], 0.3), abs=1e-12)
    assert r["yhi"] == pytest.approx(np.maximum(r["x"], 0.3), abs=1e-12)
    crossings = [math.asin(0.3), math.pi - math.asin(0.3), 2 * math.pi + math.asin(0.3)]
    assert event_times(r, "lo", "state") == pytest.approx(crossings, abs=1e-12)


# ----- MathFunction: floor, ceil, mod, rem -----

WAVE_INTEGERS = sorted(  # where 2.5 sin t is a whole number, 0 < t < 6
    [math.asin(0.4), math.asin(0.8), math.pi - math.asin(0.8), math.pi - math.asin(0.4),
     math.pi, math.pi + math.asin(0.4), math.pi + math.asin(0.8),
     2 * math.pi - math.asin(0.8), 2 * math.pi - math.asin(0.4)])


@pytest.mark.parametrize("function, reference, events", [
    ("floor", lambda u: np.floor(u), WAVE_INTEGERS),
    ("ceil", lambda u: np.ceil(u), WAVE_INTEGERS),
    ("mod", lambda u: np.mod(u, 1.0), WAVE_INTEGERS),
    ("rem", lambda u: np.fmod(u, 1.0), [t for t in WAVE_INTEGERS if t != math.pi]),  # no jump at 0
])
def test_integer_functions_follow_a_wave_up_and_down(function, reference, events):
    blocks = [block("s", "Sine", amplitude=2.5, frequency=1 / (2 * math.pi)),
              block("f", "MathFunction", function=function), block("x", "Output"),
              block("y", "Output")]
    wires = [("s.y", "x.u"), ("f.y", "y.u")]
    if function in ("mod", "rem"):
        blocks.append(block("one", "Constant", value=1.0))
        wires += [("s.y", "f.u1"), ("one.y", "f.u2")]
    else:
        wires.append(("s.y", "f.u"))
    r = simulate(blocks, wires, stop=6.0, output_interval=0.01)
    assert event_times(r, "f", function) == pytest.approx(events, abs=1e-12)
    # At t = 0 the wave starts at 0 and rises: the latched mode is the right limit there,
    # so ceil starts at 1 (numpy's ceil(0) = 0 is the value at the instant itself).
    away = away_from(r, events + [0.0])
    assert r["y"][0] == (1.0 if function == "ceil" else 0.0)
    assert r["y"][away] == pytest.approx(reference(r["x"][away]), abs=1e-12)


def integrator_ramp(extra_blocks, extra_wires, x0=-1.0, slope=1.5, **settings):
    """u = x0 + slope * t from an integrator: the solver follows a line exactly."""
    blocks = [block("c", "Constant", value=slope), block("u", "Integrator", x0=x0),
              block("x", "Output")] + extra_blocks
    wires = [("c.y", "u.u"), ("u.y", "x.u")] + extra_wires
    return simulate(blocks, wires, **{"stop": 2.0, "output_interval": 0.05, **settings})


def test_floor_and_mod_of_an_integrator_ramp_switch_exactly_at_the_multiples():
    r = integrator_ramp([block("d", "Constant", value=0.7),
                         block("fl", "MathFunction", function="floor"),
                         block("mo", "MathFunction", function="mod"),
                         block("yf", "Output"), block("ym", "Output")],
                        [("u.y", "fl.u"), ("u.y", "mo.u1"), ("d.y", "mo.u2"),
                         ("fl.y", "yf.u"), ("mo.y", "ym.u")], stop=1.9)
    floor_times = [(k + 1.0) / 1.5 for k in (0, 1)]                # u = 0, 1
    mod_times = [(0.7 * k + 1.0) / 1.5 for k in (-1, 0, 1, 2)]    # u = -0.7, 0, 0.7, 1.4
    assert event_times(r, "fl", "floor") == pytest.approx(floor_times, abs=1e-12)
    assert event_times(r, "mo", "mod") == pytest.approx(mod_times, abs=1e-12)
    for t in mod_times:  # left limit at the top of the sawtooth, right limit at 0
        rows = np.flatnonzero(r.time == event_times(r, "mo", "mod")[mod_times.index(t)])
        assert len(rows) == 2
        assert r["ym"][rows] == pytest.approx([0.7, 0.0], abs=1e-12)
    for t in floor_times:
        rows = np.flatnonzero(r.time == event_times(r, "fl", "floor")[floor_times.index(t)])
        assert r["yf"][rows[1]] - r["yf"][rows[0]] == 1.0
    away = away_from(r, mod_times + floor_times)
    assert r["yf"][away] == pytest.approx(np.floor(r["x"][away]), abs=0)
    assert r["ym"][away] == pytest.approx(np.mod(r["x"][away], 0.7), abs=1e-12)


def test_mod_and_rem_with_a_negative_divisor_and_a_falling_input_match_numpy():
    r = integrator_ramp([block("d", "Constant", value=-0.7),
                         block("mo", "MathFunction", function="mod"),
                         block("re", "MathFunction", function="rem"),
                         block("ym", "Output"), block("yr", "Output")],
                        [("u.y", "mo.u1"), ("d.y", "mo.u2"), ("u.y", "re.u1"), ("d.y", "re.u2"),
                         ("mo.y", "ym.u"), ("re.y", "yr.u")], x0=1.2, slope=-1.3, stop=1.9)
    away = away_from(r, [e.time for e in r.events])
    assert r["ym"][away] == pytest.approx(np.mod(r["x"][away], -0.7), abs=1e-12)
    assert r["yr"][away] == pytest.approx(np.fmod(r["x"][away], -0.7), abs=1e-12)
    # u falls from 1.2 to -1.27: mod wraps at 0.7, 0 and -0.7; rem not at 0.
    assert event_times(r, "mo", "mod") == pytest.approx([0.5 / 1.3, 1.2 / 1.3, 1.9 / 1.3],
                                                         abs=1e-12)
    assert event_times(r, "re", "rem") == pytest.approx([0.5 / 1.3, 1.9 / 1.3], abs=1e-12)


def test_floor_of_a_jumping_input_settles_in_one_event():
    r = simulate([block("s", "Step", time=0.5, before=0.25, after=37.5),
                  block("f", "MathFunction", function="floor"), block("y", "Output")],
                 [("s.y", "f.u"), ("f.y", "y.u")], stop=1.0, output_interval=0.25)
    rows = np.flatnonzero(r.time == 0.5)
    assert list(r["y"][rows]) == [0.0, 37.0]
    assert event_times(r, "f", "floor") == [0.5]


def test_integer_part_band_tests_are_consistent():
    # Moving up from k leaves the band exactly where the band of the result starts.
    for rule in ("floor", "ceil", "trunc"):
        part = IntegerPart(rule)
        for k in (-3.0, -1.0, 0.0, 1.0, 2.0):
            assert part.band(k)[1] == part.band(k + 1.0)[0]
            for q in (k - 0.5, k, k + 0.5):
                assert part.up(q) == part.value(q + 1e-9)
                assert part.down(q) == part.value(q - 1e-9)


# ----- Expression -----

def test_expression_uses_named_inputs_and_diagram_parameters_elementwise():
    r = simulate([block("t", "Clock"), block("v", "Constant", value=[1.0, 2.0]),
                  block("f", "Expression", formula="k * x + y**2 - sin(x) / w", inputs="x, y"),
                  block("z", "Output")],
                 [("t.y", "f.x"), ("v.y", "f.y"), ("f.y", "z.u")],
                 parameters={"k": 3.0, "w": "2 * k"}, stop=1.0, output_interval=0.25)
    t = r.time[:, None]
    assert r["z"] == pytest.approx(3.0 * t + np.array([1.0, 4.0]) - np.sin(t) / 6.0, rel=1e-14)


def test_expression_parameters_can_be_overridden_at_run_time():
    d = diagram([block("c", "Constant", value=2.0), block("f", "Expression", formula="a * u"),
                 block("z", "Output")], [("c.y", "f.u"), ("f.y", "z.u")],
                parameters={"a": 1.5}, stop=1.0)
    assert blocksim.simulate(d, params={"a": -4.0})["z"][-1] == -8.0


@pytest.mark.parametrize("params, message", [
    ({"formula": "__import__('os')"}, "formula:"),
    ({"formula": "u.__class__"}, "attribute access is not allowed"),
    ({"formula": "u + zz"}, "unknown name 'zz'"),
    ({"formula": "u + vec"}, "constant 'vec' is an array"),
    ({"formula": "u +"}, "syntax error"),
    ({"formula": "x", "inputs": "x, 1y"}, "input name '1y' is not a valid name"),
    ({"formula": "x", "inputs": "x, x"}, "input names repeat"),
    ({"formula": "inf", "inputs": "inf"}, "clashes with the built-in constant inf"),
])
def test_bad_expressions_are_compile_errors_naming_the_block(params, message):
    err = compile_error([block("c", "Constant", value=1.0), block("f", "Expression", **params)],
                        [("c.y", "f.u")], parameters={"vec": [1.0, 2.0]})
    assert err.block == "f" and "block 'f'" in str(err)
    assert message in str(err)


# ----- Mux and Demux -----

def test_mux_concatenates_and_demux_splits_evenly():
    r = simulate([block("a", "Constant", value=1.0), block("b", "Constant", value=[2.0, 3.0]),
                  block("t", "Clock"), block("m", "Mux", inputs=3),
                  block("d", "Demux", outputs=2), block("all", "Output"),
                  block("y1", "Output"), block("y2", "Output")],
                 [("a.y", "m.u1"), ("b.y", "m.u2"), ("t.y", "m.u3"), ("m.y", "d.u"),
                  ("m.y", "all.u"), ("d.y1", "y1.u"), ("d.y2", "y2.u")],
                 stop=1.0, output_interval=0.5)
    assert r["all"][-1] == pytest.approx([1.0, 2.0, 3.0, 1.0])
    assert r["y1"][-1] == pytest.approx([1.0, 2.0]) and r["y2"][-1] == pytest.approx([3.0, 1.0])
    assert r["y2"][:, 1] == pytest.approx(r.time)


def test_demux_of_an_indivisible_width_is_a_compile_error_naming_the_block():
    err = compile_error([block("c", "Constant", value=[1.0, 2.0, 3.0]),
                         block("d", "Demux", outputs=2), block("y", "Output")],
                        [("c.y", "d.u"), ("d.y1", "y.u")])
    assert err.block == "d"
    assert "width 3, which cannot be split evenly into 2 outputs" in str(err)


def test_a_domain_error_stops_the_run_naming_the_block():
    with pytest.raises(SimulationError) as info:
        simulate([ramp("u", 0.5, -0.5), block("f", "MathFunction", function="log"),
                  block("y", "Output")], [("u.y", "f.u"), ("f.y", "y.u")], stop=1.0,
                 output_interval=0.1)
    assert info.value.block == "f" and "outside its domain" in str(info.value)
    assert 0.4 <= info.value.time <= 0.5


def test_expression_inside_a_subsystem_sees_the_subsystem_parameters():
    inner = {"parameters": {"k": "2 * g"},
             "blocks": [block("u", "Inport"), block("f", "Expression", formula="k * u + g"),
                        block("y", "Outport")],
             "wires": [{"src": "u.y", "dst": "f.u"}, {"src": "f.y", "dst": "y.u"}]}
    sub = {"id": "sub", "type": "Subsystem", "diagram": inner}
    r = simulate([block("c", "Constant", value=3.0), sub, block("z", "Output")],
                 [("c.y", "sub.u"), ("sub.y", "z.u")], parameters={"g": 0.5}, stop=1.0)
    assert r["z"][-1] == 3.5
