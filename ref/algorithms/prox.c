/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/algorithms/prox.c: the algorithm "prox", pFedMe's inner loop on its
 * own, as in seed 003's worked example.
 *
 *   C. T. Dinh, N. H. Tran, T. D. Nguyen, "Personalized Federated Learning
 *   with Moreau Envelopes", NeurIPS 2020, arXiv 2006.08848v3, Alg. 1 l. 7.
 *
 * The reference w is the initial parameters and never changes.  In each
 * round every participant i, for each of its scheduled batches D:
 *
 *     θ ← θ − η_p (∇f(θ; D) + λ(θ − w) [+ μθ])          k = 1..K
 *
 * (ref/engine/prox_inner.c), starting from θ = w (pfedme.theta_start =
 * reset) or from its θ of the previous round (warm), and keeps θ as its
 * personal model.  After each batch the exact θ̂ = argmin_θ f(θ; D) +
 * (λ/2)‖θ − w‖² [+ (μ/2)‖θ‖²] on that batch is a NOTE "theta_hat" when the
 * model allows it (pflref_prox_has_exact) and λ + μ > 0.
 *
 * Symbols:  w ↔ s->w (P)   θ_i ↔ s->v + i·P   λ ↔ hyper->lambda
 *           η_p ↔ hyper->eta_p   K ↔ hyper->K   μ ↔ hyper->pfedme.mu
 *           D ↔ the batch q of plan->batches[j]
 *
 * Switches: pfedme.theta_start (reset | warm) and pfedme.mu, as pFedMe's;
 * the client optimizer (opt.*, one slot: the inner solver's, begun at
 * each participation per opt.state) and bn.* (θ's passes move its
 * running statistics; the reference w keeps its own), as pFedMe's inner
 * solver (docs/algorithms/prox.md).
 * State and work: θ_i is the state's v_i; the work buffers are prox_work.
 * Trace: θ's steps are STEP "theta" numbered qK + k.
 * Cost per round: K gradients per batch; θ̂ one gradient and at most 2P
 * Hessian-vector products.
 */
#include <stdlib.h>
#include "algorithms/algorithms.h"
#include "engine/work.h"

static const char *const THETA_HAT_LINE =
    "θ̂ = argmin f(θ; D) + (λ/2)‖θ − w‖²";

/* The work buffers of "prox" (zero-filled, none carried between rounds). */
typedef struct {
    pflref_work list;   /* the allocations (ref/engine/work.h)              */
    double *g;          /* P: ∇f(θ; D), the inner gradient                  */
    double *theta_hat;  /* P: θ̂, the exact proximal point on the batch     */
    double *cg;         /* 3·P: pflref_prox_point's conjugate-gradient work */
} prox_work;

static void *prox_work_alloc(const pflref_problem *problem,
                             const pflref_hyper *hyper)
{
    (void)hyper;
    const size_t P = problem->model.P;
    prox_work *ws = calloc(1, sizeof *ws);
    if (ws == NULL)
        return NULL;
    ws->g = pflref_work_doubles(&ws->list, P, 1);
    ws->theta_hat = pflref_work_doubles(&ws->list, P, 1);
    ws->cg = pflref_work_doubles(&ws->list, 3, P);
    return pflref_work_ready(ws);
}

/* The client optimizer's settings the inner solver cannot take, before
 * round 0 (pflref_prox_opt_check). */
static pflref_status prox_check(const pflref_problem *problem,
                                const pflref_hyper *hyper,
                                const pflref_schedule *schedule,
                                const unsigned char *mask, pflref_error *err)
{
    (void)problem;
    (void)schedule;
    (void)mask;
    return pflref_prox_opt_check(hyper, "prox", err);
}

static pflref_status prox_round(pflref_state *s, const pflref_round_plan *plan,
                                const pflref_trace *trace, pflref_error *err)
{
    const pflref_hyper *h = s->hyper;
    const double lambda = h->lambda, mu = h->pfedme.mu;
    const size_t K = h->K;
    const int reset = h->pfedme.theta_start == PFLREF_PFEDME_THETA_RESET;
    const int exact = pflref_prox_has_exact(&s->problem->model) &&
                      lambda + mu > 0.0;
    const size_t P = s->P;
    const long t = (long)s->t;
    prox_work *ws = s->extra;

    for (size_t j = 0; j < plan->m; j++) {
        const size_t i = plan->clients[j];
        const pflref_batches *b = &plan->batches[j];
        double *theta = s->v + i * P;
        /* θ ← w (reset), or θ carried over from the last round (warm) */
        pflref_client_begin(s, i, "theta", theta, reset ? s->w : NULL, trace);
        pflref_optim_begin(s, i);   /* its optimizer (opt.state) */
        for (size_t q = 0; q < b->nsteps; q++) {
            const pflref_prox_inner job = pflref_prox_inner_job(s, i, b, q,
                                                                s->w);
            /* req: prox.alg1.l7, prox.eq7 */
            pflref_status st = pflref_prox_inner_run(&job, theta, ws->g,
                                                     s->ws, trace, err);
            /* req: prox.eq3 */
            if (st == PFLREF_OK && exact)
                st = pflref_prox_point(&job, ws->theta_hat, ws->cg, s->ws,
                                       err);
            if (st != PFLREF_OK)
                return st;
            if (exact)
                pflref_trace_emit(trace, PFLREF_EV_NOTE, "train", t, (long)i,
                                  (long)((q + 1) * K), "theta_hat",
                                  ws->theta_hat, P, THETA_HAT_LINE);
        }
        pflref_client_end(s, i, "theta", theta, trace);
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
    .check = prox_check,
    .work_alloc = prox_work_alloc,
    .work_free = pflref_work_free,
    .round = prox_round,
    .opt_slots = 1,   /* the inner solver's: the object that steps θ */
};
