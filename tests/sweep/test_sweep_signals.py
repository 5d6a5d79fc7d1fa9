"""SIGTERM (a batch scheduler's timeout, `timeout`) and SIGHUP (a closed terminal) end a
sweep as Ctrl-C does: sent to the whole process group, workers included, or to the sweep's
process alone, the finished runs are in --out and the exit status is 128 + the signal. An
interrupt while --out is being written lets the file be finished: no computed row is lost."""
from __future__ import annotations

import csv
import os
import pty
import signal
import subprocess
import sys
import time

import pytest

from blocksim.cli.main import main
from sweep_models import BALL, ROOT
from terminal_io import wait_for

RUNS = 400  # enough that the signal, sent once two rows are in the file, comes before the end


def read(path):
    with open(path, newline="") as fh:
        return list(csv.reader(fh))


def _sweep_until_rows(out, workers):
    """A sweep in a session of its own, once at least two rows are in `out`."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "blocksim", "sweep", str(BALL), "--grid", f"mu=0.3:0.9:{RUNS}",
         "--metric", "count:ball.reset", "--workers", str(workers), "--batch-size", "2",
         "--out", str(out)], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        text=True, start_new_session=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if out.exists() and len(read(out)) >= 3:
            return proc
        time.sleep(0.05)
    proc.kill()
    pytest.fail(f"the sweep wrote no rows: {proc.communicate()[1]}")


@pytest.mark.parametrize("sig, workers, group", [
    (signal.SIGTERM, 2, True),   # a batch scheduler, `timeout`: every process of the group
    (signal.SIGHUP, 2, True),    # a closed terminal: its foreground group
    (signal.SIGTERM, 2, False),  # `kill PID`: the sweep's process only
    (signal.SIGTERM, 1, False),  # the runs in the sweep's own process
])
def test_a_signal_keeps_the_finished_runs_and_exits_128_plus_it(tmp_path, sig, workers, group):
    out = tmp_path / "runs.csv"
    proc = _sweep_until_rows(out, workers)
    try:
        if group:
            os.killpg(proc.pid, sig)
        else:
            proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 128 + sig, err
    rows = read(out)
    done = len(rows) - 1
    assert err.splitlines() == [
        f"blocksim: {BALL}: sweep interrupted by {signal.Signals(sig).name} after {done} of "
        f"{RUNS} runs; the finished runs are in {out} (--resume carries on)"], err
    assert 2 <= done < RUNS and all(r[1] == "finished" for r in rows[1:])


def test_a_signal_to_one_worker_stops_the_sweep_with_the_finished_runs(tmp_path):
    out = tmp_path / "runs.csv"
    proc = _sweep_until_rows(out, 2)
    try:
        children = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True,
                                  text=True).stdout.split()
        commands = {pid: open(f"/proc/{pid}/cmdline").read() for pid in children}
        workers = [int(pid) for pid, command in commands.items()  # forked: the same command
                   if "blocksim" in command and "resource_tracker" not in command]
        assert workers, children
        os.kill(workers[0], signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    done = len(read(out)) - 1
    assert f"sweep interrupted after {done} of {RUNS} runs" in err and "Traceback" not in err
    assert 2 <= done < RUNS


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupt_while_out_is_written_keeps_every_row(tmp_path, capsys, monkeypatch, sig):
    """The signal comes inside the write of --out (just before its data is synced), after
    the last run: the file is still written whole."""
    real_fsync, sent = os.fsync, []

    def fsync_with_interrupt(fd):
        if not sent:
            sent.append(sig)
            os.kill(os.getpid(), sig)
        real_fsync(fd)
    monkeypatch.setattr(os, "fsync", fsync_with_interrupt)
    out = tmp_path / "runs.csv"
    code = main(["sweep", str(BALL), "--grid", "mu=0.5:0.9:3", "--metric", "count:ball.reset",
                 "--stop-time", "3", "--workers", "1", "--out", str(out)])
    err = capsys.readouterr().err
    assert sent and code == 128 + sig, err
    assert [r[1] for r in read(out)[1:]] == ["finished"] * 3
    assert "sweep interrupted" in err and "after 3 of 3 runs" in err and "Traceback" not in err


def test_a_closed_terminal_ends_the_sweep_with_the_finished_runs(tmp_path):
    """The terminal showing the progress bar goes (writing to it fails from then on) and
    SIGHUP comes to the group: the finished runs are written and the exit status is 129."""
    out = tmp_path / "runs.csv"
    terminal, child_end = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "blocksim", "sweep", str(BALL), "--grid", f"mu=0.3:0.9:{RUNS}",
         "--metric", "count:ball.reset", "--workers", "2", "--batch-size", "2",
         "--out", str(out)], cwd=ROOT, stdout=child_end, stderr=child_end,
        start_new_session=True)
    os.close(child_end)
    try:
        assert b"ETA" in wait_for(terminal, b"ETA", timeout=120)
        os.close(terminal)
        try:
            proc.wait(timeout=0.3)  # a progress update or two meet the closed terminal
        except subprocess.TimeoutExpired:
            pass
        os.killpg(proc.pid, signal.SIGHUP)
        proc.wait(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 129
    rows = read(out)
    assert 1 <= len(rows) - 1 < RUNS and all(r[1] == "finished" for r in rows[1:])
