"""A diagram compiled with its analysis points (`points.rewrite`), and what the analysis
evaluates and differentiates: the derivatives, the measured signals and a sample hit as
functions of the flat continuous states x (the model's own, then the injected values)
and discrete slots m, at one time with the zero-crossing signs latched.

States and slots are named by block path: "speed" (a block's only state), "pid[1]" (its
second), and a discrete slot "pi.d[1]"; operating points carry values by these names, so
they pass between models with different analysis points.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from blocksim.analysis import points as pts
from blocksim.analysis.errors import AnalysisError
from blocksim.compiler.compiled import CompiledModel, compile_diagram
from blocksim.diagram.format import load_diagram
from blocksim.diagram.model import Diagram, SimulationSettings
from blocksim.errors import shown

DEFAULT_DELAY_ORDER = 6  # Pade order of a TransportDelay (`pade.py`)


class EvaluationError(AnalysisError):
    """A block's formula failed where the analysis evaluated the model."""


def diagram_of(model: Diagram | CompiledModel) -> tuple[Diagram, dict[str, Any],
                                                         SimulationSettings]:
    """The diagram, parameter overrides and settings behind `model`: a CompiledModel is
    read again from its file with the overrides it was compiled with (the analysis adds
    blocks to the diagram, which a compiled model no longer has)."""
    if isinstance(model, Diagram):
        return model, {}, model.simulation
    if isinstance(model, CompiledModel):
        overrides = dict(model.runtime.overrides) if model.runtime is not None else {}
        if not os.path.isfile(model.source):
            raise AnalysisError("this compiled model was not read from a file: pass its "
                                "Diagram to the analysis instead", file=model.source)
        diagram = load_diagram(model.source)
        if diagram.python:
            raise AnalysisError("a diagram with user block types: pass the Diagram "
                                "(loaded with trust) instead of the compiled model",
                                file=model.source)
        return diagram, overrides, model.settings
    raise TypeError(f"expected a Diagram or a CompiledModel, got {type(model).__name__}")


@dataclass(frozen=True)
class Slots:
    """Where one block's states and discrete slots are in x and m."""

    path: str
    block_type: str
    states: range
    discrete: range


