/* ref/problem.c: a federated problem (one model, N clients' train, test
 * and validation data): allocation, release and validation.
 *
 * The generators declared in pflref/problem.h live in ref/generate.c.
 *
 * Ownership: a pflref_problem owns its clients array and every X, y, a and
 * c array of every client's train, test and validation data;
 * pflref_problem_free releases them all.  Test data is all-or-none: either
 * every client has test.n ≥ 1 or every client has test.n = 0; so is the
 * validation split (val.n).  The quadratic model ignores both.
 */
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include "pflref/problem.h"

/* A problem for model m (copied) with N zeroed clients.
 *   m [in];  N [in] clients (0 allowed: validation rejects it)
 * Returns NULL when m is NULL, N·sizeof(client) overflows, or memory is
 * short.  Free with pflref_problem_free. */
pflref_problem *pflref_problem_alloc(const pflref_model *m, size_t N)
{
    if (m == NULL || N > SIZE_MAX / sizeof(pflref_client))
        return NULL;
    pflref_problem *p = calloc(1, sizeof *p);
    if (p == NULL)
        return NULL;
    p->model = *m;
    p->N = N;
    if (N == 0) /* an empty problem: pflref_problem_validate rejects it */
        return p;
    p->clients = calloc(N, sizeof *p->clients);
    if (p->clients == NULL) {
        free(p);
        return NULL;
    }
    return p;
}

/* Free D's arrays and zero D. */
static void data_free(pflref_data *D)
{
    free(D->X);
    free(D->y);
    free(D->a);
    free(D->c);
    D->X = D->y = D->a = D->c = NULL;
    D->n = 0;
}

/* Free p, its clients and every X, y, a, c they hold.  p may be NULL. */
void pflref_problem_free(pflref_problem *p)
{
    if (p == NULL)
        return;
    if (p->clients != NULL)
        for (size_t i = 0; i < p->N; i++) {
            data_free(&p->clients[i].train);
            data_free(&p->clients[i].test);
            data_free(&p->clients[i].val);
        }
    free(p->clients);
    free(p);
}

/* Allocate D's zeroed arrays for n samples of m and set D->n = n:
 * X (n·d) and y (n) for data models (n = 0: none), a and c (d each) for the
 * quadratic model.  D's previous arrays are not freed.
 *   D [out];  m [in] an initialised model;  n [in];  err [out] may be NULL
 * Returns PFLREF_EINVAL for a NULL argument, PFLREF_ENOMEM (where "n") when
 * n·d overflows or exceeds PFLREF_MAX_DATA, or when calloc fails; D is then
 * left empty. */
