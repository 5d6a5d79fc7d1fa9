"""The documented limits of what one diagram may ask for, in one place.

A diagram file is a few kilobytes; without these limits a few characters in it (a width of
1e7, an output interval of 1e-9, a pulse period of 1e-12) ask for gigabytes or for a run
that never ends. The compiler checks every limit before anything large is allocated, and
the message says which block, parameter or setting exceeds which limit, so the user knows
what to change. The expression language's own limits (one expression's text, depth and
arrays) live in `blocksim.expressions.language` and are repeated here for reference.

The sizes were chosen from measurements on a 2-CPU machine: compiling costs about 100 µs and
7 kB per scalar signal (100,000 signals: 10 s, 0.7 GB); a run keeps its results in float64
arrays and copies them once when it ends.
"""
from __future__ import annotations

import math
import os
import sys

from blocksim.expressions.language import MAX_DEPTH, MAX_ELEMENTS, MAX_LENGTH, MAX_SECONDS, MAX_WORK

GIB = 1 << 30
MIB = 1 << 20

# ----- the diagram -------------------------------------------------------------------------
MAX_SIGNALS = 100_000
"""Scalar slots of a compiled model: signal elements, states, discrete states and zero
crossings together (each costs a line of generated code). Also the most elements a
non-table vector parameter may have, since its length sets a signal's width."""

MAX_CODE_BYTES = 12 * MIB
"""Characters of generated code; Python's compiler needs about 100 bytes of memory per
character (a 1000-state StateSpace writes 17 MB of sums: 2 GB and half a minute)."""

MAX_TABLE_ELEMENTS = 1_000_000
"""Elements of one table or matrix parameter (`Param(table=True)`: lookup tables, time
tables, state-space matrices); blocks keep a few Python floats per element."""

MAX_PARAMETER_BYTES = 512 * MIB
"""All parameter values of a diagram together (diagram, subsystem and block parameters);
a value shared by several scopes or blocks counts once."""

MAX_PORTS = 1_000
"""Input or output ports of one block (a Sum's signs, a Mux's inputs)."""

MAX_NESTING = 100
"""Levels of subsystems inside subsystems."""

MAX_INT = 2 ** 53
"""Largest magnitude of an integer parameter: beyond it float64 has no exact integers."""

# ----- a run -------------------------------------------------------------------------------
MAX_RESULT_BYTES = 1 * GIB
"""The results of a run: (output rows) x (1 + logged columns) x 8 bytes plus the event log.
The engine builds them incrementally and copies them once at the end (peak about twice)."""

EVENT_BYTES = 128
"""Memory of one entry of the event log (a Python object), for the estimate above."""

MAX_STEPS = 100_000_000
"""Steps a run may be forced to take by its settings (a fixed step or a max step) and time
events it may be forced to handle: at a million steps per second, about two minutes."""

MAX_HITS = 10_000_000
"""Sample hits of the discrete rates in one run, counted per rate over [start, stop] and
summed (each hit is an event of the engine: about 10 µs in Python, so 1e7 hits is a few
minutes; the 1 kHz PI benchmark over 1000 s has 1e6 + 1). Raised for a process by the
environment variable BLOCKSIM_MAX_HITS (`max_hits`)."""

MAX_HISTORY_VALUES = 32 * MIB
"""Values (8 bytes each) of the input histories of transport delays in all (256 MiB): each
keeps `buffer_size` steps of its input (`blockspec.History`)."""

MAX_CLOCK_BITS = 1000
"""Bits of the denominator of the discrete rates' common tick (`rates.Clock`): beyond
about 1024 it has no double (a period or offset near 1e-300, or a subnormal one), and the
exact clock could not give hit times."""

MIN_STEP_ULPS = 100
"""A step, max step or output interval must span at least this many units in the last
place (ulp) of the time scale max(|start|, |stop|): below that, t + h rounds to a different
step, or to t itself (no progress at all)."""

MIN_SPAN_ULPS = 10_000
"""stop - start must span at least this many ulps of the time scale."""

EPS = sys.float_info.epsilon
MIN_RTOL = EPS
"""Smallest relative tolerance accepted; below 100 eps the solvers work to 100 eps (scipy's
rule, followed by our dopri5) and the compiler says so in a warning."""
HONOURED_RTOL = 100 * EPS

__all__ = ["MAX_SIGNALS", "MAX_CODE_BYTES", "MAX_TABLE_ELEMENTS", "MAX_PARAMETER_BYTES",
           "MAX_PORTS", "MAX_NESTING", "MAX_INT", "MAX_RESULT_BYTES", "EVENT_BYTES",
           "MAX_STEPS", "MAX_HITS", "MAX_HISTORY_VALUES", "MAX_CLOCK_BITS", "MIN_STEP_ULPS",
           "MIN_SPAN_ULPS",
           "MIN_RTOL", "HONOURED_RTOL", "MAX_LENGTH", "MAX_DEPTH", "MAX_ELEMENTS", "MAX_WORK",
           "MAX_SECONDS", "GIB", "MIB", "max_hits"]


def size_text(n_bytes: float) -> str:
    """Bytes for a message: '1.5 GiB', '300 MiB'."""
    if n_bytes >= GIB:
        return f"{n_bytes / GIB:.3g} GiB"
    return f"{n_bytes / MIB:.3g} MiB"


def max_hits() -> float:
    """MAX_HITS, or the environment variable BLOCKSIM_MAX_HITS when it is a number > 0 (read
    at each compile: cheap, and a test or a long batch job may set it at any time)."""
    text = os.environ.get("BLOCKSIM_MAX_HITS", "")
    try:
        value = float(text)
    except ValueError:
        return MAX_HITS
    return value if value > 0 and not math.isnan(value) else MAX_HITS
