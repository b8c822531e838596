/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_layers.c: the layer-list model (kind "layers";
 * ref/models/layers*.c, docs/models.md "layers").
 *
 * Evidence, each from outside the code under test:
 *   - the old spellings bit for bit: [dense] + cross_entropy = softmax,
 *     [dense(d→1)] + squared = linear, [dense, relu, dense] = mlp,
 *     [dense, dense] = the identity mlp, [dense, batchnorm1d, relu, dense]
 *     = the mlp with bn (loss, grad, hvp, evaluate, bn_update: memcmp);
 *   - exact small cases worked by hand (integers: every operation exact)
 *     and checked with torch: a 1×3×3 input through a 2×2 convolution;
 *     max pooling's ties (torch 1.13: the first index of the window);
 *   - the gradient of every layer kind against central differences, and
 *     the Hessian-vector product against central differences of the
 *     gradient, with the tolerances justified at the test;
 *   - shape-chaining errors by exact message substrings, the CLI's exit 2;
 *   - presets' parameter counts against PyTorch's (worked in comments);
 *   - the body/head split (PFLEGO's API) bit for bit against grad;
 *   - a CLI FedAvg run on a tiny CNN spec.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_rng.h>
#include "suites.h"
#include "testutil.h"
#include "builder.h"
#include "engine/engine.h"
#include "pflref/golden.h"

/* ------------------------------------------------------------------------
 * Helpers
 * ------------------------------------------------------------------------ */

/* A layer description (stride 0: the default). */
static pflref_layer lay(pflref_layer_kind kind, size_t out, size_t kernel,
                        size_t stride, size_t padding, int bias)
{
    return (pflref_layer){.kind = kind, .out = out, .kernel = kernel,
                          .stride = stride, .padding = padding, .bias = bias,
                          .eps = 1e-3, .momentum = 0.1};
}

#define DENSE(o, b) lay(PFLREF_LAYER_DENSE, (o), 0, 0, 0, (b))
#define CONV(o, k, s, p) lay(PFLREF_LAYER_CONV2D, (o), (k), (s), (p), 1)
#define MAXP(k, s) lay(PFLREF_LAYER_MAXPOOL2D, 0, (k), (s), 0, 0)
#define AVGP(k, s) lay(PFLREF_LAYER_AVGPOOL2D, 0, (k), (s), 0, 0)
#define PLAIN(kind) lay((kind), 0, 0, 0, 0, 0)

/* The layer list, which must be valid. */
static pflref_model layers_model(pflref_loss loss, const size_t *input,
                                 int rank, const pflref_layer *L, size_t n)
{
    pflref_model m;
    pflref_error err;
    pflref_status st = pflref_model_init_layers(&m, loss, input, rank, L, n,
                                                &err);
    ck_assert_msg(st == PFLREF_OK, "init_layers: %s: %s", err.where,
                  err.message);
    return m;
}

/* x[0..n−1] uniform in [lo, hi). */
static void fill(gsl_rng *r, double *x, size_t n, double lo, double hi)
{
    for (size_t q = 0; q < n; q++)
        x[q] = lo + (hi - lo) * gsl_rng_uniform(r);
}

/* n labels: classes in [0, k) (k ≥ 2) or targets in [−1, 1) (k = 1). */
static void labels(gsl_rng *r, double *y, size_t n, size_t k)
{
    for (size_t j = 0; j < n; j++)
        y[j] = k >= 2 ? (double)gsl_rng_uniform_int(r, k)
                      : 2.0 * gsl_rng_uniform(r) - 1.0;
}

/* ------------------------------------------------------------------------
 * The old spellings, bit for bit
 * ------------------------------------------------------------------------ */

/* a (old spelling) and b (layer list) with the same P: loss, grad (on a
 * batch with a repeated index and on the whole set), hvp, evaluate and
 * outputs agree bit for bit at random w, v. */
static void assert_same_bits(const pflref_model *a, const pflref_model *b,
                             unsigned long seed, const char *what)
{
    ck_assert_msg(a->P == b->P, "%s: P %zu vs %zu", what, a->P, b->P);
    const size_t P = a->P, n = 9, d = a->d, k = a->k;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, seed);
    double *X = malloc(n * d * sizeof *X), y[9];
    double *w = malloc(P * sizeof *w), *v = malloc(P * sizeof *v);
    double *g1 = malloc(P * sizeof *g1), *g2 = malloc(P * sizeof *g2);
    fill(r, X, n * d, -1.5, 1.5);
    labels(r, y, n, k);
    fill(r, w, P, -0.8, 0.8);
    fill(r, v, P, -1.0, 1.0);
    pflref_model_bn_reset(a, w);        /* γ = 1 ... then away from it */
    for (size_t p = 0; p < P; p++)
        w[p] += a->bn ? 0.25 * gsl_rng_uniform(r) : 0.0;
    const pflref_data D = {.n = n, .X = X, .y = y};
    pflref_model_workspace *wa = pflref_model_workspace_alloc(a, n);
    pflref_model_workspace *wb = pflref_model_workspace_alloc(b, n);
    ck_assert(wa != NULL && wb != NULL);
    const size_t idx[6] = {4, 1, 7, 1, 0, 8};
    for (int batch = 0; batch < 2; batch++) {
        const size_t *id = batch ? idx : NULL;
        const size_t nb = batch ? 6 : n;
        double la, lb;
        ck_assert_int_eq(pflref_model_loss(a, w, &D, id, nb, wa, &la),
                         PFLREF_OK);
        ck_assert_int_eq(pflref_model_loss(b, w, &D, id, nb, wb, &lb),
                         PFLREF_OK);
        ck_assert_msg(memcmp(&la, &lb, sizeof la) == 0,
                      "%s: loss %.17g vs %.17g", what, la, lb);
        ck_assert_int_eq(pflref_model_grad(a, w, &D, id, nb, wa, g1, &la),
                         PFLREF_OK);
        ck_assert_int_eq(pflref_model_grad(b, w, &D, id, nb, wb, g2, &lb),
                         PFLREF_OK);
        for (size_t p = 0; p < P; p++)
            ck_assert_msg(memcmp(&g1[p], &g2[p], sizeof *g1) == 0,
                          "%s: grad[%zu] %.17g vs %.17g", what, p, g1[p],
                          g2[p]);
        if (a->bn) {  /* the running statistics after this training pass */
            double *wa2 = malloc(P * sizeof *wa2), *wb2 = malloc(P * sizeof *wb2);
            memcpy(wa2, w, P * sizeof *w);
            memcpy(wb2, w, P * sizeof *w);
            ck_assert_int_eq(pflref_model_bn_update(a, wa, 0, wa2, NULL),
                             PFLREF_OK);
            ck_assert_int_eq(pflref_model_bn_update(b, wb, 0, wb2, NULL),
                             PFLREF_OK);
            ck_assert_msg(memcmp(wa2, wb2, P * sizeof *w) == 0,
                          "%s: bn_update differs", what);
            ck_assert_msg(memcmp(wa2, w, P * sizeof *w) != 0,
                          "%s: bn_update moved nothing", what);
            free(wa2);
            free(wb2);
        }
        ck_assert_int_eq(pflref_model_hvp(a, w, &D, id, nb, v, wa, g1),
                         PFLREF_OK);
        ck_assert_int_eq(pflref_model_hvp(b, w, &D, id, nb, v, wb, g2),
                         PFLREF_OK);
        for (size_t p = 0; p < P; p++)
            ck_assert_msg(memcmp(&g1[p], &g2[p], sizeof *g1) == 0,
                          "%s: hvp[%zu] %.17g vs %.17g", what, p, g1[p],
                          g2[p]);
    }
    /* evaluation (batchnorm in evaluation mode) and the outputs */
    pflref_eval ea, eb;
    ck_assert_int_eq(pflref_model_evaluate(a, w, &D, wa, &ea), PFLREF_OK);
    ck_assert_int_eq(pflref_model_evaluate(b, w, &D, wb, &eb), PFLREF_OK);
    ck_assert_msg(memcmp(&ea.loss, &eb.loss, sizeof ea.loss) == 0,
                  "%s: evaluate loss %.17g vs %.17g", what, ea.loss, eb.loss);
    ck_assert(memcmp(&ea.accuracy, &eb.accuracy, sizeof ea.accuracy) == 0);
    ck_assert(memcmp(&ea.mse, &eb.mse, sizeof ea.mse) == 0);
    double *Za = malloc(n * k * sizeof *Za), *Zb = malloc(n * k * sizeof *Zb);
    ck_assert_int_eq(pflref_model_outputs(a, w, &D, NULL, n, wa, Za),
                     PFLREF_OK);
    ck_assert_int_eq(pflref_model_outputs(b, w, &D, NULL, n, wb, Zb),
                     PFLREF_OK);
    ck_assert(memcmp(Za, Zb, n * k * sizeof *Za) == 0);
    /* grad_from_output on a given signal */
    ck_assert_int_eq(pflref_model_grad_from_output(a, w, &D, NULL, n, Za, wa,
                                                   g1),
                     PFLREF_OK);
    ck_assert_int_eq(pflref_model_grad_from_output(b, w, &D, NULL, n, Za, wb,
                                                   g2),
                     PFLREF_OK);
    ck_assert_msg(memcmp(g1, g2, P * sizeof *g1) == 0,
                  "%s: grad_from_output differs", what);
    free(Za);
    free(Zb);
    pflref_model_workspace_free(wa);
    pflref_model_workspace_free(wb);
    free(X);
    free(w);
    free(v);
    free(g1);
    free(g2);
    gsl_rng_free(r);
}

