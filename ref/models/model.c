/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/models/model.c: the models of pflref: their description (sizes,
 * blocks, P), the public loss, gradient and exact Hessian-vector product,
 * which dispatch on the model's kind, and the split of the parameter
 * vector into shared and personal blocks.
 *
 * References:
 *   B. A. Pearlmutter, "Fast exact multiplication by the Hessian", Neural
 *   Computation 6(1):147-160, 1994 (the R-operator R{·} = ∂/∂r (·)(w + r v)
 *   at r = 0, used for every Hessian-vector product).
 *   spec README rule 3 (models); docs/models.md (the formulas, in full).
 *
 * Models (per-sample loss ℓ; the batch loss is the MEAN over the batch),
 * one file each:
 *
 *   quadratic  f(w) = ½ Σ_j a_j (w_j − c_j)²                (data-free)
 *   linear     ŷ = xᵀw + b;  squared ℓ = (ŷ − y)²,  half_squared ℓ = ½(ŷ − y)²
 *   softmax    z = W x + b;  ℓ = logsumexp(z) − z_y
 *   mlp        a = W1 x + b1, φ = σ(a), z = W2 φ + b2  (σ = relu or identity;
 *              b1, b2 each optional; with bn, φ = σ(γ ⊙ BN(a) + β),
 *              mlp.c);  cross_entropy ℓ = logsumexp(z) − z_y
 *              (k ≥ 2), or squared / half_squared on z = ŷ ∈ ℝ (k = 1)
 *
 * and the parts they share (models.h lists the files): the public loss,
 * gradient and HVP entry points, which dispatch on the kind (objective.c),
 * the workspace and the batch gather (batch.c), the dense layer on GSL
 * BLAS (dense.c), the losses on the outputs (losses.c), evaluation and
 * the outputs API (outputs.c).
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
 * Deviations from a textbook presentation, all deliberate (each is told in
 * full where it is implemented):
 *   a) the softmax is evaluated stably: with m = max_c z_c,
 *      ℓ = log Σ_c exp(z_c − m) − (z_y − m) and p_c = exp(z_c − m) / Σ
 *      (losses.c);
 *   b) relu'(0) = 0 (PyTorch's convention) and relu'' = 0, so the mlp HVP is
 *      exact wherever no pre-activation is exactly 0 (mlp.c);
 *   c) labels are checked (integral, in [0, k)) while the batch is gathered,
 *      even without a prior pflref_data_validate (batch.c);
 *   d) the mlp gradient runs body forward → head → body backward through
 *      the functions of the split API, so both agree bit for bit (mlp.c);
 *   e) the gradient is also offered in three parts on the OUTPUTS z, for
 *      losses of combined outputs such as APFL's output mixture (outputs.c).
 *
 * Determinism: one fixed order for every explicit sum; BLAS results may
 * differ in the last bits between OpenBLAS kernels or thread counts.
 * Cost per call: loss and gradient O(nb·P); HVP about twice the gradient.
 * Memory: every temporary lives in the workspace; compute functions never
 * allocate and keep no static state.
 */
#include <float.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "core/args.h"
#include "models/models.h"

/* ------------------------------------------------------------------------
 * Names
 * ------------------------------------------------------------------------ */

/* The names used in specs and results, indexed by the enum values. */
static const char *const KIND_NAMES[] = {
    [PFLREF_MODEL_QUADRATIC] = "quadratic",
    [PFLREF_MODEL_LINEAR] = "linear",
    [PFLREF_MODEL_SOFTMAX] = "softmax",
    [PFLREF_MODEL_MLP] = "mlp",
    [PFLREF_MODEL_LAYERS] = "layers",
};
static const char *const LOSS_NAMES[] = {
    [PFLREF_LOSS_SQUARED] = "squared",
    [PFLREF_LOSS_HALF_SQUARED] = "half_squared",
    [PFLREF_LOSS_CROSS_ENTROPY] = "cross_entropy",
    [PFLREF_LOSS_QUADRATIC] = "quadratic",
};
static const char *const ACTIVATION_NAMES[] = {
    [PFLREF_ACT_RELU] = "relu",
    [PFLREF_ACT_IDENTITY] = "identity",
};

