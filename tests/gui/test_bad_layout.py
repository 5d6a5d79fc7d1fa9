"""Layout values no canvas can draw (1e308, a number JSON reads as infinity, absurd sizes,
bend points) are dropped: `blocksim render` and the editor place those blocks anew and say
which block, instead of failing with OverflowError."""
import json
import math

import pytest

pytest.importorskip("PySide6")

from PySide6.QtGui import QImage  # noqa: E402

from blocksim.cli.main import main  # noqa: E402
from blocksim.diagram.format import load_diagram  # noqa: E402
from blocksim.gui.window.files import examples_dir  # noqa: E402
from blocksim.gui.layout.layoutcheck import drop_unusable_layout  # noqa: E402
from blocksim.diagram.model import Block, Diagram, PortRef, Wire  # noqa: E402


def broken_math003(tmp_path):
    """math003 with a saved layout, part1 at x = 1e308 and part2 at y = 1e400 (infinity)."""
    from blocksim.diagram.format import save_diagram
    from blocksim.gui.document.document import DiagramDocument

    diagram = load_diagram(examples_dir() / "math003.json")
    DiagramDocument(diagram)  # lays it out
    path = tmp_path / "broken.json"
    save_diagram(diagram, path)
    data = json.loads(path.read_text(encoding="utf-8"))
    blocks = {b["id"]: b for b in data["blocks"]}
    blocks["part1"]["layout"]["x"] = 1e308
    blocks["part2"]["layout"]["y"] = 12345.0
    text = json.dumps(data).replace("12345.0", "1e400")  # JSON reads it as infinity
    path.write_text(text, encoding="utf-8")
    return path


def test_unusable_values_are_dropped_and_named():
    inner = Diagram(blocks=[Block("deep", "Gain", layout={"x": 0, "y": float("nan")})])
    diagram = Diagram(
        blocks=[Block("a", "Constant", layout={"x": 1e308, "y": 10, "width": -5}),
                Block("b", "Output", layout={"x": 100, "y": 10, "height": 1e9}),
                Block("fine", "Output", layout={"x": 200, "y": 10, "width": 60}),
                Block("sub", "Subsystem", subsystem=inner)],
        wires=[Wire(PortRef("a", "y"), PortRef("b", "u"), points=[(50, 10), (math.inf, 20)])])
    found = drop_unusable_layout(diagram)
    assert len(found) == 5
    assert any("block 'a'" in m and "1e+308" in m for m in found)
    assert any("block 'a'" in m and "width" in m for m in found)
    assert any("block 'b'" in m and "height" in m for m in found)
    assert any("block 'sub/deep'" in m for m in found)
    assert any("wire a.y -> b.u" in m for m in found)
    assert diagram.block("a").layout == {}
    assert diagram.block("b").layout == {"x": 100, "y": 10}
    assert diagram.block("fine").layout == {"x": 200, "y": 10, "width": 60}
    assert diagram.wires[0].points == []


def test_render_places_the_blocks_anew_and_names_them(qapp, tmp_path, caplog, capsys):
    source = broken_math003(tmp_path)
    out = tmp_path / "broken.png"
    assert main(["render", str(source), "--out", str(out)]) == 0
    image = QImage(str(out))
    assert 300 < image.width() < 5000 and 150 < image.height() < 5000
    text = caplog.text + capsys.readouterr().err  # the log, wherever the CLI sends it
    assert "broken.json" in text and "block 'part1'" in text and "block 'part2'" in text
    assert "Traceback" not in text


def test_the_editor_opens_such_a_file_and_saves_it_repaired(window, env, tmp_path):
    source = broken_math003(tmp_path)
    assert window.files.open_path(source)
    assert env == []  # no dialog, no exception
    doc, scene = window.doc, window.canvas.scene
    assert set(scene.blocks) == {b.id for b in doc.diagram.blocks}
    for block_id in ("part1", "part2"):
        layout = doc.diagram.block(block_id).layout
        assert all(math.isfinite(layout[k]) and abs(layout[k]) < 1e5 for k in ("x", "y"))
    rect = scene.diagram_rect()
    assert rect.width() < 5000 and rect.height() < 5000
    assert "laid out anew" in window.statusBar().currentMessage()
    saved = tmp_path / "repaired.json"
    assert window.files.save_to(saved)  # infinity would not even save as JSON
    assert drop_unusable_layout(load_diagram(saved)) == []
