"""Math blocks: gains, sums, products and formulas, all elementwise with scalar expansion."""
from __future__ import annotations

import keyword
import math
from collections.abc import Mapping

from blocksim.expressions import language as expressions
from blocksim.blocktypes.blockspec import BlockType, Emit, EventKind, Param, Port, Sizes, broadcast, each, lit, size_of
from blocksim.compiler.limits import MAX_PORTS
from blocksim.errors import ExpressionError


def elementwise_width(widths: Mapping[str, int | None]) -> int:
    """The width of an elementwise result: each input has width 1 (expanded) or the same n.

    Unknown widths (None, while sizes are still propagating) count as 1; a mismatch raises
    ValueError, which the compiler reports naming the block.
    """
    known = {port: w or 1 for port, w in widths.items()}
    n = max(known.values(), default=1)
    bad = [f"'{port}' has width {w}" for port, w in known.items() if w not in (1, n)]
    if bad:
        raise ValueError(f"input {', '.join(bad)} where 1 or {n} (the widest input) are needed")
    return n


def _pick(seq: list[str], k: int) -> str:
    return seq[k] if len(seq) > 1 else seq[0]


class Gain(BlockType):
    """Multiply the input by `k` (elementwise; a vector k widens a scalar input)."""

    name = "Gain"
    category = "Math"
    params = (Param("k", "vector", 1.0, "gain"),)
    inputs = (Port("u", "input"),)
    outputs = (Port("y", "k * u"),)

    def sizes(self, p, in_widths):
        return Sizes({"y": max(in_widths.get("u") or 1, size_of(p.k))})

    def output(self, e: Emit):
        k = [lit(v) for v in broadcast(e.p.k, len(e.y["y"]))]
        return {"y": each(e.y["y"], "{k} * {u}", k=k, u=e.u["u"])}


class Sum(BlockType):
    """Add and subtract inputs: `signs` such as "+-+" gives ports u1, u2, u3."""

    name = "Sum"
    category = "Math"
    params = (Param("signs", "signs", "++", "one + or - per input"),)
    outputs = (Port("y", "signed sum"),)

    def input_ports(self, p):
        return tuple(Port(f"u{i + 1}", f"input with sign {s}") for i, s in enumerate(p.signs))

    def check(self, p):
        if not p.signs or set(p.signs) - set("+-"):
            return f"signs must be a non-empty string of + and -, got {p.signs!r}"
        return None

    def output(self, e: Emit):
        signs = e.p.signs
        terms = []
        for i, s in enumerate(signs):
            terms.append((s, e.u[f"u{i + 1}"]))
        lines = []
        for k, target in enumerate(e.y["y"]):
            expr = ""
            for s, u in terms:
                v = u[k] if len(u) > 1 else u[0]
                expr += (f"{v}" if not expr and s == "+" else f" {s} {v}" if expr else f"-{v}")
            lines.append(f"{target} = {expr}")
        return {"y": lines}


class Product(BlockType):
    """Multiply and divide inputs elementwise: `ops` such as "**/" gives y = u1 * u2 / u3.

    One input port u1, u2, ... per character of `ops`; a leading "/" divides 1 by that
    input. Inputs are vectors of one common width or scalars, which expand. A division by
    zero stops the run with an error naming this block.
    """

    name = "Product"
    category = "Math"
    params = (Param("ops", "signs", "**", "one * (multiply) or / (divide) per input"),)
    inputs = (Port("u1", "first input; one port u1, u2, ... per character of ops"),
              Port("u2", "second input (with the default ops)"))
    outputs = (Port("y", "product of the inputs"),)

    def input_ports(self, p):
        return tuple(Port(f"u{i + 1}", "divisor" if op == "/" else "factor")
                     for i, op in enumerate(p.ops))

    def check(self, p):
        if not p.ops or set(p.ops) - set("*/"):
            return f"ops must be a non-empty string of * and /, got {p.ops!r}"
        return None

    def sizes(self, p, in_widths):
        return Sizes({"y": elementwise_width(in_widths)})

    def output(self, e: Emit):
        lines = []
        for k, y in enumerate(e.y["y"]):
            expr = ""
            for i, op in enumerate(e.p.ops):
                v = _pick(e.u[f"u{i + 1}"], k)
                expr = (f"{expr} {op} {v}" if expr else v if op == "*" else f"1.0 / {v}")
            lines.append(f"{y} = {expr}")
        return {"y": lines}


