/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_apfl.c: APFL (ref/algorithms/apfl.c) and the model functions
 * it adds (outputs, output errors, the gradient through the outputs, the
 * output mixture's evaluation; ref/models/outputs.c).
 *
 * The worked example is shared/spec notes §6(g): f_1 = ½(x − 4)²,
 * f_2 = ½(x + 2)², α = 1/2, η = 1/2, τ = 2, both clients, w⁰ = v⁰ = 0.  The
 * fixed-α run is dyadic (exact in fp64, compared with ==); the adaptive
 * runs involve η_α = 0.1 and FedTorch's 0.02 and are compared to 1e-15.
 * Every other expectation is a property (α = 0 is FedAvg, α = 1 is local
 * training, output mixing = parameter mixing on a linear model), a finite
 * difference, or a golden vector from golden/apfl/make_worked.py.
 */
#include <check.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "suites.h"
#include "testutil.h"
#include "builder.h"

/* ------------------------------------------------------------------ cases */

/* The notes' problem: f_1 = ½(x − 4)², f_2 = ½(x + 2)², w⁰ = v⁰ = 0;
 * η = 1/2, α = 1/2 (fixed) unless the test changes them; `rounds` rounds
 * of both clients with τ = 2. */
static tb_case *notes_case(int rounds)
{
    tb_case *c = tb_quadratic(1, 2);
    tb_quad(c, 0, (const double[]){1}, (const double[]){4}, 1);
    tb_quad(c, 1, (const double[]){1}, (const double[]){-2}, 1);
    c->hyper.eta = 0.5;
    c->hyper.apfl.alpha = 0.5;
    for (int t = 0; t < rounds; t++)
        tb_round(c, "0 1", "0 | 0", "0 | 0");
    return c;
}

/* A linear model with bias, three clients, ragged minibatches, partial
 * participation (the data of golden/apfl/make_worked.py's linear runs),
 * w⁰ = (0.25, −0.5, 0.125) when given_w0, else 0. */
static tb_case *lin_problem(int given_w0)
{
    const pflref_model m = tb_model(PFLREF_MODEL_LINEAR, PFLREF_LOSS_SQUARED,
                                    2, 1, 0, 1);
    tb_case *c = tb_new(&m, 3);
    tb_train(c, 0, 5,
             (const double[]){1.0, 0.5, 0.25, -1.5, -0.75, 1.0, 1.5, 0.25,
                              0.5, -0.5},
             (const double[]){2.385, -0.716, 1.25, 2.0, 0.5});
    tb_train(c, 1, 3, (const double[]){-1.0, 0.75, 0.5, 1.25, 1.25, -0.25},
             (const double[]){-1.5, 0.875, 1.75});
    tb_train(c, 2, 4,
             (const double[]){0.625, 0.5, -0.5, -1.0, 1.0, 1.0, 0.25, 0.75},
             (const double[]){0.5, -1.25, 1.125, 0.25});
    if (given_w0)
        tb_w0(c, (const double[]){0.25, -0.5, 0.125});
    return c;
}

/* The linear problem with its three rounds; η = 0.1. */
static tb_case *lin_case(void)
{
    tb_case *c = lin_problem(1);
    tb_round(c, "0 2", "0 1 | 2 3 | 4", "0 1 | 2 3");
    tb_round(c, "0 1", "0 1 | 2 3 | 4", "0 1 | 2");
    tb_round(c, "0 1 2", "4 | 0 1", "2 | 0 1", "2 3 | 0 1 | 2 3");
    c->hyper.eta = 0.1;
    return c;
}

/* An mlp with the identity activation (nonlinear in its parameters), two
 * clients, two rounds; η = 0.125, α = 0.375. */
static tb_case *mlp_case(void)
{
    const pflref_model m = tb_mlp(PFLREF_LOSS_SQUARED, 2, 1, 2,
                                  PFLREF_ACT_IDENTITY, 1, 1);
    tb_case *c = tb_new(&m, 2);
    tb_train(c, 0, 3, (const double[]){0.5, -1.25, 1.5, 0.25, -0.75, 0.875},
             (const double[]){1.125, 2.25, -0.5});
    tb_train(c, 1, 4,
             (const double[]){1.0, 0.5, -0.5, 1.5, 0.25, -0.75, 1.25, 1.0},
             (const double[]){0.75, -1.0, 0.5, 1.5});
    tb_w0(c, (const double[]){0.375, -0.25, 0.125, 0.5, 0.0625, -0.125, 0.625,
                              -0.375, 0.25});
    tb_round(c, "0 1", "0 1 | 2", "0 1 | 2 3");
    tb_round(c, "0 1", "2 | 0 1", "2 3 | 1");
    c->hyper.eta = 0.125;
    c->hyper.apfl.alpha = 0.375;
    return c;
}

/* Run `alg` on c and free c. */
static pflref_run_result *run_case(tb_case *c, const char *alg)
{
    pflref_run_result *r = tb_run(c, alg, NULL);
    tb_free(c);
    return r;
}

/* APFL on c (freed here) fails with `status` at `where`. */
static void expect_error(tb_case *c, pflref_status status, const char *where)
{
    pflref_error err;
    tb_run_error(c, "apfl", status, &err);
    ck_assert_msg(strcmp(err.where, where) == 0,
                  "error at \"%s\" (%s), expected at \"%s\"", err.where,
                  err.message, where);
    tb_free(c);
}

/* ----------------------------------------------------------- notes §6(g) */

/* Fixed α: client 1's v 0 → 1 → 1.625, w_1 = 3; w¹ = 0.75; round 2:
 * w² = 0.9375, v = (2.740234375, −1.5634765625). */
START_TEST(test_notes_fixed)
{
    /* req: apfl.alg1.l4, apfl.alg1.l5, apfl.alg1.l6, apfl.alg1.l9 */
    pflref_run_result *r = run_case(notes_case(1), "apfl");
    ck_assert_double_eq(r->w[0], 0.75);
    ck_assert_double_eq(r->v[0], 1.625);
    ck_assert_double_eq(r->v[1], -0.8125);
    /* personalized = α v + (1 − α) w with the final global w */
    ck_assert_str_eq(r->eval[2].label, "personalized");
    ck_assert_double_eq(r->eval[2].train[0].loss,
                        0.5 * (1.1875 - 4.0) * (1.1875 - 4.0));
    ck_assert_double_eq(r->eval[2].train[1].loss,
                        0.5 * (-0.03125 + 2.0) * (-0.03125 + 2.0));
    pflref_run_result_free(r);

    r = run_case(notes_case(2), "apfl");
    ck_assert_double_eq(r->w[0], 0.9375);
    ck_assert_double_eq(r->v[0], 2.740234375);
    ck_assert_double_eq(r->v[1], -1.5634765625);
    ck_assert_double_eq(r->alpha[0], 0.5);
    ck_assert_double_eq(r->alpha[1], 0.5);
    pflref_run_result_free(r);
}
END_TEST

/* The notes' case with adaptive α and η_α = 0.1 (the paper's rule). */
static tb_case *adaptive_case(int rounds)
{
    tb_case *c = notes_case(rounds);
    c->hyper.apfl.eta_alpha = 0.1;
    c->hyper.apfl.alpha_mode = PFLREF_APFL_ALPHA_ADAPTIVE;
    return c;
}

/* Adaptive α, the paper's rule, η_α = 0.1: α¹ = (0.25, 0.4375),
 * α² = (0.4478363186, 0.8172119328) (the notes print 10 digits). */
START_TEST(test_notes_adaptive)
{
    /* req: apfl.alg1.l7 */
    pflref_run_result *r = run_case(adaptive_case(1), "apfl");
    ck_assert_double_eq_tol(r->alpha[0], 0.25, 1e-15);
    ck_assert_double_eq_tol(r->alpha[1], 0.4375, 1e-15);
    ck_assert_double_eq(r->v[0], 1.625);
    ck_assert_double_eq(r->w[0], 0.75);
    pflref_run_result_free(r);
    r = run_case(adaptive_case(2), "apfl");
    ck_assert_double_eq_tol(r->alpha[0], 0.4478363186, 6e-11);
    ck_assert_double_eq_tol(r->alpha[1], 0.8172119328, 6e-11);
    pflref_run_result_free(r);
}
END_TEST

/* FedTorch's order and α rule: v¹ = (0.75, −0.4783642822), α¹ = (0
 * [clipped from −0.4425], 0.260625), w¹ = 0.75. */
START_TEST(test_notes_fedtorch)
{
    tb_case *c = notes_case(1);
    c->hyper.apfl.alpha_mode = PFLREF_APFL_ALPHA_ADAPTIVE;
    c->hyper.apfl.mix_uses_w = PFLREF_APFL_MIX_W_NEW;
    c->hyper.apfl.alpha_rule = PFLREF_APFL_RULE_FEDTORCH;
    pflref_run_result *r = run_case(c, "apfl");
    ck_assert_double_eq(r->w[0], 0.75);
    ck_assert_double_eq(r->v[0], 0.75);
    ck_assert_double_eq_tol(r->v[1], -0.4783642822, 6e-11);
    ck_assert_double_eq(r->alpha[0], 0.0);
    ck_assert_double_eq_tol(r->alpha[1], 0.260625, 1e-15);
    pflref_run_result_free(r);
}
END_TEST

START_TEST(test_golden_vectors)
{
    static const char *const files[] = {
        "golden/apfl/worked-notes-6g-fixed.json",
        "golden/apfl/worked-notes-6g-adaptive.json",
        "golden/apfl/worked-notes-6g-fedtorch.json",
        "golden/apfl/worked-mlp-output-adaptive.json",
        "golden/apfl/worked-mlp-parameter-adaptive.json",
        "golden/apfl/worked-mlp-fedtorch.json",
        "golden/apfl/worked-linear-minibatch-adaptive.json",
        "golden/apfl/worked-linear-mix-new.json",
        "golden/apfl/worked-linear-pfllib.json"};
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++)
        tu_assert_golden(files[f]);
}
END_TEST

