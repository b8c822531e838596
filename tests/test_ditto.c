/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_ditto.c: Ditto (ref/algorithms/ditto.c).
 *
 * The worked example is shared/spec notes §3(g): f_1 = ½(x − 4)²,
 * f_2 = ½(x + 2)², λ = 1, η = 1/2, s = 2 (two batches a round), w⁰ = 0,
 * uniform mean.  All its numbers are dyadic, so fp64 is exact and the tests
 * compare with ==.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "suites.h"
#include "testutil.h"
#include "builder.h"

/* The notes' problem: f_i = ½(x − c_i)², c = (4, −2), sample counts n
 * (NULL: 1 and 1); η = 1/2, λ = lambda. */
static tb_case *notes_case(const size_t *n, double lambda)
{
    tb_case *c = tb_quadratic(1, 2);
    tb_quad(c, 0, (const double[]){1}, (const double[]){4}, n ? n[0] : 1);
    tb_quad(c, 1, (const double[]){1}, (const double[]){-2}, n ? n[1] : 1);
    c->hyper.lambda = lambda;
    c->hyper.eta = 0.5;
    return c;
}

/* The notes' schedules: both clients, two batches a round, once or twice;
 * or both, then client 0 alone. */
static void one_round(tb_case *c)
{
    tb_round(c, "0 1", "0 | 0", "0 | 0");
}

static void both_twice(tb_case *c)
{
    tb_round(c, "0 1", "0 | 0", "0 | 0");
    tb_round(c, "0 1", "0 | 0", "0 | 0");
}

static void second_only_0(tb_case *c)
{
    tb_round(c, "0 1", "0 | 0", "0 | 0");
    tb_round(c, "0", "0 | 0");
}

/* Run Ditto on c (freed here): the final w and both v. */
static void run_notes(tb_case *c, double *w, double v[2])
{
    pflref_run_result *res = tb_run(c, "ditto", NULL);
    *w = res->w[0];
    v[0] = res->v[0];
    v[1] = res->v[1];
    pflref_run_result_free(res);
    tb_free(c);
}

/* Notes §3(g): w¹ = 0.75, v = (2, −1); w² = 0.9375, v = (2.375, −0.625). */
START_TEST(test_notes)
{
    /* req: ditto.alg1.l5, ditto.alg1.l7, ditto.alg1.l9 */
    double w, v[2];
    tb_case *c = notes_case(NULL, 1.0);
    one_round(c);
    run_notes(c, &w, v);
    ck_assert_double_eq(w, 0.75);
    ck_assert_double_eq(v[0], 2.0);
    ck_assert_double_eq(v[1], -1.0);
    c = notes_case(NULL, 1.0);
    both_twice(c);
    run_notes(c, &w, v);
    ck_assert_double_eq(w, 0.9375);
    ck_assert_double_eq(v[0], 2.375);
    ck_assert_double_eq(v[1], -0.625);
    /* the TF code's simple mean agrees here: n = (1, 1) */
    c = notes_case(NULL, 1.0);
    c->hyper.ditto.weights = PFLREF_DITTO_WEIGHTS_UNIFORM;
    both_twice(c);
    run_notes(c, &w, v);
    ck_assert_double_eq(w, 0.9375);
}
END_TEST

/* An unselected device keeps its v: S_2 = {0} gives w² = 3.1875 and
 * v = (2.375, −1). */
START_TEST(test_unselected_keeps_v)
{
    /* req: ditto.alg1.l4, ditto.alg1.l10 */
    double w, v[2];
    tb_case *c = notes_case(NULL, 1.0);
    second_only_0(c);
    run_notes(c, &w, v);
    ck_assert_double_eq(w, 3.1875);
    ck_assert_double_eq(v[0], 2.375);
    ck_assert_double_eq(v[1], -1.0);
}
END_TEST

/* A linear model (d = 2, bias, half_squared) with minibatches: two
 * clients, two rounds of ragged given batches; η = 0.3, λ = 0. */
