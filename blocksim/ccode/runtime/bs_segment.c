/* The C backend's loop: blocksim's DOPRI5, output grid, event location and event handling
 * in C, called in process (ctypes) by `blocksim/ccode/loop.py`.
 *
 * A run is one call from its start to its stop time when nothing needs Python: with `start`
 * set, the call first settles the run's start (`Simulator._event` with init: its row and
 * log entries, the sample hits due then) and finds the first segment's bound itself; a
 * start that fails or does not settle is handed back (START: Python settles it with its
 * own messages and calls again with the bound). Then it integrates from the engine's
 * state, writes the output grid rows (the logged signals, `observe`, at the grid points
 * inside each step, not those within 4 ulps of an event: the event's two rows stand for
 * them) and settles the events on the way as
 * `Simulator._event` does (`bs_event`, bs_core.c): a located crossing, a time event or
 * sample hit at a bound, each with its left and right limit rows and its event log
 * entries; then it restarts from the event as a new segment would. It returns at the stop
 * time (SETTLED), at a Stop block (STOPPED), when a buffer is full or the call's step or
 * restart budget is spent (YIELD: call again with resume set, after Python looked at
 * progress, Ctrl-C and the progress guard), or with an event it leaves to Python
 * (CROSSING, BOUND): one that fails or does not settle (Python reports it with its own
 * messages), a Zeno point, or every event where `events` is off. The step and crossing
 * arithmetic is bs_cs.c's.
 */
enum { BS_SEG_BOUND = 0, BS_SEG_CROSSING = 1, BS_SEG_YIELD = 2, BS_SEG_FAILED = 3,
       BS_SEG_SETTLED = 4, BS_SEG_STOPPED = 5, BS_SEG_START = 6 };
/* fpar */
enum { FP_T, FP_BOUND, FP_BOUND_IS_EVENT, FP_FIRST_STEP, FP_RTOL, FP_MAX_STEP, FP_START,
       FP_INTERVAL, FP_EVENT_T, FP_LAST_STEP, FP_HORIZON, FP_STOP, FP_ZENO_SPAN, FP_SOURCE_T,
       FP_ATOL };
/* ipar */
enum { IP_K_GRID, IP_N_GRID, IP_RESUME, IP_ROWS, IP_HIT, IP_NFEV, IP_STEPS, IP_MAX_STEPS,
       IP_EVENTS_ON, IP_N_LOG, IP_EVENTS, IP_RESTARTS, IP_HITS, IP_GUARD_LEFT, IP_ZENO_EVENTS,
       IP_START, IP_NONFINITE };
enum { EV_HANDLED, EV_NOTHING, EV_STOP, EV_FALLBACK };
#ifdef BS_RADAU
#define BS_SEG_RADAU 1
#else
#define BS_SEG_RADAU 0
#endif

typedef struct {  /* the caller's arrays of `bs_api_run` (`bs_api_bind`) */
    double *fpar, *x, *m, *z, *out_t, *out_y, *x_ev, *log_t, *zeno, *hit_t;
    long long *ipar, *log_b, *log_k, *hit_k;
    long long max_rows, max_log;
} bs_bound;

typedef struct {
    bs_model M;
    bs_cs S;
    long long nfev;
    int nonfinite;  /* a row of this call holds a NaN or an infinity (Python looks) */
    double x0[BS_NX1], m0[BS_MSAVE1], z0[BS_NZ1], hit_t0[BS_NR1];
    long long hit_k0[BS_NR1];
    bs_bound b;
} bs_backend;

BS_API_EXPORT void *bs_api_new(void) {
    bs_backend *B = (bs_backend *)calloc(1, sizeof(bs_backend));
    if (B == NULL) return NULL;
    B->M.c.P = B->M.P;
    B->M.c.W = B->M.W;
    bs_init_W(B->M.W);
    return B;
}

BS_API_EXPORT void bs_api_free(void *B) { free(B); }

BS_API_EXPORT const char *bs_api_message(void *B) { return ((bs_backend *)B)->M.message; }

