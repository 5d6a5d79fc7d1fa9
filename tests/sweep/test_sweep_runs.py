"""Sweeps through the Python API: both backends against the closed form, the same bits
from 1 and 2 workers, failures as rows, output files and resuming, refusals up front."""
import logging
import math

import numpy as np
import pytest

import blocksim
from both_backends import HAS_NUMBA
from blocksim.errors import BlocksimError, StructuralParameterError
from sweep_models import BALL, assert_same_tables, log_diagram, log_integral

BACKENDS = ["python"] + (["numba"] if HAS_NUMBA else [])


@pytest.mark.parametrize("backend", BACKENDS)
def test_grid_and_monte_carlo_match_the_closed_form_on_each_backend(backend):
    d = log_diagram()
    grid = blocksim.sweep(d, grid={"c": "2:4:3"}, metrics=["final:y"], backend=backend,
                          workers=1)
    assert grid.column("c") == [2.0, 3.0, 4.0]
    assert grid.column("status") == ["finished"] * 3
    np.testing.assert_allclose(grid.column("final:y"), [log_integral(c) for c in (2, 3, 4)],
                               rtol=1e-9)
    mc = blocksim.sweep(d, draws={"c": "uniform(1.5,4)"}, n=3, seed=11, metrics=["final:y"],
                        backend=backend, workers=1)
    drawn = mc.column("c")
    assert len(set(drawn)) == 3 and all(1.5 <= c <= 4 for c in drawn)
    np.testing.assert_allclose(mc.column("final:y"), [log_integral(c) for c in drawn],
                               rtol=1e-9)


@pytest.mark.skipif(not HAS_NUMBA, reason="numba not installed")
def test_the_backends_agree_to_rounding():
    kwargs = dict(grid={"mu": [0.5, 0.8]}, metrics=["count:ball.reset", "time:ball.reset:3",
                                                    "time:ball.lower limit:1", "max:v"],
                  workers=1, stop=8)
    py = blocksim.sweep(BALL, backend="python", **kwargs)
    nb = blocksim.sweep(BALL, backend="numba", **kwargs)
    assert py.column("count:ball.reset") == nb.column("count:ball.reset")
    for name in kwargs["metrics"][1:]:
        np.testing.assert_allclose(nb.column(name), py.column(name), rtol=0, atol=1e-12)


def test_a_failing_run_in_the_middle_is_a_row_and_the_sweep_goes_on():
    table = blocksim.sweep(log_diagram(), samples=[{"c": 2}, {"c": 0.5}, {"c": math.nan},
                                                   {"c": 3}], metrics=["final:y"], workers=1)
    assert table.column("status") == ["finished", "failed", "invalid", "finished"]
    failed, invalid = table.column("message")[1:3]
    assert failed.startswith("t = 0.4999") and "block 'log'" in failed and "domain" in failed
    assert "block 'c'" in invalid and "'value'" in invalid and "nan" in invalid
    values = table.column("final:y")
    assert math.isnan(values[1]) and math.isnan(values[2])
    assert values[0] == pytest.approx(log_integral(2), rel=1e-9)
    assert values[3] == pytest.approx(log_integral(3), rel=1e-9)


def test_one_and_two_workers_give_the_same_bits():
    kwargs = dict(draws={"c": "uniform(0.5,3)"}, n=12, seed=5, metrics=["final:y", "max:y",
                                                                          "at:y:0.3"])
    one = blocksim.sweep(log_diagram(), workers=1, **kwargs)
    two = blocksim.sweep(log_diagram(), workers=2, batch_size=2, **kwargs)
    assert {"finished", "failed"} <= set(one.column("status"))  # c < 1 fails, mid-batch too
    assert_same_tables(one, two)


def test_signals_come_back_from_the_workers_on_request():
    table = blocksim.sweep(log_diagram(), grid={"c": [2, 0.5, 3]}, metrics=["final:y"],
                           keep="signals", workers=2, batch_size=1)
    assert sorted(table.results) == [0, 1, 2]
    assert table.results[0]["y"][-1] == table.rows[0][2]
    assert table.results[1].status == "failed" and 0 < table.results[1].time[-1] < 0.5


def test_csv_and_parquet_outputs_hold_the_table(tmp_path):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    kwargs = dict(grid={"c": [2, 0.5, 3]}, metrics=["final:y", "min:y"], workers=1)
    table = blocksim.sweep(log_diagram(), out=tmp_path / "runs.csv", **kwargs)
    blocksim.sweep(log_diagram(), out=tmp_path / "runs.parquet", **kwargs)
    expected = table.to_pandas().reset_index(drop=True)
    assert list(expected.columns) == ["c", "status", "final:y", "min:y", "message"]
    from_csv = pd.read_csv(tmp_path / "runs.csv", keep_default_na=False,
                           na_values={"final:y": ["nan"], "min:y": ["nan"]})
    pd.testing.assert_frame_equal(from_csv, expected, check_exact=True)
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "runs.parquet"), expected,
                                  check_exact=True)


