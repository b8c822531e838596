/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/algorithms/fedfomo.c: FedFomo, Algorithm 1 of
 *   M. Zhang, K. Sapra, S. Fidler, S. Yeung, J. M. Alvarez, "Personalized
 *   Federated Learning with First Order Model Optimization", ICLR 2021,
 *   arXiv 2012.08565v3,
 * with the reading of shared/spec notes-fedbn-fedfomo.md §2.3 (anchor and
 * candidates as both released implementations agree: NVlabs/FedFomo @
 * fe04f66, PFLlib @ 487a29e).
 *
 * One round t, for each participant i (ascending id); "l. k" below and in
 * the trace is step k of notes §2.3, the box's lines as the notes number
 * them:
 *   l. 1  the server sends the M models {θ_n^{t−1} : n ∈ S_i^t} (the
 *         schedule's peers[j]; the selection is data, like client sets)
 *   l. 2  candidates C = S_i^t ∪ {i} (θ_i^{t−1}: the client's own last
 *         upload; fedfomo.self = excluded drops it); anchor a = φ_i^{t−1},
 *         the model the client started its last local training from
 *   l. 3  for n ∈ C:  r_n = (L_i(a) − L_i(θ_n)) / ‖θ_n − a‖
 *         rule: ‖θ_n − a‖ = 0 gives r_n = 0 (θ_n = a adds nothing; the
 *         authors' code divides 0/0 into NaN and drops it from the model
 *         weights, PFLlib adds 1e-5 to the norm).  θ_n = a is judged up to
 *         the rounding of l. 5 (fedfomo.equal_rtol = τ, 2⁻⁵⁰): every
 *         |θ_n,p − a_p| ≤ τ max(|θ_n,p|, |a_p|).  Why: one positive
 *         weight makes l. 5 φ = a + 1·(θ_n − a), θ_n in exact arithmetic
 *         but fl(a_p + fl(θ_n,p − a_p)) = θ_n,p + e with |e| ≤ u (2|θ_n,p|
 *         + |a_p|) + O(u²), u = 2⁻⁵³; a later anchor φ then sits an ulp or
 *         two from the upload θ_n it copied, and r_n = (loss difference
 *         of rounding) / (distance of rounding) is noise of any size and
 *         sign that would get weight 1 and, through P, steer later peer
 *         choices.  τ = 8u covers |e| whenever |a_p| ≤ 6 max(|θ_n,p|,
 *         |φ_p|); two models that differ by more are told apart exactly
 *         as the exact arithmetic of golden/ does (docs/algorithms/
 *         fedfomo.md, "Equality up to rounding")
 *   l. 4  w_n = max(r_n, 0) / Σ_{m∈C} max(r_m, 0); all w_n = 0 when the
 *         sum is 0 (no candidate improves on the anchor)
 *   l. 5  φ_i^t = a + Σ_{n∈C} w_n (θ_n − a)
 *         (w = 0: φ_i^t = a, a pure local step from the anchor)
 *   l. 6  θ_i^t ← local SGD from φ_i^t over the scheduled batches:
 *         θ ← θ − η ∇f_i(θ; b)
 *   l. 7  upload θ_i^t and (w_n)_{n∈C}
 *   l. 8  the affinity matrix P_{i,n} ← P_{i,n} + w_n for n ∈ C
 * A client outside a round keeps θ_i, φ_i and its row of P.  Every θ_n
 * and φ_i starts at w⁰, so round 0 (all distances 0) is pure local
 * training.  L_i is the mean loss on client i's validation split (X_val,
 * y_val) when the problem has one, else on its whole training set.
 *
 * Symbols:  θ_i^t ↔ s->v + i·P (the personal model, trace "theta")
 *           θ_n^{t−1} ↔ ws->theta_prev + n·P   φ_i ↔ ws->phi + i·P
 *           P ↔ ws->affinity (N×N)   w_n ↔ ws->weight[n]   r_n ↔ ws->r[n]
 *           S_i^t ↔ plan->peers (list j)   η ↔ hyper->eta
 *
 * The downloads S_i^t (l. 1) are the schedule's peers[j] when the round
 * has them; a round with ε-greedy draws (peer_draws: π and u_1..u_M,
 * drawn by the schedule generator from schedule.peer_seed or given as
 * data) and no peers has them chosen here, from P as it stands, by
 * pflref_fedfomo_select (notes §2.5) with ε_t = ε₀ − δ t; the choice is
 * recorded (s->chosen_peers, the result's "peers"), so that the result's
 * schedule replays with them as data.
 *
 * Switches (the paper's reading first; notes §2.8):
 *   fedfomo.distance  l2: ‖·‖₂ (the paper) | l1: ‖·‖₁ (the code's default)
 *                     | l2_squared: ‖·‖₂² (the code's "l2", utils.py:143-176)
 *                     | l2_per_tensor_sum: Σ_blocks ‖·‖₂ (the code's l2_root)
 *   fedfomo.val_loss  sample_mean | batch_mean: the mean of the batch means
 *                     of fedfomo.val_batch samples (train.py:258)
 *   fedfomo.val_mode  train: L_i's passes in training mode, BN on the
 *                     validation batch's statistics, dropout with a mask
 *                     per pass (PFLlib clientfomo.py:139-151; the paper
 *                     names no mode) | eval: evaluation mode, BN on the
 *                     running statistics r_μ, r_v, dropout the identity,
 *                     no mask (NVlabs federation.py:163-166, train.py:81)
 *   fedfomo.distance_eps  added to every distance (0; PFLlib 1e-5)
 *   fedfomo.self      included: C = S_i^t ∪ {i} (the code, client.py:320)
 *                     | excluded: C = S_i^t | ranked: C = S_i^t, which may
 *                     hold i: the run-time choice ranks the whole row
 *                     P_{i,·}, own entry included (PFLlib serverfomo.py
 *                     send_models: topk of self.P[client.id])
 *   fedfomo.equal_rtol  τ of l. 3's equality up to rounding (above)
 *   lr.*              η of client i's train() (pflref_client_lr; PFLlib's
 *                     -ld steps each client's scheduler when it trains)
 *   fedfomo.anchor    pre_train: a = φ_i^{t−1} (PFLlib's old_model too,
 *                     cloned after aggregation) | post_train: a = θ_i^{t−1}
 *   fedfomo.no_positive  anchor: all w = 0 gives φ_i^t = a | keep_current:
 *                     φ_i^t = θ_i^{t−1} (PFLlib clientfomo.py)
 *   fedfomo.P_update  weights: P += w | signed_abs_sum: P += r/max(|Σr|,
 *                     1e-9) (federation.py:396-418) | raw: P += r (PFLlib)
 *   fedfomo.P_init    zeros | own_0.1: P_{i,i} = 1/10 (client.py:285-288)
 *                     | identity (PFLlib serverfomo.py)
 *   fedfomo.selection eps_greedy | topM (PFLlib send_models)
 *   fedfomo.M_counts  others: M downloads | total: M − 1 downloads when
 *                     the own upload is a candidate (client.py:347)
 *   bn.aggregate      (a model with batch normalisation) average: l. 3's
 *                     distance and l. 5's mixture range over every entry
 *                     of θ, running statistics r_μ, r_v included |
 *                     parameters_only (PFLlib d832e76f6a23): the distance
 *                     over parameters() only (clientfomo.py:106-109), l. 5
 *                     mixes parameters() only (:153-165, self.model's
 *                     buffers untouched), so φ_i^t's r_μ, r_v are client
 *                     i's own, θ_i^{t−1}'s; every model scored in l. 3
 *                     carries the statistics it was stored with: a
 *                     download θ_n its uploader's (serverfomo.py:110
 *                     deep-copies the whole module, :84 sends it as is),
 *                     the anchor those φ_i was formed with
 *
 * Trace: NOTE "weights" (N entries: w_n at n, 0 off C), NOTE "phi"
 * (φ_i^t), NOTE "P" (row i of P after l. 8), then the local steps as
 * "theta" (CLIENT_BEGIN, STEP, CLIENT_END).
 *
 * Determinism: clients in ascending id; every model sent in round t is
 * the snapshot θ^{t−1} taken at the round's start (a client trained
 * earlier in the round is not seen by a later one); sums over n and p in
 * ascending order; norms by a plain loop in index order.
 * Cost per round: Σ_i (|C| + 1) losses on D_i^val + local steps + O(N·P).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "algorithms/algorithms.h"
#include "algorithms/fedfomo.h"
#include "core/mca.h"
#include "engine/bn_own.h"
#include "engine/work.h"

static const char *const WEIGHT_LINE =
    "Alg. 1 l. 3-4: w_n = max(0, (L_i(φ_i) − L_i(θ_n)) / ‖θ_n − φ_i‖), "
    "normalised";
static const char *const UPDATE_LINE =
    "Alg. 1 l. 5: φ_i ← φ_i + Σ_n w_n (θ_n − φ_i)";
static const char *const AFFINITY_LINE = "P_{i,n} ← P_{i,n} + w_n";
/* --trace alone (intermediates: no record keeps them), l. 2 */
static const char *const CANDIDATE_LINE =
    "Alg. 1 l. 2: C = S_i^t ∪ {i} (the peers in the schedule's order, then "
    "i; fedfomo.self = excluded: S_i^t)";
static const char *const ANCHOR_LINE =
    "Alg. 1 l. 2: a = φ_i^{t−1} (fedfomo.anchor = post_train: θ_i^{t−1})";
static const char *const LOCAL_LINE = "Alg. 1 l. 6: θ ← θ − η ∇f_i(θ; b)";

/* FedFomo's state beyond θ_i (s->v) and its work buffers (zero-filled). */
typedef struct {
    pflref_work list;   /* the allocations (ref/engine/work.h)             */
    double *phi;        /* N×P: anchors φ_i (start of the last training)   */
    double *theta_prev; /* N×P: θ_n^{t−1}, the uploads at the round start  */
    double *affinity;   /* N×N: the affinity matrix P, row i = client i    */
    double *weight;     /* N: w_n of the current client (0 off C)          */
    double *r;          /* N: r_n of the current client                    */
    double *g;          /* P: a batch gradient                             */
    size_t *greedy;     /* N: G, the greedy order of the selection         */
    size_t *pi_own;     /* N: π with the own id i last (fedfomo.self =
                           ranked)                                         */
    size_t *vidx;       /* a validation batch's indices                    */
    double *Z;          /* a validation batch's outputs (nmax × k,
                           fedfomo.val_mode = eval)                        */
} fedfomo_work;

static void *fedfomo_work_alloc(const pflref_problem *problem,
                                const pflref_hyper *hyper)
{
    (void)hyper;
    const size_t P = problem->model.P, N = problem->N;
    fedfomo_work *ws = calloc(1, sizeof *ws);
    if (ws == NULL)
        return NULL;
    ws->phi = pflref_work_doubles(&ws->list, N, P);
    ws->theta_prev = pflref_work_doubles(&ws->list, N, P);
    ws->affinity = pflref_work_doubles(&ws->list, N, N);
    ws->weight = pflref_work_doubles(&ws->list, N, 1);
    ws->r = pflref_work_doubles(&ws->list, N, 1);
    ws->g = pflref_work_doubles(&ws->list, P, 1);
    ws->greedy = pflref_work_indices(&ws->list, N, 1);
    ws->pi_own = pflref_work_indices(&ws->list, N, 1);
    size_t nmax = 1;
    for (size_t i = 0; i < N; i++) {
        const pflref_client *c = &problem->clients[i];
        nmax = c->train.n > nmax ? c->train.n : nmax;
        nmax = c->val.n > nmax ? c->val.n : nmax;
    }
    ws->vidx = pflref_work_indices(&ws->list, nmax, 1);
    ws->Z = pflref_work_doubles(&ws->list, nmax,
                                problem->model.k > 0 ? problem->model.k : 1);
    return pflref_work_ready(ws);
}

/* The first bad entry of an id list of participant j of round t (the
 * client itself or a repeat), or PFLREF_OK.  what: "peers" or
 * "peer_draws" (then the list is the draw's "order"). */
static pflref_status check_ids(const pflref_batches *b,
                               const pflref_round_plan *r, size_t t,
                               const char *what, int own_ok,
                               pflref_error *err)
{
    for (size_t j = 0; j < r->m; j++) {
        const size_t *ids = b->idx + b->step_off[j];
        const size_t M = b->step_off[j + 1] - b->step_off[j];
        for (size_t q = 0; q < M; q++) {
            int bad = !own_ok && ids[q] == r->clients[j];
            for (size_t e = 0; e < q && !bad; e++)
                bad = ids[e] == ids[q];
            if (!bad)
                continue;
            char where[PFLREF_WHERE_MAX];
            snprintf(where, sizeof where, "schedule.rounds[%zu].%s[%zu]%s[%zu]",
                     t, what, j, b == r->peers ? "" : ".order", q);
            return pflref_error_set(
                err, PFLREF_EINVAL, where,
                ids[q] == r->clients[j]
                    ? "client %zu is listed as its own peer (its own "
                      "model is a candidate through fedfomo.self)"
                    : "peer %zu is listed twice",
                ids[q]);
        }
    }
    return PFLREF_OK;
}

/* ε₀ ≤ 1, 0 ≤ τ ≤ 10⁻⁶ (fedfomo.equal_rtol), and every peer list and draw
 * order: ids distinct and never the client itself (a given peer list may
 * name it under fedfomo.self = ranked, where P's ranking can choose it). */
static pflref_status fedfomo_check(const pflref_problem *problem,
                                   const pflref_hyper *hyper,
                                   const pflref_schedule *schedule,
                                   const unsigned char *mask,
                                   pflref_error *err)
{
    (void)problem;
    (void)mask;
    if (!(hyper->fedfomo.epsilon0 <= 1.0))
        return pflref_error_set(err, PFLREF_EINVAL,
                                "algorithm.hyperparameters.fedfomo.epsilon0",
                                "ε₀ = %.17g is a probability: 0 ≤ ε₀ ≤ 1",
                                hyper->fedfomo.epsilon0);
    const double tau = hyper->fedfomo.equal_rtol;
    if (!(tau >= 0.0 && tau <= 1e-6))
        return pflref_error_set(err, PFLREF_EINVAL,
                                "algorithm.hyperparameters.fedfomo.equal_rtol",
                                "τ = %.17g: equality up to rounding takes a "
                                "relative tolerance 0 ≤ τ ≤ 1e-6", tau);
    pflref_status st0 = pflref_bn_no_first_upload(
        schedule, "fedfomo keeps no global model",
        "φ_i^t takes client i's own running statistics; PFLlib "
        "serverfomo.py:110 keeps each client's upload, clientfomo.py:157-165 "
        "mixes their parameters() into the client's own model", err);
    if (st0 != PFLREF_OK)
        return st0;
    const int own_ok = hyper->fedfomo.self == PFLREF_FEDFOMO_SELF_RANKED;
    for (size_t t = 0; t < schedule->T; t++) {
        const pflref_round_plan *r = &schedule->rounds[t];
        pflref_status st;
        if (r->peer_order != NULL &&
            (st = check_ids(r->peer_order, r, t, "peer_draws", 0, err)))
            return st;
        if (r->peers != NULL &&
            (st = check_ids(r->peers, r, t, "peers", own_ok, err)))
            return st;
    }
    return PFLREF_OK;
}

/* The mean loss of θ on nb samples of D (idx, or all of D in order when
 * idx is NULL): a training pass (pflref_model_loss: BN on the batch's
 * statistics, a dropout mask taken) under fedfomo.val_mode = train; under
 * eval an evaluation pass (pflref_model_outputs: BN on θ's running
 * statistics r_μ, r_v, dropout the identity, no mask) and the mean of the
 * per-sample losses of its outputs (pflref_model_output_grad).  A model
 * without BN and dropout gives the same number either way; the quadratic
 * has no modes. */
static pflref_status mode_loss(const pflref_state *s, const double *theta,
                               const pflref_data *D, const size_t *idx,
                               size_t nb, double *L)
{
    const pflref_model *m = &s->problem->model;
    if (s->hyper->fedfomo.val_mode != PFLREF_FEDFOMO_VAL_MODE_EVAL ||
        m->kind == PFLREF_MODEL_QUADRATIC)
        return pflref_model_loss(m, theta, D, idx, nb, s->ws, L);
    double *Z = ((fedfomo_work *)s->extra)->Z;
    pflref_status st = pflref_model_outputs(m, theta, D, idx, nb, s->ws, Z);
    if (st == PFLREF_OK)   /* E := Z (unused), *L := (1/nb) Σ_j ℓ(Z_j; y_j) */
        st = pflref_model_output_grad(m, Z, D, idx, nb, s->ws, Z, L);
    /* Monte Carlo arithmetic, as pflref_model_loss's (no-op when off) */
    if (st == PFLREF_OK)
        pflref_mca_perturb(PFLREF_MCA_PRODUCT, L, 1);
    return st;
}

/* L_i(θ): the mean loss on client i's validation split, or on its whole
 * training set when the problem has no validation splits;
 * fedfomo.val_loss = batch_mean with val_batch = B ≥ 1: the mean over the
 * batches of B samples in index order (the last ragged) of their mean
 * losses; each pass in the mode of fedfomo.val_mode (mode_loss). */
static pflref_status val_loss(const pflref_state *s, size_t i,
                              const double *theta, double *L,
                              pflref_error *err)
{
    const pflref_problem *pr = s->problem;
    const pflref_data *D = pflref_problem_has_val(pr)
                               ? &pr->clients[i].val
                               : &pr->clients[i].train;
    const pflref_fedfomo_hyper *h = &s->hyper->fedfomo;
    const size_t B = h->val_batch;
    pflref_status st = PFLREF_OK;
    if (h->val_loss == PFLREF_FEDFOMO_VAL_BATCH_MEAN && B > 0 && B < D->n &&
        pr->model.kind != PFLREF_MODEL_QUADRATIC) {
        size_t *idx = ((fedfomo_work *)s->extra)->vidx;
        double sum = 0.0;
        size_t nbatches = 0;
        for (size_t lo = 0; st == PFLREF_OK && lo < D->n; lo += B) {
            const size_t nb = D->n - lo < B ? D->n - lo : B;
            for (size_t j = 0; j < nb; j++)
                idx[j] = lo + j;
            double Lb;
            st = mode_loss(s, theta, D, idx, nb, &Lb);
            sum += Lb;
            nbatches++;
        }
        *L = sum / (double)nbatches;
    } else {
        st = mode_loss(s, theta, D, NULL, D->n, L);
    }
    if (st != PFLREF_OK)
        return pflref_error_set(err, st, NULL,
                                "the validation loss L_i of client %zu "
                                "failed", i);
    if (!isfinite(*L))
        return pflref_error_diverge(err, (long)s->t, (long)i, -1,
                                    "the validation loss L_i");
    return PFLREF_OK;
}

/* The distance of fedfomo.distance over parameters() only, the buffers
 * r_μ, r_v left out (bn.aggregate = parameters_only: PFLlib clientfomo.py:
 * 106-109 concatenates (param_n − param_i) over parameters() and takes
 * torch.norm, the Euclidean norm); blocks in layout order, entries in
 * index order. */
static double params_distance(const pflref_model *m, const double *x,
                              const double *a, int kind)
{
    const int l1 = kind == PFLREF_FEDFOMO_DISTANCE_L1;
    double total = 0.0, sum = 0.0;
    for (size_t b = 0; b < m->nblocks; b++) {
        const pflref_block *B = &m->blocks[b];
        double part = 0.0;
        for (size_t p = B->offset; !B->is_buffer && p < B->offset + B->size;
             p++)
            part += l1 ? fabs(x[p] - a[p]) : (x[p] - a[p]) * (x[p] - a[p]);
        if (kind == PFLREF_FEDFOMO_DISTANCE_L2_PER_TENSOR)
            total += B->is_buffer ? 0.0 : sqrt(part);
        else
            sum += part;
    }
    if (kind == PFLREF_FEDFOMO_DISTANCE_L2_PER_TENSOR)
        return total;
    return kind == PFLREF_FEDFOMO_DISTANCE_L2 ? sqrt(sum) : sum;
}

/* ‖x − a‖₂, ‖x − a‖₁ or ‖x − a‖₂² (fedfomo.distance), summed in index
 * order; l2_per_tensor_sum: Σ_blocks ‖x_B − a_B‖₂ over the model's blocks
 * in layout order (the NVlabs code's l2_root, utils.py:143-176, one norm
 * per parameter tensor); over the parameters of params_of's blocks only,
 * its buffers left out, when params_of is given (bn.aggregate =
 * parameters_only). */
static double distance(const pflref_model *m, const double *x,
                       const double *a, size_t P, int kind,
                       const pflref_model *params_of)
{
    if (params_of != NULL)
        return params_distance(params_of, x, a, kind);
    if (kind == PFLREF_FEDFOMO_DISTANCE_L2_PER_TENSOR) {
        double total = 0.0;
        for (size_t b = 0; b < m->nblocks; b++) {
            const size_t lo = m->blocks[b].offset;
            const size_t hi = lo + m->blocks[b].rows * m->blocks[b].cols;
            double sum = 0.0;
            for (size_t p = lo; p < hi; p++)
                sum += (x[p] - a[p]) * (x[p] - a[p]);
            total += sqrt(sum);
        }
        return total;
    }
    const int l1 = kind == PFLREF_FEDFOMO_DISTANCE_L1;
    double sum = 0.0;
    for (size_t p = 0; p < P; p++)
        sum += l1 ? fabs(x[p] - a[p]) : (x[p] - a[p]) * (x[p] - a[p]);
    return kind == PFLREF_FEDFOMO_DISTANCE_L2 ? sqrt(sum) : sum;
}

/* θ_n = a up to rounding: every |x_p − a_p| ≤ τ max(|x_p|, |a_p|)
 * (τ = 0: bitwise equal values); over parameters() only when params_of is
 * given (bn.aggregate = parameters_only: the buffers are no part of l. 3's
 * distance). */
static int equal_up_to(const double *x, const double *a, size_t P,
                       double tau, const pflref_model *params_of)
{
    for (size_t b = 0; params_of != NULL && b < params_of->nblocks; b++) {
        const pflref_block *B = &params_of->blocks[b];
        for (size_t p = B->offset; !B->is_buffer && p < B->offset + B->size;
             p++)
            if (fabs(x[p] - a[p]) > tau * fmax(fabs(x[p]), fabs(a[p])))
                return 0;
    }
    for (size_t p = 0; params_of == NULL && p < P; p++) {
        const double scale = fmax(fabs(x[p]), fabs(a[p]));
        if (fabs(x[p] - a[p]) > tau * scale)
            return 0;
    }
    return 1;
}

/* req: fedfomo.alg1.l3 */
/* l. 3: r_n for candidate n against anchor a with L_a = L_i(a); r_n = 0
 * when θ_n = a (distance 0, the documented rule; equal up to the rounding
 * of l. 5 by fedfomo.equal_rtol). */
static pflref_status ratio(const pflref_state *s, size_t i, size_t n,
                           const double *a, double L_a, fedfomo_work *ws,
                           pflref_error *err)
{
    const double *theta_n = ws->theta_prev + n * s->P;
    /* bn.aggregate = parameters_only: over parameters() only */
    const pflref_model *params_of =
        pflref_bn_keeps_own(s) ? &s->problem->model : NULL;
    const double d = distance(&s->problem->model, theta_n, a, s->P,
                              s->hyper->fedfomo.distance, params_of);
    ws->r[n] = 0.0;
    /* req: fedfomo.eq.zero_rounding */
    if (d == 0.0 ||
        equal_up_to(theta_n, a, s->P, s->hyper->fedfomo.equal_rtol, params_of))
        return PFLREF_OK;
    double L_n;
    pflref_status st = val_loss(s, i, theta_n, &L_n, err);
    if (st == PFLREF_OK)   /* req: fedfomo.alg1.l3 */
        ws->r[n] = (L_a - L_n) / (d + s->hyper->fedfomo.distance_eps);
    return st;
}

/* l. 2's C and a for --trace (intermediates); ws->r holds C for the call
 * (federated_update clears it next). */
static void emit_candidates(const pflref_state *s, size_t i,
                            const size_t *ids, size_t M, const double *a,
                            fedfomo_work *ws, const pflref_trace *trace)
{
    const size_t N = s->N;
    if (trace == NULL)
        return;
    size_t nc = 0;
    for (size_t q = 0; q < M && nc < N; q++)
        ws->r[nc++] = (double)ids[q];
    if (s->hyper->fedfomo.self == PFLREF_FEDFOMO_SELF_INCLUDED && nc < N)
        ws->r[nc++] = (double)i;
    pflref_trace_emit(trace, PFLREF_EV_INTERMEDIATE, "train", (long)s->t,
                      (long)i, -1, "C", ws->r, nc, CANDIDATE_LINE);
    pflref_trace_emit(trace, PFLREF_EV_INTERMEDIATE, "train", (long)s->t,
                      (long)i, -1, "a", a, s->P, ANCHOR_LINE);
}

/* req: fedfomo.alg1.l8 */
/* l. 8: P_{i,n} += w_n (fedfomo.P_update: or r_n / max(|Σ_m r_m|, 1e-9),
 * or r_n), from client i's weights and ratios in ws. */
static void update_affinity(pflref_state *s, size_t i, fedfomo_work *ws,
                            const pflref_trace *trace)
{
    const size_t N = s->N;
    const pflref_fedfomo_hyper *h = &s->hyper->fedfomo;
    double *row = ws->affinity + i * N;
    double scale = 1.0;
    if (h->p_update == PFLREF_FEDFOMO_P_UPDATE_SIGNED) {
        double sum = 0.0;
        for (size_t n = 0; n < N; n++)
            sum += ws->r[n];
        scale = fabs(sum) > 1e-9 ? fabs(sum) : 1e-9;
    }
    for (size_t n = 0; n < N; n++)   /* req: fedfomo.alg1.l8 */
        row[n] += h->p_update == PFLREF_FEDFOMO_P_UPDATE_WEIGHTS
                      ? ws->weight[n]
                      : ws->r[n] / scale;
    pflref_trace_emit(trace, PFLREF_EV_NOTE, "train", (long)s->t, (long)i, -1,
                      "P", row, N, AFFINITY_LINE);
}

/* Alg. 1 l. 2-5 and 8 for client i (participant j of plan), with S its
 * downloads S_i^t (ids[0..M−1]): the weights w_n, φ_i^t = a + Σ w_n
 * (θ_n − a), and the affinity row P_{i,·}. */
static pflref_status federated_update(pflref_state *s, size_t i,
                                      const size_t *ids, size_t M,
                                      fedfomo_work *ws,
                                      const pflref_trace *trace,
                                      pflref_error *err)
{
    const size_t P = s->P, N = s->N;
    const long t = (long)s->t;
    const pflref_fedfomo_hyper *h = &s->hyper->fedfomo;
    double *phi = ws->phi + i * P;            /* becomes φ_i^t */
    /* l. 2: the anchor a = φ_i^{t−1} (pre_train) or θ_i^{t−1} */
    const double *a = h->anchor == PFLREF_FEDFOMO_ANCHOR_POST_TRAIN
                          ? ws->theta_prev + i * P
                          : phi;
    /* req: fedfomo.alg1.l2 */
    emit_candidates(s, i, ids, M, a, ws, trace);
    memset(ws->weight, 0, N * sizeof *ws->weight);
    memset(ws->r, 0, N * sizeof *ws->r);
    double L_a;
    pflref_status st = val_loss(s, i, a, &L_a, err);
    /* req: fedfomo.alg1.l2, fedfomo.alg1.l3 */
    /* l. 2-3: r_n over C = S_i^t (∪ {i}) */
    for (size_t q = 0; st == PFLREF_OK && q < M; q++) {
        const size_t n = ids[q];
        st = ratio(s, i, n, a, L_a, ws, err);
        ws->weight[n] = ws->r[n] > 0.0 ? ws->r[n] : 0.0;   /* max(r_n, 0) */
    }
    if (st == PFLREF_OK && h->self == PFLREF_FEDFOMO_SELF_INCLUDED) {
        st = ratio(s, i, i, a, L_a, ws, err);
        ws->weight[i] = ws->r[i] > 0.0 ? ws->r[i] : 0.0;
    }
    if (st != PFLREF_OK)
        return st;
    /* req: fedfomo.alg1.l4 */
    /* l. 4: w_n ← max(r_n, 0) / Σ_m max(r_m, 0), or all 0 */
    double total = 0.0;
    for (size_t n = 0; n < N; n++)
        total += ws->weight[n];
    for (size_t n = 0; n < N && total > 0.0; n++)
        ws->weight[n] /= total;   /* req: fedfomo.alg1.l4 */
    pflref_trace_emit(trace, PFLREF_EV_NOTE, "train", t, (long)i, -1,
                      "weights", ws->weight, N, WEIGHT_LINE);
    /* req: fedfomo.alg1.l5 */
    /* l. 5: φ_i^t = a + Σ_n w_n (θ_n − a), n ascending, a fixed;
     * fedfomo.no_positive = keep_current with all w = 0: φ_i^t = θ_i^{t−1} */
    const double *keep =
        total > 0.0 || h->no_positive == PFLREF_FEDFOMO_NO_POSITIVE_ANCHOR
            ? NULL
            : ws->theta_prev + i * P;
    for (size_t p = 0; p < P; p++) {
        const double a_p = a[p];
        double x = keep != NULL ? keep[p] : a_p;
        for (size_t n = 0; n < N && keep == NULL; n++)
            if (ws->weight[n] > 0.0)   /* req: fedfomo.alg1.l5 */
                x += ws->weight[n] * (ws->theta_prev[n * P + p] - a_p);
        phi[p] = x;
    }
    /* bn.aggregate = parameters_only: l. 5 moves parameters() only
     * (PFLlib clientfomo.py:157-165 zeroes and sums self.model.parameters(),
     * its buffers untouched), so φ_i^t's r_μ, r_v are client i's own, those
     * its last training left in θ_i^{t−1} */
    if (pflref_bn_keeps_own(s))
        pflref_bn_copy_buffers(&s->problem->model, phi,
                               ws->theta_prev + i * P);
    if (!pflref_all_finite(phi, P))
        return pflref_error_diverge(err, t, (long)i, 0, "phi");
    pflref_trace_emit(trace, PFLREF_EV_NOTE, "train", t, (long)i, -1, "phi",
                      phi, P, UPDATE_LINE);
    update_affinity(s, i, ws, trace);
    return PFLREF_OK;
}

/* Descending P_{i,n}, ties to the lower id: a before b. */
static int greedy_before(const double *row, size_t a, size_t b)
{
    if (row[a] != row[b])
        return row[a] > row[b];
    return a < b;
}

size_t pflref_fedfomo_select(const double *row, const size_t *order, size_t k,
                             const double *u, size_t slots, double eps,
                             int top_m, size_t *greedy, size_t *out)
{
    /* G: insertion sort of π's ids by (−P_{i,n}, n) */
    for (size_t q = 0; q < k; q++) {
        size_t e = q;
        for (; e > 0 && greedy_before(row, order[q], greedy[e - 1]); e--)
            greedy[e] = greedy[e - 1];
        greedy[e] = order[q];
    }
    const size_t count = slots < k ? slots : k;
    size_t next_pi = 0, next_g = 0;
    for (size_t c = 0; c < count; c++) {
        /* slot c + 1: explore (π) when u < ε_t, else exploit (G) */
        const int explore = !top_m && u[c] < eps;
        const size_t *list = explore ? order : greedy;
        size_t *next = explore ? &next_pi : &next_g;
        for (;; (*next)++) {   /* skip ids chosen already; one is left */
            int taken = 0;
            for (size_t e = 0; e < c && !taken; e++)
                taken = out[e] == list[*next];
            if (!taken)
                break;
        }
        out[c] = list[(*next)++];
    }
    return count;
}

/* Round t's downloads of every participant chosen from P (l. 1, notes
 * §2.5), into s->chosen_peers[t]: participant j draws with π =
 * plan->peer_order list j and u = its peer_u; M = the count of u, less the
 * own upload under fedfomo.M_counts = total. */
static pflref_status choose_peers(pflref_state *s,
                                  const pflref_round_plan *plan,
                                  fedfomo_work *ws, pflref_error *err)
{
    const pflref_fedfomo_hyper *h = &s->hyper->fedfomo;
    const pflref_batches *pi = plan->peer_order;
    pflref_batches *out = &s->chosen_peers[s->t];
    const size_t own = h->self == PFLREF_FEDFOMO_SELF_RANKED;
    size_t total = 0;
    for (size_t j = 0; j < plan->m; j++)
        total += pi->step_off[j + 1] - pi->step_off[j] + own;
    pflref_status st = pflref_batches_alloc(out, plan->m, total, err);
    if (st != PFLREF_OK)
        return st;
    /* ε_t = ε₀ − δ t, req: fedfomo.alg1.l1 */
    const double eps = h->epsilon0 - h->delta * (double)s->t;
    for (size_t j = 0; j < plan->m; j++) {
        const size_t i = plan->clients[j];
        size_t M = plan->peer_u_off[j + 1] - plan->peer_u_off[j];
        if (h->m_counts == PFLREF_FEDFOMO_M_TOTAL &&
            h->self == PFLREF_FEDFOMO_SELF_INCLUDED)
            M = M > 0 ? M - 1 : 0;
        /* fedfomo.self = ranked: i joins π (last) and so G by P_{i,i} */
        const size_t *order = pi->idx + pi->step_off[j];
        size_t k = pi->step_off[j + 1] - pi->step_off[j];
        if (h->self == PFLREF_FEDFOMO_SELF_RANKED) {
            memcpy(ws->pi_own, order, k * sizeof *order);
            ws->pi_own[k++] = i;
            order = ws->pi_own;
        }
        const size_t got = pflref_fedfomo_select(
            ws->affinity + i * s->N, order, k,
            plan->peer_u + plan->peer_u_off[j], M, eps,
            h->selection == PFLREF_FEDFOMO_SELECTION_TOPM, ws->greedy,
            out->idx + out->step_off[j]);
        out->step_off[j + 1] = out->step_off[j] + got;
    }
    return PFLREF_OK;
}

/* The start: every anchor φ_i⁰ = w⁰ (θ_i⁰ = w⁰ is the state's v_i), and
 * P = 0 (the zero-filled workspace) or fedfomo.P_init's diagonal. */
static pflref_status fedfomo_init(pflref_state *s, pflref_error *err)
{
    (void)err;
    fedfomo_work *ws = s->extra;
    const int p_init = s->hyper->fedfomo.p_init;
    for (size_t i = 0; i < s->N; i++) {
        memcpy(ws->phi + i * s->P, s->w0, s->P * sizeof *s->w0);
        /* fedfomo.P_init: P_{i,i} = 1/10 (NVlabs) or 1 (PFLlib) */
        if (p_init != PFLREF_FEDFOMO_P_INIT_ZEROS)
            ws->affinity[i * s->N + i] =
                p_init == PFLREF_FEDFOMO_P_INIT_OWN ? 0.1 : 1.0;
    }
    return PFLREF_OK;
}

static pflref_status fedfomo_round(pflref_state *s,
                                   const pflref_round_plan *plan,
                                   const pflref_trace *trace,
                                   pflref_error *err)
{
    fedfomo_work *ws = s->extra;
    const size_t P = s->P, N = s->N;
    /* req: fedfomo.alg1.l1 */
    /* l. 1: the uploads θ_n^{t−1} every download of this round sees */
    memcpy(ws->theta_prev, s->v, N * P * sizeof *s->v);
    /* S_i^t: the schedule's peer lists, or chosen now from P and the
     * round's draws (recorded in s->chosen_peers) */
    const pflref_batches *S = plan->peers;
    if (S == NULL && plan->peer_order != NULL && s->chosen_peers != NULL) {
        pflref_status st = choose_peers(s, plan, ws, err);
        if (st != PFLREF_OK)
            return st;
        S = &s->chosen_peers[s->t];
    }
    for (size_t j = 0; j < plan->m; j++) {
        const size_t i = plan->clients[j];
        double *theta_i = s->v + i * P;
        const size_t *ids = S == NULL ? NULL : S->idx + S->step_off[j];
        const size_t M = S == NULL ? 0 : S->step_off[j + 1] - S->step_off[j];
        pflref_status st = federated_update(s, i, ids, M, ws, trace, err);
        if (st != PFLREF_OK)
            return st;
        /* req: fedfomo.alg1.l6 */
        /* l. 6: θ_i ← local SGD from φ_i^t */
        pflref_client_begin(s, i, "theta", theta_i, ws->phi + i * P, trace);
        pflref_client_lr(s, i, 0, 1);   /* η of i's train() (lr.count) */
        pflref_optim_begin(s, i);       /* its optimizer (opt.state) */
        const double eta = s->hyper->eta;   /* η */
        const pflref_local_sgd job = pflref_local_sgd_plain(
            s, i, &plan->batches[j], eta, "theta", LOCAL_LINE);
        st = pflref_local_sgd_run(&job, theta_i, ws->g, s->ws, trace, err);
        if (st != PFLREF_OK)
            return st;
        /* req: fedfomo.alg1.l7 */
        /* l. 7: upload θ_i^t */
        pflref_client_end(s, i, "theta", theta_i, trace);
    }
    return PFLREF_OK;
}

/* Re-synchronised checking: the state after round t is every θ_i (the
 * driver loads CLIENT_END "theta"; l. 1 copies them into the uploads
 * θ_n^{t−1} at the next round's start), each client's anchor φ_i (its
 * last NOTE "phi", φ_i^t of the last round it took part in) and row i of
 * P (its last NOTE "P": l. 8 moves only the participant's row). */
static void fedfomo_load_state(pflref_state *s, pflref_state_loader load,
                               void *ctx, long t)
{
    fedfomo_work *ws = s->extra;
    const size_t P = s->P, N = s->N;
    for (size_t i = 0; i < N; i++) {
        load(ctx, PFLREF_EV_NOTE, "phi", t, (long)i, ws->phi + i * P, P);
        load(ctx, PFLREF_EV_NOTE, "P", t, (long)i, ws->affinity + i * N, N);
    }
}

const pflref_algorithm pflref_fedfomo = {
    .name = "fedfomo",
    .title = "FedFomo (Zhang, Sapra, Fidler, Yeung, Alvarez, ICLR 2021, "
             "Alg. 1)",
    .has_personal = 1,
    .personal_name = "theta",
    .n_eval = 1,
    .eval = {{"personalized", PFLREF_SOURCE_PERSONAL}},
    .check = fedfomo_check,
    .work_alloc = fedfomo_work_alloc,
    .work_free = pflref_work_free,
    .init = fedfomo_init,
    .round = fedfomo_round,
    .load_state = fedfomo_load_state,
    .opt_slots = 1,   /* l. 6: the local SGD's optimizer */
};
