"""Metric specs: parsing, names, and values on the bouncing ball against its closed forms
(without air: impacts t_n = t1 (2 (1 - mu^n) / (1 - mu) - 1), speeds mu^n sqrt(2 g x0))."""
import math

import numpy as np
import pytest

import blocksim
import references as ref
from blocksim.errors import BlocksimError
from blocksim.sweeps.metrics import parse_metric, parse_metrics, value_at
from sweep_models import BALL

SPECS = ["final:x", "min:v", "max:v", "at:x:1.005", "count:ball.reset",
         "time:ball.reset:1", "time:ball.reset:4", "time:ball.reset:5",
         "time:ball.lower limit:1", "count:ball.lower limit"]


def test_specs_parse_into_the_parts_named():
    assert parse_metric("at:ball[0]:2.5").target == "ball[0]"
    assert parse_metric("at:ball[0]:2.5").number == 2.5
    metric = parse_metric("time:sub/ball.lower limit:3")
    assert (metric.kind, metric.target, metric.event, metric.number) == \
        ("time", "sub/ball", "lower limit", 3)
    assert [m.name for m in parse_metrics(SPECS)] == SPECS
    assert [m.name for m in parse_metrics({"bounces": "count:ball.reset",
                                           "span": lambda r: r.time[-1]})] == ["bounces", "span"]


@pytest.mark.parametrize("spec", ["final", "final:", "mean:x", "at:x", "at:x:soon",
                                  "count:ball", "time:ball.reset", "time:ball.reset:0",
                                  "time:ball.reset:1.5", "time:reset:1"])
def test_a_malformed_spec_is_named(spec):
    with pytest.raises(BlocksimError, match=f"metric '{spec}'"):
        parse_metric(spec)


def test_a_function_needs_a_name_and_a_name_is_used_once():
    with pytest.raises(BlocksimError, match="needs a name"):
        parse_metrics([lambda r: 0.0])
    with pytest.raises(BlocksimError, match="'final:x' is asked for twice"):
        parse_metrics(["final:x", "final:x"])


def test_value_at_interpolates_and_takes_the_right_limit_at_an_event():
    time = np.array([0.0, 1.0, 2.0, 2.0, 3.0])
    values = np.array([0.0, 10.0, 20.0, -5.0, -4.0])
    assert value_at(time, values, 0.25) == 2.5
    assert value_at(time, values, 2.0) == -5.0  # after the event at t = 2
    assert value_at(time, values, 2.5) == -4.5
    assert value_at(time, values, 3.0) == -4.0
    assert math.isnan(value_at(time, values, 3.5)) and math.isnan(value_at(time, values, -1))


def test_ball_metrics_against_the_closed_form_without_air():
    table = blocksim.sweep(BALL, grid={"mu": [0.9, 0.5]}, params={"beta": 0}, stop=10,
                           metrics=SPECS, keep="signals", workers=1)
    g, x0 = ref.BALL_G, ref.BALL_X0
    for run, mu in enumerate((0.9, 0.5)):
        row = dict(zip(table.columns, table.rows[run]))
        t1 = math.sqrt(2 * x0 / g)
        impacts = [t1 * (2 * (1 - mu**k) / (1 - mu) - 1) for k in range(1, 40)]
        t_rest = t1 * (2 / (1 - mu) - 1)  # the Zeno point: 27.1 s for mu 0.9, 4.28 s for 0.5
        assert row["status"] == "finished"
        if t_rest > 10:  # 4 bounces before t = 10
            assert row["count:ball.reset"] == len([t for t in impacts if t < 10]) == 4
            assert row["count:ball.lower limit"] == 0
        else:  # comes to rest: the bounces accumulate at t_rest
            assert row["count:ball.lower limit"] == 1
            assert row["time:ball.lower limit:1"] == pytest.approx(t_rest, abs=1e-6)
        assert row["time:ball.reset:1"] == pytest.approx(impacts[0], abs=1e-8)
        assert row["time:ball.reset:4"] == pytest.approx(impacts[3], abs=1e-8)
        assert row["min:v"] == pytest.approx(-math.sqrt(2 * g * x0), rel=1e-9)
        assert row["max:v"] == pytest.approx(mu * math.sqrt(2 * g * x0), rel=1e-9)
        # midway between rows 0.01 apart, the chord of the parabola is g h^2 / 8 below it
        assert row["at:x:1.005"] == pytest.approx(x0 - g * 1.005**2 / 2 - g * 0.01**2 / 8,
                                                  abs=1e-9)
        results = table.results[run]  # `at` is linear between output rows
        assert row["at:x:1.005"] == pytest.approx(np.interp(1.005, results.time, results["x"]),
                                                  rel=1e-14)
        assert row["final:x"] == results["x"][-1]
    assert math.isnan(table.rows[0][table.columns.index("time:ball.reset:5")])  # only 4


def test_ball_with_air_bounces_and_comes_to_rest_at_the_reference_times():
    table = blocksim.sweep(BALL, samples=[{"mu": ref.BALL_MU}], workers=1,
                           metrics=[f"time:ball.reset:{k}" for k in range(1, 6)]
                           + ["time:ball.lower limit:1", "final:x", "final:v"])
    row = table.rows[0]
    assert np.max(np.abs(np.array(row[2:7]) - ref.BALL_BOUNCES_AIR)) < 1e-8
    assert row[7] == pytest.approx(ref.BALL_T_INF_AIR, abs=1e-6)  # the Zeno point
    assert row[8] == 0.0 and row[9] == 0.0  # at rest on the floor


def test_a_metric_of_a_signal_or_block_the_diagram_lacks_is_refused_before_running():
    with pytest.raises(BlocksimError, match="metric 'final:height': no logged signal 'height' "
                                            r"\(logged: x, v\)"):
        blocksim.sweep(BALL, grid={"mu": [0.5]}, metrics=["final:height"], workers=1)
    with pytest.raises(BlocksimError, match="metric 'count:floor.reset': no block 'floor'"):
        blocksim.sweep(BALL, grid={"mu": [0.5]}, metrics=["count:floor.reset"], workers=1)


def test_user_functions_are_metrics():
    table = blocksim.sweep(BALL, grid={"mu": [0.5]}, workers=1, params={"beta": 0}, stop=3,
                           metrics={"impacts": lambda r: len(r.events_of("reset")),
                                    "bad": lambda r: 1 / 0})
    assert table.rows[0][2] == 2.0  # t1 = 1.43, t2 = 1.43 + 2 * 0.5 * 1.43 = 2.86 (< 3 s)
    assert math.isnan(table.rows[0][3])
    assert table.rows[0][1] == "error"
    assert table.rows[0][-1] == "metric 'bad': ZeroDivisionError: division by zero"
