"""Reference values from ../shared/benchmarks/BENCHMARKS.md, kept here so tests stand alone."""
import math

import numpy as np

# Math 003: exact state events and x4(t).
MATH003_STATE_EVENTS = (17 / 12, 23 / 6, 35 / 6)


def math003_x4(t: np.ndarray) -> np.ndarray:
    t = np.asarray(t, dtype=float)
    return np.select(
        [t < 1, t < 17 / 12, t < 3, t < 23 / 6, t < 5, t < 35 / 6],
        [0.0, 6 * (t - 1), 2.5, 2.5 - 6 * (t - 3), -2.5, -2.5 + 6 * (t - 5)], 2.5)


# EUROSIM C5: switching times (40-digit root finding) and y1(5).
C5_SWITCHES = (1.1083061677711311872, 2.1296853551547138932, 3.0541529069957194689,
               4.0755320943793021749, 4.9999996462203077506)
C5_Y1_END = 5.3693121235561020114
C5_Y2_END = 5.3999967644599442008

# ARGESIM C21 bouncing ball, event contact.
BALL_X0, BALL_G, BALL_MU = 10.0, 9.81, 0.9


def ball_bounce_times_no_air(n: int) -> np.ndarray:
    """Closed form without air resistance: t_n = t1 (2 (1 - mu^n) / (1 - mu) - 1)."""
    t1 = math.sqrt(2 * BALL_X0 / BALL_G)
    k = np.arange(1, n + 1)
    return t1 * (2 * (1 - BALL_MU**k) / (1 - BALL_MU) - 1)


BALL_T_INF_NO_AIR = 27.12901933561422
BALL_BOUNCES_AIR = (1.432607325445323, 3.957377435679787, 6.198154509372956, 8.192729373542922,
                    9.972192503755030)
BALL_BOUNCES_AIR_10 = 16.43119499364038
BALL_T_INF_AIR = 25.58945757011712
