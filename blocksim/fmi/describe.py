"""`blocksim describe FILE.fmu`: what an FMU declares, as the FMU block will use it (read
from its modelDescription.xml; nothing in it runs, so no trust is needed)."""
from __future__ import annotations

import os

from blocksim.fmi.archive import FmuInfo, Variable, read_fmu, this_platform


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


def _row(v: Variable) -> str:
    unit = f" [{v.unit}]" if v.unit else ""
    renamed = f" (FMI name {v.name!r})" if v.port != v.name else ""
    kind = v.type + (f"[{','.join(map(str, v.shape))}]" if v.shape else "")
    start = " ".join(f"{x:g}" for x in v.starts) if v.starts else _number(v.start)
    text = f"  {v.port:16s} {kind:8s} {v.variability:10s} start {start}{unit}"
    return text + renamed + (f"  {v.description}" if v.description else "")


def describe(path: str | os.PathLike[str]) -> str:
    """The text `blocksim describe FILE.fmu` prints; FmuError if it is not a usable FMU."""
    info = read_fmu(path, os.fspath(path)).info
    return text_of(info)


def text_of(info: FmuInfo) -> str:
    lines = [f"{info.path.name}: FMU '{info.model_name}', FMI {info.fmi_version}.0"
             + (f", made by {info.generation_tool}" if info.generation_tool else "")]
    if info.description:
        lines.append(f"  {info.description}")
    offered = []
    if info.me_identifier:
        step = ("completedIntegratorStep needed" if info.needs_completed_step
                else "no completedIntegratorStep")
        offered.append(f"model exchange ({step})")
    if info.cs_identifier:
        vary = "variable" if info.can_vary_step else "fixed"
        offered.append(f"co-simulation ({vary} communication step)")
    lines.append(f"Interfaces: {', '.join(offered)}; the block's default: "
                 f"{info.interfaces[0]}")
    platform = this_platform(info.fmi_version)
    ok = "yes" if platform in info.platforms else "NO"
    lines.append(f"Binaries: {', '.join(info.platforms) or 'none'} (this machine, "
                 f"{platform}: {ok})")
    states = f" ({', '.join(s.name for s in info.states)})" if info.states else ""
    lines.append(f"Model exchange: states: {info.n_states}{states}, event indicators: "
                 f"{info.n_indicators}")
    ex = [f"start {_number(info.start_time)}", f"stop {_number(info.stop_time)}",
          f"tolerance {_number(info.tolerance)}", f"step {_number(info.step_size)}"]
    lines.append(f"Default experiment: {', '.join(ex)}")
    for title, variables in (("Inputs (ports)", info.inputs), ("Outputs (ports)", info.outputs),
                             ("Parameters (set with the block's 'parameters')",
                              info.parameters)):
        lines.append(f"{title}:" if variables else f"{title}: none")
        lines += [_row(v) for v in variables]
    deps = [f"  {port} <- {', '.join(found) if found else 'no input'}"
            for port, found in info.dependencies.items() if found is not None]
    if deps and info.inputs:
        lines.append("Direct dependencies of outputs on inputs (model exchange):")
        lines += deps
    if info.skipped:
        lines.append("Not connected (blocksim takes scalar numbers): " + "; ".join(info.skipped))
    return "\n".join(lines) + "\n"
