/* blocksim's DOPRI5 stepper and event location in C, for co-simulation (and the C backend).
 *
 * The same method, error control, step-size rules and event location as the engine
 * (`engine/dopri5.py`, `engine/segment.py`, and their compiled twin `engine/native/kernel.py`
 * and `native/locate.py`, whose order of additions this follows): steps from one restart
 * to the next, a crossing of a zero-crossing function against its latched sign located to
 * the first float at which the sign has changed, on the step's dense output, and the
 * event settled there (`bs_core.c`). Communication points do not cut the steps: a step
 * that ends past the point gives the state there by its dense output and stays pending,
 * so an FMU stepped by 0.01 s takes the steps blocksim's own run takes. An input set
 * between two points drops the pending step: the model settles at the point with the new
 * value (as at an event) and integration restarts there.
 */
#define BS_BOUND_ULPS 4.0
#define BS_BRENT_ITERATIONS 100
#ifdef BS_RADAU
#include "bs_radau.h"  /* solver radau: bs_radau.c steps instead of DOPRI5 */
#endif

static const double bs_dp_C[7] = {0.0, 1.0 / 5, 3.0 / 10, 4.0 / 5, 8.0 / 9, 1.0, 1.0};
static const double bs_dp_A[6][6] = {
    {0, 0, 0, 0, 0, 0},
    {1.0 / 5, 0, 0, 0, 0, 0},
    {3.0 / 40, 9.0 / 40, 0, 0, 0, 0},
    {44.0 / 45, -56.0 / 15, 32.0 / 9, 0, 0, 0},
    {19372.0 / 6561, -25360.0 / 2187, 64448.0 / 6561, -212.0 / 729, 0, 0},
    {9017.0 / 3168, -355.0 / 33, 46732.0 / 5247, 49.0 / 176, -5103.0 / 18656, 0}};
static const double bs_dp_B[6] = {35.0 / 384, 0.0, 500.0 / 1113, 125.0 / 192, -2187.0 / 6784,
                                  11.0 / 84};
static const double bs_dp_E[7] = {71.0 / 57600, 0.0, -71.0 / 16695, 71.0 / 1920,
                                  -17253.0 / 339200, 22.0 / 525, -1.0 / 40};
static const double bs_dp_D[7] = {-12715105075.0 / 11282082432, 0.0, 87487479700.0 / 32700410799,
                                  -10690763975.0 / 1880347072, 701980252875.0 / 199316789632,
                                  -1453857185.0 / 822651844, 69997945.0 / 29380423};

typedef struct {
    double t, x[BS_NX1], f[BS_NX1];   /* the integrator's committed point and f(t, x) */
    double h, h_last;                 /* the next trial step; the last accepted one */
    double t_bound, t_snap, t_source;  /* t_source: the blocks' next time event then */
    int bound_is_event;
    int restart;                      /* a new segment starts at t */
    int input_changed;
    double rtol, atol[BS_NX1], max_step;
    int n_err;
    /* the pending accepted step (t, t_new] */
    int pending, hit;
    double t_new, h_step, h_next, t_hit;
    double x_new[BS_NX1], K[7][BS_NX1], rc[4][BS_NX1], s_new[BS_NZ1], x_ev[BS_NX1];
    int rc_done;                      /* rc made for: 0 no state, 1 the observed, 2 all */
    double xs[BS_NX1], xd[BS_NX1], g[BS_NZ1];
#ifdef BS_RADAU
    bs_radau R;                       /* the running solver */
    bs_radau_work RW;
    long long step_nfev;              /* its evaluations in the last step */
#endif
} bs_cs;

#ifdef BS_RADAU
static int bs_radau_step(bs_cs *S, bs_model *M);
static void bs_radau_restart(bs_cs *S, bs_model *M, double span);
static double bs_radau_g_at(bs_cs *S, bs_model *M, int i, double t);
static int bs_radau_event_state(bs_cs *S, bs_model *M);
#endif

