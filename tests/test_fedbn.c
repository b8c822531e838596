/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_fedbn.c: the mlp's batch-normalisation option
 * (ref/models/mlp.c) and FedBN (ref/algorithms/fedbn.c).
 *
 * What is checked, and against what (never the code's own output):
 *   - the BN mlp's gradient against central finite differences of its
 *     training-mode loss, at random points (mt19937, fixed seeds), for
 *     relu / identity × hidden bias × cross_entropy / half_squared, whole
 *     batches and idx batches; the gradient of b1 is 0 (Σ_j ∂F/∂a_j = 0
 *     through the batch mean) and that of the running statistics is 0;
 *   - the worked example A1 of shared/spec notes-fedbn-fedfomo.md §1.6
 *     (ε = 0, exact fractions derived there by hand and by its script):
 *     one FedBN round, the server's shared layers, each client's γ, β,
 *     r_μ, r_v, and the evaluation-mode predictions at x* = (1, 1)
 *     (30 digits in the notes);
 *   - the property of issue 21: FedBN with fedbn.bn = shared equals FedAvg
 *     (weights 1/m) on the same BN model in every entry, the running
 *     statistics included (both move them, bn.running = update), and
 *     under bn.running = frozen both leave them;
 *   - every golden vector of golden/fedbn/ (60-digit independent
 *     generator) reproduced, and the same generator against pflref on
 *     12 random problems to 1e-13 (golden/fedbn/check_random.py);
 *   - every error path: the model option (non-mlp, ε < 0, ρ outside
 *     [0, 1]), fedbn on a model without bn, a batch of one, the running
 *     update without a training pass, the HVP and split API refusing BN,
 *     a given init.w whose running variance is negative.
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

static const char *const VECTORS[] = {
    "golden/fedbn/worked-notes-a1.json",
    "golden/fedbn/worked-ce-two-rounds.json",
    "golden/fedbn/worked-shared-baseline.json",
    "golden/fedbn/worked-samples-biased.json",
    "golden/fedbn/worked-squared-drawn.json",
    "golden/fedbn/worked-momentum-client.json",
    "golden/fedbn/worked-ce-pfllib.json",   /* req: fedbn.preset.pfllib */
};

/* Every FedBN vector reproduces its independent 60-digit expectation. */
START_TEST(test_vectors)
{
    tu_assert_golden(VECTORS[_i]);
}
END_TEST

/* An mlp with bn (ε, ρ given), as pflref_model_add_bn builds it. */
static pflref_model bn_mlp(pflref_loss loss, size_t d, size_t k, size_t h,
                           pflref_activation act, int hidden_bias,
                           double eps, double rho)
{
    pflref_model m = tb_mlp(loss, d, k, h, act, hidden_bias, 1);
    pflref_error err;
    pflref_status st = pflref_model_add_bn(&m, eps, rho, &err);
    ck_assert_msg(st == PFLREF_OK, "add_bn: %s: %s", err.where, err.message);
    return m;
}

/* ------------------------------------------------------------------------
 * The gradient through the batch statistics
 * ------------------------------------------------------------------------ */

/* Variant v (0..7): bit 0 identity, bit 1 hidden bias, bit 2
 * half_squared (else cross-entropy with k = 3). */
START_TEST(test_grad_fd)
{
    const int v = _i;
    const pflref_activation act = (v & 1) ? PFLREF_ACT_IDENTITY
                                          : PFLREF_ACT_RELU;
    const int hb = (v >> 1) & 1, reg = (v >> 2) & 1;
    const size_t d = 3, h = 4, k = reg ? 1 : 3, n = 7, nb = 5;
    const pflref_model m =
        bn_mlp(reg ? PFLREF_LOSS_HALF_SQUARED : PFLREF_LOSS_CROSS_ENTROPY, d,
               k, h, act, hb, 1e-3, 0.1);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 1000u + (unsigned long)v);
    double X[21], y[7], *w = malloc(m.P * sizeof *w);
    double *g = malloc(m.P * sizeof *g), *wp = malloc(m.P * sizeof *wp);
    for (size_t q = 0; q < n * d; q++)
        X[q] = 2.0 * gsl_rng_uniform(r) - 1.0;
    for (size_t j = 0; j < n; j++)
        y[j] = reg ? 2.0 * gsl_rng_uniform(r) - 1.0
                   : (double)gsl_rng_uniform_int(r, k);
    for (size_t p = 0; p < m.P; p++)
        w[p] = 1.5 * gsl_rng_uniform(r) - 0.75;
    /* γ away from 0; r_v positive (unused in training mode) */
    const int gi = pflref_model_block_index(&m, "bn_gamma");
    const int vi = pflref_model_block_index(&m, "bn_running_var");
    for (size_t q = 0; q < h; q++) {
        w[m.blocks[gi].offset + q] += 1.25;
        w[m.blocks[vi].offset + q] = 0.5 + (double)q;
    }
    pflref_data D = {.n = n, .X = X, .y = y};
    const size_t idx[5] = {6, 1, 3, 1, 4};
    pflref_model_workspace *ws = pflref_model_workspace_alloc(&m, n);
    const size_t *id = (v & 1) ? idx : NULL;
    const size_t nbat = (v & 1) ? nb : n;
    ck_assert_int_eq(pflref_model_grad(&m, w, &D, id, nbat, ws, g, NULL),
                     PFLREF_OK);
    const double step = 1e-6;
    for (size_t p = 0; p < m.P; p++) {
        double fp, fm;
        memcpy(wp, w, m.P * sizeof *wp);
        wp[p] = w[p] + step;
        ck_assert_int_eq(pflref_model_loss(&m, wp, &D, id, nbat, ws, &fp),
                         PFLREF_OK);
        wp[p] = w[p] - step;
        ck_assert_int_eq(pflref_model_loss(&m, wp, &D, id, nbat, ws, &fm),
                         PFLREF_OK);
        const double fd = (fp - fm) / (2.0 * step);
        ck_assert_msg(fabs(fd - g[p]) <= 1e-6 * (1.0 + fabs(fd)),
                      "variant %d: dF/dw[%zu] = %.12g, finite difference "
                      "%.12g", v, p, g[p], fd);
    }
    /* the running statistics are buffers: no gradient; b1 gets none
     * through the batch mean (Σ_j ∂F/∂a_j = 0) */
    for (size_t q = 0; q < h; q++) {
        ck_assert(g[m.blocks[vi].offset + q] == 0.0);
        ck_assert(g[m.blocks[vi - 1].offset + q] == 0.0);
        if (hb)
            ck_assert_msg(fabs(g[m.blocks[1].offset + q]) < 1e-14,
                          "variant %d: dF/db1[%zu] = %g, not 0", v, q,
                          g[m.blocks[1].offset + q]);
    }
    pflref_model_workspace_free(ws);
    free(w);
    free(g);
    free(wp);
    gsl_rng_free(r);
}
END_TEST

