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

import numpy as np
import sympy as sp

from blocksim.errors import CompileError
from blocksim.physical.calculus import partial
from blocksim.physical.system import System

RANK_TOLERANCE = 1e-9


def select_states(system: System, source: str, point: dict[sp.Symbol, float]) -> None:
    """Fill `system.states`; turns chosen derivatives into algebraic unknowns."""
    equations, derived = system.equations, system.derived
    integral = {d: x for x, d in system.der.items()}
    unknowns = set(system.unknowns)
    dummies: set[sp.Symbol] = set()
    below = {d: e for e, d in derived.items()}  # derivative equation -> the equation
    level = [e for e in range(len(equations)) if e not in derived and e in below]
    candidates: list[sp.Symbol] | None = None
    while level:
        if candidates is None:
            found = set()
            for e in level:
                found |= {v for v in equations[e].residual.free_symbols
                          if v in unknowns and v in integral and v not in system.der}
            candidates = sorted(found, key=lambda v: _preference(system, v, integral))
        chosen = _independent_columns(system, [equations[e] for e in level], candidates, point,
                                      source)
        dummies |= set(chosen)
        candidates = sorted((integral[v] for v in chosen if v in integral),
                            key=lambda v: _preference(system, v, integral))
        level = [below[e] for e in level if e in below]
    system.states = [x for x in system.der if x not in dummies and x in unknowns]


def _preference(system: System, v: sp.Symbol, integral: dict) -> tuple:
    """Sort key: a better state sorts last (dummies are taken from the front)."""
    base = v
    while base in integral:
        base = integral[base]
    return (base in system.prefer, base in system.starts, -base.name.count("."), base.name)


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
