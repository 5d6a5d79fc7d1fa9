"""Trigonometric and hyperbolic functions (Simulink's Trigonometric Function, sincos with
two outputs) and Wrap To Zero, whose jump to 0 above a threshold is a located event."""
from __future__ import annotations

from blocksim.blocktypes.blockspec import BlockType, Emit, Param, Port, Sizes, broadcast, lit

from .math_ops import elementwise_width
from .nonlinear import common_width, pick

# One-input functions: code templates over an element name. Python's math functions raise
# ValueError outside their domain (asin(1.5), acosh(0.5), atanh(2)), which stops the run
# naming the block, as MathFunction does; on the numba backend they give NaN and the engine
# re-evaluates the Python code to name the block the same way.
_ONE_INPUT = {name: f"math.{name}({{u}})" for name in (
    "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh",
    "atanh")}
FUNCTIONS = (*_ONE_INPUT, "atan2", "sincos")


class Trigonometric(BlockType):
    """A trigonometric or hyperbolic function of the input, elementwise (radians).

    sin cos tan asin acos atan sinh cosh tanh asinh acosh atanh read port u; atan2 reads
    u1 (y) and u2 (x) and gives the angle of the point (u2, u1) in [-pi, pi] (width-1
    inputs expand); sincos reads u and has two outputs, sin and cos. The other functions
    have one output y.

    Domain errors (asin or acos of |u| > 1, acosh of u < 1, atanh of |u| >= 1) stop the run
    with an error naming this block, as MathFunction does. tan has no poles in floating
    point (tan of the double nearest pi/2 is 1.6e16): an input sweeping through pi/2 makes
    the output jump from very large positive to very large negative values inside a step,
    with no event; keep such an input away from the poles, or feed tan only where that is
    meant. atan2's jump at the negative x axis (from pi to -pi) is not located either.
    """

    name = "Trigonometric"
    category = "Math"
    params = (Param("function", "choice", "sin", "the function (angles in radians)",
                    choices=FUNCTIONS),)
    inputs = (Port("u", "argument (every function but atan2)"),
              Port("u1", "atan2: the y coordinate"), Port("u2", "atan2: the x coordinate"))
    outputs = (Port("y", "f(u), or atan2(u1, u2)"),
               Port("sin", "sincos: sin(u)"), Port("cos", "sincos: cos(u)"))

    def input_ports(self, p):
        return self.inputs[1:] if p.function == "atan2" else self.inputs[:1]

    def output_ports(self, p):
        return self.outputs[1:] if p.function == "sincos" else self.outputs[:1]

    def sizes(self, p, in_widths):
        n = elementwise_width(in_widths)
        return Sizes({port.name: n for port in self.output_ports(p)})

    def output(self, e: Emit):
        f = e.p.function
        if f == "sincos":
            return {name: [f"{y} = math.{name}({pick(e.u['u'], k)})"
                           for k, y in enumerate(e.y[name])] for name in ("sin", "cos")}
        if f == "atan2":
            return {"y": [f"{y} = math.atan2({pick(e.u['u1'], k)}, {pick(e.u['u2'], k)})"
                          for k, y in enumerate(e.y["y"])]}
        return {"y": [f"{y} = {_ONE_INPUT[f].format(u=pick(e.u['u'], k))}"
                      for k, y in enumerate(e.y["y"])]}


class WrapToZero(BlockType):
    """Output 0 where the input exceeds a threshold, else the input (Simulink's Wrap To Zero).

    y = 0 where u > threshold, y = u where u <= threshold, elementwise. Which side u is on
    is a latched mode (one zero crossing of u - threshold per element), so the jump happens
    at the located instant u crosses the threshold and no step straddles it; at u equal to
    the threshold the output is u.
    """

    name = "WrapToZero"
    category = "Discontinuities"
    params = (Param("threshold", "vector", 255.0, "the output is 0 above it (same unit as u)"),)
    inputs = (Port("u", "input"),)
    outputs = (Port("y", "0 where u > threshold, else u"),)

    def sizes(self, p, in_widths):
        n = common_width(p, in_widths, ("u",), ("threshold",))
        return Sizes({"y": n}, zero_crossings=n)

    def zero_crossing(self, e: Emit):
        limit = broadcast(e.p.threshold, len(e.g))
        return [f"{g} = {pick(e.u['u'], k)} - {lit(limit[k])}" for k, g in enumerate(e.g)]

    def output(self, e: Emit):
        return {"y": [f"{y} = (0.0 if {e.z[k]} > 0.0 else {pick(e.u['u'], k)})"
                      for k, y in enumerate(e.y["y"])]}


BLOCK_TYPES = (Trigonometric, WrapToZero,)
