/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/core/metrics.c: client-aware summaries of a per-client metric a_1..a_N.
 *
 * Source: the pFL evaluation practice of seed 003 ("Evaluation must be
 * client-aware") and the definitions pinned in shared/spec
 * notes-cfl-ifca-sampling-metrics.md §4.2 and §0; docs/metrics.md.
 *
 * Implements pflref/metrics.h:
 *
 *   mean               ā = (1/N) Σ_i a_i                  client order
 *   sd                 √((1/N) Σ_i (a_i − ā)²)            ddof = 0 (numpy
 *                      np.std; GSL gsl_stats_sd_with_fixed_mean, NOT
 *                      gsl_stats_sd, which divides by N − 1)
 *   worst, best        by direction: a loss is worst at its maximum, an
 *                      accuracy at its minimum
 *   p10, p90           type-7 quantile of the sorted values (numpy's
 *                      default "linear", GSL's quantile_from_sorted_data)
 *   worst_decile_mean  mean of the c = ⌈N/10⌉ = (N + 9)/10 worst clients
 *   weighted_mean      Σ_i w_i a_i / Σ_i w_i                client order
 *
 * Symbols:  a_i ↔ a[i] (N)   w_i ↔ weights[i] (N)   ā ↔ mean
 *           a_(j) ↔ work[j], the values sorted ascending (N)
 *           c ↔ n_worst = ⌈N/10⌉ (worst_decile)
 *
 * Deviations from the libraries the definitions name, and why:
 *   a) the mean is a plain double accumulator in client order (GSL's
 *      gsl_stats_mean keeps a long-double running mean, numpy sums
 *      pairwise), so the result is fixed by the definition alone;
 *   b) the quantile is written as a_(lo) + δ (a_(lo+1) − a_(lo)) as the
 *      header defines it; GSL forms (1 − δ) a_(lo) + δ a_(lo+1), numpy yet
 *      another lerp.  They agree to within a few ulps, not bit for bit
 *      (notes §4.2), so golden comparisons of quantiles carry a tolerance.
 *
 * Determinism: every sum runs in client order (i = 0..N−1), except the
 * worst-decile sum, which runs over the sorted values in ascending order.
 * Sorting is qsort with a total order on the (finite) values; equal values
 * are interchangeable, so the sorted array does not depend on qsort's
 * stability.
 * Cost: O(N log N) for the sort, O(N) otherwise; no allocation.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pflref/metrics.h"
#include "core/args.h"

/* qsort order on finite doubles: ascending. */
static int cmp_ascending(const void *x, const void *y)
{
    const double a = *(const double *)x;
    const double b = *(const double *)y;
    return (a > b) - (a < b);
}

/* The lower position type-7 interpolates from, for a candidate lo = ⌊h⌋
 * of N ≥ 1 sorted values: lo itself when lo < N − 1 (and lo + 1 < N is the
 * upper one), else N − 1, which the quantile returns alone.  Proved with
 * Frama-C WP (proofs/README.md): every position the quantile reads is < N. */
/*@ requires N >= 1;
    assigns \nothing;
    ensures \result < N;
    ensures lo < N - 1 ==> \result == lo && \result + 1 < N;
    ensures lo >= N - 1 ==> \result == N - 1;
 */
static size_t quantile_lo(size_t lo, size_t N)
{
    return lo < N - 1 ? lo : N - 1;
}

/* Type-7's quantile of N >= 1 sorted values a at the position h, given
 * lo = ⌊h⌋ (h = p (N − 1), computed by pflref_quantile_sorted): a_(N−1)
 * when lo >= N − 1, else the interpolation
 *   q = a_(lo) + δ (a_(lo+1) − a_(lo)),  δ = h − lo.
 * Proved with Frama-C WP in its real model (proofs/README.md): the result
 * is that formula of exactly the positions ⌊h⌋ and ⌊h⌋ + 1 (its rounding
 * is not claimed). */
/*@ requires N >= 1 && \valid_read(sorted + (0 .. N - 1));
    requires floor: lo == \floor(h);
    assigns \nothing;
    ensures last: lo >= N - 1 ==> \result == sorted[N - 1];
    ensures between: lo < N - 1 ==>
            \result == sorted[lo] + (h - lo) * (sorted[lo + 1] - sorted[lo]);
 */
