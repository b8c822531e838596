/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/algorithms/fedfomo.h: FedFomo's run-time choice of the downloads,
 * exposed so that the tests reproduce shared/spec notes-fedbn-fedfomo.md
 * §2.7 Example C on a given P, π and u (ref/algorithms/fedfomo.c). */
#ifndef PFLREF_ALGORITHMS_FEDFOMO_H
#define PFLREF_ALGORITHMS_FEDFOMO_H

#include <stddef.h>

/* The server's choice of client i's downloads S_i^t (notes §2.5, the
 * NVlabs code client.py:307-362), req: fedfomo.alg1.l1.
 *   row     P_{i,·}, indexed by client id
 *   order   π: the k candidate ids (other clients) in their drawn order
 *   u       u_1..u_slots, uniforms in [0, 1)
 *   eps     ε_t = ε₀ − δ t (≤ 0: nothing explored)
 *   top_m   1: fedfomo.selection = topM (no exploration, u unused)
 *   greedy  [work] k: G, the candidates by descending P_{i,n}, ties to
 *           the lower id
 *   out     [out] the chosen ids in the order chosen
 * For slot s = 1..min(slots, k): u_s < ε_t takes the next id of π, else
 * the next id of G; an id already chosen is skipped and the next one of
 * the same list taken; each list is consumed across the slots.  With
 * k ≤ slots every candidate is sent.  Returns the count min(slots, k). */
size_t pflref_fedfomo_select(const double *row, const size_t *order, size_t k,
                             const double *u, size_t slots, double eps,
                             int top_m, size_t *greedy, size_t *out);

#endif
