/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/builder.c: the inputs of pflref_run built in C (tests/builder.h).
 *
 * Everything here goes through the public C API only: pflref_model_init,
 * pflref_problem_alloc and pflref_data_alloc for the problem,
 * pflref_hyper_defaults, pflref_preset_apply and pflref_split_from_names for
 * the hyperparameters, pflref_schedule_alloc, pflref_round_plan_alloc,
 * pflref_batches_alloc and pflref_schedule_generate for the schedule.
 *
 * A given schedule is allocated for TB_MAX_ROUNDS rounds with a post phase
 * at the first tb_round or tb_post; its T counts the rounds filled so far.
 * It is sealed at the first run (or tb_schedule): the post phase is dropped
 * unless tb_post filled it, and no round may be added after that.
 */
#include <check.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "builder.h"

/* The most ids one client or index list may hold. */
#define MAX_IDS 256

pflref_model tb_model(pflref_model_kind kind, pflref_loss loss, size_t d,
                      size_t k, size_t h, int bias)
{
    pflref_model m;
    pflref_error err;
    pflref_error_clear(&err);
    pflref_status st = pflref_model_init(&m, kind, loss, d, k, h, bias, &err);
    ck_assert_msg(st == PFLREF_OK, "tb_model: %s at %s: %s",
                  pflref_status_name(st), err.where, err.message);
    return m;
}

pflref_model tb_mlp(pflref_loss loss, size_t d, size_t k, size_t h,
                    pflref_activation act, int hidden_bias, int bias)
{
    pflref_model m;
    pflref_error err;
    pflref_error_clear(&err);
    pflref_status st = pflref_model_init_mlp(&m, loss, d, k, h, act,
                                             hidden_bias, bias, &err);
    ck_assert_msg(st == PFLREF_OK, "tb_mlp: %s at %s: %s",
                  pflref_status_name(st), err.where, err.message);
    return m;
}

tb_case *tb_new(const pflref_model *m, size_t N)
{
    tb_case *c = calloc(1, sizeof *c);
    ck_assert_ptr_nonnull(c);
    c->problem = pflref_problem_alloc(m, N);
    ck_assert_msg(c->problem != NULL, "tb_new: no problem of %zu clients", N);
    pflref_hyper_defaults(&c->hyper);
    c->w0 = calloc(m->P, sizeof *c->w0);
    ck_assert_ptr_nonnull(c->w0);
    return c;
}

tb_case *tb_quadratic(size_t d, size_t N)
{
    const pflref_model m = tb_model(PFLREF_MODEL_QUADRATIC,
                                    PFLREF_LOSS_QUADRATIC, d, 1, 0, 0);
    return tb_new(&m, N);
}

void tb_free(tb_case *c)
{
    if (c == NULL)
        return;
    pflref_problem_free(c->problem);
    pflref_schedule_free(c->schedule);
    free(c->w0);
    free(c);
}

/* ---- data ---------------------------------------------------------------- */

static pflref_client *client(tb_case *c, size_t i, const char *fn)
{
    ck_assert_msg(i < c->problem->N, "%s: client %zu of a problem of %zu",
                  fn, i, c->problem->N);
    return &c->problem->clients[i];
}

static void data_alloc(tb_case *c, pflref_data *D, size_t n, const char *fn)
{
    ck_assert_msg(D->n == 0, "%s: the data set was given twice", fn);
    pflref_error err;
    pflref_error_clear(&err);
    pflref_status st = pflref_data_alloc(D, &c->problem->model, n, &err);
    ck_assert_msg(st == PFLREF_OK, "%s: %s", fn, err.message);
}

void tb_quad(tb_case *c, size_t i, const double *a, const double *cc,
             size_t n)
{
    const pflref_model *m = &c->problem->model;
    ck_assert_msg(m->kind == PFLREF_MODEL_QUADRATIC,
                  "tb_quad: the model is not quadratic");
    pflref_data *D = &client(c, i, "tb_quad")->train;
    data_alloc(c, D, n, "tb_quad");
    memcpy(D->a, a, m->d * sizeof *a);
    memcpy(D->c, cc, m->d * sizeof *cc);
}

