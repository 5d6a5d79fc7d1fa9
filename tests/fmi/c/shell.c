/* A minimal FMI 2.0 / 3.0 implementation (model exchange and co-simulation) around one
 * small model, for blocksim's tests. Compiled with -DFMI_VERSION=2 or 3 against fmpy's FMI
 * headers; the model file defines the variables and equations, then includes this file.
 *
 * The model provides (all variables are doubles in v[], indexed by value reference):
 *   NV, NX, NZ, STATES[], DERIVS[], TYPES (one char per variable: R real, I integer, B boolean)
 *   void model_start(double *v)                          start values
 *   void model_initialize(double *v)                     at the end of initialization
 *   void model_derivatives(double t, double *v)          sets v[DERIVS[i]] (and outputs)
 *   void model_indicators(double t, const double *v, double *z)
 *   void model_event(double t, double *v, Event *ev)      one event iteration step
 *   int  model_step_event(double t, double *v)            completedIntegratorStep: 1 = event
 * Co-simulation integrates the model with fixed RK4 substeps of at most CS_SUBSTEP and
 * locates event indicator sign changes by bisection.
 *
 * Test variants (compile-time): TOUCH_FILE "path" writes that file in instantiate;
 * FAIL_INSTANTIATE makes instantiate return NULL; CRASH_INSTANTIATE makes it crash; FAIL_AT_TIME t makes the derivatives
 * (and doStep) return Error from time t on, with a log message.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef CS_SUBSTEP
#define CS_SUBSTEP 1e-3
#endif

#include "model.h"

typedef struct {
    double v[NV];
    double time;
    int terminated;
    void *env;
    void *logger;
    char name[256];
} Instance;

static void model_start(double *v);
static void model_initialize(double *v);
static void model_derivatives(double t, double *v);
static void model_indicators(double t, const double *v, double *z);
static void model_event(double t, double *v, Event *ev);
static int model_step_event(double t, double *v);

static void log_error(Instance *c, const char *message);

static int settle(Instance *c, Event *out) {
    Event ev;
    int k;
    memset(out, 0, sizeof(*out));
    out->next_time = INFINITY;
    for (k = 0; k < 100; k++) {
        memset(&ev, 0, sizeof(ev));
        model_event(c->time, c->v, &ev);
        out->states_changed |= ev.states_changed;
        out->terminate |= ev.terminate;
        out->next_defined = ev.next_defined;
        out->next_time = ev.next_time;
        if (!ev.again) return 0;
    }
    return 1;
}

static void rk4(Instance *c, double h) {
    double x0[NX > 0 ? NX : 1], k[4][NX > 0 ? NX : 1];
    double t0 = c->time;
    int i, s;
    static const double a[4] = {0.0, 0.5, 0.5, 1.0};
    for (i = 0; i < NX; i++) x0[i] = c->v[STATES[i]];
    for (s = 0; s < 4; s++) {
        for (i = 0; i < NX; i++)
            c->v[STATES[i]] = x0[i] + (s ? a[s] * h * k[s - 1][i] : 0.0);
        model_derivatives(t0 + a[s] * h, c->v);
        for (i = 0; i < NX; i++) k[s][i] = c->v[DERIVS[i]];
    }
    for (i = 0; i < NX; i++)
        c->v[STATES[i]] = x0[i] + h / 6.0 * (k[0][i] + 2 * k[1][i] + 2 * k[2][i] + k[3][i]);
    c->time = t0 + h;
    model_derivatives(c->time, c->v);
}

static int sign_changed(const double *a, const double *b) {
    int i;
    for (i = 0; i < NZ; i++)
        if ((a[i] > 0) != (b[i] > 0)) return 1;
    return 0;
}

/* Co-simulation: integrate from c->time to t_end with events; 1 if terminated. A time
 * event within roundoff of t_end is taken at t_end's step. */
