"""Mappers of discrete blocks, lookup tables, the Fcn block and library links (Reference
blocks: PID Controller, Discrete PID Controller, Ramp, the old simulink_extras PID)."""
from __future__ import annotations

import re
from typing import Any

from blocksim.simulink.mapping import BlockContext, Mapped, Mapper, Unmappable, wire
from blocksim.simulink.mappers import one_to_one
from blocksim.simulink.mexpr import Untranslatable, translate

_METHODS = {"forward euler": "forward-euler", "backward euler": "backward-euler",
            "trapezoidal": "trapezoidal"}


def _method(text: str) -> str:
    key = text.lower().replace("integration:", "").replace("accumulation:", "").strip()
    if key not in _METHODS:
        raise Unmappable(f"integration method '{text}'")
    return _METHODS[key]


def zero_order_hold(ctx: BlockContext) -> Mapped:
    return one_to_one(ctx, "ZeroOrderHold", {"sample_time": ctx.sample_time()})


def unit_delay(ctx: BlockContext) -> Mapped:
    name = "InitialCondition" if "InitialCondition" in ctx.block.params or not ctx.has("X0") \
        else "X0"
    return one_to_one(ctx, "UnitDelay", {"initial": ctx.value(name),
                                         "sample_time": ctx.sample_time()})


MAX_DELAY_CHAIN = 64


def delay(ctx: BlockContext) -> Mapped:
    """Delay / Integer Delay of N samples: N Unit Delays in series (exact)."""
    source = ctx.p("DelayLength") or ctx.p("NumDelays") or "1"
    n = ctx.int_value("DelayLength", source)
    if not 1 <= n <= MAX_DELAY_CHAIN:
        raise Unmappable(f"a delay of {source} samples (1 to {MAX_DELAY_CHAIN} are mapped)")
    if ctx.p("DelayLengthSource", "Dialog") != "Dialog" or \
            ctx.p("InitialConditionSource", "Dialog") != "Dialog":
        raise Unmappable("a delay length or initial condition from a port")
    if ctx.p("ExternalReset", "None").lower() != "none":
        raise Unmappable("a delay with an external reset")
    name = "InitialCondition" if ctx.has("InitialCondition") else "vinit"
    initial = ctx.value(name, ctx.p(name, "0"))
    if n > 1 and isinstance(initial, list):
        raise Unmappable("an initial condition per delay state")
    sample_time = ctx.value("SampleTime", ctx.p("SampleTime", "-1"))
    chain = [ctx.block_of("UnitDelay", {"initial": initial, "sample_time": sample_time},
                          "" if k == 0 else f"z{k + 1}") for k in range(n)]
    if n > 1:
        ctx.note(f"{n} Unit Delays in series")
    return Mapped(chain, {("in", 1): f"{chain[0].id}.u"}, {("out", 1): f"{chain[-1].id}.y"},
                  [wire(f"{a.id}.y", f"{b.id}.u") for a, b in zip(chain, chain[1:])])


def memory(ctx: BlockContext) -> Mapped:
    name = "InitialCondition" if "InitialCondition" in ctx.block.params else "X0"
    ctx.note("Simulink's Memory holds the input of the previous major step; blocksim's "
             "Memory the input just before the most recent event")
    return one_to_one(ctx, "Memory", {"initial": ctx.value(name)})


def discrete_tf(ctx: BlockContext) -> Mapped:
    return one_to_one(ctx, "DiscreteTransferFcn", {
        "num": ctx.value("Numerator"), "den": ctx.value("Denominator"), "powers": "z",
        "sample_time": ctx.sample_time()})


def discrete_filter(ctx: BlockContext) -> Mapped:
    return one_to_one(ctx, "DiscreteFilter", {
        "num": ctx.value("Numerator"), "den": ctx.value("Denominator"),
        "sample_time": ctx.sample_time()})


