/* SPDX-License-Identifier: GPL-3.0-or-later */
/* proofs/acsl/pfedme.h: the proof definitions of ref/algorithms/pfedme.c
 * (proofs/README.md, "Where the annotations live").  ACSL only: the
 * compiler reads comments here; Frama-C reads the definitions where
 * pfedme.c includes this file, after pfedme_work's definition.
 *
 * The workspace pfedme_work_alloc returns for the run state s (the shape
 * the proofs of pfedme_round_with and client_update start from,
 * proofs/README.md): w_t, w_local, θ and g P writable doubles each and
 * trained N, apart from each other and from the workspace record
 * (pfedme_buffers), and from the state's arrays (pfedme_work_shape). */
/*@ predicate pfedme_buffers{L}(pfedme_work *ws, integer P, integer N) =
      \valid_read(ws) &&
      \valid(ws->w_t + (0 .. P - 1)) && \valid(ws->w_local + (0 .. P - 1)) &&
      \valid(ws->theta + (0 .. P - 1)) && \valid(ws->g + (0 .. P - 1)) &&
      \valid(ws->trained + (0 .. N - 1)) &&
      \separated(ws->w_t + (0 .. P - 1), ws->w_local + (0 .. P - 1),
                 ws->theta + (0 .. P - 1), ws->g + (0 .. P - 1),
                 ws->trained + (0 .. N - 1), ws);
    predicate pfedme_work_shape{L}(pfedme_work *ws, pflref_state *s) =
      pfedme_buffers(ws, s->P, s->N) &&
      \separated(ws->w_t + (0 .. s->P - 1), ws->w_local + (0 .. s->P - 1),
                 ws->theta + (0 .. s->P - 1), ws->g + (0 .. s->P - 1),
                 ws->trained + (0 .. s->N - 1), ws, s,
                 s->w + (0 .. s->P - 1), s->w0 + (0 .. s->P - 1),
                 s->v + (0 .. s->N * s->P - 1), s->accum + (0 .. s->P - 1),
                 s->mask + (0 .. s->P - 1), s->shared + (0 .. s->P - 1));
 */

/* Client i's mark in the workspace's trained[0..N−1]: 0 until it first
 * trains, then 1 (first_training).  A predicate, not the comparison
 * written out: at client_update's call site WP 25's simplifier hands the
 * provers a comparison of a written double with the literal that they
 * reject ("Type mismatch between real and int"). */
/*@ predicate trained_mark(real t, integer k) = t == k; */

/* The round plan's n_selected selected ids, readable (plan_checked makes
 * them so), and client i among the first q of them (is_selected). */
/*@ predicate selected_readable{L}(pflref_round_plan *plan) =
      \valid_read(plan) &&
      \valid_read(plan->selected + (0 .. plan->n_selected - 1));
    predicate selected_in{L}(pflref_round_plan *plan, integer q, integer i) =
      \exists integer k; 0 <= k < q && plan->selected[k] == i;
 */
