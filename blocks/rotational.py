"""Rotational mechanics (Modelica.Mechanics.Rotational's semantics): a flange carries its
absolute angle phi [rad] and the torque tau [N.m] that acts on the component through it.

Friction with sticking (`Friction`) and backlash (`ElastoBacklash`) switch at located
events: the friction element's modes (stuck, forward, backward) are a discrete variable,
and while stuck its torque is whatever holds the flange (Modelica's curve parameter), so the
equations stay one system in every mode.
"""
from __future__ import annotations

from blocksim.blocktypes.blockspec import Param, Port
from blocksim.physical.declare import Component, Connector, Discrete, Variable, When

_FLANGES = (Connector("flange_a", "rotational", "left flange"),
            Connector("flange_b", "rotational", "right flange"))
_FREE_FLANGES = (Connector("flange_a", "rotational", "left flange (may be free)", True),
                 Connector("flange_b", "rotational", "right flange (may be free)", True))
_COMPLIANT = ("phi_rel = flange_b.phi - flange_a.phi", "flange_b.tau = tau",
              "flange_a.tau = -tau")
_PHI_REL = Variable("phi_rel", "rad", doc="relative angle flange_b.phi - flange_a.phi")
_TAU = Variable("tau", "N.m", doc="torque from flange_a to flange_b")


class _Compliant(Component):
    category = "Rotational"
    connectors = _FLANGES


class RotationalFixed(Component):
    """A flange fixed at angle phi0."""

    name = "RotationalFixed"
    category = "Rotational"
    params = (Param("phi0", "scalar", 0.0, "angle", unit="rad"),)
    connectors = (Connector("flange", "rotational", "the fixed flange"),)
    equations = ("flange.phi = phi0",)


class Inertia(Component):
    """Rotating inertia: J*der(w) = flange_a.tau + flange_b.tau, w = der(phi)."""

    name = "Inertia"
    category = "Rotational"
    params = (Param("J", "scalar", 1.0, "moment of inertia", unit="kg.m2", low=0.0),
              Param("phi0", "scalar", 0.0, "angle at the start", unit="rad"),
              Param("w0", "scalar", 0.0, "angular velocity at the start", unit="rad/s"))
    connectors = _FREE_FLANGES
    variables = (Variable("phi", "rad", start="phi0", prefer=True, doc="angle"),
                 Variable("w", "rad/s", start="w0", prefer=True, doc="angular velocity"),
                 Variable("a", "rad/s2", doc="angular acceleration"))
    equations = ("flange_a.phi = phi", "flange_b.phi = phi", "w = der(phi)", "a = der(w)",
                 "J*a = flange_a.tau + flange_b.tau")

    def check(self, p):
        return None if p.J > 0 else f"J must be positive, got {p.J}"


class RotationalSpring(_Compliant):
    """Linear torsion spring: tau = c*(phi_rel - phi_rel0)."""

    name = "RotationalSpring"
    params = (Param("c", "scalar", 1e5, "spring constant", unit="N.m/rad", low=0.0),
              Param("phi_rel0", "scalar", 0.0, "unstretched angle", unit="rad"))
    variables = (_PHI_REL, _TAU)
    equations = _COMPLIANT + ("tau = c*(phi_rel - phi_rel0)",)


class RotationalDamper(_Compliant):
    """Linear torsion damper: tau = d*der(phi_rel)."""

    name = "RotationalDamper"
    params = (Param("d", "scalar", 1.0, "damping constant", unit="N.m.s/rad", low=0.0),)
    variables = (_PHI_REL, _TAU, Variable("w_rel", "rad/s", doc="relative angular velocity"))
    equations = _COMPLIANT + ("w_rel = der(phi_rel)", "tau = d*w_rel")


class RotationalSpringDamper(_Compliant):
    """Torsion spring and damper in parallel."""

    name = "RotationalSpringDamper"
    params = (Param("c", "scalar", 1e5, "spring constant", unit="N.m/rad", low=0.0),
              Param("d", "scalar", 1.0, "damping constant", unit="N.m.s/rad", low=0.0),
              Param("phi_rel0", "scalar", 0.0, "unstretched angle", unit="rad"))
    variables = (_PHI_REL, _TAU, Variable("w_rel", "rad/s", doc="relative angular velocity"))
    equations = _COMPLIANT + ("w_rel = der(phi_rel)", "tau = c*(phi_rel - phi_rel0) + d*w_rel")


class ElastoBacklash(_Compliant):
    """Backlash with an elastic contact (Modelica's ElastoBacklash, unsmoothed).

    No torque inside the gap |phi_rel| <= b/2; beyond it a spring-damper that only pushes.
    Contact begins and ends at located events."""

    name = "ElastoBacklash"
    params = (Param("b", "scalar", 0.0, "total backlash", unit="rad", low=0.0),
              Param("c", "scalar", 1e5, "spring constant in contact", unit="N.m/rad", low=0.0),
              Param("d", "scalar", 0.0, "damping constant in contact", unit="N.m.s/rad",
                    low=0.0))
    variables = (_PHI_REL, _TAU, Variable("w_rel", "rad/s", doc="relative angular velocity"),
                 Variable("tau_p", "N.m", doc="contact torque on the positive side"),
                 Variable("tau_n", "N.m", doc="contact torque on the negative side"))
    equations = _COMPLIANT + (
        "w_rel = der(phi_rel)",
        "tau_p = c*(phi_rel - b/2) + d*w_rel",
        "tau_n = c*(phi_rel + b/2) + d*w_rel",
        "tau = (tau_p if phi_rel > b/2 and tau_p > 0 else "
        "(tau_n if phi_rel < -b/2 and tau_n < 0 else 0))")