/* names[value], or NULL for a value outside the table of count names. */
static const char *name_of(const char *const *names, size_t count, int value)
{
    return value >= 0 && (size_t)value < count ? names[value] : NULL;
}

#define NAME_OF(table, value) \
    name_of(table, sizeof table / sizeof *table, (int)(value))

const char *pflref_model_kind_name(pflref_model_kind kind)
{
    return NAME_OF(KIND_NAMES, kind);
}

const char *pflref_loss_name(pflref_loss loss)
{
    return NAME_OF(LOSS_NAMES, loss);
}

const char *pflref_activation_name(pflref_activation act)
{
    return NAME_OF(ACTIVATION_NAMES, act);
}

/* ------------------------------------------------------------------------
 * Model description
 * ------------------------------------------------------------------------ */

/* 1 when `loss` fits model `kind`: quadratic: QUADRATIC; linear: SQUARED or
 * HALF_SQUARED; softmax: CROSS_ENTROPY; mlp: any of CROSS_ENTROPY, SQUARED,
 * HALF_SQUARED. */
static int loss_fits(pflref_model_kind kind, pflref_loss loss)
{
    const int squared = loss == PFLREF_LOSS_SQUARED ||
                        loss == PFLREF_LOSS_HALF_SQUARED;
    switch (kind) {
    case PFLREF_MODEL_QUADRATIC: return loss == PFLREF_LOSS_QUADRATIC;
    case PFLREF_MODEL_LINEAR:    return squared;
    case PFLREF_MODEL_SOFTMAX:   return loss == PFLREF_LOSS_CROSS_ENTROPY;
    case PFLREF_MODEL_MLP:
        return loss == PFLREF_LOSS_CROSS_ENTROPY || squared;
    case PFLREF_MODEL_LAYERS:
        return 0;   /* pflref_model_init_layers describes a layer list */
    }
    return 0;
}

/* Test the arguments of describe held in c (kind, loss, d, k, h,
 * activation, hidden_bias, bias as given), in the documented order. */
static pflref_status check_description(const pflref_model *c,
                                       pflref_error *err)
{
    const char *kname = pflref_model_kind_name(c->kind);
    if (kname == NULL)
        return pflref_error_set(err, PFLREF_EINVAL, "kind",
                                "unknown model kind %d", (int)c->kind);
    if (c->kind == PFLREF_MODEL_LAYERS)
        return pflref_error_set(err, PFLREF_EINVAL, "kind",
                                "a layer list is described by "
                                "pflref_model_init_layers");
    if (!loss_fits(c->kind, c->loss)) {
        const char *lname = pflref_loss_name(c->loss);
        return pflref_error_set(
            err, PFLREF_EINVAL, "loss",
            "loss %s does not fit model %s (quadratic: quadratic; linear: "
            "squared or half_squared; softmax: cross_entropy; mlp: "
            "cross_entropy, squared or half_squared)",
            lname != NULL ? lname : "(unknown)", kname);
    }
    if (c->d < 1)
        return pflref_error_set(err, PFLREF_EINVAL, "d",
                                "d = 0: model %s needs d >= 1", kname);
    const int classifier = pflref_model_is_classifier(c);
    const int mlp = c->kind == PFLREF_MODEL_MLP;
    if (classifier && c->k < 2)
        return pflref_error_set(err, PFLREF_EINVAL, "k",
                                "k = %zu: model %s needs k >= 2 classes",
                                c->k, kname);
    if (mlp && !classifier && c->k != 1)
        return pflref_error_set(err, PFLREF_EINVAL, "k",
                                "k = %zu: an mlp with the %s loss has one "
                                "output (k = 1)",
                                c->k, pflref_loss_name(c->loss));
    if (mlp && c->h < 1)
        return pflref_error_set(err, PFLREF_EINVAL, "h",
                                "h = 0: model mlp needs h >= 1 hidden units");
    if (c->bias != 0 && c->bias != 1)
        return pflref_error_set(err, PFLREF_EINVAL, "bias",
                                "bias = %d: must be 0 or 1", c->bias);
    if (c->kind == PFLREF_MODEL_QUADRATIC && c->bias != 0)
        return pflref_error_set(err, PFLREF_EINVAL, "bias",
                                "bias = 1: model quadratic has no bias");
    if (mlp && pflref_activation_name(c->activation) == NULL)
        return pflref_error_set(err, PFLREF_EINVAL, "activation",
                                "unknown activation %d (known: relu, "
                                "identity)",
                                (int)c->activation);
    if (mlp && c->hidden_bias != 0 && c->hidden_bias != 1)
        return pflref_error_set(err, PFLREF_EINVAL, "hidden_bias",
                                "hidden_bias = %d: must be 0 or 1",
                                c->hidden_bias);
    if (c->bn != 0 && (!mlp || c->bn != 1))
        return pflref_error_set(err, PFLREF_EINVAL, "bn",
                                "bn = %d: batch normalisation is an mlp "
                                "option, 0 or 1", c->bn);
    if (c->bn && !(c->bn_eps >= 0.0 && c->bn_eps <= DBL_MAX))
        return pflref_error_set(err, PFLREF_EINVAL, "bn_eps",
                                "bn_eps = %g: ε must be finite and >= 0",
                                c->bn_eps);
    if (c->bn && !(c->bn_momentum >= 0.0 && c->bn_momentum <= 1.0))
        return pflref_error_set(err, PFLREF_EINVAL, "bn_momentum",
                                "bn_momentum = %g: ρ must lie in [0, 1]",
                                c->bn_momentum);
    return PFLREF_OK;
}

