/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_api.c: running a spec through the public API in one call
 * (pflref_spec_run and pflref_spec_run_text, pflref/io.h; ref/io/spec_run.c).
 *
 * The vector used is golden/fedavg/worked-full-batch-two-epochs.json
 * (provenance independent: exact fractions, golden/fedavg/make_worked.py):
 * FedAvg, linear model with one feature x = 1 and no bias, loss
 * ½(w − y)², η = 1/2, w⁰ = 0, one round in which only client 0
 * (y = 1, 3) trains on its full batch for two epochs.  The gradient of the
 * client's mean loss is w − 2, so
 *     step 1: w = 0 − ½ (0 − 2)   = 1
 *     step 2: w = 1 − ½ (1 − 2)   = 3/2
 * and with one participant the server's average is w¹ = 3/2, exactly
 * representable (the vector's provenance records "w": "3/2").
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include "suites.h"
#include "testutil.h"

#define VECTOR "golden/fedavg/worked-full-batch-two-epochs.json"

/* The vector's text and the folder that resolves its relative paths. */
static char *read_vector(char dir[PFLREF_PATH_MAX], size_t *len)
{
    char *path = tu_repo_path(VECTOR);
    char *text = tu_read(path);
    ck_assert_msg(text != NULL, "cannot read %s", path);
    pflref_file_folder(path, dir, PFLREF_PATH_MAX);
    free(path);
    *len = strlen(text);
    return text;
}

/* A sink that counts the server's events. */
static void count_server(void *ctx, const pflref_event *ev)
{
    if (ev->kind == PFLREF_EV_SERVER)
        ++*(size_t *)ctx;
}

START_TEST(test_spec_run_worked_example)
{
    char dir[PFLREF_PATH_MAX];
    size_t len;
    char *text = read_vector(dir, &len);
    pflref_error err;
    pflref_error_clear(&err);
    pflref_spec *spec = NULL;
    ck_assert_int_eq(pflref_golden_spec(text, len, dir, &spec, &err),
                     PFLREF_OK);
    size_t server_events = 0;
    pflref_trace counter = {count_server, &server_events};
    pflref_run_result *res = NULL;
    pflref_status st = pflref_spec_run(spec, &counter, &res, &err);
    ck_assert_msg(st == PFLREF_OK, "pflref_spec_run: %s: %s", err.where,
                  err.message);
    ck_assert_ptr_nonnull(res);
    ck_assert_msg(res->P == 1 && res->w != NULL, "the result has no w of P = 1");
    /* w¹ = 3/2 (derivation in the header): two steps of η = 1/2 on
     * client 0's full batch, one participant. */
    ck_assert_msg(res->w[0] == 1.5, "w after round 0 is %.17g, expected 1.5",
                  res->w[0]);
    ck_assert_msg(server_events == 1,
                  "the trace saw %zu server events, the schedule has 1 round",
                  server_events);
    pflref_run_result_free(res);
    pflref_spec_free(spec);
    free(text);
}
END_TEST

START_TEST(test_spec_run_text_meets_vector)
{
    char dir[PFLREF_PATH_MAX];
    size_t len;
    char *text = read_vector(dir, &len);
    pflref_error err;
    pflref_error_clear(&err);
    char *result = NULL;
    pflref_status st = pflref_spec_run_text(text, len, dir, NULL, &result,
                                            &err);
    ck_assert_msg(st == PFLREF_OK, "pflref_spec_run_text: %s: %s", err.where,
                  err.message);
    ck_assert_ptr_nonnull(result);
    /* The result carries the vector's id and every expected record: it
     * passes as a candidate for the vector (at the vector's tolerance or
     * the fp64 floor, whichever is looser), with the same-id test on. */
    pflref_check_options opt = {.precision = PFLREF_PRECISION_FP64,
                                .resync = 0,
                                .partial = 0,
                                .same_id = 1};
    pflref_golden_report rep;
    st = pflref_golden_check(text, len, dir, result, strlen(result), &opt,
                             &rep, &err);
    ck_assert_msg(st == PFLREF_OK, "pflref_golden_check: %s: %s", err.where,
                  err.message);
    ck_assert_msg(rep.quantities > 0 && rep.mismatches == 0,
                  "%zu of %zu expected quantities differ (first: %s)",
                  rep.mismatches, rep.quantities, rep.first.name);
    free(result);
    free(text);
}
END_TEST

START_TEST(test_spec_run_text_refuses_invalid)
{
    pflref_error err;
    pflref_error_clear(&err);
    char *result = (char *)"unchanged";
    const char *bad = "{\"format\": \"pflref-spec/2\"}";
    pflref_status st = pflref_spec_run_text(bad, strlen(bad), NULL, NULL,
                                            &result, &err);
    ck_assert_int_eq(st, PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "format");
    ck_assert_ptr_null(result);

    st = pflref_spec_run_text(NULL, 0, NULL, NULL, &result, &err);
    ck_assert_int_eq(st, PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "text");
    ck_assert_ptr_null(result);

    pflref_run_result *res = (pflref_run_result *)&err;
    st = pflref_spec_run(NULL, NULL, &res, &err);
    ck_assert_int_eq(st, PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "spec");
    ck_assert_ptr_null(res);
}
END_TEST

Suite *api_suite(void)
{
    Suite *s = suite_create("api");
    TCase *tc = tcase_create("run_spec");
    tcase_add_test(tc, test_spec_run_worked_example);
    tcase_add_test(tc, test_spec_run_text_meets_vector);
    tcase_add_test(tc, test_spec_run_text_refuses_invalid);
    suite_add_tcase(s, tc);
    return s;
}
