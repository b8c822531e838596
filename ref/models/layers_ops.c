/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/models/layers_ops.c: the kernels of the layer-list model (kind
 * "layers", layers.c): forward pass, gradient by back-propagation, exact
 * Hessian-vector product by Pearlmutter's R-operator through every layer
 * (the references of model.c) and the head's gradient alone; the body /
 * head split API of pflref/model.h is layers_body.c's, on these kernels.
 *
 * Symbols (nb samples; layer i maps X_i = Y_{i−1} (X_0 = X_b) to Y_i):
 *   Y_i      ws->act[i]    nb × out_size     (the last: ws->Z, the outputs)
 *   R{Y_i}   ws->Ract[i]   nb × out_size     (the last: ws->RZ)
 *   dY, R{dY} ws->sig, ws->Rsig   the per-sample signals ∂ℓ_j/∂Y (NOT
 *            divided by nb) and their R{·}; the gradient is (1/nb) Σ_j
 *   W, b, V  the layer's blocks of w and of the direction v
 *
 * Dense layer (z = W x + b, torch.nn.Linear): Y = X Wᵀ + 1 bᵀ;
 *   g_W = (1/nb) dYᵀ X, g_b = (1/nb) Σ_j dY_j, dX = dY W;
 *   R{Y} = 1 v_bᵀ + R{X} Wᵀ + X Vᵀ;  (Hv)_W = (1/nb) (R{dY}ᵀ X + dYᵀ R{X}),
 *   (Hv)_b = (1/nb) Σ_j R{dY}_j,  R{dX} = R{dY} W + dY V.
 * relu, tanh, sigmoid (y = σ(a), elementwise):  dX = dY ⊙ σ'(a),
 *   R{Y} = σ'(a) ⊙ R{X},  R{dX} = R{dY} ⊙ σ'(a) + dY ⊙ σ''(a) ⊙ R{a},
 *   written from the output y (the activations run in place):
 *   relu σ' = [y > 0] (relu'(0) = 0, PyTorch's), σ'' = 0;
 *   tanh σ' = 1 − y², σ''(a) R{a} = −2 y R{y};
 *   sigmoid σ' = y (1 − y), σ''(a) R{a} = (1 − 2y) R{y}.
 * Flatten: the identity on the NCHW entries (no copy: Y aliases X).
 * Dropout (p; M the pass's 0/1 mask, layers_dropout.c): training Y = X ⊙ N,
 *   N = M · fl(1/(1 − p)), PyTorch's CPU product (Dropout.cpp, _dropout_impl);
 *   dX = dY ⊙ N, R{Y} = R{X} ⊙ N, R{dX} = R{dY} ⊙ N.  Evaluation: Y = X.
 * Convolution, pooling, batch normalisation: layers_conv.c.
 *
 * The old spellings, bit for bit (tests/test_layers.c): the calls and
 * their order are those of softmax.c, linear.c and mlp.c, so
 *   [dense(d→k)] + cross_entropy           = softmax,
 *   [dense(d→1)] + squared / half_squared  = linear (a dense layer with
 *       one output on the data rows is linear.c's dgemv; every other
 *       dense layer is dense.c's dgemm),
 *   [dense(d→h), relu, dense(h→k)]         = mlp (relu activation),
 *   [dense(d→h), batchnorm1d, relu, dense] = mlp with bn.
 *
 * Memory (the workspace, pflref_layers_ws_layout): one output buffer per
 * layer of max_batch samples (flatten and the activations after a
 * parametrised or pooling layer share their input's), the same for R{·},
 * batchnorm's x̂ and R{x̂}, maxpool's argmax, four signal buffers of the
 * largest layer, and ONE sample's im2col buffer pair, never a batch of
 * them.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "core/args.h"
#include "core/mca.h"
#include "models/models.h"

/* ------------------------------------------------------------------------
 * Workspace
 * ------------------------------------------------------------------------ */

int pflref_layers_ws_layout(const pflref_model *m, size_t nb,
                            pflref_model_workspace *ws, double *mem,
                            size_t *imem, size_t *nd, size_t *ns)
{
    const size_t Lc = m->nlayers;
    int own[PFLREF_MAX_LAYERS];         /* the owner of Y_i's buffer */
    size_t d = 0, s = 0, big = m->d, colsz = 0, t;
    for (size_t i = 0; i < Lc; i++) {
        const pflref_layer *L = &m->layers[i];
        const int prev = i == 0 ? -1 : own[i - 1];
        const int last = i + 1 == Lc;
        int alias = 0;
        if (!last && L->kind == PFLREF_LAYER_FLATTEN)
            alias = 1;
        else if (!last && pflref_layer_is_activation(L->kind) && prev >= 0 &&
                 !pflref_layer_is_activation(m->layers[prev].kind))
            alias = 1;                  /* in place: y overwrites a */
        own[i] = alias ? prev : (int)i;
        if (ws != NULL) {
            ws->act[i] = alias ? (i == 0 ? ws->Xb : ws->act[i - 1])
                         : last ? ws->Z
                                : mem + d;
            ws->Ract[i] = alias ? (i == 0 ? NULL : ws->Ract[i - 1])
                          : last ? ws->RZ
                                 : mem + d + nb * L->out_size;
        }
        if (!alias && !last) {          /* Y_i and R{Y_i} */
            if (!pflref_size_mul(nb, L->out_size, &t) || t > SIZE_MAX / 2 ||
                !pflref_size_add(&d, 2 * t))
                return 0;
        }
        if (pflref_layer_is_bn(L->kind)) {   /* x̂, R{x̂}, 4C statistics */
            if (!pflref_size_mul(nb, L->in_size, &t) || t > SIZE_MAX / 2)
                return 0;
            if (ws != NULL) {
                ws->xhat[i] = mem + d;
                ws->Rxhat[i] = mem + d + t;
                ws->stats[i] = mem + d + 2 * t;
            }
            if (!pflref_size_add(&d, 2 * t) ||
                !pflref_size_add(&d, 4 * L->out_shape[0]))
                return 0;
        }
        if (L->kind == PFLREF_LAYER_MAXPOOL2D) {
            if (!pflref_size_mul(nb, L->out_size, &t))
                return 0;
            if (ws != NULL)
                ws->arg[i] = imem + s;
            if (!pflref_size_add(&s, t))
                return 0;
        }
        if (L->kind == PFLREF_LAYER_CONV2D) {
            const size_t K = L->in_shape[0] * L->kernel * L->kernel;
            const size_t HW = L->out_shape[1] * L->out_shape[2];
            if (!pflref_size_mul(K, HW, &t))
                return 0;
            colsz = t > colsz ? t : colsz;
        }
        big = L->out_size > big ? L->out_size : big;
        big = L->in_size > big ? L->in_size : big;
    }
    /* four signal buffers nb × big, two col buffers */
    if (!pflref_size_mul(nb, big, &t) || t > SIZE_MAX / 4 ||
        colsz > SIZE_MAX / 2)
        return 0;
    if (ws != NULL) {
        ws->sig[0] = mem + d;
        ws->sig[1] = mem + d + t;
        ws->Rsig[0] = mem + d + 2 * t;
        ws->Rsig[1] = mem + d + 3 * t;
        ws->col = mem + d + 4 * t;
        ws->dcol = mem + d + 4 * t + colsz;
        ws->imem = imem;
        ws->P = m->P;
    }
    if (!pflref_size_add(&d, 4 * t) || !pflref_size_add(&d, 2 * colsz))
        return 0;
    *nd = d;
    *ns = s;
    return 1;
}

/* ------------------------------------------------------------------------
 * Forward pass
 * ------------------------------------------------------------------------ */

/* The layer's blocks in x (w or v): its first block's entries, or NULL. */
static const double *blk(const pflref_model *m, const pflref_layer *L,
                         const double *x, size_t q)
{
    if (x == NULL || L->first_block < 0 || q >= L->nblocks)
        return NULL;
    return x + m->blocks[(size_t)L->first_block + q].offset;
}

static double *blk_out(const pflref_model *m, const pflref_layer *L,
                       double *x, size_t q)
{
    if (x == NULL || L->first_block < 0 || q >= L->nblocks)
        return NULL;
    return x + m->blocks[(size_t)L->first_block + q].offset;
}

/* A dense layer with one output reading the data rows: linear.c's dgemv. */
static int linear_form(const pflref_layer *L, const double *X,
                       const pflref_model_workspace *ws)
{
    return L->kind == PFLREF_LAYER_DENSE && L->out == 1 && X == ws->Xb;
}

/* The input X_i of layer i (X_b for layer 0). */
static const double *input_of(const pflref_model_workspace *ws, size_t i)
{
    return i == 0 ? ws->Xb : ws->act[i - 1];
}

static const double *r_input_of(const pflref_model_workspace *ws, size_t i)
{
    return i == 0 ? NULL : ws->Ract[i - 1];
}

/* Y := σ(X) over len entries (Y may be X). */
static void act_forward(pflref_layer_kind kind, const double *X, double *Y,
                        size_t len)
{
    for (size_t q = 0; q < len; q++) {
        const double a = X[q];
        switch (kind) {
        case PFLREF_LAYER_RELU:    Y[q] = a > 0.0 ? a : 0.0; break;
        case PFLREF_LAYER_TANH:    Y[q] = tanh(a); break;
        default:                   Y[q] = 1.0 / (1.0 + exp(-a)); break;
        }
    }
}

/* Dropout's Y := X ⊙ N over len entries (Y may be X): x · s where m = 1,
 * x · 0 where m = 0, s = fl(1/(1 − p)), PyTorch's input * (m/(1 − p)). */
static void drop_apply(const pflref_layer *L, const unsigned char *M,
                       const double *X, double *Y, size_t len)
{
    const double scale = 1.0 / (1.0 - L->p);
    for (size_t q = 0; q < len; q++)
        Y[q] = X[q] * (M[q] ? scale : 0.0);
}

/* Layer i forward on nb samples: Y_i := layer(X_i). */
static void layer_forward(const pflref_model *m, const double *w, size_t i,
                          size_t nb, pflref_model_workspace *ws)
{
    const pflref_layer *L = &m->layers[i];
    const double *X = input_of(ws, i);
    double *Y = ws->act[i];
    const double *W = blk(m, L, w, 0), *b = L->bias ? blk(m, L, w, 1) : NULL;
    switch (L->kind) {
    case PFLREF_LAYER_DENSE:
        if (linear_form(L, X, ws)) {
            /* ŷ := X_b w (+ b), linear.c's affine */
            pflref_gemv(CblasNoTrans, 1.0, X, nb, L->in_size, W, 0.0, Y);
            for (size_t j = 0; b != NULL && j < nb; j++)
                Y[j] += b[0];
        } else  /* Y := X Wᵀ + 1 bᵀ */
            pflref_dense_forward(X, nb, L->in_size, W, b, L->out, Y);
        break;
    case PFLREF_LAYER_CONV2D:
        pflref_conv_forward(L, W, b, X, nb, Y, ws->col);
        break;
    case PFLREF_LAYER_MAXPOOL2D:
    case PFLREF_LAYER_AVGPOOL2D:
        pflref_pool_forward(L, X, nb, Y, ws->arg[i]);
        break;
    case PFLREF_LAYER_FLATTEN:
        if (Y != X)
            memcpy(Y, X, nb * L->in_size * sizeof *Y);
        break;
    case PFLREF_LAYER_RELU:
    case PFLREF_LAYER_TANH:
    case PFLREF_LAYER_SIGMOID:
        act_forward(L->kind, X, Y, nb * L->in_size);
        break;
    case PFLREF_LAYER_DROPOUT:
        if (ws->bn_train)   /* Y := X ⊙ M · s (training) */
            drop_apply(L, ws->drop[i], X, Y, nb * L->in_size);
        else if (Y != X)    /* Y := X (evaluation) */
            memcpy(Y, X, nb * L->in_size * sizeof *Y);
        break;
    case PFLREF_LAYER_BATCHNORM1D:
    case PFLREF_LAYER_BATCHNORM2D:
        pflref_bn_forward(L, W, nb, ws->bn_train, X, Y, ws->xhat[i],
                          ws->stats[i]);
        /* the batch's μ_B, s²_B (Monte Carlo arithmetic; off: no-op) */
        if (ws->bn_train)
            pflref_mca_perturb(PFLREF_MCA_PRODUCT, ws->stats[i],
                               2 * L->out_shape[0]);
        break;
    }
    /* the layer's output (check --candidate-precision; off: no-op) */
    if (L->kind != PFLREF_LAYER_FLATTEN || Y != X)
        pflref_mca_perturb(PFLREF_MCA_PRODUCT, Y, nb * L->out_size);
}

/* Layers [0, end) forward. */
static void forward_to(const pflref_model *m, const double *w, size_t nb,
                       pflref_model_workspace *ws, size_t end)
{
    ws->w_fwd = w;
    ws->body_cached = 0;
    for (size_t i = 0; i < end; i++)
        layer_forward(m, w, i, nb, ws);
    if (ws->bn_train && m->bn)
        ws->bn_nb = nb;
}

/* Z := z(w; X_b): every layer. */
static void forward(const pflref_model *m, const double *w, size_t nb,
                    pflref_model_workspace *ws)
{
    forward_to(m, w, nb, ws, m->nlayers);
    ws->body_forward++;
}

/* ------------------------------------------------------------------------
 * Backward pass
 * ------------------------------------------------------------------------ */

/* The index of the first parametrised layer: no signal goes below it. */
static size_t first_param(const pflref_model *m)
{
    for (size_t i = 0; i < m->nlayers; i++)
        if (m->layers[i].first_block >= 0)
            return i;
    return 0;
}

/* A writable copy of the signal: cur itself when it is one of ws's, else
 * copied into the signal buffer `spare`. */
static double *writable(double *cur_ws, const double *cur, double *spare,
                        size_t len)
{
    if (cur_ws != NULL)
        return cur_ws;
    memcpy(spare, cur, len * sizeof *spare);
    return spare;
}

/* The other buffer of a ping-pong pair. */
static double *other(double *const pair[2], const double *cur)
{
    return cur == pair[0] ? pair[1] : pair[0];
}

/* Elementwise dX := dY ⊙ σ'(a) in place, from the output y (len entries):
 * relu as a mask (an entry at a ≤ 0 becomes 0 even when dY is not
 * finite, mlp.c's act_mask), tanh 1 − y², sigmoid y (1 − y). */
static void act_backward(pflref_layer_kind kind, const double *y, double *d,
                         size_t len)
{
    for (size_t q = 0; q < len; q++)
        switch (kind) {
        case PFLREF_LAYER_RELU:
            if (!(y[q] > 0.0))
                d[q] = 0.0;
            break;
        case PFLREF_LAYER_TANH:
            d[q] = d[q] * (1.0 - y[q] * y[q]);
            break;
        default:
            d[q] = d[q] * (y[q] * (1.0 - y[q]));
            break;
        }
}

/* The gradient entries of layers hi, hi−1, ..., lo (hi ≥ lo) from the
 * signal E = ∂ℓ/∂Y_hi (nb × out_size of layer hi; E_ws non-NULL when E is
 * one of ws's buffers and may be overwritten):
 *   g_blocks of each parametrised layer, with α = 1/nb;
 * the signal goes on below layer i only when i > lo and i > the first
 * parametrised layer. */
static void backward_range(const pflref_model *m, const double *w, size_t nb,
                           const double *E, double *E_ws,
                           pflref_model_workspace *ws, double *g, size_t hi,
                           size_t lo)
{
    const double alpha = 1.0 / (double)nb;
    const size_t fp = first_param(m);
    const double *cur = E;
    double *cur_ws = E_ws;
    for (size_t i = hi + 1; i-- > lo;) {
        const pflref_layer *L = &m->layers[i];
        const double *X = input_of(ws, i);
        const int down = i > lo && i > fp;
        const double *W = blk(m, L, w, 0);
        double *gW = blk_out(m, L, g, 0);
        double *gb = L->bias ? blk_out(m, L, g, 1) : NULL;
        double *dst = other(ws->sig, cur);
        switch (L->kind) {
        case PFLREF_LAYER_DENSE:
            if (linear_form(L, X, ws)) {
                /* g_w := α X_bᵀ E,  g_b := α Σ_j E_j  (linear.c) */
                pflref_gemv(CblasTrans, alpha, X, nb, L->in_size, cur, 0.0,
                            gW);
                if (gb != NULL)
                    pflref_colsum(cur, nb, 1, alpha, gb);
            } else  /* g_W := α dYᵀ X,  g_b := α Σ_j dY_j */
                pflref_dense_backward(cur, nb, L->out, X, L->in_size, alpha,
                                      gW, gb);
            if (down) {  /* dX := dY W */
                pflref_gemm(CblasNoTrans, CblasNoTrans, 1.0, cur, nb, L->out,
                            W, L->out, L->in_size, 0.0, dst, nb, L->in_size);
                cur = cur_ws = dst;
            }
            break;
        case PFLREF_LAYER_CONV2D:
            pflref_conv_backward(L, W, NULL, X, NULL, cur, NULL, nb, alpha, gW,
                                 gb, down ? dst : NULL, ws->col, ws->dcol);
            if (down)
                cur = cur_ws = dst;
            break;
        case PFLREF_LAYER_MAXPOOL2D:
        case PFLREF_LAYER_AVGPOOL2D:
            if (down) {
                pflref_pool_backward(L, cur, nb, ws->arg[i], dst);
                cur = cur_ws = dst;
            }
            break;
        case PFLREF_LAYER_FLATTEN:
            break;
        case PFLREF_LAYER_RELU:
        case PFLREF_LAYER_TANH:
        case PFLREF_LAYER_SIGMOID:
            if (down) {
                cur_ws = writable(cur_ws, cur, dst, nb * L->out_size);
                act_backward(L->kind, ws->act[i], cur_ws, nb * L->out_size);
                cur = cur_ws;
            }
            break;
        case PFLREF_LAYER_DROPOUT:
            if (down && !ws->grad_eval) {  /* dX := dY ⊙ M · s */
                cur_ws = writable(cur_ws, cur, dst, nb * L->out_size);
                drop_apply(L, ws->drop[i], cur_ws, cur_ws, nb * L->out_size);
                cur = cur_ws;
            }
            break;
        case PFLREF_LAYER_BATCHNORM1D:
        case PFLREF_LAYER_BATCHNORM2D:
            cur_ws = writable(cur_ws, cur, dst, nb * L->out_size);
            if (ws->grad_eval)   /* r_μ, r_v fixed (evaluation mode) */
                pflref_bn_backward_eval(L, W, nb, ws->xhat[i], cur_ws, gW);
            else
                pflref_bn_backward(L, W, nb, ws->xhat[i], ws->stats[i],
                                   cur_ws, gW);
            cur = cur_ws;
            break;
        }
        /* the signal handed down (Monte Carlo arithmetic; off: no-op) */
        if (down && cur == cur_ws && cur_ws != NULL)
            pflref_mca_perturb(PFLREF_MCA_PRODUCT, cur_ws, nb * L->in_size);
    }
}

/* g := ∇F after forward and the loss terms (P or r in Z). */
static void grad(const pflref_model *m, const double *w, size_t nb,
                 pflref_model_workspace *ws, double *g)
{
    pflref_output_signal(m, nb, ws);    /* E := P − Y  or  s r */
    backward_range(m, w, nb, ws->Z, ws->Z, ws, g, m->nlayers - 1, 0);
    ws->body_backward++;
}

/* The index of the last parametrised layer (the head). */
static size_t last_param(const pflref_model *m)
{
    size_t h = 0;
    for (size_t i = 0; i < m->nlayers; i++)
        if (m->layers[i].first_block >= 0)
            h = i;
    return h;
}

/* The head entries of g alone: the signal back to the last parametrised
 * layer, and its gradient, no further. */
static void grad_head(const pflref_model *m, size_t nb,
                      pflref_model_workspace *ws, double *g)
{
    pflref_output_signal(m, nb, ws);    /* E := P − Y  or  s r */
    /* w: the parameters of the forward pass (a batchnorm head reads γ) */
    backward_range(m, ws->w_fwd, nb, ws->Z, ws->Z, ws, g, m->nlayers - 1,
                   last_param(m));
}

/* g := (1/nb) Σ_j J_j(w)ᵀ E_j: the forward pass at w (batch
 * normalisation in training mode), then the backward pass on E. */
static void backward(const pflref_model *m, const double *w, size_t nb,
                     const double *E, pflref_model_workspace *ws, double *g)
{
    ws->bn_train = 1;
    forward(m, w, nb, ws);
    ws->bn_train = 0;
    backward_range(m, w, nb, E, NULL, ws, g, m->nlayers - 1, 0);
    ws->body_backward++;
}

/* ------------------------------------------------------------------------
 * Hessian-vector product
 * ------------------------------------------------------------------------ */

/* The R-forward pass through layer i: R{Y_i} from R{X_i} (NULL: 0). */
static void layer_r_forward(const pflref_model *m, const double *w,
                            const double *v, size_t i, size_t nb,
                            pflref_model_workspace *ws)
{
    const pflref_layer *L = &m->layers[i];
    const double *X = input_of(ws, i), *RX = r_input_of(ws, i);
    double *RY = ws->Ract[i];
    const double *W = blk(m, L, w, 0), *V = blk(m, L, v, 0);
    const double *vb = L->bias ? blk(m, L, v, 1) : NULL;
    const size_t len = nb * L->out_size;
    switch (L->kind) {
    case PFLREF_LAYER_DENSE:
        if (linear_form(L, X, ws)) {
            /* R{ŷ} := X_b v_w (+ v_b), linear.c's affine on v */
            pflref_gemv(CblasNoTrans, 1.0, X, nb, L->in_size, V, 0.0, RY);
            for (size_t j = 0; vb != NULL && j < nb; j++)
                RY[j] += vb[0];
            break;
        }
        if (RX == NULL)  /* R{Y} := X Vᵀ + 1 v_bᵀ */
            pflref_dense_forward(X, nb, L->in_size, V, vb, L->out, RY);
        else {
            /* R{Y} := R{X} Wᵀ + 1 v_bᵀ, then R{Y} := X Vᵀ + R{Y} */
            pflref_dense_forward(RX, nb, L->in_size, W, vb, L->out, RY);
            pflref_gemm(CblasNoTrans, CblasTrans, 1.0, X, nb, L->in_size, V,
                        L->out, L->in_size, 1.0, RY, nb, L->out);
        }
        break;
    case PFLREF_LAYER_CONV2D:
        pflref_conv_r_forward(L, W, V, vb, X, RX, nb, RY, ws->col);
        break;
    case PFLREF_LAYER_MAXPOOL2D:
    case PFLREF_LAYER_AVGPOOL2D:
        pflref_pool_r_forward(L, RX, nb, ws->arg[i], RY);
        break;
    case PFLREF_LAYER_FLATTEN:
        if (RY != NULL && RY != RX) {
            if (RX != NULL)
                memcpy(RY, RX, len * sizeof *RY);
            else
                memset(RY, 0, len * sizeof *RY);
        }
        break;
    case PFLREF_LAYER_RELU:
    case PFLREF_LAYER_TANH:
    case PFLREF_LAYER_SIGMOID:
        /* R{Y} := σ'(a) ⊙ R{X}, from y */
        if (RX == NULL) {
            memset(RY, 0, len * sizeof *RY);
            break;
        }
        if (RY != RX)
            memcpy(RY, RX, len * sizeof *RY);
        act_backward(L->kind, ws->act[i], RY, len);
        break;
    case PFLREF_LAYER_DROPOUT:   /* R{Y} := R{X} ⊙ M · s */
        if (RX == NULL)
            memset(RY, 0, len * sizeof *RY);
        else
            drop_apply(L, ws->drop[i], RX, RY, len);
        break;
    case PFLREF_LAYER_BATCHNORM1D:
    case PFLREF_LAYER_BATCHNORM2D:
        pflref_bn_r_forward(L, W, V, nb, X, RX, ws->xhat[i], ws->stats[i],
                            ws->Rxhat[i], RY);
        break;
    }
}

/* R{dX} := R{dY} ⊙ σ'(a) + dY ⊙ σ''(a) R{a}, then dX := dY ⊙ σ'(a), both
 * in place, from y and R{y}. */
static void act_r_backward(pflref_layer_kind kind, const double *y,
                           const double *Ry, double *d, double *Rd,
                           size_t len)
{
    if (kind == PFLREF_LAYER_RELU) {    /* σ'' = 0 */
        act_backward(kind, y, Rd, len);
        act_backward(kind, y, d, len);
        return;
    }
    for (size_t q = 0; q < len; q++) {
        const double t = y[q];
        if (kind == PFLREF_LAYER_TANH) {
            Rd[q] = Rd[q] * (1.0 - t * t) + d[q] * (-2.0 * t * Ry[q]);
            d[q] = d[q] * (1.0 - t * t);
        } else {
            Rd[q] = Rd[q] * (t * (1.0 - t)) + d[q] * ((1.0 - 2.0 * t) * Ry[q]);
            d[q] = d[q] * (t * (1.0 - t));
        }
    }
}

/* A dense layer of the R-backward pass: (Hv)_W, (Hv)_b from (dY, R{dY}) =
 * (cur, Rcur), and, when dst is non-NULL (a layer below takes a signal),
 * (dX, R{dX}) into (dst, Rdst); 1 when it wrote them. */
static int dense_r_backward(const pflref_layer *L, const double *X,
                            const double *RX, const double *W,
                            const double *V, size_t nb, double alpha,
                            const double *cur, const double *Rcur,
                            double *dst, double *Rdst, double *HW,
                            double *Hb, pflref_model_workspace *ws)
{
    const size_t in = L->in_size;
    if (linear_form(L, X, ws)) {
        /* (H v)_w := α X_bᵀ R{E},  (H v)_b := α Σ_j R{E}_j */
        pflref_gemv(CblasTrans, alpha, X, nb, in, Rcur, 0.0, HW);
        if (Hb != NULL)
            pflref_colsum(Rcur, nb, 1, alpha, Hb);
        return 0;
    }
    /* (Hv)_W := α R{dY}ᵀ X (+ α dYᵀ R{X}),  (Hv)_b := α Σ R{dY} */
    pflref_dense_backward(Rcur, nb, L->out, X, in, alpha, HW, Hb);
    if (RX != NULL)
        pflref_gemm(CblasTrans, CblasNoTrans, alpha, cur, nb, L->out,
                    RX, nb, in, 1.0, HW, L->out, in);
    if (dst == NULL)
        return 0;
    /* R{dX} := R{dY} W + dY V,  dX := dY W */
    pflref_gemm(CblasNoTrans, CblasNoTrans, 1.0, Rcur, nb, L->out,
                W, L->out, in, 0.0, Rdst, nb, in);
    pflref_gemm(CblasNoTrans, CblasNoTrans, 1.0, cur, nb, L->out,
                V, L->out, in, 1.0, Rdst, nb, in);
    pflref_gemm(CblasNoTrans, CblasNoTrans, 1.0, cur, nb, L->out,
                W, L->out, in, 0.0, dst, nb, in);
    return 1;
}

/* Hv := ∇²F v after forward and the loss terms (Z = P or r): the
 * R-forward pass, R{E} and E, then the R-backward pass from the last
 * layer to the first, carrying (dY, R{dY}) down. */
static void hvp(const pflref_model *m, const double *w, size_t nb,
                const double *v, pflref_model_workspace *ws, double *Hv)
{
    ws->body_forward++;                 /* the R-forward through the body */
    ws->body_backward++;                /* and the R-backward             */
    for (size_t i = 0; i < m->nlayers; i++)
        layer_r_forward(m, w, v, i, nb, ws);
    pflref_output_signal_r(m, nb, ws);  /* R{E} := R{P}  or  s R{ŷ} */
    pflref_output_signal(m, nb, ws);    /* E := P − Y  or  s r     */
    const double alpha = 1.0 / (double)nb;
    const size_t fp = first_param(m);
    double *cur = ws->Z, *Rcur = ws->RZ;
    for (size_t i = m->nlayers; i-- > 0;) {
        const pflref_layer *L = &m->layers[i];
        const double *X = input_of(ws, i), *RX = r_input_of(ws, i);
        const double *W = blk(m, L, w, 0), *V = blk(m, L, v, 0);
        double *HW = blk_out(m, L, Hv, 0);
        double *Hb = L->bias ? blk_out(m, L, Hv, 1) : NULL;
        const int down = i > fp;
        double *dst = other(ws->sig, cur), *Rdst = other(ws->Rsig, Rcur);
        switch (L->kind) {
        case PFLREF_LAYER_DENSE:
            if (dense_r_backward(L, X, RX, W, V, nb, alpha, cur, Rcur,
                                 down ? dst : NULL, Rdst, HW, Hb, ws)) {
                cur = dst;
                Rcur = Rdst;
            }
            break;
        case PFLREF_LAYER_CONV2D:
            /* (Hv)_W, (Hv)_b and R{dX}, then dX */
            pflref_conv_backward(L, W, V, X, RX, Rcur, cur, nb, alpha, HW, Hb,
                                 down ? Rdst : NULL, ws->col, ws->dcol);
            if (down) {
                pflref_conv_backward(L, W, NULL, X, NULL, cur, NULL, nb, alpha,
                                     NULL, NULL, dst, ws->col, ws->dcol);
                cur = dst;
                Rcur = Rdst;
            }
            break;
        case PFLREF_LAYER_MAXPOOL2D:
        case PFLREF_LAYER_AVGPOOL2D:
            if (down) {  /* both signals through the argmax / the window */
                pflref_pool_backward(L, Rcur, nb, ws->arg[i], Rdst);
                pflref_pool_backward(L, cur, nb, ws->arg[i], dst);
                cur = dst;
                Rcur = Rdst;
            }
            break;
        case PFLREF_LAYER_FLATTEN:
            break;
        case PFLREF_LAYER_RELU:
        case PFLREF_LAYER_TANH:
        case PFLREF_LAYER_SIGMOID:
            if (down)
                act_r_backward(L->kind, ws->act[i], ws->Ract[i], cur, Rcur,
                               nb * L->out_size);
            break;
        case PFLREF_LAYER_DROPOUT:
            if (down) {  /* R{dX} := R{dY} ⊙ M · s,  dX := dY ⊙ M · s */
                drop_apply(L, ws->drop[i], Rcur, Rcur, nb * L->out_size);
                drop_apply(L, ws->drop[i], cur, cur, nb * L->out_size);
            }
            break;
        case PFLREF_LAYER_BATCHNORM1D:
        case PFLREF_LAYER_BATCHNORM2D:
            pflref_bn_r_backward(L, W, V, nb, ws->xhat[i], ws->Rxhat[i],
                                 ws->stats[i], cur, Rcur, HW);
            break;
        }
    }
}

const pflref_model_ops pflref_layers_ops = {
    .forward = forward, .grad = grad, .backward = backward, .hvp = hvp,
    .head_grad = grad_head, .hvp_at_w = 1};

/* ------------------------------------------------------------------------
 * Running statistics, body and head
 * ------------------------------------------------------------------------ */

/* r_μ ← (1 − ρ) r_μ + ρ μ_B,  r_v ← (1 − ρ) r_v + ρ f s²_B per batchnorm
 * layer, f = M/(M − 1) (unbiased, M = nb·H·W, PyTorch's n for 2-d) or 1
 * (biased). */
pflref_status pflref_layers_bn_update(const pflref_model *m,
                                      const pflref_model_workspace *ws,
                                      int biased, double *w,
                                      pflref_error *err)
{
    const size_t nb = ws->bn_nb;
    if (nb == 0)
        return pflref_error_set(err, PFLREF_EINVAL, "ws",
                                "no training pass on this workspace yet: "
                                "no batch statistics to move r_μ, r_v by");
    for (size_t i = 0; i < m->nlayers; i++) {
        const pflref_layer *L = &m->layers[i];
        if (!pflref_layer_is_bn(L->kind))
            continue;
        const size_t C = L->out_shape[0], M = nb * (L->in_size / C);
        if (!biased && M < 2)
            return pflref_error_set(err, PFLREF_EINVAL, "nb",
                                    "layer %s normalises over one entry: no "
                                    "unbiased variance M/(M − 1) s²_B for "
                                    "r_v", L->name);
        const double rho = L->momentum;
        const double f = biased ? 1.0 : (double)M / (double)(M - 1);
        double *r_mu = blk_out(m, L, w, 2), *r_v = blk_out(m, L, w, 3);
        const double *st = ws->stats[i];
        for (size_t c = 0; c < C; c++) {
            r_mu[c] = (1.0 - rho) * r_mu[c] + rho * st[c];
            r_v[c] = (1.0 - rho) * r_v[c] + rho * (f * st[C + c]);
        }
        pflref_mca_perturb(PFLREF_MCA_UPDATE, r_mu, C);   /* off: no-op */
        pflref_mca_perturb(PFLREF_MCA_UPDATE, r_v, C);
    }
    return PFLREF_OK;
}

/* The body/head split of a layer list: the head is its last layer, a
 * dense layer; the body every layer before it, without batchnorm.
 * PFLREF_OK, or PFLREF_EINVAL where "m" naming what is missing. */
pflref_status pflref_layers_check_split(const pflref_model *m)
{
    const size_t L = m->nlayers;
    if (m->layers[L - 1].kind != PFLREF_LAYER_DENSE || L < 2)
        return pflref_error_set(NULL, PFLREF_EINVAL, "m",
                                "the layer list has no body and head: the "
                                "body/head split needs a last dense layer "
                                "(the head) after at least one layer (the "
                                "body)");
    if (m->bn)
        return pflref_error_set(NULL, PFLREF_EINVAL, "m",
                                "the body/head split API does not take a "
                                "layer list with batch normalisation (the "
                                "body's output depends on the whole batch)");
    if (pflref_model_dropout_layers(m) > 0)
        return pflref_error_set(NULL, PFLREF_EINVAL, "m",
                                "the body/head split API does not take a "
                                "layer list with dropout (its features pass "
                                "is an evaluation pass, with no masks)");
    return PFLREF_OK;
}

/* The body / head split API's access to the kernels above
 * (ref/models/layers_body.c). */
const double *pflref_layers_blk(const pflref_model *m, const pflref_layer *L,
                                const double *x, size_t q)
{
    return blk(m, L, x, q);
}

double *pflref_layers_blk_out(const pflref_model *m, const pflref_layer *L,
                              double *x, size_t q)
{
    return blk_out(m, L, x, q);
}

void pflref_layers_forward_to(const pflref_model *m, const double *w,
                              size_t nb, pflref_model_workspace *ws,
                              size_t end)
{
    forward_to(m, w, nb, ws, end);
}

void pflref_layers_backward_range(const pflref_model *m, const double *w,
                                  size_t nb, const double *E, double *E_ws,
                                  pflref_model_workspace *ws, double *g,
                                  size_t hi, size_t lo)
{
    backward_range(m, w, nb, E, E_ws, ws, g, hi, lo);
}
