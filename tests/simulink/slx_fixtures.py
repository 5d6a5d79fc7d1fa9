"""Small Simulink models written for the tests, in the four forms Simulink saves: an .slx
with its systems inside blockdiagram.xml (R2016b-R2019b), an .slx with
simulink/systems/system_N.xml parts and bddefaults.xml (R2020a on), a classic text .mdl, and
a text .mdl that wraps the XML parts (__MWOPC_PART_BEGIN__). A model is a small spec:

    Model(blocks=[B("Step", "Step", 1, {"Time": "0.5"}, (30, 40, 60, 70)), ...],
          lines=[L(1, "out:1", (2, "in:1"), (3, "in:2"))], config={...}, callbacks={...})
"""
from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass, field
from xml.sax.saxutils import escape


@dataclass
class B:
    type: str
    name: str
    sid: int
    params: dict[str, str] = field(default_factory=dict)
    pos: tuple[int, int, int, int] = (0, 0, 30, 30)
    system: "Model | None" = None
    instance: dict[str, str] = field(default_factory=dict)  # a library link's InstanceData


@dataclass
class L:
    src: int
    port: str
    dsts: tuple[tuple[int, str], ...]

    def __init__(self, src: int, port: str, *dsts: tuple[int, str]):
        self.src, self.port, self.dsts = src, port, dsts


@dataclass
class Model:
    blocks: list[B]
    lines: list[L]
    config: dict[str, str] = field(default_factory=dict)
    callbacks: dict[str, str] = field(default_factory=dict)
    defaults: dict[str, dict[str, str]] = field(default_factory=dict)


def _p(name: str, value: str, indent: str) -> str:
    return f'{indent}<P Name="{name}">{escape(value)}</P>\n'


def _xml_system(model: Model, split: bool, parts: dict[str, str], indent: str = "  ") -> str:
    out = []
    for b in model.blocks:
        out.append(f'{indent}<Block BlockType="{b.type}" Name="{escape(b.name, {chr(34): "&quot;"})}" '
                   f'SID="{b.sid}">\n')
        out.append(_p("Position", "[%d, %d, %d, %d]" % b.pos, indent + "  "))
        for k, v in b.params.items():
            out.append(_p(k, v, indent + "  "))
        if b.instance:
            out.append(f"{indent}  <InstanceData>\n")
            out += [_p(k, v, indent + "    ") for k, v in b.instance.items()]
            out.append(f"{indent}  </InstanceData>\n")
        if b.system is not None:
            if split:
                parts[f"simulink/systems/system_{b.sid}.xml"] = (
                    '<?xml version="1.0" encoding="utf-8"?>\n<System>\n'
                    + _xml_system(b.system, split, parts) + "</System>\n")
                out.append(f'{indent}  <System Ref="system_{b.sid}"/>\n')
            else:
                out.append(f"{indent}  <System>\n" + _xml_system(b.system, split, parts,
                                                                 indent + "    ")
                           + f"{indent}  </System>\n")
        out.append(f"{indent}</Block>\n")
    for line in model.lines:
        out.append(f"{indent}<Line>\n" + _p("Src", f"{line.src}#{line.port}", indent + "  "))
        if len(line.dsts) == 1:
            sid, port = line.dsts[0]
            out.append(_p("Dst", f"{sid}#{port}", indent + "  "))
        else:
            for sid, port in line.dsts:
                out.append(f"{indent}  <Branch>\n" + _p("Dst", f"{sid}#{port}", indent + "    ")
                           + f"{indent}  </Branch>\n")
        out.append(f"{indent}</Line>\n")
    return "".join(out)


def _defaults_xml(model: Model) -> str:
    out = ["  <BlockParameterDefaults>\n"]
    for block_type, params in model.defaults.items():
        out.append(f'    <Block BlockType="{block_type}">\n')
        out += [_p(k, v, "      ") for k, v in params.items()]
        out.append("    </Block>\n")
    return "".join(out) + "  </BlockParameterDefaults>\n"


def _config_xml(model: Model) -> str:
    body = "".join(_p(k, v, "      ") for k, v in model.config.items())
    return ('<?xml version="1.0" encoding="utf-8"?>\n<ConfigSet>\n  <Object ClassName='
            '"Simulink.ConfigSet">\n    <Object PropName="Components" ClassName='
            f'"Simulink.SolverCC">\n{body}    </Object>\n  </Object>\n</ConfigSet>\n')


