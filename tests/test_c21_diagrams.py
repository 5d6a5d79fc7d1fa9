"""ARGESIM C21 dynamic-contact bouncing ball and ideal-diode RLC circuit, run from the CLI.

References: ../shared/benchmarks/BENCHMARKS.md sections 4 and 5 (copied to references.py).
Each diagram is run once per module (a few seconds) and the tests read its CSV output.
"""
from pathlib import Path

import numpy as np
import pytest

import references as ref
from builders import cli_run

DIAGRAMS = Path(__file__).resolve().parents[1] / "diagrams"


def rows_at(table, t):
    """Indices of the rows logged at exactly t (an event instant has two)."""
    return np.flatnonzero(table["time"] == t)


# ---------------------------------------------------------------- dynamic contact
@pytest.fixture(scope="module")
def ball(tmp_path_factory):
    return cli_run(tmp_path_factory.mktemp("ball_contact"), "bouncing_ball_contact.json",
                   "--rtol", 1e-10, "--atol", 1e-10)


def contacts(log):
    """Contact start and end times: the on/off events of the relay 'contact'."""
    starts = [t for t, block, kind in log if block == "contact" and kind == "on"]
    ends = [t for t, block, kind in log if block == "contact" and kind == "off"]
    return np.array(starts), np.array(ends)


def test_contact_times(ball):
    _, log = ball
    starts, ends = contacts(log)
    assert len(starts) >= 4 and len(ends) >= 3
    assert np.all(starts[:len(ends)] < ends) and np.all(ends[:len(starts) - 1] < starts[1:])
    assert abs(starts[0] - ref.CONTACT_STARTS[0]) < 1e-8
    assert abs(ends[0] - ref.CONTACT_ENDS[0]) < 1e-8
    assert np.max(np.abs(starts[:3] - ref.CONTACT_STARTS)) < 1e-8
    assert np.max(np.abs(ends[:3] - ref.CONTACT_ENDS)) < 1e-8


def test_apex_heights_2_to_4(ball):
    # Apex 1 is the initial height x0 = 10 at t = 0; apexes 2, 3, 4 are the highest points
    # after contacts 1, 2, 3, whose heights are the three reference values. An apex is v
    # falling through 0, marked by the HitCrossing 'apex' as an event: the event's rows
    # hold x exactly there. We take the single apex between the end of contact k and the
    # start of contact k + 1.
    table, log = ball
    starts, ends = contacts(log)
    hits = np.array([t for t, block, kind in log if block == "apex" and kind == "hit"])
    for k in range(3):
        between = hits[(hits > ends[k]) & (hits < starts[k + 1])]
        assert len(between) == 1
        t_apex = between[0]
        assert abs(t_apex - ref.CONTACT_APEX_TIMES[k]) < 1e-8
        rows = rows_at(table, t_apex)
        assert len(rows) == 2
        height = ref.CONTACT_APEX_HEIGHTS[k]
        assert np.all(np.abs(table["x"][rows] - height) < 1e-6 * height)
        assert np.all(np.abs(table["v"][rows]) < 1e-9)


def test_maximal_deformations(ball):
    # w is largest where w' = -v = 0 inside a contact; the Abs block of the air resistance
    # locates that crossing of v as an event, so the maximum is an exact row of the table.
    table, log = ball
    starts, ends = contacts(log)
    t, w = table["time"], table["w"]
    for k in range(3):
        w_max = np.max(w[(t >= starts[k]) & (t <= ends[k])])
        assert abs(w_max - ref.CONTACT_MAX_DEFORMATIONS[k]) < 1e-8 * ref.CONTACT_MAX_DEFORMATIONS[k]


def test_ball_comes_to_rest_in_contact(ball):
    table, log = ball
    starts, ends = contacts(log)
    assert len(starts) == len(ends) + 1  # the last contact never ends
    assert table["time"][-1] == 10.0
    assert abs(table["x"][-1] - ref.CONTACT_REST_X) < 1e-8
    assert abs(table["v"][-1]) < 1e-8
    assert abs(table["x"][-1] + table["w"][-1]) < 1e-12  # still touching: x + w = 0


# ---------------------------------------------------------------- ideal diode
@pytest.fixture(scope="module")
def diode(tmp_path_factory):
    return cli_run(tmp_path_factory.mktemp("diode_ideal"), "diode_ideal.json", "--rtol", 1e-10)


def test_diode_switch_times(diode):
    _, log = diode
    # The relay 'diode' (1 conducting, 0 locking) logs each structure change as on/off;
    # it starts conducting, so switch 1 is to locking ('off') and they alternate.
    switches = [(t, kind) for t, block, kind in log if block == "diode" and kind in ("on", "off")]
    assert len(switches) == ref.DIODE_SWITCH_COUNT
    assert all(0 < t <= 1e-4 for t, _ in switches)
    assert [kind for _, kind in switches] == ["off", "on"] * 14 + ["off"]
    for number, t_ref in ref.DIODE_SWITCHES.items():
        assert abs(switches[number - 1][0] - t_ref) < 1e-11, number


def test_diode_values_at_5us_and_at_the_end(diode):
    table, _ = diode
    t = table["time"]
    # The output grid (1e-7 s) contains 5e-6 (as 50 * 1e-7, within one ulp of 5e-6).
    rows = np.flatnonzero(np.abs(t - 5e-6) < 1e-15)
    assert len(rows) == 1
    for name, value in ref.DIODE_AT_5US.items():
        assert abs(table[name][rows[0]] - value) < 1e-7 * abs(value), name
    assert t[-1] == 1e-4
    assert abs(table["uC"][-1] - ref.DIODE_AT_END["uC"]) < 1e-7 * abs(ref.DIODE_AT_END["uC"])
    assert abs(table["i"][-1] - ref.DIODE_AT_END["i"]) < 1e-12  # i(1e-4) is tiny: absolute


def test_diode_voltage_and_current_are_consistent(diode):
    # The ideal diode either blocks (uD <= 0, iD = 0) or conducts (uD = 0, iD >= 0).
    table, _ = diode
    uD, iD = table["uD"], table["iD"]
    assert np.all(uD <= 1e-12) and np.all(iD >= -1e-12)
    assert np.all((uD == 0.0) | (iD == 0.0))
    assert np.any(uD < -1e-3) and np.any(iD > 1e-4)
