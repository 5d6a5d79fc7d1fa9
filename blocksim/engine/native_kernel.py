"""The compiled integration loop of the numba backend: DOPRI5, output grid and event location.

One call integrates a whole segment of the hybrid run (from a restart to the next located
crossing or to the segment's bound) without returning to Python: it takes the steps
(`dopri5.py`'s method and coefficients), records the output grid through `observe`, checks
the zero crossings after each step, latches the unwatched sign changes and, at a crossing,
locates it exactly as `events.locate` does (Brent's method on the dense output, then the
first float at which the sign has changed). The engine only handles what happens at the
event. The model's functions arrive as first-class function pointers with one signature,
so this module is compiled once per machine (cache=True) for every model.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit, types

from blocksim.engine import dopri5

MODEL_SIGNATURE = types.void(types.float64, types.float64[::1], types.float64[::1],
                             types.float64[::1], types.float64[::1])
_FN = types.FunctionType(MODEL_SIGNATURE)

# fpar slots (float parameters in, results out)
F_T, F_BOUND, F_STEP, F_RTOL, F_ATOL, F_MAX_STEP, F_START, F_INTERVAL = range(8)
F_EVENT_T, F_TIME_EVENT, F_NEXT_STEP, F_BAD_T = 8, 9, 10, 11
N_FPAR = 12
# ipar slots
I_STATUS, I_GRID, I_N_GRID, I_ROWS, I_EVENT, I_STEPS, I_NFEV, I_MAX_STEPS, I_RESUME = range(9)
N_IPAR = 9
# statuses
BOUND, CROSSING, YIELD, UNDERFLOW, NONFINITE = 0, 1, 2, 3, 4

_C, _A, _B, _E, _D = dopri5.C, dopri5.A, dopri5.B, dopri5.E, dopri5.D
_SAFETY, _MIN_FACTOR, _MAX_FACTOR = dopri5.SAFETY, dopri5.MIN_FACTOR, dopri5.MAX_FACTOR
_EXPONENT, _RTOL_FLOOR = dopri5.ERROR_EXPONENT, dopri5.RTOL_FLOOR
_EPS4 = 4 * float(np.finfo(float).eps)


@njit(cache=True, nogil=True)
def _sign(v):
    if v > 0.0:
        return 1.0
    if v < 0.0:
        return -1.0
    return v  # 0.0 or NaN, as np.sign


@njit(cache=True, nogil=True)
def _ulp(t):
    t = abs(t)
    return np.nextafter(t, np.inf) - t


@njit(cache=True, nogil=True)
def _dense(t, t0, h, x0, rc, out):
    """Hairer's continuous extension of the step (t0, t0 + h) at t (rc: 4 x n)."""
    s = (t - t0) / h
    s1 = 1.0 - s
    for j in range(x0.size):
        out[j] = x0[j] + s * (rc[0, j] + s1 * (rc[1, j] + s * (rc[2, j] + s1 * rc[3, j])))


@njit(cache=True, nogil=True)
def _g(zc, i, t, t0, t1, h, x0, x1, rc, m, z, xd, g):
    if t == t1:
        for j in range(x1.size):
            xd[j] = x1[j]
    else:
        _dense(t, t0, h, x0, rc, xd)
    zc(t, xd, m, z, g)
    return g[i]


@njit(cache=True, nogil=True)
def _changed(zc, i, zi, t, t0, t1, h, x0, x1, rc, m, z, xd, g):
    return _sign(_g(zc, i, t, t0, t1, h, x0, x1, rc, m, z, xd, g)) != zi


