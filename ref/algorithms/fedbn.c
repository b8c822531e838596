/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/algorithms/fedbn.c: FedBN, Algorithm 1 of
 *   X. Li, M. Jiang, X. Zhang, M. Kamp, Q. Dou, "FedBN: Federated Learning
 *   on Non-IID Features via Local Batch Normalization", ICLR 2021,
 *   arXiv 2102.07623v2; the authors' code med-air/FedBN @ 2fa38ad
 *   (federated/fed_digits.py), read through shared/spec
 *   notes-fedbn-fedfomo.md §1 (docs/algorithms/fedbn.md).
 *
 * FedAvg in which every batch-normalisation block (γ, β and the running
 * statistics r_μ, r_v) never leaves the client.  The box counts local SGD
 * steps t and averages every E steps; here one round is one averaging
 * (E = the round's scheduled batches of the client):
 *
 *   l. 1   for t = 1, …, T (the rounds; all clients by default)
 *   l. 2     each client k, from (w^(non-BN) of the server, its own BN):
 *              w_{t+1,k} ← w_{t,k} − η ∇ℓ_k(w_{t,k}; batch)   per batch,
 *              BN in training mode (batch statistics, ref/models/mlp.c),
 *              r_μ ← (1 − ρ) r_μ + ρ μ_B, r_v ← (1 − ρ) r_v + ρ ŝ²_B
 *              after each batch's forward pass (PyTorch's BatchNorm1d)
 *   l. 3     if t mod E = 0 (every round here):
 *   l. 4       every non-BN layer l: w^(l) ← Σ_k c_k w_{t+1,k}^(l)  (c_k = 1/m)
 *   l. 5       BN layers are not touched: client k keeps γ_k, β_k, r_μ,k, r_v,k
 *   evaluation: client k's own model (the shared layers and its own BN) in
 *   evaluation mode, on r_μ,k and r_v,k (fed_digits.py:143-161).
 *
 * Symbols:  w (non-BN entries) ↔ s->w   client k's model ↔ s->v + k·P
 *           the round's iterate θ ↔ ws->theta   η ↔ hyper->eta
 *           ρ, ε ↔ model.bn_momentum, model.bn_eps   c_k ↔ c
 *           the BN entries ↔ ws->bn_mask (1 on bn_gamma, bn_beta,
 *           bn_running_mean, bn_running_var)
 *
 * Switches (the paper first; notes §1.5):
 *   fedbn.weights      uniform 1/m (box l. 4; fed_digits.py:247) |
 *                      samples n_k/Σ n_j (PFLlib, the Flower baseline)
 *   fedbn.bn           local (FedBN) | shared: the BN blocks and running
 *                      statistics are averaged too, the FedAvg baseline
 *                      (fed_digits.py:176-188, --mode fedavg)
 *   fedbn.running_var  unbiased ŝ²_B = nb/(nb − 1) s²_B (PyTorch) | biased;
 *                      the same switch as bn.running_var (either key
 *                      set to biased chooses s²_B)
 *   bn.running         update (PyTorch's train(), the box) | frozen: r_μ,
 *                      r_v stay (the forward still on the batch
 *                      statistics; torch: momentum = 0)
 *   opt.*              the client optimizer (ref/engine/optim.c), one per
 *                      client update, its state's lifetime opt.state; it
 *                      steps γ, β and the other parameters, never r_μ, r_v
 *   lr.*               η of client k's train() (pflref_client_lr): the
 *                      round's decay, or under lr.count = trainings the
 *                      decay of k's own trainings (PFLlib's -ld: clientbn.py
 *                      inherits clientbase.py's ExponentialLR, stepped at
 *                      the end of each train())
 * The notes' local_unit (steps | epochs) is the schedule's: a round's
 * batch list is E steps or whole epochs, as the spec generates it.
 *
 * State: s->w holds the averaged non-BN entries (its BN entries stay w⁰'s:
 * the server's BN is never used, fed_digits.py:167-175); s->v + k·P holds
 * client k's whole model, its non-BN entries set to w after every round,
 * so `personalized` evaluates exactly what the code evaluates.  With
 * fedbn.bn = shared every v_k is w.
 *
 * Determinism: clients train and are summed in ascending id; the running
 * statistics move after each batch's gradient, in batch order (the shared
 * local solver, ref/engine/sgd.c).
 * Cost per round: Σ_k (local steps × one gradient) + O(N·P).
 */
