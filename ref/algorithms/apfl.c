/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/algorithms/apfl.c: APFL, Algorithm 1 of
 *   Y. Deng, M. M. Kamani, M. Mahdavi, "Adaptive Personalized Federated
 *   Learning", arXiv 2003.13461,
 * in the clean reading of shared/spec notes §6(c): τ local steps, then one
 * average.
 *
 * Objective (per client i): min_{v_i} f_i(v̄_i), v̄_i = α_i v_i + (1 − α_i) w*,
 * so ∇_{v_i} f_i(v̄_i) = α_i ∇f_i(v̄_i) and ∂f_i(v̄_i)/∂α_i = ⟨v_i − w, ∇f_i(v̄_i)⟩.
 *
 * One round t:
 *   the server sends w to every participant i ∈ U
 *   each i:  w_i ← w;  for each scheduled batch ξ (τ = the batch count),
 *            with the previous values on every right-hand side:
 *     v̄   = α_i v_i + (1 − α_i) w_i                          (Alg. 1, v̄)
 *     w_i ← w_i − η ∇f_i(w_i; ξ)                             (Alg. 1, w)
 *     v_i ← v_i − η α_i ∇f_i(v̄; ξ)                          (Alg. 1, v)
 *     adaptive: α_i ← Π_[0,1](α_i − η_α ⟨v_i − w_i, ∇f_i(v̄; ξ)⟩)  (Alg. 1, α)
 *   w ← (1/|U|) Σ_{i∈U} w_i                                   (uniform mean)
 * v_i starts at w⁰ and persists; α_i starts at the hyperparameter α and
 * persists; a client outside U keeps both.  The box's if/else ("if t does
 * not divide τ: local step, else average") is read as τ local steps
 * followed by the average, as the authors' code runs it (notes §6(f) 4).
 *
 * Reported models: "global" w, "local" v_i, and "personalized"
 * α_i v_i + (1 − α_i) w with the final global w (the paper's "in practice"
 * output, notes §6(c); the theory's iterate average is not formed).  The
 * trajectory also notes v_bar = α_i v_i + (1 − α_i) w_i with the client's
 * local w_i before the average (what FedTorch evaluates each round).
 *
 * Symbols:  w ↔ s->w (P)   w_i ↔ ws->w_local (P)   v_i ↔ s->v + i·P
 *           α_i ↔ s->alpha[i]   η ↔ hyper->eta
 *           η_α ↔ hyper->apfl.eta_alpha (NaN: η)   U ↔ plan->clients
 *           τ ↔ plan->batches[j].nsteps   ξ ↔ the step's batch
 *
 * Switches (the paper's reading first; notes §6(f)):
 *   apfl.alpha       fixed: α_i never moves; adaptive: the α step above
 *   apfl.mix         parameter: one model at v̄ (the paper);
 *                    output: ŷ(x) = α_i z(v_i; x) + (1 − α_i) z(w_i; x) and
 *                    the loss ℓ(ŷ, y) (FedTorch's inference_personal), so
 *                    v's step is η α_i (1/|ξ|) Σ_x J_v(x)ᵀ ∂ℓ/∂ŷ and the
 *                    paper's α gradient (1/|ξ|) Σ_x ⟨z(v; x) − z(w_i; x),
 *                    ∂ℓ/∂ŷ⟩; equal to parameter mixing for models linear in
 *                    their parameters (quadratic has no outputs: refused)
 *   apfl.mix_uses_w  old: the mixture takes w_i before its step (the paper);
 *                    new: after it (FedTorch steps w first); the paper's α
 *                    gradient then uses that same w_i (it is ∂/∂α of the
 *                    loss that was formed)
 *   apfl.alpha_rule  paper: the α step above at every step;
 *                    fedtorch: FedTorch's alpha_update (MLOPTPSU/FedTorch
 *                    ab8068dbc968, fedtorch/comms/utils/flow_utils.py), at
 *                    the FIRST step of each round only, after both steps:
 *                      α_i ← clip_[0,1](α_i − η (Σ_p (v_i − w_i)_p
 *                              (α_i g_v,p + (1 − α_i) g_w,p) + 0.02 α_i))
 *                    with the NEW v_i, w_i, the mixture loss's gradients
 *                    g_v = ∇_{v_i}, g_w = ∇_{w_i} (already carrying α_i and
 *                    1 − α_i), step η (the model's learning rate; η_α is
 *                    refused) and α_i the value before the step
 *   apfl.variant     paper: the box above;
 *                    pfllib: TsingZ0/PFLlib d832e76f6a23,
 *                    system/flcore/clients/clientapfl.py, train() (the
 *                    loop over the loader: optimizer.step on w, then
 *                    optimizer_per.step on v, then alpha_update) and
 *                    alpha_update (the FedTorch rule at EVERY step, with
 *                    own-loss gradients); per step, with g_w, g_v at the
 *                    iterates before it:
 *                      w_i ← w_i − η g_w,  g_w = ∇f_i(w_i; ξ)
 *                      v_i ← v_i − η g_v,  g_v = ∇f_i(v_i; ξ)   (own loss)
 *                      adaptive: α_i ← clip_[0,1](α_i − η_α (⟨v_i − w_i,
 *                        α_i g_v + (1 − α_i) g_w⟩ + 0.02 α_i))  (new v_i,
 *                        w_i; η_α unset: η, PFLlib's learning_rate)
 *                    and after the client's last step (train(), the loop
 *                    over model_per's parameters):
 *                      v_i ← (1 − α_i) w_i + α_i v_i
 *                    apfl.mix and apfl.alpha_rule do not apply to it (a
 *                    non-default value is refused); v_bar is not noted
 *                    (PFLlib evaluates v_i itself, the "local" model)
 *   bn.aggregate     (apfl.variant = pfllib, a model with batch
 *                    normalisation; apfl_round_keep) average: r_μ, r_v go
 *                    through the steps, v_i's end mixture and the server
 *                    average like every entry; parameters_only: PFLlib's
 *                    set_parameters (clientbase.py:67-69) copies
 *                    parameters() only, so w_i starts from w's parameters
 *                    with client i's own r_μ, r_v (w⁰'s before it first
 *                    trains), which w_i's last pass leaves; the end mixture
 *                    (clientapfl.py:58-59, model_per.parameters()) skips
 *                    v_i's r_μ, r_v, its own; w's are the first
 *                    participant's (serverbase.py:138-150)
 *   apfl.weights     uniform: w ← (1/|U|) Σ_U w_i (the paper);
 *                    samples: w ← Σ_U n_i w_i / Σ_U n_j (PFLlib's
 *                    serverbase.py receive_models, uploaded_weights)
 *   apfl.alpha_lr    decayed: under lr.schedule η_α (unset: η) decays with
 *                    η (the paper has no decay: one rule for every step);
 *                    constant: η_α, unset the undecayed η (PFLlib's
 *                    alpha_update reads self.learning_rate, which no
 *                    scheduler touches); applied by ref/engine/lr.c, read
 *                    here as hyper->apfl.eta_alpha
 *
 * State and work: w, v_i and α_i are the state's w, v_i and alpha[i]; the
 * buffers of a step are apfl_work (with output mixing, one batch's
 * outputs).  The check refuses, before round 0, α ∉ [0, 1], η_α under the
 * fedtorch rule, and output mixing on a model without outputs or with a
 * batch longer than the largest data set.
 *
 * Determinism: participants train and are summed in ascending id.
 * Cost per step: two gradients (parameter mixing), or two forward and one
 * backward pass plus the w gradient (output mixing; FedTorch's rule adds a
 * backward pass at the first step).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "algorithms/algorithms.h"
#include "engine/bn_own.h"
#include "engine/work.h"

/* FedTorch's alpha_update adds 0.02 α to its α gradient (the derivative of
 * a penalty 0.01 α² that pulls α toward 0); kept as the code has it. */
#define PFLREF_APFL_FEDTORCH_ALPHA_DECAY 0.02

static const char *const W_LINE = "Alg. 1: w_i ← w_i − η ∇f_i(w_i; ξ)";
/* [mix][mix_uses_w] */
static const char *const V_LINE[2][2] = {
    {"Alg. 1: v_i ← v_i − η α_i ∇f_i(v̄; ξ), v̄ = α_i v_i + (1 − α_i) w_i",
     "v_i ← v_i − η α_i ∇f_i(v̄; ξ), v̄ = α_i v_i + (1 − α_i) w_i (w_i after "
     "its step)"},
    {"v_i ← v_i − η α_i (1/|ξ|) Σ J_v(x)ᵀ ∂ℓ/∂ŷ, ŷ = α_i v_i(x) + (1 − α_i) "
     "w_i(x)",
     "v_i ← v_i − η α_i (1/|ξ|) Σ J_v(x)ᵀ ∂ℓ/∂ŷ, ŷ = α_i v_i(x) + (1 − α_i) "
     "w_i(x) (w_i after its step)"}};
static const char *const ALPHA_LINE[2] = {
    "Alg. 1: α_i ← Π_[0,1](α_i − η_α ⟨v_i − w_i, ∇f_i(v̄; ξ)⟩)",
    "FedTorch alpha_update (first step): α_i ← clip_[0,1](α_i − η (⟨v_i − "
    "w_i, α_i g_v + (1 − α_i) g_w⟩ + 0.02 α_i))"};
static const char *const VBAR_LINE =
    "v̄_i = α_i v_i + (1 − α_i) w_i (local w_i, before the average)";
static const char *const V_PFLLIB_LINE =
    "PFLlib clientapfl.py: v_i ← v_i − η ∇f_i(v_i; ξ)";
static const char *const ALPHA_PFLLIB_LINE =
    "PFLlib alpha_update: α_i ← clip_[0,1](α_i − η_α (⟨v_i − w_i, α_i g_v "
    "+ (1 − α_i) g_w⟩ + 0.02 α_i))";
/* [apfl.weights] */
static const char *const SERVER_LINE[2] = {
    "w ← (1/|U|) Σ_{i∈U} w_i", "w ← Σ_{i∈U} n_i w_i / Σ_{j∈U} n_j"};

/*@ assigns \nothing; */
static int pfllib(const pflref_hyper *h)
{
    return h->apfl.variant == PFLREF_APFL_VARIANT_PFLLIB;
}

/*@ assigns \nothing; */
static int output_mix(const pflref_hyper *h)
{
    return h->apfl.mix == PFLREF_APFL_MIX_OUTPUT;
}

/* APFL's work buffers (zero-filled; none is carried between rounds: w,
 * v_i and α_i live in the state). */
typedef struct {
    pflref_work list; /* the allocations (ref/engine/work.h)                */
    double *w_local;  /* P: w_i, the participant's copy of w                */
    double *w_old;    /* P: w_i before the step                             */
    double *v_old;    /* P: v_i before the step                             */
    double *g;        /* P: ∇f_i(w_i; ξ)                                    */
    double *G;        /* P: the mixture's v-side gradient (∇f_i(v̄; ξ))     */
    double *H;        /* P: the mixture's w-side gradient (FedTorch's rule) */
    double *vbar;     /* P: v̄ = α_i v_i + (1 − α_i) w_i, a step's mixture,
                         then the client's v_bar note                      */
    double *Zv;       /* k·n_max, output mixing only: z(v_i; x) on a batch  */
    double *Zw;       /* k·n_max, likewise: z(w_i; x)                       */
    double *E;        /* k·n_max, likewise: ŷ, then ∂ℓ/∂ŷ                   */
} apfl_work;

/* The shapes the proofs start from (proofs/README.md), defined in
 * proofs/acsl/apfl.h (ACSL only): α_i's N doubles (apfl_alpha_shape), the
 * workspace's seven P-entry buffers (apfl_work_shape), both apart from the
 * state's arrays, and what a client's steps need of them (apfl_steps). */
#include "../../proofs/acsl/apfl.h"

/* Output mixing keeps z(v), z(w_i) and ∂ℓ/∂ŷ of one batch: k × the largest
 * data set each (the check refuses longer batches); none otherwise. */
static void *apfl_work_alloc(const pflref_problem *problem,
                             const pflref_hyper *hyper)
{
    const size_t P = problem->model.P, k = problem->model.k;
    const size_t n_max = pflref_problem_max_n(problem);
    apfl_work *ws = calloc(1, sizeof *ws);
    if (ws == NULL)
        return NULL;
    ws->w_local = pflref_work_doubles(&ws->list, P, 1);
    ws->w_old = pflref_work_doubles(&ws->list, P, 1);
    ws->v_old = pflref_work_doubles(&ws->list, P, 1);
    ws->g = pflref_work_doubles(&ws->list, P, 1);
    ws->G = pflref_work_doubles(&ws->list, P, 1);
    ws->H = pflref_work_doubles(&ws->list, P, 1);
    ws->vbar = pflref_work_doubles(&ws->list, P, 1);
    if (output_mix(hyper) && problem->model.kind != PFLREF_MODEL_QUADRATIC) {
        ws->Zv = pflref_work_doubles(&ws->list, k, n_max);
        ws->Zw = pflref_work_doubles(&ws->list, k, n_max);
        ws->E = pflref_work_doubles(&ws->list, k, n_max);
    }
    return pflref_work_ready(ws);
}

/* α_i ← α (the hyperparameter) for every client. */
static pflref_status apfl_init(pflref_state *s, pflref_error *err)
{
    (void)err;
    const double alpha = s->hyper->apfl.alpha;
    /* req: apfl.alg1.l1 */
    for (size_t i = 0; i < s->N; i++)
        s->alpha[i] = alpha;
    return PFLREF_OK;
}

/* Π_[0,1](x) for a finite x (its callers test it first).  Proved
 * (proofs/README.md): x when it lies in [0, 1], else the nearer end. */
/*@ assigns \nothing;
    ensures projected01(x, \result); */
static double clip01(double x)
{
    return x < 0.0 ? 0.0 : (x > 1.0 ? 1.0 : x);
}

/* Failure of a model function inside a step, with its place. */
static pflref_status step_failed(pflref_error *err, pflref_status st,
                                 long t, size_t i, size_t q, size_t nb)
{
    return pflref_error_set(err, st, "schedule",
                            "gradient failed at round %ld, client %zu, step "
                            "%zu (batch of %zu samples)",
                            t, i, q + 1, nb);
}

/* The mixture's gradients on batch q of b, with a = α_i, v = v_i (old) and
 * wm = the w_i the mixture takes, into ws->G (and ws->H when want_H):
 *   parameter:  G := ∇f_i(v̄; ξ), v̄ = a v + (1 − a) wm;
 *               *dalpha := ⟨v − wm, G⟩;  H := G
 *   output:     E_x := ∂ℓ/∂ŷ at ŷ = a z(v; x) + (1 − a) z(wm; x),
 *               G := (1/|ξ|) Σ_x J_v(x)ᵀ E_x,
 *               *dalpha := (1/|ξ|) Σ_x ⟨z(v; x) − z(wm; x), E_x⟩,
 *               H := (1/|ξ|) Σ_x J_wm(x)ᵀ E_x
 * so ∇_v = a G, ∇_wm = (1 − a) H and ∂/∂α = *dalpha of the mixture's loss.
 * Uses ws->vbar (parameter) or ws->Zv, Zw, E (output) as work.  Its frame
 * is an assumption of the proof of apfl_step (proofs/README.md): it writes
 * vbar, G, H, *dalpha and *err (and the output caches Zv, Zw, E and the
 * model workspace's temporaries, which no proof here reads). */
/*@ assigns ws->vbar[0 .. s->P - 1], ws->G[0 .. s->P - 1],
            ws->H[0 .. s->P - 1], *dalpha, *err;
 */
static pflref_status mixture_grad(pflref_state *s, size_t i,
                                  const pflref_batches *b, size_t q,
                                  double a, const double *v,
                                  const double *wm, apfl_work *ws,
                                  int want_H, double *dalpha,
                                  pflref_error *err)
{
    const pflref_model *m = &s->problem->model;
    const pflref_data *D = &s->problem->clients[i].train;
    const size_t P = s->P;
    const long t = (long)s->t;
    double *G = ws->G, *H = want_H ? ws->H : NULL;
    if (!output_mix(s->hyper)) {
        double *vbar = ws->vbar;
        /* req: apfl.alg1.l4 */
        for (size_t p = 0; p < P; p++)  /* v̄ = α v + (1 − α) w */
            vbar[p] = a * v[p] + (1.0 - a) * wm[p];
        pflref_status st = pflref_batch_grad(m, vbar, D, b, q, s->ws, G, t,
                                             (long)i, err);
        if (st != PFLREF_OK)
            return st;
        double dot = 0.0;               /* ⟨v − w, ∇f(v̄)⟩ */
        for (size_t p = 0; p < P; p++)
            dot += (v[p] - wm[p]) * G[p];
        *dalpha = dot;
        if (H != NULL)
            memcpy(H, G, P * sizeof *H);
        return PFLREF_OK;
    }

    const size_t nb = b->step_off[q + 1] - b->step_off[q];
    const size_t *idx = b->idx + b->step_off[q];
    const size_t len = nb * m->k;
    double *Zv = ws->Zv, *Zw = ws->Zw, *E = ws->E;
    pflref_status st = pflref_model_outputs(m, v, D, idx, nb, s->ws, Zv);
    if (st == PFLREF_OK)
        st = pflref_model_outputs(m, wm, D, idx, nb, s->ws, Zw);
    if (st != PFLREF_OK)
        return step_failed(err, st, t, i, q, nb);
    for (size_t r = 0; r < len; r++)    /* ŷ = α z(v) + (1 − α) z(w) */
        E[r] = a * Zv[r] + (1.0 - a) * Zw[r];
    st = pflref_model_output_grad(m, E, D, idx, nb, s->ws, E, NULL);
    if (st == PFLREF_OK)                /* G := (1/|ξ|) Σ J_v(x)ᵀ E_x */
        st = pflref_model_grad_from_output(m, v, D, idx, nb, E, s->ws, G);
    if (st == PFLREF_OK && H != NULL)   /* H := (1/|ξ|) Σ J_w(x)ᵀ E_x */
        st = pflref_model_grad_from_output(m, wm, D, idx, nb, E, s->ws, H);
    if (st != PFLREF_OK)
        return step_failed(err, st, t, i, q, nb);
    double dot = 0.0;                   /* Σ_x ⟨z(v; x) − z(w; x), E_x⟩ */
    for (size_t r = 0; r < len; r++)
        dot += (Zv[r] - Zw[r]) * E[r];
    *dalpha = dot / (double)nb;
    return PFLREF_OK;
}

/* The α step of client i after step q (apfl.alpha = adaptive), with
 * a = α_i before the step, dalpha = ∂f_i(v̄)/∂α from mixture_grad, and
 * (FedTorch's rule) the new v_i, w_i and the mixture's ws->G, ws->H.
 * Proved call site (proofs/README.md): v_i is client i's block of s->v,
 * and α_i the entry i < N of s->alpha it writes. */
/*@ requires apfl_steps(s, ws) && i < s->N;
    assigns s->alpha[i], *err;
 */
static pflref_status alpha_step(pflref_state *s, size_t i, size_t q,
                                double a, double dalpha, const apfl_work *ws,
                                const pflref_trace *trace, pflref_error *err)
{
    const pflref_apfl_hyper *hp = &s->hyper->apfl;
    const double eta = s->hyper->eta;
    const int fedtorch = hp->alpha_rule == PFLREF_APFL_RULE_FEDTORCH;
    const size_t P = s->P;
    const long t = (long)s->t;
    const double *v = pflref_row(s->v, i, s->N, P), *w_local = ws->w_local;
    const double *G = ws->G, *H = ws->H;

    /* FedTorch's rule moves α at the first step of a round only */
    if (!fedtorch || q == 0) {
        double x;
        if (!fedtorch) {
            /* req: apfl.alg1.l7 */
            /* Alg. 1: α_i ← Π_[0,1](α_i − η_α ⟨v_i − w_i, ∇f_i(v̄; ξ)⟩) at
             * the old v_i and the mixture's w_i */
            const double eta_alpha = isnan(hp->eta_alpha) ? eta
                                                          : hp->eta_alpha;
            x = a - eta_alpha * dalpha;
        } else {
            /* FedTorch: Σ_p (v_i − w_i)_p (α g_v,p + (1 − α) g_w,p) + 0.02 α
             * at the new iterates, g_v = α G, g_w = (1 − α) H */
            double grad_alpha = 0.0;
            /*@ loop assigns p, grad_alpha; */
            for (size_t p = 0; p < P; p++)
                grad_alpha += (v[p] - w_local[p]) *
                              (a * (a * G[p]) +
                               (1.0 - a) * ((1.0 - a) * H[p]));
            grad_alpha += PFLREF_APFL_FEDTORCH_ALPHA_DECAY * a;
            x = a - eta * grad_alpha;
        }
        if (!isfinite(x))
            return pflref_error_diverge(err, t, (long)i, (long)(q + 1),
                                        "alpha");
        s->alpha[i] = clip01(x);
    }
    pflref_trace_emit(trace, PFLREF_EV_NOTE, "train", t, (long)i,
                      (long)(q + 1), "alpha", s->alpha + i, 1,
                      ALPHA_LINE[fedtorch]);
    return PFLREF_OK;
}

/* v_i's step with its client optimizer (opt.*; ref/engine/optim.c): the
 * optimizer's rule on d = α_i G, written in d (P doubles, v̄'s spent
 * buffer).  Returns 1 when v stays finite.  Its frame is an assumption of
 * the proof of apfl_step (proofs/README.md): it writes d and v (and the
 * optimizer's state, which no proved code reads). */
/*@ assigns d[0 .. P - 1], v[0 .. P - 1]; */
static int v_optim_step(pflref_optim_state *opt, const pflref_model *m,
                        size_t P, double eta, double a, const double *G,
                        double *d, double *v)
{
    for (size_t p = 0; p < P; p++)
        d[p] = a * G[p];
    return pflref_optim_step(opt, m, NULL, eta, d, v);
}

/* One local step of client i on batch q of b (Alg. 1, one iteration of the
 * inner loop), with ws->w_local = w_i.  Proved call sites
 * (proofs/README.md): v_i is client i's block of s->v, the copies of w_i
 * and v_i get P valid entries apart from their sources, and α_i is the
 * entry i < N of s->alpha. */
/*@ requires apfl_steps(s, ws) && i < s->N;
    requires \separated(err, s, s->problem, ws);
    assigns ws->w_old[0 .. s->P - 1], ws->v_old[0 .. s->P - 1],
            ws->w_local[0 .. s->P - 1], ws->g[0 .. s->P - 1],
            ws->vbar[0 .. s->P - 1], ws->G[0 .. s->P - 1],
            ws->H[0 .. s->P - 1], s->v[0 .. s->N * s->P - 1], s->alpha[i],
            *err;
 */
static pflref_status apfl_step(pflref_state *s, size_t i,
                               const pflref_batches *b, size_t q,
                               apfl_work *ws, const pflref_trace *trace,
                               pflref_error *err)
{
    const pflref_apfl_hyper *hp = &s->hyper->apfl;
    const double eta = s->hyper->eta;
    const int adaptive = hp->alpha_mode == PFLREF_APFL_ALPHA_ADAPTIVE;
    const int fedtorch = adaptive &&
                         hp->alpha_rule == PFLREF_APFL_RULE_FEDTORCH;
    const int new_w = hp->mix_uses_w == PFLREF_APFL_MIX_W_NEW;
    const size_t P = s->P;
    const long t = (long)s->t;
    double *v = pflref_row(s->v, i, s->N, P), *w_local = ws->w_local;
    const double *G = ws->G;
    const double a = s->alpha[i];       /* α_i before the step   */
    pflref_copy(ws->w_old, w_local, P);
    pflref_copy(ws->v_old, v, P);

    /* req: apfl.alg1.l5 */
    /* Alg. 1: w_i ← w_i − η ∇f_i(w_i; ξ) */
    const pflref_local_sgd job = pflref_local_sgd_plain(s, i, b, eta,
                                                        "w_local", W_LINE);
    pflref_status st = pflref_local_sgd_step(&job, q, w_local, ws->g, s->ws,
                                             trace, err);
    if (st != PFLREF_OK)
        return st;

    /* The mixture with w_i before its step (paper) or after it (FedTorch). */
    const double *wm = new_w ? w_local : ws->w_old;
    double dalpha = 0.0;
    st = mixture_grad(s, i, b, q, a, ws->v_old, wm, ws, fedtorch && q == 0,
                      &dalpha, err);
    if (st != PFLREF_OK)
        return st;

    /* req: apfl.alg1.l6 */
    /* Alg. 1: v_i ← v_i − η α_i ∇f_i(v̄; ξ)   (output: G in place of ∇f) */
    pflref_optim_state *opt = pflref_optim_get(s, i, 1);
    if (opt != NULL) {
        /* v's optimizer (opt.*) on d = α_i ∇f_i(v̄; ξ), in v̄'s buffer
         * (spent: the α step reads v, w_i, G and H) */
        if (!v_optim_step(opt, &s->problem->model, P, eta, a, G, ws->vbar,
                          v))
            return pflref_error_diverge(err, t, (long)i, (long)(q + 1), "v");
    } else {
        /*@ loop assigns p, v[0 .. P - 1]; */
        for (size_t p = 0; p < P; p++)
            v[p] -= eta * (a * G[p]);
        if (!pflref_all_finite(v, P))
            return pflref_error_diverge(err, t, (long)i, (long)(q + 1),
                                        "v");
    }
    pflref_trace_emit(trace, PFLREF_EV_STEP, "train", t, (long)i,
                      (long)(q + 1), "v", v, P,
                      V_LINE[output_mix(s->hyper)][new_w]);
    return adaptive ? alpha_step(s, i, q, a, dalpha, ws, trace, err)
                    : PFLREF_OK;
}

/* One local step of client i on batch q of b as PFLlib runs it
 * (apfl.variant = pfllib; clientapfl.py train() and alpha_update), with
 * ws->w_local = w_i; ws->g, ws->G receive g_w, g_v.  Proved call sites
 * (proofs/README.md): v_i is client i's block of s->v, each local SGD step
 * writes P entries (the problem's model), and α_i is the entry i < N of
 * s->alpha. */
/*@ requires apfl_steps(s, ws) && i < s->N;
    requires \separated(err, s, s->problem, ws);
    assigns ws->w_local[0 .. s->P - 1], ws->g[0 .. s->P - 1],
            ws->G[0 .. s->P - 1], s->v[0 .. s->N * s->P - 1], s->alpha[i],
            *err;
 */
static pflref_status pfllib_step(pflref_state *s, size_t i,
                                 const pflref_batches *b, size_t q,
                                 apfl_work *ws, const pflref_trace *trace,
                                 pflref_error *err)
{
    const pflref_apfl_hyper *hp = &s->hyper->apfl;
    const double eta = s->hyper->eta;
    const size_t P = s->P;
    double *v = pflref_row(s->v, i, s->N, P), *w_local = ws->w_local;
    const double *g_w = ws->g, *g_v = ws->G;
    const double a = s->alpha[i];       /* α_i before the step   */
    /* (stated here, where WP's goal for the α event below is free of the
     * C library's isnan model, which its provers cannot read) */
    /*@ assert alpha_i: \valid_read(s->alpha + i); */

    /* w_i ← w_i − η ∇f_i(w_i; ξ)   (optimizer.step) */
    const pflref_local_sgd job_w = pflref_local_sgd_plain(s, i, b, eta,
                                                          "w_local", W_LINE);
    pflref_status st = pflref_local_sgd_step(&job_w, q, w_local, ws->g,
                                             s->ws, trace, err);
    /* v_i ← v_i − η ∇f_i(v_i; ξ)   (optimizer_per.step, v's own loss) */
    pflref_local_sgd job_v = pflref_local_sgd_plain(
        s, i, b, eta, "v", V_PFLLIB_LINE);
    job_v.opt = pflref_optim_get(s, i, 1);   /* optimizer_per */
    if (st == PFLREF_OK)
        st = pflref_local_sgd_step(&job_v, q, v, ws->G, s->ws, trace, err);
    if (st != PFLREF_OK || hp->alpha_mode != PFLREF_APFL_ALPHA_ADAPTIVE)
        return st;

    /* alpha_update: Σ_p (v_i − w_i)_p (α g_v,p + (1 − α) g_w,p) + 0.02 α,
     * at the new v_i, w_i; g_w, g_v taken before the steps, as .grad:
     * clipped in place under opt.clip = norm (docs/algorithms/apfl.md) */
    const double eta_alpha = isnan(hp->eta_alpha) ? eta : hp->eta_alpha;
    double grad_alpha = 0.0;
    /*@ loop assigns p, grad_alpha; */
    for (size_t p = 0; p < P; p++)
        grad_alpha += (v[p] - w_local[p]) * (a * g_v[p] + (1.0 - a) * g_w[p]);
    grad_alpha += PFLREF_APFL_FEDTORCH_ALPHA_DECAY * a;
    const double x = a - eta_alpha * grad_alpha;
    if (!isfinite(x))
        return pflref_error_diverge(err, (long)s->t, (long)i, (long)(q + 1),
                                    "alpha");
    s->alpha[i] = clip01(x);
    pflref_trace_emit(trace, PFLREF_EV_NOTE, "train", (long)s->t, (long)i,
                      (long)(q + 1), "alpha", s->alpha + i, 1,
                      ALPHA_PFLLIB_LINE);
    return PFLREF_OK;
}

/* The end of client i's local work: PFLlib overwrites v_i by the mixture
 * (v_i ← (1 − α_i) w_i + α_i v_i); the paper notes v̄_i and keeps v_i.
 * Proved call site (proofs/README.md): v_i is client i's block of s->v. */
/*@ requires apfl_steps(s, ws) && i < s->N;
    assigns s->v[0 .. s->N * s->P - 1], ws->vbar[0 .. s->P - 1];
 */
static void client_finish(pflref_state *s, size_t i, apfl_work *ws,
                          const pflref_trace *trace)
{
    const size_t P = s->P;
    const long t = (long)s->t;
    const double a = s->alpha[i];
    double *v = pflref_row(s->v, i, s->N, P), *w_local = ws->w_local;
    double *vbar = ws->vbar;
    /* PFLlib clientapfl.py, end of train(): v_i ← (1 − α_i) w_i + α_i v_i
     * (the client's end event of v records it) */
    if (pfllib(s->hyper))
        /*@ loop assigns p, v[0 .. P - 1]; */
        for (size_t p = 0; p < P; p++)
            v[p] = (1.0 - a) * w_local[p] + a * v[p];
    pflref_client_end(s, i, "w_local", w_local, trace);
    pflref_client_end(s, i, "v", v, trace);
    if (pfllib(s->hyper))
        return;
    /*@ loop assigns p, vbar[0 .. P - 1]; */
    for (size_t p = 0; p < P; p++)  /* v̄_i = α_i v_i + (1 − α_i) w_i */
        vbar[p] = a * v[p] + (1.0 - a) * w_local[p];
    pflref_trace_emit(trace, PFLREF_EV_NOTE, "train", t, (long)i, -1,
                      "v_bar", vbar, P, VBAR_LINE);
}

/* Client i's step sizes of its train() (lr.count): pflref_client_lr, which
 * writes only the round's step sizes s->hyper_round, so what the steps need
 * of the state and of the workspace ws stays true (proved; ws is named for
 * that contract only: the provers could not see it through that write
 * inside the round). */
/*@ requires apfl_steps(s, ws);
    assigns s->hyper_round;
    ensures apfl_steps(s, ws);
 */
static void client_rates(pflref_state *s, const apfl_work *ws, size_t i)
{
    (void)ws;
    pflref_client_lr(s, i, 0, 1);
}

/* Client i's local steps on the batches of b (Alg. 1, the inner loop),
 * one per scheduled batch, as the paper or PFLlib runs them.  Proved call
 * sites (proofs/README.md): each step's preconditions hold for i < N. */
/*@ requires apfl_steps(s, ws) && i < s->N;
    requires \separated(err, s, s->problem, ws);
    assigns ws->w_local[0 .. s->P - 1], ws->w_old[0 .. s->P - 1],
            ws->v_old[0 .. s->P - 1], ws->g[0 .. s->P - 1],
            ws->G[0 .. s->P - 1], ws->H[0 .. s->P - 1],
            ws->vbar[0 .. s->P - 1], s->v[0 .. s->N * s->P - 1], s->alpha[i],
            *err;
 */
static pflref_status client_steps(pflref_state *s, size_t i,
                                  const pflref_batches *b, apfl_work *ws,
                                  const pflref_trace *trace,
                                  pflref_error *err)
{
    const int lib = pfllib(s->hyper);
    /*@ loop assigns q, ws->w_local[0 .. s->P - 1], ws->w_old[0 .. s->P - 1],
                     ws->v_old[0 .. s->P - 1], ws->g[0 .. s->P - 1],
                     ws->G[0 .. s->P - 1], ws->H[0 .. s->P - 1],
                     ws->vbar[0 .. s->P - 1], s->v[0 .. s->N * s->P - 1],
                     s->alpha[i], *err;
     */
    for (size_t q = 0; q < b->nsteps; q++) {
        pflref_status st = lib ? pfllib_step(s, i, b, q, ws, trace, err)
                               : apfl_step(s, i, b, q, ws, trace, err);
        if (st != PFLREF_OK)
            return st;
    }
    return PFLREF_OK;
}

/* One round with the workspace ws = s->extra.  Proved call sites
 * (proofs/README.md): from the run state's shapes (α_i among them), the
 * validated plan and the workspace's shape, each participant's v_i is its
 * block of s->v, its α_i an entry of s->alpha, and its accumulation into
 * s->accum gets P valid entries apart from w_i. */
/*@ requires state_global(s) && state_personal(s) && state_model(s);
    requires apfl_alpha_shape(s);
    requires round_plan(plan, s->N);
    requires apfl_work_shape(ws, s);
    requires \separated(err, s, s->problem, ws, plan,
                        plan->clients + (0 .. plan->m - 1));
    requires \separated(plan->clients + (0 .. plan->m - 1), s);
    assigns ws->w_local[0 .. s->P - 1], ws->w_old[0 .. s->P - 1],
            ws->v_old[0 .. s->P - 1], ws->g[0 .. s->P - 1],
            ws->G[0 .. s->P - 1], ws->H[0 .. s->P - 1],
            ws->vbar[0 .. s->P - 1], s->v[0 .. s->N * s->P - 1],
            s->alpha[0 .. s->N - 1], s->accum[0 .. s->P - 1],
            s->w[0 .. s->P - 1], s->hyper_round, *err;
 */
static pflref_status apfl_round_with(pflref_state *s, apfl_work *ws,
                                     const pflref_round_plan *plan,
                                     const pflref_trace *trace,
                                     pflref_error *err)
{
    const size_t P = s->P, N = s->N, m = plan->m;
    const size_t *const clients = plan->clients;
    double *const w_local = ws->w_local, *const acc = s->accum;
    double *const v = s->v;
    const int samples = s->hyper->apfl.weights == PFLREF_APFL_WEIGHTS_SAMPLES;
    /* Σ_{j∈U} n_j (apfl.weights = samples) */
    const double n_U = pflref_train_n(s->problem, clients, m);

    /* req: apfl.alg1.l2 */
    pflref_round_begin(s, NULL, trace);
    /* req: apfl.alg1.l3 */
    /*@ loop invariant apfl_steps(s, ws);
        loop assigns j, ws->w_local[0 .. P - 1], ws->w_old[0 .. P - 1],
                     ws->v_old[0 .. P - 1], ws->g[0 .. P - 1],
                     ws->G[0 .. P - 1], ws->H[0 .. P - 1],
                     ws->vbar[0 .. P - 1], v[0 .. N * P - 1],
                     s->alpha[0 .. N - 1], acc[0 .. P - 1], s->hyper_round,
                     *err;
     */
    for (size_t j = 0; j < m; j++) {
        const size_t i = clients[j];
        const pflref_batches *b = &plan->batches[j];
        /* req: apfl.alg1.l10 */
        /* w_i ← w; v_i carries over */
        pflref_client_begin(s, i, "w_local", w_local, s->w, trace);
        pflref_client_begin(s, i, "v", pflref_row(v, i, N, P), NULL, trace);
        /* req: apfl.alg1.l8 */
        client_rates(s, ws, i);  /* η of i's train() (lr.count) */
        pflref_optim_begin(s, i); /* its two optimizers (opt.state) */
        pflref_status st = client_steps(s, i, b, ws, trace, err);
        if (st != PFLREF_OK)
            return st;
        client_finish(s, i, ws, trace);
        /* req: apfl.alg1.l9 */
        /* 1/|U| (paper) or n_i / Σ_{j∈U} n_j (PFLlib) */
        const double n_i = (double)s->problem->clients[i].train.n;
        pflref_accumulate(acc, samples ? n_i / n_U : 1.0 / (double)m,
                          w_local, P);
    }
    /* w ← Σ_{i∈U} c_i w_i */
    return pflref_round_end(s, SERVER_LINE[samples], trace, err);
}

/* The round of apfl.variant = pfllib under bn.aggregate = parameters_only
 * on a model with batch normalisation, PFLlib's reading (TsingZ0/PFLlib
 * d832e76f6a23 system/flcore; ref/engine/bn_own.c), B the buffer entries
 * (r_μ, r_v):
 *   w_i ← (w on ¬B, r_i on B)   set_parameters (clientbase.py:67-69)
 *                               copies parameters() into self.model, whose
 *                               buffers its last train() left (w⁰'s first)
 *   the steps                   client_steps (pfllib_step), unchanged: each
 *                               model's own pass moves its own buffers
 *   v_i ← (1 − α_i) w_i + α_i v_i on ¬B only (clientapfl.py:58-59 loops
 *                               over parameters()); v_i's B stay its own
 *   r_i ← w_i's B
 *   w on ¬B ← Σ_U c_i w_i; w on B ← r_{i₁}, i₁ the first participant
 *                               (deepcopy(uploaded_models[0]),
 *                               serverbase.py:138-150)
 * The check refuses it under apfl.variant = paper. */
static pflref_status apfl_round_keep(pflref_state *s, apfl_work *ws,
                                     const pflref_round_plan *plan,
                                     const pflref_trace *trace,
                                     pflref_error *err)
{
    const pflref_model *md = &s->problem->model;
    const size_t P = s->P, N = s->N, m = plan->m;
    double *const w_local = ws->w_local;
    const int samples = s->hyper->apfl.weights == PFLREF_APFL_WEIGHTS_SAMPLES;
    const double n_U = pflref_train_n(s->problem, plan->clients, m);
    pflref_status st = pflref_bn_own_alloc(s, err);
    if (st != PFLREF_OK)
        return st;
    pflref_round_begin(s, NULL, trace);
    for (size_t j = 0; j < m; j++) {
        const size_t i = plan->clients[j];
        double *v = pflref_row(s->v, i, N, P);
        double *r_i = pflref_bn_own_row(s, i);
        memcpy(w_local, s->w, P * sizeof *w_local);
        pflref_bn_copy_buffers(md, w_local, r_i);
        pflref_client_begin(s, i, "w_local", w_local, NULL, trace);
        pflref_client_begin(s, i, "v", v, NULL, trace);
        client_rates(s, ws, i);
        pflref_optim_begin(s, i);
        st = client_steps(s, i, &plan->batches[j], ws, trace, err);
        if (st != PFLREF_OK)
            return st;
        /* v_i ← (1 − α_i) w_i + α_i v_i on parameters() (ws->vbar keeps
         * v_i's own buffers across the mixture) */
        const double a = s->alpha[i];
        pflref_copy(ws->vbar, v, P);
        for (size_t q = 0; q < P; q++)
            v[q] = a * v[q] + (1.0 - a) * w_local[q];
        pflref_bn_copy_buffers(md, v, ws->vbar);
        pflref_client_end(s, i, "w_local", w_local, trace);
        pflref_client_end(s, i, "v", v, trace);
        pflref_bn_copy_buffers(md, r_i, w_local);   /* self.model's */
        const double n_i = (double)s->problem->clients[i].train.n;
        pflref_accumulate(s->accum, samples ? n_i / n_U : 1.0 / (double)m,
                          w_local, P);
    }
    if (m > 0)   /* the global's r_μ, r_v: the first participant's */
        pflref_bn_copy_buffers(md, s->accum,
                               pflref_bn_own_row(s, pflref_bn_first_upload(
                                                         plan, plan->clients[0])));
    return pflref_round_end(s, SERVER_LINE[samples], trace, err);
}

static pflref_status apfl_round(pflref_state *s, const pflref_round_plan *plan,
                                const pflref_trace *trace, pflref_error *err)
{
    if (pflref_bn_keeps_own(s))   /* bn.aggregate = parameters_only */
        return apfl_round_keep(s, s->extra, plan, trace, err);
    return apfl_round_with(s, s->extra, plan, trace, err);
}

const pflref_algorithm pflref_apfl = {
    .name = "apfl",
    .title = "APFL (Deng, Kamani, Mahdavi 2020, Alg. 1)",
    .has_global = 1,
    .has_personal = 1,
    .personal_name = "v",
    .has_alpha = 1,
    .output_mix = output_mix,
    .n_eval = 3,
    .eval = {{"global", PFLREF_SOURCE_GLOBAL},
             {"local", PFLREF_SOURCE_PERSONAL},
             /* req: apfl.alg1.l11, apfl.eq4 */
             {"personalized", PFLREF_SOURCE_MIX}},
    .check = pflref_apfl_check,   /* ref/algorithms/apfl_check.c */
    .work_alloc = apfl_work_alloc,
    .work_free = pflref_work_free,
    .init = apfl_init,
    .round = apfl_round,
    .load_state = pflref_bn_own_load,   /* bn.aggregate's r_i */
    .opt_slots = 2,   /* 0: w_i's optimizer; 1: v_i's (PFLlib
                         clientapfl.py: optimizer, optimizer_per) */
};
