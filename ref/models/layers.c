/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/models/layers.c: the layer-list model (kind "layers"): its
 * description (shapes checked once, blocks in PyTorch's state_dict order),
 * and the presets that expand to a layer list.  The kernels are in
 * layers_ops.c (forward, gradient, R-operator) and layers_conv.c
 * (convolution, pooling, batch normalisation).
 *
 * Shapes: a sample is a vector [n] (stored {n, 1, 1}, rank 1) or an image
 * [C, H, W] (rank 3) flattened in PyTorch's NCHW order, entry c·H·W + h·W
 * + w.  Per layer (docs/models.md, "layers", has the equations):
 *
 *   dense        [n]        → [out]              W out × n, b out
 *   conv2d       [C, H, W]  → [O, H', W'],  H' = ⌊(H + 2p − κ)/s⌋ + 1
 *                                           W O × C × κ × κ, b O
 *   maxpool2d,   [C, H, W]  → [C, H', W'],  H' = (H − κ)/s + 1, where
 *   avgpool2d                               (H − κ) % s = 0 (the window tiles)
 *   flatten      [C, H, W]  → [C·H·W]  (a vector stays itself)
 *   relu, tanh, sigmoid     shape kept
 *   batchnorm1d  [n] → [n]               γ, β, r_μ, r_v  n each
 *   batchnorm2d  [C, H, W] → [C, H, W]   γ, β, r_μ, r_v  C each
 *   dropout      shape kept; p in [0, 1); no parameters (its masks are
 *                data, layers_ops.c)
 *
 * Blocks: per parametrised layer, in list order, NAME.weight, NAME.bias
 * (when bias), and for batch normalisation NAME.weight (γ), NAME.bias (β),
 * NAME.running_mean, NAME.running_var (buffers; num_batches_tracked is
 * not kept, as for the mlp): a torch model's state_dict values, flattened
 * row-major and concatenated, are the pflref vector.
 *
 * Presets (each layer named as the state_dict of the code it reproduces):
 *   fedavgcnn  PFLlib's FedAvgCNN (TsingZ0/PFLlib,
 *              system/flcore/trainmodel/models.py);
 *   lenet5     the LeNet-5 of Dive into Deep Learning (Zhang, Lipton, Li,
 *              Smola, §7.6 "Convolutional Neural Networks (LeNet)"): a
 *              plain nn.Sequential of sigmoid activations and average
 *              pooling;
 *   mlp        nn.Sequential(Linear, act, Linear, act, ..., Linear),
 *              preceded by nn.Flatten() for an image input.
 */
#include <float.h>
#include <stdio.h>
#include <string.h>
#include "core/args.h"
#include "models/models.h"

static const char *const LAYER_NAMES[] = {
    [PFLREF_LAYER_DENSE] = "dense",
    [PFLREF_LAYER_CONV2D] = "conv2d",
    [PFLREF_LAYER_MAXPOOL2D] = "maxpool2d",
    [PFLREF_LAYER_AVGPOOL2D] = "avgpool2d",
    [PFLREF_LAYER_FLATTEN] = "flatten",
    [PFLREF_LAYER_RELU] = "relu",
    [PFLREF_LAYER_TANH] = "tanh",
    [PFLREF_LAYER_SIGMOID] = "sigmoid",
    [PFLREF_LAYER_BATCHNORM1D] = "batchnorm1d",
    [PFLREF_LAYER_BATCHNORM2D] = "batchnorm2d",
    [PFLREF_LAYER_DROPOUT] = "dropout",
};

const char *pflref_layer_kind_name(pflref_layer_kind kind)
{
    const int k = (int)kind;
    return k >= 0 && (size_t)k < sizeof LAYER_NAMES / sizeof *LAYER_NAMES
               ? LAYER_NAMES[k]
               : NULL;
}

int pflref_layer_is_activation(pflref_layer_kind kind)
{
    return kind == PFLREF_LAYER_RELU || kind == PFLREF_LAYER_TANH ||
           kind == PFLREF_LAYER_SIGMOID;
}

