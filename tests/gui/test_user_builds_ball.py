"""Acceptance test (issue 4): a user builds the bouncing ball in the editor, runs it, saves,
reopens and undoes it, through the real widgets.

Blocks come from the palette (a drop carrying the palette's own drag data: QDrag.exec would
block an offscreen run); everything else is real input: mouse drags between ports on the
canvas, clicks on blocks, typing in the inspector and the settings editor, the window's
actions. The run is checked against the closed-form bounce times of a ball dropped from
x0 = 10 with g = 9.81 and restitution e = 0.8:

    t1 = sqrt(2 x0 / g), impact speed v1 = g t1; after bounce k the ball leaves the floor at
    e^k v1 and is back after 2 e^k v1 / g, so t_{k+1} = t_k + 2 e^k v1 / g, and between
    bounces x(t) = e^k v1 (t - t_k) - g (t - t_k)^2 / 2 (before t1: x0 - g t^2 / 2).
"""
from __future__ import annotations

import math
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
    snapshot,
    tab_to,
    type_text,
)
from PySide6.QtCore import QPoint, Qt  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from blocksim.cli import main as cli  # noqa: E402
from blocksim.diagram.format import load_diagram  # noqa: E402
from blocksim.gui.window import dialogs  # noqa: E402
from blocksim.diagram.model import Diagram  # noqa: E402

G, X0, E = 9.81, 10.0, 0.8
STOP = 12.0  # 12 bounces, before the accumulation point at 9 t1 = 12.85 s
SHOTS = os.environ.get("BLOCKSIM_TEST_SHOTS")  # a folder to keep screenshots in, if set

# (type, where it is dropped as a fraction of the viewport, id the user gives it, fields)
BLOCKS = [
    ("Constant", (0.14, 0.32), "gravity", {"value": "-9.81"}),
    ("ResetIntegrator", (0.36, 0.32), "velocity", {"initial": "0", "edge": "falling"}),
    ("Integrator", (0.58, 0.32), "position", {"x0": "10", "lower": "0"}),
    ("Gain", (0.36, 0.62), "restitution", {"k": "-0.8"}),
    ("Scope", (0.80, 0.32), "x", {}),
]
WIRES = [  # the drags, port to port: output to input, and the last one input to output
    ("gravity.y", "velocity.u"), ("velocity.y", "position.u"), ("position.y", "x.u"),
    ("position.sat", "velocity.reset"), ("velocity.state", "restitution.u"),
    ("velocity.x0<", "restitution.y>"),
]
MODEL_WIRES = {("gravity.y", "velocity.u"), ("velocity.y", "position.u"), ("position.y", "x.u"),
               ("position.sat", "velocity.reset"), ("velocity.state", "restitution.u"),
               ("restitution.y", "velocity.x0")}
PARAMS = {"gravity": {"value": -9.81}, "velocity": {"initial": 0, "edge": "falling"},
          "position": {"x0": 10, "lower": 0}, "restitution": {"k": -0.8}, "x": {}}
SETTINGS = {"stop": "12", "rtol": "1e-10", "atol": "1e-10", "output_interval": "0.01"}


def bounce_times(count: int) -> np.ndarray:
    """The first `count` impact times of the closed form."""
    t1 = math.sqrt(2 * X0 / G)
    v1 = G * t1
    times = [t1]
    for k in range(1, count):
        times.append(times[-1] + 2 * E ** k * v1 / G)
    return np.array(times)


def exact_height(t: np.ndarray, bounces: np.ndarray) -> np.ndarray:
    """x(t) of the closed form (t before the last of `bounces`)."""
    v1 = G * bounces[0]
    k = np.searchsorted(bounces, t, side="right")  # bounces so far
    since = t - np.where(k > 0, bounces[np.maximum(k - 1, 0)], 0.0)
    speed = np.where(k > 0, E ** k * v1, 0.0)
    start = np.where(k > 0, 0.0, X0)
    return start + speed * since - G * since ** 2 / 2




