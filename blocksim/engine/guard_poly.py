"""A start for event location from the guard as a polynomial of the step's dense output.

Inside a DOPRI5 step every state is a quartic in s = (t - t_old) / h (Hairer's CONTD5), so
a guard built from states by +, -, * and constants is a polynomial in s, and its crossing is
a root that Newton's method on the coefficients finds to machine precision with no further
guard evaluations. Brent's method needs about ten evaluations of the guard for the same
estimate (fewer still do not suffice where the step starts at the guard's extremum: the
ball's apex). Only the start changes: `events.locate` still walks from the estimate and
bisects on the sign test, so the located instant (the first float where the sign has
changed) is the one Brent's estimate leads to wherever the sign changes once around the
crossing, as on every diagram the tests run.

The guard's generated code runs on `Poly` values: each carries its float value at the
evaluation point (the same arithmetic as the plain evaluation) and its coefficients. Value
comparisons (min, max, abs, branches) choose as at that point; the polynomial then holds
near it, and a root found on it is checked by evaluating again there. Anything else (a
division by a state, a math function) is not a polynomial: the caller falls back to Brent.
"""
from __future__ import annotations

import math
import threading
from typing import Callable

NEWTON_ITERATIONS = 60
# A Cauchy step this small (in s, of a step's [0, 1]) leaves an error of the order of its
# cube, below an ulp of t: the walk of `events.locate` takes the estimate from there.
CONVERGED = 1e-6
BRANCH_ROUNDS = 3  # evaluations at successive roots when branches change the polynomial


# Whether a comparison chose a branch during this thread's current evaluation (per thread:
# the editor and sweeps run simulations on several threads at once).
_branch = threading.local()


class NotPolynomial(TypeError):
    """The guard is not a polynomial of the states (near this point)."""


class Poly:
    """A value along the step: v at the evaluation point, c its coefficients in s (lowest
    power first). Comparisons read v and note that the polynomial holds only near it."""

    __slots__ = ("v", "c")

    def __init__(self, v: float, c: list[float]):
        self.v, self.c = v, c

    def __add__(self, other):
        if isinstance(other, Poly):
            return Poly(self.v + other.v, _add(self.c, other.c))
        if isinstance(other, (int, float)):
            return Poly(self.v + other, [self.c[0] + other, *self.c[1:]])
        return NotImplemented

    def __radd__(self, other):
        if isinstance(other, (int, float)):
            return Poly(other + self.v, [other + self.c[0], *self.c[1:]])
        return NotImplemented

    def __sub__(self, other):
        if isinstance(other, Poly):
            return Poly(self.v - other.v, _add(self.c, [-a for a in other.c]))
        if isinstance(other, (int, float)):
            return Poly(self.v - other, [self.c[0] - other, *self.c[1:]])
        return NotImplemented

    def __rsub__(self, other):
        if isinstance(other, (int, float)):
            return Poly(other - self.v, [other - self.c[0], *(-a for a in self.c[1:])])
        return NotImplemented

    def __mul__(self, other):
        if isinstance(other, Poly):
            return Poly(self.v * other.v, _mul(self.c, other.c))
        if isinstance(other, (int, float)):
            return Poly(self.v * other, [a * other for a in self.c])
        return NotImplemented

    def __rmul__(self, other):
        if isinstance(other, (int, float)):
            return Poly(other * self.v, [other * a for a in self.c])
        return NotImplemented

    def __truediv__(self, other):
        if isinstance(other, (int, float)) and not isinstance(other, bool):
            return Poly(self.v / other, [a / other for a in self.c])
        raise NotPolynomial("division by a state")

    def __rtruediv__(self, other):
        raise NotPolynomial("division by a state")

    def __pow__(self, n):
        if not isinstance(n, int) or isinstance(n, bool) or not 0 <= n <= 4:
            raise NotPolynomial("power of a state")
        c = [1.0]
        for _ in range(n):
            c = _mul(c, self.c)
        return Poly(self.v ** n, c)

    def __neg__(self):
        return Poly(-self.v, [-a for a in self.c])

    def __pos__(self):
        return self

    def __abs__(self):
        _branch.chose = True
        return -self if self.v < 0.0 else self

    def _cmp(self, other) -> float:
        _branch.chose = True
        if isinstance(other, Poly):
            return other.v
        if isinstance(other, (int, float)):
            return other
        raise NotPolynomial("comparison with a non-number")

    def __lt__(self, other):
        return self.v < self._cmp(other)

    def __le__(self, other):
        return self.v <= self._cmp(other)

    def __gt__(self, other):
        return self.v > self._cmp(other)

    def __ge__(self, other):
        return self.v >= self._cmp(other)

    def __eq__(self, other):
        return self.v == self._cmp(other)

    def __ne__(self, other):
        return self.v != self._cmp(other)

    __hash__ = None  # type: ignore[assignment]

    def __bool__(self):
        raise NotPolynomial("truth value of a state")

    def __float__(self):
        raise NotPolynomial("a state passed to a function")  # e.g. math.sin(x): no estimate

    __index__ = __int__ = __float__


