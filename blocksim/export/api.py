"""`blocksim.export_fmu`: the Python entry point of FMU export."""
from __future__ import annotations

import os
from typing import Any, Mapping

from blocksim.diagram.model import Diagram
from blocksim.export.fmu import Exported


def export_fmu(diagram: "Diagram | str | os.PathLike[str]", out: "str | os.PathLike[str]",
               fmi: int = 2, kind: str = "me", params: Mapping[str, Any] | None = None,
               trust: tuple[str, ...] = ()) -> Exported:
    """Write `diagram` (a Diagram, a file or an example's name) as an FMU to `out`.

    fmi: 2 or 3; kind: "me" (model exchange) or "cs" (co-simulation); params: parameter
    values to export with (as `--set`). Raises BlocksimError with one line naming the block
    or setting when the diagram cannot be exported (a Python user block, a transport
    delay, no C compiler).
    """
    from blocksim.export import fmu

    if not isinstance(diagram, Diagram):
        from blocksim.api.facade import load
        from blocksim.diagram.examples import diagram_path

        diagram = load(diagram_path(diagram), trust=list(trust))
    return fmu.export_fmu(diagram, out, fmi=fmi, kind=kind, params=dict(params or {}))
