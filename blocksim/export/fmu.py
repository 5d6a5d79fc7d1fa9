"""FMU export: a diagram as a Functional Mock-up Unit (FMI 2.0 or 3.0, model exchange or
co-simulation) with its C sources and a binary for this platform.

The model's generated functions become C (`blocksim.ccode`), with blocksim's event
semantics (`runtime/bs_core.c`) and, for co-simulation, its DOPRI5 stepper and event
location (`runtime/bs_cs.c`); `runtime/bs_fmi2.c` / `bs_fmi3.c` are the FMI interfaces.
The FMI headers compiled against are the Modelica Association's (2-clause BSD), as the
fmpy package ships them; they go into the FMU's sources with their licence text.

Variables: the diagram's top-level Inport blocks are inputs (an Inport becomes a Constant
whose value the input sets), its logged signals (Output and Scope blocks, and top-level
Outport blocks) are outputs under their names, its numeric parameters are parameters
(`export.params`), and every continuous state is a state with its derivative.
"""
from __future__ import annotations

import copy
import hashlib
import logging
import os
import re
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from blocksim.ccode import cc
from blocksim.ccode.model_source import RUNTIME, ExportError, ModelC, model_source
from blocksim.compiler.compiled import CompiledModel
from blocksim.diagram.model import Block, Diagram
from blocksim.engine import history
from blocksim.export import params as param_map
from blocksim.export.description import Variables, model_description

log = logging.getLogger(__name__)

INPUT_PREFIX = "__fmu_input_"
_IDENT = re.compile(r"[^A-Za-z0-9_]")


@dataclass(frozen=True)
class Exported:
    """What export_fmu made."""

    path: Path
    fmi: int
    kind: str
    model_identifier: str
    variables: Variables


def fmi_headers() -> Path:
    """The FMI 2.0 / 3.0 headers shipped by fmpy (ExportError if fmpy is missing)."""
    try:
        import fmpy
    except ImportError:
        raise ExportError("FMU export needs the FMI headers that fmpy ships: pip install fmpy"
                          ) from None
    folder = Path(fmpy.__file__).parent / "c-code"
    if not (folder / "fmi2Functions.h").exists() or not (folder / "fmi3Functions.h").exists():
        raise ExportError(f"fmpy at {folder.parent} has no FMI headers (c-code/)")
    return folder


def prepare(diagram: Diagram) -> tuple[Diagram, list[str], list[str]]:
    """The diagram with top-level Inports as Constants reading a parameter each (the FMU's
    inputs) and top-level Outports as Output blocks; (diagram, input ids, output ids)."""
    d = copy.deepcopy(diagram)
    inputs, outputs = [], []
    for i, blk in enumerate(d.blocks):
        if blk.type == "Inport":
            name = INPUT_PREFIX + blk.id
            d.parameters[name] = 0.0
            d.blocks[i] = Block(blk.id, "Constant", {"value": name}, blk.layout)
            inputs.append(blk.id)
        elif blk.type == "Outport":
            d.blocks[i] = Block(blk.id, "Output", {}, blk.layout)
            outputs.append(blk.id)
    return d, inputs, outputs  # (an Outport's input port is `u`, as an Output's)


def model_identifier(diagram: Diagram) -> str:
    stem = diagram.path.stem if diagram.path else "model"
    ident = _IDENT.sub("_", stem)
    return ident if ident[:1].isalpha() else "m_" + ident


def platform_folder(fmi: int) -> str:
    machine = {"amd64": "x86_64", "x86_64": "x86_64", "arm64": "aarch64",
               "aarch64": "aarch64"}.get(os.uname().machine.lower() if hasattr(os, "uname")
                                         else "x86_64", "x86_64")
    system = ("windows" if sys.platform == "win32" else "darwin" if sys.platform == "darwin"
              else "linux")
    if fmi == 3:
        return f"{machine}-{system}"
    bits = "64" if sys.maxsize > 2 ** 32 else "32"
    return {"windows": "win", "darwin": "darwin", "linux": "linux"}[system] + bits


def _c_array(kind: str, name: str, values) -> str:
    values = list(values)
    body = ", ".join(str(v) for v in values) if values else "0"
    return f"static const {kind} {name}[{max(len(values), 1)}] = {{{body}}};"


def _c_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") + '"'


