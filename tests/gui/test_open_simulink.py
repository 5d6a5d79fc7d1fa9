"""File > Open takes a Simulink model: imported, shown as a new unsaved document laid out as
in Simulink, the model file left alone; a file that cannot be imported is one message."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "simulink"))
from slx_fixtures import slx_bytes  # noqa: E402
from test_import_runs import lag_model  # noqa: E402


def test_open_slx_is_a_new_unsaved_document_with_positions(window, tmp_path):
    model = tmp_path / "lag.slx"
    raw = slx_bytes(lag_model())
    model.write_bytes(raw)
    assert window.files.open_path(model)
    doc = window.doc
    assert doc.path is None and doc.dirty  # Save asks where: never over the model
    blocks = {b.id: b for b in doc.diagram.blocks}
    step, integ = blocks["Step"].layout, blocks["Integrator"].layout
    assert (step["x"], step["y"]) == (30 * 1.5, 40 * 1.5)  # Simulink's position, scaled
    assert integ["x"] > blocks["Sum_error"].layout["x"] > step["x"]
    assert blocks["Sum_error"].layout["label"] == "Sum error"
    assert "Imported lag.slx" in window.statusBar().currentMessage()
    assert window.files.example_name == "lag"  # Save As suggests lag.json
    assert model.read_bytes() == raw
    assert window.sim.validate() == []


def test_open_hostile_slx_is_one_message(window, tmp_path, env):
    model = tmp_path / "bad.slx"
    model.write_bytes(b"PK\x03\x04 broken")
    before = window.doc.diagram
    assert not window.files.open_path(model)
    assert window.doc.diagram is before
    assert env and env[-1][0] == "Cannot import Simulink model" and "bad.slx" in env[-1][1]
