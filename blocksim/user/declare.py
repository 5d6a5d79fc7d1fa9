"""What a block written in Python declares besides ports and parameters: its continuous
states (with nominal value, absolute tolerance or no error control), its discrete states
and its zero-crossing functions with their directions."""
from __future__ import annotations

import math
from dataclasses import dataclass

DIRECTIONS = {"rising": 1, "falling": -1, "either": 0}

# What `event` returns as its third value: go on, or end the run successfully (ModiaMath's
# NoRestart/Restart, and Terminate; a reset of the states always restarts the solver).
CONTINUE = 0
TERMINATE = 1


@dataclass(frozen=True)
class State:
    """A continuous state of a user block.

    start: its initial value, a number or the name of a parameter of the block.
    nominal: its typical magnitude; the solver's absolute tolerance for it is then
    atol * nominal (ModiaMath's nominal values). atol: an absolute tolerance of its own,
    overriding the run's atol and the nominal. error_control: False keeps the state out of
    the step-size control altogether (a state whose error does not matter, e.g. an
    integrated cost; Modelica's and ModiaMath's "no error control").
    """

    name: str
    start: float | str = 0.0
    nominal: float = 1.0
    atol: float | None = None
    error_control: bool = True

    def problem(self) -> str | None:
        if not self.name.isidentifier():
            return f"state name {self.name!r} is not an identifier"
        if not (math.isfinite(self.nominal) and self.nominal > 0.0):
            return f"state '{self.name}': nominal must be finite and > 0, got {self.nominal!r}"
        if self.atol is not None and not (math.isfinite(self.atol) and self.atol > 0.0):
            return f"state '{self.name}': atol must be finite and > 0, got {self.atol!r}"
        return None


@dataclass(frozen=True)
class Discrete:
    """A discrete state (a mode, a counter, a held value): it changes only in `event`, so
    what `der`, `out` and `crossing` read from it is latched between events. start: a
    number or the name of a parameter."""

    name: str
    start: float | str = 0.0


@dataclass(frozen=True)
class Crossing:
    """A zero-crossing function (the k-th value `crossing` returns): the engine locates
    where it crosses zero in `direction` ("rising", "falling" or "either") to machine
    precision and calls `event` there."""

    name: str
    direction: str = "either"

    def problem(self) -> str | None:
        if self.direction not in DIRECTIONS:
            return (f"crossing '{self.name}': direction must be one of "
                    f"{', '.join(DIRECTIONS)}, got {self.direction!r}")
        return None


def positive(z: float) -> bool:
    """ModiaMath's positive!: the latched sign of a crossing (as given to `event`) is > 0."""
    return z > 0.0


def negative(z: float) -> bool:
    """ModiaMath's negative!: the latched sign is < 0."""
    return z < 0.0


def rising(zo: float, zn: float) -> bool:
    """ModiaMath's edge!: in this event the crossing went from <= 0 to > 0, or from < 0 to
    0 (Simulink's rising edge)."""
    return (zo < 0.0 and zn >= 0.0) or (zo == 0.0 and zn > 0.0)


def falling(zo: float, zn: float) -> bool:
    """The mirror image of `rising`."""
    return (zo > 0.0 and zn <= 0.0) or (zo == 0.0 and zn < 0.0)


def change(zo: float, zn: float) -> bool:
    """ModiaMath's change!: the crossing's sign changed in this event."""
    return zo != zn
