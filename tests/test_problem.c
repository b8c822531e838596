/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_problem.c: problems (ref/models/problem.c): allocation and
 * release (leaks show under valgrind and ASan), data allocation and its
 * limits, validation with the JSON path of every failure, the all-or-none
 * rule for test data and for the validation split, max_n, has_test and
 * has_val.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include "pflref/problem.h"
#include "suites.h"

static pflref_model make_model(pflref_model_kind kind, pflref_loss loss,
                               size_t d, size_t k, size_t h, int bias)
{
    pflref_model m;
    pflref_error err;
    ck_assert_msg(pflref_model_init(&m, kind, loss, d, k, h, bias, &err) ==
                      PFLREF_OK,
                  "model_init failed: %s", err.message);
    return m;
}

/* Fill D (allocated for n samples of m) with valid values: X[i][j] =
 * 0.25 i − 0.5 j + 0.125, labels i mod k (classifiers) or 1.5 − i. */
static void fill_valid(const pflref_model *m, pflref_data *D)
{
    if (m->kind == PFLREF_MODEL_QUADRATIC) {
        for (size_t j = 0; j < m->d; j++) {
            D->a[j] = 1.75 + (double)j;
            D->c[j] = -0.5 * (double)j;
        }
        return;
    }
    for (size_t i = 0; i < D->n; i++) {
        for (size_t j = 0; j < m->d; j++)
            D->X[i * m->d + j] = 0.25 * (double)i - 0.5 * (double)j + 0.125;
        D->y[i] = m->kind == PFLREF_MODEL_LINEAR ? 1.5 - (double)i
                                                 : (double)(i % m->k);
    }
}

/* A problem of N clients; client i gets n_train[i] train and n_test[i] test
 * samples, all valid. */
static pflref_problem *make_problem(const pflref_model *m, size_t N,
                                    const size_t *n_train,
                                    const size_t *n_test)
{
    pflref_problem *p = pflref_problem_alloc(m, N);
    ck_assert_ptr_nonnull(p);
    for (size_t i = 0; i < N; i++) {
        pflref_error err;
        ck_assert_msg(pflref_data_alloc(&p->clients[i].train, m, n_train[i],
                                        &err) == PFLREF_OK,
                      "data_alloc train %zu: %s", i, err.message);
        fill_valid(m, &p->clients[i].train);
        if (n_test != NULL && n_test[i] > 0) {
            ck_assert_msg(pflref_data_alloc(&p->clients[i].test, m,
                                            n_test[i], &err) == PFLREF_OK,
                          "data_alloc test %zu: %s", i, err.message);
            fill_valid(m, &p->clients[i].test);
        }
    }
    return p;
}

START_TEST(test_alloc_zeroed)
{
    pflref_model m = make_model(PFLREF_MODEL_SOFTMAX,
                                PFLREF_LOSS_CROSS_ENTROPY, 3, 4, 0, 1);
    pflref_problem *p = pflref_problem_alloc(&m, 5);
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq(p->N, 5);
    ck_assert_msg(p->model.kind == m.kind && p->model.P == m.P &&
                      p->model.nblocks == m.nblocks,
                  "the problem's model is not a copy of m");
    for (size_t i = 0; i < 5; i++)
        ck_assert_msg(p->clients[i].train.n == 0 &&
                          p->clients[i].train.X == NULL &&
                          p->clients[i].test.n == 0 &&
                          p->clients[i].test.y == NULL,
                      "client %zu is not zeroed", i);
    pflref_problem_free(p);
    pflref_problem_free(NULL);
    ck_assert_ptr_null(pflref_problem_alloc(NULL, 3));
    /* N = 0 is representable (validate rejects it) */
    p = pflref_problem_alloc(&m, 0);
    ck_assert_ptr_nonnull(p);
    ck_assert_ptr_null(p->clients);
    pflref_problem_free(p);
    /* a client count whose array size overflows size_t */
    ck_assert_ptr_null(pflref_problem_alloc(&m, SIZE_MAX / 2));
}
END_TEST

