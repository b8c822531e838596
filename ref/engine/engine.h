/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/engine/engine.h: the run state and the pieces shared by several
 * algorithms (private to ref/).  Floor: engine (docs/architecture.md).
 */
#ifndef PFLREF_ENGINE_H
#define PFLREF_ENGINE_H

#include "pflref/algorithm.h"
#include <stdint.h>
#include "core/vec.h"
#include "engine/optim.h"

/* The run state shared by every algorithm. */
struct pflref_state {
    const pflref_problem *problem;
    const pflref_hyper *hyper;  /* the round's: hyper_round while a round
                                   runs, else hyper_base                    */
    const pflref_hyper *hyper_base; /* the run's, as given                  */
    pflref_hyper hyper_round;   /* hyper_base with round t's step sizes
                                   (pflref_round_hyper, ref/engine/lr.c)    */
    size_t P;                   /* parameters                               */
    size_t N;                   /* clients                                  */
    size_t t;                   /* rounds completed                         */
    size_t *trained;            /* N: the rounds each client trained in so
                                   far (lr.count = trainings)               */
    double *w0;                 /* P: the initial parameters                */
    double *w;                  /* P: the global model, or NULL             */
    double *v;                  /* N×P: personal models v_i, or NULL        */
    double *alpha;              /* N: per-client mixing weights α_i, or NULL
                                   (algorithms with has_alpha)              */
    unsigned char *mask;        /* P: 1 = personal parameter (the split)    */
    unsigned char *shared;      /* P: 1 − mask (1 = shared parameter)       */
    double *accum;              /* P doubles: aggregation accumulator       */
    pflref_model_workspace *ws; /* batches up to the largest client         */
    size_t *cluster;            /* N: each client's cluster label, or NULL
                                   (algorithms with has_clusters)           */
    double *theta0;             /* n_theta0 doubles: the initial cluster
                                   models actually used (IFCA), or NULL     */
    size_t n_theta0;
    double *hn;                 /* n_hn doubles: pFedHN's hypernetwork
                                   state W_h (P×e), b_h (P), v (N×e), or
                                   NULL                                     */
    size_t n_hn;
    pflref_batches *chosen_peers; /* T: FedFomo's run-time peer lists
                                   (allocated here when a round carries
                                   peer draws; the algorithm fills round
                                   t's), or NULL                           */
    size_t n_chosen;            /* T when chosen_peers is allocated         */
    double *mix;                /* P: the driver's evaluation buffer (v̄_i) */
    void *extra;                /* the algorithm's own state and buffers
                                   (alg->work_alloc), or NULL               */
    pflref_optim *optim;        /* the client optimizers' states (opt.*,
                                   ref/engine/optim.c), or NULL: plain SGD
                                   or an algorithm without opt_slots        */
#ifndef __FRAMAC__
    double *bn_own;             /* N×P: under bn.aggregate = parameters_only
                                   on a model with batch normalisation,
                                   row i is client i's model as it last
                                   left it, of which only the buffers (r_μ,
                                   r_v) are read (ref/algorithms/
                                   fedavg_keep.c), or NULL.  Hidden from
                                   Frama-C: no proved code reads it, and
                                   the proved goals hold this struct.       */
#endif
};

/* The shapes of the run state from which the algorithms' call sites of
 * the block kernels are proved (proofs/README.md); pflref_state_alloc
 * (ref/engine/state.c) is proved to make them.
 * predicate state_base: s readable; 1 ≤ P and N·P ≤ SIZE_MAX; w0, accum
 *   and mix P writable doubles, mask and shared P writable bytes, apart
 *   from each other and from *s.
 * predicate state_global: state_base, and w P writable doubles apart from
 *   them (algorithms with has_global).
 * predicate state_personal: state_base, and v N·P writable doubles apart
 *   from them and from w when w is present (algorithms with
 *   has_personal). */
