"""DenseBatch: every way it keeps a step's states gives `Dopri5Stepper.dense`'s rows."""
import math

import numpy as np
import pytest

from blocksim.engine import dense_batch
from blocksim.engine.dense_batch import DenseBatch
from blocksim.engine.dopri5 import Dopri5Stepper


def _decays(n: int):
    rates = 0.2 + np.arange(n) / n  # x_i' = -rate_i x_i + 1: each state its own curve
    return lambda t, x: 1.0 - rates * x


def _run(n: int, columns: list[int], interval: float, batch_steps: int = 10_000):
    """(rows taken from batches of at most batch_steps steps, expected rows, grid times)."""
    stepper = Dopri5Stepper(_decays(n), 0.0, np.zeros(n), 8.0, 1e-8, 1e-10, math.inf, None)
    batch = DenseBatch(columns, n, 0.0, interval)
    taken, expected, k = [], [], 1
    while stepper.t < 8.0:
        stepper.step()
        last = int(stepper.t / interval)
        if last >= k:
            batch.add(stepper, k, last)
            expected += [stepper.dense(j * interval)[columns] for j in range(k, last + 1)]
            k = last + 1
        if len(batch) >= batch_steps:
            taken.append(batch.take())
    taken.append(batch.take())
    times = np.concatenate([t for t, _ in taken])
    rows = np.concatenate([r for _, r in taken])
    return rows, np.array(expected), times, k, stepper


@pytest.mark.parametrize("n, columns", [
    (3, [2, 0, 2]),  # few states: whole x and stages kept
    (200, [150, 3, 150]),  # scattered columns of many states: picked per step
    (200, [10, 11, 12]),  # a narrow run of many states: copied per step
    (200, list(range(60, 200))),  # a wide run: views of x
])
@pytest.mark.parametrize("interval", [0.5, 0.0625])  # few or many rows per step
def test_rows_are_the_dense_output_however_the_states_are_kept(n, columns, interval):
    rows, expected, times, k, stepper = _run(n, columns, interval)
    np.testing.assert_array_equal(times, np.arange(1, k) * interval)
    np.testing.assert_allclose(rows, expected, rtol=1e-14, atol=1e-15)
    assert rows[-1].tolist() == stepper.x[columns].tolist()  # exactly the state at t = 8


def test_batches_taken_part_way_give_the_same_rows():
    whole, _, times, _, _ = _run(200, [150, 3], 0.0625)
    parts, _, times_parts, _, _ = _run(200, [150, 3], 0.0625, batch_steps=3)
    np.testing.assert_array_equal(times_parts, times)
    np.testing.assert_allclose(parts, whole, rtol=1e-14, atol=1e-15)


def test_kept_whole_or_picked_the_rows_are_identical(monkeypatch):
    monkeypatch.setattr(dense_batch, "WHOLE_STATES", 10)
    picked = _run(100, [70, 5, 70], 0.0625)[0]
    monkeypatch.setattr(dense_batch, "WHOLE_STATES", 100)
    whole = _run(100, [70, 5, 70], 0.0625)[0]
    np.testing.assert_array_equal(whole, picked)  # the same arithmetic on the same values
