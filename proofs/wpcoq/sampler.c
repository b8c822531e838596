/* SPDX-License-Identifier: GPL-3.0-or-later */
/* proofs/wpcoq/sampler.c: the question whose Why3 task carries WP's
 * translation of ascending_subset (ref/sampling/kernels.h), the
 * postcondition of pflref_sampler_choose that proofs/coq/SamplerJoint.v
 * reads (proofs/wpcoq/README.md).  Never compiled; export.sh hands it to
 * WP and keeps the definitions of the task WP prints, not its goal.  The
 * lemma is false on purpose: a goal Qed could simplify away would print
 * nothing. */
#include "../../ref/sampling/kernels.h"

/*@ lemma export_sampler{L}:
      \forall size_t *chosen, integer m, N;
        ascending_subset(chosen, m, N) ==> \false;
 */