/*@ predicate state_base{L}(pflref_state *s) =
      \valid_read(s) && 1 <= s->P && s->N * s->P <= SIZE_MAX &&
      \valid(s->w0 + (0 .. s->P - 1)) &&
      \valid(s->accum + (0 .. s->P - 1)) &&
      \valid(s->mix + (0 .. s->P - 1)) &&
      \valid(s->mask + (0 .. s->P - 1)) &&
      \valid(s->shared + (0 .. s->P - 1)) &&
      \separated(s, s->w0 + (0 .. s->P - 1), s->accum + (0 .. s->P - 1),
                 s->mix + (0 .. s->P - 1), s->mask + (0 .. s->P - 1),
                 s->shared + (0 .. s->P - 1));
    predicate state_global{L}(pflref_state *s) =
      state_base(s) && \valid(s->w + (0 .. s->P - 1)) &&
      \separated(s->w + (0 .. s->P - 1), s, s->w0 + (0 .. s->P - 1),
                 s->accum + (0 .. s->P - 1), s->mix + (0 .. s->P - 1),
                 s->mask + (0 .. s->P - 1), s->shared + (0 .. s->P - 1));
    predicate state_personal{L}(pflref_state *s) =
      state_base(s) && \valid(s->v + (0 .. s->N * s->P - 1)) &&
      \separated(s->v + (0 .. s->N * s->P - 1), s,
                 s->w0 + (0 .. s->P - 1), s->accum + (0 .. s->P - 1),
                 s->mix + (0 .. s->P - 1), s->mask + (0 .. s->P - 1),
                 s->shared + (0 .. s->P - 1)) &&
      (s->w != \null ==>
         \separated(s->v + (0 .. s->N * s->P - 1), s->w + (0 .. s->P - 1)));
 */

/* The problem of the state: readable, with the model of P parameters the
 * local SGD jobs (pflref_local_sgd_run) write P entries of.
 * predicate state_model: that, for the state s. */
/*@ predicate state_model{L}(pflref_state *s) =
      \valid_read(s->problem) && s->problem->model.P == s->P;
 */

/* The round plan an algorithm's round receives (ref/engine/run.c calls
 * it only after pflref_schedule_validate accepted the schedule, which is
 * proved to ensure plan_checked of every round: include/pflref/
 * schedule.h): plan readable, m participant ids each < N, and their m
 * batch lists.  The validation also makes the ids strictly ascending,
 * which no bound here needs.
 * predicate round_plan: that shape for N clients. */
/*@ predicate round_plan{L}(pflref_round_plan *plan, integer N) =
      plan_checked(plan, N);
 */

/* Row i of the N×P row-major array a (client i's block of s->v): a + i·P.
 * Proved (proofs/README.md): for i < N its P entries lie inside the N·P,
 * which is all its callers need of the product i·P. */
/*@ requires i < N && N * P <= SIZE_MAX;
    assigns \nothing;
    ensures \result == a + i * P;
    ensures 0 <= i * P && i * P + P <= N * P;
 */
static inline double *pflref_row(double *a, size_t i, size_t N, size_t P)
{
    (void)N;
    return a + i * P;
}

/* Round t's hyperparameters (ref/engine/lr.c): out := base, with every
 * step size (lr.scope = all: η, η_p, γ_u, γ_v, ρ, PFLEGO's β, Per-FedAvg's
 * α and β, η_α, IFCA's γ; eta_p: η_p only) times c_t, where
 *   lr.schedule = constant:    c_t = 1
 *                 exponential: c_t = γ^t
 *                 step:        c_t = γ^⌊t / lr.step_rounds⌋
 * and γ^k is formed as k products γ·γ·…·γ from the left.  Fine-tuning's η_ft
 * and every non-step hyperparameter (λ, μ, β of pFedMe's server, K, …) are
 * left alone.  base [in], out [out] */
void pflref_round_hyper(const pflref_hyper *base, size_t t, pflref_hyper *out);

