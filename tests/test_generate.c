/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_generate.c: the problem generators "tilt" and "dirichlet"
 * (ref/sampling/generate.c, pflref/problem.h).
 *
 * Three kinds of evidence:
 *   - an independent replay of the draw order documented in problem.h,
 *     written here with GSL directly: the generated X must equal the
 *     replayed draws bit for bit, and y the replayed X w_k;
 *   - structure recovered from the data alone (least squares recovers
 *     w_k, whose differences show the ±tilt offsets; class-conditional
 *     feature means show the shift), with tolerances derived in comments;
 *   - every validation error, provoked on purpose, with its `where`.
 */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include "pflref/problem.h"
#include "suites.h"

/* ---------------------------------------------------------------- helpers */

static pflref_model linear_model(size_t d, int bias)
{
    pflref_model m;
    pflref_error err;
    pflref_status st = pflref_model_init(&m, PFLREF_MODEL_LINEAR,
                                         PFLREF_LOSS_SQUARED, d, 1, 0, bias,
                                         &err);
    ck_assert_msg(st == PFLREF_OK, "linear model init: %s", err.message);
    return m;
}

static pflref_model softmax_model(size_t d, size_t k)
{
    pflref_model m;
    pflref_error err;
    pflref_status st = pflref_model_init(&m, PFLREF_MODEL_SOFTMAX,
                                         PFLREF_LOSS_CROSS_ENTROPY, d, k, 0,
                                         1, &err);
    ck_assert_msg(st == PFLREF_OK, "softmax model init: %s", err.message);
    return m;
}

/* The seed 001 network: 32 → 64 → 10. */
static pflref_model mlp_model(void)
{
    pflref_model m;
    pflref_error err;
    pflref_status st = pflref_model_init(&m, PFLREF_MODEL_MLP,
                                         PFLREF_LOSS_CROSS_ENTROPY, 32, 10,
                                         64, 1, &err);
    ck_assert_msg(st == PFLREF_OK, "mlp model init: %s", err.message);
    return m;
}

/* The defaults of problem.h (seed 000, Code 14.7.1). */
static pflref_gen_tilt tilt_defaults(void)
{
    pflref_gen_tilt g = {6, 14, 400, 2.0, 1.5, 1.0, 7};
    return g;
}

/* The defaults of problem.h (seed 001, compare_strategies). */
static pflref_gen_dirichlet dirichlet_defaults(void)
{
    pflref_gen_dirichlet g = {30, 0.1, 50, 200, 50, 2.0, 42};
    return g;
}

static pflref_problem *tilt_ok(const pflref_gen_tilt *g, const pflref_model *m)
{
    pflref_problem *p = NULL;
    pflref_error err;
    pflref_error_clear(&err);
    pflref_status st = pflref_generate_tilt(g, m, &p, &err);
    ck_assert_msg(st == PFLREF_OK && p != NULL, "generate_tilt: %s at '%s'",
                  err.message, err.where);
    return p;
}

static pflref_problem *dirichlet_ok(const pflref_gen_dirichlet *g,
                                    const pflref_model *m)
{
    pflref_problem *p = NULL;
    pflref_error err;
    pflref_error_clear(&err);
    pflref_status st = pflref_generate_dirichlet(g, m, &p, &err);
    ck_assert_msg(st == PFLREF_OK && p != NULL,
                  "generate_dirichlet: %s at '%s'", err.message, err.where);
    return p;
}

/* 1 when both data sets hold the same bytes. */
static int data_equal(const pflref_data *A, const pflref_data *B, size_t d)
{
    if (A->n != B->n)
        return 0;
    if (A->n == 0)
        return 1;
    return memcmp(A->X, B->X, A->n * d * sizeof(double)) == 0 &&
           memcmp(A->y, B->y, A->n * sizeof(double)) == 0;
}

static int problems_equal(const pflref_problem *a, const pflref_problem *b)
{
    if (a->N != b->N)
        return 0;
    for (size_t i = 0; i < a->N; i++)
        if (!data_equal(&a->clients[i].train, &b->clients[i].train,
                        a->model.d) ||
            !data_equal(&a->clients[i].test, &b->clients[i].test, a->model.d))
            return 0;
    return 1;
}