static void set_xy(tb_case *c, pflref_data *D, size_t n, const double *X,
                   const double *y, const char *fn)
{
    const pflref_model *m = &c->problem->model;
    ck_assert_msg(m->kind != PFLREF_MODEL_QUADRATIC,
                  "%s: the quadratic model has no samples (tb_quad)", fn);
    data_alloc(c, D, n, fn);
    memcpy(D->X, X, n * m->d * sizeof *X);
    memcpy(D->y, y, n * sizeof *y);
}

void tb_train(tb_case *c, size_t i, size_t n, const double *X,
              const double *y)
{
    set_xy(c, &client(c, i, "tb_train")->train, n, X, y, "tb_train");
}

void tb_test(tb_case *c, size_t i, size_t n, const double *X,
             const double *y)
{
    set_xy(c, &client(c, i, "tb_test")->test, n, X, y, "tb_test");
}

void tb_val(tb_case *c, size_t i, size_t n, const double *X,
            const double *y)
{
    set_xy(c, &client(c, i, "tb_val")->val, n, X, y, "tb_val");
}

/* ---- hyperparameters and w0 ---------------------------------------------- */

void tb_w0(tb_case *c, const double *w0)
{
    memcpy(c->w0, w0, c->problem->model.P * sizeof *w0);
}

void tb_split(tb_case *c, const char *names)
{
    char buf[256];
    const char *list[4 * PFLREF_MAX_BLOCKS];
    size_t count = 0;
    ck_assert_msg(strlen(names) < sizeof buf, "tb_split: \"%s\" too long",
                  names);
    strcpy(buf, names);
    char *save = NULL;
    for (char *tok = strtok_r(buf, " ", &save); tok != NULL;
         tok = strtok_r(NULL, " ", &save)) {
        ck_assert_msg(count < sizeof list / sizeof list[0],
                      "tb_split: too many names in \"%s\"", names);
        list[count++] = tok;
    }
    pflref_error err;
    pflref_error_clear(&err);
    pflref_status st = pflref_split_from_names(&c->problem->model, list,
                                               count, "split", &c->hyper.split,
                                               &err);
    ck_assert_msg(st == PFLREF_OK, "tb_split(\"%s\"): %s at %s", names,
                  err.message, err.where);
}

void tb_preset(tb_case *c, const char *alg, const char *name)
{
    pflref_error err;
    pflref_error_clear(&err);
    pflref_status st = pflref_preset_apply(&c->hyper, alg, name, "preset",
                                           &err);
    ck_assert_msg(st == PFLREF_OK, "tb_preset(%s, %s): %s", alg, name,
                  err.message);
    const pflref_preset *pre = pflref_preset_find(alg, name);
    if (pre != NULL && pre->split != NULL) {
        st = pflref_split_from_names(&c->problem->model, &pre->split, 1,
                                     "preset", &c->hyper.split, &err);
        ck_assert_msg(st == PFLREF_OK, "tb_preset(%s, %s): split %s: %s", alg,
                      name, pre->split, err.message);
    }
}

/* ---- schedules ----------------------------------------------------------- */

void tb_generate_config(tb_case *c, const pflref_schedule_config *cfg)
{
    ck_assert_msg(c->schedule == NULL,
                  "tb_generate: the case already has a given schedule");
    c->cfg = *cfg;
    c->has_cfg = 1;
}

void tb_generate(tb_case *c, size_t T, size_t steps, size_t B)
{
    const pflref_schedule_config cfg = {
        .T = T,
        .m = c->problem->N,
        .sampler = PFLREF_SAMPLER_GSL,
        .client_seed = 1,
        .order = PFLREF_BATCH_SPLIT_ONCE,
        .batch_seed = 1,
        .train = {.epochs = 0, .steps = steps, .B = B},
    };
    tb_generate_config(c, &cfg);
}

void tb_generate_post(tb_case *c, size_t steps, size_t B)
{
    ck_assert_msg(c->has_cfg, "tb_generate_post before tb_generate");
    c->cfg.has_post = 1;
    c->cfg.post = (pflref_local_work){.epochs = 0, .steps = steps, .B = B};
}

/* The given schedule being filled, allocated at the first call. */
static pflref_schedule *given(tb_case *c, const char *fn)
{
    ck_assert_msg(!c->has_cfg, "%s: the case has a generated schedule", fn);
    ck_assert_msg(!c->sealed, "%s: the schedule was already run", fn);
    if (c->schedule == NULL) {
        c->schedule = pflref_schedule_alloc(TB_MAX_ROUNDS, c->problem->N, 1);
        ck_assert_ptr_nonnull(c->schedule);
        c->schedule->T = 0;
    }
    return c->schedule;
}

