"""The equation system of one physical network, as the compiler passes transform it.

Unknowns are sympy symbols of continuous variables; `der` maps a variable to the symbol of
its time derivative (itself an unknown once it exists). Parameters stay symbols until code
is generated, so new parameter values need no new symbolic work (`values` holds those of
the compile, used only where a choice depends on a number: a pivot, a nonzero test).
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields

import sympy as sp

from blocksim.physical.equations import Relation


@dataclass
class Equation:
    """One equation, residual = 0, and where it comes from (messages name it)."""

    residual: sp.Expr
    owner: str  # the component's path, or "" for a connection
    text: str   # the equation as written (a connection's: its ports)
    level: int = 0  # how often index reduction differentiated it
    # components behind it besides its owner (a redundant alias: every component whose
    # equations made its two sides one variable), for messages
    related: frozenset[str] = frozenset()


@dataclass
class WhenClause:
    condition: sp.Basic
    reinit: list[tuple[sp.Symbol, sp.Expr]]
    assign: list[tuple[sp.Symbol, sp.Expr]]
    owner: str
    event: str


@dataclass
class Discrete:
    symbol: sp.Symbol
    owner: str
    name: str
    start: sp.Expr


@dataclass
class System:
    """What the passes read and write (see the module docstring)."""

    equations: list[Equation] = field(default_factory=list)
    unknowns: list[sp.Symbol] = field(default_factory=list)
    der: dict[sp.Symbol, sp.Symbol] = field(default_factory=dict)
    params: dict[sp.Symbol, tuple[str, str]] = field(default_factory=dict)  # (path, name)
    values: dict[sp.Symbol, float] = field(default_factory=dict)
    inputs: dict[sp.Symbol, tuple[str, str]] = field(default_factory=dict)  # (path, port)
    outputs: dict[tuple[str, str], sp.Expr] = field(default_factory=dict)  # (path, port)
    discretes: list[Discrete] = field(default_factory=list)
    relations: list[Relation] = field(default_factory=list)
    whens: list[WhenClause] = field(default_factory=list)
    starts: dict[sp.Symbol, sp.Expr] = field(default_factory=dict)
    prefer: set[sp.Symbol] = field(default_factory=set)
    fixed: dict[sp.Symbol, str] = field(default_factory=dict)  # fixed start -> its component
    conflicts: list[str] = field(default_factory=list)  # found by the passes, for messages
    pre: dict[sp.Symbol, sp.Symbol] = field(default_factory=dict)
    owner_of: dict[sp.Symbol, str] = field(default_factory=dict)  # variable -> component
    components: list[str] = field(default_factory=list)  # paths, in diagram order
    # Index reduction: equation index -> index of its derivative (`pantelides`); then the
    # states chosen (`states`), in order.
    derived: dict[int, int] = field(default_factory=dict)
    states: list[sp.Symbol] = field(default_factory=list)

    def numeric(self) -> dict[sp.Symbol, sp.Expr]:
        """The parameters' values as sympy numbers, for `xreplace` (`subs` with a dict
        converts every entry at every call: a hundred-stage ladder spent seconds there)."""
        cached = getattr(self, "_numeric", None)
        if cached is None or len(cached) != len(self.values):
            cached = {sym: sp.Float(v) for sym, v in self.values.items()}
            self._numeric = cached
        return cached

    def derivative(self, x: sp.Symbol) -> sp.Symbol:
        """The symbol of der(x), made (and made an unknown) on first use."""
        d = self.der.get(x)
        if d is None:
            d = self.der[x] = sp.Symbol(f"der({x.name})", real=True)
            self.unknowns.append(d)
            self.owner_of[d] = self.owner_of.get(x, "")
        return d

    def previous(self, x: sp.Symbol) -> sp.Symbol:
        """The symbol of pre(x): x's value when the event began."""
        p = self.pre.get(x)
        if p is None:
            p = self.pre[x] = sp.Symbol(f"pre({x.name})", real=True)
        return p

    def described(self, symbol: sp.Symbol) -> str:
        """A variable as messages name it ('R1.v', 'der(C.v)')."""
        return symbol.name

    @property
    def discrete_symbols(self) -> set[sp.Symbol]:
        return {d.symbol for d in self.discretes}


def copy_system(system: System) -> System:
    """A copy whose lists and maps can change without touching the original (the sympy
    expressions are immutable and shared)."""
    copy = System(**{f.name: _copied(getattr(system, f.name)) for f in fields(System)})
    return copy


def _copied(value):
    if isinstance(value, (list, dict, set)):
        return type(value)(value)
    return value
