/* blocksim's event semantics in C: what `engine/event_iteration.py` and `engine/simulator.py`
 * do at an event instant, for one model instance (an FMU's, or the C backend's).
 *
 * Included after the generated model.c and config.c (the model's functions, sizes and
 * tables). At an event: the signs are read one horizon along the flow (`bs_signs_after`),
 * the blocks update until nothing changes (`bs_settle`), the rates due sample and the
 * model settles again; the blocks' pulses are cleared afterwards (`bs_after`). The next
 * time event is the blocks' own (`next_time`) or the next sample hit, on the exact clock.
 */
#define BS_MAX_PASSES 100
#define BS_NX1 (BS_NX > 0 ? BS_NX : 1)
#define BS_NM1 (BS_NM > 0 ? BS_NM : 1)
#define BS_NZ1 (BS_NZ > 0 ? BS_NZ : 1)
#define BS_NSIG1 (BS_NSIG > 0 ? BS_NSIG : 1)
#define BS_NP1 (BS_NP > 0 ? BS_NP : 1)
#define BS_NPAR1 (BS_NPAR > 0 ? BS_NPAR : 1)
#define BS_NR1 (BS_NR > 0 ? BS_NR : 1)
#define BS_NHITS1 (BS_NR + BS_NTRIG > 0 ? BS_NR + BS_NTRIG : 1)
/* What an event can change in m, saved to undo it: all of m, or with input histories
 * (bs_history.c) m before the rings and the ring slots an event touches. */
#if BS_NH > 0
#define BS_MSAVE1 (BS_MSAVE > 0 ? BS_MSAVE : 1)
#define bs_m_save bs_hist_save
#define bs_m_restore bs_hist_restore
#else
#define BS_MSAVE1 BS_NM1
static void bs_m_save(const double *m, double *saved) { memcpy(saved, m, sizeof(double) * BS_NM); }
static void bs_m_restore(double *m, const double *saved) { memcpy(m, saved, sizeof(double) * BS_NM); }
#endif

enum { BS_OK = 0, BS_STOPPED = 1, BS_FAILED = 2 };

typedef struct {
    bs_ctx c;
    double P[BS_NP1];
    double W[BS_NW];
    double par[BS_NPAR1];
    double t, start, stop, horizon;
    double x[BS_NX1], m[BS_NM1], z[BS_NZ1], zn[BS_NZ1];
    double dx[BS_NX1], probe[BS_NX1], probe2[BS_NX1], g[BS_NZ1], m_before[BS_MSAVE1];
    double sig[BS_NSIG1];
    int sig_valid;
    long long hit_k[BS_NR1];
    double hit_t[BS_NR1];
    double hits[BS_NHITS1];
    int terminate;
    int failed;
    int clocked;      /* the last bs_event's clock rates hit */
    char message[300];
    /* the event log of the C backend (NULL in an FMU): time, block, kind code */
    double *log_t;
    long long *log_b, *log_k;
    long long n_log, max_log;
#if BS_NH > 0
    bs_hist_run h;    /* the input histories' run state (bs_history.c) */
#endif
} bs_model;

static void bs_set_failed(bs_model *M, const char *what) {
    if (M->failed) return;
    M->failed = 1;
    if (M->c.failed && M->c.fail_block >= 0 && M->c.fail_block < BS_NBLOCKS)
        snprintf(M->message, sizeof M->message, "block '%s': %s", bs_block_ids[M->c.fail_block],
                 M->c.fail_message ? M->c.fail_message : what);
    else
        snprintf(M->message, sizeof M->message, "%s", what);
}

#if BS_NH > 0
/* A ring full of records still needed (`History.check`). */
static void bs_hist_overflow(bs_model *M) {
    int r = M->h.overflow >= 0 ? M->h.overflow : 0;
    if (M->failed) return;
    M->failed = 1;
    snprintf(M->message, sizeof M->message, "block '%s': the input history needs more than "
             "buffer_size = %ld steps within %g s; raise buffer_size", bs_block_ids[bs_h_block[r]],
             bs_h_cap[r], bs_h_span[r]);
}
#endif

