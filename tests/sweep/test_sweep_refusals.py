"""`blocksim sweep` refuses in one line, before any run and within seconds: a scheduler
address where no Dask scheduler answers (silence, an HTTP server such as the dashboard,
a closed port, another protocol), a negative seed, a metric of an event kind its block
cannot log, and a --resume file with a bad row (left byte for byte as it was)."""
from __future__ import annotations

import contextlib
import socket
import threading
import time

import pytest

import blocksim
from blocksim.cli.main import main
from blocksim.errors import BlocksimError
from blocksim.sweeps import scheduler
from sweep_models import BALL

pytest.importorskip("distributed")


def sweep_cli(args, capsys):
    code = main(["sweep", str(BALL), *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def one_line(err: str) -> str:
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


# ----- --scheduler -----

@contextlib.contextmanager
def server(answer):
    """A local TCP server whose connections `answer(conn)` serves; yields its port."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    conns = []

    def serve():
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            conns.append(conn)
            threading.Thread(target=answer, args=(conn,), daemon=True).start()
    threading.Thread(target=serve, daemon=True).start()
    try:
        yield listener.getsockname()[1]
    finally:
        listener.close()
        for conn in conns:
            conn.close()


def silent(conn):
    with contextlib.suppress(OSError):
        while conn.recv(1 << 16):
            pass


def http(conn):
    """As a web server (the Dask dashboard): silent until a request, then a reply."""
    with contextlib.suppress(OSError):
        conn.recv(1 << 16)
        conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")


def ssh(conn):
    with contextlib.suppress(OSError):
        conn.sendall(b"SSH-2.0-OpenSSH_9.6\r\n")
        silent(conn)


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def short_timeout(monkeypatch):
    monkeypatch.setattr(scheduler, "CONNECT_SECONDS", 1.0)


@pytest.mark.parametrize("answer, message", [
    (silent, "no Dask scheduler answered within 1 s"),
    (http, "an HTTP server answers there (a Dask dashboard?), not a Dask scheduler"),
    (ssh, "what answers there does not speak Dask's protocol"),
])
def test_a_scheduler_address_where_no_scheduler_answers_is_one_line(
        answer, message, tmp_path, capsys, short_timeout):
    with server(answer) as port:
        started = time.monotonic()
        code, _, err = sweep_cli(["--grid", "mu=0.5:0.9:2", "--metric", "max:v", "--scheduler",
                                  f"tcp://127.0.0.1:{port}", "--out", tmp_path / "r.csv"],
                                 capsys)
    assert code == 2 and time.monotonic() - started < 5
    assert one_line(err) == f"blocksim: --scheduler tcp://127.0.0.1:{port}: {message}\n"
    assert not (tmp_path / "r.csv").exists()


def test_a_port_that_never_answers_times_out(tmp_path, capsys, short_timeout):
    """A listener that accepts nobody, its queue full: the connection itself never
    completes (as behind a firewall that drops packets)."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(0)
        port = listener.getsockname()[1]
        with socket.create_connection(("127.0.0.1", port)):  # fills the queue
            started = time.monotonic()
            code, _, err = sweep_cli(["--grid", "mu=0.5:0.9:2", "--metric", "max:v",
                                      "--scheduler", f"tcp://127.0.0.1:{port}",
                                      "--out", tmp_path / "r.csv"], capsys)
    assert code == 2 and time.monotonic() - started < 5
    assert one_line(err) == f"blocksim: --scheduler tcp://127.0.0.1:{port}: no answer within 1 s\n"


def test_a_closed_port_is_refused_at_once(tmp_path, capsys):
    port = closed_port()
    started = time.monotonic()
    code, _, err = sweep_cli(["--grid", "mu=0.5:0.9:2", "--metric", "max:v", "--scheduler",
                              f"tcp://127.0.0.1:{port}", "--out", tmp_path / "r.csv"], capsys)
    assert code == 2 and time.monotonic() - started < 3
    assert f"--scheduler tcp://127.0.0.1:{port}: nothing listens there (connection refused)" \
        in one_line(err)


def test_the_dashboard_port_gets_the_scheduler_port_suggested(monkeypatch, tmp_path, capsys,
                                                             short_timeout):
    with server(http) as port:
        monkeypatch.setattr(scheduler, "DASHBOARD_PORT", port)
        code, _, err = sweep_cli(["--grid", "mu=0.5:0.9:2", "--metric", "max:v",
                                  "--scheduler", f"tcp://localhost:{port}",
                                  "--out", tmp_path / "r.csv"], capsys)
    assert code == 2
    assert one_line(err).endswith(f"not a Dask scheduler ({port} is the Dask dashboard's "
                                  f"port; the scheduler's is 8786: --scheduler "
                                  f"tcp://localhost:8786)\n")


def test_a_malformed_address_is_one_line(tmp_path, capsys):
    code, _, err = sweep_cli(["--grid", "mu=0.5:0.9:2", "--metric", "max:v", "--scheduler",
                              "tcp://[::1", "--out", tmp_path / "r.csv"], capsys)
    assert code == 2 and "--scheduler tcp://[::1: not an address" in one_line(err)


# ----- --seed -----

@pytest.mark.parametrize("seed", ["-1", str(2**128)])
def test_a_seed_out_of_range_is_one_line(seed, tmp_path, capsys):
    code, _, err = sweep_cli(["--sample", "mu=uniform(0.5,0.9)", "-n", 2, "--seed", seed,
                              "--metric", "max:v", "--out", tmp_path / "r.csv"], capsys)
    assert code == 2
    assert one_line(err) == (f"blocksim: the seed must be a whole number from 0 to "
                             f"2**128 - 1, got {seed}\n")


@pytest.mark.parametrize("seed", [-5, 1.5, True, "7"])
def test_the_api_refuses_a_seed_that_is_not_a_whole_number_in_range(seed):
    with pytest.raises(BlocksimError, match="the seed must be a whole number"):
        blocksim.sweep(BALL, draws={"mu": "uniform(0.5,0.9)"}, n=2, seed=seed,
                       metrics=["max:v"], workers=1)


# ----- event kinds of metrics -----

@pytest.mark.parametrize("metric, wrong, close", [
    ("count:ball.Reset", "Reset", "reset"),
    ("time:ball.lower limt:1", "lower limt", "lower limit"),
])
def test_a_metric_of_a_kind_the_block_cannot_log_is_refused(metric, wrong, close, tmp_path,
                                                            capsys):
    code, _, err = sweep_cli(["--grid", "mu=0.5:0.9:2", "--metric", metric,
                              "--out", tmp_path / "r.csv"], capsys)
    assert code == 2 and not (tmp_path / "r.csv").exists()
    assert one_line(err) == (
        f"blocksim: {BALL}: metric '{metric}': block 'ball' (SecondOrderIntegrator) logs no "
        f"'{wrong}' events (did you mean '{close}'?); it logs 'state', 'lower limit', "
        f"'upper limit', 'leave limit', 'dx lower limit', 'dx upper limit', "
        f"'dx leave limit', 'reset'\n")


def test_a_block_that_logs_nothing_and_an_unknown_block_are_named():
    with pytest.raises(BlocksimError, match=r"block 'drag' \(Gain\) logs no 'state' events; "
                                            r"it logs no events$"):
        blocksim.sweep(BALL, grid={"mu": [0.5]}, metrics=["count:drag.state"], workers=1)
    with pytest.raises(BlocksimError, match=r"no block 'bal' \(did you mean 'ball'\?\)$"):
        blocksim.sweep(BALL, grid={"mu": [0.5]}, metrics=["count:bal.reset"], workers=1)


def test_the_kinds_a_block_can_log_are_counted(tmp_path):
    """`state` (the ball's located crossings) and a declared kind are accepted and count."""
    table = blocksim.sweep(BALL, grid={"mu": [0.5]}, stop=3, workers=1,
                           metrics=["count:ball.state", "count:ball.reset"])
    states, resets = table.rows[0][2:4]
    assert resets > 0 and states >= resets


# ----- --resume -----

def _done(tmp_path, capsys, suffix=".csv"):
    out = tmp_path / f"runs{suffix}"
    code, _, err = sweep_cli(["--grid", "mu=0.5:0.9:3", "--metric", "count:ball.reset",
                              "--stop-time", 3, "--workers", 1, "--out", out], capsys)
    assert code == 0, err
    return out


@pytest.mark.parametrize("row, message", [
    ("0.7,finished", "line 3 has 2 fields, not the 4 of this sweep's rows (mu, status, "
                     "count:ball.reset, message)"),
    ("0.7", "line 3 has 1 field, not the 4 of this sweep's rows"),
    ("0.7,finished,1.0,,extra", "line 3 has 5 fields, not the 4"),
    ("0.7,finished,,", "line 3: count:ball.reset is '', not a number"),
    ("x,finished,1.0,", "line 3: mu is 'x', not a number"),
    ("0.7,done,1.0,", "line 3: status is 'done', not one of finished, stopped, failed, "
                      "invalid, error"),
    ("0.75,finished,1.0,", "line 3 (mu=0.75) is not a run of this sweep"),
])
def test_a_bad_row_refuses_the_resume_file_whole_and_keeps_it(row, message, tmp_path,
                                                               capsys):
    out = _done(tmp_path, capsys)
    lines = out.read_text().splitlines()
    lines[2] = row
    out.write_text("\n".join(lines) + "\n")
    before = out.read_bytes()
    code, _, err = sweep_cli(["--grid", "mu=0.5:0.9:3", "--metric", "count:ball.reset",
                              "--stop-time", 3, "--workers", 1, "--out", out, "--resume"],
                             capsys)
    assert code == 2
    assert one_line(err).startswith(f"blocksim: --resume {out}: {message}")
    assert err.endswith("; nothing ran, the file is as it was\n")
    assert out.read_bytes() == before


def test_a_row_spanning_lines_is_named_by_its_first_line(tmp_path, capsys):
    out = _done(tmp_path, capsys)
    lines = out.read_text().splitlines()
    lines[1:3] = [lines[1] + '"two\nlines"', "0.7,finished"]
    out.write_text("\n".join(lines) + "\n")
    code, _, err = sweep_cli(["--grid", "mu=0.5:0.9:3", "--metric", "count:ball.reset",
                              "--stop-time", 3, "--workers", 1, "--out", out, "--resume"],
                             capsys)
    assert code == 2 and f"--resume {out}: line 4 has 2 fields" in one_line(err)


def test_a_parquet_row_with_a_missing_value_refuses_the_file(tmp_path, capsys):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    out = _done(tmp_path, capsys, ".parquet")
    data = pq.read_table(out).to_pydict()
    data["count:ball.reset"][1] = None
    pq.write_table(pa.table(data), out)
    before = out.read_bytes()
    code, _, err = sweep_cli(["--grid", "mu=0.5:0.9:3", "--metric", "count:ball.reset",
                              "--stop-time", 3, "--workers", 1, "--out", out, "--resume"],
                             capsys)
    assert code == 2
    assert f"--resume {out}: row 2: count:ball.reset is 'None', not a number" in one_line(err)
    assert out.read_bytes() == before


def test_an_empty_resume_file_holds_no_runs(tmp_path, capsys):
    out = tmp_path / "runs.csv"
    out.write_text("")
    code, _, err = sweep_cli(["--grid", "mu=0.5:0.9:2", "--metric", "count:ball.reset",
                              "--stop-time", 3, "--workers", 1, "--out", out, "--resume"],
                             capsys)
    assert code == 0, err
    assert len(out.read_text().splitlines()) == 3
