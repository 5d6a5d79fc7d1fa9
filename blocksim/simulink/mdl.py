"""The classic text .mdl format (Simulink 1.x to R2019, still readable today) into an SlModel.

The file is nested sections, `Name {` ... `}`, of `Key value` lines; a value is a bare word,
a bracketed array (which may run over several lines) or a quoted string with C escapes
(`\\n` in a block name) that continues with further quoted strings on the next lines.
Lines name their blocks: SrcBlock/SrcPort, DstBlock/DstPort, and Branch sections that
fan out (nested to any depth).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from blocksim.simulink.errors import SimulinkFileError
from blocksim.simulink.model import (CALLBACK_NAMES, CONFIG_NAMES, SlBlock, SlConnection, SlModel,
                                     SlSystem, parse_position)
from blocksim.simulink.xmlparts import end_by_name

MAX_DEPTH = 400
_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "'": "'", "r": "\r"}


@dataclass
class Section:
    """`Name { ... }`: its items in file order, a value being text or a nested Section."""

    name: str
    items: list[tuple[str, "str | Section"]] = field(default_factory=list)

    def get(self, key: str, default: str = "") -> str:
        for k, v in self.items:
            if k == key and isinstance(v, str):
                return v
        return default

    def values(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for k, v in self.items:
            if isinstance(v, str):
                out.setdefault(k, v)
        return out

    def sections(self, name: str | None = None) -> list["Section"]:
        return [v for k, v in self.items if isinstance(v, Section) and (name is None or k == name)]


def _unquote(text: str) -> str:
    """A quoted string's content with C escapes resolved."""
    out, i = [], 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            out.append(_ESCAPES.get(text[i + 1], text[i + 1]))
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def _string_parts(text: str) -> list[str] | None:
    """The quoted strings on one line ('"a" "b"' -> ['a', 'b']), or None if it is not made of
    quoted strings only."""
    parts, i, n = [], 0, len(text)
    while i < n:
        while i < n and text[i] in " \t":
            i += 1
        if i >= n:
            break
        if text[i] != '"':
            return None
        j = i + 1
        while j < n and text[j] != '"':
            j += 2 if text[j] == "\\" else 1
        if j >= n:
            return None
        parts.append(_unquote(text[i + 1:j]))
        i = j + 1
    return parts


def parse_sections(path: Path, text: str) -> list[Section]:
    """The top-level sections of a classic .mdl (Model or Library, Stateflow, ...)."""
    lines = text.splitlines()
    top = Section("")
    stack = [top]
    i, n = 0, len(lines)
    while i < n:
        raw = lines[i].strip()
        i += 1
        if not raw or raw.startswith("#"):
            continue
        if raw == "}":
            if len(stack) == 1:
                raise SimulinkFileError(path, f"line {i}: '}}' closes nothing")
            stack.pop()
            continue
        if raw.endswith("{") and '"' not in raw:
            name = raw[:-1].strip()
            section = Section(name)
            stack[-1].items.append((name, section))
            stack.append(section)
            if len(stack) > MAX_DEPTH:
                raise SimulinkFileError(path, f"line {i}: sections nested more than "
                                              f"{MAX_DEPTH} deep")
            continue
        key, rest = (raw.split(None, 1) + [""])[:2]
        rest = rest.strip()
        if rest.startswith('"'):
            parts = _string_parts(rest)
            if parts is None:
                raise SimulinkFileError(path, f"line {i}: unterminated string for '{key}'")
            while i < n and lines[i].lstrip().startswith('"'):  # continued on the next lines
                more = _string_parts(lines[i].strip())
                if more is None:
                    break
                parts.extend(more)
                i += 1
            value = "".join(parts)
        elif rest.startswith("[") and rest.count("[") > rest.count("]"):
            chunk = [rest]
            depth = rest.count("[") - rest.count("]")
            while i < n and depth > 0:
                chunk.append(lines[i].strip())
                depth += lines[i].count("[") - lines[i].count("]")
                i += 1
            value = " ".join(chunk)
        else:
            value = rest
        stack[-1].items.append((key, value))
    if len(stack) != 1:
        raise SimulinkFileError(path, f"section '{stack[-1].name}' is not closed before the "
                                      "end of the file")
    return top.sections()


