"""Wires stay readable: the routing-quality check over every example as the editor opens it,
after scripted sequences of block moves, and on the gestures that make wires (issue 13).

The check (`routecheck`) is first shown to see the geometry the canvas items draw and to
count each kind of fault on drawings made to have it."""
import random

import pytest

pytest.importorskip("PySide6")

from editor_helpers import snapshot  # noqa: E402

from blocksim.diagram.format import load_diagram  # noqa: E402
from blocksim.gui.canvas.area import Canvas  # noqa: E402
from blocksim.gui.canvas.routecheck import (  # noqa: E402
    Drawing,
    WireRoute,
    all_levels,
    check,
    draw,
    level_quality,
)
from blocksim.gui.document.commands import ChangeLayout  # noqa: E402
from blocksim.gui.document.document import DiagramDocument  # noqa: E402
from blocksim.gui.window.files import examples  # noqa: E402

EXAMPLES = examples()
MOVES = 12  # block moves per example in the scripted sequence


def _faults(diagram):
    """{level path: Quality summary} of the levels that have a fault."""
    return {"/".join(where) or "top": q.summary()
            for where, level, names in all_levels(diagram)
            if (q := level_quality(level, names)).faults}


def _route(index, net, *points):
    return WireRoute(index, net, "a", "b", list(points))


# ----- the check itself -----
def test_check_counts_each_kind_of_fault():
    rects = {"blk": (100.0, 100.0, 40.0, 40.0)}
    clean = Drawing(rects, [_route(0, "a.y", (0, 0), (200, 0)),
                            _route(1, "b.y", (50, -50), (50, 50))])
    quality = check(clean)
    assert quality.faults == 0 and quality.crossings == 1 and quality.bends == 0
    through = Drawing(rects, [_route(0, "a.y", (0, 120), (200, 120))])
    assert check(through).through_blocks == [(0, "blk")]
    edge = Drawing(rects, [_route(0, "a.y", (0, 100), (200, 100))])  # along its edge: fine
    assert check(edge).through_blocks == []
    label = Drawing(rects, [_route(0, "a.y", (0, 150), (200, 150))],
                    labels={"blk": (105.0, 144.0, 30.0, 10.0)})
    assert check(label).through_labels == [(0, "blk")] and check(label).faults == 1
    in_line = Drawing({}, [_route(0, "a.y", (0, 0), (100, 0)),
                           _route(1, "b.y", (110, 0), (200, 0))])  # 10 px apart: one wire?
    assert check(in_line).touching and not check(in_line).shared
    shared = Drawing({}, [_route(0, "a.y", (0, 0), (100, 0), (100, 50)),
                          _route(1, "b.y", (60, 0), (200, 0))])
    assert check(shared).shared == [(0, 1)]
    same_net = Drawing({}, [_route(0, "a.y", (0, 0), (100, 0), (100, 50)),
                            _route(1, "a.y", (0, 0), (200, 0))])
    assert check(same_net).faults == 0  # a branch shares its trunk
    touching = Drawing({}, [_route(0, "a.y", (0, 0), (100, 0)),
                            _route(1, "b.y", (50, 50), (50, 0))])
    assert check(touching).touching == [(1, 0)]  # b ends on a's wire: looks joined
    stub = Drawing({}, [_route(0, "a.y", (0, 0), (100, 0), (80, 0))])
    assert check(stub).stubs == [0]


def test_check_sees_what_the_canvas_draws(qtbot):
    """The drawing `routecheck` measures is the one the wire items show, corner for corner."""
    diagram = load_diagram(next(p for p in EXAMPLES if p.stem == "rotating_pendulum"))
    canvas = Canvas(DiagramDocument(diagram))
    qtbot.addWidget(canvas)
    canvas.show()  # a canvas never shown crashed at teardown (its view deleted first)
    qtbot.waitExposed(canvas)
    drawn = {item.index: [tuple(p) for p in item.route] for item in canvas.scene.wires}
    measured = {r.index: r.points for r in draw(canvas.scene.doc.diagram).routes}
    assert measured == drawn and len(drawn) == len(diagram.wires)


