"""The editor with physical components (issue 26): ports from the declaration on the
edges a schematic uses, symbols, connections dragged between ports of one domain (drawn
without arrowheads in the domain's colour), refusals with the reason, physical nets for
the router and junction dots, subsystems' ConnectionPorts, the palette's categories."""
from __future__ import annotations

import pytest

pytest.importorskip("PySide6")

from editor_helpers import drag, open_window, palette_drop, port_point  # noqa: E402
from PySide6.QtCore import QPoint  # noqa: E402

from blocksim.blocktypes import registry  # noqa: E402
from blocksim.diagram.model import Block, Diagram, PortRef, Wire  # noqa: E402
from blocksim.gui.canvas import symbols  # noqa: E402
from blocksim.gui.canvas.nets import PHYSICAL_NET, net_keys  # noqa: E402
from blocksim.gui.canvas.portinfo import block_placement, port_info  # noqa: E402
from blocksim.gui.canvas.routecheck import draw, label_rect  # noqa: E402
from blocksim.physical.declare import Component  # noqa: E402
from blocksim.physical.domains import DOMAINS  # noqa: E402

SHOTS = __import__("os").environ.get("BLOCKSIM_TEST_SHOTS")  # pictures kept here, if set


def info_of(type_name: str, **params):
    return port_info(Block("b", type_name, params), {})


def edges(type_name: str) -> dict:
    return dict(info_of(type_name).edges)


def test_ports_sit_where_a_schematic_puts_them():
    assert edges("Resistor") == {"in": ("p",), "out": ("n",)}  # two pins: left, right
    assert edges("Ground") == {"top": ("p",)}  # one pin, no signals: its symbol's edge
    assert edges("ConstantForce") == {"out": ("flange",)}
    assert edges("VoltageSensor") == {"in": ("p",), "out": ("n",), "top": ("v",)}
    assert edges("SignalVoltage") == {"in": ("p",), "out": ("n",), "top": ("u",)}
    assert edges("Force") == {"in": ("f",), "out": ("flange",)}  # input opposite its flange
    assert edges("PositionSensor") == {"in": ("flange",), "out": ("s",)}
    info = info_of("Mass")
    assert info.physical == ("flange_a", "flange_b") and info.domains == ("translational",) * 2
    assert info.kind_of("flange_a") == "phys" and info.domain_of("flange_b") == "translational"
    # a connector's place follows the block's rotation like any port
    turned = Block("c", "Capacitor", {}, {"x": 0, "y": 0, "rotation": 90})
    place = block_placement(turned, port_info(turned, {}))
    cap = port_info(turned, {})
    (p, p_dir), (n, n_dir) = (place.port(*cap.slot("phys", name)) for name in ("p", "n"))
    assert p_dir == (0.0, -1.0) and n_dir == (0.0, 1.0) and p[0] == n[0] and p[1] < n[1]


def test_every_library_component_has_a_symbol_and_ports_on_the_grid():
    components = [t for t in registry.all_types().values()
                  if issubclass(t, Component) or t.name == "ConnectionPort"]
    assert len(components) > 40
    for block_type in components:
        assert symbols.symbol(block_type.name) is not None, block_type.name
        block = Block("b", block_type.name, {}, {"x": 0, "y": 0})
        info = port_info(block, {})
        place = block_placement(block, info)
        for kind in ("in", "out", "phys"):
            for name in info.ports(kind):
                (x, y), _ = place.port(*info.slot(kind, name))
                assert x % 10 == 0 and y % 10 == 0, (block_type.name, name, x, y)
        w, h = place.w, place.h
        for item in symbols.drawing(block_type.name, w, h):  # inside the block
            points = getattr(item, "points", None) or [getattr(item, "centre")]
            assert all(-1 <= px <= w + 1 and -1 <= py <= h + 1 for px, py in points), \
                block_type.name


def test_a_component_without_a_symbol_is_a_box_with_its_name(monkeypatch):
    monkeypatch.delitem(symbols.SYMBOLS, "Resistor")
    from blocksim.gui.canvas.portinfo import glyph
    block = Block("r", "Resistor", {}, {"x": 0, "y": 0})
    assert glyph(block) == "Resistor"
    assert dict(port_info(block, {}).edges) == {"in": ("p",), "out": ("n",)}


