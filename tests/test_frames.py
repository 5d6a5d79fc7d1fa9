"""Results as pandas, xarray and matplotlib objects (blocksim.engine.frames): the same numbers as
the arrays, both limits of every event kept and marked, and a clear ImportError naming the
extra when the library is absent. Each test skips when its library is not installed."""
import sys

import numpy as np
import pytest

import blocksim
from blocksim.engine.frames import limits


@pytest.fixture(scope="module")
def ball():
    """The C21 ball without air for 12 s: six bounces and five apexes (|v| crossing zero),
    each an event instant with two rows."""
    diagram = blocksim.load("diagrams/bouncing_ball.json")
    return blocksim.simulate(diagram, stop_time=12, params={"beta": 0})


@pytest.fixture(scope="module")
def vector():
    """A two-element signal and a scalar one, with one time event (a step at 0.5)."""
    d = blocksim.DiagramBuilder(stop=1, output_interval=0.25)
    d.add("Constant", id="c", value=[1.0, 2.0]) >> d.add("Scope", id="pair")
    d.add("Step", id="s", time=0.5) >> d.add("Scope", id="step")
    return d.simulate()


def test_limits_mark_the_two_rows_of_each_event_instant(ball):
    marks = limits(ball.time)
    left, right = np.flatnonzero(marks == "left"), np.flatnonzero(marks == "right")
    instants = sorted({e.time for e in ball.events})
    assert len(instants) == 11 and list(ball.time[left]) == instants
    assert np.array_equal(right, left + 1) and list(ball.time[right]) == instants
    assert set(marks[(marks != "left") & (marks != "right")]) == {""}
    bounce = np.isin(ball.time[left], [e.time for e in ball.events_of("reset")])
    assert bounce.sum() == 6
    mu = 0.9  # at a bounce the velocity jumps from v to -mu v
    assert np.allclose(ball["v"][right[bounce]], -mu * ball["v"][left[bounce]], rtol=1e-12,
                       atol=0)


def test_to_pandas_indexes_by_time_and_marks_event_rows(ball, vector):
    pd = pytest.importorskip("pandas")
    frame = ball.to_pandas()
    assert isinstance(frame, pd.DataFrame) and frame.index.name == "time"
    assert list(frame.columns) == ["x", "v", "event"]
    assert np.array_equal(frame.index.to_numpy(), ball.time)
    assert np.array_equal(frame["x"].to_numpy(), ball["x"])
    bounces = [e.time for e in ball.events_of("reset")]
    instants = sorted({e.time for e in ball.events})
    assert list(frame.index[frame.event == "left"]) == instants
    right = frame[(frame.event == "right") & frame.index.isin(bounces)]
    assert list(right.index) == bounces and (right["v"] > 0).all()  # going up again
    assert frame.attrs["status"] == "finished"
    table = vector.to_pandas(mark=None)
    assert list(table.columns) == ["pair[0]", "pair[1]", "step"]  # as in the CSV
    assert (table["pair[1]"] == 2.0).all()
    assert list(vector.to_pandas().query("event == 'right'").index) == [0.5]
    with pytest.raises(ValueError, match="a logged signal is named 'step'"):
        vector.to_pandas(mark="step")


def test_to_xarray_keeps_vectors_and_the_event_log(ball, vector):
    pytest.importorskip("xarray")
    data = vector.to_xarray()
    assert data["pair"].dims == ("time", "pair_element") and data["pair"].shape[1] == 2
    assert np.array_equal(data["pair"].to_numpy(), vector["pair"])
    assert list(data["time"].to_numpy()) == list(vector.time)
    assert list(data["event"].to_numpy()).count("left") == 1
    events = ball.to_xarray()
    assert list(events["event_kind"].to_numpy()) == [e.kind for e in ball.events]
    assert np.array_equal(events["event_time"].to_numpy(), [e.time for e in ball.events])


def test_plot_draws_each_signal_and_marks_events(ball):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    figure = ball.plot(events="reset")
    axes = figure.get_axes()
    assert [ax.get_ylabel() for ax in axes] == ["x", "v"]
    line = axes[0].get_lines()[0]
    assert np.array_equal(line.get_xdata(), ball.time)
    marks = axes[0].collections[0].get_segments()
    assert sorted(segment[0][0] for segment in marks) == [e.time for e in
                                                          ball.events_of("reset")]
    assert len(ball.plot(["v"], events=False).get_axes()[0].collections) == 0
    with pytest.raises(KeyError, match="no logged signal 'y'"):
        ball.plot(["y"])
    import matplotlib.pyplot as plt

    plt.close("all")


@pytest.mark.parametrize("method, module, extra", [("to_pandas", "pandas", "pandas"),
                                                    ("to_xarray", "xarray", "xarray"),
                                                    ("plot", "matplotlib", "plot")])
def test_a_missing_library_names_the_extra(vector, monkeypatch, method, module, extra):
    monkeypatch.setitem(sys.modules, module, None)  # import fails as if not installed
    with pytest.raises(ImportError, match=rf"needs {module}, which is not installed: "
                                          rf"pip install 'blocksim\[{extra}\]'"):
        getattr(vector, method)()