/* *P := the parameter count of c, with every product and sum checked for
 * overflow; 0 when one overflows size_t. */
static int count_params(const pflref_model *c, size_t *P)
{
    const size_t d = c->d, k = c->k, h = c->h;
    size_t t;
    *P = 0;
    switch (c->kind) {
    case PFLREF_MODEL_QUADRATIC: /* w (d) */
        *P = d;
        return 1;
    case PFLREF_MODEL_LINEAR:    /* w (d), b (1) */
        *P = d;
        return pflref_size_add(P, (size_t)c->bias);
    case PFLREF_MODEL_SOFTMAX:   /* W (k×d), b (k) */
        return pflref_size_mul(k, d, P) &&
               (c->bias == 0 || pflref_size_add(P, k));
    case PFLREF_MODEL_LAYERS:    /* never here (check_description) */
        return 0;
    case PFLREF_MODEL_MLP:       /* W1 (h×d), [b1 (h)], [γ, β, r_μ, r_v
                                    (h each)], W2 (k×h), [b2 (k)] */
        return pflref_size_mul(h, d, P) &&
               (c->hidden_bias == 0 || pflref_size_add(P, h)) &&
               (c->bn == 0 ||
                (h <= SIZE_MAX / 4 && pflref_size_add(P, 4 * h))) &&
               pflref_size_mul(k, h, &t) && pflref_size_add(P, t) &&
               (c->bias == 0 || pflref_size_add(P, k));
    }
    return 1;
}

/* Append block `name` (rows × cols at the current end of m->blocks). */
static void add_block(pflref_model *m, const char *name, size_t rows,
                      size_t cols, int is_input, int is_head)
{
    const size_t offset = m->nblocks == 0
                              ? 0
                              : m->blocks[m->nblocks - 1].offset +
                                    m->blocks[m->nblocks - 1].size;
    pflref_block *B = &m->blocks[m->nblocks++];
    *B = (pflref_block){
        .offset = offset, .size = rows * cols, .rows = rows,
        .cols = cols, .is_input = is_input, .is_head = is_head,
    };
    snprintf(B->name, sizeof B->name, "%s", name);
}

/* The BN layer's blocks, in BatchNorm1d's state_dict order: weight γ,
 * bias β (parameters), running_mean r_μ, running_var r_v (buffers; its
 * num_batches_tracked is not kept: with ρ given it is never read). */
static void add_bn_blocks(pflref_model *m)
{
    static const char *const names[] = {"bn_gamma", "bn_beta",
                                        "bn_running_mean", "bn_running_var"};
    for (size_t q = 0; q < 4; q++) {
        add_block(m, names[q], m->h, 1, 0, 0);
        m->blocks[m->nblocks - 1].is_bn = 1;
        m->blocks[m->nblocks - 1].is_buffer = q >= 2;
    }
}

