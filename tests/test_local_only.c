/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_local_only.c: the local-only baseline
 * (ref/algorithms/local.c). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include "suites.h"
#include "testutil.h"
#include "builder.h"

/* Gradient descent on f(v) = ½ a (v − c)² from v₀ has the closed form
 * v_s = c + (1 − η a)^s (v₀ − c).  a = 2.385, c = 1.5, η = 0.1, v₀ = 0.25:
 * each step is exact up to a few roundings, so 1e-14 relative after 7 steps. */
START_TEST(test_closed_form)
{
    /* req: local.eq2 */
    tb_case *c = tb_quadratic(1, 1);
    tb_quad(c, 0, (const double[]){2.385}, (const double[]){1.5}, 1);
    tb_w0(c, (const double[]){0.25});
    c->hyper.eta = 0.1;
    tb_generate(c, 1, 7, 0);
    pflref_run_result *res = tb_run(c, "local", NULL);
    double expect = 1.5 + pow(1.0 - 0.1 * 2.385, 7) * (0.25 - 1.5);
    ck_assert_msg(fabs(res->v[0] - expect) <= 1e-14 * fabs(expect),
                  "v_7 = %.17g, closed form %.17g", res->v[0], expect);
    ck_assert_ptr_null(res->w);
    ck_assert_int_eq(res->n_eval, 1);
    ck_assert_str_eq(res->eval[0].label, "local");
    /* train loss of v_7: ½ a (v − c)² */
    double loss = 0.5 * 2.385 * (res->v[0] - 1.5) * (res->v[0] - 1.5);
    ck_assert_double_eq_tol(res->eval[0].train[0].loss, loss, 1e-15);
    pflref_run_result_free(res);
    tb_free(c);
}
END_TEST

/* A client outside a round's participants keeps its v_i; a participant
 * continues from its own v_i, not from w⁰. */
START_TEST(test_state_persists)
{
    /* req: local.eq1 */
    tb_case *c = tb_quadratic(1, 2);
    tb_quad(c, 0, (const double[]){1}, (const double[]){4}, 1);
    tb_quad(c, 1, (const double[]){1}, (const double[]){-2}, 1);
    c->hyper.eta = 0.5;
    tb_round(c, "0", "0");
    tb_round(c, "1", "0");
    tb_round(c, "0", "0");
    pflref_run_result *res = tb_run(c, "local", NULL);
    /* client 0: 0 → 2 → 3 (two steps of v ← v − ½(v − 4));
     * client 1: 0 → −1 (one step toward −2). */
    ck_assert_double_eq(res->v[0], 3.0);
    ck_assert_double_eq(res->v[1], -1.0);
    pflref_run_result_free(res);
    tb_free(c);
}
END_TEST

Suite *local_only_suite(void)
{
    Suite *s = suite_create("local_only");
    TCase *tc = tcase_create("local_only");
    tcase_add_test(tc, test_closed_form);
    tcase_add_test(tc, test_state_persists);
    suite_add_tcase(s, tc);
    return s;
}
