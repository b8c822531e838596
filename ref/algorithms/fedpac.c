/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/algorithms/fedpac.c: FedPAC, Algorithm 1 of
 *   J. Xu, X. Tong, S.-L. Huang, "Personalized Federated Learning with
 *   Feature Alignment and Classifier Collaboration", ICLR 2023,
 *   arXiv 2306.11867 (v1),
 * with a linear classifier head.  The paper's text was not reachable here
 * (the sources searched are listed in docs/algorithms/fedpac.md):
 * the box is rebuilt from the method as the authors' code (JianXu95/FedPAC
 * 5770f4ff8f11) runs it; docs/algorithms/fedpac.md gives the open points.
 *
 * The model is a body θ (the feature extractor f_θ, d = its output size)
 * and a linear head φ (the classifier g_φ).  θ is shared and averaged;
 * each client i keeps its head φ_i.  One round t (line numbers as in
 * trace/fedpac.req):
 *   l. 3   the server sends θ^(t) and the global centroids c^(t) to S_t
 *   l. 5   client i: θ_i ← θ^(t); its statistics at θ^(t), over D_i:
 *            p_{i,k} = n_{i,k}/n_i, μ_{i,k} = mean of f_θ(x) over class k,
 *            h_{i,k} = p_{i,k} μ_{i,k},
 *            V_i = (1/n_i) Σ_k [p_{i,k} mean_k ‖f_θ(x)‖² − p_{i,k}² ‖μ_{i,k}‖²]
 *   l. 6   the first τ_φ scheduled batches (E_φ epochs): θ fixed,
 *            φ_i ← φ_i − η_φ ∇_φ (1/|b|) Σ_b ℓ(g_φ(f_θ(x)), y)
 *   l. 7   the remaining batches (E_θ epochs): φ_i fixed,
 *            θ_i ← θ_i − η ∇_θ (1/|b|) Σ_b [ℓ(g_φ(f_θ(x)), y)
 *                                            + λ ‖f_θ(x) − c_y‖²]
 *            (a sample whose class has no centroid adds no alignment
 *            term; none has one in round 0)
 *   l. 8   ĉ_{i,k} = mean of f_{θ_i}(x) over D_{i,k}, the trained θ_i,
 *            for every class k client i holds
 *   l. 9   the client sends θ_i, φ_i, ĉ_i, n_{i,k}, V_i, h_i
 *   l. 11  θ^(t+1) = Σ_{i∈S_t} (n_i / Σ_{j∈S_t} n_j) θ_i
 *   l. 12  c_k = Σ_{i∈S_t} n_{i,k} ĉ_{i,k} / Σ_{i∈S_t} n_{i,k} for the
 *            classes some client of S_t holds (the others: none)
 *   l. 13  for each i ∈ S_t: α_i = argmin αᵀ Q_i α over α ≥ 0, Σ α = 1,
 *            Q_i[j][j'] = [j = j'] V_j + Σ_k ⟨h_{i,k} − h_{j,k},
 *                                            h_{i,k} − h_{j',k}⟩
 *            (the variance term Σ α_j² V_j plus the bias term
 *            ‖Σ_j α_j (h_i − h_j)‖², j, j' ∈ S_t)
 *   l. 14  φ_i ← Σ_{j∈S_t} α_{ij} φ_j, the heads after l. 6
 * A client outside S_t keeps its φ_i (stale until its next round).
 *
 * The QP, exactly (pflref_fedpac_qp, ref/algorithms/fedpac_qp.c): Q_i is positive semidefinite (V_j ≥ 0, the
 * bias term a Gram matrix), so a KKT point is a minimiser.  The supports
 * S ⊆ S_t are tried by size, then by the ascending value of Σ_{j∈S} 2^j
 * (j the position in S_t); for each, the bordered system
 *   [Q_SS 1; 1ᵀ 0] [α_S; μ] = [0; 1]
 * is solved by Gaussian elimination with partial pivoting, and α is taken
 * when the system is regular, α_S ≥ 0 and (Q α)_j ≥ −μ for j ∉ S.  A
 * minimiser of least support has a regular system (docs/algorithms/
 * fedpac.md proves it), so the search ends; the first one found is the
 * answer (the tie rule), and a client alone gets α = (1).  Rounding:
 * a pivot counts as 0 below FEDPAC_PIVOT_RTOL times the largest entry,
 * and the sign tests allow FEDPAC_KKT_RTOL (entries within it of 0 are
 * set to 0).  At most FEDPAC_QP_MAX participants a round (pflref_fedpac_check):
 * 2^m supports.
 *
 * Switches (value 0 first; docs/algorithms/fedpac.md):
 *   fedpac.distance  squared_l2 | mse: ‖f_θ(x) − c_y‖²/d (torch's
 *                    nn.MSELoss, JianXu95/FedPAC methods/fedpac.py:34,
 *                    :242; PFLlib d832e76f6a23 clientpac.py:16, :78)
 *   fedpac.alpha_small
 *                    exact | renormalised: every α_ij ≤ ε (fedpac.alpha_eps,
 *                    the code's 1e-3) set to 0, then α_i divided by its sum
 *                    (tools.py:133-140, :76-91) | raw: set to 0 only
 *                    (PFLlib serverpac.py:242, :166-174)
 *   fedpac.missing   none | own_start: from round 1 on, a class without a
 *                    global centroid aligns to the client's own centroid
 *                    at θ^(t) (methods/fedpac.py:177, :233-241)
 *   fedpac.centroid_weights
 *                    class_counts | uniform: c_k the plain mean (PFLlib
 *                    serverpac.py:178-193)
 * Presets official, official_run and pfllib: ref/engine/presets.c (none
 * reproduces cvxpy's iterative solve).
 *
 * The client optimizers (opt.*, ref/engine/optim.c; default the paper's
 * plain steps).  The authors build, in every client update, one
 * torch.optim.SGD over the classifier's parameters for l. 6 (lr 0.1 = η_φ,
 * methods/fedpac.py:189-195) and then a new one over the feature
 * extractor's for l. 7 (lr = η, :216-221), both momentum 0.5 and weight
 * decay 5e-4 on every parameter (requires_grad selects the blocks): slot
 * 0 and slot 1 here, each stepping its phase's blocks on that phase's loss
 * gradient, opt.state = reset.  PFLlib's clientpac.py steps both phases
 * with the client's one self.optimizer (clientbase.py:47, built once,
 * plain SGD at η): torch keeps its state per parameter tensor and skips a
 * tensor whose grad is None (the frozen phase's), so the one object is the
 * two slots kept per client (opt.state = client) with η_φ = η.
 *
 * Learning-rate decay (lr.*, ref/engine/lr.c; the paper and the authors'
 * code keep η and η_φ constant).  PFLlib's clientpac.py:95-96 steps the
 * ExponentialLR of that one optimizer after each train(), so both phases'
 * step sizes decay: η and η_φ each times γ^k, k client i's train() calls
 * before (lr.count = trainings, preset pfllib) or the round t.
 *
 * Batch normalisation in the feature extractor (batchnorm1d/batchnorm2d
 * layers of a layer list; the mlp's bn option is refused, fedpac_check.c):
 * torch's modes as PFLlib's clientpac.py runs them.  ll. 5 and 8 read
 * f_θ(x) in evaluation mode, on r_μ, r_v, so f_θ(x) is a function of x
 * alone (collect_protos under model.eval() and no_grad, :116-119; the
 * statistics of set_parameters, :108, after it); they move nothing.  Each
 * step of ll. 6-7 is a training pass on its batch (model.train(), :26):
 * the gradient through the batch's μ_B, s²_B, l. 7's alignment term on the
 * features of that same pass (rep at :68 enters :78), and the pass moves
 * r_μ, r_v (bn.running = update; pflref_bn_running_move), in l. 6 too
 * (torch moves buffers whatever requires_grad); the step leaves them
 * (gradient 0).  The authors' code (JianXu95/FedPAC methods/fedpac.py:165,
 * :173 with :69) runs its local steps after local_test's model.eval(), in
 * evaluation mode; their models have no batch normalisation, so that
 * reading is not a switch here (docs/algorithms/fedpac.md).
 *   bn.aggregate  average | parameters_only: average, the authors'
 *                 state_dict average (running.py:221 average_weights_
 *                 weighted, methods/fedpac.py:85-91 update_base_model
 *                 loads every key but the classifier's): r_μ, r_v are
 *                 body entries, averaged with θ and sent to every client;
 *                 parameters_only (preset pfllib; clientpac.py:105-107
 *                 set_parameters copies parameters() only, serverbase.py:
 *                 138-150): each v_i keeps its own r_μ, r_v (w⁰'s until it
 *                 first trains; ws->own), w takes the first participant's.
 *
 * Symbols:  θ ↔ the body entries of s->w and of every v_i   φ_i ↔ the head
 *           entries of s->v + i·P (Hn of them)   f_θ(x) ↔ ws->Phi rows (d)
 *           ĉ_{i,k} ↔ ws->C_i   c_k ↔ ws->C_bar (K × d; N_bar[k] = 0: none)
 *           V_i, h_i ↔ ws->V[i], ws->Hs + i·K·d   α_i ↔ ws->alpha
 *           λ, η_φ, τ_φ ↔ hyper->fedpac.lambda, eta_phi, tau_phi   η ↔ eta
 * Records: ROUND_BEGIN and SERVER "w" (θ in the body entries, w⁰'s head in
 * the head entries, never used); CLIENT_BEGIN, STEP, CLIENT_END "v" (the
 * client's (θ_i, φ_i) before l. 14); per participant NOTE "V" (1), "h"
 * (K × d), "C" (K × d, zero rows where absent), "n_C" (K), then after the
 * server "alpha_i" (N: α_{ij} at each j ∈ S_t, 0 elsewhere) and "phi" (Hn:
 * the combined head); per round NOTE "C_bar" (K × d) and "N_bar" (K: the
 * clients holding each class, 0 = no centroid).  `check --resync` is
 * refused (fedpac_resync_gap).
 * Evaluation: "personalized", v_i = (θ, φ_i).
 * Determinism: clients, samples and the server's sums in ascending order.
 * Cost per client: two body passes over D_i, one gradient per step (a body
 * forward and backward more per body step); the server O(2^m m³) each.
 * Batch normalisation adds an O(P) move of r_μ, r_v per step.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "algorithms/algorithms.h"
#include "engine/work.h"
#include "algorithms/body.h"
#include "algorithms/fedpac_qp.h"
#include "core/mca.h"
#include "engine/bn_own.h"
#include "models/features_bn.h"

static const char *const HEAD_LINE =
    "Alg. 1 l. 6: φ_i ← φ_i − η_φ ∇_φ ℓ(g_φ(f_θ(x)), y)";
static const char *const BODY_LINE =
    "Alg. 1 l. 7: θ_i ← θ_i − η ∇_θ [ℓ + λ ‖f_θ(x) − c_y‖²]";
static const char *const STAT_LINE =
    "Alg. 1 l. 5: V_i, h_{i,k} = p_{i,k} μ_{i,k} at θ^(t)";
static const char *const PROTO_LINE =
    "Alg. 1 l. 8: ĉ_{i,k} = (1/n_{i,k}) Σ_{y=k} f_{θ_i}(x)";
static const char *const CENTROID_LINE =
    "Alg. 1 l. 12: c_k = Σ_i n_{i,k} ĉ_{i,k} / Σ_i n_{i,k}";
static const char *const ALPHA_LINE =
    "Alg. 1 l. 13: α_i = argmin_{α≥0, Σα=1} αᵀ Q_i α";
static const char *const PHI_LINE = "Alg. 1 l. 14: φ_i ← Σ_j α_ij φ_j";
static const char *const SERVER_LINE =
    "Alg. 1 l. 11: θ ← Σ_{i∈S_t} (n_i / Σ_{j∈S_t} n_j) θ_i";

/* FedPAC's buffers (zero-filled).  C_bar and N_bar are carried from
 * round to round; the others are per step, client or round. */
typedef struct {
    pflref_work list; /* the allocations (ref/engine/work.h)               */
    double *w_t;      /* P: w at the round's start                         */
    double *g;        /* P: a gradient                                     */
    double *g_R;      /* P: ∇ of the alignment term (body entries)         */
    double *A;        /* n × d: the body's pre-activations (mlp)           */
    double *Phi;      /* n × d: f_θ(x)                                     */
    double *dPhi;     /* n × d: ∂R/∂f per sample                           */
    size_t *all;      /* n: 0, 1, …                                        */
    double *C_i;      /* K × d: client i's sums, then ĉ_{i,k}              */
    double *n_C;      /* K: n_{i,k}                                        */
    double *S2;       /* K: Σ ‖f_θ(x)‖² per class (statistics)             */
    double *C_sum;    /* K × d: the server's weighted sums                 */
    double *W_sum;    /* K: their weights' sums                            */
    double *N_new;    /* K: the clients holding each class this round      */
    double *C_bar;    /* K × d: c_k                                        */
    double *C_start;  /* K × d: client i's centroids at θ^(t) (own_start)  */
    double *N_bar;    /* K: the clients behind c_k (0: no centroid)        */
    double *V;        /* N: V_i of the round's participants                */
    double *Hs;       /* N × K·d: h_i of the round's participants          */
    double *Q;        /* M × M: Q_i                                        */
    double *B;        /* (M+1) × (M+1): a bordered system                  */
    double *z;        /* M + 1: its solution                               */
    double *alpha;    /* M: α_i over the round's participants              */
    double *alpha_N;  /* N: α_i by client id (the note)                    */
    double *phi_new;  /* M × Hn: the combined heads                        */
    unsigned char *head; /* P: 1 = a head entry (φ)                        */
    unsigned char *body; /* P: 1 = a body entry (θ): the optimizers' masks */
    unsigned char *own;  /* P: 1 = an entry the client keeps as its own:
                            r_μ, r_v under bn.aggregate = parameters_only */
    size_t d, K, Hn, M;  /* features, classes, head entries, participants  */
} fedpac_work;

static void *fedpac_work_alloc(const pflref_problem *problem,
                               const pflref_hyper *hyper)
{
    const pflref_model *m = &problem->model;
    const size_t P = m->P, d = pflref_body_size(m), K = m->k;
    const size_t n = pflref_largest_train(problem), N = problem->N;
    const size_t M = N < FEDPAC_QP_MAX ? N : FEDPAC_QP_MAX;
    fedpac_work *ws = calloc(1, sizeof *ws);
    if (ws == NULL)
        return NULL;
    ws->d = d;
    ws->K = K;
    ws->M = M;
    for (size_t b = 0; b < m->nblocks; b++)
        ws->Hn += m->blocks[b].is_head ? m->blocks[b].size : 0;
    /* ten allocations (PFLREF_WORK_MAX_BUFFERS): buffers of one shape
     * share one, each named below */
    ws->w_t = pflref_work_doubles(&ws->list, 3, P);
    ws->A = pflref_work_doubles(&ws->list, 3 * n, d);
    ws->all = pflref_work_indices(&ws->list, n, 1);
    ws->C_i = pflref_work_doubles(&ws->list, 4 * K, d);
    ws->n_C = pflref_work_doubles(&ws->list, 5, K);
    ws->V = pflref_work_doubles(&ws->list, 2, N);
    ws->Hs = pflref_work_doubles(&ws->list, N, K * d);
    ws->Q = pflref_work_doubles(&ws->list, M * M + (M + 1) * (M + 2) + M, 1);
    ws->phi_new = pflref_work_doubles(&ws->list, M, ws->Hn);
    ws->head = pflref_work_flags(&ws->list, P);
    ws->body = pflref_work_flags(&ws->list, P);
    ws->own = pflref_work_flags(&ws->list, P);
    /* req: fedpac.alg1.l1 */
    /* c^(0) is empty: N_bar = 0 for every class (zero-filled) */
    if (pflref_work_ready(ws) == NULL)
        return NULL;
    ws->g = ws->w_t + P;
    ws->g_R = ws->g + P;
    ws->Phi = ws->A + n * d;
    ws->dPhi = ws->Phi + n * d;
    ws->C_sum = ws->C_i + K * d;
    ws->C_bar = ws->C_sum + K * d;
    ws->C_start = ws->C_bar + K * d;
    ws->S2 = ws->n_C + K;
    ws->W_sum = ws->S2 + K;
    ws->N_new = ws->W_sum + K;
    ws->N_bar = ws->N_new + K;
    ws->alpha_N = ws->V + N;
    ws->B = ws->Q + M * M;
    ws->z = ws->B + (M + 1) * (M + 1);
    ws->alpha = ws->z + M + 1;
    for (size_t j = 0; j < n; j++)
        ws->all[j] = j;
    for (size_t b = 0; b < m->nblocks; b++)
        for (size_t p = 0; m->blocks[b].is_head && p < m->blocks[b].size; p++)
            ws->head[m->blocks[b].offset + p] = 1;
    for (size_t p = 0; p < P; p++)
        ws->body[p] = !ws->head[p];
    /* bn.aggregate = parameters_only: client i's r_μ, r_v stay in v_i */
    for (size_t b = 0; pflref_bn_keeps_own_in(problem, hyper) &&
                       b < m->nblocks; b++)
        for (size_t p = 0; m->blocks[b].is_buffer && p < m->blocks[b].size;
             p++)
            ws->own[m->blocks[b].offset + p] = 1;
    return ws;
}

/* f_θ(x) of the nb samples idx of D at x into ws->A, ws->Phi: with
 * batch normalisation in evaluation mode (train = 0: r_μ, r_v, so f_θ(x)
 * is a function of x alone) or as a training pass (train = 1: the batch's
 * μ_B, s²_B, left on the workspace for pflref_bn_running_move); without
 * it the one features pass. */
static pflref_status bn_features(const pflref_model *m, const double *x,
                                 const pflref_data *D, const size_t *idx,
                                 size_t nb, int train, pflref_state *s,
                                 fedpac_work *ws)
{
    if (!m->bn)
        return pflref_model_features(m, x, D, idx, nb, s->ws, ws->A,
                                     ws->Phi);
    /* req: fedpac.bn */
    return pflref_bn_features_mode(m, x, D, idx, nb, train, s->ws, ws->A,
                                   ws->Phi);
}

/* Phi := f_θ(x) of every sample of D at x (index order), batch
 * normalisation in evaluation mode (PFLlib clientpac.py:116-119
 * collect_protos under model.eval() and no_grad; the statistics of
 * set_parameters, :108, :137-187, after the last eval()). */
static pflref_status all_features(pflref_state *s, size_t i, const double *x,
                                  fedpac_work *ws, pflref_error *err)
{
    const pflref_model *m = &s->problem->model;
    const pflref_data *D = &s->problem->clients[i].train;
    pflref_status st = bn_features(m, x, D, ws->all, D->n, 0, s, ws);
    if (st != PFLREF_OK)
        return pflref_error_set(err, st, "model",
                                "features failed at round %zu, client %zu",
                                s->t, i);
    return PFLREF_OK;
}

/* Class sums of Phi (all of D) into C_i, their counts into n_C and the
 * sums of ‖f‖² into S2 (index order). */
static void class_sums(fedpac_work *ws, const pflref_data *D)
{
    const size_t d = ws->d;
    for (size_t j = 0; j < ws->K; j++) {
        ws->n_C[j] = 0.0;
        ws->S2[j] = 0.0;
        for (size_t u = 0; u < d; u++)
            ws->C_i[j * d + u] = 0.0;
    }
    for (size_t r = 0; r < D->n; r++) {
        const size_t y = (size_t)D->y[r];
        const double *f = ws->Phi + r * d;
        for (size_t u = 0; u < d; u++) {
            ws->C_i[y * d + u] += f[u];
            ws->S2[y] += f[u] * f[u];
        }
        ws->n_C[y] += 1.0;
    }
    for (size_t j = 0; j < ws->K; j++)
        for (size_t u = 0; ws->n_C[j] > 0.0 && u < d; u++)
            ws->C_i[j * d + u] /= ws->n_C[j];
}

/* l. 5: V_i and h_i at x = (θ^(t), φ_i), into ws->V[i] and ws->Hs row i. */
static pflref_status statistics(pflref_state *s, size_t i, const double *x,
                                fedpac_work *ws, const pflref_trace *trace,
                                pflref_error *err)
{
    const pflref_data *D = &s->problem->clients[i].train;
    const size_t d = ws->d, K = ws->K;
    const double n = (double)D->n;
    double *h_i = ws->Hs + i * K * d;
    pflref_status st = all_features(s, i, x, ws, err);
    if (st != PFLREF_OK)
        return st;
    class_sums(ws, D);
    for (size_t u = 0; u < K * d; u++)   /* fedpac.missing = own_start */
        ws->C_start[u] = ws->C_i[u];
    /* req: fedpac.stats */
    double V = 0.0;
    for (size_t k = 0; k < K; k++) {
        const double p = ws->n_C[k] / n;   /* p_{i,k} */
        double mu2 = 0.0;
        for (size_t u = 0; u < d; u++) {
            h_i[k * d + u] = p * ws->C_i[k * d + u];   /* p_{i,k} μ_{i,k} */
            mu2 += ws->C_i[k * d + u] * ws->C_i[k * d + u];
        }
        if (ws->n_C[k] > 0.0)
            V += p * (ws->S2[k] / ws->n_C[k]) - p * p * mu2;
    }
    ws->V[i] = V / n;
    pflref_trace_emit(trace, PFLREF_EV_NOTE, "train", (long)s->t, (long)i,
                      -1, "V", ws->V + i, 1, STAT_LINE);
    pflref_trace_emit(trace, PFLREF_EV_NOTE, "train", (long)s->t, (long)i,
                      -1, "h", h_i, K * d, STAT_LINE);
    return PFLREF_OK;
}

/* g := ∇_θ of l. 7's loss on batch q of b at x: the body entries of ∇ℓ,
 * plus λ (1/|b|) Σ J_fᵀ ∂R/∂f over the samples whose class has a centroid.
 * The head entries of g are not used. */
static pflref_status body_grad(pflref_state *s, size_t i, const double *x,
                               const pflref_batches *b, size_t q,
                               fedpac_work *ws, pflref_error *err)
{
    const pflref_model *m = &s->problem->model;
    const pflref_data *D = &s->problem->clients[i].train;
    const size_t d = ws->d, nb = b->step_off[q + 1] - b->step_off[q];
    const size_t *idx = b->idx + b->step_off[q];
    const double lambda = s->hyper->fedpac.lambda;   /* λ */
    const int mse = s->hyper->fedpac.distance == PFLREF_FEDPAC_DISTANCE_MSE;
    const int own = s->hyper->fedpac.missing ==
                        PFLREF_FEDPAC_MISSING_OWN_START && s->t > 0;
    pflref_status st = pflref_batch_grad(m, x, D, b, q, s->ws, ws->g,
                                         (long)s->t, (long)i, err);
    if (st != PFLREF_OK)
        return st;
    /* the features of the step's own (training) pass: with batch
     * normalisation on the batch's statistics (clientpac.py:68, :78: rep
     * of the one forward in train() mode enters both terms) */
    st = bn_features(m, x, D, idx, nb, 1, s, ws);
    if (st != PFLREF_OK)
        return pflref_error_set(err, st, "schedule",
                                "features failed at round %zu, client %zu, "
                                "step %zu", s->t, i, q + 1);
    /* req: fedpac.eq.align */
    int any = 0;
    for (size_t r = 0; r < nb; r++) {
        const size_t y = (size_t)D->y[idx[r]];
        /* ∂R/∂f = 2 (f − c_y) (· 1/d under mse), 0 without a centroid
         * (own_start: toward the client's own centroid at θ^(t)) */
        /* req: fedpac.missing */
        const int has = ws->N_bar[y] > 0.0;
        const double *c_y = (has ? ws->C_bar : ws->C_start) + y * d;
        const double c = has || own ? (mse ? 2.0 / (double)d : 2.0) : 0.0;
        any |= c != 0.0;
        for (size_t u = 0; u < d; u++)
            ws->dPhi[r * d + u] = c * (ws->Phi[r * d + u] - c_y[u]);
    }
    if (!any || lambda == 0.0)
        return PFLREF_OK;
    st = m->bn ? pflref_bn_body_grad_features(m, x, ws->dPhi, D,
                                              idx, nb, s->ws,
                                              ws->g_R)
               : pflref_model_body_grad_features(m, x, ws->A, ws->dPhi, D,
                                                 idx, nb, s->ws, ws->g_R);
    if (st != PFLREF_OK)
        return pflref_error_set(err, st, "schedule",
                                "body gradient failed at round %zu, client "
                                "%zu, step %zu", s->t, i, q + 1);
    for (size_t p = 0; p < s->P; p++)
        if (!ws->head[p])
            ws->g[p] += lambda * ws->g_R[p];
    return PFLREF_OK;
}

/* ll. 6-7: client i's τ_φ classifier steps, then its body steps, on x. */
static pflref_status local_update(pflref_state *s, size_t i, double *x,
                                  const pflref_batches *b, fedpac_work *ws,
                                  const pflref_trace *trace,
                                  pflref_error *err)
{
    const pflref_model *m = &s->problem->model;
    const pflref_data *D = &s->problem->clients[i].train;
    const pflref_fedpac_hyper *fp = &s->hyper->fedpac;
    const double eta = s->hyper->eta;   /* η */
    for (size_t q = 0; q < b->nsteps; q++) {
        const int head = q < fp->tau_phi;
        pflref_status st;
        if (head) {
            /* req: fedpac.alg1.l6 */
            const size_t nb = b->step_off[q + 1] - b->step_off[q];
            st = pflref_model_grad_blocks(m, x, D, b->idx + b->step_off[q],
                                          nb, ws->head, s->ws, ws->g, NULL);
            if (st != PFLREF_OK)
                return pflref_error_set(err, st, "schedule",
                                        "gradient failed at round %zu, "
                                        "client %zu, step %zu", s->t, i,
                                        q + 1);
        } else {
            /* req: fedpac.alg1.l7 */
            st = body_grad(s, i, x, b, q, ws, err);
            if (st != PFLREF_OK)
                return st;
        }
        /* batch normalisation: the step's training pass moves r_μ, r_v
         * (bn.running = update), in l. 6 too, θ frozen or not (torch's
         * train() mode moves a module's buffers in every forward: PFLlib
         * clientpac.py:26, :45, :68); no-op without it */
        /* req: fedpac.bn */
        st = pflref_bn_running_move(&s->hyper->bn, m, s->ws, x, (long)s->t,
                                    (long)i, (long)(q + 1), err);
        if (st != PFLREF_OK)
            return st;
        /* θ fixed in l. 6 (the head's entries move), φ fixed in l. 7 */
        int finite = 1;
        pflref_optim_state *opt = pflref_optim_get(s, i, head ? 0 : 1);
        if (opt != NULL) {
            /* the client optimizers (opt.*): the classifier's (slot 0, step
             * size η_φ) on the head's blocks, the body's (slot 1, η) on
             * the body's, each on the loss gradient of its phase */
            finite = pflref_optim_step(opt, m, head ? ws->head : ws->body,
                                       head ? fp->eta_phi : eta, ws->g, x);
        } else {
            for (size_t p = 0; p < s->P; p++) {
                if (ws->head[p] != head)
                    continue;
                x[p] -= (head ? fp->eta_phi : eta) * ws->g[p];
                finite &= isfinite(x[p]) != 0;
            }
        }
        if (!finite)
            return pflref_error_diverge(err, (long)s->t, (long)i,
                                        (long)(q + 1), "v");
        pflref_trace_emit(trace, PFLREF_EV_STEP, "train", (long)s->t,
                          (long)i, (long)(q + 1), "v", x, s->P,
                          head ? HEAD_LINE : BODY_LINE);
    }
    return PFLREF_OK;
}

/* l. 8 and the server's sums of l. 12: ĉ_{i,k} at the trained x, each
 * class k client i holds adding n_{i,k} ĉ_{i,k}. */
static pflref_status centroids(pflref_state *s, size_t i, const double *x,
                               fedpac_work *ws, const pflref_trace *trace,
                               pflref_error *err)
{
    const pflref_data *D = &s->problem->clients[i].train;
    const size_t d = ws->d, K = ws->K;
    pflref_status st = all_features(s, i, x, ws, err);
    if (st != PFLREF_OK)
        return st;
    /* req: fedpac.alg1.l8 */
    class_sums(ws, D);
    pflref_trace_emit(trace, PFLREF_EV_NOTE, "train", (long)s->t, (long)i,
                      -1, "C", ws->C_i, K * d, PROTO_LINE);
    pflref_trace_emit(trace, PFLREF_EV_NOTE, "train", (long)s->t, (long)i,
                      -1, "n_C", ws->n_C, K, PROTO_LINE);
    const int uniform = s->hyper->fedpac.centroid_weights ==
                        PFLREF_FEDPAC_CENTROIDS_UNIFORM;
    for (size_t k = 0; k < K; k++) {
        if (!(ws->n_C[k] > 0.0))
            continue;   /* client i does not hold class k */
        /* req: fedpac.centroid_weights */
        const double a = uniform ? 1.0 : ws->n_C[k];   /* n_{i,k} or 1 */
        for (size_t u = 0; u < d; u++)
            ws->C_sum[k * d + u] += a * ws->C_i[k * d + u];
        ws->W_sum[k] += a;
        ws->N_new[k] += 1.0;
    }
    return PFLREF_OK;
}

/* l. 12: c_k = C_sum[k] / W_sum[k] for every class some client of S_t
 * holds; the others have none from now on. */
static void centroids_publish(pflref_state *s, fedpac_work *ws,
                              const pflref_trace *trace)
{
    const size_t d = ws->d, K = ws->K;
    /* req: fedpac.alg1.l12 */
    for (size_t k = 0; k < K; k++) {
        ws->N_bar[k] = ws->N_new[k];
        for (size_t u = 0; u < d; u++)
            ws->C_bar[k * d + u] = ws->N_new[k] > 0.0
                                       ? ws->C_sum[k * d + u] / ws->W_sum[k]
                                       : 0.0;
    }
    pflref_trace_emit(trace, PFLREF_EV_NOTE, "train", (long)s->t, -1, -1,
                      "C_bar", ws->C_bar, K * d, CENTROID_LINE);
    pflref_trace_emit(trace, PFLREF_EV_NOTE, "train", (long)s->t, -1, -1,
                      "N_bar", ws->N_bar, K, CENTROID_LINE);
}

/* fedpac.alpha_small: every α_j ≤ ε set to 0, then (renormalised) α
 * divided by its sum; nothing under exact. */
static void alpha_small(fedpac_work *ws, size_t m, const pflref_hyper *h)
{
    const int mode = h->fedpac.alpha_small;
    if (mode == PFLREF_FEDPAC_ALPHA_EXACT)
        return;
    /* req: fedpac.alpha_small */
    double sum = 0.0;
    for (size_t j = 0; j < m; j++) {
        if (!(ws->alpha[j] > h->fedpac.alpha_eps))
            ws->alpha[j] = 0.0;
        sum += ws->alpha[j];
    }
    for (size_t j = 0; mode == PFLREF_FEDPAC_ALPHA_RENORMALISED && j < m; j++)
        ws->alpha[j] /= sum;
}

/* Q_i of participant a (client i = ids[a]) over the m participants. */
static void qp_matrix(fedpac_work *ws, const size_t *ids, size_t m, size_t a)
{
    const size_t L = ws->K * ws->d;
    const double *h_i = ws->Hs + ids[a] * L;
    /* req: fedpac.qp.matrix */
    for (size_t j = 0; j < m; j++)
        for (size_t c = 0; c < m; c++) {
            const double *h_j = ws->Hs + ids[j] * L;
            const double *h_c = ws->Hs + ids[c] * L;
            double q = j == c ? ws->V[ids[j]] : 0.0;
            for (size_t u = 0; u < L; u++)
                q += (h_i[u] - h_j[u]) * (h_i[u] - h_c[u]);
            ws->Q[j * m + c] = q;
        }
}

/* ll. 13-14 for every participant: α_i, then φ_i ← Σ_j α_ij φ_j (the
 * heads after l. 6, in the v_j), written once every α is found. */
static pflref_status combine_heads(pflref_state *s,
                                   const pflref_round_plan *plan,
                                   fedpac_work *ws, const pflref_trace *trace,
                                   pflref_error *err)
{
    const size_t m = plan->m;
    for (size_t a = 0; a < m; a++) {
        const size_t i = plan->clients[a];
        qp_matrix(ws, plan->clients, m, a);
        /* Q_i's entries are sums of products: rounded as a lower-precision
         * candidate's are when a precision check perturbs the run (off:
         * no-op), so the perturbed runs can take the QP's other face */
        pflref_mca_perturb(PFLREF_MCA_GRADIENT, ws->Q, m * m);
        if (!pflref_fedpac_qp(ws->Q, m, ws->alpha, ws->B, ws->z))
            return pflref_error_set(
                err, PFLREF_EDIVERGE, "schedule",
                "fedpac's classifier weights: no support of round %zu, "
                "client %zu passed the KKT tests (rounding)", s->t, i);
        alpha_small(ws, m, s->hyper);
        for (size_t j = 0; j < s->N; j++)
            ws->alpha_N[j] = 0.0;
        for (size_t j = 0; j < m; j++)
            ws->alpha_N[plan->clients[j]] = ws->alpha[j];
        pflref_trace_emit(trace, PFLREF_EV_NOTE, "train", (long)s->t,
                          (long)i, -1, "alpha_i", ws->alpha_N, s->N,
                          ALPHA_LINE);
        /* req: fedpac.alg1.l14 */
        double *phi = ws->phi_new + a * ws->Hn;
        for (size_t u = 0; u < ws->Hn; u++)
            phi[u] = 0.0;
        for (size_t j = 0; j < m; j++) {
            const double *v_j = s->v + plan->clients[j] * s->P;
            for (size_t p = 0, u = 0; p < s->P; p++)
                if (ws->head[p])
                    phi[u++] += ws->alpha[j] * v_j[p];
        }
        pflref_trace_emit(trace, PFLREF_EV_NOTE, "train", (long)s->t,
                          (long)i, -1, "phi", phi, ws->Hn, PHI_LINE);
    }
    for (size_t a = 0; a < m; a++) {
        double *v_i = s->v + plan->clients[a] * s->P;
        for (size_t p = 0, u = 0; p < s->P; p++)
            if (ws->head[p])
                v_i[p] = ws->phi_new[a * ws->Hn + u++];
    }
    return PFLREF_OK;
}

static void zero(double *x, size_t n)
{
    for (size_t p = 0; p < n; p++) x[p] = 0.0;
}

static pflref_status fedpac_round(pflref_state *s,
                                  const pflref_round_plan *plan,
                                  const pflref_trace *trace,
                                  pflref_error *err)
{
    fedpac_work *ws = s->extra;
    const size_t K = ws->K, d = ws->d;
    const double n_S = pflref_train_n(s->problem, plan->clients, plan->m);
    /* req: fedpac.alg1.l3 */
    pflref_round_begin(s, ws->w_t, trace);   /* w_t ← w, s->accum ← 0 */
    zero(ws->C_sum, K * d);
    zero(ws->W_sum, K);
    zero(ws->N_new, K);
    /* req: fedpac.alg1.l2, fedpac.alg1.l4 */
    for (size_t a = 0; a < plan->m; a++) {
        const size_t i = plan->clients[a];
        double *x = pflref_row(s->v, i, s->N, s->P);
        /* req: fedpac.alg1.l5 */
        /* θ_i ← θ^(t), φ_i its own; under bn.aggregate = parameters_only
         * r_μ, r_v its own too (PFLlib clientpac.py:105-107 copies
         * parameters() only) */
        for (size_t p = 0; p < s->P; p++)
            if (!ws->head[p] && !ws->own[p])
                x[p] = ws->w_t[p];
        pflref_client_begin(s, i, "v", x, NULL, trace);
        pflref_client_lr(s, i, 0, 1);  /* η, η_φ of i's update (lr.count) */
        pflref_optim_begin(s, i);   /* its two optimizers (opt.state) */
        pflref_status st = statistics(s, i, x, ws, trace, err);
        if (st == PFLREF_OK)
            st = local_update(s, i, x, &plan->batches[a], ws, trace, err);
        if (st != PFLREF_OK)
            return st;
        pflref_client_end(s, i, "v", x, trace);
        /* req: fedpac.alg1.l9 */
        st = centroids(s, i, x, ws, trace, err);
        if (st != PFLREF_OK)
            return st;
        /* req: fedpac.alg1.l11 */
        const double a_i = (double)s->problem->clients[i].train.n / n_S;
        for (size_t p = 0; p < s->P; p++)
            if (!ws->head[p] && !ws->own[p])
                s->accum[p] += a_i * x[p];
            else if (ws->own[p] &&
                     i == pflref_bn_first_upload(plan, plan->clients[0]))
                s->accum[p] = x[p];   /* the first uploader's r_μ, r_v
                                       * (serverbase.py:138-150) */
    }
    centroids_publish(s, ws, trace);
    /* req: fedpac.alg1.l13 */
    pflref_status st = combine_heads(s, plan, ws, trace, err);
    if (st != PFLREF_OK)
        return st;
    for (size_t p = 0; p < s->P; p++)   /* w's head: w⁰'s, never used */
        if (ws->head[p])
            s->accum[p] = ws->w_t[p];
    st = pflref_round_end(s, SERVER_LINE, trace, err);
    if (st != PFLREF_OK)
        return st;
    for (size_t i = 0; i < s->N; i++)   /* every v_i = (θ^(t+1), φ_i) */
        for (size_t p = 0; p < s->P; p++)
            if (!ws->head[p] && !ws->own[p])
                s->v[i * s->P + p] = s->w[p];
    return PFLREF_OK;
}

/* The centroids are in the NOTE records, but not reloaded: refused. */
static const char *fedpac_resync_gap(const pflref_hyper *hyper)
{
    (void)hyper;
    return "the global centroids c_k (fedpac's NOTE records C_bar and "
           "N_bar) are not reloaded from a candidate";
}

const pflref_algorithm pflref_fedpac = {
    .name = "fedpac",
    .title = "FedPAC (Xu, Tong, Huang, ICLR 2023, Alg. 1)",
    .has_global = 1,
    .has_personal = 1,
    .personal_name = "v",
    .n_eval = 1,
    .eval = {{"personalized", PFLREF_SOURCE_PERSONAL}},
    .check = pflref_fedpac_check,   /* ref/algorithms/fedpac_check.c */
    .work_alloc = fedpac_work_alloc,
    .work_free = pflref_work_free,
    .round = fedpac_round,
    .resync_gap = fedpac_resync_gap,
    .opt_slots = 2,   /* 0: the classifier's optimizer (l. 6), 1: the
                       * feature extractor's (l. 7): JianXu95/FedPAC
                       * methods/fedpac.py:194-195, :220-221 */
};
