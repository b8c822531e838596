/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/algorithms/pflego.c: PFLEGO,
 *   S. Nikoloutsopoulos, I. Koutsopoulos, M. K. Titsias, "Personalized
 *   Federated Learning with Exact Stochastic Gradient Descent",
 *   arXiv 2202.09848 (the seed 004_…; shared/spec
 *   notes-pflego-fedalt-fedsim-fedrep.md §2),
 * on an mlp: the body (W1, b1) is the shared feature extractor θ with
 * features φ(x; θ) = act(W1 x + b1), the head (W2, b2) is client i's
 * personal W_i.  The objective is L(θ, W_1..W_I) = Σ_i α_i ℓ_i(W_i, θ),
 * ℓ_i the mean loss over client i's N_i samples, α_i = N_i / N.
 *
 * One round t (notes §2.4, steps 1–9):
 *   1  sample I_t, r of the I clients without replacement (the schedule)
 *   2  broadcast θ_t
 *   3  each i ∈ I_t computes Φ_i = φ(X_i; θ_t) once        (1 body forward)
 *   4  τ − 1 cheap head steps on the cache, full batch:
 *        W ← W − β ∇_W ℓ_i(W, θ_t)                          (no body pass)
 *      W̃_i := the result
 *   5  one joint gradient at (W̃_i, θ_t): G_i = ∇_W ℓ_i on the cache and
 *      g_i = ∇_θ ℓ_i by backpropagation through the body   (1 body backward)
 *   6  last head step  W_i ← W̃_i − ρ (I/r) G_i              (head_step = seed)
 *   7  upload g_i
 *   8  server  θ_{t+1} = θ_t − ρ (I/r) Σ_{i∈I_t} α_i g_i
 *   9  clients outside I_t keep W_i
 * τ = the number of scheduled batches of the client in the round; every
 * batch must be the client's full data set in index order (PFLEGO has no
 * minibatches, notes §2.9 F7).  τ = 1 is plain client-sampled SGD on L.
 *
 * Switches (the seed's reading first):
 *   pflego.head_step      seed: ρ (I/r) G_i (the seed text and the authors'
 *                         code); exact_alpha: ρ (I/r) α_i G_i, the only
 *                         form under which steps 6 and 8 together are an
 *                         unbiased SGD step on L (Proposition 1, notes §2.6)
 *   pflego.theta_weights  global: α_i = N_i / N; sampled_normalised:
 *                         N_i / Σ_{j∈I_t} N_j (the authors' code, F2)
 *   pflego.server         sgd: θ ← θ − ρ ĝ; adam: JAX's optimizers.adam with
 *                         step ρ, b1 = 0.9, b2 = 0.999, eps = 1e-8 applied
 *                         to ĝ (the authors' default, F3; the head step
 *                         stays plain SGD)
 * where ĝ = (I/r) Σ_{i∈I_t} α_i g_i.
 *
 * Client optimizer (opt.*; one per client, pflref_optim_get slot 0): the
 * client's head optimizer, which steps step 4's τ − 1 cheap head steps
 * (step size β, the head blocks alone: a masked step, so weight decay and
 * momentum reach W_i and never θ).  Step 6's last head step stays the plain
 * ρ (I/r) [α_i] G_i: with step 8 it is one SGD step on L (Proposition 1),
 * and the authors' code takes it with prog_grad (notes §2.9 F3, F6).  The
 * authors' code steps the cheap steps plainly too (its client_lr, plain
 * gradient steps): opt.* is the torch reimplementation's head optimizer
 * (torch.optim.SGD / Adam over the head's parameters); under opt.state =
 * client it lives as long as the client's head W_i, under reset it is new
 * every round.  Default: plain SGD, the seed's step bit for bit.
 *
 * Batch normalisation: refused (the check).  The features φ(X_i; θ_t) are
 * cached once per round and the head steps on the cache; a batch-norm body
 * would make the cache the training-mode output of one full-batch pass
 * whose running statistics nobody evaluates (the body θ is never
 * evaluated apart from the personal model), and the model's cached-feature
 * passes (pflref_model_features, head_grad, body_grad) are not defined
 * through a batch-statistics layer; the authors' bodies (stax Dense/Conv/
 * Relu/MaxPool, notes §2.3) have none.
 *
 * Body passes are counted by the model workspace (every pass of a batch
 * through the body, forward or backward, by any model function:
 * pflref_model_workspace_passes) around each client's update and reported
 * as a NOTE "body_passes" = [forward, backward]: (1, 1) for every τ.
 *
 * State: s->w holds θ in the body entries (the head entries keep w0's);
 * s->v + i·P holds (θ, W_i), its body entries set to θ_{t+1} after every
 * round.  pflego_work holds the rest: as state, Adam's moments m and v
 * (server = adam), zero at the start; as work, the iterate (θ_t, W), the
 * joint gradient, and the cache of the client being processed: the body's
 * pre-activations A and features Φ_i (N_i × h each) and the output errors
 * E (N_i × k).
 *
 * Symbols:  θ ↔ the body entries (s->shared)   W_i ↔ the head entries
 *           (s->mask) of s->v + i·P   I ↔ s->N   r ↔ plan->m
 *           ρ ↔ hyper->rho   β ↔ hyper->pflego.beta   τ ↔ nsteps
 *           Φ_i ↔ pflego_work.Phi   m, v (Adam) ↔ pflego_work.m, .v
 *
 * Cost per round and sampled client: 1 body forward, 1 body backward,
 * τ head gradients on the cache, each cheap step touching the head
 * blocks alone (O(N_i·h·k + |W|), pflref_blocks_step); + O(N·P) per
 * round.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "algorithms/algorithms.h"
#include "engine/work.h"

static const char *const CHEAP_LINE =
    "step 4: W ← W − β ∇_W ℓ_i(W, θ_t) on the cached Φ_i";
static const char *const HEAD_LINE[] = {
    "step 6: W_i ← W̃_i − ρ (I/r) G_i",
    "step 6: W_i ← W̃_i − ρ (I/r) α_i G_i"};
static const char *const JOINT_LINE =
    "step 5: (G_i, g_i) = (∇_W ℓ_i, ∇_θ ℓ_i) at (W̃_i, θ_t)";
static const char *const GHAT_LINE = "ĝ = (I/r) Σ_{i∈I_t} α_i g_i";
/* --trace alone (an intermediate: no record keeps it): the cache of step 3,
 * row r the features of sample r */
static const char *const CACHE_LINE = "step 3: Φ_i = φ(X_i; θ_t)";
static const char *const SERVER_LINE[] = {
    "step 8: θ_{t+1} = θ_t − ρ ĝ",
    "θ_{t+1} = Adam(ρ, 0.9, 0.999, 1e-8) step on ĝ"};

#define ADAM_B1 0.9
#define ADAM_B2 0.999
#define ADAM_EPS 1e-8

/* τ ≥ 1 head updates (one full batch each) per participation. */
static pflref_status has_steps(const void *ctx, size_t t, size_t client,
                               const pflref_batches *b, pflref_error *err)
{
    (void)ctx;
    (void)t;
    if (b->nsteps > 0)
        return PFLREF_OK;
    return pflref_error_set(err, PFLREF_EINVAL, NULL,
                            "pflego needs τ ≥ 1 head updates per "
                            "participation (one full batch each); client "
                            "%zu has none",
                            client);
}

/* A batch of client i is its whole data set in index order: 0..N_i − 1
 * (ctx: the problem). */
static pflref_status is_full_batch(const void *ctx, size_t client,
                                   const size_t *idx, size_t nb,
                                   pflref_error *err)
{
    const pflref_problem *pr = ctx;
    const size_t n = pr->clients[client].train.n;
    int full = nb == n;
    for (size_t e = 0; full && e < nb; e++)
        full = idx[e] == e;
    if (full)
        return PFLREF_OK;
    return pflref_error_set(err, PFLREF_EINVAL, NULL,
                            "pflego's steps are full-batch: expected the %zu "
                            "indices 0..%zu of client %zu in order",
                            n, n - 1, client);
}

/* PFLEGO needs an mlp whose personal blocks are exactly its head, and
 * full-batch steps. */
static pflref_status pflego_check(const pflref_problem *pr,
                                  const pflref_hyper *hyper,
                                  const pflref_schedule *schedule,
                                  const unsigned char *mask,
                                  pflref_error *err)
{
    (void)hyper;
    const pflref_model *m = &pr->model;
    if (m->kind != PFLREF_MODEL_MLP && m->kind != PFLREF_MODEL_LAYERS)
        return pflref_error_set(err, PFLREF_EINVAL, "model.kind",
                                "pflego needs an mlp or a layer list (a "
                                "body φ(x; θ) and a head W_i); the model is "
                                "%s",
                                pflref_model_kind_name(m->kind));
    if (m->kind == PFLREF_MODEL_LAYERS &&
        (m->bn || m->nlayers < 2 ||
         m->layers[m->nlayers - 1].kind != PFLREF_LAYER_DENSE))
        return pflref_error_set(err, PFLREF_EINVAL, "model.layers",
                                "pflego needs a layer list whose last layer "
                                "is dense (the head W_i) after a body "
                                "without batch normalisation");
    if (m->kind == PFLREF_MODEL_MLP && m->bn)
        return pflref_error_set(
            err, PFLREF_EINVAL, "model.bn",
            "pflego caches the body's features φ(X_i; θ_t) once per round "
            "and steps the head on the cache; its cached-feature passes are "
            "not defined through a batch-normalisation layer (the authors' "
            "bodies have none): give \"bn\": false, whatever bn.running says");
    for (size_t b = 0; b < m->nblocks; b++)
        if (mask[m->blocks[b].offset] != m->blocks[b].is_head)
            return pflref_error_set(err, PFLREF_EINVAL, "split.personal",
                                    "pflego personalises exactly the head: "
                                    "give \"split\": {\"personal\": "
                                    "[\"head\"]}");
    return pflref_schedule_walk(schedule, has_steps, is_full_batch, pr, err);
}

/* PFLEGO's extra state and work buffers (pflego_work_alloc). */
typedef struct {
    pflref_work list; /* the allocations (ref/engine/work.h)              */
    /* state, kept from round to round (server = adam) */
    double *m;        /* P: Adam's first moment m of ĝ, m⁰ = 0            */
    double *v;        /* P: Adam's second moment v of ĝ², v⁰ = 0          */
    /* work */
    double *x;        /* P: client i's (θ_t, W) during its update         */
    double *g;        /* P: the joint gradient, g_i (body) and G_i (head) */
    double *A;        /* N_max × h: the body's pre-activations on X_i     */
    double *Phi;      /* N_max × h: the cached features Φ_i = φ(X_i; θ_t) */
    double *E;        /* N_max × k: the output errors ∂ℓ/∂z at (W̃_i, θ_t) */
} pflego_work;

/* The P-entry buffers of the workspace pflego_work_alloc returns for the
 * run state s (the shape the proofs of the round start from,
 * proofs/README.md): m, v, x and g P writable doubles each, apart from
 * each other, from the workspace record and from the state's arrays. */
/*@ predicate pflego_work_shape{L}(pflego_work *ws, pflref_state *s) =
      \valid_read(ws) &&
      \valid(ws->m + (0 .. s->P - 1)) && \valid(ws->v + (0 .. s->P - 1)) &&
      \valid(ws->x + (0 .. s->P - 1)) && \valid(ws->g + (0 .. s->P - 1)) &&
      \separated(ws->m + (0 .. s->P - 1), ws->v + (0 .. s->P - 1),
                 ws->x + (0 .. s->P - 1), ws->g + (0 .. s->P - 1), ws, s,
                 s->w + (0 .. s->P - 1), s->w0 + (0 .. s->P - 1),
                 s->v + (0 .. s->N * s->P - 1), s->accum + (0 .. s->P - 1),
                 s->mask + (0 .. s->P - 1), s->shared + (0 .. s->P - 1));
 */

/* The body's pass counters of a model workspace (include/pflref/model.h);
 * for the proofs here, its frame: it writes the two counts only. */
/*@ assigns *forward, *backward; */
void pflref_model_workspace_passes(const pflref_model_workspace *ws,
                                   size_t *forward, size_t *backward);

/* N_max is the largest client data set (pflref_problem_max_n); h and k
 * are the mlp's hidden width and outputs (check ensures an mlp). */
static void *pflego_work_alloc(const pflref_problem *problem,
                               const pflref_hyper *hyper)
{
    (void)hyper;
    const pflref_model *mlp = &problem->model;
    const size_t P = mlp->P, n_max = pflref_problem_max_n(problem);
    pflego_work *ws = calloc(1, sizeof *ws);
    if (ws == NULL)
        return NULL;
    ws->m = pflref_work_doubles(&ws->list, P, 1);
    ws->v = pflref_work_doubles(&ws->list, P, 1);
    ws->x = pflref_work_doubles(&ws->list, P, 1);
    ws->g = pflref_work_doubles(&ws->list, P, 1);
    ws->A = pflref_work_doubles(&ws->list, n_max, mlp->h);
    ws->Phi = pflref_work_doubles(&ws->list, n_max, mlp->h);
    ws->E = pflref_work_doubles(&ws->list, n_max, mlp->k);
    return pflref_work_ready(ws);
}

/* The failure of a model call inside client i's update. */
static pflref_status model_failed(pflref_error *err, pflref_status st,
                                  long t, size_t i, size_t step)
{
    return pflref_error_set(err, st, "schedule",
                            "model evaluation failed at round %ld, client "
                            "%zu, step %zu", t, i, step);
}

/* Steps 3–6 for client i: x = (θ_t, W_i) in, (θ_t, W_i^{t+1}) out; g gets
 * the joint gradient (g_i in the body entries, G_i in the head entries).
 * head_scale is step 6's ρ (I/r) or ρ (I/r) α_i.  Its frame is an
 * assumption of the proofs below (proofs/README.md): it writes x, g and
 * *err (and the workspace's caches A, Phi, E and the model workspace's
 * temporaries, which no proof here reads). */
/*@ assigns x[0 .. s->P - 1], g[0 .. s->P - 1], *err; */
static pflref_status client_update(pflref_state *s, size_t i, size_t tau,
                                   double head_scale, double *x, double *g,
                                   const pflref_trace *trace,
                                   pflref_error *err)
{
    const pflref_pflego_hyper *hp = &s->hyper->pflego;
    const double beta = hp->beta;
    const pflref_model *m = &s->problem->model;
    const pflref_data *D = &s->problem->clients[i].train;
    const size_t P = s->P, n = D->n;
    const long t = (long)s->t;
    pflego_work *ws = s->extra;
    double *A = ws->A, *Phi = ws->Phi, *E = ws->E;

    /* req: pflego.alg1.l3 */
    /* step 3: Φ_i = φ(X_i; θ_t), once */
    pflref_status st = pflref_model_features(m, x, D, NULL, n, s->ws, A, Phi);
    if (st != PFLREF_OK)
        return model_failed(err, st, t, i, 0);
    pflref_trace_emit(trace, PFLREF_EV_INTERMEDIATE, "train", t, (long)i, -1,
                      "Phi", Phi, n * m->h, CACHE_LINE);
    /* the client's head optimizer (opt.*), NULL under plain SGD */
    pflref_optim_state *opt = pflref_optim_get(s, i, 0);
    /* req: pflego.alg1.l4 */
    /* step 4: τ − 1 cheap head steps on the cache, W ← W − β ∇_W ℓ_i */
    for (size_t q = 1; q < tau; q++) {
        st = pflref_model_head_grad(m, x, Phi, D, NULL, n, s->ws, g, NULL,
                                    NULL);
        if (st != PFLREF_OK)
            return model_failed(err, st, t, i, q);
        /* head-only: the head blocks' entries alone (cost ∝ |W|); with a
         * head optimizer, its step on the head blocks (the mask) */
        if (opt != NULL ? !pflref_optim_step(opt, m, s->mask, beta, g, x)
                        : !pflref_blocks_step(m, s->mask, beta, g, x))
            return pflref_error_diverge(err, t, (long)i, (long)q, "W_i");
        pflref_trace_emit(trace, PFLREF_EV_STEP, "train", t, (long)i,
                          (long)q, "w_local", x, P, CHEAP_LINE);
    }
    /* req: pflego.alg1.l5 */
    /* step 5: the joint gradient at (W̃_i, θ_t) */
    st = pflref_model_head_grad(m, x, Phi, D, NULL, n, s->ws, g, E, NULL);
    if (st == PFLREF_OK)
        st = pflref_model_body_grad(m, x, A, E, D, NULL, n, s->ws, g);
    if (st != PFLREF_OK)
        return model_failed(err, st, t, i, tau);
    if (!pflref_all_finite(g, P))
        return pflref_error_diverge(err, t, (long)i, (long)tau,
                                    "the joint gradient (G_i, g_i)");
    pflref_trace_emit(trace, PFLREF_EV_NOTE, "train", t, (long)i, (long)tau,
                      "g", g, P, JOINT_LINE);
    /* req: pflego.alg1.l6 */
    /* step 6: the last head step W_i ← W̃_i − head_scale G_i */
    if (!pflref_blocks_step(m, s->mask, head_scale, g, x))
        return pflref_error_diverge(err, t, (long)i, (long)tau, "W_i");
    pflref_trace_emit(trace, PFLREF_EV_STEP, "train", t, (long)i, (long)tau,
                      "w_local", x, P, HEAD_LINE[hp->head_step]);
    return PFLREF_OK;
}

/* Steps 2–7 for participant j of the round: client i = plan->clients[j]
 * updates (θ_t, W_i) and the server adds its α_i g_i to acc.
 *   N_all = N;  N_sel = Σ_{j∈I_t} N_j;  scale = I/r;  ws = s->extra.
 * Proved call sites (proofs/README.md): client i's block v_i lies in s->v. */
/*@ requires state_global(s) && state_personal(s);
    requires round_plan(plan, s->N) && j < plan->m;
    requires pflego_work_shape(ws, s);
    requires \separated(err, s);
    assigns ws->x[0 .. s->P - 1], ws->g[0 .. s->P - 1],
            s->v[0 .. s->N * s->P - 1], acc[0 .. s->P - 1], *err;
 */
static pflref_status client_round(pflref_state *s, const pflego_work *ws,
                                  const pflref_round_plan *plan, size_t j,
                                  double N_all, double N_sel, double scale,
                                  double *acc, const pflref_trace *trace,
                                  pflref_error *err)
{
    const pflref_pflego_hyper *hp = &s->hyper->pflego;
    const double rho = s->hyper->rho;
    const size_t P = s->P, N = s->N, i = plan->clients[j];
    const long t = (long)s->t;
    const unsigned char *const shared = s->shared;
    double *x = ws->x, *g = ws->g, *v_i = pflref_row(s->v, i, N, P);
    const double n_i = (double)s->problem->clients[i].train.n;
    const double alpha = n_i / N_all;                      /* α_i = N_i/N */
    const double head_scale = hp->head_step == PFLREF_PFLEGO_HEAD_EXACT_ALPHA
                                  ? rho * scale * alpha
                                  : rho * scale;

    /* req: pflego.alg1.l2 */
    pflref_compose(shared, s->w, v_i, x, P);      /* x = (θ_t, W_i^t) */
    pflref_client_begin(s, i, "w_local", x, NULL, trace);
    pflref_optim_begin(s, i);    /* the head optimizer (opt.state) */
    size_t fwd0, bwd0, fwd1, bwd1;
    pflref_model_workspace_passes(s->ws, &fwd0, &bwd0);
    pflref_status st = client_update(s, i, plan->batches[j].nsteps,
                                     head_scale, x, g, trace, err);
    if (st != PFLREF_OK)
        return st;
    pflref_model_workspace_passes(s->ws, &fwd1, &bwd1);
    pflref_copy(v_i, x, P);                 /* the client keeps W_i^{t+1} */
    pflref_client_end(s, i, "v", v_i, trace);
    const double passes[2] = {(double)(fwd1 - fwd0), (double)(bwd1 - bwd0)};
    pflref_trace_emit(trace, PFLREF_EV_NOTE, "train", t, (long)i, -1,
                      "body_passes", passes, 2,
                      "body [forward, backward] passes of the client's "
                      "update");
    /* req: pflego.alg1.l7 */
    /* step 7: the client uploads g_i; the server adds α_i g_i */
    const double a =
        hp->theta_weights == PFLREF_PFLEGO_THETA_SAMPLED_NORMALISED
            ? n_i / N_sel
            : alpha;
    /*@ loop assigns p, acc[0 .. P - 1]; */
    for (size_t p = 0; p < P; p++)
        if (shared[p])
            acc[p] += a * g[p];
    return PFLREF_OK;
}

/* Step 8 with server = adam: JAX's optimizers.adam, step count t; ws =
 * s->extra.  Its frame is an assumption of the proof of server_step. */
/*@ assigns ws->m[0 .. s->P - 1], ws->v[0 .. s->P - 1], s->w[0 .. s->P - 1];
 */
static void adam_step(pflref_state *s, const pflego_work *ws,
                      const double *ghat)
{
    const double rho = s->hyper->rho;
    const size_t P = s->P;
    double *m = ws->m, *v = ws->v;
    const double c1 = 1.0 - pow(ADAM_B1, (double)(s->t + 1));
    const double c2 = 1.0 - pow(ADAM_B2, (double)(s->t + 1));
    for (size_t p = 0; p < P; p++) {
        if (!s->shared[p])
            continue;
        /* m ← (1 − b1) ĝ + b1 m;  v ← (1 − b2) ĝ² + b2 v;
         * θ ← θ − ρ m̂ / (√v̂ + ε), m̂ = m/(1 − b1^t), v̂ = v/(1 − b2^t) */
        m[p] = (1.0 - ADAM_B1) * ghat[p] + ADAM_B1 * m[p];
        v[p] = (1.0 - ADAM_B2) * (ghat[p] * ghat[p]) + ADAM_B2 * v[p];
        const double mhat = m[p] / c1, vhat = v[p] / c2;
        s->w[p] -= rho * mhat / (sqrt(vhat) + ADAM_EPS);
    }
}

/* req: pflego.alg1.l8, pflego.prop1 */
/* Step 8: ĝ = (I/r) Σ α_i g_i (acc holds the sum), then the server step
 * θ_{t+1} = θ_t − ρ ĝ (or Adam's), and every client's (θ_{t+1}, W_i);
 * ws = s->extra.  Proved call site (proofs/README.md): the broadcast's
 * preconditions hold from the run state's shapes. */
/*@ requires state_global(s) && state_personal(s);
    requires pflego_work_shape(ws, s);
    requires acc == s->accum;
 */
static pflref_status server_step(pflref_state *s, const pflego_work *ws,
                                 double scale, double *acc,
                                 const pflref_trace *trace, pflref_error *err)
{
    const pflref_pflego_hyper *hp = &s->hyper->pflego;
    const double rho = s->hyper->rho;
    const size_t P = s->P;
    const long t = (long)s->t;
    double *const w = s->w;
    const unsigned char *const shared = s->shared;

    /*@ loop assigns p, acc[0 .. P - 1]; */
    for (size_t p = 0; p < P; p++)
        acc[p] *= scale;
    if (!pflref_all_finite(acc, P))
        return pflref_error_diverge(err, t, -1, -1, "g_hat");
    pflref_trace_emit(trace, PFLREF_EV_NOTE, "train", t, -1, -1, "g_hat", acc,
                      P, GHAT_LINE);
    if (hp->server == PFLREF_PFLEGO_SERVER_ADAM) {
        /* ĝ² overflows beyond about 1e154: the second moment would turn
         * infinite and freeze θ silently (its step ρ m̂/(√v̂ + ε) = 0) */
        adam_step(s, ws, acc);
        if (!pflref_all_finite(ws->v, P))
            return pflref_error_diverge(err, t, -1, -1,
                                        "Adam's second moment");
    } else {
        /*@ loop assigns p, w[0 .. P - 1]; */
        for (size_t p = 0; p < P; p++)
            if (shared[p])
                w[p] -= rho * acc[p];
    }
    if (!pflref_all_finite(w, P))
        return pflref_error_diverge(err, t, -1, -1, "θ");
    pflref_trace_emit(trace, PFLREF_EV_SERVER, "train", t, -1, -1, "w", w, P,
                      SERVER_LINE[hp->server]);
    pflref_share_to_all(s);                   /* (θ_{t+1}, W_i) */
    return PFLREF_OK;
}

/* One round with the workspace ws = s->extra.  Proved call sites
 * (proofs/README.md): each participant's and the server's preconditions
 * hold from the run's state, the validated plan and the workspace. */
/*@ requires state_global(s) && state_personal(s);
    requires round_plan(plan, s->N);
    requires pflego_work_shape(ws, s);
    requires \separated(err, ws, s, plan,
                        plan->clients + (0 .. plan->m - 1));
    requires \separated(plan->clients + (0 .. plan->m - 1), s);
 */
static pflref_status pflego_round_with(pflref_state *s, const pflego_work *ws,
                                       const pflref_round_plan *plan,
                                       const pflref_trace *trace,
                                       pflref_error *err)
{
    const pflref_problem *pr = s->problem;
    const size_t N = s->N, m = plan->m;
    const size_t *const clients = plan->clients;
    /* req: pflego.alg1.l8, pflego.prop1 */
    const double scale = (double)N / (double)m;   /* I/r */
    double *acc = s->accum;

    pflref_round_begin(s, NULL, trace);     /* and acc := 0 */
    double N_all = 0.0, N_sel = 0.0;     /* N and Σ_{j∈I_t} N_j */
    /*@ loop assigns i, N_all; */
    for (size_t i = 0; i < N; i++)
        N_all += (double)pr->clients[i].train.n;
    /*@ loop assigns j, N_sel; */
    for (size_t j = 0; j < m; j++)
        N_sel += (double)pr->clients[clients[j]].train.n;

    /* req: pflego.alg1.l1 */
    /* steps 1–7: the sampled clients I_t, in ascending id */
    /*@ loop assigns j, ws->x[0 .. s->P - 1], ws->g[0 .. s->P - 1],
                     s->v[0 .. N * s->P - 1], acc[0 .. s->P - 1], *err;
     */
    for (size_t j = 0; j < m; j++) {
        pflref_status st = client_round(s, ws, plan, j, N_all, N_sel, scale,
                                        acc, trace, err);
        if (st != PFLREF_OK)
            return st;
    }
    /* req: pflego.alg1.l9 */
    /* step 8 (step 9: clients outside I_t keep W_i) */
    return server_step(s, ws, scale, acc, trace, err);
}

static pflref_status pflego_round(pflref_state *s,
                                  const pflref_round_plan *plan,
                                  const pflref_trace *trace, pflref_error *err)
{
    return pflego_round_with(s, s->extra, plan, trace, err);
}

/* Re-synchronised checking: w = (θ_t, the initial head) and the v_i =
 * (θ_t, W_i) are the whole state with the server's SGD; Adam's moments
 * (pflego.server = adam) are in no record. */
static const char *pflego_resync_gap(const pflref_hyper *hyper)
{
    return hyper->pflego.server == PFLREF_PFLEGO_SERVER_ADAM
               ? "Adam's moments m and v of the server step "
                 "(pflego.server = adam) are in no record"
               : NULL;
}

const pflref_algorithm pflref_pflego = {
    .name = "pflego",
    .title = "PFLEGO (Nikoloutsopoulos, Koutsopoulos, Titsias, "
             "arXiv 2202.09848)",
    .has_global = 1,
    .has_personal = 1,
    .personal_name = "v",
    .n_eval = 1,
    .eval = {{"personalized", PFLREF_SOURCE_PERSONAL}},
    .check = pflego_check,
    .work_alloc = pflego_work_alloc,
    .work_free = pflref_work_free,
    .round = pflego_round,
    .resync_gap = pflego_resync_gap,
    .opt_slots = 1,   /* the client's head optimizer: step 4's cheap head
                         steps (step 6 stays plain) */
};
