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

/* The tree Prim builds is rooted at item 0: a ghost rank, the order in
 * which Prim adds the vertices (0 for the root, `added` for the vertex the
 * added-th join brings in; a vertex not yet joined keeps its index, its
 * parent the root), decreases strictly from every vertex v ≠ 0 to its
 * parent.  So every walk up the tree from v reaches 0 within rank(v) < m
 * steps: `parent` is acyclic, a tree rooted at 0 on all m vertices.  The
 * rank is ghost memory (no code reads or builds it); it is `long long`, so
 * WP's typed memory model keeps it apart from the size_t, byte and double
 * arrays of the code without a separation hypothesis.  Its 2^32 entries
 * cover every m with m·m ≤ SIZE_MAX (lemma square_fits_rank). */
/*@ ghost long long prim_rank[4294967296]; */

/*@ lemma square_fits_rank: \forall integer m; 0 <= m &&
        m * m <= 18446744073709551615 ==> m <= 4294967295;
 */

/* Every vertex joins (the loop's test best == m is dead).  Two more ghost
 * arrays, prim_slot and its inverse prim_order, are kept a permutation of
 * 0..m−1 (prim_perm) whose first `added` slots hold exactly the tree
 * vertices (prim_joined).  The vertex prim_order[added] is then off the
 * tree whenever added < m, a witness with no count to take, and at
 * added = m every vertex is in the tree.  A vertex that joins takes the
 * slot `added`, and the vertex off the tree that held it takes the
 * joiner's old slot (PRIM_GHOST_JOIN below); before the first join every
 * vertex holds its own index (PRIM_GHOST_START).  prim_rank is left as it
 * was (a tree vertex's slot is its rank), so the tree's invariants do not
 * see the swap. */
/*@ ghost long long prim_slot[4294967296]; */
/*@ ghost long long prim_order[4294967296]; */

/*@ predicate prim_perm{L}(integer m) =
        (\forall integer k; 0 <= k < m ==>
             0 <= prim_order[k] < m && prim_slot[prim_order[k]] == k) &&
        (\forall integer v; 0 <= v < m ==>
             0 <= prim_slot[v] < m && prim_order[prim_slot[v]] == v);
    predicate prim_joined{L}(unsigned char *in_tree, integer m,
                             integer added) =
        \forall integer v; 0 <= v < m ==>
            (in_tree[v] != 0 <==> prim_slot[v] < added);
 */

/* Prim's run step by step, as the ghost permutation records it: the
 * vertex prim_order[k] joined at step k, the root at step 0 (its slot is
 * 0), hanging from a vertex joined at an earlier step by an edge that no
 * edge across the cut of step k comes before (the vertices joined at
 * steps < k against the rest: the assertion cut_property at that join,
 * kept afterwards, since a tree vertex's slot and parent never change and
 * the vertices off the tree keep slots ≥ added).  With added = m (the
 * postcondition `run` of max_spanning_tree and of optimal_bipartition) it
 * states, the slots taken for the steps, the hypotheses prim_cut and
 * par_earlier of proofs/coq/Bipartition.v's section Maximal
 * (proofs/coq/ClusterJoint.v, bipartition_joint). */
/*@ predicate prim_step{L}(double *alpha, integer m, size_t *parent,
                           integer k) =
        prim_slot[parent[prim_order[k]]] < k &&
        \forall integer u, w; 0 <= u < m && 0 <= w < m &&
            prim_slot[u] < k <= prim_slot[w] ==>
            !edge_first(alpha, m, u, w, parent[prim_order[k]],
                        prim_order[k]);
    predicate prim_cuts{L}(double *alpha, integer m, size_t *parent,
                           integer added) =
        prim_slot[0] == 0 &&
        \forall integer k; 1 <= k < added ==> prim_step(alpha, m, parent, k);
 */

