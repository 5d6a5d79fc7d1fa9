"""Independent references for the delay tests: the exact solution of x'(t) = -x(t - 1) by
the method of steps in rational arithmetic, and PathSim's anti-windup PID loop with its
2 s delay by the method of steps on scipy's DOP853."""
from __future__ import annotations

import bisect
from fractions import Fraction
from math import comb

import numpy as np
from scipy.integrate import solve_ivp


def dde_pieces(count: int) -> list[list[Fraction]]:
    """Exact coefficients (in powers of t) of the solution of x'(t) = -x(t - 1), x = 1 for
    t <= 0, on [k, k + 1] for k = 0 .. count - 1: x(t) = x(k) - integral from k to t of
    the previous piece at s - 1."""
    pieces, previous = [], [Fraction(1)]
    for k in range(count):
        shifted = [Fraction(0)] * len(previous)  # previous(t - 1)
        for i, c in enumerate(previous):
            for j in range(i + 1):
                shifted[j] += c * comb(i, j) * (-1) ** (i - j)
        piece = [Fraction(0)] + [-c / (j + 1) for j, c in enumerate(shifted)]
        start = sum(c * Fraction(k) ** i for i, c in enumerate(previous))
        piece[0] += start - sum(c * Fraction(k) ** i for i, c in enumerate(piece))
        pieces.append(piece)
        previous = piece
    return pieces


def dde_exact(times: np.ndarray, count: int = 10) -> np.ndarray:
    """The exact solution at the times (in [0, count]), each rounded once to a float."""
    pieces = dde_pieces(count)
    out = []
    for t in times.tolist():
        c = pieces[min(max(int(np.floor(t)), 0), count - 1)]
        s = Fraction(t)
        out.append(float(sum(ci * s ** i for i, ci in enumerate(c))))
    return np.array(out)


# PathSim's examples/example_pid_antiwindup.py
KP, KI, KD, N, KS, TAU, STOP = 1.5, 0.5, 0.2, 10.0, 10.0, 2.0, 200.0
STEPS = (10.0, 100.0)


def setpoint(t: float) -> float:
    return 5.0 if t >= 100.0 else 10.0 if t >= 10.0 else 0.0


class AntiWindupReference:
    """PathSim's loop written from its equations: e = s - xp(t - 2) (0 before t = 2),
    x1' = N (e - x1), y = Kp e + Ki x2 + Kd N (e - x1), x2' = e - Ks (y - clip(y, +-20)),
    xp' = 0.1 (clip(y, +-10) - xp). Integrated piece by piece (never longer than the
    delay, so the past is always a finished piece's dense output) at rtol 1e-12, with the
    saturation modes fixed in a piece: a piece ends at a setpoint step, at a switch
    (a terminal event in the switch's direction) and at each of those instants plus
    k delays (k = 1..5), where the delayed signal has a kink."""

    def __init__(self, levels: int = 5):
        self.starts: list[float] = []
        self.ends: list[float] = []
        self.sols: list = []
        self.setpoints: list[float] = []
        self.switches: list[float] = []
        t, state, mode_a, mode_w = 0.0, np.zeros(3), 0, 0
        pending = set(STEPS) | {STOP}
        while t < STOP:
            bound = min(min(b for b in pending if b > t), t + TAU)
            sp = setpoint(0.5 * (t + bound))
            events = self._events(mode_a, mode_w)
            sol = solve_ivp(self._rhs, (t, bound), state, method="DOP853", rtol=1e-12,
                            atol=1e-14, dense_output=True, events=[g for g, _ in events],
                            args=(sp, mode_a, mode_w))
            fired = [i for i, found in enumerate(sol.t_events) if len(found)]
            end = float(sol.t_events[fired[0]][0]) if fired else bound
            self.starts.append(t)
            self.ends.append(end)
            self.sols.append(sol.sol)
            self.setpoints.append(sp)
            state = sol.y_events[fired[0]][0] if fired else sol.y[:, -1]
            t = end
            if fired:
                mode_a, mode_w = events[fired[0]][1]
                self.switches.append(end)
            elif bound in STEPS:  # a setpoint step: the modes anew from y just after it
                y = self._y(t, state, setpoint(t))[0]
                mode_a = 1 if y > 10 else -1 if y < -10 else 0
                mode_w = 1 if y > 20 else -1 if y < -20 else 0
            if fired or bound in STEPS:
                pending.update(t + k * TAU for k in range(1, levels + 1) if t + k * TAU < STOP)

    def _delayed(self, t: float) -> float:
        q = t - TAU
        if q <= 0.0:
            return 0.0
        i = max(bisect.bisect_right(self.starts, q) - 1, 0)
        return float(self.sols[i](min(q, self.ends[i]))[2])

    def _y(self, t, state, sp) -> tuple[float, float]:
        x1, x2, _ = state
        e = sp - self._delayed(t)
        return KP * e + KI * x2 + KD * N * (e - x1), e

    def _rhs(self, t, state, sp, mode_a, mode_w):
        y, e = self._y(t, state, sp)
        held = y if mode_w == 0 else 20.0 * mode_w
        a = y if mode_a == 0 else 10.0 * mode_a
        return [N * (e - state[0]), e - KS * (y - held), 0.1 * (a - state[2])]

    def _events(self, mode_a: int, mode_w: int):
        """(event function, modes after it) of the switches possible in these modes."""
        out = []
        for limit, mode, first in ((10.0, mode_a, True), (20.0, mode_w, False)):
            for side in (1, -1):
                if mode not in (0, side):
                    continue
                new = side if mode == 0 else 0

                def g(t, s, sp, ma, mw, level=side * limit):
                    return self._y(t, s, sp)[0] - level
                g.terminal, g.direction = True, side if mode == 0 else -side
                out.append((g, (new, mode_w) if first else (mode_a, new)))
        return out

    def signals(self, times: np.ndarray, left: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """x (the delayed plant output) and pid (the controller output, which the PID
        block limits to +-20) at the times; `left`: the left limit there, else the right."""
        xs, pids = [], []
        for t, lft in zip(times.tolist(), left.tolist()):
            i = (bisect.bisect_left(self.ends, t) if lft
                 else bisect.bisect_right(self.starts, t) - 1)
            i = min(max(i, 0), len(self.sols) - 1)
            y = self._y(t, self.sols[i](t), self.setpoints[i])[0]
            xs.append(self._delayed(t))
            pids.append(min(max(y, -20.0), 20.0))
        return np.array(xs), np.array(pids)
