"""A guard against a binding bug that would otherwise crash the editor after a few minutes.

PySide6 6.12's stable-ABI (abi3) wheels return None from every void method without taking
a reference, which is right on Python 3.12+ (None is immortal there) but on Python 3.10 and
3.11 lowers None's reference count by one per call, until the interpreter aborts with
"Fatal Python error: none_dealloc". The editor makes thousands of such calls (setPos,
update, setSelected, ...). `protect_none` measures whether the running binding has the
bug and, only then, gives None so many references that it can never reach zero, which is
what Python 3.12 does by design.
"""
from __future__ import annotations

import ctypes
import logging
import sys

log = logging.getLogger(__name__)

_RESERVE = 1 << 40
_done = False


def none_leaks() -> bool:
    """Whether a void Qt call costs None a reference in this process."""
    if sys.version_info >= (3, 12):
        return False  # None is immortal: the count cannot reach zero
    from PySide6.QtCore import QObject

    probe = QObject()
    before = sys.getrefcount(None)
    for _ in range(8):
        probe.setObjectName("probe")
    return sys.getrefcount(None) < before - 4


def protect_none() -> bool:
    """Apply the guard if (and only if) the binding needs it; True if it was applied."""
    global _done
    if _done:
        return False
    _done = True
    if not none_leaks():
        return False
    count = ctypes.c_ssize_t.from_address(id(None))
    count.value += _RESERVE
    log.info("PySide6 void calls leak references to None on this Python; compensated")
    return True
