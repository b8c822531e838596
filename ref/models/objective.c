/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/models/objective.c: the public loss, gradient and exact
 * Hessian-vector product of a model on a batch B,
 *
 *   F(w; B) = (1/nb) Σ_{j∈B} ℓ(w; x_j, y_j),   ∇_w F(w; B),   ∇²_w F(w; B) v,
 *
 * which test their arguments (pflref_batch_check), gather the batch and
 * dispatch on the model's kind: the quadratic's closed forms
 * (quadratic.c), or the kernels of the data model's pflref_model_ops
 * table (linear.c, softmax.c, mlp.c, layers_ops.c).  Symbols, shapes,
 * references and deviations are those of model.c's header; the HVP is
 * Pearlmutter's R-operator (B. A. Pearlmutter, "Fast exact multiplication
 * by the Hessian", Neural Computation 6(1):147-160, 1994).
 *
 * Cost per call: loss and gradient O(nb·P); HVP about twice the gradient.
 * Memory: every temporary lives in the workspace.
 */
#include <stddef.h>
#include "core/args.h"
#include "core/mca.h"
#include "models/models.h"

/* ------------------------------------------------------------------------
 * Forward pass, loss, gradient, Hessian-vector product
 * ------------------------------------------------------------------------ */

/* The kernels of each data model (linear.c, softmax.c, mlp.c):
 *   linear   Z := X_b w + b                      (nb)
 *   softmax  Z := X_b Wᵀ + 1 bᵀ                  (nb × k)
 *   mlp      A := X_b W1ᵀ + 1 b1ᵀ,  H := σ(A),  Z := H W2ᵀ + 1 b2ᵀ */
const pflref_model_ops *pflref_model_ops_of(const pflref_model *m)
{
    switch (m->kind) {
    case PFLREF_MODEL_LINEAR:    return &pflref_linear_ops;
    case PFLREF_MODEL_SOFTMAX:   return &pflref_softmax_ops;
    case PFLREF_MODEL_MLP:       return &pflref_mlp_ops;
    case PFLREF_MODEL_LAYERS:    return &pflref_layers_ops;
    case PFLREF_MODEL_QUADRATIC: break;
    }
    return NULL;
}

/* *F := F(w; B): the quadratic f(w), or, for a data model, the gather,
 * the forward pass and (1/nb) Σ_j ℓ_j, which leave r (regression) or P
 * (classifiers) in Z.  *F is written only on success. */
static pflref_status batch_loss(const pflref_model *m, const double *w,
                                const pflref_data *D, const size_t *idx,
                                size_t nb, pflref_model_workspace *ws,
                                double *F)
{
    if (m->kind == PFLREF_MODEL_QUADRATIC) {
        *F = pflref_quadratic_f(m, w, D);
        return PFLREF_OK;
    }
    pflref_status st = pflref_batch_gather(m, D, idx, 0, nb, ws);
    if (st == PFLREF_OK && !ws->grad_eval)   /* a training pass: its masks */
        st = pflref_layers_dropout_take(m, D, nb, ws);
    if (st != PFLREF_OK)
        return st;
    /* a training pass: BN on the batch statistics (pflref_model_grad_eval:
     * on the running statistics) */
    ws->bn_train = !ws->grad_eval;
    pflref_model_ops_of(m)->forward(m, w, nb, ws);
    ws->bn_train = 0;
    double sum = 0.0;
    pflref_loss_terms(m, nb, ws, &sum);
    *F = sum / (double)nb;              /* (1/nb) Σ_j ℓ_j */
    return PFLREF_OK;
}

/* *loss := F(w; B) = (1/nb) Σ_{j∈B} ℓ(w; x_j, y_j).
 *   m     [in]  the model;  w [in] P parameters;  D [in] data fitting m
 *   idx   [in]  nb indices < D->n, or NULL for all D->n samples in order
 *                (then nb must be 0 or D->n); ignored by quadratic
 *   nb    [in]  1 ≤ nb ≤ the workspace's max_batch
 *   ws    [in,out] workspace allocated for m
 *   loss  [out] the batch loss
 * Returns PFLREF_EINVAL for a bad argument or a label that is not a class. */
pflref_status pflref_model_loss(const pflref_model *m, const double *w,
                                const pflref_data *D, const size_t *idx,
                                size_t nb, pflref_model_workspace *ws,
                                double *loss)
{
    size_t n_b;
    pflref_status st;
    if ((st = pflref_batch_check(m, w, D, idx, nb, ws, &n_b)) ||
        (st = pflref_arg_nonnull(NULL, "loss", loss)))
        return st;
    st = batch_loss(m, w, D, idx, n_b, ws, loss);
    /* Monte Carlo arithmetic (check --candidate-precision): no-op when off */
    if (st == PFLREF_OK)
        pflref_mca_perturb(PFLREF_MCA_PRODUCT, loss, 1);
    return st;
}

/* g := ∇_w F(w; B), and *loss := F(w; B) when loss is non-NULL.
 * Arguments as for pflref_model_loss;  g [out] P entries (must not alias
 * w). */
