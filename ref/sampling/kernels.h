/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/sampling/kernels.h: the proved index kernels of the sampling floor
 * (private).  Each is plain C (no library call, no floating point) and
 * carries an ACSL contract beside its definition, proved with Frama-C's WP
 * plugin with runtime-error guards (`make proofs`, proofs/README.md):
 *
 *   ids.c      the schedule's scans (the two public ones are declared in
 *              pflref/schedule.h), the step-offset scan and the position
 *              search, the participant / selected / drawn bitmap, the
 *              saturating size arithmetic, the copy of one minibatch;
 *   shuffle.c  numpy's interval draw and its mask, the Fisher–Yates
 *              permutation of numpy's legacy choice.
 *
 * The generator those kernels draw from is opaque to them: they reach it
 * through pflref_rng_raw32 (defined in sampler.c on gsl_rng_get), whose
 * contract below says it changes the generator's state and nothing the
 * kernels read or write.  That contract is the one assumption of the proofs
 * of shuffle.c (the generator is a GSL object, separate from every index
 * array).
 */
#ifndef PFLREF_SAMPLING_KERNELS_H
#define PFLREF_SAMPLING_KERNELS_H

#include <stddef.h>
#include <stdint.h>
#include "pflref/sampler.h"

/*@ ghost int pflref_rng_state; */

/*@ inductive all_ones(integer m) {
      case zero: all_ones(0);
      case twice_plus_one:
        \forall integer k; all_ones(k) ==> all_ones(2 * k + 1);
    }
    predicate is_permutation{L}(size_t *p, integer n) =
      (\forall integer k; 0 <= k < n ==> p[k] < n) &&
      (\forall integer k, l; 0 <= k < l < n ==> p[k] != p[l]);
    predicate ascending_subset{L}(size_t *ids, integer m, integer N) =
      (\forall integer j; 0 <= j < m ==> ids[j] < N) &&
      (\forall integer j; 0 < j < m ==> ids[j - 1] < ids[j]);
 */

/* The generator's next raw 32-bit output (gsl_rng_get on mt19937). */
/*@ assigns pflref_rng_state; */
unsigned long pflref_rng_raw32(void *rng);

/* The sampler's choice (sampler.c; declared in pflref/sampler.h), with what
 * its callers rely on: on PFLREF_OK the m chosen ids are a strictly
 * ascending subset of 0..N−1 (ascending_subset, above; proved in sampler.c
 * from its check with pflref_ids_first_bad; proofs/coq/SamplerJoint.v
 * proves, on WP's own translation of ascending_subset, that they form one
 * of the m-subsets Sampling.v counts).  Its assigns clause is an assumption, as
 * pflref_rng_raw32's: besides chosen, drawn and *err it changes only the
 * sampler's own state (its generator and scratch ids), pflref_sampler_state
 * here. */
/*@ ghost int pflref_sampler_state; */
/*@ requires chosen == \null || \valid(chosen + (0 .. m - 1));
    requires drawn == \null || \valid(drawn + (0 .. m - 1));
    assigns pflref_sampler_state, *err, chosen[0 .. m - 1],
            drawn[0 .. m - 1];
    ensures \result == PFLREF_OK ==> 1 <= m <= N;
    ensures \result == PFLREF_OK ==> ascending_subset(chosen, m, N);
 */
pflref_status pflref_sampler_choose(pflref_sampler *s, unsigned long seed,
                                    size_t N, size_t m, size_t *chosen,
                                    size_t *drawn, pflref_error *err);

/* The sampler's workspace (sampler.c; declared in pflref/sampler.h): a new
 * allocation, which changes no block that existed before (an assumption,
 * as above: its code is not proved). */
/*@ assigns \nothing; */
pflref_sampler *pflref_sampler_alloc(pflref_sampler_kind kind, size_t N_max);

/* The reshuffle of a minibatch schedule (sampler.c; declared in
 * pflref/sampler.h): it permutes perm[0..n−1] with GSL and changes nothing
 * else but the error record and its own generator (an assumption, as
 * above: gsl_ran_shuffle is not proved). */
/*@ assigns perm[0 .. n - 1], *err, pflref_sampler_state; */
pflref_status pflref_shuffle(unsigned long seed, size_t *perm, size_t n,
                             pflref_error *err);

/* shuffle.c */
unsigned long pflref_interval_mask(unsigned long max);
unsigned long pflref_interval_draw(void *rng, unsigned long max);
void pflref_numpy_permutation(void *rng, size_t *perm, size_t N);

/* ids.c (the contracts are the proved ones; the code is in ids.c) */

/* a·b, or SIZE_MAX when it overflows. */
/*@ assigns \nothing;
    ensures a * b <= SIZE_MAX ==> \result == a * b;
    ensures a * b > SIZE_MAX ==> \result == SIZE_MAX;
 */
size_t pflref_size_mul_sat(size_t a, size_t b);

/* a + b, or SIZE_MAX when it overflows. */
/*@ assigns \nothing;
    ensures a + b <= SIZE_MAX ==> \result == a + b;
    ensures a + b > SIZE_MAX ==> \result == SIZE_MAX;
 */
size_t pflref_size_add_sat(size_t a, size_t b);

/* The first step whose offsets do not increase, or nsteps. */
/*@ requires nsteps < SIZE_MAX;
    requires \valid_read(step_off + (0 .. nsteps));
    assigns \nothing;
    ensures 0 <= \result <= nsteps;
    ensures \forall integer s; 0 <= s < \result ==>
            step_off[s] < step_off[s + 1];
    ensures \result < nsteps ==> step_off[\result + 1] <= step_off[\result];
 */
size_t pflref_steps_first_bad(const size_t *step_off, size_t nsteps);

