/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/algorithms/finetune.c: FedAvg followed by local fine-tuning
 * (FedAvg-FT, "global then fine-tune"; seed 000 §4, Code 14.7.1; shared/spec
 * notes §5.1).
 *
 * Training rounds are FedAvg's (ref/algorithms/fedavg.c, with its
 * fedavg.weights switch).  After the last round, every client i fine-tunes
 * a copy of the final global model w on its own data (the schedule's post
 * phase):
 *
 *   θ_i ← w
 *   repeat S_ft times (batch D from the post schedule):
 *       θ_i ← θ_i − η_ft (∇f_i(θ_i; D) + μ_ft (θ_i − w))
 *
 * and θ_i is client i's personalized model; w itself does not change.
 * μ_ft = 0 is plain fine-tuning (the seed's); μ_ft > 0 pulls θ_i toward w.
 *
 * Symbols:  w ↔ s->w   θ_i ↔ s->v + i·P   η_ft ↔ hyper->eta_ft
 *           μ_ft ↔ hyper->mu_ft   S_ft ↔ schedule->post[i].nsteps
 *
 * Switch finetune.scope (default first):
 *   full      every parameter moves
 *   personal  only the split's personal blocks move (the shared blocks
 *             stay at w); needs a split with a personal block (refused by
 *             the check otherwise)
 *
 * State and work: w and θ_i are the state's w and v_i; the buffers are
 * finetune_work (FedAvg's pflref_fedavg_work for the rounds, and the
 * fine-tuning gradient).
 *
 * Cost: FedAvg's rounds, then Σ_i S_ft gradients.
 */
#include <stdlib.h>
#include "algorithms/algorithms.h"
#include "engine/work.h"

static const char *const FT_LINE =
    "θ_i ← θ_i − η_ft (∇f_i(θ_i; D) + μ_ft (θ_i − w))";

/* FedAvg-FT's work buffers (zero-filled, none carried between rounds). */
typedef struct {
    pflref_work list;          /* the allocations (ref/engine/work.h)     */
    pflref_fedavg_work train;  /* FedAvg's rounds: w_t, w^k, ∇ℓ (P each)  */
    double *g;                 /* P: ∇f_i(θ_i; D), the fine-tuning gradient */
} finetune_work;

static void *finetune_work_alloc(const pflref_problem *problem,
                                 const pflref_hyper *hyper)
{
    (void)hyper;
    const size_t P = problem->model.P;
    finetune_work *ws = calloc(1, sizeof *ws);
    if (ws == NULL)
        return NULL;
    pflref_fedavg_work_alloc(&ws->train, &ws->list, P);
    ws->g = pflref_work_doubles(&ws->list, P, 1);
    return pflref_work_ready(ws);
}

/* finetune.scope = personal needs at least one personal parameter. */
static pflref_status finetune_check(const pflref_problem *problem,
                                    const pflref_hyper *hyper,
                                    const pflref_schedule *schedule,
                                    const unsigned char *mask,
                                    pflref_error *err)
{
    (void)schedule;
    if (hyper->finetune.scope != PFLREF_FINETUNE_PERSONAL)
        return PFLREF_OK;
    size_t personal = 0;
    for (size_t p = 0; mask != NULL && p < problem->model.P; p++)
        personal += mask[p];
    if (personal == 0)
        return pflref_error_set(
            err, PFLREF_EINVAL, "split.personal",
            "finetune.scope = personal needs a split with at least one "
            "personal block");
    return PFLREF_OK;
}

/* The training rounds: FedAvg's, with FedAvg's buffers. */
static pflref_status finetune_round(pflref_state *s,
                                    const pflref_round_plan *plan,
                                    const pflref_trace *trace,
                                    pflref_error *err)
{
    /* req: finetune.eq1 */
    finetune_work *ws = s->extra;
    return pflref_fedavg_round_with(s, plan, &ws->train, trace, err);
}

static pflref_status finetune_finish(pflref_state *s,
                                     const pflref_schedule *schedule,
                                     const pflref_trace *trace,
                                     pflref_error *err)
{
    const pflref_hyper *h = s->hyper;
    const double eta_ft = h->eta_ft, mu_ft = h->mu_ft;
    const unsigned char *mask =
        h->finetune.scope == PFLREF_FINETUNE_PERSONAL ? s->mask : NULL;
    finetune_work *ws = s->extra;

    for (size_t i = 0; i < s->N; i++) {
        double *theta = s->v + i * s->P;
        /* req: finetune.eq2 */
        pflref_post_begin(s, i, theta, trace);  /* θ_i ← w */
        pflref_optim_begin(s, i);  /* the fine-tuning optimizer (opt.state) */
        /* req: finetune.eq3 */
        const pflref_local_sgd job = {
            .model = &s->problem->model,
            .data = &s->problem->clients[i].train,
            .batches = &schedule->post[i],
            .eta = eta_ft,
            .mu = mu_ft,
            .ref = s->w,
            .mask = mask,
            .phase = "finetune",
            .name = "theta",
            .formula = FT_LINE,
            .round = -1,
            .client = (long)i,
            .opt = pflref_optim_get(s, i, 1),   /* its own optimizer */
            .bn = &s->hyper->bn,
        };
        pflref_status st = pflref_local_sgd_run(&job, theta, ws->g, s->ws,
                                                trace, err);
        if (st != PFLREF_OK)
            return st;
        /* req: finetune.eq4 */
        pflref_post_end(s, i, theta, trace);
    }
    return PFLREF_OK;
}

const pflref_algorithm pflref_finetune = {
    .name = "finetune",
    .title = "FedAvg, then local fine-tuning (FedAvg-FT)",
    .has_global = 1,
    .has_personal = 1,
    .needs_post = 1,
    .n_eval = 2,
    .eval = {{"global", PFLREF_SOURCE_GLOBAL},
             {"personalized", PFLREF_SOURCE_PERSONAL}},
    .check = finetune_check,
    .work_alloc = finetune_work_alloc,
    .work_free = pflref_work_free,
    .round = finetune_round,
    .finish = finetune_finish,
    .opt_slots = 2,   /* 0: FedAvg's ClientUpdate; 1: the fine-tuning, a
                         new optimizer over θ_i (opt.state = client: kept
                         per client beside the training rounds') */
};
