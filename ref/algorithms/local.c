/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/algorithms/local.c: the local-only baseline ("local"): every client
 * trains its own model v_i from the initial parameters w⁰ on its own data
 * only, and nothing is ever communicated (the "purely local" column of
 * seed 000, Code 14.7.1).
 *
 * One round t, for each participant i of the schedule:
 *     v_i ← v_i − η ∇ℓ(v_i; b)     for each local batch b   (ref/engine/sgd.c)
 * v_i starts at w⁰ and persists across rounds; a client outside a round's
 * participants keeps its v_i.  With all clients, one round and S steps this
 * is S steps of plain (minibatch) gradient descent per client.
 *
 * Symbols:  v_i ↔ s->v + i·P   w⁰ ↔ s->w0   η ↔ hyper->eta
 * State and work: v_i is the state's; the one work buffer is local_work.
 * Cost per round: Σ_i (local steps × one gradient).
 */
#include <stdlib.h>
#include "algorithms/algorithms.h"
#include "engine/work.h"

static const char *const LOCAL_LINE = "v_i ← v_i − η ∇ℓ(v_i; b)";

/* The work buffer of "local" (zero-filled, not carried between rounds). */
typedef struct {
    pflref_work list; /* the allocations (ref/engine/work.h)                */
    double *g;        /* P: ∇ℓ(v_i; b), the local gradient                  */
} local_work;

static void *local_work_alloc(const pflref_problem *problem,
                              const pflref_hyper *hyper)
{
    (void)hyper;
    local_work *ws = calloc(1, sizeof *ws);
    if (ws == NULL)
        return NULL;
    ws->g = pflref_work_doubles(&ws->list, problem->model.P, 1);
    return pflref_work_ready(ws);
}

static pflref_status local_only_round(pflref_state *s,
                                      const pflref_round_plan *plan,
                                      const pflref_trace *trace,
                                      pflref_error *err)
{
    local_work *ws = s->extra;

    for (size_t j = 0; j < plan->m; j++) {
        const size_t i = plan->clients[j];
        double *v_i = s->v + i * s->P;
        /* req: local.eq1 */
        pflref_client_begin(s, i, "v", v_i, NULL, trace);
        /* req: local.eq2 */
        pflref_client_lr(s, i, 0, 1);  /* η of i's train() (lr.count) */
        pflref_optim_begin(s, i);      /* its optimizer (opt.state) */
        const pflref_local_sgd job = pflref_local_sgd_plain(
            s, i, &plan->batches[j], s->hyper->eta, "v", LOCAL_LINE);
        pflref_status st = pflref_local_sgd_run(&job, v_i, ws->g, s->ws,
                                                trace, err);
        if (st != PFLREF_OK)
            return st;
        pflref_client_end(s, i, "v", v_i, trace);
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
    .work_alloc = local_work_alloc,
    .work_free = pflref_work_free,
    .round = local_only_round,
    .opt_slots = 1,   /* the client's train() optimizer */
};