/* Hairer's CONTD5 dense-output coefficients of state j in the pending step. */
static inline void bs_rc_state(bs_cs *S, int j) {
    double d = 0.0, h = S->h_step;
    int r;
    for (r = 0; r < 7; r++) d += bs_dp_D[r] * S->K[r][j];
    S->rc[0][j] = S->x_new[j] - S->x[j];
    S->rc[1][j] = h * S->K[0][j] - S->rc[0][j];
    S->rc[2][j] = S->rc[0][j] - h * S->K[6][j] - S->rc[1][j];
    S->rc[3][j] = h * d;
}

/* The coefficients are made when first needed, not with every step: most steps of a run
 * without crossings or delays only write output rows, which read the observed states. */
static void bs_rc_all(bs_cs *S) {
    int j;
    if (S->rc_done == 2) return;
    for (j = 0; j < BS_NX; j++) bs_rc_state(S, j);
    S->rc_done = 2;
}

static void bs_dense(bs_cs *S, double t, double *out) {
    int j;
    double s, s1;
    if (t == S->t_new) {
        for (j = 0; j < BS_NX; j++) out[j] = S->x_new[j];
        return;
    }
#ifdef BS_RADAU
    bs_radau_dense(&S->R, t, out);
    return;
#endif
    bs_rc_all(S);
    s = (t - S->t) / S->h_step;
    s1 = 1.0 - s;
    for (j = 0; j < BS_NX; j++)
        out[j] = S->x[j] + s * (S->rc[0][j] + s1 * (S->rc[1][j] + s * (S->rc[2][j] + s1 * S->rc[3][j])));
}

#if BS_NH > 0
static void bs_cs_state_at(void *S, double t, double *x) { bs_dense((bs_cs *)S, t, x); }
#endif

static double bs_g_at(bs_cs *S, bs_model *M, int i, double t) {
#ifdef BS_RADAU
    if (S->RW.trial_mode) return bs_radau_g_at(S, M, i, t);
#endif
    bs_dense(S, t, S->xd);
    bs_zc(&M->c, t, S->xd, M->m, M->z, S->g);
    return S->g[i];
}

static int bs_changed(bs_cs *S, bs_model *M, int i, double zi, double t) {
    return bs_sign(bs_g_at(S, M, i, t)) != zi;
}

/* Brent's method as scipy's brentq (`events.brent`) to 4 ulp; *g_root the value at the
 * root if the last evaluation was there, else NaN. */
static double bs_brent(bs_cs *S, bs_model *M, int i, double xa, double xb, double fa, double fb,
                       double *g_root) {
    const double eps4 = 4.0 * 2.220446049250313e-16;
    double xtol, xpre = xa, xcur = xb, fpre = fa, fcur = fb, xblk = 0.0, fblk = 0.0;
    double spre = 0.0, scur = 0.0;
    int it;
    if (fa == 0.0) { *g_root = fa; return xa; }
    if (fb == 0.0) { *g_root = fb; return xb; }
    xtol = 4.0 * bs_ulp(fabs(xa) > fabs(xb) ? fabs(xa) : fabs(xb));
    for (it = 0; it < BS_BRENT_ITERATIONS; it++) {
        double delta, sbis, stry;
        if (fpre != 0.0 && fcur != 0.0 && ((fpre < 0.0) != (fcur < 0.0))) {
            xblk = xpre;
            fblk = fpre;
            spre = scur = xcur - xpre;
        }
        if (fabs(fblk) < fabs(fcur)) {
            xpre = xcur; xcur = xblk; xblk = xpre;
            fpre = fcur; fcur = fblk; fblk = fpre;
        }
        delta = (xtol + eps4 * fabs(xcur)) / 2.0;
        sbis = (xblk - xcur) / 2.0;
        if (fcur == 0.0 || fabs(sbis) < delta) {
            *g_root = fcur;
            return xcur;
        }
        if (fabs(spre) > delta && fabs(fcur) < fabs(fpre)) {
            if (xpre == xblk) {
                stry = -fcur * (xcur - xpre) / (fcur - fpre);
            } else {
                double dpre = (fpre - fcur) / (xpre - xcur);
                double dblk = (fblk - fcur) / (xblk - xcur);
                stry = -fcur * (fblk * dblk - fpre * dpre) / (dblk * dpre * (fblk - fpre));
            }
            if (2.0 * fabs(stry) < bs_min(fabs(spre), 3.0 * fabs(sbis) - delta)) {
                spre = scur;
                scur = stry;
            } else {
                spre = sbis;
                scur = sbis;
            }
        } else {
            spre = sbis;
            scur = sbis;
        }
        xpre = xcur;
        fpre = fcur;
        if (fabs(scur) > delta) xcur += scur;
        else xcur += sbis > 0.0 ? delta : -delta;
        fcur = bs_g_at(S, M, i, xcur);
    }
    *g_root = fcur;
    return xcur;
}

