/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/engine/prox_inner.c: pFedMe's inner problem, the proximal step, as
 * the primitive that pFedMe (ref/algorithms/pfedme.c) and the algorithm
 * "prox" (ref/algorithms/prox.c) share.
 *
 *   C. T. Dinh, N. H. Tran, T. D. Nguyen, "Personalized Federated Learning
 *   with Moreau Envelopes", NeurIPS 2020, arXiv 2006.08848v3.
 *
 * The personalised model of eq. (3)/(7) is the proximal point
 *
 *     θ̂(w) = prox_{f/λ}(w) = argmin_θ { f(θ) + (λ/2)‖θ − w‖² }
 *
 * and Alg. 1 (line 7, with the experiments' solver, §5) approximates it on
 * one batch D by K gradient steps of h(θ) = f(θ; D) + (λ/2)‖θ − w‖²:
 *
 *     θ ← θ − η_p (∇f(θ; D) + λ(θ − w) [+ μθ])          k = 1..K
 *
 * The bracket is the official code's extra term (pfedme.mu = μ, paper 0).
 * With a client optimizer (opt.*, job->opt) the optimizer's step on that
 * d = ∇f(θ; D) + λ(θ − w) + μθ replaces the plain one (ref/engine/optim.c);
 * each gradient pass moves θ's batch-norm running statistics (job->bn,
 * pflref_bn_running_move), and no step touches them (buffers).
 *
 * pflref_prox_inner_run   the K steps (pflref_prox_inner_job: one client's
 *                         job on one batch of a round)
 * pflref_prox_point       the exact θ̂ when f is quadratic in θ, by
 *                         conjugate gradients with exact Hessian-vector
 *                         products; Method: h is quadratic with the
 *                         constant Hessian H + (λ + μ) I, so θ̂ = w + x with
 *                         (H + (λ + μ) I) x = −(∇f(w; D) + μ w).
 *                         Accuracy: CG is exact after at most P iterations
 *                         in exact arithmetic; here it stops at a relative
 *                         residual of PFLREF_PROX_CG_RTOL (or 2P iterations).
 *
 * Symbols:  θ ↔ theta (P)   w ↔ job->w (P)   λ ↔ lambda   η_p ↔ eta_p
 *           K ↔ K   μ ↔ mu   D ↔ idx[0..nb−1]
 * Cost: K gradients per call; θ̂ costs one gradient and at most 2P
 * Hessian-vector products.
 */
#include <math.h>
#include "engine/engine.h"

static const char *const INNER_LINE =
    "Alg. 1 l. 7: θ ← θ − η_p (∇f(θ; D) + λ(θ − w) + μθ)";

pflref_status pflref_prox_inner_run(const pflref_prox_inner *job,
                                    double *theta, double *g,
                                    pflref_model_workspace *ws,
                                    const pflref_trace *trace,
                                    pflref_error *err)
{
    const pflref_model *m = job->model;
    const size_t P = m->P;
    /* req: pfedme.alg1.l7, prox.alg1.l7, prox.window */
    for (size_t k = 1; k <= job->K; k++) {
        const long step = job->step0 + (long)k;
        pflref_status st = pflref_model_grad(m, theta, job->data, job->idx,
                                             job->nb, ws, g, NULL);
        if (st != PFLREF_OK)
            return pflref_error_set(err, st, "schedule",
                                    "gradient failed at round %ld, client "
                                    "%ld, step %ld (batch of %zu samples)",
                                    job->round, job->client, step, job->nb);
        /* θ's running statistics from this training pass (bn.running):
         * the K forwards of the model that pFedMeOptimizer steps */
        st = pflref_bn_running_move(job->bn, m, ws, theta, job->round,
                                    job->client, step, err);
        if (st != PFLREF_OK)
            return st;
        /* req: pfedme.eq7, prox.eq7 */
        /* d = ∇f(θ; D) + λ(θ − w) + μθ, the gradient of h, on the
         * parameters (r_μ, r_v are buffers: never stepped) */
        for (size_t q = 0; q < m->nblocks; q++) {
            const pflref_block *B = &m->blocks[q];
            if (B->is_buffer)
                continue;
            for (size_t p = B->offset; p < B->offset + B->size; p++) {
                double d = g[p] + job->lambda * (theta[p] - job->w[p]);
                if (job->mu != 0.0)
                    d += job->mu * theta[p];
                if (job->opt != NULL)
                    g[p] = d;
                else
                    theta[p] -= job->eta_p * d;   /* θ ← θ − η_p d */
            }
        }
        /* the inner solver's optimizer (opt.*) on d, step size η_p */
        const int finite =
            job->opt != NULL
                ? pflref_optim_step(job->opt, m, NULL, job->eta_p, g, theta)
                : pflref_all_finite(theta, P);
        if (!finite)
            return pflref_error_diverge(err, job->round, job->client, step,
                                        "theta");
        pflref_trace_emit(trace, PFLREF_EV_STEP, job->phase, job->round,
                          job->client, step, "theta", theta, P,
                          job->formula != NULL ? job->formula : INNER_LINE);
    }
    return PFLREF_OK;
}

