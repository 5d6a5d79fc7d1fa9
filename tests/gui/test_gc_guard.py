"""Garbage collection stays on the GUI thread while the editor runs simulations (gcguard).

The editor once hung because the worker thread's automatic collection freed Qt objects left
in reference cycles by closed windows (see blocksim/gui/window/gcguard.py). These tests leave such
garbage behind on purpose, run example diagrams, and record on which thread every collection
and every destruction of those Qt objects happened.
"""
from __future__ import annotations

import functools
import gc
import logging
import threading
import time
import weakref

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pyqtgraph")

import shiboken6  # noqa: E402
from editor_helpers import run_in_editor  # noqa: E402
from PySide6.QtCore import QCoreApplication, QEvent, QObject  # noqa: E402
from PySide6.QtWidgets import QMenu  # noqa: E402

from blocksim.gui.window import app  # noqa: E402

from blocksim.gui.window import gcguard
from blocksim.gui.scopes.runner import SimulationRunner  # noqa: E402
from blocksim.diagram.model import Block, Diagram, PortRef, SimulationSettings, Wire  # noqa: E402

EXAMPLES = ("bouncing_ball", "math003", "c5_two_state", "rotating_pendulum")


class QtDeaths:
    """Records the thread on which hooked QObjects are destroyed (their `destroyed` signal is
    emitted by ~QObject, on the thread that deletes them)."""

    def __init__(self):
        self.hooked: weakref.WeakSet = weakref.WeakSet()
        self.records: list[tuple[str, int]] = []

    def hook_all(self) -> int:
        """Hook every live QObject that Python holds a wrapper of; returns how many are new."""
        new = 0
        for obj in gc.get_objects():
            if (isinstance(obj, QObject) and shiboken6.isValid(obj)
                    and obj not in self.hooked):
                obj.destroyed.connect(functools.partial(self._died, type(obj).__name__))
                self.hooked.add(obj)
                new += 1
        return new

    def _died(self, name: str, *_args) -> None:
        self.records.append((name, threading.get_ident()))


def editor_with_scopes(qtbot, example: str):
    """A main window (not owned by qtbot: the test closes it) that opened and ran `example`,
    so its scopes hold pyqtgraph plots with their menus."""
    window = app.create_window()
    qtbot.waitExposed(window)
    next(a for a in window.examples_menu.actions() if a.text() == example).trigger()
    run_in_editor(window, qtbot, timeout_ms=60000)
    return window


def close(window) -> None:
    window.close()
    window.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.DeferredDelete)


def test_no_qt_object_is_finalised_off_the_gui_thread_during_runs(env, qtbot):
    gui = threading.get_ident()
    deaths = QtDeaths()
    collections: list[tuple[int, int]] = []  # (thread, generation) of each collection

    def on_collection(phase, info):
        if phase == "start":
            collections.append((threading.get_ident(), info["generation"]))

    for example in EXAMPLES[:3]:  # earlier windows: Qt garbage in reference cycles
        close(editor_with_scopes(qtbot, example))
    leave_cyclic_menus(120)  # young garbage for the runs below to collect
    assert deaths.hook_all() > 100
    gc.callbacks.append(on_collection)
    try:
        for example in EXAMPLES:
            # a window closed just before the run leaves young garbage, as the first hang had
            throwaway = editor_with_scopes(qtbot, "bouncing_ball")
            deaths.hook_all()
            close(throwaway)
            leave_cyclic_menus(10)
            del throwaway
            window = editor_with_scopes(qtbot, example)  # the run under test
            deaths.hook_all()
            close(window)
            del window
    finally:
        gc.callbacks.remove(on_collection)
    gc.collect()  # whatever is left, here on the GUI thread
    threads = {thread for thread, _generation in collections}
    assert collections and threads == {gui}, \
        f"{sum(t != gui for t, _ in collections)} collection(s) ran off the GUI thread"
    assert gcguard.stray_collections() == 0
    off_thread = [name for name, thread in deaths.records if thread != gui]
    assert off_thread == [], f"Qt objects destroyed off the GUI thread: {off_thread[:10]}"
    # the test had Qt garbage in cycles to lose (menus owned by Python, as pyqtgraph's were
    # before the scopes adopted them)
    assert sum(name in ("QMenu", "ViewBoxMenu", "CyclicMenu")
               for name, _ in deaths.records) >= 10
    assert len(deaths.records) > 500
    assert not gcguard.active() and gc.isenabled()  # the runs are over: as before


def endless_sine() -> Diagram:
    """Far too long to finish during a test, within the results budget (1e7 rows)."""
    return Diagram(blocks=[Block("wave", "Sine"), Block("scope", "Scope")],
                   wires=[Wire(PortRef("wave", "y"), PortRef("scope", "u"))],
                   simulation=SimulationSettings(stop=1e5, output_interval=0.01))


class CyclicMenu(QMenu):
    """A menu owned by Python and kept only by a reference cycle, as pyqtgraph's are."""

    def __init__(self):
        super().__init__()
        self.me = self


