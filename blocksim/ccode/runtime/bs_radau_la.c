/* The linear algebra of blocksim's radau in C (`bs_radau.c`, which includes this file):
 * dense LU factorisations and solves, real and complex, and the short dot products of the
 * method, for n states (BS_NX), row-major. No dependency beyond libm.
 */
/* In the order of operations of the BLAS and LAPACK that numpy and scipy ship (OpenBLAS,
 * here with its SkylakeX kernels): dot products as chains of fused multiply-adds; the real
 * LU left-looking (Crout), each entry less a fused dot product of what is left of it; the
 * complex LU column by column as OpenBLAS's zgetf2 (its matrix-vector kernel fused, the
 * reciprocal of the pivot and the scaling plain), the solves as its triangular kernels.
 * Checked against scipy's lu_factor / lu_solve bit for bit: real n = 2, 3, 5, complex up to
 * n = 4. Elsewhere the results differ by rounding, as any two orders of summation do.
 * fma() is C99's, exact on every machine. */
static double bs_rd_dot3(double a0, double b0, double a1, double b1, double a2, double b2) {
    return fma(a2, b2, fma(a1, b1, a0 * b0));
}

/* LU with partial pivoting of a real n x n matrix in place (dgetrf: the first largest
 * |a| pivots; a zero pivot column is left as it is, and solving gives inf or NaN). */
static void bs_rd_lu(double *A, int *piv) {
    int j, i, k, c, n = BS_NX;
    for (j = 0; j < n; j++) {
        int p = j;
        double big;
        for (i = 0; i < n; i++) {
            int kmax = i < j ? i : j;
            double d = 0.0;
            for (k = 0; k < kmax; k++) d = fma(A[i * n + k], A[k * n + j], d);
            A[i * n + j] -= d;
        }
        big = fabs(A[j * n + j]);
        for (i = j + 1; i < n; i++)
            if (fabs(A[i * n + j]) > big) { big = fabs(A[i * n + j]); p = i; }
        piv[j] = p;
        if (p != j)
            for (c = 0; c < n; c++) { double s = A[j * n + c]; A[j * n + c] = A[p * n + c]; A[p * n + c] = s; }
        if (A[j * n + j] != 0.0) {
            double inv = 1.0 / A[j * n + j];
            for (i = j + 1; i < n; i++) A[i * n + j] *= inv;
        }
    }
}

static void bs_rd_lu_solve(const double *A, const int *piv, double *b) {
    int k, i, n = BS_NX;
    for (k = 0; k < n; k++)
        if (piv[k] != k) { double s = b[k]; b[k] = b[piv[k]]; b[piv[k]] = s; }
    for (k = 0; k < n; k++)
        for (i = k + 1; i < n; i++) b[i] = fma(-b[k], A[i * n + k], b[i]);
    for (k = n - 1; k >= 0; k--) {
        b[k] = b[k] / A[k * n + k];
        for (i = 0; i < k; i++) b[i] = fma(-b[k], A[i * n + k], b[i]);
    }
}

/* 1 / (a + bi) as OpenBLAS's complex LU and triangular solves take it. */
static void bs_rd_cinv(double a, double b, double *re, double *im) {
    double ratio, den;
    if (fabs(a) >= fabs(b)) {
        ratio = b / a;
        den = 1.0 / (a * (1.0 + ratio * ratio));
        *re = den;
        *im = -ratio * den;
    } else {
        ratio = a / b;
        den = 1.0 / (b * (1.0 + ratio * ratio));
        *re = ratio * den;
        *im = -den;
    }
}

/* The complex LU (zgetrf: column by column, pivot on |re| + |im|), real and imaginary
 * parts apart. */
