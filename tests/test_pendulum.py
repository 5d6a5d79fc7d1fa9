"""ARGESIM C21 rotating pendulum with a free-flight phase, and its kick variant, from the CLI.

References: ../shared/benchmarks/BENCHMARKS.md section 6 (copied to references.py). Each
diagram runs once per module (a fraction of a second) at rtol 1e-10.
"""
import math

import numpy as np
import pytest

import references as ref
from builders import cli_run


def event_times(log, block, kind):
    return [t for t, b, k in log if b == block and k == kind]


def rows_at(table, t):
    """The rows logged at exactly t: left and right limit of an event."""
    rows = np.flatnonzero(table["time"] == t)
    assert len(rows) >= 1
    return rows


def psi(phi):
    return math.fmod(phi, 2 * math.pi) % (2 * math.pi) - math.pi


@pytest.fixture(scope="module")
def pendulum(tmp_path_factory):
    return cli_run(tmp_path_factory.mktemp("pendulum"), "rotating_pendulum.json",
                   "--rtol", 1e-10, "--atol", 1e-10)


def test_release_and_catch(pendulum):
    table, log = pendulum
    (release,) = event_times(log, "mode_latch", "set")
    (catch,) = event_times(log, "mode_latch", "reset")
    # Acceptance: within 1e-7 of the reference; measured 1.4e-9 and 1.5e-9.
    assert abs(release - ref.PENDULUM_RELEASE) < 1e-7
    assert abs(catch - ref.PENDULUM_CATCH) < 1e-7
    before, after = rows_at(table, release)[[0, -1]]
    assert (table["mode"][before], table["mode"][after]) == (1.0, 2.0)
    assert np.allclose((table["x"][after], table["y"][after]), ref.PENDULUM_RELEASE_AT,
                       atol=1e-5)  # the reference gives 5 digits
    before, after = rows_at(table, catch)[[0, -1]]
    assert (table["mode"][before], table["mode"][after]) == (2.0, 1.0)
    assert np.allclose((table["x"][after], table["y"][after]), ref.PENDULUM_CATCH_AT, atol=1e-8)
    for name, value in ref.PENDULUM_AFTER_CATCH.items():
        assert abs(table[name][after] - value) < 1e-7, name


def test_turning_points_and_stop(pendulum):
    table, log = pendulum
    turning = event_times(log, "turning", "hit")
    assert np.max(np.abs(np.array(turning) - ref.PENDULUM_TURNING)) < 1e-7
    for t, expected in zip(turning, ref.PENDULUM_TURNING_PSI):
        phi = table["phi"][rows_at(table, t)[-1]]
        assert abs(psi(phi) - expected) < 1e-7
    # The run ends at the first turning point with |psi| < 0.1 pi (the fifth): within 1e-6.
    assert abs(table["time"][-1] - ref.PENDULUM_TURNING[-1]) < 1e-6
    assert event_times(log, "stop", "stop") == [table["time"][-1]]
    assert np.allclose((table["x"][-1], table["y"][-1]), ref.PENDULUM_STOP_AT, atol=1e-8)
    assert set(np.unique(table["mode"])) == {1.0, 2.0}


def test_rope_length_is_kept_while_swinging(pendulum):
    table, _ = pendulum
    swinging = table["mode"] == 1.0
    radius = np.hypot(table["x"], table["y"])
    assert np.max(np.abs(radius[swinging] - 1.0)) < 1e-12
    flying = ~swinging
    assert np.all(radius[flying] <= 1.0 + 1e-9)  # slack rope: inside the circle


@pytest.fixture(scope="module")
def kick(tmp_path_factory):
    return cli_run(tmp_path_factory.mktemp("kick"), "rotating_pendulum_kick.json",
                   "--rtol", 1e-10, "--atol", 1e-10)


def test_kick_and_second_flight(kick):
    table, log = kick
    resets = event_times(log, "swing/omega_state", "reset")
    catch = event_times(log, "mode_latch", "reset")
    kicks = [t for t in resets if t not in catch]
    assert len(kicks) == 1
    # Acceptance: within 1e-6; measured 2e-9.
    assert abs(kicks[0] - ref.PENDULUM_KICK) < 1e-6
    before, after = rows_at(table, kicks[0])[[0, -1]]
    assert abs(table["omega"][before] - ref.PENDULUM_OMEGA_BEFORE_KICK) < 1e-7
    assert table["omega"][after] == ref.PENDULUM_OMEGA_PLUS
    # Then the original run repeats: a second free flight as long as the first.
    releases = event_times(log, "mode_latch", "set")
    assert len(releases) == 2 and releases[1] > kicks[0] and len(catch) == 2
    assert abs((catch[1] - releases[1]) - (catch[0] - releases[0])) < 1e-7
    assert abs((catch[0] - releases[0]) - (ref.PENDULUM_CATCH - ref.PENDULUM_RELEASE)) < 1e-7
    assert np.all(table["mode"][(table["time"] > releases[1]) & (table["time"] < catch[1])]
                  == 2.0)