/* Client i's step sizes for its train() call `call` (0-based) of `calls`
 * in round s->t (every algorithm 1 call a round; Per-FedAvg's
 * perfedavg.calls = two: 2): s->hyper_round := s->hyper_base with the step
 * sizes times c_k, c as in pflref_round_hyper with k (in place of t) the
 * scheduler steps taken before this call,
 *   lr.count = rounds:    k = calls · t + call
 *             trainings:  k = calls · (rounds client i trained before t)
 *                             + call   (PFLlib: each client's scheduler
 *                             steps at the end of each of its train())
 * With calls = 1 and lr.count = rounds it leaves the round's step sizes.
 * Called while a round runs, before the client's first step and (calls = 2)
 * between its two calls.  s [in,out] */
/*@ assigns s->hyper_round; */
void pflref_client_lr(pflref_state *s, size_t i, size_t call, size_t calls);

/* The factor c_k pflref_client_lr gives client i's step sizes for that
 * call (1 under lr.schedule = constant), without setting them: for a step
 * size outside the round's list, FedBABU's η_ft as PFLlib decays it
 * (pfl.finetune_lr = decayed).  s [in] */
/*@ assigns \nothing; */
double pflref_client_lr_factor(const pflref_state *s, size_t i, size_t call,
                               size_t calls);

/* Shared pieces used by several algorithms (ref/engine/sgd.c,
 * ref/engine/prox_inner.c, ref/engine/round.c). */

/* Local minibatch SGD with an optional proximal term, the one local solver:
 *   for s = 1..batches->nsteps:
 *     θ ← θ − η (∇f(θ; D_s) + c + μ (θ − ref))  on the entries with mask = 1
 * (mask NULL: every entry; μ = 0 or ref NULL: no proximal term; shift NULL:
 * no constant term c, such as SCAFFOLD's c − c_i or FedDyn's −∇L_k(θ_k^{t−1});
 * the sum is formed in that order, ((∇f + c) + μ (θ − ref))).  With an
 * optimizer state opt (not NULL), the step is the optimizer's on
 * d = ∇f(θ; D_s) + c + μ (θ − ref) (pflref_optim_step: momentum, weight decay,
 * Adam, clipping), and g holds d, clipped, on return.  Emits a STEP event
 * named `name` after every step and fails with PFLREF_EDIVERGE (round t,
 * client i, step s) when θ stops being finite.
 *   theta  [in,out] P;  g [work] P
 * The frame below leaves out the optimizer's state (*opt: b, v, t), which
 * no proved caller reads, as it leaves out the model workspace's
 * temporaries (proofs/README.md, the assumptions). */
typedef struct {
    const pflref_model *model;
    const pflref_data *data;
    const pflref_batches *batches;
    double eta;
    double mu;
    const double *ref;
    const double *shift;        /* the constant term c (P), or NULL         */
    const unsigned char *mask;
    const char *phase;
    const char *name;
    const char *formula;
    long round;
    long client;
    pflref_optim_state *opt;    /* the client optimizer's state, or NULL:
                                   the plain step above                    */
    const pflref_bn_hyper *bn;  /* batch normalisation's running
                                   statistics (bn.*: moved after each
                                   gradient pass under bn.running = update,
                                   pflref_bn_running_move), or NULL: left
                                   as they are                             */
} pflref_local_sgd;

/*@ assigns theta[0 .. job->model->P - 1], g[0 .. job->model->P - 1], *err;
 */
pflref_status pflref_local_sgd_run(const pflref_local_sgd *job, double *theta,
                                   double *g, pflref_model_workspace *ws,
                                   const pflref_trace *trace,
                                   pflref_error *err);

/* g := ∇f(θ; D_s), the gradient of the batch-mean loss on step s's batch
 * (0-based) of b; a failure names the round, client and step (s + 1). */
/*@ assigns g[0 .. m->P - 1], *err; */
pflref_status pflref_batch_grad(const pflref_model *m, const double *theta,
                               const pflref_data *data,
                               const pflref_batches *b, size_t s,
                               pflref_model_workspace *ws, double *g,
                               long round, long client, pflref_error *err);

