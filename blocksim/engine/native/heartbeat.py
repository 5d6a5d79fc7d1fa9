"""Say what numba is compiling while it compiles, instead of a silent terminal.

The engine's compiled loop is compiled once per machine (about 30 s on two idle cores, up
to two minutes on busy ones), a model's functions once per structure. Within `compiling`,
a timer thread logs a line on the notice logger every HEARTBEAT_SECONDS: the time so far,
how many of the engine's functions are done and which one numba works on (numba's compile
events name them; numba's own helpers are left out). The thread does run: numba's
compiler is Python, and LLVM's optimisation, where the rest of the time goes, releases the
GIL. A compilation shorter than one beat says nothing; `-q` (the notice logger above INFO)
silences the lines, and no thread starts then. numba is imported only inside `compiling`.
"""
from __future__ import annotations

import contextlib
import logging
import threading
import time
from typing import Any, Iterator

from blocksim.engine import notices

HEARTBEAT_SECONDS = 10.0
_OWN = ("blocksim.", "blocksim_")  # the engine's modules and a model's generated ones


class _CompileWatch:
    """What numba compiles now (a stack: a function's callees compile within it), from
    numba's "numba:compile" events, which come only for functions not in its cache."""

    def __init__(self):
        self.stack: list[str] = []
        self.done = 0

    def on_start(self, event: Any) -> None:
        self.stack.append(_name(event.data.get("dispatcher")))

    def on_end(self, event: Any) -> None:
        name = self.stack.pop() if self.stack else ""
        if name:
            self.done += 1

    def now(self) -> str:
        """The innermost of the engine's (or the model's) functions numba works on (once
        its callees are done, the outer one's machine code: most of the time)."""
        own = [name for name in self.stack if name]
        return own[-1] if own else ""


def _name(dispatcher: Any) -> str:
    """'settle.settle' for one of blocksim's functions, '' for numba's own helpers."""
    func = getattr(dispatcher, "py_func", None)
    module = getattr(func, "__module__", "") or ""
    if not module.startswith(_OWN):
        return ""
    return f"{module.rsplit('.', 1)[-1]}.{getattr(func, '__qualname__', '?')}"


def _listener(watch: _CompileWatch) -> Any:
    from numba.core import event

    class Listener(event.Listener):
        def on_start(self, e):
            watch.on_start(e)

        def on_end(self, e):
            watch.on_end(e)
    return Listener()


@contextlib.contextmanager
def compiling(what: str, interval: float = HEARTBEAT_SECONDS) -> Iterator[None]:
    """Within: a notice every `interval` seconds, "<what>: 20 s so far, 9 functions done,
    now settle.settle" (see the module docstring); nothing if notices are not shown."""
    if not notices.log.isEnabledFor(logging.INFO):
        yield
        return
    from numba.core import event

    watch = _CompileWatch()
    listener = _listener(watch)
    event.register("numba:compile", listener)
    stop = threading.Event()
    started = time.monotonic()

    def beat() -> None:
        while not stop.wait(interval):
            parts = [f"{time.monotonic() - started:.0f} s so far"]
            if watch.done:
                parts.append(f"{watch.done} function{'s' if watch.done > 1 else ''} done")
            now = watch.now()
            if now:
                parts.append(f"now {now}")
            notices.log.info("%s: %s", what, ", ".join(parts))

    thread = threading.Thread(target=beat, name="blocksim-compile-heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        event.unregister("numba:compile", listener)
