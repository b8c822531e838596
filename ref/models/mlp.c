/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/models/mlp.c: the one-hidden-layer network
 *
 *   a = W1 x + b1,  φ = σ(a),  z = W2 φ + b2     (σ = relu or identity;
 *                                                  b1, b2 each optional)
 *   cross_entropy ℓ = logsumexp(z) − z_y (k ≥ 2), or squared /
 *   half_squared on z = ŷ ∈ ℝ (k = 1);  F(w; B) = (1/nb) Σ_{j∈B} ℓ_j,
 *
 * its gradient by back-propagation, its exact Hessian-vector product by
 * Pearlmutter's R-operator applied to the forward and backward passes (the
 * references of model.c), and the split into a BODY (W1, b1: the features
 * φ) and a HEAD (W2, b2) that pflref/model.h offers (docs/models.md).
 *
 * Symbols (nb samples, d inputs, h hidden units, k outputs):
 *   X_b        ws->Xb   nb × d     W1  h × d   b1  h   (mlp_layout)
 *   a, φ       ws->A, ws->H  nb × h            W2  k × h   b2  k
 *   z, p, E    ws->Z    nb × k     E = ∂ℓ/∂z per sample (G = P − Y, or s r)
 *   R{a}, R{φ} ws->RH   nb × h     R{z}, R{E}  ws->RZ  nb × k
 *   δ, R{δ}    ws->T    nb × h     back-propagated hidden signal
 *   v          V1, vb1, V2, vb2    the direction, laid out as w
 *
 * Deviations (of model.c's list):
 *   b) relu'(0) = 0 (PyTorch's convention) and relu'' = 0, so the HVP is
 *      the exact Hessian wherever no pre-activation is exactly 0 (with the
 *      identity activation, σ' = 1 and σ'' = 0, it is exact everywhere);
 *   d) the gradient is computed as body forward → head → body backward by
 *      the same static functions that pflref_model_features,
 *      pflref_model_head_grad and pflref_model_body_grad call, so the split
 *      API agrees with pflref_model_grad bit for bit.
 *
 * Every layer is the dense layer of dense.c (GSL BLAS dgemm); the formula
 * stands beside each call.  Cost: O(nb·h·(d + k)) for the loss and the
 * gradient, about twice that for the HVP.  The workspace counts the body
 * passes (pflref_model_workspace_passes).
 */
#include <string.h>
#include "core/args.h"
#include "models/models.h"

/* Offsets of the mlp blocks in the parameter vector: W1 (h×d) at 0, then
 * b1 (h) when hidden_bias, W2 (k×h), b2 (k) when bias.  An absent bias's
 * offset is where it would start (never read). */
typedef struct {
    size_t W1, b1, W2, b2;
} mlp_layout;

static mlp_layout mlp_layout_of(const pflref_model *m)
{
    const size_t b1 = m->h * m->d;
    const size_t W2 = b1 + (m->hidden_bias ? m->h : 0);
    return (mlp_layout){.W1 = 0, .b1 = b1, .W2 = W2, .b2 = W2 + m->k * m->h};
}

/* M := M ⊙ σ'(A) over len entries.  relu: σ'(a) = 1 for a > 0 and 0
 * otherwise (relu'(0) = 0, PyTorch's convention), written as a mask, as
 * PyTorch's backward does, so an entry at a ≤ 0 becomes 0 even when M is
 * not finite.  identity: σ' = 1, M unchanged. */
static void act_mask(pflref_activation act, double *M, const double *A,
                     size_t len)
{
    if (act == PFLREF_ACT_IDENTITY)
        return;
    for (size_t q = 0; q < len; q++)
        if (!(A[q] > 0.0))
            M[q] = 0.0;
}

/* Phi := σ(A) over len entries: relu max(a, 0), or a copy (identity). */
static void act_apply(pflref_activation act, const double *A, double *Phi,
                      size_t len)
{
    for (size_t q = 0; q < len; q++)
        Phi[q] = act == PFLREF_ACT_IDENTITY ? A[q]
                                            : (A[q] > 0.0 ? A[q] : 0.0);
}

/* ------------------------------------------------------------------------
 * The layers
 * ------------------------------------------------------------------------ */

/* Body forward on the gathered rows X_b (nb × d):
 *   A := X_b W1ᵀ + 1 b1ᵀ  (nb × h; without b1: X_b W1ᵀ),  Phi := σ(A). */
static void body_forward(const pflref_model *m, const double *w, size_t nb,
                         const double *Xb, double *A, double *Phi)
{
    const mlp_layout L = mlp_layout_of(m);
    const double *b1 = m->hidden_bias ? w + L.b1 : NULL;
    pflref_dense_forward(Xb, nb, m->d, w + L.W1, b1, m->h, A);
    act_apply(m->activation, A, Phi, nb * m->h); /* Phi := σ(A) */
}