/* Least-squares fit of w (d) to D (n ≥ d) by Householder QR (GSL). */
static void least_squares(const pflref_data *D, size_t d, double *w)
{
    gsl_matrix *A = gsl_matrix_alloc(D->n, d);
    gsl_vector *tau = gsl_vector_alloc(d);
    gsl_vector *x = gsl_vector_alloc(d);
    gsl_vector *res = gsl_vector_alloc(D->n);
    ck_assert_msg(A && tau && x && res, "least squares: out of memory");
    memcpy(A->data, D->X, D->n * d * sizeof(double));  /* tda = d */
    gsl_vector_const_view b = gsl_vector_const_view_array(D->y, D->n);
    gsl_linalg_QR_decomp(A, tau);
    gsl_linalg_QR_lssolve(A, tau, &b.vector, x, res);
    for (size_t j = 0; j < d; j++)
        w[j] = gsl_vector_get(x, j);
    gsl_vector_free(res);
    gsl_vector_free(x);
    gsl_vector_free(tau);
    gsl_matrix_free(A);
}

/* ------------------------------------------------------------------ tilt */

/* Shapes with the seed 000 defaults: K = 6 clients, 14 × 12 train,
 * 400 × 12 test, and the result passes pflref_problem_validate. */
START_TEST(test_tilt_shapes)
{
    pflref_model m = linear_model(12, 0);
    pflref_gen_tilt g = tilt_defaults();
    pflref_problem *p = tilt_ok(&g, &m);
    ck_assert_msg(p->N == 6, "N = %zu, expected 6", p->N);
    ck_assert_msg(p->model.kind == PFLREF_MODEL_LINEAR && p->model.d == 12,
                  "the problem's model is not the one given");
    for (size_t k = 0; k < 6; k++) {
        const pflref_client *c = &p->clients[k];
        ck_assert_msg(c->train.n == 14 && c->test.n == 400,
                      "client %zu: train.n = %zu (14), test.n = %zu (400)", k,
                      c->train.n, c->test.n);
        ck_assert_msg(c->train.X && c->train.y && c->test.X && c->test.y,
                      "client %zu: missing arrays", k);
    }
    pflref_error err;
    ck_assert_msg(pflref_problem_validate(p, &err) == PFLREF_OK,
                  "generated problem does not validate: %s at '%s'",
                  err.message, err.where);
    ck_assert_msg(pflref_problem_has_test(p), "has_test is 0");
    pflref_problem_free(p);

    /* n_test = 0: no client has test data */
    g.n_test = 0;
    p = tilt_ok(&g, &m);
    for (size_t k = 0; k < 6; k++)
        ck_assert_msg(p->clients[k].test.n == 0 &&
                          p->clients[k].test.X == NULL,
                      "n_test = 0: client %zu has test data", k);
    ck_assert_msg(pflref_problem_validate(p, &err) == PFLREF_OK,
                  "n_test = 0 problem does not validate: %s", err.message);
    pflref_problem_free(p);
}
END_TEST

/* Same seed → identical bytes; another seed → other data. */
START_TEST(test_tilt_reproducible)
{
    pflref_model m = linear_model(12, 0);
    pflref_gen_tilt g = tilt_defaults();
    pflref_problem *a = tilt_ok(&g, &m);
    pflref_problem *b = tilt_ok(&g, &m);
    ck_assert_msg(problems_equal(a, b), "seed 7 twice: the bytes differ");
    g.seed = 8;
    pflref_problem *c = tilt_ok(&g, &m);
    for (size_t k = 0; k < 6; k++)
        ck_assert_msg(!data_equal(&a->clients[k].train, &c->clients[k].train,
                                  12),
                      "seeds 7 and 8 give the same train data for client %zu",
                      k);
    pflref_problem_free(a);
    pflref_problem_free(b);
    pflref_problem_free(c);
}
END_TEST

/* |y − x·w| ≤ γ_d Σ_j |x_j w_j| with γ_d = d u / (1 − d u): the classical
 * bound for a dot product of d terms summed in any order (Higham, Accuracy
 * and Stability of Numerical Algorithms, §3.1). */
static double dot_bound(const double *x, const double *w, size_t d)
{
    const double u = DBL_EPSILON / 2;
    double s = 0.0;
    for (size_t j = 0; j < d; j++)
        s += fabs(x[j] * w[j]);
    return (double)d * u / (1.0 - (double)d * u) * s * (1.0 + 4 * u);
}

