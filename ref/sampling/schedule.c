/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/sampling/schedule.c: the schedule of a run, i.e. which clients take
 * part in each round and which samples form each local step's minibatch;
 * its generation from seeds (its memory is in schedule_mem.c, its
 * validation in schedule_check.c).
 *
 * Reference.  H. B. McMahan, E. Moore, D. Ramage, S. Hampson, B. Agüera y
 * Arcas, "Communication-Efficient Learning of Deep Networks from
 * Decentralized Data", AISTATS 2017, arXiv:1602.05629v4, Algorithm 1:
 *   line 5  "S_t ← (random set of m clients)"          → rounds[t].clients
 *   line 11 "B ← (split P_k into batches of size B)"   → batches, split_once
 *   line 12 "for each local epoch i from 1 to E"        → train.epochs
 * Randomness is data (DESIGN.md): the schedule is written to the result and
 * a candidate replays it; docs/sampling.md gives the exact draw order.
 *
 * Symbols:
 *   T         rounds                          cfg->T, s->T
 *   N         clients                         N, s->N
 *   m         participants per round          cfg->m, rounds[t].m
 *   S_t       round t's participants          rounds[t].clients (ascending)
 *   n_i       client i's training samples     n[i]
 *   B         batch size (0 = full batch)     work->B
 *   E         local epochs                    work->epochs
 *   K         local steps                     work->steps
 *   e_global  epochs generated so far         e_global
 *
 * Generation, in this order (docs/sampling.md):
 *   for t = 0 … T−1:
 *     S_t = all clients when m = N (nothing drawn), else
 *           pflref_sampler_choose(seed = client_seed + t)
 *     for i in S_t ascending: client i's personal work when the config
 *       has one (Ditto's own batches, ditto.batches = separate: PFLlib's
 *       ptrain() runs before train()), then its local work (below)
 *   then, with a post phase, for i = 0 … N−1: client i's post work.
 *   Local work on n samples: b = min(B, n) (b = n when B = 0), nb = ⌈n/b⌉
 *   batches per epoch, the last one ragged (n − (nb−1)·b samples).
 *   Epoch e: perm = 0 … n−1; reshuffle: perm ← pflref_shuffle(perm, seed =
 *   batch_seed + e_global), e_global ← e_global + 1.  Batch k of the epoch
 *   is perm[k·b … min((k+1)·b, n) − 1], in perm's order.
 *   `epochs` E: E·nb steps, E whole epochs.  `steps` K: step s uses batch
 *   s mod nb of epoch ⌊s/nb⌋, so ⌈K/nb⌉ epochs are begun (the last one may
 *   be cut short; its permutation is still drawn and counted).
 *
 * Variant switches: order (split_once | reshuffle), sampler (gsl |
 * numpy_legacy), epochs | steps per phase.
 *
 * Sizes (saturating: SIZE_MAX stands for "overflowed", the proved
 * pflref_size_mul_sat and pflref_size_add_sat of ids.c).  Generation counts the schedule before allocating it (a first pass
 * with the same draws) and refuses, with PFLREF_ENOMEM, one that would hold
 * more than MAX_INDICES sample indices.
 *
 * Cost: T sampler calls twice (O(N) each for numpy_legacy, O(N) at most for
 * gsl) plus O(total indices); reshuffle adds one O(n_i) shuffle per epoch.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "pflref/schedule.h"
#include "sampling/kernels.h"
#include "sampling/schedule_fill.h"

/* The largest number of sample indices (and so of steps, participations,
 * rounds) a schedule may hold (schedule.h). */
#define MAX_INDICES PFLREF_SCHEDULE_MAX_INDICES

/* For the proofs below (proofs/README.md): the one fact they need of
 * ref/core/status.c, that the error setter returns the status it is given
 * (its code is not proved; it writes only *err). */
/*@ assigns *err;
    ensures \result == status;
 */
pflref_status pflref_error_set(pflref_error *err, pflref_status status,
                               const char *where, const char *fmt, ...);

/*@ logic integer sat(integer x) = x <= SIZE_MAX ? x : SIZE_MAX; */


/* ------------------------------------------------------------------------
 * Generation
 * ------------------------------------------------------------------------ */

/* The size of one client's local work on n ≥ 1 samples. */
typedef struct {
    size_t b;        /* batch size, min(B, n), n when B = 0     */
    size_t nb;       /* batches per epoch, ⌈n/b⌉                */
    size_t nsteps;   /* steps                                   */
    size_t total;    /* sample indices over all steps           */
    size_t nepochs;  /* epochs begun (permutations drawn)       */
} work_size;

