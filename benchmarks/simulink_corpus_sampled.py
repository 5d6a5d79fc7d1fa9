"""Independent references for the Simulink corpus's discrete and sampled-data models (see
simulink_corpus.py): exact recurrences at the sample hits, and the continuous parts over each
hold interval by the matrix exponential, so nothing here depends on a step size.
"""
from __future__ import annotations

import math

import numpy as np

from simulink_corpus_refs import dense


def chap1_14(t):
    """All-discrete loop at ts = 20 (exact recurrence): plant y(k) = a y(k-1) + b u(k-5)
    (c2d of e^{-80s}/(60s+1)), u = kp e + kd (e(k) - e(k-1)) + (|e| >= 0.8 ? 0 : ki I(k)),
    I backward Euler I(k) = I(k-1) + 20 e(k), I(0) = 0 (R14 'State and output'); logged
    y = [step, plant]."""
    ts, kp, ki, kd = 20.0, 1.8, 0.05, 0.2
    a = math.exp(-ts / 60)
    n = int(t.max() // ts) + 2
    y, u, e = np.zeros(n), np.zeros(n), np.zeros(n)
    integ = 0.0
    for k in range(n):
        y[k] = (a * y[k - 1] if k else 0.0) + ((1 - a) * u[k - 5] if k >= 5 else 0.0)
        e[k] = 1 - y[k]
        if k:
            integ += ts * e[k]
        switched = 0.0 if abs(e[k]) >= 0.8 else ki * integ
        u[k] = kp * e[k] + kd * (e[k] - (e[k - 1] if k else 0.0)) + switched
    idx = np.floor(t / ts + 1e-9).astype(int)
    return {"y": np.column_stack([np.ones_like(t), y[idx]])}


def ex4_discrete_continuous(t):
    """m x'' = u - k x - b x'|x'| with u = 2.3 sin 131 t (m, b, k = 1, 0.5, 2, params file):
    continuous (Subsystem1) and two Forward-Euler Discrete-Time Integrators at the sampled
    sine's 1e-4 s (Subsystem). Logged bus (discrete x, continuous x)."""
    m, b, k, h = 1.0, 0.5, 2.0, 1e-4

    def rhs(s, x):
        return [x[1], (2.3 * math.sin(131 * s) - k * x[0] - b * x[1] * abs(x[1])) / m]
    cont = dense(rhs, 0, [0, 0], t, max_step=1e-3)[:, 0]
    n = int(t.max() / h) + 2
    xs = np.zeros(n)
    v = x = 0.0
    for j in range(n):
        xs[j] = x
        acc = (2.3 * math.sin(131 * j * h) - k * x - b * v * abs(v)) / m
        x, v = x + h * v, v + h * acc
    idx = np.floor(t / h + 1e-6).astype(int)
    return {"bus": np.column_stack([xs[idx], cont])}


def sampled_motor_position(t):
    """CTMS digital DC motor position control (J 3.2284e-6, b 3.5077e-6, K 0.0274, R 4,
    L 2.75e-6, params file): L i' = V - K w - R i, J w' = K i - b w, theta' = w; every
    1 ms e_k = 1 - theta(t_k) feeds 100 (z-0.95)(z-0.8)^2/((z+0.98)(z-0.6)(z-1)), whose
    output is held; V = u_k + 1(t >= 0.03). Exact: the motor over each hold interval by
    the matrix exponential."""
    from scipy.linalg import expm
    from scipy.signal import tf2ss as _tf2ss, zpk2tf
    j, b, k, r, ll, h = 3.2284e-6, 3.5077e-6, 0.0274, 4.0, 2.75e-6, 1e-3
    a = np.array([[-r / ll, -k / ll, 0], [k / j, -b / j, 0], [0, 1, 0]])
    bb = np.array([1 / ll, 0, 0])
    big = expm(np.block([[a, bb[:, None]], [np.zeros((1, 4))]]) * h)
    ad, bd = big[:3, :3], big[:3, 3]
    num, den = zpk2tf([0.95, 0.8, 0.8], [-0.98, 0.6, 1.0], 100)
    ca, cb, cc, cd = _tf2ss(num, den)
    n = int(round(t.max() / h)) + 2
    x, xc = np.zeros(3), np.zeros(len(cb))
    states, inputs = np.zeros((n, 3)), np.zeros(n)
    for step in range(n):
        states[step] = x
        e = 1.0 - x[2]
        u = float(cc[0] @ xc + cd[0, 0] * e)
        xc = ca @ xc + cb[:, 0] * e
        v = u + (1.0 if step >= 30 else 0.0)
        inputs[step] = v
        x = ad @ x + bd * v
    idx = np.minimum(np.floor(t / h + 1e-9).astype(int), n - 1)
    theta = np.empty(len(t))
    for m, (s, i) in enumerate(zip(t, idx)):  # within the interval, exactly
        dt = s - i * h
        blk = expm(np.block([[a, bb[:, None]], [np.zeros((1, 4))]]) * dt)
        theta[m] = (blk[:3, :3] @ states[i] + blk[:3, 3] * inputs[i])[2]
    return {"theta": theta}


def position_lab(t):
    """Bilkent lab 1 position loop, everything sampled at the fixed step h = 0.01 (the
    inherited rates under FixedStepAuto): at hit k, pos_k = pos_{k-1} + 6 h d_{k-1}
    (Forward Euler, K = 6), d_k = s_{k-1} (Delay of 1), e_k = 2 (90 - pos_k) - d_k; between
    hits the motor 8.998988/(0.132173 s + 1) is driven by LPF(e) + 2 sign(e_k), the LPF
    0.1/(0.05 s + 1) by e_k (exact by the matrix exponential); s_k = deadzone_10(w + f(w)),
    f(w) = sign(w) (-0.1 |w| - 15), sampled at the hit."""
    from scipy.linalg import expm
    h = 0.01
    a = np.array([[-1 / 0.05, 0.0], [8.998988 / 0.132173, -1 / 0.132173]])
    b = np.array([[0.1 / 0.05, 0.0], [0.0, 8.998988 / 0.132173]])  # inputs e_k, 2 sign(e_k)
    big = expm(np.block([[a, b], [np.zeros((2, 4))]]) * h)
    ad, bd = big[:2, :2], big[:2, 2:]
    n = int(round(t.max() / h)) + 2
    x = np.zeros(2)
    pos = d = s_prev = 0.0
    out = np.zeros(n)
    for k in range(n):
        if k:
            pos += 6 * h * d
            d = s_prev
        e = 2 * (90 - pos) - d
        out[k] = pos
        w = x[1]
        u = w + np.sign(w) * (-0.1 * abs(w) - 15)
        s_prev = u - 10 if u > 10 else (u + 10 if u < -10 else 0.0)
        x = ad @ x + bd @ np.array([e, 2 * np.sign(e)])
    idx = np.minimum(np.floor(t / h + 1e-6).astype(int), n - 1)
    return {"pos": out[idx]}
