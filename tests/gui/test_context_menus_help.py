"""Issue 13: right-click menus on blocks, wires and the canvas, and the Help menu (block
reference generated from the declarations, F1 on a selected block, keyboard shortcuts)."""
import subprocess
import sys

import pytest

pytest.importorskip("PySide6")

from editor_helpers import block_point, port_point  # noqa: E402
from PySide6.QtCore import QPoint, QPointF, Qt  # noqa: E402
from PySide6.QtGui import QContextMenuEvent  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402


@pytest.fixture
def shown(window, qtbot):
    window.show()
    qtbot.waitExposed(window)
    return window


def right_click(window, point: QPoint):
    """A right click's context-menu event at a viewport point, as the mouse sends it; the
    menu that pops up (without blocking)."""
    viewport = window.canvas.view.viewport()
    event = QContextMenuEvent(QContextMenuEvent.Reason.Mouse, point,
                              viewport.mapToGlobal(point))
    QApplication.sendEvent(viewport, event)
    menu = window.context_menus.menu
    assert menu is not None and menu.isVisible()
    return menu


def entries(menu) -> list[str]:
    return [a.text().replace("&", "") for a in menu.actions() if not a.isSeparator()]


def choose(menu, text: str) -> None:
    action = next(a for a in menu.actions() if a.text().replace("&", "") == text)
    assert action.isEnabled(), text
    menu.hide()
    action.trigger()


def wire_point(window, key: str) -> QPoint:
    """A viewport point on the middle of a wire's longest segment."""
    item = next(w for w in window.canvas.scene.wires if f"{w.wire.src}->{w.wire.dst}" == key)
    a, b = max(zip(item.route, item.route[1:]),
               key=lambda s: abs(s[1][0] - s[0][0]) + abs(s[1][1] - s[0][1]))
    return window.canvas.view.mapFromScene(QPointF((a[0] + b[0]) / 2, (a[1] + b[1]) / 2))


def empty_point(window) -> QPoint:
    """A viewport point with nothing under it (the first found from the top-left)."""
    view = window.canvas.view
    size = view.viewport().size()
    for y in range(6, size.height(), 20):
        for x in range(6, size.width(), 20):
            if view.itemAt(QPoint(x, y)) is None:
                return QPoint(x, y)
    raise AssertionError("no empty spot on the canvas")


def test_block_menu_selects_the_block_and_its_entries_act_on_it(shown):
    canvas, doc = shown.canvas, shown.doc
    canvas.scene.select_only(["sum"])
    menu = right_click(shown, block_point(canvas, "fb"))
    assert menu.objectName() == "block-menu"
    assert canvas.scene.selected_block_ids() == ["fb"]  # the clicked block, not the old one
    for text in ("Parameters…", "Help on Block", "Cut", "Copy", "Duplicate", "Delete",
                 "Rotate", "Flip", "Group into Subsystem"):
        assert text in entries(menu)
    choose(menu, "Rotate")
    assert doc.diagram.block("fb").layout["rotation"] == 90
    choose(right_click(shown, block_point(canvas, "fb")), "Flip")
    assert doc.diagram.block("fb").layout["flip"] is True
    choose(right_click(shown, block_point(canvas, "fb")), "Delete")
    assert "fb" not in {b.id for b in doc.diagram.blocks}
    shown.actions_.undo.trigger()
    choose(right_click(shown, block_point(canvas, "integ")), "Help on Block")
    reference = shown.help.reference
    assert reference.isVisible() and reference.shown_type() == "Integrator"


def test_wire_menu_names_the_signal_and_deletes_the_wire(shown, monkeypatch):
    from blocksim.gui.window import dialogs

    doc = shown.doc
    asked = []
    monkeypatch.setattr(dialogs, "ask_text", lambda parent, title, label, text="":
                        asked.append(text) or "  error  e ")
    menu = right_click(shown, wire_point(shown, "sum.y->integ.u"))
    assert menu.objectName() == "wire-menu"
    assert [w.isSelected() for w in shown.canvas.scene.wires].count(True) == 1
    choose(menu, "Name Signal…")
    wire = next(w for w in doc.diagram.wires if str(w.dst) == "integ.u")
    assert wire.name == "error e" and asked == [""]  # one line, trimmed
    menu = right_click(shown, wire_point(shown, "sum.y->integ.u"))
    assert "Rename Signal…" in entries(menu) and "Remove Signal Name" in entries(menu)
    choose(menu, "Remove Signal Name")
    assert next(w for w in doc.diagram.wires if str(w.dst) == "integ.u").name == ""
    choose(right_click(shown, wire_point(shown, "sum.y->integ.u")), "Delete")
    assert not any(str(w.dst) == "integ.u" for w in doc.diagram.wires)


