/* tests/test_ditto.c: Ditto (ref/ditto.c).
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

static pflref_spec *make_spec(const char *name, const char *model,
                              const char *clients, const char *hyper,
                              const char *switches, const char *schedule)
{
    char text[8192];
    snprintf(text, sizeof text,
             "{\"format\": \"pflref-spec/1\", \"model\": %s,"
             " \"problem\": {\"clients\": %s},"
             " \"algorithm\": {\"name\": \"%s\", \"hyperparameters\": {%s},"
             " \"switches\": {%s}},"
             " \"schedule\": %s}",
             model, clients, name, hyper, switches, schedule);
    return tu_spec(text);
}

static const char *const QUAD = "{\"kind\": \"quadratic\", \"d\": 1}";
static const char *const NOTES_CLIENTS =
    "[{\"a\": [1], \"c\": [4]}, {\"a\": [1], \"c\": [-2]}]";
static const char *const BOTH_TWICE =
    "{\"kind\": \"given\", \"rounds\": ["
    " {\"clients\": [0, 1], \"batches\": [[[0], [0]], [[0], [0]]]},"
    " {\"clients\": [0, 1], \"batches\": [[[0], [0]], [[0], [0]]]}]}";
static const char *const SECOND_ONLY_0 =
    "{\"kind\": \"given\", \"rounds\": ["
    " {\"clients\": [0, 1], \"batches\": [[[0], [0]], [[0], [0]]]},"
    " {\"clients\": [0], \"batches\": [[[0], [0]]]}]}";
static const char *const ONE_ROUND =
    "{\"kind\": \"given\", \"rounds\": ["
    " {\"clients\": [0, 1], \"batches\": [[[0], [0]], [[0], [0]]]}]}";

static void run_notes(const char *hyper, const char *switches,
                      const char *sched, double *w, double v[2])
{
    pflref_spec *spec = make_spec("ditto", QUAD, NOTES_CLIENTS, hyper,
                                  switches, sched);
    pflref_run_result *res = tu_run(spec, NULL);
    *w = res->w[0];
    v[0] = res->v[0];
    v[1] = res->v[1];
    pflref_run_result_free(res);
    pflref_spec_free(spec);
}

/* Notes §3(g): w¹ = 0.75, v = (2, −1); w² = 0.9375, v = (2.375, −0.625). */
START_TEST(test_notes)
{
    double w, v[2];
    run_notes("\"lambda\": 1, \"eta\": 0.5", "", ONE_ROUND, &w, v);
    ck_assert_double_eq(w, 0.75);
    ck_assert_double_eq(v[0], 2.0);
    ck_assert_double_eq(v[1], -1.0);
    run_notes("\"lambda\": 1, \"eta\": 0.5", "", BOTH_TWICE, &w, v);
    ck_assert_double_eq(w, 0.9375);
    ck_assert_double_eq(v[0], 2.375);
    ck_assert_double_eq(v[1], -0.625);
    /* the TF code's simple mean agrees here: n = (1, 1) */
    run_notes("\"lambda\": 1, \"eta\": 0.5", "\"ditto.weights\": \"uniform\"",
              BOTH_TWICE, &w, v);
    ck_assert_double_eq(w, 0.9375);
}
END_TEST

/* An unselected device keeps its v: S_2 = {0} gives w² = 3.1875 and
 * v = (2.375, −1). */
START_TEST(test_unselected_keeps_v)
{
    double w, v[2];
    run_notes("\"lambda\": 1, \"eta\": 0.5", "", SECOND_ONLY_0, &w, v);
    ck_assert_double_eq(w, 3.1875);
    ck_assert_double_eq(v[0], 2.375);
    ck_assert_double_eq(v[1], -1.0);
}
END_TEST

/* λ = 0: v follows plain local SGD, bit for bit the "local" algorithm's
 * iterates on the same schedule (notes: v = (3, −1.5) after round 1), on a
 * linear model with minibatches too. */
