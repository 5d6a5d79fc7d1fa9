"""Which of blocksim's solvers the C runtime carries, and what a translation unit needs
for each: dopri5 (`runtime/bs_cs.c`) and radau (`runtime/bs_radau.c`, scipy's Radau in C).

The C backend's library and a co-simulation FMU are compiled for one solver: for radau the
main file defines BS_RADAU before the runtime and includes `bs_radau.c` after `bs_cs.c`,
with the table of which zero crossings read the state (those located again on integrated
states, as the engine does on radau).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from blocksim.ccode.model_source import RUNTIME

if TYPE_CHECKING:
    from blocksim.compiler.compiled import CompiledModel

SOLVERS = ("dopri5", "radau")
"""The solvers the C runtime integrates with (the others run in Python, or, in a
co-simulation FMU, are replaced by dopri5 with a notice)."""
RADAU_FILES = ("bs_radau.h", "bs_radau.c", "bs_radau_la.c")


def carried(solver: str) -> bool:
    return solver in SOLVERS


def defines(solver: str) -> str:
    """Lines that go before the runtime's includes."""
    return "#define BS_RADAU 1\n" if solver == "radau" else ""


def after_stepper(model: "CompiledModel", solver: str) -> str:
    """Lines that go right after `#include "bs_cs.c"`."""
    if solver != "radau":
        return ""
    from blocksim.engine import derived

    reads = [int(v) for v in derived.zc_reads_states(model)] or [0]
    return ("static const int bs_zc_reads_states[%d] = {%s};\n" % (
        len(reads), ", ".join(str(v) for v in reads)) + '#include "bs_radau.c"\n')


def runtime_files(solver: str) -> dict[str, str]:
    """The solver's runtime sources beyond bs_cs.c, by file name."""
    if solver != "radau":
        return {}
    return {name: (RUNTIME / name).read_text(encoding="utf-8") for name in RADAU_FILES}
