/* ref/perfedavg.c: Per-FedAvg, Algorithm 1 of
 *   A. Fallah, A. Mokhtari, A. Ozdaglar, "Personalized Federated Learning
 *   with Theoretical Guarantees: A Model-Agnostic Meta-Learning Approach",
 *   NeurIPS 2020, arXiv 2002.07948,
 * with its three estimates of the meta gradient (exact, first-order FO,
 * Hessian-free HF) and the paper's evaluation of the personalised model.
 *
 * Objective (the MAML objective, one inner step of size α):
 *   min_w F(w) = (1/n) Σ_i f_i(w − α ∇f_i(w)),
 *   ∇F_i(w) = (I − α ∇²f_i(w)) ∇f_i(w − α ∇f_i(w)).
 *
 * One round k (Alg. 1; shared/spec notes §4(c)):
 *   the server picks A_k and sends w_k
 *   for each user i ∈ A_k:  w^i_{k+1,0} ← w_k
 *     for t = 1..τ, with three independent batches D_t, D′_t, D″_t:
 *       w̃ ← w_{t−1} − α ∇f_i(w_{t−1}; D_t)
 *       exact: w_t ← w_{t−1} − β (I − α ∇²f_i(w_{t−1}; D″_t)) ∇f_i(w̃; D′_t)
 *       FO:    w_t ← w_{t−1} − β ∇f_i(w̃; D′_t)
 *       HF:    q = ∇f_i(w̃; D′_t),
 *              d = [∇f_i(w_{t−1} + δq; D″_t) − ∇f_i(w_{t−1} − δq; D″_t)] / (2δ),
 *              w_t ← w_{t−1} − β (q − α d)
 *     send w^i_{k+1,τ}
 *   w_{k+1} ← (1/|A_k|) Σ_{i∈A_k} w^i_{k+1,τ}
 * The Hessian (exact) and its finite-difference estimate (HF) are taken at
 * w_{t−1}, not at w̃; the exact product is pflref_model_hvp.
 *
 * Batch layout.  Step t of a participant takes three consecutive scheduled
 * batches of its list: D_t = batch 3(t−1), D′_t = batch 3(t−1)+1,
 * D″_t = batch 3(t−1)+2 (0-based), so τ = (batches)/3 and a list whose
 * length is not a positive multiple of 3 is refused.  FO reads D, D′ and
 * not D″ (its batch is still scheduled, so one schedule serves all three
 * variants).
 *
 * Personalised model (the paper's evaluation, §5: one step of SGD with step
 * α from the global model), after the last round, for every client i on its
 * post-phase batches:
 *   θ_i ← w − α ∇f_i(w; D)                        (perfedavg.eval one_alpha_step)
 *   θ_i ← θ_i − β ∇f_i(θ_i; D₂)                   (alpha_then_beta, the
 *                                                    pFedMe repository's
 *                                                    train_one_step)
 * θ_i is not carried between rounds: the state keeps only w.
 *
 * Symbols:  w_k ↔ s->w (P)   w_{t−1}, w_t ↔ w_local (P)   w̃ ↔ w_tilde (P)
 *           q ↔ q (P)   H q or d ↔ hv (P)   α ↔ hyper->perfedavg.alpha
 *           β ↔ hyper->perfedavg.beta   δ ↔ hyper->perfedavg.delta
 *           A_k ↔ plan->clients   τ ↔ plan->batches[j].nsteps / 3
 *           θ_i ↔ s->v + i·P
 *
 * Switches (the paper's reading first; shared/spec notes §4(f)):
 *   perfedavg.variant  exact | fo (the pFedMe repository and PFLlib) | hf
 *                      (needs δ)
 *   perfedavg.weights  uniform: 1/|A_k| (Alg. 1) | samples: n_i / Σ_{A_k} n_j
 *                      (the pFedMe repository's shared server, PFLlib)
 *   perfedavg.eval     one_alpha_step (§5) | alpha_then_beta (the pFedMe
 *                      repository; here on training batches)
 *
 * Trace: per step t, STEP "w_tilde" and STEP "w_local" (both numbered t);
 * for exact and HF a NOTE "hvp" (step t): the Hessian-vector product H q
 * (exact) or its estimate d (HF).  In the post phase ("finetune"), STEP
 * "theta" numbered 1 (the α step) and 2 (the β step).
 * Determinism: users train and are summed in ascending id.
 * Cost per local step: FO 2 gradients, HF 4, exact 2 + one Hessian-vector
 * product; the post phase 1 or 2 gradients per client.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "algorithms/algorithms.h"

/* Batches per local step: D, D′, D″. */
#define PERFEDAVG_BATCHES_PER_STEP 3

