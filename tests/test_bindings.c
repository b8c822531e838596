/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_bindings.c: the JSON-text entry points for bindings
 * (pflref/golden.h): pflref_spec_describe (ref/oracle/describe.c),
 * pflref_golden_required (ref/oracle/required.c), and the report as JSON
 * with verify and check returning it (ref/oracle/report_json.c).
 *
 * Expected values come from the golden vector's own JSON (written by the
 * independent generator golden/fedavg/make_worked.py) read here with
 * jansson, or from hand-filled reports. */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "suites.h"
#include "testutil.h"

#define SAMPLES "golden/fedavg/worked-samples.json"

/* The text and folder of a repository file. */
static char *repo_text(const char *rel, char dir[PFLREF_PATH_MAX])
{
    char *path = tu_repo_path(rel);
    char *text = tu_read(path);
    ck_assert_msg(text != NULL, "cannot read %s", path);
    pflref_file_folder(path, dir, PFLREF_PATH_MAX);
    free(path);
    return text;
}

static json_t *parse(const char *text)
{
    json_error_t e;
    json_t *j = json_loads(text, 0, &e);
    ck_assert_msg(j != NULL, "not JSON: %s", e.text);
    return j;
}

START_TEST(test_describe_gives_the_vectors_data_layout_and_schedule)
{
    char dir[PFLREF_PATH_MAX], *out = NULL;
    char *text = repo_text(SAMPLES, dir);
    pflref_error err;
    ck_assert_int_eq(pflref_spec_describe(text, strlen(text), dir, &out, &err),
                     PFLREF_OK);
    json_t *d = parse(out), *v = parse(text);
    json_t *spec = json_object_get(v, "spec");
    ck_assert_str_eq(json_string_value(json_object_get(d, "format")),
                     "pflref-description/1");
    /* the clients' data as the vector gives it */
    ck_assert_msg(json_equal(json_object_get(d, "clients"),
                             json_object_get(json_object_get(spec, "problem"),
                                             "clients")),
                  "clients differ from the vector's");
    /* the given schedule, round by round */
    json_t *rounds = json_object_get(json_object_get(d, "schedule"), "rounds");
    json_t *given = json_object_get(json_object_get(spec, "schedule"), "rounds");
    ck_assert_uint_eq(json_array_size(rounds), json_array_size(given));
    for (size_t t = 0; t < json_array_size(given); t++) {
        json_t *a = json_array_get(rounds, t), *b = json_array_get(given, t);
        ck_assert(json_equal(json_object_get(a, "clients"),
                             json_object_get(b, "clients")));
        ck_assert(json_equal(json_object_get(a, "batches"),
                             json_object_get(b, "batches")));
    }
    /* linear, d = 1, no bias: one block w at offset 0 of length 1 */
    json_t *blocks = json_object_get(json_object_get(d, "model"), "blocks");
    ck_assert_uint_eq(json_array_size(blocks), 1);
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(blocks, 0),
                                                       "name")), "w");
    ck_assert_int_eq(json_integer_value(json_object_get(
                         json_object_get(d, "model"), "P")), 1);
    /* nothing of a run */
    ck_assert_ptr_null(json_object_get(d, "trajectory"));
    ck_assert_ptr_null(json_object_get(d, "final"));
    json_decref(d);
    json_decref(v);
    pflref_text_free(out);
    free(text);
}
END_TEST