static tb_case *linear_case(void)
{
    const pflref_model m = tb_model(PFLREF_MODEL_LINEAR,
                                    PFLREF_LOSS_HALF_SQUARED, 2, 1, 0, 1);
    tb_case *c = tb_new(&m, 2);
    tb_train(c, 0, 3,
             (const double[]){0.912, -1.347, -0.284, 0.671, 1.563, 0.238},
             (const double[]){-0.775, 1.409, 0.236});
    tb_train(c, 1, 2, (const double[]){-1.426, 0.357, 0.689, -0.942},
             (const double[]){0.518, -1.263});
    c->hyper.eta = 0.3;
    c->hyper.lambda = 0.0;
    tb_round(c, "0 1", "0 1 | 2", "1 | 0 | 0 1");
    tb_round(c, "0", "2 0 | 1");
    return c;
}

/* λ = 0: v follows plain local SGD, bit for bit the "local" algorithm's
 * iterates on the same schedule (notes: v = (3, −1.5) after round 1), on a
 * linear model with minibatches too. */
START_TEST(test_lambda0_is_local)
{
    /* req: ditto.alg1.l7, ditto.eq2 */
    double w, v[2];
    tb_case *c = notes_case(NULL, 0.0);
    one_round(c);
    run_notes(c, &w, v);
    ck_assert_double_eq(v[0], 3.0);
    ck_assert_double_eq(v[1], -1.5);

    tb_case *sd = linear_case(), *sl = linear_case();
    pflref_run_result *rd = tb_run(sd, "ditto", NULL);
    pflref_run_result *rl = tb_run(sl, "local", NULL);
    for (size_t j = 0; j < 2 * rd->P; j++)
        ck_assert_msg(rd->v[j] == rl->v[j], "entry %zu: ditto %.17g, local %.17g",
                      j, rd->v[j], rl->v[j]);
    pflref_run_result_free(rd);
    pflref_run_result_free(rl);
    tb_free(sd);
    tb_free(sl);
}
END_TEST

/* Large λ pulls v to w^t: after 200 personal steps on f = ½ a (x − c)² the
 * personal model is the prox point (a c + λ w)/(a + λ) with w = w⁰ = 0.25
 * (one round), whose distance to w is a|c − w|/(a + λ) → 0 as λ grows. */
START_TEST(test_large_lambda)
{
    /* req: ditto.eq2 */
    const double a = 2.385, c = 1.5, w0 = 0.25;
    const double lambdas[3] = {1.0, 100.0, 1e4};
    double prev = INFINITY;
    for (int l = 0; l < 3; l++) {
        tb_case *dc = tb_quadratic(1, 1);
        tb_quad(dc, 0, &a, &c, 1);
        tb_w0(dc, &w0);
        dc->hyper.lambda = lambdas[l];
        dc->hyper.eta = 1.0 / (a + lambdas[l]);
        tb_generate(dc, 1, 200, 0);
        pflref_run_result *res = tb_run(dc, "ditto", NULL);
        const double gap = fabs(res->v[0] - w0);
        const double expect = a * fabs(c - w0) / (a + lambdas[l]);
        ck_assert_msg(fabs(gap - expect) <= 1e-12,
                      "λ = %g: |v − w| = %.17g, expected %.17g", lambdas[l],
                      gap, expect);
        ck_assert(gap < prev);
        prev = gap;
        pflref_run_result_free(res);
        tb_free(dc);
    }
    ck_assert(prev < 1e-3);
}
END_TEST

/* ditto.prox = norm: gradient λ (v − w)/|v − w| (0 at v = w).  One round,
 * w = 0, client 0: v: 0 → 0 − ½(−4 + 0) = 2 → 2 − ½((2 − 4) + 1) = 2.5. */
START_TEST(test_prox_norm)
{
    double w, v[2];
    tb_case *c = notes_case(NULL, 1.0);
    c->hyper.ditto.prox = PFLREF_DITTO_PROX_NORM;
    one_round(c);
    run_notes(c, &w, v);
    ck_assert_double_eq(v[0], 2.5);
    /* client 1: 0 − ½(2 + 0) = −1, then −1 − ½((−1 + 2) + (−1)) = −1 */
    ck_assert_double_eq(v[1], -1.0);
    ck_assert_double_eq(w, 0.75);  /* the global copies do not see v */
}
END_TEST

