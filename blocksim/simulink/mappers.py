"""Mappers of Simulink's built-in blocks onto blocksim blocks: math, continuous, sources,
discontinuities, routing and sinks (`mappers_more`: discrete blocks, lookup tables, the PID
and other library links, Fcn). Each returns a Mapped, or raises Unmappable (the block then
becomes a placeholder); semantic differences go in notes (docs/simulink.md)."""
from __future__ import annotations

import math
from typing import Any

from blocksim.simulink.mapping import BlockContext, Mapped, Mapper, Unmappable, wire


def one_to_one(ctx: BlockContext, type_name: str, params: dict[str, Any],
               ins: tuple[str, ...] = ("u",), outs: tuple[str, ...] = ("y",)) -> Mapped:
    block = ctx.block_of(type_name, params)
    return Mapped([block], {("in", k + 1): f"{block.id}.{p}" for k, p in enumerate(ins)},
                  {("out", k + 1): f"{block.id}.{p}" for k, p in enumerate(outs)})


def numbered(prefix: str, n: int) -> tuple[str, ...]:
    return tuple(f"{prefix}{k + 1}" for k in range(n))


def gain(ctx: BlockContext) -> Mapped:
    mult = ctx.p("Multiplication")
    k = ctx.value("Gain")
    if mult and not mult.startswith("Element-wise") and not isinstance(k, (int, float)):
        raise Unmappable(f"matrix gain ({mult}) is not mapped")  # (a scalar: the same)
    return one_to_one(ctx, "Gain", {"k": k})


def sum_block(ctx: BlockContext) -> Mapped:
    text = ctx.p("Inputs") or "++"
    if text.strip().isdigit():
        signs = "+" * int(text)
    else:
        signs = text.replace("|", "").strip()
        if not signs or set(signs) - {"+", "-"}:
            raise Unmappable(f"Sum inputs '{text}' are not signs")
    if len(signs) == 1:  # one input: the sum of its elements
        if signs == "-":
            raise Unmappable("a Sum of one negated input is not mapped")
        return one_to_one(ctx, "Expression", {"formula": "sum(u)", "inputs": "u"})
    return one_to_one(ctx, "Sum", {"signs": signs}, ins=numbered("u", len(signs)))


def product(ctx: BlockContext) -> Mapped:
    text = ctx.p("Inputs") or "2"
    ops = "*" * int(text) if text.strip().isdigit() else text.strip()
    if not ops or set(ops) - {"*", "/"}:
        raise Unmappable(f"Product inputs '{text}' are not * and /")
    if ctx.p("Multiplication").startswith("Matrix"):
        raise Unmappable("matrix multiplication is not mapped")
    if len(ops) == 1:
        if ops == "/":
            return one_to_one(ctx, "Expression", {"formula": "1 / u", "inputs": "u"})
        raise Unmappable("a Product of the elements of one input is not mapped")
    return one_to_one(ctx, "Product", {"ops": ops}, ins=numbered("u", len(ops)))


def integrator(ctx: BlockContext) -> Mapped:
    external_ic = ctx.p("InitialConditionSource").lower() == "external"
    reset = ctx.p("ExternalReset").lower()
    limited = ctx.on("LimitOutput")
    x0 = None if external_ic else ctx.value("InitialCondition")
    if reset and reset != "none":
        if limited:
            raise Unmappable("an Integrator with both an external reset and limits")
        edge = {"rising": "rising", "falling": "falling", "either": "either"}.get(reset)
        if edge is None:
            raise Unmappable(f"a '{reset}' reset (only rising, falling, either are mapped)")
        params = {"edge": edge, "initial": 0 if external_ic else x0}
        block = ctx.block_of("ResetIntegrator", params)
        mapped = Mapped([block], {("in", 1): f"{block.id}.u", ("in", 2): f"{block.id}.reset"},
                        {("out", 1): f"{block.id}.y", ("state", 1): f"{block.id}.state"})
        if external_ic:
            mapped.inputs[("in", 3)] = f"{block.id}.x0"
            ctx.note("initial condition from the x0 port: blocksim's ResetIntegrator takes the "
                     "port's value at resets; at the start it begins from 0 (set `initial`)")
        else:
            const = ctx.block_of("Constant", {"value": x0}, "x0")
            mapped.blocks.append(const)
            mapped.wires.append(wire(f"{const.id}.y", f"{block.id}.x0"))
        if ctx.on("ShowSaturationPort"):
            raise Unmappable("a saturation port on a resettable Integrator")
        return mapped
    params: dict[str, Any] = {}
    if external_ic:
        params["ic_source"] = "input"
    else:
        params["x0"] = x0
    if limited:
        params["lower"] = ctx.value("LowerSaturationLimit")
        params["upper"] = ctx.value("UpperSaturationLimit")
    block = ctx.block_of("Integrator", params)
    mapped = Mapped([block], {("in", 1): f"{block.id}.u"},
                    {("out", 1): f"{block.id}.y", ("state", 1): f"{block.id}.y"})
    if external_ic:
        mapped.inputs[("in", 2)] = f"{block.id}.x0"
    if ctx.on("ShowSaturationPort"):
        mapped.outputs[("out", 2)] = f"{block.id}.sat"
    return mapped


