"""The standard blocksim block library, registered through the `blocksim.blocks` entry point.

Each family module lists its declarations in BLOCK_TYPES; this package joins them.
"""
from __future__ import annotations

from . import continuous, discontinuities, math_ops, ports, sinks, sources
from . import algebraic, discrete, discrete_integrator, discrete_linear, linear, logic, lookup
from . import buses, continuous_more, delays, files, generators, lookup_nd, math_more, noise
from . import nonlinear, pid, routing, second_order, slew, trig
from . import electrical, electromechanical, rotational, thermal, translational
from . import fmu

BLOCK_TYPES = tuple(
    block_type
    for module in (sources, generators, noise, files, math_ops, math_more, trig, algebraic,
                   lookup, lookup_nd, continuous, second_order, continuous_more, delays, linear,
                   discontinuities, nonlinear, slew, discrete, discrete_integrator,
                   discrete_linear, pid, logic, routing, buses, sinks, ports, electrical,
                   translational, rotational, electromechanical, thermal, fmu)
    for block_type in module.BLOCK_TYPES
)