def discrete_zero_pole(ctx: BlockContext) -> Mapped:
    """Discrete Zero-Pole: multiplied out into a Discrete Transfer Fcn in powers of z."""
    import numpy as np
    from blocksim.simulink.mexpr import eval_literal

    def roots(name: str) -> list[complex]:
        try:
            t = translate(ctx.p(name))
            items = [x for row in (t.rows or []) for x in row] if t.text != "[]" else []
            return [complex(x.replace(" ", "")) for x in items]
        except (Untranslatable, ValueError):
            raise Unmappable(f"{name} = `{ctx.p(name)}` must be numbers here") from None
    zeros, poles = roots("Zeros"), roots("Poles")
    try:
        gain = eval_literal(translate(ctx.p("Gain")).text)
    except Untranslatable:
        raise Unmappable(f"Gain = `{ctx.p('Gain')}` must be a number here") from None
    if len(zeros) > len(poles):
        raise Unmappable("more zeros than poles (not causal)")
    num = np.real_if_close(gain * np.poly(zeros)) if zeros else np.array([gain])
    den = np.real_if_close(np.poly(poles)) if poles else np.array([1.0])
    if np.iscomplexobj(num) or np.iscomplexobj(den):
        raise Unmappable("complex zeros or poles without their conjugates")
    ctx.note("zeros and poles multiplied out into a transfer function in powers of z")
    return one_to_one(ctx, "DiscreteTransferFcn", {
        "num": [float(x) for x in num], "den": [float(x) for x in den], "powers": "z",
        "sample_time": ctx.sample_time()})


def discrete_state_space(ctx: BlockContext) -> Mapped:
    from blocksim.simulink.mappers import matrix
    params = {k: matrix(ctx, k) for k in ("A", "B", "C", "D")}
    params.update(x0=ctx.value("X0"), sample_time=ctx.sample_time())
    return one_to_one(ctx, "DiscreteStateSpace", params)


def discrete_integrator(ctx: BlockContext) -> Mapped:
    if ctx.p("InitialConditionSource").lower() == "external":
        raise Unmappable("a Discrete-Time Integrator with an external initial condition")
    params: dict[str, Any] = {"K": ctx.value("gainval"),
                              "method": _method(ctx.p("IntegratorMethod")),
                              "initial": ctx.value("InitialCondition"),
                              "sample_time": ctx.sample_time()}
    if ctx.on("LimitOutput"):
        params["lower"] = ctx.value("LowerSaturationLimit")
        params["upper"] = ctx.value("UpperSaturationLimit")
    reset = ctx.p("ExternalReset").lower() or "none"
    if reset not in ("none", "rising", "falling", "either", "level"):
        raise Unmappable(f"external reset '{reset}'")
    params["external_reset"] = reset
    ins = ("u", "reset") if reset != "none" else ("u",)
    outs = ("y", "sat") if ctx.on("ShowSaturationPort") else ("y",)
    return one_to_one(ctx, "DiscreteIntegrator", params, ins=ins, outs=outs)


def pulse_generator(ctx: BlockContext) -> Mapped:
    if not ctx.p("PulseType").lower().startswith("time"):
        ts = ctx.value("SampleTime")
        if not isinstance(ts, (int, float)):
            raise Unmappable("a sample-based Pulse Generator with a sample time that is not "
                             "a number")
        period, width, delay = (ctx.value(k) for k in ("Period", "PulseWidth", "PhaseDelay"))
        if not all(isinstance(v, (int, float)) for v in (period, width, delay)):
            raise Unmappable("a sample-based Pulse Generator over variables")
        ctx.note(f"sample based: period {period} samples of {ts} s")
        return one_to_one(ctx, "Pulse", {"amplitude": ctx.value("Amplitude"),
                                         "period": period * ts, "width": 100.0 * width / period,
                                         "delay": delay * ts}, ins=())
    return one_to_one(ctx, "Pulse", {"amplitude": ctx.value("Amplitude"),
                                     "period": ctx.value("Period"),
                                     "width": ctx.value("PulseWidth"),
                                     "delay": ctx.value("PhaseDelay")}, ins=())


def _extrapolation(ctx: BlockContext, name: str) -> str:
    method = ctx.p(name, "Linear").lower()
    if method.startswith("clip"):
        return "clip"
    if method.startswith("linear"):
        return "linear"
    raise Unmappable(f"extrapolation '{ctx.p(name)}'")


def lookup_nd(ctx: BlockContext) -> Mapped:
    interp = ctx.p("InterpMethod", "Linear").lower()
    if not interp.startswith("linear"):
        raise Unmappable(f"interpolation '{ctx.p('InterpMethod')}' (only linear is mapped)")
    dims = ctx.int_value("NumberOfTableDimensions")
    table = ctx.value("Table")
    extrap = _extrapolation(ctx, "ExtrapMethod")
    if dims == 1:
        return one_to_one(ctx, "LookupTable1D", {
            "breakpoints": ctx.value("BreakpointsForDimension1"), "table": table,
            "extrapolation": extrap})
    if dims > 4:
        raise Unmappable(f"a {dims}-D table")
    params = {f"breakpoints{k}": ctx.value(f"BreakpointsForDimension{k}")
              for k in range(1, dims + 1)}
    params.update(table=table, out_of_range="clip" if extrap == "clip" else "extrapolate")
    return one_to_one(ctx, "LookupTableND", params, ins=tuple(f"u{k}" for k in
                                                              range(1, dims + 1)))


