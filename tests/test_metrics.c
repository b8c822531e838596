/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_metrics.c: client-aware summaries
 * (ref/core/metrics.c).
 *
 * Expected values come from the worked example of shared/spec
 * notes-cfl-ifca-sampling-metrics.md §4.2 (computed there with numpy and
 * GSL) or are derived by hand in the comment beside each test.
 *
 * Tolerances.  The inputs are short decimals, each stored with a relative
 * error ≤ u = 2⁻⁵³ ≈ 1.1e-16.  A sum of N positive terms in a plain double
 * accumulator errs by ≤ (N − 1)u relative (recursive summation), one
 * division adds u, so a mean over N = 10 is within (N + 1)u ≈ 1.2e-15 of
 * the exact decimal answer: RTOL_MEAN = 4e-15 leaves a margin of 3.
 * A type-7 quantile is one subtraction, one product and one sum on two
 * stored decimals (≤ 4u), also within RTOL_MEAN.  The sd squares
 * deviations a_i − ā that cancel (|a_i| / |a_i − ā| up to 35 in the worked
 * example), worth ≈ 13u on the sum of squares and half that after the
 * root: RTOL_SD = 1e-14.  Selections (worst, best) and sums of dyadic
 * values (0.25, 0.9 + 0.9 halved) are exact and compared with ==.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "pflref/metrics.h"
#include "suites.h"

#define RTOL_MEAN 4e-15
#define RTOL_SD 1e-14

/* |x − r| ≤ rtol·|r| */
static int close_rel(double x, double r, double rtol)
{
    return fabs(x - r) <= rtol * fabs(r);
}

#define ASSERT_REL(x, r, rtol, what)                                       \
    ck_assert_msg(close_rel((x), (r), (rtol)),                             \
                  "%s = %.17g, expected %.17g (rtol %g)", (what), (x),    \
                  (r), (rtol))

/* The worked example of notes §4.2: per-client accuracies of 10 clients
 * and their test sample counts. */
static const double A10[10] = {0.62, 0.71, 0.55, 0.80, 0.90,
                               0.45, 0.67, 0.73, 0.88, 0.59};
static const double N10[10] = {100, 300, 50, 200, 400, 20, 150, 250, 500, 30};
/* sorted: 0.45 0.55 0.59 0.62 0.67 0.71 0.73 0.80 0.88 0.90 */
static const double A10_SORTED[10] = {0.45, 0.55, 0.59, 0.62, 0.67,
                                      0.71, 0.73, 0.80, 0.88, 0.90};

static pflref_summary summarize_ok(const double *a, const double *w,
                                   size_t N, pflref_direction dir,
                                   double *work)
{
    pflref_summary s;
    pflref_error err;
    pflref_error_clear(&err);
    pflref_status st = pflref_metrics_summarize(a, w, N, dir, work, &s, &err);
    ck_assert_msg(st == PFLREF_OK, "summarize failed: %s at '%s': %s",
                  pflref_status_name(st), err.where, err.message);
    return s;
}

/* EVIDENCE-OF: notes §4.2 worked example (accuracy, higher is better).
 *   mean  = 6.9 / 10 = 0.69
 *   sd    = √(Σ(a_i − 0.69)² / 10) = √(0.1868 / 10) = √0.01868
 *         = 0.1366747965061591   (deviations −.07 .02 −.14 .11 .21 −.24
 *           −.02 .04 .19 −.10, squares summing to 0.1868)
 *   worst = min = 0.45, best = max = 0.90
 *   p10:  h = 0.1·9 = 0.9, lo = 0: 0.45 + 0.9·(0.55 − 0.45) = 0.54
 *   p90:  h = 0.9·9 = 8.1, lo = 8: 0.88 + 0.1·(0.90 − 0.88) = 0.882
 *   worst decile: ⌈10/10⌉ = 1 client, the lowest: 0.45
 *   weighted: Σ n_i a_i = 62 + 213 + 27.5 + 160 + 360 + 9 + 100.5 + 182.5
 *             + 440 + 17.7 = 1572.2;  Σ n_i = 2000;  1572.2/2000 = 0.7861 */
