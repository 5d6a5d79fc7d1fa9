"""The history rings (`blocksim.history_ring`) in the numba backend's compiled loop.

The ring functions are plain Python over scalars and indexing; here they are compiled
with their helpers bound to compiled versions, for the loop (appending step records and
event markers, `record` and `mark`) and for the model functions (`hist_read`,
`hist_next`, which `native_funcs` exports to generated code). A channel is a row of
`hch` (ring start in m, capacity, width, offset of its input in the probe's output) and
of `hfl` (span, fixed delay).
"""
from __future__ import annotations

import types

from numba import njit

from blocksim import history_ring as ring
from blocksim.engine.native_locate import state_at

_GLOBALS = dict(vars(ring))


def _compiled(name: str):
    fn = getattr(ring, name)
    rebound = types.FunctionType(fn.__code__, _GLOBALS, fn.__name__, fn.__defaults__)
    _GLOBALS[name] = compiled = njit(cache=True, nogil=True)(rebound)
    return compiled


_offset = _compiled("_offset")
_search = _compiled("_search")
_claim = _compiled("_claim")
hist_read = _compiled("hist_read")
hist_next = _compiled("hist_next")
_schedule = _compiled("_schedule")
hist_due = _compiled("hist_due")
settle_marker = _compiled("settle_marker")
store_step = _compiled("store_step")
store_marker = _compiled("store_marker")
drop_marker = _compiled("drop_marker")
NODES = ring.NODES
_LAST = NODES - 1


@njit(cache=True, nogil=True)
def record(probe, t, t_new, h, x, x_new, rc, m, z, xd, U, S, hch, hfl):
    """Append the accepted step (t, t_new) to every ring: the inputs at the nodes, from
    the step's dense output (rc: its coefficients for every state)."""
    for j in range(NODES):
        if j == 0:
            tq = t
            for q in range(x.size):
                xd[q] = x[q]
        else:
            tq = t_new if j == _LAST else t + h * (j / _LAST)
            state_at(tq, t, t_new, h, x, x_new, rc, xd)
        probe(tq, xd, m, z, U[j], S)
    for c in range(hch.shape[0]):
        store_step(m, hch[c, 0], hch[c, 1], hch[c, 2], hfl[c, 0], t, t_new, U, hch[c, 3])


@njit(cache=True, nogil=True)
def mark(m, hch, hfl, t):
    """An event at t in every ring."""
    for c in range(hch.shape[0]):
        store_marker(m, hch[c, 0], hch[c, 1], hch[c, 2], hfl[c, 0], t, hfl[c, 1])


@njit(cache=True, nogil=True)
def settled(m, hch, t):
    """The event at t had other causes than breakpoints: fresh markers everywhere."""
    for c in range(hch.shape[0]):
        settle_marker(m, hch[c, 0], hch[c, 1], hch[c, 2], t)


@njit(cache=True, nogil=True)
def after_event(m, hch, t, crossing, hits, log_k, first, last, break_kind):
    """Once the event at t has settled: if anything but breakpoints happened there (a
    crossing, a sample hit, an entry of another kind), its markers are fresh."""
    other = crossing
    for j in range(hits.size):
        other = other or hits[j] != 0.0
    for j in range(first, last):
        other = other or log_k[j] != break_kind
    if other:
        settled(m, hch, t)


@njit(cache=True, nogil=True)
def unmark(m, hch, t):
    for c in range(hch.shape[0]):
        drop_marker(m, hch[c, 0], hch[c, 1], hch[c, 2], t)
