/* SPDX-License-Identifier: GPL-3.0-or-later */
/* pflref/schedule.h: which clients take part in each round and which
 * samples form each local step's minibatch.
 *
 * Randomness is data: a schedule is either generated here from seeds or
 * given in the spec, and it is always written to the result, so another
 * implementation replays the same choices without reproducing pflref's RNG.
 *
 * Shapes.  A pflref_batches is one client's sequence of local steps; step s
 * uses the samples idx[step_off[s] .. step_off[s+1]−1].  A round plan lists
 * the round's participants in ascending id with one pflref_batches each, and
 * the subset of them the server aggregates (all of them, except when every
 * client trains and only the sampled ones are aggregated: train_all).
 * `post` holds one pflref_batches per client for the phase after training
 * (fine-tuning), or is NULL.  A plan's `personal`, when not NULL, holds a
 * second pflref_batches per participant: the steps of Ditto's personal
 * pass when it draws its own batches (ditto.batches = separate, PFLlib's
 * ptrain() over -pls epochs of its own loader).
 *
 * Generation (docs/sampling.md gives the draw order):
 *   clients   m = N: all clients, nothing drawn; else the sampler with seed
 *             client_seed + t for round t = 0, 1, …
 *   batches   split_once: the samples 0..n−1 in index order cut into batches
 *             of B (B = 0: one full batch), the ragged last batch kept; the
 *             same split every epoch (McMahan et al., Alg. 1, "split P_k into
 *             batches of size B" once).  reshuffle: every epoch first
 *             permutes 0..n−1 with pflref_shuffle, seed batch_seed + e_global,
 *             where e_global counts epochs over the whole schedule
 *             (rounds ascending, participants ascending, epochs ascending,
 *             then the post phase by client).
 *   steps     local work is `epochs` full passes, or `steps` minibatch steps
 *             taken cyclically through consecutive epochs (exactly one of
 *             the two is nonzero).
 *   personal  with has_personal, each participant's personal work is drawn
 *             just before its local work (PFLlib's ptrain() before
 *             train()), into the plan's `personal`.
 */
#ifndef PFLREF_SCHEDULE_H
#define PFLREF_SCHEDULE_H

#include <stddef.h>
#include "status.h"
#include "sampler.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most sample indices (and so steps, participations, rounds) a
 * schedule may hold: 2²⁶ indices take 512 MiB as size_t, with as much again
 * for step offsets, far beyond any run a reference is meant for; a larger
 * request (steps = 10⁹, say) is taken to be a mistake and refused with
 * PFLREF_ENOMEM before anything is allocated. */
#define PFLREF_SCHEDULE_MAX_INDICES ((size_t)1 << 26)

typedef struct {
    size_t nsteps;
    size_t *step_off;  /* nsteps + 1 offsets into idx; step_off[0] = 0 */
    size_t *idx;       /* step_off[nsteps] sample indices               */
} pflref_batches;

#ifndef __FRAMAC__   /* hidden from Frama-C as the dropout layer (model.h) */
/* The dropout masks of one round (the spec's rounds[t].dropout;
 * docs/models.md, "Dropout"), for a model with L ≥ 1 dropout layers:
 * participant j's training passes are q = pass_off[j] .. pass_off[j+1]−1,
 * in the order its algorithm makes them; pass q's masks, one per dropout
 * layer in layer order (layer ℓ named name[ℓ], width[ℓ] input entries per
 * sample), each nb[q] × width[ℓ] row-major, are mask[mask_off[q] ..
 * mask_off[q+1]−1], each 0 or 1.  used[j] counts the passes the run took
 * (ref/engine/dropout.c). */
typedef struct {
    size_t L;
    char **name;           /* L layer names                               */
    size_t *width;         /* L                                           */
    size_t *pass_off;      /* m + 1                                       */
    size_t *nb;            /* pass_off[m]                                 */
    size_t *mask_off;      /* pass_off[m] + 1                             */
    unsigned char *mask;   /* mask_off[pass_off[m]]                       */
} pflref_dropout_masks;
#endif

