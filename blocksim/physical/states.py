"""State selection by dummy derivatives (Mattsson and Soederlind 1993).

After index reduction a constraint and its derivatives tie some states together (two
masses joined rigidly have one position between them). Going down from the most
differentiated equations, each level chooses as many of its highest derivatives as it has
equations to become "dummy" derivatives: algebraic unknowns, whose lower-order variables
stop being states. The choice is the columns of a nonsingular submatrix of the equations'
Jacobian, taken in order of preference, so a variable declared `prefer` (a mass's
position and velocity) stays a state where another can go. The Jacobian is evaluated at
the start values (parameters at their values); a choice that depends on where the system
is (a pendulum written in Cartesian coordinates) holds near the start only.
"""
from __future__ import annotations

import itertools

import numpy as np
import sympy as sp

from blocksim.errors import CompileError
from blocksim.physical.calculus import partial
from blocksim.physical.equations import Relation
from blocksim.physical.system import System

RANK_TOLERANCE = 1e-9


def select_states(system: System, source: str, point: dict[sp.Symbol, float]
                  ) -> list[tuple[sp.Basic, list[sp.Symbol]]]:
    """The choices of states, each with the condition under which it holds: one choice
    (condition true) where the Jacobian of the differentiated constraints does not depend
    on where the system is; two where it does and two choices exist (a pendulum's x or y
    from x^2 + y^2 = l^2), switched where the magnitudes of their pivots cross (dynamic
    state selection), with the relation that switches them added to `system.relations`."""
    equations, derived = system.equations, system.derived
    integral = {d: x for x, d in system.der.items()}
    unknowns = set(system.unknowns)
    below = {d: e for e, d in derived.items()}  # derivative equation -> the equation
    top = [e for e in range(len(equations)) if e not in derived and e in below]
    if not top:
        return [(sp.true, [x for x in system.der if x in unknowns])]
    found = set()
    for e in top:
        found |= {v for v in equations[e].residual.free_symbols
                  if v in unknowns and v in integral and v not in system.der}
    candidates = sorted(found, key=lambda v: _preference(system, v, integral))
    rows = [equations[e] for e in top]
    alternatives = _alternatives(rows, candidates, unknowns)
    if len(alternatives) == 2:
        (first, det_a), (second, det_b) = alternatives
        relation = sp.Symbol(f"pivot{len(system.relations)}")
        owners = sorted({eq.owner for eq in rows} - {""})
        system.relations.append(Relation(relation, sp.Abs(det_a) - sp.Abs(det_b), ">=",
                                         owners[0] if owners else ""))
        return [(relation, _states_down(system, top, first, integral, below, point, source)),
                (sp.Not(relation), _states_down(system, top, second, integral, below, point,
                                                source))]
    chosen = _independent_columns(system, rows, candidates, point, source)
    return [(sp.true, _states_down(system, top, chosen, integral, below, point, source))]


def _states_down(system: System, level: list[int], chosen: list[sp.Symbol], integral: dict,
                 below: dict, point, source: str) -> list[sp.Symbol]:
    """The states left when `chosen` are the dummy derivatives of the top level and each
    lower level takes the integrals of the level above's."""
    unknowns = set(system.unknowns)
    dummies = set(chosen)
    level = [below[e] for e in level if e in below]
    while level:
        candidates = sorted((integral[v] for v in chosen if v in integral),
                            key=lambda v: _preference(system, v, integral))
        chosen = _independent_columns(system, [system.equations[e] for e in level],
                                      candidates, point, source)
        dummies |= set(chosen)
        level = [below[e] for e in level if e in below]
    return [x for x in system.der if x not in dummies and x in unknowns]


def _alternatives(rows, candidates: list[sp.Symbol], unknowns: set[sp.Symbol]
                  ) -> list[tuple[list[sp.Symbol], sp.Expr]]:
    """For a Jacobian that depends on the unknowns: the column choices whose determinant
    is not identically zero, with that determinant (at most two are used: more than two
    choices keep the static one)."""
    jac = sp.Matrix([[partial(eq.residual, v) for v in candidates] for eq in rows])
    if not (jac.free_symbols & unknowns) or len(candidates) <= len(rows):
        return []
    found = []
    for columns in itertools.combinations(range(len(candidates)), len(rows)):
        det = jac[:, list(columns)].det(method="berkowitz")
        if det != 0 and det.free_symbols & unknowns:
            found.append(([candidates[j] for j in columns], det))
        if len(found) > 2:
            return []
    return found


def _preference(system: System, v: sp.Symbol, integral: dict) -> tuple:
    """Sort key: a better state sorts last (dummies are taken from the front)."""
    base = v
    while base in integral:
        base = integral[base]
    return (base in system.fixed, base in system.prefer, base in system.starts,
            -base.name.count("."), base.name)


def _independent_columns(system: System, rows, candidates: list[sp.Symbol],
                         point: dict[sp.Symbol, float], source: str) -> list[sp.Symbol]:
    """As many candidate columns as rows, linearly independent in the rows' Jacobian."""
    jac = np.array([[float(partial(eq.residual, v).xreplace(point)) for v in candidates]
                    for eq in rows], dtype=float) if candidates else np.zeros((len(rows), 0))
    chosen: list[int] = []
    for j in range(len(candidates)):
        trial = chosen + [j]
        if np.linalg.matrix_rank(jac[:, trial], tol=RANK_TOLERANCE) == len(trial):
            chosen = trial
        if len(chosen) == len(rows):
            return [candidates[j] for j in chosen]
    owners = sorted({eq.owner for eq in rows} - {""})
    texts = ", ".join(repr(eq.text) for eq in rows[:3])
    raise CompileError(f"the constraints {texts} cannot be solved for the derivatives in them "
                       f"(structurally singular after index reduction); components: "
                       f"{', '.join(owners) or 'the connections'}",
                       block=owners[0] if owners else None, file=source)


def evaluation_point(system: System) -> dict[sp.Symbol, float]:
    """Where choices that depend on values are made: parameters at their values, states
    at their start values, everything else at an arbitrary but generic value."""
    rng = np.random.default_rng(12345)
    point: dict[sp.Symbol, sp.Basic] = dict(system.numeric())
    for sym, expr in system.starts.items():
        try:
            point[sym] = sp.Float(float(expr.xreplace(system.numeric())))
        except (TypeError, ValueError):
            pass
    symbols = set(system.unknowns) | set(system.inputs) | set(system.pre.values())
    for sym in sorted(symbols, key=lambda s: s.name):
        point.setdefault(sym, sp.Float(rng.uniform(0.5, 1.5)))
    for d in system.discretes:
        point[d.symbol] = sp.Float(float(d.start.xreplace(system.numeric())))
    from blocksim.physical.equations import TIME
    point[TIME] = sp.Float(0.0)
    for r in system.relations:
        point[r.symbol] = sp.false
    return point