/* ditto.prox_ref = moving with interleaved order: the reference of the
 * second personal step is the global copy after one step (2 for client 0):
 * v: 0 → 2 (ref 0) → 2 − ½((2 − 4) + (2 − 2)) = 3.  personal_first: the
 * global copy has not moved yet, so the reference stays w^t = 0 and v = 2,
 * the round_start value. */
START_TEST(test_prox_ref_and_order)
{
    /* req: ditto.alg1.l6 */
    double w, v[2];
    tb_case *c = notes_case(NULL, 1.0);
    c->hyper.ditto.prox_ref = PFLREF_DITTO_REF_MOVING;
    one_round(c);
    run_notes(c, &w, v);
    ck_assert_double_eq(v[0], 3.0);
    ck_assert_double_eq(v[1], -1.5);
    c = notes_case(NULL, 1.0);
    c->hyper.ditto.prox_ref = PFLREF_DITTO_REF_MOVING;
    c->hyper.ditto.order = PFLREF_DITTO_PERSONAL_FIRST;
    one_round(c);
    run_notes(c, &w, v);
    ck_assert_double_eq(v[0], 2.0);
    ck_assert_double_eq(v[1], -1.0);
    /* with the round-start reference the order changes nothing */
    c = notes_case(NULL, 1.0);
    c->hyper.ditto.order = PFLREF_DITTO_PERSONAL_FIRST;
    both_twice(c);
    run_notes(c, &w, v);
    ck_assert_double_eq(w, 0.9375);
    ck_assert_double_eq(v[0], 2.375);
}
END_TEST

/* ditto.weights: samples (n_k/Σn_j) vs uniform with n = (1, 3): the round-1
 * global copies are 3 and −1.5, so w¹ = (3 − 4.5)/4 = −0.375 vs 0.75. */
START_TEST(test_weights)
{
    /* req: ditto.alg1.l8, ditto.alg1.l9 */
    static const size_t n[2] = {1, 3};
    tb_case *s1 = notes_case(n, 1.0), *s2 = notes_case(n, 1.0);
    s2->hyper.ditto.weights = PFLREF_DITTO_WEIGHTS_UNIFORM;
    one_round(s1);
    one_round(s2);
    pflref_run_result *r1 = tb_run(s1, "ditto", NULL);
    pflref_run_result *r2 = tb_run(s2, "ditto", NULL);
    ck_assert_double_eq(r1->w[0], -0.375);
    ck_assert_double_eq(r2->w[0], 0.75);
    pflref_run_result_free(r1);
    pflref_run_result_free(r2);
    tb_free(s1);
    tb_free(s2);
}
END_TEST

/* Three devices of distinct data and sample counts, listed in the order
 * `order`; λ = 0.7, η = 0.2, three generated rounds of three steps. */
static tb_case *order_case(const size_t order[3])
{
    static const double a[3] = {2.385, 0.75, 1.3}, c[3] = {1.5, -1.25, 0.7};
    static const size_t n[3] = {2, 5, 3};
    tb_case *dc = tb_quadratic(1, 3);
    for (size_t i = 0; i < 3; i++)
        tb_quad(dc, i, &a[order[i]], &c[order[i]], n[order[i]]);
    dc->hyper.lambda = 0.7;
    dc->hyper.eta = 0.2;
    tb_generate(dc, 3, 3, 0);
    return dc;
}