/* [dense(d→k)] + cross_entropy is softmax, with and without bias. */
START_TEST(test_bits_softmax)
{
    const int bias = _i;
    const size_t d = 5, k = 3, in[1] = {d};
    pflref_model a;
    ck_assert_int_eq(pflref_model_init(&a, PFLREF_MODEL_SOFTMAX,
                                       PFLREF_LOSS_CROSS_ENTROPY, d, k, 0,
                                       bias, NULL),
                     PFLREF_OK);
    const pflref_layer L[] = {DENSE(k, bias)};
    const pflref_model b =
        layers_model(PFLREF_LOSS_CROSS_ENTROPY, in, 1, L, 1);
    assert_same_bits(&a, &b, 11u + (unsigned long)bias, "softmax");
}
END_TEST

/* [dense(d→1)] + squared / half_squared is linear (dgemv), with and
 * without bias. */
START_TEST(test_bits_linear)
{
    const int bias = _i & 1;
    const pflref_loss loss = (_i & 2) ? PFLREF_LOSS_HALF_SQUARED
                                      : PFLREF_LOSS_SQUARED;
    const size_t d = 6, in[1] = {d};
    pflref_model a;
    ck_assert_int_eq(pflref_model_init(&a, PFLREF_MODEL_LINEAR, loss, d, 1, 0,
                                       bias, NULL),
                     PFLREF_OK);
    const pflref_layer L[] = {DENSE(1, bias)};
    const pflref_model b = layers_model(loss, in, 1, L, 1);
    assert_same_bits(&a, &b, 21u + (unsigned long)_i, "linear");
}
END_TEST

/* [dense(d→h), relu, dense(h→k)] is the mlp; [dense, dense] the identity
 * mlp; each bias on its own; cross-entropy and the regression mlp. */
START_TEST(test_bits_mlp)
{
    const int hb = _i & 1, ob = (_i >> 1) & 1, ident = (_i >> 2) & 1,
              reg = (_i >> 3) & 1;
    const size_t d = 4, h = 5, k = reg ? 1 : 3, in[1] = {d};
    const pflref_loss loss = reg ? PFLREF_LOSS_SQUARED
                                 : PFLREF_LOSS_CROSS_ENTROPY;
    const pflref_model a = tb_mlp(loss, d, k, h,
                                  ident ? PFLREF_ACT_IDENTITY
                                        : PFLREF_ACT_RELU,
                                  hb, ob);
    pflref_layer L[3] = {DENSE(h, hb), PLAIN(PFLREF_LAYER_RELU),
                         DENSE(k, ob)};
    if (ident)
        L[1] = DENSE(k, ob);
    const pflref_model b = layers_model(loss, in, 1, L, ident ? 2 : 3);
    char what[32];
    snprintf(what, sizeof what, "mlp variant %d", _i);
    assert_same_bits(&a, &b, 31u + (unsigned long)_i, what);
}
END_TEST

/* [dense, batchnorm1d, relu, dense] is the mlp with bn (ε = 1e-3,
 * ρ = 0.1), bn_update included. */
START_TEST(test_bits_mlp_bn)
{
    const int reg = _i;
    const size_t d = 3, h = 4, k = reg ? 1 : 3, in[1] = {d};
    const pflref_loss loss = reg ? PFLREF_LOSS_HALF_SQUARED
                                 : PFLREF_LOSS_CROSS_ENTROPY;
    pflref_model a = tb_mlp(loss, d, k, h, PFLREF_ACT_RELU, 1, 1);
    ck_assert_int_eq(pflref_model_add_bn(&a, 1e-3, 0.1, NULL), PFLREF_OK);
    const pflref_layer L[] = {DENSE(h, 1), PLAIN(PFLREF_LAYER_BATCHNORM1D),
                              PLAIN(PFLREF_LAYER_RELU), DENSE(k, 1)};
    const pflref_model b = layers_model(loss, in, 1, L, 4);
    ck_assert(b.bn);
    assert_same_bits(&a, &b, 41u + (unsigned long)reg, "mlp with bn");
}
END_TEST

/* ------------------------------------------------------------------------
 * Exact small cases
 * ------------------------------------------------------------------------ */

/* x = [[1, 2, 0], [0, 1, 3], [2, 1, 1]] (1×3×3), conv W = [[1, −1],
 * [2, 0]], b = 1 → Y = [[0, 5], [4, 1]]; flatten; dense v = [1, 0, −1, 2],
 * c = 0 → ŷ = −2; y = 1, half_squared: ℓ = ½ (−3)² = 4.5, E = −3.
 * By hand: g_v = E Y = [0, −15, −12, −3], g_c = −3; dY = E v =
 * [[−3, 0], [3, −6]]; g_W[i][j] = Σ dY[y][x] X[y + i][x + j] =
 * [[−9, −21], [0, −6]], g_b = Σ dY = −6 (torch 1.13's conv2d autograd gives
 * the same numbers).  Every operation is on small integers: exact. */
START_TEST(test_conv_exact)
{
    const size_t in[3] = {1, 3, 3};
    const pflref_layer L[] = {CONV(1, 2, 1, 0), PLAIN(PFLREF_LAYER_FLATTEN),
                              DENSE(1, 1)};
    const pflref_model m = layers_model(PFLREF_LOSS_HALF_SQUARED, in, 3, L, 3);
    ck_assert_uint_eq(m.P, 10);
    ck_assert_str_eq(m.blocks[0].name, "0.weight");
    ck_assert_str_eq(m.blocks[3].name, "2.bias");
    double X[9] = {1, 2, 0, 0, 1, 3, 2, 1, 1}, y[1] = {1};
    const double w[10] = {1, -1, 2, 0, 1, 1, 0, -1, 2, 0};
    const double want[10] = {-9, -21, 0, -6, -6, 0, -15, -12, -3, -3};
    double g[10], loss;
    const pflref_data D = {.n = 1, .X = X, .y = y};
    pflref_model_workspace *ws = pflref_model_workspace_alloc(&m, 1);
    ck_assert_int_eq(pflref_model_grad(&m, w, &D, NULL, 1, ws, g, &loss),
                     PFLREF_OK);
    ck_assert(loss == 4.5);
    for (size_t p = 0; p < 10; p++)
        ck_assert_msg(g[p] == want[p], "g[%zu] = %g, by hand %g", p, g[p],
                      want[p]);
    double Z;
    ck_assert_int_eq(pflref_model_outputs(&m, w, &D, NULL, 1, ws, &Z),
                     PFLREF_OK);
    ck_assert(Z == -2.0);
    pflref_model_workspace_free(ws);
}
END_TEST

