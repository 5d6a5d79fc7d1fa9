/* blocksim's radau solver in C: scipy.integrate.Radau (Radau IIA, order 5), step for step.
 *
 * The engine runs solver radau through scipy (`engine/steppers.AdaptiveStepper`); this is
 * the same algorithm (scipy/integrate/_ivp/radau.py and common.py): the same constants,
 * the simplified Newton iteration on the transformed collocation system with one real and
 * one complex LU, its convergence test and rate, the embedded error estimate (and its
 * second, filtered estimate after a rejection), the predictive (Gustafsson) step-size
 * controller, the rules for reusing the Jacobian and the factorisations, the Jacobian by
 * forward differences with num_jac's adaptive step factors, and select_initial_step for
 * a segment without a previous step. Sums and factorisations follow the order of the BLAS
 * numpy and scipy call (see the linear algebra below), so the two agree to rounding,
 * mostly bit for bit.
 *
 * Events are located as the engine locates them on radau (`engine/segment.py`): on the
 * step's collocation polynomial first, then, for a zero crossing that reads the state, on
 * states integrated from the step's start to each trial time by a fresh solver that
 * starts from the running one's Jacobian (`AdaptiveStepper.solve_to`, `_refine`); the
 * state handed to the event is such an integration to the event time.
 *
 * Included after bs_cs.c when BS_RADAU is defined; no dependency beyond libm.
 */
#define BS_RD_NEWTON_MAXITER 6
#define BS_RD_MIN_FACTOR 0.2
#define BS_RD_MAX_FACTOR 10.0
#define BS_RD_EPS 2.220446049250313e-16
#define BS_RD_NARROW_RETRY 16
#define BS_RD_BLOCKED (BS_NX / 4 * 4)  /* rows a matrix-vector product takes 4 at a time */
#define BS_RD_TOO_SMALL "Required step size is less than spacing between numbers."
#define BS_RD_NONFINITE "the state became infinite or NaN"

/* scipy's constants as Python computes them (repr of each double). */
static const double bs_rd_C[3] = {0.15505102572168222, 0.6449489742783178, 1.0};
static const double bs_rd_E[3] = {-10.048809399827414, 1.382142733160748, -0.3333333333333333};
static const double bs_rd_MU_REAL = 3.637834252744496;
static const double bs_rd_MU_C_RE = 2.6810828736277523, bs_rd_MU_C_IM = -3.050430199247411;
static const double bs_rd_T[3][3] = {
    {0.09443876248897524, -0.1412552950209542, 0.03002919410514742},
    {0.2502131229653333, 0.20412935229379994, -0.3829421127572619},
    {1.0, 1.0, 0.0}};
static const double bs_rd_TI[3][3] = {
    {4.178718591551904, 0.32768282076106237, 0.5233764454994495},
    {-4.178718591551904, -0.32768282076106237, 0.47662355450055044},
    {0.5028726349457868, -2.571926949855605, 0.5960392048282249}};
static const double bs_rd_P[3][3] = {
    {10.048809399827414, -25.62959144707664, 15.580782047249224},
    {-1.382142733160748, 10.296258113743303, -8.914115380582556},
    {0.3333333333333333, -2.6666666666666665, 3.3333333333333335}};
/* num_jac's thresholds: EPS ** 0.875, EPS ** 0.75, EPS ** 0.25, 1e3 * EPS, EPS ** 0.5 */
static const double bs_rd_DIFF_REJECT = 2.0097183471152322e-14;
static const double bs_rd_DIFF_SMALL = 1.8189894035458565e-12;
static const double bs_rd_DIFF_BIG = 0.0001220703125;
static const double bs_rd_MIN_JAC_FACTOR = 2.220446049250313e-13;
static const double bs_rd_JAC_FACTOR0 = 1.4901161193847656e-08;

/* numpy.maximum: NaN if either is NaN. */
static double bs_rd_npmax(double a, double b) {
    if (a != a || b != b) return a + b;
    return a > b ? a : b;
}

/* The model's derivative, as the solver's `fun`: counted (`nfev`) when scipy counts it,
 * and the first (t, x) of a step where it is not finite kept (`AdaptiveStepper._watched`). */
