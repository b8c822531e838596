/* ref/model.c: the models of pflref, their mean batch losses, gradients and
 * exact Hessian-vector products, evaluation, data validation and the split
 * of the parameter vector into shared and personal blocks.
 *
 * References:
 *   B. A. Pearlmutter, "Fast exact multiplication by the Hessian", Neural
 *   Computation 6(1):147-160, 1994 (the R-operator R{·} = ∂/∂r (·)(w + r v)
 *   at r = 0, used for every Hessian-vector product below).
 *   spec README rule 3 (models); docs/models.md (the formulas, in full).
 *
 * Models (per-sample loss ℓ; the batch loss is the MEAN over the batch):
 *
 *   quadratic  f(w) = ½ Σ_j a_j (w_j − c_j)²                (data-free)
 *   linear     ŷ = xᵀw + b;  squared ℓ = (ŷ − y)²,  half_squared ℓ = ½(ŷ − y)²
 *   softmax    z = W x + b;  ℓ = logsumexp(z) − z_y
 *   mlp        a = W1 x + b1, φ = σ(a), z = W2 φ + b2  (σ = relu or identity;
 *              b1, b2 each optional);  cross_entropy ℓ = logsumexp(z) − z_y
 *              (k ≥ 2), or squared / half_squared on z = ŷ ∈ ℝ (k = 1)
 *
 * Symbols (paper ↔ C ↔ shape), for a batch of nb samples:
 *
 *   X_b, y_b      Xb, yb      nb × d, nb    the batch rows, gathered
 *   w, b          w           P             the parameter vector (layout in
 *                                           pflref/model.h: PyTorch order)
 *   v             v           P             the direction of an HVP
 *   ŷ − y         Z (linear)  nb            residuals r
 *   z, p          Z           nb × k        logits, then softmax(z), then
 *                                           G = P − Y (Y one-hot labels);
 *                                           regression mlp: ŷ, r, then s·r
 *   E = ∂ℓ/∂z     Z           nb × k        per-sample output signal (G)
 *   R{z}, R{p}    RZ          nb × k        directional derivatives
 *   a, φ          A, H (Phi)  nb × h        hidden pre-/post-activations
 *   R{φ}          RH          nb × h
 *   δ, R{δ}       T           nb × h        back-propagated hidden signal
 *
 * Every product over samples or features goes through GSL BLAS (which runs
 * on OpenBLAS): the formula stands in a comment beside each call.  Explicit
 * sums (losses, bias gradients) run over the batch in batch order, so a
 * reader can reproduce them term by term.
 *
 * Deviations from a textbook presentation, all deliberate:
 *   a) the softmax is evaluated stably: with m = max_c z_c,
 *      ℓ = log Σ_c exp(z_c − m) − (z_y − m) and p_c = exp(z_c − m) / Σ;
 *   b) relu'(0) = 0 (PyTorch's convention) and relu'' = 0, so the mlp HVP is
 *      the exact Hessian wherever no pre-activation is exactly 0 (with the
 *      identity activation, σ' = 1 and σ'' = 0, it is exact everywhere);
 *   c) labels are checked (integral, in [0, k)) while the batch is gathered,
 *      so a bad label can never index outside a row, even without a prior
 *      pflref_data_validate;
 *   d) the mlp gradient is computed as body forward → head → body backward
 *      by the same static functions that pflref_model_features,
 *      pflref_model_head_grad and pflref_model_body_grad call, so the split
 *      API agrees with pflref_model_grad bit for bit;
 *   e) the gradient is also offered in three parts on the OUTPUTS z
 *      (pflref_model_outputs, pflref_model_output_grad,
 *      pflref_model_grad_from_output) for losses of combined outputs, such
 *      as APFL's output mixture, evaluated by pflref_model_evaluate_mix.
 *
 * Determinism: one fixed order for every explicit sum; BLAS results may
 * differ in the last bits between OpenBLAS kernels or thread counts.
 * Cost per call: loss and gradient O(nb·P); HVP about twice the gradient.
 * Memory: every temporary lives in the workspace; compute functions never
 * allocate and keep no static state.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_blas.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_vector.h>
#include "pflref/model.h"

struct pflref_model_workspace {
    pflref_model_kind kind;   /* the model the workspace was sized for      */
    size_t d, k, h;
    size_t max_batch;         /* largest batch the buffers hold             */
    double *Xb;               /* max_batch × d   gathered rows X_b          */
    double *yb;               /* max_batch       targets or labels y_b      */
    double *Z;                /* max_batch × k   ŷ / r, z / p / G           */
    double *RZ;               /* max_batch × k   R{ŷ}, R{z} / R{p}          */
    double *A;                /* max_batch × h   a = W1 x + b1              */
    double *H;                /* max_batch × h   φ = σ(a)                   */
    double *RH;               /* max_batch × h   R{a}, then R{φ}            */
    double *T;                /* max_batch × h   δ, then R{δ}               */
    double *mem;              /* the one allocation behind the buffers      */
    size_t body_forward;      /* mlp: passes of a batch through the body    */
    size_t body_backward;     /* mlp: backward passes through the body      */
};

/* ------------------------------------------------------------------------
 * Names
 * ------------------------------------------------------------------------ */

const char *pflref_model_kind_name(pflref_model_kind kind)
{
    switch (kind) {
    case PFLREF_MODEL_QUADRATIC: return "quadratic";
    case PFLREF_MODEL_LINEAR:    return "linear";
    case PFLREF_MODEL_SOFTMAX:   return "softmax";
    case PFLREF_MODEL_MLP:       return "mlp";
    }
    return NULL;
}

const char *pflref_loss_name(pflref_loss loss)
{
    switch (loss) {
    case PFLREF_LOSS_SQUARED:       return "squared";
    case PFLREF_LOSS_HALF_SQUARED:  return "half_squared";
    case PFLREF_LOSS_CROSS_ENTROPY: return "cross_entropy";
    case PFLREF_LOSS_QUADRATIC:     return "quadratic";
    }
    return NULL;
}

const char *pflref_activation_name(pflref_activation act)
{
    switch (act) {
    case PFLREF_ACT_RELU:     return "relu";
    case PFLREF_ACT_IDENTITY: return "identity";
    }
    return NULL;
}

/* ------------------------------------------------------------------------
 * Model description
 * ------------------------------------------------------------------------ */

/* *out := a·b; 0 when the product overflows size_t. */
static int mul_ok(size_t a, size_t b, size_t *out)
{
    if (a != 0 && b > SIZE_MAX / a)
        return 0;
    *out = a * b;
    return 1;
}

/* *acc := *acc + a; 0 when the sum overflows size_t. */
static int add_ok(size_t *acc, size_t a)
{
    if (a > SIZE_MAX - *acc)
        return 0;
    *acc += a;
    return 1;
}

/* Append block `name` (rows × cols at the current end of m->blocks). */
static void add_block(pflref_model *m, const char *name, size_t rows,
                      size_t cols, int is_input, int is_head)
{
    pflref_block *b = &m->blocks[m->nblocks];
    b->name = name;
    b->offset = m->nblocks == 0 ? 0
                                : m->blocks[m->nblocks - 1].offset +
                                      m->blocks[m->nblocks - 1].size;
    b->rows = rows;
    b->cols = cols;
    b->size = rows * cols;
    b->is_input = is_input;
    b->is_head = is_head;
    m->nblocks++;
}

/* Describe a model: sizes, blocks in state_dict order, P.
 *   m            [out] the description (untouched on failure)
 *   kind         [in]  quadratic, linear, softmax or mlp
 *   loss         [in]  quadratic: QUADRATIC; linear: SQUARED or
 *                      HALF_SQUARED; softmax: CROSS_ENTROPY; mlp: any of
 *                      CROSS_ENTROPY, SQUARED, HALF_SQUARED
 *   d            [in]  ≥ 1 input features (quadratic: dimension of w)
 *   k            [in]  ≥ 2 classes for softmax and the cross-entropy mlp;
 *                      1 for the squared-loss mlp; ignored (stored as 1)
 *                      for quadratic and linear
 *   h            [in]  ≥ 1 hidden units for mlp; ignored (stored as 0)
 *                      otherwise
 *   act          [in]  mlp: RELU or IDENTITY; ignored (stored as RELU)
 *                      otherwise
 *   hidden_bias  [in]  mlp: 0 or 1 (b1); ignored (stored as 0) otherwise
 *   bias         [in]  0 or 1 (mlp: b2); quadratic: must be 0
 *   err          [out] may be NULL
 * Returns PFLREF_EINVAL naming the argument, PFLREF_ENOMEM (where "P")
 * when P overflows size_t or exceeds PFLREF_MAX_PARAMS. */
