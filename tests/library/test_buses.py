"""BusCreator/BusSelector: element names survive subsystem ports (two levels down and back
up), Goto/From and nested buses; selections are wired to their sources (no false
algebraic loop through a bus); unknown names are compile errors naming the block and the
name and listing the bus's names. Both backends."""
import numpy as np
import pytest
from both_backends import SIN, run_both
from builders import block, diagram

import blocksim
from blocksim.errors import CompileError

TIGHT = {"rtol": 1e-12, "atol": 1e-12}


def sub(block_id, blocks, wires, **params):
    inner = {"blocks": blocks, "wires": [{"src": s, "dst": d} for s, d in wires]}
    return {"id": block_id, "type": "Subsystem", "params": params, "diagram": inner}


def bus_round_trip(select="vel, pos, pos", extra=()):
    """At the top a bus (pos = sin t, vel = [t, 2]) enters `outer`, goes on into
    `outer/inner` through an Inport, is sent by a Goto there and read by a From in `inner`,
    where a BusSelector picks `select`; each element leaves through Outports up two levels."""
    names = [n.strip() for n in select.split(",")]
    inner = sub("inner", [block("bus", "Inport"), block("g", "Goto", tag="b"),
                          block("f", "From", tag="b"),
                          block("sel", "BusSelector", names=select),
                          *[block(f"o{i}", "Outport", index=i + 1) for i in range(len(names))]],
                [("bus.y", "g.u"), ("f.y", "sel.bus")]
                + [(f"sel.y{i + 1}", f"o{i}.u") for i in range(len(names))])
    outer = sub("outer", [block("bus", "Inport"), inner,
                          *[block(f"o{i}", "Outport", index=i + 1) for i in range(len(names))]],
                [("bus.y", "inner.bus")]
                + [(f"inner.o{i}", f"o{i}.u") for i in range(len(names))])
    blocks = [block("s", "Sine", frequency=SIN), block("r", "Ramp"),
              block("c", "Constant", value=2.0), block("mx", "Mux"),
              block("bc", "BusCreator", names="pos, vel"), outer,
              block("w", "Integrator"), *extra]
    blocks += [block(f"y{i}", "Output") for i in range(len(names))]
    wires = [("s.y", "bc.u1"), ("r.y", "mx.u1"), ("c.y", "mx.u2"), ("mx.y", "bc.u2"),
             ("bc.y", "outer.bus"), ("s.y", "w.u")]
    wires += [(f"outer.o{i}", f"y{i}.u") for i in range(len(names))]
    return diagram(blocks, wires, stop=2.0, output_interval=0.25, **TIGHT)


def test_bus_round_trip_across_two_subsystem_levels_and_a_goto():
    r = run_both(bus_round_trip())
    t = r.time
    np.testing.assert_array_equal(r["y0"], np.column_stack([t, np.full_like(t, 2.0)]))
    np.testing.assert_array_equal(r["y1"], np.sin(t))
    np.testing.assert_array_equal(r["y2"], np.sin(t))


def test_unknown_bus_element_names_the_block_the_name_and_the_bus():
    with pytest.raises(CompileError) as info:
        blocksim.compile(bus_round_trip("vel, speed"))
    assert info.value.block == "outer/inner/sel"
    assert "no bus element 'speed'" in str(info.value)
    assert "the bus has: pos, vel" in str(info.value)


def nested(select, then=None):
    """bus `motor` (speed = 3, current = t) nested in bus `plant` (motor, gain = 5), selected
    inside `sub` by `select` (and the selection by `then`, if given)."""
    inner = [block("bus", "Inport"), block("sel", "BusSelector", names=select),
             block("o", "Outport")]
    inner_wires = [("bus.y", "sel.bus"), ("sel.y1", "o.u")]
    if then:
        inner.append(block("sel2", "BusSelector", names=then))
        inner_wires = [("bus.y", "sel.bus"), ("sel.y1", "sel2.bus"), ("sel2.y1", "o.u")]
    return diagram([block("c3", "Constant", value=3.0), block("r", "Ramp"),
                    block("c5", "Constant", value=5.0),
                    block("motor", "BusCreator", names="speed, current"),
                    block("plant", "BusCreator", names="motor, gain"),
                    sub("sub", inner, inner_wires), block("y", "Output"),
                    block("w", "Integrator")],
                   [("c3.y", "motor.u1"), ("r.y", "motor.u2"), ("motor.y", "plant.u1"),
                    ("c5.y", "plant.u2"), ("plant.y", "sub.bus"), ("sub.o", "y.u"),
                    ("r.y", "w.u")], stop=1.0, output_interval=0.5)


