/* SPDX-License-Identifier: GPL-3.0-or-later */
/* proofs/wpcoq/question.c: the question whose Why3 task carries WP's
 * translation of every ACSL predicate the joints of proofs/coq/ read
 * (proofs/wpcoq/README.md): those of proofs/acsl/cluster.h (Prim's in
 * ClusterJoint.v, complete linkage's in LinkageJoint.v) and
 * ascending_subset of ref/sampling/kernels.h (SamplerJoint.v).  Never
 * compiled; export.sh hands it to WP and keeps the definitions of the task
 * WP prints, not its goal.  The lemma is false on purpose: a goal Qed could
 * simplify away would print nothing. */
#include <stddef.h>
#include "../acsl/cluster.h"
#include "../../ref/sampling/kernels.h"

/*@ lemma export_acsl{L}:
      \forall double *alpha, size_t *parent, size_t *link,
              unsigned char *in_tree, unsigned char *side, size_t *chosen,
              double *Lk, size_t *rep, real best,
              integer m, c, added, a1, b1, a2, b2, v, k, N, A, B;
        edge_first(alpha, m, a1, b1, a2, b2) &&
        best_link(alpha, m, in_tree, link, v) &&
        prim_perm(m) && prim_joined(in_tree, m, added) &&
        prim_cuts(alpha, m, parent, added) &&
        ranked_tree(parent, m) && subtree_sides(parent, m, c, side) &&
        last_edge(alpha, m, parent, c) &&
        complete_links(Lk, alpha, rep, m) && rep_pair(rep, m, a1, b1) &&
        merge_best(Lk, rep, m, a2, b2, best, A, B) &&
        ascending_subset(chosen, k, N) ==> \false;
 */