/*@ requires \valid_read(w);
    requires 1 <= n;
    assigns \nothing;
    ensures 1 <= \result.b <= n;
    ensures (w->B == 0 || w->B > n) ==> \result.b == n;
    ensures (w->B != 0 && w->B <= n) ==> \result.b == w->B;
    ensures \result.nb == n / \result.b + (n % \result.b != 0 ? 1 : 0);
    ensures 1 <= \result.nb <= n;
    ensures w->epochs > 0 ==> \result.nepochs == w->epochs &&
            \result.nsteps == sat(w->epochs * \result.nb) &&
            \result.total == sat(w->epochs * n);
    ensures w->epochs == 0 ==> \result.nsteps == w->steps &&
            \result.total == sat(sat((w->steps / \result.nb) * n) +
                                 sat((w->steps % \result.nb) * \result.b)) &&
            \result.nepochs == w->steps / \result.nb +
                                (w->steps % \result.nb != 0 ? 1 : 0);
 */
static work_size work_size_of(const pflref_local_work *w, size_t n)
{
    const size_t b = (w->B == 0 || w->B > n) ? n : w->B;
    const size_t nb = n / b + (n % b != 0);
    if (w->epochs > 0)  /* E epochs: E·nb steps over E·n indices. */
        return (work_size){
            .b = b,
            .nb = nb,
            .nsteps = pflref_size_mul_sat(w->epochs, nb),
            .total = pflref_size_mul_sat(w->epochs, n),
            .nepochs = w->epochs,
        };
    /* K steps: ⌊K/nb⌋ whole epochs, then the first K mod nb batches of one
     * more, all of full size b (only batch nb−1 is ragged). */
    return (work_size){
        .b = b,
        .nb = nb,
        .nsteps = w->steps,
        .total = pflref_size_add_sat(pflref_size_mul_sat(w->steps / nb, n),
                                     pflref_size_mul_sat(w->steps % nb, b)),
        .nepochs = w->steps / nb + (w->steps % nb != 0),
    };
}

/* Check one phase's local work: exactly one of epochs and steps. */
/*@ requires \valid_read(w);
    assigns *err;
    ensures \result == PFLREF_OK ==> (w->epochs == 0) != (w->steps == 0);
 */
static pflref_status check_work(const pflref_local_work *w,
                                const char *phase, pflref_error *err)
{
    char where[PFLREF_WHERE_MAX];
    if (w->epochs == 0 && w->steps == 0) {
        snprintf(where, sizeof where, "schedule.%s.epochs", phase);
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "%s.epochs and %s.steps are both 0; give "
                                "exactly one of them", phase, phase);
    }
    if (w->epochs != 0 && w->steps != 0) {
        snprintf(where, sizeof where, "schedule.%s.steps", phase);
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "%s.epochs = %zu and %s.steps = %zu are "
                                "both nonzero; give exactly one of them",
                                phase, w->epochs, phase, w->steps);
    }
    return PFLREF_OK;
}

/* Refuse one client's work when it alone exceeds the limit. */
/*@ requires \valid_read(z);
    assigns *err;
    ensures z->total <= MAX_INDICES ==> \result == PFLREF_OK;
    ensures z->total > MAX_INDICES ==> \result == PFLREF_ENOMEM;
 */
static pflref_status check_work_size(const pflref_local_work *w,
                                     const char *phase, size_t client,
                                     size_t n, const work_size *z,
                                     pflref_error *err)
{
    if (z->total <= MAX_INDICES)
        return PFLREF_OK;
    char where[PFLREF_WHERE_MAX];
    snprintf(where, sizeof where, "schedule.%s.%s", phase,
             w->epochs > 0 ? "epochs" : "steps");
    return pflref_error_set(err, PFLREF_ENOMEM, where,
                            "%s.%s = %zu on client %zu (n = %zu samples) "
                            "needs more than %zu sample indices, the limit "
                            "of a schedule", phase,
                            w->epochs > 0 ? "epochs" : "steps",
                            w->epochs > 0 ? w->epochs : w->steps, client, n,
                            MAX_INDICES);
}

/* Alg. 1, line 5: S_t ← m clients, ascending in `clients`, the sampler's
 * order in `drawn` (may be NULL).  m = N: every client, nothing drawn. */
/*@ requires \valid_read(cfg);
    requires \valid(clients + (0 .. cfg->m - 1));
    requires drawn == \null || \valid(drawn + (0 .. cfg->m - 1));
    requires drawn == \null ||
             \separated(clients + (0 .. cfg->m - 1), drawn + (0 .. cfg->m - 1));
    requires \separated(cfg, clients + (0 .. cfg->m - 1));
    requires drawn == \null || \separated(cfg, drawn + (0 .. cfg->m - 1));
    assigns pflref_sampler_state, *err, clients[0 .. cfg->m - 1],
            drawn[0 .. cfg->m - 1];
    ensures \result == PFLREF_OK ==>
            \forall integer j; 0 <= j < cfg->m ==> clients[j] < N;
 */
