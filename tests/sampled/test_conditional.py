"""Triggered and enabled subsystems (Simulink semantics) against hand-derived values, on both
backends: run once per trigger edge and hold; freeze while disabled, hold or reset."""
import importlib.util

import numpy as np
import pytest

import blocksim
from blocksim.compiler import compile_diagram
from blocksim.errors import CompileError
from blocksim.diagram.format import diagram_from_dict

BACKENDS = ["python", pytest.param("numba", marks=pytest.mark.skipif(
    importlib.util.find_spec("numba") is None, reason="numba is not installed"))]


def wired(pairs):
    return [{"src": a, "dst": b} for a, b in pairs]


def conditional(kind, inner_blocks, inner_wires, params=None, stop=4.0, control=None):
    """A Pulse (period 1 s, high in [k, k + 0.5)) drives the subsystem's trigger or enable;
    the Clock feeds its Inport x; its Outport out is logged as y."""
    port = "trigger" if kind == "TriggeredSubsystem" else "enable"
    control = control or {"id": "ctl", "type": "Pulse", "params": {"period": 1.0, "width": 50}}
    sub = {"id": "sub", "type": kind, "params": params or {},
           "diagram": {"blocks": inner_blocks, "wires": wired(inner_wires)}}
    data = {"format": "blocksim", "version": 1,
            "simulation": {"stop": stop, "output_interval": 0.25},
            "blocks": [control, {"id": "clk", "type": "Clock"}, sub, {"id": "y", "type": "Output"}],
            "wires": wired([(f"{control['id']}.y", f"sub.{port}"), ("clk.y", "sub.x"),
                            ("sub.out", "y.u")])}
    return diagram_from_dict(data, source="<test>")


def at(results, t):
    """(left limit, right limit) of y at t."""
    rows = np.flatnonzero(results.time == t)
    return results["y"][rows[0]], results["y"][rows[-1]]


PORTS = [{"id": "x", "type": "Inport"}, {"id": "out", "type": "Outport"}]


@pytest.mark.parametrize("backend", BACKENDS)
def test_triggered_subsystem_samples_its_input_at_each_rising_edge_and_holds(backend):
    d = conditional("TriggeredSubsystem", PORTS + [{"id": "g", "type": "Gain",
                                                   "params": {"k": 2.0}}],
                    [("x.y", "g.u"), ("g.y", "out.u")])
    r = blocksim.simulate(d, backend=backend)
    # no trigger at the start (the pulse starts high); rising edges at 1, 2, 3, 4
    assert at(r, 0.5) == (0.0, 0.0)
    for k in (1, 2, 3, 4):
        assert at(r, float(k)) == (2.0 * (k - 1) if k > 1 else 0.0, 2.0 * k)
    between = (r.time > 2.0) & (r.time < 3.0)
    assert np.all(r["y"][between] == 4.0)  # held, though the clock inside goes on
    assert [e.time for e in r.events_of("trigger")] == [1.0, 2.0, 3.0, 4.0]


@pytest.mark.parametrize("edge, times", [("falling", [0.5, 1.5, 2.5, 3.5]),
                                         ("either", [0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0])])
def test_trigger_edges(edge, times):
    d = conditional("TriggeredSubsystem", PORTS, [("x.y", "out.u")], {"edge": edge})
    r = blocksim.simulate(d)
    assert [e.time for e in r.events_of("trigger")] == times
    assert [at(r, t)[1] for t in times] == times  # the clock sampled at each edge


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_delay_inside_a_triggered_subsystem_steps_once_per_edge(backend):
    inner = PORTS + [{"id": "one", "type": "Constant", "params": {"value": 1.0}},
                     {"id": "s", "type": "Sum", "params": {"signs": "++"}},
                     {"id": "n", "type": "UnitDelay", "params": {"sample_time": -1}}]
    d = conditional("TriggeredSubsystem", inner,
                    [("one.y", "s.u1"), ("n.y", "s.u2"), ("s.y", "n.u"), ("s.y", "out.u")])
    r = blocksim.simulate(d, backend=backend)
    assert [at(r, float(k))[1] for k in (1, 2, 3, 4)] == [1.0, 2.0, 3.0, 4.0]
    model = compile_diagram(d)
    rates = dict(zip(model.block_ids, model.block_rates))
    assert str(rates["sub/n"]) == "triggered by sub"


INTEGRATE_ONE = PORTS + [{"id": "one", "type": "Constant", "params": {"value": 1.0}},
                         {"id": "i", "type": "Integrator"}]
INTEGRATE_WIRES = [("one.y", "i.u"), ("i.y", "out.u")]


@pytest.mark.parametrize("backend", BACKENDS)
def test_enabled_subsystem_freezes_its_states_and_holds_its_outputs(backend):
    d = conditional("EnabledSubsystem", INTEGRATE_ONE, INTEGRATE_WIRES)
    r = blocksim.simulate(d, backend=backend)
    # enabled in [k, k + 0.5): the integral grows by 0.5 per period and holds in between
    for k in range(4):
        assert at(r, k + 0.5)[1] == pytest.approx(0.5 * (k + 1), abs=1e-12)
        assert at(r, k + 0.75)[1] == pytest.approx(0.5 * (k + 1), abs=1e-12)
    assert [(e.time, e.kind) for e in r.events if e.block == "sub"][:3] == [
        (0.0, "enable"), (0.5, "disable"), (1.0, "enable")]


@pytest.mark.parametrize("backend", BACKENDS)
def test_enabled_subsystem_can_reset_states_and_outputs(backend):
    d = conditional("EnabledSubsystem", INTEGRATE_ONE, INTEGRATE_WIRES,
                    {"states_when_enabling": "reset", "outputs_when_disabled": "reset"})
    r = blocksim.simulate(d, backend=backend)
    for k in range(4):
        left, right = at(r, k + 0.5)
        assert left == pytest.approx(0.5, abs=1e-12) and right == 0.0  # reset output
        assert at(r, k + 0.75)[1] == 0.0


def test_enabled_subsystem_skips_its_discrete_hits_while_disabled():
    inner = PORTS + [{"id": "h", "type": "ZeroOrderHold", "params": {"sample_time": 0.25}}]
    d = conditional("EnabledSubsystem", inner, [("x.y", "h.u"), ("h.y", "out.u")])
    r = blocksim.simulate(d)
    # hits at 0, 0.25 while enabled; 0.5 and 0.75 skipped; 1.0 and 1.25 again
    assert at(r, 0.25)[1] == 0.25 and at(r, 0.75)[1] == 0.25 and at(r, 1.25)[1] == 1.25


@pytest.mark.parametrize("inner, message", [
    ([{"id": "i", "type": "Integrator"}], "may not be continuous"),
    ([{"id": "s", "type": "Sine"}], "may not be continuous"),
    ([{"id": "d", "type": "UnitDelay", "params": {"sample_time": 0.1}}], "set sample_time to -1"),
    ([{"id": "trigger", "type": "Inport"}], "may not be called 'trigger'"),
])
def test_what_a_triggered_subsystem_refuses(inner, message):
    wires = {"i": [("x.y", "i.u"), ("i.y", "out.u")], "s": [("s.y", "out.u")],
             "d": [("x.y", "d.u"), ("d.y", "out.u")], "trigger": [("x.y", "out.u")]}
    d = conditional("TriggeredSubsystem", PORTS + inner, wires[inner[0]["id"]])
    with pytest.raises(CompileError, match=message) as info:
        compile_diagram(d)
    assert info.value.block.startswith("sub/")
