/* A bouncing ball (blocksim test FMU): h'' = -g; at impact (h <= 0, v < 0) v := -e v,
 * and the ball rests on the floor once it would leave it slower than V_MIN.
 * A step event: the first completed integrator step at or after kick_time sets kicked.
 * The FMU asks to terminate at its max_bounces-th impact. */
#include "model.h"
#define NV 11
#define NX 2
#define NZ 1
enum { H, V, DER_H, DER_V, G, E, BOUNCES, KICKED, H0, MAX_BOUNCES, KICK_TIME };
static const int STATES[NX] = {H, V};
static const int DERIVS[NX] = {DER_H, DER_V};
#define V_MIN 0.1
static int resting = 0;

static void model_start(double *v) {
    v[H] = 1.0; v[V] = 0.0; v[G] = 9.81; v[E] = 0.7; v[BOUNCES] = 0; v[KICKED] = 0;
    v[H0] = 1.0; v[MAX_BOUNCES] = 1000; v[KICK_TIME] = -1.0;
}
static void model_initialize(double *v) { v[H] = v[H0]; v[V] = 0.0; resting = 0; }
static void model_derivatives(double t, double *v) {
    (void)t; v[DER_H] = v[V]; v[DER_V] = resting ? 0.0 : -v[G];
}
static void model_indicators(double t, const double *v, double *z) { (void)t; z[0] = v[H]; }
static void model_event(double t, double *v, Event *ev) {
    if (v[H] <= 0.0 && v[V] < 0.0) {
        v[H] = 0.0;
        v[V] = -v[E] * v[V];
        if (v[V] < V_MIN) { v[V] = 0.0; resting = 1; }
        v[BOUNCES] += 1;
        ev->states_changed = 1;
        if (v[BOUNCES] >= v[MAX_BOUNCES]) ev->terminate = 1;
    }
    if (v[KICK_TIME] >= 0.0 && t >= v[KICK_TIME] && v[KICKED] == 0.0) v[KICKED] = 1.0;
}
static int model_step_event(double t, double *v) {
    return v[KICK_TIME] >= 0.0 && t >= v[KICK_TIME] && v[KICKED] == 0.0;
}
#include "shell.c"
