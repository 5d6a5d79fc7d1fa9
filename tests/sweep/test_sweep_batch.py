"""The numba backend's batch loop (blocksim.engine.native.batch): many runs per compiled call
give bit for bit the rows, results and statuses of the per-run path, hand back what needs
Python, and stop between compiled calls when the sweep stops."""
import csv
import math
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import blocksim
from both_backends import HAS_NUMBA
from blocksim.api.facade import load
from blocksim.sweeps import worker
from blocksim.sweeps.metrics import parse_metrics
from sweep_models import BALL, ROOT, assert_same_tables, log_diagram, log_integral

pytestmark = pytest.mark.skipif(not HAS_NUMBA, reason="numba not installed")

G, X0 = 9.81, 10.0
BALL_METRICS = ["time:ball.lower limit:1", "count:ball.reset", "final:x", "max:v"]
BALL_DRAWS = {"mu": "uniform(0.5,0.95)", "v0": "normal(0,1)"}


def relay_diagram() -> blocksim.DiagramBuilder:
    """x' = w * relay(x), the relay on at x = 1 (output -1) and off at x = -1 (output +1):
    a triangle wave whose relay switches at t = (2k + 1) / w exactly."""
    d = blocksim.DiagramBuilder(stop=10, rtol=1e-10, atol=1e-10, parameters={"w": 1.0})
    x = d.add("Integrator", id="x")
    relay = d.add("Relay", id="r", on_point=1.0, off_point=-1.0, on_value=-1.0,
                  off_value=1.0)
    gain = d.add("Gain", id="g", k="w")
    x.y >> relay.u
    relay.y >> gain.u
    gain.y >> x.u
    x.y >> d.add("Output", id="y").u
    return d


def job_for(diagram, names, metrics, **fixed) -> worker.Job:
    model = diagram.model if hasattr(diagram, "model") else load(diagram)
    settings = model.simulation.replaced(backend="numba")
    return worker.Job(f"batch-test-{id(model)}", model, fixed, settings, tuple(names),
                      tuple(parse_metrics(metrics)), keep_signals=True)


def per_run_and_batched(job, runs, monkeypatch):
    """The rows of the per-run path, those of run_batch, and how many runs run_batch left
    to the per-run path."""
    per_run = [worker.run_one(job, index, values) for index, values in runs]
    handed_back = []
    run_one = worker.run_one

    def counting(job, index, values, should_stop=None):
        handed_back.append(index)
        return run_one(job, index, values, should_stop)
    monkeypatch.setattr(worker, "run_one", counting)
    batched = worker.run_batch(job, runs)
    return per_run, batched, handed_back


def assert_same_rows(per_run, batched):
    """Same status, message and metric bits; the same results: times, signals, events and
    counts (all but the wall time)."""
    assert len(per_run) == len(batched)
    for a, b in zip(per_run, batched):
        assert (a.index, a.status, a.message) == (b.index, b.status, b.message)
        assert np.array(a.metrics).tobytes() == np.array(b.metrics).tobytes()
        ra, rb = a.results, b.results
        assert (ra is None) == (rb is None)
        if ra is None:
            continue
        assert ra.time.tobytes() == rb.time.tobytes()
        assert list(ra.signals) == list(rb.signals)
        for name in ra.signals:
            assert ra.signals[name].tobytes() == rb.signals[name].tobytes(), name
        assert ra.events == rb.events
        assert (ra.status, ra.message, ra.warnings) == (rb.status, rb.message, rb.warnings)
        assert list(ra.stats) == list(rb.stats)
        assert {k: v for k, v in ra.stats.items() if k != "wall_time"} == {
            k: v for k, v in rb.stats.items() if k != "wall_time"}


def ball_runs(n: int, seed: int) -> list[tuple[int, tuple[float, float]]]:
    rng = np.random.default_rng(seed)
    runs = [(i, (float(rng.uniform(0.5, 0.95)), float(rng.normal(0, 1)))) for i in range(n)]
    return runs + [(n, (0.95, 1.0))]  # many bounces: the progress guard looks at it


def test_ball_monte_carlo_in_one_compiled_call_matches_the_per_run_path(monkeypatch):
    from blocksim.engine.native import batch

    checks = []
    check_progress = batch.BatchRunner._check_progress

    def counting(*args):
        checks.append(args)
        return check_progress(*args)
    monkeypatch.setattr(batch.BatchRunner, "_check_progress", staticmethod(counting))
    job = job_for(BALL, ("mu", "v0"), BALL_METRICS)
    per_run, batched, handed_back = per_run_and_batched(job, ball_runs(24, 3), monkeypatch)
    assert handed_back == []  # every run went through the compiled batch loop
    assert checks  # ... the one with ~500 events through Python's progress guard too
    assert_same_rows(per_run, batched)
    assert all(row.status == "finished" for row in batched)


