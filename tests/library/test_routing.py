"""Goto/From (tags resolved across subsystem levels by visibility, and the compile errors
that name the block and tag), MultiportSwitch (switching instants located where the control
crosses a half-integer, against closed forms), Selector and Merge, on both backends."""
import math

import numpy as np
import pytest
from both_backends import SIN, run_both
from builders import block, diagram

import blocksim
from blocksim.errors import CompileError

TIGHT = {"rtol": 1e-12, "atol": 1e-12}


def sub(block_id, blocks, wires, kind="Subsystem", **params):
    """A subsystem block with a nested diagram of blocks and (src, dst) wires."""
    inner = {"blocks": blocks, "wires": [{"src": s, "dst": d} for s, d in wires]}
    return {"id": block_id, "type": kind, "params": params, "diagram": inner}


def switches(r, block_id):
    return [(e.time, e.kind) for e in r.events_of(block=block_id) if e.kind != "state"]


# ----- Goto / From -----

def tagged_round_trip():
    """A sine sent by a global Goto at the top is read two levels down (outer/inner), sent
    back up by a scoped Goto in `outer` read in `inner` again, and by a local Goto in
    `inner` read at its own level; the result leaves through two Outports. Every path
    adds one known constant, so each hop is checked by value."""
    inner = sub("inner", [
        block("f_top", "From", tag="top"), block("f_mid", "From", tag="mid"),
        block("k", "Bias", bias=100.0), block("g_loc", "Goto", tag="loc"),
        block("f_loc", "From", tag="loc"), block("out", "Outport")],
        [("f_top.y", "g_loc.u"), ("f_loc.y", "k.u"), ("k.y", "out.u")])
    inner["diagram"]["blocks"].append(block("out_mid", "Outport", index=2))
    inner["diagram"]["wires"].append({"src": "f_mid.y", "dst": "out_mid.u"})
    outer = sub("outer", [
        inner, block("f_top", "From", tag="top"), block("b", "Bias", bias=10.0),
        block("g_mid", "Goto", tag="mid", visibility="scoped"),
        block("back", "Outport"), block("back_mid", "Outport", index=2)],
        [("f_top.y", "b.u"), ("b.y", "g_mid.u"), ("inner.out", "back.u"),
         ("inner.out_mid", "back_mid.u")])
    return diagram([block("s", "Sine", frequency=SIN), block("g", "Goto", tag="top",
                                                             visibility="global"),
                    outer, block("y", "Output"), block("y_mid", "Output"),
                    block("w", "Integrator")],
                   [("s.y", "g.u"), ("outer.back", "y.u"), ("outer.back_mid", "y_mid.u"),
                    ("s.y", "w.u")], stop=2.0, output_interval=0.1, **TIGHT)


def test_goto_from_round_trip_across_two_subsystem_levels():
    r = run_both(tagged_round_trip())
    np.testing.assert_array_equal(r["y"], np.sin(r.time) + 100.0)
    np.testing.assert_array_equal(r["y_mid"], np.sin(r.time) + 10.0)


def test_goto_from_leave_no_block_behind():
    model = blocksim.compile(tagged_round_trip())
    assert not [b for b in model.block_ids if b.split("/")[-1].startswith(("g", "f_"))]


def one_level(gotos, froms, inside=False):
    """Gotos at the top (or inside `sub` with `inside`), Froms inside `sub`, each From
    logged through an Outport."""
    inner_blocks = [block(f"f{i}", "From", tag=tag) for i, tag in enumerate(froms)]
    inner_blocks += [block(f"o{i}", "Outport") for i in range(len(froms))]
    inner_wires = [(f"f{i}.y", f"o{i}.u") for i in range(len(froms))]
    top = [block("c", "Constant", value=1.0)]
    top_wires = []
    for i, (tag, visibility) in enumerate(gotos):
        goto = block(f"g{i}", "Goto", tag=tag, visibility=visibility)
        if inside:
            inner_blocks += [goto, block(f"ci{i}", "Constant", value=float(i))]
            inner_wires.append((f"ci{i}.y", f"g{i}.u"))
        else:
            top.append(goto)
            top_wires.append(("c.y", f"g{i}.u"))
    top.append(sub("sub", inner_blocks, inner_wires))
    top += [block(f"y{i}", "Output") for i in range(len(froms))]
    top_wires += [(f"sub.o{i}", f"y{i}.u") for i in range(len(froms))]
    return diagram(top, top_wires, stop=1.0)