def test_physical_nets_join_connections_whichever_way_they_were_drawn():
    wires = [Wire(PortRef("a", "n"), PortRef("b", "p")), Wire(PortRef("c", "p"), PortRef("b", "p")),
             Wire(PortRef("d", "y"), PortRef("e", "u")), Wire(PortRef("d", "y"), PortRef("f", "u")),
             Wire(PortRef("g", "p"), PortRef("h", "n"))]
    keys = net_keys(wires, lambda ref: ref.block in "abcgh")
    assert keys[0] == keys[1] == PHYSICAL_NET + "a.n"
    assert keys[2] == keys[3] == "d.y"
    assert keys[4] == PHYSICAL_NET + "g.p" != keys[0]


def test_subsystem_shows_its_connection_ports_on_the_side_they_are_drawn_inside():
    inner = Diagram(blocks=[
        Block("a", "ConnectionPort", {}, {"x": 0, "y": 50}),
        Block("r", "Resistor", {}, {"x": 100, "y": 50}),
        Block("b", "ConnectionPort", {"domain": "electrical"}, {"x": 200, "y": 50}),
        Block("shaft", "ConnectionPort", {"domain": "rotational"}, {"x": 200, "y": 120}),
        Block("u", "Inport", {}, {"x": 0, "y": 0})])
    sub = Block("sub", "Subsystem", {}, {"x": 0, "y": 0}, inner)
    info = port_info(sub, {})
    assert dict(info.edges) == {"in": ("u", "a"), "out": ("b", "shaft")}
    assert info.domain_of("shaft") == "rotational" and info.kind_of("u") == "in"


def test_a_label_moves_aside_for_a_port_on_the_bottom_edge():
    # a voltage sensor turned over (its output at the bottom) and a capacitor upright
    for block in (Block("uC_sensor", "VoltageSensor", {}, {"x": 0, "y": 0, "rotation": 180}),
                  Block("C", "Capacitor", {}, {"x": 0, "y": 0, "rotation": 90})):
        drawing = draw(Diagram(blocks=[block]))
        x, y, w, h = drawing.rects[block.id]
        lx, *_ = drawing.labels[block.id]
        assert lx > x + w / 2  # right of the port in the middle of the bottom edge
    plain = label_rect((0, 0, 60, 40), Block("r", "Resistor"))
    assert plain[0] == pytest.approx(30 - plain[2] / 2)


# ----- in the editor -----
def place(window, type_name: str, fx: float, fy: float) -> str:
    viewport = window.canvas.view.viewport()
    size = viewport.size()
    palette_drop(viewport, QPoint(int(fx * size.width()), int(fy * size.height())), type_name)
    return window.doc.diagram.blocks[-1].id


def connect(window, a: str, b: str) -> None:
    """Drag from port a ("block.port") to port b, as a user does."""
    canvas = window.canvas
    ends = []
    for ref in (a, b):
        block, port = ref.split(".")
        kind = canvas.scene.blocks[block].kind_of(port, "in")
        ends.append(port_point(canvas, block, kind, port))
    drag(canvas.view.viewport(), *ends)


def test_connections_are_dragged_between_physical_ports_and_drawn_without_arrowheads(env, qtbot):
    window = open_window(qtbot)
    r = place(window, "Resistor", 0.2, 0.3)
    c = place(window, "Capacitor", 0.5, 0.3)
    g = place(window, "Ground", 0.5, 0.7)
    connect(window, f"{r}.n", f"{c}.p")
    connect(window, f"{c}.n", f"{g}.p")
    connect(window, f"{g}.p", f"{r}.p")  # from a port that has a connection: another one
    wires = window.doc.diagram.wires
    assert [(str(w.src), str(w.dst)) for w in wires] == [
        (f"{r}.n", f"{c}.p"), (f"{c}.n", f"{g}.p"), (f"{g}.p", f"{r}.p")]
    colour = DOMAINS["electrical"].colour
    for item in window.canvas.scene.wires:
        assert item.domain == "electrical" and item._arrow is None and not item.dangling
        assert item._domain_pen.color().name() == colour
        route = item.route  # attached to both ports
        scene = window.canvas.scene
        assert route[0] == scene.blocks[item.wire.src.block].port_position(
            "phys", item.wire.src.port)[0]
        assert route[-1] == scene.blocks[item.wire.dst.block].port_position(
            "phys", item.wire.dst.port)[0]
    nets = {window.canvas.scene.net_of(item) for item in window.canvas.scene.wires}
    assert len(nets) == 2  # r.n-c.p; and c.n, ground, r.p
    # the same pair again, either way round: refused, said
    connect(window, f"{c}.p", f"{r}.n")
    assert len(window.doc.diagram.wires) == 3
    assert "connected already" in window.statusBar().currentMessage()
    # one undo step per connection
    window.actions_.undo.trigger()
    assert len(window.doc.diagram.wires) == 2
    assert env == []