/* ------------------------------------------------- PFLlib's variant */

/* The notes' case as PFLlib runs it (apfl.variant = pfllib), α fixed at ½,
 * worked by hand (every number dyadic, compared with ==).  Round 1,
 * client 1: w 0 → 2 → 3 and, on its own loss, v 0 → 2 → 3; the overwrite
 * (1 − α) w + α v = 3.  Client 2: w = v = −1 → −1.5.  w¹ = 0.75.  Round 2,
 * client 1: w 0.75 → 2.375 → 3.1875, v 3 → 3.5 → 3.75, mixed 3.46875;
 * client 2: w 0.75 → −0.625 → −1.3125, v −1.5 → −1.75 → −1.875, mixed
 * −1.59375; w² = 0.9375, FedAvg's (PFLlib's w never sees v). */
START_TEST(test_pfllib_fixed)
{
    tb_case *c = notes_case(1);
    c->hyper.apfl.variant = PFLREF_APFL_VARIANT_PFLLIB;
    pflref_run_result *r = run_case(c, "apfl");
    ck_assert_double_eq(r->w[0], 0.75);
    ck_assert_double_eq(r->v[0], 3.0);
    ck_assert_double_eq(r->v[1], -1.5);
    pflref_run_result_free(r);
    c = notes_case(2);
    c->hyper.apfl.variant = PFLREF_APFL_VARIANT_PFLLIB;
    r = run_case(c, "apfl");
    ck_assert_double_eq(r->w[0], 0.9375);
    ck_assert_double_eq(r->v[0], 3.46875);
    ck_assert_double_eq(r->v[1], -1.59375);
    ck_assert_double_eq(r->alpha[0], 0.5);
    pflref_run_result_free(r);
}
END_TEST

