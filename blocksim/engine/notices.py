"""Notices: one-line INFO messages a user should see once, on the logger "blocksim.notice".

They say what the engine does differently from what was asked (the numba backend running a
diagram in Python, and why) or why it is quiet for a while (the one-time compilation of
the numba backend). The CLI shows this logger's INFO messages on the terminal; each
message is given once per process, so repeated runs (the editor) do not repeat it.
"""
from __future__ import annotations

import logging

LOGGER = "blocksim.notice"
log = logging.getLogger(LOGGER)
_said: set[str] = set()


def notice(message: str) -> None:
    """Log `message` at INFO on "blocksim.notice", unless it was said before."""
    if message not in _said:
        _said.add(message)
        log.info(message)


def forget() -> None:
    """Let every notice be said again (tests)."""
    _said.clear()