/* Head forward: Z := Phi W2ᵀ + 1 b2ᵀ  (nb × k; without b2: Phi W2ᵀ). */
static void head_forward(const pflref_model *m, const double *w, size_t nb,
                         const double *Phi, double *Z)
{
    const mlp_layout L = mlp_layout_of(m);
    const double *b2 = m->bias ? w + L.b2 : NULL;
    pflref_dense_forward(Phi, nb, m->h, w + L.W2, b2, m->k, Z);
}

/* Head backward on E = ∂ℓ/∂z (nb × k, per sample): the head entries of g,
 *   g_W2 := (1/nb) Eᵀ Phi  (k × h),   g_b2 := (1/nb) Σ_j E_j. */
static void head_backward(const pflref_model *m, size_t nb, const double *Phi,
                          const double *E, double *g)
{
    const mlp_layout L = mlp_layout_of(m);
    pflref_dense_backward(E, nb, m->k, Phi, m->h, 1.0 / (double)nb, g + L.W2,
                          m->bias ? g + L.b2 : NULL);
}

/* T := E W2 + beta T  (nb × h): a per-sample output signal E (nb × k)
 * carried back through the head weights W2 (k × h). */
static void through_head(const pflref_model *m, size_t nb, const double *E,
                         const double *W2, double beta, double *T)
{
    pflref_gemm(CblasNoTrans, CblasNoTrans, 1.0, E, nb, m->k, W2, m->k, m->h,
                beta, T, nb, m->h);
}

/* The body entries of g from the hidden signal T (nb × h) in ws, the
 * pre-activations A (nb × h) and the gathered rows X_b:
 *   δ := T ⊙ σ'(A),  g_W1 := (1/nb) δᵀ X_b,  g_b1 := (1/nb) Σ_j δ_j. */
static void body_backward_from(const pflref_model *m, size_t nb,
                               const double *A, pflref_model_workspace *ws,
                               double *g)
{
    const mlp_layout L = mlp_layout_of(m);
    act_mask(m->activation, ws->T, A, nb * m->h); /* δ := T ⊙ σ'(A) */
    pflref_dense_backward(ws->T, nb, m->h, ws->Xb, m->d, 1.0 / (double)nb,
                          g + L.W1, m->hidden_bias ? g + L.b1 : NULL);
}

/* Body backward: the body entries of g from E (nb × k) and A (nb × h):
 *   T := E W2, then body_backward_from. */
static void body_backward(const pflref_model *m, const double *w, size_t nb,
                          const double *A, const double *E,
                          pflref_model_workspace *ws, double *g)
{
    through_head(m, nb, E, w + mlp_layout_of(m).W2, 0.0, ws->T);
    body_backward_from(m, nb, A, ws, g);
}

/* ------------------------------------------------------------------------
 * Forward pass, gradient, Hessian-vector product
 * ------------------------------------------------------------------------ */

/* A := X_b W1ᵀ + 1 b1ᵀ,  H := σ(A),  Z := H W2ᵀ + 1 b2ᵀ. */
static void forward(const pflref_model *m, const double *w, size_t nb,
                    pflref_model_workspace *ws)
{
    body_forward(m, w, nb, ws->Xb, ws->A, ws->H);
    ws->body_forward++;
    head_forward(m, w, nb, ws->H, ws->Z);
}

/* g := ∇F after forward and the loss terms (P or r in Z). */
static void grad(const pflref_model *m, const double *w, size_t nb,
                 pflref_model_workspace *ws, double *g)
{
    /* The split API's three steps on the workspace's buffers (A, H from
     * the body forward pass): E := ∂ℓ/∂z, head, body. */
    pflref_output_signal(m, nb, ws);    /* E := P − Y  or  s r */
    head_backward(m, nb, ws->H, ws->Z, g);
    body_backward(m, w, nb, ws->A, ws->Z, ws, g);
    ws->body_backward++;
}

/* The head entries of g alone after forward and the loss terms: grad's
 * first two steps (E := ∂ℓ/∂z, head), no body backward. */
static void grad_head(const pflref_model *m, size_t nb,
                      pflref_model_workspace *ws, double *g)
{
    pflref_output_signal(m, nb, ws);    /* E := P − Y  or  s r */
    head_backward(m, nb, ws->H, ws->Z, g);
}

