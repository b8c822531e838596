/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/models/problem.c: a federated problem (one model, N clients' train,
 * test and validation data) and its data sets: allocation, release and
 * validation (pflref_data_validate of pflref/model.h checks one data set
 * against its model).
 *
 * The generators declared in pflref/problem.h live in
 * ref/sampling/generate.c.
 *
 * Ownership: a pflref_problem owns its clients array and every X, y, a and
 * c array of every client's train, test and validation data, except the
 * arrays a client marks borrowed (pflref_client.borrowed): those point into
 * memory the problem holds (pflref_held, e.g. a read-only mapping of a .npy
 * file used in place) and releases through the holder's own release
 * function; pflref_problem_free releases them all, each once.
 *
 * Limits: data sizes are bounded by memory, not by a fixed count: a data
 * set whose bytes overflow size_t or exceed this machine's physical memory,
 * or the memory PFLREF_MEMORY_LIMIT pins when that is less
 * (pflref_data_limit_bytes), is refused with PFLREF_ENOMEM naming n, d and
 * the bytes, before anything is allocated.  Test data is all-or-none: either
 * every client has test.n ≥ 1 or every client has test.n = 0; so is the
 * validation split (val.n).  The quadratic model ignores both.
 */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <unistd.h>
#include "pflref/problem.h"
#include "core/args.h"
#include "models/models.h"

/* A client's data sets: train, and the optional test and validation data
 * (each all-or-none across clients). */
typedef enum { PART_TRAIN, PART_TEST, PART_VAL } data_part;

static const pflref_data *part_of(const pflref_client *c, data_part part)
{
    switch (part) {
    case PART_TRAIN: return &c->train;
    case PART_TEST:  return &c->test;
    case PART_VAL:   break;
    }
    return &c->val;
}

/* A problem for model m (copied) with N zeroed clients.
 *   m [in];  N [in] clients (0 allowed: validation rejects it)
 * Returns NULL when m is NULL, N·sizeof(client) overflows, or memory is
 * short.  Free with pflref_problem_free. */
pflref_problem *pflref_problem_alloc(const pflref_model *m, size_t N)
{
    if (m == NULL || N > SIZE_MAX / sizeof(pflref_client))
        return NULL;
    /* N = 0 gives an empty problem, which pflref_problem_validate
     * rejects. */
    pflref_problem *p = calloc(1, sizeof *p);
    pflref_client *clients = N > 0 ? calloc(N, sizeof *clients) : NULL;
    if (p == NULL || (N > 0 && clients == NULL)) {
        free(clients);
        free(p);
        return NULL;
    }
    *p = (pflref_problem){.model = *m, .N = N, .clients = clients};
    return p;
}

/* Free D's arrays that are not borrowed (x_borrowed, y_borrowed: the
 * client's PFLREF_BORROWED_* bits for D's X and y) and zero D. */
static void data_free(pflref_data *D, unsigned x_borrowed, unsigned y_borrowed)
{
    if (!x_borrowed)
        free(D->X);
    if (!y_borrowed)
        free(D->y);
    free(D->a);
    free(D->c);
    *D = (pflref_data){.n = 0};
}

/* Free p, its clients, every X, y, a, c they own, and every held mapping.
 * p may be NULL. */
void pflref_problem_free(pflref_problem *p)
{
    if (p == NULL)
        return;
    if (p->clients != NULL)
        for (size_t i = 0; i < p->N; i++) {
            pflref_client *c = &p->clients[i];
            const unsigned b = c->borrowed;
            data_free(&c->train, b & PFLREF_BORROWED_TRAIN_X,
                      b & PFLREF_BORROWED_TRAIN_Y);
            data_free(&c->test, b & PFLREF_BORROWED_TEST_X,
                      b & PFLREF_BORROWED_TEST_Y);
            data_free(&c->val, b & PFLREF_BORROWED_VAL_X,
                      b & PFLREF_BORROWED_VAL_Y);
        }
    for (size_t h = 0; h < p->n_held; h++)
        if (p->held[h].release != NULL)
            p->held[h].release(p->held[h].addr, p->held[h].len);
    free(p->held);
    free(p->clients);
    free(p);
}

