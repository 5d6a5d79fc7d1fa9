"""Mappers of further library links (Reference blocks) and of bus and pass-through blocks
seen in real models: the newer PID library (slpidlib), Compare To Constant/Zero, Manual
Switch, Coulomb & Viscous Friction, the Second-Order Integrator, Bus Creator/Selector, Data
Type Conversion (double signals only)."""
from __future__ import annotations

import re
from typing import Any

from blocksim.simulink.mapping import BlockContext, Mapped, Mapper, Unmappable
from blocksim.simulink.mappers import numbered, one_to_one
from blocksim.simulink.mappers_more import pid

_RELOPS = {"~=": "!=", "==": "==", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


def compare_to(ctx: BlockContext, constant: Any) -> Mapped:
    op = ctx.p("relop", "<=")
    if op not in _RELOPS:
        raise Unmappable(f"relation '{op}'")
    return one_to_one(ctx, "CompareToConstant", {"operator": _RELOPS[op], "constant": constant})


def manual_switch(ctx: BlockContext) -> Mapped:
    """The position saved in the file (sw "1": the upper input) as a formula of both inputs,
    so both lines stay drawn."""
    upper = ctx.p("sw", "1").strip("'\"") in ("1", "on")
    ctx.note(f"fixed at its saved position ({'upper' if upper else 'lower'} input)")
    return one_to_one(ctx, "Expression", {"formula": "u1" if upper else "u2",
                                          "inputs": "u1, u2"}, ins=("u1", "u2"))


def coulomb(ctx: BlockContext) -> Mapped:
    ctx.note("at u = 0 blocksim's friction takes the sign of u's direction of motion "
             "(Simulink's sign(0) = 0 gives 0 there)")
    return one_to_one(ctx, "CoulombViscousFriction", {"offset": ctx.value("offset"),
                                                      "gain": ctx.value("gain")})


def second_order_integrator(ctx: BlockContext) -> Mapped:
    if ctx.p("ICSourceX", "internal") != "internal" or \
            ctx.p("ICSourceDXDT", "internal") != "internal":
        raise Unmappable("initial conditions from ports")
    if ctx.p("ExternalReset", "none") not in ("none", ""):
        raise Unmappable("an external reset")
    params: dict[str, Any] = {"x0": ctx.value("ICX", ctx.p("ICX", "0")),
                              "dx0": ctx.value("ICDXDT", ctx.p("ICDXDT", "0"))}
    if ctx.on("LimitX"):
        params["lower"] = ctx.value("LowerLimitX", ctx.p("LowerLimitX", "-inf"))
        params["upper"] = ctx.value("UpperLimitX", ctx.p("UpperLimitX", "inf"))
    if ctx.on("LimitDXDT"):
        params["dx_lower"] = ctx.value("LowerLimitDXDT", ctx.p("LowerLimitDXDT", "-inf"))
        params["dx_upper"] = ctx.value("UpperLimitDXDT", ctx.p("UpperLimitDXDT", "inf"))
    outs = ("x", "dx")
    if ctx.p("OutputPorts", "x and dx/dt") == "x":
        outs = ("x",)
    elif ctx.p("OutputPorts", "x and dx/dt") == "dx/dt":
        outs = ("dx",)
    return one_to_one(ctx, "SecondOrderIntegrator", params, ins=("ddx",), outs=outs)


def _signal_names(ctx: BlockContext, n: int) -> list[str]:
    """Simulink's bus element names: the names of the lines into the inputs, else signal1,
    signal2, ..."""
    names = [f"signal{k + 1}" for k in range(n)]
    for conn in ctx.system.connections if ctx.system else ():
        if conn.dst.block == ctx.block.name and conn.dst.kind == "in" and conn.name \
                and 0 < conn.dst.index <= n and re.fullmatch(r"[A-Za-z_]\w*", conn.name):
            names[conn.dst.index - 1] = conn.name
    return names


def bus_creator(ctx: BlockContext) -> Mapped:
    text = ctx.p("Inputs", "2")
    if text.isdigit():
        n = int(text)
        names = _signal_names(ctx, n)
    else:
        names = [x.strip().strip("'") for x in text.split(",") if x.strip()]
        n = len(names)
    if len(set(names)) != n:
        raise Unmappable(f"bus element names {names} are not distinct")
    return one_to_one(ctx, "BusCreator", {"names": ", ".join(names)}, ins=numbered("u", n))


def bus_selector(ctx: BlockContext) -> Mapped:
    names = [x.strip() for x in ctx.p("OutputSignals", "signal1,signal2").split(",")
             if x.strip()]
    if ctx.on("OutputAsBus"):
        raise Unmappable("a Bus Selector that outputs a bus")
    return one_to_one(ctx, "BusSelector", {"names": ", ".join(names)}, ins=("bus",),
                      outs=numbered("y", len(names)))


def pass_through(ctx: BlockContext) -> Mapped:
    ctx.note("passes the signal through (blocksim signals are doubles)")
    return one_to_one(ctx, "Gain", {"k": 1})


def rate_transition(ctx: BlockContext) -> Mapped:
    """blocksim passes a signal between rates without a block (a slower reader samples, a
    faster one sees the held value: docs/semantics.md, Rate transitions)."""
    ctx.note("a wire in blocksim, which moves signals between rates by itself; Simulink's "
             "deterministic transfer from a slow to a fast rate adds one slow period of delay")
    return one_to_one(ctx, "Gain", {"k": 1})


def sqrt(ctx: BlockContext) -> Mapped:
    op = ctx.p("Operator", "sqrt")
    formula = {"sqrt": None, "signedSqrt": "sign(u) * sqrt(abs(u))", "rSqrt": "1 / sqrt(u)"}
    if op not in formula:
        raise Unmappable(f"operator '{op}'")
    if formula[op] is None:
        return one_to_one(ctx, "MathFunction", {"function": "sqrt"})
    return one_to_one(ctx, "Expression", {"formula": formula[op], "inputs": "u"})


def from_workspace(ctx: BlockContext) -> Mapped:
    """From Workspace of a matrix [t, u1, u2, ...] that the callbacks or --params give:
    a FromTable of those points (the data written into the diagram)."""
    name = ctx.p("VariableName", "simin").strip()
    data = ctx.converter.workspace.values.get(name)
    if not (isinstance(data, list) and len(data) >= 1 and isinstance(data[0], list)
            and len(data[0]) >= 2):
        raise Unmappable(f"its data `{name}` is not a matrix [t, u] that the model's "
                         "callbacks or --params give")
    times = [float(row[0]) for row in data]
    values: list[Any] = [row[1:] if len(row) > 2 else row[1] for row in data]
    if any(b < a for a, b in zip(times, times[1:])):
        raise Unmappable(f"the times of `{name}` do not increase")
    if ctx.p("Interpolate", "on") == "off":  # held between points: each a step
        steps_t, steps_v = [], []
        for k, (t, v) in enumerate(zip(times, values)):
            if k:
                steps_t.append(t)
                steps_v.append(values[k - 1])
            steps_t.append(t)
            steps_v.append(v)
        times, values = steps_t, steps_v
    after = ctx.p("OutputAfterFinalValue", "Extrapolation")
    if after == "Setting to zero":
        zero = [0.0] * len(values[-1]) if isinstance(values[-1], list) else 0.0
        times, values = times + [times[-1]], values + [zero]
    elif after == "Extrapolation":
        ctx.note("after the last point the last value is held (Simulink extrapolates)")
    elif after != "Holding final value":
        raise Unmappable(f"output after the final value: '{after}'")
    if ctx.p("SampleTime", "0") not in ("0", "-1", ""):
        ctx.note(f"sample time {ctx.p('SampleTime')} not applied: interpolated in time")
    return one_to_one(ctx, "FromTable", {"times": times, "values": values}, ins=())


def selector(ctx: BlockContext) -> Mapped:
    """A 1-D Selector by an index vector from its dialog (IndexOptions, or the first entry
    of the newer IndexOptionArray/IndexParamArray cell arrays)."""
    if ctx.p("NumberOfDimensions", "1") != "1":
        raise Unmappable(f"a {ctx.p('NumberOfDimensions')}-D selection")
    option = ctx.p("IndexOptions") or _first_cell(ctx.p("IndexOptionArray"))
    indices = ctx.p("Indices") or _first_cell(ctx.p("IndexParamArray"))
    if option not in ("Index vector (dialog)", "") or not indices:
        raise Unmappable(f"index option '{option}' (only an index vector from the dialog "
                         "is mapped)")
    values = ctx.value("Indices", indices)
    if ctx.p("IndexMode", "One-based") == "Zero-based":
        values = [v + 1 for v in values] if isinstance(values, list) else (
            values + 1 if isinstance(values, (int, float)) else f"({values}) + 1")
    return one_to_one(ctx, "Selector", {"indices": values if isinstance(values, (list, str))
                                        else [values]})


def _first_cell(text: str) -> str:
    """The first entry of a MATLAB cell array of strings: {'a','b'} -> a."""
    match = re.match(r"\s*\{\s*'((?:[^']|'')*)'", text or "")
    return match.group(1).replace("''", "'") if match else ""


def xy_graph(ctx: BlockContext) -> Mapped:
    return one_to_one(ctx, "XYGraph", {}, ins=("x", "y"), outs=())


def quantizer(ctx: BlockContext) -> Mapped:
    return one_to_one(ctx, "Quantizer", {"interval": ctx.value("QuantizationInterval")})


def rounding(ctx: BlockContext) -> Mapped:
    op = ctx.p("Operator", "floor").lower()
    if op not in ("floor", "ceil", "round", "fix"):
        raise Unmappable(f"rounding '{op}'")
    if op == "round":
        ctx.note("halves round away from zero, as MATLAB's round")
    return one_to_one(ctx, "Rounding", {"function": op})


def hit_crossing(ctx: BlockContext) -> Mapped:
    direction = ctx.p("HitCrossingDirection", "either").lower()
    if direction not in ("rising", "falling", "either"):
        raise Unmappable(f"direction '{direction}'")
    outs = () if ctx.p("ShowOutputPort", "on") == "off" else ("y",)
    return one_to_one(ctx, "HitCrossing", {"level": ctx.value("HitCrossingOffset"),
                                           "direction": direction}, outs=outs)


def polynomial(ctx: BlockContext) -> Mapped:
    return one_to_one(ctx, "Polynomial", {"coefficients": ctx.value("coefs")})


def multiport_switch(ctx: BlockContext) -> Mapped:
    order = ctx.p("DataPortOrder", "One-based contiguous")
    if order != "One-based contiguous":
        raise Unmappable(f"data port order '{order}' (only one-based contiguous is mapped)")
    n = ctx.int_value("Inputs")
    ins = ("control", *numbered("u", n))
    return one_to_one(ctx, "MultiportSwitch", {"inputs": n}, ins=ins)


def merge(ctx: BlockContext) -> Mapped:
    n = ctx.int_value("Inputs")
    params: dict[str, Any] = {"inputs": n}
    if ctx.p("InitialOutput", "[]") not in ("[]", ""):
        params["initial"] = ctx.value("InitialOutput")
    return one_to_one(ctx, "Merge", params, ins=numbered("u", n))


def algebraic_constraint(ctx: BlockContext) -> Mapped:
    return one_to_one(ctx, "AlgebraicConstraint", {"z0": ctx.value("InitialGuess")},
                      ins=("f",), outs=("z",))


def variable_delay(ctx: BlockContext) -> Mapped:
    kind = ctx.p("VariableDelayType", "Variable time delay")
    if kind != "Variable time delay":
        raise Unmappable(f"'{kind}' (blocksim's delay is a variable time delay, "
                         "y = u(t - tau(t)))")
    return one_to_one(ctx, "VariableTransportDelay", {
        "max_delay": ctx.value("MaximumDelay"), "initial_output": ctx.value("InitialOutput")},
        ins=("u", "tau"))


def signal_generator(ctx: BlockContext) -> Mapped:
    wave = ctx.p("WaveForm", "sine").lower()
    if wave not in ("sine", "square", "sawtooth"):
        raise Unmappable(f"waveform '{wave}'")
    freq = ctx.value("Frequency")
    if ctx.p("Units", "rad/sec").lower().startswith("rad"):
        freq = freq / (2 * 3.141592653589793) if isinstance(freq, (int, float)) \
            else f"({freq}) / (2 * pi)"
    return one_to_one(ctx, "SignalGenerator", {"waveform": wave, "amplitude":
                                               ctx.value("Amplitude"), "frequency": freq}, ins=())


def repeating_sequence(ctx: BlockContext) -> Mapped:
    times = ctx.value("rep_seq_t", ctx.p("rep_seq_t", "[0 2]"))
    if not isinstance(times, list) or not times or times[0] != 0:
        raise Unmappable("time values that do not start at 0 as numbers")
    return one_to_one(ctx, "RepeatingSequence", {"times": times, "values": ctx.value(
        "rep_seq_y", ctx.p("rep_seq_y", "[0 2]"))}, ins=())


def chirp(ctx: BlockContext) -> Mapped:
    return one_to_one(ctx, "Chirp", {"initial_frequency": ctx.value("f1", ctx.p("f1", "0.1")),
                                     "target_time": ctx.value("T", ctx.p("T", "100")),
                                     "target_frequency": ctx.value("f2", ctx.p("f2", "1"))},
                      ins=())


def random_number(ctx: BlockContext) -> Mapped:
    seed = ctx.value("Seed")
    if not isinstance(seed, (int, float)) or seed != int(seed) or seed < 0:
        raise Unmappable(f"seed `{ctx.p('Seed')}` is not a whole number >= 0")
    ctx.note("normal numbers of the same mean and variance, but blocksim's own generator: "
             "another sequence than MATLAB's for the same seed")
    return one_to_one(ctx, "RandomNumber", {"mean": ctx.value("Mean"),
                                            "variance": ctx.value("Variance"),
                                            "seed": int(seed),
                                            "sample_time": ctx.sample_time()}, ins=())


LINK_MAPPERS: dict[str, Mapper] = {
    "simulink/Sources/Repeating Sequence": repeating_sequence,
    "simulink/Sources/Chirp Signal": chirp,
    "slpidlib/PID Controller": pid,
    "slpidlib/Discrete PID Controller": pid,
    "simulink/Logic and Bit Operations/Compare To Constant":
        lambda ctx: compare_to(ctx, ctx.value("const", ctx.p("const", "3"))),
    "simulink/Logic and Bit Operations/Compare To Zero": lambda ctx: compare_to(ctx, 0),
    "simulink/Signal Routing/Manual Switch": manual_switch,
    "simulink/Discontinuities/Coulomb & Viscous Friction": coulomb,
    "simulink/Sinks/XY Graph": xy_graph,
}
SKIPPED_LINKS = {"powerlib/powergui": "the Simscape Electrical solver block: no signal ports "
                 "(any Simscape blocks in the model are placeholders)"}
BLOCK_MAPPERS: dict[str, Mapper] = {
    "SecondOrderIntegrator": second_order_integrator, "BusCreator": bus_creator,
    "BusSelector": bus_selector, "DataTypeConversion": pass_through,
    "SignalConversion": pass_through, "Quantizer": quantizer, "Rounding": rounding,
    "HitCross": hit_crossing, "Polyval": polynomial, "MultiPortSwitch": multiport_switch,
    "Merge": merge, "AlgebraicConstraint": algebraic_constraint,
    "VariableTransportDelay": variable_delay, "SignalGenerator": signal_generator,
    "RandomNumber": random_number, "RateTransition": rate_transition, "Sqrt": sqrt,
    "FromWorkspace": from_workspace, "Selector": selector,
}