@njit(cache=True, nogil=True)
def _brent(zc, i, xa, xb, fa, fb, t0, t1, h, x0, x1, rc, m, z, xd, g):
    """Brent's root finder (as scipy's brentq) to 4 ulp; the bracket [xa, xb] changes sign."""
    xtol = 4.0 * _ulp(max(abs(xa), abs(xb)))
    xpre, xcur, fpre, fcur = xa, xb, fa, fb
    xblk, fblk, spre, scur = 0.0, 0.0, 0.0, 0.0
    if fpre == 0.0:
        return xpre
    if fcur == 0.0:
        return xcur
    for _ in range(100):
        if fpre != 0.0 and fcur != 0.0 and (fpre < 0.0) != (fcur < 0.0):
            xblk, fblk = xpre, fpre
            spre = scur = xcur - xpre
        if abs(fblk) < abs(fcur):
            xpre, xcur, xblk = xcur, xblk, xcur
            fpre, fcur, fblk = fcur, fblk, fcur
        delta = (xtol + _EPS4 * abs(xcur)) / 2.0
        sbis = (xblk - xcur) / 2.0
        if fcur == 0.0 or abs(sbis) < delta:
            return xcur
        if abs(spre) > delta and abs(fcur) < abs(fpre):
            if xpre == xblk:
                stry = -fcur * (xcur - xpre) / (fcur - fpre)
            else:
                dpre = (fpre - fcur) / (xpre - xcur)
                dblk = (fblk - fcur) / (xblk - xcur)
                stry = -fcur * (fblk * dblk - fpre * dpre) / (dblk * dpre * (fblk - fpre))
            if 2.0 * abs(stry) < min(abs(spre), 3.0 * abs(sbis) - delta):
                spre, scur = scur, stry
            else:
                spre, scur = sbis, sbis
        else:
            spre, scur = sbis, sbis
        xpre, fpre = xcur, fcur
        if abs(scur) > delta:
            xcur += scur
        else:
            xcur += delta if sbis > 0.0 else -delta
        fcur = _g(zc, i, xcur, t0, t1, h, x0, x1, rc, m, z, xd, g)
    return xcur


@njit(cache=True, nogil=True)
def _locate(zc, i, zi, ta, tb, t0, t1, h, x0, x1, rc, m, z, xd, g):
    """The first float in (ta, tb] where sign(g_i) != zi: `events.locate`, compiled.

    (ta, tb) lies in the step (t0, t1) whose dense output (x0, x1, rc) gives the state.
    """
    lo, hi = ta, tb
    g1 = _g(zc, i, tb, t0, t1, h, x0, x1, rc, m, z, xd, g)
    if zi != 0.0 and _sign(g1) == -zi:
        a = ta
        found = False
        for _ in range(8):
            ga = _g(zc, i, a, t0, t1, h, x0, x1, rc, m, z, xd, g)
            sa = _sign(ga)
            if sa == zi:
                found = True
                break
            if sa == -zi:
                if a == ta:
                    break
                hi = a
                g1 = ga
            a = ta + (hi - ta) / 2.0
        if found:
            root = _brent(zc, i, a, hi, ga, g1, t0, t1, h, x0, x1, rc, m, z, xd, g)
            lo = ta
            step = _ulp(root)
            if _changed(zc, i, zi, root, t0, t1, h, x0, x1, rc, m, z, xd, g):
                hi = root
                for _ in range(12):
                    trial = root - step
                    if trial <= ta:
                        break
                    if not _changed(zc, i, zi, trial, t0, t1, h, x0, x1, rc, m, z, xd, g):
                        lo = trial
                        break
                    hi = trial
                    step *= 2.0
            else:
                lo = root
                for _ in range(12):
                    trial = root + step
                    if trial >= hi:
                        break
                    if _changed(zc, i, zi, trial, t0, t1, h, x0, x1, rc, m, z, xd, g):
                        hi = trial
                        break
                    lo = trial
                    step *= 2.0
    if lo > ta and _changed(zc, i, zi, lo, t0, t1, h, x0, x1, rc, m, z, xd, g):
        lo = ta
    while True:
        mid = lo + (hi - lo) / 2.0
        if mid <= lo or mid >= hi:
            return hi
        if _changed(zc, i, zi, mid, t0, t1, h, x0, x1, rc, m, z, xd, g):
            hi = mid
        else:
            lo = mid


@njit(cache=True, nogil=True)
def _rms(v):
    acc = 0.0
    for j in range(v.size):
        acc += v[j] * v[j]
    return math.sqrt(acc / v.size) if v.size else 0.0


