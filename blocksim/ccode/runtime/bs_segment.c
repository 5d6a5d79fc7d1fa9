/* The C backend's continuous segments: blocksim's DOPRI5, output grid and event location
 * in C, called in process (ctypes) by `blocksim/ccode/loop.py`.
 *
 * One call integrates from the engine's state towards its bound, writes the output grid
 * rows (the logged signals, `observe`, at the grid points inside each step, not those
 * within 4 ulps of an event: those are the event's two rows) and returns at the first
 * located crossing (CROSSING: its time and state; the engine settles it in Python, as
 * every event of this backend), at the bound (BOUND: the stop time or a time event), or
 * when the row buffer is full or the step budget of a call is spent (YIELD: call again
 * with resume set). The step and crossing arithmetic is bs_cs.c's.
 */
enum { BS_SEG_BOUND = 0, BS_SEG_CROSSING = 1, BS_SEG_YIELD = 2, BS_SEG_FAILED = 3 };
/* fpar */
enum { FP_T, FP_BOUND, FP_BOUND_IS_EVENT, FP_FIRST_STEP, FP_RTOL, FP_MAX_STEP, FP_START,
       FP_INTERVAL, FP_EVENT_T, FP_LAST_STEP, FP_HORIZON };
/* ipar */
enum { IP_K_GRID, IP_N_GRID, IP_RESUME, IP_ROWS, IP_HIT, IP_NFEV, IP_STEPS, IP_MAX_STEPS };

typedef struct {
    bs_model M;
    bs_cs S;
    long long nfev;
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
    } else {  /* only the states observe reads (`derived.observe_reads`) */
        double s = (tg - S->t) / S->h_step, s1 = 1.0 - s;
        for (q = 0; q < BS_NOBS; q++) {
            j = bs_observed[q];
            S->xd[j] = S->x[j] + s * (S->rc[0][j] + s1 * (S->rc[1][j] + s * (S->rc[2][j] + s1 * S->rc[3][j])));
        }
    }
    bs_observe(&M->c, tg, S->xd, M->m, M->z, y);
    out_t[row] = tg;
    for (j = 0; j < BS_NLOG; j++) out_y[row * BS_NLOG + j] = y[j];
}

BS_API_EXPORT int bs_api_segment(void *handle, const double *P, double *fpar, long long *ipar,
                                 double *x, double *m, double *z, const double *atol,
                                 double *out_t, double *out_y, long long max_rows,
                                 double *x_ev) {
    bs_backend *B = (bs_backend *)handle;
    bs_model *M = &B->M;
    bs_cs *S = &B->S;
    long long rows = 0, steps = 0, k = ipar[IP_K_GRID], n_grid = ipar[IP_N_GRID];
    double start = fpar[FP_START], interval = fpar[FP_INTERVAL];
    int j, i;
    memcpy(M->P, P, sizeof(double) * BS_NP1);
    M->failed = 0;
    M->c.failed = 0;
    M->message[0] = 0;
    if (!ipar[IP_RESUME]) {
        double span;
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
        S->t_bound = fpar[FP_BOUND];
        S->bound_is_event = fpar[FP_BOUND_IS_EVENT] != 0.0;
        S->t_snap = S->t_bound - BS_BOUND_ULPS * bs_ulp(S->t_bound);
        S->h_last = fpar[FP_FIRST_STEP];
        span = S->t_bound - S->t;
        bs_deriv(&M->c, S->t, S->x, M->m, M->z, S->f);
        B->nfev = 1;
        if (S->h_last >= 10.0 * bs_ulp(S->t)) {
            S->h = S->h_last;
            if (span < S->h) S->h = span;
            if (S->max_step < S->h) S->h = S->max_step;
        } else {
            S->h = bs_initial_step(S, M, span);
            B->nfev++;
        }
        S->pending = 0;
    }
    for (;;) {
        double t_end, near;
        int time_event;
        if (!S->pending) {
            if (S->t >= S->t_bound) {
                fpar[FP_T] = S->t;
                for (j = 0; j < BS_NX; j++) x[j] = S->x[j];
                for (i = 0; i < BS_NZ; i++) z[i] = M->z[i];
                ipar[IP_K_GRID] = k;
                ipar[IP_ROWS] = rows;
                ipar[IP_STEPS] = steps;
                ipar[IP_NFEV] = B->nfev;
                fpar[FP_LAST_STEP] = S->h_last;
                return BS_SEG_BOUND;
            }
            if (steps >= ipar[IP_MAX_STEPS]) {
                fpar[FP_T] = S->t;
                for (j = 0; j < BS_NX; j++) x[j] = S->x[j];
                for (i = 0; i < BS_NZ; i++) z[i] = M->z[i];
                ipar[IP_K_GRID] = k;
                ipar[IP_ROWS] = rows;
                ipar[IP_STEPS] = steps;
                ipar[IP_NFEV] = B->nfev;
                fpar[FP_LAST_STEP] = S->h_last;
                return BS_SEG_YIELD;
            }
            if (!bs_cs_step(S, M)) {
                fpar[FP_T] = S->t;
                for (j = 0; j < BS_NX; j++) x[j] = S->x[j];
                ipar[IP_ROWS] = rows;
                ipar[IP_K_GRID] = k;
                return BS_SEG_FAILED;
            }
            B->nfev += 6;
            steps++;
        }
        /* the output grid inside the step */
        t_end = S->hit >= 0 ? S->t_hit : S->t_new;
        time_event = S->hit < 0 && S->t_new >= S->t_bound && S->bound_is_event;
        near = (S->hit >= 0 || time_event) ? t_end - 4.0 * bs_ulp(t_end) : INFINITY;
        while (k <= n_grid) {
            double tg = start + (double)k * interval;
            if (tg > t_end || tg >= near) break;
            if (rows >= max_rows) {  /* full: the pending step's rows go on next call */
                fpar[FP_T] = S->t;
                for (j = 0; j < BS_NX; j++) x[j] = S->x[j];
                for (i = 0; i < BS_NZ; i++) z[i] = M->z[i];
                ipar[IP_K_GRID] = k;
                ipar[IP_ROWS] = rows;
                ipar[IP_STEPS] = steps;
                ipar[IP_NFEV] = B->nfev;
                fpar[FP_LAST_STEP] = S->h_last;
                return BS_SEG_YIELD;
            }
            bs_seg_row(B, tg, out_t, out_y, rows);
            rows++;
            k++;
        }
        S->pending = 0;
        if (S->hit >= 0) {
            fpar[FP_T] = S->t;
            fpar[FP_EVENT_T] = S->t_hit;
            for (j = 0; j < BS_NX; j++) x_ev[j] = S->x_ev[j];
            ipar[IP_HIT] = S->hit;
            ipar[IP_K_GRID] = k;
            ipar[IP_ROWS] = rows;
            ipar[IP_STEPS] = steps;
            ipar[IP_NFEV] = B->nfev;
            fpar[FP_LAST_STEP] = S->h_last;
            return BS_SEG_CROSSING;
        }
        S->t = S->t_new;
        for (j = 0; j < BS_NX; j++) {
            S->x[j] = S->x_new[j];
            S->f[j] = S->K[6][j];
        }
        for (i = 0; i < BS_NZ; i++) M->z[i] = S->s_new[i];
        S->h = S->h_next;
    }
}