def lookup_1d_old(ctx: BlockContext) -> Mapped:
    method = ctx.p("LookUpMeth", "Interpolation-Extrapolation")
    extrap = {"Interpolation-Extrapolation": "linear",
              "Interpolation-Use End Values": "clip"}.get(method)
    if extrap is None:
        raise Unmappable(f"lookup method '{method}'")
    table = "Table" if "Table" in ctx.block.params else "OutputValues"  # (7.x: Table)
    return one_to_one(ctx, "LookupTable1D", {"breakpoints": ctx.value("InputValues"),
                                             "table": ctx.value(table),
                                             "extrapolation": extrap})


def lookup_2d_old(ctx: BlockContext) -> Mapped:
    method = ctx.p("LookUpMeth", "Interpolation-Extrapolation")
    extrap = {"Interpolation-Extrapolation": "extrapolate",
              "Interpolation-Use End Values": "clip"}.get(method)
    if extrap is None:
        raise Unmappable(f"lookup method '{method}'")
    return one_to_one(ctx, "LookupTableND", {
        "breakpoints1": ctx.value("RowIndex"), "breakpoints2": ctx.value("ColumnIndex"),
        "table": ctx.value("OutputValues"), "out_of_range": extrap}, ins=("u1", "u2"))


def fcn(ctx: BlockContext) -> Mapped:
    """Fcn / MATLAB Fcn of the input u: u(1) -> u[0]; the formula runs in blocksim's
    expression language, over the diagram parameters."""
    source = ctx.p("Expr") or ctx.p("MATLABFcn")
    source = re.sub(r"\bu\[(\d+)\]", r"u(\1)", source)  # Fcn also accepts u[1]
    try:
        t = translate(source)
    except Untranslatable as exc:
        raise Unmappable(f"expression `{source}` does not translate ({exc})") from None
    if "u[" in t.text and not re.search(r"\bu\[[1-9]", t.text):
        t.text = re.sub(r"\bu\[0\]", "u", t.text)  # u(1) of a scalar input is u itself
    for name in sorted(t.names - {"u"}):
        if name not in ctx.scope:
            ctx.converter.unresolved(name, f"{ctx.path} (Expr = `{source}`)")
    indices = [int(k) for k in re.findall(r"\bu\[(\d+)\]", t.text)]
    if not indices:
        return one_to_one(ctx, "Expression", {"formula": t.text, "inputs": "u"})
    # blocksim's Expression is elementwise: u(k) become inputs u1..un of a Demux of u
    n = max(indices) + 1
    formula = re.sub(r"\bu\[(\d+)\]", lambda m: f"u{int(m.group(1)) + 1}", t.text)
    if re.search(r"\bu\b", formula):
        raise Unmappable(f"expression `{source}` uses u both whole and by element")
    expr = ctx.block_of("Expression", {"formula": formula,
                                       "inputs": ", ".join(f"u{k + 1}" for k in range(n))})
    split = ctx.block_of("Demux", {"outputs": n}, "demux")
    ctx.note(f"u(1)..u({n}) through a Demux of {n}: the input must have width {n}")
    return Mapped([expr, split], {("in", 1): f"{split.id}.u"}, {("out", 1): f"{expr.id}.y"},
                  [wire(f"{split.id}.y{k + 1}", f"{expr.id}.u{k + 1}") for k in range(n)])