class MdlModelReader:
    def __init__(self, path: Path, text: str):
        self.path, self.text = path, text

    def read(self) -> SlModel:
        sections = parse_sections(self.path, self.text)
        model = next((s for s in sections if s.name in ("Model", "Library")), None)
        if model is None:
            raise SimulinkFileError(self.path, "has no 'Model {' section (not a Simulink .mdl)")
        props = model.values()
        defaults: dict[str, dict[str, str]] = {}
        for holder in model.sections("BlockParameterDefaults"):
            for block in holder.sections("Block"):
                defaults.setdefault(block.get("BlockType"), {}).update(block.values())
        config = self.config(model)
        systems = model.sections("System")
        if not systems:
            raise SimulinkFileError(self.path, "the model has no root 'System {' section")
        root = self.system(systems[0], props.get("Name", self.path.stem), 0)
        callbacks = {k: props[k] for k in CALLBACK_NAMES if props.get(k, "").strip()}
        stateflow = any(s.name == "Stateflow" for s in sections)
        return SlModel(props.get("Name", self.path.stem), "mdl", props.get("Version", ""),
                       root, defaults, config, callbacks, "", stateflow)

    def config(self, model: Section) -> dict[str, str]:
        """Solver settings: in Simulink.SolverCC (7.x on) or at the model level (6.x)."""
        found: dict[str, str] = {}

        def walk(section: Section, depth: int) -> None:
            if depth > 20 or section.name in ("System", "BlockParameterDefaults"):
                return
            if section.name == "Simulink.SolverCC":
                for key, value in section.values().items():
                    if key in CONFIG_NAMES:
                        found.setdefault(key, value)
            for sub in section.sections():
                walk(sub, depth + 1)

        walk(model, 0)
        if not found:
            found = {k: v for k, v in model.values().items() if k in CONFIG_NAMES}
        return found

    def system(self, section: Section, name: str, depth: int) -> SlSystem:
        if depth > MAX_DEPTH:
            raise SimulinkFileError(self.path, f"subsystems nested more than {MAX_DEPTH} deep")
        system = SlSystem(name)
        for block_section in section.sections("Block"):
            system.blocks.append(self.block(block_section, depth))
        for line in section.sections("Line"):
            self.line(line, line.values(), system, None)
        return system

    def block(self, section: Section, depth: int) -> SlBlock:
        params = section.values()
        for instance in section.sections("InstanceData"):
            params.update(instance.values())
        block = SlBlock(params.get("BlockType", ""), params.get("Name", ""), params.get("SID", ""),
                        params, position=parse_position(params.get("Position", "")))
        for key in ("MaskInitialization", "MaskType", "MaskDisplay"):
            if params.get(key):
                block.mask[key] = params[key]
        values = params.get("MaskValueString", "").split("|")
        for item in params.get("MaskVariables", "").split(";"):  # "Kp=@1;Ki=@2;" or "&1"
            name, _, ref = item.partition("=")
            index = ref.lstrip("@&")
            if name and index.isdigit() and 0 < int(index) <= len(values):
                block.mask_values[name.strip()] = values[int(index) - 1]
        for mask in section.sections("Object"):  # 7.x+: Simulink.Mask objects
            if mask.get("$ClassName") == "Simulink.Mask":
                if mask.get("Initialization"):
                    block.mask["MaskInitialization"] = mask.get("Initialization")
                if mask.get("Type"):
                    block.mask["MaskType"] = mask.get("Type")
                for param in mask.sections("Object") + [x for a in mask.sections("Array")
                                                        for x in a.sections("Object")]:
                    if param.get("Name"):
                        block.mask_values[param.get("Name")] = param.get("Value")
        inner = section.sections("System")
        if inner:
            block.system = self.system(inner[0], block.name, depth + 1)
        return block

    def line(self, section: Section, values: dict[str, str], system: SlSystem,
             src: tuple[str, str, str] | None) -> None:
        if src is None:
            if not values.get("SrcBlock") or not values.get("SrcPort"):
                return
            src = (values["SrcBlock"], values["SrcPort"], values.get("Name", ""))
        if values.get("DstBlock") and values.get("DstPort"):
            system.connections.append(SlConnection(
                end_by_name(src[0], src[1], "out"),
                end_by_name(values["DstBlock"], values["DstPort"], "in"), src[2]))
        for branch in section.sections("Branch"):
            self.line(branch, branch.values(), system, src)


def read_mdl_model(path: Path, text: str) -> SlModel:
    return MdlModelReader(path, text).read()