/* Listing the devices in another order relabels them only. */
START_TEST(test_client_order)
{
    tb_case *s1 = order_case((const size_t[]){0, 1, 2});
    tb_case *s2 = order_case((const size_t[]){2, 1, 0});
    pflref_run_result *r1 = tb_run(s1, "ditto", NULL);
    pflref_run_result *r2 = tb_run(s2, "ditto", NULL);
    /* a three-term weighted sum in another order: a few ulps, carried
     * through three contracting rounds (|w| < 1, so 1e-14 relative is
     * tighter than 1e-14 absolute) */
    ck_assert(fabs(r1->w[0]) < 1.0);
    tu_assert_relabelled(r1, r2, 1e-14, 1e-14);
    pflref_run_result_free(r1);
    pflref_run_result_free(r2);
    tb_free(s1);
    tb_free(s2);
}
END_TEST

/* Divergence of the personal model names round, client, step and v. */
START_TEST(test_divergence)
{
    tb_case *c = notes_case(NULL, 1e300);
    c->hyper.eta = 1e300;
    one_round(c);
    pflref_error err;
    tb_run_error(c, "ditto", PFLREF_EDIVERGE, &err);
    /* step 1: v = 0 − 1e300·(−4) = 4e300; step 2: λ(v − w^t) overflows */
    ck_assert_msg(strstr(err.message, "round 0, client 0, local step 2") !=
                          NULL &&
                      strstr(err.message, "v") != NULL,
                  "message: %s", err.message);
    tb_free(c);
}
END_TEST

/* ---- ditto.batches = separate: the personal pass's own batch lists ---- */

/* Two clients of the quadratic model, f_i = ½(x − c_i)², c = (4, −2), on
 * n = 3 samples each, w⁰ = 0, η = ½ (and λ = ½ for ditto), with `alg`
 * (name, preset, switches) and `schedule` spliced in. */
static char *sep_spec(const char *alg, const char *schedule)
{
    static const char *const fmt =
        "{\"format\": \"pflref-spec/1\", \"model\": {\"kind\": \"quadratic\", "
        "\"d\": 1}, \"problem\": {\"clients\": [{\"a\": [1], \"c\": [4], "
        "\"n\": 3}, {\"a\": [1], \"c\": [-2], \"n\": 3}]}, "
        "\"algorithm\": {%s, \"hyperparameters\": {\"eta\": 0.5%s}}, "
        "\"schedule\": %s}";
    const char *lambda =
        strstr(alg, "\"ditto\"") != NULL ? ", \"lambda\": 0.5" : "";
    size_t len = strlen(fmt) + strlen(alg) + strlen(lambda) +
                 strlen(schedule) + 1;
    char *text = malloc(len);
    ck_assert_ptr_nonnull(text);
    snprintf(text, len, fmt, alg, lambda, schedule);
    return text;
}

#define PFLLIB "\"name\": \"ditto\", \"preset\": \"pfllib\""
#define ONE_ROUND_SEP                                                       \
    "{\"kind\": \"given\", \"rounds\": [{\"clients\": [0], \"batches\": "    \
    "[[[0]]], \"personal\": [[[1], [2], [0, 1]]]}]}"

/* By hand: 3 personal steps v ← v − ½((v − 4) + ½ (v − 0)) = v/4 + 2 from
 * v = 0: 2, 2.5, 2.625; 1 global step w ← 0 − ½(0 − 4) = 2 (one client:
 * w¹ = w_0).  Shared batches (one step each): v = 2. */
START_TEST(test_separate_by_hand)
{
    char *text = sep_spec(PFLLIB, ONE_ROUND_SEP);
    pflref_spec *spec = tu_spec(text);
    pflref_run_result *r = tu_run(spec, NULL);
    ck_assert_double_eq(r->v[0], 2.625);
    ck_assert_double_eq(r->w[0], 2.0);
    ck_assert_double_eq(r->v[1], 0.0);   /* client 1 never trains */
    pflref_run_result_free(r);
    pflref_spec_free(spec);
    free(text);
    text = sep_spec(PFLLIB ", \"switches\": {\"ditto.batches\": \"shared\"}",
                    "{\"kind\": \"given\", \"rounds\": [{\"clients\": [0], "
                    "\"batches\": [[[0]]]}]}");
    spec = tu_spec(text);
    r = tu_run(spec, NULL);
    ck_assert_double_eq(r->v[0], 2.0);
    pflref_run_result_free(r);
    pflref_spec_free(spec);
    free(text);
    /* shared leaves a schedule's personal lists unread: the same run */
    text = sep_spec(PFLLIB ", \"switches\": {\"ditto.batches\": \"shared\"}",
                    ONE_ROUND_SEP);
    spec = tu_spec(text);
    r = tu_run(spec, NULL);
    ck_assert_double_eq(r->v[0], 2.0);
    ck_assert_double_eq(r->w[0], 2.0);
    pflref_run_result_free(r);
    pflref_spec_free(spec);
    free(text);
}
END_TEST