static pflref_status describe(pflref_model *m, pflref_model_kind kind,
                              pflref_loss loss, size_t d, size_t k, size_t h,
                              pflref_activation act, int hidden_bias,
                              int bias, pflref_error *err)
{
    /* Test the input parameters. */
    if (m == NULL)
        return pflref_error_set(err, PFLREF_EINVAL, "m", "m is NULL");
    if (pflref_model_kind_name(kind) == NULL)
        return pflref_error_set(err, PFLREF_EINVAL, "kind",
                                "unknown model kind %d", (int)kind);
    const char *kname = pflref_model_kind_name(kind);
    const int squared = loss == PFLREF_LOSS_SQUARED ||
                        loss == PFLREF_LOSS_HALF_SQUARED;
    int loss_ok;
    switch (kind) {
    case PFLREF_MODEL_QUADRATIC:
        loss_ok = loss == PFLREF_LOSS_QUADRATIC;
        break;
    case PFLREF_MODEL_LINEAR:
        loss_ok = squared;
        break;
    case PFLREF_MODEL_SOFTMAX:
        loss_ok = loss == PFLREF_LOSS_CROSS_ENTROPY;
        break;
    default: /* mlp */
        loss_ok = loss == PFLREF_LOSS_CROSS_ENTROPY || squared;
        break;
    }
    if (!loss_ok) {
        const char *lname = pflref_loss_name(loss);
        return pflref_error_set(
            err, PFLREF_EINVAL, "loss",
            "loss %s does not fit model %s (quadratic: quadratic; linear: "
            "squared or half_squared; softmax: cross_entropy; mlp: "
            "cross_entropy, squared or half_squared)",
            lname != NULL ? lname : "(unknown)", kname);
    }
    if (d < 1)
        return pflref_error_set(err, PFLREF_EINVAL, "d",
                                "d = 0: model %s needs d >= 1", kname);
    const int classifier =
        kind == PFLREF_MODEL_SOFTMAX ||
        (kind == PFLREF_MODEL_MLP && loss == PFLREF_LOSS_CROSS_ENTROPY);
    if (classifier && k < 2)
        return pflref_error_set(err, PFLREF_EINVAL, "k",
                                "k = %zu: model %s needs k >= 2 classes", k,
                                kname);
    if (kind == PFLREF_MODEL_MLP && !classifier && k != 1)
        return pflref_error_set(err, PFLREF_EINVAL, "k",
                                "k = %zu: an mlp with the %s loss has one "
                                "output (k = 1)",
                                k, pflref_loss_name(loss));
    if (kind == PFLREF_MODEL_MLP && h < 1)
        return pflref_error_set(err, PFLREF_EINVAL, "h",
                                "h = 0: model mlp needs h >= 1 hidden units");
    if (bias != 0 && bias != 1)
        return pflref_error_set(err, PFLREF_EINVAL, "bias",
                                "bias = %d: must be 0 or 1", bias);
    if (kind == PFLREF_MODEL_QUADRATIC && bias != 0)
        return pflref_error_set(err, PFLREF_EINVAL, "bias",
                                "bias = 1: model quadratic has no bias");
    if (kind == PFLREF_MODEL_MLP && pflref_activation_name(act) == NULL)
        return pflref_error_set(err, PFLREF_EINVAL, "activation",
                                "unknown activation %d (known: relu, "
                                "identity)",
                                (int)act);
    if (kind == PFLREF_MODEL_MLP && hidden_bias != 0 && hidden_bias != 1)
        return pflref_error_set(err, PFLREF_EINVAL, "hidden_bias",
                                "hidden_bias = %d: must be 0 or 1",
                                hidden_bias);

    /* P, with every product and sum checked for overflow. */
    if (kind != PFLREF_MODEL_SOFTMAX && kind != PFLREF_MODEL_MLP)
        k = 1;
    if (kind != PFLREF_MODEL_MLP) {
        h = 0;
        act = PFLREF_ACT_RELU;
        hidden_bias = 0;
    }
    size_t P = 0, t;
    int ok = 1;
    switch (kind) {
    case PFLREF_MODEL_QUADRATIC: /* w (d) */
        P = d;
        break;
    case PFLREF_MODEL_LINEAR:    /* w (d), b (1) */
        P = d;
        ok = add_ok(&P, (size_t)bias);
        break;
    case PFLREF_MODEL_SOFTMAX:   /* W (k×d), b (k) */
        ok = mul_ok(k, d, &P) && (bias == 0 || add_ok(&P, k));
        break;
    case PFLREF_MODEL_MLP:       /* W1 (h×d), [b1 (h)], W2 (k×h), [b2 (k)] */
        ok = mul_ok(h, d, &P) && (hidden_bias == 0 || add_ok(&P, h)) &&
             mul_ok(k, h, &t) && add_ok(&P, t) &&
             (bias == 0 || add_ok(&P, k));
        break;
    }
    if (!ok)
        return pflref_error_set(
            err, PFLREF_ENOMEM, "P",
            "model %s with d = %zu, k = %zu, h = %zu: the parameter count "
            "overflows size_t (limit PFLREF_MAX_PARAMS = %zu)",
            kname, d, k, h, PFLREF_MAX_PARAMS);
    if (P > PFLREF_MAX_PARAMS)
        return pflref_error_set(
            err, PFLREF_ENOMEM, "P",
            "model %s with d = %zu, k = %zu, h = %zu has P = %zu parameters, "
            "more than PFLREF_MAX_PARAMS = %zu",
            kname, d, k, h, P, PFLREF_MAX_PARAMS);

    /* Fill the description and its blocks, in state_dict order. */
    memset(m, 0, sizeof *m);
    m->kind = kind;
    m->loss = loss;
    m->d = d;
    m->k = k;
    m->h = h;
    m->bias = bias;
    m->hidden_bias = hidden_bias;
    m->activation = act;
    m->P = P;
    switch (kind) {
    case PFLREF_MODEL_QUADRATIC:
        add_block(m, "w", d, 1, 1, 1);
        break;
    case PFLREF_MODEL_LINEAR:
        add_block(m, "w", d, 1, 1, 1);
        if (bias)
            add_block(m, "b", 1, 1, 1, 1);
        break;
    case PFLREF_MODEL_SOFTMAX:
        add_block(m, "W", k, d, 1, 1);
        if (bias)
            add_block(m, "b", k, 1, 1, 1);
        break;
    case PFLREF_MODEL_MLP:
        add_block(m, "W1", h, d, 1, 0);
        if (hidden_bias)
            add_block(m, "b1", h, 1, 1, 0);
        add_block(m, "W2", k, h, 0, 1);
        if (bias)
            add_block(m, "b2", k, 1, 0, 1);
        break;
    }
    return PFLREF_OK;
}

/* The model of kind `kind` (see describe); an mlp gets the ReLU activation
 * and b1 present exactly when b2 is (bias). */
pflref_status pflref_model_init(pflref_model *m, pflref_model_kind kind,
                                pflref_loss loss, size_t d, size_t k, size_t h,
                                int bias, pflref_error *err)
{
    return describe(m, kind, loss, d, k, h, PFLREF_ACT_RELU, bias, bias, err);
}

/* The mlp z = W2 σ(W1 x + b1) + b2 with each bias on its own (see
 * describe; output_bias is m->bias). */
pflref_status pflref_model_init_mlp(pflref_model *m, pflref_loss loss,
                                    size_t d, size_t k, size_t h,
                                    pflref_activation act, int hidden_bias,
                                    int output_bias, pflref_error *err)
{
    return describe(m, PFLREF_MODEL_MLP, loss, d, k, h, act, hidden_bias,
                    output_bias, err);
}

