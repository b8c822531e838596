/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/algorithms/fedprox.c: FedProx, Algorithm 2 of
 *   T. Li, A. K. Sahu, M. Zaheer, M. Sanjabi, A. Talwalkar, V. Smith,
 *   "Federated Optimization in Heterogeneous Networks", MLSys 2020,
 *   arXiv 1812.06127v5.
 *
 * The box (Alg. 2, "FedProx (Proposed Framework)"; checked against the
 * paper's text):
 *   l. 1  Input: K, T, μ, γ, w⁰, N, p_k, k = 1, …, N
 *   l. 2  for t = 0, …, T − 1 do
 *   l. 3    Server selects a subset S_t of K devices at random (each
 *           device k is chosen with probability p_k)
 *   l. 4    Server sends w^t to all chosen devices
 *   l. 5    Each chosen device k ∈ S_t finds a w_k^{t+1} which is a
 *           γ_k^t-inexact minimizer of
 *           w_k^{t+1} ≈ argmin_w h_k(w; w^t) = F_k(w) + (μ/2)‖w − w^t‖²
 *   l. 6    Each device k ∈ S_t sends w_k^{t+1} back to the server
 *   l. 7    Server aggregates the w's as w^{t+1} = (1/K) Σ_{k∈S_t} w_k^{t+1}
 * with p_k = n_k/n, n = Σ_k n_k (Section 2, eq. (1)); γ_k^t-inexact is
 * Definition 2: ‖∇h_k(w*; w^t)‖ ≤ γ_k^t ‖∇h_k(w^t; w^t)‖ with
 * ∇h_k(w; w^t) = ∇F_k(w) + μ(w − w^t).
 *
 * The inexact solver of l. 5 is the schedule's local work: the steps of
 * device k's batch list, each
 *     w ← w − η (∇F_k(w; b) + μ (w − w^t))       (ref/engine/sgd.c)
 * from w = w^t; a straggler's γ-inexactness is its shorter list (the
 * schedule's batches are data, so partial work needs nothing else).
 *
 * S_t is a multiset of K draws (the round's plan->draws, data: drawn by
 * the spec reader for a generated schedule, docs/sampling.md); the
 * participants plan->clients are its distinct ids.  A device drawn c_k
 * times trains once, from w^t, and counts c_k times in l. 7:
 *     w^{t+1} = Σ_{k∈S_t} (c_k/K) w_k^{t+1}.
 *
 * Symbols:  w^t ↔ ws->w_t (P; s->w before the round)   w_k ↔ ws->w_local
 *           μ ↔ hyper->fedprox.mu   η ↔ hyper->eta   K ↔ plan->n_draws
 *           c_k ↔ ws->c[k]   n_k ↔ clients[k].train.n
 *           S_t ↔ plan->draws (paper) or plan->clients (uniform_weighted)
 *
 * Switch fedprox.sampling (the paper's reading first):
 *   paper             K draws with replacement, P(k) = n_k/n; weights c_k/K
 *   uniform_weighted  S_t the schedule's sample without replacement (its
 *                     participants), weights n_k / Σ_{S_t} n_j: the
 *                     authors' code (litian96/FedProx d2a4501f319f,
 *                     flearn/trainers/fedbase.py:112 select_clients draws
 *                     uniformly without replacement, :121-123 aggregate
 *                     weighs by n_k) and PFLlib (d832e76f6a23,
 *                     serverbase.py:99 and :136); presets official and
 *                     pfllib.  The round's draws, if any, are not read.
 *
 * Switch bn.aggregate (a model with batch normalisation):
 *   average           r_μ, r_v travel with w and are averaged by l. 7
 *   parameters_only   PFLlib's exchange (serverprox.py train() calls
 *                     send_models and aggregate_parameters of serverbase.py;
 *                     clientprox.py:61-64 set_parameters copies
 *                     parameters() only): w_k starts from w^t's parameters
 *                     with the r_μ, r_v device k's model last left (w⁰'s
 *                     before it first trains; s->bn_own, ref/engine/
 *                     bn_own.c), the proximal term ranges over the
 *                     parameters, and w^{t+1}'s r_μ, r_v are the first
 *                     participant's (ascending id; serverbase.py:138-150)
 *
 * State and work: w is the state's w; no other state lives across rounds
 * (under bn.aggregate = parameters_only, the devices' own r_μ, r_v).
 * The buffers of a round are fedprox_work.  Client optimizer (opt.*):
 * one per client update, stepping on d = ∇F_k + μ(w − w^t)
 * (docs/optimizers.md); PFLlib's PerturbedGradientDescent is that plain
 * step.
 *
 * Trace: CLIENT_BEGIN / STEP / CLIENT_END "w_local" per participant, NOTE
 * "c" (c_k/K or n_k/Σ n_j, the aggregation weight) after it, SERVER "w".
 * Determinism: participants train and are summed in ascending id.
 * Cost per round: Σ_{k∈S_t} (local steps × one gradient) + O(K + N·P).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "algorithms/algorithms.h"
#include "engine/bn_own.h"
#include "engine/work.h"

static const char *const CLIENT_LINE =
    "Alg. 2 l. 5: w ← w − η (∇F_k(w; b) + μ(w − w^t))";
static const char *const SERVER_LINE[] = {
    "Alg. 2 l. 7: w^{t+1} ← (1/K) Σ_{k∈S_t} w_k^{t+1}  (c_k/K per device)",
    "w^{t+1} ← Σ_{k∈S_t} (n_k/Σ_{S_t} n_j) w_k^{t+1}"};

/* FedProx's work buffers (zero-filled; none carried between rounds). */
typedef struct {
    pflref_work list; /* the allocations (ref/engine/work.h)              */
    double *w_t;      /* P: w^t, the round-start global model (l. 4)      */
    double *w_local;  /* P: w_k, device k's iterate (l. 5)                */
    double *g;        /* P: the step's direction                          */
    double *c;        /* N: c_k, device k's draws this round (paper)      */
} fedprox_work;

static void *fedprox_work_alloc(const pflref_problem *problem,
                                const pflref_hyper *hyper)
{
    (void)hyper;
    const size_t P = problem->model.P;
    fedprox_work *ws = calloc(1, sizeof *ws);
    if (ws == NULL)
        return NULL;
    ws->w_t = pflref_work_doubles(&ws->list, P, 1);
    ws->w_local = pflref_work_doubles(&ws->list, P, 1);
    ws->g = pflref_work_doubles(&ws->list, P, 1);
    ws->c = pflref_work_doubles(&ws->list, problem->N, 1);
    return pflref_work_ready(ws);
}

/* 1 when id is among the m ids of list. */
static int listed(const size_t *list, size_t m, size_t id)
{
    for (size_t j = 0; j < m; j++)
        if (list[j] == id)
            return 1;
    return 0;
}

/* Round t's draws under fedprox.sampling = paper: present, K of them (K =
 * round 0's count, so every round draws the same K), each a participant,
 * and every participant drawn (ids < N: the reader's test). */
static pflref_status check_draws(const pflref_round_plan *r, size_t t,
                                 size_t K, pflref_error *err)
{
    char where[PFLREF_WHERE_MAX];
    snprintf(where, sizeof where, "schedule.rounds[%zu].draws", t);
    /* req: fedprox.alg2.l3 */
    if (r->draws == NULL || r->n_draws == 0)
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "fedprox.sampling = paper needs the round's "
                                "K draws (ids, repetitions allowed)");
    if (r->n_draws != K)
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "%zu draws where round 0 has K = %zu",
                                r->n_draws, K);
    for (size_t q = 0; q < r->n_draws; q++)
        if (!listed(r->clients, r->m, r->draws[q])) {
            char at[PFLREF_WHERE_MAX];
            snprintf(at, sizeof at, "%s[%zu]", where, q);
            return pflref_error_set(err, PFLREF_EINVAL, at,
                                    "drawn client %zu is not a participant "
                                    "of the round (clients)", r->draws[q]);
        }
    for (size_t j = 0; j < r->m; j++)
        if (!listed(r->draws, r->n_draws, r->clients[j])) {
            snprintf(where, sizeof where, "schedule.rounds[%zu].clients[%zu]",
                     t, j);
            return pflref_error_set(err, PFLREF_EINVAL, where,
                                    "participant %zu is not among the "
                                    "round's draws", r->clients[j]);
        }
    return PFLREF_OK;
}