/* Each misuse is refused with exit 2's status and the field named. */
START_TEST(test_separate_errors)
{
    static const struct {
        const char *alg, *schedule, *where;
        int at_run;  /* refused by the run's check, not by the reader */
    } cases[] = {
        /* separate (the pfllib preset) without personal lists */
        {PFLLIB, "{\"kind\": \"given\", \"rounds\": [{\"clients\": [0], "
                 "\"batches\": [[[0]]]}]}",
         "schedule.rounds[0].personal", 1},
        /* separate with the interleaved order */
        {PFLLIB ", \"switches\": {\"ditto.order\": "
                "\"interleaved_shared_batch\"}", ONE_ROUND_SEP,
         "algorithm.switches.ditto.order", 1},
        /* personal lists for another algorithm */
        {"\"name\": \"fedavg\"", ONE_ROUND_SEP,
         "schedule.rounds[0].personal", 0},
        {"\"name\": \"fedavg\"",
         "{\"kind\": \"generate\", \"rounds\": 1, \"local\": {\"epochs\": 1}, "
         "\"personal\": {\"epochs\": 1}}", "schedule.personal", 0},
        /* one list per participant */
        {PFLLIB, "{\"kind\": \"given\", \"rounds\": [{\"clients\": [0], "
                 "\"batches\": [[[0]]], \"personal\": [[[1]], [[0]]]}]}",
         "schedule.rounds[0].personal", 0},
        /* an index out of the client's range */
        {PFLLIB, "{\"kind\": \"given\", \"rounds\": [{\"clients\": [0], "
                 "\"batches\": [[[0]]], \"personal\": [[[1], [3]]]}]}",
         "schedule.rounds[0].personal[0][1][0]", 0},
        /* a generated personal phase needs exactly one of epochs, steps */
        {PFLLIB, "{\"kind\": \"generate\", \"rounds\": 1, \"local\": "
                 "{\"epochs\": 1}, \"personal\": {\"batch_size\": 2}}",
         "schedule.personal", 0},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char *text = sep_spec(cases[k].alg, cases[k].schedule);
        pflref_spec *spec = NULL;
        pflref_error err;
        pflref_status st = tu_parse(text, &spec, &err);
        if (cases[k].at_run) {
            ck_assert_msg(st == PFLREF_OK, "case %zu: %s: %s", k, err.where,
                          err.message);
            tu_run_error(spec, PFLREF_EINVAL, &err);
            pflref_spec_free(spec);
        } else {
            ck_assert_msg(st == PFLREF_EINVAL, "case %zu: status %d", k,
                          (int)st);
        }
        ck_assert_msg(strcmp(err.where, cases[k].where) == 0,
                      "case %zu: where %s, want %s (%s)", k, err.where,
                      cases[k].where, err.message);
        free(text);
    }
}
END_TEST

/* Generation: schedule.personal draws each participant's personal work
 * just before its local work, so under reshuffle the local work's epochs
 * take the seeds after the personal ones: with 2 personal epochs, round
 * 0's local batches are those a schedule without personal work draws from
 * batch_seed + 2.  n = 3, B = 2: 2 batches an epoch. */