/* Append [addr, addr + len) with its release function to p->held.
 *   p [in,out];  addr, len [in] the memory;  release [in] non-NULL
 * Ownership passes in every case: on failure release runs at once.
 * Returns PFLREF_EINVAL for a NULL p or release, PFLREF_ENOMEM when the
 * list cannot grow. */
pflref_status pflref_problem_hold(pflref_problem *p, void *addr, size_t len,
                                  void (*release)(void *addr, size_t len),
                                  pflref_error *err)
{
    if (release == NULL)
        return pflref_error_set(err, PFLREF_EINVAL, "release",
                                "no release function");
    pflref_held *grown = NULL;
    if (p != NULL && p->n_held < SIZE_MAX / sizeof *grown - 1)
        grown = realloc(p->held, (p->n_held + 1) * sizeof *grown);
    if (grown == NULL) {
        release(addr, len);
        return p == NULL ? pflref_error_set(err, PFLREF_EINVAL, "p",
                                            "p is NULL")
                         : pflref_error_set(err, PFLREF_ENOMEM, NULL,
                                            "out of memory");
    }
    grown[p->n_held] = (pflref_held){.addr = addr, .len = len,
                                     .release = release};
    p->held = grown;
    p->n_held++;
    return PFLREF_OK;
}

/* a + b, or SIZE_MAX when it overflows. */
static size_t sat_add(size_t a, size_t b)
{
    return a > SIZE_MAX - b ? SIZE_MAX : a + b;
}

/* a · b · sizeof(double), or SIZE_MAX when it overflows. */
static size_t sat_doubles(size_t a, size_t b)
{
    size_t ab;
    if (!pflref_size_mul(a, b, &ab) || ab > SIZE_MAX / sizeof(double))
        return SIZE_MAX;
    return ab * sizeof(double);
}

/* Bytes of D's own arrays for model m (X and y unless borrowed). */
static size_t data_bytes(const pflref_data *D, size_t d, unsigned x_borrowed,
                         unsigned y_borrowed)
{
    size_t b = 0;
    if (D->X != NULL && !x_borrowed)
        b = sat_add(b, sat_doubles(D->n, d));
    if (D->y != NULL && !y_borrowed)
        b = sat_add(b, sat_doubles(D->n, 1));
    if (D->a != NULL)
        b = sat_add(b, sat_doubles(d, 1));
    if (D->c != NULL)
        b = sat_add(b, sat_doubles(d, 1));
    return b;
}

size_t pflref_problem_bytes_owned(const pflref_problem *p)
{
    if (p == NULL)
        return 0;
    size_t b = sat_add(sizeof *p, p->N * sizeof(pflref_client));
    b = sat_add(b, p->n_held * sizeof(pflref_held));
    for (size_t i = 0; p->clients != NULL && i < p->N; i++) {
        const pflref_client *c = &p->clients[i];
        const unsigned w = c->borrowed;
        const size_t d = p->model.d;
        b = sat_add(b, data_bytes(&c->train, d, w & PFLREF_BORROWED_TRAIN_X,
                                  w & PFLREF_BORROWED_TRAIN_Y));
        b = sat_add(b, data_bytes(&c->test, d, w & PFLREF_BORROWED_TEST_X,
                                  w & PFLREF_BORROWED_TEST_Y));
        b = sat_add(b, data_bytes(&c->val, d, w & PFLREF_BORROWED_VAL_X,
                                  w & PFLREF_BORROWED_VAL_Y));
    }
    return b;
}

size_t pflref_problem_bytes_mapped(const pflref_problem *p)
{
    size_t b = 0;
    for (size_t h = 0; p != NULL && h < p->n_held; h++)
        b = sat_add(b, p->held[h].len);
    return b;
}

size_t pflref_data_limit_bytes(void)
{
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long page = sysconf(_SC_PAGESIZE);
    size_t bytes;
    if (pages <= 0 || page <= 0 ||
        !pflref_size_mul((size_t)pages, (size_t)page, &bytes))
        bytes = SIZE_MAX;
    const size_t pinned = pflref_memory_pinned();
    return pinned < bytes ? pinned : bytes;
}

/* Refuse `bytes` of data (`what`, for the message) beyond this machine's
 * memory, with PFLREF_ENOMEM at `where` naming the sizes; `bytes` =
 * SIZE_MAX stands for an overflow of size_t. */