static int cs_advance(Instance *c, double t_end, double *next_time) {
    double z0[NZ > 0 ? NZ : 1], z1[NZ > 0 ? NZ : 1];
    double saved[NV];
    Event ev;
    double snap = 1e-12 * (1.0 + fabs(t_end));
    /* inputs set at the communication point: their event first */
    if (settle(c, &ev) || ev.terminate) return 1;
    *next_time = ev.next_defined ? ev.next_time : INFINITY;
    while (c->time < t_end - snap) {
        double t_start = c->time;
        double target = t_start + CS_SUBSTEP;
        if (target >= t_end - snap) target = t_end;
        if (*next_time > t_start && *next_time <= target + snap) target = *next_time;
        model_indicators(c->time, c->v, z0);
        memcpy(saved, c->v, sizeof(saved));
        rk4(c, target - t_start);
        c->time = target;
        model_indicators(c->time, c->v, z1);
        if (NZ > 0 && sign_changed(z0, z1)) {  /* bisection on the step length */
            double lo = 0.0, hi = target - t_start;
            int it;
            for (it = 0; it < 200 && hi - lo > 1e-15 * (1.0 + t_start); it++) {
                double mid = 0.5 * (lo + hi);
                memcpy(c->v, saved, sizeof(saved));
                c->time = t_start;
                rk4(c, mid);
                model_indicators(c->time, c->v, z1);
                if (sign_changed(z0, z1)) hi = mid; else lo = mid;
            }
            memcpy(c->v, saved, sizeof(saved));
            c->time = t_start;
            rk4(c, hi);
        }
        if (settle(c, &ev)) return 1;
        if (ev.terminate) return 1;
        *next_time = ev.next_defined ? ev.next_time : INFINITY;
    }
    c->time = t_end;
    return 0;
}

#if FMI_VERSION == 2
#include "fmi2Functions.h"

static void log_error(Instance *c, const char *message) {
    fmi2CallbackFunctions *f = (fmi2CallbackFunctions *)c->logger;
    if (f && f->logger) f->logger(f->componentEnvironment, c->name, fmi2Error, "logStatusError", message);
}

static double cs_next = INFINITY;

const char *fmi2GetTypesPlatform(void) { return fmi2TypesPlatform; }
const char *fmi2GetVersion(void) { return fmi2Version; }
fmi2Status fmi2SetDebugLogging(fmi2Component c, fmi2Boolean on, size_t n, const fmi2String cat[]) {
    (void)c; (void)on; (void)n; (void)cat; return fmi2OK;
}

fmi2Component fmi2Instantiate(fmi2String name, fmi2Type type, fmi2String guid,
                              fmi2String resources, const fmi2CallbackFunctions *functions,
                              fmi2Boolean visible, fmi2Boolean loggingOn) {
    Instance *c;
    (void)type; (void)guid; (void)resources; (void)visible; (void)loggingOn;
#ifdef TOUCH_FILE
    { FILE *f = fopen(TOUCH_FILE, "w"); if (f) { fputs("instantiated\n", f); fclose(f); } }
#endif
#ifdef CRASH_INSTANTIATE
    *(volatile int *)0 = 1;  /* a segmentation fault, on purpose */
#endif
#ifdef FAIL_INSTANTIATE
    if (functions && functions->logger)
        functions->logger(functions->componentEnvironment, name, fmi2Error, "logStatusError",
                          "this test FMU always fails to instantiate");
    return NULL;
#endif
    c = (Instance *)calloc(1, sizeof(Instance));
    if (!c) return NULL;
    strncpy(c->name, name ? name : "fmu", sizeof(c->name) - 1);
    c->logger = (void *)functions;
    model_start(c->v);
    return c;
}

void fmi2FreeInstance(fmi2Component c) { free(c); }

fmi2Status fmi2SetupExperiment(fmi2Component c, fmi2Boolean tolDef, fmi2Real tol, fmi2Real start,
                               fmi2Boolean stopDef, fmi2Real stop) {
    (void)tolDef; (void)tol; (void)stopDef; (void)stop;
    ((Instance *)c)->time = start;
    return fmi2OK;
}
fmi2Status fmi2EnterInitializationMode(fmi2Component c) { (void)c; return fmi2OK; }
fmi2Status fmi2ExitInitializationMode(fmi2Component c) {
    Instance *inst = (Instance *)c;
    Event ev;
    model_initialize(inst->v);
    model_derivatives(inst->time, inst->v);
    settle(inst, &ev);  /* co-simulation starts settled; model exchange settles again */
    cs_next = ev.next_defined ? ev.next_time : INFINITY;
    return fmi2OK;
}
fmi2Status fmi2Terminate(fmi2Component c) { ((Instance *)c)->terminated = 1; return fmi2OK; }

