"""More continuous blocks in Simulink's style: Derivative (a filtered derivative, or a
difference quotient at a sample period) and Zero-Pole (a transfer function given by its
zeros, poles and gain, realised like TransferFunction)."""
from __future__ import annotations

import cmath
import functools

import numpy as np

from blocksim.expressions import language as expressions
from blocksim.blocktypes.blockspec import BlockType, ContinuousOrSampled, Emit, Param, Port, Sizes, lit
from blocksim.errors import ExpressionError

from .linear import TransferFunction, _check_coefficients, _num_degree
from .nonlinear import pick


class Derivative(ContinuousOrSampled, BlockType):
    """The time derivative du/dt of the input: filtered, or a difference quotient when sampled.

    sample_time 0 (default), filtered: y = s/(tau s + 1) u, realised with one state x per
    element, x' = (u - x)/tau, y = (u - x)/tau. It is the derivative seen through a
    first-order lag of time constant tau: for u = a t + b the output is exactly
    a (1 - exp(-t/tau)), within 1e-9 |a| of a after 21 tau; for a sine of angular
    frequency w its amplitude is w/sqrt(1 + (w tau)^2) of the true one, its phase lags by
    atan(w tau). The state starts at u(0), so y(0) = 0 (the input is taken as constant
    before the start). A jump of u of height d gives a pulse d/tau exp(-t/tau) (area d),
    not an infinite spike. This is the recommended form: it is a linear system the solver
    integrates to its tolerance, with no dependence on step sizes. tau must be > 0.

    sample_time T > 0 (or [T, offset], -1 to inherit a discrete input's rate), difference:
    at each hit y = (u(t_k) - u(t_k - T)) / T, held until the next hit, and 0 at the first
    hit. For a smooth u the error is about T/2 |u''| (u = a t + b: exact). Simulink's
    Derivative differentiates across the solver's major steps; blocksim does not, because
    those steps are not part of a model's meaning (they change with the tolerance, the
    solver and the backend), so a derivative over them would be noise of unknown size.
    """

    name = "Derivative"
    category = "Continuous"
    params = (
        Param("tau", "scalar", 0.01, "filter time constant of s/(tau s + 1), > 0 "
              "(sample_time 0); the filter coefficient N of Simulink's PID is 1/tau", unit="s"),
        Param("sample_time", "vector", 0.0, "0: continuous, filtered; a period T > 0 (or "
              "[T, offset], -1 inherits): the difference quotient at each hit", unit="s"),
    )
    inputs = (Port("u", "input"),)
    outputs = (Port("y", "du/dt: filtered, or the difference quotient at the hits"),)

    def check(self, p):
        problem = self.sample_time_problem(p)
        if problem:
            return problem
        if not self.is_discrete(p) and not p.tau > 0.0:
            return (f"parameter 'tau' must be > 0 for the continuous (filtered) derivative, "
                    f"got {p.tau:g}; for an unfiltered difference quotient give a "
                    f"sample_time > 0")
        return None

    def sizes(self, p, in_widths):
        n = in_widths.get("u") or 1
        if self.is_discrete(p):
            return Sizes({"y": n}, discrete=3 * n)  # held y, previous u, started
        return Sizes({"y": n}, states=n)

    # ----- continuous: the filter -----
    def output(self, e: Emit):
        if e.x:
            rate = lit(1.0 / e.p.tau)
            return {"y": [f"{y} = ({pick(e.u['u'], k)} - {e.x[k]}) * {rate}"
                          for k, y in enumerate(e.y["y"])]}
        return {"y": [f"{y} = {m}" for y, m in zip(e.y["y"], e.m)]}

    def derivative(self, e: Emit):
        rate = lit(1.0 / e.p.tau) if e.x else ""
        return [f"{d} = ({pick(e.u['u'], k)} - {e.x[k]}) * {rate}" for k, d in enumerate(e.dx)]

    def update(self, e: Emit):
        return [f"if init: {x} = {pick(e.u['u'], k)}" for k, x in enumerate(e.x)]

    # ----- discrete: the difference quotient -----
    def sample_output(self, e: Emit):
        n = len(e.y["y"])
        held, prev, started = e.m[:n], e.m[n:2 * n], e.m[2 * n:]
        period = lit(e.rate.period)
        return {"y": [f"{held[k]} = (({pick(e.u['u'], k)} - {prev[k]}) / {period} "
                      f"if {started[k]} != 0.0 else 0.0)" for k in range(n)]}

    def sample_update(self, e: Emit):
        n = len(e.y["y"])
        lines = [f"{prev} = {pick(e.u['u'], k)}" for k, prev in enumerate(e.m[n:2 * n])]
        return lines + [f"{started} = 1.0" for started in e.m[2 * n:]]


# ----- Zero-Pole -----

