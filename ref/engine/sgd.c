/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/engine/sgd.c: the local minibatch SGD solver that several algorithms
 * share (with an optional proximal term and an optional parameter mask),
 * its batch gradient, the plain job of one client in one round, and the
 * broadcast of the shared block u to every client's (u, v_i).
 *
 * Local SGD, one step s on batch D_s (mean loss over the batch):
 *
 *     θ ← θ − η (∇f(θ; D_s) + μ (θ − ref))        entries with mask = 1
 *
 * μ = 0 gives plain SGD (FedAvg's ClientUpdate, McMahan et al. 2017,
 * Alg. 1); μ > 0 gives the proximal fine-tuning step (FedAvg-FT with μ_ft).
 * Cost per step: one gradient (one pass over the batch) plus O(P).
 *
 * Batch normalisation (a model with bn): the gradient pass is in training
 * mode (batch statistics), and right after it the iterate's running
 * statistics move as PyTorch's train() moves them in that forward pass
 * (bn.running = update, the default; pflref_bn_running_move), whatever the
 * mask: torch moves a module's buffers in every training-mode forward,
 * frozen parameters or not.  bn.running = frozen leaves them (the forward
 * still normalises with the batch statistics; torch with momentum = 0).
 * Buffers never step: their gradient is 0, the proximal term skips them
 * and the client optimizer skips them (optim.c), as torch's proximal
 * terms and optimizers range over parameters() only.
 */
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include "core/mca.h"
#include "engine/engine.h"

/* The row-major blocks of an N×P array: block k is v[kP .. kP + P − 1].
 * block_before, block_inside and block_ends_before are the only facts on
 * the products k·P that the proof of pflref_share_to_all needs; stated
 * once here, they keep its goals linear for Z3 and CVC4. */
/*@ lemma block_before: \forall integer k, i, P, p;
      0 <= k < i && 0 <= p < P ==> k * P + p < i * P;
    lemma block_inside: \forall integer i, N, P;
      0 <= i && i + 1 <= N && 0 <= P ==> i * P + P <= N * P;
    lemma block_ends_before: \forall integer k, i, P;
      0 <= k < i && 0 <= P ==> 0 <= k * P && k * P + P <= i * P;

    // a composed block stays composed while the entries below n, its own
    // among them, do not change
    lemma block_composed_kept{Pre, L1, L2}:
      \forall double *v, unsigned char *shared, double *w, integer o, n, P;
        0 <= o && o + P <= n ==>
        block_composed{Pre, L1}(v, shared, w, o, P) ==>
        (\forall integer q; 0 <= q < n ==> \at(v[q], L2) == \at(v[q], L1)) ==>
        block_composed{Pre, L2}(v, shared, w, o, P);

    lemma row_composed_kept{Pre, L1, L2}:
      \forall double *v, unsigned char *shared, double *w, integer k, n, P;
        0 <= k * P && k * P + P <= n ==>
        row_composed{Pre, L1}(v, shared, w, k, P) ==>
        (\forall integer q; 0 <= q < n ==> \at(v[q], L2) == \at(v[q], L1)) ==>
        row_composed{Pre, L2}(v, shared, w, k, P);
 */

/* Its contract is on its declaration (engine.h). */
void pflref_share_to_all(const pflref_state *s)
{
    /*@ loop invariant 0 <= i <= s->N;
        loop invariant \forall integer k; 0 <= k < i ==>
                       row_composed{Pre, Here}(s->v, s->shared, s->w, k, s->P);
        loop invariant \forall integer q; i * s->P <= q < s->N * s->P ==>
                       s->v[q] == \at(s->v[q], Pre);
        loop assigns i, s->v[0 .. s->N * s->P - 1];
        loop variant s->N - i;
     */
    for (size_t i = 0; i < s->N; i++) {
        /*@ assert 0 <= i * s->P && i * s->P + s->P <= s->N * s->P; */
        pflref_compose(s->shared, s->w, s->v + i * s->P, s->v + i * s->P,
                       s->P);
        /*@ assert \forall integer q; 0 <= q < i * s->P ==>
                   s->v[q] == \at(s->v[q], LoopCurrent); */
        /*@ assert \forall integer k; 0 <= k < i ==>
                   0 <= k * s->P && k * s->P + s->P <= i * s->P; */
        /*@ assert \forall integer p; 0 <= p < s->P && s->shared[p] != 0 ==>
                   s->v[i * s->P + p] == s->w[p]; */
        /*@ assert \forall integer p; 0 <= p < s->P && s->shared[p] == 0 ==>
                   s->v[i * s->P + p] ==
                   \at(s->v[i * s->P + p], LoopCurrent); */
        /*@ assert row_composed{Pre, Here}(s->v, s->shared, s->w, i, s->P); */
    }
}

