"""bdf at events: impacts of the ball (no air resistance) at rtol 1e-10 against the closed
form. bdf locates on its own interpolant and restarts with scipy's initial step; locating
on a fresh order-1 BDF integrated to each trial time, and restarting with the step the
last segment ended with, put the sixth impact 1.2e-8 s off (scipy's own BDF restarted at
the same impacts and apexes: 8.9e-10 s, as blocksim now)."""
from pathlib import Path

import numpy as np
import pytest

import blocksim
import references as ref

BALL = Path(__file__).resolve().parents[2] / "diagrams" / "bouncing_ball.json"


@pytest.mark.parametrize("solver, tolerance", [("bdf", 2e-9), ("radau", 1e-12)])
def test_stiff_solvers_put_the_ball_impacts_on_the_closed_form(solver, tolerance):
    results = blocksim.simulate(blocksim.load(BALL), solver=solver, rtol=1e-10, atol=1e-10,
                                params={"beta": 0}, stop_time=12.0)
    impacts = np.array([e.time for e in results.events_of("reset", "ball")])
    assert len(impacts) == 6  # the sixth at 11.6 s, the seventh at 12.5 s
    error = np.abs(impacts - ref.ball_bounce_times_no_air(6))
    assert error.max() < tolerance