/* req: fedavg.alg1.l5, pfedme.alg1.l9, ditto.alg1.l3, perfedavg.alg1.l3 */
/* req: fedalt.alg4.l3, fedsim.alg5.l3, pflego.alg1.l1, apfl.alg1.l10 */
/* req: ifca.alg1.l3 */
static pflref_status choose_round(const pflref_schedule_config *cfg,
                                  pflref_sampler *smp, size_t N, size_t t,
                                  size_t *clients, size_t *drawn,
                                  pflref_error *err)
{
    if (cfg->m == N) {
        pflref_ids_iota(clients, drawn, N);   /* proved: ids.c */
        return PFLREF_OK;
    }
    return pflref_sampler_choose(smp, cfg->client_seed + (unsigned long)t,
                                 N, cfg->m, clients, drawn, err);
}

/* The first pass: the exact number of sample indices and of epochs the
 * schedule will hold, with the same client draws as the second pass.
 * pick[0..m−1] is scratch.  Proved (proofs/README.md): every n[i] it reads
 * has i < N (the sampler's ids, or j < N), its sums saturate at SIZE_MAX
 * instead of wrapping, and on PFLREF_OK the total is within the limit. */
/*@ requires \valid_read(cfg);
    requires 1 <= cfg->m <= N;
    requires \valid_read(n + (0 .. N - 1));
    requires \forall integer i; 0 <= i < N ==> 1 <= n[i];
    requires \valid(pick + (0 .. cfg->m - 1));
    requires \valid(total) && \valid(nepochs);
    requires \separated(total, nepochs, cfg, n + (0 .. N - 1),
                        pick + (0 .. cfg->m - 1));
    requires \separated(nepochs, cfg, n + (0 .. N - 1),
                        pick + (0 .. cfg->m - 1));
    requires \separated(pick + (0 .. cfg->m - 1), cfg, n + (0 .. N - 1));
    requires \separated(err, total, nepochs, cfg, n + (0 .. N - 1),
                        pick + (0 .. cfg->m - 1));
    assigns pflref_sampler_state, *err, *total, *nepochs,
            pick[0 .. cfg->m - 1];
    ensures \result == PFLREF_OK ==> *total <= MAX_INDICES;
 */
static pflref_status count_schedule(const pflref_schedule_config *cfg,
                                    const size_t *n, size_t N,
                                    pflref_sampler *smp, size_t *pick,
                                    size_t *total, size_t *nepochs,
                                    pflref_error *err)
{
    pflref_status st = PFLREF_OK;
    *total = 0;
    *nepochs = 0;
    /* Rounds (stopping as soon as the limit is passed). */
    /*@ loop invariant 0 <= t;
        loop assigns t, st, *total, *nepochs, pflref_sampler_state, *err,
                     pick[0 .. \at(cfg->m, Pre) - 1];
     */
    for (size_t t = 0; st == PFLREF_OK && t < cfg->T &&
                       *total <= MAX_INDICES; t++) {
        const size_t trainers = cfg->train_all ? N : cfg->m;
        if (!cfg->train_all)
            st = choose_round(cfg, smp, N, t, pick, NULL, err);
        /*@ loop invariant 0 <= j;
            loop invariant st == PFLREF_OK && !cfg->train_all ==>
                           \forall integer q; 0 <= q < cfg->m ==>
                             pick[q] < N;
            loop assigns j, st, *total, *nepochs, *err;
         */
        for (size_t j = 0; st == PFLREF_OK && j < trainers; j++) {
            const size_t i = cfg->train_all ? j : pick[j];
            const work_size z = work_size_of(&cfg->train, n[i]);
            st = check_work_size(&cfg->train, "local", i, n[i], &z, err);
            *total = pflref_size_add_sat(*total, z.total);
            *nepochs = pflref_size_add_sat(*nepochs, z.nepochs);
            if (st != PFLREF_OK || !cfg->has_personal)
                continue;
            const work_size zp = work_size_of(&cfg->personal, n[i]);
            st = check_work_size(&cfg->personal, "personal", i, n[i], &zp,
                                 err);
            *total = pflref_size_add_sat(*total, zp.total);
            *nepochs = pflref_size_add_sat(*nepochs, zp.nepochs);
        }
    }
    /* The post phase. */
    /*@ loop invariant 0 <= i;
        loop assigns i, st, *total, *nepochs, *err;
     */
    for (size_t i = 0; st == PFLREF_OK && cfg->has_post && i < N &&
                       *total <= MAX_INDICES; i++) {
        const work_size z = work_size_of(&cfg->post, n[i]);
        st = check_work_size(&cfg->post, "post", i, n[i], &z, err);
        *total = pflref_size_add_sat(*total, z.total);
        *nepochs = pflref_size_add_sat(*nepochs, z.nepochs);
    }
    if (st != PFLREF_OK)
        return st;
    if (*total > MAX_INDICES)
        return pflref_error_set(err, PFLREF_ENOMEM, "schedule",
                                "the schedule would hold more than %zu "
                                "sample indices (T = %zu rounds of m = %zu "
                                "clients plus the post phase); reduce T, m "
                                "or the local work", MAX_INDICES, cfg->T,
                                cfg->m);
    return PFLREF_OK;
}

