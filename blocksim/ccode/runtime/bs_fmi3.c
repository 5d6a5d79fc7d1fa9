/* FMI 3.0 interface of a blocksim model (model exchange; co-simulation with BS_CS).
 *
 * The same runtime as bs_fmi2.c (see there for the events); value reference 0 is the
 * time, BS_VR_G.. are the event indicators (variables in FMI 3.0). Only Float64
 * variables exist: the other types' getters and setters accept no value reference.
 */
#include <stdio.h>
#include <stdlib.h>
#include "fmi3Functions.h"

typedef struct {
    bs_model M;
    fmi3InstanceEnvironment env;
    fmi3LogMessageCallback logger;
    int initialised;
    int in_event;
    int after_pending;
    double tolerance;
#ifdef BS_CS
    bs_cs cs_state;
#endif
} bs_fmi3;

static void bs3_log(bs_fmi3 *F, fmi3Status status, const char *category, const char *text) {
    if (F->logger) F->logger(F->env, status, category, text);
}

static fmi3Status bs3_failed(bs_fmi3 *F) {
    bs3_log(F, fmi3Error, "logStatusError", F->M.message[0] ? F->M.message : "failed");
    return fmi3Error;
}

FMI3_Export const char *fmi3GetVersion(void) { return fmi3Version; }

FMI3_Export fmi3Status fmi3SetDebugLogging(fmi3Instance c, fmi3Boolean on, size_t n,
                                           const fmi3String categories[]) {
    (void)c; (void)on; (void)n; (void)categories;
    return fmi3OK;
}

static bs_fmi3 *bs3_new(fmi3String token, fmi3InstanceEnvironment env,
                        fmi3LogMessageCallback logger) {
    bs_fmi3 *F;
    if (token == NULL || strcmp(token, BS_GUID) != 0) {
        if (logger) logger(env, fmi3Error, "logStatusError", "wrong instantiation token");
        return NULL;
    }
    F = (bs_fmi3 *)calloc(1, sizeof(bs_fmi3));
    if (F == NULL) return NULL;
    F->env = env;
    F->logger = logger;
    memcpy(F->M.par, bs_par0, sizeof(double) * BS_NPAR1);
    bs_reset(&F->M, BS_START, BS_STOP);
    F->tolerance = BS_RTOL;
    return F;
}

FMI3_Export fmi3Instance fmi3InstantiateModelExchange(fmi3String name, fmi3String token,
                                                      fmi3String resources, fmi3Boolean visible,
                                                      fmi3Boolean logging,
                                                      fmi3InstanceEnvironment env,
                                                      fmi3LogMessageCallback logger) {
    (void)name; (void)resources; (void)visible; (void)logging;
    if (BS_IS_CS) {
        if (logger) logger(env, fmi3Error, "logStatusError", "this FMU is for co-simulation");
        return NULL;
    }
    return bs3_new(token, env, logger);
}

FMI3_Export fmi3Instance fmi3InstantiateCoSimulation(
    fmi3String name, fmi3String token, fmi3String resources, fmi3Boolean visible,
    fmi3Boolean logging, fmi3Boolean eventModeUsed, fmi3Boolean earlyReturnAllowed,
    const fmi3ValueReference required[], size_t nRequired, fmi3InstanceEnvironment env,
    fmi3LogMessageCallback logger, fmi3IntermediateUpdateCallback update) {
    (void)name; (void)resources; (void)visible; (void)logging; (void)eventModeUsed;
    (void)earlyReturnAllowed; (void)required; (void)nRequired; (void)update;
    if (!BS_IS_CS) {
        if (logger) logger(env, fmi3Error, "logStatusError", "this FMU is for model exchange");
        return NULL;
    }
    return bs3_new(token, env, logger);
}

