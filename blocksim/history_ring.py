"""The ring of a block's input history, kept in the engine's discrete-state array.

A block that reads the past of a signal (a transport delay) declares a `blockspec.History`;
the compiler gives it a region of the engine's flat array `m` after every ordinary discrete
slot, and the engine (Python loop and numba loop alike) appends one record per accepted
step and one marker per event. These functions are the single definition of the layout:
plain Python on scalars and indexing, so the same text runs on numpy arrays or lists in
the Python backend and compiled by numba (`native_funcs` wraps the readers, the compiled
loop the writers).

Region layout from `base`: a header of HEAD slots (records stored, ring index of the
oldest, overflow flag, and for a fixed delay the instants of the input's last
discontinuity whose breakpoint has passed (-inf: none yet) and of the next one to
schedule (inf: none)), then `capacity` records of `record_size(width)` slots:
  ta, tb, hp, level, then per element NODES monomial coefficients in s = (t - ta) / hp.
A step record interpolates the input on [ta, tb] to the solver's order (quartic through
five points of the step's dense output). A marker (hp == 0, ta == tb) notes an event at
ta: the input may jump there; its `level` counts how often the discontinuity has passed
through a delay (0: an event of the model; breakpoints of high level are not scheduled).
A marker's level is set when the event begins (one more than the marker whose breakpoint
the event is, if any) and set back to 0 once the event has settled if anything else
happened there (`settle_marker`).
"""
from __future__ import annotations

import math

HEAD = 6
FIELDS = 4
NODES = 5  # interpolation points per step: s = 0, 1/4, 1/2, 3/4, 1
COUNT, FIRST, OVERFLOW, LO, HI = 0, 1, 2, 3, 4
MAX_LEVEL = 5  # breakpoints that passed this many delays are smooth enough to step over
# Monomial coefficients of the quartic through the values at the nodes: row p holds the
# weights of the values in the coefficient of s**p (the inverse Vandermonde matrix).
_W = (
    (1.0, 0.0, 0.0, 0.0, 0.0),
    (-25.0 / 3.0, 16.0, -12.0, 16.0 / 3.0, -1.0),
    (70.0 / 3.0, -208.0 / 3.0, 76.0, -112.0 / 3.0, 22.0 / 3.0),
    (-80.0 / 3.0, 96.0, -128.0, 224.0 / 3.0, -16.0),
    (32.0 / 3.0, -128.0 / 3.0, 64.0, -128.0 / 3.0, 32.0 / 3.0),
)


def header() -> list[float]:
    """The initial header of a ring."""
    return [0.0, 0.0, 0.0, -math.inf, math.inf, 0.0]


def record_size(width: int) -> int:
    return FIELDS + NODES * width


def region_size(width: int, capacity: int) -> int:
    return HEAD + capacity * record_size(width)


def _offset(m, base, capacity, width, i):
    """Where the i-th oldest record starts."""
    first = int(m[base + FIRST])
    return base + HEAD + ((first + i) % capacity) * (FIELDS + NODES * width)


def _search(m, base, capacity, width, n, q, strict):
    """How many records start before q (strict) or at or before q."""
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi) // 2
        ta = m[_offset(m, base, capacity, width, mid)]
        if ta < q or (not strict and ta == q):
            lo = mid + 1
        else:
            hi = mid
    return lo


def hist_read(m, base, capacity, width, k, q, clamp):
    """Element k of the input at time q. With `clamp` (a fixed delay) q is held to the
    breakpoints passed and next (header LO and HI): at q == HI the left limit (the record
    ending there), elsewhere the record starting at or before q (the right limit at an
    event). Beyond the newest record its polynomial extrapolates."""
    n = int(m[base + COUNT])
    if n == 0:
        return 0.0
    lo, hi = -math.inf, math.inf
    if clamp:
        lo, hi = m[base + LO], m[base + HI]
    if q < lo:
        q = lo
    if q > hi:
        q = hi
    i = _search(m, base, capacity, width, n, q, q == hi) - 1
    while i >= 0 and m[_offset(m, base, capacity, width, i) + 2] == 0.0:
        i -= 1  # markers hold no values
    if i < 0:  # before the first record: its first value
        i = 0
        while i < n - 1 and m[_offset(m, base, capacity, width, i) + 2] == 0.0:
            i += 1
    o = _offset(m, base, capacity, width, i)
    hp = m[o + 2]
    if hp == 0.0:
        return 0.0
    s = (q - m[o]) / hp
    if s < 0.0:
        s = 0.0
    c = o + FIELDS + NODES * k
    return m[c] + s * (m[c + 1] + s * (m[c + 2] + s * (m[c + 3] + s * m[c + 4])))


