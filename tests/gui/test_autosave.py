"""Autosave: one file per window, claimed with a lock that dies with its process; work left by
crashed editors (also real processes killed with SIGKILL) is offered back in one question,
each piece recovered or declined on its own, and a live window's autosave is never offered elsewhere nor deleted by another window."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("PySide6")

from blocksim.diagram.format import load_diagram, save_diagram  # noqa: E402
from blocksim.gui.window import app  # noqa: E402
from blocksim.gui.window import dialogs
from blocksim.gui.window import files
from blocksim.gui.window.autosave import autosave_dir  # noqa: E402
from blocksim.gui.document.commands import SetParams  # noqa: E402
from blocksim.gui.window.mainwindow import MainWindow  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
CHILD = Path(__file__).with_name("autosave_child.py")
C5 = files.examples_dir() / "c5_two_state.json"


class Answers:
    """Answers the recovery question from a list (True/False per piece offered, or None for
    "later"), recording what was asked and how many times."""

    def __init__(self, monkeypatch, *answers: bool | None):
        self.answers, self.asked, self.questions = list(answers), [], 0
        monkeypatch.setattr(dialogs, "ask_recover", self)

    def __call__(self, parent, descriptions):
        self.questions += 1
        self.asked.extend(descriptions)
        if self.answers and self.answers[0] is None:
            return None
        return [self.answers.pop(0) for _ in descriptions]


def edited_window(qtbot, k: float) -> MainWindow:
    """A window on the C5 example with one gain changed to `k`, autosaved."""
    window = MainWindow()
    qtbot.addWidget(window)
    window.files.open_path(C5)
    window.doc.push(SetParams(window.doc, (), "y1_rate", {"k": k}))
    assert window.autosaver.tick()
    return window


def gain(window) -> float:
    return window.doc.diagram.block("y1_rate").params["k"]


def left_by_a_dead_editor(session: str, k: float) -> Path:
    """An autosave as a crashed editor leaves it: diagram and info, no live lock."""
    folder = autosave_dir()
    folder.mkdir(parents=True, exist_ok=True)
    diagram = load_diagram(C5)
    diagram.block("y1_rate").params["k"] = k
    data = folder / f"session-{session}.json"
    save_diagram(diagram, data)
    data.with_suffix(".info").write_text(json.dumps(
        {"original": str(C5), "saved_at": time.time()}), encoding="utf-8")
    return data


def test_autosave_holds_the_unsaved_work_and_goes_with_a_save(qtbot, env, tmp_path):
    window = MainWindow()
    qtbot.addWidget(window)
    window.files.open_path(C5)
    assert not window.autosaver.tick()  # nothing to save yet
    window.doc.push(SetParams(window.doc, (), "y1_rate", {"k": 7}))
    assert window.autosaver.tick()
    assert load_diagram(window.autosaver.file).block("y1_rate").params == {"k": 7}
    assert window.autosaver.file.with_suffix(".lock").is_file()  # claimed while alive
    window.files.save_to(tmp_path / "saved.json")
    assert not window.autosaver.file.exists()
    assert not window.autosaver.file.with_suffix(".lock").exists()


def test_work_of_a_dead_editor_is_recovered_once(qtbot, env, monkeypatch, tmp_path):
    dead = left_by_a_dead_editor("dead-1", 7)
    answers = Answers(monkeypatch, True)
    window = app.create_window()
    qtbot.addWidget(window)
    assert len(answers.asked) == 1 and "c5_two_state.json" in answers.asked[0]
    assert window.doc.dirty and window.doc.path == C5 and gain(window) == 7
    assert not dead.exists()  # it became the window's own autosave, written at once
    assert load_diagram(window.autosaver.file).block("y1_rate").params == {"k": 7}
    window.files.save_to(tmp_path / "recovered.json")
    assert not window.autosaver.file.exists()
    again = Answers(monkeypatch)
    third = app.create_window()
    qtbot.addWidget(third)
    assert again.asked == []  # nothing left to offer
    assert list(autosave_dir().iterdir()) == []


def test_each_piece_is_offered_and_declining_removes_only_that_one(qtbot, env, monkeypatch):
    older = left_by_a_dead_editor("dead-1", 1)
    time.sleep(0.01)
    newer = left_by_a_dead_editor("dead-2", 2)
    answers = Answers(monkeypatch, False, True)  # newest first: decline it, take the older
    window = app.create_window()
    qtbot.addWidget(window)
    assert len(answers.asked) == 2 and answers.questions == 1  # one question for both
    assert not newer.exists() and not older.exists()
    assert gain(window) == 1 and window.doc.dirty
    assert app.extra_windows() == []


def test_later_keeps_every_piece_for_the_next_start(qtbot, env, monkeypatch):
    pieces = [left_by_a_dead_editor(f"dead-{k}", k) for k in (1, 2, 3)]
    answers = Answers(monkeypatch, None)
    window = app.create_window()
    qtbot.addWidget(window)
    assert answers.questions == 1 and len(answers.asked) == 3
    assert all(p.exists() for p in pieces) and not window.doc.dirty
    again = Answers(monkeypatch, False, True, False)  # next start: offered again, all three
    other = app.create_window()
    qtbot.addWidget(other)
    assert len(again.asked) == 3 and not any(p.exists() for p in pieces)
    assert gain(other) == 2


def test_the_recovery_list_checks_every_piece_and_reports_the_unchecked(qtbot):
    from PySide6.QtCore import Qt

    from blocksim.gui.window.recoverylist import RecoveryList

    dialog = RecoveryList(None, ["a.json, autosaved 2026-11-29 10:00", "an untitled diagram"])
    qtbot.addWidget(dialog)
    assert dialog.choices() == [True, True]
    dialog.items.item(1).setCheckState(Qt.CheckState.Unchecked)
    assert dialog.choices() == [True, False]
    assert dialog.items.item(0).text().startswith("a.json")
    dialog.recover_button.click()
    assert dialog.result() == RecoveryList.DialogCode.Accepted


def test_a_live_windows_autosave_is_never_offered_nor_removed_by_another(
        qtbot, env, monkeypatch, tmp_path):
    first, second = edited_window(qtbot, 1), edited_window(qtbot, 2)
    answers = Answers(monkeypatch)
    third = app.create_window()  # a new window (or editor) beside the live ones
    qtbot.addWidget(third)
    assert answers.asked == []
    second.files.save_to(tmp_path / "second.json")  # a save removes only its own
    second.close()
    third.close()
    assert first.autosaver.file.is_file() and not second.autosaver.file.exists()
    assert load_diagram(first.autosaver.file).block("y1_rate").params == {"k": 1}
    first.close()  # discarded (conftest answers "discard"): now it goes
    assert not first.autosaver.file.exists()


def test_stale_leftovers_without_a_diagram_are_tidied(qtbot, env, monkeypatch):
    folder = autosave_dir()
    folder.mkdir(parents=True)
    (folder / "session-gone-1.info").write_text("{}", encoding="utf-8")
    answers = Answers(monkeypatch)
    window = app.create_window()
    qtbot.addWidget(window)
    assert answers.asked == [] and list(folder.iterdir()) == []


def start_editor(k: float) -> tuple[subprocess.Popen, Path, list[str]]:
    """An editor process that autosaved C5 with gain `k`; returns it, its autosave file and
    what it was offered at its start."""
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, str(CHILD), str(C5), str(k)], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    offered = []
    for line in proc.stdout:
        if line.startswith("offered: "):
            offered.append(line.strip())
        elif line.startswith("ready "):
            return proc, Path(line[len("ready "):].strip()), offered
    proc.kill()
    raise AssertionError(f"the editor process ended early ({proc.wait()})")


def test_two_killed_editors_are_both_offered_and_recovered(qtbot, env, monkeypatch, tmp_path):
    editors = []
    try:
        first, first_file, offered = start_editor(101)
        editors.append(first)
        second, second_file, offered_second = start_editor(202)
        editors.append(second)
        assert offered == [] and offered_second == []  # the first was alive: not offered
        # this process's windows neither see nor delete the live editors' work
        answers = Answers(monkeypatch)
        window = app.create_window()
        qtbot.addWidget(window)
        window.files.open_path(C5)
        window.doc.push(SetParams(window.doc, (), "y1_rate", {"k": 3}))
        window.files.save_to(tmp_path / "mine.json")
        window.close()
        assert answers.asked == [] and first_file.is_file() and second_file.is_file()
        for proc in editors:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
    finally:
        for proc in editors:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    answers = Answers(monkeypatch, True, True)
    window = app.create_window()
    qtbot.addWidget(window)
    extra = app.extra_windows()
    for other in extra:
        qtbot.addWidget(other)
    assert len(answers.asked) == 2 and len(extra) == 1
    assert sorted(gain(w) for w in (window, *extra)) == [101, 202]
    assert all(w.doc.dirty and w.doc.path == C5 for w in (window, *extra))
    assert not first_file.exists() and not second_file.exists()
    assert all(w.autosaver.file.is_file() for w in (window, *extra))  # now theirs