/* data_alloc sizes: X n·d and y n zeroed for data models, a and c with d
 * entries for the quadratic model; n = 0 gives an empty data set.  Freed by
 * problem_free (valgrind/ASan see a leak otherwise). */
START_TEST(test_data_alloc)
{
    pflref_model lin = make_model(PFLREF_MODEL_LINEAR, PFLREF_LOSS_SQUARED,
                                  3, 0, 0, 1);
    pflref_model q = make_model(PFLREF_MODEL_QUADRATIC, PFLREF_LOSS_QUADRATIC,
                                4, 0, 0, 0);
    pflref_problem *p = pflref_problem_alloc(&lin, 2);
    pflref_error err;
    ck_assert_int_eq(pflref_data_alloc(&p->clients[0].train, &lin, 5, &err),
                     PFLREF_OK);
    const pflref_data *D = &p->clients[0].train;
    ck_assert_uint_eq(D->n, 5);
    ck_assert_msg(D->X != NULL && D->y != NULL && D->a == NULL &&
                      D->c == NULL, "linear data: want X and y only");
    for (size_t i = 0; i < 15; i++)
        ck_assert_msg(D->X[i] == 0.0, "X[%zu] not zeroed", i);
    D->X[14] = 2.5; /* the last entry of n·d exists (ASan/valgrind) */
    D->y[4] = -1.5;
    ck_assert_int_eq(pflref_data_alloc(&p->clients[0].test, &lin, 0, &err),
                     PFLREF_OK);
    ck_assert_msg(p->clients[0].test.n == 0 && p->clients[0].test.X == NULL,
                  "n = 0 must give an empty data set");
    /* quadratic data in the same problem's second client (freed too) */
    ck_assert_int_eq(pflref_data_alloc(&p->clients[1].train, &q, 7, &err),
                     PFLREF_OK);
    D = &p->clients[1].train;
    ck_assert_msg(D->n == 7 && D->X == NULL && D->y == NULL &&
                      D->a != NULL && D->c != NULL,
                  "quadratic data: want n = 7, a and c only");
    D->a[3] = 1.25;
    D->c[3] = -0.75;
    pflref_problem_free(p);
}
END_TEST

START_TEST(test_data_alloc_errors)
{
    pflref_model lin = make_model(PFLREF_MODEL_LINEAR, PFLREF_LOSS_SQUARED,
                                  4, 0, 0, 0);
    pflref_data D;
    pflref_error err;
    ck_assert_int_eq(pflref_data_alloc(NULL, &lin, 3, &err), PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "D");
    ck_assert_int_eq(pflref_data_alloc(&D, NULL, 3, &err), PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "m");
    pflref_model blank;
    memset(&blank, 0, sizeof blank);
    ck_assert_int_eq(pflref_data_alloc(&D, &blank, 3, &err), PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "m");
    /* 5·n·8 bytes = 5/8 of the address space: beyond any machine's memory
     * (pflref_data_limit_bytes), refused before calloc */
    ck_assert_int_eq(pflref_data_alloc(&D, &lin, SIZE_MAX / 64, &err),
                     PFLREF_ENOMEM);
    ck_assert_str_eq(err.where, "n");
    ck_assert_msg(strstr(err.message, "exceeds this machine's memory") != NULL,
                  "message should name the limit: %s", err.message);
    ck_assert_msg(D.X == NULL && D.y == NULL && D.n == 0,
                  "a failed data_alloc must leave D empty");
    /* n·d overflows size_t */
    ck_assert_int_eq(pflref_data_alloc(&D, &lin, SIZE_MAX / 2, &err),
                     PFLREF_ENOMEM);
    ck_assert_str_eq(err.where, "n");
    ck_assert_msg(strstr(err.message, "overflow") != NULL,
                  "message should say overflow: %s", err.message);
    /* a hand-made quadratic model with d beyond the data limit */
    pflref_model q = make_model(PFLREF_MODEL_QUADRATIC, PFLREF_LOSS_QUADRATIC,
                                2, 0, 0, 0);
    q.d = SIZE_MAX / 32; /* a and c: half the address space */
    ck_assert_int_eq(pflref_data_alloc(&D, &q, 1, &err), PFLREF_ENOMEM);
    ck_assert_str_eq(err.where, "d");
    ck_assert_int_eq(pflref_data_alloc(&D, &lin, 3, NULL), PFLREF_OK);
    free(D.X);
    free(D.y);
}
END_TEST