def leave_cyclic_menus(count: int) -> None:
    """Qt garbage only the cyclic collector frees: the editor's own windows leave almost
    none since the scopes give pyqtgraph's menus a parent, so the test brings its own."""
    for _ in range(count):
        CyclicMenu()


def test_qt_garbage_made_during_a_run_is_freed_by_the_gui_thread(qtbot):
    runner = SimulationRunner()
    runner.start(endless_sine())
    try:
        deaths = QtDeaths()
        for _ in range(20):
            CyclicMenu()
        assert deaths.hook_all() >= 20
        young = [[] for _ in range(5000)]  # enough new objects for a collection to be due
        qtbot.waitUntil(lambda: sum(n == "CyclicMenu" for n, _ in deaths.records) == 20,
                        timeout=5000)
        assert runner.is_running() and young  # freed while the worker ran, by the timer
        assert {thread for _name, thread in deaths.records} == {threading.get_ident()}
    finally:
        runner.stop()
        assert runner.wait(5000)


def test_a_run_hands_collection_to_the_gui_thread_and_back(qtbot):
    threshold = gc.get_threshold()
    assert gc.isenabled() and not gcguard.active()
    runner = SimulationRunner()
    runner.start(endless_sine())
    assert not gc.isenabled() and gcguard.active()
    qtbot.wait(300)
    assert not gc.isenabled()
    with qtbot.waitSignal(runner.finished, timeout=10000):
        runner.stop()
    assert runner.wait(5000)
    assert gc.isenabled() and gc.get_threshold() == threshold and not gcguard.active()


def test_the_guard_is_counted_and_restores_what_it_found(qtbot):
    release = threading.Event()
    thread = threading.Thread(target=release.wait, name="watched")
    gcguard.hold()
    gcguard.watch(thread)  # not started yet: counts as running
    gcguard.reap()
    assert gcguard.active()
    thread.start()
    gcguard.release()
    assert not gc.isenabled()  # the watched thread still lives
    release.set()
    thread.join()
    qtbot.waitUntil(lambda: not gcguard.active(), timeout=2000)  # the timer notices
    assert gc.isenabled()
    with pytest.raises(RuntimeError):
        gcguard.release()
    gc.disable()  # someone else's choice is respected
    try:
        with gcguard.holding():
            assert gcguard.active()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_only_the_gui_thread_may_use_the_guard():
    failures = []

    def attempt():
        try:
            gcguard.hold()
        except RuntimeError as exc:
            failures.append(str(exc))
    thread = threading.Thread(target=attempt)
    thread.start()
    thread.join()
    assert failures and "GUI thread" in failures[0] and not gcguard.active()


class Cycle:
    """An object in a reference cycle that notes the thread its finaliser runs on."""

    finalised: list[int] = []

    def __init__(self):
        self.me = self

    def __del__(self):
        Cycle.finalised.append(threading.get_ident())


def test_the_gui_thread_collects_while_a_worker_allocates(qtbot):
    """gc is off, but a worker that makes cyclic garbage does not grow memory without
    bound: the GUI thread's timer collects it meanwhile, and finalises it there."""
    Cycle.finalised = []
    batches, per_batch = 60, 2000
    peak = [0]

    def allocate():
        for made in range(per_batch, (batches + 1) * per_batch, per_batch):
            for _ in range(per_batch):
                Cycle()
            peak[0] = max(peak[0], made - len(Cycle.finalised))  # garbage not yet freed
            time.sleep(0.01)

    worker = threading.Thread(target=allocate, name="allocator")
    gcguard.watch(worker)
    worker.start()
    qtbot.waitUntil(lambda: not worker.is_alive(), timeout=30000)
    total = batches * per_batch
    # without collections meanwhile, all 120,000 would be alive at the end
    assert 0 < peak[0] < total / 3, peak[0]
    qtbot.waitUntil(lambda: not gcguard.active(), timeout=2000)
    gc.collect()
    assert len(Cycle.finalised) == total
    assert set(Cycle.finalised) == {threading.get_ident()}


def test_a_collection_forced_on_another_thread_is_reported(qtbot, caplog):
    before = gcguard.stray_collections()
    with gcguard.holding():
        thread = threading.Thread(target=gc.collect, name="rogue")
        thread.start()
        thread.join()
        gc.enable()  # and one that turns automatic collection back on
        with caplog.at_level(logging.WARNING, logger="blocksim.gui.window.gcguard"):
            qtbot.waitUntil(lambda: len(caplog.records) >= 2, timeout=2000)
        assert not gc.isenabled()
    assert gcguard.stray_collections() == before + 1
    text = caplog.text
    assert "rogue" in text and "re-enabled" in text


def test_the_editor_holds_the_guard_while_it_runs(monkeypatch):
    from PySide6.QtWidgets import QApplication

    seen = {}
    monkeypatch.setattr(app, "create_window", lambda diagram=None: object())
    monkeypatch.setattr(QApplication, "exec",
                        lambda self: seen.setdefault("guarded", gcguard.active()) and 0)
    assert app.main([]) == 0
    assert seen == {"guarded": True} and not gcguard.active() and gc.isenabled()