/* Replay the documented draw order of problem.h with GSL here:
 *   common_j = common_sd · z;  per client: X train, then n_train noises;
 *   per client: X test, then n_test noises;  w_k = common ± tilt e_{k mod d}.
 * X must match the replayed draws bit for bit.  With noise_sd = 0 the
 * noises are still drawn (the test block, drawn after them, proves it) and
 * y = X w_k within the order-free dot-product bound.  With noise_sd ≠ 0,
 * y = (Σ_j x_j w_j, summed j = 0..d−1) + noise_sd · z bit for bit: the
 * summation order and the scaling noise_sd · z (not
 * gsl_ran_gaussian(r, noise_sd), which rounds differently) are part of the
 * documented contract (docs/generators.md). */
START_TEST(test_tilt_replay)
{
    const size_t K = 5, d = 3, n_tr = 4, n_te = 6;
    const double common_sd = 1.75, tilt = 0.625;
    const double noise_sds[2] = {0.0, 0.8125};
    pflref_model m = linear_model(d, 0);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    ck_assert_msg(r != NULL, "gsl_rng_alloc");

    for (int v = 0; v < 2; v++) {
        const double noise_sd = noise_sds[v];
        pflref_gen_tilt g = {K, n_tr, n_te, common_sd, tilt, noise_sd,
                             20240611UL};
        pflref_problem *p = tilt_ok(&g, &m);
        gsl_rng_set(r, g.seed);
        double common[3];
        for (size_t j = 0; j < d; j++)
            common[j] = common_sd * gsl_ran_gaussian(r, 1.0);
        for (int split = 0; split < 2; split++) {
            for (size_t k = 0; k < K; k++) {
                const pflref_data *D =
                    split == 0 ? &p->clients[k].train : &p->clients[k].test;
                const char *name = split ? "test" : "train";
                double w[3];
                for (size_t j = 0; j < d; j++)
                    w[j] = common[j] +
                           (j == k % d ? (k % 2 ? -tilt : tilt) : 0.0);
                for (size_t i = 0; i < D->n * d; i++) {
                    const double z = gsl_ran_gaussian(r, 1.0);
                    ck_assert_msg(D->X[i] == z,
                                  "%s client %zu X[%zu] = %.17g, replay %.17g",
                                  name, k, i, D->X[i], z);
                }
                for (size_t i = 0; i < D->n; i++) {
                    const double z = gsl_ran_gaussian(r, 1.0);
                    const double *x = D->X + i * d;
                    const double dot = x[0] * w[0] + x[1] * w[1] + x[2] * w[2];
                    if (noise_sd == 0.0)
                        ck_assert_msg(fabs(D->y[i] - dot) <=
                                          dot_bound(x, w, d),
                                      "%s client %zu y[%zu] = %.17g, "
                                      "X w_k = %.17g", name, k, i, D->y[i],
                                      dot);
                    else
                        ck_assert_msg(D->y[i] == dot + noise_sd * z,
                                      "%s client %zu y[%zu] = %.17g, "
                                      "x·w_k + noise_sd·z = %.17g", name, k,
                                      i, D->y[i], dot + noise_sd * z);
                }
            }
        }
        pflref_problem_free(p);
    }
    gsl_rng_free(r);
}
END_TEST

/* The tilt seen from the data alone.  With noise_sd = 0 each client's
 * train set is consistent, so least squares recovers w_k, and
 *   w_k − w_0 = offset_k − offset_0 = s_k·tilt·e_{k mod d} − tilt·e_0,
 *   s_k = +1 for k even, −1 for k odd.
 * K = 9 > d = 4 checks the wrap-around: client 4 tilts e_0 by +tilt like
 * client 0 (so w_4 = w_0), client 5 tilts e_1 by −tilt like client 1.
 * Tolerance: X is 40 × 4 Gaussian, condition number ≈ (1 + √(4/40)) /
 * (1 − √(4/40)) ≈ 1.9, |w| ≈ common_sd·√d ≈ 4, so the QR solution errs by
 * ≈ κ·n·u·|w| ≈ 1e-13; 1e-10 absolute leaves three orders of margin and is
 * still a million times smaller than tilt. */
START_TEST(test_tilt_offsets)
{
    const size_t K = 9, d = 4;
    const double tilt = 1.375;
    pflref_model m = linear_model(d, 0);
    pflref_gen_tilt g = {K, 40, 0, 2.0, tilt, 0.0, 31};
    pflref_problem *p = tilt_ok(&g, &m);
    double w[9][4];
    for (size_t k = 0; k < K; k++)
        least_squares(&p->clients[k].train, d, w[k]);
    for (size_t k = 1; k < K; k++) {
        for (size_t j = 0; j < d; j++) {
            double expect = 0.0;
            if (j == k % d)
                expect += (k % 2 == 0) ? tilt : -tilt;
            if (j == 0)
                expect -= tilt;
            const double got = w[k][j] - w[0][j];
            ck_assert_msg(fabs(got - expect) <= 1e-10,
                          "(w_%zu − w_0)[%zu] = %.17g, expected %g", k, j,
                          got, expect);
        }
    }
    pflref_problem_free(p);
}
END_TEST

