"""A small valid diagram, as a dict and as a model, shared by the format tests."""
from __future__ import annotations

from typing import Any

from blocksim.diagram.model import Block, Diagram, PortRef, SimulationSettings, Wire


def lag_dict() -> dict[str, Any]:
    """A valid first-order-lag document with a subsystem, layouts and wire bends."""
    return {
        "format": "blocksim",
        "version": 1,
        "description": "first-order lag",
        "parameters": {"tau": 0.5, "k": "2 * tau", "A": [[1, 0], [0, 1]]},
        "simulation": {"start": 0.0, "stop": 5.0, "solver": "rk4", "rtol": 1e-6,
                       "atol": 1e-8, "step": 0.01},
        "blocks": [
            {"id": "step", "type": "Step", "params": {"time": 1, "after": 1.0},
             "layout": {"x": 10, "y": 20, "rotation": 90, "flip": True, "color": "red"}},
            {"id": "sum", "type": "Sum", "params": {"signs": "+-"}},
            {"id": "integ", "type": "Integrator", "params": {"x0": 0}},
            {"id": "fb", "type": "Gain", "params": {"k": "1 / tau", "enabled": False,
                                                    "table": [[1, 2.5], [3, -4e-3]]}},
            {"id": "sub", "type": "Subsystem", "params": {},
             "diagram": {
                 "parameters": {"g": 3},
                 "blocks": [
                     {"id": "u", "type": "Inport", "params": {}},
                     {"id": "gain1", "type": "Gain", "params": {"k": "g"}},
                     {"id": "y", "type": "Outport", "params": {}},
                 ],
                 "wires": [{"src": "u.y", "dst": "gain1.u"},
                           {"src": "gain1.y", "dst": "y.u"}],
             }},
            {"id": "y", "type": "Output", "params": {}},
        ],
        "wires": [
            {"src": "step.y", "dst": "sum.u1"},
            {"src": "sum.y", "dst": "integ.u", "points": [[1.5, 2.0], [3, 4]]},
            {"src": "integ.y", "dst": "fb.u"},
            {"src": "fb.y", "dst": "sum.u2"},
            {"src": "integ.y", "dst": "sub.u"},
            {"src": "sub.y", "dst": "y.u"},
        ],
    }


def lag_diagram() -> Diagram:
    inner = Diagram(
        blocks=[Block("u", "Inport"), Block("k", "Gain", {"k": [[1.0, 2.0]]}),
                Block("y", "Outport")],
        wires=[Wire(PortRef("u", "y"), PortRef("k", "u")),
               Wire(PortRef("k", "y"), PortRef("y", "u"))],
        parameters={"g": 2},
    )
    return Diagram(
        blocks=[
            Block("step", "Step", {"time": 1.0}, layout={"x": 1.0, "y": -2.5, "label": "é"}),
            Block("integ", "Integrator", {"x0": 0.1}),
            Block("sub", "Subsystem", {}, subsystem=inner),
            Block("y", "Output"),
        ],
        wires=[
            Wire(PortRef("step", "y"), PortRef("integ", "u"), [(0.1, 0.2), (3.0, 4.0)]),
            Wire(PortRef("integ", "y"), PortRef("sub", "u")),
            Wire(PortRef("sub", "y"), PortRef("y", "u")),
        ],
        parameters={"tau": 0.1 + 0.2, "expr": "exp(-tau)", "v": [1.0, 2.0, 3.0]},
        simulation=SimulationSettings(start=-1.0, stop=1e-3, solver="radau", rtol=1e-9,
                                      atol=1e-12, max_step=0.25, output_interval=1e-4),
        description="a test diagram",
    )
