/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/algorithms/interp.c: model interpolation between a FedAvg global
 * model and each client's purely local model (seed 000 §2, "interpolation
 * methods keep both a global and a local model and mix them, predicting
 * with α w_local + (1 − α) w_global", and its Exercise 14.7.2; the
 * baseline of Mansour, Mohri, Ro, Suresh, "Three Approaches for
 * Personalization with Applications to Federated Learning", arXiv
 * 2002.10619, 2020; shared/spec notes §5.2).
 *
 * Training rounds are FedAvg's (ref/algorithms/fedavg.c, with its
 * fedavg.weights switch) and give the global model w.  After the last
 * round (the schedule's post phase), for every client i:
 *
 *   h_i ← w⁰; for each post batch D:  h_i ← h_i − η ∇f_i(h_i; D)
 *       (the purely local model: seed 000's "local" column, 200
 *        full-batch steps from zero in Code 14.7.1)
 *   α_i ← α                                     (interp.alpha = fixed)
 *   α_i ← argmin_{α_j, j = 0..G} L_i(α_j h_i + (1 − α_j) w)
 *       with α_j = j/G                          (interp.alpha = per_client_grid)
 *   v̄_i = α_i h_i + (1 − α_i) w                 (the personalized model)
 *
 * L_i is the mean loss on the client's selection set: its validation split
 * (X_val, y_val; interp.select = validation, the spec README's reading) or
 * its test set (interp.select = test, Exercise 14.7.2's reading, which
 * reads the best α off the test-error curve).  The grid point is computed
 * as (double)j / (double)G, so α_j is the double nearest j/G.  The lowest
 * loss wins; equal losses (equal doubles) go to the smaller α, the model
 * closer to the global one (the grid is scanned upward and only a strictly
 * lower loss replaces the incumbent).
 *
 * Symbols:  w ↔ s->w (P)   h_i ↔ s->v + i·P (P)   α_i ↔ s->alpha[i]
 *           w⁰ ↔ s->w0   η ↔ hyper->eta   α ↔ hyper->interp.alpha
 *           G ↔ hyper->interp.grid   v̄_i ↔ interp_work.v_bar (P)
 *
 * State and work: w, h_i and α_i are the run state; interp_work holds
 * FedAvg's buffers for the rounds (a pflref_fedavg_work) and the phase
 * after training's work buffers (a gradient and v̄).
 *
 * Switches (default first):
 *   interp.alpha   fixed: one α ∈ [0, 1] for every client (hyperparameter
 *                  alpha, required then); per_client_grid: the grid search
 *   interp.select  validation | test (where per_client_grid scores α)
 *   fedavg.weights the global model's FedAvg (ref/algorithms/fedavg.c)
 * Variants in the literature that are not this algorithm: litian96/ditto's
 * mapper trains h_i and w through the mixture with candidate α ∈ {¼, ½, ¾};
 * APFL with a fixed α (ref/algorithms/apfl.c) trains v_i through the
 * mixture too.
 *
 * Trace (phase "interp"): CLIENT_BEGIN / STEP / CLIENT_END "h" while h_i
 * trains; per_client_grid adds, per client and grid point j (step = j),
 * NOTE "alpha_j" [α_j], "select_loss" [L_i(α_j)], and when the problem has
 * test data "test_loss" and, for regression models, "test_mse" (for
 * classifiers "test_accuracy"): Exercise 14.7.2's curves.  Every mode ends
 * a client with NOTE "alpha" [α_i] and NOTE "v_bar", the personalized model
 * v̄_i (P entries) that the evaluation "personalized" scores.
 *
 * Determinism: clients in ascending id, the grid upward, evaluation over
 * samples in index order.
 * Cost: FedAvg's rounds; then per client the post steps (one gradient
 * each) and (G + 1) evaluations of the selection set (and of the test set
 * when there is one).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "algorithms/algorithms.h"
#include "engine/work.h"

static const char *const LOCAL_LINE = "h_i ← h_i − η ∇f_i(h_i; D)";
static const char *const MIX_LINE = "v̄_i = α_j h_i + (1 − α_j) w";
static const char *const NO_VALIDATION_SET =
    "interp.select = validation scores α on every client's validation "
    "split (X_val, y_val), and this problem has none; give X_val and y_val "
    "to every client, or set interp.select = test to select on the test "
    "set (Exercise 14.7.2's reading)";
static const char *const NO_TEST_SET =
    "interp.select = test scores α on every client's test set (X_test, "
    "y_test), and this problem has none";

/* interp.alpha = fixed: α ∈ [0, 1] given; per_client_grid: no α, G ≥ 1,
 * and every client's selection set. */
static pflref_status interp_check(const pflref_problem *problem,
                                  const pflref_hyper *hyper,
                                  const pflref_schedule *schedule,
                                  const unsigned char *mask,
                                  pflref_error *err)
{
    (void)schedule;
    (void)mask;
    const pflref_interp_hyper *hp = &hyper->interp;
    const double alpha = hp->alpha;
    const size_t G = hp->grid;
    if (hp->alpha_mode == PFLREF_INTERP_FIXED) {
        if (isnan(alpha))
            return pflref_error_set(err, PFLREF_EINVAL,
                                    "algorithm.hyperparameters.alpha",
                                    "interp.alpha = fixed needs "
                                    "hyperparameter alpha (α), the weight "
                                    "of the local model in "
                                    "α h_i + (1 − α) w");
        if (alpha > 1.0)
            return pflref_error_set(err, PFLREF_EINVAL,
                                    "algorithm.hyperparameters.alpha",
                                    "α = %.17g is above 1: the "
                                    "interpolation α h_i + (1 − α) w "
                                    "needs α in [0, 1]",
                                    alpha);
        return PFLREF_OK;
    }
    /* per_client_grid */
    if (!isnan(alpha))
        return pflref_error_set(err, PFLREF_EINVAL,
                                "algorithm.hyperparameters.alpha",
                                "interp.alpha = per_client_grid chooses α_i "
                                "on the grid; a fixed alpha would be "
                                "ignored (leave it out, or set "
                                "interp.alpha = fixed)");
    if (G == PFLREF_INT_UNSET || G < 1)
        return pflref_error_set(err, PFLREF_EINVAL,
                                "algorithm.hyperparameters.interp.grid",
                                "interp.grid (G) must be at least 1");
    /* per_client_grid scores α on the selection set, which every client
     * must have */
    const int on_test = hp->select == PFLREF_INTERP_SELECT_TEST;
    if (on_test ? !pflref_problem_has_test(problem)
                : !pflref_problem_has_val(problem))
        return pflref_error_set(err, PFLREF_EINVAL,
                                "algorithm.switches.interp.select", "%s",
                                on_test ? NO_TEST_SET : NO_VALIDATION_SET);
    return PFLREF_OK;
}

/* Interpolation's work buffers: FedAvg's for the rounds, its own for the
 * phase after training (zero-filled, none carried between rounds). */
typedef struct {
    pflref_work list;          /* the allocations (ref/engine/work.h)      */
    pflref_fedavg_work train;  /* FedAvg's rounds: w_t, w^k, ∇ℓ (P each)   */
    double *g;        /* P: the gradient of h_i's local steps              */
    double *v_bar;    /* P: v̄ = α h_i + (1 − α) w at a grid point or at α_i */
} interp_work;

static void *interp_work_alloc(const pflref_problem *problem,
                               const pflref_hyper *hyper)
{
    (void)hyper;
    const size_t P = problem->model.P;
    interp_work *ws = calloc(1, sizeof *ws);
    if (ws == NULL)
        return NULL;
    pflref_fedavg_work_alloc(&ws->train, &ws->list, P);
    ws->g = pflref_work_doubles(&ws->list, P, 1);
    ws->v_bar = pflref_work_doubles(&ws->list, P, 1);
    return pflref_work_ready(ws);
}

/* A training round: FedAvg's, with FedAvg's buffers. */
static pflref_status interp_round(pflref_state *s,
                                  const pflref_round_plan *plan,
                                  const pflref_trace *trace, pflref_error *err)
{
    /* req: interp.eq1 */
    interp_work *ws = s->extra;
    return pflref_fedavg_round_with(s, plan, &ws->train, trace, err);
}

/* Client i's purely local model: h_i ← w⁰, then one SGD step per post
 * batch.  h [out] P;  g [work] P. */
static pflref_status train_local(pflref_state *s, size_t i,
                                 const pflref_schedule *schedule, double *h,
                                 double *g, const pflref_trace *trace,
                                 pflref_error *err)
{
    const pflref_problem *pr = s->problem;
    const double eta = s->hyper->eta;
    const size_t P = s->P;
    /* req: interp.eq2 */
    memcpy(h, s->w0, P * sizeof *h);  /* h_i ← w⁰ */
    pflref_trace_emit(trace, PFLREF_EV_CLIENT_BEGIN, "interp", -1, (long)i, 0,
                      "h", h, P, NULL);
    pflref_optim_begin(s, i);   /* the local training's optimizer */
    const pflref_local_sgd job = {
        .model = &pr->model, .data = &pr->clients[i].train,
        .batches = &schedule->post[i], .eta = eta, .phase = "interp",
        .name = "h", .formula = LOCAL_LINE, .round = -1, .client = (long)i,
        .opt = pflref_optim_get(s, i, 1), .bn = &s->hyper->bn};
    pflref_status st = pflref_local_sgd_run(&job, h, g, s->ws, trace, err);
    if (st != PFLREF_OK)
        return st;
    pflref_trace_emit(trace, PFLREF_EV_CLIENT_END, "interp", -1, (long)i, -1,
                      "h", h, P, NULL);
    return PFLREF_OK;
}

/* One grid point j of client i: v̄ = α_j h_i + (1 − α_j) w scored on the
 * selection set D_sel (*loss), and on the test set when there is one (its
 * records only).  v_bar [work] P. */
static pflref_status score_point(pflref_state *s, size_t i, size_t j,
                                 double alpha_j, const double *h,
                                 const pflref_data *D_sel, int has_test,
                                 double *v_bar, double *loss,
                                 const pflref_trace *trace, pflref_error *err)
{
    const pflref_problem *pr = s->problem;
    const size_t P = s->P;
    /* req: interp.eq3 */
    for (size_t p = 0; p < P; p++)  /* v̄ = α_j h_i + (1 − α_j) w */
        v_bar[p] = alpha_j * h[p] + (1.0 - alpha_j) * s->w[p];
    pflref_eval ev;
    pflref_status st = pflref_model_evaluate(&pr->model, v_bar, D_sel, s->ws,
                                             &ev);
    if (st != PFLREF_OK)
        return pflref_error_set(err, st, NULL,
                                "evaluating client %zu's interpolation at "
                                "grid point %zu failed", i, j);
    if (!isfinite(ev.loss))
        return pflref_error_diverge(err, -1, (long)i, (long)j,
                                    "the selection loss");
    *loss = ev.loss;
    pflref_trace_emit(trace, PFLREF_EV_NOTE, "interp", -1, (long)i, (long)j,
                      "alpha_j", &alpha_j, 1, MIX_LINE);
    pflref_trace_emit(trace, PFLREF_EV_NOTE, "interp", -1, (long)i, (long)j,
                      "select_loss", &ev.loss, 1, NULL);
    if (!has_test)
        return PFLREF_OK;
    st = pflref_model_evaluate(&pr->model, v_bar, &pr->clients[i].test, s->ws,
                               &ev);
    if (st != PFLREF_OK)
        return pflref_error_set(err, st, NULL,
                                "evaluating client %zu's interpolation on "
                                "its test set failed", i);
    /* the curves are recorded, so they must be finite too (a grid point
     * between two mlps can overflow where both ends do not) */
    const int regression = pflref_model_is_regression(&pr->model);
    if (!isfinite(ev.loss) || (regression && !isfinite(ev.mse)))
        return pflref_error_diverge(err, -1, (long)i, (long)j,
                                    isfinite(ev.loss) ? "the test mse"
                                                      : "the test loss");
    pflref_trace_emit(trace, PFLREF_EV_NOTE, "interp", -1, (long)i, (long)j,
                      "test_loss", &ev.loss, 1, NULL);
    if (regression)
        pflref_trace_emit(trace, PFLREF_EV_NOTE, "interp", -1, (long)i,
                          (long)j, "test_mse", &ev.mse, 1, NULL);
    if (pflref_model_is_classifier(&pr->model))
        pflref_trace_emit(trace, PFLREF_EV_NOTE, "interp", -1, (long)i,
                          (long)j, "test_accuracy", &ev.accuracy, 1, NULL);
    return PFLREF_OK;
}

/* α_i = the grid point with the lowest selection loss, ties to the smaller
 * α (scan upward, replace only on a strictly lower loss). */
static pflref_status select_alpha(pflref_state *s, size_t i, const double *h,
                                  double *v_bar, double *alpha_i,
                                  const pflref_trace *trace, pflref_error *err)
{
    const pflref_problem *pr = s->problem;
    const pflref_interp_hyper *hp = &s->hyper->interp;
    const size_t G = hp->grid;
    const int on_test = hp->select == PFLREF_INTERP_SELECT_TEST;
    const pflref_data *D_sel = on_test ? &pr->clients[i].test
                                       : &pr->clients[i].val;
    const int has_test = pflref_problem_has_test(pr);
    double best_loss = INFINITY;
    for (size_t j = 0; j <= G; j++) {
        /* req: interp.eq4 */
        const double alpha_j = (double)j / (double)G;  /* α_j = j/G */
        double loss = INFINITY;
        pflref_status st = score_point(s, i, j, alpha_j, h, D_sel, has_test,
                                       v_bar, &loss, trace, err);
        if (st != PFLREF_OK)
            return st;
        if (loss < best_loss) {  /* strictly lower: ties keep the smaller α */
            best_loss = loss;
            *alpha_i = alpha_j;
        }
    }
    return PFLREF_OK;
}

static pflref_status interp_finish(pflref_state *s,
                                   const pflref_schedule *schedule,
                                   const pflref_trace *trace,
                                   pflref_error *err)
{
    const pflref_interp_hyper *hp = &s->hyper->interp;
    const double alpha = hp->alpha;
    const int grid = hp->alpha_mode == PFLREF_INTERP_PER_CLIENT_GRID;
    const size_t P = s->P;
    interp_work *ws = s->extra;
    double *g = ws->g, *v_bar = ws->v_bar;

    for (size_t i = 0; i < s->N; i++) {
        double *h = s->v + i * P;
        pflref_status st = train_local(s, i, schedule, h, g, trace, err);
        if (st != PFLREF_OK)
            return st;
        if (grid) {
            st = select_alpha(s, i, h, v_bar, &s->alpha[i], trace, err);
            if (st != PFLREF_OK)
                return st;
        } else {
            /* req: interp.eq5 */
            s->alpha[i] = alpha;  /* α_i ← α */
        }
        pflref_trace_emit(trace, PFLREF_EV_NOTE, "interp", -1, (long)i, -1,
                          "alpha", &s->alpha[i], 1,
                          grid ? "α_i = argmin_j L_i(α_j h_i + (1 − α_j) w), "
                                 "ties to the smaller α_j"
                               : "α_i = α");
        /* the personalized model, as the evaluation builds it
         * (ref/engine/run.c) */
        /* req: interp.eq3 */
        const double a = s->alpha[i];
        for (size_t p = 0; p < P; p++)
            v_bar[p] = a * h[p] + (1.0 - a) * s->w[p];
        pflref_trace_emit(trace, PFLREF_EV_NOTE, "interp", -1, (long)i, -1,
                          "v_bar", v_bar, P, "v̄_i = α_i h_i + (1 − α_i) w");
    }
    return PFLREF_OK;
}

const pflref_algorithm pflref_interp = {
    .name = "interp",
    .title = "FedAvg and purely local models, interpolated (seed 000 §2, "
             "Exercise 14.7.2; Mansour et al. 2020)",
    .has_global = 1,
    .has_personal = 1,
    .needs_post = 1,
    .has_alpha = 1,
    .n_eval = 3,
    .eval = {{"global", PFLREF_SOURCE_GLOBAL},
             {"local", PFLREF_SOURCE_PERSONAL},
             {"personalized", PFLREF_SOURCE_MIX}},
    .check = interp_check,
    .work_alloc = interp_work_alloc,
    .work_free = pflref_work_free,
    .round = interp_round,
    .finish = interp_finish,
    .opt_slots = 2,   /* 0: FedAvg's ClientUpdate; 1: the local model h_i */
};
