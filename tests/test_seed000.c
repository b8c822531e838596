/* tests/test_seed000.c: the seed 000 experiment (Code 14.7.1) on the seed's
 * own data (golden/seed000/problem.json, exported from numpy's
 * default_rng(7) by golden/seed000/export_seed000.py) reproduces every entry
 * of Output 14.7.1 to its printed 3 decimals.
 *
 * Provenance: the expected numbers are the seed's printed table (an
 * independent program's output).  Tolerance: a printed value v rounds the
 * true value to 3 decimals, so |x − v| ≤ 0.0005 is the test. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include "suites.h"
#include "testutil.h"

/* Output 14.7.1: client | global | local | personalized */
static const double GLOBAL[6] = {3.763, 3.154, 3.014, 2.463, 2.546, 4.186};
static const double LOCAL[6] = {4.314, 3.699, 4.031, 2.026, 5.203, 7.982};
static const double PERSONAL[6] = {1.913, 3.505, 1.622, 2.447, 2.402, 3.112};
static const double MEAN[3] = {3.188, 4.543, 2.500};
static const double WORST[3] = {4.186, 7.982, 3.505};
static const double PRINTED = 0.0005;

static pflref_run_result *run(const char *rel)
{
    char *path = tu_repo_path(rel);
    pflref_spec *spec;
    pflref_error err;
    pflref_error_clear(&err);
    ck_assert_msg(pflref_spec_read_file(path, &spec, &err) == PFLREF_OK,
                  "%s: %s: %s", rel, err.where, err.message);
    pflref_run_result *res;
    ck_assert_msg(pflref_run(spec->problem, spec->algorithm, &spec->hyper,
                             spec->schedule, spec->w0, NULL, &res, &err)
                      == PFLREF_OK, "%s: %s", rel, err.message);
    pflref_spec_free(spec);
    free(path);
    return res;
}

static void check_column(const pflref_eval_result *er, const double *want,
                         int col, const char *name)
{
    for (int i = 0; i < 6; i++)
        ck_assert_msg(fabs(er->test[i].mse - want[i]) <= PRINTED,
                      "%s, client %d: test MSE %.6f, Output 14.7.1 prints %.3f",
                      name, i, er->test[i].mse, want[i]);
    ck_assert_msg(fabs(er->test_mse.mean - MEAN[col]) <= PRINTED,
                  "%s mean %.6f, printed %.3f", name, er->test_mse.mean,
                  MEAN[col]);
    ck_assert_msg(fabs(er->test_mse.worst - WORST[col]) <= PRINTED,
                  "%s worst %.6f, printed %.3f", name, er->test_mse.worst,
                  WORST[col]);
}

START_TEST(test_global_and_personalized)
{
    pflref_run_result *res = run("golden/seed000/fedavg-ft.json");
    ck_assert_str_eq(res->eval[0].label, "global");
    ck_assert_str_eq(res->eval[1].label, "personalized");
    check_column(&res->eval[0], GLOBAL, 0, "global");
    check_column(&res->eval[1], PERSONAL, 2, "personalized");
    pflref_run_result_free(res);
}
END_TEST

START_TEST(test_local)
{
    pflref_run_result *res = run("golden/seed000/local.json");
    ck_assert_str_eq(res->eval[0].label, "local");
    check_column(&res->eval[0], LOCAL, 1, "local");
    pflref_run_result_free(res);
}
END_TEST

Suite *seed000_suite(void)
{
    Suite *s = suite_create("seed000");
    TCase *tc = tcase_create("seed000");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_global_and_personalized);
    tcase_add_test(tc, test_local);
    suite_add_tcase(s, tc);
    return s;
}
