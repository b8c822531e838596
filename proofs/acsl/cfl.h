/* SPDX-License-Identifier: GPL-3.0-or-later */
/* proofs/acsl/cfl.h: the proof definitions of ref/algorithms/cfl.c
 * (proofs/README.md, "Where the annotations live").  ACSL only: the
 * compiler reads comments here (the frames are macros defined only for
 * Frama-C, which expands them in annotations); Frama-C reads the
 * definitions where cfl.c includes this file, after cfl_work's
 * definition.  The lemmas are proved by the cfl lemmas job
 * (proofs/run.sh), their negative controls planted here. */

/* The workspace cfl_work_alloc returns for the run state s (the shape the
 * proof of cfl_round_with starts from, proofs/README.md): θ and g P
 * writable doubles, Δθ N×P, α and L N×N (N·N ≤ SIZE_MAX: their allocation
 * succeeded), buf N, side N bytes, members and map N indices, biwork 2N;
 * with the state's cluster labels (N indices, which pflref_state_alloc
 * allocates for has_clusters), apart from each other, from the workspace
 * record and from the state's arrays.
 * lemma square_below: m ≤ N bounds the m×m matrices of a cluster of m
 *   clients by the N×N of the workspace (proved by the cfl lemmas job).
 * lemma row_of_square: row a < m of an m×m matrix lies inside it. */
/*@ logic integer square(integer m) = m * m;
    lemma square_below: \forall integer m, N;
      0 <= m <= N ==> square(m) <= square(N);
    lemma row_of_square: \forall integer a, m, N;
      0 <= a < m && square(m) <= square(N) ==>
      0 <= a * m && a * m + m <= square(N);
 */
/*@ predicate cfl_work_shape{L}(cfl_work *ws, pflref_state *s) =
      \valid_read(ws) && s->N * s->N <= SIZE_MAX &&
      \valid(s->cluster + (0 .. s->N - 1)) &&
      \valid(ws->theta + (0 .. s->P - 1)) && \valid(ws->g + (0 .. s->P - 1)) &&
      \valid(ws->dtheta + (0 .. s->N * s->P - 1)) &&
      \valid(ws->alpha + (0 .. s->N * s->N - 1)) &&
      \valid(ws->L + (0 .. s->N * s->N - 1)) &&
      \valid(ws->buf + (0 .. s->N - 1)) && \valid(ws->side + (0 .. s->N - 1)) &&
      \valid(ws->members + (0 .. s->N - 1)) &&
      \valid(ws->map + (0 .. s->N - 1)) &&
      \valid(ws->biwork + (0 .. 2 * s->N - 1)) &&
      \separated(ws->theta + (0 .. s->P - 1), ws->g + (0 .. s->P - 1),
                 ws->dtheta + (0 .. s->N * s->P - 1),
                 ws->alpha + (0 .. s->N * s->N - 1),
                 ws->L + (0 .. s->N * s->N - 1), ws->buf + (0 .. s->N - 1),
                 ws->side + (0 .. s->N - 1), ws->members + (0 .. s->N - 1),
                 ws->map + (0 .. s->N - 1), ws->biwork + (0 .. 2 * s->N - 1),
                 s->cluster + (0 .. s->N - 1), ws, s,
                 s->v + (0 .. s->N * s->P - 1), s->w0 + (0 .. s->P - 1),
                 s->accum + (0 .. s->P - 1), s->mix + (0 .. s->P - 1),
                 s->mask + (0 .. s->P - 1), s->shared + (0 .. s->P - 1));
 */

/* split_cluster's counter of fresh labels, *next:
 * writable, apart from the state, the workspace record, the error record,
 * the N labels and the members list; the error record apart from the
 * state and the workspace record. */
/*@ predicate cfl_next_apart{L}(size_t *next, pflref_error *err,
                                pflref_state *s, cfl_work *ws) =
      \valid(next) && \separated(next, s, ws, err) &&
      \separated(next, s->cluster + (0 .. s->N - 1),
                 ws->members + (0 .. s->N - 1)) &&
      \separated(err, s, ws);
 */

/* What the clients' local updates start from (local_updates; the round's
 * own preconditions, which imply it): the run's state (state_personal,
 * state_model), the validated plan (round_plan), the workspace
 * (cfl_work_shape) and the error record apart from them. */
/*@ predicate cfl_round_shape{L}(pflref_state *s, cfl_work *ws,
                                 pflref_round_plan *plan, pflref_error *err) =
      state_personal(s) && state_model(s) && round_plan(plan, s->N) &&
      cfl_work_shape(ws, s) && \separated(err, s, s->problem, ws, plan);
 */

#ifdef __FRAMAC__
/* The frames (assigns lists) for N clients and P parameters: what the
 * clients' local updates write (local_updates: θ, g and Δθ), what a
 * cluster's update writes (cluster_update: its members list and Δθ_c in
 * s->accum), with every θ_i (apply_updates: the N·P of s->v), and what a
 * cluster's split writes (split_cluster: α, L, the sides, the
 * bipartition's work, the trace record and the N labels). */
#define CFL_LOCAL_FRAME(ws, N, P) \
    (ws)->theta[0 .. (P) - 1], (ws)->g[0 .. (P) - 1], \
    (ws)->dtheta[0 .. (N) * (P) - 1]
#define CFL_CLUSTER_FRAME(ws, s, N, P) \
    (ws)->members[0 .. (N) - 1], (s)->accum[0 .. (P) - 1]
#define CFL_UPDATE_FRAME(ws, s, N, P) \
    CFL_CLUSTER_FRAME(ws, s, N, P), (s)->v[0 .. (N) * (P) - 1]
#define CFL_SPLIT_FRAME(ws, s, N) \
    (ws)->alpha[0 .. (N) * (N) - 1], (ws)->L[0 .. (N) * (N) - 1], \
    (ws)->side[0 .. (N) - 1], (ws)->biwork[0 .. 2 * (N) - 1], \
    (ws)->buf[0 .. (N) - 1], (s)->cluster[0 .. (N) - 1]
#endif