int pflref_model_is_regression(const pflref_model *m)
{
    if (m == NULL)
        return 0;
    const int squared = m->loss == PFLREF_LOSS_SQUARED ||
                        m->loss == PFLREF_LOSS_HALF_SQUARED;
    return m->kind == PFLREF_MODEL_LINEAR ||
           (m->kind == PFLREF_MODEL_MLP && squared);
}

int pflref_model_is_classifier(const pflref_model *m)
{
    if (m == NULL)
        return 0;
    return m->kind == PFLREF_MODEL_SOFTMAX ||
           (m->kind == PFLREF_MODEL_MLP &&
            m->loss == PFLREF_LOSS_CROSS_ENTROPY);
}

int pflref_model_block_index(const pflref_model *m, const char *name)
{
    if (m == NULL || name == NULL)
        return -1;
    for (size_t b = 0; b < m->nblocks && b < PFLREF_MAX_BLOCKS; b++)
        if (strcmp(m->blocks[b].name, name) == 0)
            return (int)b;
    return -1;
}

/* ------------------------------------------------------------------------
 * Workspace
 * ------------------------------------------------------------------------ */

/* Workspace for batches of up to max_batch samples of m.
 *   m          [in] an initialised model
 *   max_batch  [in] ≥ 1 for data models (any value for quadratic)
 * Returns NULL when m is NULL or not initialised, max_batch is 0 for a
 * data model, a buffer size overflows, or memory is short.  The caller
 * owns the workspace (pflref_model_workspace_free). */
pflref_model_workspace *pflref_model_workspace_alloc(const pflref_model *m,
                                                     size_t max_batch)
{
    if (m == NULL || pflref_model_kind_name(m->kind) == NULL || m->d < 1)
        return NULL;
    pflref_model_workspace *ws = calloc(1, sizeof *ws);
    if (ws == NULL)
        return NULL;
    ws->kind = m->kind;
    ws->d = m->d;
    ws->k = m->k;
    ws->h = m->h;
    ws->max_batch = max_batch;
    if (m->kind == PFLREF_MODEL_QUADRATIC) /* data-free: no buffers */
        return ws;
    if (max_batch < 1 || m->k < 1) {
        free(ws);
        return NULL;
    }

    /* Sizes: Xb nb·d, yb nb, Z and RZ nb·k, A, H, RH and T nb·h each. */
    size_t nd, nk, nh, total = 0;
    if (!mul_ok(max_batch, m->d, &nd) || !mul_ok(max_batch, m->k, &nk) ||
        !mul_ok(max_batch, m->h, &nh) || !add_ok(&total, nd) ||
        !add_ok(&total, max_batch) || !add_ok(&total, nk) ||
        !add_ok(&total, nk) || !add_ok(&total, nh) || !add_ok(&total, nh) ||
        !add_ok(&total, nh) || !add_ok(&total, nh) ||
        total > SIZE_MAX / sizeof(double)) {
        free(ws);
        return NULL;
    }
    ws->mem = calloc(total, sizeof(double));
    if (ws->mem == NULL) {
        free(ws);
        return NULL;
    }
    ws->Xb = ws->mem;
    ws->yb = ws->Xb + nd;
    ws->Z = ws->yb + max_batch;
    ws->RZ = ws->Z + nk;
    ws->A = ws->RZ + nk;
    ws->H = ws->A + nh;
    ws->RH = ws->H + nh;
    ws->T = ws->RH + nh;
    return ws;
}

void pflref_model_workspace_free(pflref_model_workspace *ws)
{
    if (ws == NULL)
        return;
    free(ws->mem);
    free(ws);
}

/* ------------------------------------------------------------------------
 * BLAS wrappers: GSL views on flat row-major arrays.
 * ------------------------------------------------------------------------ */

/* C := alpha op(A) op(B) + beta C, with A ar × ac, B br × bc, C cr × cc
 * (the shapes of the stored arrays, before op). */
static void gemm(CBLAS_TRANSPOSE_t tA, CBLAS_TRANSPOSE_t tB, double alpha,
                 const double *A, size_t ar, size_t ac, const double *B,
                 size_t br, size_t bc, double beta, double *C, size_t cr,
                 size_t cc)
{
    gsl_matrix_const_view Av = gsl_matrix_const_view_array(A, ar, ac);
    gsl_matrix_const_view Bv = gsl_matrix_const_view_array(B, br, bc);
    gsl_matrix_view Cv = gsl_matrix_view_array(C, cr, cc);
    gsl_blas_dgemm(tA, tB, alpha, &Av.matrix, &Bv.matrix, beta, &Cv.matrix);
}

/* y := alpha op(A) x + beta y, with A ar × ac. */
static void gemv(CBLAS_TRANSPOSE_t tA, double alpha, const double *A,
                 size_t ar, size_t ac, const double *x, double beta,
                 double *y)
{
    gsl_matrix_const_view Av = gsl_matrix_const_view_array(A, ar, ac);
    gsl_vector_const_view xv =
        gsl_vector_const_view_array(x, tA == CblasNoTrans ? ac : ar);
    gsl_vector_view yv =
        gsl_vector_view_array(y, tA == CblasNoTrans ? ar : ac);
    gsl_blas_dgemv(tA, alpha, &Av.matrix, &xv.vector, beta, &yv.vector);
}

/* out[q] := alpha Σ_{j=0}^{nb−1} M[j][q]  (M nb × c), summed in batch order. */
static void colsum(const double *M, size_t nb, size_t c, double alpha,
                   double *out)
{
    for (size_t q = 0; q < c; q++) {
        double s = 0.0;
        for (size_t j = 0; j < nb; j++)
            s += M[j * c + q];
        out[q] = alpha * s;
    }
}

