/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/algorithms/pfedme.c: pFedMe, Algorithm 1 of
 *   C. T. Dinh, N. H. Tran, T. D. Nguyen, "Personalized Federated Learning
 *   with Moreau Envelopes", NeurIPS 2020, arXiv 2006.08848v3.
 *
 * One round t (Alg. 1; lines counted from "input"):
 *   l. 3   the server sends w_t to all N clients
 *   l. 4-5 for every client i:  w_{i,0} ← w_t
 *   l. 6   for r = 0..R−1 (one scheduled batch D_{i,r} per local round):
 *   l. 7     θ ≈ argmin_θ h_i(θ; w_{i,r}, D_{i,r}) = f_i(θ; D) + (λ/2)‖θ − w_{i,r}‖²
 *            (eq. (7)), by K steps θ ← θ − η_p (∇f_i(θ; D) + λ(θ − w_{i,r}))
 *            (ref/engine/prox_inner.c), starting from θ = w_{i,r}
 *   l. 8     w_{i,r+1} ← w_{i,r} − ηλ(w_{i,r} − θ)
 *   l. 9   the server samples S^t, |S^t| = S, without replacement
 *   l. 10  w_{t+1} ← (1 − β) w_t + β (1/S) Σ_{i∈S^t} w_{i,R}
 * The personalised model of client i is its last θ (θ̃_i(w_{i,R−1})).
 *
 * Symbols:  w_t ↔ s->w (P)   w_{i,r} ↔ ws->w_local (P)   θ ↔ ws->theta (P)
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
 *   pfedme.eval_reset     a defect, not a reading of the paper: none; or
 *                         initial: PFLlib's evaluation (every round, after
 *                         send_models) writes a never-trained client's
 *                         personalized_params, still the initial model,
 *                         into the model that pFedMeOptimizer steps, so the
 *                         client's FIRST training starts θ at w⁰ while
 *                         w_{i,0} = w_t (TsingZ0/PFLlib d832e76f6a23,
 *                         clientpFedMe.py train() and test_metrics_
 *                         personalized; shared/spec/notes-pfllib-as-run.md
 *                         §2.3, "Defect", check 2).  Only theta_start =
 *                         warm shows it (reset sets θ ← w_{i,r} anyway).
 * The client optimizer (opt.*; docs/algorithms/pfedme.md) is line 7's: the
 * object that steps θ in both codes is an optimizer of the client's model
 * (pFedMeOptimizer, TsingZ0/PFLlib clientpFedMe.py:21, CharlieDinh/pFedMe
 * userpFedMe.py:26), so opt.* steps θ on ∇h_i at η_p (prox_inner.c), its
 * state begun per opt.state at each client update and carried through
 * the R inner solves; line 8 stays the paper's.  Batch normalisation:
 * θ's K training passes per batch move its r_μ, r_v (bn.running), and
 * w_{i,r+1} takes θ's (buffers_follow: the uploaded model is θ's).
 * bn.aggregate = parameters_only: PFLlib's exchange of parameters() only
 * (pfedme_round_keep below).
 * A client that does not train in a round keeps its personalised model.
 * The check refuses, before round 0, a round that does not list every
 * client under pfedme.train = all, and a round with no sampled client.
 *
 * State and work: w_t is the state's w and θ_i its v_i; the buffers of a
 * round (w_t's copy, w_{i,r}, θ, the gradient) are pfedme_work.
 *
 * Trace: θ's inner steps are STEP "theta" numbered rK + k; w_{i,r+1} is
 * STEP "w_local" numbered r + 1; CLIENT_END gives w_{i,R} and the last θ.
 * Determinism: clients train and are summed in ascending id.
 * Cost per round: (trainers) × R × K gradients + O(N·P).
 */
#include <stdio.h>
#include <stdlib.h>
#include "algorithms/algorithms.h"
#include "engine/bn_own.h"
#include "engine/work.h"

static const char *const LOCAL_LINE =
    "Alg. 1 l. 8: w_{i,r+1} ← w_{i,r} − ηλ(w_{i,r} − θ)";
static const char *const SERVER_LINE[] = {
    "Alg. 1 l. 10: w_{t+1} ← (1 − β) w_t + β (1/S) Σ_{i∈S^t} w_{i,R}",
    "w_{t+1} ← (1 − β) w_t + β Σ_{i∈S^t} (n_i/Σ n_j) w_{i,R}"};

/* pFedMe's work buffers, P doubles each (zero-filled; only `trained` is
 * carried between rounds: w_t and the personalised θ_i live in the
 * state). */
typedef struct {
    pflref_work list; /* the allocations (ref/engine/work.h)               */
    double *w_t;      /* w_t, the round-start global model (l. 3)          */
    double *w_local;  /* w_{i,r}, client i's local model (l. 5, 8)         */
    double *theta;    /* θ, the inner iterate of l. 7                      */
    double *g;        /* ∇f_i(θ; D_{i,r}), the inner gradient              */
    double *trained;  /* N: 1 once client i has trained (eval_reset only)  */
} pfedme_work;

/* The workspace's shape for the proofs (pfedme_work_shape: w_t, w_local,
 * θ, g P doubles and trained N, apart from each other and from the state)
 * is defined in proofs/acsl/pfedme.h (ACSL only). */
#include "../../proofs/acsl/pfedme.h"

static void *pfedme_work_alloc(const pflref_problem *problem,
                               const pflref_hyper *hyper)
{
    (void)hyper;
    const size_t P = problem->model.P;
    pfedme_work *ws = calloc(1, sizeof *ws);
    if (ws == NULL)
        return NULL;
    ws->w_t = pflref_work_doubles(&ws->list, P, 1);
    ws->w_local = pflref_work_doubles(&ws->list, P, 1);
    ws->theta = pflref_work_doubles(&ws->list, P, 1);
    ws->g = pflref_work_doubles(&ws->list, P, 1);
    ws->trained = pflref_work_doubles(&ws->list, problem->N, 1);
    return pflref_work_ready(ws);
}

static int pfedme_train_all(const pflref_hyper *hyper)
{
    return hyper->pfedme.train == PFLREF_PFEDME_TRAIN_ALL;
}

/* Every round against the switches, before round 0: under pfedme.train =
 * all every client trains; the client optimizer's weight decay is not
 * scoped by a split (pflref_prox_opt_check).  (That every round samples at
 * least one client, l. 9's S^t ≠ ∅, the driver's schedule validation has
 * already ensured: ref/sampling/schedule_check.c.) */
static pflref_status pfedme_check(const pflref_problem *problem,
                                  const pflref_hyper *hyper,
                                  const pflref_schedule *schedule,
                                  const unsigned char *mask,
                                  pflref_error *err)
{
    (void)mask;
    pflref_status st = pflref_prox_opt_check(hyper, "pfedme", err);
    if (st != PFLREF_OK)
        return st;
    if (!pfedme_train_all(hyper))
        return PFLREF_OK;
    for (size_t t = 0; t < schedule->T; t++) {
        const pflref_round_plan *plan = &schedule->rounds[t];
        if (plan->m != problem->N) {
            char where[PFLREF_WHERE_MAX];
            snprintf(where, sizeof where, "schedule.rounds[%zu].clients", t);
            return pflref_error_set(err, PFLREF_EINVAL, where,
                                    "pfedme.train = all: every client "
                                    "trains, but round %zu lists %zu of %zu",
                                    t, plan->m, problem->N);
        }
    }
    return PFLREF_OK;
}

/* 1 when client i is in the (ascending) selected set of plan, else 0.
 * Proved (proofs/README.md). */
/*@ requires selected_readable(plan);
    assigns \nothing;
    ensures \result == 0 || \result == 1;
    ensures \result == 1 <==> selected_in(plan, plan->n_selected, i); */
static int is_selected(const pflref_round_plan *plan, size_t i)
{
    /*@ loop invariant 0 <= q <= plan->n_selected;
        loop invariant !selected_in(plan, q, i);
        loop assigns q; loop variant plan->n_selected - q; */
    for (size_t q = 0; q < plan->n_selected; q++)
        if (plan->selected[q] == i)
            return 1;
    return 0;
}

/* The running statistics of w_{i,r+1} (a model with batch normalisation):
 * θ's.  In both codes w_{i,r} is a list of parameters() only (PFLlib
 * clientpFedMe.py:18 local_params; CharlieDinh/pFedMe userbase.py:34
 * local_model) and the model uploaded with w_{i,R} is the θ model, whose
 * buffers its K·R training forwards moved (clientpFedMe.py:68
 * update_parameters(self.model, self.local_params) replaces the
 * parameters only; serverbase.py:133 uploads client.model).  So line 8
 * steps the parameters and w_{i,r+1}'s r_μ, r_v are θ's, and θ ← w_{i,r}
 * (theta_start = reset) keeps them.  Without batch normalisation it writes
 * nothing.  Its frame is an assumption of the proof of client_update
 * (proofs/README.md). */
/*@ assigns w_local[0 .. s->P - 1]; */
static void buffers_follow(const pflref_state *s, const double *theta,
                           double *w_local)
{
    const pflref_model *m = &s->problem->model;
    for (size_t q = 0; m->bn && q < m->nblocks; q++)
        if (m->blocks[q].is_buffer)
            pflref_copy(w_local + m->blocks[q].offset,
                        theta + m->blocks[q].offset, m->blocks[q].size);
}

/* 1 the first time client i trains, which trained[i] = 0 tells; marks it
 * trained (1).  Proved (proofs/README.md). */
/*@ requires \valid(trained + i);
    assigns trained[i];
    ensures trained_mark(trained[i], 1) && (\result == 0 || \result == 1);
    ensures \result == 1 <==> trained_mark(\old(trained[i]), 0); */
static int first_training(double *trained, size_t i)
{
    const int first = trained[i] == 0.0;
    trained[i] = 1.0;
    return first;
}

/* Client i's R local rounds from w_t (Alg. 1 l. 5-8), under its step
 * sizes: ws->w_local ends as w_{i,R} and ws->theta as the last θ.  Proved
 * call sites (proofs/README.md): θ's starts and the inner loop get P
 * entries of the workspace, and it writes w_local, θ, g, trained[i], the
 * round's step sizes and *err only. */
/*@ requires \valid_read(s) && state_model(s) && i < s->N;
    requires \valid_read(s->w0 + (0 .. s->P - 1));
    requires pfedme_buffers(ws, s->P, s->N);
    requires \separated(ws->theta + (0 .. s->P - 1), s->w0 + (0 .. s->P - 1));
    requires \separated(ws->w_local + (0 .. s->P - 1), s);
    requires \separated(err, ws, s, s->problem);
    assigns ws->w_local[0 .. s->P - 1], ws->theta[0 .. s->P - 1],
            ws->g[0 .. s->P - 1], ws->trained[i], s->hyper_round, *err;
    ensures state_model(s);
 */
static pflref_status client_update(pflref_state *s, size_t i,
                                   const pflref_batches *b, pfedme_work *ws,
                                   const pflref_trace *trace,
                                   pflref_error *err)
{
    pflref_client_lr(s, i, 0, 1);  /* η, η_p of i's train() (lr.count) */
    pflref_optim_begin(s, i);      /* the inner solver's optimizer
                                      (opt.state: reset = new here) */
    const pflref_hyper *h = s->hyper;
    const double eta = h->eta, lambda = h->lambda;
    const int reset = h->pfedme.theta_start == PFLREF_PFEDME_THETA_RESET;
    const size_t P = s->P;
    const long t = (long)s->t;
    double *w_local = ws->w_local, *theta = ws->theta;

    /* req: pfedme.alg1.l5 */
    /* l. 5: w_{i,0} ← w_t; θ starts there too (eval_reset = initial: at
     * w⁰ the first time client i trains, PFLlib's evaluation defect) */
    pflref_client_begin(s, i, "w_local", w_local, ws->w_t, trace);
    const int first = first_training(ws->trained, i);
    const int from_w0 =
        h->pfedme.eval_reset == PFLREF_PFEDME_EVAL_RESET_INITIAL && first;
    pflref_copy(theta, from_w0 ? s->w0 : ws->w_t, P);
    /* req: pfedme.alg1.l6 */
    /*@ loop invariant state_model(s);
        loop assigns r, w_local[0 .. P - 1], theta[0 .. P - 1],
                     ws->g[0 .. P - 1], *err;
     */
    for (size_t r = 0; r < b->nsteps; r++) {
        /* req: pfedme.alg1.l7, pfedme.eq7 */
        /* l. 7: θ ← w_{i,r} (reset) or carried over (warm), then K steps */
        if (reset)
            pflref_copy(theta, w_local, P);
        const pflref_prox_inner job = pflref_prox_inner_job(s, i, b, r,
                                                            w_local);
        pflref_status st = pflref_prox_inner_run(&job, theta, ws->g, s->ws,
                                                 trace, err);
        if (st != PFLREF_OK)
            return st;
        /* req: pfedme.alg1.l8, pfedme.moreau_grad */
        /* l. 8: w_{i,r+1} ← w_{i,r} − ηλ(w_{i,r} − θ) */
        /*@ loop assigns p, w_local[0 .. P - 1]; */
        for (size_t p = 0; p < P; p++)
            w_local[p] -= eta * lambda * (w_local[p] - theta[p]);
        /* r_μ, r_v are not parameters: w_{i,r+1} carries θ's */
        buffers_follow(s, theta, w_local);
        if (!pflref_all_finite(w_local, P))
            return pflref_error_diverge(err, t, (long)i, (long)(r + 1),
                                        "w_local");
        pflref_trace_emit(trace, PFLREF_EV_STEP, "train", t, (long)i,
                          (long)(r + 1), "w_local", w_local, P, LOCAL_LINE);
    }
    pflref_client_end(s, i, "w_local", w_local, trace);
    pflref_client_end(s, i, "theta", theta, trace);
    return PFLREF_OK;
}

/* One round with the workspace ws = s->extra.  Proved call sites
 * (proofs/README.md): from the run's state, the validated plan and the
 * workspace, each block v_i it keeps lies in s->v and each w_{i,R} it sums
 * is P entries apart from the accumulator. */
/*@ requires state_global(s) && state_personal(s);
    requires round_plan(plan, s->N);
    requires state_model(s) && pfedme_work_shape(ws, s);
    requires \separated(err, ws, s, s->problem, plan,
                        plan->clients + (0 .. plan->m - 1));
    requires \separated(plan->clients + (0 .. plan->m - 1), s);
 */
static pflref_status pfedme_round_with(pflref_state *s, pfedme_work *ws,
                                       const pflref_round_plan *plan,
                                       const pflref_trace *trace,
                                       pflref_error *err)
{
    const pflref_problem *pr = s->problem;
    const pflref_pfedme_hyper *hp = &s->hyper->pfedme;
    const double beta = s->hyper->beta;
    const size_t P = s->P, N = s->N, m = plan->m;
    const size_t *const clients = plan->clients;
    const double *const w_t = ws->w_t, *const acc = s->accum;
    double *const w = s->w, *const v = s->v;

    /* req: pfedme.alg1.l3 */
    pflref_round_begin(s, ws->w_t, trace);
    /* Σ_{i∈S^t} n_i, for pfedme.weights = samples */
    const double n_S = pflref_train_n(pr, plan->selected, plan->n_selected);
    /* req: pfedme.alg1.l4 */
    /*@ loop invariant state_model(s);
        loop invariant s->P == P && s->N == N && s->w0 == \at(s->w0, Pre);
        loop assigns j, ws->w_local[0 .. P - 1], ws->theta[0 .. P - 1],
                     ws->g[0 .. P - 1], ws->trained[0 .. N - 1],
                     v[0 .. N * P - 1], s->accum[0 .. P - 1],
                     s->hyper_round, *err;
     */
    for (size_t j = 0; j < m; j++) {
        const size_t i = clients[j];
        pflref_status st = client_update(s, i, &plan->batches[j], ws, trace,
                                         err);
        if (st != PFLREF_OK)
            return st;
        /* the personalised model reported for client i */
        double *v_i = pflref_row(v, i, N, P);
        if (hp->personal_eval == PFLREF_PFEDME_EVAL_THETA)
            pflref_copy(v_i, ws->theta, P);
        else if (hp->personal_eval == PFLREF_PFEDME_EVAL_LOCAL_W)
            pflref_copy(v_i, ws->w_local, P);
        /* req: pfedme.alg1.l9 */
        /* l. 9: only the sampled clients send w_{i,R} */
        if (!is_selected(plan, i))
            continue;
        const double c =
            hp->weights == PFLREF_PFEDME_WEIGHTS_SAMPLES
                ? (double)pr->clients[i].train.n / n_S   /* n_i / Σ n_j */
                : 1.0 / (double)plan->n_selected;        /* 1/S         */
        pflref_accumulate(s->accum, c, ws->w_local, P);
    }

    /* req: pfedme.alg1.l10 */
    /* l. 10: w_{t+1} ← (1 − β) w_t + β · (the average above) */
    /*@ loop assigns p, w[0 .. P - 1]; */
    for (size_t p = 0; p < P; p++)
        w[p] = (1.0 - beta) * w_t[p] + beta * acc[p];
    pflref_status st = pflref_server_publish(s, SERVER_LINE[hp->weights],
                                             trace, err);
    if (st == PFLREF_OK && hp->personal_eval == PFLREF_PFEDME_EVAL_GLOBAL)
        /*@ loop assigns i, v[0 .. N * P - 1]; */
        for (size_t i = 0; i < N; i++)
            pflref_copy(pflref_row(v, i, N, P), w, P);
    return st;
}

/* The round under bn.aggregate = parameters_only on a model with batch
 * normalisation, PFLlib's reading (TsingZ0/PFLlib d832e76f6a23
 * system/flcore; ref/engine/bn_own.c), B the buffer entries (r_μ, r_v):
 *   clientpFedMe.py:74-77 set_parameters copies model.parameters() into
 *     the client's self.model (θ's model) and local_params (w_{i,r}, a
 *     list of parameters() only, clientpFedMe.py:18): so w_{i,0} and θ
 *     start from w_t's parameters with r_i, the buffers client i's model
 *     last left (w⁰'s until it first trains) — here w_t's copy takes r_i
 *     on B before client_update, which sets w_{i,0} and θ from it;
 *   r_i ← w_{i,R}'s B (θ's: buffers_follow) after the client's R rounds,
 *     for every trainer (pfedme.train = all: the unselected too);
 *   serverbase.py:138-150 aggregate_parameters: w_{t+1} ← a deepcopy of
 *     uploaded_models[0] with parameters() averaged, then
 *     serverpFedMe.py:88-91 beta_aggregate_parameters mixes parameters()
 *     only: l. 10 on ¬B, and w_{t+1} on B ← r_{i₁}, i₁ the first client of
 *     S^t that uploads (ascending id), no β-mixing there;
 *   pfedme.personal_eval = global: v_i ← w_{t+1}'s parameters with r_i
 *     (the client's model after send_models); theta and local_w carry
 *     r_i already.
 * Otherwise as pfedme_round_with (client_update is its, unchanged). */
static pflref_status pfedme_round_keep(pflref_state *s, pfedme_work *ws,
                                       const pflref_round_plan *plan,
                                       const pflref_trace *trace,
                                       pflref_error *err)
{
    const pflref_problem *pr = s->problem;
    const pflref_model *md = &pr->model;
    const pflref_pfedme_hyper *hp = &s->hyper->pfedme;
    const double beta = s->hyper->beta;
    const size_t P = s->P, N = s->N;
    pflref_status st = pflref_bn_own_alloc(s, err);
    if (st != PFLREF_OK)
        return st;
    pflref_round_begin(s, ws->w_t, trace);
    const double n_S = pflref_train_n(pr, plan->selected, plan->n_selected);
    size_t first = N;   /* i₁: the first uploader */
    for (size_t j = 0; j < plan->m; j++) {
        const size_t i = plan->clients[j];
        double *r_i = pflref_bn_own_row(s, i);
        pflref_bn_copy_buffers(md, ws->w_t, r_i);   /* set_parameters */
        st = client_update(s, i, &plan->batches[j], ws, trace, err);
        if (st != PFLREF_OK)
            return st;
        pflref_bn_copy_buffers(md, r_i, ws->w_local);   /* θ model's */
        double *v_i = pflref_row(s->v, i, N, P);
        if (hp->personal_eval == PFLREF_PFEDME_EVAL_THETA)
            pflref_copy(v_i, ws->theta, P);
        else if (hp->personal_eval == PFLREF_PFEDME_EVAL_LOCAL_W)
            pflref_copy(v_i, ws->w_local, P);
        if (!is_selected(plan, i))
            continue;
        if (first == N)
            first = i;
        const double c =
            hp->weights == PFLREF_PFEDME_WEIGHTS_SAMPLES
                ? (double)pr->clients[i].train.n / n_S
                : 1.0 / (double)plan->n_selected;
        pflref_accumulate(s->accum, c, ws->w_local, P);
    }
    /* l. 10 on parameters(); B: the first uploader's r_i (w's own when no
     * trainer uploads; ws->g, free now, keeps them) */
    pflref_copy(ws->g, s->w, P);
    for (size_t p = 0; p < P; p++)
        s->w[p] = (1.0 - beta) * s->w[p] + beta * s->accum[p];
    pflref_bn_copy_buffers(md, s->w,
                           first < N ? pflref_bn_own_row(s, pflref_bn_first_upload(plan, first))
                                     : ws->g);
    st = pflref_server_publish(s, SERVER_LINE[hp->weights], trace, err);
    if (st == PFLREF_OK && hp->personal_eval == PFLREF_PFEDME_EVAL_GLOBAL)
        for (size_t i = 0; i < N; i++) {
            double *v_i = pflref_row(s->v, i, N, P);
            pflref_copy(v_i, s->w, P);
            pflref_bn_copy_buffers(md, v_i, pflref_bn_own_row(s, i));
        }
    return st;
}

static pflref_status pfedme_round(pflref_state *s,
                                  const pflref_round_plan *plan,
                                  const pflref_trace *trace,
                                  pflref_error *err)
{
    if (pflref_bn_keeps_own(s))   /* bn.aggregate = parameters_only */
        return pfedme_round_keep(s, s->extra, plan, trace, err);
    return pfedme_round_with(s, s->extra, plan, trace, err);
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
    .check = pfedme_check,
    .work_alloc = pfedme_work_alloc,
    .work_free = pflref_work_free,
    .round = pfedme_round,
    .load_state = pflref_bn_own_load,   /* bn.aggregate's r_i */
    .opt_slots = 1,   /* the inner solver's (Alg. 1 l. 7: the object that
                         steps θ, pFedMeOptimizer in both codes); line 8
                         stays the paper's step on w_{i,r} */
};
