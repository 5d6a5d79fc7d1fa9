"""Build the tests' own FMUs: the C models in tests/fmi/c, compiled with the system C
compiler against fmpy's FMI headers, with a modelDescription.xml written from the specs
below, zipped into .fmu files (FMI 2.0 or 3.0, model exchange and co-simulation).

`build(model, version, folder, variant=...)` returns the .fmu path; `compiler()` is None
where no C compiler is found (the tests then skip).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import zipfile
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import quoteattr

C_DIR = Path(__file__).parent / "c"


@dataclass(frozen=True)
class Var:
    name: str
    vr: int
    type: str = "R"  # R real, I integer, B boolean
    causality: str = "local"
    variability: str = "continuous"
    initial: str | None = None
    start: float | None = None
    derivative_of: int | None = None  # vr of the state this is the derivative of
    depends: tuple[int, ...] | None = ()  # outputs: vrs of inputs (None: not given)
    size: int = 1  # FMI 3.0: an array of this many elements (start: a tuple)


MODELS: dict[str, dict] = {
    "ball": dict(
        variables=[
            Var("h", 0, causality="output", initial="calculated"),
            Var("v", 1, causality="output", initial="calculated"),
            Var("der(h)", 2, initial="calculated", derivative_of=0),
            Var("der(v)", 3, initial="calculated", derivative_of=1),
            Var("g", 4, causality="parameter", variability="fixed", initial="exact", start=9.81),
            Var("e", 5, causality="parameter", variability="tunable", initial="exact", start=0.7),
            Var("bounces", 6, "I", causality="output", variability="discrete",
                initial="calculated"),
            Var("kicked", 7, "B", causality="output", variability="discrete",
                initial="calculated"),
            Var("h0", 8, causality="parameter", variability="fixed", initial="exact", start=1.0),
            Var("max_bounces", 9, "I", causality="parameter", variability="fixed",
                initial="exact", start=1000),
            Var("kick_time", 10, causality="parameter", variability="fixed", initial="exact",
                start=-1.0),
        ],
        indicators=[0], stop=3.0, step=0.01),
    "square": dict(
        variables=[
            Var("y", 0, causality="output", variability="discrete", initial="calculated"),
            Var("on1", 1, causality="parameter", variability="fixed", initial="exact", start=1.0),
            Var("off1", 2, causality="parameter", variability="fixed", initial="exact", start=2.0),
            Var("on2", 3, causality="parameter", variability="fixed", initial="exact", start=5.0),
            Var("count", 4, "I", causality="output", variability="discrete",
                initial="calculated"),
        ],
        indicators=[], stop=10.0, step=0.1),
    "math003": dict(
        variables=[
            Var("x1", 0, causality="input", variability="discrete", start=0.0),
            Var("x2", 1, causality="input", variability="discrete", start=0.0),
            Var("x3", 2, causality="output", variability="discrete", initial="calculated",
                depends=(0, 1)),
            Var("x4", 3, causality="output", initial="calculated"),
            Var("der(x4)", 4, initial="calculated", derivative_of=3),
            Var("limit", 5, causality="parameter", variability="fixed", initial="exact",
                start=2.5),
            Var("z_up", 6, initial="calculated"),
            Var("z_down", 7, initial="calculated"),
        ],
        indicators=[6, 7], stop=10.0, step=0.1),
    "gain3": dict(  # FMI 3.0 only: array variables
        variables=[
            Var("u", 0, causality="input", start=(1.0, 2.0, 3.0), size=3),
            Var("y", 1, causality="output", initial="calculated", depends=(0,), size=3),
            Var("k", 2, causality="parameter", variability="fixed", initial="exact", start=2.0),
            Var("x", 3, initial="exact", start=(0.0, 0.0, 0.0), size=3),
            Var("der(x)", 4, initial="calculated", derivative_of=3, size=3),
        ],
        indicators=[], stop=2.0, step=0.1),
}


def compiler() -> str | None:
    for name in (os.environ.get("CC"), "cc", "gcc", "clang"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def headers() -> Path:
    import fmpy

    return Path(fmpy.__file__).parent / "c-code"


def _fmpy_functions(version: int) -> set[str]:
    """Every FMI function fmpy's classes load (an FMU must export them all)."""
    if version == 2:
        from fmpy.fmi2 import FMU2Model as Model, FMU2Slave as Slave
    else:
        from fmpy.fmi3 import FMU3Model as Model, FMU3Slave as Slave
    prefix = f"fmi{version}"
    return {n for cls in (Model, Slave) for n in dir(cls) if n.startswith(prefix)}


def _stubs(version: int, implemented: str) -> str:
    """A C file defining the FMI functions shell.c does not implement, returning Error."""
    import re

    defined = set(re.findall(r"\b(fmi%d\w+)\s*[(,]" % version, implemented))
    missing = sorted(_fmpy_functions(version) - defined)
    return "".join(f"int {name}() {{ return 3; }}\n" for name in missing)


