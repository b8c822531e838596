/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/algorithms/fedamp.c: FedAMP, Algorithm 1 of
 *   Y. Huang, L. Chu, Z. Zhou, L. Wang, J. Liu, J. Pei, Y. Zhang,
 *   "Personalized Cross-Silo Federated Learning on Non-IID Data",
 *   AAAI 2021, arXiv 2007.03797v5,
 * with A(x) = 1 − e^{−x/σ}, the attention-inducing function of its
 * experiments, so A'(x) = e^{−x/σ}/σ, and a constant α_k = α.
 *
 * The box (Alg. 1, "FedAMP"), as trace/fedamp.req numbers it:
 *   l. 1  Input: the initial personalised models w_1⁰, …, w_m⁰; α_k, λ
 *   l. 2  for k = 1, 2, …, K do
 *   l. 3    the cloud server computes, for every client i, the
 *           personalised cloud model (message passing, eq. (6)):
 *             u_i^k = ξ_{i,1} w_1^{k−1} + … + ξ_{i,m} w_m^{k−1},
 *             ξ_{i,j} = α_k A'(‖w_i^{k−1} − w_j^{k−1}‖²)   (j ≠ i),
 *             ξ_{i,i} = 1 − Σ_{j≠i} ξ_{i,j}
 *   l. 4    and sends u_i^k to client i
 *   l. 5    client i computes w_i^k = argmin_w F_i(w) +
 *           (λ/(2α_k)) ‖w − u_i^k‖²  (eq. (7))
 *   l. 6    and uploads w_i^k
 * Output: w_1^K, …, w_m^K.
 * (The box's text was not retrievable verbatim here; its content as
 * docs/algorithms/fedamp.md gives it.  ξ carries no factor 2, as PFLlib's
 * serveramp.py:88 computes it.)
 *
 * pflref's reading of l. 5: the schedule's local steps on that objective,
 *     w ← w − η (∇F_i(w; b) + (λ/α_k)(w − u_i^k))      (ref/engine/sgd.c)
 * from w = u_i^k (fedamp.start = message: the message is the point the
 * proximal step is centred on, as FedProx starts at w^t).  The paper has
 * every client take part in every round (cross-silo); a schedule with
 * partial participation runs l. 3-6 for its participants, every ξ and
 * u_i^k over every client's latest w_j (a client outside the round keeps
 * w_i, and is seen stale by the others).  ξ_{i,i} < 0 (α_k large against
 * σ/(m − 1)) is allowed: u_i^k stays the affine combination l. 3 writes
 * (weights summing to 1); the theorems' bound on α_k is a sufficient
 * condition for convergence, not a precondition of the formula, and
 * PFLlib's defaults (α = σ = 1, 20 clients) reach it.
 *
 * Symbols:  w_i^k ↔ s->v + i·P (trace "w_i")   w_j^{k−1} ↔ ws->w_prev + j·P
 *           u_i^k ↔ ws->u (P)   ξ_{i,·} ↔ ws->xi (N)   α_k ↔ fedamp.alpha_k
 *           λ ↔ fedamp.lambda   σ ↔ fedamp.sigma   η ↔ hyper->eta
 *
 * Switches (the paper's reading first; TsingZ0/PFLlib d832e76f6a23,
 * preset pfllib):
 *   fedamp.peers  all: j over every client | previous: j over the previous
 *                 round's participants only (serveramp.py:72-103
 *                 send_models iterates self.uploaded_models, filled by the
 *                 last receive_models; in the first round it sends
 *                 nothing, and u_i = w_i⁰ = w⁰ as with no peers here)
 *   fedamp.start  message: from u_i^k | own: from w_i^{k−1} (clientamp.py
 *                 :22 trains self.model; set_parameters, :57-59, writes
 *                 u_i only into client_u)
 *   fedamp.prox   squared: (λ/α_k)(w − u_i^k) in every step | detached:
 *                 none (clientamp.py:40-42 adds 0.5 λ/α ‖w − u‖ built from
 *                 p.data, which carries no gradient: plain SGD steps)
 *   lr.*          η of client i's l. 5 (pflref_client_lr): the round's
 *                 decay, or under lr.count = trainings the decay of i's
 *                 own trainings (PFLlib's -ld: clientamp.py:50-51 steps
 *                 clientbase.py:48-51's ExponentialLR at the end of each
 *                 train(), so only the clients that trained decay; preset
 *                 pfllib sets lr.count = trainings).  α_k, λ and σ never
 *                 decay (PFLlib reads them as floats, clientamp.py:13-14,
 *                 serveramp.py:20-21)
 *
 *   bn.aggregate  average (the default): a model with batch normalisation
 *                 is refused (‖w_i − w_j‖² and the proximal term would
 *                 range over its running statistics) | parameters_only
 *                 (PFLlib's reading; preset pfllib): only parameters()
 *                 travel (serveramp.py:84-85 measures ‖w_i − w_j‖² over
 *                 parameters(), :94-96 mixes parameters() into u_i;
 *                 clientamp.py:57-59 writes them into client_u, :40-42's
 *                 norm is over parameters()), so with B the buffer
 *                 entries r_μ, r_v: ‖w_i − w_j‖² over ¬B, u_i^k on B ←
 *                 w_i^{k−1}'s own (the statistics client i's model holds),
 *                 and the proximal term never pulls B (ref/engine/sgd.c)
 *
 * State and work: w_i is the state's v_i; nothing else lives across
 * rounds but the previous round's participants (ws->uploaded, a fact of
 * the schedule: a re-synchronised run recomputes it round by round).
 * Trace: per participant NOTE "xi" (N: ξ_{i,j}, 0 off the peers), NOTE
 * "u" (u_i^k), then the local steps as "w_i" (CLIENT_BEGIN, STEP,
 * CLIENT_END).
 * Determinism: participants in ascending id, every ξ and u_i^k from the
 * snapshot w^{k−1} taken at the round's start; ‖·‖² and the sums over j
 * (ascending, ξ_{i,i} in its place) and p in index order.
 * Cost per round: O(|S_k| · N · P) for the messages + the local steps.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "algorithms/algorithms.h"