static const char *const TILDE_LINE =
    "Alg. 1: w̃ = w_{t−1} − α ∇f_i(w_{t−1}; D_t)";
static const char *const LOCAL_LINE[] = {
    "Alg. 1: w_t = w_{t−1} − β (I − α ∇²f_i(w_{t−1}; D″_t)) ∇f_i(w̃; D′_t)",
    "FO: w_t = w_{t−1} − β ∇f_i(w̃; D′_t)",
    "HF: w_t = w_{t−1} − β (q − α d)"};
static const char *const HVP_LINE[] = {
    "∇²f_i(w_{t−1}; D″_t) q, q = ∇f_i(w̃; D′_t)",
    NULL,
    "d = [∇f_i(w_{t−1} + δq; D″_t) − ∇f_i(w_{t−1} − δq; D″_t)] / (2δ), "
    "q = ∇f_i(w̃; D′_t)"};
static const char *const SERVER_LINE[] = {
    "Alg. 1: w_{k+1} = (1/|A_k|) Σ_{i∈A_k} w^i_{k+1,τ}",
    "w_{k+1} = Σ_{i∈A_k} (n_i/Σ_{A_k} n_j) w^i_{k+1,τ}"};
static const char *const EVAL_ALPHA_LINE =
    "§5: θ_i = w − α ∇f_i(w; D)";
static const char *const EVAL_BETA_LINE =
    "θ_i ← θ_i − β ∇f_i(θ_i; D₂)  (pFedMe repository's train_one_step)";
static const char *const BATCH_NAME[PERFEDAVG_BATCHES_PER_STEP] = {
    "D", "D′", "D″"};

/* g := ∇f_i(x; batch q of b), the gradient of the batch-mean loss; a failure
 * names the round, client, local step and which of D, D′, D″ it was. */
static pflref_status batch_grad(const pflref_state *s, size_t i,
                                const pflref_batches *b, size_t q,
                                const double *x, double *g, long round,
                                long step, const char *which,
                                pflref_error *err)
{
    const size_t nb = b->step_off[q + 1] - b->step_off[q];
    pflref_status st = pflref_model_grad(&s->problem->model, x,
                                         &s->problem->clients[i].train,
                                         b->idx + b->step_off[q], nb, s->ws,
                                         g, NULL);
    if (st != PFLREF_OK)
        return pflref_error_set(err, st, "schedule",
                                "gradient on %s failed at round %ld, client "
                                "%zu, local step %ld (batch %zu, %zu samples)",
                                which, round, i, step, q, nb);
    return PFLREF_OK;
}

/* Local step t (from 1) of user i on batches 3(t−1), 3(t−1)+1, 3(t−1)+2
 * of b:
 *   w [in,out] P: w_{t−1}, then w_t
 *   w_tilde, g, q, hv, x, g2 [work] P each */