/* Every row of M (nb × c) := b, or 0 when b is NULL. */
static void fill_rows(double *M, size_t nb, size_t c, const double *b)
{
    for (size_t j = 0; j < nb; j++)
        for (size_t q = 0; q < c; q++)
            M[j * c + q] = b != NULL ? b[q] : 0.0;
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
 * Batches
 * ------------------------------------------------------------------------ */

static int ws_fits(const pflref_model *m, const pflref_model_workspace *ws)
{
    return ws->kind == m->kind && ws->d == m->d && ws->k == m->k &&
           ws->h == m->h;
}

/* Test the arguments every compute function shares: m, w, D and ws are
 * non-NULL, ws was sized for m, and D holds the arrays m reads. */
static pflref_status check_args(const pflref_model *m, const double *w,
                                const pflref_data *D,
                                const pflref_model_workspace *ws)
{
    if (m == NULL)
        return pflref_error_set(NULL, PFLREF_EINVAL, "m", "m is NULL");
    if (w == NULL)
        return pflref_error_set(NULL, PFLREF_EINVAL, "w", "w is NULL");
    if (D == NULL)
        return pflref_error_set(NULL, PFLREF_EINVAL, "D", "D is NULL");
    if (ws == NULL)
        return pflref_error_set(NULL, PFLREF_EINVAL, "ws", "ws is NULL");
    if (!ws_fits(m, ws))
        return pflref_error_set(NULL, PFLREF_EINVAL, "ws",
                                "ws was sized for another model");
    if (m->kind == PFLREF_MODEL_QUADRATIC) {
        if (D->a == NULL || D->c == NULL)
            return pflref_error_set(NULL, PFLREF_EINVAL, "D",
                                    "quadratic data without a or c");
        return PFLREF_OK;
    }
    if (D->X == NULL || D->y == NULL)
        return pflref_error_set(NULL, PFLREF_EINVAL, "D",
                                "data without X or y");
    return PFLREF_OK;
}

/* check_args, then settle the batch of loss, grad and hvp:
 * *nb_out := nb (idx given) or D->n (idx NULL; nb must then be 0 or D->n),
 * 1 ≤ *nb_out ≤ max_batch, every idx[j] < D->n.  The quadratic model has no
 * batch: *nb_out := 0. */
static pflref_status check_batch(const pflref_model *m, const double *w,
                                 const pflref_data *D, const size_t *idx,
                                 size_t nb, const pflref_model_workspace *ws,
                                 size_t *nb_out)
{
    *nb_out = 0;
    pflref_status st = check_args(m, w, D, ws);
    if (st != PFLREF_OK || m->kind == PFLREF_MODEL_QUADRATIC)
        return st;
    if (idx == NULL) {
        if (nb != 0 && nb != D->n)
            return pflref_error_set(NULL, PFLREF_EINVAL, "nb",
                                    "idx is NULL (whole data set of n = %zu) "
                                    "but nb = %zu",
                                    D->n, nb);
        nb = D->n;
    }
    if (nb == 0)
        return pflref_error_set(NULL, PFLREF_EINVAL, "nb", "empty batch");
    if (nb > ws->max_batch)
        return pflref_error_set(NULL, PFLREF_EINVAL, "nb",
                                "nb = %zu exceeds the workspace's max_batch "
                                "= %zu",
                                nb, ws->max_batch);
    if (idx != NULL)
        for (size_t j = 0; j < nb; j++)
            if (idx[j] >= D->n)
                return pflref_error_set(NULL, PFLREF_EINVAL, "idx",
                                        "idx[%zu] = %zu is not below n = %zu",
                                        j, idx[j], D->n);
    *nb_out = nb;
    return PFLREF_OK;
}

/* Row j of X_b := x_i with i = idx[j], or i = first + j when idx is NULL. */
static void gather_rows(const pflref_model *m, const pflref_data *D,
                        const size_t *idx, size_t first, size_t nb,
                        pflref_model_workspace *ws)
{
    const size_t d = m->d;
    for (size_t j = 0; j < nb; j++) {
        const size_t i = idx != NULL ? idx[j] : first + j;
        memcpy(ws->Xb + j * d, D->X + i * d, d * sizeof(double));
    }
}

/* y_b[j] := y_i with i as in gather_rows.  Classifier labels must be
 * integral and in [0, k). */
static pflref_status gather_labels(const pflref_model *m,
                                   const pflref_data *D, const size_t *idx,
                                   size_t first, size_t nb,
                                   pflref_model_workspace *ws)
{
    const int classifier = pflref_model_is_classifier(m);
    for (size_t j = 0; j < nb; j++) {
        const size_t i = idx != NULL ? idx[j] : first + j;
        const double y = D->y[i];
        if (classifier && !(y >= 0.0 && y < (double)m->k && y == floor(y)))
            return pflref_error_set(NULL, PFLREF_EINVAL, "D",
                                    "label y[%zu] = %g is not an integer in "
                                    "[0, %zu)",
                                    i, y, m->k);
        ws->yb[j] = y;
    }
    return PFLREF_OK;
}

/* Gather the batch into the workspace: its rows X_b and targets y_b. */
static pflref_status gather(const pflref_model *m, const pflref_data *D,
                            const size_t *idx, size_t first, size_t nb,
                            pflref_model_workspace *ws)
{
    gather_rows(m, D, idx, first, nb, ws);
    return gather_labels(m, D, idx, first, nb, ws);
}

/* ------------------------------------------------------------------------
 * The mlp's layers
 * ------------------------------------------------------------------------ */

/* Offsets of the mlp blocks in the parameter vector: W1 (h×d) at 0, then
 * b1 (h) when hidden_bias, W2 (k×h), b2 (k) when bias.  An absent bias's
 * offset is where it would start (never read). */
typedef struct {
    size_t W1, b1, W2, b2;
} mlp_layout;

static mlp_layout mlp_layout_of(const pflref_model *m)
{
    mlp_layout L;
    L.W1 = 0;
    L.b1 = m->h * m->d;
    L.W2 = L.b1 + (m->hidden_bias ? m->h : 0);
    L.b2 = L.W2 + m->k * m->h;
    return L;
}

/* Body forward on the gathered rows X_b (nb × d):
 *   A := X_b W1ᵀ + 1 b1ᵀ  (nb × h; without b1: X_b W1ᵀ),  Phi := σ(A). */
static void mlp_body_forward(const pflref_model *m, const double *w,
                             size_t nb, const double *Xb, double *A,
                             double *Phi)
{
    const size_t d = m->d, h = m->h;
    const mlp_layout L = mlp_layout_of(m);
    const double *W1 = w + L.W1, *b1 = m->hidden_bias ? w + L.b1 : NULL;
    fill_rows(A, nb, h, b1);            /* A := 1 b1ᵀ  (or 0) */
    /* A := X_b W1ᵀ + A */
    gemm(CblasNoTrans, CblasTrans, 1.0, Xb, nb, d, W1, h, d, 1.0, A, nb, h);
    act_apply(m->activation, A, Phi, nb * h); /* Phi := σ(A) */
}

/* Head forward: Z := Phi W2ᵀ + 1 b2ᵀ  (nb × k; without b2: Phi W2ᵀ). */
static void mlp_head_forward(const pflref_model *m, const double *w,
                             size_t nb, const double *Phi, double *Z)
{
    const size_t k = m->k, h = m->h;
    const mlp_layout L = mlp_layout_of(m);
    const double *W2 = w + L.W2, *b2 = m->bias ? w + L.b2 : NULL;
    fill_rows(Z, nb, k, b2);            /* Z := 1 b2ᵀ  (or 0) */
    /* Z := Phi W2ᵀ + Z */
    gemm(CblasNoTrans, CblasTrans, 1.0, Phi, nb, h, W2, k, h, 1.0, Z, nb, k);
}

/* Head backward on E = ∂ℓ/∂z (nb × k, per sample): the head entries of g,
 *   g_W2 := (1/nb) Eᵀ Phi  (k × h),   g_b2 := (1/nb) Σ_j E_j. */
static void mlp_head_backward(const pflref_model *m, size_t nb,
                              const double *Phi, const double *E, double *g)
{
    const size_t k = m->k, h = m->h;
    const mlp_layout L = mlp_layout_of(m);
    const double inv = 1.0 / (double)nb;
    /* g_W2 := (1/nb) Eᵀ Phi */
    gemm(CblasTrans, CblasNoTrans, inv, E, nb, k, Phi, nb, h, 0.0, g + L.W2,
         k, h);
    if (m->bias)                        /* g_b2 := (1/nb) Σ_j E_j */
        colsum(E, nb, k, inv, g + L.b2);
}

/* Body backward: the body entries of g from E (nb × k) and A (nb × h), with
 * the gathered rows X_b in ws:
 *   T := E W2,  δ := T ⊙ σ'(A),  g_W1 := (1/nb) δᵀ X_b,  g_b1 := (1/nb) Σ_j δ_j. */
static void mlp_body_backward(const pflref_model *m, const double *w,
                              size_t nb, const double *A, const double *E,
                              pflref_model_workspace *ws, double *g)
{
    const size_t d = m->d, k = m->k, h = m->h;
    const mlp_layout L = mlp_layout_of(m);
    const double inv = 1.0 / (double)nb;
    /* T := E W2   (nb × h) */
    gemm(CblasNoTrans, CblasNoTrans, 1.0, E, nb, k, w + L.W2, k, h, 0.0,
         ws->T, nb, h);
    act_mask(m->activation, ws->T, A, nb * h); /* δ := T ⊙ σ'(A) */
    /* g_W1 := (1/nb) δᵀ X_b   (h × d) */
    gemm(CblasTrans, CblasNoTrans, inv, ws->T, nb, h, ws->Xb, nb, d, 0.0,
         g + L.W1, h, d);
    if (m->hidden_bias)                 /* g_b1 := (1/nb) Σ_j δ_j */
        colsum(ws->T, nb, h, inv, g + L.b1);
}

/* ------------------------------------------------------------------------
 * Forward pass and per-sample losses
 * ------------------------------------------------------------------------ */

/* Forward pass on the gathered batch.
 *   linear   Z := X_b w + b                      (nb)
 *   softmax  Z := X_b Wᵀ + 1 bᵀ                  (nb × k)
 *   mlp      A := X_b W1ᵀ + 1 b1ᵀ,  H := σ(A),  Z := H W2ᵀ + 1 b2ᵀ */
static void forward(const pflref_model *m, const double *w, size_t nb,
                    pflref_model_workspace *ws)
{
    const size_t d = m->d, k = m->k;
    switch (m->kind) {
    case PFLREF_MODEL_LINEAR:
        /* Z := X_b w */
        gemv(CblasNoTrans, 1.0, ws->Xb, nb, d, w, 0.0, ws->Z);
        if (m->bias)
            for (size_t j = 0; j < nb; j++) /* ŷ_j := x_jᵀw + b */
                ws->Z[j] += w[d];
        break;
    case PFLREF_MODEL_SOFTMAX: {
        const double *W = w, *b = m->bias ? w + k * d : NULL;
        fill_rows(ws->Z, nb, k, b);     /* Z := 1 bᵀ  (or 0)  */
        /* Z := X_b Wᵀ + Z */
        gemm(CblasNoTrans, CblasTrans, 1.0, ws->Xb, nb, d, W, k, d, 1.0,
             ws->Z, nb, k);
        break;
    }
    case PFLREF_MODEL_MLP:
        mlp_body_forward(m, w, nb, ws->Xb, ws->A, ws->H);
        ws->body_forward++;
        mlp_head_forward(m, w, nb, ws->H, ws->Z);
        break;
    case PFLREF_MODEL_QUADRATIC:
        break;
    }
}

/* ∂ℓ/∂ŷ = s r of the squared losses: s = 2 (squared) or 1 (half_squared). */
static double squared_scale(const pflref_model *m)
{
    return m->loss == PFLREF_LOSS_SQUARED ? 2.0 : 1.0;
}

/* Regression (linear, squared-loss mlp; one output per sample):
 * Z := r = ŷ − y_b, and *sum += Σ_j ℓ_j in batch order, with
 * ℓ_j = r_j² (squared) or ½ r_j² (half_squared).  *sq += Σ_j r_j² when sq
 * is non-NULL (the mse numerator). */
static void residual_terms(const pflref_model *m, size_t nb,
                           pflref_model_workspace *ws, double *sum, double *sq)
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

/* Classifiers: each row z of Z := softmax(z) = p, and *sum += ℓ_j in batch
 * order, with ℓ = log Σ_c exp(z_c − m) − (z_y − m), m = max_c z_c. */
static void softmax_terms(size_t nb, size_t k, pflref_model_workspace *ws,
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

/* Classifiers: Z := P − Y (Y the one-hot labels): the gradient of ℓ_j with
 * respect to z_j. */
static void subtract_onehot(size_t nb, size_t k, pflref_model_workspace *ws)
{
    for (size_t j = 0; j < nb; j++)
        ws->Z[j * k + (size_t)ws->yb[j]] -= 1.0;
}

/* Classifiers: each row of RZ := R{p} = p ⊙ (R{z} − (pᵀ R{z}) 1), with p the
 * matching row of Z (the softmax Jacobian (diag p − p pᵀ) applied to R{z}). */
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

/* Quadratic: f(w) = ½ Σ_j a_j (w_j − c_j)². */
static double quadratic_f(const pflref_model *m, const double *w,
                          const pflref_data *D)
{
    double s = 0.0;
    for (size_t j = 0; j < m->d; j++) {
        const double e = w[j] - D->c[j];
        s += D->a[j] * (e * e);
    }
    return 0.5 * s;
}

/* The per-sample losses of the logits in Z: *sum += Σ_j ℓ_j (batch order);
 * leaves r (regression) or P (classifiers) in Z. */
static void loss_terms(const pflref_model *m, size_t nb,
                       pflref_model_workspace *ws, double *sum)
{
    if (pflref_model_is_regression(m))
        residual_terms(m, nb, ws, sum, NULL);
    else
        softmax_terms(nb, m->k, ws, sum);
}

/* mlp: Z := E = ∂ℓ/∂z per sample, from what loss_terms left in Z:
 * classifier P − Y; regression s r (s = 2 squared, 1 half_squared). */
static void mlp_output_grad(const pflref_model *m, size_t nb,
                            pflref_model_workspace *ws)
{
    if (pflref_model_is_classifier(m)) {
        subtract_onehot(nb, m->k, ws);
        return;
    }
    const double s = squared_scale(m);
    for (size_t j = 0; j < nb; j++)     /* E_j := s r_j */
        ws->Z[j] *= s;
}

/* Forward pass plus the summed batch loss; leaves r (regression) or P
 * (classifiers) in Z. */
static pflref_status batch_forward(const pflref_model *m, const double *w,
                                   const pflref_data *D, const size_t *idx,
                                   size_t nb, pflref_model_workspace *ws,
                                   double *sum)
{
    pflref_status st = gather(m, D, idx, 0, nb, ws);
    if (st != PFLREF_OK)
        return st;
    forward(m, w, nb, ws);
    *sum = 0.0;
    loss_terms(m, nb, ws, sum);
    return PFLREF_OK;
}

/* ------------------------------------------------------------------------
 * Loss, gradient, Hessian-vector product
 * ------------------------------------------------------------------------ */

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
    pflref_status st = check_batch(m, w, D, idx, nb, ws, &n_b);
    if (st != PFLREF_OK)
        return st;
    if (loss == NULL)
        return pflref_error_set(NULL, PFLREF_EINVAL, "loss", "loss is NULL");

    if (m->kind == PFLREF_MODEL_QUADRATIC) {
        *loss = quadratic_f(m, w, D);
        return PFLREF_OK;
    }
    double sum;
    st = batch_forward(m, w, D, idx, n_b, ws, &sum);
    if (st != PFLREF_OK)
        return st;
    *loss = sum / (double)n_b; /* (1/nb) Σ_j ℓ_j */
    return PFLREF_OK;
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
    pflref_status st = check_batch(m, w, D, idx, nb, ws, &n_b);
    if (st != PFLREF_OK)
        return st;
    if (g == NULL)
        return pflref_error_set(NULL, PFLREF_EINVAL, "g", "g is NULL");
    const size_t d = m->d, k = m->k;

    if (m->kind == PFLREF_MODEL_QUADRATIC) {
        for (size_t j = 0; j < d; j++) /* g_j := a_j (w_j − c_j) */
            g[j] = D->a[j] * (w[j] - D->c[j]);
        if (loss != NULL)
            *loss = quadratic_f(m, w, D);
        return PFLREF_OK;
    }

    double sum;
    st = batch_forward(m, w, D, idx, n_b, ws, &sum);
    if (st != PFLREF_OK)
        return st;
    const double inv = 1.0 / (double)n_b;

    switch (m->kind) {
    case PFLREF_MODEL_LINEAR: {
        /* ∂ℓ/∂ŷ = s r with s = 2 (squared) or 1 (half_squared). */
        const double alpha = squared_scale(m) * inv;
        /* g_w := (s/nb) X_bᵀ r */
        gemv(CblasTrans, alpha, ws->Xb, n_b, d, ws->Z, 0.0, g);
        if (m->bias)                    /* g_b := (s/nb) Σ_j r_j */
            colsum(ws->Z, n_b, 1, alpha, g + d);
        break;
    }
    case PFLREF_MODEL_SOFTMAX:
        subtract_onehot(n_b, k, ws);    /* G := P − Y */
        /* g_W := (1/nb) Gᵀ X_b   (k × d) */
        gemm(CblasTrans, CblasNoTrans, inv, ws->Z, n_b, k, ws->Xb, n_b, d,
             0.0, g, k, d);
        if (m->bias)                    /* g_b := (1/nb) Σ_j G_j */
            colsum(ws->Z, n_b, k, inv, g + k * d);
        break;
    case PFLREF_MODEL_MLP:
        /* The split API's three steps on the workspace's buffers (A, H
         * from the body forward pass above): E := ∂ℓ/∂z, head, body. */
        mlp_output_grad(m, n_b, ws);    /* E := P − Y  or  s r */
        mlp_head_backward(m, n_b, ws->H, ws->Z, g);
        mlp_body_backward(m, w, n_b, ws->A, ws->Z, ws, g);
        ws->body_backward++;
        break;
    case PFLREF_MODEL_QUADRATIC:
        break;
    }
    if (loss != NULL)
        *loss = sum / (double)n_b;      /* (1/nb) Σ_j ℓ_j */
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
    pflref_status st = check_batch(m, w, D, idx, nb, ws, &n_b);
    if (st != PFLREF_OK)
        return st;
    if (v == NULL)
        return pflref_error_set(NULL, PFLREF_EINVAL, "v", "v is NULL");
    if (Hv == NULL)
        return pflref_error_set(NULL, PFLREF_EINVAL, "Hv", "Hv is NULL");
    const size_t d = m->d, k = m->k, h = m->h;

    if (m->kind == PFLREF_MODEL_QUADRATIC) {
        for (size_t j = 0; j < d; j++) /* (H v)_j := a_j v_j */
            Hv[j] = D->a[j] * v[j];
        return PFLREF_OK;
    }

    const double inv = 1.0 / (double)n_b;
    if (m->kind == PFLREF_MODEL_LINEAR) {
        /* The Hessian (s/nb) X̃ᵀ X̃ (X̃ = [X_b 1]) does not depend on w. */
        st = gather(m, D, idx, 0, n_b, ws);
        if (st != PFLREF_OK)
            return st;
        const double alpha = squared_scale(m) * inv;
        /* R{ŷ} := X_b v_w */
        gemv(CblasNoTrans, 1.0, ws->Xb, n_b, d, v, 0.0, ws->RZ);
        if (m->bias)
            for (size_t j = 0; j < n_b; j++) /* R{ŷ}_j += v_b */
                ws->RZ[j] += v[d];
        /* (H v)_w := (s/nb) X_bᵀ R{ŷ} */
        gemv(CblasTrans, alpha, ws->Xb, n_b, d, ws->RZ, 0.0, Hv);
        if (m->bias)                    /* (H v)_b := (s/nb) Σ_j R{ŷ}_j */
            colsum(ws->RZ, n_b, 1, alpha, Hv + d);
        return PFLREF_OK;
    }

    double sum;
    st = batch_forward(m, w, D, idx, n_b, ws, &sum); /* Z := P  or  r */
    if (st != PFLREF_OK)
        return st;

    if (m->kind == PFLREF_MODEL_SOFTMAX) {
        const double *VW = v, *vb = m->bias ? v + k * d : NULL;
        fill_rows(ws->RZ, n_b, k, vb);  /* R{Z} := 1 v_bᵀ (or 0) */
        /* R{Z} := X_b V_Wᵀ + R{Z} */
        gemm(CblasNoTrans, CblasTrans, 1.0, ws->Xb, n_b, d, VW, k, d, 1.0,
             ws->RZ, n_b, k);
        softmax_jvp(n_b, k, ws);        /* R{P} := p ⊙ (R{z} − pᵀR{z}) */
        /* (H v)_W := (1/nb) R{P}ᵀ X_b */
        gemm(CblasTrans, CblasNoTrans, inv, ws->RZ, n_b, k, ws->Xb, n_b, d,
             0.0, Hv, k, d);
        if (m->bias)                    /* (H v)_b := (1/nb) Σ_j R{p}_j */
            colsum(ws->RZ, n_b, k, inv, Hv + k * d);
        return PFLREF_OK;
    }

    /* mlp: the R-operator applied to the forward and backward passes.
     * Absent biases have no direction entries: R{·} gets no v_b term and
     * (H v) no bias block. */
    const mlp_layout L = mlp_layout_of(m);
    const double *W2 = w + L.W2;
    const double *V1 = v + L.W1, *V2 = v + L.W2;
    const double *vb1 = m->hidden_bias ? v + L.b1 : NULL;
    const double *vb2 = m->bias ? v + L.b2 : NULL;
    double *HW1 = Hv + L.W1, *HW2 = Hv + L.W2;

    ws->body_forward++;                 /* the R-forward through the body */
    ws->body_backward++;                /* and the R-backward (below)     */
    fill_rows(ws->RH, n_b, h, vb1);     /* R{A} := 1 v_b1ᵀ  (or 0) */
    /* R{A} := X_b V1ᵀ + R{A} */
    gemm(CblasNoTrans, CblasTrans, 1.0, ws->Xb, n_b, d, V1, h, d, 1.0, ws->RH,
         n_b, h);
    act_mask(m->activation, ws->RH, ws->A, n_b * h); /* R{H} := σ'(A) ⊙ R{A} */
    fill_rows(ws->RZ, n_b, k, vb2);     /* R{Z} := 1 v_b2ᵀ  (or 0) */
    /* R{Z} := R{H} W2ᵀ + R{Z} */
    gemm(CblasNoTrans, CblasTrans, 1.0, ws->RH, n_b, h, W2, k, h, 1.0, ws->RZ,
         n_b, k);
    /* R{Z} := H V2ᵀ + R{Z} */
    gemm(CblasNoTrans, CblasTrans, 1.0, ws->H, n_b, h, V2, k, h, 1.0, ws->RZ,
         n_b, k);
    if (pflref_model_is_classifier(m)) {
        softmax_jvp(n_b, k, ws);        /* R{G} = R{P} := p ⊙ (R{z} − pᵀR{z}) */
    } else {
        const double s = squared_scale(m);
        for (size_t j = 0; j < n_b; j++) /* R{E} = R{s r} := s R{ŷ} */
            ws->RZ[j] *= s;
    }
    mlp_output_grad(m, n_b, ws);        /* G := P − Y  or  s r */

    /* (H v)_W2 = R{Gᵀ H}/nb := (1/nb) R{G}ᵀ H + (1/nb) Gᵀ R{H} */
    gemm(CblasTrans, CblasNoTrans, inv, ws->RZ, n_b, k, ws->H, n_b, h, 0.0,
         HW2, k, h);
    gemm(CblasTrans, CblasNoTrans, inv, ws->Z, n_b, k, ws->RH, n_b, h, 1.0,
         HW2, k, h);
    if (m->bias)                        /* (H v)_b2 := (1/nb) Σ_j R{G}_j */
        colsum(ws->RZ, n_b, k, inv, Hv + L.b2);
    /* R{δ} = (R{G} W2 + G V2) ⊙ σ'(A)   (σ'' = 0):
     * T := R{G} W2, then T := G V2 + T */
    gemm(CblasNoTrans, CblasNoTrans, 1.0, ws->RZ, n_b, k, W2, k, h, 0.0,
         ws->T, n_b, h);
    gemm(CblasNoTrans, CblasNoTrans, 1.0, ws->Z, n_b, k, V2, k, h, 1.0,
         ws->T, n_b, h);
    act_mask(m->activation, ws->T, ws->A, n_b * h);
    /* (H v)_W1 := (1/nb) R{δ}ᵀ X_b */
    gemm(CblasTrans, CblasNoTrans, inv, ws->T, n_b, h, ws->Xb, n_b, d, 0.0,
         HW1, h, d);
    if (m->hidden_bias)                 /* (H v)_b1 := (1/nb) Σ_j R{δ}_j */
        colsum(ws->T, n_b, h, inv, Hv + L.b1);
    return PFLREF_OK;
}

/* ------------------------------------------------------------------------
 * Body and head of the mlp
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
    if (m == NULL)
        return pflref_error_set(NULL, PFLREF_EINVAL, "m", "m is NULL");
    if (m->kind != PFLREF_MODEL_MLP) {
        const char *kname = pflref_model_kind_name(m->kind);
        return pflref_error_set(NULL, PFLREF_EINVAL, "m",
                                "model %s has no body and head (mlp only)",
                                kname != NULL ? kname : "(unknown)");
    }
    return check_batch(m, w, D, idx, nb, ws, nb_out);
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
    pflref_status st = check_mlp_batch(m, w, D, idx, nb, ws, &n_b);
    if (st != PFLREF_OK)
        return st;
    if (A == NULL)
        return pflref_error_set(NULL, PFLREF_EINVAL, "A", "A is NULL");
    if (Phi == NULL)
        return pflref_error_set(NULL, PFLREF_EINVAL, "Phi", "Phi is NULL");
    gather_rows(m, D, idx, 0, n_b, ws);
    mlp_body_forward(m, w, n_b, ws->Xb, A, Phi);
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
    pflref_status st = check_mlp_batch(m, w, D, idx, nb, ws, &n_b);
    if (st != PFLREF_OK)
        return st;
    if (Phi == NULL)
        return pflref_error_set(NULL, PFLREF_EINVAL, "Phi", "Phi is NULL");
    if (g == NULL)
        return pflref_error_set(NULL, PFLREF_EINVAL, "g", "g is NULL");
    st = gather_labels(m, D, idx, 0, n_b, ws);
    if (st != PFLREF_OK)
        return st;
    double sum = 0.0;
    mlp_head_forward(m, w, n_b, Phi, ws->Z); /* Z := Phi W2ᵀ + 1 b2ᵀ */
    loss_terms(m, n_b, ws, &sum);
    mlp_output_grad(m, n_b, ws);        /* E := P − Y  or  s r */
    mlp_head_backward(m, n_b, Phi, ws->Z, g);
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
    pflref_status st = check_mlp_batch(m, w, D, idx, nb, ws, &n_b);
    if (st != PFLREF_OK)
        return st;
    if (A == NULL)
        return pflref_error_set(NULL, PFLREF_EINVAL, "A", "A is NULL");
    if (E == NULL)
        return pflref_error_set(NULL, PFLREF_EINVAL, "E", "E is NULL");
    if (g == NULL)
        return pflref_error_set(NULL, PFLREF_EINVAL, "g", "g is NULL");
    gather_rows(m, D, idx, 0, n_b, ws);
    mlp_body_backward(m, w, n_b, A, E, ws, g);
    ws->body_backward++;
    return PFLREF_OK;
}