def build_ball(window, qtbot) -> None:
    """Drop, name, parametrise, wire and arrange the blocks; set the simulation settings."""
    canvas, panels = window.canvas, window.panels
    viewport = canvas.view.viewport()
    size = viewport.size()
    # 1. blocks from the palette, each selected once dropped
    for type_name, (fx, fy), _name, _fields in BLOCKS:
        assert panels.palette.item_for(type_name) is not None
        point = QPoint(int(fx * size.width()), int(fy * size.height()))
        palette_drop(viewport, point, type_name)
        assert canvas.scene.selected_block_ids() == [window.doc.diagram.blocks[-1].id]
    generated = [b.id for b in window.doc.diagram.blocks]
    assert generated == ["constant1", "resetintegrator1", "integrator1", "gain1", "scope1"]
    # 2. each block: click it, type a name in the id field, Tab through the parameters
    #    typing their values (Return after the id when there are none), Apply
    inspector = panels.inspector
    for old, (_type, _where, name, fields) in zip(generated, BLOCKS):
        click(viewport, block_point(canvas, old))
        assert canvas.scene.selected_block_ids() == [old] and inspector.block_id() == old
        qtbot.waitUntil(lambda: all(f.widget.isVisible() for f in inspector.fields.values()))
        inspector.id_edit.setFocus()
        type_text(inspector.id_edit, name)
        QTest.keyClick(inspector.id_edit, Qt.Key_Tab if fields else Qt.Key_Return)
        assert inspector.block_id() == name and canvas.scene.selected_block_ids() == [name]
        if fields:  # Tab from the id leads to the first parameter
            assert QApplication.focusWidget() is next(iter(inspector.fields.values())).widget
        for field, text in fields.items():
            widget = inspector.fields[field].widget
            tab_to(widget)  # past the fields left as they are
            if field == "edge":  # a combo box: typing picks the choice
                QTest.keyClicks(widget, text)
                assert widget.currentText() == text
            else:
                type_text(widget, text)
        if fields:  # Enter in the last field (a choice applied when it was picked)
            QTest.keyClick(QApplication.focusWidget(), Qt.Key_Return)
            assert inspector.error_text() == ""
        assert window.doc.diagram.block(name).params == PARAMS[name]
    # 3. the restitution gain points back along the feedback path
    click(viewport, block_point(canvas, "restitution"))
    window.actions_.flip.trigger()
    # 4. wires: drag from port to port
    for a, b in WIRES:
        before = len(window.doc.diagram.wires)
        drag(viewport, port_point(canvas, *_port(a, "out")), port_point(canvas, *_port(b, "in")))
        assert len(window.doc.diagram.wires) == before + 1, f"{a} -> {b} not connected"
    # 5. move the gain a little lower: its wires go along
    start = block_point(canvas, "restitution")
    drag(viewport, start, start + QPoint(0, 40), steps=6)
    for wire in canvas.scene.wires:
        src, dst = (canvas.scene.blocks[end.block] for end in (wire.wire.src, wire.wire.dst))
        assert wire.route[0] == src.port_position("out", wire.wire.src.port)[0]
        assert wire.route[-1] == dst.port_position("in", wire.wire.dst.port)[0]
    # 6. simulation settings
    settings = panels.settings
    for key, text in SETTINGS.items():
        type_text(settings.number_edits[key], text)
        QTest.keyClick(settings.number_edits[key], Qt.Key_Return)
    assert settings.error_text() == ""


def _port(ref: str, kind: str) -> tuple[str, str, str]:
    """(block, kind, port) of "block.port"; a trailing < or > says "in" or "out" instead."""
    kind = {"<": "in", ">": "out"}.get(ref[-1], kind)
    block, port = ref.rstrip("<>").split(".")
    return block, kind, port


def expected_model(built: dict) -> None:
    """The model is exactly what the user made."""
    assert [(b["id"], b["type"], b.get("params", {})) for b in built["blocks"]] == [
        (name, type_name, PARAMS[name]) for type_name, _w, name, _f in BLOCKS]
    assert {(w["src"], w["dst"]) for w in built["wires"]} == MODEL_WIRES
    sim = built["simulation"]
    assert (sim["stop"], sim["rtol"], sim["atol"], sim["output_interval"]) == (
        12.0, 1e-10, 1e-10, 0.01)


def check_against_closed_form(results, scopes) -> None:
    assert results.status == "finished" and results.time[-1] == STOP
    bounces = bounce_times(40)
    impacts = np.array([e.time for e in results.events_of("reset", "velocity")])
    assert len(impacts) == np.count_nonzero(bounces <= STOP) == 12
    np.testing.assert_allclose(impacts[:10], bounces[:10], rtol=0, atol=1e-9)
    floor = [e.time for e in results.events_of("lower limit", "position")]
    np.testing.assert_allclose(floor, impacts, rtol=0, atol=0)
    t, x = scopes.scope_data("x")
    np.testing.assert_array_equal(t, results.time)
    np.testing.assert_array_equal(x, results["x"])
    assert len(t) > STOP / 0.01
    np.testing.assert_allclose(x, exact_height(t, bounces), rtol=0, atol=1e-9)
    for instant in impacts:  # each impact is logged twice (left and right limit), at x = 0
        rows = np.flatnonzero(t == instant)
        assert len(rows) == 2 and np.all(np.abs(x[rows]) < 1e-9)


