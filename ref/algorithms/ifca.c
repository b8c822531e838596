/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/algorithms/ifca.c: the Iterative Federated Clustering Algorithm,
 * Algorithm 1 of
 *   A. Ghosh, J. Chung, D. Yin, K. Ramchandran, "An Efficient Framework
 *   for Clustered Federated Learning", NeurIPS 2020, arXiv 2006.04088.
 * Equations, the authors' code (jichan3751/ifca) and the worked example:
 * shared/spec notes-cfl-ifca-sampling-metrics.md §2 and §4.1;
 * docs/algorithms/ifca.md.
 *
 * One round t (Alg. 1):
 *   the server broadcasts θ_j^(t), j = 1..k, to the participants M_t
 *   every machine i ∈ M_t:
 *     ĵ_i ← argmin_j F_i(θ_j^(t))     F_i the mean loss on i's whole
 *                                      training set; ties → lowest j
 *     s_ij ← 1{j = ĵ_i}
 *     gradient (Option I):  g_i ← ∇F_i(θ_ĵ^(t); b), b the round's one
 *                           scheduled batch
 *     model (Option II):    θ̃_i ← LocalUpdate(θ_ĵ^(t), γ, τ): τ steps
 *                           θ̃ ← θ̃ − γ ∇F_i(θ̃; b) over the scheduled
 *                           batches
 *   server:
 *     gradient:  θ_j^(t+1) ← θ_j^(t) − (γ/|M_t|) Σ_{i∈M_t} s_ij g_i
 *     model:     θ_j^(t+1) ← Σ_i s_ij θ̃_i / Σ_i s_ij, and θ_j^(t) when no
 *                machine chose j (the authors' `if len(models) > 0`)
 *
 * Pinned where the paper is open (notes §2.2): the divisor of Option I is
 * |M_t|, the participants (the code divides by m with every machine
 * taking part), not the cluster's size; the estimate uses the machine's
 * whole training set; Option II's mean is unweighted.
 * Initial models (Alg. 1's input θ_j^(0)): given (hyper->ifca.theta0, the
 * spec's init.cluster_models), or θ_j^(0) = w⁰ + j δ 𝟙 + σ ξ_j,
 * j = 0..k−1, ξ_j ~ N(0, I) drawn by gsl_ran_gaussian on mt19937 seeded
 * with ifca.init_seed, cluster after cluster (σ = 0 draws nothing).  The
 * result records the models used (`theta0`, and NOTE "theta0"), so a run
 * replays with them given.  The personalised model reported
 * for client i after round t is θ_ĵ^(t+1) with ĵ = argmin_j F_i(θ_j^(t+1))
 * on its training set (the paper's evaluation: each machine takes the
 * cluster model of lowest loss), for every client, participant or not.
 *
 * Symbols:  θ_j ↔ ifca_work.theta + j·P   γ ↔ hyper->ifca.gamma
 *           k ↔ hyper->ifca.k   M_t ↔ plan->clients   ĵ_i ↔ j_hat
 *           F_i(θ_j) ↔ ifca_work.loss[j]   g_i, θ̃_i ↔ ifca_work.x
 *           δ, σ ↔ hyper->ifca.init_shift, .init_sd
 * Switch ifca.mode: gradient (Option I) | model (Option II).
 * Switch ifca.estimate_mode: train (F_i(θ_j) a training-mode loss pass,
 * the authors' code) | eval (an evaluation, no dropout mask; FedDCA's
 * clientifca.py): ref/algorithms/ifca_estimate.c.
 *
 * State and work: ifca_work holds the state, the k cluster models θ_j
 * (kept from round to round), and the round's work: the server's sums and
 * counts, the losses F_i(θ_j) of one machine, the assignments ĵ_i and the
 * machine's g_i or θ̃_i.  s->v holds the reported models θ_ĵ, s->theta0
 * the initial models (reported).
 *
 * Determinism: machines are visited and summed in ascending id.
 * Cost per round: k loss evaluations per client (participants, then every
 * client for the reported models) + the local steps + O(k P).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "algorithms/algorithms.h"
#include "engine/work.h"
#include "pflref/sampler.h"

static const char *const LOSS_LINE =
    "Alg. 1: F_i(θ_j), j = 1..k, on machine i's data";
static const char *const JHAT_LINE =
    "Alg. 1: ĵ_i = argmin_j F_i(θ_j) (ties → lowest j)";
static const char *const GRAD_LINE = "Option I: g_i = ∇F_i(θ_ĵ; b)";
static const char *const LOCAL_LINE =
    "Option II LocalUpdate: θ̃ ← θ̃ − γ ∇F_i(θ̃; b)";
static const char *const SERVER_LINE[] = {
    "Option I: θ_j ← θ_j − (γ/|M_t|) Σ_{i∈M_t} s_ij g_i",
    "Option II: θ_j ← Σ_i s_ij θ̃_i / Σ_i s_ij (θ_j if none)"};
static const char *const INIT_LINE = "θ_j⁰ = w⁰ + j δ 𝟙 + σ ξ_j";
static const char *const PARTITION_LINE =
    "each client's cluster argmin_j F_i(θ_j) at the new models";

/* k ≤ N; given initial models take no δ or σ and are finite; the seed
 * in range; Option I takes one batch per machine and round. */
static pflref_status ifca_check(const pflref_problem *problem,
                                const pflref_hyper *hyper,
                                const pflref_schedule *schedule,
                                const unsigned char *mask, pflref_error *err)
{
    (void)mask;
    const pflref_ifca_hyper *hp = &hyper->ifca;
    const size_t k = hp->k, P = problem->model.P;
    const double delta = hp->init_shift, sigma = hp->init_sd;
    const int gradient = hp->mode == PFLREF_IFCA_GRADIENT;
    if (gradient && !pflref_optim_is_plain(&hyper->opt))
        return pflref_error_set(err, PFLREF_EINVAL,
                                "algorithm.switches.opt.method",
                                "the client optimizer (opt.*) moves "
                                "LocalUpdate's steps: ifca.mode = gradient "
                                "(Option I) takes none; give ifca.mode = "
                                "model");
    if (k > problem->N)
        return pflref_error_set(err, PFLREF_EINVAL,
                                "algorithm.hyperparameters.ifca.k",
                                "ifca.k = %zu exceeds the %zu clients",
                                k, problem->N);
    if (hp->theta0 != NULL && (delta != 0.0 || sigma != 0.0))
        return pflref_error_set(err, PFLREF_EINVAL, "init.cluster_models",
                                "given initial cluster models take no "
                                "ifca.init_shift or ifca.init_sd (%g, %g "
                                "given)", delta, sigma);
    if (hp->init_seed > PFLREF_SEED_MAX)
        return pflref_error_set(err, PFLREF_EINVAL,
                                "algorithm.hyperparameters.ifca.init_seed",
                                "ifca.init_seed = %zu exceeds %lu",
                                hp->init_seed, PFLREF_SEED_MAX);
    for (size_t t = 0; gradient && t < schedule->T; t++)
        for (size_t j = 0; j < schedule->rounds[t].m; j++)
            if (schedule->rounds[t].batches[j].nsteps != 1) {
                char where[PFLREF_WHERE_MAX];
                snprintf(where, sizeof where,
                         "schedule.rounds[%zu].batches[%zu]", t, j);
                return pflref_error_set(
                    err, PFLREF_EINVAL, where,
                    "ifca.mode = gradient takes one gradient per machine "
                    "and round: give exactly one batch (%zu given; "
                    "local.steps = 1, batch_size 0 for the full batch)",
                    schedule->rounds[t].batches[j].nsteps);
            }
    /* Alg. 1's input θ_j^(0), when given */
    if (hp->theta0 != NULL && !pflref_all_finite(hp->theta0, k * P))
        return pflref_error_set(err, PFLREF_EINVAL, "init.cluster_models",
                                "the initial cluster models are not finite");
    return PFLREF_OK;
}

/* IFCA's extra state and work buffers (ifca_work_alloc). */
typedef struct {
    pflref_work list; /* the allocations (ref/engine/work.h)                */
    /* state, kept from round to round */
    double *theta;   /* k×P: the cluster models θ_j, row j                  */
    /* work */
    double *sum;     /* k×P: the server's Σ_i s_ij g_i (or Σ_i s_ij θ̃_i)    */
    double *count;   /* k: Σ_i s_ij, the machines that chose θ_j           */
    double *loss;    /* k: F_i(θ_j) of the machine being estimated         */
    double *part;    /* N: every client's ĵ_i at the new models            */
    double *x;       /* P: g_i (Option I) or θ̃_i (Option II)               */
    double *g;       /* P: the gradient of LocalUpdate's steps             */
} ifca_work;

/* The shape the proofs start from (ifca_work_shape), the predicates of
 * lowest_loss's contract and the frames of a machine's update and of the
 * whole workspace are defined in proofs/acsl/ifca.h (ACSL only). */
#include "../../proofs/acsl/ifca.h"

/* k = hyper->ifca.k ≤ N (ifca_check). */
static void *ifca_work_alloc(const pflref_problem *problem,
                             const pflref_hyper *hyper)
{
    const size_t P = problem->model.P, N = problem->N, k = hyper->ifca.k;
    ifca_work *ws = calloc(1, sizeof *ws);
    if (ws == NULL)
        return NULL;
    ws->theta = pflref_work_doubles(&ws->list, k, P);
    ws->sum = pflref_work_doubles(&ws->list, k, P);
    ws->count = pflref_work_doubles(&ws->list, k, 1);
    ws->loss = pflref_work_doubles(&ws->list, k, 1);
    ws->part = pflref_work_doubles(&ws->list, N, 1);
    ws->x = pflref_work_doubles(&ws->list, P, 1);
    ws->g = pflref_work_doubles(&ws->list, P, 1);
    return pflref_work_ready(ws);
}

/* req: ifca.alg1.l5 */
/* ĵ = argmin_j loss[j] over j < k (k ≥ 1), ties to the lowest j: the index
 * kernel of Alg. 2's estimate, proved (proofs/README.md).  Reads only
 * loss[0..k−1] (all finite, as estimate has checked). */
/*@ requires 1 <= k && \valid_read(loss + (0 .. k - 1));
    requires finite_losses(loss, k);
    assigns \nothing;
    ensures 0 <= \result < k && lowest_of(loss, k, \result);
    ensures first_lowest(loss, \result); */
static size_t lowest_loss(const double *loss, size_t k)
{
    size_t j_hat = 0;
    /*@ loop invariant 1 <= j <= k;
        loop invariant 0 <= j_hat < j;
        loop invariant lowest_of(loss, j, j_hat);
        loop invariant first_lowest(loss, j_hat);
        loop assigns j, j_hat;
        loop variant k - j; */
    for (size_t j = 1; j < k; j++)
        if (loss[j] < loss[j_hat])
            j_hat = j;
    return j_hat;
}

/* The losses of the estimate ĵ = argmin_j F_i(θ_j) on client i's training
 * set: loss[j] := F_i(θ_j), j = 0..k−1 in order (each in the mode of
 * ifca.estimate_mode, pflref_ifca_estimate_loss), stopping at the first
 * failure or non-finite loss; its callers then take ĵ =
 * lowest_loss(loss, k).  Its frame is an assumption of the proof
 * of ifca_round_with (proofs/README.md): it writes loss[0..k−1] and *err
 * (and the model workspace's temporaries); on PFLREF_OK every loss is
 * finite (its test below), as lowest_loss requires. */
/*@ assigns loss[0 .. k - 1], *err;
    ensures \result == PFLREF_OK ==> finite_losses(loss, k); */
static pflref_status estimate(const pflref_state *s, size_t i,
                              const double *theta, size_t k, double *loss,
                              pflref_error *err)
{
    const pflref_problem *pr = s->problem;
    const pflref_data *D = &pr->clients[i].train;
    for (size_t j = 0; j < k; j++) {
        pflref_status st = pflref_ifca_estimate_loss(s, theta + j * s->P, D,
                                                     &loss[j]);
        if (st != PFLREF_OK)
            return pflref_error_set(err, st, NULL,
                                    "the loss of cluster model %zu on "
                                    "client %zu failed", j, i);
        if (!isfinite(loss[j]))
            return pflref_error_diverge(err, (long)s->t, (long)i, -1,
                                        "the loss F_i(θ_j)");
    }
    return PFLREF_OK;
}

/* Every client's personalised model v_i = θ_ĵ, ĵ = argmin_j F_i(θ_j);
 * part[i] = ĵ.  Proved call sites (proofs/README.md): each v_i and θ_ĵ
 * copied is a row of s->v and of θ. */
/*@ requires state_personal(s);
    requires ifca_work_shape(ws, s, k);
    requires \separated(err, s, ws);
    assigns s->v[0 .. s->N * s->P - 1], ws->loss[0 .. k - 1],
            ws->part[0 .. s->N - 1], *err; */
static pflref_status assign_all(pflref_state *s, const ifca_work *ws,
                                size_t k, pflref_error *err)
{
    const size_t P = s->P, N = s->N;
    double *const v = s->v, *const theta = ws->theta;
    double *const loss = ws->loss, *const part = ws->part;
    /*@ loop invariant 0 <= i <= N;
        loop assigns i, v[0 .. N * P - 1], loss[0 .. k - 1],
                     part[0 .. N - 1], *err; */
    for (size_t i = 0; i < N; i++) {
        pflref_status st = estimate(s, i, theta, k, loss, err);
        if (st != PFLREF_OK)
            return st;
        const size_t j = lowest_loss(loss, k);   /* ĵ */
        double *v_i = pflref_row(v, i, N, P);
        pflref_copy(v_i, pflref_row(theta, j, k, P), P);
        part[i] = (double)j;
    }
    return PFLREF_OK;
}

/* req: ifca.alg1.l1 */
/* Alg. 1's input θ_j^(0): given, or w⁰ + j δ 𝟙 + σ ξ_j; recorded in
 * s->theta0; then every client's v_i = θ_ĵ^(0). */
static pflref_status ifca_init(pflref_state *s, pflref_error *err)
{
    const pflref_ifca_hyper *hp = &s->hyper->ifca;
    const size_t k = hp->k;
    const double delta = hp->init_shift, sigma = hp->init_sd;
    const size_t P = s->P;
    ifca_work *ws = s->extra;
    double *theta = ws->theta;
    if (hp->theta0 != NULL) {
        /* θ_j^(0) given (finite: ifca_check) */
        memcpy(theta, hp->theta0, k * P * sizeof *theta);
    } else {
        if (sigma > 0.0) {
            /* θ_j^(0) = w⁰ + j δ 𝟙 + σ ξ_j: the draws σ ξ_j first */
            pflref_status st = pflref_draw_gaussian(
                (unsigned long)hp->init_seed, sigma, theta, k * P, err);
            if (st != PFLREF_OK)
                return st;
        } else {
            for (size_t q = 0; q < k * P; q++)   /* σ = 0 draws nothing */
                theta[q] = 0.0;
        }
        for (size_t j = 0; j < k; j++)
            for (size_t p = 0; p < P; p++)
                theta[j * P + p] += s->w0[p] + (double)j * delta;
        /* w⁰ + j δ can overflow although w⁰ and δ are finite */
        if (!pflref_all_finite(theta, k * P))
            return pflref_error_set(err, PFLREF_EINVAL,
                                    "algorithm.hyperparameters.ifca."
                                    "init_shift",
                                    "the initial cluster models are not "
                                    "finite");
    }
    s->theta0 = malloc(k * P * sizeof *s->theta0);
    if (s->theta0 == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, "init.cluster_models",
                                "out of memory");
    memcpy(s->theta0, theta, k * P * sizeof *theta);
    s->n_theta0 = k * P;
    return assign_all(s, ws, k, err);
}

/* Machine i = M_t[m]: ĵ_i and its contribution s_iĵ x_i to the server's
 * sums, x_i = g_i (Option I) or θ̃_i (Option II).  Proved call sites
 * (proofs/README.md): θ_ĵ and Σ_ĵ are rows ĵ < k of θ and of the sums. */
/*@ requires state_base(s) && state_model(s);
    requires round_plan(plan, s->N) && m < plan->m;
    requires ifca_work_shape(ws, s, k);
    requires \separated(err, s, s->problem, ws, plan);
    assigns IFCA_MACHINE_FRAME(ws, k, s->P), *err; */
static pflref_status machine_update(pflref_state *s, const ifca_work *ws,
                                    size_t k, const pflref_round_plan *plan,
                                    size_t m, const pflref_trace *trace,
                                    pflref_error *err)
{
    const pflref_problem *pr = s->problem;
    const pflref_ifca_hyper *hp = &s->hyper->ifca;
    const double gamma = hp->gamma;
    const int model_mode = hp->mode == PFLREF_IFCA_MODEL;
    const size_t P = s->P, i = plan->clients[m];
    const long t = (long)s->t;
    double *const theta = ws->theta, *const sum = ws->sum;
    double *const x = ws->x;
    pflref_status st = estimate(s, i, theta, k, ws->loss, err);
    if (st != PFLREF_OK)
        return st;
    const size_t j_hat = lowest_loss(ws->loss, k);
    const double jd = (double)j_hat;
    pflref_trace_emit(trace, PFLREF_EV_NOTE, "train", t, (long)i, -1, "loss",
                      ws->loss, k, LOSS_LINE);
    pflref_trace_emit(trace, PFLREF_EV_NOTE, "train", t, (long)i, -1, "j_hat",
                      &jd, 1, JHAT_LINE);
    const double *theta_j = pflref_row(theta, j_hat, k, P);
    if (model_mode) {
        /* req: ifca.alg1.l7 */
        /* θ̃_i ← LocalUpdate(θ_ĵ, γ, τ) */
        pflref_client_begin(s, i, "theta_local", x, theta_j, trace);
        pflref_optim_begin(s, i);   /* its optimizer (opt.state) */
        const pflref_local_sgd job = pflref_local_sgd_plain(
            s, i, &plan->batches[m], gamma, "theta_local", LOCAL_LINE);
        st = pflref_local_sgd_run(&job, x, ws->g, s->ws, trace, err);
        if (st != PFLREF_OK)
            return st;
        pflref_client_end(s, i, "theta_local", x, trace);
    } else {
        /* req: ifca.alg1.l6 */
        /* g_i = ∇F_i(θ_ĵ; b) */
        st = pflref_batch_grad(&pr->model, theta_j, &pr->clients[i].train,
                               &plan->batches[m], 0, s->ws, x, t, (long)i,
                               err);
        if (st != PFLREF_OK)
            return st;
        if (!pflref_all_finite(x, P))
            return pflref_error_diverge(err, t, (long)i, 1, "g");
        pflref_trace_emit(trace, PFLREF_EV_CLIENT_END, "train", t, (long)i,
                          -1, "g", x, P, GRAD_LINE);
    }
    /* req: ifca.alg1.l5 */
    pflref_accumulate(pflref_row(sum, j_hat, k, P), 1.0, x, P); /* Σ s_ij x_i */
    ws->count[j_hat] += 1.0;
    return PFLREF_OK;
}

/* Server: Option I θ_j ← θ_j − (γ/|M_t|) Σ_i s_ij g_i; Option II
 * θ_j ← Σ_i s_ij θ̃_i / Σ_i s_ij (θ_j when no machine chose j).  Proved
 * call sites (proofs/README.md): θ_j and Σ_j are rows j < k. */
/*@ requires state_base(s);
    requires ifca_work_shape(ws, s, k);
    requires \separated(err, s, ws);
    assigns ws->theta[0 .. k * s->P - 1], *err; */
static pflref_status server_update(const pflref_state *s,
                                   const ifca_work *ws, size_t k, size_t M,
                                   const pflref_trace *trace,
                                   pflref_error *err)
{
    const pflref_ifca_hyper *hp = &s->hyper->ifca;
    const double gamma = hp->gamma;
    const int model_mode = hp->mode == PFLREF_IFCA_MODEL;
    const char *const line = SERVER_LINE[hp->mode];
    const size_t P = s->P;
    const long t = (long)s->t;
    double *const theta = ws->theta, *const sum = ws->sum;
    const double *const count = ws->count;
    const double step = gamma / (double)M;   /* γ/|M_t| */
    /*@ loop invariant 0 <= j <= k;
        loop assigns j, theta[0 .. k * P - 1]; */
    for (size_t j = 0; j < k; j++) {
        double *theta_j = pflref_row(theta, j, k, P);
        const double *sum_j = pflref_row(sum, j, k, P);
        /* req: ifca.alg1.l8, ifca.alg1.l9 */
        if (!model_mode)
            pflref_accumulate(theta_j, -step, sum_j, P);
        else if (count[j] > 0.0)
            /*@ loop invariant 0 <= p <= P;
                loop assigns p, theta_j[0 .. P - 1]; */
            for (size_t p = 0; p < P; p++)
                theta_j[p] = sum_j[p] / count[j];
    }
    if (!pflref_all_finite(theta, k * P))
        return pflref_error_diverge(err, t, -1, -1, "theta");
    pflref_trace_emit(trace, PFLREF_EV_SERVER, "train", t, -1, -1, "theta",
                      theta, k * P, line);
    return PFLREF_OK;
}

/* One round of IFCA with the workspace ws = s->extra.  Proved call sites
 * (proofs/README.md): from the run's state, the validated plan and the
 * workspace, every machine's rows of θ and of the sums, and every client's
 * row of s->v, lie in their arrays. */
/*@ requires state_personal(s) && state_model(s);
    requires round_plan(plan, s->N);
    requires ifca_work_shape(ws, s, s->hyper->ifca.k);
    requires \separated(err, s, s->problem, ws, plan);
    assigns IFCA_WORK_FRAME(ws, s->hyper->ifca.k, s->P, s->N),
            s->v[0 .. s->N * s->P - 1], *err; */
static pflref_status ifca_round_with(pflref_state *s, const ifca_work *ws,
                                     const pflref_round_plan *plan,
                                     const pflref_trace *trace,
                                     pflref_error *err)
{
    const size_t P = s->P, N = s->N, k = s->hyper->ifca.k, M = plan->m;
    const long t = (long)s->t;
    double *const theta = ws->theta, *const sum = ws->sum;
    double *const count = ws->count;

    /* req: ifca.alg1.l3 */
    /* the server broadcasts θ_j^(t) */
    if (t == 0)
        pflref_trace_emit(trace, PFLREF_EV_NOTE, "train", t, -1, -1,
                          "theta0", theta, k * P, INIT_LINE);
    pflref_trace_emit(trace, PFLREF_EV_ROUND_BEGIN, "train", t, -1, -1,
                      "theta", theta, k * P, NULL);
    /*@ loop invariant 0 <= q <= k * P;
        loop assigns q, sum[0 .. k * P - 1]; */
    for (size_t q = 0; q < k * P; q++)
        sum[q] = 0.0;
    /*@ loop invariant 0 <= j <= k;
        loop assigns j, count[0 .. k - 1]; */
    for (size_t j = 0; j < k; j++)
        count[j] = 0.0;

    /* req: ifca.alg1.l4 */
    /* every machine i ∈ M_t, in ascending id */
    /*@ loop invariant 0 <= m <= M;
        loop assigns m, IFCA_MACHINE_FRAME(ws, k, P), *err; */
    for (size_t m = 0; m < M; m++) {
        pflref_status st = machine_update(s, ws, k, plan, m, trace, err);
        if (st != PFLREF_OK)
            return st;
    }
    pflref_status st = server_update(s, ws, k, M, trace, err);
    if (st != PFLREF_OK)
        return st;

    /* req: ifca.alg1.l10 */
    /* The reported models: v_i = θ_ĵ at the new models */
    st = assign_all(s, ws, k, err);
    if (st != PFLREF_OK)
        return st;
    pflref_trace_emit(trace, PFLREF_EV_NOTE, "train", t, -1, -1, "partition",
                      ws->part, N, PARTITION_LINE);
    return PFLREF_OK;
}

static pflref_status ifca_round(pflref_state *s, const pflref_round_plan *plan,
                                const pflref_trace *trace, pflref_error *err)
{
    return ifca_round_with(s, s->extra, plan, trace, err);
}

/* Re-synchronised checking: the state after round t is the k cluster
 * models θ_j^(t+1), the candidate's SERVER "theta" of round t. */
static void ifca_load_state(pflref_state *s, pflref_state_loader load,
                            void *ctx, long t)
{
    ifca_work *ws = s->extra;
    load(ctx, PFLREF_EV_SERVER, "theta", t, -1, ws->theta,
         s->hyper->ifca.k * s->P);
}

const pflref_algorithm pflref_ifca = {
    .name = "ifca",
    .title = "IFCA (Ghosh, Chung, Yin, Ramchandran, NeurIPS 2020, Alg. 1)",
    .has_personal = 1,
    .n_eval = 1,
    .eval = {{"personalized", PFLREF_SOURCE_PERSONAL}},
    .check = ifca_check,
    .work_alloc = ifca_work_alloc,
    .work_free = pflref_work_free,
    .init = ifca_init,
    .round = ifca_round,
    .load_state = ifca_load_state,
    .opt_slots = 1,   /* ifca.mode = model: LocalUpdate's optimizer */
};
