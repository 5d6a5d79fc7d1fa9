"""Pictures drawn by the editor's scene: every example diagram, and `blocksim render`; a render
that fails keeps the old picture."""
import json

import numpy as np
import pytest

pytest.importorskip("PySide6")

from PySide6.QtGui import QImage  # noqa: E402

from blocksim.cli.main import main  # noqa: E402
from blocksim.diagram.format import load_diagram  # noqa: E402
from blocksim.gui.window.files import examples, examples_dir  # noqa: E402
from blocksim.gui.canvas.render import render_diagram  # noqa: E402


def _ink(image: QImage) -> float:
    """Fraction of pixels that are clearly not white."""
    image = image.convertToFormat(QImage.Format_Grayscale8)
    pixels = np.frombuffer(image.constBits(), np.uint8).reshape(
        image.height(), image.bytesPerLine())[:, :image.width()]
    return float(np.mean(pixels < 200))


@pytest.mark.parametrize("path", examples(), ids=lambda p: p.stem)
def test_every_example_renders(qapp, path, tmp_path):
    diagram = load_diagram(path)
    out = render_diagram(diagram, tmp_path / f"{path.stem}.png", scale=1.0)
    image = QImage(str(out))
    assert image.width() > 300 and image.height() > 100  # dde_delay: one row, 127 px
    assert 0.005 < _ink(image) < 0.5  # a drawing, neither blank nor a blot
    assert diagram.blocks[0].layout is None or "x" in diagram.blocks[0].layout  # untouched


def test_cli_render_writes_png_and_svg(qapp, tmp_path):
    source = examples_dir() / "math003.json"
    png, svg = tmp_path / "m.png", tmp_path / "m.svg"
    assert main(["render", str(source), "--out", str(png)]) == 0
    assert main(["render", str(source), "--out", str(svg), "--level", "part2"]) == 0
    assert QImage(str(png)).width() > 300
    text = svg.read_text(encoding="utf-8")
    assert text.startswith("<?xml") and "<svg" in text and "x1_high" in text


def test_cli_render_reports_bad_input(qapp, tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text("{", encoding="utf-8")
    assert main(["render", str(bad), "--out", str(tmp_path / "x.png")]) == 2
    assert main(["render", str(examples_dir() / "math003.json"),
                 "--out", str(tmp_path / "x.gif")]) == 2
    assert main(["render", str(examples_dir() / "math003.json"), "--out",
                 str(tmp_path / "x.png"), "--level", "nope"]) == 2
    err = capsys.readouterr().err
    assert "bad.json" in err and ".png or .svg" in err and "nope" in err


def far_apart(distance: float) -> dict:
    """Two wired blocks `distance` canvas units apart (a picture that wide)."""
    return {"format": "blocksim", "version": 1,
            "blocks": [{"id": "src", "type": "Constant", "layout": {"x": 0, "y": 0}},
                       {"id": "out", "type": "Output", "layout": {"x": distance, "y": 0}}],
            "wires": [{"src": "src.y", "dst": "out.u"}]}


def test_a_png_too_large_fails_at_once_and_keeps_the_old_picture(qapp, tmp_path, capsys):
    source = tmp_path / "wide.json"
    source.write_text(json.dumps(far_apart(600_000)), encoding="utf-8")  # 1.2M pixels wide
    keep = tmp_path / "keep.png"
    render_diagram(load_diagram(examples_dir() / "math003.json"), keep, scale=0.5)
    before = keep.read_bytes()
    with pytest.raises(OSError) as caught:
        render_diagram(load_diagram(source), keep)
    message = str(caught.value)
    assert "keep.png" in message and "too large" in message and "SVG" in message
    assert keep.read_bytes() == before
    assert main(["render", str(source), "--out", str(keep)]) == 2  # the command line
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "too large" in err and "Traceback" not in err
    assert keep.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temp left
    svg = tmp_path / "wide.svg"
    assert main(["render", str(source), "--out", str(svg)]) == 0  # SVG has no such limit
    assert "<svg" in svg.read_text(encoding="utf-8")


def test_a_render_failing_midway_keeps_the_old_svg(qapp, tmp_path, monkeypatch):
    from blocksim.gui.canvas.scene import DiagramScene

    keep = tmp_path / "keep.svg"
    diagram = load_diagram(examples_dir() / "math003.json")
    render_diagram(diagram, keep)
    before = keep.read_bytes()

    def broken(self, painter, *args):
        painter.drawLine(0, 0, 10, 10)  # part of a picture, then a failure
        raise RuntimeError("drawing failed")
    monkeypatch.setattr(DiagramScene, "render", broken)
    with pytest.raises(RuntimeError):
        render_diagram(diagram, keep)
    assert keep.read_bytes() == before


def test_a_render_into_a_missing_folder_names_the_file(qapp, tmp_path):
    out = tmp_path / "no" / "such" / "picture.png"
    with pytest.raises(OSError, match="picture.png"):
        render_diagram(load_diagram(examples_dir() / "math003.json"), out, scale=0.5)