/* The first float in (ta, tb] where sign(g_i) != zi (`native.locate.locate`). */
static double bs_locate(bs_cs *S, bs_model *M, int i, double zi, double ta, double tb) {
    double lo = ta, hi = tb, g1 = bs_g_at(S, M, i, tb);
    int k;
    if (zi != 0.0 && bs_sign(g1) == -zi) {
        double a = ta, ga = 0.0;
        int found = 0;
        for (k = 0; k < 8; k++) {
            double sa;
            ga = bs_g_at(S, M, i, a);
            sa = bs_sign(ga);
            if (sa == zi) { found = 1; break; }
            if (sa == -zi) {
                if (a == ta) break;
                hi = a;
                g1 = ga;
            }
            a = ta + (hi - ta) / 2.0;
        }
        if (found) {
            double g_root, root = bs_brent(S, M, i, a, hi, ga, g1, &g_root);
            double step = bs_ulp(root);
            lo = ta;
            if (g_root != g_root) g_root = bs_g_at(S, M, i, root);
            if (bs_sign(g_root) != zi) {
                hi = root;
                for (k = 0; k < 12; k++) {
                    double trial = root - step;
                    if (trial <= ta) break;
                    if (!bs_changed(S, M, i, zi, trial)) { lo = trial; break; }
                    hi = trial;
                    step *= 2.0;
                }
            } else {
                lo = root;
                for (k = 0; k < 12; k++) {
                    double trial = root + step;
                    if (trial >= hi) break;
                    if (bs_changed(S, M, i, zi, trial)) { hi = trial; break; }
                    lo = trial;
                    step *= 2.0;
                }
            }
        }
    }
    for (;;) {
        double mid = lo + (hi - lo) / 2.0;
        if (mid <= lo || mid >= hi) return hi;
        if (bs_changed(S, M, i, zi, mid)) hi = mid;
        else lo = mid;
    }
}

/* Hairer's starting step (`dopri5.initial_step`). */
static double bs_initial_step(bs_cs *S, bs_model *M, double span) {
    double d0 = 0.0, d1 = 0.0, d2 = 0.0, h0, h1, r;
    int j, count = S->n_err > 0 ? S->n_err : 1;
    if (span <= 0.0 || BS_NX == 0) return span > 0.0 ? span : 0.0;
    for (j = 0; j < BS_NX; j++) {
        double sc = S->atol[j] + fabs(S->x[j]) * S->rtol;
        if (!isfinite(S->atol[j])) continue;
        d0 += (S->x[j] / sc) * (S->x[j] / sc);
        d1 += (S->f[j] / sc) * (S->f[j] / sc);
    }
    d0 = sqrt(d0 / count);
    d1 = sqrt(d1 / count);
    if (!(isfinite(d0) && isfinite(d1))) return NAN;
    h0 = (d0 < 1e-5 || d1 < 1e-5) ? 1e-6 : 0.01 * d0 / d1;
    if (h0 > span) h0 = span;
    for (j = 0; j < BS_NX; j++) S->xs[j] = S->x[j] + h0 * S->f[j];
    bs_deriv(&M->c, S->t + h0, S->xs, M->m, M->z, S->K[1]);
    for (j = 0; j < BS_NX; j++) {
        double sc = S->atol[j] + fabs(S->x[j]) * S->rtol;
        if (!isfinite(S->atol[j])) continue;
        d2 += ((S->K[1][j] - S->f[j]) / sc) * ((S->K[1][j] - S->f[j]) / sc);
    }
    d2 = sqrt(d2 / count) / h0;
    if (d1 <= 1e-15 && d2 <= 1e-15) h1 = h0 * 1e-3 > 1e-6 ? h0 * 1e-3 : 1e-6;
    else h1 = pow(0.01 / (d1 > d2 ? d1 : d2), 0.2);
    r = 100.0 * h0;
    if (h1 < r) r = h1;
    if (span < r) r = span;
    if (S->max_step < r) r = S->max_step;
    return r;
}