/* m's blocks in state_dict order (pflref/model.h). */
static void add_blocks(pflref_model *m)
{
    const size_t d = m->d, k = m->k, h = m->h;
    switch (m->kind) {
    case PFLREF_MODEL_QUADRATIC:
        add_block(m, "w", d, 1, 1, 1);
        break;
    case PFLREF_MODEL_LINEAR:
        add_block(m, "w", d, 1, 1, 1);
        if (m->bias)
            add_block(m, "b", 1, 1, 1, 1);
        break;
    case PFLREF_MODEL_SOFTMAX:
        add_block(m, "W", k, d, 1, 1);
        if (m->bias)
            add_block(m, "b", k, 1, 1, 1);
        break;
    case PFLREF_MODEL_MLP:
        add_block(m, "W1", h, d, 1, 0);
        if (m->hidden_bias)
            add_block(m, "b1", h, 1, 1, 0);
        if (m->bn)
            add_bn_blocks(m);
        add_block(m, "W2", k, h, 0, 1);
        if (m->bias)
            add_block(m, "b2", k, 1, 0, 1);
        break;
    case PFLREF_MODEL_LAYERS:   /* never here (check_description) */
        break;
    }
}

/* Describe a model: sizes, blocks in state_dict order, P.
 *   m      [out] the description (untouched on failure)
 *   given  [in]  kind, loss, d, k, h, activation, hidden_bias and bias:
 *     kind         quadratic, linear, softmax or mlp
 *     loss         quadratic: QUADRATIC; linear: SQUARED or HALF_SQUARED;
 *                  softmax: CROSS_ENTROPY; mlp: any of CROSS_ENTROPY,
 *                  SQUARED, HALF_SQUARED
 *     d            ≥ 1 input features (quadratic: dimension of w)
 *     k            ≥ 2 classes for softmax and the cross-entropy mlp; 1 for
 *                  the squared-loss mlp; ignored (stored as 1) for
 *                  quadratic and linear
 *     h            ≥ 1 hidden units for mlp; ignored (stored as 0) otherwise
 *     activation   mlp: RELU or IDENTITY; ignored (stored as RELU) otherwise
 *     hidden_bias  mlp: 0 or 1 (b1); ignored (stored as 0) otherwise
 *     bias         0 or 1 (mlp: b2); quadratic: must be 0
 *   err    [out] may be NULL
 * Returns PFLREF_EINVAL naming the argument, PFLREF_ENOMEM (where "P")
 * when P overflows size_t or one vector of P doubles exceeds the memory
 * available (pflref_memory_available). */
static pflref_status describe(pflref_model *m, const pflref_model *given,
                              pflref_error *err)
{
    /* Test the input parameters. */
    pflref_status st;
    if ((st = pflref_arg_nonnull(err, "m", m)) ||
        (st = check_description(given, err)))
        return st;

    /* The sizes as stored, then P, with every product and sum checked. */
    const pflref_model_kind kind = given->kind;
    const int mlp = kind == PFLREF_MODEL_MLP;
    pflref_model c = {
        .kind = kind,
        .loss = given->loss,
        .d = given->d,
        .k = kind == PFLREF_MODEL_SOFTMAX || mlp ? given->k : 1,
        .h = mlp ? given->h : 0,
        .bias = given->bias,
        .hidden_bias = mlp ? given->hidden_bias : 0,
        .activation = mlp ? given->activation : PFLREF_ACT_RELU,
        .bn = given->bn,
        .bn_eps = given->bn ? given->bn_eps : 0.0,
        .bn_momentum = given->bn ? given->bn_momentum : 0.0,
    };
    const char *kname = pflref_model_kind_name(kind);
    if (!count_params(&c, &c.P) || c.P > SIZE_MAX / sizeof(double))
        return pflref_error_set(
            err, PFLREF_ENOMEM, "P",
            "model %s with d = %zu, k = %zu, h = %zu: the parameter count "
            "overflows size_t", kname, c.d, c.k, c.h);
    /* Limits by memory: one parameter vector of P doubles must fit in the
     * memory available (the run's own estimate, ref/engine/run.c, then
     * counts every buffer). */
    size_t avail;
    const char *source;
    /* a malformed PFLREF_MEMORY_LIMIT is the run's to report (pflref_run,
     * where "PFLREF_MEMORY_LIMIT"), not this model's field */
    if (pflref_memory_available(&avail, &source, NULL) == PFLREF_OK &&
        c.P * sizeof(double) > avail)
        return pflref_error_set(
            err, PFLREF_ENOMEM, "P",
            "model %s with d = %zu, k = %zu, h = %zu has P = %zu parameters: "
            "one parameter vector needs %zu bytes (%.1f MiB), more than the "
            "%zu bytes (%.1f MiB) of memory available (%s)",
            kname, c.d, c.k, c.h, c.P, c.P * sizeof(double),
            (double)(c.P * sizeof(double)) / 1048576.0, avail,
            (double)avail / 1048576.0, source);

    /* Fill the description and its blocks, in state_dict order. */
    add_blocks(&c);
    *m = c;
    return PFLREF_OK;
}

