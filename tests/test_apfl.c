/* tests/test_apfl.c: the apfl algorithm. */
#include <check.h>
#include "suites.h"
#include "testutil.h"

START_TEST(test_apfl_registered)
{
    const pflref_algorithm *alg = pflref_algorithm_find("apfl");
    ck_assert_ptr_nonnull(alg);
    ck_assert_str_eq(alg->name, "apfl");
}
END_TEST

Suite *apfl_suite(void)
{
    Suite *s = suite_create("apfl");
    TCase *tc = tcase_create("apfl");
    tcase_add_test(tc, test_apfl_registered);
    suite_add_tcase(s, tc);
    return s;
}