@njit(cache=True, nogil=True)
def _initial_step(deriv, t0, x0, f0, span, rtol, atol, max_step, m, z, work, f1):
    """Hairer's starting step, as `dopri5.initial_step`."""
    n = x0.size
    if span <= 0.0 or n == 0:
        return max(span, 0.0)
    d0 = d1 = 0.0
    for j in range(n):
        sc = atol + abs(x0[j]) * rtol
        d0 += (x0[j] / sc) ** 2
        d1 += (f0[j] / sc) ** 2
    d0, d1 = math.sqrt(d0 / n), math.sqrt(d1 / n)
    h0 = 1e-6 if d0 < 1e-5 or d1 < 1e-5 else 0.01 * d0 / d1
    h0 = min(h0, span)
    for j in range(n):
        work[j] = x0[j] + h0 * f0[j]
    deriv(t0 + h0, work, m, z, f1)
    d2 = 0.0
    for j in range(n):
        sc = atol + abs(x0[j]) * rtol
        d2 += ((f1[j] - f0[j]) / sc) ** 2
    d2 = math.sqrt(d2 / n) / h0
    if d1 <= 1e-15 and d2 <= 1e-15:
        h1 = max(1e-6, h0 * 1e-3)
    else:
        h1 = (0.01 / max(d1, d2)) ** 0.2
    return min(100.0 * h0, h1, span, max_step)


@njit((_FN, _FN, _FN, types.float64[::1], types.float64[::1], types.float64[::1],
       types.float64[::1], types.float64[::1], types.int64[::1], types.float64[::1],
       types.float64[:, ::1], types.float64[::1], types.float64[::1]), cache=True, nogil=True)
