"""Issue 13: a file whose saved wire bends run through a block or along another net's wire
(hand-edited, saved before a block moved, or from an older version) opens with those wires
re-routed; every other wire keeps its bends exactly, and the document counts as modified
only when something was repaired, saying so in the status bar."""
import json

import pytest

pytest.importorskip("PySide6")

from blocksim.gui.canvas.routecheck import level_quality  # noqa: E402

THROUGH = [(150.0, 20.0), (350.0, 20.0)]  # straight through block m at x 200..250
SHARED = [(150.0, 220.0), (150.0, 120.0), (300.0, 120.0), (300.0, 220.0)]  # on b->d's line
KEPT = [(120.0, 320.0), (120.0, 360.0)]  # the user's clean step: must stay as it is


def _crafted(tmp_path):
    blocks = [("a", "Constant", 0, 0), ("m", "Gain", 200, 0), ("c", "Scope", 400, 0),
              ("b", "Constant", 0, 100), ("d", "Scope", 400, 100),
              ("e", "Constant", 0, 200), ("f", "Scope", 400, 200),
              ("g", "Constant", 0, 300), ("h", "Scope", 400, 340)]
    text = {"format": "blocksim", "version": 1,
            "blocks": [{"id": i, "type": t, "layout": {"x": x, "y": y}}
                       for i, t, x, y in blocks],
            "wires": [{"src": "a.y", "dst": "c.u", "points": [list(p) for p in THROUGH]},
                      {"src": "b.y", "dst": "d.u", "points": []},
                      {"src": "e.y", "dst": "f.u", "points": [list(p) for p in SHARED]},
                      {"src": "g.y", "dst": "h.u", "points": [list(p) for p in KEPT]}],
            "simulation": {"stop": 1.0}}
    path = tmp_path / "crafted.json"
    path.write_text(json.dumps(text))
    return path


def test_the_crafted_file_really_has_the_faults(tmp_path):
    from blocksim.diagram.format import load_diagram

    quality = level_quality(load_diagram(_crafted(tmp_path)))
    assert quality.through_blocks == [(0, "m")]
    assert (1, 2) in quality.shared


def test_open_repairs_only_the_faulty_wires_and_says_so(qtbot, tmp_path, env):
    from blocksim.gui.window import app

    window = app.create_window(str(_crafted(tmp_path)))
    qtbot.addWidget(window)
    doc = window.canvas.scene.doc
    wires = doc.diagram.wires
    assert level_quality(doc.diagram).faults == 0
    assert wires[0].points != THROUGH  # round block m now, turning well before its input
    from blocksim.gui.canvas.pathfind import CLEARANCE
    from blocksim.gui.canvas.reroute import PORT_KEEP
    assert wires[0].points[0][0] <= 200.0 - PORT_KEEP - CLEARANCE  # (m.u is at x 200:
    # a wire turning right at it would look connected to it)
    assert wires[3].points == KEPT  # a clean wire is not touched
    # of the two wires on one line, the later one moved out of the other's way: not both
    assert wires[1].points == [] and wires[2].points != SHARED
    assert doc.rerouted == ["a.y->c.u", "e.y->f.u"]
    assert doc.dirty and "crafted.json*" in window.windowTitle()
    message = window.statusBar().currentMessage()
    assert "2 wire(s) re-routed" in message and "a.y->c.u" in message
    drawn = {item.index: [tuple(p) for p in item.route] for item in window.canvas.scene.wires}
    assert drawn[3][1:-1] == KEPT  # the canvas shows the repaired model


def test_a_clean_file_opens_unmodified(qtbot, tmp_path, env):
    from blocksim.gui.window import app

    path = _crafted(tmp_path)
    text = json.loads(path.read_text())
    del text["wires"][:3]  # only the clean wire with the user's step
    path.write_text(json.dumps(text))
    window = app.create_window(str(path))
    qtbot.addWidget(window)
    doc = window.canvas.scene.doc
    assert doc.rerouted == [] and not doc.dirty and "*" not in window.windowTitle()
    assert doc.diagram.wires[0].points == KEPT
    assert "re-routed" not in window.statusBar().currentMessage()