static void bs_rd_fun(bs_radau_work *Wk, bs_model *M, bs_radau *R, int counted, double t,
                      double *y, double *out) {
    double total = 0.0;
    int j;
    bs_deriv(&M->c, t, y, M->m, M->z, out);
    if (counted) R->nfev++;
    for (j = 0; j < BS_NX; j++) total += out[j];
    if (total - total != 0.0 && !Wk->probe_set) {
        Wk->probe_set = 1;
        Wk->probe_t = t;
        for (j = 0; j < BS_NX; j++) Wk->probe_x[j] = y[j];
    }
}

/* scipy's RMS norm of v / scale over `rows` rows of n. */
static double bs_rd_norm(const double *v, int stride, int rows, const double *scale) {
    double s = 0.0;
    int r, j;
    for (r = 0; r < rows; r++)
        for (j = 0; j < BS_NX; j++) {
            double q = v[r * stride + j] / scale[j];
            s = fma(q, q, s);  /* (numpy's dot) */
        }
    return sqrt(s) / sqrt((double)(rows * BS_NX));
}

static int bs_rd_all_finite(const double *v, int n) {
    int j;
    for (j = 0; j < n; j++)
        if (!isfinite(v[j])) return 0;
    return 1;
}

/* np.argmax(|d|): the first largest, or the first NaN. */
static int bs_rd_argmax_abs(const double *d) {
    int best = 0, r;
    double big = fabs(d[0]);
    if (d[0] != d[0]) return 0;
    for (r = 1; r < BS_NX; r++) {
        double a = fabs(d[r]);
        if (d[r] != d[r]) return r;
        if (a > big) { big = a; best = r; }
    }
    return best;
}

/* The Jacobian by forward differences (scipy's num_jac, dense), column by column: each
 * column's step and its factor are decided from that column alone, as there. */
static void bs_rd_num_jac(bs_radau_work *Wk, bs_model *M, bs_radau *R, double t,
                          const double *y, const double *f) {
    double *J = R->own_J, *yp = Wk->nj[0], *fn = Wk->nj[1], *diff = Wk->nj[2];
    double *fn2 = Wk->nj[3], *diff2 = Wk->nj[4], *ys = Wk->nj[5], *h = Wk->nj[6];
    double *factor = R->jac_factor;
    int j, c, r;
    if (!R->have_factor) {
        for (j = 0; j < BS_NX; j++) factor[j] = bs_rd_JAC_FACTOR0;
        R->have_factor = 1;
    }
    for (j = 0; j < BS_NX; j++) {
        double sign = f[j] >= 0.0 ? 1.0 : -1.0;
        ys[j] = sign * bs_rd_npmax(R->atol[j], fabs(y[j]));
        h[j] = (y[j] + factor[j] * ys[j]) - y[j];
        while (h[j] == 0.0) {
            factor[j] *= 10.0;
            h[j] = (y[j] + factor[j] * ys[j]) - y[j];
        }
    }
    for (c = 0; c < BS_NX; c++) {
        double max_diff, scale;
        int mi;
        for (j = 0; j < BS_NX; j++) yp[j] = y[j] + 0.0;
        yp[c] = y[c] + h[c];
        bs_rd_fun(Wk, M, R, 0, t, yp, fn);
        for (r = 0; r < BS_NX; r++) diff[r] = fn[r] - f[r];
        mi = bs_rd_argmax_abs(diff);
        max_diff = fabs(diff[mi]);
        scale = bs_rd_npmax(fabs(f[mi]), fabs(fn[mi]));
        if (max_diff < bs_rd_DIFF_REJECT * scale) {
            double new_factor = 10.0 * factor[c], h_new, max_new, scale_new;
            int mi2;
            h_new = (y[c] + new_factor * ys[c]) - y[c];
            yp[c] = y[c] + h_new;
            bs_rd_fun(Wk, M, R, 0, t, yp, fn2);
            for (r = 0; r < BS_NX; r++) diff2[r] = fn2[r] - f[r];
            mi2 = bs_rd_argmax_abs(diff2);
            max_new = fabs(diff2[mi2]);
            scale_new = bs_rd_npmax(fabs(f[mi2]), fabs(fn2[mi2]));
            if (max_diff * scale_new < max_new * scale) {
                factor[c] = new_factor;
                h[c] = h_new;
                for (r = 0; r < BS_NX; r++) diff[r] = diff2[r];
                scale = scale_new;
                max_diff = max_new;
            }
        }
        for (r = 0; r < BS_NX; r++) J[r * BS_NX + c] = diff[r] / h[c];
        if (max_diff < bs_rd_DIFF_SMALL * scale) factor[c] *= 10.0;
        if (max_diff > bs_rd_DIFF_BIG * scale) factor[c] *= 0.1;
        factor[c] = bs_rd_npmax(factor[c], bs_rd_MIN_JAC_FACTOR);
    }
}

