"""diagrams/gearbox_bus.json (a bus sent by a Goto into a 2-D torque map, a MultiportSwitch
gearbox) against scipy: the same car, m v' = ratio(v) T(v, pedal(t)) - drag v^2, integrated
by solve_ivp at 1e-12 from kink to kink (each gear change, map breakpoint and pedal corner
a terminal event), T by RegularGridInterpolator. Both backends."""
import dataclasses

import numpy as np
from both_backends import run_both
from builders import DIAGRAMS
from scipy.integrate import solve_ivp
from scipy.interpolate import RegularGridInterpolator

import blocksim


def reference(d):
    """Pieces (t0, t1, dense solution) and the gear change instants. As in blocksim, each
    piece keeps its modes latched (gear, map cell, pedal segment, read just after its
    start): a step of the reference never straddles a kink either."""
    p = d.parameters
    m, drag = p["m"], p["drag"]
    speeds, pedals = np.array(p["speed_grid"]), np.array([0.0, 0.5, 1.0])
    table = np.array(p["torque_map"])
    ratios = [12.0, 8.0, 5.5]

    def cell_map(v, u):
        """The torque map's interpolant on the cell holding (v, u), extended linearly."""
        i = min(int(np.searchsorted(speeds, v, side="right")) - 1, len(speeds) - 2)
        j = min(int(np.searchsorted(pedals, u, side="right")) - 1, len(pedals) - 2)
        return RegularGridInterpolator((speeds[i:i + 2], pedals[j:j + 2]),
                                       table[i:i + 2, j:j + 2], bounds_error=False,
                                       fill_value=None)

    def pedal(t):
        return float(np.interp(t, [0.0, 4.0, 30.0], [0.3, 1.0, 1.0]))

    def crossing(k):
        return lambda t, y, *_: y[0] - k

    events = [crossing(k) for k in (7.5, 22.5, 10.0, 20.0, 30.0)]
    events += [lambda t, y, *_: pedal(t) - 0.5, lambda t, y, *_: t - 4.0]
    for ev in events:
        ev.terminal = True
    t0, y0, switches, pieces = 0.0, [0.0], [], []
    while t0 < 30.0:
        v_ahead, t_ahead = y0[0] + 1e-9, t0 + 1e-9  # speed only grows
        gear = int(min(3, max(1, np.floor(1 + v_ahead / 15 + 0.5))))
        torque = cell_map(v_ahead, pedal(t_ahead))
        slope = 0.175 if t_ahead < 4.0 else 0.0

        def rhs(t, y, gear=gear, torque=torque, slope=slope, t0=t0):
            u = pedal(t0) + slope * (t - t0)
            return [(ratios[gear - 1] * torque([[y[0], u]])[0] - drag * y[0] ** 2) / m]

        active = [ev for ev in events if abs(ev(t0, y0)) > 1e-9]  # not the one just hit
        sol = solve_ivp(rhs, (t0, 30.0), y0, method="DOP853", rtol=1e-12, atol=1e-12,
                        events=active, dense_output=True)
        pieces.append((t0, sol.t[-1], sol.sol))
        if sol.status != 1:
            break
        if any(abs(sol.y[0, -1] - k) < 1e-6 for k in (7.5, 22.5)):
            switches.append(sol.t[-1])
        t0, y0 = sol.t[-1], [sol.y[0, -1]]
    return pieces, switches


def test_gearbox_example_matches_scipy():
    d = blocksim.load(DIAGRAMS / "gearbox_bus.json")
    # tighter than the file's 1e-10 (which is within 2e-8 of the reference at t = 30)
    d.simulation = dataclasses.replace(d.simulation, rtol=1e-12, atol=1e-12)
    r = run_both(d)
    pieces, switches = reference(d)
    v_ref = np.array([next(sol(t)[0] for a, b, sol in pieces if a <= t <= b) for t in r.time])
    np.testing.assert_allclose(r["speed"], v_ref, rtol=0, atol=1e-9)
    found = [e.time for e in r.events_of(block="gearbox") if e.kind == "switch"]
    np.testing.assert_allclose(found, switches, rtol=0, atol=1e-9)
    assert len(found) == 2
    assert r["ratio"][-1] == 5.5
