"""The write rule in the editor (issue 25): a run whose ToFile would write outside the
diagram's folder asks first, naming the file; No keeps the file and lists the refusal in
Diagnostics, Yes runs and writes it (not asked again for that diagram); a file the run
reads is refused without a question. The sweep dialog asks the same for a block file each
run would write again."""
import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import Qt  # noqa: E402

from blocksim.diagram.format import save_diagram  # noqa: E402
from blocksim.gui.window import dialogs  # noqa: E402
from builders import block, diagram  # noqa: E402

USERS = "the user's own file\n"


def _window(qtbot, tmp_path, file, reader=False):
    """A window on proj/d.json: a Constant k (or a FromFile of data.csv) into ToFile `log`."""
    from blocksim.gui.window import app

    folder = tmp_path / "proj"
    folder.mkdir()
    source = block("src", "FromFile", file="data.csv") if reader else \
        block("src", "Constant", value="k")
    (folder / "data.csv").write_text("time,y\n0,1\n1,2\n")
    d = diagram([source, block("log", "ToFile", file=file)], [("src.y", "log.u")],
                {"k": 1.0}, stop=1.0, output_interval=0.5)
    save_diagram(d, folder / "d.json")
    window = app.create_window(str(folder / "d.json"))
    qtbot.addWidget(window)
    return window


def _run(window, qtbot, signal):
    with qtbot.waitSignal(signal, timeout=20000):
        window.actions_.run.trigger()
    assert window.sim.runner.wait(5000)


@pytest.fixture
def asked(monkeypatch):
    """The questions asked (reason, files); the answer is `asked.answer`."""
    class Asked(list):
        answer = False
    questions = Asked()
    monkeypatch.setattr(dialogs, "ask_allow_write", lambda parent, reason, paths:
                        questions.append((reason, tuple(paths))) or questions.answer)
    return questions


def test_no_keeps_the_file_and_lists_the_refusal(qtbot, tmp_path, env, asked):
    (tmp_path / "exp.csv").write_text(USERS)
    window = _window(qtbot, tmp_path, "../exp.csv")
    _run(window, qtbot, window.sim.runner.failed)
    assert asked == [(f"Block 'log': its file '../exp.csv' ({tmp_path / 'exp.csv'}) is "
                      f"outside the diagram's folder {tmp_path / 'proj'}",
                      (str(tmp_path / "exp.csv"),))]
    assert (tmp_path / "exp.csv").read_text() == USERS
    rows = window.panels.diagnostics.row_texts()
    assert len(rows) == 1 and rows[0][1] == "log"
    assert rows[0][0] == asked[0][0][len("Block 'log': "):] + " (Run asks before writing it)"
    assert window.canvas.scene.marked_blocks == {"log"}
    assert env == []  # no other box


def test_yes_runs_and_writes_it_and_is_not_asked_again(qtbot, tmp_path, env, asked):
    (tmp_path / "exp.csv").write_text(USERS)
    window = _window(qtbot, tmp_path, "../exp.csv")
    asked.answer = True
    window.actions_.validate.trigger()
    [found] = window.sim.diagnostics
    assert found.severity == "warning" and "Run asks before writing it" in found.message
    _run(window, qtbot, window.sim.runner.finished)
    assert len(asked) == 1
    assert (tmp_path / "exp.csv").read_text().startswith("time,log\n")
    assert window.statusBar().currentMessage().endswith(
        f"; log wrote {tmp_path / 'exp.csv'} (3 rows)")
    (tmp_path / "exp.csv").write_text(USERS)
    _run(window, qtbot, window.sim.runner.finished)
    assert len(asked) == 1 and (tmp_path / "exp.csv").read_text() != USERS
    assert window.sim.validate() == []  # allowed now: no warning either


def test_a_file_the_run_reads_is_refused_without_a_question(qtbot, tmp_path, env, asked):
    window = _window(qtbot, tmp_path, "data.csv", reader=True)
    _run(window, qtbot, window.sim.runner.failed)
    assert asked == []
    rows = window.panels.diagnostics.row_texts()
    assert "is the file block 'src' reads" in rows[0][0]
    assert (tmp_path / "proj" / "data.csv").read_text() == "time,y\n0,1\n1,2\n"


def test_the_sweep_dialog_asks_for_a_file_each_run_writes_again(qtbot, tmp_path, env, asked):
    from test_sweep_dialog import _fill

    from blocksim.gui.sweep.dialog import SweepDialog

    window = _window(qtbot, tmp_path, "o.csv")
    window.actions_.sweep.trigger()
    dialog = window.findChild(SweepDialog, "sweep-dialog")
    _fill(dialog, "grid", ("1", "2", "2"), ["final:log"])
    qtbot.mouseClick(dialog.start_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: bool(asked) and not dialog.runner.is_running(), timeout=20000)
    assert asked[0][0].startswith("Block 'log': its file 'o.csv'")
    assert "written again by each of the 2 runs" in dialog.message.text()
    assert not (tmp_path / "proj" / "o.csv").exists()
    asked.answer = True
    qtbot.mouseClick(dialog.start_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: dialog.table is not None and len(dialog.table) == 2,
                    timeout=20000)
    assert len(asked) == 2 and (tmp_path / "proj" / "o.csv").exists()
    dialog.close()
