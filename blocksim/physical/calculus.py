"""Partial derivatives, quickly where an equation is a sum of products (nearly all of a
network's equations are), by sympy elsewhere.

sympy's `diff` builds a Derivative object and dispatches on it for every call: several
milliseconds each, which made a hundred-stage ladder spend seconds finding coefficients
it could read off its sums.
"""
from __future__ import annotations

import sympy as sp


def partial(expr: sp.Expr, v: sp.Symbol) -> sp.Expr:
    """d expr / d v."""
    if expr == v:
        return sp.Integer(1)
    if v not in expr.free_symbols:
        return sp.Integer(0)
    if expr.is_Add:
        terms = [_term(t, v) for t in expr.args]
        if all(t is not None for t in terms):
            return sp.Add(*terms)
        return sp.diff(expr, v)
    term = _term(expr, v)
    return term if term is not None else sp.diff(expr, v)


def _term(term: sp.Expr, v: sp.Symbol) -> sp.Expr | None:
    """The derivative of one product term, or None if it is not a plain product."""
    if term == v:
        return sp.Integer(1)
    if v not in term.free_symbols:
        return sp.Integer(0)
    if term.is_Mul:
        rest = []
        found = False
        for factor in term.args:
            if factor == v and not found:
                found = True
            elif v in factor.free_symbols:
                return None
            else:
                rest.append(factor)
        return sp.Mul(*rest) if found else None
    return None
