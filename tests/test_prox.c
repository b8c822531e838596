/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_prox.c: pFedMe's inner loop (ref/engine/prox_inner.c): the
 * primitive pflref_prox_inner_run, the exact proximal point
 * pflref_prox_point, and the algorithm "prox" (ref/algorithms/prox.c).
 *
 * Closed forms used (derived here, not by the code under test): on
 * f(θ) = ½ a (θ − c)² the inner step is θ ← θ − η_p(a(θ − c) + λ(θ − w)),
 * an affine map with fixed point θ* = (a c + λ w)/(a + λ) and factor
 * q = 1 − η_p(a + λ), so θ_K = θ* + q^K (θ_0 − θ*); it converges for every
 * θ_0 exactly when |q| < 1, i.e. 0 < η_p(a + λ) < 2.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "suites.h"
#include "testutil.h"
#include "builder.h"
#include "engine/engine.h"

/* "prox" on the quadratic model with d entries (one client: a, c), the
 * reference w = w⁰, λ, η_p, K, and `rounds` rounds of one step. */
static tb_case *prox_case(size_t d, const double *a, const double *c,
                          const double *w, double lambda, double eta_p,
                          size_t K, size_t rounds)
{
    tb_case *pc = tb_quadratic(d, 1);
    tb_quad(pc, 0, a, c, 1);
    tb_w0(pc, w);
    pc->hyper.lambda = lambda;
    pc->hyper.eta_p = eta_p;
    pc->hyper.K = K;
    tb_generate(pc, rounds, 1, 0);
    return pc;
}

/* prox_case for d = 1. */
static tb_case *prox_case1(double a, double c, double w, double lambda,
                           double eta_p, size_t K, size_t rounds)
{
    return prox_case(1, &a, &c, &w, lambda, eta_p, K, rounds);
}

/* θ_K = θ* + q^K (θ_0 − θ*) entrywise, θ_0 = w, for K = 1..9 on three
 * entries with q = 1 − η_p(a + λ) = 0.6425, −0.4725, 0.1375 (one negative:
 * the iterate oscillates around θ*). */
START_TEST(test_inner_closed_form)
{
    /* req: prox.alg1.l7, prox.eq7, pfedme.alg1.l7 */
    const double a[3] = {0.5, 3.75, 2.385}, c[3] = {2.385, -1.25, 0.7};
    const double w[3] = {0.3, -0.2, 1.9}, lambda = 1.9, eta_p = 0.15;
    for (int K = 1; K <= 9; K++) {
        tb_case *pc = prox_case(3, a, c, w, lambda, eta_p, (size_t)K, 1);
        pflref_run_result *res = tb_run(pc, "prox", NULL);
        for (int j = 0; j < 3; j++) {
            const double star = (a[j] * c[j] + lambda * w[j]) / (a[j] + lambda);
            const double q = 1.0 - eta_p * (a[j] + lambda);
            const double expect = star + pow(q, K) * (w[j] - star);
            ck_assert_msg(fabs(res->v[j] - expect) <= 1e-14,
                          "K = %d, entry %d: θ_K = %.17g, closed form %.17g",
                          K, j, res->v[j], expect);
        }
        /* the reference w never moves */
        for (int j = 0; j < 3; j++)
            ck_assert_double_eq(res->w[j], w[j]);
        pflref_run_result_free(res);
        tb_free(pc);
    }
}
END_TEST

/* Convergence to θ* exactly when 0 < η_p(a + λ) < 2: with a + λ = 4,
 * η_p = 0.475 (product 1.9) contracts to θ* after 400 steps; η_p = 0.5
 * (product 2) keeps |θ − θ*| constant; η_p = 0.525 (2.1) grows. */
