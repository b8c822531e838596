/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/engine/round.c: the frame of one communication round that the
 * algorithms share: the whole frame in the averaging ones (FedAvg, Ditto,
 * Per-FedAvg, APFL; pFedMe computes its own server step, then publishes
 * it), the client's start and end in the others, and the phase after
 * training of FedAvg-FT and Per-FedAvg:
 *
 *   round start    w_t ← w, a ROUND_BEGIN event of w, acc ← 0
 *   Σ n            the participants' training-set sizes (the denominators
 *                  of the sample-weighted averages)
 *   client i       x ← the start point, CLIENT_BEGIN; ...; CLIENT_END
 *   server         w ← acc, then the divergence test and the SERVER event
 *
 * and the walk of the algorithms' checks over every scheduled
 * participation and batch (pflref_schedule_walk), which names the place of
 * the first one an algorithm refuses.
 *
 * No update of an algorithm lives here: each algorithm's file holds its
 * steps and its aggregation weights, and adds its terms to acc with
 * pflref_accumulate (core/vec.c) in ascending client id.
 *
 * Determinism: the sums run in list order, so they have one order.
 * Cost: O(P) per call (pflref_train_n: O(m)).
 */
#include <stdint.h>
#include <stdio.h>
#include "core/vec.h"
#include "engine/engine.h"

/* The contracts of the frame are on the declarations (engine.h); the
 * `round` job proves them (proofs/README.md). */

void pflref_round_begin(pflref_state *s, double *w_t,
                        const pflref_trace *trace)
{
    const size_t P = s->P;
    double *accum = s->accum;
    if (w_t != NULL)
        pflref_copy(w_t, s->w, P);
    pflref_trace_emit(trace, PFLREF_EV_ROUND_BEGIN, "train", (long)s->t, -1,
                      -1, "w", s->w, P, NULL);
    /*@ loop invariant 0 <= p <= P;
        loop assigns p, accum[0 .. P - 1];
        loop variant P - p;
     */
    for (size_t p = 0; p < P; p++)
        accum[p] = 0.0;
}

double pflref_train_n(const pflref_problem *problem, const size_t *ids,
                      size_t m)
{
    double n = 0.0;
    for (size_t j = 0; j < m; j++)
        n += (double)problem->clients[ids != NULL ? ids[j] : j].train.n;
    return n;
}

void pflref_client_begin(const pflref_state *s, size_t i, const char *name,
                         double *x, const double *from,
                         const pflref_trace *trace)
{
    if (from != NULL)
        pflref_copy(x, from, s->P);
    pflref_trace_emit(trace, PFLREF_EV_CLIENT_BEGIN, "train", (long)s->t,
                      (long)i, 0, name, x, s->P, NULL);
}

void pflref_client_end(const pflref_state *s, size_t i, const char *name,
                       const double *x, const pflref_trace *trace)
{
    pflref_trace_emit(trace, PFLREF_EV_CLIENT_END, "train", (long)s->t,
                      (long)i, -1, name, x, s->P, NULL);
}

pflref_status pflref_server_publish(pflref_state *s, const char *formula,
                                    const pflref_trace *trace,
                                    pflref_error *err)
{
    const long t = (long)s->t;
    if (!pflref_all_finite(s->w, s->P))
        return pflref_error_diverge(err, t, -1, -1, "w");
    pflref_trace_emit(trace, PFLREF_EV_SERVER, "train", t, -1, -1, "w", s->w,
                      s->P, formula);
    return PFLREF_OK;
}

pflref_status pflref_round_end(pflref_state *s, const char *formula,
                               const pflref_trace *trace, pflref_error *err)
{
    pflref_copy(s->w, s->accum, s->P);
    return pflref_server_publish(s, formula, trace, err);
}

void pflref_post_begin(const pflref_state *s, size_t i, double *theta,
                       const pflref_trace *trace)
{
    pflref_copy(theta, s->w, s->P);  /* θ_i ← w */
    pflref_trace_emit(trace, PFLREF_EV_CLIENT_BEGIN, "finetune", -1, (long)i,
                      0, "theta", theta, s->P, NULL);
}

void pflref_post_end(const pflref_state *s, size_t i, const double *theta,
                     const pflref_trace *trace)
{
    pflref_trace_emit(trace, PFLREF_EV_CLIENT_END, "finetune", -1, (long)i,
                      -1, "theta", theta, s->P, NULL);
}

/* err->where := the place of a refused participation (q = SIZE_MAX) or
 * batch q of participant j in round t. */
static pflref_status name_place(pflref_error *err, pflref_status st, size_t t,
                                size_t j, size_t q)
{
    if (err == NULL)
        return st;
    if (q == SIZE_MAX)
        snprintf(err->where, sizeof err->where,
                 "schedule.rounds[%zu].batches[%zu]", t, j);
    else
        snprintf(err->where, sizeof err->where,
                 "schedule.rounds[%zu].batches[%zu][%zu]", t, j, q);
    return st;
}

pflref_status pflref_schedule_walk(const pflref_schedule *schedule,
                                   pflref_participation_test participation,
                                   pflref_batch_test batch, const void *ctx,
                                   pflref_error *err)
{
    for (size_t t = 0; t < schedule->T; t++) {
        const pflref_round_plan *plan = &schedule->rounds[t];
        for (size_t j = 0; j < plan->m; j++) {
            const pflref_batches *b = &plan->batches[j];
            const size_t i = plan->clients[j];
            pflref_status st = participation != NULL
                                   ? participation(ctx, t, i, b, err)
                                   : PFLREF_OK;
            if (st != PFLREF_OK)
                return name_place(err, st, t, j, SIZE_MAX);
            for (size_t q = 0; batch != NULL && q < b->nsteps; q++) {
                const size_t nb = b->step_off[q + 1] - b->step_off[q];
                st = batch(ctx, i, b->idx + b->step_off[q], nb, err);
                if (st != PFLREF_OK)
                    return name_place(err, st, t, j, q);
            }
        }
    }
    return PFLREF_OK;
}