def transfer_fcn(ctx: BlockContext) -> Mapped:
    num, den = ctx.value("Numerator"), ctx.value("Denominator")
    if isinstance(num, list) and num and isinstance(num[0], list):
        if len(num) != 1:
            raise Unmappable("a Transfer Fcn with a matrix numerator (several outputs)")
        num = num[0]
    return one_to_one(ctx, "TransferFunction", {"num": num, "den": den})


def zero_pole(ctx: BlockContext) -> Mapped:
    def roots(name: str) -> str:
        source = ctx.p(name)
        try:
            t = ctx.translation(name)
        except Exception as exc:
            raise Unmappable(f"{name} = `{source}` does not translate ({exc})") from None
        ctx.resolved(t, name, source)
        items = [x for row in (t.rows or []) for x in row]
        if t.text == "[]":
            return ""
        return ", ".join(x.replace(" ", "") for x in items)
    return one_to_one(ctx, "ZeroPole", {"zeros": roots("Zeros"), "poles": roots("Poles"),
                                        "gain": ctx.value("Gain")})


def matrix(ctx: BlockContext, name: str) -> Any:
    """A MATLAB matrix with its orientation ([0; 1] is 2 x 1): nested lists, or the text
    of nested lists over variables."""
    source = ctx.p(name)
    try:
        t = ctx.translation(name)
    except Exception as exc:
        return ctx.converter.ask(ctx, name, source, str(exc))
    if t.rows and len(t.rows) > 1 and all(len(r) == 1 for r in t.rows) and \
            not t.text.startswith("[["):
        text = "[" + ", ".join(f"[{r[0]}]" for r in t.rows) + "]"  # a column
        return ctx.resolved(type(t)(text, t.names, t.rows), name, source)
    return _matrix(ctx.resolved(t, name, source))


def state_space(ctx: BlockContext) -> Mapped:
    params = {k: matrix(ctx, k) for k in ("A", "B", "C", "D")}
    params["x0"] = ctx.value("X0")
    return one_to_one(ctx, "StateSpace", params)


def _matrix(value: Any) -> Any:
    """A row vector [a, b] means a 1 x n matrix in MATLAB; blocksim's matrices are nested."""
    if isinstance(value, list) and value and not isinstance(value[0], list):
        return [value]
    return value


def constant(ctx: BlockContext) -> Mapped:
    return one_to_one(ctx, "Constant", {"value": ctx.value("Value")}, ins=())


def step(ctx: BlockContext) -> Mapped:
    mapped = one_to_one(ctx, "Step", {"time": ctx.value("Time"), "before": ctx.value("Before"),
                                      "after": ctx.value("After")}, ins=())
    return sampled(ctx, mapped)


def sampled(ctx: BlockContext, mapped: Mapped) -> Mapped:
    """A source with a sample time > 0 (a discrete Sine Wave or Step): its continuous
    output through a Zero-Order Hold of that period, which is what Simulink computes (the
    value at each hit, held)."""
    text = ctx.p("SampleTime")
    if text in ("0", "", "-1", "inf"):
        return mapped
    hold = ctx.block_of("ZeroOrderHold", {"sample_time": ctx.sample_time()}, "hold")
    source = mapped.outputs[("out", 1)]
    mapped.blocks.append(hold)
    mapped.wires.append(wire(source, f"{hold.id}.u"))
    mapped.outputs[("out", 1)] = f"{hold.id}.y"
    ctx.note(f"sample time {text}: the output is held by '{hold.id}' (a Zero-Order Hold)")
    return mapped