static double type7_at(const double *sorted, size_t N, double h, size_t lo)
{
    lo = quantile_lo(lo, N);
    if (lo == N - 1)
        return sorted[N - 1];  /* p = 1 (or h rounded up to N − 1) */
    const double delta = h - (double)lo;
    /* q = a_(lo) + δ (a_(lo+1) − a_(lo)) */
    return sorted[lo] + delta * (sorted[lo + 1] - sorted[lo]);
}

/* req: metrics.bottom10 */
/* The c = ⌈N/10⌉ worst clients among N ≥ 1 values sorted ascending: *count
 * := c and the first of their positions, first … first + c − 1: the c
 * smallest (0 …) when higher is better (an accuracy), the c largest
 * (N − c …) when lower is (a loss).  c = N/10 + (N mod 10 ≠ 0), the same
 * as (N + 9)/10 without its overflow for N > SIZE_MAX − 9.  Proved with
 * Frama-C WP (proofs/README.md). */
/*@ requires N >= 1;
    requires \valid(count);
    assigns *count;
    ensures 10 * (*count - 1) < N <= 10 * *count;
    ensures 1 <= *count <= N;
    ensures higher != 0 ==> \result == 0;
    ensures higher == 0 ==> \result == N - *count;
    ensures \result + *count <= N;
 */
static size_t worst_decile(size_t N, int higher, size_t *count)
{
    *count = N / 10 + (N % 10 != 0);
    return higher ? 0 : N - *count;
}

/* Type-7's quantile of N sorted values at p.  Outside its precondition
 * (N ≥ 1, p ∈ [0, 1]) it does not read out of bounds: N = 0 or a NaN p
 * gives NaN, p < 0 the minimum, p > 1 the maximum.  Proved with Frama-C WP
 * in its real model (proofs/README.md) for N ≥ 1 and a finite p: the
 * result is a_(lo) + δ (a_(lo+1) − a_(lo)) at lo = ⌊p (N − 1)⌋, the
 * position the C's cast computes (its rounding is not claimed). */
/*@ requires N >= 1 ==> \valid_read(sorted + (0 .. N - 1));
    requires \is_finite(p);
    assigns \nothing;
    behavior low:
      assumes N >= 1 && p <= 0;
      ensures \result == sorted[0];
    behavior high:
      assumes N >= 1 && p >= 1;
      ensures \result == sorted[N - 1];
    behavior single:
      assumes N == 1 && 0 < p < 1;
      ensures \result == sorted[0];
    behavior inside:
      assumes N >= 2 && 0 < p < 1;
      ensures type7:  // req: metrics.p10
              \let h = p * (N - 1); \let lo = \floor(h);
              \result == sorted[lo] + (h - lo) * (sorted[lo + 1] - sorted[lo]);
 */
/* req: metrics.p10 */
double pflref_quantile_sorted(const double *sorted, size_t N, double p)
{
    /* Quick return if possible. */
    if (N == 0 || isnan(p))
        return NAN;
    if (p <= 0.0)
        return sorted[0];
    if (p >= 1.0)
        return sorted[N - 1];
    /* h = p (N − 1), lo = ⌊h⌋, δ = h − lo.  A cast truncates, which is ⌊h⌋
     * for 0 ≤ h ≤ N − 1 (Frama-C's RTE plugin emits no range guard for a
     * cast to a 64-bit integer, hence cast_defined). */
    const double h = p * (double)(N - 1);
    /*@ assert cast_defined: 0 <= h <= N - 1; */
    const size_t lo = (size_t)h;
    /*@ assert lo: lo == \floor(h); */
    return type7_at(sorted, N, h, lo);
}

/* err := PFLREF_EINVAL at "<name>[i]": "<name>[i] = <value> <what>". */
static pflref_status bad_entry(pflref_error *err, const char *name, size_t i,
                               double value, const char *what)
{
    char where[48];
    snprintf(where, sizeof where, "%s[%zu]", name, i);
    return pflref_error_set(err, PFLREF_EINVAL, where, "%s[%zu] = %g %s",
                            name, i, value, what);
}

/* Test the input parameters of pflref_metrics_summarize, in its order;
 * *w_sum := Σ_i w_i in client order (0 when weights is NULL). */
