"""The polynomial start of event location (`guard_poly`): its roots against closed forms,
and `events.locate` giving the same instant with it as with Brent's method."""
import math

import numpy as np
import pytest

from blocksim.engine import events
from blocksim.engine.guard_poly import Poly, estimator, newton_root, state_poly


def horner(row, s):
    x0, a, b, c, d = row
    s1 = 1.0 - s
    return x0 + s * (a + s1 * (b + s * (c + s1 * d)))


def test_state_poly_is_the_dense_formula_multiplied_out():
    rng = np.random.default_rng(1)
    for _ in range(50):
        row = rng.normal(size=5).tolist()
        coef = state_poly(*row)
        for s in rng.uniform(0.0, 1.0, size=5):
            power_form = sum(c * s ** k for k, c in enumerate(coef))
            assert power_form == pytest.approx(horner(row, s), rel=1e-13, abs=1e-13)


@pytest.mark.parametrize("height", [10.0, 1e-3, 2.5e-8])
def test_parabola_started_at_its_vertex(height):
    # A falling ball from its apex: height - 35.8 s^2, root sqrt(height / 35.8).
    root = newton_root([height, 0.0, -35.8], 0.0, 1.0 if height < 35.8 else 2.0, 1e-18, False)
    assert root == pytest.approx(math.sqrt(height / 35.8), rel=4e-16)


def test_quartic_root_in_the_bracket():
    # (s - 0.3)(s + 1)(s - 2)(s - 3): only 0.3 lies in [0, 1].
    coef = np.polynomial.polynomial.polyfromroots([0.3, -1.0, 2.0, 3.0]).tolist()
    assert newton_root(coef, 0.0, 1.0, 1e-17, True) == pytest.approx(0.3, abs=1e-16)


def test_not_finite_coefficients_give_no_root():
    assert newton_root([1.0, math.inf, -1.0], 0.0, 1.0, 1e-17, False) is None


def _step():
    """A step of a falling ball: (t_old, t_new, rows of x, v) as `column_rows` gives them."""
    t_old, t_new, g = 1.0, 2.5, 9.81
    h = t_new - t_old

    def x(t):
        return 3.0 - 0.5 * g * (t - 0.8) ** 2

    def v(t):
        return -g * (t - 0.8)
    rows = []
    for f, df in ((x, v), (v, lambda t: -g)):
        x0, x1 = f(t_old), f(t_new)
        a = x1 - x0
        b = h * df(t_old) - a
        c = a - h * df(t_new) - b
        rows.append((x0, a, b, c, 0.0, x1))  # exact for a polynomial of degree <= 3
    return t_old, t_new, rows, 0.8 + math.sqrt(2 * 3.0 / g)


def test_estimate_of_a_guard_with_min_and_constants():
    t_old, t_new, rows, t_root = _step()

    def guard(t, x_, m_=None, z_=None):  # a limit's guard: min(x - 0, inf - x)
        return min(x_[0] - 0.0, math.inf - x_[0])
    est = estimator(t_old, t_new, rows, (0, 1), guard)(t_old, t_new)
    assert est == pytest.approx(t_root, rel=1e-14)


@pytest.mark.parametrize("guard", [
    lambda t, x_: 1.0 / x_[0],        # a division by a state
    lambda t, x_: math.sin(x_[0]),    # a function of a state
    lambda t, x_: 1.0 if x_[0] > 0.0 and t > 0.0 else -1.0,  # no state in the value
])
def test_no_estimate_where_the_guard_is_not_a_polynomial(guard):
    t_old, t_new, rows, _ = _step()
    assert estimator(t_old, t_new, rows, (0, 1), guard)(t_old, t_new) is None


def test_locate_with_the_estimate_finds_brents_instant():
    t_old, t_new, rows, t_root = _step()
    h = t_new - t_old

    def g(t):
        if t == t_new:
            return rows[0][5]
        return horner(rows[0][:5], (t - t_old) / h)
    est = estimator(t_old, t_new, rows, (0, 1), lambda t, x_: x_[0] * 1.0)
    with_brent = events.locate(g, 1.0, t_old, t_new)
    with_poly = events.locate(g, 1.0, t_old, t_new, est)
    assert with_poly == with_brent
    assert with_poly == pytest.approx(t_root, rel=1e-14)
    assert g(with_poly) <= 0.0 < g(math.nextafter(with_poly, -math.inf))


def test_poly_values_are_the_plain_arithmetic():
    p, q = Poly(0.1, [0.1, 1.0]), Poly(0.7, [0.7, -2.0])
    for got, want in ((p * q - 3.0 * p, 0.1 * 0.7 - 3.0 * 0.1),
                      (-(p + q) / 3.0, -(0.1 + 0.7) / 3.0), (2.0 - p ** 2, 2.0 - 0.1 ** 2)):
        assert got.v == want
