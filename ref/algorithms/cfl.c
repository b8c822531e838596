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
#include "engine/trace_cluster.h"
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

/* The shape the proofs start from (cfl_work_shape), the lemmas on a
 * cluster's m×m matrices inside the workspace's N×N, and the frames of a
 * cluster's update and of its split are defined in proofs/acsl/cfl.h
 * (ACSL only). */
#include "../../proofs/acsl/cfl.h"

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
 * update never has an infinite norm.  It writes nothing (stated for the
 * proofs of its callers, proofs/README.md). */
/*@ assigns \nothing; */
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

/* req: cfl.alg5.l8 */
/* The clients of cluster c, ws->members[0..m−1] ascending (returns m),
 * and s->accum := Δθ_c = Σ_{i∈c} w_i Δθ_i with w_i = 1/|c| or
 * |D_i|/|D_c|.  Proved call sites (proofs/README.md): every member is a
 * client i < N, and its Δθ_i a row of Δθ. */
/*@ requires state_base(s) && cfl_work_shape(ws, s);
    assigns CFL_CLUSTER_FRAME(ws, s, s->N, s->P);
    ensures \result <= s->N;
    ensures \forall integer a; 0 <= a < \result ==> ws->members[a] < s->N; */
static size_t cluster_update(const pflref_state *s, const cfl_work *ws,
                             size_t c)
{
    const pflref_problem *pr = s->problem;
    const int by_samples =
        s->hyper->cfl.cluster_weights == PFLREF_CFL_WEIGHTS_SAMPLES;
    const size_t P = s->P, N = s->N;
    const size_t *const cluster = s->cluster;
    size_t *const members = ws->members;
    double *const dtheta = ws->dtheta, *const acc = s->accum;
    size_t m = 0;
    /*@ loop invariant 0 <= m <= i <= N;
        loop invariant \forall integer a; 0 <= a < m ==> members[a] < i;
        loop assigns i, m, members[0 .. N - 1]; */
    for (size_t i = 0; i < N; i++)
        if (cluster[i] == c)
            members[m++] = i;
    double D_c = 0.0;  /* |D_c| = Σ_{i∈c} |D_i| */
    /*@ loop assigns a, D_c; */
    for (size_t a = 0; a < m; a++)
        D_c += (double)pr->clients[members[a]].train.n;
    /*@ loop invariant 0 <= p <= P; loop assigns p, acc[0 .. P - 1]; */
    for (size_t p = 0; p < P; p++)
        acc[p] = 0.0;
    /*@ loop invariant 0 <= a <= m; loop assigns a, acc[0 .. P - 1]; */
    for (size_t a = 0; a < m; a++) {
        const size_t i = members[a];
        const double w = by_samples
                             ? (double)pr->clients[i].train.n / D_c
                             : 1.0 / (double)m;           /* 1/|c| */
        pflref_accumulate(acc, w, pflref_row(dtheta, i, N, P), P);
    }
    return m;
}

/* Alg. 5's split test γ_max < √((1 − α_max^cross)/2).  α_max^cross ≤ 1
 * (every α_ij is clamped to [−1, 1]), so sqrt's argument is not negative
 * and sqrt sets no errno: it writes nothing (stated for the proofs of its
 * callers, proofs/README.md). */
/*@ assigns \nothing; */
static int splits(double gamma_max, double cross)
{
    return gamma_max < sqrt((1.0 - cross) / 2.0);
}

/* The NOTE events of α's m rows, row a that of client members[a]. */
/*@ requires \valid_read(alpha + (0 .. square(m) - 1));
    requires \valid_read(members + (0 .. m - 1));
    assigns \nothing; */
static void emit_similarity(const pflref_trace *trace, long t,
                            const size_t *members, size_t m,
                            const double *alpha)
{
    /*@ loop invariant 0 <= a <= m; loop assigns a; */
    for (size_t a = 0; a < m; a++) {
        /*@ assert 0 <= a * m && a * m + m <= square(m); */
        pflref_trace_emit(trace, PFLREF_EV_NOTE, "train", t,
                          (long)members[a], -1, "similarity",
                          alpha + a * m, m, LINE.sim);
    }
}

