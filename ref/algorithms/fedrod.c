/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/algorithms/fedrod.c: FedRoD with a linear personalised head,
 * Algorithm 1 of
 *   H.-Y. Chen and W.-L. Chao, "On Bridging Generic and Personalized
 *   Federated Learning for Image Classification", ICLR 2022,
 *   arXiv 2107.00778 (v2),
 * with the balanced softmax (BSM) as the balanced risk L^BR.  The
 * hypernetwork variant of the paper (the personal head generated from the
 * client's class distribution) is not implemented.
 *
 * The model is a body θ (the feature extractor f_θ) followed by a linear
 * generic head φ_G: z_G = φ_G(f_θ(x)).  w = (θ, φ_G) is shared and averaged;
 * each client i keeps a personal head φ_P,i of φ_G's shape, never sent,
 * and predicts with z_G + z_P, z_P = φ_P,i(f_θ(x)).  One round t (line
 * numbers as in trace/fedrod.req; docs/algorithms/fedrod.md gives the
 * reading of the box and its open points):
 *   l. 3   the server sends w_t = (θ, φ_G) to the clients of S_t
 *   l. 4   client i: (θ_i, φ_G,i) ← w_t; φ_P,i its own, kept across rounds
 *   l. 5-6 for each scheduled batch b (in order):
 *   l. 7     (θ_i, φ_G,i) ← (θ_i, φ_G,i) − η ∇ L^BR_i(θ_i, φ_G,i; b)
 *            L^BR_i = (1/|b|) Σ_{(x,y)∈b} −log [N_{i,y} e^{z_{G,y}} /
 *                                              Σ_c N_{i,c} e^{z_{G,c}}]
 *            (BSM, eq. of §4: logits z_G + log N_{i,·}, N_{i,c} client
 *            i's training samples of class c; a class with N_{i,c} = 0
 *            has probability exactly 0 and adds no term)
 *   l. 8     φ_P,i ← φ_P,i − η ∇_{φ_P} L_i(φ_P,i; b)
 *            L_i = (1/|b|) Σ CE(z_G + z_P, y), f_θ(x) and z_G held fixed
 *            (no gradient into θ or φ_G), taken at the iterate after l. 7
 *   l. 10  the client sends (θ_i, φ_G,i)
 *   l. 12  w_{t+1} = Σ_{i∈S_t} (n_i / Σ_{j∈S_t} n_j) (θ_i, φ_G,i)
 * A client outside S_t keeps its φ_P,i (stale until its next round).
 *
 * Switches (value 0 first; TsingZ0/PFLlib d832e76f6a23, preset pfllib):
 *   fedrod.features  after | before: l. 8's f_θ(x) and z_G at the iterate
 *                    before l. 7's step (system/flcore/clients/
 *                    clientrod.py:48-49 compute rep and out_g, :53 steps
 *                    the model, :55-56 use rep.detach(), out_g.detach())
 *   fedrod.phi_p0    zero: φ_P⁰ = 0 | generic: φ_P⁰ = φ_G⁰, w⁰'s head
 *                    (clientrod.py:15 copy.deepcopy(self.model.head))
 * Data (not a switch): init.class_counts gives N_{i,c} (N arrays of k
 *                    integers); absent, N_{i,c} counts client i's training
 *                    samples (the paper).  PFLlib counts one shuffled pass
 *                    of the client's loader with drop_last
 *                    (clientrod.py:22-26), a random subset the spec then
 *                    gives (ref/io/spec_hyper.c validates it).
 * The authors' repository (hongyouc/Fed-RoD b5050f4) holds a README only:
 * no official preset.
 * Client optimizers (opt.*, docs/optimizers.md; the paper's plain SGD by
 * default): two per client, as PFLlib holds them: slot 0 steps l. 7 on
 * (θ, φ_G) (self.optimizer over the model, clientbase.py:47; its step
 * at clientrod.py:53), slot 1 steps l. 8 on φ_P,i (opt_head over the head,
 * clientrod.py:16; its step at :59), each with its own state (opt.state).
 * opt.decay_scope = shared decays slot 0's tensors, personal slot 1's.
 * Batch normalisation in the body (generic_step_bn, personal_step_bn):
 * every forward of a local step is a training pass (PFLlib's train()
 * mode, clientrod.py:35), which moves r_μ, r_v (bn.running = update): l.
 * 7's pass at x, then, under fedrod.features = after, l. 8's second pass
 * at the new x (under before l. 8 reuses the first pass's f and z_G,
 * clientrod.py:48-49, :55-56: one move per batch).
 bn.aggregate (average | parameters_only; the preset pfllib sets
 * parameters_only): under parameters_only, l. 4 gives (θ_i, φ_G,i) w_t's
 * parameters with the r_μ, r_v client i's own model last left (w⁰'s
 * before it first trains), and l. 12's w_{t+1} takes the first
 * participant's r_μ, r_v instead of their average (PFLlib serverrod.py:26
 * and :44 call serverbase.py's send_models and aggregate_parameters:
 * clientbase.py:67-69 set_parameters copies parameters() only,
 * serverbase.py:138-150 deep-copies uploaded_models[0]); φ_P,i
 * (clientrod.py:15, a Linear) holds no buffer.  Client i's models are
 * evaluated with its own r_μ, r_v (each client's test_metrics on its
 * self.model, clientrod.py:70-90).  s->bn_own holds them
 * (ref/engine/bn_own.c).
 *
 * Symbols:  w = (θ, φ_G) ↔ s->w (P)   (θ_i, φ_G,i) ↔ ws->x (trace
 *           "w_local")   φ_P,i ↔ ws->phi_P + i·H (H = k·h [+ k]: W_P k × h
 *           row-major, then b_P when the head has a bias; trace "phi_P")
 *           f_θ(x) ↔ ws->Phi rows (h)   z_G ↔ ws->Z_G rows (k)
 *           N_{i,c} ↔ ws->N_c   η ↔ hyper->eta
 * Records: ROUND_BEGIN and SERVER "w"; CLIENT_BEGIN, STEP, CLIENT_END
 * "w_local"; STEP "phi_P" after each l. 8; per participant NOTE "phi_P"
 * (its head after the round), which `check --resync` reloads.
 * Evaluation: "global" is w; "personalized" (PFLREF_SOURCE_OWN) is the
 * model (θ, φ_G + φ_P,i), whose logits are z_G + z_P since both heads are
 * linear in the same features.
 * Determinism: clients in ascending id, samples in batch order, the
 * server's sum in ascending client id.
 * Cost per step: one body forward pass, one body backward pass, two head
 * passes (O(nb·k·h)); under after, one more body forward pass; an
 * optimizer step is O(P) and O(k·h).  With batch normalisation: l. 7 two
 * training forwards (z_G, then the gradient's) and a backward; l. 8 one
 * forward and a backward of x_P, and under after one more forward.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "algorithms/algorithms.h"
#include "core/mca.h"
#include "engine/work.h"
#include "engine/optim.h"
#include "algorithms/body.h"
#include "engine/bn_own.h"

static const char *const CLIENT_LINE =
    "Alg. 1 l. 7: (θ, φ_G) ← (θ, φ_G) − η ∇L^BR (BSM: z_G + log N_i)";
static const char *const PERSONAL_LINE =
    "Alg. 1 l. 8: φ_P ← φ_P − η ∇_{φ_P} CE(z_G + z_P, y)";
static const char *const SERVER_LINE =
    "Alg. 1 l. 12: w ← Σ_{i∈S_t} (n_i / Σ_{j∈S_t} n_j) (θ_i, φ_G,i)";

/* FedRoD's buffers (zero-filled).  phi_P is carried from round to round;
 * the others are per step or per client. */
typedef struct {
    pflref_work list; /* the allocations (ref/engine/work.h)               */
    double *w_t;      /* P: w at the round's start                         */
    double *x;        /* P: the client's (θ_i, φ_G,i)                      */
    double *g;        /* P: ∇L^BR                                          */
    double *A;        /* nb × h: the body's pre-activations (mlp)          */
    double *Phi;      /* nb × h: f_θ(x) of the batch                       */
    double *Z_G;      /* nb × k: z_G of the batch                          */
    double *E;        /* nb × k: per-sample ∂ℓ/∂z                          */
    double *N_c;      /* k: N_{i,c}                                        */
    double *x_prev;   /* P: the client's iterate before l. 7 (bn: the
                         features' point under fedrod.features = before) */
    double *x_P;      /* P: that point's body with φ_P,i as its head (bn:
                         z_P = φ_P(f_θ(x)) by a training pass)             */
    double *g_full;   /* P: ∇ of ⟨E, z(x_P)⟩, whose head entries are
                         ∇_{φ_P} (bn)                                      */
    double *Z_P;      /* nb × k: z_P of the batch (bn)                     */
    double *g_P;      /* H: ∇_{φ_P} L_i                                    */
    double *phi_P;    /* N × H: the personal heads φ_P,i                   */
    unsigned char *generic_group; /* P zeros: optimizer 0's blocks are the
                                     shared (θ, φ_G) (opt.decay_scope)     */
    unsigned char *personal_group;/* H ones: optimizer 1's blocks are the
                                     personal φ_P,i (opt.decay_scope)      */
    pflref_model om;  /* the personal head's optimizer view: φ_P's blocks
                         W_P (k × h) and b_P (k), the model's head blocks
                         (names, kinds) at offsets 0 and k·h             */
    size_t W_off;     /* the head's weight block in w (k × h)              */
    size_t b_off;     /* its bias block (k), if has_b                      */
    int has_b;        /* the head has a bias                               */
    size_t h, k, H;   /* features, classes, the head's entries             */
} fedrod_work;

/* The head's blocks of m: its weight (k × h) and, when present, its bias
 * (k); 0 when m has no head block. */
static int head_layout(const pflref_model *m, fedrod_work *ws)
{
    int found = 0;
    for (size_t b = 0; b < m->nblocks; b++) {
        if (!m->blocks[b].is_head)
            continue;
        if (found == 0)
            ws->W_off = m->blocks[b].offset;
        else {
            ws->b_off = m->blocks[b].offset;
            ws->has_b = 1;
        }
        found++;
    }
    return found > 0;
}

/* The personal head's optimizer view (clientrod.py:16, opt_head over
 * self.head.parameters(): φ_P's weight, then its bias): the model's head
 * blocks, their names kept (opt.decay_scope = weights reads them), at
 * offsets 0 and k·h of φ_P,i. */
static void personal_view(const pflref_model *m, fedrod_work *ws)
{
    ws->om.kind = m->kind;
    ws->om.P = ws->H;
    ws->om.nblocks = 0;
    for (size_t b = 0; b < m->nblocks; b++) {
        if (!m->blocks[b].is_head || ws->om.nblocks >= PFLREF_MAX_BLOCKS)
            continue;
        pflref_block *B = &ws->om.blocks[ws->om.nblocks];
        *B = m->blocks[b];
        B->offset = ws->om.nblocks == 0 ? 0 : ws->k * ws->h;
        ws->om.nblocks++;
    }
}

static void *fedrod_work_alloc(const pflref_problem *problem,
                               const pflref_hyper *hyper)
{
    (void)hyper;
    const pflref_model *m = &problem->model;
    const size_t P = m->P, h = pflref_body_size(m), K = m->k;
    const size_t n = pflref_largest_train(problem);
    fedrod_work *ws = calloc(1, sizeof *ws);
    if (ws == NULL)
        return NULL;
    (void)head_layout(m, ws);    /* fedrod_check: the head exists */
    ws->h = h;
    ws->k = K;
    ws->H = K * h + (ws->has_b ? K : 0);
    ws->w_t = pflref_work_doubles(&ws->list, P, 1);
    ws->x = pflref_work_doubles(&ws->list, P, 1);
    ws->g = pflref_work_doubles(&ws->list, P, 1);
    ws->A = pflref_work_doubles(&ws->list, n, h);
    ws->Phi = pflref_work_doubles(&ws->list, n, h);
    ws->Z_G = pflref_work_doubles(&ws->list, n, K);
    ws->E = pflref_work_doubles(&ws->list, n, K);
    ws->N_c = pflref_work_doubles(&ws->list, K, 1);
    if (m->bn) {
        ws->x_prev = pflref_work_doubles(&ws->list, P, 1);
        ws->x_P = pflref_work_doubles(&ws->list, P, 1);
        ws->g_full = pflref_work_doubles(&ws->list, P, 1);
        ws->Z_P = pflref_work_doubles(&ws->list, n, K);
    }
    ws->g_P = pflref_work_doubles(&ws->list, ws->H, 1);
    ws->phi_P = pflref_work_doubles(&ws->list, problem->N, ws->H);
    ws->generic_group = pflref_work_flags(&ws->list, P);
    ws->personal_group = pflref_work_flags(&ws->list, ws->H);
    if (ws->personal_group != NULL)
        for (size_t q = 0; q < ws->H; q++)
            ws->personal_group[q] = 1;
    personal_view(m, ws);
    return pflref_work_ready(ws);   /* φ_P,i = 0 (fedrod.phi_p0 = zero) */
}

/* The model must be a classifier with a body and a linear head: an mlp
 * (with or without batch normalisation), or a layer list whose last layer
 * is dense after at least one layer.  With batch normalisation the body's
 * features are those of a training pass (the batch's statistics), as
 * PFLlib's model.base(x) in train() mode (clientrod.py:35, :48). */
static pflref_status check_model(const pflref_model *m, pflref_error *err)
{
    static const pflref_body_words words = {
        "fedrod needs a body f_θ and a linear head φ_G: an mlp (its "
        "hidden layer and output layer) or a layer list (its last dense "
        "layer after the body); the model is ", "",
        "fedrod needs a linear head: the layer list's last layer must "
        "be dense (φ_G) after at least one layer (the body f_θ)",
        "", /* batch normalisation: accepted (generic_step_bn) */
        "fedrod needs a classifier (cross-entropy): its balanced risk "
        "and its personalised output z_G + z_P are over classes"};
    /* req: fedrod.model */
    if (!m->bn)
        return pflref_body_check(m, &words, err);
    /* pflref_body_check's tests but its refusal of batch normalisation */
    pflref_model plain = *m;
    plain.bn = 0;
    return pflref_body_check(&plain, &words, err);
}

/* A batch may repeat indices; the feature buffers hold the largest
 * training set. */
static pflref_status batch_fits(const void *ctx, size_t client,
                                const size_t *idx, size_t nb,
                                pflref_error *err)
{
    (void)client;
    (void)idx;
    const size_t n_max = *(const size_t *)ctx;
    if (nb <= n_max)
        return PFLREF_OK;
    return pflref_error_set(err, PFLREF_EINVAL, NULL,
                            "fedrod takes batches of at most %zu samples "
                            "(the largest training set, which sizes its "
                            "feature buffers); this one has %zu (indices "
                            "repeated)", n_max, nb);
}

static pflref_status fedrod_check(const pflref_problem *problem,
                                  const pflref_hyper *hyper,
                                  const pflref_schedule *schedule,
                                  const unsigned char *mask,
                                  pflref_error *err)
{
    (void)hyper;
    (void)mask;
    pflref_status st = check_model(&problem->model, err);
    if (st != PFLREF_OK)
        return st;
    const size_t n_max = pflref_largest_train(problem);
    return pflref_schedule_walk(schedule, NULL, batch_fits, &n_max, err);
}

/* φ_P⁰ for every client: 0 (zero-filled), or w⁰'s head (generic). */
static pflref_status fedrod_init(pflref_state *s, pflref_error *err)
{
    (void)err;
    fedrod_work *ws = s->extra;
    /* req: fedrod.alg1.l1 */
    if (s->hyper->fedrod.phi_p0 != PFLREF_FEDROD_PHI_P0_GENERIC)
        return PFLREF_OK;
    const size_t kh = ws->k * ws->h;
    for (size_t i = 0; i < s->N; i++) {
        double *phi = ws->phi_P + i * ws->H;
        for (size_t r = 0; r < kh; r++)
            phi[r] = s->w0[ws->W_off + r];
        for (size_t c = 0; ws->has_b && c < ws->k; c++)
            phi[kh + c] = s->w0[ws->b_off + c];
    }
    return PFLREF_OK;
}

/* Z := Phi Wᵀ (+ 1 bᵀ), nb × k, with the head W (k × h), b (k) read from
 * `head` at offsets W_off, b_off (a model vector) or 0, k·h (φ_P); Z += when
 * add. */
static void head_forward(const fedrod_work *ws, const double *W,
                         const double *b, size_t nb, int add, double *Z)
{
    const size_t h = ws->h, K = ws->k;
    for (size_t r = 0; r < nb; r++)
        for (size_t c = 0; c < K; c++) {
            double z = b != NULL ? b[c] : 0.0;
            for (size_t u = 0; u < h; u++)
                z += ws->Phi[r * h + u] * W[c * h + u];
            Z[r * K + c] = add ? Z[r * K + c] + z : z;
        }
}

/* E_r := softmax(z_r + log N) − e_{y_r} over the classes with N_c > 0
 * (logN NULL: plain softmax over every class); a class with N_c = 0 gets
 * probability 0 (its e^{z + log 0} = 0), computed without log 0. */
static void softmax_signal(const fedrod_work *ws, const double *Z,
                           const double *N, const pflref_data *D,
                           const size_t *idx, size_t nb, double *E)
{
    const size_t K = ws->k;
    for (size_t r = 0; r < nb; r++) {
        const double *z = Z + r * K;
        double *e = E + r * K;
        double mx = -INFINITY, sum = 0.0;
        for (size_t c = 0; c < K; c++)
            if (N == NULL || N[c] > 0.0) {
                const double a = N == NULL ? z[c] : z[c] + log(N[c]);
                mx = a > mx ? a : mx;
            }
        for (size_t c = 0; c < K; c++) {
            /* req: fedrod.bsm.absent */
            e[c] = N == NULL ? exp(z[c] - mx)
                   : N[c] > 0.0 ? exp(z[c] + log(N[c]) - mx) : 0.0;
            sum += e[c];
        }
        for (size_t c = 0; c < K; c++)
            e[c] /= sum;
        e[(size_t)D->y[idx[r]]] -= 1.0;
    }
}

/* The head's gradient from E: gW := (1/nb) Eᵀ Phi (k × h) at gW, and
 * gb := (1/nb) Σ_r E_r at gb (NULL: no bias). */
static void head_backward(const fedrod_work *ws, size_t nb, double *gW,
                          double *gb)
{
    const size_t h = ws->h, K = ws->k;
    const double inv = 1.0 / (double)nb;
    for (size_t c = 0; c < K; c++) {
        for (size_t u = 0; u < h; u++) {
            double a = 0.0;
            for (size_t r = 0; r < nb; r++)
                a += ws->E[r * K + c] * ws->Phi[r * h + u];
            gW[c * h + u] = inv * a;
        }
        if (gb != NULL) {
            double a = 0.0;
            for (size_t r = 0; r < nb; r++)
                a += ws->E[r * K + c];
            gb[c] = inv * a;
        }
    }
}

/* f_θ(x) and z_G of the batch at x into Phi, Z_G. */
static pflref_status generic_forward(pflref_state *s, size_t i,
                                     const double *x, const size_t *idx,
                                     size_t nb, size_t q, fedrod_work *ws,
                                     pflref_error *err)
{
    const pflref_model *m = &s->problem->model;
    const pflref_data *D = &s->problem->clients[i].train;
    pflref_status st = pflref_model_features(m, x, D, idx, nb, s->ws, ws->A,
                                             ws->Phi);
    if (st != PFLREF_OK)
        return pflref_error_set(err, st, "schedule",
                                "features failed at round %zu, client %zu, "
                                "step %zu", s->t, i, q + 1);
    head_forward(ws, x + ws->W_off, ws->has_b ? x + ws->b_off : NULL, nb, 0,
                 ws->Z_G);
    return PFLREF_OK;
}

/* The step of l. 7 or l. 8 on the vector theta (slot 0: the model, slot
 * 1: φ_P,i with the view om), by the client's optimizer `slot` when opt.*
 * sets one (slot 0: PFLlib's self.optimizer over self.model.parameters(),
 * clientbase.py:47, stepped at clientrod.py:53; slot 1: opt_head over
 * self.head.parameters(), clientrod.py:16, stepped at :59), else
 * θ ← θ − η g on every parameter block (the buffers' g is 0).  1 when
 * every entry written is finite. */
static int take_step(pflref_state *s, size_t i, size_t slot,
                     const pflref_model *view, unsigned char *group,
                     double *g, double *theta)
{
    pflref_optim_state *opt = pflref_optim_get(s, i, slot);
    int finite;
    if (opt != NULL) {
        opt->personal = group;
        finite = pflref_optim_step(opt, view, NULL, s->hyper->eta, g, theta);
    } else {
        finite = pflref_blocks_step(view, NULL, s->hyper->eta, g, theta);
    }
    /* a precision check's perturbed run (check --candidate-precision,
     * ref/core/mca.h) rounds the stepped parameters as a lower-precision
     * candidate stores them, as the shared local step does (ref/engine/
     * sgd.c); off, a pointer test */
    for (size_t b = 0; pflref_mca_active != NULL && b < view->nblocks; b++)
        if (!view->blocks[b].is_buffer)
            pflref_mca_perturb(PFLREF_MCA_UPDATE, theta + view->blocks[b].offset,
                               view->blocks[b].size);
    return finite;
}

/* l. 7's step of the generic model on the gradient in ws->g (the client's
 * optimizer of slot 0, or the plain step), and its STEP record. */
static pflref_status generic_move(pflref_state *s, size_t i, size_t q,
                                  fedrod_work *ws, const pflref_trace *trace,
                                  pflref_error *err)
{
    /* req: fedrod.alg1.l7, fedrod.opt */
    if (!take_step(s, i, 0, &s->problem->model, ws->generic_group, ws->g,
                   ws->x))
        return pflref_error_diverge(err, (long)s->t, (long)i, (long)(q + 1),
                                    "w_local");
    pflref_trace_emit(trace, PFLREF_EV_STEP, "train", (long)s->t, (long)i,
                      (long)(q + 1), "w_local", ws->x, s->P, CLIENT_LINE);
    return PFLREF_OK;
}

/* x_P := x with its head blocks replaced by φ_P,i (W_P at W_off, b_P at
 * b_off): the model whose logits are z_P = φ_P(f_θ(x)). */
static void personal_model(const fedrod_work *ws, const double *x,
                           const double *phi, size_t P, double *x_P)
{
    const size_t kh = ws->k * ws->h;
    for (size_t p = 0; p < P; p++)
        x_P[p] = x[p];
    for (size_t r = 0; r < kh; r++)
        x_P[ws->W_off + r] = phi[r];
    for (size_t c = 0; ws->has_b && c < ws->k; c++)
        x_P[ws->b_off + c] = phi[kh + c];
}

/* A failed model call of step q, named. */
static pflref_status model_failed(pflref_state *s, size_t i, size_t q,
                                  pflref_status st, const char *what,
                                  pflref_error *err)
{
    return pflref_error_set(err, st, "schedule",
                            "%s failed at round %zu, client %zu, step %zu",
                            what, s->t, i, q + 1);
}

/* Batch normalisation in the body (PFLlib's train() mode: model.base(x)
 * normalises with the batch's statistics and moves r_μ, r_v in that
 * forward, clientrod.py:35, :48).  l. 7 on batch q: the training pass at
 * x gives z_G (Z_G); E = softmax(z_G + log N) − e_y; g := (1/|b|) Σ J_jᵀ E_j
 * through the training-mode layer (pflref_model_grad_from_output); that
 * pass's statistics move x's r_μ, r_v (bn.running = update); then x steps
 * (the buffers never: their gradient is 0, the optimizer skips them). */
static pflref_status generic_step_bn(pflref_state *s, size_t i,
                                     const pflref_batches *b, size_t q,
                                     fedrod_work *ws,
                                     const pflref_trace *trace,
                                     pflref_error *err)
{
    const pflref_model *m = &s->problem->model;
    const pflref_data *D = &s->problem->clients[i].train;
    const size_t nb = b->step_off[q + 1] - b->step_off[q];
    const size_t *idx = b->idx + b->step_off[q];
    pflref_status st = pflref_model_outputs_train(m, ws->x, D, idx, nb, s->ws,
                                                  ws->Z_G);
    if (st != PFLREF_OK)
        return model_failed(s, i, q, st, "the generic model's outputs", err);
    /* req: fedrod.bsm */
    softmax_signal(ws, ws->Z_G, ws->N_c, D, idx, nb, ws->E);
    st = pflref_model_grad_from_output(m, ws->x, D, idx, nb, ws->E, s->ws,
                                       ws->g);
    if (st != PFLREF_OK)
        return model_failed(s, i, q, st, "the balanced-risk gradient", err);
    /* req: fedrod.bn */
    memcpy(ws->x_prev, ws->x, s->P * sizeof *ws->x);
    st = pflref_bn_running_move(&s->hyper->bn, m, s->ws, ws->x, (long)s->t,
                                (long)i, (long)(q + 1), err);
    if (st != PFLREF_OK)
        return st;
    return generic_move(s, i, q, ws, trace, err);
}

/* l. 8 on batch q with batch normalisation in the body.  The features'
 * point: x before l. 7 (before: PFLlib's rep and out_g of the one pass,
 * clientrod.py:48-49, :55-56, no further pass) or after it (after: a
 * second training pass rep = model.base(x) at the new x, which moves
 * r_μ, r_v once more, as torch's train() mode does in every forward).
 * z_P = φ_P(f_θ(x)) is the training-pass output of the model x_P (x's
 * body, φ_P,i as the head), and ∇_{φ_P} (1/|b|) Σ CE(z_G + z_P, y) is
 * the head part of ∇⟨E, z(x_P)⟩ (its head gradient is (1/|b|) Eᵀ f:
 * f_θ(x) and z_G detached, as rep.detach(), out_g.detach()). */
static pflref_status personal_step_bn(pflref_state *s, size_t i,
                                      const pflref_batches *b, size_t q,
                                      fedrod_work *ws,
                                      const pflref_trace *trace,
                                      pflref_error *err)
{
    const pflref_model *m = &s->problem->model;
    const pflref_data *D = &s->problem->clients[i].train;
    const size_t nb = b->step_off[q + 1] - b->step_off[q], K = ws->k;
    const size_t *idx = b->idx + b->step_off[q], kh = ws->k * ws->h;
    double *phi = ws->phi_P + i * ws->H;
    const double *at = ws->x_prev;
    pflref_status st;
    if (s->hyper->fedrod.features == PFLREF_FEDROD_FEATURES_AFTER) {
        /* req: fedrod.features, fedrod.bn */
        at = ws->x;
        st = pflref_model_outputs_train(m, ws->x, D, idx, nb, s->ws, ws->Z_G);
        if (st != PFLREF_OK)
            return model_failed(s, i, q, st, "the generic model's outputs",
                                err);
        st = pflref_bn_running_move(&s->hyper->bn, m, s->ws, ws->x,
                                    (long)s->t, (long)i, (long)(q + 1), err);
        if (st != PFLREF_OK)
            return st;
    }
    personal_model(ws, at, phi, s->P, ws->x_P);
    st = pflref_model_outputs_train(m, ws->x_P, D, idx, nb, s->ws, ws->Z_P);
    if (st != PFLREF_OK)
        return model_failed(s, i, q, st, "the personal head's outputs", err);
    /* z = z_G + z_P, then E = softmax(z) − e_y */
    for (size_t r = 0; r < nb * K; r++)
        ws->Z_P[r] += ws->Z_G[r];
    softmax_signal(ws, ws->Z_P, NULL, D, idx, nb, ws->E);
    st = pflref_model_grad_from_output(m, ws->x_P, D, idx, nb, ws->E, s->ws,
                                       ws->g_full);
    if (st != PFLREF_OK)
        return model_failed(s, i, q, st, "the personal head's gradient", err);
    for (size_t r = 0; r < kh; r++)
        ws->g_P[r] = ws->g_full[ws->W_off + r];
    for (size_t c = 0; ws->has_b && c < K; c++)
        ws->g_P[kh + c] = ws->g_full[ws->b_off + c];
    /* req: fedrod.alg1.l8, fedrod.opt */
    if (!take_step(s, i, 1, &ws->om, ws->personal_group, ws->g_P, phi))
        return pflref_error_diverge(err, (long)s->t, (long)i, (long)(q + 1),
                                    "phi_P");
    pflref_trace_emit(trace, PFLREF_EV_STEP, "train", (long)s->t, (long)i,
                      (long)(q + 1), "phi_P", phi, ws->H, PERSONAL_LINE);
    return PFLREF_OK;
}

/* l. 7 on batch q: g := ∇L^BR at x, then x ← x − η g. */
static pflref_status generic_step(pflref_state *s, size_t i,
                                  const pflref_batches *b, size_t q,
                                  fedrod_work *ws, const pflref_trace *trace,
                                  pflref_error *err)
{
    const pflref_model *m = &s->problem->model;
    const pflref_data *D = &s->problem->clients[i].train;
    const size_t nb = b->step_off[q + 1] - b->step_off[q];
    const size_t *idx = b->idx + b->step_off[q];
    pflref_status st = generic_forward(s, i, ws->x, idx, nb, q, ws, err);
    if (st != PFLREF_OK)
        return st;
    /* req: fedrod.bsm */
    softmax_signal(ws, ws->Z_G, ws->N_c, D, idx, nb, ws->E);
    head_backward(ws, nb, ws->g + ws->W_off,
                  ws->has_b ? ws->g + ws->b_off : NULL);
    st = pflref_model_body_grad(m, ws->x, ws->A, ws->E, D, idx, nb, s->ws,
                                ws->g);
    if (st != PFLREF_OK)
        return pflref_error_set(err, st, "schedule",
                                "body gradient failed at round %zu, client "
                                "%zu, step %zu", s->t, i, q + 1);
    return generic_move(s, i, q, ws, trace, err);
}

/* l. 8 on batch q: φ_P ← φ_P − η ∇_{φ_P} (1/|b|) Σ CE(z_G + z_P, y), with
 * Phi and Z_G as left by l. 7 (before) or recomputed at the new x
 * (after). */
static pflref_status personal_step(pflref_state *s, size_t i,
                                   const pflref_batches *b, size_t q,
                                   fedrod_work *ws, const pflref_trace *trace,
                                   pflref_error *err)
{
    const pflref_data *D = &s->problem->clients[i].train;
    const size_t nb = b->step_off[q + 1] - b->step_off[q];
    const size_t *idx = b->idx + b->step_off[q], kh = ws->k * ws->h;
    double *phi = ws->phi_P + i * ws->H;
    if (s->hyper->fedrod.features == PFLREF_FEDROD_FEATURES_AFTER) {
        /* req: fedrod.features */
        pflref_status st = generic_forward(s, i, ws->x, idx, nb, q, ws, err);
        if (st != PFLREF_OK)
            return st;
    }
    /* z = z_G + z_P, then E = softmax(z) − e_y */
    head_forward(ws, phi, ws->has_b ? phi + kh : NULL, nb, 1, ws->Z_G);
    softmax_signal(ws, ws->Z_G, NULL, D, idx, nb, ws->E);
    head_backward(ws, nb, ws->g_P, ws->has_b ? ws->g_P + kh : NULL);
    /* req: fedrod.alg1.l8, fedrod.opt */
    if (!take_step(s, i, 1, &ws->om, ws->personal_group, ws->g_P, phi))
        return pflref_error_diverge(err, (long)s->t, (long)i, (long)(q + 1),
                                    "phi_P");
    pflref_trace_emit(trace, PFLREF_EV_STEP, "train", (long)s->t, (long)i,
                      (long)(q + 1), "phi_P", phi, ws->H, PERSONAL_LINE);
    return PFLREF_OK;
}

/* N_{i,c}: client i's training samples of each class (the paper), or
 * the counts the spec gives (init.class_counts: PFLlib's one shuffled pass
 * with drop_last, clientrod.py:22-26). */
static void class_counts(const pflref_data *D, const double *given, size_t i,
                         fedrod_work *ws)
{
    for (size_t c = 0; c < ws->k; c++)
        ws->N_c[c] = given != NULL ? given[i * ws->k + c] : 0.0;
    for (size_t r = 0; given == NULL && r < D->n; r++)
        ws->N_c[(size_t)D->y[r]] += 1.0;
}

static pflref_status fedrod_round(pflref_state *s,
                                  const pflref_round_plan *plan,
                                  const pflref_trace *trace,
                                  pflref_error *err)
{
    fedrod_work *ws = s->extra;
    const pflref_problem *pr = s->problem;
    const int keep = pflref_bn_keeps_own(s);   /* bn.aggregate */
    if (keep) {
        pflref_status st = pflref_bn_own_alloc(s, err);
        if (st != PFLREF_OK)
            return st;
    }
    /* req: fedrod.alg1.l3 */
    pflref_round_begin(s, ws->w_t, trace);
    const double n_S = pflref_train_n(pr, plan->clients, plan->m);
    /* req: fedrod.alg1.l2 */
    for (size_t j = 0; j < plan->m; j++) {
        const size_t i = plan->clients[j];
        const pflref_batches *b = &plan->batches[j];
        /* req: fedrod.alg1.l4 */
        if (keep) {   /* w_t's parameters(), client i's own r_μ, r_v */
            memcpy(ws->x, ws->w_t, s->P * sizeof *ws->x);
            pflref_bn_copy_buffers(&pr->model, ws->x, pflref_bn_own_row(s, i));
            pflref_client_begin(s, i, "w_local", ws->x, NULL, trace);
        } else
            pflref_client_begin(s, i, "w_local", ws->x, ws->w_t, trace);
        pflref_client_lr(s, i, 0, 1);  /* η of i's update (lr.count) */
        pflref_optim_begin(s, i);      /* its two optimizers (opt.state) */
        class_counts(&pr->clients[i].train, s->hyper->fedrod.counts, i, ws);
        /* req: fedrod.alg1.l5, fedrod.alg1.l6 */
        for (size_t q = 0; q < b->nsteps; q++) {
            const int bn = pr->model.bn;
            pflref_status st = bn ? generic_step_bn(s, i, b, q, ws, trace, err)
                                  : generic_step(s, i, b, q, ws, trace, err);
            if (st == PFLREF_OK)
                st = bn ? personal_step_bn(s, i, b, q, ws, trace, err)
                        : personal_step(s, i, b, q, ws, trace, err);
            if (st != PFLREF_OK)
                return st;
        }
        /* req: fedrod.alg1.l10 */
        pflref_client_end(s, i, "w_local", ws->x, trace);
        pflref_trace_emit(trace, PFLREF_EV_NOTE, "train", (long)s->t,
                          (long)i, -1, "phi_P", ws->phi_P + i * ws->H, ws->H,
                          PERSONAL_LINE);
        if (keep)     /* what client i's model now holds */
            pflref_bn_copy_buffers(&pr->model, pflref_bn_own_row(s, i), ws->x);
        /* req: fedrod.alg1.l12 */
        pflref_accumulate(s->accum,
                          (double)pr->clients[i].train.n / n_S, ws->x, s->P);
    }
    /* bn.aggregate = parameters_only: w_{t+1}'s r_μ, r_v are the first
     * participant's (deepcopy(uploaded_models[0]), serverbase.py:141) */
    if (keep && plan->m > 0)
        pflref_bn_copy_buffers(&pr->model, s->accum,
                               pflref_bn_own_row(
                                   s, pflref_bn_first_upload(
                                          plan, plan->clients[0])));
    return pflref_round_end(s, SERVER_LINE, trace, err);
}

/* "personalized": the model (θ, φ_G + φ_P,i) of the final state, whose
 * logits are z_G + z_P; under bn.aggregate = parameters_only with client
 * i's own r_μ, r_v (its test_metrics runs its own self.model). */
static pflref_status fedrod_evaluate(const pflref_state *s, size_t i,
                                     const pflref_data *D, pflref_eval *out)
{
    const fedrod_work *ws = s->extra;
    const double *phi = ws->phi_P + i * ws->H;
    const size_t kh = ws->k * ws->h;
    /* req: fedrod.eval */
    for (size_t p = 0; p < s->P; p++)
        s->mix[p] = s->w[p];
    for (size_t r = 0; r < kh; r++)
        s->mix[ws->W_off + r] += phi[r];
    for (size_t c = 0; ws->has_b && c < ws->k; c++)
        s->mix[ws->b_off + c] += phi[kh + c];
    if (s->bn_own != NULL)   /* bn.aggregate = parameters_only */
        pflref_bn_copy_buffers(&s->problem->model, s->mix,
                               s->bn_own + i * s->P);
    return pflref_model_evaluate(&s->problem->model, s->mix, D, s->ws, out);
}

/* check --resync: φ_P,i after round t is client i's latest NOTE
 * "phi_P" up to t (none: its φ_P⁰); under bn.aggregate = parameters_only
 * its own r_μ, r_v those of its latest CLIENT_END "w_local". */
static void fedrod_load_state(pflref_state *s, pflref_state_loader load,
                              void *ctx, long t)
{
    fedrod_work *ws = s->extra;
    for (size_t i = 0; i < s->N; i++)
        load(ctx, PFLREF_EV_NOTE, "phi_P", t, (long)i,
             ws->phi_P + i * ws->H, ws->H);
    pflref_bn_own_load(s, load, ctx, t);
}

const pflref_algorithm pflref_fedrod = {
    .name = "fedrod",
    .title = "FedRoD (Chen and Chao, ICLR 2022, Alg. 1, linear head)",
    .has_global = 1,
    .n_eval = 2,
    .eval = {{"global", PFLREF_SOURCE_GLOBAL},
             {"personalized", PFLREF_SOURCE_OWN}},
    .check = fedrod_check,
    .work_alloc = fedrod_work_alloc,
    .work_free = pflref_work_free,
    .init = fedrod_init,
    .round = fedrod_round,
    .opt_slots = 2,   /* 0: the generic model (θ, φ_G), PFLlib's
                         self.optimizer; 1: the personal head φ_P,i,
                         clientrod.py:16's opt_head: two objects */
    .load_state = fedrod_load_state,
    .evaluate_own = fedrod_evaluate,
};