/* The bound of the segment from S->t: the next time event or the stop time. */
static int bs_cs_bound(bs_cs *S, bs_model *M) {
    double t_source = BS_HAS_NEXT_TIME ? bs_next_time(&M->c, S->t, M->m) : INFINITY;
    double t_time = t_source;
    int r;
    if (!(t_source > S->t)) {
        snprintf(M->message, sizeof M->message,
                 "the blocks' next time event (%.17g) does not come after t = %.17g", t_source, S->t);
        M->failed = 1;
        return 0;
    }
    for (r = 0; r < BS_NR; r++)
        if (M->hit_t[r] < t_time) t_time = M->hit_t[r];
    S->t_source = t_source;
    S->t_bound = M->stop < t_time ? M->stop : t_time;
    S->bound_is_event = S->t_bound == t_time;
    S->t_snap = S->t_bound - BS_BOUND_ULPS * bs_ulp(S->t_bound);
    return 1;
}

/* The first step of a new segment `span` long, f at its start known (`_restart_step`): the
 * last accepted step cut to the span and max_step, else Hairer's starting step (radau: its
 * own choice). Returns the derivative evaluations the choice made. */
static long long bs_cs_first_step(bs_cs *S, bs_model *M, double span) {
#ifdef BS_RADAU
    bs_radau_restart(S, M, span);
    return S->R.nfev;
#else
    if (S->h_last >= 10.0 * bs_ulp(S->t)) {
        S->h = S->h_last;
        if (span < S->h) S->h = span;
        if (S->max_step < S->h) S->h = S->max_step;
        return 0;
    }
    S->h = bs_initial_step(S, M, span);
    return 1;
#endif
}

/* A new segment from S->t: f anew, the first step from the last one. */
static int bs_cs_restart(bs_cs *S, bs_model *M) {
    double span;
    if (!bs_cs_bound(S, M)) return 0;
    span = S->t_bound - S->t;
    if (BS_NX > 0) bs_deriv(&M->c, S->t, S->x, M->m, M->z, S->f);
    (void)bs_cs_first_step(S, M, span);
    S->restart = 0;
    S->pending = 0;
    return 1;
}

static void bs_cs_start(bs_cs *S, bs_model *M, double rtol) {
    int j;
    memset(S, 0, sizeof *S);
    S->t = M->t;
    for (j = 0; j < BS_NX; j++) S->x[j] = M->x[j];
    S->rtol = rtol > 100 * 2.220446049250313e-16 ? rtol : 100 * 2.220446049250313e-16;
    for (j = 0; j < BS_NX; j++) {
        /* the diagram's atol, scaled with the importer's tolerance (rtol) */
        S->atol[j] = bs_state_atol[j] * (rtol / BS_RTOL);
        if (isfinite(S->atol[j])) S->n_err++;
    }
#if BS_NH > 0
    M->h.atol = BS_ATOL * (rtol / BS_RTOL);
#endif
    S->max_step = BS_MAX_STEP;
    S->restart = 1;
}

static void bs_cs_input_changed(bs_cs *S, bs_model *M) {
    (void)M;
    S->input_changed = 1;
}

/* Take one accepted step from S->t and find the first watched crossing in it: the
 * pending step, ending at t_hit (hit >= 0) or t_new. Returns 0 on failure. */