#include <stdlib.h>
#include <string.h>
#include "algorithms/algorithms.h"
#include "core/vec.h"
#include "engine/work.h"

static const char *const CLIENT_LINE =
    "Alg. 1 l. 2: w_{t+1,k} ← w_{t,k} − η ∇ℓ_k(w_{t,k}); "
    "r ← (1 − ρ) r + ρ (μ_B, ŝ²_B)";
static const char *const SERVER_LINE[2][2] = {
    {"Alg. 1 l. 4-5: w^(l) ← (1/m) Σ_k w_{t+1,k}^(l), l not BN",
     "w^(l) ← Σ_k (n_k/Σ n_j) w_{t+1,k}^(l), l not BN"},
    {"FedAvg baseline: w ← (1/m) Σ_k w_{t+1,k}, BN included",
     "FedAvg baseline: w ← Σ_k (n_k/Σ n_j) w_{t+1,k}, BN included"}};

/* FedBN's workspace. */
typedef struct {
    pflref_work list;          /* the allocations (ref/engine/work.h)      */
    double *w_t;               /* P: the server model at the round's start */
    double *theta;             /* P: client k's iterate w_{t,k}            */
    double *g;                 /* P: a batch gradient                      */
    unsigned char *bn_mask;    /* P: 1 on the BN entries                   */
    unsigned char *non_bn;     /* P: 1 − bn_mask                           */
} fedbn_work;

/* The workspace fedbn_work_alloc returns for the run state s (the shape
 * the proof of the round starts from, proofs/README.md): three P-double
 * buffers and two P-byte masks, apart from each other, from the workspace
 * record and from the state's arrays. */
/*@ predicate fedbn_work_shape{L}(fedbn_work *ws, pflref_state *s) =
      \valid_read(ws) &&
      \valid(ws->w_t + (0 .. s->P - 1)) &&
      \valid(ws->theta + (0 .. s->P - 1)) &&
      \valid(ws->g + (0 .. s->P - 1)) &&
      \valid(ws->bn_mask + (0 .. s->P - 1)) &&
      \valid(ws->non_bn + (0 .. s->P - 1)) &&
      \separated(ws->w_t + (0 .. s->P - 1), ws->theta + (0 .. s->P - 1),
                 ws->g + (0 .. s->P - 1), ws->bn_mask + (0 .. s->P - 1),
                 ws->non_bn + (0 .. s->P - 1), ws, s,
                 s->w + (0 .. s->P - 1), s->w0 + (0 .. s->P - 1),
                 s->v + (0 .. s->N * s->P - 1), s->accum + (0 .. s->P - 1),
                 s->mask + (0 .. s->P - 1), s->shared + (0 .. s->P - 1));
 */

static void *fedbn_work_alloc(const pflref_problem *problem,
                              const pflref_hyper *hyper)
{
    (void)hyper;
    const pflref_model *m = &problem->model;
    const size_t P = m->P;
    fedbn_work *ws = calloc(1, sizeof *ws);
    if (ws == NULL)
        return NULL;
    ws->w_t = pflref_work_doubles(&ws->list, P, 1);
    ws->theta = pflref_work_doubles(&ws->list, P, 1);
    ws->g = pflref_work_doubles(&ws->list, P, 1);
    ws->bn_mask = pflref_work_flags(&ws->list, P);
    ws->non_bn = pflref_work_flags(&ws->list, P);
    if (ws->bn_mask != NULL && ws->non_bn != NULL)
        for (size_t b = 0; b < m->nblocks; b++)
            for (size_t p = m->blocks[b].offset;
                 p < m->blocks[b].offset + m->blocks[b].size; p++) {
                ws->bn_mask[p] = (unsigned char)m->blocks[b].is_bn;
                ws->non_bn[p] = (unsigned char)!m->blocks[b].is_bn;
            }
    return pflref_work_ready(ws);
}

