/* FMI 2.0 interface of a blocksim model (model exchange; co-simulation with BS_CS).
 *
 * Value references (config.c): parameters BS_VR_PAR.., outputs BS_VR_OUT.., inputs
 * BS_VR_IN.., continuous states BS_VR_X.., their derivatives BS_VR_DX... Events are
 * blocksim's: event indicators are the zero-crossing functions (read against the latched
 * signs), nextEventTime the next time event or sample hit, and fmi2NewDiscreteStates
 * settles the model as blocksim does at an event; the pulses of an event are cleared in
 * fmi2EnterContinuousTimeMode (after the importer read the right limit).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include "fmi2Functions.h"

typedef struct {
    bs_model M;
    fmi2CallbackFunctions cb;
    char name[128];
    int logging;
    int initialised;
    int in_event;        /* event mode entered, settled not yet */
    int after_pending;   /* the right limit settled: clear pulses when continuous time resumes */
    int first_event;
    double tolerance;
    int cs;
#ifdef BS_CS
    bs_cs cs_state;
#endif
} bs_fmi2;

static void bs2_log(bs_fmi2 *F, fmi2Status status, const char *category, const char *text) {
    if (F->cb.logger)
        F->cb.logger(F->cb.componentEnvironment, F->name, status, category, "%s", text);
}

static fmi2Status bs2_failed(bs_fmi2 *F) {
    bs2_log(F, fmi2Error, "logStatusError", F->M.message[0] ? F->M.message : "failed");
    return fmi2Error;
}

FMI2_Export const char *fmi2GetTypesPlatform(void) { return fmi2TypesPlatform; }
FMI2_Export const char *fmi2GetVersion(void) { return fmi2Version; }

FMI2_Export fmi2Status fmi2SetDebugLogging(fmi2Component c, fmi2Boolean on, size_t n,
                                           const fmi2String categories[]) {
    (void)n; (void)categories;
    ((bs_fmi2 *)c)->logging = on;
    return fmi2OK;
}

