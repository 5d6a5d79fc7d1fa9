"""The FMU block with the tests' own FMUs (tests/fmi/c): model exchange with blocksim's
events, co-simulation, FMI 2.0 and 3.0, parameters, ports and the numba fallback."""
from __future__ import annotations

import math

import numpy as np
import pytest

import blocksim
from blocksim.errors import CompileError, SimulationError

from fmu_helpers import exact_x4, place, write_diagram

VERSIONS = (2, 3)


def ball_diagram(tmp_path, fmu, params=None, stop=3.0, **simulation):
    name = place(fmu, tmp_path)
    blocks = [{"id": "ball", "type": "FMU", "params": {"file": name, **(params or {})}},
              {"id": "h", "type": "Output"}, {"id": "v", "type": "Output"},
              {"id": "bounces", "type": "Output"}, {"id": "kicked", "type": "Output"}]
    wires = [{"src": f"ball.{p}", "dst": f"{p}.u"} for p in ("h", "v", "bounces", "kicked")]
    return write_diagram(tmp_path, blocks, wires, stop=stop, **simulation)


def run(path, **kwargs):
    diagram = blocksim.load(path, trust=True)
    return blocksim.simulate(diagram, **kwargs)


@pytest.mark.parametrize("version", VERSIONS)
def test_model_exchange_ball_impacts_are_located_to_machine_precision(tmp_path, build_fmu,
                                                                      version):
    results = run(ball_diagram(tmp_path, build_fmu("ball", version)))
    impacts = [ev.time for ev in results.events if ev.block == "ball" and ev.kind == "event"]
    g, e = 9.81, 0.7
    first = math.sqrt(2 * 1.0 / g)
    assert abs(impacts[0] - first) < 1e-12
    # each flight after an impact lasts 2 v / g with v = e^k sqrt(2 g h0)
    second = first + 2 * e * math.sqrt(2 * g * 1.0) / g
    assert abs(impacts[1] - second) < 1e-11
    bounces = results["bounces"]
    assert bounces[-1] == len(impacts)  # the Integer output, as a number
    assert np.all(results["h"] >= -1e-12)


@pytest.mark.parametrize("version", VERSIONS)
def test_fmu_parameters_come_from_the_block_and_diagram_parameters(tmp_path, build_fmu,
                                                                  version):
    path = ball_diagram(tmp_path, build_fmu("ball", version),
                        {"parameters": "h0 = drop; e = 0.5"}, stop=1.5)
    import json
    data = json.loads(path.read_text())
    data["parameters"] = {"drop": 2.0}
    path.write_text(json.dumps(data))
    results = run(path)
    assert results["h"][0] == 2.0  # the FMU's own initial state replaced the start value
    impact = next(ev.time for ev in results.events if ev.kind == "event")
    assert abs(impact - math.sqrt(2 * 2.0 / 9.81)) < 1e-12
    # a new value of the diagram parameter reaches the FMU without a new compile
    model = blocksim.compile(blocksim.load(path, trust=True))
    again = blocksim.simulate(model, params={"drop": 0.5})
    impact = next(ev.time for ev in again.events if ev.kind == "event")
    assert abs(impact - math.sqrt(2 * 0.5 / 9.81)) < 1e-12


@pytest.mark.parametrize("version", VERSIONS)
def test_terminate_simulation_ends_the_run_like_a_stop_block(tmp_path, build_fmu, version):
    path = ball_diagram(tmp_path, build_fmu("ball", version), {"parameters": "max_bounces = 2"})
    results = run(path)
    assert results.status == "stopped"
    stops = [ev for ev in results.events if ev.kind == "stop"]
    assert len(stops) == 1 and stops[0].block == "ball"
    assert results["bounces"][-1] == 2
    assert results.time[-1] == stops[0].time < 3.0


@pytest.mark.parametrize("version", VERSIONS)
def test_a_step_event_comes_at_the_end_of_the_step_that_asked(tmp_path, build_fmu, version):
    path = ball_diagram(tmp_path, build_fmu("ball", version), {"parameters": "kick_time = 0.2"},
                        stop=0.4)
    results = run(path)
    kicked = results["kicked"]
    first = results.time[np.flatnonzero(kicked)[0]]
    assert 0.2 <= first < 0.4  # at the first completed step at or after kick_time
    assert any(ev.kind == "event" and ev.time == first for ev in results.events)


@pytest.mark.parametrize("version", VERSIONS)
def test_time_events_of_an_fmu_come_exactly(tmp_path, build_fmu, version):
    name = place(build_fmu("square", version), tmp_path)
    blocks = [{"id": "sq", "type": "FMU", "params": {"file": name}},
              {"id": "y", "type": "Output"}, {"id": "count", "type": "Output"}]
    wires = [{"src": "sq.y", "dst": "y.u"}, {"src": "sq.count", "dst": "count.u"}]
    results = run(write_diagram(tmp_path, blocks, wires, stop=10.0))
    times = [ev.time for ev in results.events if ev.kind == "event"]
    assert times == [1.0, 2.0, 5.0]
    assert results["count"][-1] == 3