def test_full_pools_start_again_with_the_same_results(monkeypatch):
    from blocksim.engine.native import batch

    monkeypatch.setattr(batch, "POOL_RUNS", 1)  # room for about one run's rows: refilled
    job = job_for(BALL, ("mu", "v0"), BALL_METRICS)
    per_run, batched, handed_back = per_run_and_batched(job, ball_runs(6, 4), monkeypatch)
    assert handed_back == []
    assert_same_rows(per_run, batched)


def test_a_runners_buffers_are_made_once_grown_when_needed_and_give_the_same_rows(
        monkeypatch):
    """Made per chunk of runs, the loop's buffers and pools were mapped and page-faulted in
    again every 32 runs on a Dask worker (its allocator gives freed memory back at once).
    Now a runner makes them once and grows them when a call needs more room; each call gets
    slices of the size it asked, so the rows are the per-run path's whatever the order of
    the calls' sizes (a batch of 3 runs, then one of 38: chunks of 32 and 6)."""
    from blocksim.engine.native import batch

    pools = []
    buffers = batch.BatchRunner._buffers

    def recording(self, count):
        made = buffers(self, count)
        pools.append(made[7])  # the pool of output rows' times
        return made
    monkeypatch.setattr(batch.BatchRunner, "_buffers", recording)
    job = job_for(BALL, ("mu", "v0"), BALL_METRICS)
    runs = ball_runs(40, 5)
    per_run = [worker.run_one(job, index, values) for index, values in runs]
    handed_back = []
    run_one = worker.run_one
    monkeypatch.setattr(worker, "run_one", lambda *args: handed_back.append(args) or run_one(
        *args))
    batched = worker.run_batch(job, runs[:3]) + worker.run_batch(job, runs[3:])
    assert handed_back == []
    assert_same_rows(per_run, batched)
    assert len(pools) == 3  # one call per chunk
    assert len(pools[0]) < len(pools[1]) and len(pools[2]) < len(pools[1])
    assert not np.shares_memory(pools[0], pools[1])  # grown for the 32-run chunk
    assert np.shares_memory(pools[1], pools[2])  # the 6-run chunk: the same memory


def test_ball_without_drag_bounces_at_the_closed_form_instants(monkeypatch):
    job = job_for(BALL, ("mu", "v0"), ["time:ball.reset:1", "time:ball.reset:2"], beta=0.0)
    runs = [(0, (0.8, 0.0)), (1, (0.6, 2.0)), (2, (0.9, -1.5))]
    per_run, batched, handed_back = per_run_and_batched(job, runs, monkeypatch)
    assert handed_back == []
    assert_same_rows(per_run, batched)
    for row, (_, (mu, v0)) in zip(batched, runs):
        impact = math.sqrt(v0 * v0 + 2 * G * X0)  # speed at the first impact
        first = (v0 + impact) / G
        assert row.metrics[0] == pytest.approx(first, rel=1e-9)
        assert row.metrics[1] == pytest.approx(first + 2 * mu * impact / G, rel=1e-9)


def test_relay_switches_at_the_closed_form_instants_as_on_the_per_run_path(monkeypatch):
    job = job_for(relay_diagram(), ("w",), ["count:r.on", "time:r.on:1", "time:r.off:2"])
    runs = [(i, (w,)) for i, w in enumerate([0.8, 1.0, 1.37, 2.5, 3.1])]
    per_run, batched, handed_back = per_run_and_batched(job, runs, monkeypatch)
    assert handed_back == []
    assert_same_rows(per_run, batched)
    for row, (_, (w,)) in zip(batched, runs):
        ons = (4 * np.arange(40) + 1) / w  # on at x = 1 rising, off at x = -1 falling
        assert row.metrics[0] == np.count_nonzero(ons < 10 - 1e-9)
        assert row.metrics[1] == pytest.approx(1 / w, rel=1e-12)
        assert row.metrics[2] == pytest.approx(7 / w, rel=1e-12)


def test_a_failing_run_in_the_middle_goes_the_per_run_path_with_its_status(monkeypatch):
    job = job_for(log_diagram(), ("c",), ["final:y"])
    runs = [(0, (2.0,)), (1, (0.5,)), (2, (math.nan,)), (3, (3.0,))]
    per_run, batched, handed_back = per_run_and_batched(job, runs, monkeypatch)
    assert handed_back == [1, 2]  # the NaN run, and the invalid value (no model)
    assert_same_rows(per_run, batched)
    assert [row.status for row in batched] == ["finished", "failed", "invalid", "finished"]
    assert batched[3].metrics[0] == pytest.approx(log_integral(3), rel=1e-9)


