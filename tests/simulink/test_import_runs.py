"""Imported models run and agree with independent references (closed forms, scipy), in
each of the four file forms Simulink writes."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import blocksim
from slx_fixtures import B, L, Model, write_all

FORMS = ("slx-split", "slx-inline", "mdl", "mdl-xml")
TIGHT = {"SolverName": "ode45", "StopTime": "3", "RelTol": "1e-10", "AbsTol": "1e-12",
         "SolverType": "Variable-step"}


def _run(path, **kw):
    result = blocksim.import_simulink(path, **kw)
    return result, blocksim.simulate(result.diagram, output_interval=0.01)


def lag_model() -> Model:
    """Step (at 0.5, to K) -> Sum |+- -> Integrator -> Outport, Gain 1/tau back; K and tau
    from the InitFcn callback; the Sum's signs and the Gain's value from the defaults."""
    return Model(
        blocks=[B("Step", "Step", 1, {"Time": "0.5", "After": "K"}, (30, 40, 60, 70)),
                B("Sum", "Sum\nerror", 2, {"Inputs": "|+-"}, (100, 45, 120, 65)),
                B("Integrator", "Integrator", 3, {}, (160, 40, 190, 70)),
                B("Gain", "Gain", 4, {"Gain": "1/tau"}, (160, 100, 190, 130)),
                B("Outport", "y", 5, {"Port": "1"}, (240, 45, 270, 65))],
        lines=[L(1, "out:1", (2, "in:1")), L(2, "out:1", (3, "in:1")),
               L(3, "out:1", (5, "in:1"), (4, "in:1")), L(4, "out:1", (2, "in:2"))],
        config=TIGHT, callbacks={"InitFcn": "K = 2;   % gain\ntau = 0.5; system('touch x')"},
        defaults={"Integrator": {"InitialCondition": "0"}})


@pytest.mark.parametrize("form", FORMS)
def test_lag_matches_closed_form(tmp_path, form):
    path = write_all(lag_model(), tmp_path, "lag")[form]
    result, res = _run(path)
    assert result.report.count("placeholder") == 0
    assert result.diagram.simulation.solver == "dopri5"
    assert result.diagram.simulation.rtol == 1e-10 and result.diagram.simulation.stop == 3
    t, y = res.time, res["y"]
    exact = np.where(t >= 0.5, 2 * 0.5 * (1 - np.exp(-(t - 0.5) / 0.5)), 0.0)
    assert np.max(np.abs(y - exact)) <= 1e-6 * np.max(np.abs(exact))
    assert any("system('touch x')" in line for line in result.report.skipped_code)
    assert not (tmp_path / "x").exists()
    assert {b.layout["label"] for b in result.diagram.blocks} >= {"Sum error", "Integrator"}


def tf_subsystem_model() -> Model:
    """Step -> subsystem(In -> Transfer Fcn 1/(s^2+3s+2) -> Goto) ... From -> Out."""
    inner = Model(blocks=[B("Inport", "u", 11, {"Port": "1"}, (20, 20, 40, 34)),
                          B("TransferFcn", "Transfer\nFcn", 12, {"Denominator": "[1 3 2]"},
                            (80, 10, 140, 50)),
                          B("Goto", "Goto", 13, {"GotoTag": "plant", "TagVisibility": "global"},
                            (180, 20, 220, 40))],
                  lines=[L(11, "out:1", (12, "in:1")), L(12, "out:1", (13, "in:1"))])
    return Model(
        blocks=[B("Step", "Step", 1, {"Time": "0"}, (30, 40, 60, 70)),
                B("SubSystem", "Plant", 2, {}, (100, 30, 160, 80), system=inner),
                B("From", "From", 3, {"GotoTag": "plant"}, (200, 40, 240, 60)),
                B("ToWorkspace", "To Workspace", 4, {"VariableName": "yout"}, (280, 40, 340, 60))],
        lines=[L(1, "out:1", (2, "in:1")), L(3, "out:1", (4, "in:1"))], config=TIGHT)


@pytest.mark.parametrize("form", FORMS)
def test_subsystem_goto_transfer_function(tmp_path, form):
    path = write_all(tf_subsystem_model(), tmp_path, "tf")[form]
    result, res = _run(path)
    t = res.time
    exact = 0.5 - np.exp(-t) + 0.5 * np.exp(-2 * t)
    y = res["yout"]
    assert np.max(np.abs(y - exact)) <= 1e-6 * np.max(exact)
    plant = next(b for b in result.diagram.blocks if b.id == "Plant")
    assert plant.type == "Subsystem" and {b.type for b in plant.subsystem.blocks} == {
        "Inport", "TransferFunction", "Goto"}


def pid_model(form_name: str = "Parallel") -> Model:
    pid = B("Reference", "PID Controller", 3, {"SourceBlock": "simulink/Continuous/PID Controller",
                                              "Ports": "[1, 1]"}, (150, 40, 190, 70),
            instance={"Controller": "PID", "Form": form_name, "P": "Kp", "I": "1", "D": "0.5",
                      "N": "100", "UseFilter": "on", "TimeDomain": "Continuous-time"})
    return Model(
        blocks=[B("Step", "Step", 1, {"Time": "0"}, (30, 40, 60, 70)),
                B("Sum", "Sum", 2, {"Inputs": "+-"}, (100, 45, 120, 65)), pid,
                B("TransferFcn", "Plant", 4, {"Denominator": "[1 1]"}, (230, 40, 280, 70)),
                B("Scope", "Scope", 5, {"NumInputPorts": "1"}, (320, 40, 350, 70))],
        lines=[L(1, "out:1", (2, "in:1")), L(2, "out:1", (3, "in:1")), L(3, "out:1", (4, "in:1")),
               L(4, "out:1", (5, "in:1"), (2, "in:2"))],
        config={**TIGHT, "StopTime": "2"})


@pytest.mark.parametrize("form, pid_form", [("slx-split", "Parallel"), ("mdl", "Parallel"),
                                             ("slx-inline", "Ideal")])
def test_pid_loop_matches_scipy(tmp_path, form, pid_form):
    script = tmp_path / "gains.m"
    script.write_text("% controller gains\nKp = 2;\nunused = load('x.mat');\n")
    path = write_all(pid_model(pid_form), tmp_path, "pid")[form]
    result, res = _run(path, params=[script])
    assert result.report.workspace["Kp"] == "gains.m"
    P, I, D, N = 2.0, 1.0, 0.5, 100.0
    scale = P if pid_form == "Ideal" else 1.0  # ideal: P (e + I/s e + D N s/(s + N) e)

    def rhs(t, s):
        x, xi, xf = s
        e = 1.0 - x
        u = P * e + xi + N * (scale * D * e - xf)
        return [-x + u, scale * I * e, N * (scale * D * e - xf)]

    ref = solve_ivp(rhs, (0, 2), [0, 0, 0], rtol=1e-12, atol=1e-13, dense_output=True,
                    method="Radau")
    t = res.time[res.time > 1e-3]  # (the step's own instant is logged twice)
    y = np.interp(t, res.time, res["Scope"])
    assert np.max(np.abs(y - ref.sol(t)[0])) <= 1e-6 * np.max(np.abs(ref.sol(t)[0]))


def discrete_model() -> Model:
    """Sine -> ZOH 0.1 -> Unit Delay -> Discrete TF 0.5/(z - 0.5) -> Out."""
    return Model(
        blocks=[B("Sin", "Sine", 1, {"Frequency": "2*pi", "Amplitude": "3"}, (30, 40, 60, 70)),
                B("ZeroOrderHold", "ZOH", 2, {"SampleTime": "Ts"}, (100, 40, 130, 70)),
                B("UnitDelay", "Delay", 3, {"InitialCondition": "1", "SampleTime": "-1"},
                  (160, 40, 190, 70)),
                B("DiscreteTransferFcn", "DTF", 4, {"Numerator": "[0.5]",
                                                    "Denominator": "[1 -0.5]",
                                                    "SampleTime": "Ts"}, (220, 40, 260, 70)),
                B("Outport", "y", 5, {"Port": "1"}, (300, 45, 330, 65))],
        lines=[L(1, "out:1", (2, "in:1")), L(2, "out:1", (3, "in:1")), L(3, "out:1", (4, "in:1")),
               L(4, "out:1", (5, "in:1"))],
        config={**TIGHT, "StopTime": "2"}, callbacks={"PreLoadFcn": "Ts = 0.1"})


@pytest.mark.parametrize("form", ("slx-inline", "mdl-xml"))
def test_discrete_chain_matches_recursion(tmp_path, form):
    path = write_all(discrete_model(), tmp_path, "disc")[form]
    result, res = _run(path)
    ts = 0.1
    hits = np.arange(21) * ts
    u = 3 * np.sin(2 * np.pi * hits)
    d = np.concatenate([[1.0], u[:-1]])           # unit delay, initial 1
    y = np.zeros(21)                              # y(k) = 0.5 y(k-1) + 0.5 d(k-1)
    for k in range(1, 21):
        y[k] = 0.5 * y[k - 1] + 0.5 * d[k - 1]
    for k in range(20):
        mid = hits[k] + ts / 2
        assert res["y"][np.searchsorted(res.time, mid)] == pytest.approx(y[k], rel=1e-9, abs=1e-12)


def conditional_model() -> Model:
    """An enabled subsystem integrating 1 while a Step (at 1) is on, and a triggered one
    sampling the Clock at the rising edges of a Pulse Generator (period 0.5, from 0.2)."""
    enabled = Model([B("Inport", "one", 21, {"Port": "1"}), B("EnablePort", "Enable", 22),
                     B("Integrator", "I", 23), B("Outport", "x", 24, {"Port": "1"})],
                    [L(21, "out:1", (23, "in:1")), L(23, "out:1", (24, "in:1"))])
    triggered = Model([B("Inport", "t", 31, {"Port": "1"}),
                       B("TriggerPort", "Trigger", 32, {"TriggerType": "rising"}),
                       B("Outport", "held", 33, {"Port": "1", "InitialOutput": "-1"})],
                      [L(31, "out:1", (33, "in:1"))])
    return Model(
        blocks=[B("Constant", "c", 1, {"Value": "1"}), B("Step", "on", 2, {"Time": "1"}),
                B("SubSystem", "Enabled", 3, {}, (100, 40, 160, 90), system=enabled),
                B("Clock", "clock", 4),
                B("DiscretePulseGenerator", "pulse", 5, {"Period": "0.5", "PulseWidth": "50",
                                                        "PhaseDelay": "0.2"}),
                B("SubSystem", "Sampler", 6, {}, (100, 140, 160, 190), system=triggered),
                B("Outport", "x", 7, {"Port": "1"}), B("Outport", "held", 8, {"Port": "2"})],
        lines=[L(1, "out:1", (3, "in:1")), L(2, "out:1", (3, "enable")), L(3, "out:1", (7, "in:1")),
               L(4, "out:1", (6, "in:1")), L(5, "out:1", (6, "trigger")), L(6, "out:1", (8, "in:1"))],
        config={**TIGHT, "StopTime": "2"})


@pytest.mark.parametrize("form", ("slx-split", "mdl"))
def test_enabled_and_triggered_subsystems(tmp_path, form):
    path = write_all(conditional_model(), tmp_path, "cond")[form]
    result, res = _run(path)
    types = {b.id: b.type for b in result.diagram.blocks}
    assert types["Enabled"] == "EnabledSubsystem" and types["Sampler"] == "TriggeredSubsystem"
    t = res.time
    assert np.max(np.abs(res["x"] - np.maximum(t - 1, 0))) <= 1e-9
    edges = 0.2 + 0.5 * np.floor((t - 0.2) / 0.5 + 1e-12)
    expected = np.where(t < 0.2, -1.0, edges)
    inside = np.abs((t - 0.2) / 0.5 - np.round((t - 0.2) / 0.5)) > 1e-6  # off the edges
    assert np.max(np.abs(res["held"] - expected)[inside]) <= 1e-9


def routing_model() -> Model:
    """Sine -> Mux with Clock -> Fcn u(1)^2 + u(2) -> 1-D lookup table (clip) -> Out;
    a Saturation and a Relay side by side."""
    return Model(
        blocks=[B("Sin", "s", 1, {"Frequency": "pi"}), B("Clock", "t", 2),
                B("Mux", "mux", 3, {"Inputs": "2"}),
                B("Fcn", "f", 4, {"Expr": "u(1)^2 + u(2)"}),
                B("Lookup_n-D", "table", 5, {"NumberOfTableDimensions": "1",
                                             "BreakpointsForDimension1": "[0 1 2]",
                                             "Table": "[0 10 15]", "ExtrapMethod": "Clip"}),
                B("Saturate", "sat", 6, {"UpperLimit": "0.5", "LowerLimit": "-0.5"}),
                B("Outport", "y", 7, {"Port": "1"}), B("Outport", "ys", 8, {"Port": "2"})],
        lines=[L(1, "out:1", (3, "in:1"), (6, "in:1")), L(2, "out:1", (3, "in:2")),
               L(3, "out:1", (4, "in:1")), L(4, "out:1", (5, "in:1")), L(5, "out:1", (7, "in:1")),
               L(6, "out:1", (8, "in:1"))],
        config={**TIGHT, "StopTime": "3"})


@pytest.mark.parametrize("form", ("slx-inline", "mdl"))
def test_mux_fcn_lookup_saturation(tmp_path, form):
    path = write_all(routing_model(), tmp_path, "route")[form]
    result, res = _run(path)
    t = res.time
    v = np.sin(np.pi * t) ** 2 + t
    assert np.max(np.abs(res["y"] - np.interp(v, [0, 1, 2], [0, 10, 15]))) <= 1e-9
    assert np.max(np.abs(res["ys"] - np.clip(np.sin(np.pi * t), -0.5, 0.5))) <= 1e-9
    fcn = next(e for e in result.report.entries if e.path == "f")
    assert fcn.status == "note" and "Demux of 2" in fcn.note


def if_action_model(switch_case: bool = False) -> Model:
    """If u1 > 0.5 (else u1 < -0.5, else) on a sine: action subsystems output 2 u, -1 and 0,
    merged; or a Switch Case on round-down(2 sin) with cases {1, [-1 -2]} and a default."""
    def action(sid: int, name: str, gain: str) -> B:
        inner = Model([B("ActionPort", "Action Port", sid * 10 + 1),
                       B("Inport", "u", sid * 10 + 2, {"Port": "1"}),
                       B("Gain", "g", sid * 10 + 3, {"Gain": gain}),
                       B("Outport", "y", sid * 10 + 4, {"Port": "1"})],
                      [L(sid * 10 + 2, "out:1", (sid * 10 + 3, "in:1")),
                       L(sid * 10 + 3, "out:1", (sid * 10 + 4, "in:1"))])
        return B("SubSystem", name, sid, {}, (200, 40 * sid, 260, 40 * sid + 30), system=inner)
    if switch_case:
        chooser = B("SwitchCase", "case", 2, {"CaseConditions": "{1,[-1 -2]}",
                                              "ShowDefaultCase": "on"})
    else:
        chooser = B("If", "if", 2, {"NumInputs": "1", "IfExpression": "u1 > 0.5",
                                    "ElseIfExpressions": "u1 < -0.5", "ShowElse": "on"})
    scale = B("Gain", "x2", 8, {"Gain": "2"}) if switch_case else None
    blocks = [B("Sin", "s", 1, {"Frequency": "2*pi"}), chooser, action(3, "A", "2"),
              action(4, "B", "-1"), action(5, "C", "0"),
              B("Merge", "merge", 6, {"Inputs": "3"}), B("Outport", "y", 7, {"Port": "1"})]
    lines = [L(1, "out:1", (3, "in:1"), (4, "in:1"), (5, "in:1"),
               *(((8, "in:1"),) if switch_case else ((2, "in:1"),))),
             L(2, "out:1", (3, "ifaction")), L(2, "out:2", (4, "ifaction")),
             L(2, "out:3", (5, "ifaction")), L(3, "out:1", (6, "in:1")),
             L(4, "out:1", (6, "in:2")), L(5, "out:1", (6, "in:3")), L(6, "out:1", (7, "in:1"))]
    if switch_case:
        blocks.append(scale)
        lines.append(L(8, "out:1", (2, "in:1")))
    return Model(blocks, lines, config={**TIGHT, "StopTime": "2"})


@pytest.mark.parametrize("form, switch_case", [("slx-split", False), ("mdl", False),
                                                ("slx-inline", True)])
def test_if_and_switch_case_with_action_subsystems(tmp_path, form, switch_case):
    path = write_all(if_action_model(switch_case), tmp_path, "act")[form]
    result, res = _run(path)
    assert result.report.count("placeholder") == 0
    t, u = res.time, np.sin(2 * np.pi * res.time)
    if switch_case:
        k = np.trunc(2 * u)
        expected = np.where(k == 1, 2 * u, np.where((k == -1) | (k == -2), -u, 0 * u))
        edges = np.abs(np.abs(2 * u) - np.round(np.abs(2 * u))) < 1e-6
    else:
        expected = np.where(u > 0.5, 2 * u, np.where(u < -0.5, -u, 0 * u))
        edges = np.abs(np.abs(u) - 0.5) < 1e-6
    assert np.max(np.abs(res["y"] - expected)[~edges]) <= 1e-9
