"""Electromechanical converters (Modelica.Electrical.Analog.Basic's semantics): components
with pins on one side and a rotational flange on the other, the coupling of a DC machine.

The converter is lossless: the electrical power v*i it takes in leaves through its flange
(and the reaction through its housing), so a motor's resistance, inductance, inertia and
friction are components of their own around it.
"""
from __future__ import annotations

from blocksim.blocktypes.blockspec import Param
from blocksim.physical.declare import Component, Connector, Variable


class EMF(Component):
    """Ideal electromotive force of a DC machine: v = k*w, the torque k*i on the flange.

    v = p.v - n.v is the back EMF, i the current from p through the converter to n, and
    w the angular velocity of the flange relative to the housing. The flange receives the
    torque k*i (flange.tau = -k*i) and the housing its reaction, so the housing must be
    connected: to a RotationalFixed for a motor on a fixed base.
    """

    name = "EMF"
    category = "Electromechanical"
    params = (Param("k", "scalar", 1.0, "transformation coefficient (torque and voltage "
                    "constant)", unit="N.m/A"),)
    connectors = (Connector("p", "electrical", "positive pin"),
                  Connector("n", "electrical", "negative pin"),
                  Connector("flange", "rotational", "the shaft"),
                  Connector("housing", "rotational", "the housing (stator), which takes the "
                            "reaction torque"))
    variables = (Variable("v", "V", doc="back EMF p.v - n.v"),
                 Variable("i", "A", doc="current from p to n"),
                 Variable("phi", "rad", doc="angle of the shaft relative to the housing"),
                 Variable("w", "rad/s", doc="angular velocity of the shaft relative to the "
                          "housing"))
    equations = ("v = p.v - n.v", "0 = p.i + n.i", "i = p.i",
                 "phi = flange.phi - housing.phi", "w = der(phi)",
                 "v = k*w", "flange.tau = -k*i", "housing.tau = k*i")

    def check(self, p):
        return None if p.k != 0 else "k must not be 0"


BLOCK_TYPES = (EMF,)