fmi2Status fmi2GetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Real value[]) {
    Instance *inst = (Instance *)c;
    size_t i;
    model_derivatives(inst->time, inst->v);
    for (i = 0; i < n; i++) {
        if (vr[i] >= NV) return fmi2Error;
        value[i] = inst->v[vr[i]];
    }
    return fmi2OK;
}
fmi2Status fmi2GetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Integer value[]) {
    Instance *inst = (Instance *)c;
    size_t i;
    for (i = 0; i < n; i++) {
        if (vr[i] >= NV) return fmi2Error;
        value[i] = (fmi2Integer)inst->v[vr[i]];
    }
    return fmi2OK;
}
fmi2Status fmi2GetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Boolean value[]) {
    Instance *inst = (Instance *)c;
    size_t i;
    for (i = 0; i < n; i++) {
        if (vr[i] >= NV) return fmi2Error;
        value[i] = inst->v[vr[i]] != 0.0;
    }
    return fmi2OK;
}
fmi2Status fmi2SetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Real value[]) {
    Instance *inst = (Instance *)c;
    size_t i;
    for (i = 0; i < n; i++) {
        if (vr[i] >= NV) return fmi2Error;
        inst->v[vr[i]] = value[i];
    }
    return fmi2OK;
}
fmi2Status fmi2SetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Integer value[]) {
    Instance *inst = (Instance *)c;
    size_t i;
    for (i = 0; i < n; i++) {
        if (vr[i] >= NV) return fmi2Error;
        inst->v[vr[i]] = value[i];
    }
    return fmi2OK;
}
fmi2Status fmi2SetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Boolean value[]) {
    Instance *inst = (Instance *)c;
    size_t i;
    for (i = 0; i < n; i++) {
        if (vr[i] >= NV) return fmi2Error;
        inst->v[vr[i]] = value[i] ? 1.0 : 0.0;
    }
    return fmi2OK;
}

fmi2Status fmi2EnterEventMode(fmi2Component c) { (void)c; return fmi2OK; }
fmi2Status fmi2NewDiscreteStates(fmi2Component c, fmi2EventInfo *info) {
    Instance *inst = (Instance *)c;
    Event ev;
    memset(&ev, 0, sizeof(ev));
    model_event(inst->time, inst->v, &ev);
    info->newDiscreteStatesNeeded = ev.again;
    info->terminateSimulation = ev.terminate;
    info->nominalsOfContinuousStatesChanged = fmi2False;
    info->valuesOfContinuousStatesChanged = ev.states_changed;
    info->nextEventTimeDefined = ev.next_defined;
    info->nextEventTime = ev.next_time;
    return fmi2OK;
}
fmi2Status fmi2EnterContinuousTimeMode(fmi2Component c) { (void)c; return fmi2OK; }
fmi2Status fmi2CompletedIntegratorStep(fmi2Component c, fmi2Boolean noPrior, fmi2Boolean *enter,
                                       fmi2Boolean *terminate) {
    Instance *inst = (Instance *)c;
    (void)noPrior;
    *enter = model_step_event(inst->time, inst->v);
    *terminate = fmi2False;
    return fmi2OK;
}
fmi2Status fmi2SetTime(fmi2Component c, fmi2Real t) { ((Instance *)c)->time = t; return fmi2OK; }
fmi2Status fmi2SetContinuousStates(fmi2Component c, const fmi2Real x[], size_t nx) {
    Instance *inst = (Instance *)c;
    size_t i;
    if (nx != NX) return fmi2Error;
    for (i = 0; i < nx; i++) inst->v[STATES[i]] = x[i];
    return fmi2OK;
}
fmi2Status fmi2GetDerivatives(fmi2Component c, fmi2Real dx[], size_t nx) {
    Instance *inst = (Instance *)c;
    size_t i;
#ifdef FAIL_AT_TIME
    if (inst->time >= FAIL_AT_TIME) {
        log_error(inst, "derivatives failed on purpose (a test FMU)");
        return fmi2Error;
    }
#endif
    if (nx != NX) return fmi2Error;
    model_derivatives(inst->time, inst->v);
    for (i = 0; i < nx; i++) dx[i] = inst->v[DERIVS[i]];
    return fmi2OK;
}
fmi2Status fmi2GetEventIndicators(fmi2Component c, fmi2Real z[], size_t nz) {
    Instance *inst = (Instance *)c;
    if (nz != NZ) return fmi2Error;
    model_indicators(inst->time, inst->v, z);
    return fmi2OK;
}
fmi2Status fmi2GetContinuousStates(fmi2Component c, fmi2Real x[], size_t nx) {
    Instance *inst = (Instance *)c;
    size_t i;
    for (i = 0; i < nx && i < NX; i++) x[i] = inst->v[STATES[i]];
    return fmi2OK;
}
fmi2Status fmi2GetNominalsOfContinuousStates(fmi2Component c, fmi2Real x[], size_t nx) {
    size_t i;
    (void)c;
    for (i = 0; i < nx; i++) x[i] = 1.0;
    return fmi2OK;
}
fmi2Status fmi2DoStep(fmi2Component c, fmi2Real t, fmi2Real h, fmi2Boolean noPrior) {
    Instance *inst = (Instance *)c;
    (void)noPrior;
#ifdef FAIL_AT_TIME
    if (t >= FAIL_AT_TIME) { log_error(inst, "doStep failed on purpose (a test FMU)"); return fmi2Error; }
#endif
    if (fabs(t - inst->time) > 1e-9 * (1.0 + fabs(t))) {
        log_error(inst, "doStep from another time than the last communication point");
        return fmi2Error;
    }
    inst->time = t;
    if (cs_advance(inst, t + h, &cs_next)) { inst->terminated = 1; return fmi2Discard; }
    return fmi2OK;
}
fmi2Status fmi2GetBooleanStatus(fmi2Component c, const fmi2StatusKind s, fmi2Boolean *value) {
    *value = (s == fmi2Terminated) && ((Instance *)c)->terminated;
    return fmi2OK;
}

