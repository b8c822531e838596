/* ref/pfedme.c: pFedMe, Algorithm 1 of
 *   C. T. Dinh, N. H. Tran, T. D. Nguyen, "Personalized Federated Learning
 *   with Moreau Envelopes", NeurIPS 2020, arXiv 2006.08848v3.
 *
 * One round t (Alg. 1; lines counted from "input"):
 *   l. 3   the server sends w_t to all N clients
 *   l. 4-5 for every client i:  w_{i,0} ← w_t
 *   l. 6   for r = 0..R−1 (one scheduled batch D_{i,r} per local round):
 *   l. 7     θ ≈ argmin_θ h_i(θ; w_{i,r}, D_{i,r}) = f_i(θ; D) + (λ/2)‖θ − w_{i,r}‖²
 *            (eq. (7)), by K steps θ ← θ − η_p (∇f_i(θ; D) + λ(θ − w_{i,r}))
 *            (ref/prox.c), starting from θ = w_{i,r}
 *   l. 8     w_{i,r+1} ← w_{i,r} − ηλ(w_{i,r} − θ)
 *   l. 9   the server samples S^t, |S^t| = S, without replacement
 *   l. 10  w_{t+1} ← (1 − β) w_t + β (1/S) Σ_{i∈S^t} w_{i,R}
 * The personalised model of client i is its last θ (θ̃_i(w_{i,R−1})).
 *
 * Symbols:  w_t ↔ s->w (P)   w_{i,r} ↔ w_local (P)   θ ↔ theta (P)
 *           λ ↔ hyper->lambda   η ↔ hyper->eta   η_p ↔ hyper->eta_p
 *           K ↔ hyper->K   β ↔ hyper->beta   R ↔ plan->batches[j].nsteps
 *           S^t ↔ plan->selected   personalised θ_i ↔ s->v + i·P
 *
 * Deviations of the authors' code and of PFLlib, each a switch whose first
 * value is the paper (shared/spec notes §2(f)):
 *   pfedme.theta_start    reset: θ ← w_{i,r} before every local round;
 *                         warm: θ carries over from the last local round
 *                         (θ = w_t at r = 0), as the official code
 *   pfedme.mu             the official code adds μθ to the inner gradient
 *   pfedme.weights        uniform 1/S | n_i / Σ_{S^t} n_j (official code)
 *   pfedme.train          all: all N clients train, S^t is aggregated;
 *                         sampled: only S^t trains (PFLlib, FL-bench)
 *   pfedme.personal_eval  what is reported as client i's personalised
 *                         model: theta (the last θ); local_w (w_{i,R}, what
 *                         the official code's aliasing evaluates); global
 *                         (the global model, PFLlib's evaluation)
 * A client that does not train in a round keeps its personalised model.
 *
 * Trace: θ's inner steps are STEP "theta" numbered rK + k; w_{i,r+1} is
 * STEP "w_local" numbered r + 1; CLIENT_END gives w_{i,R} and the last θ.
 * Determinism: clients train and are summed in ascending id.
 * Cost per round: (trainers) × R × K gradients + O(N·P).
 */
#include <stdio.h>
#include <string.h>
#include "algorithms/algorithms.h"

static const char *const LOCAL_LINE =
    "Alg. 1 l. 8: w_{i,r+1} ← w_{i,r} − ηλ(w_{i,r} − θ)";
static const char *const SERVER_LINE[] = {
    "Alg. 1 l. 10: w_{t+1} ← (1 − β) w_t + β (1/S) Σ_{i∈S^t} w_{i,R}",
    "w_{t+1} ← (1 − β) w_t + β Σ_{i∈S^t} (n_i/Σ n_j) w_{i,R}"};

static int pfedme_train_all(const pflref_hyper *hyper)
{
    return hyper->pfedme.train == PFLREF_PFEDME_TRAIN_ALL;
}

/* 1 when client i is in the (ascending) selected set of plan. */
static int is_selected(const pflref_round_plan *plan, size_t i)
{
    for (size_t q = 0; q < plan->n_selected; q++)
        if (plan->selected[q] == i)
            return 1;
    return 0;
}

/* Client i's R local rounds from w_t (Alg. 1 l. 5-8).
 *   w_local [out] P: w_{i,R};  theta [out] P: the last θ;  g [work] P */
