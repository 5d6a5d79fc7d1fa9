"""Alias elimination: equations a = +-b + k and a = k (k constant) removed by substitution.

Connections make most of a network's equations aliases (every across variable of a
connection set is one variable; a two-pin component's current is its pins' currents).
They are collected in a union-find whose links carry a sign and an offset (a = s*parent + k)
and substituted in one pass, so a 100-stage ladder costs one substitution per equation,
not one per alias. A class keeps the member that reads best as a state and in messages:
a preferred state, a differentiated variable, one with a start value, a component's own
variable before a connector's. Derivatives follow (der(a) = s*der(b)); a class fixed to
a constant has derivative 0. Repeated until no alias is left.
"""
from __future__ import annotations

import sympy as sp

from blocksim.physical.equations import TIME, Relation
from blocksim.physical.system import Equation, System, WhenClause

CONST = sp.Symbol("__const__", real=True)  # the root of the class of constants (value 0)


class _Links:
    """Union-find with a = sign * parent + offset on each link."""

    def __init__(self, rank) -> None:
        self.parent: dict[sp.Symbol, tuple[sp.Symbol, int, sp.Expr]] = {}
        self.rank = rank  # lower is a better representative
        self.owners: dict[sp.Symbol, set[str]] = {}  # root -> components whose aliases joined it

    def find(self, a: sp.Symbol) -> tuple[sp.Symbol, int, sp.Expr]:
        """(root, s, k) with a = s*root + k."""
        sign, offset = 1, sp.Integer(0)
        node = a
        while node in self.parent:
            parent, s, k = self.parent[node]
            offset = offset + sign * k
            sign = sign * s
            node = parent
        if a in self.parent and self.parent[a][0] != node:
            self.parent[a] = (node, sign, offset)  # path compression
        return node, sign, offset

    def union(self, a: sp.Symbol, b: sp.Symbol, s: int, k: sp.Expr, owner: str = "") -> bool:
        """Record a = s*b + k (from `owner`'s equation); False if a and b are already of
        one class."""
        ra, sa, ka = self.find(a)
        rb, sb, kb = self.find(b)
        joined = self.owners.pop(ra, set()) | self.owners.pop(rb, set()) | {owner}
        self.owners[ra if self.rank(ra) < self.rank(rb) else rb] = joined
        if ra == rb:
            self.owners[ra] = joined
            return False
        # ra = (a - ka)/sa = (s*b + k - ka)/sa = (s*(sb*rb + kb) + k - ka)/sa
        s_root = s * sb * sa
        k_root = (s * kb + k - ka) * sa
        if self.rank(ra) < self.rank(rb):  # keep ra: rb = (ra - k_root)/s_root
            self.parent[rb] = (ra, s_root, -k_root * s_root)
        else:
            self.parent[ra] = (rb, s_root, k_root)
        return True


def _alias_form(r: sp.Expr, unknowns: set[sp.Symbol]):
    """(a, s, b, k) for a residual a - s*b - k (b None: a = k), else None. k is constant:
    numbers and parameters only."""
    terms = r.args if r.is_Add else (r,)
    linear: list[tuple[sp.Symbol, sp.Expr]] = []
    rest = []
    for term in terms:
        if term in unknowns:
            linear.append((term, sp.Integer(1)))
            continue
        if term.is_Mul:
            syms = [f for f in term.args if f in unknowns]
            if len(syms) == 1:
                coeff = term / syms[0]
                if coeff.free_symbols & unknowns:
                    return None
                linear.append((syms[0], coeff))
                continue
            if syms:
                return None
        if term.free_symbols & unknowns:
            return None
        rest.append(term)
    if not 1 <= len(linear) <= 2 or any(c not in (1, -1) for _, c in linear):
        return None
    k = sp.Add(*rest)
    if k.has(TIME):
        return None
    (a, ca) = linear[0]
    # ca*a + cb*b + k = 0  ->  a = -(cb/ca) b - k/ca
    if len(linear) == 1:
        return a, 0, None, -k / ca
    b, cb = linear[1]
    return a, int(-cb / ca), b, -k / ca


def _same_chain(der: dict, a: sp.Symbol, b: sp.Symbol) -> bool:
    """Whether one of a, b is a derivative (of any order) of the other."""
    for x, y in ((a, b), (b, a)):
        node = x
        while node in der:
            node = der[node]
            if node == y:
                return True
    return False


def eliminate(system: System, constants: set[sp.Symbol]) -> None:
    """Remove alias equations from `system` in place. `constants`: symbols whose value is
    constant between events but that are not unknowns (parameters), allowed in offsets."""
    for _ in range(50):  # a round can make new aliases of derivatives
        if not _round(system, constants):
            return


def _rank_of(system: System):
    starts, prefer, differentiated = system.starts, system.prefer, system.der
    derivatives = set(system.der.values())
    outputs = {s for s in system.outputs.values() if isinstance(s, sp.Symbol)}

    def rank(sym: sp.Symbol):
        if sym is CONST:
            return (-1,)
        name = sym.name
        return (sym not in prefer, sym not in differentiated, sym in derivatives,
                sym not in starts, name.count("."), sym not in outputs, len(name), name)
    return rank