#else /* FMI 3.0 */
#include "fmi3Functions.h"

static void log_error(Instance *c, const char *message) {
    fmi3LogMessageCallback f = (fmi3LogMessageCallback)c->logger;
    if (f) f(c->env, fmi3Error, "logStatusError", message);
}

static double cs_next = INFINITY;

const char *fmi3GetVersion(void) { return fmi3Version; }
fmi3Status fmi3SetDebugLogging(fmi3Instance c, fmi3Boolean on, size_t n, const fmi3String cat[]) {
    (void)c; (void)on; (void)n; (void)cat; return fmi3OK;
}

static Instance *make(fmi3String name, fmi3InstanceEnvironment env, fmi3LogMessageCallback log) {
    Instance *c;
#ifdef TOUCH_FILE
    { FILE *f = fopen(TOUCH_FILE, "w"); if (f) { fputs("instantiated\n", f); fclose(f); } }
#endif
#ifdef CRASH_INSTANTIATE
    *(volatile int *)0 = 1;  /* a segmentation fault, on purpose */
#endif
#ifdef FAIL_INSTANTIATE
    if (log) log(env, fmi3Error, "logStatusError", "this test FMU always fails to instantiate");
    return NULL;
#endif
    c = (Instance *)calloc(1, sizeof(Instance));
    if (!c) return NULL;
    strncpy(c->name, name ? name : "fmu", sizeof(c->name) - 1);
    c->env = env;
    c->logger = (void *)log;
    model_start(c->v);
    return c;
}