static pflref_status check_inputs(const double *a, const double *weights,
                                  size_t N, pflref_direction dir,
                                  const double *work,
                                  const pflref_summary *out, double *w_sum,
                                  pflref_error *err)
{
    pflref_status st;
    *w_sum = 0.0;
    if (N == 0)
        return pflref_error_set(err, PFLREF_EINVAL, "N",
                                "N = 0: a summary needs at least one client");
    if ((st = pflref_arg_nonnull(err, "a", a)) ||
        (st = pflref_arg_nonnull(err, "work", work)) ||
        (st = pflref_arg_nonnull(err, "out", out)))
        return st;
    if (dir != PFLREF_LOWER_IS_BETTER && dir != PFLREF_HIGHER_IS_BETTER)
        return pflref_error_set(err, PFLREF_EINVAL, "dir",
                                "dir = %d is neither lower- nor "
                                "higher-is-better", (int)dir);
    for (size_t i = 0; i < N; i++)
        if (!isfinite(a[i]))
            return bad_entry(err, "a", i, a[i], "is not finite");
    if (weights == NULL)
        return PFLREF_OK;
    for (size_t i = 0; i < N; i++) {
        if (!isfinite(weights[i]) || weights[i] < 0.0)
            return bad_entry(err, "weights", i, weights[i],
                             "is not a finite nonnegative number");
        *w_sum += weights[i];
    }
    if (!(*w_sum > 0.0) || !isfinite(*w_sum))
        return pflref_error_set(err, PFLREF_EINVAL, "weights",
                                "the weights sum to %g; the sum must be "
                                "positive and finite", *w_sum);
    return PFLREF_OK;
}

/* sd = √((1/N) Σ (a_i − ā)²), client order, ddof = 0; when the squares
 * overflow (deviations beyond about 1e154), the same with every deviation
 * divided by s = max |a_i − ā| and s multiplied back. */
/* req: metrics.sd */
static double population_sd(const double *a, size_t N, double mean)
{
    double ss = 0.0;
    for (size_t i = 0; i < N; i++) {
        const double dev = a[i] - mean;
        ss += dev * dev;
    }
    double sd = sqrt(ss / (double)N);
    if (!isfinite(ss) && isfinite(mean)) {
        double s = 0.0;
        for (size_t i = 0; i < N; i++)
            s = fabs(a[i] - mean) > s ? fabs(a[i] - mean) : s;
        ss = 0.0;
        for (size_t i = 0; i < N; i++) {
            const double dev = (a[i] - mean) / s;
            ss += dev * dev;
        }
        sd = s * sqrt(ss / (double)N);
    }
    return sd;
}

pflref_status pflref_metrics_summarize(const double *a, const double *weights,
                                       size_t N, pflref_direction dir,
                                       double *work, pflref_summary *out,
                                       pflref_error *err)
{
    double w_sum;
    pflref_status st = check_inputs(a, weights, N, dir, work, out, &w_sum,
                                    err);
    if (st != PFLREF_OK)
        return st;

    /* req: metrics.mean */
    /* ā = (1/N) Σ a_i, client order */
    double sum = 0.0;
    for (size_t i = 0; i < N; i++)
        sum += a[i];
    const double mean = sum / (double)N;
    const double sd = population_sd(a, N, mean);

    /* req: metrics.micro */
    /* weighted mean Σ w_i a_i / Σ w_i, client order; NULL weights: ā */
    double weighted_mean = mean;
    if (weights != NULL) {
        double wa = 0.0;
        for (size_t i = 0; i < N; i++)
            wa += weights[i] * a[i];
        weighted_mean = wa / w_sum;
    }

    /* a_(0) ≤ … ≤ a_(N−1) in work */
    memcpy(work, a, N * sizeof *work);
    qsort(work, N, sizeof *work, cmp_ascending);

    /* The c = ⌈N/10⌉ worst clients: the c smallest values of an accuracy
     * (work[0..c−1]), the c largest of a loss (work[N−c..N−1]). */
    const int higher = dir == PFLREF_HIGHER_IS_BETTER;
    size_t n_worst;
    const size_t first = worst_decile(N, higher, &n_worst);
    double worst_sum = 0.0;
    for (size_t j = first; j < first + n_worst; j++)
        worst_sum += work[j];

    *out = (pflref_summary){
        .N = N,
        .mean = mean,
        .sd = sd,
        /* req: metrics.worst */
        .worst = higher ? work[0] : work[N - 1],
        .best = higher ? work[N - 1] : work[0],
        .p10 = pflref_quantile_sorted(work, N, 0.1),
        .p90 = pflref_quantile_sorted(work, N, 0.9),
        .worst_decile_mean = worst_sum / (double)n_worst,
        .weighted_mean = weighted_mean,
    };
    return PFLREF_OK;
}
