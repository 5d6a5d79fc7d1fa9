"""Translational mechanics (Modelica.Mechanics.Translational's semantics): a flange carries
its absolute position s [m] and the force f [N] that acts on the component through it.

A rigid component of length L has flange_a.s = s - L/2 and flange_b.s = s + L/2; two
components connected at a flange share its position, and the forces at a connection sum
to zero. Positions, not velocities, are the across variables, so two masses joined
rigidly are a constraint between states that index reduction resolves.
"""
from __future__ import annotations

from blocksim.blocktypes.blockspec import Param, Port
from blocksim.physical.declare import Component, Connector, Discrete, Variable, When

_FLANGES = (Connector("flange_a", "translational", "left flange"),
            Connector("flange_b", "translational", "right flange"))
_FREE_FLANGES = (Connector("flange_a", "translational", "left flange (may be free)", True),
                 Connector("flange_b", "translational", "right flange (may be free)", True))
_COMPLIANT = ("s_rel = flange_b.s - flange_a.s", "flange_b.f = f", "flange_a.f = -f")
_S_REL = Variable("s_rel", "m", doc="relative displacement flange_b.s - flange_a.s")
_F = Variable("f", "N", doc="force from flange_a to flange_b")


class _Compliant(Component):
    category = "Translational"
    connectors = _FLANGES


class Fixed(Component):
    """A flange fixed at position s0."""

    name = "Fixed"
    category = "Translational"
    params = (Param("s0", "scalar", 0.0, "position", unit="m"),)
    connectors = (Connector("flange", "translational", "the fixed flange"),)
    equations = ("flange.s = s0",)


class Mass(Component):
    """Sliding mass: m*der(v) = flange_a.f + flange_b.f, v = der(s); starts at s0 with v0."""

    name = "Mass"
    category = "Translational"
    params = (Param("m", "scalar", 1.0, "mass", unit="kg", low=0.0),
              Param("L", "scalar", 0.0, "length", unit="m", low=0.0),
              Param("s0", "scalar", 0.0, "position of the centre at the start", unit="m"),
              Param("v0", "scalar", 0.0, "velocity at the start", unit="m/s"))
    connectors = _FREE_FLANGES
    variables = (Variable("s", "m", start="s0", prefer=True, doc="position of the centre"),
                 Variable("v", "m/s", start="v0", prefer=True, doc="velocity"),
                 Variable("a", "m/s2", doc="acceleration"))
    equations = ("flange_a.s = s - L/2", "flange_b.s = s + L/2", "v = der(s)", "a = der(v)",
                 "m*a = flange_a.f + flange_b.f")

    def check(self, p):
        return None if p.m > 0 else f"m must be positive, got {p.m}"


class Rod(_Compliant):
    """Massless rigid rod of length L: flange_b.s = flange_a.s + L."""

    name = "Rod"
    params = (Param("L", "scalar", 0.0, "length", unit="m", low=0.0),)
    equations = ("flange_b.s = flange_a.s + L", "flange_a.f + flange_b.f = 0")


class Spring(_Compliant):
    """Linear spring: f = c*(s_rel - s_rel0)."""

    name = "Spring"
    params = (Param("c", "scalar", 1.0, "spring constant", unit="N/m", low=0.0),
              Param("s_rel0", "scalar", 0.0, "unstretched length", unit="m"))
    variables = (_S_REL, _F)
    equations = _COMPLIANT + ("f = c*(s_rel - s_rel0)",)


class Damper(_Compliant):
    """Linear damper: f = d*der(s_rel)."""

    name = "Damper"
    params = (Param("d", "scalar", 1.0, "damping constant", unit="N.s/m", low=0.0),)
    variables = (_S_REL, _F, Variable("v_rel", "m/s", doc="relative velocity"))
    equations = _COMPLIANT + ("v_rel = der(s_rel)", "f = d*v_rel")


class SpringDamper(_Compliant):
    """Spring and damper in parallel: f = c*(s_rel - s_rel0) + d*der(s_rel)."""

    name = "SpringDamper"
    params = (Param("c", "scalar", 1.0, "spring constant", unit="N/m", low=0.0),
              Param("d", "scalar", 1.0, "damping constant", unit="N.s/m", low=0.0),
              Param("s_rel0", "scalar", 0.0, "unstretched length", unit="m"))
    variables = (_S_REL, _F, Variable("v_rel", "m/s", doc="relative velocity"))
    equations = _COMPLIANT + ("v_rel = der(s_rel)", "f = c*(s_rel - s_rel0) + d*v_rel")