static void bs_seg_row(bs_backend *B, double tg, double *out_t, double *out_y, long long row) {
    bs_cs *S = &B->S;
    bs_model *M = &B->M;
    double y[BS_NLOG > 0 ? BS_NLOG : 1];
    int j, q;
    if (tg == S->t_new) {
        for (j = 0; j < BS_NX; j++) S->xd[j] = S->x_new[j];
    } else if (BS_SEG_RADAU) {  /* the collocation polynomial */
        bs_dense(S, tg, S->xd);
        (void)q;
    } else {  /* only the states observe reads (`derived.observe_reads`) */
        double s = (tg - S->t) / S->h_step, s1 = 1.0 - s;
        if (S->rc_done == 0) {  /* their dense-output coefficients, once a step */
            for (q = 0; q < BS_NOBS; q++) bs_rc_state(S, bs_observed[q]);
            S->rc_done = 1;
        }
        for (q = 0; q < BS_NOBS; q++) {
            j = bs_observed[q];
            S->xd[j] = S->x[j] + s * (S->rc[0][j] + s1 * (S->rc[1][j] + s * (S->rc[2][j] + s1 * S->rc[3][j])));
        }
    }
    bs_observe(&M->c, tg, S->xd, M->m, M->z, y);
    out_t[row] = tg;
    for (j = 0; j < BS_NLOG; j++) {
        out_y[row * BS_NLOG + j] = y[j];
        if (!isfinite(y[j])) B->nonfinite = 1;
    }
}

/* A row of the logged signals at the model's own (t, x): an event's limit. */
static void bs_seg_limit(bs_backend *B, double *out_t, double *out_y, long long row) {
    bs_model *M = &B->M;
    double y[BS_NLOG > 0 ? BS_NLOG : 1];
    int j;
    bs_observe(&M->c, M->t, M->x, M->m, M->z, y);
    out_t[row] = M->t;
    for (j = 0; j < BS_NLOG; j++) {
        out_y[row * BS_NLOG + j] = y[j];
        if (!isfinite(y[j])) B->nonfinite = 1;
    }
}

/* Before an event: the state it may change, kept (`bs_seg_undo` puts it back), and the
 * model at the integrator's (t, x). */
static void bs_seg_save(bs_backend *B) {
    bs_model *M = &B->M;
    bs_cs *S = &B->S;
    int j;
    for (j = 0; j < BS_NX; j++) B->x0[j] = S->x[j];
    bs_m_save(M->m, B->m0);
    for (j = 0; j < BS_NZ; j++) B->z0[j] = M->z[j];
    for (j = 0; j < BS_NR; j++) { B->hit_t0[j] = M->hit_t[j]; B->hit_k0[j] = M->hit_k[j]; }
    M->t = S->t;
    for (j = 0; j < BS_NX; j++) M->x[j] = S->x[j];
}

/* An event C leaves to Python: everything it changed undone (`bs_seg_save`). */
static void bs_seg_undo(bs_backend *B) {
    bs_model *M = &B->M;
    bs_cs *S = &B->S;
    int j;
    for (j = 0; j < BS_NX; j++) { S->x[j] = B->x0[j]; M->x[j] = B->x0[j]; }
    bs_m_restore(M->m, B->m0);
    for (j = 0; j < BS_NZ; j++) M->z[j] = B->z0[j];
    for (j = 0; j < BS_NR; j++) { M->hit_t[j] = B->hit_t0[j]; M->hit_k[j] = B->hit_k0[j]; }
    M->terminate = 0;
    M->failed = 0;
}

/* Settle the event at S->t (`Simulator._event`): `hit` the zero crossing located there
 * (-1: a time event). Everything is undone on EV_FALLBACK (Python settles it then). */
static int bs_seg_event(bs_backend *B, int hit, double *out_t, double *out_y,
                        long long max_rows, long long *rows) {
    bs_model *M = &B->M;
    bs_cs *S = &B->S;
    long long rows0 = *rows, nlog0 = M->n_log;
    int j, something = 0;
    if (*rows + 2 > max_rows || M->n_log + 1 > M->max_log) return EV_FALLBACK;
    bs_seg_save(B);
    bs_seg_limit(B, out_t, out_y, (*rows)++);  /* the left limit */
    if (hit >= 0) {
        M->log_t[M->n_log] = M->t;
        M->log_b[M->n_log] = bs_zc_owner[hit];
        M->log_k[M->n_log] = 0;  /* "state" */
        M->n_log++;
    }
    M->failed = 0;
    M->c.failed = 0;
    if (!bs_event(M, 0, hit >= 0, &something)) goto fallback;
    if (hit >= 0 && !something) {  /* a refinement of an earlier crossing: no trace */
        *rows = rows0;
        M->n_log = nlog0;
        return EV_NOTHING;
    }
    bs_seg_limit(B, out_t, out_y, (*rows)++);  /* the right limit, with the pulses */
    if (!bs_after(M)) goto fallback;
    if (!bs_finite(M->x, BS_NX)) goto fallback;
    for (j = 0; j < BS_NX; j++) S->x[j] = M->x[j];
    return M->terminate ? EV_STOP : EV_HANDLED;
fallback:
    bs_seg_undo(B);
    *rows = rows0;
    M->n_log = nlog0;
    return EV_FALLBACK;
}

