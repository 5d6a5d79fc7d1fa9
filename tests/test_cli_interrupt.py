"""Ctrl-C during `blocksim run`, pressed at a terminal, keeps what was computed and exits 130;
SIGTERM (a batch scheduler's) and SIGHUP (a closed terminal's) do the same, exiting 143 and
129; an interrupt while the results are being written lets the files be finished first."""
import csv
import os
import pty
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from blocksim.cli import main as cli
from blocksim.cli.main import main
from terminal_io import wait_for
from test_cli import LAG, write

ROOT = Path(__file__).resolve().parents[1]
LONG_RUN = {**LAG, "simulation": {"stop": 1e7, "output_interval": 1e3, "max_step": 0.5}}


@pytest.mark.parametrize("sig, said", [(signal.SIGINT, "(Ctrl-C)"),
                                        (signal.SIGTERM, "(SIGTERM)"),
                                        (signal.SIGHUP, "(SIGHUP)")])
def test_an_interrupt_keeps_the_partial_results_and_exits_128_plus_the_signal(tmp_path, sig,
                                                                              said):
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
        proc.send_signal(sig)
        proc.wait(timeout=60)
        shown += wait_for(terminal, b"interrupted at", timeout=5)
    finally:
        proc.kill()
        os.close(terminal)
    text = shown.decode(errors="replace")
    assert proc.returncode == 128 + sig, text
    assert "Traceback" not in text and "interrupted at t = " in text and said in text
    rows = list(csv.reader(out.open()))
    assert rows[0] == ["time", "y"] and len(rows) > 3
    times = [float(r[0]) for r in rows[1:]]
    assert times == sorted(times) and 0 < times[-1] < 1e7
    assert list(csv.reader(events.open()))[-1][2] == "interrupted"


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupt_while_the_results_are_written_lets_them_be_finished(tmp_path, capsys,
                                                                          monkeypatch, sig):
    """The signal comes inside the write of --out (just before its data is synced): the
    files are still written whole, then the command ends as interrupted."""
    path = write(tmp_path, LAG)
    expected = tmp_path / "expected.csv"
    assert main(["run", str(path), "--out", str(expected), "-q"]) == 0
    real_fsync, sent = os.fsync, []

    def fsync_with_interrupt(fd):
        if not sent:
            sent.append(sig)
            os.kill(os.getpid(), sig)
        real_fsync(fd)
    monkeypatch.setattr(os, "fsync", fsync_with_interrupt)
    out, events = tmp_path / "r.csv", tmp_path / "e.csv"
    code = main(["run", str(path), "--out", str(out), "--events", str(events)])
    err = capsys.readouterr().err
    assert sent and code == 128 + sig, err
    assert out.read_bytes() == expected.read_bytes() and events.exists()
    assert "Traceback" not in err and err.splitlines()[-1].startswith("blocksim: interrupted")


def test_a_closed_terminal_ends_the_run_with_its_results_written(tmp_path):
    """The terminal goes (writing to it fails from then on) and SIGHUP comes: the progress
    line and the last messages must not stop the results being written; exit 129."""
    path = write(tmp_path, LONG_RUN)
    out, events = tmp_path / "r.csv", tmp_path / "e.csv"
    terminal, child_end = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "blocksim", "run", str(path), "--out",
                             str(out), "--events", str(events)], cwd=ROOT,
                            stdout=child_end, stderr=child_end)
    os.close(child_end)
    try:
        assert b"simulating: t =" in wait_for(terminal, b"simulating: t =", timeout=120)
        os.close(terminal)  # the terminal window is closed
        try:
            proc.wait(timeout=0.3)  # a progress line or two meet the closed terminal
        except subprocess.TimeoutExpired:
            pass
        proc.send_signal(signal.SIGHUP)
        proc.wait(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 129
    rows = list(csv.reader(out.open()))
    assert rows[0] == ["time", "y"] and len(rows) > 3
    assert list(csv.reader(events.open()))[-1][2] == "interrupted"


def test_only_the_commands_that_compute_results_take_over_sigterm_and_sighup():
    """run and sweep end on SIGTERM/SIGHUP as on Ctrl-C; the others (the editor: Qt's loop
    would swallow the KeyboardInterrupt) keep the default, and every one gets it back."""
    seen = {}

    def spy(args):
        seen[args.command] = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGHUP)
        return 0
    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGHUP)
    for argv in (["run", "d"], ["sweep", "d", "--out", "o.csv"], ["validate", "d"], ["gui"]):
        args = cli.build_parser().parse_args(argv)
        args.func = spy
        assert cli._run(args) == 0
        assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGHUP)) == before
    assert all(callable(h) and h not in before for h in seen["run"] + seen["sweep"])
    assert seen["validate"] == seen["gui"] == before
