/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/algorithms/fedavg_keep.c: FedAvg's round under bn.aggregate =
 * parameters_only, the reading of TsingZ0/PFLlib (d832e76f6a23,
 * system/flcore) for a model with batch normalisation:
 *
 *   clientbase.py:67-69   set_parameters copies model.parameters() only:
 *                         client k's running statistics r_μ, r_v (buffers,
 *                         not parameters) stay those its own model last
 *                         left, across rounds, trained or not; a client
 *                         that never trained keeps the initial model's
 *   serverbase.py:138-150 aggregate_parameters: global_model ←
 *                         deepcopy(uploaded_models[0]), its parameters()
 *                         zeroed and summed with weights n_k/m_t, so the
 *                         global's buffers are the first uploaded client's
 *                         (the first participant of S_t in the schedule's
 *                         order, ascending id: receive_models's
 *                         random.sample order is not data of a vector)
 *   serverbase.py:194-203 evaluate(): each client's own model, that is w's
 *                         parameters with client k's buffers
 *                         (evaluate_one, ref/engine/run.c)
 *
 * In the symbols of fedavg.c (Alg. 1 of McMahan et al. 2017), with B the
 * buffer entries of w and ¬B the others, and r_k client k's own buffers:
 *   ClientUpdate(k, w_t):  w ← (w_t on ¬B, r_k on B); local SGD as Alg. 1
 *                          (ref/engine/sgd.c); r_k ← w's B entries
 *   w_{t+1} on ¬B ← Σ_{k∈S_t} (n_k/m_t) w^k_{t+1}   (Alg. 1 l. 9, as
 *                          fedavg.weights says)
 *   w_{t+1} on B  ← w^{k₁}_{t+1} on B, k₁ = the first participant
 * r_k starts as w⁰'s buffers.  On a model without batch normalisation (no
 * buffer) the round is FedAvg's (pflref_fedavg_round_with).
 *
 * FedBN keeps γ, β, r_μ and r_v local (its bn group is personal); this
 * reading keeps only r_μ, r_v local and averages γ, β.
 *
 * Determinism: clients train and are summed in ascending id.
 * Cost per round: FedAvg's, plus O(P) per participant; N×P doubles for the
 * clients' own models (allocated at the first round; ref/engine/bn_own.c,
 * shared with Ditto's round, ref/algorithms/ditto.c).
 */
#include <stdlib.h>
#include <string.h>
#include "algorithms/algorithms.h"
#include "engine/bn_own.h"
#include "engine/work.h"

static const char *const CLIENT_LINE =
    "Alg. 1 ClientUpdate: w ← w − η ∇ℓ(w; b)";
static const char *const SERVER_LINE[] = {
    "Alg. 1: w_{t+1} ← Σ_{k∈S_t} (n_k/m_t) w^k_{t+1} on parameters(); "
    "r_μ, r_v ← the first uploader's",
    "w_{t+1} ← (1/m) Σ_{k∈S_t} w^k_{t+1} on parameters(); r_μ, r_v ← the "
    "first uploader's",
    "w_{t+1} ← Σ_{k∈S_t} (n_k/n) w^k_{t+1} + Σ_{k∉S_t} (n_k/n) w_t on "
    "parameters(); r_μ, r_v ← the first uploader's"};

static pflref_status round_keep(pflref_state *s,
                                const pflref_round_plan *plan,
                                pflref_fedavg_work *work,
                                const pflref_trace *trace, pflref_error *err)
{
    const pflref_problem *pr = s->problem;
    const pflref_model *m = &pr->model;
    const int weights = s->hyper->fedavg.weights;
    const size_t P = s->P;
    double *w_local = work->w_local;
    pflref_status st = pflref_bn_own_alloc(s, err);
    if (st != PFLREF_OK)
        return st;
    pflref_round_begin(s, work->w_t, trace);
    const double m_t = pflref_train_n(pr, plan->clients, plan->m);
    const double n = pflref_train_n(pr, NULL, s->N);
    size_t j = 0;
    for (size_t k = 0; k < s->N; k++) {
        const double n_k = (double)pr->clients[k].train.n;
        if (j >= plan->m || plan->clients[j] != k) {
            if (weights == PFLREF_FEDAVG_WEIGHTS_ALL_KEEP_OLD)
                pflref_accumulate(s->accum, n_k / n, work->w_t, P);
            continue;
        }
        double *own = s->bn_own + k * P;
        /* ClientUpdate(k, w_t): set_parameters copies parameters() into
         * client k's model, whose buffers stay its own (clientbase.py:67) */
        memcpy(w_local, work->w_t, P * sizeof *w_local);
        pflref_bn_copy_buffers(m, w_local, own);
        pflref_client_begin(s, k, "w_local", w_local, NULL, trace);
        pflref_client_lr(s, k, 0, 1);
        pflref_optim_begin(s, k);
        const pflref_local_sgd job = pflref_local_sgd_plain(
            s, k, &plan->batches[j], s->hyper->eta, "w_local", CLIENT_LINE);
        st = pflref_local_sgd_run(&job, w_local, work->g, s->ws, trace, err);
        if (st != PFLREF_OK)
            return st;
        pflref_client_end(s, k, "w_local", w_local, trace);
        pflref_bn_copy_buffers(m, own, w_local);   /* r_k: what k's model now holds */
        double c;
        switch (weights) {
        case PFLREF_FEDAVG_WEIGHTS_UNIFORM:
            c = 1.0 / (double)plan->m;
            break;
        case PFLREF_FEDAVG_WEIGHTS_ALL_KEEP_OLD:
            c = n_k / n;
            break;
        default:
            c = n_k / m_t;
            break;
        }
        pflref_accumulate(s->accum, c, w_local, P);
        j++;
    }
    /* the global's buffers: deepcopy(uploaded_models[0]) (serverbase.py:
     * 141), the first participant's r_k; its parameters() the sum */
    if (plan->m > 0)
        pflref_bn_copy_buffers(m, s->accum,
                               s->bn_own + pflref_bn_first_upload(plan, plan->clients[0]) * P);
    return pflref_round_end(s, SERVER_LINE[weights], trace, err);
}

void pflref_fedavg_keep_load(pflref_state *s, pflref_state_loader load,
                             void *ctx, long t)
{
    /* r_k: the buffers of client k's last w_local (CLIENT_END) up to round
     * t in the candidate's records; a client that never trained keeps
     * w⁰'s (ref/engine/bn_own.c) */
    pflref_bn_own_load(s, load, ctx, t);
}

pflref_status pflref_fedavg_round_any(pflref_state *s,
                                      const pflref_round_plan *plan,
                                      pflref_fedavg_work *work,
                                      const pflref_trace *trace,
                                      pflref_error *err)
{
    if (pflref_bn_keeps_own(s))
        return round_keep(s, plan, work, trace, err);
    return pflref_fedavg_round_with(s, plan, work, trace, err);
}
