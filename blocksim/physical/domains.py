"""Physical domains: which across (potential) and through (flow) variable a connector carries.

A connection of connectors is Modelica's: their across variables are equal and their
through variables sum to zero. Through variables count positive into the component.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Domain:
    """One physical domain: its variables, their units and the colour the editor draws."""

    name: str
    across: str
    through: str
    across_unit: str
    through_unit: str
    colour: str  # #rrggbb, for ports and wires in the editor


DOMAINS: dict[str, Domain] = {d.name: d for d in (
    Domain("electrical", "v", "i", "V", "A", "#1f5fbf"),
    Domain("translational", "s", "f", "m", "N", "#2e8b57"),
    Domain("rotational", "phi", "tau", "rad", "N.m", "#8b4513"),
    Domain("thermal", "T", "Q_flow", "K", "W", "#c0392b"),
)}


def domain(name: str) -> Domain:
    """The domain of this name (ValueError naming the known ones)."""
    try:
        return DOMAINS[name]
    except KeyError:
        raise ValueError(f"unknown physical domain '{name}' (domains: "
                         f"{', '.join(DOMAINS)})") from None
