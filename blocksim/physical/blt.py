"""Sorting the network's equations into blocks solved one after another (block lower
triangular form) and deciding how each block is solved.

The unknowns (every variable but the states) are matched to the equations, preferring an
equation that can be solved for the variable explicitly (linear in it, with a coefficient
that cannot vanish); the dependency graph of the matched equations is split into strongly
connected components (Tarjan, iteratively, so a 1,000-stage chain does not recurse), in
evaluation order. A block of one equation linear in its variable with a safe coefficient
is an assignment; a block linear in its variables is a linear system solved numerically
(LU with pivoting, so a coefficient that vanishes in one mode, like an ideal diode's
resistance, is harmless); any other block is solved by Newton's method with the exact
Jacobian.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import sympy as sp

from blocksim.errors import CompileError
from blocksim.physical.calculus import partial
from blocksim.physical.system import Equation, System
from blocksim.physical.tearing import Torn, cramer, tear


@dataclass
class Block:
    """Equations solved together for their variables."""

    variables: list[sp.Symbol]
    equations: list[Equation]
    kind: str  # "explicit", "linear" or "newton"
    value: sp.Expr | None = None  # explicit: the variable's value
    matrix: list[list[sp.Expr]] = field(default_factory=list)  # linear: A, with A x = b
    rhs: list[sp.Expr] = field(default_factory=list)
    jacobian: list[list[sp.Expr]] = field(default_factory=list)  # newton
    torn: Torn | None = None  # solved through its tearing variables (`tearing`)
    solution: list[sp.Expr] | None = None  # torn and linear: the tearing variables' values


def _safe(coefficient: sp.Expr, system: System, unknowns: set[sp.Symbol]) -> bool:
    """Whether dividing by this coefficient is safe whatever the modes: it reads only
    numbers and parameters, and is nonzero at the compile's values."""
    if coefficient.is_Number:
        return coefficient != 0
    if coefficient.free_symbols - set(system.params) or coefficient.has(sp.Piecewise):
        return False
    try:
        return float(coefficient.xreplace(system.numeric())) != 0.0
    except (TypeError, ValueError):
        return False


def sort(system: System, source: str) -> list[Block]:
    """The blocks of the network in evaluation order (CompileError if the equations do
    not determine the unknowns)."""
    states = set(system.states)
    unknowns = [u for u in system.unknowns if u not in states]
    unknown_set = set(unknowns)
    equations = system.equations
    if len(equations) != len(unknowns):
        raise CompileError(f"the network has {len(equations)} equations for {len(unknowns)} "
                           f"unknowns after index reduction (components: "
                           f"{', '.join(system.components)})",
                           block=system.components[0] if system.components else None,
                           file=source)
    rows: list[list[sp.Symbol]] = []
    coefficients: list[dict[sp.Symbol, sp.Expr]] = []
    for eq in equations:
        present = sorted((v for v in eq.residual.free_symbols if v in unknown_set),
                         key=lambda s: s.name)
        coeff = {v: partial(eq.residual, v) for v in present}
        safe = [v for v in present if not (coeff[v].free_symbols & {v})
                and _safe(coeff[v], system, unknown_set)]
        rows.append(safe + [v for v in present if v not in safe])
        coefficients.append(coeff)
    match = _matching(rows)
    if len(match) != len(unknowns):
        missing = [u.name for u in unknowns if u not in match][:6]
        raise CompileError(f"the network's equations do not determine {', '.join(missing)} "
                           f"(structurally singular; components: "
                           f"{', '.join(system.components)})",
                           block=system.owner_of.get(unknowns[0]) if unknowns else None,
                           file=source)
    var_of = {i: v for v, i in match.items()}
    graph = [[match[v] for v in rows[i] if match[v] != i] for i in range(len(equations))]
    blocks = []
    for component in _tarjan(graph):
        blocks.append(_solve_block([var_of[i] for i in component],
                                   [equations[i] for i in component],
                                   [coefficients[i] for i in component], system, unknown_set))
    return blocks


def _matching(rows: list[list[sp.Symbol]]) -> dict[sp.Symbol, int]:
    """Variable -> equation, trying each equation's preferred variables first."""
    match: dict[sp.Symbol, int] = {}
    for i in range(len(rows)):  # cheap pass: a free preferred variable
        for v in rows[i]:
            if v not in match:
                match[v] = i
                break
    matched = set(match.values())
    for i in range(len(rows)):
        if i in matched:
            continue
        # augmenting path, iteratively (deep chains)
        parent: dict[sp.Symbol, tuple[int, sp.Symbol | None]] = {}
        stack = [(i, None)]
        seen: set[sp.Symbol] = set()
        end = None
        while stack and end is None:
            eq, via = stack.pop()
            for v in rows[eq]:
                if v in seen:
                    continue
                seen.add(v)
                parent[v] = (eq, via)
                if v not in match:
                    end = v
                    break
                stack.append((match[v], v))
        if end is None:
            continue
        v = end
        while v is not None:
            eq, via = parent[v]
            match[v] = eq
            v = via
    return match


def _tarjan(graph: list[list[int]]) -> list[list[int]]:
    """Strongly connected components, each after those it depends on."""
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    on_stack: set[int] = set()
    stack: list[int] = []
    out: list[list[int]] = []
    counter = 0
    for start in range(len(graph)):
        if start in index:
            continue
        work = [(start, 0)]
        while work:
            node, k = work.pop()
            if k == 0:
                index[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack.add(node)
            recurse = False
            edges = graph[node]
            while k < len(edges):
                nxt = edges[k]
                k += 1
                if nxt not in index:
                    work.append((node, k))
                    work.append((nxt, 0))
                    recurse = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if recurse:
                continue
            if low[node] == index[node]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.append(w)
                    if w == node:
                        break
                out.append(sorted(component))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return out


def _solve_block(variables: list[sp.Symbol], equations: list[Equation],
                 coefficients: list[dict], system: System, unknowns: set) -> Block:
    block_vars = set(variables)
    if len(variables) == 1:
        v, eq, coeff = variables[0], equations[0], coefficients[0][variables[0]]
        if not coeff.free_symbols & {v} and _safe(coeff, system, unknowns):
            rest = eq.residual.xreplace({v: 0})
            return Block(variables, equations, "explicit", value=sp.expand_mul(-rest / coeff)
                         if coeff != 1 and coeff != -1 else -rest * coeff)
    linear = all(not (coefficients[i].get(v, sp.Integer(0)).free_symbols & block_vars)
                 for i in range(len(equations)) for v in variables)
    matrix = [[coefficients[i].get(v, sp.Integer(0)) for v in variables]
              for i in range(len(equations))]
    torn = tear(variables, equations, coefficients,
                lambda c: _safe(c, system, unknowns)) if len(variables) > 1 else None
    if torn is not None:
        kind = "linear" if torn.linear else "newton"
        solution = None
        if torn.linear:
            zero = {t: 0 for t in torn.tearing}
            solution = cramer(torn.jacobian, [-r.xreplace(zero) for r in torn.residuals])
        return Block(variables, equations, kind, matrix=matrix, torn=torn, solution=solution)
    if linear:
        zero = {v: 0 for v in variables}
        rhs = [-eq.residual.xreplace(zero) for eq in equations]
        return Block(variables, equations, "linear", matrix=matrix, rhs=rhs)
    return Block(variables, equations, "newton", jacobian=matrix)
