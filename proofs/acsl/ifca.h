/* SPDX-License-Identifier: GPL-3.0-or-later */
/* proofs/acsl/ifca.h: the proof definitions of ref/algorithms/ifca.c
 * (proofs/README.md, "Where the annotations live").  ACSL only: the
 * compiler reads comments here (the frames are macros defined only for
 * Frama-C, which expands them in annotations); Frama-C reads the
 * definitions where ifca.c includes this file, after ifca_work's
 * definition. */

/* The workspace ifca_work_alloc returns for the run state s and k = ifca.k
 * clusters (the shape the proof of ifca_round_with starts from,
 * proofs/README.md): 1 ≤ k (ifca.k's minimum) and k·P ≤ SIZE_MAX (the
 * allocation of k×P doubles succeeded); θ and the sums k×P writable
 * doubles, the counts and the losses k, the partition N, x and g P, apart
 * from each other, from the workspace record and from the state's arrays.
 */
/*@ predicate ifca_work_shape{L}(ifca_work *ws, pflref_state *s,
                                 integer k) =
      \valid_read(ws) && 1 <= k && k * s->P <= SIZE_MAX &&
      \valid(ws->theta + (0 .. k * s->P - 1)) &&
      \valid(ws->sum + (0 .. k * s->P - 1)) &&
      \valid(ws->count + (0 .. k - 1)) && \valid(ws->loss + (0 .. k - 1)) &&
      \valid(ws->part + (0 .. s->N - 1)) &&
      \valid(ws->x + (0 .. s->P - 1)) && \valid(ws->g + (0 .. s->P - 1)) &&
      \separated(ws->theta + (0 .. k * s->P - 1),
                 ws->sum + (0 .. k * s->P - 1), ws->count + (0 .. k - 1),
                 ws->loss + (0 .. k - 1), ws->part + (0 .. s->N - 1),
                 ws->x + (0 .. s->P - 1), ws->g + (0 .. s->P - 1), ws, s,
                 s->v + (0 .. s->N * s->P - 1), s->w0 + (0 .. s->P - 1),
                 s->accum + (0 .. s->P - 1), s->mix + (0 .. s->P - 1),
                 s->mask + (0 .. s->P - 1), s->shared + (0 .. s->P - 1));
 */

/* lowest_loss's contract (Alg. 2, ĵ = argmin_j F_i(θ_j), ties to the
 * lowest index): loss[0..k−1] are finite (finite_losses); loss[j] is at
 * most every loss[l], l < k (lowest_of); and below every loss[l] with
 * l < j (first_lowest). */
/*@ predicate finite_losses{L}(double *loss, integer k) =
      \forall integer j; 0 <= j < k ==> \is_finite(loss[j]);
    predicate lowest_of{L}(double *loss, integer k, integer j) =
      \forall integer l; 0 <= l < k ==> loss[j] <= loss[l];
    predicate first_lowest{L}(double *loss, integer j) =
      \forall integer l; 0 <= l < j ==> loss[j] < loss[l];
 */

#ifdef __FRAMAC__
/* The frames (assigns lists): what a machine's update writes (x, g, the k
 * losses, the k×P sums and the k counts of ws), and the whole workspace
 * for k clusters, P parameters and N clients (θ and the partition too). */
#define IFCA_MACHINE_FRAME(ws, k, P) \
    (ws)->x[0 .. (P) - 1], (ws)->g[0 .. (P) - 1], (ws)->loss[0 .. (k) - 1], \
    (ws)->sum[0 .. (k) * (P) - 1], (ws)->count[0 .. (k) - 1]
#define IFCA_WORK_FRAME(ws, k, P, N) \
    (ws)->theta[0 .. (k) * (P) - 1], (ws)->part[0 .. (N) - 1], \
    IFCA_MACHINE_FRAME(ws, k, P)
#endif