# Smooth functions: code templates over the inputs' element names.
_ONE_INPUT = {
    "exp": "math.exp({u})", "log": "math.log({u})", "log10": "math.log10({u})",
    "sqrt": "math.sqrt({u})", "square": "{u} * {u}", "reciprocal": "1.0 / {u}",
    "sin": "math.sin({u})", "cos": "math.cos({u})", "tan": "math.tan({u})",
    "asin": "math.asin({u})", "acos": "math.acos({u})", "atan": "math.atan({u})",
    "sinh": "math.sinh({u})", "cosh": "math.cosh({u})", "tanh": "math.tanh({u})",
}
_TWO_INPUTS = {"atan2": "math.atan2({a}, {b})", "pow": "math.pow({a}, {b})",
               "hypot": "math.hypot({a}, {b})"}
_EXTREMES = ("min", "max")       # a latched choice between u1 and u2
_ROUNDING = ("floor", "ceil")    # a latched integer k of u
_REMAINDERS = ("mod", "rem")     # a latched integer k of u1/u2; y = u1 - k*u2
FUNCTIONS = (*_ONE_INPUT, *_ROUNDING, *_TWO_INPUTS, *_EXTREMES, *_REMAINDERS)


def _floor(q: float) -> float:
    return float(math.floor(q)) if math.isfinite(q) else q


def _ceil(q: float) -> float:
    return float(math.ceil(q)) if math.isfinite(q) else q


class IntegerPart:
    """An integer part k of q = u1/u2 (floor, ceil or trunc) kept as a latched mode.

    k stays valid while q lies in its band (lo, hi), with one end closed as the rounding
    rule says; two zero crossings watch the ends through s*(u1 - lo*u2) and s*(hi*u2 - u1)
    (s, the latched sign of u2, makes them positive inside). `update` runs at events: it
    moves k at least one step in the direction the crossing signs say, further if q jumped.
    The band tests of neighbouring k are exact complements, so the event iteration settles.
    """

    def __init__(self, rule: str):
        self.rule = rule  # "floor", "ceil" or "trunc"

    def value(self, q: float) -> float:
        if self.rule == "floor":
            return _floor(q)
        if self.rule == "ceil":
            return _ceil(q)
        return _floor(q) if q >= 0.0 else _ceil(q)

    def up(self, q: float) -> float:
        """The integer part just above q."""
        if self.rule == "floor" or (self.rule == "trunc" and q >= 0.0):
            return _floor(q)
        return _floor(q) + 1.0

    def down(self, q: float) -> float:
        """The integer part just below q."""
        if self.rule == "ceil" or (self.rule == "trunc" and q <= 0.0):
            return _ceil(q)
        return _ceil(q) - 1.0

    def band(self, k: float) -> tuple[float, float]:
        if self.rule == "floor" or (self.rule == "trunc" and k > 0.0):
            return k, k + 1.0
        if self.rule == "ceil" or k < 0.0:
            return k - 1.0, k
        return -1.0, 1.0  # trunc, k == 0: open at both ends

    def closed_low(self, k: float) -> bool:
        return self.rule == "floor" or (self.rule == "trunc" and k > 0.0)

    def closed_high(self, k: float) -> bool:
        return self.rule == "ceil" or (self.rule == "trunc" and k < 0.0)

    def update_code(self, m: list[str], u1: str, u2: str, zn: list[str], var: str) -> list[str]:
        """`update` written out for this rule (compiled code calls no Python helper): the
        new (k, s, lo, hi) into `var`k, `var`s, `var`lo, `var`hi."""
        k, s = m[0], m[1]
        nk, ns, lo, hi, q = (f"{var}k", f"{var}s", f"{var}lo", f"{var}hi", f"{var}q")
        zn_lo, zn_hi, zn_s = zn
        fl = "float(np.floor({0}))".format
        ce = "float(np.ceil({0}))".format
        value, up, down, closed_low, closed_high = {
            "floor": (fl(q), fl(q), f"{ce(q)} - 1.0", "True", "False"),
            "ceil": (ce(q), f"{fl(q)} + 1.0", ce(q), "False", "True"),
            "trunc": (f"({fl(q)} if {q} >= 0.0 else {ce(q)})",
                      f"({fl(q)} if {q} >= 0.0 else {fl(q)} + 1.0)",
                      f"({ce(q)} if {q} <= 0.0 else {ce(q)} - 1.0)",
                      f"{k} > 0.0", f"{k} < 0.0"),
        }[self.rule]
        band = {"floor": [f"{lo} = {nk}", f"{hi} = {nk} + 1.0"],
                "ceil": [f"{lo} = {nk} - 1.0", f"{hi} = {nk}"],
                "trunc": [f"if {nk} > 0.0:", f"    {lo} = {nk}", f"    {hi} = {nk} + 1.0",
                          f"elif {nk} < 0.0:", f"    {lo} = {nk} - 1.0", f"    {hi} = {nk}",
                          "else:", f"    {lo} = -1.0", f"    {hi} = 1.0"]}[self.rule]
        return [f"{nk} = {k}",
                f"{ns} = {s}",
                f"if {zn_s} != {s}:",  # also the first call (s = 0, see `initial`)
                f"    {ns} = {zn_s}",
                f"    {q} = {u1} / {u2} if {u2} != 0.0 else 0.0",
                f"    {nk} = {value} if {ns} != 0.0 and {u2} != 0.0 else 0.0",
                f"elif {s} != 0.0:",
                f"    {q} = {u1} / {u2} if {u2} != 0.0 else {k}",
                f"    if {zn_hi} < 0.0 or ({zn_hi} == 0.0 and not ({closed_high})):",
                f"        {nk} = max({k} + 1.0, {up})",
                f"    elif {zn_lo} < 0.0 or ({zn_lo} == 0.0 and not ({closed_low})):",
                f"        {nk} = min({k} - 1.0, {down})",
                *band]

    def initial(self) -> list[float]:
        """Discrete states (k, s, lo, hi) before the first update: s = 0 differs from the
        sign of any u2 that is not 0, which forces a start (and with u2 = 0, k = 0 is the
        start). Not NaN: the zero crossings read s, and must stay finite for the compiled
        loop to settle the start itself."""
        return [0.0, 0.0, *self.band(0.0)]

    def update(self, k: float, s: float, u1: float, u2: float, zn_lo: float, zn_hi: float,
               zn_s: float) -> tuple[float, float, float, float]:
        """(k, s, lo, hi) after an event, from the signs just after it.

        k starts from q itself when s is unset or u2 changed sign; the later passes of the
        same event iteration (the initial one included) then correct it by the signs.
        """
        if zn_s != s:  # also the first call (s = 0, see `initial`)
            s = zn_s
            k = self.value(u1 / u2) if s != 0.0 and u2 != 0.0 else 0.0
        elif s != 0.0:
            q = u1 / u2 if u2 != 0.0 else k
            if zn_hi < 0.0 or (zn_hi == 0.0 and not self.closed_high(k)):
                k = max(k + 1.0, self.up(q))
            elif zn_lo < 0.0 or (zn_lo == 0.0 and not self.closed_low(k)):
                k = min(k - 1.0, self.down(q))
        return (k, s, *self.band(k))