/* The Hessian-vector product through the training-mode BN layer (batch
 * statistics included, mlp.c bn_hvp) against the central difference of
 * the exact gradient, (g(w + εv) − g(w − εv)) / (2ε), on the variants of
 * test_grad_fd; uᵀ(Hv) = vᵀ(Hu); the buffers' entries of Hv are 0, a
 * direction along the buffers alone gives Hv = 0, and w (the running
 * statistics among it) is not written. */
START_TEST(test_hvp_fd)
{
    const int v = _i;
    const pflref_activation act = (v & 1) ? PFLREF_ACT_IDENTITY
                                          : PFLREF_ACT_RELU;
    const int hb = (v >> 1) & 1, reg = (v >> 2) & 1;
    const size_t d = 3, h = 4, k = reg ? 1 : 3, n = 7, nb = 5;
    const pflref_model m =
        bn_mlp(reg ? PFLREF_LOSS_HALF_SQUARED : PFLREF_LOSS_CROSS_ENTROPY, d,
               k, h, act, hb, 1e-3, 0.1);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 2000u + (unsigned long)v);
    const size_t P = m.P;
    double X[21], y[7], *w = malloc(P * sizeof *w), *w0 = malloc(P * sizeof *w0);
    double *dir = malloc(P * sizeof *dir), *u = malloc(P * sizeof *u);
    double *Hv = malloc(P * sizeof *Hv), *Hu = malloc(P * sizeof *Hu);
    double *gp = malloc(P * sizeof *gp), *gm = malloc(P * sizeof *gm);
    for (size_t q = 0; q < n * d; q++)
        X[q] = 2.0 * gsl_rng_uniform(r) - 1.0;
    for (size_t j = 0; j < n; j++)
        y[j] = reg ? 2.0 * gsl_rng_uniform(r) - 1.0
                   : (double)gsl_rng_uniform_int(r, k);
    for (size_t p = 0; p < P; p++) {
        w[p] = 1.5 * gsl_rng_uniform(r) - 0.75;
        dir[p] = 2.0 * gsl_rng_uniform(r) - 1.0;
        u[p] = 2.0 * gsl_rng_uniform(r) - 1.0;
    }
    const int gi = pflref_model_block_index(&m, "bn_gamma");
    const int mi = pflref_model_block_index(&m, "bn_running_mean");
    const int vi = pflref_model_block_index(&m, "bn_running_var");
    for (size_t q = 0; q < h; q++) {
        w[m.blocks[gi].offset + q] += 1.25;
        w[m.blocks[vi].offset + q] = 0.5 + (double)q;
    }
    memcpy(w0, w, P * sizeof *w);
    pflref_data D = {.n = n, .X = X, .y = y};
    const size_t idx[5] = {6, 1, 3, 1, 4};
    pflref_model_workspace *ws = pflref_model_workspace_alloc(&m, n);
    const size_t *id = (v & 1) ? idx : NULL;
    const size_t nbat = (v & 1) ? nb : n;
    ck_assert_int_eq(pflref_model_hvp(&m, w, &D, id, nbat, dir, ws, Hv),
                     PFLREF_OK);
    ck_assert_int_eq(pflref_model_hvp(&m, w, &D, id, nbat, u, ws, Hu),
                     PFLREF_OK);
    ck_assert(memcmp(w, w0, P * sizeof *w) == 0);   /* buffers untouched */
    const double eps = 1e-5;
    double *wp = malloc(P * sizeof *wp);
    for (size_t p = 0; p < P; p++)
        wp[p] = w[p] + eps * dir[p];
    ck_assert_int_eq(pflref_model_grad(&m, wp, &D, id, nbat, ws, gp, NULL),
                     PFLREF_OK);
    for (size_t p = 0; p < P; p++)
        wp[p] = w[p] - eps * dir[p];
    ck_assert_int_eq(pflref_model_grad(&m, wp, &D, id, nbat, ws, gm, NULL),
                     PFLREF_OK);
    double uHv = 0.0, vHu = 0.0, scale = 0.0;
    for (size_t p = 0; p < P; p++) {
        const double fd = (gp[p] - gm[p]) / (2.0 * eps);
        ck_assert_msg(fabs(fd - Hv[p]) <= 1e-6 * (1.0 + fabs(Hv[p])),
                      "variant %d: (Hv)[%zu] = %.17g, central difference "
                      "of the gradient %.17g", v, p, Hv[p], fd);
        uHv += u[p] * Hv[p];
        vHu += dir[p] * Hu[p];
        scale += fabs(u[p] * Hv[p]) + fabs(dir[p] * Hu[p]);
    }
    ck_assert_msg(fabs(uHv - vHu) <= 1e-13 * (1.0 + scale),
                  "variant %d: u'Hv = %.17g, v'Hu = %.17g", v, uHv, vHu);
    for (size_t q = 0; q < h; q++) {
        ck_assert(Hv[m.blocks[mi].offset + q] == 0.0);
        ck_assert(Hv[m.blocks[vi].offset + q] == 0.0);
    }
    /* a direction along the running statistics alone: F does not depend
     * on them in training mode, so Hv = 0 exactly */
    memset(dir, 0, P * sizeof *dir);
    for (size_t q = 0; q < h; q++) {
        dir[m.blocks[mi].offset + q] = 1.0;
        dir[m.blocks[vi].offset + q] = -2.0;
    }
    ck_assert_int_eq(pflref_model_hvp(&m, w, &D, id, nbat, dir, ws, Hv),
                     PFLREF_OK);
    for (size_t p = 0; p < P; p++)
        ck_assert_msg(Hv[p] == 0.0, "variant %d: buffer direction gives "
                      "(Hv)[%zu] = %g", v, p, Hv[p]);
    pflref_model_workspace_free(ws);
    free(w);
    free(w0);
    free(wp);
    free(dir);
    free(u);
    free(Hv);
    free(Hu);
    free(gp);
    free(gm);
    gsl_rng_free(r);
}
END_TEST

