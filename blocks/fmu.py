"""The FMU block: a Functional Mock-up Unit (FMI 2.0 or 3.0) in a diagram (docs/fmi.md).

Its ports, states, zero crossings and sample time come from the FMU's
modelDescription.xml (`blocksim.fmi.archive`), read when the diagram is validated; its
binary runs only during a run, in a session the engine opens and closes
(`blocksim.fmi.session`), and only if the user trusts the file (`blocksim.fmi.trust`).
"""
from __future__ import annotations

import functools
import math
import re
from pathlib import Path
from typing import Any

from blocksim.blocktypes.blockspec import BlockType, Emit, EventKind, Param, Port, Sizes
from blocksim.blocktypes.sampletime import CONTINUOUS, SampleTime, parse_sample_time
from blocksim.errors import CompileError, ExpressionError, shown
from blocksim.files.write_rule import data_path

_ASSIGN = re.compile(r"^\s*([^=]+?)\s*=\s*(.+?)\s*$", re.S)


def _tuple(items: list[str]) -> str:
    return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"


class FMU(BlockType):
    """A Functional Mock-up Unit (FMI 2.0 or 3.0, model exchange or co-simulation).

    `file` names the .fmu (relative to the diagram file's folder). Its ports are the
    FMU's scalar input and output variables, named after them (a name that is not an
    identifier: each run of other characters becomes "_", so "der(x)" is der_x; see
    `blocksim describe FILE.fmu`); Real/Float64 variables are signals, Integer and
    Boolean ones numbers (true is 1), an FMI 3.0 array a vector. `interface` auto takes model exchange where the
    FMU offers it, else co-simulation.

    Model exchange: the FMU's continuous states are integrated by blocksim's solver, its
    event indicators are zero crossings located to machine precision, its next event
    time is a time event, and its event iteration runs within blocksim's. Co-simulation:
    a discrete block stepped by doStep every `communication_step` (0: the FMU's
    default experiment step); its inputs are sampled at each communication point and
    held over the step, its outputs are those the last doStep left (no feedthrough at a
    communication point: two co-simulation FMUs in a loop are coupled with a delay of
    one step, Jacobi style, never an algebraic loop).

    `parameters` sets FMU parameters before the run: "name = expression; ...", the
    expressions over the diagram's parameters (so `--set` and sweeps reach them). The
    binary runs only if the user trusts the file (`--trust FILE.fmu` or `blocksim trust
    FILE.fmu`), unpacked into a private temporary folder removed after the run; it runs
    in the blocksim process.
    """

    name = "FMU"
    category = "FMI"
    params = (
        Param("file", "text", "model.fmu", "the .fmu file, relative to the diagram file's "
              "folder", access="reads", suffixes=(".fmu",)),
        Param("interface", "choice", "auto", "model_exchange or co_simulation (auto: what "
              "the FMU offers, model exchange first)",
              choices=("auto", "model_exchange", "co_simulation")),
        Param("parameters", "text", "", "FMU parameters set before the run: "
              "'name = expression; ...' (expressions over the diagram's parameters)"),
        Param("communication_step", "scalar", 0.0, "co-simulation: the step of doStep "
              "(0: the FMU's DefaultExperiment stepSize)", unit="s", low=0.0),
    )
    event_kinds = (
        EventKind("event", "the FMU changed its states, outputs or mode in an event (a "
                           "state, time or step event, or an input that changed at one)"),
        EventKind("stop", "the FMU asked to terminate the simulation: the run stops here"),
    )
    has_time_events = True
    has_run_session = True

    # ----- what the FMU declares -----------------------------------------------------------
    def _fmu(self, p):
        """(FmuFile, interface) of the file `p.file` names; CompileError (one line) if it
        cannot be used."""
        from blocksim.fmi.archive import read_fmu

        text = p.file
        problem = _file_problem(text)
        if problem:
            raise CompileError(problem)
        fmu = read_fmu(data_path(p.folder, text), text)
        return fmu, _interface(fmu.info, p.interface, text)

    def check(self, p):
        problem = _file_problem(p.file)
        if problem:
            return problem
        fmu, interface = self._fmu(p)
        from blocksim.fmi.archive import check_binary

        check_binary(fmu.info, interface, p.file)
        _assignments(p, fmu.info)  # CompileError names a wrong one
        if interface == "co_simulation":
            _step(p, fmu.info)
        return None

    def input_ports(self, p):
        info = self._fmu(p)[0].info
        return [Port(v.port, _doc(v)) for v in info.inputs]

    def output_ports(self, p):
        info = self._fmu(p)[0].info
        return [Port(v.port, _doc(v)) for v in info.outputs]

    def feedthrough(self, p):
        fmu, interface = self._fmu(p)
        info = fmu.info
        ins = [v.port for v in info.inputs]
        if interface == "co_simulation":
            return {v.port: [] for v in info.outputs}
        return {v.port: list(ins if info.dependencies.get(v.port, None) is None
                             else info.dependencies[v.port]) for v in info.outputs}

    def is_discrete(self, p):
        try:
            return self._fmu(p)[1] == "co_simulation"
        except CompileError:
            return False  # (`check` says why)

    def sample_time(self, p):
        fmu, interface = self._fmu(p)
        if interface == "co_simulation":
            return parse_sample_time(_step(p, fmu.info))
        return SampleTime(CONTINUOUS)

    def sizes(self, p, in_widths):
        fmu, interface = self._fmu(p)
        info = fmu.info
        for v in info.inputs:
            width = in_widths.get(v.port)
            if width and width not in (1, v.size):
                raise ValueError(f"input '{v.port}' has width {width}; the FMU's variable "
                                 f"'{v.name}' has {v.size} element{'s' * (v.size > 1)}")
        outputs = {v.port: v.size for v in info.outputs}
        if interface == "co_simulation":  # held outputs, stop asked, stop logged
            return Sizes(outputs, discrete=sum(outputs.values()) + 2)
        return Sizes(outputs, states=info.n_states, discrete=2,  # next time event, stop
                     zero_crossings=info.n_indicators)

    def initial_states(self, p, n):
        info = self._fmu(p)[0].info
        starts = [x for v in info.states for x in v.start_values()]
        return (starts + [0.0] * n)[:n]  # the FMU's own values replace them at the start

    def initial_discrete(self, p, n):
        fmu, interface = self._fmu(p)
        if interface == "co_simulation":
            return _output_starts(fmu.info) + [0.0, 0.0]
        return [math.inf, 0.0]

    def count_time_events(self, p, start, stop):
        return None  # the FMU says its next event time as it runs

    def instance_notes(self, p):
        try:
            fmu, interface = self._fmu(p)
        except CompileError as exc:
            return exc.detail
        info = fmu.info
        lines = [f"FMU '{info.model_name}', FMI {info.fmi_version}.0, "
                 f"{interface.replace('_', ' ')} (offers {', '.join(info.interfaces)})"]
        if interface == "model_exchange":
            lines.append(f"{info.n_states} states, {info.n_indicators} event indicators")
        elif info.step_size:
            lines.append(f"default communication step {info.step_size:g} s")
        if info.parameters:
            lines.append("FMU parameters (set them in 'parameters'):")
            for v in info.parameters:
                unit = f" {v.unit}" if v.unit else ""
                start = "-" if v.start is None else f"{v.start:g}"
                about = f"  {v.description}" if v.description else ""
                lines.append(f"  {v.port} = {start}{unit}{about}")
        return "\n".join(lines)

    # ----- the run's session ---------------------------------------------------------------
    def _session(self, p):
        session = getattr(self, "_fmu_session", None)
        if session is None:
            from blocksim.fmi import trust
            from blocksim.fmi.session import FmuSession

            fmu, interface = self._fmu(p)
            session = self._fmu_session = FmuSession(
                fmu.info.model_name or "fmu", p.file, fmu.info, interface, trust.is_trusted)
        return session

    def start_run(self, p, start, stop, rtol, x, m):
        session = self._session(p)
        info = session.info
        step = _step(p, info) if not session.me else 0.0
        tolerance = rtol if session.me else (info.tolerance or None)
        x0, next_time = session.open(_assignments(p, info), start, stop, tolerance, step)
        if session.me:
            x[:] = x0
            m[0] = next_time if next_time > start else math.inf
            m[1] = 0.0
        else:
            m[:] = _output_starts(info) + [0.0, 0.0]

    def end_run(self, p):
        session = getattr(self, "_fmu_session", None)
        if session is not None:
            session.close()

    def step_hook(self, p):
        session = self._session(p)
        if session.me and session.info.needs_completed_step:
            return session.completed_step
        return None

    # ----- generated code ------------------------------------------------------------------
    def output(self, e: Emit):
        session = self._session(e.p)
        info = session.info
        lines: dict[str, list[str]] = {v.port: [] for v in info.outputs}
        flat = [(v, j) for v in info.outputs for j in range(v.size)]
        if not session.me:
            for k, (v, j) in enumerate(flat):
                lines[v.port].append(f"{e.y[v.port][j]} = {e.m[k]}")
            return lines
        x = _tuple(e.x) if e.x else "()"
        names = self._input_names(e)
        first = _first_elements(info.inputs)
        feed = self.feedthrough(e.p)
        for k, (v, j) in enumerate(flat):
            which = [first[port] + i for port in feed[v.port]
                     for i in range(_size(info.inputs, port))]
            fn = e.const(functools.partial(session.out_at, k, tuple(which)))
            u = _tuple([names[i] for i in which]) if which else "()"
            lines[v.port].append(f"{e.y[v.port][j]} = {fn}(t, {x}, {u})")
        return lines

    def _input_names(self, e: Emit) -> list[str]:
        """Every input element's name in the flat order (a width-1 signal at an array
        input: the same value for each element)."""
        info = self._session(e.p).info
        names = []
        for v in info.inputs:
            signal = e.u[v.port]
            names += [signal[j] if len(signal) > 1 else signal[0] for j in range(v.size)]
        return names

    def _inputs(self, e: Emit) -> str:
        names = self._input_names(e)
        return _tuple(names) if names else "()"

    def derivative(self, e: Emit):
        if not e.x:
            return []
        session = self._session(e.p)
        r = f"_fd{e.index}"
        return ([f"{r} = {e.const(session.der)}(t, {_tuple(e.x)}, {self._inputs(e)})"]
                + [f"{dx} = {r}[{k}]" for k, dx in enumerate(e.dx)])

    def zero_crossing(self, e: Emit):
        if not e.g:
            return []
        session = self._session(e.p)
        x = _tuple(e.x) if e.x else "()"
        r = f"_fz{e.index}"
        return ([f"{r} = {e.const(session.ind)}(t, {x}, {self._inputs(e)})"]
                + [f"{g} = {r}[{k}]" for k, g in enumerate(e.g)])

    def update(self, e: Emit):
        session = self._session(e.p)
        if not session.me:  # the stop at the communication point after the step that asked
            stop, said = e.m[-2], e.m[-1]
            return [f"if {stop} >= 2.0 and {said} == 0.0:", f"    {said} = 1.0",
                    f"    {e.event('stop')}"]
        r = f"_fe{e.index}"
        x = _tuple(e.x) if e.x else "()"
        lines = [f"{r} = {e.const(session.event)}(t, {x}, {self._inputs(e)}, init)"]
        if e.x:
            lines.append(f"if {r}[0] == 2:")
            lines += [f"    {xs} = {r}[1][{k}]" for k, xs in enumerate(e.x)]
        next_time, stop = e.m[0], e.m[1]
        lines += [f"{next_time} = {r}[2]",
                  f"if {r}[0] != 0 and init:", "    changed = True",
                  f"elif {r}[0] != 0:", f"    {e.event('event')}",
                  f"if {r}[3] != 0 and {stop} == 0.0:", f"    {stop} = 1.0",
                  f"    {e.event('stop')}"]
        return lines

    def sample_output(self, e: Emit):
        session = self._session(e.p)
        if session.me:
            return {}
        lines: dict[str, list[str]] = {v.port: [] for v in session.info.outputs}
        flat = [(v, j) for v in session.info.outputs for j in range(v.size)]
        for k, (v, _) in enumerate(flat):
            lines[v.port].append(f"{e.m[k]} = {e.const(functools.partial(session.cs_out, k))}()")
        return lines

    def sample_update(self, e: Emit):
        session = self._session(e.p)
        if session.me:
            return []
        stop = e.m[-2]  # 1: a step asked to terminate; 2: its end reached, outputs read
        return [f"if {e.const(session.cs_step)}(t, {self._inputs(e)}) != 0:",
                f"    {stop} = {stop} + 1.0"]

    def next_time(self, e: Emit) -> str:
        if not self._session(e.p).me:
            return "inf"
        slot = e.m[0]
        return f"({slot} if {slot} > t else inf)"

    def next_time_event(self, p, t):
        return math.inf  # the generated `next_time` reads the FMU's next event time


