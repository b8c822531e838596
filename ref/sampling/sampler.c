/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/sampling/sampler.c: client sampling without replacement, and the
 * seeded random streams (shuffles, Gaussian and uniform draws) every random
 * choice in pflref comes from.
 *
 * References.
 *   D. E. Knuth, The Art of Computer Programming, vol. 2, 3rd ed., §3.4.2:
 *     Algorithm S (selection sampling) and Algorithm P (shuffling).
 *   M. Matsumoto, T. Nishimura, "Mersenne Twister", ACM TOMACS 8(1), 1998:
 *     mt19937 with the reference init_genrand seeding.
 *   GSL 2.7.1: gsl_ran_choose, gsl_ran_shuffle (randist/shuffle.c),
 *     gsl_ran_gaussian (randist/gauss.c), gsl_rng_mt19937 (rng/mt.c).
 *   numpy 1.24 legacy RandomState: choice(N, m, replace=False) is
 *     permutation(N)[:m]; permutation shuffles arange(N) with a Fisher–Yates
 *     from the top whose bounded integers come from random_interval.
 *
 * Symbols (docs/sampling.md):
 *   N        population (clients 0..N−1)        size_t
 *   m        sample size, 1 ≤ m ≤ N             size_t
 *   seed     mt19937 seed, ≤ 2³² − 1            unsigned long
 *   chosen   the m items, ascending              size_t[m]
 *   drawn    the m items in the sampler's order  size_t[m]
 *
 * Samplers.
 *   gsl           chosen = gsl_ran_choose(r, m of {0..N−1}).  Algorithm S:
 *                 for i = 0, 1, … while j < m, draw u = raw/2³² and keep i
 *                 when (N − i)·u < m − j.  One raw draw per inspected item;
 *                 output ascending, so drawn = chosen.
 *   numpy_legacy  perm = 0..N−1; for i = N−1 down to 1: j = interval(i),
 *                 swap perm[i], perm[j]; drawn = perm[0..m−1].
 *                 interval(i): mask = 2^b − 1, the smallest such ≥ i; draw
 *                 raw & mask until the value is ≤ i.  N − 1 bounded draws
 *                 (each accepted with probability > 1/2) whatever m is.
 *                 chosen = drawn sorted ascending.
 *
 * Deviations from the header's one-line summary, on purpose:
 *   a) m = N: the gsl sampler takes every client without drawing (what
 *      gsl_ran_choose would return after N draws).  The numpy_legacy
 *      sampler still runs the full permutation, because numpy's
 *      choice(N, N, replace=False) is a random order and `drawn` must match
 *      it bit for bit.  chosen is 0..N−1 either way, and the schedule
 *      (ref/sampling/schedule.c) never calls the sampler when m = N.
 *   b) numpy_legacy rejects seed 0: GSL maps seed 0 to 4357, numpy does not.
 *      The gsl sampler and the free functions below accept 0 (which GSL
 *      treats exactly as 4357).
 *   c) populations are limited to N ≤ 2³² (pflref_sampler_alloc refuses a
 *      larger N_max): above it numpy's random_interval switches to 64-bit
 *      draws, which are not implemented here.
 *
 * Determinism: every call reseeds its generator, so a call's output depends
 * on its arguments only.  No static mutable state.
 *
 * Allocation: pflref_sampler_alloc holds the only allocation of the sampler
 * (the index workspace and the generator).  pflref_shuffle and the draws,
 * which have no workspace, allocate one generator per call.  A failed
 * gsl_rng_alloc returns NULL once GSL's error handler is off, as the CLI
 * and the test runner set it (gsl_set_error_handler_off); it is reported
 * as PFLREF_ENOMEM.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include "pflref/sampler.h"
#include "pflref/schedule.h"
#include "sampling/kernels.h"

/* For the proof of pflref_sampler_choose's contract (kernels.h): the one
 * fact it needs of ref/core/status.c, that the error setter returns the
 * status it is given (its code is not proved; it writes only *err). */
/*@ assigns *err;
    ensures \result == status;
 */
pflref_status pflref_error_set(pflref_error *err, pflref_status status,
                               const char *where, const char *fmt, ...);

/* numpy draws 32-bit bounded integers only while the bound N − 1 fits in
 * 32 bits; above it random_interval switches to 64-bit draws. */
#define NUMPY_INTERVAL_MAX 0xffffffffUL

/* gsl_rng_uniform_int(r, n) for mt19937 requires n ≤ max − min = 2³² − 1,
 * and gsl_ran_shuffle calls it with n up to the array length. */
#define GSL_UNIFORM_INT_MAX 0xffffffffUL

struct pflref_sampler {
    pflref_sampler_kind kind;
    size_t N_max;
    size_t *ids;    /* N_max: gsl: 0..N_max−1 (the source of gsl_ran_choose);
                       numpy_legacy: the permutation being built            */
    gsl_rng *r;     /* mt19937, reseeded by every call                      */
};

const char *pflref_sampler_kind_name(pflref_sampler_kind kind)
{
    switch (kind) {
    case PFLREF_SAMPLER_GSL:          return "gsl";
    case PFLREF_SAMPLER_NUMPY_LEGACY: return "numpy_legacy";
    }
    return "unknown";
}