int pflref_layer_is_bn(pflref_layer_kind kind)
{
    return kind == PFLREF_LAYER_BATCHNORM1D ||
           kind == PFLREF_LAYER_BATCHNORM2D;
}

/* "[C, H, W]" or "[n]" into buf. */
static const char *shape_text(char *buf, size_t size, const size_t *shape,
                              int rank)
{
    if (rank == 3)
        snprintf(buf, size, "[%zu, %zu, %zu]", shape[0], shape[1], shape[2]);
    else
        snprintf(buf, size, "[%zu]", shape[0]);
    return buf;
}

/* ------------------------------------------------------------------------
 * Shapes
 * ------------------------------------------------------------------------ */

/* The error of layer i at field `field` (NULL: the layer itself). */
static pflref_status layer_error(pflref_error *err, size_t i,
                                 const char *field, const char *fmt,
                                 const char *a, const char *b)
{
    char where[64];
    if (field != NULL)
        snprintf(where, sizeof where, "layers[%zu].%s", i, field);
    else
        snprintf(where, sizeof where, "layers[%zu]", i);
    return pflref_error_set(err, PFLREF_EINVAL, where, fmt, a, b);
}

/* Dense: [n] → [out]; checks out >= 1 and the bias flag. */
static pflref_status dense_shape(pflref_layer *L, size_t i, const char *in,
                                 pflref_error *err)
{
    if (L->in_rank != 1)
        return layer_error(err, i, NULL,
                           "dense needs a vector input, got the image "
                           "%s%s", in,
                           " (put a flatten layer before it)");
    if (L->out < 1)
        return layer_error(err, i, "out", "dense needs out >= 1%s%s",
                           "", "");
    if (L->bias != 0 && L->bias != 1)
        return layer_error(err, i, "bias", "bias must be 0 or 1%s%s", "",
                           "");
    L->out_shape[0] = L->out;
    return PFLREF_OK;
}

/* Conv2d, maxpool2d, avgpool2d: [C, H, W] → [O or C, H', W'] with
 * H' = ⌊(H + 2p − κ)/s⌋ + 1 (a pool's window must tile the input). */
static pflref_status window_shape(pflref_layer *L, size_t i, const char *in,
                                  pflref_error *err)
{
    char tmp[160];
    const size_t *s = L->in_shape;
    const char *kname = pflref_layer_kind_name(L->kind);
    const int conv = L->kind == PFLREF_LAYER_CONV2D;
    if (L->in_rank != 3)
        return layer_error(err, i, NULL, "%s needs an image input "
                           "[C, H, W], got the vector %s",
                           kname, in);
    if (L->kernel < 1)
        return layer_error(err, i, "kernel", "%s needs kernel >= 1%s",
                           kname, "");
    if (conv && L->out < 1)
        return layer_error(err, i, "out_channels",
                           "%s needs out_channels >= 1%s", kname, "");
    if (conv && L->bias != 0 && L->bias != 1)
        return layer_error(err, i, "bias", "bias must be 0 or 1%s%s", "",
                           "");
    if (L->stride == 0)
        L->stride = conv ? 1 : L->kernel;
    const size_t p = conv ? L->padding : 0;
    if (!conv && L->padding != 0)
        return layer_error(err, i, "padding",
                           "%s has no padding%s", kname, "");
    const size_t Hp = s[1] + 2 * p, Wp = s[2] + 2 * p;
    if (L->kernel > Hp || L->kernel > Wp) {
        snprintf(tmp, sizeof tmp, "kernel %zu × %zu is larger than the "
                 "%sinput %s (%zu × %zu)", L->kernel, L->kernel,
                 p ? "padded " : "", in, Hp, Wp);
        return layer_error(err, i, "kernel", "%s%s", tmp, "");
    }
    if (!conv && ((Hp - L->kernel) % L->stride != 0 ||
                  (Wp - L->kernel) % L->stride != 0)) {
        snprintf(tmp, sizeof tmp, "the %zu × %zu window with stride %zu "
                 "does not tile the input %s: (H − kernel) %% stride = "
                 "%zu, (W − kernel) %% stride = %zu", L->kernel,
                 L->kernel, L->stride, in, (Hp - L->kernel) % L->stride,
                 (Wp - L->kernel) % L->stride);
        return layer_error(err, i, "kernel", "%s%s", tmp, "");
    }
    L->out_shape[0] = conv ? L->out : s[0];
    L->out_shape[1] = (Hp - L->kernel) / L->stride + 1;
    L->out_shape[2] = (Wp - L->kernel) / L->stride + 1;
    return PFLREF_OK;
}

