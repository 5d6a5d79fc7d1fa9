"""What an .fmu file declares, read without running any of its code.

The archive is read once (a regular file of bounded size: never a FIFO or a device) and
its SHA-256 taken from those bytes, so what is trusted, what is described and what is
later unpacked and run are the same bytes (`FmuFile.data`). The modelDescription.xml is
parsed and validated by fmpy; the variables become an `FmuInfo` with blocksim's port
names.

Port names: a variable's FMI name may be any string ("der(x)", "body.v[2]", "a b"). The
block's port is the name with every run of characters other than letters, digits and "_"
replaced by one "_", leading and trailing "_" removed, "v_" put before a leading digit
("v" for nothing left); a name already taken (two variables that give the same name)
gets "_2", "_3", ... in the order of the model description. So "h" stays "h",
"der(h)" is "der_h", "body.v[2]" is "body_v_2".
"""
from __future__ import annotations

import hashlib
import io
import logging
import os
import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from blocksim.errors import shown
from blocksim.files.safe import read_regular_file, why_unreadable
from blocksim.fmi import FmuError, require_fmpy

log = logging.getLogger(__name__)

MAX_FMU_BYTES = 1 << 30  # 1 GiB: FMUs with large resources exist; beyond that, not an FMU
MAX_XML_BYTES = 64 << 20  # a modelDescription.xml larger than this is not one a tool wrote

# FMI types read and written as numbers (floats in blocksim): FMI 2.0 and 3.0 names.
FLOAT_TYPES = ("Real", "Float64", "Float32")
INTEGER_TYPES = ("Integer", "Enumeration", "Int8", "UInt8", "Int16", "UInt16", "Int32",
                 "UInt32", "Int64", "UInt64")
BOOLEAN_TYPES = ("Boolean",)
NUMERIC_TYPES = FLOAT_TYPES + INTEGER_TYPES + BOOLEAN_TYPES
INTERFACES = ("model_exchange", "co_simulation")

_NOT_NAME = re.compile(r"[^A-Za-z0-9_]+")


def port_name(name: str) -> str:
    """The port of a variable named `name` (the module's rule, before de-duplication)."""
    text = _NOT_NAME.sub("_", name).strip("_")
    if not text:
        return "v"
    return f"v_{text}" if text[0].isdigit() else text