def screenshot(window, name: str, tmp_path: Path) -> Path:
    folder = Path(SHOTS) if SHOTS else tmp_path
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    assert window.grab().save(str(path))
    return path


def test_user_builds_runs_saves_reopens_and_undoes_the_bouncing_ball(env, qtbot, tmp_path,
                                                                     monkeypatch):
    window = open_window(qtbot)
    doc = window.doc
    assert doc.diagram.blocks == [] and doc.undo_stack.count() == 0
    build_ball(window, qtbot)
    built = snapshot(doc.diagram)
    expected_model(built)
    steps = doc.undo_stack.count()
    applies = sum(len(fields) for *_, fields in BLOCKS)
    # one step each: drop, rename, each parameter field, flip, wire, move, each setting
    assert steps == 2 * len(BLOCKS) + applies + 1 + len(WIRES) + 1 + len(SETTINGS)

    # run it from the toolbar; the scopes come to the front
    results = run_in_editor(window, qtbot)
    scopes = window.sim.scopes
    check_against_closed_form(results, scopes)
    assert window.panels.docks["scopes"].isVisible()
    assert scopes.tabs.currentWidget() is scopes.views["x"]
    qtbot.wait(50)  # let the plot draw before the picture
    screenshot(window, "ball.png", tmp_path)
    if SHOTS:
        scopes.export_images(SHOTS)
    assert env == []  # no message box along the way

    # Save As, then the file holds exactly the editor's model
    target = tmp_path / "ball.json"
    monkeypatch.setattr(dialogs, "save_path", lambda *a, **k: str(target))
    window.actions_.save_as.trigger()
    assert not doc.dirty and doc.path == target
    assert snapshot(load_diagram(target)) == built

    # reopened in a second window, it is the same diagram and runs the same
    other = open_window(qtbot)
    monkeypatch.setattr(dialogs, "open_path", lambda *a, **k: str(target))
    other.actions_.open.trigger()
    assert other.doc.path == target and not other.doc.dirty
    assert snapshot(other.doc.diagram) == built
    again = run_in_editor(other, qtbot)
    np.testing.assert_array_equal(again.time, results.time)
    np.testing.assert_array_equal(again["x"], results["x"])
    assert again.events == results.events

    # headless, through the command line: the same rows and events
    out, events = tmp_path / "ball.csv", tmp_path / "ball_events.csv"
    assert cli.main(["run", str(target), "--out", str(out), "--events", str(events),
                     "--quiet"]) == 0
    header = out.read_text(encoding="utf-8").splitlines()[0].split(",")
    table = np.loadtxt(out, delimiter=",", skiprows=1, ndmin=2)
    assert header == ["time", "x"] and table.shape == (len(results.time), 2)
    np.testing.assert_allclose(table[:, 0], results.time, rtol=0, atol=1e-12)
    np.testing.assert_allclose(table[:, 1], results["x"], rtol=0, atol=1e-12)
    logged = [line.split(",") for line in events.read_text(encoding="utf-8").splitlines()[1:]]
    assert [(float(t), b, k) for t, b, k in logged] == [
        (e.time, e.block, e.kind) for e in results.events]

    # undo every step with the Undo action: an empty diagram; redo all: the ball again
    undo, redo = window.actions_.undo, window.actions_.redo
    for _ in range(steps):
        assert undo.isEnabled()
        undo.trigger()
    assert doc.undo_stack.index() == 0 and not undo.isEnabled()
    assert doc.diagram.blocks == [] and doc.diagram.wires == []
    assert not window.canvas.scene.blocks and not window.canvas.scene.wires
    assert snapshot(doc.diagram) == snapshot(Diagram())  # settings undone too
    for _ in range(steps):
        redo.trigger()
    assert doc.undo_stack.index() == steps and not redo.isEnabled()
    assert snapshot(doc.diagram) == built and not doc.dirty  # back where it was saved
    assert env == []