/*@ predicate ranked_tree{L}(size_t *parent, integer m) =
        (\forall integer v; 0 <= v < m ==> 0 <= prim_rank[v] < m) &&
        (\forall integer v; 1 <= v < m ==>
             parent[v] < m && prim_rank[parent[v]] < prim_rank[v]);
 */

/* The subtree of c in the tree `parent` rooted at 0: c itself, and every
 * v ≠ 0 whose parent is in it; i.e. the vertices whose walk up the tree
 * meets c before the root.  In a tree (ranked_tree) it is the component
 * of c once the edge (parent[c], c) is removed: subtree_side proves that
 * (parent[c], c) is the only tree edge whose two ends it separates. */
/*@ inductive in_subtree{L}(size_t *parent, integer c, integer v) {
      case subtree_top{L}: \forall size_t *parent, integer c;
          in_subtree(parent, c, c);
      case subtree_below{L}: \forall size_t *parent, integer c, v;
          v != 0 && v != c && in_subtree(parent, c, parent[v]) ==>
          in_subtree(parent, c, v);
    }
 */

/* The bipartition of Algorithm 1 as the C forms it: side 1 is exactly the
 * subtree of c (side[v] ∈ {0, 1}). */
/*@ predicate subtree_sides{L}(size_t *parent, integer m, integer c,
                               unsigned char *side) =
        \forall integer v; 0 <= v < m ==>
            (side[v] == 1 <==> in_subtree(parent, c, v));
 */

/* (parent[c], c) is the last tree edge in edge_first's order. */
/*@ predicate last_edge{L}(double *alpha, integer m, size_t *parent,
                           integer c) =
        \forall integer v; 1 <= v < m ==>
            !edge_first(alpha, m, parent[c], c, parent[v], v);
 */

/* Complete linkage's clusters, counted without \numof: two ghost arrays,
 * cl_list and its inverse cl_pos, hold the clusters' names (the reps, the
 * items with rep[v] == v) in the first `clusters` entries of cl_list
 * (cl_reps).  A merge of B into A drops B from the list, the last entry
 * taking its place (CL_GHOST_MERGE below), as the loop drops one from
 * `clusters`; so when two clusters remain the list names two reps, and
 * the one that is not item 0 lies on side 1. */
/*@ ghost long long cl_list[4294967296]; */
/*@ ghost long long cl_pos[4294967296]; */

/* Complete linkage's merge (best_merge in ref/engine/cluster.c): the
 * pairs of reps A < B, in the scan's order (A ascending, then B), and the
 * link L(A, B) kept at A·m + B. */
/*@ predicate rep_pair{L}(size_t *rep, integer m, integer a, integer b) =
        0 <= a < b < m && rep[a] == a && rep[b] == b;
    predicate pair_before(integer a1, integer b1, integer a2, integer b2) =
        a1 < a2 || (a1 == a2 && b1 < b2);
    // best (the link of the pair (bA, bB)) is at least the link of every
    // pair of reps scanned before (A, B), and above that of every pair
    // before (bA, bB): the largest link, ties to the first pair
    predicate merge_best{L}(double *Lk, size_t *rep, integer m, integer A,
                            integer B, real best, integer bA, integer bB) =
        (\forall integer a, b; rep_pair(rep, m, a, b) &&
             pair_before(a, b, A, B) ==> Lk[a * m + b] <= best) &&
        (\forall integer a, b; rep_pair(rep, m, a, b) &&
             pair_before(a, b, bA, bB) ==> Lk[a * m + b] < best);
 */

/* Complete linkage keeps the link of clusters a ≠ b at link_pos(a, b),
 * the position edge_pos names (upper computes it); a symbol of its own, so
 * that the provers do not try the lemmas of complete linkage below on the
 * edge_pos terms of Prim's goals. */
/*@ logic integer link_pos(integer a, integer b, integer m) =
        a < b ? a * m + b : b * m + a;
 */

