"""Ctrl-C during `blocksim run`, pressed at a terminal, keeps what was computed and exits 130."""
import csv
import os
import pty
import signal
import subprocess
import sys
from pathlib import Path

from terminal_io import wait_for
from test_cli import LAG, write

ROOT = Path(__file__).resolve().parents[1]
LONG_RUN = {**LAG, "simulation": {"stop": 1e7, "output_interval": 1e3, "max_step": 0.5}}


def test_ctrl_c_keeps_the_partial_results_and_exits_130(tmp_path):
    path = write(tmp_path, LONG_RUN)
    out, events = tmp_path / "r.csv", tmp_path / "e.csv"
    terminal, child_end = pty.openpty()  # stderr a terminal: the progress line shows
    proc = subprocess.Popen([sys.executable, "-m", "blocksim", "run", str(path), "--out",
                             str(out), "--events", str(events)], cwd=ROOT,
                            stderr=child_end, stdout=subprocess.DEVNULL)
    os.close(child_end)
    try:
        shown = wait_for(terminal, b"simulating: t =", timeout=120)
        assert b"simulating: t =" in shown, shown
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
        shown += wait_for(terminal, b"interrupted at", timeout=5)
    finally:
        proc.kill()
        os.close(terminal)
    text = shown.decode(errors="replace")
    assert proc.returncode == 130, text
    assert "Traceback" not in text and "interrupted at t = " in text
    rows = list(csv.reader(out.open()))
    assert rows[0] == ["time", "y"] and len(rows) > 3
    times = [float(r[0]) for r in rows[1:]]
    assert times == sorted(times) and 0 < times[-1] < 1e7
    assert list(csv.reader(events.open()))[-1][2] == "interrupted"