/* Parameter slots (and, at initialisation, initial states) from the diagram parameters:
 * each entry a value at the exported parameters plus coefficient * (parameter - its value
 * there), as measured at export. */
static void bs_apply_params(bs_model *M, int initial) {
    int k;
    for (k = 0; k < BS_NP; k++) M->P[k] = bs_P0[k];
    if (initial) {
        for (k = 0; k < BS_NX; k++) M->x[k] = bs_x0[k];
        for (k = 0; k < BS_NM; k++) M->m[k] = bs_m0[k];
    }
    for (k = 0; k < BS_NPMAP; k++) {
        double d = bs_pmap_coef[k] * (M->par[bs_pmap_par[k]] - bs_par0[bs_pmap_par[k]]);
        if (d == 0.0) continue;
        if (bs_pmap_kind[k] == 0) M->P[bs_pmap_index[k]] += d;
        else if (initial && bs_pmap_kind[k] == 1) M->x[bs_pmap_index[k]] += d;
        else if (initial && bs_pmap_kind[k] == 2) M->m[bs_pmap_index[k]] += d;
    }
    M->sig_valid = 0;
}

/* The double nearest to tick * p / q (exact below 2**53, as `rates.Clock.time`). */
static double bs_tick_time(long long tick) {
    return ((double)tick * (double)BS_CLOCK_P) / (double)BS_CLOCK_Q;
}

static double bs_hit_time(int r, long long k) {
    return bs_tick_time(bs_rate_offset[r] + k * bs_rate_period[r]);
}

static void bs_schedule(bs_model *M) {
    int r;
    for (r = 0; r < BS_NR; r++) {
        double ticks = M->start * (double)BS_CLOCK_Q / (double)BS_CLOCK_P;
        long long k = (long long)ceil((ticks - (double)bs_rate_offset[r]) / (double)bs_rate_period[r]);
        if (k < 0) k = 0;
        while (k > 0 && bs_hit_time(r, k - 1) >= M->start) k--;
        while (bs_hit_time(r, k) < M->start) k++;
        M->hit_k[r] = k;
        M->hit_t[r] = bs_hit_time(r, k);
    }
}

static double bs_ulp(double v) {
    v = fabs(v);
    return nextafter(v, INFINITY) - v;
}

/* Set up a run from `start` (the horizon: 64 ulps of the run's time scale). */
static void bs_reset(bs_model *M, double start, double stop) {
    double scale;
    int k;
    memset(&M->c, 0, sizeof M->c);
    M->c.P = M->P;
    M->c.W = M->W;
    bs_init_W(M->W);
    M->start = start;
    M->stop = stop;
    M->t = start;
    scale = fabs(start);
    if (fabs(stop) > scale) scale = fabs(stop);
    if (stop - start > scale) scale = stop - start;
    M->horizon = 64.0 * bs_ulp(scale);
    bs_apply_params(M, 1);
    for (k = 0; k < BS_NZ1; k++) M->z[k] = 0.0;
    bs_schedule(M);
#if BS_NH > 0
    bs_hist_init(&M->h, BS_ATOL);
#endif
    M->terminate = 0;
    M->failed = 0;
    M->message[0] = 0;
}

static int bs_finite(const double *v, int n) {
    int k;
    for (k = 0; k < n; k++)
        if (!isfinite(v[k])) return 0;
    return 1;
}

/* The signs one horizon along the flow, a second Euler step where a moving zero crossing
 * is still exactly zero (`EventIteration._signs_after`). */
