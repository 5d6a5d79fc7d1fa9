"""Import Simulink models (.slx, .mdl) into blocksim diagrams, with a report of the mapping.

Nothing in a Simulink file is ever evaluated: callbacks and parameter scripts are read as
plain assignments, expressions are translated into blocksim's safe expression language, and
the zip package is size-checked before anything is decompressed (docs/simulink.md).

    result = blocksim.import_simulink("model.slx", params=["data.m"], overrides={"K": "2"})
    result.diagram, result.report.markdown()
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from blocksim.simulink.importer import ImportResult


def import_simulink(path: Any, params: Any = (), overrides: Any = None) -> "ImportResult":
    """Read a Simulink model and translate it (`blocksim.simulink.importer.import_simulink`)."""
    from blocksim.simulink.importer import import_simulink as run
    return run(path, params=params, overrides=overrides)
