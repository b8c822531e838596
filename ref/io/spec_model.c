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
 *
 * A layer list ("kind": "layers"; docs/formats.md, "model": layers) has its
 * own keys: input ([C, H, W] or [d]), loss (cross_entropy (default),
 * squared, half_squared), and either layers (an array of layer objects,
 * each with its type's keys only) or preset ("fedavgcnn", "lenet5", "mlp")
 * with k (classes or outputs), and for the mlp preset hidden (widths) and
 * activation (relu (default), tanh, sigmoid).  Read in that order; each
 * layer's keys in the order type, name, then the type's own.
 */
#include <stdio.h>
#include <string.h>
#include "io/spec_read.h"

/* PyTorch's BatchNorm defaults (eps, momentum). */
#define BN_EPS_DEFAULT 1e-5
#define BN_MOMENTUM_DEFAULT 0.1

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
                            "linear, softmax, mlp, layers)", f->kind);
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

/* ---- Layer lists ----------------------------------------------------- */

/* The JSON path "model.layers[i]" (or "model.layers[i].key"). */
static void layer_path(char *out, size_t size, size_t i, const char *key)
{
    if (key != NULL)
        snprintf(out, size, "model.layers[%zu].%s", i, key);
    else
        snprintf(out, size, "model.layers[%zu]", i);
}

/* The layer types of a spec, in the order of pflref_layer_kind. */
static const char *const LAYER_TYPES[] = {
    "dense", "conv2d", "maxpool2d", "avgpool2d", "flatten", "relu", "tanh",
    "sigmoid", "batchnorm1d", "batchnorm2d", "dropout", NULL};

/* Each type's keys (type and name included). */
static const char *const *layer_keys(pflref_layer_kind kind)
{
    static const char *const dense[] = {"type", "name", "out", "bias", NULL};
    static const char *const conv[] = {"type", "name", "out_channels",
                                       "kernel", "stride", "padding", "bias",
                                       NULL};
    static const char *const pool[] = {"type", "name", "kernel", "stride",
                                       NULL};
    static const char *const plain[] = {"type", "name", NULL};
    static const char *const bn[] = {"type", "name", "num_features", "eps",
                                     "momentum", NULL};
    static const char *const drop[] = {"type", "name", "p", NULL};
    switch (kind) {
    case PFLREF_LAYER_DENSE:       return dense;
    case PFLREF_LAYER_CONV2D:      return conv;
    case PFLREF_LAYER_MAXPOOL2D:
    case PFLREF_LAYER_AVGPOOL2D:   return pool;
    case PFLREF_LAYER_BATCHNORM1D:
    case PFLREF_LAYER_BATCHNORM2D: return bn;
    case PFLREF_LAYER_DROPOUT:     return drop;
    default:                       return plain;
    }
}

/* model.layers[i].type: the layer kind it names, or an error. */
static pflref_status read_layer_kind(const json_t *v, size_t i,
                                     const char *where, int *kind,
                                     pflref_error *err)
{
    char path[112];
    json_t *t_v;
    const char *type;
    pflref_status st;
    layer_path(path, sizeof path, i, "type");
    if ((st = pflref_json_member(v, where, "type", 1, &t_v, err)) ||
        (st = pflref_json_string(t_v, path, &type, err)))
        return st;
    *kind = -1;
    for (int q = 0; LAYER_TYPES[q] != NULL; q++)
        if (strcmp(type, LAYER_TYPES[q]) == 0)
            *kind = q;
    if (*kind < 0)
        return pflref_error_set(err, PFLREF_EINVAL, path,
                                "unknown layer type \"%s\" (known: dense, "
                                "conv2d, maxpool2d, avgpool2d, flatten, "
                                "relu, tanh, sigmoid, batchnorm1d, "
                                "batchnorm2d, dropout)", type);
    return PFLREF_OK;
}