@pytest.mark.parametrize("gotos, froms, inside, block_id, words", [
    ([("A", "global")], ["B"], False, "sub/f0", ["From tag 'B' matches no Goto", "'A'"]),
    ([("A", "local")], ["A"], False, "sub/f0", ["no Goto with this tag is visible", "'g0'",
                                                 "local"]),
    ([("A", "global"), ("A", "local")], ["A"], False, "g1", ["already used by Goto", "'g0'"]),
    ([("A", "scoped"), ("A", "local")], ["A"], True, "sub/g1", ["already used by Goto"]),
    ([("A", "global"), ("A", "global")], ["A"], True, "sub/g1", ["already used by Goto"]),
])
def test_tag_errors_name_the_block_and_the_tag(gotos, froms, inside, block_id, words):
    with pytest.raises(CompileError) as info:
        blocksim.compile(one_level(gotos, froms, inside))
    assert info.value.block == block_id
    for word in words:
        assert word in str(info.value)


def test_local_gotos_with_one_tag_at_different_levels_do_not_clash():
    """Local "A" at the top and local "A" in `sub`: each level's From reads its own."""
    d = diagram([block("c", "Constant", value=1.0), block("g", "Goto", tag="A"),
                 block("f", "From", tag="A"), block("y", "Output"),
                 sub("sub", [block("c", "Constant", value=2.0), block("g", "Goto", tag="A"),
                             block("f", "From", tag="A"), block("o", "Outport")],
                     [("c.y", "g.u"), ("f.y", "o.u")]),
                 block("y_sub", "Output")],
                [("c.y", "g.u"), ("f.y", "y.u"), ("sub.o", "y_sub.u")], stop=1.0)
    r = blocksim.simulate(d)
    assert r["y"][-1] == 1.0 and r["y_sub"][-1] == 2.0


def test_scoped_goto_is_seen_below_but_not_above():
    d = diagram([sub("sub", [block("c", "Constant", value=2.0),
                             block("g", "Goto", tag="A", visibility="scoped")],
                     [("c.y", "g.u")]),
                 block("f", "From", tag="A"), block("y", "Output")], [("f.y", "y.u")],
                stop=1.0)
    with pytest.raises(CompileError) as info:
        blocksim.compile(d)
    assert info.value.block == "f" and "scoped, at sub" in str(info.value)


def test_unconnected_goto_and_a_tag_into_an_enabled_subsystem_are_errors():
    d = diagram([block("g", "Goto", tag="A"), block("f", "From", tag="A"),
                 block("y", "Output")], [("f.y", "y.u")], stop=1.0)
    with pytest.raises(CompileError) as info:
        blocksim.compile(d)
    assert info.value.block == "g" and info.value.port == "u"
    d = diagram([block("c", "Constant", value=1.0), block("g", "Goto", tag="A",
                                                         visibility="global"),
                 sub("en", [block("f", "From", tag="A"), block("o", "Outport")],
                     [("f.y", "o.u")], kind="EnabledSubsystem"),
                 block("y", "Output")],
                [("c.y", "g.u"), ("c.y", "en.enable"), ("en.o", "y.u")], stop=1.0)
    with pytest.raises(CompileError) as info:
        blocksim.compile(d)
    assert info.value.block == "en/f" and "enabled subsystem" in str(info.value)


def test_bad_tag_is_refused_naming_the_parameter():
    d = diagram([block("c", "Constant"), block("g", "Goto", tag="no tag")], [("c.y", "g.u")])
    with pytest.raises(CompileError) as info:
        blocksim.compile(d)
    assert info.value.block == "g" and "'tag'" in str(info.value)


# ----- MultiportSwitch -----

