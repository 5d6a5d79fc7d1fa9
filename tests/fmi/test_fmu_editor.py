"""The FMU block in the editor: in the palette, its ports drawn from the model description,
a file chooser for the .fmu in the inspector, and the trust question (as for Python files)."""
from __future__ import annotations

import os

import pytest

pytest.importorskip("PySide6")
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from blocksim.gui.window import dialogs, fmutrust  # noqa: E402
from blocksim.user import allowlist  # noqa: E402

from fmu_helpers import place, write_diagram  # noqa: E402


@pytest.fixture
def window(qtbot, tmp_path, monkeypatch):
    from blocksim.gui.window.mainwindow import MainWindow

    monkeypatch.setenv("BLOCKSIM_AUTOSAVE_DIR", str(tmp_path / "autosave"))
    monkeypatch.setenv("BLOCKSIM_SETTINGS", str(tmp_path / "settings.ini"))
    monkeypatch.setattr(dialogs, "message", lambda *args, **kwargs: None)
    monkeypatch.setattr(dialogs, "ask_unsaved", lambda parent, name: "discard")
    monkeypatch.setattr(dialogs, "ask_recover", lambda parent, texts: [False] * len(texts))
    win = MainWindow()
    qtbot.addWidget(win)
    return win


def asked(monkeypatch, answer):
    seen = []

    def confirm(parent, what, files):
        seen.append([(path.name, digest) for path, digest, _ in files])
        return answer
    monkeypatch.setattr(fmutrust, "_confirm", confirm)
    return seen


def ball_diagram(tmp_path, build_fmu):
    name = place(build_fmu("ball", 2), tmp_path, "ball.fmu")
    return write_diagram(tmp_path, [{"id": "ball", "type": "FMU", "params": {"file": name}},
                                    {"id": "h", "type": "Output"}],
                         [{"src": "ball.h", "dst": "h.u"}])


def test_opening_asks_to_trust_and_draws_the_ports(window, tmp_path, build_fmu, monkeypatch):
    path = ball_diagram(tmp_path, build_fmu)
    seen = asked(monkeypatch, True)
    assert window.files.open_path(path)
    assert [name for name, _ in seen[0]] == ["ball.fmu"]
    assert str((tmp_path / "ball.fmu").resolve()) in allowlist.entries()
    info = window.canvas.scene.blocks["ball"].info
    assert info.outputs == ("h", "v", "bounces", "kicked") and info.inputs == ()
    assert "FMU" in window.panels.palette.visible_types()
    # trusted: opening it again asks nothing
    seen.clear()
    assert window.files.open_path(path)
    assert seen == []


def test_cancel_leaves_it_untrusted(window, tmp_path, build_fmu, monkeypatch):
    path = ball_diagram(tmp_path, build_fmu)
    seen = asked(monkeypatch, False)
    assert window.files.open_path(path)
    assert len(seen) == 1 and allowlist.entries() == {}
    assert window.canvas.scene.blocks["ball"].info.outputs[0] == "h"  # drawn all the same


def test_the_inspector_chooses_the_fmu_file(qtbot, tmp_path, build_fmu, monkeypatch):
    from blocksim.diagram.format import load_diagram
    from blocksim.gui.panels.file_field import FileField
    from blocksim.gui.panels.inspector import BlockInspector

    path = ball_diagram(tmp_path, build_fmu)
    other = place(build_fmu("square", 3), tmp_path, "square.fmu")
    diagram = load_diagram(path)
    inspector = BlockInspector()
    qtbot.addWidget(inspector)
    inspector.show_block(diagram, diagram.blocks[0])
    field = inspector.fields["file"]
    assert isinstance(field, FileField)
    assert "*.fmu" in field.file_filter()
    seen = asked(monkeypatch, True)
    with qtbot.waitSignal(inspector.paramsEdited) as signal:
        field.choose(str(tmp_path / other))
    assert signal.args[1]["file"] == "square.fmu"  # relative to the diagram's folder
    assert [name for name, _ in seen[0]] == ["square.fmu"]


def test_the_inspector_lists_the_fmus_parameters(qtbot, tmp_path, build_fmu):
    from blocksim.diagram.format import load_diagram
    from blocksim.gui.panels.inspector import BlockInspector

    diagram = load_diagram(ball_diagram(tmp_path, build_fmu))
    inspector = BlockInspector()
    qtbot.addWidget(inspector)
    inspector.show_block(diagram, diagram.blocks[0])
    notes = inspector.notes.text()
    assert "FMU 'ball', FMI 2.0, model exchange" in notes
    assert "2 states, 1 event indicators" in notes
    assert "e = 0.7" in notes and "g = 9.81" in notes


def test_running_an_untrusted_fmu_in_the_editor_says_how_to_trust_it(window, tmp_path,
                                                                     build_fmu, monkeypatch,
                                                                     qtbot):
    path = ball_diagram(tmp_path, build_fmu)
    asked(monkeypatch, False)
    assert window.files.open_path(path)
    with qtbot.waitSignal(window.sim.runner.failed, timeout=20000):
        window.actions_.run.trigger()
    assert window.sim.runner.wait(5000)
    [(message, block, port)] = window.panels.diagnostics.row_texts()
    assert block == "ball" and "blocksim trust" in message and "internal" not in message