/* model.layers[i].name, when given, into L->name. */
static pflref_status read_layer_name(const json_t *v, size_t i,
                                     pflref_layer *L, pflref_error *err)
{
    char path[112];
    json_t *n_v;
    pflref_status st;
    if ((n_v = json_object_get(v, "name")) == NULL)
        return PFLREF_OK;
    const char *name;
    layer_path(path, sizeof path, i, "name");
    if ((st = pflref_json_string(n_v, path, &name, err)))
        return st;
    if (name[0] == '\0' || strlen(name) >= sizeof L->name)
        return pflref_error_set(err, PFLREF_EINVAL, path,
                                "a layer's name has 1 to %d characters",
                                PFLREF_LAYER_NAME_MAX - 1);
    memcpy(L->name, name, strlen(name) + 1);
    return PFLREF_OK;
}

/* The sizes of model.layers[i] by its kind: out (dense), out_channels and
 * padding (conv2d), kernel and stride (conv2d, the pools), num_features,
 * eps and momentum (the batch norms). */
static pflref_status read_layer_sizes(const json_t *v, size_t i,
                                      const char *where, pflref_layer *L,
                                      pflref_error *err)
{
    const size_t max = PFLREF_SPEC_MAX_COUNT;
    char path[112];
    json_t *x;
    pflref_status st;
    switch (L->kind) {
    case PFLREF_LAYER_DENSE:
        layer_path(path, sizeof path, i, "out");
        if ((st = pflref_json_member(v, where, "out", 1, &x, err)) ||
            (st = pflref_json_size(x, path, 1, max, &L->out, err)))
            return st;
        break;
    case PFLREF_LAYER_CONV2D:
        layer_path(path, sizeof path, i, "out_channels");
        if ((st = pflref_json_member(v, where, "out_channels", 1, &x, err)) ||
            (st = pflref_json_size(x, path, 1, max, &L->out, err)) ||
            (st = pflref_json_opt_size(v, where, "padding", 0, max, 0,
                                       &L->padding, err)))
            return st;
        break;
    default:
        break;
    }
    switch (L->kind) {  /* conv2d and the pools: kernel and stride */
    case PFLREF_LAYER_CONV2D:
    case PFLREF_LAYER_MAXPOOL2D:
    case PFLREF_LAYER_AVGPOOL2D:
        layer_path(path, sizeof path, i, "kernel");
        if ((st = pflref_json_member(v, where, "kernel", 1, &x, err)) ||
            (st = pflref_json_size(x, path, 1, max, &L->kernel, err)) ||
            (st = pflref_json_opt_size(v, where, "stride", 1, max, 0,
                                       &L->stride, err)))
            return st;
        break;
    case PFLREF_LAYER_DROPOUT:   /* p: torch.nn.Dropout's default 0.5 */
        if ((st = pflref_json_opt_real(v, where, "p", 0.5, &L->p, err)))
            return st;
        break;
    case PFLREF_LAYER_BATCHNORM1D:
    case PFLREF_LAYER_BATCHNORM2D:
        if ((st = pflref_json_opt_size(v, where, "num_features", 1, max, 0,
                                       &L->out, err)) ||
            (st = pflref_json_opt_real(v, where, "eps", BN_EPS_DEFAULT,
                                       &L->eps, err)) ||
            (st = pflref_json_opt_real(v, where, "momentum",
                                       BN_MOMENTUM_DEFAULT, &L->momentum,
                                       err)))
            return st;
        break;
    default:
        break;
    }
    return PFLREF_OK;
}

/* model.layers[i] into L: its type, then (the keys its kind allows) its
 * name, sizes and bias. */