#include "bs_radau_la.c"  /* dense LU and products in the order of numpy's BLAS */

/* LU_real and LU_complex of MU / h * I - J (scipy's lu_factor checks the matrix first:
 * a Jacobian with an infinity or a NaN ends the run). */
static int bs_rd_factor(bs_radau_work *Wk, bs_radau *R, const double *J, double h) {
    double mr = bs_rd_MU_REAL / h, cr = bs_rd_MU_C_RE / h, ci = bs_rd_MU_C_IM / h;
    int i, j, n = BS_NX;
    for (i = 0; i < n; i++)
        for (j = 0; j < n; j++) {
            double a = J[i * n + j];
            R->lu_r[i * n + j] = (i == j ? mr : 0.0) - a;
            R->lu_cr[i * n + j] = (i == j ? cr : 0.0) - a;
            R->lu_ci[i * n + j] = i == j ? ci : 0.0;
        }
    if (!bs_rd_all_finite(R->lu_r, n * n) || !bs_rd_all_finite(R->lu_cr, n * n)
            || !bs_rd_all_finite(R->lu_ci, n * n)) {
        Wk->why = BS_RD_NONFINITE;
        return 0;
    }
    bs_rd_lu(R->lu_r, R->piv_r);
    bs_rd_clu(R->lu_cr, R->lu_ci, R->piv_c);
    R->lu_ok = 1;
    return 1;
}

/* scipy's solve_collocation_system from R->Z (the initial guess): R->Z the solution.
 * Returns 0 on a failure (a non-finite right-hand side into lu_solve), else sets
 * *converged, *n_iter and *rate (NaN: none). */
