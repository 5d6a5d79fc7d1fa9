"""Runs a simulation in a worker thread so the editor stays responsive, with progress,
live snapshots of the data so far, Stop, and the results (partial ones on failure or Stop).

Snapshots are read from the simulator's recorder inside the worker thread, from its own
progress/should_stop callbacks, where the recorder is consistent; so the recorder needs no
lock. Only the newest snapshot is kept for the GUI thread: a slow GUI skips frames instead
of queueing them. The worker thread makes no Qt call; the GUI thread polls it with a timer.
While a worker thread lives, garbage collection is kept on the GUI thread (`gcguard`): a
collection on the worker would finalise Qt objects there and could deadlock the editor.
"""
from __future__ import annotations

import copy
import logging
import math
import threading
import time as clock
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np
from PySide6.QtCore import QCoreApplication, QObject, QTimer, Signal

from blocksim.compiler import compile_diagram
from blocksim.engine import Event, Results, Simulator
from blocksim.engine.simulator import STOP_MESSAGE  # noqa: F401 (the status message, for views)
from blocksim.errors import BlocksimError, SimulationError
from blocksim.files import write_rule
from blocksim.gui.scopes.traces import logged_drivers
from blocksim.gui.window import gcguard
from blocksim.diagram.model import Diagram, SimulationSettings

log = logging.getLogger(__name__)

SNAPSHOT_INTERVAL = 0.1  # seconds between snapshots at most 10 per second
PROGRESS_INTERVAL = 0.05
POLL_INTERVAL_MS = 30  # how often the GUI thread looks at the worker's news


@dataclass(frozen=True)
class Snapshot:
    """The data of a run so far: time, logged signals (as in Results), events, progress."""

    time: np.ndarray
    signals: dict[str, np.ndarray]
    events: tuple[Event, ...]
    progress: float

    @property
    def columns(self) -> dict[str, np.ndarray]:
        """Column name (`id`, or `id[k]` for vectors) -> values, as in the results CSV."""
        return dict(list(Results(self.time, self.signals).columns())[1:])

    @classmethod
    def of(cls, results: Results, progress: float) -> "Snapshot":
        return cls(results.time, results.signals, results.events, progress)


class _Worker:
    """Compiles and runs one diagram in a Python thread.

    It makes no Qt call at all: it leaves progress, the newest snapshot and the outcome in
    fields under its lock, and the runner polls them from the GUI thread. (Cross-thread
    signal emission from a busy Python thread was the one place a test run once hung.)
    """

    def __init__(self, diagram: Diagram, settings: SimulationSettings,
                 params: Mapping[str, Any] | None, allow_write: Sequence[str] = ()):
        self.diagram, self.settings, self.params = diagram, settings, params
        self.allow_write = tuple(allow_write)
        self.stop_event = threading.Event()
        self.lock = threading.Lock()
        self.latest: Snapshot | None = None
        self.progress: float | None = None  # newest progress not yet shown
        self.outcome: tuple | None = None  # ("done", results) or ("error", message, partial)
        self.sim: Simulator | None = None
        # {logged path: the driving signal's name per element}, once compiled, until taken
        self.drivers: dict[str, tuple[str, ...]] | None = None
        self._last_progress = -math.inf
        self._progress_shown = -1.0
        self._last_snapshot = -math.inf
        self._snapshot_interval = SNAPSHOT_INTERVAL
        self.thread = threading.Thread(target=self.run, name="blocksim-run", daemon=True)

    def take(self) -> tuple[float | None, Snapshot | None, tuple | None]:
        """Progress, snapshot and outcome not yet delivered (each None if nothing new)."""
        with self.lock:
            taken = self.progress, self.latest, self.outcome
            self.progress = self.latest = None
        return taken

    def take_drivers(self) -> dict[str, tuple[str, ...]] | None:
        """The logged signals' driver names, once, when the model has compiled."""
        with self.lock:
            drivers, self.drivers = self.drivers, None
        return drivers

    def run(self) -> None:
        try:
            model = compile_diagram(self.diagram, self.params, self.settings)
            write_rule.check(model.files, allow=self.allow_write)  # before it runs
            with self.lock:
                self.drivers = logged_drivers(model.signal_names, model.logged)
            self.sim = Simulator(model, self.settings, progress=self._progress,
                                 should_stop=self._should_stop)
        except BlocksimError as exc:
            self._end("error", str(exc), None, exc)
            return
        except Exception as exc:
            log.exception("compiling %s failed", self.diagram.source)
            self._end("error", f"internal error while compiling: {type(exc).__name__}: {exc}",
                      None)
            return
        try:
            results = self.sim.run()  # a Stop ends it through should_stop, even between events
        except SimulationError as exc:
            self._publish(exc.results, self._fraction())
            self._end("error", str(exc), exc.results, exc)
            return
        except BlocksimError as exc:  # refused as the run starts (an FMU not trusted)
            self._end("error", str(exc), None, exc)
            return
        except Exception as exc:
            log.exception("simulating %s failed", self.diagram.source)
            partial = self.sim.recorder.results("failed", str(exc), self.sim.stats)
            self._end("error", f"internal error: {type(exc).__name__}: {exc}", partial)
            return
        self._publish(results, 1.0 if results.status == "finished" else self._fraction())
        self._end("done", results)

    def _end(self, *outcome) -> None:
        with self.lock:
            self.outcome = outcome

    # ----- callbacks from the simulator, in this thread -----
    def _progress(self, t: float) -> None:
        self._tick(t)

    def _should_stop(self) -> bool:
        if self.stop_event.is_set():
            return True
        self._tick(None)
        return False

    def _tick(self, t: float | None) -> None:
        now = clock.perf_counter()
        if now - self._last_progress >= PROGRESS_INTERVAL:
            self._last_progress = now
            fraction = self._fraction(t)
            if fraction > self._progress_shown:  # never backwards
                self._progress_shown = fraction
                with self.lock:
                    self.progress = fraction
        if now - self._last_snapshot >= self._snapshot_interval:
            recorder = self.sim.recorder
            if len(recorder):
                results = recorder.results("running")
                self._publish(results, self._fraction())
                # A snapshot copies everything so far: never spend over 5% of the run on it.
                self._last_snapshot = clock.perf_counter()
                self._snapshot_interval = max(SNAPSHOT_INTERVAL,
                                              20 * (self._last_snapshot - now))

    def _fraction(self, t: float | None = None) -> float:
        s = self.settings
        if t is None:
            last = self.sim.recorder.last_time if self.sim else None
            t = last if last is not None else s.start
        return min(1.0, max(0.0, (t - s.start) / (s.stop - s.start)))

    def _publish(self, results: Results | None, progress: float) -> None:
        if results is None:
            return
        snap = Snapshot.of(results, progress)
        with self.lock:
            self.latest = snap  # an older one not yet taken is skipped


