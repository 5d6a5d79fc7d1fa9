"""Sample-time colours in the editor: View > Sample Time Colors compiles the diagram after
edits, quietly, and hands the resolved rates to the canvas scene and the legend.

A view concern only: it reads the document, never changes it (nor its undo stack or its
dirty state). Edits are debounced (`DEBOUNCE_MS`), and a change the compiler would not see
(a move, a wire bend) compiles nothing (`sampletimes.skeleton`). A diagram that compiled
fast the last time (`INLINE_S`; a few hundred blocks) is compiled right away in the GUI
thread; a larger one in a worker thread that makes no Qt call and is polled, as the
simulation runner does, with garbage collection kept on the GUI thread (`gcguard`). A
compile error shows no colours and says why in the legend: colours from before the edit
could be wrong.
"""
from __future__ import annotations

import html
import logging
import threading
import time
from typing import Callable

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

from blocksim.compiler import compile_diagram
from blocksim.errors import BlocksimError, CompileError
from blocksim.gui.window import gcguard
from blocksim.gui.document.document import DiagramDocument
from blocksim.gui.canvas.sampletimes import SampleTimes, skeleton
from blocksim.diagram.model import Diagram

log = logging.getLogger(__name__)

DEBOUNCE_MS = 250  # quiet time after the last edit before compiling
POLL_MS = 25  # how often the GUI thread looks for a worker's result
INLINE_S = 0.05  # a compile that took less than this runs in the GUI thread the next time
INLINE_BLOCKS = 200  # before the first compile: up to this many blocks count as fast


def compile_rates(diagram: Diagram) -> tuple[SampleTimes | None, str, float]:
    """(rates, '', seconds) or (None, the problem, seconds); never raises."""
    started = time.perf_counter()
    try:
        rates, problem = SampleTimes.of_model(compile_diagram(diagram)), ""
    except CompileError as exc:  # the block at fault, not the file: that is the one open
        where = f"block '{exc.block}'" + (f" port '{exc.port}'" if exc.port else "")
        rates, problem = None, f"{where}: {exc.detail}" if exc.block else exc.detail
    except BlocksimError as exc:
        rates, problem = None, str(exc)
    except Exception as exc:  # a bug must not take the editor down
        log.exception("compiling %s for its sample times failed", diagram.source)
        rates, problem = None, f"internal error: {type(exc).__name__}: {exc}"
    return rates, problem, time.perf_counter() - started


class _Job:
    """One compile in a Python thread; the outcome is left in a field under a lock."""

    def __init__(self, diagram: Diagram):
        self.diagram = diagram
        self.lock = threading.Lock()
        self.outcome: tuple | None = None
        self.thread = threading.Thread(target=self._run, name="blocksim-rates", daemon=True)

    def _run(self) -> None:
        outcome = compile_rates(self.diagram)
        with self.lock:
            self.outcome = outcome

    def take(self) -> tuple | None:
        with self.lock:
            return self.outcome


