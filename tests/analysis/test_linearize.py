"""linearize: analysis points of every kind, open loops, delays, sampled blocks, the
model returned without python-control."""
import numpy as np
import pytest

import blocksim
from blocksim.analysis import LinearModel
from blocksim.analysis.pade import pade_coefficients
from builders import DIAGRAMS, block, diagram

ct = pytest.importorskip("control")


def lag_chain():
    """u -> 2/(s+1) -> k -> 1/(s+3) -> y, plus a Scope branch."""
    return diagram(
        [block("u", "Inport"), block("g1", "TransferFunction", num=[2.0], den=[1.0, 1.0]),
         block("k", "Gain", k=3.0), block("g2", "TransferFunction", num=[1.0], den=[1.0, 3.0]),
         block("y", "Output"), block("scope", "Scope")],
        [("u.y", "g1.u"), ("g1.y", "k.u"), ("k.y", "g2.u"), ("g2.y", "y.u"),
         ("k.y", "scope.u")], stop=1.0)


def test_inport_to_output_by_block_id():
    sys = blocksim.linearize(lag_chain(), inputs=["u"], outputs=["y"])
    assert sys.input_labels == ["u"] and sys.output_labels == ["y"]
    assert sys.state_labels == ["g1", "g2"]
    assert ct.dcgain(sys) == pytest.approx(2.0 * 3.0 / 3.0, rel=1e-12)
    assert np.allclose(np.sort(sys.poles().real), [-3.0, -1.0], rtol=1e-12)


def test_points_inside_the_diagram_signal_and_branch():
    d = lag_chain()
    # "k.y": the Gain's output signal (all its readers); "g2.u": only that branch
    sys = blocksim.linearize(d, inputs=["k.y"], outputs=["g2.y", "scope"])
    assert sys.state_labels == ["g2"]  # g1 is not between them
    assert ct.dcgain(sys)[0, 0] == pytest.approx(1 / 3, rel=1e-12)
    assert ct.dcgain(sys)[1, 0] == pytest.approx(0.0, abs=1e-15)  # measured before the sum
    branch = blocksim.linearize(d, inputs=["g2.u"], outputs=["y"])
    assert ct.dcgain(branch) == pytest.approx(1 / 3, rel=1e-12)


def test_open_loop_at_the_feedback_gives_the_loop_transfer():
    d = blocksim.load(DIAGRAMS / "lag_leadlag_loop.json")
    loop = blocksim.linearize(d, inputs=["lag2"], outputs=["lag2"], open_loops=["lag2"])
    s = ct.tf("s")
    expected = -3 * (2 * s + 1) / (0.2 * s + 1) / (s + 1) / (0.25 * s + 1)  # the sign: -L
    omega = np.array([0.1, 1.0, 10.0])
    np.testing.assert_allclose(loop(1j * omega).ravel(), expected(1j * omega), rtol=1e-12)


def test_nested_subsystem_point():
    inner = {"blocks": [block("in1", "Inport"), block("lag", "TransferFunction",
                                                      num=[1.0], den=[0.5, 1.0]),
                        block("out1", "Outport")],
             "wires": [{"src": "in1.y", "dst": "lag.u"}, {"src": "lag.y", "dst": "out1.u"}]}
    sub = {"id": "part", "type": "Subsystem", "params": {}, "diagram": inner}
    d = diagram([block("c", "Constant", value=1.0), sub, block("y", "Output")],
                [("c.y", "part.in1"), ("part.out1", "y.u")], stop=1.0)
    sys = blocksim.linearize(d, inputs=["part/lag.u"], outputs=["part/lag.y"])
    assert sys.state_labels == ["part/lag"]
    assert sys.poles()[0] == pytest.approx(-2.0, rel=1e-12)
    via_top = blocksim.linearize(d, inputs=["c"], outputs=["y"])
    assert ct.dcgain(via_top) == pytest.approx(1.0, rel=1e-12)


def test_transport_delay_is_its_pade_approximation():
    d = diagram([block("u", "Inport"), block("d", "TransportDelay", delay=0.5),
                 block("y", "Output")], [("u.y", "d.u"), ("d.y", "y.u")], stop=1.0)
    sys = blocksim.linearize(d, ["u"], ["y"], delay_order=4)
    assert any("Pade approximation of order 4" in n for n in sys.notes)
    num, den = ct.pade(0.5, 4)
    expected = ct.tf(num, den)
    omega = np.array([0.1, 1.0, 5.0])
    np.testing.assert_allclose(sys(1j * omega).ravel(), expected(1j * omega), rtol=1e-10)
    # unit magnitude, phase error of order 4 below 1 degree while w T < 2.6
    assert np.allclose(np.abs(sys(1j * omega).ravel()), 1.0, rtol=1e-10)
    assert pade_coefficients(0.5, 0) == ([1.0], [1.0])


