"""Routes Qt's own messages (platform plugins, fonts, painting) into Python logging, as logger
`blocksim.gui.qt`, so the terminal stays quiet unless the user asked for detail (-v).

Qt writes its warnings straight to stderr, many lines of them on some systems. Here they
become log records: Qt's debug and info messages at DEBUG and INFO, warnings at WARNING,
critical messages at ERROR, fatal ones at CRITICAL. Unless the root logger is at INFO or
below (the -v of `blocksim` and `blocksim-gui`), only errors are shown.

A fatal message ends the process right after the handler returns (Qt aborts), so
`fatal_hook` lets the editor's start-up explain it in one line first (see `display`).
"""
from __future__ import annotations

import collections
import contextlib
import logging
from typing import Callable, Iterator

log = logging.getLogger("blocksim.gui.qt")

RECENT = 20  # messages kept for explaining a fatal one

_recent: collections.deque[str] = collections.deque(maxlen=RECENT)
_fatal: Callable[[list[str]], None] | None = None


def install() -> None:
    """Send Qt's messages to logging from now on (again, if something replaced the handler)."""
    from PySide6.QtCore import qInstallMessageHandler

    if log.level == logging.NOTSET and logging.getLogger().getEffectiveLevel() > logging.INFO:
        log.setLevel(logging.ERROR)  # Qt's chatter only when asked for (-v)
    qInstallMessageHandler(_handle)


@contextlib.contextmanager
def fatal_hook(hook: Callable[[list[str]], None]) -> Iterator[None]:
    """Within the block, a fatal Qt message first calls `hook(messages)`, with the messages
    that led up to it (the fatal one last), e.g. to explain it and exit."""
    global _fatal
    previous, _fatal = _fatal, hook
    try:
        yield
    finally:
        _fatal = previous


def _handle(kind, context, message: str) -> None:
    from PySide6.QtCore import QtMsgType

    level = {QtMsgType.QtDebugMsg: logging.DEBUG, QtMsgType.QtInfoMsg: logging.INFO,
             QtMsgType.QtWarningMsg: logging.WARNING, QtMsgType.QtCriticalMsg: logging.ERROR,
             QtMsgType.QtFatalMsg: logging.CRITICAL}.get(kind, logging.WARNING)
    category = getattr(context, "category", None) or "default"
    text = message if category == "default" else f"{category}: {message}"
    _recent.append(text)
    if kind == QtMsgType.QtFatalMsg and _fatal is not None:
        _fatal(list(_recent))
    log.log(level, "%s", text.rstrip())