typedef struct {
    size_t m;              /* participants (they train)                 */
    size_t *clients;       /* m ids, strictly ascending                 */
    pflref_batches *batches; /* m: batches[j] belongs to clients[j]     */
    size_t n_selected;     /* clients the server aggregates, S_t        */
    size_t *selected;      /* n_selected ids, strictly ascending, a
                              subset of clients (= clients unless only
                              some of the trainers are aggregated, as in
                              pFedMe where all N train and S are
                              sampled)                                  */
    size_t *drawn;         /* n_selected ids: selected in the order the
                              sampler drew them                         */
    pflref_batches *peers; /* FedFomo's downloads S_i^t, or NULL (none):
                              peers->nsteps = m, and participant
                              clients[j]'s peer ids are peers->idx
                              [step_off[j] .. step_off[j+1]−1], a list
                              that may be empty (the spec's "peers")    */
    pflref_batches *personal; /* Ditto's personal pass with its own
                              batches (ditto.batches = separate), or NULL:
                              m lists, personal[j] belongs to clients[j]
                              (the spec's "personal")                   */
    size_t n_personal;     /* personal's lists when not m, else 0:
                              FedALA under fedala.ala_clients = all holds
                              N (the participants' m, then the other
                              clients' in ascending id)                 */
    pflref_batches *peer_order; /* FedFomo's ε-greedy draws, or NULL: for
                              participant j a random order π of the
                              candidate ids (peer_order->idx[step_off[j]
                              .. step_off[j+1]−1]; the spec's
                              "peer_draws"[j].order)                    */
    size_t *peer_u_off;    /* m + 1 offsets into peer_u (with peer_order) */
    double *peer_u;        /* participant j's uniforms u_1..u_M in [0, 1):
                              peer_u[peer_u_off[j] .. peer_u_off[j+1]−1]
                              ("peer_draws"[j].u; M = their count)      */
    size_t n_draws;        /* FedProx's K draws of the round (0: none)   */
    size_t *draws;         /* n_draws ids in draw order, repetitions
                              allowed (FedProx's S_t under
                              fedprox.sampling = paper: the spec's
                              "draws"), or NULL                          */
#ifndef __FRAMAC__
    pflref_dropout_masks *dropout; /* the round's dropout masks (the
                              spec's "dropout"), or NULL                  */
    pflref_dropout_masks *estimate_dropout; /* IFCA under
                              ifca.estimate_mode = train: participant j's
                              k passes of its estimate at the round's
                              start, one per cluster model θ_0 .. θ_{k−1}
                              (the spec's "estimate_dropout"), or NULL    */
    pflref_dropout_masks *partition_dropout; /* IFCA alike: client i's k
                              passes (i = 0 .. N−1) of the reported
                              assignment after the round's server update
                              (the spec's "partition_dropout"), or NULL   */
    int has_first_upload;  /* 1: first_upload is given (the spec's
                              "first_upload"); 0: the algorithm's default,
                              the lowest uploader id                      */
    size_t first_upload;   /* the client whose upload the server receives
                              first (PFLlib: uploaded_models[0], whose
                              running statistics the new global takes
                              under bn.aggregate = parameters_only;
                              ref/engine/bn_own.c), one of selected       */
#endif
} pflref_round_plan;

typedef struct {
    size_t T;                  /* rounds                                */
    size_t N;                  /* clients                               */
    pflref_round_plan *rounds; /* T                                     */
    pflref_batches *post;      /* N, or NULL when there is no post phase */
#ifndef __FRAMAC__
    pflref_dropout_masks *post_dropout; /* the post phase's dropout masks,
                              N lists (client i's passes), or NULL (the
                              spec's "post_dropout")                      */
    pflref_dropout_masks *init_partition_dropout; /* IFCA under
                              ifca.estimate_mode = train: client i's k
                              passes of the reported assignment at the
                              initial models θ_j^(0), before round 0, N
                              lists, or NULL (the spec's
                              "init_partition_dropout")                   */
#endif
} pflref_schedule;

