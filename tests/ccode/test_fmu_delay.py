"""Transport delays in exported FMUs, run by fmpy (not blocksim): co-simulation records
the FMU's own dopri5 steps as blocksim does, model exchange the importer's completed steps
(cubic Hermite pieces, docs/fmu_export.md), and an FMU state carries the input history."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import blocksim

fmpy = pytest.importorskip("fmpy")
from fmpy.validation import validate_fmu  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from builders import block, diagram  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
DDE = ROOT / "diagrams" / "dde_delay.json"  # x' = -x(t - 1): a delay in a feedback loop
PID = ROOT / "diagrams" / "pathsim_antiwindup_pid.json"  # a delayed plant, saturation events


def _at_points(result, fmu_result, name: str) -> float:
    """The largest difference at fmpy's output points that are no event instants (where
    blocksim keeps both limits): blocksim's row at the same time."""
    events = np.array([e.time for e in result.events])
    worst = 0.0
    for t, value in zip(fmu_result["time"], fmu_result[name]):
        rows = np.flatnonzero(result.time == t)
        if len(rows) != 1 or (events.size and np.min(np.abs(events - t)) < 1e-9):
            continue
        worst = max(worst, abs(value - result[name][rows[0]]))
    return worst


@pytest.mark.parametrize("fmi", [2, 3])
@pytest.mark.parametrize("path, stop", [(DDE, 10.0), (PID, 40.0)], ids=["dde", "pid"])
def test_co_simulation_with_a_delay_in_a_loop_equals_blocksim(tmp_path, fmi, path, stop):
    d = blocksim.load(path)
    exported = blocksim.export_fmu(d, tmp_path / "d.fmu", fmi=fmi, kind="cs")
    assert validate_fmu(str(exported.path)) == []
    r = fmpy.simulate_fmu(str(exported.path), stop_time=stop,
                          output_interval=d.simulation.output_interval)
    res = blocksim.simulate(d, stop_time=stop)
    for name in (o.name for o in exported.variables.outputs):
        assert _at_points(res, r, name) <= 1e-9, name


@pytest.mark.parametrize("fmi", [2, 3])
def test_model_exchange_with_a_delay_in_a_loop_is_within_the_hermite_bound(tmp_path, fmi):
    # The history is recorded at fmpy's completed steps (every 0.01 s here): pieces exact
    # to h**4 / 384 max|x''''| = 2.6e-11 (x is a polynomial of degree k on [k - 1, k]),
    # fed back through x' = -x(t - 1) over 10 s; CVode at the diagram's rtol 1e-12.
    d = blocksim.load(DDE)
    exported = blocksim.export_fmu(d, tmp_path / "d.fmu", fmi=fmi, kind="me")
    assert validate_fmu(str(exported.path)) == []
    r = fmpy.simulate_fmu(str(exported.path), stop_time=10.0, output_interval=0.01)
    res = blocksim.simulate(d)
    assert _at_points(res, r, "x") <= 1e-9
    # the kinks at 1, 2, ... are time events of the FMU (nextEventTime), as in blocksim
    breakpoints = sorted({t for t in r["time"] if np.sum(r["time"] == t) == 2})
    np.testing.assert_allclose(breakpoints, [e.time for e in res.events], rtol=0, atol=1e-12)


def test_model_exchange_error_falls_with_the_fourth_power_of_the_step(tmp_path):
    # The plant's output after a 2 s delay, in a loop with a saturating PID (crossings):
    # halving fmpy's step (its output interval) divides the error by about 16 (measured:
    # 2.4e-6 at 0.1 s, 1.4e-7 at 0.05 s, 1.3e-8 at 0.025 s).
    d = blocksim.load(PID)
    exported = blocksim.export_fmu(d, tmp_path / "d.fmu", kind="me")
    res = blocksim.simulate(d)
    errors = []
    for interval in (0.1, 0.05):
        r = fmpy.simulate_fmu(str(exported.path), stop_time=200.0, output_interval=interval)
        errors.append(_at_points(res, r, "x"))
    assert errors[1] < 1e-6 and errors[1] < errors[0] / 8, errors