/* Max pooling routes to the FIRST maximum of a window (torch 1.13:
 * max_pool2d of [[1, 1], [1, 1]] returns index 0; of [[0, 2], [2, 1]] the
 * gradient lands on index 1); average pooling spreads dY/κ².  Input
 * 1×2×4, pools 2×2 stride 2 → 2 outputs, then dense v = [1, 2], no bias,
 * half_squared with y = 0: E = ŷ. */
START_TEST(test_pool_exact)
{
    const size_t in[3] = {1, 2, 4};
    const int avg = _i;
    const pflref_layer L[] = {avg ? AVGP(2, 0) : MAXP(2, 0),
                              PLAIN(PFLREF_LAYER_FLATTEN), DENSE(1, 0)};
    const pflref_model m = layers_model(PFLREF_LOSS_HALF_SQUARED, in, 3, L, 3);
    /* windows {1, 1 / 1, 1} and {0, 2 / 2, 1} */
    double X[8] = {1, 1, 0, 2, 1, 1, 2, 1}, y[1] = {0};
    const double w[2] = {1, 2};
    double g[2], Z;
    const pflref_data D = {.n = 1, .X = X, .y = y};
    pflref_model_workspace *ws = pflref_model_workspace_alloc(&m, 1);
    ck_assert_int_eq(pflref_model_outputs(&m, w, &D, NULL, 1, ws, &Z),
                     PFLREF_OK);
    /* max: 1·1 + 2·2 = 5; avg: 1·1 + 2·(5/4) = 3.5 */
    ck_assert(Z == (avg ? 3.5 : 5.0));
    ck_assert_int_eq(pflref_model_grad(&m, w, &D, NULL, 1, ws, g, NULL),
                     PFLREF_OK);
    ck_assert(g[0] == (avg ? 3.5 : 5.0) && g[1] == (avg ? 3.5 * 1.25 : 10.0));
    /* the signal into the input, seen through an hvp with v = e_0 of the
     * dense weights: (Hv)_v = ŷ-free, J-only: [x̄0, x̄1] x̄0 */
    const double v[2] = {1, 0};
    double Hv[2];
    ck_assert_int_eq(pflref_model_hvp(&m, w, &D, NULL, 1, v, ws, Hv),
                     PFLREF_OK);
    /* H = p pᵀ (p the pooled vector): max p = [1, 2] → H e0 = [1, 2];
     * avg p = [1, 1.25] → [1, 1.25] */
    ck_assert(Hv[0] == 1.0 && Hv[1] == (avg ? 1.25 : 2.0));
    pflref_model_workspace_free(ws);
}
END_TEST

/* Ties go to the window's FIRST entry.  X = [[1, 1, 5], [1, 1, 7],
 * [9, 3, 4]] (1×3×3); conv 2×2, no bias, W = [[1, 0], [0, 0]] copies
 * Y[y][x] = X[y][x] = 1 everywhere in the one 2×2 max window; dense 1,
 * half_squared, y = 0: ŷ = 1, E = 1.  g_W[i][j] = X[a_y + i][a_x + j] at
 * the argmax a: the first index (0, 0) gives [[1, 1], [1, 1]]; (0, 1)
 * would give [[1, 5], [1, 7]], (1, 0) [[1, 1], [9, 3]], (1, 1)
 * [[1, 7], [3, 4]]. */
START_TEST(test_pool_ties)
{
    const size_t in[3] = {1, 3, 3};
    const pflref_layer L[] = {lay(PFLREF_LAYER_CONV2D, 1, 2, 1, 0, 0),
                              MAXP(2, 0), PLAIN(PFLREF_LAYER_FLATTEN),
                              DENSE(1, 0)};
    const pflref_model m = layers_model(PFLREF_LOSS_HALF_SQUARED, in, 3, L, 4);
    ck_assert_uint_eq(m.P, 5);
    double X[9] = {1, 1, 5, 1, 1, 7, 9, 3, 4}, y[1] = {0};
    const double w[5] = {1, 0, 0, 0, 1};
    double g[5];
    const pflref_data D = {.n = 1, .X = X, .y = y};
    pflref_model_workspace *ws = pflref_model_workspace_alloc(&m, 1);
    ck_assert_int_eq(pflref_model_grad(&m, w, &D, NULL, 1, ws, g, NULL),
                     PFLREF_OK);
    for (size_t p = 0; p < 4; p++)
        ck_assert_msg(g[p] == 1.0, "g_W[%zu] = %g: not the first index", p,
                      g[p]);
    ck_assert(g[4] == 1.0);
    pflref_model_workspace_free(ws);
}
END_TEST

/* ------------------------------------------------------------------------
 * Gradient and Hessian-vector product against differences
 * ------------------------------------------------------------------------ */

/* The networks of the finite-difference tests: every layer kind, conv
 * strides and paddings, overlapping max windows, both batchnorms. */
typedef struct {
    const char *what;
    pflref_loss loss;
    size_t in[3];
    int rank;
    pflref_layer L[12];
    size_t n;
} net;

static net net_case(int i)
{
    const pflref_loss CE = PFLREF_LOSS_CROSS_ENTROPY,
                      SQ = PFLREF_LOSS_SQUARED, HS = PFLREF_LOSS_HALF_SQUARED;
    const pflref_layer R = PLAIN(PFLREF_LAYER_RELU),
                       T = PLAIN(PFLREF_LAYER_TANH),
                       S = PLAIN(PFLREF_LAYER_SIGMOID),
                       F = PLAIN(PFLREF_LAYER_FLATTEN),
                       B1 = PLAIN(PFLREF_LAYER_BATCHNORM1D),
                       B2 = PLAIN(PFLREF_LAYER_BATCHNORM2D);
    switch (i) {
    case 0:  /* conv (padding 1) → relu → maxpool → flatten → dense */
        return (net){"conv-relu-maxpool", CE, {2, 6, 6}, 3,
                     {CONV(3, 3, 1, 1), R, MAXP(2, 0), F, DENSE(3, 1)}, 5};
    case 1:  /* conv (stride 2, padding 1) → tanh → avgpool → dense */
        return (net){"conv-stride-tanh-avgpool", SQ, {1, 7, 7}, 3,
                     {CONV(2, 3, 2, 1), T, AVGP(2, 2), F, DENSE(1, 1)}, 5};
    case 2:  /* conv → batchnorm2d → relu → overlapping maxpool → dense →
              * sigmoid → dense */
        return (net){"conv-bn2d-overlap", CE, {1, 5, 5}, 3,
                     {CONV(2, 2, 1, 0), B2, R, MAXP(3, 1), F, DENSE(4, 1), S,
                      DENSE(3, 1)}, 8};
    case 3:  /* dense → tanh → batchnorm1d → dense */
        return (net){"dense-tanh-bn1d", CE, {4, 1, 1}, 1,
                     {DENSE(5, 0), T, B1, DENSE(3, 1)}, 4};
    case 4:  /* flatten an image → dense → sigmoid → dense */
        return (net){"flatten-sigmoid", HS, {2, 2, 2}, 3,
                     {F, DENSE(3, 1), S, DENSE(1, 0)}, 4};
    case 5:  /* a batchnorm2d first, on the data; two convolutions */
        return (net){"bn2d-first-two-convs", CE, {2, 4, 4}, 3,
                     {B2, CONV(3, 2, 1, 0), R, CONV(2, 2, 1, 1), T, F,
                      DENSE(2, 1)}, 7};
    default: /* relu → pools on the data, then dense layers */
        return (net){"relu-first", CE, {1, 4, 4}, 3,
                     {R, AVGP(2, 0), F, DENSE(3, 1), R, DENSE(3, 1)}, 6};
    }
}

#define N_NETS 7

/* Random data and parameters for net case i (γ shifted away from 0,
 * running variances positive). */
typedef struct {
    pflref_model m;
    double *X, *y, *w;
    pflref_data D;
    pflref_model_workspace *ws;
    gsl_rng *r;
} fd_case;