static pflref_status local_step(const pflref_state *s, size_t i,
                                const pflref_batches *b, size_t t, double *w,
                                double *w_tilde, double *g, double *q,
                                double *hv, double *x, double *g2,
                                const pflref_trace *trace, pflref_error *err)
{
    const pflref_hyper *h = s->hyper;
    const size_t P = s->P;
    const long k = (long)s->t;
    const long step = (long)t;
    const double alpha = h->perfedavg.alpha, beta = h->perfedavg.beta;
    const int variant = h->perfedavg.variant;
    const size_t D = PERFEDAVG_BATCHES_PER_STEP * (t - 1); /* D_t    */
    const size_t D1 = D + 1;                               /* D′_t   */
    const size_t D2 = D + 2;                               /* D″_t   */
    pflref_status st;

    /* Alg. 1: w̃ = w_{t−1} − α ∇f_i(w_{t−1}; D_t) */
    if ((st = batch_grad(s, i, b, D, w, g, k, step, BATCH_NAME[0], err)))
        return st;
    for (size_t p = 0; p < P; p++)
        w_tilde[p] = w[p] - alpha * g[p];
    if (!pflref_all_finite(w_tilde, P))
        return pflref_error_diverge(err, k, (long)i, step, "w_tilde");
    pflref_trace_emit(trace, PFLREF_EV_STEP, "train", k, (long)i, step,
                      "w_tilde", w_tilde, P, TILDE_LINE);

    /* q = ∇f_i(w̃; D′_t) */
    if ((st = batch_grad(s, i, b, D1, w_tilde, q, k, step, BATCH_NAME[1],
                         err)))
        return st;

    if (variant == PFLREF_PERFEDAVG_EXACT) {
        /* hv = ∇²f_i(w_{t−1}; D″_t) q, exact (Pearlmutter's R-operator) */
        const size_t nb = b->step_off[D2 + 1] - b->step_off[D2];
        st = pflref_model_hvp(&s->problem->model, w,
                              &s->problem->clients[i].train,
                              b->idx + b->step_off[D2], nb, q, s->ws, hv);
        if (st != PFLREF_OK)
            return pflref_error_set(err, st, "schedule",
                                    "Hessian-vector product on D″ failed at "
                                    "round %ld, client %zu, local step %ld "
                                    "(batch %zu, %zu samples)",
                                    k, i, step, D2, nb);
    } else if (variant == PFLREF_PERFEDAVG_HF) {
        /* d = [∇f_i(w_{t−1} + δq; D″_t) − ∇f_i(w_{t−1} − δq; D″_t)] / (2δ),
         * around w_{t−1} (not w̃) */
        const double delta = h->perfedavg.delta;
        for (size_t p = 0; p < P; p++)
            x[p] = w[p] + delta * q[p];
        if ((st = batch_grad(s, i, b, D2, x, g, k, step, BATCH_NAME[2], err)))
            return st;
        for (size_t p = 0; p < P; p++)
            x[p] = w[p] - delta * q[p];
        if ((st = batch_grad(s, i, b, D2, x, g2, k, step, BATCH_NAME[2],
                             err)))
            return st;
        for (size_t p = 0; p < P; p++)
            hv[p] = (g[p] - g2[p]) / (2.0 * delta);
    }
    if (variant != PFLREF_PERFEDAVG_FO) {
        if (!pflref_all_finite(hv, P))
            return pflref_error_diverge(err, k, (long)i, step, "hvp");
        pflref_trace_emit(trace, PFLREF_EV_NOTE, "train", k, (long)i, step,
                          "hvp", hv, P, HVP_LINE[variant]);
        /* w_t = w_{t−1} − β (q − α H q)   (exact; HF with d for H q) */
        for (size_t p = 0; p < P; p++)
            w[p] -= beta * (q[p] - alpha * hv[p]);
    } else {
        /* FO: w_t = w_{t−1} − β q */
        for (size_t p = 0; p < P; p++)
            w[p] -= beta * q[p];
    }
    if (!pflref_all_finite(w, P))
        return pflref_error_diverge(err, k, (long)i, step, "w_local");
    pflref_trace_emit(trace, PFLREF_EV_STEP, "train", k, (long)i, step,
                      "w_local", w, P, LOCAL_LINE[variant]);
    return PFLREF_OK;
}