static int bs_cs_step(bs_cs *S, bs_model *M) {
    double t = S->t, h = S->h, t_new = t, min_step, err;
    int j, s, r, i, rejected = 0, finite = 1;
#ifdef BS_RADAU
    if (!bs_radau_step(S, M)) return 0;
    t_new = S->t_new;
    goto crossings;
#endif
    min_step = 10.0 * bs_ulp(t);
    if (S->max_step < h) h = S->max_step;
    S->h_next = h;
    for (;;) {
        t_new = t + h;
        if (t_new >= S->t_snap) {
            t_new = S->t_bound;
        } else if (!(h >= min_step)) {
            bs_set_failed(M, (rejected && !finite) || h != h ? "the state became infinite or NaN"
                                                             : "step size too small (underflow)");
            return 0;
        }
        h = t_new - t;
        for (j = 0; j < BS_NX; j++) S->K[0][j] = S->f[j];
        for (s = 1; s < 6; s++) {
            for (j = 0; j < BS_NX; j++) {
                double acc = 0.0;
                for (r = 0; r < s; r++) acc += bs_dp_A[s][r] * S->K[r][j];
                S->xs[j] = S->x[j] + h * acc;
            }
            bs_deriv(&M->c, t + bs_dp_C[s] * h, S->xs, M->m, M->z, S->K[s]);
        }
        for (j = 0; j < BS_NX; j++) {
            double acc = 0.0;
            for (r = 0; r < 6; r++) acc += bs_dp_B[r] * S->K[r][j];
            S->x_new[j] = S->x[j] + h * acc;
        }
        bs_deriv(&M->c, t_new, S->x_new, M->m, M->z, S->K[6]);
        err = 0.0;
        for (j = 0; j < BS_NX; j++) {
            double e = 0.0, sc, ax = fabs(S->x[j]), an = fabs(S->x_new[j]);
            for (r = 0; r < 7; r++) e += bs_dp_E[r] * S->K[r][j];
            sc = S->atol[j] + (ax > an ? ax : an) * S->rtol;
            err += (h * e / sc) * (h * e / sc);
        }
        err = sqrt(err / (S->n_err > 0 ? S->n_err : 1));
        finite = isfinite(err);
        if (err < 1.0) {
            double factor = err == 0.0 ? 10.0 : bs_min(10.0, 0.9 * pow(err, -0.2));
            if (rejected && factor > 1.0) factor = 1.0;
            S->h_next = h * factor;
            break;
        }
        h *= finite ? bs_max(0.2, 0.9 * pow(err, -0.2)) : 0.2;
        rejected = 1;
    }
    if (!bs_finite(S->x_new, BS_NX)) {
        bs_set_failed(M, "the state became infinite or NaN");
        return 0;
    }
    S->t_new = t_new;
    S->h_step = h;
    S->h_last = h;
    S->rc_done = 0;  /* dense-output coefficients: when first needed (`bs_rc_all`) */
#ifdef BS_RADAU
crossings:
#endif
#if BS_NH > 0
    if (!bs_hist_record(&M->h, &M->c, M->m, M->z, t, t_new, S->rtol, bs_cs_state_at, S)) {
        bs_hist_overflow(M);  /* the step into the input histories */
        return 0;
    }
#endif
    S->hit = -1;
    S->t_hit = INFINITY;
    if (BS_NZ > 0) {
        bs_zc(&M->c, t_new, S->x_new, M->m, M->z, S->g);
        for (i = 0; i < BS_NZ; i++) {
            S->s_new[i] = bs_sign(S->g[i]);
            if (S->g[i] != S->g[i]) {
                bs_set_failed(M, "a zero-crossing function is NaN");
                return 0;
            }
        }
        for (i = 0; i < BS_NZ; i++) {
            double zi = M->z[i], si = S->s_new[i], d = bs_zdir[i];
            int up = si > zi;
            if (si == zi) continue;
            if (!(d == 0.0 || (d > 0.0 && up) || (d < 0.0 && !up))) continue;
            if (S->hit < 0) {
                S->t_hit = bs_locate(S, M, i, zi, t, t_new);
                S->hit = i;
            } else if (bs_changed(S, M, i, zi, S->t_hit)) {
                double before = nextafter(S->t_hit, -INFINITY);
                if (before > t && bs_changed(S, M, i, zi, before)) {
                    double ti = bs_locate(S, M, i, zi, t, S->t_hit);
                    if (ti < S->t_hit) {
                        S->t_hit = ti;
                        S->hit = i;
                    }
                }
            }
        }
#ifdef BS_RADAU
        if (S->hit >= 0 && !bs_radau_event_state(S, M)) return 0;
#else
        if (S->hit >= 0) bs_dense(S, S->t_hit, S->x_ev);
#endif
    }
    S->pending = 1;
    return 1;
}

