"""An operating point written as a diagram's initial values: which block parameter
starts which state. Only the blocks whose initial state is a parameter are written; the
others are listed (`OperatingPoint.unwritten`: a TransferFunction starts at rest, most
discrete blocks' slots are not parameters), so a caller can say what a run from the
diagram will not reproduce.

| block type | states / slots | parameter |
|---|---|---|
| Integrator (ic_source parameter) | its states | x0 |
| StateSpace | its states | x0 |
| PID, continuous (scalar) | integrator, filter | initial_integrator, initial_filter |
| PID, discrete (scalar) | the integrator's and filter's sums | initial_integrator, initial_filter |
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from blocksim.analysis import points as pts
from blocksim.diagram.model import Block, Diagram

if TYPE_CHECKING:
    from blocksim.analysis.model import AnalysisModel

Change = tuple[str, str, Any]


def candidates(am: "AnalysisModel", x: np.ndarray, m: np.ndarray
               ) -> tuple[list[Change], list[str]]:
    """(the parameter changes that start a run at (x, m), the blocks whose state no
    parameter sets), from the compiled blocks' resolved parameters."""
    found: list[Change] = []
    unwritten: list[str] = []
    rates = am.model.block_rates
    for k, rec in enumerate(r for r in am.model.runtime.structure.blocks if r.index >= 0):
        path, p, kind = rec.flat.path, rec.flat.p, rec.flat.block_type.name
        if path.split("/")[-1].startswith(pts.PREFIX):
            continue
        states = [float(v) for v in x[rec.states]]
        slots = [float(v) for v in m[rec.discrete]]
        sampled = k < len(rates) and rates[k].discrete and bool(slots)
        if not states and not sampled:
            continue
        made = _changes(path, kind, p, states, slots)
        if made is None:
            unwritten.append(path)
        else:
            found += made
    return found, unwritten


def _one(values: list[float]) -> Any:
    return values[0] if len(values) == 1 else list(values)


def _changes(path: str, kind: str, p: Any, states: list[float], slots: list[float]
             ) -> list[Change] | None:
    if kind in ("Integrator", "StateSpace") and states:
        if getattr(p, "ic_source", "parameter") != "parameter":
            return None
        return [(path, "x0", _one(states))]
    if kind == "PID":
        with_filter = float(p.D) != 0.0
        if states:  # continuous: [xI, xF] per element
            if len(states) != (2 if with_filter else 1):
                return None  # a vector PID: one scalar initial value for every element
            out = [(path, "initial_integrator", states[0])]
            return out + ([(path, "initial_filter", states[1])] if with_filter else [])
        # discrete, scalar: groups u, sI, iH (, sF, FH, dH), ..., then the `fresh` flag
        groups = 6 if with_filter else 3
        if len(slots) < groups + 1:
            return None
        out = [(path, "initial_integrator", slots[1])]
        return out + ([(path, "initial_filter", slots[3])] if with_filter else [])
    return None


def block_at(diagram: Diagram, path: str) -> Block | None:
    """The block at a path ("part/inner"), None if there is none."""
    here: Diagram | None = diagram
    parts = path.split("/")
    for part in parts[:-1]:
        try:
            here = here.block(part).subsystem  # type: ignore[union-attr]
        except KeyError:
            return None
        if here is None:
            return None
    try:
        return here.block(parts[-1])  # type: ignore[union-attr]
    except KeyError:
        return None


def present(changes: list[Change], diagram: Diagram) -> list[Change]:
    """The changes whose block is in this diagram."""
    return [c for c in changes if block_at(diagram, c[0]) is not None]


def apply(changes: list[Change], diagram: Diagram) -> list[Change]:
    """Set the parameters (the blocks that are in the diagram); the changes made."""
    made = present(changes, diagram)
    for path, name, value in made:
        blk = block_at(diagram, path)
        assert blk is not None
        blk.params[name] = value
    return made
