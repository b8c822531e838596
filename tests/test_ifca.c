/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_ifca.c: IFCA (ref/algorithms/ifca.c).
 *
 * The worked example is shared/spec notes-cfl-ifca-sampling-metrics.md
 * §2.3: F_i(θ) = (θ − c_i)² (the quadratic model with a = 2),
 * c = (0.8, 1.2, 2.9, 3.1), θ = (0.5, 2.5), γ = 0.1: Option I gives
 * (0.55, 2.55), Option II with τ = 2 gives (0.68, 2.68).
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "suites.h"
#include "testutil.h"
#include "builder.h"

static const char *const VECTORS[] = {
    "golden/ifca/worked-notes-2.3-gradient.json",
    "golden/ifca/worked-notes-2.3-model.json",
    "golden/ifca/worked-partial-gradient.json",
    "golden/ifca/worked-partial-model.json",
};

START_TEST(test_worked_vectors)
{
    tu_assert_golden(VECTORS[_i]);
}
END_TEST

/* IFCA on quadratic clients F_i(θ) = (θ − c_i)² (a = 2), c_i = cs[i],
 * w⁰ = 0.5, γ = 0.1. */
static tb_case *ifca_case(const double *cs, size_t N)
{
    tb_case *c = tb_quadratic(1, N);
    for (size_t i = 0; i < N; i++)
        tb_quad(c, i, (const double[]){2}, &cs[i], 1);
    tb_w0(c, (const double[]){0.5});
    c->hyper.ifca.gamma = 0.1;
    return c;
}

static const double NOTES_C[4] = {0.8, 1.2, 2.9, 3.1};

/* The records named `name` of a run, concatenated (at most cap values). */
static size_t run_records(tb_case *c, const char *name, double *out,
                          size_t cap, pflref_run_result **res)
{
    pflref_trajectory tj;
    *res = tb_run_recorded(c, "ifca", &tj);
    size_t n = 0;
    for (size_t k = 0; k < tj.count; k++) {
        const pflref_record *rc = &tj.records[k];
        if (strcmp(rc->name, name) != 0 || rc->kind == PFLREF_EV_FINAL)
            continue;
        for (size_t q = 0; q < rc->len && n < cap; q++)
            out[n++] = tj.values[rc->offset + q];
    }
    pflref_trajectory_free(&tj);
    return n;
}

/* Notes §2.3 in both options; each client's reported model is the cluster
 * model of lowest loss at the new models. */
START_TEST(test_notes_example)
{
    /* req: ifca.alg1.l5, ifca.alg1.l8 */
    double theta[8], jhat[4];
    pflref_run_result *res;
    tb_case *c = ifca_case(NOTES_C, 4);
    c->hyper.ifca.k = 2;
    c->hyper.ifca.init_shift = 2.0;
    tb_round(c, "0 1 2 3", "0", "0", "0", "0");
    ck_assert_uint_eq(run_records(c, "j_hat", jhat, 4, &res), 4);
    ck_assert(jhat[0] == 0 && jhat[1] == 0 && jhat[2] == 1 && jhat[3] == 1);
    pflref_run_result_free(res);
    /* round_begin and server records: (0.5, 2.5), then (0.55, 2.55) */
    ck_assert_uint_eq(run_records(c, "theta", theta, 8, &res), 4);
    ck_assert(theta[0] == 0.5 && theta[1] == 2.5);
    ck_assert_msg(fabs(theta[2] - 0.55) < 1e-15 && fabs(theta[3] - 2.55) < 1e-15,
                  "θ = (%.17g, %.17g)", theta[2], theta[3]);
    ck_assert(res->v[0] == theta[2] && res->v[1] == theta[2] &&
              res->v[2] == theta[3] && res->v[3] == theta[3]);
    pflref_run_result_free(res);
    tb_free(c);

    c = ifca_case(NOTES_C, 4);
    c->hyper.ifca.k = 2;
    c->hyper.ifca.init_shift = 2.0;
    c->hyper.ifca.mode = PFLREF_IFCA_MODEL;
    tb_round(c, "0 1 2 3", "0 | 0", "0 | 0", "0 | 0", "0 | 0");
    ck_assert_uint_eq(run_records(c, "theta", theta, 8, &res), 4);
    ck_assert_msg(fabs(theta[2] - 0.68) < 1e-15 && fabs(theta[3] - 2.68) < 1e-15,
                  "θ = (%.17g, %.17g)", theta[2], theta[3]);
    pflref_run_result_free(res);
    tb_free(c);
}
END_TEST

