"""Runs `blocksim.sweep` in a worker thread so the editor stays responsive, with Cancel.

As in the simulation runner (blocksim/gui/scopes/runner.py), the worker thread makes no Qt
call: it leaves a copy of the table so far and the outcome under a lock, and a timer on the
GUI thread polls them; garbage collection stays on the GUI thread while it lives (gcguard).
Cancel is the sweep's own Ctrl-C path: the progress callback raises KeyboardInterrupt, the
sweep stops its workers and raises SweepInterrupted with every finished row, so a cancel
takes effect when the run (or pool batch) under way ends.
"""
from __future__ import annotations

import copy
import dataclasses
import logging
import threading
import time as clock
from typing import Any, Callable

from PySide6.QtCore import QCoreApplication, QObject, QTimer, Signal

from blocksim.errors import BlocksimError
from blocksim.gui.window import gcguard
from blocksim.sweeps import SweepInterrupted, sweep
from blocksim.sweeps.table import SweepTable

log = logging.getLogger(__name__)

POLL_INTERVAL_MS = 50
COPY_INTERVAL = 0.2  # seconds between copies of the table for the live view


def _copy(table: SweepTable) -> SweepTable:
    return dataclasses.replace(table, rows=dict(table.rows), results=dict(table.results))


class _Worker:
    """One sweep in a Python thread; `take()` hands its news to the GUI thread."""

    def __init__(self, call: Callable[[Callable[[SweepTable], None]], SweepTable]):
        self.call = call
        self.cancel = threading.Event()
        self.lock = threading.Lock()
        self.latest: SweepTable | None = None
        self.outcome: tuple | None = None  # ("done", table) or ("error", message, table)
        self._copied = -1.0
        self.thread = threading.Thread(target=self.run, name="blocksim-sweep", daemon=True)

    def run(self) -> None:
        try:
            table = self.call(self._progress)
        except SweepInterrupted as exc:
            self._end("done", _copy(exc.table))
        except BlocksimError as exc:
            self._end("error", str(exc), None, exc)
        except Exception as exc:  # a bug: said in the dialog and the log, never a traceback
            log.exception("the sweep failed")
            self._end("error", f"internal error: {type(exc).__name__}: {exc}", None)
        else:
            self._end("done", _copy(table))

    def _progress(self, table: SweepTable) -> None:
        if self.cancel.is_set():
            raise KeyboardInterrupt  # the sweep's Ctrl-C: stops cleanly, keeps finished rows
        now = clock.perf_counter()
        if now - self._copied >= COPY_INTERVAL:
            self._copied = now
            snapshot = _copy(table)
            with self.lock:
                self.latest = snapshot

    def _end(self, *outcome: Any) -> None:
        with self.lock:
            self.outcome = outcome

    def take(self) -> tuple[SweepTable | None, tuple | None]:
        with self.lock:
            taken = self.latest, self.outcome
            self.latest = None
        return taken


class SweepRunner(QObject):
    """Starts, watches and cancels one sweep at a time, never blocking the GUI thread."""

    progressed = Signal(object)  # a copy of the SweepTable so far
    finished = Signal(object)  # the SweepTable (`interrupted` set after a Cancel)
    failed = Signal(str)  # bad input or a diagram that cannot compile: the message

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._worker: _Worker | None = None
        self.error: BaseException | None = None  # what ended the last failed sweep
        self._timer = QTimer(self)
        self._timer.setInterval(POLL_INTERVAL_MS)
        self._timer.timeout.connect(self._poll)
        app = QCoreApplication.instance()
        if app is not None:  # quitting mid-sweep: its pool stopped, not waited for to the end
            app.aboutToQuit.connect(self.wait)

    def start(self, diagram: Any, **arguments: Any) -> None:
        """`blocksim.sweep(copy of diagram, **arguments)` in the background."""
        if self.is_running():
            raise RuntimeError("a sweep is already running")
        frozen = copy.deepcopy(diagram)  # edits made meanwhile do not reach the sweep
        worker = _Worker(lambda progress: sweep(frozen, progress=progress, **arguments))
        self._worker = worker
        self.destroyed.connect(worker.cancel.set)  # its dialog deleted with its window
        gcguard.watch(worker.thread)
        worker.thread.start()
        self._timer.start()

    def cancel(self) -> None:
        if self._worker is not None:
            self._worker.cancel.set()

    def is_running(self) -> bool:
        return self._worker is not None

    def wait(self, timeout_s: float = 10.0) -> bool:
        """Cancel and wait for the thread (closing the dialog); True if it ended."""
        worker = self._worker
        if worker is None:
            return True
        worker.cancel.set()
        worker.thread.join(timeout_s)
        self._poll()
        return not worker.thread.is_alive()

    def _poll(self) -> None:
        worker = self._worker
        if worker is None:
            self._timer.stop()
            return
        latest, outcome = worker.take()
        if latest is not None and outcome is None:
            self.progressed.emit(latest)
        if outcome is None:
            return
        self._worker = None
        self._timer.stop()
        gcguard.reap()
        self.error = outcome[3] if len(outcome) > 3 else None  # what refused it, if known
        if outcome[0] == "done":
            self.finished.emit(outcome[1])
        else:
            self.failed.emit(outcome[1])