/* PFLlib's α rule while v_i = w_i (round 1 of the notes' case): the inner
 * product vanishes and only the + 0.02 α term moves α, so each step
 * multiplies α by (1 − 0.02 η_α): with η_α unset (= η = ½), two steps give
 * ½ · 0.99² = 0.49005 on both clients. */
START_TEST(test_pfllib_alpha_decay)
{
    tb_case *c = notes_case(1);
    tb_preset(c, "apfl", "pfllib");
    pflref_run_result *r = run_case(c, "apfl");
    ck_assert_double_eq_tol(r->alpha[0], 0.49005, 1e-15);
    ck_assert_double_eq_tol(r->alpha[1], 0.49005, 1e-15);
    ck_assert_double_eq(r->v[0], 3.0);
    pflref_run_result_free(r);
}
END_TEST

/* apfl.weights = samples: n = (1, 3) on the notes' case gives
 * w¹ = (1 · 3 + 3 · (−1.5)) / 4 = −0.375; uniform gives 0.75. */
START_TEST(test_weights_samples)
{
    tb_case *c = tb_quadratic(1, 2);
    tb_quad(c, 0, (const double[]){1}, (const double[]){4}, 1);
    tb_quad(c, 1, (const double[]){1}, (const double[]){-2}, 3);
    c->hyper.eta = 0.5;
    c->hyper.apfl.alpha = 0.5;
    c->hyper.apfl.variant = PFLREF_APFL_VARIANT_PFLLIB;
    c->hyper.apfl.weights = PFLREF_APFL_WEIGHTS_SAMPLES;
    tb_round(c, "0 1", "0 | 0", "0 | 0");
    pflref_run_result *r = run_case(c, "apfl");
    ck_assert_double_eq(r->w[0], -0.375);
    pflref_run_result_free(r);
}
END_TEST

/* Under the pfllib preset the global model is FedAvg's with n_i weights,
 * bit for bit, whatever v and α do (notes-pfllib-as-run §2.3), and the
 * "local" model v_i of a client ends as (1 − α_i) w_i + α_i v_i, so α = 0
 * fixed makes v_i the client's last local w_i: here FedAvg's one-client
 * rounds' global. */
START_TEST(test_pfllib_global_is_fedavg)
{
    tb_case *ca = lin_case(), *cf = lin_case();
    tb_preset(ca, "apfl", "pfllib");
    ca->hyper.apfl.alpha = 0.6;
    pflref_run_result *a = run_case(ca, "apfl");
    pflref_run_result *f = run_case(cf, "fedavg");
    ck_assert_mem_eq(a->w, f->w, a->P * sizeof(double));
    pflref_run_result_free(a);
    pflref_run_result_free(f);

    tb_case *c0 = lin_problem(1), *f0 = lin_problem(1);
    tb_round(c0, "1", "0 1 | 2");
    tb_round(f0, "1", "0 1 | 2");
    c0->hyper.eta = f0->hyper.eta = 0.1;
    c0->hyper.apfl.alpha = 0.0;
    c0->hyper.apfl.variant = PFLREF_APFL_VARIANT_PFLLIB;
    a = run_case(c0, "apfl");
    f = run_case(f0, "fedavg");
    ck_assert_mem_eq(a->v + 1 * a->P, f->w, a->P * sizeof(double));
    pflref_run_result_free(a);
    pflref_run_result_free(f);
}
END_TEST

/* ------------------------------------------------------------ properties */

/* α fixed at 0: v never moves (= w⁰), w is FedAvg with uniform weights
 * bit for bit, and the personalized model is the global one. */