/* Equal losses go to the lowest index: c = 1.5 is as far from 0.5 as from
 * 2.5 (losses 1 and 1, exact in fp64). */
START_TEST(test_tie_lowest_index)
{
    /* req: ifca.alg1.l5 */
    tb_case *c = ifca_case((const double[]){1.5, 1.5}, 2);
    c->hyper.ifca.k = 2;
    c->hyper.ifca.init_shift = 2.0;
    tb_round(c, "0 1", "0", "0");
    double loss[4], jhat[2];
    pflref_run_result *res;
    ck_assert_uint_eq(run_records(c, "loss", loss, 4, &res), 4);
    ck_assert(loss[0] == 1.0 && loss[1] == 1.0);
    pflref_run_result_free(res);
    run_records(c, "j_hat", jhat, 2, &res);
    ck_assert(jhat[0] == 0.0 && jhat[1] == 0.0);
    pflref_run_result_free(res);
    tb_free(c);
}
END_TEST

/* Three of the notes' clients, k = 3, one round of all three; the initial
 * models are drawn (δ = 0.25, σ = 0.5, seed 42) or given by the test. */
static tb_case *three_case(void)
{
    tb_case *c = ifca_case(NOTES_C, 3);
    c->hyper.ifca.k = 3;
    tb_round(c, "0 1 2", "0", "0", "0");
    return c;
}

static tb_case *drawn_case(void)
{
    tb_case *c = three_case();
    c->hyper.ifca.init_shift = 0.25;
    c->hyper.ifca.init_sd = 0.5;
    c->hyper.ifca.init_seed = 42;
    return c;
}

/* Drawn initial models: θ_j⁰ = w⁰ + j δ + σ ξ_j with ξ from
 * pflref_draw_gaussian(seed), recorded as NOTE theta0. */
START_TEST(test_drawn_init)
{
    tb_case *c = drawn_case();
    double theta0[3], xi[3];
    pflref_run_result *res;
    ck_assert_uint_eq(run_records(c, "theta0", theta0, 3, &res), 3);
    pflref_error err;
    ck_assert_int_eq(pflref_draw_gaussian(42, 0.5, xi, 3, &err), PFLREF_OK);
    for (int j = 0; j < 3; j++)
        ck_assert_msg(theta0[j] == xi[j] + (0.5 + j * 0.25),
                      "θ_%d⁰ = %.17g", j, theta0[j]);
    pflref_run_result_free(res);
    tb_free(c);
}
END_TEST

/* Randomness is data: the drawn θ_j⁰ of a run (its result's theta0), given
 * back as the initial cluster models (hyper.ifca.theta0) without δ and σ,
 * replay the run bit for bit. */
START_TEST(test_given_init_replays)
{
    /* req: ifca.alg1.l1 */
    tb_case *c = drawn_case();
    pflref_run_result *drawn = tb_run(c, "ifca", NULL);
    ck_assert_uint_eq(drawn->n_theta0, 3);
    tb_case *given = three_case();
    given->hyper.ifca.theta0 = drawn->theta0;
    pflref_run_result *replay = tb_run(given, "ifca", NULL);
    ck_assert_uint_eq(replay->n_theta0, 3);
    ck_assert_mem_eq(replay->theta0, drawn->theta0, 3 * sizeof(double));
    ck_assert_mem_eq(replay->v, drawn->v, 3 * sizeof(double));
    /* the models are not all equal, so dropping them would change v */
    ck_assert(drawn->theta0[0] != drawn->theta0[1]);
    pflref_run_result_free(replay);
    tb_free(given);
    pflref_run_result_free(drawn);
    tb_free(c);
}
END_TEST

/* Two populations, c near 1 (clients 0..2) and near 4 (clients 3..5),
 * initial models 0 and 5: after 30 gradient rounds each cluster model is
 * its population's mean optimum and every client reports its own. */
