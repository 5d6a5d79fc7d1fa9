"""The FMU's variables and its modelDescription.xml (FMI 2.0 or 3.0).

Value references: 0 is the time (FMI 3.0's independent variable), then the parameters
(one per measured diagram parameter, `export.params`, inputs' included), the outputs
(every element of every logged signal), the inputs (top-level Inports), the continuous
states, their derivatives, and (FMI 3.0) the event indicators. The C runtime reads the
same layout from config.c.
"""
from __future__ import annotations

import datetime
from dataclasses import dataclass
from xml.sax.saxutils import quoteattr

from blocksim.compiler.compiled import CompiledModel
from blocksim.diagram.model import Diagram
from blocksim.export.params import ParamMap


@dataclass(frozen=True)
class Output:
    name: str
    vr: int
    signal: int  # index in the model's signals


@dataclass(frozen=True)
class Input:
    name: str
    vr: int
    parameter: int  # index in the exported parameters (a Constant's value)


@dataclass(frozen=True)
class Variables:
    vr_par: int
    vr_out: int
    vr_in: int
    vr_x: int
    vr_dx: int
    vr_g: int
    parameters: tuple[tuple[str, int, float, bool], ...]  # name, vr, value, tunable
    outputs: tuple[Output, ...]
    inputs: tuple[Input, ...]
    states: tuple[tuple[str, int, float], ...]  # name, vr, start
    n_zc: int

    @classmethod
    def of(cls, model: CompiledModel, pm: ParamMap, inputs: list[str],
           input_prefix: str) -> "Variables":
        vr_par = 1
        vr_out = vr_par + len(pm.names)
        outputs = []
        for sig in model.logged:
            for k, index in enumerate(sig.indices):
                name = sig.name if len(sig.indices) == 1 else f"{sig.name}[{k}]"
                outputs.append(Output(name, vr_out + len(outputs), index))
        vr_in = vr_out + len(outputs)
        ins = tuple(Input(block, vr_in + k, pm.names.index(input_prefix + block))
                    for k, block in enumerate(inputs))
        vr_x = vr_in + len(ins)
        vr_dx = vr_x + model.n_states
        vr_g = vr_dx + model.n_states
        params = tuple((name, vr_par + p, pm.values[p], pm.tunable[p])
                       for p, name in enumerate(pm.names) if not name.startswith(input_prefix))
        states, seen = [], {}
        for j in range(model.n_states):
            block = model.block_ids[model.state_owner[j]]
            k = seen[block] = seen.get(block, -1) + 1
            states.append((f"{block}.x[{k}]", vr_x + j, float(model.x0[j])))
        return cls(vr_par, vr_out, vr_in, vr_x, vr_dx, vr_g, params, tuple(outputs), ins,
                   tuple(states), model.n_zc)


def _num(value: float) -> str:
    return repr(float(value))


def model_description(model: CompiledModel, diagram: Diagram, pm: ParamMap, v: Variables,
                      ident: str, guid: str, fmi: int, kind: str) -> str:
    from blocksim import __version__ as version

    s = model.settings
    name = quoteattr(ident)
    description = diagram.description or f"blocksim diagram {ident}"
    if pm.fixed:
        description += " (fixed at export: " + ", ".join(pm.fixed) + ")"
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    experiment = (f'  <DefaultExperiment startTime="{_num(s.start)}" stopTime="{_num(s.stop)}" '
                  f'tolerance="{_num(s.rtol)}"/>')
    if fmi == 2:
        return _fmi2(model, v, ident, guid, kind, name, description, now, version, experiment)
    return _fmi3(model, v, ident, guid, kind, name, description, now, version, experiment)


