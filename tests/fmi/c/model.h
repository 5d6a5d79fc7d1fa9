/* What a test model sees of the FMI shell (shell.c): the event result of one step of its
 * event iteration. */
#ifndef BLOCKSIM_TEST_MODEL_H
#define BLOCKSIM_TEST_MODEL_H
#include <math.h>

typedef struct {
    int states_changed;  /* valuesOfContinuousStatesChanged */
    int next_defined;    /* nextEventTimeDefined */
    double next_time;
    int terminate;       /* terminateSimulation */
    int again;           /* newDiscreteStatesNeeded */
} Event;
#endif
