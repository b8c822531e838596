/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/models/features_bn.c: a layer list's body features in evaluation
 * or training mode, and the body's gradient from a signal on them through
 * a training pass (ref/models/features_bn.h).
 *
 * pflref_model_features refuses a layer list with batch normalisation:
 * its callers (MOON, FedProto, PFLEGO) treat f_θ(x_j) as a function of
 * x_j alone.  An algorithm that says which of torch's modes each pass
 * runs in (FedPAC: evaluation for its statistics and centroids,
 * clientpac.py:116-119; training for its alignment term, :26, :68) calls
 * these instead.  The layer machinery is layers_ops.c's: ws->bn_train
 * selects the batchnorm layers' mode for the pass (pflref_bn_forward),
 * and the backward pass through a batchnorm layer is the training-mode
 * one on the pass's x̂ and s (pflref_bn_backward).
 * Dropout is refused (its masks would be a third input of the pass).
 */
#include <string.h>
#include "core/args.h"
#include "core/mca.h"
#include "models/models.h"
#include "models/features_bn.h"

/* m a layer list with a dense last layer after a body, no dropout; then
 * the batch as for pflref_model_grad (*nb_out its size). */
static pflref_status check_args(const pflref_model *m, const double *w,
                                const pflref_data *D, const size_t *idx,
                                size_t nb, const pflref_model_workspace *ws,
                                size_t *nb_out)
{
    *nb_out = 0;
    pflref_status st = pflref_arg_nonnull(NULL, "m", m);
    if (st != PFLREF_OK)
        return st;
    if (m->kind != PFLREF_MODEL_LAYERS || m->nlayers < 2 ||
        m->layers[m->nlayers - 1].kind != PFLREF_LAYER_DENSE)
        return pflref_error_set(NULL, PFLREF_EINVAL, "m",
                                "the features in a given mode need a layer "
                                "list whose last layer is dense after at "
                                "least one layer");
    if (pflref_model_dropout_layers(m) > 0)
        return pflref_error_set(NULL, PFLREF_EINVAL, "m",
                                "the features in a given mode do not take a "
                                "layer list with dropout");
    return pflref_batch_check(m, w, D, idx, nb, ws, nb_out);
}

pflref_status pflref_bn_features_mode(const pflref_model *m,
                                      const double *w,
                                      const pflref_data *D,
                                      const size_t *idx, size_t nb,
                                      int train,
                                      pflref_model_workspace *ws,
                                      double *A, double *Phi)
{
    size_t n_b;
    pflref_status st;
    if ((st = check_args(m, w, D, idx, nb, ws, &n_b)) ||
        (st = pflref_arg_nonnull(NULL, "A", A)) ||
        (st = pflref_arg_nonnull(NULL, "Phi", Phi)))
        return st;
    pflref_batch_gather_rows(m, D, idx, 0, n_b, ws);
    /* train: BN on μ_B, s²_B (kept on ws); else on r_μ, r_v */
    ws->bn_train = train != 0;
    pflref_layers_features(m, w, n_b, ws, A, Phi);
    ws->bn_train = 0;
    /* Monte Carlo arithmetic (check --candidate-precision): no-op when off */
    pflref_mca_perturb(PFLREF_MCA_PRODUCT, A, n_b * m->h);
    pflref_mca_perturb(PFLREF_MCA_PRODUCT, Phi, n_b * m->h);
    return PFLREF_OK;
}

pflref_status pflref_bn_body_grad_features(const pflref_model *m,
                                           const double *w,
                                           const double *dPhi,
                                           const pflref_data *D,
                                           const size_t *idx,
                                           size_t nb,
                                           pflref_model_workspace *ws,
                                           double *g)
{
    size_t n_b;
    pflref_status st;
    if ((st = check_args(m, w, D, idx, nb, ws, &n_b)) ||
        (st = pflref_arg_nonnull(NULL, "dPhi", dPhi)) ||
        (st = pflref_arg_nonnull(NULL, "g", g)))
        return st;
    pflref_batch_gather_rows(m, D, idx, 0, n_b, ws);
    /* a body forward of its own, when the cache is gone, is a training
     * pass too: the backward needs the batch's x̂ and s */
    ws->bn_train = 1;
    pflref_layers_body_grad_features(m, w, n_b, dPhi, ws, g);
    ws->bn_train = 0;
    ws->body_backward++;
    pflref_mca_perturb(PFLREF_MCA_GRADIENT, g, m->P);   /* off: no-op */
    return PFLREF_OK;
}