/* PyTorch's train() on the running statistics: after a training-mode
 * gradient pass on ws (the last pflref_model_grad or
 * pflref_model_grad_blocks there), under bn->running = update, every
 * batchnorm layer's buffers of θ move by that pass's batch statistics,
 *   r_μ ← (1 − ρ) r_μ + ρ μ_B,  r_v ← (1 − ρ) r_v + ρ c s²_B
 * with c = M/(M − 1) (bn.running_var = unbiased, torch.nn.BatchNorm1d/2d)
 * or 1 (biased), M the values a channel normalises over
 * (pflref_model_bn_update).  Nothing for a model without batch
 * normalisation, for bn NULL and under bn.running = frozen.  A failure
 * (unbiased with M = 1) names the round, client and step (step, 1-based).
 *   theta [in,out] P: only the running-statistics blocks are written */
/*@ assigns theta[0 .. m->P - 1], *err; */
pflref_status pflref_bn_running_move(const pflref_bn_hyper *bn,
                                     const pflref_model *m,
                                     const pflref_model_workspace *ws,
                                     double *theta, long round, long client,
                                     long step, pflref_error *err);

/* x[p] −= step · g[p] on every parameter block of m whose entries are
 * marked in mask (mask NULL: every block); the buffers (batch
 * normalisation's r_μ, r_v) are never stepped.  Cost ∝ the marked blocks'
 * size, not P.  Returns 1 when every entry it wrote is finite (tested in
 * the same pass), else 0. */
int pflref_blocks_step(const pflref_model *m, const unsigned char *mask,
                        double step, const double *g, double *x);

/* 1 when every entry of x in a block marked in mask (NULL: every block)
 * is finite. */
int pflref_blocks_finite(const pflref_model *m, const unsigned char *mask,
                         const double *x);

/* Step s (0-based, < batches->nsteps) of the local solver alone; with a
 * mask, the gradient is pflref_model_grad_blocks's and only the marked
 * blocks are touched (the others of θ must be finite on entry: the
 * divergence test reads the marked blocks only). */
/*@ assigns theta[0 .. job->model->P - 1], g[0 .. job->model->P - 1], *err;
 */
pflref_status pflref_local_sgd_step(const pflref_local_sgd *job, size_t s,
                                    double *theta, double *g,
                                    pflref_model_workspace *ws,
                                    const pflref_trace *trace,
                                    pflref_error *err);

/* pFedMe's inner loop (Dinh et al. 2020, Alg. 1, the approximate solution
 * of eq. (7)), the primitive shared by pFedMe and the "prox" algorithm:
 *   for k = 1..K:
 *     θ ← θ − η_p (∇f(θ; D) + λ(θ − w) + μθ)
 * on one batch D (the K steps reuse it).  μ = 0 is the paper; the official
 * code adds μθ (pfedme.mu).  With an optimizer state opt (not NULL: opt.*
 * away from plain SGD), the step is the optimizer's (pflref_optim_step,
 * step size η_p) on d = ∇f(θ; D) + λ(θ − w) + μθ, the gradient of h: the
 * optimizer takes the place of the plain step of the object that steps θ
 * (pFedMeOptimizer in the authors' code and PFLlib), and g holds d,
 * clipped, on return.  After each gradient pass θ's running statistics
 * move (bn NULL or bn.running = frozen: they stay), as the K training
 * forwards of the θ model move them in torch; buffers never step (their
 * gradient is 0 and the proximal terms skip them).  Emits a STEP event
 * named "theta" after every step, numbered step0 + k, and fails with
 * PFLREF_EDIVERGE (round, client, step) when θ stops being finite.
 *   theta [in,out] P: the start point, then θ_K;  g [work] P
 * The frame below leaves out the optimizer's state (*opt), which no proved
 * caller reads, as pflref_local_sgd_run's does (proofs/README.md). */
typedef struct {
    const pflref_model *model;
    const pflref_data *data;
    const size_t *idx;      /* the batch D: nb sample indices               */
    size_t nb;
    const double *w;        /* P: the reference w (pFedMe's w_{i,r})        */
    double lambda;          /* λ ≥ 0                                        */
    double eta_p;           /* η_p > 0                                      */
    double mu;              /* μ ≥ 0                                        */
    size_t K;               /* K ≥ 1                                        */
    const char *phase;
    const char *formula;
    long round;
    long client;
    long step0;             /* the first step is numbered step0 + 1         */
    pflref_optim_state *opt;    /* the inner solver's optimizer (opt.*), or
                                   NULL: the plain step above              */
    const pflref_bn_hyper *bn;  /* bn.*: θ's running statistics move after
                                   each gradient pass (update), or NULL    */
} pflref_prox_inner;

