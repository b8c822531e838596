/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/engine/cluster.c: the cosine similarity of client updates and the
 * optimal bipartition of a cluster, from
 *   F. Sattler, K.-R. Müller, W. Samek, "Clustered Federated Learning:
 *   Model-Agnostic Distributed Multitask Optimization Under Privacy
 *   Constraints", IEEE TNNLS 32(8):3710–3722, 2021, arXiv 1910.01991:
 * the similarity α_{i,j} = ⟨Δθ_i, Δθ_j⟩ / (‖Δθ_i‖ ‖Δθ_j‖) and Algorithm 1,
 * plus the complete linkage split of the authors' notebook
 * (felisat/clustered-federated-learning, fl_devices.py).
 *
 * Algorithm 1 (input α ∈ [−1, 1]^{m×m}):
 *   1  s ← argsort(−α[:])          the m² flat indices, decreasing α
 *   2  C ← {{1}, ..., {m}}
 *   3  for t = 1..m²:
 *   4    i₁ ← s_t div m;  i₂ ← s_t mod m
 *   5    c_tmp ← ∪ {c ∈ C : i₁ ∈ c or i₂ ∈ c};  C ← (C \ those) ∪ {c_tmp}
 *   6    if |C| = 2: return C
 * Deviation from the pseudo-code, none in the result: it is Kruskal's
 * algorithm on the complete graph stopped at two components, so under a
 * strict order of the edges its forest is the (unique) maximum spanning
 * tree less its last edge.  The order is the stable sort of line 1: larger
 * α first, then the smaller row-major position; the pair (i, j), i < j,
 * comes before (j, i), and diagonal entries and second visits change
 * nothing.  Prim's algorithm builds that tree in O(m²).
 *
 * Symbols:  α ↔ alpha (m×m)   c₁, c₂ ↔ side[a] = 0, 1   α_max^cross ↔
 *           *alpha_cross
 * Determinism: fixed summation order; every tie has a rule.
 * Cost: similarity O(m² P); optimal bipartition O(m²); complete linkage
 * O(m³).
 */
#include <math.h>
#include <string.h>
#include "engine/cluster.h"

/* The exponent e of x's largest magnitude (frexp: max|x| = f·2^e with
 * f ∈ [0.5, 1)), or 0 for x = 0; *zero gets whether x = 0. */
static int scale_exponent(const double *x, size_t P, int *zero)
{
    double mx = 0.0;
    for (size_t p = 0; p < P; p++)
        mx = fabs(x[p]) > mx ? fabs(x[p]) : mx;
    int e = 0;
    *zero = mx == 0.0;
    if (!*zero)
        (void)frexp(mx, &e);
    return e;
}

pflref_status pflref_cluster_similarity(const double *X, size_t P,
                                        const size_t *rows, size_t m,
                                        double *alpha, pflref_error *err)
{
    /* Test the input parameters. */
    if (X == NULL || alpha == NULL)
        return pflref_error_set(err, PFLREF_EINVAL, "X",
                                "pflref_cluster_similarity: NULL argument");
    if (P == 0)
        return pflref_error_set(err, PFLREF_EINVAL, "P",
                                "the vectors need at least one entry");
    if (m == 0)
        return pflref_error_set(err, PFLREF_EINVAL, "m",
                                "the similarity of no vectors");
    for (size_t a = 0; a < m; a++) {
        const double *x = X + (rows != NULL ? rows[a] : a) * P;
        for (size_t p = 0; p < P; p++)
            if (!isfinite(x[p]))
                return pflref_error_set(err, PFLREF_EINVAL, "X",
                                        "vector %zu, entry %zu is not "
                                        "finite", a, p);
    }

    for (size_t a = 0; a < m; a++) {
        const double *xa = X + (rows != NULL ? rows[a] : a) * P;
        int za;
        const int ea = scale_exponent(xa, P, &za);
        alpha[a * m + a] = 1.0;                       /* α_aa = 1 */
        for (size_t b = a + 1; b < m; b++) {
            const double *xb = X + (rows != NULL ? rows[b] : b) * P;
            int zb;
            const int eb = scale_exponent(xb, P, &zb);
            double ab = 0.0;
            if (!za && !zb) {
                /* α_ab = ⟨x_a, x_b⟩ / (‖x_a‖ ‖x_b‖), each x scaled by 2^−e */
                double dot = 0.0, na = 0.0, nb = 0.0;
                for (size_t p = 0; p < P; p++) {
                    const double u = ldexp(xa[p], -ea), v = ldexp(xb[p], -eb);
                    dot += u * v;
                    na += u * u;
                    nb += v * v;
                }
                ab = dot / (sqrt(na) * sqrt(nb));
                ab = ab > 1.0 ? 1.0 : (ab < -1.0 ? -1.0 : ab);
            }
            /* else: α_ab = 0 when a norm is 0 */
            alpha[a * m + b] = ab;
            alpha[b * m + a] = ab;
        }
    }
    return PFLREF_OK;
}

/* 1 when edge (a1, b1) comes before edge (a2, b2) in Algorithm 1's sorted
 * list (a1 < b1, a2 < b2): larger α first, then the smaller row-major
 * position a·m + b. */
static int edge_before(const double *alpha, size_t m, size_t a1, size_t b1,
                       size_t a2, size_t b2)
{
    const double x = alpha[a1 * m + b1], y = alpha[a2 * m + b2];
    if (x != y)
        return x > y;
    return a1 * m + b1 < a2 * m + b2;
}

/* Algorithm 1 as a maximum spanning tree (Prim from item 0) under the
 * strict order edge_before, less its last edge in that order. */
