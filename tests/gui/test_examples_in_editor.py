"""Every example diagram in the editor: opened from the Examples menu, drawn by the window's
own scene, run from the Run action to the same logged columns as a headless run; and bad
files opened through File > Open give a message naming the file, never an exception."""
from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pyqtgraph")

from editor_helpers import open_window, run_in_editor, snapshot, type_text  # noqa: E402
from PySide6.QtCore import QRectF, Qt  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402
from PySide6.QtGui import QColor, QImage, QPainter  # noqa: E402

import blocksim  # noqa: E402
from blocksim.diagram.format import load_diagram  # noqa: E402
from blocksim.gui.window import dialogs  # noqa: E402
from blocksim.gui.window.files import example_name, examples  # noqa: E402

# Runs shortened (through the settings editor, and the same in the headless run) to keep the
# test fast: stop times in seconds.
SHORTER = {"bouncing_ball": 8.0, "bouncing_ball_contact": 3.0, "diode_ideal": 5e-5,
           "diode_pwl": 5e-5, "diode_realtime": 5e-5, "diode_shockley": 5e-5,
           "pi_1khz": 2.0, "dc_motor_pid": 6.0, "physical/c21_diode_ideal": 5e-5,
           "physical/c21_diode_pwl": 5e-5, "physical/c21_diode_shockley": 5e-5,
           "physical/c21_ball_hardstop": 3.0, "physical/c21_ball_elastogap": 1.5,
           "physical/c21_pendulum_cartesian": 3.0, "physical/drivetrain_friction": 1.0,
           "physical/dc_motor_emf": 6.0}




def scene_picture(scene, path) -> QImage:
    """The shown level drawn by the window's scene into a PNG file, read back."""
    source = scene.diagram_rect().adjusted(-20, -20, 20, 20)
    image = QImage(int(source.width()), int(source.height()), QImage.Format_ARGB32)
    image.fill(QColor("white"))
    painter = QPainter(image)
    painter.setRenderHints(QPainter.Antialiasing | QPainter.TextAntialiasing)
    scene.render(painter, QRectF(image.rect()), source, Qt.KeepAspectRatio)
    painter.end()
    assert image.save(str(path))
    return QImage(str(path))


def ink(image: QImage) -> float:
    """Fraction of pixels that are clearly not white."""
    gray = image.convertToFormat(QImage.Format_Grayscale8)
    pixels = np.frombuffer(gray.constBits(), np.uint8).reshape(
        gray.height(), gray.bytesPerLine())[:, :gray.width()]
    return float(np.mean(pixels < 200))


def _joins_physical_ports(path) -> bool:
    """Whether the example has a physical connection (a wire between component ports)."""
    from blocksim.blocktypes import registry
    from blocksim.physical.declare import Component

    diagram = load_diagram(path)
    connectors = {c.get("name"): {k["name"] for k in c.get("connectors", [])}
                  for c in diagram.components}
    for kind in {b.type for b in diagram.blocks}:
        found = registry.get(kind)
        if isinstance(found, type) and issubclass(found, Component):
            connectors[kind] = {c.name for c in found.connectors}
    kinds = {b.id: b.type for b in diagram.blocks}
    return any(wire.src.port in connectors.get(kinds.get(wire.src.block), ())
               for wire in diagram.wires)


EDITOR_EXAMPLES = examples()


@pytest.mark.parametrize("path", EDITOR_EXAMPLES, ids=example_name)
def test_example_opens_draws_and_runs_as_headless(env, qtbot, tmp_path, path):
    window = open_window(qtbot)
    doc, scene = window.doc, window.canvas.scene
    action = next(a for a in window.examples_menu.actions() if a.text() == example_name(path))
    action.trigger()
    assert doc.path is None and not doc.dirty  # an untitled copy of the example
    expected = load_diagram(path)
    assert set(scene.blocks) == {b.id for b in expected.blocks}
    assert len(scene.wires) == len(expected.wires)
    assert all(w.route and not w.dangling for w in scene.wires)

    image = scene_picture(scene, tmp_path / f"{path.stem}.png")
    assert image.width() > 200 and image.height() > 100
    assert 0.005 < ink(image) < 0.5  # a drawing: neither blank nor a blot

    stop = SHORTER.get(example_name(path))
    if stop is not None:
        settings = window.panels.settings
        type_text(settings.number_edits["stop"], f"{stop:g}")
        QTest.keyClick(settings.number_edits["stop"], Qt.Key_Return)
        assert settings.error_text() == "" and doc.diagram.simulation.stop == stop
    edited = snapshot(doc.diagram)
    results = run_in_editor(window, qtbot)
    assert snapshot(doc.diagram) == edited  # running changes nothing
    headless = blocksim.simulate(expected, stop_time=stop)
    assert results.status == headless.status
    ours, theirs = dict(results.columns()), dict(headless.columns())
    assert list(ours) == list(theirs) and len(ours) > 1
    for name, values in theirs.items():
        assert ours[name].shape == values.shape, name
        np.testing.assert_allclose(ours[name], values, rtol=1e-12, atol=1e-12, err_msg=name)
    assert [(e.block, e.kind) for e in results.events] == \
        [(e.block, e.kind) for e in headless.events]
    np.testing.assert_allclose([e.time for e in results.events],
                               [e.time for e in headless.events], rtol=1e-12, atol=1e-12)
    assert window.sim.scopes.views  # every example plots something (Scopes, else Outputs)
    for path_, view in window.sim.scopes.views.items():  # the scopes show the same data
        np.testing.assert_array_equal(view.data()[1], results[path_])
    assert env == []


BAD_FILES = {
    "truncated.json": ('{"format": "blocksim", "version": 1, "blocks": [{"id": "g", ',
                       "invalid JSON"),
    "unknown_type.json": (json.dumps({
        "format": "blocksim", "version": 1,
        "blocks": [{"id": "src", "type": "Constant"}, {"id": "odd", "type": "NotInstalled"}],
        "wires": [{"src": "src.y", "dst": "odd.u"}]}), "NotInstalled"),
}


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_a_bad_file_gives_a_message_naming_it(env, qtbot, tmp_path, monkeypatch, name):
    window = open_window(qtbot)
    window.examples_menu.actions()[0].trigger()
    before = snapshot(window.doc.diagram)
    text, why = BAD_FILES[name]
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    monkeypatch.setattr(dialogs, "open_path", lambda *a, **k: str(path))
    window.actions_.open.trigger()  # an exception here would fail the test (pytest-qt)
    assert len(env) == 1, env
    _title, message = env[0]
    assert name in message and why in message, message
    if window.doc.path == path:  # opened anyway, the unknown block drawn grey
        assert not window.canvas.scene.blocks["odd"].info.known
    else:  # refused: the diagram that was open is untouched
        assert snapshot(window.doc.diagram) == before
