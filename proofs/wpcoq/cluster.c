/* SPDX-License-Identifier: GPL-3.0-or-later */
/* proofs/wpcoq/cluster.c: the question whose Why3 task carries WP's
 * translation of the ACSL definitions of proofs/acsl/cluster.h, the ones
 * proofs/coq/Bipartition.v transcribes (proofs/wpcoq/README.md).  Never
 * compiled; export.sh hands it to WP and keeps the definitions of the task
 * WP prints, not its goal.  The lemma is false on purpose: a goal Qed
 * could simplify away would print nothing. */
#include <stddef.h>
#include "../acsl/cluster.h"

/*@ lemma export_cluster{L}:
      \forall double *alpha, size_t *parent, size_t *link,
              unsigned char *in_tree, unsigned char *side,
              integer m, c, added, a1, b1, a2, b2, v;
        edge_first(alpha, m, a1, b1, a2, b2) &&
        best_link(alpha, m, in_tree, link, v) &&
        prim_perm(m) && prim_joined(in_tree, m, added) &&
        ranked_tree(parent, m) && subtree_sides(parent, m, c, side) &&
        last_edge(alpha, m, parent, c) ==> \false;
 */