static fd_case fd_setup(int i, unsigned long seed, size_t n)
{
    const net c = net_case(i);
    fd_case f = {.m = layers_model(c.loss, c.in, c.rank, c.L, c.n)};
    f.r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(f.r, seed);
    f.X = malloc(n * f.m.d * sizeof *f.X);
    f.y = malloc(n * sizeof *f.y);
    f.w = malloc(f.m.P * sizeof *f.w);
    fill(f.r, f.X, n * f.m.d, -1.0, 1.0);
    labels(f.r, f.y, n, f.m.k);
    fill(f.r, f.w, f.m.P, -0.7, 0.7);
    for (size_t b = 0; b < f.m.nblocks; b++)
        if (f.m.blocks[b].is_bn) {
            const size_t role = strstr(f.m.blocks[b].name, ".weight") ? 0
                                : strstr(f.m.blocks[b].name, "running_var")
                                    ? 3
                                    : 1;
            for (size_t q = 0; q < f.m.blocks[b].size; q++)
                f.w[f.m.blocks[b].offset + q] +=
                    role == 0 ? 1.25 : role == 3 ? 1.0 : 0.0;
        }
    f.D = (pflref_data){.n = n, .X = f.X, .y = f.y};
    f.ws = pflref_model_workspace_alloc(&f.m, n);
    ck_assert(f.ws != NULL);
    return f;
}

static void fd_free(fd_case *f)
{
    pflref_model_workspace_free(f->ws);
    free(f->X);
    free(f->y);
    free(f->w);
    gsl_rng_free(f->r);
}

/* ∂F/∂w_p against the central difference (F(w + h e_p) − F(w − h e_p))/2h,
 * h = 1e-6.  Tolerance 1e-6 (1 + |fd|): the truncation error h² F'''/6 is
 * about 1e-12 here, the rounding error about u·|F|/h ≈ 1e-10; a kink of
 * relu or a change of max pooling's argmax within h of w, which would
 * break the difference, has probability about 1e-5 per entry with these
 * continuous random draws, and the draws are fixed (seeded). */
START_TEST(test_grad_fd)
{
    const size_t n = 5;
    fd_case f = fd_setup(_i, 100u + (unsigned long)_i, n);
    const size_t P = f.m.P, idx[4] = {3, 0, 4, 0};
    double *g = malloc(P * sizeof *g), *wp = malloc(P * sizeof *wp);
    for (int batch = 0; batch < 2; batch++) {
        const size_t *id = batch ? idx : NULL, nb = batch ? 4 : n;
        ck_assert_int_eq(pflref_model_grad(&f.m, f.w, &f.D, id, nb, f.ws, g,
                                           NULL),
                         PFLREF_OK);
        const double h = 1e-6;
        for (size_t p = 0; p < P; p++) {
            double fp, fm;
            memcpy(wp, f.w, P * sizeof *wp);
            wp[p] = f.w[p] + h;
            ck_assert_int_eq(pflref_model_loss(&f.m, wp, &f.D, id, nb, f.ws,
                                               &fp),
                             PFLREF_OK);
            wp[p] = f.w[p] - h;
            ck_assert_int_eq(pflref_model_loss(&f.m, wp, &f.D, id, nb, f.ws,
                                               &fm),
                             PFLREF_OK);
            const double fd = (fp - fm) / (2.0 * h);
            ck_assert_msg(fabs(fd - g[p]) <= 1e-6 * (1.0 + fabs(fd)),
                          "%s: dF/dw[%zu] = %.12g, central difference %.12g",
                          net_case(_i).what, p, g[p], fd);
        }
    }
    free(g);
    free(wp);
    fd_free(&f);
}
END_TEST

/* H v against the central difference of the exact gradient,
 * (g(w + εv) − g(w − εv))/2ε with ε = 1e-5: truncation ε² ‖∇³F‖ ≈ 1e-10,
 * rounding u‖g‖/ε ≈ 1e-11; tolerance 1e-6 (1 + |fd|), and the symmetry
 * uᵀ(Hv) = vᵀ(Hu) to 1e-10 relative.  A batchnorm's running statistics
 * get Hv = 0. */
START_TEST(test_hvp_fd)
{
    const size_t n = 5;
    fd_case f = fd_setup(_i, 200u + (unsigned long)_i, n);
    const size_t P = f.m.P;
    double *v = malloc(P * sizeof *v), *u = malloc(P * sizeof *u);
    double *Hv = malloc(P * sizeof *Hv), *Hu = malloc(P * sizeof *Hu);
    double *gp = malloc(P * sizeof *gp), *gm = malloc(P * sizeof *gm);
    double *wp = malloc(P * sizeof *wp), *w0 = malloc(P * sizeof *w0);
    fill(f.r, v, P, -1.0, 1.0);
    fill(f.r, u, P, -1.0, 1.0);
    memcpy(w0, f.w, P * sizeof *w0);
    ck_assert_int_eq(pflref_model_hvp(&f.m, f.w, &f.D, NULL, n, v, f.ws, Hv),
                     PFLREF_OK);
    ck_assert_int_eq(pflref_model_hvp(&f.m, f.w, &f.D, NULL, n, u, f.ws, Hu),
                     PFLREF_OK);
    ck_assert(memcmp(f.w, w0, P * sizeof *w0) == 0);
    const double eps = 1e-5;
    for (size_t p = 0; p < P; p++)
        wp[p] = f.w[p] + eps * v[p];
    ck_assert_int_eq(pflref_model_grad(&f.m, wp, &f.D, NULL, n, f.ws, gp,
                                       NULL),
                     PFLREF_OK);
    for (size_t p = 0; p < P; p++)
        wp[p] = f.w[p] - eps * v[p];
    ck_assert_int_eq(pflref_model_grad(&f.m, wp, &f.D, NULL, n, f.ws, gm,
                                       NULL),
                     PFLREF_OK);
    double uHv = 0.0, vHu = 0.0, scale = 0.0;
    for (size_t p = 0; p < P; p++) {
        const double fd = (gp[p] - gm[p]) / (2.0 * eps);
        ck_assert_msg(fabs(fd - Hv[p]) <= 1e-6 * (1.0 + fabs(fd)),
                      "%s: (Hv)[%zu] = %.12g, difference of gradients %.12g",
                      net_case(_i).what, p, Hv[p], fd);
        uHv += u[p] * Hv[p];
        vHu += v[p] * Hu[p];
        scale += fabs(u[p] * Hv[p]);
    }
    ck_assert_msg(fabs(uHv - vHu) <= 1e-10 * (1.0 + scale),
                  "%s: uᵀHv = %.15g, vᵀHu = %.15g", net_case(_i).what, uHv,
                  vHu);
    for (size_t b = 0; b < f.m.nblocks; b++)
        for (size_t q = 0; f.m.blocks[b].is_buffer && q < f.m.blocks[b].size;
             q++)
            ck_assert(Hv[f.m.blocks[b].offset + q] == 0.0);
    free(v);
    free(u);
    free(Hv);
    free(Hu);
    free(gp);
    free(gm);
    free(wp);
    free(w0);
    fd_free(&f);
}
END_TEST

/* ------------------------------------------------------------------------
 * Batch statistics, evaluation mode, the split API
 * ------------------------------------------------------------------------ */

/* batchnorm2d's running statistics: M = nb·H·W entries per channel
 * (PyTorch's n for the unbiased factor).  Input 1×1×2 (one channel, two
 * pixels), nb = 2, layer list [batchnorm2d, flatten, dense(2→1)]: the
 * channel's entries are X = {1, 3, 2, 6}: μ = 3, s² = (4 + 0 + 1 + 9)/4 =
 * 3.5, unbiased 3.5·4/3 = 14/3; ρ = 0.5 from r_μ = 0, r_v = 1:
 * r_μ = 1.5, r_v = 0.5 + 0.5·14/3 = 17/6 (biased: 0.5 + 1.75 = 2.25). */
