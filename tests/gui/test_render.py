"""Pictures drawn by the editor's scene: every example diagram, and `blocksim render`."""
import numpy as np
import pytest

pytest.importorskip("PySide6")

from PySide6.QtGui import QImage  # noqa: E402

from blocksim.cli import main  # noqa: E402
from blocksim.format import load_diagram  # noqa: E402
from blocksim.gui.files import examples, examples_dir  # noqa: E402
from blocksim.gui.render import render_diagram  # noqa: E402


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
    assert image.width() > 300 and image.height() > 150
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
