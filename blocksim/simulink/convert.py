"""An SlModel into a blocksim Diagram: each system's blocks through their mappers,
connections onto blocksim ports, subsystems (plain, enabled, triggered) with their port
blocks, layout from Simulink's positions; what cannot be mapped becomes a placeholder
subsystem with its ports kept (`placeholder`)."""
from __future__ import annotations

import keyword
import re
from typing import Any

from blocksim.diagram.model import Block, Diagram, PortRef, Wire
from blocksim.errors import ExpressionError
from blocksim.simulink.defaults import BUILTIN, REFERENCE_DEFAULTS
from blocksim.simulink.mappers import BUILTIN_MAPPERS, one_to_one
from blocksim.simulink.mappers_actions import ACTION_MAPPERS
from blocksim.simulink.mappers_links import BLOCK_MAPPERS, LINK_MAPPERS, SKIPPED_LINKS
from blocksim.simulink.mappers_more import MORE_MAPPERS, REFERENCE_MAPPERS
from blocksim.simulink.mapping import BlockContext, Mapped, Unmappable
from blocksim.simulink.mexpr import Untranslatable, translate
from blocksim.simulink.model import SlBlock, SlModel, SlSystem
from blocksim.simulink.placeholder import placeholder, unmappable_reason
from blocksim.simulink.report import Report
from blocksim.simulink.workspace import Workspace, read_assignments

MAPPERS = {**BUILTIN_MAPPERS, **MORE_MAPPERS, **BLOCK_MAPPERS, **ACTION_MAPPERS}
REFERENCES = {**REFERENCE_MAPPERS, **LINK_MAPPERS}
SKIPPED = {"GotoTagVisibility": "declares where a scoped Goto tag is seen; blocksim's scoped "
           "tags reach the Goto's level and below",
           "Terminator": "ends an unused signal; blocksim needs none",
           "Ground": "feeds 0 to an input; a Constant 0 is added where an input is unconnected",
           "Note": "", "Annotation": "", "DocBlock": "documentation only",
           "DashboardScope": "a dashboard display: no signal ports (log the signal with a "
           "Scope)", "DisplayBlock": "a dashboard display: no signal ports"}
PORTS_INSIDE = ("EnablePort", "TriggerPort", "ActionPort")  # (made by the subsystem block)
SCALE = 1.5  # Simulink pixels -> editor units (its blocks are drawn larger)


def make_id(name: str, used: set[str]) -> str:
    """A blocksim id for a Simulink name ("Transfer\\nFcn" -> Transfer_Fcn), unique in its
    level."""
    base = re.sub(r"\W+", "_", name, flags=re.ASCII).strip("_") or "block"
    if base[0].isdigit():
        base = "b_" + base
    if keyword.iskeyword(base):
        base += "_"
    base = base[:60]
    candidate, k = base, 2
    while candidate in used:
        candidate, k = f"{base}_{k}", k + 1
    used.add(candidate)
    return candidate