static void optimal_bipartition(const double *alpha, size_t m,
                                unsigned char *side, size_t *iwork)
{
    size_t *parent = iwork;          /* tree edge (parent[v], v), v ≠ 0   */
    size_t *link = iwork + m;        /* best tree vertex for v off the tree */
    for (size_t v = 0; v < m; v++) {
        side[v] = 0;                 /* used as "in the tree" for now     */
        link[v] = 0;
        parent[v] = 0;
    }
    side[0] = 1;
    for (size_t added = 1; added < m; added++) {
        /* the best edge from the tree to a vertex off it */
        size_t best = m;
        for (size_t v = 0; v < m; v++) {
            if (side[v])
                continue;
            const size_t u = link[v];
            if (best == m ||
                edge_before(alpha, m, u < v ? u : v, u < v ? v : u,
                            link[best] < best ? link[best] : best,
                            link[best] < best ? best : link[best]))
                best = v;
        }
        side[best] = 1;
        parent[best] = link[best];
        /* vertices off the tree: is the edge to `best` better? */
        for (size_t v = 0; v < m; v++) {
            if (side[v])
                continue;
            const size_t u = link[v];
            if (edge_before(alpha, m, best < v ? best : v,
                            best < v ? v : best, u < v ? u : v,
                            u < v ? v : u))
                link[v] = best;
        }
    }
    /* The last tree edge in the order (Kruskal would add it last): the
     * edge (parent[c], c) that no other tree edge follows. */
    size_t cut = 1;
    for (size_t v = 2; v < m; v++) {
        const size_t pv = parent[v], pc = parent[cut];
        if (edge_before(alpha, m, pc < cut ? pc : cut, pc < cut ? cut : pc,
                        pv < v ? pv : v, pv < v ? v : pv))
            cut = v;
    }
    /* side 1: the subtree of `cut` in the tree rooted at item 0 */
    for (size_t v = 0; v < m; v++) {
        size_t u = v;
        while (u != 0 && u != cut)
            u = parent[u];
        side[v] = (unsigned char)(u == cut);
    }
}

/* Complete linkage on the distance −α: repeatedly merge the two clusters
 * whose least similar pair is the most similar, until two remain.  A
 * cluster is named by its smallest item (rep); L[A·m + B] (A < B reps)
 * holds min_{a∈A, b∈B} α_ab (the Lance–Williams update of complete
 * linkage in similarities: L(A ∪ B, C) = min(L(A, C), L(B, C))). */
static void complete_linkage(const double *alpha, size_t m,
                             unsigned char *side, double *L, size_t *iwork)
{
    size_t *rep = iwork;            /* each item's cluster (its rep)      */
    memcpy(L, alpha, m * m * sizeof *L);
    for (size_t v = 0; v < m; v++)
        rep[v] = v;
    for (size_t clusters = m; clusters > 2; clusters--) {
        size_t bestA = m, bestB = m;
        for (size_t A = 0; A < m; A++) {
            if (rep[A] != A)
                continue;
            for (size_t B = A + 1; B < m; B++) {
                if (rep[B] != B)
                    continue;
                /* ties: the first pair (A, B) in this scan order */
                if (bestA == m || L[A * m + B] > L[bestA * m + bestB]) {
                    bestA = A;
                    bestB = B;
                }
            }
        }
        /* merge B into A (A < B keeps the smaller rep) */
        for (size_t C = 0; C < m; C++) {
            if (rep[C] != C || C == bestA || C == bestB)
                continue;
            const double lb = L[(bestB < C ? bestB : C) * m +
                                (bestB < C ? C : bestB)];
            double *la = &L[(bestA < C ? bestA : C) * m +
                            (bestA < C ? C : bestA)];
            *la = lb < *la ? lb : *la;
        }
        for (size_t v = 0; v < m; v++)
            if (rep[v] == bestB)
                rep[v] = bestA;
    }
    for (size_t v = 0; v < m; v++)
        side[v] = (unsigned char)(rep[v] != rep[0]);
}

pflref_status pflref_cluster_bipartition(const double *alpha, size_t m,
                                         pflref_bipartition_method method,
                                         unsigned char *side,
                                         double *alpha_cross, double *work,
                                         size_t *iwork, pflref_error *err)
{
    /* Test the input parameters. */
    if (alpha == NULL || side == NULL || alpha_cross == NULL ||
        iwork == NULL ||
        (method == PFLREF_BIPARTITION_COMPLETE_LINKAGE && work == NULL))
        return pflref_error_set(err, PFLREF_EINVAL, "alpha",
                                "pflref_cluster_bipartition: NULL argument");
    if (m < 2)
        return pflref_error_set(err, PFLREF_EINVAL, "m",
                                "a bipartition needs at least 2 items, "
                                "got %zu", m);
    if (method != PFLREF_BIPARTITION_OPTIMAL &&
        method != PFLREF_BIPARTITION_COMPLETE_LINKAGE)
        return pflref_error_set(err, PFLREF_EINVAL, "method",
                                "unknown bipartition method %d", (int)method);
    for (size_t a = 0; a < m; a++)
        for (size_t b = a + 1; b < m; b++)
            if (!isfinite(alpha[a * m + b]))
                return pflref_error_set(err, PFLREF_EINVAL, "alpha",
                                        "alpha[%zu][%zu] is not finite", a,
                                        b);

    if (method == PFLREF_BIPARTITION_OPTIMAL)
        optimal_bipartition(alpha, m, side, iwork);
    else
        complete_linkage(alpha, m, side, work, iwork);

    /* α_max^cross = max_{i∈c₁, j∈c₂} α_ij */
    double cross = -INFINITY;
    for (size_t a = 0; a < m; a++)
        for (size_t b = a + 1; b < m; b++)
            if (side[a] != side[b] && alpha[a * m + b] > cross)
                cross = alpha[a * m + b];
    *alpha_cross = cross;
    return PFLREF_OK;
}