/* The shapes above in ACSL, for the proofs of ref/sampling/schedule_check.c
 * (proofs/README.md): every array holds as many entries as its count says.
 * This is what a caller of pflref_schedule_validate must guarantee and C
 * cannot test at run time; everything else the validation tests.
 *
 * predicate batches_shape: b readable; step_off, when present, holds
 *   nsteps + 1 offsets; idx, when present with step_off, step_off[nsteps]
 *   indices.
 * predicate plan_shape: r readable; clients and batches, when present, m
 *   entries (each batches[j] of batches_shape; personal likewise); selected
 *   and drawn, when present, n_selected entries.
 * predicate plan_checked: r readable, its m participant ids each < N,
 *   their m batch lists readable and its n_selected selected ids
 *   readable: what pflref_schedule_validate's
 *   acceptance makes of every round plan (proved), and what an
 *   algorithm's round relies on (round_plan in ref/engine/engine.h).
 * predicate schedule_shape: s readable; rounds, when present, T plans of
 *   plan_shape; post, when present, N batches of batches_shape. */
/*@ predicate batches_shape{L}(pflref_batches *b) =
      \valid_read(b) &&
      (b->step_off != \null ==>
         \valid_read(b->step_off + (0 .. b->nsteps)) &&
         (b->idx != \null ==>
            \valid_read(b->idx + (0 .. b->step_off[b->nsteps] - 1))));
    predicate plan_shape{L}(pflref_round_plan *r) =
      \valid_read(r) &&
      (r->clients != \null ==> \valid_read(r->clients + (0 .. r->m - 1))) &&
      (r->selected != \null ==>
         \valid_read(r->selected + (0 .. r->n_selected - 1))) &&
      (r->drawn != \null ==>
         \valid_read(r->drawn + (0 .. r->n_selected - 1))) &&
      (r->batches != \null ==>
         \forall integer j; 0 <= j < r->m ==> batches_shape(r->batches + j)) &&
      (r->personal != \null ==>
         \forall integer j; 0 <= j < r->m ==> batches_shape(r->personal + j));
    predicate plan_checked{L}(pflref_round_plan *r, integer N) =
      \valid_read(r) && \valid_read(r->clients + (0 .. r->m - 1)) &&
      \valid_read(r->selected + (0 .. r->n_selected - 1)) &&
      \forall integer j; 0 <= j < r->m ==>
        r->clients[j] < N && \valid_read(r->batches + j);
    predicate schedule_shape{L}(pflref_schedule *s) =
      \valid_read(s) &&
      (s->rounds != \null ==>
         \forall integer t; 0 <= t < s->T ==> plan_shape(s->rounds + t)) &&
      (s->post != \null ==>
         \forall integer i; 0 <= i < s->N ==> batches_shape(s->post + i));
 */

typedef enum {
    PFLREF_BATCH_SPLIT_ONCE = 0,
    PFLREF_BATCH_RESHUFFLE = 1
} pflref_batch_order;

const char *pflref_batch_order_name(pflref_batch_order order);

/* Local work of one phase: `epochs` passes or `steps` steps (exactly one
 * nonzero), batch size B (0 = full batch). */
typedef struct {
    size_t epochs;
    size_t steps;
    size_t B;
} pflref_local_work;