/* Allocation failure gives PFLREF_ENOMEM and leaves D empty.  The address
 * space of this (forked) test process is capped at its current size plus
 * 256 MiB, so the 2 GiB requests below fail.  Skipped without fork (the cap
 * would outlive the test) and under ASan (which aborts on a failed
 * allocation instead of returning NULL). */
START_TEST(test_alloc_out_of_memory)
{
#if defined(__SANITIZE_ADDRESS__)
    return;
#endif
    const char *fork_env = getenv("CK_FORK");
    if (fork_env != NULL && strcmp(fork_env, "no") == 0)
        return;
    unsigned long pages = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fscanf(f, "%lu", &pages), 1);
    fclose(f);
    const rlim_t cap = (rlim_t)pages * 4096u + ((rlim_t)256 << 20);
    struct rlimit rl = {cap, cap};
    ck_assert_int_eq(setrlimit(RLIMIT_AS, &rl), 0);

    pflref_model lin = make_model(PFLREF_MODEL_LINEAR, PFLREF_LOSS_SQUARED,
                                  4, 0, 0, 0);
    pflref_data D;
    pflref_error err;
    /* n·d = 2^28 doubles = 2 GiB: within memory, beyond the cap */
    ck_assert_int_eq(pflref_data_alloc(&D, &lin, (size_t)1 << 26, &err),
                     PFLREF_ENOMEM);
    ck_assert_msg(strstr(err.message, "out of memory") != NULL,
                  "message: %s", err.message);
    ck_assert_msg(D.n == 0 && D.X == NULL && D.y == NULL,
                  "a failed allocation must leave D empty");
    pflref_model q = make_model(PFLREF_MODEL_QUADRATIC, PFLREF_LOSS_QUADRATIC,
                                2, 0, 0, 0);
    q.d = (size_t)1 << 28; /* a and c: 2 GiB each */
    ck_assert_int_eq(pflref_data_alloc(&D, &q, 1, &err), PFLREF_ENOMEM);
    ck_assert_msg(D.a == NULL && D.c == NULL, "a failed allocation must "
                  "leave D empty");
    /* 2^28 clients of 80 bytes: 20 GiB */
    ck_assert_ptr_null(pflref_problem_alloc(&lin, (size_t)1 << 28));
}
END_TEST

START_TEST(test_validate_ok)
{
    pflref_model sm = make_model(PFLREF_MODEL_SOFTMAX,
                                 PFLREF_LOSS_CROSS_ENTROPY, 2, 3, 0, 0);
    const size_t ntr[3] = {4, 9, 2}, nte[3] = {5, 3, 11};
    pflref_problem *p = make_problem(&sm, 3, ntr, nte);
    pflref_error err;
    ck_assert_msg(pflref_problem_validate(p, &err) == PFLREF_OK,
                  "a valid problem was rejected: %s: %s", err.where,
                  err.message);
    ck_assert_uint_eq(pflref_problem_max_n(p), 11);
    ck_assert_int_eq(pflref_problem_has_test(p), 1);
    pflref_problem_free(p);

    p = make_problem(&sm, 3, ntr, NULL); /* no client has test data */
    ck_assert_int_eq(pflref_problem_validate(p, NULL), PFLREF_OK);
    ck_assert_uint_eq(pflref_problem_max_n(p), 9);
    ck_assert_int_eq(pflref_problem_has_test(p), 0);
    pflref_problem_free(p);
}
END_TEST

/* Quadratic: test data is unused (so never all-or-none), has_test is 0,
 * max_n counts the train n (aggregation weights) and is at least 1. */
