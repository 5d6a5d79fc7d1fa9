"""The component types a diagram declares in its file, made known to the editor while it
is open: the palette lists them, the canvas draws their ports and the inspector their
parameters, as for any block type (the compiler reads them from the diagram itself)."""
from __future__ import annotations

import logging

from blocksim.blocktypes import registry
from blocksim.diagram.model import Diagram
from blocksim.errors import CompileError

log = logging.getLogger(__name__)


def register_declared(diagram: Diagram) -> list[str]:
    """Register the diagram's declared component types (names returned); one that cannot
    work is left out with a warning (validation names it), as is a name a library takes."""
    if not diagram.components:
        return []
    from blocksim.physical.declared import diagram_types  # only for diagrams that declare

    try:
        types = diagram_types(diagram)
    except CompileError as exc:
        log.warning("%s", exc)
        return []
    for name, cls in types.items():
        current = registry.get(name)
        if current is cls:
            continue
        if current is not None:  # another diagram's declaration of that name: this one now
            registry.unregister(name)
        registry.register(cls, source=diagram.source)
    return list(types)
