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
 * nothing.  Prim's algorithm builds that tree in O(m²): by the cut
 * property, an edge that comes first among those crossing a cut of the
 * items lies in the maximum spanning tree (were it missing, the tree's
 * path between its ends crosses the cut by a later edge, and exchanging
 * the two gives a better tree), and Prim adds only such edges, the cut
 * being its tree so far against the rest (proved by WP: max_spanning_tree's
 * assertion cut_property, kept for every step in its postcondition `run`;
 * Coq derives the optimality from the postconditions of
 * optimal_bipartition, proofs/README.md).
 *
 * Symbols:  α ↔ alpha (m×m)   c₁, c₂ ↔ side[a] = 0, 1   α_max^cross ↔
 *           *alpha_cross
 * Determinism: fixed summation order; every tie has a rule.
 * Cost: similarity O(m² P); optimal bipartition O(m²); complete linkage
 * O(m³).
 */
#include <math.h>
#include <stdint.h>
#include "engine/cluster.h"
#include "../../proofs/acsl/cluster.h"

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

/* req: cfl.alg5.l10 */
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

/* The kernels of the bipartition below carry ACSL contracts, proved by
 * Frama-C WP with runtime-error guards (proofs/README.md): every index
 * they form is in bounds, each writes only the arrays it names, Prim's
 * parent array is a tree rooted at item 0 (a ghost rank, the order of the
 * joins, falls along every tree edge), and side 1 is the subtree of the
 * last tree edge's child: the component of that child once the edge is
 * removed.  alpha is m×m with m·m ≤ SIZE_MAX (the caller allocated it). */

/* The row-major position of the upper-triangle entry of (a, b): a·m + b
 * when a < b, else b·m + a (complete linkage keeps its cluster links
 * there). */
/*@ requires m * m <= SIZE_MAX;
    requires a < m && b < m;
    assigns \nothing;
    ensures a < b ==> \result == a * m + b;
    ensures a >= b ==> \result == b * m + a;
    ensures \result < m * m;
 */
static size_t upper(size_t a, size_t b, size_t m)
{
    /*@ assert a < b ==> a * m <= (m - 1) * m; */
    /*@ assert a >= b ==> b * m <= (m - 1) * m; */
    return a < b ? a * m + b : b * m + a;
}

/* 1 when edge (a1, b1) comes before edge (a2, b2) in Algorithm 1's sorted
 * list (a1 < b1, a2 < b2): larger α first, then the smaller row-major
 * position a·m + b. */
/*@ requires m * m <= SIZE_MAX;
    requires a1 < b1 < m && a2 < b2 < m;
    requires \valid_read(alpha + (0 .. m * m - 1));
    assigns \nothing;
    ensures \result == 0 || \result == 1;
    // req: cfl.alg1.l2 (the order of argsort(−α[:]), stable)
    ensures order: \result == 1 <==> edge_first(alpha, m, a1, b1, a2, b2);
 */
/* req: cfl.alg1.l2, cfl.alg1.l5 */
static int edge_before(const double *alpha, size_t m, size_t a1, size_t b1,
                       size_t a2, size_t b2)
{
    const size_t p1 = upper(a1, b1, m), p2 = upper(a2, b2, m);
    const double x = alpha[p1], y = alpha[p2];
    if (x != y)
        return x > y;
    return p1 < p2;
}

/* Prim's next vertex: the one off the tree whose edge (link[v], v) to the
 * tree comes first in the order edge_before, or m when every vertex is in
 * the tree. */
/*@ requires 2 <= m && m * m <= SIZE_MAX;
    requires \valid_read(alpha + (0 .. m * m - 1));
    requires \valid_read(in_tree + (0 .. m - 1));
    requires \valid_read(link + (0 .. m - 1));
    requires \forall integer v; 0 <= v < m ==> link[v] < m;
    requires \forall integer v; 0 <= v < m && in_tree[v] == 0 ==>
        in_tree[link[v]] != 0;
    assigns \nothing;
    ensures \result <= m;
    ensures \result == m ==> \forall integer w; 0 <= w < m ==>
        in_tree[w] != 0;
    ensures \result < m ==> in_tree[\result] == 0;
    ensures best_crossing: \result < m ==> \forall integer w; 0 <= w < m &&
        in_tree[w] == 0 ==>
        !edge_first(alpha, m, link[w], w, link[\result], \result);
 */
