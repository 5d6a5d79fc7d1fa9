"""Gathering components into networks and their equations into one `System` each.

Components joined by physical connections (directly, or through the ConnectionPorts of
subsystems) form one network; a component without connectors (a user component that is
only equations over signals) is a network of its own. A connection set of ports is
Modelica's: their across variables are equal and their through variables sum to zero.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import sympy as sp

from blocksim.compiler.flatten import Endpoint, FlatBlock, FlatDiagram
from blocksim.errors import CompileError, ExpressionError
from blocksim.physical.declare import Component
from blocksim.physical.domains import domain
from blocksim.physical.equations import Relation, Scope, Translator
from blocksim.physical.system import Discrete, Equation, System, WhenClause


@dataclass
class Network:
    """Components of one network, in diagram order, and its connection sets."""

    components: list[FlatBlock]
    sets: list[list[Endpoint]]


class _UnionFind:
    def __init__(self) -> None:
        self.parent: dict[Endpoint, Endpoint] = {}

    def find(self, a: Endpoint) -> Endpoint:
        self.parent.setdefault(a, a)
        root = a
        while self.parent[root] != root:
            root = self.parent[root]
        while self.parent[a] != root:
            self.parent[a], a = root, self.parent[a]
        return root

    def union(self, a: Endpoint, b: Endpoint) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[rb] = ra


def networks(flat: FlatDiagram) -> list[Network]:
    """The networks of the flat diagram's components (CompileError for a connector that is
    connected to nothing)."""
    components = [blk for blk in flat.blocks if isinstance(blk.impl, Component)]
    if not components:
        return []
    uf = _UnionFind()
    for a, b in flat.connections:
        uf.union(a, b)
    owner_of: dict[Endpoint, str] = {}
    for blk in components:
        for c in blk.impl.connector_ports(blk.p):
            endpoint = (blk.path, c.name)
            if endpoint not in uf.parent and c.optional:
                uf.find(endpoint)  # a set of its own: its through variable is 0
            elif endpoint not in uf.parent:
                raise CompileError(f"physical port '{c.name}' is not connected (this "
                                   f"{c.domain} port must be connected to another)",
                                   block=blk.path, port=c.name, file=flat.source)
            owner_of[endpoint] = blk.path
    by_root: dict[Endpoint, list[Endpoint]] = {}
    for endpoint in uf.parent:
        by_root.setdefault(uf.find(endpoint), []).append(endpoint)
    # components joined by a set belong to one network
    net_of: dict[str, str] = {blk.path: blk.path for blk in components}

    def root(path: str) -> str:
        while net_of[path] != path:
            path = net_of[path]
        return path

    for members in by_root.values():
        paths = [owner_of[e] for e in members if e in owner_of]
        for other in paths[1:]:
            a, b = root(paths[0]), root(other)
            if a != b:
                net_of[b] = a
    grouped: dict[str, Network] = {}
    for blk in components:
        grouped.setdefault(root(blk.path), Network([], [])).components.append(blk)
    for members in by_root.values():
        real = [e for e in members if e in owner_of]
        if not real:
            continue
        if len(real) == 1 and len(members) == 1:  # an optional port left free
            grouped[root(owner_of[real[0]])].sets.append(real)
            continue
        if len(real) == 1:
            path, port = real[0]
            raise CompileError(f"physical port '{port}' is connected only to subsystem "
                               f"ports that lead nowhere", block=path, port=port,
                               file=flat.source)
        grouped[root(owner_of[real[0]])].sets.append(sorted(real))
    return list(grouped.values())


def build_system(net: Network, source: str) -> System:
    """The equations of a network's components and connections (CompileError naming the
    component and equation that cannot be read)."""
    system = System()
    relations: dict[tuple[sp.Expr, str], sp.Symbol] = {}

    def relation(g: sp.Expr, op: str, owner: str) -> sp.Symbol:
        key = (g, op)
        found = relations.get(key)
        if found is None:
            found = relations[key] = sp.Symbol(f"rel{len(relations)}")
            system.relations.append(Relation(found, g, op, owner))
        return found

    for blk in net.components:
        try:
            _add_component(system, blk, relation)
        except ExpressionError as exc:
            raise CompileError(str(exc), block=blk.path, file=source) from None
    for members in net.sets:
        _add_connection_set(system, members, net)
    return system


def _symbol(name: str) -> sp.Symbol:
    return sp.Symbol(name, real=True)


def _add_component(system: System, blk: FlatBlock, relation) -> None:
    impl, p, path = blk.impl, blk.p, blk.path
    system.components.append(path)
    names: dict[str, sp.Expr] = {}
    continuous: set[sp.Symbol] = set()
    derivable: set[sp.Symbol] = set()
    for prm in impl.params:
        value = p.get(prm.name)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            sym = _symbol(f"{path}:{prm.name}")  # a number: a slot of the generated code
            system.params[sym] = (path, prm.name)
            system.values[sym] = float(value)
            names[prm.name] = sym
    for c in impl.connector_ports(p):
        d = domain(c.domain)
        for var in (d.across, d.through):
            sym = _symbol(f"{path}.{c.name}.{var}")
            names[f"{c.name}.{var}"] = sym
            system.unknowns.append(sym)
            system.owner_of[sym] = path
            continuous.add(sym)
            derivable.add(sym)
    for v in impl.variables:
        sym = names[v.name] = _symbol(f"{path}.{v.name}")
        system.unknowns.append(sym)
        system.owner_of[sym] = path
        continuous.add(sym)
        derivable.add(sym)
        if v.prefer or v.fixed:
            system.prefer.add(sym)
        if v.fixed and v.start is not None:
            system.fixed[sym] = path
    for port in impl.input_ports(p):
        sym = names[port.name] = _symbol(f"{path}>{port.name}")
        system.inputs[sym] = (path, port.name)
        continuous.add(sym)
    for port in impl.output_ports(p):
        sym = names[port.name] = _symbol(f"{path}.{port.name}")
        system.unknowns.append(sym)
        system.owner_of[sym] = path
        system.outputs[(path, port.name)] = sym
        continuous.add(sym)
    discrete_syms = []
    for d in impl.discretes:
        sym = names[d.name] = _symbol(f"{path}.{d.name}")
        discrete_syms.append((d, sym))
    scope = Scope(path, names, continuous, system.derivative, system.previous, relation,
                  derivable)
    where = f"{impl.name} equations"
    tr = Translator(scope, where)
    for d, sym in discrete_syms:
        system.discretes.append(Discrete(sym, path, d.name, tr.expression(str(d.start))))
    for v in impl.variables:
        if v.start is not None:
            system.starts[names[v.name]] = tr.expression(str(v.start))
    for text in impl.component_equations(p):
        system.equations.append(Equation(tr.equation(text), path, text))
    for w in impl.component_whens(p):
        reinit = []
        for target, text in w.reinit:
            sym = names.get(target)
            if sym not in derivable:
                raise ExpressionError(f"{where}: reinit of '{target}', which is not a "
                                      f"continuous variable")
            reinit.append((sym, tr.expression(text)))
        assign = []
        for target, text in w.assign:
            sym = names.get(target)
            if sym not in {s for _, s in discrete_syms}:
                raise ExpressionError(f"{where}: '{target}' is assigned in a when clause "
                                      f"but is not a discrete variable")
            assign.append((sym, tr.expression(text)))
        system.whens.append(WhenClause(tr.condition(w.condition), reinit, assign, path,
                                       w.event))


def _add_connection_set(system: System, members: Sequence[Endpoint], net: Network) -> None:
    by_path = {blk.path: blk for blk in net.components}
    doms = []
    for path, port in members:
        blk = by_path[path]
        conn = next(c for c in blk.impl.connector_ports(blk.p) if c.name == port)
        doms.append(domain(conn.domain))
    d = doms[0]
    text = " -- ".join(f"{path}.{port}" for path, port in members)
    across = [_symbol(f"{path}.{port}.{d.across}") for path, port in members]
    through = [_symbol(f"{path}.{port}.{d.through}") for path, port in members]
    for a in across[1:]:
        system.equations.append(Equation(across[0] - a, "", text))
    system.equations.append(Equation(sp.Add(*through), "", text))


