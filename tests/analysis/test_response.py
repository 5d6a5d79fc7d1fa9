"""analysis.response (what the editor's dialogs use without python-control) against
python-control on the example loops."""
import numpy as np
import pytest

import blocksim
from blocksim.analysis import response
from builders import DIAGRAMS

ct = pytest.importorskip("control")


@pytest.fixture(scope="module")
def loops():
    d = blocksim.load(DIAGRAMS / "lag_leadlag_loop.json")
    op = blocksim.operating_point(d, time=2.0)
    closed = blocksim.linearize(d, ["r"], ["y"], at=op, use_control=False)
    opened = blocksim.linearize(d, ["error"], ["lag2"], at=op, open_loops=["lag2"],
                                use_control=False)  # L from e to y: C P
    p = blocksim.load(DIAGRAMS / "pi_1khz.json")
    sampled = blocksim.linearize(p, ["error"], ["plant"], at=blocksim.operating_point(p),
                                 open_loops=["plant"], use_control=False)
    return closed, opened, sampled


def test_bode_and_step_agree_with_python_control(loops):
    closed, _, sampled = loops
    omega = np.logspace(-2, 2, 9)
    mag, phase = response.bode(closed, omega)
    ref_mag, ref_phase, _ = ct.frequency_response(closed.to_control(), omega)
    np.testing.assert_allclose(mag, 20 * np.log10(ref_mag), atol=1e-10)
    np.testing.assert_allclose(np.radians(phase), np.unwrap(ref_phase), atol=1e-10)
    t = np.linspace(0, 5, 501)
    np.testing.assert_allclose(response.step(closed, t)[0],
                               ct.step_response(closed.to_control(), T=t).outputs, atol=1e-10)
    k = np.arange(50) * 1e-3
    np.testing.assert_allclose(response.step(sampled, k)[0],
                               ct.step_response(sampled.to_control(), T=k).outputs, atol=1e-12)


@pytest.mark.filterwarnings("ignore:stability_margins")
def test_margins_agree_with_python_control(loops):
    _, opened, sampled = loops
    for loop in (opened, sampled):  # input at the error, output the plant's: L = C P
        got = response.margins(loop)
        gm, pm, w180, wc = ct.margin(loop.to_control())
        assert got.phase_margin_deg == pytest.approx(pm, rel=1e-3)
        assert got.gain_crossover == pytest.approx(wc, rel=1e-3)
        if np.isfinite(gm) and gm < 1e6:  # (python-control: 1e15 at 4e8 rad/s, roundoff)
            assert 10 ** (got.gain_margin_db / 20) == pytest.approx(gm, rel=1e-3)
        else:
            assert got.gain_margin_db == np.inf


def test_gain_margin_of_three_lags():
    # L = 2 / (s + 1)^3: the phase is -180 at w = sqrt(3), where |L| = 1/4: 12.04 dB
    sys = ct.ss(ct.tf([2.0], [1.0, 3.0, 3.0, 1.0]))
    model = blocksim.analysis.LinearModel(sys.A, sys.B, sys.C, sys.D)
    got = response.margins(model)
    assert got.phase_crossover == pytest.approx(np.sqrt(3), rel=1e-5)
    assert got.gain_margin_db == pytest.approx(20 * np.log10(4.0), abs=1e-4)