pflref_prox_inner pflref_prox_inner_job(const pflref_state *s, size_t i,
                                        const pflref_batches *b, size_t q,
                                        const double *w)
{
    const pflref_hyper *h = s->hyper;
    const pflref_prox_inner job = {
        .model = &s->problem->model,
        .data = &s->problem->clients[i].train,
        .idx = b->idx + b->step_off[q],
        .nb = b->step_off[q + 1] - b->step_off[q],
        .w = w,
        .lambda = h->lambda,
        .eta_p = h->eta_p,
        .mu = h->pfedme.mu,
        .K = h->K,
        .phase = "train",
        .formula = NULL,
        .round = (long)s->t,
        .client = (long)i,
        .step0 = (long)(q * h->K),
        .opt = pflref_optim_get(s, i, 0),
        .bn = &h->bn,
    };
    return job;
}

pflref_status pflref_prox_opt_check(const pflref_hyper *hyper,
                                    const char *alg, pflref_error *err)
{
    const pflref_opt_hyper *o = &hyper->opt;
    if (o->weight_decay != 0.0 &&
        (o->decay_scope == PFLREF_OPT_SCOPE_SHARED ||
         o->decay_scope == PFLREF_OPT_SCOPE_PERSONAL))
        return pflref_error_set(err, PFLREF_EINVAL,
                                "algorithm.switches.opt.decay_scope",
                                "%s's inner solver steps θ, the whole "
                                "model, which has no split into shared and "
                                "personal blocks: opt.decay_scope = all or "
                                "weights", alg);
    return PFLREF_OK;
}

int pflref_prox_has_exact(const pflref_model *m)
{
    return m->kind == PFLREF_MODEL_QUADRATIC ||
           (m->kind == PFLREF_MODEL_LINEAR &&
            (m->loss == PFLREF_LOSS_SQUARED ||
             m->loss == PFLREF_LOSS_HALF_SQUARED));
}

static double dot(const double *x, const double *y, size_t n)
{
    double s = 0.0;
    for (size_t j = 0; j < n; j++)
        s += x[j] * y[j];
    return s;
}

/* req: pfedme.eq3, prox.eq3 */
pflref_status pflref_prox_point(const pflref_prox_inner *job,
                                double *theta_hat, double *work,
                                pflref_model_workspace *ws, pflref_error *err)
{
    /* Test the input parameters. */
    if (!pflref_prox_has_exact(job->model))
        return pflref_error_set(err, PFLREF_EINVAL, "model",
                                "the exact proximal point needs a loss "
                                "quadratic in the parameters (quadratic, or "
                                "linear with a squared loss)");
    const double shift = job->lambda + job->mu;   /* λ + μ */
    if (!(shift > 0.0))
        return pflref_error_set(err, PFLREF_EINVAL, "lambda",
                                "the proximal point needs λ + μ > 0");

    const size_t P = job->model->P;
    double *x = theta_hat, *r = work, *p = work + P, *Ap = work + 2 * P;

    /* r_0 = b = −(∇f(w; D) + μ w), x_0 = 0 */
    pflref_status st = pflref_model_grad(job->model, job->w, job->data,
                                         job->idx, job->nb, ws, r, NULL);
    if (st != PFLREF_OK)
        return pflref_error_set(err, st, "schedule",
                                "gradient failed computing the proximal "
                                "point (client %ld)", job->client);
    for (size_t j = 0; j < P; j++) {
        r[j] = -(r[j] + job->mu * job->w[j]);
        p[j] = r[j];
        x[j] = 0.0;
    }
    double rr = dot(r, r, P);
    const double stop = PFLREF_PROX_CG_RTOL * sqrt(rr);
    for (size_t it = 0; it < 2 * P && sqrt(rr) > stop && rr > 0.0; it++) {
        /* Ap = (H + (λ + μ) I) p */
        st = pflref_model_hvp(job->model, job->w, job->data, job->idx,
                              job->nb, p, ws, Ap);
        if (st != PFLREF_OK)
            return pflref_error_set(err, st, "schedule",
                                    "Hessian-vector product failed "
                                    "computing the proximal point");
        for (size_t j = 0; j < P; j++)
            Ap[j] += shift * p[j];
        const double alpha = rr / dot(p, Ap, P);
        for (size_t j = 0; j < P; j++) {
            x[j] += alpha * p[j];
            r[j] -= alpha * Ap[j];
        }
        const double rr_new = dot(r, r, P);
        for (size_t j = 0; j < P; j++)
            p[j] = r[j] + (rr_new / rr) * p[j];
        rr = rr_new;
    }
    /* θ̂ = w + x */
    for (size_t j = 0; j < P; j++)
        x[j] += job->w[j];
    if (!pflref_all_finite(x, P))
        return pflref_error_diverge(err, job->round, job->client, -1,
                                    "theta_hat");
    return PFLREF_OK;
}