/* Algorithm 1 on cluster c (ws->members[0..m−1], 2 ≤ m ≤ N) and the γ
 * test: α_ij, (c₁, c₂), α_max^cross, and a split when
 * γ_max < √((1 − α_max^cross)/2), which moves c₂'s members to label *next
 * (then incremented).  Proved call sites (proofs/README.md): the
 * bipartition gets the m×m, m and 2m entries its contract asks for, inside
 * the workspace's N×N, N and 2N, and each member moved is a client < N. */
/*@ requires state_base(s) && cfl_work_shape(ws, s);
    requires 2 <= m <= s->N && square(m) <= square(s->N);
    requires \forall integer a; 0 <= a < m ==> ws->members[a] < s->N;
    requires cfl_next_apart(next, err, s, ws);
    assigns CFL_SPLIT_FRAME(ws, s, s->N), *next, *err; */
static pflref_status split_cluster(pflref_state *s, const cfl_work *ws,
                                   size_t m, size_t *next,
                                   const pflref_trace *trace,
                                   pflref_error *err)
{
    const pflref_cfl_hyper *hp = &s->hyper->cfl;
    const double gamma_max = hp->gamma_max;
    const pflref_bipartition_method method =
        (pflref_bipartition_method)hp->bipartition;
    const char *const part_line = LINE.part[hp->bipartition];
    const size_t *const members = ws->members;
    size_t *const cluster = s->cluster;
    double *const alpha = ws->alpha, *const buf = ws->buf;
    const unsigned char *const side = ws->side;
    const long t = (long)s->t, rep = (long)members[0];

    /* req: cfl.alg5.l10 */
    /* α_ij for i, j ∈ c, emitted row by row (row a belongs to client
     * members[a]) */
    pflref_status st = pflref_cluster_similarity(ws->dtheta, s->P, members,
                                                 m, alpha, err);
    if (st != PFLREF_OK)
        return st;
    emit_similarity(trace, t, members, m, alpha);

    /* req: cfl.alg5.l11 */
    /* (c₁, c₂) and α_max^cross */
    double cross;
    st = pflref_cluster_bipartition(alpha, m, method, ws->side, &cross, ws->L,
                                    ws->biwork, err);
    if (st != PFLREF_OK)
        return st;
    /*@ loop assigns part, buf[0 .. \at(s->N, Pre) - 1]; */
    for (unsigned char part = 0; part < 2; part++) {
        size_t k = 0;
        /*@ loop invariant 0 <= k <= a <= m;
            loop assigns a, k, buf[0 .. \at(s->N, Pre) - 1]; */
        for (size_t a = 0; a < m; a++)
            if (side[a] == part)
                buf[k++] = (double)members[a];
        pflref_trace_emit(trace, PFLREF_EV_NOTE, "train", t, rep, -1,
                          part == 0 ? "c1" : "c2", buf, k, part_line);
    }
    pflref_trace_emit(trace, PFLREF_EV_NOTE, "train", t, rep, -1,
                      "alpha_cross", &cross, 1, LINE.cross);

    /* req: cfl.alg5.l12 */
    /* γ_max < √((1 − α_max^cross)/2) */
    const int split = splits(gamma_max, cross);
    const double flag = split ? 1.0 : 0.0;
    pflref_trace_emit(trace, PFLREF_EV_NOTE, "train", t, rep, -1, "split",
                      &flag, 1, LINE.split);
    if (split) {
        /* C_tmp ← (C_tmp \ c) ∪ {c₁, c₂}: side a is position a of c,
         * mapped back to client members[a] */
        /*@ loop invariant 0 <= a <= m;
            loop assigns a, cluster[0 .. \at(s->N, Pre) - 1]; */
        for (size_t a = 0; a < m; a++)
            if (side[a] == 1)
                cluster[members[a]] = *next;
        (*next)++;
    }
    return PFLREF_OK;
}

/* The split test of cluster c: its members and Δθ_c (cluster_update),
 * ‖Δθ_c‖ < ε₁ and max_{i∈c} ‖Δθ_i‖ > ε₂, then the guards, then
 * split_cluster.  Emits the cluster's notes with client = its smallest
 * member.  Proved call sites (proofs/README.md): each Δθ_i is a row of Δθ,
 * and split_cluster gets 2 ≤ m ≤ N members, each < N. */