START_TEST(test_recovers_populations)
{
    /* req: ifca.alg1.l9, ifca.alg1.l10 */
    tb_case *c = ifca_case((const double[]){0.9, 1.0, 1.1, 3.8, 4.0, 4.2}, 6);
    tb_w0(c, (const double[]){0});
    c->hyper.ifca.gamma = 0.5;
    c->hyper.ifca.k = 2;
    c->hyper.ifca.init_shift = 5.0;
    tb_generate(c, 30, 1, 0);
    pflref_run_result *res = tb_run(c, "ifca", NULL);
    for (int i = 0; i < 6; i++)
        ck_assert_msg(fabs(res->v[i] - (i < 3 ? 1.0 : 4.0)) < 1e-6,
                      "client %d: v = %.17g", i, res->v[i]);
    pflref_run_result_free(res);
    tb_free(c);
}
END_TEST

/* Two of the notes' clients, client 0 with two batches, client 1 one. */
static tb_case *uneven_case(size_t k, int mode)
{
    tb_case *c = ifca_case(NOTES_C, 2);
    c->hyper.ifca.k = k;
    c->hyper.ifca.mode = mode;
    tb_round(c, "0 1", "0 | 0", "0");
    return c;
}

START_TEST(test_errors)
{
    pflref_error err;
    /* Option I takes one batch per machine */
    tb_case *c = uneven_case(2, PFLREF_IFCA_GRADIENT);
    tb_run_error(c, "ifca", PFLREF_EINVAL, &err);
    ck_assert_str_eq(err.where, "schedule.rounds[0].batches[0]");
    tb_free(c);
    /* ... Option II any number */
    c = uneven_case(2, PFLREF_IFCA_MODEL);
    pflref_run_result_free(tb_run(c, "ifca", NULL));
    tb_free(c);
    /* k ≤ N */
    c = uneven_case(3, PFLREF_IFCA_MODEL);
    tb_run_error(c, "ifca", PFLREF_EINVAL, &err);
    ck_assert_str_eq(err.where, "algorithm.hyperparameters.ifca.k");
    tb_free(c);
    /* k and γ are required */
    c = uneven_case(PFLREF_INT_UNSET, PFLREF_IFCA_MODEL);
    tb_run_error(c, "ifca", PFLREF_EINVAL, &err);
    ck_assert_str_eq(err.where, "algorithm.hyperparameters.ifca.k");
    tb_free(c);
    c = uneven_case(2, PFLREF_IFCA_MODEL);
    c->hyper.ifca.gamma = NAN;
    tb_run_error(c, "ifca", PFLREF_EINVAL, &err);
    ck_assert_str_eq(err.where, "algorithm.hyperparameters.gamma");
    tb_free(c);
    /* given initial models take no spread σ (nor shift δ) of drawn ones;
     * how a spec gives them (init.cluster_models) is tested in
     * tests/test_spec.c */
    c = ifca_case(NOTES_C, 3);
    tb_round(c, "0 1 2", "0", "0", "0");
    c->hyper.ifca.k = 2;
    c->hyper.ifca.init_sd = 1.0;
    c->hyper.ifca.theta0 = (const double[]){0, 1};
    tb_run_error(c, "ifca", PFLREF_EINVAL, &err);
    ck_assert_str_eq(err.where, "init.cluster_models");
    ck_assert_ptr_nonnull(strstr(err.message, "ifca.init_sd"));
    tb_free(c);
}
END_TEST

Suite *ifca_suite(void)
{
    Suite *s = suite_create("ifca");
    TCase *tc = tcase_create("ifca");
    tcase_add_loop_test(tc, test_worked_vectors, 0,
                        (int)(sizeof VECTORS / sizeof VECTORS[0]));
    tcase_add_test(tc, test_notes_example);
    tcase_add_test(tc, test_tie_lowest_index);
    tcase_add_test(tc, test_drawn_init);
    tcase_add_test(tc, test_given_init_replays);
    tcase_add_test(tc, test_recovers_populations);
    tcase_add_test(tc, test_errors);
    suite_add_tcase(s, tc);
    return s;
}
