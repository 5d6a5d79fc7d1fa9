"""Component types declared in a diagram file (its "components" list), made into types.

A declaration is plain data (name, connectors, parameters, variables, equations in the
safe expression language, when clauses), so a diagram from someone else can bring its own
components without running code. The types live with the diagram, not in the registry:
two diagrams may declare different components of one name. The equations are read (and
refused with a message naming the component) when the diagram is compiled.
"""
from __future__ import annotations

import json
from typing import Any, Mapping

from blocksim.blocktypes import registry
from blocksim.blocktypes.blockspec import Param, Port
from blocksim.diagram.model import Diagram
from blocksim.errors import CompileError
from blocksim.physical.declare import Component, Connector, Discrete, Variable, When

_CACHE: dict[str, type[Component]] = {}
_MAX_CACHE = 256


def diagram_types(diagram: Diagram) -> dict[str, type[Component]]:
    """The component types a diagram declares, by name (CompileError naming the
    component for a declaration that cannot work)."""
    types: dict[str, type[Component]] = {}
    for decl in diagram.components:
        name = decl.get("name", "")
        if name in types:
            raise CompileError(f"the diagram declares the component '{name}' twice",
                               file=diagram.source)
        existing = registry.get(name)
        if existing is not None and not getattr(existing, "declared_in_diagram", False):
            raise CompileError(f"the diagram declares a component '{name}', which is the name "
                               f"of a library block type: give it another name",
                               file=diagram.source)
        types[name] = component_type(decl, diagram.source)
    return types


def component_type(decl: Mapping[str, Any], source: str = "<diagram>") -> type[Component]:
    """The Component subclass of one declaration (the same class for the same text)."""
    key = json.dumps(decl, sort_keys=True, default=str)
    cached = _CACHE.get(key)
    if cached is not None:
        return cached
    name = str(decl.get("name", ""))
    where = f"component '{name}' declared in the diagram"
    try:
        attrs = {
            "name": name,
            "category": str(decl.get("category", "Diagram components")),
            "doc": str(decl.get("doc", "")) or f"A component declared in the diagram ({name}).",
            "params": tuple(_param(p) for p in decl.get("parameters", [])),
            "connectors": tuple(Connector(c["name"], c["domain"], c.get("doc", ""),
                                          bool(c.get("optional", False)))
                                for c in decl.get("connectors", [])),
            "inputs": tuple(Port(n) for n in decl.get("inputs", [])),
            "outputs": tuple(Port(n) for n in decl.get("outputs", [])),
            "variables": tuple(Variable(v["name"], v.get("unit", ""), v.get("start"),
                                        v.get("doc", ""), bool(v.get("prefer", False)),
                                        bool(v.get("fixed", False)))
                               for v in decl.get("variables", [])),
            "discretes": tuple(Discrete(d["name"], d.get("start", 0.0), d.get("doc", ""))
                               for d in decl.get("discretes", [])),
            "equations": tuple(str(e) for e in decl.get("equations", [])),
            "declared_in_diagram": True,  # (the editor registers it while the diagram is open)
            "symbol": str(decl.get("symbol", "")),  # a library type whose picture it borrows
            "whens": tuple(When(str(w["condition"]),
                                tuple((k, str(v)) for k, v in w.get("reinit", {}).items()),
                                tuple((k, str(v)) for k, v in w.get("assign", {}).items()),
                                str(w.get("event", "")))
                           for w in decl.get("when", [])),
        }
    except (KeyError, TypeError, AttributeError) as exc:
        raise CompileError(f"{where}: malformed declaration ({exc})", file=source) from None
    cls = type(name or "Component", (Component,), attrs)
    problem = cls.declaration_problem()
    if problem:
        raise CompileError(f"{where}: {problem}", file=source)
    if not cls.equations and not cls.connectors:
        raise CompileError(f"{where}: it has no equations", file=source)
    if len(_CACHE) >= _MAX_CACHE:
        _CACHE.clear()
    _CACHE[key] = cls
    return cls


def _param(p: Mapping[str, Any]) -> Param:
    default = p.get("default", 0.0)
    kind = "vector" if isinstance(default, list) else "scalar"
    return Param(str(p["name"]), kind, default, str(p.get("doc", "")), unit=str(p.get("unit", "")))