/* Complete linkage's links (the Lance–Williams invariant): for two reps
 * a ≠ b, L(a, b) is the least α over the pairs of their members, and one
 * pair attains it (complete linkage in similarities); complete_links holds
 * it for every two reps.  link_pos is symmetric, so no order of a and b is
 * named. */
/*@ predicate clink{L}(double *Lk, double *alpha, size_t *rep, integer m,
                       integer a, integer b) =
        (\forall integer i, j; 0 <= i < m && 0 <= j < m && rep[i] == a &&
             rep[j] == b ==>
             Lk[link_pos(a, b, m)] <= alpha[link_pos(i, j, m)]) &&
        (\exists integer i, j; 0 <= i < m && 0 <= j < m && rep[i] == a &&
             rep[j] == b && Lk[link_pos(a, b, m)] == alpha[link_pos(i, j, m)]);
    predicate complete_links{L}(double *Lk, double *alpha, size_t *rep,
                                integer m) =
        \forall integer a, b; 0 <= a < m && 0 <= b < m && a != b &&
            rep[a] == a && rep[b] == b ==> clink(Lk, alpha, rep, m, a, b);
 */

/* Lance–Williams in similarities, for the merge of B into A and another
 * cluster C: the new link L(A, C) is the smaller of the old L(A, C) and
 * L(B, C) (Lo: the links before the merge). */
/*@ predicate lw_min{L1, L0}(double *Lk, double *Lo, integer m, integer A,
                             integer B, integer C) =
        \at(Lk[link_pos(A, C, m)], L1) <= \at(Lo[link_pos(A, C, m)], L0) &&
        \at(Lk[link_pos(A, C, m)], L1) <= \at(Lo[link_pos(B, C, m)], L0) &&
        (\at(Lk[link_pos(A, C, m)], L1) == \at(Lo[link_pos(A, C, m)], L0) ||
         \at(Lk[link_pos(A, C, m)], L1) == \at(Lo[link_pos(B, C, m)], L0));
 */

/* Distinct edges sit at distinct positions: the row of link_pos(a, b) is
 * the smaller end, its column the larger (row_unique: a position names
 * its row), and an edge is the same whichever end is named first
 * (link_pos_sym).  Proved by the job `cluster lemmas`. */
/*@ lemma row_unique: \forall integer x1, y1, x2, y2, m;
        0 <= x1 < y1 < m && 0 <= x2 < y2 < m &&
        link_pos(x1, y1, m) == link_pos(x2, y2, m) ==> x1 == x2 && y1 == y2;
    lemma link_pos_sym: \forall integer a, b, m;
        link_pos(a, b, m) == link_pos(b, a, m);
    lemma link_pos_rows: \forall integer a, b, m;
        link_pos(a, b, m) == (a < b ? a : b) * m + (a < b ? b : a);
    lemma link_pos_in: \forall integer a, b, m;
        0 <= a < m && 0 <= b < m ==> 0 <= link_pos(a, b, m) < m * m;
    lemma link_pos_ends: \forall integer a1, b1, a2, b2, m;
        0 <= a1 < m && 0 <= b1 < m && 0 <= a2 < m && 0 <= b2 < m &&
        link_pos(a1, b1, m) == link_pos(a2, b2, m) ==>
        (a1 < b1 ? a1 : b1) == (a2 < b2 ? a2 : b2) &&
        (a1 < b1 ? b1 : a1) == (a2 < b2 ? b2 : a2);
    lemma link_pos_inj: \forall integer a1, b1, a2, b2, m;
        0 <= a1 < m && 0 <= b1 < m && a1 != b1 &&
        0 <= a2 < m && 0 <= b2 < m && a2 != b2 &&
        link_pos(a1, b1, m) == link_pos(a2, b2, m) ==>
        (a1 == a2 && b1 == b2) || (a1 == b2 && b1 == a2);
 */