/* Batchnorm1d [n] → [n], batchnorm2d [C, H, W] → [C, H, W]; checks
 * num_features, ε and ρ, and sets out := n or C. */
static pflref_status bn_shape(pflref_layer *L, size_t i, const char *in,
                              pflref_error *err)
{
    const size_t *s = L->in_shape;
    const int two = L->kind == PFLREF_LAYER_BATCHNORM2D;
    if (two && L->in_rank != 3)
        return layer_error(err, i, NULL,
                           "batchnorm2d normalises the channels of an "
                           "image, got the vector %s%s", in,
                           " (batchnorm1d normalises a vector)");
    if (!two && L->in_rank != 1)
        return layer_error(err, i, NULL,
                           "batchnorm1d normalises the features of a "
                           "vector, got the image %s%s", in,
                           " (batchnorm2d normalises channels; or "
                           "flatten first)");
    /* out holds a given num_features (0: not given) */
    if (L->out != 0 && L->out != s[0]) {
        char tmp[160];
        snprintf(tmp, sizeof tmp, "num_features = %zu does not match "
                 "the input %s (%zu %s)", L->out, in, s[0],
                 two ? "channels" : "features");
        return layer_error(err, i, "num_features", "%s%s", tmp, "");
    }
    if (!(L->eps >= 0.0 && L->eps <= DBL_MAX))
        return layer_error(err, i, "eps", "ε must be finite and >= 0%s%s",
                           "", "");
    if (!(L->momentum >= 0.0 && L->momentum <= 1.0))
        return layer_error(err, i, "momentum",
                           "ρ must lie in [0, 1]%s%s", "", "");
    L->out = s[0];
    return PFLREF_OK;
}

/* L->out_shape from L->in_shape (both rank-tagged), for layer i: the
 * shape-chaining rules of the header. */
static pflref_status layer_shape(pflref_layer *L, size_t i, pflref_error *err)
{
    char in[64], tmp[32];
    const size_t *s = L->in_shape;
    shape_text(in, sizeof in, s, L->in_rank);
    L->out_rank = L->in_rank;
    memcpy(L->out_shape, s, sizeof L->out_shape);
    pflref_status st = PFLREF_OK;
    switch (L->kind) {
    case PFLREF_LAYER_DENSE:
        st = dense_shape(L, i, in, err);
        break;
    case PFLREF_LAYER_CONV2D:
    case PFLREF_LAYER_MAXPOOL2D:
    case PFLREF_LAYER_AVGPOOL2D:
        st = window_shape(L, i, in, err);
        break;
    case PFLREF_LAYER_FLATTEN:
        L->out_rank = 1;
        L->out_shape[0] = s[0] * s[1] * s[2];
        L->out_shape[1] = L->out_shape[2] = 1;
        break;
    case PFLREF_LAYER_RELU:
    case PFLREF_LAYER_TANH:
    case PFLREF_LAYER_SIGMOID:
        break;
    case PFLREF_LAYER_BATCHNORM1D:
    case PFLREF_LAYER_BATCHNORM2D:
        st = bn_shape(L, i, in, err);
        break;
    case PFLREF_LAYER_DROPOUT:   /* torch.nn.Dropout: 0 ≤ p < 1 */
        if (!(L->p >= 0.0 && L->p < 1.0)) {
            snprintf(tmp, sizeof tmp, "%g", L->p);
            return layer_error(err, i, "p", "the drop probability p = %s "
                               "must lie in [0, 1)%s", tmp, "");
        }
        break;
    default:
        snprintf(tmp, sizeof tmp, "%d", (int)L->kind);
        return layer_error(err, i, "type", "unknown layer type %s%s", tmp,
                           "");
    }
    if (st != PFLREF_OK)
        return st;
    L->in_size = s[0] * s[1] * s[2];
    L->out_size = L->out_shape[0] * L->out_shape[1] * L->out_shape[2];
    return PFLREF_OK;
}

