"""Linear analysis: operating points (trim, or steady state by simulation), linear models
at them between analysis points (to python-control), and frequency responses by
simulation (docs/analysis.md).

    op = blocksim.operating_point(diagram)             # where it rests
    sys = blocksim.linearize(diagram, inputs=["pid.u"], outputs=["w"], at=op,
                             open_loops=["pid.u"])     # a python-control StateSpace
    fr = blocksim.frequency_response(diagram, "r", "y", [0.1, 1, 10], at=op)
"""
from __future__ import annotations

from blocksim.analysis.errors import AnalysisError, OperatingPointError
from blocksim.analysis.frequency import FrequencyResponse, frequency_response
from blocksim.analysis.linearize import linearize
from blocksim.analysis.operating_point import OperatingPoint, operating_point, steady_state
from blocksim.analysis.statespace import LinearModel

__all__ = ["AnalysisError", "FrequencyResponse", "LinearModel", "OperatingPoint",
           "OperatingPointError", "frequency_response", "linearize", "operating_point",
           "steady_state"]
