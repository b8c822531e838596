/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/core/vec.h: vector kernels (private to ref/).  Floor: core. */
#ifndef PFLREF_CORE_VEC_H
#define PFLREF_CORE_VEC_H

#include <stddef.h>

/* 1 when every entry of x[0..n−1] is finite. */
int pflref_all_finite(const double *x, size_t n);

/* acc := acc + c·x over P entries: one term of a server aggregation.
 * Aggregations add their terms in ascending client id, so the sum has one
 * order and the result is bit-reproducible. */
void pflref_accumulate(double *acc, double c, const double *x, size_t P);

/* Partial personalisation (FedAlt, FedSim, PFLEGO) keeps full vectors:
 * x := (u, v), the entries with shared[p] = 1 from u, the others from v
 * (x may be v). */
void pflref_compose(const unsigned char *shared, const double *u,
                    const double *v, double *x, size_t P);

#endif
