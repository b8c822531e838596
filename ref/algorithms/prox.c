/* ref/prox.c: pFedMe's inner problem, the proximal step, as a primitive
 * and as the algorithm "prox".
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
 *
 * pflref_prox_inner_run   the K steps (used by ref/pfedme.c)
 * pflref_prox_point       the exact θ̂ when f is quadratic in θ, by
 *                         conjugate gradients with exact Hessian-vector
 *                         products; Method: h is quadratic with the
 *                         constant Hessian H + (λ + μ) I, so θ̂ = w + x with
 *                         (H + (λ + μ) I) x = −(∇f(w; D) + μ w).
 *                         Accuracy: CG is exact after at most P iterations
 *                         in exact arithmetic; here it stops at a relative
 *                         residual of PFLREF_PROX_CG_RTOL (or 2P iterations).
 * "prox" (the algorithm)  the inner loop on its own, as in seed 003's
 *                         worked example: the reference w is the initial
 *                         parameters and never changes; in each round every
 *                         participant i runs K steps on each of its batches,
 *                         starting from θ = w (pfedme.theta_start = reset)
 *                         or from its θ of the previous round (warm), and
 *                         keeps θ as its personal model.  After each batch
 *                         the exact θ̂ on that batch is a NOTE "theta_hat"
 *                         when the model allows it.
 *
 * Symbols:  θ ↔ theta (P)   w ↔ job->w (P)   λ ↔ lambda   η_p ↔ eta_p
 *           K ↔ K   μ ↔ mu   D ↔ idx[0..nb−1]
 * Cost: K gradients per batch; θ̂ costs one gradient and at most 2P
 * Hessian-vector products.
 */
#include <math.h>
#include <string.h>
#include "algorithms/algorithms.h"

static const char *const INNER_LINE =
    "Alg. 1 l. 7: θ ← θ − η_p (∇f(θ; D) + λ(θ − w) + μθ)";

pflref_status pflref_prox_inner_run(const pflref_prox_inner *job,
                                    double *theta, double *g,
                                    pflref_model_workspace *ws,
                                    const pflref_trace *trace,
                                    pflref_error *err)
{
    const size_t P = job->model->P;
    for (size_t k = 1; k <= job->K; k++) {
        const long step = job->step0 + (long)k;
        pflref_status st = pflref_model_grad(job->model, theta, job->data,
                                             job->idx, job->nb, ws, g, NULL);
        if (st != PFLREF_OK)
            return pflref_error_set(err, st, "schedule",
                                    "gradient failed at round %ld, client "
                                    "%ld, step %ld (batch of %zu samples)",
                                    job->round, job->client, step, job->nb);
        /* θ ← θ − η_p (∇f(θ; D) + λ(θ − w) + μθ) */
        for (size_t p = 0; p < P; p++) {
            double d = g[p] + job->lambda * (theta[p] - job->w[p]);
            if (job->mu != 0.0)
                d += job->mu * theta[p];
            theta[p] -= job->eta_p * d;
        }
        if (!pflref_all_finite(theta, P))
            return pflref_error_diverge(err, job->round, job->client, step,
                                        "theta");
        pflref_trace_emit(trace, PFLREF_EV_STEP, job->phase, job->round,
                          job->client, step, "theta", theta, P,
                          job->formula != NULL ? job->formula : INNER_LINE);
    }
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

/* ---- the algorithm "prox" ---------------------------------------------- */

static pflref_status prox_round(pflref_state *s, const pflref_round_plan *plan,
                                const pflref_trace *trace, pflref_error *err)
{
    const pflref_problem *pr = s->problem;
    const pflref_hyper *h = s->hyper;
    const size_t P = s->P;
    const long t = (long)s->t;
    double *g = s->scratch;
    double *theta_hat = s->scratch + P;
    double *work = s->scratch + 2 * P;   /* 3·P */
    const int exact = pflref_prox_has_exact(&pr->model) &&
                      h->lambda + h->pfedme.mu > 0.0;

    for (size_t j = 0; j < plan->m; j++) {
        const size_t i = plan->clients[j];
        const pflref_batches *b = &plan->batches[j];
        double *theta = s->v + i * P;
        /* θ ← w (reset), or θ carried over from the last round (warm) */
        if (h->pfedme.theta_start == PFLREF_PFEDME_THETA_RESET)
            memcpy(theta, s->w, P * sizeof *theta);
        pflref_trace_emit(trace, PFLREF_EV_CLIENT_BEGIN, "train", t, (long)i,
                          0, "theta", theta, P, NULL);
        for (size_t q = 0; q < b->nsteps; q++) {
            const pflref_prox_inner job = {
                &pr->model, &pr->clients[i].train, b->idx + b->step_off[q],
                b->step_off[q + 1] - b->step_off[q], s->w, h->lambda,
                h->eta_p, h->pfedme.mu, h->K, "train", NULL, t, (long)i,
                (long)(q * h->K)};
            pflref_status st = pflref_prox_inner_run(&job, theta, g, s->ws,
                                                     trace, err);
            if (st == PFLREF_OK && exact)
                st = pflref_prox_point(&job, theta_hat, work, s->ws, err);
            if (st != PFLREF_OK)
                return st;
            if (exact)
                pflref_trace_emit(trace, PFLREF_EV_NOTE, "train", t, (long)i,
                                  (long)((q + 1) * h->K), "theta_hat",
                                  theta_hat, P,
                                  "θ̂ = argmin f(θ; D) + (λ/2)‖θ − w‖²");
        }
        pflref_trace_emit(trace, PFLREF_EV_CLIENT_END, "train", t, (long)i,
                          -1, "theta", theta, P, NULL);
    }
    return PFLREF_OK;
}

const pflref_algorithm pflref_prox = {
    .name = "prox",
    .title = "pFedMe's inner loop on its own (Dinh et al., NeurIPS 2020, "
             "Alg. 1 l. 7; seed 003)",
    .has_global = 1,
    .has_personal = 1,
    .personal_name = "theta",
    .n_eval = 2,
    .eval = {{"reference", PFLREF_SOURCE_GLOBAL},
             {"personalized", PFLREF_SOURCE_PERSONAL}},
    .round = prox_round,
};
