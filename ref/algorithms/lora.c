/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/algorithms/lora.c: federated low-rank adapters over a frozen model:
 * personal adapters, FFA-LoRA, naive FedAvg-LoRA and HetLoRA, on the
 * adapter layer of ref/models/adapter.h (W = W₀ + s B A, LoRA: Hu et al.,
 * ICLR 2022, arXiv 2106.09685v2, eq. (3)).
 *
 *   FFA-LoRA  Y. Sun, Z. Li, Y. Li, B. Ding, "Improving LoRA in Privacy-
 *             preserving Federated Learning", ICLR 2024, arXiv 2403.12313
 *             (its abstract was read: "fix the randomly
 *             initialized non-zero matrices and only fine-tune the
 *             zero-initialized matrices"; the body was not, so the FedAvg
 *             weights of B follow the notes §3).
 *   HetLoRA   Y. J. Cho, L. Liu, Z. Xu, A. Fahrezi, G. Joshi, "Heterogeneous
 *             LoRA for Federated Fine-tuning of On-Device Foundation
 *             Models", EMNLP 2024, arXiv 2401.06432 (abstract and the Fig.
 *             2 caption read: zero-padding, sparsity weights ‖S_k‖/Z with
 *             S_k = B_k A_k, truncation; the version of the body, and so
 *             the exact pruning test, were not read: the notes §2's
 *             reading, its [SPEC] rules named below).
 *   personal  adapters that never leave the client over a frozen shared W₀
 *             (the FedLoRA line of the design card's seed 000: the part of
 *             the model each client personalises is its adapter).
 * Read with shared/spec notes-lora-pfedhn.md §1-3 (every step below is a
 * numbered step of the notes; [SPEC] rules are the notes' own choices).
 *
 * One round t (lora.method selects the lines; participants i in the
 * schedule's order):
 *   l. 1  (ffa, fedavg) client i receives the global adapter: q_i ← q
 *         (hetlora) truncation: B_i ← B[:, 1..r_i], A_i ← A[1..r_i, :]
 *         (personal) client i keeps its own q_i (never averaged)
 *   l. 2  local SGD on the scheduled batches, W₀ and every bias frozen:
 *           A ← A − η s Bᵀ G,  B ← B − η s G Aᵀ,  G = ∇_W f_i(W₀ + s B A)
 *         (ffa: A fixed, only B moves)
 *         (hetlora, λ > 0, c = ⌊γ r_i⌋ ≥ r_min) plus the gradient of the
 *         self-pruning regulariser λ ‖B_t‖_F ‖A_t‖_F on the tail
 *         B_t = B[:, c+1..r_i], A_t = A[c+1..r_i, :]:
 *           ∂/∂B_t = λ ‖A_t‖ B_t/‖B_t‖,  ∂/∂A_t = λ ‖B_t‖ A_t/‖A_t‖
 *         (0 where a tail norm is 0)
 *   l. 3  (hetlora) self-pruning: when (‖B_t‖ ‖A_t‖)² after training is
 *         below its value as received, r_i ← c and the tail is dropped
 *   l. 4  (ffa, fedavg) q ← Σ_k p_k q_k, p_k = n_k / Σ_S n_j (lora.weights)
 *         (hetlora) zero-padding and sparsity weights:
 *           p_k = ‖S_k‖_F / Σ_j ‖S_j‖_F,  S_k = B_k A_k (uniform when the
 *           sum is 0),  B ← Σ_k p_k [B_k, 0],  A ← Σ_k p_k [A_k; 0]
 * Personal models: v_i = W₀ + s B_i A_i (the client's adapter after its
 * last training); global model: w = W₀ + s B A.  With several targets the
 * HetLoRA norms run over every target ([SPEC]: ‖S_k‖_F² = Σ_ℓ ‖B_ℓ A_ℓ‖²,
 * the tail product sums (‖B_ℓ,t‖ ‖A_ℓ,t‖)² over ℓ for the pruning test).
 *
 * Symbols:  W₀ ↔ s->w0 (frozen, never sent)   q ↔ ws->q (Q: the global
 *           lora_A, lora_B of every target, layout ref/models/adapter.h)
 *           q_i ↔ ws->qi + i·Q   r_i ↔ ws->rank[i]   s = α/r ↔ scale()
 *           η ↔ hyper->eta   λ, γ, r_min ↔ hyper->lora.lambda, gamma, r_min
 *           p_k ↔ ws->weight[k]   v_i ↔ s->v + i·P   w ↔ s->w
 * The initial adapter q⁰ (A⁰ and B⁰ of rank r) is data: the spec's
 * init.lora; HetLoRA's client ranks r_i: init.lora_ranks (absent: all r).
 *
 * Switches (the paper's reading first):
 *   lora.method      personal | ffa | fedavg | hetlora
 *   lora.targets     all (every weight matrix; a layer list's dense and
 *                    conv2d weights) | head (the output layer) | input (the
 *                    input layer); or by name: init.lora_targets
 *   opt.*            the client optimizer on the adapter's blocks lora_A,
 *                    lora_B (ref/engine/optim.c; torch trains A and B with
 *                    the model's optimizer): off by default (the plain step
 *                    of l. 2); FFA-LoRA's A stays frozen (the mask), HetLoRA
 *                    truncates the state with the adapter
 *   lora.weights     samples | uniform   (ffa, fedavg)
 *   hetlora.weights  sparsity | uniform | samples
 *   hetlora.scaling  none (ΔW = B A, the paper) | alpha (s = α/r_max)
 *
 * Batch normalisation (bn.*, docs/models.md "Running statistics in
 * training").  The base model W₀ is frozen, but a torch module's buffers
 * move in every training forward whatever requires_grad says, so under
 * bn.running = update each local step moves the running statistics r_μ,
 * r_v of the base model's batchnorm layers by the step's batch
 * (pflref_bn_running_move after the gradient pass).  Whose they are: the
 * base model never leaves the client (FFA-LoRA and HetLoRA send the
 * adapter alone; loralib's lora_state_dict and PEFT's
 * get_peft_model_state_dict hold only the lora_ entries), so each client's
 * copy of the base keeps its own statistics across rounds, never sent,
 * never averaged: they live in v_i's buffer entries (v_i = W₀ + s B_i A_i
 * with client i's r_μ, r_v), start at init.w's, and only client i's
 * training forwards move them.  The global model w = W₀ + s B A keeps
 * init.w's statistics (the server runs no forward).  bn.running = frozen
 * leaves them all at init.w's.
 *
 * Trace: per participant CLIENT_BEGIN "q" (the adapter received), STEP "q"
 * after every local step, NOTE "rank" (hetlora: r_i after pruning),
 * CLIENT_END "q" (what the client keeps and sends); then NOTE "weights"
 * (N entries: p_k, 0 off the round), SERVER "q" and SERVER "w" (not for
 * personal, which has no server step).
 *
 * Determinism: sums over the rank, the batch and the participants in
 * index order; the adapters of ranks ≥ r_i are exactly 0 and never read.
 * Cost per step: one base gradient plus O(r (k + d)) per target.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "algorithms/algorithms.h"
#include "engine/work.h"
#include "models/adapter.h"

static const char *const LOCAL_LINE =
    "l. 2: A ← A − η s Bᵀ G, B ← B − η s G Aᵀ, G = ∇_W f_i(W₀ + s B A)";
static const char *const FFA_LINE =
    "FFA-LoRA l. 2: B ← B − η s G Aᵀ (A frozen)";
static const char *const HET_LINE =
    "HetLoRA l. 2: (B, A) ← (B, A) − η ∇[f_i(W₀ + B A) + λ ‖B_t‖ ‖A_t‖]";
static const char *const RANK_LINE =
    "HetLoRA l. 3: r_i ← ⌊γ r_i⌋ if ‖B_t‖ ‖A_t‖ decreased";
static const char *const WEIGHT_LINE = "l. 4: p_k = n_k / Σ_S n_j";
static const char *const SPARSITY_LINE =
    "HetLoRA l. 4: p_k = ‖B_k A_k‖_F / Σ_j ‖B_j A_j‖_F";
static const char *const SERVER_LINE = "l. 4: B ← Σ_k p_k B_k, A ← Σ_k p_k A_k";
static const char *const PAD_LINE =
    "HetLoRA l. 4: B ← Σ_k p_k [B_k, 0], A ← Σ_k p_k [A_k; 0]";
static const char *const MERGE_LINE = "w = W₀ + s B A";

typedef struct {
    pflref_work list;       /* the allocations (ref/engine/work.h)          */
    pflref_lora_layout L;   /* the targets and the adapter layout (rank r)  */
    pflref_model am;        /* the adapter's blocks lora_A, lora_B, for the
                               client optimizer (pflref_lora_blocks)        */
    unsigned char *move;    /* Q: 1 on the entries that train (FFA-LoRA:
                               every B; the others: all), the optimizer's
                               mask                                        */
    double *q;              /* Q: the global adapter (B, A)                 */
    double *qi;             /* N×Q: the clients' adapters (B_i, A_i)        */
    double *gq;             /* Q: a gradient in the adapter                 */
    double *theta;          /* P: the merged model W₀ + s B A               */
    double *g;              /* P: the base model's batch gradient           */
    double *weight;         /* N: p_k of the round (0 off it)               */
    size_t *rank;           /* N: the clients' ranks r_i                    */
} lora_work;

static void *lora_work_alloc(const pflref_problem *problem,
                             const pflref_hyper *hyper)
{
    const size_t P = problem->model.P, N = problem->N;
    lora_work *ws = calloc(1, sizeof *ws);
    if (ws == NULL)
        return NULL;
    /* check has accepted the layout */
    (void)pflref_lora_layout_named(&ws->L, &problem->model, hyper->lora.r,
                                   hyper->lora.targets,
                                   hyper->lora.target_names,
                                   hyper->lora.ntarget_names, NULL);
    pflref_lora_blocks(&ws->L, &problem->model, &ws->am);
    const size_t Q = ws->L.Q;
    ws->move = pflref_work_flags(&ws->list, Q);
    ws->q = pflref_work_doubles(&ws->list, Q, 1);
    ws->qi = pflref_work_doubles(&ws->list, N, Q);
    ws->gq = pflref_work_doubles(&ws->list, Q, 1);
    ws->theta = pflref_work_doubles(&ws->list, P, 1);
    ws->g = pflref_work_doubles(&ws->list, P, 1);
    ws->weight = pflref_work_doubles(&ws->list, N, 1);
    ws->rank = pflref_work_indices(&ws->list, N, 1);
    return pflref_work_ready(ws);
}

/* s: α/r, or 1 for HetLoRA with hetlora.scaling = none (W₀ + B A). */
static double scale(const pflref_hyper *h)
{
    if (h->lora.method == PFLREF_LORA_HETLORA &&
        h->lora.scaling == PFLREF_HETLORA_SCALING_NONE)
        return 1.0;
    return h->lora.alpha / (double)h->lora.r;
}

/* dst's running-statistics entries (the model's buffer blocks: BN's r_μ,
 * r_v) := src's; nothing for a model without batch normalisation. */
static void copy_buffers(const pflref_model *m, const double *src,
                         double *dst)
{
    for (size_t b = 0; m->bn && b < m->nblocks; b++) {
        const pflref_block *B = &m->blocks[b];
        if (B->is_buffer)
            memcpy(dst + B->offset, src + B->offset, B->size * sizeof *dst);
    }
}

/* theta := W₀ + s B_i A_i with client i's running statistics (those of
 * v_i, its copy of the base model's buffers). */
static void merge_client(const pflref_state *s, const lora_work *ws,
                         size_t i, const double *qi, size_t rank,
                         double *theta)
{
    const pflref_model *m = &s->problem->model;
    pflref_lora_merge(&ws->L, m, s->w0, qi, rank, scale(s->hyper), theta);
    copy_buffers(m, s->v + i * s->P, theta);
}

/* init.lora_ranks: only HetLoRA, N integers in [r_min, r]. */
static pflref_status check_ranks(const pflref_problem *problem,
                                 const pflref_lora_hyper *h,
                                 pflref_error *err)
{
    if (h->ranks == NULL)
        return PFLREF_OK;
    if (h->method != PFLREF_LORA_HETLORA)
        return pflref_error_set(err, PFLREF_EINVAL, "init.lora_ranks",
                                "client ranks are HetLoRA's (lora.method = "
                                "hetlora); every other method has rank r");
    if (h->nranks != problem->N)
        return pflref_error_set(err, PFLREF_EINVAL, "init.lora_ranks",
                                "expected N = %zu client ranks, found %zu",
                                problem->N, h->nranks);
    for (size_t i = 0; i < h->nranks; i++) {
        const double r_i = h->ranks[i];
        if (r_i == floor(r_i) && r_i >= (double)h->r_min &&
            r_i <= (double)h->r)
            continue;
        char where[PFLREF_WHERE_MAX];
        snprintf(where, sizeof where, "init.lora_ranks[%zu]", i);
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "rank %g is not an integer in [r_min, r] = "
                                "[%zu, %zu]", r_i, h->r_min, h->r);
    }
    return PFLREF_OK;
}

/* The model takes adapters of rank r on its targets; q⁰ has their length;
 * HetLoRA's γ < 1, r_min ≤ r and the client ranks. */
static pflref_status lora_check(const pflref_problem *problem,
                                const pflref_hyper *hyper,
                                const pflref_schedule *schedule,
                                const unsigned char *mask, pflref_error *err)
{
    (void)schedule;
    (void)mask;
    const pflref_lora_hyper *h = &hyper->lora;
    pflref_lora_layout L;
    pflref_status st = pflref_lora_layout_named(
        &L, &problem->model, h->r, h->targets, h->target_names,
        h->ntarget_names, err);
    if (st != PFLREF_OK)
        return st;
    /* the adapter has no split: the optimizer's weight decay takes every
     * adapter block or, as no adapter block is a bias, the same (weights) */
    if (hyper->opt.weight_decay != 0.0 &&
        (hyper->opt.decay_scope == PFLREF_OPT_SCOPE_SHARED ||
         hyper->opt.decay_scope == PFLREF_OPT_SCOPE_PERSONAL))
        return pflref_error_set(err, PFLREF_EINVAL,
                                "algorithm.switches.opt.decay_scope",
                                "lora's optimizer moves the adapter, which "
                                "has no split into shared and personal "
                                "blocks: opt.decay_scope = all or weights");
    if (h->q0 == NULL)
        return pflref_error_set(err, PFLREF_EINVAL, "init.lora",
                                "give the initial adapter (lora_A, lora_B "
                                "of every target: %zu numbers)", L.Q);
    if (h->nq0 != L.Q)
        return pflref_error_set(err, PFLREF_EINVAL, "init.lora",
                                "expected %zu numbers (rank %zu on %zu "
                                "target blocks), found %zu", L.Q, L.r,
                                L.ntargets, h->nq0);
    if (!(h->gamma < 1.0))
        return pflref_error_set(err, PFLREF_EINVAL, "hetlora.gamma",
                                "γ = %g must be below 1", h->gamma);
    if (h->r_min > h->r)
        return pflref_error_set(err, PFLREF_EINVAL, "hetlora.r_min",
                                "r_min = %zu exceeds r = %zu", h->r_min,
                                h->r);
    return check_ranks(problem, h, err);
}

/* q and every q_i := q⁰ (HetLoRA: truncated to r_i); w and v_i merged. */
static pflref_status lora_init(pflref_state *s, pflref_error *err)
{
    (void)err;
    lora_work *ws = s->extra;
    const pflref_lora_hyper *h = &s->hyper->lora;
    const size_t Q = ws->L.Q, P = s->P;
    const double sc = scale(s->hyper);
    /* the entries that train: FFA-LoRA's B only (req: ffalora.freeze_a) */
    for (size_t l = 0; l < ws->L.ntargets; l++) {
        const pflref_lora_target *t = &ws->L.targets[l];
        const size_t a = h->method == PFLREF_LORA_FFA ? 0 : 1;
        memset(ws->move + t->off_A, (int)a, ws->L.r * t->d);
        memset(ws->move + t->off_B, 1, t->k * ws->L.r);
    }
    memcpy(ws->q, h->q0, Q * sizeof *ws->q);
    pflref_lora_merge(&ws->L, &s->problem->model, s->w0, ws->q, h->r, sc,
                      s->w);
    for (size_t i = 0; i < s->N; i++) {
        double *qi = ws->qi + i * Q;
        ws->rank[i] = h->ranks != NULL ? (size_t)h->ranks[i] : h->r;
        memcpy(qi, ws->q, Q * sizeof *qi);
        pflref_lora_truncate(&ws->L, qi, ws->rank[i]);
        pflref_lora_merge(&ws->L, &s->problem->model, s->w0, qi, ws->rank[i],
                          sc, s->v + i * P);
    }
    return PFLREF_OK;
}

/* Σ_ℓ (‖B_ℓ[:, c..ρ)‖ ‖A_ℓ[c..ρ, :]‖)² and, per target, the two tail norms
 * (nB, nA: arrays of ntargets, or NULL). */
static double tail_product(const pflref_lora_layout *L, const double *q,
                           size_t c, size_t rank, double *nB, double *nA)
{
    double total = 0.0;
    for (size_t l = 0; l < L->ntargets; l++) {
        const pflref_lora_target *t = &L->targets[l];
        double b2 = 0.0, a2 = 0.0;
        for (size_t i = 0; i < t->k; i++)
            for (size_t p = c; p < rank; p++)
                b2 += q[t->off_B + i * L->r + p] * q[t->off_B + i * L->r + p];
        for (size_t p = c; p < rank; p++)
            for (size_t j = 0; j < t->d; j++)
                a2 += q[t->off_A + p * t->d + j] * q[t->off_A + p * t->d + j];
        if (nB != NULL) {
            nB[l] = sqrt(b2);
            nA[l] = sqrt(a2);
        }
        total += b2 * a2;
    }
    return total;
}

/* gq += ∇ λ ‖B_t‖ ‖A_t‖ on the tail ranks c..ρ−1 of every target
 * (req: hetlora.eq3): λ‖A_t‖ B_t/‖B_t‖ and λ‖B_t‖ A_t/‖A_t‖, 0 where a
 * norm is 0. */
static void add_regulariser(const pflref_lora_layout *L, const double *q,
                            size_t c, size_t rank, double lambda, double *gq)
{
    for (size_t l = 0; l < L->ntargets; l++) {
        const pflref_lora_target *t = &L->targets[l];
        double nB, nA;
        pflref_lora_layout one = *L;
        one.ntargets = 1;
        one.targets[0] = *t;
        (void)tail_product(&one, q, c, rank, &nB, &nA);
        if (nB > 0.0)
            for (size_t i = 0; i < t->k; i++)
                for (size_t p = c; p < rank; p++)
                    gq[t->off_B + i * L->r + p] +=
                        lambda * nA * q[t->off_B + i * L->r + p] / nB;
        if (nA > 0.0)
            for (size_t p = c; p < rank; p++)
                for (size_t j = 0; j < t->d; j++)
                    gq[t->off_A + p * t->d + j] +=
                        lambda * nB * q[t->off_A + p * t->d + j] / nA;
    }
}

/* l. 2: client i's local steps on its adapter q_i (rank r_i), with the
 * regulariser's tail c..r_i−1 when reg; the step is the client
 * optimizer's on d = ∇ when opt.* is not plain SGD. */
static pflref_status local_steps(pflref_state *s, size_t i,
                                 const pflref_batches *b, int reg, size_t c,
                                 const pflref_trace *trace, pflref_error *err)
{
    lora_work *ws = s->extra;
    const pflref_hyper *h = s->hyper;
    const pflref_model *m = &s->problem->model;
    const size_t Q = ws->L.Q, rank = ws->rank[i];
    const double eta = h->eta, sc = scale(h);   /* η, s */
    const int method = h->lora.method;
    const char *line = method == PFLREF_LORA_FFA       ? FFA_LINE
                       : method == PFLREF_LORA_HETLORA ? HET_LINE
                                                       : LOCAL_LINE;
    double *qi = ws->qi + i * Q;
    /* the client optimizer (opt.*), NULL under the papers' plain step */
    pflref_optim_state *opt = pflref_optim_get(s, i, 0);
    for (size_t st_i = 0; st_i < b->nsteps; st_i++) {
        /* G = ∇_W f_i(W₀ + s B A; b)   (req: lora.eq3, lora.alg1.l2) */
        merge_client(s, ws, i, qi, rank, ws->theta);
        pflref_status st = pflref_batch_grad(
            m, ws->theta, &s->problem->clients[i].train, b, st_i, s->ws,
            ws->g, (long)s->t, (long)i, err);
        if (st != PFLREF_OK)
            return st;
        /* the frozen base's running statistics, moved by this training
         * forward (bn.running = update) and kept in client i's copy */
        st = pflref_bn_running_move(&h->bn, m, s->ws, ws->theta, (long)s->t,
                                    (long)i, (long)st_i + 1, err);
        if (st != PFLREF_OK)
            return st;
        copy_buffers(m, ws->theta, s->v + i * s->P);
        /* ∂A = s Bᵀ G, ∂B = s G Aᵀ   (req: lora.grad) */
        pflref_lora_grad(&ws->L, m, qi, rank, sc, ws->g, ws->gq);
        if (reg)   /* + ∇ λ ‖B_t‖ ‖A_t‖   (req: hetlora.eq3) */
            add_regulariser(&ws->L, qi, c, rank, h->lora.lambda, ws->gq);
        /* (B, A) ← (B, A) − η ∇, simultaneously; FFA-LoRA: B only
         * (req: ffalora.freeze_a) */
        if (opt != NULL)   /* the client optimizer on d = ∇ (opt.*) */
            (void)pflref_optim_step(opt, &ws->am, ws->move, eta, ws->gq, qi);
        else
            for (size_t l = 0; l < ws->L.ntargets; l++) {
                const pflref_lora_target *t = &ws->L.targets[l];
                const size_t a0 =
                    method == PFLREF_LORA_FFA ? t->off_B : t->off_A;
                for (size_t p = a0; p < t->off_B + t->k * ws->L.r; p++)
                    qi[p] -= eta * ws->gq[p];
            }
        if (!pflref_all_finite(qi, Q))
            return pflref_error_diverge(err, (long)s->t, (long)i,
                                        (long)st_i + 1, "q");
        pflref_trace_emit(trace, PFLREF_EV_STEP, "train", (long)s->t,
                          (long)i, (long)st_i + 1, "q", qi, Q, line);
    }
    return PFLREF_OK;
}

/* The optimizer state of client i truncated with its adapter to `rank`
 * (HetLoRA: the ranks beyond r_i no longer exist, and their momentum or
 * moments must not move the zero padding; b and v have q's layout). */
static void truncate_state(const pflref_state *s, size_t i, size_t rank)
{
    lora_work *ws = s->extra;
    pflref_optim_state *opt = pflref_optim_get(s, i, 0);
    if (opt == NULL)
        return;
    if (opt->b != NULL)
        pflref_lora_truncate(&ws->L, opt->b, rank);
    if (opt->v != NULL)
        pflref_lora_truncate(&ws->L, opt->v, rank);
}

/* Client i in round t: l. 1 (receive), l. 2 (train), l. 3 (prune); v_i
 * := W₀ + s B_i A_i. */
static pflref_status client_update(pflref_state *s, size_t i,
                                   const pflref_batches *b,
                                   const pflref_trace *trace,
                                   pflref_error *err)
{
    lora_work *ws = s->extra;
    const pflref_lora_hyper *h = &s->hyper->lora;
    const size_t Q = ws->L.Q, rank = ws->rank[i];
    const int het = h->method == PFLREF_LORA_HETLORA;
    double *qi = ws->qi + i * Q;
    /* l. 1: receive q (HetLoRA: truncated to r_i)
     * req: hetlora.trunc, lora.alg1.l1 */
    if (h->method != PFLREF_LORA_PERSONAL) {
        memcpy(qi, ws->q, Q * sizeof *qi);
        pflref_lora_truncate(&ws->L, qi, rank);
    }
    pflref_optim_begin(s, i);   /* opt.state = reset: a new optimizer */
    if (het)
        truncate_state(s, i, rank);
    pflref_trace_emit(trace, PFLREF_EV_CLIENT_BEGIN, "train", (long)s->t,
                      (long)i, 0, "q", qi, Q, NULL);
    /* c = ⌊γ r_i⌋; the regulariser and pruning only when λ > 0 and
     * c ≥ r_min ([SPEC] of the notes §2 step 4) */
    const size_t c = (size_t)floor(h->gamma * (double)rank);
    const int reg = het && h->lambda > 0.0 && c >= h->r_min;
    const double before =
        reg ? tail_product(&ws->L, qi, c, rank, NULL, NULL) : 0.0;
    pflref_status st = local_steps(s, i, b, reg, c, trace, err);
    if (st != PFLREF_OK)
        return st;
    /* l. 3: prune when the tail product decreased
     * req: hetlora.prune, lora.alg1.l3 */
    if (reg && tail_product(&ws->L, qi, c, rank, NULL, NULL) < before) {
        ws->rank[i] = c;
        pflref_lora_truncate(&ws->L, qi, c);
        truncate_state(s, i, c);
    }
    if (het) {
        const double r_i = (double)ws->rank[i];
        pflref_trace_emit(trace, PFLREF_EV_NOTE, "train", (long)s->t,
                          (long)i, -1, "rank", &r_i, 1, RANK_LINE);
    }
    merge_client(s, ws, i, qi, ws->rank[i], ws->theta);
    memcpy(s->v + i * s->P, ws->theta, s->P * sizeof *ws->theta);
    pflref_trace_emit(trace, PFLREF_EV_CLIENT_END, "train", (long)s->t,
                      (long)i, -1, "q", qi, Q, NULL);
    return PFLREF_OK;
}

/* ‖B A‖_F over every target, rank ρ (HetLoRA's ‖S_k‖_F, [SPEC] for
 * several targets: the square root of the sum of the squares). */
static double delta_norm(const pflref_lora_layout *L, const double *q,
                         size_t rank)
{
    double sum = 0.0;
    for (size_t l = 0; l < L->ntargets; l++) {
        const pflref_lora_target *t = &L->targets[l];
        for (size_t i = 0; i < t->k; i++)
            for (size_t j = 0; j < t->d; j++) {
                double x = 0.0;   /* S_ij = Σ_ρ B_iρ A_ρj */
                for (size_t p = 0; p < rank; p++)
                    x += q[t->off_B + i * L->r + p] *
                         q[t->off_A + p * t->d + j];
                sum += x * x;
            }
    }
    return sqrt(sum);
}

/* l. 4's weights p_k over the round's participants (ws->weight, N). */
static const char *round_weights(const pflref_state *s,
                                 const pflref_round_plan *plan)
{
    lora_work *ws = s->extra;
    const pflref_lora_hyper *h = &s->hyper->lora;
    const int het = h->method == PFLREF_LORA_HETLORA;
    const int uniform = het ? h->het_weights == PFLREF_HETLORA_WEIGHTS_UNIFORM
                            : h->weights == PFLREF_LORA_WEIGHTS_UNIFORM;
    const int sparsity =
        het && h->het_weights == PFLREF_HETLORA_WEIGHTS_SPARSITY;
    double Z = 0.0;
    memset(ws->weight, 0, s->N * sizeof *ws->weight);
    for (size_t j = 0; j < plan->m; j++) {
        const size_t k = plan->clients[j];
        ws->weight[k] =
            sparsity ? delta_norm(&ws->L, ws->qi + k * ws->L.Q, ws->rank[k])
            : uniform ? 1.0
                      : (double)s->problem->clients[k].train.n;
        Z += ws->weight[k];
    }
    for (size_t j = 0; j < plan->m; j++) {
        const size_t k = plan->clients[j];
        /* Z = 0 (every S_k = 0): uniform ([SPEC] of the notes §2 step 7) */
        ws->weight[k] = Z > 0.0 ? ws->weight[k] / Z : 1.0 / (double)plan->m;
    }
    return sparsity ? SPARSITY_LINE : WEIGHT_LINE;
}

static pflref_status lora_round(pflref_state *s, const pflref_round_plan *plan,
                                const pflref_trace *trace, pflref_error *err)
{
    lora_work *ws = s->extra;
    const pflref_lora_hyper *h = &s->hyper->lora;
    const size_t Q = ws->L.Q;
    for (size_t j = 0; j < plan->m; j++) {
        pflref_status st = client_update(s, plan->clients[j],
                                         &plan->batches[j], trace, err);
        if (st != PFLREF_OK)
            return st;
    }
    if (h->method == PFLREF_LORA_PERSONAL)
        return PFLREF_OK;   /* personal adapters: nothing is aggregated */
    /* l. 4: p_k (req: ffalora.avg, hetlora.weights, lora.alg1.l4) */
    const char *wline = round_weights(s, plan);
    pflref_trace_emit(trace, PFLREF_EV_NOTE, "train", (long)s->t, -1, -1,
                      "weights", ws->weight, s->N, wline);
    /* q ← Σ_k p_k q_k, participants in order; the q_k of HetLoRA are
     * zero-padded to r_max already (req: hetlora.pad); FFA-LoRA averages
     * B only, A is the common frozen one (req: ffalora.avg) */
    const int ffa = h->method == PFLREF_LORA_FFA;
    for (size_t l = 0; l < ws->L.ntargets; l++) {
        const pflref_lora_target *t = &ws->L.targets[l];
        const size_t p0 = ffa ? t->off_B : t->off_A;
        const size_t p1 = t->off_B + t->k * ws->L.r;
        memset(ws->q + p0, 0, (p1 - p0) * sizeof *ws->q);
        for (size_t j = 0; j < plan->m; j++) {
            const size_t k = plan->clients[j];
            const double *qk = ws->qi + k * Q;
            for (size_t p = p0; p < p1; p++)
                ws->q[p] += ws->weight[k] * qk[p];
        }
    }
    pflref_trace_emit(trace, PFLREF_EV_SERVER, "train", (long)s->t, -1, -1,
                      "q", ws->q, Q,
                      h->method == PFLREF_LORA_HETLORA ? PAD_LINE
                                                       : SERVER_LINE);
    /* w = W₀ + s B A   (req: lora.eq3) */
    pflref_lora_merge(&ws->L, &s->problem->model, s->w0, ws->q, h->r,
                      scale(s->hyper), s->w);
    return pflref_server_publish(s, MERGE_LINE, trace, err);
}

/* Re-synchronised checking: the state after round t is the server's
 * adapter q (its SERVER "q" of round t; not personal), each client's
 * adapter q_i (its last CLIENT_END "q") and HetLoRA's rank r_i (its last
 * NOTE "rank"); w and the v_i are merged again from them. */
static void lora_load_state(pflref_state *s, pflref_state_loader load,
                            void *ctx, long t)
{
    lora_work *ws = s->extra;
    const pflref_lora_hyper *h = &s->hyper->lora;
    const size_t Q = ws->L.Q, P = s->P;
    const double sc = scale(s->hyper);
    if (h->method != PFLREF_LORA_PERSONAL &&
        load(ctx, PFLREF_EV_SERVER, "q", t, -1, ws->q, Q))
        pflref_lora_merge(&ws->L, &s->problem->model, s->w0, ws->q, h->r, sc,
                          s->w);
    for (size_t i = 0; i < s->N; i++) {
        double *qi = ws->qi + i * Q;
        double r_i;
        if (h->method == PFLREF_LORA_HETLORA &&
            load(ctx, PFLREF_EV_NOTE, "rank", t, (long)i, &r_i, 1) &&
            r_i >= 0.0 && r_i <= (double)h->r && r_i == floor(r_i))
            ws->rank[i] = (size_t)r_i;
        if (load(ctx, PFLREF_EV_CLIENT_END, "q", t, (long)i, qi, Q)) {
            /* client i's running statistics are not in the records: its
             * v_i keeps the reference's (they do not enter training) */
            merge_client(s, ws, i, qi, ws->rank[i], ws->theta);
            memcpy(s->v + i * P, ws->theta, P * sizeof *ws->theta);
        }
    }
}

/* The client optimizer moves the adapter q: Q entries. */
static size_t lora_opt_length(const pflref_problem *problem,
                              const pflref_hyper *hyper)
{
    pflref_lora_layout L;
    (void)pflref_lora_layout_named(&L, &problem->model, hyper->lora.r,
                                   hyper->lora.targets,
                                   hyper->lora.target_names,
                                   hyper->lora.ntarget_names, NULL);
    return L.Q;
}

const pflref_algorithm pflref_lora = {
    .name = "lora",
    .title = "Low-rank adapters: personal, FFA-LoRA (Sun et al., ICLR 2024), "
             "FedAvg-LoRA, HetLoRA (Cho et al., EMNLP 2024)",
    .has_global = 1,
    .has_personal = 1,
    .personal_name = "v",
    .n_eval = 2,
    .eval = {{"global", PFLREF_SOURCE_GLOBAL},
             {"personalized", PFLREF_SOURCE_PERSONAL}},
    .check = lora_check,
    .work_alloc = lora_work_alloc,
    .work_free = pflref_work_free,
    .init = lora_init,
    .round = lora_round,
    .load_state = lora_load_state,
    .opt_slots = 1,   /* the adapter's optimizer: torch trains A, B */
    .opt_length = lora_opt_length,
    /* bn.running = update moves the base's running statistics, each
     * client's own (local_steps) */
};