def multiport(control_blocks, control_wires, n=3, **settings):
    data = [block(f"d{i}", "Constant", value=float(10 * (i + 1))) for i in range(n - 1)]
    data.append(block("ramp", "Ramp", slope=1.0))  # the last input varies: un = t
    wires = [(f"d{i}.y", f"m.u{i + 1}") for i in range(n - 1)] + [("ramp.y", f"m.u{n}")]
    return diagram(control_blocks + data + [block("m", "MultiportSwitch", inputs=n),
                                            block("y", "Output"), block("w", "Integrator")],
                   control_wires + wires + [("m.y", "y.u"), ("m.y", "w.u")],
                   **{**TIGHT, "output_interval": 0.05, **settings})


def test_multiport_switch_selects_at_the_half_integer_crossings():
    """control = 2 + 2 sin t: from 2 (u2) it rises through 2.5 (u3) at asin(1/4), clips
    above 3, falls through 2.5 and 1.5 (u1) at pi - asin(1/4), pi + asin(1/4), and so on;
    below 1 it stays at u1 (clipped)."""
    # (an integrator of the control keeps the solver's steps on the sine's time scale)
    r = run_both(multiport([block("s", "Sine", frequency=SIN, amplitude=2.0, bias=2.0),
                            block("ws", "Integrator")],
                           [("s.y", "m.control"), ("s.y", "ws.u")], stop=7.0))
    a = math.asin(0.25)
    expected = [a, math.pi - a, math.pi + a, 2 * math.pi - a, 2 * math.pi + a]
    found = switches(r, "m")
    assert [k for _, k in found] == ["switch"] * len(expected)
    np.testing.assert_allclose([t for t, _ in found], expected, rtol=0, atol=1e-12)
    c = 2.0 + 2.0 * np.sin(r.time)
    sel = np.clip(np.floor(c + 0.5), 1, 3)
    want = np.where(sel == 1, 10.0, np.where(sel == 2, 20.0, r.time))
    # at a switching instant the left and right limits are both rows: compare away from them
    away = np.min(np.abs(r.time[:, None] - np.array(expected)[None, :]), axis=1) > 1e-9
    np.testing.assert_array_equal(r["y"][away], want[away])


def test_multiport_switch_control_jump_moves_several_inputs_at_once():
    r = run_both(multiport([block("u", "FromTable", times=[0.0, 1.0, 1.0, 3.0],
                                  values=[1.0, 1.0, 3.0, 3.0])],
                           [("u.y", "m.control")], stop=2.0))
    t = r.time
    np.testing.assert_array_equal(r["y"][t < 1.0], 10.0)
    np.testing.assert_array_equal(r["y"][t > 1.0], t[t > 1.0])
    assert [k for _, k in switches(r, "m")] == ["switch"]


def test_multiport_switch_vector_control_is_refused():
    d = diagram([block("c", "Constant", value=[1.0, 2.0]), block("d", "Constant"),
                 block("m", "MultiportSwitch"), block("y", "Output")],
                [("c.y", "m.control"), ("d.y", "m.u1"), ("d.y", "m.u2"), ("m.y", "y.u")])
    with pytest.raises(CompileError) as info:
        blocksim.compile(d)
    assert info.value.block == "m" and "control input must be a scalar" in str(info.value)


# ----- Selector -----

def test_selector_picks_one_based_elements_in_any_order():
    d = diagram([block("c", "Constant", value=[5.0, 6.0, 7.0]), block("r", "Ramp"),
                 block("mx", "Mux"), block("s", "Selector", indices=[4, 1, 1, 3]),
                 block("y", "Output"), block("w", "Integrator")],
                [("c.y", "mx.u1"), ("r.y", "mx.u2"), ("mx.y", "s.u"), ("s.y", "y.u"),
                 ("r.y", "w.u")], stop=1.0, output_interval=0.25)
    r = run_both(d, events_compiled=False)
    np.testing.assert_array_equal(r["y"], np.column_stack([r.time, np.full_like(r.time, 5.0),
                                                           np.full_like(r.time, 5.0),
                                                           np.full_like(r.time, 7.0)]))


