/* A square-wave source (blocksim test FMU): y = 1 on [on1, off1) and from on2 on, else 0;
 * its switching instants are time events. count: how many switches so far (Integer). */
#include "model.h"
#define NV 5
#define NX 0
#define NZ 0
enum { Y, ON1, OFF1, ON2, COUNT };
static const int STATES[1] = {0};
static const int DERIVS[1] = {0};

static void model_start(double *v) { v[Y] = 0; v[ON1] = 1; v[OFF1] = 2; v[ON2] = 5; v[COUNT] = 0; }
static void model_initialize(double *v) { (void)v; }
static void model_derivatives(double t, double *v) { (void)t; (void)v; }
static void model_indicators(double t, const double *v, double *z) { (void)t; (void)v; (void)z; }
static void model_event(double t, double *v, Event *ev) {
    double y = ((t >= v[ON1] && t < v[OFF1]) || t >= v[ON2]) ? 1.0 : 0.0;
    double next = INFINITY;
    if (y != v[Y]) { v[Y] = y; v[COUNT] += 1; }
    if (v[ON1] > t && v[ON1] < next) next = v[ON1];
    if (v[OFF1] > t && v[OFF1] < next) next = v[OFF1];
    if (v[ON2] > t && v[ON2] < next) next = v[ON2];
    ev->next_defined = next < INFINITY;
    ev->next_time = next;
}
static int model_step_event(double t, double *v) { (void)t; (void)v; return 0; }
#include "shell.c"
