"""Suite-wide safety net: no test may hang CI.

pytest-timeout (pyproject.toml, 300 s) fails a test stuck in Python code, with every
thread's stack. A test stuck where no Python code runs any more (two threads deadlocked in
native code, one of them holding the GIL) cannot be reached by it: faulthandler's watchdog
is a C thread that needs no GIL, so it prints every thread's stack and ends the process.
"""
import faulthandler
import signal
import sys

import pytest

BACKSTOP_S = 420  # after pytest-timeout's 300 s, well inside 10 minutes


def pytest_configure(config):
    """Ctrl-C as a user has it: a suite started in the background of a shell without job
    control (`cmd &`, nohup) inherits SIGINT ignored, and so would every blocksim it starts;
    the tests of Ctrl-C (exit 130, partial results kept) then wait for nothing."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def _hang_backstop():
    faulthandler.dump_traceback_later(BACKSTOP_S, exit=True, file=sys.stderr)
    yield
    faulthandler.cancel_dump_traceback_later()