static size_t prim_next(const double *alpha, size_t m,
                        const unsigned char *in_tree, const size_t *link)
{
    size_t best = m;
    /*@ loop invariant 0 <= v <= m;
        loop invariant best == m || (best < v && in_tree[best] == 0);
        loop invariant best == m ==> \forall integer w; 0 <= w < v ==>
            in_tree[w] != 0;
        loop invariant best_crossing: best < m ==> \forall integer w;
            0 <= w < v && in_tree[w] == 0 ==>
            !edge_first(alpha, m, link[w], w, link[best], best);
        loop assigns v, best;
        loop variant m - v; */
    for (size_t v = 0; v < m; v++) {
        if (in_tree[v])
            continue;
        const size_t u = link[v];
        if (best == m ||
            edge_before(alpha, m, u < v ? u : v, u < v ? v : u,
                        link[best] < best ? link[best] : best,
                        link[best] < best ? best : link[best]))
            best = v;
    }
    return best;
}

/* Prim's key update after `best` joined the tree: a vertex off the tree
 * takes `best` as its best tree vertex when the edge to it comes first
 * (its loop, moved out of max_spanning_tree, unchanged). */
/*@ requires 2 <= m && m * m <= SIZE_MAX;
    requires \valid_read(alpha + (0 .. m * m - 1));
    requires \valid_read(in_tree + (0 .. m - 1));
    requires \valid(link + (0 .. m - 1));
    requires \separated(link + (0 .. m - 1), in_tree + (0 .. m - 1));
    requires best < m && in_tree[best] == 1;
    requires \forall integer w; 0 <= w < m ==> link[w] < m;
    requires \forall integer w; 0 <= w < m && in_tree[w] == 0 ==>
        in_tree[link[w]] != 0;
    requires best_link_rest: \forall integer w, u; 0 <= w < m &&
        in_tree[w] == 0 && 0 <= u < m && in_tree[u] != 0 && u != best ==>
        !edge_first(alpha, m, u, w, link[w], w);
    assigns link[0 .. m - 1];
    ensures \forall integer w; 0 <= w < m ==> link[w] < m;
    ensures \forall integer w; 0 <= w < m && in_tree[w] == 0 ==>
        in_tree[link[w]] != 0;
    ensures best_link: \forall integer w; 0 <= w < m && in_tree[w] == 0 ==>
        best_link(alpha, m, in_tree, link, w);
 */
static void prim_keys(const double *alpha, size_t m,
                      const unsigned char *in_tree, size_t *link, size_t best)
{
    /*@ loop invariant 0 <= v <= m;
        loop invariant in_tree[best] == 1;
        loop invariant \forall integer w; 0 <= w < m ==> link[w] < m;
        loop invariant \forall integer w; 0 <= w < m && in_tree[w] == 0
            ==> in_tree[link[w]] != 0;
        loop invariant best_link: \forall integer w; 0 <= w < v &&
            in_tree[w] == 0 ==> best_link(alpha, m, in_tree, link, w);
        loop invariant best_link_rest: \forall integer w, u;
            v <= w < m && in_tree[w] == 0 && 0 <= u < m &&
            in_tree[u] != 0 && u != best ==>
            !edge_first(alpha, m, u, w, link[w], w);
        loop assigns v, link[0 .. m - 1];
        loop variant m - v; */
    for (size_t v = 0; v < m; v++) {
        if (in_tree[v])
            continue;
        const size_t u = link[v];
        /*@ assert key: \forall integer t; 0 <= t < m && in_tree[t] != 0
                && t != best ==> !edge_first(alpha, m, t, v, u, v); */
        /*@ assert key_best: edge_first(alpha, m, best, v, u, v) ==>
                \forall integer t; 0 <= t < m && in_tree[t] != 0 ==>
                !edge_first(alpha, m, t, v, best, v); */
        /*@ assert sorted_ends:
                edge_pos(best < v ? best : v, best < v ? v : best, m) ==
                edge_pos(best, v, m) &&
                edge_pos(u < v ? u : v, u < v ? v : u, m) ==
                edge_pos(u, v, m); */
        if (edge_before(alpha, m, best < v ? best : v,
                        best < v ? v : best, u < v ? u : v,
                        u < v ? v : u))
            link[v] = best;
        /*@ assert new_key: best_link(alpha, m, in_tree, link, v); */
    }
}

