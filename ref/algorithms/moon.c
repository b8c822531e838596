/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/algorithms/moon.c: MOON, Algorithm 1 ("the MOON framework") of
 *   Q. Li, B. He, D. Song, "Model-Contrastive Federated Learning",
 *   CVPR 2021, arXiv 2103.16257v1, with the local loss of its Sec. 3.3.2
 *   (eqs. (3)–(5)).
 *
 * The box (Alg. 1; its numbers, as in trace/moon.req), checked against
 * the paper's text.  Input: T, N, E, τ, η, μ; Output: the final model w^T.
 *   l. 1–2   Server executes: initialize w⁰ (the spec's init)
 *   l. 3–6   for t = 0, 1, …, T − 1: for i = 1, 2, …, N in parallel:
 *            send the global model w^t to P_i;
 *            w_i^t ← PartyLocalTraining(i, w^t)
 *   l. 7     w^{t+1} ← Σ_{k=1}^N (|D^i|/|D|) w_k^t  (the box's mixed k/i
 *            index: the weight of party k is |D^k|/|D|, eq. (2))
 *   l. 8     return w^T (the result's final global model)
 *   l. 9     PartyLocalTraining(i, w^t):
 *   l. 10    w_i^t ← w^t
 *   l. 11–12 for epoch i = 1..E, for each batch b = {x, y} of D^i:
 *   l. 13      ℓ_sup ← CrossEntropyLoss(F_{w_i^t}(x), y)
 *   l. 14      z ← R_{w_i^t}(x)
 *   l. 15      z_glob ← R_{w^t}(x)
 *   l. 16      z_prev ← R_{w_i^{t−1}}(x)
 *   l. 17      ℓ_con ← −log( e^{sim(z, z_glob)/τ} /
 *                      (e^{sim(z, z_glob)/τ} + e^{sim(z, z_prev)/τ}) )
 *   l. 18      ℓ ← ℓ_sup + μ ℓ_con
 *   l. 19      w_i^t ← w_i^t − η ∇ℓ
 *   l. 20    return w_i^t
 * l. 17 is eq. (3), l. 18 eq. (4) (ℓ = ℓ_sup(w_i^t; (x, y)) +
 * μ ℓ_con(w_i^t; w_i^{t−1}; w^t; x)), whose expectation over D^i is the
 * local objective, eq. (5).  ℓ_sup and ℓ_con are batch means (the
 * authors' code's CrossEntropyLoss); sim is the cosine similarity.  ℓ_sup
 * is the model's own loss: Sec. 3.3.2 calls it "a typical loss term (e.g.,
 * cross-entropy loss)" (cross-entropy for a classifier, the squared loss
 * of a regression model).
 *
 * The representation R_w(x) (Sec. 3.3.1: "the network before the output
 * layer", after the base encoder and the projection head) is the
 * model's body (include/pflref/model.h, "Body and head"): an mlp's hidden
 * layer φ = σ(W1 x + b1), or everything before a layer list's last dense
 * layer.  A model without one (quadratic, linear, softmax) is refused by
 * moon_check, as is an mlp with batch normalisation (model.bn; its
 * layer-list spelling runs).
 *
 * Batch normalisation in a layer list's body (issue 31; PyTorch's
 * semantics, where a representation of a batch is computed with that
 * batch's statistics in train() mode).  Per local step on batch b:
 *   l. 13–14  one training pass of w_i^t: ℓ_sup and z = R_{w_i^t}(x) on
 *             the batch's μ_B, s²_B, and ∇ℓ through that pass (the
 *             batchnorm backward couples the samples); the pass moves
 *             w_i^t's r_μ, r_v once (bn.running = update), as net(x) in
 *             train() mode in both codes (QinbinLi/MOON main.py:294;
 *             PFLlib clientmoon.py:24, :39-40);
 *   l. 15–16  moon.passes = eval (the default): z_glob, z_prev from
 *             evaluation passes of w^t and w_i^{t−1}, each on its own
 *             running statistics, so R_w(x) is a function of x as the
 *             paper writes it and nothing moves (the authors' code:
 *             global_model.eval() main.py:486, the previous nets' eval()
 *             :540, :547, called at :295, :302); moon.passes = train:
 *             training passes on the batch's statistics (PFLlib
 *             clientmoon.py:43-44: old_model, a deepcopy of the model in
 *             train() mode, :17, :53, and the server's global model,
 *             deepcopy(uploaded_models[0]) of a train()-mode model,
 *             serverbase.py:141); the running statistics they move in
 *             PFLlib are never read (the old model is replaced at :53, the
 *             global's at serverbase.py:141), so here nothing moves.
 * What travels (bn.aggregate): average (the authors' state_dict average,
 * main.py:508-514, 523: w^{t+1}'s r_μ, r_v are the |D^i|-weighted mean,
 * which the next round's eval()-mode z_glob reads); parameters_only
 * (PFLlib: set_parameters copies parameters() only, clientmoon.py:62-66,
 * so w_i^t starts from w^t's parameters and party i's own r_μ, r_v, those
 * of its w_i^{t−1} (w⁰'s before its first training: :17); w^{t+1}'s are
 * the first participant's, serverbase.py:141).
 *
 * The gradient of ℓ_con (docs/algorithms/moon.md derives it): per sample,
 * with a = z_glob, b = z_prev, c_a = sim(z, a), c_b = sim(z, b) and
 * p = e^{c_b/τ} / (e^{c_a/τ} + e^{c_b/τ}) (the softmax's weight of the
 * negative pair),
 *   ∂ℓ_con,j/∂z = (p/τ) (∇_z sim(z, b) − ∇_z sim(z, a)),
 *   ∇_z sim(z, a) = a/(‖z‖ ‖a‖) − sim(z, a) z/‖z‖²,
 * taken back through the body (pflref_model_body_grad_features); the head
 * takes ℓ_sup's gradient alone.  A zero representation (‖z‖, ‖a‖ or ‖b‖
 * = 0: sim undefined) is a defined failure (PFLREF_EDIVERGE, "z").
 *
 * Parties and sampling: the box runs every party; the text after it
 * (Sec. 3.3.2) keeps MOON "applicable when only a sample set of parties
 * participate", each party keeping "the latest local model that the party
 * has, even though it may not be updated in round (t − 1) (e.g.,
 * w_i^{t−1} = w_i^{t−2})".  So the round's parties are the schedule's
 * S_t, a party's w_i^{t−1} is the model of its last training, and the
 * weights are |D^i| / Σ_{j∈S_t} |D^j| (the box's |D^i|/|D| when every
 * party trains; a decision: the text does not say how a sample is
 * weighted, and the authors' code and PFLlib normalise over the round's
 * parties alike: main.py:503–504, serverbase.py receive_models).
 *
 * Symbols:  w^t ↔ s->w, ws->w_t (P)   w_i^t ↔ ws->w_local (P)
 *           w_i^{t−1} ↔ s->v + i·P (the state's v_i, traced "w_local")
 *           z, z_glob, z_prev ↔ ws->z, ws->z_glob, ws->z_prev (nb × h)
 *           ∂ℓ_con/∂z ↔ ws->dz (nb × h)   ∇ℓ_con ↔ ws->g_con (P)
 *           μ ↔ hyper->moon.mu   τ ↔ hyper->moon.tau   η ↔ hyper->eta
 *
 * Previous model before a party's first training (the box leaves
 * w_i^{−1} open): w_i^{−1} = w⁰, as every model starts at w⁰ (PFLlib
 * clientmoon.py:17, old_model = a copy of the initial model).  The
 * authors' code (QinbinLi/MOON 8fcba3c main.py:466–476, 537–543) has no
 * previous model in round 0 (an empty model pool: ℓ_con keeps the
 * positive pair, −log(e^{s}/e^{s}) = 0); with w_i^{−1} = w⁰ = w^0,
 * z_prev = z_glob in round 0, p = 1/2 and the two cosine gradients cancel
 * exactly, so ∇ℓ_con = 0 there too and both give the same numbers (no
 * switch).  A party the authors' code first samples after round 0
 * compares with its own random initial net, which pflref replaces by w⁰.
 *
 * Presets: official (the authors' code): torch SGD with momentum 0.9 and
 * weight decay 1e-5, a new optimizer per local training (main.py:267–269,
 * --reg), moon.passes = eval, bn.aggregate = average; pfllib:
 * lr.count = trainings (clientmoon.py:39–50 computes the paper's ℓ with
 * model.base as R_w and the batch mean of ℓ_con), moon.passes = train,
 * bn.aggregate = parameters_only.
 * Switch: moon.passes  eval | train (above).
 *
 * State: w^t is the state's w; w_i^{t−1} is v_i (w⁰ at the start), set to
 * w_i^t when party i finishes a round, reported as final.v and reloaded by
 * `check --resync` from party i's latest CLIENT_END "w_local".
 * Client optimizer (opt.*): each step is the optimizer's on ∇ℓ.
 * Determinism: parties train and are summed in ascending id; samples in
 * batch order.
 * Cost per step: one gradient, three body forward passes (w_i^t, w^t,
 * w_i^{t−1}) and one body backward pass, + O(nb·h) for ℓ_con.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "algorithms/algorithms.h"
#include "engine/work.h"
#include "engine/bn_own.h"
#include "algorithms/body.h"

static const char *const STEP_LINE =
    "Alg. 1 l. 19: w_i ← w_i − η ∇(ℓ_sup + μ ℓ_con)";
static const char *const SERVER_LINE =
    "Alg. 1 l. 7: w^{t+1} ← Σ_{i∈S_t} (|D^i|/Σ_{S_t}|D^j|) w_i^t";

/* MOON's work buffers (zero-filled; none carried between rounds: w_i^{t−1}
 * lives in the state's v). */
typedef struct {
    pflref_work list; /* the allocations (ref/engine/work.h)               */
    double *w_t;      /* P: w^t, the round-start global model              */
    double *w_local;  /* P: w_i^t, party i's iterate                       */
    double *g;        /* P: ∇ℓ = ∇ℓ_sup + μ ∇ℓ_con                         */
    double *g_con;    /* P: ∇ℓ_con (body entries; the head's stay 0)       */
    double *A;        /* nb × h: the body's pre-activations (mlp)          */
    double *z;        /* nb × h: z = R_{w_i^t}(x)                          */
    double *z_glob;   /* nb × h: z_glob = R_{w^t}(x)                       */
    double *z_prev;   /* nb × h: z_prev = R_{w_i^{t−1}}(x)                 */
    double *dz;       /* nb × h: ∂ℓ_con,j/∂z_j per sample                  */
} moon_work;

static void *moon_work_alloc(const pflref_problem *problem,
                             const pflref_hyper *hyper)
{
    (void)hyper;
    const size_t P = problem->model.P, h = pflref_body_size(&problem->model);
    const size_t nb = pflref_largest_train(problem);
    moon_work *ws = calloc(1, sizeof *ws);
    if (ws == NULL)
        return NULL;
    ws->w_t = pflref_work_doubles(&ws->list, P, 1);
    ws->w_local = pflref_work_doubles(&ws->list, P, 1);
    ws->g = pflref_work_doubles(&ws->list, P, 1);
    ws->g_con = pflref_work_doubles(&ws->list, P, 1);
    ws->A = pflref_work_doubles(&ws->list, nb, h);
    ws->z = pflref_work_doubles(&ws->list, nb, h);
    ws->z_glob = pflref_work_doubles(&ws->list, nb, h);
    ws->z_prev = pflref_work_doubles(&ws->list, nb, h);
    ws->dz = pflref_work_doubles(&ws->list, nb, h);
    return pflref_work_ready(ws);
}

/* Every batch holds at most as many samples as the largest training set
 * (a given batch may repeat indices), the rows of the representation
 * buffers. */
static pflref_status check_batches(const pflref_problem *problem,
                                   const pflref_schedule *schedule,
                                   pflref_error *err)
{
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
                    "moon takes batches of at most %zu samples (the largest "
                    "training set, which sizes its representation buffers); "
                    "this one has %zu (indices repeated)", n_max, nb);
            }
        }
    return PFLREF_OK;
}

/* The representation R_w must exist: an mlp without batch normalisation,
 * or a layer list whose last layer is dense after a body (batch
 * normalisation allowed there; dropout is refused before, moon taking no
 * masks).
 * μ ≥ 0 and τ > 0 are the registry's bounds (ref/engine/params.c). */
static pflref_status moon_check(const pflref_problem *problem,
                                const pflref_hyper *hyper,
                                const pflref_schedule *schedule,
                                const unsigned char *mask, pflref_error *err)
{
    (void)hyper;
    (void)mask;
    static const pflref_body_words words = {
        "moon needs a representation R_w(x) (Sec. 3.2): an mlp (its "
        "hidden layer) or a layer list (every layer before the last "
        "dense one); the model is ", ", which has none",
        "moon needs a representation R_w(x): the layer list's last "
        "layer must be dense (the output layer) after at least one "
        "layer (the body, whose output is R_w)",
        "moon takes batch normalisation in a layer list's body "
        "(batchnorm1d/batchnorm2d layers), not in an mlp (model.bn): "
        "spell the model as a layer list",
        NULL};  /* ℓ_sup: the model's own loss (no class condition) */
    /* req: moon.rep */
    const pflref_model *m = &problem->model;
    pflref_status st;
    if (m->bn && m->kind == PFLREF_MODEL_LAYERS) {
        /* pflref_body_check's tests but its refusal of batch
         * normalisation (FedPAC's and FedProto's stay) */
        pflref_model plain = *m;
        plain.bn = 0;
        st = pflref_body_check(&plain, &words, err);
    } else
        st = pflref_body_check(m, &words, err);
    if (st != PFLREF_OK)
        return st;
    return check_batches(problem, schedule, err);
}

/* ∇_z sim(z, a) added to out with weight c, given ‖z‖, ‖a‖ and
 * sim = sim(z, a) = z·a/(‖z‖ ‖a‖):
 *   out += c (a/(‖z‖ ‖a‖) − sim z/‖z‖²). */
static void add_cos_grad(const double *z, const double *a, size_t h,
                         double nz, double na, double sim, double c,
                         double *out)
{
    for (size_t u = 0; u < h; u++)
        out[u] += c * (a[u] / (nz * na) - sim * z[u] / (nz * nz));
}

static double norm2(const double *x, size_t h)
{
    double sq = 0.0;
    for (size_t u = 0; u < h; u++)
        sq += x[u] * x[u];
    return sqrt(sq);
}

/* Alg. 1 l. 17's ℓ_con,j and its signal on z_j for the nb samples:
 *   s_a = sim(z, z_glob)/τ,  s_b = sim(z, z_prev)/τ,
 *   p = e^{s_b}/(e^{s_a} + e^{s_b}) = 1/(1 + e^{s_a − s_b}),
 *   dz_j = (p/τ) (∇_z sim(z, z_prev) − ∇_z sim(z, z_glob)).
 * Returns 0 (and the culprit's sample in *bad) when a norm is 0. */
static int contrastive_signal(const moon_work *ws, size_t nb, size_t h,
                              double tau, size_t *bad)
{
    for (size_t j = 0; j < nb; j++) {
        const double *z = ws->z + j * h, *a = ws->z_glob + j * h,
                     *b = ws->z_prev + j * h;
        double *dz = ws->dz + j * h;
        const double nz = norm2(z, h), na = norm2(a, h), n_b = norm2(b, h);
        if (!(nz > 0.0 && na > 0.0 && n_b > 0.0)) {
            *bad = j;
            return 0;
        }
        double za = 0.0, zb = 0.0;
        for (size_t u = 0; u < h; u++) {
            za += z[u] * a[u];
            zb += z[u] * b[u];
        }
        /* req: moon.grad, moon.alg1.l17, moon.eq3 */
        const double c_a = za / (nz * na), c_b = zb / (nz * n_b);
        const double p = 1.0 / (1.0 + exp(c_a / tau - c_b / tau));
        for (size_t u = 0; u < h; u++)
            dz[u] = 0.0;
        add_cos_grad(z, b, h, nz, n_b, c_b, p / tau, dz);
        add_cos_grad(z, a, h, nz, na, c_a, -p / tau, dz);
    }
    return 1;
}

/* g_con := ∇ℓ_con(w_i; b) on the body's entries, from z_glob and z_prev
 * (nb × h, already in ws): z = R_{w_i}(x), the signal, then back through
 * the body. */
static pflref_status contrastive_grad(pflref_state *s, size_t i,
                                      const size_t *idx, size_t nb, long step,
                                      moon_work *ws, pflref_error *err)
{
    const pflref_model *m = &s->problem->model;
    const pflref_data *D = &s->problem->clients[i].train;
    const size_t h = pflref_body_size(m);
    /* req: moon.alg1.l14 */
    pflref_status st =
        m->bn ? pflref_model_features_mode(m, ws->w_local, D, idx, nb, s->ws,
                                           1, ws->z)
              : pflref_model_features(m, ws->w_local, D, idx, nb, s->ws,
                                      ws->A, ws->z);
    if (st != PFLREF_OK)
        return pflref_error_set(err, st, "schedule",
                                "features failed at round %zu, client %zu, "
                                "step %ld", s->t, i, step);
    size_t bad = 0;
    if (!contrastive_signal(ws, nb, h, s->hyper->moon.tau, &bad))
        return pflref_error_set(
            err, PFLREF_EDIVERGE, "z",
            "round %zu, client %zu, step %ld, sample %zu of the batch: a "
            "representation z, z_glob or z_prev is the zero vector, where "
            "the cosine similarity sim is undefined (Alg. 1 l. 17)",
            s->t, i, step, bad);
    st = m->bn ? pflref_model_body_grad_train(m, ws->w_local, D, idx, nb,
                                              ws->dz, s->ws, ws->g_con)
               : pflref_model_body_grad_features(m, ws->w_local, ws->A,
                                                 ws->dz, D, idx, nb, s->ws,
                                                 ws->g_con);
    if (st != PFLREF_OK)
        return pflref_error_set(err, st, "schedule",
                                "body gradient failed at round %zu, client "
                                "%zu, step %ld", s->t, i, step);
    return PFLREF_OK;
}

/* One local step of party i on batch q of b, with its previous model
 * prev = w_i^{t−1}:
 *   w_i ← w_i − η ∇(ℓ_sup + μ ℓ_con)  (the optimizer's step under opt.*) */
static pflref_status local_step(pflref_state *s, size_t i,
                                const pflref_batches *b, size_t q,
                                const double *prev, moon_work *ws,
                                const pflref_trace *trace, pflref_error *err)
{
    const pflref_model *m = &s->problem->model;
    const pflref_data *D = &s->problem->clients[i].train;
    const double eta = s->hyper->eta, mu = s->hyper->moon.mu;
    const size_t P = s->P, nb = b->step_off[q + 1] - b->step_off[q];
    const size_t *idx = b->idx + b->step_off[q];
    const long step = (long)(q + 1);
    /* req: moon.alg1.l13 */
    pflref_status st = pflref_batch_grad(m, ws->w_local, D, b, q, s->ws,
                                         ws->g, (long)s->t, (long)i, err);
    if (st != PFLREF_OK)
        return st;
    if (mu != 0.0) {
        /* req: moon.alg1.l15, moon.alg1.l16 */
        /* z_glob ← R_{w^t}(x), z_prev ← R_{w_i^{t−1}}(x) (A: scratch);
         * with batch normalisation, evaluation or training passes
         * (moon.passes) */
        const int train = s->hyper->moon.passes == PFLREF_MOON_PASSES_TRAIN;
        if (m->bn) {
            /* req: moon.bn */
            st = pflref_model_features_mode(m, ws->w_t, D, idx, nb, s->ws,
                                            train, ws->z_glob);
            if (st == PFLREF_OK)
                st = pflref_model_features_mode(m, prev, D, idx, nb, s->ws,
                                                train, ws->z_prev);
        } else if (!(st = pflref_model_features(m, ws->w_t, D, idx, nb,
                                                s->ws, ws->A, ws->z_glob)))
            st = pflref_model_features(m, prev, D, idx, nb, s->ws, ws->A,
                                       ws->z_prev);
        if (st != PFLREF_OK)
            return pflref_error_set(err, st, "schedule",
                                    "features failed at round %zu, client "
                                    "%zu, step %ld", s->t, i, step);
        if ((st = contrastive_grad(s, i, idx, nb, step, ws, err)))
            return st;
        /* req: moon.alg1.l18, moon.eq4 */
        /* ∇ℓ = ∇ℓ_sup + μ ∇ℓ_con */
        for (size_t p = 0; p < P; p++)
            ws->g[p] += mu * ws->g_con[p];
    }
    /* req: moon.bn */
    /* the training pass of w_i^t on b (the last on s->ws: l. 13's, or
     * l. 14's again, the same statistics) moves its r_μ, r_v once */
    st = pflref_bn_running_move(&s->hyper->bn, m, s->ws, ws->w_local,
                                (long)s->t, (long)i, step, err);
    if (st != PFLREF_OK)
        return st;
    /* req: moon.alg1.l19 */
    pflref_optim_state *opt = pflref_optim_get(s, i, 0);
    const int finite = opt != NULL
                           ? pflref_optim_step(opt, m, NULL, eta, ws->g,
                                               ws->w_local)
                           : pflref_blocks_step(m, NULL, eta, ws->g,
                                                ws->w_local);
    if (!finite)
        return pflref_error_diverge(err, (long)s->t, (long)i, step,
                                    "w_local");
    pflref_trace_emit(trace, PFLREF_EV_STEP, "train", (long)s->t, (long)i,
                      step, "w_local", ws->w_local, P, STEP_LINE);
    return PFLREF_OK;
}

static pflref_status moon_round(pflref_state *s,
                                const pflref_round_plan *plan,
                                const pflref_trace *trace, pflref_error *err)
{
    moon_work *ws = s->extra;
    const pflref_problem *pr = s->problem;
    const size_t P = s->P, N = s->N;
    const int keep = pflref_bn_keeps_own(s);   /* bn.aggregate */
    /* req: moon.alg1.l3, moon.alg1.l5 */
    pflref_round_begin(s, ws->w_t, trace);
    /* Σ_{j∈S_t} |D^j| */
    const double n_t = pflref_train_n(pr, plan->clients, plan->m);
    /* req: moon.alg1.l4, moon.sampling */
    for (size_t j = 0; j < plan->m; j++) {
        const size_t i = plan->clients[j];
        double *v_i = pflref_row(s->v, i, N, P);   /* w_i^{t−1} */
        /* req: moon.alg1.l6, moon.alg1.l9, moon.alg1.l10 */
        if (keep) {   /* w^t's parameters(), party i's own r_μ, r_v */
            for (size_t p = 0; p < P; p++)
                ws->w_local[p] = ws->w_t[p];
            pflref_bn_copy_buffers(&pr->model, ws->w_local, v_i);
            pflref_client_begin(s, i, "w_local", ws->w_local, NULL, trace);
        } else
            pflref_client_begin(s, i, "w_local", ws->w_local, ws->w_t,
                                trace);
        pflref_client_lr(s, i, 0, 1);  /* η of i's train() (lr.count) */
        pflref_optim_begin(s, i);      /* its optimizer (opt.state) */
        const pflref_batches *b = &plan->batches[j];
        /* req: moon.alg1.l11, moon.alg1.l12 */
        for (size_t q = 0; q < b->nsteps; q++) {
            pflref_status st = local_step(s, i, b, q, v_i, ws, trace, err);
            if (st != PFLREF_OK)
                return st;
        }
        /* req: moon.alg1.l20, moon.sampling */
        /* w_i^t is party i's previous model from now on */
        for (size_t p = 0; p < P; p++)
            v_i[p] = ws->w_local[p];
        pflref_client_end(s, i, "w_local", ws->w_local, trace);
        /* req: moon.alg1.l7 */
        pflref_accumulate(s->accum, (double)pr->clients[i].train.n / n_t,
                          ws->w_local, P);
    }
    /* bn.aggregate = parameters_only: w^{t+1}'s r_μ, r_v are the first
     * participant's (deepcopy(uploaded_models[0]), serverbase.py:141) */
    if (keep && plan->m > 0)
        pflref_bn_copy_buffers(&pr->model, s->accum,
                               pflref_row(s->v,
                                          pflref_bn_first_upload(
                                              plan, plan->clients[0]),
                                          N, P));
    return pflref_round_end(s, SERVER_LINE, trace, err);
}

const pflref_algorithm pflref_moon = {
    .name = "moon",
    .title = "MOON (Li, He, Song, CVPR 2021, Alg. 1)",
    /* req: moon.alg1.l2, moon.alg1.l8 (w⁰ is the state's w at round 0;
     * w^T the reported global model) */
    .has_global = 1,
    .has_personal = 1,        /* v_i = w_i^{t−1}, the previous local model */
    .personal_name = "w_local",
    .n_eval = 1,
    .eval = {{"global", PFLREF_SOURCE_GLOBAL}},
    .check = moon_check,
    .work_alloc = moon_work_alloc,
    .work_free = pflref_work_free,
    .round = moon_round,
    .opt_slots = 1,           /* PartyLocalTraining's optimizer */
};
