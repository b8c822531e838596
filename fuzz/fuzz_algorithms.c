/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fuzz/fuzz_algorithms.c: libFuzzer harness that runs every registered
 * algorithm (ref/engine/run.c: fedavg, local, finetune, prox, pfedme, ditto,
 * fedalt, fedsim, pflego, perfedavg, apfl, interp, cfl, ifca) on small
 * fuzzed problems.
 *
 * The bytes are decoded (a missing byte reads as 0) into a spec text:
 *   byte 0                 the algorithm (index into the registry)
 *   model                  quadratic, linear, softmax, mlp (classifier or
 *                          regression), d, h, k ≤ 3, bias switches
 *   problem                N ≤ 4 inline clients of n ≤ 3 samples (test and
 *                          validation splits optional), values from a
 *                          table of ordinary numbers
 *   split, init, preset    any the format allows
 *   hyperparameters        every one that applies to the algorithm, from a
 *                          table of valid values, or left out
 *   switches               any value
 *   schedule               generated: T ≤ 3 rounds, m, sampler, seeds,
 *                          batching, local and post work
 * which pflref_spec_parse reads and validates (so the schedule generator
 * and the defaults are exercised too).  Then up to four overrides, made
 * directly on the parsed spec as a caller of the C API could: a real
 * hyperparameter, a data value, an entry of w0 or an integer or switch
 * set to an edge value (NaN, ±Inf, ±1e300, ±1e-300, a subnormal, 0, −0,
 * −1, DBL_MAX, an out-of-range switch).  The run goes through pflref_run.
 *
 * Invariants (a violation aborts):
 *   - the status is OK, EINVAL, ENOMEM or EDIVERGE, with a message;
 *   - OK: every value the run emitted to its trace is finite, and every
 *     number of the result is finite (w0, w, v, α, each
 *     client's loss and, by model type, mse or accuracy, every summary),
 *     APFL's α stays in [0, 1] when it started there, and the result
 *     serialises;
 *   - EDIVERGE: `where` names the quantity, and round, client and step are
 *     inside the run or −1 where they do not apply (status.h: round −1 is
 *     the phase after training, client −1 the server, step −1 no local
 *     step; a server failure has no step).
 * Seeds: fuzz/corpus/fuzz_algorithms (fuzz/seed_corpus.py: two per
 * algorithm).  Build and run: `make fuzz` / `make fuzz-smoke`; with
 * PFLREF_FUZZ_VERBOSE set in the environment, each input's spec text and
 * statuses are printed (to read a reproducer). */
#include <float.h>
#include <stdarg.h>
#include <stdint.h>
#include <gsl/gsl_errno.h>
#include "fuzz_common.h"

typedef struct {
    const uint8_t *p;
    size_t n;
} bytes;

static unsigned take(bytes *b)
{
    if (b->n == 0)
        return 0;
    b->n--;
    return *b->p++;
}

/* Data values and valid hyperparameter values (the decoder's tables). */
static const double ORDINARY[] = {0.0, 1.0, -1.0, 0.5, 2.385, -3.7, 0.125,
                                  10.0, -0.25, 7.0, 1e3, -1e3, 3.0, 0.01,
                                  -2.0, 4.5};
static const double STEP[] = {0.1, 0.5, 0.25, 1.0, 0.01, 2.0, 0.9, 0.0,
                              1.5, 0.05, 3.0, 0.75, 1e-3, 10.0, 0.3, 100.0};
static const double POSITIVE[] = {1.0, 0.5, 2.0, 3.0, 0.25, 1e-3, 10.0, 1e3};
/* Edge values, set after validation. */
static const double EDGE[] = {NAN, INFINITY, -INFINITY, 1e300, -1e300,
                              1e-300, -1e-300, 4.9406564584124654e-324,
                              2.2250738585072014e-308, 0.0, -0.0, -1.0, -0.5,
                              1e154, 1e20, DBL_MAX};
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* A growing spec text (a fixed buffer: the decoder's output is small). */
typedef struct {
    char s[16384];
    size_t n;
} text;

static void put(text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(t->s + t->n, sizeof t->s - t->n, fmt, ap);
    va_end(ap);
    if (k > 0)
        t->n = t->n + (size_t)k < sizeof t->s ? t->n + (size_t)k
                                              : sizeof t->s - 1;
}

typedef struct {
    int kind;           /* 0 quadratic, 1 linear, 2 softmax, 3 mlp       */
    int classifier;
    size_t d, h, k, P;
} model_shape;

static void put_model(text *t, bytes *b, model_shape *m)
{
    unsigned c = take(b), opt = take(b);
    m->d = 1 + take(b) % 3;
    m->h = 1 + take(b) % 3;
    m->k = 2 + take(b) % 2;
    const int bias = opt & 1, hidden_bias = (opt >> 1) & 1;
    switch (c % 6) {
    case 0:
        m->kind = 0;
        m->classifier = 0;
        m->P = m->d;
        put(t, "{\"kind\":\"quadratic\",\"d\":%zu}", m->d);
        break;
    case 1:
    case 5:
        m->kind = 1;
        m->classifier = 0;
        m->P = m->d + (size_t)bias;
        put(t, "{\"kind\":\"linear\",\"d\":%zu,\"loss\":\"%s\",\"bias\":%s}",
            m->d, (opt >> 2) & 1 ? "squared" : "half_squared",
            bias ? "true" : "false");
        break;
    case 2:
        m->kind = 2;
        m->classifier = 1;
        m->P = m->k * m->d + (bias ? m->k : 0);
        put(t, "{\"kind\":\"softmax\",\"d\":%zu,\"k\":%zu,\"bias\":%s}", m->d,
            m->k, bias ? "true" : "false");
        break;
    default: {   /* mlp: case 3 a classifier, case 4 a regression */
        m->kind = 3;
        m->classifier = c % 6 == 3;
        if (!m->classifier)
            m->k = 1;
        m->P = m->h * m->d + (hidden_bias ? m->h : 0) + m->k * m->h +
               (bias ? m->k : 0);
        put(t, "{\"kind\":\"mlp\",\"d\":%zu,\"h\":%zu,\"k\":%zu,\"loss\":\"%s\","
               "\"activation\":\"%s\",\"bias\":%s,\"hidden_bias\":%s}",
            m->d, m->h, m->k,
            m->classifier ? "cross_entropy"
                          : ((opt >> 2) & 1 ? "squared" : "half_squared"),
            (opt >> 3) & 1 ? "identity" : "relu", bias ? "true" : "false",
            hidden_bias ? "true" : "false");
        break;
    }
    }
}

/* "KEY":[[x..]..],"KEY_y":[..] for n samples. */
static void put_rows(text *t, bytes *b, const model_shape *m, const char *X,
                     const char *y, size_t n)
{
    put(t, "\"%s\":[", X);
    for (size_t r = 0; r < n; r++) {
        put(t, "%s[", r ? "," : "");
        for (size_t j = 0; j < m->d; j++)
            put(t, "%s%.17g", j ? "," : "", ORDINARY[take(b) % COUNT(ORDINARY)]);
        put(t, "]");
    }
    put(t, "],\"%s\":[", y);
    for (size_t r = 0; r < n; r++) {
        unsigned v = take(b);
        if (m->classifier)
            put(t, "%s%zu", r ? "," : "", (size_t)v % m->k);
        else
            put(t, "%s%.17g", r ? "," : "", ORDINARY[v % COUNT(ORDINARY)]);
    }
    put(t, "]");
}

static size_t put_problem(text *t, bytes *b, const model_shape *m)
{
    size_t N = 1 + take(b) % 4;
    unsigned extra = take(b);
    put(t, "{\"clients\":[");
    for (size_t i = 0; i < N; i++) {
        put(t, "%s{", i ? "," : "");
        if (m->kind == 0) {
            put(t, "\"a\":[");
            for (size_t j = 0; j < m->d; j++)
                put(t, "%s%.17g", j ? "," : "",
                    POSITIVE[take(b) % COUNT(POSITIVE)]);
            put(t, "],\"c\":[");
            for (size_t j = 0; j < m->d; j++)
                put(t, "%s%.17g", j ? "," : "",
                    ORDINARY[take(b) % COUNT(ORDINARY)]);
            put(t, "],\"n\":%u}", 1 + take(b) % 4);
            continue;
        }
        put_rows(t, b, m, "X", "y", 1 + take(b) % 3);
        if (extra & 1) {
            put(t, ",");
            put_rows(t, b, m, "X_test", "y_test", 1 + take(b) % 2);
        }
        if (extra & 2) {
            put(t, ",");
            put_rows(t, b, m, "X_val", "y_val", 1 + take(b) % 2);
        }
        put(t, "}");
    }
    put(t, "]}");
    return N;
}

static void put_hyper(text *t, bytes *b, const pflref_algorithm *alg)
{
    size_t np;
    const pflref_param *ps = pflref_params(&np);
    text sw = {.n = 0};
    int nh = 0, ns = 0;
    put(t, "\"hyperparameters\":{");
    for (size_t i = 0; i < np; i++) {
        const pflref_param *p = &ps[i];
        if (!pflref_name_in_list(p->algorithms, alg->name))
            continue;
        unsigned c = take(b);
        if (c % 8 == 7)   /* left out: the default, or a missing value */
            continue;
        c /= 8;
        if (p->type == PFLREF_PARAM_ENUM) {
            size_t nv = 0;
            while (p->values[nv] != NULL)
                nv++;
            put(&sw, "%s\"%s\":\"%s\"", ns++ ? "," : "", p->name,
                p->values[c % nv]);
        } else if (p->type == PFLREF_PARAM_INT) {
            put(t, "%s\"%s\":%zu", nh++ ? "," : "", p->name,
                (size_t)p->lo + c % 3);
        } else {
            double v = STEP[c % COUNT(STEP)];
            if (v < p->lo || (p->lo_open && v == p->lo))
                v = p->lo + 0.5;
            put(t, "%s\"%s\":%.17g", nh++ ? "," : "", p->name, v);
        }
    }
    put(t, "},\"switches\":{%s}", sw.s);
}

static void put_work(text *t, bytes *b)
{
    unsigned c = take(b);
    if (c & 1)
        put(t, "{\"epochs\":%u", 1 + (c >> 1) % 2);
    else
        put(t, "{\"steps\":%u", 1 + (c >> 1) % 3);
    put(t, ",\"batch_size\":%u}", take(b) % 4);
}

/* The spec text of the whole input; *model and *N describe it. */
static const pflref_algorithm *compose(bytes *b, text *t, model_shape *m,
                                       size_t *N)
{
    size_t na;
    const pflref_algorithm *const *algs = pflref_algorithms(&na);
    const pflref_algorithm *alg = algs[take(b) % na];
    put(t, "{\"format\":\"pflref-spec/1\",\"model\":");
    put_model(t, b, m);
    put(t, ",\"problem\":");
    *N = put_problem(t, b, m);
    static const char *const SPLITS[] = {"", "\"head\"", "\"input\"",
                                         "\"w\"", "\"W1\"", "\"W\""};
    unsigned c = take(b);
    if (c % 8 < COUNT(SPLITS) && c % 8 > 0)
        put(t, ",\"split\":{\"personal\":[%s]}", SPLITS[c % 8]);
    c = take(b);
    switch (c % 4) {
    case 1:
        put(t, ",\"init\":{\"kind\":\"given\",\"w\":[");
        for (size_t j = 0; j < m->P; j++)
            put(t, "%s%.17g", j ? "," : "", ORDINARY[take(b) % COUNT(ORDINARY)]);
        put(t, "]}");
        break;
    case 2:
        put(t, ",\"init\":{\"kind\":\"gaussian\",\"seed\":%u,\"sd\":%.17g}",
            1 + take(b), STEP[take(b) % COUNT(STEP)]);
        break;
    case 3:
        put(t, ",\"init\":{\"kind\":\"uniform\",\"seed\":%u,\"scale\":%.17g}",
            1 + take(b), STEP[take(b) % COUNT(STEP)]);
        break;
    default:
        break;
    }
    put(t, ",\"algorithm\":{\"name\":\"%s\",", alg->name);
    c = take(b);
    if (c % 4 == 3) {   /* one of the algorithm's presets */
        size_t npre;
        const pflref_preset *pre = pflref_presets(&npre);
        for (size_t i = 0, seen = 0; i < npre; i++)
            if (strcmp(pre[i].algorithm, alg->name) == 0 &&
                seen++ == (c / 4) % 2) {
                put(t, "\"preset\":\"%s\",", pre[i].name);
                break;
            }
    }
    put_hyper(t, b, alg);
    c = take(b);
    put(t, "},\"schedule\":{\"kind\":\"generate\",\"rounds\":%u", c % 4);
    if ((c >> 2) & 1)
        put(t, ",\"clients_per_round\":%zu", 1 + (size_t)(c >> 3) % *N);
    c = take(b);
    put(t, ",\"sampler\":\"%s\",\"client_seed\":%u,\"batches\":\"%s\","
           "\"batch_seed\":%u,\"local\":",
        c & 1 ? "numpy_legacy" : "gsl", 1 + ((c >> 1) & 3),
        (c >> 3) & 1 ? "reshuffle" : "split_once", 1 + (c >> 4));
    put_work(t, b);
    c = take(b);
    if (alg->needs_post || (alg->allows_post && (c & 1))) {
        put(t, ",\"post\":");
        put_work(t, b);
    }
    put(t, "},\"output\":{\"trajectory\":\"%s\"}}",
        (c >> 1) % 3 == 0 ? "none" : (c >> 1) % 3 == 1 ? "round" : "step");
    return alg;
}

/* An edge value in a parameter, a data value or w0, or an odd integer or
 * switch, as a caller of pflref_run could pass them. */
static void override(bytes *b, pflref_spec *spec)
{
    unsigned what = take(b), which = take(b), value = take(b);
    const double edge = EDGE[value % COUNT(EDGE)];
    pflref_problem *pr = spec->problem;
    size_t np;
    const pflref_param *ps = pflref_params(&np);
    const pflref_param *mine[64];
    size_t nm = 0;
    for (size_t i = 0; i < np && nm < COUNT(mine); i++)
        if (pflref_name_in_list(ps[i].algorithms, spec->algorithm->name))
            mine[nm++] = &ps[i];
    char *h = (char *)&spec->hyper;
    if (getenv("PFLREF_FUZZ_VERBOSE") != NULL)
        fprintf(stderr, "override: kind %u, which %u, edge %.17g\n", what % 5,
                which, edge);
    switch (what % 5) {
    case 0:
    case 1: {   /* a real hyperparameter */
        if (nm == 0)
            break;
        const pflref_param *p = mine[which % nm];
        if (p->type == PFLREF_PARAM_REAL)
            memcpy(h + p->offset, &edge, sizeof edge);
        else if (p->type == PFLREF_PARAM_INT) {
            static const size_t INTS[] = {0, 1, 2, 4, PFLREF_INT_UNSET};
            size_t v = INTS[value % COUNT(INTS)];
            memcpy(h + p->offset, &v, sizeof v);
        } else {
            static const int ENUMS[] = {-1, 1, 2, 3, 7, 1000};
            int v = ENUMS[value % COUNT(ENUMS)];
            memcpy(h + p->offset, &v, sizeof v);
        }
        break;
    }
    case 2: {   /* a data value of one client */
        pflref_client *cl = &pr->clients[which % pr->N];
        pflref_data *D = (which >> 4) % 3 == 0   ? &cl->train
                         : (which >> 4) % 3 == 1 ? &cl->test
                                                 : &cl->val;
        if (D->n == 0)
            break;
        size_t d = pr->model.d;
        if (pr->model.kind == PFLREF_MODEL_QUADRATIC)
            (value & 1 ? D->a : D->c)[value / 2 % d] = edge;
        else if (value & 1)
            D->X[value / 2 % (D->n * d)] = edge;
        else
            D->y[value / 2 % D->n] = edge;
        break;
    }
    case 3:   /* an entry of w0 */
        spec->w0[which % pr->model.P] = edge;
        break;
    default:  /* a sample index of a scheduled batch */
        if (spec->schedule->T > 0 && spec->schedule->rounds[0].m > 0) {
            pflref_batches *bt = &spec->schedule->rounds[0].batches[0];
            size_t nidx = bt->step_off[bt->nsteps];
            if (nidx > 0)
                bt->idx[which % nidx] = value % 5;
        }
        break;
    }
}

/* A trace sink that records into a trajectory and remembers the first
 * event with a non-finite value (fine in a run that then fails, a defect in
 * one that succeeds: its result could not be written). */
typedef struct {
    pflref_trajectory tj;
    int nonfinite;
    char first[96];
} sink;

static void sink_emit(void *ctx, const pflref_event *ev)
{
    sink *k = ctx;
    for (size_t j = 0; !k->nonfinite && j < ev->len; j++)
        if (!isfinite(ev->value[j])) {
            k->nonfinite = 1;
            snprintf(k->first, sizeof k->first, "%s %s r%ld c%ld s%ld",
                     pflref_event_kind_name(ev->kind), ev->name, ev->round,
                     ev->client, ev->step);
        }
    pflref_trajectory_emit(&k->tj, ev);
}

static void require_finite(const double *x, size_t n, const char *what)
{
    for (size_t i = 0; x != NULL && i < n; i++)
        FUZZ_REQUIRE(isfinite(x[i]), what);
}

static void require_summary(const pflref_summary *s, const char *what)
{
    const double f[] = {s->mean, s->sd, s->worst, s->best, s->p10, s->p90,
                        s->worst_decile_mean, s->weighted_mean};
    require_finite(f, COUNT(f), what);
}

static void check_result(const pflref_spec *spec, const pflref_run_result *r,
                         const pflref_trajectory *tj)
{
    const pflref_problem *pr = spec->problem;
    const size_t P = pr->model.P, N = pr->N;
    FUZZ_REQUIRE(r != NULL && r->P == P && r->N == N &&
                     r->T == spec->schedule->T,
                 "OK without a result of the run's shape");
    require_finite(r->w0, P, "w0 not finite");
    require_finite(r->w, P, "final w not finite");
    require_finite(r->v, N * P, "final v not finite");
    require_finite(r->alpha, N, "final alpha not finite");
    require_finite(r->theta0, r->n_theta0, "initial cluster models not finite");
    if (r->alpha != NULL && strcmp(spec->algorithm->name, "apfl") == 0 &&
        spec->hyper.apfl.alpha >= 0.0 && spec->hyper.apfl.alpha <= 1.0)
        for (size_t i = 0; i < N; i++)
            FUZZ_REQUIRE(r->alpha[i] >= 0.0 && r->alpha[i] <= 1.0,
                         "APFL's alpha left [0, 1]");
    const int reg = pflref_model_is_regression(&pr->model);
    const int cls = pflref_model_is_classifier(&pr->model);
    for (size_t e = 0; e < r->n_eval; e++) {
        const pflref_eval_result *er = &r->eval[e];
        for (size_t i = 0; i < N; i++) {
            FUZZ_REQUIRE(isfinite(er->train[i].loss), "train loss not finite");
            FUZZ_REQUIRE(!reg || isfinite(er->train[i].mse),
                         "train mse not finite");
            FUZZ_REQUIRE(!cls || (er->train[i].accuracy >= 0.0 &&
                                  er->train[i].accuracy <= 1.0),
                         "train accuracy outside [0, 1]");
            if (er->test == NULL)
                continue;
            FUZZ_REQUIRE(isfinite(er->test[i].loss), "test loss not finite");
            FUZZ_REQUIRE(!reg || isfinite(er->test[i].mse),
                         "test mse not finite");
            FUZZ_REQUIRE(!cls || (er->test[i].accuracy >= 0.0 &&
                                  er->test[i].accuracy <= 1.0),
                         "test accuracy outside [0, 1]");
        }
        require_summary(&er->train_loss, "train_loss summary not finite");
        if (reg)
            require_summary(&er->train_mse, "train_mse summary not finite");
        if (cls)
            require_summary(&er->train_accuracy,
                            "train_accuracy summary not finite");
        if (er->test != NULL) {
            require_summary(&er->test_loss, "test_loss summary not finite");
            if (reg)
                require_summary(&er->test_mse, "test_mse summary not finite");
            if (cls)
                require_summary(&er->test_accuracy,
                                "test_accuracy summary not finite");
        }
    }
    pflref_build_info bi = {"fuzz", "fuzz", "", "", 1};
    char *json = NULL;
    pflref_error err;
    pflref_status st = pflref_result_to_json(spec, r, tj, &bi, &json, &err);
    if (st != PFLREF_OK && getenv("PFLREF_FUZZ_VERBOSE") != NULL)
        fprintf(stderr, "result_to_json: %s %s: %s\n", pflref_status_name(st),
                err.where, err.message);
    FUZZ_REQUIRE(st == PFLREF_OK && json != NULL,
                 "a successful run's result does not serialise");
    free(json);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gsl_set_error_handler_off();
    bytes b = {data, size};
    static text t;
    t.n = 0;
    t.s[0] = '\0';
    model_shape m;
    size_t N;
    compose(&b, &t, &m, &N);
    pflref_spec *spec = NULL;
    pflref_error err;
    pflref_status st = pflref_spec_parse(t.s, t.n, NULL, &spec, &err);
    const int verbose = getenv("PFLREF_FUZZ_VERBOSE") != NULL;
    if (verbose)   /* to read a reproducer: the spec and what became of it */
        fprintf(stderr, "spec: %s\nparse: %s %s: %s\n", t.s,
                pflref_status_name(st), err.where, err.message);
    fuzz_check_error(st, &err);
    if (st != PFLREF_OK)
        return 0;
    FUZZ_REQUIRE(spec->problem->model.P == m.P && spec->problem->N == N,
                 "the decoder and the reader disagree on the shape");
    unsigned n_over = take(&b) % 5;
    for (unsigned k = 0; k < n_over; k++)
        override(&b, spec);

    sink k = {.nonfinite = 0};
    pflref_trajectory_init(&k.tj, spec->record);
    pflref_trace tr = {sink_emit, &k};
    pflref_run_result *res = NULL;
    pflref_error_clear(&err);
    st = pflref_run(spec->problem, spec->algorithm, &spec->hyper,
                    spec->schedule, spec->w0, &tr, &res, &err);
    if (verbose)
        fprintf(stderr, "overrides: %u; run: %s %s: %s\n", n_over,
                pflref_status_name(st), err.where, err.message);
    fuzz_check_error(st, &err);
    FUZZ_REQUIRE(st == PFLREF_OK || st == PFLREF_EINVAL ||
                     st == PFLREF_ENOMEM || st == PFLREF_EDIVERGE,
                 "pflref_run: a status outside OK, EINVAL, ENOMEM, EDIVERGE");
    if (st == PFLREF_OK) {
        if (k.nonfinite && verbose)
            fprintf(stderr, "non-finite event: %s\n", k.first);
        FUZZ_REQUIRE(!k.nonfinite,
                     "a successful run emitted a non-finite value");
        check_result(spec, res, &k.tj);
    } else {
        FUZZ_REQUIRE(res == NULL, "a failed run returned a result");
    }
    if (st == PFLREF_EDIVERGE) {
        const long T = (long)spec->schedule->T;
        FUZZ_REQUIRE(err.where[0] != '\0',
                     "a divergence that names no quantity");
        FUZZ_REQUIRE(err.round >= -1 && err.round <= T,
                     "a divergence outside the run's rounds");
        FUZZ_REQUIRE(err.client >= -1 && err.client < (long)N,
                     "a divergence at no client of the problem");
        FUZZ_REQUIRE(err.step >= -1, "a divergence at a negative step");
        FUZZ_REQUIRE(err.client >= 0 || err.step == -1,
                     "a server divergence with a local step");
    }
    pflref_run_result_free(res);
    pflref_trajectory_free(&k.tj);
    pflref_spec_free(spec);
    return 0;
}