def test_a_connection_to_a_signal_port_or_another_domain_is_refused_with_the_reason(env, qtbot):
    window = open_window(qtbot)
    r = place(window, "Resistor", 0.2, 0.3)
    gain = place(window, "Gain", 0.5, 0.3)
    mass = place(window, "Mass", 0.5, 0.7)
    status = window.statusBar()
    connect(window, f"{r}.p", f"{gain}.u")
    assert window.doc.diagram.wires == []
    assert status.currentMessage().startswith(
        f"{r}.p is an electrical port and {gain}.u a signal port: a physical port connects "
        f"only to physical ports of its domain")
    connect(window, f"{gain}.y", f"{r}.n")  # a signal wire onto a physical port
    assert window.doc.diagram.wires == []
    assert f"{r}.n is an electrical port and {gain}.y a signal port" in status.currentMessage()
    connect(window, f"{mass}.flange_a", f"{r}.p")
    assert window.doc.diagram.wires == []
    assert status.currentMessage() == (
        f"{mass}.flange_a is a translational port and {r}.p an electrical port: a "
        f"connection joins ports of one domain.")
    assert window.doc.undo_stack.count() == 3  # the three drops only
    assert env == []


def test_junction_dots_where_three_connections_meet(env, qtbot):
    window = open_window(qtbot)
    a = place(window, "Resistor", 0.2, 0.2)
    b = place(window, "Resistor", 0.2, 0.5)
    g = place(window, "Ground", 0.6, 0.8)
    connect(window, f"{a}.n", f"{g}.p")
    connect(window, f"{b}.n", f"{g}.p")
    items = window.canvas.scene.wires
    assert sum(len(item.junctions) for item in items) == 1


def test_palette_lists_components_by_domain(env, qtbot):
    window = open_window(qtbot)
    palette = window.panels.palette
    tree = palette.tree
    groups = {tree.topLevelItem(i).text(0): tree.topLevelItem(i)
              for i in range(tree.topLevelItemCount())}
    for category, member in (("Electrical", "Resistor"), ("Translational", "Spring"),
                             ("Rotational", "Inertia"), ("Thermal", "HeatCapacitor")):
        group = groups[category]
        assert member in [group.child(j).text(0) for j in range(group.childCount())]


def test_inspector_shows_a_components_parameters_with_units(env, qtbot):
    window = open_window(qtbot)
    cap = place(window, "Capacitor", 0.4, 0.4)
    inspector = window.panels.inspector
    assert inspector.block_id() == cap
    assert set(inspector.fields) == {"C", "v0"}
    labels = [inspector.form.labelForField(f.widget).text() for f in inspector.fields.values()]
    assert labels == ["C [F]", "v0 [V]"]


def test_double_click_on_a_block_puts_the_keyboard_in_its_inspector(env, qtbot):
    from editor_helpers import block_point
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication

    window = open_window(qtbot)
    r = place(window, "Resistor", 0.3, 0.3)
    window.canvas.scene.clearSelection()
    viewport = window.canvas.view.viewport()
    QTest.mouseDClick(viewport, Qt.LeftButton, Qt.NoModifier, block_point(window.canvas, r))
    inspector = window.panels.inspector
    assert QApplication.focusWidget() is inspector.id_edit
    assert inspector.id_edit.selectedText() == r
    QTest.keyClicks(inspector.id_edit, "R1")
    QTest.keyClick(inspector.id_edit, Qt.Key_Tab)  # to the first parameter
    QTest.keyClicks(QApplication.focusWidget(), "1000")
    QTest.keyClick(QApplication.focusWidget(), Qt.Key_Return)
    assert window.doc.diagram.block("R1").params == {"R": 1000}
    assert env == []