/*@ assigns theta[0 .. job->model->P - 1], g[0 .. job->model->P - 1], *err;
 */
pflref_status pflref_prox_inner_run(const pflref_prox_inner *job,
                                    double *theta, double *g,
                                    pflref_model_workspace *ws,
                                    const pflref_trace *trace,
                                    pflref_error *err);

/* The inner job of client i in round s->t on batch q of b with reference
 * w (phase "train", the default formula), under the run's λ, η_p, μ
 * (pfedme.mu) and K, client i's optimizer 0 (pflref_optim_get: NULL under
 * plain SGD) and the run's bn.*; its steps are numbered qK + 1..(q+1)K. */
/*@ requires \valid_read(s) && \valid_read(s->problem);
    assigns \nothing;
    ensures \result.model == &s->problem->model && \result.w == w;
 */
pflref_prox_inner pflref_prox_inner_job(const pflref_state *s, size_t i,
                                        const pflref_batches *b, size_t q,
                                        const double *w);

/* The client optimizer's settings that pFedMe's and prox's inner solver
 * cannot take (their check, before round 0): a weight decay scoped by a
 * split (opt.decay_scope = shared | personal), as θ is the whole model,
 * personal in every block.  alg: the algorithm's name for the message. */
pflref_status pflref_prox_opt_check(const pflref_hyper *hyper,
                                    const char *alg, pflref_error *err);

/* 1 when the model's batch loss is a quadratic function of the parameters
 * (quadratic; linear with squared or half_squared loss), so that the inner
 * problem has the exact solution pflref_prox_point computes. */
int pflref_prox_has_exact(const pflref_model *m);

/* The exact minimiser of the inner problem of job (K, η_p ignored):
 *   θ̂ = argmin_θ f(θ; D) + (λ/2)‖θ − w‖² + (μ/2)‖θ‖²
 * i.e. the solution of (H + (λ + μ) I)(θ − w) = −(∇f(w; D) + μ w), H the
 * (constant) Hessian of f, found by conjugate gradients with exact
 * Hessian-vector products.  In exact arithmetic CG ends after at most P
 * iterations; it stops when the residual is at most
 * PFLREF_PROX_CG_RTOL·‖r_0‖ or after 2P iterations.  Only for models with
 * pflref_prox_has_exact (PFLREF_EINVAL otherwise) and λ + μ > 0.
 *   theta_hat [out] P;  work [work] 3·P */
#define PFLREF_PROX_CG_RTOL 1e-15
pflref_status pflref_prox_point(const pflref_prox_inner *job,
                                double *theta_hat, double *work,
                                pflref_model_workspace *ws, pflref_error *err);


/* Set the shared entries of every client's s->v to those of s->w, so each
 * v_i is (u, v_i) (FedAlt, FedSim, PFLEGO).  Proved (ref/engine/sgd.c,
 * proofs/README.md): writes s->v[0..N·P−1] and nothing else, and every
 * block i becomes (u, v_i): s->w's entries where shared, its own elsewhere.
 */
/*@ // the P entries of v from offset o are, at label L, those of Pre
    // composed with w where shared (pflref_compose's postcondition)
    predicate block_composed{Pre, L}(double *v, unsigned char *shared,
                                     double *w, integer o, integer P) =
      \forall integer p; 0 <= p < P ==>
        \at(v[o + p], L) ==
        (\at(shared[p], Pre) != 0 ? \at(w[p], Pre) : \at(v[o + p], Pre));

    // block k of the N×P array v (its P entries from k·P) composed
    predicate row_composed{Pre, L}(double *v, unsigned char *shared,
                                   double *w, integer k, integer P) =
      block_composed{Pre, L}(v, shared, w, k * P, P);
 */