def test_nested_bus_elements_by_dotted_name():
    r = run_both(nested("motor.current"), events_compiled=False)
    np.testing.assert_array_equal(r["y"], r.time)
    r = run_both(nested("motor"), events_compiled=False)  # a nested bus as a vector
    np.testing.assert_array_equal(r["y"], np.column_stack([np.full_like(r.time, 3.0), r.time]))


def test_selected_nested_bus_keeps_its_names():
    """A BusSelector that outputs the nested bus `motor` feeds another that picks `speed`."""
    r = run_both(nested("motor", then="speed"), events_compiled=False)
    np.testing.assert_array_equal(r["y"], 3.0)
    with pytest.raises(CompileError) as info:
        blocksim.compile(nested("motor", then="gain"))
    assert info.value.block == "sub/sel2" and "the bus has: speed, current" in str(info.value)


@pytest.mark.parametrize("select, words", [
    ("motor.speed.x", "'motor.speed' is not a bus"),
    ("gain.x", "'gain' is not a bus"),
    ("motor.torque", "the bus has: motor, motor.speed, motor.current, gain"),
])
def test_bad_nested_names_are_errors(select, words):
    with pytest.raises(CompileError) as info:
        blocksim.compile(nested(select))
    assert info.value.block == "sub/sel" and words in str(info.value)


def test_selector_fed_by_a_plain_signal_is_refused():
    d = diagram([block("c", "Constant"), block("sel", "BusSelector", names="a"),
                 block("y", "Output")], [("c.y", "sel.bus"), ("sel.y1", "y.u")])
    with pytest.raises(CompileError) as info:
        blocksim.compile(d)
    assert info.value.block == "sel" and "not a bus" in str(info.value)


@pytest.mark.parametrize("kind, names, words", [
    ("BusCreator", "a, a", "repeats 'a'"), ("BusCreator", "a, 2b", "comma-separated names"),
    ("BusSelector", "a..b", "dot-separated"),
])
def test_bad_names_are_refused(kind, names, words):
    d = diagram([block("b", kind, names=names)], [])
    with pytest.raises(CompileError) as info:
        blocksim.compile(d)
    assert info.value.block == "b" and words in str(info.value)


def test_feedback_through_a_bus_is_no_algebraic_loop():
    """x' = -k x with k x computed from x taken out of a bus that also carries k x: the
    selection reads x (an integrator state) only, so there is no loop; x = exp(-t)."""
    d = diagram([block("x", "Integrator", x0=1.0), block("k", "Gain", k=-1.0),
                 block("bc", "BusCreator", names="x, dx"),
                 block("sel", "BusSelector", names="x"), block("y", "Output")],
                [("x.y", "bc.u1"), ("k.y", "bc.u2"), ("bc.y", "sel.bus"), ("sel.y1", "k.u"),
                 ("k.y", "x.u"), ("x.y", "y.u")], stop=1.0, output_interval=0.25, **TIGHT)
    r = run_both(d, events_compiled=False)
    np.testing.assert_allclose(r["y"], np.exp(-r.time), rtol=1e-10)


def test_bus_as_a_plain_vector():
    d = diagram([block("c", "Constant", value=[1.0, 2.0]), block("r", "Ramp"),
                 block("bc", "BusCreator", names="a, b"), block("y", "Output"),
                 block("w", "Integrator")],
                [("c.y", "bc.u1"), ("r.y", "bc.u2"), ("bc.y", "y.u"), ("r.y", "w.u")],
                stop=1.0, output_interval=0.5)
    r = run_both(d, events_compiled=False)
    np.testing.assert_array_equal(r["y"][:, 2], r.time)
    np.testing.assert_array_equal(r["y"][:, :2], [[1.0, 2.0]] * len(r.time))