static int bs_signs_after(bs_model *M) {
    double h = M->horizon, t = M->t;
    int j, i, again = 0;
    if (BS_NZ == 0) return 1;
    if (BS_NX > 0) {
        bs_deriv(&M->c, t, M->x, M->m, M->z, M->dx);
        for (j = 0; j < BS_NX; j++) M->probe[j] = M->x[j] + h * M->dx[j];
    }
    bs_zc(&M->c, t + h, M->probe, M->m, M->z, M->g);
    for (i = 0; i < BS_NZ; i++) {
        M->zn[i] = bs_sign(M->g[i]);
        if (M->zn[i] == 0.0 && bs_zmove[i] != 0.0) again = 1;
    }
    if (again && BS_NX > 0) {
        bs_deriv(&M->c, t + h, M->probe, M->m, M->z, M->dx);
        for (j = 0; j < BS_NX; j++) M->probe2[j] = M->probe[j] + h * M->dx[j];
        bs_zc(&M->c, t + 2.0 * h, M->probe2, M->m, M->z, M->g);
        for (i = 0; i < BS_NZ; i++)
            if (M->zn[i] == 0.0) M->zn[i] = bs_sign(M->g[i]);
    }
    for (i = 0; i < BS_NZ; i++)
        if (M->zn[i] != M->zn[i]) return 0;
    return 1;
}

/* Event iteration (`EventIteration._settle`): update until nothing changes. Counts the
 * passes and the event entries; a Stop block's entry asks the run to end. */
static int bs_settle(bs_model *M, int init, int *passes, int *entries) {
    int pass, i;
    for (pass = 0; pass < BS_MAX_PASSES; pass++) {
        int changed, flipped = 0;
        if (!bs_signs_after(M)) {
            bs_set_failed(M, "a zero-crossing function is NaN");
            return 0;
        }
        M->c.n_ev = 0;
        changed = bs_update(&M->c, M->t, M->x, M->m, M->z, M->zn, init);
        if (M->c.failed) {
            bs_set_failed(M, "failed at an event");
            return 0;
        }
        for (i = 0; i < M->c.n_ev && i < BS_EV_MAX; i++) {
            if (M->c.ev_kind[i] == BS_STOP_KIND) M->terminate = 1;
            if (M->log_b != NULL && M->n_log < M->max_log) {
                M->log_t[M->n_log] = M->t;
                M->log_b[M->n_log] = M->c.ev_block[i];
                M->log_k[M->n_log] = M->c.ev_kind[i];
                M->n_log++;
            }
        }
        if (M->log_b != NULL && (M->c.n_ev > BS_EV_MAX || M->n_log >= M->max_log)) {
            bs_set_failed(M, "event log full");  /* the C backend hands the event to Python */
            return 0;
        }
        *entries += M->c.n_ev;
#if BS_NH > 0
        bs_hist_note(&M->h, M->c.ev_block, M->c.ev_kind, M->c.n_ev);
#endif
        for (i = 0; i < BS_NZ; i++) {
            if (M->zn[i] != M->z[i]) flipped = 1;
            M->z[i] = M->zn[i];
        }
        (*passes)++;
        if (!changed && !flipped) return 1;
        if (!bs_finite(M->x, BS_NX)) {
            bs_set_failed(M, "a reset made the state infinite or NaN");
            return 0;
        }
    }
    bs_set_failed(M, "event iteration did not settle after 100 passes");
    return 0;
}

/* The rates due at M->t: 1.0 in M->hits for each (clock rates, then triggered ones),
 * the clock moved on and the trigger flags cleared; 0 if none is due. */
static int bs_hits_due(bs_model *M) {
    int r, any = 0;
    M->clocked = 0;
    for (r = 0; r < BS_NR; r++) {
        M->hits[r] = M->hit_t[r] <= M->t ? 1.0 : 0.0;
        if (M->hits[r] != 0.0) any = M->clocked = 1;
    }
    for (r = 0; r < BS_NTRIG; r++) {
        M->hits[BS_NR + r] = M->m[bs_trig[r]] != 0.0 ? 1.0 : 0.0;
        if (M->hits[BS_NR + r] != 0.0) any = 1;
    }
    if (!any) return 0;
    for (r = 0; r < BS_NR; r++) {
        if (M->hits[r] != 0.0) {
            M->hit_k[r]++;
            M->hit_t[r] = bs_hit_time(r, M->hit_k[r]);
        }
    }
    for (r = 0; r < BS_NTRIG; r++) M->m[bs_trig[r]] = 0.0;
    return 1;
}