/* Noise statistics, loosely: with noise_sd = σ = 0.75 and n = 5000 test
 * samples per client, the least-squares residuals r = y − X ŵ have
 * mean ≈ 0 (sd σ/√n ≈ 0.011) and mean square ≈ σ² (n − d)/n ≈ 0.5612
 * (relative sd √(2/n) ≈ 0.02).  Tolerances of 0.06 on the mean and 10 %
 * on the mean square are five standard deviations. */
START_TEST(test_tilt_noise)
{
    const size_t d = 12, n = 5000;
    const double sigma = 0.75;
    pflref_model m = linear_model(d, 0);
    pflref_gen_tilt g = {2, 14, n, 2.0, 1.5, sigma, 99};
    pflref_problem *p = tilt_ok(&g, &m);
    double w[12];
    for (size_t k = 0; k < 2; k++) {
        const pflref_data *D = &p->clients[k].test;
        least_squares(D, d, w);
        double sum = 0.0, ss = 0.0;
        for (size_t i = 0; i < n; i++) {
            double yhat = 0.0;
            for (size_t j = 0; j < d; j++)
                yhat += D->X[i * d + j] * w[j];
            const double r = D->y[i] - yhat;
            sum += r;
            ss += r * r;
        }
        const double expect = sigma * sigma * (double)(n - d) / (double)n;
        ck_assert_msg(fabs(sum / (double)n) <= 0.06,
                      "client %zu: residual mean %g", k, sum / (double)n);
        ck_assert_msg(fabs(ss / (double)n - expect) <= 0.1 * expect,
                      "client %zu: residual mean square %g, expected %g", k,
                      ss / (double)n, expect);
    }
    pflref_problem_free(p);
}
END_TEST

/* ------------------------------------------------------------- dirichlet */

/* Shapes with the seed 001 defaults (30 clients, mlp 32 → 64 → 10):
 * n_i ∈ [50, 200), 50 test samples, labels integral in [0, 10), and the
 * problem validates. */
START_TEST(test_dirichlet_shapes)
{
    pflref_model m = mlp_model();
    pflref_gen_dirichlet g = dirichlet_defaults();
    pflref_problem *p = dirichlet_ok(&g, &m);
    ck_assert_msg(p->N == 30, "N = %zu, expected 30", p->N);
    size_t n_lo = SIZE_MAX, n_hi = 0;
    for (size_t i = 0; i < 30; i++) {
        const pflref_client *c = &p->clients[i];
        ck_assert_msg(c->train.n >= 50 && c->train.n < 200,
                      "client %zu: n_i = %zu outside [50, 200)", i,
                      c->train.n);
        ck_assert_msg(c->test.n == 50, "client %zu: test.n = %zu", i,
                      c->test.n);
        if (c->train.n < n_lo)
            n_lo = c->train.n;
        if (c->train.n > n_hi)
            n_hi = c->train.n;
        const pflref_data *sets[2] = {&c->train, &c->test};
        for (int s = 0; s < 2; s++)
            for (size_t j = 0; j < sets[s]->n; j++) {
                const double y = sets[s]->y[j];
                ck_assert_msg(y >= 0 && y < 10 && y == floor(y),
                              "client %zu: label %g not in 0..9", i, y);
            }
    }
    /* 30 draws from 150 values all equal: probability 150^−29 */
    ck_assert_msg(n_lo < n_hi, "every n_i equals %zu: n_i is not drawn",
                  n_lo);
    pflref_error err;
    ck_assert_msg(pflref_problem_validate(p, &err) == PFLREF_OK,
                  "generated problem does not validate: %s at '%s'",
                  err.message, err.where);
    pflref_problem_free(p);

    /* n_min = n_max − 1: every n_i = n_min (uniform_int(1) = 0);
     * n_test = 0: no test data */
    g.n_min = 77;
    g.n_max = 78;
    g.n_test = 0;
    p = dirichlet_ok(&g, &m);
    for (size_t i = 0; i < 30; i++)
        ck_assert_msg(p->clients[i].train.n == 77 &&
                          p->clients[i].test.n == 0,
                      "client %zu: n = %zu (77), test.n = %zu (0)", i,
                      p->clients[i].train.n, p->clients[i].test.n);
    pflref_problem_free(p);
}
END_TEST

