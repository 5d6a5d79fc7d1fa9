"""Marking wires as linear analysis points from their context menu (issue 29): each change is
one undo step, the mark belongs to the source port's signal (all its branches), the canvas
draws a glyph at that port, and marks survive a save, a load, a paste and grouping."""
import pytest

pytest.importorskip("PySide6")

from test_context_menus_help import choose, entries, right_click, wire_point  # noqa: E402

from blocksim.diagram.analysis_points import analysis_points  # noqa: E402
from blocksim.diagram.format import load_diagram  # noqa: E402


@pytest.fixture
def shown(window, qtbot):
    window.show()
    qtbot.waitExposed(window)
    return window


def marks(doc) -> dict:
    return {f"{w.src}->{w.dst}": w.analysis for w in doc.diagram.wires if w.analysis}


def test_the_wire_menu_marks_inputs_outputs_and_openings_one_undo_step_each(shown):
    doc, scene = shown.doc, shown.canvas.scene
    menu = right_click(shown, wire_point(shown, "sum.y->integ.u"))
    for text in ("Linear Analysis Input", "Linear Analysis Output", "Open Loop Here",
                 "Clear Linear Analysis Marks"):
        assert text in entries(menu)
    clear = next(a for a in menu.actions() if a.objectName() == "mark-clear")
    assert not clear.isEnabled()  # nothing to clear yet
    choose(menu, "Linear Analysis Input")
    assert marks(doc) == {"sum.y->integ.u": ("input",)}
    assert scene.analysis_marks.shown() == {"sum.y": ("input",)}
    assert doc.undo_stack.undoText() == "Mark sum.y as a linear analysis input"

    # a branch of integ.y: the mark goes on both wires the port drives
    choose(right_click(shown, wire_point(shown, "integ.y->y.u")), "Linear Analysis Output")
    assert marks(doc)["integ.y->y.u"] == marks(doc)["integ.y->fb.u"] == ("output",)
    menu = right_click(shown, wire_point(shown, "integ.y->fb.u"))
    checked = {a.objectName() for a in menu.actions() if a.isChecked()}
    assert checked == {"mark-output"}  # the other branch shows the signal's marks
    choose(menu, "Open Loop Here")
    assert marks(doc)["integ.y->fb.u"] == ("output", "open")
    assert scene.analysis_marks.shown()["integ.y"] == ("output", "open")
    points = analysis_points(doc.diagram)
    assert (points.inputs, points.outputs, points.openings) == (
        ("sum.y",), ("integ.y",), ("integ.y",))

    doc.undo_stack.undo()
    assert marks(doc)["integ.y->fb.u"] == ("output",)
    doc.undo_stack.redo()
    assert marks(doc)["integ.y->fb.u"] == ("output", "open")
    choose(right_click(shown, wire_point(shown, "integ.y->y.u")), "Clear Linear Analysis Marks")
    assert "integ.y->y.u" not in marks(doc) and "integ.y->fb.u" not in marks(doc)
    assert "integ.y" not in scene.analysis_marks.shown()
    doc.undo_stack.undo()
    assert scene.analysis_marks.shown()["integ.y"] == ("output", "open")
    # unchecking one entry removes just that mark
    menu = right_click(shown, wire_point(shown, "sum.y->integ.u"))
    choose(menu, "Linear Analysis Input")
    assert "sum.y->integ.u" not in marks(doc)


def test_marks_survive_save_and_open(shown, tmp_path):
    doc = shown.doc
    choose(right_click(shown, wire_point(shown, "sum.y->integ.u")), "Linear Analysis Input")
    choose(right_click(shown, wire_point(shown, "integ.y->y.u")), "Linear Analysis Output")
    path = tmp_path / "marked.json"
    assert shown.files.save_to(path)
    assert not doc.dirty
    loaded = load_diagram(path)
    assert analysis_points(loaded).inputs == ("sum.y",)
    shown.files.open_path(str(path))
    assert shown.canvas.scene.analysis_marks.shown() == {"sum.y": ("input",),
                                                         "integ.y": ("output",)}


def test_marks_follow_a_paste_and_a_grouping(shown):
    doc, editor, scene = shown.doc, shown.canvas.editor, shown.canvas.scene
    choose(right_click(shown, wire_point(shown, "integ.y->fb.u")), "Open Loop Here")
    scene.select_only(["integ", "fb"])
    editor.copy()
    editor.paste()
    pasted = [w for w in doc.diagram.wires if w.src.block not in ("integ", "sum", "step", "fb")
              and w.analysis]
    assert [w.analysis for w in pasted] == [("open",)]
    doc.undo_stack.undo()
    scene.select_only(["integ"])
    editor.group()
    group = next(b for b in doc.diagram.blocks if b.type == "Subsystem")
    assert analysis_points(doc.diagram).openings == (f"{group.id}/integ.y",)


def test_a_renamed_block_keeps_its_marks(shown):
    from blocksim.gui.document.commands import RenameBlock

    doc = shown.doc
    choose(right_click(shown, wire_point(shown, "integ.y->y.u")), "Linear Analysis Output")
    doc.push(RenameBlock(doc, (), "integ", "plant"))
    assert analysis_points(doc.diagram).outputs == ("plant.y",)
    assert shown.canvas.scene.analysis_marks.shown() == {"plant.y": ("output",)}
    doc.undo_stack.undo()
    assert analysis_points(doc.diagram).outputs == ("integ.y",)


def test_a_wire_inside_a_subsystem_is_marked_at_its_level(shown):
    doc, scene = shown.doc, shown.canvas.scene
    scene.select_only(["integ"])
    shown.canvas.editor.group()
    group = next(b for b in doc.diagram.blocks if b.type == "Subsystem")
    shown.canvas.open_subsystem(group.id)
    inner = next(f"{w.src}->{w.dst}" for w in doc.level((group.id,)).wires
                 if str(w.src) == "integ.y")
    choose(right_click(shown, wire_point(shown, inner)), "Linear Analysis Output")
    assert scene.analysis_marks.shown() == {"integ.y": ("output",)}
    assert analysis_points(doc.diagram).outputs == (f"{group.id}/integ.y",)
    doc.undo_stack.undo()
    assert not analysis_points(doc.diagram)
