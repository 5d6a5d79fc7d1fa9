"""FMI import: Functional Mock-up Units (FMI 2.0 and 3.0) as blocks of a diagram.

An FMU is a zip archive with a modelDescription.xml (its variables and capabilities) and
native binaries. `archive` reads what an FMU declares without running anything; `trust`
decides whether its binary may run (like a Python file of user block types); `session`
runs one FMU instance for one simulation run through fmpy (model exchange or
co-simulation); the `FMU` block (blocks/fmu.py) maps it onto blocksim's semantics
(docs/fmi.md). fmpy is an optional dependency: `pip install 'blocksim[fmi]'`.
"""
from __future__ import annotations

from blocksim.errors import CompileError


class FmuError(CompileError):
    """An FMU that cannot be used: the message names the file and what is wrong."""


def require_fmpy() -> None:
    """FmuError unless fmpy can be imported (the `fmi` extra)."""
    try:
        import fmpy  # noqa: F401
    except ImportError as exc:
        raise FmuError(f"FMU blocks need fmpy, which cannot be imported ({exc}); install "
                       f"it with pip install 'blocksim[fmi]'") from None