def config_source(model: CompiledModel, c: ModelC, pm: param_map.ParamMap,
                  variables: Variables, guid: str, kind: str) -> str:
    """The model's tables for the runtime: sizes, parameters, rates, value references."""
    from blocksim.ccode.translate import _float

    settings = model.settings
    rates = model.rates
    clock = model.clock
    if clock is not None and (clock.p >= 2 ** 53 or clock.q >= 2 ** 53):
        raise ExportError(f"{model.source}: the sample times' common clock ({clock.p}/{clock.q}"
                          f" s) is too fine for exported C")
    stop_kind = c.kinds.index("stop") if "stop" in c.kinds else -1
    lines = [
        f"#define BS_GUID {_c_string(guid)}",
        f"#define BS_IS_CS {1 if kind == 'cs' else 0}",
        f"#define BS_START {_float(settings.start)}",
        f"#define BS_STOP {_float(settings.stop)}",
        f"#define BS_RTOL {_float(settings.rtol)}",
        f"#define BS_ATOL {_float(settings.atol)}",
        f"#define BS_MAX_STEP {_float(min(settings.max_step, history.max_step(model)))}",
        f"#define BS_NPAR {len(pm.names)}",
        "static const double bs_par0[%d] = {%s};" % (
            max(len(pm.values), 1), ", ".join(_float(v) for v in pm.values) or "0.0"),
        f"#define BS_NPMAP {len(pm.entries)}",
        _c_array("int", "bs_pmap_kind", [e[0] for e in pm.entries]),
        _c_array("int", "bs_pmap_index", [e[1] for e in pm.entries]),
        _c_array("int", "bs_pmap_par", [e[2] for e in pm.entries]),
        "static const double bs_pmap_coef[%d] = {%s};" % (
            max(len(pm.entries), 1), ", ".join(_float(e[3]) for e in pm.entries) or "0.0"),
        f"#define BS_NR {len(rates)}",
        f"#define BS_CLOCK_P {clock.p if clock else 1}LL",
        f"#define BS_CLOCK_Q {clock.q if clock else 1}LL",
        _c_array("long long", "bs_rate_offset", [f"{r.offset_ticks}LL" for r in rates]),
        _c_array("long long", "bs_rate_period", [f"{r.period_ticks}LL" for r in rates]),
        f"#define BS_NTRIG {len(model.trigger_slots)}",
        _c_array("int", "bs_trig", list(model.trigger_slots)),
        f"#define BS_STOP_KIND {stop_kind}",
        f"#define BS_HAS_UPDATE {0 if 'update' in model.empty else 1}",
        f"#define BS_HAS_AFTER {0 if 'after_event' in model.empty else 1}",
        f"#define BS_HAS_NEXT_TIME {1 if model.time_events else 0}",
        f"#define BS_NBLOCKS {len(model.block_ids)}",
        "static const char *const bs_block_ids[%d] = {%s};" % (
            max(len(model.block_ids), 1),
            ", ".join(_c_string(b) for b in model.block_ids) or '""'),
        "static const double bs_state_atol[%d] = {%s};" % (
            max(model.n_states, 1), ", ".join(
                _float(a) for a in _state_atol(model)) or "0.0"),
        f"#define BS_VR_PAR {variables.vr_par}",
        f"#define BS_VR_OUT {variables.vr_out}",
        f"#define BS_NOUT {len(variables.outputs)}",
        _c_array("int", "bs_out_sig", [o.signal for o in variables.outputs]),
        f"#define BS_VR_IN {variables.vr_in}",
        f"#define BS_NIN {len(variables.inputs)}",
        _c_array("int", "bs_in_par", [i.parameter for i in variables.inputs]),
        f"#define BS_VR_X {variables.vr_x}",
        f"#define BS_VR_DX {variables.vr_dx}",
        f"#define BS_VR_G {variables.vr_g}",
    ]
    return "/* Generated by blocksim: the model's tables for the runtime. */\n" + \
        "\n".join(lines) + "\n"


def _state_atol(model: CompiledModel) -> list[float]:
    import numpy as np

    atol = model.state_atol(model.settings.atol)
    return list(np.broadcast_to(np.asarray(atol, dtype=float), (model.n_states,)))


def fmu_main(fmi: int, kind: str) -> str:
    parts = ['#include "model.c"', '#include "config.c"', "#include <stdio.h>",
             '#include "bs_core.c"']
    if kind == "cs":
        parts.insert(0, "#define BS_CS 1")
        parts.append('#include "bs_cs.c"')
    parts.append(f'#include "bs_fmi{fmi}.c"')
    return "/* Generated by blocksim: one translation unit for the FMU. */\n" + \
        "\n".join(parts) + "\n"


