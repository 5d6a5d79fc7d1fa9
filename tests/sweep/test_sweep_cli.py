"""`blocksim sweep`: output columns exactly as specified, the same file from 1 and 2
workers, exit codes as for `blocksim run`, and Ctrl-C then --resume in a real process."""
import csv
import os
import pty
import signal
import subprocess
import sys
import time

import pytest

import blocksim
from blocksim.cli.main import main
from blocksim.sweeps.plan import make_plan
from sweep_models import BALL, ROOT, log_diagram
from terminal_io import wait_for


def sweep_cli(args, capsys):
    code = main(["sweep", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def read(path):
    with open(path, newline="") as fh:
        return list(csv.reader(fh))


def test_grid_columns_are_the_parameters_status_metrics_then_message(tmp_path, capsys):
    out = tmp_path / "runs.csv"
    code, _, err = sweep_cli([BALL, "--grid", "mu=0.5:0.9:3", "--grid", "x0=5:10:2",
                              "--metric", "count:ball.reset", "--metric",
                              "time:ball.lower limit:1", "--metric", "at:x:0.5",
                              "--set", "beta=0", "--stop-time", "5", "--workers", "1",
                              "--out", out], capsys)
    assert code == 0, err
    rows = read(out)
    assert rows[0] == ["mu", "x0", "status", "count:ball.reset", "time:ball.lower limit:1",
                       "at:x:0.5", "message"]
    assert [(float(r[0]), float(r[1])) for r in rows[1:]] == [
        (0.5, 5), (0.5, 10), (0.7, 5), (0.7, 10), (0.9, 5), (0.9, 10)]
    assert all(r[2] == "finished" and r[6] == "" for r in rows[1:])
    table = blocksim.sweep(BALL, grid={"mu": [0.5, 0.7, 0.9], "x0": [5, 10]}, stop=5,
                           params={"beta": 0}, metrics=rows[0][3:6], workers=1)
    assert [r[3:6] for r in rows[1:]] == [[repr(v) for v in r[3:6]]
                                          for r in table.rows.values()]  # nan as 'nan'
    assert f"wrote {out} (6 rows)" in err and "6 runs: 6 finished" in err


def test_monte_carlo_file_is_the_same_from_one_and_two_workers(tmp_path, capsys):
    files = []
    for workers in (1, 2):
        files.append(tmp_path / f"mc{workers}.csv")
        code, _, err = sweep_cli([BALL, "--sample", "mu=uniform(0.5,0.9)", "--sample",
                                  "v0=normal(0,1)", "-n", 6, "--seed", 42, "--metric",
                                  "count:ball.reset", "--metric", "max:v", "--stop-time", 4,
                                  "--workers", workers, "--batch-size", 2, "--out",
                                  files[-1]], capsys)
        assert code == 0, err
    assert files[0].read_bytes() == files[1].read_bytes()
    rows = read(files[0])
    assert rows[0] == ["mu", "v0", "status", "count:ball.reset", "max:v", "message"]
    plan = make_plan(draws={"mu": "uniform(0.5,0.9)", "v0": "normal(0,1)"}, n=6, seed=42)
    assert [(float(r[0]), float(r[1])) for r in rows[1:]] == list(plan.rows)


def test_failed_runs_exit_1_and_bad_input_exits_2_in_one_line(tmp_path, capsys):
    diagram = tmp_path / "log.json"
    log_diagram().save(diagram, layout=False)
    out = tmp_path / "runs.csv"
    code, _, err = sweep_cli([diagram, "--grid", "c=0.5:2:2", "--metric", "final:y",
                              "--workers", "1", "--out", out], capsys)
    assert code == 1, err
    assert [r[1] for r in read(out)[1:]] == ["failed", "finished"]
    assert "2 runs: 1 failed, 1 finished" in err
    for args, message in [
            (["--metric", "final:z"], "metric 'final:z': no logged signal 'z' (logged: y)"),
            (["--sample", "c=uniform(1,2)"], "--sample needs -n N"),
            (["--grid", "c=1:2"], "grid 'c': expected START:STOP:N"),
            (["--grid", "q=1:2:2"], "cannot sweep unknown parameter 'q'; known: c")]:
        code, _, err = sweep_cli([diagram, *args, "--out", out], capsys)
        assert code == 2 and err.count("\n") == 1 and message in err, err
    code, _, err = sweep_cli([diagram, "--grid", "c=1:2:2", "--out", diagram], capsys)
    assert code == 2 and "--out" in err, err


# Enough runs that Ctrl-C, sent once two rows are in the file, arrives before the end.
RUNS = 120


@pytest.mark.parametrize("workers", [1, 2])
def test_ctrl_c_keeps_the_finished_runs_and_resume_runs_the_rest(tmp_path, workers):
    out = tmp_path / "runs.csv"
    args = [sys.executable, "-m", "blocksim", "sweep", str(BALL), "--grid", f"mu=0.3:0.9:{RUNS}",
            "--metric", "count:ball.reset", "--metric", "time:ball.lower limit:1",
            "--workers", str(workers), "--batch-size", "2", "--out", str(out)]
    terminal, child_end = pty.openpty()  # stderr a terminal: the progress bar shows
    proc = subprocess.Popen(args, cwd=ROOT, stderr=child_end, stdout=subprocess.DEVNULL)
    os.close(child_end)
    try:
        shown = wait_for(terminal, b"ETA", timeout=120)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and (not out.exists() or len(read(out)) < 3):
            shown += wait_for(terminal, b"\0", timeout=0.2)
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
        shown += wait_for(terminal, b"--resume", timeout=5)
    finally:
        proc.kill()
        os.close(terminal)
    text = shown.decode(errors="replace")
    assert "sweep: [" in text and "ETA" in text, text
    assert proc.returncode == 130, text
    assert "Traceback" not in text and "sweep interrupted after" in text, text
    kept = read(out)
    done = len(kept) - 1
    assert 2 <= done < RUNS and f"interrupted after {done} of {RUNS} runs" in text, text
    assert all(r[1] == "finished" for r in kept[1:])
    resumed = subprocess.run(args + ["--resume"], cwd=ROOT, capture_output=True, text=True,
                             timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{RUNS} runs ({done} found in {out})" in resumed.stderr
    rows = read(out)
    assert len(rows) == RUNS + 1 and all(r[1] == "finished" for r in rows[1:])
    assert set(map(tuple, kept[1:])) <= set(map(tuple, rows[1:]))
    # the rows are those of an uninterrupted sweep
    table = blocksim.sweep(BALL, grid={"mu": f"0.3:0.9:{RUNS}"}, workers=2,
                           metrics=["count:ball.reset", "time:ball.lower limit:1"])
    assert [r[:4] for r in rows[1:]] == [[repr(row[0]), "finished", repr(row[2]), repr(row[3])]
                                         for _, row in sorted(table.rows.items())]