/* 1 when r_v takes the biased s²_B: bn.running_var = biased, or its
 * FedBN spelling fedbn.running_var = biased (the two keys are one switch;
 * either one set to biased chooses it). */
static int running_biased(const pflref_hyper *h)
{
    return h->bn.running_var == PFLREF_BN_RUNNING_VAR_BIASED ||
           h->fedbn.running_var == PFLREF_FEDBN_RUNNING_VAR_BIASED;
}

/* A batch must hold two samples for the unbiased running variance
 * nb/(nb − 1) s²_B (PyTorch refuses a training batch of one too). */
static pflref_status batch_of_two(const void *ctx, size_t client,
                                  const size_t *idx, size_t nb,
                                  pflref_error *err)
{
    (void)ctx;
    (void)client;
    (void)idx;
    if (nb < 2)
        return pflref_error_set(err, PFLREF_EINVAL, NULL,
                                "a batch of %zu sample: FedBN's unbiased "
                                "running variance nb/(nb − 1) s²_B needs "
                                "nb >= 2 (fedbn.running_var = biased "
                                "takes it)", nb);
    return PFLREF_OK;
}

/* The model must be an mlp with bn (model.bn = true); batches of one are
 * refused under the unbiased running variance (bn.running = update). */
static pflref_status fedbn_check(const pflref_problem *problem,
                                 const pflref_hyper *hyper,
                                 const pflref_schedule *schedule,
                                 const unsigned char *mask, pflref_error *err)
{
    (void)mask;
    if (!problem->model.bn)
        return pflref_error_set(err, PFLREF_EINVAL, "model.bn",
                                "fedbn needs an mlp with batch "
                                "normalisation (\"bn\": true) or a layer "
                                "list with a batchnorm layer");
    if (hyper->bn.running == PFLREF_BN_RUNNING_UPDATE &&
        !running_biased(hyper))
        return pflref_schedule_walk(schedule, NULL, batch_of_two, NULL, err);
    return PFLREF_OK;
}

/* req: fedbn.alg1.l2 */
/* Alg. 1 l. 2 for client k: its batches, each a gradient step on the
 * parameters (the client optimizer's, opt.*, when one is set) and, after
 * the gradient pass, a momentum step of the running statistics (the
 * shared local solver, ref/engine/sgd.c, whose order is the box's: the
 * gradient on the batch statistics, r moves, then the step, 0 on r_μ,
 * r_v).  fedbn.running_var = biased is bn.running_var = biased.  Its frame
 * is an assumption of the proof of the round (proofs/README.md): it
 * writes θ, g and *err (and the model workspace's temporaries and the
 * optimizer's state). */
/*@ assigns ws->theta[0 .. s->P - 1], ws->g[0 .. s->P - 1], *err; */
static pflref_status client_update(pflref_state *s, size_t k,
                                   const pflref_batches *b,
                                   const fedbn_work *ws,
                                   const pflref_trace *trace,
                                   pflref_error *err)
{
    const pflref_hyper *h = s->hyper;
    const pflref_bn_hyper bn = {
        .running = h->bn.running,
        .running_var = running_biased(h) ? PFLREF_BN_RUNNING_VAR_BIASED
                                         : PFLREF_BN_RUNNING_VAR_UNBIASED};
    /* w_{t+1,k} ← w_{t,k} − η ∇ℓ_k(w_{t,k}; batch q), BN on the batch
     * statistics;  r_μ ← (1 − ρ) r_μ + ρ μ_B,  r_v ← (1 − ρ) r_v + ρ ŝ²_B */
    pflref_local_sgd job = pflref_local_sgd_plain(s, k, b, h->eta, "v",
                                                  CLIENT_LINE);
    job.bn = &bn;
    return pflref_local_sgd_run(&job, ws->theta, ws->g, s->ws, trace, err);
}

/* One round with the workspace ws = s->extra.  Proved call sites
 * (proofs/README.md): every block v_k it composes or sets, and the
 * server's buffers, have the sizes and separations the kernels require,
 * from the run's state, the validated plan and the workspace. */
/*@ requires state_global(s) && state_personal(s);
    requires round_plan(plan, s->N);
    requires fedbn_work_shape(ws, s);
    requires \separated(err, ws, s, plan,
                        plan->clients + (0 .. plan->m - 1));
    requires \separated(plan->clients + (0 .. plan->m - 1), s);
 */
