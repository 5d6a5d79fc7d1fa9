"""Triggered and enabled subsystems, flattened: a gate block that watches the condition, holds
on the subsystem's ports, and the context every inner block carries (`FlatBlock.gates`,
`FlatBlock.trigger`) for the later stages.

- Triggered: the gate (`TriggerGate`) raises a flag at each trigger edge; the subsystem's
  blocks and the holds on its inputs and outputs run at the "hit" of the trigger's own rate
  (`sampling`), so everything inside steps once per edge and holds in between.
- Enabled: the gate (`EnableGate`) keeps a mode (1.0 while enabled) switched at located
  events; inner continuous states are frozen and inner discrete hits skipped while it is
  0 (`codegen`), and the outputs go through `EnabledHold` (held or reset while disabled).
"""
from __future__ import annotations

from typing import Any, Mapping

from blocksim.blocktypes.blockspec import BlockType, ParamValues
from blocksim.compiler import flatten
from blocksim.compiler.params import params_for
from blocksim.errors import CompileError, shown
from blocksim.diagram.model import Block
from blocksim.blocktypes.registry import standard_library


def _internal(name: str) -> type[BlockType]:
    """A block type the compiler inserts (declared beside Subsystem, never registered)."""
    return getattr(standard_library().ports, name)


def add(fl: "flatten._Flattener", blk: Block, block_type: type[BlockType],
        names: Mapping[str, Any], path: str, depth: int) -> dict:
    """Flatten a TriggeredSubsystem or EnabledSubsystem; returns its ports as `add` does."""
    p = params_for(block_type, blk.params, names, path, fl.budget)
    triggered = blk.type == "TriggeredSubsystem"
    control = "trigger" if triggered else "enable"
    if any(b.id == control and b.type == "Inport" for b in blk.subsystem.blocks):
        raise fl.error(f"an Inport may not be called '{control}' in a {blk.type}: that is "
                       f"the name of its {control} port", block=f"{path}/{control}")
    gate = path  # the subsystem itself is no flat block: its events name it
    if triggered:
        gate_type = _internal("TriggerGate")
        gate_p = ParamValues({"edge": p.edge})
    else:
        gate_type = _internal("EnableGate")
        gate_p = ParamValues({"states_when_enabling": p.states_when_enabling})
    fl.blocks.append(flatten.FlatBlock(gate, gate_type, gate_type(), gate_p, [control], [], {},
                                       fl.gates, fl.trigger, raw=dict(blk.params),
                                       level=path.rpartition("/")[0], declared=False))
    outer = fl.gates, fl.trigger
    if triggered:
        fl.trigger = gate
    else:
        fl.gates = fl.gates + (gate,)
    try:
        inner_names = fl.scope(blk.subsystem.parameters, names, path)
        inner = fl.add(blk.subsystem, inner_names, path + "/", depth + 1)
        ports = fl._subsystem_ports(blk.subsystem, inner, path)
        by_path = {b.path: b for b in fl.blocks}
        for bid in list(ports["out"]):
            outport = by_path[f"{path}/{bid}"]
            initial, raw = outport.p.initial, {**blk.params, **outport.raw}
            if triggered:
                hold = _hold(fl, f"{path}/__out_{bid}", "TriggeredHold", {"initial": initial},
                             raw, outport.level)
            else:
                hold = _hold(fl, f"{path}/__out_{bid}", "EnabledHold",
                             {"initial": initial,
                              "reset": p.outputs_when_disabled == "reset"}, raw, outport.level)
            fl.wires[(hold, "u")] = ports["out"][bid]
            ports["out"][bid] = (hold, "y")
            fl.shown[(hold, "y")] = (path, bid)
        if triggered:  # the inputs are sampled at the trigger too
            for bid in list(ports["in"]):
                hold = _hold(fl, f"{path}/__in_{bid}", "TriggeredHold", {"initial": 0.0})
                fl.wires[ports["in"][bid]] = (hold, "y")
                ports["in"][bid] = (hold, "u")
                fl.shown[(hold, "u")] = (path, bid)
    finally:
        fl.gates, fl.trigger = outer
    ports["in"][control] = (gate, control)
    fl.shown[(gate, control)] = (path, control)
    return ports


def _hold(fl: "flatten._Flattener", path: str, type_name: str, values: dict,
          raw: dict | None = None, level: str = "") -> str:
    """A hold block; `raw`: the file's parameters its values come from (`FlatBlock.raw`)."""
    hold_type = _internal(type_name)
    fl.blocks.append(flatten.FlatBlock(path, hold_type, hold_type(), ParamValues(values), ["u"],
                                       ["y"], {"y": ("u",)}, fl.gates, fl.trigger, raw=raw or {},
                                       level=level, declared=False))
    return path


def merge_sources(flat: "flatten.FlatDiagram") -> None:
    """Give each block that follows conditional subsystems (Merge: `watches_sources`) the
    output hold of the subsystem driving each of its inputs (`FlatBlock.watch`)."""
    by_path = {blk.path: blk for blk in flat.blocks}
    for blk in flat.blocks:
        if not getattr(blk.block_type, "watches_sources", False):
            continue
        sources = []
        for port in blk.inputs:
            src = by_path[flat.drivers[(blk.path, port)][0]]
            if src.block_type.name not in ("EnabledHold", "TriggeredHold") \
                    or not src.path.rpartition("/")[2].startswith("__out_"):
                raise CompileError(f"input '{port}' must come from an output of an "
                                   f"EnabledSubsystem or a TriggeredSubsystem (a "
                                   f"{blk.block_type.name} follows the one that ran last), but "
                                   f"'{shown(src.path)}' drives it", block=blk.path, port=port,
                                   file=flat.source)
            sources.append(src.path)
        blk.watch = tuple(sources)