FMI3_Export fmi3Instance fmi3InstantiateScheduledExecution(
    fmi3String name, fmi3String token, fmi3String resources, fmi3Boolean visible,
    fmi3Boolean logging, fmi3InstanceEnvironment env, fmi3LogMessageCallback logger,
    fmi3ClockUpdateCallback clockUpdate, fmi3LockPreemptionCallback lock,
    fmi3UnlockPreemptionCallback unlock) {
    (void)name; (void)token; (void)resources; (void)visible; (void)logging;
    (void)clockUpdate; (void)lock; (void)unlock;
    if (logger) logger(env, fmi3Error, "logStatusError", "scheduled execution is not supported");
    return NULL;
}

FMI3_Export void fmi3FreeInstance(fmi3Instance c) { free(c); }

FMI3_Export fmi3Status fmi3EnterInitializationMode(fmi3Instance c, fmi3Boolean tolDefined,
                                                   fmi3Float64 tol, fmi3Float64 start,
                                                   fmi3Boolean stopDefined, fmi3Float64 stop) {
    bs_fmi3 *F = (bs_fmi3 *)c;
    double par[BS_NPAR1];
    if (tolDefined) F->tolerance = tol;
    memcpy(par, F->M.par, sizeof par);
    bs_reset(&F->M, start, stopDefined ? stop : (BS_STOP > start ? BS_STOP : start + 1.0));
    memcpy(F->M.par, par, sizeof par);
    bs_apply_params(&F->M, 1);
    return fmi3OK;
}

FMI3_Export fmi3Status fmi3ExitInitializationMode(fmi3Instance c) {
    bs_fmi3 *F = (bs_fmi3 *)c;
    int something = 0;
    bs_apply_params(&F->M, 1);
    if (!bs_event(&F->M, 1, 0, &something)) return bs3_failed(F);
    F->initialised = 1;
    F->after_pending = 1;
#ifdef BS_CS
    if (!bs_after(&F->M)) return bs3_failed(F);
    F->after_pending = 0;
    bs_cs_start(&F->cs_state, &F->M, F->tolerance);
#endif
    return fmi3OK;
}

FMI3_Export fmi3Status fmi3EnterEventMode(fmi3Instance c) {
    ((bs_fmi3 *)c)->in_event = 1;
    return fmi3OK;
}

FMI3_Export fmi3Status fmi3Terminate(fmi3Instance c) { (void)c; return fmi3OK; }

FMI3_Export fmi3Status fmi3Reset(fmi3Instance c) {
    bs_fmi3 *F = (bs_fmi3 *)c;
    memcpy(F->M.par, bs_par0, sizeof(double) * BS_NPAR1);
    bs_reset(&F->M, BS_START, BS_STOP);
    F->initialised = F->in_event = F->after_pending = 0;
    return fmi3OK;
}

static int bs3_get(bs_fmi3 *F, fmi3ValueReference vr, double *out) {
    bs_model *M = &F->M;
    if (vr == 0) { *out = M->t; return 1; }
    if (vr >= BS_VR_PAR && vr < BS_VR_PAR + BS_NPAR) { *out = M->par[vr - BS_VR_PAR]; return 1; }
    if (vr >= BS_VR_OUT && vr < BS_VR_OUT + BS_NOUT) {
        *out = bs_signals(M)[bs_out_sig[vr - BS_VR_OUT]];
        return 1;
    }
    if (vr >= BS_VR_IN && vr < BS_VR_IN + BS_NIN) { *out = M->par[bs_in_par[vr - BS_VR_IN]]; return 1; }
    if (vr >= BS_VR_X && vr < BS_VR_X + BS_NX) { *out = M->x[vr - BS_VR_X]; return 1; }
    if (vr >= BS_VR_DX && vr < BS_VR_DX + BS_NX) {
        bs_deriv(&M->c, M->t, M->x, M->m, M->z, M->dx);
        *out = M->dx[vr - BS_VR_DX];
        return 1;
    }
    if (vr >= BS_VR_G && vr < BS_VR_G + BS_NZ) {
        bs_zc(&M->c, M->t, M->x, M->m, M->z, M->g);
        *out = M->g[vr - BS_VR_G];
        return 1;
    }
    return 0;
}

