"""Networks whose states are not independent (high-index DAEs): the compiler differentiates
the constraints (Pantelides) and keeps as many states as are free (dummy derivatives).

Every case has a closed-form solution, so the tolerances are those of the acceptance:
positions tied by a constraint to 1e-12, accelerations to 1e-10.
"""
import numpy as np
import pytest

from blocksim.api.builder import DiagramBuilder

# An acceleration sensor is not in the library: declared here, it also makes the compiler
# differentiate a position twice through the constraint.
ACCELERATION_SENSOR = {
    "name": "AccelerationSensor",
    "connectors": [{"name": "flange", "domain": "translational"}],
    "outputs": ["a"],
    "variables": [{"name": "v", "unit": "m/s"}],
    "equations": ["flange.f = 0", "v = der(flange.s)", "a = der(v)"]}

F, M1, M2 = 2.0, 1.0, 3.0
L1, L2, ROD = 0.2, 0.4, 0.5  # lengths of mass 1, mass 2 and the rod


def two_masses(rod: bool) -> DiagramBuilder:
    """A force F on mass 1, which pushes mass 2 through a rod or directly (rigidly)."""
    d = DiagramBuilder(stop=2.0, rtol=1e-10, atol=1e-12, output_interval=0.05)
    d.component(ACCELERATION_SENSOR)
    m1 = d.add("Mass", id="m1", m=M1, L=L1, s0=0.0)
    m2 = d.add("Mass", id="m2", m=M2, L=L2, s0=L1 / 2 + (ROD if rod else 0.0) + L2 / 2)
    force = d.add("ConstantForce", id="F", f=F)
    d.connect(force.flange, m1.flange_a)
    if rod:
        link = d.add("Rod", id="rod", L=ROD)
        d.connect(m1.flange_b, link.flange_a)
        d.connect(link.flange_b, m2.flange_a)
    else:
        d.connect(m1.flange_b, m2.flange_a)
    for name, mass in (("1", m1), ("2", m2)):
        pos = d.add("PositionSensor", id=f"p{name}")
        acc = d.add("AccelerationSensor", id=f"acc{name}")
        d.connect(pos.flange, mass.flange_a)
        d.connect(acc.flange, mass.flange_b)
        pos.s >> d.add("Output", id=f"x{name}").u
        acc.a >> d.add("Output", id=f"a{name}").u
    return d


@pytest.mark.parametrize("rod", [False, True], ids=["rigid", "rod"])
def test_masses_joined_rigidly_move_as_one(rod):
    d = two_masses(rod)
    model = d.compile()
    assert len(model.x0) == 2  # one position and one velocity for both masses
    r = d.simulate()
    t, x1, x2 = r.time, r["x1"], r["x2"]
    gap = L1 + (ROD if rod else 0.0)  # between the left flanges
    assert np.max(np.abs(x2 - x1 - gap)) < 1e-12
    a = F / (M1 + M2)
    assert np.max(np.abs(r["a1"] - a)) < 1e-10 and np.max(np.abs(r["a2"] - a)) < 1e-10
    assert np.max(np.abs(x1 - (-L1 / 2 + 0.5 * a * t**2))) < 1e-10


J1, J2, RATIO, TAU = 2.0, 0.5, 3.0, 1.0


def test_inertias_through_an_ideal_gear_keep_its_ratio():
    d = DiagramBuilder(stop=2.0, rtol=1e-10, atol=1e-12, output_interval=0.05)
    j1, j2 = d.add("Inertia", id="J1", J=J1), d.add("Inertia", id="J2", J=J2)
    gear = d.add("IdealGear", id="gear", ratio=RATIO)
    torque = d.add("ConstantTorque", id="T", tau=TAU)
    d.connect(torque.flange, j1.flange_a)
    d.connect(j1.flange_b, gear.flange_a)
    d.connect(gear.flange_b, j2.flange_a)
    for name, inertia in (("1", j1), ("2", j2)):
        angle = d.add("AngleSensor", id=f"angle{name}")
        speed = d.add("AngularSpeedSensor", id=f"speed{name}")
        d.connect(angle.flange, inertia.flange_a)
        d.connect(speed.flange, inertia.flange_b)
        angle.phi >> d.add("Output", id=f"phi{name}").u
        speed.w >> d.add("Output", id=f"w{name}").u
    assert len(d.compile().x0) == 2
    r = d.simulate()
    t, phi1, phi2 = r.time, r["phi1"], r["phi2"]
    assert np.max(np.abs(phi1 - RATIO * phi2)) < 1e-12 * max(1.0, np.max(np.abs(phi1)))
    assert np.max(np.abs(r["w1"] - RATIO * r["w2"])) < 1e-12 * max(1.0, np.max(np.abs(r["w1"])))
    # J2 seen from flange 1 is J2 / ratio^2
    alpha = TAU / (J1 + J2 / RATIO**2)
    assert np.max(np.abs(phi1 - 0.5 * alpha * t**2)) < 1e-10
    assert phi1[-1] > 0.1


def test_capacitors_across_a_voltage_source_draw_its_derivative():
    # C1 and C2 in parallel with a sine source: their voltages are the source's, no state
    # is left, and the current is (C1 + C2) dV/dt, the source's derivative in closed form
    d = DiagramBuilder(stop=0.02, rtol=1e-10, atol=1e-12, output_interval=1e-4)
    v = d.add("SineVoltage", id="V", amplitude=1.0, f=50.0)
    c1, c2 = d.add("Capacitor", id="C1", C=1e-6), d.add("Capacitor", id="C2", C=2e-6)
    ground, sensor = d.add("Ground", id="g"), d.add("CurrentSensor", id="cs")
    d.connect(v.p, sensor.p)
    d.connect(sensor.n, c1.p, c2.p)
    d.connect(v.n, c1.n, c2.n, ground.p)
    sensor.i >> d.add("Output", id="i").u
    assert len(d.compile().x0) == 0
    r = d.simulate()
    w = 2 * np.pi * 50.0
    expected = 3e-6 * w * np.cos(w * r.time)
    assert np.max(np.abs(r["i"] - expected)) < 1e-12 * np.max(np.abs(expected))


def test_an_inductor_fed_by_a_current_source_has_no_state():
    # the source sets the inductor's current: v = L di/dt = 0 for a constant current
    d = DiagramBuilder(stop=0.01, rtol=1e-10, atol=1e-12, output_interval=1e-3)
    source, inductor = d.add("ConstantCurrent", id="I", I=2.0), d.add("Inductor", id="L")
    resistor, ground = d.add("Resistor", id="R", R=10.0), d.add("Ground", id="g")
    sensor = d.add("VoltageSensor", id="vL")
    d.connect(source.p, ground.p)
    d.connect(source.n, inductor.p, sensor.p)
    d.connect(inductor.n, resistor.p, sensor.n)
    d.connect(resistor.n, ground.p)
    sensor.v >> d.add("Output", id="v").u
    assert len(d.compile().x0) == 0
    assert np.all(d.simulate()["v"] == 0.0)