@dataclass(frozen=True)
class Variable:
    """One variable of an FMU, as blocksim uses it: a scalar, or an FMI 3.0 array whose
    elements (row-major, as FMI orders them) make a signal of `size` elements."""

    name: str  # the FMI name
    port: str  # the port or parameter name in blocksim (module docstring)
    vr: int  # value reference
    type: str  # FMI type name (Real, Float64, Integer, Int32, Boolean, ...)
    causality: str
    variability: str
    start: float | None
    unit: str = ""
    description: str = ""
    shape: tuple[int, ...] = ()  # () for a scalar
    starts: tuple[float, ...] = ()  # an array's start values, one per element (or none)

    @property
    def size(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    def start_values(self) -> list[float]:
        """One start value per element (0 where none is given)."""
        if self.starts and len(self.starts) == self.size:
            return list(self.starts)
        return [self.start if self.start is not None else 0.0] * self.size

    @property
    def kind(self) -> str:
        """'float', 'integer' or 'boolean': how its value is read and written."""
        if self.type in FLOAT_TYPES:
            return "float"
        return "boolean" if self.type in BOOLEAN_TYPES else "integer"

    @property
    def continuous(self) -> bool:
        return self.variability == "continuous"


@dataclass(frozen=True)
class FmuInfo:
    """What an FMU declares: version, interfaces, variables, sizes and default experiment."""

    path: Path
    digest: str  # SHA-256 of the archive's bytes
    fmi_version: int  # 2 or 3
    model_name: str
    guid: str
    description: str
    generation_tool: str
    me_identifier: str | None  # the model-exchange modelIdentifier (None: not offered)
    cs_identifier: str | None
    inputs: tuple[Variable, ...]
    outputs: tuple[Variable, ...]
    parameters: tuple[Variable, ...]  # numeric parameters that may be set before a run
    states: tuple[Variable, ...]  # the continuous states, in order
    n_states: int
    n_indicators: int
    start_time: float | None
    stop_time: float | None
    tolerance: float | None
    step_size: float | None
    needs_completed_step: bool  # model exchange: completedIntegratorStep must be called
    can_vary_step: bool  # co-simulation: canHandleVariableCommunicationStepSize
    platforms: tuple[str, ...]  # binaries/<platform> folders with a shared library
    skipped: tuple[str, ...]  # inputs/outputs blocksim does not connect (arrays, strings)
    # output port -> the input ports it depends on directly (None: every input)
    dependencies: dict[str, tuple[str, ...] | None] = field(default_factory=dict)

    @property
    def interfaces(self) -> tuple[str, ...]:
        """What it offers, model exchange first (the block's default)."""
        return tuple(name for name, ident in zip(INTERFACES, (self.me_identifier,
                                                              self.cs_identifier)) if ident)

    def identifier(self, interface: str) -> str | None:
        return self.me_identifier if interface == "model_exchange" else self.cs_identifier

    def parameter(self, name: str) -> Variable | None:
        """A parameter by its port-style name or its FMI name."""
        for var in self.parameters:
            if name in (var.port, var.name):
                return var
        return None


@dataclass(frozen=True)
class FmuFile:
    """An .fmu as read once: its bytes, their digest and what they declare."""

    path: Path
    data: bytes
    info: FmuInfo


_CACHE: dict[Path, tuple[tuple[int, int], FmuFile]] = {}


def read_fmu(path: str | os.PathLike, shown_as: str | None = None) -> FmuFile:
    """Read and check an .fmu (cached while the file's size and time are the same);
    FmuError, naming the file, says what is wrong. Nothing in it runs."""
    path = Path(path)
    name = shown(shown_as if shown_as is not None else path)
    try:
        st = path.stat()
    except FileNotFoundError:
        raise FmuError(f"FMU file '{name}' does not exist") from None
    except OSError as exc:
        raise FmuError(f"FMU file '{name}' cannot be read: {exc.strerror or exc}") from None
    key = (st.st_size, st.st_mtime_ns)
    cached = _CACHE.get(path)
    if cached is not None and cached[0] == key:
        return cached[1]
    try:
        data = read_regular_file(path, MAX_FMU_BYTES)
    except FileNotFoundError:
        raise FmuError(f"FMU file '{name}' does not exist") from None
    except (OSError, ValueError) as exc:
        raise FmuError(f"FMU file '{name}' {why_unreadable(exc, MAX_FMU_BYTES)}") from None
    fmu = FmuFile(path, data, _info(path, data, name))
    _CACHE[path] = (key, fmu)
    return fmu


def _info(path: Path, data: bytes, name: str) -> FmuInfo:
    require_fmpy()
    from fmpy.model_description import ValidationError, read_model_description

    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        names = archive.namelist()
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise FmuError(f"'{name}' is not an FMU: not a zip archive ({exc})") from None
    if "modelDescription.xml" not in names:
        raise FmuError(f"'{name}' is not an FMU: the archive has no modelDescription.xml")
    entry = archive.getinfo("modelDescription.xml")
    if entry.file_size > MAX_XML_BYTES:
        raise FmuError(f"FMU '{name}': its modelDescription.xml is larger than "
                       f"{MAX_XML_BYTES >> 20} MiB")
    try:
        md = read_model_description(io.BytesIO(data), validate=True)
    except ValidationError as exc:
        problems = "; ".join(str(p) for p in exc.problems[:3])
        more = f" (and {len(exc.problems) - 3} more)" if len(exc.problems) > 3 else ""
        raise FmuError(f"FMU '{name}': modelDescription.xml does not validate: "
                       f"{shown(problems, 300)}{more}") from None
    except Exception as exc:  # lxml's and fmpy's own errors: a broken description
        raise FmuError(f"FMU '{name}': modelDescription.xml cannot be read: "
                       f"{shown(exc, 300)}") from None
    version = md.fmiVersion or ""
    if version.startswith("3."):
        major = 3
    elif version == "2.0":
        major = 2
    else:
        raise FmuError(f"FMU '{name}' is FMI {shown(version)}; blocksim imports FMI 2.0 and "
                       f"3.0 FMUs")
    me = md.modelExchange.modelIdentifier if md.modelExchange else None
    cs = md.coSimulation.modelIdentifier if md.coSimulation else None
    if not me and not cs:
        raise FmuError(f"FMU '{name}' offers neither model exchange nor co-simulation")
    taken: set[str] = set()
    inputs, outputs, parameters, skipped = [], [], [], []
    by_name: dict[str, Variable] = {}
    for mv in md.modelVariables:
        shape = _shape(mv)
        usable = mv.type in NUMERIC_TYPES and shape is not None
        if mv.causality == "parameter" and shape:
            usable = False  # (array parameters are set in the FMU, not from the block)
        if mv.causality in ("input", "output") and not usable:
            skipped.append(f"{mv.name} ({mv.causality}, {mv.type}"
                           f"{', array of unknown size' if mv.dimensions else ''})")
            continue
        if not usable or mv.causality not in ("input", "output", "parameter"):
            continue
        if mv.causality == "parameter" and mv.variability not in ("fixed", "tunable"):
            continue
        var = Variable(mv.name, _unique(port_name(mv.name), taken), int(mv.valueReference),
                       mv.type, mv.causality, mv.variability, _number(mv.start),
                       mv.unit or (mv.declaredType.unit if mv.declaredType is not None
                                   and getattr(mv.declaredType, "unit", None) else "") or "",
                       mv.description or "", shape, _numbers(mv.start) if shape else ())
        by_name[mv.name] = var
        {"input": inputs, "output": outputs, "parameter": parameters}[mv.causality].append(var)
    states = []
    for unknown in md.derivatives:
        state = unknown.variable.derivative
        if state is not None:
            shape = _shape(state) or ()
            states.append(Variable(state.name, port_name(state.name),
                                   int(state.valueReference), state.type, state.causality,
                                   state.variability, _number(state.start), shape=shape,
                                   starts=_numbers(state.start) if shape else ()))
    dependencies: dict[str, tuple[str, ...] | None] = {}
    input_names = {v.name: v.port for v in inputs}
    for unknown in md.outputs:
        var = by_name.get(unknown.variable.name)
        if var is None:
            continue
        deps = unknown.dependencies
        dependencies[var.port] = (None if deps is None else tuple(
            input_names[d.name] for d in deps if d.name in input_names))
    ex = md.defaultExperiment
    platforms = _platforms(names, {me, cs} - {None}, major)
    return FmuInfo(
        path=path, digest=hashlib.sha256(data).hexdigest(), fmi_version=major,
        model_name=md.modelName or "", guid=md.guid or "", description=md.description or "",
        generation_tool=md.generationTool or "", me_identifier=me, cs_identifier=cs,
        inputs=tuple(inputs), outputs=tuple(outputs), parameters=tuple(parameters),
        states=tuple(states), n_states=int(md.numberOfContinuousStates),
        n_indicators=int(md.numberOfEventIndicators),
        start_time=_number(getattr(ex, "startTime", None)),
        stop_time=_number(getattr(ex, "stopTime", None)),
        tolerance=_number(getattr(ex, "tolerance", None)),
        step_size=_number(getattr(ex, "stepSize", None)),
        needs_completed_step=_needs_completed_step(md, major),
        can_vary_step=bool(md.coSimulation and md.coSimulation.canHandleVariableCommunicationStepSize),
        platforms=platforms, skipped=tuple(skipped), dependencies=dependencies)


def _needs_completed_step(md, major: int) -> bool:
    me = md.modelExchange
    if me is None:
        return False
    if major == 3:
        return bool(me.needsCompletedIntegratorStep)
    return not me.completedIntegratorStepNotNeeded


def _shape(mv) -> tuple[int, ...] | None:
    """A variable's shape: () for a scalar, the array's dimensions as fmpy resolved them
    (from the structural parameters' start values), None if they cannot be known."""
    if not mv.dimensions:
        return ()
    shape = getattr(mv, "shape", None)
    if not shape or not all(isinstance(d, int) and d > 0 for d in shape):
        return None
    return tuple(int(d) for d in shape)


def _numbers(value) -> tuple[float, ...]:
    """The numbers of an array's start attribute ("1 2 3")."""
    if not isinstance(value, str):
        return ()
    found = []
    for part in value.split():
        number = _number(part)
        if number is None:
            return ()
        found.append(number)
    return tuple(found)


def _unique(name: str, taken: set[str]) -> str:
    result, k = name, 2
    while result in taken:
        result, k = f"{name}_{k}", k + 1
    taken.add(result)
    return result


def _number(value) -> float | None:
    if value is None:
        return None
    if isinstance(value, str):
        text = value.strip()
        if text in ("true", "false"):
            return 1.0 if text == "true" else 0.0
        try:
            return float(text.split()[0]) if text else None
        except ValueError:
            return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _platforms(names: list[str], identifiers: set[str], major: int) -> tuple[str, ...]:
    """The binaries/<platform>/ folders holding a library of one of the identifiers."""
    found = []
    for entry in names:
        parts = entry.split("/")
        if len(parts) == 3 and parts[0] == "binaries" and parts[2]:
            stem = parts[2].rsplit(".", 1)[0]
            if stem in identifiers and parts[1] not in found:
                found.append(parts[1])
    return tuple(found)


def this_platform(major: int) -> str:
    """The binaries/ folder name of this machine in FMI `major` (linux64, x86_64-linux)."""
    import fmpy

    return fmpy.platform_tuple if major == 3 else fmpy.platform


def check_binary(info: FmuInfo, interface: str, name: str) -> None:
    """FmuError unless the FMU has a binary of `interface` for this machine."""
    platform = this_platform(info.fmi_version)
    if platform not in info.platforms:
        have = ", ".join(info.platforms) or "none"
        raise FmuError(f"FMU '{name}' has no binary for this platform ({platform}; it has: "
                       f"{have})")