START_TEST(test_separate_generated)
{
    char *text = sep_spec(
        PFLLIB, "{\"kind\": \"generate\", \"rounds\": 2, \"batches\": "
                "\"reshuffle\", \"batch_seed\": 7, \"local\": {\"epochs\": 1, "
                "\"batch_size\": 2}, \"personal\": {\"epochs\": 2, "
                "\"batch_size\": 2}}");
    pflref_spec *spec = tu_spec(text);
    char *plain_text = sep_spec(
        "\"name\": \"ditto\"",
        "{\"kind\": \"generate\", \"rounds\": 1, \"batches\": \"reshuffle\", "
        "\"batch_seed\": 9, \"local\": {\"epochs\": 1, \"batch_size\": 2}}");
    pflref_spec *plain = tu_spec(plain_text);
    const pflref_round_plan *r = &spec->schedule->rounds[0];
    ck_assert_ptr_nonnull(r->personal);
    ck_assert_uint_eq(r->personal[0].nsteps, 4);   /* 2 epochs × 2 */
    ck_assert_uint_eq(r->batches[0].nsteps, 2);
    const pflref_batches *a = &r->batches[0];
    const pflref_batches *b = &plain->schedule->rounds[0].batches[0];
    ck_assert_uint_eq(a->step_off[2], b->step_off[2]);
    for (size_t q = 0; q < a->step_off[2]; q++)
        ck_assert_uint_eq(a->idx[q], b->idx[q]);
    pflref_run_result *res = tu_run(spec, NULL);
    pflref_run_result_free(res);
    pflref_spec_free(plain);
    pflref_spec_free(spec);
    free(plain_text);
    free(text);
}
END_TEST

/* The result records the personal lists, so its frozen vector replays:
 * freeze a generated spec, then verify the vector. */
START_TEST(test_separate_recorded)
{
    char *dir = tu_tmpdir();
    char spec_path[4096], vec_path[4096], args[8400];
    snprintf(spec_path, sizeof spec_path, "%s/spec.json", dir);
    snprintf(vec_path, sizeof vec_path, "%s/vec.json", dir);
    char *text = sep_spec(
        PFLLIB, "{\"kind\": \"generate\", \"rounds\": 2, \"clients_per_round\":"
                " 1, \"batches\": \"reshuffle\", \"local\": {\"epochs\": 1, "
                "\"batch_size\": 2}, \"personal\": {\"steps\": 3, "
                "\"batch_size\": 1}}");
    ck_assert_int_eq(tu_write(spec_path, text), 0);
    snprintf(args, sizeof args, "freeze %s -o %s --trajectory step",
             spec_path, vec_path);
    char *out = NULL, *err = NULL;
    ck_assert_msg(tu_cli(args, &out, &err) == 0, "freeze: %s", err);
    free(out);
    free(err);
    char *vec = tu_read(vec_path);
    ck_assert_msg(strstr(vec, "\"personal\"") != NULL,
                  "the frozen schedule lacks the personal lists");
    snprintf(args, sizeof args, "verify %s", vec_path);
    ck_assert_msg(tu_cli(args, &out, &err) == 0, "verify: %s %s", out, err);
    free(out);
    free(err);
    free(vec);
    free(text);
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

/* The golden vector (golden/ditto/make_linear.py, exact fractions). */
START_TEST(test_separate_golden)
{
    tu_assert_golden("golden/ditto/worked-linear-pfllib-separate.json");
}
END_TEST

Suite *ditto_suite(void)
{
    Suite *s = suite_create("ditto");
    TCase *tc = tcase_create("ditto");
    tcase_add_test(tc, test_notes);
    tcase_add_test(tc, test_unselected_keeps_v);
    tcase_add_test(tc, test_lambda0_is_local);
    tcase_add_test(tc, test_large_lambda);
    tcase_add_test(tc, test_prox_norm);
    tcase_add_test(tc, test_prox_ref_and_order);
    tcase_add_test(tc, test_weights);
    tcase_add_test(tc, test_client_order);
    tcase_add_test(tc, test_divergence);
    tcase_add_test(tc, test_separate_by_hand);
    tcase_add_test(tc, test_separate_errors);
    tcase_add_test(tc, test_separate_generated);
    tcase_add_test(tc, test_separate_recorded);
    tcase_add_test(tc, test_separate_golden);
    suite_add_tcase(s, tc);
    return s;
}