pflref_sampler *pflref_sampler_alloc(pflref_sampler_kind kind, size_t N_max)
{
    if (kind != PFLREF_SAMPLER_GSL && kind != PFLREF_SAMPLER_NUMPY_LEGACY)
        return NULL;
    /* N ≤ 2³² keeps numpy's bound N − 1 in 32 bits (deviation c); no
     * reference run holds more clients. */
    if (N_max > (size_t)NUMPY_INTERVAL_MAX + 1)
        return NULL;
    pflref_sampler *s = calloc(1, sizeof *s);
    if (s != NULL)
        *s = (pflref_sampler){
            .kind = kind,
            .N_max = N_max,
            .ids = malloc((N_max > 0 ? N_max : 1) * sizeof *s->ids),
            .r = gsl_rng_alloc(gsl_rng_mt19937),
        };
    if (s == NULL || s->ids == NULL || s->r == NULL) {
        pflref_sampler_free(s);
        return NULL;
    }
    for (size_t i = 0; i < N_max; i++)
        s->ids[i] = i;
    return s;
}

void pflref_sampler_free(pflref_sampler *s)
{
    if (s == NULL)
        return;
    free(s->ids);
    if (s->r != NULL)
        gsl_rng_free(s->r);
    free(s);
}

/* The raw 32-bit stream the proved kernels of shuffle.c draw from
 * (kernels.h): mt19937's next word. */
unsigned long pflref_rng_raw32(void *rng)
{
    return gsl_rng_get((const gsl_rng *)rng);
}