@pytest.mark.parametrize("indices, words", [([0], "whole numbers from 1"),
                                            ([1.5], "whole numbers from 1"),
                                            ([4], "element 4 of an input of width 3")])
def test_selector_bad_indices_name_the_block(indices, words):
    d = diagram([block("c", "Constant", value=[5.0, 6.0, 7.0]),
                 block("s", "Selector", indices=indices), block("y", "Output")],
                [("c.y", "s.u"), ("s.y", "y.u")])
    with pytest.raises(CompileError) as info:
        blocksim.compile(d)
    assert info.value.block == "s" and words in str(info.value)


# ----- Merge -----

def clock_subsystem(block_id, gain):
    """An enabled subsystem whose output is gain * t while enabled (held while not)."""
    return sub(block_id, [block("clk", "Clock"), block("k", "Gain", k=gain),
                          block("o", "Outport")],
               [("clk.y", "k.u"), ("k.y", "o.u")], kind="EnabledSubsystem")


def test_merge_follows_the_subsystem_enabled_last():
    """A runs while sin t > 0 and outputs t, B while sin t < 0 and outputs -2 t: Merge
    switches at every multiple of pi (the located enable events), to the one just enabled."""
    d = diagram([block("s", "Sine", frequency=SIN), block("neg", "Gain", k=-1.0),
                 clock_subsystem("a", 1.0), clock_subsystem("b", -2.0),
                 block("m", "Merge"), block("y", "Output"), block("w", "Integrator")],
                [("s.y", "a.enable"), ("s.y", "neg.u"), ("neg.y", "b.enable"),
                 ("a.o", "m.u1"), ("b.o", "m.u2"), ("m.y", "y.u"), ("s.y", "w.u")],
                stop=7.0, output_interval=0.05, **TIGHT)
    r = run_both(d)
    found = switches(r, "m")
    assert [k for _, k in found] == ["select"] * 2
    np.testing.assert_allclose([t for t, _ in found], [math.pi, 2 * math.pi], rtol=0,
                               atol=1e-12)
    t = r.time
    away = np.min(np.abs(t[:, None] - np.array([math.pi, 2 * math.pi])), axis=1) > 1e-9
    want = np.where(np.sin(t) > 0, t, -2.0 * t)
    np.testing.assert_allclose(r["y"][away], want[away], rtol=0, atol=1e-12)


def test_merge_before_any_source_ran_outputs_initial():
    d = diagram([block("s", "Step", time=2.0, before=-1.0, after=1.0),
                 clock_subsystem("a", 1.0), block("c", "Constant", value=-1.0),
                 clock_subsystem("b", 1.0),
                 block("m", "Merge", initial=7.0), block("y", "Output"), block("w", "Integrator")],
                [("s.y", "a.enable"), ("c.y", "b.enable"), ("a.o", "m.u1"), ("b.o", "m.u2"),
                 ("m.y", "y.u"), ("s.y", "w.u")], stop=3.0, output_interval=0.5)
    r = run_both(d)
    t = r.time
    np.testing.assert_array_equal(r["y"][t < 2.0], 7.0)
    np.testing.assert_allclose(r["y"][t > 2.0], t[t > 2.0], rtol=0, atol=1e-12)


def test_merge_input_not_from_an_enabled_subsystem_is_refused():
    d = diagram([block("c", "Constant"), clock_subsystem("a", 1.0), block("m", "Merge"),
                 block("y", "Output")],
                [("c.y", "a.enable"), ("a.o", "m.u1"), ("c.y", "m.u2"), ("m.y", "y.u")])
    with pytest.raises(CompileError) as info:
        blocksim.compile(d)
    assert info.value.block == "m" and info.value.port == "u2"
    assert "EnabledSubsystem" in str(info.value) and "'c'" in str(info.value)


