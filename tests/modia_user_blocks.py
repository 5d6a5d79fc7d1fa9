"""ModiaMath's examples written as user blocks (blocksim.UserBlock), for the tests of
tests/test_user_blocks.py: the bouncing ball and SimpleStateEvents, plus a block numba
cannot compile (its event calls math.fsum)."""
from __future__ import annotations

import contextlib
import math
from typing import Iterator

from blocksim.blocktypes import registry
from blocksim.blocktypes.blockspec import Param, Port
from blocksim.user import CONTINUE, TERMINATE, Crossing, Discrete, State, UserBlock, positive, rising


class ModiaBall(UserBlock):
    """ModiaMath's bouncing ball: h' = v, v' = -g while flying; at the rising edge of -h
    (an impact) v := -e v, and if that rebound is under v_small it rests (flying := 0,
    v := 0)."""

    name = "ModiaBall"
    category = "Examples"
    params = (Param("h0", default=1.0, unit="m", doc="initial height"),
              Param("e", default=0.7, doc="coefficient of restitution"),
              Param("g", default=9.81, unit="m/s^2", doc="gravity"),
              Param("v_small", default=0.01, unit="m/s", doc="slowest rebound"))
    outputs = (Port("h", "height"), Port("v", "velocity"))
    states = (State("h", start="h0"), State("v"))
    discrete_states = (Discrete("flying", 1.0),)
    crossings = (Crossing("impact", "rising"),)
    feedthrough_outputs = False

    @staticmethod
    def out(t, x, d, u, p):
        return x

    @staticmethod
    def der(t, x, d, u, p):
        return (x[1], -p.g if d[0] != 0.0 else 0.0)

    @staticmethod
    def crossing(t, x, d, u, p):
        return (-x[0],)

    @staticmethod
    def event(t, x, d, u, p, zo, zn, init):
        if not init and rising(zo[0], zn[0]):  # ModiaMath's edge!(-h)
            v = -p.e * x[1]
            if v < p.v_small:
                return ((x[0], 0.0), (0.0,), CONTINUE)
            return ((x[0], v), d, CONTINUE)
        return (x, d, CONTINUE)


class SimpleStateEvents(UserBlock):
    """ModiaMath's SimpleStateEvents: m s'' + d s' + k s = f, f = 0 while s > 0 else fMax
    (positive!(s) as a latched mode)."""

    name = "SimpleStateEvents"
    category = "Examples"
    params = (Param("m", default=1.0, unit="kg"), Param("k", default=1.0, unit="N/m"),
              Param("d", default=0.1, unit="N s/m"), Param("fMax", default=1.5, unit="N"),
              Param("s0", default=2.0, unit="m"))
    outputs = (Port("s", "position"), Port("v", "velocity"), Port("f", "force"))
    states = (State("s", start="s0"), State("v"))
    discrete_states = (Discrete("s_positive", 0.0),)
    crossings = (Crossing("s", "either"),)
    feedthrough_outputs = False

    @staticmethod
    def out(t, x, d, u, p):
        return (x[0], x[1], 0.0 if d[0] != 0.0 else p.fMax)

    @staticmethod
    def der(t, x, d, u, p):
        f = 0.0 if d[0] != 0.0 else p.fMax
        return (x[1], (f - p.d * x[1] - p.k * x[0]) / p.m)

    @staticmethod
    def crossing(t, x, d, u, p):
        return (x[0],)

    @staticmethod
    def event(t, x, d, u, p, zo, zn, init):
        return (x, (1.0 if positive(zn[0]) else 0.0,), CONTINUE)


class PythonOnlyDecay(UserBlock):
    """x' = -x, halved at each time event of its clock (every `period`); its event calls
    math.fsum, which numba cannot compile: it runs through the Python fallback."""

    name = "PythonOnlyDecay"
    category = "Examples"
    params = (Param("period", default=0.5, unit="s"),)
    outputs = (Port("y"),)
    states = (State("x", start=1.0),)
    discrete_states = (Discrete("next", 0.5),)
    clock = "next"

    @staticmethod
    def out(t, x, d, u, p):
        return x

    @staticmethod
    def der(t, x, d, u, p):
        return (-x[0],)

    @staticmethod
    def event(t, x, d, u, p, zo, zn, init):
        if not init and t >= d[0]:  # numba has no math.fsum
            return ((math.fsum((x[0], -0.5 * x[0])),), (d[0] + p.period,), CONTINUE)
        return (x, d, CONTINUE)


class Countdown(UserBlock):
    """Counts its clock's ticks (every `period`, the first at `period`) and ends the run at
    tick `ticks` (ModiaMath's setNextEvent! and Terminate); the output is the count."""

    name = "Countdown"
    category = "Examples"
    params = (Param("period", default=0.3, unit="s"), Param("ticks", "int", 4))
    outputs = (Port("n", "ticks so far"),)
    states = (State("age"),)  # (a state, so that the numba backend runs its loop)
    discrete_states = (Discrete("count", 0.0), Discrete("next", "period"))
    clock = "next"

    @staticmethod
    def out(t, x, d, u, p):
        return (d[0],)

    @staticmethod
    def der(t, x, d, u, p):
        return (1.0,)

    @staticmethod
    def event(t, x, d, u, p, zo, zn, init):
        if init or t < d[1]:
            return (x, d, CONTINUE)
        count = d[0] + 1.0
        return (x, (count, (count + 1.0) * p.period), TERMINATE if count >= p.ticks else CONTINUE)


BLOCK_TYPES = (ModiaBall, SimpleStateEvents, PythonOnlyDecay, Countdown)


@contextlib.contextmanager
def registered() -> Iterator[None]:
    """These block types in the registry for the duration."""
    for block_type in BLOCK_TYPES:
        registry.register(block_type, source="tests")
    try:
        yield
    finally:
        for block_type in BLOCK_TYPES:
            registry.unregister(block_type.name)