static pflref_status perfedavg_round(pflref_state *s,
                                     const pflref_round_plan *plan,
                                     const pflref_trace *trace,
                                     pflref_error *err)
{
    const pflref_problem *pr = s->problem;
    const pflref_hyper *h = s->hyper;
    const size_t P = s->P;
    const long k = (long)s->t;
    double *w_k = s->scratch;              /* the round-start global model */
    double *w_local = s->scratch + P;      /* w^i_{k+1,t}                  */
    double *w_tilde = s->scratch + 2 * P;  /* w̃                            */
    double *g = s->scratch + 3 * P;        /* gradient work                */
    double *q = s->scratch + 4 * P;        /* ∇f_i(w̃; D′_t)                */
    double *hv = s->scratch + 5 * P;       /* H q or its estimate d        */
    double *x = s->scratch + 6 * P;        /* HF's perturbed point         */
    double *g2 = s->scratch + 7 * P;       /* HF's second gradient         */
    double *acc = s->accum;

    memcpy(w_k, s->w, P * sizeof *w_k);
    pflref_trace_emit(trace, PFLREF_EV_ROUND_BEGIN, "train", k, -1, -1, "w",
                      w_k, P, NULL);
    double n_A = 0.0;  /* Σ_{i∈A_k} n_i */
    for (size_t j = 0; j < plan->m; j++)
        n_A += (double)pr->clients[plan->clients[j]].train.n;

    for (size_t p = 0; p < P; p++)
        acc[p] = 0.0;
    for (size_t j = 0; j < plan->m; j++) {
        const size_t i = plan->clients[j];
        const pflref_batches *b = &plan->batches[j];
        /* w^i_{k+1,0} ← w_k */
        memcpy(w_local, w_k, P * sizeof *w_local);
        pflref_trace_emit(trace, PFLREF_EV_CLIENT_BEGIN, "train", k, (long)i,
                          0, "w_local", w_local, P, NULL);
        const size_t tau = b->nsteps / PERFEDAVG_BATCHES_PER_STEP;
        for (size_t t = 1; t <= tau; t++) {
            pflref_status st = local_step(s, i, b, t, w_local, w_tilde, g, q,
                                          hv, x, g2, trace, err);
            if (st != PFLREF_OK)
                return st;
        }
        pflref_trace_emit(trace, PFLREF_EV_CLIENT_END, "train", k, (long)i,
                          -1, "w_local", w_local, P, NULL);
        const double c =
            h->perfedavg.weights == PFLREF_PERFEDAVG_WEIGHTS_SAMPLES
                ? (double)pr->clients[i].train.n / n_A   /* n_i / Σ n_j */
                : 1.0 / (double)plan->m;                 /* 1/|A_k|     */
        pflref_accumulate(acc, c, w_local, P);
    }

    memcpy(s->w, acc, P * sizeof *acc);
    if (!pflref_all_finite(s->w, P))
        return pflref_error_diverge(err, k, -1, -1, "w");
    pflref_trace_emit(trace, PFLREF_EV_SERVER, "train", k, -1, -1, "w", s->w,
                      P, SERVER_LINE[h->perfedavg.weights]);
    return PFLREF_OK;
}

/* The personalised models (§5): for every client i, θ_i = w − α ∇f_i(w; D)
 * on its first post batch, then (alpha_then_beta) θ_i ← θ_i − β ∇f_i(θ_i;
 * D₂) on its second. */
static pflref_status perfedavg_finish(pflref_state *s,
                                      const pflref_schedule *schedule,
                                      const pflref_trace *trace,
                                      pflref_error *err)
{
    const pflref_hyper *h = s->hyper;
    const size_t P = s->P;
    const int two = h->perfedavg.eval == PFLREF_PERFEDAVG_EVAL_ALPHA_THEN_BETA;
    double *g = s->scratch;

    for (size_t i = 0; i < s->N; i++) {
        const pflref_batches *b = &schedule->post[i];
        double *theta = s->v + i * P;
        memcpy(theta, s->w, P * sizeof *theta);  /* θ_i ← w */
        pflref_trace_emit(trace, PFLREF_EV_CLIENT_BEGIN, "finetune", -1,
                          (long)i, 0, "theta", theta, P, NULL);
        for (size_t r = 0; r < (two ? 2u : 1u); r++) {
            /* r = 0: θ_i ← θ_i − α ∇f_i(θ_i; D);  r = 1: the β step on D₂ */
            const double eta = r == 0 ? h->perfedavg.alpha : h->perfedavg.beta;
            pflref_status st = batch_grad(s, i, b, r, theta, g, -1,
                                          (long)(r + 1), r == 0 ? "D" : "D₂",
                                          err);
            if (st != PFLREF_OK)
                return st;
            for (size_t p = 0; p < P; p++)
                theta[p] -= eta * g[p];
            if (!pflref_all_finite(theta, P))
                return pflref_error_diverge(err, -1, (long)i, (long)(r + 1),
                                            "theta");
            pflref_trace_emit(trace, PFLREF_EV_STEP, "finetune", -1, (long)i,
                              (long)(r + 1), "theta", theta, P,
                              r == 0 ? EVAL_ALPHA_LINE : EVAL_BETA_LINE);
        }
        pflref_trace_emit(trace, PFLREF_EV_CLIENT_END, "finetune", -1,
                          (long)i, -1, "theta", theta, P, NULL);
    }
    return PFLREF_OK;
}