# ----- every example as the editor opens it -----
@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_every_example_opens_with_clean_wires(path):
    doc = DiagramDocument(load_diagram(path))  # as File > Open: laid out automatically
    assert _faults(doc.diagram) == {}
    assert doc.rerouted == [] and not doc.dirty  # clean as shipped, not repaired on open


ROOM = 60.0  # free space kept round a moved block: room for a few wires side by side


def _free_spot(drawing, block_id, rng):
    """A move of the block to where it leaves ROOM to every other block."""
    x, y, w, h = drawing.rects[block_id]
    for _ in range(40):
        dx, dy = rng.choice((-1, 1)) * rng.randrange(2, 16) * 10.0, \
            rng.choice((-1, 1)) * rng.randrange(2, 16) * 10.0
        nx, ny = x + dx, y + dy
        if all(nx + w + ROOM < ox or ox + ow + ROOM < nx or ny + h + ROOM < oy
               or oy + oh + ROOM < ny
               for other, (ox, oy, ow, oh) in drawing.rects.items() if other != block_id):
            return dx, dy
    return None


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_scripted_block_moves_keep_wires_clean(path):
    """Moves as a drag commits them (one ChangeLayout each): after every move, no wire
    goes through a block, doubles back or shares a line with another net; one undo
    takes back a move and its re-routing together."""
    doc = DiagramDocument(load_diagram(path))
    diagram = doc.diagram
    rng = random.Random(path.stem)
    moves = 0
    for _ in range(MOVES * 3):
        if moves == MOVES:
            break
        block = rng.choice(diagram.blocks)
        spot = _free_spot(draw(diagram), block.id, rng)
        if spot is None:
            continue
        layout = dict(block.layout)
        layout["x"], layout["y"] = layout["x"] + spot[0], layout["y"] + spot[1]
        before = snapshot(diagram)
        doc.push(ChangeLayout(doc, (), {block.id: layout}, text=f"Move {block.id}"))
        moves += 1
        quality = level_quality(diagram)
        assert quality.faults == 0, (block.id, spot, quality)
        after = snapshot(diagram)
        doc.undo_stack.undo()
        assert snapshot(diagram) == before
        doc.undo_stack.redo()
        assert snapshot(diagram) == after
    assert moves >= min(MOVES, len(diagram.blocks))


# ----- the edits that move wires -----
def test_moving_a_block_in_math003_leaves_no_stub(qtbot):
    """Issue 13's case: dragging part2 down left its input wires running to the old bend
    points and back (a dangling stub). Dragged with the mouse, it is re-routed in the
    same undo step."""
    from editor_helpers import block_point, drag
    from PySide6.QtCore import QPoint

    doc = DiagramDocument(load_diagram(next(p for p in EXAMPLES if p.stem == "math003")))
    canvas = Canvas(doc)
    qtbot.addWidget(canvas)
    canvas.resize(900, 700)
    canvas.show()
    qtbot.waitExposed(canvas)
    layout = dict(doc.diagram.block("part2").layout)
    stale = ChangeLayout(doc, (), {"part2": {**layout, "y": layout["y"] + 60}}, reroute=False)
    doc.push(stale)  # the move as it was before: wires keep their bends
    assert level_quality(doc.diagram).stubs
    doc.undo_stack.undo()
    before, steps = snapshot(doc.diagram), doc.undo_stack.index()
    start = block_point(canvas, "part2")
    scale = canvas.view.transform().m11()
    drag(canvas.view.viewport(), start, start + QPoint(0, round(60 * scale)), steps=6)
    assert doc.undo_stack.index() == steps + 1
    assert doc.diagram.block("part2").layout["y"] != layout["y"]
    quality = level_quality(doc.diagram)
    assert quality.faults == 0, quality
    drawn = {item.index: [tuple(p) for p in item.route] for item in canvas.scene.wires}
    assert drawn == {r.index: r.points for r in draw(doc.diagram).routes}
    doc.undo_stack.undo()
    assert snapshot(doc.diagram) == before


