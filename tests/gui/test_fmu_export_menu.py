"""File > Export FMU… writes the shown diagram as an FMU; a failure is one message."""
from __future__ import annotations

import pytest

from blocksim.gui.window import dialogs, fmu_export

fmpy = pytest.importorskip("fmpy")


def test_export_fmu_writes_a_valid_fmu(window, monkeypatch, tmp_path, env):
    from fmpy.validation import validate_fmu

    target = tmp_path / "lag.fmu"
    monkeypatch.setattr(dialogs, "ask_choice", lambda parent, title, label, items: items[3])
    monkeypatch.setattr(dialogs, "save_path", lambda *a, **k: str(target))
    action = next(a for a in window.findChildren(type(window.menuBar().actions()[0]))
                  if a.text() == "Export &FMU…")
    action.trigger()
    assert target.exists() and not env
    assert validate_fmu(str(target)) == []
    md = fmpy.read_model_description(str(target))
    assert md.fmiVersion == "3.0" and md.coSimulation is not None
    assert "lag.fmu" in window.statusBar().currentMessage()


def test_export_fmu_failure_is_one_message(window, monkeypatch, tmp_path, env):
    monkeypatch.setattr(dialogs, "ask_choice", lambda parent, title, label, items: items[0])
    monkeypatch.setattr(dialogs, "save_path", lambda *a, **k: str(tmp_path / "no" / "x.fmu"))
    assert fmu_export.export_fmu(window) is None
    assert env and env[0][0] == "Cannot export FMU" and "does not exist" in env[0][1]


def test_export_fmu_cancelled_writes_nothing(window, monkeypatch, tmp_path, env):
    monkeypatch.setattr(dialogs, "ask_choice", lambda *a: None)
    assert fmu_export.export_fmu(window) is None
    assert not list(tmp_path.glob("*.fmu")) and not env
