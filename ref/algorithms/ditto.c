/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/algorithms/ditto.c: Ditto, Algorithm 1 of
 *   T. Li, S. Hu, A. Beirami, V. Smith, "Ditto: Fair and Robust Federated
 *   Learning Through Personalization", ICML 2021, arXiv 2012.04221v3,
 * with FedAvg as the global objective's solver (as in all its experiments).
 *
 * One round t (Alg. 1):
 *   the server selects S_t and sends w^t
 *   for each device k ∈ S_t:
 *     global:   w_k ← UPDATE_GLOBAL(w^t): w_k ← w^t, then one SGD step
 *               w_k ← w_k − η ∇F_k(w_k; b) per scheduled batch b
 *     personal: s steps  v_k ← v_k − η (∇F_k(v_k; b) + λ(v_k − w^t))
 *               (the gradient of h_k(v_k; w^t) = F_k(v_k) + (λ/2)‖v_k − w^t‖²)
 *     send w_k (Δ_k = w_k − w^t)
 *   w^{t+1} ← AGGREGATE: as FedAvg, w^{t+1} = Σ_{k∈S_t} c_k w_k
 * v_k persists across rounds, starts at w⁰, and is untouched in rounds
 * where k is not selected.
 *
 * Local work: one personal step per global step, both on the same batch,
 * personal first (s = the number of scheduled batches, as the authors' TF
 * code with L = s local iterations, flearn/trainers_MTL/ditto.py); with
 * ditto.batches = separate the personal steps take their own list,
 * plan->personal[j] (s = its length, PFLlib's -pls epochs), and the global
 * pass the scheduled batches (-ls epochs).
 *
 * Symbols:  w^t ↔ s->w (P)   w_k ↔ ws->w_local (P)   v_k ↔ s->v + k·P
 *           λ ↔ hyper->lambda   η ↔ hyper->eta   S_t ↔ plan->clients
 *           s ↔ plan->batches[j].nsteps (separate: plan->personal[j])
 *
 * Switches (the paper's reading first; shared/spec notes §3(f)):
 *   ditto.order     interleaved_shared_batch: for each batch b, the
 *                   personal step on b, then the global step on b (TF code);
 *                   personal_first: all s personal steps, then the whole
 *                   global pass (PFLlib's ptrain() before train(); here both
 *                   passes take the same scheduled batches)
 *   ditto.prox      squared: (λ/2)‖v − w‖², gradient λ(v − w);
 *                   norm: λ‖v − w‖, gradient λ(v − w)/‖v − w‖ over the whole
 *                   parameter vector, 0 when v = w (s-huu/Ditto, PyTorch)
 *   ditto.prox_ref  round_start: w = w^t; moving: w = the global copy w_k
 *                   as it stands when the personal step runs (s-huu/Ditto)
 *   ditto.weights   samples: c_k = n_k / Σ_{S_t} n_j (FedAvg's);
 *                   uniform: c_k = 1/|S_t| (the TF code's simple mean)
 *   ditto.batches   shared: the personal steps take the global pass's
 *                   batches (a schedule's personal lists are not read);
 *                   separate: their own list, the schedule's
 *                   rounds[t].personal[j] (TsingZ0/PFLlib d832e76f6a23,
 *                   clientditto.py: ptrain() iterates its own
 *                   load_train_data() for -pls epochs, train() another for
 *                   -ls; notes-pfllib-as-run §2.3), with personal_first
 *   bn.aggregate    average: w_k starts from the whole w^t, r_μ, r_v
 *                   included, and they are averaged with the rest (a
 *                   state_dict average); parameters_only: PFLlib's
 *                   parameters() exchange (ditto_round_keep below)
 *   lr.count        rounds | trainings: the decay of η (ref/engine/lr.c);
 *                   PFLlib steps the personal and the global scheduler once
 *                   each per train(), so both passes share one count
 *
 * State and work: w^t and v_k are the state's w and v_k; the buffers of a
 * round (w^t's copy, w_k, the gradient) are ditto_work.
 *
 * Determinism: devices train and are summed in ascending id.
 * Cost per round: 2 s gradients per selected device + O(N·P).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "algorithms/algorithms.h"
#include "engine/bn_own.h"
#include "engine/work.h"

static const char *const GLOBAL_LINE =
    "Alg. 1 UPDATE_GLOBAL (FedAvg): w_k ← w_k − η ∇F_k(w_k; b)";
static const char *const PERSONAL_LINE[] = {
    "Alg. 1: v_k ← v_k − η (∇F_k(v_k; b) + λ(v_k − w^t))",
    "v_k ← v_k − η (∇F_k(v_k; b) + λ(v_k − w)/‖v_k − w‖)"};
static const char *const SERVER_LINE[] = {
    "w^{t+1} ← Σ_{k∈S_t} (n_k/Σ n_j) w_k",
    "w^{t+1} ← (1/|S_t|) Σ_{k∈S_t} w_k  (= w^t + mean Δ_k)"};
static const char *const SERVER_LINE_KEEP[] = {
    "w^{t+1} ← Σ_{k∈S_t} (n_k/Σ n_j) w_k on parameters(); r_μ, r_v ← the "
    "first uploader's",
    "w^{t+1} ← (1/|S_t|) Σ_{k∈S_t} w_k on parameters(); r_μ, r_v ← the "
    "first uploader's"};

/* Ditto's work buffers, P doubles each (zero-filled; none is carried
 * between rounds: v_k lives in the state). */
typedef struct {
    pflref_work list; /* the allocations (ref/engine/work.h)                */
    double *w_t;      /* w^t, the round-start global model                  */
    double *w_local;  /* w_k, device k's global copy (UPDATE_GLOBAL)        */
    double *g;        /* ∇F_k(·; b), the gradient of either step            */
} ditto_work;

/* The workspace ditto_work_alloc returns for the run state s (the shape the
 * proof of ditto_round_with starts from, proofs/README.md): w_t, w_local
 * and g P writable doubles each, apart from each other, from the
 * workspace record and from the state's arrays. */
/*@ predicate ditto_work_shape{L}(ditto_work *ws, pflref_state *s) =
      \valid_read(ws) &&
      \valid(ws->w_t + (0 .. s->P - 1)) &&
      \valid(ws->w_local + (0 .. s->P - 1)) &&
      \valid(ws->g + (0 .. s->P - 1)) &&
      \separated(ws->w_t + (0 .. s->P - 1), ws->w_local + (0 .. s->P - 1),
                 ws->g + (0 .. s->P - 1), ws, s,
                 s->w + (0 .. s->P - 1), s->w0 + (0 .. s->P - 1),
                 s->v + (0 .. s->N * s->P - 1), s->accum + (0 .. s->P - 1),
                 s->mask + (0 .. s->P - 1), s->shared + (0 .. s->P - 1));
 */

static void *ditto_work_alloc(const pflref_problem *problem,
                              const pflref_hyper *hyper)
{
    (void)hyper;
    const size_t P = problem->model.P;
    ditto_work *ws = calloc(1, sizeof *ws);
    if (ws == NULL)
        return NULL;
    ws->w_t = pflref_work_doubles(&ws->list, P, 1);
    ws->w_local = pflref_work_doubles(&ws->list, P, 1);
    ws->g = pflref_work_doubles(&ws->list, P, 1);
    return pflref_work_ready(ws);
}

/* One personal step on batch q:
 *   v ← v − η (∇F_k(v; b) + λ ∂prox(v, ref))
 * ref is w^t or the moving global copy (ditto.prox_ref). */
static pflref_status personal_step(pflref_state *s, size_t k,
                                   const pflref_batches *b, size_t q,
                                   const double *ref, double *v, double *g,
                                   const pflref_trace *trace,
                                   pflref_error *err)
{
    const double eta = s->hyper->eta, lambda = s->hyper->lambda;
    const int prox = s->hyper->ditto.prox;
    const size_t P = s->P;
    const long t = (long)s->t;
    const pflref_model *m = &s->problem->model;
    pflref_status st = pflref_batch_grad(m, v,
                                         &s->problem->clients[k].train, b, q,
                                         s->ws, g, t, (long)k, err);
    if (st != PFLREF_OK)
        return st;
    /* v's running statistics from this training pass (bn.running) */
    if ((st = pflref_bn_running_move(&s->hyper->bn, m, s->ws, v, t, (long)k,
                                     (long)(q + 1), err)))
        return st;
    /* req: ditto.alg1.l7, ditto.eq2 */
    /* prox gradient scale: λ (squared) or λ/‖v − ref‖ (norm; 0 at v = ref),
     * over the parameters: batch-norm buffers (r_μ, r_v) are neither in
     * the norm nor pulled toward ref (torch's prox ranges over
     * parameters(); PFLlib's PerturbedGradientDescent) */
    double scale = lambda;
    if (prox == PFLREF_DITTO_PROX_NORM) {
        double sq = 0.0;
        for (size_t j = 0; j < m->nblocks; j++)
            for (size_t p = m->blocks[j].offset;
                 !m->blocks[j].is_buffer &&
                 p < m->blocks[j].offset + m->blocks[j].size; p++)
                sq += (v[p] - ref[p]) * (v[p] - ref[p]);
        scale = sq > 0.0 ? lambda / sqrt(sq) : 0.0;
    }
    pflref_optim_state *opt = pflref_optim_get(s, k, 1);
    if (opt != NULL) {
        /* the personal solver's optimizer (opt.*) on the gradient of
         * F_k(v) + λ prox(v, ref): d = ∇F_k(v; b) + λ ∂prox (the optimizer
         * skips the buffers) */
        for (size_t p = 0; p < P; p++)
            g[p] += scale * (v[p] - ref[p]);
        if (!pflref_optim_step(opt, m, NULL, eta, g, v))
            return pflref_error_diverge(err, t, (long)k, (long)(q + 1), "v");
        pflref_trace_emit(trace, PFLREF_EV_STEP, "train", t, (long)k,
                          (long)(q + 1), "v", v, P, PERSONAL_LINE[prox]);
        return PFLREF_OK;
    }
    for (size_t j = 0; j < m->nblocks; j++)
        for (size_t p = m->blocks[j].offset;
             !m->blocks[j].is_buffer &&
             p < m->blocks[j].offset + m->blocks[j].size; p++)
            v[p] -= eta * (g[p] + scale * (v[p] - ref[p]));
    if (!pflref_all_finite(v, P))
        return pflref_error_diverge(err, t, (long)k, (long)(q + 1), "v");
    pflref_trace_emit(trace, PFLREF_EV_STEP, "train", t, (long)k,
                      (long)(q + 1), "v", v, P, PERSONAL_LINE[prox]);
    return PFLREF_OK;
}

/* req: ditto.alg1.l5 */
/* One global step on batch q: w_k ← w_k − η ∇F_k(w_k; b). */
static pflref_status global_step(pflref_state *s, size_t k,
                                 const pflref_batches *b, size_t q,
                                 double *w_local, double *g,
                                 const pflref_trace *trace, pflref_error *err)
{
    const pflref_local_sgd job = pflref_local_sgd_plain(
        s, k, b, s->hyper->eta, "w_local", GLOBAL_LINE);
    return pflref_local_sgd_step(&job, q, w_local, g, s->ws, trace, err);
}

/* Device k's local work on its batches b (personal steps on pb: b, or
 * their own list) and its personal model v_k (P), in the order ditto.order
 * says.  Its frame is an assumption of the proof of ditto_round_with
 * (proofs/README.md): it writes v_k, w_local, g and *err (and the model
 * workspace's temporaries). */
/*@ assigns v_k[0 .. s->P - 1], ws->w_local[0 .. s->P - 1],
            ws->g[0 .. s->P - 1], *err;
 */
static pflref_status device_update(pflref_state *s, size_t k,
                                   const pflref_batches *b,
                                   const pflref_batches *pb, double *v_k,
                                   ditto_work *ws, const pflref_trace *trace,
                                   pflref_error *err)
{
    const pflref_ditto_hyper *hp = &s->hyper->ditto;
    const double *ref =
        hp->prox_ref == PFLREF_DITTO_REF_MOVING ? ws->w_local : ws->w_t;
    pflref_status st = PFLREF_OK;
    /* req: ditto.alg1.l6 */
    if (hp->order == PFLREF_DITTO_INTERLEAVED) {
        /* per batch: personal step, then global step, same batch */
        for (size_t q = 0; st == PFLREF_OK && q < b->nsteps; q++) {
            st = personal_step(s, k, b, q, ref, v_k, ws->g, trace, err);
            if (st == PFLREF_OK)
                st = global_step(s, k, b, q, ws->w_local, ws->g, trace, err);
        }
        return st;
    }
    /* all personal steps (on their own batches when separate), then the
     * global pass */
    for (size_t q = 0; st == PFLREF_OK && q < pb->nsteps; q++)
        st = personal_step(s, k, pb, q, ref, v_k, ws->g, trace, err);
    for (size_t q = 0; st == PFLREF_OK && q < b->nsteps; q++)
        st = global_step(s, k, b, q, ws->w_local, ws->g, trace, err);
    return st;
}

/* ditto.batches: separate needs every round's personal lists and the
 * personal_first order (interleaving pairs a personal step with the global
 * step's batch).  Under shared a schedule's personal lists are not read
 * (as FO leaves Per-FedAvg's D″ unread), so one schedule serves both. */
static pflref_status ditto_check(const pflref_problem *problem,
                                 const pflref_hyper *hyper,
                                 const pflref_schedule *schedule,
                                 const unsigned char *mask, pflref_error *err)
{
    (void)problem;
    (void)mask;
    const pflref_ditto_hyper *hp = &hyper->ditto;
    const int separate = hp->batches == PFLREF_DITTO_BATCHES_SEPARATE;
    if (separate && hp->order == PFLREF_DITTO_INTERLEAVED)
        return pflref_error_set(
            err, PFLREF_EINVAL, "algorithm.switches.ditto.order",
            "ditto.batches = separate gives the personal steps their own "
            "batches, which ditto.order = interleaved_shared_batch cannot "
            "pair with the global steps; use ditto.order = personal_first "
            "(PFLlib's ptrain() before train())");
    for (size_t t = 0; separate && t < schedule->T; t++) {
        if (schedule->rounds[t].personal != NULL)
            continue;
        char where[PFLREF_WHERE_MAX];
        snprintf(where, sizeof where, "schedule.rounds[%zu].personal", t);
        return pflref_error_set(
            err, PFLREF_EINVAL, where,
            "ditto.batches = separate takes the personal steps from their "
            "own batch lists, and round %zu has none (a generated schedule: "
            "give schedule.personal, PFLlib's -pls)",
            t);
    }
    return PFLREF_OK;
}

/* One round with the workspace ws = s->extra.  Proved call sites
 * (proofs/README.md): from the run's state, the validated plan and the
 * workspace, each device's block v_k lies in s->v and each w_k it sums is
 * P entries apart from the accumulator. */
/*@ requires state_global(s) && state_personal(s);
    requires round_plan(plan, s->N);
    requires ditto_work_shape(ws, s);
    requires \separated(err, ws, s, plan,
                        plan->clients + (0 .. plan->m - 1));
    requires \separated(plan->clients + (0 .. plan->m - 1), s);
    assigns ws->w_t[0 .. s->P - 1], ws->w_local[0 .. s->P - 1],
            ws->g[0 .. s->P - 1], s->accum[0 .. s->P - 1],
            s->w[0 .. s->P - 1], s->v[0 .. s->N * s->P - 1],
            s->hyper_round, *err;
 */
static pflref_status ditto_round_with(pflref_state *s, ditto_work *ws,
                                      const pflref_round_plan *plan,
                                      const pflref_trace *trace,
                                      pflref_error *err)
{
    const pflref_problem *pr = s->problem;
    const int weights = s->hyper->ditto.weights;
    const size_t P = s->P, N = s->N, m = plan->m;
    const size_t *const clients = plan->clients;
    double *const w_local = ws->w_local, *const v = s->v;

    /* req: ditto.alg1.l3 */
    pflref_round_begin(s, ws->w_t, trace);
    /* m_t = Σ_{k∈S_t} n_k */
    const double m_t = pflref_train_n(pr, clients, m);
    /* req: ditto.alg1.l4 */
    /*@ loop assigns j, w_local[0 .. P - 1], ws->g[0 .. P - 1],
                     v[0 .. N * P - 1], s->accum[0 .. P - 1],
                     s->hyper_round, *err;
     */
    for (size_t j = 0; j < m; j++) {
        const size_t k = clients[j];
        double *v_k = pflref_row(v, k, N, P);
        /* w_k ← w^t; v_k carries over */
        pflref_client_begin(s, k, "w_local", w_local, ws->w_t, trace);
        pflref_client_begin(s, k, "v", v_k, NULL, trace);
        pflref_client_lr(s, k, 0, 1);  /* η of k's train() (lr.count) */
        pflref_optim_begin(s, k);      /* its two optimizers (opt.state) */
        const pflref_batches *pb =
            s->hyper->ditto.batches == PFLREF_DITTO_BATCHES_SEPARATE
                ? &plan->personal[j]     /* the personal pass's own list */
                : &plan->batches[j];
        pflref_status st = device_update(s, k, &plan->batches[j], pb, v_k,
                                         ws, trace, err);
        if (st != PFLREF_OK)
            return st;
        /* req: ditto.alg1.l8 */
        pflref_client_end(s, k, "w_local", w_local, trace);
        pflref_client_end(s, k, "v", v_k, trace);
        const double c =
            weights == PFLREF_DITTO_WEIGHTS_UNIFORM
                ? 1.0 / (double)m                            /* 1/|S_t| */
                : (double)pr->clients[k].train.n / m_t;      /* n_k/m_t */
        pflref_accumulate(s->accum, c, w_local, P);
    }
    /* req: ditto.alg1.l9 */
    /* AGGREGATE: w^{t+1} ← Σ_{k∈S_t} c_k w_k */
    return pflref_round_end(s, SERVER_LINE[weights], trace, err);
}

/* The round under bn.aggregate = parameters_only on a model with batch
 * normalisation, PFLlib's reading (TsingZ0/PFLlib d832e76f6a23
 * system/flcore; ref/engine/bn_own.c): serverditto.py train() calls
 * send_models and aggregate_parameters of serverbase.py, so
 *   w_k ← (w^t on ¬B, r_k on B)   set_parameters (clientbase.py:67-69)
 *                                 copies parameters() into the client's
 *                                 self.model: its buffers B (r_μ, r_v) stay
 *                                 those its last train() left, w⁰'s until
 *                                 it first trains
 *   v_k                           self.model_per (clientditto.py), never
 *                                 sent nor set: its r_μ, r_v are its own
 *                                 under either reading (only its own
 *                                 ptrain() passes move them)
 *   r_k ← w_k's B after the device's local work
 *   w^{t+1} on ¬B ← Σ_{k∈S_t} c_k w_k  (Alg. 1 AGGREGATE, ditto.weights)
 *   w^{t+1} on B  ← w_{k₁} on B, k₁ the first participant (ascending id;
 *                   aggregate_parameters deep-copies uploaded_models[0],
 *                   serverbase.py:138-150)
 * The proximal term already ranges over parameters() only, so r_k never
 * enters it.  The "global" evaluation is then each client's self.model,
 * w's parameters with r_k (evaluate(), serverbase.py:194-203;
 * ref/engine/run.c).  Otherwise as ditto_round_with. */
static pflref_status ditto_round_keep(pflref_state *s, ditto_work *ws,
                                      const pflref_round_plan *plan,
                                      const pflref_trace *trace,
                                      pflref_error *err)
{
    const pflref_problem *pr = s->problem;
    const pflref_model *md = &pr->model;
    const int weights = s->hyper->ditto.weights;
    const size_t P = s->P, N = s->N, m = plan->m;
    double *const w_local = ws->w_local;
    pflref_status st = pflref_bn_own_alloc(s, err);
    if (st != PFLREF_OK)
        return st;
    pflref_round_begin(s, ws->w_t, trace);
    const double m_t = pflref_train_n(pr, plan->clients, m);
    for (size_t j = 0; j < m; j++) {
        const size_t k = plan->clients[j];
        double *v_k = pflref_row(s->v, k, N, P);
        double *r_k = pflref_bn_own_row(s, k);
        /* w_k ← w^t's parameters with the client's own r_μ, r_v */
        memcpy(w_local, ws->w_t, P * sizeof *w_local);
        pflref_bn_copy_buffers(md, w_local, r_k);
        pflref_client_begin(s, k, "w_local", w_local, NULL, trace);
        pflref_client_begin(s, k, "v", v_k, NULL, trace);
        pflref_client_lr(s, k, 0, 1);
        pflref_optim_begin(s, k);
        const pflref_batches *pb =
            s->hyper->ditto.batches == PFLREF_DITTO_BATCHES_SEPARATE
                ? &plan->personal[j]
                : &plan->batches[j];
        st = device_update(s, k, &plan->batches[j], pb, v_k, ws, trace, err);
        if (st != PFLREF_OK)
            return st;
        pflref_client_end(s, k, "w_local", w_local, trace);
        pflref_client_end(s, k, "v", v_k, trace);
        pflref_bn_copy_buffers(md, r_k, w_local);   /* what k's model holds */
        const double c =
            weights == PFLREF_DITTO_WEIGHTS_UNIFORM
                ? 1.0 / (double)m
                : (double)pr->clients[k].train.n / m_t;
        pflref_accumulate(s->accum, c, w_local, P);
    }
    /* the global's r_μ, r_v: the first participant's (uploaded_models[0]) */
    if (m > 0)
        pflref_bn_copy_buffers(md, s->accum,
                               pflref_bn_own_row(s, pflref_bn_first_upload(
                                                         plan, plan->clients[0])));
    return pflref_round_end(s, SERVER_LINE_KEEP[weights], trace, err);
}

static pflref_status ditto_round(pflref_state *s,
                                 const pflref_round_plan *plan,
                                 const pflref_trace *trace, pflref_error *err)
{
    if (pflref_bn_keeps_own(s))   /* bn.aggregate = parameters_only */
        return ditto_round_keep(s, s->extra, plan, trace, err);
    return ditto_round_with(s, s->extra, plan, trace, err);
}

const pflref_algorithm pflref_ditto = {
    .name = "ditto",
    .title = "Ditto (Li, Hu, Beirami, Smith, ICML 2021, Alg. 1)",
    .has_global = 1,
    .has_personal = 1,
    .personal_name = "v",
    .n_eval = 2,
    .eval = {{"global", PFLREF_SOURCE_GLOBAL},
             /* req: ditto.alg1.l10 */
             {"personalized", PFLREF_SOURCE_PERSONAL}},
    .check = ditto_check,
    .work_alloc = ditto_work_alloc,
    .work_free = pflref_work_free,
    .round = ditto_round,
    .opt_slots = 2,   /* 0: the global solver (w_k); 1: the personal
                         solver (v_k): PFLlib clientditto.py's optimizer
                         and poptimizer, two objects */
    .load_state = pflref_bn_own_load,   /* bn.aggregate's r_k */
};