def math003(tmp_path, build_fmu, version, interface, step=0.1):
    square = place(build_fmu("square", version), tmp_path)
    part = place(build_fmu("math003", version), tmp_path)
    common = {"interface": interface, "communication_step": step}
    blocks = [
        {"id": "s1", "type": "FMU", "params": {"file": square, **common,
                                                 "parameters": "on1 = 1; off1 = 2; on2 = 5"}},
        {"id": "s2", "type": "FMU", "params": {"file": square, **common,
                                                 "parameters": "on1 = 3; off1 = 4; on2 = 6"}},
        {"id": "part", "type": "FMU", "params": {"file": part, **common}},
        {"id": "x3", "type": "Output"}, {"id": "x4", "type": "Output"}]
    wires = [{"src": "s1.y", "dst": "part.x1"}, {"src": "s2.y", "dst": "part.x2"},
             {"src": "part.x3", "dst": "x3.u"}, {"src": "part.x4", "dst": "x4.u"}]
    return run(write_diagram(tmp_path, blocks, wires, stop=10.0, rtol=1e-6, atol=1e-6))


@pytest.mark.parametrize("version", VERSIONS)
def test_math003_of_three_fmus_in_model_exchange_switches_exactly(tmp_path, build_fmu,
                                                                   version):
    results = math003(tmp_path, build_fmu, version, "model_exchange")
    located = [ev.time for ev in results.events if ev.block == "part" and ev.kind == "state"]
    assert len(located) == 3
    for got, want in zip(located, (1 + 2.5 / 6, 3 + 5 / 6, 5 + 5 / 6)):
        assert abs(got - want) < 1e-12
    assert np.max(np.abs(results["x4"])) <= 2.5 + 1e-9
    assert np.max(np.abs(results["x4"] - exact_x4(results.time))) < 1e-9


@pytest.mark.parametrize("version", VERSIONS)
def test_math003_as_co_simulation_is_exact_at_communication_points(tmp_path, build_fmu,
                                                                   version):
    step = 0.1
    results = math003(tmp_path, build_fmu, version, "co_simulation", step)
    t, x4 = results.time, results["x4"]
    error = np.abs(x4 - exact_x4(t))
    # held outputs: between communication points off by at most |dx4/dt| * step
    assert error.max() <= 6 * step + 1e-9
    assert error.max() > 0.5 * 6 * step  # (the coupling step shows, as the test case means)
    right = np.append(t[1:] != t[:-1], True)  # the right limit at each time
    points = right & (np.abs(t / step - np.round(t / step)) < 1e-9)
    assert error[points].max() < 1e-9
    assert not any(ev.kind == "state" for ev in results.events)  # discrete blocks only


@pytest.mark.parametrize("version", VERSIONS)
def test_co_simulation_ball_follows_the_model_exchange_one(tmp_path, build_fmu, version):
    fmu = build_fmu("ball", version)
    me = run(ball_diagram(tmp_path, fmu, {"interface": "model_exchange"}, stop=1.0))
    cs = run(ball_diagram(tmp_path, fmu, {"interface": "co_simulation",
                                          "communication_step": 0.05}, stop=1.0))
    grid = np.arange(0.0, 1.0, 0.05)
    cs_h = np.interp(grid, cs.time, cs["h"])  # (rows at hits: left limits first)
    me_h = np.interp(grid, me.time, me["h"])
    assert np.max(np.abs(cs_h - me_h)) < 0.2  # held over one step of 0.05 s
    assert cs["bounces"][-1] == me["bounces"][-1] == 1


def test_ports_and_rate_come_from_the_model_description(tmp_path, build_fmu):
    fmu = build_fmu("math003", 2)
    name = place(fmu, tmp_path)
    path = write_diagram(tmp_path, [
        {"id": "p", "type": "FMU", "params": {"file": name, "interface": "co_simulation"}},
        {"id": "one", "type": "Constant", "params": {"value": 1.0}}],
        [{"src": "one.y", "dst": "p.x1"}, {"src": "one.y", "dst": "p.x2"}])
    model = blocksim.compile(blocksim.load(path, trust=True))
    assert model.block_rates[0].period == 0.1  # the DefaultExperiment's stepSize
    from blocksim.blocktypes.blockspec import ParamValues
    from blocks.fmu import FMU
    p = ParamValues({"file": name, "interface": "auto", "parameters": "",
                     "communication_step": 0.0}, folder=str(tmp_path))
    assert [port.name for port in FMU().input_ports(p)] == ["x1", "x2"]
    assert [port.name for port in FMU().output_ports(p)] == ["x3", "x4"]
    assert FMU().feedthrough(p) == {"x3": ["x1", "x2"], "x4": []}


def test_port_names_follow_the_documented_rule():
    from blocksim.fmi.archive import port_name

    assert port_name("h") == "h"
    assert port_name("der(h)") == "der_h"
    assert port_name("body.v[2]") == "body_v_2"
    assert port_name("2nd") == "v_2nd"
    assert port_name("()") == "v"


