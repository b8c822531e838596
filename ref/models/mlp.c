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
 * Batch normalisation (the model option bn; S. Ioffe, C. Szegedy, "Batch
 * Normalization", ICML 2015, arXiv 1502.03167v3, Alg. 1 and §3; the layer
 * of torch.nn.BatchNorm1d): per hidden unit q, on a = W1 x + b1,
 *   training mode  μ_B = (1/nb) Σ_j a_j,  s²_B = (1/nb) Σ_j (a_j − μ_B)²
 *                  (biased), s = √(s²_B + ε)  (ε inside the root)
 *   evaluation     μ = r_μ, s = √(r_v + ε)   (the running statistics)
 *   â_j = (a_j − μ)/s,  u_j = γ â_j + β,  φ_j = σ(u_j).
 * Its backward in training mode goes through the batch statistics
 * exactly (Ioffe & Szegedy §3): with G_j = ∂ℓ_j/∂u_j per sample,
 *   ∂F/∂γ = (1/nb) Σ_j G_j â_j,   ∂F/∂β = (1/nb) Σ_j G_j,
 *   δ_j = (γ/(nb s)) (nb G_j − Σ_c G_c − â_j Σ_c G_c â_c),
 * then g_W1 = (1/nb) δᵀ X_b, g_b1 = (1/nb) Σ_j δ_j (= 0 up to rounding).
 * The running statistics are buffers: gradient 0, moved only by
 * pflref_model_bn_update (r ← (1 − ρ) r + ρ · batch statistic).  loss and
 * grad run training mode (model.c sets ws->bn_train), evaluate and
 * outputs evaluation mode; grad_from_output runs training mode.  The HVP
 * goes through the training-mode layer, batch statistics included
 * (bn_hvp, the R-operator of the passes above); the body/head split API
 * refuses a BN model.
 *
 * Every layer is the dense layer of dense.c (GSL BLAS dgemm); the formula
 * stands beside each call.  Cost: O(nb·h·(d + k)) for the loss and the
 * gradient, about twice that for the HVP.  The workspace counts the body
 * passes (pflref_model_workspace_passes).
 */
#include <math.h>
#include <string.h>
#include "core/args.h"
#include "core/mca.h"
#include "models/models.h"

/* Offsets of the mlp blocks in the parameter vector: W1 (h×d) at 0, then
 * b1 (h) when hidden_bias, γ, β, r_μ, r_v (h each) when bn, W2 (k×h), b2
 * (k) when bias.  An absent block's offset is where it would start (never
 * read). */
typedef struct {
    size_t W1, b1, gamma, beta, r_mu, r_v, W2, b2;
} mlp_layout;

