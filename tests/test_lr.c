/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_lr.c: learning-rate decay across rounds (ref/engine/lr.c, the
 * driver's round hyperparameters in ref/engine/run.c).
 *
 * Expected values are worked by hand on f(v) = ½ (v − 4)² with one step a
 * round (every number dyadic, so compared with ==), or are properties
 * (a scope that does not reach an algorithm's step size changes nothing,
 * bit for bit), or the golden vectors of golden/fedavg/make_linear.py.
 */
#include <check.h>
#include <math.h>
#include <string.h>
#include "suites.h"
#include "testutil.h"
#include "builder.h"
#include "engine/engine.h"

/* One client, f(v) = ½ (v − 4)², v⁰ = 0, η = ½, `rounds` rounds of one
 * full step each; local training. */
static tb_case *one_client(int rounds)
{
    tb_case *c = tb_quadratic(1, 1);
    tb_quad(c, 0, (const double[]){1}, (const double[]){4}, 1);
    c->hyper.eta = 0.5;
    for (int t = 0; t < rounds; t++)
        tb_round(c, "0", "0");
    return c;
}

static double run_v0(tb_case *c, const char *alg)
{
    pflref_run_result *r = tb_run(c, alg, NULL);
    const double v = r->v != NULL ? r->v[0] : r->w[0];
    pflref_run_result_free(r);
    tb_free(c);
    return v;
}

/* Exponential, γ = ½: η_t = ½, ¼, ⅛; v ← v + η_t (4 − v):
 * 0 → 2 → 2.5 → 2.6875.  Constant: 0 → 2 → 3 → 3.5. */
START_TEST(test_exponential_by_hand)
{
    tb_case *c = one_client(3);
    c->hyper.lr.schedule = PFLREF_LR_EXPONENTIAL;
    c->hyper.lr.gamma = 0.5;
    ck_assert_double_eq(run_v0(c, "local"), 2.6875);
    ck_assert_double_eq(run_v0(one_client(3), "local"), 3.5);
    /* FedAvg with one client computes the same w */
    c = one_client(3);
    c->hyper.lr.schedule = PFLREF_LR_EXPONENTIAL;
    c->hyper.lr.gamma = 0.5;
    ck_assert_double_eq(run_v0(c, "fedavg"), 2.6875);
}
END_TEST

/* Step, γ = ½, two rounds a step: η_t = ½, ½, ¼, ¼, ⅛:
 * 0 → 2 → 3 → 3.25 → 3.4375 → 3.5078125. */
START_TEST(test_step_by_hand)
{
    tb_case *c = one_client(5);
    c->hyper.lr.schedule = PFLREF_LR_STEP;
    c->hyper.lr.gamma = 0.5;
    c->hyper.lr.step_rounds = 2;
    ck_assert_double_eq(run_v0(c, "local"), 3.5078125);
    /* step_rounds = 1 is the exponential schedule */
    c = one_client(3);
    c->hyper.lr.schedule = PFLREF_LR_STEP;
    c->hyper.lr.gamma = 0.5;
    ck_assert_double_eq(run_v0(c, "local"), 2.6875);
}
END_TEST

/* lr.scope = eta_p decays pFedMe's η_p only: "local" (no η_p) is the
 * constant run bit for bit; pFedMe with scope eta_p differs from both the
 * constant run and scope all. */
START_TEST(test_scope_eta_p)
{
    tb_case *c = one_client(3);
    c->hyper.lr.schedule = PFLREF_LR_EXPONENTIAL;
    c->hyper.lr.gamma = 0.5;
    c->hyper.lr.scope = PFLREF_LR_SCOPE_ETA_P;
    ck_assert_double_eq(run_v0(c, "local"), 3.5);

    double got[3];
    for (int k = 0; k < 3; k++) {
        c = one_client(3);
        c->hyper.eta = 0.375;
        c->hyper.lambda = 1.5;
        c->hyper.eta_p = 0.25;
        c->hyper.K = 2;
        if (k > 0) {
            c->hyper.lr.schedule = PFLREF_LR_EXPONENTIAL;
            c->hyper.lr.gamma = 0.5;
            c->hyper.lr.scope = k == 1 ? PFLREF_LR_SCOPE_ETA_P
                                       : PFLREF_LR_SCOPE_ALL;
        }
        pflref_run_result *r = tb_run(c, "pfedme", NULL);
        got[k] = r->w[0];
        pflref_run_result_free(r);
        tb_free(c);
    }
    ck_assert_msg(got[0] != got[1] && got[1] != got[2] && got[0] != got[2],
                  "pFedMe w: constant %.17g, eta_p %.17g, all %.17g", got[0],
                  got[1], got[2]);
}
END_TEST

/* lr.scope = no_beta (PFLlib's Per-FedAvg: step(beta=self.beta), a float
 * no scheduler touches): round 2 of γ = ½ scales every step size by ¼ but
 * Per-FedAvg's β, which keeps its value bit for bit; scope all scales β
 * too. */
START_TEST(test_scope_no_beta)
{
    pflref_hyper base;
    memset(&base, 0, sizeof base);
    base.eta = 0.5;
    base.eta_p = 0.25;
    base.perfedavg.alpha = 0.125;
    base.perfedavg.beta = 0.375;
    base.apfl.eta_alpha = NAN;
    base.lr.schedule = PFLREF_LR_EXPONENTIAL;
    base.lr.gamma = 0.5;
    base.lr.step_rounds = 1;
    pflref_hyper out;
    for (int scope = 0; scope < 2; scope++) {
        base.lr.scope = scope ? PFLREF_LR_SCOPE_NO_BETA : PFLREF_LR_SCOPE_ALL;
        pflref_round_hyper(&base, 2, &out);
        ck_assert_double_eq(out.eta, 0.125);
        ck_assert_double_eq(out.eta_p, 0.0625);
        ck_assert_double_eq(out.perfedavg.alpha, 0.03125);
        ck_assert_double_eq(out.perfedavg.beta, scope ? 0.375 : 0.09375);
        ck_assert(isnan(out.apfl.eta_alpha));
    }
}
END_TEST

/* lr.count = trainings (PFLlib: a client's scheduler steps when it
 * trains).  Two clients f_i(v) = ½ (v − 4)², local training, η = ½,
 * γ = ½, S = {0}, {0, 1}, {1}.  Client 1 trains in rounds 1 and 2:
 *   trainings: η γ⁰, η γ¹ = ½, ¼:  0 → 2 → 2.5
 *   rounds:    η γ¹, η γ² = ¼, ⅛:  0 → 1 → 1.375
 * Client 0 trains in rounds 0 and 1, its count equal to the round: 0 → 2 →
 * 2.5 either way.  FedAvg has one model, so it is left to the vectors. */
START_TEST(test_count_trainings_by_hand)
{
    for (int count = 0; count < 2; count++) {
        tb_case *c = tb_quadratic(1, 2);
        for (size_t i = 0; i < 2; i++)
            tb_quad(c, i, (const double[]){1}, (const double[]){4}, 1);
        c->hyper.eta = 0.5;
        c->hyper.lr.schedule = PFLREF_LR_EXPONENTIAL;
        c->hyper.lr.gamma = 0.5;
        c->hyper.lr.count = count ? PFLREF_LR_COUNT_TRAININGS
                                  : PFLREF_LR_COUNT_ROUNDS;
        tb_round(c, "0", "0");
        tb_round(c, "0 1", "0", "0");
        tb_round(c, "1", "0");
        pflref_run_result *r = tb_run(c, "local", NULL);
        ck_assert_double_eq(r->v[0], 2.5);
        ck_assert_double_eq(r->v[1], count ? 2.5 : 1.375);
        pflref_run_result_free(r);
        tb_free(c);
    }
}
END_TEST

/* perfedavg.calls = two (PFLlib's server calls train() twice a round):
 * one client f(v) = ½ (v − 4)², FO, α = β = ½, γ = ½, one round of τ = 2
 * steps.  A step: w̃ = w − α (w − 4), w ← w − β (w̃ − 4).
 *   one: both steps with α = β = ½:  0 → 1 → 1.75
 *   two: the second call with α = β = ¼: 0 → 1, w̃ = 1.75, w = 1 + ¼·2.25
 *        = 1.5625
 * and an odd τ is refused under two. */
START_TEST(test_perfedavg_two_calls_by_hand)
{
    for (int calls = 0; calls < 2; calls++) {
        tb_case *c = tb_quadratic(1, 1);
        tb_quad(c, 0, (const double[]){1}, (const double[]){4}, 1);
        c->hyper.perfedavg.alpha = 0.5;
        c->hyper.perfedavg.beta = 0.5;
        c->hyper.perfedavg.variant = PFLREF_PERFEDAVG_FO;
        c->hyper.perfedavg.calls = calls ? PFLREF_PERFEDAVG_CALLS_TWO
                                         : PFLREF_PERFEDAVG_CALLS_ONE;
        c->hyper.lr.schedule = PFLREF_LR_EXPONENTIAL;
        c->hyper.lr.gamma = 0.5;
        tb_round(c, "0", "0 | 0 | 0 | 0 | 0 | 0");
        tb_post(c, "0");
        pflref_run_result *r = tb_run(c, "perfedavg", NULL);
        ck_assert_double_eq(r->w[0], calls ? 1.5625 : 1.75);
        pflref_run_result_free(r);
        tb_free(c);
    }
    pflref_error err;
    tb_case *c = tb_quadratic(1, 1);
    tb_quad(c, 0, (const double[]){1}, (const double[]){4}, 1);
    c->hyper.perfedavg.alpha = 0.5;
    c->hyper.perfedavg.beta = 0.5;
    c->hyper.perfedavg.calls = PFLREF_PERFEDAVG_CALLS_TWO;
    tb_round(c, "0", "0 | 0 | 0");
    tb_post(c, "0");
    tb_run_error(c, "perfedavg", PFLREF_EINVAL, &err);
    ck_assert_str_eq(err.where, "schedule.rounds[0].batches[0]");
    ck_assert_msg(strstr(err.message, "perfedavg.calls = two") != NULL, "%s",
                  err.message);
    tb_free(c);
}
END_TEST

/* apfl.alpha_lr (PFLlib's alpha_update reads the undecayed learning
 * rate).  APFL as PFLlib runs it, α adaptive, two clients f_i(v) =
 * ½ a_i (v − b_i)² (a = 1.5, 0.75; b = 1, −1), three rounds of two steps, every client in every round,
 * η = ¼, α = 0.6, γ = ½; the final α_0 under
 *   A: alpha_lr = constant, η_α unset;   B: constant, η_α = ¼ given;
 *   C: alpha_lr = decayed, η_α unset;    D: constant, schedule constant;
 *   E: decayed, schedule constant.
 * constant with η_α unset steps α with the undecayed η (A == B, bit for
 * bit), decayed differs (C ≠ A); without a schedule the switch changes
 * nothing (D == E), and the decay itself shows (D ≠ A). */
static double apfl_alpha0(int alpha_lr, int schedule, double eta_alpha)
{
    tb_case *c = tb_quadratic(1, 2);
    tb_quad(c, 0, (const double[]){1.5}, (const double[]){1}, 1);
    tb_quad(c, 1, (const double[]){0.75}, (const double[]){-1}, 1);
    c->hyper.eta = 0.25;
    c->hyper.apfl.alpha = 0.6;
    c->hyper.apfl.eta_alpha = eta_alpha;
    c->hyper.apfl.alpha_mode = PFLREF_APFL_ALPHA_ADAPTIVE;
    c->hyper.apfl.variant = PFLREF_APFL_VARIANT_PFLLIB;
    c->hyper.apfl.alpha_lr = alpha_lr;
    if (schedule) {
        c->hyper.lr.schedule = PFLREF_LR_EXPONENTIAL;
        c->hyper.lr.gamma = 0.5;
    }
    for (int t = 0; t < 3; t++)
        tb_round(c, "0 1", "0 | 0", "0 | 0");
    pflref_run_result *r = tb_run(c, "apfl", NULL);
    ck_assert_ptr_nonnull(r->alpha);
    const double a = r->alpha[0];
    pflref_run_result_free(r);
    tb_free(c);
    return a;
}

START_TEST(test_apfl_alpha_lr)
{
    /* req: apfl.alg1.l7 */
    const double A = apfl_alpha0(PFLREF_APFL_ALPHA_LR_CONSTANT, 1, NAN);
    const double B = apfl_alpha0(PFLREF_APFL_ALPHA_LR_CONSTANT, 1, 0.25);
    const double C = apfl_alpha0(PFLREF_APFL_ALPHA_LR_DECAYED, 1, NAN);
    const double D = apfl_alpha0(PFLREF_APFL_ALPHA_LR_CONSTANT, 0, NAN);
    const double E = apfl_alpha0(PFLREF_APFL_ALPHA_LR_DECAYED, 0, NAN);
    ck_assert_double_eq(A, B);
    ck_assert_double_eq(D, E);
    ck_assert_msg(C != A && D != A && A > 0.0 && A < 1.0,
                  "alpha_0: constant %.17g, decayed %.17g, no decay %.17g",
                  A, C, D);
}
END_TEST

/* The golden vectors of the exact replays (golden/fedavg/make_linear.py:
 * exponential over three full rounds, step with partial participation;
 * the pfllib presets of pFedMe, Ditto, APFL and Per-FedAvg with -ld under
 * partial participation, golden/pfedme/make_linear.py,
 * golden/ditto/make_linear.py, golden/apfl/make_worked.py,
 * golden/perfedavg/make_data.py: Per-FedAvg's β kept by lr.scope =
 * no_beta, its personalisation at the decayed α by perfedavg.eval_lr =
 * decayed). */
START_TEST(test_golden_vectors)
{
    static const char *const files[] = {
        "golden/fedavg/worked-lr-exponential.json",
        "golden/fedavg/worked-lr-step.json",
        "golden/pfedme/worked-linear-decay-paper.json",
        "golden/pfedme/worked-linear-pfllib-decay.json",
        "golden/pfedme/worked-linear-pfllib-decay-eval-reset.json",
        "golden/ditto/worked-linear-pfllib-decay.json",
        "golden/apfl/worked-linear-pfllib-decay.json",
        "golden/perfedavg/worked-linear-pfllib-decay.json",
        "golden/perfedavg/worked-linear-pfllib-decay-alpha-then-beta.json",
        "golden/perfedavg/worked-linear-paper-decay-eval-decayed.json"};
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++)
        tu_assert_golden(files[f]);
}
END_TEST