START_TEST(test_alpha0_is_fedavg)
{
    /* req: apfl.alg1.l4, apfl.alg1.l5, apfl.alg1.l9 */
    tb_case *ca = lin_case(), *cf = lin_case();
    ca->hyper.apfl.alpha = 0.0;
    cf->hyper.fedavg.weights = PFLREF_FEDAVG_WEIGHTS_UNIFORM;
    pflref_run_result *a = run_case(ca, "apfl");
    pflref_run_result *f = run_case(cf, "fedavg");
    const size_t P = a->P;
    ck_assert_mem_eq(a->w, f->w, P * sizeof(double));
    for (size_t i = 0; i < a->N; i++)
        ck_assert_mem_eq(a->v + i * P, a->w0, P * sizeof(double));
    for (size_t i = 0; i < a->N; i++)
        ck_assert_double_eq(a->eval[2].train[i].loss,
                            a->eval[0].train[i].loss);
    pflref_run_result_free(a);
    pflref_run_result_free(f);
}
END_TEST

/* α fixed at 1: v is the local-only model bit for bit, and the
 * personalized model is v. */
START_TEST(test_alpha1_is_local)
{
    /* req: apfl.alg1.l6 */
    tb_case *ca = lin_case();
    ca->hyper.apfl.alpha = 1.0;
    pflref_run_result *a = run_case(ca, "apfl");
    pflref_run_result *l = run_case(lin_case(), "local");
    ck_assert_mem_eq(a->v, l->v, a->N * a->P * sizeof(double));
    for (size_t i = 0; i < a->N; i++)
        ck_assert_double_eq(a->eval[2].train[i].loss,
                            a->eval[1].train[i].loss);
    pflref_run_result_free(a);
    pflref_run_result_free(l);
}
END_TEST

/* The projection keeps α in [0, 1] at every step, with η_α large enough to
 * push it out (both bounds are reached). */
typedef struct {
    size_t notes, below, at_zero, at_one;
} alpha_watch;

static void watch_alpha(void *ctx, const pflref_event *ev)
{
    alpha_watch *w = ctx;
    if (ev->kind != PFLREF_EV_NOTE || strcmp(ev->name, "alpha") != 0)
        return;
    w->notes++;
    const double a = ev->value[0];
    if (!(a >= 0.0 && a <= 1.0))
        w->below++;
    w->at_zero += a == 0.0;
    w->at_one += a == 1.0;
}

START_TEST(test_projection)
{
    /* req: apfl.alg1.l7 */
    alpha_watch watch = {0, 0, 0, 0};
    const pflref_trace trace = {watch_alpha, &watch};
    tb_case *c = lin_case();
    c->hyper.apfl.alpha = 0.5;
    c->hyper.apfl.eta_alpha = 40.0;
    c->hyper.apfl.alpha_mode = PFLREF_APFL_ALPHA_ADAPTIVE;
    pflref_run_result *r = tb_run(c, "apfl", &trace);
    ck_assert_uint_eq(watch.notes, 17);   /* one per step: 5 + 5 + 7 */
    ck_assert_uint_eq(watch.below, 0);
    ck_assert_msg(watch.at_zero + watch.at_one > 0,
                  "η_α = 40 never reached a bound: the test lost its point");
    for (size_t i = 0; i < r->N; i++)
        ck_assert(r->alpha[i] >= 0.0 && r->alpha[i] <= 1.0);
    pflref_run_result_free(r);
    tb_free(c);
}
END_TEST

/* On a model linear in its parameters the output mixture is the parameter
 * mixture: the two switches agree up to rounding, adaptive α included. */
START_TEST(test_output_equals_parameter_linear)
{
    static const int mix[2] = {PFLREF_APFL_MIX_PARAMETER,
                               PFLREF_APFL_MIX_OUTPUT};
    pflref_run_result *r[2];
    for (int k = 0; k < 2; k++) {
        tb_case *c = lin_case();
        c->hyper.apfl.alpha = 0.6;
        c->hyper.apfl.eta_alpha = 0.05;
        c->hyper.apfl.alpha_mode = PFLREF_APFL_ALPHA_ADAPTIVE;
        c->hyper.apfl.mix = mix[k];
        r[k] = run_case(c, "apfl");
    }
    const size_t P = r[0]->P, N = r[0]->N;
    for (size_t p = 0; p < P; p++)
        ck_assert_double_eq_tol(r[0]->w[p], r[1]->w[p], 1e-13);
    for (size_t q = 0; q < N * P; q++)
        ck_assert_double_eq_tol(r[0]->v[q], r[1]->v[q], 1e-13);
    for (size_t i = 0; i < N; i++) {
        ck_assert_double_eq_tol(r[0]->alpha[i], r[1]->alpha[i], 1e-13);
        ck_assert_double_eq_tol(r[0]->eval[2].train[i].loss,
                                r[1]->eval[2].train[i].loss, 1e-12);
    }
    /* adaptive α moved at all */
    ck_assert(r[0]->alpha[0] != 0.6);
    pflref_run_result_free(r[0]);
    pflref_run_result_free(r[1]);
}
END_TEST

/* On the mlp the two differ, and the run's personalized evaluation is
 * pflref_model_evaluate_mix of the final v_i, w, α_i. */