START_TEST(test_inner_convergence_boundary)
{
    /* req: prox.window */
    const double star = (1.0 * 5.0 + 3.0 * 2.0) / 4.0;   /* 11/4 */
    const double eta_p[3] = {0.475, 0.5, 0.525};
    double dist[3];
    for (int e = 0; e < 3; e++) {
        tb_case *pc = prox_case1(1.0, 5.0, 2.0, 3.0, eta_p[e], 400, 1);
        pflref_run_result *res = tb_run(pc, "prox", NULL);
        dist[e] = fabs(res->v[0] - star);
        pflref_run_result_free(res);
        tb_free(pc);
    }
    /* the rounded map's fixed point lies within a few ulps of 11/4 */
    ck_assert_msg(dist[0] <= 1e-14, "η_p(a+λ) = 1.9: |θ − θ*| = %g", dist[0]);
    ck_assert_msg(dist[1] == 0.75, "η_p(a+λ) = 2: |θ − θ*| = %.17g, not 0.75",
                  dist[1]);
    ck_assert_msg(dist[2] > 1e6, "η_p(a+λ) = 2.1: |θ − θ*| = %g did not grow",
                  dist[2]);
}
END_TEST

/* Records of the STEP and NOTE events of one run. */
typedef struct {
    int nsteps, nnotes;
    double step[8];
    long step_no[8];
    double note;
} capture;

static void capture_emit(void *ctx, const pflref_event *ev)
{
    capture *c = ctx;
    if (ev->kind == PFLREF_EV_STEP && c->nsteps < 8) {
        c->step[c->nsteps] = ev->value[0];
        c->step_no[c->nsteps++] = ev->step;
    } else if (ev->kind == PFLREF_EV_NOTE &&
               strcmp(ev->name, "theta_hat") == 0) {
        c->note = ev->value[0];
        c->nnotes++;
    }
}

/* Seed 003: F(w) = ½(w − 5)², θ = 2, λ = 3, α = 0.1: w⁽¹⁾ = 2.3,
 * w⁽²⁾ = 2.48, exact prox point 11/4.  0.1 is not a binary fraction, so
 * the iterates carry a few roundings (1e-15). */
START_TEST(test_seed003)
{
    /* req: prox.alg1.l7 */
    tb_case *pc = prox_case1(1.0, 5.0, 2.0, 3.0, 0.1, 2, 1);
    capture c = {0};
    pflref_trace tr = {capture_emit, &c};
    pflref_run_result *res = tb_run(pc, "prox", &tr);
    ck_assert_int_eq(c.nsteps, 2);
    ck_assert_int_eq(c.step_no[0], 1);
    ck_assert_int_eq(c.step_no[1], 2);
    ck_assert_double_eq_tol(c.step[0], 2.3, 1e-15);
    ck_assert_double_eq_tol(c.step[1], 2.48, 1e-15);
    ck_assert_int_eq(c.nnotes, 1);
    ck_assert_double_eq(c.note, 2.75);
    ck_assert_double_eq_tol(res->v[0], 2.48, 1e-15);
    pflref_run_result_free(res);
    tb_free(pc);
}
END_TEST

/* The exact proximal point: on the quadratic model it is
 * (a c + λ w + 0·μ)/(a + λ + μ) entrywise; on a linear model with squared
 * loss it is stationary: ∇f(θ̂; D) + λ(θ̂ − w) + μθ̂ = 0. */