START_TEST(test_worked_example_accuracy)
{
    /* req: metrics.mean, metrics.sd, metrics.worst, metrics.p10 */
    /* req: metrics.bottom10, metrics.micro */
    double work[10];
    pflref_summary s =
        summarize_ok(A10, N10, 10, PFLREF_HIGHER_IS_BETTER, work);
    ck_assert_msg(s.N == 10, "N = %zu, expected 10", s.N);
    ASSERT_REL(s.mean, 0.69, RTOL_MEAN, "mean");
    ASSERT_REL(s.sd, sqrt(0.01868), RTOL_SD, "sd (closed form)");
    ASSERT_REL(s.sd, 0.1366747965061591, RTOL_SD, "sd (notes)");
    ck_assert_msg(s.worst == 0.45, "worst = %.17g, expected 0.45", s.worst);
    ck_assert_msg(s.best == 0.90, "best = %.17g, expected 0.90", s.best);
    ASSERT_REL(s.p10, 0.54, RTOL_MEAN, "p10");
    ASSERT_REL(s.p90, 0.882, RTOL_MEAN, "p90");
    ck_assert_msg(s.worst_decile_mean == 0.45,
                  "worst decile mean = %.17g, expected 0.45 (one client)",
                  s.worst_decile_mean);
    ASSERT_REL(s.weighted_mean, 0.7861, RTOL_MEAN, "weighted mean");
}
END_TEST

/* The same numbers read as a loss (lower is better): worst = max = 0.90,
 * best = min = 0.45, worst decile = the one highest value 0.90.  The
 * direction-free statistics are unchanged. */
START_TEST(test_worked_example_loss)
{
    /* req: metrics.worst, metrics.bottom10 */
    double work[10];
    pflref_summary s = summarize_ok(A10, N10, 10, PFLREF_LOWER_IS_BETTER, work);
    ck_assert_msg(s.worst == 0.90, "loss worst = %.17g, expected 0.90",
                  s.worst);
    ck_assert_msg(s.best == 0.45, "loss best = %.17g, expected 0.45", s.best);
    ck_assert_msg(s.worst_decile_mean == 0.90,
                  "loss worst decile mean = %.17g, expected 0.90",
                  s.worst_decile_mean);
    ASSERT_REL(s.mean, 0.69, RTOL_MEAN, "mean");
    ASSERT_REL(s.sd, 0.1366747965061591, RTOL_SD, "sd");
    ASSERT_REL(s.p10, 0.54, RTOL_MEAN, "p10");
    ASSERT_REL(s.p90, 0.882, RTOL_MEAN, "p90");
    ASSERT_REL(s.weighted_mean, 0.7861, RTOL_MEAN, "weighted mean");
}
END_TEST

/* work holds the values sorted ascending on return; a is untouched. */
START_TEST(test_work_is_sorted)
{
    double a[10], work[10];
    memcpy(a, A10, sizeof a);
    (void)summarize_ok(a, NULL, 10, PFLREF_HIGHER_IS_BETTER, work);
    for (size_t j = 0; j < 10; j++) {
        ck_assert_msg(work[j] == A10_SORTED[j],
                      "work[%zu] = %.17g, expected a_(%zu) = %.17g", j,
                      work[j], j, A10_SORTED[j]);
        ck_assert_msg(a[j] == A10[j], "a[%zu] was modified", j);
    }
}
END_TEST

/* weights = NULL gives weighted_mean = mean (header). */
START_TEST(test_null_weights)
{
    /* req: metrics.micro */
    double work[10];
    pflref_summary s =
        summarize_ok(A10, NULL, 10, PFLREF_HIGHER_IS_BETTER, work);
    ck_assert_msg(s.weighted_mean == s.mean,
                  "NULL weights: weighted mean %.17g != mean %.17g",
                  s.weighted_mean, s.mean);
}
END_TEST

/* Zero weights are allowed when the sum is positive: weight 1 on client 4
 * only gives Σ w_i a_i / Σ w_i = a_4 = 0.90 exactly (the other products are
 * exact zeros). */