def _xml(model: str, version: int, spec: dict, identifier: str) -> str:
    variables: list[Var] = spec["variables"]
    index = {v.vr: k + 1 for k, v in enumerate(variables)}
    token = "{8c4e810f-3df3-4a00-8276-176fa3c9f000}"
    n_ind = len(spec["indicators"])
    lines = ['<?xml version="1.0" encoding="UTF-8"?>']
    if version == 2:
        lines.append(f'<fmiModelDescription fmiVersion="2.0" modelName="{model}" guid="{token}" '
                     f'numberOfEventIndicators="{n_ind}" generationTool="blocksim tests">')
        lines.append(f'  <ModelExchange modelIdentifier="{identifier}"/>')
        lines.append(f'  <CoSimulation modelIdentifier="{identifier}" '
                     f'canHandleVariableCommunicationStepSize="true"/>')
    else:
        lines.append(f'<fmiModelDescription fmiVersion="3.0" modelName="{model}" '
                     f'instantiationToken="{token}" generationTool="blocksim tests">')
        lines.append(f'  <ModelExchange modelIdentifier="{identifier}" '
                     f'needsCompletedIntegratorStep="true"/>')
        lines.append(f'  <CoSimulation modelIdentifier="{identifier}" '
                     f'canHandleVariableCommunicationStepSize="true"/>')
    lines.append(f'  <DefaultExperiment startTime="0" stopTime="{spec["stop"]}" '
                 f'stepSize="{spec["step"]}"/>')
    lines.append("  <ModelVariables>")
    if version == 3:
        lines.append('    <Float64 name="time" valueReference="999" causality="independent" '
                     'variability="continuous"/>')
    for v in variables:
        attrs = (f'name={quoteattr(v.name)} valueReference="{v.vr}" causality="{v.causality}" '
                 f'variability="{v.variability}"')
        if v.initial:
            attrs += f' initial="{v.initial}"'
        if version == 2:
            kind = {"R": "Real", "I": "Integer", "B": "Boolean"}[v.type]
            inner = ""
            if v.start is not None:
                value = ("true" if v.start else "false") if v.type == "B" else (
                    str(int(v.start)) if v.type == "I" else repr(float(v.start)))
                inner += f' start="{value}"'
            if v.derivative_of is not None:
                inner += f' derivative="{index[v.derivative_of]}"'
            lines.append(f"    <ScalarVariable {attrs}><{kind}{inner}/></ScalarVariable>")
        else:
            kind = {"R": "Float64", "I": "Int32", "B": "Boolean"}[v.type]
            extra = ""
            if isinstance(v.start, tuple):
                extra += ' start="%s"' % " ".join(repr(float(x)) for x in v.start)
            elif v.start is not None:
                extra += ' start="%s"' % (("true" if v.start else "false") if v.type == "B"
                                          else (str(int(v.start)) if v.type == "I"
                                                else repr(float(v.start))))
            if v.derivative_of is not None:
                extra += f' derivative="{v.derivative_of}"'
            if v.size > 1:
                lines.append(f'    <{kind} {attrs}{extra}><Dimension start="{v.size}"/>'
                             f'</{kind}>')
            else:
                lines.append(f"    <{kind} {attrs}{extra}/>")
    lines.append("  </ModelVariables>")
    lines.append("  <ModelStructure>")
    outputs = [v for v in variables if v.causality == "output"]
    derivs = [v for v in variables if v.derivative_of is not None]
    initial = [v for v in variables if v.initial == "calculated" and v.causality != "local"]
    initial += derivs
    if version == 2:
        lines.append("    <Outputs>")
        for v in outputs:
            deps = ("" if v.depends is None else
                    ' dependencies="%s"' % " ".join(str(index[d]) for d in v.depends))
            lines.append(f'      <Unknown index="{index[v.vr]}"{deps}/>')
        lines.append("    </Outputs>")
        if derivs:
            lines.append("    <Derivatives>")
            lines += [f'      <Unknown index="{index[v.vr]}"/>' for v in derivs]
            lines.append("    </Derivatives>")
        lines.append("    <InitialUnknowns>")
        lines += [f'      <Unknown index="{index[v.vr]}"/>'
                  for v in sorted(initial, key=lambda v: index[v.vr])]
        lines.append("    </InitialUnknowns>")
    else:
        for v in outputs:
            deps = ("" if v.depends is None else
                    ' dependencies="%s"' % " ".join(str(d) for d in v.depends))
            lines.append(f'    <Output valueReference="{v.vr}"{deps}/>')
        lines += [f'    <ContinuousStateDerivative valueReference="{v.vr}"/>' for v in derivs]
        lines += [f'    <InitialUnknown valueReference="{v.vr}"/>'
                  for v in sorted(initial, key=lambda v: v.vr)]
        lines += [f'    <EventIndicator valueReference="{vr}"/>' for vr in spec["indicators"]]
    lines.append("  </ModelStructure>")
    lines.append("</fmiModelDescription>")
    return "\n".join(lines) + "\n"


def build(model: str, version: int, folder: Path, variant: str = "",
          defines: dict[str, str] | None = None) -> Path:
    """Compile model `model` as an FMI `version` FMU into `folder` (cached by name)."""
    import fmpy

    name = f"{model}{variant}_fmi{version}"
    target = folder / f"{name}.fmu"
    if target.exists():
        return target
    cc = compiler()
    assert cc is not None, "no C compiler (the caller skips)"
    work = folder / f"{name}_build"
    work.mkdir(parents=True, exist_ok=True)
    identifier = name
    platform = fmpy.platform_tuple if version == 3 else fmpy.platform
    binaries = work / "binaries" / platform
    binaries.mkdir(parents=True, exist_ok=True)
    stub = work / "stubs.c"
    stub.write_text(_stubs(version, (C_DIR / "shell.c").read_text()))
    flags = [f"-D{k}={v}" for k, v in (defines or {}).items()]
    library = binaries / f"{identifier}.so"
    command = [cc, "-shared", "-fPIC", "-O1", f"-DFMI_VERSION={version}",
               f"-I{headers()}", f"-I{C_DIR}", *flags, str(C_DIR / f"{model}.c"), str(stub),
               "-o", str(library), "-lm"]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"building {name} failed:\n{done.stderr}")
    (work / "modelDescription.xml").write_text(_xml(model, version, MODELS[model], identifier))
    partial = folder / f"{name}.fmu.part"
    with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.write(work / "modelDescription.xml", "modelDescription.xml")
        zf.write(library, f"binaries/{platform}/{identifier}.so")
    partial.rename(target)
    return target
