"""blocksim: block-diagram simulation with precise hybrid events.

    import blocksim
    diagram = blocksim.load("diagrams/bouncing_ball.json")
    results = blocksim.simulate(diagram, rtol=1e-10, params={"beta": 0})
    results["x"], results.events

    d = blocksim.DiagramBuilder(stop=5)        # a diagram built in Python (docs/python.md)
    d.add("Step", id="s").y >> d.add("Scope", id="out").u

    op = blocksim.operating_point(diagram)     # trim (docs/analysis.md)
    sys = blocksim.linearize(diagram, inputs=["u"], outputs=["y"], at=op)

The names below are imported on first use (PEP 562), so that `blocksim --help` and a
command that needs only part of the package do not pay for importing all of it.
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_PUBLIC = {
    "blocksim.api.facade": ("load", "compile", "simulate"),
    "blocksim.api.builder": ("BlockHandle", "BuildError", "DiagramBuilder", "InPort", "OutPort"),
    "blocksim.engine": ("Event", "Results"),
    "blocksim.compiler": ("CompiledModel",),
    "blocksim.errors": ("BlocksimError", "CompileError", "DiagramFileError", "ExpressionError",
                        "SimulationError", "StructuralParameterError"),
    "blocksim.diagram.model": ("Block", "Diagram", "PortRef", "SimulationSettings", "Wire"),
    "blocksim.sweeps": ("sweep", "SweepInterrupted", "SweepTable"),
    "blocksim.user": ("UserBlock",),
    "blocksim.files.write_rule": ("WriteRefused",),
    "blocksim.analysis": ("operating_point", "steady_state", "linearize", "frequency_response",
                          "OperatingPoint", "FrequencyResponse", "LinearModel",
                          "AnalysisError", "OperatingPointError"),
    "blocksim.simulink": ("import_simulink",),
    "blocksim.export.api": ("export_fmu",),
}
_MODULE_OF = {name: module for module, names in _PUBLIC.items() for name in names}

__all__ = ["load", "compile", "simulate", "Results", "Event", "Diagram", "Block", "Wire",
           "PortRef", "SimulationSettings", "DiagramBuilder", "BlockHandle", "InPort", "OutPort",
           "UserBlock", "sweep", "SweepTable", "SweepInterrupted",
           "BuildError", "BlocksimError", "CompileError",
           "DiagramFileError", "ExpressionError", "SimulationError", "__version__"]
__all__ += ["CompiledModel", "StructuralParameterError", "WriteRefused"]
__all__ += ["operating_point", "steady_state", "linearize", "frequency_response",
            "OperatingPoint", "FrequencyResponse", "LinearModel", "AnalysisError",
            "OperatingPointError"]
__all__ += ["import_simulink"]
__all__ += ["export_fmu"]


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'blocksim' has no attribute '{name}'")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


if TYPE_CHECKING:  # what type checkers and IDEs see
    from blocksim.api.facade import compile, load, simulate
    from blocksim.api.builder import BlockHandle, BuildError, DiagramBuilder, InPort, OutPort
    from blocksim.compiler import CompiledModel
    from blocksim.engine import Event, Results
    from blocksim.errors import (BlocksimError, CompileError, DiagramFileError, ExpressionError,
                                 SimulationError, StructuralParameterError)
    from blocksim.diagram.model import Block, Diagram, PortRef, SimulationSettings, Wire
    from blocksim.sweeps import SweepInterrupted, SweepTable, sweep
    from blocksim.user import UserBlock
    from blocksim.files.write_rule import WriteRefused
    from blocksim.analysis import (AnalysisError, FrequencyResponse, LinearModel,
                                   OperatingPoint, OperatingPointError, frequency_response,
                                   linearize, operating_point, steady_state)
    from blocksim.simulink import import_simulink
    from blocksim.export.api import export_fmu
