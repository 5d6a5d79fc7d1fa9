"""A file being written is finished before an interrupt takes effect.

Ctrl-C (and SIGTERM or SIGHUP, which the command line turns into the same
KeyboardInterrupt: blocksim.cli.signals) arriving while results are written would abandon
the write: `atomic_write` removes its temporary file, so the computed rows are lost with it.
Inside `interrupts_deferred()` such a signal is only noted; when the block ends, its handler
runs, and the KeyboardInterrupt comes then, with the file complete. A signal whose handler
is not a Python function (SIGTERM left to kill the process) is left alone.
"""
from __future__ import annotations

import contextlib
import signal
import threading
from typing import Any, Iterator

_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP")
                 if hasattr(signal, name))


@contextlib.contextmanager
def interrupts_deferred() -> Iterator[None]:
    """Hold back Ctrl-C (and signals handled in Python) until the block has run; then
    the first one held is delivered (raising KeyboardInterrupt, as it would have)."""
    if threading.current_thread() is not threading.main_thread():
        yield  # (handlers can only be set in the main thread, where signals arrive)
        return
    held: list[tuple[int, Any]] = []
    saved = {}
    for number in _SIGNALS:
        handler = signal.getsignal(number)
        if callable(handler):
            saved[number] = handler
            signal.signal(number, lambda signum, frame: held.append((signum, frame)))
    try:
        yield
    finally:
        for number, handler in saved.items():
            signal.signal(number, handler)
    if held:
        signum, frame = held[0]
        saved[signum](signum, frame)