/* The Lance–Williams invariant across a merge of B into A (states L0
 * before, L1 after; α is not written).  clink_sym: a link names its two
 * clusters in either order.  clink_frame: a link between two clusters
 * that keep their members and their link still holds.  clink_merge: the
 * link of A ∪ B with another cluster C, the smaller of L(A, C) and
 * L(B, C), holds.  Proved by the job `cluster lemmas`. */
/*@ predicate same_alpha{L0, L1}(double *alpha, integer m) =
        \forall integer i, j; 0 <= i < m && 0 <= j < m ==>
            \at(alpha[link_pos(i, j, m)], L1) ==
            \at(alpha[link_pos(i, j, m)], L0);
    predicate same_members{L0, L1}(size_t *rep, integer m, integer a) =
        \forall integer i; 0 <= i < m ==>
            (\at(rep[i], L1) == a <==> \at(rep[i], L0) == a);
    lemma clink_sym{L}: \forall double *Lk, *alpha, size_t *rep,
                                 integer m, a, b;
        clink(Lk, alpha, rep, m, a, b) ==> clink(Lk, alpha, rep, m, b, a);
    lemma clink_frame{L0, L1}: \forall double *Lk, *alpha, size_t *rep,
                                        integer m, a, b;
        clink{L0}(Lk, alpha, rep, m, a, b) &&
        \at(Lk[link_pos(a, b, m)], L1) == \at(Lk[link_pos(a, b, m)], L0) &&
        same_members{L0, L1}(rep, m, a) && same_members{L0, L1}(rep, m, b) &&
        same_alpha{L0, L1}(alpha, m) ==> clink{L1}(Lk, alpha, rep, m, a, b);
    lemma clink_merge{L0, L1}: \forall double *Lk, *alpha, size_t *rep,
                                        integer m, A, B, C;
        clink{L0}(Lk, alpha, rep, m, A, C) &&
        clink{L0}(Lk, alpha, rep, m, B, C) &&
        lw_min{L1, L0}(Lk, Lk, m, A, B, C) &&
        (\forall integer i; 0 <= i < m ==>
            (\at(rep[i], L1) == A <==>
             (\at(rep[i], L0) == A || \at(rep[i], L0) == B))) &&
        same_members{L0, L1}(rep, m, C) && same_alpha{L0, L1}(alpha, m) ==>
        clink{L1}(Lk, alpha, rep, m, A, C);
 */

/*@ predicate cl_reps{L}(size_t *rep, integer m, integer clusters) =
        (\forall integer i; 0 <= i < clusters ==>
             0 <= cl_list[i] < m && rep[cl_list[i]] == cl_list[i] &&
             cl_pos[cl_list[i]] == i) &&
        (\forall integer v; 0 <= v < m && rep[v] == v ==>
             0 <= cl_pos[v] < clusters && cl_list[cl_pos[v]] == v);
 */

/* The ghost statements of max_spanning_tree (above: every vertex joins),
 * defined for Frama-C only; the compiler reads nothing of them. */
#ifdef __FRAMAC__
#define PRIM_GHOST_START(v) \
    { prim_rank[v] = (long long)(v); prim_slot[v] = (long long)(v); \
      prim_order[v] = (long long)(v); }
#define CL_GHOST_START(v) \
    { cl_list[v] = (long long)(v); cl_pos[v] = (long long)(v); }
#define CL_GHOST_MERGE(B, clusters) \
    { long long cl_j_ = cl_pos[B]; \
      long long cl_last_ = cl_list[(clusters) - 1]; \
      cl_list[cl_j_] = cl_last_; cl_pos[cl_last_] = cl_j_; }
#define PRIM_GHOST_JOIN(best, added) \
    { long long prim_s_ = prim_slot[best]; \
      long long prim_w_ = prim_order[added]; \
      prim_slot[prim_w_] = prim_s_; prim_order[prim_s_] = prim_w_; \
      prim_slot[best] = (long long)(added); \
      prim_order[added] = (long long)(best); \
      prim_rank[best] = (long long)(added); }
#endif