START_TEST(test_prox_point)
{
    /* req: prox.eq3, pfedme.eq3 */
    pflref_model m;
    pflref_error err;
    ck_assert_int_eq(pflref_model_init(&m, PFLREF_MODEL_QUADRATIC,
                                       PFLREF_LOSS_QUADRATIC, 3, 1, 0, 0, &err),
                     PFLREF_OK);
    double a[3] = {0.5, 3.75, 2.385}, c[3] = {2.385, -1.25, 0.7};
    pflref_data D = {.n = 1, .X = NULL, .y = NULL, .a = a, .c = c};
    const double w[3] = {0.3, -0.2, 1.9};
    pflref_model_workspace *ws = pflref_model_workspace_alloc(&m, 1);
    double theta_hat[3], work[9];
    pflref_prox_inner job = {.model = &m, .data = &D, .idx = NULL, .nb = 0,
                             .w = w, .lambda = 1.9, .eta_p = 0.1, .mu = 0.25,
                             .K = 1, .phase = "train", .formula = NULL,
                             .round = 0, .client = 0, .step0 = 0};
    ck_assert_int_eq(pflref_prox_point(&job, theta_hat, work, ws, &err),
                     PFLREF_OK);
    for (int j = 0; j < 3; j++) {
        /* stationarity of a(θ − c) + λ(θ − w) + μθ */
        const double expect = (a[j] * c[j] + 1.9 * w[j]) / (a[j] + 1.9 + 0.25);
        ck_assert_msg(fabs(theta_hat[j] - expect) <= 1e-15,
                      "entry %d: θ̂ = %.17g, expected %.17g", j, theta_hat[j],
                      expect);
    }
    pflref_model_workspace_free(ws);

    /* linear, squared loss, d = 3 with bias: P = 4, H = (2/n) X̃ᵀX̃ dense */
    pflref_model lin;
    ck_assert_int_eq(pflref_model_init(&lin, PFLREF_MODEL_LINEAR,
                                       PFLREF_LOSS_SQUARED, 3, 1, 0, 1, &err),
                     PFLREF_OK);
    double X[15] = {0.912, -1.347, 0.5,  -0.284, 0.671, 1.25, 1.563, 0.238,
                    -0.7,  -1.426, 0.357, 0.1,  0.689, -0.942, 2.0};
    double y[5] = {-0.775, 1.409, 0.236, 0.518, -1.263};
    pflref_data L = {.n = 5, .X = X, .y = y, .a = NULL, .c = NULL};
    const size_t idx[4] = {4, 0, 2, 1};
    const double wl[4] = {0.3, -0.2, 0.1, 0.05};
    ws = pflref_model_workspace_alloc(&lin, 5);
    double th[4], wk[12], g[4];
    pflref_prox_inner jl = {.model = &lin, .data = &L, .idx = idx, .nb = 4,
                            .w = wl, .lambda = 0.7, .eta_p = 0.1, .mu = 0.0,
                            .K = 1, .phase = "train", .formula = NULL,
                            .round = 0, .client = 0, .step0 = 0};
    ck_assert_int_eq(pflref_prox_point(&jl, th, wk, ws, &err), PFLREF_OK);
    ck_assert_int_eq(pflref_model_grad(&lin, th, &L, idx, 4, ws, g, NULL),
                     PFLREF_OK);
    for (int j = 0; j < 4; j++) {
        const double r = g[j] + 0.7 * (th[j] - wl[j]);
        ck_assert_msg(fabs(r) <= 1e-13, "entry %d: residual %g", j, r);
    }
    /* softmax has no exact proximal point here; λ + μ = 0 neither */
    pflref_model sm;
    ck_assert_int_eq(pflref_model_init(&sm, PFLREF_MODEL_SOFTMAX,
                                       PFLREF_LOSS_CROSS_ENTROPY, 2, 3, 0, 0,
                                       &err),
                     PFLREF_OK);
    ck_assert(!pflref_prox_has_exact(&sm));
    pflref_prox_inner js = jl;
    js.model = &sm;
    ck_assert_int_eq(pflref_prox_point(&js, th, wk, ws, &err), PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "model");
    jl.lambda = 0.0;
    ck_assert_int_eq(pflref_prox_point(&jl, th, wk, ws, &err), PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "lambda");
    pflref_model_workspace_free(ws);
}
END_TEST

/* warm: round t continues from round t−1's θ (two rounds of K = 3 equal one
 * round of K = 6); reset: every round restarts from w (equal to K = 3). */
