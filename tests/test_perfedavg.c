/* tests/test_perfedavg.c: the perfedavg algorithm. */
#include <check.h>
#include "suites.h"
#include "testutil.h"

START_TEST(test_perfedavg_registered)
{
    const pflref_algorithm *alg = pflref_algorithm_find("perfedavg");
    ck_assert_ptr_nonnull(alg);
    ck_assert_str_eq(alg->name, "perfedavg");
}
END_TEST

Suite *perfedavg_suite(void)
{
    Suite *s = suite_create("perfedavg");
    TCase *tc = tcase_create("perfedavg");
    tcase_add_test(tc, test_perfedavg_registered);
    suite_add_tcase(s, tc);
    return s;
}
