"""The XML parts of an .slx package (or of a newer .mdl that wraps them as text) into an
SlModel: blockdiagram.xml with systems nested inside it (R2012b-R2019) or referenced as
simulink/systems/system_N.xml (newer), bddefaults.xml, configSet0.xml.

The parser is Python's expat; a part that declares a DTD or entities (which Simulink never
writes, and which an entity-expansion attack needs) is refused before it is parsed.
"""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

from blocksim.simulink.errors import SimulinkFileError
from blocksim.simulink.package import WORKSPACE_PARTS
from blocksim.simulink.model import (CALLBACK_NAMES, CONFIG_NAMES, SlBlock, SlConnection, SlEnd,
                                     SlModel, SlSystem, parse_position)

MAX_DEPTH = 200  # subsystems nested deeper are refused (a recursion, or a hostile file)
_END = re.compile(r"^\s*([^#]+)#(in|out|enable|trigger|ifaction|reset|state|lconn|rconn)"
                  r"(?::(\d+))?\s*$")


def parse_xml(path: Path, name: str, data: bytes) -> ET.Element:
    """One part as an element tree; one line naming the part if it is not XML."""
    head = data[:4096].lower()
    if b"<!doctype" in head or b"<!entity" in data.lower():
        raise SimulinkFileError(path, f"part '{name}' declares a DTD or entities (refused)")
    try:
        return ET.fromstring(data)
    except ET.ParseError as exc:
        raise SimulinkFileError(path, f"part '{name}' is not well-formed XML ({exc})") from None


def _params(element: ET.Element) -> dict[str, str]:
    return {p.get("Name", ""): (p.text or "") for p in element.findall("P") if p.get("Name")}


