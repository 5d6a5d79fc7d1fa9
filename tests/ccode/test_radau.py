"""Solver radau in C (`runtime/bs_radau.c`): the C backend and co-simulation FMUs take the
Python backend's radau steps, locate its events and fail as it fails.

On this machine the C run equals the Python run bit for bit (the C code sums and factorises
in the order of the BLAS numpy and scipy call); the tests allow 1e-9, the acceptance's
bound, for a machine whose BLAS kernels round differently.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import blocksim
from blocksim.errors import SimulationError

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from both_backends import HAS_CC  # noqa: E402
from builders import block, diagram  # noqa: E402

pytestmark = pytest.mark.skipif(not HAS_CC, reason="no C compiler")
ROOT = Path(__file__).resolve().parents[2]


def _same_run(py, c, atol: float = 1e-9) -> None:
    """The same events at the same instants (1e-9 s), the same rows and values (atol)."""
    assert [(e.block, e.kind) for e in c.events] == [(e.block, e.kind) for e in py.events]
    assert max((abs(a.time - b.time) for a, b in zip(py.events, c.events)), default=0.0) <= 1e-9
    assert len(c.time) == len(py.time)
    np.testing.assert_allclose(c.time, py.time, rtol=0, atol=1e-9)
    for name in py.signals:
        np.testing.assert_allclose(c[name], py[name], rtol=0, atol=atol, err_msg=name)
    assert c.status == py.status


def _thermostat(**simulation):
    """A room heated by a relay on a sensor with a microsecond lag: stiff (eigenvalue -1e6),
    with state events on the sensor's reading (located on integrated states)."""
    blocks = [block("T", "Integrator", x0=15.0), block("S", "Integrator", x0=15.0),
              block("relay", "Relay", on_point=21.0, off_point=19.0, on_value=0.0,
                    off_value=1.0, initial="off"),
              block("power", "Gain", k=30.0), block("ambient", "Constant", value=5.0),
              block("balance", "Sum", signs="+-+"), block("room", "Gain", k=1.0 / 50.0),
              block("lag", "Sum", signs="+-"), block("sensor", "Gain", k=1e6),
              block("temperature", "Output"), block("reading", "Output")]
    wires = [("S.y", "relay.u"), ("relay.y", "power.u"), ("power.y", "balance.u1"),
             ("T.y", "balance.u2"), ("ambient.y", "balance.u3"), ("balance.y", "room.u"),
             ("room.y", "T.u"), ("T.y", "lag.u1"), ("S.y", "lag.u2"), ("lag.y", "sensor.u"),
             ("sensor.y", "S.u"), ("T.y", "temperature.u"), ("S.y", "reading.u")]
    settings = dict(stop=200.0, solver="radau", rtol=1e-8, atol=1e-8, output_interval=0.5)
    settings.update(simulation)
    return diagram(blocks, wires, **settings)


@pytest.mark.parametrize("name", ["c5_two_state.json", "bouncing_ball_contact.json"])
def test_shipped_radau_diagram_on_c_takes_pythons_steps(name):
    model = blocksim.compile(blocksim.load(ROOT / "diagrams" / name))
    py = blocksim.simulate(model)
    c = blocksim.simulate(model, backend="c")
    assert not any("runs in Python" in w for w in c.warnings), c.warnings
    assert c.stats["steps"] == py.stats["steps"]
    assert c.stats["nfev"] == py.stats["nfev"]
    _same_run(py, c)


def test_stiff_relay_on_c_locates_its_switches_like_python():
    model = blocksim.compile(_thermostat())
    py = blocksim.simulate(model)
    c = blocksim.simulate(model, backend="c")
    switches = [e.time for e in py.events if e.block == "relay" and e.kind == "state"]
    assert len(switches) >= 6  # (heating and cooling cycles of the room)
    assert c.stats["steps"] == py.stats["steps"]
    _same_run(py, c)


def test_radau_failure_on_c_ends_with_pythons_one_line_message():
    # a block's value becomes NaN at t = 0.1798 (1e308 * 10t overflows, inf - inf):
    # Newton's iteration cannot converge, the step shrinks to nothing
    blocks = [block("t", "Ramp", slope=1.0),
              block("f", "Expression", formula="(1e308*(10*u)) - (1e308*(10*u))"),
              block("x", "Integrator"), block("y", "Output")]
    model = blocksim.compile(diagram(blocks, [("t.y", "f.u"), ("f.y", "x.u"), ("x.y", "y.u")],
                                     stop=2.0, solver="radau"))
    failures = {}
    for backend in ("python", "c"):
        with pytest.raises(SimulationError) as info:
            blocksim.simulate(model, backend=backend)
        failures[backend] = info.value
    py, c = failures["python"], failures["c"]
    assert "\n" not in str(c)
    assert str(c) == str(py).replace("(solver radau)", "(solver radau, c)")
    assert "Required step size is less than spacing between numbers" in str(c)
    assert (c.block, c.port) == (py.block, py.port) == ("f", "y")
    assert len(c.results.time) == len(py.results.time)  # the rows so far are kept


def test_other_implicit_solvers_run_in_python_naming_the_solver():
    model = blocksim.compile(_thermostat(stop=5.0))
    c = blocksim.simulate(model, backend="c", solver="bdf")
    assert any("backend c:" in w and "solver 'bdf' runs in Python" in w for w in c.warnings)


def test_transport_delay_on_radau_runs_in_c_with_pythons_steps(tmp_path):
    # The radau stepper records the input histories from its own dense output (the
    # collocation polynomial), as the Python backend records scipy's Radau dense output.
    import json

    data = json.loads((ROOT / "diagrams" / "dde_delay.json").read_text(encoding="utf-8"))
    data["simulation"]["solver"] = "radau"
    path = tmp_path / "dde_radau.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    model = blocksim.compile(blocksim.load(path))
    py = blocksim.simulate(model)
    c = blocksim.simulate(model, backend="c")
    assert not c.warnings  # no "runs in Python" notice
    assert c.stats["steps"] == py.stats["steps"] and c.stats["nfev"] == py.stats["nfev"]
    _same_run(py, c)


def test_one_model_on_c_switches_between_dopri5_and_radau():
    # Each solver has its own library and its own pool of C instances in the model's cache:
    # an instance of one must never run the other's stepper.
    blocks = [block("x", "Integrator", x0=1.0), block("k", "Gain", k=-3.0),
              block("y", "Output")]
    wires = [("x.y", "k.u"), ("k.y", "x.u"), ("x.y", "y.u")]
    model = blocksim.compile(diagram(blocks, wires, stop=2.0, rtol=1e-8, atol=1e-10))
    for solver in ("radau", "dopri5", "radau", "dopri5"):
        py = blocksim.simulate(model, solver=solver)
        c = blocksim.simulate(model, backend="c", solver=solver)
        assert not c.warnings and c.stats["steps"] == py.stats["steps"], solver
        _same_run(py, c)
        np.testing.assert_allclose(c["y"], np.exp(-3.0 * c.time), rtol=0, atol=1e-7)