def _slave(path: Path, tmp_path: Path, fmi: int):
    from fmpy import extract, read_model_description
    from fmpy.fmi2 import FMU2Slave
    from fmpy.fmi3 import FMU3Slave

    md = read_model_description(str(path))
    folder = extract(str(path), unzipdir=str(tmp_path / f"x{fmi}"))
    if fmi == 2:
        fmu = FMU2Slave(guid=md.guid, unzipDirectory=folder,
                        modelIdentifier=md.coSimulation.modelIdentifier, instanceName="d")
        fmu.instantiate()
        fmu.setupExperiment(startTime=0.0)
    else:
        fmu = FMU3Slave(guid=md.guid, unzipDirectory=folder,
                        modelIdentifier=md.coSimulation.modelIdentifier, instanceName="d")
        fmu.instantiate()
    fmu.enterInitializationMode()
    fmu.exitInitializationMode()
    vr = next(v.valueReference for v in md.modelVariables if v.name == "x")
    read = fmu.getReal if fmi == 2 else fmu.getFloat64
    return fmu, lambda: read([vr])[0]


def _advance(fmu, x, t: float, until: float, h: float = 0.1) -> tuple[float, list[float]]:
    values = []
    while t < until - 1e-12:
        fmu.doStep(t, h)
        t += h
        values.append(x())
    return t, values


@pytest.mark.parametrize("fmi", [2, 3])
def test_an_fmu_state_carries_the_input_history(tmp_path, fmi):
    # Saved at 2.5 s (the ring holds x on [1.5, 2.5]), the FMU runs on till the ring
    # has wrapped round (60 records: about 2.5 s of this run's steps); restored (also from
    # its serialised bytes) it runs the same 3 s again to the same values.
    d = blocksim.load(DDE)
    next(b for b in d.blocks if b.id == "delay").params["buffer_size"] = 60
    path = blocksim.export_fmu(d, tmp_path / "d.fmu", fmi=fmi, kind="cs").path
    fmu, x = _slave(path, tmp_path, fmi)
    t, _ = _advance(fmu, x, 0.0, 2.5)
    get = fmu.getFMUstate if fmi == 2 else fmu.getFMUState
    put = fmu.setFMUstate if fmi == 2 else fmu.setFMUState
    state = get()
    serialised = fmu.serializeFMUstate(state) if fmi == 2 else fmu.serializeFMUState(state)
    _, first = _advance(fmu, x, t, 5.5)
    _, _ = _advance(fmu, x, 5.5, 8.0)  # the ring moves on (1 s of history is kept)
    put(state)
    _, again = _advance(fmu, x, t, 5.5)
    assert again == first
    restored = (fmu.deSerializeFMUstate(serialised) if fmi == 2
                else fmu.deserializeFMUState(serialised))
    put(restored)
    _, once_more = _advance(fmu, x, t, 5.5)
    assert once_more == first
    res = blocksim.simulate(d)
    rows = [int(np.flatnonzero(np.isclose(res.time, 2.5 + 0.1 * (k + 1)))[-1])
            for k in range(len(first))]
    np.testing.assert_allclose(first, res["x"][rows], rtol=0, atol=1e-9)
    fmu.terminate()
    fmu.freeInstance()


def test_a_full_history_fails_the_fmu_naming_the_block(tmp_path):
    d = diagram([block("s", "Sine"), block("d", "TransportDelay", delay=5.0, buffer_size=8),
                 block("i", "Integrator"), block("y", "Output")],
                [("s.y", "d.u"), ("d.y", "i.u"), ("i.y", "y.u")], stop=10.0)
    path = blocksim.export_fmu(d, tmp_path / "d.fmu", kind="cs").path
    messages = []

    def logger(component, instance, status, category, message):
        messages.append(message.decode())

    with pytest.raises(Exception):
        fmpy.simulate_fmu(str(path), stop_time=10.0, logger=logger)
    assert any("block 'd'" in m and "buffer_size = 8" in m for m in messages), messages
