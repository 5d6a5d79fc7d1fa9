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
    at: Any = None  # the OperatingPoint linearized at, or None (the diagram's initial values)
    notes: list[str] = field(default_factory=list)  # which blocks were linearized how


def _library(name: str) -> Any:
    import blocksim

    function = getattr(blocksim, name, None)
    if function is None:
        raise AnalysisUnavailable(f"this installation of blocksim has no {name}()")
    return function


def operating_point(diagram: Diagram) -> Any:
    """blocksim.operating_point of `diagram` (its states and inputs free, its outputs
    unconstrained): the OperatingPoint, converged or not (the dialog shows its residuals
    either way, and says when the conditions do not hold)."""
    return _library("operating_point")(diagram, check=False)


def linearize(diagram: Diagram, points: AnalysisPoints, trim: bool) -> Linearization:
    """blocksim.linearize of `diagram` between its marked points, opening the loops marked
    open, at the operating point (`trim`; OperatingPointError naming the worst residuals
    if there is none) or at the initial values."""
    at = _library("operating_point")(diagram) if trim else None
    system = _library("linearize")(diagram, inputs=list(points.inputs),
                                   outputs=list(points.outputs), at=at,
                                   open_loops=list(points.openings))
    model = LinearModel.from_system(system)
    # python-control spells "pid.u" as "pid:u" (its "." separates subsystems); the dialog
    # names the points as the diagram does
    model.states = [name.replace(":", ".") for name in model.states]
    if len(model.inputs) == len(points.inputs):
        model.inputs = list(points.inputs)
    if len(model.outputs) == len(points.outputs):
        model.outputs = list(points.outputs)
    return Linearization(system, model, points, at, list(getattr(system, "notes", []) or []))
