/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/sampling/shuffle.c: the index kernels of numpy's legacy
 * choice(N, m, replace=False): the masked-rejection interval draw and the
 * Fisher–Yates permutation from the top that sampler.c keeps the first m
 * entries of.
 *
 * Reference.  numpy 1.24, legacy RandomState: permutation(N) shuffles
 * arange(N) with `for i = N−1 … 1: j = random_interval(i); swap(i, j)`;
 * random_interval(max) draws raw 32-bit words masked with the smallest
 * 2^b − 1 ≥ max until the value is ≤ max (numpy/random/src/distributions).
 * Knuth, TAOCP vol. 2, §3.4.2, Algorithm P.
 *
 * Proved with Frama-C WP, runtime-error guards included (`make proofs`,
 * proofs/README.md), against the contracts below:
 *   pflref_interval_mask      the smallest all-ones word ≥ max;
 *   pflref_interval_draw      a value in 0..max (partial correctness: the
 *                             rejection loop ends with probability 1, each
 *                             draw accepted with probability > 1/2);
 *   pflref_numpy_permutation  perm[0..N−1] is a permutation of 0..N−1.
 * The generator is reached only through pflref_rng_raw32 (kernels.h).
 *
 * Deviation from numpy's code, on purpose: the mask is built by doubling
 * (mask ← 2·mask + 1 while mask < max) instead of numpy's bit smear
 * (mask |= mask >> 1, >> 2, … >> 16).  Both give the smallest 2^b − 1 ≥ max
 * for every max ≤ 2³² − 1, the same word bit for bit, and the doubling loop
 * is the one whose contract the provers check without a theory of bits.
 */
#include "sampling/kernels.h"

/* The largest bound the 32-bit interval draw takes (N ≤ 2³², sampler.c). */
#define INTERVAL_MAX 4294967295UL

/*@ requires max <= 4294967295;
    assigns \nothing;
    ensures all_ones(\result);
    ensures max <= \result;
    ensures \result == 0 || \result <= 2 * max - 1;
 */
unsigned long pflref_interval_mask(unsigned long max)
{
    unsigned long mask = 0;
    /*@ loop invariant all_ones(mask);
        loop invariant mask == 0 || mask <= 2 * max - 1;
        loop assigns mask;
        loop variant max - mask;
     */
    while (mask < max)
        mask = 2 * mask + 1;
    return mask;
}

/* numpy's random_interval(max), 1 ≤ max ≤ 2³² − 1: raw & mask until the
 * value is ≤ max. */
/*@ requires 1 <= max <= 4294967295;
    assigns pflref_rng_state;
    ensures \result <= max;
 */
unsigned long pflref_interval_draw(void *rng, unsigned long max)
{
    const unsigned long mask = pflref_interval_mask(max);
    unsigned long value;
    /*@ loop assigns value, pflref_rng_state; */
    do
        value = pflref_rng_raw32(rng) & mask;
    while (value > max);
    return value;
}

/* numpy's permutation(N): perm = 0..N−1, then for i = N−1 … 1 swap perm[i]
 * with perm[interval(i)].  N − 1 bounded draws; nothing for N ≤ 1. */
/*@ requires N <= 4294967296;
    requires \valid(perm + (0 .. N - 1));
    assigns perm[0 .. N - 1], pflref_rng_state;
    ensures is_permutation(perm, N);
 */
void pflref_numpy_permutation(void *rng, size_t *perm, size_t N)
{
    /*@ loop invariant 0 <= k <= N;
        loop invariant \forall integer q; 0 <= q < k ==> perm[q] == q;
        loop assigns k, perm[0 .. N - 1];
        loop variant N - k;
     */
    for (size_t k = 0; k < N; k++)
        perm[k] = k;
    if (N <= 1)
        return;
    /*@ loop invariant 0 <= i <= N - 1;
        loop invariant is_permutation(perm, N);
        loop assigns i, perm[0 .. N - 1], pflref_rng_state;
        loop variant i;
     */
    for (size_t i = N - 1; i > 0; i--) {
        const size_t j = (size_t)pflref_interval_draw(rng, (unsigned long)i);
        const size_t tmp = perm[i];
        perm[i] = perm[j];
        perm[j] = tmp;
    }
}