class AnalysisModel:
    """One compiled variant of a diagram for analysis (module docstring)."""

    def __init__(self, model: Diagram | CompiledModel, params: Mapping[str, Any] | None = None,
                 *, inputs: Sequence[str] = (), outputs: Sequence[str] = (),
                 open_loops: Sequence[str] = (),
                 delay_order: int | None = DEFAULT_DELAY_ORDER):
        """`delay_order`: the Pade order TransportDelays become; None keeps them (a
        run's model, not a linearization's)."""
        diagram, overrides, settings = diagram_of(model)
        overrides.update(params or {})
        self.diagram = diagram
        self.source = diagram.source
        self.inputs = [pts.resolve(diagram, name) for name in inputs]
        self.outputs = [pts.resolve(diagram, name) for name in outputs]
        self.opened = [pts.resolve(diagram, name) for name in open_loops]
        for point in self.inputs + self.opened:
            if point.kind == "inport" and point in self.opened:
                raise AnalysisError(f"'{shown(point.name)}' is an Inport: it has no loop to "
                                    f"open", file=self.source)
        measure = list({p.name: p for p in self.outputs + self.opened}.values())
        plan = pts.rewrite(diagram, self.inputs, measure, self.opened)
        compiled = compile_diagram(plan.diagram, overrides, settings)
        delays = {rec.flat.path: float(rec.flat.p.delay)
                  for rec in compiled.runtime.structure.blocks
                  if rec.index >= 0 and rec.flat.block_type.name == "TransportDelay"}
        if delays and delay_order is not None:
            plan = pts.rewrite(diagram, self.inputs, measure, self.opened, delays,
                               delay_order)
            compiled = compile_diagram(plan.diagram, overrides, settings)
        if delay_order is not None and compiled.history:
            owner = compiled.block_ids[compiled.history[0].block]
            raise AnalysisError(f"block '{shown(owner)}' reads its input's past (a variable "
                                f"delay): it has no linearization; frequency_response "
                                f"simulates it", file=self.source)
        self.plan = plan
        self.model = compiled
        self.delay_order = delay_order
        self.blocks = [Slots(rec.flat.path, rec.flat.block_type.name, rec.states,
                             rec.discrete)
                       for rec in compiled.runtime.structure.blocks if rec.index >= 0]
        by_path = {b.path: b for b in self.blocks}
        self.injected = {name: by_path[path].states.start
                         for name, path in plan.injected.items()}
        logged = {sig.name: sig.indices for sig in compiled.logged}
        self.measured = {name: logged[probe][0] for name, probe in plan.measured.items()
                         if len(logged[probe]) == 1}
        for point in self.outputs + self.opened + self.inputs:
            if point.name in plan.measured and point.name not in self.measured or (
                    point.name in self.injected and not self._scalar_sum(point.name)):
                raise AnalysisError(f"analysis point '{shown(point.name)}' is a vector "
                                    f"signal: the analysis takes scalar points (pick an "
                                    f"element with a Selector)", file=self.source)
        own = set(self.injected.values())
        self.state_index = [i for i in range(compiled.n_states) if i not in own]
        self.state_names = self._names("states")
        self.discrete_index = [i for b in self.blocks for i in b.discrete
                               if not b.path.split("/")[-1].startswith(pts.PREFIX)]
        self.discrete_names = self._names("discrete")
        self.logged = {sig.name: list(sig.indices) for sig in compiled.logged
                       if not sig.name.split("/")[-1].startswith(pts.PREFIX)}

    def _scalar_sum(self, name: str) -> bool:
        """Whether the Sum adding an input's value to its signal is scalar (a scalar
        injection added to a vector would move every element at once)."""
        path = self.plan.injected[name]
        total = path.replace(f"{pts.PREFIX}in", f"{pts.PREFIX}sum") + ".y"
        names = self.model.signal_names
        return total in names or total + "[0]" not in names

    def _names(self, kind: str) -> list[str]:
        names = []
        for b in self.blocks:
            if b.path.split("/")[-1].startswith(pts.PREFIX):
                continue
            slots = getattr(b, kind)
            for k in range(len(slots)):
                if kind == "discrete":
                    names.append(f"{b.path}.d[{k}]")
                else:
                    names.append(b.path if len(slots) == 1 else f"{b.path}[{k}]")
        return names

    # ----- the model's functions -----
    @property
    def rates(self) -> tuple:
        return self.model.rates

    def period(self) -> float | None:
        """The sample period of the one discrete rate, None for a continuous model;
        AnalysisError for several rates or triggered subsystems."""
        model = self.model
        if model.trigger_slots:
            raise AnalysisError("triggered subsystems cannot be linearised (their rate "
                                "is an event, not a period)", file=self.source)
        if not model.rates:
            return None
        if len(model.rates) > 1:
            shown_rates = ", ".join(f"{r.period:g} s" for r in model.rates)
            raise AnalysisError(f"the model has several sample rates ({shown_rates}): "
                                f"linearize supports one", file=self.source)
        return float(model.rates[0].period)

    def _call(self, name: str, *args: Any) -> Any:
        """A generated function; a block formula's failure (log of a negative number, a
        division by zero) as an EvaluationError naming the block."""
        try:
            return self.model.functions[name](*args)
        except (ArithmeticError, ValueError) as exc:
            from blocksim.engine.arithmetic import describe_arithmetic

            block = self.model.block_of_exception(exc)
            where = f"block '{shown(block)}': " if block else ""
            raise EvaluationError(f"{where}{describe_arithmetic(exc)} (evaluating the "
                                  f"model at t = {args[0]:g})", file=self.source) from None

    def deriv(self, t: float, x: np.ndarray, m: np.ndarray, z: np.ndarray) -> np.ndarray:
        return np.array(self._call("deriv", t, x, m, z), dtype=float)

    def signals(self, t: float, x: np.ndarray, m: np.ndarray, z: np.ndarray) -> np.ndarray:
        return np.array(self._call("outputs", t, x, m, z), dtype=float)

    def hit(self, t: float, x: np.ndarray, m: np.ndarray, z: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray]:
        """(x, m) just after a sample hit of every rate at t (the blocks' outputs, then
        their updates: `sample`), from copies."""
        x2, m2 = np.array(x, dtype=float), np.array(m, dtype=float)
        if "sample" not in self.model.empty:
            hits = [1.0] * len(self.model.rates) + [0.0] * len(self.model.trigger_slots)
            self._call("sample", t, x2, m2, z, hits)
        return x2, m2

    def settle(self, t: float, x: np.ndarray, m: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(x, m, z) as a run starting at t from (x, m) holds them once its start is
        settled: the signs latched, the blocks' modes updated, a sample hit due at t
        taken (the engine's own event iteration)."""
        from blocksim.engine.simulator import RunState, Simulator

        settings = self.model.settings.replaced(start=t, stop=t + max(1.0, abs(t)),
                                                backend="python", output_interval=None)
        sim = Simulator(self.model, settings)
        st = RunState(t, np.array(x, dtype=float), np.array(m, dtype=float),
                      np.zeros(self.model.n_zc))
        with np.errstate(all="ignore"):
            sim._event(st, init=True)  # the start event of a run (the engine's semantics)
        return st.x, st.m, st.z

    # ----- values by name -----
    def vectors(self, states: Mapping[str, float], discrete: Mapping[str, float],
                inputs: Mapping[str, float]) -> tuple[np.ndarray, np.ndarray]:
        """x and m with the named values set (the others: the model's initial ones)."""
        x, m = self.model.x0.copy(), self.model.m0.copy()
        for name, i in zip(self.state_names, self.state_index):
            if name in states:
                x[i] = states[name]
        for name, i in zip(self.discrete_names, self.discrete_index):
            if name in discrete:
                m[i] = discrete[name]
        for name, value in inputs.items():
            if name in self.plan.inports:
                x[self.injected[name]] = value
        return x, m

    def close_opened(self, t: float, x: np.ndarray, m: np.ndarray, z: np.ndarray) -> None:
        """Set each opened point's injected value to the signal its source makes (what
        its readers saw with the loop closed), solving the loop through it if there is
        one: in place."""
        opened = [p.name for p in self.opened]
        if not opened:
            return
        slots = [self.injected[name] for name in opened]
        signals = [self.measured_source(name) for name in opened]
        for _ in range(200):
            values = self.signals(t, x, m, z)[signals]
            step = values - x[slots]
            x[slots] = values
            if np.all(np.abs(step) <= 1e-15 * np.maximum(1.0, np.abs(values))):
                return
        raise AnalysisError(f"opening the loop at {', '.join(opened)}: the signal there "
                            f"does not settle (an algebraic loop through the opening)",
                            file=self.source)

    def measured_source(self, name: str) -> int:
        """The signal index measuring an opened point's source."""
        index = self.measured.get(name)
        if index is None:
            raise AnalysisError(f"internal: no measurement of '{name}'", file=self.source)
        return index

    def inport_values(self, x: np.ndarray) -> dict[str, float]:
        return {name: float(x[self.injected[name]]) for name in self.plan.inports}


def finite_or_fail(values: np.ndarray, what: str, names: Sequence[str], source: str) -> None:
    """AnalysisError naming the first non-finite entry."""
    bad = np.flatnonzero(~np.isfinite(values))
    if len(bad):
        k = int(bad[0])
        label = names[k] if k < len(names) else str(k)
        raise AnalysisError(f"{what} of '{label}' is {values[k]!r} at the operating point",
                            file=source)