static pflref_status check_bytes(size_t bytes, const char *where,
                                 const char *what, size_t n, size_t d,
                                 pflref_error *err)
{
    const size_t limit = pflref_data_limit_bytes();
    if (bytes == SIZE_MAX)
        return pflref_error_set(err, PFLREF_ENOMEM, where,
                                "%s of n·d = %zu·%zu doubles overflows size_t",
                                what, n, d);
    if (bytes > limit)
        return pflref_error_set(err, PFLREF_ENOMEM, where,
                                "%s of n·d = %zu·%zu doubles (%.3g GiB) "
                                "exceeds this machine's memory (%.3g GiB)",
                                what, n, d, (double)bytes / 1073741824.0,
                                (double)limit / 1073741824.0);
    return PFLREF_OK;
}

/* Allocate D's zeroed arrays for n samples of m and set D->n = n:
 * X (n·d) and y (n) for data models (n = 0: none), a and c (d each) for the
 * quadratic model.  D's previous arrays are not freed.
 *   D [out];  m [in] an initialised model;  n [in];  err [out] may be NULL
 * Returns PFLREF_EINVAL for a NULL argument, PFLREF_ENOMEM (where "n", or
 * "d" for the quadratic model) when the bytes overflow size_t or exceed the
 * machine's memory (pflref_data_limit_bytes), or when calloc fails; D is
 * then left empty. */
pflref_status pflref_data_alloc(pflref_data *D, const pflref_model *m,
                                size_t n, pflref_error *err)
{
    /* Test the input parameters. */
    pflref_status st;
    if ((st = pflref_arg_nonnull(err, "D", D)) ||
        (st = pflref_arg_nonnull(err, "m", m)))
        return st;
    if (m->d < 1)
        return pflref_error_set(err, PFLREF_EINVAL, "m",
                                "the model is not initialised (d = 0)");
    *D = (pflref_data){.n = 0};

    int ok;
    if (m->kind == PFLREF_MODEL_QUADRATIC) {
        /* a and c, d entries each; n is only an aggregation weight. */
        if ((st = check_bytes(sat_doubles(m->d, 2), "d", "the curvatures "
                              "and centres", 2, m->d, err)))
            return st;
        D->a = calloc(m->d, sizeof(double));
        D->c = calloc(m->d, sizeof(double));
        ok = D->a != NULL && D->c != NULL;
    } else {
        /* X (n × d) and y (n); n = 0 gives an empty data set (a client
         * without test data). */
        if ((st = check_bytes(sat_add(sat_doubles(n, m->d),
                                      sat_doubles(n, 1)),
                              "n", "a data set", n, m->d, err)))
            return st;
        if (n > 0) {
            D->X = calloc(n * m->d, sizeof(double));
            D->y = calloc(n, sizeof(double));
        }
        ok = n == 0 || (D->X != NULL && D->y != NULL);
    }
    if (!ok) {
        data_free(D, 0, 0);
        return pflref_error_set(err, PFLREF_ENOMEM, NULL,
                                "out of memory for the data of %zu samples "
                                "(d = %zu)",
                                n, m->d);
    }
    D->n = n;
    return PFLREF_OK;
}

/* ------------------------------------------------------------------------
 * Validation
 * ------------------------------------------------------------------------ */

/* "<where>.<field>" (or "<field>" when where is empty) into buf, the field
 * formatted from fmt. */