typedef struct {
    size_t T;                      /* rounds ≥ 0                          */
    size_t m;                      /* participants per round, 1 ≤ m ≤ N   */
    pflref_sampler_kind sampler;
    unsigned long client_seed;     /* 1 ≤ seed; seed + T − 1 ≤ 2³² − 1    */
    pflref_batch_order order;
    unsigned long batch_seed;      /* used by reshuffle only              */
    pflref_local_work train;       /* each participant, each round        */
    int train_all;                 /* every client trains each round and
                                      the m sampled ones are `selected`
                                      (pFedMe's paper reading); else the
                                      m sampled clients are the
                                      participants                       */
    int has_post;                  /* generate the post phase             */
    pflref_local_work post;        /* each client once, after training    */
    int has_personal;              /* generate personal batch lists       */
    pflref_local_work personal;    /* each participant's personal pass
                                      (Ditto, PFLlib's -pls), drawn before
                                      its local work                      */
    size_t peers;                  /* FedFomo's M: models each participant
                                      downloads, chosen at run time (0:
                                      none, no draws)                     */
    unsigned long peer_seed;       /* the mt19937 seed of their draws     */
} pflref_schedule_config;

/* Generate a schedule for N clients with n[i] samples each.
 * *out is allocated here; free it with pflref_schedule_free. */
pflref_status pflref_schedule_generate(const pflref_schedule_config *cfg,
                                       const size_t *n, size_t N,
                                       pflref_schedule **out,
                                       pflref_error *err);

/* Allocate an empty schedule for T rounds and N clients (rounds zeroed;
 * post allocated and zeroed when has_post).  Used by readers that fill a
 * schedule from a spec.  Returns NULL when memory is short. */
pflref_schedule *pflref_schedule_alloc(size_t T, size_t N, int has_post);

/* Allocate the arrays of one pflref_batches for nsteps steps holding
 * total indices (step_off zeroed).  Returns PFLREF_ENOMEM on failure. */
pflref_status pflref_batches_alloc(pflref_batches *b, size_t nsteps,
                                   size_t total, pflref_error *err);

/* Allocate the arrays of a round plan for m participants (n_selected = m;
 * selected and drawn have room for m). */
pflref_status pflref_round_plan_alloc(pflref_round_plan *r, size_t m,
                                      pflref_error *err);

void pflref_schedule_free(pflref_schedule *s);

#ifndef __FRAMAC__
/* Free a round's dropout masks (NULL: nothing). */
void pflref_dropout_masks_free(pflref_dropout_masks *d);
#endif

/* Check a schedule against N clients with n[i] samples: ids in range and
 * strictly ascending, drawn a permutation of clients, step offsets
 * nondecreasing, every batch non-empty, every index < n[client].  Messages
 * name the path, e.g. "schedule.rounds[3].clients[1]". */
pflref_status pflref_schedule_validate(const pflref_schedule *s,
                                       const size_t *n, size_t N,
                                       pflref_error *err);

/* The guards every id and index of a schedule passes (ref/sampling/ids.c,
 * proved with Frama-C WP against their ACSL contracts: proofs/README.md).
 *
 * pflref_ids_first_bad: the first position j < len at which ids[j] ≥ bound
 * or ids[j] ≤ ids[j−1] (ids not strictly ascending below bound), or len
 * when there is none.
 * pflref_index_first_out_of_range: the first j < len with idx[j] ≥ n, or
 * len when there is none. */
/*@ requires 0 <= len;
    requires \valid_read(ids + (0 .. len - 1));
    assigns \nothing;
    ensures 0 <= \result <= len;
    ensures \forall integer j; 0 <= j < \result ==> ids[j] < bound;
    ensures \forall integer j; 0 < j < \result ==> ids[j - 1] < ids[j];
    ensures \result < len ==>
            ids[\result] >= bound ||
            (\result > 0 && ids[\result] <= ids[\result - 1]);
 */
size_t pflref_ids_first_bad(const size_t *ids, size_t len, size_t bound);
/*@ requires 0 <= len;
    requires \valid_read(idx + (0 .. len - 1));
    assigns \nothing;
    ensures 0 <= \result <= len;
    ensures \forall integer j; 0 <= j < \result ==> idx[j] < n;
    ensures \result < len ==> idx[\result] >= n;
 */
size_t pflref_index_first_out_of_range(const size_t *idx, size_t len,
                                       size_t n);

#ifdef __cplusplus
}
#endif
#endif
