"""Independent references for the Simulink corpus models (see simulink_corpus.py).

Each reference is written from the model's block parameters read by a person (the equations
in the docstrings), never from blocksim's importer: closed forms where there are any, else
scipy's solve_ivp at tight tolerance, or the exact recurrence of a discrete model. A
reference takes the times at which blocksim logged the run and returns, per logged Simulink
signal, the reference values there (a 1-D array, or 2-D for a Mux/bus of several signals).
Workspace values the models need and the corpus does not define are in the corpus's
params/*.m files; the same numbers are written here.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
from scipy.integrate import solve_ivp
from scipy.signal import tf2ss

RTOL, ATOL = 1e-12, 1e-14
Signals = dict[str, np.ndarray]


@dataclass(frozen=True)
class Case:
    """How one corpus model is checked: `signals` maps a reference label to the Simulink
    names (ToWorkspace variable, Outport, Scope or block name) whose logged column holds it."""
    std: bool                      # uses only Simulink's standard library
    reference: Callable[[np.ndarray], Signals] | None = None
    signals: dict[str, tuple[str, ...]] = field(default_factory=dict)
    params: str | None = None      # the corpus's params/NAME.m to pass with --params
    breaks: tuple[float, ...] = ()  # times of jumps: compared on either side, not at them
    tight_solver: str | None = None  # solver of the tight run (else the imported one)
    note: str = ""


def dense(rhs, t0: float, x0, t: np.ndarray, method: str = "DOP853", **kw):
    """x(t) of x' = rhs(t, x) from t0 at the given times (columns: states)."""
    sol = solve_ivp(rhs, (t0, float(max(t.max(), t0))), np.asarray(x0, float), method=method,
                    rtol=kw.pop("rtol", RTOL), atol=kw.pop("atol", ATOL), dense_output=True, **kw)
    if not sol.success:
        raise RuntimeError(sol.message)
    return sol.sol(np.clip(t, t0, None)).T


def linear_jacobian(rhs, n: int) -> np.ndarray:
    """The constant Jacobian of a right-hand side that is affine in the state."""
    base = np.asarray(rhs(0.0, np.zeros(n)), float)
    return np.column_stack([np.asarray(rhs(0.0, np.eye(n)[i]), float) - base for i in range(n)])


def lti(num, den):
    """(A, B, C, D) of num(s)/den(s)."""
    a, b, c, d = tf2ss(np.atleast_1d(np.asarray(num, float)), np.asarray(den, float))
    return a, b[:, 0], c[0], float(d[0, 0])


def step_response(num, den, t: np.ndarray, t_step: float = 0.0, height: float = 1.0):
    """Output of num/den driven by height * 1(t >= t_step), zero initial state."""
    a, b, c, d = lti(num, den)
    x = dense(lambda _t, x: a @ x + b * height, t_step, np.zeros(len(b)), t)
    y = x @ c + d * height
    return np.where(t >= t_step, y, 0.0)


# ---------------------------------------------------------------- R14 (Simulink 6.3) models
def chap2_1(t):
    """1/(60s+1) step response delayed by 80 s."""
    return {"y": np.where(t >= 80, 1 - np.exp(-(t - 80) / 60), 0.0)}


