"""Sample times in compiled models: resolved rates, hits at exact times, the hit order
(outputs from the states before the update), refused sample times, discrete-only diagrams."""
from fractions import Fraction

import numpy as np
import pytest

import blocksim
from blocksim.compiler import compile_diagram
from blocksim.errors import CompileError
from blocksim.blocktypes.sampletime import CONSTANT_TIME, CONTINUOUS_TIME, SampleTime
from builders import block, diagram


def rates(model):
    return dict(zip(model.block_ids, model.block_rates))


def counter(period=0.1, offset=0.0, stop=1.0, **settings):
    """n_(k+1) = n_k + 1 from UnitDelay and Sum: a difference equation, no continuous state."""
    blocks = [block("one", "Constant", value=1.0), block("add", "Sum", signs="++"),
              block("n", "UnitDelay", sample_time=[period, offset]), block("y", "Output")]
    wires = [("one.y", "add.u1"), ("n.y", "add.u2"), ("add.y", "n.u"), ("n.y", "y.u")]
    return diagram(blocks, wires, stop=stop, **settings)


def test_rates_are_resolved_through_the_loop():
    model = compile_diagram(counter())
    found = rates(model)
    assert found["n"] == found["add"] == found["y"] == SampleTime("discrete", 0.1, 0.0)
    assert found["one"] == CONSTANT_TIME
    assert model.n_states == 0 and len(model.rates) == 1


def test_a_discrete_only_diagram_counts_its_hits():
    r = blocksim.simulate(counter(stop=1.0))
    # right limits at t_k hold n = k (output before the update: hit k sees n_k = k), left
    # limits k - 1; the start has one row (no left limit)
    assert r.time[0] == 0.0 and r["y"][0] == 0.0 and r.time[1] > 0.0
    for k in range(1, 11):
        t = float(Fraction(k, 10))
        rows = np.flatnonzero(r.time == t)
        assert len(rows) == 2 and r["y"][rows[-1]] == k and r["y"][rows[0]] == k - 1


def test_an_offset_delays_the_first_hit():
    r = blocksim.simulate(counter(period=0.5, offset=0.2, stop=2.0))
    hits = sorted({t for t in r.time.tolist() if np.count_nonzero(r.time == t) == 2})
    assert hits == [0.2, 0.7, 1.2, 1.7]


def test_hits_stay_on_the_integer_grid_over_a_long_run():
    r = blocksim.simulate(counter(period=0.1, stop=1000.0, output_interval=100.0))
    hits = r.time[np.flatnonzero(np.diff(r.time) == 0.0)]  # left and right limit rows
    assert len(hits) == 10000
    assert all(t == float(Fraction(k, 10)) for k, t in enumerate(hits.tolist(), start=1))
    assert r["y"][-1] == 10000.0


def test_a_continuous_input_makes_an_inherited_block_continuous():
    blocks = [block("s", "Sine"), block("g", "Gain", k=2.0), block("h", "ZeroOrderHold",
                                                                    sample_time=0.25),
              block("k", "Gain", k=3.0), block("y", "Output")]
    wires = [("s.y", "g.u"), ("g.y", "h.u"), ("h.y", "k.u"), ("k.y", "y.u")]
    found = rates(compile_diagram(diagram(blocks, wires)))
    assert found["s"] == found["g"] == CONTINUOUS_TIME
    assert found["h"] == found["k"] == found["y"] == SampleTime("discrete", 0.25, 0.0)


@pytest.mark.parametrize("sample_time, message", [
    (-0.5, "the period must be > 0"), ([0.1, 0.1], "0 <= offset < period"),
    ([0.1, -0.05], "0 <= offset < period"), (0, "a period of 0"),
])
def test_refused_sample_times_name_the_block_and_parameter(sample_time, message):
    blocks = [block("c", "Constant"), block("d", "UnitDelay", sample_time=sample_time),
              block("y", "Output")]
    with pytest.raises(CompileError, match=message) as info:
        compile_diagram(diagram(blocks, [("c.y", "d.u"), ("d.y", "y.u")]))
    assert info.value.block == "d" and "'sample_time'" in str(info.value)


def test_an_inherited_discrete_block_needs_a_discrete_input():
    blocks = [block("s", "Sine"), block("d", "UnitDelay", sample_time=-1), block("y", "Output")]
    with pytest.raises(CompileError, match="needs a discrete rate") as info:
        compile_diagram(diagram(blocks, [("s.y", "d.u"), ("d.y", "y.u")]))
    assert info.value.block == "d"


def test_an_inherited_delay_takes_the_rate_of_its_input():
    blocks = [block("c", "Constant"), block("h", "ZeroOrderHold", sample_time=0.5),
              block("d", "UnitDelay", sample_time=-1), block("y", "Output")]
    model = compile_diagram(diagram(blocks, [("c.y", "h.u"), ("h.y", "d.u"), ("d.y", "y.u")]))
    assert rates(model)["d"] == SampleTime("discrete", 0.5, 0.0) and len(model.rates) == 1


def test_two_rates_share_their_coinciding_hits():
    blocks = [block("c", "Clock"), block("fast", "ZeroOrderHold", sample_time=0.2),
              block("slow", "ZeroOrderHold", sample_time=0.3), block("f", "Output"),
              block("s", "Output")]
    wires = [("c.y", "fast.u"), ("c.y", "slow.u"), ("fast.y", "f.u"), ("slow.y", "s.u")]
    r = blocksim.simulate(diagram(blocks, wires, stop=1.2, output_interval=1.2))
    hits = sorted({t for t in r.time.tolist() if np.count_nonzero(r.time == t) == 2})
    expected = sorted({float(Fraction(k, 5)) for k in range(1, 7)} |
                      {float(Fraction(3 * k, 10)) for k in range(1, 5)})
    assert hits == expected  # 0.6 and 1.2 are one instant each, 0.6 exactly (not 3 * 0.2)
    last = np.flatnonzero(r.time == 1.2)[-1]
    assert r["f"][last] == r["s"][last] == 1.2
