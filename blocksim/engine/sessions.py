"""Blocks that hold something outside the engine's arrays for the length of a run (an FMU
instance, `BlockType.has_run_session`): opened before the run's first evaluation, closed
when it ends however it ends, and asked after each accepted step whether they want an
event there (an FMU's step event).

A diagram with such a block runs on the Python path: its calls are Python (and, for an
FMU, C calls through ctypes) that the numba backend cannot compile (`Simulator` says so
once, as for any other reason to run in Python).
"""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Callable

from blocksim.errors import CompileError, DiagramFileError

if TYPE_CHECKING:
    from blocksim.compiler.compiled import CompiledModel, RunSession
    from blocksim.diagram.model import SimulationSettings

log = logging.getLogger(__name__)


class OpenSessions:
    """The sessions of one run: opened in order, closed in reverse."""

    def __init__(self, model: "CompiledModel"):
        self.model = model
        self.opened: list["RunSession"] = []
        self.hooks: list[tuple[Callable[[float, list[float]], bool], int, int]] = []

    def open(self, settings: "SimulationSettings", x, m) -> None:
        """Open every session (CompileError naming the block if one cannot start); on any
        failure, Ctrl-C included, those already open are closed again."""
        model = self.model
        try:
            for session in model.run_sessions:
                block = model.block_ids[session.block]
                try:
                    session.impl.start_run(session.p, settings.start, settings.stop,
                                           settings.rtol,
                                           x[session.states.start:session.states.stop],
                                           m[session.discrete.start:session.discrete.stop])
                except CompileError as exc:
                    raise CompileError(exc.detail, block=exc.block or block,
                                       file=model.source) from None
                except DiagramFileError as exc:  # (an FMU not trusted: its own type kept)
                    raise type(exc)(exc.detail, file=model.source,
                                    block=exc.block or block) from None
                self.opened.append(session)
                hook = session.impl.step_hook(session.p)
                if hook is not None:
                    self.hooks.append((hook, session.states.start, session.states.stop))
        except BaseException:
            self.close()
            raise

    def step_done(self, t: float, x) -> bool:
        """After an accepted step to (t, x), the outputs evaluated there: whether a
        session asks for an event there."""
        asked = False
        for hook, a, b in self.hooks:
            asked = hook(t, x[a:b].tolist()) or asked
        return asked

    def close(self) -> None:
        while self.opened:
            session = self.opened.pop()
            try:
                session.impl.end_run(session.p)
            except Exception:  # closing must not hide the run's own outcome
                log.warning("%s: block '%s' did not close cleanly", self.model.source,
                            self.model.block_ids[session.block], exc_info=True)
        self.hooks = []
