"""Tearing: a block of equations solved through a few of its variables.

Most variables of an algebraic loop can be computed one after another once a few of them
(the tearing variables) are known: each from an equation linear in it with a coefficient
that cannot vanish (`blt.safe`). The equations left over are residuals of the tearing
variables alone. This greedy pass (Cellier's heuristic: when stuck, tear the variable that
appears in the most equations still open) turns the ideal-diode circuit's loop of five
into one division, and a Shockley diode's loop into a one-dimensional Newton iteration.

The residuals, with the sequence substituted, are expressions of the tearing variables;
for a linear block they are r0 + J t with J and r0 free of t, solved by Cramer's rule
(exact: no pivot can vanish) up to three tearing variables, else by LU at run time.
"""
from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from blocksim.physical.calculus import partial
from blocksim.physical.system import Equation

MAX_SYMBOLIC = 3  # tearing variables solved by Cramer's rule; more: numerically
MAX_COMPOSED_OPS = 4000  # beyond this the composed residuals are too large to print


@dataclass
class Torn:
    """A block as tearing variables, the sequence computed from them, and residuals."""

    tearing: list[sp.Symbol]
    sequence: list[tuple[sp.Symbol, sp.Expr]]  # (variable, value) in evaluation order
    residuals: list[sp.Expr]  # composed: functions of the tearing variables and knowns
    jacobian: list[list[sp.Expr]]  # d residuals / d tearing variables
    linear: bool


def tear(variables: list[sp.Symbol], equations: list[Equation],
         coefficients: list[dict[sp.Symbol, sp.Expr]], safe) -> Torn | None:
    """The block torn, or None when tearing does not help (as many tearing variables as
    the block has, or residuals too large)."""
    block_vars = set(variables)
    rows = [[v for v in variables if v in coefficients[i]] for i in range(len(equations))]
    open_eqs = set(range(len(equations)))
    unknown = set(variables)
    sequence: list[tuple[sp.Symbol, sp.Expr]] = []
    tearing: list[sp.Symbol] = []
    while unknown:
        progress = True
        while progress:
            progress = False
            for e in sorted(open_eqs):
                left = [v for v in rows[e] if v in unknown]
                if len(left) != 1:
                    continue
                v = left[0]
                c = coefficients[e][v]
                if c.free_symbols & block_vars or not safe(c):
                    continue
                rest = equations[e].residual.xreplace({v: 0})
                sequence.append((v, -rest / c))
                open_eqs.discard(e)
                unknown.discard(v)
                progress = True
        if not unknown:
            break
        counts = {v: sum(1 for e in open_eqs if v in rows[e]) for v in unknown}
        v = max(sorted(unknown, key=lambda s: s.name), key=lambda s: counts[s])
        tearing.append(v)
        unknown.discard(v)
    residual_eqs = sorted(open_eqs)
    if len(residual_eqs) != len(tearing) or len(tearing) >= len(variables):
        return None
    composed: dict[sp.Symbol, sp.Expr] = {}
    for v, value in sequence:
        composed[v] = value.xreplace(composed)
    residuals = [equations[e].residual.xreplace(composed) for e in residual_eqs]
    if sum(sp.count_ops(r) for r in residuals) > MAX_COMPOSED_OPS:
        return None
    jacobian = [[partial(r, t) for t in tearing] for r in residuals]
    linear = all(not (entry.free_symbols & set(tearing)) for row in jacobian for entry in row)
    return Torn(tearing, sequence, residuals, jacobian, linear)


def cramer(jacobian: list[list[sp.Expr]], rhs: list[sp.Expr]) -> list[sp.Expr] | None:
    """x with J x = rhs by Cramer's rule (None beyond MAX_SYMBOLIC unknowns)."""
    n = len(rhs)
    if n > MAX_SYMBOLIC:
        return None
    matrix = sp.Matrix(jacobian)
    det = matrix.det(method="berkowitz")
    solution = []
    for j in range(n):
        replaced = matrix.copy()
        replaced[:, j] = sp.Matrix(rhs)
        solution.append(replaced.det(method="berkowitz") / det)
    return solution
