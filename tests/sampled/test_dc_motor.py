"""diagrams/dc_motor_pid.json (PathSim's DC motor with an anti-windup PID and a voltage limit)
against scipy's DOP853 at rtol 1e-13 on the closed-loop equations, restarted at every step
of the setpoint and load and at every saturation switch (the first 8 s: the saturated
start-up and the setpoint step at 5 s, with its saturation and recovery)."""
import numpy as np
from scipy.integrate import solve_ivp

import blocksim
from builders import DIAGRAMS

R, L, KE, J, B, KT = 1.0, 0.001, 0.1, 0.01, 0.001, 0.1
P, I, D, N, KS, VMAX = 8.0, 15.0, 0.2, 100.0, 10.0, 24.0
STOP = 8.0


def controller(x, r):
    """(unlimited output v, error e) of the PID in parallel form, states in output units."""
    x_int, x_filt, _, w = x
    e = r - w
    return P * e + x_int + N * (D * e - x_filt), e


def closed_loop(t, x, r, load):
    x_int, x_filt, i, w = x
    v, e = controller(x, r)
    u = min(max(v, -VMAX), VMAX)
    return [I * e + I * KS * (u - v), N * (D * e - x_filt), (u - R * i - KE * w) / L,
            (KT * i - B * w + load) / J]


def reference(grid):
    """The states at the grid times, integrated segment by segment."""
    x, found = np.zeros(4), {}
    for a, b, r, load in ((0.0, 5.0, 50.0, 0.0), (5.0, STOP, 100.0, 0.0)):
        t0 = a
        while t0 < b:
            hits = [lambda t, x, r=r, s=s: controller(x, r)[0] - s * VMAX for s in (1, -1)]
            for h in hits:
                h.terminal = True
            ts = grid[(grid >= t0) & (grid <= b)]
            sol = solve_ivp(closed_loop, (t0, b), x, method="DOP853", rtol=1e-13, atol=1e-13,
                            args=(r, load), events=hits, t_eval=ts, dense_output=True,
                            max_step=2e-3)
            found.update({round(t, 9): y for t, y in zip(sol.t, np.asarray(sol.y).T)})
            if sol.status != 1:
                x, t0 = sol.y[:, -1], b
                continue
            t0 = min(t[0] for t in sol.t_events if len(t))
            step = solve_ivp(closed_loop, (t0, t0 + 1e-9), sol.sol(t0), method="DOP853",
                             rtol=1e-13, atol=1e-13, args=(r, load))  # past the switch
            x, t0 = step.y[:, -1], step.t[-1]
    return found


def test_speed_and_current_match_scipy_on_the_closed_loop():
    r = blocksim.simulate(blocksim.load(DIAGRAMS / "dc_motor_pid.json"), stop_time=STOP,
                          rtol=1e-12, atol=1e-14)
    grid = np.round(np.arange(0, int(STOP * 100) + 1) * 0.01, 9)
    ref = reference(grid)
    last = {round(t, 9): k for k, t in enumerate(r.time.tolist())}  # right limits
    times = [t for t in grid.tolist() if t in ref]
    assert len(times) == len(grid)
    rows = [last[t] for t in times]
    assert np.max(np.abs(r["w"][rows] - [ref[t][3] for t in times])) < 1e-9
    assert np.max(np.abs(r["i"][rows] - [ref[t][2] for t in times])) < 1e-9
    # the voltage saturated at the start and after the step, and left the limit each time;
    # only an event's left limit (the first float past the crossing) may pass it, by roundoff
    switches = [e.time for e in r.events if e.block == "pid"]
    assert len(switches) >= 4 and np.all(np.abs(r["V"]) <= VMAX + 1e-10)