def test_nonlinear_block_derivative_by_extrapolated_differences():
    d = diagram([block("u", "Inport"), block("f", "Expression", inputs="x",
                                              formula="sin(x) * exp(x)"),
                 block("y", "Output")], [("u.y", "f.x"), ("f.y", "y.u")], stop=1.0)
    op = blocksim.operating_point(d, inputs={"u": 0.7}, check=False)
    sys = blocksim.linearize(d, ["u"], ["y"], at=op)
    exact = np.exp(0.7) * (np.sin(0.7) + np.cos(0.7))
    assert sys.D[0, 0] == pytest.approx(exact, rel=1e-12)


def test_without_python_control_a_linear_model_with_the_same_attributes():
    sys = blocksim.linearize(lag_chain(), ["u"], ["y"], use_control=False)
    assert isinstance(sys, LinearModel)
    assert sys.state_labels == ["g1", "g2"] and sys.dt == 0.0
    assert np.allclose(np.sort(sys.poles().real), [-3.0, -1.0])
    assert sys.A.shape == (2, 2) and sys.B.shape == (2, 1) and sys.D.shape == (1, 1)
    assert ct.dcgain(sys.to_control()) == pytest.approx(2.0, rel=1e-12)


def test_a_model_with_no_states_gives_its_static_gain():
    d = diagram([block("u", "Inport"), block("k", "Gain", k=4.0), block("y", "Output")],
                [("u.y", "k.u"), ("k.y", "y.u")], stop=1.0)
    sys = blocksim.linearize(d, ["u"], ["y"])
    assert sys.nstates == 0 and sys.D[0, 0] == pytest.approx(4.0, rel=1e-14)


def test_at_a_time_linearises_where_a_run_is_then():
    d = blocksim.load(DIAGRAMS / "dc_motor_pid.json")
    # at t = 0 the PID is saturated (gain 0), at 4 s the speed has settled near 50
    early = blocksim.linearize(d, ["setpoint"], ["w"], reduce=False)
    late = blocksim.linearize(d, ["setpoint"], ["w"], at=4.0)
    assert np.all(early.D == 0) and ct.dcgain(early) == 0
    assert ct.dcgain(late) == pytest.approx(1.0, rel=1e-9)


def test_discrete_model_state_names_and_first_hit_flags_left_out():
    d = blocksim.load(DIAGRAMS / "pi_1khz.json")
    sys = blocksim.linearize(d, ["r"], ["y"])  # at the initial values: no trim needed
    assert sys.dt == 0.001 and sys.state_labels == ["plant", "pi:d[1]"]
    assert any("zero-order hold" in n for n in sys.notes)


def test_vector_points_are_refused_in_one_line():
    d = diagram([block("c", "Constant", value=[1.0, 2.0]), block("g", "Gain", k=2.0),
                 block("i", "Integrator", x0=[0.0, 0.0]), block("y", "Output")],
                [("c.y", "g.u"), ("g.y", "i.u"), ("i.y", "y.u")], stop=1.0)
    for inputs, outputs in ((["g.y"], ["y"]), (["c"], ["i.y"])):
        with pytest.raises(blocksim.AnalysisError, match="is a vector signal"):
            blocksim.linearize(d, inputs, outputs)


def test_a_step_out_of_a_formulas_domain_is_shrunk():
    d = diagram([block("u", "Inport"), block("f", "Expression", inputs="x", formula="log(x)"),
                 block("y", "Output")], [("u.y", "f.x"), ("f.y", "y.u")], stop=1.0)
    op = blocksim.operating_point(d, inputs={"u": 1e-3})
    sys = blocksim.linearize(d, ["u"], ["y"], at=op)  # the first step, 0.01, reaches log(-0.009)
    assert sys.D[0, 0] == pytest.approx(1e3, rel=1e-10)


def test_an_inport_as_input_and_output():
    sys = blocksim.linearize(lag_chain(), inputs=["u"], outputs=["u", "y"])
    assert ct.dcgain(sys)[0, 0] == pytest.approx(1.0, rel=1e-14)  # u itself, a feedthrough
    assert ct.dcgain(sys)[1, 0] == pytest.approx(2.0, rel=1e-12)


def test_without_python_control_installed_the_default_is_a_linear_model(monkeypatch):
    from blocksim.analysis import statespace

    monkeypatch.setattr(statespace, "has_control", lambda: False)
    sys = blocksim.linearize(lag_chain(), ["u"], ["y"])
    assert isinstance(sys, LinearModel) and sys.notes == []