@pytest.mark.parametrize("name, parameter, values, handed", [
    ("zoh_loop", "K", [5.0, 12.0, 20.0], []),  # sample hits settled in the batch loop
    ("dc_motor_pid", "Kp", [4.0, 12.0], [0]),  # Kp = 4 turns stiff: a warning, per run
])
def test_sampled_and_stiff_diagrams_match_the_per_run_path(name, parameter, values, handed,
                                                           monkeypatch):
    job = job_for(ROOT / "diagrams" / f"{name}.json", (parameter,), [])
    runs = [(i, (v,)) for i, v in enumerate(values)]
    per_run, batched, handed_back = per_run_and_batched(job, runs, monkeypatch)
    assert handed_back == handed
    assert_same_rows(per_run, batched)  # results, events, counts and warnings
    assert all(row.status == "finished" for row in batched)
    if handed:
        assert "stiff" in batched[0].message


def test_a_stop_is_seen_between_compiled_calls():
    job = job_for(BALL, ("mu", "v0"), BALL_METRICS)
    runner = worker.batch_runner(job)
    source = worker.source_for(job)
    models = [source.model({"mu": 0.5 + 0.01 * i, "v0": 0.0}) for i in range(40)]
    asked = []

    def should_stop():  # asked before each compiled call: yes from the second on
        asked.append(True)
        return len(asked) > 1
    budget, runner.budget = runner.budget, 2  # calls of the loop in the first compiled
    try:  # call (one per ball run)
        outcomes = runner.run(models, should_stop)
    finally:
        runner.budget = budget
    done = [o for o in outcomes if o is not None]
    assert 1 <= len(done) <= 2 and all(isinstance(o, blocksim.Results) for o in done)
    assert outcomes[len(done):] == [None] * (len(models) - len(done))


@pytest.mark.parametrize("diagram, names, plan, metrics", [
    (BALL, ("mu", "v0"), dict(draws=BALL_DRAWS, n=40, seed=9), BALL_METRICS),
    (BALL, ("mu",), dict(grid={"mu": "0.5:0.95:10"}), BALL_METRICS),
    (None, ("w",), dict(grid={"w": "0.5:3:8"}), ["count:r.on", "time:r.off:2", "final:y"]),
])
def test_one_and_two_workers_give_the_same_bits_on_numba(diagram, names, plan, metrics):
    diagram = diagram if diagram is not None else relay_diagram()
    one = blocksim.sweep(diagram, backend="numba", metrics=metrics, workers=1, **plan)
    two = blocksim.sweep(diagram, backend="numba", metrics=metrics, workers=2, batch_size=8,
                         **plan)
    assert_same_tables(one, two)
    assert set(one.column("status")) == {"finished"}


def test_ctrl_c_stops_a_numba_pool_in_its_batches_and_keeps_finished_rows(tmp_path):
    """A real process with 2 workers whose batches run in the batch loop: Ctrl-C once rows
    are in the file ends it (exit 130) with the finished rows kept, each the same bits as
    a 1-worker sweep (the per-run path) gives."""
    runs = 2000
    out = tmp_path / "runs.csv"
    grid = f"mu=0.5:0.95:{runs}"
    args = [sys.executable, "-m", "blocksim", "sweep", str(BALL), "--grid", grid,
            "--metric", "count:ball.reset", "--metric", "time:ball.lower limit:1",
            "--backend", "numba", "--workers", "2", "--batch-size", "100", "--out", str(out)]
    proc = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        while proc.poll() is None and (not out.exists() or len(read(out)) < 3):
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)  # a hang guard, not a speed target
    finally:
        proc.kill()
    text = err.decode(errors="replace")
    assert proc.returncode == 130 and "Traceback" not in text, text
    kept = read(out)[1:]
    assert 2 <= len(kept) < runs and all(row[1] == "finished" for row in kept)
    mus = sorted(float(row[0]) for row in kept)
    table = blocksim.sweep(BALL, samples=[{"mu": mu} for mu in mus], backend="numba",
                           workers=1, metrics=["count:ball.reset", "time:ball.lower limit:1"])
    expected = {repr(mu): (repr(c), repr(t)) for mu, (_, _, c, t, _) in zip(
        mus, (table.rows[i] for i in sorted(table.rows)))}
    assert {row[0]: (row[2], row[3]) for row in kept} == expected


def read(path):
    with open(path, newline="") as fh:
        return list(csv.reader(fh))
