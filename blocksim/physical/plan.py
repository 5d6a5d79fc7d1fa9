"""What code generation needs of a compiled network: its structures and its slots.

A network usually has one structure: one choice of states and one sorted set of equation
blocks, whatever its modes. Some networks change structure with a discrete variable (a
pendulum's rope taut, with a constraint, or slack, without) or with where the system is
(the same pendulum's position is best computed from its angle's sine or its cosine): each
such structure is a `Variant`, selected by a condition on discrete variables and latched
relations, so it holds between events. The block's state slots are the union of every
variant's states; a variable that is not a state of the active variant is kept in step in
its slot, so a switch of structure starts from consistent values.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import sympy as sp

from blocksim.physical.blt import Block
from blocksim.physical.system import System


@dataclass
class Variant:
    """One structure of a network: its equations after the passes, and when it holds."""

    selector: sp.Basic  # a condition on discrete variables and relation symbols
    system: System
    blocks: list[Block]
    fixed: dict[sp.Symbol, sp.Expr] = field(default_factory=dict)  # its discrete values
    defined_by: dict[sp.Symbol, int] = field(default_factory=dict)  # unknown -> block

    def __post_init__(self) -> None:
        for b, block in enumerate(self.blocks):
            for v in block.variables:
                self.defined_by[v] = b

    def watches(self, relation: sp.Symbol) -> bool:
        """Whether a relation can matter in this variant: some equation or when condition
        reads it outside a conjunction with a discrete test this variant makes false (a
        slack rope's "stretched" test means nothing while it is taut, where x^2 + y^2 - l^2
        is 0 up to rounding and its sign would only be noise)."""
        if not self.fixed:
            return True
        uses = [w.condition for w in self.system.whens if relation in w.condition.free_symbols]
        for eq in self.system.equations:
            for pw in eq.residual.atoms(sp.Piecewise):
                uses += [c for _, c in pw.args if relation in c.free_symbols]
        return not uses or not all(_excluded(c, relation, self.fixed) for c in uses)

    def computes(self, sym: sp.Symbol) -> bool:
        """Whether the variant has a value for `sym` (a state of it, or solved by it)."""
        return sym in self.defined_by or sym in self.system.states


@dataclass
class Plan:
    """The network's variants and the slots they share, in slot order."""

    base: System  # as gathered: discrete variables, parameters, inputs
    variants: list[Variant]
    slots: list[sp.Symbol]  # continuous state slots: every variant's states
    inputs: list[sp.Symbol]
    outputs: list[tuple[str, str]]
    relation_slot: dict[sp.Symbol, tuple[int, str]]  # relation -> (crossing slot, op)
    n_crossings: int
    n_whens: int
    pre_symbols: list[sp.Symbol]  # pre(x) symbols that pre_event saves
    param_key: dict[sp.Symbol, str]
    unknown_index: dict[sp.Symbol, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for variant in self.variants:
            for u in variant.system.unknowns:
                self.unknown_index.setdefault(u, len(self.unknown_index))

    @property
    def n_discrete(self) -> int:
        return len(self.base.discretes)

    # slots in m: the discrete variables, each when's last condition, then pre values
    def when_slot(self, k: int) -> int:
        return self.n_discrete + k

    def pre_slot(self, k: int) -> int:
        return self.n_discrete + self.n_whens + k

    @property
    def m_size(self) -> int:
        return self.n_discrete + self.n_whens + len(self.pre_symbols)


def _excluded(condition: sp.Basic, relation: sp.Symbol, fixed: dict) -> bool:
    """Whether every occurrence of `relation` in `condition` is inside a conjunction that
    the discrete values `fixed` make false."""
    if relation not in condition.free_symbols:
        return True
    if isinstance(condition, sp.And):
        others = [a for a in condition.args if relation not in a.free_symbols]
        if any(a.xreplace(fixed) == sp.false for a in others):
            return True
        return all(_excluded(a, relation, fixed) for a in condition.args
                   if relation in a.free_symbols)
    if isinstance(condition, (sp.Or, sp.Not)):
        return all(_excluded(a, relation, fixed) for a in condition.args)
    return False