START_TEST(test_output_mix_mlp)
{
    tb_case *co = mlp_case(), *cp = mlp_case();
    co->hyper.apfl.mix = PFLREF_APFL_MIX_OUTPUT;
    cp->hyper.apfl.mix = PFLREF_APFL_MIX_PARAMETER;
    pflref_run_result *o = tb_run(co, "apfl", NULL);
    pflref_run_result *p = run_case(cp, "apfl");
    ck_assert_msg(fabs(o->v[0] - p->v[0]) > 1e-6,
                  "output and parameter mixing agree on the mlp");
    const pflref_problem *pr = co->problem;
    pflref_model_workspace *ws = pflref_model_workspace_alloc(&pr->model, 8);
    for (size_t i = 0; i < o->N; i++) {
        pflref_eval ev;
        ck_assert_int_eq(pflref_model_evaluate_mix(
                             &pr->model, o->v + i * o->P, o->w, o->alpha[i],
                             &pr->clients[i].train, ws, &ev),
                         PFLREF_OK);
        ck_assert_double_eq(ev.loss, o->eval[2].train[i].loss);
        ck_assert_double_eq(ev.mse, o->eval[2].train[i].mse);
    }
    pflref_model_workspace_free(ws);
    pflref_run_result_free(o);
    pflref_run_result_free(p);
    tb_free(co);
}
END_TEST

/* The mlp case with FedTorch's reading of every switch. */
static tb_case *fedtorch_mlp_case(void)
{
    tb_case *c = mlp_case();
    c->hyper.apfl.alpha_mode = PFLREF_APFL_ALPHA_ADAPTIVE;
    c->hyper.apfl.mix = PFLREF_APFL_MIX_OUTPUT;
    c->hyper.apfl.mix_uses_w = PFLREF_APFL_MIX_W_NEW;
    c->hyper.apfl.alpha_rule = PFLREF_APFL_RULE_FEDTORCH;
    return c;
}

START_TEST(test_deterministic)
{
    pflref_run_result *a = run_case(fedtorch_mlp_case(), "apfl");
    pflref_run_result *b = run_case(fedtorch_mlp_case(), "apfl");
    ck_assert_mem_eq(a->w, b->w, a->P * sizeof(double));
    ck_assert_mem_eq(a->v, b->v, a->N * a->P * sizeof(double));
    ck_assert_mem_eq(a->alpha, b->alpha, a->N * sizeof(double));
    pflref_run_result_free(a);
    pflref_run_result_free(b);
}
END_TEST

/* ------------------------------------------------------------ bad input */

START_TEST(test_errors)
{
    /* α > 1 */
    tb_case *c = notes_case(1);
    c->hyper.apfl.alpha = 1.5;
    expect_error(c, PFLREF_EINVAL, "algorithm.hyperparameters.alpha");
    /* α missing */
    c = notes_case(1);
    c->hyper.apfl.alpha = NAN;
    expect_error(c, PFLREF_EINVAL, "algorithm.hyperparameters.alpha");
    /* the quadratic model has no outputs to mix */
    c = notes_case(1);
    c->hyper.apfl.mix = PFLREF_APFL_MIX_OUTPUT;
    expect_error(c, PFLREF_EINVAL, "algorithm.switches.apfl.mix");
    /* PFLlib's variant has no mixture to configure */
    c = lin_case();
    c->hyper.apfl.alpha = 0.5;
    c->hyper.apfl.variant = PFLREF_APFL_VARIANT_PFLLIB;
    c->hyper.apfl.mix = PFLREF_APFL_MIX_OUTPUT;
    expect_error(c, PFLREF_EINVAL, "algorithm.switches.apfl.variant");
    c = notes_case(1);
    c->hyper.apfl.variant = PFLREF_APFL_VARIANT_PFLLIB;
    c->hyper.apfl.alpha_mode = PFLREF_APFL_ALPHA_ADAPTIVE;
    c->hyper.apfl.alpha_rule = PFLREF_APFL_RULE_FEDTORCH;
    expect_error(c, PFLREF_EINVAL, "algorithm.switches.apfl.variant");
    /* FedTorch's rule steps with η: eta_alpha would be ignored */
    c = notes_case(1);
    c->hyper.apfl.eta_alpha = 0.1;
    c->hyper.apfl.alpha_mode = PFLREF_APFL_ALPHA_ADAPTIVE;
    c->hyper.apfl.alpha_rule = PFLREF_APFL_RULE_FEDTORCH;
    expect_error(c, PFLREF_EINVAL, "algorithm.hyperparameters.eta_alpha");
    /* output mixing holds one batch's outputs: at most max n samples */
    c = lin_problem(0);
    c->hyper.eta = 0.1;
    c->hyper.apfl.alpha = 0.5;
    c->hyper.apfl.mix = PFLREF_APFL_MIX_OUTPUT;
    tb_round(c, "1", "0 1 2 0 1 2");
    expect_error(c, PFLREF_EINVAL, "schedule.rounds[0].batches[0][0]");
}
END_TEST

/* A step size that blows up is reported with round, client and step. */
START_TEST(test_diverge)
{
    tb_case *c = tb_quadratic(1, 2);
    tb_quad(c, 0, (const double[]){1e300}, (const double[]){4}, 1);
    tb_quad(c, 1, (const double[]){1}, (const double[]){-2}, 1);
    c->hyper.eta = 1e10;
    c->hyper.apfl.alpha = 0.5;
    tb_round(c, "0 1", "0 | 0", "0 | 0");
    pflref_error err;
    tb_run_error(c, "apfl", PFLREF_EDIVERGE, &err);
    ck_assert_int_eq(err.round, 0);
    ck_assert_int_eq(err.client, 0);
    ck_assert_int_eq(err.step, 1);
    tb_free(c);
}
END_TEST

/* ------------------------------------------------- the model functions */