def test_canvas_menu_adds_a_block_where_clicked_and_pastes(shown):
    canvas, doc = shown.canvas, shown.doc
    point = empty_point(shown) + QPoint(40, 40)
    assert canvas.view.itemAt(point) is None
    menu = right_click(shown, point)
    assert menu.objectName() == "canvas-menu"
    assert {"Paste", "Add Block", "Select All", "Arrange Automatically", "Fit to View"} <= set(
        entries(menu))
    add = next(a.menu() for a in menu.actions() if a.text().replace("&", "") == "Add Block")
    math = next(a.menu() for a in add.actions() if a.text() == "Math")
    choose(math, "Gain")
    new = [b for b in doc.diagram.blocks if b.id not in {"step", "sum", "integ", "fb", "y"}]
    assert [b.type for b in new] == ["Gain"]
    x, y, w, h = canvas.scene.blocks[new[0].id].placement.rect
    clicked = canvas.view.mapToScene(point)
    assert abs(x + w / 2 - clicked.x()) <= 10 and abs(y + h / 2 - clicked.y()) <= 10
    canvas.scene.select_only(["step"])
    shown.actions_.copy.trigger()
    choose(right_click(shown, empty_point(shown)), "Paste")
    assert sum(b.type == "Step" for b in doc.diagram.blocks) == 2


def test_block_reference_is_the_describe_text_of_every_type(shown):
    from blocksim.blocktypes import registry

    shown.actions_.block_reference.trigger()
    reference = shown.help.reference
    assert reference.isVisible()
    listed = [reference.types.item(i).text() for i in range(reference.types.count())]
    assert sorted(listed, key=str.casefold) == sorted(registry.all_types(), key=str.casefold)
    reference.show_type("Saturation")
    cli = subprocess.run([sys.executable, "-m", "blocksim", "describe", "Saturation"],
                         capture_output=True, text=True, timeout=60)
    assert cli.returncode == 0
    assert reference.text.toPlainText() == cli.stdout  # the same text as the CLI's
    QTest.keyClicks(reference.search, "integ")
    shown_types = [reference.types.item(i).text() for i in range(reference.types.count())
                   if not reference.types.item(i).isHidden()]
    assert "Integrator" in shown_types and "Gain" not in shown_types


def test_f1_shows_the_selected_blocks_reference(shown, qtbot):
    with qtbot.waitActive(shown):
        shown.activateWindow()
    shown.canvas.scene.select_only(["fb"])
    shown.canvas.view.setFocus()
    QTest.keyClick(shown.canvas.view, Qt.Key_F1)
    reference = shown.help.reference
    assert reference is not None and reference.isVisible()
    assert reference.shown_type() == "Gain"
    assert reference.text.toPlainText().startswith("Gain (Math)")


def test_keyboard_shortcuts_list_the_windows_own_keys(shown):
    shown.actions_.shortcuts.trigger()
    rows = dict((does, keys) for keys, does in shown.help.shortcuts.rows())
    assert rows["Run"].startswith("Ctrl+Return") and "F5" in rows["Run"]
    assert "Ctrl+Y" in rows["Redo"] and rows["Help on Block"] == "F1"
    undo_keys = rows["Undo"].split(", ")
    assert undo_keys[0] == "Ctrl+Z" and "Undo" not in undo_keys and "F14" not in undo_keys
    assert rows["Rotate"] == "Ctrl+R" and rows["Nudge left"] == "Left"
    assert "connect a wire" in rows.values() or any("connect" in v for v in rows)
    help_menu = next(a.menu() for a in shown.menuBar().actions()
                     if a.text().replace("&", "") == "Help")
    assert entries(help_menu) == ["Help on Block", "Block Reference", "Keyboard Shortcuts"]


def test_a_wire_dropped_on_an_occupied_input_is_refused_with_a_message(shown):
    from editor_helpers import drag, snapshot

    canvas = shown.canvas
    before = snapshot(shown.doc.diagram)
    drag(canvas.view.viewport(), port_point(canvas, "step", "out", "y"),
         port_point(canvas, "integ", "in", "u"))
    assert snapshot(shown.doc.diagram) == before  # no silent replacement
    message = shown.statusBar().currentMessage()
    assert "integ.u is already connected" in message and "input takes one wire" in message