pflref_local_sgd pflref_local_sgd_plain(const pflref_state *s, size_t i,
                                        const pflref_batches *b, double eta,
                                        const char *name,
                                        const char *formula)
{
    const pflref_local_sgd job = {
        .model = &s->problem->model,
        .data = &s->problem->clients[i].train,
        .batches = b,
        .eta = eta,
        .mu = 0.0,
        .ref = NULL,
        .mask = NULL,
        .phase = "train",
        .name = name,
        .formula = formula,
        .round = (long)s->t,
        .client = (long)i,
        .opt = pflref_optim_get(s, i, 0),
        .bn = &s->hyper->bn,
    };
    return job;
}

void pflref_optim_begin(const pflref_state *s, size_t i)
{
    const pflref_optim *o = s->optim;
    if (o == NULL || o->lifetime != PFLREF_OPT_STATE_RESET)
        return;
    (void)i;   /* reset: the sets serve every client, each new here */
    for (size_t k = 0; k < o->slots; k++)
        pflref_optim_state_reset(&o->sets[k], o->P);
}

pflref_optim_state *pflref_optim_get(const pflref_state *s, size_t i,
                                     size_t k)
{
    const pflref_optim *o = s->optim;
    if (o == NULL || k >= o->slots)
        return NULL;
    return o->lifetime == PFLREF_OPT_STATE_CLIENT ? &o->sets[i * o->slots + k]
                                                  : &o->sets[k];
}

pflref_status pflref_batch_grad(const pflref_model *m, const double *theta,
                               const pflref_data *data,
                               const pflref_batches *b, size_t s,
                               pflref_model_workspace *ws, double *g,
                               long round, long client, pflref_error *err)
{
    const size_t nb = b->step_off[s + 1] - b->step_off[s];
    pflref_status st = pflref_model_grad(m, theta, data, b->idx + b->step_off[s],
                                         nb, ws, g, NULL);
    if (st != PFLREF_OK)
        return pflref_error_set(err, st, "schedule",
                                "gradient failed at round %ld, client "
                                "%ld, step %zu (batch of %zu samples)",
                                round, client, s + 1, nb);
    return PFLREF_OK;
}

int pflref_blocks_step(const pflref_model *m, const unsigned char *mask,
                       double step, const double *g, double *x)
{
    /* one pass: the step and the finiteness test of its result (|x| ≤
     * DBL_MAX is false for ±Inf and NaN; branch-free, so it vectorises) */
    int finite = 1;
    for (size_t b = 0; b < m->nblocks; b++) {
        const pflref_block *B = &m->blocks[b];
        /* r_μ, r_v: not parameters, never stepped (their entries of g are
         * 0, or a precision check's noise on them: ref/core/mca.h) */
        if (B->is_buffer || (mask != NULL && !mask[B->offset]))
            continue;
        for (size_t p = B->offset; p < B->offset + B->size; p++) {
            x[p] -= step * g[p];
            finite &= fabs(x[p]) <= DBL_MAX;
        }
    }
    return finite;
}

int pflref_blocks_finite(const pflref_model *m, const unsigned char *mask,
                         const double *x)
{
    for (size_t b = 0; b < m->nblocks; b++) {
        const pflref_block *B = &m->blocks[b];
        if ((mask == NULL || mask[B->offset]) &&
            !pflref_all_finite(x + B->offset, B->size))
            return 0;
    }
    return 1;
}

pflref_status pflref_bn_running_move(const pflref_bn_hyper *bn,
                                     const pflref_model *m,
                                     const pflref_model_workspace *ws,
                                     double *theta, long round, long client,
                                     long step, pflref_error *err)
{
    if (bn == NULL || !m->bn || bn->running != PFLREF_BN_RUNNING_UPDATE)
        return PFLREF_OK;
    /* r_μ ← (1 − ρ) r_μ + ρ μ_B,  r_v ← (1 − ρ) r_v + ρ c s²_B */
    pflref_error e = {0};
    const int biased = bn->running_var == PFLREF_BN_RUNNING_VAR_BIASED;
    pflref_status st = pflref_model_bn_update(m, ws, biased, theta, &e);
    if (st != PFLREF_OK)
        return pflref_error_set(err, st, "schedule",
                                "running statistics at round %ld, client "
                                "%ld, step %ld: %s (PyTorch refuses it too; "
                                "algorithm.switches \"bn.running_var\": "
                                "\"biased\" or \"bn.running\": \"frozen\" "
                                "takes it)", round, client, step, e.message);
    return PFLREF_OK;
}

/* Monte Carlo arithmetic (check --candidate-precision, ref/core/mca.h):
 * the rounding of the step's result, on the entries it moved.  Off (the
 * normal run) it is one pointer test. */
static void mca_round_step(const pflref_model *m, const unsigned char *mask,
                           double *theta)
{
    if (pflref_mca_active == NULL)
        return;
    for (size_t b = 0; b < m->nblocks; b++) {
        const pflref_block *B = &m->blocks[b];
        if (!B->is_buffer && (mask == NULL || mask[B->offset]))
            pflref_mca_perturb(PFLREF_MCA_UPDATE, theta + B->offset,
                               B->size);
    }
}

