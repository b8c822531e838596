/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/engine/sgd.c: the local minibatch SGD solver that several algorithms
 * share (with an optional proximal term and an optional parameter mask),
 * its batch gradient, the plain job of one client in one round, and the
 * broadcast of the shared block u to every client's (u, v_i).
 *
 * Local SGD, one step s on batch D_s (mean loss over the batch):
 *
 *     θ ← θ − η (∇f(θ; D_s) + μ (θ − ref))        entries with mask = 1
 *
 * μ = 0 gives plain SGD (FedAvg's ClientUpdate, McMahan et al. 2017,
 * Alg. 1); μ > 0 gives the proximal fine-tuning step (FedAvg-FT with μ_ft).
 * Cost per step: one gradient (one pass over the batch) plus O(P).
 */
#include <math.h>
#include <stddef.h>
#include "engine/engine.h"

void pflref_share_to_all(const pflref_state *s)
{
    for (size_t i = 0; i < s->N; i++)
        pflref_compose(s->shared, s->w, s->v + i * s->P, s->v + i * s->P,
                       s->P);
}

pflref_local_sgd pflref_local_sgd_plain(const pflref_state *s, size_t i,
                                        const pflref_batches *b, double eta,
                                        const char *name,
                                        const char *formula)
{
    const pflref_local_sgd job = {
        .model = &s->problem->model,
        .data = &s->problem->clients[i].train,
        .batches = b,
        .eta = eta,
        .mu = 0.0,
        .ref = NULL,
        .mask = NULL,
        .phase = "train",
        .name = name,
        .formula = formula,
        .round = (long)s->t,
        .client = (long)i,
    };
    return job;
}

pflref_status pflref_batch_grad(const pflref_model *m, const double *theta,
                               const pflref_data *data,
                               const pflref_batches *b, size_t s,
                               pflref_model_workspace *ws, double *g,
                               long round, long client, pflref_error *err)
{
    const size_t nb = b->step_off[s + 1] - b->step_off[s];
    pflref_status st = pflref_model_grad(m, theta, data, b->idx + b->step_off[s],
                                         nb, ws, g, NULL);
    if (st != PFLREF_OK)
        return pflref_error_set(err, st, "schedule",
                                "gradient failed at round %ld, client "
                                "%ld, step %zu (batch of %zu samples)",
                                round, client, s + 1, nb);
    return PFLREF_OK;
}

pflref_status pflref_local_sgd_step(const pflref_local_sgd *job, size_t s,
                                    double *theta, double *g,
                                    pflref_model_workspace *ws,
                                    const pflref_trace *trace,
                                    pflref_error *err)
{
    const pflref_model *m = job->model;
    const pflref_batches *b = job->batches;
    const size_t P = m->P;
    const int prox = job->mu != 0.0 && job->ref != NULL;
    pflref_status st = pflref_batch_grad(m, theta, job->data, b, s, ws, g,
                                         job->round, job->client, err);
    if (st != PFLREF_OK)
        return st;
    /* θ ← θ − η (∇f(θ; D_s) + μ (θ − ref)) */
    for (size_t p = 0; p < P; p++) {
        if (job->mask != NULL && !job->mask[p])
            continue;
        double d = g[p];
        if (prox)
            d += job->mu * (theta[p] - job->ref[p]);
        theta[p] -= job->eta * d;
    }
    if (!pflref_all_finite(theta, P))
        return pflref_error_diverge(err, job->round, job->client,
                                    (long)(s + 1), job->name);
    pflref_trace_emit(trace, PFLREF_EV_STEP, job->phase, job->round,
                      job->client, (long)(s + 1), job->name, theta, P,
                      job->formula);
    return PFLREF_OK;
}

pflref_status pflref_local_sgd_run(const pflref_local_sgd *job, double *theta,
                                   double *g, pflref_model_workspace *ws,
                                   const pflref_trace *trace,
                                   pflref_error *err)
{
    for (size_t s = 0; s < job->batches->nsteps; s++) {
        pflref_status st = pflref_local_sgd_step(job, s, theta, g, ws, trace,
                                                 err);
        if (st != PFLREF_OK)
            return st;
    }
    return PFLREF_OK;
}