def export_fmu(diagram: Diagram, out: str | os.PathLike, fmi: int = 2, kind: str = "me",
               params: dict | None = None) -> Exported:
    """Write the diagram as an FMU to `out` (ExportError, one line naming the block or
    setting, if it cannot be)."""
    if fmi not in (2, 3):
        raise ExportError(f"--fmi must be 2 or 3, not {fmi}")
    if kind not in ("me", "cs"):
        raise ExportError(f"--kind must be me or cs, not {kind}")
    out = Path(out)
    if out.suffix.lower() != ".fmu":
        raise ExportError(f"{out}: an FMU's file name ends in .fmu")
    if not out.parent.exists():
        raise ExportError(f"{out}: folder {out.parent} does not exist")
    if kind == "cs" and diagram.simulation.solver != "dopri5":
        from blocksim.engine.notices import notice

        notice(f"{diagram.source}: the co-simulation FMU integrates with dopri5 (solver "
               f"'{diagram.simulation.solver}' is not in the exported C)")
    prepared, inputs, _ = prepare(diagram)
    from blocksim.compiler.compiled import compile_diagram

    model = compile_diagram(prepared, params or {}, prepared.simulation)
    _refuse_unsupported(model)
    c = model_source(model)
    values = dict(prepared.parameters)
    values.update({name: _number(value) for name, value in (params or {}).items()})
    pm = param_map.measure(model, values)
    missing = [i for i in inputs if INPUT_PREFIX + i not in pm.names]
    if missing:
        raise ExportError(f"{diagram.source}: block '{missing[0]}' (Inport): its value does "
                          f"not enter the model linearly, so it cannot be an FMU input")
    ident = model_identifier(diagram)
    text_hash = hashlib.sha256((c.text + repr(pm) + f"{fmi}{kind}").encode()).hexdigest()
    guid = "{%s-%s-%s-%s-%s}" % (text_hash[:8], text_hash[8:12], text_hash[12:16],
                                  text_hash[16:20], text_hash[20:32])
    variables = Variables.of(model, pm, inputs, INPUT_PREFIX)
    xml = model_description(model, diagram, pm, variables, ident, guid, fmi, kind)
    config = config_source(model, c, pm, variables, guid, kind)
    headers = fmi_headers()
    sources = {"model.c": c.text, "config.c": config, "fmu.c": fmu_main(fmi, kind)}
    runtime = ("bs_model.h", "bs_core.c") + (("bs_cs.c",) if kind == "cs" else ()) + (
        f"bs_fmi{fmi}.c",) + (("bs_history.c",) if model.history else ())
    for name in runtime:
        sources[name] = (RUNTIME / name).read_text(encoding="utf-8")
    prefix = "fmi2" if fmi == 2 else "fmi3"
    for header in sorted(headers.glob(f"{prefix}*.h")):
        sources[header.name] = header.read_text(encoding="utf-8")
    binary_name = ident + cc.SUFFIX
    with tempfile.TemporaryDirectory(prefix="blocksim-fmu-") as tmp:
        folder = Path(tmp)
        binary = folder / binary_name
        cc.build({name: text for name, text in sources.items()}, binary,
                 defines=(), includes=(), main="fmu.c")
        tmp_fmu = out.with_name(f".{out.name}.{os.getpid()}.tmp")
        try:
            with zipfile.ZipFile(tmp_fmu, "w", zipfile.ZIP_DEFLATED) as z:
                z.writestr("modelDescription.xml", xml)
                z.write(binary, f"binaries/{platform_folder(fmi)}/{binary_name}")
                for name, text in sorted(sources.items()):
                    z.writestr(f"sources/{name}", text)
                z.writestr("sources/buildDescription.xml" if fmi == 3 else "sources/BUILD.txt",
                           _build_note(ident, fmi))
                z.writestr("documentation/LICENSE_FMI_HEADERS.txt", _HEADER_LICENCE)
            os.replace(tmp_fmu, out)
        finally:
            if tmp_fmu.exists():
                tmp_fmu.unlink()
    log.info("%s: FMU %s (FMI %d, %s) written", diagram.source, out, fmi, kind)
    return Exported(out, fmi, kind, ident, variables)


def _number(value):
    """A --set value as a number where it is one (else as given: not measured)."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return value


def _refuse_unsupported(model: CompiledModel) -> None:
    """What the runtime does not carry, refused naming the block."""
    if model.after_run:
        raise ExportError(f"{model.source}: the model writes files after a run (ToFile), "
                          f"which an FMU does not do")


def _build_note(ident: str, fmi: int) -> str:
    if fmi == 3:
        return ('<?xml version="1.0" encoding="UTF-8"?>\n<fmiBuildDescription fmiVersion="3.0">\n'
                f'  <BuildConfiguration modelIdentifier="{ident}">\n'
                '    <SourceFileSet language="C99">\n'
                '      <SourceFile name="fmu.c"/>\n'
                '    </SourceFileSet>\n'
                '  </BuildConfiguration>\n</fmiBuildDescription>\n')
    return (f"Build: cc -O2 -shared -fPIC -std=c99 fmu.c -o {ident}.so -lm\n"
            "(fmu.c includes the other files.)\n")


_HEADER_LICENCE = """The FMI header files in sources/ (fmi2*.h / fmi3*.h) are
Copyright (C) 2008-2011 MODELISAR consortium, 2012-2023 Modelica Association Project "FMI",
licensed under the 2-Clause BSD License (https://opensource.org/licenses/BSD-2-Clause);
their full licence text is at the top of each file. They are used as shipped by fmpy.
The other sources were generated by blocksim from the exported diagram.
"""
