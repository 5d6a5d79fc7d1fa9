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


# ------------------------------------------------------------------------------------------
# ARGESIM C21 dynamic contact and ideal diode (BENCHMARKS.md sections 4 and 5), used by
# tests/test_c21_diagrams.py. Appended section: keep it at the end of the file.

# Bouncing ball, dynamic (spring/damper) contact.
CONTACT_G, CONTACT_K = 9.81, 1e6
CONTACT_STARTS = (1.432607325, 2.862150253, 3.583717502)
CONTACT_ENDS = (1.435332122, 2.864877130, 3.586448498)
# Apex heights and times after contacts 1, 2, 3 (apexes 2 to 4; apex 1 is x0 = 10 at t = 0).
CONTACT_APEX_HEIGHTS = (2.49466100652, 0.63276017542, 0.16058294931)
CONTACT_APEX_TIMES = (2.148398246, 3.224471734, 3.767877680)
CONTACT_MAX_DEFORMATIONS = (9.87387827e-3, 4.97183608e-3, 2.51178619e-3)  # w in m
CONTACT_REST_X = -CONTACT_G / CONTACT_K  # -m g / k with m = 1

# RLC circuit with ideal diode: switch number -> time (odd numbers: to locking).
DIODE_SWITCHES = {1: 3.358628540e-6, 2: 7.681790145e-6, 3: 9.711633760e-6,
                  4: 1.463699972e-5, 5: 1.623082854e-5, 6: 2.143331696e-5,
                  7: 2.282140378e-5, 8: 2.816441570e-5, 28: 9.490075915e-5,
                  29: 9.606907643e-5}
DIODE_SWITCH_COUNT = 29
DIODE_AT_5US = {"uC": 0.010099669416, "i": 0.000970190761}
DIODE_AT_END = {"uC": 2.9449000697e-2, "i": -5.9612005411e-6}

# RLC circuit with Shockley diode (the algebraic-loop form) and piecewise-linear diode.
SHOCKLEY_FIRST_SWITCHES = (4.348576165e-6, 6.725981060e-6, 1.098266910e-5, 1.342460636e-5)
SHOCKLEY_SWITCH_COUNT = 29
SHOCKLEY_AT_2_2US = {"uC": -1.5076089059e-2, "i": -8.5512056e-4, "uD": 3.2178010842e-2,
                     "iD": 2.447384e-8}
SHOCKLEY_UC_END = 6.50137e-3
PWL_ID_AT_2_2US = {3: 2.638398e-8, 5: 2.503128e-8, 10: 2.458862e-8}
PWL_UC_END = {3: 6.50177e-3, 5: 6.50145e-3, 10: 6.50139e-3}

# Rotating pendulum with free flight (BENCHMARKS.md section 6), reference at rtol 1e-13.
PENDULUM_RELEASE = 1.921999020  # swinging -> free flight
PENDULUM_RELEASE_AT = (-0.56368, 0.82599)  # mass position (x, y), 5 digits
PENDULUM_CATCH = 2.661498894  # free flight -> swinging
PENDULUM_CATCH_AT = (0.840567973, -0.541706084)
PENDULUM_AFTER_CATCH = {"phi": 2.14326179, "omega": 3.24209565}
# Turning points (omega through 0) and psi = mod(phi, 2 pi) - pi there; the last one stops.
PENDULUM_TURNING = (3.439702719, 4.513782528, 5.554490926, 6.579403214, 7.596271406)
PENDULUM_TURNING_PSI = (1.125239348, -0.802463425, 0.582762117, -0.426810495, 0.313932600)
PENDULUM_STOP_AT = (-0.308801415, -0.951126535)
PENDULUM_KICK = 8.134299206  # bottom passage after the last turning point, when not stopping
PENDULUM_OMEGA_BEFORE_KICK = -0.833703305
PENDULUM_OMEGA_PLUS = 18.334081458


def modia_ball_impacts(h0: float = 1.0, e: float = 0.7, g: float = 9.81,
                       v_small: float = 0.01, stop: float = math.inf) -> list[float]:
    """ModiaMath's bouncing ball, impact instants up to `stop`: the fall from h0, then
    flights of 2 v_k / g with v_k = e^k v_1, until a rebound e v_k is under v_small (that
    impact is the last)."""
    t = math.sqrt(2.0 * h0 / g)
    times, v = [t], g * t
    while e * v >= v_small:
        v *= e
        t += 2.0 * v / g
        if t > stop:
            break
        times.append(t)
    return times
