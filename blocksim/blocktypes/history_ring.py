"""The ring of a block's input history, kept in the engine's discrete-state array.

A block that reads the past of a signal (a transport delay) declares a `blockspec.History`;
the compiler gives it a region of the engine's flat array `m` after every ordinary discrete
slot, and the engine (Python loop and numba loop alike) appends one record per accepted
step and one marker per event. These functions are the single definition of the layout:
plain Python on scalars and indexing, so the same text runs on numpy arrays or lists in
the Python backend and compiled by numba (`native.formulas` wraps the readers, the compiled
loop the writers). The C runtime (`blocksim/ccode/runtime/bs_history.c`: the C backend and
exported FMUs) mirrors these functions operation for operation: change both together.

Region layout from `base`: a header of HEAD slots (records stored, ring index of the
oldest, overflow flag, for a fixed delay the instants of the input's last discontinuity
whose breakpoint has passed (-inf: none yet) and of the next one to schedule (inf: none),
the record the last read found, where the next read looks first, and the grid of the
delay's breakpoints: a tick of GRID_P/GRID_Q seconds and the delay in ticks, 0: none, see
`later`), then `capacity` records of `record_size(width)` slots:
  ta, tb, hp, level, then per element the forward differences of its values at the
  NODES equally spaced points of the piece (Newton's form: a constant or a straight
  line is reproduced exactly).
A step record interpolates the input on [ta, tb] to the solver's order (quartic through
five points of the step's dense output). A marker (hp == 0, ta == tb) notes an event at
ta: the input may jump there; its `level` counts how often the discontinuity has passed
through a delay (0: an event of the model; breakpoints of high level are not scheduled).
A marker's level is set when the event begins (one more than the marker whose breakpoint
the event is, if any); once the event has settled it becomes 0 if anything else that can
reach the input happened there, and MAX_LEVEL (not scheduled) if nothing did
(`settle_marker`).
"""
from __future__ import annotations

import math

HEAD = 9
FIELDS = 4
NODES = 5  # interpolation points per step: s = 0, 1/4, 1/2, 3/4, 1
COUNT, FIRST, OVERFLOW, LO, HI, HINT, GRID_P, GRID_Q, DELAY_TICKS = range(HEAD)
MAX_LEVEL = 5  # breakpoints that passed this many delays are smooth enough to step over
EXACT = 2.0 ** 53  # integers below it are exact doubles


def header(grid: tuple[int, int, int] | None = None) -> list[float]:
    """The initial header of a ring; `grid`: (p, q, d) where a fixed delay's breakpoints
    are counted in ticks of p/q s, the delay being d ticks (`rates.delay_grid`; `later`)."""
    p, q, d = grid if grid is not None else (0, 0, 0)
    return [0.0, 0.0, 0.0, -math.inf, math.inf, -1.0, float(p), float(q), float(d)]


def later(m, base, origin, delay):
    """The instant `delay` after `origin`: the breakpoint of a discontinuity at `origin`.

    When `origin` is the time of a tick n of the ring's grid (the double nearest to
    n p / q, as every sample hit is: `rates.Clock.time`), the breakpoint is tick n + d,
    computed the same way from integers, so it falls on a hit at that tick to the last
    bit; `origin + delay` in floating point can land an ulp beside it. Elsewhere (a
    crossing, a grid too fine for doubles) it is `origin + delay`."""
    d = m[base + DELAY_TICKS]
    if d > 0.0 and abs(origin) < math.inf:
        p, q = m[base + GRID_P], m[base + GRID_Q]
        n = math.floor(origin * q / p + 0.5)
        if abs(n) * p < EXACT and abs(n + d) * p < EXACT and (n * p) / q == origin:
            return ((n + d) * p) / q
    return origin + delay


def _lagrange(s: float) -> tuple[float, ...]:
    """Weights of the node values in the quartic's value at s."""
    nodes = [j / (NODES - 1) for j in range(NODES)]
    weights = []
    for j, sj in enumerate(nodes):
        w = 1.0
        for i, si in enumerate(nodes):
            if i != j:
                w *= (s - si) / (sj - si)
        weights.append(w)
    return tuple(weights)


# Two points between the nodes where a piece's quartic is checked against the input.
CHECKS = (3.0 / 8.0, 5.0 / 8.0)
_CHECK_W = (_lagrange(CHECKS[0]), _lagrange(CHECKS[1]))
SPLITS = 10  # a step is split into pieces down to 2**-SPLITS of it


def fits(values, count, rtol, atol):
    """Whether the quartic through values[0..NODES-1] (count components each) matches
    values[NODES + c] at CHECKS[c] within atol + rtol |value|: the piece interpolates the
    input as accurately as the solver's tolerance asks."""
    for c in range(2):
        for k in range(count):
            est = 0.0
            for j in range(NODES):
                est += _CHECK_W[c][j] * values[j][k]
            actual = values[NODES + c][k]
            if not abs(est - actual) <= atol + rtol * abs(actual):
                return False
    return True


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