def sine(ctx: BlockContext) -> Mapped:
    if ctx.p("SineType").lower().startswith("sample"):
        raise Unmappable("a sample-based Sine Wave")
    freq = ctx.value("Frequency")
    hz = freq / (2 * math.pi) if isinstance(freq, (int, float)) else f"({freq}) / (2 * pi)"
    mapped = one_to_one(ctx, "Sine", {"amplitude": ctx.value("Amplitude"), "frequency": hz,
                                      "phase": ctx.value("Phase"), "bias": ctx.value("Bias")},
                        ins=())
    return sampled(ctx, mapped)


def saturation(ctx: BlockContext) -> Mapped:
    return one_to_one(ctx, "Saturation", {"lower": ctx.value("LowerLimit"),
                                          "upper": ctx.value("UpperLimit")})


def relay(ctx: BlockContext) -> Mapped:
    return one_to_one(ctx, "Relay", {"on_point": ctx.value("OnSwitchValue"),
                                     "off_point": ctx.value("OffSwitchValue"),
                                     "on_value": ctx.value("OnOutputValue"),
                                     "off_value": ctx.value("OffOutputValue")})


def switch(ctx: BlockContext) -> Mapped:
    criteria = ctx.p("Criteria").replace(" ", "")
    choice = {"u2>=Threshold": "u2 >= a", "u2>Threshold": "u2 > a",
              "u2~=0": "u2 != 0"}.get(criteria)
    if choice is None:
        raise Unmappable(f"Switch criteria '{ctx.p('Criteria')}'")
    return one_to_one(ctx, "Switch", {"criterion": choice, "threshold": ctx.value("Threshold")},
                      ins=("u1", "u2", "u3"))


def transport_delay(ctx: BlockContext) -> Mapped:
    mapped = one_to_one(ctx, "TransportDelay", {"delay": ctx.value("DelayTime"),
                                                "initial_output": ctx.value("InitialOutput")})
    return mapped


def derivative(ctx: BlockContext) -> Mapped:
    n = ctx.value("CoefficientInTFapproximation")
    if isinstance(n, (int, float)) and math.isfinite(n) and n > 0:
        return one_to_one(ctx, "Derivative", {"tau": 1.0 / n})
    tau = ctx.converter.derivative_tau
    ctx.converter.stiff_reasons.append(f"the filter of Derivative '{ctx.path}'")
    ctx.note(f"Simulink differentiates across solver steps; blocksim filters: "
             f"s/(tau s + 1) with tau = {tau:g} s (set `tau`; docs/simulink.md)")
    return one_to_one(ctx, "Derivative", {"tau": tau})


def _saved_ports(ctx: BlockContext, which: int) -> int | None:
    import re
    counts = re.findall(r"\d+", ctx.block.params.get("Ports", ""))
    return int(counts[which]) if len(counts) > which else None


def mux(ctx: BlockContext) -> Mapped:
    if "Inputs" not in ctx.block.params and _saved_ports(ctx, 0):
        n = _saved_ports(ctx, 0) or 1
        return one_to_one(ctx, "Mux", {"inputs": n}, ins=numbered("u", n))
    text = ctx.p("Inputs")
    try:
        n = ctx.int_value("Inputs")
    except Unmappable:
        values = ctx.value("Inputs")  # [1 2]: the widths of the inputs
        if not isinstance(values, list):
            raise
        n = len(values)
        ctx.note(f"input widths {text} not checked")
    return one_to_one(ctx, "Mux", {"inputs": n}, ins=numbered("u", n))


def demux(ctx: BlockContext) -> Mapped:
    if "Outputs" not in ctx.block.params and _saved_ports(ctx, 1):
        n = _saved_ports(ctx, 1) or 1
        return one_to_one(ctx, "Demux", {"outputs": n}, outs=numbered("y", n))
    try:
        n = ctx.int_value("Outputs")
    except Unmappable:
        values = ctx.value("Outputs")
        if not isinstance(values, list) or len(set(map(str, values))) != 1:
            raise
        n = len(values)
    return one_to_one(ctx, "Demux", {"outputs": n}, outs=numbered("y", n))


