"""Pausing Python's cyclic garbage collector during one allocation-heavy pass.

Loading, compiling and splitting the code of a large diagram allocate hundreds of thousands
of small containers that all stay alive (statements, sets, blocks). Each of those
allocations counts towards the collector's thresholds, so it keeps running and each
older-generation pass walks every live object: on 10,000 blocks the collections cost more
than the work (the first simulate's code analysis 0.75 s with them, 0.28 s without). The
passes make no reference cycles worth collecting early; anything they leave is collected
once the collector runs again.
"""
from __future__ import annotations

import gc
import threading
from contextlib import contextmanager
from functools import wraps
from typing import Callable, Iterator, TypeVar

F = TypeVar("F", bound=Callable)


@contextmanager
def gc_paused() -> Iterator[None]:
    """The collector off inside, back to how it was after (one that someone else turned
    off, such as the editor's collection guard, stays off).

    Only on the main thread: the collector's switch is global, and a worker thread that
    turned it off and on again could undo the editor's guard (`gui/window/gcguard.py`)
    meanwhile, letting a collection finalise Qt objects off the GUI thread (a crash seen
    in tests/gui/test_gc_guard.py)."""
    if not gc.isenabled() or threading.current_thread() is not threading.main_thread():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def without_gc(function: F) -> F:
    """`function` run inside `gc_paused()`."""
    @wraps(function)
    def paused(*args, **kwargs):
        with gc_paused():
            return function(*args, **kwargs)
    return paused  # type: ignore[return-value]
