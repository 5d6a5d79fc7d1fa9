"""Issue 29's acceptance: linearizations against analytic models and python-control,
operating points to 1e-10, the simulated frequency response against the linearization,
the linearised step response against a nonlinear run."""
import copy

import numpy as np
import pytest

import blocksim
from builders import DIAGRAMS

ct = pytest.importorskip("control")

# The dc motor's parameters (diagrams/dc_motor_pid.json)
R, L, KE, J, B, KT = 1.0, 0.001, 0.1, 0.01, 0.001, 0.1
KP, KI, KD, N = 8.0, 15.0, 0.2, 100.0


def rel(a, b):
    a, b = np.sort_complex(np.asarray(a)), np.sort_complex(np.asarray(b))
    assert a.shape == b.shape, (a, b)
    return np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-300)) if len(a) else 0.0


@pytest.fixture(scope="module")
def motor():
    diagram = blocksim.load(DIAGRAMS / "dc_motor_pid.json")
    return diagram, blocksim.operating_point(diagram)


def test_dc_motor_plant_is_the_analytic_motor(motor):
    diagram, op = motor
    assert op.states["speed"] == pytest.approx(50.0, abs=1e-12)
    assert op.outputs["V"] == pytest.approx(0.5 + 5.0, abs=1e-12)  # R i + Ke w, unsaturated
    plant = blocksim.linearize(diagram, inputs=["pid.u"], outputs=["w"], at=op,
                               open_loops=["pid.u"])
    assert plant.state_labels == ["current", "speed"]  # the PID is off the path
    s = ct.tf("s")
    exact = KT / ((L * s + R) * (J * s + B) + KT * KE)
    assert rel(plant.poles(), exact.poles()) < 1e-9
    assert len(ct.zeros(plant)) == 0 and len(exact.zeros()) == 0
    assert ct.dcgain(plant) == pytest.approx(ct.dcgain(exact), rel=1e-9)
    # and the matrices themselves, in the states' order (current, speed)
    np.testing.assert_allclose(plant.A, [[-R / L, -KE / L], [KT / J, -B / J]], rtol=1e-12)
    np.testing.assert_allclose(plant.B, [[1 / L], [0.0]], rtol=1e-12)
    np.testing.assert_allclose(plant.C, [[0.0, 1.0]])


def test_dc_motor_closed_loop_poles_are_python_controls_feedback(motor):
    diagram, op = motor
    loop = blocksim.linearize(diagram, inputs=["setpoint"], outputs=["w"], at=op)
    s = ct.tf("s")
    plant = KT / ((L * s + R) * (J * s + B) + KT * KE)
    pid = KP + KI / s + KD * N * s / (s + N)
    closed = ct.feedback(plant * pid, 1)
    assert rel(loop.poles(), closed.poles()) < 1e-9
    assert ct.dcgain(loop) == pytest.approx(1.0, rel=1e-9)
    assert rel(ct.zeros(loop), ct.minreal(closed, verbose=False).zeros()) < 1e-9


def test_a_saturated_pid_linearises_with_gain_zero_and_says_so(motor):
    diagram, _ = motor
    # at the initial values (w = 0, set point 50) the PID asks 1400 V: held at 24 V
    loop = blocksim.linearize(diagram, inputs=["error"], outputs=["pid"], reduce=False)
    assert np.all(loop.D == 0) and np.all(loop.C == 0)
    assert any("pid (PID): linearised in its latched mode (zero-crossing signs -+)" in n
               for n in loop.notes), loop.notes


def test_pathsim_242_pid_around_a_square_trims_to_1e_10():
    diagram = blocksim.load(DIAGRAMS / "pid_trim_square.json")
    op = blocksim.operating_point(diagram)
    assert op.converged
    assert op.states["plant"] == pytest.approx(1.0, abs=1e-10)
    assert op.outputs["u"] == pytest.approx(1.0, abs=1e-10)
    # the integrator state (output units) is the whole output at e = 0, the filter's 0
    assert op.states["pid[0]"] == pytest.approx(1.0, abs=1e-10)
    assert op.states["pid[1]"] == pytest.approx(0.0, abs=1e-10)
    assert max(abs(v) for v in op.residuals.values()) < 1e-12


def test_simulated_frequency_response_matches_the_bode_of_the_linearization():
    diagram = blocksim.load(DIAGRAMS / "lag_leadlag_loop.json")
    op = blocksim.operating_point(diagram, time=2.0)  # after the set point's step
    sys = blocksim.linearize(diagram, ["r"], ["y"], at=op)
    omega = np.array([0.01, 1.0, 100.0])  # the whole decade sweep: docs/make_bode_image.py
    measured = blocksim.frequency_response(diagram, "r", "y", omega, at=op)
    assert measured.settled.all()
    linear = sys(1j * omega).ravel()
    gain_db = 20 * np.log10(np.abs(measured.response) / np.abs(linear))
    phase = np.degrees(np.angle(measured.response / linear))
    assert np.max(np.abs(gain_db)) < 0.1 and np.max(np.abs(phase)) < 1.0
    assert np.max(np.abs(gain_db)) < 0.01  # measured: 4e-4 dB, 2e-3 degrees


def test_sampled_loop_is_c2d_zoh_of_the_plant_in_series_with_the_discrete_pi():
    diagram = blocksim.load(DIAGRAMS / "pi_1khz.json")
    op = blocksim.operating_point(diagram)
    ts, kp, ki = 0.001, 2.0, 5.0
    loop = blocksim.linearize(diagram, ["error"], ["plant"], at=op, open_loops=["plant"])
    assert loop.dt == ts and loop.state_labels == ["plant", "pi:d[1]"]
    plant = ct.c2d(ct.tf([1.0], [1.0, 1.0]), ts, "zoh")
    pi = ct.tf([kp, -kp + ki * ts], [1.0, -1.0], ts)  # Kp + Ki Ts / (z - 1), forward Euler
    expected = plant * pi
    got = ct.tf(loop)
    np.testing.assert_allclose(got.num[0][0], expected.num[0][0], rtol=0, atol=1e-12)
    np.testing.assert_allclose(got.den[0][0], expected.den[0][0], rtol=0, atol=1e-12)
    assert rel(loop.poles(), expected.poles()) < 1e-12
    closed = blocksim.linearize(diagram, ["r"], ["y"], at=op)
    assert closed.dt == ts
    assert rel(closed.poles(), ct.feedback(expected, 1).poles()) < 1e-12


def test_step_info_of_the_linearised_loop_matches_a_small_nonlinear_step():
    diagram = blocksim.load(DIAGRAMS / "pid_trim_square.json")
    op = blocksim.operating_point(diagram)
    loop = blocksim.linearize(diagram, ["r"], ["x"], at=op)
    start = copy.deepcopy(diagram)
    assert op.apply_to(start)  # the run starts at the operating point
    step = 1e-3
    t = np.linspace(0.0, 20.0, 20001)
    run = blocksim.simulate(start, params={"setpoint": 1.0 + step}, stop_time=20.0,
                            output_interval=1e-3)
    assert np.allclose(run.time[:len(t)], t)
    nonlinear = ct.step_info((run["x"][:len(t)] - 1.0) / step, T=t, yfinal=1.0)
    linear = ct.step_info(ct.step_response(loop, T=t).outputs, T=t, yfinal=1.0)
    for key in ("RiseTime", "Overshoot", "PeakTime", "SettlingTime"):
        assert nonlinear[key] == pytest.approx(linear[key], rel=0.01), key
    assert linear["Overshoot"] > 1.0  # a response with an overshoot to compare
