"""Wires stay readable: the routing-quality check over every example as the editor opens it,
after scripted sequences of block moves, and on the gestures that make wires (issue 13).

The check (`routecheck`) is first shown to see the geometry the canvas items draw and to
count each kind of fault on drawings made to have it."""
import random

import pytest

pytest.importorskip("PySide6")

from editor_helpers import snapshot  # noqa: E402

from blocksim.format import load_diagram  # noqa: E402
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
    drawn = {item.index: [tuple(p) for p in item.route] for item in canvas.scene.wires}
    measured = {r.index: r.points for r in draw(canvas.scene.doc.diagram).routes}
    assert measured == drawn and len(drawn) == len(diagram.wires)


# ----- every example as the editor opens it -----
@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_every_example_opens_with_clean_wires(path):
    doc = DiagramDocument(load_diagram(path))  # as File > Open: laid out automatically
    assert _faults(doc.diagram) == {}


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