FMI3_Export fmi3Status fmi3GetFloat64(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                                      fmi3Float64 values[], size_t nValues) {
    bs_fmi3 *F = (bs_fmi3 *)c;
    size_t k;
    if (nValues < n) return fmi3Error;
    for (k = 0; k < n; k++) {
        if (!bs3_get(F, vr[k], &values[k])) {
            bs3_log(F, fmi3Error, "logStatusError", "unknown value reference");
            return fmi3Error;
        }
    }
    return fmi3OK;
}

FMI3_Export fmi3Status fmi3SetFloat64(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                                      const fmi3Float64 values[], size_t nValues) {
    bs_fmi3 *F = (bs_fmi3 *)c;
    size_t k;
    int params = 0;
    if (nValues < n) return fmi3Error;
    for (k = 0; k < n; k++) {
        if (vr[k] >= BS_VR_PAR && vr[k] < BS_VR_PAR + BS_NPAR) {
            F->M.par[vr[k] - BS_VR_PAR] = values[k];
            params = 1;
        } else if (vr[k] >= BS_VR_IN && vr[k] < BS_VR_IN + BS_NIN) {
            F->M.par[bs_in_par[vr[k] - BS_VR_IN]] = values[k];
            params = 1;
#ifdef BS_CS
            bs_cs_input_changed(&F->cs_state, &F->M);
#endif
        } else {
            bs3_log(F, fmi3Error, "logStatusError", "value reference not settable");
            return fmi3Error;
        }
    }
    if (params) bs_apply_params(&F->M, !F->initialised);
    return fmi3OK;
}

/* The model has Float64 variables only. */
#define BS3_NONE_GET(NAME, TYPE) \
    FMI3_Export fmi3Status NAME(fmi3Instance c, const fmi3ValueReference vr[], size_t n, \
                                TYPE values[], size_t nValues) { \
        (void)c; (void)vr; (void)values; (void)nValues; return n ? fmi3Error : fmi3OK; }
#define BS3_NONE_SET(NAME, TYPE) \
    FMI3_Export fmi3Status NAME(fmi3Instance c, const fmi3ValueReference vr[], size_t n, \
                                const TYPE values[], size_t nValues) { \
        (void)c; (void)vr; (void)values; (void)nValues; return n ? fmi3Error : fmi3OK; }
BS3_NONE_GET(fmi3GetFloat32, fmi3Float32)
BS3_NONE_GET(fmi3GetInt8, fmi3Int8)
BS3_NONE_GET(fmi3GetUInt8, fmi3UInt8)
BS3_NONE_GET(fmi3GetInt16, fmi3Int16)
BS3_NONE_GET(fmi3GetUInt16, fmi3UInt16)
BS3_NONE_GET(fmi3GetInt32, fmi3Int32)
BS3_NONE_GET(fmi3GetUInt32, fmi3UInt32)
BS3_NONE_GET(fmi3GetInt64, fmi3Int64)
BS3_NONE_GET(fmi3GetUInt64, fmi3UInt64)
BS3_NONE_GET(fmi3GetBoolean, fmi3Boolean)
BS3_NONE_GET(fmi3GetString, fmi3String)
BS3_NONE_SET(fmi3SetFloat32, fmi3Float32)
BS3_NONE_SET(fmi3SetInt8, fmi3Int8)
BS3_NONE_SET(fmi3SetUInt8, fmi3UInt8)
BS3_NONE_SET(fmi3SetInt16, fmi3Int16)
BS3_NONE_SET(fmi3SetUInt16, fmi3UInt16)
BS3_NONE_SET(fmi3SetInt32, fmi3Int32)
BS3_NONE_SET(fmi3SetUInt32, fmi3UInt32)
BS3_NONE_SET(fmi3SetInt64, fmi3Int64)
BS3_NONE_SET(fmi3SetUInt64, fmi3UInt64)
BS3_NONE_SET(fmi3SetBoolean, fmi3Boolean)
BS3_NONE_SET(fmi3SetString, fmi3String)