pflref_status pflref_data_alloc(pflref_data *D, const pflref_model *m,
                                size_t n, pflref_error *err)
{
    /* Test the input parameters. */
    if (D == NULL)
        return pflref_error_set(err, PFLREF_EINVAL, "D", "D is NULL");
    if (m == NULL)
        return pflref_error_set(err, PFLREF_EINVAL, "m", "m is NULL");
    if (m->d < 1)
        return pflref_error_set(err, PFLREF_EINVAL, "m",
                                "the model is not initialised (d = 0)");
    D->n = 0;
    D->X = D->y = D->a = D->c = NULL;

    int ok;
    if (m->kind == PFLREF_MODEL_QUADRATIC) {
        /* a and c, d entries each; n is only an aggregation weight. */
        if (m->d > PFLREF_MAX_DATA)
            return pflref_error_set(err, PFLREF_ENOMEM, "d",
                                    "d = %zu exceeds PFLREF_MAX_DATA = %zu",
                                    m->d, PFLREF_MAX_DATA);
        D->a = calloc(m->d, sizeof(double));
        D->c = calloc(m->d, sizeof(double));
        ok = D->a != NULL && D->c != NULL;
    } else {
        /* X (n × d) and y (n); n = 0 gives an empty data set (a client
         * without test data). */
        if (n > SIZE_MAX / m->d)
            return pflref_error_set(err, PFLREF_ENOMEM, "n",
                                    "n·d = %zu·%zu overflows size_t (limit "
                                    "PFLREF_MAX_DATA = %zu doubles)",
                                    n, m->d, PFLREF_MAX_DATA);
        if (n * m->d > PFLREF_MAX_DATA)
            return pflref_error_set(err, PFLREF_ENOMEM, "n",
                                    "n·d = %zu·%zu = %zu doubles exceeds "
                                    "PFLREF_MAX_DATA = %zu",
                                    n, m->d, n * m->d, PFLREF_MAX_DATA);
        if (n > 0) {
            D->X = calloc(n * m->d, sizeof(double));
            D->y = calloc(n, sizeof(double));
        }
        ok = n == 0 || (D->X != NULL && D->y != NULL);
    }
    if (!ok) {
        data_free(D);
        return pflref_error_set(err, PFLREF_ENOMEM, NULL,
                                "out of memory for the data of %zu samples "
                                "(d = %zu)",
                                n, m->d);
    }
    D->n = n;
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
    const int has0 = p->clients[0].test.n > 0;
    const int val0 = p->clients[0].val.n > 0;
    for (size_t i = 0; i < p->N; i++) {
        const pflref_client *c = &p->clients[i];
        snprintf(where, sizeof where, "clients[%zu].train", i);
        pflref_status st = pflref_data_validate(&p->model, &c->train, where,
                                                err);
        if (st != PFLREF_OK)
            return st;
        if (!uses_test)
            continue;
        snprintf(where, sizeof where, "clients[%zu].test", i);
        if ((c->test.n > 0) != has0)
            return pflref_error_set(
                err, PFLREF_EINVAL, where,
                "clients[0] %s test data and clients[%zu] %s: either every "
                "client has test data or none",
                has0 ? "has" : "has no", i, has0 ? "has none" : "has some");
        if (c->test.n > 0) {
            st = pflref_data_validate(&p->model, &c->test, where, err);
            if (st != PFLREF_OK)
                return st;
        }
        snprintf(where, sizeof where, "clients[%zu].val", i);
        if ((c->val.n > 0) != val0)
            return pflref_error_set(
                err, PFLREF_EINVAL, where,
                "clients[0] %s a validation split and clients[%zu] %s: "
                "either every client has one or none",
                val0 ? "has" : "has no", i, val0 ? "has none" : "has one");
        if (c->val.n > 0) {
            st = pflref_data_validate(&p->model, &c->val, where, err);
            if (st != PFLREF_OK)
                return st;
        }
    }
    return PFLREF_OK;
}

/* max over clients of train.n, test.n and val.n, at least 1 (p may be
 * NULL). */
size_t pflref_problem_max_n(const pflref_problem *p)
{
    size_t n = 1;
    if (p == NULL || p->clients == NULL)
        return n;
    for (size_t i = 0; i < p->N; i++) {
        if (p->clients[i].train.n > n)
            n = p->clients[i].train.n;
        if (p->clients[i].test.n > n)
            n = p->clients[i].test.n;
        if (p->clients[i].val.n > n)
            n = p->clients[i].val.n;
    }
    return n;
}

/* 1 when the model is not quadratic and every client has test.n ≥ 1. */
int pflref_problem_has_test(const pflref_problem *p)
{
    if (p == NULL || p->clients == NULL || p->N < 1 ||
        p->model.kind == PFLREF_MODEL_QUADRATIC)
        return 0;
    for (size_t i = 0; i < p->N; i++)
        if (p->clients[i].test.n == 0)
            return 0;
    return 1;
}

/* 1 when the model is not quadratic and every client has val.n ≥ 1. */
int pflref_problem_has_val(const pflref_problem *p)
{
    if (p == NULL || p->clients == NULL || p->N < 1 ||
        p->model.kind == PFLREF_MODEL_QUADRATIC)
        return 0;
    for (size_t i = 0; i < p->N; i++)
        if (p->clients[i].val.n == 0)
            return 0;
    return 1;
}