START_TEST(test_theta_start)
{
    tb_case *warm = prox_case1(2.385, 1.5, 0.25, 0.7, 0.2, 3, 2);
    warm->hyper.pfedme.theta_start = PFLREF_PFEDME_THETA_WARM;
    tb_case *reset = prox_case1(2.385, 1.5, 0.25, 0.7, 0.2, 3, 2);
    tb_case *six = prox_case1(2.385, 1.5, 0.25, 0.7, 0.2, 6, 1);
    tb_case *three = prox_case1(2.385, 1.5, 0.25, 0.7, 0.2, 3, 1);
    pflref_run_result *rw = tb_run(warm, "prox", NULL);
    pflref_run_result *rr = tb_run(reset, "prox", NULL);
    pflref_run_result *r6 = tb_run(six, "prox", NULL);
    pflref_run_result *r3 = tb_run(three, "prox", NULL);
    ck_assert_double_eq(rw->v[0], r6->v[0]);
    ck_assert_double_eq(rr->v[0], r3->v[0]);
    ck_assert_double_ne(rw->v[0], rr->v[0]);
    pflref_run_result_free(rw);
    pflref_run_result_free(rr);
    pflref_run_result_free(r6);
    pflref_run_result_free(r3);
    tb_free(warm);
    tb_free(reset);
    tb_free(six);
    tb_free(three);
}
END_TEST

/* A step factor of −999 overflows to infinity after about 103 steps: the
 * error names round, client and step. */
START_TEST(test_divergence)
{
    tb_case *pc = prox_case1(1.0, 5.0, 2.0, 0.0, 1000.0, 400, 1);
    pflref_error err;
    tb_run_error(pc, "prox", PFLREF_EDIVERGE, &err);
    /* |θ_k − 5| = 3·999^k: finite at k = 102 (≈ 3e306), infinite at 103 */
    ck_assert_msg(strstr(err.message, "round 0, client 0, local step 103") !=
                          NULL &&
                      strstr(err.message, "theta") != NULL,
                  "message: %s", err.message);
    tb_free(pc);
}
END_TEST

/* K is required and counted from 1. */
START_TEST(test_required)
{
    tb_case *pc = prox_case1(1.0, 5.0, 0.0, 3.0, 0.1, 1, 1);
    pc->hyper.K = PFLREF_INT_UNSET;
    pflref_error err;
    tb_run_error(pc, "prox", PFLREF_EINVAL, &err);
    ck_assert_str_eq(err.where, "algorithm.hyperparameters.K");
    /* K = 0 steps nothing: refused too */
    pc->hyper.K = 0;
    tb_run_error(pc, "prox", PFLREF_EINVAL, &err);
    ck_assert_str_eq(err.where, "algorithm.hyperparameters.K");
    tb_free(pc);
}
END_TEST

/* The client optimizer is the inner solver: f = ½(θ − 4)², w = 0, λ = 1,
 * η_p = 1/4, K = 2, opt.momentum = 1/2 (b ← d, then ½ b + d; θ ← θ −
 * η_p b) on d = (θ − 4) + λ θ:
 *   round 0:  d = −4, b = −4, θ = 1;  d = −2, b = −4, θ = 2
 *   round 1, θ reset to w = 0:
 *     opt.state = reset:  a new optimizer, θ = 2 again
 *     opt.state = client: b = −4 carried: d = −4, b = −6, θ = 3/2;
 *                         d = −1, b = −4, θ = 5/2
 * and plain SGD gives θ = 3/2 in each round. */
static double prox_momentum(int state, size_t rounds, double momentum)
{
    tb_case *pc = prox_case1(1.0, 4.0, 0.0, 1.0, 0.25, 2, rounds);
    pc->hyper.opt.momentum = momentum;
    pc->hyper.opt.state = state;
    pflref_run_result *res = tb_run(pc, "prox", NULL);
    const double theta = res->v[0];
    pflref_run_result_free(res);
    tb_free(pc);
    return theta;
}

START_TEST(test_inner_optimizer)
{
    /* req: prox.alg1.l7, prox.eq7 */
    double th = prox_momentum(PFLREF_OPT_STATE_RESET, 1, 0.5);
    ck_assert_msg(th == 2.0, "momentum 1/2, one round: θ = %.17g, by hand 2",
                  th);
    th = prox_momentum(PFLREF_OPT_STATE_RESET, 2, 0.5);
    ck_assert_msg(th == 2.0, "opt.state = reset, round 1: θ = %.17g, by "
                  "hand 2 (a new optimizer)", th);
    th = prox_momentum(PFLREF_OPT_STATE_CLIENT, 2, 0.5);
    ck_assert_msg(th == 2.5, "opt.state = client, round 1: θ = %.17g, by "
                  "hand 5/2 (the buffer carried)", th);
    th = prox_momentum(PFLREF_OPT_STATE_RESET, 1, 0.0);
    ck_assert_msg(th == 1.5, "plain SGD: θ = %.17g, by hand 3/2", th);
    tu_assert_golden("golden/prox/optim-nesterov-client.json");
}
END_TEST

