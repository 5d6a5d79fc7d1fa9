"""ARGESIM C21 bouncing balls built from components (diagrams/physical/c21_ball_*.json),
run from the CLI: a Mass on a Hardstop against the closed form of BENCHMARKS.md section 3,
and a Mass on a deforming contact (a component declared in the diagram) against the
signal-flow diagrams/bouncing_ball_contact.json (section 4)."""
import math

import numpy as np
import pytest

import references as ref
from builders import cli_run

MU, G, X0 = 0.8, 9.81, 10.0  # c21_ball_hardstop.json


def impact_times(n: int) -> np.ndarray:
    """t_n = t1 (2 (1 - mu^n) / (1 - mu) - 1) for a drop from X0 without air."""
    t1 = math.sqrt(2 * X0 / G)
    k = np.arange(1, n + 1)
    return t1 * (2 * (1 - MU**k) / (1 - MU) - 1)


T_INF = math.sqrt(2 * X0 / G) * (1 + MU) / (1 - MU)  # 12.85 s, the accumulation point


@pytest.fixture(scope="module")
def hardstop(tmp_path_factory):
    return cli_run(tmp_path_factory.mktemp("hardstop"), "physical/c21_ball_hardstop.json")


def test_hardstop_impacts_match_the_closed_form(hardstop):
    table, log = hardstop
    t, v = table["time"], table["v"]
    # an impact is an event instant (two rows) where v jumps from negative to positive
    pairs = np.flatnonzero(np.diff(t) == 0)
    impacts = t[pairs[(v[pairs] < 0) & (v[pairs + 1] > 0)]]
    assert len(impacts) >= 100
    assert np.max(np.abs(impacts[:50] - impact_times(50))) < 1e-10
    # the same instants as the Hardstop's own 'impact' events
    logged = np.array([te for te, block, kind in log if block == "floor" and kind == "impact"])
    assert np.array_equal(logged[:50], impacts[:50])
    # the restitution: the speed after is mu times the speed before
    k = pairs[(v[pairs] < 0) & (v[pairs + 1] > 0)][:50]
    assert np.allclose(v[k + 1], -MU * v[k], rtol=1e-12, atol=0)


def test_hardstop_ball_rests_after_the_accumulation_point(hardstop):
    table, log = hardstop
    t, x, v = table["time"], table["x"], table["v"]
    rests = [te for te, block, kind in log if block == "floor" and kind == "rest"]
    assert len(rests) == 1 and abs(rests[0] - T_INF) < 1e-6
    # nothing happens after it: no impact, no chatter, no leaving the stop
    assert [e for e in log if e[0] > rests[0] and e[1] == "floor"] == []
    after = t > rests[0]
    assert np.all(x[after] == 0.0) and np.all(v[after] == 0.0)
    assert np.all(x >= -1e-12)
    assert t[-1] == 20.0  # ran to the end: no Zeno failure


# ---------------------------------------------------------------- deforming contact
def contact_events(log, block, start, end):
    starts = np.array([t for t, b, kind in log if b == block and kind == start])
    ends = np.array([t for t, b, kind in log if b == block and kind == end])
    return starts, ends


@pytest.fixture(scope="module")
def elastic(tmp_path_factory):
    components = cli_run(tmp_path_factory.mktemp("contact_components"),
                         "physical/c21_ball_elastogap.json")
    signals = cli_run(tmp_path_factory.mktemp("contact_signals"),
                      "bouncing_ball_contact.json")
    return components, signals


def test_contact_starts_and_ends_as_in_the_signal_flow_diagram(elastic):
    (_, log), (_, signal_log) = elastic
    starts, ends = contact_events(log, "ground", "contact", "release")
    signal_starts, signal_ends = contact_events(signal_log, "contact", "on", "off")
    assert len(starts) == len(signal_starts) >= 8 and len(ends) == len(signal_ends)
    assert len(starts) == len(ends) + 1  # the last contact never ends: the ball rests
    assert np.max(np.abs(starts - signal_starts)) < 1e-8
    assert np.max(np.abs(ends - signal_ends)) < 1e-8
    # and both as BENCHMARKS.md has them
    assert np.max(np.abs(starts[:3] - ref.CONTACT_STARTS)) < 1e-8
    assert np.max(np.abs(ends[:3] - ref.CONTACT_ENDS)) < 1e-8


def test_contact_deformation_and_rest(elastic):
    (table, log), _ = elastic
    starts, ends = contact_events(log, "ground", "contact", "release")
    t, w = table["time"], table["w"]
    for k in range(3):  # w is largest at v = 0 inside a contact: a located event (drag)
        w_max = np.max(w[(t >= starts[k]) & (t <= ends[k])])
        assert abs(w_max - ref.CONTACT_MAX_DEFORMATIONS[k]) < 1e-8 * ref.CONTACT_MAX_DEFORMATIONS[k]
    assert table["time"][-1] == 10.0
    assert abs(table["x"][-1] - ref.CONTACT_REST_X) < 1e-8
    assert abs(table["v"][-1]) < 1e-8
    assert abs(table["x"][-1] + w[-1]) < 1e-12  # still touching: x + w = 0