/* The step s with step_off[s] ≤ pos < step_off[s + 1]. */
/*@ requires 1 <= nsteps < SIZE_MAX;
    requires \valid_read(step_off + (0 .. nsteps));
    requires step_off[0] <= pos < step_off[nsteps];
    requires \forall integer s; 0 <= s < nsteps ==>
             step_off[s] < step_off[s + 1];
    assigns \nothing;
    ensures 0 <= \result < nsteps;
    ensures step_off[\result] <= pos < step_off[\result + 1];
 */
size_t pflref_step_of(const size_t *step_off, size_t nsteps, size_t pos);

/* mark[ids[j]] := value for the ids < N (total). */
/*@ requires \valid_read(ids + (0 .. len - 1));
    requires \valid(mark + (0 .. N - 1));
    requires \separated(mark + (0 .. N - 1), ids + (0 .. len - 1));
    assigns mark[0 .. N - 1];
    ensures \forall integer j; 0 <= j < len && ids[j] < N ==>
            mark[ids[j]] == value;
    ensures \forall integer v; 0 <= v < N &&
            (\forall integer j; 0 <= j < len ==> ids[j] != v) ==>
            mark[v] == \old(mark[v]);
 */
void pflref_marks_set(unsigned char *mark, size_t N, const size_t *ids,
                      size_t len, unsigned char value);

/* The first selected id that is not a participant (mark 1) above
 * its predecessor, or len; the ones before it marked 2. */
/*@ requires \valid_read(selected + (0 .. len - 1));
    requires \valid(mark + (0 .. N - 1));
    requires \separated(mark + (0 .. N - 1), selected + (0 .. len - 1));
    assigns mark[0 .. N - 1];
    ensures 0 <= \result <= len;
    ensures \forall integer j; 0 <= j < \result ==>
            selected[j] < N && \old(mark[selected[j]]) == 1 &&
            mark[selected[j]] == 2;
    ensures \forall integer j; 0 < j < \result ==>
            selected[j - 1] < selected[j];
    ensures \result < len ==>
            !(selected[\result] < N && mark[selected[\result]] == 1 &&
              (\result == 0 || selected[\result] > selected[\result - 1]));
    ensures \forall integer v; 0 <= v < N &&
            (\forall integer j; 0 <= j < \result ==> selected[j] != v) ==>
            mark[v] == \old(mark[v]);
 */
size_t pflref_selected_first_bad(const size_t *selected, size_t len,
                                 size_t N, unsigned char *mark);

/* The first drawn id that is not a selected client (mark 2) still
 * unmarked, or len; the ones before it marked 3. */
/*@ requires \valid_read(drawn + (0 .. len - 1));
    requires \valid(mark + (0 .. N - 1));
    requires \separated(mark + (0 .. N - 1), drawn + (0 .. len - 1));
    assigns mark[0 .. N - 1];
    ensures 0 <= \result <= len;
    ensures \forall integer j; 0 <= j < \result ==>
            drawn[j] < N && \old(mark[drawn[j]]) == 2 && mark[drawn[j]] == 3;
    ensures \forall integer j, k; 0 <= j < k < \result ==>
            drawn[j] != drawn[k];
    ensures \result < len ==>
            !(drawn[\result] < N && mark[drawn[\result]] == 2);
    ensures \forall integer v; 0 <= v < N &&
            (\forall integer j; 0 <= j < \result ==> drawn[j] != v) ==>
            mark[v] == \old(mark[v]);
 */
size_t pflref_drawn_first_bad(const size_t *drawn, size_t len, size_t N,
                              unsigned char *mark);

/* ids[i] = i (and drawn[i] = i unless drawn is NULL), i < N. */
/*@ requires \valid(ids + (0 .. N - 1));
    requires drawn == \null || \valid(drawn + (0 .. N - 1));
    requires drawn == \null ||
             \separated(ids + (0 .. N - 1), drawn + (0 .. N - 1));
    assigns ids[0 .. N - 1], drawn[0 .. N - 1];
    ensures \forall integer i; 0 <= i < N ==> ids[i] == i;
    ensures drawn != \null ==> \forall integer i; 0 <= i < N ==> drawn[i] == i;
 */
void pflref_ids_iota(size_t *ids, size_t *drawn, size_t N);

/* idx[off …] := perm[lo … hi − 1], stopping at cap or n; the new
 * offset.  The copy is in bounds whatever the arrays; its contents are
 * perm's when the two arrays do not overlap (the generator's idx is a
 * fresh allocation): position off + i holds the scheduled index perm[lo + i]
 * (`gathers`), and no position of idx past the copy changes (`only_copied`;
 * those before off are outside the assigns clause). */
/*@ requires off <= cap;
    requires \valid_read(perm + (0 .. n - 1));
    requires \valid(idx + (0 .. cap - 1));
    assigns idx[off .. cap - 1];
    ensures off <= \result <= cap;
    ensures lo <= hi <= n && cap - off >= hi - lo ==>
            \result == off + (hi - lo);
    ensures \forall integer q; off <= q < \result ==> lo + (q - off) < n;
    // req: fedavg.alg1.l11 (each batch is its slice of P_k's permutation)
    ensures gathers: \separated(perm + (0 .. n - 1), idx + (0 .. cap - 1)) ==>
            \forall integer q; off <= q < \result ==>
              idx[q] == perm[lo + (q - off)];
    ensures only_copied: \forall integer q; \result <= q < cap ==>
            idx[q] == \old(idx[q]);
 */
size_t pflref_batch_copy(const size_t *perm, size_t n, size_t lo, size_t hi,
                         size_t *idx, size_t off, size_t cap);

#endif