START_TEST(test_zero_weights_allowed)
{
    const double w[10] = {0, 0, 0, 0, 1, 0, 0, 0, 0, 0};
    double work[10];
    pflref_summary s = summarize_ok(A10, w, 10, PFLREF_HIGHER_IS_BETTER, work);
    ck_assert_msg(s.weighted_mean == 0.90,
                  "weighted mean with one unit weight = %.17g, expected 0.90",
                  s.weighted_mean);
}
END_TEST

/* N = 1: every statistic is the value itself, the sd is 0, and the decile
 * count is (1 + 9)/10 = 1. */
START_TEST(test_single_client)
{
    const double a[1] = {0.7375};
    const double w[1] = {12.5};
    double work[1];
    pflref_direction dirs[2] = {PFLREF_LOWER_IS_BETTER,
                                PFLREF_HIGHER_IS_BETTER};
    for (int k = 0; k < 2; k++) {
        pflref_summary s = summarize_ok(a, w, 1, dirs[k], work);
        ck_assert_msg(s.mean == 0.7375 && s.worst == 0.7375 &&
                          s.best == 0.7375 && s.p10 == 0.7375 &&
                          s.p90 == 0.7375 && s.worst_decile_mean == 0.7375 &&
                          s.weighted_mean == 0.7375,
                      "N = 1 (dir %d): a statistic differs from the value",
                      k);
        ck_assert_msg(s.sd == 0.0, "N = 1: sd = %.17g, expected 0", s.sd);
    }
}
END_TEST

/* N = 11: ⌈11/10⌉ = 2 worst clients (the rounding is up, not down).
 * sorted: .126 .238 .302 .372 .449 .561 .677 .750 .815 .904 .993
 *   accuracy: (0.126 + 0.238)/2 = 0.182;  loss: (0.904 + 0.993)/2 = 0.9485
 *   p10: h = 0.1·10 = 1 → a_(1) = 0.238;  p90: h = 9 → a_(9) = 0.904 */
START_TEST(test_decile_n11)
{
    /* req: metrics.bottom10 */
    const double a[11] = {0.815, 0.372, 0.904, 0.561, 0.238, 0.677,
                          0.449, 0.993, 0.126, 0.750, 0.302};
    double work[11];
    pflref_summary s = summarize_ok(a, NULL, 11, PFLREF_HIGHER_IS_BETTER, work);
    ASSERT_REL(s.worst_decile_mean, 0.182, RTOL_MEAN,
               "N = 11 accuracy worst-decile mean (2 clients)");
    ASSERT_REL(s.p10, 0.238, RTOL_MEAN, "N = 11 p10");
    ASSERT_REL(s.p90, 0.904, RTOL_MEAN, "N = 11 p90");
    s = summarize_ok(a, NULL, 11, PFLREF_LOWER_IS_BETTER, work);
    ASSERT_REL(s.worst_decile_mean, 0.9485, RTOL_MEAN,
               "N = 11 loss worst-decile mean (2 clients)");
}
END_TEST

/* N = 20: ⌈20/10⌉ = 2;  N = 21: ⌈21/10⌉ = 3.
 * a_i = (7i mod 20 + 1)/20 (N = 20), (8i mod 21 + 1)/20 (N = 21):
 * permutations of 0.05, 0.10, …, N/20 (7 ⊥ 20, 8 ⊥ 21).
 *   N = 20, accuracy: (0.05 + 0.10)/2 = 0.075; loss: (0.95 + 1.00)/2 = 0.975
 *   N = 20, p10: h = 1.9 → 0.10 + 0.9·0.05 = 0.145;
 *           p90: h = 17.1 → 0.90 + 0.1·0.05 = 0.905
 *   N = 21, accuracy: (0.05 + 0.10 + 0.15)/3 = 0.10;
 *           loss: (0.95 + 1.00 + 1.05)/3 = 1.00 */
