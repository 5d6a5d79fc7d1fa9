/* Math 003, the part with x3 and x4 (blocksim test FMU): inputs x1, x2 (discrete);
 * x3 = 3 if x1 > 0.5 and x2 < 0.01 and x4 < 2.5, -3 if x1 < 0.001 and x2 > 0 and
 * x4 > -2.5, else 0 (a mode changed only at events); dx4/dt = 2 x3. Event indicators
 * x4 - 2.5 and x4 + 2.5. */
#include "model.h"
#define NV 8
#define NX 1
#define NZ 2
enum { X1, X2, X3, X4, DER_X4, LIMIT, Z_UP, Z_DOWN };
static const int STATES[NX] = {X4};
static const int DERIVS[NX] = {DER_X4};

static void model_start(double *v) {
    v[X1] = 0; v[X2] = 0; v[X3] = 0; v[X4] = 0; v[DER_X4] = 0; v[LIMIT] = 2.5;
}
static void model_initialize(double *v) { (void)v; }
static void model_derivatives(double t, double *v) {
    (void)t;
    v[DER_X4] = 2.0 * v[X3];
    v[Z_UP] = v[X4] - v[LIMIT];
    v[Z_DOWN] = v[X4] + v[LIMIT];
}
static void model_indicators(double t, const double *v, double *z) {
    (void)t; z[0] = v[X4] - v[LIMIT]; z[1] = v[X4] + v[LIMIT];
}
static void model_event(double t, double *v, Event *ev) {
    double x3 = 0.0;
    (void)t; (void)ev;
    if (v[X1] > 0.5 && v[X2] < 0.01 && v[X4] < v[LIMIT]) x3 = 3.0;
    else if (v[X1] < 0.001 && v[X2] > 0.0 && v[X4] > -v[LIMIT]) x3 = -3.0;
    v[X3] = x3;
}
static int model_step_event(double t, double *v) { (void)t; (void)v; return 0; }
#include "shell.c"
