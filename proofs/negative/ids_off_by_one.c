/* SPDX-License-Identifier: GPL-3.0-or-later */
/* proofs/negative/ids_off_by_one.c: ref/sampling/ids.c's index scan with a classic
 * off-by-one (j <= len).  `proofs/run.sh` requires WP to FAIL on this file:
 * it shows that the proof of ref/sampling/ids.c is not vacuous, because the same
 * contract cannot be proved for code that reads idx[len]. */
#include <stddef.h>

/*@ requires 0 <= len;
    requires \valid_read(idx + (0 .. len - 1));
    assigns \nothing;
    ensures 0 <= \result <= len;
    ensures \forall integer j; 0 <= j < \result ==> idx[j] < n;
    ensures \result < len ==> idx[\result] >= n;
 */
size_t index_first_out_of_range(const size_t *idx, size_t len, size_t n)
{
    /*@ loop invariant 0 <= j <= len + 1;
        loop invariant \forall integer q; 0 <= q < j ==> idx[q] < n;
        loop assigns j;
        loop variant len + 1 - j;
     */
    for (size_t j = 0; j <= len; j++)
        if (idx[j] >= n)
            return j;
    return len;
}