/* θ ← θ − η (g + μ (θ − ref)) on block B's entries (the proximal step). */
static void prox_block_step(const pflref_block *B, double eta, double mu,
                            const double *ref, const double *g,
                            double *theta)
{
    if (B->is_buffer)   /* r_μ, r_v: not parameters, never stepped */
        return;
    for (size_t p = B->offset; p < B->offset + B->size; p++) {
        double d = g[p];
        d += mu * (theta[p] - ref[p]);
        theta[p] -= eta * d;
    }
}

pflref_status pflref_local_sgd_step(const pflref_local_sgd *job, size_t s,
                                    double *theta, double *g,
                                    pflref_model_workspace *ws,
                                    const pflref_trace *trace,
                                    pflref_error *err)
{
    const pflref_model *m = job->model;
    const pflref_batches *b = job->batches;
    const unsigned char *mask = job->mask;
    const size_t P = m->P, nb = b->step_off[s + 1] - b->step_off[s];
    const int prox = job->mu != 0.0 && job->ref != NULL;
    /* ∇f(θ; D_s) on the moving blocks only (head-only work where the mask
     * is the head: pflref_model_grad_blocks) */
    pflref_status st = pflref_model_grad_blocks(
        m, theta, job->data, b->idx + b->step_off[s], nb, mask, ws, g, NULL);
    if (st != PFLREF_OK)
        return pflref_error_set(err, st, "schedule",
                                "gradient failed at round %ld, client "
                                "%ld, step %zu (batch of %zu samples)",
                                job->round, job->client, s + 1, nb);
    /* the training-mode forward pass's running statistics (bn.running) */
    st = pflref_bn_running_move(job->bn, m, ws, theta, job->round,
                                job->client, (long)(s + 1), err);
    if (st != PFLREF_OK)
        return st;
    /* ∇f(θ; D_s) + c, the constant term of the local objective's gradient
     * (SCAFFOLD's correction, FedDyn's linear term) on the moving entries */
    for (size_t q = 0; job->shift != NULL && q < m->nblocks; q++) {
        const pflref_block *B = &m->blocks[q];
        if (!B->is_buffer && (mask == NULL || mask[B->offset]))
            for (size_t p = B->offset; p < B->offset + B->size; p++)
                g[p] += job->shift[p];
    }
    /* req: fedavg.alg1.l14, local.eq2, finetune.eq3, interp.eq2 */
    /* req: fedbn.alg1.l2 */
    if (job->opt != NULL) {
        /* the client optimizer on d = ∇f(θ; D_s) + c + μ (θ − ref), the
         * gradient of the local objective (ref/engine/optim.c) */
        for (size_t q = 0; prox && q < m->nblocks; q++) {
            const pflref_block *B = &m->blocks[q];
            if (!B->is_buffer && (mask == NULL || mask[B->offset]))
                for (size_t p = B->offset; p < B->offset + B->size; p++)
                    g[p] += job->mu * (theta[p] - job->ref[p]);
        }
        if (!pflref_optim_step(job->opt, m, mask, job->eta, g, theta))
            return pflref_error_diverge(err, job->round, job->client,
                                        (long)(s + 1), job->name);
        mca_round_step(m, mask, theta);
        pflref_trace_emit(trace, PFLREF_EV_STEP, job->phase, job->round,
                          job->client, (long)(s + 1), job->name, theta, P,
                          job->formula);
        return PFLREF_OK;
    }
    /* θ ← θ − η (∇f(θ; D_s) + c + μ (θ − ref)), block by block on the entries
     * with mask = 1: cost ∝ the moving blocks' size */
    int finite = prox || pflref_blocks_step(m, mask, job->eta, g, theta);
    for (size_t q = 0; prox && q < m->nblocks; q++)
        if (mask == NULL || mask[m->blocks[q].offset])
            prox_block_step(&m->blocks[q], job->eta, job->mu, job->ref, g,
                            theta);
    if (prox)
        finite = pflref_blocks_finite(m, mask, theta);
    if (!finite)
        return pflref_error_diverge(err, job->round, job->client,
                                    (long)(s + 1), job->name);
    mca_round_step(m, mask, theta);
    pflref_trace_emit(trace, PFLREF_EV_STEP, job->phase, job->round,
                      job->client, (long)(s + 1), job->name, theta, P,
                      job->formula);
    return PFLREF_OK;
}

pflref_status pflref_local_sgd_run(const pflref_local_sgd *job, double *theta,
                                   double *g, pflref_model_workspace *ws,
                                   const pflref_trace *trace,
                                   pflref_error *err)
{
    /* req: fedavg.alg1.l13 */
    for (size_t s = 0; s < job->batches->nsteps; s++) {
        pflref_status st = pflref_local_sgd_step(job, s, theta, g, ws, trace,
                                                 err);
        if (st != PFLREF_OK)
            return st;
    }
    return PFLREF_OK;
}
