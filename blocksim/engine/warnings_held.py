"""The warnings of a run: in its results at once, on the logger "blocksim.engine" once the
run has shown that it survives them.

A warning (a system found stiff, a logged signal that became NaN or infinite) often comes
just before a failure that says the same thing again: the stiffness budget fails the step
after the stiffness warning, a state becomes infinite a few steps after the signals it
feeds. Shown at once, the terminal would get the same news twice, the warning and then the
error. So a warning is held: it is logged when the run ends without failing, or as soon as
it has been held for HOLD_SECONDS of wall time (a long run shows its warnings while it goes
on, a second late at most); a failure supersedes the held warnings it repeats (`supersede`:
they are not logged, the error says it) and logs the others before it is raised. Every
warning is in the results' `warnings` (the failed run's partial results too) either way.
"""
from __future__ import annotations

import logging
import time

from blocksim.engine.steppers import StepFailure
from blocksim.engine.stiffness import Stiff

report = logging.getLogger("blocksim.engine")  # the warnings a run records in its results

HOLD_SECONDS = 1.0
# What a warning is about, so that a failure can say which of them it repeats.
STIFF = "stiff"  # the system is stiff (dopri5, dop853)
NONFINITE = "nonfinite"  # a value became NaN or infinite


class HeldWarnings:
    """The warnings of one run: `messages` (all, in order) and those not yet logged."""

    def __init__(self, source: str):
        self.source = source
        self.messages: list[str] = []
        self._held: list[tuple[float, str, str]] = []  # (held since, kind, message)

    @property
    def pending(self) -> bool:
        """Whether some warning waits to be logged (cheap: checked once per step)."""
        return bool(self._held)

    def add(self, message: str, kind: str) -> None:
        """Record a warning (once: a repeated message is ignored) and hold it."""
        if message not in self.messages:
            self.messages.append(message)
            self._held.append((time.perf_counter(), kind, message))

    def note(self, message: str) -> None:
        """Record a warning the user has been told already (a `notices.notice`): in
        `messages`, never logged here."""
        if message not in self.messages:
            self.messages.append(message)

    def release_due(self) -> None:
        """Log the warnings held for HOLD_SECONDS or more: the run goes on."""
        limit = time.perf_counter() - HOLD_SECONDS
        while self._held and self._held[0][0] <= limit:
            self._log(self._held.pop(0)[2])

    def release_all(self) -> None:
        """Log every held warning: the run ended without failing."""
        held, self._held = self._held, []
        for _, _, message in held:
            self._log(message)

    def supersede(self, kind: str | None) -> None:
        """The run fails with an error about `kind` (None: about something else): the held
        warnings of that kind are not logged (the error repeats them), the others are."""
        held, self._held = self._held, []
        for _, held_kind, message in held:
            if kind is None or held_kind != kind:
                self._log(message)

    def _log(self, message: str) -> None:
        report.warning("%s: %s", self.source, message)


def repeated_warning(failure: StepFailure) -> str | None:
    """The kind of the warnings a solver's failure repeats: the stiffness budget (`Stiff`)
    those of a stiff system, a state that became infinite or NaN those of signals that did."""
    if isinstance(failure, Stiff):
        return STIFF
    return NONFINITE if "infinite or NaN" in str(failure) else None
