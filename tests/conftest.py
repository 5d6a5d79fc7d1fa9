"""Suite-wide safety net: no test may hang CI.

pytest-timeout (pyproject.toml, 300 s) fails a test stuck in Python code, with every
thread's stack. A test stuck where no Python code runs any more (two threads deadlocked in
native code, one of them holding the GIL) cannot be reached by it: faulthandler's watchdog
is a C thread that needs no GIL, so it prints every thread's stack and ends the process.
"""
import faulthandler
import sys

import pytest

BACKSTOP_S = 420  # after pytest-timeout's 300 s, well inside 10 minutes


@pytest.fixture(autouse=True)
def _hang_backstop():
    faulthandler.dump_traceback_later(BACKSTOP_S, exit=True, file=sys.stderr)
    yield
    faulthandler.cancel_dump_traceback_later()
