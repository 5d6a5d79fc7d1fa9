"""The one place a sweep turns parameter values into a compiled model.

A model is compiled once per worker and each run only swaps its parameter vector
(`CompiledModel.with_params`). Values for which a block generates other code (a gain of
exactly 0 or 1 that a linear block leaves out, a conditional subsystem's settings) are
compiled as a model of their own, kept beside the first (said once per parameter in the
log), so a sweep through such values still runs at full speed elsewhere. A value that
changes the diagram's shape (a width, the ports of a block) is refused before the sweep
starts, naming the parameter (`check`).
"""
from __future__ import annotations

import logging
from typing import Any, Mapping

from blocksim.compiler import CompiledModel, compile_diagram
from blocksim.errors import StructuralParameterError
from blocksim.diagram.model import Diagram, SimulationSettings

log = logging.getLogger(__name__)

MAX_MODELS = 16  # compiled structures kept per worker (the oldest goes first)


class ModelSource:
    """Compiled models of one diagram under fixed overrides, for any swept values."""

    def __init__(self, diagram: Diagram, fixed: Mapping[str, Any],
                 settings: SimulationSettings):
        self.diagram, self.fixed, self.settings = diagram, dict(fixed), settings
        self.base = compile_diagram(diagram, self.fixed, settings)
        self.models: list[CompiledModel] = [self.base]  # one per structure, newest first
        self._said: set[str] = set()

    def model(self, values: Mapping[str, Any]) -> CompiledModel:
        """The model for one run's values (CompileError for a value the diagram refuses)."""
        if not values:
            return self.base
        values = dict(values)
        first_error = None
        for model in self.models:
            try:
                return model.with_params(values)
            except StructuralParameterError as exc:
                first_error = first_error or exc
        self._say(first_error, values)
        model = compile_diagram(self.diagram, {**self.fixed, **values}, self.settings)
        self.models.insert(1, model)
        del self.models[MAX_MODELS:]
        return model

    def check(self, values: Mapping[str, Any]) -> None:
        """Before any run: a value that changes the diagram's shape raises
        StructuralParameterError naming the parameter; one that only changes the code is
        compiled when its run comes."""
        if not values:
            return
        try:
            self.base.with_params(dict(values))
        except StructuralParameterError as exc:
            if not exc.code_only:
                raise

    def _say(self, exc: StructuralParameterError | None, values: Mapping[str, Any]) -> None:
        key = exc.detail if exc is not None else ",".join(sorted(values))
        if key not in self._said:
            self._said.add(key)
            log.info("%s: runs with such values compile a model of their own", exc or key)
