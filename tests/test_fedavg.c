/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_fedavg.c: FedAvg (ref/algorithms/fedavg.c) against its golden
 * vectors (golden/fedavg/, exact fractions from the notes' worked example)
 * and its properties. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "suites.h"
#include "testutil.h"
#include "builder.h"

static const char *const VECTORS[] = {
    "golden/fedavg/worked-samples.json",
    "golden/fedavg/worked-uniform.json",
    "golden/fedavg/worked-all-keep-old.json",
    "golden/fedavg/worked-ragged-batch.json",
    "golden/fedavg/worked-full-batch-two-epochs.json",
    "golden/fedavg/worked-generated-m.json",
};

/* Every worked-example vector is reproduced: every expected quantity was
 * emitted and is within tolerance. */
START_TEST(test_worked_vectors)
{
    /* req: fedavg.alg1.l7, fedavg.alg1.l9, fedavg.alg1.l14 */
    tu_assert_golden(VECTORS[_i]);
}
END_TEST

/* Replace the first occurrence of `from` in text by `to` (malloc'd). */
static char *replace(const char *text, const char *from, const char *to)
{
    const char *at = strstr(text, from);
    ck_assert_msg(at != NULL, "\"%s\" not found", from);
    size_t n = strlen(text) - strlen(from) + strlen(to) + 1;
    char *out = malloc(n);
    ck_assert_ptr_nonnull(out);
    size_t head = (size_t)(at - text);
    memcpy(out, text, head);
    strcpy(out + head, to);
    strcat(out, at + strlen(from));
    return out;
}

/* An edited spec no longer matches the vector's recorded content hash;
 * these tests edit specs on purpose, so the hash is recomputed
 * (tests/test_tamper.c edits vectors without it). */
static char *edit_spec(const char *text, const char *from, const char *to)
{
    char *edited = replace(text, from, to);
    char *hashed = tu_vector_hashed(edited, 1);
    free(edited);
    return hashed;
}

/* The samples vector detects uniform weights: the first divergence is the
 * server's w after round 0 (3.375 instead of 3.7). */
START_TEST(test_wrong_weights_detected)
{
    /* req: fedavg.alg1.l8, fedavg.alg1.l9 */
    char *path = tu_repo_path("golden/fedavg/worked-samples.json");
    char *text = tu_read(path);
    ck_assert_ptr_nonnull(text);
    char *bad = edit_spec(text, "\"fedavg.weights\": \"samples\"",
                        "\"fedavg.weights\": \"uniform\"");
    pflref_golden_report rep;
    pflref_error err;
    ck_assert_int_eq(pflref_golden_verify(bad, strlen(bad), NULL, &rep, &err),
                     PFLREF_OK);
    ck_assert_msg(rep.mismatches > 0, "uniform weights passed a samples vector");
    ck_assert_str_eq(rep.first.event, "server");
    ck_assert_str_eq(rep.first.name, "w");
    ck_assert_int_eq(rep.first.round, 0);
    ck_assert_double_eq_tol(rep.first.expected, 3.7, 1e-15);
    ck_assert_double_eq_tol(rep.first.got, 3.375, 1e-15);
    free(bad);
    free(text);
    free(path);
}
END_TEST

/* An off-by-one in local steps (one step fewer) is caught at the missing
 * step record of client 0. */
START_TEST(test_missing_step_detected)
{
    /* req: fedavg.alg1.l13, fedavg.alg1.l14 */
    char *path = tu_repo_path("golden/fedavg/worked-full-batch-two-epochs.json");
    char *text = tu_read(path);
    ck_assert_ptr_nonnull(text);
    /* Two epochs of one full batch → one. */
    char *bad = edit_spec(text, "[\n       [\n        0,\n        1\n       ],\n"
                              "       [\n        0,\n        1\n       ]\n      ]",
                        "[\n       [\n        0,\n        1\n       ]\n      ]");
    pflref_golden_report rep;
    pflref_error err;
    ck_assert_int_eq(pflref_golden_verify(bad, strlen(bad), NULL, &rep, &err),
                     PFLREF_OK);
    ck_assert_msg(rep.mismatches > 0, "one step fewer passed");
    ck_assert_str_eq(rep.first.event, "step");
    ck_assert_int_eq(rep.first.step, 2);
    ck_assert_int_eq(rep.first.missing, 1);
    free(bad);
    free(text);
    free(path);
}
END_TEST

/* Three identical clients: X = [[2.385, −0.71], [0.33, 1.9], [−1.2, 0.45]],
 * y = (1.7, −0.3, 2.2), squared loss, η = 0.05; T rounds of E steps of
 * minibatches of 2. */
static tb_case *identical_case(size_t T, size_t E)
{
    static const double X[6] = {2.385, -0.71, 0.33, 1.9, -1.2, 0.45};
    static const double y[3] = {1.7, -0.3, 2.2};
    const pflref_model m = tb_model(PFLREF_MODEL_LINEAR, PFLREF_LOSS_SQUARED,
                                    2, 1, 0, 0);
    tb_case *c = tb_new(&m, 3);
    for (size_t i = 0; i < 3; i++)
        tb_train(c, i, 3, X, y);
    c->hyper.eta = 0.05;
    tb_generate(c, T, E, 2);
    return c;
}

/* With identical clients, FedAvg is local SGD on one client: T rounds of
 * E steps from the same start equal T·E steps of the local-only run (each
 * aggregation averages identical vectors, exact up to the sum's rounding). */
START_TEST(test_identical_clients_is_local_sgd)
{
    /* req: fedavg.alg1.l14, fedavg.alg1.l15 */
    tb_case *fed = identical_case(3, 2), *loc = identical_case(1, 6);
    pflref_run_result *ra = tb_run(fed, "fedavg", NULL);
    pflref_run_result *rb = tb_run(loc, "local", NULL);
    for (size_t p = 0; p < 2; p++)
        ck_assert_msg(fabs(ra->w[p] - rb->v[p]) <= 1e-14 * fabs(rb->v[p]),
                      "w[%zu] = %.17g, local v = %.17g", p, ra->w[p], rb->v[p]);
    pflref_run_result_free(ra);
    pflref_run_result_free(rb);
    tb_free(fed);
    tb_free(loc);
}
END_TEST

/* An overflowing iterate stops the run with PFLREF_EDIVERGE naming the
 * round, client and local step: f_0 = ½(w − 0)², f_1 = ½·1e200 (w − 1e200)²,
 * η = 1e200; client 0's first step is finite (w = 0), client 1's first
 * gradient 1e200·(0 − 1e200) overflows. */
START_TEST(test_divergence_located)
{
    tb_case *c = tb_quadratic(1, 2);
    tb_quad(c, 0, (const double[]){1}, (const double[]){0}, 1);
    tb_quad(c, 1, (const double[]){1e200}, (const double[]){1e200}, 1);
    c->hyper.eta = 1e200;
    tb_generate(c, 2, 3, 0);
    pflref_error err;
    tb_run_error(c, "fedavg", PFLREF_EDIVERGE, &err);
    ck_assert_int_eq(err.round, 0);
    ck_assert_int_eq(err.client, 1);
    ck_assert_int_eq(err.step, 1);
    ck_assert_ptr_nonnull(strstr(err.message, "round 0, client 1, local step 1"));
    tb_free(c);
}
END_TEST

/* A model whose block lies outside its P entries (filled by hand, not by
 * pflref_model_init) is refused before anything runs: PFLREF_EINVAL at
 * "problem.model" (the run reads and writes every block's entries). */
START_TEST(test_model_blocks_outside_refused)
{
    tb_case *c = tb_quadratic(2, 2);
    for (size_t i = 0; i < 2; i++)
        tb_quad(c, i, (const double[]){1, 1}, (const double[]){0, 1}, 1);
    c->hyper.eta = 0.1;
    tb_generate(c, 1, 1, 0);
    pflref_model *m = &c->problem->model;
    m->blocks[m->nblocks - 1].size += 1;  /* one entry past P */
    pflref_error err;
    tb_run_error(c, "fedavg", PFLREF_EINVAL, &err);
    ck_assert_str_eq(err.where, "problem.model");
    ck_assert_ptr_nonnull(strstr(err.message, "inside its 2 parameters"));
    tb_free(c);
}
END_TEST

/* --trace's m_t (Alg. 1 l. 8), an intermediate: printed before the
 * server's w_{t+1}, recorded at no level.  n = (2, 3, 7); S_0 = {0, 2}:
 * m_0 = 9, S_1 = {1, 2}: m_1 = 10; under fedavg.weights = uniform the
 * run forms no m_t and none is printed. */
typedef struct {
    double m[4];
    long round[4];
    size_t n, before_server;
} m_t_seen;

static void see_m_t(void *ctx, const pflref_event *ev)
{
    m_t_seen *o = ctx;
    if (ev->kind == PFLREF_EV_INTERMEDIATE && strcmp(ev->name, "m_t") == 0 &&
        o->n < 4) {
        o->m[o->n] = ev->value[0];
        o->round[o->n++] = ev->round;
    } else if (ev->kind == PFLREF_EV_SERVER && o->n > 0 &&
               o->round[o->n - 1] == ev->round)
        o->before_server++;
}

START_TEST(test_trace_m_t)
{
    /* req: fedavg.alg1.l8 */
    for (int uniform = 0; uniform < 2; uniform++) {
        tb_case *c = tb_quadratic(1, 3);
        tb_quad(c, 0, (const double[]){1}, (const double[]){0}, 2);
        tb_quad(c, 1, (const double[]){2}, (const double[]){1}, 3);
        tb_quad(c, 2, (const double[]){0.5}, (const double[]){-1}, 7);
        c->hyper.eta = 0.25;
        c->hyper.fedavg.weights = uniform ? PFLREF_FEDAVG_WEIGHTS_UNIFORM
                                          : PFLREF_FEDAVG_WEIGHTS_SAMPLES;
        tb_round(c, "0 2", "0", "0");
        tb_round(c, "1 2", "0", "0");
        m_t_seen o = {.n = 0};
        const pflref_trace tr = {see_m_t, &o};
        pflref_run_result *res = tb_run(c, "fedavg", &tr);
        if (uniform) {
            ck_assert_uint_eq(o.n, 0);
        } else {
            ck_assert_uint_eq(o.n, 2);
            ck_assert_int_eq(o.round[0], 0);
            ck_assert_int_eq(o.round[1], 1);
            ck_assert_double_eq(o.m[0], 9.0);
            ck_assert_double_eq(o.m[1], 10.0);
            ck_assert_uint_eq(o.before_server, 2);
        }
        pflref_run_result_free(res);
        tb_free(c);
    }
}
END_TEST

/* --trace's l. 4 (m ← max(C·K, 1)) on a generated schedule: after each
 * round's start, K = 3 clients, C = m/K = 2/3 and m = clients_per_round =
 * 2, once per round (three rounds); on the same run with its schedule
 * given (the result's record) there is no l. 4 and none is printed. */
typedef struct {
    double K[4], C[4], m[4];
    long round[4];
    size_t n, others, after_begin;
    long begun;
} m_seen;

static void see_m(void *ctx, const pflref_event *ev)
{
    m_seen *o = ctx;
    if (ev->kind == PFLREF_EV_ROUND_BEGIN) {
        o->begun = ev->round;
        return;
    }
    if (ev->kind != PFLREF_EV_INTERMEDIATE || ev->len != 1)
        return;
    if (strcmp(ev->name, "m") == 0 && o->n < 4) {
        o->m[o->n] = ev->value[0];
        o->after_begin += o->begun == ev->round;
        o->round[o->n++] = ev->round;
    } else if (strcmp(ev->name, "K") == 0 && o->n < 4) {
        o->K[o->n] = ev->value[0];
    } else if (strcmp(ev->name, "C") == 0 && o->n < 4) {
        o->C[o->n] = ev->value[0];
    } else if (strcmp(ev->name, "m_t") != 0) {
        o->others++;
    }
}

START_TEST(test_trace_m_generated)
{
    /* req: fedavg.alg1.l4 */
    char *path = tu_repo_path("golden/fedavg/worked-generated-m.json");
    char *text = tu_read(path);
    ck_assert_ptr_nonnull(text);
    pflref_spec *spec = NULL;
    pflref_error err;
    ck_assert_int_eq(pflref_golden_spec(text, strlen(text), NULL, &spec, &err),
                     PFLREF_OK);
    m_seen o = {.n = 0, .begun = -1};
    const pflref_trace tr = {see_m, &o};
    pflref_run_result *res = NULL;
    ck_assert_int_eq(pflref_spec_run(spec, &tr, &res, &err), PFLREF_OK);
    ck_assert_uint_eq(o.n, 3);
    ck_assert_uint_eq(o.after_begin, 3);
    ck_assert_uint_eq(o.others, 0);
    for (size_t t = 0; t < 3; t++) {
        ck_assert_int_eq(o.round[t], (long)t);
        ck_assert_double_eq(o.K[t], 3.0);
        ck_assert_double_eq(o.C[t], 2.0 / 3.0);
        ck_assert_double_eq(o.m[t], 2.0);
    }
    pflref_run_result_free(res);
    /* the same schedule given: no l. 4 */
    spec->schedule_given = 1;
    m_seen g = {.n = 0, .begun = -1};
    const pflref_trace tg = {see_m, &g};
    ck_assert_int_eq(pflref_spec_run(spec, &tg, &res, &err), PFLREF_OK);
    ck_assert_uint_eq(g.n, 0);
    pflref_run_result_free(res);
    pflref_spec_free(spec);
    free(text);
    free(path);
}
END_TEST

Suite *fedavg_suite(void)
{
    Suite *s = suite_create("fedavg");
    TCase *tc = tcase_create("fedavg");
    tcase_add_loop_test(tc, test_worked_vectors, 0,
                        (int)(sizeof VECTORS / sizeof VECTORS[0]));
    tcase_add_test(tc, test_wrong_weights_detected);
    tcase_add_test(tc, test_missing_step_detected);
    tcase_add_test(tc, test_identical_clients_is_local_sgd);
    tcase_add_test(tc, test_divergence_located);
    tcase_add_test(tc, test_model_blocks_outside_refused);
    tcase_add_test(tc, test_trace_m_t);
    tcase_add_test(tc, test_trace_m_generated);
    suite_add_tcase(s, tc);
    return s;
}
