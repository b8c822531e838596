/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/algorithms/fedavg.c: FedAvg, Algorithm 1 of
 *   H. B. McMahan, E. Moore, D. Ramage, S. Hampson, B. Agüera y Arcas,
 *   "Communication-Efficient Learning of Deep Networks from Decentralized
 *   Data", AISTATS 2017, arXiv 1602.05629v4.
 *
 * One round t (Alg. 1, "Server executes" and "ClientUpdate(k, w)"):
 *   S_t  ← a random set of m clients                (from the schedule)
 *   for each client k ∈ S_t:  w^k_{t+1} ← ClientUpdate(k, w_t)
 *     ClientUpdate: w ← w_t; for each local epoch, for each batch b:
 *                   w ← w − η ∇ℓ(w; b)              (ref/engine/sgd.c)
 *   m_t ← Σ_{k∈S_t} n_k
 *   w_{t+1} ← Σ_{k∈S_t} (n_k / m_t) w^k_{t+1}
 *
 * Symbols:  w_t ↔ s->w (P)   w^k ↔ work->w_local (P)   η ↔ hyper->eta
 *           n_k ↔ clients[k].train.n   m_t ↔ m_t   S_t ↔ plan->clients
 *
 * Switch fedavg.weights (paper default first; shared/spec notes §1(f)):
 *   samples       n_k / m_t over the sampled clients (the final paper)
 *   uniform       1 / m (Per-FedAvg's, pFedMe's Alg. 1, Ditto's TF code)
 *   all_keep_old  n_k / n over all K clients, an unsampled client
 *                 contributing w_t (the early arXiv reading)
 * The minibatches and local work (E epochs of batches of B, split once in
 * index order by default) come from the schedule.
 *
 * State and work: w_t is the state's w; the buffers of a round (w_t's copy,
 * w^k, the gradient) are a pflref_fedavg_work (algorithms/algorithms.h),
 * held in fedavg_work here and in the workspaces of finetune and interp,
 * whose training rounds are this one.
 *
 * Client optimizer (opt.*, ref/engine/optim.c): ClientUpdate's steps are
 * the optimizer's (one per client update under opt.state = reset).
 *
 * Determinism: clients train and are summed in ascending id.
 * Cost per round: Σ_{k∈S_t} (local steps × one gradient) + O(N·P).
 */
#include <stdlib.h>
#include <string.h>
#include "algorithms/algorithms.h"
#include "engine/work.h"

static const char *const CLIENT_LINE =
    "Alg. 1 ClientUpdate: w ← w − η ∇ℓ(w; b)";
static const char *const SERVER_LINE[] = {
    "Alg. 1: w_{t+1} ← Σ_{k∈S_t} (n_k/m_t) w^k_{t+1}",
    "w_{t+1} ← (1/m) Σ_{k∈S_t} w^k_{t+1}",
    "w_{t+1} ← Σ_{k∈S_t} (n_k/n) w^k_{t+1} + Σ_{k∉S_t} (n_k/n) w_t"};

/* FedAvg's own workspace: the buffers of its rounds. */
typedef struct {
    pflref_work list;          /* the allocations (ref/engine/work.h)      */
    pflref_fedavg_work round;  /* w_t, w^k, ∇ℓ (P each)                    */
} fedavg_work;

void pflref_fedavg_work_alloc(pflref_fedavg_work *work, pflref_work *list,
                              size_t P)
{
    work->w_t = pflref_work_doubles(list, P, 1);
    work->w_local = pflref_work_doubles(list, P, 1);
    work->g = pflref_work_doubles(list, P, 1);
}

static void *fedavg_work_alloc(const pflref_problem *problem,
                               const pflref_hyper *hyper)
{
    (void)hyper;
    fedavg_work *ws = calloc(1, sizeof *ws);
    if (ws == NULL)
        return NULL;
    pflref_fedavg_work_alloc(&ws->round, &ws->list, problem->model.P);
    return pflref_work_ready(ws);
}

