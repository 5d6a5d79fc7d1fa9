"""A block type's own code failing (a third-party block, or a bug) becomes a CompileError
naming the block, never a traceback: the compiler calls block code through `call_block` or
catches `BLOCK_FAULTS` around it."""
from __future__ import annotations

import logging
from typing import Any, Callable

from blocksim.errors import CompileError, ExpressionError

log = logging.getLogger(__name__)

# What a block type's code may raise for values it cannot handle (or by a bug of its own).
BLOCK_FAULTS = (ExpressionError, ValueError, TypeError, KeyError, IndexError, AttributeError,
                ArithmeticError, RecursionError, MemoryError, AssertionError)


def call_block(method: Callable[..., Any], *args: Any) -> Any:
    """Call a block type's own code; whatever it raises becomes a CompileError (the caller
    adds the block), so a faulty third-party block cannot end a compile in a traceback."""
    try:
        return method(*args)
    except CompileError:
        raise
    except BLOCK_FAULTS as exc:
        log.debug("%s failed", getattr(method, "__qualname__", method), exc_info=True)
        name = getattr(method, "__name__", "?")
        raise CompileError(f"the block's {name}() failed: {type(exc).__name__}: "
                           f"{_one_line(exc)}") from None


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= 200 else text[:197] + "..."
