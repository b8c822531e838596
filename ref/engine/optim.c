/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/engine/optim.c: the client optimizers, one step rule for every
 * algorithm whose clients take local steps through the shared solver
 * (ref/engine/sgd.c), and the lifetime of their state.
 *
 * The papers step with plain SGD, θ ← θ − η d (opt.method = sgd, the
 * default, with μ = 0, λ = 0 and no clipping: the solver then never calls
 * this file, so the default arithmetic is the papers' bit for bit).  Real
 * code steps with torch's optimizers; each rule below is the documented
 * update of the torch class named, in the order torch's single-tensor
 * implementation computes it (torch/optim/sgd.py _single_tensor_sgd,
 * torch/optim/adam.py _single_tensor_adam, torch/optim/adamw.py):
 *
 *   clipping (opt.clip = norm; torch.nn.utils.clip_grad_norm_ called
 *   between loss.backward() and optimizer.step(), so on the loss gradient,
 *   proximal term included, before weight decay):
 *       ‖d‖ = √(Σ_B ‖d_B‖₂²) over the moving blocks B (the norm of the
 *       per-tensor norms, as clip_grad_norm_ stacks them)
 *       d ← d · c/(‖d‖ + 10⁻⁶)          when c/(‖d‖ + 10⁻⁶) < 1
 *   weight decay, λ_B = λ on the blocks opt.decay_scope takes, else 0:
 *       coupled   (torch SGD, Adam: grad.add(param, alpha=λ))  d ← d + λ_B θ
 *       decoupled (torch AdamW: param.mul_(1 − lr·λ))  θ ← θ(1 − η λ_B)
 *   sgd (torch.optim.SGD; μ momentum, τ dampening):
 *       μ = 0:     θ ← θ − η d
 *       pytorch:   b ← d at the block's first step, else b ← μ b + (1 − τ) d
 *                  d ← d + μ b (nesterov) or d ← b;   θ ← θ − η d
 *       classical: v ← μ v − η d;  θ ← θ + v   (Polyak 1964; Sutskever,
 *                  Martens, Dahl, Hinton, ICML 2013, eq. 1-2: η inside the
 *                  velocity, so a change of η (lr.schedule) reaches only
 *                  the new step, where torch's form rescales the whole
 *                  buffer)
 *   adam, adamw (torch.optim.Adam / AdamW; Kingma & Ba, ICLR 2015, Alg. 1;
 *   Loshchilov & Hutter, ICLR 2019, Alg. 2 in torch's form lr·λ):
 *       t ← t + 1
 *       m ← β₁ m + (1 − β₁) d;   v ← β₂ v + (1 − β₂) d d
 *       step_size = η / (1 − β₁^t);   denom = √v / √(1 − β₂^t) + ε
 *       θ ← θ − step_size · m / denom
 *   (torch computes m by lerp, m + (1 − β₁)(d − m), and the documented
 *   β₁ m + (1 − β₁) d here: the two differ in the last bits only, which the
 *   golden tolerances absorb: golden/optim/README rows.)
 *
 * Symbols: d ↔ d (the job's gradient buffer g)   θ ↔ theta   η ↔ eta
 *          μ ↔ rule->momentum   τ ↔ rule->dampening   λ ↔ rule->weight_decay
 *          β₁, β₂, ε ↔ rule->beta1, beta2, eps   c ↔ rule->clip_norm
 *          b (m), v ↔ st->b, st->v   t ↔ st->t[B] (per block)
 *
 * State (opt.state): torch keeps b, m, v and t per parameter tensor in
 * optimizer.state, so they live as long as the optimizer object: `reset`
 * (a new optimizer in every client update, as most FL code builds it in
 * train()), `client` (one per client kept across rounds: PFLlib's
 * clientbase.py builds self.optimizer once in __init__), `server` (one
 * object reused for every client, in training order: a simulation
 * defect).  t counts per block: a block that a masked job does not move
 * (FedAlt's u during the v steps) keeps its count, as torch skips a
 * parameter whose grad is None.  Buffers (BatchNorm's r_μ, r_v) are not
 * parameters and never step.
 *
 * Determinism: one pass per block in index order; the clip norm sums the
 * blocks in order.  Cost per step: O(moving entries).
 */
#include <math.h>
#include <float.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engine/optim.h"

int pflref_optim_is_plain(const pflref_opt_hyper *rule)
{
    return rule->method == PFLREF_OPT_SGD && rule->momentum == 0.0 &&
           rule->weight_decay == 0.0 && rule->clip == PFLREF_OPT_CLIP_OFF;
}

int pflref_optim_has_state(const pflref_opt_hyper *rule)
{
    return rule->method != PFLREF_OPT_SGD || rule->momentum != 0.0;
}

/* ---- the checks --------------------------------------------------------- */

/* The registry entry of key (an opt.* name). */
static const pflref_param *opt_param(const char *key)
{
    return pflref_param_find(key);
}

/* Refusal at key's path: "algorithm.<group>.<key>". */
static pflref_status opt_refuse(pflref_error *err, const char *key,
                                const char *message)
{
    const pflref_param *p = opt_param(key);
    char where[PFLREF_WHERE_MAX];
    snprintf(where, sizeof where, "algorithm.%s.%s",
             p != NULL && p->type == PFLREF_PARAM_ENUM ? "switches"
                                                       : "hyperparameters",
             key);
    return pflref_error_set(err, PFLREF_EINVAL, where, "%s", message);
}

/* An algorithm without a client optimizer: every opt.* at its default,
 * else the first that differs is refused with the reason. */
static pflref_status check_defaults(const pflref_algorithm *alg,
                                    const pflref_hyper *h, pflref_error *err)
{
    pflref_hyper def;
    pflref_hyper_defaults(&def);
    size_t count;
    const pflref_param *ps = pflref_params(&count);
    for (size_t i = 0; i < count; i++) {
        const pflref_param *p = &ps[i];
        if (strncmp(p->name, "opt.", 4) != 0)
            continue;
        char value[64];
        int differs;
        if (p->type == PFLREF_PARAM_ENUM) {
            int a, b;
            memcpy(&a, (const char *)h + p->offset, sizeof a);
            memcpy(&b, (const char *)&def + p->offset, sizeof b);
            differs = a != b;
            size_t n = 0;
            while (p->values[n] != NULL)
                n++;
            snprintf(value, sizeof value, "%s",
                     a >= 0 && (size_t)a < n ? p->values[a] : "?");
        } else {
            const double a = pflref_hyper_get_real(h, p);
            const double b = pflref_hyper_get_real(&def, p);
            differs = !(a == b || (isnan(a) && isnan(b)));
            snprintf(value, sizeof value, "%.17g", a);
        }
        if (!differs)
            continue;
        char where[PFLREF_WHERE_MAX];
        snprintf(where, sizeof where, "algorithm.%s.%s",
                 p->type == PFLREF_PARAM_ENUM ? "switches"
                                              : "hyperparameters",
                 p->name);
        return pflref_error_set(
            err, PFLREF_EINVAL, where,
            "%s = %s: %s; the client optimizer (opt.*) applies to the "
            "algorithms whose clients step through the shared local solver",
            p->name, value,
            alg->opt_refusal != NULL ? alg->opt_refusal
                                     : "this algorithm takes no client "
                                       "optimizer");
    }
    return PFLREF_OK;
}

pflref_status pflref_optim_check(const pflref_algorithm *alg,
                                 const pflref_hyper *h, pflref_error *err)
{
    if (alg->opt_slots == 0)
        return check_defaults(alg, h, err);
    const pflref_opt_hyper *o = &h->opt;
    const int sgd = o->method == PFLREF_OPT_SGD;
    char msg[256];
    if (!(o->beta1 < 1.0)) {
        snprintf(msg, sizeof msg, "opt.beta1 = %.17g must be < 1 (β₁ ∈ "
                 "[0, 1))", o->beta1);
        return opt_refuse(err, "opt.beta1", msg);
    }
    if (!(o->beta2 < 1.0)) {
        snprintf(msg, sizeof msg, "opt.beta2 = %.17g must be < 1 (β₂ ∈ "
                 "[0, 1))", o->beta2);
        return opt_refuse(err, "opt.beta2", msg);
    }
    if (o->clip == PFLREF_OPT_CLIP_NORM && isnan(o->clip_norm))
        return opt_refuse(err, "opt.clip",
                          "opt.clip = norm needs opt.clip_norm (c > 0, "
                          "clip_grad_norm_'s max_norm)");
    if (o->clip == PFLREF_OPT_CLIP_OFF && !isnan(o->clip_norm))
        return opt_refuse(err, "opt.clip_norm",
                          "opt.clip_norm is read only with opt.clip = norm");
    if (!sgd && (o->momentum != 0.0 || o->dampening != 0.0 ||
                 o->nesterov != PFLREF_OPT_NESTEROV_OFF ||
                 o->momentum_form != PFLREF_OPT_MOMENTUM_PYTORCH)) {
        const char *key = o->momentum != 0.0    ? "opt.momentum"
                          : o->dampening != 0.0 ? "opt.dampening"
                          : o->nesterov != 0    ? "opt.nesterov"
                                                : "opt.momentum_form";
        snprintf(msg, sizeof msg, "%s is SGD's (opt.method = sgd); %s's "
                 "moments are opt.beta1, opt.beta2", key,
                 o->method == PFLREF_OPT_ADAM ? "adam" : "adamw");
        return opt_refuse(err, key, msg);
    }
    if (o->nesterov == PFLREF_OPT_NESTEROV_ON &&
        (o->momentum <= 0.0 || o->dampening != 0.0))
        return opt_refuse(err, "opt.nesterov",
                          "opt.nesterov = on requires a momentum and zero "
                          "dampening (opt.momentum > 0, opt.dampening = 0; "
                          "torch.optim.SGD refuses it too)");
    if (o->nesterov == PFLREF_OPT_NESTEROV_ON &&
        o->momentum_form == PFLREF_OPT_MOMENTUM_CLASSICAL)
        return opt_refuse(err, "opt.nesterov",
                          "opt.nesterov = on is torch's form of Nesterov "
                          "momentum; it takes opt.momentum_form = pytorch");
    if (o->momentum_form == PFLREF_OPT_MOMENTUM_CLASSICAL &&
        o->dampening != 0.0)
        return opt_refuse(err, "opt.dampening",
                          "opt.dampening is torch's (momentum_form = "
                          "pytorch); the classical form v ← μ v − η d has "
                          "none");
    return PFLREF_OK;
}

/* ---- the states ----------------------------------------------------------- */

/* The doubles one state holds: b (SGD with μ > 0; Adam's m), v (Adam). */
static size_t doubles_per_state(const pflref_opt_hyper *rule, size_t P)
{
    if (rule->method != PFLREF_OPT_SGD)
        return 2 * P;
    return rule->momentum != 0.0 ? P : 0;
}

static size_t sets_of(const pflref_opt_hyper *rule, size_t N, size_t slots)
{
    return rule->state == PFLREF_OPT_STATE_CLIENT ? N * slots : slots;
}

size_t pflref_optim_bytes(const pflref_opt_hyper *rule, size_t N, size_t P,
                          size_t slots)
{
    if (slots == 0)
        return 0;
    if (rule->state == PFLREF_OPT_STATE_CLIENT && N > SIZE_MAX / slots)
        return SIZE_MAX;
    const size_t nsets = sets_of(rule, N, slots);
    const size_t per = doubles_per_state(rule, P);
    const size_t each = sizeof(pflref_optim_state) + per * sizeof(double);
    if (per > SIZE_MAX / 2 / sizeof(double) || nsets > SIZE_MAX / each)
        return SIZE_MAX;
    return nsets * each;
}

pflref_optim *pflref_optim_alloc(const pflref_opt_hyper *rule,
                                 const unsigned char *personal, size_t N,
                                 size_t P, size_t slots)
{
    if (slots == 0 || pflref_optim_bytes(rule, N, P, slots) == SIZE_MAX)
        return NULL;
    pflref_optim *o = calloc(1, sizeof *o);
    if (o == NULL)
        return NULL;
    const size_t per = doubles_per_state(rule, P);
    o->lifetime = rule->state;
    o->slots = slots;
    o->nsets = sets_of(rule, N, slots);
    o->P = P;
    o->bytes = pflref_optim_bytes(rule, N, P, slots);
    o->sets = calloc(o->nsets, sizeof *o->sets);
    o->buf = per != 0 ? calloc(o->nsets * per, sizeof *o->buf) : NULL;
    if (o->sets == NULL || (per != 0 && o->buf == NULL)) {
        pflref_optim_free(o);
        return NULL;
    }
    for (size_t k = 0; k < o->nsets; k++) {
        pflref_optim_state *st = &o->sets[k];
        st->rule = rule;
        st->personal = personal;
        st->b = per != 0 ? o->buf + k * per : NULL;
        st->v = per == 2 * P ? o->buf + k * per + P : NULL;
    }
    return o;
}

void pflref_optim_free(pflref_optim *o)
{
    if (o == NULL)
        return;
    free(o->buf);
    free(o->sets);
    free(o);
}

void pflref_optim_state_reset(pflref_optim_state *st, size_t P)
{
    if (st->b != NULL)
        memset(st->b, 0, P * sizeof *st->b);
    if (st->v != NULL)
        memset(st->v, 0, P * sizeof *st->v);
    memset(st->t, 0, sizeof st->t);
}

/* ---- the step --------------------------------------------------------------- */

/* 1 when block B is a bias: "b", "b1", "b2", ..., or a layer list's
 * NAME.bias (the model's bias blocks, include/pflref/model.h's layout;
 * docs/models.md). */
static int is_bias(const pflref_block *B)
{
    const char *n = B->name;
    if (n == NULL)
        return 0;
    const size_t len = strlen(n);
    if (len >= 5 && strcmp(n + len - 5, ".bias") == 0)
        return 1;   /* a layer list's NAME.bias (docs/models.md) */
    return n[0] == 'b' && (n[1] == '\0' || (n[1] >= '0' && n[1] <= '9'));
}

/* λ_B: the weight decay of block B under opt.decay_scope. */
static double block_decay(const pflref_optim_state *st, const pflref_block *B)
{
    const pflref_opt_hyper *o = st->rule;
    const int personal = st->personal != NULL && st->personal[B->offset];
    int takes;
    switch (o->decay_scope) {
    case PFLREF_OPT_SCOPE_WEIGHTS:
        takes = !is_bias(B) && !B->is_bn;   /* the no-decay group: biases,
                                               normalisation parameters */
        break;
    case PFLREF_OPT_SCOPE_SHARED:
        takes = !personal;
        break;
    case PFLREF_OPT_SCOPE_PERSONAL:
        takes = personal;
        break;
    default:
        takes = 1;
        break;
    }
    return takes ? o->weight_decay : 0.0;
}

/* 1 when block B moves in this step: marked in mask, not a buffer. */
static int moves(const pflref_block *B, const unsigned char *mask)
{
    return !B->is_buffer && (mask == NULL || mask[B->offset]);
}

/* opt.clip = norm: d ← d · c/(‖d‖ + 10⁻⁶) on the moving blocks when that
 * coefficient is < 1 (torch.nn.utils.clip_grad_norm_: total_norm = the
 * 2-norm of the per-tensor 2-norms; clip_coef = max_norm /
 * (total_norm + 1e-6), clamped at 1). */
static void clip_by_norm(const pflref_optim_state *st, const pflref_model *m,
                         const unsigned char *mask, double *d)
{
    double total = 0.0;
    for (size_t q = 0; q < m->nblocks; q++) {
        const pflref_block *B = &m->blocks[q];
        if (!moves(B, mask))
            continue;
        double sq = 0.0;
        for (size_t p = B->offset; p < B->offset + B->size; p++)
            sq += d[p] * d[p];
        const double norm_B = sqrt(sq);     /* ‖d_B‖₂ */
        total += norm_B * norm_B;
    }
    const double coef = st->rule->clip_norm / (sqrt(total) + PFLREF_OPT_CLIP_EPS);
    if (!(coef < 1.0))
        return;
    for (size_t q = 0; q < m->nblocks; q++) {
        const pflref_block *B = &m->blocks[q];
        if (moves(B, mask))
            for (size_t p = B->offset; p < B->offset + B->size; p++)
                d[p] *= coef;
    }
}

/* SGD on block B (its t-th step, t ≥ 1). */
static void sgd_block(pflref_optim_state *st, const pflref_block *B,
                      size_t t, double eta, double lambda, int decoupled,
                      const double *d, double *theta)
{
    const pflref_opt_hyper *o = st->rule;
    const double mu = o->momentum, tau = o->dampening;
    const int classical = o->momentum_form == PFLREF_OPT_MOMENTUM_CLASSICAL;
    const int nesterov = o->nesterov == PFLREF_OPT_NESTEROV_ON;
    for (size_t p = B->offset; p < B->offset + B->size; p++) {
        double dp = d[p];
        if (lambda != 0.0 && decoupled)
            theta[p] *= 1.0 - eta * lambda;     /* θ ← θ(1 − ηλ) */
        else if (lambda != 0.0)
            dp += lambda * theta[p];            /* d ← d + λθ */
        if (mu == 0.0) {
            theta[p] -= eta * dp;               /* θ ← θ − η d */
        } else if (classical) {
            st->b[p] = mu * st->b[p] - eta * dp;   /* v ← μ v − η d */
            theta[p] += st->b[p];                  /* θ ← θ + v */
        } else {
            /* b ← d (first step) | μ b + (1 − τ) d */
            st->b[p] = t == 1 ? dp : mu * st->b[p] + (1.0 - tau) * dp;
            dp = nesterov ? dp + mu * st->b[p]     /* d ← d + μ b */
                          : st->b[p];              /* d ← b */
            theta[p] -= eta * dp;                  /* θ ← θ − η d */
        }
    }
}

/* Adam / AdamW on block B (its t-th step, t ≥ 1). */
static void adam_block(pflref_optim_state *st, const pflref_block *B,
                       size_t t, double eta, double lambda, int decoupled,
                       const double *d, double *theta)
{
    const pflref_opt_hyper *o = st->rule;
    const double beta1 = o->beta1, beta2 = o->beta2;
    /* step_size = η/(1 − β₁^t);  √(1 − β₂^t) */
    const double bc1 = 1.0 - pow(beta1, (double)t);
    const double bc2 = 1.0 - pow(beta2, (double)t);
    const double step_size = eta / bc1, bc2_sqrt = sqrt(bc2);
    for (size_t p = B->offset; p < B->offset + B->size; p++) {
        double dp = d[p];
        if (lambda != 0.0 && decoupled)
            theta[p] *= 1.0 - eta * lambda;     /* θ ← θ(1 − ηλ) (AdamW) */
        else if (lambda != 0.0)
            dp += lambda * theta[p];            /* d ← d + λθ (Adam) */
        /* m ← β₁ m + (1 − β₁) d;  v ← β₂ v + (1 − β₂) d d */
        st->b[p] = beta1 * st->b[p] + (1.0 - beta1) * dp;
        st->v[p] = beta2 * st->v[p] + (1.0 - beta2) * dp * dp;
        /* θ ← θ − step_size · m / (√v / √(1 − β₂^t) + ε) */
        const double denom = sqrt(st->v[p]) / bc2_sqrt + o->eps;
        theta[p] -= step_size * (st->b[p] / denom);
    }
}

int pflref_optim_step(pflref_optim_state *st, const pflref_model *m,
                      const unsigned char *mask, double eta, double *d,
                      double *theta)
{
    return pflref_optim_step_groups(st, m, mask, eta, eta, d, theta);
}

int pflref_optim_step_groups(pflref_optim_state *st, const pflref_model *m,
                             const unsigned char *mask, double eta_u,
                             double eta_v, double *d, double *theta)
{
    const pflref_opt_hyper *o = st->rule;
    const int decoupled = o->method == PFLREF_OPT_ADAMW ||
                          o->decay_form == PFLREF_OPT_DECAY_DECOUPLED;
    if (o->clip == PFLREF_OPT_CLIP_NORM)
        clip_by_norm(st, m, mask, d);
    int finite = 1;
    for (size_t q = 0; q < m->nblocks; q++) {
        const pflref_block *B = &m->blocks[q];
        if (!moves(B, mask))
            continue;
        const size_t t = ++st->t[q];            /* the block's step count */
        const double lambda = block_decay(st, B);
        /* the block's group's step size: η_v on personal blocks */
        const double eta = st->personal != NULL && st->personal[B->offset]
                               ? eta_v : eta_u;
        if (o->method == PFLREF_OPT_SGD)
            sgd_block(st, B, t, eta, lambda, decoupled, d, theta);
        else
            adam_block(st, B, t, eta, lambda, decoupled, d, theta);
        for (size_t p = B->offset; p < B->offset + B->size; p++)
            finite &= fabs(theta[p]) <= DBL_MAX;
    }
    return finite;
}