/* pflref_batches_alloc for fill_batches, with what C guarantees of a new
 * allocation: the blocks that existed (perm) stay valid, and the two new
 * ones are valid and apart from each other, from b and from perm.  WP 25
 * does not implement \fresh, so this contract is an assumption of the proof
 * of fill_batches (proofs/README.md), as calloc's and malloc's own are. */
/*@ requires \valid(b) && \valid(perm + (0 .. n - 1));
    assigns *b, *err;
    ensures \valid(perm + (0 .. n - 1));
    ensures \result == PFLREF_OK ==>
            b->nsteps == nsteps && \valid(b->step_off + (0 .. nsteps)) &&
            \valid(b->idx + (0 .. total - 1)) &&
            \separated(b->step_off + (0 .. nsteps), b->idx + (0 .. total - 1),
                       b, perm + (0 .. n - 1));
 */
static pflref_status batches_alloc_beside(pflref_batches *b, size_t nsteps,
                                          size_t total, const size_t *perm,
                                          size_t n, pflref_error *err)
{
    (void)perm;
    (void)n;
    return pflref_batches_alloc(b, nsteps, total, err);
}

/* One client's local work on n samples into b (Alg. 1, lines 11–12).
 * perm[0..n−1] is scratch; *e_global counts the epochs generated so far.
 * Proved (proofs/README.md): each call of pflref_batch_copy gets perm of n
 * entries and idx of the z.total entries allocated for it, each step's end
 * offset is written inside step_off's nsteps + 1 entries. */
/* req: fedavg.alg1.l11, fedavg.alg1.l12, fedalt.alg4.l8, fedsim.alg5.l8 */
/*@ requires \valid_read(w);
    requires 1 <= n;
    requires \valid(perm + (0 .. n - 1));
    requires \valid(b) && \valid(e_global);
    requires \separated(perm + (0 .. n - 1), b, e_global, w);
    requires \separated(b, e_global, w);
    requires \separated(err, b, e_global, w, perm + (0 .. n - 1));
    assigns *b, *err, *e_global, perm[0 .. n - 1], pflref_sampler_state;
 */
static pflref_status fill_batches(const pflref_local_work *w,
                                  pflref_batch_order order,
                                  unsigned long batch_seed,
                                  unsigned long *e_global, size_t n,
                                  size_t *perm, pflref_batches *b,
                                  pflref_error *err)
{
    const work_size z = work_size_of(w, n);
    pflref_status st = batches_alloc_beside(b, z.nsteps, z.total, perm, n,
                                            err);
    size_t off = 0;
    /*@ loop invariant 0 <= s;
        loop invariant st == PFLREF_OK ==> s <= z.nsteps;
        loop invariant 0 <= off <= z.total;
        loop invariant st == PFLREF_OK ==> b->nsteps == z.nsteps &&
                       \valid(b->step_off + (0 .. z.nsteps)) &&
                       \valid(b->idx + (0 .. z.total - 1)) &&
                       \separated(b->step_off + (0 .. z.nsteps),
                                  b->idx + (0 .. z.total - 1), b,
                                  perm + (0 .. n - 1));
        loop assigns s, st, off, perm[0 .. n - 1], *e_global, *err,
                     pflref_sampler_state,
                     b->step_off[0 .. z.nsteps], b->idx[0 .. z.total - 1];
     */
    for (size_t s = 0; st == PFLREF_OK && s < z.nsteps; s++) {
        const size_t k = s % z.nb;   /* batch k of epoch ⌊s/nb⌋ */
        if (k == 0) {
            /* A new epoch: perm = 0 … n−1, reshuffled with its own seed
             * (on failure the loop stops after this step). */
            /*@ loop invariant 0 <= q <= n;
                loop assigns q, perm[0 .. n - 1];
             */
            for (size_t q = 0; q < n; q++)
                perm[q] = q;
            if (order == PFLREF_BATCH_RESHUFFLE)
                st = pflref_shuffle(batch_seed + *e_global, perm, n, err);
            (*e_global)++;
        }
        /* Batch k = perm[k·b … min((k+1)·b, n) − 1]; the last is ragged.
         * The proved copy of ids.c stays inside idx's z.total entries. */
        const size_t lo = k * z.b;
        const size_t hi = (n - lo > z.b) ? lo + z.b : n;
        off = pflref_batch_copy(perm, n, lo, hi, b->idx, off, z.total);
        b->step_off[s + 1] = off;
    }
    return st;
}

/* The per-client sample counts: n_i ≥ 1 and within the limit. */
/*@ requires n == \null || \valid_read(n + (0 .. N - 1));
    assigns *err;
    ensures \result == PFLREF_OK ==> n != \null &&
            \forall integer i; 0 <= i < N ==> 1 <= n[i] <= MAX_INDICES;
 */