/* Prim's algorithm from item 0 under the strict order edge_before: the
 * tree edges (parent[v], v), v ≠ 0.  in_tree and link are its work: link[v]
 * is the best tree vertex for v off the tree.  The test best == m never
 * holds (while added < m, some vertex is off the tree: the assertion joins,
 * proved), and every vertex joins (spanning).  Each join satisfies Prim's cut property (the
 * assertion cut_property): no edge from the tree to a vertex off it comes
 * before the edge (link[best], best) that joins; the ghost slots record it
 * for every step (prim_cuts). */
/*@ requires 2 <= m && m * m <= SIZE_MAX;
    requires \valid_read(alpha + (0 .. m * m - 1));
    requires \valid(in_tree + (0 .. m - 1));
    requires \valid(parent + (0 .. m - 1)) && \valid(link + (0 .. m - 1));
    requires \separated(parent + (0 .. m - 1), link + (0 .. m - 1),
                        in_tree + (0 .. m - 1));
    assigns in_tree[0 .. m - 1], parent[0 .. m - 1], link[0 .. m - 1],
            prim_rank[0 .. m - 1], prim_slot[0 .. m - 1],
            prim_order[0 .. m - 1];
    ensures \forall integer v; 0 <= v < m ==> parent[v] < m;
    ensures \forall integer v; 1 <= v < m ==> parent[v] != v;
    ensures tree: ranked_tree(parent, m);
    ensures spanning: \forall integer v; 0 <= v < m ==> in_tree[v] != 0;
    ensures run: prim_perm(m) && prim_cuts(alpha, m, parent, m);
 */
/* req: cfl.alg1.l3, cfl.alg1.l4, cfl.alg1.l6 */
static void max_spanning_tree(const double *alpha, size_t m,
                              unsigned char *in_tree, size_t *parent,
                              size_t *link)
{
    /*@ assert m <= 4294967295; */
    /*@ loop invariant 0 <= v <= m;
        loop invariant \forall integer w; 0 <= w < v ==>
            in_tree[w] == 0 && link[w] == 0 && parent[w] == 0;
        loop invariant rank_init: \forall integer w; 0 <= w < v ==>
            prim_rank[w] == w && prim_slot[w] == w && prim_order[w] == w;
        loop assigns v, in_tree[0 .. m - 1], link[0 .. m - 1],
                     parent[0 .. m - 1], prim_rank[0 .. m - 1],
                     prim_slot[0 .. m - 1], prim_order[0 .. m - 1];
        loop variant m - v; */
    for (size_t v = 0; v < m; v++) {
        in_tree[v] = 0;
        link[v] = 0;
        parent[v] = 0;
        /*@ ghost PRIM_GHOST_START(v) */
    }
    in_tree[0] = 1;
    /*@ loop invariant 1 <= added <= m;
        loop invariant in_tree[0] == 1;
        loop invariant \forall integer v; 0 <= v < m ==>
            link[v] < m && parent[v] < m;
        loop invariant \forall integer v; 1 <= v < m ==> parent[v] != v;
        loop invariant \forall integer v; 0 <= v < m && in_tree[v] == 0 ==>
            in_tree[link[v]] != 0;
        loop invariant best_link: \forall integer v; 0 <= v < m &&
            in_tree[v] == 0 ==> best_link(alpha, m, in_tree, link, v);
        loop invariant rank_range: \forall integer v; 0 <= v < m ==>
            0 <= prim_rank[v] < m;
        loop invariant rank_root: prim_rank[0] == 0;
        loop invariant rank_off: \forall integer v; 1 <= v < m &&
            in_tree[v] == 0 ==> parent[v] == 0 && prim_rank[v] >= 1;
        loop invariant rank_edge: \forall integer v; 1 <= v < m &&
            in_tree[v] != 0 ==> in_tree[parent[v]] != 0 &&
            prim_rank[parent[v]] < prim_rank[v];
        loop invariant rank_joined: \forall integer v; 0 <= v < m &&
            in_tree[v] != 0 ==> prim_rank[v] < added;
        loop invariant order: prim_perm(m);
        loop invariant joined: prim_joined(in_tree, m, added);
        loop invariant cuts: prim_cuts(alpha, m, parent, added);
        loop assigns added, in_tree[0 .. m - 1], parent[0 .. m - 1],
                     link[0 .. m - 1], prim_rank[0 .. m - 1],
                     prim_slot[0 .. m - 1], prim_order[0 .. m - 1];
        loop variant m - added; */
    for (size_t added = 1; added < m; added++) {
        /*@ assert off_tree: in_tree[prim_order[added]] == 0; */
        /* the best edge from the tree to a vertex off it */
        const size_t best = prim_next(alpha, m, in_tree, link);
        /*@ assert joins: best < m; */
        if (best == m)
            break;
        /*@ assert cut_property: \forall integer u, w; 0 <= u < m &&
                0 <= w < m && in_tree[u] != 0 && in_tree[w] == 0 ==>
                !edge_first(alpha, m, u, w, link[best], best); */
        in_tree[best] = 1;
        parent[best] = link[best];
        /*@ ghost PRIM_GHOST_JOIN(best, added) */
        /*@ assert new_step: prim_step(alpha, m, parent, added); */
        /* vertices off the tree: is the edge to `best` better? */
        prim_keys(alpha, m, in_tree, link, best);
        /* the join moved only slots ≥ added: the earlier steps stand */
        /*@ assert slot_kept: \forall integer v, k; 0 <= v < m &&
                0 <= k <= added ==> (prim_slot[v] < k <==>
                                     \at(prim_slot[v], LoopCurrent) < k); */
        /*@ assert order_kept: \forall integer k; 0 <= k < added ==>
                prim_order[k] == \at(prim_order[k], LoopCurrent) &&
                parent[prim_order[k]] ==
                \at(parent[prim_order[k]], LoopCurrent); */
        /*@ assert step_kept: \forall integer k; 1 <= k < added ==>
                \at(prim_step(alpha, m, parent, k), LoopCurrent) ==>
                prim_step(alpha, m, parent, k); */
    }
}

