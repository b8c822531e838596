/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/engine/trace_cluster.h: Algorithm 1's intermediates for --trace
 * (private to ref/; floor: engine).  The bipartition (ref/engine/cluster.c,
 * proved) builds Algorithm 1's answer as a maximum spanning tree and never
 * forms the sorted list s or the merges of lines 5–6; these functions
 * recompute them from the same α for the trace alone, as intermediate
 * events (pflref/trace.h: printed, recorded at no level), so a reader can
 * follow the box line by line.  Nothing of a run's result depends on them.
 */
#ifndef PFLREF_ENGINE_TRACE_CLUSTER_H
#define PFLREF_ENGINE_TRACE_CLUSTER_H

#include <stddef.h>
#include "pflref/trace.h"

/* Emit Algorithm 1's lines 2, 3, 5 and 6 on α (m×m, row a that of client
 * members[a], 2 ≤ m) as INTERMEDIATE events of round t, client rep:
 *   s   (l. 2)  the m² row-major positions of α by decreasing α, ties by
 *               the smaller position (the order ref/engine/cluster.c
 *               proves its tree under);
 *   C   (l. 3)  each member's cluster, named by its smallest client: at
 *               first each client its own;
 *   pair (l. 5) [t, client of i₁, client of i₂] for each t whose pair
 *               joins two clusters (the other t change nothing), and
 *   C   (l. 6)  the clusters after that merge,
 * until two clusters remain (l. 7).  Emits nothing when tr is NULL or
 * memory runs out (the run goes on: the trace is not its result). */
void pflref_trace_bipartition_steps(const pflref_trace *tr, long t, long rep,
                                    const size_t *members, size_t m,
                                    const double *alpha);

#endif