def hist_next(m, base, capacity, width, after, max_level):
    """The time of the first marker after `after` whose level is below max_level (inf:
    none): the next discontinuity of the input a delay must schedule."""
    n = int(m[base + COUNT])
    i = _search(m, base, capacity, width, n, after, False)
    while i < n:
        o = _offset(m, base, capacity, width, i)
        if m[o + 2] == 0.0 and m[o + 3] < max_level:
            return m[o]
        i += 1
    return math.inf


def hist_due(m, base, capacity, width, t, delay):
    """Pass the next breakpoint if it is due at t (HI + delay <= t): LO takes it, HI the
    one after. True if one passed (call again: several may be due at one instant)."""
    if m[base + HI] + delay <= t:
        m[base + LO] = m[base + HI]
        m[base + HI] = hist_next(m, base, capacity, width, m[base + LO], MAX_LEVEL)
        return True
    return False


def _schedule(m, base, capacity, width):
    """HI anew from the markers after LO."""
    m[base + HI] = hist_next(m, base, capacity, width, m[base + LO], MAX_LEVEL)


def _claim(m, base, capacity, width, t_now, span):
    """The ring slot for a new newest record, dropping the oldest if it is older than
    t_now - span; -1 (and the overflow flag) if the ring is full of records still needed."""
    n = int(m[base + COUNT])
    first = int(m[base + FIRST])
    if n < capacity:
        m[base + COUNT] = n + 1
        return (first + n) % capacity
    o = base + HEAD + first * (FIELDS + NODES * width)
    if m[o + 1] < t_now - span:
        m[base + FIRST] = (first + 1) % capacity
        return first
    m[base + OVERFLOW] = 1.0
    return -1


def store_step(m, base, capacity, width, span, ta, tb, values, offset):
    """Append the step [ta, tb] from the input at the nodes: values[j][offset + k] is
    element k at node j. Returns False if the ring is full (overflow flag set)."""
    j = _claim(m, base, capacity, width, ta, span)
    if j < 0:
        return False
    o = base + HEAD + j * (FIELDS + NODES * width)
    m[o] = ta
    m[o + 1] = tb
    m[o + 2] = tb - ta
    m[o + 3] = -1.0
    for k in range(width):
        c = o + FIELDS + NODES * k
        for p in range(NODES):
            acc = 0.0
            for jn in range(NODES):
                acc += _W[p][jn] * values[jn][offset + k]
            m[c + p] = acc
    return True


def store_marker(m, base, capacity, width, span, t, delay):
    """Note an event at t (once per instant): cut the newest step record at t (a step
    that went past a located event) and append a marker. Its level is one more than that
    of the marker at t - delay whose breakpoint this is (delay > 0), else 0. Returns False
    if the ring is full."""
    n = int(m[base + COUNT])
    level = 0.0
    if n > 0:
        o = _offset(m, base, capacity, width, n - 1)
        if m[o + 2] == 0.0 and m[o] == t:
            return True
        if m[o + 1] > t:
            m[o + 1] = t
        if delay > 0.0:
            origin = t - delay
            tol = 1e-9 * (abs(t) + delay)
            i = _search(m, base, capacity, width, n, origin - tol, True)
            while i < n:
                o = _offset(m, base, capacity, width, i)
                if m[o] > origin + tol:
                    break
                if m[o + 2] == 0.0 and m[o] + delay == t:
                    level = m[o + 3] + 1.0
                    break
                i += 1
    j = _claim(m, base, capacity, width, t, span)
    if j < 0:
        return False
    o = base + HEAD + j * (FIELDS + NODES * width)
    m[o] = t
    m[o + 1] = t
    m[o + 2] = 0.0
    m[o + 3] = level
    _schedule(m, base, capacity, width)
    return True


def settle_marker(m, base, capacity, width, t):
    """The event at t had other causes than this delay's breakpoint: its marker is a
    fresh discontinuity (level 0), to be scheduled."""
    n = int(m[base + COUNT])
    if n > 0:
        o = _offset(m, base, capacity, width, n - 1)
        if m[o + 2] == 0.0 and m[o] == t and m[o + 3] > 0.0:
            m[o + 3] = 0.0
            _schedule(m, base, capacity, width)


def drop_marker(m, base, capacity, width, t):
    """Take back the marker at t (a located crossing after which nothing changed)."""
    n = int(m[base + COUNT])
    if n > 0:
        o = _offset(m, base, capacity, width, n - 1)
        if m[o + 2] == 0.0 and m[o] == t:
            m[base + COUNT] = n - 1
            _schedule(m, base, capacity, width)