def conditional_bus(kind, outside):
    """A bus (a = t, b = [2, 3]) into a `kind` subsystem run by sin t, selected inside
    (`outside` False) or made inside and selected outside (True); logs y = element a, and
    z = element b."""
    control = "trigger" if kind == "TriggeredSubsystem" else "enable"
    top = [block("s", "Sine", frequency=SIN), block("clk", "Clock"),
           block("c", "Constant", value=[2.0, 3.0]), block("y", "Output"),
           block("z", "Output"), block("w", "Integrator")]
    wires = [("s.y", f"sub.{control}"), ("s.y", "w.u")]
    if outside:
        inner = {"blocks": [block("a", "Inport"), block("b", "Inport"),
                            block("bc", "BusCreator", names="a, b"), block("o", "Outport")],
                 "wires": [{"src": "a.y", "dst": "bc.u1"}, {"src": "b.y", "dst": "bc.u2"},
                           {"src": "bc.y", "dst": "o.u"}]}
        top += [block("sel", "BusSelector", names="a, b")]
        wires += [("clk.y", "sub.a"), ("c.y", "sub.b"), ("sub.o", "sel.bus"),
                  ("sel.y1", "y.u"), ("sel.y2", "z.u")]
    else:
        inner = {"blocks": [block("bus", "Inport"), block("sel", "BusSelector", names="a, b"),
                            block("oa", "Outport", index=1), block("ob", "Outport", index=2)],
                 "wires": [{"src": "bus.y", "dst": "sel.bus"}, {"src": "sel.y1", "dst": "oa.u"},
                           {"src": "sel.y2", "dst": "ob.u"}]}
        top += [block("bc", "BusCreator", names="a, b")]
        wires += [("clk.y", "bc.u1"), ("c.y", "bc.u2"), ("bc.y", "sub.bus"),
                  ("sub.oa", "y.u"), ("sub.ob", "z.u")]
    top.append({"id": "sub", "type": kind, "params": {}, "diagram": inner})
    return diagram(top, wires, stop=9.0, output_interval=0.1, **TIGHT)


@pytest.mark.parametrize("outside", [False, True])
def test_a_bus_through_the_ports_of_a_triggered_subsystem_is_sampled(outside):
    """Triggered at the rising edge of sin t at 2 pi: y = t sampled there (0 before)."""
    r = run_both(conditional_bus("TriggeredSubsystem", outside))
    t = r.time
    np.testing.assert_array_equal(r["y"][t < 2 * np.pi], 0.0)
    np.testing.assert_allclose(r["y"][t > 2 * np.pi + 1e-9], 2 * np.pi, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(r["z"][t > 2 * np.pi + 1e-9], [[2.0, 3.0]] * np.sum(
        t > 2 * np.pi + 1e-9))


@pytest.mark.parametrize("outside", [False, True])
def test_a_bus_through_an_enabled_subsystem_holds_while_disabled(outside):
    """Enabled while sin t > 0: y = t then, held at pi while disabled, t again from 2 pi."""
    r = run_both(conditional_bus("EnabledSubsystem", outside))
    t = r.time
    want = np.where(np.sin(t) > 0, t, np.where(t < 2 * np.pi, np.pi, 3 * np.pi))
    away = np.min(np.abs(t[:, None] - np.pi * np.arange(4)[None, :]), axis=1) > 1e-9
    np.testing.assert_allclose(r["y"][away], want[away], rtol=0, atol=1e-12)


def test_a_bus_through_a_port_needs_a_scalar_initial():
    d = conditional_bus("TriggeredSubsystem", outside=True)
    d.block("sub").subsystem.block("o").params["initial"] = [1.0, 2.0, 3.0]
    with pytest.raises(CompileError) as info:
        blocksim.compile(d)
    assert info.value.block == "sub/o" and "'initial' must be one number" in str(info.value)
