/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/algorithms/feddyn.c: FedDyn, Algorithm 1 of
 *   D. A. E. Acar, Y. Zhao, R. Matas, M. Mattina, P. Whatmough,
 *   V. Saligrama, "Federated Learning Based on Dynamic Regularization",
 *   ICLR 2021, arXiv 2111.04263v2.
 *
 * The box (Algorithm 1, "Federated Dynamic Regularizer - (FedDyn)"):
 *   l. 1  Input: T, θ⁰, α > 0, ∇L_k(θ_k⁰) = 0.
 *   l. 2  for t = 1, 2, ... T do
 *   l. 3    Sample devices P_t ⊆ [m] and transmit θ^{t−1} to each
 *           selected device,
 *   l. 4    for each device k ∈ P_t, and in parallel do
 *   l. 5      Set θ_k^t = argmin_θ L_k(θ) − ⟨∇L_k(θ_k^{t−1}), θ⟩
 *                                 + (α/2) ‖θ − θ^{t−1}‖²,
 *   l. 6      Set ∇L_k(θ_k^t) = ∇L_k(θ_k^{t−1}) − α (θ_k^t − θ^{t−1}),
 *   l. 7      Transmit device model θ_k^t to server,
 *   l. 8    for each device k ∉ P_t, and in parallel do
 *   l. 9      Set θ_k^t = θ_k^{t−1}, ∇L_k(θ_k^t) = ∇L_k(θ_k^{t−1}),
 *   l. 10   Set h^t = h^{t−1} − α (1/m) (Σ_{k∈P_t} θ_k^t − θ^{t−1}),
 *   l. 11   Set θ^t = (1/|P_t|) Σ_{k∈P_t} θ_k^t − (1/α) h^t
 * (The box itself could not be read line by line from this project's
 * sources, only the paper's opening; l. 10 as printed is attested by
 * transcriptions (FedLab issue #319, alpemreacar/FedDyn issue #3) and is
 * feddyn.h_sum = literal, the sum of differences the default, reading b)
 * below; ll. 3, 5, 6, 10, 11 were read against the authors' code, 48a19fa:
 * docs/algorithms/feddyn.md.)
 * And h⁰ = 0, which the box leaves implicit: with ∇L_k(θ_k⁰) = 0 it keeps
 * h^t = (1/m) Σ_{k∈[m]} ∇L_k(θ_k^t) (reading b) below) from t = 0 on.
 *
 * Readings, where the box leaves a choice (docs/algorithms/feddyn.md):
 *  a) l. 5's argmin is the schedule's local steps of SGD on the local
 *     objective from θ = θ^{t−1} (the authors' code starts there: "Warm
 *     start from current avg model", utils_methods.py:381-382):
 *        θ ← θ − η (∇L_k(θ; b) − ∇L_k(θ_k^{t−1}) + α (θ − θ^{t−1}))
 *     the shared local solver with c = −∇L_k(θ_k^{t−1}), μ = α and
 *     ref = θ^{t−1} (ref/engine/sgd.c), so the client optimizer (opt.*)
 *     composes with it.
 *  b) l. 10 sums the differences, Σ_{k∈P_t} (θ_k^t − θ^{t−1}): the
 *     printed parenthesis subtracts θ^{t−1} once, which breaks
 *     h^t = (1/m) Σ_k ∇L_k(θ_k^t) (it follows from ll. 1, 6 and 9 only
 *     with the differences; the ground of the paper's "key property of
 *     Algorithm 1") and which the authors' and PFLlib's code do not do
 *     (serverdyn.py:104).  feddyn.h_sum = literal reads the parenthesis
 *     as printed.
 *  c) m is the number of devices (N here), |P_t| the round's participants.
 *  d) ∇L_k and h cover the parameters; batch normalisation's running
 *     statistics are no parameters (they never step, ref/engine/sgd.c):
 *     their ∇L_k and h entries stay 0, so l. 11 averages them.
 *  e) bn.aggregate = parameters_only (PFLlib's reading; its preset
 *     pfllib sets it), B the buffer entries r_μ, r_v and r_k device k's
 *     own (w⁰'s until it first trains; ref/engine/bn_own.c):
 *       l. 3/5  θ starts from θ^{t−1} on ¬B and r_k on B (TsingZ0/PFLlib
 *               d832e76f6a23 clientdyn.py:65-67 set_parameters copies
 *               parameters() only); r_k ← θ_k^t's B after l. 5
 *       l. 10   h over parameters() only (serverdyn.py:95-107
 *               update_server_state), as in d)
 *       l. 11   θ^t's B ← θ_{k₁}^t's, k₁ the first participant
 *               (serverdyn.py:85 deepcopy(uploaded_models[0]), then only
 *               parameters() summed and corrected, :86-93)
 *     and the "global" evaluation tests w's parameters with r_k (PFLlib's
 *     evaluate(): each client's own model; ref/engine/run.c).
 *
 * Symbols:  θ^{t−1} ↔ ws->theta_prev (P; the state's w)
 *           θ_k^t ↔ ws->theta_k (P)   ∇L_k(θ_k^t) ↔ ws->grad_L + k·P
 *           h^t ↔ ws->h (P)   α ↔ hyper->feddyn.alpha   η ↔ hyper->eta
 *           m ↔ s->N   P_t ↔ plan->clients   |P_t| ↔ plan->m
 *
 * Switches (the paper's reading first):
 *   feddyn.alpha_k  uniform: α on every device;  size_scaled: device k's
 *                   l. 5 and l. 6 take α_k = α / (n_k m / Σ_j n_j)
 *                   (alpemreacar/FedDyn 48a19fa, utils_methods.py:296-297
 *                   weight_list = n_k / Σ n_j · m, :387 alpha_coef_adpt =
 *                   alpha_coef / weight_list[clnt]); the server keeps α
 *                   (:393 accumulates θ_k^t − θ^{t−1} unscaled, :397 adds
 *                   their mean over all devices: −(1/α) h^t with α)
 *   feddyn.prox     squared: (α/2)‖θ − θ^{t−1}‖², gradient α(θ − θ^{t−1});
 *                   norm_half: (α/2)‖θ − θ^{t−1}‖₂, gradient
 *                   (α/2)(θ − θ^{t−1})/‖θ − θ^{t−1}‖₂ over the parameters,
 *                   0 at θ = θ^{t−1} (TsingZ0/PFLlib d832e76f6a23,
 *                   clientdyn.py:45 `alpha/2 * torch.norm(v1 − global, 2)`;
 *                   l. 6 keeps α, clientdyn.py:54)
 *   feddyn.h_sum    differences: l. 10 with Σ_{k∈P_t}(θ_k^t − θ^{t−1});
 *                   literal: (Σ_{k∈P_t} θ_k^t) − θ^{t−1}, the box's
 *                   parenthesis as printed (SMILELab-FL/FedLab's
 *                   contrib/algorithm/feddyn.py global_update, its issue
 *                   #319)
 * Presets: official = feddyn.alpha_k = size_scaled, opt.weight_decay =
 * 0.001 (example_cifar_10.py:40; utils_general.py:190 adds it to the
 * optimizer's weight decay); pfllib = feddyn.prox = norm_half.  Not
 * reproduced: the authors' clip_grad_norm_ at 10 (utils_general.py:224)
 * of the gradient without α_k θ (added by the optimizer after it), a
 * split of d that opt.clip does not make.
 *
 * State carried between rounds (reported, and loaded by check --resync):
 * every device's ∇L_k (NOTE "grad_L" of device k after its update, l. 6)
 * and the server's h (NOTE "h" of the round, l. 10); θ^t is the SERVER
 * "w".  θ_k^t of l. 9 is never read again, so it is not kept.
 *
 * Under bn.aggregate = parameters_only, each device's r_k is reloaded
 * from the B entries of its last CLIENT_END "theta_k".
 *
 * Determinism: devices train and are summed in ascending id.
 * Cost per round: Σ_{k∈P_t} (local steps × one gradient) + O(|P_t|·P).
 * Memory: (N + 6)·P doubles (2N + 6 under e)).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "algorithms/algorithms.h"
#include "engine/bn_own.h"
#include "engine/work.h"

static const char *const LOCAL_LINE[] = {
    "Alg. 1 l. 5: θ ← θ − η (∇L_k(θ; b) − ∇L_k(θ_k^{t−1}) + α (θ − θ^{t−1}))",
    "θ ← θ − η (∇L_k(θ; b) − ∇L_k(θ_k^{t−1}) "
    "+ (α/2)(θ − θ^{t−1})/‖θ − θ^{t−1}‖)"};
static const char *const GRAD_LINE =
    "Alg. 1 l. 6: ∇L_k(θ_k^t) = ∇L_k(θ_k^{t−1}) − α (θ_k^t − θ^{t−1})";
static const char *const H_LINE[] = {
    "Alg. 1 l. 10: h^t = h^{t−1} − α (1/m) Σ_{k∈P_t} (θ_k^t − θ^{t−1})",
    "h^t = h^{t−1} − α (1/m) (Σ_{k∈P_t} θ_k^t − θ^{t−1})"};
static const char *const SERVER_LINE =
    "Alg. 1 l. 11: θ^t = (1/|P_t|) Σ_{k∈P_t} θ_k^t − (1/α) h^t";

/* req: feddyn.alg1.l1 */
/* FedDyn's state and work buffers (zero-filled: ∇L_k(θ_k⁰) = 0, h⁰ = 0). */
typedef struct {
    pflref_work list;    /* the allocations (ref/engine/work.h)            */
    double *theta_prev;  /* P: θ^{t−1}, the round-start server model       */
    double *theta_k;     /* P: θ_k^t, device k's iterate                   */
    double *g;           /* P: the local objective's gradient of a step    */
    double *shift;       /* P: c = −∇L_k(θ_k^{t−1}), l. 5's linear term    */
    double *dsum;        /* P: Σ_{k∈P_t} (θ_k^t − θ^{t−1}) (l. 10)         */
    double *h;           /* P: h^t, the server state (carried)             */
    double *grad_L;      /* N×P: ∇L_k(θ_k^t), row k (carried)              */
} feddyn_work;

static void *feddyn_work_alloc(const pflref_problem *problem,
                               const pflref_hyper *hyper)
{
    (void)hyper;
    const size_t P = problem->model.P, N = problem->N;
    feddyn_work *ws = calloc(1, sizeof *ws);
    if (ws == NULL)
        return NULL;
    ws->theta_prev = pflref_work_doubles(&ws->list, P, 1);
    ws->theta_k = pflref_work_doubles(&ws->list, P, 1);
    ws->g = pflref_work_doubles(&ws->list, P, 1);
    ws->shift = pflref_work_doubles(&ws->list, P, 1);
    ws->dsum = pflref_work_doubles(&ws->list, P, 1);
    ws->h = pflref_work_doubles(&ws->list, P, 1);
    ws->grad_L = pflref_work_doubles(&ws->list, N, P);
    return pflref_work_ready(ws);
}

/* α_k of device k: α (feddyn.alpha_k = uniform) or α / (n_k m / Σ_j n_j)
 * (size_scaled: the authors' alpha_coef / weight_list[clnt]). */
static double alpha_of(const pflref_state *s, size_t k)
{
    const double alpha = s->hyper->feddyn.alpha;
    if (s->hyper->feddyn.alpha_k != PFLREF_FEDDYN_ALPHA_K_SIZE_SCALED)
        return alpha;
    const pflref_problem *pr = s->problem;
    const double n = pflref_train_n(pr, NULL, s->N);
    const double weight = (double)pr->clients[k].train.n / n * (double)s->N;
    return alpha / weight;
}

/* ‖x − y‖₂ over the parameters of m (batch-norm buffers left out, as
 * torch's parameters() leaves them). */
static double param_distance(const pflref_model *m, const double *x,
                             const double *y)
{
    double sq = 0.0;
    for (size_t b = 0; b < m->nblocks; b++) {
        const pflref_block *B = &m->blocks[b];
        for (size_t p = B->offset; !B->is_buffer && p < B->offset + B->size;
             p++)
            sq += (x[p] - y[p]) * (x[p] - y[p]);
    }
    return sqrt(sq);
}

/* l. 5: device k's local steps from θ = θ^{t−1} on its batches b, on
 *   L_k(θ) − ⟨∇L_k(θ_k^{t−1}), θ⟩ + prox(θ − θ^{t−1}),
 * the shared local solver with c = −∇L_k(θ_k^{t−1}) and μ = α_k
 * (squared) or, step by step, μ = (α_k/2)/‖θ − θ^{t−1}‖ (norm_half; no
 * pull at θ = θ^{t−1}). */
static pflref_status local_update(pflref_state *s, size_t k,
                                  const pflref_batches *b, double alpha_k,
                                  feddyn_work *ws, const pflref_trace *trace,
                                  pflref_error *err)
{
    const int prox = s->hyper->feddyn.prox;
    pflref_local_sgd job = pflref_local_sgd_plain(
        s, k, b, s->hyper->eta, "theta_k", LOCAL_LINE[prox]);
    job.shift = ws->shift;        /* c = −∇L_k(θ_k^{t−1}) */
    job.ref = ws->theta_prev;     /* θ^{t−1} */
    job.mu = alpha_k;             /* α */
    if (prox == PFLREF_FEDDYN_PROX_SQUARED)
        return pflref_local_sgd_run(&job, ws->theta_k, ws->g, s->ws, trace,
                                    err);
    for (size_t q = 0; q < b->nsteps; q++) {
        const double dist =
            param_distance(job.model, ws->theta_k, ws->theta_prev);
        job.mu = dist > 0.0 ? 0.5 * alpha_k / dist : 0.0;
        pflref_status st = pflref_local_sgd_step(&job, q, ws->theta_k, ws->g,
                                                 s->ws, trace, err);
        if (st != PFLREF_OK)
            return st;
    }
    return PFLREF_OK;
}

/* l. 6 for device k and its share of l. 10 and l. 11, on the parameters:
 *   ∇L_k ← ∇L_k − α_k (θ_k^t − θ^{t−1});  Σ_d += θ_k^t − θ^{t−1}
 *   (literal: Σ_d += θ_k^t) */
static void device_state(const pflref_state *s, const double *theta_k,
                         double alpha_k, feddyn_work *ws, double *grad_L_k)
{
    const pflref_model *m = &s->problem->model;
    const int literal = s->hyper->feddyn.h_sum == PFLREF_FEDDYN_H_SUM_LITERAL;
    for (size_t b = 0; b < m->nblocks; b++) {
        const pflref_block *B = &m->blocks[b];
        for (size_t p = B->offset; !B->is_buffer && p < B->offset + B->size;
             p++) {
            const double d = theta_k[p] - ws->theta_prev[p];
            /* req: feddyn.alg1.l6 */
            grad_L_k[p] -= alpha_k * d;
            /* req: feddyn.key_property */
            /* (Σ_d of the differences keeps h^t = (1/m) Σ_k ∇L_k) */
            ws->dsum[p] += literal ? theta_k[p] : d;
        }
    }
}

/* ll. 10-11: the server state and model,
 *   h^t = h^{t−1} − α (1/m) Σ_d   (literal: Σ_d − θ^{t−1} in place of Σ_d)
 *   θ^t = (1/|P_t|) Σ_{k∈P_t} θ_k^t − (1/α) h^t
 * on the parameters (the buffers' h stays 0). */
static pflref_status server_update(pflref_state *s, feddyn_work *ws,
                                   const pflref_trace *trace,
                                   pflref_error *err)
{
    const pflref_model *m = &s->problem->model;
    const double alpha = s->hyper->feddyn.alpha, M = (double)s->N;
    const int h_sum = s->hyper->feddyn.h_sum;
    for (size_t b = 0; b < m->nblocks; b++) {
        const pflref_block *B = &m->blocks[b];
        for (size_t p = B->offset; !B->is_buffer && p < B->offset + B->size;
             p++) {
            double sum = ws->dsum[p];
            if (h_sum == PFLREF_FEDDYN_H_SUM_LITERAL)
                sum -= ws->theta_prev[p];
            /* req: feddyn.alg1.l10 */
            ws->h[p] -= alpha * (sum / M);
        }
    }
    pflref_trace_emit(trace, PFLREF_EV_NOTE, "train", (long)s->t, -1, -1, "h",
                      ws->h, s->P, H_LINE[h_sum]);
    /* req: feddyn.alg1.l11 */
    for (size_t p = 0; p < s->P; p++)
        s->w[p] = s->accum[p] - ws->h[p] / alpha;
    return pflref_server_publish(s, SERVER_LINE, trace, err);
}

static pflref_status feddyn_round(pflref_state *s,
                                  const pflref_round_plan *plan,
                                  const pflref_trace *trace, pflref_error *err)
{
    feddyn_work *ws = s->extra;
    const pflref_model *md = &s->problem->model;
    const size_t P = s->P, N = s->N, m = plan->m;
    const int keep = pflref_bn_keeps_own(s);   /* reading e) */
    if (keep) {
        pflref_status st = pflref_bn_own_alloc(s, err);
        if (st != PFLREF_OK)
            return st;
    }

    /* req: feddyn.alg1.l2, feddyn.alg1.l3 */
    /* θ^{t−1} ← θ (sent to P_t); Σ ← 0 */
    pflref_round_begin(s, ws->theta_prev, trace);
    for (size_t p = 0; p < P; p++)
        ws->dsum[p] = 0.0;
    /* req: feddyn.alg1.l4 */
    for (size_t j = 0; j < m; j++) {
        const size_t k = plan->clients[j];
        double *grad_L_k = pflref_row(ws->grad_L, k, N, P);
        const double alpha_k = alpha_of(s, k);
        if (keep) {   /* θ^{t−1}'s parameters, device k's own r_k */
            memcpy(ws->theta_k, ws->theta_prev, P * sizeof *ws->theta_k);
            pflref_bn_copy_buffers(md, ws->theta_k, pflref_bn_own_row(s, k));
            pflref_client_begin(s, k, "theta_k", ws->theta_k, NULL, trace);
        } else
            pflref_client_begin(s, k, "theta_k", ws->theta_k,
                                ws->theta_prev, trace);
        pflref_client_lr(s, k, 0, 1);  /* η of k's train() (lr.count) */
        pflref_optim_begin(s, k);      /* its optimizer (opt.state) */
        for (size_t p = 0; p < P; p++)
            ws->shift[p] = -grad_L_k[p];
        /* req: feddyn.alg1.l5 */
        pflref_status st =
            local_update(s, k, &plan->batches[j], alpha_k, ws, trace, err);
        if (st != PFLREF_OK)
            return st;
        /* req: feddyn.alg1.l7 */
        pflref_client_end(s, k, "theta_k", ws->theta_k, trace);
        if (keep)     /* r_k: what device k's model now holds */
            pflref_bn_copy_buffers(md, pflref_bn_own_row(s, k), ws->theta_k);
        device_state(s, ws->theta_k, alpha_k, ws, grad_L_k);
        pflref_trace_emit(trace, PFLREF_EV_NOTE, "train", (long)s->t,
                          (long)k, -1, "grad_L", grad_L_k, P, GRAD_LINE);
        /* (1/|P_t|) Σ_{k∈P_t} θ_k^t, ascending k */
        pflref_accumulate(s->accum, 1.0 / (double)m, ws->theta_k, P);
    }
    /* req: feddyn.alg1.l8, feddyn.alg1.l9 */
    /* devices k ∉ P_t keep ∇L_k: their rows are not touched */
    /* reading e): θ^t's r_μ, r_v are the first participant's (h is 0 there) */
    if (keep && m > 0)
        pflref_bn_copy_buffers(md, s->accum,
                               pflref_bn_own_row(
                                   s, pflref_bn_first_upload(
                                          plan, plan->clients[0])));
    return server_update(s, ws, trace, err);
}

/* Re-synchronised checking: the state after round t is θ^t (the driver
 * loads SERVER "w"), every device's ∇L_k (its last NOTE "grad_L" up to
 * round t: l. 9 keeps it while the device sits out; a device never
 * sampled keeps ∇L_k(θ_k⁰) = 0) and h^t (NOTE "h" of round t). */
static void feddyn_load_state(pflref_state *s, pflref_state_loader load,
                              void *ctx, long t)
{
    feddyn_work *ws = s->extra;
    const size_t P = s->P, N = s->N;
    for (size_t k = 0; k < N; k++)
        load(ctx, PFLREF_EV_NOTE, "grad_L", t, (long)k,
             pflref_row(ws->grad_L, k, N, P), P);
    load(ctx, PFLREF_EV_NOTE, "h", t, -1, ws->h, P);
    /* reading e): r_k from device k's last CLIENT_END "theta_k" up to t
     * (w⁰'s for a device never sampled) */
    for (size_t k = 0; s->bn_own != NULL && k < N; k++)
        if (load(ctx, PFLREF_EV_CLIENT_END, "theta_k", t, (long)k, s->mix, P))
            pflref_bn_copy_buffers(&s->problem->model,
                                   pflref_bn_own_row(s, k), s->mix);
}

const pflref_algorithm pflref_feddyn = {
    .name = "feddyn",
    .title = "FedDyn (Acar et al., ICLR 2021, Alg. 1)",
    .has_global = 1,
    .n_eval = 1,
    .eval = {{"global", PFLREF_SOURCE_GLOBAL}},
    .work_alloc = feddyn_work_alloc,
    .work_free = pflref_work_free,
    .round = feddyn_round,
    .load_state = feddyn_load_state,
    .opt_slots = 1,   /* l. 5's local solver */
};