START_TEST(test_decile_n20_n21)
{
    double a[21], work[21];
    for (size_t i = 0; i < 20; i++)
        a[i] = (double)((7 * i) % 20 + 1) / 20.0;
    pflref_summary s = summarize_ok(a, NULL, 20, PFLREF_HIGHER_IS_BETTER, work);
    ASSERT_REL(s.worst_decile_mean, 0.075, RTOL_MEAN,
               "N = 20 accuracy worst-decile mean (2 clients)");
    ASSERT_REL(s.p10, 0.145, RTOL_MEAN, "N = 20 p10");
    ASSERT_REL(s.p90, 0.905, RTOL_MEAN, "N = 20 p90");
    s = summarize_ok(a, NULL, 20, PFLREF_LOWER_IS_BETTER, work);
    ASSERT_REL(s.worst_decile_mean, 0.975, RTOL_MEAN,
               "N = 20 loss worst-decile mean (2 clients)");

    for (size_t i = 0; i < 21; i++)
        a[i] = (double)((8 * i) % 21 + 1) / 20.0;
    s = summarize_ok(a, NULL, 21, PFLREF_HIGHER_IS_BETTER, work);
    ASSERT_REL(s.worst_decile_mean, 0.10, RTOL_MEAN,
               "N = 21 accuracy worst-decile mean (3 clients)");
    s = summarize_ok(a, NULL, 21, PFLREF_LOWER_IS_BETTER, work);
    ASSERT_REL(s.worst_decile_mean, 1.00, RTOL_MEAN,
               "N = 21 loss worst-decile mean (3 clients)");
}
END_TEST

/* Ties at the decile boundary and at the extremes, N = 11 (2 worst):
 * sorted .25 .25 .25 .4 .5 .6 .7 .8 .9 .9 .9.  Accuracy: worst 0.25, the
 * two worst average to 0.25 exactly; loss: worst 0.9, (0.9 + 0.9)/2 = 0.9
 * exactly (doubling and halving are exact).  p10 = a_(1) = 0.25,
 * p90 = a_(9) = 0.9 (h integral). */
START_TEST(test_ties)
{
    const double a[11] = {0.25, 0.6, 0.25, 0.9, 0.25, 0.4,
                          0.9,  0.9, 0.5,  0.7, 0.8};
    double work[11];
    pflref_summary s = summarize_ok(a, NULL, 11, PFLREF_HIGHER_IS_BETTER, work);
    ck_assert_msg(s.worst == 0.25 && s.best == 0.9,
                  "ties, accuracy: worst %.17g best %.17g", s.worst, s.best);
    ck_assert_msg(s.worst_decile_mean == 0.25,
                  "ties, accuracy: worst decile mean %.17g, expected 0.25",
                  s.worst_decile_mean);
    ck_assert_msg(s.p10 == 0.25 && s.p90 == 0.9,
                  "ties: p10 %.17g (0.25), p90 %.17g (0.9)", s.p10, s.p90);
    s = summarize_ok(a, NULL, 11, PFLREF_LOWER_IS_BETTER, work);
    ck_assert_msg(s.worst == 0.9 && s.best == 0.25,
                  "ties, loss: worst %.17g best %.17g", s.worst, s.best);
    ck_assert_msg(s.worst_decile_mean == 0.9,
                  "ties, loss: worst decile mean %.17g, expected 0.9",
                  s.worst_decile_mean);
}
END_TEST

/* The quantile alone on dyadic data, where every step is exact:
 * sorted (1.5, 2.25, 4, 7.125), N − 1 = 3.
 *   p = 0 → 1.5;  p = 1 → 7.125
 *   p = 0.5:  h = 1.5,  2.25 + 0.5·1.75 = 3.125
 *   p = 0.25: h = 0.75, 1.5 + 0.75·0.75 = 2.0625 */
START_TEST(test_quantile_sorted)
{
    /* req: metrics.p10 */
    const double x[4] = {1.5, 2.25, 4.0, 7.125};
    ck_assert_msg(pflref_quantile_sorted(x, 4, 0.0) == 1.5, "q(0) != min");
    ck_assert_msg(pflref_quantile_sorted(x, 4, 1.0) == 7.125, "q(1) != max");
    ck_assert_msg(pflref_quantile_sorted(x, 4, 0.5) == 3.125,
                  "q(0.5) = %.17g, expected 3.125",
                  pflref_quantile_sorted(x, 4, 0.5));
    ck_assert_msg(pflref_quantile_sorted(x, 4, 0.25) == 2.0625,
                  "q(0.25) = %.17g, expected 2.0625",
                  pflref_quantile_sorted(x, 4, 0.25));
    ck_assert_msg(pflref_quantile_sorted(x, 1, 0.9) == 1.5,
                  "N = 1: q(0.9) != the only value");
    /* outside the precondition: no out-of-bounds read */
    ck_assert_msg(isnan(pflref_quantile_sorted(x, 0, 0.5)), "N = 0: not NaN");
    ck_assert_msg(isnan(pflref_quantile_sorted(x, 4, NAN)), "p = NaN: not NaN");
    ck_assert_msg(pflref_quantile_sorted(x, 4, -0.5) == 1.5, "p < 0: not min");
    ck_assert_msg(pflref_quantile_sorted(x, 4, 1.5) == 7.125, "p > 1: not max");
}
END_TEST