static void bs_cs_view(bs_cs *S, bs_model *M, double t) {
    int j;
    M->t = t;
    if (S->pending && t > S->t) bs_dense(S, t, M->x);
    else for (j = 0; j < BS_NX; j++) M->x[j] = S->x[j];
    M->sig_valid = 0;
}

/* Settle an event at S->t on the model (state S->x), then restart the integration. */
static int bs_cs_event(bs_cs *S, bs_model *M, int located) {
    int j, something = 0;
    M->t = S->t;
    for (j = 0; j < BS_NX; j++) M->x[j] = S->x[j];
    if (!bs_event(M, 0, located, &something)) return 0;
    if (!bs_after(M)) return 0;
    for (j = 0; j < BS_NX; j++) S->x[j] = M->x[j];
    S->restart = 1;
    return 1;
}

/* Integrate to `target` (a communication point), settling every event on the way and
 * those at the target itself; the model then shows the state at the target. */
static int bs_cs_advance(bs_cs *S, bs_model *M, double target) {
    int j, i;
    if (S->input_changed) {  /* new input values at the communication point */
        S->input_changed = 0;
        S->t = M->t;
        for (j = 0; j < BS_NX; j++) S->x[j] = M->x[j];
        if (!bs_cs_event(S, M, 0)) return 0;
    }
    if (target > M->stop) {  /* stepped past the stop time given: the run goes on */
        M->stop = target;
        S->restart = 1;
        for (j = 0; j < BS_NX; j++) M->x[j] = S->x[j];
        S->pending = 0;
    }
    for (;;) {
        if (M->terminate) {
            bs_cs_view(S, M, S->t);
            return 1;
        }
        if (S->restart && !bs_cs_restart(S, M)) return 0;
        if (S->t >= target && !S->pending) {
            bs_cs_view(S, M, S->t);
            return 1;
        }
        if (!S->pending) {
            if (S->t >= S->t_bound) {  /* at the stop time with the target beyond it */
                bs_cs_view(S, M, S->t);
                return 1;
            }
            if (!bs_cs_step(S, M)) return 0;
        }
        if ((S->hit >= 0 ? S->t_hit : S->t_new) > target) {
            bs_cs_view(S, M, target);
            return 1;
        }
        S->pending = 0;
        if (S->hit >= 0) {  /* a located crossing: settle there, restart */
            S->t = S->t_hit;
            for (j = 0; j < BS_NX; j++) S->x[j] = S->x_ev[j];
            if (!bs_cs_event(S, M, 1)) return 0;
            continue;
        }
        S->t = S->t_new;
        for (j = 0; j < BS_NX; j++) {
            S->x[j] = S->x_new[j];
            S->f[j] = S->K[6][j];
        }
        for (i = 0; i < BS_NZ; i++) M->z[i] = S->s_new[i];  /* unwatched sign changes */
        S->h = S->h_next;
        if (S->t >= S->t_bound && S->bound_is_event) {
            if (!bs_cs_event(S, M, 0)) return 0;
        } else if (S->t >= S->t_bound) {
            S->restart = 0;  /* the stop time: nothing beyond it unless a later target */
        }
    }
}
