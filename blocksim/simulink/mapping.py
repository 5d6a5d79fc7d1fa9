"""What a block mapper gets (BlockContext: the block's parameters with their defaults,
translated values) and what it returns (Mapped: blocksim blocks and where Simulink's ports
went). The mappers themselves are in `mappers` and `mappers_more`."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from blocksim.diagram.model import Block, PortRef, Wire
from blocksim.errors import ExpressionError
from blocksim.simulink.mexpr import Translation, Untranslatable, eval_literal, translate
from blocksim.simulink.model import SlBlock, SlSystem

if TYPE_CHECKING:
    from blocksim.simulink.convert import Converter

PortKey = tuple[str, int]  # ("in", 1), ("out", 2), ("enable", 1), ("state", 1) ...


class Unmappable(Exception):
    """The block cannot be mapped; the message says why (it becomes a placeholder)."""


@dataclass
class Mapped:
    """The blocksim side of one Simulink block."""

    blocks: list[Block]
    inputs: dict[PortKey, str] = field(default_factory=dict)    # -> "blockid.port"
    outputs: dict[PortKey, str] = field(default_factory=dict)
    wires: list[Wire] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    placeholder: str = ""   # why, for a placeholder

    @property
    def main(self) -> Block:
        return self.blocks[0]


def wire(src: str, dst: str) -> Wire:
    return Wire(PortRef.parse(src), PortRef.parse(dst))


class BlockContext:
    """One Simulink block seen by its mapper."""

    def __init__(self, converter: "Converter", block: SlBlock, block_id: str, path: str,
                 defaults: dict[str, str], scope: set[str], system: "SlSystem | None" = None):
        self.converter, self.block, self.id, self.path = converter, block, block_id, path
        self.defaults, self.scope = defaults, scope
        self.system = system  # the system holding the block (signal names of its lines)
        self.notes: list[str] = []

    @property
    def type(self) -> str:
        return self.block.type

    def p(self, name: str, fallback: str = "") -> str:
        """A parameter as saved, else the file's default, else Simulink's built-in one."""
        value = self.block.params.get(name)
        if value is None:
            value = self.defaults.get(name, fallback)
        return value.strip()

    def has(self, name: str) -> bool:
        return name in self.block.params or name in self.defaults

    def on(self, name: str) -> bool:
        return self.p(name).lower() in ("on", "1", "true")

    def note(self, text: str) -> None:
        self.notes.append(text)

    def translation(self, name: str, text: str | None = None) -> Translation:
        return translate(self.p(name) if text is None else text)

    def value(self, name: str, text: str | None = None, what: str | None = None) -> Any:
        """A numeric parameter for blocksim: a literal number or list where Simulink's text
        has no variables, else the translated expression over diagram parameters. An
        expression that does not translate becomes a diagram parameter to set."""
        source = self.p(name) if text is None else text
        try:
            t = translate(source)
        except Untranslatable as exc:
            return self.converter.ask(self, what or name, source, str(exc))
        return self.resolved(t, what or name, source)

    def resolved(self, t: Translation, what: str, source: str) -> Any:
        unknown = {n for n in t.names if n not in self.scope}
        for name in sorted(unknown):
            self.converter.unresolved(name, f"{self.path} ({what} = `{source}`)")
        if not t.names:
            try:
                return literal(t.text)
            except ExpressionError as exc:  # 1+2i, 1/0, [1 2; 3]: no value blocksim takes
                return self.converter.ask(self, what, source, str(exc))
        return t.text

    def int_value(self, name: str, text: str | None = None) -> int:
        """A structural integer (a count of ports): it must be a literal."""
        source = self.p(name) if text is None else text
        try:
            value = eval_literal(translate(source).text)
        except Untranslatable as exc:
            raise Unmappable(f"{name} = `{source}` must be a number here ({exc})") from None
        if not float(value).is_integer():
            raise Unmappable(f"{name} = `{source}` is not a whole number")
        return int(value)

    def sample_time(self, name: str = "SampleTime") -> Any:
        """A Simulink sample time ("0.1", "[0.1 0.05]", "-1") for blocksim."""
        value = self.value(name)
        if isinstance(value, list) and len(value) == 2 and value[1] == 0:
            return value[0]
        return value

    def block_of(self, type_name: str, params: dict[str, Any] | None = None,
                 suffix: str = "") -> Block:
        """A blocksim block for this Simulink block: the main one (no suffix) carries the
        layout; helpers get '<id>_<suffix>' and a position beside it."""
        block_id = self.id if not suffix else self.converter.helper_id(self.id, suffix)
        layout = self.converter.layout_of(self.block, helper=bool(suffix))
        return Block(block_id, type_name, dict(params or {}), layout=layout)


def literal(text: str) -> Any:
    """A translated text without names as a JSON value: a number or a (nested) list."""
    from blocksim.expressions.language import evaluate
    import numpy as np
    value = evaluate(text)
    if not np.all(np.isfinite(value)):
        return text  # inf is a word in blocksim's expressions, not a JSON number
    if isinstance(value, np.ndarray):
        return value.tolist()
    return _clean(float(value))


def _clean(value: float) -> Any:
    return int(value) if value.is_integer() and abs(value) < 2**53 else value


Mapper = Callable[[BlockContext], Mapped]
