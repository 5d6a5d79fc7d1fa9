"""Electrical components (Modelica.Electrical.Analog's semantics): pins carry a voltage v
[V] and a current i [A], positive into the component.

A two-pin component has v = p.v - n.v and i = p.i (= -n.i). Every circuit needs a Ground.
Ideal switching elements (IdealDiode, IdealSwitch) use Modelica's curve parameter s: the
state "off" is the latched relation s < 0, so the switch happens at a located event and
the equations stay one linear system in both states.
"""
from __future__ import annotations

import numpy as np

from blocksim.blocktypes.blockspec import Param, Port
from blocksim.physical.declare import Component, Connector, Variable, When

_PINS = (Connector("p", "electrical", "positive pin"),
         Connector("n", "electrical", "negative pin"))
_ONE_PORT = ("v = p.v - n.v", "0 = p.i + n.i", "i = p.i")
_V = Variable("v", "V", doc="voltage p.v - n.v")
_I = Variable("i", "A", doc="current from p to n through the component")


class _OnePort(Component):
    category = "Electrical"
    connectors = _PINS
    variables = (_V, _I)


class Ground(Component):
    """Ground of an electrical circuit: the pin's voltage is 0 (every circuit needs one)."""

    name = "Ground"
    category = "Electrical"
    connectors = (Connector("p", "electrical", "the grounded pin"),)
    equations = ("p.v = 0",)
    reference = True  # the voltage reference of its circuit


class Resistor(_OnePort):
    """Ideal linear resistor: v = R*i."""

    name = "Resistor"
    params = (Param("R", "scalar", 1.0, "resistance", unit="Ohm"),)
    equations = _ONE_PORT + ("v = R*i",)


class Conductor(_OnePort):
    """Ideal linear conductor: i = G*v."""

    name = "Conductor"
    params = (Param("G", "scalar", 1.0, "conductance", unit="S"),)
    equations = _ONE_PORT + ("i = G*v",)


class Capacitor(_OnePort):
    """Ideal capacitor: i = C*der(v); its voltage starts at v0."""

    name = "Capacitor"
    params = (Param("C", "scalar", 1e-6, "capacitance", unit="F", low=0.0),
              Param("v0", "scalar", 0.0, "voltage at the start", unit="V"))
    variables = (Variable("v", "V", start="v0", prefer=True, doc="voltage p.v - n.v"), _I)
    equations = _ONE_PORT + ("i = C*der(v)",)

    def check(self, p):
        return None if p.C > 0 else f"C must be positive, got {p.C}"


class Inductor(_OnePort):
    """Ideal inductor: v = L*der(i); its current starts at i0."""

    name = "Inductor"
    params = (Param("L", "scalar", 1e-3, "inductance", unit="H", low=0.0),
              Param("i0", "scalar", 0.0, "current at the start", unit="A"))
    variables = (_V, Variable("i", "A", start="i0", prefer=True, doc="current from p to n"))
    equations = _ONE_PORT + ("v = L*der(i)",)

    def check(self, p):
        return None if p.L > 0 else f"L must be positive, got {p.L}"


class ConstantVoltage(_OnePort):
    """Source of a constant voltage V between p and n."""

    name = "ConstantVoltage"
    params = (Param("V", "scalar", 1.0, "voltage p.v - n.v", unit="V"),)
    equations = _ONE_PORT + ("v = V",)


class SineVoltage(_OnePort):
    """Sine voltage source: v = offset + amplitude*sin(2*pi*f*time + phase) (time from 0)."""

    name = "SineVoltage"
    params = (Param("amplitude", "scalar", 1.0, "amplitude", unit="V"),
              Param("f", "scalar", 1.0, "frequency", unit="Hz"),
              Param("phase", "scalar", 0.0, "phase", unit="rad"),
              Param("offset", "scalar", 0.0, "offset", unit="V"))
    equations = _ONE_PORT + ("v = offset + amplitude*sin(2*pi*f*time + phase)",)


class SignalVoltage(_OnePort):
    """Voltage source driven by a signal: v = u."""

    name = "SignalVoltage"
    inputs = (Port("u", "the voltage p.v - n.v [V]"),)
    equations = _ONE_PORT + ("v = u",)


class ConstantCurrent(_OnePort):
    """Source of a constant current I from p through the source to n."""

    name = "ConstantCurrent"
    params = (Param("I", "scalar", 1.0, "current", unit="A"),)
    equations = _ONE_PORT + ("i = I",)


class SignalCurrent(_OnePort):
    """Current source driven by a signal: i = u (from p through the source to n)."""

    name = "SignalCurrent"
    inputs = (Port("u", "the current [A]"),)
    equations = _ONE_PORT + ("i = u",)


