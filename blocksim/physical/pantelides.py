"""Index reduction by Pantelides' algorithm (Pantelides 1988, as in ModelingToolkit's
structural_transformation/pantelides.jl).

The highest derivatives of the unknowns are matched to the equations; where an equation
cannot be matched (a constraint between states: two masses joined rigidly, an inductor in
series with a current source, capacitors across a voltage source), the equations and
variables of the failed augmenting path are differentiated once more and matching goes on.
On return every equation has a highest-derivative variable of its own; the equations that
were differentiated are kept too (the dummy-derivative method of `states` needs them).

A system that no differentiation can make solvable (a floating circuit, an unconnected
mass, an over-determined network) is found first by matching the equations to variable
families (a variable and its derivatives), and reported with the components involved.
"""
from __future__ import annotations

import sympy as sp

from blocksim.errors import CompileError
from blocksim.physical.calculus import partial
from blocksim.physical.equations import TIME
from blocksim.physical.system import Equation, System

MAX_DIFFERENTIATIONS = 8  # deeper than any mechanical or electrical network needs


def differentiate(system: System, eq: Equation, unknowns: set[sp.Symbol],
                  source: str | None = None) -> Equation:
    """d/dt of an equation: the chain rule over its unknowns (their derivative symbols
    made as needed) and time. Parameters, discrete variables and latched relations are
    constant between events; a signal input is not differentiable here."""
    r = eq.residual
    total = sp.diff(r, TIME) if r.has(TIME) else sp.Integer(0)
    for sym in r.free_symbols:
        if sym in unknowns:
            total += partial(r, sym) * system.derivative(sym)
        elif sym in system.inputs:
            path, port = system.inputs[sym]
            raise CompileError(
                f"index reduction needs the time derivative of the signal input '{port}' "
                f"(in {eq.text!r}): a signal is not differentiable here; put a resistance, "
                f"damping or a filter between the source and the constraint, or use a "
                f"source component whose value is a formula of time", block=path, port=port,
                file=source)
    return Equation(total, eq.owner, eq.text, eq.level + 1, eq.related)


def _components(system: System, equations, variables) -> str:
    owners = ({system.owner_of.get(v, "") for v in variables}
              | {e.owner for e in equations} | {o for e in equations for o in e.related})
    owners = sorted(owners - {""})
    return ", ".join(owners) if owners else "the connections"


def check_solvable(system: System, source: str) -> None:
    """Every equation matched to a variable family and every family to an equation
    (CompileError naming the components of what is left over)."""
    unknowns = set(system.unknowns)
    integral = {d: x for x, d in system.der.items()}

    def fam(v: sp.Symbol) -> sp.Symbol:
        while v in integral:
            v = integral[v]
        return v
    families = sorted({fam(v) for v in unknowns}, key=lambda s: s.name)
    rows = [sorted({fam(v) for v in eq.residual.free_symbols if v in unknowns},
                   key=lambda s: s.name) for eq in system.equations]
    match = _max_matching(rows, families)
    matched_eqs = set(match.values())
    free = [i for i in range(len(rows)) if i not in matched_eqs]
    free_vars = [f for f in families if f not in match]
    if free:
        # the over-determined part (Dulmage-Mendelsohn): the equations reachable from an
        # unmatched one by alternating paths, and the components they come from
        eqs, variables = _alternating(rows, match, free)
        part = [system.equations[i] for i in sorted(eqs)]
        names = ", ".join(repr(system.equations[i].text) for i in free[:3])
        raise CompileError(
            f"the network is over-determined: the equations of "
            f"{_components(system, part, variables)} conflict ({names} "
            f"{'has' if len(free) == 1 else 'have'} no unknown left to determine: a loop of "
            f"ideal voltage sources, a cut set of current sources, a body held on both "
            f"sides?)", block=_first(system, part, variables), file=source)
    if free_vars:
        shown = ", ".join(v.name for v in free_vars[:6])
        hint = ""
        if any(v.name.endswith(".v") for v in free_vars):
            hint = " (a circuit needs a Ground)"
        eqs = {i for i, row in enumerate(rows) if set(row) & set(free_vars)}
        part = [system.equations[i] for i in sorted(eqs)]
        raise CompileError(
            f"the network is under-determined: nothing determines {shown}{hint}; "
            f"components: {_components(system, part, free_vars)}",
            block=_first(system, part, free_vars), file=source)


