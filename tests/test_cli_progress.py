"""The progress line of `blocksim run` on a terminal: time reached, rate and time left, so
that a run of years (a smooth model to t = 1e12, which no budget can refuse before it runs)
says so within seconds; `-q` and a stderr that is not a terminal show none."""
import io
import os
import pty
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from terminal_io import wait_for
from test_cli import write

from blocksim.cli import progress as progress_mod
from blocksim.cli.progress import RunProgress, duration

ROOT = Path(__file__).resolve().parents[1]
# A sine integrated to t = 1e12: the adaptive steps follow the sine (a few per second of
# simulated time), so the run would take years; nothing in its settings forces them.
YEARS = {"format": "blocksim", "version": 1, "simulation": {"stop": 1e12},
         "blocks": [{"id": "s", "type": "Sine"}, {"id": "i", "type": "Integrator"},
                    {"id": "y", "type": "Output"}],
         "wires": [{"src": "s.y", "dst": "i.u"}, {"src": "i.y", "dst": "y.u"}]}


class Terminal(io.StringIO):
    def isatty(self):
        return True


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_the_line_says_where_how_fast_and_how_long_still(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(progress_mod.time, "monotonic", clock)
    stream = Terminal()
    bar = RunProgress(0.0, 1e12, stream=stream)
    clock.now += 0.6
    bar(0.0)  # the first sample: no rate yet
    assert stream.getvalue() == "\rsimulating: t = 0 of 1e+12 (  0.0 %)"
    for k in range(1, 31):  # 1000 s of simulated time per second of wall time
        clock.now += 0.5
        bar(500.0 * k)
    shown = stream.getvalue().split("\r")[-1]
    assert shown == ("simulating: t = 15000 of 1e+12 (  0.0 %), 1000x real time, about "
                     "31.7 years left")
    bar.done()
    assert stream.getvalue().endswith("\r" + " " * len(shown) + "\r")


def test_the_rate_follows_the_last_ten_seconds(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(progress_mod.time, "monotonic", clock)
    bar = RunProgress(0.0, 1000.0, stream=Terminal())
    t = 0.0
    for k in range(40):  # 20 s slow (a transient), then 20 s at 10x real time
        clock.now += 0.5
        t += 0.05 if k < 20 else 5.0
        bar(t)
    assert bar.rate(t, clock.now) == pytest.approx(10.0)


@pytest.mark.parametrize("quiet, stream", [(True, Terminal()), (False, io.StringIO())])
def test_no_line_with_q_or_without_a_terminal(quiet, stream):
    bar = RunProgress(0.0, 1.0, quiet=quiet, stream=stream)
    assert not bar.enabled
    bar(0.5)
    bar.done()
    assert stream.getvalue() == ""


@pytest.mark.parametrize("seconds, text", [(42, "42 s"), (600, "10 min"), (5.5 * 3600, "5.5 h"),
                                           (23 * 86400, "23 days"),
                                           (1e9, "31.7 years")])
def test_durations_for_a_person(seconds, text):
    assert duration(seconds) == text


def _at_a_terminal(path, *args, wait_for_text=None, seconds=None):
    """Run `blocksim run path args` with stderr a terminal until `wait_for_text` shows
    (or for `seconds`), then Ctrl-C: (exit status, what the terminal showed)."""
    terminal, child_end = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "blocksim", "run", str(path), *args],
                            cwd=ROOT, stderr=child_end, stdout=subprocess.DEVNULL)
    os.close(child_end)
    try:
        if wait_for_text is not None:
            shown = wait_for(terminal, wait_for_text, timeout=60)
        else:
            shown = wait_for(terminal, b"\0never", timeout=seconds)
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)
        shown += wait_for(terminal, b"interrupted", timeout=5)
    finally:
        proc.kill()
        os.close(terminal)
    return proc.returncode, shown.decode(errors="replace")


def test_a_run_of_years_says_so_at_a_terminal_and_ctrl_c_ends_it(tmp_path):
    code, shown = _at_a_terminal(write(tmp_path, YEARS), "--out", tmp_path / "r.csv",
                                 wait_for_text=b"years left")
    assert "years left" in shown and "x real time" in shown, shown
    assert code == 130 and "Traceback" not in shown
    last = [line for line in shown.replace("\r", "\n").splitlines() if line.strip()][-1]
    assert last.startswith("blocksim: ") and "interrupted at t = " in last


def test_q_silences_the_line_at_a_terminal(tmp_path):
    code, shown = _at_a_terminal(write(tmp_path, YEARS), "-q", "--out", tmp_path / "r.csv",
                                 seconds=2.5)
    assert code == 130 and "simulating" not in shown, shown