static int bs_rd_newton(bs_radau_work *Wk, bs_model *M, bs_radau *R, double t, const double *y,
                        double h, const double *scale, int *converged, int *n_iter,
                        double *rate) {
    double mr = bs_rd_MU_REAL / h, cr = bs_rd_MU_C_RE / h, ci = bs_rd_MU_C_IM / h;
    double dW_norm_old = 0.0, ch[3];
    int k, i, j, have_old = 0, have_rate = 0;
    double (*W)[BS_NX1] = Wk->W, (*F)[BS_NX1] = Wk->F, (*dW)[BS_NX1] = Wk->dW;
    *converged = 0;
    *rate = NAN;
    for (j = 0; j < BS_NX; j++)
        for (i = 0; i < 3; i++)
            W[i][j] = bs_rd_dot3(bs_rd_TI[i][0], R->Z[0][j], bs_rd_TI[i][1], R->Z[1][j],
                                 bs_rd_TI[i][2], R->Z[2][j]);
    for (i = 0; i < 3; i++) ch[i] = h * bs_rd_C[i];
    for (k = 0; k < BS_RD_NEWTON_MAXITER; k++) {
        double dW_norm, *yp = Wk->v1;
        int finite = 1;
        for (i = 0; i < 3; i++) {
            for (j = 0; j < BS_NX; j++) yp[j] = y[j] + R->Z[i][j];
            bs_rd_fun(Wk, M, R, 1, t + ch[i], yp, F[i]);
        }
        for (i = 0; i < 3; i++)
            if (!bs_rd_all_finite(F[i], BS_NX)) finite = 0;
        if (!finite) break;
        for (j = 0; j < BS_NX; j++) {
            double fr, fcr, fci;
            if (j < BS_RD_BLOCKED) {  /* (matrix-vector products: BLAS's blocks of 4 rows) */
                fr = fma(F[0][j], bs_rd_TI[0][0], F[1][j] * bs_rd_TI[0][1]) + F[2][j] * bs_rd_TI[0][2];
                fcr = fma(F[1][j], bs_rd_TI[1][1], F[0][j] * bs_rd_TI[1][0]) + F[2][j] * bs_rd_TI[1][2];
                fci = fma(F[1][j], bs_rd_TI[2][1], F[0][j] * bs_rd_TI[2][0]) + F[2][j] * bs_rd_TI[2][2];
            } else {  /* (and the rows left over; the complex ones as sums of products) */
                fr = bs_rd_dot3(F[0][j], bs_rd_TI[0][0], F[1][j], bs_rd_TI[0][1], F[2][j], bs_rd_TI[0][2]);
                fcr = (F[0][j] * bs_rd_TI[1][0] + F[1][j] * bs_rd_TI[1][1]) + F[2][j] * bs_rd_TI[1][2];
                fci = (F[0][j] * bs_rd_TI[2][0] + F[1][j] * bs_rd_TI[2][1]) + F[2][j] * bs_rd_TI[2][2];
            }
            dW[0][j] = fr - mr * W[0][j];
            /* (numpy's complex multiply, in its SIMD loop: fused) */
            dW[1][j] = fcr - fma(cr, W[1][j], -(ci * W[2][j]));
            dW[2][j] = fci - fma(cr, W[2][j], ci * W[1][j]);
        }
        if (!bs_rd_all_finite(dW[0], BS_NX) || !bs_rd_all_finite(dW[1], BS_NX)
                || !bs_rd_all_finite(dW[2], BS_NX)) {
            Wk->why = BS_RD_NONFINITE;
            return 0;
        }
        bs_rd_lu_solve(R->lu_r, R->piv_r, dW[0]);
        bs_rd_clu_solve(R->lu_cr, R->lu_ci, R->piv_c, dW[1], dW[2]);
        dW_norm = bs_rd_norm(dW[0], BS_NX1, 3, scale);
        if (have_old) {
            *rate = dW_norm / dW_norm_old;
            have_rate = 1;
        }
        if (have_rate && (*rate >= 1.0 || pow(*rate, (double)(BS_RD_NEWTON_MAXITER - k))
                                                  / (1.0 - *rate) * dW_norm > R->newton_tol))
            break;
        for (i = 0; i < 3; i++)
            for (j = 0; j < BS_NX; j++) W[i][j] += dW[i][j];
        for (j = 0; j < BS_NX; j++)
            for (i = 0; i < 3; i++)
                R->Z[i][j] = bs_rd_dot3(bs_rd_T[i][0], W[0][j], bs_rd_T[i][1], W[1][j],
                                        bs_rd_T[i][2], W[2][j]);
        if (dW_norm == 0.0 || (have_rate && *rate / (1.0 - *rate) * dW_norm < R->newton_tol)) {
            *converged = 1;
            break;
        }
        dW_norm_old = dW_norm;
        have_old = 1;
    }
    *n_iter = (k < BS_RD_NEWTON_MAXITER ? k : BS_RD_NEWTON_MAXITER - 1) + 1;
    return 1;
}

static double bs_rd_predict(double h_abs, double h_abs_old, double err, double err_old,
                            int have_old) {
    double multiplier = 1.0;
    if (have_old && err != 0.0) multiplier = h_abs / h_abs_old * pow(err_old / err, 0.25);
    return (multiplier < 1.0 ? multiplier : 1.0) * pow(err, -0.25);
}

/* The collocation polynomial of the last accepted step at t (RadauDenseOutput); `vector`:
 * as numpy evaluates it at several times at once (a matrix product, summed in another
 * order than its matrix-vector product at one time). */
