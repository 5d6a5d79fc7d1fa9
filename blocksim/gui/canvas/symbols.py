"""The symbols physical components are drawn with (resistor zigzag, capacitor plates, ground
bars, spring, mass, ...), one entry per block type name, without Qt.

A symbol is a function of the block's unrotated size (w, h) returning drawing primitives in
unrotated block coordinates (0..w, 0..h); the canvas maps them through the block's rotation
and flip, so a capacitor turned upright has upright plates. Texts stay upright. The ports
sit where `portinfo` puts them (for two connectors: the first in the middle of the left
edge, the second in the middle of the right edge, a signal in the middle of the top edge),
and a symbol's leads run to exactly those points.

A type without an entry is drawn as the generic box with its name (see `items`), so a
component library of one's own works unchanged; an entry here only makes it look familiar.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

from blocksim.blocktypes import registry

Point = tuple[float, float]


# ----- primitives (what the canvas can draw) -----
@dataclass(frozen=True)
class Line:
    """An open polyline."""

    points: tuple[Point, ...]
    width: float = 1.3


@dataclass(frozen=True)
class Shape:
    """A closed polygon; fill is "ink", "white", "light" (a pale grey) or None."""

    points: tuple[Point, ...]
    fill: str | None = None


@dataclass(frozen=True)
class Circle:
    centre: Point
    radius: float
    fill: str | None = None


@dataclass(frozen=True)
class Arc:
    """Part of a circle, from `start` through `span` degrees (counter-clockwise, 0 = east,
    as on a mathematician's page: y pointing up)."""

    centre: Point
    radius: float
    start: float
    span: float


@dataclass(frozen=True)
class Text:
    """A short text centred on a point, upright whatever the block's rotation."""

    centre: Point
    text: str
    size: float = 8.0


Primitive = Line | Shape | Circle | Arc | Text
Draw = Callable[[float, float], list[Primitive]]


@dataclass(frozen=True)
class Symbol:
    """How one component type looks: its drawing, its default size and, for a type with
    one connector and no signals, the edge its connector sits on ("top", "left", "right",
    "bottom")."""

    draw: Draw
    size: tuple[float, float] = (60.0, 40.0)
    pin: str = "top"


# ----- building blocks of the drawings -----
def _leads(w: float, h: float, a: float, b: float) -> list[Primitive]:
    """The two wires from the side ports to the element between x = a and x = b."""
    y = h / 2
    return [Line(((0.0, y), (a, y))), Line(((b, y), (w, y)))]


def _zigzag(x0: float, x1: float, y: float, amplitude: float, peaks: int = 3) -> Line:
    """A spring's or resistor's zigzag from (x0, y) to (x1, y)."""
    steps = 2 * peaks
    dx = (x1 - x0) / (steps + 1)
    points = [(x0, y)]
    for k in range(steps):
        points.append((x0 + dx * (k + 1), y + (amplitude if k % 2 == 0 else -amplitude)))
    points.append((x1, y))
    return Line(tuple(points))


def _arrow_head(tip: Point, towards: Point, size: float = 6.0) -> Shape:
    """A filled arrowhead at `tip`, coming from the direction of `towards`."""
    (x, y), (fx, fy) = tip, towards
    dx, dy = x - fx, y - fy
    length = math.hypot(dx, dy) or 1.0
    dx, dy = dx / length, dy / length
    return Shape(((x, y), (x - dx * size - dy * size * 0.45, y - dy * size + dx * size * 0.45),
                  (x - dx * size + dy * size * 0.45, y - dy * size - dx * size * 0.45)), "ink")


def _hatch(x0: float, x1: float, y: float, depth: float = 6.0) -> list[Primitive]:
    """A ground line with slanted hatching below it (a fixed support)."""
    lines: list[Primitive] = [Line(((x0, y), (x1, y)), 1.8)]
    step = 5.0
    x = x0 + 2.0
    while x <= x1:
        lines.append(Line(((x, y), (x - depth * 0.7, y + depth)), 0.9))
        x += step
    return lines


def _two_pin(element: Callable[[float, float, float, float], list[Primitive]],
             margin: float = 0.2) -> Draw:
    """A two-pin symbol: leads from both side ports to `element(a, b, y, h)` between them."""
    def draw(w: float, h: float) -> list[Primitive]:
        a, b = w * margin, w * (1 - margin)
        return _leads(w, h, a, b) + element(a, b, h / 2, h)
    return draw


def _source(inside: Callable[[float, float, float], list[Primitive]],
            signs: bool = True) -> Draw:
    """A source: a circle between the leads with `inside(cx, cy, r)` in it and + at p."""
    def draw(w: float, h: float) -> list[Primitive]:
        cx, cy, r = w / 2, h / 2, min(w, h) * 0.3
        out = _leads(w, h, cx - r, cx + r) + [Circle((cx, cy), r, "white")]
        out += inside(cx, cy, r)
        if signs:
            out += [Text((cx - r - 5, cy - r + 1), "+", 7.5), Text((cx + r + 5, cy - r + 1), "−", 7.5)]
        return out
    return draw


def _meter(letter: str) -> Draw:
    """A sensor between two pins: a circle with the measured quantity's letter, its
    output on top."""
    def draw(w: float, h: float) -> list[Primitive]:
        cx, cy, r = w / 2, h / 2, min(w, h) * 0.3
        return _leads(w, h, cx - r, cx + r) + [Circle((cx, cy), r, "white"),
                                               Text((cx, cy), letter, 8.5),
                                               Line(((cx, cy - r), (cx, 0.0)), 0.9)]
    return draw


def _probe(letter: str) -> Draw:
    """A sensor of one connector (left) with its output (right): a circle with a letter."""
    def draw(w: float, h: float) -> list[Primitive]:
        cx, cy, r = w / 2, h / 2, min(w, h) * 0.3
        return _leads(w, h, cx - r, cx + r) + [Circle((cx, cy), r, "white"),
                                               Text((cx, cy), letter, 8.5)]
    return draw


def _circle_points(cx: float, cy: float, r: float, start: float, span: float,
                   count: int = 16) -> list[Point]:
    return [(cx + r * math.cos(math.radians(start + span * k / count)),
             cy - r * math.sin(math.radians(start + span * k / count))) for k in range(count + 1)]


# ----- the electrical symbols -----
def _resistor(a: float, b: float, y: float, h: float) -> list[Primitive]:
    return [_zigzag(a, b, y, h * 0.18, 3)]


def _box(a: float, b: float, y: float, h: float) -> list[Primitive]:
    top, bottom = y - h * 0.15, y + h * 0.15
    return [Shape(((a, top), (b, top), (b, bottom), (a, bottom)), "white")]


def _nonlinear(a: float, b: float, y: float, h: float) -> list[Primitive]:
    """A nonlinear resistor (IEC): the box crossed by a slanted line with a kink."""
    pad = (b - a) * 0.15
    return _box(a + pad, b - pad, y, h) + [Line(((a + pad * 0.3, y + h * 0.3),
                                                  (a + pad * 2.2, y + h * 0.3),
                                                  (b - pad * 0.3, y - h * 0.3)), 1.0)]


def _capacitor(w: float, h: float) -> list[Primitive]:
    cx, y, half = w / 2, h / 2, h * 0.3
    return _leads(w, h, cx - 3, cx + 3) + [Line(((cx - 3, y - half), (cx - 3, y + half)), 2.0),
                                           Line(((cx + 3, y - half), (cx + 3, y + half)), 2.0)]


def _inductor(a: float, b: float, y: float, h: float) -> list[Primitive]:
    humps = 4
    r = (b - a) / humps / 2
    return [Arc((a + r * (2 * k + 1), y), r, 180.0, -180.0) for k in range(humps)]


def _ground(w: float, h: float) -> list[Primitive]:
    cx, bar = w / 2, h * 0.45
    return [Line(((cx, 0.0), (cx, bar))), Line(((cx - w * 0.35, bar), (cx + w * 0.35, bar)), 1.8),
            Line(((cx - w * 0.22, bar + 5), (cx + w * 0.22, bar + 5)), 1.6),
            Line(((cx - w * 0.09, bar + 10), (cx + w * 0.09, bar + 10)), 1.4)]


def _diode(a: float, b: float, y: float, h: float, fill: str | None) -> list[Primitive]:
    cx, half = (a + b) / 2, h * 0.22
    left, right = cx - half * 0.9, cx + half * 0.9
    return [Line(((a, y), (left, y))), Line(((right, y), (b, y))),
            Shape(((left, y - half), (right, y), (left, y + half)), fill),
            Line(((right, y - half), (right, y + half)), 1.8)]


def _switch(w: float, h: float) -> list[Primitive]:
    y, a, b = h / 2, w * 0.3, w * 0.7
    return [Line(((0.0, y), (a, y))), Line(((b, y), (w, y))),
            Circle((a, y), 1.8, "ink"), Circle((b, y), 1.8, "ink"),
            Line(((a, y), (b - 2, y - h * 0.25))),
            Line(((w / 2, 0.0), (w / 2, y - h * 0.14)), 0.9)]


def _sine(cx: float, cy: float, r: float) -> list[Primitive]:
    points = [(cx - r * 0.65 + r * 1.3 * k / 16, cy - r * 0.45 * math.sin(2 * math.pi * k / 16))
              for k in range(17)]
    return [Line(tuple(points), 1.1)]


def _through_line(cx: float, cy: float, r: float) -> list[Primitive]:
    return [Line(((cx - r, cy), (cx + r, cy)), 1.1)]


def _current_arrow(cx: float, cy: float, r: float) -> list[Primitive]:
    return [Line(((cx - r * 0.6, cy), (cx + r * 0.3, cy)), 1.2),
            _arrow_head((cx + r * 0.65, cy), (cx, cy), 5.0)]


def _signal_lead(draw: Draw) -> Draw:
    """A symbol with a signal input on top: a short lead from the top port down to it."""
    def drawn(w: float, h: float) -> list[Primitive]:
        r = min(w, h) * 0.3
        return draw(w, h) + [Line(((w / 2, 0.0), (w / 2, h / 2 - r)), 0.9)]
    return drawn


# ----- the mechanical symbols -----
def _fixed(w: float, h: float) -> list[Primitive]:
    cx, y = w / 2, h * 0.45
    return [Line(((cx, 0.0), (cx, y)))] + _hatch(w * 0.12, w * 0.88, y)


def _mass(w: float, h: float) -> list[Primitive]:
    a, b, top, bottom = w * 0.22, w * 0.78, h * 0.12, h * 0.88
    return _leads(w, h, a, b) + [Shape(((a, top), (b, top), (b, bottom), (a, bottom)), "light")]


def _rod(w: float, h: float) -> list[Primitive]:
    y = h / 2
    return [Line(((0.0, y), (w, y)), 3.0)]


def _spring(a: float, b: float, y: float, h: float) -> list[Primitive]:
    return [_zigzag(a, b, y, h * 0.2, 4)]


def _damper_at(a: float, b: float, y: float, half: float) -> list[Primitive]:
    """A dashpot between x = a and x = b: a cylinder open to the right with a piston in it."""
    c0, c1 = a + (b - a) * 0.3, b - (b - a) * 0.1
    piston = a + (b - a) * 0.6
    return [Line(((a, y), (c0, y))), Line(((c1, y - half), (c0, y - half), (c0, y + half),
                                           (c1, y + half))),
            Line(((piston, y - half * 0.7), (piston, y + half * 0.7)), 2.0),
            Line(((piston, y), (b, y)))]


def _damper(a: float, b: float, y: float, h: float) -> list[Primitive]:
    return _damper_at(a, b, y, h * 0.22)


def _spring_damper(w: float, h: float) -> list[Primitive]:
    a, b = w * 0.2, w * 0.8
    top, bottom = h * 0.25, h * 0.75
    return _leads(w, h, a, b) + [Line(((a, top), (a, bottom))), Line(((b, top), (b, bottom))),
                                 _zigzag(a, b, top, h * 0.09, 4)] + _damper_at(a, b, bottom, h * 0.1)


def _gap(w: float, h: float) -> list[Primitive]:
    """A spring that acts only when its ends touch: a zigzag and a gap."""
    y, a, b = h / 2, w * 0.2, w * 0.8
    mid = (a + b) / 2
    return _leads(w, h, a, b) + [_zigzag(a, mid - 3, y, h * 0.18, 2),
                                 Line(((mid - 3, y - h * 0.22), (mid - 3, y + h * 0.22)), 1.8),
                                 Line(((mid + 3, y - h * 0.22), (mid + 3, y + h * 0.22)), 1.8),
                                 Line(((mid + 3, y), (b, y)))]


def _hardstop(w: float, h: float) -> list[Primitive]:
    cx, y = w / 2, h * 0.5
    return [Line(((cx, 0.0), (cx, y - 8))), Shape(((cx - 6, y - 8), (cx + 6, y - 8),
                                                   (cx + 6, y + 2), (cx - 6, y + 2)), "light"),
            Line(((w * 0.12, y - 8), (w * 0.12, y + 10)), 1.8),
            Line(((w * 0.88, y - 8), (w * 0.88, y + 10)), 1.8)] + _hatch(w * 0.12, w * 0.88, y + 10, 4)


def _force_arrow(w: float, h: float) -> list[Primitive]:
    y = h / 2
    return [Line(((0.0, y), (w - 9, y)), 2.2), _arrow_head((w - 1, y), (0.0, y), 9.0)]


def _constant_force(letter: str) -> Draw:
    def draw(w: float, h: float) -> list[Primitive]:
        return _force_arrow(w, h) + [Text((w * 0.4, h * 0.22), letter, 8.0)]
    return draw


def _inertia(w: float, h: float) -> list[Primitive]:
    a, b, top, bottom = w * 0.38, w * 0.62, h * 0.06, h * 0.94
    return _leads(w, h, a, b) + [Shape(((a, top), (b, top), (b, bottom), (a, bottom)), "light"),
                                 Line(((a, h * 0.35), (b, h * 0.35)), 0.8),
                                 Line(((a, h * 0.65), (b, h * 0.65)), 0.8)]


def _gear(w: float, h: float) -> list[Primitive]:
    y = h / 2
    a0, a1, b0, b1 = w * 0.25, w * 0.45, w * 0.55, w * 0.75
    return _leads(w, h, a0, b1) + [
        Shape(((a0, h * 0.1), (a1, h * 0.1), (a1, h * 0.9), (a0, h * 0.9)), "light"),
        Shape(((b0, h * 0.3), (b1, h * 0.3), (b1, h * 0.7), (b0, h * 0.7)), "light"),
        Line(((a1, y), (b0, y)), 0.8)]


def _curved_arrow(w: float, h: float) -> list[Primitive]:
    """A torque: a curved arrow round the shaft, the shaft out to the flange (right)."""
    cx, cy, r = w * 0.45, h / 2, min(w, h) * 0.3
    points = _circle_points(cx, cy, r, 220.0, -260.0)
    return [Line(((cx, cy), (w, cy)), 1.3), Line(tuple(points[:-1]), 1.6),
            _arrow_head(points[-1], points[-3], 6.0)]


def _constant_torque(w: float, h: float) -> list[Primitive]:
    return _curved_arrow(w, h) + [Text((w * 0.15, h * 0.15), "τ", 8.0)]


def _friction(w: float, h: float) -> list[Primitive]:
    cx, y = w / 2, h * 0.5
    return [Line(((cx, 0.0), (cx, y - 8))), Shape(((cx - 10, y - 8), (cx + 10, y - 8),
                                                   (cx + 10, y + 2), (cx - 10, y + 2)), "light")
            ] + _hatch(w * 0.12, w * 0.88, y + 4, 4)


# ----- the thermal symbols -----
def _heat_capacitor(w: float, h: float) -> list[Primitive]:
    cx, top, bottom = w / 2, h * 0.3, h * 0.95
    a, b = w * 0.2, w * 0.8
    return [Line(((cx, 0.0), (cx, top))),
            Shape(((a, top), (b, top), (b, bottom), (a, bottom)), "light"),
            Text((cx, (top + bottom) / 2), "C", 7.5)]


def _thermal_conductor(a: float, b: float, y: float, h: float) -> list[Primitive]:
    top, bottom = y - h * 0.18, y + h * 0.18
    lines: list[Primitive] = [Shape(((a, top), (b, top), (b, bottom), (a, bottom)), "light")]
    x = a + 5
    while x < b - 1:
        lines.append(Line(((x, bottom), (x + (bottom - top) * 0.5, top)), 0.8))
        x += 6
    return lines


def _source_on_right(letter: str) -> Draw:
    """A fixed (no input) or signal-driven (input left) source feeding its connector on the
    right: a circle with the quantity's letter."""
    def draw(w: float, h: float) -> list[Primitive]:
        cx, cy, r = w * 0.45, h / 2, min(w, h) * 0.3
        return [Line(((0.0, cy), (cx - r, cy)), 0.9), Line(((cx + r, cy), (w, cy))),
                Circle((cx, cy), r, "white"), Text((cx, cy), letter, 8.5)]
    return draw


def _heat_flow(letter: str) -> Draw:
    def draw(w: float, h: float) -> list[Primitive]:
        y = h / 2
        return [Line(((0.0, y), (w - 8, y)), 2.0), _arrow_head((w - 1, y), (0.0, y), 8.0),
                Text((w * 0.4, h * 0.2), letter, 8.0)]
    return draw


def _connection_port(w: float, h: float) -> list[Primitive]:
    """A subsystem's physical port, seen inside: a tab pointing to its connector (right)."""
    return [Shape(((0.0, h * 0.2), (w * 0.6, h * 0.2), (w * 0.85, h / 2), (w * 0.6, h * 0.8),
                   (0.0, h * 0.8)), "light"), Line(((w * 0.85, h / 2), (w, h / 2)))]


TWO_PIN = (60.0, 40.0)
ONE_PIN = (40.0, 30.0)

SYMBOLS: dict[str, Symbol] = {
    # electrical
    "Resistor": Symbol(_two_pin(_resistor)),
    "Conductor": Symbol(_two_pin(_box)),
    "TableConductor": Symbol(_two_pin(_nonlinear)),
    "Capacitor": Symbol(_capacitor),
    "Inductor": Symbol(_two_pin(_inductor)),
    "Ground": Symbol(_ground, ONE_PIN),
    "ConstantVoltage": Symbol(_source(_through_line)),
    "SineVoltage": Symbol(_source(_sine)),
    "SignalVoltage": Symbol(_signal_lead(_source(_through_line))),
    "ConstantCurrent": Symbol(_source(_current_arrow, signs=False)),
    "SignalCurrent": Symbol(_signal_lead(_source(_current_arrow, signs=False))),
    "IdealDiode": Symbol(_two_pin(lambda a, b, y, h: _diode(a, b, y, h, "ink"))),
    "Diode": Symbol(_two_pin(lambda a, b, y, h: _diode(a, b, y, h, "white"))),
    "IdealSwitch": Symbol(_switch),
    "VoltageSensor": Symbol(_meter("V")),
    "EMF": Symbol(_probe("M")),  # (blocks/electromechanical.py: a DC machine's converter)
    "CurrentSensor": Symbol(_meter("A")),
    # translational
    "Fixed": Symbol(_fixed, ONE_PIN),
    "Mass": Symbol(_mass),
    "Rod": Symbol(_rod),
    "Spring": Symbol(_two_pin(_spring)),
    "Damper": Symbol(_two_pin(_damper)),
    "SpringDamper": Symbol(_spring_damper),
    "ElastoGap": Symbol(_gap),
    "Hardstop": Symbol(_hardstop, ONE_PIN),
    "Force": Symbol(_force_arrow),
    "ConstantForce": Symbol(_constant_force("F"), pin="right"),
    "PositionSensor": Symbol(_probe("s")),
    "SpeedSensor": Symbol(_probe("v")),
    "ForceSensor": Symbol(_meter("f")),
    # rotational
    "RotationalFixed": Symbol(_fixed, ONE_PIN),
    "Inertia": Symbol(_inertia),
    "RotationalSpring": Symbol(_two_pin(_spring)),
    "RotationalDamper": Symbol(_two_pin(_damper)),
    "RotationalSpringDamper": Symbol(_spring_damper),
    "ElastoBacklash": Symbol(_gap),
    "IdealGear": Symbol(_gear),
    "Torque": Symbol(_curved_arrow),
    "ConstantTorque": Symbol(_constant_torque, pin="right"),
    "Friction": Symbol(_friction, ONE_PIN),
    "AngleSensor": Symbol(_probe("φ")),
    "AngularSpeedSensor": Symbol(_probe("ω")),
    "TorqueSensor": Symbol(_meter("τ")),
    # thermal
    "HeatCapacitor": Symbol(_heat_capacitor, (40.0, 40.0)),
    "ThermalConductor": Symbol(_two_pin(_thermal_conductor)),
    "FixedTemperature": Symbol(_source_on_right("T"), pin="right"),
    "PrescribedTemperature": Symbol(_source_on_right("T")),
    "FixedHeatFlow": Symbol(_heat_flow("Q"), pin="right"),
    "HeatFlowSource": Symbol(_heat_flow("Q")),
    "TemperatureSensor": Symbol(_probe("T")),
    "HeatFlowSensor": Symbol(_meter("Q")),
    # a subsystem's physical port, inside the subsystem
    "ConnectionPort": Symbol(_connection_port, (40.0, 20.0), pin="right"),
}


def _borrowed(type_name: str) -> str:
    """A type's own symbol, or the library symbol it names (a component declared in a
    diagram file may look like a library one: `"symbol": "Diode"`)."""
    if type_name in SYMBOLS:
        return type_name
    borrowed = getattr(registry.get(type_name), "symbol", "")
    return borrowed if borrowed in SYMBOLS else type_name


def symbol(type_name: str) -> Symbol | None:
    """The symbol of a block type, None for a type drawn as a box with text."""
    return SYMBOLS.get(_borrowed(type_name))


def drawing(type_name: str, w: float, h: float) -> Sequence[Primitive]:
    """The primitives of a type's symbol at this size (empty without a symbol)."""
    found = SYMBOLS.get(_borrowed(type_name))
    return found.draw(w, h) if found is not None else ()
