/* ref/fedavg.c: FedAvg, Algorithm 1 of
 *   H. B. McMahan, E. Moore, D. Ramage, S. Hampson, B. Agüera y Arcas,
 *   "Communication-Efficient Learning of Deep Networks from Decentralized
 *   Data", AISTATS 2017, arXiv 1602.05629v4.
 *
 * One round t (Alg. 1, "Server executes" and "ClientUpdate(k, w)"):
 *   S_t  ← a random set of m clients                (from the schedule)
 *   for each client k ∈ S_t:  w^k_{t+1} ← ClientUpdate(k, w_t)
 *     ClientUpdate: w ← w_t; for each local epoch, for each batch b:
 *                   w ← w − η ∇ℓ(w; b)              (ref/local.c)
 *   m_t ← Σ_{k∈S_t} n_k
 *   w_{t+1} ← Σ_{k∈S_t} (n_k / m_t) w^k_{t+1}
 *
 * Symbols:  w_t ↔ s->w (P)   w^k ↔ w_local (P)   η ↔ hyper->eta
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
 * Determinism: clients train and are summed in ascending id.
 * Cost per round: Σ_{k∈S_t} (local steps × one gradient) + O(N·P).
 */
#include <string.h>
#include "algorithms/algorithms.h"

static const char *const CLIENT_LINE =
    "Alg. 1 ClientUpdate: w ← w − η ∇ℓ(w; b)";
static const char *const SERVER_LINE[] = {
    "Alg. 1: w_{t+1} ← Σ_{k∈S_t} (n_k/m_t) w^k_{t+1}",
    "w_{t+1} ← (1/m) Σ_{k∈S_t} w^k_{t+1}",
    "w_{t+1} ← Σ_{k∈S_t} (n_k/n) w^k_{t+1} + Σ_{k∉S_t} (n_k/n) w_t"};

pflref_status pflref_fedavg_round(pflref_state *s,
                                  const pflref_round_plan *plan,
                                  const pflref_trace *trace,
                                  pflref_error *err)
{
    const pflref_problem *pr = s->problem;
    const int weights = s->hyper->fedavg.weights;
    const size_t P = s->P;
    const long t = (long)s->t;
    double *w_t = s->scratch;          /* the round-start global model  */
    double *w_local = s->scratch + P;  /* w^k, the client's iterate     */
    double *g = s->scratch + 2 * P;    /* gradient work                 */
    double *acc = s->accum;

    memcpy(w_t, s->w, P * sizeof *w_t);
    pflref_trace_emit(trace, PFLREF_EV_ROUND_BEGIN, "train", t, -1, -1, "w",
                      w_t, P, NULL);

    /* m_t ← Σ_{k∈S_t} n_k;  n ← Σ_k n_k */
    double m_t = 0.0, n = 0.0;
    for (size_t j = 0; j < plan->m; j++)
        m_t += (double)pr->clients[plan->clients[j]].train.n;
    for (size_t k = 0; k < s->N; k++)
        n += (double)pr->clients[k].train.n;

    for (size_t p = 0; p < P; p++)
        acc[p] = 0.0;
    size_t j = 0;  /* position of the next participant in plan->clients */
    for (size_t k = 0; k < s->N; k++) {
        const double n_k = (double)pr->clients[k].train.n;
        if (j >= plan->m || plan->clients[j] != k) {
            /* all_keep_old: an unsampled client contributes (n_k/n) w_t */
            if (weights == PFLREF_FEDAVG_WEIGHTS_ALL_KEEP_OLD)
                pflref_accumulate(acc, n_k / n, w_t, P);
            continue;
        }
        /* ClientUpdate(k, w_t): w ← w_t, then local SGD over the batches */
        memcpy(w_local, w_t, P * sizeof *w_local);
        pflref_trace_emit(trace, PFLREF_EV_CLIENT_BEGIN, "train", t, (long)k,
                          0, "w_local", w_local, P, NULL);
        const pflref_local_sgd job = {
            &pr->model, &pr->clients[k].train, &plan->batches[j],
            s->hyper->eta, 0.0, NULL, NULL, "train", "w_local", CLIENT_LINE,
            t, (long)k};
        pflref_status st = pflref_local_sgd_run(&job, w_local, g, s->ws,
                                                trace, err);
        if (st != PFLREF_OK)
            return st;
        pflref_trace_emit(trace, PFLREF_EV_CLIENT_END, "train", t, (long)k,
                          -1, "w_local", w_local, P, NULL);

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
        pflref_accumulate(acc, c, w_local, P);
        j++;
    }

    memcpy(s->w, acc, P * sizeof *acc);
    if (!pflref_all_finite(s->w, P))
        return pflref_error_diverge(err, t, -1, -1, "w");
    pflref_trace_emit(trace, PFLREF_EV_SERVER, "train", t, -1, -1, "w", s->w,
                      P, SERVER_LINE[weights]);
    return PFLREF_OK;
}

const pflref_algorithm pflref_fedavg = {
    .name = "fedavg",
    .title = "FedAvg (McMahan et al., AISTATS 2017, Alg. 1)",
    .has_global = 1,
    .n_eval = 1,
    .eval = {{"global", PFLREF_SOURCE_GLOBAL}},
    .round = pflref_fedavg_round,
};
