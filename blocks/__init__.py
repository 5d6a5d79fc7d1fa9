"""The standard blocksim block library, registered through the `blocksim.blocks` entry point.

Each family module lists its declarations in BLOCK_TYPES; this package joins them.
"""
from __future__ import annotations

from . import continuous, discontinuities, math_ops, ports, sinks, sources
from . import algebraic, discrete, discrete_integrator, discrete_linear, linear, logic, lookup
from . import continuous_more, files, generators, math_more, noise, nonlinear, pid
from . import second_order, slew, trig

BLOCK_TYPES = tuple(
    block_type
    for module in (sources, generators, noise, files, math_ops, math_more, trig, algebraic,
                   lookup, continuous, second_order, continuous_more, linear,
                   discontinuities, nonlinear, slew, discrete, discrete_integrator,
                   discrete_linear, pid, logic, sinks, ports)
    for block_type in module.BLOCK_TYPES
)