/* A new segment from S->t: f anew, the first step from the last one. */
static void bs_seg_restart(bs_backend *B) {
    bs_model *M = &B->M;
    bs_cs *S = &B->S;
    double span = S->t_bound - S->t;
    bs_deriv(&M->c, S->t, S->x, M->m, M->z, S->f);
    B->nfev += 1 + bs_cs_first_step(S, M, span);
    S->pending = 0;
}

/* Settle the run's start at S->t, S->x (`Simulator._event` with init, then `_next_bound`):
 * its row and log entries, then the first segment's bound and step. Returns -1 to
 * integrate on, BS_SEG_START (everything undone: Python settles the start), or the status
 * that ends the call, with *restarts -1 where no segment begins (Python counted one). */
static int bs_seg_start(bs_backend *B, double *out_t, double *out_y, long long *rows,
                        long long *hits, long long *restarts) {
    bs_model *M = &B->M;
    bs_cs *S = &B->S;
    int j, something = 0;
    bs_seg_save(B);
    M->terminate = 0;
    if (!bs_event(M, 1, 0, &something)) goto python;
    bs_seg_limit(B, out_t, out_y, (*rows)++);  /* the right limit: the run's first row */
    if (!bs_after(M) || !bs_finite(M->x, BS_NX)) goto python;
    for (j = 0; j < BS_NX; j++) S->x[j] = M->x[j];
    if (M->clocked) (*hits)++;
    if (M->terminate) { *restarts = -1; return BS_SEG_STOPPED; }
    /* (a next time event not after the start: Python says why, from the settled state) */
    if (!bs_cs_bound(S, M) || S->t >= S->t_bound) { *restarts = -1; return BS_SEG_SETTLED; }
    bs_seg_restart(B);
    return -1;
python:
    bs_seg_undo(B);
    M->message[0] = 0;
    *rows = 0;
    *hits = 0;
    M->n_log = 0;
    return BS_SEG_START;
}