static pflref_status check_counts(const size_t *n, size_t N,
                                  pflref_error *err)
{
    if (n == NULL)
        return pflref_error_set(err, PFLREF_EINVAL, "n",
                                "the per-client sample counts are NULL");
    /*@ loop invariant 0 <= i <= N;
        loop invariant \forall integer k; 0 <= k < i ==>
                       1 <= n[k] <= MAX_INDICES;
        loop assigns i;
     */
    for (size_t i = 0; i < N; i++) {
        if (n[i] != 0 && n[i] <= MAX_INDICES)
            continue;
        char where[PFLREF_WHERE_MAX];
        snprintf(where, sizeof where, "n[%zu]", i);
        if (n[i] == 0)
            return pflref_error_set(err, PFLREF_EINVAL, where,
                                    "client %zu has no training "
                                    "samples; local work needs n >= 1",
                                    i);
        return pflref_error_set(err, PFLREF_ENOMEM, where,
                                "client %zu has n = %zu samples, over "
                                "the limit of %zu", i, n[i],
                                MAX_INDICES);
    }
    return PFLREF_OK;
}

/* The configuration's fields, in the order pflref_schedule_generate
 * documents, for N clients. */
/*@ requires \valid_read(cfg) && \separated(err, cfg);
    assigns *err;
    ensures \result == PFLREF_OK ==> 1 <= cfg->m <= N;
    ensures \result == PFLREF_OK && cfg->order == PFLREF_BATCH_RESHUFFLE ==>
            1 <= cfg->batch_seed <= PFLREF_SEED_MAX;
    ensures \result == PFLREF_OK ==> cfg->T * cfg->m <= MAX_INDICES;
 */
static pflref_status check_config(const pflref_schedule_config *cfg,
                                  size_t N, pflref_error *err)
{
    if (cfg->m == 0 || cfg->m > N)
        return pflref_error_set(err, PFLREF_EINVAL,
                                "schedule.clients_per_round",
                                "m = %zu participants per round must be in "
                                "1..N = %zu", cfg->m, N);
    if (cfg->sampler != PFLREF_SAMPLER_GSL &&
        cfg->sampler != PFLREF_SAMPLER_NUMPY_LEGACY)
        return pflref_error_set(err, PFLREF_EINVAL, "schedule.sampler",
                                "unknown sampler %d", (int)cfg->sampler);
    if (cfg->client_seed == 0 || cfg->client_seed > PFLREF_SEED_MAX)
        return pflref_error_set(err, PFLREF_EINVAL, "schedule.client_seed",
                                "client_seed = %lu must be in 1..2^32 - 1",
                                cfg->client_seed);
    if (cfg->T > 0 && cfg->T - 1 > PFLREF_SEED_MAX - cfg->client_seed)
        return pflref_error_set(err, PFLREF_EINVAL, "schedule.client_seed",
                                "client_seed = %lu: round T - 1 = %zu would "
                                "use seed client_seed + T - 1 > 2^32 - 1",
                                cfg->client_seed, cfg->T - 1);
    if (cfg->order != PFLREF_BATCH_SPLIT_ONCE &&
        cfg->order != PFLREF_BATCH_RESHUFFLE)
        return pflref_error_set(err, PFLREF_EINVAL, "schedule.batches",
                                "unknown batch order %d", (int)cfg->order);
    if (cfg->order == PFLREF_BATCH_RESHUFFLE &&
        (cfg->batch_seed == 0 || cfg->batch_seed > PFLREF_SEED_MAX))
        return pflref_error_set(err, PFLREF_EINVAL, "schedule.batch_seed",
                                "batch_seed = %lu must be in 1..2^32 - 1",
                                cfg->batch_seed);
    pflref_status st = check_work(&cfg->train, "local", err);
    if (st == PFLREF_OK && cfg->has_post)
        st = check_work(&cfg->post, "post", err);
    if (st == PFLREF_OK && cfg->has_personal)
        st = check_work(&cfg->personal, "personal", err);
    if (st != PFLREF_OK)
        return st;
    /* Every participation holds at least one index. */
    if (pflref_size_mul_sat(cfg->T, cfg->m) > MAX_INDICES)
        return pflref_error_set(err, PFLREF_ENOMEM, "schedule.rounds",
                                "T = %zu rounds of m = %zu clients exceed "
                                "the limit of %zu participations", cfg->T,
                                cfg->m, MAX_INDICES);
    return PFLREF_OK;
}

/* The first pass, then what depends on its counts: the epochs' seeds
 * batch_seed + e must stay below 2³². */
