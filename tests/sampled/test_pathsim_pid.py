"""PathSim's discrete PID example (diagrams/pathsim_discrete_pid.json), setpoint jumps on and
off the sample grid, against PathSim's DiscretePID recursion with the plant exact between
hits."""
import numpy as np
import pytest

import blocksim
from builders import DIAGRAMS


def recursion(t_on, t_off, kp=1.5, ki=0.5, kd=0.1, gain=0.4, period=1.0, n=101):
    """PathSim's DiscretePID: I_k = I_(k-1) + T e_k, d_k = (e_k - e_(k-1)) / T,
    u_k = Kp e_k + Ki I_k + Kd d_k; the plant y = K x, x' = u with u held: x_(k+1) = x_k + T u_k.
    The setpoint at hit t_k is its value there after a jump at t_k (right limit)."""
    x = integral = e_prev = 0.0
    ys, us = [], []
    for k in range(n):
        t = k * period
        r = (1.0 if t >= t_on else 0.0) - (0.5 if t >= t_off else 0.0)
        y = gain * x
        e = r - y
        integral += period * e
        u = kp * e + ki * integral + kd * (e - e_prev) / period
        e_prev = e
        ys.append(y)
        us.append(u)
        x += period * u
    return np.array(ys), np.array(us)


@pytest.mark.parametrize("t_on", [20.0, 20.5])
def test_every_hit_matches_pathsims_recursion(t_on):
    r = blocksim.simulate(blocksim.load(DIAGRAMS / "pathsim_discrete_pid.json"),
                          params={"t_on": t_on})
    last = {t: i for i, t in enumerate(r.time.tolist())}  # right limits
    rows = np.array([last[float(k)] for k in range(101)])
    y_ref, u_ref = recursion(t_on, 60.0)
    assert np.max(np.abs(r["y"][rows] - y_ref)) < 1e-9
    assert np.max(np.abs(r["u"][rows] - u_ref)) < 1e-9
    # off the grid, the controller first acts at the hit after the jump
    first = np.flatnonzero(np.abs(r["u"][rows]) > 0)[0]
    assert first == (20 if t_on == 20.0 else 21)