static pflref_status fedbn_round_with(pflref_state *s, const fedbn_work *ws,
                                      const pflref_round_plan *plan,
                                      const pflref_trace *trace,
                                      pflref_error *err)
{
    const pflref_problem *pr = s->problem;
    const int weights = s->hyper->fedbn.weights;      /* c_k's rule     */
    const int local = s->hyper->fedbn.bn == PFLREF_FEDBN_BN_LOCAL;
    const size_t P = s->P, N = s->N, m = plan->m;
    const size_t *const clients = plan->clients;
    double *const w = s->w, *const v = s->v, *const acc = s->accum;
    double *const w_t = ws->w_t, *const theta = ws->theta;

    /* req: fedbn.alg1.l3 */
    pflref_round_begin(s, w_t, trace);
    const double m_t = pflref_train_n(pr, clients, m);
    /*@ loop assigns j, theta[0 .. P - 1], ws->g[0 .. P - 1],
                     v[0 .. N * P - 1], acc[0 .. P - 1], s->hyper_round,
                     *err;
     */
    for (size_t j = 0; j < m; j++) {
        const size_t k = clients[j];
        double *v_k = pflref_row(v, k, N, P);
        /* req: fedbn.alg1.l2 */
        /* l. 2's start: the server's non-BN layers, the client's own BN
         * (shared: the server's whole model) */
        if (local)
            pflref_compose(ws->non_bn, w_t, v_k, theta, P);
        else
            pflref_copy(theta, w_t, P);
        pflref_client_begin(s, k, "v", theta, NULL, trace);
        pflref_client_lr(s, k, 0, 1);  /* η of k's train() (lr.count) */
        pflref_optim_begin(s, k);   /* its optimizer (opt.state) */
        pflref_status st = client_update(s, k, &plan->batches[j], ws, trace,
                                         err);
        if (st != PFLREF_OK)
            return st;
        pflref_client_end(s, k, "v", theta, trace);
        pflref_compose(ws->bn_mask, theta, v_k, v_k, P);   /* keep BN */
        /* req: fedbn.alg1.l4 */
        /* l. 4: c_k = 1/m (box) or n_k/Σ n_j */
        const double c = weights == PFLREF_FEDBN_WEIGHTS_SAMPLES
                             ? (double)pr->clients[k].train.n / m_t
                             : 1.0 / (double)m;
        pflref_accumulate(acc, c, theta, P);
    }
    /* req: fedbn.alg1.l5 */
    /* l. 5: the server's BN entries are not touched (local): w_t :=
     * (the average on the non-BN entries, w_t's BN), the new w */
    if (local) {
        pflref_compose(ws->non_bn, acc, w_t, w_t, P);
        pflref_copy(acc, w_t, P);
    }
    pflref_status st =
        pflref_round_end(s, SERVER_LINE[!local][weights], trace, err);
    if (st != PFLREF_OK)
        return st;
    /* every client's non-BN layers := w (shared: its whole model := w) */
    /*@ loop assigns i, v[0 .. N * P - 1]; */
    for (size_t i = 0; i < N; i++) {
        double *v_i = pflref_row(v, i, N, P);
        if (local)
            pflref_compose(ws->non_bn, w, v_i, v_i, P);
        else
            pflref_copy(v_i, w, P);
    }
    return PFLREF_OK;
}

static pflref_status fedbn_round(pflref_state *s,
                                 const pflref_round_plan *plan,
                                 const pflref_trace *trace, pflref_error *err)
{
    return fedbn_round_with(s, s->extra, plan, trace, err);
}

const pflref_algorithm pflref_fedbn = {
    .name = "fedbn",
    .title = "FedBN (Li et al., ICLR 2021, Alg. 1)",
    .has_global = 1,
    .has_personal = 1,
    .personal_name = "v",
    .n_eval = 1,
    .eval = {{"personalized", PFLREF_SOURCE_PERSONAL}},
    .check = fedbn_check,
    .work_alloc = fedbn_work_alloc,
    .work_free = pflref_work_free,
    .round = fedbn_round,
    .opt_slots = 1,
};
