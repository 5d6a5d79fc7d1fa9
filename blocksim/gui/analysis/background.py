"""One analysis computation (a trim, a linearization) in a worker thread, so the editor stays
responsive and can show that it is busy.

As in the sweep's runner (blocksim/gui/sweep/background.py), the worker makes no Qt call: it
leaves its outcome under a lock and a timer on the GUI thread picks it up; garbage collection
stays on the GUI thread while it lives (gcguard). The computations cannot be interrupted;
abandoning one (closing its dialog) drops its outcome when it arrives.
"""
from __future__ import annotations

import logging
import threading
from typing import Any, Callable

from PySide6.QtCore import QObject, QTimer, Signal

from blocksim.errors import BlocksimError
from blocksim.gui.window import gcguard

log = logging.getLogger(__name__)

POLL_INTERVAL_MS = 40


class AnalysisTask(QObject):
    """Runs `call()` in a thread; `finished(result)` or `failed(message)` on the GUI thread."""

    finished = Signal(object)
    failed = Signal(str)

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._lock = threading.Lock()
        self._outcome: tuple | None = None
        self._thread: threading.Thread | None = None
        self._timer = QTimer(self)
        self._timer.setInterval(POLL_INTERVAL_MS)
        self._timer.timeout.connect(self._poll)

    def start(self, call: Callable[[], Any], name: str = "blocksim-analysis") -> None:
        if self.is_running():
            raise RuntimeError("an analysis is already running")
        self._outcome = None
        self._thread = threading.Thread(target=self._run, args=(call,), name=name, daemon=True)
        gcguard.watch(self._thread)
        self._thread.start()
        self._timer.start()

    def is_running(self) -> bool:
        return self._thread is not None

    def wait(self, timeout_s: float = 30.0) -> bool:
        """Wait for the computation and deliver its outcome (tests); True if it ended."""
        thread = self._thread
        if thread is None:
            return True
        thread.join(timeout_s)
        self._poll()
        return not thread.is_alive()

    def _run(self, call: Callable[[], Any]) -> None:
        try:
            outcome: tuple = ("done", call())
        except BlocksimError as exc:  # bad input: the library's own one-line message
            outcome = ("error", str(exc))
        except ValueError as exc:  # an analysis point, option or model the core refuses
            outcome = ("error", str(exc))
        except Exception as exc:  # a bug: said in a message box and the log, not a traceback
            log.exception("the analysis failed")
            outcome = ("error", f"internal error: {type(exc).__name__}: {exc}")
        with self._lock:
            self._outcome = outcome

    def _poll(self) -> None:
        with self._lock:
            outcome, self._outcome = self._outcome, None
        if outcome is None:
            return
        self._timer.stop()
        self._thread = None
        gcguard.reap()
        if outcome[0] == "done":
            self.finished.emit(outcome[1])
        else:
            self.failed.emit(outcome[1])
