"""Keeps Python's cyclic garbage collector on the GUI thread while the editor could have other
Python threads running.

Why: an automatic collection runs on whichever thread happens to allocate. When that was the
simulation's worker thread and the garbage held Qt objects left in reference cycles by closed
windows (pyqtgraph menus, actions, plot items), shiboken destroyed them there: the worker
took Qt's signal/slot mutex and waited for the GIL, while the GUI thread held the GIL and
waited for that mutex (deleting a QMenu whose actions needed it). The editor hung. No Qt
object may be finalised off the GUI thread, so while the guard is on, automatic collection
is off and a timer on the GUI thread collects instead: the young generation whenever it has
grown past the interpreter's own threshold, everything rarely (see `FULL_SHARE`).

The guard is counted: `hold()`/`release()` (the application, for its whole life) and
`watch(thread)` (the runner, for each worker thread, until that thread has ended) may
overlap; the interpreter's own settings come back when the last one ends. Only the GUI
thread may call them.
"""
from __future__ import annotations

import contextlib
import gc
import logging
import threading
import time
from typing import Iterator

from PySide6.QtCore import QCoreApplication, QThread, QTimer

log = logging.getLogger(__name__)

CHECK_MS = 100  # how often the GUI thread looks at the collector's counts
FULL_MIN_S = 10.0  # a full collection at most this often...
FULL_SHARE = 0.02  # ...and never costing more than this share of the GUI thread's time
DEFAULT_THRESHOLD = (700, 10, 10)  # CPython's, used if automatic collection was tuned off


class _State:
    """The one guard of the process (there is one collector and one GUI thread)."""

    def __init__(self) -> None:
        self.holds = 0
        self.watched: list[threading.Thread] = []
        self.was_enabled = True
        self.threshold = DEFAULT_THRESHOLD
        self.timer: QTimer | None = None
        self.gui_ident: int | None = None
        self.next_full = 0.0
        self.collections = 0  # by the timer, since the guard went on
        self.stray = 0  # collections that ran off the GUI thread while guarded (ever)
        self.stray_names: set[str] = set()  # ...and the threads they ran on
        self.reported = 0


_state = _State()


def active() -> bool:
    """Whether automatic collection is currently handed to the GUI thread."""
    return _state.timer is not None


def hold() -> None:
    """Guard until the matching `release()` (the application, while its window is open)."""
    _start()
    _state.holds += 1


def release() -> None:
    """End one `hold()`; the interpreter's settings return once nothing is guarded."""
    _require_gui_thread()
    if _state.holds <= 0:
        raise RuntimeError("gcguard.release() without a matching hold()")
    _state.holds -= 1
    _maybe_stop()


@contextlib.contextmanager
def holding() -> Iterator[None]:
    """`hold()` for the duration of a `with` block."""
    hold()
    try:
        yield
    finally:
        release()


def watch(thread: threading.Thread) -> None:
    """Guard until `thread` has ended; call it before `thread.start()` so that the thread
    never runs unguarded (a thread not started yet counts as running)."""
    _start()
    _state.watched.append(thread)


def reap() -> None:
    """Forget watched threads that have ended (the timer does this too, every tick)."""
    _require_gui_thread()
    _state.watched = [t for t in _state.watched if t.ident is None or t.is_alive()]
    _maybe_stop()


def stray_collections() -> int:
    """How many collections ran off the GUI thread while guarded, in this process (only an
    explicit gc.collect() on another thread can do that); 0 when all is well."""
    return _state.stray


# ----- the machinery -----
def _require_gui_thread() -> None:
    app = QCoreApplication.instance()
    if app is None:
        raise RuntimeError("the garbage-collection guard needs a QApplication")
    if QThread.currentThread() != app.thread():
        raise RuntimeError("the garbage-collection guard may only be used on the GUI thread")


def _start() -> None:
    _require_gui_thread()
    s = _state
    if s.timer is not None:
        return
    s.was_enabled = gc.isenabled()
    threshold = gc.get_threshold()
    s.threshold = threshold if threshold[0] > 0 else DEFAULT_THRESHOLD
    s.gui_ident = threading.get_ident()
    s.next_full = time.perf_counter() + FULL_MIN_S
    s.collections = 0
    gc.disable()
    gc.callbacks.append(_on_collection)
    timer = QTimer()  # no parent: it must not die with a window; stopped in _maybe_stop
    timer.setInterval(CHECK_MS)
    timer.timeout.connect(_tick)
    timer.start()
    s.timer = timer
    log.debug("automatic garbage collection moved to the GUI thread")


def _maybe_stop() -> None:
    s = _state
    if s.timer is None or s.holds > 0 or s.watched:
        return
    s.timer.stop()
    s.timer.deleteLater()
    s.timer = None
    with contextlib.suppress(ValueError):
        gc.callbacks.remove(_on_collection)
    _report_strays()
    if s.was_enabled:
        gc.enable()
    log.debug("automatic garbage collection back to the interpreter (%d collections by the "
              "GUI thread)", s.collections)


def _tick() -> None:
    """One look at the collector's counts, on the GUI thread."""
    s = _state
    s.watched = [t for t in s.watched if t.ident is None or t.is_alive()]
    if s.holds <= 0 and not s.watched:
        _maybe_stop()
        return
    if gc.isenabled():  # someone turned it back on: the guard would be void
        log.warning("automatic garbage collection was re-enabled while the editor guards it; "
                    "disabling it again")
        gc.disable()
    _report_strays()
    count0, count1, count2 = gc.get_count()
    t0, t1, t2 = s.threshold
    if count0 < t0:
        return
    generation = 0
    started = time.perf_counter()
    if count1 >= t1:
        generation = 2 if count2 >= t2 and started >= s.next_full else 1
    gc.collect(generation)
    s.collections += 1
    if generation == 2:
        cost = time.perf_counter() - started
        s.next_full = time.perf_counter() + max(FULL_MIN_S, cost / FULL_SHARE)


def _on_collection(phase: str, info: dict) -> None:
    """Notes a collection that starts off the GUI thread (called by the collector)."""
    if phase == "start" and threading.get_ident() != _state.gui_ident:
        _state.stray += 1
        _state.stray_names.add(threading.current_thread().name)


def _report_strays() -> None:
    s = _state
    if s.stray > s.reported:
        log.warning("%d garbage collection(s) ran off the GUI thread (%s): an explicit "
                    "gc.collect() there may finalise Qt objects on the wrong thread",
                    s.stray - s.reported, ", ".join(sorted(s.stray_names)))
        s.reported = s.stray