/* The last tree edge in the order (Kruskal would add it last): the edge
 * (parent[c], c) that no other tree edge follows; returns c. */
/*@ requires 2 <= m && m * m <= SIZE_MAX;
    requires \valid_read(alpha + (0 .. m * m - 1));
    requires \valid_read(parent + (0 .. m - 1));
    requires \forall integer v; 1 <= v < m ==> parent[v] < m &&
                                               parent[v] != v;
    assigns \nothing;
    ensures 1 <= \result < m;
    ensures last: \forall integer v; 1 <= v < m ==>
        !edge_first(alpha, m, parent[\result], \result, parent[v], v);
 */
/* req: cfl.alg1.l7 */
static size_t last_tree_edge(const double *alpha, size_t m,
                             const size_t *parent)
{
    size_t cut = 1;
    /*@ loop invariant 2 <= v <= m || (v == 2 && m == 2);
        loop invariant 1 <= cut < m;
        loop invariant last: \forall integer w; 1 <= w < v ==>
            !edge_first(alpha, m, parent[cut], cut, parent[w], w);
        loop assigns v, cut;
        loop variant m - v; */
    for (size_t v = 2; v < m; v++) {
        const size_t pv = parent[v], pc = parent[cut];
        if (edge_before(alpha, m, pc < cut ? pc : cut, pc < cut ? cut : pc,
                        pv < v ? pv : v, pv < v ? v : pv))
            cut = v;
    }
    return cut;
}

/* side[v] = 1 when the walk up the tree from v meets `cut` before the root
 * 0: the subtree of cut.  In a tree every walk reaches 0 or cut within
 * m − 1 steps (the rank falls at each step), so the bound of m steps never
 * binds; it makes the walk's termination evident. */
/*@ requires 2 <= m && 1 <= cut < m;
    requires \valid_read(parent + (0 .. m - 1));
    requires tree: ranked_tree(parent, m);
    requires \valid(side + (0 .. m - 1));
    requires \separated(side + (0 .. m - 1), parent + (0 .. m - 1));
    assigns side[0 .. m - 1];
    ensures side[0] == 0 && side[cut] == 1;
    ensures \forall integer v; 0 <= v < m ==> side[v] == 0 || side[v] == 1;
    // req: cfl.alg1.l7 (the two sides: the subtree of cut and the rest)
    ensures subtree: subtree_sides(parent, m, cut, side);
    ensures cut_only: \forall integer v; 1 <= v < m && v != cut ==>
        side[v] == side[parent[v]];
    ensures cut_separates: side[parent[cut]] == 0;
 */
