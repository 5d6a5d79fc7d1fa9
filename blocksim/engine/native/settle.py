"""Event handling in compiled code: `Simulator._event`, step for step, for a located crossing,
a time event or sample hit, and the start of the run.

With a model whose event functions (update, pre_event, after_event) numba can compile, the
loop settles an event where it located it: it reads the signs one horizon ahead, runs the
event iteration until nothing changes, records the left and right limits and logs what
the blocks did, then restarts the integration, all without returning to Python. Anything
out of the ordinary (an iteration that does not settle, a non-finite value, a full buffer,
a Zeno point) is undone and handed to Python, which handles that event with the very same
semantics and reports errors with its usual messages.
"""
from __future__ import annotations

import math

from numba import njit

from blocksim.engine.native.locate import sign
from blocksim.engine.native.layout import KIND_STATE

# results of `settle`
HANDLED, NOTHING, STOP, FALLBACK = 0, 1, 2, 3


@njit(cache=True, nogil=True)
def signs_after(deriv, zc, t, x, m, z, zmove, h, zn, dx, probe, g, S):
    """`Simulator._signs_after`: the signs one horizon along the flow, a second Euler step
    ahead where a moving zero crossing is still exactly zero. False if one is NaN (where
    Python would have raised)."""
    n, nz = x.size, z.size
    if nz == 0:
        return True  # no signs to read
    deriv(t, x, m, z, dx, S)
    for j in range(n):
        probe[j] = x[j] + h * dx[j]
    zc(t + h, probe, m, z, g, S)
    again = False
    for i in range(nz):
        zn[i] = sign(g[i])
        if zn[i] == 0.0 and zmove[i] != 0.0:
            again = True
    if again:
        deriv(t + h, probe, m, z, dx, S)
        for j in range(n):
            dx[j] = probe[j] + h * dx[j]
        zc(t + 2.0 * h, dx, m, z, g, S)
        for i in range(nz):
            if zn[i] == 0.0:
                zn[i] = sign(g[i])
    for i in range(nz):
        if zn[i] != zn[i]:
            return False
    return True


@njit(cache=True, nogil=True)
def _row(observe, t, x, m, z, ylog, S, out_t, out_y, row):
    """Write the logged signals at (t, x) to output row `row`; False if one is not finite."""
    observe(t, x, m, z, ylog, S)
    out_t[row] = t
    for j in range(ylog.size):
        out_y[row, j] = ylog[j]
        if not math.isfinite(ylog[j]):
            return False
    return True


@njit(cache=True, nogil=True)
def _iterate(deriv, zc, update, has_update, t, x, m, z, zmove, horizon, init, stop_kind,
             max_passes, log_t, log_b, log_k, nlog, zn, dx, probe, g, ev, S):
    """The event iteration of `Simulator._settle`: re-read the signs just after t and update
    the blocks until nothing changes. Returns (settled, a Stop block asked to stop, entries
    logged, passes, log entries); not settled: it did not settle, a value is not finite
    or the buffers are full (Python then handles the event)."""
    passes = entries = 0
    stop = settled = False
    for _ in range(max_passes):
        if not signs_after(deriv, zc, t, x, m, z, zmove, horizon, zn, dx, probe, g, S):
            break
        ev[0] = 0
        changed = update(t, x, m, z, zn, init, ev, S) if has_update else 0
        count = ev[0]
        if 2 * count + 1 > ev.size - 1 or nlog + count > log_t.size:
            break  # more entries than the buffers hold: Python handles this event
        for k in range(count):
            log_t[nlog], log_b[nlog], log_k[nlog] = t, ev[2 * k + 1], ev[2 * k + 2]
            nlog += 1
            stop = stop or ev[2 * k + 2] == stop_kind
        entries += count
        flipped = False
        for i in range(z.size):
            if zn[i] != z[i]:
                flipped = True
            z[i] = zn[i]
        passes += 1
        if changed == 0 and not flipped:
            settled = True
            break
        finite = True
        for j in range(x.size):
            finite = finite and math.isfinite(x[j])
        if not finite:
            break
    return settled, stop, entries, passes, nlog