class SimulationRunner(QObject):
    """Starts, watches and stops one simulation at a time, never blocking the GUI thread.

    A Stop ends the run and delivers the results so far through `finished`, with status
    "stopped" (the event log ends with an "interrupted" entry). A failure (compile error,
    bad settings, failed simulation) arrives through `failed` with a message naming block
    and port, and the partial results when the run got that far.
    """

    progressChanged = Signal(float)  # fraction of [start, stop] simulated, 0..1
    snapshot = Signal(object)  # a Snapshot, at most ~10 per second
    finished = Signal(object)  # Results
    failed = Signal(str, object)  # message, partial Results or None
    started = Signal()
    # {logged path: name of the signal driving each element}, once the model has compiled
    compiled = Signal(object)

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._worker: _Worker | None = None
        self.error: BaseException | None = None  # what ended the last failed run
        self._threads: set[_Worker] = set()  # until their thread has ended
        self._timer = QTimer(self)
        self._timer.setInterval(POLL_INTERVAL_MS)
        self._timer.timeout.connect(self._poll)
        app = QCoreApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self._shutdown)

    def start(self, diagram: Diagram, settings: SimulationSettings | None = None,
              params: Mapping[str, Any] | None = None, allow_write: Sequence[str] = ()
              ) -> None:
        """Run a copy of `diagram` (edits made meanwhile do not reach the run); `settings`
        replaces the diagram's simulation settings, `params` override its parameters;
        `allow_write`: files and folders its blocks may write outside its folder (a
        refusal of the write rule fails the run with a WriteRefused)."""
        if self.is_running():
            raise RuntimeError("a simulation is already running; stop it first")
        frozen = copy.deepcopy(diagram)
        worker = _Worker(frozen, settings or frozen.simulation, params, allow_write)
        self._worker = worker
        self._threads.add(worker)
        log.info("simulating %s", diagram.source)
        gcguard.watch(worker.thread)  # before start: the thread never collects garbage
        worker.thread.start()
        self._timer.start()
        self.started.emit()

    def stop(self) -> None:
        """Ask the run to end; its results so far arrive through `finished`."""
        if self._worker is not None:
            self._worker.stop_event.set()

    def is_running(self) -> bool:
        return self._worker is not None

    def wait(self, timeout_ms: int = -1) -> bool:
        """Block until every worker thread has ended (for shutdown and tests)."""
        deadline = None if timeout_ms < 0 else clock.perf_counter() + timeout_ms / 1000
        for worker in list(self._threads):
            left = None if deadline is None else max(0.0, deadline - clock.perf_counter())
            worker.thread.join(left)
            if worker.thread.is_alive():
                return False
            if worker is not self._worker:
                self._threads.discard(worker)
        gcguard.reap()
        return True

    # ----- in the GUI thread -----
    def _poll(self) -> None:
        """Deliver what the worker left: progress, the newest snapshot, then its outcome."""
        worker = self._worker
        if worker is None:
            self._timer.stop()
            return
        drivers = worker.take_drivers()
        if drivers is not None:
            self.compiled.emit(drivers)
        progress, snap, outcome = worker.take()
        if progress is not None:
            self.progressChanged.emit(progress)
        if snap is not None:
            self.snapshot.emit(snap)
        if outcome is None:
            return
        self._worker = None
        self._timer.stop()
        if not worker.thread.is_alive():
            self._threads.discard(worker)
        if outcome[0] == "done":
            results = outcome[1]
            if results.status == "finished":
                self.progressChanged.emit(1.0)
            log.info("simulation %s: %d rows, %d events", results.status, len(results.time),
                     len(results.events))
            self.finished.emit(results)
        else:
            log.info("simulation failed: %s", outcome[1])
            self.error = outcome[3] if len(outcome) > 3 else None  # where, for diagnostics
            self.failed.emit(outcome[1], outcome[2])

    def _shutdown(self) -> None:
        self.stop()
        self.wait(5000)
