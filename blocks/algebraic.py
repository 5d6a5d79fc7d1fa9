"""Algebraic constraints: close a loop of direct dependencies by solving it, not by delay.

Some systems are naturally written as an equation the signals must satisfy at every instant:
a Shockley diode in a circuit, 0 = R2 (i + iD(uD)) + uC + uD, fixes uD implicitly. In a
diagram that equation is an algebraic loop. The AlgebraicConstraint block cuts it: its output
z is the unknown, its input the residual f(z), and the compiler hands the block the loop's
generated lines, which it iterates with a damped Newton method wherever the loop's signals are
needed (derivatives, zero crossings, outputs, events). Modes inside the loop (a switch, a
lookup table segment) stay latched while it iterates, like everywhere else in a step.
"""
from __future__ import annotations

from blocksim.blocktypes.blockspec import BlockType, Emit, Param, Port, Sizes, lit

# Iteration limits: Newton converges in a handful of steps from the warm start; the line
# search halves a step that would make the residual larger (or overflow an exponential).
MAX_NEWTON = 50
MAX_HALVINGS = 40


class AlgebraicConstraint(BlockType):
    """Output the value z that makes the input f(z) zero (the input must depend on z).

    Wire z into the blocks that compute the residual of an equation and that residual back
    into f. z is found to `tol` (relative to 1 + |z|) by Newton's method with a numerical
    derivative and step halving, starting from the previous solution (z0 at the start). It
    is scalar; a run fails, naming this block, if the iteration does not converge.
    """

    name = "AlgebraicConstraint"
    category = "Math"
    solves_loop = True
    params = (
        Param("z0", "scalar", 0.0, "initial guess for z"),
        Param("tol", "scalar", 1e-12, "convergence tolerance of z, relative to 1 + |z|",
              low=0.0),
    )
    inputs = (Port("f", "residual f(z), driven by a chain that reads z"),)
    outputs = (Port("z", "the solution of f(z) = 0"),)

    def feedthrough(self, p):
        return {"z": ()}  # z is the loop's unknown, not a function of f

    def check(self, p):
        if not p.tol > 0:
            return f"tol must be positive, got {p.tol}"
        return None

    def sizes(self, p, in_widths):
        if (in_widths.get("f") or 1) != 1:
            raise ValueError(f"the residual 'f' must be scalar, got width {in_widths['f']}")
        return Sizes({"z": 1})

    def output(self, e: Emit):
        z, f = e.y["z"][0], e.u["f"][0]
        warm = e.const([e.p.z0])  # the previous solution: only a starting point
        tol = lit(e.p.tol)
        body = [part for line in e.loop for part in line.split("\n")]

        def evaluate(at: str, indent: str) -> list[str]:
            return [f"{indent}{z} = {at}"] + [indent + line for line in body]

        lines = [f"_z = float({warm}[0])", "_done = False",
                 f"for _it in range({MAX_NEWTON}):"]
        lines += evaluate("_z", "    ")
        lines += [f"    _r = {f}",
                  "    if _r == 0.0:",
                  "        _done = True",
                  "        break",
                  "    _h = 1e-7 * (1.0 + abs(_z))"]
        lines += evaluate("_z + _h", "    ")
        lines += [f"    _d = ({f} - _r) / _h",
                  "    if not _d or _d != _d:",
                  "        raise ArithmeticError('algebraic loop: the residual does not "
                  "change with z (zero derivative)')",
                  "    _step = -_r / _d",
                  "    for _half in range(" + str(MAX_HALVINGS) + "):",
                  "        try:"]
        lines += evaluate("_z + _step", "            ")
        lines += [f"            if abs({f}) < abs(_r):",
                  "                break",
                  "        except (OverflowError, ValueError):",
                  "            pass",
                  "        _step = 0.5 * _step",
                  "    _z = _z + _step",
                  f"    if abs(_step) <= {tol} * (1.0 + abs(_z)):",
                  "        _done = True",
                  "        break",
                  "if not _done:",
                  f"    raise ArithmeticError('algebraic loop: Newton did not converge in "
                  f"{MAX_NEWTON} iterations (last z = %r)' % _z)",
                  f"{warm}[0] = _z",
                  f"{z} = _z"]
        return {"z": lines}


BLOCK_TYPES = (AlgebraicConstraint,)
