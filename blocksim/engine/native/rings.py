"""The history rings (`blocksim.blocktypes.history_ring`) in the numba backend's compiled loop.

The ring functions are plain Python over scalars and indexing; here they are compiled
with their helpers bound to compiled versions, for the loop (appending step records and
event markers, `record` and `mark`) and for the model functions (`hist_read`,
`hist_next`, which `native.formulas` exports to generated code). A channel is a row of
`hch` (ring start in m, capacity, width, offset of its input in the probe's output) and
of `hfl` (span, fixed delay, 1.0 if the output feeds back to the input); `hup[c, b]` is
H_UPSTREAM where block b is a delay upstream of the ring's input, H_DELAY where it is another
block with a fixed delay (its "breakpoint" entries are a delay's breakpoints; another
block's entries of that name, a FromTable's, are fresh discontinuities), 0 elsewhere.
"""
from __future__ import annotations

import types

from numba import njit

from blocksim.blocktypes import history_ring as ring
from blocksim.engine.native.layout import H_UPSTREAM
from blocksim.engine.native.locate import state_at

_GLOBALS = dict(vars(ring))


def _compiled(name: str):
    fn = getattr(ring, name)
    rebound = types.FunctionType(fn.__code__, _GLOBALS, fn.__name__, fn.__defaults__)
    _GLOBALS[name] = compiled = njit(cache=True, nogil=True)(rebound)
    return compiled


_offset = _compiled("_offset")
_search = _compiled("_search")
_found = _compiled("_found")
_claim = _compiled("_claim")
later = _compiled("later")
hist_read = _compiled("hist_read")
hist_next = _compiled("hist_next")
_schedule = _compiled("_schedule")
hist_due = _compiled("hist_due")
settle_marker = _compiled("settle_marker")
fits = _compiled("fits")
store_step = _compiled("store_step")
store_marker = _compiled("store_marker")
drop_marker = _compiled("drop_marker")
NODES = ring.NODES


_FRACTIONS = tuple([j / (ring.NODES - 1) for j in range(ring.NODES)] + list(ring.CHECKS))


@njit(cache=True, nogil=True)
def record(probe, t, t_new, h, x, x_new, rc, m, z, xd, U, S, hch, hfl, rtol, atol):
    """Append the accepted step (t, t_new) to every ring, as `history.History.record`:
    in pieces whose quartics through the inputs at the nodes (from the step's dense
    output, rc: its coefficients for every state) meet the tolerances."""
    a, width, smallest = t, t_new - t, (t_new - t) * 2.0 ** -ring.SPLITS
    while a < t_new:
        b = t_new if a + width >= t_new else a + width
        for j in range(len(_FRACTIONS)):
            f = _FRACTIONS[j]
            tq = a if f == 0.0 else b if f == 1.0 else a + (b - a) * f
            if tq == t:
                for q in range(x.size):
                    xd[q] = x[q]
            else:
                state_at(tq, t, t_new, h, x, x_new, rc, xd)
            probe(tq, xd, m, z, U[j], S)
        if b - a > smallest and not fits(U, U.shape[1], rtol, atol):
            width = 0.5 * (b - a)
            continue
        for c in range(hch.shape[0]):
            store_step(m, hch[c, 0], hch[c, 1], hch[c, 2], hfl[c, 0], a, b, U, hch[c, 3])
        a, width = b, 2.0 * width


@njit(cache=True, nogil=True)
def mark(m, hch, hfl, t):
    """An event at t in every ring."""
    for c in range(hch.shape[0]):
        store_marker(m, hch[c, 0], hch[c, 1], hch[c, 2], hfl[c, 0], t, hfl[c, 1],
                     hfl[c, 2] != 0.0)


@njit(cache=True, nogil=True)
def after_event(m, hch, hup, t, crossing, hits, log_b, log_k, first, last, break_kind):
    """Once the event at t has settled, as `history.History.settled`: a marker is fresh
    if anything but a delay's breakpoints happened there (a crossing, a sample hit, an
    entry of another kind or block) or the breakpoint of a delay upstream of the ring
    (hup[c, block] == H_UPSTREAM)."""
    other = crossing
    for j in range(hits.size):
        other = other or hits[j] != 0.0
    for j in range(first, last):
        other = other or log_k[j] != break_kind or hup[0, log_b[j]] == 0
    for c in range(hch.shape[0]):
        fresh = other
        for j in range(first, last):
            fresh = fresh or (log_k[j] == break_kind and hup[c, log_b[j]] == H_UPSTREAM)
        settle_marker(m, hch[c, 0], hch[c, 1], hch[c, 2], t, fresh)


@njit(cache=True, nogil=True)
def unmark(m, hch, t):
    for c in range(hch.shape[0]):
        drop_marker(m, hch[c, 0], hch[c, 1], hch[c, 2], t)
