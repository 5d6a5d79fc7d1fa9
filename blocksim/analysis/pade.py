"""Pade approximation of a time delay, e^(-s T) ~ N(s) / D(s) of order n (numerator and
denominator of degree n): what a TransportDelay linearises to (`linearize(delay_order=)`).

The coefficients are the classical ones, c_k = (2n - k)! n! / ((2n)! k! (n - k)!) T^k,
D(s) = sum c_k s^k and N(s) = sum (-1)^k c_k s^k (python-control's `pade` gives the same
polynomials up to a common factor). Its phase error at frequency w stays below 1 degree
while w T < about 2 n / 3 (order 6: w T < 4); order 0 is the gain 1.
"""
from __future__ import annotations

from math import factorial


def pade_coefficients(delay: float, order: int) -> tuple[list[float], list[float]]:
    """(numerator, denominator), highest power of s first, denominator monic."""
    n = int(order)
    if n < 0:
        raise ValueError(f"Pade order must be >= 0, got {order}")
    c = [factorial(2 * n - k) * factorial(n) / (factorial(2 * n) * factorial(k)
                                                   * factorial(n - k)) * delay ** k
         for k in range(n + 1)]
    den = c[::-1]
    num = [(-1) ** k * c[k] for k in range(n + 1)][::-1]
    lead = den[0]
    return [v / lead for v in num], [v / lead for v in den]
