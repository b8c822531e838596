/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/algorithms/fedalt.c: FedAlt and FedSim, Algorithms 4 and 5 of
 *   K. Pillutla, K. Malik, A. Mohamed, M. Rabbat, M. Sanjabi, L. Xiao,
 *   "Federated Learning with Partial Model Personalization", ICML 2022,
 *   arXiv 2204.03809 (the seed 002_…; Alg. 1–3 in the main text are the
 *   same procedure split into the outer loop, LocalAlt and LocalSim),
 * and the presets built on them: FedRep (fedalt), FedPer, LG-FedAvg and
 * FedBABU (fedsim); docs/algorithms/fedalt-fedsim.md.
 *
 * The model's parameters are split into shared u (the split's shared
 * blocks) and personal v_i (its personal blocks).  One round t:
 *
 *   Alg. 4/5 line 3   sample S^(t), m of n devices without replacement
 *                     (the schedule's participants)
 *   FedAlt (Alg. 4, LocalAlt):
 *     lines 5–10      v_{i,0} = v_i^(t); τ_v steps
 *                     v_{i,k+1} = v_{i,k} − γ_v G_{i,v}(u^(t), v_{i,k}, z_{i,k});
 *                     v_i^(t+1) = v_{i,τ_v}
 *     lines 11–15     u_{i,0} = u^(t); τ_u steps
 *                     u_{i,k+1} = u_{i,k} − γ_u G_{i,u}(u_{i,k}, v_i^(t+1), z_{i,k});
 *                     u_i^(t+1) = u_{i,τ_u}
 *   FedSim (Alg. 5, LocalSim):
 *     lines 5–11      (u_{i,0}, v_{i,0}) = (u^(t), v_i^(t)); τ steps, both
 *                     partial gradients at the same point (u_{i,k}, v_{i,k}):
 *                     v_{i,k+1} = v_{i,k} − γ_v G_{i,v}(u_{i,k}, v_{i,k}, z_{i,k})
 *                     u_{i,k+1} = u_{i,k} − γ_u G_{i,u}(u_{i,k}, v_{i,k}, z_{i,k})
 *   line 16 (Alg. 4) / 12 (Alg. 5)
 *                     u^(t+1) = Σ_{i∈S} α_i u_i^(t+1) / Σ_{i∈S} α_i
 *   unselected devices keep v_j.
 *
 * Local work comes from the schedule: a device's batch list holds its
 * steps in order; FedAlt takes the first τ_v batches (hyperparameter tau_v)
 * for v and the remaining τ_u for u (Alg. 4 draws z afresh in each step);
 * FedSim takes τ = all of them.  Each G is the gradient of the batch-mean
 * loss (spec README rule 3).
 *
 * Final fine-tuning (the paper's pipeline step (c), App. B.2; optional:
 * when the schedule has a post phase): every device i runs its post batches
 *   v_i ← v_i − η_ft ∇_v F_i(u^(T), v_i; z)      (pfl.finetune = personal)
 *   (u, v_i) ← (u, v_i) − η_ft ∇F_i(u, v_i; z)   (pfl.finetune = full)
 * from (u^(T), v_i^(T)) (stateless: from (u^(T), v⁰)).
 * PFLlib's FedBABU (ref/algorithms/fedalt_ft.c): pfl.finetune_start =
 * last_local starts device i from the model it last held, its iterate
 * (u_i^(T), v_i^(T)) if it trained in round T−1, else (u^(T−1), v_i) as it
 * was sent at that round's start; pfl.finetune_lr = decayed steps with
 * η_ft times the decay its scheduler reached (lr.*).
 *
 * Switches (the paper's reading first):
 *   pfl.state     stateful: v_i persists; stateless: v_i ← v⁰ at every
 *                 visit and the visit's v is discarded (App. C.4)
 *   pfl.weights   samples: α_i = N_i/N (the paper's "common practice",
 *                 eq. (1)); uniform: α_i = 1/n, i.e. (1/m) Σ u_i (Alg. 1
 *                 line 8, the main text's simplification); batches: α_i =
 *                 the device's number of scheduled batches this round (the
 *                 official code weights by len(client_loader))
 *   pfl.finetune  personal | full (FedBABU fine-tunes the whole model)
 *   pfl.finetune_start  global | last_local (PFLlib's FedBABU)
 *   pfl.finetune_lr     constant | decayed (PFLlib's FedBABU)
 *   bn.aggregate  average: the running statistics r_μ, r_v of the shared
 *                 blocks travel and are averaged with u (a state_dict
 *                 average of the shared part); parameters_only: PFLlib's
 *                 parameters() exchange (pfl_round_keep below)
 *
 * State: s->w holds (u, v⁰): u in the shared entries, the initial personal
 * parameters in the personal ones.  s->v + i·P holds device i's full model
 * (u, v_i); its shared entries are set to u^(t+1) after every round, so it
 * is what `personalized` evaluates.  FedAlt and FedSim keep no other state;
 * their work buffers are pfl_work's (the device's iterate and a gradient).
 *
 * Symbols:  u ↔ the shared entries (s->shared)   v_i ↔ the personal
 *           entries (s->mask) of s->v + i·P   γ_u, γ_v ↔ hyper->gamma_u,
 *           gamma_v   τ_v ↔ hyper->tau_v   η_ft ↔ hyper->eta_ft
 *           S^(t) ↔ plan->clients   (u_{i,k}, v_{i,k}) ↔ pfl_work.x
 *
 * Determinism: devices train and are summed in ascending id.
 * Cost per round: τ (FedSim) or τ_v + τ_u (FedAlt) gradients per selected
 * device, + O(N·P).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "algorithms/algorithms.h"
#include "algorithms/fedalt_ft.h"
#include "engine/bn_own.h"
#include "engine/work.h"

static const char *const V_LINE =
    "Alg. 4 l.9: v_{i,k+1} = v_{i,k} − γ_v G_{i,v}(u^(t), v_{i,k}, z)";
static const char *const U_LINE =
    "Alg. 4 l.14: u_{i,k+1} = u_{i,k} − γ_u G_{i,u}(u_{i,k}, v_i^(t+1), z)";
static const char *const SIM_LINE =
    "Alg. 5 l.9–10: (u, v)_{i,k+1} = (u, v)_{i,k} − (γ_u, γ_v) G_i(u_{i,k}, "
    "v_{i,k}, z)";
static const char *const SERVER_LINE =
    "Alg. 4 l.16 / Alg. 5 l.12: u^(t+1) = Σ_S α_i u_i^(t+1) / Σ_S α_i";
static const char *const SERVER_LINE_KEEP =
    "Alg. 4 l.16 / Alg. 5 l.12: u^(t+1) = Σ_S α_i u_i^(t+1) / Σ_S α_i on "
    "parameters(); the shared r_μ, r_v ← the first uploader's";
static const char *const FT_LINE[] = {
    "fine-tuning: v_i ← v_i − η_ft ∇_v F_i(u, v_i; z)",
    "fine-tuning: (u, v_i) ← (u, v_i) − η_ft ∇F_i(u, v_i; z)"};

/* FedSim's checks, which FedAlt shares: the final fine-tuning needs η_ft;
 * pfl.weights = batches needs a batch in every round. */
static pflref_status fedsim_check(const pflref_problem *problem,
                                  const pflref_hyper *hyper,
                                  const pflref_schedule *schedule,
                                  const unsigned char *mask,
                                  pflref_error *err)
{
    (void)mask;
    const double eta_ft = hyper->eta_ft;
    const int by_batches = hyper->pfl.weights == PFLREF_PFL_WEIGHTS_BATCHES;
    if (schedule->post != NULL && isnan(eta_ft))
        return pflref_error_set(err, PFLREF_EINVAL,
                                "algorithm.hyperparameters.eta_ft",
                                "the final fine-tuning (schedule.post) needs "
                                "hyperparameter eta_ft (η_ft)");
    /* bn.aggregate = parameters_only keeps each device's running
     * statistics in its own model, which the stateless reading discards */
    if (pflref_bn_keeps_own_in(problem, hyper) &&
        hyper->pfl.state == PFLREF_PFL_STATELESS)
        return pflref_error_set(
            err, PFLREF_EINVAL, "algorithm.switches.bn.aggregate",
            "bn.aggregate = parameters_only keeps each device's batch-norm "
            "running statistics in its own model across rounds, which "
            "pfl.state = stateless discards at every visit: use pfl.state = "
            "stateful (as PFLlib does) or bn.aggregate = average");
    for (size_t t = 0; by_batches && t < schedule->T; t++) {
        size_t steps = 0;
        for (size_t j = 0; j < schedule->rounds[t].m; j++)
            steps += schedule->rounds[t].batches[j].nsteps;
        if (steps == 0) {
            char where[PFLREF_WHERE_MAX];
            snprintf(where, sizeof where, "schedule.rounds[%zu].batches", t);
            return pflref_error_set(err, PFLREF_EINVAL, where,
                                    "pfl.weights = batches weights devices "
                                    "by their batches, and round %zu has "
                                    "none", t);
        }
    }
    return PFLREF_OK;
}

/* A participation has at least τ_v = *ctx batches. */
static pflref_status has_tau_v(const void *ctx, size_t t, size_t client,
                               const pflref_batches *b, pflref_error *err)
{
    const size_t tau_v = *(const size_t *)ctx;
    if (b->nsteps >= tau_v)
        return PFLREF_OK;
    return pflref_error_set(
        err, PFLREF_EINVAL, NULL,
        "fedalt takes its tau_v = %zu v steps from the first "
        "batches, but client %zu has only %zu in round %zu",
        tau_v, client, b->nsteps, t);
}

/* FedSim's checks, then τ_v ≤ the steps of every participation (LocalAlt
 * takes its v steps from the first batches). */
static pflref_status fedalt_check(const pflref_problem *problem,
                                  const pflref_hyper *hyper,
                                  const pflref_schedule *schedule,
                                  const unsigned char *mask,
                                  pflref_error *err)
{
    const size_t tau_v = hyper->tau_v;
    pflref_status st = fedsim_check(problem, hyper, schedule, mask, err);
    if (st != PFLREF_OK)
        return st;
    return pflref_schedule_walk(schedule, has_tau_v, NULL, &tau_v, err);
}

/* The work buffers of FedAlt and FedSim, and pfl.finetune_start =
 * last_local's record of the devices' own models. */
typedef struct {
    pflref_work list;  /* the allocations (ref/engine/work.h)             */
    double *x;         /* P: device i's iterate (u_{i,k}, v_{i,k})        */
    double *g;         /* P: a stochastic gradient G_i at the iterate     */
    double *last;      /* N×P: device i's model as it stands after the
                          latest round, before the broadcast (its iterate
                          if it trained, else the model it was sent);
                          NULL unless pfl.finetune_start = last_local     */
} pfl_work;

/* The workspace pfl_work_alloc returns for the run state s (the shape the
 * proofs of pfl_round and pfl_finish start from, proofs/README.md): x and
 * g P writable doubles each, and last (when not NULL) N·P, apart from each
 * other, from the workspace record and from the state's arrays. */
/*@ predicate pfl_work_shape{L}(pfl_work *ws, pflref_state *s) =
      \valid_read(ws) &&
      \valid(ws->x + (0 .. s->P - 1)) && \valid(ws->g + (0 .. s->P - 1)) &&
      \separated(ws->x + (0 .. s->P - 1), ws->g + (0 .. s->P - 1), ws, s,
                 s->w + (0 .. s->P - 1), s->w0 + (0 .. s->P - 1),
                 s->v + (0 .. s->N * s->P - 1), s->accum + (0 .. s->P - 1),
                 s->mask + (0 .. s->P - 1), s->shared + (0 .. s->P - 1)) &&
      (ws->last == \null ||
       (\valid(ws->last + (0 .. s->N * s->P - 1)) &&
        \separated(ws->last + (0 .. s->N * s->P - 1),
                   ws->x + (0 .. s->P - 1), ws->g + (0 .. s->P - 1), ws, s,
                   s->w + (0 .. s->P - 1), s->w0 + (0 .. s->P - 1),
                   s->v + (0 .. s->N * s->P - 1), s->accum + (0 .. s->P - 1),
                   s->mask + (0 .. s->P - 1),
                   s->shared + (0 .. s->P - 1))));
 */

static void *pfl_work_alloc(const pflref_problem *problem,
                            const pflref_hyper *hyper)
{
    const size_t P = problem->model.P;
    pfl_work *ws = calloc(1, sizeof *ws);
    if (ws == NULL)
        return NULL;
    ws->x = pflref_work_doubles(&ws->list, P, 1);
    ws->g = pflref_work_doubles(&ws->list, P, 1);
    if (pflref_pfl_ft_last_local(hyper))
        ws->last = pflref_work_doubles(&ws->list, problem->N, P);
    return pflref_work_ready(ws);
}

/* FedSim's step on batch q: both partial gradients at the same point,
 *   x ← x − (γ_u on u, γ_v on v) ⊙ ∇F_i(x; z_q). */
static pflref_status sim_step(pflref_state *s, size_t i,
                              const pflref_batches *b, size_t q, double *x,
                              double *g, const pflref_trace *trace,
                              pflref_error *err)
{
    const double gamma_u = s->hyper->gamma_u, gamma_v = s->hyper->gamma_v;
    const size_t P = s->P;
    const long t = (long)s->t;
    pflref_status st = pflref_batch_grad(&s->problem->model, x,
                                         &s->problem->clients[i].train, b, q,
                                         s->ws, g, t, (long)i, err);
    if (st != PFLREF_OK)
        return st;
    /* the running statistics of this training pass (bn.running) */
    if ((st = pflref_bn_running_move(&s->hyper->bn, &s->problem->model, s->ws,
                                     x, t, (long)i, (long)(q + 1), err)))
        return st;
    /* req: fedsim.alg5.l9, fedsim.alg5.l10 */
    pflref_optim_state *opt = pflref_optim_get(s, i, 0);
    if (opt != NULL) {
        /* the client optimizer, one torch optimizer with two parameter
         * groups (γ_u on u, γ_v on v) on G_i = ∇F_i(x; z_q) */
        if (!pflref_optim_step_groups(opt, &s->problem->model, NULL, gamma_u,
                                      gamma_v, g, x))
            return pflref_error_diverge(err, t, (long)i, (long)(q + 1),
                                        "w_local");
        pflref_trace_emit(trace, PFLREF_EV_STEP, "train", t, (long)i,
                          (long)(q + 1), "w_local", x, P, SIM_LINE);
        return PFLREF_OK;
    }
    /* Alg. 5 l.9–10: v ← v − γ_v G_{i,v},  u ← u − γ_u G_{i,u} */
    for (size_t p = 0; p < P; p++)
        x[p] -= (s->mask[p] ? gamma_v : gamma_u) * g[p];
    if (!pflref_all_finite(x, P))
        return pflref_error_diverge(err, t, (long)i, (long)(q + 1), "w_local");
    pflref_trace_emit(trace, PFLREF_EV_STEP, "train", t, (long)i,
                      (long)(q + 1), "w_local", x, P, SIM_LINE);
    return PFLREF_OK;
}

/* Device i's local update (LocalAlt or LocalSim) on x = (u^(t), v_i).
 * Its frame is an assumption of the proof of pfl_round (proofs/README.md):
 * it writes x, g and *err (and the model workspace's temporaries). */
/*@ assigns x[0 .. s->P - 1], g[0 .. s->P - 1], *err; */
static pflref_status local_update(pflref_state *s, int alt, size_t i,
                                  const pflref_batches *b, double *x,
                                  double *g, const pflref_trace *trace,
                                  pflref_error *err)
{
    const pflref_hyper *h = s->hyper;
    const double gamma_u = h->gamma_u, gamma_v = h->gamma_v;
    const size_t tau_v = h->tau_v;
    const pflref_problem *pr = s->problem;
    pflref_status st = PFLREF_OK;
    /* req: fedsim.alg5.l6, fedsim.alg5.l7 */
    if (!alt) {
        for (size_t q = 0; st == PFLREF_OK && q < b->nsteps; q++)
            st = sim_step(s, i, b, q, x, g, trace, err);
        return st;
    }
    /* LocalAlt: batches 0..τ_v−1 move v (mask), the rest move u. */
    /* req: fedalt.alg4.l6, fedalt.alg4.l7, fedalt.alg4.l9 */
    const pflref_local_sgd v_job = {
        .model = &pr->model, .data = &pr->clients[i].train, .batches = b,
        .eta = gamma_v, .mask = s->mask, .phase = "train",
        .name = "w_local", .formula = V_LINE, .round = (long)s->t,
        .client = (long)i, .opt = pflref_optim_get(s, i, 1),
        .bn = &h->bn};
    /* req: fedalt.alg4.l11, fedalt.alg4.l12, fedalt.alg4.l13 */
    /* req: fedalt.alg4.l14 */
    const pflref_local_sgd u_job = {
        .model = &pr->model, .data = &pr->clients[i].train, .batches = b,
        .eta = gamma_u, .mask = s->shared, .phase = "train",
        .name = "w_local", .formula = U_LINE, .round = (long)s->t,
        .client = (long)i, .opt = pflref_optim_get(s, i, 0),
        .bn = &h->bn};
    /* req: fedalt.alg4.l10 */
    for (size_t q = 0; st == PFLREF_OK && q < b->nsteps; q++)
        st = pflref_local_sgd_step(q < tau_v ? &v_job : &u_job, q, x, g,
                                   s->ws, trace, err);
    return st;
}

/* The server weight α_i of device i (before normalisation over S). */
/* req: fedalt.eq1 */
/*@ assigns \nothing; */
static double server_weight(const pflref_state *s, size_t i,
                            const pflref_batches *b)
{
    switch (s->hyper->pfl.weights) {
    case PFLREF_PFL_WEIGHTS_UNIFORM:
        return 1.0;
    case PFLREF_PFL_WEIGHTS_BATCHES:
        return (double)b->nsteps;
    default:
        return (double)s->problem->clients[i].train.n;
    }
}

/* One round of FedAlt (alt = 1) or FedSim.  Proved call sites
 * (proofs/README.md): from the run's state, the validated plan and the
 * workspace, each block v_i it composes, keeps and sums lies in s->v, and
 * the broadcast's preconditions hold. */
/*@ requires state_global(s) && state_personal(s);
    requires round_plan(plan, s->N);
    requires pfl_work_shape(ws, s);
    requires \separated(err, s, plan, plan->clients + (0 .. plan->m - 1));
    requires \separated(plan->clients + (0 .. plan->m - 1), s);
 */
static pflref_status pfl_round(pflref_state *s, const pfl_work *ws,
                               const pflref_round_plan *plan,
                               const pflref_trace *trace, pflref_error *err,
                               int alt)
{
    const int stateless = s->hyper->pfl.state == PFLREF_PFL_STATELESS;
    const size_t P = s->P, N = s->N, m = plan->m;
    const size_t *const clients = plan->clients;
    const long t = (long)s->t;
    double *const x = ws->x, *const g = ws->g, *const acc = s->accum;
    double *const w = s->w, *const w0 = s->w0, *const v = s->v;
    const unsigned char *const shared = s->shared;

    pflref_round_begin(s, NULL, trace);     /* and acc := 0 */
    double total = 0.0;              /* Σ_{i∈S} α_i */
    /*@ loop assigns j, total; */
    for (size_t j = 0; j < m; j++)
        total += server_weight(s, clients[j], &plan->batches[j]);
    /* last_local: every device's model as sent, (u^(t), v_i^(t)) */
    if (ws->last != NULL)
        pflref_copy(ws->last, v, N * P);

    /* req: fedalt.alg4.l4, fedsim.alg5.l4 */
    /*@ loop assigns j, x[0 .. P - 1], g[0 .. P - 1], v[0 .. N * P - 1],
                     acc[0 .. P - 1], s->hyper_round, *err,
                     ws->last[0 .. N * P - 1];
     */
    for (size_t j = 0; j < m; j++) {
        const size_t i = clients[j];
        double *v_i = pflref_row(v, i, N, P);
        /* req: fedalt.alg4.l5, fedsim.alg5.l5 */
        /* x = (u^(t), v_i^(t)); stateless: (u^(t), v⁰) */
        pflref_compose(shared, w, stateless ? w0 : v_i, x, P);
        pflref_client_begin(s, i, "w_local", x, NULL, trace);
        pflref_client_lr(s, i, 0, 1);  /* γ_u, γ_v of i's train() (lr.count) */
        pflref_optim_begin(s, i);      /* its optimizers (opt.state) */
        pflref_status st = local_update(s, alt, i, &plan->batches[j], x, g,
                                        trace, err);
        if (st != PFLREF_OK)
            return st;
        pflref_client_end(s, i, "w_local", x, trace);
        if (ws->last != NULL)          /* last_local: its own iterate */
            pflref_copy(pflref_row(ws->last, i, N, P), x, P);
        if (!stateless) {
            /* req: fedsim.alg5.l11 */
            pflref_copy(v_i, x, P);         /* keeps v_i^(t+1) */
            pflref_client_end(s, i, "v", v_i, trace);
        }
        /* req: fedalt.alg4.l15 */
        /* the device sends u_i^(t+1) (its shared entries) */
        pflref_accumulate(acc, server_weight(s, i, &plan->batches[j]) / total,
                          x, P);
    }

    /* req: fedalt.alg4.l16, fedsim.alg5.l12 */
    /* u^(t+1) = Σ α_i u_i / Σ α_i on the shared entries; the personal
     * entries of w stay v⁰: w := (acc, v⁰). */
    pflref_compose(shared, acc, w, w, P);
    if (!pflref_all_finite(w, P))
        return pflref_error_diverge(err, t, -1, -1, "w");
    pflref_trace_emit(trace, PFLREF_EV_SERVER, "train", t, -1, -1, "w", w, P,
                      SERVER_LINE);
    /* req: fedalt.alg4.l17, fedsim.alg5.l13 */
    pflref_share_to_all(s);                  /* (u^(t+1), v_i^(t+1)) */
    return PFLREF_OK;
}

/* The round under bn.aggregate = parameters_only on a model with batch
 * normalisation (stateful; fedsim_check refuses stateless), PFLlib's
 * reading (TsingZ0/PFLlib d832e76f6a23 system/flcore; ref/engine/
 * bn_own.c): FedRep's, FedPer's, LG-FedAvg's and FedBABU's clients set
 * the shared block from the server by its parameters() only
 * (clientrep.py:86-88, clientper.py:45-47, clientlg.py:45-47,
 * clientbabu.py:51-53) and upload it (serverrep.py:85 and the like), and
 * serverbase.py:138-150 aggregate_parameters deep-copies the first upload
 * and sums parameters() only.  With B the buffer entries (r_μ, r_v):
 *   x = (u^(t) on the shared parameters, v_i on the personal entries and
 *        on the shared B)   the device's own statistics, kept in its model
 *   u^(t+1) on the shared parameters = Σ α_i u_i / Σ α_i (l. 16 / 12)
 *   u^(t+1) on the shared B = the first participant's (ascending id)
 *   the broadcast (l. 17 / 13) sets the shared parameters of every device
 *   and leaves its shared B.
 * A BN layer in the personal blocks is the device's under either value.
 * Otherwise as pfl_round. */
static pflref_status pfl_round_keep(pflref_state *s, const pfl_work *ws,
                                    const pflref_round_plan *plan,
                                    const pflref_trace *trace,
                                    pflref_error *err, int alt)
{
    const pflref_model *md = &s->problem->model;
    const size_t P = s->P, N = s->N, m = plan->m;
    const long t = (long)s->t;
    double *const x = ws->x, *const g = ws->g, *const w = s->w;
    pflref_round_begin(s, NULL, trace);     /* and accum := 0 */
    double total = 0.0;
    for (size_t j = 0; j < m; j++)
        total += server_weight(s, plan->clients[j], &plan->batches[j]);
    if (ws->last != NULL)
        pflref_copy(ws->last, s->v, N * P);
    for (size_t j = 0; j < m; j++) {
        const size_t i = plan->clients[j];
        double *v_i = pflref_row(s->v, i, N, P);
        /* x = (u^(t), v_i), the shared statistics v_i's own */
        pflref_compose(s->shared, w, v_i, x, P);
        pflref_bn_copy_buffers(md, x, v_i);
        pflref_client_begin(s, i, "w_local", x, NULL, trace);
        pflref_client_lr(s, i, 0, 1);
        pflref_optim_begin(s, i);
        pflref_status st = local_update(s, alt, i, &plan->batches[j], x, g,
                                        trace, err);
        if (st != PFLREF_OK)
            return st;
        pflref_client_end(s, i, "w_local", x, trace);
        if (ws->last != NULL)
            pflref_copy(pflref_row(ws->last, i, N, P), x, P);
        pflref_copy(v_i, x, P);             /* keeps v_i^(t+1), its B */
        pflref_client_end(s, i, "v", v_i, trace);
        pflref_accumulate(s->accum,
                          server_weight(s, i, &plan->batches[j]) / total, x,
                          P);
    }
    /* u^(t+1) on the shared entries; the shared B the first upload's */
    pflref_compose(s->shared, s->accum, w, w, P);
    if (m > 0)
        pflref_bn_copy_buffers_in(md, s->shared, w,
                                  pflref_row(s->v,
                                             pflref_bn_first_upload(plan, plan->clients[0]),
                                             N, P));
    if (!pflref_all_finite(w, P))
        return pflref_error_diverge(err, t, -1, -1, "w");
    pflref_trace_emit(trace, PFLREF_EV_SERVER, "train", t, -1, -1, "w", w, P,
                      SERVER_LINE_KEEP);
    pflref_bn_share_params(s);   /* (u^(t+1) on parameters, v_i, own B) */
    return PFLREF_OK;
}

static pflref_status fedalt_round(pflref_state *s,
                                  const pflref_round_plan *plan,
                                  const pflref_trace *trace, pflref_error *err)
{
    if (pflref_bn_keeps_own(s))   /* bn.aggregate = parameters_only */
        return pfl_round_keep(s, s->extra, plan, trace, err, 1);
    return pfl_round(s, s->extra, plan, trace, err, 1);
}

static pflref_status fedsim_round(pflref_state *s,
                                  const pflref_round_plan *plan,
                                  const pflref_trace *trace, pflref_error *err)
{
    if (pflref_bn_keeps_own(s))
        return pfl_round_keep(s, s->extra, plan, trace, err, 0);
    return pfl_round(s, s->extra, plan, trace, err, 0);
}

/* Final fine-tuning of every device on its post batches, with the
 * workspace ws = s->extra.  Proved call sites (proofs/README.md): every
 * block v_i it starts from (u^(T), v⁰) lies in s->v. */
/*@ requires state_global(s) && state_personal(s);
    requires pfl_work_shape(ws, s);
    requires state_model(s);
    requires \separated(err, s, s->problem);
 */
static pflref_status pfl_finetune(pflref_state *s, const pfl_work *ws,
                                  const pflref_schedule *schedule,
                                  const pflref_trace *trace,
                                  pflref_error *err)
{
    const pflref_problem *pr = s->problem;
    const pflref_pfl_hyper *hp = &s->hyper->pfl;
    const int full = hp->finetune == PFLREF_PFL_FINETUNE_FULL;
    const int stateless = hp->state == PFLREF_PFL_STATELESS;
    const size_t P = s->P, N = s->N;
    double *const w = s->w, *const w0 = s->w0, *const v = s->v;
    const unsigned char *const shared = s->shared;
    /*@ loop assigns i, v[0 .. N * P - 1], ws->g[0 .. P - 1], *err; */
    for (size_t i = 0; i < N; i++) {
        double *v_i = pflref_row(v, i, N, P);
        if (ws->last != NULL)      /* last_local: from its own last model */
            pflref_copy(v_i, pflref_row(ws->last, i, N, P), P);
        else if (stateless)                     /* from (u^(T), v⁰) */
            pflref_compose(shared, w, w0, v_i, P);
        pflref_trace_emit(trace, PFLREF_EV_CLIENT_BEGIN, "finetune", -1,
                          (long)i, 0, "v", v_i, P, NULL);
        pflref_optim_begin(s, i);   /* the fine-tuning's optimizer */
        const pflref_local_sgd job = {
            .model = &pr->model, .data = &pr->clients[i].train,
            .batches = &schedule->post[i],
            .eta = pflref_pfl_ft_eta(s, i),    /* η_ft (finetune_lr) */
            .mask = full ? NULL : s->mask, .phase = "finetune", .name = "v",
            .formula = FT_LINE[full], .round = -1, .client = (long)i,
            .opt = pflref_optim_get(s, i, 1), .bn = &s->hyper->bn};
        pflref_status st = pflref_local_sgd_run(&job, v_i, ws->g, s->ws,
                                                trace, err);
        if (st != PFLREF_OK)
            return st;
        pflref_trace_emit(trace, PFLREF_EV_CLIENT_END, "finetune", -1,
                          (long)i, -1, "v", v_i, P, NULL);
    }
    return PFLREF_OK;
}

static pflref_status pfl_finish(pflref_state *s,
                                const pflref_schedule *schedule,
                                const pflref_trace *trace, pflref_error *err)
{
    return pfl_finetune(s, s->extra, schedule, trace, err);
}

/* Re-synchronised checking: a device's CLIENT_END "v" is (u_i^(t+1),
 * v_i^(t+1)), its own shared entries before the average; the state after
 * round t is (u^(t+1), v_i^(t+1)), the shared entries from the server's
 * w (l. 17, 13), as the round leaves it. */
/*@ requires state_global(s) && state_personal(s); */
static void pfl_load_state(pflref_state *s, pflref_state_loader load,
                           void *ctx, long t)
{
    (void)load;
    (void)ctx;
    (void)t;
    pflref_share_to_all(s);
}

/* load_state: pfl_load_state, or under bn.aggregate = parameters_only the
 * broadcast of the parameters only, each device keeping the shared running
 * statistics of its recorded model (pfl_round_keep). */
static void fedalt_load_state(pflref_state *s, pflref_state_loader load,
                              void *ctx, long t)
{
    if (pflref_bn_keeps_own(s)) {
        pflref_bn_share_params(s);
        return;
    }
    pfl_load_state(s, load, ctx, t);
}

/* FedAlt and FedSim differ only in their name, title, check and round. */
#define PFL_ALGORITHM(name_, title_, check_, round_)                      \
    {                                                                     \
        .name = (name_), .title = (title_), .has_global = 1,              \
        .has_personal = 1, .allows_post = 1, .personal_name = "v",        \
        .n_eval = 1, .eval = {{"personalized", PFLREF_SOURCE_PERSONAL}},  \
        .work_alloc = pfl_work_alloc, .work_free = pflref_work_free,      \
        .check = (check_), .round = (round_), .finish = pfl_finish,       \
        .load_state = fedalt_load_state,                                  \
        /* optimizers (opt.*): 0 the body u (FedSim: u and v, two       \
         * parameter groups), 1 the personal v and the fine-tuning       \
         * (PFLlib clientrep.py: optimizer, optimizer_per) */            \
        .opt_slots = 2                                                    \
    }

const pflref_algorithm pflref_fedalt =
    PFL_ALGORITHM("fedalt", "FedAlt (Pillutla et al., ICML 2022, Alg. 4)",
                  fedalt_check, fedalt_round);

const pflref_algorithm pflref_fedsim =
    PFL_ALGORITHM("fedsim", "FedSim (Pillutla et al., ICML 2022, Alg. 5)",
                  fedsim_check, fedsim_round);
