/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/core/vec.h: vector kernels (private to ref/).  Floor: core. */
#ifndef PFLREF_CORE_VEC_H
#define PFLREF_CORE_VEC_H

#include <stddef.h>

/* 1 when every entry of x[0..n−1] is finite, else 0: the divergence test
 * (DESIGN.md, "Errors").  Proved (proofs/README.md), in WP's
 * floating-point model: it reads x[0..n−1], writes nothing, returns 1 only
 * when every entry is finite and 0 when one is not (NaN or ±∞). */
/*@ requires n == 0 || \valid_read(x + (0 .. n - 1));
    assigns \nothing;
    ensures \result == 0 || \result == 1;
    ensures finite: \result == 1 ==>
            \forall integer j; 0 <= j < n ==> \is_finite(x[j]);
    ensures caught: (\exists integer j; 0 <= j < n && !\is_finite(x[j])) ==>
            \result == 0;
 */
int pflref_all_finite(const double *x, size_t n);

/* acc := acc + c·x over P entries: one term of a server aggregation.
 * Proved (proofs/README.md): it writes acc[0..P−1] and nothing else, each
 * entry from its own acc[p] and x[p] (the sum itself is tested, not proved).
 * Aggregations add their terms in ascending client id, so the sum has one
 * order and the result is bit-reproducible. */
/*@ requires \valid(acc + (0 .. P - 1));
    requires \valid_read(x + (0 .. P - 1));
    requires \separated(acc + (0 .. P - 1), x + (0 .. P - 1));
    assigns acc[0 .. P - 1];
 */
void pflref_accumulate(double *acc, double c, const double *x, size_t P);

/* Partial personalisation (FedAlt, FedSim, PFLEGO) keeps full vectors:
 * x := (u, v), the entries with shared[p] = 1 from u, the others from v
 * (x may be v).  Proved (proofs/README.md): it writes x[0..P−1] and
 * nothing else, each entry the one of u or v that shared selects. */
/*@ requires \valid_read(shared + (0 .. P - 1));
    requires \valid_read(u + (0 .. P - 1));
    requires \valid_read(v + (0 .. P - 1));
    requires \valid(x + (0 .. P - 1));
    requires \separated(x + (0 .. P - 1), shared + (0 .. P - 1));
    requires \separated(x + (0 .. P - 1), u + (0 .. P - 1));
    requires x == v || \separated(x + (0 .. P - 1), v + (0 .. P - 1));
    assigns x[0 .. P - 1];
    ensures \forall integer p; 0 <= p < P && shared[p] != 0 ==>
            x[p] == \old(u[p]);
    ensures \forall integer p; 0 <= p < P && shared[p] == 0 ==>
            x[p] == \old(v[p]);
 */
void pflref_compose(const unsigned char *shared, const double *u,
                    const double *v, double *x, size_t P);

/* x := u over P entries (a client keeps its model in its block of s->v).
 * Proved (proofs/README.md): x[p] = u[p] for p < P, written there and
 * nothing else, reading u[0..P−1]; the two apart. */
/*@ requires \valid(x + (0 .. P - 1)) && \valid_read(u + (0 .. P - 1));
    requires \separated(x + (0 .. P - 1), u + (0 .. P - 1));
    assigns x[0 .. P - 1];
    ensures \forall integer p; 0 <= p < P ==> x[p] == u[p];
 */
static inline void pflref_copy(double *x, const double *u, size_t P)
{
    /*@ loop invariant 0 <= p <= P;
        loop invariant \forall integer r; 0 <= r < p ==> x[r] == u[r];
        loop assigns p, x[0 .. P - 1];
        loop variant P - p;
     */
    for (size_t p = 0; p < P; p++)
        x[p] = u[p];
}

#endif
