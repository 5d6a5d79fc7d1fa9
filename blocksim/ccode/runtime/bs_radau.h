/* blocksim's radau solver in C: the state of one Radau IIA (order 5) integration.
 *
 * Included by bs_cs.c when BS_RADAU is defined (the diagram's solver is radau): the
 * co-simulation stepper and the C backend then step with bs_radau.c instead of DOPRI5.
 * Matrices are dense and row-major, n x n with n the number of states: meant for the
 * small systems blocksim's diagrams have (up to a few hundred states; memory n*n*8 bytes
 * times 8, time n**3 per factorisation).
 */
#ifndef BS_RADAU_H
#define BS_RADAU_H

#define BS_NN1 (BS_NX1 * BS_NX1)

/* One scipy.integrate.Radau solver: its controller, Jacobian, factorisations and the
 * collocation polynomial of its last step (the dense output). */
typedef struct {
    double rtol, atol[BS_NX1], newton_tol;  /* tolerances as scipy's (after scaling) */
    double h_abs, h_abs_old, error_norm_old;  /* the next step; the last's (`have_old`) */
    int have_old;
    double own_J[BS_NN1];     /* the Jacobian (a trial solver's: unused) */
    int jac_fixed;            /* a trial solver: the running one's Jacobian, constant */
    int current_jac;          /* J was evaluated at the current step's start */
    double jac_factor[BS_NX1];  /* num_jac's step factors (`have_factor`) */
    int have_factor;
    int lu_ok;                /* the factorisations below belong to J and the step h */
    double lu_r[BS_NN1], lu_cr[BS_NN1], lu_ci[BS_NN1];
    int piv_r[BS_NX1], piv_c[BS_NX1];
    int have_sol;             /* the dense output of the last accepted step */
    double sol_t_old, sol_h, sol_y_old[BS_NX1], Q[BS_NX1][3];
    double Z[3][BS_NX1];
    long long nfev;           /* right-hand side evaluations, as scipy counts them */
} bs_radau;

/* What locating an event on radau needs besides the running solver: a trial solver that
 * integrates from the step's start to a trial time (`AdaptiveStepper.solve_to`), its
 * state, and the scratch arrays of a step. */
typedef struct {
    bs_radau trial;
    int trial_mode;           /* bs_g_at evaluates on trial-integrated states */
    int narrow_skips;         /* events until the narrow bracket is tried (`_refine`) */
    double solved_t, solved_x[BS_NX1];  /* the last trial integration (a cache) */
    int have_solved;
    double ty[BS_NX1], tf[BS_NX1], ty_new[BS_NX1], tf_new[BS_NX1];
    double F[3][BS_NX1], W[3][BS_NX1], dW[3][BS_NX1], Z0[3][BS_NX1];
    double v1[BS_NX1], v2[BS_NX1], v3[BS_NX1], v4[BS_NX1], v5[BS_NX1];
    double nj[7][BS_NX1];       /* num_jac's columns */
    double probe_t, probe_x[BS_NX1];  /* the first non-finite derivative of a failed step */
    int probe_set;
    const char *why;          /* the failure of the last step */
} bs_radau_work;

static void bs_radau_dense(const bs_radau *R, double t, double *out);

#endif
