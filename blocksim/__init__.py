"""blocksim: block-diagram simulation with precise hybrid events.

    import blocksim
    diagram = blocksim.load("diagrams/bouncing_ball.json")
    results = blocksim.simulate(diagram, rtol=1e-10, params={"beta": 0})
    results["x"], results.events

    d = blocksim.DiagramBuilder(stop=5)        # a diagram built in Python (docs/python.md)
    d.add("Step", id="s").y >> d.add("Scope", id="out").u
"""
from blocksim.api import compile, load, simulate
from blocksim.builder import BlockHandle, BuildError, DiagramBuilder, InPort, OutPort
from blocksim.engine import Event, Results
from blocksim.errors import (BlocksimError, CompileError, DiagramFileError, ExpressionError,
                             SimulationError)
from blocksim.model import Block, Diagram, PortRef, SimulationSettings, Wire
from blocksim.sweeps import SweepInterrupted, SweepTable, sweep
from blocksim.user import UserBlock
from blocksim.compiler import CompiledModel
from blocksim.errors import StructuralParameterError

__version__ = "0.1.0"

__all__ = ["load", "compile", "simulate", "Results", "Event", "Diagram", "Block", "Wire",
           "PortRef", "SimulationSettings", "DiagramBuilder", "BlockHandle", "InPort", "OutPort",
           "UserBlock", "sweep", "SweepTable", "SweepInterrupted",
           "BuildError", "BlocksimError", "CompileError",
           "DiagramFileError", "ExpressionError", "SimulationError", "__version__"]
__all__ += ["CompiledModel", "StructuralParameterError"]
