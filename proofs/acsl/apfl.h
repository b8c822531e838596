/* SPDX-License-Identifier: GPL-3.0-or-later */
/* proofs/acsl/apfl.h: the proof definitions of ref/algorithms/apfl.c
 * (proofs/README.md, "Where the annotations live").  ACSL only: the
 * compiler reads comments here; Frama-C reads the definitions where
 * apfl.c includes this file, after apfl_work's definition. */

/* α_i of the run state s (has_alpha; pflref_state_alloc allocates it):
 * N writable doubles apart from *s and from the state's arrays.
 * predicate apfl_alpha_shape: that shape. */
/*@ predicate apfl_alpha_shape{L}(pflref_state *s) =
      \valid(s->alpha + (0 .. s->N - 1)) &&
      \separated(s->alpha + (0 .. s->N - 1), s, s->w + (0 .. s->P - 1),
                 s->w0 + (0 .. s->P - 1), s->v + (0 .. s->N * s->P - 1),
                 s->accum + (0 .. s->P - 1), s->mix + (0 .. s->P - 1),
                 s->mask + (0 .. s->P - 1), s->shared + (0 .. s->P - 1));
 */

/* The P-entry buffers of the workspace apfl_work_alloc returns for the run
 * state s (the shape the proofs of the round start from,
 * proofs/README.md): the seven P writable doubles each, apart from each
 * other, from the workspace record, from *s and from the state's arrays
 * (α_i among them).  The output-mixing caches Zv, Zw, E are not read by
 * the proofs. */
/*@ predicate apfl_work_shape{L}(apfl_work *ws, pflref_state *s) =
      \valid_read(ws) &&
      \valid(ws->w_local + (0 .. s->P - 1)) &&
      \valid(ws->w_old + (0 .. s->P - 1)) &&
      \valid(ws->v_old + (0 .. s->P - 1)) &&
      \valid(ws->g + (0 .. s->P - 1)) && \valid(ws->G + (0 .. s->P - 1)) &&
      \valid(ws->H + (0 .. s->P - 1)) &&
      \valid(ws->vbar + (0 .. s->P - 1)) &&
      \separated(ws->w_local + (0 .. s->P - 1), ws->w_old + (0 .. s->P - 1),
                 ws->v_old + (0 .. s->P - 1), ws->g + (0 .. s->P - 1),
                 ws->G + (0 .. s->P - 1), ws->H + (0 .. s->P - 1),
                 ws->vbar + (0 .. s->P - 1), ws, s,
                 s->w + (0 .. s->P - 1), s->w0 + (0 .. s->P - 1),
                 s->v + (0 .. s->N * s->P - 1), s->alpha + (0 .. s->N - 1),
                 s->accum + (0 .. s->P - 1), s->mix + (0 .. s->P - 1),
                 s->mask + (0 .. s->P - 1), s->shared + (0 .. s->P - 1));
 */

/* What a client's local steps need of the state and the workspace (the
 * preconditions of the step functions below, which the round's shapes
 * above imply): the state, its problem and the workspace record apart;
 * v N·P writable doubles, α N; the problem's model has the state's P;
 * w_i, its copy w_old and v_i's copy v_old P writable doubles, each copy
 * apart from its source.
 * predicate apfl_steps: that shape. */
/*@ predicate apfl_steps{L}(pflref_state *s, apfl_work *ws) =
      \valid_read(s) && \separated(s, s->problem, ws) &&
      s->N * s->P <= SIZE_MAX &&
      \valid(s->v + (0 .. s->N * s->P - 1)) &&
      \valid(s->alpha + (0 .. s->N - 1)) &&
      \valid_read(s->problem) && s->problem->model.P == s->P &&
      \valid_read(ws) && \valid(ws->w_local + (0 .. s->P - 1)) &&
      \valid(ws->w_old + (0 .. s->P - 1)) &&
      \valid(ws->v_old + (0 .. s->P - 1)) &&
      \valid(ws->vbar + (0 .. s->P - 1)) &&
      \separated(ws->w_old + (0 .. s->P - 1), ws->w_local + (0 .. s->P - 1)) &&
      \separated(ws->v_old + (0 .. s->P - 1), s->v + (0 .. s->N * s->P - 1));
 */

/* r = Π_[0,1](x) (clip01): r in [0, 1], x itself when x lies there, else
 * the nearer end. */
/*@ predicate projected01(real x, real r) =
      0.0 <= r <= 1.0 && (0.0 <= x <= 1.0 ==> r == x) &&
      (x < 0.0 ==> r == 0.0) && (x > 1.0 ==> r == 1.0);
 */
