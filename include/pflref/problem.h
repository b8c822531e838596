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
    unsigned borrowed;   /* PFLREF_BORROWED_* bits: the arrays that point
                            into memory the problem holds (pflref_held)
                            instead of arrays it allocated; 0 for data
                            read from JSON or drawn by a generator       */
} pflref_client;

/* pflref_client.borrowed: which of a client's arrays are borrowed. */
enum {
    PFLREF_BORROWED_TRAIN_X = 1u << 0,
    PFLREF_BORROWED_TRAIN_Y = 1u << 1,
    PFLREF_BORROWED_TEST_X = 1u << 2,
    PFLREF_BORROWED_TEST_Y = 1u << 3,
    PFLREF_BORROWED_VAL_X = 1u << 4,
    PFLREF_BORROWED_VAL_Y = 1u << 5
};

/* Memory a problem holds without having allocated it: a read-only mapping
 * of a .npy file whose '<f8' data a client's X or y uses in place.  The
 * problem releases it, once, through `release` (e.g. munmap). */
typedef struct {
    void *addr;
    size_t len;                               /* bytes                  */
    void (*release)(void *addr, size_t len);
} pflref_held;

typedef struct {
    pflref_model model;
    size_t N;
    pflref_client *clients;   /* N, owned by the problem                 */
    pflref_held *held;        /* n_held mappings the clients' borrowed
                                 arrays point into, released with the
                                 problem; NULL when none                 */
    size_t n_held;
} pflref_problem;

/* A problem for model m with N zeroed clients; NULL when memory is short. */
pflref_problem *pflref_problem_alloc(const pflref_model *m, size_t N);

/* Frees the problem, every array its clients own (not the borrowed ones)
 * and every held mapping.  NULL is allowed. */
void pflref_problem_free(pflref_problem *p);

/* Hand p the memory [addr, addr + len) to release with `release` when p is
 * freed.  Ownership passes in every case: when the list cannot grow,
 * release(addr, len) runs at once and PFLREF_ENOMEM is returned (so the
 * caller must not have pointed a client's array into it yet). */
pflref_status pflref_problem_hold(pflref_problem *p, void *addr, size_t len,
                                  void (*release)(void *addr, size_t len),
                                  pflref_error *err);

/* Bytes of data the problem allocated itself (X, y, a, c of every client
 * that are not borrowed, and the clients array): what the problem adds to
 * the process's heap.  Saturates at SIZE_MAX; 0 for NULL. */
size_t pflref_problem_bytes_owned(const pflref_problem *p);

/* Bytes of the file mappings the problem holds (pflref_problem_hold):
 * memory the kernel pages in from the files on demand and may drop again
 * (page cache), not heap.  Saturates at SIZE_MAX; 0 for NULL. */
size_t pflref_problem_bytes_mapped(const pflref_problem *p);

/* The most bytes of data a problem may allocate or map: this machine's
 * physical memory (sysconf: _SC_PHYS_PAGES × _SC_PAGESIZE), or the byte
 * count PFLREF_MEMORY_LIMIT pins when that is less (a malformed value
 * lowers nothing here: pflref_memory_available refuses it), or SIZE_MAX
 * when neither says.  Data beyond it is refused up front with
 * PFLREF_ENOMEM and the sizes, instead of thrashing or being killed. */
size_t pflref_data_limit_bytes(void);

/* Allocate D's arrays for n samples of model m: X (n·d) and y (n) for data
 * models, a and c (d each) for the quadratic model.  Sets D->n = n.
 * PFLREF_ENOMEM (naming the sizes) when the byte count overflows size_t,
 * exceeds this machine's physical memory, or calloc fails. */
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
