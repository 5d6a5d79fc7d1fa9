"""Error types whose messages name the file, block, port and offending value.

Every user mistake surfaces as one of these, so the CLI can print one clear line and exit
with status 2 (bad input) or 1 (failed simulation) instead of a traceback.
"""
from __future__ import annotations

from typing import Any, Sequence


MAX_NAME = 80  # characters of a name quoted back to the user (a block id, a type name)


def shown(name: object, limit: int = MAX_NAME) -> str:
    """A name from the user's input as quoted in a message: a 100,000-character block id is
    cut, with its length said, so the message stays one readable line."""
    text = str(name)
    if not text.isprintable():  # a newline or a control character would break the line
        text = repr(text)[1:-1]
    if len(text) <= limit:
        return text
    return f"{text[:limit - 20]}... ({len(text):,} characters)"


class BlocksimError(Exception):
    """Base class of every error blocksim reports to a user."""


class DiagramFileError(BlocksimError):
    """A diagram file that cannot be read: missing, not JSON, or not a blocksim diagram."""

    def __init__(self, message: str, file: str | None = None, block: str | None = None):
        self.file = file
        self.block = block
        self.detail = message
        where = ", ".join(p for p in (file and f"{file}", block and f"block '{shown(block)}'") if p)
        super().__init__(f"{where}: {message}" if where else message)


class ExpressionError(BlocksimError):
    """A parameter or formula expression that is malformed, unsafe or cannot be evaluated."""


class CompileError(BlocksimError):
    """A diagram that cannot be turned into a simulation (wiring, parameters, widths, loops)."""

    def __init__(self, message: str, block: str | None = None, port: str | None = None,
                 file: str | None = None, wires: Sequence[tuple[str, str]] = ()):
        self.block = block
        self.port = port
        self.file = file
        # the connections at fault, ("path.out", "path.in") in flattened block paths: an
        # algebraic loop's every wire, so an editor can highlight the whole cycle
        self.wires = tuple(wires)
        self.detail = message
        parts = []
        if file:
            parts.append(file)
        if block:
            parts.append(f"block '{shown(block)}'" + (f" port '{shown(port)}'" if port else ""))
        super().__init__(f"{', '.join(parts)}: {message}" if parts else message)


class SimulationError(BlocksimError):
    """A run that failed; carries the time, the block (and, where the failure concerns one,
    the port: a non-finite output, an output its formula could not compute) at fault and
    the results computed so far."""

    def __init__(self, message: str, time: float, block: str | None = None,
                 results: Any = None, port: str | None = None):
        self.time = time
        self.block = block
        self.port = port if block else None
        self.results = results
        self.detail = message
        where = f"t = {time:.17g}" + (f", block '{shown(block)}'" if block else "") + (
            f" port '{shown(port)}'" if self.port else "")
        super().__init__(f"{where}: {message}")


class SimulationInterrupted(SimulationError):
    """A run ended by Ctrl-C (KeyboardInterrupt); `.results` holds what was computed so far."""


class StructuralParameterError(CompileError):
    """A new parameter value that would change a compiled model's structure (widths, choices,
    ports, the shape of its code, sample times): it needs a new compile, not new values.

    `code_only`: the model's shape (ports, widths, states, sample times) stays and only the
    generated code differs (a block leaves out a zero term or a unit factor), so a sweep can
    compile such values as a model of their own; otherwise the diagram itself changes."""

    def __init__(self, message: str, block: str | None = None, file: str | None = None,
                 code_only: bool = False):
        super().__init__(message, block=block, file=file)
        self.code_only = code_only