/*@ requires \valid_read(cfg);
    requires 1 <= cfg->m <= N;
    requires cfg->order == PFLREF_BATCH_RESHUFFLE ==>
             cfg->batch_seed <= PFLREF_SEED_MAX;
    requires \valid_read(n + (0 .. N - 1));
    requires \forall integer i; 0 <= i < N ==> 1 <= n[i];
    requires \valid(pick + (0 .. cfg->m - 1));
    requires \separated(pick + (0 .. cfg->m - 1), cfg, n + (0 .. N - 1));
    requires \separated(err, cfg, n + (0 .. N - 1), pick + (0 .. cfg->m - 1));
    assigns pflref_sampler_state, *err, pick[0 .. cfg->m - 1];
 */
static pflref_status check_counted(const pflref_schedule_config *cfg,
                                   const size_t *n, size_t N,
                                   pflref_sampler *smp, size_t *pick,
                                   pflref_error *err)
{
    size_t total = 0, nepochs = 0;
    pflref_status st = count_schedule(cfg, n, N, smp, pick, &total,
                                      &nepochs, err);
    if (st == PFLREF_OK && cfg->order == PFLREF_BATCH_RESHUFFLE &&
        nepochs > 0 && nepochs - 1 > PFLREF_SEED_MAX - cfg->batch_seed)
        st = pflref_error_set(err, PFLREF_EINVAL, "schedule.batch_seed",
                              "batch_seed = %lu: the schedule reshuffles "
                              "%zu epochs, whose seeds batch_seed + e would "
                              "exceed 2^32 - 1", cfg->batch_seed, nepochs);
    return st;
}

/* The allocations of the generation, with what C guarantees of a new block
 * and WP 25 cannot derive (no \fresh): valid, of the size asked, apart from
 * the blocks named by the arguments after the size (assumptions of the
 * proofs: proofs/README.md). */

/*@ requires \valid(r);
    assigns *r, *err;
    ensures \result == PFLREF_OK ==> plan_beside(r, m, f, e_global, err);
 */
static pflref_status plan_alloc_beside(pflref_round_plan *r, size_t m,
                                       fill_pass f,
                                       const unsigned long *e_global,
                                       pflref_error *err)
{
    (void)f, (void)e_global;
    return pflref_round_plan_alloc(r, m, err);
}

/*@ assigns \nothing;
    ensures \result != \null ==>
            \valid(\result + (0 .. m - 1)) &&
            beside(f, e_global, err, \result, m) &&
            \separated(\result + (0 .. m - 1), r->clients + (0 .. m - 1),
                       r->batches + (0 .. m - 1), r);
 */
static pflref_batches *personal_alloc_beside(const pflref_round_plan *r,
                                             size_t m, fill_pass f,
                                             const unsigned long *e_global,
                                             const pflref_error *err)
{
    (void)f, (void)e_global, (void)err;
    return calloc(m > 0 ? m : 1, sizeof *r->personal);
}

/*@ assigns \nothing;
    ensures \result != \null ==>
            \valid(\result + (0 .. len - 1)) &&
            \separated(\result + (0 .. len - 1), cfg, n + (0 .. N - 1), err);
 */
static size_t *ids_alloc_beside(size_t len, const pflref_schedule_config *cfg,
                                const size_t *n, size_t N,
                                const pflref_error *err)
{
    (void)cfg, (void)n, (void)N, (void)err;
    return malloc(len * sizeof(size_t));
}

/*@ assigns \nothing;
    ensures \result != \null ==>
            \valid(\result) && \result->T == T && \result->N == N &&
            \valid(\result->rounds + (0 .. T - 1)) &&
            \separated(\result, \result->rounds + (0 .. T - 1), cfg,
                       n + (0 .. N - 1), perm + (0 .. n_max - 1), err) &&
            (has_post ==> \valid(\result->post + (0 .. N - 1)) &&
               \separated(\result->post + (0 .. N - 1), \result,
                          \result->rounds + (0 .. T - 1), cfg,
                          n + (0 .. N - 1), perm + (0 .. n_max - 1), err));
 */
static pflref_schedule *schedule_alloc_beside(
    size_t T, size_t N, int has_post, const pflref_schedule_config *cfg,
    const size_t *n, const size_t *perm, size_t n_max, const pflref_error *err)
{
    (void)cfg, (void)n, (void)perm, (void)n_max, (void)err;
    return pflref_schedule_alloc(T, N, has_post);
}

/* Free ids_alloc_beside's block (free's \freeable is not WP's to check). */
/*@ assigns \nothing; */
static void ids_free(size_t *ids)
{
    free(ids);
}

/* Client i's local work into b, after its personal pass's own batches
 * into personal when there is one (PFLlib's ptrain() before train()). */
/*@ requires fill_ready(f) && fill_apart(f, e_global, err) && i < f.N;
    requires \valid(e_global) && \valid(b) && beside(f, e_global, err, b, 1);
    requires personal != \null ==> \valid(personal) &&
             \separated(personal, b) && beside(f, e_global, err, personal, 1);
    assigns *b, *personal, *err, *e_global, f.perm[0 .. f.n_max - 1],
            pflref_sampler_state;
    ensures fill_ready(f);
 */
