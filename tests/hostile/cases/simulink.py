"""Simulink models handed to `blocksim import`: a zip bomb, a member that declares 1 GB, a
member path with ../, malformed XML, entity declarations, a 1 GB text .mdl (sparse), a
truncated .mdl, and callbacks that try to run commands (`system(...)`, `eval`, `!`). The
contract: one line naming the model and exit 2 for what cannot be read; a callback is read
as assignments and never run (the marker file is never made); nothing is written over the
model."""
from __future__ import annotations

import io
import zipfile

from hostile.cases.base import BAD, DIR, MARK, Case, Corpus
from hostile.cases.signal_files import with_declared_size

BD = "simulink/blockdiagram.xml"
SYSTEM = (b'<?xml version="1.0" encoding="utf-8"?>\n<ModelInformation Version="1.0"><Model>'
          b'<P Name="InitFcn">%s</P><System><Block BlockType="Constant" Name="c" SID="1">'
          b'<P Name="Value">k</P></Block><Block BlockType="Outport" Name="y" SID="2"/>'
          b'<Line><P Name="Src">1#out:1</P><P Name="Dst">2#in:1</P></Line></System>'
          b'</Model></ModelInformation>\n')


def _zip(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, raw in members.items():
            info = zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0))  # deterministic
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, raw)
    return buf.getvalue()


def _mdl(callback: str) -> bytes:
    return (f'Model {{\n  Name "m"\n  InitFcn "{callback}"\n  System {{\n    Name "m"\n'
            '    Block {\n      BlockType Constant\n      Name "c"\n      Value "k"\n    }\n'
            '    Block {\n      BlockType Outport\n      Name "y"\n    }\n'
            '    Line {\n      SrcBlock "c"\n      SrcPort 1\n      DstBlock "y"\n'
            '      DstPort 1\n    }\n  }\n}\n').encode()


def simulink(c: Corpus) -> None:
    cat = "simulink"

    def case(name: str, model: str, content: bytes, mentions: tuple[str, ...],
             exits: tuple[int, ...] = BAD, setup: list[tuple] | None = None) -> None:
        c.add(Case(f"{cat}/{name}", cat, ["import", f"{DIR}/{model}", "--out", f"{DIR}/d.json"],
                   files={model: content} if content else {}, setup=setup or [], exits=exits,
                   mentions=(model, *mentions) if exits == BAD else (),
                   unchanged=(model,) if content else (), absent=("d.json",) if exits == BAD
                   else (), note="a Simulink model from someone else"))

    ok = _zip({BD: SYSTEM % b"k = 2;"})
    case("slx-fits", "m.slx", ok, (), exits=(0,))
    case("slx-zip-bomb", "m.slx",
         with_declared_size(_zip({BD: b" " * 4096}), BD, 60 * 2**20), ("zip bomb",))
    case("slx-member-declares-1GB", "m.slx", with_declared_size(_zip({BD: SYSTEM % b""}), BD,
                                                                2**30), ("1,073,741,824",))
    case("slx-member-path-dotdot", "m.slx", _zip({"../../../evil.xml": b"<a/>", BD: SYSTEM % b""}),
         ("outside the package",))
    case("slx-member-absolute-path", "m.slx", _zip({"/etc/evil.xml": b"<a/>"}),
         ("outside the package",))
    case("slx-malformed-xml", "m.slx", _zip({BD: b"<ModelInformation><Model><System>"}),
         ("not well-formed",))
    case("slx-billion-laughs", "m.slx",
         _zip({BD: b'<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaaaaaaaa">'
                   b'<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><l>&b;</l>'}), ("DTD",))
    case("slx-no-blockdiagram", "m.slx", _zip({"[Content_Types].xml": b"<Types/>"}),
         ("blockdiagram.xml",))
    case("slx-not-a-zip", "m.slx", b"PK\x03\x04 not really", ("zip",))
    case("slx-empty", "m.slx", b"", ("zip",), setup=[("sparse", "m.slx", 0)])
    case("mdl-1GB-sparse", "m.mdl", b"", ("larger than",), setup=[("sparse", "m.mdl", 2**30)])
    case("mdl-truncated", "m.mdl", b'Model {\n  Name "m"\n  System {\n', ("not closed",))
    case("mdl-not-simulink", "m.mdl", b"hello world\n", ("Model",))
    case("model-is-a-directory", "m.slx", b"", ("directory",), setup=[("mkdir", "m.slx")])
    for name, code in (("system", f"system('touch {MARK}'); k = 1"),
                       ("bang", f"!touch {MARK}\\nk = 1"),
                       ("eval", f"eval('system(''touch {MARK}'')'); k = 1"),
                       ("unix-in-value", f"k = unix('touch {MARK}')")):
        case(f"mdl-callback-{name}", "m.mdl", _mdl(code), (), exits=(0,))
    case("slx-callback-rm-rf", "m.slx", _zip({BD: SYSTEM % b"system('rm -rf ~'); k = 3"}), (),
         exits=(0,))
