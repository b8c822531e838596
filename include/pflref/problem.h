/* SPDX-License-Identifier: GPL-3.0-or-later */
/* pflref/problem.h: a federated problem (a model and N clients' data) and
 * the documented generators that draw one with GSL.
 */
#ifndef PFLREF_PROBLEM_H
#define PFLREF_PROBLEM_H

#include <stddef.h>
#include "status.h"
#include "model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    pflref_data train;   /* n ≥ 1 */
    pflref_data test;    /* test.n = 0 when the client has no test data;
                            unused by the quadratic model                */
    pflref_data val;     /* the validation split (spec keys X_val, y_val):
                            val.n = 0 when the client has none; unused by
                            the quadratic model; read only by algorithms
                            that select on it (interp)                   */
} pflref_client;

typedef struct {
    pflref_model model;
    size_t N;
    pflref_client *clients;   /* N, owned by the problem */
} pflref_problem;

/* A problem for model m with N zeroed clients; NULL when memory is short. */
pflref_problem *pflref_problem_alloc(const pflref_model *m, size_t N);

/* Frees the problem and every array its clients own.  NULL is allowed. */
void pflref_problem_free(pflref_problem *p);

/* Allocate D's arrays for n samples of model m: X (n·d) and y (n) for data
 * models, a and c (d each) for the quadratic model.  Sets D->n = n.
 * PFLREF_ENOMEM when n·d exceeds PFLREF_MAX_DATA or malloc fails. */
pflref_status pflref_data_alloc(pflref_data *D, const pflref_model *m,
                                size_t n, pflref_error *err);

/* Validate every client (pflref_data_validate with path "clients[i].train" /
 * "clients[i].test" / "clients[i].val"); N ≥ 1; either every client has
 * test data or none, and either every client has a validation split or
 * none. */
pflref_status pflref_problem_validate(const pflref_problem *p,
                                      pflref_error *err);

/* Largest train, test or validation sample count over the clients (≥ 1). */
size_t pflref_problem_max_n(const pflref_problem *p);

/* 1 when every client has test data (and the model is not quadratic). */
int pflref_problem_has_test(const pflref_problem *p);

/* 1 when every client has a validation split (and the model is not
 * quadratic). */
int pflref_problem_has_val(const pflref_problem *p);

/* Generator "tilt": the seed 000 problem, "a common backbone plus a
 * per-client tilt" (Code 14.7.1), drawn with GSL's mt19937 and
 * gsl_ran_gaussian (so with other numbers than the seed's numpy run; the
 * seed's own data ships in golden/seed000/).  Draw order:
 *   common_j = common_sd · N(0,1), j = 0..d−1
 *   for k = 0..K−1:  train X (n_train × d, row-major), then n_train noises
 *   for k = 0..K−1:  test  X (n_test × d), then n_test noises
 *   w_k = common + offset_k, offset_k[k mod d] = +tilt (k even) or −tilt (k odd)
 *   y = X w_k + noise_sd · N(0,1)
 * The model must be linear with no bias and dimension d. */
typedef struct {
    size_t K;            /* clients                      6    */
    size_t n_train;      /* train samples per client     14   */
    size_t n_test;       /* test samples per client      400  */
    double common_sd;    /* scale of the common backbone 2.0  */
    double tilt;         /* size of the per-client tilt  1.5  */
    double noise_sd;     /* label noise                  1.0  */
    unsigned long seed;  /* mt19937 seed ≥ 1                  */
} pflref_gen_tilt;

/* Generator "dirichlet": the seed 001 label-skew classification problem.
 * Draw order (GSL mt19937, one generator seeded with `seed`):
 *   for i = 0..K−1: p_i ~ Dirichlet(alpha·1_k)        (gsl_ran_dirichlet)
 *   for i = 0..K−1:
 *     n_i = n_min + gsl_rng_uniform_int(n_max − n_min)     (n_max exclusive)
 *     for the n_i train samples, then the n_test test samples, one by one:
 *       label ~ p_i (gsl_ran_discrete on p_i), then d features N(0,1),
 *       then x[label mod d] += shift
 * The model must be softmax or mlp with input dimension d and k classes. */
typedef struct {
    size_t K;            /* clients                         30   */
    double alpha;        /* Dirichlet concentration          0.1  */
    size_t n_min;        /* train samples drawn in [n_min, n_max)  50 */
    size_t n_max;        /*                                  200  */
    size_t n_test;       /* test samples per client          50   */
    double shift;        /* feature shift at label mod d     2.0  */
    unsigned long seed;  /* mt19937 seed ≥ 1                      */
} pflref_gen_dirichlet;

pflref_status pflref_generate_tilt(const pflref_gen_tilt *cfg,
                                   const pflref_model *m,
                                   pflref_problem **out, pflref_error *err);
pflref_status pflref_generate_dirichlet(const pflref_gen_dirichlet *cfg,
                                        const pflref_model *m,
                                        pflref_problem **out,
                                        pflref_error *err);

#ifdef __cplusplus
}
#endif
#endif