static void bs_rd_poly(const bs_radau *R, double t, double *out, int vector) {
    double x = (t - R->sol_t_old) / R->sol_h, p1 = x * x, p2 = p1 * x;
    int j;
    for (j = 0; j < BS_NX; j++)
        out[j] = (vector ? bs_rd_dot3(R->Q[j][0], x, R->Q[j][1], p1, R->Q[j][2], p2)
                         : bs_rd_dot3(R->Q[j][1], p1, R->Q[j][0], x, R->Q[j][2], p2))
                 + R->sol_y_old[j];
}

static void bs_radau_dense(const bs_radau *R, double t, double *out) {
    bs_rd_poly(R, t, out, 0);
}

/* One accepted step of solver R from (t, y, f) towards t_bound (scipy's Radau._step_impl):
 * (t_new, y_new, f_new). Returns 0 on failure, the reason in Wk->why. */
static int bs_rd_step(bs_radau_work *Wk, bs_model *M, bs_radau *R, const double *J, double t,
                      const double *y,
                      const double *f, double t_bound, double max_step, double *t_new_out,
                      double *y_new, double *f_new) {
    double min_step = 10.0 * fabs(nextafter(t, INFINITY) - t);
    double h_abs, h_abs_old = 0.0, err_old = 0.0, h = 0.0, t_new = t, error_norm = 0.0;
    double safety = 0.0, rate = NAN, factor, *scale = Wk->v2, *err = Wk->v3, *ze = Wk->v4;
    int have_old = 0, rejected = 0, n_iter = 0, converged = 0, i, j, recompute_jac;
    if (R->h_abs > max_step) {
        h_abs = max_step;
    } else if (R->h_abs < min_step) {
        h_abs = min_step;
    } else {
        h_abs = R->h_abs;
        have_old = R->have_old;
        h_abs_old = R->h_abs_old;
        err_old = R->error_norm_old;
    }
    for (;;) {
        if (h_abs < min_step) {
            Wk->why = BS_RD_TOO_SMALL;
            return 0;
        }
        h = h_abs;
        t_new = t + h;
        if (t_new - t_bound > 0.0) t_new = t_bound;
        h = t_new - t;
        h_abs = fabs(h);
        for (i = 0; i < 3; i++) {
            if (!R->have_sol) {
                for (j = 0; j < BS_NX; j++) R->Z[i][j] = 0.0;
            } else {
                bs_rd_poly(R, t + h * bs_rd_C[i], R->Z[i], 1);
                for (j = 0; j < BS_NX; j++) R->Z[i][j] -= y[j];
            }
        }
        for (i = 0; i < 3; i++)
            for (j = 0; j < BS_NX; j++) Wk->Z0[i][j] = R->Z[i][j];
        for (j = 0; j < BS_NX; j++) scale[j] = R->atol[j] + fabs(y[j]) * R->rtol;
        converged = 0;
        while (!converged) {
            if (!R->lu_ok && !bs_rd_factor(Wk, R, J, h)) return 0;
            for (i = 0; i < 3; i++)
                for (j = 0; j < BS_NX; j++) R->Z[i][j] = Wk->Z0[i][j];
            if (!bs_rd_newton(Wk, M, R, t, y, h, scale, &converged, &n_iter, &rate)) return 0;
            if (!converged) {
                if (R->current_jac) break;
                bs_rd_num_jac(Wk, M, R, t, y, f);
                R->current_jac = 1;
                R->lu_ok = 0;
            }
        }
        if (!converged) {
            h_abs *= 0.5;
            R->lu_ok = 0;
            continue;
        }
        for (j = 0; j < BS_NX; j++) {
            y_new[j] = y[j] + R->Z[2][j];
            ze[j] = (j < BS_RD_BLOCKED
                         ? fma(R->Z[0][j], bs_rd_E[0], R->Z[1][j] * bs_rd_E[1]) + R->Z[2][j] * bs_rd_E[2]
                         : bs_rd_dot3(R->Z[0][j], bs_rd_E[0], R->Z[1][j], bs_rd_E[1], R->Z[2][j], bs_rd_E[2]))
                    / h;
            err[j] = f[j] + ze[j];
        }
        if (!bs_rd_all_finite(err, BS_NX)) {
            Wk->why = BS_RD_NONFINITE;
            return 0;
        }
        bs_rd_lu_solve(R->lu_r, R->piv_r, err);
        for (j = 0; j < BS_NX; j++)
            scale[j] = R->atol[j] + bs_rd_npmax(fabs(y[j]), fabs(y_new[j])) * R->rtol;
        error_norm = bs_rd_norm(err, BS_NX1, 1, scale);
        safety = 0.9 * (2 * BS_RD_NEWTON_MAXITER + 1) / (double)(2 * BS_RD_NEWTON_MAXITER + n_iter);
        if (rejected && error_norm > 1.0) {
            double *yp = Wk->v1, *fe = Wk->v5;
            for (j = 0; j < BS_NX; j++) yp[j] = y[j] + err[j];
            bs_rd_fun(Wk, M, R, 1, t, yp, fe);
            for (j = 0; j < BS_NX; j++) err[j] = fe[j] + ze[j];
            if (!bs_rd_all_finite(err, BS_NX)) {
                Wk->why = BS_RD_NONFINITE;
                return 0;
            }
            bs_rd_lu_solve(R->lu_r, R->piv_r, err);
            error_norm = bs_rd_norm(err, BS_NX1, 1, scale);
        }
        if (error_norm > 1.0) {
            factor = bs_rd_predict(h_abs, h_abs_old, error_norm, err_old, have_old);
            h_abs *= bs_max(BS_RD_MIN_FACTOR, safety * factor);
            R->lu_ok = 0;
            rejected = 1;
        } else {
            break;
        }
    }
    recompute_jac = !R->jac_fixed && n_iter > 2 && rate > 1e-3;
    factor = bs_rd_predict(h_abs, h_abs_old, error_norm, err_old, have_old);
    factor = bs_min(BS_RD_MAX_FACTOR, safety * factor);
    if (!recompute_jac && factor < 1.2) factor = 1.0;
    else R->lu_ok = 0;
    bs_rd_fun(Wk, M, R, 1, t_new, y_new, f_new);
    if (recompute_jac) {
        bs_rd_num_jac(Wk, M, R, t_new, y_new, f_new);
        R->current_jac = 1;
    } else if (!R->jac_fixed) {
        R->current_jac = 0;
    }
    R->h_abs_old = R->h_abs;
    R->error_norm_old = error_norm;
    R->have_old = 1;
    R->h_abs = h_abs * factor;
    R->have_sol = 1;
    R->sol_t_old = t;
    R->sol_h = t_new - t;
    for (j = 0; j < BS_NX; j++) {
        R->sol_y_old[j] = y[j];
        for (i = 0; i < 3; i++)
            R->Q[j][i] = bs_rd_dot3(R->Z[0][j], bs_rd_P[0][i], R->Z[1][j], bs_rd_P[1][i],
                                    R->Z[2][j], bs_rd_P[2][i]);
    }
    *t_new_out = t_new;
    return 1;
}

