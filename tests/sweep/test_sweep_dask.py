"""The same sweep on a Dask LocalCluster (2 worker processes) as in this process: the same
bits, failures included. Skipped where Dask is not installed."""
import logging

import pytest

import blocksim
from sweep_models import BALL, assert_same_tables, log_diagram

distributed = pytest.importorskip("distributed")
# distributed's own handler writes to the stderr of import time, which is pytest's capture
# file, closed before the cluster's last messages ("--- Logging error ---"): those messages go
# through the root logger instead, where pytest's logging capture takes them.
logging.getLogger("distributed").handlers.clear()
logging.getLogger("distributed").propagate = True


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None)
    with distributed.Client(cluster) as client:
        yield client
    cluster.close()


def test_dask_gives_the_bits_of_the_local_pool(client):
    kwargs = dict(draws={"mu": "uniform(0.5,0.9)", "v0": "normal(0,1)"}, n=6, seed=4,
                  metrics=["count:ball.reset", "time:ball.reset:2", "max:v", "at:x:1.5"],
                  stop=6)
    local = blocksim.sweep(BALL, workers=2, batch_size=2, **kwargs)
    on_dask = blocksim.sweep(BALL, client=client, batch_size=2, **kwargs)
    assert set(local.column("status")) == {"finished"}
    assert_same_tables(local, on_dask)


def test_a_failing_run_on_dask_is_a_row(client):
    kwargs = dict(grid={"c": [2, 0.5, 3]}, metrics=["final:y"])
    here = blocksim.sweep(log_diagram(), workers=1, **kwargs)
    on_dask = blocksim.sweep(log_diagram(), client=client, batch_size=1, **kwargs)
    assert on_dask.column("status") == ["finished", "failed", "finished"]
    assert_same_tables(here, on_dask)


def test_the_cli_runs_on_a_scheduler_address(client, tmp_path, capsys):
    from blocksim.cli.main import main

    out = tmp_path / "runs.csv"
    code = main(["sweep", str(BALL), "--grid", "mu=0.5:0.9:3", "--metric", "count:ball.reset",
                 "--stop-time", "3", "--scheduler", client.scheduler.address, "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 0, err
    here = blocksim.sweep(BALL, grid={"mu": "0.5:0.9:3"}, metrics=["count:ball.reset"],
                          stop=3, workers=1)
    assert out.read_text().splitlines()[1:] == [
        f"{mu!r},finished,{count!r}," for mu, _, count, _ in here.rows.values()]


def _count_compiles() -> bool:
    """(In a worker, through client.run) count the models its sweeps compile."""
    from blocksim.sweeps import worker

    class Counting(worker.ModelSource):
        made = 0

        def __init__(self, *args, **kwargs):
            Counting.made += 1
            super().__init__(*args, **kwargs)

    worker.ModelSource, worker.COUNTING = Counting, (worker.ModelSource, Counting)
    return True


def _compiles_counted() -> int:
    from blocksim.sweeps import worker

    worker.ModelSource, counting = worker.COUNTING
    return counting.made


def test_long_lived_workers_reuse_their_model_for_the_next_sweep(client):
    """A cluster's workers outlive a sweep: another sweep of the same diagram and settings
    (another seed) compiles nothing on them, and gives the local pool's bits."""
    kwargs = dict(draws={"mu": "uniform(0.5,0.9)", "v0": "normal(0,1)"}, n=4,
                  metrics=["count:ball.reset", "time:ball.reset:2"], stop=4, batch_size=1)
    blocksim.sweep(BALL, client=client, seed=1, **kwargs)  # the model on every worker
    client.run(_count_compiles)
    try:
        again = blocksim.sweep(BALL, client=client, seed=2, **kwargs)
        other = blocksim.sweep(BALL, client=client, seed=2, params={"beta": 0.0}, **kwargs)
    finally:
        made = client.run(_compiles_counted)
    assert sum(made.values()) <= len(made)  # the first sweep's model reused; `other`: new
    assert_same_tables(again, blocksim.sweep(BALL, workers=2, seed=2, **kwargs))
    assert_same_tables(other, blocksim.sweep(BALL, workers=2, seed=2, params={"beta": 0.0},
                                             **kwargs))
