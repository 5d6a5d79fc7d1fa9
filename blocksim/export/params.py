"""Which diagram parameters an exported model can take new values of, and how.

A block turns its parameters into numbers of its code (parameter slots), initial states
and discrete slots by Python (a transfer function's realisation, a table's breakpoints).
Exported C cannot run that Python, so each numeric parameter is measured instead: the
model is re-made with two other values (`CompiledModel.with_params`, no new compile) and
every number it moves must move affinely with it, alone and together with the others
(checked with all parameters moved at once). Such a parameter is exported as
`slot = value at export + coefficient * (parameter - its value at export)`; at its
exported value this is the exported number exactly. A parameter that changes the
structure or moves a number non-linearly (an exponential's time constant inside a
discretised filter) is exported as a fixed value, said in the model description.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from blocksim.compiler.compiled import CompiledModel
from blocksim.errors import BlocksimError

KIND_SLOT, KIND_X0, KIND_M0 = 0, 1, 2


@dataclass(frozen=True)
class ParamMap:
    """The exported parameters and the numbers they move."""

    names: tuple[str, ...]
    values: tuple[float, ...]
    tunable: tuple[bool, ...]  # moves parameter slots only (no initial state)
    # (kind, index, parameter, coefficient): kind 0 slot, 1 x0, 2 m0
    entries: tuple[tuple[int, int, int, float], ...]
    fixed: tuple[str, ...]  # numeric parameters kept at their exported value, and why


def _vector(model: CompiledModel) -> np.ndarray:

    return np.concatenate([model.param_vector(), model.x0, model.m0]).astype(float)


def _probe(model: CompiledModel, values: dict) -> np.ndarray | None:
    try:
        return _vector(model.with_params(values))
    except (BlocksimError, ValueError, ArithmeticError, TypeError):
        return None


def _numeric(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) \
        and math.isfinite(float(value))


def measure(model: CompiledModel, parameters: dict, skip: tuple[str, ...] = ()) -> ParamMap:
    """The affine map from the numeric diagram parameters to the model's numbers."""
    base = _vector(model)
    n_slots = len(base) - model.n_states - len(model.m0)
    names, values, coefs, fixed = [], [], [], []
    for name, value in parameters.items():
        if name in skip or not _numeric(value):
            continue
        v0 = float(value)
        v1, v2 = v0 + 0.5 + 0.25 * abs(v0), v0 - 0.375 - 0.125 * abs(v0)
        a, b = _probe(model, {name: v1}), _probe(model, {name: v2})
        if a is None or b is None or a.shape != base.shape or b.shape != base.shape:
            fixed.append(f"{name} (changes the model's structure)")
            continue
        with np.errstate(invalid="ignore"):  # (inf - inf: an infinite limit, not moved)
            coef = (a - base) / (v1 - v0)
            predicted = base + np.where(np.isfinite(coef), coef, 0.0) * (v2 - v0)
        if not np.allclose(predicted, b, rtol=1e-9, atol=1e-12, equal_nan=True):
            fixed.append(f"{name} (moves a number non-linearly)")
            continue
        names.append(name)
        values.append(v0)
        coefs.append(np.where(np.isfinite(coef), coef, 0.0))
    if names:  # all at once: no products of parameters
        moved = {n: v + 0.5 + 0.25 * abs(v) for n, v in zip(names, values)}
        together = _probe(model, moved)
        expected = base + sum(c * (moved[n] - v) for n, v, c in zip(names, values, coefs))
        if together is None or not np.allclose(together, expected, rtol=1e-9, atol=1e-12,
                                                equal_nan=True):
            overlapping = set()
            for i in range(len(names)):
                for j in range(i + 1, len(names)):
                    if np.any((coefs[i] != 0) & (coefs[j] != 0)):
                        overlapping |= {i, j}
            keep = [i for i in range(len(names)) if i not in overlapping]
            fixed += [f"{names[i]} (multiplies another parameter)" for i in sorted(overlapping)]
            names = [names[i] for i in keep]
            values = [values[i] for i in keep]
            coefs = [coefs[i] for i in keep]
    entries, tunable = [], []
    for p, coef in enumerate(coefs):
        moves_initial = False
        for k in np.flatnonzero(coef):
            if k < n_slots:
                entries.append((KIND_SLOT, int(k), p, float(coef[k])))
            elif k < n_slots + model.n_states:
                entries.append((KIND_X0, int(k - n_slots), p, float(coef[k])))
                moves_initial = True
            else:
                entries.append((KIND_M0, int(k - n_slots - model.n_states), p, float(coef[k])))
                moves_initial = True
        tunable.append(not moves_initial)
    return ParamMap(tuple(names), tuple(values), tuple(tunable), tuple(entries), tuple(fixed))
