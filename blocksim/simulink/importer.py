"""`import_simulink`: a Simulink file (and parameter files) in, a blocksim Diagram and an
import report out. Reading, workspace variables, block mapping and solver settings are
each their own module; this one puts them in order."""
from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from blocksim.diagram.model import Diagram
from blocksim.errors import BlocksimError
from blocksim.simulink.convert import Converter
from blocksim.simulink.errors import SimulinkFileError
from blocksim.simulink.loops import close_algebraic_loops
from blocksim.simulink.mdl import read_mdl_model
from blocksim.simulink.mexpr import Untranslatable, translate
from blocksim.simulink.model import SlModel
from blocksim.simulink.rates import resolve_inherited_rates, unlatch_discrete
from blocksim.simulink.package import read_model_file
from blocksim.simulink.report import Report
from blocksim.simulink.solver import map_solver
from blocksim.simulink.stiffness import choose_stiff_solver
from blocksim.simulink.workspace import (Workspace, read_assignments, read_model_workspace,
                                         read_params_file)
from blocksim.simulink.xmlparts import read_xml_model

log = logging.getLogger(__name__)

# MATLAB runs them in this order when a model is loaded and simulated.
CALLBACK_ORDER = ("PreLoadFcn", "PostLoadFcn", "InitFcn", "StartFcn")


@dataclass
class ImportResult:
    """The imported diagram (not saved anywhere), its report and the model as read."""

    diagram: Diagram
    report: Report
    model: SlModel


def read_model(path: str | os.PathLike) -> SlModel:
    """The SlModel of a .slx or .mdl file (SimulinkFileError: one line, nothing run)."""
    mf = read_model_file(path)
    if mf.kind == "mdl":
        return read_mdl_model(mf.path, mf.text)
    return read_xml_model(mf.path, mf.parts, mf.kind)


def import_simulink(path: str | os.PathLike, params: Iterable[str | os.PathLike] = (),
                    overrides: Mapping[str, Any] | None = None) -> ImportResult:
    """Translate a Simulink model into a blocksim diagram.

    params: .m scripts of plain assignments and .mat files, read after the model's own
    callbacks (later files win); overrides: NAME -> value (a number or MATLAB text) that win
    over everything. Variables still unknown become empty diagram parameters, listed in
    the report to be set. Raises SimulinkFileError (a BlocksimError) for a file that
    cannot be read safely."""
    model = read_model(path)
    if isinstance(params, (str, os.PathLike)):
        params = [params]
    report = Report(model=model.name, format=_format_name(model.format), release=model.release)
    workspace = Workspace()
    if model.workspace_data is not None:
        read_model_workspace(*model.workspace_data, workspace)
    if model.workspace_code:
        read_assignments(model.workspace_code, "model workspace", workspace)
    for name in CALLBACK_ORDER:
        if name in model.callbacks:
            read_assignments(model.callbacks[name], f"{name} callback", workspace)
    for file in params:
        read_params_file(Path(file), workspace)
    for name, value in (overrides or {}).items():
        workspace.assign(name, _override(name, value), "--set")
    report.skipped_code = list(workspace.skipped)
    if model.stateflow:
        report.warn("the model holds Stateflow data (charts become placeholders)")
    settings = map_solver(model.config, workspace.values, report.solver,
                          list(_sample_times(model.root)))
    converter = Converter(model, workspace, report)
    if settings.solver in ("euler", "rk4") and settings.step:
        # a filtered derivative stands for Simulink's difference across steps: at a fixed
        # step h, tau = h keeps the explicit method stable (tau << h would blow up)
        converter.derivative_tau = settings.step
        converter.pid_unfiltered_n = 1.0 / settings.step
    diagram = converter.diagram()
    parameters: dict[str, Any] = {}
    for name, value in workspace.values.items():
        if _valid_name(name):
            parameters[name] = value
            report.workspace[name] = workspace.origin[name]
    for name, uses in sorted(converter.unknown.items()):
        if name in parameters:
            continue
        if not _valid_name(name):
            report.warn(f"variable '{name}' cannot be a blocksim parameter name ({uses[0]})")
            continue
        parameters[name] = ""
        more = f" and {len(uses) - 1} more" if len(uses) > 1 else ""
        report.to_set[name] = f"used by {uses[0]}{more}; not found in the model's callbacks " \
                              "or --params files"
    for name, why in converter.asked.items():
        if "/" in name:
            report.to_set[name.replace("/", ": mask parameter ")] = why
            continue
        parameters[name] = ""
        report.to_set[name] = why
    diagram.parameters = parameters
    diagram.simulation = settings
    if converter.stiff_reasons and diagram.simulation.solver in ("dopri5", "dop853"):
        diagram.simulation.solver = "radau"
        report.solver.append(f"radau instead: {converter.stiff_reasons[0]} (a time constant "
                             f"of {converter.derivative_tau:g} s) makes the model stiff for "
                             "an explicit solver")
    if diagram.simulation.solver in ("euler", "rk4") and diagram.simulation.step:
        resolve_inherited_rates(diagram, report)
    unlatch_discrete(diagram, report)
    close_algebraic_loops(diagram, report)
    choose_stiff_solver(diagram, report.solver)
    diagram.description = (f"Imported from {Path(path).name} ({report.format}, "
                            f"{model.release or 'release unknown'}) by blocksim import")
    return ImportResult(diagram, report, model)


def _sample_times(system: Any) -> Iterable[str]:
    for block in system.blocks:
        if block.params.get("SampleTime"):
            yield block.params["SampleTime"]
        if block.system is not None and block.type != "Reference":
            yield from _sample_times(block.system)


def _override(name: str, value: Any) -> Any:
    if not isinstance(value, str):
        return value
    try:
        text = translate(value).text
    except Untranslatable as exc:
        raise BlocksimError(f"--set {name}={value}: {exc}") from None
    from blocksim.expressions.language import names_in
    from blocksim.simulink.mapping import literal
    try:
        return text if names_in(text) else literal(text)
    except BlocksimError as exc:
        raise BlocksimError(f"--set {name}={value}: {exc}") from None


def _valid_name(name: str) -> bool:
    import keyword
    import re
    return bool(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name)) and not keyword.iskeyword(name) \
        and name != "inf"


def _format_name(kind: str) -> str:
    return {"slx": "slx", "mdl": "classic mdl", "mdl-xml": "mdl (XML parts)"}.get(kind, kind)


__all__ = ["ImportResult", "SimulinkFileError", "import_simulink", "read_model"]