def _add(p: list[float], q: list[float]) -> list[float]:
    if len(p) < len(q):
        p, q = q, p
    return [a + b for a, b in zip(p, q)] + p[len(q):]


def _mul(p: list[float], q: list[float]) -> list[float]:
    out = [0.0] * (len(p) + len(q) - 1)
    for j, a in enumerate(p):
        for k, b in enumerate(q):
            out[j + k] += a * b
    return out


def state_poly(x0: float, a: float, b: float, c: float, d: float) -> list[float]:
    """CONTD5's x0 + s (a + s1 (b + s (c + s1 d))), s1 = 1 - s, in powers of s."""
    return [x0, a + b, c + d - b, -(c + 2.0 * d), d]


def newton_root(c: list[float], sa: float, sb: float, tol: float, rising: bool
                ) -> float | None:
    """A root of the polynomial c in [sa, sb] (negative at sa and positive at sb if rising,
    else the reverse: the guard's signs at the ends) to about tol, or None if the
    coefficients are not finite.

    Each step solves the local quadratic model p + p' d + p'' d^2 / 2 = 0 for its root
    nearest (Cauchy's method: exact on a parabola, such as a falling ball's height started
    at its apex, where Newton's method only halves the distance per step; the error after
    a step is of the order of its cube), Newton's step where the model has no root,
    bisection where a step leaves the shrinking bracket."""
    if not math.isfinite(sum(c)):
        return None
    backwards = c[::-1]
    s = sb
    for _ in range(NEWTON_ITERATIONS):
        p = dp = ddp = 0.0
        for a in backwards:
            ddp = ddp * s + dp
            dp = dp * s + p
            p = p * s + a
        if p == 0.0:
            return s
        if (p > 0.0) == rising:
            sb = s
        else:
            sa = s
        disc = dp * dp - 4.0 * p * ddp  # ddp is half the second derivative
        if disc >= 0.0 and dp != 0.0:
            step = 2.0 * p / (dp + math.copysign(math.sqrt(disc), dp))
        else:
            step = p / dp if dp != 0.0 else math.inf
        s_new = s - step
        if abs(step) <= CONVERGED or sb - sa <= tol:  # the next step would be below tol
            return min(max(s_new, sa), sb)
        if not sa < s_new < sb:  # outside the bracket (or not finite): bisect it
            s_new = sa + (sb - sa) / 2.0
            if s_new == sa or s_new == sb:
                return s
        s = s_new
    return s


def estimator(t_old: float, t_new: float, rows: list[tuple[float, ...]],
              columns: tuple[int, ...], evaluate: Callable[[float, list], float]
              ) -> Callable[[float, float], float | None]:
    """estimate(a, b): a crossing of the guard in [a, b] (sign changes between the ends)
    from its polynomial, or None where it is not one. rows are `Dopri5Stepper.column_rows`
    of the states `columns`; evaluate(t, states) runs the guard with t and the states at
    those indices as Polys."""
    h = t_new - t_old
    polys: list = []  # (index, row, coefficients) of each state read, made at first use
    width = max(columns) + 1 if columns else 0

    def guard_at(t: float) -> Poly | None:
        if not polys:
            polys.extend((k, row, state_poly(*row[:5])) for k, row in zip(columns, rows))
        states: list = [0.0] * width
        s = (t - t_old) / h
        s1 = 1.0 - s
        for k, (x0, a, b, c, d, x1), coef in polys:
            v = x1 if t == t_new else x0 + s * (a + s1 * (b + s * (c + s1 * d)))
            states[k] = Poly(v, coef)
        _branch.chose = False
        try:
            g = evaluate(Poly(t, [t_old, h]), states)
        except (TypeError, ArithmeticError, ValueError):
            return None
        return g if isinstance(g, Poly) and len(g.c) > 1 else None  # else constant here

    def estimate(a: float, b: float) -> float | None:
        if h <= 0.0:
            return None
        t, previous, rising = b, None, None
        for _ in range(BRANCH_ROUNDS):
            g = guard_at(t)
            if g is None or g.c == previous:
                return None if g is None else t
            exact = not _branch.chose  # the same polynomial everywhere in the step
            if rising is None:
                rising = g.v > 0.0  # at b, where the sign has changed
            root = newton_root(g.c, (a - t_old) / h, (b - t_old) / h,
                               math.ulp(max(abs(a), abs(b))) / h, rising)  # an ulp of t
            if root is None:
                return None
            t_root = min(max(t_old + root * h, a), b)
            if exact or t_root == t:
                return t_root
            t, previous = t_root, g.c
        return None
    return estimate