/* rtol, atol and Newton's tolerance of a new solver from the run's (`_norm_over_controlled`,
 * then scipy's validate_tol and newton_tol). */
static void bs_rd_tolerances(bs_radau *R, double rtol, const double *atol) {
    int j, count = 0;
    double factor = 1.0;
    for (j = 0; j < BS_NX; j++)
        if (isfinite(atol[j])) count++;
    if (count != 0 && count != BS_NX) factor = sqrt((double)count / (double)BS_NX);
    R->rtol = rtol * factor;
    for (j = 0; j < BS_NX; j++) R->atol[j] = atol[j] * factor;
    if (R->rtol < 100 * BS_RD_EPS) R->rtol = 100 * BS_RD_EPS;
    R->newton_tol = bs_min(0.03, pow(R->rtol, 0.5));
    R->newton_tol = bs_max(10 * BS_RD_EPS / R->rtol, R->newton_tol);
}

/* scipy's select_initial_step for the error estimator's order 3. */
static double bs_rd_initial_step(bs_radau_work *Wk, bs_model *M, bs_radau *R, double t,
                                 const double *y, const double *f, double span,
                                 double max_step) {
    double *scale = Wk->v2, *y1 = Wk->v1, *f1 = Wk->v3, d0, d1, d2, h0, h1, r;
    int j;
    if (BS_NX == 0) return INFINITY;
    if (span == 0.0) return 0.0;
    for (j = 0; j < BS_NX; j++) scale[j] = R->atol[j] + fabs(y[j]) * R->rtol;
    d0 = bs_rd_norm(y, BS_NX1, 1, scale);
    d1 = bs_rd_norm(f, BS_NX1, 1, scale);
    h0 = (d0 < 1e-5 || d1 < 1e-5) ? 1e-6 : 0.01 * d0 / d1;
    if (span < h0) h0 = span;
    for (j = 0; j < BS_NX; j++) y1[j] = y[j] + h0 * 1.0 * f[j];
    bs_rd_fun(Wk, M, R, 1, t + h0 * 1.0, y1, f1);
    for (j = 0; j < BS_NX; j++) f1[j] = f1[j] - f[j];
    d2 = bs_rd_norm(f1, BS_NX1, 1, scale) / h0;
    if (d1 <= 1e-15 && d2 <= 1e-15) h1 = bs_max(1e-6, h0 * 1e-3);
    else h1 = pow(0.01 / bs_max(d1, d2), 1.0 / 4.0);
    r = 100 * h0;
    if (h1 < r) r = h1;
    if (span < r) r = span;
    if (max_step < r) r = max_step;
    return r;
}