FMI2_Export fmi2Component fmi2Instantiate(fmi2String name, fmi2Type type, fmi2String guid,
                                          fmi2String resources,
                                          const fmi2CallbackFunctions *functions,
                                          fmi2Boolean visible, fmi2Boolean logging) {
    bs_fmi2 *F;
    (void)resources; (void)visible;
    if (guid == NULL || strcmp(guid, BS_GUID) != 0) {
        if (functions && functions->logger)
            functions->logger(functions->componentEnvironment, name, fmi2Error, "logStatusError",
                              "wrong GUID %s (this FMU is %s)", guid ? guid : "(none)", BS_GUID);
        return NULL;
    }
#ifdef BS_CS
    if (type != fmi2CoSimulation) {
#else
    if (type != fmi2ModelExchange) {
#endif
        if (functions && functions->logger)
            functions->logger(functions->componentEnvironment, name, fmi2Error, "logStatusError",
                              "this FMU is exported for %s only",
                              BS_IS_CS ? "co-simulation" : "model exchange");
        return NULL;
    }
    F = (bs_fmi2 *)calloc(1, sizeof(bs_fmi2));
    if (F == NULL) return NULL;
    if (functions) F->cb = *functions;
    snprintf(F->name, sizeof F->name, "%s", name ? name : "blocksim");
    F->logging = logging;
    memcpy(F->M.par, bs_par0, sizeof(double) * BS_NPAR1);
    bs_reset(&F->M, BS_START, BS_STOP);
    F->tolerance = BS_RTOL;
    return F;
}

FMI2_Export void fmi2FreeInstance(fmi2Component c) { free(c); }

FMI2_Export fmi2Status fmi2SetupExperiment(fmi2Component c, fmi2Boolean tolDefined, fmi2Real tol,
                                           fmi2Real start, fmi2Boolean stopDefined,
                                           fmi2Real stop) {
    bs_fmi2 *F = (bs_fmi2 *)c;
    if (tolDefined) F->tolerance = tol;
    F->M.start = start;
    F->M.stop = stopDefined ? stop : (BS_STOP > start ? BS_STOP : start + 1.0);
    return fmi2OK;
}

FMI2_Export fmi2Status fmi2EnterInitializationMode(fmi2Component c) {
    bs_fmi2 *F = (bs_fmi2 *)c;
    double par[BS_NPAR1];
    memcpy(par, F->M.par, sizeof par);
    bs_reset(&F->M, F->M.start, F->M.stop);
    memcpy(F->M.par, par, sizeof par);
    bs_apply_params(&F->M, 1);
    return fmi2OK;
}

FMI2_Export fmi2Status fmi2ExitInitializationMode(fmi2Component c) {
    bs_fmi2 *F = (bs_fmi2 *)c;
    int something = 0;
    bs_apply_params(&F->M, 1);
    if (!bs_event(&F->M, 1, 0, &something)) return bs2_failed(F);
    F->initialised = 1;
    F->after_pending = 1;
#ifdef BS_CS
    if (!bs_after(&F->M)) return bs2_failed(F);
    F->after_pending = 0;
    bs_cs_start(&F->cs_state, &F->M, F->tolerance);
#endif
    return fmi2OK;
}

FMI2_Export fmi2Status fmi2Terminate(fmi2Component c) { (void)c; return fmi2OK; }

FMI2_Export fmi2Status fmi2Reset(fmi2Component c) {
    bs_fmi2 *F = (bs_fmi2 *)c;
    memcpy(F->M.par, bs_par0, sizeof(double) * BS_NPAR1);
    bs_reset(&F->M, BS_START, BS_STOP);
    F->initialised = F->in_event = F->after_pending = 0;
    return fmi2OK;
}

static int bs2_get_real(bs_fmi2 *F, fmi2ValueReference vr, double *out) {
    bs_model *M = &F->M;
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
    return 0;
}

FMI2_Export fmi2Status fmi2GetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                   fmi2Real value[]) {
    bs_fmi2 *F = (bs_fmi2 *)c;
    size_t k;
    for (k = 0; k < n; k++) {
        if (!bs2_get_real(F, vr[k], &value[k])) {
            bs2_log(F, fmi2Error, "logStatusError", "unknown value reference");
            return fmi2Error;
        }
    }
    return fmi2OK;
}

FMI2_Export fmi2Status fmi2SetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                   const fmi2Real value[]) {
    bs_fmi2 *F = (bs_fmi2 *)c;
    size_t k;
    int params = 0;
    for (k = 0; k < n; k++) {
        if (vr[k] >= BS_VR_PAR && vr[k] < BS_VR_PAR + BS_NPAR) {
            F->M.par[vr[k] - BS_VR_PAR] = value[k];
            params = 1;
        } else if (vr[k] >= BS_VR_IN && vr[k] < BS_VR_IN + BS_NIN) {
            F->M.par[bs_in_par[vr[k] - BS_VR_IN]] = value[k];
            params = 1;
#ifdef BS_CS
            bs_cs_input_changed(&F->cs_state, &F->M);
#endif
        } else {
            bs2_log(F, fmi2Error, "logStatusError", "value reference not settable");
            return fmi2Error;
        }
    }
    if (params) bs_apply_params(&F->M, !F->initialised);
    return fmi2OK;
}

FMI2_Export fmi2Status fmi2GetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                      fmi2Integer value[]) {
    (void)c; (void)vr; (void)value;
    return n ? fmi2Error : fmi2OK;
}
FMI2_Export fmi2Status fmi2GetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                      fmi2Boolean value[]) {
    (void)c; (void)vr; (void)value;
    return n ? fmi2Error : fmi2OK;
}
FMI2_Export fmi2Status fmi2GetString(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                     fmi2String value[]) {
    (void)c; (void)vr; (void)value;
    return n ? fmi2Error : fmi2OK;
}
FMI2_Export fmi2Status fmi2SetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                      const fmi2Integer value[]) {
    (void)c; (void)vr; (void)value;
    return n ? fmi2Error : fmi2OK;
}
FMI2_Export fmi2Status fmi2SetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                      const fmi2Boolean value[]) {
    (void)c; (void)vr; (void)value;
    return n ? fmi2Error : fmi2OK;
}
FMI2_Export fmi2Status fmi2SetString(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                     const fmi2String value[]) {
    (void)c; (void)vr; (void)value;
    return n ? fmi2Error : fmi2OK;
}