static void subtree_side(const size_t *parent, size_t m, size_t cut,
                         unsigned char *side)
{
    /*@ loop invariant 0 <= v <= m;
        loop invariant \forall integer w; 0 <= w < v ==>
            side[w] == 0 || side[w] == 1;
        loop invariant subtree: \forall integer w; 0 <= w < v ==>
            (side[w] == 1 <==> in_subtree(parent, cut, w));
        loop invariant below_cut: \forall integer w; 0 <= w < v &&
            side[w] == 1 ==> prim_rank[cut] <= prim_rank[w];
        loop assigns v, side[0 .. m - 1];
        loop variant m - v; */
    for (size_t v = 0; v < m; v++) {
        size_t u = v;
        /*@ loop invariant 0 <= step <= m && u < m;
            loop invariant walk_rank: prim_rank[u] + step <= prim_rank[v];
            loop invariant walk_subtree:
                in_subtree(parent, cut, u) <==> in_subtree(parent, cut, v);
            loop assigns step, u;
            loop variant m - step; */
        for (size_t step = 0; step < m && u != 0 && u != cut; step++)
            u = parent[u];
        side[v] = (unsigned char)(u == cut);
    }
}

/* Algorithm 1 as a maximum spanning tree (Prim from item 0) under the
 * strict order edge_before, less its last edge in that order. */
/*@ requires 2 <= m && m * m <= SIZE_MAX;
    requires \valid_read(alpha + (0 .. m * m - 1));
    requires \valid(side + (0 .. m - 1));
    requires \valid(iwork + (0 .. 2 * m - 1));
    requires \separated(side + (0 .. m - 1), iwork + (0 .. 2 * m - 1));
    assigns side[0 .. m - 1], iwork[0 .. 2 * m - 1], prim_rank[0 .. m - 1],
            prim_slot[0 .. m - 1], prim_order[0 .. m - 1];
    // req: cfl.alg1.l7 (two non-empty complementary sets)
    ensures side[0] == 0;
    ensures \exists integer c; 1 <= c < m && side[c] == 1;
    ensures \forall integer v; 0 <= v < m ==> side[v] == 0 || side[v] == 1;
    ensures tree: ranked_tree(iwork, m);
    ensures sides: \exists integer c; 1 <= c < m &&
        last_edge(alpha, m, iwork, c) && subtree_sides(iwork, m, c, side);
    ensures run: prim_perm(m) && prim_cuts(alpha, m, iwork, m);
 */
/* req: cfl.alg1.opt, cfl.alg1.l7 */
static void optimal_bipartition(const double *alpha, size_t m,
                                unsigned char *side, size_t *iwork)
{
    size_t *parent = iwork;          /* tree edge (parent[v], v), v ≠ 0   */
    size_t *link = iwork + m;        /* best tree vertex for v off the tree */
    max_spanning_tree(alpha, m, side, parent, link);
    const size_t cut = last_tree_edge(alpha, m, parent);
    /* side 1: the subtree of `cut` in the tree rooted at item 0 */
    subtree_side(parent, m, cut, side);
    /*@ assert sides: last_edge(alpha, m, parent, cut) &&
            subtree_sides(parent, m, cut, side); */
}

/* Cluster membership update: every item of cluster B joins cluster A. */
/*@ requires \valid(rep + (0 .. m - 1));
    assigns rep[0 .. m - 1];
    ensures \forall integer v; 0 <= v < m && \old(rep[v]) == B ==>
        rep[v] == A;
    ensures \forall integer v; 0 <= v < m && \old(rep[v]) != B ==>
        rep[v] == \old(rep[v]);
 */
static void merge_cluster(size_t *rep, size_t m, size_t A, size_t B)
{
    /*@ loop invariant 0 <= v <= m;
        loop invariant \forall integer w; 0 <= w < v &&
            \at(rep[w], Pre) == B ==> rep[w] == A;
        loop invariant \forall integer w; 0 <= w < v &&
            \at(rep[w], Pre) != B ==> rep[w] == \at(rep[w], Pre);
        loop invariant \forall integer w; v <= w < m ==>
            rep[w] == \at(rep[w], Pre);
        loop assigns v, rep[0 .. m - 1];
        loop variant m - v; */
    for (size_t v = 0; v < m; v++)
        if (rep[v] == B)
            rep[v] = A;
}

/* The Lance–Williams update of complete linkage when cluster B joins A:
 * L(A ∪ B, C) = min(L(A, C), L(B, C)) for every other cluster C, kept in
 * A's row (A < B keeps the smaller rep).  Proved with Frama-C WP: each
 * new link is the smaller of the two (min), and no link between two
 * clusters other than A changes (kept). */