static pflref_status fill_client(fill_pass f, size_t i,
                                 pflref_batches *personal, pflref_batches *b,
                                 unsigned long *e_global, pflref_error *err)
{
    const pflref_schedule_config *cfg = f.cfg;
    pflref_status st = PFLREF_OK;
    if (personal != NULL)
        st = fill_batches(&cfg->personal, cfg->order, cfg->batch_seed,
                          e_global, f.n[i], f.perm, personal, err);
    if (st == PFLREF_OK)
        st = fill_batches(&cfg->train, cfg->order, cfg->batch_seed,
                          e_global, f.n[i], f.perm, b, err);
    return st;
}

/* The trainers' local work, clients[j]'s into batches[j] (and personal[j]
 * when there is a personal pass). */
/*@ requires fill_ready(f) && fill_apart(f, e_global, err) && \valid(e_global);
    requires \valid_read(clients + (0 .. m - 1)) &&
             \valid(batches + (0 .. m - 1));
    requires \forall integer q; 0 <= q < m ==> clients[q] < f.N;
    requires ids_beside(f, e_global, err, clients, m) &&
             beside(f, e_global, err, batches, m) &&
             \separated(clients + (0 .. m - 1), batches + (0 .. m - 1));
    requires personal != \null ==> \valid(personal + (0 .. m - 1)) &&
             beside(f, e_global, err, personal, m) &&
             \separated(personal + (0 .. m - 1), clients + (0 .. m - 1),
                        batches + (0 .. m - 1));
    assigns *err, *e_global, f.perm[0 .. f.n_max - 1], pflref_sampler_state,
            personal[0 .. m - 1], batches[0 .. m - 1];
 */
static pflref_status fill_trainers(fill_pass f, const size_t *clients,
                                   size_t m, pflref_batches *personal,
                                   pflref_batches *batches,
                                   unsigned long *e_global, pflref_error *err)
{
    pflref_status st = PFLREF_OK;
    /*@ loop invariant 0 <= j <= m;
        loop invariant fill_ready(f);
        loop invariant \forall integer q; 0 <= q < m ==> clients[q] < f.N;
        loop assigns j, st, *err, *e_global, f.perm[0 .. f.n_max - 1],
                     pflref_sampler_state, personal[0 .. m - 1],
                     batches[0 .. m - 1];
     */
    for (size_t j = 0; st == PFLREF_OK && j < m; j++)
        st = fill_client(f, clients[j], personal != NULL ? &personal[j] : NULL,
                         &batches[j], e_global, err);
    return st;
}

/* Round t: S_t, the trainers (S_t, or everyone) with their local work
 * (proved: choose_round's ids < N make n[clients[j]] a count ≤ n_max). */
/*@ requires fill_ready(f) && fill_apart(f, e_global, err);
    requires \valid(e_global) && \valid(r);
    requires \separated(r, e_global, f.cfg, f.n + (0 .. f.N - 1),
                        f.perm + (0 .. f.n_max - 1), err);
    assigns *r, *err, *e_global, f.perm[0 .. f.n_max - 1],
            pflref_sampler_state;
 */
static pflref_status fill_round(fill_pass f, size_t t, pflref_round_plan *r,
                                unsigned long *e_global, pflref_error *err)
{
    const pflref_schedule_config *cfg = f.cfg;
    const size_t trainers = cfg->train_all ? f.N : cfg->m;
    pflref_status st = plan_alloc_beside(r, trainers, f, e_global, err);
    if (st == PFLREF_OK)
        st = choose_round(cfg, f.smp, f.N, t, r->selected, r->drawn, err);
    if (st != PFLREF_OK)
        return st;
    /* S_t is the sampled set; the trainers are S_t, or everyone */
    size_t *clients = r->clients;
    const size_t *selected = r->selected;
    pflref_batches *batches = r->batches;
    r->n_selected = cfg->m;
    /*@ loop invariant 0 <= j <= trainers;
        loop invariant \forall integer q; 0 <= q < j ==> clients[q] < f.N;
        loop assigns j, clients[0 .. trainers - 1];
     */
    for (size_t j = 0; j < trainers; j++)
        clients[j] = cfg->train_all ? j : selected[j];
    pflref_batches *personal = NULL;
    if (cfg->has_personal) {
        personal = personal_alloc_beside(r, trainers, f, e_global, err);
        r->personal = personal;
        if (personal == NULL)
            return pflref_error_set(err, PFLREF_ENOMEM, NULL, "out of memory");
    }
    return fill_trainers(f, clients, trainers, personal, batches, e_global,
                         err);
}

/* The second pass, the same draws as the first: rounds, participants
 * ascending with their local work, then the post phase by client. */
