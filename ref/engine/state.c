/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/engine/state.c: the run state's allocation and release, the run
 * driver's INITIALIZE (ref/engine/run.c; the state is ref/engine/engine.h's
 * pflref_state).
 *
 * Proved (proofs/README.md): on PFLREF_OK, pflref_state_alloc leaves the
 * shapes engine.h's state_base, state_global and state_personal name
 * (P ≥ 1, N·P addressable, each array valid for its entries and apart from
 * the others), from which the algorithms' call sites of the block kernels
 * are proved; every copy of w0 and both masks stay inside their arrays,
 * and w⁰ = w = every v_i = w0 (state.h's state_init).
 * P ≥ 1 and N·P are tested here; that the new arrays are valid and apart
 * is what C guarantees of a new allocation, which WP cannot derive: it is
 * the contract of one short wrapper of the allocations
 * (state_arrays_alloc), an assumption of the proof.
 */
#include <stdint.h>
#include <stdlib.h>
#include "core/vec.h"
#include "engine/engine.h"
#include "engine/state.h"

/* For the proof below (proofs/README.md): the one fact it needs of
 * ref/core/status.c, that the error setter returns the status it is given
 * (its code is not proved; it writes only *err). */
/*@ assigns *err;
    ensures \result == status;
 */
pflref_status pflref_error_set(pflref_error *err, pflref_status status,
                               const char *where, const char *fmt, ...);

/* The model workspace (ref/models/) writes nothing the proof reads. */
/*@ assigns \nothing; */
pflref_model_workspace *pflref_model_workspace_alloc(const pflref_model *m,
                                                     size_t max_batch);

/* The fact on products that the proofs below need, which Z3 and CVC4 do
 * not find in a function's goals (proved by the `state lemmas` job). */
/*@ // pflref_state_alloc's test: N ≤ ⌊k/P⌋ makes N·P ≤ k
    lemma product_fits: \forall integer N, P, k;
      0 <= N && 1 <= P && 0 <= k && N <= k / P ==> N * P <= k;

    // the state's arrays apart from the objects the initialisation reads:
    // the initial parameters w0, the model and the split
    predicate state_apart{L}(pflref_state *s, double *w0, pflref_model *m,
                             pflref_split *split) =
      \separated(w0 + (0 .. s->P - 1), s->w0 + (0 .. s->P - 1),
                 s->accum + (0 .. s->P - 1), s->mix + (0 .. s->P - 1),
                 s->mask + (0 .. s->P - 1), s->shared + (0 .. s->P - 1)) &&
      \separated(s->mask + (0 .. s->P - 1), m, split) &&
      (s->w != \null ==> \separated(w0 + (0 .. s->P - 1),
                                    s->w + (0 .. s->P - 1))) &&
      (s->v != \null ==> \separated(w0 + (0 .. s->P - 1),
                                    s->v + (0 .. s->N * s->P - 1)));
 */

/* The typed allocators below write nothing the proof reads (an
 * assumption, proofs/README.md: calloc's bookkeeping aside); they keep
 * calloc's void * out of the proved code, which WP's typed memory model
 * does not cast. */
/*@ assigns \nothing; */
double *pflref_alloc_doubles(size_t a, size_t b)
{
    if (a == 0 || b == 0 || a > SIZE_MAX / b / sizeof(double))
        return NULL;
    return calloc(a * b, sizeof(double));
}

/* calloc(n) size_t counts, or NULL. */
/*@ assigns \nothing; */
static size_t *alloc_sizes(size_t n)
{
    return calloc(n, sizeof(size_t));
}

/* calloc(T) batch lists (FedFomo's run-time peer lists), or NULL. */
/*@ assigns \nothing; */
static pflref_batches *alloc_peer_lists(size_t T)
{
    return calloc(T, sizeof(pflref_batches));
}

/* The arrays of the shapes state_base, state_global and state_personal
 * (ref/engine/engine.h): w⁰, accum and mix (P doubles), mask and shared
 * (P bytes), w (P doubles) when global, v (N·P doubles) when personal, all
 * zero, each NULL when its allocation fails.  WP 25 does not implement
 * \fresh, so this contract states what C guarantees of new blocks: each
 * valid for its entries, apart from the others and from every object that
 * existed before (s, w0, the model, the split).  It is an assumption of
 * the proof (proofs/README.md), as calloc's own contract is; 1 ≤ P and
 * N·P·sizeof(double) ≤ SIZE_MAX are the caller's to test. */
/*@ requires \valid(s);
    requires 1 <= s->P && s->N * s->P <= SIZE_MAX / sizeof(double);
    assigns s->w0, s->w, s->v, s->mask, s->shared, s->accum, s->mix;
    ensures s->w0 != \null && s->accum != \null && s->mix != \null &&
            s->mask != \null && s->shared != \null ==>
            state_base(s) && state_apart(s, w0, m, split) &&
            (s->w != \null ==> state_global(s)) &&
            (s->v != \null ==> state_personal(s));
    ensures !global ==> s->w == \null;
    ensures !personal ==> s->v == \null;
 */
static void state_arrays_alloc(pflref_state *s, int global, int personal,
                               const double *w0, const pflref_model *m,
                               const pflref_split *split)
{
    (void)w0;
    (void)m;
    (void)split;
    s->w0 = pflref_alloc_doubles(s->P, 1);
    s->w = global ? pflref_alloc_doubles(s->P, 1) : NULL;
    s->v = personal ? pflref_alloc_doubles(s->N, s->P) : NULL;
    s->mask = calloc(s->P, 1);
    s->shared = calloc(s->P, 1);
    s->accum = pflref_alloc_doubles(s->P, 1);
    s->mix = pflref_alloc_doubles(s->P, 1);
}

/* v_i := w0 for every i < N: each of the N rows of P doubles of v (v and
 * w0 apart).  Proved (proofs/README.md): every row equals w0 (rows). */
/*@ requires N * P <= SIZE_MAX;
    requires \valid(v + (0 .. N * P - 1)) && \valid_read(w0 + (0 .. P - 1));
    requires \separated(v + (0 .. N * P - 1), w0 + (0 .. P - 1));
    assigns v[0 .. N * P - 1];
    ensures rows: \forall integer i; 0 <= i < N ==> row_is(v, i, P, w0);
 */
static void copy_rows(double *v, size_t N, size_t P, const double *w0)
{
    /*@ loop invariant 0 <= i <= N;
        loop invariant rows: \forall integer r; 0 <= r < i ==>
                             row_is(v, r, P, w0);
        loop assigns i, v[0 .. N * P - 1];
        loop variant N - i;
     */
    for (size_t i = 0; i < N; i++) {
        pflref_copy(pflref_row(v, i, N, P), w0, P);
        /* for the provers: the entries before row i and w0 kept, the rows
         * before row i inside them, so those rows kept; row i is w0 */
        /*@ assert before: \forall integer q; 0 <= q < i * P ==>
                   v[q] == \at(v[q], LoopCurrent); */
        /*@ assert w0_kept: \forall integer p; 0 <= p < P ==>
                   w0[p] == \at(w0[p], LoopCurrent); */
        /*@ assert rows_inside: \forall integer r; 0 <= r < i ==>
                   0 <= r * P && r * P + P <= i * P; */
        /*@ assert kept: \forall integer r; 0 <= r < i ==>
                   \at(row_is(v, r, P, w0), LoopCurrent) ==>
                   row_is(v, r, P, w0); */
        /*@ assert row_i: row_is(v, i, P, w0); */
    }
}

/* The initial values of the state's arrays: w⁰ = w = every v_i = w0,
 * mask := the split's (pflref_split_mask), shared := 1 − mask. */
/*@ requires state_base(s);
    requires s->w != \null ==> state_global(s);
    requires s->v != \null ==> state_personal(s);
    requires \valid_read(w0 + (0 .. s->P - 1));
    requires \valid_read(m) && \valid_read(split) && m->P == s->P;
    requires m->nblocks <= PFLREF_MAX_BLOCKS &&
             blocks_within(&m->blocks[0], m->nblocks, m->P);
    requires state_apart(s, w0, m, split);
    assigns s->w0[0 .. s->P - 1], s->w[0 .. s->P - 1],
            s->v[0 .. s->N * s->P - 1], s->mask[0 .. s->P - 1],
            s->shared[0 .. s->P - 1];
    ensures \forall integer p; 0 <= p < s->P ==>
            (s->mask[p] == 0 || s->mask[p] == 1) &&
            s->shared[p] == 1 - s->mask[p];
    ensures init: state_init(s, w0);  // req: fedavg.alg1.l2
 */
static void state_arrays_init(pflref_state *s, const pflref_model *m,
                              const pflref_split *split, const double *w0)
{
    const size_t P = s->P, N = s->N;
    unsigned char *mask = s->mask, *shared = s->shared;
    /* req: fedavg.alg1.l2, pfedme.alg1.l1, ditto.alg1.l1, apfl.alg1.l1 */
    /* req: perfedavg.alg1.l1, fedalt.alg4.l1, fedsim.alg5.l1, ifca.alg1.l1 */
    /* req: cfl.alg5.l1, local.eq1 */
    pflref_copy(s->w0, w0, P);
    if (s->w != NULL)
        pflref_copy(s->w, w0, P);
    if (s->v != NULL)
        copy_rows(s->v, N, P, w0);
    pflref_split_mask(m, split, mask);
    /*@ loop invariant 0 <= p <= P;
        loop invariant \forall integer r; 0 <= r < p ==>
                       shared[r] == 1 - mask[r];
        loop assigns p, shared[0 .. P - 1];
        loop variant P - p;
     */
    for (size_t p = 0; p < P; p++)
        shared[p] = (unsigned char)!mask[p];
}

/* s := zero, its problem, hyperparameters and sizes P, N. */
/*@ requires \valid(s);
    assigns *s;
    ensures s->problem == pr && s->P == P && s->N == N;
 */
static void state_zero(pflref_state *s, const pflref_problem *pr,
                       const pflref_hyper *hyper, size_t P, size_t N)
{
    *s = (pflref_state){0};
    s->problem = pr;
    s->hyper = hyper;
    s->hyper_base = hyper;
    s->P = P;
    s->N = N;
}

/* The rest of the state: α_i (has_alpha), the model workspace for batches
 * up to ws_batch samples, the cluster labels (has_clusters), the training
 * counts, and FedFomo's T run-time peer lists when a round carries peer
 * draws.  1 when every one of them the algorithm needs was allocated. */
/*@ requires \valid(s) && \valid_read(pr) && \valid_read(alg) &&
             \valid_read(schedule);
    requires schedule->T > 0 ==>
             \valid_read(schedule->rounds + (0 .. schedule->T - 1));
    requires \separated(s, pr, alg, schedule);
    assigns s->alpha, s->ws, s->cluster, s->trained, s->chosen_peers,
            s->n_chosen;
 */
static int state_rest_alloc(pflref_state *s, const pflref_problem *pr,
                            const pflref_algorithm *alg,
                            const pflref_schedule *schedule, size_t ws_batch)
{
    const size_t N = s->N, T = schedule->T;
    const int has_alpha = alg->has_alpha, has_clusters = alg->has_clusters;
    s->alpha = has_alpha ? pflref_alloc_doubles(N, 1) : NULL;
    s->ws = pflref_model_workspace_alloc(&pr->model, ws_batch);
    s->cluster = has_clusters ? alloc_sizes(N) : NULL;
    s->trained = alloc_sizes(N > 0 ? N : 1);
    /* FedFomo's run-time peer lists: one slot per round once any round
     * carries ε-greedy draws (schedule.h, peer_order) */
    int draws = 0;
    /*@ loop invariant 0 <= t <= T;
        loop assigns t, draws;
        loop variant T - t;
     */
    for (size_t t = 0; t < T; t++)
        draws |= schedule->rounds[t].peer_order != NULL;
    s->chosen_peers = draws ? alloc_peer_lists(T) : NULL;
    s->n_chosen = s->chosen_peers != NULL ? T : 0;
    return !(draws && s->chosen_peers == NULL) && s->trained != NULL &&
           !(has_alpha && s->alpha == NULL) && s->ws != NULL &&
           !(has_clusters && s->cluster == NULL);
}

/* Its contract is on its declaration (state.h). */
pflref_status pflref_state_alloc(pflref_state *s, const pflref_problem *pr,
                                 const pflref_algorithm *alg,
                                 const pflref_hyper *hyper,
                                 const pflref_schedule *schedule,
                                 size_t ws_batch, const double *w0,
                                 pflref_error *err)
{
    const size_t P = pr->model.P, N = pr->N;
    const int global = alg->has_global, personal = alg->has_personal;
    state_zero(s, pr, hyper, P, N);
    if (!pflref_model_blocks_inside(&pr->model))
        return pflref_error_set(err, PFLREF_EINVAL, "problem.model",
                                "the model's blocks do not lie inside its "
                                "%zu parameters", P);
    /* P ≥ 1 parameters, and N·P doubles addressable (the personal models,
     * v_i at i·P; the same bound for every algorithm) */
    int ok = P > 0 && N <= SIZE_MAX / sizeof(double) / P;
    if (ok) {
        ok = state_rest_alloc(s, pr, alg, schedule, ws_batch);
        state_arrays_alloc(s, global, personal, w0, &pr->model,
                           &hyper->split);
    }
    if (!ok || s->w0 == NULL || (global && s->w == NULL) ||
        (personal && s->v == NULL) || s->mask == NULL ||
        s->shared == NULL || s->accum == NULL || s->mix == NULL) {
        pflref_state_free(s, alg);
        return pflref_error_set(err, PFLREF_ENOMEM, NULL,
                                "out of memory allocating the run state "
                                "(P = %zu, N = %zu)", P, N);
    }
    state_arrays_init(s, &pr->model, &hyper->split, w0);
    return PFLREF_OK;
}

void pflref_chosen_peers_free(pflref_batches *b, size_t n)
{
    for (size_t t = 0; b != NULL && t < n; t++) {
        free(b[t].step_off);
        free(b[t].idx);
    }
    free(b);
}

void pflref_state_free(pflref_state *s, const pflref_algorithm *alg)
{
    pflref_chosen_peers_free(s->chosen_peers, s->n_chosen);
    if (s->extra != NULL)
        alg->work_free(s->extra);
    free(s->mix);
    free(s->w0);
    free(s->w);
    free(s->v);
    free(s->alpha);
    free(s->theta0);
    free(s->hn);
    free(s->mask);
    free(s->shared);
    free(s->accum);
    free(s->cluster);
    free(s->trained);
    pflref_model_workspace_free(s->ws);
    pflref_optim_free(s->optim);
#ifndef __FRAMAC__
    free(s->bn_own);   /* bn.aggregate = parameters_only */
#endif
}