/*@ requires 2 <= m && m * m <= SIZE_MAX && A < B < m;
    requires \valid(L + (0 .. m * m - 1));
    requires \valid_read(rep + (0 .. m - 1));
    requires \separated(L + (0 .. m * m - 1), rep + (0 .. m - 1));
    assigns L[0 .. m * m - 1];
    ensures min: \forall integer C; 0 <= C < m && rep[C] == C && C != A &&
        C != B ==> lw_min{Post, Pre}(L, L, m, A, B, C);
    ensures kept: \forall integer a, b; 0 <= a < m && 0 <= b < m &&
        a != b && a != A && b != A ==>
        L[link_pos(a, b, m)] == \old(L[link_pos(a, b, m)]);
 */
static void linkage_update(double *L, const size_t *rep, size_t m, size_t A,
                           size_t B)
{
    /*@ loop invariant 0 <= C <= m;
        loop invariant done: \forall integer c; 0 <= c < C &&
            rep[c] == c && c != A && c != B ==>
            lw_min{Here, Pre}(L, L, m, A, B, c);
        loop invariant todo: \forall integer c; C <= c < m && c != A ==>
            L[link_pos(A, c, m)] == \at(L[link_pos(A, c, m)], Pre);
        loop invariant kept: \forall integer a, b; 0 <= a < m &&
            0 <= b < m && a != b && a != A && b != A ==>
            L[link_pos(a, b, m)] == \at(L[link_pos(a, b, m)], Pre);
        loop assigns C, L[0 .. m * m - 1];
        loop variant m - C; */
    for (size_t C = 0; C < m; C++) {
        if (rep[C] != C || C == A || C == B)
            continue;
        const double lb = L[upper(B, C, m)];
        double *la = &L[upper(A, C, m)];
        *la = lb < *la ? lb : *la;
    }
}

/* Complete linkage's merge: of the pairs of reps A < B (clusters named by
 * their smallest item), the one whose link L(A, B) is the largest, the
 * first in the scan (A ascending, then B) among equal links; (m, m) when
 * no two reps remain.  Proved with Frama-C WP (proofs/README.md). */
/*@ requires 2 <= m && m * m <= SIZE_MAX;
    requires \valid_read(L + (0 .. m * m - 1));
    requires \valid_read(rep + (0 .. m - 1));
    requires \valid(outA) && \valid(outB) && \separated(outA, outB);
    requires \separated(outA, L + (0 .. m * m - 1), rep + (0 .. m - 1));
    requires \separated(outB, L + (0 .. m * m - 1), rep + (0 .. m - 1));
    assigns *outA, *outB;
    ensures pair: (*outA == m && *outB == m) ||
                  rep_pair(rep, m, *outA, *outB);
    ensures none: *outA == m ==>
                  \forall integer a, b; !rep_pair(rep, m, a, b);
    // the largest link, ties to the first pair
    ensures merge: *outA < m ==> merge_best(L, rep, m, m, 0,
                       L[*outA * m + *outB], *outA, *outB);
 */
static void best_merge(const double *L, const size_t *rep, size_t m,
                       size_t *outA, size_t *outB)
{
    size_t bestA = m, bestB = m;
    double best_link = 0.0;  /* L(bestA, bestB) once a pair is taken */
    /*@ loop invariant 0 <= A <= m;
        loop invariant (bestA == m && bestB == m) ||
                       rep_pair(rep, m, bestA, bestB);
        loop invariant bestA < m ==>
                       bestA < A && best_link == L[bestA * m + bestB];
        loop invariant bestA == m ==> \forall integer a, b;
            rep_pair(rep, m, a, b) && a < A ==> \false;
        loop invariant merge_rows: bestA < m ==>
                       merge_best(L, rep, m, A, 0, best_link, bestA, bestB);
        loop assigns A, bestA, bestB, best_link;
        loop variant m - A; */
    for (size_t A = 0; A < m; A++) {
        if (rep[A] != A)
            continue;
        /*@ loop invariant A + 1 <= B <= m;
            loop invariant (bestA == m && bestB == m) ||
                           rep_pair(rep, m, bestA, bestB);
            loop invariant bestA < m ==> pair_before(bestA, bestB, A, B) &&
                           best_link == L[bestA * m + bestB];
            loop invariant bestA == m ==> \forall integer a, b;
                rep_pair(rep, m, a, b) && pair_before(a, b, A, B) ==> \false;
            loop invariant merge: bestA < m ==>
                           merge_best(L, rep, m, A, B, best_link, bestA, bestB);
            loop assigns B, bestA, bestB, best_link;
            loop variant m - B; */
        for (size_t B = A + 1; B < m; B++) {
            if (rep[B] != B)
                continue;
            const double link_ab = L[upper(A, B, m)];
            /* ties: the first pair (A, B) in this scan order */
            if (bestA == m || link_ab > best_link) {
                bestA = A;
                bestB = B;
                best_link = link_ab;
            }
        }
    }
    *outA = bestA;
    *outB = bestB;
}