START_TEST(test_lambda0_is_local)
{
    double w, v[2];
    run_notes("\"lambda\": 0, \"eta\": 0.5", "", ONE_ROUND, &w, v);
    ck_assert_double_eq(v[0], 3.0);
    ck_assert_double_eq(v[1], -1.5);

    const char *lin = "{\"kind\": \"linear\", \"d\": 2, \"loss\": "
                      "\"half_squared\", \"bias\": true}";
    const char *clients =
        "[{\"X\": [[0.912, -1.347], [-0.284, 0.671], [1.563, 0.238]],"
        "  \"y\": [-0.775, 1.409, 0.236]},"
        " {\"X\": [[-1.426, 0.357], [0.689, -0.942]], \"y\": [0.518, -1.263]}]";
    const char *sched =
        "{\"kind\": \"given\", \"rounds\": ["
        " {\"clients\": [0, 1], \"batches\": [[[0, 1], [2]], [[1], [0], [0, 1]]]},"
        " {\"clients\": [0], \"batches\": [[[2, 0], [1]]]}]}";
    pflref_spec *sd = make_spec("ditto", lin, clients,
                                "\"lambda\": 0, \"eta\": 0.3", "", sched);
    pflref_spec *sl = make_spec("local", lin, clients, "\"eta\": 0.3", "",
                                sched);
    pflref_run_result *rd = tu_run(sd, NULL), *rl = tu_run(sl, NULL);
    for (size_t j = 0; j < 2 * rd->P; j++)
        ck_assert_msg(rd->v[j] == rl->v[j], "entry %zu: ditto %.17g, local %.17g",
                      j, rd->v[j], rl->v[j]);
    pflref_run_result_free(rd);
    pflref_run_result_free(rl);
    pflref_spec_free(sd);
    pflref_spec_free(sl);
}
END_TEST

/* Large λ pulls v to w^t: after 200 personal steps on f = ½ a (x − c)² the
 * personal model is the prox point (a c + λ w)/(a + λ) with w = w⁰ = 0.25
 * (one round), whose distance to w is a|c − w|/(a + λ) → 0 as λ grows. */
START_TEST(test_large_lambda)
{
    const double a = 2.385, c = 1.5, w0 = 0.25;
    const double lambdas[3] = {1.0, 100.0, 1e4};
    double prev = INFINITY;
    for (int l = 0; l < 3; l++) {
        char hyper[128], text[1024];
        snprintf(hyper, sizeof hyper, "\"lambda\": %.17g, \"eta\": %.17g",
                 lambdas[l], 1.0 / (a + lambdas[l]));
        snprintf(text, sizeof text,
                 "{\"format\": \"pflref-spec/1\","
                 " \"model\": {\"kind\": \"quadratic\", \"d\": 1},"
                 " \"problem\": {\"clients\": [{\"a\": [%.17g], \"c\": [%.17g]}]},"
                 " \"init\": {\"kind\": \"given\", \"w\": [%.17g]},"
                 " \"algorithm\": {\"name\": \"ditto\", \"hyperparameters\": {%s}},"
                 " \"schedule\": {\"kind\": \"generate\", \"rounds\": 1,"
                 " \"local\": {\"steps\": 200}}}",
                 a, c, w0, hyper);
        pflref_spec *spec;
        pflref_error err;
        ck_assert_int_eq(tu_parse(text, &spec, &err), PFLREF_OK);
        pflref_run_result *res = tu_run(spec, NULL);
        const double gap = fabs(res->v[0] - w0);
        const double expect = a * fabs(c - w0) / (a + lambdas[l]);
        ck_assert_msg(fabs(gap - expect) <= 1e-12,
                      "λ = %g: |v − w| = %.17g, expected %.17g", lambdas[l],
                      gap, expect);
        ck_assert(gap < prev);
        prev = gap;
        pflref_run_result_free(res);
        pflref_spec_free(spec);
    }
    ck_assert(prev < 1e-3);
}
END_TEST

/* ditto.prox = norm: gradient λ (v − w)/|v − w| (0 at v = w).  One round,
 * w = 0, client 0: v: 0 → 0 − ½(−4 + 0) = 2 → 2 − ½((2 − 4) + 1) = 2.5. */
