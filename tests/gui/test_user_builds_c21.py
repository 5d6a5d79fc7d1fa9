"""Acceptance test (issue 26): a user draws the C21 ideal-diode circuit from the palette in
the editor, sets its parameters and settings, runs it and sees uC and i in scopes; the
saved file runs from the command line with identical results, and the same circuit built
with the Python builder gives the same curves.

The circuit: a sine source (amplitude -1 V, 150 kHz) drives R1 = 1 kOhm, L = 25.3 uH, a
current sensor and R2 = 20 Ohm into C = 100 nF to ground; an ideal diode (Ron = Goff = 0)
from ground to the node after L clamps it. Blocks come from the palette (a drop carrying
the palette's own drag data); every other step is real input: clicks, Ctrl+R, typing in
the inspector and the settings, mouse drags from port to port.
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pyqtgraph")

from editor_helpers import (  # noqa: E402
    block_point,
    click,
    drag,
    open_window,
    palette_drop,
    port_point,
    run_in_editor,
    tab_to,
    type_text,
)
from PySide6.QtCore import QPoint, Qt  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402

import blocksim  # noqa: E402
from blocksim.api.builder import DiagramBuilder  # noqa: E402
from blocksim.cli import main as cli  # noqa: E402
from blocksim.gui.window import dialogs  # noqa: E402

SHOTS = os.environ.get("BLOCKSIM_TEST_SHOTS")  # a folder to keep screenshots in, if set

# (type, where it is dropped as a fraction of the viewport, quarter turns (clockwise,
# Ctrl+R; -1: counter-clockwise, Ctrl+Shift+R), id, fields)
BLOCKS = [
    ("SineVoltage", (0.07, 0.50), 1, "source", {"amplitude": "-1", "f": "150e3"}),
    ("Resistor", (0.20, 0.28), 0, "R1", {"R": "1000"}),
    ("Inductor", (0.34, 0.28), 0, "L", {"L": "25.3e-6"}),
    ("CurrentSensor", (0.48, 0.28), 0, "i_sensor", {}),
    ("Resistor", (0.68, 0.28), 0, "R2", {"R": "20"}),
    ("IdealDiode", (0.58, 0.52), -1, "D", {"Ron": "0", "Goff": "0"}),
    ("Capacitor", (0.80, 0.52), 1, "C", {"C": "100e-9"}),
    ("VoltageSensor", (0.90, 0.52), 1, "uC_sensor", {}),
    ("Ground", (0.46, 0.84), 0, "ground", {}),
    ("Scope", (0.48, 0.08), 0, "i", {}),
    ("Scope", (0.97, 0.52), 0, "uC", {}),
]
CONNECTIONS = [
    ("source.p", "R1.p"), ("R1.n", "L.p"), ("L.n", "i_sensor.p"), ("i_sensor.n", "R2.p"),
    ("R2.n", "C.p"), ("C.n", "ground.p"), ("source.n", "ground.p"), ("D.p", "ground.p"),
    ("D.n", "i_sensor.n"), ("uC_sensor.p", "C.p"), ("uC_sensor.n", "C.n"),
    ("uC_sensor.v", "uC.u"), ("i_sensor.i", "i.u"),
]
SETTINGS = {"stop": "1e-4", "rtol": "1e-10", "atol": "1e-12"}


def reference_results():
    """The same circuit built with the Python builder (scratch/c21's), run headless."""
    d = DiagramBuilder(stop=1e-4, rtol=1e-10, atol=1e-12)
    src = d.add("SineVoltage", id="source", amplitude=-1, f=150e3)
    r1, ind = d.add("Resistor", id="R1", R=1000), d.add("Inductor", id="L", L=25.3e-6)
    r2, cap = d.add("Resistor", id="R2", R=20), d.add("Capacitor", id="C", C=100e-9)
    dio, gnd = d.add("IdealDiode", id="D", Ron=0, Goff=0), d.add("Ground", id="ground")
    vs, cs = d.add("VoltageSensor", id="uC_sensor"), d.add("CurrentSensor", id="i_sensor")
    for a, b in ((src.p, r1.p), (r1.n, ind.p), (ind.n, cs.p), (cs.n, r2.p), (r2.n, cap.p),
                 (cap.n, gnd.p), (src.n, gnd.p), (dio.p, gnd.p), (dio.n, cs.n), (vs.p, cap.p),
                 (vs.n, cap.n)):
        d.connect(a, b)
    vs.v >> d.add("Scope", id="uC").u
    cs.i >> d.add("Scope", id="i").u
    return blocksim.simulate(d.model)


def shot(window, name: str, tmp_path: Path) -> None:
    folder = Path(SHOTS) if SHOTS else tmp_path
    folder.mkdir(parents=True, exist_ok=True)
    assert window.grab().save(str(folder / name))


def build_c21(window, qtbot) -> int:
    """Draw the circuit as a user does; returns the number of user actions taken."""
    canvas, panels = window.canvas, window.panels
    viewport = canvas.view.viewport()
    size = viewport.size()
    actions = 0
    for type_name, (fx, fy), turns, _name, _fields in BLOCKS:
        palette_drop(viewport, QPoint(int(fx * size.width()), int(fy * size.height())),
                     type_name)
        actions += 1
        for _ in range(abs(turns)):  # the new block is selected: Ctrl+R turns it
            QTest.keyClick(viewport, Qt.Key_R, Qt.ControlModifier | (
                Qt.ShiftModifier if turns < 0 else Qt.NoModifier))
            actions += 1
    generated = [b.id for b in window.doc.diagram.blocks]
    assert [b.layout.get("rotation", 0) for b in window.doc.diagram.blocks] == [
        (90 * turns) % 360 for _t, _w, turns, _n, _f in BLOCKS]
    inspector = panels.inspector
    for old, (_type, _where, _turns, name, fields) in zip(generated, BLOCKS):
        click(viewport, block_point(canvas, old))
        assert inspector.block_id() == old
        qtbot.waitUntil(lambda: all(f.widget.isVisible() for f in inspector.fields.values()))
        inspector.id_edit.setFocus()
        type_text(inspector.id_edit, name)
        QTest.keyClick(inspector.id_edit, Qt.Key_Return)
        actions += 2  # click, type the name
        assert inspector.block_id() == name
        for field, text in fields.items():
            widget = inspector.fields[field].widget
            widget.setFocus()
            type_text(widget, text)
            QTest.keyClick(widget, Qt.Key_Return)
            actions += 1
            assert inspector.error_text() == ""
    for a, b in CONNECTIONS:
        before = len(window.doc.diagram.wires)
        ends = []
        for ref in (a, b):
            block, port = ref.split(".")
            kind = canvas.scene.blocks[block].kind_of(port, "in" if ref == b else "out")
            ends.append(port_point(canvas, block, kind, port))
        drag(viewport, *ends)
        actions += 1
        assert len(window.doc.diagram.wires) == before + 1, f"{a} - {b} not connected: " \
            f"{window.statusBar().currentMessage()}"
    settings = panels.settings
    for key, text in SETTINGS.items():
        type_text(settings.number_edits[key], text)
        QTest.keyClick(settings.number_edits[key], Qt.Key_Return)
        actions += 1
    assert settings.error_text() == ""
    return actions


def test_user_draws_runs_and_saves_the_c21_diode_circuit(env, qtbot, tmp_path, monkeypatch):
    window = open_window(qtbot)
    window.resize(1600, 1000)
    qtbot.wait(20)
    actions = build_c21(window, qtbot)
    # 11 drops, 4 turns, 11 x (click, name), 8 values, 13 drags, 3 settings
    assert actions == 61
    model = window.doc.diagram
    assert {b.id: b.params for b in model.blocks}["D"] == {"Ron": 0, "Goff": 0}
    scene = window.canvas.scene
    connections = [item for item in scene.wires if item.domain is not None]
    assert len(connections) == 11 and all(item._arrow is None for item in connections)
    assert not any(item.dangling for item in scene.wires)
    assert len({scene.net_of(item) for item in connections}) == 6  # the circuit's nodes
    assert sum(len(item.junctions) for item in scene.wires) >= 3
    shot(window, "c21_drawn.png", tmp_path)

    results = run_in_editor(window, qtbot, timeout_ms=60000)
    assert results.status == "finished" and results.time[-1] == pytest.approx(1e-4)
    scopes = window.sim.scopes
    for name in ("uC", "i"):
        t, y = scopes.scope_data(name)
        np.testing.assert_array_equal(t, results.time)
        np.testing.assert_array_equal(y, results[name])
    # a milliampere current reads as one: the axis is not scaled silently (pyqtgraph 0.14
    # scales an axis without units whose values are below 1, showing no prefix)
    assert np.max(np.abs(results["i"])) < 2e-3
    axis = scopes.views["i"].plot.getPlotItem().getAxis("left")
    assert axis.autoSIPrefixScale == 1.0
    switches = [e for e in results.events if e.block == "D"]
    assert len(switches) == 29 and {e.kind for e in switches} == {"on", "off"}
    reference = reference_results()
    for name in ("uC", "i"):  # the builder's circuit: the same curves
        np.testing.assert_allclose(np.interp(reference.time, results.time, results[name]),
                                   reference[name], rtol=0, atol=1e-7)
    qtbot.wait(50)
    shot(window, "c21_run.png", tmp_path)
    assert env == []

    target = tmp_path / "c21.json"
    monkeypatch.setattr(dialogs, "save_path", lambda *a, **k: str(target))
    window.actions_.save_as.trigger()
    out = tmp_path / "c21.csv"
    assert cli.main(["run", str(target), "--out", str(out), "--quiet"]) == 0
    header = out.read_text(encoding="utf-8").splitlines()[0].split(",")
    table = np.loadtxt(out, delimiter=",", skiprows=1, ndmin=2)
    assert sorted(header[1:]) == ["i", "uC"] and table.shape[0] == len(results.time)
    np.testing.assert_allclose(table[:, 0], results.time, rtol=0, atol=0)
    for column, name in enumerate(header[1:], start=1):
        np.testing.assert_allclose(table[:, column], results[name], rtol=1e-12, atol=0)