static void bs_rd_clu(double *Ar, double *Ai, int *piv) {
    int j, i, k, c, n = BS_NX;
    for (j = 0; j < n; j++) {
        int p = j;
        double big, t1, t2;
        for (i = 0; i < j; i++) {  /* earlier row interchanges, in this column */
            int q = piv[i];
            if (q != i) {
                double s = Ar[i * n + j]; Ar[i * n + j] = Ar[q * n + j]; Ar[q * n + j] = s;
                s = Ai[i * n + j]; Ai[i * n + j] = Ai[q * n + j]; Ai[q * n + j] = s;
            }
        }
        for (i = 0; i < j; i++) {  /* the unit lower triangle's forward substitution */
            double ar = -Ar[i * n + j], ai = -Ai[i * n + j];
            for (k = i + 1; k < j; k++) {
                double xr = Ar[k * n + i], xi = Ai[k * n + i];
                Ar[k * n + j] = Ar[k * n + j] + fma(ar, xr, -(ai * xi));
                Ai[k * n + j] = Ai[k * n + j] + fma(ar, xi, ai * xr);
            }
        }
        for (i = j; i < n && j > 0; i++) {  /* less the product of what is left of it */
            double tr = 0.0, ti = 0.0;
            for (k = 0; k < j; k++) {
                double a0 = Ar[i * n + k], a1 = Ai[i * n + k], x0 = Ar[k * n + j], x1 = Ai[k * n + j];
                tr = tr + fma(a0, x0, -(a1 * x1));
                ti = ti + fma(a0, x1, a1 * x0);
            }
            Ar[i * n + j] -= tr;
            Ai[i * n + j] -= ti;
        }
        big = fabs(Ar[j * n + j]) + fabs(Ai[j * n + j]);
        for (i = j + 1; i < n; i++) {
            double a = fabs(Ar[i * n + j]) + fabs(Ai[i * n + j]);
            if (a > big) { big = a; p = i; }
        }
        piv[j] = p;
        t1 = Ar[p * n + j];
        t2 = Ai[p * n + j];
        if (t1 == 0.0 && t2 == 0.0) continue;
        if (p != j)
            for (c = 0; c <= j; c++) {
                double s = Ar[j * n + c]; Ar[j * n + c] = Ar[p * n + c]; Ar[p * n + c] = s;
                s = Ai[j * n + c]; Ai[j * n + c] = Ai[p * n + c]; Ai[p * n + c] = s;
            }
        {
            double cr, ci;
            bs_rd_cinv(t1, t2, &cr, &ci);
            for (i = j + 1; i < n; i++) {
                double a = Ar[i * n + j], b = Ai[i * n + j];
                Ar[i * n + j] = a * cr - b * ci;
                Ai[i * n + j] = a * ci + b * cr;
            }
        }
    }
    /* (the interchanges of later columns in earlier ones: none are needed, the rows of
     * earlier columns were swapped when each pivot was chosen, columns 0..j) */
}

static void bs_rd_clu_solve(const double *Ar, const double *Ai, const int *piv, double *br,
                            double *bi) {
    int k, i, n = BS_NX;
    for (k = 0; k < n; k++)
        if (piv[k] != k) {
            double s = br[k]; br[k] = br[piv[k]]; br[piv[k]] = s;
            s = bi[k]; bi[k] = bi[piv[k]]; bi[piv[k]] = s;
        }
    for (k = 0; k < n; k++) {
        double c1 = br[k], c2 = bi[k];
        for (i = k + 1; i < n; i++) {
            double ar = Ar[i * n + k], ai = Ai[i * n + k];
            br[i] -= fma(c1, ar, -(c2 * ai));
            bi[i] -= fma(c1, ai, c2 * ar);
        }
    }
    for (k = n - 1; k >= 0; k--) {
        double cr, ci, c1, c2;
        bs_rd_cinv(Ar[k * n + k], Ai[k * n + k], &cr, &ci);
        c1 = cr * br[k] - ci * bi[k];
        c2 = cr * bi[k] + ci * br[k];
        br[k] = c1;
        bi[k] = c2;
        for (i = 0; i < k; i++) {
            double ar = Ar[i * n + k], ai = Ai[i * n + k];
            br[i] -= fma(c1, ar, -(c2 * ai));
            bi[i] -= fma(c1, ai, c2 * ar);
        }
    }
}