static double unif(gsl_rng *r, double lo, double hi)
{
    return lo + (hi - lo) * gsl_rng_uniform(r);
}

typedef struct {
    pflref_model m;
    pflref_data D;
    double *w;
} model_case;

static model_case make_case(gsl_rng *r, pflref_model_kind kind,
                            pflref_loss loss, pflref_activation act,
                            size_t d, size_t k, size_t h, size_t n)
{
    model_case c;
    memset(&c, 0, sizeof c);
    pflref_error err;
    pflref_status st =
        kind == PFLREF_MODEL_MLP
            ? pflref_model_init_mlp(&c.m, loss, d, k, h, act, 1, 1, &err)
            : pflref_model_init(&c.m, kind, loss, d, k, h, 1, &err);
    ck_assert_msg(st == PFLREF_OK, "%s", err.message);
    c.D.n = n;
    c.D.X = malloc(n * d * sizeof(double));
    c.D.y = malloc(n * sizeof(double));
    for (size_t q = 0; q < n * d; q++)
        c.D.X[q] = unif(r, -1.5, 1.5);
    for (size_t j = 0; j < n; j++)
        c.D.y[j] = pflref_model_is_regression(&c.m)
                       ? unif(r, -2.0, 2.0)
                       : (double)gsl_rng_uniform_int(r, c.m.k);
    c.w = malloc(c.m.P * sizeof(double));
    /* A random point; a ReLU case is only compared with pflref_model_grad
     * (the same kink convention), not with differences, which a
     * pre-activation near 0 would spoil. */
    for (size_t p = 0; p < c.m.P; p++)
        c.w[p] = unif(r, -0.8, 0.8);
    return c;
}

static void free_case(model_case *c)
{
    free(c->D.X);
    free(c->D.y);
    free(c->w);
}

/* outputs → output_grad → grad_from_output is the batch gradient, and
 * the loss output_grad returns is the batch loss. */
static void check_composition(const model_case *c, const char *label)
{
    const pflref_model *m = &c->m;
    const size_t idx[] = {3, 0, 4, 4, 1};
    const size_t nb = 5, P = m->P;
    pflref_model_workspace *ws = pflref_model_workspace_alloc(m, 8);
    double *Z = malloc(nb * m->k * sizeof(double));
    double *g = malloc(P * sizeof(double)), *g_ref = malloc(P * sizeof(double));
    double loss, loss_ref;
    ck_assert_int_eq(pflref_model_outputs(m, c->w, &c->D, idx, nb, ws, Z),
                     PFLREF_OK);
    ck_assert_int_eq(pflref_model_output_grad(m, Z, &c->D, idx, nb, ws, Z,
                                              &loss),
                     PFLREF_OK);
    ck_assert_int_eq(pflref_model_grad_from_output(m, c->w, &c->D, idx, nb,
                                                   Z, ws, g),
                     PFLREF_OK);
    ck_assert_int_eq(pflref_model_grad(m, c->w, &c->D, idx, nb, ws, g_ref,
                                       &loss_ref),
                     PFLREF_OK);
    ck_assert_msg(fabs(loss - loss_ref) <= 1e-14 * (1.0 + fabs(loss_ref)),
                  "%s: loss %.17g vs %.17g", label, loss, loss_ref);
    for (size_t p = 0; p < P; p++)
        ck_assert_msg(fabs(g[p] - g_ref[p]) <= 1e-14 * (1.0 + fabs(g_ref[p])),
                      "%s: entry %zu: %.17g vs the gradient %.17g", label, p,
                      g[p], g_ref[p]);
    free(Z);
    free(g);
    free(g_ref);
    pflref_model_workspace_free(ws);
}

/* Central differences (ε = 1e-5; error ≈ ε²|f'''| + u|f|/ε ≈ 1e-10, so the
 * tolerance 1e-6 (1 + |g|) is 10⁴ above it and far below a missing term):
 *   grad_from_output: ∂/∂w_p (1/nb) Σ_j ⟨E_j, z(w; x_j)⟩ for a fixed E;
 *   output_grad:      ∂/∂Z_jc of (1/nb) Σ ℓ(Z_j; y_j) is E_jc / nb. */
#define FD_EPS 1e-5
#define FD_TOL 1e-6

static double e_dot_z(const model_case *c, const double *w, const double *E,
                      const size_t *idx, size_t nb, double *Z,
                      pflref_model_workspace *ws)
{
    ck_assert_int_eq(pflref_model_outputs(&c->m, w, &c->D, idx, nb, ws, Z),
                     PFLREF_OK);
    double s = 0.0;
    for (size_t q = 0; q < nb * c->m.k; q++)
        s += E[q] * Z[q];
    return s / (double)nb;
}

