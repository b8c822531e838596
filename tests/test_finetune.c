/* tests/test_finetune.c: FedAvg then fine-tuning (ref/finetune.c). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "suites.h"
#include "testutil.h"

static const char *const VECTORS[] = {
    "golden/finetune/worked-mu0.json",
    "golden/finetune/worked-mu1.json",
};

START_TEST(test_worked_vectors)
{
    tu_assert_golden(VECTORS[_i]);
}
END_TEST

/* A linear model with bias, split personal = ["b"], scope personal: the
 * fine-tuned models keep w's shared entries bit for bit and move b. */
static const char SCOPED[] =
    "{\"format\": \"pflref-spec/1\","
    " \"model\": {\"kind\": \"linear\", \"d\": 2, \"loss\": \"half_squared\", \"bias\": true},"
    " \"problem\": {\"clients\": ["
    "   {\"X\": [[1.25, -0.5], [0.75, 2.0]], \"y\": [2.385, -1.1]},"
    "   {\"X\": [[-0.4, 1.5], [2.2, 0.3]], \"y\": [0.7, 3.3]}]},"
    " %s"
    " \"algorithm\": {\"name\": \"finetune\", \"hyperparameters\": {\"eta\": 0.1, \"eta_ft\": 0.2},"
    "   \"switches\": {\"finetune.scope\": \"personal\"}},"
    " \"schedule\": {\"kind\": \"generate\", \"rounds\": 3, \"local\": {\"steps\": 2},"
    "   \"post\": {\"steps\": 4}}}";

START_TEST(test_scope_personal)
{
    char text[2048];
    snprintf(text, sizeof text, SCOPED, "\"split\": {\"personal\": [\"b\"]},");
    pflref_spec *spec;
    pflref_error err;
    ck_assert_int_eq(tu_parse(text, &spec, &err), PFLREF_OK);
    pflref_run_result *res;
    ck_assert_int_eq(pflref_run(spec->problem, spec->algorithm, &spec->hyper,
                                spec->schedule, spec->w0, NULL, &res, &err),
                     PFLREF_OK);
    for (size_t i = 0; i < 2; i++) {
        const double *theta = res->v + i * 3;
        ck_assert_double_eq(theta[0], res->w[0]);
        ck_assert_double_eq(theta[1], res->w[1]);
        ck_assert_msg(theta[2] != res->w[2], "client %zu: b did not move", i);
    }
    ck_assert_int_eq(res->n_eval, 2);
    ck_assert_str_eq(res->eval[0].label, "global");
    ck_assert_str_eq(res->eval[1].label, "personalized");
    pflref_run_result_free(res);
    pflref_spec_free(spec);
}
END_TEST

/* scope personal with nothing personal would fine-tune nothing: refused. */
START_TEST(test_scope_personal_needs_split)
{
    char text[2048];
    snprintf(text, sizeof text, SCOPED, "");
    pflref_spec *spec;
    pflref_error err;
    ck_assert_int_eq(tu_parse(text, &spec, &err), PFLREF_OK);
    pflref_run_result *res = NULL;
    ck_assert_int_eq(pflref_run(spec->problem, spec->algorithm, &spec->hyper,
                                spec->schedule, spec->w0, NULL, &res, &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "split.personal");
    ck_assert_ptr_null(res);
    pflref_spec_free(spec);
}
END_TEST

Suite *finetune_suite(void)
{
    Suite *s = suite_create("finetune");
    TCase *tc = tcase_create("finetune");
    tcase_add_loop_test(tc, test_worked_vectors, 0, 2);
    tcase_add_test(tc, test_scope_personal);
    tcase_add_test(tc, test_scope_personal_needs_split);
    suite_add_tcase(s, tc);
    return s;
}
