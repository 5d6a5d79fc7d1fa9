"""Heat transfer (Modelica.Thermal.HeatTransfer's semantics): a heat port carries its
temperature T [K] and the heat flow Q_flow [W] into the component."""
from __future__ import annotations

from blocksim.blocktypes.blockspec import Param, Port
from blocksim.physical.declare import Component, Connector, Variable

_PORT = Connector("port", "thermal", "heat port")
_PORTS = (Connector("port_a", "thermal", "heat port a"),
          Connector("port_b", "thermal", "heat port b"))


class HeatCapacitor(Component):
    """Lumped thermal mass: C*der(T) = port.Q_flow; its temperature starts at T0."""

    name = "HeatCapacitor"
    category = "Thermal"
    params = (Param("C", "scalar", 1.0, "heat capacity", unit="J/K", low=0.0),
              Param("T0", "scalar", 293.15, "temperature at the start", unit="K"))
    connectors = (_PORT,)
    variables = (Variable("T", "K", start="T0", prefer=True, doc="temperature"),)
    equations = ("T = port.T", "C*der(T) = port.Q_flow")

    def check(self, p):
        return None if p.C > 0 else f"C must be positive, got {p.C}"


class ThermalConductor(Component):
    """Lumped thermal conduction: Q_flow = G*(port_a.T - port_b.T) from a to b."""

    name = "ThermalConductor"
    category = "Thermal"
    params = (Param("G", "scalar", 1.0, "thermal conductance", unit="W/K", low=0.0),)
    connectors = _PORTS
    variables = (Variable("Q_flow", "W", doc="heat flow from port_a to port_b"),
                 Variable("dT", "K", doc="port_a.T - port_b.T"))
    equations = ("dT = port_a.T - port_b.T", "port_a.Q_flow = Q_flow",
                 "port_b.Q_flow = -Q_flow", "Q_flow = G*dT")


class FixedTemperature(Component):
    """A port held at temperature T."""

    name = "FixedTemperature"
    category = "Thermal"
    params = (Param("T", "scalar", 293.15, "temperature", unit="K"),)
    connectors = (_PORT,)
    equations = ("port.T = T",)


class PrescribedTemperature(Component):
    """A port held at the temperature of a signal."""

    name = "PrescribedTemperature"
    category = "Thermal"
    inputs = (Port("T", "temperature [K]"),)
    connectors = (_PORT,)
    equations = ("port.T = T",)


class FixedHeatFlow(Component):
    """A constant heat flow Q_flow into the port's component."""

    name = "FixedHeatFlow"
    category = "Thermal"
    params = (Param("Q_flow", "scalar", 1.0, "heat flow", unit="W"),)
    connectors = (_PORT,)
    equations = ("port.Q_flow = -Q_flow",)


class HeatFlowSource(Component):
    """A heat flow given by a signal, into the component at the port."""

    name = "HeatFlowSource"
    category = "Thermal"
    inputs = (Port("Q_flow", "heat flow [W]"),)
    connectors = (_PORT,)
    equations = ("port.Q_flow = -Q_flow",)


class TemperatureSensor(Component):
    """Measures a port's temperature: output T."""

    name = "TemperatureSensor"
    category = "Thermal"
    connectors = (_PORT,)
    outputs = (Port("T", "temperature [K]"),)
    equations = ("port.Q_flow = 0", "T = port.T")


class HeatFlowSensor(Component):
    """Measures the heat flow from port_a to port_b (same temperature): output Q_flow."""

    name = "HeatFlowSensor"
    category = "Thermal"
    connectors = _PORTS
    outputs = (Port("Q_flow", "heat flow [W]"),)
    equations = ("port_a.T = port_b.T", "port_a.Q_flow + port_b.Q_flow = 0",
                 "Q_flow = port_a.Q_flow")


BLOCK_TYPES = (HeatCapacitor, ThermalConductor, FixedTemperature, PrescribedTemperature,
               FixedHeatFlow, HeatFlowSource, TemperatureSensor, HeatFlowSensor)
