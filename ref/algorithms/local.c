/* ref/local_only.c: the local-only baseline: every client trains its own
 * model v_i from the initial parameters w⁰ on its own data only, and nothing
 * is ever communicated (the "purely local" column of seed 000, Code 14.7.1).
 *
 * One round t, for each participant i of the schedule:
 *     v_i ← v_i − η ∇ℓ(v_i; b)     for each local batch b   (ref/local.c)
 * v_i starts at w⁰ and persists across rounds; a client outside a round's
 * participants keeps its v_i.  With all clients, one round and S steps this
 * is S steps of plain (minibatch) gradient descent per client.
 *
 * Symbols:  v_i ↔ s->v + i·P   w⁰ ↔ s->w0   η ↔ hyper->eta
 * Cost per round: Σ_i (local steps × one gradient).
 */
#include <stddef.h>
#include "algorithms/algorithms.h"

static const char *const LOCAL_LINE = "v_i ← v_i − η ∇ℓ(v_i; b)";

static pflref_status local_only_round(pflref_state *s,
                                      const pflref_round_plan *plan,
                                      const pflref_trace *trace,
                                      pflref_error *err)
{
    const pflref_problem *pr = s->problem;
    const size_t P = s->P;
    const long t = (long)s->t;
    double *g = s->scratch;

    for (size_t j = 0; j < plan->m; j++) {
        const size_t i = plan->clients[j];
        double *v_i = s->v + i * P;
        pflref_trace_emit(trace, PFLREF_EV_CLIENT_BEGIN, "train", t, (long)i,
                          0, "v", v_i, P, NULL);
        const pflref_local_sgd job = {
            &pr->model, &pr->clients[i].train, &plan->batches[j],
            s->hyper->eta, 0.0, NULL, NULL, "train", "v", LOCAL_LINE,
            t, (long)i};
        pflref_status st = pflref_local_sgd_run(&job, v_i, g, s->ws, trace,
                                                err);
        if (st != PFLREF_OK)
            return st;
        pflref_trace_emit(trace, PFLREF_EV_CLIENT_END, "train", t, (long)i,
                          -1, "v", v_i, P, NULL);
    }
    return PFLREF_OK;
}

const pflref_algorithm pflref_local_only = {
    .name = "local",
    .title = "Local only (each client trains alone; no communication)",
    .has_personal = 1,
    .personal_name = "v",
    .n_eval = 1,
    .eval = {{"local", PFLREF_SOURCE_PERSONAL}},
    .round = local_only_round,
};