def xml_parts(model: Model, split: bool) -> dict[str, str]:
    """The XML parts of the model's package (R2020a+ layout when `split`)."""
    parts: dict[str, str] = {}
    callbacks = "".join(_p(k, v, "    ") for k, v in model.callbacks.items())
    head = '<?xml version="1.0" encoding="utf-8"?>\n<ModelInformation Version="1.0">\n  <Model>\n'
    if split:
        parts["simulink/systems/system_root.xml"] = (
            '<?xml version="1.0" encoding="utf-8"?>\n<System>\n'
            + _xml_system(model, True, parts) + "</System>\n")
        parts["simulink/blockdiagram.xml"] = (head + callbacks
                                              + '    <System Ref="system_root"/>\n'
                                              + "  </Model>\n</ModelInformation>\n")
        parts["simulink/bddefaults.xml"] = ('<?xml version="1.0" encoding="utf-8"?>\n'
                                            "<BlockDiagramDefaults>\n" + _defaults_xml(model)
                                            + "</BlockDiagramDefaults>\n")
        parts["metadata/coreProperties.xml"] = ("<cp:coreProperties><cp:version>R2020a"
                                                "</cp:version></cp:coreProperties>")
    else:
        parts["simulink/blockdiagram.xml"] = (head + callbacks + _defaults_xml(model)
                                              + "    <System>\n"
                                              + _xml_system(model, False, parts, "      ")
                                              + "    </System>\n  </Model>\n"
                                              "</ModelInformation>\n")
        parts["metadata/coreProperties.xml"] = ("<cp:coreProperties><cp:version>R2017a"
                                                "</cp:version></cp:coreProperties>")
    parts["simulink/configSet0.xml"] = _config_xml(model)
    return parts


def slx_bytes(model: Model, split: bool = True, extra: dict[str, bytes] | None = None) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        for name, text in xml_parts(model, split).items():
            archive.writestr(name, text)
        for name, raw in (extra or {}).items():
            archive.writestr(name, raw)
    return buf.getvalue()


def _q(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _mdl_system(model: Model, name: str, indent: str) -> str:
    by_sid = {b.sid: b.name for b in model.blocks}
    out = [f"{indent}System {{\n", f"{indent}  Name\t\t{_q(name)}\n"]
    for b in model.blocks:
        out.append(f"{indent}  Block {{\n{indent}    BlockType\t\t{b.type}\n"
                   f"{indent}    Name\t\t{_q(b.name)}\n"
                   f"{indent}    Position\t\t[%d, %d, %d, %d]\n" % b.pos)
        for k, v in {**b.params, **b.instance}.items():
            out.append(f"{indent}    {k}\t\t{_q(v)}\n")
        if b.system is not None:
            out.append(_mdl_system(b.system, b.name, indent + "    "))
        out.append(f"{indent}  }}\n")
    for line in model.lines:
        out.append(f"{indent}  Line {{\n{indent}    SrcBlock\t\t{_q(by_sid[line.src])}\n"
                   f"{indent}    SrcPort\t\t{line.port.split(':')[-1]}\n")
        for sid, port in line.dsts:
            dst_port = port.split(":")[-1] if port.startswith("in:") else port
            if len(line.dsts) > 1:
                out.append(f"{indent}    Branch {{\n")
            out.append(f"{indent}    DstBlock\t\t{_q(by_sid[sid])}\n"
                       f"{indent}    DstPort\t\t{dst_port}\n")
            if len(line.dsts) > 1:
                out.append(f"{indent}    }}\n")
        out.append(f"{indent}  }}\n")
    return "".join(out) + f"{indent}}}\n"


def mdl_text(model: Model, name: str = "m") -> str:
    """A classic .mdl (the 6.x form: solver settings at the model level)."""
    out = ["Model {\n", f"  Name\t\t\t{_q(name)}\n", "  Version\t\t6.3\n"]
    for k, v in {**model.config, **model.callbacks}.items():
        key = "Solver" if k == "SolverName" else k
        out.append(f"  {key}\t\t{_q(v)}\n")
    out.append("  BlockParameterDefaults {\n")
    for block_type, params in model.defaults.items():
        out.append(f"    Block {{\n      BlockType\t\t{block_type}\n")
        out += [f"      {k}\t\t{_q(v)}\n" for k, v in params.items()]
        out.append("    }\n")
    out.append("  }\n")
    out.append(_mdl_system(model, name, "  "))
    return "".join(out) + "}\n"


def wrapped_mdl_text(model: Model) -> str:
    """A newer text .mdl: a stub Model section, then the .slx parts as text."""
    out = ["# MathWorks OPC Text Package\n", "Model {\n  Version 24.2\n}\n",
           "__MWOPC_PACKAGE_BEGIN__ R2024b\n"]
    for name, text in xml_parts(model, True).items():
        out.append(f"__MWOPC_PART_BEGIN__ /{name}\n{text.rstrip()}\n")
    out.append("__MWOPC_PACKAGE_END__\n")
    return "".join(out)


def write_all(model: Model, folder, stem: str) -> dict[str, object]:
    """The model in all four forms under `folder`: {form: path}."""
    from pathlib import Path
    folder = Path(folder)
    paths = {"slx-split": folder / f"{stem}_split.slx", "slx-inline": folder / f"{stem}_inline.slx",
             "mdl": folder / f"{stem}_classic.mdl", "mdl-xml": folder / f"{stem}_wrapped.mdl"}
    paths["slx-split"].write_bytes(slx_bytes(model, True))
    paths["slx-inline"].write_bytes(slx_bytes(model, False))
    paths["mdl"].write_text(mdl_text(model, f"{stem}_classic"))
    paths["mdl-xml"].write_text(wrapped_mdl_text(model))
    return paths
