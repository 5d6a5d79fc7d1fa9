"""View > Sample Time Colors: blocks and wires in the colour of their resolved rate, a legend,
tooltips; recompiled after edits, never marking the document changed; no colours (and the
reason) while the diagram does not compile."""
from pathlib import Path

import pytest

pytest.importorskip("PySide6")

from editor_helpers import block_point  # noqa: E402
from PySide6.QtCore import QEvent  # noqa: E402
from PySide6.QtGui import QHelpEvent  # noqa: E402
from PySide6.QtWidgets import QApplication, QToolTip  # noqa: E402

from blocksim.gui.canvas import ratecolors  # noqa: E402
from blocksim.gui.document.commands import RemoveItems, SetParams  # noqa: E402
from blocksim.gui.canvas.sampletimes import (  # noqa: E402
    CONTINUOUS_COLOR,
    DISCRETE_COLORS,
    MIXED_COLOR,
    TRIGGERED_COLOR,
)

DIAGRAMS = Path(__file__).resolve().parents[2] / "diagrams"
RED, GREEN, BLUE = DISCRETE_COLORS[:3]


def open_diagram(window, name: str) -> None:
    assert window.files.open_path(DIAGRAMS / name, ask=False)


def colours_on(window, qtbot, on: bool = True) -> None:
    action = window.actions_.sample_time_colors
    if action.isChecked() != on:
        action.trigger()  # as the View menu does
    assert action.isChecked() == on
    settle(window, qtbot)


def settle(window, qtbot) -> None:
    """Wait until the debounced compile (if any) has been made and shown."""
    colours = window.canvas.sample_times
    qtbot.waitUntil(lambda: not colours.busy(), timeout=10000)


def block_colours(window) -> dict[str, str | None]:
    return {bid: item.rate[0] for bid, item in window.canvas.scene.blocks.items()}


def wire_colours(window) -> dict[str, str | None]:
    return {str(w.wire.src) + "->" + str(w.wire.dst): w.rate[0]
            for w in window.canvas.scene.wires}


def test_zoh_loop_colours_on_and_off(window, qtbot):
    open_diagram(window, "zoh_loop.json")
    assert not window.actions_.sample_time_colors.isChecked()  # off by default
    assert set(block_colours(window).values()) == {None}
    assert not window.canvas.legend.isVisible()
    colours_on(window, qtbot)
    colours = block_colours(window)
    assert colours["hold"] == colours["u"] == RED  # the one discrete rate, 0.1 s
    for continuous in ("step", "error", "gain", "plant", "y"):
        assert colours[continuous] == CONTINUOUS_COLOR
    wires = wire_colours(window)
    assert wires["hold.y->plant.u"] == RED and wires["plant.y->error.u2"] == CONTINUOUS_COLOR
    legend = window.canvas.legend
    assert legend.isVisible()
    assert "D1" in legend.text() and "0.1 s" in legend.text() and "continuous" in legend.text()
    assert legend.geometry().bottom() <= window.canvas.view.geometry().top()  # above it
    # a view concern: nothing in the document changed
    assert not window.doc.dirty and window.doc.undo_stack.count() == 0
    colours_on(window, qtbot, False)
    assert set(block_colours(window).values()) == {None}
    assert set(wire_colours(window).values()) == {None}
    assert not legend.isVisible()
    assert not window.doc.dirty


def test_multi_clock_faster_rate_first(window, qtbot):
    open_diagram(window, "multi_clock.json")
    colours_on(window, qtbot)
    colours = block_colours(window)
    # the two holds (1/3 s and 0.5 s) and the sum of both, which runs at their common base
    # rate 1/6 s (docs/semantics.md): three discrete rates, the fastest red
    assert colours["sum"] == colours["half"] == colours["y"] == RED
    assert colours["hold3"] == colours["h3"] == GREEN  # the faster clock
    assert colours["hold2"] == colours["h2"] == BLUE
    assert colours["wave"] == colours["s"] == CONTINUOUS_COLOR
    text = window.canvas.legend.text()
    assert text.index("1/6 s") < text.index("1/3 s") < text.index("0.5 s")


def test_tooltips_say_the_rate(window, qtbot):
    open_diagram(window, "zoh_loop.json")
    scene = window.canvas.scene
    assert "sample time" not in scene.blocks["hold"].toolTip()
    colours_on(window, qtbot)
    assert scene.blocks["hold"].toolTip() == "hold (ZeroOrderHold)\nsample time: discrete 0.1 s (D1)"
    assert scene.blocks["plant"].toolTip().endswith("sample time: continuous")
    wire = next(w for w in scene.wires if str(w.wire.src) == "hold.y")
    assert wire.toolTip().endswith("sample time: discrete 0.1 s (D1)")
    # the tooltip a user gets when the mouse rests on the block
    view = window.canvas.view
    point = block_point(window.canvas, "hold")
    QApplication.sendEvent(view.viewport(), QHelpEvent(QEvent.ToolTip, point,
                                                       view.viewport().mapToGlobal(point)))
    qtbot.waitUntil(QToolTip.isVisible)
    assert "discrete 0.1 s" in QToolTip.text()
    QToolTip.hideText()
    colours_on(window, qtbot, False)
    assert scene.blocks["hold"].toolTip() == "hold (ZeroOrderHold)"


