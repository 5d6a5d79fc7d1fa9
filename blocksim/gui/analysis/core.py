"""The editor's one door to blocksim's linear analysis (blocksim.operating_point and
blocksim.linearize): what the dialogs ask for, in the words of the library's API.

These functions run in a worker thread (background.AnalysisTask) and touch no Qt object;
they are handed a copy of the diagram made on the GUI thread, so edits made meanwhile
neither reach the computation nor race with it.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
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


def _library(name: str) -> Any:
    import blocksim

    function = getattr(blocksim, name, None)
    if function is None:
        raise AnalysisUnavailable(f"this installation of blocksim has no {name}()")
    return function


def operating_point(diagram: Diagram) -> Any:
    """blocksim.operating_point of `diagram` (its states and inputs free, its outputs
    unconstrained): the OperatingPoint, converged or not (the dialog says which)."""
    return _library("operating_point")(diagram)


def linearize(diagram: Diagram, points: AnalysisPoints, trim: bool) -> Linearization:
    """blocksim.linearize of `diagram` between its marked points, opening the loops marked
    open, at the operating point (`trim`) or at the initial values."""
    frozen = diagram
    at = None
    if trim:
        at = _library("operating_point")(frozen)
        if not getattr(at, "converged", True):
            raise NotConverged(at)
    arguments: dict[str, Any] = {"inputs": list(points.inputs),
                                 "outputs": list(points.outputs), "at": at}
    if points.openings:
        arguments["openings"] = list(points.openings)
    system = _library("linearize")(frozen, **arguments)
    return Linearization(system, LinearModel.from_system(system), points, at)


class NotConverged(BlocksimError):
    """The trim found no operating point; the dialog shows its residuals."""

    def __init__(self, point: Any):
        self.point = point
        report = point.report() if hasattr(point, "report") else ""
        super().__init__("no operating point found (the trim did not converge)"
                         + (f":\n{report}" if report else ""))