/* ------------------------------------------------------------------------
 * The worked example A1 (notes §1.6)
 * ------------------------------------------------------------------------ */

/* K = 2, d = h = 2, scalar output, ½(ŷ − y)², one full batch of 4, η =
 * 1/10, ρ = 1/10, ε = 0; client 2's inputs are client 1's mapped by
 * x ↦ 3x + 1 (a feature shift). */
static tb_case *a1_case(void)
{
    const pflref_model m = bn_mlp(PFLREF_LOSS_HALF_SQUARED, 2, 1, 2,
                                  PFLREF_ACT_RELU, 1, 0.0, 0.1);
    tb_case *c = tb_new(&m, 2);
    const double X1[8] = {0, 0, 2, 0, 0, 2, 2, 2};
    const double X2[8] = {1, 1, 7, 1, 1, 7, 7, 7};
    const double xs[2] = {1, 1}, ys[1] = {0};
    tb_train(c, 0, 4, X1, (const double[]){1, 0, 2, 1});
    tb_train(c, 1, 4, X2, (const double[]){0, 1, -1, 2});
    tb_test(c, 0, 1, xs, ys);
    tb_test(c, 1, 1, xs, ys);
    /* W1, b1, γ, β, r_μ, r_v, w2, b2 */
    tb_w0(c, (const double[]){0.6, 0.8, 0.8, -0.6, 0.5, -0.5, 1, 1, 0, 0, 0,
                              0, 1, 1, 1, -1, 0.5});
    c->hyper.eta = 0.1;
    tb_round(c, "0 1", "0 1 2 3", "0 1 2 3");
    return c;
}