def _two_blocks(points, b_y=0):
    from blocksim.diagram.format import diagram_from_dict

    return diagram_from_dict({
        "format": "blocksim", "version": 1,
        "blocks": [{"id": "a", "type": "Constant", "layout": {"x": 0, "y": 0}},
                   {"id": "b", "type": "Scope", "layout": {"x": 400, "y": b_y}}],
        "wires": [{"src": "a.y", "dst": "b.u", "points": [list(p) for p in points]}]})


def _size(diagram):
    from blocksim.gui.canvas.reroute import route_size

    return route_size(draw(diagram).routes[0].points)


def test_the_detour_rule():
    """A route is a detour when it is more than DETOUR_FACTOR times as long as the fresh
    one plus DETOUR_SLACK, or has more than EXTRA_BENDS extra bends."""
    from blocksim.gui.canvas.reroute import (
        DETOUR_FACTOR,
        DETOUR_SLACK,
        EXTRA_BENDS,
        is_detour,
    )

    fresh = [(0.0, 0.0), (400.0, 0.0)]  # 400 long, no bend
    limit = DETOUR_FACTOR * 400 + DETOUR_SLACK
    jog = [(0.0, 0.0), (100.0, 0.0), (100.0, 30.0), (400.0, 30.0)]  # 430, two bends
    assert route_len(jog) <= limit and not is_detour(jog, fresh)
    loop = [(0.0, 0.0), (100.0, 0.0), (100.0, 120.0), (300.0, 120.0), (300.0, 0.0),
            (400.0, 0.0)]  # 640 long, four bends
    assert route_len(loop) > limit and is_detour(loop, fresh)
    zigzag = [(0.0, 0.0), (100.0, 0.0), (100.0, 10.0), (200.0, 10.0), (200.0, 0.0),
              (400.0, 0.0)]  # hardly longer (420) but EXTRA_BENDS + 2 bends more
    assert route_len(zigzag) <= limit and EXTRA_BENDS < 4 and is_detour(zigzag, fresh)


def route_len(points):
    return sum(abs(b[0] - a[0]) + abs(b[1] - a[1]) for a, b in zip(points, points[1:]))


def test_the_users_bends_are_kept_while_clean_and_no_detour():
    from blocksim.gui.canvas.reroute import after_move

    jog = [(150.0, 20.0), (150.0, 60.0)]  # the user's step down to b's port at y 60
    diagram = _two_blocks(jog, b_y=40)
    assert level_quality(diagram).faults == 0 and _size(diagram)[1] == 2
    # b further down: through the kept step the wire has two bends more than a fresh
    # route and the same length: not a detour, the user's bends stay
    assert after_move(diagram, None, {"b": {"x": 400, "y": 140}}) == {}
    # b back level with a: the step would now be a pointless up-and-down (four bends
    # where a straight wire does): the bends that make it go
    changed = after_move(diagram, None, {"b": {"x": 400, "y": 0}})
    diagram.block("b").layout = {"x": 400, "y": 0}
    diagram.wires[0].points = changed[0]
    assert level_quality(diagram).faults == 0 and _size(diagram) == (350.0, 0)


def test_a_detour_drawn_by_the_user_goes_once_its_block_moves():
    """The user's loop below the line is kept while nothing moves (the file is the file),
    but moving b re-routes it: a loop is more than DETOUR_FACTOR times the fresh route."""
    from blocksim.gui.canvas.reroute import after_move

    user = [(100.0, 20.0), (100.0, 120.0), (250.0, 120.0), (250.0, 20.0)]  # a detour
    diagram = _two_blocks(user)
    assert level_quality(diagram).faults == 0 and _size(diagram)[1] == 4
    changed = after_move(diagram, None, {"b": {"x": 400, "y": 40}})
    diagram.block("b").layout = {"x": 400, "y": 40}
    diagram.wires[0].points = changed[0]
    assert level_quality(diagram).faults == 0
    assert _size(diagram) == (390.0, 2)  # the plain route: one step down, half-way
    # b under the old detour: the bends from a's end that still give a clean route and
    # no detour are kept
    diagram = _two_blocks(user)
    changed = after_move(diagram, None, {"b": {"x": 200, "y": 200}})
    diagram.block("b").layout = {"x": 200, "y": 200}
    diagram.wires[0].points = changed[0]
    assert level_quality(diagram).faults == 0