def chap2_2(t):
    """PID on a delayed first-order plant: e = 1 - x(t-80), u = 0.8824 (e + 40 e' +
    (1/160) int e), 60 x' = u - x; logged y = [step, x(t-80)]. The step is 1 from t = 0,
    so e' = -x'(t-80). With q = 60 x + 40 kp x(t-80) the neutral equation becomes
    q' = kp (1 - x(t-80)) + kp z/160 - x, z' = 1 - x(t-80), x = (q - 40 kp x(t-80))/60,
    solved by the method of steps; x on each 80 s segment is kept as a Chebyshev fit."""
    delay, kp = 80.0, 0.8824
    fits: list = []

    def x_of(s):
        k = int(s // delay)
        if s < 0 or not fits:
            return 0.0
        return float(fits[min(k, len(fits) - 1)](s))

    state = np.zeros(2)
    for k in range(int(math.ceil(t.max() / delay))):
        lo, hi = k * delay, (k + 1) * delay

        def rhs(s, y):
            xd = x_of(s - delay)
            x = (y[0] - 40 * kp * xd) / 60
            return [kp * (1 - xd) + kp * y[1] / 160 - x, 1 - xd]
        sol = solve_ivp(rhs, (lo, hi), state, method="DOP853", rtol=1e-12, atol=1e-14,
                        dense_output=True)
        nodes = lo + (hi - lo) * (1 - np.cos(np.linspace(0, np.pi, 121))) / 2
        xs = (sol.sol(nodes)[0] - 40 * kp * np.array([x_of(s - delay) for s in nodes])) / 60
        fits.append(np.polynomial.Chebyshev.fit(nodes, xs, 60, domain=[lo, hi]))
        state = sol.y[:, -1]
    delayed = np.array([x_of(s - delay) for s in t])
    return {"y": np.column_stack([np.ones_like(t), delayed])}


def chap2_11(t):
    """Old PID (kp e + ki int e + kd de/dt) -> saturation +-5 -> 1/s -> (50s+50)/(s^2+s+1),
    unity feedback, step at 0; kp, ki, kd = 2, 0.5, 0.1 (params file). e' = -y' (the step
    is 1 from t = 0, its derivative block sees no jump)."""
    kp, ki, kd = 2.0, 0.5, 0.1
    a, b, c, _ = lti([50, 50], [1, 1, 1])

    def rhs(_s, s):
        x, w, z = s[:2], s[2], s[3]
        y = c @ x
        dy = c @ (a @ x + b * w)
        u = min(5.0, max(-5.0, kp * (1 - y) + ki * z - kd * dy))
        return [*(a @ x + b * w), u, 1 - y]
    s = dense(rhs, 0, np.zeros(4), t, max_step=0.01)
    return {"y": s[:, :2] @ c}


def chap5_5(t):
    """Disturbance observer (linear, stiff): r = sin t, d = 3 sin 2 pi t,
    s1 = r - d1, yp = Gp (s1 + d), Gp = 1/(Jp s^2 + bp s),
    d1 = QGn(yp) - Q(s1), Q = 1.003/(tol s + 1)^3 (the model's numerator [0 0 0 3*tol+1]),
    QGn = (3 tol s + 1)(Jn s^2 + bn s)/(tol s + 1)^3. Logged d1 and d."""
    jp, bp, jn, bn, tol = 0.0030, 0.067, 0.0033, 0.0673, 0.001
    den3 = [tol ** 3, 3 * tol ** 2, 3 * tol, 1]
    ap, bp_, cp, _ = lti([1], [jp, bp, 0])
    aq, bq, cq, dq = lti(np.polymul([3 * tol, 1], [jn, bn, 0]), den3)
    aQ, bQ, cQ, _ = lti([3 * tol + 1], den3)

    def outputs(s, x):
        xp, xq, xQ = x[:2], x[2:5], x[5:8]
        yp = cp @ xp
        d1 = cq @ xq + dq * yp - cQ @ xQ
        s1 = math.sin(s) - d1
        return yp, d1, s1

    def rhs(s, x):
        xp, xq, xQ = x[:2], x[2:5], x[5:8]
        yp, _d1, s1 = outputs(s, x)
        dist = 3 * math.sin(2 * math.pi * s)
        return [*(ap @ xp + bp_ * (s1 + dist)), *(aq @ xq + bq * yp), *(aQ @ xQ + bQ * s1)]
    x = dense(rhs, 0, np.zeros(8), t, method="Radau", rtol=1e-10, atol=1e-13,
              jac=linear_jacobian(rhs, 8))
    d1 = np.array([outputs(s, xi)[1] for s, xi in zip(t, x)])
    return {"d1": d1, "d": 3 * np.sin(2 * np.pi * t)}


# ---------------------------------------------------------------- Apress (R2009b-R2019b)
def example_2_1(t):
    """y' = -2 t y^2, y(0) = 0.5: y = 1/(t^2 + 2)."""
    y = 1 / (t ** 2 + 2)
    return {"y": y}


def ode_ex1(t):
    """x'' = 2 t - 2 x - 0.8 x', x(0) = 1, x'(0) = 2."""
    x = dense(lambda s, x: [x[1], 2 * s - 2 * x[0] - 0.8 * x[1]], 0, [1, 2], t)
    return {"x": x[:, 0]}


def ode_ex2(t):
    """x'' = K1 x + K2 x', x(0) = 2, x'(0) = 0, K1 = -4, K2 = -0.5 (params file)."""
    x = dense(lambda s, x: [x[1], -4 * x[0] - 0.5 * x[1]], 0, [2, 0], t)
    return {"x": x[:, 0]}


def ics_ex4(t):
    """From t0 = pi/2: z'' = -5 z + 2 z', z = 0, z' = 2, twice: in an Integrator pair and in
    a Second-Order Integrator whose limits 0 and 1 are set but not enabled (LimitX is off by
    default): z = e^tau sin 2 tau, z' = e^tau (sin 2 tau + 2 cos 2 tau), tau = t - pi/2."""
    tau = t - math.pi / 2
    z = np.exp(tau) * np.sin(2 * tau)
    dz = np.exp(tau) * (np.sin(2 * tau) + 2 * np.cos(2 * tau))
    return {"bus": np.column_stack([z, dz]), "x": z, "z": z}


def hires(t):
    """HIRES (Hairer & Wanner), read off the model's gains: the standard 8 equations."""
    def rhs(_s, y):
        r = 280 * y[5] * y[7]
        return [-1.71 * y[0] + 0.43 * y[1] + 8.32 * y[2] + 0.0007,
                1.71 * y[0] - 8.75 * y[1],
                -10.03 * y[2] + 0.43 * y[3] + 0.035 * y[4],
                8.32 * y[1] + 1.71 * y[2] - 1.12 * y[3],
                -1.745 * y[4] + 0.43 * y[5] + 0.43 * y[6],
                -r + 0.69 * y[3] + 1.71 * y[4] - 0.43 * y[5] + 0.69 * y[6],
                r - 1.81 * y[6],
                -r + 1.81 * y[6]]
    y = dense(rhs, 0, [1, 0, 0, 0, 0, 0, 0, 0.0057], t, method="Radau", rtol=1e-11,
              atol=1e-15)
    return {"bus": y}


def robertson(t):
    """Robertson: x1' = -0.04 x1 + 1e4 x2 x3, x2' = 0.04 x1 - 1e4 x2 x3 - 3e7 x2^2,
    x3' = 3e7 x2^2, x(0) = (1, 0, 0); logged bus (x1, 1e4 x2, x3)."""
    def rhs(_s, x):
        return [-0.04 * x[0] + 1e4 * x[1] * x[2],
                0.04 * x[0] - 1e4 * x[1] * x[2] - 3e7 * x[1] ** 2,
                3e7 * x[1] ** 2]
    x = dense(rhs, 0, [1, 0, 0], t, method="Radau", rtol=1e-11, atol=1e-16)
    return {"bus": np.column_stack([x[:, 0], 1e4 * x[:, 1], x[:, 2]])}


def dc_motor(t):
    """Kt / (La Jm s^3 + (Ra Jm + C Jm) s^2 + C Ra s) and the same without the s, driven by
    a step of 12 at t = 1 (the Step's default time); InitFcn: Jm .01, C .1, Kt 1, Ra 1.25,
    La .5. Logged bus (angle, step, speed)."""
    jm, c, kt, ra, la = 0.01, 0.1, 1.0, 1.25, 0.5
    den = [la * jm, ra * jm + c * jm, c * ra]
    angle = step_response([kt], den + [0], t, 1.0, 12.0)
    speed = step_response([kt], den, t, 1.0, 12.0)
    return {"bus": np.column_stack([angle, np.where(t >= 1, 12.0, 0.0), speed])}


def dc_motor_load(t):
    """Two-inertia DC motor as wired (InitFcn values), va = 12 from t = 1 (Step default):
      La i' = va - k th1 - Ra i,  J2 w2' = -B2 w2 + k th1 - k th2,  th2' = w2,
      J1 w1' = Kt i + k th2 - k th1 - B1 w1,  th1' = w1;
    outputs tau_m = Kt i, tau_f = B2 w2 + J2 w2', Tau_f = k (th1 - th2)."""
    va, ra, k, b1, b2 = 12.0, 7.17, 0.01, 7.05e-5, 3e-5
    j1, j2, kt, la = 4.14e-5, 2.12e-3, 4.6e-4, 9.53e-4

    def rhs(s, x):
        i, w2, th2, w1, th1 = x
        v = va if s >= 1 else 0.0
        di = (v - k * th1 - ra * i) / la
        dw2 = (-b2 * w2 + k * th1 - k * th2) / j2
        dw1 = (kt * i + k * th2 - k * th1 - b1 * w1) / j1
        return [di, dw2, w2, dw1, w1]
    x = np.zeros((len(t), 5))
    on = t >= 1
    x[on] = dense(rhs, 1, np.zeros(5), t[on], method="Radau", rtol=1e-11, atol=1e-16,
                  jac=linear_jacobian(rhs, 5))
    i, w2, th2, w1, th1 = x.T
    return {"tau_m": kt * i, "theta_2": th2, "tau_f": b2 * w2 + (-b2 * w2 + k * th1 - k * th2),
            "theta_1": th1, "Tau_f": k * (th1 - th2)}


def microphone(t):
    """m u' = -K x + 1(t >= v) - v Bl - D u, x' = u, L i' = Bl u - R i, i(0) = i0
    (InitFcn: v = 48e-4, i0 = 3e-3, m = 50e-3, K = 0.1, D = 3e-5, Bl = 0.5, R = 5, L = 45)."""
    v, i0, m, k, d, bl, r, ll = 48e-4, 3e-3, 50e-3, 1e-1, 3e-5, 0.5, 5.0, 45.0

    def rhs(s, x):
        u, pos, i = x
        f = 1.0 if s >= v else 0.0
        return [(-k * pos + f - v * bl - d * u) / m, u, (bl * u - r * i) / ll]
    x = np.zeros((len(t), 3))
    before, after = t < v, t >= v
    x[before] = dense(rhs, 0, [0, 0, i0], t[before]) if before.any() else x[before]
    x_v = dense(rhs, 0, [0, 0, i0], np.array([v]))[0]
    x[after] = dense(rhs, v, x_v, t[after])
    return {"x": x[:, 1], "i": x[:, 2]}


def two_dof(t):
    """Read off the wiring (params file values m1 1, m2 2, k1 10, k2 20, c1 .5, c2 .3,
    c3 .2, F0 1, ICs [.1 0 -.1 0]):
      m1 v1' = -(c1+c2) v1 - k1 x1 + F0 sin 10t + c2 v2 + k2 x2
      m2 v2' = -(c2+c3) v2 + k1 x1 + c2 v1 - (k1+k2) x2."""
    m1, m2, k1, k2, c1, c2, c3, f0 = 1, 2, 10, 20, 0.5, 0.3, 0.2, 1

    def rhs(s, x):
        x1, v1, x2, v2 = x
        return [v1, (-(c1 + c2) * v1 - k1 * x1 + f0 * math.sin(10 * s) + c2 * v2 + k2 * x2) / m1,
                v2, (-(c2 + c3) * v2 + k1 * x1 + c2 * v1 - (k1 + k2) * x2) / m2]
    x = dense(rhs, 0, [0.1, 0, -0.1, 0], t)
    return {"x1": x[:, 0], "x2": x[:, 2]}


# ---------------------------------------------------------------- textbook/lab control loops
def dual_pot_servo(t):
    """Step at 1 -> sum(+ -) -> 0.01 -> 3333/(s/345 + 1) -> 0.1/(s^3/53^2 + 0.14/53 s^2 + s)
    -> y, fed back through a gain of 1 (the default Gain)."""
    a1, b1, c1, _ = lti([3333], [1 / 345, 1])
    a2, b2, c2, _ = lti([0.1], [1 / 53 ** 2, 2 * 0.07 / 53, 1, 0])

    def rhs(s, x):
        x1, x2 = x[:1], x[1:]
        e = (1.0 if s >= 1 else 0.0) - c2 @ x2
        return [*(a1 @ x1 + b1 * 0.01 * e), *(a2 @ x2 + b2 * (c1 @ x1))]
    y = np.zeros(len(t))
    m = t >= 1
    y[m] = dense(rhs, 1, np.zeros(4), t[m]) [:, 1:] @ c2
    return {"y": y}


def variable_step_curve(t):
    """Four decoupled integrator loops driven by a step at 1:
    x0' = 1 - 3 x0, x1' = 1 - 4 x1, x2' = 1 - 2 x2, x3' = x2 - 2 x3;
    y = -x0 + 7.5 x1 + 3 x2 - 4.5 x3."""
    def rhs(s, x):
        u = 1.0 if s >= 1 else 0.0
        return [u - 3 * x[0], u - 4 * x[1], u - 2 * x[2], x[2] - 2 * x[3]]
    x = np.zeros((len(t), 4))
    m = t >= 1
    x[m] = dense(rhs, 1, np.zeros(4), t[m])
    return {"y": -x[:, 0] + 7.5 * x[:, 1] + 3 * x[:, 2] - 4.5 * x[:, 3]}


def before_after_correction(t):
    """Unity loops of 4/(s^2 + 2s) without and with the lead (0.2269 s + 1)/(0.0564 s + 1),
    step at 1; logged Mux (uncorrected, corrected)."""
    plain = step_response([4], [1, 2, 4], t, 1.0)
    loop = np.polymul([0.2269, 1], [4])
    den = np.polyadd(np.polymul([0.0564, 1], [1, 2, 0]), loop)
    return {"y": np.column_stack([plain, step_response(loop, den, t, 1.0)])}


def closed_loop_step(num_c, den_c, num_p, den_p, height=1.0, t_step=0.0):
    """Unity-feedback response of C(s) P(s) to a step."""
    num = np.polymul(num_c, num_p)
    den = np.polyadd(np.polymul(den_c, den_p), num)
    return lambda t: step_response(num, den, t, t_step, height)


def check2_3(t):
    """Three loops 50 -> sum(+ -) -> kz -> (1 - s/z)/s -> K(1 - h s)/((tau s + 1)(h s + 1));
    K 2, tau 0.5, h 0.05, z 2/4/8, kz .5/.3/.2 (params file); the 50 is a step sampled at
    0.01 from t = 0 (constant)."""
    k, tau, h = 2.0, 0.5, 0.05
    plant = ([-h * k, k], [tau * h, tau + h, 1])
    out = {}
    for name, z, kz in (("sim_Z1", 2, 0.5), ("sim_Z2", 4, 0.3), ("sim_Z3", 8, 0.2)):
        out[name] = closed_loop_step([-kz / z, kz], [1, 0], *plant, height=50.0)(t)
    return out


def prelab2(t):
    """Three loops 10 -> sum(+ -) -> gain -> (1 - s/z)/s -> 5/(s + 5) (params file),
    gains 2.62/4.69/2.93, z 10/20/30."""
    plant = ([5], [1, 5])
    out = {}
    for name, z, g in (("s1_step_resp", 10, 2.62), ("s2_step_resp2", 20, 4.69),
                       ("s3_step_resp3", 30, 2.93)):
        out[name] = closed_loop_step([-g / z, g], [1, 0], *plant, height=10.0)(t)
    return out


def pendulo(t):
    """Double pendulum in Hamiltonian form, as the four Fcn blocks (m 1, l 1, g 9.81,
    theta 0.5/-0.3, p 0, params file):
      th1' = 6/(m l^2) (2 p1 - 3 cos(th1 - th2) p2)/(16 - 9 cos^2(th1 - th2))
      th2' = 6/(m l^2) (8 p2 - 3 cos(th1 - th2) p1)/(16 - 9 cos^2(th1 - th2))
      p1' = -m l^2/2 (th1' th2' sin(th1 - th2) + 3 g/l sin th1)
      p2' = -m l^2/2 (-th1' th2' sin(th1 - th2) + g/l sin th2)."""
    m, ll, g = 1.0, 1.0, 9.81

    def rhs(_s, x):
        th1, th2, p1, p2 = x
        c = math.cos(th1 - th2)
        d1 = 6 / (m * ll ** 2) * (2 * p1 - 3 * c * p2) / (16 - 9 * c * c)
        d2 = 6 / (m * ll ** 2) * (8 * p2 - 3 * c * p1) / (16 - 9 * c * c)
        sn = math.sin(th1 - th2)
        return [d1, d2, -0.5 * m * ll ** 2 * (d1 * d2 * sn + 3 * g / ll * math.sin(th1)),
                -0.5 * m * ll ** 2 * (-d1 * d2 * sn + g / ll * math.sin(th2))]
    x = dense(rhs, 0, [0.5, -0.3, 0, 0], t)
    return {"theta1": x[:, 0], "theta2": x[:, 1], "p1": x[:, 2], "p2": x[:, 3]}


def pid_loop(p, i, d, n, plant_num, plant_den, gain=1.0, t_step=0.0):
    """Parallel PID with derivative filter, u = p e + i int e + d n (e - f), f' = n (e - f),
    on gain * e, unity feedback around plant num/den, step at t_step. Returns (y, u)."""
    a, b, c, _ = lti(plant_num, plant_den)
    nx = len(b)

    def parts(s, x):
        y = c @ x[:nx]
        e = gain * ((1.0 if s >= t_step else 0.0) - y)
        u = p * e + i * x[nx] + d * n * (e - x[nx + 1])
        return y, e, u

    def rhs(s, x):
        _y, e, u = parts(s, x)
        return [*(a @ x[:nx] + b * u), e, n * (e - x[nx + 1])]

    def run(t):
        x = np.zeros((len(t), nx + 2))
        m = t >= t_step
        x[m] = dense(rhs, t_step, np.zeros(nx + 2), t[m])
        yu = np.array([parts(s, xi)[::2] for s, xi in zip(t, x)])
        return yu[:, 0], np.where(m, yu[:, 1], 0.0)
    return run


def crash_pid(t):
    """K = 1 (params file) -> PID(1, 1, 0, N 100) -> 1/(2s^2 + 3s + 5), step at 1."""
    y, _u = pid_loop(1, 1, 0, 100, [1], [2, 3, 5], gain=1.0, t_step=1.0)(t)
    return {"y": y}


def pidwb_second_order(t):
    """PID(1, 0.2, 0.01, N 100) on 1/(s^2 + 1.2 s + 1), step at 0; logged r, u, y."""
    y, u = pid_loop(1, 0.2, 0.01, 100, [1], [1, 1.2, 1])(t)
    return {"r": np.ones_like(t), "u": u, "y": y}


def pidwb_cascade(t):
    """Outer PID(2, 0.4, 0.02, N 100) on r - y gives the inner set point; inner
    PID(3, 0.6, 0.01, N 100) on (set point - v) drives v = 1/(0.2 s + 1) u; y = int v."""
    def parts(_s, x):
        v, y, io, fo, ii, fi = x
        eo = 1.0 - y
        uo = 2 * eo + 0.4 * io + 0.02 * 100 * (eo - fo)
        ei = uo - v
        ui = 3 * ei + 0.6 * ii + 0.01 * 100 * (ei - fi)
        return eo, ei, ui

    def rhs(s, x):
        eo, ei, ui = parts(s, x)
        v = x[0]
        return [(ui - v) / 0.2, v, eo, 100 * (eo - x[3]), ei, 100 * (ei - x[5])]
    x = dense(rhs, 0, np.zeros(6), t)
    u = np.array([parts(s, xi)[2] for s, xi in zip(t, x)])
    return {"r": np.ones_like(t), "u": u, "y": x[:, 1]}


def crash_openloop(t):
    """Step at 1 -> 4 -> 1/(2s + 3)."""
    return {"y": np.where(t >= 1, 4 / 3 * (1 - np.exp(-1.5 * (t - 1))), 0.0)}


def crash_pulse(t):
    """Pulse Generator: amplitude 5, period 2 (the model's saved default), width 10 %:
    5 on [2k, 2k + 0.2)."""
    return {"y": np.where(np.mod(t, 2) < 0.2 - 1e-12, 5.0, 0.0)}


def downey_tutorial(t):
    """Step at 0 -> 1/(2.5 s + 1)."""
    return {"y": 1 - np.exp(-t / 2.5)}


def vehicle_coasting(t):
    """With no brake torque (the root inport reads 0) the wheel rolls without slip: slip 0,
    mu(0) = 0, so the wheel speed v0/Rr = 70.4 and the vehicle speed 88 stay constant."""
    return {"wheel": np.full_like(t, 88 / 1.25), "vehicle": np.full_like(t, 88 / 1.25)}


def zeros_everywhere(t):
    """Root inports read 0: every output stays 0."""
    return {"zero": np.zeros_like(t)}


def ramp_derivative(t):
    """Ramp (slope 1 from 0) -> Derivative -> Integrator: ramp t, derivative 1,
    integral t (logged on the scope's three inputs)."""
    return {"scope": np.column_stack([t, np.ones_like(t), t])}


def implicit_ex4(t):
    """An algebraic loop: s = -x - exp(s) (Sum '--' of x and exp(s)), v' = s, x' = v,
    x(0) = 1, v(0) = 0; s = -x - W(e^-x) (Lambert W). Outputs x and v."""
    from scipy.special import lambertw

    def rhs(_s, y):
        s = -y[0] - float(np.real(lambertw(math.exp(-y[0]))))
        return [y[1], s]
    y = dense(rhs, 0, [1, 0], t)
    return {"x": y[:, 0], "v": y[:, 1]}


def abs_bang_bang(t):
    """Root inports read 0: slip = 1 - 0/(0 + (0 == 0) eps) = 1, 0.2 - 1 < 0, so the
    bang-bang controller (u > 0) - (u < 0) gives -1."""
    return {"force": np.full_like(t, -1.0)}


def chap1_2(t):
    """Old PID (60, 1, 3; pure derivative) on the state-space plant x1' = x2,
    x2' = -25 x2 + 133 u (the Manual Switch at its lower input), tracking sin(0.4 pi t):
    e' = 0.4 pi cos(0.4 pi t) - x2 (the plant has no feedthrough). Logged yd and y."""
    w = 0.4 * math.pi

    def rhs(s, x):
        x1, x2, z = x
        e = math.sin(w * s) - x1
        u = 60 * e + z + 3 * (w * math.cos(w * s) - x2)
        return [x2, -25 * x2 + 133 * u, e]
    x = dense(rhs, 0, [0, 0, 0], t)
    return {"yd": np.sin(w * t), "y": x[:, 0]}


def sinwave(t):
    """sin t + sin 2t + sin 3t (three Sine Wave blocks into a Sum)."""
    return {"sum": np.sin(t) + np.sin(2 * t) + np.sin(3 * t)}


def motor_drive(t):
    """Cascaded DC drive of nine transfer functions (step at 0):
    r = 1/(0.01s+1); speed loop (0.17s+1)/(0.085s) on r - 0.0044/(0.01s+1) n, then
    1/(0.01s+1); current loop (0.15s+1)/(0.051s) on that - 0.1/(0.01s+1) i, then
    70/(0.0067s+1); i = 0.21/(0.15s+1) (that - 0.212 n); n = 130/s i."""
    blocks = {name: lti(*nd) for name, nd in {
        "f": ([1], [0.01, 1]), "pi_n": ([0.17, 1], [0.085, 0]), "f3": ([1], [0.01, 1]),
        "pi_i": ([0.15, 1], [0.051, 0]), "amp": ([70], [0.0067, 1]), "fb_i": ([0.1], [0.01, 1]),
        "arm": ([0.21], [0.15, 1]), "mech": ([130], [1, 0]), "fb_n": ([0.0044], [0.01, 1])}.items()}
    sizes = {k: len(v[1]) for k, v in blocks.items()}
    offsets, pos = {}, 0
    for name in blocks:
        offsets[name] = slice(pos, pos + sizes[name])
        pos += sizes[name]

    def out(name, x, u):
        a, b, c, d = blocks[name]
        return c @ x[offsets[name]] + d * u

    def rhs(_s, x):
        n = out("mech", x, 0.0)  # strictly proper blocks first
        i = out("arm", x, 0.0)
        fb_n, fb_i = out("fb_n", x, 0.0), out("fb_i", x, 0.0)
        r = out("f", x, 0.0)
        u_pin = r - fb_n
        v1 = out("pi_n", x, u_pin)
        f3 = out("f3", x, 0.0)
        u_pii = f3 - fb_i
        v2 = out("pi_i", x, u_pii)
        amp = out("amp", x, 0.0)
        inputs = {"f": 1.0, "pi_n": u_pin, "f3": v1, "pi_i": u_pii, "amp": v2, "fb_i": i,
                  "arm": amp - 0.212 * n, "mech": i, "fb_n": n}
        dx = np.zeros_like(x)
        for name, (a, b, _c, _d) in blocks.items():
            dx[offsets[name]] = a @ x[offsets[name]] + b * inputs[name]
        return dx
    x = dense(rhs, 0, np.zeros(pos), t, method="Radau", rtol=1e-11, atol=1e-15,
              jac=linear_jacobian(rhs, pos))
    return {"speed": np.array([out("mech", xi, 0.0) for xi in x])}


def lab_second_order(t):
    """A step at t = 1 (default) into 98596/(s^2 + 2 zeta 314 s + 98596) for zeta = 0.1,
    1 and 0; Scope = Mux(step, under damped), Scope2 = Mux(critically damped, step),
    Scope1 = Mux(undamped, step)."""
    step = np.where(t >= 1, 1.0, 0.0)
    resp = {z: step_response([98596], [1, 2 * z * 314, 98596], t, 1.0) for z in (0.1, 1, 0)}
    return {"under": np.column_stack([step, resp[0.1]]),
            "critical": np.column_stack([resp[1], step]),
            "undamped": np.column_stack([resp[0], step])}


def _interp_linear(x: float, xp, fp) -> float:
    """Linear interpolation with linear extrapolation (Lookup_n-D's saved defaults)."""
    i = min(max(int(np.searchsorted(xp, x)) - 1, 0), len(xp) - 2)
    return fp[i] + (fp[i + 1] - fp[i]) * (x - xp[i]) / (xp[i + 1] - xp[i])


def quarter_car(t):
    """Quarter car with a direction-dependent damper (params file: mc 250, ms 50,
    k1 16000, k2 160000, breakpoints v, tables c_com/c_re), road step 30 at t = 1:
      vr = vc - vs, c = vr > 0 ? c_com(|vr|) : c_re(|vr|) (linear inter/extrapolation),
      mc vc' = c (vs - vc) + k1 (xs - xc),  ms vs' = -k1 (xs - xc) - c (vs - vc) + k2 (r - xs).
    Logged Scope = xc, Scope1 = xs."""
    mc, ms, k1, k2 = 250.0, 50.0, 16000.0, 160000.0
    v = [0, 0.1, 0.5, 1, 2]
    c_com, c_re = [0, 300, 1000, 1500, 2000], [0, 600, 2000, 3000, 4000]

    def rhs(s, x):
        vc, xc, vs, xs = x
        vr = vc - vs
        c = _interp_linear(abs(vr), v, c_com if vr > 0 else c_re)
        road = 30.0 if s >= 1 else 0.0
        return [(c * (vs - vc) + k1 * (xs - xc)) / mc, vc,
                (-k1 * (xs - xc) - c * (vs - vc) + k2 * (road - xs)) / ms, vs]
    x = np.zeros((len(t), 4))
    on = t >= 1
    x[on] = dense(rhs, 1, np.zeros(4), t[on], rtol=1e-12, atol=1e-12, max_step=1e-3)
    return {"xc": x[:, 1], "xs": x[:, 3]}


def tank_level(t):
    """Tank level loop (R 1, A 2, kv 1, params file; the CONTROLLER subsystem is commented
    out): h = R (kv u - A h') through a Derivative (an algebraic loop Simulink solves), i.e.
    h' = (kv u - h/R)/A, h(0) = 0; u = 800 int(0.3 - h) (PID with P = D = 0, I = 800)."""
    def rhs(_s, x):
        h, z = x
        return [(800 * z - h) / 2, 0.3 - h]
    return {"h": dense(rhs, 0, [0, 0], t)[:, 0]}
