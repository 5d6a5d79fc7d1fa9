"""The sample hits of a run are counted before it starts: a rate that would need more than
the budget (1e7 by default, BLOCKSIM_MAX_HITS) or a common tick finer than the exact clock
is a CompileError naming the block and its sample time, at compile time (so `validate`
refuses it too) and for settings given to the Simulator; never an OverflowError."""
import dataclasses
import importlib.util
import json

import pytest
from builders import BENCHMARKS, block, diagram

from blocksim.cli.main import main
from blocksim.compiler import compile_diagram, limits
from blocksim.engine import Simulator
from blocksim.errors import CompileError
from blocksim.diagram.format import diagram_from_dict, load_diagram

HAS_NUMBA = importlib.util.find_spec("numba") is not None
BACKENDS = ["python", pytest.param("numba", marks=pytest.mark.skipif(
    not HAS_NUMBA, reason="numba is not installed"))]


def zoh(sample_time, stop=1.0, state=False, block_type="ZeroOrderHold"):
    blocks = [block("s", "Sine"), block("h", block_type, sample_time=sample_time),
              block("y", "Output")]
    wires = [("s.y", "h.u"), ("h.y", "y.u")]
    if state:
        blocks.append(block("i", "Integrator"))
        wires.append(("h.y", "i.u"))
    return diagram(blocks, wires, stop=stop)


def refusal(d) -> str:
    with pytest.raises(CompileError) as info:
        compile_diagram(d)
    assert info.value.block == "h" and "\n" not in str(info.value)
    return str(info.value)


@pytest.mark.parametrize("block_type", ["ZeroOrderHold", "UnitDelay"])
def test_a_rate_with_too_many_hits_is_refused_naming_the_block(block_type):
    message = refusal(zoh(1e-9, stop=10.0, block_type=block_type))
    assert "its sample time, discrete 1e-09 s, makes about 1e+10 sample hits" in message
    assert "between 0 and 10" in message and "at most 10000000" in message
    assert "BLOCKSIM_MAX_HITS" in message


def test_the_count_is_exact_near_the_budget():
    # 1e-7 s over 1 s: hits 0 .. 1e7, one more than the budget.
    assert "makes 10000001 sample hits" in refusal(zoh(1e-7))
    assert compile_diagram(zoh(1e-7, stop=0.5)).rates  # 5000001 hits: allowed


@pytest.mark.parametrize("sample_time", [1e-300, 5e-324])
def test_periods_below_any_clock_are_refused_without_overflow(sample_time):
    message = refusal(zoh(sample_time))
    assert "sample hits" in message and "Error" not in message


@pytest.mark.parametrize("sample_time, stop", [([0.1, 1e-300], 1.0), (5e-324, 5e-320),
                                               (1e-300, 1e-294)])
def test_a_common_tick_beyond_the_exact_clock_is_refused(sample_time, stop):
    # Few hits, but the clock's tick would have no double (its integers overflow).
    message = refusal(zoh(sample_time, stop=stop))
    assert "too fine for the exact clock" in message and "2**-1000" in message


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_huge_period_runs_on_both_backends(backend):
    # Its ticks are beyond int64: the numba loop leaves the hits to Python.
    d = zoh(1e300, state=True)
    model = compile_diagram(d)
    r = Simulator(model, dataclasses.replace(model.settings, backend=backend)).run()
    assert r.status == "finished" and r.stats["hits"] == 1


def test_several_rates_are_counted_together():
    blocks = [block("s", "Sine"), block("a", "ZeroOrderHold", sample_time=1e-6),
              block("h", "ZeroOrderHold", sample_time=5e-7), block("y", "Output"),
              block("y2", "Output")]
    d = diagram(blocks, [("s.y", "a.u"), ("s.y", "h.u"), ("a.y", "y.u"), ("h.y", "y2.u")],
                stop=4.0)
    message = refusal(d)  # 8e6 + 4e6 hits: each rate alone is within the budget
    assert "makes 8000001 sample hits" in message
    assert "12000002 with the other rates" in message


def test_the_budget_is_raised_by_the_environment(monkeypatch):
    monkeypatch.setenv("BLOCKSIM_MAX_HITS", "2e7")
    assert limits.max_hits() == 2e7
    assert compile_diagram(zoh(1e-7)).rates
    monkeypatch.setenv("BLOCKSIM_MAX_HITS", "nonsense")
    assert limits.max_hits() == limits.MAX_HITS


def test_settings_given_to_the_simulator_are_counted_too():
    model = compile_diagram(zoh(1e-5))
    with pytest.raises(CompileError, match="makes 100000001 sample hits between 0 and 1000"):
        Simulator(model, dataclasses.replace(model.settings, stop=1000.0))


def test_the_1khz_pi_benchmark_is_allowed():
    # The benchmark runs the diagram to 1000 s at 1 kHz: 1,000,001 hits.
    d = load_diagram(BENCHMARKS / "discrete_pi.json")
    model = compile_diagram(d, None, d.simulation.replaced(stop=1000.0))
    assert [rate.period for rate in model.rates] == [0.001]


def test_triggered_rates_are_not_counted():
    # A trigger at 1 MHz would be 1e8 hits as a clock; a triggered rate's hits are its
    # trigger's edges (events, held to the event budget), and the diagram compiles.
    inner = [{"id": "x", "type": "Inport"}, {"id": "out", "type": "Outport"},
             {"id": "n", "type": "UnitDelay", "params": {"sample_time": -1}}]
    sub = {"id": "sub", "type": "TriggeredSubsystem", "params": {},
           "diagram": {"blocks": inner, "wires": [{"src": "x.y", "dst": "n.u"},
                                                  {"src": "n.y", "dst": "out.u"}]}}
    data = {"format": "blocksim", "version": 1, "simulation": {"stop": 100.0},
            "blocks": [{"id": "ctl", "type": "Pulse", "params": {"period": 1e-6}},
                       {"id": "clk", "type": "Clock"}, sub, {"id": "y", "type": "Output"}],
            "wires": [{"src": "ctl.y", "dst": "sub.trigger"}, {"src": "clk.y", "dst": "sub.x"},
                      {"src": "sub.out", "dst": "y.u"}]}
    model = compile_diagram(diagram_from_dict(data, source="<test>"), None,
                            diagram_from_dict(data).simulation.replaced(stop=2.0))
    assert model.rates == () and len(model.trigger_slots) == 1


@pytest.mark.parametrize("command", ["validate", "run"])
def test_the_cli_refuses_with_one_line_and_exit_2(tmp_path, capsys, command):
    path = tmp_path / "d.json"
    data = {"format": "blocksim", "version": 1, "simulation": {"stop": 1.0},
            "blocks": [block("s", "Sine"), block("h", "ZeroOrderHold", sample_time=5e-324),
                       block("y", "Output")],
            "wires": [{"src": "s.y", "dst": "h.u"}, {"src": "h.y", "dst": "y.u"}]}
    path.write_text(json.dumps(data))
    assert main([command, str(path), "-q"] if command == "run" else [command, str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "block 'h'" in err[0] and "sample hits" in err[0]
    assert "Overflow" not in err[0]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_tick_far_finer_than_the_doubles_at_t_runs(backend):
    # [0.1, 1e-20]: the common tick is about 1e-37 s, 1e21 ticks per double near t = 1;
    # finding the first hit after t once stepped through them one by one.
    d = zoh([0.1, 1e-20], state=True)
    model = compile_diagram(d)
    r = Simulator(model, dataclasses.replace(model.settings, backend=backend)).run()
    assert r.status == "finished" and r.stats["hits"] in (10, 11)