/* FMU states: a copy of the instance (canGetAndSetFMUstate). */
FMI2_Export fmi2Status fmi2GetFMUstate(fmi2Component c, fmi2FMUstate *state) {
    bs_fmi2 *copy = (bs_fmi2 *)(*state ? *state : malloc(sizeof(bs_fmi2)));
    if (copy == NULL) return fmi2Error;
    memcpy(copy, c, sizeof(bs_fmi2));
    *state = copy;
    return fmi2OK;
}
FMI2_Export fmi2Status fmi2SetFMUstate(fmi2Component c, fmi2FMUstate state) {
    bs_fmi2 *F = (bs_fmi2 *)c;
    fmi2CallbackFunctions cb = F->cb;
    memcpy(F, state, sizeof(bs_fmi2));
    F->cb = cb;
    F->M.c.P = F->M.P;
    F->M.c.W = F->M.W;
    return fmi2OK;
}
FMI2_Export fmi2Status fmi2FreeFMUstate(fmi2Component c, fmi2FMUstate *state) {
    (void)c;
    free(*state);
    *state = NULL;
    return fmi2OK;
}
FMI2_Export fmi2Status fmi2SerializedFMUstateSize(fmi2Component c, fmi2FMUstate s, size_t *size) {
    (void)c; (void)s;
    *size = sizeof(bs_fmi2);
    return fmi2OK;
}
FMI2_Export fmi2Status fmi2SerializeFMUstate(fmi2Component c, fmi2FMUstate s, fmi2Byte bytes[],
                                             size_t size) {
    (void)c;
    if (size < sizeof(bs_fmi2)) return fmi2Error;
    memcpy(bytes, s, sizeof(bs_fmi2));
    return fmi2OK;
}
FMI2_Export fmi2Status fmi2DeSerializeFMUstate(fmi2Component c, const fmi2Byte bytes[], size_t size,
                                               fmi2FMUstate *s) {
    (void)c;
    if (size != sizeof(bs_fmi2)) return fmi2Error;
    if (*s == NULL) *s = malloc(sizeof(bs_fmi2));
    if (*s == NULL) return fmi2Error;
    memcpy(*s, bytes, size);
    return fmi2OK;
}
FMI2_Export fmi2Status fmi2GetDirectionalDerivative(fmi2Component c, const fmi2ValueReference u[],
                                                    size_t nu, const fmi2ValueReference k[],
                                                    size_t nk, const fmi2Real dk[], fmi2Real du[]) {
    (void)u; (void)nu; (void)k; (void)nk; (void)dk; (void)du;
    bs2_log((bs_fmi2 *)c, fmi2Error, "logStatusError", "directional derivatives are not provided");
    return fmi2Error;
}

/* ----- model exchange ----- */
FMI2_Export fmi2Status fmi2EnterEventMode(fmi2Component c) {
    ((bs_fmi2 *)c)->in_event = 1;
    return fmi2OK;
}