static void assert_vec(const double *x, const double *ref, size_t n,
                       double tol, const char *what)
{
    for (size_t q = 0; q < n; q++)
        ck_assert_msg(fabs(x[q] - ref[q]) <= tol * (1.0 + fabs(ref[q])),
                      "%s[%zu] = %.17g, expected %.17g", what, q, x[q],
                      ref[q]);
}

START_TEST(test_worked_a1)
{
    /* req: fedbn.alg1.l2, fedbn.alg1.l4, fedbn.alg1.l5 */
    tb_case *c = a1_case();
    pflref_run_result *res = tb_run(c, "fedbn", NULL);
    /* server: W1 = [[378/625, 1991/2500]; [2021/2500, −368/625]],
     * b1 = (1/2, −1/2), w2 = (124/125, −119/125), b2 = 21/40 */
    const double W[6] = {378.0 / 625, 1991.0 / 2500, 2021.0 / 2500,
                         -368.0 / 625, 0.5, -0.5};
    const double head[3] = {124.0 / 125, -119.0 / 125, 21.0 / 40};
    assert_vec(res->w, W, 6, 1e-15, "w (W1, b1)");
    assert_vec(res->w + 14, head, 3, 1e-15, "w (w2, b2)");
    /* the server's BN entries are w⁰'s: never touched */
    assert_vec(res->w + 6, (const double[]){1, 1, 0, 0, 0, 0, 1, 1}, 8, 0.0,
               "w (BN)");
    /* client 1: γ = (491/500, 243/250), β = (3/200, −1/200),
     * r_μ = (19/100, −3/100), r_v = (31/30, 31/30);
     * client 2: γ = (501/500, 233/250), β = (−7/200, −11/200),
     * r_μ = (61/100, 3/100), r_v = (21/10, 21/10) */
    const double bn1[8] = {491.0 / 500, 243.0 / 250, 3.0 / 200, -1.0 / 200,
                           19.0 / 100, -3.0 / 100, 31.0 / 30, 31.0 / 30};
    const double bn2[8] = {501.0 / 500, 233.0 / 250, -7.0 / 200,
                           -11.0 / 200, 61.0 / 100, 3.0 / 100, 2.1, 2.1};
    assert_vec(res->v + 6, bn1, 8, 1e-15, "v_1 (BN)");
    assert_vec(res->v + 17 + 6, bn2, 8, 1e-15, "v_2 (BN)");
    /* each client's shared layers are the server's */
    assert_vec(res->v, res->w, 6, 0.0, "v_1 (W1, b1)");
    assert_vec(res->v + 17 + 14, head, 3, 1e-15, "v_2 (w2, b2)");
    /* evaluation mode on each client's own statistics at x* = (1, 1),
     * y* = 0: test loss ½ ŷ*², ŷ*_1 = 2.17972844347346573294756306932,
     * ŷ*_2 = 1.37593231811910711385799255982 (notes, 30 digits) */
    const double y1 = 2.17972844347346573294756306932;
    const double y2 = 1.37593231811910711385799255982;
    ck_assert_int_eq((int)res->n_eval, 1);
    ck_assert_str_eq(res->eval[0].label, "personalized");
    assert_vec(&res->eval[0].test[0].loss, (const double[]){0.5 * y1 * y1},
               1, 1e-14, "test loss, client 1");
    assert_vec(&res->eval[0].test[1].loss, (const double[]){0.5 * y2 * y2},
               1, 1e-14, "test loss, client 2");
    pflref_run_result_free(res);
    tb_free(c);
}
END_TEST

