"""A block type written in Python (blocksim.UserBlock) in the editor: the palette lists it
under its category with its describe text, and the inspector builds its form from its
declaration, as for the standard blocks."""
import sys
from pathlib import Path

import pytest

pytest.importorskip("PySide6")

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the example blocks

from modia_user_blocks import registered  # noqa: E402

from blocksim.gui.panels.inspector import BlockInspector  # noqa: E402
from blocksim.gui.panels.palette import BlockPalette  # noqa: E402
from blocksim.diagram.model import Block, Diagram  # noqa: E402


@pytest.fixture(autouse=True)
def user_types():
    with registered():
        yield


def test_palette_lists_user_blocks_with_their_description(qtbot):
    palette = BlockPalette()
    qtbot.addWidget(palette)
    assert "ModiaBall" in palette.visible_types()
    item = palette.item_for("ModiaBall")
    assert item.parent().text(0) == "Examples"
    assert "States: h, v" in item.toolTip(0) and "impact (rising)" in item.toolTip(0)


def test_inspector_form_comes_from_the_declaration(qtbot):
    inspector = BlockInspector()
    qtbot.addWidget(inspector)
    diagram = Diagram(blocks=[Block("ball", "ModiaBall")])
    inspector.show_block(diagram, diagram.blocks[0])
    assert list(inspector.fields) == ["h0", "e", "g", "v_small"]
    assert "bouncing ball" in inspector.doc.text()
