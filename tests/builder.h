/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/builder.h: the inputs of pflref_run built in C, for the algorithm
 * tests.
 *
 * An algorithm test builds its problem (a model and each client's train,
 * test and validation arrays), its hyperparameters (pflref_hyper from
 * pflref_hyper_defaults, then fields set in C), its schedule (given rounds
 * and minibatch index lists, or the generated one) and w⁰ here, and runs an
 * algorithm by name through the C API.  No JSON is involved, so a fault of
 * the spec reader (tested on its own in tests/test_spec.c and
 * tests/test_io.c) cannot show up as an algorithm failure.
 *
 *   tb_case *c = tb_quadratic(1, 2);                 d = 1, N = 2
 *   tb_quad(c, 0, (const double[]){1}, (const double[]){4}, 1);
 *   tb_quad(c, 1, (const double[]){1}, (const double[]){-2}, 1);
 *   c->hyper.eta = 0.5;
 *   c->hyper.lambda = 1.0;
 *   tb_round(c, "0 1", "0 | 0", "0 | 0");            two steps each
 *   pflref_run_result *res = tb_run(c, "ditto", NULL);
 *   ...
 *   pflref_run_result_free(res);
 *   tb_free(c);
 *
 * Batch lists are written as strings: steps separated by '|', the sample
 * indices of a step by spaces or commas ("0 1 | 2" is two steps, {0, 1}
 * then {2}; "" is no step).  Client lists likewise ("0 2").
 *
 * Every builder function fails the running Check test with a message
 * naming what was wrong (a bad index string, a client out of range, an
 * invalid problem); the run functions fail it on an unexpected status,
 * naming the algorithm, the status, where and the library's message.
 * tb_free releases everything a case holds; results are freed with
 * pflref_run_result_free and trajectories with pflref_trajectory_free.
 */
#ifndef PFLREF_TESTS_BUILDER_H
#define PFLREF_TESTS_BUILDER_H

#include <stddef.h>
#include "pflref/algorithm.h"
#include "pflref/sampler.h"

/* Given rounds a case can hold (the algorithm tests use a few). */
#define TB_MAX_ROUNDS 16

typedef struct {
    pflref_problem *problem;   /* the model and N clients (owned)          */
    pflref_hyper hyper;        /* pflref_hyper_defaults, then set in C     */
    double *w0;                /* P initial parameters: zeros until tb_w0  */
    pflref_schedule *schedule; /* the given schedule (owned), or NULL: the
                                  generated one, drawn at each run         */
    pflref_schedule_config cfg;/* the generated schedule (has_cfg)         */
    int has_cfg;
    int post_given;            /* tb_post was called                       */
    int sealed;                /* the given schedule is complete           */
} tb_case;

/* A model that must be valid (pflref_model_init, pflref_model_init_mlp). */
pflref_model tb_model(pflref_model_kind kind, pflref_loss loss, size_t d,
                      size_t k, size_t h, int bias);
pflref_model tb_mlp(pflref_loss loss, size_t d, size_t k, size_t h,
                    pflref_activation act, int hidden_bias, int bias);

/* A case for model m with N clients, no data yet, default hyperparameters
 * and w⁰ = 0.  Free with tb_free. */
tb_case *tb_new(const pflref_model *m, size_t N);
/* The same for the quadratic model of dimension d. */
tb_case *tb_quadratic(size_t d, size_t N);
void tb_free(tb_case *c);

/* Client i of the quadratic model: f_i(w) = ½ Σ_j a_j (w_j − c_j)², a and
 * cc of d entries each, n its sample count (the aggregation weight). */
void tb_quad(tb_case *c, size_t i, const double *a, const double *cc,
             size_t n);
/* Client i's training, test and validation data of a data model: n
 * samples, X n × d row-major, y n entries (copied). */
void tb_train(tb_case *c, size_t i, size_t n, const double *X,
              const double *y);
void tb_test(tb_case *c, size_t i, size_t n, const double *X,
             const double *y);
void tb_val(tb_case *c, size_t i, size_t n, const double *X,
            const double *y);

/* w⁰ := the P values of w0. */
void tb_w0(tb_case *c, const double *w0);
/* hyper.split := the personal blocks or groups named in `names`, separated
 * by spaces ("b", "head", "W1 b1"); "" shares everything. */
void tb_split(tb_case *c, const char *names);
/* Apply algorithm alg's preset `name` to hyper, with the split it implies
 * (a later tb_split overrides that split; later fields override its
 * settings). */
void tb_preset(tb_case *c, const char *alg, const char *name);

/* The generated schedule as a spec's defaults give it: T rounds of every
 * client, each taking `steps` minibatch steps of size B (0: the full
 * batch) from one split of its samples in index order (split_once);
 * client and batch seeds 1, the GSL sampler.  Whether all clients train
 * while a sampled subset is aggregated follows the algorithm run (its
 * train_all), and the schedule is drawn anew at every run. */
void tb_generate(tb_case *c, size_t T, size_t steps, size_t B);
/* With it, a post-training phase of `steps` steps of size B per client. */
void tb_generate_post(tb_case *c, size_t steps, size_t B);
/* Any generated schedule (cfg copied; train_all is set per algorithm). */
void tb_generate_config(tb_case *c, const pflref_schedule_config *cfg);

/* A given round (appended): the participants `clients` ("0 2"), then one
 * batch list per participant, in the order of `clients`.  Every
 * participant is aggregated. */
void tb_round(tb_case *c, const char *clients, ...);
/* A given round in which only `selected` (a subset of clients) is
 * aggregated. */
void tb_round_selected(tb_case *c, const char *clients, const char *selected,
                       ...);
/* The given post-training phase: one batch list per client, N in all.  A
 * given schedule may consist of the post phase alone (zero rounds). */
void tb_post(tb_case *c, ...);

/* The schedule a run of `alg` would use, kept by the case from now on
 * (a generated one is drawn here, so the test may edit it). */
pflref_schedule *tb_schedule(tb_case *c, const char *alg);

/* Run algorithm `alg` (by registry name) on the case; the run must succeed.
 * trace may be NULL.  Free the result with pflref_run_result_free. */
pflref_run_result *tb_run(tb_case *c, const char *alg,
                          const pflref_trace *trace);
/* The same, recording every event (PFLREF_RECORD_STEP) into *tj, which is
 * initialised here (free it with pflref_trajectory_free). */
pflref_run_result *tb_run_recorded(tb_case *c, const char *alg,
                                   pflref_trajectory *tj);
/* Run `alg`, which must fail with `expected` and hand back no result; *err
 * gets the error. */
void tb_run_error(tb_case *c, const char *alg, pflref_status expected,
                  pflref_error *err);

#endif