class IdealDiode(_OnePort):
    """Ideal diode (Modelica's): v = Ron*i conducting, i = Goff*v blocking.

    It conducts a forward current and blocks a reverse voltage; Ron = Goff = 0 is the ideal
    short and open circuit.

    The state is the latched relation s < 0 of the curve parameter s (s is the current while
    conducting and the voltage while blocking), so it switches at located events ("on",
    "off") and never inside a step.
    """

    name = "IdealDiode"
    params = (Param("Ron", "scalar", 1e-5, "forward resistance", unit="Ohm", low=0.0),
              Param("Goff", "scalar", 1e-5, "backward conductance", unit="S", low=0.0),
              Param("Vknee", "scalar", 0.0, "forward threshold voltage", unit="V", low=0.0))
    variables = (_V, _I, Variable("s", "", doc="curve parameter: off while s < 0"))
    equations = _ONE_PORT + ("v = s*(1 if s < 0 else Ron) + Vknee",
                             "i = s*(Goff if s < 0 else 1) + Goff*Vknee")
    whens = (When("s < 0", event="off", doc="the forward current fell through 0: it blocks"),
             When("s >= 0", event="on", doc="the reverse voltage rose through 0: it conducts"))


class Diode(_OnePort):
    """Shockley diode with a parallel leakage: i = Ids*(exp(v/Vt) - 1) + v/R."""

    name = "Diode"
    params = (Param("Ids", "scalar", 1e-6, "saturation current", unit="A", low=0.0),
              Param("Vt", "scalar", 0.04, "thermal voltage", unit="V", low=0.0),
              Param("R", "scalar", 1e8, "parallel ohmic resistance", unit="Ohm", low=0.0))
    equations = _ONE_PORT + ("i = Ids*(exp(v/Vt) - 1) + v/R",)

    def check(self, p):
        if not p.Vt > 0 or not p.R > 0:
            return "Vt and R must be positive"
        return None


class TableConductor(_OnePort):
    """A nonlinear conductor given by a table (a tabulated diode curve).

    The current is interpolated linearly in a table of voltages `v_table` (increasing) and
    currents `i_table`, and held constant beyond its ends.

    Each breakpoint is a latched relation, so the segment changes at located events and a
    step never straddles a kink. The table is compiled into the equations: a new table is
    a new compile.
    """

    name = "TableConductor"
    params = (Param("v_table", "vector", [0.0, 1.0], "voltage breakpoints, increasing",
                    unit="V", table=True),
              Param("i_table", "vector", [0.0, 1.0], "currents at the breakpoints", unit="A",
                    table=True))

    def check(self, p):
        v, i = np.atleast_1d(p.v_table).ravel(), np.atleast_1d(p.i_table).ravel()
        if v.size != i.size or v.size < 2:
            return (f"v_table and i_table need the same number (at least 2) of entries, got "
                    f"{v.size} and {i.size}")
        if np.any(np.diff(v) <= 0):
            return "v_table must be strictly increasing"
        return None

    def component_equations(self, p):
        v = [float(x) for x in np.atleast_1d(p.v_table).ravel()]
        i = [float(x) for x in np.atleast_1d(p.i_table).ravel()]
        text = repr(i[-1])
        for k in range(len(v) - 2, -1, -1):  # from the last segment inwards
            slope = (i[k + 1] - i[k]) / (v[k + 1] - v[k])
            text = f"({repr(i[k])} + {repr(slope)}*(v - {repr(v[k])}) if v < {repr(v[k + 1])} else {text})"
        return _ONE_PORT + (f"i = ({repr(i[0])} if v < {repr(v[0])} else {text})",)


class IdealSwitch(_OnePort):
    """Switch closed while its control signal is above 0.5 (Modelica's IdealClosingSwitch).

    v = Ron*i closed, i = Goff*v open; it switches at located events."""

    name = "IdealSwitch"
    params = (Param("Ron", "scalar", 1e-5, "closed resistance", unit="Ohm", low=0.0),
              Param("Goff", "scalar", 1e-5, "open conductance", unit="S", low=0.0))
    inputs = (Port("control", "closed while > 0.5"),)
    variables = (_V, _I, Variable("s", "", doc="curve parameter"))
    equations = _ONE_PORT + ("v = s*(Ron if control > 0.5 else 1)",
                             "i = s*(1 if control > 0.5 else Goff)")
    whens = (When("control > 0.5", event="close", doc="the control signal rose above 0.5"),
             When("control <= 0.5", event="open", doc="the control signal fell to 0.5"))


class VoltageSensor(Component):
    """Measures the voltage between p and n (draws no current): output v = p.v - n.v."""

    name = "VoltageSensor"
    category = "Electrical"
    connectors = _PINS
    outputs = (Port("v", "p.v - n.v [V]"),)
    equations = ("p.i = 0", "n.i = 0", "v = p.v - n.v")


class CurrentSensor(Component):
    """Measures the current from p to n through it (no voltage drop): output i."""

    name = "CurrentSensor"
    category = "Electrical"
    connectors = _PINS
    outputs = (Port("i", "current from p to n [A]"),)
    equations = ("p.v = n.v", "p.i + n.i = 0", "i = p.i")


BLOCK_TYPES = (Ground, Resistor, Conductor, Capacitor, Inductor, ConstantVoltage, SineVoltage,
               SignalVoltage, ConstantCurrent, SignalCurrent, IdealDiode, Diode, TableConductor, IdealSwitch,
               VoltageSensor, CurrentSensor)
