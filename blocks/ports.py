"""Subsystems and their Inport/Outport blocks; the compiler flattens them away.

A Subsystem carries a nested diagram; each Inport/Outport inside becomes a port of the
subsystem named by that block's id (ordered by the `index` parameter, then file order).
"""
from __future__ import annotations

from blocksim.blockspec import BlockType, Param, Port


class Subsystem(BlockType):
    """A group of blocks shown as one; its ports are the ids of its Inport/Outport blocks."""

    name = "Subsystem"
    category = "Ports & Subsystems"


class Inport(BlockType):
    """A subsystem input: the signal wired to the subsystem port of this block's id."""

    name = "Inport"
    category = "Ports & Subsystems"
    params = (Param("index", "int", 0, "ordering among the subsystem's inputs (0: file order)"),)
    outputs = (Port("y", "the signal entering the subsystem"),)


class Outport(BlockType):
    """A subsystem output: offered outside as the subsystem port of this block's id."""

    name = "Outport"
    category = "Ports & Subsystems"
    params = (Param("index", "int", 0, "ordering among the subsystem's outputs (0: file order)"),)
    inputs = (Port("u", "the signal leaving the subsystem"),)


BLOCK_TYPES = (Subsystem, Inport, Outport,)
