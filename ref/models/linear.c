/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/models/linear.c: linear regression
 *
 *   ŷ = xᵀw + b,   squared ℓ = (ŷ − y)²  or  half_squared ℓ = ½ (ŷ − y)²,
 *   F(w; B) = (1/nb) Σ_{j∈B} ℓ_j,
 *   ∇F = (s/nb) X̃_bᵀ r,  ∇²F = (s/nb) X̃_bᵀ X̃_b   (X̃ = [X 1] with b),
 *
 * with r = ŷ − y the residuals and s = ∂ℓ/∂ŷ / r = 2 (squared) or 1
 * (half_squared); docs/models.md.  The bias b is optional (m->bias).
 *
 * Symbols (nb samples of d features):
 *   X_b  ws->Xb  nb × d   w  w[0..d−1]   b  w[d]
 *   ŷ, r ws->Z   nb       R{ŷ}  ws->RZ  nb
 *
 * The products over samples and features are GSL BLAS dgemv calls (the
 * formula beside each); the bias terms are explicit sums in batch order.
 * Cost: O(nb·d) for the loss, the gradient and the HVP alike.
 */
#include "models/models.h"

/* Z := X_b w + b  (nb): the output ŷ at w, or R{ŷ} for a direction v. */
static void affine(const pflref_model *m, const double *w, size_t nb,
                   const double *Xb, double *Z)
{
    const size_t d = m->d;
    /* Z := X_b w */
    pflref_gemv(CblasNoTrans, 1.0, Xb, nb, d, w, 0.0, Z);
    if (m->bias)
        for (size_t j = 0; j < nb; j++) /* ŷ_j := x_jᵀw + b */
            Z[j] += w[d];
}

/* g_w := alpha X_bᵀ E,  g_b := alpha Σ_j E_j  for a signal E (nb). */
static void affine_grad(const pflref_model *m, size_t nb, const double *Xb,
                        const double *E, double alpha, double *g)
{
    const size_t d = m->d;
    /* g_w := alpha X_bᵀ E */
    pflref_gemv(CblasTrans, alpha, Xb, nb, d, E, 0.0, g);
    if (m->bias)                        /* g_b := alpha Σ_j E_j */
        pflref_colsum(E, nb, 1, alpha, g + d);
}

/* Z := X_b w + b. */
static void forward(const pflref_model *m, const double *w, size_t nb,
                    pflref_model_workspace *ws)
{
    affine(m, w, nb, ws->Xb, ws->Z);
}

/* g_w := (1/nb) X_bᵀ E,  g_b := (1/nb) Σ_j E_j. */
static void backward(const pflref_model *m, const double *w, size_t nb,
                     const double *E, pflref_model_workspace *ws, double *g)
{
    (void)w;                            /* J does not depend on w */
    affine_grad(m, nb, ws->Xb, E, 1.0 / (double)nb, g);
}

/* ∂ℓ/∂ŷ = s r with s = 2 (squared) or 1 (half_squared):
 * g_w := (s/nb) X_bᵀ r,  g_b := (s/nb) Σ_j r_j  (r in Z). */
static void grad(const pflref_model *m, const double *w, size_t nb,
                 pflref_model_workspace *ws, double *g)
{
    (void)w;                            /* w enters through r alone */
    const double alpha = pflref_squared_scale(m) * (1.0 / (double)nb);
    affine_grad(m, nb, ws->Xb, ws->Z, alpha, g);
}

/* The Hessian (s/nb) X̃ᵀ X̃ (X̃ = [X_b 1]) does not depend on w. */
static void hvp(const pflref_model *m, const double *w, size_t nb,
                const double *v, pflref_model_workspace *ws, double *Hv)
{
    (void)w;
    const double alpha = pflref_squared_scale(m) * (1.0 / (double)nb);
    affine(m, v, nb, ws->Xb, ws->RZ);   /* R{ŷ} := X_b v_w + v_b */
    /* (H v)_w := (s/nb) X_bᵀ R{ŷ},  (H v)_b := (s/nb) Σ_j R{ŷ}_j */
    affine_grad(m, nb, ws->Xb, ws->RZ, alpha, Hv);
}

const pflref_model_ops pflref_linear_ops = {
    .forward = forward, .grad = grad, .backward = backward, .hvp = hvp,
    .hvp_at_w = 0};
