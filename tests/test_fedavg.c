/* tests/test_fedavg.c: FedAvg (ref/fedavg.c) against its golden vectors
 * (golden/fedavg/, exact fractions from the notes' worked example) and its
 * properties. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "suites.h"
#include "testutil.h"

static const char *const VECTORS[] = {
    "golden/fedavg/worked-samples.json",
    "golden/fedavg/worked-uniform.json",
    "golden/fedavg/worked-all-keep-old.json",
    "golden/fedavg/worked-ragged-batch.json",
    "golden/fedavg/worked-full-batch-two-epochs.json",
};

/* Every worked-example vector is reproduced: every expected quantity was
 * emitted and is within tolerance. */
START_TEST(test_worked_vectors)
{
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
 * these tests edit specs on purpose, so they drop the hash (a vector without
 * one is not hash-checked). */
static char *edit_spec(const char *text, const char *from, const char *to)
{
    char *edited = replace(text, from, to);
    char *at = strstr(edited, "\"hash\": \"");
    if (at != NULL) {
        char *end = strstr(at, "\",");
        ck_assert_ptr_nonnull(end);
        memmove(at, end + 2, strlen(end + 2) + 1);
    }
    return edited;
}

/* The samples vector detects uniform weights: the first divergence is the
 * server's w after round 0 (3.375 instead of 3.7). */
START_TEST(test_wrong_weights_detected)
{
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

static const char IDENTICAL[] =
    "{\"format\": \"pflref-spec/1\","
    " \"model\": {\"kind\": \"linear\", \"d\": 2, \"loss\": \"squared\"},"
    " \"problem\": {\"clients\": ["
    "   {\"X\": [[2.385, -0.71], [0.33, 1.9], [-1.2, 0.45]], \"y\": [1.7, -0.3, 2.2]},"
    "   {\"X\": [[2.385, -0.71], [0.33, 1.9], [-1.2, 0.45]], \"y\": [1.7, -0.3, 2.2]},"
    "   {\"X\": [[2.385, -0.71], [0.33, 1.9], [-1.2, 0.45]], \"y\": [1.7, -0.3, 2.2]}]},"
    " \"algorithm\": {\"name\": \"%s\", \"hyperparameters\": {\"eta\": 0.05}},"
    " \"schedule\": {\"kind\": \"generate\", \"rounds\": %d, \"local\": {\"steps\": %d,"
    "   \"batch_size\": 2}}}";

/* With identical clients, FedAvg is local SGD on one client: T rounds of
 * E steps from the same start equal T·E steps of the local-only run (each
 * aggregation averages identical vectors, exact up to the sum's rounding). */
START_TEST(test_identical_clients_is_local_sgd)
{
    char fed[2048], loc[2048];
    snprintf(fed, sizeof fed, IDENTICAL, "fedavg", 3, 2);
    snprintf(loc, sizeof loc, IDENTICAL, "local", 1, 6);
    pflref_spec *a, *b;
    pflref_error err;
    ck_assert_int_eq(tu_parse(fed, &a, &err), PFLREF_OK);
    ck_assert_int_eq(tu_parse(loc, &b, &err), PFLREF_OK);
    pflref_run_result *ra, *rb;
    ck_assert_int_eq(pflref_run(a->problem, a->algorithm, &a->hyper,
                                a->schedule, a->w0, NULL, &ra, &err), PFLREF_OK);
    ck_assert_int_eq(pflref_run(b->problem, b->algorithm, &b->hyper,
                                b->schedule, b->w0, NULL, &rb, &err), PFLREF_OK);
    for (size_t p = 0; p < 2; p++)
        ck_assert_msg(fabs(ra->w[p] - rb->v[p]) <= 1e-14 * fabs(rb->v[p]),
                      "w[%zu] = %.17g, local v = %.17g", p, ra->w[p], rb->v[p]);
    pflref_run_result_free(ra);
    pflref_run_result_free(rb);
    pflref_spec_free(a);
    pflref_spec_free(b);
}
END_TEST

/* An overflowing iterate stops the run with PFLREF_EDIVERGE naming the
 * round, client and local step. */
START_TEST(test_divergence_located)
{
    const char *text =
        "{\"format\": \"pflref-spec/1\","
        " \"model\": {\"kind\": \"quadratic\", \"d\": 1},"
        " \"problem\": {\"clients\": [{\"a\": [1]}, {\"a\": [1e200], \"c\": [1e200]}]},"
        " \"algorithm\": {\"name\": \"fedavg\", \"hyperparameters\": {\"eta\": 1e200}},"
        " \"schedule\": {\"kind\": \"generate\", \"rounds\": 2, \"local\": {\"steps\": 3}}}";
    pflref_spec *spec;
    pflref_error err;
    /* client 0 lacks "c": fix the spec first, then check divergence. */
    ck_assert_int_eq(tu_parse(text, &spec, &err), PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "problem.clients[0].c");
    const char *ok =
        "{\"format\": \"pflref-spec/1\","
        " \"model\": {\"kind\": \"quadratic\", \"d\": 1},"
        " \"problem\": {\"clients\": [{\"a\": [1], \"c\": [0]},"
        "   {\"a\": [1e200], \"c\": [1e200]}]},"
        " \"algorithm\": {\"name\": \"fedavg\", \"hyperparameters\": {\"eta\": 1e200}},"
        " \"schedule\": {\"kind\": \"generate\", \"rounds\": 2, \"local\": {\"steps\": 3}}}";
    ck_assert_int_eq(tu_parse(ok, &spec, &err), PFLREF_OK);
    pflref_run_result *res = NULL;
    ck_assert_int_eq(pflref_run(spec->problem, spec->algorithm, &spec->hyper,
                                spec->schedule, spec->w0, NULL, &res, &err),
                     PFLREF_EDIVERGE);
    ck_assert_ptr_null(res);
    ck_assert_int_eq(err.round, 0);
    ck_assert_int_eq(err.client, 1);
    ck_assert_int_eq(err.step, 1);
    ck_assert_ptr_nonnull(strstr(err.message, "round 0, client 1, local step 1"));
    pflref_spec_free(spec);
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
    suite_add_tcase(s, tc);
    return s;
}