/*@ requires \valid_read(s);
    requires s->N * s->P <= SIZE_MAX;
    requires \valid(s->v + (0 .. s->N * s->P - 1));
    requires \valid_read(s->shared + (0 .. s->P - 1));
    requires \valid_read(s->w + (0 .. s->P - 1));
    requires \separated(s->v + (0 .. s->N * s->P - 1), s);
    requires \separated(s->v + (0 .. s->N * s->P - 1),
                        s->shared + (0 .. s->P - 1));
    requires \separated(s->v + (0 .. s->N * s->P - 1),
                        s->w + (0 .. s->P - 1));
    assigns s->v[0 .. s->N * s->P - 1];
    ensures \forall integer k; 0 <= k < s->N ==>
            row_composed{Pre, Post}(s->v, s->shared, s->w, k, s->P);
 */
void pflref_share_to_all(const pflref_state *s);


/* The start of a client update of client i (its train(): before its first
 * step, beside pflref_client_lr): under opt.state = reset, every optimizer
 * of the client is new (its state zeroed); under client and server, the
 * state carries on.  Nothing without optimizer states (s->optim NULL).
 * Its frame, like pflref_local_sgd_run's, leaves out the optimizer states,
 * which no proved caller reads (proofs/README.md, the assumptions). */
/*@ assigns \nothing; */
void pflref_optim_begin(const pflref_state *s, size_t i);

/* Optimizer k (< alg->opt_slots) of client i: its state, or NULL when the
 * run steps with plain SGD (s->optim NULL).  Under opt.state = client the
 * state is client i's own; under reset and server one state per k serves
 * every client. */
/*@ assigns \nothing; */
pflref_optim_state *pflref_optim_get(const pflref_state *s, size_t i,
                                     size_t k);

/* The plain local SGD job of client i in round s->t (phase "train"):
 *   θ ← θ − η ∇f_i(θ; D_s)   on every entry, for the batches of b,
 * its STEP events named `name` and carrying `formula`; its optimizer is
 * client i's first (pflref_optim_get(s, i, 0): NULL under plain SGD). */
/*@ requires \valid_read(s) && \valid_read(s->problem);
    assigns \nothing;
    ensures \result.model == &s->problem->model && \result.batches == b;
 */
pflref_local_sgd pflref_local_sgd_plain(const pflref_state *s, size_t i,
                                        const pflref_batches *b, double eta,
                                        const char *name,
                                        const char *formula);

/* ---- the frame of a round (ref/engine/round.c) ------------------------ */

/* Round start: w_t := w (when w_t is not NULL), a ROUND_BEGIN event of w,
 * and the aggregation accumulator s->accum := 0.
 *   w_t [out] P, or NULL */
/*@ requires state_global(s);
    requires w_t != \null ==> \valid(w_t + (0 .. s->P - 1)) &&
             \separated(w_t + (0 .. s->P - 1), s, s->w + (0 .. s->P - 1),
                        s->accum + (0 .. s->P - 1));
    assigns w_t[0 .. s->P - 1], s->accum[0 .. s->P - 1];
    ensures w_t != \null ==> \forall integer p; 0 <= p < s->P ==>
            w_t[p] == s->w[p];
 */
void pflref_round_begin(pflref_state *s, double *w_t,
                        const pflref_trace *trace);

/* Σ_j n_{ids[j]} over j = 0..m−1 (ids NULL: clients 0..m−1), the
 * clients' training-set sizes summed in list order, as a double (the
 * denominator of the sample-weighted averages). */
/*@ assigns \nothing; */
double pflref_train_n(const pflref_problem *problem, const size_t *ids,
                      size_t m);

/* Client i's start in round s->t: x := from (when from is not NULL), then
 * a CLIENT_BEGIN event of x named `name` (step 0).  x [in,out] P */