FMI3_Export fmi3Status fmi3GetBinary(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                                     size_t sizes[], fmi3Binary values[], size_t nValues) {
    (void)c; (void)vr; (void)sizes; (void)values; (void)nValues;
    return n ? fmi3Error : fmi3OK;
}
FMI3_Export fmi3Status fmi3SetBinary(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                                     const size_t sizes[], const fmi3Binary values[],
                                     size_t nValues) {
    (void)c; (void)vr; (void)sizes; (void)values; (void)nValues;
    return n ? fmi3Error : fmi3OK;
}
FMI3_Export fmi3Status fmi3GetClock(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                                    fmi3Clock values[]) {
    (void)c; (void)vr; (void)values;
    return n ? fmi3Error : fmi3OK;
}
FMI3_Export fmi3Status fmi3SetClock(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                                    const fmi3Clock values[]) {
    (void)c; (void)vr; (void)values;
    return n ? fmi3Error : fmi3OK;
}

FMI3_Export fmi3Status fmi3GetNumberOfVariableDependencies(fmi3Instance c, fmi3ValueReference vr,
                                                           size_t *n) {
    (void)c; (void)vr; (void)n;
    return fmi3Error;  /* (the model description lists no dependencies: all are assumed) */
}
FMI3_Export fmi3Status fmi3GetVariableDependencies(fmi3Instance c, fmi3ValueReference dependent,
                                                   size_t a[], fmi3ValueReference b[], size_t d[],
                                                   fmi3DependencyKind k[], size_t n) {
    (void)c; (void)dependent; (void)a; (void)b; (void)d; (void)k; (void)n;
    return fmi3Error;
}

FMI3_Export fmi3Status fmi3GetFMUState(fmi3Instance c, fmi3FMUState *state) {
    bs_fmi3 *copy = (bs_fmi3 *)(*state ? *state : malloc(sizeof(bs_fmi3)));
    if (copy == NULL) return fmi3Error;
    memcpy(copy, c, sizeof(bs_fmi3));
    *state = copy;
    return fmi3OK;
}
FMI3_Export fmi3Status fmi3SetFMUState(fmi3Instance c, fmi3FMUState state) {
    bs_fmi3 *F = (bs_fmi3 *)c;
    fmi3InstanceEnvironment env = F->env;
    fmi3LogMessageCallback logger = F->logger;
    memcpy(F, state, sizeof(bs_fmi3));
    F->env = env;
    F->logger = logger;
    F->M.c.P = F->M.P;
    F->M.c.W = F->M.W;
    return fmi3OK;
}
FMI3_Export fmi3Status fmi3FreeFMUState(fmi3Instance c, fmi3FMUState *state) {
    (void)c;
    free(*state);
    *state = NULL;
    return fmi3OK;
}
FMI3_Export fmi3Status fmi3SerializedFMUStateSize(fmi3Instance c, fmi3FMUState s, size_t *size) {
    (void)c; (void)s;
    *size = sizeof(bs_fmi3);
    return fmi3OK;
}
FMI3_Export fmi3Status fmi3SerializeFMUState(fmi3Instance c, fmi3FMUState s, fmi3Byte bytes[],
                                             size_t size) {
    (void)c;
    if (size < sizeof(bs_fmi3)) return fmi3Error;
    memcpy(bytes, s, sizeof(bs_fmi3));
    return fmi3OK;
}
FMI3_Export fmi3Status fmi3DeserializeFMUState(fmi3Instance c, const fmi3Byte bytes[], size_t size,
                                               fmi3FMUState *s) {
    (void)c;
    if (size != sizeof(bs_fmi3)) return fmi3Error;
    if (*s == NULL) *s = malloc(sizeof(bs_fmi3));
    if (*s == NULL) return fmi3Error;
    memcpy(*s, bytes, size);
    return fmi3OK;
}

