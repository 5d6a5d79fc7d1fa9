"""frequency_response by simulation: a relay's describing function (events inside the
measurement window), a lag's exact response, the transient waited out, bad requests."""
import math

import numpy as np
import pytest

import blocksim
from blocksim.analysis import AnalysisError
from builders import block, diagram


def relay(hysteresis=0.0):
    return diagram([block("u", "Inport"),
                    block("r", "Relay", on_point=hysteresis, off_point=-hysteresis,
                          on_value=1.0, off_value=-1.0),
                    block("y", "Output")], [("u.y", "r.u"), ("r.y", "y.u")], stop=1.0)


def test_relay_first_harmonic_is_its_describing_function():
    # an ideal relay of +-1 driven by a sine of amplitude a: 4 / (pi a), no phase shift
    fr = blocksim.frequency_response(relay(), "u", "y", [2.0], amplitude=0.5, periods=1,
                                     settle_periods=1)
    assert fr.response[0] == pytest.approx(4 / (math.pi * 0.5), rel=1e-6)
    # with hysteresis h the output lags by asin(h / a)
    fr = blocksim.frequency_response(relay(0.25), "u", "y", [2.0], amplitude=0.5,
                                     periods=1, settle_periods=1)
    assert abs(fr.response[0]) == pytest.approx(4 / (math.pi * 0.5), rel=1e-6)
    assert fr.phase_deg[0] == pytest.approx(-math.degrees(math.asin(0.5)), abs=1e-4)


def test_first_order_lag_from_rest_waits_out_its_transient():
    d = diagram([block("u", "Inport"), block("g", "TransferFunction", num=[1.0],
                                             den=[1.0, 1.0]), block("y", "Output")],
                [("u.y", "g.u"), ("g.y", "y.u")], stop=1.0)
    omega = np.array([0.5, 5.0])
    fr = blocksim.frequency_response(d, "u", "y", omega)
    assert fr.settled.all()
    exact = 1 / (1j * omega + 1)
    np.testing.assert_allclose(fr.response, exact, rtol=2e-4)
    assert fr.magnitude_db.shape == (2,) and fr.omega.tolist() == omega.tolist()


def test_bad_frequencies_and_points():
    with pytest.raises(AnalysisError, match="frequencies must be positive"):
        blocksim.frequency_response(relay(), "u", "y", [0.0, 1.0])
    with pytest.raises(AnalysisError, match="unknown analysis point 'nope'"):
        blocksim.frequency_response(relay(), "nope", "y", [1.0])


def test_a_delay_is_simulated_from_a_trimmed_point():
    d = diagram([block("u", "Inport"), block("d", "TransportDelay", delay=0.5),
                 block("y", "Output")], [("u.y", "d.u"), ("d.y", "y.u")], stop=1.0)
    op = blocksim.operating_point(d, inputs={"u": 0.0})  # trimmed with the Pade states
    assert "d[0]" in op.states
    fr = blocksim.frequency_response(d, "u", "y", [2.0], at=op, periods=1, settle_periods=1)
    assert fr.response[0] == pytest.approx(np.exp(-2j * 0.5), abs=1e-6)  # the delay itself