/*@ requires fill_ready(f) && \valid(s) && s->T == f.cfg->T && s->N == f.N;
    requires \valid(s->rounds + (0 .. s->T - 1));
    requires \separated(s, s->rounds + (0 .. s->T - 1), f.cfg,
                        f.n + (0 .. f.N - 1), f.perm + (0 .. f.n_max - 1), err);
    requires f.cfg->has_post ==> \valid(s->post + (0 .. f.N - 1)) &&
             \separated(s->post + (0 .. f.N - 1), s,
                        s->rounds + (0 .. s->T - 1), f.cfg, f.n + (0 .. f.N - 1),
                        f.perm + (0 .. f.n_max - 1), err);
    assigns *err, f.perm[0 .. f.n_max - 1], pflref_sampler_state,
            s->rounds[0 .. s->T - 1], s->post[0 .. f.N - 1];
 */
static pflref_status fill_schedule(fill_pass f, pflref_schedule *s,
                                   pflref_error *err)
{
    const pflref_schedule_config *cfg = f.cfg;
    pflref_round_plan *rounds = s->rounds;
    pflref_batches *post = s->post;
    unsigned long e_global = 0;   /* epochs generated so far */
    pflref_status st = PFLREF_OK;
    const size_t T = cfg->T;
    /*@ loop invariant 0 <= t <= T;
        loop invariant fill_ready(f);
        loop assigns t, st, *err, e_global, f.perm[0 .. f.n_max - 1],
                     pflref_sampler_state, rounds[0 .. T - 1];
     */
    for (size_t t = 0; st == PFLREF_OK && t < T; t++)
        st = fill_round(f, t, &rounds[t], &e_global, err);
    /*@ loop invariant 0 <= i <= f.N;
        loop invariant fill_ready(f);
        loop assigns i, st, *err, e_global, f.perm[0 .. f.n_max - 1],
                     pflref_sampler_state, post[0 .. f.N - 1];
     */
    for (size_t i = 0; st == PFLREF_OK && cfg->has_post && i < f.N; i++)
        st = fill_batches(&cfg->post, cfg->order, cfg->batch_seed, &e_global,
                          f.n[i], f.perm, &post[i], err);
    return st;
}

/* The caller's part: the records it passes, apart from one another (as
 * pflref_schedule_validate's).  Everything else is tested here. */
/*@ requires cfg == \null || \valid_read(cfg);
    requires n == \null || \valid_read(n + (0 .. N - 1));
    requires out == \null || \valid(out);
    requires err == \null || \valid(err);
    requires \separated(out, cfg, n + (0 .. N - 1), err);
 */
pflref_status pflref_schedule_generate(const pflref_schedule_config *cfg,
                                       const size_t *n, size_t N,
                                       pflref_schedule **out,
                                       pflref_error *err)
{
    /* Test the input parameters. */
    if (out == NULL)
        return pflref_error_set(err, PFLREF_EINVAL, "out",
                                "the output pointer is NULL");
    *out = NULL;
    if (cfg == NULL)
        return pflref_error_set(err, PFLREF_EINVAL, "cfg",
                                "the schedule configuration is NULL");
    if (N == 0)
        return pflref_error_set(err, PFLREF_EINVAL, "N",
                                "a schedule needs at least one client");
    pflref_status st;
    if ((st = check_counts(n, N, err)) || (st = check_config(cfg, N, err)))
        return st;

    /* Count the schedule (first pass), then check what depends on it. */
    pflref_schedule *s = NULL;
    size_t *perm = NULL;
    size_t *pick = ids_alloc_beside(cfg->m, cfg, n, N, err);
    pflref_sampler *smp = pflref_sampler_alloc(cfg->sampler, N);
    if (pick == NULL || smp == NULL)
        st = pflref_error_set(err, PFLREF_ENOMEM, NULL, "out of memory");
    if (st == PFLREF_OK)
        st = check_counted(cfg, n, N, smp, pick, err);

    /* Allocate: the scratch permutation (largest n) and the schedule. */
    size_t n_max = 0;
    if (st == PFLREF_OK) {
        /*@ loop invariant 0 <= i <= N;
            loop invariant \forall integer k; 0 <= k < i ==> n[k] <= n_max;
            loop assigns i, n_max;
         */
        for (size_t i = 0; i < N; i++)
            n_max = n[i] > n_max ? n[i] : n_max;
        perm = ids_alloc_beside(n_max, cfg, n, N, err);
        s = schedule_alloc_beside(cfg->T, N, cfg->has_post, cfg, n, perm,
                                  n_max, err);
        if (perm == NULL || s == NULL)
            st = pflref_error_set(err, PFLREF_ENOMEM, NULL, "out of memory");
    }

    /* Fill (second pass, the same draws). */
    const fill_pass f = {.cfg = cfg, .n = n, .N = N, .smp = smp,
                         .perm = perm, .n_max = n_max};
    if (st == PFLREF_OK)
        st = fill_schedule(f, s, err);
    if (st == PFLREF_OK) {
        *out = s;
        s = NULL;
    }
    pflref_schedule_free(s);
    pflref_sampler_free(smp);
    ids_free(perm);
    ids_free(pick);
    return st;
}