def goto(ctx: BlockContext) -> Mapped:
    visibility = ctx.p("TagVisibility").lower() or "local"
    if visibility not in ("local", "scoped", "global"):
        raise Unmappable(f"tag visibility '{visibility}'")
    if visibility == "scoped" and ctx.converter.goto_tags.get(ctx.p("GotoTag")) == 1:
        # Simulink's scoped tag reaches down from its GotoTagVisibility block, which may sit
        # above the Goto; blocksim's reaches down from the Goto. A tag no other Goto uses
        # means the same as global.
        visibility = "global"
        ctx.note("scoped tag used by this Goto only: global (the same Froms see it)")
    return one_to_one(ctx, "Goto", {"tag": ctx.p("GotoTag"), "visibility": visibility},
                      outs=())


def from_block(ctx: BlockContext) -> Mapped:
    return one_to_one(ctx, "From", {"tag": ctx.p("GotoTag")}, ins=())


def scope(ctx: BlockContext) -> Mapped:
    n = ctx.int_value("NumInputPorts") if ctx.p("NumInputPorts") else 1
    ports = ("u",) + tuple(f"u{k}" for k in range(2, n + 1))
    return one_to_one(ctx, "Scope", {"inputs": n} if n > 1 else {}, ins=ports, outs=())


def logged(ctx: BlockContext) -> Mapped:
    """To Workspace, Display, a root Outport: an Output block, logged under its id."""
    if ctx.type == "ToWorkspace" and ctx.id != ctx.p("VariableName"):
        ctx.note(f"logged as column '{ctx.id}' of the results (MATLAB variable "
                 f"'{ctx.p('VariableName')}')")
    return one_to_one(ctx, "Output", {}, outs=())


def clock(ctx: BlockContext) -> Mapped:
    return one_to_one(ctx, "Clock", {}, ins=())


def plain(type_name: str, ins: tuple[str, ...] = ("u",)) -> Mapper:
    return lambda ctx: one_to_one(ctx, type_name, {}, ins=ins)


def trigonometry(ctx: BlockContext) -> Mapped:
    op = ctx.p("Operator") or "sin"
    if op == "atan2":
        return one_to_one(ctx, "Trigonometric", {"function": "atan2"}, ins=("u1", "u2"))
    if op == "sincos":
        return one_to_one(ctx, "Trigonometric", {"function": "sincos"}, outs=("sin", "cos"))
    if op not in ("sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh",
                  "acosh", "atanh"):
        raise Unmappable(f"trigonometric function '{op}'")
    return one_to_one(ctx, "Trigonometric", {"function": op})


_MATH_ONE = {"exp": "exp", "log": "log", "log10": "log10", "sqrt": "sqrt", "square": "square",
             "reciprocal": "reciprocal"}
_MATH_TWO = {"pow": "pow", "hypot": "hypot", "mod": "mod", "rem": "rem", "min": "min",
             "max": "max", "atan2": "atan2"}
_MATH_EXPR = {"10^u": "10 ** u", "magnitude^2": "u * u", "conj": "u", "transpose": "u",
              "hermitian": "u"}


def math_function(ctx: BlockContext) -> Mapped:
    op = ctx.p("Operator") or "exp"
    if op in _MATH_ONE:
        return one_to_one(ctx, "MathFunction", {"function": _MATH_ONE[op]})
    if op in _MATH_TWO:
        return one_to_one(ctx, "MathFunction", {"function": _MATH_TWO[op]}, ins=("u1", "u2"))
    if op in _MATH_EXPR:
        return one_to_one(ctx, "Expression", {"formula": _MATH_EXPR[op], "inputs": "u"})
    raise Unmappable(f"math function '{op}'")


def minmax(ctx: BlockContext) -> Mapped:
    n = ctx.int_value("Inputs")
    fn = ctx.p("Function") or "min"
    ins = ("u",) if n == 1 else numbered("u", n)
    return one_to_one(ctx, "MinMax", {"function": fn, "inputs": n}, ins=ins)


def relational(ctx: BlockContext) -> Mapped:
    op = {"~=": "!="}.get(ctx.p("Operator"), ctx.p("Operator"))
    if op not in ("<", "<=", ">", ">=", "==", "!="):
        raise Unmappable(f"relational operator '{op}'")
    return one_to_one(ctx, "RelationalOperator", {"operator": op}, ins=("u1", "u2"))