/*@ requires state_base(s) && cfl_work_shape(ws, s);
    requires \valid(next) && \separated(next, s, ws, err);
    requires \separated(err, s, ws) && \separated(next, s->cluster +
             (0 .. s->N - 1), ws->members + (0 .. s->N - 1));
    assigns CFL_CLUSTER_FRAME(ws, s, s->N, s->P),
            CFL_SPLIT_FRAME(ws, s, s->N), *next, *err; */
static pflref_status test_cluster(pflref_state *s, const cfl_work *ws,
                                  size_t c, size_t *next,
                                  const pflref_trace *trace,
                                  pflref_error *err)
{
    const pflref_cfl_hyper *hp = &s->hyper->cfl;
    const double eps1 = hp->eps1, eps2 = hp->eps2;
    const size_t min_size = hp->min_cluster_size, warmup = hp->warmup;
    const char *const norm_line = LINE.norm[hp->cluster_weights];
    const size_t P = s->P, N = s->N;
    const size_t *const members = ws->members;
    double *const dtheta = ws->dtheta;
    const double *const acc = s->accum;

    /* Δθ_c and the two norms of the test */
    const size_t m = cluster_update(s, ws, c);
    const long t = (long)s->t, rep = (long)members[0];
    const double norm_c = norm2(acc, P);
    double max_i = 0.0;
    /*@ loop invariant 0 <= a <= m; loop assigns a, max_i; */
    for (size_t a = 0; a < m; a++) {
        const double n_i = norm2(pflref_row(dtheta, members[a], N, P), P);
        max_i = n_i > max_i ? n_i : max_i;
    }
    /* finite updates whose norm exceeds DBL_MAX (entries near it): stop
     * before a non-finite value is recorded */
    if (!isfinite(norm_c) || !isfinite(max_i))
        return pflref_error_diverge(err, t, rep, -1,
                                    isfinite(norm_c) ? "max_norm_dtheta"
                                                     : "norm_dtheta_c");
    pflref_trace_emit(trace, PFLREF_EV_NOTE, "train", t, rep, -1,
                      "norm_dtheta_c", &norm_c, 1, norm_line);
    pflref_trace_emit(trace, PFLREF_EV_NOTE, "train", t, rep, -1,
                      "max_norm_dtheta", &max_i, 1, LINE.max);

    /* req: cfl.alg5.l9 */
    /* Alg. 5: if ‖Δθ_c‖ < ε₁ and max_{i∈c} ‖Δθ_i‖ > ε₂ (and the guards) */
    if (!(norm_c < eps1 && max_i > eps2) || m < 2 ||
        (min_size > 0 && m < min_size) || s->t < warmup)
        return PFLREF_OK;
    return split_cluster(s, ws, m, next, trace, err);
}

/* Every client i: Δθ_i ← SGD_n(θ_i, D_i) − θ_i, local SGD with step η.
 * Proved call sites (proofs/README.md): θ_i and Δθ_i are rows i < N. */
/*@ requires cfl_round_shape(s, ws, plan, err);
    assigns CFL_LOCAL_FRAME(ws, s->N, s->P), *err; */
