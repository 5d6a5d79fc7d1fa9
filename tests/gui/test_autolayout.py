"""The automatic layout makes clean pictures of every example (checked geometrically)."""
import copy

import pytest

pytest.importorskip("PySide6")

from editor_helpers import lag_diagram  # noqa: E402

from blocksim.diagram.format import diagram_to_dict, load_diagram  # noqa: E402
from blocksim.gui.layout.autolayout import layout_diagram, needs_layout  # noqa: E402
from blocksim.gui.window.files import examples  # noqa: E402
from blocksim.gui.canvas.geometry import LABEL_HEIGHT, label_width  # noqa: E402
from blocksim.gui.canvas.portinfo import block_placement, port_info, scope_names  # noqa: E402
from blocksim.gui.canvas.routing import junctions, route  # noqa: E402


def _levels(diagram, names, path=""):
    yield path or "top", diagram, names
    for blk in diagram.blocks:
        if blk.subsystem is not None:
            yield from _levels(blk.subsystem, scope_names(blk.subsystem, names),
                               f"{path}/{blk.id}")


def _overlap(a, b):
    return a[0] < b[0] + b[2] and b[0] < a[0] + a[2] and a[1] < b[1] + b[3] and b[1] < a[1] + a[3]


def _routes(diagram, names):
    places = {b.id: (block_placement(b, port_info(b, names, diagram.wires)),
                     port_info(b, names, diagram.wires)) for b in diagram.blocks}
    for wire in diagram.wires:
        (ps, si), (pd, di) = places[wire.src.block], places[wire.dst.block]
        start = ps.port("out", si.outputs.index(wire.src.port), len(si.outputs))
        end = pd.port("in", di.inputs.index(wire.dst.port), len(di.inputs))
        yield wire, route(start[0], start[1], end[0], end[1], wire.points, ps.rect, pd.rect)


# Circuits and mechanisms (diagrams/physical/) are laid out by hand, like a schematic; the
# signal-flow examples are saved without positions and laid out by the editor.
AUTO_LAID_OUT = [p for p in examples() if p.parent.name != "physical"]


def test_only_the_physical_examples_carry_positions():
    for path in examples():
        assert needs_layout(load_diagram(path)) == (path in AUTO_LAID_OUT), path


@pytest.mark.parametrize("path", AUTO_LAID_OUT, ids=lambda p: p.stem)
def test_examples_get_clean_layouts(path):
    diagram = load_diagram(path)
    assert needs_layout(diagram)
    again = copy.deepcopy(diagram)
    layout_diagram(diagram)
    layout_diagram(again)
    assert diagram_to_dict(diagram) == diagram_to_dict(again)  # deterministic
    for where, level, names in _levels(diagram, scope_names(diagram)):
        boxes = {}
        for blk in level.blocks:
            x, y, w, h = block_placement(blk, port_info(blk, names, level.wires)).rect
            lw = label_width(blk.id)
            boxes[blk.id] = [(x, y, w, h), (x + w / 2 - lw / 2, y + h, lw, LABEL_HEIGHT)]
        ids = list(boxes)
        for i, a in enumerate(ids):  # blocks and labels never overlap
            for b in ids[i + 1:]:
                assert not any(_overlap(p, q) for p in boxes[a] for q in boxes[b]), (where, a, b)
        for wire, points in _routes(level, names):
            for p, q in zip(points, points[1:]):
                assert p[0] == q[0] or p[1] == q[1], (where, str(wire.src))  # orthogonal
                segment = (min(p[0], q[0]), min(p[1], q[1]),
                           abs(p[0] - q[0]) or 1e-3, abs(p[1] - q[1]) or 1e-3)
                for block_id, (body, _) in boxes.items():  # and never through a block
                    inner = (body[0] + 1, body[1] + 1, body[2] - 2, body[3] - 2)
                    assert not _overlap(segment, inner), (where, str(wire.src), block_id)


def test_feedback_is_drawn_from_the_integrator_back_to_the_sum():
    diagram = lag_diagram()
    layout_diagram(diagram)
    x = {b.id: b.layout["x"] for b in diagram.blocks}
    assert x["step"] < x["sum"] < x["integ"] < x["y"]  # signal flow left to right
    feedback = next(w for w in diagram.wires if str(w.dst) == "sum.u2")
    assert feedback.points  # routed round, not through the blocks


def test_partial_layout_places_only_the_missing_blocks():
    diagram = lag_diagram()
    layout_diagram(diagram)
    kept = {b.id: dict(b.layout) for b in diagram.blocks}
    diagram.blocks[1].layout = None
    assert layout_diagram(diagram)
    assert all(b.layout == kept[b.id] for b in diagram.blocks if b.id != "sum")
    assert {"x", "y"} <= set(diagram.blocks[1].layout)


def test_junctions_mark_where_a_net_splits():
    trunk = [(0, 0), (50, 0), (50, 40), (100, 40)]
    branch = [(0, 0), (50, 0), (50, -40), (100, -40)]
    straight = [(0, 0), (100, 0)]
    assert junctions([trunk, branch]) == [(50, 0)]
    assert junctions([trunk, straight]) == [(50, 0)]
    assert junctions([trunk]) == []
