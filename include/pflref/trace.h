/* SPDX-License-Identifier: GPL-3.0-or-later */
/* pflref/trace.h: the events an algorithm emits while it runs.
 *
 * An algorithm never prints; it hands each intermediate value to a trace
 * sink.  The CLI's --trace prints them the way the seeds' worked examples
 * are written, and the trajectory recorder keeps them for the result and for
 * checking a candidate step by step.  A NULL sink (or NULL emit) ignores
 * everything.
 */
#ifndef PFLREF_TRACE_H
#define PFLREF_TRACE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    PFLREF_EV_ROUND_BEGIN = 0,  /* value: the global model at round start  */
    PFLREF_EV_CLIENT_BEGIN = 1, /* value: the client's starting iterate    */
    PFLREF_EV_STEP = 2,         /* value: an iterate after a local step    */
    PFLREF_EV_CLIENT_END = 3,   /* value: what the client sends / keeps    */
    PFLREF_EV_SERVER = 4,       /* value: the server's new global model    */
    PFLREF_EV_NOTE = 5,         /* value: any other named quantity         */
    PFLREF_EV_FINAL = 6,        /* value: the final state ("w", or client
                                   i's "v"), emitted once after the run    */
    PFLREF_EV_INTERMEDIATE = 7  /* value: an intermediate a box line names
                                   that the result does not keep: --trace
                                   prints it, no trajectory records it     */
} pflref_event_kind;

typedef struct {
    pflref_event_kind kind;
    const char *phase;     /* "train" (the rounds), the name of the phase
                              after training ("finetune"), or "final"     */
    long round;            /* t, 0-based; −1 when not in a round             */
    long client;           /* i, 0-based; −1 for server-side events          */
    long step;             /* local step s, 1-based after the step; 0 for
                              the starting iterate; −1 when not a step       */
    const char *name;      /* the paper's symbol: "w", "w_local", "theta"... */
    const double *value;   /* len entries (borrowed for the call only)       */
    size_t len;
    const char *formula;   /* the paper line implemented, or NULL            */
} pflref_event;

typedef struct {
    void (*emit)(void *ctx, const pflref_event *ev);
    void *ctx;
} pflref_trace;

/* Build an event and hand it to tr (no-op for a NULL tr or emit); it
 * reads value[0..len−1].  For the proofs of the algorithms' call sites
 * (proofs/README.md): its precondition is checked at every proved call;
 * that it changes no memory of the run is an assumption (the sink writes
 * only its own records, apart from the run's state, schedule and
 * buffers). */
/*@ requires len == 0 || \valid_read(value + (0 .. len - 1));
    assigns \nothing;
 */
void pflref_trace_emit(const pflref_trace *tr, pflref_event_kind kind,
                       const char *phase, long round, long client, long step,
                       const char *name, const double *value, size_t len,
                       const char *formula);

/* A recorder that keeps events as a trajectory.  Level:
 *   PFLREF_RECORD_NONE    nothing
 *   PFLREF_RECORD_ROUND   CLIENT_END, SERVER, NOTE and FINAL events
 *   PFLREF_RECORD_STEP    every event but INTERMEDIATE ones (at no level:
 *                         a result is the same with or without them)    */
typedef enum {
    PFLREF_RECORD_NONE = 0,
    PFLREF_RECORD_ROUND = 1,
    PFLREF_RECORD_STEP = 2
} pflref_record_level;

typedef struct {
    pflref_event_kind kind;
    const char *phase;
    long round, client, step;
    const char *name;
    size_t len;
    size_t offset;          /* into the recorder's value store */
} pflref_record;

typedef struct {
    pflref_record_level level;
    size_t count, capacity;
    pflref_record *records;
    size_t nvalues, value_capacity;
    double *values;
    int failed;             /* 1 when an allocation failed (records lost) */
} pflref_trajectory;

void pflref_trajectory_init(pflref_trajectory *tj, pflref_record_level level);
void pflref_trajectory_free(pflref_trajectory *tj);
/* The emit function of a recorder; ctx is a pflref_trajectory *. */
void pflref_trajectory_emit(void *ctx, const pflref_event *ev);

/* The name of an event kind in results and golden files: "round_begin",
 * "client_begin", "step", "client_end", "server", "note", "final"; and
 * "intermediate" (never in a file: pflref_event_kind_parse refuses it). */
const char *pflref_event_kind_name(pflref_event_kind kind);
/* The kind named `name`; 0 when the name is unknown, else 1 and *kind. */
int pflref_event_kind_parse(const char *name, pflref_event_kind *kind);

/* A sink that forwards each event to two sinks (either may be NULL). */
typedef struct {
    const pflref_trace *first;
    const pflref_trace *second;
} pflref_trace_tee;
void pflref_trace_tee_emit(void *ctx, const pflref_event *ev);

#ifdef __cplusplus
}
#endif
#endif