/* A new solver at the segment's start (S->t, S->x, S->f), as the engine makes one per
 * segment: the first step the last segment's last one (`first_step`), else chosen. */
static void bs_radau_restart(bs_cs *S, bs_model *M, double span) {
    bs_radau *R = &S->R;
    double first = 0.0;
    bs_rd_tolerances(R, S->rtol, S->atol);
    R->nfev = 0;
    if (S->h_last > 0.0 && span > 0.0) first = span < S->h_last ? span : S->h_last;
    R->h_abs = first > 0.0 ? first
                           : bs_rd_initial_step(&S->RW, M, R, S->t, S->x, S->f, span, S->max_step);
    R->have_old = 0;
    R->have_sol = 0;
    R->lu_ok = 0;
    R->jac_fixed = 0;
    R->current_jac = 1;
    R->have_factor = 0;
    bs_rd_num_jac(&S->RW, M, R, S->t, S->x, S->f);
}

static void bs_rd_failed(bs_cs *S, bs_model *M) {
    bs_set_failed(M, S->RW.why ? S->RW.why : "the solver failed");
}

/* One accepted step of the running solver from S's committed point: the pending step. */
static int bs_radau_step(bs_cs *S, bs_model *M) {
    bs_radau *R = &S->R;
    double t_new;
    long long nfev0 = R->nfev;
    S->RW.probe_set = 0;
    S->RW.why = NULL;
    S->RW.have_solved = 0;
    if (!bs_rd_step(&S->RW, M, R, R->own_J, S->t, S->x, S->f, S->t_bound, S->max_step, &t_new, S->x_new,
                    S->K[6])) {
        bs_rd_failed(S, M);
        return 0;
    }
    S->step_nfev = R->nfev - nfev0;
    if (!bs_finite(S->x_new, BS_NX)) {
        bs_set_failed(M, BS_RD_NONFINITE);
        return 0;
    }
    S->t_new = t_new;
    S->h_step = t_new - S->t;
    S->h_last = S->h_step;
    return 1;
}

/* The state at t in the pending step by integrating to it from the step's start with a
 * fresh solver holding the running one's Jacobian (`AdaptiveStepper.solve_to`). */
