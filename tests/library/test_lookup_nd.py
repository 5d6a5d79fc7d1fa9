"""LookupTableND against scipy.interpolate.RegularGridInterpolator ("linear"): to 1e-14
inside the grid, clipped and extrapolated outside it; every breakpoint crossing a located
event at its closed-form instant; bad tables refused naming the parameter. Both backends."""
import math

import numpy as np
import pytest
from both_backends import SIN, run_both
from builders import block, diagram
from scipy.interpolate import RegularGridInterpolator

import blocksim
from blocksim.errors import CompileError

TIGHT = {"rtol": 1e-12, "atol": 1e-12}
X1 = [0.0, 0.5, 1.2, 2.0]
X2 = [-1.0, -0.3, 0.4, 1.0]
TABLE = np.array([[1.0, 2.0, 0.5, -1.0], [0.3, -1.0, 4.0, 2.0], [2.0, 2.5, -0.5, 0.0],
                  [0.0, 1.0, 1.5, 3.0]])


def ramp_and_sine(stop, out_of_range="clip", slope=1.0, start=0.0, amplitude=1.0):
    """u1 = start + slope t (a Ramp), u2 = amplitude sin t; logs y, u1, u2."""
    return diagram([block("r", "Ramp", slope=slope, initial=start),
                    block("s", "Sine", frequency=SIN, amplitude=amplitude),
                    block("t", "LookupTableND", breakpoints1=X1, breakpoints2=X2,
                          table=TABLE.tolist(), out_of_range=out_of_range),
                    block("y", "Output"), block("u1", "Output"), block("u2", "Output"),
                    block("w", "Integrator")],
                   [("r.y", "t.u1"), ("s.y", "t.u2"), ("t.y", "y.u"), ("r.y", "u1.u"),
                    ("s.y", "u2.u"), ("s.y", "w.u")],
                   stop=stop, output_interval=0.01, **TIGHT)


def test_2d_table_matches_regular_grid_interpolator_inside_the_grid():
    r = run_both(ramp_and_sine(1.99))
    reference = RegularGridInterpolator((X1, X2), TABLE, method="linear")
    expected = reference(np.column_stack([r["u1"], r["u2"]]))
    np.testing.assert_allclose(r["y"], expected, rtol=0, atol=1e-14)


def test_every_breakpoint_crossing_is_located():
    """u1 = t crosses 0.5, 1.2, 2.0; sin t crosses 0.4 at asin 0.4 and pi - asin 0.4, -0.3
    at pi + asin 0.3; the table's segment changes exactly there (t = 0 starts on both
    grids' breakpoints 0.0 and is no event)."""
    r = run_both(ramp_and_sine(4.0))
    a, b = math.asin(0.4), math.asin(0.3)
    expected = sorted([0.5, 1.2, 2.0, a, math.pi - a, math.pi + b])
    found = [e.time for e in r.events_of(block="t") if e.kind == "segment"]
    np.testing.assert_allclose(found, expected, rtol=0, atol=1e-12)


def test_clip_holds_the_inputs_at_the_grid_edges():
    r = run_both(ramp_and_sine(3.0, slope=1.0, start=-0.5, amplitude=1.5))
    reference = RegularGridInterpolator((X1, X2), TABLE, method="linear")
    clipped = np.column_stack([np.clip(r["u1"], X1[0], X1[-1]), np.clip(r["u2"], -1.0, 1.0)])
    np.testing.assert_allclose(r["y"], reference(clipped), rtol=0, atol=1e-14)


def test_extrapolate_continues_the_edge_cells():
    r = run_both(ramp_and_sine(3.0, "extrapolate", slope=1.0, start=-0.5, amplitude=1.5))
    reference = RegularGridInterpolator((X1, X2), TABLE, method="linear", bounds_error=False,
                                        fill_value=None)
    expected = reference(np.column_stack([r["u1"], r["u2"]]))
    np.testing.assert_allclose(r["y"], expected, rtol=0, atol=1e-13)
    # only the inner breakpoints switch: u1 = t - 0.5 crosses 0.5 and 1.2 (not 0 or 2),
    # u2 = 1.5 sin t crosses 0.4 twice before t = 3 (not +-1)
    a = math.asin(0.4 / 1.5)
    found = [e.time for e in r.events_of(block="t") if e.kind == "segment"]
    np.testing.assert_allclose(found, sorted([1.0, 1.7, a, math.pi - a]), rtol=0, atol=1e-12)


def test_3d_table_with_vector_inputs():
    """Three inputs, the first a 2-vector (one lookup per element; the others expand)."""
    rng = np.random.default_rng(7)
    grid = ([0.0, 0.4, 1.0, 1.5], [-1.0, 0.0, 1.0], [0.0, 0.7, 2.0])
    table = rng.normal(size=(4, 3, 3))
    d = diagram([block("r", "Ramp", slope=0.7), block("r2", "Ramp", slope=0.4, initial=0.1),
                 block("mx", "Mux"), block("s", "Sine", frequency=SIN),
                 block("c", "Clock"),
                 block("t", "LookupTableND", breakpoints1=grid[0], breakpoints2=grid[1],
                       breakpoints3=grid[2], table=table.tolist()),
                 block("y", "Output"), block("u1", "Output"), block("u2", "Output"),
                 block("u3", "Output"), block("w", "Integrator")],
                [("r.y", "mx.u1"), ("r2.y", "mx.u2"), ("mx.y", "t.u1"), ("s.y", "t.u2"),
                 ("c.y", "t.u3"), ("t.y", "y.u"), ("mx.y", "u1.u"), ("s.y", "u2.u"),
                 ("c.y", "u3.u"), ("s.y", "w.u")], stop=1.99, output_interval=0.01, **TIGHT)
    r = run_both(d)
    reference = RegularGridInterpolator(grid, table, method="linear")
    for k in range(2):
        points = np.column_stack([r["u1"][:, k], r["u2"], r["u3"]])
        np.testing.assert_allclose(r["y"][:, k], reference(points), rtol=0, atol=1e-14)


@pytest.mark.parametrize("params, words", [
    ({"table": [1.0, 2.0]}, "2 to 4 dimensions"),
    ({"breakpoints1": [0.0, 1.0, 2.0]}, "'breakpoints1' has 3 points but the table has 2"),
    ({"breakpoints2": [1.0, 1.0]}, "'breakpoints2' must be strictly increasing"),
    ({"table": [[[0.0, 1.0]] * 2] * 2, "breakpoints3": [0.0, 1.0, 2.0]},
     "'breakpoints3' has 3 points"),
    ({"out_of_range": "wrap"}, "'out_of_range'"),
])
def test_bad_tables_name_the_parameter(params, words):
    d = diagram([block("c", "Constant"), block("t", "LookupTableND", **params),
                 block("y", "Output")], [("c.y", "t.u1"), ("c.y", "t.u2"), ("t.y", "y.u")])
    with pytest.raises(CompileError) as info:
        blocksim.compile(d)
    assert info.value.block == "t" and words in str(info.value)