/* Settle the model at M->t (`EventIteration._event` up to the right limit): `init` at the
 * start of the run, `located` for a state event (after which nothing changing leaves no
 * trace: a Memory must not sample at a non-event). Returns 0 on failure. */
static int bs_event(bs_model *M, int init, int located, int *something) {
    int passes = 0, entries = 0, k, sampled = 0;
    M->sig_valid = 0;
    M->clocked = 0;
    if (located) bs_m_save(M->m, M->m_before);
#if BS_NH > 0
    if (!bs_hist_mark(&M->h, M->m, M->t)) {  /* (undone with m if nothing happens) */
        bs_hist_overflow(M);
        return 0;
    }
    M->h.have_point = 0;  /* model exchange: the next piece starts after the event */
#endif
    if (!init) {
        M->c.n_ev = 0;
        bs_pre_event(&M->c, M->t, M->x, M->m, M->z, M->zn, 0);
    } else if (BS_NZ > 0) {
        for (k = 0; k < BS_MAX_PASSES; k++) {  /* `_latch_start` */
            int i, same = 1;
            if (!bs_signs_after(M)) break;
            for (i = 0; i < BS_NZ; i++) {
                if (M->zn[i] != M->z[i]) same = 0;
                M->z[i] = M->zn[i];
            }
            if (same) break;
        }
    }
    if (BS_NZ == 0 && !BS_HAS_UPDATE) {
        passes = 1;
    } else if (!bs_settle(M, init, &passes, &entries)) {
        return 0;
    }
    if (bs_hits_due(M)) {
        sampled = 1;
        bs_sample(&M->c, M->t, M->x, M->m, M->z, M->hits);
        if (!bs_settle(M, init, &passes, &entries)) return 0;
    }
    *something = entries > 0 || passes > 1 || sampled;
#if BS_NH > 0
    if (!init) bs_hist_settled(&M->h, M->m, M->t, located || sampled);
#endif
    if (located && !*something) bs_m_restore(M->m, M->m_before);
    M->sig_valid = 0;
    return 1;
}

/* Model exchange: the input histories' piece up to the importer's point (M->t, M->x), a
 * completed integrator step or an event's left limit; after an event (no point kept then)
 * the point where continuous time resumes. Returns 0 if a ring is full. */
static int bs_me_history(bs_model *M) {
#if BS_NH > 0
    if (!bs_hist_me_step(&M->h, &M->c, M->t, M->x, M->m, M->z)) {
        bs_hist_overflow(M);
        return 0;
    }
    M->sig_valid = 0;
#else
    (void)M;
#endif
    return 1;
}

/* After the right limit: clear the event's pulses and re-latch without edges. */
static int bs_after(bs_model *M) {
    int k;
    if (!BS_HAS_AFTER) return 1;
    M->c.n_ev = 0;
    if (bs_after_event(&M->c, M->t, M->x, M->m, M->z, M->zn, 0)) {
        if (!bs_signs_after(M)) {
            bs_set_failed(M, "a zero-crossing function is NaN");
            return 0;
        }
        for (k = 0; k < BS_NZ; k++) M->z[k] = M->zn[k];
    }
    M->sig_valid = 0;
    return 1;
}

/* The next time event after M->t: the blocks' own or the next sample hit (INFINITY: none). */
static double bs_next_event(bs_model *M) {
    double next = BS_HAS_NEXT_TIME ? bs_next_time(&M->c, M->t, M->m) : INFINITY;
    int r;
    for (r = 0; r < BS_NR; r++)
        if (M->hit_t[r] < next) next = M->hit_t[r];
    return next;
}

static const double *bs_signals(bs_model *M) {
    if (!M->sig_valid) {
        bs_outputs(&M->c, M->t, M->x, M->m, M->z, M->sig);
        M->sig_valid = 1;
    }
    return M->sig;
}
