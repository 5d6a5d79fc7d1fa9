"""The block palette: every registered type by category, search, tooltips, drag data."""
import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import Qt

from blocksim.blocktypes import registry
from blocksim.gui.panels.palette import BLOCK_MIME, BlockPalette


@pytest.fixture
def palette(qtbot):
    widget = BlockPalette()
    qtbot.addWidget(widget)
    widget.resize(300, 600)
    widget.show()
    return widget


def test_every_registered_type_under_its_category_sorted(palette):
    shown = palette.visible_types()
    assert sorted(shown) == sorted(registry.all_types())
    tree = palette.tree
    categories = [tree.topLevelItem(i).text(0) for i in range(tree.topLevelItemCount())]
    assert categories == sorted(categories, key=str.casefold)
    for i in range(tree.topLevelItemCount()):
        group = tree.topLevelItem(i)
        names = [group.child(j).text(0) for j in range(group.childCount())]
        assert names == sorted(names, key=str.casefold)
        assert {registry.get(n).category for n in names} == {group.text(0)}


def test_search_filters_by_name_category_and_doc(palette, qtbot):
    qtbot.keyClicks(palette.search, "satur")  # the name first, then doc text (Diode's
    assert palette.visible_types() == ["Saturation", "Diode"]  # saturation current)
    palette.search.clear()
    qtbot.keyClicks(palette.search, "sinks")  # a category
    assert set(palette.visible_types()) == {"Output", "Scope", "Stop", "ToFile", "XYGraph"}
    palette.search.clear()
    qtbot.keyClicks(palette.search, "limit")  # doc text only: Integrator's limits
    shown = palette.visible_types()
    assert "Integrator" in shown and "Saturation" in shown and "Gain" not in shown
    palette.search.clear()
    assert len(palette.visible_types()) == len(registry.all_types())


def test_tooltip_is_the_types_describe_text(palette):
    tip = palette.item_for("Integrator").toolTip(0)
    assert "Integrator (Continuous)" in tip and "lower" in tip and "Parameters:" in tip


def test_drag_data_carries_the_type_name(palette):
    item = palette.item_for("Saturation")
    assert palette.tree.mimeTypes() == [BLOCK_MIME]
    assert item.flags() & Qt.ItemFlag.ItemIsDragEnabled
    data = palette.tree.mimeData([item])
    assert data.hasFormat(BLOCK_MIME)
    assert bytes(data.data(BLOCK_MIME)).decode("utf-8") == "Saturation"
    group = item.parent()  # a category is not a block: it cannot be dragged
    assert not group.flags() & Qt.ItemFlag.ItemIsDragEnabled


def test_double_click_and_enter_activate_a_block(palette, qtbot):
    item = palette.item_for("Gain")
    palette.tree.scrollToItem(item)
    rect = palette.tree.visualItemRect(item)
    viewport = palette.tree.viewport()
    activated = []
    palette.blockActivated.connect(activated.append)
    qtbot.mouseClick(viewport, Qt.MouseButton.LeftButton, pos=rect.center())
    assert activated == []  # a single click only selects
    qtbot.mouseDClick(viewport, Qt.MouseButton.LeftButton, pos=rect.center())
    assert activated == ["Gain"]
    qtbot.keyClicks(palette.search, "reset integ")
    with qtbot.waitSignal(palette.blockActivated, timeout=1000) as blocker:
        qtbot.keyClick(palette.search, Qt.Key.Key_Return)
    assert blocker.args == ["ResetIntegrator"]