/* ------------------------------------------------------------------------
 * Blocks
 * ------------------------------------------------------------------------ */

/* Append block "NAME.suffix" (rows × cols) to m; 0 when m is full. */
static int layer_block(pflref_model *m, const pflref_layer *L,
                       const char *suffix, size_t rows, size_t cols)
{
    if (m->nblocks >= PFLREF_MAX_BLOCKS)
        return 0;
    pflref_block *B = &m->blocks[m->nblocks];
    const size_t offset = m->nblocks == 0 ? 0
                                          : B[-1].offset + B[-1].size;
    *B = (pflref_block){.offset = offset, .size = rows * cols, .rows = rows,
                        .cols = cols, .is_bn = pflref_layer_is_bn(L->kind)};
    snprintf(B->name, sizeof B->name, "%s.%s", L->name, suffix);
    m->nblocks++;
    return 1;
}

/* Layer i's blocks (weight, bias; γ, β, r_μ, r_v), in state_dict order. */
static pflref_status layer_blocks(pflref_model *m, pflref_layer *L, size_t i,
                                  pflref_error *err)
{
    const size_t first = m->nblocks;
    int ok = 1;
    switch (L->kind) {
    case PFLREF_LAYER_DENSE:   /* weight out × in, bias out */
        ok = layer_block(m, L, "weight", L->out, L->in_size) &&
             (!L->bias || layer_block(m, L, "bias", L->out, 1));
        break;
    case PFLREF_LAYER_CONV2D:  /* weight O × (C·κ·κ), bias O */
        ok = layer_block(m, L, "weight", L->out,
                         L->in_shape[0] * L->kernel * L->kernel) &&
             (!L->bias || layer_block(m, L, "bias", L->out, 1));
        break;
    case PFLREF_LAYER_BATCHNORM1D:
    case PFLREF_LAYER_BATCHNORM2D:
        ok = layer_block(m, L, "weight", L->out, 1) &&
             layer_block(m, L, "bias", L->out, 1) &&
             layer_block(m, L, "running_mean", L->out, 1) &&
             layer_block(m, L, "running_var", L->out, 1);
        if (ok) {
            m->blocks[m->nblocks - 2].is_buffer = 1;
            m->blocks[m->nblocks - 1].is_buffer = 1;
        }
        break;
    default:
        L->first_block = -1;
        L->nblocks = 0;
        return PFLREF_OK;
    }
    if (!ok) {
        char n[32];
        snprintf(n, sizeof n, "%d", PFLREF_MAX_BLOCKS);
        return layer_error(err, i, NULL, "more than %s parameter blocks%s",
                           n, "");
    }
    L->first_block = (int)first;
    L->nblocks = m->nblocks - first;
    return PFLREF_OK;
}

/* ------------------------------------------------------------------------
 * The model
 * ------------------------------------------------------------------------ */

/* The names a split gives groups: no layer may take one. */
static int is_group_name(const char *name)
{
    return strcmp(name, "input") == 0 || strcmp(name, "head") == 0 ||
           strcmp(name, "bn") == 0;
}

