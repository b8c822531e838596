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
 *         weights, PFLlib adds 1e-5 to the norm)
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
 * Switches (the paper's reading first; notes §2.8):
 *   fedfomo.distance  l2: ‖·‖₂ (the paper) | l1: ‖·‖₁ (the code's default)
 *   fedfomo.self      included: C = S_i^t ∪ {i} (the code, client.py:320)
 *                     | excluded: C = S_i^t
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
#include "engine/work.h"

static const char *const WEIGHT_LINE =
    "Alg. 1 l. 3-4: w_n = max(0, (L_i(φ_i) − L_i(θ_n)) / ‖θ_n − φ_i‖), "
    "normalised";
static const char *const UPDATE_LINE =
    "Alg. 1 l. 5: φ_i ← φ_i + Σ_n w_n (θ_n − φ_i)";
static const char *const AFFINITY_LINE = "P_{i,n} ← P_{i,n} + w_n";
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
    return pflref_work_ready(ws);
}

/* Every peer list: ids distinct and never the client itself. */
static pflref_status fedfomo_check(const pflref_problem *problem,
                                   const pflref_hyper *hyper,
                                   const pflref_schedule *schedule,
                                   const unsigned char *mask,
                                   pflref_error *err)
{
    (void)problem;
    (void)hyper;
    (void)mask;
    for (size_t t = 0; t < schedule->T; t++) {
        const pflref_round_plan *r = &schedule->rounds[t];
        if (r->peers == NULL)
            continue;
        for (size_t j = 0; j < r->m; j++) {
            const size_t *ids = r->peers->idx + r->peers->step_off[j];
            const size_t M = r->peers->step_off[j + 1] - r->peers->step_off[j];
            for (size_t q = 0; q < M; q++) {
                int bad = ids[q] == r->clients[j];
                for (size_t e = 0; e < q && !bad; e++)
                    bad = ids[e] == ids[q];
                if (!bad)
                    continue;
                char where[PFLREF_WHERE_MAX];
                snprintf(where, sizeof where,
                         "schedule.rounds[%zu].peers[%zu][%zu]", t, j, q);
                return pflref_error_set(
                    err, PFLREF_EINVAL, where,
                    ids[q] == r->clients[j]
                        ? "client %zu is listed as its own peer (its own "
                          "model is a candidate through fedfomo.self)"
                        : "peer %zu is listed twice",
                    ids[q]);
            }
        }
    }
    return PFLREF_OK;
}

/* L_i(θ): the mean loss on client i's validation split, or on its whole
 * training set when the problem has no validation splits. */
static pflref_status val_loss(const pflref_state *s, size_t i,
                              const double *theta, double *L,
                              pflref_error *err)
{
    const pflref_problem *pr = s->problem;
    const pflref_data *D = pflref_problem_has_val(pr)
                               ? &pr->clients[i].val
                               : &pr->clients[i].train;
    pflref_status st = pflref_model_loss(&pr->model, theta, D, NULL, D->n,
                                         s->ws, L);
    if (st != PFLREF_OK)
        return pflref_error_set(err, st, NULL,
                                "the validation loss L_i of client %zu "
                                "failed", i);
    if (!isfinite(*L))
        return pflref_error_diverge(err, (long)s->t, (long)i, -1,
                                    "the validation loss L_i");
    return PFLREF_OK;
}

/* ‖x − a‖₂ or ‖x − a‖₁ (fedfomo.distance), summed in index order. */
static double distance(const double *x, const double *a, size_t P, int l1)
{
    double sum = 0.0;
    for (size_t p = 0; p < P; p++)
        sum += l1 ? fabs(x[p] - a[p]) : (x[p] - a[p]) * (x[p] - a[p]);
    return l1 ? sum : sqrt(sum);
}

/* req: fedfomo.alg1.l3 */
/* l. 3: r_n for candidate n against anchor a with L_a = L_i(a); r_n = 0
 * when θ_n = a (distance 0, the documented rule). */
static pflref_status ratio(const pflref_state *s, size_t i, size_t n,
                           const double *a, double L_a, fedfomo_work *ws,
                           pflref_error *err)
{
    const double *theta_n = ws->theta_prev + n * s->P;
    const double d = distance(theta_n, a, s->P,
                              s->hyper->fedfomo.distance ==
                                  PFLREF_FEDFOMO_DISTANCE_L1);
    ws->r[n] = 0.0;
    if (d == 0.0)
        return PFLREF_OK;
    double L_n;
    pflref_status st = val_loss(s, i, theta_n, &L_n, err);
    if (st == PFLREF_OK)
        ws->r[n] = (L_a - L_n) / d;
    return st;
}

/* Alg. 1 l. 2-5 and 8 for client i (participant j of plan): the weights
 * w_n, φ_i ← φ_i + Σ w_n (θ_n − φ_i), and P_{i,·} += w. */
static pflref_status federated_update(pflref_state *s,
                                      const pflref_round_plan *plan,
                                      size_t j, fedfomo_work *ws,
                                      const pflref_trace *trace,
                                      pflref_error *err)
{
    const size_t P = s->P, N = s->N, i = plan->clients[j];
    const long t = (long)s->t;
    double *a = ws->phi + i * P;    /* φ_i^{t−1}, becomes φ_i^t */
    memset(ws->weight, 0, N * sizeof *ws->weight);
    double L_a;
    pflref_status st = val_loss(s, i, a, &L_a, err);
    /* req: fedfomo.alg1.l2, fedfomo.alg1.l3 */
    /* l. 2-3: r_n over C = S_i^t (∪ {i}) */
    const pflref_batches *S = plan->peers;
    const size_t M = S == NULL ? 0 : S->step_off[j + 1] - S->step_off[j];
    for (size_t q = 0; st == PFLREF_OK && q < M; q++) {
        const size_t n = S->idx[S->step_off[j] + q];
        st = ratio(s, i, n, a, L_a, ws, err);
        ws->weight[n] = ws->r[n] > 0.0 ? ws->r[n] : 0.0;   /* max(r_n, 0) */
    }
    if (st == PFLREF_OK &&
        s->hyper->fedfomo.self == PFLREF_FEDFOMO_SELF_INCLUDED) {
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
        ws->weight[n] /= total;
    pflref_trace_emit(trace, PFLREF_EV_NOTE, "train", t, (long)i, -1,
                      "weights", ws->weight, N, WEIGHT_LINE);
    /* req: fedfomo.alg1.l5 */
    /* l. 5: φ_i^t = a + Σ_n w_n (θ_n − a), n ascending, a fixed */
    for (size_t p = 0; p < P; p++) {
        const double a_p = a[p];
        double x = a_p;
        for (size_t n = 0; n < N; n++)
            if (ws->weight[n] > 0.0)
                x += ws->weight[n] * (ws->theta_prev[n * P + p] - a_p);
        a[p] = x;
    }
    if (!pflref_all_finite(a, P))
        return pflref_error_diverge(err, t, (long)i, 0, "phi");
    pflref_trace_emit(trace, PFLREF_EV_NOTE, "train", t, (long)i, -1, "phi",
                      a, P, UPDATE_LINE);
    /* req: fedfomo.alg1.l8 */
    /* l. 8: P_{i,n} += w_n */
    double *row = ws->affinity + i * N;
    for (size_t n = 0; n < N; n++)
        row[n] += ws->weight[n];
    pflref_trace_emit(trace, PFLREF_EV_NOTE, "train", t, (long)i, -1, "P",
                      row, N, AFFINITY_LINE);
    return PFLREF_OK;
}

/* The start: every anchor φ_i⁰ = w⁰ (θ_i⁰ = w⁰ is the state's v_i, and
 * P = 0 is the zero-filled workspace). */
static pflref_status fedfomo_init(pflref_state *s, pflref_error *err)
{
    (void)err;
    fedfomo_work *ws = s->extra;
    for (size_t i = 0; i < s->N; i++)
        memcpy(ws->phi + i * s->P, s->w0, s->P * sizeof *s->w0);
    return PFLREF_OK;
}

static pflref_status fedfomo_round(pflref_state *s,
                                   const pflref_round_plan *plan,
                                   const pflref_trace *trace,
                                   pflref_error *err)
{
    fedfomo_work *ws = s->extra;
    const size_t P = s->P, N = s->N;
    const double eta = s->hyper->eta;   /* η */
    /* req: fedfomo.alg1.l1 */
    /* l. 1: the uploads θ_n^{t−1} every download of this round sees */
    memcpy(ws->theta_prev, s->v, N * P * sizeof *s->v);
    for (size_t j = 0; j < plan->m; j++) {
        const size_t i = plan->clients[j];
        double *theta_i = s->v + i * P;
        pflref_status st = federated_update(s, plan, j, ws, trace, err);
        if (st != PFLREF_OK)
            return st;
        /* req: fedfomo.alg1.l6 */
        /* l. 6: θ_i ← local SGD from φ_i^t */
        pflref_client_begin(s, i, "theta", theta_i, ws->phi + i * P, trace);
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
};
