/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/core/vec.c: the vector kernels every floor above may use: the
 * finiteness test behind divergence reports, one term of a server
 * aggregation, and the (u, v) composition of partial personalisation.
 */
#include <math.h>
#include "core/vec.h"

int pflref_all_finite(const double *x, size_t n)
{
    /*@ loop invariant 0 <= j <= n;
        loop invariant \forall integer k; 0 <= k < j ==> \is_finite(x[k]);
        loop assigns j;
        loop variant n - j;
     */
    for (size_t j = 0; j < n; j++)
        if (!isfinite(x[j]))
            return 0;
    return 1;
}

void pflref_accumulate(double *acc, double c, const double *x, size_t P)
{
    /*@ loop invariant 0 <= p <= P;
        loop assigns p, acc[0 .. P - 1];
        loop variant P - p;
     */
    for (size_t p = 0; p < P; p++)
        acc[p] += c * x[p];
}

void pflref_compose(const unsigned char *shared, const double *u,
                    const double *v, double *x, size_t P)
{
    /*@ loop invariant 0 <= p <= P;
        loop invariant \forall integer q; 0 <= q < p && shared[q] != 0 ==>
                       x[q] == \at(u[q], Pre);
        loop invariant \forall integer q; 0 <= q < p && shared[q] == 0 ==>
                       x[q] == \at(v[q], Pre);
        loop invariant \forall integer q; p <= q < P ==>
                       v[q] == \at(v[q], Pre);
        loop assigns p, x[0 .. P - 1];
        loop variant P - p;
     */
    for (size_t p = 0; p < P; p++)
        x[p] = shared[p] ? u[p] : v[p];
}