BS_API_EXPORT int bs_api_segment(void *handle, const double *P, double *fpar, long long *ipar,
                                 double *x, double *m, double *z, const double *atol,
                                 double *out_t, double *out_y, long long max_rows,
                                 double *x_ev, double *log_t, long long *log_b,
                                 long long *log_k, long long max_log, double *zeno,
                                 long long *hit_k, double *hit_t) {
    bs_backend *B = (bs_backend *)handle;
    bs_model *M = &B->M;
    bs_cs *S = &B->S;
    long long rows = 0, steps = 0, k = ipar[IP_K_GRID], n_grid = ipar[IP_N_GRID];
    long long events = 0, restarts = 0, hits = 0;
    double start = fpar[FP_START], interval = fpar[FP_INTERVAL];
    int j, i, status = -1, events_on = ipar[IP_EVENTS_ON] != 0;
    memcpy(M->P, P, sizeof(double) * BS_NP1);
    M->failed = 0;
    M->c.failed = 0;
    M->message[0] = 0;
    M->log_t = log_t;
    M->log_b = log_b;
    M->log_k = log_k;
    M->n_log = 0;
    M->max_log = max_log;
    B->nonfinite = 0;
    for (j = 0; j < BS_NR; j++) { M->hit_k[j] = hit_k[j]; M->hit_t[j] = hit_t[j]; }
    if (!ipar[IP_RESUME]) {
        S->t = fpar[FP_T];
        for (j = 0; j < BS_NX; j++) S->x[j] = x[j];
        for (j = 0; j < BS_NM; j++) M->m[j] = m[j];
        for (i = 0; i < BS_NZ; i++) M->z[i] = z[i];
        S->rtol = fpar[FP_RTOL] > 100 * 2.220446049250313e-16 ? fpar[FP_RTOL]
                                                              : 100 * 2.220446049250313e-16;
        S->n_err = 0;
        for (j = 0; j < BS_NX; j++) {
            S->atol[j] = atol[j];
            if (isfinite(atol[j])) S->n_err++;
        }
        S->max_step = fpar[FP_MAX_STEP];
        M->horizon = fpar[FP_HORIZON];
        M->stop = fpar[FP_STOP];
        S->t_bound = fpar[FP_BOUND];
        S->t_source = fpar[FP_SOURCE_T];
        S->bound_is_event = fpar[FP_BOUND_IS_EVENT] != 0.0;
        S->hit = -1;
        S->t_snap = S->t_bound - BS_BOUND_ULPS * bs_ulp(S->t_bound);
        S->h_last = fpar[FP_FIRST_STEP];
        B->nfev = 0;
        if (ipar[IP_START]) {  /* a new run: the blocks' written constants afresh */
            ipar[IP_START] = 0;
            bs_init_W(M->W);
#if BS_NH > 0
            bs_hist_init(&M->h, fpar[FP_ATOL]);  /* pieces made to the run's atol */
#endif
            status = bs_seg_start(B, out_t, out_y, &rows, &hits, &restarts);
        } else {
            bs_seg_restart(B);
        }
    }
    while (status < 0) {
        double t_end, near;
        int time_event, result = EV_HANDLED;
        if (!S->pending) {
            if (S->t >= S->t_bound) {  /* the stop time, or a time event Python settles */
                status = S->bound_is_event && !events_on ? BS_SEG_BOUND : BS_SEG_SETTLED;
                if (S->bound_is_event && !events_on) break;
                if (!S->bound_is_event) { status = BS_SEG_BOUND; break; }
                status = -1;
            } else {
                if (steps >= ipar[IP_MAX_STEPS]) { status = BS_SEG_YIELD; break; }
                if (!bs_cs_step(S, M)) { status = BS_SEG_FAILED; break; }
#ifdef BS_RADAU
                B->nfev += S->step_nfev;
#else
                B->nfev += 6;
#endif
                steps++;
            }
        }
        if (S->pending) {
            /* the output grid inside the step */
            t_end = S->hit >= 0 ? S->t_hit : S->t_new;
            time_event = S->hit < 0 && S->t_new >= S->t_bound && S->bound_is_event;
            near = (S->hit >= 0 || time_event) ? t_end - 4.0 * bs_ulp(t_end) : INFINITY;
            while (k <= n_grid) {
                double tg = start + (double)k * interval;
                if (tg > t_end || tg >= near) break;
                if (rows >= max_rows) break;
                bs_seg_row(B, tg, out_t, out_y, rows);
                rows++;
                k++;
            }
            if (k <= n_grid && rows >= max_rows) {
                double tg = start + (double)k * interval;
                if (!(tg > t_end || tg >= near)) { status = BS_SEG_YIELD; break; }
            }
            S->pending = 0;
            if (S->hit >= 0) {
                double run, began;
                fpar[FP_EVENT_T] = S->t_hit;
                for (j = 0; j < BS_NX; j++) x_ev[j] = S->x_ev[j];
                ipar[IP_HIT] = S->hit;
                if (!events_on) { status = BS_SEG_CROSSING; break; }
                /* Zeno detection (`Simulator._zeno_check`): a Zeno point is Python's */
                run = zeno[1] + 1.0;
                began = zeno[2];
                if (!(S->t_hit - zeno[0] < fpar[FP_ZENO_SPAN])) { run = 0.0; began = S->t_hit; }
                if (run >= (double)ipar[IP_ZENO_EVENTS]) { status = BS_SEG_CROSSING; break; }
                {
                    double saved[3] = {zeno[0], zeno[1], zeno[2]};
                    double t_keep = S->t;
                    zeno[0] = S->t_hit; zeno[1] = run; zeno[2] = began;
                    S->t = S->t_hit;
                    for (j = 0; j < BS_NX; j++) S->x[j] = S->x_ev[j];
                    result = bs_seg_event(B, S->hit, out_t, out_y, max_rows, &rows);
                    if (result == EV_FALLBACK) {
                        zeno[0] = saved[0]; zeno[1] = saved[1]; zeno[2] = saved[2];
                        S->t = t_keep;  /* (x: the step's start, as Python expects) */
                        status = BS_SEG_CROSSING;
                        break;
                    }
                    if (result != EV_NOTHING) events++;
                }
            } else {
                S->t = S->t_new;
                for (j = 0; j < BS_NX; j++) {
                    S->x[j] = S->x_new[j];
                    S->f[j] = S->K[6][j];
                }
                for (i = 0; i < BS_NZ; i++) M->z[i] = S->s_new[i];  /* unwatched changes */
                S->h = S->h_next;
                if (!(S->t >= S->t_bound)) continue;
                if (!S->bound_is_event) { status = BS_SEG_BOUND; break; }
                if (!events_on) { status = BS_SEG_BOUND; break; }
            }
        }
        if (S->hit < 0) {  /* a time event or sample hit at the bound */
            result = bs_seg_event(B, -1, out_t, out_y, max_rows, &rows);
            if (result == EV_FALLBACK) { status = BS_SEG_BOUND; break; }
            if (S->t_source <= S->t) events++;  /* a block's, not only a sample hit */
        }
        if (M->clocked) hits++;
        S->hit = -1;
        if (result == EV_STOP) { status = BS_SEG_STOPPED; break; }
        while (k <= n_grid && start + (double)k * interval <= S->t + 4.0 * bs_ulp(S->t)) k++;
        if (!bs_cs_bound(S, M)) { status = BS_SEG_SETTLED; break; }  /* Python says why */
        if (S->t >= S->t_bound) { status = BS_SEG_SETTLED; break; }
        restarts++;
        bs_seg_restart(B);
        if (restarts - hits >= ipar[IP_GUARD_LEFT]) { status = BS_SEG_YIELD; break; }
    }
#ifdef BS_RADAU
    if (status == BS_SEG_FAILED) {  /* where the failed step met a non-finite derivative */
        ipar[IP_HIT] = S->RW.probe_set ? -2 : -1;
        if (S->RW.probe_set) {
            fpar[FP_EVENT_T] = S->RW.probe_t;
            for (j = 0; j < BS_NX; j++) x_ev[j] = S->RW.probe_x[j];
        }
    }
#endif
    fpar[FP_T] = S->t;
    for (j = 0; j < BS_NX; j++) x[j] = S->x[j];
    for (j = 0; j < BS_NM; j++) m[j] = M->m[j];
    for (i = 0; i < BS_NZ; i++) z[i] = M->z[i];
    for (j = 0; j < BS_NR; j++) { hit_k[j] = M->hit_k[j]; hit_t[j] = M->hit_t[j]; }
    fpar[FP_BOUND] = S->t_bound;
    fpar[FP_SOURCE_T] = S->t_source;
    fpar[FP_BOUND_IS_EVENT] = S->bound_is_event ? 1.0 : 0.0;
    fpar[FP_LAST_STEP] = S->h_last;
    ipar[IP_K_GRID] = k;
    ipar[IP_ROWS] = rows;
    ipar[IP_STEPS] = steps;
    ipar[IP_NFEV] = B->nfev;
    ipar[IP_N_LOG] = M->n_log;
    ipar[IP_EVENTS] = events;
    ipar[IP_RESTARTS] = restarts;
    ipar[IP_HITS] = hits;
    ipar[IP_NONFINITE] = B->nonfinite;
    M->log_t = NULL;
    M->log_b = M->log_k = NULL;
    return status;
}

