/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_finetune.c: FedAvg then fine-tuning
 * (ref/algorithms/finetune.c). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "suites.h"
#include "testutil.h"
#include "builder.h"

static const char *const VECTORS[] = {
    "golden/finetune/worked-mu0.json",
    "golden/finetune/worked-mu1.json",
};

START_TEST(test_worked_vectors)
{
    /* req: finetune.eq1, finetune.eq2, finetune.eq3, finetune.eq4 */
    tu_assert_golden(VECTORS[_i]);
}
END_TEST

/* A linear model with bias (half_squared), two clients of two samples,
 * η = 0.1, η_ft = 0.2, finetune.scope personal, 3 rounds of 2 steps and 4
 * fine-tuning steps; split: the personal blocks ("" for none). */
static tb_case *scoped_case(const char *split)
{
    const pflref_model m = tb_model(PFLREF_MODEL_LINEAR,
                                    PFLREF_LOSS_HALF_SQUARED, 2, 1, 0, 1);
    tb_case *c = tb_new(&m, 2);
    tb_train(c, 0, 2, (const double[]){1.25, -0.5, 0.75, 2.0},
             (const double[]){2.385, -1.1});
    tb_train(c, 1, 2, (const double[]){-0.4, 1.5, 2.2, 0.3},
             (const double[]){0.7, 3.3});
    tb_split(c, split);
    c->hyper.eta = 0.1;
    c->hyper.eta_ft = 0.2;
    c->hyper.finetune.scope = PFLREF_FINETUNE_PERSONAL;
    tb_generate(c, 3, 2, 0);
    tb_generate_post(c, 4, 0);
    return c;
}

/* split personal = ["b"], scope personal: the fine-tuned models keep w's
 * shared entries bit for bit and move b. */
START_TEST(test_scope_personal)
{
    /* req: finetune.eq3 */
    tb_case *c = scoped_case("b");
    pflref_run_result *res = tb_run(c, "finetune", NULL);
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
    tb_free(c);
}
END_TEST

/* scope personal with nothing personal would fine-tune nothing: refused. */
START_TEST(test_scope_personal_needs_split)
{
    tb_case *c = scoped_case("");
    pflref_error err;
    tb_run_error(c, "finetune", PFLREF_EINVAL, &err);
    ck_assert_str_eq(err.where, "split.personal");
    tb_free(c);
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