START_TEST(test_dirichlet_reproducible)
{
    pflref_model m = mlp_model();
    pflref_gen_dirichlet g = dirichlet_defaults();
    pflref_problem *a = dirichlet_ok(&g, &m);
    pflref_problem *b = dirichlet_ok(&g, &m);
    ck_assert_msg(problems_equal(a, b), "seed 42 twice: the bytes differ");
    g.seed = 43;
    pflref_problem *c = dirichlet_ok(&g, &m);
    ck_assert_msg(!problems_equal(a, c), "seeds 42 and 43 give one problem");
    ck_assert_msg(!data_equal(&a->clients[0].train, &c->clients[0].train, 32),
                  "seeds 42 and 43: client 0 has the same data");
    pflref_problem_free(a);
    pflref_problem_free(b);
    pflref_problem_free(c);
}
END_TEST

/* Replay the documented dirichlet draw order with GSL here:
 *   p_i ~ Dirichlet(α·1_k) for every client first;  then per client:
 *   n_i = n_min + uniform_int(n_max − n_min); its n_i train samples, then
 *   its n_test test samples, each: label (gsl_ran_discrete on p_i), d
 *   features N(0,1), x[label mod d] += shift.
 * Every label and feature must match bit for bit (k = 4 > d = 3 so that
 * the wrap label mod d is exercised). */
START_TEST(test_dirichlet_replay)
{
    const size_t K = 3, k = 4, d = 3;
    const double alpha = 0.7, shift = 1.625;
    pflref_model m = softmax_model(d, k);
    pflref_gen_dirichlet g = {K, alpha, 5, 12, 7, shift, 123457UL};
    pflref_problem *p = dirichlet_ok(&g, &m);

    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    ck_assert_msg(r != NULL, "gsl_rng_alloc");
    gsl_rng_set(r, g.seed);
    const double a[4] = {alpha, alpha, alpha, alpha};
    double prob[3][4];
    for (size_t i = 0; i < K; i++)
        gsl_ran_dirichlet(r, k, a, prob[i]);
    for (size_t i = 0; i < K; i++) {
        const size_t n_i = 5 + (size_t)gsl_rng_uniform_int(r, 12 - 5);
        ck_assert_msg(p->clients[i].train.n == n_i,
                      "client %zu: n_i = %zu, replay %zu", i,
                      p->clients[i].train.n, n_i);
        gsl_ran_discrete_t *table = gsl_ran_discrete_preproc(k, prob[i]);
        ck_assert_msg(table != NULL, "gsl_ran_discrete_preproc");
        const pflref_data *sets[2] = {&p->clients[i].train,
                                      &p->clients[i].test};
        for (int s = 0; s < 2; s++) {
            const pflref_data *D = sets[s];
            for (size_t j = 0; j < D->n; j++) {
                const size_t label = gsl_ran_discrete(r, table);
                ck_assert_msg(D->y[j] == (double)label,
                              "client %zu set %d sample %zu: label %g, "
                              "replay %zu", i, s, j, D->y[j], label);
                for (size_t f = 0; f < d; f++) {
                    double x = gsl_ran_gaussian(r, 1.0);
                    if (f == label % d)
                        x += shift;
                    ck_assert_msg(D->X[j * d + f] == x,
                                  "client %zu set %d sample %zu x[%zu] = "
                                  "%.17g, replay %.17g", i, s, j, f,
                                  D->X[j * d + f], x);
                }
            }
        }
        gsl_ran_discrete_free(table);
    }
    gsl_rng_free(r);
    pflref_problem_free(p);
}
END_TEST

/* The feature shift, with k = 5 > d = 3 so that label mod d wraps (labels
 * 3 and 4 shift features 0 and 1).  α = 200 makes p_i nearly uniform
 * (p_c ~ Beta(200, 800): 0.2 ± 0.013), and n_i = 4000, so each label has
 * ≈ 800 samples per client; at least 400 is asserted (p_c < 0.1 would be
 * 8 sd away).  Over m ≥ 400 samples of label c, the mean of x[c mod 3] is
 * shift + N(0, 1/m) and the mean of x[(c + 1) mod 3] is N(0, 1/m):
 * sd ≤ 0.05, so 0.25 is a five-sd tolerance. */
