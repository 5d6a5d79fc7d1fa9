"""Algebraic loops in an imported model: Simulink solves them (Newton iterations at every
step); blocksim's compiler refuses them unless an `AlgebraicConstraint` closes them. So the
importer cuts one wire of each loop the compiler names, src -> dst, and closes it with a
constraint: z feeds dst, and the residual src - z drives the constraint, which solves
src(z) = z at every evaluation, as Simulink's loop solver does. Each cut is in the report."""
from __future__ import annotations

from blocksim.diagram.model import Block, Diagram, PortRef, Wire
from blocksim.errors import BlocksimError, CompileError
from blocksim.simulink.convert import make_id
from blocksim.simulink.report import Report

MAX_LOOPS = 20


def _level(diagram: Diagram, path: list[str]) -> Diagram | None:
    for part in path:
        block = next((b for b in diagram.blocks if b.id == part), None)
        if block is None or block.subsystem is None:
            return None
        diagram = block.subsystem
    return diagram


def _cut(diagram: Diagram, loop: tuple[tuple[str, str], ...]) -> str | None:
    """Close the loop at its last wire that is a real wire of one level; its text, or None."""
    for src, dst in reversed(loop):
        src_path, _, src_port = src.rpartition(".")
        dst_path, _, dst_port = dst.rpartition(".")
        *src_level, src_block = src_path.split("/")
        *dst_level, dst_block = dst_path.split("/")
        if src_level != dst_level:
            continue  # (through a subsystem port: not one wire)
        level = _level(diagram, src_level)
        if level is None:
            continue
        wire = next((w for w in level.wires if (w.src.block, w.src.port, w.dst.block,
                                                 w.dst.port) == (src_block, src_port,
                                                                 dst_block, dst_port)), None)
        if wire is None:
            continue
        used = {b.id for b in level.blocks}
        z = Block(make_id(f"{dst_block}_{dst_port}_loop", used), "AlgebraicConstraint",
                  {"z0": 0.0}, layout=_beside(level, dst_block, 0))
        residual = Block(make_id(f"{dst_block}_{dst_port}_residual", used), "Sum",
                         {"signs": "+-"}, layout=_beside(level, dst_block, 60))
        level.blocks += [z, residual]
        level.wires.remove(wire)
        level.wires += [Wire(PortRef(src_block, src_port), PortRef(residual.id, "u1")),
                        Wire(PortRef(z.id, "z"), PortRef(residual.id, "u2")),
                        Wire(PortRef(residual.id, "y"), PortRef(z.id, "f")),
                        Wire(PortRef(z.id, "z"), PortRef(dst_block, dst_port))]
        return f"{src} -> {dst}"
    return None


def _beside(level: Diagram, block_id: str, dy: float) -> dict | None:
    block = next((b for b in level.blocks if b.id == block_id), None)
    if block is None or not block.layout or "x" not in block.layout:
        return None
    return {"x": block.layout["x"] - 90, "y": block.layout["y"] + 70 + dy}


def close_algebraic_loops(diagram: Diagram, report: Report) -> None:
    from blocksim.compiler import compile_diagram
    unset = {name: "1" for name, value in diagram.parameters.items() if value == ""}
    for _ in range(MAX_LOOPS):
        try:
            compile_diagram(diagram, unset, diagram.simulation)
            return
        except CompileError as exc:
            if "algebraic loop" not in str(exc) or not exc.wires:
                return
            where = _cut(diagram, exc.wires)
            if where is None:
                return
            loop = " -> ".join([exc.wires[0][0], *(d for _, d in exc.wires)])
            report.warn(f"algebraic loop {loop}: closed at {where} by an AlgebraicConstraint "
                        "(solved at every evaluation, as Simulink solves the loop)")
        except BlocksimError:
            return