static pflref_status client_update(pflref_state *s, size_t i,
                                   const pflref_batches *b,
                                   const double *w_t, double *w_local,
                                   double *theta, double *g,
                                   const pflref_trace *trace,
                                   pflref_error *err)
{
    const pflref_problem *pr = s->problem;
    const pflref_hyper *h = s->hyper;
    const size_t P = s->P;
    const long t = (long)s->t;

    /* l. 5: w_{i,0} ← w_t; θ starts there too */
    memcpy(w_local, w_t, P * sizeof *w_local);
    memcpy(theta, w_t, P * sizeof *theta);
    pflref_trace_emit(trace, PFLREF_EV_CLIENT_BEGIN, "train", t, (long)i, 0,
                      "w_local", w_local, P, NULL);
    for (size_t r = 0; r < b->nsteps; r++) {
        /* l. 7: θ ← w_{i,r} (reset) or carried over (warm), then K steps */
        if (h->pfedme.theta_start == PFLREF_PFEDME_THETA_RESET)
            memcpy(theta, w_local, P * sizeof *theta);
        const pflref_prox_inner job = {
            &pr->model, &pr->clients[i].train, b->idx + b->step_off[r],
            b->step_off[r + 1] - b->step_off[r], w_local, h->lambda,
            h->eta_p, h->pfedme.mu, h->K, "train", NULL, t, (long)i,
            (long)(r * h->K)};
        pflref_status st = pflref_prox_inner_run(&job, theta, g, s->ws, trace,
                                                 err);
        if (st != PFLREF_OK)
            return st;
        /* l. 8: w_{i,r+1} ← w_{i,r} − ηλ(w_{i,r} − θ) */
        for (size_t p = 0; p < P; p++)
            w_local[p] -= h->eta * h->lambda * (w_local[p] - theta[p]);
        if (!pflref_all_finite(w_local, P))
            return pflref_error_diverge(err, t, (long)i, (long)(r + 1),
                                        "w_local");
        pflref_trace_emit(trace, PFLREF_EV_STEP, "train", t, (long)i,
                          (long)(r + 1), "w_local", w_local, P, LOCAL_LINE);
    }
    pflref_trace_emit(trace, PFLREF_EV_CLIENT_END, "train", t, (long)i, -1,
                      "w_local", w_local, P, NULL);
    pflref_trace_emit(trace, PFLREF_EV_CLIENT_END, "train", t, (long)i, -1,
                      "theta", theta, P, NULL);
    return PFLREF_OK;
}

static pflref_status pfedme_round(pflref_state *s,
                                  const pflref_round_plan *plan,
                                  const pflref_trace *trace,
                                  pflref_error *err)
{
    const pflref_problem *pr = s->problem;
    const pflref_hyper *h = s->hyper;
    const size_t P = s->P;
    const long t = (long)s->t;
    double *w_t = s->scratch;            /* the round-start global model */
    double *w_local = s->scratch + P;    /* w_{i,r}                      */
    double *theta = s->scratch + 2 * P;  /* θ                            */
    double *g = s->scratch + 3 * P;      /* gradient work                */
    double *acc = s->accum;

    /* Test the round against the switches. */
    if (pfedme_train_all(h) && plan->m != s->N) {
        char where[PFLREF_WHERE_MAX];
        snprintf(where, sizeof where, "schedule.rounds[%ld].clients", t);
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "pfedme.train = all: every client trains, "
                                "but round %ld lists %zu of %zu", t, plan->m,
                                s->N);
    }
    if (plan->n_selected == 0) {
        char where[PFLREF_WHERE_MAX];
        snprintf(where, sizeof where, "schedule.rounds[%ld].selected", t);
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "pFedMe needs at least one sampled client");
    }

    memcpy(w_t, s->w, P * sizeof *w_t);
    pflref_trace_emit(trace, PFLREF_EV_ROUND_BEGIN, "train", t, -1, -1, "w",
                      w_t, P, NULL);

    /* Σ_{i∈S^t} n_i, for pfedme.weights = samples */
    double n_S = 0.0;
    for (size_t q = 0; q < plan->n_selected; q++)
        n_S += (double)pr->clients[plan->selected[q]].train.n;

    for (size_t p = 0; p < P; p++)
        acc[p] = 0.0;
    for (size_t j = 0; j < plan->m; j++) {
        const size_t i = plan->clients[j];
        pflref_status st = client_update(s, i, &plan->batches[j], w_t,
                                         w_local, theta, g, trace, err);
        if (st != PFLREF_OK)
            return st;
        /* the personalised model reported for client i */
        double *v_i = s->v + i * P;
        if (h->pfedme.personal_eval == PFLREF_PFEDME_EVAL_THETA)
            memcpy(v_i, theta, P * sizeof *v_i);
        else if (h->pfedme.personal_eval == PFLREF_PFEDME_EVAL_LOCAL_W)
            memcpy(v_i, w_local, P * sizeof *v_i);
        /* l. 9: only the sampled clients send w_{i,R} */
        if (!is_selected(plan, i))
            continue;
        const double c =
            h->pfedme.weights == PFLREF_PFEDME_WEIGHTS_SAMPLES
                ? (double)pr->clients[i].train.n / n_S   /* n_i / Σ n_j */
                : 1.0 / (double)plan->n_selected;        /* 1/S         */
        pflref_accumulate(acc, c, w_local, P);
    }

    /* l. 10: w_{t+1} ← (1 − β) w_t + β · (the average above) */
    for (size_t p = 0; p < P; p++)
        s->w[p] = (1.0 - h->beta) * w_t[p] + h->beta * acc[p];
    if (!pflref_all_finite(s->w, P))
        return pflref_error_diverge(err, t, -1, -1, "w");
    pflref_trace_emit(trace, PFLREF_EV_SERVER, "train", t, -1, -1, "w", s->w,
                      P, SERVER_LINE[h->pfedme.weights]);
    if (h->pfedme.personal_eval == PFLREF_PFEDME_EVAL_GLOBAL)
        for (size_t i = 0; i < s->N; i++)
            memcpy(s->v + i * P, s->w, P * sizeof *s->w);
    return PFLREF_OK;
}

const pflref_algorithm pflref_pfedme = {
    .name = "pfedme",
    .title = "pFedMe (Dinh, Tran, Nguyen, NeurIPS 2020, Alg. 1)",
    .has_global = 1,
    .has_personal = 1,
    .train_all = pfedme_train_all,
    .n_eval = 2,
    .eval = {{"global", PFLREF_SOURCE_GLOBAL},
             {"personalized", PFLREF_SOURCE_PERSONAL}},
    .round = pfedme_round,
};
