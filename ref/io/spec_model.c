/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/io/spec_model.c: reading a spec's "model" (docs/formats.md, "model").
 *
 * Keys: kind, d, k, h, loss, bias, and for the mlp only activation
 * ("relu" | "identity", default relu), hidden_bias (default: bias) and
 * batch normalisation after the hidden affine map: bn (default false),
 * bn_eps (ε ≥ 0, default 1e-5) and bn_momentum (ρ in [0, 1], default 0.1),
 * the last two only with bn true (torch.nn.BatchNorm1d's defaults).
 *
 *   kind       loss (default first)                   k            h
 *   quadratic  quadratic                              —            —
 *   linear     squared | half_squared (required)      —            —
 *   softmax    cross_entropy                          ≥ 2          —
 *   mlp        cross_entropy | squared | half_squared ≥ 2, or 1    ≥ 1
 *                                                     (squared)
 *
 * The mlp's bias (b2, default true) and hidden_bias (b1) may be false; the
 * quadratic model has no bias.  Fields are read in the order of this table
 * (kind, loss, d, k, h, bias, activation, hidden_bias, bn, bn_eps,
 * bn_momentum), so the first error
 * reported does not depend on the order of the keys.
 */
#include <stdio.h>
#include <string.h>
#include "io/spec_read.h"

/* What "model" says, gathered before the model is built. */
typedef struct {
    const char *kind;          /* as written                              */
    pflref_model_kind mk;
    pflref_loss loss;
    size_t d, k, h;
    int bias;                  /* b (b2 for the mlp)                      */
    pflref_activation act;     /* mlp: σ                                  */
    int hidden_bias;           /* mlp: b1                                 */
    int bn;                    /* mlp: batch normalisation after W1 x + b1 */
    double bn_eps, bn_momentum; /* its ε and ρ                            */
} model_fields;

/* The kinds and their default losses, in the order of the error message. */
static const struct {
    const char *name;
    pflref_model_kind kind;
    pflref_loss loss;
} MODEL_KINDS[] = {
    {"quadratic", PFLREF_MODEL_QUADRATIC, PFLREF_LOSS_QUADRATIC},
    {"linear", PFLREF_MODEL_LINEAR, PFLREF_LOSS_HALF_SQUARED},
    {"softmax", PFLREF_MODEL_SOFTMAX, PFLREF_LOSS_CROSS_ENTROPY},
    {"mlp", PFLREF_MODEL_MLP, PFLREF_LOSS_CROSS_ENTROPY},
};

/* model.kind: the kind and its default loss. */
static pflref_status read_kind(const json_t *v, model_fields *f,
                               pflref_error *err)
{
    json_t *kind_v;
    pflref_status st;
    if ((st = pflref_json_member(v, "model", "kind", 1, &kind_v, err)) ||
        (st = pflref_json_string(kind_v, "model.kind", &f->kind, err)))
        return st;
    for (size_t i = 0; i < sizeof MODEL_KINDS / sizeof MODEL_KINDS[0]; i++)
        if (strcmp(f->kind, MODEL_KINDS[i].name) == 0) {
            f->mk = MODEL_KINDS[i].kind;
            f->loss = MODEL_KINDS[i].loss;
            return PFLREF_OK;
        }
    return pflref_error_set(err, PFLREF_EINVAL, "model.kind",
                            "unknown model \"%s\" (known: quadratic, "
                            "linear, softmax, mlp)", f->kind);
}

/* model.loss: the linear model and the mlp also take squared or
 * half_squared; the linear model must say which. */
static pflref_status read_loss(const json_t *v, model_fields *f,
                               pflref_error *err)
{
    const int mlp = f->mk == PFLREF_MODEL_MLP;
    json_t *loss_v = json_object_get(v, "loss");
    if (loss_v == NULL) {
        if (f->mk == PFLREF_MODEL_LINEAR)
            return pflref_error_set(err, PFLREF_EINVAL, "model.loss",
                                    "a linear model needs \"loss\": "
                                    "\"squared\" or \"half_squared\"");
        return PFLREF_OK;
    }
    const char *ln;
    pflref_status st = pflref_json_string(loss_v, "model.loss", &ln, err);
    if (st != PFLREF_OK)
        return st;
    const int squared_ok = f->mk == PFLREF_MODEL_LINEAR || mlp;
    if (squared_ok && strcmp(ln, "squared") == 0)
        f->loss = PFLREF_LOSS_SQUARED;
    else if (squared_ok && strcmp(ln, "half_squared") == 0)
        f->loss = PFLREF_LOSS_HALF_SQUARED;
    else if (strcmp(ln, pflref_loss_name(f->loss)) != 0)
        return pflref_error_set(
            err, PFLREF_EINVAL, "model.loss",
            "loss \"%s\" does not fit model %s (%s)", ln, f->kind,
            f->mk == PFLREF_MODEL_LINEAR ? "squared or half_squared"
            : mlp ? "cross_entropy, squared or half_squared"
                  : pflref_loss_name(f->loss));
    return PFLREF_OK;
}

/* model.d, model.k, model.h: a classifier has k ≥ 2 classes, the
 * squared-loss mlp one output; only the mlp has a hidden layer. */
static pflref_status read_sizes(const json_t *v, model_fields *f,
                                pflref_error *err)
{
    const size_t max = PFLREF_SPEC_MAX_COUNT;
    const int mlp = f->mk == PFLREF_MODEL_MLP;
    const int classes = f->mk == PFLREF_MODEL_SOFTMAX ||
                        (mlp && f->loss == PFLREF_LOSS_CROSS_ENTROPY);
    json_t *d_v;
    pflref_status st;
    if ((st = pflref_json_member(v, "model", "d", 1, &d_v, err)) ||
        (st = pflref_json_size(d_v, "model.d", 1, max, &f->d, err)))
        return st;
    json_t *k_v = json_object_get(v, "k"), *h_v = json_object_get(v, "h");
    if (classes) {
        if ((st = pflref_json_member(v, "model", "k", 1, &k_v, err)) ||
            (st = pflref_json_size(k_v, "model.k", 2, max, &f->k, err)))
            return st;
    } else if (mlp && k_v != NULL) {
        if ((st = pflref_json_size(k_v, "model.k", 1, max, &f->k, err)))
            return st;
        if (f->k != 1)
            return pflref_error_set(err, PFLREF_EINVAL, "model.k",
                                    "k = %zu: an mlp with the %s loss has "
                                    "one output (k = 1)",
                                    f->k, pflref_loss_name(f->loss));
    } else if (k_v != NULL) {
        return pflref_error_set(err, PFLREF_EINVAL, "model.k",
                                "model %s has no classes", f->kind);
    }
    if (mlp)
        return (st = pflref_json_member(v, "model", "h", 1, &h_v, err))
                   ? st
                   : pflref_json_size(h_v, "model.h", 1, max, &f->h, err);
    if (h_v != NULL)
        return pflref_error_set(err, PFLREF_EINVAL, "model.h",
                                "model %s has no hidden layer", f->kind);
    return PFLREF_OK;
}

/* model.bias, and for the mlp only model.activation and
 * model.hidden_bias (default: bias). */
static pflref_status read_bias(const json_t *v, model_fields *f,
                               pflref_error *err)
{
    static const char *const activations[] = {"relu", "identity", NULL};
    const int mlp = f->mk == PFLREF_MODEL_MLP;
    pflref_status st;
    json_t *b_v = json_object_get(v, "bias");
    if (b_v != NULL) {
        if ((st = pflref_json_bool(b_v, "model.bias", &f->bias, err)))
            return st;
        if (f->mk == PFLREF_MODEL_QUADRATIC && f->bias)
            return pflref_error_set(err, PFLREF_EINVAL, "model.bias",
                                    "the quadratic model has no bias");
    }
    f->hidden_bias = f->bias;
    json_t *act_v = json_object_get(v, "activation");
    json_t *hb_v = json_object_get(v, "hidden_bias");
    if (!mlp && (act_v != NULL || hb_v != NULL)) {
        const char *key = act_v != NULL ? "activation" : "hidden_bias";
        return pflref_error_set(err, PFLREF_EINVAL,
                                act_v != NULL ? "model.activation"
                                              : "model.hidden_bias",
                                "model %s has no hidden layer (\"%s\" is for "
                                "the mlp only)",
                                f->kind, key);
    }
    /* The names in the order of pflref_activation. */
    int act;
    if ((st = pflref_json_opt_enum(v, "model", "activation", activations,
                                   PFLREF_ACT_RELU, &act, err)))
        return st;
    f->act = (pflref_activation)act;
    if (hb_v != NULL)
        return pflref_json_bool(hb_v, "model.hidden_bias", &f->hidden_bias,
                                err);
    return PFLREF_OK;
}

/* PyTorch's BatchNorm1d defaults (eps, momentum). */
#define BN_EPS_DEFAULT 1e-5
#define BN_MOMENTUM_DEFAULT 0.1

/* model.bn, model.bn_eps, model.bn_momentum: the mlp only; ε and ρ only
 * with bn true (their ranges are the model's: pflref_model_add_bn). */
static pflref_status read_bn(const json_t *v, model_fields *f,
                             pflref_error *err)
{
    json_t *bn_v = json_object_get(v, "bn");
    pflref_status st;
    f->bn_eps = BN_EPS_DEFAULT;
    f->bn_momentum = BN_MOMENTUM_DEFAULT;
    if (bn_v != NULL && f->mk != PFLREF_MODEL_MLP)
        return pflref_error_set(err, PFLREF_EINVAL, "model.bn",
                                "model %s has no hidden layer (\"bn\" is "
                                "for the mlp only)", f->kind);
    if (bn_v != NULL && (st = pflref_json_bool(bn_v, "model.bn", &f->bn, err)))
        return st;
    const char *const keys[] = {"bn_eps", "bn_momentum"};
    for (size_t q = 0; q < 2; q++)
        if (!f->bn && json_object_get(v, keys[q]) != NULL)
            return pflref_error_set(err, PFLREF_EINVAL,
                                    q == 0 ? "model.bn_eps"
                                           : "model.bn_momentum",
                                    "\"%s\" needs \"bn\": true", keys[q]);
    if ((st = pflref_json_opt_real(v, "model", "bn_eps", BN_EPS_DEFAULT,
                                   &f->bn_eps, err)))
        return st;
    return pflref_json_opt_real(v, "model", "bn_momentum",
                                BN_MOMENTUM_DEFAULT, &f->bn_momentum, err);
}

pflref_status pflref_spec_read_model(const json_t *root, pflref_model *m,
                                     pflref_error *err)
{
    static const char *const keys[] = {"kind", "d", "k", "h", "loss", "bias",
                                       "activation", "hidden_bias", "bn",
                                       "bn_eps", "bn_momentum", NULL};
    json_t *v;
    model_fields f = {.k = 1, .h = 0, .act = PFLREF_ACT_RELU};
    pflref_status st;
    if ((st = pflref_json_member(root, "", "model", 1, &v, err)) ||
        (st = pflref_json_object(v, "model", keys, err)) ||
        (st = read_kind(v, &f, err)) || (st = read_loss(v, &f, err)))
        return st;
    f.bias = f.mk == PFLREF_MODEL_MLP;
    if ((st = read_sizes(v, &f, err)) || (st = read_bias(v, &f, err)) ||
        (st = read_bn(v, &f, err)))
        return st;
    if (f.mk == PFLREF_MODEL_MLP) {
        st = pflref_model_init_mlp(m, f.loss, f.d, f.k, f.h, f.act,
                                   f.hidden_bias, f.bias, err);
        if (st == PFLREF_OK && f.bn)
            st = pflref_model_add_bn(m, f.bn_eps, f.bn_momentum, err);
    } else
        st = pflref_model_init(m, f.mk, f.loss, f.d, f.k, f.h, f.bias, err);
    if (st != PFLREF_OK && err != NULL && err->where[0] != '\0') {
        char path[PFLREF_WHERE_MAX];
        pflref_json_key_path(path, sizeof path, "model", err->where);
        snprintf(err->where, sizeof err->where, "%s", path);
    }
    return st;
}