class XmlModelReader:
    """Builds an SlModel from the parts dictionary of a package."""

    def __init__(self, path: Path, parts: dict[str, bytes], fmt: str):
        self.path, self.parts, self.format = path, parts, fmt
        self.lower = {name.lower(): name for name in parts}

    def part(self, name: str) -> ET.Element | None:
        actual = self.lower.get(name.lower())
        return None if actual is None else parse_xml(self.path, actual, self.parts[actual])

    def read(self) -> SlModel:
        top = self.part("/simulink/blockdiagram.xml")
        if top is None:
            raise SimulinkFileError(self.path, "has no simulink/blockdiagram.xml part (not a "
                                               "Simulink model package)")
        model = top.find("Model")
        if model is None:
            model = top.find("Library")
        if model is None:
            model = top if top.tag in ("Model", "Library") else None
        if model is None:
            raise SimulinkFileError(self.path, "blockdiagram.xml has no <Model> element")
        props = _params(model)
        defaults = self.block_defaults(model)
        config = self.config(model)
        system_el = model.find("System")
        if system_el is None:
            raise SimulinkFileError(self.path, "the model has no root <System>")
        root = self.system(system_el, self.path.stem, 0)
        callbacks = {k: props[k] for k in CALLBACK_NAMES if props.get(k, "").strip()}
        release = self.release(model, props)
        workspace = self.workspace_code(model)
        stateflow = any(name.lower().startswith("/simulink/stateflow") for name in self.parts)
        data = next(((name, self.parts[actual]) for name, actual in self.lower.items()
                     if name.lstrip("/") in WORKSPACE_PARTS), None)
        return SlModel(self.path.stem, self.format, release, root, defaults, config, callbacks,
                       workspace, stateflow, data)

    def release(self, model: ET.Element, props: dict[str, str]) -> str:
        core = self.lower.get("/metadata/coreproperties.xml")
        if core is not None:
            match = re.search(rb"<cp:version>([^<]+)</cp:version>", self.parts[core])
            if match:
                return match.group(1).decode("utf-8", "replace")
        return props.get("Version", "")

    def block_defaults(self, model: ET.Element) -> dict[str, dict[str, str]]:
        defaults: dict[str, dict[str, str]] = {}
        holders = [model.find("BlockParameterDefaults")]
        bdd = self.part("/simulink/bddefaults.xml")
        if bdd is not None:
            holders.append(bdd.find("BlockParameterDefaults"))
        for holder in holders:
            if holder is None:
                continue
            for block in holder.findall("Block"):
                defaults.setdefault(block.get("BlockType", ""), {}).update(_params(block))
        return defaults

    def config(self, model: ET.Element) -> dict[str, str]:
        """Solver settings: the active configuration set's Simulink.SolverCC, in
        blockdiagram.xml (older) or configSet0.xml (newer)."""
        roots = [model.find("ConfigurationSet")]
        for name in sorted(self.lower):
            if re.fullmatch(r"/simulink/configset\d*\.xml", name):
                roots.append(self.part(self.lower[name]))
        found: dict[str, str] = {}
        for root in roots:
            if root is None:
                continue
            for obj in root.iter("Object"):
                if obj.get("ClassName") == "Simulink.SolverCC":
                    for key, value in _params(obj).items():
                        if key in CONFIG_NAMES:
                            found.setdefault(key, value)
            if found:
                break
        return found

    def workspace_code(self, model: ET.Element) -> str:
        """MATLAB code saved as the model workspace's data source (`<ModelWorkspace><P
        Name="WSMATLABCode">`; plain assignments only are used)."""
        holder = model.find("ModelWorkspace")
        return _params(holder).get("WSMATLABCode", "") if holder is not None else ""

    # ----- systems ---------------------------------------------------------------------
    def system(self, element: ET.Element, name: str, depth: int) -> SlSystem:
        if depth > MAX_DEPTH:
            raise SimulinkFileError(self.path, f"subsystems nested more than {MAX_DEPTH} deep")
        ref = element.get("Ref")
        if ref:
            part = self.part(f"/simulink/systems/{ref}.xml")
            if part is None:
                raise SimulinkFileError(self.path, f"subsystem '{name}' refers to a missing "
                                                   f"part systems/{ref}.xml")
            element = part
        system = SlSystem(name)
        by_sid: dict[str, str] = {}
        for block_el in element.findall("Block"):
            block = self.block(block_el, depth)
            system.blocks.append(block)
            if block.sid:
                by_sid[block.sid] = block.name
        for line in element.findall("Line"):
            self.line(line, system, by_sid)
        return system

    def block(self, element: ET.Element, depth: int) -> SlBlock:
        params = _params(element)
        counts = element.find("PortCounts")  # R2023a+: instead of <P Name="Ports">
        if counts is not None and "Ports" not in params:
            params["Ports"] = f"[{counts.get('in', '0')}, {counts.get('out', '0')}]"
        instance = element.find("InstanceData")
        if instance is not None:
            params.update(_params(instance))
        block = SlBlock(element.get("BlockType", ""), element.get("Name", ""),
                        element.get("SID", ""), params,
                        position=parse_position(params.get("Position", "")))
        mask = element.find("Mask")
        if mask is not None:
            block.mask = {k: v for k, v in _params(mask).items()}
            for el in mask.iter():
                if el.tag in ("Initialization", "Type", "Display") and el.text:
                    block.mask[f"Mask{el.tag}"] = el.text
            for parameter in mask.findall("MaskParameter"):
                value = parameter.find("Value")
                if parameter.get("Name"):
                    block.mask_values[parameter.get("Name", "")] = (
                        value.text or "" if value is not None else "")
        for key in ("MaskInitialization", "MaskType"):
            if params.get(key):
                block.mask.setdefault(key, params[key])
        inner = element.find("System")
        if inner is not None:
            block.system = self.system(inner, block.name, depth + 1)
        return block

    def line(self, element: ET.Element, system: SlSystem, by_sid: dict[str, str]) -> None:
        params = _params(element)
        src = self.end(params, "Src", by_sid)
        if src is None:
            return  # an unconnected line: nothing to wire
        self.branches(element, params, src, system, by_sid, params.get("Name", ""))

    def branches(self, element: ET.Element, params: dict[str, str], src: SlEnd,
                 system: SlSystem, by_sid: dict[str, str], name: str) -> None:
        dst = self.end(params, "Dst", by_sid)
        if dst is not None:
            system.connections.append(SlConnection(src, dst, name))
        for branch in element.findall("Branch"):
            self.branches(branch, _params(branch), src, system, by_sid, name)

    def end(self, params: dict[str, str], key: str, by_sid: dict[str, str]) -> SlEnd | None:
        text = params.get(key)
        if text:  # newer: "5#out:1"
            match = _END.match(text)
            if not match:
                return None
            sid, kind, index = match.group(1).strip(), match.group(2), int(match.group(3) or 1)
            name = by_sid.get(sid)
            return None if name is None else SlEnd(name, kind, index)
        block = params.get(f"{key}Block")  # older: SrcBlock/SrcPort by name
        port = params.get(f"{key}Port")
        if not block or not port:
            return None
        return end_by_name(block, port, "out" if key == "Src" else "in")


def end_by_name(block: str, port: str, default_kind: str) -> SlEnd:
    """An end given by block name and port ("1", "enable", "trigger", "state"...)."""
    port = port.strip().strip('"')
    if port.isdigit():
        return SlEnd(block, default_kind, int(port))
    return SlEnd(block, port.lower(), 1)


def read_xml_model(path: Path, parts: dict[str, bytes], fmt: str) -> SlModel:
    return XmlModelReader(path, parts, fmt).read()