FMI3_Export fmi3Status fmi3GetDirectionalDerivative(fmi3Instance c, const fmi3ValueReference u[],
                                                    size_t nu, const fmi3ValueReference k[],
                                                    size_t nk, const fmi3Float64 seed[],
                                                    size_t ns, fmi3Float64 sens[], size_t nsens) {
    (void)u; (void)nu; (void)k; (void)nk; (void)seed; (void)ns; (void)sens; (void)nsens;
    bs3_log((bs_fmi3 *)c, fmi3Error, "logStatusError", "directional derivatives are not provided");
    return fmi3Error;
}
FMI3_Export fmi3Status fmi3GetAdjointDerivative(fmi3Instance c, const fmi3ValueReference u[],
                                                size_t nu, const fmi3ValueReference k[],
                                                size_t nk, const fmi3Float64 seed[], size_t ns,
                                                fmi3Float64 sens[], size_t nsens) {
    (void)u; (void)nu; (void)k; (void)nk; (void)seed; (void)ns; (void)sens; (void)nsens;
    bs3_log((bs_fmi3 *)c, fmi3Error, "logStatusError", "adjoint derivatives are not provided");
    return fmi3Error;
}

FMI3_Export fmi3Status fmi3EnterConfigurationMode(fmi3Instance c) { (void)c; return fmi3Error; }
FMI3_Export fmi3Status fmi3ExitConfigurationMode(fmi3Instance c) { (void)c; return fmi3Error; }
FMI3_Export fmi3Status fmi3GetIntervalDecimal(fmi3Instance c, const fmi3ValueReference vr[],
                                              size_t n, fmi3Float64 i[],
                                              fmi3IntervalQualifier q[]) {
    (void)c; (void)vr; (void)i; (void)q;
    return n ? fmi3Error : fmi3OK;
}
FMI3_Export fmi3Status fmi3GetIntervalFraction(fmi3Instance c, const fmi3ValueReference vr[],
                                               size_t n, fmi3UInt64 a[], fmi3UInt64 b[],
                                               fmi3IntervalQualifier q[]) {
    (void)c; (void)vr; (void)a; (void)b; (void)q;
    return n ? fmi3Error : fmi3OK;
}
FMI3_Export fmi3Status fmi3GetShiftDecimal(fmi3Instance c, const fmi3ValueReference vr[],
                                           size_t n, fmi3Float64 s[]) {
    (void)c; (void)vr; (void)s;
    return n ? fmi3Error : fmi3OK;
}
FMI3_Export fmi3Status fmi3GetShiftFraction(fmi3Instance c, const fmi3ValueReference vr[],
                                            size_t n, fmi3UInt64 a[], fmi3UInt64 b[]) {
    (void)c; (void)vr; (void)a; (void)b;
    return n ? fmi3Error : fmi3OK;
}
FMI3_Export fmi3Status fmi3SetIntervalDecimal(fmi3Instance c, const fmi3ValueReference vr[],
                                              size_t n, const fmi3Float64 i[]) {
    (void)c; (void)vr; (void)i;
    return n ? fmi3Error : fmi3OK;
}
FMI3_Export fmi3Status fmi3SetIntervalFraction(fmi3Instance c, const fmi3ValueReference vr[],
                                               size_t n, const fmi3UInt64 a[],
                                               const fmi3UInt64 b[]) {
    (void)c; (void)vr; (void)a; (void)b;
    return n ? fmi3Error : fmi3OK;
}
FMI3_Export fmi3Status fmi3SetShiftDecimal(fmi3Instance c, const fmi3ValueReference vr[],
                                           size_t n, const fmi3Float64 s[]) {
    (void)c; (void)vr; (void)s;
    return n ? fmi3Error : fmi3OK;
}
FMI3_Export fmi3Status fmi3SetShiftFraction(fmi3Instance c, const fmi3ValueReference vr[],
                                            size_t n, const fmi3UInt64 a[], const fmi3UInt64 b[]) {
    (void)c; (void)vr; (void)a; (void)b;
    return n ? fmi3Error : fmi3OK;
}
FMI3_Export fmi3Status fmi3EvaluateDiscreteStates(fmi3Instance c) { (void)c; return fmi3OK; }

