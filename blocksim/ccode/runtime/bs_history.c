/* blocksim's input history rings (transport delays) in C.
 *
 * The first part mirrors `blocksim/blocktypes/history_ring.py` function for function and
 * operation for operation (the ring lives in the model's discrete-state array m; its
 * layout, header and record format are that module's, so the C backend hands m to the
 * Python engine and back unchanged). The generated model functions call bs_hist_read,
 * bs_hist_due and bs_hist_later where the Python code calls _hist_read, _hist_due and
 * _hist_later. The second part is the engine's side (`engine/history.py`,
 * `engine/native/rings.py`): a record per accepted step from the stepper's dense output,
 * a marker per event, the markers' levels once the event settled, a model-exchange FMU's
 * records from the importer's completed steps, and saving the part of m an event can
 * change (to undo an event that leaves no trace, or that Python settles instead).
 *
 * Included by model.c (when the model keeps input histories) after its ring tables:
 * BS_NH rings, each bs_h_base (start in m), bs_h_cap (records), bs_h_width (elements),
 * bs_h_offset (where its elements start in bs_probe's output, BS_NU in all), bs_h_span,
 * bs_h_delay (0: a variable delay), bs_h_feedback; bs_h_is_delay[block] (a block with a
 * fixed delay), bs_h_up_first / bs_h_up_block (per ring, the fixed delays upstream of its
 * input), BS_H_BREAK_KIND (the event kind code of "breakpoint", -1: none) and BS_NM_PLAIN
 * (m's slots before the first ring).
 */
#define BS_H_HEAD 9
#define BS_H_FIELDS 4
#define BS_H_NODES 5
#define BS_H_CHECKS 2
#define BS_H_POINTS (BS_H_NODES + BS_H_CHECKS)
#define BS_H_MAX_LEVEL 5
#define BS_H_SPLITS 10
#define BS_H_EXACT 9007199254740992.0 /* 2**53 */
enum { BS_H_COUNT, BS_H_FIRST, BS_H_OVERFLOW, BS_H_LO, BS_H_HI, BS_H_HINT, BS_H_GRID_P,
       BS_H_GRID_Q, BS_H_DELAY_TICKS };
#define BS_H_RECORD(width) (BS_H_FIELDS + BS_H_NODES * (width))
#define BS_NH1 (BS_NH > 0 ? BS_NH : 1)
#define BS_NU1 (BS_NU > 0 ? BS_NU : 1)

/* ----- the ring (history_ring.py) ----- */

static double bs_hist_later(const double *m, long base, double origin, double delay) {
    double d = m[base + BS_H_DELAY_TICKS];
    if (d > 0.0 && fabs(origin) < INFINITY) {
        double p = m[base + BS_H_GRID_P], q = m[base + BS_H_GRID_Q];
        double n = floor(origin * q / p + 0.5);
        if (fabs(n) * p < BS_H_EXACT && fabs(n + d) * p < BS_H_EXACT && (n * p) / q == origin)
            return ((n + d) * p) / q;
    }
    return origin + delay;
}

static long bs_hist_offset(const double *m, long base, long cap, long width, long i) {
    long first = (long)m[base + BS_H_FIRST];
    return base + BS_H_HEAD + ((first + i) % cap) * BS_H_RECORD(width);
}