static pflref_status local_updates(pflref_state *s, const cfl_work *ws,
                                   const pflref_round_plan *plan,
                                   const pflref_trace *trace,
                                   pflref_error *err)
{
    const double eta = s->hyper->eta;
    const size_t P = s->P, N = s->N, M = plan->m;
    const long t = (long)s->t;
    double *const theta = ws->theta, *const dtheta = ws->dtheta;
    double *const v = s->v;
    /*@ loop invariant 0 <= j <= M && state_model(s);
        loop assigns j, CFL_LOCAL_FRAME(ws, N, P), *err; */
    for (size_t j = 0; j < M; j++) {
        const size_t i = plan->clients[j];
        const double *theta_i = pflref_row(v, i, N, P);
        double *d_i = pflref_row(dtheta, i, N, P);
        pflref_client_begin(s, i, "theta", theta, theta_i, trace);
        pflref_optim_begin(s, i);   /* its optimizer (opt.state) */
        const pflref_local_sgd job = pflref_local_sgd_plain(
            s, i, &plan->batches[j], eta, "theta", LINE.client);
        pflref_status st = pflref_local_sgd_run(&job, theta, ws->g, s->ws,
                                                trace, err);
        if (st != PFLREF_OK)
            return st;
        /*@ loop invariant 0 <= p <= P; loop assigns p, d_i[0 .. P - 1]; */
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
 * member); returns the number of clusters.  Its frame is an assumption of
 * the proof of cfl_round_with (proofs/README.md): it writes map, the
 * labels and buf, N entries each (every label is below next ≤ N: each
 * label names a non-empty cluster). */
/*@ assigns ws->map[0 .. s->N - 1], s->cluster[0 .. s->N - 1],
            ws->buf[0 .. s->N - 1]; */
static size_t relabel(pflref_state *s, const cfl_work *ws, size_t next,
                      const pflref_trace *trace)
{
    const size_t N = s->N;
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
 * i ∈ c.  Proved call sites (proofs/README.md): each θ_i is a row i < N of
 * s->v (cluster_update's members). */
/*@ requires state_personal(s) && cfl_work_shape(ws, s);
    requires \separated(err, s, ws);
    assigns CFL_UPDATE_FRAME(ws, s, s->N, s->P), *err; */
static pflref_status apply_updates(pflref_state *s, const cfl_work *ws,
                                   size_t K, const pflref_trace *trace,
                                   pflref_error *err)
{
    const size_t P = s->P, N = s->N;
    const long t = (long)s->t;
    const char *const line = LINE.update[s->hyper->cfl.cluster_weights];
    const size_t *const members = ws->members;
    double *const v = s->v;
    const double *const acc = s->accum;
    /*@ loop invariant state_personal(s) && cfl_work_shape(ws, s);
        loop assigns c, CFL_CLUSTER_FRAME(ws, s, N, P), v[0 .. N * P - 1]; */
    for (size_t c = 0; c < K; c++) {
        const size_t m = cluster_update(s, ws, c);
        pflref_trace_emit(trace, PFLREF_EV_NOTE, "train", t,
                          (long)members[0], -1, "dtheta_c", acc, P, line);
        /*@ loop invariant 0 <= a <= m; loop assigns a, v[0 .. N * P - 1]; */
        for (size_t a = 0; a < m; a++) {
            double *theta_i = pflref_row(v, members[a], N, P);
            pflref_accumulate(theta_i, 1.0, acc, P);   /* θ_i += Δθ_c */
            if (!pflref_all_finite(theta_i, P))
                return pflref_error_diverge(err, t, (long)members[a], -1,
                                            "theta");
        }
    }
    return PFLREF_OK;
}

/* One round of CFL with the workspace ws = s->extra.  Proved call sites
 * (proofs/README.md): from the run's state, the validated plan and the
 * workspace, every client's rows of s->v and Δθ, and every cluster's
 * members, similarities and bipartition, lie in their arrays. */
/*@ requires state_personal(s) && state_model(s);
    requires round_plan(plan, s->N);
    requires cfl_work_shape(ws, s);
    requires \separated(err, s, s->problem, ws, plan); */
static pflref_status cfl_round_with(pflref_state *s, const cfl_work *ws,
                                    const pflref_round_plan *plan,
                                    const pflref_trace *trace,
                                    pflref_error *err)
{
    const size_t N = s->N, P = s->P;
    const size_t *const cluster = s->cluster;
    double *const v = s->v;

    /* req: cfl.alg5.l3, cfl.alg5.l5 */
    /* Every client i: Δθ_i ← SGD_n(θ_i, D_i) − θ_i */
    pflref_status st = local_updates(s, ws, plan, trace, err);
    if (st != PFLREF_OK)
        return st;

    /* Server: test every cluster of C (labels 0..K−1) on this round's
     * updates; a split gives its c₂ a fresh label K, K + 1, ... */
    size_t K = 0;
    /*@ loop assigns i, K; */
    for (size_t i = 0; i < N; i++)
        K = cluster[i] + 1 > K ? cluster[i] + 1 : K;
    /* req: cfl.alg5.l6 */
    size_t next = K;
    /* req: cfl.alg5.l7 */
    /*@ loop invariant s->N == N && s->P == P;
        loop invariant state_personal(s) && cfl_work_shape(ws, s);
        loop assigns c, st, next, CFL_CLUSTER_FRAME(ws, s, N, P),
                     CFL_SPLIT_FRAME(ws, s, N), *err; */
    for (size_t c = 0; c < K && st == PFLREF_OK; c++)
        st = test_cluster(s, ws, c, &next, trace, err);
    if (st != PFLREF_OK)
        return st;

    /* req: cfl.alg5.l13, cfl.alg5.l4 */
    /* C ← C_tmp; then θ_i ← θ_i + Δθ_c for every cluster c of it */
    st = apply_updates(s, ws, relabel(s, ws, next, trace), trace, err);
    if (st != PFLREF_OK)
        return st;
    /*@ loop assigns i; */
    for (size_t i = 0; i < N; i++)
        pflref_trace_emit(trace, PFLREF_EV_CLIENT_END, "train", (long)s->t,
                          (long)i, -1, "v", pflref_row(v, i, N, P), P, NULL);
    return PFLREF_OK;
}

/* --trace's view of Algorithm 1 (ref/engine/trace_cluster.h): a sink in
 * front of the caller's that keeps the tested cluster's α from its
 * "similarity" rows (l. 10) and, when the bipartition's "c1" arrives (l. 11:
 * Algorithm 1 has run on that α), first emits Algorithm 1's lines 2–6
 * recomputed on it.  Outside the proved round (cfl_round_with): it reads
 * the events only and forwards each unchanged. */
typedef struct {
    const pflref_trace *next;
    double *alpha;      /* N×N: the rows received, row a at a·m */
    size_t *members;    /* N: the client of each row */
    size_t N, m, rows;
} steps_sink;

static void steps_emit(void *ctx, const pflref_event *ev)
{
    steps_sink *k = ctx;
    if (ev->kind == PFLREF_EV_NOTE && strcmp(ev->name, "similarity") == 0 &&
        ev->len >= 2 && ev->len <= k->N && ev->client >= 0) {
        if (k->rows == k->m || ev->len != k->m)
            k->m = ev->len, k->rows = 0;   /* the first row of a cluster */
        memcpy(k->alpha + k->rows * k->m, ev->value, k->m * sizeof(double));
        k->members[k->rows++] = (size_t)ev->client;
    } else if (ev->kind == PFLREF_EV_NOTE && strcmp(ev->name, "c1") == 0 &&
               k->m >= 2 && k->rows == k->m) {
        pflref_trace_bipartition_steps(k->next, ev->round, ev->client,
                                       k->members, k->m, k->alpha);
        k->rows = 0;
    }
    pflref_trace_emit(k->next, ev->kind, ev->phase, ev->round, ev->client,
                      ev->step, ev->name, ev->value, ev->len, ev->formula);
}

static pflref_status cfl_round(pflref_state *s, const pflref_round_plan *plan,
                               const pflref_trace *trace, pflref_error *err)
{
    const size_t N = s->N;
    steps_sink k = {.next = trace, .N = N};
    /* with a trace and the paper's Algorithm 1 only (complete linkage has
     * no lines 2–6); without the memory, the trace as it was */
    if (trace != NULL && trace->emit != NULL &&
        s->hyper->cfl.bipartition == PFLREF_BIPARTITION_OPTIMAL &&
        N <= ((size_t)-1) / sizeof(double) / N) {
        k.alpha = malloc(N * N * sizeof *k.alpha);
        k.members = malloc(N * sizeof *k.members);
    }
    const pflref_trace shown = {steps_emit, &k};
    const int wrap = k.alpha != NULL && k.members != NULL;
    pflref_status st =
        cfl_round_with(s, s->extra, plan, wrap ? &shown : trace, err);
    free(k.alpha);
    free(k.members);
    return st;
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
    .opt_slots = 1,   /* the local SGD's optimizer */
};