FMI3_Export fmi3Status fmi3UpdateDiscreteStates(fmi3Instance c, fmi3Boolean *needUpdate,
                                                fmi3Boolean *terminate,
                                                fmi3Boolean *nominalsChanged,
                                                fmi3Boolean *valuesChanged,
                                                fmi3Boolean *nextDefined, fmi3Float64 *next) {
    bs_fmi3 *F = (bs_fmi3 *)c;
    bs_model *M = &F->M;
    double t_next;
    int something = 0;
    /* what a failed call leaves: no further iteration, stop (see bs_fmi2.c) */
    *needUpdate = fmi3False;
    *terminate = fmi3True;
    *nominalsChanged = fmi3False;
    *valuesChanged = fmi3False;
    *nextDefined = fmi3False;
    *next = 0.0;
    if (F->in_event) {
        int located = !(bs_next_event(M) <= M->t);
        if (F->after_pending && !bs_after(M)) return bs3_failed(F);
        if (!bs_me_history(M)) return bs3_failed(F);  /* the inputs' history up to here */
        if (!bs_event(M, 0, located, &something)) return bs3_failed(F);
        F->after_pending = 1;
        F->in_event = 0;
    }
    t_next = bs_next_event(M);
    if (!(t_next > M->t) && isfinite(t_next)) {
        snprintf(M->message, sizeof M->message,
                 "the blocks' next time event (%.17g) does not come after t = %.17g", t_next, M->t);
        return bs3_failed(F);
    }
    *terminate = M->terminate ? fmi3True : fmi3False;
    *valuesChanged = fmi3True;
    *nextDefined = isfinite(t_next) ? fmi3True : fmi3False;
    *next = isfinite(t_next) ? t_next : 0.0;
    return fmi3OK;
}

FMI3_Export fmi3Status fmi3EnterContinuousTimeMode(fmi3Instance c) {
    bs_fmi3 *F = (bs_fmi3 *)c;
    if (F->after_pending) {
        F->after_pending = 0;
        if (!bs_after(&F->M)) return bs3_failed(F);
    }
#ifndef BS_CS
    if (!bs_me_history(&F->M)) return bs3_failed(F);  /* where the next piece starts */
#endif
    return fmi3OK;
}

FMI3_Export fmi3Status fmi3CompletedIntegratorStep(fmi3Instance c, fmi3Boolean noSet,
                                                   fmi3Boolean *enterEventMode,
                                                   fmi3Boolean *terminate) {
    (void)noSet;
    *enterEventMode = fmi3False;
    *terminate = fmi3False;
    /* the step into the input histories (transport delays): model exchange records them
     * at the importer's completed steps and events (it cannot see the solver's steps) */
    if (!bs_me_history(&((bs_fmi3 *)c)->M)) return bs3_failed((bs_fmi3 *)c);
    return fmi3OK;
}

FMI3_Export fmi3Status fmi3SetTime(fmi3Instance c, fmi3Float64 time) {
    bs_fmi3 *F = (bs_fmi3 *)c;
    F->M.t = time;
    F->M.sig_valid = 0;
    return fmi3OK;
}

FMI3_Export fmi3Status fmi3SetContinuousStates(fmi3Instance c, const fmi3Float64 x[], size_t nx) {
    bs_fmi3 *F = (bs_fmi3 *)c;
    if (nx != (size_t)BS_NX) return fmi3Error;
    if (nx) memcpy(F->M.x, x, nx * sizeof(double));
    F->M.sig_valid = 0;
    return fmi3OK;
}

FMI3_Export fmi3Status fmi3GetContinuousStateDerivatives(fmi3Instance c, fmi3Float64 dx[],
                                                         size_t nx) {
    bs_fmi3 *F = (bs_fmi3 *)c;
    bs_model *M = &F->M;
    if (nx != (size_t)BS_NX) return fmi3Error;
    if (nx == 0) return fmi3OK;
    bs_deriv(&M->c, M->t, M->x, M->m, M->z, M->dx);
    memcpy(dx, M->dx, nx * sizeof(double));
    return fmi3OK;
}