/* Run summarize on bad input; expect EINVAL with the given `where`. */
static void expect_einval(const double *a, const double *w, size_t N,
                          pflref_direction dir, double *work,
                          pflref_summary *out, const char *where)
{
    pflref_error err;
    pflref_error_clear(&err);
    pflref_status st = pflref_metrics_summarize(a, w, N, dir, work, out, &err);
    ck_assert_msg(st == PFLREF_EINVAL, "expected EINVAL for '%s', got %s",
                  where, pflref_status_name(st));
    ck_assert_msg(err.status == PFLREF_EINVAL, "err.status not set");
    ck_assert_msg(strcmp(err.where, where) == 0,
                  "where = '%s', expected '%s'", err.where, where);
    ck_assert_msg(err.message[0] != '\0', "empty message for '%s'", where);
}

START_TEST(test_errors)
{
    double a[10], w[10], work[10];
    pflref_summary s;
    const pflref_direction H = PFLREF_HIGHER_IS_BETTER;

    expect_einval(A10, N10, 0, H, work, &s, "N");

    memcpy(a, A10, sizeof a);
    a[3] = NAN;
    expect_einval(a, N10, 10, H, work, &s, "a[3]");
    a[3] = A10[3];
    a[0] = -INFINITY;
    expect_einval(a, N10, 10, H, work, &s, "a[0]");

    memcpy(w, N10, sizeof w);
    w[2] = -1.0;
    expect_einval(A10, w, 10, H, work, &s, "weights[2]");
    w[2] = NAN;
    expect_einval(A10, w, 10, H, work, &s, "weights[2]");
    w[2] = INFINITY;
    expect_einval(A10, w, 10, H, work, &s, "weights[2]");

    memset(w, 0, sizeof w);  /* all +0.0: zero sum */
    expect_einval(A10, w, 10, H, work, &s, "weights");
    /* finite weights whose sum overflows */
    for (size_t i = 0; i < 10; i++)
        w[i] = 1e308;
    expect_einval(A10, w, 10, H, work, &s, "weights");

    expect_einval(NULL, N10, 10, H, work, &s, "a");
    expect_einval(A10, N10, 10, H, NULL, &s, "work");
    expect_einval(A10, N10, 10, H, work, NULL, "out");
    expect_einval(A10, N10, 10, (pflref_direction)7, work, &s, "dir");

    /* err may be NULL: only the status comes back */
    ck_assert_msg(pflref_metrics_summarize(A10, N10, 0, H, work, &s, NULL) ==
                      PFLREF_EINVAL,
                  "N = 0 with err = NULL did not fail");
}
END_TEST

Suite *metrics_suite(void)
{
    Suite *s = suite_create("metrics");
    TCase *tc = tcase_create("summary");
    tcase_add_test(tc, test_worked_example_accuracy);
    tcase_add_test(tc, test_worked_example_loss);
    tcase_add_test(tc, test_work_is_sorted);
    tcase_add_test(tc, test_null_weights);
    tcase_add_test(tc, test_zero_weights_allowed);
    tcase_add_test(tc, test_single_client);
    tcase_add_test(tc, test_decile_n11);
    tcase_add_test(tc, test_decile_n20_n21);
    tcase_add_test(tc, test_ties);
    tcase_add_test(tc, test_quantile_sorted);
    suite_add_tcase(s, tc);
    TCase *te = tcase_create("errors");
    tcase_add_test(te, test_errors);
    suite_add_tcase(s, te);
    return s;
}