@njit(cache=True, nogil=True)
def settle(deriv, zc, observe, update, pre, after, sample, has_update, has_pre, has_after,
           has_sample, t, x, m, z, zmove, horizon, init, block, hit_t, trig, hits, stop_kind,
           max_passes, out_t, out_y, rows, log_t, log_b, log_k, nlog,
           zn, dx, probe, g, x0, m0, z0, ev, ylog, S):
    """Settle the model at (t, x) as `Simulator._event` does: the crossing of a zero
    crossing owned by `block` (>= 0), a time event (block -1), or with `init` the start of
    the run (no left limit, blocks set up their modes). Once the model has settled, the
    rates due run (`Simulator._hits_due`): the clock's whose next hit (hit_t) is at t, and
    the triggered ones whose flag (the discrete slots `trig`) a gate raised; `sample` then
    runs once with their `hits` (the flags cleared) and the model settles again.

    Returns (result, rows, log entries, whether the clock's rates hit: the caller moves
    them on): HANDLED or STOP with the left and right limits in the output rows and the
    event log extended; NOTHING if a located crossing changed nothing (no trace left, m
    as before); FALLBACK with x, m and z as before, for Python to handle the event. x0, m0
    and z0 are scratch space for those copies.
    """
    for j in range(x.size):
        x0[j] = x[j]
    for j in range(m.size):
        m0[j] = m[j]
    for i in range(z.size):
        z0[i] = z[i]
    rows0, nlog0 = rows, nlog
    if rows + 2 > out_t.size or nlog + 1 > log_t.size:
        return FALLBACK, rows0, nlog0, False
    if not init:
        if not _row(observe, t, x, m, z, ylog, S, out_t, out_y, rows):  # the left limit
            return FALLBACK, rows0, nlog0, False
        rows += 1
        if has_pre:
            pre(t, x, m, z, zn, 0, ev, S)
        if block >= 0:
            log_t[nlog], log_b[nlog], log_k[nlog] = t, block, KIND_STATE
            nlog += 1
    else:  # `Simulator._latch_start`: the signs at the start before any block updates
        for _ in range(max_passes):
            if not signs_after(deriv, zc, t, x, m, z, zmove, horizon, zn, dx, probe, g, S):
                break
            same = True
            for i in range(z.size):
                same = same and zn[i] == z[i]
                z[i] = zn[i]
            if same:
                break
    settled, stop, entries, passes, nlog = _iterate(
        deriv, zc, update, has_update, t, x, m, z, zmove, horizon, init, stop_kind,
        max_passes, log_t, log_b, log_k, nlog, zn, dx, probe, g, ev, S)
    clocked = sampled = False
    if settled:
        for r in range(hit_t.size):
            hits[r] = 1.0 if hit_t[r] <= t else 0.0
            clocked = clocked or hit_t[r] <= t
        sampled = clocked
        for j in range(trig.size):
            flag = 1.0 if m[trig[j]] != 0.0 else 0.0
            hits[hit_t.size + j] = flag
            sampled = sampled or flag != 0.0
        settled = has_sample or not sampled  # without a compiled `sample`: Python samples
    if settled and sampled:
        for j in range(trig.size):
            m[trig[j]] = 0.0
        sample(t, x, m, z, hits, S)
        settled, stop_after, more, _, nlog = _iterate(
            deriv, zc, update, has_update, t, x, m, z, zmove, horizon, init, stop_kind,
            max_passes, log_t, log_b, log_k, nlog, zn, dx, probe, g, ev, S)
        stop = stop or stop_after
        entries += more
    if settled and block >= 0 and not sampled and entries == 0 and passes == 1:
        for j in range(m.size):
            m[j] = m0[j]  # a Memory must not sample at a non-event
        return NOTHING, rows0, nlog0, False
    # The right limit, with the event's pulses (a HitCrossing's 1.0), then clear them.
    if settled and _row(observe, t, x, m, z, ylog, S, out_t, out_y, rows):
        if has_after and after(t, x, m, z, zn, 0, ev, S) != 0:
            # pulses cleared: re-latch without edges
            settled = signs_after(deriv, zc, t, x, m, z, zmove, horizon, zn, dx, probe, g, S)
            for i in range(z.size):
                z[i] = zn[i]
        if settled:
            return (STOP if stop else HANDLED), rows + 1, nlog, clocked
    for j in range(x.size):
        x[j] = x0[j]  # resets of the passes so far: Python starts the event afresh
    for j in range(m.size):
        m[j] = m0[j]
    for i in range(z.size):
        z[i] = z0[i]
    return FALLBACK, rows0, nlog0, False