/* The arrays of every later `bs_api_run` of this instance (bound once: a call passing
 * only what changes between runs costs a third of one passing nineteen arguments). */
BS_API_EXPORT void bs_api_bind(void *handle, double *fpar, long long *ipar, double *x,
                               double *m, double *z, double *out_t, double *out_y,
                               long long max_rows, double *x_ev, double *log_t,
                               long long *log_b, long long *log_k, long long max_log,
                               double *zeno, long long *hit_k, double *hit_t) {
    bs_bound *b = &((bs_backend *)handle)->b;
    b->fpar = fpar; b->ipar = ipar; b->x = x; b->m = m; b->z = z;
    b->out_t = out_t; b->out_y = out_y; b->max_rows = max_rows; b->x_ev = x_ev;
    b->log_t = log_t; b->log_b = log_b; b->log_k = log_k; b->max_log = max_log;
    b->zeno = zeno; b->hit_k = hit_k; b->hit_t = hit_t;
}

/* `bs_api_segment` on the bound arrays, with the run's parameter slots and atol. */
BS_API_EXPORT int bs_api_run(void *handle, const double *P, const double *atol) {
    bs_bound *b = &((bs_backend *)handle)->b;
    return bs_api_segment(handle, P, b->fpar, b->ipar, b->x, b->m, b->z, atol, b->out_t,
                          b->out_y, b->max_rows, b->x_ev, b->log_t, b->log_b, b->log_k,
                          b->max_log, b->zeno, b->hit_k, b->hit_t);
}