/* γ ≤ 0 and lr.step_rounds = 0 are refused with their path. */
START_TEST(test_errors)
{
    pflref_error err;
    tb_case *c = one_client(1);
    c->hyper.lr.schedule = PFLREF_LR_EXPONENTIAL;
    c->hyper.lr.gamma = 0.0;
    tb_run_error(c, "local", PFLREF_EINVAL, &err);
    ck_assert_str_eq(err.where, "algorithm.hyperparameters.lr.gamma");
    tb_free(c);
    c = one_client(1);
    c->hyper.lr.schedule = PFLREF_LR_STEP;
    c->hyper.lr.step_rounds = 0;
    tb_run_error(c, "fedavg", PFLREF_EINVAL, &err);
    ck_assert_str_eq(err.where, "algorithm.hyperparameters.lr.step_rounds");
    tb_free(c);
}
END_TEST

Suite *lr_suite(void)
{
    Suite *s = suite_create("lr");
    TCase *tc = tcase_create("lr");
    tcase_add_test(tc, test_exponential_by_hand);
    tcase_add_test(tc, test_step_by_hand);
    tcase_add_test(tc, test_scope_eta_p);
    tcase_add_test(tc, test_scope_no_beta);
    tcase_add_test(tc, test_count_trainings_by_hand);
    tcase_add_test(tc, test_perfedavg_two_calls_by_hand);
    tcase_add_test(tc, test_apfl_alpha_lr);
    tcase_add_test(tc, test_golden_vectors);
    tcase_add_test(tc, test_errors);
    suite_add_tcase(s, tc);
    return s;
}