static const char *path(char *buf, size_t len, const char *where,
                        const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static const char *path(char *buf, size_t len, const char *where,
                        const char *fmt, ...)
{
    char field[64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(field, sizeof field, fmt, ap);
    va_end(ap);
    snprintf(buf, len, "%s%s%s", where, where[0] != '\0' ? "." : "", field);
    return buf;
}

/* The quadratic model's data (d entries): a and c present, a_j finite and
 * > 0, c_j finite. */
static pflref_status validate_quadratic(const pflref_data *D, size_t d,
                                        const char *where, pflref_error *err)
{
    char p[PFLREF_WHERE_MAX];
    const char *missing = D->a == NULL ? "a" : D->c == NULL ? "c" : NULL;
    if (missing != NULL)
        return pflref_error_set(err, PFLREF_EINVAL,
                                path(p, sizeof p, where, "%s", missing),
                                "quadratic data without %s (%zu entries)",
                                missing, d);
    for (size_t j = 0; j < d; j++) {
        if (!(isfinite(D->a[j]) && D->a[j] > 0.0))
            return pflref_error_set(err, PFLREF_EINVAL,
                                    path(p, sizeof p, where, "a[%zu]", j),
                                    "a_j = %g: the curvatures a_j must be "
                                    "finite and > 0",
                                    D->a[j]);
        if (!isfinite(D->c[j]))
            return pflref_error_set(err, PFLREF_EINVAL,
                                    path(p, sizeof p, where, "c[%zu]", j),
                                    "c_j = %g is not finite", D->c[j]);
    }
    return PFLREF_OK;
}

/* A data model's samples: n·d doubles within memory (no data set larger
 * than the machine's memory can exist, so a larger n is a corrupt record
 * and is refused before X is read), X and y present, every x_ij finite,
 * every label finite and, for a classifier, a class in [0, k). */
static pflref_status validate_samples(const pflref_model *m,
                                      const pflref_data *D,
                                      const char *where, pflref_error *err)
{
    char p[PFLREF_WHERE_MAX];
    const size_t n = D->n, d = m->d;
    pflref_status st = PFLREF_OK;
    if (sat_doubles(n, d) == SIZE_MAX ||
        sat_doubles(n, d) > pflref_data_limit_bytes())
        st = check_bytes(sat_doubles(n, d), path(p, sizeof p, where, "X"),
                         "the features X", n, d, err);
    if (st != PFLREF_OK)
        return st;
    if (D->X == NULL)
        return pflref_error_set(err, PFLREF_EINVAL,
                                path(p, sizeof p, where, "X"),
                                "no features X (%zu × %zu)", n, d);
    if (D->y == NULL)
        return pflref_error_set(err, PFLREF_EINVAL,
                                path(p, sizeof p, where, "y"),
                                "no labels y (%zu)", n);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < d; j++)
            if (!isfinite(D->X[i * d + j]))
                return pflref_error_set(
                    err, PFLREF_EINVAL,
                    path(p, sizeof p, where, "X[%zu][%zu]", i, j),
                    "feature %g is not finite", D->X[i * d + j]);
    const int classifier = pflref_model_is_classifier(m);
    for (size_t i = 0; i < n; i++) {
        const double y = D->y[i];
        if (!isfinite(y))
            return pflref_error_set(err, PFLREF_EINVAL,
                                    path(p, sizeof p, where, "y[%zu]", i),
                                    "label %g is not finite", y);
        if (classifier && !pflref_label_is_class(m, y))
            return pflref_error_set(err, PFLREF_EINVAL,
                                    path(p, sizeof p, where, "y[%zu]", i),
                                    "label %g is not an integer class in "
                                    "[0, %zu)",
                                    y, m->k);
    }
    return PFLREF_OK;
}

/* Check that D fits m (sizes, finite values, labels, a_j > 0).
 *   m [in];  D [in];  where [in] JSON path prefix ("clients[2].train"),
 *   NULL or "" for none;  err [out] may be NULL; err->where is the path of
 *   the first failure ("clients[2].train.X[3][1]").
 * Returns PFLREF_EINVAL, or PFLREF_ENOMEM when n·d doubles exceed the
 * machine's memory. */
pflref_status pflref_data_validate(const pflref_model *m, const pflref_data *D,
                                   const char *where, pflref_error *err)
{
    if (where == NULL)
        where = "";
    pflref_status st = pflref_arg_nonnull(err, "m", m);
    if (st != PFLREF_OK)
        return st;
    if (D == NULL)
        return pflref_error_set(err, PFLREF_EINVAL,
                                where[0] != '\0' ? where : "D", "no data");
    if (D->n < 1) {
        char p[PFLREF_WHERE_MAX];
        return pflref_error_set(err, PFLREF_EINVAL,
                                path(p, sizeof p, where, "n"),
                                "n = 0: a data set needs at least one sample");
    }
    if (m->kind == PFLREF_MODEL_QUADRATIC)
        return validate_quadratic(D, m->d, where, err);
    return validate_samples(m, D, where, err);
}

/* Client i's test (part PART_TEST) or validation data (PART_VAL): present
 * exactly when client 0 has it, and then valid ("clients[i].test",
 * "clients[i].val"). */
static pflref_status validate_optional(const pflref_problem *p, size_t i,
                                       data_part part, pflref_error *err)
{
    static const struct {
        const char *field;   /* the path's last part            */
        const char *noun;    /* what client 0 has or has not    */
        const char *some;    /* what client i has when 0 has none */
        const char *every;   /* what every client must have     */
    } text[] = {
        [PART_TEST] = {"test", "test data", "has some", "has test data"},
        [PART_VAL] = {"val", "a validation split", "has one", "has one"},
    };
    char where[64];
    const pflref_data *D = part_of(&p->clients[i], part);
    const int first = part_of(&p->clients[0], part)->n > 0;
    snprintf(where, sizeof where, "clients[%zu].%s", i, text[part].field);
    if ((D->n > 0) != first)
        return pflref_error_set(
            err, PFLREF_EINVAL, where,
            "clients[0] %s %s and clients[%zu] %s: either every client %s "
            "or none",
            first ? "has" : "has no", text[part].noun, i,
            first ? "has none" : text[part].some, text[part].every);
    if (D->n > 0)
        return pflref_data_validate(&p->model, D, where, err);
    return PFLREF_OK;
}

/* Validate p: N ≥ 1, every client's train data ("clients[i].train"), test
 * data all-or-none and valid ("clients[i].test"), the validation split
 * all-or-none and valid ("clients[i].val"); test and validation data are
 * ignored for the quadratic model.
 *   p [in];  err [out] may be NULL; err->where is the JSON path. */
pflref_status pflref_problem_validate(const pflref_problem *p,
                                      pflref_error *err)
{
    char where[64];
    if (p == NULL)
        return pflref_error_set(err, PFLREF_EINVAL, "problem",
                                "problem is NULL");
    if (p->model.P < 1)
        return pflref_error_set(err, PFLREF_EINVAL, "model",
                                "the model is not initialised (P = 0)");
    if (p->N < 1 || p->clients == NULL)
        return pflref_error_set(err, PFLREF_EINVAL, "clients",
                                "a problem needs at least one client");

    const int uses_test = p->model.kind != PFLREF_MODEL_QUADRATIC;
    for (size_t i = 0; i < p->N; i++) {
        snprintf(where, sizeof where, "clients[%zu].train", i);
        pflref_status st = pflref_data_validate(&p->model,
                                                &p->clients[i].train, where,
                                                err);
        if (st == PFLREF_OK && uses_test)
            st = validate_optional(p, i, PART_TEST, err);
        if (st == PFLREF_OK && uses_test)
            st = validate_optional(p, i, PART_VAL, err);
        if (st != PFLREF_OK)
            return st;
    }
    return PFLREF_OK;
}

/* ------------------------------------------------------------------------
 * Sizes
 * ------------------------------------------------------------------------ */

/* max over clients of train.n, test.n and val.n, at least 1 (p may be
 * NULL). */
size_t pflref_problem_max_n(const pflref_problem *p)
{
    size_t n = 1;
    if (p == NULL || p->clients == NULL)
        return n;
    for (size_t i = 0; i < p->N; i++)
        for (data_part part = PART_TRAIN; part <= PART_VAL; part++)
            if (part_of(&p->clients[i], part)->n > n)
                n = part_of(&p->clients[i], part)->n;
    return n;
}

/* 1 when the model is not quadratic and every client has data of `part`
 * (n ≥ 1). */
static int every_client_has(const pflref_problem *p, data_part part)
{
    if (p == NULL || p->clients == NULL || p->N < 1 ||
        p->model.kind == PFLREF_MODEL_QUADRATIC)
        return 0;
    for (size_t i = 0; i < p->N; i++)
        if (part_of(&p->clients[i], part)->n == 0)
            return 0;
    return 1;
}

int pflref_problem_has_test(const pflref_problem *p)
{
    return every_client_has(p, PART_TEST);
}

int pflref_problem_has_val(const pflref_problem *p)
{
    return every_client_has(p, PART_VAL);
}
