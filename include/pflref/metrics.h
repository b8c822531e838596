/* SPDX-License-Identifier: GPL-3.0-or-later */
/* pflref/metrics.h: client-aware summaries of a per-client metric.
 *
 * "Evaluation must be client-aware" (seed 003): a mean over clients hides
 * the clients a model serves badly, so every per-client metric a_1..a_N is
 * summarised by all of:
 *
 *   mean               (1/N) Σ a_i, summed in client order
 *   sd                 √((1/N) Σ (a_i − mean)²)       population, ddof = 0
 *   worst, best        max and min for a lower-is-better metric (a loss),
 *                      min and max for a higher-is-better one (accuracy)
 *   p10, p90           type-7 quantiles (linear interpolation; numpy's
 *                      default, = gsl_stats_quantile_from_sorted_data):
 *                      sorted a_(0) ≤ … ≤ a_(N−1), h = p(N−1), lo = ⌊h⌋,
 *                      q = a_(lo) + (h − lo)(a_(lo+1) − a_(lo))
 *   worst_decile_mean  mean of the ⌈N/10⌉ worst clients (the bottom decile
 *                      for accuracy, the highest-loss decile for a loss);
 *                      ⌈N/10⌉ is computed in integers as (N + 9) / 10
 *   weighted_mean      Σ w_i a_i / Σ w_i with w_i the clients' test sample
 *                      counts (= Σ correct / Σ samples for accuracy)
 */
#ifndef PFLREF_METRICS_H
#define PFLREF_METRICS_H

#include <stddef.h>
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    PFLREF_LOWER_IS_BETTER = 0,
    PFLREF_HIGHER_IS_BETTER = 1
} pflref_direction;

typedef struct {
    size_t N;
    double mean;
    double sd;
    double worst;
    double best;
    double p10;
    double p90;
    double worst_decile_mean;
    double weighted_mean;
} pflref_summary;

/* Summarise a[0..N−1].
 *   weights  [in, may be NULL] N nonnegative weights with positive sum;
 *            NULL gives weighted_mean = mean
 *   work     [out] N doubles of scratch (the sorted values on return)
 * Errors: PFLREF_EINVAL for N = 0, a non-finite a_i, a negative weight or
 * a zero weight sum. */
pflref_status pflref_metrics_summarize(const double *a, const double *weights,
                                       size_t N, pflref_direction dir,
                                       double *work, pflref_summary *out,
                                       pflref_error *err);

/* Type-7 quantile at p ∈ [0, 1] of sorted[0..N−1] (ascending, N ≥ 1). */
double pflref_quantile_sorted(const double *sorted, size_t N, double p);

#ifdef __cplusplus
}
#endif
#endif
