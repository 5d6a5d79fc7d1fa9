"""The compiled integration loop of the numba backend: DOPRI5, output grid, event location
and, where the model's event functions compile, event handling.

One call integrates the hybrid run from a restart onwards without returning to Python: it
takes the steps (`dopri5.py`'s method and coefficients), records the output grid through
`observe`, checks the zero crossings after each step, latches the unwatched sign changes
and, at a crossing, locates it exactly as `events.locate` does (`native.locate`). With
compiled event functions it then settles the event as `Simulator._event` does
(`native.settle`), restarts and goes on; otherwise, or when an event needs Python, it
returns the located crossing. The model's functions arrive as machine addresses with fixed
signatures (`native.layout`), so this module is compiled once per machine (cache=True) for
every model.
"""
from __future__ import annotations

import math
import warnings

import numpy as np
from numba import njit, types
from numba.core.errors import NumbaExperimentalFeatureWarning

from blocksim.engine import dopri5
from blocksim.engine.native import settle as ne
from blocksim.engine.native import rings as nh
from blocksim.engine.native.locate import changed, locate, sign, state_at, ulp
from blocksim.engine.native.layout import (
    A_AFTER, A_DERIV, A_NEXT_TIME, A_OBSERVE, A_PRE, A_PROBE, A_SAMPLE, A_UPDATE, A_ZC,
    BAD_CROSSING, BOUND, CROSSING, F_ATOL, F_BAD_T, F_BOUND, F_EVENT_T, F_HLAMB, F_HORIZON,
    F_INTERVAL, F_MAX_STEP, F_NEXT_STEP, F_RTOL, F_SOURCE_T, F_START, F_STEP,
    F_STIFF_BUDGET, F_STIFF_T, F_STOP, F_T, F_TIME_EVENT, F_ZENO_SPAN, I_ACCEPTED,
    I_BREAK_KIND, I_CLOCK_P, I_CLOCK_Q, I_EVENT, I_EVENTS, I_EVENTS_ON, I_GRID,
    I_GUARD_LEFT, I_HAS_NEXT, I_HITS, I_LOG, I_MAX_PASSES, I_MAX_STEPS, I_NFEV, I_N_GRID,
    I_RESTARTS, I_RESUME, I_ROWS, I_SIGNALS, I_START, I_STATUS, I_STEPS, I_STIFF_NEG,
    I_STIFF_ON, I_STIFF_POS, I_STIFF_STATE, I_STOP_KIND, I_TIMED, I_ZENO_EVENTS, NONFINITE,
    N_FPAR, SETTLED_AT_BOUND, START_FOR_PYTHON, STIFF, STOPPED, STUCK, UNDERFLOW, YIELD,
    Z_BEGAN, Z_LAST, Z_RUN, as_event_function, as_model_function, as_time_function,
    borrowed)

_C, _A, _B, _E, _D = dopri5.C, dopri5.A, dopri5.B, dopri5.E, dopri5.D
_SAFETY, _MIN_FACTOR, _MAX_FACTOR = dopri5.SAFETY, dopri5.MIN_FACTOR, dopri5.MAX_FACTOR
_EXPONENT, _RTOL_FLOOR = dopri5.ERROR_EXPONENT, dopri5.RTOL_FLOOR
_BOUND_ULPS = float(dopri5.BOUND_ULPS)
_STIFF_EVERY, _STIFF_LIMIT = dopri5.STIFF_EVERY, dopri5.STIFF_LIMIT
_STIFF_POSITIVE, _STIFF_NEGATIVE = dopri5.STIFF_POSITIVE, dopri5.STIFF_NEGATIVE
EV_PAIRS = 64  # (block, kind) entries one pass of `update` may log here
_F1, _F2, _I1 = types.float64[::1], types.float64[:, ::1], types.int64[::1]
_I2 = types.int64[:, ::1]


@njit(cache=True, nogil=True)
def _controlled(atol):
    """How many states the error control looks at (inf atol: one it ignores)."""
    count = 0
    for j in range(atol.size):
        if math.isfinite(atol[j]):
            count += 1
    return count