/* ------------------------------------------------------------------------
 * Evaluation
 * ------------------------------------------------------------------------ */

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
    const size_t k = m->k;
    const int regression = pflref_model_is_regression(m);
    double sum = 0.0, sq = 0.0;
    size_t correct = 0;
    for (size_t first = 0; first < D->n; first += ws->max_batch) {
        const size_t nc = D->n - first < ws->max_batch ? D->n - first
                                                        : ws->max_batch;
        pflref_status st = gather(m, D, NULL, first, nc, ws);
        if (st != PFLREF_OK)
            return st;
        if (v != NULL) {
            forward(m, v, nc, ws);
            memcpy(ws->RZ, ws->Z, nc * k * sizeof(double)); /* RZ := z(v) */
        }
        forward(m, w, nc, ws);                              /* Z := z(w)  */
        if (v != NULL)      /* ẑ := α z(v) + (1 − α) z(w) */
            for (size_t q = 0; q < nc * k; q++)
                ws->Z[q] = alpha * ws->RZ[q] + (1.0 - alpha) * ws->Z[q];
        if (regression) {
            residual_terms(m, nc, ws, &sum, &sq);
            continue;
        }
        for (size_t j = 0; j < nc; j++) { /* argmax ẑ_j, lowest index on ties */
            const double *z = ws->Z + j * k;
            size_t best = 0;
            for (size_t c = 1; c < k; c++)
                if (z[c] > z[best])
                    best = c;
            correct += best == (size_t)ws->yb[j];
        }
        softmax_terms(nc, k, ws, &sum);
    }
    out->loss = sum / (double)D->n;              /* (1/n) Σ_j ℓ_j        */
    if (regression)
        out->mse = sq / (double)D->n;            /* (1/n) Σ_j (ŷ_j − y_j)² */
    else
        out->accuracy = (double)correct / (double)D->n;
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
    pflref_status st = check_args(m, w, D, ws);
    if (st != PFLREF_OK)
        return st;
    if (out == NULL)
        return pflref_error_set(NULL, PFLREF_EINVAL, "out", "out is NULL");
    if (m->kind != PFLREF_MODEL_QUADRATIC && D->n == 0)
        return pflref_error_set(NULL, PFLREF_EINVAL, "D",
                                "nothing to evaluate: n = 0");

    out->mse = NAN;
    out->accuracy = NAN;
    out->n = D->n;
    if (m->kind == PFLREF_MODEL_QUADRATIC) {
        out->loss = quadratic_f(m, w, D);
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
    if (m == NULL)
        return pflref_error_set(NULL, PFLREF_EINVAL, "m", "m is NULL");
    if (m->kind == PFLREF_MODEL_QUADRATIC)
        return pflref_error_set(NULL, PFLREF_EINVAL, "m",
                                "model quadratic has no outputs (its f_i "
                                "has no data); outputs exist for linear, "
                                "softmax and mlp");
    return PFLREF_OK;
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
    pflref_status st = check_has_outputs(m);
    size_t n_b;
    if (st == PFLREF_OK)
        st = check_batch(m, w, D, idx, nb, ws, &n_b);
    if (st != PFLREF_OK)
        return st;
    if (Z == NULL)
        return pflref_error_set(NULL, PFLREF_EINVAL, "Z", "Z is NULL");
    gather_rows(m, D, idx, 0, n_b, ws);
    forward(m, w, n_b, ws);             /* ws->Z := z(w; X_b) */
    memcpy(Z, ws->Z, n_b * m->k * sizeof(double));
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
    pflref_status st = check_has_outputs(m);
    if (st != PFLREF_OK)
        return st;
    if (Z == NULL)
        return pflref_error_set(NULL, PFLREF_EINVAL, "Z", "Z is NULL");
    size_t n_b;
    st = check_batch(m, Z, D, idx, nb, ws, &n_b); /* Z stands in for w */
    if (st != PFLREF_OK)
        return st;
    if (E == NULL)
        return pflref_error_set(NULL, PFLREF_EINVAL, "E", "E is NULL");
    st = gather_labels(m, D, idx, 0, n_b, ws);
    if (st != PFLREF_OK)
        return st;
    const size_t len = n_b * m->k;
    memmove(ws->Z, Z, len * sizeof(double));
    double sum = 0.0;
    loss_terms(m, n_b, ws, &sum);       /* Z := r  or  P;  Σ_j ℓ_j */
    mlp_output_grad(m, n_b, ws);        /* E := s r  or  P − Y     */
    memcpy(E, ws->Z, len * sizeof(double));
    if (loss != NULL)
        *loss = sum / (double)n_b;      /* (1/nb) Σ_j ℓ_j */
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
    pflref_status st = check_has_outputs(m);
    size_t n_b;
    if (st == PFLREF_OK)
        st = check_batch(m, w, D, idx, nb, ws, &n_b);
    if (st != PFLREF_OK)
        return st;
    if (E == NULL)
        return pflref_error_set(NULL, PFLREF_EINVAL, "E", "E is NULL");
    if (g == NULL)
        return pflref_error_set(NULL, PFLREF_EINVAL, "g", "g is NULL");
    const size_t d = m->d, k = m->k;
    const double inv = 1.0 / (double)n_b;
    gather_rows(m, D, idx, 0, n_b, ws);
    switch (m->kind) {
    case PFLREF_MODEL_LINEAR:
        /* g_w := (1/nb) X_bᵀ E */
        gemv(CblasTrans, inv, ws->Xb, n_b, d, E, 0.0, g);
        if (m->bias)                    /* g_b := (1/nb) Σ_j E_j */
            colsum(E, n_b, 1, inv, g + d);
        break;
    case PFLREF_MODEL_SOFTMAX:
        /* g_W := (1/nb) Eᵀ X_b   (k × d) */
        gemm(CblasTrans, CblasNoTrans, inv, E, n_b, k, ws->Xb, n_b, d, 0.0,
             g, k, d);
        if (m->bias)                    /* g_b := (1/nb) Σ_j E_j */
            colsum(E, n_b, k, inv, g + k * d);
        break;
    case PFLREF_MODEL_MLP:
        mlp_body_forward(m, w, n_b, ws->Xb, ws->A, ws->H);
        ws->body_forward++;
        mlp_head_backward(m, n_b, ws->H, E, g);
        mlp_body_backward(m, w, n_b, ws->A, E, ws, g);
        ws->body_backward++;
        break;
    case PFLREF_MODEL_QUADRATIC:
        break;
    }
    return PFLREF_OK;
}