START_TEST(test_validate_quadratic)
{
    pflref_model q = make_model(PFLREF_MODEL_QUADRATIC, PFLREF_LOSS_QUADRATIC,
                                3, 0, 0, 0);
    const size_t ntr[2] = {1, 6};
    pflref_problem *p = make_problem(&q, 2, ntr, NULL);
    p->clients[1].test.n = 4; /* ignored for the quadratic model */
    pflref_error err;
    ck_assert_msg(pflref_problem_validate(p, &err) == PFLREF_OK, "%s: %s",
                  err.where, err.message);
    ck_assert_int_eq(pflref_problem_has_test(p), 0);
    p->clients[1].test.n = 0;
    ck_assert_uint_eq(pflref_problem_max_n(p), 6);
    p->clients[1].train.a[2] = 0.0;
    ck_assert_int_eq(pflref_problem_validate(p, &err), PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "clients[1].train.a[2]");
    pflref_problem_free(p);
}
END_TEST

START_TEST(test_validate_errors)
{
    pflref_model lin = make_model(PFLREF_MODEL_LINEAR, PFLREF_LOSS_SQUARED,
                                  2, 0, 0, 1);
    const size_t ntr[4] = {3, 5, 2, 4}, nte[4] = {6, 2, 7, 3};
    pflref_error err;

    ck_assert_int_eq(pflref_problem_validate(NULL, &err), PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "problem");

    pflref_problem *p = pflref_problem_alloc(&lin, 0);
    ck_assert_int_eq(pflref_problem_validate(p, &err), PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "clients");
    pflref_problem_free(p);

    p = make_problem(&lin, 4, ntr, nte);
    p->model.P = 0;
    ck_assert_int_eq(pflref_problem_validate(p, &err), PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "model");
    p->model.P = lin.P;

    /* a bad train value: the path names the client and the entry */
    p->clients[2].train.X[3] = NAN; /* X[1][1] */
    ck_assert_int_eq(pflref_problem_validate(p, &err), PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "clients[2].train.X[1][1]");
    p->clients[2].train.X[3] = 0.5;
    /* a bad test value */
    p->clients[3].test.y[2] = INFINITY;
    ck_assert_int_eq(pflref_problem_validate(p, &err), PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "clients[3].test.y[2]");
    p->clients[3].test.y[2] = 0.5;
    ck_assert_int_eq(pflref_problem_validate(p, &err), PFLREF_OK);
    /* an empty train set */
    p->clients[1].train.n = 0;
    ck_assert_int_eq(pflref_problem_validate(p, &err), PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "clients[1].train.n");
    p->clients[1].train.n = 5;

    /* test data all-or-none: client 2 without test data */
    p->clients[2].test.n = 0;
    ck_assert_int_eq(pflref_problem_validate(p, &err), PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "clients[2].test");
    ck_assert_int_eq(pflref_problem_has_test(p), 0);
    ck_assert_uint_eq(pflref_problem_max_n(p), 6); /* test n 6 of client 0 */
    pflref_problem_free(p);

    /* ... and the other way round: only client 1 has test data */
    const size_t one[4] = {0, 3, 0, 0};
    p = make_problem(&lin, 4, ntr, one);
    ck_assert_int_eq(pflref_problem_validate(p, &err), PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "clients[1].test");
    ck_assert_msg(strstr(err.message, "none") != NULL,
                  "message should state the all-or-none rule: %s",
                  err.message);
    pflref_problem_free(p);
}
END_TEST

START_TEST(test_max_n_has_test_degenerate)
{
    ck_assert_uint_eq(pflref_problem_max_n(NULL), 1);
    ck_assert_int_eq(pflref_problem_has_test(NULL), 0);
    pflref_model lin = make_model(PFLREF_MODEL_LINEAR, PFLREF_LOSS_SQUARED,
                                  2, 0, 0, 0);
    pflref_problem *p = pflref_problem_alloc(&lin, 0);
    ck_assert_uint_eq(pflref_problem_max_n(p), 1);
    ck_assert_int_eq(pflref_problem_has_test(p), 0);
    pflref_problem_free(p);
    p = pflref_problem_alloc(&lin, 2); /* zeroed clients: n = 0 */
    ck_assert_uint_eq(pflref_problem_max_n(p), 1);
    pflref_problem_free(p);
}
END_TEST

