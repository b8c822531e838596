/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/algorithms/fedala.c: FedALA, Algorithm 1 and the ALA module of
 *   J. Zhang, Y. Hua, H. Wang, T. Song, Z. Xue, R. Ma, H. Guan,
 *   "FedALA: Adaptive Local Aggregation for Personalized Federated
 *   Learning", AAAI 2023, arXiv 2212.01197v4.
 *
 * The box (Alg. 1, "FedALA"), as the authors print it in their AAAI 2023
 * oral slides (TsingZ0/FedALA 044f761faf99 FedALAOral.pdf p. 47; the
 * paper's own text was not reached), as trace/fedala.req numbers it:
 *   l. 1   the server sends Θ⁰ to every client: Θ_i⁰ ← Θ⁰
 *   l. 2   W_i^p ← 1 for every client i
 *   l. 3   for t = 1 … T:
 *   l. 4-5   the server samples I^t by ρ and sends Θ^{t−1} to them
 *   l. 6     for client i ∈ I^t:
 *   l. 7       it samples s% of its data, D_i^s
 *   l. 8-11    if t = 2: while W_i^p has not converged, Eq. (5), then σ
 *   l. 12-14   else if t > 2: Eq. (5) once, then σ
 *   l. 15      Θ̂_i ← Θ_i^{t−1} + (Θ^{t−1} − Θ_i^{t−1}) ⊙ W_i   (Eq. (4),
 *              the top p layers; the lower layers take Θ^{t−1})
 *   l. 16      Θ_i^t ← Θ̂_i − α ∇L(Θ̂_i; D_i): local training from Θ̂_i
 *   l. 17      it sends Θ_i^t to the server
 *   l. 18    Θ^t ← Σ_{i∈I^t} (k_i / Σ_{j∈I^t} k_j) Θ_i^t
 *   l. 19  return Θ̂_1 … Θ̂_N: the reported personal models (final.v and
 *          the "personalized" evaluation) are the Θ̂_i, each client's
 *          latest l. 15 output (before that round's local training), not
 *          the trained Θ_i^T; see e) below
 * Eq. (5) with σ: W_i ← clip_[0,1](W_i − η (∇_{Θ̂_i} L(Θ̂_i; D_i^s)) ⊙
 * (Θ − Θ_i)), the chain rule through Eq. (4), one step per batch of
 * D_i^s, Θ̂_i re-formed after each step.
 *
 * pflref's reading (each pinned from the paper, then the code):
 *   a) D_i^s is data: the round's `personal` list of client i holds one
 *      pass over D_i^s in batches (ALA.py:74: a DataLoader over the slice,
 *      the client's batch size, drop_last = False, no shuffle), exactly
 *      ⌊s n_i/100⌋ indices; the start phase repeats that pass.
 *   b) "until convergence" is the code's rule (ALA.py:142-153): after
 *      each pass the loss of its last batch (before that batch's step) is
 *      recorded; the start phase stops once more than k are recorded and
 *      the population std of the last k is below the threshold, or after
 *      max_epochs passes (the code has no cap).
 *   c) the start stage is the round t = 2 (s->t = 1), l. 8; every later
 *      ALA makes one pass, a client's first included (l. 12); ALA runs
 *      from the second round on (in the first Θ_i = Θ = Θ⁰, so Θ̂_i = Θ⁰
 *      whatever W_i).
 *   d) p counts layers from the output (a layer's weight and bias
 *      together); W_i covers their entries, initialised to ones.
 *   e) l. 19 returns Θ̂_i, defined by the box for the clients of I^T only;
 *      here every client's latest Θ̂_i: for a client of the last round
 *      (every client under fedala.ala_clients = all) that round's, for
 *      another the Θ̂_i of the last round it ran ALA in, and Θ_i⁰ = Θ⁰
 *      (l. 1) for a client that never did (no ALA runs in the first
 *      round, where Θ̂_i = Θ_i = Θ⁰ anyway).  Under fedala.skip =
 *      sum_first a returning ALA leaves Θ̂_i = Θ_i^{t−1} (ALA.py:82 leaves
 *      the model as it is).  The authors' server (serverALA.py:45-50) and
 *      PFLlib's (serverala.py:26-31) evaluate the clients' models right
 *      after send_models, i.e. after ALA and before training, so they
 *      report Θ̂_i too: no code reports Θ_i^T, and there is no switch.
 *      The trained Θ_i (ALA's Θ_i^{t−1} in the next round) is FedALA's
 *      own state (ws->local); the state's v_i holds Θ̂_i.
 *
 * Symbols:  Θ ↔ s->w (P)   Θ^{t−1} ↔ ws->theta_t   Θ_i ↔ ws->local + i·P
 *           Θ̂_i ↔ ws->theta_hat (client i's latest: s->v + i·P)
 *           Θ − Θ_i ↔ ws->diff   W_i ↔ ws->W + i·P
 *           η ↔ fedala.eta   α ↔ hyper->eta   s ↔ fedala.s   p ↔ fedala.p
 *           D_i^s ↔ plan->personal[j]   k_i ↔ clients[i].train.n
 *
 * Switches (the paper's reading first; TsingZ0/FedALA a7a9b2134285,
 * presets official and pfllib, which TsingZ0/PFLlib d832e76f6a23 repeats):
 *   fedala.skip    first_round: ALA from the second round | sum_first:
 *                  ALA returns at once (no overwrite of the lower layers,
 *                  W_i and the start phase untouched) when the first
 *                  block's Σ_p (Θ − Θ_i)_p = 0 (ALA.py:82: a sum, so
 *                  differences that cancel count as none)
 *   fedala.p_unit  layers | tensors: p counts parameter tensors, 0 = all
 *                  (ALA.py:86, :95, params[-layer_idx:])
 *   fedala.start   round2: the start stage in the round t = 2 only (l. 8,
 *                  l. 12) | own: in the client's first ALA, whatever the
 *                  round (ALA.py:52, :155: each client's start_phase flag)
 *   fedala.ala_clients
 *                  participants: ALA on the round's participants, each
 *                  just before its local training (the box's l. 6-16) |
 *                  all: ALA on every client, ascending id, before any
 *                  training of the round (PFLlib d832e76f6a23
 *                  serverala.py:73-74: send_models calls
 *                  local_initialization, i.e. ALA.py's
 *                  adaptive_local_aggregation, on every client of
 *                  self.clients; TsingZ0/FedALA serverALA.py:93-94 does
 *                  the same).  A client outside the round then changes
 *                  exactly what a participant's ALA changes: Θ_i ← Θ̂_i
 *                  (ALA.py:86-87 lower layers := Θ^{t−1}, :157-158 the
 *                  range := Θ_i + (Θ − Θ_i) ⊙ W_i), W_i learned, and its
 *                  start phase spent (ALA.py:155); its next ALA forms
 *                  Θ − Θ_i from that Θ̂_i.  Its D_i^s is schedule data:
 *                  under all, a round's `personal` holds N lists: the
 *                  participants' first (personal[j] is clients[j]'s, as
 *                  under participants), then those of the clients outside
 *                  the round, ascending id (plan->n_personal = N; the
 *                  spec reader checks the count, check_samples the count
 *                  again and the sizes and indices; a generated
 *                  schedule, whose lists are the participants' only, is
 *                  refused unless every client takes part).  The same run as
 *                  participants whenever every client takes part.
 *   fedala.ala_mode
 *                  train: the passes in training mode | pfllib: in the
 *                  mode PFLlib leaves the model in (fedala.eval_gap = g,
 *                  its -eg, default 1, main.py:420: the rounds 0, g, 2g,
 *                  ... evaluate): evaluation mode, from the second round
 *                  on, for a client whose last training came before the
 *                  last evaluation (g = 1: that did not train in the
 *                  previous round; serverala.py:26-31 evaluate() after
 *                  send_models; clientbase.py:84, :126 model.eval();
 *                  clientala.py:23 model.train(); ALA.py:91 deepcopy keeps
 *                  the mode), training mode otherwise.  The same run as
 *                  train without batch normalisation and dropout, or when
 *                  every client trains every round.
 *
 * Batch normalisation (a model with running statistics r_μ, r_v, which
 * are buffers, not parameters(); docs/algorithms/fedala.md): FedALA takes
 * it under bn.aggregate = parameters_only only (presets official, pfllib
 * and pfllib_run set it), the authors' and PFLlib's reading:
 *   - ALA reads and writes parameters() only (ALA.py:78-79, :86-87,
 *     :158-159): W_i covers parameter entries, p_unit = tensors counts
 *     parameter tensors (params[-layer_idx:]), the layers of p are those
 *     holding parameters; Θ̂_i's r_μ, r_v are Θ_i's own (the client's
 *     model keeps its buffers; Θ^{t−1}'s are never read by a client);
 *   - the weight-learning passes run model_t = deepcopy(local_model)
 *     (ALA.py:91) in training mode (the client's model was left in
 *     train() by its clientala.py:23 train()): each batch normalises with
 *     its own statistics, so the gradient of Eq. (5) never reads r_μ,
 *     r_v; the statistics those passes move are model_t's, discarded
 *     with it (only its parameters are copied back, ALA.py:158-159);
 *     under fedala.ala_mode = pfllib a client that did not train in the
 *     previous round was evaluated since (serverala.py:26-31 evaluate()
 *     after send_models, clientbase.py:84, :126 eval()) and its passes
 *     run in evaluation mode: each batch normalises with Θ̂_i's r_μ, r_v
 *     (Θ_i's own), held fixed, the gradient through the affine
 *     normalisation only (pflref_model_grad_eval);
 *   - l. 16's local training moves Θ_i's r_μ, r_v from Θ̂_i's (the
 *     client's own) at each step (pflref_bn_running_move, bn.running);
 *   - l. 18 averages parameters() only; Θ^t's r_μ, r_v are the first
 *     participant's (serverALA.py:118 / serverbase.py:141:
 *     deepcopy(uploaded_models[0])), which "global" evaluates with.
 * Under bn.aggregate = average such a model is refused: ALA weighs
 * parameters(), and a state_dict average has no reading in the code.
 *
 * State: Θ and the reported Θ̂_i (v_i) in the state; Θ_i, W_i and whether
 * client i's start phase is done in the work struct (W_i reported per participant as the NOTE
 * "W_i"; `check --resync` is refused, fedala_resync_gap).
 * Trace: per participant NOTE "ala_epochs" (the passes; 0 when ALA did
 * nothing), NOTE "W_i" (P: 1 off the ALA range), then "theta_i"
 * (CLIENT_BEGIN = Θ̂_i, STEP, CLIENT_END); SERVER "w".  Under
 * fedala.ala_clients = all: first, for every client ascending, NOTE
 * "ala_epochs" and "W_i", and for a client outside the round NOTE
 * "theta_hat" (its new Θ_i = Θ̂_i); then the participants' "theta_i".
 * Final "v": every client's latest Θ̂_i (l. 19; e) above).
 * Determinism: participants ascending, batches in list order.
 * Cost per round: Σ_{i∈I^t} (ALA passes × |D_i^s| + local steps) gradients.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "algorithms/algorithms.h"
#include "core/mca_decide.h"
#include "engine/work.h"
#include "engine/bn_own.h"

static const char *const W_LINE =
    "Eq. (5): W_i ← clip_[0,1](W_i − η ∇_{Θ̂_i} L(Θ̂_i; b) ⊙ (Θ − Θ_i))";
static const char *const EPOCH_LINE =
    "Alg. 1 l. 8-14: passes over D_i^s (start phase: until the std of the "
    "last k losses < threshold)";
static const char *const LOCAL_LINE =
    "Alg. 1 l. 16: Θ_i ← Θ_i − α ∇L(Θ_i; b), from Θ̂_i";
static const char *const HAT_LINE =
    "Alg. 1 l. 15 on a client outside the round (fedala.ala_clients = all): "
    "Θ_i ← Θ̂_i";
static const char *const SERVER_LINE =
    "Alg. 1 l. 18: Θ^t ← Σ_{i∈I^t} (k_i/Σ_j k_j) Θ_i^t";

/* ws->range's values: below ALA's range (Θ^{t−1}'s), in it (Eq. (4)),
 * a running statistic (Θ_i's own: ALA touches parameters() only). */
enum { RANGE_BELOW = 0, RANGE_IN = 1, RANGE_BUFFER = 2 };

/* FedALA's work buffers (zero-filled). */
typedef struct {
    pflref_work list;        /* the allocations (ref/engine/work.h)        */
    double *theta_t;         /* P: Θ^{t−1}, the round-start global model   */
    double *theta_hat;       /* P: Θ̂_i                                    */
    double *local;           /* N×P: Θ_i, each client's trained model      */
    double *diff;            /* P: Θ^{t−1} − Θ_i                           */
    double *W;               /* N×P: W_i (1 off the ALA range)             */
    double *g;               /* P: a batch gradient                        */
    double *losses;          /* max_epochs: the start phase's losses       */
    unsigned char *range;    /* P: RANGE_* (ALA's range, below it, r_μ/r_v) */
    unsigned char *started;  /* N: 1 = client i's start phase is done      */
    size_t *trained;         /* N: 1 + the last round client i trained in,
                                0 = never (fedala.ala_mode = pfllib)     */
} fedala_work;

static void *fedala_work_alloc(const pflref_problem *problem,
                               const pflref_hyper *hyper)
{
    const size_t P = problem->model.P, N = problem->N;
    fedala_work *ws = calloc(1, sizeof *ws);
    if (ws == NULL)
        return NULL;
    ws->theta_t = pflref_work_doubles(&ws->list, P, 1);
    ws->theta_hat = pflref_work_doubles(&ws->list, P, 1);
    ws->local = pflref_work_doubles(&ws->list, N, P);
    ws->diff = pflref_work_doubles(&ws->list, P, 1);
    ws->W = pflref_work_doubles(&ws->list, N, P);
    ws->g = pflref_work_doubles(&ws->list, P, 1);
    ws->losses = pflref_work_doubles(&ws->list, hyper->fedala.max_epochs, 1);
    ws->range = pflref_work_flags(&ws->list, P);
    ws->started = pflref_work_flags(&ws->list, N);
    ws->trained = pflref_work_indices(&ws->list, N, 1);
    return pflref_work_ready(ws);
}

/* 1 when block b starts a new layer, reading the blocks from the output:
 * a layer list's blocks share the name before their last '.'; an mlp's
 * layers are its input and head blocks; a one-layer model has one. */
static int same_layer(const pflref_model *m, size_t a, size_t b)
{
    const pflref_block *A = &m->blocks[a], *B = &m->blocks[b];
    if (m->kind == PFLREF_MODEL_LAYERS) {
        const char *da = strrchr(A->name, '.'), *db = strrchr(B->name, '.');
        const size_t la = da ? (size_t)(da - A->name) : strlen(A->name);
        const size_t lb = db ? (size_t)(db - B->name) : strlen(B->name);
        return la == lb && strncmp(A->name, B->name, la) == 0;
    }
    return A->is_head == B->is_head && A->is_input == B->is_input;
}

/* The number of layers of m holding parameters (fedala.p_unit = layers)
 * or of parameter tensors (tensors): r_μ, r_v are buffers, not
 * parameters() (ALA.py:78-79). */
static size_t count_units(const pflref_model *m, int p_unit)
{
    size_t L = 0, last = m->nblocks;   /* the last parameter block seen */
    for (size_t b = 0; b < m->nblocks; b++) {
        if (m->blocks[b].is_buffer)
            continue;
        if (p_unit == PFLREF_FEDALA_P_TENSORS || last == m->nblocks ||
            !same_layer(m, last, b))
            L++;
        last = b;
    }
    return L;
}

/* req: fedala.alg1.l15 */
/* range := RANGE_IN on the entries of the top p units (tensors: p = 0,
 * all), RANGE_BUFFER on r_μ, r_v, RANGE_BELOW elsewhere. */
static void ala_range(const pflref_model *m, const pflref_fedala_hyper *h,
                      unsigned char *range)
{
    const size_t units = count_units(m, h->p_unit);
    const size_t p = (h->p_unit == PFLREF_FEDALA_P_TENSORS && h->p == 0)
                         ? units : h->p;
    memset(range, RANGE_BELOW, m->P);
    size_t unit = 0;   /* units counted from the output, this one included */
    size_t next = m->nblocks;   /* the parameter block above b */
    for (size_t b = m->nblocks; b-- > 0;) {
        const pflref_block *B = &m->blocks[b];
        if (B->is_buffer) {
            memset(range + B->offset, RANGE_BUFFER, B->size);
            continue;
        }
        if (next == m->nblocks || h->p_unit == PFLREF_FEDALA_P_TENSORS ||
            !same_layer(m, b, next))
            unit++;
        next = b;
        if (unit <= p)
            memset(range + B->offset, RANGE_IN, B->size);
    }
}

/* 1 when client i takes part in round r. */
static int in_round(const pflref_round_plan *r, size_t i)
{
    for (size_t j = 0; j < r->m; j++)
        if (r->clients[j] == i)
            return 1;
    return 0;
}

/* The fewest entries a batchnorm layer of m normalises over per sample
 * (1 for an mlp's bn and a batchnorm1d on features, H·W for a
 * batchnorm2d), 0 without batch normalisation. */
static size_t bn_span(const pflref_model *m)
{
    if (!m->bn)
        return 0;
    if (m->kind != PFLREF_MODEL_LAYERS)
        return 1;
    size_t span = 0;
    for (size_t l = 0; l < m->nlayers; l++) {
        const pflref_layer *L = &m->layers[l];
        if (L->kind != PFLREF_LAYER_BATCHNORM1D &&
            L->kind != PFLREF_LAYER_BATCHNORM2D)
            continue;
        const size_t e = L->in_size / L->out_shape[0];
        if (span == 0 || e < span)
            span = e;
    }
    return span;
}

/* Every participation from the second round on needs one pass over D_i^s
 * of exactly ⌊s n_i/100⌋ samples; the first-round lists are unread. */
static pflref_status check_samples(const pflref_problem *problem,
                                   const pflref_fedala_hyper *h,
                                   const pflref_schedule *schedule,
                                   pflref_error *err)
{
    char where[PFLREF_WHERE_MAX];
    for (size_t t = 1; t < schedule->T; t++) {
        const pflref_round_plan *r = &schedule->rounds[t];
        snprintf(where, sizeof where, "schedule.rounds[%zu].personal", t);
        if (r->personal == NULL && r->m > 0)
            return pflref_error_set(err, PFLREF_EINVAL, where,
                                    "fedala takes each participant's "
                                    "sample D_i^s from the round's personal "
                                    "lists; round %zu has none", t);
        /* participants: one list per participant; all: then one per
         * client outside the round, ascending (the reader checked the
         * count N) */
        const int all = h->ala_clients == PFLREF_FEDALA_ALA_ALL;
        const size_t lists = all ? problem->N : r->m;
        if (all && (r->personal == NULL ||
                    (r->m < problem->N && r->n_personal != problem->N)))
            return pflref_error_set(err, PFLREF_EINVAL, where,
                                    "fedala.ala_clients = all takes every "
                                    "client's sample D_i^s from the round's "
                                    "personal lists (N = %zu: the "
                                    "participants', then the others' in id "
                                    "order); round %zu has %zu", problem->N,
                                    t, r->personal == NULL ? (size_t)0
                                       : (r->n_personal ? r->n_personal
                                                        : r->m));
        size_t next = 0;   /* the next candidate id outside the round */
        for (size_t j = 0; j < lists; j++) {
            size_t i;
            if (j < r->m) {
                i = r->clients[j];
            } else {
                while (in_round(r, next))
                    next++;
                i = next++;
            }
            const size_t n_i = problem->clients[i].train.n;
            /* |D_i^s| = ⌊s n_i / 100⌋ */
            const size_t n_s = (size_t)floor(h->s * (double)n_i / 100.0);
            if (n_s == 0)
                return pflref_error_set(
                    err, PFLREF_EINVAL, "algorithm.hyperparameters.fedala.s",
                    "fedala.s = %g%% of client %zu's %zu samples selects "
                    "none (⌊s n_i/100⌋ = 0)", h->s, i, n_i);
            const pflref_batches *b = &r->personal[j];
            snprintf(where, sizeof where,
                     "schedule.rounds[%zu].personal[%zu]", t, j);
            if (b->step_off[b->nsteps] != n_s)
                return pflref_error_set(
                    err, PFLREF_EINVAL, where,
                    "one pass over D_i^s holds ⌊s n_i/100⌋ = %zu samples "
                    "of client %zu (s = %g, n_i = %zu); the list has %zu",
                    n_s, i, h->s, n_i, b->step_off[b->nsteps]);
            /* with batch normalisation each ALA batch is a training-mode
             * pass of model_t, which normalises over nb·span entries: one
             * gives no batch statistics (PyTorch's train() refuses it) */
            const size_t span = bn_span(&problem->model);
            for (size_t q = 0; span > 0 && q < b->nsteps; q++)
                if ((b->step_off[q + 1] - b->step_off[q]) * span < 2)
                    return pflref_error_set(
                        err, PFLREF_EINVAL, where,
                        "ALA batch %zu of client %zu holds one sample: with "
                        "batch normalisation ALA's training-mode pass "
                        "normalises over one entry per channel (PyTorch's "
                        "train() refuses it)", q + 1, i);
            /* a participant's indices the schedule's check validated; a
             * client outside the round's are validated here */
            for (size_t k = 0; j >= r->m && k < n_s; k++)
                if (b->idx[k] >= n_i)
                    return pflref_error_set(
                        err, PFLREF_EINVAL, where,
                        "sample index %zu is out of range for client %zu "
                        "with n = %zu samples", b->idx[k], i, n_i);
        }
    }
    return PFLREF_OK;
}

/* The registry holds η > 0, s > 0, threshold > 0, k ≥ 1, max_epochs ≥ 1,
 * all finite; here s ≤ 100, p against the model, the model, the
 * samples. */
static pflref_status fedala_check(const pflref_problem *problem,
                                  const pflref_hyper *hyper,
                                  const pflref_schedule *schedule,
                                  const unsigned char *mask,
                                  pflref_error *err)
{
    (void)mask;
    const pflref_fedala_hyper *h = &hyper->fedala;
    const pflref_model *m = &problem->model;
    if (m->bn && !pflref_bn_keeps_own_in(problem, hyper))
        return pflref_error_set(err, PFLREF_EINVAL, "model",
                                "fedala: a model with batch normalisation "
                                "needs bn.aggregate = parameters_only (the "
                                "authors' and PFLlib's reading: ALA weighs "
                                "parameters() only, each client's running "
                                "statistics its own); under average W_i "
                                "would have running statistics to weigh, "
                                "which are no parameters");
    if (!(h->s <= 100.0))
        return pflref_error_set(err, PFLREF_EINVAL,
                                "algorithm.hyperparameters.fedala.s",
                                "fedala.s = %g must be <= 100 (a percentage "
                                "of the client's data)", h->s);
    const size_t units = count_units(m, h->p_unit);
    const int tensors = h->p_unit == PFLREF_FEDALA_P_TENSORS;
    if ((!tensors && h->p == 0) || h->p > units)
        return pflref_error_set(
            err, PFLREF_EINVAL, "algorithm.hyperparameters.fedala.p",
            "fedala.p = %zu must be in [%d, %zu], the model's %s", h->p,
            tensors ? 0 : 1, units,
            tensors ? "parameter tensors (0: all)" : "layers");
    return check_samples(problem, h, schedule, err);
}

/* req: fedala.alg1.l1, fedala.alg1.l2 */
/* Θ_i⁰ ← Θ⁰ (l. 1: s->v, the reported Θ̂_i, already holds w⁰, the Θ̂_i
 * of a client that never runs ALA); W_i ← 1 for every client (l. 2;
 * entries off the range stay 1 and are never read); the range of ALA
 * from p. */
static pflref_status fedala_init(pflref_state *s, pflref_error *err)
{
    (void)err;
    fedala_work *ws = s->extra;
    for (size_t i = 0; i < s->N; i++)
        memcpy(ws->local + i * s->P, s->w0, s->P * sizeof *ws->local);
    for (size_t q = 0; q < s->N * s->P; q++)
        ws->W[q] = 1.0;
    ala_range(&s->problem->model, &s->hyper->fedala, ws->range);
    return PFLREF_OK;
}

/* Population std of x[0..k−1] below thr (np.std, ddof = 0). */
static int std_below(const double *x, size_t k, double thr)
{
    double mean = 0.0, var = 0.0;
    for (size_t q = 0; q < k; q++)
        mean += x[q];
    mean /= (double)k;
    for (size_t q = 0; q < k; q++)
        var += (x[q] - mean) * (x[q] - mean);
    return sqrt(var / (double)k) < thr;
}

/* req: fedala.eq5 */
/* One pass over D_i^s (the batches of b): per batch, the gradient at Θ̂_i
 * (eval: in evaluation mode, fedala.ala_mode), then Eq. (5) on W_i and
 * Eq. (4) on Θ̂_i, on the range.  *loss := the last batch's loss, taken
 * before its step. */
static pflref_status ala_pass(pflref_state *s, size_t i,
                              const pflref_batches *b, fedala_work *ws,
                              int eval, double *loss, pflref_error *err)
{
    const size_t P = s->P;
    const double eta = s->hyper->fedala.eta;             /* η */
    const double *theta_i = ws->local + i * P;
    double *W_i = ws->W + i * P;
    for (size_t q = 0; q < b->nsteps; q++) {
        const size_t *idx = b->idx + b->step_off[q];
        const size_t nb = b->step_off[q + 1] - b->step_off[q];
        pflref_status st =
            (eval ? pflref_model_grad_eval : pflref_model_grad)(
                &s->problem->model, ws->theta_hat,
                &s->problem->clients[i].train, idx, nb, s->ws, ws->g, loss);
        if (st != PFLREF_OK)
            return pflref_error_set(err, st, "schedule",
                                    "gradient failed at round %zu, client "
                                    "%zu, ALA batch %zu", s->t, i, q + 1);
        for (size_t p = 0; p < P; p++) {
            if (ws->range[p] != RANGE_IN)
                continue;
            /* W ← clip_[0,1](W − η ∇_{Θ̂} L ⊙ (Θ − Θ_i)) */
            const double x = W_i[p] - eta * (ws->g[p] * ws->diff[p]);
            W_i[p] = x < 0.0 ? 0.0 : (x > 1.0 ? 1.0 : x);
            /* Θ̂ ← Θ_i + (Θ − Θ_i) ⊙ W */
            ws->theta_hat[p] = theta_i[p] + ws->diff[p] * W_i[p];
        }
        if (!pflref_all_finite(ws->theta_hat, P))
            return pflref_error_diverge(err, (long)s->t, (long)i,
                                        (long)(q + 1), "theta_hat");
    }
    return PFLREF_OK;
}

/* 1 when ALA does nothing for client i this round (fedala.skip). */
static int ala_skips(const pflref_state *s, const fedala_work *ws,
                     size_t i)
{
    if (s->t == 0)
        return 1;   /* first round: Θ_i = Θ = Θ⁰ */
    if (s->hyper->fedala.skip != PFLREF_FEDALA_SKIP_SUM_FIRST)
        return 0;
    /* ALA.py:82: Σ over the first parameter tensor of (Θ − Θ_i) == 0
     * (params_g[0]; under a precision check, also a sum the candidate's
     * rounding can make 0: ref/core/mca_decide.h) */
    const pflref_model *m = &s->problem->model;
    size_t first = 0;
    while (first + 1 < m->nblocks && m->blocks[first].is_buffer)
        first++;
    const pflref_block *B = &m->blocks[first];
    const double *theta_i = ws->local + i * s->P;
    double sum = 0.0, mass = 0.0;
    for (size_t p = B->offset; p < B->offset + B->size; p++) {
        sum += ws->theta_t[p] - theta_i[p];
        mass += fabs(ws->theta_t[p]) + fabs(theta_i[p]);
    }
    return pflref_mca_is_zero(sum, mass);
}

/* 1 when client i's passes run in evaluation mode (fedala.ala_mode =
 * pfllib): PFLlib's server evaluates every client after send_models in
 * the rounds e with e % eval_gap == 0 (serverala.py:26-31; clientbase.py:84,
 * :126 model.eval()), and only a participant's train(), after that
 * evaluation, sets model.train() again (clientala.py:23); ALA.py:91's
 * deepcopy keeps the mode.  So in round t ≥ 1 the passes run in
 * evaluation mode when the last evaluation, e = g ⌊(t − 1)/g⌋, came after
 * the client's last training r (e > r; r = −1 if it never trained): with
 * g = 1, when it did not train in round t − 1.  In the first round ALA
 * does nothing. */
static int ala_in_eval(const pflref_state *s, const fedala_work *ws,
                       size_t i)
{
    /* the registry refuses 0; a hyper zero-filled by hand means 1 */
    const size_t g = s->hyper->fedala.eval_gap > 0 ? s->hyper->fedala.eval_gap
                                                   : 1;
    if (s->hyper->fedala.ala_mode != PFLREF_FEDALA_ALA_MODE_PFLLIB ||
        s->t == 0)
        return 0;
    /* trained[i] = r + 1 (0: never); e > r ⇔ e + 1 > r + 1 */
    return g * ((s->t - 1) / g) + 1 > ws->trained[i];
}

/* req: fedala.alg1.l7, fedala.alg1.l8_11, fedala.alg1.l12_14, fedala.alg1.l15 */
/* ALA for client i on D_i^s (b): ws->theta_hat := Θ̂_i, also kept as the
 * reported v_i (l. 19), W_i learned; the NOTEs "ala_epochs" and "W_i". */
static pflref_status ala(pflref_state *s, size_t i, const pflref_batches *b,
                         fedala_work *ws, const pflref_trace *trace,
                         pflref_error *err)
{
    const pflref_fedala_hyper *h = &s->hyper->fedala;
    const size_t P = s->P;
    const double *theta_i = ws->local + i * P;
    double epochs = 0.0;
    memcpy(ws->theta_hat, theta_i, P * sizeof *theta_i);
    if (!ala_skips(s, ws, i)) {
        const double *W_i = ws->W + i * P;
        for (size_t p = 0; p < P; p++) {
            ws->diff[p] = ws->theta_t[p] - theta_i[p];
            /* l. 15: Θ̂ = Θ_i + (Θ − Θ_i) ⊙ W on the range, Θ below;
             * r_μ, r_v stay Θ_i's (ALA.py:86-87 copies parameters()) */
            ws->theta_hat[p] = ws->range[p] == RANGE_IN
                                   ? theta_i[p] + ws->diff[p] * W_i[p]
                               : ws->range[p] == RANGE_BELOW
                                   ? ws->theta_t[p]
                                   : theta_i[p];
        }
        /* l. 8-14: the start stage in the round t = 2 (s->t = 1),
         * or (fedala.start = own) in the client's first ALA */
        const int start = h->start == PFLREF_FEDALA_START_OWN
                              ? !ws->started[i]
                              : s->t == 1;
        const size_t cap = start ? h->max_epochs : 1;
        const int eval = ala_in_eval(s, ws, i);
        size_t e = 0;
        while (e < cap) {
            pflref_status st =
                ala_pass(s, i, b, ws, eval, &ws->losses[e], err);
            if (st != PFLREF_OK)
                return st;
            e++;
            /* start phase: more than k losses, their last k's std < thr */
            if (e > h->k && std_below(ws->losses + (e - h->k), h->k,
                                      h->threshold))
                break;
        }
        ws->started[i] = 1;
        epochs = (double)e;
    }
    /* req: fedala.alg1.l19 */
    /* l. 19: Θ̂_i is what the run reports for client i (final.v) */
    memcpy(s->v + i * P, ws->theta_hat, P * sizeof *ws->theta_hat);
    const long t = (long)s->t;
    pflref_trace_emit(trace, PFLREF_EV_NOTE, "train", t, (long)i, -1,
                      "ala_epochs", &epochs, 1, EPOCH_LINE);
    pflref_trace_emit(trace, PFLREF_EV_NOTE, "train", t, (long)i, -1, "W_i",
                      ws->W + i * P, P, W_LINE);
    return PFLREF_OK;
}

static pflref_status fedala_round(pflref_state *s,
                                  const pflref_round_plan *plan,
                                  const pflref_trace *trace,
                                  pflref_error *err)
{
    fedala_work *ws = s->extra;
    const pflref_problem *pr = s->problem;
    const size_t P = s->P;
    /* req: fedala.alg1.l1, fedala.alg1.l3, fedala.alg1.l4_5 */
    pflref_round_begin(s, ws->theta_t, trace);   /* Θ^{t−1}, accum ← 0 */
    const double m_t = pflref_train_n(pr, plan->clients, plan->m);
    const int all = s->hyper->fedala.ala_clients == PFLREF_FEDALA_ALA_ALL;
    if (all) {
        /* fedala.ala_clients = all (serverala.py:73-74): ALA on every
         * client before the round trains, Θ_i ← Θ̂_i for each */
        size_t q = 0, o = 0;   /* participants, outsiders so far */
        for (size_t i = 0; i < s->N; i++) {
            const int part = q < plan->m && plan->clients[q] == i;
            /* D_i^s: personal[q] for clients[q], personal[m + o] for the
             * o-th client outside the round */
            const size_t slot = part ? q++ : plan->m + o++;
            pflref_status st =
                ala(s, i, plan->personal != NULL ? &plan->personal[slot]
                                                 : NULL,
                    ws, trace, err);
            if (st != PFLREF_OK)
                return st;
            memcpy(ws->local + i * P, ws->theta_hat,
                   P * sizeof *ws->theta_hat);
            if (!part)
                pflref_trace_emit(trace, PFLREF_EV_NOTE, "train",
                                  (long)s->t, (long)i, -1, "theta_hat",
                                  ws->theta_hat, P, HAT_LINE);
        }
    }
    /* req: fedala.alg1.l6 */
    for (size_t q = 0; q < plan->m; q++) {
        const size_t i = plan->clients[q];
        double *theta_i = ws->local + i * P;
        if (!all) {
            pflref_status st = ala(
                s, i, plan->personal != NULL ? &plan->personal[q] : NULL, ws,
                trace, err);
            if (st != PFLREF_OK)
                return st;
        }
        /* req: fedala.alg1.l16 */
        /* l. 16: local training from Θ̂_i (under all: Θ_i, which holds it) */
        pflref_client_begin(s, i, "theta_i", theta_i,
                            all ? NULL : ws->theta_hat, trace);
        pflref_client_lr(s, i, 0, 1);
        pflref_optim_begin(s, i);
        pflref_status st;
        const pflref_local_sgd job = pflref_local_sgd_plain(
            s, i, &plan->batches[q], s->hyper->eta, "theta_i", LOCAL_LINE);
        st = pflref_local_sgd_run(&job, theta_i, ws->g, s->ws, trace, err);
        if (st != PFLREF_OK)
            return st;
        /* req: fedala.alg1.l17 */
        pflref_client_end(s, i, "theta_i", theta_i, trace);
        /* req: fedala.alg1.l18 */
        pflref_accumulate(s->accum, (double)pr->clients[i].train.n / m_t,
                          theta_i, P);
    }
    /* req: fedala.bn */
    /* bn.aggregate = parameters_only: Θ^t's r_μ, r_v are the first
     * participant's (deepcopy(uploaded_models[0]), serverALA.py:118,
     * PFLlib serverbase.py:141) */
    if (pflref_bn_keeps_own(s) && plan->m > 0)
        pflref_bn_copy_buffers(&pr->model, s->accum,
                               ws->local + pflref_bn_first_upload(
                                          plan, plan->clients[0]) * P);
    /* fedala.ala_mode = pfllib: the round each client last trained in
     * (train() mode after this round's evaluation) */
    for (size_t i = 0; i < s->N; i++)
        if (in_round(plan, i))
            ws->trained[i] = s->t + 1;
    return pflref_round_end(s, SERVER_LINE, trace, err);
}

/* W_i and the start phases are in the NOTE records, but no reload of them
 * is written: a re-synchronised check is refused (so is the split of a
 * client's Θ_i, its last CLIENT_END, from the reported Θ̂_i). */
static const char *fedala_resync_gap(const pflref_hyper *hyper)
{
    (void)hyper;
    return "each client's W_i, whether its start phase is done and its "
           "trained Θ_i (fedala's ALA state; the reported v_i is Θ̂_i) are "
           "not reloaded from a candidate";
}

const pflref_algorithm pflref_fedala = {
    .name = "fedala",
    .title = "FedALA (Zhang, Hua, Wang, Song, Xue, Ma, Guan, AAAI 2023, "
             "Alg. 1)",
    .has_global = 1,
    .has_personal = 1,
    .personal_name = "theta_i",
    .n_eval = 2,
    .eval = {{"global", PFLREF_SOURCE_GLOBAL},
             {"personalized", PFLREF_SOURCE_PERSONAL}},
    .check = fedala_check,
    .work_alloc = fedala_work_alloc,
    .work_free = pflref_work_free,
    .init = fedala_init,
    .round = fedala_round,
    .resync_gap = fedala_resync_gap,
    .opt_slots = 1,   /* the local training's optimizer */
};