static mlp_layout mlp_layout_of(const pflref_model *m)
{
    const size_t h = m->h, b1 = h * m->d;
    const size_t gamma = b1 + (m->hidden_bias ? h : 0);
    const size_t W2 = gamma + (m->bn ? 4 * h : 0);
    return (mlp_layout){.W1 = 0, .b1 = b1, .gamma = gamma, .beta = gamma + h,
                        .r_mu = gamma + 2 * h, .r_v = gamma + 3 * h,
                        .W2 = W2, .b2 = W2 + m->k * h};
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
 * Batch normalisation
 * ------------------------------------------------------------------------ */

/* The BN layer on A (nb × h): x̂ into ws->RH, Phi := σ(γ ⊙ x̂ + β).
 * Training mode (ws->bn_train): μ_B, s²_B, s of the batch into ws->bn
 * (kept for pflref_model_bn_update and the backward pass); evaluation
 * mode: μ = r_μ, s = √(r_v + ε) of w, ws->bn untouched. */
static void bn_forward(const pflref_model *m, const double *w, size_t nb,
                       pflref_model_workspace *ws, const double *A,
                       double *Phi)
{
    const size_t h = m->h;
    const mlp_layout L = mlp_layout_of(m);
    const int train = ws->bn_train;
    double *xhat = ws->RH;
    for (size_t q = 0; q < h; q++) {
        double mu = w[L.r_mu + q], var = w[L.r_v + q];
        if (train) {
            double sum = 0.0, sq = 0.0;
            for (size_t j = 0; j < nb; j++)
                sum += A[j * h + q];
            mu = sum / (double)nb;                  /* μ_B = (1/nb) Σ a_j */
            for (size_t j = 0; j < nb; j++) {
                const double dev = A[j * h + q] - mu;
                sq += dev * dev;
            }
            var = sq / (double)nb;      /* s²_B = (1/nb) Σ (a_j − μ_B)² */
        }
        const double s = sqrt(var + m->bn_eps);     /* s = √(s² + ε) */
        if (train) {
            ws->bn[q] = mu;
            ws->bn[h + q] = var;
            ws->bn[2 * h + q] = s;
        }
        const double gamma = w[L.gamma + q], beta = w[L.beta + q];
        for (size_t j = 0; j < nb; j++) {
            const double xh = (A[j * h + q] - mu) / s;  /* x̂ = (a − μ)/s */
            xhat[j * h + q] = xh;
            Phi[j * h + q] = gamma * xh + beta;          /* u = γ x̂ + β  */
        }
    }
    if (train)
        ws->bn_nb = nb;
    act_apply(m->activation, Phi, Phi, nb * h);          /* φ := σ(u)    */
}

/* The body entries of g through the BN layer (training mode), from the
 * hidden signal T = ∂ℓ/∂φ (nb × h) in ws, x̂ in ws->RH and s in ws->bn:
 *   G := T ⊙ σ'(u)  (relu: u > 0 exactly where φ > 0),
 *   g_γ := (1/nb) Σ_j G_j x̂_j,  g_β := (1/nb) Σ_j G_j,  g_{r_μ}, g_{r_v} := 0,
 *   δ_j := (γ/(nb s)) (nb G_j − Σ_c G_c − x̂_j Σ_c G_c x̂_c),
 *   g_W1 := (1/nb) δᵀ X_b,  g_b1 := (1/nb) Σ_j δ_j. */
static void bn_backward(const pflref_model *m, const double *w, size_t nb,
                        pflref_model_workspace *ws, double *g)
{
    const size_t h = m->h;
    const mlp_layout L = mlp_layout_of(m);
    const double *xhat = ws->RH, *s = ws->bn + 2 * h;
    double *G = ws->T;
    act_mask(m->activation, G, ws->H, nb * h);  /* G := T ⊙ σ'(u) */
    for (size_t q = 0; q < h; q++) {
        double sg = 0.0, sgx = 0.0;
        for (size_t j = 0; j < nb; j++) {
            sg += G[j * h + q];                   /* Σ_c G_c     */
            sgx += G[j * h + q] * xhat[j * h + q]; /* Σ_c G_c x̂_c */
        }
        g[L.gamma + q] = sgx / (double)nb;
        g[L.beta + q] = sg / (double)nb;
        g[L.r_mu + q] = 0.0;                      /* buffers: no gradient */
        g[L.r_v + q] = 0.0;
        if (ws->grad_eval) {   /* evaluation mode: δ_j := γ G_j / s */
            const double se = sqrt(w[L.r_v + q] + m->bn_eps);
            for (size_t j = 0; j < nb; j++)
                G[j * h + q] = w[L.gamma + q] * G[j * h + q] / se;
            continue;
        }
        const double c = w[L.gamma + q] / ((double)nb * s[q]);
        /* Monte Carlo arithmetic: Σ|G|, Σ|G x̂| (the terms' magnitude) */
        double ag = 0.0, agx = 0.0;
        for (size_t j = 0; pflref_mca_active != NULL && j < nb; j++) {
            ag += fabs(G[j * h + q]);
            agx += fabs(G[j * h + q] * xhat[j * h + q]);
        }
        for (size_t j = 0; j < nb; j++) {
            const double terms = fabs(c) * ((double)nb * fabs(G[j * h + q]) +
                                            ag + fabs(xhat[j * h + q]) * agx);
            G[j * h + q] = c * ((double)nb * G[j * h + q] - sg -
                                xhat[j * h + q] * sgx);
            /* cancelling terms: ~u·terms in a float kernel (off: no-op) */
            pflref_mca_perturb_terms(&G[j * h + q], terms);
        }
    }
    pflref_dense_backward(G, nb, h, ws->Xb, m->d, 1.0 / (double)nb, g + L.W1,
                          m->hidden_bias ? g + L.b1 : NULL);
}

/* r_μ ← (1 − ρ) r_μ + ρ μ_B;  r_v ← (1 − ρ) r_v + ρ (nb/(nb − 1)) s²_B
 * (biased: ρ s²_B), from the last training pass on ws. */
pflref_status pflref_model_bn_update(const pflref_model *m,
                                     const pflref_model_workspace *ws,
                                     int biased, double *w,
                                     pflref_error *err)
{
    pflref_status st;
    if ((st = pflref_arg_nonnull(err, "m", m)) ||
        (st = pflref_arg_nonnull(err, "ws", ws)) ||
        (st = pflref_arg_nonnull(err, "w", w)))
        return st;
    if (m->kind == PFLREF_MODEL_LAYERS && m->bn && ws->kind == m->kind &&
        ws->P == m->P)                  /* every batchnorm layer's */
        return pflref_layers_bn_update(m, ws, biased, w, err);
    if (m->kind != PFLREF_MODEL_MLP || !m->bn || ws->kind != m->kind ||
        ws->h != m->h)
        return pflref_error_set(err, PFLREF_EINVAL, "m",
                                "running statistics need an mlp with bn, "
                                "or a layer list with a batchnorm layer, "
                                "and its workspace");
    const size_t h = m->h, nb = ws->bn_nb;
    if (nb == 0)
        return pflref_error_set(err, PFLREF_EINVAL, "ws",
                                "no training pass on this workspace yet: "
                                "no batch statistics to move r_μ, r_v by");
    if (!biased && nb < 2)
        return pflref_error_set(err, PFLREF_EINVAL, "nb",
                                "a batch of one sample has no unbiased "
                                "variance nb/(nb − 1) s²_B for r_v");
    const mlp_layout L = mlp_layout_of(m);
    const double rho = m->bn_momentum;
    const double f = biased ? 1.0 : (double)nb / (double)(nb - 1);
    for (size_t q = 0; q < h; q++) {
        w[L.r_mu + q] = (1.0 - rho) * w[L.r_mu + q] + rho * ws->bn[q];
        w[L.r_v + q] = (1.0 - rho) * w[L.r_v + q] + rho * (f * ws->bn[h + q]);
    }
    return PFLREF_OK;
}

/* ------------------------------------------------------------------------
 * The layers
 * ------------------------------------------------------------------------ */

/* Body forward on the gathered rows X_b (nb × d):
 *   A := X_b W1ᵀ + 1 b1ᵀ  (nb × h; without b1: X_b W1ᵀ),  Phi := σ(A),
 * or, with bn, Phi := σ(γ ⊙ BN(A) + β) (bn_forward, in ws's mode). */
static void body_forward(const pflref_model *m, const double *w, size_t nb,
                         pflref_model_workspace *ws, double *A, double *Phi)
{
    const mlp_layout L = mlp_layout_of(m);
    const double *b1 = m->hidden_bias ? w + L.b1 : NULL;
    pflref_dense_forward(ws->Xb, nb, m->d, w + L.W1, b1, m->h, A);
    if (m->bn)
        bn_forward(m, w, nb, ws, A, Phi);
    else
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
    if (m->bn)
        bn_backward(m, w, nb, ws, g);
    else
        body_backward_from(m, nb, A, ws, g);
}

/* ------------------------------------------------------------------------
 * Forward pass, gradient, Hessian-vector product
 * ------------------------------------------------------------------------ */

/* A := X_b W1ᵀ + 1 b1ᵀ,  H := σ(A),  Z := H W2ᵀ + 1 b2ᵀ. */
static void forward(const pflref_model *m, const double *w, size_t nb,
                    pflref_model_workspace *ws)
{
    body_forward(m, w, nb, ws, ws->A, ws->H);
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
    /* the body forward at w (BN in training mode), then the head and
     * body backward on E */
    ws->bn_train = 1;
    body_forward(m, w, nb, ws, ws->A, ws->H);
    ws->bn_train = 0;
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

/* The R-operator through the training-mode BN layer (Pearlmutter 1994
 * applied to bn_forward and bn_backward; docs/models.md): Hv := ∇²F v
 * after a training-mode forward pass and the loss terms, which left
 * a in A, φ in H, x̂ in RH, μ_B, s²_B, s in ws->bn and P or r in Z.  Per
 * hidden unit q (R{·} the directional derivative along v; v's entries
 * of r_μ and r_v are ignored, F does not depend on the buffers in
 * training mode):
 *   R{a}_j = V1 x_j + v_b1,   R{μ} = (1/nb) Σ_j R{a}_j,
 *   R{s²} = (2/nb) Σ_j (a_j − μ_B)(R{a}_j − R{μ}),   R{s} = R{s²}/(2s),
 *   R{x̂}_j = (R{a}_j − R{μ})/s − x̂_j R{s}/s,
 *   R{u}_j = v_γ x̂_j + γ R{x̂}_j + v_β,   R{φ}_j = σ'(u_j) R{u}_j,
 *   R{z}_j = W2 R{φ}_j + V2 φ_j + v_b2,   R{E} by pflref_output_signal_r;
 *   (Hv)_W2 = (1/nb) Σ_j (R{E}_j φ_jᵀ + E_j R{φ}_jᵀ),  (Hv)_b2 = (1/nb) Σ R{E}_j,
 *   G_j = σ'(u_j) (W2ᵀ E_j),   R{G}_j = σ'(u_j) (W2ᵀ R{E}_j + V2ᵀ E_j)
 *   (σ'' = 0),  S₁ = Σ G_c, S₂ = Σ G_c x̂_c, R{S₁} = Σ R{G}_c,
 *   R{S₂} = Σ (R{G}_c x̂_c + G_c R{x̂}_c),
 *   (Hv)_γ = R{S₂}/nb,  (Hv)_β = R{S₁}/nb,  (Hv)_{r_μ} = (Hv)_{r_v} = 0,
 *   c = γ/(nb s),  R{c} = v_γ/(nb s) − c R{s}/s,
 *   R{δ}_j = R{c}(nb G_j − S₁ − x̂_j S₂)
 *            + c (nb R{G}_j − R{S₁} − R{x̂}_j S₂ − x̂_j R{S₂}),
 *   (Hv)_W1 = (1/nb) Σ_j R{δ}_j x_jᵀ,  (Hv)_b1 = (1/nb) Σ_j R{δ}_j.
 * Buffers: R{a} then R{x̂} in A (a is spent once R{s²} is formed), R{φ}
 * then R{G} then R{δ} in T, G in H (φ is spent once R{z} and (Hv)_W2 are
 * formed; the relu mask σ'(u) is then read from u = γ x̂ + β), R{s} in
 * ws->bn[3h ..].  w (and so the running statistics) is not written. */
static void bn_hvp(const pflref_model *m, const double *w, size_t nb,
                   const double *v, pflref_model_workspace *ws, double *Hv)
{
    const size_t h = m->h, k = m->k;
    const mlp_layout L = mlp_layout_of(m);
    const double n = (double)nb;
    const double *xhat = ws->RH, *mu = ws->bn, *s = ws->bn + 2 * h;
    double *Rs = ws->bn + 3 * h, *Ra = ws->T, *Rx = ws->A;
    const int relu = m->activation == PFLREF_ACT_RELU;
    /* R{a} := X_b V1ᵀ + 1 v_b1ᵀ into T */
    pflref_dense_forward(ws->Xb, nb, m->d, v + L.W1,
                         m->hidden_bias ? v + L.b1 : NULL, h, Ra);
    for (size_t q = 0; q < h; q++) {
        double sum = 0.0, sq = 0.0;
        for (size_t j = 0; j < nb; j++)
            sum += Ra[j * h + q];
        const double Rmu = sum / n;                       /* R{μ}   */
        for (size_t j = 0; j < nb; j++)
            sq += (ws->A[j * h + q] - mu[q]) * (Ra[j * h + q] - Rmu);
        const double Rvar = 2.0 * sq / n;                 /* R{s²}  */
        Rs[q] = Rvar / (2.0 * s[q]);                      /* R{s}   */
        for (size_t j = 0; j < nb; j++)                   /* R{x̂}  */
            Rx[j * h + q] = (Ra[j * h + q] - Rmu) / s[q] -
                            xhat[j * h + q] * Rs[q] / s[q];
    }
    /* R{φ} := σ'(u) ⊙ (v_γ x̂ + γ R{x̂} + v_β) into T (over R{a}) */
    double *Rphi = ws->T;
    for (size_t j = 0; j < nb; j++)
        for (size_t q = 0; q < h; q++) {
            const size_t e = j * h + q;
            Rphi[e] = v[L.gamma + q] * xhat[e] + w[L.gamma + q] * Rx[e] +
                      v[L.beta + q];
        }
    act_mask(m->activation, Rphi, ws->H, nb * h);   /* u > 0 ⇔ φ > 0 */
    /* R{Z} := R{φ} W2ᵀ + 1 v_b2ᵀ + φ V2ᵀ;  R{E};  E := P − Y or s r */
    pflref_dense_forward(Rphi, nb, h, w + L.W2, m->bias ? v + L.b2 : NULL, k,
                         ws->RZ);
    pflref_gemm(CblasNoTrans, CblasTrans, 1.0, ws->H, nb, h, v + L.W2, k, h,
                1.0, ws->RZ, nb, k);
    pflref_output_signal_r(m, nb, ws);
    pflref_output_signal(m, nb, ws);
    /* (Hv)_W2 := (1/nb) R{E}ᵀ φ + (1/nb) Eᵀ R{φ};  (Hv)_b2 := (1/nb) Σ R{E} */
    head_backward(m, nb, ws->H, ws->RZ, Hv);
    pflref_gemm(CblasTrans, CblasNoTrans, 1.0 / n, ws->Z, nb, k, Rphi, nb, h,
                1.0, Hv + L.W2, k, h);
    /* R{G} := σ'(u) ⊙ (R{E} W2 + E V2) into T;  G := σ'(u) ⊙ (E W2) into H */
    through_head(m, nb, ws->RZ, w + L.W2, 0.0, ws->T);
    through_head(m, nb, ws->Z, v + L.W2, 1.0, ws->T);
    act_mask(m->activation, ws->T, ws->H, nb * h);
    through_head(m, nb, ws->Z, w + L.W2, 0.0, ws->H);
    double *G = ws->H, *RG = ws->T;
    for (size_t j = 0; relu && j < nb; j++)
        for (size_t q = 0; q < h; q++)
            if (!(w[L.gamma + q] * xhat[j * h + q] + w[L.beta + q] > 0.0))
                G[j * h + q] = 0.0;                   /* σ'(u) = 0, u ≤ 0 */
    for (size_t q = 0; q < h; q++) {
        double S1 = 0.0, S2 = 0.0, RS1 = 0.0, RS2 = 0.0;
        for (size_t j = 0; j < nb; j++) {
            const size_t e = j * h + q;
            S1 += G[e];
            S2 += G[e] * xhat[e];
            RS1 += RG[e];
            RS2 += RG[e] * xhat[e] + G[e] * Rx[e];
        }
        Hv[L.gamma + q] = RS2 / n;                    /* R{g_γ} */
        Hv[L.beta + q] = RS1 / n;                     /* R{g_β} */
        Hv[L.r_mu + q] = 0.0;                         /* buffers */
        Hv[L.r_v + q] = 0.0;
        const double c = w[L.gamma + q] / (n * s[q]);
        const double Rc = v[L.gamma + q] / (n * s[q]) - c * Rs[q] / s[q];
        for (size_t j = 0; j < nb; j++) {
            const size_t e = j * h + q;
            RG[e] = Rc * (n * G[e] - S1 - xhat[e] * S2) +
                    c * (n * RG[e] - RS1 - Rx[e] * S2 - xhat[e] * RS2);
        }
    }
    /* (Hv)_W1 := (1/nb) R{δ}ᵀ X_b,  (Hv)_b1 := (1/nb) Σ_j R{δ}_j */
    pflref_dense_backward(RG, nb, h, ws->Xb, m->d, 1.0 / n, Hv + L.W1,
                          m->hidden_bias ? Hv + L.b1 : NULL);
}

/* Hv := ∇²F v after forward and the loss terms: R-forward, G, R-backward
 * (bn_hvp through a BN layer). */
static void hvp(const pflref_model *m, const double *w, size_t nb,
                const double *v, pflref_model_workspace *ws, double *Hv)
{
    ws->body_forward++;                 /* the R-forward through the body */
    ws->body_backward++;                /* and the R-backward (below)     */
    if (m->bn) {
        bn_hvp(m, w, nb, v, ws, Hv);
        return;
    }
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
    if (m->kind == PFLREF_MODEL_LAYERS) {
        st = pflref_layers_check_split(m);
        return st != PFLREF_OK ? st
                               : pflref_batch_check(m, w, D, idx, nb, ws,
                                                    nb_out);
    }
    if (m->kind != PFLREF_MODEL_MLP) {
        const char *kname = pflref_model_kind_name(m->kind);
        return pflref_error_set(NULL, PFLREF_EINVAL, "m",
                                "model %s has no body and head (mlp and "
                                "layers only)",
                                kname != NULL ? kname : "(unknown)");
    }
    if (m->bn)  /* the body's output depends on the whole batch */
        return pflref_error_set(NULL, PFLREF_EINVAL, "m",
                                "the body/head split API does not take an "
                                "mlp with batch normalisation");
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
    if (m->kind == PFLREF_MODEL_LAYERS) {
        pflref_layers_features(m, w, n_b, ws, A, Phi);
    } else {
        body_forward(m, w, n_b, ws, A, Phi);
        ws->body_forward++;
    }
    /* Monte Carlo arithmetic (check --candidate-precision): no-op when off */
    pflref_mca_perturb(PFLREF_MCA_PRODUCT, A, n_b * m->h);
    pflref_mca_perturb(PFLREF_MCA_PRODUCT, Phi, n_b * m->h);
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
    const int layers = m->kind == PFLREF_MODEL_LAYERS;
    if (layers)                         /* Z := Phi Wᵀ + 1 bᵀ (the head) */
        pflref_layers_head_forward(m, w, n_b, Phi, ws);
    else
        head_forward(m, w, n_b, Phi, ws->Z); /* Z := Phi W2ᵀ + 1 b2ᵀ */
    pflref_loss_terms(m, n_b, ws, &sum);
    pflref_output_signal(m, n_b, ws);   /* E := P − Y  or  s r */
    if (layers)
        pflref_layers_head_backward(m, n_b, Phi, ws->Z, g);
    else
        head_backward(m, n_b, Phi, ws->Z, g);
    pflref_mca_perturb(PFLREF_MCA_GRADIENT, g, m->P);   /* off: no-op */
    if (E != NULL) {
        memcpy(E, ws->Z, n_b * m->k * sizeof(double));
        pflref_mca_perturb(PFLREF_MCA_PRODUCT, E, n_b * m->k);
    }
    if (loss != NULL) {
        *loss = sum / (double)n_b;      /* (1/nb) Σ_j ℓ_j */
        pflref_mca_perturb(PFLREF_MCA_PRODUCT, loss, 1);
    }
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
    if (m->kind == PFLREF_MODEL_LAYERS)  /* A is not read: see the header */
        pflref_layers_body_grad(m, w, n_b, E, ws, g);
    else
        body_backward(m, w, n_b, A, E, ws, g);
    ws->body_backward++;
    pflref_mca_perturb(PFLREF_MCA_GRADIENT, g, m->P);   /* off: no-op */
    return PFLREF_OK;
}

/* The body's gradient from a signal dPhi (nb × h) on the features:
 *   δ := dPhi ⊙ σ'(A),  g_W1 := (1/nb) δᵀ X_B,  g_b1 := (1/nb) Σ_j δ_j.
 *   g [out] P entries, only the body's written.
 * Returns PFLREF_EINVAL for a model without a body, a NULL argument (A,
 * dPhi, g) or a bad batch. */
pflref_status pflref_model_body_grad_features(const pflref_model *m,
                                              const double *w,
                                              const double *A,
                                              const double *dPhi,
                                              const pflref_data *D,
                                              const size_t *idx, size_t nb,
                                              pflref_model_workspace *ws,
                                              double *g)
{
    size_t n_b;
    pflref_status st;
    if ((st = check_mlp_batch(m, w, D, idx, nb, ws, &n_b)) ||
        (st = pflref_arg_nonnull(NULL, "A", A)) ||
        (st = pflref_arg_nonnull(NULL, "dPhi", dPhi)) ||
        (st = pflref_arg_nonnull(NULL, "g", g)))
        return st;
    pflref_batch_gather_rows(m, D, idx, 0, n_b, ws);
    if (m->kind == PFLREF_MODEL_LAYERS) {  /* A is not read: see body_grad */
        pflref_layers_body_grad_features(m, w, n_b, dPhi, ws, g);
    } else {
        memcpy(ws->T, dPhi, n_b * m->h * sizeof *dPhi);  /* T := dΦ */
        body_backward_from(m, n_b, A, ws, g);
    }
    ws->body_backward++;
    pflref_mca_perturb(PFLREF_MCA_GRADIENT, g, m->P);   /* off: no-op */
    return PFLREF_OK;
}