FMI2_Export fmi2Status fmi2NewDiscreteStates(fmi2Component c, fmi2EventInfo *info) {
    bs_fmi2 *F = (bs_fmi2 *)c;
    bs_model *M = &F->M;
    double next;
    int something = 0;
    /* what a failed call leaves: no further iteration, stop (an importer that loops while
     * newDiscreteStatesNeeded, ignoring the status, as the FMI Compliance Checker does,
     * would otherwise call forever) */
    info->newDiscreteStatesNeeded = fmi2False;
    info->terminateSimulation = fmi2True;
    info->nominalsOfContinuousStatesChanged = fmi2False;
    info->valuesOfContinuousStatesChanged = fmi2False;
    info->nextEventTimeDefined = fmi2False;
    info->nextEventTime = 0.0;
    if (F->in_event) {
        /* an event the importer found: a time event if it is the next one, else a state
         * event (located by the importer's solver) */
        int located = !(bs_next_event(M) <= M->t);
        if (F->after_pending) {  /* pulses of the event before, if no continuous time passed */
            if (!bs_after(M)) return bs2_failed(F);
        }
        if (!bs_me_history(M)) return bs2_failed(F);  /* the inputs' history up to here */
        if (!bs_event(M, 0, located, &something)) return bs2_failed(F);
        F->after_pending = 1;
        F->in_event = 0;
    }
    next = bs_next_event(M);
    if (!(next > M->t) && isfinite(next)) {
        snprintf(M->message, sizeof M->message,
                 "the blocks' next time event (%.17g) does not come after t = %.17g", next, M->t);
        return bs2_failed(F);
    }
    info->terminateSimulation = M->terminate ? fmi2True : fmi2False;
    info->valuesOfContinuousStatesChanged = fmi2True;
    info->nextEventTimeDefined = isfinite(next) ? fmi2True : fmi2False;
    info->nextEventTime = isfinite(next) ? next : 0.0;
    return fmi2OK;
}

FMI2_Export fmi2Status fmi2EnterContinuousTimeMode(fmi2Component c) {
    bs_fmi2 *F = (bs_fmi2 *)c;
    if (F->after_pending) {
        F->after_pending = 0;
        if (!bs_after(&F->M)) return bs2_failed(F);
    }
#ifndef BS_CS
    if (!bs_me_history(&F->M)) return bs2_failed(F);  /* where the next piece starts */
#endif
    return fmi2OK;
}

FMI2_Export fmi2Status fmi2CompletedIntegratorStep(fmi2Component c, fmi2Boolean noSet,
                                                   fmi2Boolean *enterEventMode,
                                                   fmi2Boolean *terminate) {
    (void)noSet;
    *enterEventMode = fmi2False;
    *terminate = fmi2False;
    /* the step into the input histories (transport delays): model exchange records them
     * at the importer's completed steps and events (it cannot see the solver's steps) */
    if (!bs_me_history(&((bs_fmi2 *)c)->M)) return bs2_failed((bs_fmi2 *)c);
    return fmi2OK;
}

FMI2_Export fmi2Status fmi2SetTime(fmi2Component c, fmi2Real time) {
    bs_fmi2 *F = (bs_fmi2 *)c;
    F->M.t = time;
    F->M.sig_valid = 0;
    return fmi2OK;
}

FMI2_Export fmi2Status fmi2SetContinuousStates(fmi2Component c, const fmi2Real x[], size_t nx) {
    bs_fmi2 *F = (bs_fmi2 *)c;
    if (nx != (size_t)BS_NX) return fmi2Error;
    if (nx) memcpy(F->M.x, x, nx * sizeof(double));
    F->M.sig_valid = 0;
    return fmi2OK;
}

FMI2_Export fmi2Status fmi2GetDerivatives(fmi2Component c, fmi2Real dx[], size_t nx) {
    bs_fmi2 *F = (bs_fmi2 *)c;
    bs_model *M = &F->M;
    if (nx != (size_t)BS_NX) return fmi2Error;
    if (nx == 0) return fmi2OK;
    bs_deriv(&M->c, M->t, M->x, M->m, M->z, M->dx);
    memcpy(dx, M->dx, nx * sizeof(double));
    return fmi2OK;
}

FMI2_Export fmi2Status fmi2GetEventIndicators(fmi2Component c, fmi2Real g[], size_t ng) {
    bs_fmi2 *F = (bs_fmi2 *)c;
    bs_model *M = &F->M;
    if (ng != (size_t)BS_NZ) return fmi2Error;
    if (ng == 0) return fmi2OK;
    bs_zc(&M->c, M->t, M->x, M->m, M->z, M->g);
    memcpy(g, M->g, ng * sizeof(double));
    return fmi2OK;
}