START_TEST(test_bn2d_running)
{
    const size_t in[3] = {1, 1, 2};
    pflref_layer L[] = {PLAIN(PFLREF_LAYER_BATCHNORM2D),
                        PLAIN(PFLREF_LAYER_FLATTEN), DENSE(1, 0)};
    L[0].eps = 0.0;
    L[0].momentum = 0.5;
    const pflref_model m = layers_model(PFLREF_LOSS_SQUARED, in, 3, L, 3);
    ck_assert_uint_eq(m.P, 6);
    double X[4] = {1, 3, 2, 6}, y[2] = {0, 1};
    double w[6] = {1, 0, 0, 1, 0.5, -0.25}, w2[6];
    const pflref_data D = {.n = 2, .X = X, .y = y};
    pflref_model_workspace *ws = pflref_model_workspace_alloc(&m, 2);
    pflref_error err;
    ck_assert_int_eq(pflref_model_bn_update(&m, ws, 0, w, &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "ws");
    double F;
    ck_assert_int_eq(pflref_model_loss(&m, w, &D, NULL, 2, ws, &F),
                     PFLREF_OK);
    memcpy(w2, w, sizeof w);
    ck_assert_int_eq(pflref_model_bn_update(&m, ws, 0, w2, NULL), PFLREF_OK);
    ck_assert(w2[2] == 1.5);
    /* three roundings (M/(M − 1), its product, the sum): 3u·r_v < 2e-15 */
    ck_assert_msg(fabs(w2[3] - 17.0 / 6.0) <= 2e-15, "r_v = %.17g", w2[3]);
    memcpy(w2, w, sizeof w);
    ck_assert_int_eq(pflref_model_bn_update(&m, ws, 1, w2, NULL), PFLREF_OK);
    ck_assert(w2[3] == 2.25);
    /* evaluation mode reads r_μ = 0, r_v = 1, ε = 0: x̂ = x; ŷ_0 = 1·0.5
     * + 3·(−0.25) = −0.25, ŷ_1 = 2·0.5 − 6·0.25 = −0.5; mse = (0.0625 +
     * 2.25)/2 = 1.15625 */
    pflref_eval ev;
    ck_assert_int_eq(pflref_model_evaluate(&m, w, &D, ws, &ev), PFLREF_OK);
    ck_assert(ev.mse == 1.15625);
    pflref_model_workspace_free(ws);
}
END_TEST

/* The plain step moves the parameters and never the running statistics,
 * whatever the gradient holds in their entries (0 in a run; the noise of a
 * precision check's normwise hook, ref/core/mca.h, under one). */
START_TEST(test_step_skips_buffers)
{
    const size_t in[3] = {1, 1, 2};
    pflref_layer L[] = {PLAIN(PFLREF_LAYER_BATCHNORM2D),
                        PLAIN(PFLREF_LAYER_FLATTEN), DENSE(1, 0)};
    const pflref_model m = layers_model(PFLREF_LOSS_SQUARED, in, 3, L, 3);
    ck_assert_uint_eq(m.P, 6);          /* γ, β, r_μ, r_v, W (2) */
    ck_assert(m.blocks[2].is_buffer && m.blocks[3].is_buffer);
    const double g[6] = {1, 2, 4, 8, -1, 0.5};
    double x[6] = {1, 0, 0.25, 1.5, 0.5, -0.25};
    ck_assert(pflref_blocks_step(&m, NULL, 0.5, g, x));
    const double want[6] = {0.5, -1, 0.25, 1.5, 1, -0.5};
    for (int p = 0; p < 6; p++)
        ck_assert_msg(x[p] == want[p], "x[%d] = %.17g, expected %.17g", p,
                      x[p], want[p]);
}
END_TEST

/* Under a precision check's perturbation (ref/core/mca.h) a weight whose
 * input is 0 on every row of the batch keeps an exact 0 gradient, as in
 * any float format (each of its terms δ_q · 0 is 0): the dense layer marks
 * it exact and the normwise noise leaves it at 0, while every other entry
 * moves; off, the gradient is the plain one bit for bit.  Input 1 is 0 on
 * both rows, fc1 = W (2 × 3) + b, relu, fc2 = v (1 × 2) + c, half_squared;
 * every pre-activation is positive, so no other entry's terms are all 0. */
START_TEST(test_mca_zero_input_exact)
{
    const size_t in[1] = {3};
    const pflref_layer L[] = {DENSE(2, 1), PLAIN(PFLREF_LAYER_RELU),
                              DENSE(1, 1)};
    const pflref_model m = layers_model(PFLREF_LOSS_HALF_SQUARED, in, 1, L, 3);
    ck_assert_uint_eq(m.P, 11);
    double X[6] = {1, 0, 2, 0.5, 0, -1}, y[2] = {-1, 3};
    const double w[11] = {1, -2, 0.5, 0.25, 3, -0.5,   /* W */
                          1, 2,                        /* b */
                          0.5, -1, 0.25};              /* v, c */
    const pflref_data D = {.n = 2, .X = X, .y = y};
    pflref_model_workspace *ws = pflref_model_workspace_alloc(&m, 2);
    double g0[11], g[11], loss;
    ck_assert_int_eq(pflref_model_grad(&m, w, &D, NULL, 2, ws, g0, &loss),
                     PFLREF_OK);
    ck_assert(g0[1] == 0.0 && g0[4] == 0.0);    /* W's column of input 1 */
    for (uint64_t seed = 1; seed <= 4; seed++) {
        pflref_mca_begin(PFLREF_PRECISION_FP32, seed);
        ck_assert_int_eq(pflref_model_grad(&m, w, &D, NULL, 2, ws, g, &loss),
                         PFLREF_OK);
        pflref_mca_end();
        for (size_t p = 0; p < 11; p++)
            if (p == 1 || p == 4)
                ck_assert_msg(g[p] == 0.0, "g[%zu] = %g", p, g[p]);
            else
                ck_assert_msg(g[p] != g0[p], "g[%zu] unmoved", p);
    }
    ck_assert_int_eq(pflref_model_grad(&m, w, &D, NULL, 2, ws, g, &loss),
                     PFLREF_OK);
    ck_assert(memcmp(g, g0, sizeof g) == 0);
    pflref_model_workspace_free(ws);
}
END_TEST

/* features → head_grad → body_grad is grad bit for bit on a CNN (PFLEGO's
 * three steps), and a batchnorm body is refused naming the model. */
START_TEST(test_split_api)
{
    const size_t n = 6;
    fd_case f = fd_setup(0, 300u, n);
    const size_t P = f.m.P, h = f.m.h, k = f.m.k;
    ck_assert_uint_eq(h, 3 * 3 * 3);    /* 3 channels of 3×3 after pool */
    double *g = malloc(P * sizeof *g), *g2 = calloc(P, sizeof *g2);
    double *A = malloc(n * h * sizeof *A), *Phi = malloc(n * h * sizeof *Phi);
    double *E = malloc(n * k * sizeof *E), l1, l2;
    ck_assert_int_eq(pflref_model_grad(&f.m, f.w, &f.D, NULL, n, f.ws, g,
                                       &l1),
                     PFLREF_OK);
    size_t fw0, bw0, fw1, bw1;
    pflref_model_workspace_passes(f.ws, &fw0, &bw0);
    ck_assert_int_eq(pflref_model_features(&f.m, f.w, &f.D, NULL, n, f.ws, A,
                                           Phi),
                     PFLREF_OK);
    ck_assert_int_eq(pflref_model_head_grad(&f.m, f.w, Phi, &f.D, NULL, n,
                                            f.ws, g2, E, &l2),
                     PFLREF_OK);
    ck_assert_int_eq(pflref_model_body_grad(&f.m, f.w, A, E, &f.D, NULL, n,
                                            f.ws, g2),
                     PFLREF_OK);
    pflref_model_workspace_passes(f.ws, &fw1, &bw1);
    ck_assert(memcmp(&l1, &l2, sizeof l1) == 0);
    ck_assert_msg(memcmp(g, g2, P * sizeof *g) == 0,
                  "the split API differs from grad");
    /* features once (body_grad reads the body outputs it left), one
     * backward */
    ck_assert_uint_eq(fw1 - fw0, 1);
    ck_assert_uint_eq(bw1 - bw0, 1);
    /* another pass through the workspace in between (a loss): body_grad
     * runs the body forward again, counted, with the same bits */
    double *g3 = calloc(P, sizeof *g3), l3;
    const size_t first[1] = {0};
    ck_assert_int_eq(pflref_model_features(&f.m, f.w, &f.D, NULL, n, f.ws, A,
                                           Phi),
                     PFLREF_OK);
    ck_assert_int_eq(pflref_model_head_grad(&f.m, f.w, Phi, &f.D, NULL, n,
                                            f.ws, g3, E, NULL),
                     PFLREF_OK);
    ck_assert_int_eq(pflref_model_loss(&f.m, f.w, &f.D, first, 1, f.ws, &l3),
                     PFLREF_OK);
    pflref_model_workspace_passes(f.ws, &fw0, &bw0);
    ck_assert_int_eq(pflref_model_body_grad(&f.m, f.w, A, E, &f.D, NULL, n,
                                            f.ws, g3),
                     PFLREF_OK);
    pflref_model_workspace_passes(f.ws, &fw1, &bw1);
    ck_assert_uint_eq(fw1 - fw0, 1);
    ck_assert_uint_eq(bw1 - bw0, 1);
    ck_assert_msg(memcmp(g, g3, P * sizeof *g) == 0,
                  "body_grad after another pass differs from grad");
    free(g3);
    /* grad_blocks on the head alone: the head's entries of grad */
    unsigned char *mask = calloc(P, 1);
    pflref_split sp;
    const char *head[] = {"head"};
    ck_assert_int_eq(pflref_split_from_names(&f.m, head, 1, NULL, &sp, NULL),
                     PFLREF_OK);
    pflref_split_mask(&f.m, &sp, mask);
    memset(g2, 0, P * sizeof *g2);
    ck_assert_int_eq(pflref_model_grad_blocks(&f.m, f.w, &f.D, NULL, n, mask,
                                              f.ws, g2, NULL),
                     PFLREF_OK);
    for (size_t p = 0; p < P; p++)
        ck_assert(mask[p] ? g2[p] == g[p] : g2[p] == 0.0);
    free(mask);
    fd_free(&f);
    fd_case b = fd_setup(2, 301u, n);  /* batchnorm2d in the body */
    ck_assert_int_eq(pflref_model_features(&b.m, b.w, &b.D, NULL, n, b.ws, A,
                                           Phi),
                     PFLREF_EINVAL);
    fd_free(&b);
    free(g);
    free(g2);
    free(A);
    free(Phi);
    free(E);
}
END_TEST

/* Splits by block name, layer name (all its blocks) and the groups input,
 * head and bn. */
START_TEST(test_split_names)
{
    const size_t in[3] = {1, 5, 5};
    pflref_layer L[] = {CONV(2, 2, 1, 0), PLAIN(PFLREF_LAYER_BATCHNORM2D),
                        PLAIN(PFLREF_LAYER_RELU), PLAIN(PFLREF_LAYER_FLATTEN),
                        DENSE(3, 1)};
    snprintf(L[0].name, sizeof L[0].name, "conv");
    snprintf(L[1].name, sizeof L[1].name, "bn1");
    const pflref_model m =
        layers_model(PFLREF_LOSS_CROSS_ENTROPY, in, 3, L, 5);
    /* conv.weight, conv.bias, bn1.weight, .bias, .running_mean,
     * .running_var, 4.weight, 4.bias */
    ck_assert_uint_eq(m.nblocks, 8);
    ck_assert_str_eq(m.blocks[5].name, "bn1.running_var");
    ck_assert_str_eq(m.blocks[6].name, "4.weight");
    ck_assert(m.blocks[0].is_input && m.blocks[1].is_input &&
              !m.blocks[2].is_input);
    ck_assert(m.blocks[6].is_head && m.blocks[7].is_head &&
              !m.blocks[5].is_head);
    ck_assert(m.blocks[4].is_buffer && m.blocks[5].is_buffer &&
              !m.blocks[3].is_buffer);
    static const struct {
        const char *name;
        unsigned char want[8];
    } cases[] = {
        {"bn1", {0, 0, 1, 1, 1, 1, 0, 0}},
        {"bn", {0, 0, 1, 1, 1, 1, 0, 0}},
        {"input", {1, 1, 0, 0, 0, 0, 0, 0}},
        {"head", {0, 0, 0, 0, 0, 0, 1, 1}},
        {"4.bias", {0, 0, 0, 0, 0, 0, 0, 1}},
        {"conv", {1, 1, 0, 0, 0, 0, 0, 0}},
    };
    for (size_t q = 0; q < sizeof cases / sizeof cases[0]; q++) {
        pflref_split sp;
        ck_assert_int_eq(pflref_split_from_names(&m, &cases[q].name, 1, NULL,
                                                 &sp, NULL),
                         PFLREF_OK);
        ck_assert_msg(memcmp(sp.personal, cases[q].want, 8) == 0,
                      "split %s", cases[q].name);
    }
    pflref_split sp;
    pflref_error err;
    const char *bad[] = {"relu"};
    ck_assert_int_eq(pflref_split_from_names(&m, bad, 1, "split.personal",
                                             &sp, &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "split.personal[0]");
    ck_assert_msg(strstr(err.message, "conv, bn1, 4,") != NULL, "%s",
                  err.message);
}
END_TEST

/* ------------------------------------------------------------------------
 * Shape errors, presets, the spec and the program
 * ------------------------------------------------------------------------ */

/* Every shape that does not chain: PFLREF_EINVAL naming the layer (and the
 * field) and both shapes. */
START_TEST(test_shape_errors)
{
    static const size_t img[3] = {1, 6, 6}, vec[1] = {8};
    const pflref_layer R = PLAIN(PFLREF_LAYER_RELU);
    pflref_layer bn1 = PLAIN(PFLREF_LAYER_BATCHNORM1D);
    bn1.out = 5;
    static const struct {
        int image;
        size_t n;
        const char *where, *text;
    } cases[] = {
        {1, 2, "layers[1]", "dense needs a vector input, got the image "
                            "[2, 4, 4]"},
        {0, 2, "layers[1].num_features", "num_features = 5 does not match "
                                         "the input [3]"},
        {0, 1, "layers[0]", "conv2d needs an image input [C, H, W], got the "
                            "vector [8]"},
        {1, 1, "layers[0].kernel", "kernel 9 × 9 is larger than the padded "
                                   "input [1, 6, 6] (8 × 8)"},
        {1, 1, "layers[0].kernel", "does not tile the input [1, 6, 6]"},
        {1, 2, "layers[1]", "batchnorm1d normalises the features of a "
                            "vector, got the image [1, 6, 6]"},
        {1, 1, "layers[0]", "the last layer's output [1, 6, 6] is an image"},
        {0, 1, "layers[0]", "cross_entropy needs k >= 2 logits, the last "
                            "layer gives [1]"},
        {0, 2, "layers[1].name", "the name \"a\" is taken by layers[0]"},
    };
    pflref_layer lists[9][2] = {
        {CONV(2, 3, 1, 0), DENSE(3, 1)},
        {DENSE(3, 1), bn1},
        {CONV(2, 3, 1, 0)},
        {CONV(2, 9, 1, 1)},
        {MAXP(4, 4)},
        {R, PLAIN(PFLREF_LAYER_BATCHNORM1D)},
        {R},
        {DENSE(1, 1)},
        {DENSE(3, 1), DENSE(2, 1)},
    };
    snprintf(lists[8][0].name, sizeof lists[8][0].name, "a");
    snprintf(lists[8][1].name, sizeof lists[8][1].name, "a");
    for (size_t q = 0; q < sizeof cases / sizeof cases[0]; q++) {
        pflref_model m;
        pflref_error err;
        pflref_status st = pflref_model_init_layers(
            &m, PFLREF_LOSS_CROSS_ENTROPY, cases[q].image ? img : vec,
            cases[q].image ? 3 : 1, lists[q], cases[q].n, &err);
        ck_assert_msg(st == PFLREF_EINVAL, "case %zu accepted", q);
        ck_assert_msg(strcmp(err.where, cases[q].where) == 0,
                      "case %zu: where %s, expected %s (%s)", q, err.where,
                      cases[q].where, err.message);
        ck_assert_msg(strstr(err.message, cases[q].text) != NULL,
                      "case %zu: message \"%s\" lacks \"%s\"", q,
                      err.message, cases[q].text);
    }
}
END_TEST

/* Parameter counts against PyTorch's (sum of numel over parameters and the
 * batchnorm buffers, without num_batches_tracked):
 *   FedAvgCNN [1, 28, 28], k = 10: conv1.0 1·32·25 + 32 = 832; conv2.0
 *     32·64·25 + 64 = 51 264; fc1.0 1024·512 + 512 = 524 800; fc 512·10 +
 *     10 = 5 130: 582 026 (PFLlib's figure for MNIST);
 *   FedAvgCNN [3, 32, 32]: 3·32·25 + 32 = 2 432; 51 264; 1600·512 + 512 =
 *     819 712; 5 130: 878 538;
 *   LeNet-5 [1, 28, 28], k = 10: 1·6·25 + 6 = 156; 6·16·25 + 16 = 2 416;
 *     400·120 + 120 = 48 120; 120·84 + 84 = 10 164; 84·10 + 10 = 850:
 *     61 706;
 *   mlp [784] → [200, 200] → 10: 784·200 + 200 = 157 000; 200·200 + 200 =
 *     40 200; 200·10 + 10 = 2 010: 199 210 (image [1, 28, 28]: the same,
 *     after a flatten named "0"). */
START_TEST(test_presets)
{
    static const struct {
        const char *preset;
        size_t in[3];
        int rank;
        size_t P, nlayers;
        const char *block0, *blockL;
    } cases[] = {
        {"fedavgcnn", {1, 28, 28}, 3, 582026, 10, "conv1.0.weight",
         "fc.bias"},
        {"fedavgcnn", {3, 32, 32}, 3, 878538, 10, "conv1.0.weight",
         "fc.bias"},
        {"lenet5", {1, 28, 28}, 3, 61706, 12, "0.weight", "11.bias"},
        {"mlp", {784, 1, 1}, 1, 199210, 5, "0.weight", "4.bias"},
        {"mlp", {1, 28, 28}, 3, 199210, 6, "1.weight", "5.bias"},
    };
    const size_t hidden[2] = {200, 200};
    for (size_t q = 0; q < sizeof cases / sizeof cases[0]; q++) {
        pflref_layer L[PFLREF_MAX_LAYERS];
        size_t n;
        pflref_error err;
        ck_assert_int_eq(pflref_layers_preset(cases[q].preset, cases[q].rank,
                                              10, hidden, 2,
                                              PFLREF_LAYER_RELU, L, &n, &err),
                         PFLREF_OK);
        ck_assert_uint_eq(n, cases[q].nlayers);
        const pflref_model m = layers_model(PFLREF_LOSS_CROSS_ENTROPY,
                                            cases[q].in, cases[q].rank, L, n);
        ck_assert_msg(m.P == cases[q].P, "%s: P = %zu, PyTorch's %zu",
                      cases[q].preset, m.P, cases[q].P);
        ck_assert_str_eq(m.blocks[0].name, cases[q].block0);
        ck_assert_str_eq(m.blocks[m.nblocks - 1].name, cases[q].blockL);
    }
    /* the workspace of the MNIST FedAvgCNN for a batch of 10: the
     * activations of 10 samples and ONE im2col pair (conv2: 32·25 × 64
     * doubles beats conv1's 25 × 576), not 10 */
    pflref_layer L[PFLREF_MAX_LAYERS];
    size_t n;
    ck_assert_int_eq(pflref_layers_preset("fedavgcnn", 3, 10, NULL, 0,
                                          PFLREF_LAYER_RELU, L, &n, NULL),
                     PFLREF_OK);
    const size_t in[3] = {1, 28, 28};
    const pflref_model m = layers_model(PFLREF_LOSS_CROSS_ENTROPY, in, 3, L,
                                        n);
    const size_t b1 = pflref_model_workspace_bytes(&m, 1);
    const size_t b10 = pflref_model_workspace_bytes(&m, 10);
    const size_t per_sample = (b10 - b1) / 9, col = 2 * 800 * 64 * 8;
    ck_assert_msg(b1 > col && b10 - 9 * per_sample == b1,
                  "workspace %zu bytes for 1, %zu for 10", b1, b10);
    ck_assert_msg(per_sample < 1200000, "%zu bytes per sample", per_sample);
    pflref_error err;
    ck_assert_int_eq(pflref_layers_preset("resnet18", 3, 10, NULL, 0,
                                          PFLREF_LAYER_RELU, L, &n, &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "preset");
}
END_TEST

/* The spec's own words: each bad "model" of a layer list names its JSON
 * field. */
static char *layers_spec(const char *model, const char *rounds)
{
    char *text = malloc(4096);
    snprintf(text, 4096,
             "{\"format\": \"pflref-spec/1\", \"model\": {%s}, "
             "\"problem\": {\"clients\": [{\"X\": [[1, 2, 0, 0, 1, 3, 2, 1, "
             "1], [0, 1, 1, 2, 0, 1, 1, 0, 2]], \"y\": [0, 1]}, "
             "{\"X\": [[1, 1, 0, 2, 2, 1, 0, 1, 0]], \"y\": [1]}]}, "
             "\"algorithm\": {\"name\": \"fedavg\", \"hyperparameters\": "
             "{\"eta\": 0.1}}, \"init\": {\"kind\": \"uniform\", \"seed\": "
             "3, \"scale\": 0.5}, \"schedule\": {\"kind\": \"given\", "
             "\"rounds\": [%s]}}",
             model, rounds);
    return text;
}

#define IMG "\"kind\": \"layers\", \"input\": [1, 3, 3], "

START_TEST(test_spec_errors)
{
    static const struct {
        const char *model, *where, *text;
    } cases[] = {
        {IMG "\"layers\": [{\"type\": \"dropout\", \"p\": 1}]",
         "model.layers[0].p", "p = 1 must lie in [0, 1)"},
        {IMG "\"layers\": [{\"type\": \"conv3d\"}]", "model.layers[0].type",
         "unknown layer type \"conv3d\""},
        {IMG "\"layers\": [{\"type\": \"relu\", \"out\": 3}]",
         "model.layers[0].out", "unknown field"},
        {IMG "\"layers\": [{\"type\": \"conv2d\", \"out_channels\": 2, "
             "\"kernel\": 2}, {\"type\": \"dense\", \"out\": 2}]",
         "model.layers[1]", "got the image [2, 2, 2]"},
        {IMG "\"layers\": [{\"type\": \"maxpool2d\", \"kernel\": 2}, "
             "{\"type\": \"flatten\"}, {\"type\": \"dense\", \"out\": 2}]",
         "model.layers[0].kernel", "does not tile"},
        {IMG "\"layers\": [{\"type\": \"conv2d\", \"out_channels\": 2, "
             "\"kernel\": 4}, {\"type\": \"flatten\"}, {\"type\": \"dense\", "
             "\"out\": 2}]",
         "model.layers[0].kernel", "larger than the input [1, 3, 3]"},
        {IMG "\"layers\": [{\"type\": \"flatten\"}, {\"type\": "
             "\"batchnorm1d\", \"num_features\": 4}, {\"type\": \"dense\", "
             "\"out\": 2}]",
         "model.layers[1].num_features", "does not match the input [9]"},
        {IMG "\"preset\": \"fedavgcnn\", \"k\": 2",
         "model.layers[0].kernel", "larger than the input [1, 3, 3]"},
        {IMG "\"preset\": \"vgg\", \"k\": 2", "model.preset",
         "unknown preset"},
        {IMG "\"preset\": \"lenet5\", \"k\": 2, \"layers\": []",
         "model.layers", "both given"},
        {IMG "\"layers\": [{\"type\": \"flatten\"}, {\"type\": \"dense\", "
             "\"out\": 2}], \"k\": 2",
         "model.k", "for a preset"},
        {"\"kind\": \"layers\", \"input\": [1, 3], \"layers\": []",
         "model.input", "not 2 sizes"},
        {IMG "\"layers\": [{\"type\": \"flatten\"}, {\"type\": \"dense\", "
             "\"out\": 1}]",
         "model.layers[1]", "cross_entropy needs k >= 2"},
        {IMG "\"loss\": \"hinge\", \"layers\": []", "model.loss", "hinge"},
    };
    for (size_t q = 0; q < sizeof cases / sizeof cases[0]; q++) {
        char *text = layers_spec(cases[q].model, "");
        pflref_spec *spec = NULL;
        pflref_error err;
        ck_assert_msg(tu_parse(text, &spec, &err) == PFLREF_EINVAL,
                      "case %zu accepted", q);
        ck_assert_msg(strcmp(err.where, cases[q].where) == 0,
                      "case %zu: where %s, expected %s (%s)", q, err.where,
                      cases[q].where, err.message);
        ck_assert_msg(strstr(err.message, cases[q].text) != NULL,
                      "case %zu: message \"%s\" lacks \"%s\"", q,
                      err.message, cases[q].text);
        free(text);
    }
}
END_TEST

/* The program: a bad layer list exits 2 naming the field, writes nothing;
 * FedAvg on a tiny CNN runs and its result echoes the layer list. */
START_TEST(test_cli)
{
    char *dir = tu_tmpdir();
    char *bad = layers_spec(IMG "\"layers\": [{\"type\": \"conv2d\", "
                                "\"out_channels\": 2, \"kernel\": 2}, "
                                "{\"type\": \"dense\", \"out\": 2}]",
                            "");
    tu_cli_refuses(dir, 0, bad, "model.layers[1]");
    free(bad);
    char *good = layers_spec(
        IMG "\"layers\": [{\"type\": \"conv2d\", \"name\": \"conv1\", "
            "\"out_channels\": 2, \"kernel\": 2, \"padding\": 1}, "
            "{\"type\": \"batchnorm2d\", \"name\": \"bn1\"}, {\"type\": "
            "\"relu\"}, {\"type\": \"maxpool2d\", \"kernel\": 2}, {\"type\": "
            "\"flatten\"}, {\"type\": \"dense\", \"name\": \"fc\", \"out\": "
            "2}]",
        "{\"clients\": [0, 1], \"batches\": [[[0, 1], [1, 0]], [[0]]]}");
    char *path = tu_join(dir, "good.json");
    ck_assert_int_eq(tu_write(path, good), 0);
    char *out = NULL, *errout = NULL;
    const int rc = tu_cli_in(dir, "run $D/good.json -o $D/good-result.json",
                             &out, &errout);
    ck_assert_msg(rc == 0, "exit %d: %s", rc, errout ? errout : "");
    char *rpath = tu_join(dir, "good-result.json");
    char *res = tu_read(rpath);
    ck_assert(res != NULL);
    ck_assert_msg(strstr(res, "\"kind\":\"layers\"") != NULL ||
                      strstr(res, "\"kind\": \"layers\"") != NULL,
                  "no layer list in the result");
    ck_assert(strstr(res, "bn1.running_var") != NULL);
    ck_assert(strstr(res, "out_shape") != NULL);
    free(res);
    free(rpath);
    free(out);
    free(errout);
    free(path);
    free(good);
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

/* FedBN and PFLEGO on layer lists.  FedBN (bn local): client i's
 * running statistics are its own, moved from r_μ = 0, r_v = 1 by its
 * batches (pflref_model_bn_update), while the global model's stay at the
 * start (they are never averaged); PFLEGO (personal head): the body is
 * shared, each client's head its own. */
START_TEST(test_algorithms)
{
    static const char *const BN =
        IMG "\"layers\": [{\"type\": \"conv2d\", \"out_channels\": 2, "
            "\"kernel\": 2}, {\"type\": \"batchnorm2d\", \"name\": \"bn1\"}, "
            "{\"type\": \"relu\"}, {\"type\": \"flatten\"}, {\"type\": "
            "\"dense\", \"out\": 2}]";
    static const char *const ROUND =  /* nb >= 2 for FedBN's r_v */
        "{\"clients\": [0, 1], \"batches\": [[[0, 1], [1, 0]], [[0, 0]]]}";
    char *text = layers_spec(BN, ROUND);
    char *alg = strstr(text, "\"fedavg\"");
    memcpy(alg, "\"fedbn\" ", 8);
    pflref_spec *spec = tu_spec(text);
    pflref_run_result *res = tu_run(spec, NULL);
    const pflref_model *m = &spec->problem->model;
    const int rv = pflref_model_block_index(m, "bn1.running_var");
    ck_assert_int_ge(rv, 0);
    const size_t off = m->blocks[rv].offset, P = m->P;
    ck_assert(res->v != NULL);
    ck_assert_msg(res->v[off] != 1.0 && res->v[P + off] != 1.0 &&
                      res->v[off] != res->v[P + off],
                  "FedBN did not keep each client's running statistics");
    ck_assert(res->w[off] == 1.0);
    pflref_run_result_free(res);
    pflref_spec_free(spec);
    free(text);
    /* PFLEGO: full batches, the head personal */
    text = layers_spec(IMG "\"layers\": [{\"type\": \"conv2d\", "
                           "\"out_channels\": 2, \"kernel\": 2}, {\"type\": "
                           "\"relu\"}, {\"type\": \"flatten\"}, {\"type\": "
                           "\"dense\", \"out\": 2}]}, \"split\": "
                           "{\"personal\": [\"head\"]",
                       "{\"clients\": [0, 1], \"batches\": [[[0, 1], [0, "
                       "1]], [[0], [0]]]}");
    alg = strstr(text, "{\"name\": \"fedavg\", \"hyperparameters\": "
                       "{\"eta\": 0.1}}");
    ck_assert(alg != NULL);
    char *full = malloc(strlen(text) + 64);
    snprintf(full, strlen(text) + 64, "%.*s{\"name\": \"pflego\", "
             "\"hyperparameters\": {\"rho\": 0.1, \"pflego.beta\": 0.2}}%s",
             (int)(alg - text), text,
             alg + strlen("{\"name\": \"fedavg\", \"hyperparameters\": "
                          "{\"eta\": 0.1}}"));
    spec = tu_spec(full);
    res = tu_run(spec, NULL);
    m = &spec->problem->model;
    const size_t head = m->blocks[2].offset;  /* 3.weight */
    ck_assert(m->blocks[2].is_head && !m->blocks[1].is_head);
    ck_assert_msg(res->v[head] != res->v[m->P + head],
                  "PFLEGO's heads are not personal");
    ck_assert(res->v[0] == res->w[0] && res->v[m->P] == res->w[0]);
    pflref_run_result_free(res);
    pflref_spec_free(spec);
    free(full);
    free(text);
}
END_TEST

Suite *layers_suite(void)
{
    Suite *s = suite_create("layers");
    TCase *tc = tcase_create("bits");
    tcase_add_loop_test(tc, test_bits_softmax, 0, 2);
    tcase_add_loop_test(tc, test_bits_linear, 0, 4);
    tcase_add_loop_test(tc, test_bits_mlp, 0, 16);
    tcase_add_loop_test(tc, test_bits_mlp_bn, 0, 2);
    suite_add_tcase(s, tc);
    tc = tcase_create("exact");
    tcase_add_test(tc, test_conv_exact);
    tcase_add_loop_test(tc, test_pool_exact, 0, 2);
    tcase_add_test(tc, test_pool_ties);
    tcase_add_test(tc, test_bn2d_running);
    tcase_add_test(tc, test_step_skips_buffers);
    tcase_add_test(tc, test_mca_zero_input_exact);
    suite_add_tcase(s, tc);
    tc = tcase_create("differences");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_grad_fd, 0, N_NETS);
    tcase_add_loop_test(tc, test_hvp_fd, 0, N_NETS);
    suite_add_tcase(s, tc);
    tc = tcase_create("api");
    tcase_add_test(tc, test_split_api);
    tcase_add_test(tc, test_split_names);
    tcase_add_test(tc, test_shape_errors);
    tcase_add_test(tc, test_presets);
    tcase_add_test(tc, test_spec_errors);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_cli);
    tcase_add_test(tc, test_algorithms);
    suite_add_tcase(s, tc);
    return s;
}