def test_a_wrong_fmu_parameter_is_named_before_the_run(tmp_path, build_fmu):
    path = ball_diagram(tmp_path, build_fmu("ball", 2), {"parameters": "mass = 3"})
    with pytest.raises(CompileError, match="no parameter 'mass'"):
        blocksim.compile(blocksim.load(path, trust=True))


def test_an_fmu_error_status_fails_the_run_with_the_results_so_far(tmp_path, build_fmu):
    fmu = build_fmu("ball", 2, "_fails", {"FAIL_AT_TIME": "0.5"})
    with pytest.raises(SimulationError) as info:
        run(ball_diagram(tmp_path, fmu))
    error = info.value
    assert "failed on purpose" in str(error) and "ball" in str(error)
    assert error.results is not None and 0.0 < error.results.time[-1] <= 0.5


@pytest.mark.parametrize("version", VERSIONS)
def test_the_unpacked_fmu_is_removed_after_the_run(tmp_path, build_fmu, version, monkeypatch):
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    run(ball_diagram(tmp_path, build_fmu("ball", version), stop=0.1))
    assert list((tmp_path / "tmp").iterdir()) == []


def test_numba_backend_runs_an_fmu_diagram_in_python_and_says_so(tmp_path, build_fmu):
    pytest.importorskip("numba")
    results = run(ball_diagram(tmp_path, build_fmu("ball", 2), stop=0.5), backend="numba")
    assert any("FMU block runs in Python" in w for w in results.warnings)
    impact = next(ev.time for ev in results.events if ev.kind == "event")
    assert abs(impact - math.sqrt(2 / 9.81)) < 1e-12


@pytest.mark.parametrize("version", VERSIONS)
def test_terminate_in_co_simulation_stops_at_the_communication_point(tmp_path, build_fmu,
                                                                     version):
    path = ball_diagram(tmp_path, build_fmu("ball", version),
                        {"interface": "co_simulation", "communication_step": 0.1,
                         "parameters": "max_bounces = 1"})
    results = run(path)
    assert results.status == "stopped"
    stop = next(ev for ev in results.events if ev.kind == "stop")
    assert stop.time == pytest.approx(0.5)  # the step holding the first impact (0.4515)


@pytest.mark.parametrize("interface", ("model_exchange", "co_simulation"))
def test_fmi3_array_variables_are_vector_ports(tmp_path, build_fmu, interface):
    name = place(build_fmu("gain3", 3), tmp_path)
    blocks = [{"id": "g", "type": "FMU", "params": {"file": name, "interface": interface,
                                                    "communication_step": 0.1}},
              {"id": "u", "type": "Constant", "params": {"value": [1.0, -2.0, 0.5]}},
              {"id": "y", "type": "Output"}]
    wires = [{"src": "u.y", "dst": "g.u"}, {"src": "g.y", "dst": "y.u"}]
    results = run(write_diagram(tmp_path, blocks, wires, stop=1.0))
    y = np.asarray(results["y"]).reshape(len(results.time), -1)
    assert y.shape[1] == 3
    assert np.allclose(y[-1], [2.0, -4.0, 1.0])  # y = k u, elementwise, k = 2


def test_describe_shows_an_array_variable(tmp_path, build_fmu):
    from blocksim.fmi.describe import describe

    text = describe(build_fmu("gain3", 3))
    assert "Float64[3]" in text and "start 1 2 3" in text


@pytest.mark.parametrize("version", VERSIONS)
def test_co_simulation_from_a_start_between_communication_points(tmp_path, build_fmu,
                                                                 version):
    path = ball_diagram(tmp_path, build_fmu("ball", version),
                        {"interface": "co_simulation", "communication_step": 0.1}, stop=0.6,
                        start=0.05)
    results = run(path)
    assert results.status == "finished"
    h = results["h"]
    # free fall from h0 = 1 at t = 0.05 (the FMU's start): exact at the points after it
    at = np.flatnonzero(np.isclose(results.time, 0.3))[-1]
    assert h[at] == pytest.approx(1 - 9.81 / 2 * 0.25 ** 2, abs=1e-9)


def test_a_sweep_reaches_the_fmu_through_a_diagram_parameter(tmp_path, build_fmu):
    import json

    from blocksim.sweeps.api import sweep

    path = ball_diagram(tmp_path, build_fmu("ball", 3), {"parameters": "h0 = drop"}, stop=1.0)
    data = json.loads(path.read_text())
    data["parameters"] = {"drop": 1.0}
    path.write_text(json.dumps(data))
    table = sweep(str(path), grid={"drop": [0.5, 2.0]}, metrics=["time:ball.event:1"],
                  workers=1, trust=True)
    times = table.column("time:ball.event:1")
    assert times == pytest.approx([math.sqrt(2 * 0.5 / 9.81), math.sqrt(2 * 2.0 / 9.81)],
                                  abs=1e-12)