def test_resume_runs_only_what_the_file_lacks(tmp_path):
    out = tmp_path / "runs.csv"
    kwargs = dict(draws={"c": "uniform(1.5,3)"}, n=5, seed=2, metrics=["final:y"], workers=1)
    full = blocksim.sweep(log_diagram(), out=out, **kwargs)
    lines = out.read_text().splitlines()
    out.write_text("\n".join(lines[:1] + lines[2:4]) + "\n")  # runs 1 and 2 kept
    resumed = blocksim.sweep(log_diagram(), out=out, resume=True, **kwargs)
    assert resumed.resumed == 2
    assert out.read_text().splitlines() == lines
    assert_same_tables(full, resumed)
    with pytest.raises(BlocksimError, match="not a run of this sweep"):
        blocksim.sweep(log_diagram(), out=out, resume=True, **{**kwargs, "seed": 3})
    with pytest.raises(BlocksimError, match="columns .* are not this sweep's"):
        blocksim.sweep(log_diagram(), out=out, resume=True, **{**kwargs, "metrics": []})


def test_names_and_settings_are_checked_before_any_run():
    with pytest.raises(BlocksimError, match="cannot sweep unknown parameter 'k'; known: c"):
        blocksim.sweep(log_diagram(), grid={"k": [1]})
    with pytest.raises(BlocksimError, match="'c' is both swept and set"):
        blocksim.sweep(log_diagram(), grid={"c": [1]}, params={"c": 2})
    with pytest.raises(BlocksimError, match="unknown simulation setting stop_time"):
        blocksim.sweep(log_diagram(), grid={"c": [2]}, stop_time=3)
    with pytest.raises(BlocksimError, match="two columns would be named c"):
        blocksim.sweep(log_diagram(), grid={"c": [2]}, metrics={"c": "final:y"})
    with pytest.raises(BlocksimError, match="workers must be at least 1"):
        blocksim.sweep(log_diagram(), grid={"c": [2, 3]}, workers=0)
    with pytest.raises(BlocksimError, match="batch_size must be a whole number >= 1"):
        blocksim.sweep(log_diagram(), grid={"c": [2, 3]}, batch_size=0)
    with pytest.raises(BlocksimError, match="keep must be"):
        blocksim.sweep(log_diagram(), grid={"c": [2]}, keep="all")


def test_a_parameter_that_sets_a_width_is_refused_up_front():
    d = _width_diagram()
    with pytest.raises(StructuralParameterError, match="parameter 'n'") as caught:
        blocksim.sweep(d, grid={"n": [1, 2]}, metrics=["final:out[0]"], workers=1)
    assert not caught.value.code_only
    table = blocksim.sweep(d, grid={"k": [1, 2]}, metrics=["final:out[0]"], workers=1)
    assert table.column("final:out[0]") == [1.0, 2.0]


def test_values_that_change_only_the_code_compile_a_model_of_their_own(caplog):
    """a/(s + a) leaves out a zero and folds signs and unit factors: a = 0, 1 and negative
    values each get their own compiled structure, all equal to fresh compiles; the step
    response at t = 1 is 1 - exp(-a)."""
    d = blocksim.DiagramBuilder(stop=1, parameters={"a": 2.0})
    step, tf = d.add("Step", id="s", time=0.0), d.add("TransferFunction", id="tf", num="[a]",
                                                         den="[1, a]")
    step.y >> tf.u
    tf.y >> d.add("Output", id="out").u
    values = [2.0, 1.0, 0.0, -0.5, 3.0, 1.0]
    with caplog.at_level(logging.INFO, logger="blocksim.sweeps"):
        table = blocksim.sweep(d, grid={"a": values}, metrics=["final:out"], workers=1,
                               rtol=1e-12, atol=1e-12)
    assert table.column("status") == ["finished"] * len(values)
    for a, y in zip(values, table.column("final:out")):
        assert y == pytest.approx(1 - math.exp(-a), abs=1e-9)
        fresh = blocksim.simulate(d.compile({"a": a}, rtol=1e-12, atol=1e-12))
        assert y == fresh["out"][-1]
    assert "compile a model of their own" in caplog.text


def _width_diagram() -> blocksim.DiagramBuilder:
    d = blocksim.DiagramBuilder(stop=1, parameters={"n": 2, "k": 1.0})
    d.add("Constant", id="c", value="k*ones(n)").y >> d.add("Output", id="out").u
    return d


def test_an_example_is_swept_by_its_name_as_on_the_command_line():
    kwargs = dict(grid={"mu": [0.5, 0.7]}, metrics=["count:ball.reset"], stop=3.0, workers=1)
    assert_same_tables(blocksim.sweep("bouncing_ball", **kwargs),
                       blocksim.sweep(BALL, **kwargs))
    with pytest.raises(BlocksimError, match="no_such_example: no such file, and no example"):
        blocksim.sweep("no_such_example", **kwargs)
