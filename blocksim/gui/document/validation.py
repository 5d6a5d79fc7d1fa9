"""The checks the editor runs before it accepts an edit, and the problem list of a diagram.

Qt-free on purpose: every check delegates to the project's own code (the file format's
validation, the compiler's parameter resolution and block `check`, `compile_diagram`, the
Simulator's settings checks), so the editor can never disagree with `blocksim validate`.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from typing import Any, Mapping, Sequence

from blocksim.expressions import language as expressions

from blocksim.blocktypes import registry
from blocksim.compiler import compile_diagram
from blocksim.compiler.flatten import check_blocks
from blocksim.engine import Simulator
from blocksim.files import write_rule
from blocksim.errors import (
    BlocksimError,
    CompileError,
    DiagramFileError,
    ExpressionError,
    SimulationError,
)
from blocksim.diagram.format import (
    FORMAT_NAME,
    FORMAT_VERSION,
    diagram_from_dict,
    diagram_to_dict,
)
from blocksim.gui.canvas.portinfo import control_ports
from blocksim.diagram.model import Block, Diagram, SimulationSettings

log = logging.getLogger(__name__)


@dataclass
class Diagnostic:
    """One problem of a diagram, located as precisely as the check that found it allows."""

    message: str
    block: str | None
    port: str | None = None
    wire: str | None = None
    severity: str = "error"  # error | warning
    # an algebraic loop's connections, ("path.out", "path.in") in flattened block paths
    cycle: tuple[tuple[str, str], ...] = ()


def diagnostic_of(exc: BaseException) -> Diagnostic:
    """The diagnostic for an error that stopped a check or a run, located as the error is."""
    if isinstance(exc, write_rule.WriteRefused) and exc.allowable:  # the editor asks instead
        return Diagnostic(f"{exc.reason} (Run asks before writing it)", exc.block)
    if isinstance(exc, CompileError):
        return Diagnostic(exc.detail, exc.block, exc.port, wire=_wire_of(exc.detail),
                          cycle=tuple(getattr(exc, "wires", ())))
    if isinstance(exc, DiagramFileError):
        return Diagnostic(exc.detail, exc.block)
    if isinstance(exc, SimulationError):
        if exc.results is None:  # refused before running: the settings
            return Diagnostic(f"simulation settings: {exc.detail}", None)
        return Diagnostic(f"{exc.detail} (at t = {exc.time:.6g} s)", exc.block,
                          getattr(exc, "port", None))
    if isinstance(exc, BlocksimError):
        return Diagnostic(str(exc), None)
    return Diagnostic(f"internal error: {type(exc).__name__}: {exc}", None)


def check_diagram(diagram: Diagram, overrides: Mapping[str, Any] | None = None,
                  allow_write: Sequence[str] = ()) -> list[Diagnostic]:
    """Problems that would stop `diagram` from running (the compiler reports the first).
    A file a block would write outside the diagram's folder (not in `allow_write`) is a
    warning: Run asks before writing it."""
    try:
        diagram_from_dict(diagram_to_dict(diagram), source=diagram.source)
        model = compile_diagram(diagram, overrides)
        # checks solver, stop > start, fixed step; on the python backend, as these do not
        # depend on it (c would compile the model's library, numba its loop, here)
        Simulator(model, diagram.simulation.replaced(backend="python"))
        write_rule.check(model.files, allow=allow_write)
    except write_rule.WriteRefused as exc:
        found = diagnostic_of(exc)
        return [replace(found, severity="warning") if exc.allowable else found]
    except BlocksimError as exc:
        return [diagnostic_of(exc)]
    except Exception as exc:  # a bug must not take the editor down with it
        log.exception("checking %s failed", diagram.source)
        return [Diagnostic(f"internal error while checking: {type(exc).__name__}: {exc}", None)]
    if not model.logged:
        return [Diagnostic("nothing is recorded: add a Scope or Output block", None,
                           severity="warning")]
    return []


def _wire_of(detail: str) -> str | None:
    """The wire ('a.y -> b.u') a compiler message is about, if it names one."""
    if detail.startswith("wire ") and ":" in detail:
        return detail[len("wire "):detail.index(":")]
    return None


def check_block_params(diagram: Diagram, block: Block, params: Mapping[str, Any],
                       parents: Sequence[Diagram] = ()) -> str | None:
    """Why `params` cannot be the parameters of `block`, or None if they can.

    Resolution and the type's `check` run exactly as in the compiler: the block is flattened
    alone, inside copies of its enclosing levels (`parents`, outermost first) so that it sees
    the same diagram parameters it would see in a full compile.
    """
    block_type = registry.get(block.type)
    if block_type is None:
        return f"unknown block type '{block.type}'"
    if block.type == "Subsystem":
        return f"a Subsystem takes no parameters, got {', '.join(params)}" if params else None
    # A TriggeredSubsystem's parameters are checked on an empty inside: its contents are
    # checked where they are, and by the whole diagram's check.
    inside = Diagram() if getattr(block_type, "has_diagram", False) else None
    level = Diagram(blocks=[Block(block.id, block.type, dict(params), subsystem=inside)],
                    parameters=dict(diagram.parameters))
    for depth, outer in enumerate(reversed(parents)):
        level = Diagram(blocks=[Block(f"level{depth}", "Subsystem", subsystem=level)],
                        parameters=dict(outer.parameters))
    level.path = (parents[0] if parents else diagram).path  # (files: relative to its folder)
    try:
        check_blocks(level)
    except CompileError as exc:
        return exc.detail
    except Exception as exc:  # a block's check() that raises is a bug of that block
        log.exception("checking parameters of %s failed", block.id)
        return f"{block.type} could not check these values: {type(exc).__name__}: {exc}"
    return None


def check_block_id(diagram: Diagram, old: str, new: str,
                   parents: Sequence[Diagram] = ()) -> str | None:
    """Why block `old` cannot be renamed to `new` in `diagram`, or None if it can.

    `parents` are the enclosing levels (outermost first): an Inport of a triggered or
    enabled subsystem may not take the name of its trigger or enable port."""
    if new == old:
        return None
    if any(blk.id == new for blk in diagram.blocks):
        return f"there is already a block '{new}'"
    try:
        block_type = diagram.block(old).type
    except KeyError:
        block_type = "Constant"
    owner = next((b for b in (parents[-1].blocks if parents else ())
                  if b.subsystem is diagram), None)
    if block_type == "Inport" and owner is not None and new in control_ports(owner.type):
        return (f"'{new}' is the name of this {owner.type}'s {new} port; an Inport may not "
                f"take it")
    document = {"format": FORMAT_NAME, "version": FORMAT_VERSION,
                "blocks": [{"id": new, "type": block_type}], "wires": []}
    try:
        diagram_from_dict(document)
    except DiagramFileError as exc:
        return "id " + exc.detail.split(": ", 1)[-1]
    return None


def check_parameters(parameters: Mapping[str, Any]) -> str | None:
    """Why `parameters` cannot be a diagram's parameters (bad name, value or cycle), or None."""
    try:
        diagram_from_dict(diagram_to_dict(Diagram(parameters=dict(parameters))))
        expressions.resolve_parameters(parameters)
    except DiagramFileError as exc:
        return exc.detail
    except ExpressionError as exc:
        return str(exc)
    return None


def check_settings(settings: SimulationSettings) -> str | None:
    """Why a run could not start with these settings, or None."""
    try:
        diagram_from_dict(diagram_to_dict(Diagram(simulation=settings)))
        python = settings.replaced(backend="python")  # (as in check_diagram)
        Simulator(compile_diagram(Diagram(), settings=python), python)
    except (DiagramFileError, CompileError, SimulationError) as exc:
        return exc.detail
    return None