fmi3Instance fmi3InstantiateModelExchange(fmi3String name, fmi3String token, fmi3String resources,
                                          fmi3Boolean visible, fmi3Boolean loggingOn,
                                          fmi3InstanceEnvironment env, fmi3LogMessageCallback log) {
    (void)token; (void)resources; (void)visible; (void)loggingOn;
    return make(name, env, log);
}
fmi3Instance fmi3InstantiateCoSimulation(fmi3String name, fmi3String token, fmi3String resources,
                                         fmi3Boolean visible, fmi3Boolean loggingOn,
                                         fmi3Boolean eventModeUsed, fmi3Boolean earlyReturnAllowed,
                                         const fmi3ValueReference required[], size_t nRequired,
                                         fmi3InstanceEnvironment env, fmi3LogMessageCallback log,
                                         fmi3IntermediateUpdateCallback update) {
    (void)token; (void)resources; (void)visible; (void)loggingOn; (void)eventModeUsed;
    (void)earlyReturnAllowed; (void)required; (void)nRequired; (void)update;
    return make(name, env, log);
}
void fmi3FreeInstance(fmi3Instance c) { free(c); }
fmi3Status fmi3EnterInitializationMode(fmi3Instance c, fmi3Boolean tolDef, fmi3Float64 tol,
                                       fmi3Float64 start, fmi3Boolean stopDef, fmi3Float64 stop) {
    (void)tolDef; (void)tol; (void)stopDef; (void)stop;
    ((Instance *)c)->time = start;
    return fmi3OK;
}
fmi3Status fmi3ExitInitializationMode(fmi3Instance c) {
    Instance *inst = (Instance *)c;
    Event ev;
    model_initialize(inst->v);
    model_derivatives(inst->time, inst->v);
    settle(inst, &ev);
    cs_next = ev.next_defined ? ev.next_time : INFINITY;
    return fmi3OK;
}
fmi3Status fmi3EnterEventMode(fmi3Instance c) { (void)c; return fmi3OK; }
fmi3Status fmi3Terminate(fmi3Instance c) { ((Instance *)c)->terminated = 1; return fmi3OK; }

/* An array variable (FMI 3.0): VAR_SIZE(vr) elements from v[VAR_OFFSET(vr)] on. */
#ifndef VAR_SIZE
#define VAR_SIZE(vr) 1
#define VAR_OFFSET(vr) (vr)
#endif
#ifndef N_VARS
#define N_VARS NV
#endif
#define GETTER(NAME, TYPE, CONV) \
fmi3Status NAME(fmi3Instance c, const fmi3ValueReference vr[], size_t n, TYPE value[], size_t nValues) { \
    Instance *inst = (Instance *)c; size_t i, k = 0; int j; \
    model_derivatives(inst->time, inst->v); \
    for (i = 0; i < n; i++) { if (vr[i] >= N_VARS) return fmi3Error; \
        for (j = 0; j < VAR_SIZE(vr[i]); j++) { if (k >= nValues) return fmi3Error; \
            value[k++] = CONV(inst->v[VAR_OFFSET(vr[i]) + j]); } } \
    return fmi3OK; }
#define SETTER(NAME, TYPE) \
fmi3Status NAME(fmi3Instance c, const fmi3ValueReference vr[], size_t n, const TYPE value[], size_t nValues) { \
    Instance *inst = (Instance *)c; size_t i, k = 0; int j; \
    for (i = 0; i < n; i++) { if (vr[i] >= N_VARS) return fmi3Error; \
        for (j = 0; j < VAR_SIZE(vr[i]); j++) { if (k >= nValues) return fmi3Error; \
            inst->v[VAR_OFFSET(vr[i]) + j] = (double)value[k++]; } } \
    return fmi3OK; }
#define AS_IS(x) (x)
#define AS_INT32(x) ((fmi3Int32)(x))
#define AS_BOOL(x) ((x) != 0.0)
GETTER(fmi3GetFloat64, fmi3Float64, AS_IS)
GETTER(fmi3GetInt32, fmi3Int32, AS_INT32)
GETTER(fmi3GetBoolean, fmi3Boolean, AS_BOOL)
SETTER(fmi3SetFloat64, fmi3Float64)
SETTER(fmi3SetInt32, fmi3Int32)
SETTER(fmi3SetBoolean, fmi3Boolean)