/* With BN averaged (fedbn.bn = shared) FedBN is FedAvg (1/m) on the BN
 * model: every entry agrees bit for bit, the running statistics too (both
 * move them after each gradient pass, bn.running = update, and average
 * them); under bn.running = frozen both leave them at w⁰'s. */
START_TEST(test_shared_is_fedavg)
{
    /* req: fedbn.alg1.l4 */
    const pflref_model m = bn_mlp(PFLREF_LOSS_CROSS_ENTROPY, 3, 3, 4,
                                  PFLREF_ACT_RELU, 1, 1e-5, 0.1);
    tb_case *c = tb_new(&m, 3);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 77u);
    for (size_t i = 0; i < 3; i++) {
        double X[18], y[6];
        for (size_t q = 0; q < 18; q++)
            X[q] = 4.0 * gsl_rng_uniform(r) - 2.0 + (double)i;
        for (size_t j = 0; j < 6; j++)
            y[j] = (double)gsl_rng_uniform_int(r, 3);
        tb_train(c, i, 6, X, y);
    }
    double *w0 = malloc(m.P * sizeof *w0);
    for (size_t p = 0; p < m.P; p++)
        w0[p] = gsl_rng_uniform(r) - 0.5;
    pflref_model_bn_reset(&m, w0);
    tb_w0(c, w0);
    c->hyper.eta = 0.3;
    c->hyper.fedavg.weights = PFLREF_FEDAVG_WEIGHTS_UNIFORM;
    c->hyper.fedbn.bn = PFLREF_FEDBN_BN_SHARED;
    tb_round(c, "0 1 2", "0 1 2 | 3 4 5", "0 2 4 | 1 3 5", "5 4 3 2 1 0");
    tb_round(c, "0 2", "1 2 3 4", "0 5 | 2 3");
    pflref_run_result *bn = tb_run(c, "fedbn", NULL);
    pflref_run_result *avg = tb_run(c, "fedavg", NULL);
    for (size_t b = 0; b < m.nblocks; b++) {
        const pflref_block *B = &m.blocks[b];
        for (size_t p = B->offset; p < B->offset + B->size; p++)
            ck_assert_msg(bn->w[p] == avg->w[p],
                          "%s entry %zu: fedbn (shared) %.17g, fedavg "
                          "%.17g", B->name, p, bn->w[p], avg->w[p]);
        if (B->is_buffer)   /* they moved: the comparison is not empty */
            ck_assert(bn->w[B->offset] != w0[B->offset]);
    }
    c->hyper.bn.running = PFLREF_BN_RUNNING_FROZEN;
    pflref_run_result *bn_f = tb_run(c, "fedbn", NULL);
    pflref_run_result *avg_f = tb_run(c, "fedavg", NULL);
    ck_assert(memcmp(bn_f->w, avg_f->w, m.P * sizeof *w0) == 0);
    for (size_t b = 0; b < m.nblocks; b++)
        if (m.blocks[b].is_buffer)
            ck_assert(memcmp(bn_f->w + m.blocks[b].offset,
                             w0 + m.blocks[b].offset,
                             m.blocks[b].size * sizeof *w0) == 0);
    pflref_run_result_free(bn_f);
    pflref_run_result_free(avg_f);
    /* and every client's model is the server's */
    for (size_t i = 0; i < 3; i++)
        ck_assert(memcmp(bn->v + i * m.P, bn->w, m.P * sizeof *w0) == 0);
    pflref_run_result_free(bn);
    pflref_run_result_free(avg);
    free(w0);
    gsl_rng_free(r);
    tb_free(c);
}
END_TEST