#include "engine/bn_own.h"
#include "engine/work.h"

static const char *const XI_LINE =
    "Alg. 1 l. 3: ξ_{i,j} = α_k e^{−‖w_i − w_j‖²/σ}/σ, "
    "ξ_{i,i} = 1 − Σ_{j≠i} ξ_{i,j}";
static const char *const U_LINE =
    "Alg. 1 l. 3: u_i^k = Σ_j ξ_{i,j} w_j^{k−1}";
static const char *const LOCAL_LINE[] = {
    "Alg. 1 l. 5: w ← w − η (∇F_i(w; b) + (λ/α_k)(w − u_i^k))",
    "w ← w − η ∇F_i(w; b)  (fedamp.prox = detached)"};

/* FedAMP's work buffers (zero-filled). */
typedef struct {
    pflref_work list;        /* the allocations (ref/engine/work.h)        */
    double *w_prev;          /* N×P: w_j^{k−1}, the round-start snapshot   */
    double *u;               /* P: u_i^k, the current client's message     */
    double *xi;              /* N: ξ_{i,j} of the current client           */
    double *g;               /* P: a step's direction                      */
    unsigned char *uploaded; /* N: 1 = took part in the previous round     */
} fedamp_work;

static void *fedamp_work_alloc(const pflref_problem *problem,
                               const pflref_hyper *hyper)
{
    (void)hyper;
    const size_t P = problem->model.P, N = problem->N;
    fedamp_work *ws = calloc(1, sizeof *ws);
    if (ws == NULL)
        return NULL;
    ws->w_prev = pflref_work_doubles(&ws->list, N, P);
    ws->u = pflref_work_doubles(&ws->list, P, 1);
    ws->xi = pflref_work_doubles(&ws->list, N, 1);
    ws->g = pflref_work_doubles(&ws->list, P, 1);
    ws->uploaded = pflref_work_flags(&ws->list, N);
    return pflref_work_ready(ws);
}

