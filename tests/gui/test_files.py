"""Files in the editor: save/load round trips, bad files, unsaved changes, examples, recent
files (autosave and recovery: test_autosave.py)."""
import json

import pytest

pytest.importorskip("PySide6")

from editor_helpers import snapshot  # noqa: E402

from blocksim.diagram.format import load_diagram  # noqa: E402
from blocksim.gui.window import dialogs  # noqa: E402
from blocksim.gui.window import files
from blocksim.gui.document.commands import SetParams  # noqa: E402
from blocksim.gui.window.mainwindow import MainWindow  # noqa: E402

DIAGRAMS = files.examples_dir()


@pytest.fixture
def env(env, monkeypatch):
    """As conftest's, but the recovery question is answered yes."""
    monkeypatch.setattr(dialogs, "ask_recover", lambda parent, texts: [True] * len(texts))
    return env


@pytest.fixture
def window(qtbot, env):
    win = MainWindow()
    qtbot.addWidget(win)
    return win


def test_save_then_load_gives_the_same_dict(window, tmp_path, monkeypatch):
    assert window.files.open_path(DIAGRAMS / "math003.json")
    assert not window.doc.dirty  # automatic placement is not an edit
    doc = window.doc
    doc.push(SetParams(doc, ("part3",), "twice", {"k": 3}))
    assert doc.dirty and window.windowTitle().startswith("math003.json*")
    target = tmp_path / "saved.json"
    monkeypatch.setattr(dialogs, "save_path", lambda *a, **k: str(target))
    assert window.files.save()  # an example: Save asks for a new name
    assert not doc.dirty and doc.path == target
    assert snapshot(load_diagram(target)) == snapshot(doc.diagram)
    layout = json.loads(target.read_text())["blocks"][0]["layout"]
    assert {"x", "y"} <= set(layout)
    assert window.files.recent()[0] == str(target.resolve())


def test_bad_files_give_a_message_not_a_crash(window, env, tmp_path):
    window.files.open_path(DIAGRAMS / "bouncing_ball.json")
    before = snapshot(window.doc.diagram)
    broken = tmp_path / "broken.json"
    broken.write_text('{"format": "blocksim", "version": 1, "blocks": [', encoding="utf-8")
    assert not window.files.open_path(broken)
    unknown = tmp_path / "unknown.json"
    unknown.write_text(json.dumps({"format": "blocksim", "version": 1, "blocks": [
        {"id": "b", "type": "Gain", "params": {"k": [1, "a"]}}], "wires": []}), encoding="utf-8")
    assert not window.files.open_path(unknown)
    assert not window.files.open_path(tmp_path / "missing.json")
    assert [title for title, _ in env] == ["Cannot open diagram"] * 3
    assert "broken.json" in env[0][1] and "invalid JSON" in env[0][1]
    assert "block 'b'" in env[1][1]
    assert snapshot(window.doc.diagram) == before  # the open document is untouched


def test_unsaved_changes_are_asked_about(window, monkeypatch):
    window.files.open_path(DIAGRAMS / "c5_two_state.json")
    doc = window.doc
    doc.push(SetParams(doc, (), "y1_rate", {"k": 2}))
    asked = []
    monkeypatch.setattr(dialogs, "ask_unsaved", lambda p, name: asked.append(name) or "cancel")
    assert not window.files.new()
    assert not window.files.open_path(DIAGRAMS / "math003.json")
    assert not window.close()
    assert asked == ["c5_two_state.json"] * 3 and doc.dirty
    monkeypatch.setattr(dialogs, "ask_unsaved", lambda p, name: "discard")
    assert window.files.new()
    assert doc.diagram.blocks == [] and not doc.dirty


def test_examples_menu_lists_every_diagram(window):
    from blocksim.diagram.examples import example_name, example_paths

    names = [a.text() for a in window.examples_menu.actions()]
    assert names[:len(list(DIAGRAMS.glob("*.json")))] == [
        p.stem for p in sorted(DIAGRAMS.glob("*.json"))]
    assert names == [example_name(p) for p in example_paths()]
    assert "physical/c21_diode_ideal" in names  # a topic folder's, named with the folder
    window.examples_menu.actions()[0].trigger()
    first = sorted(DIAGRAMS.glob("*.json"))[0]
    assert window.doc.path is None and window.doc.title == "untitled"  # a copy, not the file
    assert [b.id for b in window.doc.diagram.blocks] == \
        [b.id for b in load_diagram(first).blocks]


def test_an_example_opens_as_an_untitled_copy_that_save_never_writes_back(
        window, tmp_path, monkeypatch):
    example = DIAGRAMS / "bouncing_ball.json"
    shipped = example.read_bytes()
    recent = window.files.recent()
    next(a for a in window.examples_menu.actions() if a.text() == example.stem).trigger()
    assert window.doc.path is None and not window.doc.dirty
    assert window.files.recent() == recent  # not a file of the user's
    asked = []
    target = tmp_path / "mine.json"
    monkeypatch.setattr(dialogs, "save_path",
                        lambda parent, suggested, *a: asked.append(suggested) or str(target))
    window.panels.settings.solver.setCurrentText("radau")  # an edit, applied at once
    assert window.doc.dirty
    window.actions_.save.trigger()
    assert asked == ["bouncing_ball.json"]  # Save asked where, naming the example
    assert example.read_bytes() == shipped
    assert window.doc.path == target and load_diagram(target).simulation.solver == "radau"
    assert not window.doc.dirty


def test_blocksim_gui_takes_an_examples_name(qtbot, env, tmp_path, monkeypatch):
    """`blocksim gui zoh_loop` opens the example as the menu does (an untitled copy); a file
    of that name in the current folder wins, as for `blocksim run`."""
    from blocksim.gui.window import app

    monkeypatch.chdir(tmp_path)
    window = app.create_window("zoh_loop")
    qtbot.addWidget(window)
    assert window.doc.path is None and window.files.example_name == "zoh_loop"
    assert {b.id for b in window.doc.diagram.blocks} == {
        b.id for b in load_diagram(DIAGRAMS / "zoh_loop.json").blocks}
    (tmp_path / "zoh_loop").write_bytes((DIAGRAMS / "math003.json").read_bytes())
    mine = app.create_window("zoh_loop")
    qtbot.addWidget(mine)
    assert mine.doc.path.name == "zoh_loop" and mine.files.example_name is None


def test_an_unknown_block_type_never_crashes_the_editor(window, env, tmp_path):
    path = tmp_path / "plugin.json"
    path.write_text(json.dumps({"format": "blocksim", "version": 1, "blocks": [
        {"id": "src", "type": "Constant"}, {"id": "odd", "type": "NotInstalled"}],
        "wires": [{"src": "src.y", "dst": "odd.inp"}]}), encoding="utf-8")
    if window.files.open_path(path):  # drawn grey, with the ports its wires use
        item = window.canvas.scene.blocks["odd"]
        assert not item.info.known and item.info.inputs == ("inp",)
    else:  # or refused by the loader with a message naming the block
        assert "odd" in env[-1][1]