def pid(ctx: BlockContext) -> Mapped:
    kind = ctx.p("Controller", "PID").upper()
    if kind not in ("PID", "PI", "PD", "P", "I"):
        raise Unmappable(f"controller type '{kind}'")
    if ctx.p("ControllerParametersSource", "internal").lower() == "external":
        raise Unmappable("gains from external ports")
    if ctx.p("InitialConditionSource", "internal").lower() == "external":
        raise Unmappable("initial conditions from external ports")
    if ctx.on("TrackingMode"):
        raise Unmappable("tracking mode")
    form = ctx.p("Form", "Parallel").lower()
    if form.startswith("ideal") and "P" not in kind:
        raise Unmappable(f"an ideal-form {kind} controller (blocksim's ideal form always has "
                         "the proportional term)")
    params: dict[str, Any] = {"form": "ideal" if form.startswith("ideal") else "parallel"}
    params["P"] = ctx.value("P") if "P" in kind else 0
    params["I"] = ctx.value("I") if "I" in kind else 0
    params["D"] = ctx.value("D") if "D" in kind else 0
    discrete = ctx.p("TimeDomain", "Continuous-time").lower().startswith("discrete")
    if "D" in kind and not ctx.on("UseFilter"):
        params["N"] = ctx.converter.pid_unfiltered_n
        if not discrete:
            ctx.converter.stiff_reasons.append(f"the derivative filter of '{ctx.path}'")
        ctx.note(f"derivative without filter: blocksim filters it, N = "
                 f"{ctx.converter.pid_unfiltered_n:g} rad/s")
    else:
        params["N"] = ctx.value("N")
    if discrete:
        params["sample_time"] = ctx.sample_time()
        params["integrator_method"] = _method(ctx.p("IntegratorMethod", "Forward Euler"))
        params["filter_method"] = _method(ctx.p("FilterMethod", "Forward Euler"))
    params["initial_integrator"] = ctx.value("InitialConditionForIntegrator")
    params["initial_filter"] = ctx.value("InitialConditionForFilter")
    if ctx.on("LimitOutput"):
        params["lower"] = ctx.value("LowerSaturationLimit")
        params["upper"] = ctx.value("UpperSaturationLimit")
        mode = ctx.p("AntiWindupMode", "none").lower()
        if mode not in ("none", "back-calculation", "clamping"):
            raise Unmappable(f"anti-windup '{mode}'")
        params["antiwindup"] = mode
        if mode == "back-calculation":
            params["Kb"] = ctx.value("Kb")
    reset = ctx.p("ExternalReset", "none").lower()
    ins = ("e",)
    if reset != "none":
        params["external_reset"] = reset
        ins = ("e", "reset")
    return one_to_one(ctx, "PID", params, ins=ins, outs=("u",))


def pid_extras(ctx: BlockContext) -> Mapped:
    """simulink_extras' old PID Controller: P + I/s + D s with a pure derivative."""
    params = {"form": "parallel", "P": ctx.value("P"), "I": ctx.value("I"),
              "D": ctx.value("D"), "N": ctx.converter.pid_unfiltered_n}
    ctx.note(f"the derivative term D s is filtered in blocksim, N = "
             f"{ctx.converter.pid_unfiltered_n:g} rad/s")
    ctx.converter.stiff_reasons.append(f"the derivative filter of '{ctx.path}'")
    return one_to_one(ctx, "PID", params, ins=("e",), outs=("u",))


def ramp(ctx: BlockContext) -> Mapped:
    initial = "InitialOutput" if "InitialOutput" in ctx.block.params else "X0"
    return one_to_one(ctx, "Ramp", {"slope": ctx.value("slope"), "start": ctx.value("start"),
                                    "initial": ctx.value(initial)}, ins=())


MORE_MAPPERS: dict[str, Mapper] = {
    "ZeroOrderHold": zero_order_hold, "UnitDelay": unit_delay, "Memory": memory,
    "DiscreteTransferFcn": discrete_tf, "DiscreteFilter": discrete_filter,
    "DiscreteStateSpace": discrete_state_space, "DiscreteIntegrator": discrete_integrator,
    "DiscretePulseGenerator": pulse_generator, "Lookup_n-D": lookup_nd,
    "MATLABFcn": fcn, "Lookup": lookup_1d_old, "Delay": delay, "DiscreteZeroPole": discrete_zero_pole, "Lookup2D": lookup_2d_old, "Fcn": fcn,
}
REFERENCE_MAPPERS: dict[str, Mapper] = {
    "simulink/Continuous/PID Controller": pid,
    "simulink/Discrete/Discrete PID Controller": pid,
    "simulink/Continuous/PID Controller (2DOF)": None,  # type: ignore[dict-item]
    "simulink/Sources/Ramp": ramp,
    "simulink/Discrete/Integer Delay": delay,
    "simulink_extras/Additional Linear/PID Controller": pid_extras,
}
REFERENCE_MAPPERS = {k: v for k, v in REFERENCE_MAPPERS.items() if v is not None}