/* The model of kind `kind` (see describe); an mlp gets the ReLU activation
 * and b1 present exactly when b2 is (bias). */
pflref_status pflref_model_init(pflref_model *m, pflref_model_kind kind,
                                pflref_loss loss, size_t d, size_t k, size_t h,
                                int bias, pflref_error *err)
{
    const pflref_model given = {
        .kind = kind, .loss = loss, .d = d, .k = k, .h = h,
        .activation = PFLREF_ACT_RELU, .hidden_bias = bias, .bias = bias,
    };
    return describe(m, &given, err);
}

/* The mlp z = W2 σ(W1 x + b1) + b2 with each bias on its own (see
 * describe; output_bias is m->bias). */
pflref_status pflref_model_init_mlp(pflref_model *m, pflref_loss loss,
                                    size_t d, size_t k, size_t h,
                                    pflref_activation act, int hidden_bias,
                                    int output_bias, pflref_error *err)
{
    const pflref_model given = {
        .kind = PFLREF_MODEL_MLP, .loss = loss, .d = d, .k = k, .h = h,
        .activation = act, .hidden_bias = hidden_bias, .bias = output_bias,
    };
    return describe(m, &given, err);
}

/* Batch normalisation after W1 x + b1 of the mlp m (see describe). */
pflref_status pflref_model_add_bn(pflref_model *m, double eps,
                                  double momentum, pflref_error *err)
{
    pflref_status st = pflref_arg_nonnull(err, "m", m);
    if (st != PFLREF_OK)
        return st;
    if (m->kind != PFLREF_MODEL_MLP || m->bn)
        return pflref_error_set(err, PFLREF_EINVAL, "m",
                                "batch normalisation needs an mlp without "
                                "it (model %s%s)",
                                pflref_model_kind_name(m->kind) != NULL
                                    ? pflref_model_kind_name(m->kind)
                                    : "(unknown)",
                                m->bn ? ", bn already on" : "");
    pflref_model given = *m;
    given.bn = 1;
    given.bn_eps = eps;
    given.bn_momentum = momentum;
    given.nblocks = 0;
    return describe(m, &given, err);
}

/* γ := 1, β := 0, r_μ := 0, r_v := 1 (torch.nn.BatchNorm1d's start). */
void pflref_model_bn_reset(const pflref_model *m, double *w)
{
    if (m == NULL || w == NULL || !m->bn)
        return;
    if (m->kind == PFLREF_MODEL_LAYERS) {
        /* each batchnorm layer's blocks γ, β, r_μ, r_v: 1, 0, 0, 1 */
        for (size_t i = 0; i < m->nlayers; i++) {
            const pflref_layer *L = &m->layers[i];
            if (L->kind != PFLREF_LAYER_BATCHNORM1D &&
                L->kind != PFLREF_LAYER_BATCHNORM2D)
                continue;
            for (size_t q = 0; q < 4; q++) {
                const pflref_block *B =
                    &m->blocks[(size_t)L->first_block + q];
                for (size_t e = 0; e < B->size; e++)
                    w[B->offset + e] = q == 0 || q == 3 ? 1.0 : 0.0;
            }
        }
        return;
    }
    for (size_t b = 0; b < m->nblocks; b++) {
        const pflref_block *B = &m->blocks[b];
        const int one = strcmp(B->name, "bn_gamma") == 0 ||
                        strcmp(B->name, "bn_running_var") == 0;
        if (B->is_bn)
            for (size_t q = 0; q < B->size; q++)
                w[B->offset + q] = one ? 1.0 : 0.0;
    }
}