static void check_fd(gsl_rng *r, const model_case *c, const char *label)
{
    const pflref_model *m = &c->m;
    const size_t idx[] = {2, 5, 1};
    const size_t nb = 3, P = m->P, len = nb * m->k;
    pflref_model_workspace *ws = pflref_model_workspace_alloc(m, 8);
    double *E = malloc(len * sizeof(double)), *Z = malloc(len * sizeof(double));
    double *Z0 = malloc(len * sizeof(double)), *G = malloc(len * sizeof(double));
    double *g = malloc(P * sizeof(double)), *w = malloc(P * sizeof(double));
    for (size_t q = 0; q < len; q++)
        E[q] = unif(r, -2.0, 2.0);
    ck_assert_int_eq(pflref_model_grad_from_output(m, c->w, &c->D, idx, nb,
                                                   E, ws, g),
                     PFLREF_OK);
    memcpy(w, c->w, P * sizeof(double));
    for (size_t p = 0; p < P; p++) {
        w[p] = c->w[p] + FD_EPS;
        const double fp = e_dot_z(c, w, E, idx, nb, Z, ws);
        w[p] = c->w[p] - FD_EPS;
        const double fm = e_dot_z(c, w, E, idx, nb, Z, ws);
        w[p] = c->w[p];
        const double fd = (fp - fm) / (2.0 * FD_EPS);
        ck_assert_msg(fabs(fd - g[p]) <= FD_TOL * (1.0 + fabs(g[p])),
                      "%s: Jᵀe entry %zu is %.17g, differences give %.17g",
                      label, p, g[p], fd);
    }
    /* output_grad against differences of the loss in the outputs */
    for (size_t q = 0; q < len; q++)
        Z0[q] = unif(r, -2.0, 2.0);
    double loss;
    ck_assert_int_eq(pflref_model_output_grad(m, Z0, &c->D, idx, nb, ws, G,
                                              &loss),
                     PFLREF_OK);
    for (size_t q = 0; q < len; q++) {
        double fp, fm;
        memcpy(Z, Z0, len * sizeof(double));
        Z[q] = Z0[q] + FD_EPS;
        ck_assert_int_eq(pflref_model_output_grad(m, Z, &c->D, idx, nb, ws,
                                                  E, &fp),
                         PFLREF_OK);
        memcpy(Z, Z0, len * sizeof(double));
        Z[q] = Z0[q] - FD_EPS;
        ck_assert_int_eq(pflref_model_output_grad(m, Z, &c->D, idx, nb, ws,
                                                  E, &fm),
                         PFLREF_OK);
        const double fd = (fp - fm) / (2.0 * FD_EPS) * (double)nb;
        ck_assert_msg(fabs(fd - G[q]) <= FD_TOL * (1.0 + fabs(G[q])),
                      "%s: ∂ℓ/∂z entry %zu is %.17g, differences give %.17g",
                      label, q, G[q], fd);
    }
    free(E);
    free(Z);
    free(Z0);
    free(G);
    free(g);
    free(w);
    pflref_model_workspace_free(ws);
}

START_TEST(test_model_output_functions)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 2385);
    struct {
        pflref_model_kind kind;
        pflref_loss loss;
        pflref_activation act;
        size_t d, k, h;
        const char *label;
        int fd;
    } cases[] = {
        {PFLREF_MODEL_LINEAR, PFLREF_LOSS_SQUARED, PFLREF_ACT_RELU, 3, 1, 0,
         "linear squared", 1},
        {PFLREF_MODEL_LINEAR, PFLREF_LOSS_HALF_SQUARED, PFLREF_ACT_RELU, 2, 1,
         0, "linear half_squared", 1},
        {PFLREF_MODEL_SOFTMAX, PFLREF_LOSS_CROSS_ENTROPY, PFLREF_ACT_RELU, 3,
         4, 0, "softmax", 1},
        {PFLREF_MODEL_MLP, PFLREF_LOSS_CROSS_ENTROPY, PFLREF_ACT_IDENTITY, 3,
         3, 4, "mlp identity cross_entropy", 1},
        {PFLREF_MODEL_MLP, PFLREF_LOSS_SQUARED, PFLREF_ACT_IDENTITY, 2, 1, 3,
         "mlp identity squared", 1},
        {PFLREF_MODEL_MLP, PFLREF_LOSS_HALF_SQUARED, PFLREF_ACT_RELU, 2, 1, 3,
         "mlp relu half_squared", 0},
    };
    for (size_t q = 0; q < sizeof cases / sizeof cases[0]; q++) {
        model_case c = make_case(r, cases[q].kind, cases[q].loss,
                                 cases[q].act, cases[q].d, cases[q].k,
                                 cases[q].h, 6);
        check_composition(&c, cases[q].label);
        if (cases[q].fd)
            check_fd(r, &c, cases[q].label);
        free_case(&c);
    }
    gsl_rng_free(r);
}
END_TEST

/* evaluate_mix: α = 1 and α = 0 are pflref_model_evaluate of v and w bit
 * for bit; on the linear model any α gives the parameter mixture's values
 * up to rounding; on the mlp it does not. */