def parse_roots(text: str, scope) -> list[complex]:
    """A comma-separated list of roots: each a complex literal ("-2+3j", "-2-3i") or a
    real formula over the diagram parameters ("-a"); "" is no roots. ValueError says which
    item is wrong. Never evaluated as Python: complex() parses a literal, the expression
    language a formula."""
    roots = []
    for item in (part.strip() for part in text.split(",")):
        if not item:
            if text.strip():
                raise ValueError(f"an empty item in {text!r}")
            continue
        literal = item.replace(" ", "").replace("i", "j")
        try:
            roots.append(complex(literal))
            continue
        except ValueError:
            pass
        try:
            value = expressions.evaluate(item, scope)
        except ExpressionError as exc:
            raise ValueError(f"{item!r} is neither a complex number like -2+3j nor a real "
                             f"formula ({exc})") from None
        if np.ndim(value) != 0:
            raise ValueError(f"{item!r} is an array; give one root per item")
        roots.append(complex(float(value)))
    for root in roots:
        if not (cmath.isfinite(root)):
            raise ValueError(f"root {root} is not finite")
    return roots


def _conjugates_problem(roots: list[complex]) -> str | None:
    """A message if the complex roots do not come in conjugate pairs (each given twice)."""
    for root in roots:
        if root.imag != 0.0 and roots.count(root) != roots.count(root.conjugate()):
            return (f"complex roots must come in conjugate pairs: {_shown(root)} is given "
                    f"{roots.count(root)} times, {_shown(root.conjugate())} "
                    f"{roots.count(root.conjugate())} times")
    return None


def _shown(root: complex) -> str:
    return f"{root.real:g}{root.imag:+g}j"


@functools.lru_cache(maxsize=1024)
def _polynomial(roots: tuple[complex, ...]) -> tuple[float, ...]:
    """The real monic polynomial with these roots (conjugate pairs), highest power first."""
    if not roots:
        return (1.0,)
    return tuple(float(v) for v in np.real(np.poly(np.array(roots))))


class ZeroPole(BlockType):
    """A transfer function given by its zeros, poles and gain, elementwise on a vector input.

    H(s) = k (s - z1)...(s - zm) / ((s - p1)...(s - pn)).

    Zeros and poles are comma-separated lists: a real root as a number or a formula over
    the diagram parameters ("-a"), a complex one as a literal such as -2+3j (or -2+3i),
    each complex root with its conjugate given too (-2+3j, -2-3j), so the system is real.
    An empty list means none. It must be proper (no more zeros than poles). The product
    form is multiplied out (numpy.poly) at compile time and realised in controllable
    canonical form with zero initial state, exactly as TransferFunction; the output depends
    directly on the input only when there are as many zeros as poles.
    """

    name = "ZeroPole"
    category = "Continuous"
    params = (
        Param("zeros", "text", "", "zeros, comma-separated (e.g. -1, -2+3j, -2-3j; empty: "
              "none)"),
        Param("poles", "text", "-1", "poles, comma-separated (e.g. -1, -0.5+2j, -0.5-2j)"),
        Param("gain", "scalar", 1.0, "gain k: the factor in front of the products (not the "
              "DC gain)"),
    )
    inputs = (Port("u", "input"),)
    outputs = (Port("y", "output"),)

    @staticmethod
    def roots(p) -> tuple[list[complex], list[complex]]:
        """(zeros, poles); ValueError names the parameter and item that is wrong."""
        found = []
        for name in ("zeros", "poles"):
            try:
                found.append(parse_roots(p[name], getattr(p, "scope", {}) or {}))
            except ValueError as exc:
                raise ValueError(f"parameter '{name}': {exc}") from None
        return found[0], found[1]

    @classmethod
    def polynomials(cls, p) -> tuple[tuple[float, ...], tuple[float, ...]]:
        """(num, den), highest power first: num = k * poly(zeros), den = poly(poles)."""
        zeros, poles = cls.roots(p)
        num = tuple(p.gain * c for c in _polynomial(tuple(zeros)))
        return num, _polynomial(tuple(poles))

    @classmethod
    def coefficients(cls, p) -> tuple[list[float], list[float]]:
        num, den = cls.polynomials(p)
        return TransferFunction.coefficients(_Coefficients(num, den))

    def check(self, p):
        try:
            zeros, poles = self.roots(p)
        except ValueError as exc:
            return str(exc)
        for name, roots in (("zeros", zeros), ("poles", poles)):
            problem = _conjugates_problem(roots)
            if problem:
                return f"parameter '{name}': {problem}"
        if len(zeros) > len(poles):
            return (f"improper: {len(zeros)} zeros but only {len(poles)} poles (give no more "
                    f"zeros than poles)")
        num, den = self.polynomials(p)
        return _check_coefficients(num, den)

    def feedthrough(self, p):
        try:
            num, den = self.polynomials(p)
            direct = _num_degree(num) == len(den) - 1 and p.gain != 0.0
        except (ValueError, TypeError):
            direct = True
        return {"y": ("u",) if direct else ()}

    def sizes(self, p, in_widths):
        w = in_widths.get("u") or 1
        _, den = self.polynomials(p)
        return Sizes({"y": w}, states=(len(den) - 1) * w)

    def output(self, e: Emit):
        return TransferFunction.output(self, e)  # type: ignore[arg-type]

    def derivative(self, e: Emit):
        return TransferFunction.derivative(self, e)  # type: ignore[arg-type]


class _Coefficients:
    """num/den in the shape TransferFunction.coefficients reads (p.num, p.den)."""

    def __init__(self, num: tuple[float, ...], den: tuple[float, ...]):
        self.num, self.den = list(num), list(den)


BLOCK_TYPES = (Derivative, ZeroPole,)