static int bs_radau_solve_to(bs_cs *S, bs_model *M, double t, double *out) {
    bs_radau_work *Wk = &S->RW;
    bs_radau *T = &Wk->trial;
    double tt = S->t;
    int j;
    if (t == S->t_new) {
        for (j = 0; j < BS_NX; j++) out[j] = S->x_new[j];
        return 1;
    }
    if (Wk->have_solved && Wk->solved_t == t) {
        for (j = 0; j < BS_NX; j++) out[j] = Wk->solved_x[j];
        return 1;
    }
    T->rtol = S->R.rtol;
    T->newton_tol = S->R.newton_tol;
    for (j = 0; j < BS_NX; j++) T->atol[j] = S->R.atol[j];
    T->jac_fixed = 1;
    T->current_jac = 1;
    T->lu_ok = 0;
    T->have_sol = 0;
    T->have_old = 0;
    T->h_abs = t - S->t;
    for (j = 0; j < BS_NX; j++) Wk->ty[j] = S->x[j];
    Wk->probe_set = 0;
    bs_rd_fun(Wk, M, T, 1, tt, Wk->ty, Wk->tf);
    while (tt < t) {
        Wk->probe_set = 0;
        if (!bs_rd_step(Wk, M, T, S->R.own_J, tt, Wk->ty, Wk->tf, t, S->max_step, &tt, Wk->ty_new,
                        Wk->tf_new)) {
            bs_rd_failed(S, M);
            return 0;
        }
        for (j = 0; j < BS_NX; j++) {
            Wk->ty[j] = Wk->ty_new[j];
            Wk->tf[j] = Wk->tf_new[j];
        }
        if (!bs_finite(Wk->ty, BS_NX)) {
            bs_set_failed(M, BS_RD_NONFINITE);
            return 0;
        }
    }
    for (j = 0; j < BS_NX; j++) out[j] = Wk->solved_x[j] = Wk->ty[j];
    Wk->solved_t = t;
    Wk->have_solved = 1;
    return 1;
}

/* Zero crossing i at t on trial-integrated states (NaN after a failure, in M). */
static double bs_radau_g_at(bs_cs *S, bs_model *M, int i, double t) {
    if (M->failed) return NAN;
    if (!bs_radau_solve_to(S, M, t, S->xd)) return NAN;
    bs_zc(&M->c, t, S->xd, M->m, M->z, S->g);
    return S->g[i];
}

static int bs_rd_changed(bs_cs *S, bs_model *M, int i, double zi, double t) {
    return bs_sign(bs_radau_g_at(S, M, i, t)) != zi;
}

/* Crossing i re-located on trial-integrated states around the dense output's estimate
 * t_est (`PythonLoop._refine`): a bracket of a few ulps, else 1e-3 of the step, else the
 * step; the narrow one is skipped for a while after it failed. */
static double bs_radau_refine(bs_cs *S, bs_model *M, int i, double t_est) {
    bs_radau_work *Wk = &S->RW;
    double lo = S->t, hi = S->t_new, zi = M->z[i], widths[2], root;
    int nw = 0, k;
    Wk->narrow_skips--;
    if (Wk->narrow_skips <= 0) widths[nw++] = 64.0 * bs_ulp(t_est);
    widths[nw++] = (hi - lo) * 1e-3;
    Wk->trial_mode = 1;
    for (k = 0; k < nw; k++) {
        double a = t_est - widths[k] > lo ? t_est - widths[k] : lo;
        double b = t_est + widths[k] < hi ? t_est + widths[k] : hi;
        if (bs_rd_changed(S, M, i, zi, b) && !bs_rd_changed(S, M, i, zi, a)) {
            root = bs_locate(S, M, i, zi, a, b);
            Wk->trial_mode = 0;
            return root;
        }
        if (nw == 2 && widths[k] == widths[0]) Wk->narrow_skips = BS_RD_NARROW_RETRY;
    }
    root = bs_locate(S, M, i, zi, lo, hi);
    Wk->trial_mode = 0;
    return root;
}

/* The located crossing's time refined (a crossing that reads the state) and the state
 * there integrated to it. Returns 0 on failure. */
static int bs_radau_event_state(bs_cs *S, bs_model *M) {
    if (bs_zc_reads_states[S->hit]) S->t_hit = bs_radau_refine(S, M, S->hit, S->t_hit);
    if (M->failed) return 0;
    return bs_radau_solve_to(S, M, S->t_hit, S->x_ev);
}