/* Layer i's name (given, or its index), unique among layers 0..i−1. */
static pflref_status layer_name(pflref_model *m, pflref_layer *L, size_t i,
                                pflref_error *err)
{
    char idx[24];
    if (L->name[0] == '\0') {
        snprintf(idx, sizeof idx, "%zu", i);
        memcpy(L->name, idx, strlen(idx) + 1);
    }
    if (memchr(L->name, '\0', sizeof L->name) == NULL)
        return layer_error(err, i, "name", "a name has at most %s%s "
                           "characters", "34", "");
    if (is_group_name(L->name))
        return layer_error(err, i, "name", "\"%s\" names a group of the "
                           "split (input, head, bn)%s", L->name, "");
    for (size_t j = 0; j < i; j++)
        if (strcmp(m->layers[j].name, L->name) == 0) {
            snprintf(idx, sizeof idx, "%zu", j);
            return layer_error(err, i, "name", "the name \"%s\" is taken by "
                               "layers[%s]", L->name, idx);
        }
    return PFLREF_OK;
}

/* Test the input parameters of pflref_model_init_layers. */
static pflref_status check_init_args(pflref_model *m, pflref_loss loss,
                                     const size_t *input, int input_rank,
                                     const pflref_layer *layers,
                                     size_t nlayers, pflref_error *err)
{
    pflref_status st;
    if ((st = pflref_arg_nonnull(err, "m", m)) ||
        (st = pflref_arg_nonnull(err, "input", input)) ||
        (st = pflref_arg_nonnull(err, "layers", layers)))
        return st;
    if (loss != PFLREF_LOSS_CROSS_ENTROPY && loss != PFLREF_LOSS_SQUARED &&
        loss != PFLREF_LOSS_HALF_SQUARED)
        return pflref_error_set(err, PFLREF_EINVAL, "loss",
                                "a layer list takes cross_entropy, squared "
                                "or half_squared");
    if (input_rank != 1 && input_rank != 3)
        return pflref_error_set(err, PFLREF_EINVAL, "input",
                                "input is [C, H, W] (an image) or [d] (a "
                                "vector): %d entries given", input_rank);
    for (int q = 0; q < input_rank; q++)
        if (input[q] < 1 || input[q] > ((size_t)1 << 24))
            return pflref_error_set(err, PFLREF_EINVAL, "input",
                                    "input[%d] = %zu: each size lies in "
                                    "[1, 2^24]", q, input[q]);
    if (nlayers < 1 || nlayers > PFLREF_MAX_LAYERS)
        return pflref_error_set(err, PFLREF_EINVAL, "layers",
                                "%zu layers: a list has 1 to %d", nlayers,
                                PFLREF_MAX_LAYERS);
    return PFLREF_OK;
}

/* The shapes, layer after layer, then each layer's name and blocks, into
 * c (whose input is set); the first batchnorm layer gives c's ε and ρ. */
static pflref_status chain_layers(pflref_model *c, const pflref_layer *layers,
                                  size_t nlayers, pflref_error *err)
{
    size_t shape[3] = {c->input[0], c->input[1], c->input[2]};
    int rank = c->input_rank;
    for (size_t i = 0; i < nlayers; i++) {
        pflref_layer *L = &c->layers[i];
        *L = layers[i];
        memcpy(L->in_shape, shape, sizeof shape);
        L->in_rank = rank;
        pflref_status st;
        if ((st = layer_shape(L, i, err)) || (st = layer_name(c, L, i, err)))
            return st;
        /* no size may pass 2^31 entries per sample */
        if (L->out_size > ((size_t)1 << 31) ||
            (L->kind == PFLREF_LAYER_DENSE &&
             L->out > ((size_t)1 << 31) / L->in_size))
            return layer_error(err, i, NULL, "the layer is too large%s%s",
                               "", "");
        memcpy(shape, L->out_shape, sizeof shape);
        rank = L->out_rank;
        if ((st = layer_blocks(c, L, i, err)))
            return st;
        if (pflref_layer_is_bn(L->kind) && !c->bn) {
            c->bn = 1;
            c->bn_eps = L->eps;
            c->bn_momentum = L->momentum;
        }
    }
    return PFLREF_OK;
}