def _found(m, base, capacity, width, n, q, strict, i):
    """Whether i is `_search`'s answer minus one: record i starts before q (or at q if
    not strict) and record i + 1 does not."""
    size = FIELDS + NODES * width
    first = int(m[base + FIRST])
    if i >= 0:
        ta = m[base + HEAD + ((first + i) % capacity) * size]
        if not (ta < q or (not strict and ta == q)):
            return False
    if i + 1 < n:
        ta = m[base + HEAD + ((first + i + 1) % capacity) * size]
        if ta < q or (not strict and ta == q):
            return False
    return True


def hist_read(m, base, capacity, width, k, q, clamp, default):
    """Element k of the input at time q. With `clamp` (a fixed delay) q is held to the
    breakpoints passed and next (header LO and HI): at q == HI the left limit (the record
    ending there), elsewhere the record starting at or before q (the right limit at an
    event). Beyond the newest record its polynomial extrapolates; before any step has
    been recorded (a zero delay at the start) the value is `default`."""
    n = int(m[base + COUNT])
    if n == 0:
        return default
    lo, hi = -math.inf, math.inf
    if clamp:
        lo, hi = m[base + LO], m[base + HI]
    if q < lo:
        q = lo
    if q > hi:
        q = hi
    # Reads come in runs at nearby times (a step's stages): try the last answer (HINT)
    # and its successor before searching.
    strict = q == hi
    i = int(m[base + HINT])
    if not (-1 <= i < n and _found(m, base, capacity, width, n, q, strict, i)):
        if -1 <= i + 1 < n and _found(m, base, capacity, width, n, q, strict, i + 1):
            i += 1
        else:
            i = _search(m, base, capacity, width, n, q, strict) - 1
        m[base + HINT] = i
    while i >= 0 and m[_offset(m, base, capacity, width, i) + 2] == 0.0:
        i -= 1  # markers hold no values
    if i < 0:  # before the first record: its first value
        i = 0
        while i < n - 1 and m[_offset(m, base, capacity, width, i) + 2] == 0.0:
            i += 1
    o = _offset(m, base, capacity, width, i)
    hp = m[o + 2]
    if hp == 0.0:
        return default
    r = (NODES - 1) * (q - m[o]) / hp  # in node spacings
    if r < 0.0:
        r = 0.0
    c = o + FIELDS + NODES * k
    return m[c] + r * (m[c + 1] + (r - 1.0) / 2.0 * (m[c + 2] + (r - 2.0) / 3.0 * (
        m[c + 3] + (r - 3.0) / 4.0 * m[c + 4])))


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
    """Pass the next breakpoint if it is due at t (`later(HI)` <= t): LO takes it, HI the
    one after. True if one passed (call again: several may be due at one instant)."""
    if later(m, base, m[base + HI], delay) <= t:
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
            m[c + p] = values[p][offset + k]
        for p in range(1, NODES):  # forward differences, in place
            for j in range(NODES - 1, p - 1, -1):
                m[c + j] = m[c + j] - m[c + j - 1]
    return True


def store_marker(m, base, capacity, width, span, t, delay, feedback):
    """Note an event at t (once per instant): cut the newest step record at t (a step
    that went past a located event) and append a marker. If the event is the breakpoint
    of a marker at t - delay (delay > 0), its level is one more than that marker's when
    the delay's output feeds back to its input, else MAX_LEVEL (the input is as smooth
    there as anywhere); otherwise 0. Returns False if the ring is full."""
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
                if m[o + 2] == 0.0 and later(m, base, m[o], delay) == t and m[o + 3] < MAX_LEVEL:
                    level = m[o + 3] + 1.0 if feedback else float(MAX_LEVEL)
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


def settle_marker(m, base, capacity, width, t, fresh):
    """The event at t has settled. `fresh`: something that can reach the input happened
    there (a crossing, a sample hit, another block's event, the breakpoint of a delay
    upstream): the marker is a new discontinuity (level 0). Otherwise a marker that is
    not this delay's own breakpoint marks nothing (MAX_LEVEL: not scheduled)."""
    n = int(m[base + COUNT])
    if n > 0:
        o = _offset(m, base, capacity, width, n - 1)
        if m[o + 2] == 0.0 and m[o] == t:
            if fresh:
                m[o + 3] = 0.0
            elif m[o + 3] == 0.0:
                m[o + 3] = float(MAX_LEVEL)
            _schedule(m, base, capacity, width)


def drop_marker(m, base, capacity, width, t):
    """Take back the marker at t (a located crossing after which nothing changed)."""
    n = int(m[base + COUNT])
    if n > 0:
        o = _offset(m, base, capacity, width, n - 1)
        if m[o + 2] == 0.0 and m[o] == t:
            m[base + COUNT] = n - 1
            _schedule(m, base, capacity, width)