/* Loss, mse and accuracy of the output mixture α z(v; x) + (1 − α) z(w; x)
 * on all of D, in index order and in chunks of max_batch, with the running
 * sums of pflref_model_evaluate.  Per chunk: RZ := z(v), Z := z(w), then
 * Z := α RZ + (1 − α) Z.
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
    pflref_status st = check_has_outputs(m);
    if (st == PFLREF_OK)
        st = check_args(m, w, D, ws);
    if (st != PFLREF_OK)
        return st;
    if (v == NULL)
        return pflref_error_set(NULL, PFLREF_EINVAL, "v", "v is NULL");
    if (out == NULL)
        return pflref_error_set(NULL, PFLREF_EINVAL, "out", "out is NULL");
    if (!isfinite(alpha))
        return pflref_error_set(NULL, PFLREF_EINVAL, "alpha",
                                "alpha = %g is not finite", alpha);
    if (D->n == 0)
        return pflref_error_set(NULL, PFLREF_EINVAL, "D",
                                "nothing to evaluate: n = 0");

    out->mse = NAN;
    out->accuracy = NAN;
    out->n = D->n;
    return evaluate_outputs(m, w, v, alpha, D, ws, out);
}

/* ------------------------------------------------------------------------
 * Validation
 * ------------------------------------------------------------------------ */