def test_moving_restitution_in_the_ball_leaves_no_detour():
    """Issue 13's case: moving the ball's `restitution` block down kept the feedback
    wire's old loop far below (730 px, six bends, where the plain route is 430 px). Now
    none of its wires is a detour next to its plain route, every wire stays clean, and one undo takes back the move and the re-routing."""
    from blocksim.gui.canvas.reroute import is_detour
    from blocksim.gui.canvas.routecheck import wire_route

    doc = DiagramDocument(load_diagram(next(p for p in EXAMPLES if p.stem == "bouncing_ball")))
    diagram = doc.diagram
    before = snapshot(diagram)
    for dx, dy in ((0.0, 40.0), (0.0, -40.0), (-60.0, 0.0), (-150.0, 60.0)):
        layout = dict(diagram.block("restitution").layout)
        layout["x"], layout["y"] = layout["x"] + dx, layout["y"] + dy
        doc.push(ChangeLayout(doc, (), {"restitution": layout}, text="Move restitution"))
        assert level_quality(diagram).faults == 0, (dx, dy)
        drawing = draw(diagram)
        for index, wire in enumerate(diagram.wires):
            if "restitution" in (wire.src.block, wire.dst.block):
                route, plain = wire_route(drawing, wire), wire_route(drawing, wire, [])
                assert not is_detour(route, plain), (dx, dy, index, route)
        doc.undo_stack.undo()
        assert snapshot(diagram) == before


def test_a_new_wire_keeps_off_another_nets_wire():
    """Two wires swapping rows between the same columns cannot both take the plain route
    (their vertical runs would share one line); the second one drawn goes round."""
    from blocksim.diagram.format import diagram_from_dict
    from blocksim.gui.canvas.reroute import settle_wire
    from blocksim.diagram.model import PortRef, Wire

    diagram = diagram_from_dict({
        "format": "blocksim", "version": 1,
        "blocks": [{"id": "a", "type": "Constant", "layout": {"x": 0, "y": 0}},
                   {"id": "b", "type": "Constant", "layout": {"x": 0, "y": 100}},
                   {"id": "c", "type": "Scope", "layout": {"x": 300, "y": 100}},
                   {"id": "d", "type": "Scope", "layout": {"x": 300, "y": 0}}],
        "wires": [{"src": "a.y", "dst": "c.u"}]})
    new = Wire(PortRef("b", "y"), PortRef("d", "u"))
    diagram.wires.append(Wire(new.src, new.dst))
    assert level_quality(diagram).shared  # the plain route would share a's line
    diagram.wires.pop()
    new.points = settle_wire(diagram, None, new)
    diagram.wires.append(new)
    assert new.points and level_quality(diagram).faults == 0


def test_nudges_and_their_re_routing_are_one_undo_step(qtbot):
    doc = DiagramDocument(load_diagram(next(p for p in EXAMPLES if p.stem == "math003")))
    canvas = Canvas(doc)
    qtbot.addWidget(canvas)
    canvas.show()  # see test_check_sees_what_the_canvas_draws
    qtbot.waitExposed(canvas)
    before, steps = snapshot(doc.diagram), doc.undo_stack.count()
    canvas.scene.select_only(["part2"])
    for _ in range(6):
        canvas.editor.nudge(0.0, 10.0)
    assert doc.undo_stack.count() == steps + 1
    assert level_quality(doc.diagram).faults == 0
    doc.undo_stack.undo()
    assert snapshot(doc.diagram) == before


def test_dots_only_where_a_net_really_joins():
    from blocksim.gui.canvas.routing import junctions

    trunk = [(0, 0), (100, 0)]
    branch = [(0, 0), (50, 0), (50, 50)]  # leaves the trunk at (50, 0)
    assert junctions([trunk, branch]) == [(50, 0)]
    crossing = [(0, 0), (0, -20), (60, -20), (60, 40)]  # crosses the trunk at (60, 0)
    assert junctions([trunk, crossing]) == []  # same net, but no join is drawn there
    assert junctions([trunk, branch, crossing]) == [(50, 0)]