/* Batch normalisation: θ's K passes move its running statistics, the
 * reference w keeps its own.  The mlp with bn of tests/test_bn_running.c
 * (ε = 0, ρ = 1/4, W1 = 2, b1 = 1/2 with a zero gradient: a = 2x + 1/2),
 * client 0's batch {x = 1, 3}, K = 2: r_μ = 9/8, then 63/32; r_v = 11/4,
 * then 65/16 (μ_B = 9/2, unbiased s² = 8).  Frozen: 0 and 1 stay. */
#define PROX_BN_SPEC(switches)                                               \
    "{\"format\": \"pflref-spec/1\", \"model\": {\"kind\": \"mlp\", "       \
    "\"d\": 1, \"h\": 1, \"k\": 1, \"loss\": \"squared\", \"bn\": true, "   \
    "\"bn_eps\": 0, \"bn_momentum\": 0.25}, \"problem\": {\"clients\": "    \
    "[{\"X\": [[1], [3], [2]], \"y\": [0.5, -1.25, 2]}]}, \"init\": "       \
    "{\"kind\": \"given\", \"w\": [2, 0.5, 1, 0, 0, 1, 0.75, 0.1]}, "       \
    "\"algorithm\": {\"name\": \"prox\", \"hyperparameters\": {\"lambda\": " \
    "2, \"eta_p\": 0.05, \"K\": 2}, \"switches\": {" switches "}}, "         \
    "\"schedule\": {\"kind\": \"given\", \"rounds\": [{\"clients\": [0], "  \
    "\"batches\": [[[0, 1]]]}]}}"

START_TEST(test_bn_running)
{
    /* req: prox.alg1.l7 */
    pflref_spec *spec = tu_spec(PROX_BN_SPEC(""));
    pflref_run_result *res = tu_run(spec, NULL);
    pflref_spec_free(spec);
    ck_assert_msg(fabs(res->v[4] - 63.0 / 32.0) < 1e-13 &&
                      fabs(res->v[5] - 65.0 / 16.0) < 1e-13,
                  "θ's r_μ = %.17g, r_v = %.17g; two passes of PyTorch's "
                  "rule give 63/32, 65/16", res->v[4], res->v[5]);
    ck_assert_msg(res->w[4] == 0.0 && res->w[5] == 1.0,
                  "the reference w's statistics moved: %.17g, %.17g",
                  res->w[4], res->w[5]);
    pflref_run_result_free(res);
    spec = tu_spec(PROX_BN_SPEC("\"bn.running\": \"frozen\""));
    res = tu_run(spec, NULL);
    pflref_spec_free(spec);
    ck_assert_msg(res->v[4] == 0.0 && res->v[5] == 1.0,
                  "frozen: θ's r_μ = %.17g, r_v = %.17g, expected 0 and 1 "
                  "(no pass moves them and no step pulls them)", res->v[4],
                  res->v[5]);
    pflref_run_result_free(res);
}
END_TEST

Suite *prox_suite(void)
{
    Suite *s = suite_create("prox");
    TCase *tc = tcase_create("prox");
    tcase_add_test(tc, test_inner_closed_form);
    tcase_add_test(tc, test_inner_convergence_boundary);
    tcase_add_test(tc, test_seed003);
    tcase_add_test(tc, test_prox_point);
    tcase_add_test(tc, test_theta_start);
    tcase_add_test(tc, test_divergence);
    tcase_add_test(tc, test_required);
    tcase_add_test(tc, test_inner_optimizer);
    tcase_add_test(tc, test_bn_running);
    suite_add_tcase(s, tc);
    return s;
}