FMI3_Export fmi3Status fmi3GetEventIndicators(fmi3Instance c, fmi3Float64 g[], size_t ng) {
    bs_fmi3 *F = (bs_fmi3 *)c;
    bs_model *M = &F->M;
    if (ng != (size_t)BS_NZ) return fmi3Error;
    if (ng == 0) return fmi3OK;
    bs_zc(&M->c, M->t, M->x, M->m, M->z, M->g);
    memcpy(g, M->g, ng * sizeof(double));
    return fmi3OK;
}

FMI3_Export fmi3Status fmi3GetContinuousStates(fmi3Instance c, fmi3Float64 x[], size_t nx) {
    bs_fmi3 *F = (bs_fmi3 *)c;
    if (nx != (size_t)BS_NX) return fmi3Error;
    if (nx) memcpy(x, F->M.x, nx * sizeof(double));
    return fmi3OK;
}

FMI3_Export fmi3Status fmi3GetNominalsOfContinuousStates(fmi3Instance c, fmi3Float64 x[], size_t nx) {
    size_t k;
    (void)c;
    for (k = 0; k < nx; k++) x[k] = 1.0;
    return fmi3OK;
}

FMI3_Export fmi3Status fmi3GetNumberOfEventIndicators(fmi3Instance c, size_t *n) {
    (void)c;
    *n = BS_IS_CS ? 0 : BS_NZ;
    return fmi3OK;
}

FMI3_Export fmi3Status fmi3GetNumberOfContinuousStates(fmi3Instance c, size_t *n) {
    (void)c;
    *n = BS_NX;
    return fmi3OK;
}

FMI3_Export fmi3Status fmi3EnterStepMode(fmi3Instance c) { (void)c; return fmi3OK; }

FMI3_Export fmi3Status fmi3GetOutputDerivatives(fmi3Instance c, const fmi3ValueReference vr[],
                                                size_t n, const fmi3Int32 orders[],
                                                fmi3Float64 values[], size_t nValues) {
    (void)vr; (void)orders; (void)values; (void)nValues;
    bs3_log((bs_fmi3 *)c, fmi3Error, "logStatusError", "output derivatives are not provided");
    return n ? fmi3Error : fmi3OK;
}

FMI3_Export fmi3Status fmi3DoStep(fmi3Instance c, fmi3Float64 t, fmi3Float64 h, fmi3Boolean noSet,
                                  fmi3Boolean *eventHandlingNeeded, fmi3Boolean *terminate,
                                  fmi3Boolean *earlyReturn, fmi3Float64 *lastSuccessfulTime) {
    bs_fmi3 *F = (bs_fmi3 *)c;
    (void)noSet;
    *eventHandlingNeeded = fmi3False;
    *earlyReturn = fmi3False;
#ifdef BS_CS
    if (fabs(t - F->M.t) > 1e-9 * (1.0 + fabs(t))) {
        bs3_log(F, fmi3Error, "logStatusError", "doStep: the communication point is not the FMU's time");
        return fmi3Error;
    }
    if (!bs_cs_advance(&F->cs_state, &F->M, t + h)) return bs3_failed(F);
    *terminate = F->M.terminate ? fmi3True : fmi3False;
    *lastSuccessfulTime = F->M.t;
    return fmi3OK;
#else
    (void)t; (void)h;
    *terminate = fmi3False;
    *lastSuccessfulTime = F->M.t;
    bs3_log(F, fmi3Error, "logStatusError", "this FMU is for model exchange");
    return fmi3Error;
#endif
}

FMI3_Export fmi3Status fmi3ActivateModelPartition(fmi3Instance c, fmi3ValueReference clock,
                                                  fmi3Float64 t) {
    (void)c; (void)clock; (void)t;
    return fmi3Error;
}
