/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/sampling/schedule_trace.c: --trace's values of the line of
 * McMahan et al., "Communication-Efficient Learning of Deep Networks from
 * Decentralized Data", AISTATS 2017, arXiv:1602.05629v4, Algorithm 1 that
 * the schedule's generation carries out before it draws S_t (l. 5,
 * schedule.c):
 *
 *   l. 4   m ← max(C·K, 1)
 *
 * Symbols:  K ↔ the clients (N of the problem)   m ↔ cfg->m
 *           (clients_per_round)   C ↔ m/K.
 *
 * The spec gives m itself (schedule.clients_per_round, docs/formats.md),
 * so the C the run stands for is m/K: max(⌊(m/K)·K⌋, 1) = m.  The schedule
 * is generated when the spec is read, before any sink exists
 * (pflref_schedule_generate has none), so the values are emitted here, in
 * front of the run's sink, once per round, right after the round's start:
 * every round draws its S_t with m.  They are INTERMEDIATE events
 * (recorded at no trajectory level; docs/formats.md), so no result or
 * vector changes.  A given schedule has no l. 4: the spec runner puts this
 * sink in front only of a generated one (ref/io/spec_run.c).
 *
 * The formula's text names the paper and not only "Alg. 1 l. 4": every
 * other algorithm has a line 4 of its own box, which this is not.
 * Cost: O(1) per event.
 */
#include "sampling/schedule_trace.h"

/* The trace's formula of l. 4 (the box of docs/algorithms/fedavg.md). */
static const char *const M_LINE =
    "McMahan et al. Alg. 1 l. 4: m ← max(C·K, 1)";

void pflref_schedule_trace_emit(void *ctx, const pflref_event *ev)
{
    const pflref_schedule_trace *k = ctx;
    pflref_trace_emit(k->next, ev->kind, ev->phase, ev->round, ev->client,
                      ev->step, ev->name, ev->value, ev->len, ev->formula);
    if (ev->kind != PFLREF_EV_ROUND_BEGIN || ev->round < 0 || k->K == 0)
        return;
    /* req: fedavg.alg1.l4 */
    const double K = (double)k->K;
    const double m = (double)k->cfg->m;
    const double C = m / K;
    pflref_trace_emit(k->next, PFLREF_EV_INTERMEDIATE, ev->phase, ev->round,
                      -1, -1, "K", &K, 1, M_LINE);
    pflref_trace_emit(k->next, PFLREF_EV_INTERMEDIATE, ev->phase, ev->round,
                      -1, -1, "C", &C, 1, M_LINE);
    pflref_trace_emit(k->next, PFLREF_EV_INTERMEDIATE, ev->phase, ev->round,
                      -1, -1, "m", &m, 1, M_LINE);
}