fmi3Status fmi3UpdateDiscreteStates(fmi3Instance c, fmi3Boolean *again, fmi3Boolean *terminate,
                                    fmi3Boolean *nominals, fmi3Boolean *values,
                                    fmi3Boolean *nextDefined, fmi3Float64 *next) {
    Instance *inst = (Instance *)c;
    Event ev;
    memset(&ev, 0, sizeof(ev));
    model_event(inst->time, inst->v, &ev);
    *again = ev.again;
    *terminate = ev.terminate;
    *nominals = fmi3False;
    *values = ev.states_changed;
    *nextDefined = ev.next_defined;
    *next = ev.next_time;
    return fmi3OK;
}
fmi3Status fmi3EnterContinuousTimeMode(fmi3Instance c) { (void)c; return fmi3OK; }
fmi3Status fmi3CompletedIntegratorStep(fmi3Instance c, fmi3Boolean noPrior, fmi3Boolean *enter,
                                       fmi3Boolean *terminate) {
    Instance *inst = (Instance *)c;
    (void)noPrior;
    *enter = model_step_event(inst->time, inst->v);
    *terminate = fmi3False;
    return fmi3OK;
}
fmi3Status fmi3SetTime(fmi3Instance c, fmi3Float64 t) { ((Instance *)c)->time = t; return fmi3OK; }
fmi3Status fmi3SetContinuousStates(fmi3Instance c, const fmi3Float64 x[], size_t nx) {
    Instance *inst = (Instance *)c;
    size_t i;
    if (nx != NX) return fmi3Error;
    for (i = 0; i < nx; i++) inst->v[STATES[i]] = x[i];
    return fmi3OK;
}
fmi3Status fmi3GetContinuousStateDerivatives(fmi3Instance c, fmi3Float64 dx[], size_t nx) {
    Instance *inst = (Instance *)c;
    size_t i;
#ifdef FAIL_AT_TIME
    if (inst->time >= FAIL_AT_TIME) {
        log_error(inst, "derivatives failed on purpose (a test FMU)");
        return fmi3Error;
    }
#endif
    if (nx != NX) return fmi3Error;
    model_derivatives(inst->time, inst->v);
    for (i = 0; i < nx; i++) dx[i] = inst->v[DERIVS[i]];
    return fmi3OK;
}
fmi3Status fmi3GetEventIndicators(fmi3Instance c, fmi3Float64 z[], size_t nz) {
    Instance *inst = (Instance *)c;
    if (nz != NZ) return fmi3Error;
    model_indicators(inst->time, inst->v, z);
    return fmi3OK;
}
fmi3Status fmi3GetContinuousStates(fmi3Instance c, fmi3Float64 x[], size_t nx) {
    Instance *inst = (Instance *)c;
    size_t i;
    for (i = 0; i < nx && i < NX; i++) x[i] = inst->v[STATES[i]];
    return fmi3OK;
}
fmi3Status fmi3GetNominalsOfContinuousStates(fmi3Instance c, fmi3Float64 x[], size_t nx) {
    size_t i;
    (void)c;
    for (i = 0; i < nx; i++) x[i] = 1.0;
    return fmi3OK;
}
fmi3Status fmi3GetNumberOfContinuousStates(fmi3Instance c, size_t *n) { (void)c; *n = NX; return fmi3OK; }
fmi3Status fmi3GetNumberOfEventIndicators(fmi3Instance c, size_t *n) { (void)c; *n = NZ; return fmi3OK; }
fmi3Status fmi3EnterStepMode(fmi3Instance c) { (void)c; return fmi3OK; }
fmi3Status fmi3DoStep(fmi3Instance c, fmi3Float64 t, fmi3Float64 h, fmi3Boolean noPrior,
                      fmi3Boolean *eventHandlingNeeded, fmi3Boolean *terminate,
                      fmi3Boolean *earlyReturn, fmi3Float64 *lastSuccessfulTime) {
    Instance *inst = (Instance *)c;
    (void)noPrior;
    *eventHandlingNeeded = fmi3False;
    *earlyReturn = fmi3False;
    *terminate = fmi3False;
#ifdef FAIL_AT_TIME
    if (t >= FAIL_AT_TIME) { log_error(inst, "doStep failed on purpose (a test FMU)"); return fmi3Error; }
#endif
    if (fabs(t - inst->time) > 1e-9 * (1.0 + fabs(t))) {
        log_error(inst, "doStep from another time than the last communication point");
        return fmi3Error;
    }
    inst->time = t;
    if (cs_advance(inst, t + h, &cs_next)) { inst->terminated = 1; *terminate = fmi3True; }
    *lastSuccessfulTime = inst->time;
    return fmi3OK;
}
#endif
