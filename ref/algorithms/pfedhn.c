/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/algorithms/pfedhn.c: pFedHN with a linear hypernetwork, Algorithm 1 of
 *   A. Shamsian, A. Navon, E. Fetaya, G. Chechik, "Personalized Federated
 *   Learning using Hypernetworks", ICML 2021 (PMLR 139:9489-9502),
 *   arXiv 2103.04628v1,
 * with the reading of shared/spec notes-lora-pfedhn.md §4 and §4.1 (the
 * linear hypernetwork θ_i = W_h v_i + b_h, §4.1's first bullet).
 *
 * The box, one round r ("l. k" below and in the trace; lines 10 and 11 are
 * the box's numbers as the authors cite them, AvivSham/pFedHN issue #5;
 * the others are numbered in the box's order, trace/pfedhn.req):
 *   l. 3   sample one client i (the schedule's one participant: the choice
 *          is data, recorded and replayable like every client set)
 *   l. 4   θ_i = h(v_i; φ) = W_h v_i + b_h      (φ = (W_h, b_h))
 *   l. 5   θ̃_i = θ_i
 *   l. 6-8 for k = 1..K: θ̃_i ← θ̃_i − η ∇_θ L_i(θ̃_i; B_k)
 *          (B_k: the schedule's k-th batch of client i)
 *   l. 9   Δθ_i = θ̃_i − θ_i        (Fig. 1's caption: the update direction)
 *   l. 10  φ ← φ − α (∇_φ θ_i)ᵀ (θ_i − θ̃_i)
 *   l. 11  v_i ← v_i − α_v (∇_{v_i} θ_i)ᵀ (θ_i − θ̃_i)
 * Lines 10-11 descend L_i through the chain rule with −Δθ_i in place of
 * ∇_θ L_i: the gradient of the surrogate ½‖θ̃_i − h(v_i; φ)‖² (notes §4).
 * The box prints "φ = φ − α ∇_φθ_iᵀ Δθ_i" beside Δθ_i = θ̃_i − θ_i, which
 * read literally would ascend; the authors' code sends θ_i − θ̃_i as the
 * gradient to a minimising optimizer (experiments/pfedhn/trainer.py:
 * 169-181 @ 1bc0549), i.e. the descent written above, which is the only
 * reading here (notes §4, flag "sign").  For the linear hypernetwork the
 * Jacobians are exact and simple, with d = θ_i − θ̃_i = −Δθ_i:
 *   ∇_{W_h} = d v_iᵀ,   ∇_{b_h} = d,   ∇_{v_i} = W_hᵀ d,
 * all three at the round-start (W_h, v_i) (simultaneous, as one autograd
 * step of the code).  An unsampled client's v_j does not move.
 *
 * Symbols:  W_h ↔ s->hn (P×e, row p = parameter p)   b_h ↔ s->hn + P·e
 *           v_i ↔ s->hn + P·e + P + i·e (N×e)   θ_i ↔ ws->theta
 *           θ̃_i ↔ s->v + i·P during the round   Δθ_i ↔ ws->delta
 *           ∇_{v_i} ↔ ws->g_v (e)   η ↔ hyper->eta   α ↔ pfedhn.alpha
 *           α_v ↔ pfedhn.alpha_v (unset: α, the box's one rate)
 * After every round, and after init, every client's personal model is
 * s->v + j·P = h(v_j; φ), the model the paper evaluates (notes §4.3 H8).
 *
 * Switches (the paper's reading first; the code's departures are those of
 * AvivSham/pFedHN @ 1bc0549, experiments/pfedhn/trainer.py, notes §4.3):
 *   pfedhn.hn_bias    on: θ_i = W_h v_i + b_h | off: θ_i = W_h v_i (the
 *                     analysis form; b_h stays 0 and is never written)
 *   pfedhn.outer_opt  sgd: l. 10-11 as above | sgd_momentum_wd (H1, H2,
 *                     trainer.py:96-104): with x every entry of (W_h, b_h,
 *                     v_1..v_N), G its gradient (0 in the rows of the
 *                     unsampled embeddings, the code's dense embedding
 *                     gradient), μ = pfedhn.outer_momentum, λ_o =
 *                     pfedhn.outer_wd, torch's SGD:
 *                       d = G + λ_o x;  B = d (first round), μ B + d (after);
 *                       x ← x − lr B   (lr = α for φ, α_v for the v_j),
 *                     so every embedding moves (issue #6)
 *   pfedhn.inner_opt  sgd: l. 8 | sgd_momentum_wd (H3, trainer.py:130-132):
 *                     a new torch SGD every round, d = g + λ_i θ̃,
 *                     b = d (first step), μ_i b + d (after), θ̃ ← θ̃ − η b
 *   pfedhn.clip       off | norm (H4, trainer.py:160, 180): torch's
 *                     clip_grad_norm_ of the local gradient g (before the
 *                     weight decay is added) and of G:
 *                       g ← g · min(1, c / (‖g‖₂ + 10⁻⁶)),  c = clip_norm
 * Preset official: all three departures with the code's values (0.9, 1e-3,
 * 0.9, 5e-5, 50).  Not offered: fresh-shuffle batches (H6: the schedule
 * gives the batches), the MLP hypernetwork (§4.1) and pFedHN-PC (§4.2).
 *
 * Initial state (notes §4.1: "Oracle: data"): W_h⁰, b_h⁰ and every v_i⁰
 * are given (the spec's init.hypernetwork, hyper->pfedhn.W0, b0, v0); the
 * result records them and the final (W_h, b_h, v).
 *
 * Trace, round r, client i: CLIENT_BEGIN "theta" (θ_i, l. 4), STEP "theta"
 * (l. 8), CLIENT_END "theta" (θ̃_i), NOTE "delta_theta" (Δθ_i, l. 9), NOTE
 * "W_h" (P×e row-major) and "b_h" (bias on) after l. 10, NOTE
 * "embedding" (v_i, l. 11).
 *
 * Determinism: θ_p = (Σ_c W_pc v_c, c ascending) + b_p; (∇_{v_i})_c =
 * Σ_p W_pc d_p, p ascending; no other sums.
 * Cost per round: K local steps + O(P·e) for l. 4, 10, 11 + O(N·P·e) for
 * the personal models h(v_j; φ) of every client.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "algorithms/algorithms.h"
#include "engine/work.h"

static const char *const GENERATE_LINE =
    "Alg. 1 l. 4: θ_i = h(v_i; φ) = W_h v_i + b_h";
static const char *const LOCAL_LINE =
    "Alg. 1 l. 8: θ̃_i ← θ̃_i − η ∇_θ L_i(θ̃_i; B)";
static const char *const DELTA_LINE = "Alg. 1 l. 9: Δθ_i = θ̃_i − θ_i";
static const char *const PHI_LINE =
    "Alg. 1 l. 10: φ ← φ − α (∇_φ θ_i)ᵀ (θ_i − θ̃_i): "
    "W_h ← W_h + α Δθ_i v_iᵀ, b_h ← b_h + α Δθ_i";
static const char *const EMBED_LINE =
    "Alg. 1 l. 11: v_i ← v_i − α_v (∇_{v_i} θ_i)ᵀ (θ_i − θ̃_i) = "
    "v_i + α_v W_hᵀ Δθ_i";

/* The epsilon torch's clip_grad_norm_ adds to the norm (a constant of
 * torch, not of the paper): coef = c / (‖g‖ + 1e-6). */
#define PFEDHN_CLIP_EPS 1e-6

/* pFedHN's work buffers (zero-filled); φ and the v_i live in s->hn. */
typedef struct {
    pflref_work list;   /* the allocations (ref/engine/work.h)             */
    double *theta;      /* P: θ_i = h(v_i; φ), the round's generated model */
    double *delta;      /* P: Δθ_i = θ̃_i − θ_i                             */
    double *g_v;        /* e: ∇_{v_i} = W_hᵀ (θ_i − θ̃_i)                   */
    double *g;          /* P: a batch gradient                             */
    double *b_in;       /* P: the local momentum buffer (inner_opt)        */
    double *G;          /* n_hn: the gradient of (W_h, b_h, v) (outer_opt) */
    double *B_out;      /* n_hn: its momentum buffer, kept across rounds   */
} pfedhn_work;

static void *pfedhn_work_alloc(const pflref_problem *problem,
                               const pflref_hyper *hyper)
{
    const size_t P = problem->model.P;
    const size_t e = hyper->pfedhn.e == 0 ? 1 : hyper->pfedhn.e;
    pfedhn_work *ws = calloc(1, sizeof *ws);
    if (ws == NULL)
        return NULL;
    ws->theta = pflref_work_doubles(&ws->list, P, 1);
    ws->delta = pflref_work_doubles(&ws->list, P, 1);
    ws->g_v = pflref_work_doubles(&ws->list, e, 1);
    ws->g = pflref_work_doubles(&ws->list, P, 1);
    ws->b_in = pflref_work_doubles(&ws->list, P, 1);
    ws->G = pflref_work_doubles(&ws->list, P * e + P + problem->N * e, 1);
    ws->B_out = pflref_work_doubles(&ws->list, P * e + P + problem->N * e, 1);
    return pflref_work_ready(ws);
}

/* The initial hypernetwork is given, and every round samples exactly one
 * client (l. 3). */
static pflref_status pfedhn_check(const pflref_problem *problem,
                                  const pflref_hyper *hyper,
                                  const pflref_schedule *schedule,
                                  const unsigned char *mask,
                                  pflref_error *err)
{
    (void)problem;
    (void)mask;
    const pflref_pfedhn_hyper *h = &hyper->pfedhn;
    if (!pflref_optim_is_plain(&hyper->opt) &&
        (h->inner_opt != PFLREF_PFEDHN_OPT_SGD ||
         h->clip != PFLREF_PFEDHN_CLIP_OFF))
        return pflref_error_set(err, PFLREF_EINVAL,
                                "algorithm.switches.opt.method",
                                "opt.* and pfedhn.inner_opt / pfedhn.clip "
                                "both set the local steps' optimizer; give "
                                "one of them");
    if (h->e == 0 || h->W0 == NULL || h->v0 == NULL)
        return pflref_error_set(err, PFLREF_EINVAL, "init.hypernetwork",
                                "pfedhn needs its initial hypernetwork W_h, "
                                "b_h and embeddings v_i as data");
    if ((h->bias == PFLREF_PFEDHN_BIAS_ON) != (h->b0 != NULL))
        return pflref_error_set(err, PFLREF_EINVAL, "init.hypernetwork.b",
                                h->b0 == NULL
                                    ? "pfedhn.hn_bias = on needs b_h"
                                    : "pfedhn.hn_bias = off takes no b_h");
    for (size_t t = 0; t < schedule->T; t++) {
        if (schedule->rounds[t].m == 1)
            continue;
        char where[PFLREF_WHERE_MAX];
        snprintf(where, sizeof where, "schedule.rounds[%zu].clients", t);
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "pfedhn samples one client per round "
                                "(Alg. 1 l. 3); the round has %zu",
                                schedule->rounds[t].m);
    }
    return PFLREF_OK;
}

/* l. 4: theta := h(v; φ) = W_h v + b_h (bias on), θ_p summed over c
 * ascending, then + b_p.  theta [out] P */
static void generate(const pflref_state *s, const double *v, double *theta)
{
    const size_t P = s->P, e = s->hyper->pfedhn.e;
    const double *W_h = s->hn, *b_h = s->hn + P * e;
    const int bias = s->hyper->pfedhn.bias == PFLREF_PFEDHN_BIAS_ON;
    for (size_t p = 0; p < P; p++) {
        double x = 0.0;
        for (size_t c = 0; c < e; c++)
            x += W_h[p * e + c] * v[c];
        theta[p] = bias ? x + b_h[p] : x;
    }
}

/* Every client's personal model s->v + j·P := h(v_j; φ). */
static void generate_all(pflref_state *s)
{
    const size_t P = s->P, e = s->hyper->pfedhn.e;
    const double *V = s->hn + P * e + P;
    for (size_t j = 0; j < s->N; j++)
        generate(s, V + j * e, s->v + j * P);
}

/* s->hn := (W_h⁰, b_h⁰ or 0, v⁰), then θ_j = h(v_j⁰; φ⁰) for every j. */
static pflref_status pfedhn_init(pflref_state *s, pflref_error *err)
{
    /* req: pfedhn.alg1.l1 */
    const pflref_pfedhn_hyper *h = &s->hyper->pfedhn;
    const size_t P = s->P, N = s->N, e = h->e;
    s->n_hn = P * e + P + N * e;
    s->hn = calloc(s->n_hn, sizeof *s->hn);
    if (s->hn == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, NULL, "out of memory");
    memcpy(s->hn, h->W0, P * e * sizeof *s->hn);
    if (h->b0 != NULL)
        memcpy(s->hn + P * e, h->b0, P * sizeof *s->hn);
    memcpy(s->hn + P * e + P, h->v0, N * e * sizeof *s->hn);
    generate_all(s);
    return PFLREF_OK;
}

/* g ← g · min(1, c / (‖g‖₂ + 10⁻⁶)) (torch's clip_grad_norm_). */
static void clip_norm(double *g, size_t n, double c)
{
    double sum = 0.0;
    for (size_t k = 0; k < n; k++)
        sum += g[k] * g[k];
    const double coef = c / (sqrt(sum) + PFEDHN_CLIP_EPS);
    if (coef < 1.0)
        for (size_t k = 0; k < n; k++)
            g[k] *= coef;
}

/* The trace of l. 10-11's result for client i. */
static void emit_state(const pflref_state *s, size_t i,
                       const pflref_trace *trace)
{
    const size_t P = s->P, e = s->hyper->pfedhn.e;
    const long t = (long)s->t;
    pflref_trace_emit(trace, PFLREF_EV_NOTE, "train", t, (long)i, -1, "W_h",
                      s->hn, P * e, PHI_LINE);
    if (s->hyper->pfedhn.bias == PFLREF_PFEDHN_BIAS_ON)
        pflref_trace_emit(trace, PFLREF_EV_NOTE, "train", t, (long)i, -1,
                          "b_h", s->hn + P * e, P, PHI_LINE);
    pflref_trace_emit(trace, PFLREF_EV_NOTE, "train", t, (long)i, -1,
                      "embedding", s->hn + P * e + P + i * e, e, EMBED_LINE);
}

/* l. 10-11 at the round-start (W_h, v_i), d = θ_i − θ̃_i = −Δθ_i:
 *   g_v = W_hᵀ d (old W_h);  W_h ← W_h − α d v_iᵀ;  b_h ← b_h − α d;
 *   v_i ← v_i − α_v g_v. */
static void server_sgd(pflref_state *s, size_t i, pfedhn_work *ws)
{
    const pflref_pfedhn_hyper *h = &s->hyper->pfedhn;
    const size_t P = s->P, e = h->e;
    const double alpha = h->alpha;                         /* α   */
    const double alpha_v = isnan(h->alpha_v) ? alpha : h->alpha_v; /* α_v */
    const int bias = h->bias == PFLREF_PFEDHN_BIAS_ON;
    double *W_h = s->hn, *b_h = s->hn + P * e;
    double *v_i = s->hn + P * e + P + i * e;
    /* ∇_{v_i} = W_hᵀ d, before W_h moves; req: pfedhn.alg1.l11 */
    for (size_t c = 0; c < e; c++) {
        double x = 0.0;
        for (size_t p = 0; p < P; p++)
            x += W_h[p * e + c] * -ws->delta[p];
        ws->g_v[c] = x;
    }
    /* l. 10: W_h ← W_h − α d v_iᵀ, b_h ← b_h − α d; req: pfedhn.alg1.l10 */
    for (size_t p = 0; p < P; p++) {
        const double d_p = -ws->delta[p];
        for (size_t c = 0; c < e; c++)
            W_h[p * e + c] -= alpha * d_p * v_i[c];
        if (bias)
            b_h[p] -= alpha * d_p;
    }
    /* l. 11: v_i ← v_i − α_v ∇_{v_i}; req: pfedhn.alg1.l11 */
    for (size_t c = 0; c < e; c++)
        v_i[c] -= alpha_v * ws->g_v[c];
}

/* The code's l. 10-11 (pfedhn.outer_opt = sgd_momentum_wd or
 * pfedhn.clip = norm): G, the gradient of the surrogate over
 * x = (W_h, b_h, v_1..v_N) at the round start (0 off row i of the
 * embeddings, and in b_h with the bias off), clipped (pfedhn.clip), then
 * x ← x − lr G (sgd) or torch's step with momentum and weight decay on
 * every entry (sgd_momentum_wd); lr = α for φ, α_v for the embeddings. */
static void server_code(pflref_state *s, size_t i, pfedhn_work *ws)
{
    const pflref_pfedhn_hyper *h = &s->hyper->pfedhn;
    const size_t P = s->P, e = h->e, nW = P * e;
    const double alpha = h->alpha;
    const double alpha_v = isnan(h->alpha_v) ? alpha : h->alpha_v;
    const int bias = h->bias == PFLREF_PFEDHN_BIAS_ON;
    const double *v_i = s->hn + nW + P + i * e;
    double *G = ws->G;
    memset(G, 0, s->n_hn * sizeof *G);
    for (size_t p = 0; p < P; p++) {
        const double d_p = -ws->delta[p];
        for (size_t c = 0; c < e; c++)
            G[p * e + c] = d_p * v_i[c];              /* ∇W_h = d v_iᵀ */
        if (bias)
            G[nW + p] = d_p;                          /* ∇b_h = d      */
    }
    for (size_t c = 0; c < e; c++) {
        double x = 0.0;
        for (size_t p = 0; p < P; p++)
            x += s->hn[p * e + c] * -ws->delta[p];
        G[nW + P + i * e + c] = x;                    /* ∇v_i = W_hᵀ d */
    }
    if (h->clip == PFLREF_PFEDHN_CLIP_NORM)
        clip_norm(G, s->n_hn, h->clip_norm);
    const int momentum = h->outer_opt == PFLREF_PFEDHN_OPT_SGD_MOMENTUM_WD;
    /* the code's l. 10-11; req: pfedhn.alg1.l10, pfedhn.alg1.l11 */
    for (size_t k = 0; k < s->n_hn; k++) {
        if (!bias && k >= nW && k < nW + P)
            continue;                                 /* no b_h */
        const double lr = k < nW + P ? alpha : alpha_v;
        if (!momentum) {
            s->hn[k] -= lr * G[k];
            continue;
        }
        /* d = G + λ_o x; B = d in the first round, else μ B + d */
        const double d = G[k] + h->outer_wd * s->hn[k];
        ws->B_out[k] = s->t == 0 ? d : h->outer_momentum * ws->B_out[k] + d;
        s->hn[k] -= lr * ws->B_out[k];
    }
}

/* The code's l. 6-8 (pfedhn.inner_opt = sgd_momentum_wd or pfedhn.clip =
 * norm), for each scheduled batch k: g = ∇L_i(θ̃; B_k), clipped, then
 * θ̃ ← θ̃ − η g (sgd) or, with a momentum buffer b new this round,
 * d = g + λ_i θ̃, b = d (k = 1) or μ_i b + d, θ̃ ← θ̃ − η b.
 *   theta [in,out] P */
static pflref_status local_code(pflref_state *s, size_t i,
                                const pflref_batches *batches, double *theta,
                                pfedhn_work *ws, const pflref_trace *trace,
                                pflref_error *err)
{
    const pflref_pfedhn_hyper *h = &s->hyper->pfedhn;
    const size_t P = s->P;
    const double eta = s->hyper->eta;
    const int momentum = h->inner_opt == PFLREF_PFEDHN_OPT_SGD_MOMENTUM_WD;
    const pflref_data *D = &s->problem->clients[i].train;
    /* req: pfedhn.alg1.l6, pfedhn.alg1.l7 */
    for (size_t k = 0; k < batches->nsteps; k++) {
        pflref_status st =
            pflref_batch_grad(&s->problem->model, theta, D, batches, k, s->ws,
                              ws->g, (long)s->t, (long)i, err);
        if (st != PFLREF_OK)
            return st;
        /* θ̃'s running statistics from this training pass (bn.running) */
        if ((st = pflref_bn_running_move(&s->hyper->bn, &s->problem->model,
                                         s->ws, theta, (long)s->t, (long)i,
                                         (long)k + 1, err)))
            return st;
        if (h->clip == PFLREF_PFEDHN_CLIP_NORM)
            clip_norm(ws->g, P, h->clip_norm);
        for (size_t p = 0; p < P; p++) {   /* req: pfedhn.alg1.l8 */
            if (!momentum) {
                theta[p] -= eta * ws->g[p];
                continue;
            }
            const double d = ws->g[p] + h->inner_wd * theta[p];
            ws->b_in[p] = k == 0 ? d : h->inner_momentum * ws->b_in[p] + d;
            theta[p] -= eta * ws->b_in[p];
        }
        if (!pflref_all_finite(theta, P))
            return pflref_error_diverge(err, (long)s->t, (long)i, (long)k + 1,
                                        "theta");
        pflref_trace_emit(trace, PFLREF_EV_STEP, "train", (long)s->t, (long)i,
                          (long)k + 1, "theta", theta, P, LOCAL_LINE);
    }
    return PFLREF_OK;
}

static pflref_status pfedhn_round(pflref_state *s,
                                  const pflref_round_plan *plan,
                                  const pflref_trace *trace,
                                  pflref_error *err)
{
    pfedhn_work *ws = s->extra;
    const size_t P = s->P, e = s->hyper->pfedhn.e;
    const double eta = s->hyper->eta;   /* η */
    /* l. 3: the one sampled client (pfedhn_check); req: pfedhn.alg1.l3 */
    const size_t i = plan->clients[0];
    double *theta_tilde = s->v + i * P;
    /* l. 4: θ_i = h(v_i; φ); req: pfedhn.alg1.l4 */
    generate(s, s->hn + P * e + P + i * e, ws->theta);
    /* l. 5: θ̃_i = θ_i; req: pfedhn.alg1.l5 (the CLIENT_BEGIN event of
     * pflref_client_begin, with l. 4's formula) */
    memcpy(theta_tilde, ws->theta, P * sizeof *theta_tilde);
    pflref_trace_emit(trace, PFLREF_EV_CLIENT_BEGIN, "train", (long)s->t,
                      (long)i, 0, "theta", theta_tilde, P, GENERATE_LINE);
    /* l. 6-8: θ̃_i ← θ̃_i − η ∇L_i(θ̃_i; B); req: pfedhn.alg1.l8 */
    pflref_status st;
    if (s->hyper->pfedhn.inner_opt == PFLREF_PFEDHN_OPT_SGD &&
        s->hyper->pfedhn.clip == PFLREF_PFEDHN_CLIP_OFF) {
        pflref_optim_begin(s, i);   /* its optimizer (opt.state) */
        const pflref_local_sgd job = pflref_local_sgd_plain(
            s, i, &plan->batches[0], eta, "theta", LOCAL_LINE);
        st = pflref_local_sgd_run(&job, theta_tilde, ws->g, s->ws, trace,
                                  err);
    } else {
        st = local_code(s, i, &plan->batches[0], theta_tilde, ws, trace,
                        err);
    }
    if (st != PFLREF_OK)
        return st;
    pflref_client_end(s, i, "theta", theta_tilde, trace);
    /* l. 9: Δθ_i = θ̃_i − θ_i; req: pfedhn.alg1.l9 */
    for (size_t p = 0; p < P; p++)
        ws->delta[p] = theta_tilde[p] - ws->theta[p];
    pflref_trace_emit(trace, PFLREF_EV_NOTE, "train", (long)s->t, (long)i,
                      -1, "delta_theta", ws->delta, P, DELTA_LINE);
    /* l. 10-11 */
    if (s->hyper->pfedhn.outer_opt == PFLREF_PFEDHN_OPT_SGD &&
        s->hyper->pfedhn.clip == PFLREF_PFEDHN_CLIP_OFF)
        server_sgd(s, i, ws);
    else
        server_code(s, i, ws);
    if (!pflref_all_finite(s->hn, s->n_hn))
        return pflref_error_diverge(err, (long)s->t, (long)i, -1, "W_h");
    emit_state(s, i, trace);
    /* every client's personal model θ_j = h(v_j; φ) */
    generate_all(s);
    return PFLREF_OK;
}

/* Re-synchronised checking: the candidate's notes carry φ and the
 * embeddings (W_h, b_h and the sampled v_i after l. 10-11), so the state
 * after round t is its last W_h and b_h and each client's last embedding
 * (a client never sampled keeps v_j⁰), with every θ_j = h(v_j; φ)
 * regenerated.  The code's outer optimizer (sgd_momentum_wd) also keeps a
 * momentum buffer and decays every embedding each round, none of which is
 * recorded. */
static const char *pfedhn_resync_gap(const pflref_hyper *hyper)
{
    return hyper->pfedhn.outer_opt == PFLREF_PFEDHN_OPT_SGD_MOMENTUM_WD
               ? "the outer optimizer's momentum buffer and the embeddings "
                 "of the clients not sampled, which it moves every round "
                 "(pfedhn.outer_opt = sgd_momentum_wd), are in no record"
               : NULL;
}

static void pfedhn_load_state(pflref_state *s, pflref_state_loader load,
                              void *ctx, long t)
{
    const size_t P = s->P, e = s->hyper->pfedhn.e;
    load(ctx, PFLREF_EV_NOTE, "W_h", t, -1, s->hn, P * e);
    if (s->hyper->pfedhn.bias == PFLREF_PFEDHN_BIAS_ON)
        load(ctx, PFLREF_EV_NOTE, "b_h", t, -1, s->hn + P * e, P);
    for (size_t j = 0; j < s->N; j++)
        load(ctx, PFLREF_EV_NOTE, "embedding", t, (long)j,
             s->hn + P * e + P + j * e, e);
    generate_all(s);
}

const pflref_algorithm pflref_pfedhn = {
    .name = "pfedhn",
    .title = "pFedHN (Shamsian, Navon, Fetaya, Chechik, ICML 2021, Alg. 1; "
             "linear hypernetwork)",
    .has_personal = 1,
    .personal_name = "theta",
    .n_eval = 1,
    .eval = {{"personalized", PFLREF_SOURCE_PERSONAL}},
    .check = pfedhn_check,
    .work_alloc = pfedhn_work_alloc,
    .work_free = pflref_work_free,
    .init = pfedhn_init,
    .round = pfedhn_round,
    .resync_gap = pfedhn_resync_gap,
    .load_state = pfedhn_load_state,
    .opt_slots = 1,   /* l. 6-8 under pfedhn.inner_opt = sgd, clip off */
};