/* The output: k logits (cross_entropy) or one ŷ (squared losses); sets
 * c->k and checks that some layer has parameters. */
static pflref_status check_output(pflref_model *c, pflref_error *err)
{
    const size_t nlayers = c->nlayers;
    const pflref_loss loss = c->loss;
    const pflref_layer *last = &c->layers[nlayers - 1];
    char out[64];
    shape_text(out, sizeof out, last->out_shape, last->out_rank);
    if (last->out_rank != 1)
        return layer_error(err, nlayers - 1, NULL,
                           "the last layer's output %s is an image: the "
                           "loss needs a vector (add flatten and dense)%s",
                           out, "");
    c->k = last->out_shape[0];
    if (loss == PFLREF_LOSS_CROSS_ENTROPY && c->k < 2)
        return layer_error(err, nlayers - 1, NULL,
                           "cross_entropy needs k >= 2 logits, the last "
                           "layer gives %s%s", out, "");
    if (loss != PFLREF_LOSS_CROSS_ENTROPY && c->k != 1)
        return layer_error(err, nlayers - 1, NULL,
                           "the %s loss needs one output, the last layer "
                           "gives %s", pflref_loss_name(loss), out);
    if (c->nblocks == 0)
        return pflref_error_set(err, PFLREF_EINVAL, "layers",
                                "no layer has parameters (dense, conv2d or "
                                "batchnorm)");
    return PFLREF_OK;
}

/* Flags: the first parametrised layer is the input, the last the head;
 * h := the features of the last dense layer (its input). */
static void mark_groups(pflref_model *c)
{
    const pflref_layer *first = NULL, *lastp = NULL;
    for (size_t i = 0; i < c->nlayers; i++)
        if (c->layers[i].first_block >= 0) {
            first = first != NULL ? first : &c->layers[i];
            lastp = &c->layers[i];
        }
    if (first == NULL || lastp == NULL)
        return;   /* no parameters: check_output refused the model */
    for (size_t q = 0; q < first->nblocks; q++)
        c->blocks[(size_t)first->first_block + q].is_input = 1;
    for (size_t q = 0; q < lastp->nblocks; q++)
        c->blocks[(size_t)lastp->first_block + q].is_head = 1;
    c->bias = lastp->bias;
    for (size_t i = 0; i < c->nlayers; i++)
        if (c->layers[i].kind == PFLREF_LAYER_DENSE)
            c->h = c->layers[i].in_size;
}

/* c->P := Σ of the block sizes, checked against the memory available. */
static pflref_status count_P(pflref_model *c, pflref_error *err)
{
    size_t P = 0;
    for (size_t b = 0; b < c->nblocks; b++)
        if (!pflref_size_add(&P, c->blocks[b].size))
            return pflref_error_set(err, PFLREF_ENOMEM, "P",
                                    "the parameter count overflows");
    c->P = P;
    size_t avail;
    /* a malformed PFLREF_MEMORY_LIMIT is the run's to report (model.c) */
    if (pflref_memory_available(&avail, NULL, NULL) == PFLREF_OK &&
        P > avail / sizeof(double))
        return pflref_error_set(err, PFLREF_ENOMEM, "P",
                                "P = %zu parameters need %zu bytes, more "
                                "than the %zu available", P,
                                P * sizeof(double), avail);
    return PFLREF_OK;
}

size_t pflref_model_dropout_layers(const pflref_model *m)
{
    size_t n = 0;
    for (size_t i = 0; m != NULL && m->kind == PFLREF_MODEL_LAYERS &&
                       i < m->nlayers; i++)
        n += m->layers[i].kind == PFLREF_LAYER_DROPOUT;
    return n;
}