def _round(system: System, constants: set[sp.Symbol]) -> bool:
    unknowns = set(system.unknowns)
    derivatives = set(system.der.values())
    links = _Links(_rank_of(system))
    kept: list[Equation] = []
    found = False
    for eq in system.equations:
        form = _alias_form(eq.residual, unknowns)
        if form is not None and form[3].free_symbols - constants:
            form = None  # the offset reads something that changes (a mode)
        if form is None:
            kept.append(eq)
            continue
        a, s, b, k = form
        if a in derivatives or b in derivatives:
            # der(x) = v makes v the derivative of x; der(x) = -v or der(x) = 0 stay
            # equations (the derivative map holds symbols), as do x = der(x) and the like
            if b is None or s != 1 or k != 0 or _same_chain(system.der, a, b):
                kept.append(eq)
                continue
        if b is None:
            b, s = CONST, 1
        if links.union(a, b, s, k, eq.owner):
            found = True
        else:
            # a redundant alias: kept, so the structural check sees the extra equation,
            # with the components whose aliases made its sides one variable
            root = links.find(a)[0]
            kept.append(Equation(eq.residual, eq.owner, eq.text, eq.level,
                                 frozenset(links.owners.get(root, ())) - {""}))
    if not found:
        return False
    replace: dict[sp.Symbol, sp.Expr] = {}
    roots: dict[sp.Symbol, tuple[sp.Symbol, int, sp.Expr]] = {}
    for a in list(links.parent):
        root, s, k = links.find(a)
        roots[a] = (root, s, k)
        replace[a] = k if root is CONST else s * root + k
    new_equations: list[Equation] = []
    # derivatives of eliminated variables follow their class
    for a, (root, s, k) in roots.items():
        da = system.der.pop(a, None)
        if da is None:
            continue
        if root is CONST:
            new_equations.append(Equation(da, system.owner_of.get(a, ""), f"der({a.name}) = 0"))
            continue
        dr = system.der.get(root)
        if dr is None and s == 1:
            system.der[root] = da
        else:
            dr = dr if dr is not None else system.derivative(root)
            new_equations.append(Equation(da - s * dr, system.owner_of.get(a, ""),
                                          f"der({a.name}) = {s}*der({root.name})"))
    for x, dx in list(system.der.items()):  # a derivative eliminated: its class's symbol
        if dx in replace:
            value = replace[dx]
            if isinstance(value, sp.Symbol) and value is not CONST:
                system.der[x] = value
            else:  # -v or a constant: der(x) stays a symbol, tied by an equation
                del replace[dx]
                new_equations.append(Equation(dx - value, system.owner_of.get(x, ""),
                                              f"der({x.name}) = {value}"))
    for a, (root, s, k) in roots.items():  # pre(a) of a reinit or a when condition
        pa = system.pre.pop(a, None)
        if pa is not None:
            replace[pa] = k if root is CONST else s * system.previous(root) + k
    _substitute(system, kept + new_equations, replace, roots)
    return True


def _substitute(system: System, equations: list[Equation], replace: dict,
                roots: dict) -> None:
    system.equations = [Equation(eq.residual.xreplace(replace), eq.owner, eq.text, eq.level,
                                 eq.related) for eq in equations]
    system.unknowns = [u for u in system.unknowns if u not in replace]
    system.relations = [Relation(r.symbol, r.g.xreplace(replace), r.op, r.owner)
                        for r in system.relations]
    system.outputs = {key: value.xreplace(replace) for key, value in system.outputs.items()}
    whens = []
    for w in system.whens:
        reinit = []
        for target, value in w.reinit:
            value = value.xreplace(replace)
            if target in roots:
                root, s, k = roots[target]
                if root is CONST:
                    continue  # a constant cannot be reinitialised: nothing to do
                target, value = root, (value - k) / s
            reinit.append((target, value))
        whens.append(WhenClause(w.condition.xreplace(replace), reinit,
                                [(d, v.xreplace(replace)) for d, v in w.assign],
                                w.owner, w.event))
    system.whens = whens
    starts = {}
    fixed = {}
    for sym, value in system.starts.items():
        if sym in system.fixed and sym in roots and roots[sym][0] is CONST:
            if (value - roots[sym][2]).xreplace(system.numeric()) != 0:
                system.conflicts.append(
                    f"the start value of {sym.name} is fixed at {value}, but the network "
                    f"holds it at {roots[sym][2]}")
            continue
        target, value = (sym, value) if sym not in roots else (
            roots[sym][0], (value - roots[sym][2]) / roots[sym][1])
        if sym in system.fixed:
            if target in fixed and (value - starts[target]).xreplace(system.numeric()) != 0:
                system.conflicts.append(
                    f"the fixed start values of {fixed[target][1]} and {sym.name} disagree "
                    f"(the network ties them: one determines the other)")
            fixed[target] = (system.fixed[sym], sym.name)
            starts[target] = value  # a fixed start wins over a guess
        elif target is not CONST and target not in starts:
            starts[target] = value
    system.starts = starts
    system.fixed = {sym: owner for sym, (owner, _) in fixed.items() if sym is not CONST}
    system.prefer = {roots[p][0] if p in roots else p for p in system.prefer} - {CONST}