class SampleTimeColors(QObject):
    """Keeps the rates of a document's diagram while colours are on; `updated` after each
    new result (rates, or none and a problem)."""

    updated = Signal()

    def __init__(self, doc: DiagramDocument, apply: Callable[[SampleTimes | None], None],
                 parent: QObject | None = None):
        super().__init__(parent)
        self.doc = doc
        self.apply = apply  # hands rates (None: no colours) to the view
        self.enabled = False
        self.rates: SampleTimes | None = None
        self.problem = ""
        self.last_cost: float | None = None  # seconds the last compile took
        self.compiles = 0  # how many compiles were made (for tests and logs)
        self._compiled: Diagram | None = None  # the skeleton the current result is of
        self._job: _Job | None = None
        self._job_of: Diagram | None = None
        self._again = False  # edits arrived while a worker compiled
        self._generation = 0  # counts loaded diagrams: a worker's result for an older one
        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(DEBOUNCE_MS)
        self._debounce.timeout.connect(self.refresh)
        self._poll = QTimer(self)
        self._poll.setInterval(POLL_MS)
        self._poll.timeout.connect(self._collect)
        doc.changed.connect(self._edited)
        doc.reset.connect(self._loaded)

    # ----- switching -----
    def set_enabled(self, on: bool) -> None:
        if on == self.enabled:
            return
        self.enabled = on
        if on:
            self.refresh()
        else:
            self._debounce.stop()
            self.apply(None)
            self.updated.emit()

    def busy(self) -> bool:
        """Whether a compile is due or under way."""
        return self._debounce.isActive() or self._job is not None

    # ----- following the document -----
    def _edited(self, _level: tuple) -> None:
        if self.enabled:
            self._debounce.start()

    def _loaded(self) -> None:
        self._generation += 1
        self._compiled = None
        self.rates, self.problem = None, ""
        self.last_cost = None
        if self.enabled:
            self.apply(None)  # the last diagram's colours are not this one's
            self.refresh()

    def refresh(self) -> None:
        """Compile now (in the GUI thread if that is fast, else in a worker)."""
        self._debounce.stop()
        if not self.enabled:
            return
        if self._job is not None:
            self._again = True
            return
        shape = skeleton(self.doc.diagram)
        if self._compiled is not None and shape == self._compiled:
            return  # nothing the compiler reads has changed
        if self._inline(shape):
            self._finish(shape, compile_rates(shape))
            return
        job = _Job(shape)
        self._job, self._job_of = job, (shape, self._generation)
        gcguard.watch(job.thread)  # before start: the thread never collects garbage
        job.thread.start()
        self._poll.start()

    def _inline(self, shape: Diagram) -> bool:
        if self.last_cost is not None:
            return self.last_cost < INLINE_S
        return _count(shape) <= INLINE_BLOCKS

    def _collect(self) -> None:
        job = self._job
        outcome = job.take() if job is not None else None
        if job is None or outcome is None:
            return
        self._poll.stop()
        self._job = None
        (shape, generation), self._job_of = self._job_of, None
        if self.enabled and generation == self._generation:
            self._finish(shape, outcome)
        elif self.enabled:  # compiled for a diagram closed since
            self._again = True
        if self._again:
            self._again = False
            self.refresh()

    def _finish(self, shape: Diagram, outcome: tuple) -> None:
        self.rates, self.problem, self.last_cost = outcome
        self._compiled = shape
        self.compiles += 1
        log.debug("sample times of %s: %s in %.0f ms", shape.source,
                  "compiled" if self.rates else self.problem, 1000 * self.last_cost)
        self.apply(self.rates)
        self.updated.emit()

    def wait(self, timeout_s: float = 10.0) -> bool:
        """Block until a worker's compile has ended and deliver it (for tests)."""
        if self._job is not None:
            self._job.thread.join(timeout_s)
            if self._job.thread.is_alive():
                return False
            self._collect()
        return True


def _count(diagram: Diagram) -> int:
    return sum(1 + (_count(b.subsystem) if b.subsystem is not None else 0)
               for b in diagram.blocks)


class SampleTimeLegend(QLabel):
    """One line over the canvas while colours are on: each rate's colour, name and period,
    or why there are none. Above the diagram, never over it; one line whatever it says, so
    the diagram does not jump (what does not fit is in the tooltip)."""

    HINT = ("Sample time colours (View > Sample Time Colors): blocks and wires are drawn in "
            "the colour of their resolved rate")

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWordWrap(False)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.setContentsMargins(8, 2, 8, 3)
        self.setStyleSheet("QLabel { background: #f7f7f7; border-bottom: 1px solid #dadce0; }")
        self.setToolTip(self.HINT)
        self.hide()

    def show_rates(self, rates: SampleTimes | None, problem: str = "",
                   pending: bool = False) -> None:
        if rates is not None:
            items = [f"<span style='color:{e.color}; font-size:14pt'>&#9632;</span>&nbsp;"
                     f"<b>{html.escape(e.name)}</b>&nbsp;{html.escape(e.text)}"
                     for e in rates.legend()]
            text = "Sample times: &nbsp; " + " &nbsp;&nbsp; ".join(items)
        elif problem:
            text = (f"Sample times: <span style='color:#b3261e'>none, the diagram does not "
                    f"compile: {html.escape(problem)}</span>")
        else:
            text = "Sample times: " + ("compiling…" if pending else "none")
        self.setText(text)
        self.setToolTip(f"{self.HINT}.\n\nThe diagram does not compile: {problem}" if problem
                        else self.HINT)