def _fmi2(model, v: Variables, ident, guid, kind, name, description, now, version,
          experiment) -> str:
    rows, index = [], {}

    def add(vr: int, text: str) -> None:
        rows.append(text)
        index[vr] = len(rows)

    for pname, vr, value, tunable in v.parameters:
        add(vr, f'    <ScalarVariable name={quoteattr(pname)} valueReference="{vr}" '
                f'causality="parameter" variability="{"tunable" if tunable else "fixed"}" '
                f'initial="exact"><Real start="{_num(value)}"/></ScalarVariable>')
    for out in v.outputs:
        add(out.vr, f'    <ScalarVariable name={quoteattr(out.name)} valueReference="{out.vr}" '
                    f'causality="output" variability="continuous" initial="calculated">'
                    f'<Real/></ScalarVariable>')
    for inp in v.inputs:
        add(inp.vr, f'    <ScalarVariable name={quoteattr(inp.name)} valueReference="{inp.vr}" '
                    f'causality="input" variability="continuous"><Real start="0.0"/>'
                    f'</ScalarVariable>')
    for sname, vr, start in v.states:
        add(vr, f'    <ScalarVariable name={quoteattr(sname)} valueReference="{vr}" '
                f'causality="local" variability="continuous" initial="exact">'
                f'<Real start="{_num(start)}"/></ScalarVariable>')
    for j, (sname, vr, _) in enumerate(v.states):
        add(v.vr_dx + j, f'    <ScalarVariable name={quoteattr("der(" + sname + ")")} '
                         f'valueReference="{v.vr_dx + j}" causality="local" '
                         f'variability="continuous" initial="calculated">'
                         f'<Real derivative="{index[vr]}"/></ScalarVariable>')
    outputs = [index[o.vr] for o in v.outputs]
    derivs = [index[v.vr_dx + j] for j in range(len(v.states))]
    initial = sorted(outputs + derivs)
    if kind == "me":
        interface = (f'  <ModelExchange modelIdentifier="{ident}" canGetAndSetFMUstate="true" '
                     f'canSerializeFMUstate="true" canNotUseMemoryManagementFunctions="true">\n'
                     f'    <SourceFiles><File name="fmu.c"/></SourceFiles>\n  </ModelExchange>')
    else:
        interface = (f'  <CoSimulation modelIdentifier="{ident}" '
                     f'canHandleVariableCommunicationStepSize="true" canGetAndSetFMUstate="true" '
                     f'canSerializeFMUstate="true" canNotUseMemoryManagementFunctions="true">\n'
                     f'    <SourceFiles><File name="fmu.c"/></SourceFiles>\n  </CoSimulation>')

    def unknowns(tag: str, items: list[int]) -> str:
        if not items:
            return ""
        body = "\n".join(f'      <Unknown index="{i}"/>' for i in items)
        return f"    <{tag}>\n{body}\n    </{tag}>\n"

    return (f'<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<fmiModelDescription fmiVersion="2.0" modelName={name} guid="{guid}" '
            f'description={quoteattr(description)} generationTool="blocksim {version}" '
            f'generationDateAndTime="{now}" variableNamingConvention="flat" '
            f'numberOfEventIndicators="{model.n_zc if kind == "me" else 0}">\n'
            f'{interface}\n{experiment}\n  <ModelVariables>\n' + "\n".join(rows) +
            "\n  </ModelVariables>\n  <ModelStructure>\n"
            + unknowns("Outputs", outputs) + unknowns("Derivatives", derivs)
            + unknowns("InitialUnknowns", initial)
            + "  </ModelStructure>\n</fmiModelDescription>\n")


def _fmi3(model, v: Variables, ident, guid, kind, name, description, now, version,
          experiment) -> str:
    rows = ['    <Float64 name="time" valueReference="0" causality="independent" '
            'variability="continuous"/>']
    for pname, vr, value, tunable in v.parameters:
        rows.append(f'    <Float64 name={quoteattr(pname)} valueReference="{vr}" '
                    f'causality="parameter" variability="{"tunable" if tunable else "fixed"}" '
                    f'start="{_num(value)}"/>')
    for out in v.outputs:
        rows.append(f'    <Float64 name={quoteattr(out.name)} valueReference="{out.vr}" '
                    f'causality="output" variability="continuous"/>')
    for inp in v.inputs:
        rows.append(f'    <Float64 name={quoteattr(inp.name)} valueReference="{inp.vr}" '
                    f'causality="input" variability="continuous" start="0.0"/>')
    me = kind == "me"
    for sname, vr, start in v.states:
        rows.append(f'    <Float64 name={quoteattr(sname)} valueReference="{vr}" '
                    f'causality="local" variability="continuous" initial="exact" '
                    f'start="{_num(start)}"/>')
    for j, (sname, vr, _) in enumerate(v.states):
        rows.append(f'    <Float64 name={quoteattr("der(" + sname + ")")} '
                    f'valueReference="{v.vr_dx + j}" causality="local" variability="continuous" '
                    f'derivative="{vr}"/>')
    if me:
        for i in range(v.n_zc):
            rows.append(f'    <Float64 name="zero_crossing[{i}]" valueReference="{v.vr_g + i}" '
                        f'causality="local" variability="continuous"/>')
    structure = [f'    <Output valueReference="{o.vr}"/>' for o in v.outputs]
    if me:
        structure += [f'    <ContinuousStateDerivative valueReference="{v.vr_dx + j}"/>'
                      for j in range(len(v.states))]
    initial = [o.vr for o in v.outputs] + ([v.vr_dx + j for j in range(len(v.states))]
                                           if me else [])
    structure += [f'    <InitialUnknown valueReference="{vr}"/>' for vr in initial]
    if me:
        structure += [f'    <EventIndicator valueReference="{v.vr_g + i}"/>'
                      for i in range(v.n_zc)]
    if me:
        # An input history (transport delay) is recorded at the completed steps.
        completed = ' needsCompletedIntegratorStep="true"' if model.history else ""
        interface = (f'  <ModelExchange modelIdentifier="{ident}" canGetAndSetFMUState="true" '
                     f'canSerializeFMUState="true"{completed}/>')
    else:
        interface = (f'  <CoSimulation modelIdentifier="{ident}" '
                     f'canHandleVariableCommunicationStepSize="true" canGetAndSetFMUState="true" '
                     f'canSerializeFMUState="true"/>')
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<fmiModelDescription fmiVersion="3.0" modelName={name} '
            f'instantiationToken="{guid}" description={quoteattr(description)} '
            f'generationTool="blocksim {version}" generationDateAndTime="{now}" '
            f'variableNamingConvention="flat">\n'
            f'{interface}\n{experiment}\n  <ModelVariables>\n' + "\n".join(rows) +
            "\n  </ModelVariables>\n  <ModelStructure>\n" + "\n".join(structure) +
            ("\n" if structure else "") + "  </ModelStructure>\n</fmiModelDescription>\n")
