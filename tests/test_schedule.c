/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_schedule.c: schedule generation, validation and memory
 * (ref/sampling/schedule.c, ref/sampling/schedule_check.c).
 *
 * Expected layouts are derived by hand from the generation rules of
 * include/pflref/schedule.h, with the random parts taken from recorded
 * values that do not come from pflref:
 *   - client sets: the sampling notes (§3.1, §3.2) and
 *     golden/sampling/numpy_choice.txt (lines `gsl_choose SEED 10 3`);
 *     numpy 1.24.2 RandomState(43).choice(10, 3, replace=False) = [3 9 6]
 *     and RandomState(44).choice(10, 3, replace=False) = [2 7 9];
 *   - epoch permutations: golden/sampling/numpy_choice.txt lines
 *     `gsl_shuffle SEED 5` and `gsl_shuffle SEED 10` (GSL's gsl_ran_shuffle
 *     replayed on numpy's raw mt19937 stream).
 */
#include <stdlib.h>
#include <string.h>
#include <check.h>
#include "pflref/schedule.h"
#include "suites.h"

#define LIMIT PFLREF_SCHEDULE_MAX_INDICES   /* the schedule's size limit */

/* Recorded gsl_ran_shuffle outputs of 0..n−1 (golden/sampling). */
static const size_t SHUF5_40[] = {1, 3, 0, 4, 2};
static const size_t SHUF5_41[] = {4, 3, 0, 2, 1};
static const size_t SHUF5_42[] = {4, 0, 2, 3, 1};
static const size_t SHUF5_43[] = {2, 4, 3, 1, 0};
static const size_t SHUF5_44[] = {3, 2, 0, 1, 4};
static const size_t SHUF5_46[] = {0, 2, 4, 1, 3};
static const size_t SHUF10_42[] = {5, 0, 6, 2, 9, 4, 1, 8, 7, 3};
static const size_t SHUF10_43[] = {9, 2, 3, 7, 5, 6, 0, 8, 4, 1};
static const size_t SHUF10_45[] = {5, 3, 6, 0, 8, 1, 7, 4, 2, 9};
static const size_t SHUF10_47[] = {0, 2, 3, 9, 5, 4, 6, 8, 7, 1};

/* One round, one client, one full pass, GSL sampler, split_once. */
static pflref_schedule_config base_cfg(void)
{
    pflref_schedule_config c;
    memset(&c, 0, sizeof c);
    c.T = 1;
    c.m = 1;
    c.sampler = PFLREF_SAMPLER_GSL;
    c.client_seed = 1;
    c.order = PFLREF_BATCH_SPLIT_ONCE;
    c.batch_seed = 1;
    c.train.epochs = 1;
    c.train.B = 0;
    c.has_post = 0;
    return c;
}

static pflref_schedule *generate_ok(const pflref_schedule_config *cfg,
                                    const size_t *n, size_t N)
{
    pflref_schedule *s = NULL;
    pflref_error err;
    pflref_status st = pflref_schedule_generate(cfg, n, N, &s, &err);
    ck_assert_msg(st == PFLREF_OK, "generate failed: %s: %s", err.where,
                  err.message);
    ck_assert(s != NULL);
    ck_assert_msg(s->T == cfg->T && s->N == N, "schedule has T = %zu, N = "
                  "%zu; expected %zu, %zu", s->T, s->N, cfg->T, N);
    return s;
}

/* Step s of b holds exactly want[0..len−1], in order. */
static void expect_step(const pflref_batches *b, size_t s, const size_t *want,
                        size_t len, const char *what)
{
    ck_assert_msg(s < b->nsteps, "%s: step %zu missing (%zu steps)", what, s,
                  b->nsteps);
    const size_t lo = b->step_off[s], hi = b->step_off[s + 1];
    ck_assert_msg(hi - lo == len, "%s: step %zu has %zu samples, expected "
                  "%zu", what, s, hi - lo, len);
    for (size_t k = 0; k < len; k++)
        ck_assert_msg(b->idx[lo + k] == want[k], "%s: step %zu sample %zu is "
                      "%zu, expected %zu", what, s, k, b->idx[lo + k],
                      want[k]);
}

static void expect_ids(const size_t *got, const size_t *want, size_t m,
                       const char *what)
{
    for (size_t k = 0; k < m; k++)
        ck_assert_msg(got[k] == want[k], "%s[%zu] = %zu, expected %zu", what,
                      k, got[k], want[k]);
}

/* Expect `call` to fail with `status_` and err.where equal to `where_`. */
#define EXPECT_ERROR(call, status_, where_)                                  \
    do {                                                                     \
        pflref_error err_;                                                   \
        pflref_error_clear(&err_);                                           \
        pflref_error *err = &err_;                                           \
        pflref_status st_ = (call);                                          \
        ck_assert_msg(st_ == (status_), "%s returned %d, expected %d (%s)",  \
                      #call, (int)st_, (int)(status_), err->message);        \
        ck_assert_msg(strcmp(err->where, (where_)) == 0,                     \
                      "%s: where = \"%s\", expected \"%s\"", #call,          \
                      err->where, (where_));                                 \
        ck_assert_msg(err->message[0] != '\0', "%s: empty message", #call);  \
    } while (0)

/* ---------------------------------------------------------------------
 * Layouts by hand
 * ------------------------------------------------------------------- */

START_TEST(test_order_names)
{
    ck_assert_str_eq(pflref_batch_order_name(PFLREF_BATCH_SPLIT_ONCE),
                     "split_once");
    ck_assert_str_eq(pflref_batch_order_name(PFLREF_BATCH_RESHUFFLE),
                     "reshuffle");
    ck_assert_str_eq(pflref_batch_order_name((pflref_batch_order)5),
                     "unknown");
}
END_TEST

/* n = 5, B = 2, split_once: {0,1}, {2,3}, {4} (the ragged last batch
 * kept); two epochs repeat the same split. */
START_TEST(test_split_once_layout)
{
    /* req: fedavg.alg1.l11, fedavg.alg1.l12 */
    static const size_t b0[] = {0, 1}, b1[] = {2, 3}, b2[] = {4};
    const size_t n[] = {5};
    pflref_schedule_config cfg = base_cfg();
    cfg.train.B = 2;
    cfg.train.epochs = 2;
    pflref_schedule *s = generate_ok(&cfg, n, 1);
    const pflref_batches *b = &s->rounds[0].batches[0];
    ck_assert_msg(b->nsteps == 6, "2 epochs of 3 batches gave %zu steps",
                  b->nsteps);
    for (size_t e = 0; e < 2; e++) {
        expect_step(b, 3 * e + 0, b0, 2, "split_once");
        expect_step(b, 3 * e + 1, b1, 2, "split_once");
        expect_step(b, 3 * e + 2, b2, 1, "split_once");
    }
    pflref_schedule_free(s);
}
END_TEST

/* B = 0 is one full batch; B > n is one batch of all n samples. */
START_TEST(test_full_batch)
{
    static const size_t all[] = {0, 1, 2, 3, 4};
    const size_t n[] = {5};
    const size_t Bs[] = {0, 5, 7};
    for (size_t a = 0; a < 3; a++) {
        pflref_schedule_config cfg = base_cfg();
        cfg.train.B = Bs[a];
        pflref_schedule *s = generate_ok(&cfg, n, 1);
        const pflref_batches *b = &s->rounds[0].batches[0];
        ck_assert_msg(b->nsteps == 1, "B = %zu, n = 5: %zu steps, expected "
                      "one full batch", Bs[a], b->nsteps);
        expect_step(b, 0, all, 5, "full batch");
        pflref_schedule_free(s);
    }
}
END_TEST

/* steps = 7, n = 5, B = 2: the three batches cycle through consecutive
 * epochs: {0,1} {2,3} {4} {0,1} {2,3} {4} {0,1}. */
START_TEST(test_steps_cycle_split_once)
{
    /* req: fedavg.alg1.l12, fedavg.alg1.l13, fedalt.alg4.l8, fedsim.alg5.l8 */
    static const size_t b0[] = {0, 1}, b1[] = {2, 3}, b2[] = {4};
    static const size_t *const want[] = {b0, b1, b2};
    static const size_t len[] = {2, 2, 1};
    const size_t n[] = {5};
    pflref_schedule_config cfg = base_cfg();
    cfg.train.epochs = 0;
    cfg.train.steps = 7;
    cfg.train.B = 2;
    pflref_schedule *s = generate_ok(&cfg, n, 1);
    const pflref_batches *b = &s->rounds[0].batches[0];
    ck_assert_msg(b->nsteps == 7, "steps = 7 gave %zu steps", b->nsteps);
    for (size_t k = 0; k < 7; k++)
        expect_step(b, k, want[k % 3], len[k % 3], "steps cycle");
    pflref_schedule_free(s);
}
END_TEST

/* reshuffle, n = 10, B = 4, 2 epochs, batch_seed 42: epoch 0 is the
 * seed-42 shuffle [5 0 6 2 9 4 1 8 7 3] cut 4/4/2, epoch 1 the seed-43
 * shuffle [9 2 3 7 5 6 0 8 4 1]. */
START_TEST(test_reshuffle_layout)
{
    const size_t n[] = {10};
    pflref_schedule_config cfg = base_cfg();
    cfg.order = PFLREF_BATCH_RESHUFFLE;
    cfg.batch_seed = 42;
    cfg.train.B = 4;
    cfg.train.epochs = 2;
    pflref_schedule *s = generate_ok(&cfg, n, 1);
    const pflref_batches *b = &s->rounds[0].batches[0];
    ck_assert_msg(b->nsteps == 6, "2 epochs of 3 batches gave %zu steps",
                  b->nsteps);
    expect_step(b, 0, SHUF10_42 + 0, 4, "epoch 0");
    expect_step(b, 1, SHUF10_42 + 4, 4, "epoch 0");
    expect_step(b, 2, SHUF10_42 + 8, 2, "epoch 0");
    expect_step(b, 3, SHUF10_43 + 0, 4, "epoch 1");
    expect_step(b, 4, SHUF10_43 + 4, 4, "epoch 1");
    expect_step(b, 5, SHUF10_43 + 8, 2, "epoch 1");
    pflref_schedule_free(s);
}
END_TEST

/* reshuffle with steps = 4, n = 5, B = 2 on two clients (m = N = 2),
 * batch_seed 40: client 0 uses epochs 40 and 41 (the second one cut after
 * one batch), so client 1 starts at seed 42, not 41.
 *   client 0: [1 3 0 4 2] → {1,3} {0,4} {2}; [4 3 0 2 1] → {4,3}
 *   client 1: [4 0 2 3 1] → {4,0} {2,3} {1}; [2 4 3 1 0] → {2,4} */
START_TEST(test_reshuffle_steps_count_epochs)
{
    const size_t n[] = {5, 5};
    pflref_schedule_config cfg = base_cfg();
    cfg.m = 2;
    cfg.order = PFLREF_BATCH_RESHUFFLE;
    cfg.batch_seed = 40;
    cfg.train.epochs = 0;
    cfg.train.steps = 4;
    cfg.train.B = 2;
    pflref_schedule *s = generate_ok(&cfg, n, 2);
    const pflref_batches *c0 = &s->rounds[0].batches[0];
    const pflref_batches *c1 = &s->rounds[0].batches[1];
    expect_step(c0, 0, SHUF5_40 + 0, 2, "client 0");
    expect_step(c0, 1, SHUF5_40 + 2, 2, "client 0");
    expect_step(c0, 2, SHUF5_40 + 4, 1, "client 0");
    expect_step(c0, 3, SHUF5_41 + 0, 2, "client 0");
    expect_step(c1, 0, SHUF5_42 + 0, 2, "client 1");
    expect_step(c1, 1, SHUF5_42 + 2, 2, "client 1");
    expect_step(c1, 2, SHUF5_42 + 4, 1, "client 1");
    expect_step(c1, 3, SHUF5_43 + 0, 2, "client 1");
    ck_assert(c0->nsteps == 4 && c1->nsteps == 4);
    pflref_schedule_free(s);
}
END_TEST

/* e_global runs over rounds, then participants, then epochs, then the
 * post phase by client: N = 2 (n = 5, 10), m = N, T = 2, one full-batch
 * epoch each, post one epoch, batch_seed 42 → seeds 42 … 47. */
START_TEST(test_reshuffle_epoch_counter_order)
{
    const size_t n[] = {5, 10};
    pflref_schedule_config cfg = base_cfg();
    cfg.T = 2;
    cfg.m = 2;
    cfg.order = PFLREF_BATCH_RESHUFFLE;
    cfg.batch_seed = 42;
    cfg.has_post = 1;
    cfg.post.epochs = 1;
    pflref_schedule *s = generate_ok(&cfg, n, 2);
    expect_step(&s->rounds[0].batches[0], 0, SHUF5_42, 5, "round 0 client 0");
    expect_step(&s->rounds[0].batches[1], 0, SHUF10_43, 10,
                "round 0 client 1");
    expect_step(&s->rounds[1].batches[0], 0, SHUF5_44, 5, "round 1 client 0");
    expect_step(&s->rounds[1].batches[1], 0, SHUF10_45, 10,
                "round 1 client 1");
    ck_assert_msg(s->post != NULL, "has_post gave no post phase");
    expect_step(&s->post[0], 0, SHUF5_46, 5, "post client 0");
    expect_step(&s->post[1], 0, SHUF10_47, 10, "post client 1");
    pflref_schedule_free(s);
}
END_TEST

/* ---------------------------------------------------------------------
 * Client sets
 * ------------------------------------------------------------------- */

/* gsl, N = 10, m = 3, client_seed 42: round t uses seed 42 + t:
 * [3 7 8], [0 3 4], [2 3 7] (gsl_choose 42/43/44 10 3). */
START_TEST(test_gsl_rounds_reseeded)
{
    /* req: fedavg.alg1.l5, pfedme.alg1.l9, ditto.alg1.l3, perfedavg.alg1.l3 */
    static const size_t want[3][3] = {{3, 7, 8}, {0, 3, 4}, {2, 3, 7}};
    size_t n[10];
    for (size_t i = 0; i < 10; i++)
        n[i] = 3;
    pflref_schedule_config cfg = base_cfg();
    cfg.T = 3;
    cfg.m = 3;
    cfg.client_seed = 42;
    pflref_schedule *s = generate_ok(&cfg, n, 10);
    for (size_t t = 0; t < 3; t++) {
        ck_assert(s->rounds[t].m == 3);
        expect_ids(s->rounds[t].clients, want[t], 3, "gsl clients");
        expect_ids(s->rounds[t].drawn, want[t], 3, "gsl drawn");
    }
    pflref_schedule_free(s);
}
END_TEST

/* numpy_legacy, N = 10, m = 3, client_seed 42: drawn [8 1 5], [3 9 6],
 * [2 7 9] (numpy RandomState(42 + t).choice(10, 3, replace=False)). */
START_TEST(test_numpy_rounds_reseeded)
{
    /* req: fedalt.alg4.l3, fedsim.alg5.l3, pflego.alg1.l1, fedavg.alg1.l5 */
    static const size_t drawn[3][3] = {{8, 1, 5}, {3, 9, 6}, {2, 7, 9}};
    static const size_t clients[3][3] = {{1, 5, 8}, {3, 6, 9}, {2, 7, 9}};
    size_t n[10];
    for (size_t i = 0; i < 10; i++)
        n[i] = 2;
    pflref_schedule_config cfg = base_cfg();
    cfg.T = 3;
    cfg.m = 3;
    cfg.sampler = PFLREF_SAMPLER_NUMPY_LEGACY;
    cfg.client_seed = 42;
    pflref_schedule *s = generate_ok(&cfg, n, 10);
    for (size_t t = 0; t < 3; t++) {
        expect_ids(s->rounds[t].clients, clients[t], 3, "numpy clients");
        expect_ids(s->rounds[t].drawn, drawn[t], 3, "numpy drawn");
    }
    pflref_schedule_free(s);
}
END_TEST

/* m = N: every round takes clients 0..N−1, drawn in that order too, and
 * the client seed does not matter (nothing is drawn). */
START_TEST(test_all_clients_draw_nothing)
{
    /* req: fedavg.alg1.l4, fedavg.alg1.l5 */
    static const size_t all[] = {0, 1, 2, 3};
    const size_t n[] = {2, 3, 4, 5};
    for (int kind = 0; kind < 2; kind++)
        for (unsigned long seed = 1; seed <= 1001; seed += 1000) {
            pflref_schedule_config cfg = base_cfg();
            cfg.T = 3;
            cfg.m = 4;
            cfg.sampler = (pflref_sampler_kind)kind;
            cfg.client_seed = seed;
            pflref_schedule *s = generate_ok(&cfg, n, 4);
            for (size_t t = 0; t < 3; t++) {
                expect_ids(s->rounds[t].clients, all, 4, "m = N clients");
                expect_ids(s->rounds[t].drawn, all, 4, "m = N drawn");
            }
            pflref_schedule_free(s);
        }
}
END_TEST

/* ---------------------------------------------------------------------
 * Properties
 * ------------------------------------------------------------------- */

/* Each epoch of a reshuffled schedule (nb consecutive steps) is a
 * permutation of 0..n−1. */
START_TEST(test_reshuffle_is_permutation_per_epoch)
{
    const size_t n[] = {7, 12, 1, 30};
    const size_t B = 4;
    pflref_schedule_config cfg = base_cfg();
    cfg.T = 5;
    cfg.m = 2;
    cfg.client_seed = 9;
    cfg.order = PFLREF_BATCH_RESHUFFLE;
    cfg.batch_seed = 77;
    cfg.train.epochs = 3;
    cfg.train.B = B;
    cfg.has_post = 1;
    cfg.post.epochs = 2;
    cfg.post.B = B;
    pflref_schedule *s = generate_ok(&cfg, n, 4);
    size_t seen[30];
    for (size_t t = 0; t <= cfg.T; t++) {
        const size_t count = t < cfg.T ? cfg.m : 4;
        for (size_t j = 0; j < count; j++) {
            const size_t i = t < cfg.T ? s->rounds[t].clients[j] : j;
            const pflref_batches *b =
                t < cfg.T ? &s->rounds[t].batches[j] : &s->post[j];
            const size_t nb = (n[i] + B - 1) / B;
            const size_t E = t < cfg.T ? 3 : 2;
            ck_assert_msg(b->nsteps == E * nb, "client %zu: %zu steps, "
                          "expected %zu", i, b->nsteps, E * nb);
            for (size_t e = 0; e < E; e++) {
                memset(seen, 0, sizeof seen);
                const size_t lo = b->step_off[e * nb];
                const size_t hi = b->step_off[(e + 1) * nb];
                ck_assert_msg(hi - lo == n[i], "client %zu epoch %zu holds "
                              "%zu samples, not n = %zu", i, e, hi - lo,
                              n[i]);
                for (size_t q = lo; q < hi; q++) {
                    ck_assert(b->idx[q] < n[i]);
                    seen[b->idx[q]]++;
                }
                for (size_t q = 0; q < n[i]; q++)
                    ck_assert_msg(seen[q] == 1, "client %zu epoch %zu: "
                                  "sample %zu appears %zu times", i, e, q,
                                  seen[q]);
            }
        }
    }
    pflref_schedule_free(s);
}
END_TEST

static int batches_equal(const pflref_batches *a, const pflref_batches *b)
{
    if (a->nsteps != b->nsteps)
        return 0;
    for (size_t k = 0; k <= a->nsteps; k++)
        if (a->step_off[k] != b->step_off[k])
            return 0;
    for (size_t k = 0; k < a->step_off[a->nsteps]; k++)
        if (a->idx[k] != b->idx[k])
            return 0;
    return 1;
}

static int schedules_equal(const pflref_schedule *a, const pflref_schedule *b)
{
    if (a->T != b->T || a->N != b->N || (a->post == NULL) != (b->post == NULL))
        return 0;
    for (size_t t = 0; t < a->T; t++) {
        const pflref_round_plan *ra = &a->rounds[t], *rb = &b->rounds[t];
        if (ra->m != rb->m)
            return 0;
        for (size_t j = 0; j < ra->m; j++)
            if (ra->clients[j] != rb->clients[j] ||
                ra->drawn[j] != rb->drawn[j] ||
                !batches_equal(&ra->batches[j], &rb->batches[j]))
                return 0;
    }
    for (size_t i = 0; a->post != NULL && i < a->N; i++)
        if (!batches_equal(&a->post[i], &b->post[i]))
            return 0;
    return 1;
}

/* The same configuration gives the same schedule; another batch_seed or
 * client_seed gives another one. */
START_TEST(test_generation_is_reproducible)
{
    const size_t n[] = {9, 4, 13, 6, 8};
    pflref_schedule_config cfg = base_cfg();
    cfg.T = 4;
    cfg.m = 3;
    cfg.sampler = PFLREF_SAMPLER_NUMPY_LEGACY;
    cfg.client_seed = 2024;
    cfg.order = PFLREF_BATCH_RESHUFFLE;
    cfg.batch_seed = 31337;
    cfg.train.epochs = 0;
    cfg.train.steps = 5;
    cfg.train.B = 3;
    cfg.has_post = 1;
    cfg.post.epochs = 1;
    cfg.post.B = 2;
    pflref_schedule *a = generate_ok(&cfg, n, 5);
    pflref_schedule *b = generate_ok(&cfg, n, 5);
    ck_assert_msg(schedules_equal(a, b), "two generations from the same "
                  "configuration differ");
    cfg.batch_seed++;
    pflref_schedule *c = generate_ok(&cfg, n, 5);
    ck_assert_msg(!schedules_equal(a, c), "batch_seed + 1 gave the same "
                  "schedule");
    cfg.batch_seed--;
    cfg.client_seed++;
    pflref_schedule *d = generate_ok(&cfg, n, 5);
    ck_assert_msg(!schedules_equal(a, d), "client_seed + 1 gave the same "
                  "schedule");
    pflref_schedule_free(a);
    pflref_schedule_free(b);
    pflref_schedule_free(c);
    pflref_schedule_free(d);
}
END_TEST

/* Every generated schedule validates (both samplers, both orders, epochs
 * and steps, with and without a post phase, T = 0). */
START_TEST(test_generate_validate_round_trip)
{
    const size_t n[] = {11, 1, 7, 20, 3, 5};
    const size_t N = 6;
    for (int kind = 0; kind < 2; kind++)
        for (int order = 0; order < 2; order++)
            for (int steps = 0; steps < 2; steps++)
                for (size_t T = 0; T < 4; T += 3) {
                    pflref_schedule_config cfg = base_cfg();
                    cfg.T = T;
                    cfg.m = 1 + (size_t)kind * 2 + (size_t)order;
                    cfg.sampler = (pflref_sampler_kind)kind;
                    cfg.client_seed = 17;
                    cfg.order = (pflref_batch_order)order;
                    cfg.batch_seed = 5;
                    cfg.train.epochs = steps ? 0 : 2;
                    cfg.train.steps = steps ? 6 : 0;
                    cfg.train.B = 4;
                    cfg.has_post = steps;
                    cfg.post.steps = 3;
                    cfg.post.B = 0;
                    pflref_schedule *s = generate_ok(&cfg, n, N);
                    ck_assert_msg((T == 0) == (s->rounds == NULL),
                                  "T = %zu: rounds %s", T,
                                  s->rounds == NULL ? "missing" : "present");
                    ck_assert_msg((s->post != NULL) == (cfg.has_post != 0),
                                  "has_post = %d but post is %s",
                                  cfg.has_post,
                                  s->post == NULL ? "NULL" : "present");
                    pflref_error err;
                    pflref_status st =
                        pflref_schedule_validate(s, n, N, &err);
                    ck_assert_msg(st == PFLREF_OK, "a generated schedule "
                                  "fails validation: %s: %s", err.where,
                                  err.message);
                    pflref_schedule_free(s);
                }
}
END_TEST

/* ---------------------------------------------------------------------
 * Generation errors
 * ------------------------------------------------------------------- */

static pflref_status gen(const pflref_schedule_config *cfg, const size_t *n,
                         size_t N, pflref_error *err)
{
    static pflref_schedule sentinel;
    pflref_schedule *s = &sentinel;   /* a failure must reset it to NULL */
    pflref_status st = pflref_schedule_generate(cfg, n, N, &s, err);
    if (st != PFLREF_OK)
        ck_assert_msg(s == NULL, "a failed generate left *out non-NULL");
    pflref_schedule_free(st == PFLREF_OK ? s : NULL);
    return st;
}

START_TEST(test_generate_rejects_null_and_empty)
{
    const size_t n[] = {3, 3};
    pflref_schedule_config cfg = base_cfg();
    EXPECT_ERROR(pflref_schedule_generate(&cfg, n, 2, NULL, err),
                 PFLREF_EINVAL, "out");
    EXPECT_ERROR(gen(NULL, n, 2, err), PFLREF_EINVAL, "cfg");
    EXPECT_ERROR(gen(&cfg, n, 0, err), PFLREF_EINVAL, "N");
    EXPECT_ERROR(gen(&cfg, NULL, 2, err), PFLREF_EINVAL, "n");
}
END_TEST

START_TEST(test_generate_rejects_sample_counts)
{
    size_t n[] = {3, 0, 4};
    pflref_schedule_config cfg = base_cfg();
    EXPECT_ERROR(gen(&cfg, n, 3, err), PFLREF_EINVAL, "n[1]");
    n[1] = LIMIT + 1;
    EXPECT_ERROR(gen(&cfg, n, 3, err), PFLREF_ENOMEM, "n[1]");
}
END_TEST

START_TEST(test_generate_rejects_m)
{
    /* req: fedavg.alg1.l4 */
    const size_t n[] = {3, 3, 3};
    pflref_schedule_config cfg = base_cfg();
    cfg.m = 0;
    EXPECT_ERROR(gen(&cfg, n, 3, err), PFLREF_EINVAL, "schedule.clients_per_round");
    cfg.m = 4;
    EXPECT_ERROR(gen(&cfg, n, 3, err), PFLREF_EINVAL, "schedule.clients_per_round");
}
END_TEST

START_TEST(test_generate_rejects_sampler_and_order)
{
    const size_t n[] = {3, 3};
    pflref_schedule_config cfg = base_cfg();
    cfg.sampler = (pflref_sampler_kind)3;
    EXPECT_ERROR(gen(&cfg, n, 2, err), PFLREF_EINVAL, "schedule.sampler");
    cfg = base_cfg();
    cfg.order = (pflref_batch_order)4;
    EXPECT_ERROR(gen(&cfg, n, 2, err), PFLREF_EINVAL, "schedule.batches");
}
END_TEST

/* client_seed in 1..2³²−1 and client_seed + T − 1 ≤ 2³² − 1. */
START_TEST(test_generate_rejects_client_seed)
{
    const size_t n[] = {3, 3, 3};
    pflref_schedule_config cfg = base_cfg();
    cfg.m = 2;
    cfg.client_seed = 0;
    EXPECT_ERROR(gen(&cfg, n, 3, err), PFLREF_EINVAL,
                 "schedule.client_seed");
    cfg.client_seed = PFLREF_SEED_MAX + 1;
    EXPECT_ERROR(gen(&cfg, n, 3, err), PFLREF_EINVAL,
                 "schedule.client_seed");
    cfg.client_seed = PFLREF_SEED_MAX - 1;
    cfg.T = 3;   /* seeds 2³²−2, 2³²−1, 2³²: the last is too large */
    EXPECT_ERROR(gen(&cfg, n, 3, err), PFLREF_EINVAL,
                 "schedule.client_seed");
    cfg.T = 2;   /* seeds 2³²−2, 2³²−1: allowed */
    ck_assert_msg(gen(&cfg, n, 3, NULL) == PFLREF_OK,
                  "client_seed + T - 1 = 2^32 - 1 was refused");
}
END_TEST

/* batch_seed (reshuffle only) in 1..2³²−1, with room for every epoch. */
START_TEST(test_generate_rejects_batch_seed)
{
    const size_t n[] = {3, 3};
    pflref_schedule_config cfg = base_cfg();
    cfg.order = PFLREF_BATCH_RESHUFFLE;
    cfg.batch_seed = 0;
    EXPECT_ERROR(gen(&cfg, n, 2, err), PFLREF_EINVAL, "schedule.batch_seed");
    cfg.batch_seed = PFLREF_SEED_MAX + 1;
    EXPECT_ERROR(gen(&cfg, n, 2, err), PFLREF_EINVAL, "schedule.batch_seed");
    /* 3 epochs (train 1 + post 2) from 2³²−2: seeds up to 2³². */
    cfg.batch_seed = PFLREF_SEED_MAX - 1;
    cfg.has_post = 1;
    cfg.post.epochs = 1;
    EXPECT_ERROR(gen(&cfg, n, 2, err), PFLREF_EINVAL, "schedule.batch_seed");
    cfg.has_post = 0;   /* 1 epoch: fine */
    ck_assert_msg(gen(&cfg, n, 2, NULL) == PFLREF_OK,
                  "batch_seed 2^32 - 2 with one epoch was refused");
    /* split_once never uses batch_seed. */
    cfg.order = PFLREF_BATCH_SPLIT_ONCE;
    cfg.batch_seed = 0;
    ck_assert_msg(gen(&cfg, n, 2, NULL) == PFLREF_OK,
                  "split_once refused an unused batch_seed = 0");
}
END_TEST

START_TEST(test_generate_rejects_local_work)
{
    const size_t n[] = {3, 3};
    pflref_schedule_config cfg = base_cfg();
    cfg.train.epochs = 0;
    EXPECT_ERROR(gen(&cfg, n, 2, err), PFLREF_EINVAL,
                 "schedule.local.epochs");
    cfg.train.epochs = 2;
    cfg.train.steps = 3;
    EXPECT_ERROR(gen(&cfg, n, 2, err), PFLREF_EINVAL,
                 "schedule.local.steps");
    cfg = base_cfg();
    cfg.has_post = 1;
    EXPECT_ERROR(gen(&cfg, n, 2, err), PFLREF_EINVAL,
                 "schedule.post.epochs");
    cfg.post.epochs = 1;
    cfg.post.steps = 1;
    EXPECT_ERROR(gen(&cfg, n, 2, err), PFLREF_EINVAL, "schedule.post.steps");
    cfg.has_post = 0;   /* no post phase: its work is not looked at */
    ck_assert(gen(&cfg, n, 2, NULL) == PFLREF_OK);
}
END_TEST

/* Absurd sizes are refused with PFLREF_ENOMEM before any allocation. */
START_TEST(test_generate_refuses_absurd_sizes)
{
    const size_t n[] = {2, 2};
    pflref_schedule_config cfg = base_cfg();
    cfg.T = LIMIT + 1;   /* T·m participations > the limit */
    EXPECT_ERROR(gen(&cfg, n, 2, err), PFLREF_ENOMEM, "schedule.rounds");
    cfg = base_cfg();
    cfg.train.epochs = 0;
    cfg.train.steps = (size_t)1 << 40;
    EXPECT_ERROR(gen(&cfg, n, 2, err), PFLREF_ENOMEM,
                 "schedule.local.steps");
    cfg = base_cfg();
    cfg.train.epochs = SIZE_MAX / 2;   /* E·n overflows size_t */
    EXPECT_ERROR(gen(&cfg, n, 2, err), PFLREF_ENOMEM,
                 "schedule.local.epochs");
    cfg = base_cfg();
    cfg.has_post = 1;
    cfg.post.steps = LIMIT + 1;
    EXPECT_ERROR(gen(&cfg, n, 2, err), PFLREF_ENOMEM,
                 "schedule.post.steps");
    /* No single client is too large, the whole schedule is:
     * 2¹⁶ rounds × 2¹⁶ samples = 2³² indices. */
    const size_t big[] = {(size_t)1 << 16};
    cfg = base_cfg();
    cfg.T = (size_t)1 << 16;
    EXPECT_ERROR(gen(&cfg, big, 1, err), PFLREF_ENOMEM, "schedule");
    /* … and with the post phase tipping it over: (2¹⁰ − 1)·2¹⁶ indices of
     * training, then 2·2¹⁶ of post: 2²⁶ + 2¹⁶ in all (the limit is 2²⁶). */
    cfg.T = ((size_t)1 << 10) - 1;
    cfg.has_post = 1;
    cfg.post.epochs = 2;
    EXPECT_ERROR(gen(&cfg, big, 1, err), PFLREF_ENOMEM, "schedule");
}
END_TEST

/* ---------------------------------------------------------------------
 * Validation errors: a valid schedule, corrupted one field at a time
 * ------------------------------------------------------------------- */

/* N = 4 clients with n = 5, 6, 7, 8; T = 4 rounds of m = 2 (gsl, seed 3),
 * 3 steps of B = 2; a post phase of 2 steps. */
static const size_t VN[] = {5, 6, 7, 8};

static pflref_schedule *valid_schedule(void)
{
    pflref_schedule_config cfg = base_cfg();
    cfg.T = 4;
    cfg.m = 2;
    cfg.client_seed = 3;
    cfg.train.epochs = 0;
    cfg.train.steps = 3;
    cfg.train.B = 2;
    cfg.has_post = 1;
    cfg.post.steps = 2;
    cfg.post.B = 2;
    pflref_schedule *s = generate_ok(&cfg, VN, 4);
    ck_assert(pflref_schedule_validate(s, VN, 4, NULL) == PFLREF_OK);
    return s;
}

START_TEST(test_validate_rejects_top_level)
{
    pflref_schedule *s = valid_schedule();
    EXPECT_ERROR(pflref_schedule_validate(NULL, VN, 4, err), PFLREF_EINVAL,
                 "schedule");
    EXPECT_ERROR(pflref_schedule_validate(s, NULL, 4, err), PFLREF_EINVAL,
                 "n");
    EXPECT_ERROR(pflref_schedule_validate(s, VN, 3, err), PFLREF_EINVAL,
                 "schedule");
    pflref_round_plan *rounds = s->rounds;
    s->rounds = NULL;
    EXPECT_ERROR(pflref_schedule_validate(s, VN, 4, err), PFLREF_EINVAL,
                 "schedule.rounds");
    s->rounds = rounds;
    pflref_schedule_free(s);
}
END_TEST

START_TEST(test_validate_rejects_round_sizes)
{
    pflref_schedule *s = valid_schedule();
    pflref_round_plan *r = &s->rounds[1];
    r->m = 0;
    EXPECT_ERROR(pflref_schedule_validate(s, VN, 4, err), PFLREF_EINVAL,
                 "schedule.rounds[1].clients");
    r->m = 5;
    EXPECT_ERROR(pflref_schedule_validate(s, VN, 4, err), PFLREF_EINVAL,
                 "schedule.rounds[1].clients");
    r->m = 2;
    pflref_schedule_free(s);
}
END_TEST

START_TEST(test_validate_rejects_missing_lists)
{
    pflref_schedule *s = valid_schedule();
    pflref_round_plan *r = &s->rounds[0];
    size_t *clients = r->clients, *drawn = r->drawn;
    pflref_batches *batches = r->batches;
    r->clients = NULL;
    EXPECT_ERROR(pflref_schedule_validate(s, VN, 4, err), PFLREF_EINVAL,
                 "schedule.rounds[0].clients");
    r->clients = clients;
    r->drawn = NULL;
    EXPECT_ERROR(pflref_schedule_validate(s, VN, 4, err), PFLREF_EINVAL,
                 "schedule.rounds[0].drawn");
    r->drawn = drawn;
    r->batches = NULL;
    EXPECT_ERROR(pflref_schedule_validate(s, VN, 4, err), PFLREF_EINVAL,
                 "schedule.rounds[0].batches");
    r->batches = batches;
    pflref_schedule_free(s);
}
END_TEST

START_TEST(test_validate_rejects_client_ids)
{
    pflref_schedule *s = valid_schedule();
    pflref_round_plan *r = &s->rounds[3];
    const size_t c1 = r->clients[1];
    r->clients[1] = 4;   /* N = 4 */
    EXPECT_ERROR(pflref_schedule_validate(s, VN, 4, err), PFLREF_EINVAL,
                 "schedule.rounds[3].clients[1]");
    r->clients[1] = r->clients[0];   /* not strictly ascending */
    EXPECT_ERROR(pflref_schedule_validate(s, VN, 4, err), PFLREF_EINVAL,
                 "schedule.rounds[3].clients[1]");
    r->clients[1] = c1;
    pflref_schedule_free(s);
}
END_TEST

START_TEST(test_validate_rejects_drawn)
{
    pflref_schedule *s = valid_schedule();
    pflref_round_plan *r = &s->rounds[0];
    const size_t d0 = r->drawn[0], d1 = r->drawn[1];
    /* A client of the population that is not a participant. */
    size_t other = 0;
    while (other == r->clients[0] || other == r->clients[1])
        other++;
    r->drawn[1] = other;
    EXPECT_ERROR(pflref_schedule_validate(s, VN, 4, err), PFLREF_EINVAL,
                 "schedule.rounds[0].drawn[1]");
    r->drawn[1] = 99;   /* out of range */
    EXPECT_ERROR(pflref_schedule_validate(s, VN, 4, err), PFLREF_EINVAL,
                 "schedule.rounds[0].drawn[1]");
    r->drawn[1] = d0;   /* drawn twice */
    EXPECT_ERROR(pflref_schedule_validate(s, VN, 4, err), PFLREF_EINVAL,
                 "schedule.rounds[0].drawn[1]");
    /* Any order of the participants is fine. */
    r->drawn[0] = d1;
    r->drawn[1] = d0;
    ck_assert_msg(pflref_schedule_validate(s, VN, 4, NULL) == PFLREF_OK,
                  "drawn in another order than clients was refused");
    pflref_schedule_free(s);
}
END_TEST

/* selected: a non-empty, strictly ascending subset of the participants;
 * drawn is then a permutation of selected. */
START_TEST(test_validate_selected)
{
    pflref_schedule *s = valid_schedule();
    pflref_round_plan *r = &s->rounds[0];
    const size_t c0 = r->clients[0], c1 = r->clients[1];
    r->n_selected = 1;            /* aggregate only the first participant */
    r->selected[0] = c0;
    r->drawn[0] = c0;
    ck_assert_msg(pflref_schedule_validate(s, VN, 4, NULL) == PFLREF_OK,
                  "a proper subset was refused");
    r->drawn[0] = c1;             /* drawn outside selected */
    EXPECT_ERROR(pflref_schedule_validate(s, VN, 4, err), PFLREF_EINVAL,
                 "schedule.rounds[0].drawn[0]");
    r->drawn[0] = c0;
    r->selected[0] = 99;          /* not a participant */
    EXPECT_ERROR(pflref_schedule_validate(s, VN, 4, err), PFLREF_EINVAL,
                 "schedule.rounds[0].selected[0]");
    r->n_selected = 2;            /* not ascending */
    r->selected[0] = c1;
    r->selected[1] = c0;
    r->drawn[1] = c1;
    EXPECT_ERROR(pflref_schedule_validate(s, VN, 4, err), PFLREF_EINVAL,
                 "schedule.rounds[0].selected[1]");
    r->n_selected = 0;
    EXPECT_ERROR(pflref_schedule_validate(s, VN, 4, err), PFLREF_EINVAL,
                 "schedule.rounds[0].selected");
    pflref_schedule_free(s);
}
END_TEST

/* train_all: every client trains, and the m sampled ones (the same draws
 * as without train_all) are the selected set. */
START_TEST(test_generate_train_all)
{
    const size_t n[5] = {3, 4, 2, 5, 1};
    pflref_schedule_config cfg = base_cfg();
    cfg.T = 3;
    cfg.m = 2;
    pflref_schedule *plain = NULL, *all = NULL;
    ck_assert(pflref_schedule_generate(&cfg, n, 5, &plain, NULL) == PFLREF_OK);
    cfg.train_all = 1;
    ck_assert(pflref_schedule_generate(&cfg, n, 5, &all, NULL) == PFLREF_OK);
    ck_assert(pflref_schedule_validate(all, n, 5, NULL) == PFLREF_OK);
    for (size_t t = 0; t < 3; t++) {
        const pflref_round_plan *a = &all->rounds[t], *p = &plain->rounds[t];
        ck_assert_uint_eq(a->m, 5);
        ck_assert_uint_eq(a->n_selected, 2);
        ck_assert_uint_eq(p->n_selected, p->m);
        for (size_t j = 0; j < 2; j++) {
            ck_assert_uint_eq(a->selected[j], p->clients[j]);
            ck_assert_uint_eq(a->drawn[j], p->drawn[j]);
        }
        for (size_t j = 0; j < 5; j++)
            ck_assert_uint_eq(a->clients[j], j);
    }
    pflref_schedule_free(plain);
    pflref_schedule_free(all);
}
END_TEST

START_TEST(test_validate_rejects_step_offsets)
{
    pflref_schedule *s = valid_schedule();
    pflref_batches *b = &s->rounds[0].batches[1];
    size_t *off = b->step_off;
    size_t *idx = b->idx;
    ck_assert(b->nsteps == 3);
    b->step_off = NULL;
    EXPECT_ERROR(pflref_schedule_validate(s, VN, 4, err), PFLREF_EINVAL,
                 "schedule.rounds[0].batches[1]");
    b->step_off = off;
    off[0] = 1;
    EXPECT_ERROR(pflref_schedule_validate(s, VN, 4, err), PFLREF_EINVAL,
                 "schedule.rounds[0].batches[1][0]");
    off[0] = 0;
    const size_t o2 = off[2];
    off[2] = off[1];   /* step 1 empty */
    EXPECT_ERROR(pflref_schedule_validate(s, VN, 4, err), PFLREF_EINVAL,
                 "schedule.rounds[0].batches[1][1]");
    off[2] = off[1] - 1;   /* decreasing */
    EXPECT_ERROR(pflref_schedule_validate(s, VN, 4, err), PFLREF_EINVAL,
                 "schedule.rounds[0].batches[1][1]");
    off[2] = o2;
    b->idx = NULL;
    EXPECT_ERROR(pflref_schedule_validate(s, VN, 4, err), PFLREF_EINVAL,
                 "schedule.rounds[0].batches[1]");
    b->idx = idx;
    b->nsteps = LIMIT + 1;
    EXPECT_ERROR(pflref_schedule_validate(s, VN, 4, err), PFLREF_EINVAL,
                 "schedule.rounds[0].batches[1]");
    b->nsteps = 3;
    pflref_schedule_free(s);
}
END_TEST

START_TEST(test_validate_rejects_sample_index)
{
    pflref_schedule *s = valid_schedule();
    pflref_batches *b = &s->rounds[0].batches[1];
    const size_t client = s->rounds[0].clients[1];
    size_t *q = &b->idx[b->step_off[2]];
    const size_t keep = *q;
    *q = VN[client];   /* one past the client's last sample */
    EXPECT_ERROR(pflref_schedule_validate(s, VN, 4, err), PFLREF_EINVAL,
                 "schedule.rounds[0].batches[1][2][0]");
    *q = keep;
    pflref_batches *p = &s->post[2];
    q = &p->idx[p->step_off[0] + 1];
    *q = 1000;
    EXPECT_ERROR(pflref_schedule_validate(s, VN, 4, err), PFLREF_EINVAL,
                 "schedule.post[2][0][1]");
    pflref_schedule_free(s);
}
END_TEST

/* ---------------------------------------------------------------------
 * Memory: the allocators used by readers, partial schedules
 * ------------------------------------------------------------------- */

/* A schedule filled by hand (as a spec reader does) validates; a client
 * with no local work (nsteps = 0) is allowed. */
START_TEST(test_hand_filled_schedule_validates)
{
    const size_t n[] = {3, 2};
    pflref_schedule *s = pflref_schedule_alloc(1, 2, 1);
    ck_assert(s != NULL && s->T == 1 && s->N == 2);
    ck_assert(s->rounds != NULL && s->post != NULL);
    ck_assert(s->rounds[0].m == 0 && s->post[1].nsteps == 0);
    pflref_round_plan *r = &s->rounds[0];
    ck_assert(pflref_round_plan_alloc(r, 2, NULL) == PFLREF_OK);
    r->clients[0] = 0;
    r->clients[1] = 1;
    r->selected[0] = 0;   /* every participant is aggregated */
    r->selected[1] = 1;
    r->drawn[0] = 1;
    r->drawn[1] = 0;
    /* client 0: steps {2, 0}, {1}; client 1: step {1, 1, 0} */
    ck_assert(pflref_batches_alloc(&r->batches[0], 2, 3, NULL) == PFLREF_OK);
    ck_assert(r->batches[0].step_off[0] == 0);
    r->batches[0].step_off[1] = 2;
    r->batches[0].step_off[2] = 3;
    r->batches[0].idx[0] = 2;
    r->batches[0].idx[1] = 0;
    r->batches[0].idx[2] = 1;
    ck_assert(pflref_batches_alloc(&r->batches[1], 1, 3, NULL) == PFLREF_OK);
    r->batches[1].step_off[1] = 3;
    r->batches[1].idx[0] = 1;
    r->batches[1].idx[1] = 1;
    r->batches[1].idx[2] = 0;
    /* post: client 0 one step {2}; client 1 nothing. */
    ck_assert(pflref_batches_alloc(&s->post[0], 1, 1, NULL) == PFLREF_OK);
    s->post[0].step_off[1] = 1;
    s->post[0].idx[0] = 2;
    pflref_error err;
    ck_assert_msg(pflref_schedule_validate(s, n, 2, &err) == PFLREF_OK,
                  "a hand-filled schedule was refused: %s: %s", err.where,
                  err.message);
    pflref_schedule_free(s);
}
END_TEST

START_TEST(test_allocators_refuse_bad_arguments)
{
    ck_assert_msg(pflref_schedule_alloc(LIMIT + 1, 2, 0) == NULL,
                  "T > the limit of rounds was accepted");
    ck_assert_msg(pflref_schedule_alloc(1, LIMIT + 1, 1) == NULL,
                  "N > the limit of clients was accepted");
    pflref_batches b;
    EXPECT_ERROR(pflref_batches_alloc(NULL, 1, 1, err), PFLREF_EINVAL, "b");
    EXPECT_ERROR(pflref_batches_alloc(&b, LIMIT + 1, 1, err), PFLREF_ENOMEM,
                 "schedule");
    ck_assert(b.step_off == NULL && b.idx == NULL && b.nsteps == 0);
    EXPECT_ERROR(pflref_batches_alloc(&b, 1, SIZE_MAX, err), PFLREF_ENOMEM,
                 "schedule");
    pflref_round_plan r;
    EXPECT_ERROR(pflref_round_plan_alloc(NULL, 1, err), PFLREF_EINVAL, "r");
    EXPECT_ERROR(pflref_round_plan_alloc(&r, LIMIT + 1, err), PFLREF_ENOMEM,
                 "schedule");
    ck_assert(r.clients == NULL && r.drawn == NULL && r.batches == NULL);
}
END_TEST

/* Empty and partly filled schedules free cleanly (valgrind checks). */
START_TEST(test_free_partial_schedules)
{
    pflref_schedule_free(NULL);
    pflref_schedule *s = pflref_schedule_alloc(0, 0, 0);
    ck_assert(s != NULL && s->rounds == NULL && s->post == NULL);
    pflref_schedule_free(s);
    s = pflref_schedule_alloc(3, 4, 1);
    ck_assert(s != NULL);
    ck_assert(pflref_round_plan_alloc(&s->rounds[0], 2, NULL) == PFLREF_OK);
    ck_assert(pflref_batches_alloc(&s->rounds[0].batches[1], 2, 5, NULL) ==
              PFLREF_OK);
    ck_assert(pflref_round_plan_alloc(&s->rounds[1], 0, NULL) == PFLREF_OK);
    ck_assert(pflref_batches_alloc(&s->post[3], 0, 0, NULL) == PFLREF_OK);
    pflref_schedule_free(s);
}
END_TEST

Suite *schedule_suite(void)
{
    Suite *s = suite_create("schedule");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_order_names);
    tcase_add_test(tc, test_split_once_layout);
    tcase_add_test(tc, test_full_batch);
    tcase_add_test(tc, test_steps_cycle_split_once);
    tcase_add_test(tc, test_reshuffle_layout);
    tcase_add_test(tc, test_reshuffle_steps_count_epochs);
    tcase_add_test(tc, test_reshuffle_epoch_counter_order);
    tcase_add_test(tc, test_gsl_rounds_reseeded);
    tcase_add_test(tc, test_numpy_rounds_reseeded);
    tcase_add_test(tc, test_all_clients_draw_nothing);
    tcase_add_test(tc, test_reshuffle_is_permutation_per_epoch);
    tcase_add_test(tc, test_generation_is_reproducible);
    tcase_add_test(tc, test_generate_validate_round_trip);
    tcase_add_test(tc, test_generate_rejects_null_and_empty);
    tcase_add_test(tc, test_generate_rejects_sample_counts);
    tcase_add_test(tc, test_generate_rejects_m);
    tcase_add_test(tc, test_generate_rejects_sampler_and_order);
    tcase_add_test(tc, test_generate_rejects_client_seed);
    tcase_add_test(tc, test_generate_rejects_batch_seed);
    tcase_add_test(tc, test_generate_rejects_local_work);
    tcase_add_test(tc, test_generate_refuses_absurd_sizes);
    tcase_add_test(tc, test_validate_rejects_top_level);
    tcase_add_test(tc, test_validate_rejects_round_sizes);
    tcase_add_test(tc, test_validate_rejects_missing_lists);
    tcase_add_test(tc, test_validate_rejects_client_ids);
    tcase_add_test(tc, test_validate_rejects_drawn);
    tcase_add_test(tc, test_validate_selected);
    tcase_add_test(tc, test_generate_train_all);
    tcase_add_test(tc, test_validate_rejects_step_offsets);
    tcase_add_test(tc, test_validate_rejects_sample_index);
    tcase_add_test(tc, test_hand_filled_schedule_validates);
    tcase_add_test(tc, test_allocators_refuse_bad_arguments);
    tcase_add_test(tc, test_free_partial_schedules);
    suite_add_tcase(s, tc);
    return s;
}