/* A generated schedule and problem are described as the run uses them. */
START_TEST(test_describe_of_a_generated_spec_matches_the_run)
{
    static const char spec[] =
        "{\"format\": \"pflref-spec/1\", \"name\": \"gen\","
        " \"model\": {\"kind\": \"linear\", \"d\": 2, \"loss\": \"squared\"},"
        " \"problem\": {\"clients\": [{\"X\": [[1, 2], [3, 4.5], [0.5, -1]],"
        "   \"y\": [1, 2, 3]}, {\"X\": [[2, 1]], \"y\": [-1]},"
        "   {\"X\": [[1, 1], [2, 2]], \"y\": [0.25, 0.75]}]},"
        " \"init\": {\"kind\": \"gaussian\", \"seed\": 7, \"sd\": 0.5},"
        " \"algorithm\": {\"name\": \"fedavg\", \"hyperparameters\": {\"eta\": 0.05}},"
        " \"schedule\": {\"kind\": \"generate\", \"rounds\": 3,"
        "   \"clients_per_round\": 2, \"client_seed\": 11,"
        "   \"batches\": \"reshuffle\", \"batch_seed\": 5,"
        "   \"local\": {\"epochs\": 2, \"batch_size\": 2}}}";
    char *desc = NULL, *res = NULL;
    pflref_error err;
    ck_assert_msg(pflref_spec_describe(spec, strlen(spec), NULL, &desc, &err) ==
                      PFLREF_OK, "%s: %s", err.where, err.message);
    ck_assert_int_eq(pflref_spec_run_text(spec, strlen(spec), NULL, NULL, &res,
                                          &err), PFLREF_OK);
    json_t *d = parse(desc), *r = parse(res);
    ck_assert_msg(json_equal(json_object_get(d, "schedule"),
                             json_object_get(r, "schedule")),
                  "the described schedule is not the one run");
    ck_assert_msg(json_equal(json_object_get(d, "w0"), json_object_get(r, "w0")),
                  "the described w0 is not the one run");
    ck_assert_uint_eq(json_array_size(json_object_get(d, "w0")), 2);
    ck_assert_uint_eq(json_array_size(json_object_get(d, "clients")), 3);
    json_decref(d);
    json_decref(r);
    pflref_text_free(desc);
    pflref_text_free(res);
}
END_TEST