/* Complete linkage on the distance −α: repeatedly merge the two clusters
 * whose least similar pair is the most similar, until two remain.  A
 * cluster is named by its smallest item (rep); L[A·m + B] (A < B reps)
 * holds min_{a∈A, b∈B} α_ab (the Lance–Williams update of complete
 * linkage in similarities: L(A ∪ B, C) = min(L(A, C), L(B, C))), first
 * a copy of α.  The test bestA == m never holds (while clusters > 2, two reps
 * remain); it makes the kernel total for the proof.  Side 1 is never empty:
 * the ghost list of the clusters (cl_reps, proofs/acsl/cluster.h) names two
 * reps when two clusters remain, and the one that is not item 0 is on side
 * 1 (two_sides).  L holds what it should at every merge (the invariant
 * links: complete_links): the assertions after a merge carry it over the
 * clusters it leaves alone (links_kept, lemma clink_frame) and to the
 * merged one (links_merged, lemma clink_merge). */
/*@ requires 2 <= m && m * m <= SIZE_MAX;
    requires \valid_read(alpha + (0 .. m * m - 1));
    requires \valid(L + (0 .. m * m - 1));
    requires \separated(L + (0 .. m * m - 1), alpha + (0 .. m * m - 1));
    requires \valid(side + (0 .. m - 1)) && \valid(rep + (0 .. m - 1));
    requires \separated(L + (0 .. m * m - 1), side + (0 .. m - 1),
                        rep + (0 .. m - 1));
    assigns L[0 .. m * m - 1], side[0 .. m - 1], rep[0 .. m - 1],
            cl_list[0 .. m - 1], cl_pos[0 .. m - 1];
    ensures side[0] == 0;
    ensures \forall integer v; 0 <= v < m ==> side[v] == 0 || side[v] == 1;
    ensures two_sides: \exists integer c; 1 <= c < m && side[c] == 1;
 */
