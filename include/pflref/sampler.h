/* SPDX-License-Identifier: GPL-3.0-or-later */
/* pflref/sampler.h: client sampling without replacement, and the random
 * streams every random choice in pflref comes from.
 *
 * Two samplers, both on GSL's mt19937 (docs/sampling.md has the full draw
 * accounting):
 *
 *   PFLREF_SAMPLER_GSL           gsl_ran_choose (Knuth's Algorithm S,
 *                                selection sampling): one gsl_rng_uniform per
 *                                inspected item; output ascending.
 *   PFLREF_SAMPLER_NUMPY_LEGACY  numpy RandomState(seed).choice(N, m,
 *                                replace=False), bit for bit: a Fisher–Yates
 *                                permutation from the top with masked
 *                                rejection (random_interval) on the raw 32-bit
 *                                mt19937 stream, first m entries kept.
 *
 * Each call reseeds the generator with `seed` (GSL maps seed 0 to 4357, so
 * seeds must be ≥ 1 for the numpy equivalence).  Rounds use seed_t = seed + t
 * (docs/sampling.md), which removes any coupling between rounds.
 * When m = N the GSL sampler takes every client and draws nothing; the
 * numpy_legacy sampler still draws its full permutation, so `drawn` is
 * numpy's order.  (The schedule generator never samples when m = N: every
 * client takes part, in ascending order.)  numpy_legacy refuses seed 0,
 * which GSL would map to 4357 and numpy would not.  GSL's error handler
 * must be off (gsl_set_error_handler_off) for allocation failures inside
 * GSL to come back as statuses instead of aborting.
 */
#ifndef PFLREF_SAMPLER_H
#define PFLREF_SAMPLER_H

#include <stddef.h>
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    PFLREF_SAMPLER_GSL = 0,
    PFLREF_SAMPLER_NUMPY_LEGACY = 1
} pflref_sampler_kind;

const char *pflref_sampler_kind_name(pflref_sampler_kind kind);

/* Seeds are 32-bit: GSL's mt19937 uses only the low 32 bits of its seed. */
#define PFLREF_SEED_MAX 4294967295UL

typedef struct pflref_sampler pflref_sampler;

/* A sampler for populations of up to N_max items (a workspace of N_max
 * indices and one mt19937).  Returns NULL when memory is short. */
pflref_sampler *pflref_sampler_alloc(pflref_sampler_kind kind, size_t N_max);
void pflref_sampler_free(pflref_sampler *s);

/* Draw m distinct items of {0, …, N−1} with a generator freshly seeded with
 * `seed`.
 *   chosen[0..m−1]  [out] the items, ascending (the order pflref aggregates in)
 *   drawn[0..m−1]   [out, may be NULL] the items in the order the sampler
 *                   produced them (GSL: ascending; numpy: the permutation's
 *                   first m entries)
 * Errors: PFLREF_EINVAL when m = 0, m > N, N > N_max, or seed > PFLREF_SEED_MAX.
 * On PFLREF_OK, chosen is a strictly ascending subset of 0..N−1 (checked
 * with the proved scan pflref_ids_first_bad, proofs/README.md; a failed
 * check, a bug, is PFLREF_EINTERNAL). */
pflref_status pflref_sampler_choose(pflref_sampler *s, unsigned long seed,
                                    size_t N, size_t m, size_t *chosen,
                                    size_t *drawn, pflref_error *err);

/* Shuffle perm[0..n−1] in place with a Fisher–Yates from the top using
 * gsl_ran_shuffle on a generator seeded with `seed` (used by the reshuffled
 * minibatch schedule). */
pflref_status pflref_shuffle(unsigned long seed, size_t *perm, size_t n,
                             pflref_error *err);

/* Fill x[0..n−1] with draws from a generator seeded with `seed`:
 * N(0, sd²) via gsl_ran_gaussian (polar Box–Muller), or U(−scale, scale) via
 * scale·(2·gsl_rng_uniform − 1).  Used for random initial parameters. */
pflref_status pflref_draw_gaussian(unsigned long seed, double sd, double *x,
                                   size_t n, pflref_error *err);
pflref_status pflref_draw_uniform(unsigned long seed, double scale, double *x,
                                  size_t n, pflref_error *err);

#ifdef __cplusplus
}
#endif
#endif