/* g := (1/nb) Σ_j J_j(w)ᵀ E_j for a given signal E (nb × k). */
static void backward(const pflref_model *m, const double *w, size_t nb,
                     const double *E, pflref_model_workspace *ws, double *g)
{
    /* the body forward at w, then the head and body backward on E */
    body_forward(m, w, nb, ws->Xb, ws->A, ws->H);
    ws->body_forward++;
    head_backward(m, nb, ws->H, E, g);
    body_backward(m, w, nb, ws->A, E, ws, g);
    ws->body_backward++;
}

/* The R-forward pass, from A, H and what pflref_loss_terms left in Z
 * (P or r).  Absent biases have no direction entries: R{·} gets no v_b
 * term. */
static void r_forward(const pflref_model *m, const double *w, size_t nb,
                      const double *v, pflref_model_workspace *ws)
{
    const size_t d = m->d, k = m->k, h = m->h;
    const mlp_layout L = mlp_layout_of(m);
    const double *vb1 = m->hidden_bias ? v + L.b1 : NULL;
    const double *vb2 = m->bias ? v + L.b2 : NULL;
    /* R{A} := X_b V1ᵀ + 1 v_b1ᵀ */
    pflref_dense_forward(ws->Xb, nb, d, v + L.W1, vb1, h, ws->RH);
    act_mask(m->activation, ws->RH, ws->A, nb * h); /* R{H} := σ'(A) ⊙ R{A} */
    /* R{Z} := R{H} W2ᵀ + 1 v_b2ᵀ */
    pflref_dense_forward(ws->RH, nb, h, w + L.W2, vb2, k, ws->RZ);
    /* R{Z} := H V2ᵀ + R{Z} */
    pflref_gemm(CblasNoTrans, CblasTrans, 1.0, ws->H, nb, h, v + L.W2, k, h,
                1.0, ws->RZ, nb, k);
    pflref_output_signal_r(m, nb, ws);  /* R{G} = R{P}  or  R{s r} = s R{ŷ} */
}

/* The R-backward pass, from R{G} in RZ and G in Z. */
static void r_backward(const pflref_model *m, const double *w, size_t nb,
                       const double *v, pflref_model_workspace *ws,
                       double *Hv)
{
    const size_t k = m->k, h = m->h;
    const mlp_layout L = mlp_layout_of(m);
    /* (H v)_W2 = R{Gᵀ H}/nb := (1/nb) R{G}ᵀ H + (1/nb) Gᵀ R{H};
     * (H v)_b2 := (1/nb) Σ_j R{G}_j */
    head_backward(m, nb, ws->H, ws->RZ, Hv);
    pflref_gemm(CblasTrans, CblasNoTrans, 1.0 / (double)nb, ws->Z, nb, k,
                ws->RH, nb, h, 1.0, Hv + L.W2, k, h);
    /* R{δ} = (R{G} W2 + G V2) ⊙ σ'(A)   (σ'' = 0):
     * T := R{G} W2, then T := G V2 + T */
    through_head(m, nb, ws->RZ, w + L.W2, 0.0, ws->T);
    through_head(m, nb, ws->Z, v + L.W2, 1.0, ws->T);
    /* (H v)_W1 := (1/nb) R{δ}ᵀ X_b,  (H v)_b1 := (1/nb) Σ_j R{δ}_j */
    body_backward_from(m, nb, ws->A, ws, Hv);
}

/* Hv := ∇²F v after forward and the loss terms: R-forward, G, R-backward. */
static void hvp(const pflref_model *m, const double *w, size_t nb,
                const double *v, pflref_model_workspace *ws, double *Hv)
{
    ws->body_forward++;                 /* the R-forward through the body */
    ws->body_backward++;                /* and the R-backward (below)     */
    r_forward(m, w, nb, v, ws);
    pflref_output_signal(m, nb, ws);    /* G := P − Y  or  s r */
    r_backward(m, w, nb, v, ws, Hv);
}

const pflref_model_ops pflref_mlp_ops = {
    .forward = forward, .grad = grad, .backward = backward, .hvp = hvp,
    .head_grad = grad_head, .hvp_at_w = 1};

/* ------------------------------------------------------------------------
 * Body and head of the mlp (pflref/model.h)
 * ------------------------------------------------------------------------ */

/* The checks of the body/head functions: m non-NULL and an mlp, then the
 * batch as for pflref_model_grad (*nb_out its size). */
static pflref_status check_mlp_batch(const pflref_model *m, const double *w,
                                     const pflref_data *D, const size_t *idx,
                                     size_t nb,
                                     const pflref_model_workspace *ws,
                                     size_t *nb_out)
{
    *nb_out = 0;
    pflref_status st = pflref_arg_nonnull(NULL, "m", m);
    if (st != PFLREF_OK)
        return st;
    if (m->kind != PFLREF_MODEL_MLP) {
        const char *kname = pflref_model_kind_name(m->kind);
        return pflref_error_set(NULL, PFLREF_EINVAL, "m",
                                "model %s has no body and head (mlp only)",
                                kname != NULL ? kname : "(unknown)");
    }
    return pflref_batch_check(m, w, D, idx, nb, ws, nb_out);
}

