/* ref/finetune.c: FedAvg followed by local fine-tuning (FedAvg-FT, "global
 * then fine-tune"; seed 000 §4, Code 14.7.1; shared/spec notes §5.1).
 *
 * Training rounds are FedAvg's (ref/fedavg.c, with its fedavg.weights
 * switch).  After the last round, every client i fine-tunes a copy of the
 * final global model w on its own data (the schedule's post phase):
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
 *             stay at w); needs a split with a personal block
 *
 * Cost: FedAvg's rounds, then Σ_i S_ft gradients.
 */
#include <string.h>
#include "algorithms/algorithms.h"

static const char *const FT_LINE =
    "θ_i ← θ_i − η_ft (∇f_i(θ_i; D) + μ_ft (θ_i − w))";

static pflref_status finetune_init(pflref_state *s, pflref_error *err)
{
    if (s->hyper->finetune.scope == PFLREF_FINETUNE_PERSONAL) {
        size_t personal = 0;
        for (size_t p = 0; p < s->P; p++)
            personal += s->mask[p];
        if (personal == 0)
            return pflref_error_set(
                err, PFLREF_EINVAL, "split.personal",
                "finetune.scope = personal needs a split with at least one "
                "personal block");
    }
    return PFLREF_OK;
}

static pflref_status finetune_finish(pflref_state *s,
                                     const pflref_schedule *schedule,
                                     const pflref_trace *trace,
                                     pflref_error *err)
{
    const pflref_problem *pr = s->problem;
    const size_t P = s->P;
    const unsigned char *mask =
        s->hyper->finetune.scope == PFLREF_FINETUNE_PERSONAL ? s->mask : NULL;
    double *g = s->scratch;

    for (size_t i = 0; i < s->N; i++) {
        double *theta = s->v + i * P;
        memcpy(theta, s->w, P * sizeof *theta);  /* θ_i ← w */
        pflref_trace_emit(trace, PFLREF_EV_CLIENT_BEGIN, "finetune", -1,
                          (long)i, 0, "theta", theta, P, NULL);
        const pflref_local_sgd job = {
            &pr->model, &pr->clients[i].train, &schedule->post[i],
            s->hyper->eta_ft, s->hyper->mu_ft, s->w, mask, "finetune",
            "theta", FT_LINE, -1, (long)i};
        pflref_status st = pflref_local_sgd_run(&job, theta, g, s->ws,
                                                trace, err);
        if (st != PFLREF_OK)
            return st;
        pflref_trace_emit(trace, PFLREF_EV_CLIENT_END, "finetune", -1,
                          (long)i, -1, "theta", theta, P, NULL);
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
    .init = finetune_init,
    .round = pflref_fedavg_round,
    .finish = finetune_finish,
};
