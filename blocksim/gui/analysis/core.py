"""The editor's one door to blocksim's linear analysis (blocksim.operating_point and
blocksim.linearize): what the dialogs ask for, in the words of the library's API.

These functions run in a worker thread (background.AnalysisTask) and touch no Qt object;
they are handed a copy of the diagram made on the GUI thread, so edits made meanwhile
neither reach the computation nor race with it.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from blocksim.diagram.analysis_points import AnalysisPoints
from blocksim.diagram.model import Diagram
from blocksim.errors import BlocksimError
from blocksim.gui.analysis.response import LinearModel

log = logging.getLogger(__name__)


class AnalysisUnavailable(BlocksimError):
    """This installation of blocksim cannot do the analysis asked for."""


@dataclass
class Linearization:
    """What the Linearize dialog shows: the model as the library returned it (a python-control
    StateSpace, or its plain stand-in), the same as a LinearModel, and where it was taken."""

    system: Any
    model: LinearModel
    points: AnalysisPoints
    at: str = "initial"  # where (AT)
    point: Any = None  # the OperatingPoint linearized at, None at the initial values
    notes: list[str] = field(default_factory=list)  # which blocks were linearized how


def _library(name: str) -> Any:
    import blocksim

    function = getattr(blocksim, name, None)
    if function is None:
        raise AnalysisUnavailable(f"this installation of blocksim has no {name}()")
    return function


AT = {"initial": "the initial values", "trim": "the operating point (trim)",
      "steady": "the steady state (simulated)"}  # the CLI's --at words, and what they mean


def operating_point(diagram: Diagram, method: str = "trim") -> Any:
    """Where `diagram` rests: blocksim.operating_point (trim: its states and inputs free,
    its outputs unconstrained) or blocksim.steady_state (simulated to its stop time), the
    OperatingPoint converged or not (the dialog shows its residuals either way and says
    when the conditions do not hold)."""
    if method == "steady":
        return _library("steady_state")(diagram, check=False)
    return _library("operating_point")(diagram, check=False)


def linearize(diagram: Diagram, points: AnalysisPoints, at: str = "initial") -> Linearization:
    """blocksim.linearize of `diagram` between its marked points, opening the loops marked
    open, at `at` (AT): the initial values, the trimmed operating point or the simulated
    steady state (OperatingPointError naming the worst residuals if there is none)."""
    point = None
    if at == "trim":
        point = _library("operating_point")(diagram)
    elif at == "steady":
        point = _library("steady_state")(diagram)
    system = _library("linearize")(diagram, inputs=list(points.inputs),
                                   outputs=list(points.outputs), at=point,
                                   open_loops=list(points.openings))
    model = LinearModel.from_system(system)
    # python-control spells "pid.u" as "pid:u" (its "." separates subsystems); the dialog
    # names the points as the diagram does
    model.states = [name.replace(":", ".") for name in model.states]
    if len(model.inputs) == len(points.inputs):
        model.inputs = list(points.inputs)
    if len(model.outputs) == len(points.outputs):
        model.outputs = list(points.outputs)
    return Linearization(system, model, points, at, point,
                         list(getattr(system, "notes", []) or []))
