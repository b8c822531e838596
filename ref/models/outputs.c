/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/models/outputs.c: evaluation of a model on a data set, and the
 * gradient offered in three parts on the OUTPUTS z (pflref/model.h).
 *
 * The output z(w; x) of a data model is ŷ (linear, regression mlp) or the
 * logits z (softmax, classifier mlp).  Composed on one batch,
 *
 *   outputs(w) → Z;  output_grad(Z) → (E, loss);  grad_from_output(w, E) → g
 *
 * gives the gradient of the batch-mean loss at w.  Deviation e) of
 * model.c: the parts serve losses of combined outputs, such as APFL's
 * output mixture ẑ = α z(v; x) + (1 − α) z(w; x) (Deng et al. 2020 as the
 * FedTorch code trains it), evaluated by pflref_model_evaluate_mix.
 *
 * Evaluation runs over all of D in index order, in chunks of the
 * workspace's max_batch, with one running sum each for the loss, the
 * squared residuals (mse) and the correct predictions (accuracy: argmax ẑ
 * = y, lowest index on ties).
 *
 * Symbols:  Z, E  nb × k (the caller's)   ẑ  ws->Z   z(v)  ws->RZ
 *           α ↔ alpha   n ↔ D->n
 * Determinism: the sums run over the samples in index order.
 */
#include <math.h>
#include <string.h>
#include "core/args.h"
#include "core/mca.h"
#include "models/models.h"

/* ------------------------------------------------------------------------
 * Evaluation
 * ------------------------------------------------------------------------ */

/* Correct predictions in the chunk: argmax ẑ_j = y_j, lowest index on
 * ties, over the nc rows of Z (nc × k). */
static size_t count_correct(size_t nc, size_t k,
                            const pflref_model_workspace *ws)
{
    size_t correct = 0;
    for (size_t j = 0; j < nc; j++) {
        const double *z = ws->Z + j * k;
        size_t best = 0;
        for (size_t c = 1; c < k; c++)
            if (z[c] > z[best])
                best = c;
        correct += best == (size_t)ws->yb[j];
    }
    return correct;
}

/* Z := ẑ on the gathered chunk of nc samples: z(w), or with v non-NULL
 * RZ := z(v), Z := z(w), then Z := α RZ + (1 − α) Z. */
static void chunk_outputs(const pflref_model *m, const double *w,
                          const double *v, double alpha, size_t nc,
                          pflref_model_workspace *ws)
{
    const size_t k = m->k;
    const pflref_model_ops *ops = pflref_model_ops_of(m);
    if (v != NULL) {
        ops->forward(m, v, nc, ws);
        memcpy(ws->RZ, ws->Z, nc * k * sizeof(double)); /* RZ := z(v) */
    }
    ops->forward(m, w, nc, ws);                         /* Z := z(w)  */
    if (v != NULL)      /* ẑ := α z(v) + (1 − α) z(w) */
        for (size_t q = 0; q < nc * k; q++)
            ws->Z[q] = alpha * ws->RZ[q] + (1.0 - alpha) * ws->Z[q];
}

/* The metrics of the outputs ẑ over all of D's samples in index order,
 * chunk after chunk: ẑ = z(w), or, with v non-NULL, the mixture
 * ẑ = α z(v) + (1 − α) z(w) (data models only).  Fills out->loss and
 * out->mse (regression) or out->accuracy (classifiers). */
static pflref_status evaluate_outputs(const pflref_model *m, const double *w,
                                      const double *v, double alpha,
                                      const pflref_data *D,
                                      pflref_model_workspace *ws,
                                      pflref_eval *out)
{
    const int regression = pflref_model_is_regression(m);
    double sum = 0.0, sq = 0.0;
    size_t correct = 0;
    for (size_t first = 0; first < D->n; first += ws->max_batch) {
        const size_t nc = D->n - first < ws->max_batch ? D->n - first
                                                        : ws->max_batch;
        pflref_status st = pflref_batch_gather(m, D, NULL, first, nc, ws);
        if (st != PFLREF_OK)
            return st;
        chunk_outputs(m, w, v, alpha, nc, ws);
        if (regression) {
            pflref_residual_terms(m, nc, ws, &sum, &sq);
            continue;
        }
        correct += count_correct(nc, m->k, ws);
        pflref_softmax_terms(nc, m->k, ws, &sum);
    }
    out->loss = sum / (double)D->n;              /* (1/n) Σ_j ℓ_j        */
    if (regression)
        out->mse = sq / (double)D->n;            /* (1/n) Σ_j (ŷ_j − y_j)² */
    else
        out->accuracy = (double)correct / (double)D->n;
    return PFLREF_OK;
}

/* The checks both evaluations end with (out non-NULL is tested before):
 * a data model needs n ≥ 1 samples; then out := n, mse and accuracy NaN. */
static pflref_status begin_eval(const pflref_model *m, const pflref_data *D,
                                pflref_eval *out)
{
    if (m->kind != PFLREF_MODEL_QUADRATIC && D->n == 0)
        return pflref_error_set(NULL, PFLREF_EINVAL, "D",
                                "nothing to evaluate: n = 0");
    out->mse = NAN;
    out->accuracy = NAN;
    out->n = D->n;
    return PFLREF_OK;
}

/* Loss, mse (regression) and accuracy (classifiers) of w on all of D, in
 * index order; a D larger than the workspace is evaluated in chunks of
 * max_batch samples with the same running sums.
 *   m [in];  w [in] P;  D [in] n ≥ 1 samples (quadratic: a, c);
 *   ws [in,out] workspace for m;  out [out]
 * Returns PFLREF_EINVAL for a bad argument or a label that is not a class. */
pflref_status pflref_model_evaluate(const pflref_model *m, const double *w,
                                    const pflref_data *D,
                                    pflref_model_workspace *ws,
                                    pflref_eval *out)
{
    pflref_status st;
    if ((st = pflref_batch_check_args(m, w, D, ws)) ||
        (st = pflref_arg_nonnull(NULL, "out", out)) ||
        (st = begin_eval(m, D, out)))
        return st;
    if (m->kind == PFLREF_MODEL_QUADRATIC) {
        out->loss = pflref_quadratic_f(m, w, D);
        return PFLREF_OK;
    }
    return evaluate_outputs(m, w, NULL, 0.0, D, ws, out);
}

/* ------------------------------------------------------------------------
 * Outputs, output errors and the gradient through the outputs
 * ------------------------------------------------------------------------ */

/* The quadratic model has no outputs z(w; x): its f has no data. */
static pflref_status check_has_outputs(const pflref_model *m)
{
    pflref_status st = pflref_arg_nonnull(NULL, "m", m);
    if (st != PFLREF_OK)
        return st;
    if (m->kind == PFLREF_MODEL_QUADRATIC)
        return pflref_error_set(NULL, PFLREF_EINVAL, "m",
                                "model quadratic has no outputs (its f_i "
                                "has no data); outputs exist for linear, "
                                "softmax and mlp");
    return PFLREF_OK;
}

/* check_has_outputs, then the batch as for pflref_model_grad (*nb_out its
 * size). */
static pflref_status check_output_batch(const pflref_model *m, const double *w,
                                        const pflref_data *D,
                                        const size_t *idx, size_t nb,
                                        const pflref_model_workspace *ws,
                                        size_t *nb_out)
{
    *nb_out = 0;
    pflref_status st = check_has_outputs(m);
    if (st != PFLREF_OK)
        return st;
    return pflref_batch_check(m, w, D, idx, nb, ws, nb_out);
}

/* Z := z(w; x_j), nb × k (ŷ for linear and the regression mlp, logits
 * otherwise): the forward pass of pflref_model_grad, copied out.
 *   m [in] a data model;  w [in] P;  D, idx, nb, ws as for
 *   pflref_model_grad;  Z [out] nb × k.
 * Returns PFLREF_EINVAL for the quadratic model, a NULL argument or a bad
 * batch. */
pflref_status pflref_model_outputs(const pflref_model *m, const double *w,
                                   const pflref_data *D, const size_t *idx,
                                   size_t nb, pflref_model_workspace *ws,
                                   double *Z)
{
    size_t n_b;
    pflref_status st;
    if ((st = check_output_batch(m, w, D, idx, nb, ws, &n_b)) ||
        (st = pflref_arg_nonnull(NULL, "Z", Z)))
        return st;
    pflref_batch_gather_rows(m, D, idx, 0, n_b, ws);
    pflref_model_ops_of(m)->forward(m, w, n_b, ws); /* ws->Z := z(w; X_b) */
    memcpy(Z, ws->Z, n_b * m->k * sizeof(double));
    return PFLREF_OK;
}

/* Z := z(w; x_j) of a TRAINING pass, nb × k: batch normalisation on the
 * batch statistics (left on ws for pflref_model_bn_update), dropout with
 * the pass's masks; the forward pass of pflref_model_grad, copied out.
 * Arguments and returns as pflref_model_outputs. */
pflref_status pflref_model_outputs_train(const pflref_model *m,
                                         const double *w,
                                         const pflref_data *D,
                                         const size_t *idx, size_t nb,
                                         pflref_model_workspace *ws,
                                         double *Z)
{
    size_t n_b;
    pflref_status st;
    if ((st = check_output_batch(m, w, D, idx, nb, ws, &n_b)) ||
        (st = pflref_arg_nonnull(NULL, "Z", Z)))
        return st;
    pflref_batch_gather_rows(m, D, idx, 0, n_b, ws);
    if ((st = pflref_layers_dropout_take(m, D, n_b, ws)))
        return st;
    ws->bn_train = 1;   /* a training pass: BN on the batch statistics */
    pflref_model_ops_of(m)->forward(m, w, n_b, ws); /* ws->Z := z(w; X_b) */
    ws->bn_train = 0;
    memcpy(Z, ws->Z, n_b * m->k * sizeof(double));
    return PFLREF_OK;
}

/* A layer list with a body and a dense head, without dropout (a training
 * pass would need masks): the models the mode-given body passes take. */
static pflref_status check_body_mode(const pflref_model *m, const double *w,
                                     const pflref_data *D, const size_t *idx,
                                     size_t nb,
                                     const pflref_model_workspace *ws,
                                     size_t *nb_out)
{
    pflref_status st = check_output_batch(m, w, D, idx, nb, ws, nb_out);
    if (st != PFLREF_OK)
        return st;
    if (m->kind != PFLREF_MODEL_LAYERS || m->nlayers < 2 ||
        m->layers[m->nlayers - 1].kind != PFLREF_LAYER_DENSE)
        return pflref_error_set(NULL, PFLREF_EINVAL, "m",
                                "the body passes in a given mode take a "
                                "layer list whose last layer is dense after "
                                "at least one layer");
    if (pflref_model_dropout_layers(m) > 0)
        return pflref_error_set(NULL, PFLREF_EINVAL, "m",
                                "the body passes in a given mode take no "
                                "dropout layer (no masks)");
    return PFLREF_OK;
}

/* Phi := the body's output of a training (train ≠ 0) or evaluation pass,
 * nb × h. */
pflref_status pflref_model_features_mode(const pflref_model *m,
                                         const double *w,
                                         const pflref_data *D,
                                         const size_t *idx, size_t nb,
                                         pflref_model_workspace *ws,
                                         int train, double *Phi)
{
    size_t n_b;
    pflref_status st;
    if ((st = check_body_mode(m, w, D, idx, nb, ws, &n_b)) ||
        (st = pflref_arg_nonnull(NULL, "Phi", Phi)))
        return st;
    pflref_batch_gather_rows(m, D, idx, 0, n_b, ws);
    pflref_layers_features_mode(m, w, n_b, ws, train != 0, Phi);
    pflref_mca_perturb(PFLREF_MCA_PRODUCT, Phi,
                       n_b * m->layers[m->nlayers - 1].in_size);
    return PFLREF_OK;
}

/* g's body entries := (1/nb) Σ_j J_jᵀ dPhi_j through the body's training
 * pass at w (the head's entries untouched). */
pflref_status pflref_model_body_grad_train(const pflref_model *m,
                                           const double *w,
                                           const pflref_data *D,
                                           const size_t *idx, size_t nb,
                                           const double *dPhi,
                                           pflref_model_workspace *ws,
                                           double *g)
{
    size_t n_b;
    pflref_status st;
    if ((st = check_body_mode(m, w, D, idx, nb, ws, &n_b)) ||
        (st = pflref_arg_nonnull(NULL, "dPhi", dPhi)) ||
        (st = pflref_arg_nonnull(NULL, "g", g)))
        return st;
    pflref_batch_gather_rows(m, D, idx, 0, n_b, ws);
    pflref_layers_body_grad_train(m, w, n_b, dPhi, ws, g);
    ws->body_backward++;
    pflref_mca_perturb(PFLREF_MCA_GRADIENT, g, m->P);   /* off: no-op */
    return PFLREF_OK;
}

/* E_j := ∂ℓ(z; y_j)/∂z at z = Z_j and *loss := (1/nb) Σ_j ℓ(Z_j; y_j):
 * the loss terms and output signal of pflref_model_grad, on given outputs.
 *   Z [in] nb × k;  E [out] nb × k (may be Z);  loss [out] or NULL.
 * Returns PFLREF_EINVAL for the quadratic model, a NULL argument, a bad
 * batch or a label that is not a class. */
pflref_status pflref_model_output_grad(const pflref_model *m, const double *Z,
                                       const pflref_data *D, const size_t *idx,
                                       size_t nb, pflref_model_workspace *ws,
                                       double *E, double *loss)
{
    size_t n_b;
    pflref_status st;
    if ((st = check_has_outputs(m)) ||
        (st = pflref_arg_nonnull(NULL, "Z", Z)) ||
        /* Z stands in for w */
        (st = pflref_batch_check(m, Z, D, idx, nb, ws, &n_b)) ||
        (st = pflref_arg_nonnull(NULL, "E", E)) ||
        (st = pflref_batch_gather_labels(m, D, idx, 0, n_b, ws)))
        return st;
    const size_t len = n_b * m->k;
    memmove(ws->Z, Z, len * sizeof(double));
    double sum = 0.0;
    pflref_loss_terms(m, n_b, ws, &sum);    /* Z := r  or  P;  Σ_j ℓ_j */
    pflref_output_signal(m, n_b, ws);       /* E := s r  or  P − Y     */
    memcpy(E, ws->Z, len * sizeof(double));
    if (loss != NULL)
        *loss = sum / (double)n_b;          /* (1/nb) Σ_j ℓ_j */
    return PFLREF_OK;
}

/* g := (1/nb) Σ_j J_j(w)ᵀ E_j, the backward pass of pflref_model_grad with
 * the output signal E given instead of computed from the labels:
 *   linear   g_w := (1/nb) X_bᵀ E,  g_b := (1/nb) Σ_j E_j
 *   softmax  g_W := (1/nb) Eᵀ X_b,  g_b := (1/nb) Σ_j E_j
 *   mlp      the body forward at w, then the head and body backward on E.
 *   E [in] nb × k;  g [out] P (must not alias w or E).
 * Returns PFLREF_EINVAL for the quadratic model, a NULL argument or a bad
 * batch. */
pflref_status pflref_model_grad_from_output(const pflref_model *m,
                                            const double *w,
                                            const pflref_data *D,
                                            const size_t *idx, size_t nb,
                                            const double *E,
                                            pflref_model_workspace *ws,
                                            double *g)
{
    size_t n_b;
    pflref_status st;
    if ((st = check_output_batch(m, w, D, idx, nb, ws, &n_b)) ||
        (st = pflref_arg_nonnull(NULL, "E", E)) ||
        (st = pflref_arg_nonnull(NULL, "g", g)))
        return st;
    pflref_batch_gather_rows(m, D, idx, 0, n_b, ws);
    /* a training pass: its dropout masks */
    if ((st = pflref_layers_dropout_take(m, D, n_b, ws)))
        return st;
    pflref_model_ops_of(m)->backward(m, w, n_b, E, ws, g);
    return PFLREF_OK;
}

/* Loss, mse and accuracy of the output mixture α z(v; x) + (1 − α) z(w; x)
 * on all of D, in index order and in chunks of max_batch, with the running
 * sums of pflref_model_evaluate.
 *   m [in] a data model;  v, w [in] P;  alpha [in] finite;  D [in] n ≥ 1;
 *   ws [in,out];  out [out]
 * Returns PFLREF_EINVAL for the quadratic model, a bad argument or a label
 * that is not a class. */
pflref_status pflref_model_evaluate_mix(const pflref_model *m, const double *v,
                                        const double *w, double alpha,
                                        const pflref_data *D,
                                        pflref_model_workspace *ws,
                                        pflref_eval *out)
{
    pflref_status st;
    if ((st = check_has_outputs(m)) ||
        (st = pflref_batch_check_args(m, w, D, ws)) ||
        (st = pflref_arg_nonnull(NULL, "v", v)) ||
        (st = pflref_arg_nonnull(NULL, "out", out)))
        return st;
    if (!isfinite(alpha))
        return pflref_error_set(NULL, PFLREF_EINVAL, "alpha",
                                "alpha = %g is not finite", alpha);
    st = begin_eval(m, D, out);
    if (st != PFLREF_OK)
        return st;
    return evaluate_outputs(m, w, v, alpha, D, ws, out);
}