static pflref_status read_layer(const json_t *v, size_t i, pflref_layer *L,
                                pflref_error *err)
{
    char where[96];
    layer_path(where, sizeof where, i, NULL);
    json_t *x;
    int kind;
    pflref_status st;
    if (!json_is_object(v))
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "a layer is an object with a \"type\", not "
                                "%s", pflref_json_type_name(v));
    if ((st = read_layer_kind(v, i, where, &kind, err)))
        return st;
    *L = (pflref_layer){.kind = (pflref_layer_kind)kind, .bias = 1};
    if ((st = pflref_json_object(v, where, layer_keys(L->kind), err)) ||
        (st = read_layer_name(v, i, L, err)) ||
        (st = read_layer_sizes(v, i, where, L, err)))
        return st;
    if ((x = json_object_get(v, "bias")) != NULL) {
        char path[112];
        layer_path(path, sizeof path, i, "bias");
        if ((st = pflref_json_bool(x, path, &L->bias, err)))
            return st;
    }
    return PFLREF_OK;
}

/* model.input: [C, H, W] or [d]. */
static pflref_status read_input(const json_t *v, size_t *input, int *rank,
                                pflref_error *err)
{
    json_t *in_v;
    size_t len;
    pflref_status st;
    if ((st = pflref_json_member(v, "model", "input", 1, &in_v, err)) ||
        (st = pflref_json_array(in_v, "model.input", 1, &len, err)))
        return st;
    if (len != 1 && len != 3)
        return pflref_error_set(err, PFLREF_EINVAL, "model.input",
                                "input is [C, H, W] (an image) or [d] (a "
                                "vector), not %zu sizes", len);
    for (size_t q = 0; q < len; q++) {
        char path[32];
        snprintf(path, sizeof path, "model.input[%zu]", q);
        if ((st = pflref_json_size(json_array_get(in_v, q), path, 1,
                                   (size_t)1 << 24, &input[q], err)))
            return st;
    }
    *rank = (int)len;
    return PFLREF_OK;
}

/* model.preset with model.k (and, for the mlp preset, hidden and
 * activation) into layers. */
static pflref_status read_preset(const json_t *v, int rank,
                                 pflref_layer *layers, size_t *n,
                                 char *preset, size_t preset_size,
                                 pflref_error *err)
{
    static const char *const acts[] = {"relu", "tanh", "sigmoid", NULL};
    json_t *p_v, *k_v, *h_v = json_object_get(v, "hidden");
    const char *name;
    size_t k, hidden[PFLREF_MAX_LAYERS], nh = 0;
    int act;
    pflref_status st;
    if ((st = pflref_json_member(v, "model", "preset", 1, &p_v, err)) ||
        (st = pflref_json_string(p_v, "model.preset", &name, err)) ||
        (st = pflref_json_member(v, "model", "k", 1, &k_v, err)) ||
        (st = pflref_json_size(k_v, "model.k", 1, PFLREF_SPEC_MAX_COUNT, &k,
                               err)))
        return st;
    const int mlp = strcmp(name, "mlp") == 0;
    if (!mlp && (h_v != NULL || json_object_get(v, "activation") != NULL))
        return pflref_error_set(err, PFLREF_EINVAL,
                                h_v != NULL ? "model.hidden"
                                            : "model.activation",
                                "\"%s\" is for the mlp preset only",
                                h_v != NULL ? "hidden" : "activation");
    if (mlp) {
        if ((st = pflref_json_member(v, "model", "hidden", 1, &h_v, err)) ||
            (st = pflref_json_array(h_v, "model.hidden", 0, &nh, err)))
            return st;
        if (nh > PFLREF_MAX_LAYERS / 2 - 1)
            return pflref_error_set(err, PFLREF_EINVAL, "model.hidden",
                                    "%zu hidden layers: at most %d", nh,
                                    PFLREF_MAX_LAYERS / 2 - 1);
        for (size_t q = 0; q < nh; q++) {
            char path[32];
            snprintf(path, sizeof path, "model.hidden[%zu]", q);
            if ((st = pflref_json_size(json_array_get(h_v, q), path, 1,
                                       PFLREF_SPEC_MAX_COUNT, &hidden[q],
                                       err)))
                return st;
        }
    }
    if ((st = pflref_json_opt_enum(v, "model", "activation", acts, 0, &act,
                                   err)))
        return st;
    const pflref_layer_kind ak = act == 1   ? PFLREF_LAYER_TANH
                                 : act == 2 ? PFLREF_LAYER_SIGMOID
                                            : PFLREF_LAYER_RELU;
    st = pflref_layers_preset(name, rank, k, hidden, nh, ak, layers, n, err);
    if (st != PFLREF_OK && err != NULL) {
        char path[PFLREF_WHERE_MAX];
        pflref_json_key_path(path, sizeof path, "model", err->where);
        snprintf(err->where, sizeof err->where, "%s", path);
    }
    snprintf(preset, preset_size, "%s", name);
    return st;
}

