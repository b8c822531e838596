/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/algorithms/scaffold.c: SCAFFOLD, Algorithm 1 of
 *   S. P. Karimireddy, S. Kale, M. Mohri, S. J. Reddi, S. U. Stich,
 *   A. T. Suresh, "SCAFFOLD: Stochastic Controlled Averaging for Federated
 *   Learning", ICML 2020, arXiv 1910.06378v4.
 *
 * The box (Alg. 1), line by line, as printed (checked against the paper's
 * text); Sec. 4 writes l. 10 as eq. (3), y_i ← y_i − η_l (g_i(y_i) + c −
 * c_i), l. 12 as eq. (4), c_i⁺ ← Option I. g_i(x), or Option II.
 * c_i − c + (1/(K η_l)) (x − y_i), and l. 16–17 as eq. (5),
 * x ← x + (η_g/|S|) Σ_{i∈S} (y_i − x), c ← c + (1/N) Σ_{i∈S} (c_i⁺ − c_i):
 *    1  server input: initial x and c, and global step-size η_g
 *    2  client i's input: c_i, and local step-size η_l
 *    3  for each round r = 1, ..., R do
 *    4    sample clients S ⊆ {1, ..., N}                (the schedule)
 *    5    communicate (x, c) to all clients i ∈ S
 *    6    on client i ∈ S in parallel do
 *    7      initialize local model y_i ← x
 *    8      for k = 1, ..., K do
 *    9        compute mini-batch gradient g_i(y_i)
 *   10        y_i ← y_i − η_l (g_i(y_i) − c_i + c)
 *   11      end for
 *   12      c_i⁺ ← (i) g_i(x), or (ii) c_i − c + (1/(K η_l)) (x − y_i)
 *   13      communicate (Δy_i, Δc_i) ← (y_i − x, c_i⁺ − c_i)
 *   14      c_i ← c_i⁺
 *   15    end on client
 *   16    (Δx, Δc) ← (1/|S|) Σ_{i∈S} (Δy_i, Δc_i)
 *   17    x ← x + η_g Δx and c ← c + (|S|/N) Δc
 *   18  end for
 * Start (l. 1–2, the inputs x, c and c_i): x = w⁰; c_i = the spec's
 * init.c_i, else 0; c = init.c, else (1/N) Σ_i c_i (0 without init.c_i).
 * The default is Sec. 4's: the control variates "are initialized to ensure
 * that c = (1/N) Σ c_i and can safely all be initialized to 0" (PFLlib
 * starts both at zeros, clientscaffold.py, serverscaffold.py); a given c
 * is taken as given (the box's input), the sum rule not enforced.  A
 * client never sampled keeps its c_i⁰.
 *
 * Readings, a)–c):
 *  a) K is client i's number of local steps in the round, K_i = the
 *     length of its batch list (the schedule may give clients different
 *     K; the paper's K is one number for every client).  Option II divides
 *     by K_i η_l, so check refuses a participation without steps.
 *  b) Option I's g_i(x) is "an additional pass over the local data to
 *     compute the gradient at the server model x" (§4, after Alg. 1): the
 *     gradient of the batch-mean loss over client i's whole training set
 *     at x, in index order.
 *  c) l. 10's correction is the local solver's constant term
 *     (pflref_local_sgd .shift = c − c_i), so the client optimizer (opt.*)
 *     steps on d = g_i(y_i) + c − c_i, as PFLlib's SCAFFOLDOptimizer adds
 *     sc − cc to p.grad (fedoptimizer.py:30); that optimizer has no
 *     momentum or weight decay, so no other order is read anywhere.
 *
 * Symbols:  x ↔ s->w (P)   y_i ↔ ws->y (P)   c ↔ ws->c (P)
 *           c_i ↔ ws->c_i + i·P (N×P)   c_i⁺ ↔ ws->c_plus (P)
 *           c − c_i ↔ ws->shift (P)   Δx ↔ s->accum   Δc ↔ ws->dc (P)
 *           η_l ↔ hyper->eta   η_g ↔ hyper->scaffold.eta_g
 *           K ↔ plan->batches[j].nsteps   S ↔ plan->clients   N ↔ s->N
 *
 * Switches (the paper's reading first):
 *   scaffold.option  II: c_i⁺ ← c_i − c + (x − y_i)/(K η_l) (eq. (4)'s
 *                    cheaper option: "II is cheaper to compute and usually
 *                    suffices (all our experiments use Option II)", Sec. 4;
 *                    PFLlib's only one);
 *                    I: c_i⁺ ← ∇f_i(x) on the whole training set
 *   scaffold.c_lr    round: option II's η_l is the η the client's steps
 *                    took (the round's, after lr.*); initial: the
 *                    undecayed η (TsingZ0/PFLlib d832e76f6a23,
 *                    clientscaffold.py:73, update_yc reads
 *                    self.learning_rate, which its ExponentialLR never
 *                    changes)
 *   bn.aggregate     (a model with batch normalisation; B the buffer
 *                    entries r_μ, r_v of x, y_i, c, c_i) average: B is
 *                    stepped, summed and stored as every other entry;
 *                    parameters_only: y_i ← x on ¬B, r_i (client i's own,
 *                    w⁰'s before it first trains) on B, r_i ← y_i's B
 *                    after l. 11; c_i⁺ = c_i on B (PFLlib's client_c,
 *                    global_c are over parameters() only,
 *                    clientscaffold.py:18-20), so Δc_i = 0 there; l. 17's
 *                    x on B ← the first participant's r_i
 *                    (scaffold.bn_global = first_upload)
 *   scaffold.bn_global  (under bn.aggregate = parameters_only) first_upload:
 *                    as above; previous: x on B never moves (w⁰'s):
 *                    TsingZ0/PFLlib d832e76f6a23
 *                    serverscaffold.py:124-129 (the new global is a
 *                    deepcopy of the previous one plus the parameters()'
 *                    Δy_i), clientscaffold.py:62-64 (set_parameters copies
 *                    parameters() only).  Evaluation ("global") is then
 *                    x's parameters with client i's own r_i (PFLlib's
 *                    evaluate() on the clients' models; ref/engine/run.c)
 * Preset pfllib (ref/engine/presets.c): option II, c_lr = initial,
 * lr.count = trainings, bn.aggregate = parameters_only,
 * scaffold.bn_global = previous.  No preset official: no code of the authors is
 * published.
 *
 * Trace: "y" (client begin, steps, end), CLIENT_END "c_i" (c_i⁺, what the
 * client keeps), SERVER "w" (x) and SERVER "c" of every round; check
 * --resync reloads c and the c_i from them (scaffold_load_state).
 *
 * Determinism: clients train and are summed in ascending id.
 * Cost per round: Σ_{i∈S} (K_i gradients, + one pass over the data in
 * option I) + O(|S|·P).
 */
#include <stdlib.h>
#include <string.h>
#include "algorithms/algorithms.h"
#include "engine/bn_own.h"
#include "engine/work.h"

static const char *const LOCAL_LINE =
    "Alg. 1 l. 10: y_i ← y_i − η_l (g_i(y_i) − c_i + c)";
static const char *const CONTROL_LINE[] = {
    "Alg. 1 l. 12 (ii): c_i⁺ ← c_i − c + (1/(K η_l)) (x − y_i)",
    "Alg. 1 l. 12 (i): c_i⁺ ← g_i(x)"};
static const char *const SERVER_X_LINE =
    "Alg. 1 l. 17: x ← x + η_g (1/|S|) Σ_{i∈S} (y_i − x)";
static const char *const SERVER_C_LINE =
    "Alg. 1 l. 17: c ← c + (|S|/N) (1/|S|) Σ_{i∈S} (c_i⁺ − c_i)";
/* The intermediates --trace prints and no record keeps (l. 9, l. 13,
 * l. 16). */
static const char *const GRAD_LINE =
    "Alg. 1 l. 9: g_i(y_i), the minibatch gradient at the step's start "
    "point";
static const char *const MESSAGE_LINE[] = {
    "Alg. 1 l. 13: Δy_i ← y_i − x", "Alg. 1 l. 13: Δc_i ← c_i⁺ − c_i"};
static const char *const SUM_LINE[] = {
    "Alg. 1 l. 16: Δx ← (1/|S|) Σ_{i∈S} Δy_i",
    "Alg. 1 l. 16: Δc ← (1/|S|) Σ_{i∈S} Δc_i"};

/* SCAFFOLD's state and work buffers (zero-filled; c and c_i then take
 * their start, Alg. 1 l. 1–2: scaffold_start). */
typedef struct {
    pflref_work list; /* the allocations (ref/engine/work.h)               */
    double *x;        /* P: x as sent in the round (l. 5)                  */
    double *y;        /* P: y_i, client i's local model                    */
    double *g;        /* P: the local solver's gradient, then Δy_i         */
    double *shift;    /* P: c − c_i, the correction of l. 10               */
    double *c_plus;   /* P: c_i⁺                                           */
    double *dc;       /* P: Δc = (1/|S|) Σ Δc_i                            */
    double *c;        /* P: the server control variate c (kept)            */
    double *c_i;      /* N×P: the client control variates c_i (kept)       */
} scaffold_work;

/* The start of c (P) and c_i (N×P): the given c_i⁰ or 0, then the given
 * c⁰ or c = (1/N) Σ_i c_i⁰ (clients ascending). */
static void scaffold_start(const pflref_scaffold_hyper *h, size_t N,
                           size_t P, double *c, double *c_i)
{
    /* req: scaffold.alg1.l1, scaffold.alg1.l2, scaffold.init */
    if (h->c_i0 != NULL)
        for (size_t q = 0; q < N * P; q++)
            c_i[q] = h->c_i0[q];
    if (h->c0 != NULL) {
        for (size_t p = 0; p < P; p++)
            c[p] = h->c0[p];
        return;
    }
    if (h->c_i0 == NULL)
        return;                          /* c = 0 (zero-filled) */
    const double inv_N = 1.0 / (double)N;
    for (size_t i = 0; i < N; i++)       /* c = (1/N) Σ_i c_i⁰ */
        pflref_accumulate(c, inv_N, c_i + i * P, P);
}

static void *scaffold_work_alloc(const pflref_problem *problem,
                                 const pflref_hyper *hyper)
{
    const size_t P = problem->model.P;
    scaffold_work *ws = calloc(1, sizeof *ws);
    if (ws == NULL)
        return NULL;
    /* x = w⁰ is the state's w; c and c_i below */
    ws->x = pflref_work_doubles(&ws->list, P, 1);
    ws->y = pflref_work_doubles(&ws->list, P, 1);
    ws->g = pflref_work_doubles(&ws->list, P, 1);
    ws->shift = pflref_work_doubles(&ws->list, P, 1);
    ws->c_plus = pflref_work_doubles(&ws->list, P, 1);
    ws->dc = pflref_work_doubles(&ws->list, P, 1);
    ws->c = pflref_work_doubles(&ws->list, P, 1);
    ws->c_i = pflref_work_doubles(&ws->list, problem->N, P);
    if (ws->c != NULL && ws->c_i != NULL)
        scaffold_start(&hyper->scaffold, problem->N, P, ws->c, ws->c_i);
    return pflref_work_ready(ws);
}

/* Option II divides by K η_l: every participation has K ≥ 1 steps. */
static pflref_status has_steps(const void *ctx, size_t t, size_t client,
                               const pflref_batches *b, pflref_error *err)
{
    (void)ctx;
    if (b->nsteps > 0)
        return PFLREF_OK;
    return pflref_error_set(
        err, PFLREF_EINVAL, NULL,
        "scaffold.option = II forms c_i⁺ with 1/(K η_l), but client %zu "
        "takes K = 0 local steps in round %zu (give it a batch, or "
        "\"scaffold.option\": \"I\")", client, t);
}

/* Before round 0: η_g and η_l are the registry's (finite, > 0); given
 * control variates are finite (the spec reader's numbers are; the C API's
 * may not be); option II needs K ≥ 1 in every participation. */
static pflref_status scaffold_check(const pflref_problem *problem,
                                    const pflref_hyper *hyper,
                                    const pflref_schedule *schedule,
                                    const unsigned char *mask,
                                    pflref_error *err)
{
    (void)mask;
    const size_t P = problem->model.P;
    const pflref_scaffold_hyper *h = &hyper->scaffold;
    if (h->c0 != NULL && !pflref_all_finite(h->c0, P))
        return pflref_error_set(err, PFLREF_EINVAL, "init.c",
                                "the initial server control variate c has "
                                "an entry that is not finite");
    for (size_t i = 0; h->c_i0 != NULL && i < problem->N; i++)
        if (!pflref_all_finite(h->c_i0 + i * P, P))
            return pflref_error_set(err, PFLREF_EINVAL, "init.c_i",
                                    "client %zu's initial control variate "
                                    "c_i has an entry that is not finite", i);
    /* under scaffold.bn_global = previous, x's running statistics are the
     * previous x's: no uploader's are taken, so no first uploader */
    if (pflref_bn_keeps_own_in(problem, hyper) &&
        h->bn_global == PFLREF_SCAFFOLD_BN_GLOBAL_PREVIOUS) {
        pflref_status st = pflref_bn_no_first_upload(
            schedule,
            "scaffold under scaffold.bn_global = previous takes no "
            "uploader's",
            "x keeps the previous x's running statistics; PFLlib "
            "serverscaffold.py:124-129 adds the parameters()' Δy_i to a "
            "deepcopy of the previous global",
            err);
        if (st != PFLREF_OK)
            return st;
    }
    /* req: scaffold.alg1.l12 */
    if (hyper->scaffold.option == PFLREF_SCAFFOLD_OPTION_II)
        return pflref_schedule_walk(schedule, has_steps, NULL, NULL, err);
    return PFLREF_OK;
}

/* Client i's update (l. 7–14) from x = ws->x on its batches b: y_i, then
 * c_i⁺, then the sums Δx += Δy_i/|S| (s->accum) and Δc += Δc_i/|S|, and
 * c_i ← c_i⁺. */
/* --trace's g_i(y_i) of l. 9: the local solver (ref/engine/sgd.c, proved)
 * forms it and steps without handing it out, so a sink in front of the
 * caller's recomputes it for each step event of y from the iterate before
 * that step and the step's batch: the same gradient call on a workspace
 * of the trace's own (the run's is left as the solver left it), printed
 * before the step.  It reads the events only and forwards each unchanged. */
typedef struct {
    const pflref_trace *next;
    const pflref_model *model;
    const pflref_data *data;
    const pflref_batches *b;
    pflref_model_workspace *tws;
    double *before;   /* P: y before the next step */
    double *g;        /* P: g_i(y_i) */
    size_t P;
} grad_sink;

static void grad_emit(void *ctx, const pflref_event *ev)
{
    grad_sink *k = ctx;
    if (ev->kind == PFLREF_EV_STEP && ev->len == k->P && ev->step >= 1 &&
        (size_t)ev->step <= k->b->nsteps) {
        const size_t q = (size_t)ev->step - 1;
        const size_t nb = k->b->step_off[q + 1] - k->b->step_off[q];
        if (pflref_model_grad(k->model, k->before, k->data,
                              k->b->idx + k->b->step_off[q], nb, k->tws,
                              k->g, NULL) == PFLREF_OK)
            pflref_trace_emit(k->next, PFLREF_EV_INTERMEDIATE, ev->phase,
                              ev->round, ev->client, ev->step, "g_i", k->g,
                              k->P, GRAD_LINE);
        memcpy(k->before, ev->value, k->P * sizeof *k->before);
    }
    pflref_trace_emit(k->next, ev->kind, ev->phase, ev->round, ev->client,
                      ev->step, ev->name, ev->value, ev->len, ev->formula);
}

/* The sink for client i's local work on b from y: 1 when it is set (with a
 * trace, and not for a model with dropout, whose every training pass
 * takes the run's next masks), else 0 and the trace goes as it is.  The
 * caller frees k->tws and k->before either way. */
static int grad_sink_open(grad_sink *k, const pflref_state *s, size_t i,
                          const pflref_batches *b, const double *y,
                          const pflref_trace *trace)
{
    const size_t P = s->P;
    *k = (grad_sink){.next = trace, .model = &s->problem->model,
                     .data = &s->problem->clients[i].train, .b = b, .P = P};
    if (trace == NULL || trace->emit == NULL ||
        pflref_model_dropout_layers(k->model) > 0)
        return 0;
    size_t most = 1;
    for (size_t q = 0; q < b->nsteps; q++)
        if (b->step_off[q + 1] - b->step_off[q] > most)
            most = b->step_off[q + 1] - b->step_off[q];
    k->tws = pflref_model_workspace_alloc(k->model, most);
    k->before = malloc(2 * P * sizeof *k->before);
    if (k->tws == NULL || k->before == NULL)
        return 0;
    k->g = k->before + P;
    memcpy(k->before, y, P * sizeof *k->before);
    return 1;
}

/* c_i⁺ (l. 12, eq. (4)) of client i after its K = b->nsteps steps, into
 * ws->c_plus: option (i) g_i(x) over the whole training set in index order,
 * or (ii) c_i − c + (1/(K η_l)) (x − y_i) with η_l = eta_c. */
static pflref_status control_plus(pflref_state *s, size_t i,
                                  const pflref_batches *b, double eta_c,
                                  scaffold_work *ws, pflref_error *err)
{
    const size_t P = s->P;
    const double *c_i = ws->c_i + i * P;
    if (s->hyper->scaffold.option == PFLREF_SCAFFOLD_OPTION_I) {
        const pflref_data *D = &s->problem->clients[i].train;
        pflref_status st = pflref_model_grad(&s->problem->model, ws->x, D,
                                             NULL, D->n, s->ws, ws->c_plus,
                                             NULL);
        if (st != PFLREF_OK)
            return pflref_error_set(err, st, "schedule",
                                    "the gradient at x (option I) failed at "
                                    "round %zu, client %zu", s->t, i);
        return PFLREF_OK;
    }
    const double inv_K_eta = 1.0 / ((double)b->nsteps * eta_c);
    for (size_t p = 0; p < P; p++)
        ws->c_plus[p] = c_i[p] - ws->c[p] + inv_K_eta * (ws->x[p] - ws->y[p]);
    return PFLREF_OK;
}

static pflref_status client_update(pflref_state *s, size_t i,
                                   const pflref_batches *b, double inv_S,
                                   scaffold_work *ws,
                                   const pflref_trace *trace,
                                   pflref_error *err)
{
    const size_t P = s->P;
    const int option = s->hyper->scaffold.option;
    double *c_i = ws->c_i + i * P;
    const pflref_model *m = &s->problem->model;
    const int keep = pflref_bn_keeps_own(s);      /* bn.aggregate */
    /* req: scaffold.alg1.l7 */
    if (keep) {   /* x's parameters(), client i's own r_μ, r_v */
        memcpy(ws->y, ws->x, P * sizeof *ws->y);
        pflref_bn_copy_buffers(m, ws->y, pflref_bn_own_row(s, i));
        pflref_client_begin(s, i, "y", ws->y, NULL, trace);
    } else
        pflref_client_begin(s, i, "y", ws->y, ws->x, trace);
    pflref_client_lr(s, i, 0, 1);  /* η of i's train() (lr.count) */
    pflref_optim_begin(s, i);      /* its optimizer (opt.state) */
    /* η_l: the round's (after pflref_client_lr), or the undecayed one */
    const double eta_l = s->hyper->eta;
    const int initial = s->hyper->scaffold.c_lr == PFLREF_SCAFFOLD_C_LR_INITIAL;
    const double eta_c = initial ? s->hyper_base->eta : eta_l;
    /* req: scaffold.alg1.l10 */
    for (size_t p = 0; p < P; p++)
        ws->shift[p] = ws->c[p] - c_i[p];          /* − c_i + c */
    pflref_local_sgd job = pflref_local_sgd_plain(s, i, b, eta_l, "y",
                                                  LOCAL_LINE);
    job.shift = ws->shift;
    /* req: scaffold.alg1.l9 */
    grad_sink gk;
    const int wrap = grad_sink_open(&gk, s, i, b, ws->y, trace);
    const pflref_trace shown = {grad_emit, &gk};
    /* req: scaffold.alg1.l8, scaffold.alg1.l9 */
    pflref_status st = pflref_local_sgd_run(&job, ws->y, ws->g, s->ws,
                                            wrap ? &shown : trace, err);
    pflref_model_workspace_free(gk.tws);
    free(gk.before);
    if (st != PFLREF_OK)
        return st;
    /* req: scaffold.alg1.l11 */
    pflref_client_end(s, i, "y", ws->y, trace);
    if (keep)     /* what client i's model now holds */
        pflref_bn_copy_buffers(m, pflref_bn_own_row(s, i), ws->y);
    /* req: scaffold.alg1.l12, scaffold.eq4 */
    st = control_plus(s, i, b, eta_c, ws, err);
    if (st != PFLREF_OK)
        return st;
    /* bn.aggregate ≠ average: PFLlib's control variates are over
     * model.parameters() only (clientscaffold.py:18-20), so c_i⁺ keeps
     * c_i on r_μ, r_v (Δc_i = 0 there, c never moves there) */
    if (keep)
        pflref_bn_copy_buffers(m, ws->c_plus, c_i);
    if (!pflref_all_finite(ws->c_plus, P))
        return pflref_error_diverge(err, (long)s->t, (long)i, -1, "c_i");
    pflref_trace_emit(trace, PFLREF_EV_CLIENT_END, "train", (long)s->t,
                      (long)i, -1, "c_i", ws->c_plus, P, CONTROL_LINE[option]);
    /* req: scaffold.alg1.l13, scaffold.alg1.l16 */
    for (size_t p = 0; p < P; p++) {
        s->accum[p] += inv_S * (ws->y[p] - ws->x[p]);      /* Δy_i/|S| */
        ws->dc[p] += inv_S * (ws->c_plus[p] - c_i[p]);     /* Δc_i/|S| */
    }
    /* req: scaffold.alg1.l13 */
    /* the message (Δy_i, Δc_i) for --trace alone, in g and shift (both
     * free until the next client's local work) */
    if (trace != NULL) {
        for (size_t p = 0; p < P; p++) {
            ws->g[p] = ws->y[p] - ws->x[p];
            ws->shift[p] = ws->c_plus[p] - c_i[p];
        }
        pflref_trace_emit(trace, PFLREF_EV_INTERMEDIATE, "train", (long)s->t,
                          (long)i, -1, "dy_i", ws->g, P, MESSAGE_LINE[0]);
        pflref_trace_emit(trace, PFLREF_EV_INTERMEDIATE, "train", (long)s->t,
                          (long)i, -1, "dc_i", ws->shift, P, MESSAGE_LINE[1]);
    }
    /* req: scaffold.alg1.l14 */
    for (size_t p = 0; p < P; p++)
        c_i[p] = ws->c_plus[p];
    /* req: scaffold.alg1.l15 */
    return PFLREF_OK;
}

static pflref_status scaffold_round(pflref_state *s,
                                    const pflref_round_plan *plan,
                                    const pflref_trace *trace,
                                    pflref_error *err)
{
    scaffold_work *ws = s->extra;
    const double eta_g = s->hyper->scaffold.eta_g;   /* η_g */
    const size_t P = s->P;
    const double S = (double)plan->m;                 /* |S| */
    const int keep = pflref_bn_keeps_own(s);          /* bn.aggregate */
    if (keep) {
        pflref_status st = pflref_bn_own_alloc(s, err);
        if (st != PFLREF_OK)
            return st;
    }
    /* req: scaffold.alg1.l3, scaffold.alg1.l5 */
    pflref_round_begin(s, ws->x, trace);              /* Δx := 0 */
    for (size_t p = 0; p < P; p++)
        ws->dc[p] = 0.0;                              /* Δc := 0 */
    /* req: scaffold.alg1.l4, scaffold.alg1.l6 */
    for (size_t j = 0; j < plan->m; j++) {
        pflref_status st = client_update(s, plan->clients[j],
                                         &plan->batches[j], 1.0 / S, ws,
                                         trace, err);
        if (st != PFLREF_OK)
            return st;
    }
    /* req: scaffold.alg1.l16 */
    /* (Δx, Δc), summed over the clients above: printed by --trace */
    pflref_trace_emit(trace, PFLREF_EV_INTERMEDIATE, "train", (long)s->t, -1,
                      -1, "dx", s->accum, P, SUM_LINE[0]);
    pflref_trace_emit(trace, PFLREF_EV_INTERMEDIATE, "train", (long)s->t, -1,
                      -1, "dc", ws->dc, P, SUM_LINE[1]);
    /* req: scaffold.alg1.l17 */
    /* x ← x + η_g Δx (into s->accum, which pflref_round_end publishes) */
    for (size_t p = 0; p < P; p++)
        s->accum[p] = ws->x[p] + eta_g * s->accum[p];
    /* x's r_μ, r_v under bn.aggregate: parameters_only, the first
     * participant's (deepcopy(uploaded_models[0]), serverbase.py:141);
     * with scaffold.bn_global = previous, the previous x's, so w⁰'s for ever
     * (serverscaffold.py:124-129 adds the parameters()' Δy_i to a deepcopy
     * of the previous global) */
    if (keep && s->hyper->scaffold.bn_global ==
                    PFLREF_SCAFFOLD_BN_GLOBAL_PREVIOUS)
        pflref_bn_copy_buffers(&s->problem->model, s->accum, ws->x);
    else if (keep && plan->m > 0)
        pflref_bn_copy_buffers(&s->problem->model, s->accum,
                               pflref_bn_own_row(s, pflref_bn_first_upload(
                                                         plan, plan->clients[0])));
    pflref_status st = pflref_round_end(s, SERVER_X_LINE, trace, err);
    if (st != PFLREF_OK)
        return st;
    /* c ← c + (|S|/N) Δc */
    const double frac = S / (double)s->N;
    for (size_t p = 0; p < P; p++)
        ws->c[p] += frac * ws->dc[p];
    if (!pflref_all_finite(ws->c, P))
        return pflref_error_diverge(err, (long)s->t, -1, -1, "c");
    pflref_trace_emit(trace, PFLREF_EV_SERVER, "train", (long)s->t, -1, -1,
                      "c", ws->c, P, SERVER_C_LINE);
    /* req: scaffold.alg1.l18 */
    return PFLREF_OK;
}

/* check --resync: c (SERVER "c" of round t) and every c_i (its last
 * CLIENT_END "c_i" up to t) from the candidate's records; x is the
 * driver's (SERVER "w"). */
static void scaffold_load_state(pflref_state *s, pflref_state_loader load,
                                void *ctx, long t)
{
    scaffold_work *ws = s->extra;
    (void)load(ctx, PFLREF_EV_SERVER, "c", t, -1, ws->c, s->P);
    for (size_t i = 0; i < s->N; i++)
        (void)load(ctx, PFLREF_EV_CLIENT_END, "c_i", t, (long)i,
                   ws->c_i + i * s->P, s->P);
    /* bn.aggregate ≠ average: each client's own r_μ, r_v from its last
     * CLIENT_END "y" up to t (w⁰'s for a client that never trained) */
    for (size_t i = 0; s->bn_own != NULL && i < s->N; i++)
        if (load(ctx, PFLREF_EV_CLIENT_END, "y", t, (long)i, s->mix, s->P))
            pflref_bn_copy_buffers(&s->problem->model,
                                   pflref_bn_own_row(s, i), s->mix);
}

const pflref_algorithm pflref_scaffold = {
    .name = "scaffold",
    .title = "SCAFFOLD (Karimireddy et al., ICML 2020, Alg. 1)",
    .has_global = 1,
    .n_eval = 1,
    .eval = {{"global", PFLREF_SOURCE_GLOBAL}},
    .check = scaffold_check,
    .work_alloc = scaffold_work_alloc,
    .work_free = pflref_work_free,
    .round = scaffold_round,
    /* req: scaffold.preset.pfllib (ref/engine/presets.c) */
    .load_state = scaffold_load_state,
    .opt_slots = 1,   /* the local solver's (PFLlib: SCAFFOLDOptimizer) */
};
