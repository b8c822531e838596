/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/models/softmax.c: multinomial logistic regression
 *
 *   z = W x + b,   ℓ = logsumexp(z) − z_y,   F(w; B) = (1/nb) Σ_{j∈B} ℓ_j,
 *   ∇_W F = (1/nb) Gᵀ X_b,  ∇_b F = (1/nb) Σ_j G_j,   G = P − Y,
 *   ∇²F v: R{z} = V_W x + v_b,  R{p} = (diag p − p pᵀ) R{z},
 *          (H v)_W = (1/nb) R{P}ᵀ X_b,  (H v)_b = (1/nb) Σ_j R{p}_j,
 *
 * with P the row-wise softmax of the logits and Y the one-hot labels
 * (Pearlmutter's R-operator, the references of model.c; docs/models.md).
 * The loss is evaluated stably (deviation a), in losses.c).
 *
 * Symbols (nb samples, d features, k ≥ 2 classes):
 *   X_b  ws->Xb  nb × d     W  w[0..k·d−1] (k × d)   b  w[k·d..] (k)
 *   z, p, G      ws->Z      nb × k
 *   R{z}, R{p}   ws->RZ     nb × k
 *
 * Both layers of products are the dense layer of dense.c (GSL BLAS dgemm).
 * Cost: O(nb·k·d) for the loss, the gradient and the HVP alike.
 */
#include "models/models.h"

/* The bias of the parameter (or direction) vector x: x[k·d..], or NULL. */
static const double *bias_of(const pflref_model *m, const double *x)
{
    return m->bias ? x + m->k * m->d : NULL;
}

/* g_W := (1/nb) Eᵀ X_b   (k × d),   g_b := (1/nb) Σ_j E_j. */
static void backward(const pflref_model *m, const double *w, size_t nb,
                     const double *E, pflref_model_workspace *ws, double *g)
{
    (void)w;                            /* J does not depend on w */
    const size_t d = m->d, k = m->k;
    pflref_dense_backward(E, nb, k, ws->Xb, d, 1.0 / (double)nb, g,
                          m->bias ? g + k * d : NULL);
}

/* Z := X_b Wᵀ + 1 bᵀ   (nb × k). */
static void forward(const pflref_model *m, const double *w, size_t nb,
                    pflref_model_workspace *ws)
{
    pflref_dense_forward(ws->Xb, nb, m->d, w, bias_of(m, w), m->k, ws->Z);
}

/* G := P − Y, then the gradient entries of G. */
static void grad(const pflref_model *m, const double *w, size_t nb,
                 pflref_model_workspace *ws, double *g)
{
    pflref_output_signal(m, nb, ws);    /* G := P − Y */
    backward(m, w, nb, ws->Z, ws, g);
}

/* Hv := ∇²F v after forward and the loss terms (P in Z). */
static void hvp(const pflref_model *m, const double *w, size_t nb,
                const double *v, pflref_model_workspace *ws, double *Hv)
{
    /* R{Z} := X_b V_Wᵀ + 1 v_bᵀ */
    pflref_dense_forward(ws->Xb, nb, m->d, v, bias_of(m, v), m->k, ws->RZ);
    pflref_output_signal_r(m, nb, ws);  /* R{P} := p ⊙ (R{z} − pᵀR{z}) */
    /* (H v)_W := (1/nb) R{P}ᵀ X_b,  (H v)_b := (1/nb) Σ_j R{p}_j */
    backward(m, w, nb, ws->RZ, ws, Hv);
}

const pflref_model_ops pflref_softmax_ops = {
    .forward = forward, .grad = grad, .backward = backward, .hvp = hvp,
    .hvp_at_w = 1};