START_TEST(test_dirichlet_shift)
{
    const size_t k = 5, d = 3;
    const double shift = 2.5;
    pflref_model m = softmax_model(d, k);
    pflref_gen_dirichlet g = {2, 200.0, 4000, 4001, 0, shift, 5};
    pflref_problem *p = dirichlet_ok(&g, &m);
    for (size_t i = 0; i < 2; i++) {
        const pflref_data *D = &p->clients[i].train;
        ck_assert_msg(D->n == 4000, "client %zu: n_i = %zu, expected 4000",
                      i, D->n);
        for (size_t c = 0; c < k; c++) {
            size_t count = 0;
            double on = 0.0, off = 0.0;
            for (size_t s = 0; s < D->n; s++) {
                if (D->y[s] != (double)c)
                    continue;
                count++;
                on += D->X[s * d + c % d];
                off += D->X[s * d + (c + 1) % d];
            }
            ck_assert_msg(count >= 400, "client %zu label %zu: %zu samples",
                          i, c, count);
            on /= (double)count;
            off /= (double)count;
            ck_assert_msg(fabs(on - shift) <= 0.25,
                          "client %zu label %zu: mean x[%zu] = %g, expected "
                          "shift %g", i, c, c % d, on, shift);
            ck_assert_msg(fabs(off) <= 0.25,
                          "client %zu label %zu: mean x[%zu] = %g, expected 0",
                          i, c, (c + 1) % d, off);
        }
    }
    pflref_problem_free(p);
}
END_TEST

/* Mean over clients of the largest label share of a client's train set. */
static double mean_max_share(const pflref_problem *p, size_t k)
{
    double acc = 0.0;
    size_t counts[16];
    for (size_t i = 0; i < p->N; i++) {
        const pflref_data *D = &p->clients[i].train;
        memset(counts, 0, sizeof counts);
        for (size_t s = 0; s < D->n; s++)
            counts[(size_t)D->y[s]]++;
        size_t top = 0;
        for (size_t c = 0; c < k; c++)
            if (counts[c] > top)
                top = counts[c];
        acc += (double)top / (double)D->n;
    }
    return acc / (double)p->N;
}

/* Label skew follows α.  The mean over 30 clients of the largest label
 * share, with n_i ~ U{50..199} and k = 10 (a numpy simulation of the
 * same model, 2000 repetitions, docs/generators.md):
 *   α = 0.1:  0.666 ± 0.034 (min 0.549)  → asserted > 0.45
 *   α = 100:  0.151 ± 0.004 (max 0.165)  → asserted < 0.25 */
START_TEST(test_dirichlet_skew)
{
    pflref_model m = mlp_model();
    pflref_gen_dirichlet g = dirichlet_defaults();
    pflref_problem *p = dirichlet_ok(&g, &m);
    const double skewed = mean_max_share(p, 10);
    pflref_problem_free(p);
    g.alpha = 100.0;
    p = dirichlet_ok(&g, &m);
    const double even = mean_max_share(p, 10);
    pflref_problem_free(p);
    ck_assert_msg(skewed > 0.45,
                  "alpha = 0.1: mean largest label share %g, expected > 0.45",
                  skewed);
    ck_assert_msg(even < 0.25,
                  "alpha = 100: mean largest label share %g, expected < 0.25",
                  even);
}
END_TEST

/* ---------------------------------------------------------------- errors */

static void tilt_fails(const pflref_gen_tilt *g, const pflref_model *m,
                       pflref_status expect, const char *where)
{
    pflref_problem sentinel;
    pflref_problem *p = &sentinel;  /* not NULL: a failure must reset it */
    pflref_error err;
    pflref_error_clear(&err);
    pflref_status st = pflref_generate_tilt(g, m, &p, &err);
    ck_assert_msg(st == expect, "tilt, '%s': status %s, expected %s", where,
                  pflref_status_name(st), pflref_status_name(expect));
    ck_assert_msg(strcmp(err.where, where) == 0,
                  "tilt: where = '%s', expected '%s'", err.where, where);
    ck_assert_msg(err.message[0] != '\0', "tilt, '%s': empty message", where);
    ck_assert_msg(p == NULL, "tilt, '%s': *out not NULL on failure", where);
}