START_TEST(test_describe_refuses_naming_the_field)
{
    static const char bad[] =
        "{\"format\": \"pflref-spec/1\", \"name\": \"bad\","
        " \"model\": {\"kind\": \"linear\", \"d\": 1, \"loss\": \"squared\"},"
        " \"problem\": {\"clients\": [{\"X\": [[1]], \"y\": [1]}]},"
        " \"algorithm\": {\"name\": \"fedavg\", \"hyperparameters\": {\"eta\": -1}},"
        " \"schedule\": {\"kind\": \"given\", \"rounds\": []}}";
    char *out = (char *)1;
    pflref_error err;
    ck_assert_int_eq(pflref_spec_describe(bad, strlen(bad), NULL, &out, &err),
                     PFLREF_EINVAL);
    ck_assert_ptr_null(out);
    ck_assert_msg(strstr(err.where, "eta") != NULL, "where: %s", err.where);
    ck_assert_int_eq(pflref_spec_describe(bad, strlen(bad), NULL, NULL, &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "out");
}
END_TEST

/* Key of a record object as one comparable string. */
static void key_text(const json_t *r, char *buf, size_t size)
{
    const json_t *rd = json_object_get(r, "round"),
                 *cl = json_object_get(r, "client"),
                 *st = json_object_get(r, "step");
    snprintf(buf, size, "%s/%s/%lld/%lld/%lld/%s",
             json_string_value(json_object_get(r, "event")),
             json_string_value(json_object_get(r, "phase")),
             rd ? (long long)json_integer_value(rd) : -1LL,
             cl ? (long long)json_integer_value(cl) : -1LL,
             st ? (long long)json_integer_value(st) : -1LL,
             json_string_value(json_object_get(r, "name")));
}

START_TEST(test_required_are_the_expected_records)
{
    char dir[PFLREF_PATH_MAX], *out = NULL;
    char *text = repo_text(SAMPLES, dir);
    pflref_error err;
    ck_assert_int_eq(pflref_golden_required(text, strlen(text), dir, &out, &err),
                     PFLREF_OK);
    json_t *req = parse(out), *v = parse(text);
    json_t *list = json_object_get(req, "records");
    json_t *traj = json_object_get(json_object_get(v, "expected"), "trajectory");
    size_t n_required = 0;
    for (size_t k = 0; k < json_array_size(list); k++) {
        json_t *r = json_array_get(list, k);
        if (!json_is_true(json_object_get(r, "required")))
            continue;
        n_required++;
        if (strcmp(json_string_value(json_object_get(r, "event")), "final") == 0)
            continue;
        char want[128], have[128];
        key_text(r, want, sizeof want);
        int found = 0;
        for (size_t e = 0; e < json_array_size(traj) && !found; e++) {
            key_text(json_array_get(traj, e), have, sizeof have);
            found = strcmp(want, have) == 0;
        }
        ck_assert_msg(found, "required %s is not expected by the vector", want);
    }
    /* every expected trajectory record, and final.w */
    ck_assert_uint_eq(n_required, json_array_size(traj) + 1);
    json_t *last = json_array_get(list, json_array_size(list) - 1);
    ck_assert_str_eq(json_string_value(json_object_get(last, "event")), "final");
    ck_assert_str_eq(json_string_value(json_object_get(req, "algorithm")),
                     "fedavg");
    json_decref(req);
    json_decref(v);
    pflref_text_free(out);
    free(text);
}
END_TEST

START_TEST(test_check_json_passes_the_reference_and_names_a_divergence)
{
    char dir[PFLREF_PATH_MAX], *res = NULL, *rep = NULL;
    char *text = repo_text(SAMPLES, dir);
    pflref_error err;
    const pflref_check_options opt = {.precision = PFLREF_PRECISION_FP64,
                                      .same_id = 1};
    ck_assert_int_eq(pflref_spec_run_text(text, strlen(text), dir, NULL, &res,
                                          &err), PFLREF_OK);
    ck_assert_int_eq(pflref_golden_check_json(text, strlen(text), dir, res,
                                              strlen(res), &opt, &rep, &err),
                     PFLREF_OK);
    json_t *j = parse(rep);
    ck_assert(json_is_true(json_object_get(j, "passed")));
    ck_assert(json_is_null(json_object_get(j, "first_divergence")));
    ck_assert_int_eq(json_integer_value(json_object_get(j, "quantities")), 22);
    json_decref(j);
    pflref_text_free(rep);
    /* final.w moved to 4: the vector expects 4.309375 (its JSON) */
    json_t *cand = parse(res), *v = parse(text);
    json_array_set_new(json_object_get(json_object_get(cand, "final"), "w"), 0,
                       json_real(4.0));
    char *bad = json_dumps(cand, JSON_COMPACT | JSON_REAL_PRECISION(17));
    ck_assert_int_eq(pflref_golden_check_json(text, strlen(text), dir, bad,
                                              strlen(bad), &opt, &rep, &err),
                     PFLREF_OK);
    j = parse(rep);
    ck_assert(json_is_false(json_object_get(j, "passed")));
    json_t *first = json_object_get(j, "first_divergence");
    ck_assert_str_eq(json_string_value(json_object_get(first, "event")), "final");
    ck_assert_str_eq(json_string_value(json_object_get(first, "name")), "w");
    ck_assert_ptr_null(json_object_get(first, "round"));
    const double want = json_number_value(json_array_get(json_object_get(
        json_object_get(json_object_get(v, "expected"), "final"), "w"), 0));
    ck_assert_double_eq(json_real_value(json_object_get(first, "expected")), want);
    ck_assert_double_eq(json_real_value(json_object_get(first, "got")), 4.0);
    ck_assert_int_eq(json_integer_value(json_object_get(j, "mismatches")), 1);
    json_decref(j);
    json_decref(cand);
    json_decref(v);
    pflref_text_free(rep);
    free(bad);
    pflref_text_free(res);
    free(text);
}
END_TEST

START_TEST(test_check_json_refuses_a_malformed_candidate)
{
    char dir[PFLREF_PATH_MAX], *rep = (char *)1;
    char *text = repo_text(SAMPLES, dir);
    pflref_error err;
    const pflref_check_options opt = {.precision = PFLREF_PRECISION_FP64};
    static const char cand[] = "{\"format\": \"pflref-result/9\", \"final\": {}}";
    ck_assert_int_eq(pflref_golden_check_json(text, strlen(text), dir, cand,
                                              strlen(cand), &opt, &rep, &err),
                     PFLREF_EINVAL);
    ck_assert_ptr_null(rep);
    ck_assert_msg(strncmp(err.where, "candidate:", 10) == 0, "%s", err.where);
    ck_assert_int_eq(pflref_golden_check_json(text, strlen(text), dir, NULL, 0,
                                              &opt, &rep, &err), PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "candidate");
    char *ok = NULL;
    ck_assert_int_eq(pflref_golden_verify_json(text, strlen(text), dir, &ok,
                                               &err), PFLREF_OK);
    json_t *j = parse(ok);
    ck_assert(json_is_true(json_object_get(j, "passed")));
    json_decref(j);
    pflref_text_free(ok);
    free(text);
}
END_TEST

/* Statistics that mean nothing are null, a missing record gives lengths. */
START_TEST(test_report_json_of_a_hand_made_report)
{
    pflref_golden_report *rep = calloc(1, sizeof *rep);
    snprintf(rep->id, sizeof rep->id, "hand/report");
    rep->quantities = 2;
    rep->mismatches = 1;
    rep->missing = 1;
    rep->max_rel_err = INFINITY;
    rep->sign_differs = 1;
    rep->max_ulp = UINT64_MAX;
    rep->diverged = 1;
    rep->first = (pflref_divergence){.event = "step", .phase = "train",
                                     .round = 2, .client = -1, .step = 3,
                                     .name = "theta", .missing = 1,
                                     .got_len = 2, .expected_len = 3,
                                     .record = 1};
    rep->n_listed = 1;
    rep->listed[0] = rep->first;
    char *out = NULL;
    ck_assert_int_eq(pflref_golden_report_json(rep, &out, NULL), PFLREF_OK);
    json_t *j = parse(out);
    ck_assert(json_is_false(json_object_get(j, "passed")));
    ck_assert(json_is_null(json_object_get(j, "max_rel_err")));
    ck_assert(json_is_null(json_object_get(j, "max_ulp")));
    json_t *first = json_object_get(j, "first_divergence");
    ck_assert_ptr_null(json_object_get(first, "client"));
    ck_assert_int_eq(json_integer_value(json_object_get(first, "step")), 3);
    ck_assert_int_eq(json_integer_value(json_object_get(first, "got_length")), 2);
    ck_assert_int_eq(json_integer_value(json_object_get(first, "expected_length")),
                     3);
    ck_assert_ptr_null(json_object_get(first, "got"));
    ck_assert_uint_eq(json_array_size(json_object_get(j, "divergences")), 1);
    json_decref(j);
    pflref_text_free(out);
    free(rep);
}
END_TEST

Suite *bindings_suite(void)
{
    Suite *s = suite_create("bindings");
    TCase *tc = tcase_create("json");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_describe_gives_the_vectors_data_layout_and_schedule);
    tcase_add_test(tc, test_describe_of_a_generated_spec_matches_the_run);
    tcase_add_test(tc, test_describe_refuses_naming_the_field);
    tcase_add_test(tc, test_required_are_the_expected_records);
    tcase_add_test(tc, test_check_json_passes_the_reference_and_names_a_divergence);
    tcase_add_test(tc, test_check_json_refuses_a_malformed_candidate);
    tcase_add_test(tc, test_report_json_of_a_hand_made_report);
    suite_add_tcase(s, tc);
    return s;
}