/* The numbers of list s ("0 2", "0, 2") into ids (at most MAX_IDS);
 * returns how many.  A '|' ends the list (*end, if not NULL, points at it
 * or at the terminating NUL). */
static size_t parse_ids(const char *s, size_t *ids, const char **end,
                        const char *what)
{
    size_t n = 0;
    const char *p = s;
    for (;;) {
        while (*p == ' ' || *p == ',')
            p++;
        if (*p == '\0' || *p == '|')
            break;
        ck_assert_msg(isdigit((unsigned char)*p),
                      "%s: \"%s\": expected an index at \"%s\"", what, s, p);
        ck_assert_msg(n < MAX_IDS, "%s: \"%s\" holds too many indices", what,
                      s);
        char *next;
        ids[n++] = (size_t)strtoul(p, &next, 10);
        p = next;
    }
    if (end != NULL)
        *end = p;
    return n;
}

/* One client's batches from s: steps separated by '|' ("" = no step). */
static void parse_batches(const char *s, pflref_batches *b, const char *what)
{
    size_t ids[MAX_IDS], total = 0, nsteps = 0;
    const char *p = s;
    while (*p == ' ')
        p++;
    if (*p != '\0') {
        for (;;) {
            const char *end;
            total += parse_ids(p, ids, &end, what);
            nsteps++;
            if (*end == '\0')
                break;
            p = end + 1;
        }
    }
    pflref_error err;
    pflref_error_clear(&err);
    pflref_status st = pflref_batches_alloc(b, nsteps, total, &err);
    ck_assert_msg(st == PFLREF_OK, "%s: %s", what, err.message);
    p = s;
    for (size_t step = 0; step < nsteps; step++) {
        const char *end;
        const size_t n = parse_ids(p, ids, &end, what);
        memcpy(b->idx + b->step_off[step], ids, n * sizeof *ids);
        b->step_off[step + 1] = b->step_off[step] + n;
        p = end + (*end == '|');
    }
}

static void add_round(tb_case *c, const char *clients, const char *selected,
                      va_list ap)
{
    pflref_schedule *s = given(c, "tb_round");
    ck_assert_msg(s->T < TB_MAX_ROUNDS, "tb_round: more than %d rounds",
                  TB_MAX_ROUNDS);
    size_t ids[MAX_IDS];
    const char *end;
    const size_t m = parse_ids(clients, ids, &end, "tb_round clients");
    ck_assert_msg(*end == '\0', "tb_round: clients \"%s\"", clients);
    pflref_round_plan *plan = &s->rounds[s->T];
    pflref_error err;
    pflref_error_clear(&err);
    pflref_status st = pflref_round_plan_alloc(plan, m, &err);
    ck_assert_msg(st == PFLREF_OK, "tb_round: %s", err.message);
    s->T++;
    memcpy(plan->clients, ids, m * sizeof *ids);
    if (selected != NULL) {
        const size_t ms = parse_ids(selected, ids, &end, "tb_round selected");
        ck_assert_msg(*end == '\0' && ms <= m,
                      "tb_round: selected \"%s\" of clients \"%s\"", selected,
                      clients);
        plan->n_selected = ms;
    }
    memcpy(plan->selected, ids, plan->n_selected * sizeof *ids);
    memcpy(plan->drawn, ids, plan->n_selected * sizeof *ids);
    for (size_t j = 0; j < m; j++)
        parse_batches(va_arg(ap, const char *), &plan->batches[j],
                      "tb_round batches");
}

void tb_round(tb_case *c, const char *clients, ...)
{
    va_list ap;
    va_start(ap, clients);
    add_round(c, clients, NULL, ap);
    va_end(ap);
}

void tb_round_selected(tb_case *c, const char *clients, const char *selected,
                       ...)
{
    va_list ap;
    va_start(ap, selected);
    add_round(c, clients, selected, ap);
    va_end(ap);
}

void tb_post(tb_case *c, ...)
{
    pflref_schedule *s = given(c, "tb_post");
    ck_assert_msg(!c->post_given, "tb_post: the post phase was given twice");
    c->post_given = 1;
    va_list ap;
    va_start(ap, c);
    for (size_t i = 0; i < s->N; i++)
        parse_batches(va_arg(ap, const char *), &s->post[i], "tb_post");
    va_end(ap);
}