int pflref_model_is_regression(const pflref_model *m)
{
    if (m == NULL)
        return 0;
    const int squared = m->loss == PFLREF_LOSS_SQUARED ||
                        m->loss == PFLREF_LOSS_HALF_SQUARED;
    return m->kind == PFLREF_MODEL_LINEAR ||
           ((m->kind == PFLREF_MODEL_MLP || m->kind == PFLREF_MODEL_LAYERS) &&
            squared);
}

int pflref_model_is_classifier(const pflref_model *m)
{
    if (m == NULL)
        return 0;
    return m->kind == PFLREF_MODEL_SOFTMAX ||
           ((m->kind == PFLREF_MODEL_MLP || m->kind == PFLREF_MODEL_LAYERS) &&
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
 * Split
 * ------------------------------------------------------------------------ */

/* PFLREF_EINVAL at "<where>[j]" for names[j] = name, which is neither a
 * block of m nor a group, with the blocks m has. */
static pflref_status unknown_name(const pflref_model *m, const char *name,
                                  const char *where, size_t j,
                                  pflref_error *err)
{
    char p[PFLREF_WHERE_MAX];
    char list[256] = "";
    const int layers = m->kind == PFLREF_MODEL_LAYERS;
    /* a layer list names its parametrised layers, the others their blocks */
    for (size_t q = 0; q < (layers ? m->nlayers : m->nblocks); q++) {
        if (layers && m->layers[q].first_block < 0)
            continue;
        size_t len = strlen(list);
        snprintf(list + len, sizeof list - len, "%s, ",
                 layers ? m->layers[q].name : m->blocks[q].name);
    }
    snprintf(p, sizeof p, "%s[%zu]", where, j);
    const char *kname = pflref_model_kind_name(m->kind);
    return pflref_error_set(
        err, PFLREF_EINVAL, p,
        "unknown block or group \"%s\": model %s has %s %sand the "
        "groups input, head%s",
        name != NULL ? name : "(null)", kname != NULL ? kname : "(unknown)",
        layers ? "the layers (each naming its blocks NAME.weight, ...)"
               : "blocks",
        list, layers ? ", bn" : "");
}

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
    if (where == NULL)
        where = "split";
    pflref_status st;
    if ((st = pflref_arg_nonnull(err, "m", m)) ||
        (st = pflref_arg_nonnull(err, "out", out)))
        return st;
    if (names == NULL && count > 0)
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "%zu names expected, names is NULL", count);
    memset(out, 0, sizeof *out);
    const int layers = m->kind == PFLREF_MODEL_LAYERS;
    for (size_t j = 0; j < count; j++) {
        const char *name = names[j];
        const int input = name != NULL && strcmp(name, "input") == 0;
        const int head = name != NULL && strcmp(name, "head") == 0;
        const int bn = layers && name != NULL && strcmp(name, "bn") == 0;
        const int b = pflref_model_block_index(m, name);
        /* a layer list's layer name: all of the layer's blocks */
        const pflref_layer *L = NULL;
        for (size_t i = 0; layers && name != NULL && i < m->nlayers; i++)
            if (m->layers[i].first_block >= 0 &&
                strcmp(m->layers[i].name, name) == 0)
                L = &m->layers[i];
        if (!input && !head && !bn && b < 0 && L == NULL)
            return unknown_name(m, name, where, j, err);
        for (size_t q = 0; q < m->nblocks; q++)
            if ((input && m->blocks[q].is_input) ||
                (head && m->blocks[q].is_head) ||
                (bn && m->blocks[q].is_bn) || (int)q == b ||
                (L != NULL && q >= (size_t)L->first_block &&
                 q < (size_t)L->first_block + L->nblocks))
                out->personal[q] = 1;
    }
    return PFLREF_OK;
}

/* The index kernel of the split mask, proved (proofs/README.md): mask[p] =
 * 1 exactly when p lies in a block q < nblocks with personal[q] ≠ 0 (none
 * when personal is NULL), 0 otherwise; writes mask[0..P−1] and nothing
 * else.  Every block must lie inside the P entries. */