/* The registry holds α_k > 0, λ ≥ 0, σ > 0, all finite; here the model:
 * one without batch normalisation under bn.aggregate = average (the
 * distances and the proximal term range over every entry of w, so running
 * statistics would enter them); under parameters_only they range over
 * parameters() and each client keeps its own. */
static pflref_status fedamp_check(const pflref_problem *problem,
                                  const pflref_hyper *hyper,
                                  const pflref_schedule *schedule,
                                  const unsigned char *mask,
                                  pflref_error *err)
{
    (void)mask;
    if (problem->model.bn && !pflref_bn_keeps_own_in(problem, hyper))
        return pflref_error_set(err, PFLREF_EINVAL, "model",
                                "fedamp: a model with batch normalisation "
                                "needs bn.aggregate = parameters_only "
                                "(PFLlib's reading: distances, messages "
                                "and the proximal term over parameters(), "
                                "each client's running statistics its "
                                "own); under average ‖w_i − w_j‖² and the "
                                "proximal term would include its running "
                                "statistics");
    return pflref_bn_no_first_upload(
        schedule, "fedamp keeps no global model",
        "each message u_i^k takes client i's own running statistics; PFLlib "
        "serveramp.py:72-103 sends each client its u_i, never a global model",
        err);
}

/* ‖x − y‖², summed in index order; over the parameters only (skip =
 * the model's blocks, buffers left out) when skip is given. */
static double sq_dist(const double *x, const double *y, size_t P,
                      const pflref_model *skip)
{
    double sum = 0.0;
    if (skip == NULL) {
        for (size_t p = 0; p < P; p++)
            sum += (x[p] - y[p]) * (x[p] - y[p]);
        return sum;
    }
    for (size_t b = 0; b < skip->nblocks; b++) {
        const pflref_block *B = &skip->blocks[b];
        for (size_t p = B->offset; !B->is_buffer && p < B->offset + B->size;
             p++)
            sum += (x[p] - y[p]) * (x[p] - y[p]);
    }
    return sum;
}

/* req: fedamp.alg1.l3, fedamp.eq_a */
/* l. 3 for client i: ws->xi := ξ_{i,·} over the peers (every other client,
 * or the previous round's participants), ξ_{i,i} = 1 − Σ_{j≠i} ξ_{i,j};
 * ws->u := Σ_j ξ_{i,j} w_j^{k−1}.  Fails as divergence when u_i^k is not
 * finite. */
static pflref_status message(pflref_state *s, size_t i, fedamp_work *ws,
                             const pflref_trace *trace, pflref_error *err)
{
    const pflref_fedamp_hyper *h = &s->hyper->fedamp;
    const size_t P = s->P, N = s->N;
    const long t = (long)s->t;
    const int previous = h->peers == PFLREF_FEDAMP_PEERS_PREVIOUS;
    const double *w_i = ws->w_prev + i * P;
    /* bn.aggregate = parameters_only: parameters() only travel */
    const pflref_model *keep =
        pflref_bn_keeps_own(s) ? &s->problem->model : NULL;
    double others = 0.0;
    for (size_t j = 0; j < N; j++) {
        ws->xi[j] = 0.0;
        if (j == i || (previous && !ws->uploaded[j]))
            continue;
        /* ξ_{i,j} = α_k A'(‖w_i − w_j‖²), A'(x) = e^{−x/σ}/σ */
        const double d = sq_dist(w_i, ws->w_prev + j * P, P, keep);
        ws->xi[j] = h->alpha_k * (exp(-d / h->sigma) / h->sigma);
        others += ws->xi[j];
    }
    ws->xi[i] = 1.0 - others;   /* ξ_{i,i} = 1 − Σ_{j≠i} ξ_{i,j} */
    pflref_trace_emit(trace, PFLREF_EV_NOTE, "train", t, (long)i, -1, "xi",
                      ws->xi, N, XI_LINE);
    /* u_i^k = Σ_j ξ_{i,j} w_j^{k−1}, j ascending */
    for (size_t p = 0; p < P; p++) {
        double x = 0.0;
        for (size_t j = 0; j < N; j++)
            x += ws->xi[j] * ws->w_prev[j * P + p];
        ws->u[p] = x;
    }
    if (keep != NULL)   /* u_i^k's r_μ, r_v: client i's own */
        pflref_bn_copy_buffers(keep, ws->u, w_i);
    if (!pflref_all_finite(ws->u, P))
        return pflref_error_diverge(err, t, (long)i, 0, "u");
    /* req: fedamp.alg1.l4 */
    pflref_trace_emit(trace, PFLREF_EV_NOTE, "train", t, (long)i, -1, "u",
                      ws->u, P, U_LINE);
    return PFLREF_OK;
}