/* ------------------------------------------------------------------------
 * Error paths
 * ------------------------------------------------------------------------ */

START_TEST(test_model_option_errors)
{
    pflref_model m = tb_model(PFLREF_MODEL_SOFTMAX, PFLREF_LOSS_CROSS_ENTROPY,
                              2, 3, 0, 1);
    pflref_error err;
    ck_assert_int_eq(pflref_model_add_bn(&m, 1e-5, 0.1, &err), PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "m");
    m = tb_mlp(PFLREF_LOSS_CROSS_ENTROPY, 2, 3, 2, PFLREF_ACT_RELU, 1, 1);
    const size_t P = m.P;
    ck_assert_int_eq(pflref_model_add_bn(&m, -1e-5, 0.1, &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "bn_eps");
    ck_assert_int_eq(pflref_model_add_bn(&m, 1e-5, 1.5, &err), PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "bn_momentum");
    ck_assert_int_eq(pflref_model_add_bn(&m, NAN, 0.1, &err), PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "bn_eps");
    ck_assert_uint_eq(m.P, P);  /* untouched on failure */
    ck_assert_int_eq(pflref_model_add_bn(&m, 1e-5, 0.1, &err), PFLREF_OK);
    /* W1 (2×2), b1, γ, β, r_μ, r_v (2 each), W2 (3×2), b2 (3) */
    ck_assert_uint_eq(m.P, P + 8);
    ck_assert_uint_eq(m.nblocks, 8);
    ck_assert_str_eq(m.blocks[2].name, "bn_gamma");
    ck_assert_str_eq(m.blocks[5].name, "bn_running_var");
    ck_assert_int_eq(m.blocks[4].is_buffer, 1);
    ck_assert_int_eq(m.blocks[3].is_buffer, 0);
    ck_assert_uint_eq(m.blocks[6].offset, 14);
    ck_assert_int_eq(pflref_model_add_bn(&m, 1e-5, 0.1, &err), PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "m");
}
END_TEST

START_TEST(test_refusals)
{
    const pflref_model m = bn_mlp(PFLREF_LOSS_HALF_SQUARED, 1, 1, 2,
                                  PFLREF_ACT_RELU, 1, 1e-5, 0.1);
    double X[3] = {0.25, -1.5, 2.0}, y[3] = {1, 2, 3}, A[6], Phi[6];
    double *w = calloc(m.P, sizeof *w), *g = calloc(m.P, sizeof *g);
    pflref_model_bn_reset(&m, w);
    pflref_data D = {.n = 3, .X = X, .y = y};
    pflref_model_workspace *ws = pflref_model_workspace_alloc(&m, 3);
    pflref_error err;
    /* no training pass yet: no batch statistics */
    ck_assert_int_eq(pflref_model_bn_update(&m, ws, 0, w, &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "ws");
    /* the HVP goes through the batch statistics (test_hvp_fd) */
    ck_assert_int_eq(pflref_model_hvp(&m, w, &D, NULL, 0, w, ws, g),
                     PFLREF_OK);
    ck_assert_int_eq(pflref_model_features(&m, w, &D, NULL, 0, ws, A, Phi),
                     PFLREF_EINVAL);
    /* a batch of one: the unbiased variance is refused, the biased taken */
    const size_t one[1] = {2};
    ck_assert_int_eq(pflref_model_grad(&m, w, &D, one, 1, ws, g, NULL),
                     PFLREF_OK);
    ck_assert_int_eq(pflref_model_bn_update(&m, ws, 0, w, &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "nb");
    ck_assert_int_eq(pflref_model_bn_update(&m, ws, 1, w, &err), PFLREF_OK);
    /* r_μ = 0.9·0 + 0.1·a, r_v = 0.9·1 + 0.1·0 for the single sample */
    ck_assert(w[m.blocks[5].offset] == 0.9);
    pflref_model_workspace_free(ws);
    free(w);
    free(g);
}
END_TEST

START_TEST(test_fedbn_errors)
{
    /* fedbn on an mlp without bn */
    const pflref_model plain = tb_mlp(PFLREF_LOSS_HALF_SQUARED, 1, 1, 2,
                                      PFLREF_ACT_RELU, 1, 1);
    tb_case *c = tb_new(&plain, 1);
    tb_train(c, 0, 2, (const double[]){1, 2}, (const double[]){0, 1});
    c->hyper.eta = 0.1;
    tb_round(c, "0", "0 1");
    pflref_error err;
    tb_run_error(c, "fedbn", PFLREF_EINVAL, &err);
    ck_assert_str_eq(err.where, "model.bn");
    tb_free(c);
    /* a batch of one under the unbiased running variance */
    const pflref_model m = bn_mlp(PFLREF_LOSS_HALF_SQUARED, 1, 1, 2,
                                  PFLREF_ACT_RELU, 1, 1e-5, 0.1);
    c = tb_new(&m, 1);
    tb_train(c, 0, 2, (const double[]){1, 2}, (const double[]){0, 1});
    c->hyper.eta = 0.1;
    tb_round(c, "0", "0 1 | 1");
    tb_run_error(c, "fedbn", PFLREF_EINVAL, &err);
    ck_assert_str_eq(err.where, "schedule.rounds[0].batches[0][1]");
    ck_assert_msg(strstr(err.message, "nb >= 2") != NULL, "%s", err.message);
    tb_free(c);
}
END_TEST

/* Through the spec: the model option's fields, named. */
START_TEST(test_spec_errors)
{
    static const struct {
        const char *model, *where;
    } cases[] = {
        {"\"kind\": \"softmax\", \"d\": 1, \"k\": 2, \"bn\": true",
         "model.bn"},
        {"\"kind\": \"mlp\", \"d\": 1, \"k\": 2, \"h\": 2, \"bn_eps\": 0.1",
         "model.bn_eps"},
        {"\"kind\": \"mlp\", \"d\": 1, \"k\": 2, \"h\": 2, \"bn\": true, "
         "\"bn_eps\": -1", "model.bn_eps"},
        {"\"kind\": \"mlp\", \"d\": 1, \"k\": 2, \"h\": 2, \"bn\": true, "
         "\"bn_momentum\": 2", "model.bn_momentum"},
        {"\"kind\": \"mlp\", \"d\": 1, \"k\": 2, \"h\": 2, \"bn\": 1",
         "model.bn"},
        /* W1 (2), b1 (2), γ, β, r_μ, r_v (2 each), W2 (4), b2 (2): a
         * negative running variance at init.w[11] */
        {"\"kind\": \"mlp\", \"d\": 1, \"k\": 2, \"h\": 2, \"bn\": true}, "
         "\"init\": {\"kind\": \"given\", \"w\": [1, 2, 0, 0, 1, 1, 0, 0, "
         "0, 0, 1, -1.5, 1, 1, 1, 1, 0, 0]", "init.w"},
    };
    for (size_t q = 0; q < sizeof cases / sizeof cases[0]; q++) {
        char text[1024];
        snprintf(text, sizeof text,
                 "{\"format\": \"pflref-spec/1\", \"model\": {%s}, "
                 "\"problem\": {\"clients\": [{\"X\": [[1], [2]], "
                 "\"y\": [0, 1]}]}, \"algorithm\": {\"name\": \"fedavg\", "
                 "\"hyperparameters\": {\"eta\": 0.1}}, \"schedule\": "
                 "{\"kind\": \"given\", \"rounds\": []}}",
                 cases[q].model);
        pflref_spec *spec = NULL;
        pflref_error err;
        ck_assert_int_eq(tu_parse(text, &spec, &err), PFLREF_EINVAL);
        ck_assert_msg(strcmp(err.where, cases[q].where) == 0,
                      "case %zu: where %s, expected %s (%s)", q, err.where,
                      cases[q].where, err.message);
    }
}
END_TEST

/* The program on bad FedBN specs: exit 2, the field named on standard
 * error, no result file (docs/bad-inputs.md, "Batch normalisation and
 * FedBN"). */
START_TEST(test_cli_exit)
{
    static const struct {
        const char *model, *alg, *where;
    } cases[] = {
        {"\"kind\": \"mlp\", \"d\": 1, \"k\": 2, \"h\": 2, \"bn\": true, "
         "\"bn_eps\": -1", "fedbn", "model.bn_eps"},
        {"\"kind\": \"mlp\", \"d\": 1, \"k\": 2, \"h\": 2", "fedbn",
         "model.bn"},
        {"\"kind\": \"mlp\", \"d\": 1, \"k\": 2, \"h\": 2, \"bn\": true",
         "fedbn", "schedule.rounds[0].batches[0][0]"},
    };
    char *dir = tu_tmpdir();
    for (size_t q = 0; q < sizeof cases / sizeof cases[0]; q++) {
        char spec[1024];
        snprintf(spec, sizeof spec,
                 "{\"format\": \"pflref-spec/1\", \"model\": {%s}, "
                 "\"problem\": {\"clients\": [{\"X\": [[1], [2]], "
                 "\"y\": [0, 1]}]}, \"algorithm\": {\"name\": \"%s\", "
                 "\"hyperparameters\": {\"eta\": 0.1}}, \"schedule\": "
                 "{\"kind\": \"given\", \"rounds\": [{\"clients\": [0], "
                 "\"batches\": [[[1]]]}]}}",
                 cases[q].model, cases[q].alg);
        tu_cli_refuses(dir, q, spec, cases[q].where);
    }
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

/* Issue 21: the fresh independent generator (golden/pflref_exact_fedbn.py,
 * 60 digits) agrees with pflref to 1e-13 on random FedBN problems, every
 * switch drawn (golden/fedbn/check_random.py runs PFLREF_CLI). */
START_TEST(test_random_problems)
{
    char *script = tu_repo_path("golden/fedbn/check_random.py");
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s 12 2021 >/dev/null", script);
    const int rc = system(cmd);
    ck_assert_msg(rc == 0, "%s: the 60-digit replay and pflref differ by more "
                  "than 1e-13 on a random problem (exit %d; run it to see "
                  "which)", script, rc);
    free(script);
}
END_TEST

/* The preset pfllib (PFLlib's clientbn.py / serverbn.py): n_k / Σ n_j
 * weights, BN local, the running variance unbiased as torch's. */
START_TEST(test_preset_pfllib)
{
    /* req: fedbn.preset.pfllib */
    pflref_hyper h;
    pflref_hyper_defaults(&h);
    pflref_error err;
    ck_assert_int_eq(pflref_preset_apply(&h, "fedbn", "pfllib",
                                         "algorithm.preset", &err),
                     PFLREF_OK);
    ck_assert_int_eq(h.fedbn.weights, PFLREF_FEDBN_WEIGHTS_SAMPLES);
    ck_assert_int_eq(h.fedbn.bn, PFLREF_FEDBN_BN_LOCAL);
}
END_TEST

Suite *fedbn_suite(void)
{
    Suite *s = suite_create("fedbn");
    TCase *tc = tcase_create("core");
    tcase_add_loop_test(tc, test_vectors, 0,
                        (int)(sizeof VECTORS / sizeof VECTORS[0]));
    tcase_add_loop_test(tc, test_grad_fd, 0, 8);
    tcase_add_loop_test(tc, test_hvp_fd, 0, 8);
    tcase_add_test(tc, test_worked_a1);
    tcase_add_test(tc, test_shared_is_fedavg);
    tcase_add_test(tc, test_model_option_errors);
    tcase_add_test(tc, test_refusals);
    tcase_add_test(tc, test_fedbn_errors);
    tcase_add_test(tc, test_spec_errors);
    tcase_add_test(tc, test_cli_exit);
    tcase_add_test(tc, test_random_problems);
    tcase_add_test(tc, test_preset_pfllib);
    suite_add_tcase(s, tc);
    return s;
}