class IdealGear(_Compliant):
    """Ideal gear without inertia: flange_a.phi = ratio*flange_b.phi.

    The torques: 0 = ratio*flange_a.tau + flange_b.tau (no power is lost)."""

    name = "IdealGear"
    params = (Param("ratio", "scalar", 1.0, "transmission ratio (flange_a.phi/flange_b.phi)"),)
    equations = ("flange_a.phi = ratio*flange_b.phi", "0 = ratio*flange_a.tau + flange_b.tau")

    def check(self, p):
        return None if p.ratio != 0 else "ratio must not be 0"


class Torque(Component):
    """Torque driven by a signal, acting on the flange in the positive direction."""

    name = "Torque"
    category = "Rotational"
    connectors = (Connector("flange", "rotational", "the driven flange"),)
    inputs = (Port("tau", "torque [N.m]"),)
    equations = ("flange.tau = -tau",)


class ConstantTorque(Component):
    """A constant torque tau acting on the flange."""

    name = "ConstantTorque"
    category = "Rotational"
    params = (Param("tau", "scalar", 1.0, "torque, positive in the direction of phi",
                    unit="N.m"),)
    connectors = (Connector("flange", "rotational", "the driven flange"),)
    equations = ("flange.tau = -tau",)


class AngleSensor(Component):
    """Measures the absolute angle of a flange: output phi."""

    name = "AngleSensor"
    category = "Rotational"
    connectors = (Connector("flange", "rotational", "the measured flange"),)
    outputs = (Port("phi", "angle [rad]"),)
    equations = ("flange.tau = 0", "phi = flange.phi")


class AngularSpeedSensor(Component):
    """Measures the angular velocity of a flange: output w = der(flange.phi)."""

    name = "AngularSpeedSensor"
    category = "Rotational"
    connectors = (Connector("flange", "rotational", "the measured flange"),)
    outputs = (Port("w", "angular velocity [rad/s]"),)
    equations = ("flange.tau = 0", "w = der(flange.phi)")


class TorqueSensor(Component):
    """Measures the torque transmitted from flange_a to flange_b (rigidly joined)."""

    name = "TorqueSensor"
    category = "Rotational"
    connectors = _FLANGES
    outputs = (Port("tau", "torque [N.m]"),)
    equations = ("flange_a.phi = flange_b.phi", "flange_a.tau + flange_b.tau = 0",
                 "tau = flange_a.tau")


class Friction(Component):
    """Bearing friction against the fixed housing, with sticking (stick and slip).

    Modelica's BearingFriction with a Coulomb-viscous law: while sliding,
    tau = tau_c*sign(w) + d*w opposes the motion; at w = 0 the flange sticks ("stuck") for
    as long as the torque needed to hold it stays within the static level tau_s, and starts
    to slide ("forward", "backward") where it exceeds it."""

    name = "Friction"
    category = "Rotational"
    params = (Param("tau_c", "scalar", 1.0, "Coulomb friction torque", unit="N.m", low=0.0),
              Param("tau_s", "scalar", 1.0, "static friction torque (>= tau_c)", unit="N.m",
                    low=0.0),
              Param("d", "scalar", 0.0, "viscous friction coefficient", unit="N.m.s/rad",
                    low=0.0))
    connectors = (Connector("flange", "rotational", "the flange held by friction"),)
    variables = (Variable("phi", "rad", doc="angle of the flange"),
                 Variable("w", "rad/s", doc="angular velocity"),
                 Variable("a", "rad/s2", doc="angular acceleration"),
                 Variable("tau", "N.m", doc="friction torque taken from the flange"),
                 Variable("sa", "", doc="curve parameter: a while sliding, tau while stuck"))
    discretes = (Discrete("mode", 0.0, "0 stuck, 1 sliding forward, -1 backward"),)
    equations = ("phi = flange.phi", "w = der(phi)", "a = der(w)", "flange.tau = tau",
                 "a = (0 if mode == 0 else sa)",
                 "tau = (sa if mode == 0 else (tau_c + d*w if mode > 0 else -tau_c + d*w))")
    whens = (When("mode == 0 and sa > tau_s", assign=(("mode", "1"),), event="forward",
                  doc="stuck, the torque to hold it exceeded tau_s: it slides forward"),
             When("mode == 0 and sa < -tau_s", assign=(("mode", "-1"),), event="backward",
                  doc="stuck, the torque to hold it exceeded -tau_s: it slides backward"),
             When("mode > 0 and w < 0", reinit=(("w", "0"),), assign=(("mode", "0"),),
                  event="stuck", doc="sliding, its speed came to 0: it sticks"),
             When("mode < 0 and w > 0", reinit=(("w", "0"),), assign=(("mode", "0"),),
                  event="stuck"))

    def check(self, p):
        return None if p.tau_s >= p.tau_c else (f"tau_s ({p.tau_s}) must be at least tau_c "
                                               f"({p.tau_c})")


BLOCK_TYPES = (RotationalFixed, Inertia, RotationalSpring, RotationalDamper,
               RotationalSpringDamper, ElastoBacklash, IdealGear, Torque, ConstantTorque,
               AngleSensor, AngularSpeedSensor, TorqueSensor, Friction)
