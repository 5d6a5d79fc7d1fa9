"""The component types a diagram declares in its file, made known to the editor while it
is open: the palette lists them, the canvas draws their ports and the inspector their
parameters, as for any block type (the compiler reads them from the diagram itself)."""
from __future__ import annotations

import logging

from blocksim.blocktypes import registry
from blocksim.diagram.model import Diagram
from blocksim.errors import CompileError

log = logging.getLogger(__name__)


def declare_components(owner: object, diagram: Diagram) -> list[str]:
    """Declare the diagram's component types for `owner` (its document), replacing what it
    declared before (names returned); one that cannot work is left out with a warning
    (validation names it)."""
    types = {}
    if diagram.components:
        from blocksim.physical.declared import diagram_types  # only for diagrams that declare

        try:
            types = diagram_types(diagram)
        except CompileError as exc:
            log.warning("%s", exc)
    registry.declare(owner, types)
    return list(types)
