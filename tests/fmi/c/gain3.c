/* An FMI 3.0 array test FMU (blocksim test FMU): y = k u for an input vector u of 3
 * elements and an output vector y of 3, plus a state vector x' = -x + u (x(0) = 0). Value
 * references: 0 u[3], 1 y[3], 2 k, 3 x[3], 4 der(x)[3]; v[] holds the elements. */
#include "model.h"
#define NV 5
#define NX 3
#define NZ 0
#define NE 13
static const int OFFSETS[NV] = {0, 3, 6, 7, 10};
static const int SIZES[NV] = {3, 3, 1, 3, 3};
#define VAR_SIZE(vr) SIZES[vr]
#define VAR_OFFSET(vr) OFFSETS[vr]
static const int STATES[NX] = {7, 8, 9};
static const int DERIVS[NX] = {10, 11, 12};
/* the shell indexes v[] by element: large enough for every element */
#undef NV
#define NV NE
#define N_VARS 5

static void model_start(double *v) {
    int i;
    for (i = 0; i < NE; i++) v[i] = 0.0;
    v[0] = 1; v[1] = 2; v[2] = 3; v[6] = 2.0;
}
static void model_initialize(double *v) { (void)v; }
static void model_derivatives(double t, double *v) {
    int i;
    (void)t;
    for (i = 0; i < 3; i++) { v[3 + i] = v[6] * v[i]; v[10 + i] = -v[7 + i] + v[i]; }
}
static void model_indicators(double t, const double *v, double *z) { (void)t; (void)v; (void)z; }
static void model_event(double t, double *v, Event *ev) { (void)t; (void)v; (void)ev; }
static int model_step_event(double t, double *v) { (void)t; (void)v; return 0; }
#include "shell.c"