/*@ requires \valid(mask + (0 .. P - 1));
    requires \valid_read(blocks + (0 .. nblocks - 1));
    requires personal == \null || \valid_read(personal + (0 .. nblocks - 1));
    requires blocks_within(blocks, nblocks, P);
    requires \separated(mask + (0 .. P - 1), blocks + (0 .. nblocks - 1));
    requires personal == \null ||
             \separated(mask + (0 .. P - 1), personal + (0 .. nblocks - 1));
    assigns mask[0 .. P - 1];
    ensures \forall integer p; 0 <= p < P ==> mask[p] == 0 || mask[p] == 1;
    ensures personal == \null ==> \forall integer p; 0 <= p < P ==>
            mask[p] == 0;
    ensures personal != \null ==> \forall integer p; 0 <= p < P ==>
            (mask[p] == 1 <==> in_personal(blocks, personal, nblocks, p));
 */
static void block_mask(const pflref_block *blocks, size_t nblocks,
                       const unsigned char *personal, unsigned char *mask,
                       size_t P)
{
    /*@ loop invariant 0 <= p <= P;
        loop invariant \forall integer r; 0 <= r < p ==> mask[r] == 0;
        loop assigns p, mask[0 .. P - 1];
        loop variant P - p;
     */
    for (size_t p = 0; p < P; p++)
        mask[p] = 0;
    if (personal == NULL)
        return;
    /*@ loop invariant 0 <= q <= nblocks;
        loop invariant \forall integer r; 0 <= r < P ==>
                       mask[r] == 0 || mask[r] == 1;
        loop invariant \forall integer r; 0 <= r < P && mask[r] == 1 ==>
                       in_personal(blocks, personal, q, r);
        loop invariant \forall integer r; 0 <= r < P &&
                       in_personal(blocks, personal, q, r) ==> mask[r] == 1;
        loop assigns q, mask[0 .. P - 1];
        loop variant nblocks - q;
     */
    for (size_t q = 0; q < nblocks; q++) {
        /*@ assert \forall integer r;
                   in_personal(blocks, personal, q + 1, r) ==>
                   in_personal(blocks, personal, q, r) ||
                   (personal[q] != 0 && blocks[q].offset <= r <
                    blocks[q].offset + blocks[q].size); */
        if (!personal[q])
            continue;
        const size_t lo = blocks[q].offset, hi = lo + blocks[q].size;
        /*@ loop invariant lo <= p <= hi;
            loop invariant \forall integer r; 0 <= r < P ==>
                           mask[r] == 0 || mask[r] == 1;
            loop invariant \forall integer r; 0 <= r < P && mask[r] == 1 ==>
                           in_personal(blocks, personal, q, r) ||
                           lo <= r < p;
            loop invariant \forall integer r; 0 <= r < P &&
                           in_personal(blocks, personal, q, r) ==>
                           mask[r] == 1;
            loop invariant \forall integer r; lo <= r < p ==> mask[r] == 1;
            loop assigns p, mask[lo .. hi - 1];
            loop variant hi - p;
         */
        for (size_t p = lo; p < hi; p++)
            mask[p] = 1;
    }
}

/* The contract is on the declaration (pflref/model.h). */
void pflref_split_mask(const pflref_model *m, const pflref_split *split,
                       unsigned char *mask)
{
    if (m == NULL || mask == NULL)
        return;
    block_mask(m->blocks, m->nblocks, split ? split->personal : NULL, mask,
               m->P);
}

/* The contract is on the declaration (pflref/model.h). */
int pflref_model_blocks_inside(const pflref_model *m)
{
    const size_t nb = m->nblocks, P = m->P;
    if (nb > PFLREF_MAX_BLOCKS)
        return 0;
    /*@ loop invariant 0 <= q <= nb;
        loop invariant blocks_within(&m->blocks[0], q, P);
        loop assigns q;
        loop variant nb - q;
     */
    for (size_t q = 0; q < nb; q++) {
        const pflref_block *b = &m->blocks[q];
        if (b->size > P || b->offset > P - b->size)  /* offset + size > P */
            return 0;
    }
    return 1;
}
