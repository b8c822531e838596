/* SPDX-License-Identifier: GPL-3.0-or-later */
/* proofs/acsl/cluster.h: the proof definitions of ref/engine/cluster.c
 * (proofs/README.md, "Where the annotations live").  ACSL only: the
 * compiler reads comments here; Frama-C reads the definitions where
 * cluster.c includes this file. */

/* Algorithm 1's order of the edges of the complete graph on m items
 * (Sattler et al., Alg. 1 l. 1: s ← argsort(−α[:]), a stable sort): the
 * edge {a, b} sits at its upper-triangle position edge_pos(a, b), and
 * edge_first(e1, e2) holds when e1 comes strictly before e2 in the sorted
 * list: larger α, or equal α and the smaller position.  It is the order
 * edge_before computes, a strict total order on the edges (positions of
 * distinct edges differ); "not edge_first(e1, e2)" reads "e2 is at least as
 * good as e1". */
/*@ logic integer edge_pos(integer a, integer b, integer m) =
        a < b ? a * m + b : b * m + a;
    predicate edge_first{L}(double *alpha, integer m, integer a1,
                            integer b1, integer a2, integer b2) =
        alpha[edge_pos(a1, b1, m)] > alpha[edge_pos(a2, b2, m)] ||
        (alpha[edge_pos(a1, b1, m)] == alpha[edge_pos(a2, b2, m)] &&
         edge_pos(a1, b1, m) < edge_pos(a2, b2, m));
 */

/* An edge is the same whichever end is named first: the calls of
 * edge_before name the smaller end first.  Proved by the job
 * `cluster lemmas`. */
/*@ lemma edge_pos_sorted: \forall integer a, b, m;
        edge_pos(a < b ? a : b, a < b ? b : a, m) == edge_pos(a, b, m);
 */

/* Prim's key (link[v] is the best tree vertex for v off the tree): no
 * edge from the tree to v comes before the edge (link[v], v). */
/*@ predicate best_link{L}(double *alpha, integer m, unsigned char *in_tree,
                           size_t *link, integer v) =
        \forall integer u; 0 <= u < m && in_tree[u] != 0 ==>
            !edge_first(alpha, m, u, v, link[v], v);
 */