/* A := X_B W1ᵀ + 1 b1ᵀ,  Phi := σ(A)   (nb × h each, batch order).
 *   m [in] an mlp;  w [in] P;  D, idx, nb, ws as for pflref_model_grad;
 *   A, Phi [out] nb × h.
 * Returns PFLREF_EINVAL for a non-mlp model, a NULL argument or a bad
 * batch. */
pflref_status pflref_model_features(const pflref_model *m, const double *w,
                                    const pflref_data *D, const size_t *idx,
                                    size_t nb, pflref_model_workspace *ws,
                                    double *A, double *Phi)
{
    size_t n_b;
    pflref_status st;
    if ((st = check_mlp_batch(m, w, D, idx, nb, ws, &n_b)) ||
        (st = pflref_arg_nonnull(NULL, "A", A)) ||
        (st = pflref_arg_nonnull(NULL, "Phi", Phi)))
        return st;
    pflref_batch_gather_rows(m, D, idx, 0, n_b, ws);
    body_forward(m, w, n_b, ws->Xb, A, Phi);
    ws->body_forward++;
    return PFLREF_OK;
}

/* The head's loss and gradient on cached features Phi (nb × h):
 *   z_j := W2 Phi_j + b2,  E_j := ∂ℓ_j/∂z_j,
 *   g_W2 := (1/nb) Eᵀ Phi,  g_b2 := (1/nb) Σ_j E_j,  *loss := (1/nb) Σ_j ℓ_j.
 *   g [out] P entries, only W2 and b2 written;  E [out] nb × k or NULL;
 *   loss [out] or NULL.
 * Returns PFLREF_EINVAL for a non-mlp model, a NULL argument (Phi, g), a
 * bad batch or a label that is not a class. */
pflref_status pflref_model_head_grad(const pflref_model *m, const double *w,
                                     const double *Phi, const pflref_data *D,
                                     const size_t *idx, size_t nb,
                                     pflref_model_workspace *ws, double *g,
                                     double *E, double *loss)
{
    size_t n_b;
    pflref_status st;
    if ((st = check_mlp_batch(m, w, D, idx, nb, ws, &n_b)) ||
        (st = pflref_arg_nonnull(NULL, "Phi", Phi)) ||
        (st = pflref_arg_nonnull(NULL, "g", g)) ||
        (st = pflref_batch_gather_labels(m, D, idx, 0, n_b, ws)))
        return st;
    double sum = 0.0;
    head_forward(m, w, n_b, Phi, ws->Z); /* Z := Phi W2ᵀ + 1 b2ᵀ */
    pflref_loss_terms(m, n_b, ws, &sum);
    pflref_output_signal(m, n_b, ws);   /* E := P − Y  or  s r */
    head_backward(m, n_b, Phi, ws->Z, g);
    if (E != NULL)
        memcpy(E, ws->Z, n_b * m->k * sizeof(double));
    if (loss != NULL)
        *loss = sum / (double)n_b;      /* (1/nb) Σ_j ℓ_j */
    return PFLREF_OK;
}

/* The body's gradient from the pre-activations A (nb × h) and the output
 * signal E (nb × k):  δ := (E W2) ⊙ σ'(A),
 *   g_W1 := (1/nb) δᵀ X_B,  g_b1 := (1/nb) Σ_j δ_j.
 *   g [out] P entries, only W1 and b1 written.
 * Returns PFLREF_EINVAL for a non-mlp model, a NULL argument (A, E, g) or a
 * bad batch. */
pflref_status pflref_model_body_grad(const pflref_model *m, const double *w,
                                     const double *A, const double *E,
                                     const pflref_data *D, const size_t *idx,
                                     size_t nb, pflref_model_workspace *ws,
                                     double *g)
{
    size_t n_b;
    pflref_status st;
    if ((st = check_mlp_batch(m, w, D, idx, nb, ws, &n_b)) ||
        (st = pflref_arg_nonnull(NULL, "A", A)) ||
        (st = pflref_arg_nonnull(NULL, "E", E)) ||
        (st = pflref_arg_nonnull(NULL, "g", g)))
        return st;
    pflref_batch_gather_rows(m, D, idx, 0, n_b, ws);
    body_backward(m, w, n_b, A, E, ws, g);
    ws->body_backward++;
    return PFLREF_OK;
}
