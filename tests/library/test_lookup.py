"""LookupTable1D against np.interp, its kinks as located events, and bad tables.

Ramps come from an integrator of a constant (exact lines) or from a stateless Ramp block,
so values compare to 1e-12 and event times to 1e-12 s; integrals run at rtol 1e-12 and are
compared to 1e-9.
"""
import math

import numpy as np
import pytest
from builders import block, diagram

from blocks.lookup import PiecewiseLinear
import blocksim
from blocksim.errors import CompileError

TIGHT = {"rtol": 1e-12, "atol": 1e-12}
X = [-1.0, 0.0, 0.5, 2.0]
Y = [2.0, 0.0, 1.0, -1.0]


def lookup(source: dict, integrate: bool = False, **params):
    """Run `src` -> LookupTable1D `lk`; log the input as `x`, the output as `y`."""
    blocks = [source, block("lk", "LookupTable1D", **params), block("x", "Output"),
              block("y", "Output")]
    wires = [("src.y", "lk.u"), ("src.y", "x.u"), ("lk.y", "y.u")]
    if integrate:
        blocks += [block("int", "Integrator"), block("iy", "Output")]
        wires += [("lk.y", "int.u"), ("int.y", "iy.u")]
    return blocks, wires


def run(source, integrate=False, settings=None, **params):
    blocks, wires = lookup(source, integrate, **params)
    return blocksim.simulate(diagram(blocks, wires, **{**TIGHT, **(settings or {})}))


def extrapolated(u, x, y):
    """Linear interpolation that continues the end segments outside the breakpoints."""
    u = np.asarray(u, dtype=float)
    out = np.interp(u, x, y)
    left, right = u < x[0], u > x[-1]
    out[left] = y[0] + (y[1] - y[0]) / (x[1] - x[0]) * (u[left] - x[0])
    out[right] = y[-1] + (y[-1] - y[-2]) / (x[-1] - x[-2]) * (u[right] - x[-1])
    return out


def away_from(r, times, eps=1e-9):
    return np.all(np.abs(r.time[:, None] - np.asarray(times)[None, :]) > eps, axis=1)


def test_clip_interpolates_and_holds_the_end_values():
    r = run(block("src", "Ramp", slope=5.0, start=0.0, initial=-2.0), breakpoints=X, table=Y,
            settings={"stop": 1.0, "output_interval": 0.01})
    assert r["x"][0] == -2.0 and r["x"][-1] == pytest.approx(3.0)
    assert r["y"] == pytest.approx(np.interp(r["x"], X, Y), abs=1e-12)


def test_linear_extrapolation_continues_the_end_segments():
    r = run(block("src", "Ramp", slope=5.0, start=0.0, initial=-2.0), breakpoints=X, table=Y,
            extrapolation="linear", settings={"stop": 1.0, "output_interval": 0.01})
    assert r["y"] == pytest.approx(extrapolated(r["x"], X, Y), abs=1e-12)
    assert r["y"][0] == pytest.approx(4.0) and r["y"][-1] == pytest.approx(-7.0 / 3.0)


def test_breakpoints_are_located_events_and_the_integral_is_exact():
    # u = -2 + 2t crosses -1, 0, 0.5 and 2 at t = 0.5, 1, 1.25 and 2.
    src = block("c", "Constant", value=2.0)
    blocks, wires = lookup(block("src", "Integrator", x0=-2.0), True, breakpoints=X, table=Y)
    r = blocksim.simulate(
        diagram(blocks + [src], wires + [("c.y", "src.u")], stop=2.5, output_interval=0.1,
                **TIGHT))
    times = [e.time for e in r.events_of("segment", "lk")]
    assert times == pytest.approx([0.5, 1.0, 1.25, 2.0], abs=1e-12)
    for t in times:  # continuous: the left and right limits agree
        rows = np.flatnonzero(r.time == t)
        assert len(rows) == 2 and abs(r["y"][rows[0]] - r["y"][rows[1]]) < 1e-12
    # Integral over t of the table at u(t): trapezoids per segment, times du/dt = 2.
    fine_u = np.array([-2.0, -1.0, 0.0, 0.5, 2.0, 3.0])
    exact = np.sum(np.diff(fine_u) * (np.interp(fine_u[1:], X, Y) + np.interp(fine_u[:-1], X, Y))
                   / 2) / 2.0
    assert r["iy"][-1] == pytest.approx(exact, rel=1e-9)


