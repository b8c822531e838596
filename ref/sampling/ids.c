/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/sampling/ids.c: the two scans that guard every client id and sample
 * index a schedule hands to the algorithms.  An index the reference
 * dereferences has passed one of them, so their correctness is what keeps a
 * hostile schedule from reading outside a client's data.
 *
 * Both are proved against the ACSL contracts below with Frama-C's WP plugin
 * (with runtime-error guards, -wp-rte): `make proofs` (proofs/README.md).
 * They use plain C only (no library calls, no floating point) so that the
 * proof covers exactly the code that runs.
 */
#include "pflref/schedule.h"

/*@ requires 0 <= len;
    requires \valid_read(ids + (0 .. len - 1));
    assigns \nothing;
    ensures 0 <= \result <= len;
    ensures \forall integer j; 0 <= j < \result ==> ids[j] < bound;
    ensures \forall integer j; 0 < j < \result ==> ids[j - 1] < ids[j];
    ensures \result < len ==>
            ids[\result] >= bound ||
            (\result > 0 && ids[\result] <= ids[\result - 1]);
 */
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

/*@ requires 0 <= len;
    requires \valid_read(idx + (0 .. len - 1));
    assigns \nothing;
    ensures 0 <= \result <= len;
    ensures \forall integer j; 0 <= j < \result ==> idx[j] < n;
    ensures \result < len ==> idx[\result] >= n;
 */
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