def test_edits_recolour_and_a_compile_error_shows_none(window, qtbot):
    open_diagram(window, "zoh_loop.json")
    colours_on(window, qtbot)
    doc, scene = window.doc, window.canvas.scene
    compiles = window.canvas.sample_times.compiles
    # a new period: the hold and what it drives follow, after the debounce
    doc.push(SetParams(doc, (), "hold", {"sample_time": 0.25}))
    settle(window, qtbot)
    assert block_colours(window)["hold"] == RED
    assert "0.25 s" in scene.blocks["hold"].toolTip() and "0.25 s" in window.canvas.legend.text()
    # a move changes no rate: nothing is compiled for it
    scene.select_only(["plant"])
    window.canvas.editor.nudge(10, 0)
    assert window.canvas.sample_times.busy()
    settle(window, qtbot)
    assert window.canvas.sample_times.compiles == compiles + 1
    # the plant's input unwired: the diagram does not compile, no colours are left
    index = next(i for i, w in enumerate(doc.diagram.wires) if str(w.dst) == "plant.u")
    doc.push(RemoveItems(doc, (), [], [index]))
    settle(window, qtbot)
    assert set(block_colours(window).values()) == {None}
    assert set(wire_colours(window).values()) == {None}
    assert "does not compile" in window.canvas.legend.text()
    assert "plant" in window.canvas.legend.text()  # names the block at fault
    assert "sample time" not in scene.blocks["hold"].toolTip()
    doc.undo_stack.undo()  # wired again: colours again
    settle(window, qtbot)
    assert block_colours(window)["hold"] == RED
    assert block_colours(window)["plant"] == CONTINUOUS_COLOR


def test_the_setting_is_remembered(window, qtbot):
    from editor_helpers import open_window

    colours_on(window, qtbot)
    second = open_window(qtbot)
    assert second.actions_.sample_time_colors.isChecked()
    assert second.canvas.legend.isVisible()
    second.actions_.sample_time_colors.trigger()
    third = open_window(qtbot)
    assert not third.actions_.sample_time_colors.isChecked()


def test_inside_a_subsystem_and_its_own_colour(window, qtbot):
    open_diagram(window, "zoh_loop.json")
    colours_on(window, qtbot)
    canvas = window.canvas
    canvas.scene.select_only(["hold", "plant"])  # two rates in one subsystem: mixed
    sub = canvas.editor.group()
    settle(window, qtbot)
    assert block_colours(window)[sub] == MIXED_COLOR
    assert "mixed" in canvas.scene.blocks[sub].toolTip()
    assert "Mixed" in canvas.legend.text()
    canvas.open_subsystem(sub)  # inside: each block at its flat path's rate
    colours = block_colours(window)
    assert colours["hold"] == RED and colours["plant"] == CONTINUOUS_COLOR
    assert colours["in1"] == CONTINUOUS_COLOR  # the port blocks show their signal's rate
    assert {colours["out1"], colours["out2"]} == {RED, CONTINUOUS_COLOR}
    canvas.go_up()
    assert block_colours(window)[sub] == MIXED_COLOR


def test_triggered_contents_are_cyan(window, qtbot, tmp_path):
    from blocksim.diagram.format import diagram_from_dict, save_diagram

    data = {
        "format": "blocksim", "version": 1, "simulation": {"stop": 2.0},
        "blocks": [
            {"id": "pulse", "type": "Pulse", "params": {"period": 0.5}},
            {"id": "clock", "type": "Clock"},
            {"id": "sampler", "type": "TriggeredSubsystem", "diagram": {
                "blocks": [{"id": "x", "type": "Inport"},
                           {"id": "g", "type": "Gain", "params": {"k": 2}},
                           {"id": "out", "type": "Outport"}],
                "wires": [{"src": "x.y", "dst": "g.u"}, {"src": "g.y", "dst": "out.u"}]}},
            {"id": "y", "type": "Output"}],
        "wires": [{"src": "pulse.y", "dst": "sampler.trigger"},
                  {"src": "clock.y", "dst": "sampler.x"}, {"src": "sampler.out", "dst": "y.u"}]}
    path = tmp_path / "sampler.json"
    save_diagram(diagram_from_dict(data), path)
    assert window.files.open_path(path, ask=False)
    colours_on(window, qtbot)
    colours = block_colours(window)
    assert colours["sampler"] == colours["y"] == TRIGGERED_COLOR
    assert colours["pulse"] == colours["clock"] == CONTINUOUS_COLOR
    assert "triggered by sampler" in window.canvas.scene.blocks["sampler"].toolTip()
    window.canvas.open_subsystem("sampler")
    assert set(block_colours(window).values()) == {TRIGGERED_COLOR}


def test_large_diagrams_compile_off_the_gui_thread(window, qtbot, monkeypatch):
    """A diagram whose compile is slow is compiled by a worker thread; the GUI thread
    only takes the result (forced here on a small diagram)."""
    import threading

    monkeypatch.setattr(ratecolors, "INLINE_BLOCKS", 0)
    monkeypatch.setattr(ratecolors, "INLINE_S", 0.0)
    threads = []
    real = ratecolors.compile_rates

    def spy(diagram):
        threads.append(threading.current_thread().name)
        return real(diagram)

    monkeypatch.setattr(ratecolors, "compile_rates", spy)
    open_diagram(window, "multi_clock.json")
    colours_on(window, qtbot)
    assert threads == ["blocksim-rates"]
    assert block_colours(window)["sum"] == RED
    # edits while the worker compiles: one more compile afterwards, of the newest diagram
    doc = window.doc
    doc.push(SetParams(doc, (), "hold3", {"sample_time": 0.25}))
    window.canvas.sample_times.refresh()
    doc.push(SetParams(doc, (), "hold3", {"sample_time": 0.1}))
    window.canvas.sample_times.refresh()
    settle(window, qtbot)
    assert "0.1 s" in window.canvas.legend.text() and "0.25 s" not in window.canvas.legend.text()
    assert block_colours(window)["hold3"] == RED  # now the fastest