/* A "model" of kind "layers" (v: the model object). */
static pflref_status read_layers_model(const json_t *v, pflref_model *m,
                                       pflref_error *err)
{
    static const char *const keys[] = {"kind", "input", "loss", "layers",
                                       "preset", "k", "hidden", "activation",
                                       NULL};
    static const char *const losses[] = {"squared", "half_squared",
                                         "cross_entropy", NULL};
    size_t input[3] = {0, 0, 0}, n = 0;
    int rank = 0, loss;
    pflref_layer layers[PFLREF_MAX_LAYERS];
    char preset[16] = "";
    pflref_status st;
    if ((st = pflref_json_object(v, "model", keys, err)) ||
        (st = read_input(v, input, &rank, err)) ||
        (st = pflref_json_opt_enum(v, "model", "loss", losses,
                                   PFLREF_LOSS_CROSS_ENTROPY, &loss, err)))
        return st;
    json_t *l_v = json_object_get(v, "layers");
    const int has_preset = json_object_get(v, "preset") != NULL;
    if ((l_v != NULL) == has_preset)
        return pflref_error_set(err, PFLREF_EINVAL, "model.layers",
                                "a layer list gives either \"layers\" or "
                                "\"preset\" (%s)",
                                has_preset ? "both given" : "neither given");
    if (has_preset) {
        if ((st = read_preset(v, rank, layers, &n, preset, sizeof preset,
                              err)))
            return st;
    } else {
        const char *const only[] = {"k", "hidden", "activation"};
        for (size_t q = 0; q < 3; q++)
            if (json_object_get(v, only[q]) != NULL) {
                char path[32];
                snprintf(path, sizeof path, "model.%s", only[q]);
                return pflref_error_set(err, PFLREF_EINVAL, path,
                                        "\"%s\" is for a preset; a layer "
                                        "list gives its sizes in its layers",
                                        only[q]);
            }
        if ((st = pflref_json_array(l_v, "model.layers", 1, &n, err)))
            return st;
        if (n > PFLREF_MAX_LAYERS)
            return pflref_error_set(err, PFLREF_EINVAL, "model.layers",
                                    "%zu layers: at most %d", n,
                                    PFLREF_MAX_LAYERS);
        for (size_t i = 0; i < n; i++)
            if ((st = read_layer(json_array_get(l_v, i), i, &layers[i], err)))
                return st;
    }
    st = pflref_model_init_layers(m, (pflref_loss)loss, input, rank, layers,
                                  n, err);
    if (st != PFLREF_OK && err != NULL && err->where[0] != '\0') {
        char path[PFLREF_WHERE_MAX];
        pflref_json_key_path(path, sizeof path, "model", err->where);
        snprintf(err->where, sizeof err->where, "%s", path);
    }
    if (st == PFLREF_OK)
        snprintf(m->preset, sizeof m->preset, "%s", preset);
    return st;
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
    if ((st = pflref_json_member(root, "", "model", 1, &v, err)))
        return st;
    /* a layer list has its own keys */
    if (json_is_object(v) &&
        json_is_string(json_object_get(v, "kind")) &&
        strcmp(json_string_value(json_object_get(v, "kind")), "layers") == 0)
        return read_layers_model(v, m, err);
    if ((st = pflref_json_object(v, "model", keys, err)) ||
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