static pflref_status fedamp_round(pflref_state *s,
                                  const pflref_round_plan *plan,
                                  const pflref_trace *trace,
                                  pflref_error *err)
{
    fedamp_work *ws = s->extra;
    const pflref_fedamp_hyper *h = &s->hyper->fedamp;
    const size_t P = s->P, N = s->N;
    const int detached = h->prox == PFLREF_FEDAMP_PROX_DETACHED;
    /* req: fedamp.alg1.l1, fedamp.alg1.l2 */
    /* the uploads w_j^{k−1} every message of this round is formed from */
    memcpy(ws->w_prev, s->v, N * P * sizeof *s->v);
    for (size_t q = 0; q < plan->m; q++) {
        const size_t i = plan->clients[q];
        double *w_i = s->v + i * P;
        pflref_status st = message(s, i, ws, trace, err);
        if (st != PFLREF_OK)
            return st;
        /* req: fedamp.alg1.l5 */
        /* l. 5: w_i^k ≈ argmin F_i(w) + (λ/(2α_k))‖w − u_i^k‖², from
         * u_i^k (fedamp.start = own: from w_i^{k−1}) */
        pflref_client_begin(s, i, "w_i", w_i,
                            h->start == PFLREF_FEDAMP_START_OWN ? NULL
                                                                : ws->u,
                            trace);
        pflref_client_lr(s, i, 0, 1);  /* η of i's train() (lr.count) */
        pflref_local_sgd job = pflref_local_sgd_plain(
            s, i, &plan->batches[q], s->hyper->eta, "w_i",
            LOCAL_LINE[detached]);
        job.mu = detached ? 0.0 : h->lambda / h->alpha_k;   /* λ/α_k */
        job.ref = ws->u;
        st = pflref_local_sgd_run(&job, w_i, ws->g, s->ws, trace, err);
        if (st != PFLREF_OK)
            return st;
        /* req: fedamp.alg1.l6 */
        pflref_client_end(s, i, "w_i", w_i, trace);
    }
    /* the uploads the next round's messages see (fedamp.peers = previous) */
    memset(ws->uploaded, 0, N);
    for (size_t q = 0; q < plan->m; q++)
        ws->uploaded[plan->clients[q]] = 1;
    return PFLREF_OK;
}

const pflref_algorithm pflref_fedamp = {
    .name = "fedamp",
    .title = "FedAMP (Huang, Chu, Zhou, Wang, Liu, Pei, Zhang, AAAI 2021, "
             "Alg. 1)",
    .has_personal = 1,
    .personal_name = "w_i",
    .n_eval = 1,
    .eval = {{"personalized", PFLREF_SOURCE_PERSONAL}},
    .check = fedamp_check,
    .work_alloc = fedamp_work_alloc,
    .work_free = pflref_work_free,
    .round = fedamp_round,
};