def test_a_wave_crosses_breakpoints_both_ways_elementwise():
    amp = [1.5, 0.75]  # vector input: each element has its own segment
    r = run(block("src", "Sine", amplitude=amp, frequency=1 / (2 * math.pi)), breakpoints=X,
            table=Y, settings={"stop": 6.0, "output_interval": 0.02})
    assert r["y"].shape == (len(r.time), 2)
    for k in range(2):
        assert r["y"][:, k] == pytest.approx(np.interp(r["x"][:, k], X, Y), abs=1e-12)
    # Element 0 (1.5 sin t) crosses 0.5 twice, 0 once, -1 twice; element 1 (0.75 sin t)
    # crosses 0.5 twice and 0 once. Each element's segment change is logged, in time order.
    a0, a1 = math.asin(0.5 / 1.5), math.asin(0.5 / 0.75)
    b0 = math.asin(1 / 1.5)
    expected = sorted([a0, math.pi - a0, math.pi, math.pi + b0, 2 * math.pi - b0,
                       a1, math.pi - a1, math.pi])
    times = [e.time for e in r.events_of("segment", "lk")]
    assert times == pytest.approx(expected, abs=1e-12)


def test_starting_on_a_breakpoint_and_falling_uses_the_lower_segment():
    # u = 0.5 - t starts exactly at the breakpoint 0.5 and moves into [0, 0.5].
    r = run(block("src", "Ramp", slope=-1.0, start=0.0, initial=0.5), True, breakpoints=X,
            table=Y, settings={"stop": 0.5, "output_interval": 0.1})
    assert r["y"] == pytest.approx(np.interp(r["x"], X, Y), abs=1e-12)
    assert r["iy"][-1] == pytest.approx(0.25, rel=1e-9)  # mean of 1 and 0 over 0.5 s


def test_a_long_table_and_a_jump_across_many_breakpoints():
    x = np.linspace(0.0, 10.0, 51)
    y = np.sin(x)
    r = run(block("src", "Step", time=0.5, before=0.05, after=9.33), breakpoints=x.tolist(),
            table=y.tolist(), settings={"stop": 1.0, "output_interval": 0.25})
    rows = np.flatnonzero(r.time == 0.5)
    assert r["y"][rows] == pytest.approx(np.interp([0.05, 9.33], x, y), abs=1e-12)
    assert [e.time for e in r.events_of("segment", "lk")] == [0.5]


def test_piecewise_linear_segments_continue_each_other():
    table = PiecewiseLinear([0.0, 1.0, 3.0], [1.0, 3.0, 2.0])
    for j in range(table.segments - 1):
        _, _, hi, anchor, value, slope = table.slots(j)
        nxt = table.slots(j + 1)
        assert nxt[1] == hi  # the next segment starts where this one ends
        assert value + slope * (hi - anchor) == pytest.approx(nxt[4] + nxt[5] * (hi - nxt[3]))


@pytest.mark.parametrize("params, message", [
    ({"breakpoints": [0.0, 1.0, 1.0], "table": [0.0, 1.0, 2.0]}, "strictly increasing"),
    ({"breakpoints": [0.0, 2.0, 1.0], "table": [0.0, 1.0, 2.0]}, "strictly increasing"),
    ({"breakpoints": [0.0, 1.0, 2.0], "table": [0.0, 1.0]}, "one value per element"),
    ({"breakpoints": [1.0], "table": [0.0]}, "at least 2 points"),
    ({"breakpoints": "[0, inf]", "table": [0.0, 1.0]}, "must be finite"),
    ({"extrapolation": "spline"}, "choose one of 'clip', 'linear'"),
])
def test_bad_tables_are_compile_errors_naming_the_block(params, message):
    blocks, wires = lookup(block("src", "Clock"), **params)
    with pytest.raises(CompileError) as info:
        blocksim.simulate(diagram(blocks, wires, stop=1.0))
    assert info.value.block == "lk" and "block 'lk'" in str(info.value)
    assert message in str(info.value)
