"""The standard blocksim block library, registered through the `blocksim.blocks` entry point.

Each family module lists its declarations in BLOCK_TYPES; this package joins them.
"""
from __future__ import annotations

from . import continuous, discontinuities, math_ops, ports, sinks, sources
from . import algebraic, discrete, discrete_integrator, discrete_linear, linear, logic, lookup
from . import delays, math_more, nonlinear, pid, slew

BLOCK_TYPES = tuple(
    block_type
    for module in (sources, math_ops, math_more, algebraic, lookup, continuous, delays, linear,
                   discontinuities, nonlinear, slew, discrete, discrete_integrator,
                   discrete_linear, pid, logic, sinks, ports)
    for block_type in module.BLOCK_TYPES
)
