/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/algorithms/fedproto.c: FedProto, Algorithm 1 of
 *   Y. Tan, G. Long, L. Liu, T. Zhou, Q. Lu, J. Jiang, C. Zhang,
 *   "FedProto: Federated Prototype Learning across Heterogeneous Clients",
 *   AAAI 2022, arXiv 2105.00243, with its Eqs. 4-6.
 *
 * No model is shared: each client i keeps its own model v_i (the paper's
 * F_i, an embedding f_i, the body, and a decision layer, the head), and the
 * clients and the server exchange class prototypes.  One round t (line
 * numbers as in trace/fedproto.req):
 *   Server   l. 3-5  for each client i ∈ S_t: C_i ← LocalUpdate(i, C̄)
 *            l. 6    C̄^(j) = Σ_{i∈N_j} (|D_{i,j}|/N_j) C_i^(j)     (Eq. 5)
 *                    N_j the clients of S_t holding class j, N_j (the
 *                    number) = Σ_{i∈N_j} |D_{i,j}|
 *            l. 7    every client receives {C̄^(j)}
 *   LocalUpdate(i, C̄):
 *            l. 1-2  for each local step, batch b of D_i:
 *            l. 4    L = (1/|b|) Σ_{(x,y)∈b} [L_S(F_i(x), y)
 *                                             + λ R(f_i(x), C̄^(y))] (Eq. 6)
 *            l. 5    v_i ← v_i − η ∇L
 *            l. 8    return C_i^(j) = (1/|D_{i,j}|) Σ_{(x,y)∈D_{i,j}} f_i(x)
 *                    with the trained model, for every class j with
 *                    D_{i,j} ≠ ∅                                       (Eq. 4)
 * R(f, C) = ‖f − C‖² (squared Euclidean distance).  A sample whose class
 * has no global prototype adds no R term (it still counts in 1/|b|); in
 * round 0 no class has one: the global set starts empty (l. 1 of the
 * server; the authors' code and PFLlib both start from an empty set).  The
 * new set holds exactly the classes the round's clients hold: a class no
 * client of S_t holds has no prototype in round t + 1.
 *
 * The gradient of λ R: ∂R/∂f = 2 (f − C̄^(y)), taken back through the body
 * (pflref_model_body_grad_features); the head takes L_S's gradient alone.
 *
 * Evaluation (docs/algorithms/fedproto.md): "local", the head (v_i
 * itself), and "prototype", ŷ = argmin_j R(f_i(x), C̄^(j)) over the
 * classes with a global prototype (ties: the lowest j); its loss is that
 * smallest distance, its accuracy the fraction ŷ = y.
 *
 * Switches (value 0 is the paper's):
 *   fedproto.distance = squared_l2 | mse: R/h, torch's nn.MSELoss over
 *     the batch's features (yuetan031/FedProto 97e42e2741e1 lib/update.py
 *     update_weights_het :161-171; PFLlib clientproto.py:52).
 *   fedproto.client_protos = trained | during_training: C_i^(j) the mean
 *     of f(x) over every (x, y = j) of every local step's batch, at the
 *     iterate before that step (update.py :177-181 with utils.py:205
 *     agg_func; PFLlib clientproto.py:56, :67).  A class the batches never
 *     show has no prototype.
 *   fedproto.weights = class_counts | uniform: C̄^(j) the plain mean over
 *     N_j (utils.py:221 proto_aggregation; PFLlib serverproto.py:107).
 * Batch normalisation in a layer list's body (issue 31; an mlp with bn is
 * refused): each local step is one training pass of v_i (torch's train(),
 * PFLlib clientproto.py:26, :42): L_S and f_i(x) on the batch's
 * statistics, ∇L back through that batch-coupled pass, and v_i's running
 * statistics move once (bn.running = update); the buffers never step.
 * Eq. 4's C_i^(j) under trained: f_i(x) of the trained model per sample,
 * an evaluation pass on v_i's running statistics (the paper's f_i(x), a
 * function of x; PFLlib's collect_protos, clientproto.py:79-99, under
 * model.eval()); under during_training the steps' training-pass features
 * (clientproto.py:56).  The prototype evaluation runs evaluation passes.
 * Nothing else moves, and no model travels: each client keeps its own
 * running statistics (bn.aggregate does not apply).
 * The open points of this reading of the paper (Eq. 5's normalisation,
 * Eq. 6's R per sample, LocalUpdate l. 3) are listed in
 * docs/algorithms/fedproto.md, "Open points of the reading".
 *
 * Symbols:  v_i ↔ s->v + i·P (P)   f_i(x) ↔ ws->Phi rows (h)
 *           C_i^(j) ↔ ws->C_i (K × h)   |D_{i,j}| ↔ ws->n_ij (K)
 *           C̄^(j) ↔ ws->C_bar (K × h)   |N_j| ↔ ws->N_bar (K; 0: none)
 *           λ ↔ hyper->fedproto.lambda   η ↔ hyper->eta
 * Records: client_begin / step / client_end "v"; per client, notes "C"
 * (K × h, zero rows where absent) and "n_C" (K: the features averaged
 * into each C_i^(j), 0 = none); per round, notes "C_bar" (K × h) and
 * "N_bar" (K: |N_j|, 0 = no prototype), which `check --resync` reloads.
 * Client optimizer (opt.*): each step is the optimizer's on ∇L.
 * Determinism: clients in ascending id, samples in index (batch) order,
 * the server's sums in ascending client id.
 * Cost per step: one gradient, one body forward and one body backward
 * pass; per client and round one body forward pass over D_i (trained).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "algorithms/algorithms.h"
#include "engine/work.h"
#include "algorithms/body.h"

static const char *const STEP_LINE =
    "LocalUpdate l. 5: v_i ← v_i − η ∇(L_S + λ R(f_i(x), C̄^(y)))";
/* The intermediates --trace prints and no record keeps (LocalUpdate
 * ll. 3–4): the batch's features, row r the r-th sample's (nb × h), and L
 * at the step's start point, recomputed for the trace (the step needs only
 * ∇L). */
static const char *const FEATURE_LINE =
    "LocalUpdate l. 3: f_i(x) for x ∈ b (row r: the batch's r-th sample)";
static const char *const LOSS_LINE =
    "LocalUpdate l. 4: L = (1/|b|) Σ_{(x,y)∈b} [L_S(F_i(x), y) + λ R(f_i(x), "
    "C̄^(y))] (R = 0 without C̄^(y))";
static const char *const PROTO_LINE =
    "Eq. 4: C_i^(j) = (1/|D_{i,j}|) Σ_{(x,y)∈D_{i,j}} f_i(x)";
static const char *const SERVER_LINE[] = {
    "Eq. 5: C̄^(j) = Σ_{i∈N_j} (|D_{i,j}|/N_j) C_i^(j)",
    "C̄^(j) = (1/|N_j|) Σ_{i∈N_j} C_i^(j) (fedproto.weights = uniform)"};

/* FedProto's buffers (zero-filled).  C_bar and N_bar are carried from
 * round to round; the others are per step, client or round. */
typedef struct {
    pflref_work list; /* the allocations (ref/engine/work.h)               */
    double *g;        /* P: ∇L                                             */
    double *g_R;      /* P: ∇ (1/|b|) Σ R on the body (the head's stay 0)  */
    double *A;        /* nb × h: the body's pre-activations (mlp)          */
    double *Phi;      /* nb × h: f_i(x) of the batch                       */
    double *dPhi;     /* nb × h: ∂R/∂f per sample                          */
    size_t *all;      /* n_max: 0, 1, …, the indices of a whole set        */
    double *C_i;      /* K × h: client i's sums, then C_i^(j)              */
    double *n_C;      /* K: the features summed into each row of C_i       */
    double *n_ij;     /* K: |D_{i,j}|                                      */
    double *C_sum;    /* K × h: the server's weighted sums                 */
    double *W_sum;    /* K: their weights' sums                            */
    double *N_new;    /* K: the clients holding each class this round      */
    double *C_bar;    /* K × h: C̄^(j)                                     */
    double *N_bar;    /* K: |N_j| of C̄^(j) (0: no prototype)              */
} fedproto_work;

static void *fedproto_work_alloc(const pflref_problem *problem,
                                 const pflref_hyper *hyper)
{
    (void)hyper;
    const size_t P = problem->model.P, h = pflref_body_size(&problem->model);
    const size_t K = problem->model.k, n = pflref_largest_train(problem);
    fedproto_work *ws = calloc(1, sizeof *ws);
    if (ws == NULL)
        return NULL;
    ws->g = pflref_work_doubles(&ws->list, P, 1);
    ws->g_R = pflref_work_doubles(&ws->list, P, 1);
    ws->A = pflref_work_doubles(&ws->list, n, h);
    ws->Phi = pflref_work_doubles(&ws->list, n, h);
    ws->dPhi = pflref_work_doubles(&ws->list, n, h);
    ws->all = pflref_work_indices(&ws->list, n, 1);
    ws->C_i = pflref_work_doubles(&ws->list, K, h);
    ws->n_C = pflref_work_doubles(&ws->list, K, 1);
    ws->n_ij = pflref_work_doubles(&ws->list, K, 1);
    ws->C_sum = pflref_work_doubles(&ws->list, K, h);
    ws->W_sum = pflref_work_doubles(&ws->list, K, 1);
    ws->N_new = pflref_work_doubles(&ws->list, K, 1);
    ws->C_bar = pflref_work_doubles(&ws->list, K, h);
    ws->N_bar = pflref_work_doubles(&ws->list, K, 1);
    /* req: fedproto.alg1.server.l1 */
    /* C̄ starts empty: N_bar = 0 for every class (zero-filled) */
    if (pflref_work_ready(ws) == NULL)
        return NULL;
    for (size_t j = 0; j < n; j++)
        ws->all[j] = j;
    return ws;
}

/* The model must be a classifier with an embedding f_i (a body): an mlp
 * without batch normalisation, or a layer list whose last layer is dense
 * after at least one layer (batchnorm layers allowed in the body). */
static pflref_status check_model(const pflref_model *m, pflref_error *err)
{
    static const pflref_body_words words = {
        "fedproto needs an embedding f_i(x) and a decision layer: an "
        "mlp (its hidden layer) or a layer list (every layer before the "
        "last dense one); the model is ", ", which has no embedding",
        "fedproto needs an embedding f_i(x): the layer list's last "
        "layer must be dense (the decision layer) after at least one "
        "layer (the embedding)",
        "fedproto takes batch normalisation in a layer list's body "
        "(batchnorm1d/batchnorm2d layers), not in an mlp (model.bn): "
        "spell the model as a layer list",
        "fedproto needs a classifier (cross-entropy): its prototypes "
        "are per class, C̄^(y) for the label y"};
    /* req: fedproto.model */
    if (!(m->bn && m->kind == PFLREF_MODEL_LAYERS))
        return pflref_body_check(m, &words, err);
    /* pflref_body_check's tests but its refusal of batch normalisation */
    pflref_model plain = *m;
    plain.bn = 0;
    return pflref_body_check(&plain, &words, err);
}

/* Whether round t gives at least one global prototype: a client of S_t
 * (trained: every client holds a sample) or, under during_training, a
 * scheduled sample of one. */
static int round_gives_prototype(const pflref_round_plan *r, int during)
{
    if (!during)
        return r->m > 0;
    for (size_t j = 0; j < r->m; j++)
        if (r->batches[j].nsteps > 0 &&
            r->batches[j].step_off[r->batches[j].nsteps] > 0)
            return 1;
    return 0;
}

static pflref_status fedproto_check(const pflref_problem *problem,
                                    const pflref_hyper *hyper,
                                    const pflref_schedule *schedule,
                                    const unsigned char *mask,
                                    pflref_error *err)
{
    (void)mask;
    pflref_status st = check_model(&problem->model, err);
    if (st != PFLREF_OK)
        return st;
    const size_t n_max = pflref_largest_train(problem);
    for (size_t t = 0; t < schedule->T; t++)
        for (size_t j = 0; j < schedule->rounds[t].m; j++) {
            const pflref_batches *b = &schedule->rounds[t].batches[j];
            for (size_t q = 0; q < b->nsteps; q++) {
                const size_t nb = b->step_off[q + 1] - b->step_off[q];
                if (nb <= n_max)
                    continue;
                char where[PFLREF_WHERE_MAX];
                snprintf(where, sizeof where,
                         "schedule.rounds[%zu].batches[%zu][%zu]", t, j, q);
                return pflref_error_set(
                    err, PFLREF_EINVAL, where,
                    "fedproto takes batches of at most %zu samples (the "
                    "largest training set, which sizes its feature "
                    "buffers); this one has %zu (indices repeated)", n_max,
                    nb);
            }
        }
    /* req: fedproto.eval.undefined */
    const int during = hyper->fedproto.client_protos ==
                       PFLREF_FEDPROTO_PROTOS_DURING_TRAINING;
    if (schedule->T == 0 ||
        !round_gives_prototype(&schedule->rounds[schedule->T - 1], during)) {
        char where[PFLREF_WHERE_MAX];
        if (schedule->T == 0)
            snprintf(where, sizeof where, "schedule.rounds");
        else
            snprintf(where, sizeof where, "schedule.rounds[%zu]",
                     schedule->T - 1);
        return pflref_error_set(
            err, PFLREF_EINVAL, where,
            "fedproto's evaluation by the nearest global prototype needs "
            "C̄ after the last round, and %s gives no prototype (%s)",
            schedule->T == 0 ? "the schedule" : "its last round",
            schedule->T == 0 ? "no round"
                             : "no client, or no scheduled sample under "
                               "fedproto.client_protos = during_training");
    }
    return PFLREF_OK;
}

/* R(f, C) = ‖f − C‖² (· 1/h under mse) */
static double distance(const double *f, const double *c, size_t h, int mse)
{
    double sq = 0.0;
    for (size_t u = 0; u < h; u++)
        sq += (f[u] - c[u]) * (f[u] - c[u]);
    return mse ? sq / (double)h : sq;
}

/* Add the nb feature rows Phi of the samples idx of D to the class sums
 * C_i and counts n_C (Eq. 4's Σ, in sample order). */
static void add_features(fedproto_work *ws, const pflref_data *D,
                         const size_t *idx, size_t nb, size_t h)
{
    for (size_t b = 0; b < nb; b++) {
        const size_t y = (size_t)D->y[idx[b]];
        for (size_t u = 0; u < h; u++)
            ws->C_i[y * h + u] += ws->Phi[b * h + u];
        ws->n_C[y] += 1.0;
    }
}

/* g := ∇L(v_i; b) of LocalUpdate l. 4 on batch q of b: ∇ mean L_S, plus
 * λ (1/|b|) Σ J_fᵀ ∂R/∂f over the samples whose class has a global
 * prototype; under during_training the batch's features join C_i. */
static pflref_status step_grad(pflref_state *s, size_t i, double *v_i,
                               const pflref_batches *b, size_t q,
                               fedproto_work *ws, const pflref_trace *trace,
                               pflref_error *err)
{
    const pflref_model *m = &s->problem->model;
    const pflref_data *D = &s->problem->clients[i].train;
    const pflref_fedproto_hyper *fp = &s->hyper->fedproto;
    const size_t h = pflref_body_size(m), nb = b->step_off[q + 1] - b->step_off[q];
    const size_t *idx = b->idx + b->step_off[q];
    const int mse = fp->distance == PFLREF_FEDPROTO_DISTANCE_MSE;
    /* req: fedproto.eq6 */
    pflref_status st = pflref_batch_grad(m, v_i, D, b, q, s->ws, ws->g,
                                         (long)s->t, (long)i, err);
    if (st != PFLREF_OK)
        return st;
    /* req: fedproto.alg1.local.l3 */
    st = m->bn ? pflref_model_features_mode(m, v_i, D, idx, nb, s->ws, 1,
                                            ws->Phi)
               : pflref_model_features(m, v_i, D, idx, nb, s->ws, ws->A,
                                       ws->Phi);
    if (st != PFLREF_OK)
        return pflref_error_set(err, st, "schedule",
                                "features failed at round %zu, client %zu, "
                                "step %zu", s->t, i, q + 1);
    /* req: fedproto.bn */
    /* the step's training pass (the batch's statistics, the last on s->ws)
     * moves v_i's r_μ, r_v once */
    st = pflref_bn_running_move(&s->hyper->bn, m, s->ws, v_i, (long)s->t,
                                (long)i, (long)(q + 1), err);
    if (st != PFLREF_OK)
        return st;
    pflref_trace_emit(trace, PFLREF_EV_INTERMEDIATE, "train", (long)s->t,
                      (long)i, (long)(q + 1), "f", ws->Phi, nb * h,
                      FEATURE_LINE);
    if (fp->client_protos == PFLREF_FEDPROTO_PROTOS_DURING_TRAINING)
        add_features(ws, D, idx, nb, h);
    int any = 0;
    for (size_t r = 0; r < nb; r++) {
        const size_t y = (size_t)D->y[idx[r]];
        /* ∂R/∂f = 2 (f − C̄^(y)) (· 1/h), 0 without a global prototype */
        const double c = ws->N_bar[y] > 0.0 ? (mse ? 2.0 / (double)h : 2.0)
                                            : 0.0;
        any |= c != 0.0;
        for (size_t u = 0; u < h; u++)
            ws->dPhi[r * h + u] =
                c * (ws->Phi[r * h + u] - ws->C_bar[y * h + u]);
    }
    if (!any || fp->lambda == 0.0)
        return PFLREF_OK;
    st = m->bn ? pflref_model_body_grad_train(m, v_i, D, idx, nb, ws->dPhi,
                                              s->ws, ws->g_R)
               : pflref_model_body_grad_features(m, v_i, ws->A, ws->dPhi, D,
                                                 idx, nb, s->ws, ws->g_R);
    if (st != PFLREF_OK)
        return pflref_error_set(err, st, "schedule",
                                "body gradient failed at round %zu, client "
                                "%zu, step %zu", s->t, i, q + 1);
    /* req: fedproto.alg1.local.l4 */
    /* ∇L = ∇L_S + λ ∇R */
    for (size_t p = 0; p < s->P; p++)
        ws->g[p] += fp->lambda * ws->g_R[p];
    return PFLREF_OK;
}

/* L of LocalUpdate l. 4 at v_i on batch q, for --trace: L_S's batch mean
 * and λ times the mean of R(f_i(x), C̄^(y)) over the batch's features
 * ws->Phi (step_grad's, still there); R = 0 without C̄^(y), as in ∇L.
 * L_S's pass runs on tws, a workspace of the trace's own: the run's (its
 * batch-norm statistics, its pass counts) is left as the step left it. */
static pflref_status trace_loss(pflref_state *s, size_t i, const double *v_i,
                                const pflref_batches *b, size_t q,
                                const fedproto_work *ws,
                                pflref_model_workspace *tws,
                                const pflref_trace *trace, pflref_error *err)
{
    const pflref_model *m = &s->problem->model;
    const pflref_data *D = &s->problem->clients[i].train;
    const pflref_fedproto_hyper *fp = &s->hyper->fedproto;
    const size_t h = pflref_body_size(m), nb = b->step_off[q + 1] - b->step_off[q];
    const size_t *idx = b->idx + b->step_off[q];
    const int mse = fp->distance == PFLREF_FEDPROTO_DISTANCE_MSE;
    double L, R = 0.0;
    pflref_status st = pflref_model_loss(m, v_i, D, idx, nb, tws, &L);
    if (st != PFLREF_OK)
        return pflref_error_set(err, st, "schedule",
                                "the loss failed at round %zu, client %zu, "
                                "step %zu", s->t, i, q + 1);
    for (size_t r = 0; r < nb; r++) {
        const size_t y = (size_t)D->y[idx[r]];
        if (ws->N_bar[y] > 0.0)
            R += distance(ws->Phi + r * h, ws->C_bar + y * h, h, mse);
    }
    L += fp->lambda * (R / (double)nb);
    pflref_trace_emit(trace, PFLREF_EV_INTERMEDIATE, "train", (long)s->t,
                      (long)i, (long)(q + 1), "L", &L, 1, LOSS_LINE);
    return PFLREF_OK;
}

/* LocalUpdate(i, C̄), ll. 1-5: the local steps of client i on its
 * scheduled batches. */
static pflref_status local_update(pflref_state *s, size_t i, double *v_i,
                                  const pflref_batches *b, fedproto_work *ws,
                                  const pflref_trace *trace,
                                  pflref_error *err)
{
    const pflref_model *m = &s->problem->model;
    /* --trace's L (trace_loss) on a workspace of its own; not for a model
     * with dropout, whose every training pass takes the run's next masks */
    pflref_model_workspace *tws = NULL;
    if (trace != NULL && trace->emit != NULL &&
        pflref_model_dropout_layers(m) == 0) {
        size_t most = 1;
        for (size_t q = 0; q < b->nsteps; q++)
            if (b->step_off[q + 1] - b->step_off[q] > most)
                most = b->step_off[q + 1] - b->step_off[q];
        tws = pflref_model_workspace_alloc(m, most);
    }
    pflref_status st = PFLREF_OK;
    /* req: fedproto.alg1.local.l1, fedproto.alg1.local.l2 */
    for (size_t q = 0; q < b->nsteps; q++) {
        st = step_grad(s, i, v_i, b, q, ws, trace, err);
        if (st != PFLREF_OK)
            break;
        /* req: fedproto.alg1.local.l4 */
        if (tws != NULL)
            st = trace_loss(s, i, v_i, b, q, ws, tws, trace, err);
        if (st != PFLREF_OK)
            break;
        /* req: fedproto.alg1.local.l5 */
        pflref_optim_state *opt = pflref_optim_get(s, i, 0);
        const int finite =
            opt != NULL
                ? pflref_optim_step(opt, m, NULL, s->hyper->eta, ws->g, v_i)
                : pflref_blocks_step(m, NULL, s->hyper->eta, ws->g, v_i);
        if (!finite) {
            st = pflref_error_diverge(err, (long)s->t, (long)i, (long)(q + 1),
                                      "v");
            break;
        }
        pflref_trace_emit(trace, PFLREF_EV_STEP, "train", (long)s->t,
                          (long)i, (long)(q + 1), "v", v_i, s->P, STEP_LINE);
    }
    pflref_model_workspace_free(tws);
    return st;
}

/* l. 8 / Eq. 4: C_i^(j) = (sum of C_i's row j) / n_C[j] for the classes
 * with features; under trained, the features of all of D_i at the
 * trained v_i first.  Also |D_{i,j}| into n_ij. */
static pflref_status client_prototypes(pflref_state *s, size_t i,
                                       const double *v_i, fedproto_work *ws,
                                       pflref_error *err)
{
    const pflref_model *m = &s->problem->model;
    const pflref_data *D = &s->problem->clients[i].train;
    const size_t h = pflref_body_size(m), K = m->k;
    for (size_t j = 0; j < K; j++)
        ws->n_ij[j] = 0.0;
    for (size_t r = 0; r < D->n; r++)
        ws->n_ij[(size_t)D->y[r]] += 1.0;
    if (s->hyper->fedproto.client_protos == PFLREF_FEDPROTO_PROTOS_TRAINED) {
        /* req: fedproto.eq4 */
        pflref_status st =
            m->bn ? pflref_model_features_mode(m, v_i, D, ws->all, D->n,
                                               s->ws, 0, ws->Phi)
                  : pflref_model_features(m, v_i, D, ws->all, D->n, s->ws,
                                          ws->A, ws->Phi);
        if (st != PFLREF_OK)
            return pflref_error_set(err, st, "model",
                                    "features failed at round %zu, client "
                                    "%zu", s->t, i);
        add_features(ws, D, ws->all, D->n, h);
    }
    for (size_t j = 0; j < K; j++)
        for (size_t u = 0; ws->n_C[j] > 0.0 && u < h; u++)
            ws->C_i[j * h + u] /= ws->n_C[j];
    return PFLREF_OK;
}

/* The server's sums of l. 6 from client i's prototypes: each class j with
 * a prototype adds weight · C_i^(j), weight |D_{i,j}| (Eq. 5) or 1. */
static void server_add(fedproto_work *ws, size_t K, size_t h, int uniform)
{
    for (size_t j = 0; j < K; j++) {
        if (!(ws->n_C[j] > 0.0))
            continue;   /* D_{i,j} = ∅: client i ∉ N_j */
        const double a = uniform ? 1.0 : ws->n_ij[j];
        for (size_t u = 0; u < h; u++)
            ws->C_sum[j * h + u] += a * ws->C_i[j * h + u];
        ws->W_sum[j] += a;
        ws->N_new[j] += 1.0;
    }
}

/* l. 6-7: C̄^(j) = C_sum[j] / W_sum[j] for every class some client of
 * S_t holds; the others have none from now on.  Published as the notes
 * C_bar and N_bar. */
static void server_publish(pflref_state *s, fedproto_work *ws, size_t K,
                           size_t h, const pflref_trace *trace)
{
    const int uniform =
        s->hyper->fedproto.weights == PFLREF_FEDPROTO_WEIGHTS_UNIFORM;
    /* req: fedproto.alg1.server.l6, fedproto.eq5 */
    for (size_t j = 0; j < K; j++) {
        ws->N_bar[j] = ws->N_new[j];
        for (size_t u = 0; u < h; u++)
            ws->C_bar[j * h + u] = ws->N_new[j] > 0.0
                                       ? ws->C_sum[j * h + u] / ws->W_sum[j]
                                       : 0.0;
    }
    /* req: fedproto.alg1.server.l7 */
    pflref_trace_emit(trace, PFLREF_EV_NOTE, "train", (long)s->t, -1, -1,
                      "C_bar", ws->C_bar, K * h, SERVER_LINE[uniform]);
    pflref_trace_emit(trace, PFLREF_EV_NOTE, "train", (long)s->t, -1, -1,
                      "N_bar", ws->N_bar, K, SERVER_LINE[uniform]);
}

static void zero(double *x, size_t n)
{
    for (size_t p = 0; p < n; p++)
        x[p] = 0.0;
}

static pflref_status fedproto_round(pflref_state *s,
                                    const pflref_round_plan *plan,
                                    const pflref_trace *trace,
                                    pflref_error *err)
{
    fedproto_work *ws = s->extra;
    const pflref_model *m = &s->problem->model;
    const size_t K = m->k, h = pflref_body_size(m);
    const int uniform =
        s->hyper->fedproto.weights == PFLREF_FEDPROTO_WEIGHTS_UNIFORM;
    zero(ws->C_sum, K * h);
    zero(ws->W_sum, K);
    zero(ws->N_new, K);
    /* req: fedproto.alg1.server.l2, fedproto.alg1.server.l3 */
    for (size_t j = 0; j < plan->m; j++) {
        const size_t i = plan->clients[j];
        double *v_i = pflref_row(s->v, i, s->N, s->P);
        pflref_client_begin(s, i, "v", v_i, NULL, trace);
        pflref_client_lr(s, i, 0, 1);  /* η of i's update (lr.count) */
        pflref_optim_begin(s, i);      /* its optimizer (opt.state) */
        zero(ws->C_i, K * h);
        zero(ws->n_C, K);
        /* req: fedproto.alg1.server.l4 */
        pflref_status st = local_update(s, i, v_i, &plan->batches[j], ws,
                                        trace, err);
        if (st == PFLREF_OK)
            st = client_prototypes(s, i, v_i, ws, err);
        if (st != PFLREF_OK)
            return st;
        pflref_client_end(s, i, "v", v_i, trace);
        /* req: fedproto.alg1.local.l8 */
        pflref_trace_emit(trace, PFLREF_EV_NOTE, "train", (long)s->t,
                          (long)i, -1, "C", ws->C_i, K * h, PROTO_LINE);
        pflref_trace_emit(trace, PFLREF_EV_NOTE, "train", (long)s->t,
                          (long)i, -1, "n_C", ws->n_C, K, PROTO_LINE);
        server_add(ws, K, h, uniform);
    }
    server_publish(s, ws, K, h, trace);
    return PFLREF_OK;
}

/* Client i's nearest-prototype predictor on D: for each sample (index
 * order) f = f_i(x) at the final v_i, ŷ = argmin_j R(f, C̄^(j)) over the
 * classes with a prototype (the lowest j on a tie); loss = the mean of
 * that R, accuracy = the fraction ŷ = y. */
static pflref_status fedproto_evaluate(const pflref_state *s, size_t i,
                                       const pflref_data *D, pflref_eval *out)
{
    const pflref_model *m = &s->problem->model;
    fedproto_work *ws = s->extra;
    const size_t K = m->k, h = pflref_body_size(m);
    const int mse = s->hyper->fedproto.distance ==
                    PFLREF_FEDPROTO_DISTANCE_MSE;
    const double *v_i = s->v + i * s->P;
    double loss = 0.0, correct = 0.0;
    if (D->n == 0)
        return PFLREF_EINVAL;   /* nothing to evaluate (as the models') */
    /* req: fedproto.eval.proto */
    for (size_t r = 0; r < D->n; r++) {
        pflref_status st =
            m->bn ? pflref_model_features_mode(m, v_i, D, &r, 1, s->ws, 0,
                                               ws->Phi)
                  : pflref_model_features(m, v_i, D, &r, 1, s->ws, ws->A,
                                          ws->Phi);
        if (st != PFLREF_OK)
            return st;
        size_t best = K;
        double d_best = 0.0;
        for (size_t j = 0; j < K; j++) {
            if (!(ws->N_bar[j] > 0.0))
                continue;
            const double d = distance(ws->Phi, ws->C_bar + j * h, h, mse);
            if (best == K || d < d_best) {
                best = j;
                d_best = d;
            }
        }
        if (best == K)
            return PFLREF_EINTERNAL;   /* fedproto_check: C̄ is not empty */
        loss += d_best;
        correct += (double)(best == (size_t)D->y[r]);
    }
    out->n = D->n;
    out->loss = loss / (double)D->n;
    out->mse = NAN;
    out->accuracy = correct / (double)D->n;
    return PFLREF_OK;
}

/* check --resync: the global prototypes after round t are the notes
 * C_bar and N_bar of that round. */
static void fedproto_load_state(pflref_state *s, pflref_state_loader load,
                                void *ctx, long t)
{
    fedproto_work *ws = s->extra;
    const pflref_model *m = &s->problem->model;
    const size_t K = m->k, h = pflref_body_size(m);
    load(ctx, PFLREF_EV_NOTE, "C_bar", t, -1, ws->C_bar, K * h);
    load(ctx, PFLREF_EV_NOTE, "N_bar", t, -1, ws->N_bar, K);
}

const pflref_algorithm pflref_fedproto = {
    .name = "fedproto",
    .title = "FedProto (Tan et al., AAAI 2022, Alg. 1)",
    .has_personal = 1,
    .personal_name = "v",
    .n_eval = 2,
    .eval = {{"local", PFLREF_SOURCE_PERSONAL},
             {"prototype", PFLREF_SOURCE_OWN}},
    .check = fedproto_check,
    .work_alloc = fedproto_work_alloc,
    .work_free = pflref_work_free,
    .round = fedproto_round,
    .opt_slots = 1,   /* LocalUpdate's optimizer */
    .load_state = fedproto_load_state,
    .evaluate_own = fedproto_evaluate,
};