@njit(cache=True, nogil=True)
def _initial_step(deriv, t0, x0, f0, span, rtol, atol, max_step, m, z, work, f1, S):
    """Hairer's starting step, as `dopri5.initial_step` (atol: one value per state)."""
    n = x0.size
    if span <= 0.0 or n == 0:
        return max(span, 0.0)
    count = max(_controlled(atol), 1)
    d0 = d1 = 0.0
    for j in range(n):
        sc = atol[j] + abs(x0[j]) * rtol
        d0 += (x0[j] / sc) ** 2
        d1 += (f0[j] / sc) ** 2
    d0, d1 = math.sqrt(d0 / count), math.sqrt(d1 / count)
    if not (math.isfinite(d0) and math.isfinite(d1)):
        return math.nan  # a state or derivative not finite: the first step says so
    h0 = 1e-6 if d0 < 1e-5 or d1 < 1e-5 else 0.01 * d0 / d1
    h0 = min(h0, span)
    for j in range(n):
        work[j] = x0[j] + h0 * f0[j]
    deriv(t0 + h0, work, m, z, f1, S)
    d2 = 0.0
    for j in range(n):
        sc = atol[j] + abs(x0[j]) * rtol
        d2 += ((f1[j] - f0[j]) / sc) ** 2
    d2 = math.sqrt(d2 / count) / h0
    if d1 <= 1e-15 and d2 <= 1e-15:
        h1 = max(1e-6, h0 * 1e-3)
    else:
        h1 = (0.01 / max(d1, d2)) ** 0.2
    return min(100.0 * h0, h1, span, max_step)


@njit(cache=True, nogil=True, inline="always")
def _coefficients(columns, h, x, x_new, K, rc):
    """Hairer's dense-output coefficients of the step for the states `columns`."""
    for j in columns:
        d = 0.0
        for r in range(7):
            d += _D[r] * K[r, j]
        rc[0, j] = x_new[j] - x[j]
        rc[1, j] = h * K[0, j] - rc[0, j]
        rc[2, j] = rc[0, j] - h * K[6, j] - rc[1, j]
        rc[3, j] = h * d


@njit(cache=True, nogil=True)
def _stiff(ipar, fpar, h, t, t_stop, budget, K, y6, y7):
    """`dopri5.StiffnessTest.test` on the step from t of size h, just accepted, when a test
    is due: True if the system is stiff and (t_stop - t) / h exceeds the budget."""
    num = den = 0.0
    for j in range(y7.size):
        dk, dy = K[6, j] - K[5, j], y7[j] - y6[j]
        num += dk * dk
        den += dy * dy
    if den > 0.0:
        fpar[F_HLAMB] = h * math.sqrt(num / den)
    if not fpar[F_HLAMB] > _STIFF_LIMIT:
        ipar[I_STIFF_NEG] += 1
        if ipar[I_STIFF_NEG] == _STIFF_NEGATIVE:
            ipar[I_STIFF_POS] = 0
        return False
    ipar[I_STIFF_NEG] = 0
    ipar[I_STIFF_POS] += 1
    if ipar[I_STIFF_POS] < _STIFF_POSITIVE:
        return False
    if fpar[F_STIFF_T] != fpar[F_STIFF_T]:  # detected now: remember where
        fpar[F_STIFF_T] = t
        fastest, best = 0, -1.0
        for j in range(y7.size):
            if abs(K[6, j] - K[5, j]) > best:
                fastest, best = j, abs(K[6, j] - K[5, j])
        ipar[I_STIFF_STATE] = fastest
    return (t_stop - t) / h > budget if h > 0.0 else True


@njit(cache=True, nogil=True)
def _advance(sched, hit_t, hits, p, q):
    """`HitSchedule.advance`: the rates that just hit move to their next hit, its time
    computed from its tick as `rates.Clock.time` does (tick * p below 2**53: exact)."""
    for r in range(hit_t.size):
        if hits[r] != 0.0:
            sched[r, 2] += 1
            tick = sched[r, 1] + sched[r, 2] * sched[r, 0]
            hit_t[r] = float(tick * p) / float(q)


@njit(cache=True, nogil=True, inline="always")
def _restart_step(deriv, t, x, m, z, f, t_bound, h_last, rtol, atol, max_step, xs, xd, S):
    """The first step of a segment from t, as `Dopri5Stepper` chooses it: the last step
    size (clipped to the segment), unless it is below the time resolution at t (a step
    cut short by a bound within roundoff is no guide), then Hairer's starting step.
    Returns (h, evaluations)."""
    span = t_bound - t
    if h_last >= 10.0 * ulp(t):
        return min(h_last, span, max_step), 0
    return _initial_step(deriv, t, x, f, span, rtol, atol, max_step, m, z, xs, xd, S), 1


