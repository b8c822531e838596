/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/algorithms/fedpac_check.c: FedPAC's check before round 0
 * (ref/algorithms/fedpac.c, docs/algorithms/fedpac.md): a classifier with
 * a feature extractor f_θ and a linear head φ (batch normalisation as
 * layers of a layer list), at most FEDPAC_QP_MAX participants a round,
 * fedpac.alpha_eps under the renormalised rule, the client optimizers'
 * decay scope, τ_φ classifier steps in every participation and batches
 * that fit the feature buffers. */
#include <stdio.h>
#include "algorithms/algorithms.h"
#include "algorithms/body.h"
#include "algorithms/fedpac_qp.h"

/* The model must be a classifier with a body f_θ and a linear head: an
 * mlp without batch normalisation, or a layer list whose last layer is
 * dense after at least one layer (batchnorm layers in its body taken:
 * the statistics and centroids in evaluation mode, the steps in training
 * mode; bn_features). */
static pflref_status check_model(const pflref_model *m, pflref_error *err)
{
    static const pflref_body_words words = {
        "fedpac needs a feature extractor f_θ and a linear classifier φ: "
        "an mlp (its hidden layer) or a layer list (every layer before the "
        "last dense one); the model is ", ", which has no feature extractor",
        "fedpac needs a linear classifier φ: the layer list's last layer "
        "must be dense after at least one layer (the feature extractor)",
        "fedpac takes batch normalisation as batchnorm1d/batchnorm2d "
        "layers of a layer list, not as the mlp's bn option (whose "
        "features have no evaluation-mode pass here): write the mlp as a "
        "layer list",
        "fedpac needs a classifier (cross-entropy): its centroids and "
        "statistics are per class"};
    /* req: fedpac.model */
    if (!m->bn || m->kind != PFLREF_MODEL_LAYERS)
        return pflref_body_check(m, &words, err);
    /* pflref_body_check's tests but its refusal of batch normalisation */
    pflref_model plain = *m;
    plain.bn = 0;
    return pflref_body_check(&plain, &words, err);
}

/* A participation must hold the τ_φ classifier steps. */
static pflref_status has_tau_phi(const void *ctx, size_t t, size_t client,
                                 const pflref_batches *b, pflref_error *err)
{
    const size_t tau_phi = *(const size_t *)ctx;
    (void)t;
    if (b->nsteps >= tau_phi)
        return PFLREF_OK;
    return pflref_error_set(
        err, PFLREF_EINVAL, NULL,
        "fedpac takes its fedpac.tau_phi = %zu classifier steps from the "
        "first batches, and client %zu has %zu", tau_phi, client, b->nsteps);
}

/* A batch must fit the feature buffers (the largest training set). */
static pflref_status batch_fits(const void *ctx, size_t client,
                                const size_t *idx, size_t nb,
                                pflref_error *err)
{
    const size_t n_max = *(const size_t *)ctx;
    (void)client;
    (void)idx;
    if (nb <= n_max)
        return PFLREF_OK;
    return pflref_error_set(
        err, PFLREF_EINVAL, NULL,
        "fedpac takes batches of at most %zu samples (the largest training "
        "set, which sizes its feature buffers); this one has %zu (indices "
        "repeated)", n_max, nb);
}

pflref_status pflref_fedpac_check(const pflref_problem *problem,
                                  const pflref_hyper *hyper,
                                  const pflref_schedule *schedule,
                                  const unsigned char *mask,
                                  pflref_error *err)
{
    (void)mask;
    pflref_status st = check_model(&problem->model, err);
    if (st != PFLREF_OK)
        return st;
    for (size_t t = 0; t < schedule->T; t++) {
        if (schedule->rounds[t].m <= FEDPAC_QP_MAX)
            continue;
        char where[PFLREF_WHERE_MAX];
        snprintf(where, sizeof where, "schedule.rounds[%zu].clients", t);
        /* req: fedpac.qp.max */
        return pflref_error_set(
            err, PFLREF_EINVAL, where,
            "fedpac solves its classifier weights α_i exactly over every "
            "support, for at most %d participants a round; this round has "
            "%zu", FEDPAC_QP_MAX, schedule->rounds[t].m);
    }
    /* req: fedpac.alpha_small */
    for (size_t t = 0; hyper->fedpac.alpha_small ==
                           PFLREF_FEDPAC_ALPHA_RENORMALISED &&
                       t < schedule->T; t++)
        if (hyper->fedpac.alpha_eps * (double)schedule->rounds[t].m >= 1.0)
            return pflref_error_set(
                err, PFLREF_EINVAL, "algorithm.hyperparameters.fedpac.alpha_eps",
                "fedpac.alpha_eps = %g must be below 1/m = 1/%zu (round "
                "%zu's participants) under fedpac.alpha_small = renormalised: "
                "the largest α_ij ≥ 1/m must survive, or the sum is 0",
                hyper->fedpac.alpha_eps, schedule->rounds[t].m, t);
    /* req: fedpac.opt */
    if (!pflref_optim_is_plain(&hyper->opt) &&
        (hyper->opt.decay_scope == PFLREF_OPT_SCOPE_SHARED ||
         hyper->opt.decay_scope == PFLREF_OPT_SCOPE_PERSONAL))
        return pflref_error_set(
            err, PFLREF_EINVAL, "algorithm.switches.opt.decay_scope",
            "fedpac has no split of shared and personal blocks (its two "
            "optimizers step the classifier φ_i and the feature extractor "
            "θ in turn, each on its own blocks); opt.decay_scope takes all "
            "or weights here");
    const size_t tau_phi = hyper->fedpac.tau_phi;
    st = pflref_schedule_walk(schedule, has_tau_phi, NULL, &tau_phi, err);
    if (st != PFLREF_OK)
        return st;
    const size_t n_max = pflref_largest_train(problem);
    return pflref_schedule_walk(schedule, NULL, batch_fits, &n_max, err);
}
