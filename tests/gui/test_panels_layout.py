"""The main window's panels: the inspector has room (tabbed with the diagram settings and
brought forward when a block is selected); the settings show the simulation backend; the
canvas caches what it can for fast panning but exports vectors."""
import pytest

pytest.importorskip("PySide6")

from editor_helpers import lag_diagram  # noqa: E402
from PySide6.QtCore import QRectF  # noqa: E402
from PySide6.QtWidgets import QGraphicsItem, QGraphicsView  # noqa: E402

from blocksim.diagram.model import BACKENDS  # noqa: E402
from blocksim.gui.document.document import DiagramDocument  # noqa: E402
from blocksim.gui.panels.inspector import DiagramSettingsEditor  # noqa: E402
from blocksim.gui.canvas.scene import DiagramScene  # noqa: E402
from blocksim.gui.canvas.view import _grid_points  # noqa: E402




def _current(dock) -> bool:
    """Whether a dock is the shown tab of its group."""
    return dock.isVisible() and not dock.visibleRegion().isEmpty()


def test_block_and_diagram_panels_share_the_right_side_as_tabs(window, qtbot):
    docks = window.panels.docks
    assert window.tabifiedDockWidgets(docks["inspector"]) == [docks["settings"]]
    qtbot.waitUntil(lambda: _current(docks["settings"]))  # nothing selected yet
    window.canvas.scene.select_only(["integ"])
    qtbot.waitUntil(lambda: _current(docks["inspector"]))
    inspector = window.panels.inspector
    assert inspector.block_id() == "integ"
    # The whole side (the dock's scroll area), not a few lines.
    assert docks["inspector"].widget().height() > 0.5 * window.height()
    assert docks["palette"].width() >= 200


def test_selecting_again_leaves_the_chosen_tab_alone(window, qtbot):
    docks, scene = window.panels.docks, window.canvas.scene
    scene.select_only(["integ"])
    qtbot.waitUntil(lambda: _current(docks["inspector"]))
    docks["settings"].raise_()  # the user looks at the diagram settings
    scene.select_only(["integ"])  # same block: no jump back
    qtbot.wait(10)
    assert _current(docks["settings"])
    scene.select_only(["sum"])  # another block: its parameters come forward
    qtbot.waitUntil(lambda: _current(docks["inspector"]))


@pytest.fixture
def settings_editor(qtbot):
    widget = DiagramSettingsEditor()
    qtbot.addWidget(widget)
    widget.show()
    return widget


def test_settings_editor_shows_and_sets_the_backend(settings_editor, qtbot):
    diagram = lag_diagram()
    settings_editor.show_diagram(diagram)
    box = settings_editor.backend
    assert box.currentData() is None  # the file names none: $BLOCKSIM_BACKEND or python
    assert [box.itemData(i) for i in range(box.count())] == [None, *BACKENDS]
    box.setCurrentIndex(box.findData("numba"))
    with qtbot.waitSignal(settings_editor.settingsEdited, timeout=1000) as blocker:
        assert settings_editor.apply()
    assert blocker.args[0].backend == "numba"
    assert blocker.args[0].stop == diagram.simulation.stop  # the rest as it was
    diagram.simulation = blocker.args[0]
    settings_editor.show_diagram(diagram)
    assert box.currentData() == "numba"
    box.setCurrentIndex(box.findData(None))
    with qtbot.waitSignal(settings_editor.settingsEdited, timeout=1000) as blocker:
        assert settings_editor.apply()
    assert blocker.args[0].backend is None


def test_backend_c_is_marked_where_no_c_compiler_is_found(qtbot, monkeypatch):
    from blocksim.ccode import cc

    def none():
        raise cc.NoCompiler("no C compiler found")
    monkeypatch.setattr(cc, "compiler", none)
    widget = DiagramSettingsEditor()
    qtbot.addWidget(widget)
    box = widget.backend
    assert box.itemText(box.findData("c")) == "c (no C compiler: runs in Python)"
    assert "c (" in box.toolTip() and "radau" in box.toolTip()


def test_an_unknown_backend_is_shown_and_refused(settings_editor, qtbot):
    diagram = lag_diagram()
    diagram.simulation = diagram.simulation.replaced(backend="gpu")
    settings_editor.show_diagram(diagram)
    assert settings_editor.backend.currentData() == "gpu"
    assert "unknown" in settings_editor.backend.currentText()
    with qtbot.assertNotEmitted(settings_editor.settingsEdited):
        assert settings_editor.apply() is False
    assert "backend" in settings_editor.error_text()


def test_canvas_caches_blocks_but_exports_use_vectors(window, qapp):
    view = window.canvas.view
    assert view.cacheMode() & QGraphicsView.CacheModeFlag.CacheBackground
    assert view.optimizationFlags() & QGraphicsView.OptimizationFlag.DontSavePainterState
    for item in window.canvas.scene.blocks.values():
        assert item.cacheMode() == QGraphicsItem.CacheMode.DeviceCoordinateCache
    picture = DiagramScene(DiagramDocument(lag_diagram()), cache_items=False)
    for item in picture.blocks.values():
        assert item.cacheMode() == QGraphicsItem.CacheMode.NoCache
    picture.clear_items()


def test_grid_dots_only_where_they_show():
    points = _grid_points(QRectF(0, 0, 100, 30))
    assert {(p.x(), p.y()) for p in points} == {(x, y) for x in (0, 20, 40, 60, 80, 100)
                                                 for y in (0, 20)}
    assert _grid_points(QRectF(0, 0, 1e6, 1e6)) == []  # absurdly many: none
    assert _grid_points(QRectF()) == []


def test_the_wheel_scrolls_past_a_settings_combo_box_without_changing_it(settings_editor, qtbot):
    # Scrolling the panel over the backend box used to step it to another backend and
    # push an undoable edit. Until the box is clicked or tabbed to, the wheel is the panel's.
    from PySide6.QtCore import QPoint, QPointF, Qt
    from PySide6.QtGui import QWheelEvent
    from PySide6.QtWidgets import QApplication

    settings_editor.show_diagram(lag_diagram())
    box = settings_editor.backend
    assert box.focusPolicy() == Qt.FocusPolicy.StrongFocus
    before = box.currentIndex()

    def wheel():
        centre = QPointF(box.rect().center())
        event = QWheelEvent(centre, QPointF(box.mapToGlobal(centre.toPoint())), QPoint(0, 0),
                            QPoint(0, -120), Qt.MouseButton.NoButton,
                            Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)
        QApplication.sendEvent(box, event)
        return event.isAccepted()

    with qtbot.assertNotEmitted(settings_editor.settingsEdited):
        assert wheel() is False  # ignored: it goes on to the scroll area
    assert box.currentIndex() == before
    box.setFocus()
    qtbot.waitUntil(box.hasFocus, timeout=1000)
    wheel()
    assert box.currentIndex() == before + 1  # a focused box takes the wheel as usual


def test_backend_c_chosen_in_the_panel_is_applied(settings_editor, qtbot):
    # (the file format refused "c", so the panel showed an error and nothing was applied)
    settings_editor.show_diagram(lag_diagram())
    box = settings_editor.backend
    with qtbot.waitSignal(settings_editor.settingsEdited, timeout=1000) as blocker:
        box.setCurrentIndex(box.findData("c"))
    assert blocker.args[0].backend == "c" and not settings_editor.error_text()