class ElastoGap(_Compliant):
    """A spring and damper that act only in contact and only push (Modelica's ElastoGap).

    In contact (the gap closed, s_rel < s_rel0), f = min(0, c*(s_rel - s_rel0) + d*v_rel),
    else 0. Contact begins and ends at located events ("contact", "release")."""

    name = "ElastoGap"
    params = (Param("c", "scalar", 1e6, "spring constant", unit="N/m", low=0.0),
              Param("d", "scalar", 1e3, "damping constant", unit="N.s/m", low=0.0),
              Param("s_rel0", "scalar", 0.0, "gap at which contact begins", unit="m"))
    variables = (_S_REL, _F, Variable("v_rel", "m/s", doc="relative velocity"),
                 Variable("f_c", "N", doc="spring-damper force while in contact"))
    equations = _COMPLIANT + ("v_rel = der(s_rel)",
                              "f_c = c*(s_rel - s_rel0) + d*v_rel",
                              "f = (f_c if s_rel < s_rel0 and f_c < 0 else 0)")
    whens = (When("s_rel < s_rel0 and f_c < 0", event="contact",
                  doc="the gap closed and the spring-damper pushes"),
             When("not (s_rel < s_rel0 and f_c < 0)", event="release",
                  doc="the gap opened, or the spring-damper would pull"))


class Force(Component):
    """Force driven by a signal, acting on the flange in the positive direction."""

    name = "Force"
    category = "Translational"
    connectors = (Connector("flange", "translational", "the driven flange"),)
    inputs = (Port("f", "force [N]"),)
    equations = ("flange.f = -f",)


class ConstantForce(Component):
    """A constant force f acting on the flange (gravity on a mass: f = -m*g)."""

    name = "ConstantForce"
    category = "Translational"
    params = (Param("f", "scalar", 1.0, "force, positive in the direction of s", unit="N"),)
    connectors = (Connector("flange", "translational", "the driven flange"),)
    equations = ("flange.f = -f",)


class PositionSensor(Component):
    """Measures the absolute position of a flange: output s."""

    name = "PositionSensor"
    category = "Translational"
    connectors = (Connector("flange", "translational", "the measured flange"),)
    outputs = (Port("s", "position [m]"),)
    equations = ("flange.f = 0", "s = flange.s")


class SpeedSensor(Component):
    """Measures the absolute velocity of a flange: output v = der(flange.s)."""

    name = "SpeedSensor"
    category = "Translational"
    connectors = (Connector("flange", "translational", "the measured flange"),)
    outputs = (Port("v", "velocity [m/s]"),)
    equations = ("flange.f = 0", "v = der(flange.s)")


class ForceSensor(Component):
    """Measures the force transmitted from flange_a to flange_b (rigidly joined): output f."""

    name = "ForceSensor"
    category = "Translational"
    connectors = _FLANGES
    outputs = (Port("f", "force [N]"),)
    equations = ("flange_a.s = flange_b.s", "flange_a.f + flange_b.f = 0", "f = flange_a.f")


class Hardstop(Component):
    """A stop at position s_min that the flange cannot pass: impacts with restitution mu.

    An impact reverses the velocity (Modelica's `when s <= 0 then reinit(v, -mu*pre(v))`).

    A flange that comes back to the stop within the engine's event horizon after an
    impact (impacts accumulating at a Zeno point) comes to rest on it ("rest"), held by
    the contact force for as long as the other forces push it into the stop; it leaves
    where they pull it away ("leave"). The velocity must be a state (a Mass's).
    """

    name = "Hardstop"
    category = "Translational"
    params = (Param("s_min", "scalar", 0.0, "position of the stop", unit="m"),
              Param("mu", "scalar", 0.8, "coefficient of restitution", low=0.0, high=1.0))
    connectors = (Connector("flange", "translational", "the flange that hits the stop"),)
    variables = (Variable("s_rel", "m", doc="distance from the stop"),
                 Variable("v_rel", "m/s", doc="velocity away from the stop"),
                 Variable("a_rel", "m/s2", doc="acceleration away from the stop"),
                 Variable("f", "N", doc="contact force pushing the flange away"),
                 Variable("sa", "", doc="curve parameter: a_rel in flight, f at rest"))
    discretes = (Discrete("resting", 0.0, "1 while resting on the stop"),
                 Discrete("bounced", 0.0, "1 during the event of an impact"))
    equations = ("s_rel = flange.s - s_min", "v_rel = der(s_rel)", "a_rel = der(v_rel)",
                 "flange.f = -f",
                 "a_rel = (0 if resting > 0.5 else sa)",
                 "f = (sa if resting > 0.5 else 0)")
    whens = (When("s_rel < 0 and resting < 0.5", reinit=(("v_rel", "-mu*pre(v_rel)"),),
                  assign=(("bounced", "1"),), event="impact",
                  doc="the flange hit the stop: its velocity reversed with restitution mu"),
             When("bounced > 0.5 and v_rel <= 0",
                  reinit=(("v_rel", "0"), ("s_rel", "0")),
                  assign=(("resting", "1"), ("bounced", "0")), event="rest",
                  doc="a rebound would end within the event horizon: it rests on the stop"),
             When("bounced > 0.5 and s_rel > 0", assign=(("bounced", "0"),)),
             When("resting > 0.5 and sa < 0", assign=(("resting", "0"),), event="leave",
                  doc="resting, the other forces pull it away: it leaves the stop"))


BLOCK_TYPES = (Fixed, Mass, Rod, Spring, Damper, SpringDamper, ElastoGap, Force, ConstantForce,
               PositionSensor, SpeedSensor, ForceSensor, Hardstop)