/* δ for HF; every participation's batch count a positive multiple of 3;
 * every client's post phase as long as perfedavg.eval says. */
static pflref_status perfedavg_check(const pflref_problem *problem,
                                     const pflref_hyper *hyper,
                                     const pflref_schedule *schedule,
                                     const unsigned char *mask,
                                     pflref_error *err)
{
    (void)problem;
    (void)mask;
    if (hyper->perfedavg.variant == PFLREF_PERFEDAVG_HF &&
        isnan(hyper->perfedavg.delta))
        return pflref_error_set(err, PFLREF_EINVAL,
                                "algorithm.hyperparameters.delta",
                                "perfedavg.variant = hf needs hyperparameter "
                                "delta (δ), the radius of the finite "
                                "difference");
    for (size_t t = 0; t < schedule->T; t++)
        for (size_t j = 0; j < schedule->rounds[t].m; j++) {
            const size_t n = schedule->rounds[t].batches[j].nsteps;
            if (n > 0 && n % PERFEDAVG_BATCHES_PER_STEP == 0)
                continue;
            char where[PFLREF_WHERE_MAX];
            snprintf(where, sizeof where, "schedule.rounds[%zu].batches[%zu]",
                     t, j);
            return pflref_error_set(
                err, PFLREF_EINVAL, where,
                "Per-FedAvg takes three batches per local step t (D_t, D′_t, "
                "D″_t = batches 3(t−1), 3(t−1)+1, 3(t−1)+2), so a client's "
                "batch count must be a positive multiple of 3; client %zu has "
                "%zu in round %zu (a generated schedule: make "
                "schedule.local.steps 3τ)",
                schedule->rounds[t].clients[j], n, t);
        }
    const size_t want =
        hyper->perfedavg.eval == PFLREF_PERFEDAVG_EVAL_ALPHA_THEN_BETA ? 2 : 1;
    for (size_t i = 0; schedule->post != NULL && i < schedule->N; i++)
        if (schedule->post[i].nsteps != want) {
            char where[PFLREF_WHERE_MAX];
            snprintf(where, sizeof where, "schedule.post[%zu]", i);
            return pflref_error_set(
                err, PFLREF_EINVAL, where,
                "perfedavg.eval = %s personalises with exactly %zu batch%s "
                "per client (%s), client %zu has %zu (a generated schedule: "
                "make schedule.post.steps %zu)",
                want == 2 ? "alpha_then_beta" : "one_alpha_step", want,
                want == 2 ? "es" : "",
                want == 2 ? "the α step on the first, the β step on the "
                            "second"
                          : "one α step",
                i, schedule->post[i].nsteps, want);
        }
    return PFLREF_OK;
}

const pflref_algorithm pflref_perfedavg = {
    .name = "perfedavg",
    .title = "Per-FedAvg (Fallah, Mokhtari, Ozdaglar, NeurIPS 2020, Alg. 1)",
    .has_global = 1,
    .has_personal = 1,
    .needs_post = 1,
    .n_eval = 2,
    .eval = {{"global", PFLREF_SOURCE_GLOBAL},
             {"personalized", PFLREF_SOURCE_PERSONAL}},
    .check = perfedavg_check,
    .round = perfedavg_round,
    .finish = perfedavg_finish,
};
