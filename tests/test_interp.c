/* tests/test_interp.c: the interp algorithm. */
#include <check.h>
#include "suites.h"
#include "testutil.h"

START_TEST(test_interp_registered)
{
    const pflref_algorithm *alg = pflref_algorithm_find("interp");
    ck_assert_ptr_nonnull(alg);
    ck_assert_str_eq(alg->name, "interp");
}
END_TEST

Suite *interp_suite(void)
{
    Suite *s = suite_create("interp");
    TCase *tc = tcase_create("interp");
    tcase_add_test(tc, test_interp_registered);
    suite_add_tcase(s, tc);
    return s;
}