/* The validation split (clients[i].val): validated like test data with its
 * own path, all-or-none, counted by max_n, reported by has_val, freed by
 * problem_free (ASan / valgrind see a leak otherwise), ignored for the
 * quadratic model. */
START_TEST(test_validation_split)
{
    pflref_model lin = make_model(PFLREF_MODEL_LINEAR, PFLREF_LOSS_SQUARED,
                                  3, 0, 0, 1);
    const size_t ntr[3] = {4, 2, 3}, nte[3] = {5, 5, 5};
    pflref_problem *p = make_problem(&lin, 3, ntr, nte);
    pflref_error err;
    ck_assert_int_eq(pflref_problem_has_val(p), 0);
    ck_assert_int_eq(pflref_problem_validate(p, &err), PFLREF_OK);
    const size_t nval[3] = {2, 7, 1};
    for (size_t i = 0; i < 3; i++) {
        ck_assert_int_eq(pflref_data_alloc(&p->clients[i].val, &lin, nval[i],
                                           &err), PFLREF_OK);
        fill_valid(&lin, &p->clients[i].val);
    }
    ck_assert_int_eq(pflref_problem_validate(p, &err), PFLREF_OK);
    ck_assert_int_eq(pflref_problem_has_val(p), 1);
    ck_assert_uint_eq(pflref_problem_max_n(p), 7); /* client 1's val */

    /* a bad validation value: the path names the split and the entry */
    p->clients[1].val.y[6] = NAN;
    ck_assert_int_eq(pflref_problem_validate(p, &err), PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "clients[1].val.y[6]");
    p->clients[1].val.y[6] = -0.75;
    p->clients[2].val.X[2] = INFINITY;
    ck_assert_int_eq(pflref_problem_validate(p, &err), PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "clients[2].val.X[0][2]");
    p->clients[2].val.X[2] = 0.375;
    ck_assert_int_eq(pflref_problem_validate(p, &err), PFLREF_OK);

    /* all-or-none: client 2 without a validation split */
    p->clients[2].val.n = 0;
    ck_assert_int_eq(pflref_problem_validate(p, &err), PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "clients[2].val");
    ck_assert_msg(strstr(err.message, "none") != NULL,
                  "message should state the all-or-none rule: %s",
                  err.message);
    ck_assert_int_eq(pflref_problem_has_val(p), 0);
    p->clients[2].val.n = 1;
    /* ... and only client 1 with one */
    p->clients[0].val.n = 0;
    ck_assert_int_eq(pflref_problem_validate(p, &err), PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "clients[1].val");
    p->clients[0].val.n = 2;
    pflref_problem_free(p);

    /* the quadratic model ignores a validation split */
    pflref_model quad = make_model(PFLREF_MODEL_QUADRATIC,
                                   PFLREF_LOSS_QUADRATIC, 2, 0, 0, 0);
    const size_t one[2] = {1, 1};
    p = make_problem(&quad, 2, one, NULL);
    p->clients[1].val.n = 3;
    ck_assert_int_eq(pflref_problem_validate(p, &err), PFLREF_OK);
    ck_assert_int_eq(pflref_problem_has_val(p), 0);
    p->clients[1].val.n = 0;
    pflref_problem_free(p);
    ck_assert_int_eq(pflref_problem_has_val(NULL), 0);
}
END_TEST

Suite *problem_suite(void)
{
    Suite *s = suite_create("problem");
    TCase *tc = tcase_create("alloc");
    tcase_add_test(tc, test_alloc_zeroed);
    tcase_add_test(tc, test_data_alloc);
    tcase_add_test(tc, test_data_alloc_errors);
    tcase_add_test(tc, test_alloc_out_of_memory);
    suite_add_tcase(s, tc);
    tc = tcase_create("validate");
    tcase_add_test(tc, test_validate_ok);
    tcase_add_test(tc, test_validate_quadratic);
    tcase_add_test(tc, test_validate_errors);
    tcase_add_test(tc, test_max_n_has_test_degenerate);
    tcase_add_test(tc, test_validation_split);
    suite_add_tcase(s, tc);
    return s;
}