/* "<where>.<field>" (or "<field>" when where is empty) into buf. */
static const char *path(char *buf, size_t len, const char *where,
                        const char *field)
{
    snprintf(buf, len, "%s%s%s", where, where[0] != '\0' ? "." : "", field);
    return buf;
}

/* Check that D fits m (sizes, finite values, labels, a_j > 0).
 *   m [in];  D [in];  where [in] JSON path prefix ("clients[2].train"),
 *   NULL or "" for none;  err [out] may be NULL; err->where is the path of
 *   the first failure ("clients[2].train.X[3][1]").
 * Returns PFLREF_EINVAL, or PFLREF_ENOMEM when n·d > PFLREF_MAX_DATA. */
pflref_status pflref_data_validate(const pflref_model *m, const pflref_data *D,
                                   const char *where, pflref_error *err)
{
    char p[PFLREF_WHERE_MAX], f[64];
    if (where == NULL)
        where = "";
    if (m == NULL)
        return pflref_error_set(err, PFLREF_EINVAL, "m", "m is NULL");
    if (D == NULL)
        return pflref_error_set(err, PFLREF_EINVAL,
                                where[0] != '\0' ? where : "D", "no data");
    if (D->n < 1)
        return pflref_error_set(err, PFLREF_EINVAL,
                                path(p, sizeof p, where, "n"),
                                "n = 0: a data set needs at least one sample");
    const size_t d = m->d;

    if (m->kind == PFLREF_MODEL_QUADRATIC) {
        if (D->a == NULL)
            return pflref_error_set(err, PFLREF_EINVAL,
                                    path(p, sizeof p, where, "a"),
                                    "quadratic data without a (%zu entries)",
                                    d);
        if (D->c == NULL)
            return pflref_error_set(err, PFLREF_EINVAL,
                                    path(p, sizeof p, where, "c"),
                                    "quadratic data without c (%zu entries)",
                                    d);
        for (size_t j = 0; j < d; j++) {
            if (!(isfinite(D->a[j]) && D->a[j] > 0.0)) {
                snprintf(f, sizeof f, "a[%zu]", j);
                return pflref_error_set(err, PFLREF_EINVAL,
                                        path(p, sizeof p, where, f),
                                        "a_j = %g: the curvatures a_j must be "
                                        "finite and > 0",
                                        D->a[j]);
            }
            if (!isfinite(D->c[j])) {
                snprintf(f, sizeof f, "c[%zu]", j);
                return pflref_error_set(err, PFLREF_EINVAL,
                                        path(p, sizeof p, where, f),
                                        "c_j = %g is not finite", D->c[j]);
            }
        }
        return PFLREF_OK;
    }

    size_t nd;
    if (!mul_ok(D->n, d, &nd) || nd > PFLREF_MAX_DATA)
        return pflref_error_set(err, PFLREF_ENOMEM,
                                path(p, sizeof p, where, "X"),
                                "n·d = %zu·%zu exceeds PFLREF_MAX_DATA = %zu",
                                D->n, d, PFLREF_MAX_DATA);
    if (D->X == NULL)
        return pflref_error_set(err, PFLREF_EINVAL,
                                path(p, sizeof p, where, "X"),
                                "no features X (%zu × %zu)", D->n, d);
    if (D->y == NULL)
        return pflref_error_set(err, PFLREF_EINVAL,
                                path(p, sizeof p, where, "y"),
                                "no labels y (%zu)", D->n);
    for (size_t i = 0; i < D->n; i++)
        for (size_t j = 0; j < d; j++)
            if (!isfinite(D->X[i * d + j])) {
                snprintf(f, sizeof f, "X[%zu][%zu]", i, j);
                return pflref_error_set(err, PFLREF_EINVAL,
                                        path(p, sizeof p, where, f),
                                        "feature %g is not finite",
                                        D->X[i * d + j]);
            }
    const int classifier = pflref_model_is_classifier(m);
    for (size_t i = 0; i < D->n; i++) {
        const double y = D->y[i];
        if (!isfinite(y)) {
            snprintf(f, sizeof f, "y[%zu]", i);
            return pflref_error_set(err, PFLREF_EINVAL,
                                    path(p, sizeof p, where, f),
                                    "label %g is not finite", y);
        }
        if (classifier && !(y >= 0.0 && y < (double)m->k && y == floor(y))) {
            snprintf(f, sizeof f, "y[%zu]", i);
            return pflref_error_set(err, PFLREF_EINVAL,
                                    path(p, sizeof p, where, f),
                                    "label %g is not an integer class in "
                                    "[0, %zu)",
                                    y, m->k);
        }
    }
    return PFLREF_OK;
}