pflref_status pflref_fedavg_round_with(pflref_state *s,
                                       const pflref_round_plan *plan,
                                       pflref_fedavg_work *work,
                                       const pflref_trace *trace,
                                       pflref_error *err)
{
    const pflref_problem *pr = s->problem;
    const int weights = s->hyper->fedavg.weights;
    const size_t P = s->P;
    const double *w_t = work->w_t;
    double *w_local = work->w_local;

    /* req: fedavg.alg1.l1, fedavg.alg1.l3, finetune.eq1, interp.eq1 */
    pflref_round_begin(s, work->w_t, trace);
    /* req: fedavg.alg1.l8 */
    /* m_t ← Σ_{k∈S_t} n_k;  n ← Σ_k n_k */
    const double m_t = pflref_train_n(pr, plan->clients, plan->m);
    const double n = pflref_train_n(pr, NULL, s->N);
    size_t j = 0;  /* position of the next participant in plan->clients */
    /* req: fedavg.alg1.l6 */
    /*@ loop invariant j <= plan->m && state_model(s);
        loop assigns k, j, w_local[0 .. P - 1], work->g[0 .. P - 1],
                     s->accum[0 .. P - 1], s->hyper_round, *err;
     */
    for (size_t k = 0; k < s->N; k++) {
        const double n_k = (double)pr->clients[k].train.n;
        if (j >= plan->m || plan->clients[j] != k) {
            /* all_keep_old: an unsampled client contributes (n_k/n) w_t */
            if (weights == PFLREF_FEDAVG_WEIGHTS_ALL_KEEP_OLD)
                pflref_accumulate(s->accum, n_k / n, w_t, P);
            continue;
        }
        /* req: fedavg.alg1.l7, fedavg.alg1.l10 */
        /* ClientUpdate(k, w_t): w ← w_t, then local SGD over the batches */
        pflref_client_begin(s, k, "w_local", w_local, w_t, trace);
        pflref_client_lr(s, k, 0, 1);  /* η of k's train() (lr.count) */
        pflref_optim_begin(s, k);      /* its optimizer (opt.state) */
        const pflref_local_sgd job = pflref_local_sgd_plain(
            s, k, &plan->batches[j], s->hyper->eta, "w_local", CLIENT_LINE);
        pflref_status st = pflref_local_sgd_run(&job, w_local, work->g,
                                                s->ws, trace, err);
        if (st != PFLREF_OK)
            return st;
        /* req: fedavg.alg1.l15 */
        pflref_client_end(s, k, "w_local", w_local, trace);

        /* req: fedavg.alg1.l9 */
        double c;
        switch (weights) {
        case PFLREF_FEDAVG_WEIGHTS_UNIFORM:
            c = 1.0 / (double)plan->m;  /* 1/m */
            break;
        case PFLREF_FEDAVG_WEIGHTS_ALL_KEEP_OLD:
            c = n_k / n;                /* n_k/n */
            break;
        default:
            c = n_k / m_t;              /* Alg. 1: n_k/m_t */
            break;
        }
        pflref_accumulate(s->accum, c, w_local, P);
        j++;
    }
    /* w_{t+1} ← the sum above */
    return pflref_round_end(s, SERVER_LINE[weights], trace, err);
}

/* --trace's m_t (Alg. 1 l. 8), an intermediate no record keeps: the round
 * (pflref_fedavg_round_with, proved) uses it only inside line 9's weights,
 * so a sink in front of the caller's prints it, the same Σ_{k∈S_t} n_k
 * (pflref_train_n), just before the server's w_{t+1}.  Outside the proved
 * round: it reads the events only and forwards each unchanged. */
static const char *const M_T_LINE = "Alg. 1 l. 8: m_t ← Σ_{k∈S_t} n_k";

typedef struct {
    const pflref_trace *next;
    double m_t;
} m_t_sink;

static void m_t_emit(void *ctx, const pflref_event *ev)
{
    const m_t_sink *k = ctx;
    if (ev->kind == PFLREF_EV_SERVER && ev->round >= 0 &&
        strcmp(ev->name, "w") == 0)
        pflref_trace_emit(k->next, PFLREF_EV_INTERMEDIATE, ev->phase,
                          ev->round, -1, -1, "m_t", &k->m_t, 1, M_T_LINE);
    pflref_trace_emit(k->next, ev->kind, ev->phase, ev->round, ev->client,
                      ev->step, ev->name, ev->value, ev->len, ev->formula);
}

static pflref_status fedavg_round(pflref_state *s,
                                  const pflref_round_plan *plan,
                                  const pflref_trace *trace,
                                  pflref_error *err)
{
    fedavg_work *ws = s->extra;   /* bn.aggregate: fedavg_keep.c */
    /* req: fedavg.alg1.l8 */
    const m_t_sink k = {trace, pflref_train_n(s->problem, plan->clients,
                                              plan->m)};
    const pflref_trace shown = {m_t_emit, (void *)&k};
    const int wrap = trace != NULL && trace->emit != NULL &&
                     s->hyper->fedavg.weights == PFLREF_FEDAVG_WEIGHTS_SAMPLES;
    return pflref_fedavg_round_any(s, plan, &ws->round, wrap ? &shown : trace,
                                   err);
}

const pflref_algorithm pflref_fedavg = {
    .name = "fedavg",
    .title = "FedAvg (McMahan et al., AISTATS 2017, Alg. 1)",
    .has_global = 1,
    .n_eval = 1,
    .eval = {{"global", PFLREF_SOURCE_GLOBAL}},
    .work_alloc = fedavg_work_alloc,
    .work_free = pflref_work_free,
    .round = fedavg_round,
    .opt_slots = 1,   /* ClientUpdate's optimizer */
    .load_state = pflref_fedavg_keep_load,   /* bn.aggregate's r_k */
};