static int size_cmp(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

/* Ascending sort of x[0..m−1].  The ids are distinct, so the order is
 * unique whatever qsort's algorithm; O(m log m) even for m = N large.
 * qsort is the C library's, not proved: pflref_sampler_choose checks its
 * output (and gsl_ran_choose's) with the proved scan pflref_ids_first_bad. */
static void sort_ascending(size_t *x, size_t m)
{
    qsort(x, m, sizeof *x, size_cmp);
}

/* numpy_legacy: choice(N, m, replace=False) = permutation(N)[:m], the
 * permutation a Fisher–Yates from the top (the proved kernel
 * pflref_numpy_permutation of shuffle.c),
 *   for i = N−1 … 1: j = interval(i); swap perm[i], perm[j]. */
/* req: sampling.numpy, sampling.lemma21.incl */
/*@ assigns pflref_sampler_state, chosen[0 .. m - 1], drawn[0 .. m - 1],
            *err; */
static pflref_status numpy_choice(pflref_sampler *s, unsigned long seed,
                                  size_t N, size_t m, size_t *chosen,
                                  size_t *drawn, pflref_error *err)
{
    if (seed == 0)
        return pflref_error_set(err, PFLREF_EINVAL, "seed",
                                "seed = 0: GSL seeds mt19937 with 4357 "
                                "for 0, numpy does not; use "
                                "1 <= seed <= 2^32 - 1");
    size_t *perm = s->ids;
    gsl_rng_set(s->r, seed);
    pflref_numpy_permutation(s->r, perm, N);
    /* choice(N, m, replace=False) = permutation(N)[:m]. */
    for (size_t k = 0; k < m; k++) {
        chosen[k] = perm[k];
        if (drawn != NULL)
            drawn[k] = perm[k];
    }
    sort_ascending(chosen, m);
    return PFLREF_OK;
}

/* gsl: Knuth's Algorithm S over the ids 0..N−1 (ascending output).  Quick
 * return: m = N takes every client, nothing is drawn. */
/*@ assigns pflref_sampler_state, chosen[0 .. m - 1], drawn[0 .. m - 1];
 */
static void gsl_choice(pflref_sampler *s, unsigned long seed, size_t N,
                       size_t m, size_t *chosen, size_t *drawn)
{
    if (m == N) {
        for (size_t k = 0; k < m; k++)
            chosen[k] = k;
    } else {
        gsl_rng_set(s->r, seed);
        /* req: sampling.choose, sampling.lemma21.incl, sampling.lemma21.var */
        gsl_ran_choose(s->r, chosen, m, s->ids, N, sizeof *chosen);
    }
    if (drawn != NULL)
        for (size_t k = 0; k < m; k++)
            drawn[k] = chosen[k];
}

pflref_status pflref_sampler_choose(pflref_sampler *s, unsigned long seed,
                                    size_t N, size_t m, size_t *chosen,
                                    size_t *drawn, pflref_error *err)
{
    /* Test the input parameters. */
    if (s == NULL)
        return pflref_error_set(err, PFLREF_EINVAL, "s",
                                "the sampler is NULL");
    if (chosen == NULL)
        return pflref_error_set(err, PFLREF_EINVAL, "chosen",
                                "the output array is NULL");
    if (m == 0)
        return pflref_error_set(err, PFLREF_EINVAL, "m",
                                "m = 0: a sample needs at least one item");
    if (m > N)
        return pflref_error_set(err, PFLREF_EINVAL, "m",
                                "m = %zu exceeds N = %zu (sampling is "
                                "without replacement)", m, N);
    if (N > s->N_max)
        return pflref_error_set(err, PFLREF_EINVAL, "N",
                                "N = %zu exceeds the sampler's N_max = %zu",
                                N, s->N_max);
    if (seed > PFLREF_SEED_MAX)
        return pflref_error_set(err, PFLREF_EINVAL, "seed",
                                "seed = %lu exceeds 2^32 - 1 (mt19937 uses "
                                "32-bit seeds)", seed);

    pflref_status st = PFLREF_OK;
    if (s->kind == PFLREF_SAMPLER_NUMPY_LEGACY)
        st = numpy_choice(s, seed, N, m, chosen, drawn, err);
    else
        gsl_choice(s, seed, N, m, chosen, drawn);
    /* The contract of the output: m ids of 0..N−1, strictly ascending (a
     * subset of size m), checked by the proved scan of ids.c, since qsort
     * and gsl_ran_choose are not proved. */
    if (st == PFLREF_OK && pflref_ids_first_bad(chosen, m, N) != m)
        st = pflref_error_set(err, PFLREF_EINTERNAL, "chosen",
                              "the sampler's output is not a strictly "
                              "ascending subset of 0..%zu", N - 1);
    return st;
}

/* A fresh mt19937 seeded with `seed`, for the functions without a
 * workspace.  Free with gsl_rng_free. */
static pflref_status seeded_mt19937(unsigned long seed, gsl_rng **r,
                                    pflref_error *err)
{
    *r = gsl_rng_alloc(gsl_rng_mt19937);
    if (*r == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, NULL, "out of memory");
    gsl_rng_set(*r, seed);
    return PFLREF_OK;
}

pflref_status pflref_shuffle(unsigned long seed, size_t *perm, size_t n,
                             pflref_error *err)
{
    /* Test the input parameters. */
    if (perm == NULL && n > 0)
        return pflref_error_set(err, PFLREF_EINVAL, "perm",
                                "the array is NULL");
    if (seed > PFLREF_SEED_MAX)
        return pflref_error_set(err, PFLREF_EINVAL, "seed",
                                "seed = %lu exceeds 2^32 - 1", seed);
    if (n > (size_t)GSL_UNIFORM_INT_MAX)
        return pflref_error_set(err, PFLREF_EINVAL, "n",
                                "n = %zu exceeds 2^32 - 1, the largest "
                                "bound gsl_rng_uniform_int accepts", n);
    /* Quick return: no swap for n ≤ 1, no draw (gsl_ran_shuffle would wrap
     * n − 1 around for n = 0). */
    if (n <= 1)
        return PFLREF_OK;

    gsl_rng *r;
    pflref_status st = seeded_mt19937(seed, &r, err);
    if (st != PFLREF_OK)
        return st;
    /* Knuth's Algorithm P: for i = n−1 … 1, swap perm[i] with
     * perm[uniform_int(i + 1)]. */
    gsl_ran_shuffle(r, perm, n, sizeof *perm);
    gsl_rng_free(r);
    return PFLREF_OK;
}

/* One draw of each stream, from the generator r with parameter p. */
typedef double (*draw_one)(gsl_rng *r, double p);

/* x ~ N(0, sd²): polar Box–Muller, two uniform_pos per attempt. */
static double gaussian_one(gsl_rng *r, double sd)
{
    return gsl_ran_gaussian(r, sd);
}

/* x = scale·(2u − 1), u = raw/2³²: one raw draw. */
static double uniform_one(gsl_rng *r, double scale)
{
    return scale * (2.0 * gsl_rng_uniform(r) - 1.0);
}

/* x_k := one(r, p), k = 0..n−1, from a generator seeded with `seed`.
 * pname names p in errors (finite and ≥ 0). */
static pflref_status draw(unsigned long seed, const char *pname, double p,
                          draw_one one, double *x, size_t n,
                          pflref_error *err)
{
    if (x == NULL && n > 0)
        return pflref_error_set(err, PFLREF_EINVAL, "x", "the array is NULL");
    if (!isfinite(p) || p < 0.0)
        return pflref_error_set(err, PFLREF_EINVAL, pname,
                                "%s = %g must be finite and >= 0", pname, p);
    if (seed > PFLREF_SEED_MAX)
        return pflref_error_set(err, PFLREF_EINVAL, "seed",
                                "seed = %lu exceeds 2^32 - 1", seed);
    if (n == 0)
        return PFLREF_OK;
    gsl_rng *r;
    pflref_status st = seeded_mt19937(seed, &r, err);
    if (st != PFLREF_OK)
        return st;
    for (size_t k = 0; k < n; k++)
        x[k] = one(r, p);
    gsl_rng_free(r);
    return PFLREF_OK;
}

pflref_status pflref_draw_gaussian(unsigned long seed, double sd, double *x,
                                   size_t n, pflref_error *err)
{
    return draw(seed, "sd", sd, gaussian_one, x, n, err);
}

pflref_status pflref_draw_uniform(unsigned long seed, double scale, double *x,
                                  size_t n, pflref_error *err)
{
    return draw(seed, "scale", scale, uniform_one, x, n, err);
}