/* ------------------------------------------------------------------------
 * Split
 * ------------------------------------------------------------------------ */

/* out->personal[b] := 1 for every block named in names[0..count−1], or in
 * the group "input" / "head" named there.
 *   m [in];  names [in] count strings (may be NULL when count = 0);
 *   where [in] path prefix for errors (NULL: "split");  out [out];
 *   err [out] may be NULL.
 * Returns PFLREF_EINVAL with where "<where>[j]" for an unknown name. */
pflref_status pflref_split_from_names(const pflref_model *m,
                                      const char *const *names, size_t count,
                                      const char *where, pflref_split *out,
                                      pflref_error *err)
{
    char p[PFLREF_WHERE_MAX];
    if (where == NULL)
        where = "split";
    if (m == NULL)
        return pflref_error_set(err, PFLREF_EINVAL, "m", "m is NULL");
    if (out == NULL)
        return pflref_error_set(err, PFLREF_EINVAL, "out", "out is NULL");
    if (names == NULL && count > 0)
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "%zu names expected, names is NULL", count);
    memset(out, 0, sizeof *out);
    for (size_t j = 0; j < count; j++) {
        const char *name = names[j];
        const int input = name != NULL && strcmp(name, "input") == 0;
        const int head = name != NULL && strcmp(name, "head") == 0;
        const int b = pflref_model_block_index(m, name);
        if (!input && !head && b < 0) {
            char list[128] = "";
            for (size_t q = 0; q < m->nblocks; q++) {
                size_t len = strlen(list);
                snprintf(list + len, sizeof list - len, "%s, ",
                         m->blocks[q].name);
            }
            snprintf(p, sizeof p, "%s[%zu]", where, j);
            return pflref_error_set(
                err, PFLREF_EINVAL, p,
                "unknown block or group \"%s\": model %s has blocks %sand "
                "the groups input, head",
                name != NULL ? name : "(null)",
                pflref_model_kind_name(m->kind) != NULL
                    ? pflref_model_kind_name(m->kind)
                    : "(unknown)",
                list);
        }
        for (size_t q = 0; q < m->nblocks; q++)
            if ((input && m->blocks[q].is_input) ||
                (head && m->blocks[q].is_head) || (int)q == b)
                out->personal[q] = 1;
    }
    return PFLREF_OK;
}

/* mask[p] := 1 when parameter p lies in a personal block of split, else 0.
 *   m [in];  split [in] (NULL: everything shared);  mask [out] P entries.
 * Does nothing when m or mask is NULL. */
void pflref_split_mask(const pflref_model *m, const pflref_split *split,
                       unsigned char *mask)
{
    if (m == NULL || mask == NULL)
        return;
    memset(mask, 0, m->P);
    if (split == NULL)
        return;
    for (size_t q = 0; q < m->nblocks; q++)
        if (split->personal[q])
            memset(mask + m->blocks[q].offset, 1, m->blocks[q].size);
}

void pflref_model_workspace_passes(const pflref_model_workspace *ws,
                                   size_t *forward, size_t *backward)
{
    *forward = ws != NULL ? ws->body_forward : 0;
    *backward = ws != NULL ? ws->body_backward : 0;
}