/* How many records start before q (strict) or at or before q. */
static long bs_hist_search(const double *m, long base, long cap, long width, long n, double q,
                           int strict) {
    long lo = 0, hi = n;
    while (lo < hi) {
        long mid = (lo + hi) / 2;
        double ta = m[bs_hist_offset(m, base, cap, width, mid)];
        if (ta < q || (!strict && ta == q)) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Whether record i starts before q (or at q if not strict) and record i + 1 does not. */
static int bs_hist_found(const double *m, long base, long cap, long width, long n, double q,
                         int strict, long i) {
    double ta;
    if (i >= 0) {
        ta = m[bs_hist_offset(m, base, cap, width, i)];
        if (!(ta < q || (!strict && ta == q))) return 0;
    }
    if (i + 1 < n) {
        ta = m[bs_hist_offset(m, base, cap, width, i + 1)];
        if (ta < q || (!strict && ta == q)) return 0;
    }
    return 1;
}

/* Element k of the input at time q (`history_ring.hist_read`). */
static double bs_hist_read(double *m, long base, long cap, long width, long k, double q,
                           int clamp, double fallback) {
    long n = (long)m[base + BS_H_COUNT], i, o, c;
    double lo = -INFINITY, hi = INFINITY, hp, r;
    int strict;
    if (n == 0) return fallback;
    if (clamp) {
        lo = m[base + BS_H_LO];
        hi = m[base + BS_H_HI];
    }
    if (q < lo) q = lo;
    if (q > hi) q = hi;
    strict = q == hi;
    i = (long)m[base + BS_H_HINT];
    if (!(-1 <= i && i < n && bs_hist_found(m, base, cap, width, n, q, strict, i))) {
        if (-1 <= i + 1 && i + 1 < n && bs_hist_found(m, base, cap, width, n, q, strict, i + 1))
            i += 1;
        else
            i = bs_hist_search(m, base, cap, width, n, q, strict) - 1;
        m[base + BS_H_HINT] = (double)i;
    }
    while (i >= 0 && m[bs_hist_offset(m, base, cap, width, i) + 2] == 0.0) i--;
    if (i < 0) {  /* before the first record: its first value */
        i = 0;
        while (i < n - 1 && m[bs_hist_offset(m, base, cap, width, i) + 2] == 0.0) i++;
    }
    o = bs_hist_offset(m, base, cap, width, i);
    hp = m[o + 2];
    if (hp == 0.0) return fallback;
    r = (BS_H_NODES - 1) * (q - m[o]) / hp;
    if (r < 0.0) r = 0.0;
    c = o + BS_H_FIELDS + BS_H_NODES * k;
    return m[c] + r * (m[c + 1] + (r - 1.0) / 2.0 * (m[c + 2] + (r - 2.0) / 3.0 * (
        m[c + 3] + (r - 3.0) / 4.0 * m[c + 4])));
}

/* The first marker after `after` whose level is below max_level (INFINITY: none). */
static double bs_hist_next(const double *m, long base, long cap, long width, double after,
                           double max_level) {
    long n = (long)m[base + BS_H_COUNT];
    long i = bs_hist_search(m, base, cap, width, n, after, 0);
    for (; i < n; i++) {
        long o = bs_hist_offset(m, base, cap, width, i);
        if (m[o + 2] == 0.0 && m[o + 3] < max_level) return m[o];
    }
    return INFINITY;
}

/* Pass the next breakpoint if it is due at t; 1 if one passed. */
static int bs_hist_due(double *m, long base, long cap, long width, double t, double delay) {
    if (bs_hist_later(m, base, m[base + BS_H_HI], delay) <= t) {
        m[base + BS_H_LO] = m[base + BS_H_HI];
        m[base + BS_H_HI] = bs_hist_next(m, base, cap, width, m[base + BS_H_LO], BS_H_MAX_LEVEL);
        return 1;
    }
    return 0;
}

static void bs_hist_schedule(double *m, long base, long cap, long width) {
    m[base + BS_H_HI] = bs_hist_next(m, base, cap, width, m[base + BS_H_LO], BS_H_MAX_LEVEL);
}

/* The ring slot of a new newest record, dropping the oldest if it ended before
 * t_now - span; -1 (and the overflow flag) if the ring is full of records still needed. */
static long bs_hist_claim(double *m, long base, long cap, long width, double t_now, double span) {
    long n = (long)m[base + BS_H_COUNT], first = (long)m[base + BS_H_FIRST], o;
    if (n < cap) {
        m[base + BS_H_COUNT] = (double)(n + 1);
        return (first + n) % cap;
    }
    o = base + BS_H_HEAD + first * BS_H_RECORD(width);
    if (m[o + 1] < t_now - span) {
        m[base + BS_H_FIRST] = (double)((first + 1) % cap);
        return first;
    }
    m[base + BS_H_OVERFLOW] = 1.0;
    return -1;
}

/* Weights of the node values in the quartic's value at s (`history_ring._lagrange`). */
static void bs_hist_lagrange(double s, double *w) {
    int j, i;
    for (j = 0; j < BS_H_NODES; j++) {
        double sj = (double)j / (BS_H_NODES - 1), v = 1.0;
        for (i = 0; i < BS_H_NODES; i++)
            if (i != j) v *= (s - (double)i / (BS_H_NODES - 1)) / (sj - (double)i / (BS_H_NODES - 1));
        w[j] = v;
    }
}

/* Whether the quartic through the node values matches the two checks (`history_ring.fits`):
 * U[p * count + k] is element k at point p (the nodes, then 3/8 and 5/8). */
static int bs_hist_fits(const double *U, long count, double rtol, double atol) {
    static const double checks[BS_H_CHECKS] = {3.0 / 8.0, 5.0 / 8.0};
    double w[BS_H_NODES];
    int c, j;
    long k;
    for (c = 0; c < BS_H_CHECKS; c++) {
        bs_hist_lagrange(checks[c], w);
        for (k = 0; k < count; k++) {
            double est = 0.0, actual = U[(BS_H_NODES + c) * count + k];
            for (j = 0; j < BS_H_NODES; j++) est += w[j] * U[j * count + k];
            if (!(fabs(est - actual) <= atol + rtol * fabs(actual))) return 0;
        }
    }
    return 1;
}

/* Append the piece [ta, tb]: U[p * stride + offset + k] is element k at node p. */
static int bs_hist_store_step(double *m, long base, long cap, long width, double span, double ta,
                              double tb, const double *U, long stride, long offset) {
    long j = bs_hist_claim(m, base, cap, width, ta, span), o, k;
    int p, q;
    if (j < 0) return 0;
    o = base + BS_H_HEAD + j * BS_H_RECORD(width);
    m[o] = ta;
    m[o + 1] = tb;
    m[o + 2] = tb - ta;
    m[o + 3] = -1.0;
    for (k = 0; k < width; k++) {
        long c = o + BS_H_FIELDS + BS_H_NODES * k;
        for (p = 0; p < BS_H_NODES; p++) m[c + p] = U[p * stride + offset + k];
        for (p = 1; p < BS_H_NODES; p++)  /* forward differences, in place */
            for (q = BS_H_NODES - 1; q > p - 1; q--) m[c + q] = m[c + q] - m[c + q - 1];
    }
    return 1;
}

/* Note an event at t (`history_ring.store_marker`). */
static int bs_hist_store_marker(double *m, long base, long cap, long width, double span, double t,
                                double delay, int feedback) {
    long n = (long)m[base + BS_H_COUNT], o, j;
    double level = 0.0;
    if (n > 0) {
        o = bs_hist_offset(m, base, cap, width, n - 1);
        if (m[o + 2] == 0.0 && m[o] == t) return 1;
        if (m[o + 1] > t) m[o + 1] = t;
        if (delay > 0.0) {
            double origin = t - delay, tol = 1e-9 * (fabs(t) + delay);
            long i = bs_hist_search(m, base, cap, width, n, origin - tol, 1);
            for (; i < n; i++) {
                o = bs_hist_offset(m, base, cap, width, i);
                if (m[o] > origin + tol) break;
                if (m[o + 2] == 0.0 && bs_hist_later(m, base, m[o], delay) == t
                        && m[o + 3] < BS_H_MAX_LEVEL) {
                    level = feedback ? m[o + 3] + 1.0 : (double)BS_H_MAX_LEVEL;
                    break;
                }
            }
        }
    }
    j = bs_hist_claim(m, base, cap, width, t, span);
    if (j < 0) return 0;
    o = base + BS_H_HEAD + j * BS_H_RECORD(width);
    m[o] = t;
    m[o + 1] = t;
    m[o + 2] = 0.0;
    m[o + 3] = level;
    bs_hist_schedule(m, base, cap, width);
    return 1;
}

/* The event at t has settled (`history_ring.settle_marker`). */
static void bs_hist_settle_marker(double *m, long base, long cap, long width, double t, int fresh) {
    long n = (long)m[base + BS_H_COUNT];
    if (n > 0) {
        long o = bs_hist_offset(m, base, cap, width, n - 1);
        if (m[o + 2] == 0.0 && m[o] == t) {
            if (fresh) m[o + 3] = 0.0;
            else if (m[o + 3] == 0.0) m[o + 3] = (double)BS_H_MAX_LEVEL;
            bs_hist_schedule(m, base, cap, width);
        }
    }
}

/* ----- the engine's side (engine/history.py) ----- */

/* The model's probe (the inputs the rings keep) and derivatives, defined after this file. */
static void bs_probe(bs_ctx *c, double t, double *x, double *m, double *z, double *out);
static void bs_deriv(bs_ctx *c, double t, double *x, double *m, double *z, double *out);

/* What one model instance keeps for its rings besides m. */
typedef struct {
    double atol;                  /* the run's atol (a ring holds inputs, not states) */
    int other;                    /* the event: something else than a delay's breakpoint */
    unsigned char fresh[BS_NH1];  /* the event: the breakpoint of a delay upstream */
    int overflow;                 /* the ring that overflowed (-1: none) */
    double U[BS_H_POINTS * BS_NU1];  /* the inputs at the points of a piece */
    double xq[BS_NX > 0 ? BS_NX : 1], xp[BS_NX > 0 ? BS_NX : 1], dx[BS_NX > 0 ? BS_NX : 1];
    double up[BS_NU1], um[BS_NU1];
    /* model exchange: the last point recorded (the importer's completed step or an
     * event's right limit), with the inputs and their time derivatives there */
    int have_point;
    double t0, u0[BS_NU1], du0[BS_NU1];
} bs_hist_run;

static void bs_hist_init(bs_hist_run *h, double atol) {
    memset(h, 0, sizeof *h);
    h->atol = atol;
    h->overflow = -1;
}

/* An event at t in every ring; 0 if one is full (h->overflow names it). */
static int bs_hist_mark(bs_hist_run *h, double *m, double t) {
    int r;
    h->other = 0;
    for (r = 0; r < BS_NH; r++) {
        h->fresh[r] = 0;
        if (!bs_hist_store_marker(m, bs_h_base[r], bs_h_cap[r], bs_h_width[r], bs_h_span[r], t,
                                  bs_h_delay[r], bs_h_feedback[r])) {
            h->overflow = r;
            return 0;
        }
    }
    return 1;
}

static int bs_hist_upstream(int r, int block) {
    int j;
    for (j = bs_h_up_first[r]; j < bs_h_up_first[r + 1]; j++)
        if (bs_h_up_block[j] == block) return 1;
    return 0;
}

/* The event entries of one pass of the event iteration (`History.settled`): a delay's
 * breakpoint is fresh for the rings it reaches, anything else for every ring. */
static void bs_hist_note(bs_hist_run *h, const int *blocks, const int *kinds, int n) {
    int j, r;
    if (n > BS_EV_MAX) h->other = 1;  /* entries not kept: the safe side */
    for (j = 0; j < n && j < BS_EV_MAX; j++) {
        if (kinds[j] == BS_H_BREAK_KIND && bs_h_is_delay[blocks[j]]) {
            for (r = 0; r < BS_NH; r++)
                if (bs_hist_upstream(r, blocks[j])) h->fresh[r] = 1;
        } else {
            h->other = 1;
        }
    }
}

/* The event at t has settled: `other`, a located crossing or a sample hit. */
static void bs_hist_settled(bs_hist_run *h, double *m, double t, int other) {
    int r;
    for (r = 0; r < BS_NH; r++)
        bs_hist_settle_marker(m, bs_h_base[r], bs_h_cap[r], bs_h_width[r], t,
                              other || h->other || h->fresh[r]);
}

/* Store one piece in every ring (U: BS_NU inputs at each node); 0 if one is full. */
static int bs_hist_store(bs_hist_run *h, double *m, double ta, double tb) {
    int r;
    for (r = 0; r < BS_NH; r++) {
        if (!bs_hist_store_step(m, bs_h_base[r], bs_h_cap[r], bs_h_width[r], bs_h_span[r], ta,
                                tb, h->U, BS_NU, bs_h_offset[r])) {
            h->overflow = r;
            return 0;
        }
    }
    return 1;
}

/* The state of the step being recorded at t (the stepper's dense output). */
typedef void (*bs_hist_state_fn)(void *stepper, double t, double *x);

/* The accepted step [t0, t1] into every ring (`History.record`): in pieces whose
 * quartics through the inputs at the nodes meet the tolerances. 0 if a ring is full. */
static int bs_hist_record(bs_hist_run *h, bs_ctx *c, double *m, double *z, double t0, double t1,
                          double rtol, bs_hist_state_fn state_at, void *stepper) {
    static const double fractions[BS_H_POINTS] = {0.0, 0.25, 0.5, 0.75, 1.0, 3.0 / 8.0, 5.0 / 8.0};
    double a = t0, width = t1 - t0, smallest = (t1 - t0) * ldexp(1.0, -BS_H_SPLITS);
    int p;
    if (!(t1 > t0)) return 1;
    while (a < t1) {
        double b = a + width >= t1 ? t1 : a + width;
        for (p = 0; p < BS_H_POINTS; p++) {
            double f = fractions[p];
            double tq = f == 0.0 ? a : f == 1.0 ? b : a + (b - a) * f;
            state_at(stepper, tq, h->xq);
            bs_probe(c, tq, h->xq, m, z, h->U + p * BS_NU);
        }
        if (b - a > smallest && !bs_hist_fits(h->U, BS_NU, rtol, h->atol)) {
            width = 0.5 * (b - a);
            continue;
        }
        if (!bs_hist_store(h, m, a, b)) return 0;
        a = b;
        width = 2.0 * width;
    }
    return 1;
}

/* ----- model exchange: records from the importer's completed steps ----- */

/* The inputs at (t, x) and their time derivatives along the flow, by central differences
 * over +-d with the modes held (the smooth continuation of the piece). */
static void bs_hist_me_sample(bs_hist_run *h, bs_ctx *c, double t, double *x, double *m, double *z,
                              double *u, double *du) {
    double d = 1e-5 * (fabs(t) > 1.0 ? fabs(t) : 1.0);
    int j;
    bs_probe(c, t, x, m, z, u);
    if (BS_NX > 0) bs_deriv(c, t, x, m, z, h->dx);
    for (j = 0; j < BS_NX; j++) h->xp[j] = x[j] + d * h->dx[j];
    bs_probe(c, t + d, h->xp, m, z, h->up);
    for (j = 0; j < BS_NX; j++) h->xp[j] = x[j] - d * h->dx[j];
    bs_probe(c, t - d, h->xp, m, z, h->um);
    for (j = 0; j < BS_NU; j++) {
        du[j] = (h->up[j] - h->um[j]) / (2.0 * d);
        if (!isfinite(du[j])) du[j] = 0.0;  /* a formula's edge: the piece is then linear-ish */
    }
}

/* A model-exchange FMU's point at (t, x): the piece from the last point to it (the cubic
 * Hermite interpolant of the inputs and their derivatives at both ends, exact to
 * h**4 / 384 of the fourth derivative) into every ring; the point is the next piece's
 * start. 0 if a ring is full. */
static int bs_hist_me_step(bs_hist_run *h, bs_ctx *c, double t, double *x, double *m, double *z) {
    double u1[BS_NU1], du1[BS_NU1];
    int p, j, ok = 1;
    if (BS_NH == 0) return 1;
    if (h->have_point && !(t > h->t0)) return 1;
    bs_hist_me_sample(h, c, t, x, m, z, u1, du1);
    if (h->have_point) {
        double span = t - h->t0;
        for (p = 0; p < BS_H_NODES; p++) {
            double s = (double)p / (BS_H_NODES - 1), s2 = s * s, s3 = s2 * s;
            double h00 = 2.0 * s3 - 3.0 * s2 + 1.0, h10 = s3 - 2.0 * s2 + s;
            double h01 = -2.0 * s3 + 3.0 * s2, h11 = s3 - s2;
            for (j = 0; j < BS_NU; j++)
                h->U[p * BS_NU + j] = p == 0 ? h->u0[j] : p == BS_H_NODES - 1 ? u1[j]
                    : h00 * h->u0[j] + h10 * span * h->du0[j] + h01 * u1[j] + h11 * span * du1[j];
        }
        ok = bs_hist_store(h, m, h->t0, t);
    }
    h->have_point = 1;
    h->t0 = t;
    for (j = 0; j < BS_NU; j++) {
        h->u0[j] = u1[j];
        h->du0[j] = du1[j];
    }
    return ok;
}

/* ----- what an event can change in m ----- */

/* Slots saved: m before the rings, and per ring its header and the two records an event
 * can touch (the newest, whose end a marker cuts, and the slot the marker takes). */
#define BS_MSAVE (BS_NM_PLAIN + BS_H_SAVED)

static void bs_hist_save(const double *m, double *saved) {
    int r;
    long k, at = BS_NM_PLAIN;
    memcpy(saved, m, sizeof(double) * BS_NM_PLAIN);
    for (r = 0; r < BS_NH; r++) {
        long base = bs_h_base[r], cap = bs_h_cap[r], size = BS_H_RECORD(bs_h_width[r]);
        long n = (long)m[base + BS_H_COUNT], first = (long)m[base + BS_H_FIRST];
        long newest = base + BS_H_HEAD + ((first + (n > 0 ? n - 1 : 0)) % cap) * size;
        long next = base + BS_H_HEAD + ((first + n) % cap) * size;
        for (k = 0; k < BS_H_HEAD; k++) saved[at++] = m[base + k];
        for (k = 0; k < size; k++) saved[at++] = m[newest + k];
        for (k = 0; k < size; k++) saved[at++] = m[next + k];
    }
}

static void bs_hist_restore(double *m, const double *saved) {
    int r;
    long k, at = BS_NM_PLAIN;
    memcpy(m, saved, sizeof(double) * BS_NM_PLAIN);
    for (r = 0; r < BS_NH; r++) {
        long base = bs_h_base[r], cap = bs_h_cap[r], size = BS_H_RECORD(bs_h_width[r]);
        long n, first, newest, next;
        for (k = 0; k < BS_H_HEAD; k++) m[base + k] = saved[at++];
        n = (long)m[base + BS_H_COUNT];
        first = (long)m[base + BS_H_FIRST];
        newest = base + BS_H_HEAD + ((first + (n > 0 ? n - 1 : 0)) % cap) * size;
        next = base + BS_H_HEAD + ((first + n) % cap) * size;
        for (k = 0; k < size; k++) m[newest + k] = saved[at++];
        for (k = 0; k < size; k++) m[next + k] = saved[at++];
    }
}