/* The given schedule, complete: without a post phase unless tb_post gave
 * one (its batches are still empty then, so nothing else is freed). */
static void seal(tb_case *c)
{
    if (c->sealed || c->schedule == NULL)
        return;
    if (!c->post_given) {
        free(c->schedule->post);
        c->schedule->post = NULL;
    }
    c->sealed = 1;
}

static const pflref_algorithm *find_algorithm(const char *name)
{
    const pflref_algorithm *alg = pflref_algorithm_find(name);
    ck_assert_msg(alg != NULL, "no algorithm \"%s\" in the registry", name);
    return alg;
}

/* The schedule generated from c->cfg for alg (its train_all), as the
 * problem's sample counts give it; the caller frees it. */
static pflref_schedule *generate(const tb_case *c, const pflref_algorithm *alg)
{
    const size_t N = c->problem->N;
    size_t *n = malloc(N * sizeof *n);
    ck_assert_ptr_nonnull(n);
    for (size_t i = 0; i < N; i++)
        n[i] = c->problem->clients[i].train.n;
    pflref_schedule_config cfg = c->cfg;
    cfg.train_all = alg->train_all != NULL && alg->train_all(&c->hyper);
    pflref_schedule *s = NULL;
    pflref_error err;
    pflref_error_clear(&err);
    pflref_status st = pflref_schedule_generate(&cfg, n, N, &s, &err);
    free(n);
    ck_assert_msg(st == PFLREF_OK, "generating the schedule: %s at %s",
                  err.message, err.where);
    return s;
}

pflref_schedule *tb_schedule(tb_case *c, const char *alg)
{
    if (c->has_cfg) {
        c->schedule = generate(c, find_algorithm(alg));
        c->has_cfg = 0;
        c->sealed = 1;
    }
    ck_assert_msg(c->schedule != NULL, "tb_schedule: the case has none");
    seal(c);
    return c->schedule;
}

/* ---- runs ---------------------------------------------------------------- */

/* Run alg; *res and *err get pflref_run's. */
static pflref_status run(tb_case *c, const pflref_algorithm *alg,
                         const pflref_trace *trace, pflref_run_result **res,
                         pflref_error *err)
{
    pflref_error_clear(err);
    pflref_status st = pflref_problem_validate(c->problem, err);
    ck_assert_msg(st == PFLREF_OK, "the test's problem is invalid: %s at %s",
                  err->message, err->where);
    ck_assert_msg(c->has_cfg || c->schedule != NULL,
                  "the case has no schedule (tb_generate, tb_round)");
    seal(c);
    pflref_schedule *drawn = c->has_cfg ? generate(c, alg) : NULL;
    *res = NULL;
    st = pflref_run(c->problem, alg, &c->hyper,
                    drawn != NULL ? drawn : c->schedule, c->w0, trace, res,
                    err);
    pflref_schedule_free(drawn);
    return st;
}

pflref_run_result *tb_run(tb_case *c, const char *alg,
                          const pflref_trace *trace)
{
    pflref_run_result *res;
    pflref_error err;
    pflref_status st = run(c, find_algorithm(alg), trace, &res, &err);
    ck_assert_msg(st == PFLREF_OK, "pflref_run(%s) returned %s at \"%s\": %s",
                  alg, pflref_status_name(st), err.where, err.message);
    ck_assert_ptr_nonnull(res);
    return res;
}

pflref_run_result *tb_run_recorded(tb_case *c, const char *alg,
                                   pflref_trajectory *tj)
{
    pflref_trajectory_init(tj, PFLREF_RECORD_STEP);
    const pflref_trace tr = {.emit = pflref_trajectory_emit, .ctx = tj};
    pflref_run_result *res = tb_run(c, alg, &tr);
    ck_assert_msg(!tj->failed, "the trajectory of %s lost records", alg);
    return res;
}

void tb_run_error(tb_case *c, const char *alg, pflref_status expected,
                  pflref_error *err)
{
    pflref_run_result *res;
    pflref_status st = run(c, find_algorithm(alg), NULL, &res, err);
    ck_assert_msg(st == expected,
                  "pflref_run(%s) returned %s, expected %s (at \"%s\": %s)",
                  alg, pflref_status_name(st), pflref_status_name(expected),
                  err->where, err->message);
    ck_assert_msg(res == NULL, "a failed run of %s handed back a result", alg);
}
