/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/algorithms/fedrecon.c: Federated Reconstruction, Algorithm 1 of
 *   K. Singhal, H. Sidahmed, Z. Garrett, S. Wu, K. Rush, S. Prakash,
 *   "Federated Reconstruction: Partially Local Federated Learning",
 *   NeurIPS 2021, arXiv 2102.03448v6;
 * docs/algorithms/fedrecon.md.
 *
 * The model's parameters are split into global g (the split's shared
 * blocks) and local l (its personal blocks), as FedAlt names them u and
 * v_i.  The box, line by line, as this project renders it: the paper's body
 * (the box itself) could not be reached from this project's sources, only
 * its opening (the g/l split, stateless clients); ll. 4-12 were read
 * against the authors' google-research/federated
 * reconstruction/training_process.py (a5af8c4), what matched and what did
 * not in docs/algorithms/fedrecon.md; trace/fedrecon.req numbers it so:
 *
 *   l. 1   input: g⁰ and the local initialisation l⁰ (init.w's entries)
 *   Server:
 *   l. 2   for t = 0, …, T − 1:
 *   l. 3     sample S_t (the schedule's participants)
 *   l. 4     for i ∈ S_t: (Δ_i, n_i) ← ClientUpdate(i, g^t)
 *   l. 5     Δ^t = Σ_{i∈S_t} n_i Δ_i / Σ_{i∈S_t} n_i
 *   l. 6     g^{t+1} ← ServerUpdate(g^t, Δ^t) = g^t + η_s Δ^t (SGD)
 *   ClientUpdate(i, g):
 *   l. 7   split D_i into the support D_{i,s} and the query D_{i,q}
 *   l. 8   l_i ← initialise (l⁰)
 *   l. 9   k_r steps  l_i ← l_i − η_r ∇_l f_i(g, l_i; b),  b ⊂ D_{i,s}
 *   l. 10  g_i ← g
 *   l. 11  k_u steps  g_i ← g_i − η_u ∇_g f_i(g_i, l_i; b),  b ⊂ D_{i,q}
 *   l. 12  return (Δ_i = g_i − g, n_i = |D_{i,q}|)
 *   Evaluation (§3): client i reconstructs l on D_{i,s} from the current
 *   g (l. 8–9), then is evaluated on its test set.
 *
 * Randomness is data.  The support D_{i,s} is the spec's init.support
 * (one ascending index list per client); D_{i,q} = D_i ∖ D_{i,s}.  The
 * k_r reconstruction batches of a participation are the schedule's
 * `personal` list (each index in D_{i,s}), the k_u update batches its
 * `batches` list (each in D_{i,q}); the evaluation's reconstruction
 * batches are the post phase (schedule.post, each in D_{i,s}).  Each ∇ is
 * the gradient of the batch-mean loss (spec README rule 3).
 *
 * Switches (the paper's reading first):
 *   fedrecon.local_init  given: l_i ← l⁰ at every visit (l. 8, stateless
 *                        clients; TFF builds a new model per client update,
 *                        training_process.py `model = model_fn()`) | last:
 *                        l_i ← the l_i client i reconstructed at its last
 *                        visit (a stateful client, as FedAlt's v_i)
 *   fedrecon.weights     samples: n_i = |D_{i,q}| (l. 12) | uniform: 1
 *                        (TFF ClientWeighting.UNIFORM) | examples: the
 *                        examples of the k_u update batches (TFF
 *                        NUM_EXAMPLES: training_process.py's num_examples_sum
 *                        over the post-reconstruction pass)
 *   fedrecon.query       complement: D_{i,q} = D_i ∖ D_{i,s} (TFF's
 *                        build_dataset_split_fn(split_dataset=True), not
 *                        its default) | whole: D_{i,s} = D_{i,q} = D_i
 *                        (reconstruction_utils.py simple_dataset_split_fn,
 *                        the training process's default)
 *   fedrecon.eval        reconstruct: the evaluation reconstructs l on the
 *                        post batches from the final g | kept: (g, l_i) as
 *                        the last visit left it
 *
 * The client optimizer (opt.*, ref/engine/optim.c; default plain SGD, the
 * box's l. 11).  TFF's client update holds two optimizers, built anew in
 * every client update (google-research/federated reconstruction/
 * training_process.py:415-416): client_optimizer_fn's steps g after the
 * reconstruction (l. 11; training_process.py:358, apply_gradients on the
 * global trainable variables) and reconstruction_optimizer_fn's steps l
 * (l. 9; training_process.py:334), both plain SGD by default
 * (training_process.py:538-541; the experiments' flags name them
 * separately, reconstruction/shared/federated_trainer.py:46-49).  opt.*
 * is the first: it steps g on l. 11 (one slot, reset per client update
 * under opt.state = reset as TFF builds it; opt.decay_scope reads the
 * split), while the reconstruction of l (l. 9, and the evaluation's, §3;
 * evaluation_computation.py:55-56) stays the plain step with η_r, as the
 * TFF default reconstruction optimizer SGD(η_r) does.  Keras' SGD momentum
 * is the classical form v ← μ v − η d (opt.momentum_form = classical).
 *
 * State: s->w holds (g, l⁰): g in the shared entries, l⁰ in the local ones.
 * s->v + i·P holds (g, l_i), l_i the last l client i reconstructed (l⁰
 * before its first visit); its global entries follow g after every round,
 * so it is what `personalized` evaluates.  Nothing else is carried.
 *
 * Symbols:  g ↔ shared entries (s->shared) of s->w   l_i ↔ local entries
 *           (s->mask) of s->v + i·P   g^t ↔ ws->g_t   (g_i, l_i) ↔ ws->x
 *           η_r, η_u, η_s ↔ hyper->fedrecon.eta_r, eta_u, eta_s
 *           S_t ↔ plan->clients   k_r ↔ plan->personal[j].nsteps
 *           k_u ↔ plan->batches[j].nsteps   D_{i,s} ↔ init.support[i]
 *
 * Trace: per participant CLIENT_BEGIN "w_local" (g^t, l_i start), STEP
 * "w_recon" 1..k_r, STEP "w_local" 1..k_u, CLIENT_END "w_local" and "v"
 * (g_i, l_i); SERVER "w"; the evaluation's reconstruction phase "finetune":
 * CLIENT_BEGIN, STEP, CLIENT_END "v" per client.
 *
 * Determinism: clients train and are summed in ascending id.
 * Cost per round: k_r + k_u gradients per participant + O(m·P).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "algorithms/algorithms.h"
#include "engine/work.h"

static const char *const RECON_LINE =
    "Alg. 1 l.9: l_i ← l_i − η_r ∇_l f_i(g, l_i; b), b ⊂ D_{i,s}";
static const char *const UPDATE_LINE =
    "Alg. 1 l.11: g_i ← g_i − η_u ∇_g f_i(g_i, l_i; b), b ⊂ D_{i,q}";
static const char *const SERVER_LINE =
    "Alg. 1 l.5–6: g^{t+1} = g^t + η_s Σ n_i (g_i − g^t) / Σ n_i";
static const char *const EVAL_LINE =
    "§3 evaluation: l_i ← l_i − η_r ∇_l f_i(g, l_i; b), b ⊂ D_{i,s}";

/* ---- the support set ---------------------------------------------------- */

/* 1 when sample k of client i is in its support D_{i,s} (query = whole:
 * every sample is).  The support list is ascending (checked). */
static int in_support(const pflref_fedrecon_hyper *h, size_t i, size_t k)
{
    if (h->query == PFLREF_FEDRECON_QUERY_WHOLE)
        return 1;
    size_t lo = h->support_off[i], hi = h->support_off[i + 1];
    while (lo < hi) {                     /* binary search in [lo, hi) */
        size_t mid = lo + (hi - lo) / 2;
        if (h->support_idx[mid] == k)
            return 1;
        if (h->support_idx[mid] < k)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

/* 1 when sample k of client i is in its query D_{i,q}. */
static int in_query(const pflref_fedrecon_hyper *h, size_t i, size_t k)
{
    return h->query == PFLREF_FEDRECON_QUERY_WHOLE || !in_support(h, i, k);
}

/* n_i = |D_{i,q}| (l. 12): n − |D_{i,s}|, or n (query = whole). */
static double query_size(const pflref_fedrecon_hyper *h,
                         const pflref_problem *problem, size_t i)
{
    const size_t n = problem->clients[i].train.n;
    if (h->query == PFLREF_FEDRECON_QUERY_WHOLE)
        return (double)n;
    return (double)(n - (h->support_off[i + 1] - h->support_off[i]));
}

/* The weight of client i's Δ_i (before normalisation over S_t). */
/* req: fedrecon.alg1.l12 */
static double client_weight(const pflref_state *s, size_t i,
                            const pflref_batches *b)
{
    const pflref_fedrecon_hyper *h = &s->hyper->fedrecon;
    switch (h->weights) {
    case PFLREF_FEDRECON_WEIGHTS_UNIFORM:
        return 1.0;
    case PFLREF_FEDRECON_WEIGHTS_EXAMPLES:
        return (double)b->step_off[b->nsteps];    /* Σ_k |batch k| */
    default:
        return query_size(h, s->problem, i);      /* n_i = |D_{i,q}| */
    }
}

/* ---- checks -------------------------------------------------------------- */

/* init.support against the problem: given exactly under query =
 * complement; each client's list ascending, inside 0..n_i − 1, non-empty
 * and leaving a non-empty query set. */
/* req: fedrecon.alg1.l7 */
static pflref_status check_support(const pflref_problem *problem,
                                   const pflref_fedrecon_hyper *h,
                                   pflref_error *err)
{
    char where[PFLREF_WHERE_MAX];
    if (h->query == PFLREF_FEDRECON_QUERY_WHOLE)
        return h->support_off == NULL
                   ? PFLREF_OK
                   : pflref_error_set(err, PFLREF_EINVAL, "init.support",
                                      "fedrecon.query = whole reconstructs "
                                      "and updates on all of D_i; give no "
                                      "support set");
    if (h->support_off == NULL)
        return pflref_error_set(err, PFLREF_EINVAL, "init.support",
                                "fedrecon.query = complement needs each "
                                "client's support set D_{i,s} (init.support: "
                                "one index list per client)");
    for (size_t i = 0; i < problem->N; i++) {
        const size_t lo = h->support_off[i], hi = h->support_off[i + 1];
        const size_t n = problem->clients[i].train.n;
        snprintf(where, sizeof where, "init.support[%zu]", i);
        if (hi == lo)
            return pflref_error_set(err, PFLREF_EINVAL, where,
                                    "client %zu's support set is empty", i);
        for (size_t k = lo; k < hi; k++) {
            if (h->support_idx[k] >= n || (k > lo && h->support_idx[k] <=
                                                         h->support_idx[k - 1])) {
                snprintf(where, sizeof where, "init.support[%zu][%zu]", i,
                         k - lo);
                return pflref_error_set(
                    err, PFLREF_EINVAL, where,
                    "%zu is %s (a support set lists distinct samples of "
                    "0..%zu in ascending order)", h->support_idx[k],
                    h->support_idx[k] >= n ? "out of range" : "a repeat or "
                    "out of order", n - 1);
            }
        }
        if (hi - lo >= n)
            return pflref_error_set(err, PFLREF_EINVAL, where,
                                    "the support holds all %zu samples of "
                                    "client %zu: its query set D_{i,q} is "
                                    "empty", n, i);
    }
    return PFLREF_OK;
}

/* Every index of the batch list b (client i) lies in its support (query =
 * 0) or its query set (query = 1); `where` names the list. */
static pflref_status check_list(const pflref_fedrecon_hyper *h, size_t i,
                                const pflref_batches *b, int query,
                                const char *where, pflref_error *err)
{
    for (size_t q = 0; q < b->nsteps; q++) {
        for (size_t k = b->step_off[q]; k < b->step_off[q + 1]; k++) {
            const size_t x = b->idx[k];
            if (query ? in_query(h, i, x) : in_support(h, i, x))
                continue;
            char path[PFLREF_WHERE_MAX];
            snprintf(path, sizeof path, "%s[%zu]", where, q);
            return pflref_error_set(
                err, PFLREF_EINVAL, path,
                query ? "sample %zu of client %zu is in its support set; "
                        "the update batches draw from D_{i,q}"
                      : "sample %zu of client %zu is in its query set; the "
                        "reconstruction batches draw from D_{i,s} "
                        "(init.support)", x, i);
        }
    }
    return PFLREF_OK;
}

/* The hyperparameters, the support, every round's reconstruction and
 * update lists, and the post phase the evaluation switch calls for. */
static pflref_status fedrecon_check(const pflref_problem *problem,
                                    const pflref_hyper *hyper,
                                    const pflref_schedule *schedule,
                                    const unsigned char *mask,
                                    pflref_error *err)
{
    (void)mask;
    const pflref_fedrecon_hyper *h = &hyper->fedrecon;
    static const char *const names[] = {"eta_r", "eta_u", "eta_s"};
    const double etas[] = {h->eta_r, h->eta_u, h->eta_s};
    char where[PFLREF_WHERE_MAX];
    for (size_t k = 0; k < 3; k++) {
        snprintf(where, sizeof where,
                 "algorithm.hyperparameters.fedrecon.%s", names[k]);
        if (!(isfinite(etas[k]) && etas[k] > 0.0))
            return pflref_error_set(err, PFLREF_EINVAL, where,
                                    "fedrecon.%s must be finite and > 0 "
                                    "(got %g)", names[k], etas[k]);
    }
    pflref_status st = check_support(problem, h, err);
    for (size_t t = 0; st == PFLREF_OK && t < schedule->T; t++) {
        const pflref_round_plan *r = &schedule->rounds[t];
        snprintf(where, sizeof where, "schedule.rounds[%zu].personal", t);
        if (r->personal == NULL && r->m > 0)
            return pflref_error_set(err, PFLREF_EINVAL, where,
                                    "fedrecon takes each participant's k_r "
                                    "reconstruction batches from the "
                                    "round's personal lists; round %zu has "
                                    "none", t);
        for (size_t j = 0; st == PFLREF_OK && j < r->m; j++) {
            const size_t i = r->clients[j];
            snprintf(where, sizeof where, "schedule.rounds[%zu].personal[%zu]",
                     t, j);
            st = check_list(h, i, &r->personal[j], 0, where, err);
            snprintf(where, sizeof where, "schedule.rounds[%zu].batches[%zu]",
                     t, j);
            if (st == PFLREF_OK)
                st = check_list(h, i, &r->batches[j], 1, where, err);
            if (st == PFLREF_OK && r->batches[j].nsteps == 0 &&
                h->weights == PFLREF_FEDRECON_WEIGHTS_EXAMPLES)
                st = pflref_error_set(err, PFLREF_EINVAL, where,
                                      "fedrecon.weights = examples weighs "
                                      "client %zu by its update examples, "
                                      "and it has no update batch", i);
        }
    }
    if (st != PFLREF_OK)
        return st;
    const int reconstruct = h->eval == PFLREF_FEDRECON_EVAL_RECONSTRUCT;
    if (reconstruct != (schedule->post != NULL))
        return pflref_error_set(
            err, PFLREF_EINVAL, "schedule.post",
            reconstruct ? "fedrecon.eval = reconstruct takes the evaluation's "
                          "reconstruction batches from schedule.post (one "
                          "list per client, from D_{i,s})"
                        : "fedrecon.eval = kept has no phase after training");
    for (size_t i = 0; reconstruct && st == PFLREF_OK && i < problem->N; i++) {
        snprintf(where, sizeof where, "schedule.post[%zu]", i);
        st = check_list(h, i, &schedule->post[i], 0, where, err);
    }
    return st;
}

/* ---- the round ----------------------------------------------------------- */

/* FedRecon's work buffers, P doubles each (none carried between rounds:
 * l_i lives in the state's v_i). */
typedef struct {
    pflref_work list; /* the allocations (ref/engine/work.h)               */
    double *g_t;      /* g^t (with l⁰): the round-start w                  */
    double *x;        /* (g_i, l_i), client i's iterate                    */
    double *g;        /* a gradient, then Δ_i                              */
} fedrecon_work;

static void *fedrecon_work_alloc(const pflref_problem *problem,
                                 const pflref_hyper *hyper)
{
    (void)hyper;
    const size_t P = problem->model.P;
    fedrecon_work *ws = calloc(1, sizeof *ws);
    if (ws == NULL)
        return NULL;
    ws->g_t = pflref_work_doubles(&ws->list, P, 1);
    ws->x = pflref_work_doubles(&ws->list, P, 1);
    ws->g = pflref_work_doubles(&ws->list, P, 1);
    return pflref_work_ready(ws);
}

/* ClientUpdate(i, g^t) (l. 7–12) on x = (g^t, l_i start): k_r steps on l
 * over the reconstruction batches rb, then k_u steps on g over the update
 * batches ub.  x [in,out] P, g [work] P. */
static pflref_status client_update(pflref_state *s, size_t i,
                                   const pflref_batches *rb,
                                   const pflref_batches *ub, double *x,
                                   double *g, const pflref_trace *trace,
                                   pflref_error *err)
{
    const pflref_problem *pr = s->problem;
    const pflref_fedrecon_hyper *h = &s->hyper->fedrecon;
    /* req: fedrecon.alg1.l9 */
    /* l. 9: l_i ← l_i − η_r ∇_l f_i(g, l_i; b), only the local blocks */
    const pflref_local_sgd recon = {
        .model = &pr->model, .data = &pr->clients[i].train, .batches = rb,
        .eta = h->eta_r, .mask = s->mask, .phase = "train",
        .name = "w_recon", .formula = RECON_LINE, .round = (long)s->t,
        .client = (long)i, .bn = &s->hyper->bn};
    pflref_status st = pflref_local_sgd_run(&recon, x, g, s->ws, trace, err);
    if (st != PFLREF_OK)
        return st;
    /* req: fedrecon.alg1.l10, fedrecon.alg1.l11 */
    /* l. 10–11: g_i ← g; g_i ← g_i − η_u ∇_g f_i(g_i, l_i; b), only the
     * global blocks (x's global entries are g^t here) */
    const pflref_local_sgd update = {
        .model = &pr->model, .data = &pr->clients[i].train, .batches = ub,
        .eta = h->eta_u, .mask = s->shared, .phase = "train",
        .name = "w_local", .formula = UPDATE_LINE, .round = (long)s->t,
        .client = (long)i, .opt = pflref_optim_get(s, i, 0),
        .bn = &s->hyper->bn};
    return pflref_local_sgd_run(&update, x, g, s->ws, trace, err);
}

/* One round t of the server (l. 2–6) with the workspace ws = s->extra. */
static pflref_status fedrecon_round(pflref_state *s,
                                    const pflref_round_plan *plan,
                                    const pflref_trace *trace,
                                    pflref_error *err)
{
    fedrecon_work *ws = s->extra;
    const pflref_fedrecon_hyper *h = &s->hyper->fedrecon;
    const int last = h->local_init == PFLREF_FEDRECON_INIT_LAST;
    const size_t P = s->P, N = s->N, m = plan->m;
    double *const x = ws->x, *const g = ws->g, *const g_t = ws->g_t;

    /* req: fedrecon.alg1.l1 */
    /* l. 1: s->w starts as w⁰ = (g⁰, l⁰); its local entries stay l⁰ */
    /* req: fedrecon.alg1.l2, fedrecon.alg1.l3 */
    pflref_round_begin(s, g_t, trace);   /* g^t := w; accum := 0 */
    double total = 0.0;                  /* Σ_{i∈S_t} n_i */
    for (size_t j = 0; j < m; j++)
        total += client_weight(s, plan->clients[j], &plan->batches[j]);
    /* req: fedrecon.alg1.l4 */
    for (size_t j = 0; j < m; j++) {
        const size_t i = plan->clients[j];
        double *v_i = pflref_row(s->v, i, N, P);
        /* req: fedrecon.alg1.l8 */
        /* l. 8: x = (g^t, l⁰), or (g^t, l_i) kept from i's last visit */
        pflref_compose(s->shared, g_t, last ? v_i : s->w0, x, P);
        pflref_client_begin(s, i, "w_local", x, NULL, trace);
        pflref_optim_begin(s, i);        /* client_optimizer_fn() (opt.state) */
        pflref_status st = client_update(s, i, &plan->personal[j],
                                         &plan->batches[j], x, g, trace, err);
        if (st != PFLREF_OK)
            return st;
        pflref_client_end(s, i, "w_local", x, trace);
        pflref_copy(v_i, x, P);          /* keeps l_i (and g_i, until the
                                            broadcast below) */
        pflref_client_end(s, i, "v", v_i, trace);
        /* req: fedrecon.alg1.l12 */
        /* Δ_i = g_i − g^t (its global entries; the local ones are not
         * sent and not used below) */
        for (size_t p = 0; p < P; p++)
            g[p] = x[p] - g_t[p];
        pflref_accumulate(s->accum, client_weight(s, i, &plan->batches[j]) /
                                        total, g, P);
    }
    /* req: fedrecon.alg1.l5, fedrecon.alg1.l6 */
    /* l. 5–6: g^{t+1} = g^t + η_s Δ^t, Δ^t = Σ n_i Δ_i / Σ n_i (in
     * s->accum); the local entries of w stay l⁰ */
    for (size_t p = 0; p < P; p++)
        if (s->shared[p])
            s->w[p] = g_t[p] + h->eta_s * s->accum[p];
    pflref_status st = pflref_server_publish(s, SERVER_LINE, trace, err);
    if (st == PFLREF_OK)
        pflref_share_to_all(s);          /* v_i = (g^{t+1}, l_i) */
    return st;
}

/* The evaluation with reconstruction (§3): every client i reconstructs l
 * on its post batches (from D_{i,s}) with the final g, from l⁰ (given) or
 * its kept l_i (last); v_i := (g, l_i) is then what is evaluated. */
/* req: fedrecon.eval */
static pflref_status fedrecon_finish(pflref_state *s,
                                     const pflref_schedule *schedule,
                                     const pflref_trace *trace,
                                     pflref_error *err)
{
    fedrecon_work *ws = s->extra;
    const pflref_problem *pr = s->problem;
    const pflref_fedrecon_hyper *h = &s->hyper->fedrecon;
    const int last = h->local_init == PFLREF_FEDRECON_INIT_LAST;
    const size_t P = s->P, N = s->N;
    for (size_t i = 0; i < N; i++) {
        double *v_i = pflref_row(s->v, i, N, P);
        pflref_compose(s->shared, s->w, last ? v_i : s->w0, v_i, P);
        pflref_trace_emit(trace, PFLREF_EV_CLIENT_BEGIN, "finetune", -1,
                          (long)i, 0, "v", v_i, P, NULL);
        const pflref_local_sgd job = {
            .model = &pr->model, .data = &pr->clients[i].train,
            .batches = &schedule->post[i], .eta = h->eta_r, .mask = s->mask,
            .phase = "finetune", .name = "v", .formula = EVAL_LINE,
            .round = -1, .client = (long)i, .bn = &s->hyper->bn};
        pflref_status st = pflref_local_sgd_run(&job, v_i, ws->g, s->ws,
                                                trace, err);
        if (st != PFLREF_OK)
            return st;
        pflref_trace_emit(trace, PFLREF_EV_CLIENT_END, "finetune", -1,
                          (long)i, -1, "v", v_i, P, NULL);
    }
    return PFLREF_OK;
}

/* Re-synchronised checking: a client's CLIENT_END "v" is (g_i, l_i), its
 * own global entries before the server step; the state after round t is
 * (g^{t+1}, l_i), the global entries from the server's w, as the round
 * leaves it. */
static void fedrecon_load_state(pflref_state *s, pflref_state_loader load,
                                void *ctx, long t)
{
    (void)load;
    (void)ctx;
    (void)t;
    pflref_share_to_all(s);
}

const pflref_algorithm pflref_fedrecon = {
    .name = "fedrecon",
    .title = "FedRecon (Singhal et al., NeurIPS 2021, Alg. 1)",
    .has_global = 1,
    .has_personal = 1,
    .allows_post = 1,
    .personal_name = "v",
    .n_eval = 1,
    /* req: fedrecon.eval */
    .eval = {{"personalized", PFLREF_SOURCE_PERSONAL}},
    .check = fedrecon_check,
    .work_alloc = fedrecon_work_alloc,
    .work_free = pflref_work_free,
    .round = fedrecon_round,
    .finish = fedrecon_finish,
    .load_state = fedrecon_load_state,
    .opt_slots = 1,   /* l. 11's optimizer on g (TFF client_optimizer_fn);
                         the reconstruction of l steps plain SGD */
};
