/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/algorithms/perfedavg.c: Per-FedAvg, Algorithm 1 of
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
 * Symbols:  w_k ↔ s->w (P)   w_{t−1}, w_t ↔ ws->w_local (P)
 *           w̃ ↔ ws->w_tilde (P)   q ↔ ws->q (P)   H q or d ↔ ws->hv (P)
 *           α ↔ hyper->perfedavg.alpha
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
 *   perfedavg.calls    one | two (PFLlib: train() twice a round)
 *   perfedavg.eval_lr  initial: the personalisation takes α, β undecayed
 *                      (the paper has no decay) | decayed: client i's after
 *                      its scheduler steps so far (PFLlib 487a29e
 *                      clientperavg.py train_one_step; ref/engine/lr.c)
 *   bn.aggregate       average: w's running statistics r_μ, r_v averaged
 *                      with the rest | parameters_only (PFLlib, its preset
 *                      pfllib): serverperavg.py:26 and :46 call
 *                      serverbase.py's send_models and
 *                      aggregate_parameters, so user i's w^i_{k+1,0} is w_k's
 *                      parameters with the r_μ, r_v its own model last left
 *                      (clientbase.py:67-69; w⁰'s before it first trains),
 *                      w_{k+1}'s are the first participant's
 *                      (serverbase.py:138-150), and the personalisation
 *                      starts θ_i from w's parameters with user i's own
 *                      (train_one_step runs on self.model,
 *                      clientperavg.py:83-99): perfedavg_round_keep and
 *                      perfedavg_finish_keep below, unproved, beside the
 *                      proved perfedavg_round_with and perfedavg_finish_with
 *                      and calling the same client_steps, batch_grad and
 *                      bn_move.  Not modelled: PFLlib's evaluate_one_step
 *                      (serverperavg.py:71-84) runs train_one_step on every
 *                      client at each evaluation and clone_model restores
 *                      parameters() only, so with -eg 1 each evaluation moves
 *                      every client's running statistics once more; the
 *                      schedule holds no evaluation passes.
 *
 * State and work: w_k and θ_i are the state's w and v_i; the buffers of a
 * round are perfedavg_work.  The check refuses, before round 0, a missing
 * δ under hf, a batch count that is not a positive multiple of 3, and a
 * post phase of the wrong length.
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
#include <stdlib.h>
#include "algorithms/algorithms.h"
#include "engine/bn_own.h"
#include "engine/work.h"

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

/* Per-FedAvg's work buffers, P doubles each (zero-filled; none is carried
 * between rounds: w_k and θ_i live in the state). */
typedef struct {
    pflref_work list; /* the allocations (ref/engine/work.h)                */
    double *w_k;      /* w_k, the round-start global model                  */
    double *w_local;  /* w^i_{k+1,t}: w_{t−1}, then w_t                     */
    double *w_tilde;  /* w̃ = w_{t−1} − α ∇f_i(w_{t−1}; D_t)                */
    double *g;        /* ∇f_i(w_{t−1}; D_t); HF: ∇f_i(w_{t−1} + δq; D″_t);
                         the post phase's gradient                         */
    double *q;        /* q = ∇f_i(w̃; D′_t)                                 */
    double *hv;       /* H q = ∇²f_i(w_{t−1}; D″_t) q (exact), or d (HF)    */
    double *x;        /* HF: the perturbed point w_{t−1} ± δq               */
    double *g2;       /* HF: ∇f_i(w_{t−1} − δq; D″_t)                       */
} perfedavg_work;

/* The buffers of the workspace perfedavg_work_alloc returns for the run
 * state s (the shape the proofs of the round start from,
 * proofs/README.md): the eight P writable doubles each, apart from each
 * other, from the workspace record, from *s and from the state's arrays. */
/*@ predicate perfedavg_work_shape{L}(perfedavg_work *ws, pflref_state *s) =
      \valid_read(ws) &&
      \valid(ws->w_k + (0 .. s->P - 1)) &&
      \valid(ws->w_local + (0 .. s->P - 1)) &&
      \valid(ws->w_tilde + (0 .. s->P - 1)) &&
      \valid(ws->g + (0 .. s->P - 1)) && \valid(ws->q + (0 .. s->P - 1)) &&
      \valid(ws->hv + (0 .. s->P - 1)) && \valid(ws->x + (0 .. s->P - 1)) &&
      \valid(ws->g2 + (0 .. s->P - 1)) &&
      \separated(ws->w_k + (0 .. s->P - 1), ws->w_local + (0 .. s->P - 1),
                 ws->w_tilde + (0 .. s->P - 1), ws->g + (0 .. s->P - 1),
                 ws->q + (0 .. s->P - 1), ws->hv + (0 .. s->P - 1),
                 ws->x + (0 .. s->P - 1), ws->g2 + (0 .. s->P - 1), ws, s,
                 s->w + (0 .. s->P - 1), s->w0 + (0 .. s->P - 1),
                 s->v + (0 .. s->N * s->P - 1), s->accum + (0 .. s->P - 1),
                 s->mix + (0 .. s->P - 1), s->mask + (0 .. s->P - 1),
                 s->shared + (0 .. s->P - 1));
 */

static void *perfedavg_work_alloc(const pflref_problem *problem,
                                  const pflref_hyper *hyper)
{
    (void)hyper;
    const size_t P = problem->model.P;
    perfedavg_work *ws = calloc(1, sizeof *ws);
    if (ws == NULL)
        return NULL;
    ws->w_k = pflref_work_doubles(&ws->list, P, 1);
    ws->w_local = pflref_work_doubles(&ws->list, P, 1);
    ws->w_tilde = pflref_work_doubles(&ws->list, P, 1);
    ws->g = pflref_work_doubles(&ws->list, P, 1);
    ws->q = pflref_work_doubles(&ws->list, P, 1);
    ws->hv = pflref_work_doubles(&ws->list, P, 1);
    ws->x = pflref_work_doubles(&ws->list, P, 1);
    ws->g2 = pflref_work_doubles(&ws->list, P, 1);
    return pflref_work_ready(ws);
}

/* g := ∇f_i(x; batch q of b), the gradient of the batch-mean loss; a failure
 * names the round, client, local step and which of D, D′, D″ it was.  Its
 * frame is an assumption of the proof of perfedavg_finish_with
 * (proofs/README.md): it writes g and *err (and the model workspace's
 * temporaries, which no proof here reads). */
/*@ assigns g[0 .. s->P - 1], *err; */
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

/* PyTorch's train() on the one module's buffers: after a training pass
 * (the last gradient or Hessian-vector product on the model workspace),
 * under bn.running = update, θ's running statistics r_μ, r_v move by that
 * pass's batch statistics (pflref_bn_running_move), whichever point the
 * pass was taken at: Per-FedAvg's passes at w̃ (D′) and at w ± δq (HF's
 * D″) move w_{t−1}'s buffers, as PFLlib's restore of
 * self.model.parameters() (clientperavg.py:69-70) restores parameters and
 * leaves the buffers the forwards moved.  Its frame is an assumption of
 * the proof of perfedavg_finish_with (proofs/README.md): it writes θ's
 * buffers (within θ's P entries) and *err. */
/*@ assigns theta[0 .. s->P - 1], *err; */
static pflref_status bn_move(const pflref_state *s, size_t i, double *theta,
                             long round, long step, pflref_error *err)
{
    return pflref_bn_running_move(&s->hyper->bn, &s->problem->model, s->ws,
                                  theta, round, (long)i, step, err);
}

/* The curvature term of local step t (from 1) of user i, at w_{t−1} =
 * ws->w_local on D″_t = batch d2 of b, along q = ws->q, into ws->hv:
 *   exact: hv = ∇²f_i(w_{t−1}; D″_t) q   (Pearlmutter's R-operator)
 *   HF:    hv = d = [∇f_i(w_{t−1} + δq; D″_t) − ∇f_i(w_{t−1} − δq; D″_t)]
 *                   / (2δ), around w_{t−1} (not w̃) */
static pflref_status curvature(const pflref_state *s, size_t i,
                               const pflref_batches *b, size_t t, size_t d2,
                               perfedavg_work *ws, pflref_error *err)
{
    const double delta = s->hyper->perfedavg.delta;
    const size_t P = s->P;
    const long k = (long)s->t;
    const long step = (long)t;
    const double *w = ws->w_local, *q = ws->q;
    double *hv = ws->hv, *x = ws->x, *g = ws->g, *g2 = ws->g2;
    pflref_status st;

    if (s->hyper->perfedavg.variant == PFLREF_PERFEDAVG_EXACT) {
        const size_t nb = b->step_off[d2 + 1] - b->step_off[d2];
        st = pflref_model_hvp(&s->problem->model, w,
                              &s->problem->clients[i].train,
                              b->idx + b->step_off[d2], nb, q, s->ws, hv);
        if (st != PFLREF_OK)
            return pflref_error_set(err, st, "schedule",
                                    "Hessian-vector product on D″ failed at "
                                    "round %ld, client %zu, local step %ld "
                                    "(batch %zu, %zu samples)",
                                    k, i, step, d2, nb);
        /* its forward at w_{t−1} on D″, a training pass (torch's double
         * backward runs one) */
        return bn_move(s, i, ws->w_local, k, step, err);
    }
    for (size_t p = 0; p < P; p++)
        x[p] = w[p] + delta * q[p];
    if ((st = batch_grad(s, i, b, d2, x, g, k, step, BATCH_NAME[2], err)) ||
        (st = bn_move(s, i, ws->w_local, k, step, err)))
        return st;
    for (size_t p = 0; p < P; p++)
        x[p] = w[p] - delta * q[p];
    if ((st = batch_grad(s, i, b, d2, x, g2, k, step, BATCH_NAME[2], err)) ||
        (st = bn_move(s, i, ws->w_local, k, step, err)))
        return st;
    for (size_t p = 0; p < P; p++)
        hv[p] = (g[p] - g2[p]) / (2.0 * delta);
    return PFLREF_OK;
}

/* Local step t (from 1) of user i on batches 3(t−1), 3(t−1)+1, 3(t−1)+2
 * of b: ws->w_local goes from w_{t−1} to w_t.  With a client optimizer
 * (opt.*; pflref_optim_get NULL under plain SGD) its state steps the meta
 * step on d = q − α H q (FO: d = q) with step size β, and, under
 * perfedavg.opt_steps = both, the α step too (on ∇f_i(w_{t−1}; D_t) with
 * step size α, from w_{t−1}, into w̃), the one state carried from the α
 * step to the β step.  Under bn.running = update every training pass
 * moves w_{t−1}'s running statistics, in the order torch runs them: D at
 * w_{t−1}, D′ at w̃, D″ (exact: one pass at w_{t−1}; HF: at w_{t−1} + δq,
 * then w_{t−1} − δq; FO: none). */
static pflref_status local_step(const pflref_state *s, size_t i,
                                const pflref_batches *b, size_t t,
                                perfedavg_work *ws, const pflref_trace *trace,
                                pflref_error *err)
{
    const pflref_perfedavg_hyper *hp = &s->hyper->perfedavg;
    const double alpha = hp->alpha, beta = hp->beta;
    const int variant = hp->variant;
    const size_t P = s->P;
    const long k = (long)s->t;
    const long step = (long)t;
    const size_t D = PERFEDAVG_BATCHES_PER_STEP * (t - 1); /* D_t    */
    const size_t D1 = D + 1;                               /* D′_t   */
    const size_t D2 = D + 2;                               /* D″_t   */
    double *w = ws->w_local, *w_tilde = ws->w_tilde, *g = ws->g, *q = ws->q;
    const double *hv = ws->hv;
    const pflref_model *m = &s->problem->model;
    pflref_optim_state *opt = pflref_optim_get(s, i, 0);
    const int opt_alpha = opt != NULL && hp->opt_steps == PFLREF_PERFEDAVG_OPT_BOTH;
    pflref_status st;

    /* req: perfedavg.alg1.l7 */
    /* Alg. 1: w̃ = w_{t−1} − α ∇f_i(w_{t−1}; D_t) */
    if ((st = batch_grad(s, i, b, D, w, g, k, step, BATCH_NAME[0], err)) ||
        (st = bn_move(s, i, w, k, step, err)))
        return st;
    if (opt_alpha) {
        /* both: the optimizer's step from w_{t−1} with step size α (PFLlib
         * clientperavg.py:51), its state kept for the β step */
        pflref_copy(w_tilde, w, P);
        if (!pflref_optim_step(opt, m, NULL, alpha, g, w_tilde))
            return pflref_error_diverge(err, k, (long)i, step, "w_tilde");
    } else {
        for (size_t p = 0; p < P; p++)
            w_tilde[p] = w[p] - alpha * g[p];
    }
    if (!pflref_all_finite(w_tilde, P))
        return pflref_error_diverge(err, k, (long)i, step, "w_tilde");
    pflref_trace_emit(trace, PFLREF_EV_STEP, "train", k, (long)i, step,
                      "w_tilde", w_tilde, P, TILDE_LINE);

    /* q = ∇f_i(w̃; D′_t) */
    if ((st = batch_grad(s, i, b, D1, w_tilde, q, k, step, BATCH_NAME[1],
                         err)) ||
        (st = bn_move(s, i, w, k, step, err)))
        return st;

    if (variant != PFLREF_PERFEDAVG_FO) {
        if ((st = curvature(s, i, b, t, D2, ws, err)))
            return st;
        if (!pflref_all_finite(hv, P))
            return pflref_error_diverge(err, k, (long)i, step, "hvp");
        pflref_trace_emit(trace, PFLREF_EV_NOTE, "train", k, (long)i, step,
                          "hvp", hv, P, HVP_LINE[variant]);
        /* req: perfedavg.alg1.l8 */
        /* w_t = w_{t−1} − β (q − α H q)   (exact; HF with d for H q) */
        if (opt != NULL) {
            /* the optimizer's step on d = q − α H q, step size β (PFLlib
             * clientperavg.py:72, step(beta=self.beta)) */
            for (size_t p = 0; p < P; p++)
                q[p] -= alpha * hv[p];
            if (!pflref_optim_step(opt, m, NULL, beta, q, w))
                return pflref_error_diverge(err, k, (long)i, step,
                                            "w_local");
        } else {
            for (size_t p = 0; p < P; p++)
                w[p] -= beta * (q[p] - alpha * hv[p]);
        }
    } else if (opt != NULL) {
        /* FO: the optimizer's step on d = q, step size β */
        if (!pflref_optim_step(opt, m, NULL, beta, q, w))
            return pflref_error_diverge(err, k, (long)i, step, "w_local");
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

/* User i's τ local steps on its batches b (Alg. 1, l. 6–8): ws->w_local
 * goes from w_k to w^i_{k+1,τ}.  Its frame is an assumption of the proof
 * of the round (proofs/README.md): it writes the workspace's P-entry
 * buffers, the round's step sizes s->hyper_round and *err (and the model
 * workspace's temporaries, which no proof here reads). */
/*@ assigns ws->w_local[0 .. s->P - 1], ws->w_tilde[0 .. s->P - 1],
            ws->g[0 .. s->P - 1], ws->q[0 .. s->P - 1],
            ws->hv[0 .. s->P - 1], ws->x[0 .. s->P - 1],
            ws->g2[0 .. s->P - 1], s->hyper_round, *err;
 */
static pflref_status client_steps(pflref_state *s, size_t i,
                                  const pflref_batches *b,
                                  perfedavg_work *ws,
                                  const pflref_trace *trace,
                                  pflref_error *err)
{
    const size_t tau = b->nsteps / PERFEDAVG_BATCHES_PER_STEP;
    /* perfedavg.calls = two: steps 1..τ/2 are PFLlib's first train()
     * call, τ/2+1..τ its second, each with its own decayed α, β */
    const size_t calls = s->hyper_base->perfedavg.calls ==
                                 PFLREF_PERFEDAVG_CALLS_TWO
                             ? 2
                             : 1;
    /* req: perfedavg.alg1.l6 */
    for (size_t t = 1; t <= tau; t++) {
        if (t == 1 || (calls == 2 && t == tau / 2 + 1)) {
            pflref_client_lr(s, i, t == 1 ? 0 : 1, calls);
            /* a train() call: under opt.state = reset, a new optimizer */
            pflref_optim_begin(s, i);
        }
        pflref_status st = local_step(s, i, b, t, ws, trace, err);
        if (st != PFLREF_OK)
            return st;
    }
    return PFLREF_OK;
}

/* One round with the workspace ws = s->extra.  Proved call sites
 * (proofs/README.md): from the run state's shapes, the validated plan and
 * the workspace's shape, each participant's accumulation into s->accum
 * gets P valid entries apart from w^i_{k+1,τ}. */
/*@ requires state_global(s);
    requires round_plan(plan, s->N);
    requires perfedavg_work_shape(ws, s);
    requires \separated(err, s, ws, plan);
    assigns ws->w_k[0 .. s->P - 1], ws->w_local[0 .. s->P - 1],
            ws->w_tilde[0 .. s->P - 1], ws->g[0 .. s->P - 1],
            ws->q[0 .. s->P - 1], ws->hv[0 .. s->P - 1],
            ws->x[0 .. s->P - 1], ws->g2[0 .. s->P - 1],
            s->accum[0 .. s->P - 1], s->w[0 .. s->P - 1], s->hyper_round,
            *err;
 */
static pflref_status perfedavg_round_with(pflref_state *s,
                                          perfedavg_work *ws,
                                          const pflref_round_plan *plan,
                                          const pflref_trace *trace,
                                          pflref_error *err)
{
    const pflref_problem *pr = s->problem;
    const int weights = s->hyper->perfedavg.weights;
    const size_t P = s->P;
    double *const acc = s->accum, *const w_local = ws->w_local;

    /* req: perfedavg.alg1.l3 */
    pflref_round_begin(s, ws->w_k, trace);
    const double n_A = pflref_train_n(pr, plan->clients, plan->m);
    /* req: perfedavg.alg1.l4 */
    /*@ loop assigns j, ws->w_local[0 .. P - 1], ws->w_tilde[0 .. P - 1],
                     ws->g[0 .. P - 1], ws->q[0 .. P - 1],
                     ws->hv[0 .. P - 1], ws->x[0 .. P - 1],
                     ws->g2[0 .. P - 1], acc[0 .. P - 1], s->hyper_round,
                     *err;
     */
    for (size_t j = 0; j < plan->m; j++) {
        const size_t i = plan->clients[j];
        const pflref_batches *b = &plan->batches[j];
        /* req: perfedavg.alg1.l5 */
        /* w^i_{k+1,0} ← w_k */
        pflref_client_begin(s, i, "w_local", w_local, ws->w_k, trace);
        pflref_status st = client_steps(s, i, b, ws, trace, err);
        if (st != PFLREF_OK)
            return st;
        /* req: perfedavg.alg1.l9 */
        pflref_client_end(s, i, "w_local", w_local, trace);
        const double c =
            weights == PFLREF_PERFEDAVG_WEIGHTS_SAMPLES
                ? (double)pr->clients[i].train.n / n_A   /* n_i / Σ n_j */
                : 1.0 / (double)plan->m;                 /* 1/|A_k|     */
        pflref_accumulate(acc, c, w_local, P);
    }
    /* req: perfedavg.alg1.l10 */
    /* w_{k+1} = Σ_{i∈A_k} c_i w^i_{k+1,τ} */
    return pflref_round_end(s, SERVER_LINE[weights], trace, err);
}

/* The round under bn.aggregate = parameters_only on a model with batch
 * normalisation (PFLlib's exchange, the header's bn.aggregate): as
 * perfedavg_round_with, but w^i_{k+1,0} takes user i's own r_μ, r_v
 * (s->bn_own, ref/engine/bn_own.c), which keep what its local steps left,
 * and w_{k+1}'s r_μ, r_v are the first participant's. */
static pflref_status perfedavg_round_keep(pflref_state *s,
                                          perfedavg_work *ws,
                                          const pflref_round_plan *plan,
                                          const pflref_trace *trace,
                                          pflref_error *err)
{
    const pflref_problem *pr = s->problem;
    const pflref_model *m = &pr->model;
    const int weights = s->hyper->perfedavg.weights;
    const size_t P = s->P;
    pflref_status st = pflref_bn_own_alloc(s, err);
    if (st != PFLREF_OK)
        return st;
    pflref_round_begin(s, ws->w_k, trace);
    const double n_A = pflref_train_n(pr, plan->clients, plan->m);
    for (size_t j = 0; j < plan->m; j++) {
        const size_t i = plan->clients[j];
        /* w^i_{k+1,0} ← w_k on parameters(), its own r_μ, r_v
         * (clientbase.py:67-69 set_parameters) */
        pflref_copy(ws->w_local, ws->w_k, P);
        pflref_bn_copy_buffers(m, ws->w_local, pflref_bn_own_row(s, i));
        pflref_client_begin(s, i, "w_local", ws->w_local, NULL, trace);
        st = client_steps(s, i, &plan->batches[j], ws, trace, err);
        if (st != PFLREF_OK)
            return st;
        pflref_client_end(s, i, "w_local", ws->w_local, trace);
        pflref_bn_copy_buffers(m, pflref_bn_own_row(s, i), ws->w_local);
        const double c =
            weights == PFLREF_PERFEDAVG_WEIGHTS_SAMPLES
                ? (double)pr->clients[i].train.n / n_A
                : 1.0 / (double)plan->m;
        pflref_accumulate(s->accum, c, ws->w_local, P);
    }
    /* w_{k+1}'s r_μ, r_v: deepcopy(uploaded_models[0]) (serverbase.py:141) */
    if (plan->m > 0)
        pflref_bn_copy_buffers(m, s->accum,
                               pflref_bn_own_row(
                                   s, pflref_bn_first_upload(
                                          plan, plan->clients[0])));
    return pflref_round_end(s, SERVER_LINE[weights], trace, err);
}

static pflref_status perfedavg_round(pflref_state *s,
                                     const pflref_round_plan *plan,
                                     const pflref_trace *trace,
                                     pflref_error *err)
{
    if (pflref_bn_keeps_own(s))   /* bn.aggregate = parameters_only */
        return perfedavg_round_keep(s, s->extra, plan, trace, err);
    return perfedavg_round_with(s, s->extra, plan, trace, err);
}

/* perfedavg.eval_lr = decayed: client i's α, β after all its scheduler
 * steps (calls · k_i, PFLlib's train_one_step reads the decayed lr), into
 * *alpha, *beta (initial: the caller keeps the undecayed ones).  Its frame
 * is an assumption of the proof of perfedavg_finish_with
 * (proofs/README.md): it writes the round's step sizes and the two. */
/*@ assigns s->hyper_round, *alpha, *beta; */
static void decayed_rates(pflref_state *s, size_t i, size_t calls,
                          double *alpha, double *beta)
{
    s->hyper_round = *s->hyper_base;
    pflref_client_lr(s, i, 0, calls);
    *alpha = s->hyper_round.perfedavg.alpha;
    *beta = s->hyper_round.perfedavg.beta;
}

/* The personalised models (§5): for every client i, θ_i = w − α ∇f_i(w; D)
 * on its first post batch, then (alpha_then_beta) θ_i ← θ_i − β ∇f_i(θ_i;
 * D₂) on its second; ws = s->extra.  Proved call sites (proofs/README.md):
 * each θ_i, client i's block of s->v, lies inside it. */
/*@ requires state_global(s) && state_personal(s);
    requires perfedavg_work_shape(ws, s);
    requires \separated(err, s, ws);
    assigns s->v[0 .. s->N * s->P - 1], ws->g[0 .. s->P - 1],
            s->hyper_round, *err;
 */
static pflref_status perfedavg_finish_with(pflref_state *s,
                                           perfedavg_work *ws,
                                           const pflref_schedule *schedule,
                                           const pflref_trace *trace,
                                           pflref_error *err)
{
    const pflref_perfedavg_hyper *hp = &s->hyper->perfedavg;
    const int two = hp->eval == PFLREF_PERFEDAVG_EVAL_ALPHA_THEN_BETA;
    const int decayed = hp->eval_lr == PFLREF_PERFEDAVG_EVAL_LR_DECAYED;
    const size_t calls =
        hp->calls == PFLREF_PERFEDAVG_CALLS_TWO ? 2 : 1;
    const size_t P = s->P, N = s->N;
    double *const v = s->v, *const g = ws->g;

    /*@ loop assigns i, v[0 .. N * P - 1], g[0 .. P - 1], s->hyper_round,
                     *err;
     */
    for (size_t i = 0; i < N; i++) {
        const pflref_batches *b = &schedule->post[i];
        double *theta = pflref_row(v, i, N, P);
        double alpha = hp->alpha, beta = hp->beta;
        if (decayed)
            decayed_rates(s, i, calls, &alpha, &beta);
        /* for the provers: the step sizes' write (s->hyper_round) leaves
         * the sizes and v, which the calls below are given */
        /*@ assert s->P == P && s->N == N && s->v == v; */
        /* req: perfedavg.eq4 */
        pflref_post_begin(s, i, theta, trace);  /* θ_i ← w */
        /*@ loop assigns r, theta[0 .. P - 1], g[0 .. P - 1], *err; */
        for (size_t r = 0; r < (two ? 2u : 1u); r++) {
            /* r = 0: θ_i ← θ_i − α ∇f_i(θ_i; D);  r = 1: the β step on D₂ */
            const double eta = r == 0 ? alpha : beta;
            pflref_status st = batch_grad(s, i, b, r, theta, g, -1,
                                          (long)(r + 1), r == 0 ? "D" : "D₂",
                                          err);
            /* the pass in train() mode moves θ_i's running statistics
             * (bn.running = update; PFLlib's train_one_step) */
            if (st == PFLREF_OK)
                st = bn_move(s, i, theta, -1, (long)(r + 1), err);
            if (st != PFLREF_OK)
                return st;
            /*@ loop assigns p, theta[0 .. P - 1]; */
            for (size_t p = 0; p < P; p++)
                theta[p] -= eta * g[p];
            if (!pflref_all_finite(theta, P))
                return pflref_error_diverge(err, -1, (long)i, (long)(r + 1),
                                            "theta");
            pflref_trace_emit(trace, PFLREF_EV_STEP, "finetune", -1, (long)i,
                              (long)(r + 1), "theta", theta, P,
                              r == 0 ? EVAL_ALPHA_LINE : EVAL_BETA_LINE);
        }
        pflref_post_end(s, i, theta, trace);
    }
    return PFLREF_OK;
}

/* The personalisation under bn.aggregate = parameters_only: as
 * perfedavg_finish_with, but θ_i starts from w's parameters with user i's
 * own r_μ, r_v (train_one_step on self.model, clientperavg.py:83-99). */
static pflref_status perfedavg_finish_keep(pflref_state *s,
                                           perfedavg_work *ws,
                                           const pflref_schedule *schedule,
                                           const pflref_trace *trace,
                                           pflref_error *err)
{
    const pflref_perfedavg_hyper *hp = &s->hyper->perfedavg;
    const int two = hp->eval == PFLREF_PERFEDAVG_EVAL_ALPHA_THEN_BETA;
    const size_t calls = hp->calls == PFLREF_PERFEDAVG_CALLS_TWO ? 2 : 1;
    const size_t P = s->P;
    pflref_status st = pflref_bn_own_alloc(s, err);   /* no round: w⁰'s */
    if (st != PFLREF_OK)
        return st;
    for (size_t i = 0; i < s->N; i++) {
        const pflref_batches *b = &schedule->post[i];
        double *theta = s->v + i * P;
        double alpha = hp->alpha, beta = hp->beta;
        if (hp->eval_lr == PFLREF_PERFEDAVG_EVAL_LR_DECAYED)
            decayed_rates(s, i, calls, &alpha, &beta);
        pflref_copy(theta, s->w, P);
        pflref_bn_copy_buffers(&s->problem->model, theta,
                               pflref_bn_own_row(s, i));
        pflref_trace_emit(trace, PFLREF_EV_CLIENT_BEGIN, "finetune", -1,
                          (long)i, 0, "theta", theta, P, NULL);
        for (size_t r = 0; r < (two ? 2u : 1u); r++) {
            const double eta = r == 0 ? alpha : beta;
            st = batch_grad(s, i, b, r, theta, ws->g, -1, (long)(r + 1),
                            r == 0 ? "D" : "D₂", err);
            if (st == PFLREF_OK)
                st = bn_move(s, i, theta, -1, (long)(r + 1), err);
            if (st != PFLREF_OK)
                return st;
            for (size_t p = 0; p < P; p++)
                theta[p] -= eta * ws->g[p];
            if (!pflref_all_finite(theta, P))
                return pflref_error_diverge(err, -1, (long)i, (long)(r + 1),
                                            "theta");
            pflref_trace_emit(trace, PFLREF_EV_STEP, "finetune", -1, (long)i,
                              (long)(r + 1), "theta", theta, P,
                              r == 0 ? EVAL_ALPHA_LINE : EVAL_BETA_LINE);
        }
        pflref_post_end(s, i, theta, trace);
    }
    return PFLREF_OK;
}

static pflref_status perfedavg_finish(pflref_state *s,
                                      const pflref_schedule *schedule,
                                      const pflref_trace *trace,
                                      pflref_error *err)
{
    if (pflref_bn_keeps_own(s))   /* bn.aggregate = parameters_only */
        return perfedavg_finish_keep(s, s->extra, schedule, trace, err);
    return perfedavg_finish_with(s, s->extra, schedule, trace, err);
}

/* A participation's batch count is a positive multiple of 3: D_t, D′_t,
 * D″_t per local step t. */
static pflref_status three_per_step(const void *ctx, size_t t, size_t client,
                                    const pflref_batches *b,
                                    pflref_error *err)
{
    const int two_calls = *(const int *)ctx;
    const size_t n = b->nsteps;
    if (n > 0 && n % PERFEDAVG_BATCHES_PER_STEP == 0 &&
        (!two_calls || (n / PERFEDAVG_BATCHES_PER_STEP) % 2 == 0))
        return PFLREF_OK;
    if (n > 0 && n % PERFEDAVG_BATCHES_PER_STEP == 0)
        return pflref_error_set(
            err, PFLREF_EINVAL, NULL,
            "perfedavg.calls = two splits a round's τ local steps into two "
            "train() calls of τ/2, so τ must be even; client %zu has τ = %zu "
            "in round %zu (a generated schedule: make schedule.local.steps "
            "a multiple of 6)",
            client, n / PERFEDAVG_BATCHES_PER_STEP, t);
    return pflref_error_set(
        err, PFLREF_EINVAL, NULL,
        "Per-FedAvg takes three batches per local step t (D_t, D′_t, "
        "D″_t = batches 3(t−1), 3(t−1)+1, 3(t−1)+2), so a client's "
        "batch count must be a positive multiple of 3; client %zu has "
        "%zu in round %zu (a generated schedule: make "
        "schedule.local.steps 3τ)",
        client, n, t);
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
    const pflref_perfedavg_hyper *hp = &hyper->perfedavg;
    if (hp->variant == PFLREF_PERFEDAVG_HF && isnan(hp->delta))
        return pflref_error_set(err, PFLREF_EINVAL,
                                "algorithm.hyperparameters.delta",
                                "perfedavg.variant = hf needs hyperparameter "
                                "delta (δ), the radius of the finite "
                                "difference");
    const int two_calls = hp->calls == PFLREF_PERFEDAVG_CALLS_TWO;
    pflref_status st = pflref_schedule_walk(schedule, three_per_step, NULL,
                                            &two_calls, err);
    if (st != PFLREF_OK)
        return st;
    const size_t want =
        hp->eval == PFLREF_PERFEDAVG_EVAL_ALPHA_THEN_BETA ? 2 : 1;
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
    .work_alloc = perfedavg_work_alloc,
    .work_free = pflref_work_free,
    .round = perfedavg_round,
    .finish = perfedavg_finish,
    .opt_slots = 1,   /* one optimizer per client: PFLlib clientperavg.py's
                         one PerAvgOptimizer steps both of its steps
                         (perfedavg.opt_steps) */
    .load_state = pflref_bn_own_load,   /* bn.aggregate's own r_μ, r_v */
};