FMI2_Export fmi2Status fmi2GetContinuousStates(fmi2Component c, fmi2Real x[], size_t nx) {
    bs_fmi2 *F = (bs_fmi2 *)c;
    if (nx != (size_t)BS_NX) return fmi2Error;
    if (nx) memcpy(x, F->M.x, nx * sizeof(double));
    return fmi2OK;
}

FMI2_Export fmi2Status fmi2GetNominalsOfContinuousStates(fmi2Component c, fmi2Real x[], size_t nx) {
    size_t k;
    (void)c;
    for (k = 0; k < nx; k++) x[k] = 1.0;
    return fmi2OK;
}

/* ----- co-simulation ----- */
FMI2_Export fmi2Status fmi2SetRealInputDerivatives(fmi2Component c, const fmi2ValueReference vr[],
                                                   size_t n, const fmi2Integer order[],
                                                   const fmi2Real value[]) {
    (void)vr; (void)order; (void)value;
    bs2_log((bs_fmi2 *)c, fmi2Error, "logStatusError", "input derivatives are not supported");
    return n ? fmi2Error : fmi2OK;
}
FMI2_Export fmi2Status fmi2GetRealOutputDerivatives(fmi2Component c, const fmi2ValueReference vr[],
                                                    size_t n, const fmi2Integer order[],
                                                    fmi2Real value[]) {
    (void)vr; (void)order; (void)value;
    bs2_log((bs_fmi2 *)c, fmi2Error, "logStatusError", "output derivatives are not provided");
    return n ? fmi2Error : fmi2OK;
}

FMI2_Export fmi2Status fmi2DoStep(fmi2Component c, fmi2Real t, fmi2Real h, fmi2Boolean noSet) {
    bs_fmi2 *F = (bs_fmi2 *)c;
    (void)noSet;
#ifdef BS_CS
    if (fabs(t - F->M.t) > 1e-9 * (1.0 + fabs(t))) {
        bs2_log(F, fmi2Error, "logStatusError", "doStep: the communication point is not the FMU's time");
        return fmi2Error;
    }
    if (!bs_cs_advance(&F->cs_state, &F->M, t + h)) return bs2_failed(F);
    return fmi2OK;
#else
    (void)t; (void)h;
    bs2_log(F, fmi2Error, "logStatusError", "this FMU is for model exchange");
    return fmi2Error;
#endif
}

FMI2_Export fmi2Status fmi2CancelStep(fmi2Component c) { (void)c; return fmi2Error; }

FMI2_Export fmi2Status fmi2GetStatus(fmi2Component c, const fmi2StatusKind s, fmi2Status *v) {
    (void)c; (void)s;
    *v = fmi2OK;
    return fmi2OK;
}
FMI2_Export fmi2Status fmi2GetRealStatus(fmi2Component c, const fmi2StatusKind s, fmi2Real *v) {
    bs_fmi2 *F = (bs_fmi2 *)c;
    if (s == fmi2LastSuccessfulTime) { *v = F->M.t; return fmi2OK; }
    return fmi2Discard;
}
FMI2_Export fmi2Status fmi2GetIntegerStatus(fmi2Component c, const fmi2StatusKind s, fmi2Integer *v) {
    (void)c; (void)s; (void)v;
    return fmi2Discard;
}
FMI2_Export fmi2Status fmi2GetBooleanStatus(fmi2Component c, const fmi2StatusKind s, fmi2Boolean *v) {
    bs_fmi2 *F = (bs_fmi2 *)c;
    if (s == fmi2Terminated) { *v = F->M.terminate ? fmi2True : fmi2False; return fmi2OK; }
    return fmi2Discard;
}
FMI2_Export fmi2Status fmi2GetStringStatus(fmi2Component c, const fmi2StatusKind s, fmi2String *v) {
    (void)c; (void)s; (void)v;
    return fmi2Discard;
}
