"""Friction that sticks: diagrams/physical/drivetrain_friction.json (motor inertia,
ElastoBacklash, load inertia on a Friction bearing, a sinusoidal torque) through hundreds
of stick/slip transitions, against an event-driven scipy reference of the same equations
(drivetrain_reference.py, rtol 1e-12); and the same system from signal blocks, whose
CoulombViscousFriction cannot stick."""
import json

import numpy as np
import pytest

import blocksim
import drivetrain_reference as reference
from blocksim.api.builder import DiagramBuilder
from blocksim.errors import SimulationError
from builders import DIAGRAMS

DIAGRAM = DIAGRAMS / "physical" / "drivetrain_friction.json"


def parameters() -> dict:
    return json.loads(DIAGRAM.read_text())["parameters"]


@pytest.fixture(scope="module")
def runs():
    p = parameters()
    results = blocksim.simulate(blocksim.load(DIAGRAM))
    drivetrain = reference.Drivetrain(
        J1=p["J1"], J2=p["J2"], b=p["b"], c=p["c"], d=p["d"], tau_c=p["tau_c"],
        tau_s=p["tau_s"], dv=p["dv"], amplitude=p["A"], f=p["f"])
    return results, reference.simulate(drivetrain, stop=float(results.time[-1]))


def test_the_load_sticks_and_slips_hundreds_of_times_as_the_reference(runs):
    r, ref = runs
    assert r.status == "finished" and r.time[-1] == 20.0
    transitions = [(e.time, e.kind) for e in r.events if e.block == "friction"]
    assert len(transitions) >= 300
    assert [kind for _, kind in transitions] == [kind for _, kind in ref.transitions]
    # measured: within 4e-9 s (a speed that crosses 0 at a small slope, where the time
    # error is the speed's error over the deceleration), most within 1e-10 s
    errors = np.abs(np.array([t for t, _ in transitions]) - [t for t, _ in ref.transitions])
    assert np.max(errors) < 1e-8 and np.median(errors) < 1e-10
    # sliding alternates with sticking: every slide ends stuck
    kinds = [kind for _, kind in transitions]
    assert all(a != "stuck" and b == "stuck" for a, b in zip(kinds[::2], kinds[1::2]))


def test_the_angles_match_the_reference_within_1e_8_rad(runs):
    r, ref = runs
    y = ref(r.time)  # on every row, the event instants' two rows included
    assert np.max(np.abs(r["phi_motor"] - y[:, 0])) < 1e-8
    assert np.max(np.abs(r["phi_load"] - y[:, 2])) < 1e-8
    assert np.ptp(r["phi_load"]) > 0.01  # the load does move


def test_a_stuck_load_stands_still(runs):
    r, _ = runs
    t, w = r.time, r["w_load"]
    stuck_since = None
    for e in r.events:
        if e.block != "friction":
            continue
        if e.kind == "stuck":
            stuck_since = e.time
        elif stuck_since is not None:
            inside = (t > stuck_since) & (t < e.time)
            assert np.all(w[inside] == 0.0), (stuck_since, e.time)
            stuck_since = None


def signal_flow_drivetrain(stop: float) -> DiagramBuilder:
    """The drivetrain from signal blocks: four integrators, the backlash as a DeadZone
    spring (no contact damping) and the load's friction a CoulombViscousFriction."""
    p = parameters()
    d = DiagramBuilder(stop=stop, rtol=1e-10, atol=1e-12, output_interval=0.01, parameters=p)
    drive = d.add("Sine", id="drive", amplitude="A", frequency="f")
    phi1, w1 = d.add("Integrator", id="phi1"), d.add("Integrator", id="w1")
    phi2, w2 = d.add("Integrator", id="phi2"), d.add("Integrator", id="w2")
    rel = d.add("Sum", id="phi_rel", signs="+-")
    gap = d.add("DeadZone", id="gap", start="-b/2", end="b/2")
    spring = d.add("Gain", id="spring", k="c")
    friction = d.add("CoulombViscousFriction", id="friction", offset="tau_c", gain="dv")
    motor = d.add("Expression", id="motor", inputs="tau, tb", formula="(tau + tb)/J1")
    load = d.add("Expression", id="load", inputs="tb, tf", formula="(-tb - tf)/J2")
    w1.y >> phi1.u
    w2.y >> phi2.u
    phi2.y >> rel.u1
    phi1.y >> rel.u2
    rel.y >> gap.u
    gap.y >> spring.u
    drive.y >> motor.tau
    spring.y >> motor.tb
    motor.y >> w1.u
    spring.y >> load.tb
    w2.y >> friction.u
    friction.y >> load.tf
    load.y >> w2.u
    phi2.y >> d.add("Output", id="phi_load").u
    return d


def test_signal_flow_friction_cannot_stick():
    # The contrast: a Coulomb law as a function of the speed flips its sign at every
    # zero crossing, so where the load should stick the crossings never settle.
    with pytest.raises(SimulationError, match=r"event iteration did not settle.*friction"):
        signal_flow_drivetrain(stop=1.0).simulate()
