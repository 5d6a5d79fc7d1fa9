"""SIGTERM and SIGHUP end a command as Ctrl-C does.

A batch scheduler ends a job that ran out of time with SIGTERM, a closed terminal sends
SIGHUP; by default either kills Python at once, and a run or sweep leaves nothing written.
While a command runs, both raise KeyboardInterrupt instead (its argument names the signal),
so every path that keeps the results of a Ctrl-C keeps them for these too. The exit status
is 128 + the signal's number, as a shell reports a process a signal ended: 130 Ctrl-C
(SIGINT), 143 SIGTERM, 129 SIGHUP. After SIGHUP from a terminal that has gone, what is
still printed goes to /dev/null rather than failing.
"""
from __future__ import annotations

import os
import signal
import stat
import threading
from types import FrameType
from typing import Any

_TERMINATING = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP")
                     if hasattr(signal, name))


class Interrupts:
    """A context in which SIGTERM and SIGHUP raise KeyboardInterrupt (unless `enabled` is
    false), remembering which signal came (None: Ctrl-C, Python's own KeyboardInterrupt)."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self.received: int | None = None
        self._saved: dict[int, Any] = {}

    def __enter__(self) -> "Interrupts":
        if self.enabled and threading.current_thread() is threading.main_thread():
            for number in _TERMINATING:
                self._saved[number] = signal.signal(number, self._raise)
        return self

    def __exit__(self, *exc: object) -> None:
        for number, handler in self._saved.items():
            signal.signal(number, handler)
        self._saved.clear()

    def _raise(self, signum: int, frame: FrameType | None) -> None:
        self.received = signum
        if signum == getattr(signal, "SIGHUP", None):
            _leave_terminal()
        raise KeyboardInterrupt(signal.Signals(signum).name)

    @property
    def name(self) -> str:
        """What interrupted the command, for its message: Ctrl-C, SIGTERM or SIGHUP."""
        return "Ctrl-C" if self.received is None else signal.Signals(self.received).name

    @property
    def exit_status(self) -> int:
        """128 + the signal's number (130 for Ctrl-C)."""
        return 128 + (self.received or signal.SIGINT)


def _leave_terminal() -> None:
    """After a hangup the terminal has usually gone, and writing to it fails (EIO): what
    the command still prints goes to /dev/null instead, so nothing stops the results being
    written on the way out. A terminal that hung up is a character device that is no
    longer `isatty`; one still there (SIGHUP sent by hand) keeps the messages."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        for fd in (1, 2):
            try:
                if stat.S_ISCHR(os.fstat(fd).st_mode) and not os.isatty(fd):
                    os.dup2(devnull, fd)
            except OSError:
                continue
    finally:
        os.close(devnull)


# The command running in this process (its message and exit status name the signal).
current = Interrupts(enabled=False)


def begin(enabled: bool) -> Interrupts:
    """The interrupts of a command about to run (`current` from now on); with `enabled`,
    SIGTERM and SIGHUP end it as Ctrl-C does, else they keep their default."""
    global current
    current = Interrupts(enabled)
    return current