def _output_starts(info) -> list[float]:
    return [x for v in info.outputs for x in v.start_values()]


def _first_elements(variables) -> dict[str, int]:
    """Each variable's first element in the flat order of all their elements."""
    first, position = {}, 0
    for v in variables:
        first[v.port] = position
        position += v.size
    return first


def _size(variables, port: str) -> int:
    return next(v.size for v in variables if v.port == port)


def _file_problem(text: Any) -> str | None:
    if not isinstance(text, str) or not text.strip():
        return "parameter 'file' is empty; give the .fmu file's name"
    if "\x00" in text:
        return "parameter 'file' contains a NUL character"
    if Path(text).suffix.lower() != ".fmu":
        return f"parameter 'file' = '{shown(text)}' must end in .fmu"
    return None


def _interface(info, wanted: str, text: str) -> str:
    offered = info.interfaces
    if wanted == "auto":
        return offered[0]
    if wanted not in offered:
        raise CompileError(f"FMU '{shown(text)}' does not offer {wanted} (it offers "
                           f"{' and '.join(offered)})")
    return wanted


def _step(p, info) -> float:
    step = float(p.communication_step)
    if step > 0.0:
        return step
    if info.step_size is not None and info.step_size > 0.0:
        return float(info.step_size)
    raise CompileError("parameter 'communication_step' is 0 and the FMU's DefaultExperiment "
                       "gives no stepSize; give the co-simulation step")