static void complete_linkage(const double *alpha, size_t m,
                             unsigned char *side, double *L, size_t *rep)
{
    /*@ assert m <= 4294967295; */
    /*@ loop invariant 0 <= q <= m * m;
        loop invariant copy: \forall integer r; 0 <= r < q ==>
            L[r] == alpha[r];
        loop assigns q, L[0 .. m * m - 1];
        loop variant m * m - q; */
    for (size_t q = 0; q < m * m; q++)
        L[q] = alpha[q];                          /* L ← α */
    /*@ loop invariant 0 <= v <= m;
        loop invariant init: \forall integer w; 0 <= w < v ==>
            rep[w] == w && cl_list[w] == w && cl_pos[w] == w;
        loop assigns v, rep[0 .. m - 1], cl_list[0 .. m - 1],
                     cl_pos[0 .. m - 1];
        loop variant m - v; */
    for (size_t v = 0; v < m; v++) {
        rep[v] = v;
        /*@ ghost CL_GHOST_START(v) */
    }
    /*@ assert singles: \forall integer a, b; 0 <= a < m && 0 <= b < m &&
            a != b ==> 0 <= link_pos(a, b, m) < m * m &&
            L[link_pos(a, b, m)] == alpha[link_pos(a, b, m)]; */
    /*@ loop invariant 2 <= clusters <= m;
        loop invariant rep0: rep[0] == 0;
        loop invariant reps: cl_reps(rep, m, clusters);
        loop invariant links: complete_links(L, alpha, rep, m);
        loop assigns clusters, L[0 .. m * m - 1], rep[0 .. m - 1],
                     cl_list[0 .. m - 1], cl_pos[0 .. m - 1];
        loop variant clusters; */
    for (size_t clusters = m; clusters > 2; clusters--) {
        size_t bestA, bestB;
        best_merge(L, rep, m, &bestA, &bestB);
        if (bestA == m)
            break;
        linkage_update(L, rep, m, bestA, bestB);  /* B joins A (A < B) */
        /*@ ghost CL_GHOST_MERGE(bestB, clusters) */
        merge_cluster(rep, m, bestA, bestB);
        /*@ assert members: \forall integer c; 0 <= c < m && c != bestA &&
                c != bestB ==> same_members{LoopCurrent, Here}(rep, m, c); */
        /*@ assert joined: \forall integer i; 0 <= i < m ==>
                (rep[i] == bestA <==> (\at(rep[i], LoopCurrent) == bestA ||
                                       \at(rep[i], LoopCurrent) == bestB)); */
        /*@ assert alpha_kept: same_alpha{LoopCurrent, Here}(alpha, m); */
        /*@ assert old_reps: \forall integer c; 0 <= c < m && rep[c] == c &&
                c != bestA ==> c != bestB && \at(rep[c], LoopCurrent) == c; */
        /*@ assert frame_pairs: \forall integer a, b; 0 <= a < m &&
                0 <= b < m && a != b && a != bestA && b != bestA &&
                rep[a] == a && rep[b] == b ==>
                clink{LoopCurrent}(L, alpha, rep, m, a, b) &&
                same_members{LoopCurrent, Here}(rep, m, a) &&
                same_members{LoopCurrent, Here}(rep, m, b); */
        /*@ assert links_kept: \forall integer a, b; 0 <= a < m &&
                0 <= b < m && a != b && a != bestA && b != bestA &&
                rep[a] == a && rep[b] == b ==> clink(L, alpha, rep, m, a, b);
         */
        /*@ assert merge_pairs: \forall integer c; 0 <= c < m &&
                c != bestA && rep[c] == c ==>
                clink{LoopCurrent}(L, alpha, rep, m, bestA, c) &&
                clink{LoopCurrent}(L, alpha, rep, m, bestB, c) &&
                lw_min{Here, LoopCurrent}(L, L, m, bestA, bestB, c) &&
                same_members{LoopCurrent, Here}(rep, m, c); */
        /*@ assert links_merged: \forall integer c; 0 <= c < m &&
                c != bestA && rep[c] == c ==>
                clink(L, alpha, rep, m, bestA, c); */
        /*@ assert links_merged_sym: \forall integer c; 0 <= c < m &&
                c != bestA && rep[c] == c ==>
                clink(L, alpha, rep, m, c, bestA); */
    }
    /*@ assert other_rep: \exists integer r; 1 <= r < m && rep[r] == r; */
    /*@ loop invariant 0 <= v <= m;
        loop invariant \forall integer w; 0 <= w < v ==>
            side[w] == 0 || side[w] == 1;
        loop invariant 0 < v ==> side[0] == 0;
        loop invariant side_rep: \forall integer w; 0 <= w < v ==>
            (side[w] == 1 <==> rep[w] != rep[0]);
        loop assigns v, side[0 .. m - 1];
        loop variant m - v; */
    for (size_t v = 0; v < m; v++)
        side[v] = (unsigned char)(rep[v] != rep[0]);
}

/* For the proof of pflref_cluster_bipartition's calls (proofs/README.md):
 * the one fact it needs of ref/core/status.c, that an error record's
 * setter returns the status it is given (its code is not proved; it writes
 * only *err). */
/*@ assigns *err;
    ensures \result == status;
 */
pflref_status pflref_error_set(pflref_error *err, pflref_status status,
                               const char *where, const char *fmt, ...);

/* req: cfl.alg1.l1 */
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
    /*@ loop invariant 0 <= a <= m;
        loop assigns a;
        loop variant m - a; */
    for (size_t a = 0; a < m; a++)
        /*@ loop invariant a + 1 <= b <= m;
            loop assigns b;
            loop variant m - b; */
        for (size_t b = a + 1; b < m; b++)
            if (!isfinite(alpha[upper(a, b, m)]))
                return pflref_error_set(err, PFLREF_EINVAL, "alpha",
                                        "alpha[%zu][%zu] is not finite", a,
                                        b);

    if (method == PFLREF_BIPARTITION_OPTIMAL)
        optimal_bipartition(alpha, m, side, iwork);
    else
        complete_linkage(alpha, m, side, work, iwork);

    /* α_max^cross = max_{i∈c₁, j∈c₂} α_ij */
    double cross = -INFINITY;
    /*@ loop invariant 0 <= a <= m;
        loop assigns a, cross;
        loop variant m - a; */
    for (size_t a = 0; a < m; a++)
        /*@ loop invariant a + 1 <= b <= m;
            loop assigns b, cross;
            loop variant m - b; */
        for (size_t b = a + 1; b < m; b++)
            if (side[a] != side[b] && alpha[upper(a, b, m)] > cross)
                cross = alpha[upper(a, b, m)];
    *alpha_cross = cross;
    return PFLREF_OK;
}