/*@ requires \valid_read(s) && \valid(x + (0 .. s->P - 1));
    requires \separated(x + (0 .. s->P - 1), s);
    requires from != \null ==> \valid_read(from + (0 .. s->P - 1)) &&
             \separated(x + (0 .. s->P - 1), from + (0 .. s->P - 1));
    assigns x[0 .. s->P - 1];
    ensures from != \null ==> \forall integer p; 0 <= p < s->P ==>
            x[p] == from[p];
 */
void pflref_client_begin(const pflref_state *s, size_t i, const char *name,
                         double *x, const double *from,
                         const pflref_trace *trace);

/* Client i's end in round s->t: a CLIENT_END event of x named `name`. */
/*@ requires \valid_read(s) && \valid_read(x + (0 .. s->P - 1));
    assigns \nothing;
 */
void pflref_client_end(const pflref_state *s, size_t i, const char *name,
                       const double *x, const pflref_trace *trace);

/* The server's new w: refused as divergence (round s->t, name "w") when
 * not finite, else a SERVER event of w carrying `formula`. */
/*@ requires \valid_read(s) && \valid_read(s->w + (0 .. s->P - 1));
    assigns *err;
 */
pflref_status pflref_server_publish(pflref_state *s, const char *formula,
                                    const pflref_trace *trace,
                                    pflref_error *err);

/* Round end of the averaging algorithms: w := s->accum, then
 * pflref_server_publish. */
/*@ requires \valid_read(s) && \valid(s->w + (0 .. s->P - 1)) &&
             \valid_read(s->accum + (0 .. s->P - 1));
    requires \separated(s->w + (0 .. s->P - 1), s,
                        s->accum + (0 .. s->P - 1));
    assigns s->w[0 .. s->P - 1], *err;
    ensures \forall integer p; 0 <= p < s->P ==>
            s->w[p] == \old(s->accum[p]);
 */
pflref_status pflref_round_end(pflref_state *s, const char *formula,
                               const pflref_trace *trace, pflref_error *err);

/* The phase after training, client i (phase "finetune", round −1):
 * θ_i := w and a CLIENT_BEGIN event of θ_i named "theta"; and its
 * CLIENT_END event.  theta [out] P */
/*@ requires \valid_read(s) && \valid_read(s->w + (0 .. s->P - 1)) &&
             \valid(theta + (0 .. s->P - 1));
    requires \separated(theta + (0 .. s->P - 1), s, s->w + (0 .. s->P - 1));
    assigns theta[0 .. s->P - 1];
    ensures \forall integer p; 0 <= p < s->P ==> theta[p] == s->w[p];
 */
void pflref_post_begin(const pflref_state *s, size_t i, double *theta,
                       const pflref_trace *trace);
/*@ requires \valid_read(s) && \valid_read(theta + (0 .. s->P - 1));
    assigns \nothing;
 */
void pflref_post_end(const pflref_state *s, size_t i, const double *theta,
                     const pflref_trace *trace);

/* ---- the algorithms' checks of the schedule (ref/engine/round.c) ------ */

/* A test of one participation: client `client`'s batches b in round t.
 * Returns PFLREF_OK, or a failure recorded by pflref_error_set with no
 * `where` (the walk names the place). */
typedef pflref_status (*pflref_participation_test)(const void *ctx,
                                                   size_t t, size_t client,
                                                   const pflref_batches *b,
                                                   pflref_error *err);

/* A test of one scheduled batch of client `client`: its nb sample
 * indices idx; as pflref_participation_test. */
typedef pflref_status (*pflref_batch_test)(const void *ctx, size_t client,
                                           const size_t *idx, size_t nb,
                                           pflref_error *err);

/* The walk of an algorithm's check over every scheduled participation:
 * for each round t and participant j in order, `participation` (NULL:
 * none) on the participation, then `batch` (NULL: none) on each of its
 * batches q in order, both given ctx.  Returns PFLREF_OK, or the first
 * failure, its `where` set to "schedule.rounds[t].batches[j]" (a
 * participation) or "schedule.rounds[t].batches[j][q]" (a batch). */
pflref_status pflref_schedule_walk(const pflref_schedule *schedule,
                                   pflref_participation_test participation,
                                   pflref_batch_test batch, const void *ctx,
                                   pflref_error *err);

#endif