/* μ finite and ≥ 0 (the registry's bounds); under paper every round's
 * draws as check_draws says. */
static pflref_status fedprox_check(const pflref_problem *problem,
                                   const pflref_hyper *hyper,
                                   const pflref_schedule *schedule,
                                   const unsigned char *mask,
                                   pflref_error *err)
{
    (void)problem;
    (void)mask;
    if (hyper->fedprox.sampling != PFLREF_FEDPROX_SAMPLING_PAPER ||
        schedule->T == 0)
        return PFLREF_OK;
    const size_t K = schedule->rounds[0].n_draws;
    for (size_t t = 0; t < schedule->T; t++) {
        pflref_status st = check_draws(&schedule->rounds[t], t, K, err);
        if (st != PFLREF_OK)
            return st;
    }
    return PFLREF_OK;
}

/* c_k for every participant k of the round: its number of draws over K
 * (paper), or n_k / Σ_{S_t} n_j (uniform_weighted); ws->c[k] := c_k. */
static void round_weights(const pflref_state *s, const pflref_round_plan *plan,
                          fedprox_work *ws)
{
    const pflref_problem *pr = s->problem;
    if (s->hyper->fedprox.sampling == PFLREF_FEDPROX_SAMPLING_PAPER) {
        /* req: fedprox.alg2.l7 */
        const double K = (double)plan->n_draws;
        for (size_t j = 0; j < plan->m; j++)
            ws->c[plan->clients[j]] = 0.0;
        for (size_t q = 0; q < plan->n_draws; q++)
            ws->c[plan->draws[q]] += 1.0;
        for (size_t j = 0; j < plan->m; j++)
            ws->c[plan->clients[j]] /= K;     /* c_k / K */
        return;
    }
    /* uniform_weighted: n_k / Σ_{S_t} n_j */
    const double m_t = pflref_train_n(pr, plan->clients, plan->m);
    for (size_t j = 0; j < plan->m; j++) {
        const size_t k = plan->clients[j];
        ws->c[k] = (double)pr->clients[k].train.n / m_t;
    }
}

