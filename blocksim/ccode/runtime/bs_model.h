/* blocksim generated C: what every model's functions need (no dependency beyond libm).
 *
 * The model's functions read and write the engine's flat arrays: x (continuous states),
 * m (discrete and mode slots), z (latched zero-crossing signs), and take a context with
 * the parameter slots P, the work array W (constants a block writes), the event log of
 * the current call and the first failure (a `raise` of the Python code).
 * Formula functions mirror blocksim's Python ones for finite arguments; where Python
 * raises (log of a negative number), C returns NaN, as the numba backend does.
 */
#ifndef BS_MODEL_H
#define BS_MODEL_H

#include <math.h>
#include <string.h>

#define BS_EV_MAX 256

typedef struct {
    const double *P;  /* parameter slots */
    double *W;        /* constants a block writes (warm starts) */
    int n_ev;         /* event entries logged by the current event function */
    int ev_block[BS_EV_MAX];
    int ev_kind[BS_EV_MAX];
    int failed;       /* a raise: the block (>= 0, or -1 unknown) in fail_block */
    int fail_block;
    const char *fail_message;
} bs_ctx;

static inline void bs_log(bs_ctx *c, long block, int kind) {
    if (c->n_ev < BS_EV_MAX) {
        c->ev_block[c->n_ev] = (int)block;
        c->ev_kind[c->n_ev] = kind;
    }
    c->n_ev++;
}

static inline void bs_fail(bs_ctx *c, int block, const char *message) {
    if (!c->failed) {
        c->failed = 1;
        c->fail_block = block;
        c->fail_message = message;
    }
}

/* Python's min(a, b) and max(a, b): the first argument unless the second is strictly
 * smaller (larger), which is also what they do with a NaN. */
static inline double bs_min(double a, double b) { return b < a ? b : a; }
static inline double bs_max(double a, double b) { return b > a ? b : a; }

static inline double bs_sign(double v) {
    if (v > 0.0) return 1.0;
    if (v < 0.0) return -1.0;
    return v != v ? v : 0.0;
}

static inline double bs_floor(double v) { return isfinite(v) ? floor(v) : v; }
static inline double bs_ceil(double v) { return isfinite(v) ? ceil(v) : v; }

static inline double bs_round(double v) {
    double t;
    if (!isfinite(v)) return v;
    t = trunc(v);
    return fabs(v - t) >= 0.5 ? t + copysign(1.0, v) : t;
}

/* Python's float %: the sign of the divisor. */
static inline double bs_pymod(double a, double b) {
    double r;
    if (b == 0.0) return NAN;
    r = fmod(a, b);
    if (r != 0.0 && ((r < 0.0) != (b < 0.0))) r += b;
    else if (r == 0.0) r = copysign(0.0, b);
    return r;
}

static inline double bs_mod(double a, double b) { return bs_pymod(a, b); }
static inline double bs_log_(double v) { return v > 0.0 ? log(v) : (v == 0.0 ? NAN : NAN); }
static inline double bs_log10(double v) { return v > 0.0 ? log10(v) : NAN; }
static inline double bs_log2(double v) { return v > 0.0 ? log2(v) : NAN; }
static inline double bs_sqrt(double v) { return v >= 0.0 ? sqrt(v) : NAN; }
static inline double bs_asin(double v) { return (v >= -1.0 && v <= 1.0) ? asin(v) : NAN; }
static inline double bs_acos(double v) { return (v >= -1.0 && v <= 1.0) ? acos(v) : NAN; }
static inline double bs_pow(double a, double b) { return pow(a, b); }

/* numpy.searchsorted over a sorted table of n values. */
static inline long bs_searchsorted(const double *table, long n, double v, int right) {
    long lo = 0, hi = n;
    while (lo < hi) {
        long mid = lo + (hi - lo) / 2;
        if (right ? !(v < table[mid]) : (table[mid] < v)) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* numpy.linalg.solve(A, b) for an n x n A (row-major): Gaussian elimination with partial
 * pivoting (LAPACK's getrf/getrs, as numpy); a singular matrix gives NaN (where numpy
 * raises, which the generated Python turns into NaN too). A and b are overwritten. */
static inline void bs_solve(double *A, double *b, double *x, int n) {
    int i, j, k;
    for (k = 0; k < n; k++) {
        int p = k;
        double big = fabs(A[k * n + k]);
        for (i = k + 1; i < n; i++)
            if (fabs(A[i * n + k]) > big) { big = fabs(A[i * n + k]); p = i; }
        if (!(big > 0.0)) {
            for (i = 0; i < n; i++) x[i] = NAN;
            return;
        }
        if (p != k) {
            for (j = 0; j < n; j++) { double t = A[k * n + j]; A[k * n + j] = A[p * n + j]; A[p * n + j] = t; }
            { double t = b[k]; b[k] = b[p]; b[p] = t; }
        }
        for (i = k + 1; i < n; i++) {
            double f = A[i * n + k] / A[k * n + k];
            A[i * n + k] = f;
            for (j = k + 1; j < n; j++) A[i * n + j] -= f * A[k * n + j];
            b[i] -= f * b[k];
        }
    }
    for (i = n - 1; i >= 0; i--) {
        double s = b[i];
        for (j = i + 1; j < n; j++) s -= A[i * n + j] * x[j];
        x[i] = s / A[i * n + i];
    }
}

#endif
