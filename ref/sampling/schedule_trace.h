/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/sampling/schedule_trace.h: --trace's values of the generated
 * schedule's own line, McMahan et al., AISTATS 2017 (arXiv:1602.05629v4),
 * Alg. 1 l. 4 "m ← max(C·K, 1)" (schedule_trace.c). */
#ifndef PFLREF_SAMPLING_SCHEDULE_TRACE_H
#define PFLREF_SAMPLING_SCHEDULE_TRACE_H

#include <stddef.h>
#include "pflref/schedule.h"
#include "pflref/trace.h"

/* A sink in front of `next` for a run on a schedule generated from cfg
 * for K clients: it forwards every event unchanged and, after each round's
 * ROUND_BEGIN event, emits the round's l. 4 as INTERMEDIATE events (phase
 * "train", that round, server-side): "K" (the clients), "C" (the fraction
 * m/K the configuration's m stands for) and "m".  Owns nothing: cfg and
 * next are borrowed for as long as the sink is used. */
typedef struct {
    const pflref_trace *next;
    const pflref_schedule_config *cfg;
    size_t K;
} pflref_schedule_trace;

void pflref_schedule_trace_emit(void *ctx, const pflref_event *ev);

#endif