static void dirichlet_fails(const pflref_gen_dirichlet *g,
                            const pflref_model *m, pflref_status expect,
                            const char *where)
{
    pflref_problem sentinel;
    pflref_problem *p = &sentinel;  /* not NULL: a failure must reset it */
    pflref_error err;
    pflref_error_clear(&err);
    pflref_status st = pflref_generate_dirichlet(g, m, &p, &err);
    ck_assert_msg(st == expect, "dirichlet, '%s': status %s, expected %s",
                  where, pflref_status_name(st), pflref_status_name(expect));
    ck_assert_msg(strcmp(err.where, where) == 0,
                  "dirichlet: where = '%s', expected '%s'", err.where, where);
    ck_assert_msg(err.message[0] != '\0', "dirichlet, '%s': empty message",
                  where);
    ck_assert_msg(p == NULL, "dirichlet, '%s': *out not NULL on failure",
                  where);
}

START_TEST(test_tilt_errors)
{
    const pflref_status E = PFLREF_EINVAL, M = PFLREF_ENOMEM;
    pflref_model lin = linear_model(12, 0);
    pflref_model biased = linear_model(12, 1);
    pflref_model soft = softmax_model(12, 3);
    pflref_model no_d = lin;
    no_d.d = 0;
    const pflref_gen_tilt ok = tilt_defaults();
    pflref_gen_tilt g;
    pflref_error err;

    ck_assert_msg(pflref_generate_tilt(&ok, &lin, NULL, &err) == E &&
                      strcmp(err.where, "out") == 0,
                  "out = NULL not refused");
    tilt_fails(NULL, &lin, E, "generator");
    tilt_fails(&ok, NULL, E, "m");
    tilt_fails(&ok, &soft, E, "model.kind");
    tilt_fails(&ok, &biased, E, "model.bias");
    tilt_fails(&ok, &no_d, E, "model.d");

    g = ok; g.K = 0;             tilt_fails(&g, &lin, E, "generator.K");
    g = ok; g.n_train = 0;       tilt_fails(&g, &lin, E, "generator.n_train");
    g = ok; g.common_sd = -2.0;  tilt_fails(&g, &lin, E, "generator.common_sd");
    g = ok; g.common_sd = NAN;   tilt_fails(&g, &lin, E, "generator.common_sd");
    g = ok; g.tilt = -1.5;       tilt_fails(&g, &lin, E, "generator.tilt");
    g = ok; g.tilt = INFINITY;   tilt_fails(&g, &lin, E, "generator.tilt");
    g = ok; g.noise_sd = -0.5;   tilt_fails(&g, &lin, E, "generator.noise_sd");
    g = ok; g.noise_sd = NAN;    tilt_fails(&g, &lin, E, "generator.noise_sd");
    g = ok; g.seed = 0;          tilt_fails(&g, &lin, E, "generator.seed");
#if ULONG_MAX > 0xffffffffUL
    /* 2³² would alias seed 0, i.e. mt19937's default 4357 */
    g = ok; g.seed = 0x100000000UL; tilt_fails(&g, &lin, E, "generator.seed");
#endif
    /* absurd sizes are refused before anything is allocated */
    g = ok; g.n_train = SIZE_MAX / 64;
    tilt_fails(&g, &lin, M, "generator.n_train");
    g = ok; g.n_test = SIZE_MAX / 2;
    tilt_fails(&g, &lin, M, "generator.n_test");
    /* 2⁴⁰ clients × 414 samples × 13 doubles: beyond any memory */
    g = ok; g.K = (size_t)1 << 40;
    tilt_fails(&g, &lin, M, "generator.K");
}
END_TEST

/* A pinned PFLREF_MEMORY_LIMIT lowers the data limit (a malformed one
 * lowers nothing), and the check counts each client's record as well as its
 * data: 2¹⁶ clients of one sample of d = 1 (x and y, 2¹⁷ doubles) fill
 * 1 MiB with data alone, so with their records they are refused. */
START_TEST(test_tilt_pinned_memory)
{
    unsetenv("PFLREF_MEMORY_LIMIT");
    const size_t machine = pflref_data_limit_bytes();
    ck_assert_uint_gt(machine, (size_t)1 << 20);
    ck_assert_int_eq(setenv("PFLREF_MEMORY_LIMIT", "12k", 1), 0);
    ck_assert_uint_eq(pflref_data_limit_bytes(), machine);
    ck_assert_int_eq(setenv("PFLREF_MEMORY_LIMIT", "1048576", 1), 0);
    ck_assert_uint_eq(pflref_data_limit_bytes(), (size_t)1 << 20);

    pflref_model lin = linear_model(1, 0);
    pflref_gen_tilt g = tilt_defaults();
    g.n_train = 1;
    g.n_test = 0;
    g.K = (size_t)1 << 16;
    tilt_fails(&g, &lin, PFLREF_ENOMEM, "generator.K");
    g.K = 1000;
    pflref_problem *p = NULL;
    pflref_error err;
    ck_assert_msg(pflref_generate_tilt(&g, &lin, &p, &err) == PFLREF_OK,
                  "1000 clients under 1 MiB: %s", err.message);
    ck_assert_uint_eq(p->N, 1000);
    pflref_problem_free(p);
    unsetenv("PFLREF_MEMORY_LIMIT");
}
END_TEST

