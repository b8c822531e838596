/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/models/losses.c: the per-sample losses ℓ(z; y) on a batch of outputs
 * z, and what their gradients and Hessian-vector products need from them.
 *
 *   squared        ℓ = r²,  r = ŷ − y            ∂ℓ/∂ŷ = 2 r
 *   half_squared   ℓ = ½ r²                      ∂ℓ/∂ŷ = r
 *   cross_entropy  ℓ = logsumexp(z) − z_y        ∂ℓ/∂z = p − onehot(y),
 *                  p = softmax(z)                R{p} = (diag p − p pᵀ) R{z}
 *
 * The squared losses serve linear and the regression mlp (one output ŷ per
 * sample), cross-entropy serves softmax and the classifier mlp (k logits).
 * The functions work in place on the workspace: Z holds the outputs on
 * entry and r or p after the loss terms, then E = ∂ℓ/∂z; RZ holds R{z},
 * then R{p}.
 *
 * Deviation a) of model.c: the softmax is evaluated stably: with
 * m = max_c z_c, ℓ = log Σ_c exp(z_c − m) − (z_y − m) and
 * p_c = exp(z_c − m) / Σ.
 *
 * Determinism: every sum runs over the batch in batch order, over the
 * classes in class order.
 */
#include <math.h>
#include "models/models.h"

double pflref_squared_scale(const pflref_model *m)
{
    return m->loss == PFLREF_LOSS_SQUARED ? 2.0 : 1.0;
}

/* Z := r = ŷ − y_b, and *sum += Σ_j ℓ_j in batch order, with ℓ_j = r_j²
 * (squared) or ½ r_j² (half_squared).  *sq += Σ_j r_j² when sq is
 * non-NULL (the mse numerator). */
void pflref_residual_terms(const pflref_model *m, size_t nb,
                           pflref_model_workspace *ws, double *sum,
                           double *sq)
{
    const double half = m->loss == PFLREF_LOSS_HALF_SQUARED ? 0.5 : 1.0;
    for (size_t j = 0; j < nb; j++) {
        const double r = ws->Z[j] - ws->yb[j];
        ws->Z[j] = r;
        *sum += half * (r * r);
        if (sq != NULL)
            *sq += r * r;
    }
}

/* Each row z of Z := softmax(z) = p, and *sum += ℓ_j in batch order, with
 * ℓ = log Σ_c exp(z_c − m) − (z_y − m), m = max_c z_c. */
void pflref_softmax_terms(size_t nb, size_t k, pflref_model_workspace *ws,
                          double *sum)
{
    for (size_t j = 0; j < nb; j++) {
        double *z = ws->Z + j * k;
        const size_t y = (size_t)ws->yb[j];
        double zmax = z[0];
        for (size_t c = 1; c < k; c++)
            if (z[c] > zmax)
                zmax = z[c];
        const double zy = z[y] - zmax;
        z[0] = exp(z[0] - zmax);        /* S := Σ_c exp(z_c − m) ≥ 1 */
        double S = z[0];
        for (size_t c = 1; c < k; c++) {
            z[c] = exp(z[c] - zmax);
            S += z[c];
        }
        *sum += log(S) - zy;
        for (size_t c = 0; c < k; c++) /* p_c := exp(z_c − m) / S */
            z[c] /= S;
    }
}

/* Z := P − Y (Y the one-hot labels y_b): the gradient of ℓ_j with respect
 * to z_j. */
static void subtract_onehot(size_t nb, size_t k, pflref_model_workspace *ws)
{
    for (size_t j = 0; j < nb; j++)
        ws->Z[j * k + (size_t)ws->yb[j]] -= 1.0;
}

/* Each row of RZ := R{p} = p ⊙ (R{z} − (pᵀ R{z}) 1), with p the matching
 * row of Z (the softmax Jacobian (diag p − p pᵀ) applied to R{z}). */
static void softmax_jvp(size_t nb, size_t k, pflref_model_workspace *ws)
{
    for (size_t j = 0; j < nb; j++) {
        const double *p = ws->Z + j * k;
        double *rz = ws->RZ + j * k;
        double s = 0.0;
        for (size_t c = 0; c < k; c++)
            s += p[c] * rz[c];
        for (size_t c = 0; c < k; c++)
            rz[c] = p[c] * (rz[c] - s);
    }
}

void pflref_loss_terms(const pflref_model *m, size_t nb,
                       pflref_model_workspace *ws, double *sum)
{
    if (pflref_model_is_regression(m))
        pflref_residual_terms(m, nb, ws, sum, NULL);
    else
        pflref_softmax_terms(nb, m->k, ws, sum);
}

void pflref_output_signal(const pflref_model *m, size_t nb,
                          pflref_model_workspace *ws)
{
    if (pflref_model_is_classifier(m)) {
        subtract_onehot(nb, m->k, ws);
        return;
    }
    const double s = pflref_squared_scale(m);
    for (size_t j = 0; j < nb; j++)     /* E_j := s r_j */
        ws->Z[j] *= s;
}

void pflref_output_signal_r(const pflref_model *m, size_t nb,
                            pflref_model_workspace *ws)
{
    if (pflref_model_is_classifier(m)) {
        softmax_jvp(nb, m->k, ws);      /* R{E} = R{p} */
        return;
    }
    const double s = pflref_squared_scale(m);
    for (size_t j = 0; j < nb; j++)     /* R{E}_j := s R{ŷ}_j */
        ws->RZ[j] *= s;
}
