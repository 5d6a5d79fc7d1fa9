"""Blocks the importer cannot translate become placeholder subsystems: the same name and
position, the same number of ports (so every line around them is kept), and inside, a
Placeholder block wired from the Inports to the Outports that makes `validate` and `run`
fail, naming what it stands for, until the user builds the contents."""
from __future__ import annotations

import re

from blocksim.diagram.model import Block, Diagram, PortRef, Wire
from blocksim.simulink.mapping import BlockContext, Mapped
from blocksim.simulink.model import SlBlock, SlModel, SlSystem

# Block types that are code or physical networks: never translated.
_CODE = {"S-Function": "an S-Function (compiled or MATLAB code)",
         "M-S-Function": "a MATLAB S-Function",
         "MATLABSystem": "a MATLAB System block (code)",
         "FMU": "an FMU", "ModelReference": "a referenced model (a separate file)",
         "SimscapeBlock": "a Simscape component", "PMComponent": "a Simscape component",
         "PMIOPort": "a Simscape connection port", "SimscapeComponentBlock":
         "a Simscape component", "ObserverReference": "an observer"}


def unmappable_reason(block: SlBlock, model: SlModel) -> str:
    """Why a block is never translated (code, a chart, a physical network, a mask that
    runs initialization code), or ''."""
    if block.type in _CODE:
        return _CODE[block.type]
    source = block.source_block.lower()
    if block.type == "Reference" and not source.startswith("powerlib_extras") and \
            (source.startswith(("fl_lib", "ee_lib", "foundation",
                                                         "sm_lib", "powerlib", "nesl_utility",
                                                         "simscape"))):
        return "a Simscape block"
    if block.type == "SubSystem":
        sf = block.params.get("SFBlockType", "") or block.mask.get("MaskType", "")
        if sf in ("Chart", "Stateflow", "State Transition Table", "Truth Table"):
            return "a Stateflow chart"
        if sf in ("MATLAB Function",) or block.params.get("SFBlockType") == "MATLAB Function":
            return "a MATLAB Function block (MATLAB code)"
        code = (block.mask.get("MaskInitialization") or "").strip()
        if code:
            from blocksim.simulink.workspace import Workspace, read_assignments
            init = Workspace()
            read_assignments(code, "mask initialization", init)
            if init.skipped:  # plain assignments only become the subsystem's parameters
                return ("a masked subsystem whose initialization code is more than plain "
                        f"assignments ({init.skipped[0].split(': ', 1)[-1]})")
        if block.system is not None and any(b.type == "S-Function" and
                                            "sf_sfun" in b.params.get("FunctionName", "")
                                            for b in block.system.blocks):
            return "a Stateflow chart or MATLAB Function block"
    return ""


def _port_counts(block: SlBlock, system: SlSystem) -> tuple[int, int]:
    n_in = n_out = 0
    ports = re.findall(r"-?\d+", block.params.get("Ports", ""))
    if ports:
        n_in = int(ports[0])
        n_out = int(ports[1]) if len(ports) > 1 else 0
    if block.system is not None:
        n_in = max(n_in, sum(b.type == "Inport" for b in block.system.blocks))
        n_out = max(n_out, sum(b.type == "Outport" for b in block.system.blocks))
    for conn in system.connections:
        if conn.dst.block == block.name and conn.dst.kind == "in":
            n_in = max(n_in, conn.dst.index)
        if conn.src.block == block.name and conn.src.kind == "out":
            n_out = max(n_out, conn.src.index)
    return n_in, n_out


def _port_names(block: SlBlock, kind: str, count: int) -> list[str]:
    """The subsystem's own port names (a MATLAB Function's arguments, a chart's data) in
    port order, where its inside has them; else in1, in2, ... / out1, ..."""
    from blocksim.simulink.convert import make_id
    prefix = "in" if kind == "Inport" else "out"
    names = [f"{prefix}{k + 1}" for k in range(count)]
    if block.system is not None:
        used: set[str] = {"placeholder"}
        ports = [b for b in block.system.blocks if b.type == kind]
        for b in ports:
            index = b.params.get("Port", "")
            k = int(index) - 1 if index.isdigit() else ports.index(b)
            if 0 <= k < count:
                names[k] = make_id(b.name, used)
        if len(set(names)) != count:
            names = [f"{prefix}{k + 1}" for k in range(count)]
    return names


def placeholder(ctx: BlockContext, reason: str, system: SlSystem) -> Mapped:
    block = ctx.block
    n_in, n_out = _port_counts(block, system)
    in_names = _port_names(block, "Inport", n_in)
    out_names = _port_names(block, "Outport", n_out)
    if set(in_names) & set(out_names):
        in_names = [f"in{k + 1}" for k in range(n_in)]
        out_names = [f"out{k + 1}" for k in range(n_out)]
    inner: list[Block] = []
    wires: list[Wire] = []
    what = f"Simulink {block.type if block.type != 'Reference' else block.source_block} " \
           f"'{ctx.path}'"
    label = block.type if block.type != "Reference" else block.source_block.rsplit("/", 1)[-1]
    stub = Block("placeholder", "Placeholder", {"inputs": n_in, "outputs": n_out,
                                                "stands_for": what, "reason": reason},
                 layout={"x": 200.0, "y": 40.0 + 20 * max(n_in, n_out),
                         "label": f"to build: {' '.join(label.split())}"[:200]})
    for k in range(n_in):
        port = Block(in_names[k], "Inport", {"index": k + 1},
                     layout={"x": 40.0, "y": 40.0 + 60 * k})
        inner.append(port)
        wires.append(Wire(PortRef(port.id, "y"), PortRef(stub.id, f"u{k + 1}")))
    inner.append(stub)
    for k in range(n_out):
        port = Block(out_names[k], "Outport", {"index": k + 1},
                     layout={"x": 400.0, "y": 40.0 + 60 * k})
        inner.append(port)
        wires.append(Wire(PortRef(stub.id, f"y{k + 1}"), PortRef(port.id, "u")))
    sub = ctx.block_of("Subsystem")
    sub.subsystem = Diagram(blocks=inner, wires=wires)
    mapped = Mapped([sub], placeholder=reason)
    for k in range(n_in):
        mapped.inputs[("in", k + 1)] = f"{sub.id}.{in_names[k]}"
    for k in range(n_out):
        mapped.outputs[("out", k + 1)] = f"{sub.id}.{out_names[k]}"
    mapped.inputs[("enable", 1)] = mapped.inputs[("trigger", 1)] = ""  # (dropped below)
    mapped.inputs = {k: v for k, v in mapped.inputs.items() if v}
    return mapped