START_TEST(test_dirichlet_errors)
{
    const pflref_status E = PFLREF_EINVAL, M = PFLREF_ENOMEM;
    pflref_model mlp = mlp_model();
    pflref_model lin = linear_model(32, 0);
    pflref_model one_class = softmax_model(32, 2);
    one_class.k = 1;
    pflref_model no_d = mlp;
    no_d.d = 0;
    const pflref_gen_dirichlet ok = dirichlet_defaults();
    pflref_gen_dirichlet g;
    pflref_error err;

    ck_assert_msg(pflref_generate_dirichlet(&ok, &mlp, NULL, &err) == E &&
                      strcmp(err.where, "out") == 0,
                  "out = NULL not refused");
    dirichlet_fails(NULL, &mlp, E, "generator");
    dirichlet_fails(&ok, NULL, E, "m");
    dirichlet_fails(&ok, &lin, E, "model.kind");
    dirichlet_fails(&ok, &no_d, E, "model.d");
    dirichlet_fails(&ok, &one_class, E, "model.k");

    g = ok; g.K = 0;         dirichlet_fails(&g, &mlp, E, "generator.K");
    g = ok; g.alpha = 0.0;   dirichlet_fails(&g, &mlp, E, "generator.alpha");
    g = ok; g.alpha = -0.1;  dirichlet_fails(&g, &mlp, E, "generator.alpha");
    g = ok; g.alpha = NAN;   dirichlet_fails(&g, &mlp, E, "generator.alpha");
    g = ok; g.alpha = INFINITY;
    dirichlet_fails(&g, &mlp, E, "generator.alpha");
    g = ok; g.n_min = 0;     dirichlet_fails(&g, &mlp, E, "generator.n_min");
    g = ok; g.n_max = 50;    dirichlet_fails(&g, &mlp, E, "generator.n_max");
    g = ok; g.n_max = 10;    dirichlet_fails(&g, &mlp, E, "generator.n_max");
    g = ok; g.shift = NAN;   dirichlet_fails(&g, &mlp, E, "generator.shift");
    g = ok; g.shift = -INFINITY;
    dirichlet_fails(&g, &mlp, E, "generator.shift");
    g = ok; g.seed = 0;      dirichlet_fails(&g, &mlp, E, "generator.seed");
#if ULONG_MAX > 0xffffffffUL
    g = ok; g.seed = ULONG_MAX;
    dirichlet_fails(&g, &mlp, E, "generator.seed");
#endif
    g = ok; g.n_max = SIZE_MAX / 64;
    dirichlet_fails(&g, &mlp, M, "generator.n_max");
    g = ok; g.n_test = SIZE_MAX / 64;
    dirichlet_fails(&g, &mlp, M, "generator.n_test");
    /* 2⁴⁰ clients × (199 + 50) samples × 33 doubles: beyond any memory */
    g = ok; g.K = (size_t)1 << 40;
    dirichlet_fails(&g, &mlp, M, "generator.K");
}
END_TEST

Suite *generate_suite(void)
{
    Suite *s = suite_create("generate");
    TCase *tt = tcase_create("tilt");
    tcase_add_test(tt, test_tilt_shapes);
    tcase_add_test(tt, test_tilt_reproducible);
    tcase_add_test(tt, test_tilt_replay);
    tcase_add_test(tt, test_tilt_offsets);
    tcase_add_test(tt, test_tilt_noise);
    tcase_add_test(tt, test_tilt_errors);
    tcase_add_test(tt, test_tilt_pinned_memory);
    suite_add_tcase(s, tt);
    TCase *td = tcase_create("dirichlet");
    tcase_add_test(td, test_dirichlet_shapes);
    tcase_add_test(td, test_dirichlet_reproducible);
    tcase_add_test(td, test_dirichlet_replay);
    tcase_add_test(td, test_dirichlet_shift);
    tcase_add_test(td, test_dirichlet_skew);
    tcase_add_test(td, test_dirichlet_errors);
    suite_add_tcase(s, td);
    return s;
}