class Converter:
    """Walks the model; collects the report as it goes."""

    derivative_tau = 1e-4
    pid_unfiltered_n = 1e4

    def __init__(self, model: SlModel, workspace: Workspace, report: Report):
        self.model, self.workspace, self.report = model, workspace, report
        self.asked: dict[str, str] = {}            # diagram parameter -> why
        self.unknown: dict[str, list[str]] = {}    # variable -> where used
        self.used_ids: list[set[str]] = []
        self.stiff_reasons: list[str] = []         # mapped blocks that make a model stiff
        self.mapped: dict[int, dict[str, Mapped]] = {}  # by id(SlSystem): block name -> Mapped
        self.goto_tags: dict[str, int] = {}        # tag -> Goto blocks with it, in the model
        self._count_gotos(model.root)

    def _count_gotos(self, system: SlSystem) -> None:
        for block in system.blocks:
            if block.type == "Goto":
                tag = block.params.get("GotoTag", BUILTIN["Goto"]["GotoTag"])
                self.goto_tags[tag] = self.goto_tags.get(tag, 0) + 1
            if block.system is not None:
                self._count_gotos(block.system)

    # ----- services for mappers ---------------------------------------------------------
    def unresolved(self, name: str, where: str) -> None:
        self.unknown.setdefault(name, []).append(where)

    def ask(self, ctx: BlockContext, what: str, source: str, why: str) -> str:
        """A value that does not translate: a diagram parameter for the user to set."""
        name = f"{ctx.id}_{re.sub(r'[^A-Za-z0-9_]', '_', what)}"
        self.asked[name] = f"{ctx.path}: {what} = `{source}` ({why})"
        ctx.note(f"{what} = `{source}` is not translated ({why}): parameter '{name}' to set")
        return name

    def helper_id(self, block_id: str, suffix: str) -> str:
        return make_id(f"{block_id}_{suffix}", self.used_ids[-1])

    def layout_of(self, block: SlBlock, helper: bool = False) -> dict[str, Any] | None:
        if block.position is None:
            return None
        left, top, right, bottom = block.position
        layout: dict[str, Any] = {"x": left * SCALE, "y": top * SCALE}
        if helper:
            layout = {"x": left * SCALE - 60, "y": bottom * SCALE + 15}
            return layout
        # BlockRotation (R2012b on: clockwise degrees) or Orientation (older: down is a
        # quarter turn clockwise, left is flipped)
        orientation = block.params.get("Orientation", "right").lower()
        rotation = {"up": 270, "down": 90}.get(orientation, 0)
        saved = block.params.get("BlockRotation", "").strip()
        if saved in ("0", "90", "180", "270"):
            rotation = int(saved)
        if rotation:
            layout["rotation"] = rotation
        if orientation == "left" or block.params.get("BlockMirror", "off") == "on":
            layout["flip"] = True
        if right > left and bottom > top:  # Simulink's box is as drawn; blocksim's unrotated
            width, height = (right - left) * SCALE, (bottom - top) * SCALE
            if rotation in (90, 270):
                width, height = height, width
            layout["width"], layout["height"] = width, height
        label = " ".join(block.name.split())
        layout["label"] = label[:200]
        return layout

    # ----- the walk ---------------------------------------------------------------------
    def diagram(self) -> Diagram:
        diagram = Diagram()
        blocks, wires = self.system(self.model.root, "", set(self.workspace.values), root=True)
        diagram.blocks, diagram.wires = blocks, wires
        return diagram

    def system(self, system: SlSystem, path: str, scope: set[str], root: bool = False,
               reserved: tuple[str, ...] = ()) -> tuple[list[Block], list[Wire]]:
        self.used_ids.append(set(reserved))  # (an enabled subsystem's port is 'enable')
        try:
            return self._system(system, path, scope, root)
        finally:
            self.used_ids.pop()

    def _system(self, system: SlSystem, path: str, scope: set[str],
                root: bool) -> tuple[list[Block], list[Wire]]:
        mapped: dict[str, Mapped] = {}
        self.mapped[id(system)] = mapped  # (the subsystem block reads its port blocks here)
        # To Workspace blocks are logged under their MATLAB variable's name: theirs first,
        # so a block that happens to have that name gets another id, not the variable
        logged_ids = {sl.name: make_id(sl.params["VariableName"], self.used_ids[-1])
                      for sl in system.blocks if sl.type == "ToWorkspace"
                      and sl.params.get("VariableName", "").strip()
                      and sl.params.get("Commented", "off").lower() == "off"}
        blocks: list[Block] = []
        wires: list[Wire] = []
        for sl in system.blocks:
            where = f"{path}/{' '.join(sl.name.split())}" if path else " ".join(sl.name.split())
            if sl.type == "Scope" and sl.params.get("Floating", "off") == "on":
                self.report.add(where, sl.type, "skipped", "", "a floating scope: no inputs")
                continue
            if sl.type in SKIPPED or (sl.type in PORTS_INSIDE and not root):
                if sl.type not in ("Note", "Annotation", *PORTS_INSIDE):
                    self.report.add(where, sl.type, "skipped", "", SKIPPED[sl.type])
                continue
            commented = sl.params.get("Commented", "off").lower()
            if commented in ("on", "through"):
                self.report.add(where, _shown_type(sl), "skipped", "",
                                "commented out in the model (Simulink ignores it)"
                                if commented == "on" else "commented through: not mapped, "
                                "its input is not passed on")
                continue
            block_id = logged_ids.get(sl.name) or make_id(sl.name, self.used_ids[-1])
            result = self.map_block(sl, block_id, where, scope, root, system)
            if not result.blocks:
                continue
            mapped[sl.name] = result
            blocks.extend(result.blocks)
            wires.extend(result.wires)
        driven: set[str] = set()
        for conn in system.connections:
            src_map, dst_map = mapped.get(conn.src.block), mapped.get(conn.dst.block)
            if src_map is None or dst_map is None:
                continue  # a skipped block (Terminator, Ground...)
            src = src_map.outputs.get((conn.src.kind, conn.src.index))
            dst = dst_map.inputs.get((conn.dst.kind, conn.dst.index))
            if src is None or dst is None:
                side = "source" if src is None else "destination"
                end = conn.src if src is None else conn.dst
                self.report.warn(f"{path or '(root)'}: a line's {side} "
                                 f"'{' '.join(end.block.split())}' port {end.kind}:{end.index} "
                                 "has no blocksim counterpart; the line was not drawn")
                continue
            if dst in driven:
                continue
            driven.add(dst)
            label = " ".join(conn.name.split())[:200]  # the signal's name, shown on the wire
            wires.append(Wire(PortRef.parse(src), PortRef.parse(dst), name=label))
        for result in mapped.values():
            for wire_ in result.wires:
                driven.add(str(wire_.dst))
        for name, result in mapped.items():
            for key, dst in sorted(result.inputs.items()):
                if dst not in driven:
                    const = Block(self.helper_id(result.main.id, "unconnected"), "Constant",
                                  {"value": 0}, layout=self._beside(result.main))
                    blocks.append(const)
                    wires.append(Wire(PortRef(const.id, "y"), PortRef.parse(dst)))
                    driven.add(dst)
                    self.report.note_on(result.main.id, path, f"input {key[0]}:{key[1]} was "
                                        "unconnected: a Constant 0 feeds it (Simulink's value)")
        return blocks, wires

    @staticmethod
    def _beside(block: Block) -> dict[str, Any] | None:
        if not block.layout:
            return None
        return {"x": block.layout["x"] - 80, "y": block.layout["y"]}

    def map_block(self, sl: SlBlock, block_id: str, where: str, scope: set[str], root: bool,
                  system: SlSystem) -> Mapped:
        defaults = {**BUILTIN.get(sl.type, {}), **self.model.defaults.get(sl.type, {})}
        if sl.type == "Reference":
            defaults = {**REFERENCE_DEFAULTS.get(sl.source_block, {})}
            if sl.source_block in SKIPPED_LINKS:
                self.report.add(where, _shown_type(sl), "skipped", "", SKIPPED_LINKS[sl.source_block])
                return Mapped([])
        ctx = BlockContext(self, sl, block_id, where, defaults, scope, system)
        reason = unmappable_reason(sl, self.model)
        try:
            if reason:
                raise Unmappable(reason)
            result = self.dispatch(ctx, root, scope)
        except Unmappable as exc:
            result = placeholder(ctx, str(exc), system)
            self.report.add(where, _shown_type(sl), "placeholder", result.main.id, str(exc))
            return result
        result.notes = ctx.notes + result.notes
        status = "note" if result.notes else "exact"
        self.report.add(where, _shown_type(sl), status, f"{result.main.type}",
                        "; ".join(result.notes), block_id=result.main.id)
        return result

    def dispatch(self, ctx: BlockContext, root: bool, scope: set[str]) -> Mapped:
        sl = ctx.block
        if sl.type == "Reference":
            mapper = REFERENCES.get(sl.source_block)
            if mapper is None:
                raise Unmappable(f"library block '{sl.source_block}' is not mapped")
            return mapper(ctx)
        if sl.type == "SubSystem":
            return self.subsystem(ctx, scope)
        if sl.type == "Inport":
            return self.inport(ctx, root)
        if sl.type == "Outport":
            return self.outport(ctx, root)
        mapper = MAPPERS.get(sl.type)
        if mapper is None:
            raise Unmappable(f"block type '{sl.type}' is not mapped")
        return mapper(ctx)

    def inport(self, ctx: BlockContext, root: bool) -> Mapped:
        if root:
            ctx.note("a root Inport has no external input in blocksim: a Constant 0 (what "
                     "Simulink feeds without input data)")
            return one_to_one(ctx, "Constant", {"value": 0}, ins=())
        index = ctx.int_value("Port")
        return one_to_one(ctx, "Inport", {"index": index}, ins=())

    def outport(self, ctx: BlockContext, root: bool) -> Mapped:
        if root:
            return one_to_one(ctx, "Output", {}, outs=())
        params: dict[str, Any] = {"index": ctx.int_value("Port")}
        initial = ctx.p("InitialOutput")
        if initial and initial != "[]":
            params["initial"] = ctx.value("InitialOutput")
        return one_to_one(ctx, "Outport", params, outs=())

    def subsystem(self, ctx: BlockContext, scope: set[str]) -> Mapped:
        sl = ctx.block
        inner = sl.system or SlSystem(sl.name)
        kinds = {b.type for b in inner.blocks}
        if len(kinds & {"ActionPort", "EnablePort", "TriggerPort"}) > 1:
            raise Unmappable("a subsystem with two of enable, trigger and action ports")
        params: dict[str, Any] = {}
        type_name = "Subsystem"
        extra: dict[tuple[str, int], str] = {}
        if kinds & {"EnablePort", "ActionPort"}:
            port = next(b for b in inner.blocks if b.type in ("EnablePort", "ActionPort"))
            type_name = "EnabledSubsystem"
            held = port.params.get("StatesWhenEnabling" if port.type == "EnablePort"
                                   else "InitializeStates", "held").lower()
            params["states_when_enabling"] = "reset" if held == "reset" else "held"
            outs = {b.params.get("OutputWhenDisabled", "held").lower() for b in inner.blocks
                    if b.type == "Outport"}
            params["outputs_when_disabled"] = "reset" if outs == {"reset"} else "held"
            if len(outs) > 1:
                ctx.note("Outports differ in OutputWhenDisabled: all hold")
            extra[("enable" if port.type == "EnablePort" else "ifaction", 1)] = "enable"
            if port.type == "ActionPort":
                ctx.note("an action subsystem: enabled while its If/Switch Case branch is taken")
        if "TriggerPort" in kinds:
            port = next(b for b in inner.blocks if b.type == "TriggerPort")
            trig = port.params.get("TriggerType", "rising").lower()
            if trig not in ("rising", "falling", "either"):
                raise Unmappable(f"a '{trig}' triggered subsystem")
            type_name = "TriggeredSubsystem"
            params["edge"] = trig
            extra[("trigger", 1)] = "trigger"
        mask_params = self.mask_parameters(ctx, scope)
        inner_scope = scope | set(mask_params)
        blocks, wires = self.system(inner, ctx.path, inner_scope,
                                    reserved=tuple(extra.values()))
        sub = Diagram(blocks=blocks, wires=wires, parameters=mask_params)
        block = ctx.block_of(type_name, params)
        block.subsystem = sub
        mapped = Mapped([block])
        inner_mapped = self.mapped.pop(id(inner), {})
        for sl_b in inner.blocks:
            port = inner_mapped.get(sl_b.name)
            if sl_b.type not in ("Inport", "Outport") or port is None or \
                    port.main.type not in ("Inport", "Outport"):
                continue  # (a port block that could not be mapped has no port outside)
            key = ("in" if sl_b.type == "Inport" else "out", int(port.main.params["index"]))
            (mapped.inputs if key[0] == "in" else mapped.outputs)[key] = \
                f"{block.id}.{port.main.id}"
        for key, port in extra.items():
            mapped.inputs[key] = f"{block.id}.{port}"
        return mapped

    def mask_parameters(self, ctx: BlockContext, scope: set[str]) -> dict[str, Any]:
        params: dict[str, Any] = {}
        for name, source in ctx.block.mask_values.items():
            if not re.fullmatch(r"[A-Za-z_]\w*", name):
                continue
            try:
                t = translate(source)
            except Untranslatable as exc:
                params[name] = ""
                self.asked[f"{ctx.id}/{name}"] = f"{ctx.path}: mask parameter {name} = " \
                                                  f"`{source}` ({exc})"
                continue
            for var in t.names - scope - set(params):
                self.unresolved(var, f"{ctx.path} (mask {name} = `{source}`)")
            from blocksim.simulink.mapping import literal
            try:
                params[name] = literal(t.text) if not t.names else t.text
            except ExpressionError as exc:
                params[name] = ""
                self.asked[f"{ctx.id}/{name}"] = f"{ctx.path}: mask parameter {name} = " \
                                                  f"`{source}` ({exc})"
        code = (ctx.block.mask.get("MaskInitialization") or "").strip()
        if code:  # plain assignments only (others made the block a placeholder)
            init = Workspace()
            read_assignments(code, "mask initialization", init)
            for name, value in init.values.items():
                if isinstance(value, str):
                    from blocksim.expressions.language import names_in
                    for var in names_in(value) - scope - set(params):
                        self.unresolved(var, f"{ctx.path} (mask initialization {name} = "
                                             f"`{value}`)")
                params[name] = value
            ctx.note(f"mask initialization taken as parameters: {', '.join(init.values)}")
        return params


def _shown_type(sl: SlBlock) -> str:
    if sl.type == "Reference" and sl.source_block:
        return sl.source_block.rsplit("/", 1)[-1]
    if sl.type == "SubSystem" and sl.mask.get("MaskType"):
        return f"SubSystem ({sl.mask['MaskType']})"
    return sl.type