def test_automatic_layout_lets_connections_flow_left_to_right_however_they_were_drawn():
    from blocksim.gui.canvas.routecheck import check
    from blocksim.gui.layout.autolayout import layout_diagram

    blocks = [Block(f"r{k}", "Resistor") for k in range(1, 4)] + [Block("g", "Ground")]
    wires = [Wire(PortRef("r2", "p"), PortRef("r1", "n")),  # each drawn from its right end
             Wire(PortRef("r3", "p"), PortRef("r2", "n")),
             Wire(PortRef("g", "p"), PortRef("r3", "n")),
             Wire(PortRef("r1", "p"), PortRef("g", "p"))]
    diagram = Diagram(blocks=blocks, wires=wires)
    layout_diagram(diagram)
    xs = [diagram.block(f"r{k}").layout["x"] for k in range(1, 4)]
    assert xs == sorted(xs) and len(set(xs)) == 3
    assert check(draw(diagram)).faults == 0


def test_grouping_components_makes_connection_ports_and_runs_the_same(env, qtbot):
    import numpy as np

    import blocksim
    from blocksim.api.builder import DiagramBuilder
    from blocksim.diagram.format import diagram_from_dict, diagram_to_dict
    from blocksim.gui.window import app

    d = DiagramBuilder(stop=1e-3, rtol=1e-6, atol=1e-9, output_interval=1e-5)
    src, r = d.add("SineVoltage", id="source", f=2e3), d.add("Resistor", id="R", R=100)
    c, g = d.add("Capacitor", id="C", C=1e-6), d.add("Ground", id="ground")
    uc = d.add("VoltageSensor", id="uC_sensor")
    for a, b in ((src.p, r.p), (r.n, c.p), (c.n, g.p), (src.n, g.p), (uc.p, c.p), (uc.n, c.n)):
        d.connect(a, b)
    uc.v >> d.add("Output", id="uC").u
    from blocksim.gui.layout.autolayout import layout_diagram
    model = diagram_from_dict(diagram_to_dict(d.model))
    layout_diagram(model)
    before = blocksim.simulate(model)
    window = app.create_window()
    qtbot.addWidget(window)
    doc = window.doc
    doc.load(model)
    window.canvas.scene.select_only(["R", "C"])
    sub = window.canvas.editor.group()
    inner = doc.diagram.block(sub).subsystem
    ports = [b for b in inner.blocks if b.type == "ConnectionPort"]
    assert sorted(b.params["domain"] for b in ports) == ["electrical"] * 3  # R.p, C.p, C.n
    info = port_info(doc.diagram.block(sub), {})
    assert len(info.physical) == 3 and not info.inputs and not info.outputs
    assert all(item.domain == "electrical" and not item.dangling
               for item in window.canvas.scene.wires if item.wire.src.block != "uC_sensor"
               or item.wire.src.port != "v")
    after = blocksim.simulate(diagram_from_dict(diagram_to_dict(doc.diagram)))
    np.testing.assert_allclose(after["uC"], before["uC"], rtol=0, atol=1e-12)
    if SHOTS:
        from blocksim.gui.canvas.render import render_diagram
        render_diagram(doc.diagram, f"{SHOTS}/grouped.png")
        render_diagram(doc.diagram, f"{SHOTS}/grouped_inside.png", level=(sub,))


def test_a_connection_offers_no_signal_name(env, qtbot):
    window = open_window(qtbot)
    r = place(window, "Resistor", 0.2, 0.3)
    g = place(window, "Ground", 0.5, 0.6)
    connect(window, f"{r}.n", f"{g}.p")
    item = window.canvas.scene.wires[0]
    window.canvas.scene.select_only(wire_keys=[f"{item.wire.src}->{item.wire.dst}"])
    assert window.canvas.scene.selected_wire_indices() == [0]
    assert not window.actions_.name_signal.isEnabled()
    menu = window.context_menus._wire_menu(0)
    assert not any("Signal" in action.text() for action in menu.actions())


def test_the_palette_lists_the_component_types_the_open_diagram_declares(window):
    """Opening a diagram that declares its own components (the C21 Shockley law) lists
    them in the palette, to place more; another diagram takes them away again."""
    from blocksim.diagram.examples import examples_dir

    palette = window.panels.palette
    assert window.files.open_example(examples_dir() / "physical" / "c21_diode_shockley.json")
    palette.search.setText("ShockleyDiode")
    assert [palette.tree.topLevelItem(k).text(0)
            for k in range(palette.tree.topLevelItemCount())] == ["ShockleyDiode"]
    assert window.files.open_example(examples_dir() / "bouncing_ball.json")
    palette.search.setText("ShockleyDiode")
    assert palette.tree.topLevelItemCount() == 0