def _segment(fns, x, m, z, zdir, zmove, zc_owner, observed, selection, fpar, ipar, out_t,
             out_y, x_ev, x_bad, log_t, log_b, log_k, zeno, sched, hit_t, trig, hch, hfl,
             hup):
    """Integrate from fpar[F_T], x towards fpar[F_BOUND]; see the module docstring.

    Returns through fpar/ipar: the status, the time reached (x, m, z updated in place) or
    the located crossing for Python (x_ev, F_EVENT_T, I_EVENT), the output rows written
    to out_t/out_y (grid rows and the two limits of each event settled here, from row 0),
    the event log (log_t/log_b/log_k, I_LOG entries), the last step size, and the counts
    of steps, evaluations, events, restarts and sample hits. `observed` are the states
    `observe` reads (the grid interpolates only those); if the logged signals are states,
    `selection` names them, one per column, and the grid copies them without calling
    observe (else it is empty). The first grid row with a non-finite logged
    value leaves its time in F_BAD_T and its state in x_bad, so the engine can
    re-evaluate it in Python (where a domain error raises and names the block).
    With I_STIFF_ON, stiffness is tested as `dopri5.StiffnessTest` does, its counts kept
    in fpar/ipar across calls; over budget the call ends with status STIFF.
    With I_TIMED, time events and sample hits are settled here too: at a bound that is
    one, the model settles (`native.settle.settle`), the rates that hit move on (`sched`:
    period and offset in ticks and index of the next hit per rate, `hit_t` its time; the
    triggered rates run where their flags, the discrete slots `trig`, are raised), and
    the next bound follows from `next_time` and the hits (F_BOUND, F_TIME_EVENT and
    F_SOURCE_T out); the call goes on to the stop time.
    With history rings (`hch`, `hfl`, `hup`: transport delays), each accepted step is recorded
    in them through `probe` and each event marked before it settles (`native.rings`).
    """
    # Every array passes on borrowed (`layout.borrowed`): no atomic reference counting
    # per call of the model's functions, `locate` and `settle`.
    x, m, z, zdir, zmove = borrowed(x), borrowed(m), borrowed(z), borrowed(zdir), borrowed(zmove)
    zc_owner, observed, selection = borrowed(zc_owner), borrowed(observed), borrowed(selection)
    fpar, ipar, out_t, out_y = borrowed(fpar), borrowed(ipar), borrowed(out_t), borrowed(out_y)
    x_ev, x_bad, log_t, log_b = borrowed(x_ev), borrowed(x_bad), borrowed(log_t), borrowed(log_b)
    log_k, zeno, sched, hit_t = borrowed(log_k), borrowed(zeno), borrowed(sched), borrowed(hit_t)
    trig, hch, hfl, hup = borrowed(trig), borrowed(hch), borrowed(hfl), borrowed(hup)
    deriv, zc = as_model_function(fns[A_DERIV]), as_model_function(fns[A_ZC])
    observe = as_model_function(fns[A_OBSERVE])
    update, pre = as_event_function(fns[A_UPDATE]), as_event_function(fns[A_PRE])
    after = as_event_function(fns[A_AFTER])
    sample, next_time = as_model_function(fns[A_SAMPLE]), as_time_function(fns[A_NEXT_TIME])
    probe, has_probe = as_model_function(fns[A_PROBE]), fns[A_PROBE] != 0
    width = 1  # the probe's output: every ring's input, at each interpolation node
    if hch.shape[0] > 0:
        width = max(1, hch[hch.shape[0] - 1, 2] + hch[hch.shape[0] - 1, 3])
    U_owned = np.empty((nh.NODES + 2, width))
    has_update, has_pre, has_after = fns[A_UPDATE] != 0, fns[A_PRE] != 0, fns[A_AFTER] != 0
    has_sample, has_next = fns[A_SAMPLE] != 0, ipar[I_HAS_NEXT] != 0
    events_on, timed = ipar[I_EVENTS_ON] != 0, ipar[I_TIMED] != 0
    clock_p, clock_q, guard_left = ipar[I_CLOCK_P], ipar[I_CLOCK_Q], ipar[I_GUARD_LEFT]
    n, nz = x.size, z.size
    direct = selection.size == out_y.shape[1] and selection.size > 0
    t, t_bound, t_source = fpar[F_T], fpar[F_BOUND], fpar[F_SOURCE_T]
    rtol, max_step = max(fpar[F_RTOL], _RTOL_FLOOR), fpar[F_MAX_STEP]
    atol = fpar[N_FPAR:N_FPAR + x.size]  # per state (the run's atol unless a block says)
    n_err = max(_controlled(atol), 1)  # the error norm is over the controlled states
    start, interval = fpar[F_START], fpar[F_INTERVAL]
    horizon, zeno_span = fpar[F_HORIZON], fpar[F_ZENO_SPAN]
    bound_is_event = fpar[F_TIME_EVENT] != 0.0
    stiff_on = ipar[I_STIFF_ON] != 0
    accepted = ipar[I_ACCEPTED]  # accepted steps of the run (stiffness tests are due by it)
    t_stop, stiff_budget = fpar[F_STOP], fpar[F_STIFF_BUDGET]
    k_grid, n_grid, max_steps = ipar[I_GRID], ipar[I_N_GRID], ipar[I_MAX_STEPS]
    # The signals (scratch space of the model functions), then the parameter slots.
    n_sig, n_par = ipar[I_SIGNALS], fpar.size - N_FPAR - x.size
    # The loop's scratch arrays: one float buffer and one int buffer, kept to the end of
    # the call (`_keep`) and carved into borrowed views.
    n_s, n_log_y, n_rates = max(n_sig + n_par, 1), out_y.shape[1], hit_t.size + trig.size
    floats = np.zeros(n_s + 15 * n + 4 * nz + m.size + n_log_y + n_rates)
    ints = np.zeros(2 + 2 * EV_PAIRS + n, dtype=np.int64)
    work, iwork = borrowed(floats), borrowed(ints)
    U, all_states = borrowed(U_owned), iwork[2 + 2 * EV_PAIRS:]
    for j in range(n):
        all_states[j] = j
    S, at = work[:n_s], n_s
    S[n_sig:n_sig + n_par] = fpar[N_FPAR + x.size:]
    K, at = work[at:at + 7 * n].reshape((7, n)), at + 7 * n
    rc, at = work[at:at + 4 * n].reshape((4, n)), at + 4 * n
    xs, x_new, xd, f = work[at:at + n], work[at + n:at + 2 * n], work[at + 2 * n:at + 3 * n], \
        work[at + 3 * n:at + 4 * n]
    at += 4 * n
    g, s_new, zn, z0 = work[at:at + nz], work[at + nz:at + 2 * nz], \
        work[at + 2 * nz:at + 3 * nz], work[at + 3 * nz:at + 4 * nz]
    at += 4 * nz
    m0, at = work[at:at + m.size], at + m.size
    ylog, at = work[at:at + n_log_y], at + n_log_y
    hits = work[at:at + n_rates]  # the clock's rates, then the triggered ones
    ev = iwork[:2 + 2 * EV_PAIRS]
    nfev, steps, rows, nlog, n_events, restarts, n_hits = 0, 0, 0, 0, 0, 0, 0
    h_last = fpar[F_STEP]  # the last step taken: the guide for the first step of a segment
    h = h_next = h_last
    status = BOUND
    running = True
    clocked, result = False, 0
    if ipar[I_START] == 1:  # the start of the run: blocks set up their modes
        ipar[I_START] = 0  # once: a resumed call goes on from where it paused
        if has_probe:
            nh.mark(m, hch, hfl, t)
        result, rows, nlog, clocked = ne.settle(
            deriv, zc, observe, update, pre, after, sample, has_update, has_pre, has_after,
            has_sample, t, x, m, z, zmove, horizon, 1, -1, hit_t, trig, hits, ipar[I_STOP_KIND],
            ipar[I_MAX_PASSES], out_t, out_y, rows, log_t, log_b, log_k, nlog, zn, xs, x_new,
            g, xd, m0, z0, ev, ylog, S)
        if result == ne.FALLBACK:
            status = START_FOR_PYTHON
            running = False
        else:
            if clocked:
                _advance(sched, hit_t, hits, clock_p, clock_q)
                n_hits += 1
            if result == ne.STOP:
                status = STOPPED
                running = False
                restarts = -1  # the run ends at its start: no segment after it
            elif timed:  # the first bound, from the settled start
                t_source = next_time(t, m, S) if has_next else np.inf
                if not t_source > t:
                    status = STUCK
                    running = False
                t_time = t_source
                for r in range(hit_t.size):
                    t_time = min(t_time, hit_t[r])
                t_bound = min(t_stop, t_time)
                bound_is_event = t_bound == t_time
    t_snap = t_bound - _BOUND_ULPS * ulp(t_bound)
    if running:
        deriv(t, x, m, z, f, S)
        nfev = 1
        if ipar[I_RESUME] == 1:
            h = fpar[F_NEXT_STEP]
        else:
            h, more = _restart_step(deriv, t, x, m, z, f, t_bound, h_last, rtol, atol,
                                    max_step, xs, xd, S)
            nfev += more
        h_next = h
    while running:
        if t >= t_bound:  # at the bound: the stop time, or a time event
            if not (bound_is_event and timed):
                status = BOUND
                break
            if rows + 2 > out_t.size or nlog + EV_PAIRS + 1 > log_t.size:
                status = YIELD  # room for the rows first: the next call settles the event
                h_next = h
                break
            if has_probe:
                nh.mark(m, hch, hfl, t)
            nlog_before = nlog
            result, rows, nlog, clocked = ne.settle(
                deriv, zc, observe, update, pre, after, sample, has_update, has_pre,
                has_after, has_sample, t, x, m, z, zmove, horizon, 0, -1, hit_t, trig, hits,
                ipar[I_STOP_KIND], ipar[I_MAX_PASSES], out_t, out_y, rows, log_t, log_b,
                log_k, nlog, zn, xs, x_new, g, xd, m0, z0, ev, ylog, S)
            if result == ne.FALLBACK:
                status = BOUND  # Python settles this time event
                break
            if has_probe:
                nh.after_event(m, hch, hup, t, False, hits, log_b, log_k, nlog_before,
                               nlog, ipar[I_BREAK_KIND])
            if t_source <= t:  # a time event of a block, not only a sample hit
                n_events += 1
        else:
            min_step = 10.0 * (np.nextafter(t, np.inf) - t)
            h = min(h, max_step)
            rejected = False
            finite = True
            h_next = h
            t_new = t
            while True:
                t_new = t + h
                if t_new >= t_snap:  # within roundoff of the bound: on it (BOUND_ULPS)
                    t_new = t_bound  # a last step to the bound may be shorter than min_step
                elif not h >= min_step:  # NaN included: it must never loop
                    status = NONFINITE if (rejected and not finite) or h != h else UNDERFLOW
                    break
                h = t_new - t
                for j in range(n):
                    K[0, j] = f[j]
                for s in range(1, 6):
                    for j in range(n):
                        acc = 0.0
                        for r in range(s):
                            acc += _A[s, r] * K[r, j]
                        xs[j] = x[j] + h * acc
                    deriv(t + _C[s] * h, xs, m, z, K[s], S)
                for j in range(n):
                    acc = 0.0
                    for r in range(6):
                        acc += _B[r] * K[r, j]
                    x_new[j] = x[j] + h * acc
                deriv(t_new, x_new, m, z, K[6], S)
                nfev += 6
                err = 0.0
                for j in range(n):
                    e = 0.0
                    for r in range(7):
                        e += _E[r] * K[r, j]
                    sc = atol[j] + max(abs(x[j]), abs(x_new[j])) * rtol
                    err += (h * e / sc) ** 2
                err = math.sqrt(err / n_err)
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
            accepted += 1
            if stiff_on and (accepted % _STIFF_EVERY == 0 or ipar[I_STIFF_POS] > 0) and _stiff(
                    ipar, fpar, h, t, t_stop, stiff_budget, K, xs, x_new):
                status = STIFF
                fpar[F_STEP] = h
                break
            steps += 1
            h_last = h
            # Dense-output coefficients of this step, computed when needed: for every state
            # where a crossing is located, for the logged ones where the grid falls.
            rc_all = rc_observed = False
            if has_probe:  # the step into the history rings
                _coefficients(all_states, h, x, x_new, K, rc)
                rc_all = rc_observed = True
                nh.record(probe, t, t_new, h, x, x_new, rc, m, z, xd, U, S, hch, hfl, rtol,
                          fpar[F_ATOL])  # the run's atol: a ring holds inputs, not states
            hit = -1
            t_hit = np.inf
            if nz:
                zc(t_new, x_new, m, z, g, S)
                bad = False
                for i in range(nz):
                    s_new[i] = sign(g[i])
                    bad = bad or g[i] != g[i]
                if bad:  # a formula failed (Python raises there): hand the state over
                    t = t_new
                    for j in range(n):
                        x[j] = x_new[j]
                    status = BAD_CROSSING
                    break
                for i in range(nz):
                    zi, si = z[i], s_new[i]
                    if si == zi:
                        continue
                    up = si > zi
                    d = zdir[i]
                    if d == 0.0 or (d > 0.0 and up) or (d < 0.0 and not up):
                        if not rc_all:
                            _coefficients(all_states, h, x, x_new, K, rc)
                            rc_all = rc_observed = True
                        if hit < 0:
                            t_hit, hit = locate(zc, i, zi, t, t_new, t, t_new, h, x, x_new,
                                                rc, m, z, xd, g, S), i
                        elif changed(zc, i, zi, t_hit, t, t_new, h, x, x_new, rc, m, z, xd,
                                     g, S):
                            # Only a crossing before the earliest one so far matters: not
                            # one whose sign changes there too (a tie), as in `segment.py`.
                            before = np.nextafter(t_hit, -np.inf)
                            if before > t and changed(zc, i, zi, before, t, t_new, h, x, x_new,
                                                      rc, m, z, xd, g, S):
                                ti = locate(zc, i, zi, t, t_hit, t, t_new, h, x, x_new, rc, m,
                                            z, xd, g, S)
                                if ti < t_hit:
                                    t_hit, hit = ti, i
            t_end = t_hit if hit >= 0 else t_new
            time_event = hit < 0 and t_new >= t_bound and bound_is_event
            near = t_end - 4.0 * ulp(t_end) if hit >= 0 or time_event else np.inf
            while k_grid <= n_grid:
                tg = start + k_grid * interval
                if tg > t_end or tg >= near:
                    break  # past the step, or within roundoff of an event: the event's rows
                if not rc_observed:
                    _coefficients(observed, h, x, x_new, K, rc)
                    rc_observed = True
                # Interpolate the observed states (written out: as a call, this costs 5x).
                if tg == t_new:
                    for q in range(observed.size):
                        xd[observed[q]] = x_new[observed[q]]
                else:
                    sg = (tg - t) / h
                    sg1 = 1.0 - sg
                    for q in range(observed.size):
                        j = observed[q]
                        xd[j] = x[j] + sg * (rc[0, j] + sg1 * (rc[1, j] + sg * (
                            rc[2, j] + sg1 * rc[3, j])))
                out_t[rows] = tg
                if direct:  # the logged signals are states: no call of observe
                    for j in range(selection.size):
                        out_y[rows, j] = xd[selection[j]]
                else:
                    observe(tg, xd, m, z, ylog, S)
                    bad = False
                    for j in range(ylog.size):
                        out_y[rows, j] = ylog[j]
                        bad = bad or not math.isfinite(ylog[j])
                    if bad and math.isnan(fpar[F_BAD_T]):
                        fpar[F_BAD_T] = tg
                        if not rc_all:
                            _coefficients(all_states, h, x, x_new, K, rc)
                            rc_all = True
                        state_at(tg, t, t_new, h, x, x_new, rc, x_bad)
                rows += 1
                k_grid += 1
            if hit < 0:
                t = t_new
                for j in range(n):
                    x[j] = x_new[j]
                    f[j] = K[6, j]
                for i in range(nz):
                    z[i] = s_new[i]  # latch unwatched sign changes in place
                if t >= t_bound:
                    continue  # the top of the loop: the stop time or a time event
                if steps + n_events + n_hits >= max_steps:
                    status = YIELD
                    break
                h = h_next
                continue
            state_at(t_hit, t, t_new, h, x, x_new, rc, x_ev)
            fpar[F_EVENT_T] = t_hit
            ipar[I_EVENT] = hit
            status = CROSSING
            if not events_on:
                break
            # Zeno detection as `Simulator._zeno_check`; a Zeno point is Python's to report.
            run, began = zeno[Z_RUN] + 1.0, zeno[Z_BEGAN]
            if not t_hit - zeno[Z_LAST] < zeno_span:
                run, began = 0.0, t_hit
            if run >= ipar[I_ZENO_EVENTS]:
                break
            saved = (zeno[Z_LAST], zeno[Z_RUN], zeno[Z_BEGAN])
            zeno[Z_LAST], zeno[Z_RUN], zeno[Z_BEGAN] = t_hit, run, began
            for j in range(n):
                x[j] = x_ev[j]
            if has_probe:
                nh.mark(m, hch, hfl, t_hit)
            nlog_before = nlog
            result, rows, nlog, clocked = ne.settle(
                deriv, zc, observe, update, pre, after, sample, has_update, has_pre,
                has_after, has_sample, t_hit, x, m, z, zmove, horizon, 0, zc_owner[hit],
                hit_t, trig, hits,
                ipar[I_STOP_KIND], ipar[I_MAX_PASSES], out_t, out_y, rows, log_t, log_b,
                log_k, nlog, zn, xs, x_new, g, xd, m0, z0, ev, ylog, S)
            if result == ne.FALLBACK:
                zeno[Z_LAST], zeno[Z_RUN], zeno[Z_BEGAN] = saved
                break
            if result == ne.NOTHING and has_probe:
                nh.unmark(m, hch, t_hit)
            elif has_probe:
                nh.after_event(m, hch, hup, t_hit, True, hits, log_b, log_k, nlog_before,
                               nlog, ipar[I_BREAK_KIND])
            t = t_hit
            n_events += result != ne.NOTHING
        # An event settled here at t: go on from it, as a new segment would.
        if clocked:  # the clock's rates that hit move on
            _advance(sched, hit_t, hits, clock_p, clock_q)
            n_hits += 1
        if result == ne.STOP:
            status = STOPPED
            break
        while k_grid <= n_grid and start + k_grid * interval <= t + 4.0 * ulp(t):
            k_grid += 1  # the event rows stand for a grid point at the event instant
        if timed:  # the next bound (`Simulator._next_bound`)
            t_source = next_time(t, m, S) if has_next else np.inf
            if not t_source > t:
                status = STUCK
                break
            t_time = t_source
            for r in range(hit_t.size):
                t_time = min(t_time, hit_t[r])
            t_bound = min(t_stop, t_time)
            bound_is_event = t_bound == t_time
            t_snap = t_bound - _BOUND_ULPS * ulp(t_bound)
        if t >= t_bound:
            status = SETTLED_AT_BOUND
            break
        # Restart: the derivative anew, the first step from the last one.
        restarts += 1
        deriv(t, x, m, z, f, S)
        h, more = _restart_step(deriv, t, x, m, z, f, t_bound, h_last, rtol, atol, max_step,
                                xs, xd, S)
        nfev += 1 + more
        status = BOUND
        h_next = h
        if steps + n_events + n_hits >= max_steps or restarts - n_hits >= guard_left:
            status = YIELD
            break
    fpar[F_T] = t
    if status != STIFF:
        fpar[F_STEP] = h_last
    fpar[F_NEXT_STEP] = h_next
    fpar[F_BOUND], fpar[F_SOURCE_T] = t_bound, t_source
    fpar[F_TIME_EVENT] = 1.0 if bound_is_event else 0.0
    ipar[I_STATUS] = status
    ipar[I_GRID] = k_grid
    ipar[I_ROWS] = rows
    ipar[I_STEPS] = steps
    ipar[I_NFEV] = nfev
    ipar[I_LOG] = nlog
    ipar[I_EVENTS] = n_events
    ipar[I_RESTARTS] = restarts
    ipar[I_ACCEPTED] = accepted
    ipar[I_HITS] = n_hits
    _keep(floats, ints, U_owned)


@njit(cache=True, nogil=True)
def _keep(floats, ints, U):
    """Nothing: a use of the owners of the loop's borrowed views at its end, so that
    numba frees them only after it."""
    return None


with warnings.catch_warnings():
    # Calls through function addresses are numba's "first-class functions", flagged as an
    # experimental feature when the loop is compiled (once per machine); with fixed
    # signatures and no closures they are what the feature was made for.
    warnings.simplefilter("ignore", NumbaExperimentalFeatureWarning)
    segment = njit((_I1, _F1, _F1, _F1, _F1, _F1, _I1, _I1, _I1, _F1, _I1, _F1, _F2, _F1, _F1,
                    _F1, _I1, _I1, _F1, _I2, _F1, _I1, _I2, _F2, _I2), cache=True,
                   nogil=True)(_segment)