START_TEST(test_model_evaluate_mix)
{
    /* req: apfl.alg1.l11, apfl.eq4 */
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 716);
    for (int kind = 0; kind < 3; kind++) {
        model_case c =
            kind == 0 ? make_case(r, PFLREF_MODEL_LINEAR, PFLREF_LOSS_SQUARED,
                                  PFLREF_ACT_RELU, 3, 1, 0, 7)
            : kind == 1 ? make_case(r, PFLREF_MODEL_SOFTMAX,
                                    PFLREF_LOSS_CROSS_ENTROPY, PFLREF_ACT_RELU,
                                    2, 3, 0, 7)
                        : make_case(r, PFLREF_MODEL_MLP, PFLREF_LOSS_SQUARED,
                                    PFLREF_ACT_IDENTITY, 2, 1, 3, 7);
        const size_t P = c.m.P;
        double *v = malloc(P * sizeof(double)), *mix = malloc(P * sizeof(double));
        for (size_t p = 0; p < P; p++)
            v[p] = unif(r, -0.8, 0.8);
        /* max_batch 3 < n = 7: the chunked path */
        pflref_model_workspace *ws = pflref_model_workspace_alloc(&c.m, 3);
        pflref_eval e_mix, e_ref;
        ck_assert_int_eq(pflref_model_evaluate_mix(&c.m, v, c.w, 1.0, &c.D,
                                                   ws, &e_mix), PFLREF_OK);
        ck_assert_int_eq(pflref_model_evaluate(&c.m, v, &c.D, ws, &e_ref),
                         PFLREF_OK);
        ck_assert_double_eq(e_mix.loss, e_ref.loss);
        ck_assert_int_eq(pflref_model_evaluate_mix(&c.m, v, c.w, 0.0, &c.D,
                                                   ws, &e_mix), PFLREF_OK);
        ck_assert_int_eq(pflref_model_evaluate(&c.m, c.w, &c.D, ws, &e_ref),
                         PFLREF_OK);
        ck_assert_double_eq(e_mix.loss, e_ref.loss);
        const double a = 0.3;
        for (size_t p = 0; p < P; p++)
            mix[p] = a * v[p] + (1.0 - a) * c.w[p];
        ck_assert_int_eq(pflref_model_evaluate_mix(&c.m, v, c.w, a, &c.D, ws,
                                                   &e_mix), PFLREF_OK);
        ck_assert_int_eq(pflref_model_evaluate(&c.m, mix, &c.D, ws, &e_ref),
                         PFLREF_OK);
        if (kind == 2)
            ck_assert_msg(fabs(e_mix.loss - e_ref.loss) > 1e-6,
                          "mlp: output and parameter mixture agree");
        else if (kind == 0)
            ck_assert_double_eq_tol(e_mix.loss, e_ref.loss,
                                    1e-13 * (1.0 + e_ref.loss));
        else /* softmax: the logits are linear in the parameters too */
            ck_assert_double_eq_tol(e_mix.loss, e_ref.loss,
                                    1e-13 * (1.0 + e_ref.loss));
        ck_assert_int_eq(pflref_model_evaluate_mix(&c.m, v, c.w, NAN, &c.D,
                                                   ws, &e_mix),
                         PFLREF_EINVAL);
        pflref_model_workspace_free(ws);
        free(v);
        free(mix);
        free_case(&c);
    }
    gsl_rng_free(r);
}
END_TEST

/* The quadratic model has no outputs: every function refuses it. */
START_TEST(test_model_quadratic_has_no_outputs)
{
    pflref_model m;
    ck_assert_int_eq(pflref_model_init(&m, PFLREF_MODEL_QUADRATIC,
                                        PFLREF_LOSS_QUADRATIC, 1, 1, 0, 0,
                                        NULL),
                     PFLREF_OK);
    double a = 1.0, c = 4.0, w = 0.5, Z = 0.0, g = 0.0;
    pflref_data D = {.n = 1, .X = NULL, .y = NULL, .a = &a, .c = &c};
    pflref_model_workspace *ws = pflref_model_workspace_alloc(&m, 1);
    pflref_eval ev;
    ck_assert_int_eq(pflref_model_outputs(&m, &w, &D, NULL, 0, ws, &Z),
                     PFLREF_EINVAL);
    ck_assert_int_eq(pflref_model_output_grad(&m, &Z, &D, NULL, 0, ws, &Z,
                                              NULL),
                     PFLREF_EINVAL);
    ck_assert_int_eq(pflref_model_grad_from_output(&m, &w, &D, NULL, 0, &Z,
                                                   ws, &g),
                     PFLREF_EINVAL);
    ck_assert_int_eq(pflref_model_evaluate_mix(&m, &w, &w, 0.5, &D, ws, &ev),
                     PFLREF_EINVAL);
    pflref_model_workspace_free(ws);
}
END_TEST

Suite *apfl_suite(void)
{
    Suite *s = suite_create("apfl");
    TCase *tc = tcase_create("apfl");
    tcase_add_test(tc, test_notes_fixed);
    tcase_add_test(tc, test_notes_adaptive);
    tcase_add_test(tc, test_notes_fedtorch);
    tcase_add_test(tc, test_golden_vectors);
    tcase_add_test(tc, test_pfllib_fixed);
    tcase_add_test(tc, test_pfllib_alpha_decay);
    tcase_add_test(tc, test_weights_samples);
    tcase_add_test(tc, test_pfllib_global_is_fedavg);
    tcase_add_test(tc, test_alpha0_is_fedavg);
    tcase_add_test(tc, test_alpha1_is_local);
    tcase_add_test(tc, test_projection);
    tcase_add_test(tc, test_output_equals_parameter_linear);
    tcase_add_test(tc, test_output_mix_mlp);
    tcase_add_test(tc, test_deterministic);
    tcase_add_test(tc, test_errors);
    tcase_add_test(tc, test_diverge);
    tcase_add_test(tc, test_model_output_functions);
    tcase_add_test(tc, test_model_evaluate_mix);
    tcase_add_test(tc, test_model_quadratic_has_no_outputs);
    suite_add_tcase(s, tc);
    return s;
}
