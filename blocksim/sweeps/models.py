"""The one place a sweep turns parameter values into a compiled model.

With runtime parameters (`CompiledModel.with_params`), a model is compiled once per worker
and each run only swaps its parameter vector; a change that would alter the structure
raises `StructuralParameterError` naming the parameter, and the sweep refuses it up front.
Without them, each run compiles the diagram with its values (said once in the log), which
works for any parameter, a width included, only slower.
"""
from __future__ import annotations

import logging
from typing import Any, Mapping

from blocksim.compiler import CompiledModel, compile_diagram
from blocksim.model import Diagram, SimulationSettings

log = logging.getLogger(__name__)

_said_recompile = False


class ModelSource:
    """Compiled models of one diagram under fixed overrides, for any swept values."""

    def __init__(self, diagram: Diagram, fixed: Mapping[str, Any],
                 settings: SimulationSettings):
        self.diagram, self.fixed, self.settings = diagram, dict(fixed), settings
        self.base = compile_diagram(diagram, self.fixed, settings)
        self.runtime = callable(getattr(self.base, "with_params", None))

    def model(self, values: Mapping[str, Any]) -> CompiledModel:
        """The model for one run's values (CompileError for a value the diagram refuses)."""
        if not values:
            return self.base
        if self.runtime:
            return self.base.with_params(dict(values))
        _say_recompile()
        return compile_diagram(self.diagram, {**self.fixed, **values}, self.settings)

    def check(self, values: Mapping[str, Any]) -> None:
        """Before any run: a structural change (with runtime parameters) raises, naming the
        parameter; without them, nothing to check (each run compiles its own model)."""
        if self.runtime and values:
            self.base.with_params(dict(values))


def _say_recompile() -> None:
    global _said_recompile
    if not _said_recompile:
        _said_recompile = True
        log.info("this blocksim has no runtime parameters: each run of the sweep compiles "
                 "the diagram with its values")
