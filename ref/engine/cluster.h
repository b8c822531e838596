/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/engine/cluster.h: the cosine similarity of client updates and the
 * bipartition of a set of clients by it, the two primitives of clustered
 * federated learning (private to ref/; floor: engine):
 *   F. Sattler, K.-R. Müller, W. Samek, "Clustered Federated Learning:
 *   Model-Agnostic Distributed Multitask Optimization Under Privacy
 *   Constraints", IEEE TNNLS 32(8):3710–3722, 2021, arXiv 1910.01991,
 * the similarity α_{i,j} of §III and Algorithm 1 ("Optimal Bipartition").
 * shared/spec notes-cfl-ifca-sampling-metrics.md §1.4, §1.5, §1.9 pin the
 * conventions below; docs/algorithms/cfl.md explains them.
 */
#ifndef PFLREF_CLUSTER_H
#define PFLREF_CLUSTER_H

#include <stddef.h>
#include <stdint.h>
#include "pflref/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The cosine similarity matrix of m vectors (client updates Δθ_i or
 * gradients), rows of the row-major X:
 *
 *   α_ab = ⟨x_a, x_b⟩ / (‖x_a‖ ‖x_b‖)   for a ≠ b,
 *   α_ab = 0 when x_a = 0 or x_b = 0 (the paper leaves it undefined),
 *   α_aa = 1,
 *
 * each clamped to [−1, 1] (rounding can exceed it by an ulp) and the
 * matrix exactly symmetric (α_ba is α_ab, computed once for a < b).  Each
 * vector is scaled by a power of two 2^−e (e the exponent of its largest
 * entry) before the sums, which is exact, so the result is the plain
 * formula's in fp64 while ‖x‖² cannot overflow; sums run in index order.
 *   X      [in]  the vectors, row r at X + r·P (finite)
 *   P      [in]  entries per vector, ≥ 1
 *   rows   [in]  m row indices of X (vector a is row rows[a]), or NULL for
 *                rows 0..m−1
 *   m      [in]  ≥ 1
 *   alpha  [out] m×m, row-major
 * Errors: PFLREF_EINVAL (where "X", "P", "m") for a NULL argument, P = 0,
 * m = 0 or a non-finite entry. */
/*@ assigns alpha[0 .. m * m - 1], *err; */
pflref_status pflref_cluster_similarity(const double *X, size_t P,
                                        const size_t *rows, size_t m,
                                        double *alpha, pflref_error *err);

typedef enum {
    /* Algorithm 1: (c₁, c₂) = argmin over bipartitions of
     * max_{i∈c₁, j∈c₂} α_ij, by Kruskal's merge order on the flattened
     * matrix sorted by decreasing α, ties broken by the row-major position
     * (a stable sort), stopped at two clusters: single linkage cut at two */
    PFLREF_BIPARTITION_OPTIMAL = 0,
    /* Complete linkage agglomeration on the distance −α, stopped at two
     * clusters (the authors' notebook: sklearn AgglomerativeClustering
     * (linkage="complete") on −S); ties merge the pair with the smallest
     * (smallest member, smallest member of the other) */
    PFLREF_BIPARTITION_COMPLETE_LINKAGE = 1
} pflref_bipartition_method;

/* Split m ≥ 2 items into two non-empty parts by their similarity matrix.
 *   alpha       [in]  m×m, symmetric, entries finite (only a < b is read)
 *   m           [in]  ≥ 2
 *   method      [in]  pflref_bipartition_method
 *   side        [out] m: 0 for the part holding item 0, 1 for the other
 *   alpha_cross [out] α_max^cross = max_{side a = 0, side b = 1} α_ab
 *   work        [work] m·m doubles (complete linkage; may be NULL for
 *                     the optimal bipartition)
 *   iwork       [work] 2·m integers
 * The optimal bipartition is computed as the maximum spanning tree under
 * the strict order of Algorithm 1's sorted list (larger α first, then the
 * smaller row-major position a·m + b, a < b) with its last edge removed:
 * that tree is unique, and it is the forest Algorithm 1 has built when two
 * clusters remain, so the partition is Algorithm 1's in O(m²).
 * Errors: PFLREF_EINVAL (where "alpha", "m", "method") for NULL arguments,
 * m < 2, an unknown method or a non-finite α_ab. */
/*@ requires m * m <= SIZE_MAX;
    requires alpha != \null ==> \valid_read(alpha + (0 .. m * m - 1));
    requires side != \null ==> \valid(side + (0 .. m - 1));
    requires alpha_cross != \null ==> \valid(alpha_cross);
    requires work != \null ==> \valid(work + (0 .. m * m - 1)) &&
        \separated(work + (0 .. m * m - 1), alpha + (0 .. m * m - 1));
    requires iwork != \null ==> \valid(iwork + (0 .. 2 * m - 1));
    requires side != \null && iwork != \null ==>
        \separated(side + (0 .. m - 1), iwork + (0 .. 2 * m - 1));
    requires side != \null && work != \null ==>
        \separated(side + (0 .. m - 1), work + (0 .. m * m - 1));
    requires work != \null && iwork != \null ==>
        \separated(work + (0 .. m * m - 1), iwork + (0 .. 2 * m - 1));
    assigns side[0 .. m - 1], *alpha_cross, work[0 .. m * m - 1],
            iwork[0 .. 2 * m - 1], *err;
    ensures \result == PFLREF_OK ==> side[0] == 0 &&
        \forall integer v; 0 <= v < m ==> side[v] == 0 || side[v] == 1;
    ensures \result == PFLREF_OK ==>
        \exists integer c; 1 <= c < m && side[c] == 1;
 */
pflref_status pflref_cluster_bipartition(const double *alpha, size_t m,
                                         pflref_bipartition_method method,
                                         unsigned char *side,
                                         double *alpha_cross, double *work,
                                         size_t *iwork, pflref_error *err);

#ifdef __cplusplus
}
#endif
#endif