def _assignments(p, info) -> list:
    """The FMU parameter values `parameters` sets: [(Variable, value)]."""
    from blocksim.expressions import language as expressions

    text = p.parameters or ""
    found = []
    for part in re.split(r"[;\n]", text):
        if not part.strip():
            continue
        match = _ASSIGN.match(part)
        if match is None:
            raise CompileError(f"parameter 'parameters': '{shown(part.strip())}' is not "
                               f"'name = expression'")
        name, formula = match.group(1), match.group(2)
        var = info.parameter(name)
        if var is None:
            known = ", ".join(v.port for v in info.parameters[:12]) or "none"
            raise CompileError(f"parameter 'parameters': the FMU has no parameter "
                               f"'{shown(name)}' (it has: {known})")
        try:
            value = expressions.evaluate(formula, p.scope)
        except ExpressionError as exc:
            raise CompileError(f"parameter 'parameters': {name} = {shown(formula)}: "
                               f"{exc}") from None
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise CompileError(f"parameter 'parameters': {name} must be one number") from None
        if not math.isfinite(number):
            raise CompileError(f"parameter 'parameters': {name} = {number} is not finite")
        found.append((var, number))
    return found


def _doc(v) -> str:
    unit = f" [{v.unit}]" if v.unit else ""
    kind = "" if v.kind == "float" else f" ({v.type})"
    width = f", {v.size} elements" if v.shape else ""
    return f"{v.description or v.name}{unit}{kind}{width}"


BLOCK_TYPES = (FMU,)