START_TEST(test_prox_norm)
{
    double w, v[2];
    run_notes("\"lambda\": 1, \"eta\": 0.5", "\"ditto.prox\": \"norm\"",
              ONE_ROUND, &w, v);
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
    double w, v[2];
    run_notes("\"lambda\": 1, \"eta\": 0.5", "\"ditto.prox_ref\": \"moving\"",
              ONE_ROUND, &w, v);
    ck_assert_double_eq(v[0], 3.0);
    ck_assert_double_eq(v[1], -1.5);
    run_notes("\"lambda\": 1, \"eta\": 0.5",
              "\"ditto.prox_ref\": \"moving\", \"ditto.order\": "
              "\"personal_first\"", ONE_ROUND, &w, v);
    ck_assert_double_eq(v[0], 2.0);
    ck_assert_double_eq(v[1], -1.0);
    /* with the round-start reference the order changes nothing */
    run_notes("\"lambda\": 1, \"eta\": 0.5",
              "\"ditto.order\": \"personal_first\"", BOTH_TWICE, &w, v);
    ck_assert_double_eq(w, 0.9375);
    ck_assert_double_eq(v[0], 2.375);
}
END_TEST

/* ditto.weights: samples (n_k/Σn_j) vs uniform with n = (1, 3): the round-1
 * global copies are 3 and −1.5, so w¹ = (3 − 4.5)/4 = −0.375 vs 0.75. */
START_TEST(test_weights)
{
    const char *clients =
        "[{\"a\": [1], \"c\": [4], \"n\": 1}, {\"a\": [1], \"c\": [-2], \"n\": 3}]";
    const char *hyper = "\"lambda\": 1, \"eta\": 0.5";
    pflref_spec *s1 = make_spec("ditto", QUAD, clients, hyper, "", ONE_ROUND);
    pflref_spec *s2 = make_spec("ditto", QUAD, clients, hyper,
                                "\"ditto.weights\": \"uniform\"", ONE_ROUND);
    pflref_run_result *r1 = tu_run(s1, NULL), *r2 = tu_run(s2, NULL);
    ck_assert_double_eq(r1->w[0], -0.375);
    ck_assert_double_eq(r2->w[0], 0.75);
    pflref_run_result_free(r1);
    pflref_run_result_free(r2);
    pflref_spec_free(s1);
    pflref_spec_free(s2);
}
END_TEST

/* Listing the devices in another order relabels them only. */
START_TEST(test_client_order)
{
    const char *fwd =
        "[{\"a\": [2.385], \"c\": [1.5], \"n\": 2},"
        " {\"a\": [0.75], \"c\": [-1.25], \"n\": 5},"
        " {\"a\": [1.3], \"c\": [0.7], \"n\": 3}]";
    const char *rev =
        "[{\"a\": [1.3], \"c\": [0.7], \"n\": 3},"
        " {\"a\": [0.75], \"c\": [-1.25], \"n\": 5},"
        " {\"a\": [2.385], \"c\": [1.5], \"n\": 2}]";
    const char *sched = "{\"kind\": \"generate\", \"rounds\": 3,"
                        " \"local\": {\"steps\": 3}}";
    const char *hyper = "\"lambda\": 0.7, \"eta\": 0.2";
    pflref_spec *s1 = make_spec("ditto", QUAD, fwd, hyper, "", sched);
    pflref_spec *s2 = make_spec("ditto", QUAD, rev, hyper, "", sched);
    pflref_run_result *r1 = tu_run(s1, NULL), *r2 = tu_run(s2, NULL);
    /* a three-term weighted sum in another order: a few ulps, carried
     * through three contracting rounds (|w| < 1, so 1e-14 relative is
     * tighter than 1e-14 absolute) */
    ck_assert(fabs(r1->w[0]) < 1.0);
    tu_assert_relabelled(r1, r2, 1e-14, 1e-14);
    pflref_run_result_free(r1);
    pflref_run_result_free(r2);
    pflref_spec_free(s1);
    pflref_spec_free(s2);
}
END_TEST

/* Divergence of the personal model names round, client, step and v. */
START_TEST(test_divergence)
{
    pflref_spec *spec = make_spec(
        "ditto", QUAD, NOTES_CLIENTS, "\"lambda\": 1e300, \"eta\": 1e300", "",
        ONE_ROUND);
    pflref_error err;
    tu_run_error(spec, PFLREF_EDIVERGE, &err);
    /* step 1: v = 0 − 1e300·(−4) = 4e300; step 2: λ(v − w^t) overflows */
    ck_assert_msg(strstr(err.message, "round 0, client 0, local step 2") !=
                          NULL &&
                      strstr(err.message, "v") != NULL,
                  "message: %s", err.message);
    pflref_spec_free(spec);
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
    suite_add_tcase(s, tc);
    return s;
}