def segment(deriv, zc, observe, x, m, z, zdir, fpar, ipar, out_t, out_y, x_ev, x_bad):
    """Integrate from fpar[F_T], x towards fpar[F_BOUND]; see the module docstring.

    Returns through fpar/ipar: the status, the time reached (x updated in place) or the
    located crossing (x_ev, F_EVENT_T, I_EVENT), the grid rows written to out_t/out_y
    (from row 0), the last step size, and the step and evaluation counts. The first grid
    row with a non-finite logged value leaves its time in F_BAD_T and its state in x_bad,
    so the engine can re-evaluate it in Python (where a domain error raises and names
    the block).
    """
    n, nz = x.size, z.size
    t, t_bound = fpar[F_T], fpar[F_BOUND]
    rtol, atol, max_step = max(fpar[F_RTOL], _RTOL_FLOOR), fpar[F_ATOL], fpar[F_MAX_STEP]
    start, interval = fpar[F_START], fpar[F_INTERVAL]
    bound_is_event = fpar[F_TIME_EVENT] != 0.0
    k_grid, n_grid, max_steps = ipar[I_GRID], ipar[I_N_GRID], ipar[I_MAX_STEPS]
    K = np.empty((7, n))
    rc = np.empty((4, n))
    xs, x_new, xd = np.empty(n), np.empty(n), np.empty(n)
    g, s_new = np.empty(nz), np.empty(nz)
    ylog = np.empty(out_y.shape[1])
    f = np.empty(n)
    deriv(t, x, m, z, f)
    nfev, steps, rows = 1, 0, 0
    span = t_bound - t
    if ipar[I_RESUME] == 1:
        h = fpar[F_NEXT_STEP]
    elif fpar[F_STEP] > 0.0:
        h = min(fpar[F_STEP], span, max_step)
    else:
        h = _initial_step(deriv, t, x, f, span, rtol, atol, max_step, m, z, xs, xd)
        nfev += 1
    status = BOUND
    while True:
        min_step = 10.0 * (np.nextafter(t, np.inf) - t)
        h = min(h, max_step)
        rejected = False
        finite = True
        h_next = h
        t_new = t
        while True:
            if h < min_step:
                status = NONFINITE if (rejected and not finite) else UNDERFLOW
                break
            t_new = t + h
            if t_new >= t_bound:
                t_new = t_bound
            h = t_new - t
            for j in range(n):
                K[0, j] = f[j]
            for s in range(1, 6):
                for j in range(n):
                    acc = 0.0
                    for r in range(s):
                        acc += _A[s, r] * K[r, j]
                    xs[j] = x[j] + h * acc
                deriv(t + _C[s] * h, xs, m, z, K[s])
            for j in range(n):
                acc = 0.0
                for r in range(6):
                    acc += _B[r] * K[r, j]
                x_new[j] = x[j] + h * acc
            deriv(t_new, x_new, m, z, K[6])
            nfev += 6
            err = 0.0
            for j in range(n):
                e = 0.0
                for r in range(7):
                    e += _E[r] * K[r, j]
                sc = atol + max(abs(x[j]), abs(x_new[j])) * rtol
                err += (h * e / sc) ** 2
            err = math.sqrt(err / n)
            finite = math.isfinite(err)
            if err < 1.0:
                if err == 0.0:
                    factor = _MAX_FACTOR
                else:
                    factor = min(_MAX_FACTOR, _SAFETY * err ** _EXPONENT)
                if rejected:
                    factor = min(1.0, factor)
                h_next = h * factor
                break
            if finite:
                h *= max(_MIN_FACTOR, _SAFETY * err ** _EXPONENT)
            else:
                h *= _MIN_FACTOR
            rejected = True
        if status != BOUND:
            break
        for j in range(n):
            if not math.isfinite(x_new[j]):
                status = NONFINITE
        if status != BOUND:
            break
        steps += 1
        # Dense-output coefficients of this step (used by the grid and by location).
        for j in range(n):
            d = 0.0
            for r in range(7):
                d += _D[r] * K[r, j]
            rc[0, j] = x_new[j] - x[j]
            rc[1, j] = h * K[0, j] - rc[0, j]
            rc[2, j] = rc[0, j] - h * K[6, j] - rc[1, j]
            rc[3, j] = h * d
        hit = -1
        t_hit = np.inf
        if nz:
            zc(t_new, x_new, m, z, g)
            for i in range(nz):
                s_new[i] = _sign(g[i])
            for i in range(nz):
                zi, si = z[i], s_new[i]
                if si == zi:
                    continue
                up = si > zi
                d = zdir[i]
                if d == 0.0 or (d > 0.0 and up) or (d < 0.0 and not up):
                    if hit < 0:
                        t_hit, hit = _locate(zc, i, zi, t, t_new, t, t_new, h, x, x_new, rc,
                                             m, z, xd, g), i
                    elif _changed(zc, i, zi, t_hit, t, t_new, h, x, x_new, rc, m, z, xd, g):
                        # Only a crossing before the earliest one so far matters.
                        ti = _locate(zc, i, zi, t, t_hit, t, t_new, h, x, x_new, rc, m, z, xd,
                                     g)
                        if ti < t_hit:
                            t_hit, hit = ti, i
        t_end = t_hit if hit >= 0 else t_new
        time_event = hit < 0 and t_new >= t_bound and bound_is_event
        while k_grid <= n_grid:
            tg = start + k_grid * interval
            if tg > t_end or (tg >= t_end - 4.0 * _ulp(t_end) and (hit >= 0 or time_event)):
                break
            if tg == t_new:
                for j in range(n):
                    xd[j] = x_new[j]
            else:
                _dense(tg, t, h, x, rc, xd)
            observe(tg, xd, m, z, ylog)
            out_t[rows] = tg
            for j in range(ylog.size):
                out_y[rows, j] = ylog[j]
                if not math.isfinite(ylog[j]) and math.isnan(fpar[F_BAD_T]):
                    fpar[F_BAD_T] = tg
                    for q in range(n):
                        x_bad[q] = xd[q]
            rows += 1
            k_grid += 1
        if hit >= 0:
            if t_hit == t_new:
                for j in range(n):
                    x_ev[j] = x_new[j]
            else:
                _dense(t_hit, t, h, x, rc, x_ev)
            fpar[F_EVENT_T] = t_hit
            ipar[I_EVENT] = hit
            status = CROSSING
            break
        t = t_new
        for j in range(n):
            x[j] = x_new[j]
            f[j] = K[6, j]
        for i in range(nz):
            z[i] = s_new[i]  # latch unwatched sign changes in place
        if t >= t_bound:
            status = BOUND
            break
        if steps >= max_steps:
            status = YIELD
            break
        h = h_next
    fpar[F_T] = t
    fpar[F_STEP] = h
    fpar[F_NEXT_STEP] = h_next
    ipar[I_STATUS] = status
    ipar[I_GRID] = k_grid
    ipar[I_ROWS] = rows
    ipar[I_STEPS] = steps
    ipar[I_NFEV] = nfev
