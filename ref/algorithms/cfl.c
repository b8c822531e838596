/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/algorithms/cfl.c: Clustered Federated Learning, the weight-update form
 * (Algorithm 5, with Algorithm 1's optimal bipartition) of
 *   F. Sattler, K.-R. Müller, W. Samek, "Clustered Federated Learning:
 *   Model-Agnostic Distributed Multitask Optimization Under Privacy
 *   Constraints", IEEE TNNLS 32(8):3710–3722, 2021, arXiv 1910.01991.
 * Equations and the authors' code's deviations: shared/spec
 * notes-cfl-ifca-sampling-metrics.md §1; docs/algorithms/cfl.md.
 *
 * One round t (Alg. 5; C the partition, starting as {{0..N−1}}):
 *   every client i, in parallel:
 *     θ_i ← θ_i + Δθ_{c(i)}                 (applied at the end of round
 *                                             t − 1 here, see below)
 *     Δθ_i ← SGD_n(θ_i, D_i) − θ_i           local SGD with step η over
 *                                             the scheduled batches
 *   server:  C_tmp ← C;  for each c ∈ C:
 *     Δθ_c ← (1/|c|) Σ_{i∈c} Δθ_i            (cfl.cluster_weights)
 *     if ‖Δθ_c‖ < ε₁ and max_{i∈c} ‖Δθ_i‖ > ε₂:
 *       α_ij ← ⟨Δθ_i, Δθ_j⟩ / (‖Δθ_i‖ ‖Δθ_j‖),  i, j ∈ c
 *       (c₁, c₂), α_max^cross ← Algorithm 1
 *                                             (ref/engine/cluster.c)
 *       if γ_max < √((1 − α_max^cross)/2):  C_tmp ← (C_tmp \ c) ∪ {c₁, c₂}
 *   C ← C_tmp
 *
 * Three points the paper leaves open, pinned here (notes §1.7):
 *   a) The cluster update of a split cluster's children is the mean over
 *      each child's members of this round's Δθ_i (the authors' code).
 *   b) The update is applied at the end of the round, θ_i ← θ_i + Δθ_{c(i)}
 *      with the post-split partition, rather than at the start of the
 *      next: the same iterates, and the final models include the last
 *      round's update (the models FedAvg would report).
 *   c) "Recursion on the new clusters" is the next rounds' tests of the
 *      children (Alg. 5 runs one level per round).
 * A singleton cluster never splits.  Every client takes part in every
 * round (the paper's and the code's setting).
 *
 * Symbols:  θ_i ↔ s->v + i·P   Δθ_i ↔ cfl_work.dtheta + i·P
 *           c(i) ↔ s->cluster[i]   ε₁, ε₂, γ_max ↔ hyper->cfl.eps1,
 *           .eps2, .gamma_max   η ↔ hyper->eta   α ↔ cfl_work.alpha (m×m)
 *           Δθ_c ↔ s->accum (P)
 * Cluster labels are canonical: the clusters numbered 0, 1, ... in the
 * order of their smallest client.
 *
 * State and work: the models θ_i and the partition (s->v, s->cluster) are
 * the run state; cfl_work holds the round's work buffers (the local
 * iterate, the updates Δθ_i, the similarities and the bipartition's work).
 *
 * Switches (the paper's reading first):
 *   cfl.bipartition      optimal: Algorithm 1; complete_linkage: the
 *                        notebook's sklearn complete linkage on −α
 *   cfl.cluster_weights  uniform: 1/|c| (Alg. 5, the code); samples:
 *                        |D_i|/|D_c| (Alg. 2, the FL sub-routine)
 * Guards, off by default (the notebook's `len(idc) > 2`, `c_round > 20`):
 *   cfl.min_cluster_size s: only clusters of at least s clients split
 *   cfl.warmup r: no split in rounds t < r
 *
 * Determinism: clients train and are summed in ascending id; clusters are
 * tested in label order.
 * Cost per round: the local steps + O(N P) + per tested cluster O(m² P).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "algorithms/algorithms.h"
#include "engine/cluster.h"
#include "engine/work.h"

/* The paper's lines, printed by --trace beside the values. */
static const struct {
    const char *client, *dtheta, *norm[2], *max, *sim, *part[2], *cross,
        *split, *partition, *update[2];
} LINE = {
    .client = "Alg. 5: Δθ_i ← SGD_n(θ_i, D_i) − θ_i: θ ← θ − η ∇ℓ(θ; b)",
    .dtheta = "Alg. 5: Δθ_i ← SGD_n(θ_i, D_i) − θ_i",
    .norm = {"Alg. 5: ‖Δθ_c‖, Δθ_c = (1/|c|) Σ_{i∈c} Δθ_i (split needs < ε₁)",
             "‖Δθ_c‖, Δθ_c = Σ_{i∈c} (|D_i|/|D_c|) Δθ_i (split needs < ε₁)"},
    .max = "Alg. 5: max_{i∈c} ‖Δθ_i‖ (split needs > ε₂)",
    .sim = "α_ij = ⟨Δθ_i, Δθ_j⟩/(‖Δθ_i‖‖Δθ_j‖), j ∈ c (row i)",
    .part = {"Alg. 1: (c₁, c₂) = argmin max_{i∈c₁, j∈c₂} α_ij",
             "complete linkage on −α, cut at two clusters (authors' "
             "notebook)"},
    .cross = "α_max^cross = max_{i∈c₁, j∈c₂} α_ij",
    .split = "Alg. 5: split iff γ_max < √((1 − α_max^cross)/2)",
    .partition = "C ← C_tmp (each client's cluster, numbered by smallest "
                 "member)",
    .update = {"Alg. 5: Δθ_c = (1/|c|) Σ_{i∈c} Δθ_i; θ_i ← θ_i + Δθ_c",
               "Alg. 2: Δθ_c = Σ_{i∈c} (|D_i|/|D_c|) Δθ_i; θ_i ← θ_i + "
               "Δθ_c"},
};

/* γ_max ∈ [0, 1); every client trains in every round (Alg. 5). */
static pflref_status cfl_check(const pflref_problem *problem,
                               const pflref_hyper *hyper,
                               const pflref_schedule *schedule,
                               const unsigned char *mask, pflref_error *err)
{
    (void)mask;
    const double gamma_max = hyper->cfl.gamma_max;
    if (!(gamma_max < 1.0))
        return pflref_error_set(err, PFLREF_EINVAL,
                                "algorithm.hyperparameters.gamma_max",
                                "gamma_max = %.17g must be below 1 (γ_max is "
                                "a relative error in [0, 1))",
                                gamma_max);
    for (size_t t = 0; t < schedule->T; t++)
        if (schedule->rounds[t].m != problem->N) {
            char where[PFLREF_WHERE_MAX];
            snprintf(where, sizeof where, "schedule.rounds[%zu].clients", t);
            return pflref_error_set(err, PFLREF_EINVAL, where,
                                    "cfl trains every client in every round "
                                    "(Alg. 5); round %zu has %zu of the %zu "
                                    "clients", t, schedule->rounds[t].m,
                                    problem->N);
        }
    return PFLREF_OK;
}

/* CFL's work buffers (no extra state: the partition is s->cluster). */
typedef struct {
    pflref_work list;       /* the allocations (ref/engine/work.h)         */
    double *theta;          /* P: the local iterate θ of SGD_n(θ_i, D_i)   */
    double *g;              /* P: its gradient                             */
    double *dtheta;         /* N×P: this round's updates Δθ_i, row i       */
    double *alpha;          /* N×N: α_ij of the cluster under test (m×m)   */
    double *L;              /* N×N: the complete-linkage matrix (m×m)      */
    double *buf;            /* N: a trace record (c₁, c₂, the partition)   */
    unsigned char *side;    /* N: the bipartition, 0 = c₁, 1 = c₂          */
    size_t *members;        /* N: the clients of one cluster, ascending    */
    size_t *map;            /* N: old label → canonical label              */
    size_t *biwork;         /* 2N: the bipartition's integer work          */
} cfl_work;

static void *cfl_work_alloc(const pflref_problem *problem,
                            const pflref_hyper *hyper)
{
    (void)hyper;
    const size_t P = problem->model.P, N = problem->N;
    cfl_work *ws = calloc(1, sizeof *ws);
    if (ws == NULL)
        return NULL;
    ws->theta = pflref_work_doubles(&ws->list, P, 1);
    ws->g = pflref_work_doubles(&ws->list, P, 1);
    ws->dtheta = pflref_work_doubles(&ws->list, N, P);
    ws->alpha = pflref_work_doubles(&ws->list, N, N);
    ws->L = pflref_work_doubles(&ws->list, N, N);
    ws->buf = pflref_work_doubles(&ws->list, N, 1);
    ws->side = pflref_work_flags(&ws->list, N);
    ws->members = pflref_work_indices(&ws->list, N, 1);
    ws->map = pflref_work_indices(&ws->list, N, 1);
    ws->biwork = pflref_work_indices(&ws->list, N, 2);
    return pflref_work_ready(ws);
}

/* ‖x‖ = √(Σ x_p²) for finite x.  When Σ x_p² overflows (entries beyond
 * about 1e154), ‖x‖ = s √(Σ (x_p/s)²) with s = max |x_p|, so a finite
 * update never has an infinite norm. */
static double norm2(const double *x, size_t P)
{
    double sq = 0.0;
    for (size_t p = 0; p < P; p++)
        sq += x[p] * x[p];
    if (isfinite(sq))
        return sqrt(sq);
    double s = 0.0;
    for (size_t p = 0; p < P; p++)
        s = fabs(x[p]) > s ? fabs(x[p]) : s;
    sq = 0.0;
    for (size_t p = 0; p < P; p++)
        sq += (x[p] / s) * (x[p] / s);
    return s * sqrt(sq);
}

/* members[0..m−1] := the clients of cluster c, ascending; returns m. */
static size_t cluster_members(const pflref_state *s, size_t c,
                              size_t *members)
{
    size_t m = 0;
    for (size_t i = 0; i < s->N; i++)
        if (s->cluster[i] == c)
            members[m++] = i;
    return m;
}

/* req: cfl.alg5.l8 */
/* acc := Δθ_c = Σ_{i∈c} w_i Δθ_i with w_i = 1/|c| or |D_i|/|D_c|. */
static void cluster_update(const pflref_state *s, const size_t *members,
                           size_t m, const double *dtheta, double *acc)
{
    const pflref_problem *pr = s->problem;
    const int by_samples =
        s->hyper->cfl.cluster_weights == PFLREF_CFL_WEIGHTS_SAMPLES;
    double D_c = 0.0;  /* |D_c| = Σ_{i∈c} |D_i| */
    for (size_t a = 0; a < m; a++)
        D_c += (double)pr->clients[members[a]].train.n;
    for (size_t p = 0; p < s->P; p++)
        acc[p] = 0.0;
    for (size_t a = 0; a < m; a++) {
        const size_t i = members[a];
        const double w = by_samples
                             ? (double)pr->clients[i].train.n / D_c
                             : 1.0 / (double)m;           /* 1/|c| */
        pflref_accumulate(acc, w, dtheta + i * s->P, s->P);
    }
}

/* Algorithm 1 on cluster c (members[0..m−1], m ≥ 2) and the γ test:
 * α_ij, (c₁, c₂), α_max^cross, and a split when
 * γ_max < √((1 − α_max^cross)/2), which moves c₂'s members to label *next
 * (then incremented). */
static pflref_status split_cluster(pflref_state *s, size_t m, size_t *next,
                                   const pflref_trace *trace,
                                   pflref_error *err)
{
    const pflref_cfl_hyper *hp = &s->hyper->cfl;
    const double gamma_max = hp->gamma_max;
    cfl_work *ws = s->extra;
    const size_t *members = ws->members;
    const long t = (long)s->t, rep = (long)members[0];

    /* req: cfl.alg5.l10 */
    /* α_ij for i, j ∈ c, emitted row by row (row a belongs to client
     * members[a]) */
    pflref_status st = pflref_cluster_similarity(ws->dtheta, s->P, members,
                                                 m, ws->alpha, err);
    if (st != PFLREF_OK)
        return st;
    for (size_t a = 0; a < m; a++)
        pflref_trace_emit(trace, PFLREF_EV_NOTE, "train", t,
                          (long)members[a], -1, "similarity",
                          ws->alpha + a * m, m, LINE.sim);

    /* req: cfl.alg5.l11 */
    /* (c₁, c₂) and α_max^cross */
    double cross;
    st = pflref_cluster_bipartition(
        ws->alpha, m, (pflref_bipartition_method)hp->bipartition, ws->side,
        &cross, ws->L, ws->biwork, err);
    if (st != PFLREF_OK)
        return st;
    for (unsigned char part = 0; part < 2; part++) {
        size_t k = 0;
        for (size_t a = 0; a < m; a++)
            if (ws->side[a] == part)
                ws->buf[k++] = (double)members[a];
        pflref_trace_emit(trace, PFLREF_EV_NOTE, "train", t, rep, -1,
                          part == 0 ? "c1" : "c2", ws->buf, k,
                          LINE.part[hp->bipartition]);
    }
    pflref_trace_emit(trace, PFLREF_EV_NOTE, "train", t, rep, -1,
                      "alpha_cross", &cross, 1, LINE.cross);

    /* req: cfl.alg5.l12 */
    /* γ_max < √((1 − α_max^cross)/2) */
    const int split = gamma_max < sqrt((1.0 - cross) / 2.0);
    const double flag = split ? 1.0 : 0.0;
    pflref_trace_emit(trace, PFLREF_EV_NOTE, "train", t, rep, -1, "split",
                      &flag, 1, LINE.split);
    if (split) {
        /* C_tmp ← (C_tmp \ c) ∪ {c₁, c₂}: side a is position a of c,
         * mapped back to client members[a] */
        for (size_t a = 0; a < m; a++)
            if (ws->side[a] == 1)
                s->cluster[members[a]] = *next;
        (*next)++;
    }
    return PFLREF_OK;
}

/* The split test of cluster c (ws->members[0..m−1]): ‖Δθ_c‖ < ε₁ and
 * max_{i∈c} ‖Δθ_i‖ > ε₂, then the guards, then split_cluster.  Emits the
 * cluster's notes with client = its smallest member. */
static pflref_status test_cluster(pflref_state *s, size_t m, size_t *next,
                                  const pflref_trace *trace,
                                  pflref_error *err)
{
    const pflref_cfl_hyper *hp = &s->hyper->cfl;
    const double eps1 = hp->eps1, eps2 = hp->eps2;
    const size_t P = s->P;
    cfl_work *ws = s->extra;
    const size_t *members = ws->members;
    const long t = (long)s->t, rep = (long)members[0];
    double *acc = s->accum;

    /* Δθ_c and the two norms of the test */
    cluster_update(s, members, m, ws->dtheta, acc);
    const double norm_c = norm2(acc, P);
    double max_i = 0.0;
    for (size_t a = 0; a < m; a++) {
        const double n_i = norm2(ws->dtheta + members[a] * P, P);
        max_i = n_i > max_i ? n_i : max_i;
    }
    /* finite updates whose norm exceeds DBL_MAX (entries near it): stop
     * before a non-finite value is recorded */
    if (!isfinite(norm_c) || !isfinite(max_i))
        return pflref_error_diverge(err, t, rep, -1,
                                    isfinite(norm_c) ? "max_norm_dtheta"
                                                     : "norm_dtheta_c");
    pflref_trace_emit(trace, PFLREF_EV_NOTE, "train", t, rep, -1,
                      "norm_dtheta_c", &norm_c, 1,
                      LINE.norm[hp->cluster_weights]);
    pflref_trace_emit(trace, PFLREF_EV_NOTE, "train", t, rep, -1,
                      "max_norm_dtheta", &max_i, 1, LINE.max);

    /* req: cfl.alg5.l9 */
    /* Alg. 5: if ‖Δθ_c‖ < ε₁ and max_{i∈c} ‖Δθ_i‖ > ε₂ (and the guards) */
    if (!(norm_c < eps1 && max_i > eps2) || m < 2 ||
        (hp->min_cluster_size > 0 && m < hp->min_cluster_size) ||
        s->t < hp->warmup)
        return PFLREF_OK;
    return split_cluster(s, m, next, trace, err);
}

/* Every client i: Δθ_i ← SGD_n(θ_i, D_i) − θ_i, local SGD with step η. */
static pflref_status local_updates(pflref_state *s,
                                   const pflref_round_plan *plan,
                                   const pflref_trace *trace,
                                   pflref_error *err)
{
    const double eta = s->hyper->eta;
    const size_t P = s->P;
    const long t = (long)s->t;
    cfl_work *ws = s->extra;
    double *theta = ws->theta;
    for (size_t j = 0; j < plan->m; j++) {
        const size_t i = plan->clients[j];
        double *theta_i = s->v + i * P, *d_i = ws->dtheta + i * P;
        pflref_client_begin(s, i, "theta", theta, theta_i, trace);
        const pflref_local_sgd job = pflref_local_sgd_plain(
            s, i, &plan->batches[j], eta, "theta", LINE.client);
        pflref_status st = pflref_local_sgd_run(&job, theta, ws->g, s->ws,
                                                trace, err);
        if (st != PFLREF_OK)
            return st;
        for (size_t p = 0; p < P; p++)
            d_i[p] = theta[p] - theta_i[p];
        if (!pflref_all_finite(d_i, P))
            return pflref_error_diverge(err, t, (long)i, -1, "dtheta");
        pflref_trace_emit(trace, PFLREF_EV_CLIENT_END, "train", t, (long)i,
                          -1, "dtheta", d_i, P, LINE.dtheta);
    }
    return PFLREF_OK;
}

/* C ← C_tmp (labels 0..next−1), relabelled canonically (by smallest
 * member); returns the number of clusters. */
static size_t relabel(pflref_state *s, size_t next, const pflref_trace *trace)
{
    const size_t N = s->N;
    cfl_work *ws = s->extra;
    size_t *map = ws->map;
    for (size_t c = 0; c < next; c++)
        map[c] = N;                              /* not seen yet */
    size_t K_new = 0;
    for (size_t i = 0; i < N; i++) {
        if (map[s->cluster[i]] == N)
            map[s->cluster[i]] = K_new++;
        s->cluster[i] = map[s->cluster[i]];
        ws->buf[i] = (double)s->cluster[i];
    }
    pflref_trace_emit(trace, PFLREF_EV_NOTE, "train", (long)s->t, -1, -1,
                      "partition", ws->buf, N, LINE.partition);
    return K_new;
}

/* Every cluster c of the partition (labels 0..K−1): θ_i ← θ_i + Δθ_c,
 * i ∈ c. */
static pflref_status apply_updates(pflref_state *s, size_t K,
                                   const pflref_trace *trace,
                                   pflref_error *err)
{
    const size_t P = s->P;
    const long t = (long)s->t;
    cfl_work *ws = s->extra;
    double *acc = s->accum;
    for (size_t c = 0; c < K; c++) {
        const size_t m = cluster_members(s, c, ws->members);
        cluster_update(s, ws->members, m, ws->dtheta, acc);
        pflref_trace_emit(trace, PFLREF_EV_NOTE, "train", t,
                          (long)ws->members[0], -1, "dtheta_c", acc, P,
                          LINE.update[s->hyper->cfl.cluster_weights]);
        for (size_t a = 0; a < m; a++) {
            double *theta_i = s->v + ws->members[a] * P;
            for (size_t p = 0; p < P; p++)
                theta_i[p] += acc[p];
            if (!pflref_all_finite(theta_i, P))
                return pflref_error_diverge(err, t, (long)ws->members[a], -1,
                                            "theta");
        }
    }
    return PFLREF_OK;
}

static pflref_status cfl_round(pflref_state *s, const pflref_round_plan *plan,
                               const pflref_trace *trace, pflref_error *err)
{
    const size_t N = s->N;
    cfl_work *ws = s->extra;

    /* req: cfl.alg5.l3, cfl.alg5.l5 */
    /* Every client i: Δθ_i ← SGD_n(θ_i, D_i) − θ_i */
    pflref_status st = local_updates(s, plan, trace, err);
    if (st != PFLREF_OK)
        return st;

    /* Server: test every cluster of C (labels 0..K−1) on this round's
     * updates; a split gives its c₂ a fresh label K, K + 1, ... */
    size_t K = 0;
    for (size_t i = 0; i < N; i++)
        K = s->cluster[i] + 1 > K ? s->cluster[i] + 1 : K;
    /* req: cfl.alg5.l6 */
    size_t next = K;
    /* req: cfl.alg5.l7 */
    for (size_t c = 0; c < K && st == PFLREF_OK; c++)
        st = test_cluster(s, cluster_members(s, c, ws->members), &next, trace,
                          err);
    if (st != PFLREF_OK)
        return st;

    /* req: cfl.alg5.l13, cfl.alg5.l4 */
    /* C ← C_tmp; then θ_i ← θ_i + Δθ_c for every cluster c of it */
    st = apply_updates(s, relabel(s, next, trace), trace, err);
    if (st != PFLREF_OK)
        return st;
    for (size_t i = 0; i < N; i++)
        pflref_trace_emit(trace, PFLREF_EV_CLIENT_END, "train", (long)s->t,
                          (long)i, -1, "v", s->v + i * s->P, s->P, NULL);
    return PFLREF_OK;
}

/* Re-synchronised checking: the state after round t is every θ_i (the
 * driver loads CLIENT_END "v") and the partition, the candidate's NOTE
 * "partition" of round t (labels that are not integers in [0, N) leave
 * the reference's own). */
static void cfl_load_state(pflref_state *s, pflref_state_loader load,
                           void *ctx, long t)
{
    cfl_work *ws = s->extra;
    if (!load(ctx, PFLREF_EV_NOTE, "partition", t, -1, ws->buf, s->N))
        return;
    for (size_t i = 0; i < s->N; i++)
        if (!(ws->buf[i] >= 0.0 && ws->buf[i] < (double)s->N &&
              ws->buf[i] == floor(ws->buf[i])))
            return;
    for (size_t i = 0; i < s->N; i++)
        s->cluster[i] = (size_t)ws->buf[i];
}

const pflref_algorithm pflref_cfl = {
    .name = "cfl",
    .title = "Clustered FL (Sattler, Müller, Samek, IEEE TNNLS 2021, "
             "Alg. 1 and 5)",
    .has_personal = 1,
    .personal_name = "v",
    .has_clusters = 1,
    .n_eval = 1,
    .eval = {{"personalized", PFLREF_SOURCE_PERSONAL}},
    .check = cfl_check,
    .work_alloc = cfl_work_alloc,
    .work_free = pflref_work_free,
    .round = cfl_round,
    .load_state = cfl_load_state,
};