def _alternating(rows: list[list[sp.Symbol]], match: dict[sp.Symbol, int], start: list[int]
                 ) -> tuple[set[int], set[sp.Symbol]]:
    """Equations and variables reachable from the `start` equations by alternating paths
    (an equation to its variables, a variable to the equation matched to it)."""
    eqs, variables = set(start), set()
    stack = list(start)
    while stack:
        for v in rows[stack.pop()]:
            if v in variables:
                continue
            variables.add(v)
            i = match.get(v)
            if i is not None and i not in eqs:
                eqs.add(i)
                stack.append(i)
    return eqs, variables


def _first(system: System, equations, variables) -> str | None:
    for e in equations:
        if e.owner:
            return e.owner
    for v in variables:
        if system.owner_of.get(v):
            return system.owner_of[v]
    return system.components[0] if system.components else None


def _max_matching(rows: list[list[sp.Symbol]], columns) -> dict[sp.Symbol, int]:
    """A maximum matching of rows (equations) to columns (variables): column -> row."""
    match: dict[sp.Symbol, int] = {}

    def augment(i: int, seen: set) -> bool:
        for v in rows[i]:
            if v in seen:
                continue
            seen.add(v)
            if v not in match or augment(match[v], seen):
                match[v] = i
                return True
        return False

    for i in range(len(rows)):
        augment(i, set())
    return match


def reduce_index(system: System, source: str) -> None:
    """Pantelides: differentiate equations until the highest derivatives can be matched.
    Adds the differentiated equations to `system.equations`; `system.der` grows."""
    check_solvable(system, source)
    unknowns = set(system.unknowns)
    equations = system.equations
    highest = {v for v in unknowns if v not in system.der}
    assign: dict[sp.Symbol, int] = {}
    derived: dict[int, int] = {}  # equation index -> index of its derivative
    rows: list[list[sp.Symbol]] = [
        [v for v in eq.residual.free_symbols if v in unknowns] for eq in equations]

    def augment(i: int, colored_eqs: set[int], colored_vars: set[sp.Symbol]) -> bool:
        colored_eqs.add(i)
        for v in rows[i]:
            if v in highest and v not in assign:
                assign[v] = i
                return True
        for v in rows[i]:
            if v in highest and v not in colored_vars:
                colored_vars.add(v)
                if augment(assign[v], colored_eqs, colored_vars):
                    assign[v] = i
                    return True
        return False

    for k in range(len(equations)):
        i = k
        for _ in range(MAX_DIFFERENTIATIONS + 1):
            colored_eqs: set[int] = set()
            colored_vars: set[sp.Symbol] = set()
            if augment(i, colored_eqs, colored_vars):
                break
            if any(equations[e].level >= MAX_DIFFERENTIATIONS for e in colored_eqs):
                raise CompileError(
                    f"the network is structurally singular: {equations[i].text!r} and the "
                    f"equations around it cannot be solved for their variables even after "
                    f"{MAX_DIFFERENTIATIONS} differentiations; components: "
                    f"{_components(system, [equations[e] for e in colored_eqs], colored_vars)}",
                    block=equations[i].owner or None, file=source)
            for v in colored_vars:
                dv = system.derivative(v)
                unknowns.add(dv)
                highest.discard(v)
                highest.add(dv)
            for e in sorted(colored_eqs):
                equations.append(differentiate(system, equations[e], unknowns, source))
                rows.append([v for v in equations[-1].residual.free_symbols if v in unknowns])
                derived[e] = len(equations) - 1
            for v in colored_vars:
                assign[system.der[v]] = derived[assign[v]]
            i = derived[i]
    system.derived = derived