pflref_status pflref_model_init_layers(pflref_model *m, pflref_loss loss,
                                       const size_t *input, int input_rank,
                                       const pflref_layer *layers,
                                       size_t nlayers, pflref_error *err)
{
    pflref_status st = check_init_args(m, loss, input, input_rank, layers,
                                       nlayers, err);
    if (st != PFLREF_OK)
        return st;
    pflref_model c = {.kind = PFLREF_MODEL_LAYERS, .loss = loss,
                      .input_rank = input_rank, .nlayers = nlayers,
                      .activation = PFLREF_ACT_RELU};
    c.input[0] = input[0];
    c.input[1] = input_rank == 3 ? input[1] : 1;
    c.input[2] = input_rank == 3 ? input[2] : 1;
    c.d = c.input[0] * c.input[1] * c.input[2];
    if ((st = chain_layers(&c, layers, nlayers, err)) ||
        (st = check_output(&c, err)))
        return st;
    mark_groups(&c);
    if ((st = count_P(&c, err)))
        return st;
    *m = c;
    return PFLREF_OK;
}

/* ------------------------------------------------------------------------
 * Presets
 * ------------------------------------------------------------------------ */

/* Append a layer to the list being built; 0 when full. */
static int push(pflref_layer *layers, size_t *n, pflref_layer_kind kind,
                const char *name, size_t out, size_t kernel, size_t stride,
                size_t padding)
{
    if (*n >= PFLREF_MAX_LAYERS)
        return 0;
    pflref_layer L = {.kind = kind, .out = out, .kernel = kernel,
                      .stride = stride, .padding = padding, .bias = 1};
    snprintf(L.name, sizeof L.name, "%s", name);
    layers[(*n)++] = L;
    return 1;
}

/* PFLlib FedAvgCNN: conv1 = Sequential(Conv2d(C, 32, 5), ReLU,
 * MaxPool2d(2, 2)), conv2 = Sequential(Conv2d(32, 64, 5), ReLU,
 * MaxPool2d(2, 2)), torch.flatten(out, 1), fc1 =
 * Sequential(Linear(dim, 512), ReLU), fc = Linear(512, k) */
static void preset_fedavgcnn(size_t k, pflref_layer *layers, size_t *n)
{
    const pflref_layer_kind D = PFLREF_LAYER_DENSE, C = PFLREF_LAYER_CONV2D,
                            R = PFLREF_LAYER_RELU, F = PFLREF_LAYER_FLATTEN,
                            M = PFLREF_LAYER_MAXPOOL2D;
    push(layers, n, C, "conv1.0", 32, 5, 1, 0);
    push(layers, n, R, "conv1.1", 0, 0, 0, 0);
    push(layers, n, M, "conv1.2", 0, 2, 2, 0);
    push(layers, n, C, "conv2.0", 64, 5, 1, 0);
    push(layers, n, R, "conv2.1", 0, 0, 0, 0);
    push(layers, n, M, "conv2.2", 0, 2, 2, 0);
    push(layers, n, F, "flatten", 0, 0, 0, 0);
    push(layers, n, D, "fc1.0", 512, 0, 0, 0);
    push(layers, n, R, "fc1.1", 0, 0, 0, 0);
    push(layers, n, D, "fc", k, 0, 0, 0);
}

/* d2l's LeNet: nn.Sequential(Conv2d(C, 6, 5, padding=2), Sigmoid,
 * AvgPool2d(2, 2), Conv2d(6, 16, 5), Sigmoid, AvgPool2d(2, 2),
 * Flatten, Linear(·, 120), Sigmoid, Linear(120, 84), Sigmoid,
 * Linear(84, k)) */
