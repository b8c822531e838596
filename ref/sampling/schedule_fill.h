/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/sampling/schedule_fill.h: the record of the second pass of
 * pflref_schedule_generate (schedule.c), which fills the schedule, and the
 * predicates its proofs state (private; proofs/README.md).
 */
#ifndef PFLREF_SAMPLING_SCHEDULE_FILL_H
#define PFLREF_SAMPLING_SCHEDULE_FILL_H

#include <stddef.h>
#include "pflref/schedule.h"

/* What the second pass reads (its epoch counter e_global is apart). */
typedef struct {
    const pflref_schedule_config *cfg;
    const size_t *n;          /* n_i, N entries                           */
    size_t N;
    pflref_sampler *smp;
    size_t *perm;             /* scratch of n_max = max_i n_i entries     */
    size_t n_max;
} fill_pass;

/* For the proofs: what the second pass reads (1 ≤ m ≤ N, n_i in 1..n_max,
 * perm of n_max entries), apart from what it writes. */
/*@ predicate fill_ready{L}(fill_pass f) =
      \valid_read(f.cfg) && 1 <= f.cfg->m <= f.N &&
      \valid_read(f.n + (0 .. f.N - 1)) &&
      (\forall integer i; 0 <= i < f.N ==> 1 <= f.n[i] <= f.n_max) &&
      \valid(f.perm + (0 .. f.n_max - 1));
    predicate fill_apart(fill_pass f, unsigned long *e, pflref_error *err) =
      \separated(e, f.cfg, f.n + (0 .. f.N - 1),
                 f.perm + (0 .. f.n_max - 1), err);
    predicate beside(fill_pass f, unsigned long *e, pflref_error *err,
                     pflref_batches *b, integer m) =
      \separated(b + (0 .. m - 1), e, f.cfg, f.n + (0 .. f.N - 1),
                 f.perm + (0 .. f.n_max - 1), err);
    predicate ids_beside(fill_pass f, unsigned long *e, pflref_error *err,
                         size_t *ids, integer m) =
      \separated(ids + (0 .. m - 1), e, f.cfg, f.n + (0 .. f.N - 1),
                 f.perm + (0 .. f.n_max - 1), err);
    predicate plan_beside{L}(pflref_round_plan *r, integer m, fill_pass f,
                             unsigned long *e, pflref_error *err) =
      \valid(r->clients + (0 .. m - 1)) && \valid(r->selected + (0 .. m - 1)) &&
      \valid(r->drawn + (0 .. m - 1)) && \valid(r->batches + (0 .. m - 1)) &&
      \separated(r->clients + (0 .. m - 1), r->selected + (0 .. m - 1),
                 r->drawn + (0 .. m - 1), r->batches + (0 .. m - 1), r) &&
      ids_beside(f, e, err, r->clients, m) &&
      ids_beside(f, e, err, r->selected, m) &&
      ids_beside(f, e, err, r->drawn, m) && beside(f, e, err, r->batches, m);
 */

#endif
