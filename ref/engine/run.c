/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/engine/run.c: the run driver (GSL's
 * INITIALIZE / ITERATE / TEST shape): allocate the state, `init`, one
 * `round` per scheduled round, `finish`, then evaluate every model the
 * algorithm reports on every client.
 *
 * State and work: the driver allocates the run state (ref/engine/engine.h,
 * allocated by ref/engine/state.c: w⁰, w, v_i, α_i, the split's masks, the
 * aggregation accumulator, the model workspace, the cluster labels, its own
 * evaluation buffer), and,
 * after the algorithm's check, the algorithm's typed workspace
 * (alg->work_alloc, kept in s->extra and freed by alg->work_free); so an
 * algorithm file never allocates inside a round.  Evaluation: each reported
 * model (global w, client i's v_i, or their mixture α_i v_i + (1 − α_i) w)
 * on client i's train set, and on its test set when the problem has one,
 * one pass over each set giving its loss and its mse (regression) or
 * accuracy (classifiers); the per-client values are summarised by
 * ref/core/metrics.c, weighted by the
 * clients' sample counts.  The registry of algorithms is
 * ref/algorithms/registry.c.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engine/bn_own.h"
#include "engine/dropout.h"
#include "engine/engine.h"
#include "engine/state.h"
#include "engine/work.h"
#include "models/models.h"

/* The longest batch in b. */
static size_t longest_batch(const pflref_batches *b)
{
    size_t longest = 0;
    for (size_t s = 0; s < b->nsteps; s++)
        if (b->step_off[s + 1] - b->step_off[s] > longest)
            longest = b->step_off[s + 1] - b->step_off[s];
    return longest;
}

/* The workspace must hold the largest data set (evaluation) and the longest
 * batch (a given batch may repeat indices, so it can exceed n). */
static size_t workspace_size(const pflref_problem *pr,
                             const pflref_schedule *schedule)
{
    size_t size = pflref_problem_max_n(pr);
    for (size_t t = 0; t < schedule->T; t++)
        for (size_t j = 0; j < schedule->rounds[t].m; j++) {
            size_t b = longest_batch(&schedule->rounds[t].batches[j]);
            size = b > size ? b : size;
        }
    for (size_t i = 0; schedule->post != NULL && i < schedule->N; i++) {
        size_t b = longest_batch(&schedule->post[i]);
        size = b > size ? b : size;
    }
    return size;
}

/* a + b, saturating at SIZE_MAX. */
static size_t add_sat(size_t a, size_t b)
{
    return a > SIZE_MAX - b ? SIZE_MAX : a + b;
}

/* a · b, saturating at SIZE_MAX. */
static size_t mul_sat(size_t a, size_t b)
{
    return a != 0 && b > SIZE_MAX / a ? SIZE_MAX : a * b;
}

/* The recording level of the trajectory recorder behind trace (found
 * through tees), PFLREF_RECORD_NONE when there is none. */
static pflref_record_level recorded_level(const pflref_trace *trace)
{
    if (trace == NULL || trace->emit == NULL)
        return PFLREF_RECORD_NONE;
    if (trace->emit == pflref_trajectory_emit)
        return ((const pflref_trajectory *)trace->ctx)->level;
    if (trace->emit == pflref_trace_tee_emit) {
        const pflref_trace_tee *tee = trace->ctx;
        pflref_record_level a = recorded_level(tee->first);
        pflref_record_level b = recorded_level(tee->second);
        return a > b ? a : b;
    }
    return PFLREF_RECORD_NONE;
}

/* The trajectory a recorder at `level` keeps, estimated from the
 * schedule: every event holds P doubles and a record.  STEP: a round's
 * start and server events (2 per round), each participation's begin and
 * end (2) and one event per scheduled step; ROUND: the ends and the server
 * events; both: the final state (1 + N vectors).  Algorithms that emit
 * more (pFedMe's K inner steps per batch, notes) make it a lower bound. */
static size_t trajectory_bytes(pflref_record_level level, size_t P, size_t N,
                               const pflref_schedule *schedule)
{
    if (level == PFLREF_RECORD_NONE)
        return 0;
    size_t events = add_sat(1, N), steps = 0, parts = 0;
    for (size_t t = 0; t < schedule->T; t++) {
        parts = add_sat(parts, schedule->rounds[t].m);
        for (size_t j = 0; j < schedule->rounds[t].m; j++)
            steps = add_sat(steps, schedule->rounds[t].batches[j].nsteps);
    }
    events = add_sat(events, mul_sat(level == PFLREF_RECORD_STEP ? 2 : 1,
                                     add_sat(schedule->T, parts)));
    if (level == PFLREF_RECORD_STEP)
        events = add_sat(events, steps);
    return mul_sat(events, add_sat(mul_sat(P, sizeof(double)),
                                   sizeof(pflref_record)));
}

/* The run's memory, estimated up front (docs/performance.md, "Limits by
 * memory"); each term in bytes. */
typedef struct {
    size_t personal;    /* N·P doubles: the personal states v_i          */
    size_t state;       /* w⁰, w, accum, mix, masks, α_i, clusters, eval */
    size_t workspace;   /* the model workspace for the largest batch     */
    size_t trajectory;  /* the recorded trajectory (trajectory_bytes)    */
    size_t data;        /* the problem's mapped data (.npy files)        */
    size_t work;        /* the algorithm's buffers (after work_alloc)    */
} run_memory;

static size_t run_memory_total(const run_memory *r)
{
    return add_sat(add_sat(add_sat(r->personal, r->state),
                           add_sat(r->workspace, r->trajectory)),
                   add_sat(r->data, r->work));
}

static run_memory run_memory_estimate(const pflref_problem *pr,
                                      const pflref_algorithm *alg,
                                      const pflref_schedule *schedule,
                                      const pflref_trace *trace)
{
    const size_t P = pr->model.P, N = pr->N, D = sizeof(double);
    size_t state = add_sat(mul_sat(4 * D + 2, P), mul_sat(N, 3 * D));
    state = add_sat(state, mul_sat(mul_sat(N, 2 * sizeof(pflref_eval)),
                                   alg->n_eval));
    if (alg->has_alpha)
        state = add_sat(state, mul_sat(N, D));
    if (alg->has_clusters)
        state = add_sat(state, mul_sat(N, sizeof(size_t)));
    return (run_memory){
        .personal = alg->has_personal ? mul_sat(mul_sat(N, P), D) : 0,
        .state = state,
        .workspace = pflref_model_workspace_bytes(
            &pr->model, workspace_size(pr, schedule)),
        .trajectory = trajectory_bytes(recorded_level(trace), P, N,
                                       schedule),
        /* The problem's data: its owned arrays are allocated already (and
         * so already outside the memory available); its mapped .npy files
         * are read by the run and must fit beside it, or every epoch
         * re-reads them from disk (pflref/problem.h). */
        .data = pflref_problem_bytes_mapped(pr),
        .work = 0,
    };
}

#define MIB(x) ((double)(x) / 1048576.0)

/* PFLREF_ENOMEM naming every term when the estimate exceeds the memory
 * available (pflref_memory_available), else PFLREF_OK. */
static pflref_status run_memory_check(const run_memory *r, size_t N, size_t P,
                                      pflref_error *err)
{
    size_t avail;
    const char *source;
    pflref_status st = pflref_memory_available(&avail, &source, err);
    if (st != PFLREF_OK)
        return st;
    const size_t total = run_memory_total(r);
    if (total <= avail)
        return PFLREF_OK;
    return pflref_error_set(
        err, PFLREF_ENOMEM, "clients",
        "%zu clients × %zu parameters: the run needs about %.1f MiB "
        "(personal states %.1f MiB, state %.1f MiB, model workspace "
        "%.1f MiB, trajectory %.1f MiB, data %.1f MiB, algorithm's "
        "buffers %.1f MiB), more than the %.1f MiB of memory available "
        "(%s)", N, P, MIB(total), MIB(r->personal), MIB(r->state),
        MIB(r->workspace), MIB(r->trajectory), MIB(r->data), MIB(r->work),
        MIB(avail), source);
}

/* Every hyperparameter the algorithm requires is set (NaN or
 * PFLREF_INT_UNSET means not set); every one it reads that is set, or that
 * has a default, holds a value the spec reader would accept (finite and
 * within the registry's lower bound, by pflref_hyper_set_real/_int; a
 * switch one of its values).  A caller of the C API can put anything in
 * the fields; the algorithms step with them and index tables with the
 * switches. */
static pflref_status check_required(const pflref_algorithm *alg,
                                    const pflref_hyper *hyper,
                                    pflref_error *err)
{
    size_t count;
    const pflref_param *params = pflref_params(&count);
    pflref_hyper checked;   /* the set_* functions validate into it */
    for (size_t i = 0; i < count; i++) {
        const pflref_param *p = &params[i];
        char where[PFLREF_WHERE_MAX];
        snprintf(where, sizeof where, "algorithm.%s.%s",
                 p->type == PFLREF_PARAM_ENUM ? "switches" : "hyperparameters",
                 p->name);
        pflref_status st = PFLREF_OK;
        if (!pflref_name_in_list(p->algorithms, alg->name)) {
            /* not read by alg */
        } else if (p->type == PFLREF_PARAM_REAL) {
            double v = pflref_hyper_get_real(hyper, p);
            if (!isnan(v) || !isnan(p->def))
                st = pflref_hyper_set_real(&checked, p, v, where, err);
        } else if (p->type == PFLREF_PARAM_INT) {
            size_t v = pflref_hyper_get_int(hyper, p);
            if (v != PFLREF_INT_UNSET || !isnan(p->def))
                st = pflref_hyper_set_int(&checked, p, v, where, err);
        } else {
            int v;
            memcpy(&v, (const char *)hyper + p->offset, sizeof v);
            size_t n = 0;
            while (p->values[n] != NULL)
                n++;
            if (v < 0 || (size_t)v >= n)
                st = pflref_error_set(err, PFLREF_EINVAL, where,
                                      "switch %s is %d, not one of its %zu "
                                      "values", p->name, v, n);
        }
        if (st != PFLREF_OK)
            return st;
        int unset = (p->type == PFLREF_PARAM_REAL &&
                     isnan(pflref_hyper_get_real(hyper, p))) ||
                    (p->type == PFLREF_PARAM_INT &&
                     pflref_hyper_get_int(hyper, p) == PFLREF_INT_UNSET);
        if (unset && pflref_name_in_list(p->required_by, alg->name))
            return pflref_error_set(err, PFLREF_EINVAL, where,
                                    "%s needs hyperparameter %s (%s)",
                                    alg->name, p->name, p->symbol);
    }
    return PFLREF_OK;
}

void pflref_run_result_free(pflref_run_result *r)
{
    if (r == NULL)
        return;
    free(r->w0);
    free(r->w);
    free(r->v);
    free(r->alpha);
    free(r->theta0);
    free(r->hn);
    pflref_chosen_peers_free(r->chosen_peers, r->T);
    for (size_t e = 0; e < r->n_eval; e++) {
        free(r->eval[e].train);
        free(r->eval[e].test);
    }
    free(r);
}

/* Summarise field `off` of evals[0..N−1] (a pflref_eval member). */
static pflref_status summarize(const pflref_eval *evals, size_t N, size_t off,
                               pflref_direction dir, double *a, double *wts,
                               double *work, pflref_summary *out,
                               pflref_error *err)
{
    for (size_t i = 0; i < N; i++) {
        a[i] = *(const double *)(const void *)((const char *)&evals[i] + off);
        wts[i] = (double)evals[i].n;
    }
    return pflref_metrics_summarize(a, wts, N, dir, work, out, err);
}

/* Client i's model of the given source, evaluated on D:
 *   GLOBAL    w
 *   PERSONAL  v_i
 *   MIX       v̄_i = α_i v_i + (1 − α_i) w (built in the driver's buffer s->mix), or,
 *             when the algorithm mixes outputs, the mixture of the two
 *             models' outputs α_i v_i(x) + (1 − α_i) w(x)
 *   OWN       the algorithm's evaluate_own (FedProto's nearest prototype). */
static pflref_status evaluate_one(const pflref_state *s,
                                  const pflref_algorithm *alg,
                                  pflref_model_source source, size_t i,
                                  const pflref_data *D, pflref_eval *out)
{
    const pflref_model *m = &s->problem->model;
    const size_t P = s->P;
    if (source == PFLREF_SOURCE_OWN)   /* the algorithm's own predictor */
        return alg->evaluate_own != NULL ? alg->evaluate_own(s, i, D, out)
                                         : PFLREF_EINTERNAL;
    if (source == PFLREF_SOURCE_GLOBAL && s->bn_own == NULL)
        return pflref_model_evaluate(m, s->w, D, s->ws, out);
    if (source == PFLREF_SOURCE_GLOBAL)   /* bn.aggregate = parameters_only */
        return pflref_bn_own_evaluate(s, i, D, out);
    const double *v = s->v + i * P;
    if (source == PFLREF_SOURCE_PERSONAL)
        return pflref_model_evaluate(m, v, D, s->ws, out);
    const double a = s->alpha[i];
    if (alg->output_mix != NULL && alg->output_mix(s->hyper))
        /* α_i v_i(x) + (1 − α_i) w(x): the outputs mixed (APFL's
         * apfl.mix = output) */
        return pflref_model_evaluate_mix(m, v, s->w, a, D, s->ws, out);
    /* req: apfl.alg1.l11, apfl.eq4, interp.eq3 */
    double *mix = s->mix;
    for (size_t p = 0; p < P; p++)
        mix[p] = a * v[p] + (1.0 - a) * s->w[p];
    pflref_bn_own_mix_buffers(s, i, mix);   /* parameters_only: v_i's r_μ, r_v */
    return pflref_model_evaluate(m, mix, D, s->ws, out);
}

/* 1 when every number of m is finite: finite per-client values near
 * DBL_MAX can still overflow a sum (the mean, the weighted mean). */
static int summary_finite(const pflref_summary *m)
{
    const double x[] = {m->mean, m->sd,  m->worst, m->best,
                        m->p10,  m->p90, m->worst_decile_mean,
                        m->weighted_mean};
    for (size_t k = 0; k < sizeof x / sizeof x[0]; k++)
        if (!isfinite(x[k]))
            return 0;
    return 1;
}

/* Evaluate model e of the algorithm on client i's train (and test) set into
 * er->train[i] (er->test[i]): one pass over each set gives its loss and
 * its mse (regression) or accuracy (classifiers).  A loss or mse that is
 * not finite although the parameters are fails with PFLREF_EDIVERGE,
 * located at the final evaluation (round = the rounds run, step −1). */
static pflref_status evaluate_client(const pflref_state *s,
                                     const pflref_algorithm *alg, size_t e,
                                     pflref_eval_result *er, size_t i,
                                     pflref_error *err)
{
    const pflref_problem *pr = s->problem;
    const int has_test = er->test != NULL;
    const int regression = pflref_model_is_regression(&pr->model);
    pflref_status st = evaluate_one(s, alg, alg->eval[e].source, i,
                                    &pr->clients[i].train, &er->train[i]);
    if (st == PFLREF_OK && has_test)
        st = evaluate_one(s, alg, alg->eval[e].source, i,
                          &pr->clients[i].test, &er->test[i]);
    if (st != PFLREF_OK)
        return pflref_error_set(err, st, NULL,
                                "evaluating %s on client %zu failed",
                                er->label, i);
    if (isfinite(er->train[i].loss) &&
        (!regression || isfinite(er->train[i].mse)) &&
        (!has_test || (isfinite(er->test[i].loss) &&
                       (!regression || isfinite(er->test[i].mse)))))
        return PFLREF_OK;
    char where[PFLREF_WHERE_MAX];
    snprintf(where, sizeof where, "metrics.%s", er->label);
    st = pflref_error_set(err, PFLREF_EDIVERGE, where,
                          "the evaluation loss of the %s model is not "
                          "finite (NaN or Inf) on client %zu, in the final "
                          "evaluation after %zu rounds", er->label, i, s->t);
    if (err != NULL) {
        err->round = (long)s->t;
        err->client = (long)i;
        err->step = -1;
    }
    return st;
}

/* The summaries of one data set's metrics: the loss, and the mse
 * (regression) or the accuracy (classifiers), each over the N clients'
 * evals (a, wts, work: N doubles each); *finite 0 when a loss or mse
 * summary is not finite. */
static pflref_status summarize_set(const pflref_model *m,
                                   const pflref_eval *evals, size_t N,
                                   pflref_summary *loss, pflref_summary *mse,
                                   pflref_summary *accuracy, double *a,
                                   double *wts, double *work, int *finite,
                                   pflref_error *err)
{
    const int regression = pflref_model_is_regression(m);
    pflref_status st = summarize(evals, N, offsetof(pflref_eval, loss),
                                 PFLREF_LOWER_IS_BETTER, a, wts, work, loss,
                                 err);
    if (st == PFLREF_OK && regression)
        st = summarize(evals, N, offsetof(pflref_eval, mse),
                       PFLREF_LOWER_IS_BETTER, a, wts, work, mse, err);
    if (st == PFLREF_OK && pflref_model_is_classifier(m))
        st = summarize(evals, N, offsetof(pflref_eval, accuracy),
                       PFLREF_HIGHER_IS_BETTER, a, wts, work, accuracy, err);
    *finite = summary_finite(loss) && (!regression || summary_finite(mse));
    return st;
}

/* The summaries of one evaluated model (train loss, MSE or accuracy; the
 * same of the test set), over a, wts, work: N doubles each.  A summary
 * that is not finite although every value is fails with PFLREF_EDIVERGE. */
static pflref_status summarize_model(const pflref_model *m,
                                     pflref_eval_result *er, size_t N,
                                     double *a, double *wts, double *work,
                                     pflref_error *err)
{
    int finite = 1, test_finite = 1;
    pflref_status st = summarize_set(m, er->train, N, &er->train_loss,
                                     &er->train_mse, &er->train_accuracy, a,
                                     wts, work, &finite, err);
    if (st == PFLREF_OK && er->test != NULL)
        st = summarize_set(m, er->test, N, &er->test_loss, &er->test_mse,
                           &er->test_accuracy, a, wts, work, &test_finite,
                           err);
    if (st != PFLREF_OK || (finite && test_finite))
        return st;
    char where[PFLREF_WHERE_MAX];
    snprintf(where, sizeof where, "metrics.%s.summary", er->label);
    return pflref_error_set(err, PFLREF_EDIVERGE, where,
                            "a summary of the per-client metrics of %s is "
                            "not finite (NaN or Inf): the values are "
                            "finite, their sum overflows", er->label);
}

/* Evaluate every model the algorithm reports on every client, and
 * summarise each. */
static pflref_status evaluate(const pflref_state *s, const pflref_algorithm *alg,
                              pflref_run_result *r, pflref_error *err)
{
    const pflref_problem *pr = s->problem;
    const size_t N = s->N;
    const int has_test = pflref_problem_has_test(pr);
    double *a = pflref_alloc_doubles(N, 3);
    if (a == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, NULL, "out of memory");
    double *wts = a + N, *work = a + 2 * N;
    pflref_status st = PFLREF_OK;

    r->n_eval = alg->n_eval;
    for (size_t e = 0; e < alg->n_eval && st == PFLREF_OK; e++) {
        pflref_eval_result *er = &r->eval[e];
        er->label = alg->eval[e].label;
        er->train = calloc(N, sizeof *er->train);
        er->test = has_test ? calloc(N, sizeof *er->test) : NULL;
        if (er->train == NULL || (has_test && er->test == NULL)) {
            st = pflref_error_set(err, PFLREF_ENOMEM, NULL, "out of memory");
            break;
        }
        for (size_t i = 0; i < N && st == PFLREF_OK; i++)
            st = evaluate_client(s, alg, e, er, i, err);
        if (st == PFLREF_OK)
            st = summarize_model(&pr->model, er, N, a, wts, work, err);
    }
    free(a);
    return st;
}

/* bn.running = update on a model with batch normalisation, for an
 * algorithm whose own solver does not move the running statistics
 * (alg->bn_refusal): refused, naming the algorithm, the model's batchnorm
 * layer and the switch that runs it with them frozen. */
static pflref_status check_bn_running(const pflref_algorithm *alg,
                                      const pflref_model *m,
                                      const pflref_hyper *hyper,
                                      pflref_error *err)
{
    if (alg->bn_refusal == NULL || !m->bn ||
        hyper->bn.running != PFLREF_BN_RUNNING_UPDATE)
        return PFLREF_OK;
    const char *layer = NULL;
    for (size_t i = 0; m->kind == PFLREF_MODEL_LAYERS && i < m->nlayers; i++)
        if (pflref_layer_is_bn(m->layers[i].kind)) {
            layer = m->layers[i].name;
            break;
        }
    return pflref_error_set(
        err, PFLREF_EINVAL, "algorithm.switches.bn.running",
        "bn.running = update: %s cannot move the batch-norm running "
        "statistics of this model (%s%s): %s; give \"bn.running\": "
        "\"frozen\" to run it with r_μ, r_v left as they are", alg->name,
        layer != NULL ? "a layer list with batchnorm layer "
                      : "an mlp with \"bn\": true",
        layer != NULL ? layer : "", alg->bn_refusal);
}

/* Test the arguments: none NULL, the schedule's N and post phase, w0
 * finite, then the hyperparameters (required, opt.*, bn.running). */
static pflref_status check_arguments(const pflref_problem *problem,
                                     const pflref_algorithm *alg,
                                     const pflref_hyper *hyper,
                                     const pflref_schedule *schedule,
                                     const double *w0, pflref_error *err)
{
    /* Name the first NULL argument, so the caller knows which one. */
    const char *null_arg = problem == NULL    ? "problem"
                           : alg == NULL      ? "alg"
                           : hyper == NULL    ? "hyper"
                           : schedule == NULL ? "schedule"
                           : w0 == NULL       ? "w0"
                                              : NULL;
    if (null_arg != NULL)
        return pflref_error_set(err, PFLREF_EINVAL, null_arg,
                                "pflref_run: the argument %s is NULL",
                                null_arg);
    if (schedule->N != problem->N)
        return pflref_error_set(err, PFLREF_EINVAL, "schedule",
                                "the schedule is for %zu clients, the "
                                "problem has %zu", schedule->N, problem->N);
    if (alg->needs_post && schedule->post == NULL)
        return pflref_error_set(err, PFLREF_EINVAL, "schedule.post",
                                "%s needs a post-training phase in the "
                                "schedule", alg->name);
    pflref_status st = check_required(alg, hyper, err);
    if (st == PFLREF_OK)   /* opt.*: ref/engine/optim.c */
        st = pflref_optim_check(alg, hyper, err);
    if (st == PFLREF_OK)   /* bn.running: ref/engine/sgd.c */
        st = check_bn_running(alg, &problem->model, hyper, err);
    return st;
}

/* Test the schedule against the algorithm and the clients' data: every
 * selected client aggregated (unless alg->train_all), the schedule valid
 * for the training-set sizes, a post phase only where the algorithm has
 * one. */
static pflref_status check_schedule(const pflref_problem *problem,
                                    const pflref_algorithm *alg,
                                    const pflref_schedule *schedule,
                                    pflref_error *err)
{
    for (size_t t = 0; alg->train_all == NULL && t < schedule->T; t++)
        if (schedule->rounds[t].n_selected != schedule->rounds[t].m) {
            char where[PFLREF_WHERE_MAX];
            snprintf(where, sizeof where, "schedule.rounds[%zu].selected", t);
            return pflref_error_set(err, PFLREF_EINVAL, where,
                                    "%s aggregates every client that "
                                    "trains; selected must equal clients",
                                    alg->name);
        }

    size_t *n = malloc(problem->N * sizeof *n);
    if (n == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, NULL, "out of memory");
    for (size_t i = 0; i < problem->N; i++)
        n[i] = problem->clients[i].train.n;
    pflref_status st = pflref_schedule_validate(schedule, n, problem->N, err);
    free(n);
    if (st != PFLREF_OK)
        return st;

    if (schedule->post != NULL && !alg->needs_post && !alg->allows_post)
        return pflref_error_set(err, PFLREF_EINVAL, "schedule.post",
                                "%s has no post-training phase", alg->name);
    return PFLREF_OK;
}

/* The algorithm's work buffers (alg->work_alloc) into s->extra, their
 * bytes counted in mem and checked against the memory available. */
static pflref_status alloc_work(pflref_state *s,
                                const pflref_problem *problem,
                                const pflref_algorithm *alg,
                                const pflref_hyper *hyper, run_memory *mem,
                                pflref_error *err)
{
    s->extra = alg->work_alloc(problem, hyper);
    if (s->extra == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, NULL,
                                "out of memory allocating %s's work "
                                "buffers (P = %zu, N = %zu)", alg->name,
                                s->P, s->N);
    mem->work = ((const pflref_work *)s->extra)->bytes;
    return run_memory_check(mem, s->N, s->P, err);
}

/* The client optimizers' states (opt.*) into s->optim, their bytes added
 * to mem and checked against the memory available. */
static pflref_status alloc_optim(pflref_state *s,
                                 const pflref_problem *problem,
                                 const pflref_algorithm *alg,
                                 const pflref_hyper *hyper, run_memory *mem,
                                 pflref_error *err)
{
    /* the model's parameters, or the algorithm's own vector (lora's
     * adapter) without a split */
    const size_t len = alg->opt_length != NULL
                           ? alg->opt_length(problem, hyper) : s->P;
    s->optim = pflref_optim_alloc(&hyper->opt,
                                  alg->opt_length != NULL ? NULL : s->mask,
                                  s->N, len, alg->opt_slots);
    if (s->optim == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, NULL,
                                "out of memory allocating the client "
                                "optimizers' states (opt.state, P = %zu, "
                                "N = %zu)", s->P, s->N);
    mem->work = add_sat(mem->work, s->optim->bytes);
    return run_memory_check(mem, s->N, s->P, err);
}

/* Test the input parameters, then allocate and initialise the state. */
static pflref_status run_prepare(const pflref_problem *problem,
                                 const pflref_algorithm *alg,
                                 const pflref_hyper *hyper,
                                 const pflref_schedule *schedule,
                                 const double *w0, const pflref_trace *trace,
                                 pflref_state *s, pflref_error *err)
{
    pflref_status st;
    if ((st = check_arguments(problem, alg, hyper, schedule, w0, err)) ||
        (st = check_schedule(problem, alg, schedule, err)))
        return st;
    /* Limits by memory: the estimate before anything is allocated or read
     * (reading w0's P numbers makes them resident on some kernels), then
     * again with the algorithm's buffers before init touches them. */
    run_memory mem = run_memory_estimate(problem, alg, schedule, trace);
    if ((st = run_memory_check(&mem, problem->N, problem->model.P, err)))
        return st;
    if (!pflref_all_finite(w0, problem->model.P))
        return pflref_error_set(err, PFLREF_EINVAL, "init",
                                "the initial parameters are not finite");
    st = pflref_state_alloc(s, problem, alg, hyper, schedule,
                            workspace_size(problem, schedule), w0, err);
    if (st != PFLREF_OK)
        return st;
    if (alg->check != NULL)
        st = alg->check(problem, hyper, schedule, s->mask, err);
    if (st == PFLREF_OK && alg->work_alloc != NULL)
        st = alloc_work(s, problem, alg, hyper, &mem, err);
    /* the client optimizers' states (opt.*; none for plain SGD) */
    if (st == PFLREF_OK && alg->opt_slots > 0 &&
        !pflref_optim_is_plain(&hyper->opt))
        st = alloc_optim(s, problem, alg, hyper, &mem, err);
    if (st == PFLREF_OK && alg->init != NULL)   /* with its dropout masks */
        st = pflref_dropout_run_init(s, schedule, alg->init, err);
    if (st != PFLREF_OK)
        pflref_state_free(s, alg);
    return st;
}

/* Replace the state by the candidate's after round t (resync only): w,
 * the personal models, α_i (APFL's adaptive α: its last note), then the
 * algorithm's own state (alg->load_state). */
static void load_state(pflref_state *s, const pflref_algorithm *alg,
                       pflref_state_loader load, void *ctx, long t)
{
    if (alg->has_global)
        load(ctx, PFLREF_EV_SERVER, "w", t, -1, s->w, s->P);
    for (size_t i = 0; alg->personal_name != NULL && i < s->N; i++)
        load(ctx, PFLREF_EV_CLIENT_END, alg->personal_name, t, (long)i,
             s->v + i * s->P, s->P);
    for (size_t i = 0; alg->has_alpha && i < s->N; i++)
        load(ctx, PFLREF_EV_NOTE, "alpha", t, (long)i, s->alpha + i, 1);
    if (alg->load_state != NULL)
        alg->load_state(s, load, ctx, t);
}

/* Iterate: one communication round per scheduled round, then the phase
 * after training, then the final state as events.  With a loader, every
 * round starts from the candidate's state. */
static pflref_status run_rounds(pflref_state *s, const pflref_algorithm *alg,
                                const pflref_schedule *schedule,
                                pflref_state_loader load, void *ctx,
                                const pflref_trace *trace, pflref_error *err)
{
    pflref_status st = PFLREF_OK;
    /* the dropout masks of each round's training passes (dropout.c) */
    pflref_dropout_feed feed;
    pflref_dropout_feed_start(&feed, s);
    /* req: pfedme.alg1.l2, ditto.alg1.l2, apfl.alg1.l2, perfedavg.alg1.l2 */
    /* req: fedalt.alg4.l2, fedsim.alg5.l2, ifca.alg1.l2, cfl.alg5.l2 */
    /* req: fedbn.alg1.l1, fedavg.alg1.l3, pfedhn.alg1.l2 */
    for (size_t t = 0; st == PFLREF_OK && t < schedule->T; t++) {
        if (load != NULL && t > 0)
            load_state(s, alg, load, ctx, (long)t - 1);
        /* round t's step sizes (lr.schedule; ref/engine/lr.c) */
        pflref_round_hyper(s->hyper_base, s->t, &s->hyper_round);
        s->hyper = &s->hyper_round;
        st = pflref_dropout_feed_round(&feed, &schedule->rounds[t], (long)t,
                                       err);
        if (st == PFLREF_OK)
            st = alg->round(s, &schedule->rounds[t], trace, err);
        st = pflref_dropout_feed_end(&feed, st, err);
        s->hyper = s->hyper_base;
        /* the participants' train() calls of round t (lr.count) */
        for (size_t j = 0; j < schedule->rounds[t].m; j++)
            s->trained[schedule->rounds[t].clients[j]]++;
        s->t++;
    }
    if (st == PFLREF_OK && alg->finish != NULL &&
        (alg->needs_post || schedule->post != NULL)) {
        if (load != NULL && schedule->T > 0)
            load_state(s, alg, load, ctx, (long)schedule->T - 1);
        st = pflref_dropout_feed_post(&feed, schedule, err);
        if (st == PFLREF_OK)
            st = alg->finish(s, schedule, trace, err);
        st = pflref_dropout_feed_end(&feed, st, err);
    }
    pflref_dropout_feed_stop(&feed, s);
    if (st == PFLREF_OK && s->w != NULL)
        pflref_trace_emit(trace, PFLREF_EV_FINAL, "final", -1, -1, -1, "w",
                          s->w, s->P, NULL);
    for (size_t i = 0; st == PFLREF_OK && s->v != NULL && i < s->N; i++)
        pflref_trace_emit(trace, PFLREF_EV_FINAL, "final", -1, (long)i, -1,
                          "v", s->v + i * s->P, s->P, NULL);
    for (size_t i = 0; st == PFLREF_OK && s->alpha != NULL && i < s->N; i++)
        pflref_trace_emit(trace, PFLREF_EV_FINAL, "final", -1, (long)i, -1,
                          "alpha", s->alpha + i, 1, NULL);
    return st;
}

pflref_status pflref_run(const pflref_problem *problem,
                         const pflref_algorithm *alg, const pflref_hyper *hyper,
                         const pflref_schedule *schedule, const double *w0,
                         const pflref_trace *trace, pflref_run_result **out,
                         pflref_error *err)
{
    if (out == NULL)
        return pflref_error_set(err, PFLREF_EINVAL, "out",
                                "pflref_run: out is NULL");
    *out = NULL;
    pflref_state s;
    pflref_status st = run_prepare(problem, alg, hyper, schedule, w0, trace, &s,
                                   err);
    if (st != PFLREF_OK)
        return st;
    st = run_rounds(&s, alg, schedule, NULL, NULL, trace, err);

    /* Evaluate and hand over the final state. */
    pflref_run_result *r = NULL;
    if (st == PFLREF_OK) {
        r = calloc(1, sizeof *r);
        if (r == NULL)
            st = pflref_error_set(err, PFLREF_ENOMEM, NULL, "out of memory");
    }
    if (st == PFLREF_OK) {
        r->P = s.P;
        r->N = s.N;
        r->T = schedule->T;
        st = evaluate(&s, alg, r, err);
    }
    if (st == PFLREF_OK) {
        r->w0 = s.w0;
        r->w = s.w;
        r->v = s.v;
        r->alpha = s.alpha;
        r->theta0 = s.theta0;
        r->n_theta0 = s.n_theta0;
        r->hn = s.hn;   /* req: pfedhn.alg1.l12 */
        r->n_hn = s.n_hn;
        r->chosen_peers = s.chosen_peers;   /* T = s.n_chosen slots */
        s.chosen_peers = NULL;
        s.w0 = s.w = s.v = s.alpha = s.theta0 = s.hn = NULL;
        *out = r;
    } else {
        pflref_run_result_free(r);
    }
    pflref_state_free(&s, alg);
    return st;
}

pflref_status pflref_resync_refusal(const pflref_algorithm *alg,
                                    const pflref_hyper *hyper,
                                    pflref_error *err)
{
    /* state a candidate's records do not carry: refused, nothing run */
    const char *gap = alg != NULL && hyper != NULL && alg->resync_gap != NULL
                          ? alg->resync_gap(hyper)
                          : NULL;
    if (gap != NULL)
        return pflref_error_set(err, PFLREF_EINVAL, "algorithm.name",
                                "%s cannot be re-synchronised (--resync): "
                                "%s", alg->name, gap);
    /* optimizer state kept beyond one client update is in no record */
    if (alg != NULL && hyper != NULL && alg->opt_slots > 0 &&
        hyper->opt.state != PFLREF_OPT_STATE_RESET &&
        pflref_optim_has_state(&hyper->opt))
        return pflref_error_set(err, PFLREF_EINVAL, "algorithm.switches."
                                "opt.state",
                                "%s cannot be re-synchronised (--resync): "
                                "the client optimizers' state (opt.state = "
                                "%s: momentum buffers, Adam's moments and "
                                "step counts) is in no record", alg->name,
                                hyper->opt.state == PFLREF_OPT_STATE_CLIENT
                                    ? "client" : "server");
    return PFLREF_OK;
}

pflref_status pflref_run_resync(const pflref_problem *problem,
                                const pflref_algorithm *alg,
                                const pflref_hyper *hyper,
                                const pflref_schedule *schedule,
                                const double *w0, pflref_state_loader load,
                                void *load_ctx, const pflref_trace *trace,
                                pflref_error *err)
{
    if (load == NULL)
        return pflref_error_set(err, PFLREF_EINVAL, "load",
                                "pflref_run_resync: no state loader");
    if (pflref_resync_refusal(alg, hyper, err) != PFLREF_OK)
        return PFLREF_EINVAL;
    pflref_state s;
    pflref_status st = run_prepare(problem, alg, hyper, schedule, w0, trace, &s,
                                   err);
    if (st != PFLREF_OK)
        return st;
    st = run_rounds(&s, alg, schedule, load, load_ctx, trace, err);
    pflref_state_free(&s, alg);
    return st;
}
