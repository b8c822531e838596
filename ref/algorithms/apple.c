/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/algorithms/apple.c: APPLE, Algorithm 1 of
 *   J. Luo, S. Wu, "Adapt to Adaptation: Learning Personalization for
 *   Cross-Silo Federated Learning", IJCAI 2022, arXiv 2110.08394v3,
 * in the case where every client downloads every other core model each
 * round (the authors' code with limit_downloaded_models + 1 ≥ N).
 *
 * The box (Alg. 1, "APPLE"), as trace/apple.req numbers it (its text was
 * not retrievable: docs/algorithms/apple.md lists the sources searched;
 * the lines are pflref's reading of the
 * paper's Section 3 and of the authors' code, docs/algorithms/apple.md):
 *   l. 1  the server initialises the core models w_1⁰ = … = w_N⁰ = w⁰;
 *         client i initialises p_i ← p_0, p_0 = (n_1/n, …, n_N/n)
 *   l. 2  for each round r = 0, 1, …, R − 1 do
 *   l. 3    for each client i in parallel do
 *   l. 4      download the core models w_j, j ≠ i, from the server
 *   l. 5      for each local step with batch b do
 *   l. 6        w_p^(i) ← Σ_j p_ij w_j                          (eq. (1))
 *   l. 7        ℒ ← ℓ_i(w_p^(i); b) + λ(r) (μ/2)‖p_i − p_0‖²    (eq. (3))
 *   l. 8        (the gradients of ℒ at that point)
 *   l. 9        w_i ← w_i − η ∂ℒ/∂w_i = w_i − η p_ii ∇ℓ_i(w_p^(i); b)
 *   l. 10       p_i ← p_i − η_p ∂ℒ/∂p_i,
 *               ∂ℒ/∂p_ij = ⟨w_j, ∇ℓ_i(w_p^(i); b)⟩ + λ(r) μ (p_ij − p_0j)
 *   l. 11     upload w_i to the server
 * with the loss scheduler (eq. (4))
 *   λ(r) = (cos(rπ/L) + 1)/2 for r < L, 0 for r ≥ L.
 * The cores downloaded in l. 4 stay fixed during the local steps (only
 * w_i and p_i have gradients: utils/apple.py:43); the personalised model
 * of client i is w_p^(i) = Σ_j p_ij w_j over its own final core and the
 * cores it downloaded (the authors' evaluation, train_APPLE.py:191-205).
 * A schedule with partial participation runs l. 4-11 for the round's
 * participants; every download is the server's copy at the round's
 * start (a client outside the round keeps w_i, p_i and w_p^(i)).
 *
 * Symbols:  w_i ↔ s->v + i·P (trace "w_i")   w_j as downloaded ↔
 *           ws->w_prev + j·P   p_i ↔ ws->p + i·N (trace "p_i")
 *           p_0 ↔ ws->p0 (N)   w_p^(i) ↔ ws->w_p + i·P (trace "w_p")
 *           λ(r) ↔ trace "lambda"   μ ↔ apple.mu   L ↔ apple.L
 *           η ↔ hyper->eta   η_p ↔ hyper->eta_p
 *
 * Switches (the paper's reading first; the authors' code ljaiverson/
 * pFL-APPLE 8078196731b5, preset official; TsingZ0/PFLlib d832e76f6a23,
 * preset pfllib):
 *   apple.scheduler     cosine | exponential: λ(r) = 0.001^{r/L}
 *                       (utils/losses.py:18-21, the default of
 *                       utils/utils.py:37)
 *   apple.prox          half: λ(r)(μ/2)‖p_i − p_0‖² | full: λ(r) μ
 *                       ‖p_i − p_0‖² (utils/losses.py:4-6)
 *   apple.p_init        samples: p_i⁰ = p_0 | uniform: 1/N
 *                       (clientapple.py:22)
 *   apple.order         joint | core_first: w_i steps first, ∂ℒ/∂p_ii
 *                       then reads the new w_i (clientapple.py:55-66)
 *   apple.p_grad        inner | block_mean: the mean over the parameter
 *                       blocks of each block's mean of w_j ⊙ ∇ℓ
 *                       (clientapple.py:58-64)
 *   apple.core_lr       eta | n_eta: the core steps by N η
 *                       (clientapple.py:18)
 *   apple.lambda_round  current: λ(r) | previous: λ(r − 1), 1 in round 0
 *                       (clientapple.py:15, :68-71)
 *   apple.upload        core | mixture: the core carried to the next round
 *                       (and w_p^(i)) is the last step's mixture
 *                       (clientapple.py:77)
 *   apple.peers         snapshot | sequential: a participant downloads
 *                       the stepped cores of those before it in ascending
 *                       id (serverapple.py:46-47, :84; clientapple.py:55-56,
 *                       :74-75); preset pfllib_run = pfllib + both
 *   apple.stale         last_download | initial: under limited downloads
 *                       (apple.M), a core not downloaded this round is the
 *                       client's copy from its last download of it
 *                       (utils/apple.py:34-37 skips it; the client's
 *                       ClientNet keeps it) | w⁰
 * Limited downloads (apple.M, the paper's M < N − 1 cores a round; the
 * authors' get_download_which, utils/apple.py:47-76, drawn as data): a
 * round's "peers" lists, per participant, the M cores it downloads
 * (check_downloads); each client keeps a copy of every core (ws->copies,
 * N × N × P), which l. 4 refreshes for the listed cores (download) and
 * the steps, ∂ℒ/∂p_i and w_p^(i) read (core_of).  A round without a list
 * downloads every core; apple.M unset: no copies, every download the
 * round's snapshot (the code path of before, bit for bit).
 *
 * The client optimizer (opt.*, ref/engine/optim.c; default plain SGD,
 * l. 9-10 as above).  The authors' code steps w_i and p_i with one
 * torch.optim.SGD built for every client update, two parameter groups:
 * the client's core (lr η) and p_i (`ps`, lr η_p), momentum 0.9
 * (ljaiverson/pFL-APPLE train_APPLE.py:46-52, the step at :62; the other
 * cores have requires_grad = False, utils/apple.py:43, so the optimizer
 * never moves them).  opt.* is that object: one optimizer, the two groups
 * (η or N η on w_i, η_p on p_i), over the model's blocks of w_i and one
 * block `ps` of N entries (torch's per-tensor state: p_i has its own
 * buffer and step count), on the gradient d = (p_ii ∇ℓ_i(w_p^(i); b),
 * ∂ℒ/∂p_i) both at the step's start point (apple.order = joint; weight
 * decay, as torch's default group setting, reaches p_i too; clipping
 * takes the norm over both groups).  PFLlib builds self.optimizer but
 * never steps it (clientapple.py:52 zero_grad, then w_i and p_i by hand
 * at :56 and :66): opt.* is refused with apple.order = core_first, whose
 * ∂ℒ/∂p_ii reads the new w_i and so is no one optimizer step; APPLE has
 * no split, so opt.decay_scope = shared | personal are refused too.
 *
 * Batch normalisation (bn.aggregate): under average (the default) a
 * model with it is refused (w_p^(i) would mix the running statistics of
 * the cores).  Under parameters_only (PFLlib's reading; presets pfllib and
 * pfllib_run) it runs: clientapple.py:93-100 aggregate_parameters mixes
 * only parameters() into client i's self.model, whose buffers r_i stay its
 * own and move with each training pass (clientapple.py:50), and no core's
 * statistics are ever read.  So, B the buffer entries: w_p^(i) on B is r_i
 * (s->bn_own row i, w⁰'s at the start; ref/engine/bn_own.c), each step's
 * training pass moves it (bn.running's rule), the cores' B never step
 * (their gradient is 0 there), and apple.p_grad = block_mean averages the
 * parameters() blocks only (clientapple.py:61-64 zips parameters()).
 *
 * State and work: w_i is the state's v_i; p_i and w_p^(i) live across
 * rounds in the work struct (reported as the notes "p_i" and "w_p", and
 * reloaded from them by check --resync: apple_load_state).
 * Trace: per participant NOTE "lambda" (λ(r)), CLIENT_BEGIN "w_i", after
 * every step STEP "w_i" and STEP "p_i" (N), then CLIENT_END "w_i", NOTE
 * "p_i" and NOTE "w_p".
 * Determinism: participants in ascending id, every download from the
 * snapshot taken at the round's start; Σ_j over j ascending, inner
 * products and block sums in index order.
 * Cost per step: O(N · P) for the mixture and ∂ℒ/∂p_i + one gradient.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "algorithms/algorithms.h"
#include "engine/bn_own.h"
#include "engine/work.h"

static const char *const MIX_LINE =
    "Alg. 1 l. 6: w_p^(i) = Σ_j p_ij w_j";
static const char *const LAMBDA_LINE[] = {
    "eq. (4): λ(r) = (cos(rπ/L) + 1)/2 (r < L), 0 (r ≥ L)",
    "λ(r) = 0.001^{r/L} (r < L), 0 (r ≥ L)  (apple.scheduler = "
    "exponential)"};
static const char *const CORE_LINE =
    "Alg. 1 l. 9: w_i ← w_i − η p_ii ∇ℓ_i(w_p^(i); b)";
static const char *const P_LINE =
    "Alg. 1 l. 10: p_ij ← p_ij − η_p (⟨w_j, ∇ℓ_i(w_p^(i); b)⟩ + "
    "λ(r) μ (p_ij − p_0j))";

/* --trace alone (an intermediate: no record keeps it), l. 7's ℒ at the
 * step's start point; the step itself needs only ℒ's gradients. */
static const char *const OBJECTIVE_LINE =
    "Alg. 1 l. 7: ℒ = ℓ_i(w_p^(i); b) + λ(r) (μ/2) ‖p_i − p_0‖²";

/* The authors' ε of the exponential scheduler (utils/losses.py:20). */
#define APPLE_EXP_EPSILON 0.001
/* π to double precision (C11 has no M_PI). */
#define APPLE_PI 3.14159265358979323846

/* APPLE's work buffers (zero-filled). */
typedef struct {
    pflref_work list;    /* the allocations (ref/engine/work.h)          */
    double *w_prev;      /* N×P: the cores at the round's start (l. 4)   */
    double *p;           /* N×N: row i is p_i                            */
    double *p0;          /* N: p_0 = (n_j / n)_j                         */
    double *w_p;         /* N×P: row i is w_p^(i)                        */
    double *theta;       /* P: w_p^(i) of the current step               */
    double *g;           /* P: ∇ℓ_i(w_p^(i); b)                          */
    double *g_p;         /* N: ∂ℒ/∂p_i                                   */
    /* the client optimizer (opt.*): its vector (w_i, p_i) of P + N entries */
    pflref_model om;     /* its blocks: the model's, then "ps" (N)        */
    unsigned char *group;/* P + N: 1 on p_i, the η_p parameter group      */
    double *xq;          /* P + N: (w_i, p_i)                             */
    double *dq;          /* P + N: (p_ii ∇ℓ, ∂ℒ/∂p_i)                      */
    /* the limited downloads (apple.M set): client i's copies of the cores,
     * N×N×P, row i·N + j its copy of core j (NULL: every participant
     * downloads every core, the copies are w_prev) */
    double *copies;
} apple_work;

static void *apple_work_alloc(const pflref_problem *problem,
                              const pflref_hyper *hyper)
{
    const size_t P = problem->model.P, N = problem->N;
    apple_work *ws = calloc(1, sizeof *ws);
    if (ws == NULL)
        return NULL;
    ws->w_prev = pflref_work_doubles(&ws->list, N, P);
    ws->p = pflref_work_doubles(&ws->list, N, N);
    ws->p0 = pflref_work_doubles(&ws->list, N, 1);
    ws->w_p = pflref_work_doubles(&ws->list, N, P);
    ws->theta = pflref_work_doubles(&ws->list, P, 1);
    ws->g = pflref_work_doubles(&ws->list, P, 1);
    ws->g_p = pflref_work_doubles(&ws->list, N, 1);
    ws->group = pflref_work_flags(&ws->list, P + N);
    ws->xq = pflref_work_doubles(&ws->list, P + N, 1);
    ws->dq = pflref_work_doubles(&ws->list, P + N, 1);
    if (hyper->apple.M != PFLREF_INT_UNSET)
        ws->copies = pflref_work_doubles(&ws->list, N * N, P);
    /* the optimizer's view: the model's blocks, then p_i as block "ps"
     * (apple_check leaves room for it when opt.* is set) */
    const pflref_model *m = &problem->model;
    ws->om.kind = m->kind;
    ws->om.P = P + N;
    ws->om.nblocks = 0;
    for (size_t b = 0; b < m->nblocks && b < PFLREF_MAX_BLOCKS; b++)
        ws->om.blocks[ws->om.nblocks++] = m->blocks[b];
    if (ws->om.nblocks < PFLREF_MAX_BLOCKS) {
        pflref_block *ps = &ws->om.blocks[ws->om.nblocks++];
        *ps = (pflref_block){.offset = P, .size = N, .rows = 1, .cols = N};
        snprintf(ps->name, sizeof ps->name, "ps");
    }
    if (ws->group != NULL)
        for (size_t q = P; q < P + N; q++)
            ws->group[q] = 1;
    return pflref_work_ready(ws);
}

/* The length of the optimizer's vector (w_i, p_i). */
static size_t apple_opt_length(const pflref_problem *problem,
                               const pflref_hyper *hyper)
{
    (void)hyper;
    return problem->model.P + problem->N;
}

/* req: apple.downloads */
/* The limited downloads (the paper's M < N − 1 cores per round): a round's
 * "peers" lists, for each participant, the M other clients whose cores it
 * downloads (apple.M, which must be set; M ≤ N − 1), none twice, never
 * the client itself.  A round without peers downloads every core. */
static pflref_status check_downloads(const pflref_problem *problem,
                                     const pflref_hyper *hyper,
                                     const pflref_schedule *schedule,
                                     pflref_error *err)
{
    const size_t M = hyper->apple.M, N = problem->N;
    if (M != PFLREF_INT_UNSET && M >= N)
        return pflref_error_set(
            err, PFLREF_EINVAL, "algorithm.hyperparameters.apple.M",
            "apple.M = %zu cores downloaded per round must be below N = %zu "
            "(a participant downloads the others' cores)", M, N);
    for (size_t t = 0; t < schedule->T; t++) {
        const pflref_round_plan *r = &schedule->rounds[t];
        if (r->peers == NULL)
            continue;
        char where[PFLREF_WHERE_MAX];
        if (M == PFLREF_INT_UNSET) {
            snprintf(where, sizeof where, "schedule.rounds[%zu].peers", t);
            return pflref_error_set(
                err, PFLREF_EINVAL, where,
                "apple takes a round's peers as the cores each participant "
                "downloads under limited bandwidth: give apple.M, the number "
                "each list holds");
        }
        for (size_t j = 0; j < r->m; j++) {
            const size_t lo = r->peers->step_off[j];
            const size_t len = r->peers->step_off[j + 1] - lo;
            const size_t *ids = r->peers->idx + lo;
            if (len != M) {
                snprintf(where, sizeof where, "schedule.rounds[%zu].peers[%zu]",
                         t, j);
                return pflref_error_set(
                    err, PFLREF_EINVAL, where,
                    "client %zu downloads %zu cores; apple.M = %zu",
                    r->clients[j], len, M);
            }
            for (size_t q = 0; q < len; q++) {
                snprintf(where, sizeof where,
                         "schedule.rounds[%zu].peers[%zu][%zu]", t, j, q);
                if (ids[q] == r->clients[j])
                    return pflref_error_set(
                        err, PFLREF_EINVAL, where,
                        "client %zu is listed among its own downloads (its "
                        "own core is always on the client)", ids[q]);
                for (size_t u = 0; u < q; u++)
                    if (ids[u] == ids[q])
                        return pflref_error_set(
                            err, PFLREF_EINVAL, where,
                            "core %zu is listed twice", ids[q]);
            }
        }
    }
    return PFLREF_OK;
}

/* The registry holds η, η_p > 0, μ ≥ 0, L ≥ 1; here the model: one
 * without batch normalisation under bn.aggregate = average (w_p^(i) would
 * mix every entry, running statistics included), and training sets that
 * are not all empty (p_0 divides by n = Σ_j n_j). */
static pflref_status apple_check(const pflref_problem *problem,
                                 const pflref_hyper *hyper,
                                 const pflref_schedule *schedule,
                                 const unsigned char *mask,
                                 pflref_error *err)
{
    (void)mask;
    if (problem->model.bn && !pflref_bn_keeps_own_in(problem, hyper))
        return pflref_error_set(err, PFLREF_EINVAL, "model",
                                "apple: a model with batch normalisation "
                                "needs bn.aggregate = parameters_only "
                                "(PFLlib's reading: w_p = Σ_j p_ij w_j over "
                                "parameters(), each client's running "
                                "statistics its own); under average it "
                                "would mix the cores' running statistics");
    pflref_status st0 = pflref_bn_no_first_upload(
        schedule, "apple keeps no global model",
        "each mixture w_p^(i) takes client i's own running statistics; "
        "PFLlib clientapple.py:93-100 mixes the downloaded cores' "
        "parameters() into the client's own model", err);
    if (st0 != PFLREF_OK)
        return st0;
    if (!(pflref_train_n(problem, NULL, problem->N) > 0.0))
        return pflref_error_set(err, PFLREF_EINVAL, "clients",
                                "apple: p_0 = n_j / Σ_k n_k needs at least "
                                "one training sample over the clients");
    pflref_status st = check_downloads(problem, hyper, schedule, err);
    if (st != PFLREF_OK)
        return st;
    if (pflref_optim_is_plain(&hyper->opt))
        return PFLREF_OK;
    /* the client optimizer: one step on (w_i, p_i) at one point */
    if (hyper->apple.order == PFLREF_APPLE_ORDER_CORE_FIRST)
        return pflref_error_set(
            err, PFLREF_EINVAL, "algorithm.switches.apple.order",
            "apple.order = core_first forms ∂ℒ/∂p_ii from the new w_i "
            "(PFLlib's hand-written steps, clientapple.py:55-66, which "
            "never call optimizer.step()), so it is not one optimizer step; "
            "the client optimizer (opt.*) steps w_i and p_i together, as "
            "the authors' torch.optim.SGD does: use apple.order = joint or "
            "plain SGD");
    if (hyper->opt.decay_scope == PFLREF_OPT_SCOPE_SHARED ||
        hyper->opt.decay_scope == PFLREF_OPT_SCOPE_PERSONAL)
        return pflref_error_set(
            err, PFLREF_EINVAL, "algorithm.switches.opt.decay_scope",
            "apple has no split of shared and personal blocks (each client "
            "steps its core w_i and its p_i); opt.decay_scope takes all or "
            "weights here");
    if (problem->model.nblocks >= PFLREF_MAX_BLOCKS)
        return pflref_error_set(
            err, PFLREF_EINVAL, "model",
            "apple's client optimizer steps the model's %zu blocks and p_i "
            "as one more; at most %d blocks", problem->model.nblocks,
            PFLREF_MAX_BLOCKS - 1);
    return PFLREF_OK;
}

/* req: apple.alg1.l1 */
/* l. 1: p_0 = (n_j / n)_j; p_i⁰ = p_0 (apple.p_init = uniform: 1/N);
 * every core is w⁰ (the driver's copies), so w_p^(i) = Σ_j p_ij w⁰. */
static pflref_status apple_init(pflref_state *s, pflref_error *err)
{
    apple_work *ws = s->extra;
    /* bn.aggregate = parameters_only: r_i, w⁰'s at the start */
    const int keep = pflref_bn_keeps_own(s);
    if (keep) {
        pflref_status st = pflref_bn_own_alloc(s, err);
        if (st != PFLREF_OK)
            return st;
    }
    const size_t P = s->P, N = s->N;
    const double n = pflref_train_n(s->problem, NULL, N);
    const int uniform = s->hyper->apple.p_init == PFLREF_APPLE_P_INIT_UNIFORM;
    for (size_t j = 0; j < N; j++)
        ws->p0[j] = (double)s->problem->clients[j].train.n / n;
    for (size_t i = 0; i < N; i++) {
        double *p_i = ws->p + i * N;
        for (size_t j = 0; j < N; j++)
            p_i[j] = uniform ? 1.0 / (double)N : ws->p0[j];
        for (size_t q = 0; q < P; q++) {
            double x = 0.0;
            for (size_t j = 0; j < N; j++)
                x += p_i[j] * s->w0[q];
            ws->w_p[i * P + q] = x;
        }
        if (keep)   /* w_p^(i)'s running statistics: r_i = w⁰'s */
            pflref_bn_copy_buffers(&s->problem->model, ws->w_p + i * P,
                                   s->w0);
        for (size_t j = 0; ws->copies != NULL && j < N; j++)
            memcpy(ws->copies + (i * N + j) * P, s->w0, P * sizeof *s->w0);
    }
    return PFLREF_OK;
}

/* req: apple.eq4 */
/* λ(r) of the loss scheduler (eq. (4), or the exponential shape); round
 * r of apple.lambda_round = previous reads λ(r − 1), and 1 in round 0. */
static double apple_lambda(const pflref_apple_hyper *h, size_t t)
{
    size_t r = t;
    if (h->lambda_round == PFLREF_APPLE_LAMBDA_ROUND_PREVIOUS) {
        if (t == 0)
            return 1.0;
        r = t - 1;
    }
    if (r >= h->L)
        return 0.0;
    const double x = (double)r / (double)h->L;
    if (h->scheduler == PFLREF_APPLE_SCHEDULER_EXPONENTIAL)
        return pow(APPLE_EXP_EPSILON, x);
    return (cos(APPLE_PI * x) + 1.0) / 2.0;
}

/* Core j (≠ i) as client i holds it: its copy (limited downloads), or
 * the download of this round, w_prev_j. */
static const double *core_of(const apple_work *ws, size_t i, size_t j,
                             size_t N, size_t P)
{
    return ws->copies != NULL ? ws->copies + (i * N + j) * P
                              : ws->w_prev + j * P;
}

/* out := Σ_j p_i[j] c_j (j ascending), c_j = core_of(i, j) for j ≠ i and
 * w_i for j = i. */
static void mix(const apple_work *ws, size_t i, const double *p_i,
                const double *w_i, size_t N, size_t P, double *out)
{
    for (size_t q = 0; q < P; q++) {
        double x = 0.0;
        for (size_t j = 0; j < N; j++)
            x += p_i[j] * (j == i ? w_i[q] : core_of(ws, i, j, N, P)[q]);
        out[q] = x;
    }
}

/* req: apple.downloads */
/* l. 4 under limited downloads: client i's copy of core j becomes the
 * download w_prev_j for each j the round lists for it (a round without a
 * list: every j); the others stay its last download's (apple.stale =
 * last_download) or become w⁰ (initial). */
static void download(const pflref_state *s, apple_work *ws, size_t i,
                     const pflref_round_plan *plan, size_t a)
{
    const size_t P = s->P, N = s->N;
    const int initial = s->hyper->apple.stale == PFLREF_APPLE_STALE_INITIAL;
    for (size_t j = 0; j < N; j++) {
        if (j == i)
            continue;
        int listed = plan->peers == NULL;
        for (size_t q = plan->peers != NULL ? plan->peers->step_off[a] : 0;
             !listed && q < plan->peers->step_off[a + 1]; q++)
            listed = plan->peers->idx[q] == j;
        double *c = ws->copies + (i * N + j) * P;
        if (listed)
            memcpy(c, ws->w_prev + j * P, P * sizeof *c);
        else if (initial)
            memcpy(c, s->w0, P * sizeof *c);
    }
}

/* The data part of ∂ℒ/∂p_ij for the core c: ⟨c, g⟩, or (block_mean) the
 * mean over the model's blocks of each block's mean of c ⊙ g. */
static double p_grad_data(const pflref_model *m, int block_mean,
                          const double *c, const double *g)
{
    if (!block_mean) {
        double x = 0.0;
        for (size_t q = 0; q < m->P; q++)
            x += c[q] * g[q];
        return x;
    }
    /* over parameters(): a buffer block (r_μ, r_v) is none */
    double sum = 0.0;
    size_t count = 0;
    for (size_t b = 0; b < m->nblocks; b++) {
        const pflref_block *blk = &m->blocks[b];
        if (blk->is_buffer)
            continue;
        double x = 0.0;
        for (size_t q = blk->offset; q < blk->offset + blk->size; q++)
            x += c[q] * g[q];
        sum += x / (double)blk->size;
        count++;
    }
    return sum / (double)count;
}

/* ws->g_p := ∂ℒ/∂p_i at the cores (w_prev, w_i), p_i and g:
 * ⟨c_j, g⟩ (or its block mean) + κ λ(r) μ (p_ij − p_0j), κ = 1 (half)
 * or 2 (full). */
static void p_gradient(const pflref_state *s, apple_work *ws, size_t i,
                       const double *w_i, const double *p_i,
                       double lam_mu)
{
    const pflref_apple_hyper *h = &s->hyper->apple;
    const size_t P = s->P, N = s->N;
    const double kappa = h->prox == PFLREF_APPLE_PROX_FULL ? 2.0 : 1.0;
    const int block_mean = h->p_grad == PFLREF_APPLE_P_GRAD_BLOCK_MEAN;
    for (size_t j = 0; j < N; j++) {
        const double *c = j == i ? w_i : core_of(ws, i, j, N, P);
        ws->g_p[j] = p_grad_data(&s->problem->model, block_mean, c, ws->g) +
                     kappa * lam_mu * (p_i[j] - ws->p0[j]);
    }
}

/* l. 7's ℒ for --trace: ℓ_i at w_p^(i) (ws->theta) on step k's batch, on
 * a workspace of the trace's own (the run's is left as the gradient pass
 * left it), plus (κ/2) λ(r) μ ‖p_i − p_0‖², κ = 2 under apple.prox = full
 * (the gradient's 2λμ(p_ij − p_0j)).  Not for a model with dropout, whose
 * every training pass takes the run's next masks. */
static pflref_status trace_objective(const pflref_state *s,
                                     const apple_work *ws, size_t i,
                                     const pflref_batches *b, size_t k,
                                     double lam_mu, const pflref_trace *trace,
                                     pflref_error *err)
{
    const pflref_model *m = &s->problem->model;
    const size_t N = s->N, nb = b->step_off[k + 1] - b->step_off[k];
    if (trace->emit == NULL || pflref_model_dropout_layers(m) > 0)
        return PFLREF_OK;
    pflref_model_workspace *tws = pflref_model_workspace_alloc(m, nb);
    if (tws == NULL)
        return PFLREF_OK;   /* the trace is not the run's result */
    double L;
    pflref_status st = pflref_model_loss(m, ws->theta,
                                         &s->problem->clients[i].train,
                                         b->idx + b->step_off[k], nb, tws, &L);
    pflref_model_workspace_free(tws);
    if (st != PFLREF_OK)
        return pflref_error_set(err, st, "schedule",
                                "the loss failed at round %zu, client %zu, "
                                "step %zu", s->t, i, k + 1);
    const double kappa =
        s->hyper->apple.prox == PFLREF_APPLE_PROX_FULL ? 2.0 : 1.0;
    const double *p_i = ws->p + i * N;
    double sq = 0.0;
    for (size_t j = 0; j < N; j++)
        sq += (p_i[j] - ws->p0[j]) * (p_i[j] - ws->p0[j]);
    L += 0.5 * kappa * lam_mu * sq;
    pflref_trace_emit(trace, PFLREF_EV_INTERMEDIATE, "train", (long)s->t,
                      (long)i, (long)k + 1, "L", &L, 1, OBJECTIVE_LINE);
    return PFLREF_OK;
}

/* One local step (l. 6-10) of client i on step k's batch of b. */
static pflref_status apple_step(pflref_state *s, apple_work *ws, size_t i,
                                const pflref_batches *b, size_t k,
                                double lam_mu, const pflref_trace *trace,
                                pflref_error *err)
{
    const pflref_apple_hyper *h = &s->hyper->apple;
    const size_t P = s->P, N = s->N;
    const long t = (long)s->t;
    const double eta_w = h->core_lr == PFLREF_APPLE_CORE_LR_N_ETA
                             ? (double)N * s->hyper->eta
                             : s->hyper->eta;              /* η (or N η) */
    const double eta_p = s->hyper->eta_p;                  /* η_p */
    double *w_i = s->v + i * P, *p_i = ws->p + i * N;
    /* req: apple.alg1.l6 */
    mix(ws, i, p_i, w_i, N, P, ws->theta);   /* w_p^(i) = Σ_j p_ij w_j */
    const int keep = s->bn_own != NULL;      /* bn.aggregate: r_i on B */
    if (keep)
        pflref_bn_copy_buffers(&s->problem->model, ws->theta,
                               pflref_bn_own_row(s, i));
    /* req: apple.alg1.l7, apple.alg1.l8 */
    pflref_status st = pflref_batch_grad(&s->problem->model, ws->theta,
                                         &s->problem->clients[i].train, b,
                                         k, s->ws, ws->g, t, (long)i, err);
    if (st != PFLREF_OK)
        return st;
    if (keep) {   /* the pass moves r_i (clientapple.py:50, train mode) */
        if ((st = pflref_bn_running_move(&s->hyper->bn, &s->problem->model,
                                         s->ws, ws->theta, t, (long)i,
                                         (long)k + 1, err)) != PFLREF_OK)
            return st;
        pflref_bn_copy_buffers(&s->problem->model, pflref_bn_own_row(s, i),
                               ws->theta);
    }
    /* req: apple.alg1.l7 */
    if (trace != NULL && (st = trace_objective(s, ws, i, b, k, lam_mu,
                                               trace, err)) != PFLREF_OK)
        return st;
    const int core_first = h->order == PFLREF_APPLE_ORDER_CORE_FIRST;
    if (!core_first)   /* both gradients at the step's start point */
        p_gradient(s, ws, i, w_i, p_i, lam_mu);
    pflref_optim_state *opt = pflref_optim_get(s, i, 0);
    if (opt != NULL) {
        /* the client optimizer (opt.*; apple_check: order = joint): one
         * torch step on (w_i, p_i), d = (p_ii g, ∂ℒ/∂p_i), groups η_w
         * (the core) and η_p (p_i) */
        const double p_ii = p_i[i];
        memcpy(ws->xq, w_i, P * sizeof *w_i);
        memcpy(ws->xq + P, p_i, N * sizeof *p_i);
        for (size_t q = 0; q < P; q++)
            ws->dq[q] = p_ii * ws->g[q];
        memcpy(ws->dq + P, ws->g_p, N * sizeof *ws->g_p);
        opt->personal = ws->group;   /* the η_p group: block "ps" */
        (void)pflref_optim_step_groups(opt, &ws->om, NULL, eta_w, eta_p,
                                       ws->dq, ws->xq);
        memcpy(w_i, ws->xq, P * sizeof *w_i);
        memcpy(p_i, ws->xq + P, N * sizeof *p_i);
    } else {
        /* req: apple.alg1.l9 */
        const double p_ii = p_i[i];
        for (size_t q = 0; q < P; q++)   /* w_i ← w_i − η p_ii g */
            w_i[q] -= eta_w * (p_ii * ws->g[q]);
        if (core_first)    /* ∂ℒ/∂p_ii with the new w_i (PFLlib) */
            p_gradient(s, ws, i, w_i, p_i, lam_mu);
        /* req: apple.alg1.l10 */
        for (size_t j = 0; j < N; j++)   /* p_i ← p_i − η_p ∂ℒ/∂p_i */
            p_i[j] -= eta_p * ws->g_p[j];
    }
    const long step = (long)k + 1;
    if (!pflref_all_finite(w_i, P))
        return pflref_error_diverge(err, t, (long)i, step, "w_i");
    if (!pflref_all_finite(p_i, N))
        return pflref_error_diverge(err, t, (long)i, step, "p_i");
    pflref_trace_emit(trace, PFLREF_EV_STEP, "train", t, (long)i, step,
                      "w_i", w_i, P, CORE_LINE);
    pflref_trace_emit(trace, PFLREF_EV_STEP, "train", t, (long)i, step,
                      "p_i", p_i, N, P_LINE);
    return PFLREF_OK;
}

static pflref_status apple_round(pflref_state *s,
                                 const pflref_round_plan *plan,
                                 const pflref_trace *trace,
                                 pflref_error *err)
{
    apple_work *ws = s->extra;
    const pflref_apple_hyper *h = &s->hyper->apple;
    const size_t P = s->P, N = s->N;
    const long t = (long)s->t;
    const double lambda = apple_lambda(h, s->t);      /* λ(r) */
    const int exponential = h->scheduler == PFLREF_APPLE_SCHEDULER_EXPONENTIAL;
    /* req: apple.alg1.l2, apple.alg1.l4 */
    /* l. 4: the cores on the server at the round's start */
    memcpy(ws->w_prev, s->v, N * P * sizeof *s->v);
    /* req: apple.alg1.l3 */
    for (size_t q = 0; q < plan->m; q++) {
        const size_t i = plan->clients[q];
        const pflref_batches *b = &plan->batches[q];
        double *w_i = s->v + i * P;
        pflref_trace_emit(trace, PFLREF_EV_NOTE, "train", t, (long)i, -1,
                          "lambda", &lambda, 1, LAMBDA_LINE[exponential]);
        pflref_client_begin(s, i, "w_i", w_i, NULL, trace);
        if (ws->copies != NULL)
            download(s, ws, i, plan, q);   /* l. 4: the listed cores */
        pflref_optim_begin(s, i);   /* the client update's torch.optim.SGD */
        /* req: apple.alg1.l5 */
        for (size_t k = 0; k < b->nsteps; k++) {
            pflref_status st = apple_step(s, ws, i, b, k, lambda * h->mu,
                                          trace, err);
            if (st != PFLREF_OK)
                return st;
        }
        /* apple.peers = sequential: the later participants download the
         * stepped core */
        if (h->peers == PFLREF_APPLE_PEERS_SEQUENTIAL)
            memcpy(ws->w_prev + i * P, w_i, P * sizeof *w_i);
        /* apple.upload = mixture: the last step's w_p^(i) (ws->theta)
         * replaces the core; a participant without steps keeps it */
        const int upload_mix =
            h->upload == PFLREF_APPLE_UPLOAD_MIXTURE && b->nsteps > 0;
        if (upload_mix)
            memcpy(w_i, ws->theta, P * sizeof *w_i);
        /* req: apple.alg1.l11 */
        pflref_client_end(s, i, "w_i", w_i, trace);
        pflref_trace_emit(trace, PFLREF_EV_NOTE, "train", t, (long)i, -1,
                          "p_i", ws->p + i * N, N, P_LINE);
        /* req: apple.eq1 */
        if (upload_mix)
            memcpy(ws->w_p + i * P, ws->theta, P * sizeof *w_i);
        else
            mix(ws, i, ws->p + i * N, w_i, N, P, ws->w_p + i * P);
        if (s->bn_own != NULL)   /* w_p^(i)'s running statistics: r_i */
            pflref_bn_copy_buffers(&s->problem->model, ws->w_p + i * P,
                                   pflref_bn_own_row(s, i));
        if (!pflref_all_finite(ws->w_p + i * P, P))
            return pflref_error_diverge(err, t, (long)i, 0, "w_p");
        pflref_trace_emit(trace, PFLREF_EV_NOTE, "train", t, (long)i, -1,
                          "w_p", ws->w_p + i * P, P, MIX_LINE);
    }
    return PFLREF_OK;
}

/* req: apple.eval */
/* Client i's personalised model w_p^(i) on D. */
static pflref_status apple_evaluate(const pflref_state *s, size_t i,
                                    const pflref_data *D, pflref_eval *out)
{
    const apple_work *ws = s->extra;
    return pflref_model_evaluate(&s->problem->model, ws->w_p + i * s->P, D,
                                 s->ws, out);
}

/* check --resync: p_i and w_p^(i) after round t are client i's latest
 * notes "p_i" and "w_p" (the cores are the driver's v_i). */
static void apple_load_state(pflref_state *s, pflref_state_loader load,
                             void *ctx, long t)
{
    apple_work *ws = s->extra;
    const size_t P = s->P, N = s->N;
    for (size_t i = 0; i < N; i++) {
        load(ctx, PFLREF_EV_NOTE, "p_i", t, (long)i, ws->p + i * N, N);
        load(ctx, PFLREF_EV_NOTE, "w_p", t, (long)i, ws->w_p + i * P, P);
        if (s->bn_own != NULL)   /* r_i: w_p^(i)'s running statistics */
            pflref_bn_copy_buffers(&s->problem->model,
                                   pflref_bn_own_row(s, i), ws->w_p + i * P);
    }
}

/* Under limited downloads the clients' copies of the cores are state
 * that no record carries. */
static const char *apple_resync_gap(const pflref_hyper *hyper)
{
    if (hyper->apple.M == PFLREF_INT_UNSET)
        return NULL;
    return "each client's copies of the cores it downloaded (apple.M) are "
           "not reloaded from a candidate";
}

const pflref_algorithm pflref_apple = {
    .name = "apple",
    .title = "APPLE (Luo, Wu, IJCAI 2022, Alg. 1)",
    .has_personal = 1,
    .personal_name = "w_i",
    .n_eval = 1,
    .eval = {{"personalized", PFLREF_SOURCE_OWN}},
    .check = apple_check,
    .work_alloc = apple_work_alloc,
    .work_free = pflref_work_free,
    .init = apple_init,
    .round = apple_round,
    .opt_slots = 1,   /* the authors' torch.optim.SGD over (w_i, p_i),
                         two parameter groups (η, η_p) */
    .opt_length = apple_opt_length,
    .load_state = apple_load_state,
    .resync_gap = apple_resync_gap,
    .evaluate_own = apple_evaluate,
};
