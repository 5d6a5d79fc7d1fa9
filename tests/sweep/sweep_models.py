"""Small diagrams for the sweep tests, with closed forms, and a table comparison."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

import blocksim

ROOT = Path(__file__).resolve().parents[2]
BALL = ROOT / "diagrams" / "bouncing_ball.json"


def log_integral(c: float) -> float:
    """The integral of log(c - t) over [0, 1], c > 1: what `log_diagram` logs at t = 1."""
    return -(c - 1) * math.log(c - 1) + (c - 1) + c * math.log(c) - c


def log_diagram() -> blocksim.DiagramBuilder:
    """y = integral of log(c - t) dt up to t = 1: finishes for c > 1, and fails (log of a
    negative number) for c < 1, naming the block `log`."""
    d = blocksim.DiagramBuilder(stop=1, rtol=1e-10, atol=1e-12, parameters={"c": 2.0})
    clock, c = d.add("Clock", id="clock"), d.add("Constant", id="c", value="c")
    diff = d.add("Sum", id="diff", signs="+-")
    c.y >> diff.u1
    clock.y >> diff.u2
    log = d.add("MathFunction", id="log", function="log")
    diff.y >> log.u
    integral = d.add("Integrator", id="int")
    log.y >> integral.u
    integral.y >> d.add("Output", id="y").u
    return d


def assert_same_tables(a: blocksim.SweepTable, b: blocksim.SweepTable) -> None:
    """Bit for bit the same rows (NaN equal to NaN), columns and statuses."""
    assert a.columns == b.columns
    assert sorted(a.rows) == sorted(b.rows)
    for i in a.rows:
        for x, y in zip(a.rows[i], b.rows[i]):
            if isinstance(x, float):
                assert np.array_equal(np.float64(x), np.float64(y), equal_nan=True), (i, x, y)
                assert np.float64(x).tobytes() == np.float64(y).tobytes() or math.isnan(x)
            else:
                assert x == y, (i, x, y)
