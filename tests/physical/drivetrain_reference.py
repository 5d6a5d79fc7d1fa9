"""An event-driven scipy reference for a two-inertia drivetrain with backlash and friction
that sticks: the equations of blocks/rotational.py's Inertia, ElastoBacklash and Friction
written out by hand, integrated by solve_ivp between events and restarted at each one.

    motor:  J1 phi1'' = tau_drive(t) + tau_bl
    load:   J2 phi2'' = -tau_bl - tau_f            (phi2'' = 0 and w2 = 0 while stuck)
    backlash (phi_rel = phi2 - phi1, w_rel = w2 - w1):
        tau_p = c (phi_rel - b/2) + d w_rel,  tau_n = c (phi_rel + b/2) + d w_rel
        tau_bl = tau_p if phi_rel > b/2 and tau_p > 0
                 else tau_n if phi_rel < -b/2 and tau_n < 0 else 0
    friction: sliding forward tau_f = tau_c + dv w2, backward -tau_c + dv w2; stuck: tau_f
        is the holding torque -tau_bl; stuck -> forward where it exceeds tau_s, -> backward
        below -tau_s; sliding -> stuck where w2 crosses 0 (w2 set to 0), and on at once if
        the holding torque then exceeds tau_s.

Every relation is latched as the component compiler latches it: its sign changes only
where its function crosses zero, located as a terminal event of solve_ivp, so the torque
law is smooth within a segment and a segment never straddles a switch.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.integrate import solve_ivp

MAX_SEGMENTS = 100_000


@dataclass(frozen=True)
class Drivetrain:
    J1: float = 0.1        # motor inertia
    J2: float = 1.0        # load inertia
    b: float = 0.02        # total backlash
    c: float = 1e3         # contact stiffness
    d: float = 1.0         # contact damping
    tau_c: float = 1.0     # Coulomb friction torque
    tau_s: float = 1.2     # static friction torque
    dv: float = 0.1        # viscous friction coefficient
    amplitude: float = 2.0  # drive torque amplitude * sin(2 pi f t)
    f: float = 2.0

    def drive(self, t: float) -> float:
        return self.amplitude * np.sin(2 * np.pi * self.f * t)


@dataclass
class Solution:
    segments: list = field(default_factory=list)   # (t0, t1, dense output)
    transitions: list = field(default_factory=list)  # (t, 'stuck' | 'forward' | 'backward')

    def __call__(self, times: np.ndarray) -> np.ndarray:
        """[phi1, w1, phi2, w2] at `times` (rows); an instant shared by two segments (an
        event) takes the later one: angles are continuous there."""
        times = np.asarray(times, dtype=float)
        out = np.empty((len(times), 4))
        starts = np.array([s[0] for s in self.segments])
        index = np.clip(np.searchsorted(starts, times, side="right") - 1, 0, None)
        for k in np.unique(index):
            rows = index == k
            out[rows] = self.segments[k][2](times[rows]).T
        return out


def simulate(p: Drivetrain, stop: float, rtol: float = 1e-12, atol: float = 1e-14) -> Solution:
    y = np.zeros(4)  # phi1, w1, phi2, w2
    mode = 0  # friction: 0 stuck, 1 forward, -1 backward (stuck at the start, as Friction)

    def backlash(y):
        phi_rel, w_rel = y[2] - y[0], y[3] - y[1]
        return (phi_rel - p.b / 2, p.c * (phi_rel - p.b / 2) + p.d * w_rel,
                phi_rel + p.b / 2, p.c * (phi_rel + p.b / 2) + p.d * w_rel)

    # latched signs of phi_rel - b/2, tau_p, phi_rel + b/2, tau_n (True: positive)
    signs = [g > 0 for g in backlash(y)]

    def torque(y, signs):
        _, tau_p, _, tau_n = backlash(y)
        if signs[0] and signs[1]:
            return tau_p
        if not signs[2] and not signs[3]:
            return tau_n
        return 0.0

    t, solution = 0.0, Solution()
    for _ in range(MAX_SEGMENTS):
        latched, m = list(signs), mode

        def rhs(t, y):
            tau_bl = torque(y, latched)
            a1 = (p.drive(t) + tau_bl) / p.J1
            if m == 0:
                return [y[1], a1, 0.0, 0.0]
            tau_f = m * p.tau_c + p.dv * y[3]
            return [y[1], a1, y[3], (-tau_bl - tau_f) / p.J2]

        events = []
        for k in range(4):  # each relation, watched in the direction that flips it
            def g(t, y, k=k):
                return backlash(y)[k]
            g.terminal, g.direction = True, (-1 if latched[k] else 1)
            events.append(g)
        if m == 0:
            def up(t, y):
                return -torque(y, latched) - p.tau_s
            def down(t, y):
                return -torque(y, latched) + p.tau_s
            up.terminal, up.direction = True, 1
            down.terminal, down.direction = True, -1
            events += [up, down]
        else:
            def stops(t, y):
                return y[3]
            stops.terminal, stops.direction = True, -m
            events.append(stops)
        sol = solve_ivp(rhs, (t, stop), y, method="DOP853", rtol=rtol, atol=atol,
                        events=events, dense_output=True)
        assert sol.status in (0, 1), sol.message
        solution.segments.append((t, sol.t[-1], sol.sol))
        t, y = sol.t[-1], sol.y[:, -1].copy()
        if sol.status == 0:
            return solution
        fired = [k for k, te in enumerate(sol.t_events) if len(te)]
        for k in fired:
            if k < 4:
                signs[k] = not signs[k]
            elif m == 0:
                mode = 1 if k == 4 else -1
                solution.transitions.append((t, "forward" if mode > 0 else "backward"))
            else:
                mode, y[3] = 0, 0.0
                solution.transitions.append((t, "stuck"))
        if mode == 0:  # stuck now: does the holding torque (which may have jumped) hold?
            hold = -torque(y, signs)
            if hold > p.tau_s or hold < -p.tau_s:
                mode = 1 if hold > 0 else -1
                solution.transitions.append((t, "forward" if mode > 0 else "backward"))
    raise RuntimeError(f"more than {MAX_SEGMENTS} segments")
