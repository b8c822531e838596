/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/sampling/ids.c: the index kernels of schedules: the scans that guard
 * every client id and sample index a schedule hands to the algorithms, the
 * step-offset scan and the position search of the validation
 * (schedule_check.c), the participant / selected / drawn bitmap, and the
 * pieces of generation (schedule.c) that produce indices: the saturating
 * size arithmetic, the ids 0..N−1 of a full round, the copy of a minibatch.
 * An index the reference dereferences has passed one of these, so their
 * correctness is what keeps a hostile schedule from reading outside a
 * client's data.
 *
 * Every function is proved against the ACSL contract above it with
 * Frama-C's WP plugin (runtime-error guards included, -wp-rte, and unsigned
 * overflow counted as an error): `make proofs` (proofs/README.md).  They use
 * plain C only (no library calls, no floating point) so that the proof
 * covers exactly the code that runs.  Several are total on purpose (an id
 * out of range is skipped, a copy stops at the buffer's end) so that their
 * only preconditions are the sizes of the arrays they touch.
 */
#include <stdint.h>
#include "pflref/schedule.h"
#include "sampling/kernels.h"

size_t pflref_ids_first_bad(const size_t *ids, size_t len, size_t bound)
{
    /*@ loop invariant 0 <= j <= len;
        loop invariant \forall integer q; 0 <= q < j ==> ids[q] < bound;
        loop invariant \forall integer q; 0 < q < j ==> ids[q - 1] < ids[q];
        loop assigns j;
        loop variant len - j;
     */
    for (size_t j = 0; j < len; j++)
        if (ids[j] >= bound || (j > 0 && ids[j] <= ids[j - 1]))
            return j;
    return len;
}

size_t pflref_index_first_out_of_range(const size_t *idx, size_t len,
                                       size_t n)
{
    /*@ loop invariant 0 <= j <= len;
        loop invariant \forall integer q; 0 <= q < j ==> idx[q] < n;
        loop assigns j;
        loop variant len - j;
     */
    for (size_t j = 0; j < len; j++)
        if (idx[j] >= n)
            return j;
    return len;
}

/* Saturating size arithmetic: SIZE_MAX stands for "overflowed". */
size_t pflref_size_mul_sat(size_t a, size_t b)
{
    return (a != 0 && b > SIZE_MAX / a) ? SIZE_MAX : a * b;
}

size_t pflref_size_add_sat(size_t a, size_t b)
{
    return b > SIZE_MAX - a ? SIZE_MAX : a + b;
}

/* The first step s < nsteps whose batch is empty or reversed
 * (step_off[s + 1] ≤ step_off[s]), or nsteps when the offsets strictly
 * increase. */
size_t pflref_steps_first_bad(const size_t *step_off, size_t nsteps)
{
    /*@ loop invariant 0 <= s <= nsteps;
        loop invariant \forall integer q; 0 <= q < s ==>
                       step_off[q] < step_off[q + 1];
        loop assigns s;
        loop variant nsteps - s;
     */
    for (size_t s = 0; s < nsteps; s++)
        if (step_off[s + 1] <= step_off[s])
            return s;
    return nsteps;
}

/* The step holding position pos of the index array: the s with
 * step_off[s] ≤ pos < step_off[s + 1]. */
size_t pflref_step_of(const size_t *step_off, size_t nsteps, size_t pos)
{
    (void)nsteps;   /* bounds the search in the contract only */
    size_t s = 0;
    /*@ loop invariant 0 <= s < nsteps;
        loop invariant step_off[s] <= pos;
        loop assigns s;
        loop variant nsteps - s;
     */
    while (step_off[s + 1] <= pos)
        s++;
    return s;
}

/* mark[ids[j]] := value for every j < len with ids[j] < N (total: an id
 * out of range is skipped; the validation has refused it before). */
void pflref_marks_set(unsigned char *mark, size_t N, const size_t *ids,
                      size_t len, unsigned char value)
{
    /*@ loop invariant 0 <= j <= len;
        loop invariant \forall integer q; 0 <= q < j && ids[q] < N ==>
                       mark[ids[q]] == value;
        loop invariant \forall integer v; 0 <= v < N &&
                       (\forall integer q; 0 <= q < j ==> ids[q] != v) ==>
                       mark[v] == \at(mark[v], Pre);
        loop assigns j, mark[0 .. N - 1];
        loop variant len - j;
     */
    for (size_t j = 0; j < len; j++)
        if (ids[j] < N)
            mark[ids[j]] = value;
}

/* The selected clients against the bitmap of a round's participants
 * (mark[c] = 1): the first j at which selected[j] is out of range, not a
 * participant, or not above selected[j − 1], or len.  Each selected[j]
 * before it is marked 2 (selected). */
size_t pflref_selected_first_bad(const size_t *selected, size_t len,
                                 size_t N, unsigned char *mark)
{
    /*@ loop invariant 0 <= j <= len;
        loop invariant \forall integer q; 0 <= q < j ==>
            selected[q] < N && \at(mark[selected[q]], Pre) == 1 &&
            mark[selected[q]] == 2;
        loop invariant \forall integer q; 0 < q < j ==>
            selected[q - 1] < selected[q];
        loop invariant \forall integer v; 0 <= v < N &&
            (\forall integer q; 0 <= q < j ==> selected[q] != v) ==>
            mark[v] == \at(mark[v], Pre);
        loop assigns j, mark[0 .. N - 1];
        loop variant len - j;
     */
    for (size_t j = 0; j < len; j++) {
        const size_t c = selected[j];
        if (!(c < N && mark[c] == 1 && (j == 0 || c > selected[j - 1])))
            return j;
        mark[c] = 2;
    }
    return len;
}

/* The drawn clients against the bitmap of the selected (mark[c] = 2): the
 * first j at which drawn[j] is out of range or not a selected client still
 * unmarked (so a repeat fails), or len.  Each drawn[j] before it is marked
 * 3.  When the result is len, drawn holds len distinct selected clients,
 * which for len = n_selected makes it a permutation of selected. */
size_t pflref_drawn_first_bad(const size_t *drawn, size_t len, size_t N,
                              unsigned char *mark)
{
    /*@ loop invariant 0 <= j <= len;
        loop invariant \forall integer q; 0 <= q < j ==>
            drawn[q] < N && \at(mark[drawn[q]], Pre) == 2 &&
            mark[drawn[q]] == 3;
        loop invariant \forall integer q, r; 0 <= q < r < j ==>
            drawn[q] != drawn[r];
        loop invariant \forall integer v; 0 <= v < N &&
            (\forall integer q; 0 <= q < j ==> drawn[q] != v) ==>
            mark[v] == \at(mark[v], Pre);
        loop assigns j, mark[0 .. N - 1];
        loop variant len - j;
     */
    for (size_t j = 0; j < len; j++) {
        const size_t d = drawn[j];
        if (!(d < N && mark[d] == 2))
            return j;
        mark[d] = 3;
    }
    return len;
}

/* A round that takes every client: ids[i] = i (and drawn[i] = i unless
 * drawn is NULL), i < N. */
void pflref_ids_iota(size_t *ids, size_t *drawn, size_t N)
{
    /*@ loop invariant 0 <= i <= N;
        loop invariant \forall integer q; 0 <= q < i ==> ids[q] == q;
        loop invariant drawn != \null ==>
                       \forall integer q; 0 <= q < i ==> drawn[q] == q;
        loop assigns i, ids[0 .. N - 1], drawn[0 .. N - 1];
        loop variant N - i;
     */
    for (size_t i = 0; i < N; i++) {
        ids[i] = i;
        if (drawn != NULL)
            drawn[i] = i;
    }
}

/* One minibatch: idx[off …] := perm[lo … hi − 1], in perm's order, and the
 * offset after it.  Total: the copy stops at idx's capacity cap (the
 * generator sizes idx exactly, so it never does) and at perm's end n.  Each
 * copied index is an entry of perm, so < n when perm is a permutation of
 * 0..n−1. */
size_t pflref_batch_copy(const size_t *perm, size_t n, size_t lo, size_t hi,
                         size_t *idx, size_t off, size_t cap)
{
    /*@ ghost const size_t off0 = off; */
    /*@ loop invariant off0 <= off <= cap;
        loop invariant q == lo + (off - off0);
        loop invariant lo <= hi ==> q <= hi;
        loop invariant \forall integer p; off0 <= p < off ==>
                       lo + (p - off0) < n;
        loop invariant gathers:
            \separated(perm + (0 .. n - 1), idx + (0 .. cap - 1))
            ==> \forall integer p; off0 <= p < off ==>
                idx[p] == perm[lo + (p - off0)];
        loop invariant only_copied: \forall integer p; off <= p < cap ==>
            idx[p] == \at(idx[p], Pre);
        loop assigns q, off, idx[off0 .. cap - 1];
        loop variant hi - q;
     */
    for (size_t q = lo; q < hi && q < n && off < cap; q++)
        idx[off++] = perm[q];
    return off;
}