static void preset_lenet5(size_t k, pflref_layer *layers, size_t *n)
{
    const pflref_layer_kind D = PFLREF_LAYER_DENSE, C = PFLREF_LAYER_CONV2D,
                            S = PFLREF_LAYER_SIGMOID, F = PFLREF_LAYER_FLATTEN,
                            A = PFLREF_LAYER_AVGPOOL2D;
    push(layers, n, C, "0", 6, 5, 1, 2);
    push(layers, n, S, "1", 0, 0, 0, 0);
    push(layers, n, A, "2", 0, 2, 2, 0);
    push(layers, n, C, "3", 16, 5, 1, 0);
    push(layers, n, S, "4", 0, 0, 0, 0);
    push(layers, n, A, "5", 0, 2, 2, 0);
    push(layers, n, F, "6", 0, 0, 0, 0);
    push(layers, n, D, "7", 120, 0, 0, 0);
    push(layers, n, S, "8", 0, 0, 0, 0);
    push(layers, n, D, "9", 84, 0, 0, 0);
    push(layers, n, S, "10", 0, 0, 0, 0);
    push(layers, n, D, "11", k, 0, 0, 0);
}

/* nn.Sequential([Flatten,] Linear(d, h1), act, ..., Linear(hL, k)), named
 * by index; checks act and hidden. */
static pflref_status preset_mlp(int input_rank, size_t k,
                                const size_t *hidden, size_t nhidden,
                                pflref_layer_kind act, pflref_layer *layers,
                                size_t *n, pflref_error *err)
{
    if (!pflref_layer_is_activation(act))
        return pflref_error_set(err, PFLREF_EINVAL, "activation",
                                "the mlp preset's activation is relu, "
                                "tanh or sigmoid");
    if (2 * nhidden + 2 > PFLREF_MAX_LAYERS)
        return pflref_error_set(err, PFLREF_EINVAL, "hidden",
                                "%zu hidden layers: at most %d", nhidden,
                                PFLREF_MAX_LAYERS / 2 - 1);
    if (nhidden > 0 && hidden == NULL)
        return pflref_error_set(err, PFLREF_EINVAL, "hidden",
                                "hidden is NULL");
    char name[24];
    if (input_rank == 3)
        push(layers, n, PFLREF_LAYER_FLATTEN, "0", 0, 0, 0, 0);
    for (size_t q = 0; q < nhidden; q++) {
        if (hidden[q] < 1)
            return pflref_error_set(err, PFLREF_EINVAL, "hidden",
                                    "hidden[%zu] = 0: a layer has at "
                                    "least one unit", q);
        snprintf(name, sizeof name, "%zu", *n);
        push(layers, n, PFLREF_LAYER_DENSE, name, hidden[q], 0, 0, 0);
        snprintf(name, sizeof name, "%zu", *n);
        push(layers, n, act, name, 0, 0, 0, 0);
    }
    snprintf(name, sizeof name, "%zu", *n);
    push(layers, n, PFLREF_LAYER_DENSE, name, k, 0, 0, 0);
    return PFLREF_OK;
}

pflref_status pflref_layers_preset(const char *preset, int input_rank,
                                   size_t k, const size_t *hidden,
                                   size_t nhidden, pflref_layer_kind act,
                                   pflref_layer *layers, size_t *nlayers,
                                   pflref_error *err)
{
    pflref_status st;
    if ((st = pflref_arg_nonnull(err, "preset", preset)) ||
        (st = pflref_arg_nonnull(err, "layers", layers)) ||
        (st = pflref_arg_nonnull(err, "nlayers", nlayers)))
        return st;
    size_t n = 0;
    const int cnn = strcmp(preset, "fedavgcnn") == 0;
    if (cnn || strcmp(preset, "lenet5") == 0) {
        if (input_rank != 3)
            return pflref_error_set(err, PFLREF_EINVAL, "input",
                                    "%s takes an image [C, H, W]",
                                    cnn ? "fedavgcnn" : "lenet5");
        if (cnn)
            preset_fedavgcnn(k, layers, &n);
        else
            preset_lenet5(k, layers, &n);
    } else if (strcmp(preset, "mlp") == 0) {
        if ((st = preset_mlp(input_rank, k, hidden, nhidden, act, layers, &n,
                             err)))
            return st;
    } else
        return pflref_error_set(err, PFLREF_EINVAL, "preset",
                                "unknown preset \"%s\" (known: fedavgcnn, "
                                "lenet5, mlp)", preset);
    *nlayers = n;
    return PFLREF_OK;
}
