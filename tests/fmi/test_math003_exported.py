"""Math 003 round trip: diagrams/math003.json split into three diagrams (source x1, source
x2, the x3/x4 part), each exported by blocksim as an FMU (blocksim.export_fmu), imported
back as three FMU blocks in one diagram and run by blocksim (issue 28's acceptance)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

import blocksim

from fmu_helpers import exact_x4, write_diagram

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from builders import diagram  # noqa: E402

REFERENCE = Path(__file__).resolve().parents[2] / "diagrams" / "math003.json"
SWITCHES = (17 / 12, 23 / 6, 35 / 6)  # x4 reaches +-x4_max = +-2.5


def _parts(data: dict) -> dict:
    return {b["id"]: b for b in data["blocks"] if b["type"] == "Subsystem"}


def _upstream(inner: dict, outport: str) -> list[dict]:
    """The blocks of a subsystem that feed its Outport `outport` (the Outport left out)."""
    feeds = {}
    for w in inner["wires"]:
        feeds.setdefault(w["dst"].split(".")[0], []).append(w["src"].split(".")[0])
    needed, todo = set(), list(feeds[outport])
    while todo:
        name = todo.pop()
        if name not in needed:
            needed.add(name)
            todo.extend(feeds.get(name, []))
    return [b for b in inner["blocks"] if b["id"] in needed]


def source_diagram(data: dict, name: str):
    """One square-wave source of part1 (its Steps and Sum) logged as Output `name`."""
    inner = _parts(data)["part1"]["diagram"]
    blocks = _upstream(inner, name) + [{"id": name, "type": "Output"}]
    ids = {b["id"] for b in blocks}
    wires = [(w["src"], w["dst"]) for w in inner["wires"] if w["dst"].split(".")[0] in ids]
    return diagram(blocks, wires, data["parameters"], **data["simulation"])


def x3_x4_diagram(data: dict):
    """part2 and part3 as they are, x1 and x2 top-level Inports (the FMU's inputs), x3 and
    x4 logged (its outputs); the x4 feedback stays inside."""
    parts = _parts(data)
    blocks = [parts["part2"], parts["part3"],
              {"id": "x1", "type": "Inport", "params": {"index": 1}},
              {"id": "x2", "type": "Inport", "params": {"index": 2}},
              {"id": "x3", "type": "Output"}, {"id": "x4", "type": "Output"}]
    wires = [("x1.y", "part2.x1"), ("x2.y", "part2.x2"), ("part3.x4", "part2.x4"),
             ("part2.x3", "part3.x3"), ("part2.x3", "x3.u"), ("part3.x4", "x4.u")]
    return diagram(blocks, wires, data["parameters"], **data["simulation"])


def run_as_three_fmus(folder: Path, fmi: int, kind: str, step: float = 0.1):
    """Export the three parts into `folder`, wire them as FMU blocks, run with blocksim."""
    data = json.loads(REFERENCE.read_text())
    parts = {"x1": source_diagram(data, "x1"), "x2": source_diagram(data, "x2"),
             "x34": x3_x4_diagram(data)}
    for name, d in parts.items():
        blocksim.export_fmu(d, folder / f"{name}.fmu", fmi=fmi, kind=kind)
    interface = {"me": "model_exchange", "cs": "co_simulation"}[kind]
    common = {"interface": interface, "communication_step": step}
    blocks = [{"id": name, "type": "FMU", "params": {"file": f"{name}.fmu", **common}}
              for name in parts]
    blocks += [{"id": "x3", "type": "Output"}, {"id": "x4", "type": "Output"}]
    wires = [{"src": "x1.x1", "dst": "x34.x1"}, {"src": "x2.x2", "dst": "x34.x2"},
             {"src": "x34.x3", "dst": "x3.u"}, {"src": "x34.x4", "dst": "x4.u"}]
    sim = data["simulation"]
    path = write_diagram(folder, blocks, wires, stop=sim["stop"], rtol=sim["rtol"],
                         atol=sim["atol"], output_interval=sim["output_interval"])
    return blocksim.simulate(blocksim.load(path, trust=True))


@pytest.mark.parametrize("fmi", [2, 3])
def test_math003_exported_as_three_model_exchange_fmus_switches_exactly(tmp_path, fmu_cache,
                                                                         fmi):
    # The part FMU's event indicators (blocksim's zero-crossing functions of x4 < x4_max,
    # x4 > -x4_max) are located by blocksim's engine on its dense output, to the float.
    results = run_as_three_fmus(tmp_path, fmi, "me")
    located = [ev.time for ev in results.events if ev.block == "x34" and ev.kind == "state"]
    assert len(located) == len(SWITCHES), located
    np.testing.assert_allclose(located, SWITCHES, rtol=0, atol=1e-9)
    assert np.max(np.abs(results["x4"])) <= 2.5 + 1e-9
    assert np.max(np.abs(results["x4"] - exact_x4(results.time))) < 1e-9


@pytest.mark.parametrize("fmi", [2, 3])
def test_math003_exported_as_co_simulation_fmus_is_exact_at_communication_points(
        tmp_path, fmu_cache, fmi):
    # Step 0.1: the sources switch on the grid and the part locates x4's switches inside
    # its doStep, so x4 is exact at the points; between them the master holds it, off by
    # up to |dx4/dt| h = 0.6.
    step = 0.1
    results = run_as_three_fmus(tmp_path, fmi, "cs", step)
    t = results.time
    error = np.abs(results["x4"] - exact_x4(t))
    right = np.append(t[1:] != t[:-1], True)  # the right limit at each time
    points = right & (np.abs(t / step - np.round(t / step)) < 1e-9)
    assert points.sum() > 90
    assert error[points].max() < 1e-9
    assert 0.5 * 6 * step < error.max() <= 6 * step + 1e-9


@pytest.mark.parametrize("fmi", [2, 3])
def test_an_exported_source_without_states_settles_at_its_events(tmp_path, fmu_cache, fmi):
    # blocksim's exported FMUs say valuesOfContinuousStatesChanged after every event (FMI
    # allows it); with no states to re-read the FMU block must not take that as a reset,
    # else its event iteration never settled (it did not, at t = 0).
    data = json.loads(REFERENCE.read_text())
    blocksim.export_fmu(source_diagram(data, "x1"), tmp_path / "x1.fmu", fmi=fmi)
    path = write_diagram(tmp_path, [{"id": "s", "type": "FMU", "params": {"file": "x1.fmu"}},
                                    {"id": "y", "type": "Output"}],
                         [{"src": "s.x1", "dst": "y.u"}], stop=10.0)
    results = blocksim.simulate(blocksim.load(path, trust=True))
    assert [ev.time for ev in results.events if ev.kind == "event"] == [1.0, 2.0, 5.0]
    want = ((results.time >= 1) & (results.time < 2)) | (results.time >= 5)
    right = np.append(results.time[1:] != results.time[:-1], True)
    np.testing.assert_array_equal(results["y"][right], want[right].astype(float))