class MathFunction(BlockType):
    """Apply a mathematical function elementwise (with scalar expansion of two inputs).

    One-input functions read port u, two-input ones u1 and u2 (atan2(u1, u2), pow = u1**u2,
    hypot, min, max, mod, rem). Domain errors (log of a negative number) stop the run with
    an error naming this block. The discontinuous ones are latched modes, so error control
    stays honest: min/max switch branch where u1 - u2 changes sign; floor and ceil keep the
    integer k as a discrete state and watch the crossings of u with the ends of k's
    interval; mod (sign of u2, like MATLAB) and rem (sign of u1) do the same with the integer
    part of u1/u2, and return u1 when u2 is 0.
    """

    name = "MathFunction"
    category = "Math"
    # The discontinuous functions log their own name when their integer changes.
    event_kinds = (
        *(EventKind(f, f"function {f}: the integer k changed (u crossed an end of k's "
                       f"interval)") for f in _ROUNDING),
        *(EventKind(f, f"function {f}: the integer part of u1/u2 changed") for f in _REMAINDERS),
    )
    params = (Param("function", "choice", "exp", "the function", choices=FUNCTIONS),)
    inputs = (Port("u", "argument of a one-input function"),
              Port("u1", "first argument of a two-input function"),
              Port("u2", "second argument of a two-input function"))
    outputs = (Port("y", "f(u) or f(u1, u2)"),)

    def input_ports(self, p):
        one = p.function in _ONE_INPUT or p.function in _ROUNDING
        return self.inputs[:1] if one else self.inputs[1:]

    def sizes(self, p, in_widths):
        n = elementwise_width(in_widths)
        f = p.function
        if f in _EXTREMES:
            return Sizes({"y": n}, zero_crossings=n)
        if f in _ROUNDING:
            return Sizes({"y": n}, discrete=4 * n, zero_crossings=2 * n)
        if f in _REMAINDERS:
            return Sizes({"y": n}, discrete=4 * n, zero_crossings=3 * n)
        return Sizes({"y": n})

    @staticmethod
    def integer_part(p) -> IntegerPart:
        return IntegerPart({"floor": "floor", "ceil": "ceil", "mod": "floor",
                            "rem": "trunc"}[p.function])

    def initial_discrete(self, p, n):
        return self.integer_part(p).initial() * (n // 4) if n else []

    def zc_directions(self, p, count):
        if p.function in _REMAINDERS:
            return [-1, -1, 0] * (count // 3)  # band ends: leaving only; sign of u2: both
        if p.function in _ROUNDING:
            return [-1] * count
        return [0] * count

    def _args(self, e: Emit, k: int) -> tuple[str, str]:
        if "u" in e.u:
            return _pick(e.u["u"], k), "1.0"
        return _pick(e.u["u1"], k), _pick(e.u["u2"], k)

    def output(self, e: Emit):
        f, lines = e.p.function, []
        for k, y in enumerate(e.y["y"]):
            a, b = self._args(e, k)
            if f in _ONE_INPUT:
                expr = _ONE_INPUT[f].format(u=a)
            elif f in _TWO_INPUTS:
                expr = _TWO_INPUTS[f].format(a=a, b=b)
            elif f in _EXTREMES:
                test = "<=" if f == "min" else ">="
                expr = f"({a} if {e.z[k]} {test} 0.0 else {b})"
            elif f in _ROUNDING:
                expr = e.m[4 * k]
            else:
                expr = f"{a} - {e.m[4 * k]} * {b}"
            lines.append(f"{y} = {expr}")
        return {"y": lines}

    def zero_crossing(self, e: Emit):
        f, lines = e.p.function, []
        for k in range(len(e.y["y"])):
            a, b = self._args(e, k)
            if f in _EXTREMES:
                lines.append(f"{e.g[k]} = {a} - {b}")
            elif f in _ROUNDING:
                lo, hi = e.m[4 * k + 2], e.m[4 * k + 3]
                lines += [f"{e.g[2 * k]} = {a} - {lo}", f"{e.g[2 * k + 1]} = {hi} - {a}"]
            elif f in _REMAINDERS:
                s, lo, hi = e.m[4 * k + 1:4 * k + 4]
                lines += [f"{e.g[3 * k]} = {s} * ({a} - {lo} * {b})",
                          f"{e.g[3 * k + 1]} = {s} * ({hi} * {b} - {a})",
                          f"{e.g[3 * k + 2]} = {b}"]
        return lines

    def update(self, e: Emit):
        f = e.p.function
        if f not in _ROUNDING and f not in _REMAINDERS:
            return []
        part = self.integer_part(e.p)
        var, lines = f"_r{e.index}", []
        for k in range(len(e.y["y"])):
            a, b = self._args(e, k)
            m = e.m[4 * k:4 * k + 4]
            if f in _ROUNDING:
                zn = [e.zn[2 * k], e.zn[2 * k + 1], "1.0"]
            else:
                zn = e.zn[3 * k:3 * k + 3]
            new = [f"{var}k", f"{var}s", f"{var}lo", f"{var}hi"]
            lines += [f"if {zn[2]} != {m[1]} or {zn[0]} <= 0.0 or {zn[1]} <= 0.0:",  # else: stays
                      *["    " + line for line in part.update_code(m, a, b, zn, var)],
                      f"    if {new[0]} != {m[0]} or {new[1]} != {m[1]}:",
                      f"        {', '.join(m)} = {', '.join(new)}",
                      "        if init: changed = True",  # setting up the mode is no event
                      f"        else: {e.event(f)}"]
        return lines


class Expression(BlockType):
    """Compute a formula of named inputs, elementwise: e.g. `k * sin(x) + y` with ports x, y.

    `inputs` lists the input names (one port each); the formula may use them, the diagram
    parameters (fixed at compile time, the inputs win a name clash), the constants pi, e,
    inf (an input or diagram parameter named pi or e shadows that constant) and the
    functions of the expression language. It is checked and translated to
    Python when the model compiles and never evaluated as text, so a diagram file cannot
    run code through it. The output is as wide as the widest input (scalars expand).
    """

    name = "Expression"
    category = "Math"
    params = (
        Param("formula", "text", "u", "formula in the inputs and diagram parameters"),
        Param("inputs", "text", "u", "comma-separated input names, one port each"),
    )
    inputs = (Port("u", "one port per name in `inputs` (default: u)"),)
    outputs = (Port("y", "value of the formula"),)

    @staticmethod
    def input_names(p) -> list[str]:
        return [name.strip() for name in p.inputs.split(",")]

    def input_ports(self, p):
        return tuple(Port(name, "formula input") for name in self.input_names(p) if name)

    @staticmethod
    def _scope(p) -> dict:
        return getattr(p, "scope", None) or {}

    def check(self, p):
        names = self.input_names(p)
        for name in names:
            if not name.isidentifier() or keyword.iskeyword(name):
                return f"input name {name!r} is not a valid name (inputs: {p.inputs!r})"
            if name in expressions.CONSTANTS and name not in expressions.SHADOWABLE:
                return f"input name '{name}' clashes with the built-in constant {name}"
        if len(set(names)) != len(names):
            return f"input names repeat: {p.inputs!r}"
        try:
            expressions.to_code(p.formula, {name: name for name in names}, self._scope(p))
        except ExpressionError as exc:
            return f"formula: {exc}"
        return None

    def sizes(self, p, in_widths):
        return Sizes({"y": elementwise_width(in_widths)})

    def output(self, e: Emit):
        names, scope = self.input_names(e.p), self._scope(e.p)
        return {"y": [f"{y} = " + expressions.to_code(
            e.p.formula, {name: _pick(e.u[name], k) for name in names}, scope)
            for k, y in enumerate(e.y["y"])]}


class Mux(BlockType):
    """Concatenate the inputs u1..un into one vector, in port order (widths add up)."""

    name = "Mux"
    category = "Signal Routing"
    params = (Param("inputs", "int", 2, "number of inputs", low=1, high=MAX_PORTS),)
    inputs = (Port("u1", "first part; one port u1, u2, ... per input"),
              Port("u2", "second part (with the default 2 inputs)"))
    outputs = (Port("y", "u1, u2, ... one after the other"),)

    def input_ports(self, p):
        return tuple(Port(f"u{i + 1}", f"part {i + 1}") for i in range(p.inputs))

    def sizes(self, p, in_widths):
        return Sizes({"y": sum(in_widths.get(f"u{i + 1}") or 1 for i in range(p.inputs))})

    def output(self, e: Emit):
        parts = [v for i in range(e.p.inputs) for v in e.u[f"u{i + 1}"]]
        return {"y": [f"{y} = {v}" for y, v in zip(e.y["y"], parts)]}


class Demux(BlockType):
    """Split the input vector evenly into outputs y1..yn, in order.

    The input width must be a multiple of n; each output gets width/n consecutive elements.
    """

    name = "Demux"
    category = "Signal Routing"
    params = (Param("outputs", "int", 2, "number of outputs", low=1,
                    high=MAX_PORTS),)
    inputs = (Port("u", "vector to split"),)
    outputs = (Port("y1", "first part; one port y1, y2, ... per output"),
               Port("y2", "second part (with the default 2 outputs)"))

    def output_ports(self, p):
        return tuple(Port(f"y{i + 1}", f"part {i + 1}") for i in range(p.outputs))

    def sizes(self, p, in_widths):
        n, width = p.outputs, in_widths.get("u")
        if width is None:  # not known yet: provisional
            return Sizes({f"y{i + 1}": 1 for i in range(n)})
        if width % n:
            raise ValueError(f"the input has width {width}, which cannot be split evenly into "
                             f"{n} outputs")
        return Sizes({f"y{i + 1}": width // n for i in range(n)})

    def output(self, e: Emit):
        u, out = e.u["u"], {}
        size = len(u) // e.p.outputs
        for i in range(e.p.outputs):
            port = f"y{i + 1}"
            out[port] = [f"{y} = {v}" for y, v in zip(e.y[port], u[i * size:(i + 1) * size])]
        return out


BLOCK_TYPES = (Gain, Sum, Product, MathFunction, Expression, Mux, Demux,)
