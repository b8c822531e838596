/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/engine/state.h: the run state's allocation and release
 * (ref/engine/state.c), private to the run driver (ref/engine/run.c).
 * Floor: engine.
 */
#ifndef PFLREF_ENGINE_STATE_H
#define PFLREF_ENGINE_STATE_H

#include "engine/engine.h"

/* calloc(a·b) doubles, NULL when a or b is 0, on overflow of the bytes or
 * on failure. */
double *pflref_alloc_doubles(size_t a, size_t b);

/* Free n run-time peer lists (FedFomo's) and their array. */
void pflref_chosen_peers_free(pflref_batches *b, size_t n);

/* Initialize the run state s of algorithm alg on problem pr (ref/engine/
 * engine.h): zero it, then allocate w⁰, w (alg->has_global), v_i
 * (has_personal), α_i (has_alpha), the split's mask and shared, the
 * aggregation accumulator, the driver's evaluation buffer, the model
 * workspace for batches up to ws_batch samples, the cluster labels
 * (has_clusters), the training counts and, when a round of the schedule
 * carries peer draws, FedFomo's T run-time peer lists; then w⁰ = w = v_i =
 * the initial parameters w0 (P doubles), mask := hyper's split
 * (pflref_split_mask) and shared := 1 − mask.
 * Returns PFLREF_OK; PFLREF_EINVAL (where "problem.model", nothing
 * allocated) when the model has more than PFLREF_MAX_BLOCKS blocks or one
 * outside its P entries (pflref_model_blocks_inside); or PFLREF_ENOMEM
 * (nothing left allocated) when an allocation fails, P = 0, or N·P
 * doubles would not be addressable.
 * Proved (proofs/README.md): on PFLREF_OK, s has the shapes state_base,
 * state_model, state_global (has_global) and state_personal (has_personal)
 * name, shared = 1 − mask, mask 0 or 1, and w⁰ = w = every v_i = w0
 * (state_init, in WP's real model: the copies move doubles unchanged).
 * The caller's part: w0 holds its P entries and the schedule its T rounds
 * (it passed pflref_schedule_validate). */
/*@ // the P entries of v from o equal w0's; row k of the row-major array
    // v (P entries a row) equals w0
    predicate block_is{L}(double *v, integer o, integer P, double *w0) =
      \forall integer p; 0 <= p < P ==> v[o + p] == w0[p];
    predicate row_is{L}(double *v, integer k, integer P, double *w0) =
      block_is(v, k * P, P, w0);

    // w⁰ = w = v_i = w0 (INITIALIZE of every algorithm's box)
    predicate state_init{L}(pflref_state *s, double *w0) =
      (\forall integer p; 0 <= p < s->P ==> s->w0[p] == w0[p]) &&
      (s->w != \null ==> \forall integer p; 0 <= p < s->P ==>
         s->w[p] == w0[p]) &&
      (s->v != \null ==> \forall integer i; 0 <= i < s->N ==>
         row_is(s->v, i, s->P, w0));
 */
/*@ requires \valid(s);
    requires \valid_read(pr) && \valid_read(alg) && \valid_read(hyper) &&
             \valid_read(schedule);
    requires schedule->T > 0 ==>
             \valid_read(schedule->rounds + (0 .. schedule->T - 1));
    requires \valid_read(w0 + (0 .. pr->model.P - 1));
    requires \separated(s, pr, alg, hyper, schedule,
                        w0 + (0 .. pr->model.P - 1));
    ensures \result == PFLREF_OK ==> state_base(s);
    ensures \result == PFLREF_OK ==> s->problem == \old(pr) &&
            s->P == \old(pr->model.P) && s->N == \old(pr->N);
    // state_model(s), unfolded: then Qed proves it, where the provers,
    // given the predicate, took seconds to follow s->problem through the
    // calls' writes
    ensures \result == PFLREF_OK ==>
            \valid_read(s->problem) && s->problem->model.P == s->P;
    ensures \result == PFLREF_OK && \old(alg->has_global) ==>
            state_global(s);
    ensures \result == PFLREF_OK && !\old(alg->has_global) ==> s->w == \null;
    ensures \result == PFLREF_OK && \old(alg->has_personal) ==>
            state_personal(s);
    ensures \result == PFLREF_OK && !\old(alg->has_personal) ==>
            s->v == \null;
    ensures \result == PFLREF_OK ==> \forall integer p; 0 <= p < s->P ==>
            (s->mask[p] == 0 || s->mask[p] == 1) &&
            s->shared[p] == 1 - s->mask[p];
    ensures init: \result == PFLREF_OK ==> state_init(s, w0);
 */
pflref_status pflref_state_alloc(pflref_state *s, const pflref_problem *pr,
                                 const pflref_algorithm *alg,
                                 const pflref_hyper *hyper,
                                 const pflref_schedule *schedule,
                                 size_t ws_batch, const double *w0,
                                 pflref_error *err);

/* Free everything pflref_state_alloc allocated and the algorithm's
 * workspace (s->extra, by alg->work_free). */
void pflref_state_free(pflref_state *s, const pflref_algorithm *alg);

#endif