static pflref_status fedprox_round(pflref_state *s,
                                   const pflref_round_plan *plan,
                                   const pflref_trace *trace,
                                   pflref_error *err)
{
    fedprox_work *ws = s->extra;
    const double mu = s->hyper->fedprox.mu;          /* μ */
    const int sampling = s->hyper->fedprox.sampling;
    const size_t P = s->P;

    const int keep = pflref_bn_keeps_own(s);      /* bn.aggregate */
    if (keep) {
        pflref_status st = pflref_bn_own_alloc(s, err);
        if (st != PFLREF_OK)
            return st;
    }
    /* req: fedprox.alg2.l1, fedprox.alg2.l2, fedprox.alg2.l4 */
    /* w^t ← w; the accumulator ← 0 */
    pflref_round_begin(s, ws->w_t, trace);
    /* req: fedprox.alg2.l3, fedprox.eq1 */
    round_weights(s, plan, ws);
    for (size_t j = 0; j < plan->m; j++) {
        const size_t k = plan->clients[j];
        /* req: fedprox.alg2.l5 */
        /* w_k ≈ argmin h_k(w; w^t): from w^t, the schedule's steps of
         * w ← w − η (∇F_k(w; b) + μ (w − w^t)) */
        if (keep) {   /* parameters() from w^t, its own r_μ, r_v */
            memcpy(ws->w_local, ws->w_t, P * sizeof *ws->w_local);
            pflref_bn_copy_buffers(&s->problem->model, ws->w_local,
                                   pflref_bn_own_row(s, k));
            pflref_client_begin(s, k, "w_local", ws->w_local, NULL, trace);
        } else
            pflref_client_begin(s, k, "w_local", ws->w_local, ws->w_t,
                                trace);
        pflref_client_lr(s, k, 0, 1);  /* η of k's train() (lr.count) */
        pflref_optim_begin(s, k);      /* its optimizer (opt.state) */
        pflref_local_sgd job = pflref_local_sgd_plain(
            s, k, &plan->batches[j], s->hyper->eta, "w_local", CLIENT_LINE);
        job.mu = mu;
        job.ref = ws->w_t;
        pflref_status st = pflref_local_sgd_run(&job, ws->w_local, ws->g,
                                                s->ws, trace, err);
        if (st != PFLREF_OK)
            return st;
        /* req: fedprox.alg2.l6 */
        pflref_client_end(s, k, "w_local", ws->w_local, trace);
        if (keep)     /* what device k's model now holds */
            pflref_bn_copy_buffers(&s->problem->model,
                                   pflref_bn_own_row(s, k), ws->w_local);
        pflref_trace_emit(trace, PFLREF_EV_NOTE, "train", (long)s->t, (long)k,
                          -1, "c", &ws->c[k], 1, SERVER_LINE[sampling]);
        /* req: fedprox.alg2.l7 */
        pflref_accumulate(s->accum, ws->c[k], ws->w_local, P);
    }
    /* bn.aggregate = parameters_only: w^{t+1}'s r_μ, r_v are the first
     * participant's (deepcopy(uploaded_models[0])) */
    if (keep && plan->m > 0)
        pflref_bn_copy_buffers(&s->problem->model, s->accum,
                               pflref_bn_own_row(s, pflref_bn_first_upload(
                                                         plan, plan->clients[0])));
    /* w^{t+1} ← the sum above */
    return pflref_round_end(s, SERVER_LINE[sampling], trace, err);
}

const pflref_algorithm pflref_fedprox = {
    .name = "fedprox",
    .title = "FedProx (Li et al., MLSys 2020, Alg. 2)",
    .has_global = 1,
    .n_eval = 1,
    .eval = {{"global", PFLREF_SOURCE_GLOBAL}},
    .check = fedprox_check,
    .work_alloc = fedprox_work_alloc,
    .work_free = pflref_work_free,
    .round = fedprox_round,
    .opt_slots = 1,   /* the local solver's optimizer (l. 5) */
    .load_state = pflref_bn_own_load,   /* bn.aggregate's own r_μ, r_v */
};