def logic(ctx: BlockContext) -> Mapped:
    op = ctx.p("Operator").upper() or "AND"
    if op not in ("AND", "OR", "NAND", "NOR", "XOR", "NOT"):
        raise Unmappable(f"logical operator '{op}'")
    n = 1 if op == "NOT" else ctx.int_value("Inputs")
    ins = ("u1",) if op == "NOT" else numbered("u", n)
    return one_to_one(ctx, "LogicalOperator", {"operator": op, "inputs": n}, ins=ins)


def dead_zone(ctx: BlockContext) -> Mapped:
    return one_to_one(ctx, "DeadZone", {"start": ctx.value("LowerValue"),
                                        "end": ctx.value("UpperValue")})


def bias(ctx: BlockContext) -> Mapped:
    return one_to_one(ctx, "Bias", {"bias": ctx.value("Bias")})


# Simulink blocks whose output only jumps (between jumps it is constant): a rate limiter
# after one needs no du/dt
PIECEWISE_CONSTANT = {"Step", "Constant", "DiscretePulseGenerator", "ZeroOrderHold",
                      "UnitDelay", "Memory", "DiscreteTransferFcn", "DiscreteFilter",
                      "DiscreteStateSpace", "DiscreteIntegrator", "DiscreteZeroPole", "Delay"}


def rate_limiter(ctx: BlockContext) -> Mapped:
    """blocksim's RateLimiter locates its switching from du/dt. After a block whose output
    only jumps (a Step, a hold, a discrete block) du/dt is 0 between the jumps: exact. Else
    du/dt comes from a filtered Derivative of the input, noted."""
    params: dict[str, Any] = {"rising": ctx.value("RisingSlewLimit"),
                              "falling": ctx.value("FallingSlewLimit"),
                              "initial": ctx.value("InitialCondition", ctx.p("InitialCondition",
                                                                             "0"))}
    feeding = next((c for c in (ctx.system.connections if ctx.system else ())
                    if c.dst.block == ctx.block.name and c.dst.kind == "in"), None)
    source = ctx.system.block(feeding.src.block) if feeding and ctx.system else None
    if source is not None and source.type in PIECEWISE_CONSTANT:
        return one_to_one(ctx, "RateLimiter", {**params, "derivative": "zero"})
    tau = ctx.converter.derivative_tau
    limiter = ctx.block_of("RateLimiter", {**params, "derivative": "port"})
    slope = ctx.block_of("Derivative", {"tau": tau}, "du")
    hub = ctx.block_of("Gain", {"k": 1}, "u")
    ctx.converter.stiff_reasons.append(f"the input derivative of Rate Limiter '{ctx.path}'")
    ctx.note(f"du/dt of its input from a filtered Derivative (tau = {tau:g} s): the switching "
             "instants lag by about tau")
    return Mapped([limiter, slope, hub], {("in", 1): f"{hub.id}.u"},
                  {("out", 1): f"{limiter.id}.y"},
                  [wire(f"{hub.id}.y", f"{limiter.id}.u"), wire(f"{hub.id}.y", f"{slope.id}.u"),
                   wire(f"{slope.id}.y", f"{limiter.id}.du")])


BUILTIN_MAPPERS: dict[str, Mapper] = {
    "RateLimiter": rate_limiter,
    "Gain": gain, "Sum": sum_block, "Product": product, "Integrator": integrator,
    "TransferFcn": transfer_fcn, "ZeroPole": zero_pole, "StateSpace": state_space,
    "Constant": constant, "Step": step, "Sin": sine, "Saturate": saturation, "Relay": relay,
    "Switch": switch, "TransportDelay": transport_delay, "Derivative": derivative,
    "Mux": mux, "Demux": demux, "Goto": goto, "From": from_block, "Scope": scope,
    "ToWorkspace": logged, "Display": logged, "Clock": clock, "Abs": plain("Abs"),
    "Signum": plain("Sign"), "Stop": lambda ctx: one_to_one(ctx, "Stop", {}, outs=()),
    "Trigonometry": trigonometry, "Math": math_function, "MinMax": minmax,
    "RelationalOperator": relational, "Logic": logic, "DeadZone": dead_zone, "Bias": bias,
}