pflref_status pflref_model_grad(const pflref_model *m, const double *w,
                                const pflref_data *D, const size_t *idx,
                                size_t nb, pflref_model_workspace *ws,
                                double *g, double *loss)
{
    size_t n_b;
    double F;
    pflref_status st;
    if ((st = pflref_batch_check(m, w, D, idx, nb, ws, &n_b)) ||
        (st = pflref_arg_nonnull(NULL, "g", g)) ||
        (st = batch_loss(m, w, D, idx, n_b, ws, &F)))
        return st;
    pflref_mca_grad_open(g, m->P);   /* off: no-op */
    if (m->kind == PFLREF_MODEL_QUADRATIC)
        pflref_quadratic_grad(m, w, D, g);
    else
        pflref_model_ops_of(m)->grad(m, w, n_b, ws, g);
    /* Monte Carlo arithmetic (check --candidate-precision): no-op when off */
    pflref_mca_perturb(PFLREF_MCA_GRADIENT, g, m->P);
    pflref_mca_perturb(PFLREF_MCA_PRODUCT, &F, 1);
    if (loss != NULL)
        *loss = F;
    return PFLREF_OK;
}

/* g := ∇_w F(w; B) in evaluation mode (torch's eval()): every batchnorm
 * layer normalises with w's running statistics, which stay fixed (no
 * gradient through them, none moved), dropout is the identity (no masks
 * taken); *loss the evaluation-mode batch loss.  Arguments as for
 * pflref_model_grad; for a model without batch normalisation and dropout
 * its result is pflref_model_grad's bit for bit. */
pflref_status pflref_model_grad_eval(const pflref_model *m, const double *w,
                                     const pflref_data *D, const size_t *idx,
                                     size_t nb, pflref_model_workspace *ws,
                                     double *g, double *loss)
{
    pflref_status st = pflref_arg_nonnull(NULL, "ws", ws);
    if (st != PFLREF_OK)
        return st;
    ws->grad_eval = 1;
    st = pflref_model_grad(m, w, D, idx, nb, ws, g, loss);
    ws->grad_eval = 0;
    return st;
}

/* 1 when mask marks at least one block and only head blocks. */
static int head_only(const pflref_model *m, const unsigned char *mask)
{
    int any = 0;
    for (size_t b = 0; b < m->nblocks; b++)
        if (mask[m->blocks[b].offset]) {
            if (!m->blocks[b].is_head)
                return 0;
            any = 1;
        }
    return any;
}

/* The gradient on the marked blocks: as pflref_model_grad, but an mlp whose
 * marked blocks are all in the head gets the head entries alone, from the
 * forward pass without the pass back through the body (cost O(nb·h·(d +
 * k)) forward, O(nb·h·k) back instead of O(nb·h·(d + k)) both ways). */
pflref_status pflref_model_grad_blocks(const pflref_model *m, const double *w,
                                       const pflref_data *D,
                                       const size_t *idx, size_t nb,
                                       const unsigned char *mask,
                                       pflref_model_workspace *ws, double *g,
                                       double *loss)
{
    const pflref_model_ops *ops = m != NULL ? pflref_model_ops_of(m) : NULL;
    if (mask == NULL || ops == NULL || ops->head_grad == NULL ||
        !head_only(m, mask))
        return pflref_model_grad(m, w, D, idx, nb, ws, g, loss);
    size_t n_b;
    double F;
    pflref_status st;
    if ((st = pflref_batch_check(m, w, D, idx, nb, ws, &n_b)) ||
        (st = pflref_arg_nonnull(NULL, "g", g)) ||
        (st = batch_loss(m, w, D, idx, n_b, ws, &F)))
        return st;
    pflref_mca_grad_open(g, m->P);   /* off: no-op */
    ops->head_grad(m, n_b, ws, g);
    pflref_mca_perturb(PFLREF_MCA_GRADIENT, g, m->P);   /* off: no-op */
    pflref_mca_perturb(PFLREF_MCA_PRODUCT, &F, 1);
    if (loss != NULL)
        *loss = F;
    return PFLREF_OK;
}

/* Hv := ∇²_w F(w; B) v, exact (R-operator; mlp with σ'' = 0).
 * Arguments as for pflref_model_loss;  v [in] P entries;  Hv [out] P
 * entries (must not alias v). */
pflref_status pflref_model_hvp(const pflref_model *m, const double *w,
                               const pflref_data *D, const size_t *idx,
                               size_t nb, const double *v,
                               pflref_model_workspace *ws, double *Hv)
{
    size_t n_b;
    pflref_status st;
    if ((st = pflref_batch_check(m, w, D, idx, nb, ws, &n_b)) ||
        (st = pflref_arg_nonnull(NULL, "v", v)) ||
        (st = pflref_arg_nonnull(NULL, "Hv", Hv)))
        return st;
    if (m->kind == PFLREF_MODEL_QUADRATIC) {
        pflref_quadratic_hvp(m, D, v, Hv);
        pflref_mca_perturb(PFLREF_MCA_GRADIENT, Hv, m->P);   /* off: no-op */
        return PFLREF_OK;
    }
    /* The forward pass at w (Z := P  or  r), or, where the Hessian does
     * not depend on w (linear), the gathered batch alone. */
    const pflref_model_ops *ops = pflref_model_ops_of(m);
    double F;
    st = ops->hvp_at_w ? batch_loss(m, w, D, idx, n_b, ws, &F)
                       : pflref_batch_gather(m, D, idx, 0, n_b, ws);
    if (st != PFLREF_OK)
        return st;
    ops->hvp(m, w, n_b, v, ws, Hv);
    pflref_mca_perturb(PFLREF_MCA_GRADIENT, Hv, m->P);   /* off: no-op */
    return PFLREF_OK;
}