def test_merge_switches_at_every_trigger_of_triggered_sources():
    """A samples t at rising edges of sin t (2 pi), B samples -t at falling edges (pi,
    3 pi): Merge shows `initial`, then B's -pi, A's 2 pi, B's -3 pi, switching at the
    located edges."""
    def sampler(block_id, edge):
        return sub(block_id, [block("u", "Inport"), block("o", "Outport")], [("u.y", "o.u")],
                   kind="TriggeredSubsystem", edge=edge)
    d = diagram([block("s", "Sine", frequency=SIN), block("clk", "Clock"),
                 block("neg", "Gain", k=-1.0), sampler("a", "rising"), sampler("b", "falling"),
                 block("m", "Merge", initial=0.5), block("y", "Output"),
                 block("w", "Integrator")],
                [("s.y", "a.trigger"), ("s.y", "b.trigger"), ("clk.y", "a.u"),
                 ("clk.y", "neg.u"), ("neg.y", "b.u"), ("a.o", "m.u1"), ("b.o", "m.u2"),
                 ("m.y", "y.u"), ("s.y", "w.u")],
                stop=10.0, output_interval=0.05, **TIGHT)
    r = run_both(d)
    edges = [math.pi, 2 * math.pi, 3 * math.pi]
    found = switches(r, "m")
    assert [k for _, k in found] == ["select"] * 3
    np.testing.assert_allclose([t for t, _ in found], edges, rtol=0, atol=1e-12)
    t, y = r.time, r["y"]
    np.testing.assert_array_equal(y[t < edges[0]], 0.5)
    for lo, hi, value in ((edges[0], edges[1], -math.pi), (edges[1], edges[2], 2 * math.pi),
                          (edges[2], 11.0, -3 * math.pi)):
        inside = (t > lo + 1e-9) & (t < hi - 1e-9)
        np.testing.assert_allclose(y[inside], value, rtol=0, atol=1e-11)


def test_tags_that_feed_themselves_are_an_error():
    d = diagram([block("g", "Goto", tag="A"), block("f", "From", tag="A"),
                 block("g2", "Goto", tag="B"), block("f2", "From", tag="B"),
                 block("y", "Output")],
                [("f.y", "g2.u"), ("f2.y", "g.u"), ("f.y", "y.u")], stop=1.0)
    with pytest.raises(CompileError) as info:
        blocksim.compile(d)
    assert "form a loop with no block in it" in str(info.value)


def test_the_editor_checks_a_lone_goto_or_from_by_its_parameters_only():
    """The inspector flattens the block alone: a From without its Goto, or a Goto without
    its input, is no parameter problem; a bad tag is."""
    from blocksim.gui.document.validation import check_block_params
    from blocksim.diagram.model import Block, Diagram

    assert check_block_params(Diagram(), Block("f", "From"), {"tag": "X"}) is None
    assert check_block_params(Diagram(), Block("g", "Goto"), {"tag": "X"}) is None
    assert "'tag' must be a name" in check_block_params(Diagram(), Block("g", "Goto"),
                                                        {"tag": "1x"})


def test_merge_of_sources_enabled_at_one_event_takes_the_highest_numbered():
    d = diagram([block("s", "Step", time=1.0, before=-1.0, after=1.0),
                 clock_subsystem("a", 1.0), clock_subsystem("b", 2.0),
                 block("m", "Merge"), block("y", "Output"), block("w", "Integrator")],
                [("s.y", "a.enable"), ("s.y", "b.enable"), ("a.o", "m.u1"), ("b.o", "m.u2"),
                 ("m.y", "y.u"), ("s.y", "w.u")], stop=2.0, output_interval=0.5)
    r = run_both(d)
    assert r["y"][-1] == 4.0 and [k for _, k in switches(r, "m")] == ["select"]


def test_multiport_switch_vector_data_with_scalar_expansion():
    d = diagram([block("c", "Constant", value=2.0), block("v", "Constant", value=[1.0, 2.0]),
                 block("k", "Constant", value=5.0), block("m", "MultiportSwitch"),
                 block("y", "Output")],
                [("c.y", "m.control"), ("v.y", "m.u1"), ("k.y", "m.u2"), ("m.y", "y.u")],
                stop=1.0)
    r = blocksim.simulate(d)
    np.testing.assert_array_equal(r["y"][-1], [5.0, 5.0])
