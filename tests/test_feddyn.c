/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_feddyn.c: FedDyn (ref/algorithms/feddyn.c).
 *
 * The hand example (every value dyadic, so fp64 is exact): two devices
 * with f_k(θ) = ½ a_k (θ − c_k)², a = (2.5, 0.75), c = (1.5, −2), θ⁰ = 0,
 * η = 0.25, α = 0.375, one step per participation, m = 2.
 *   round 0, P = {0}: θ_0 = 0 − η a_0 (0 − c_0) = 0.9375
 *                     ∇L_0 = −α (0.9375 − 0) = −0.3515625
 *                     h = −α ½ 0.9375 = −0.17578125
 *                     θ¹ = 0.9375 − h/α = 1.40625
 *   round 1, P = {1}: ∇L_1 = 0, so θ_1 = 1.40625 − η a_1 (1.40625 + 2)
 *                     = 0.767578125;  ∇L_1 = −α (θ_1 − θ¹) = 0.239501953125
 *                     h = −0.17578125 + α ½ 0.638671875 = −0.0560302734375
 *                     θ² = 0.767578125 − h/α = 0.9169921875
 * and h = ½ (∇L_0 + ∇L_1) after each round (the paper's key property).
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "suites.h"
#include "testutil.h"
#include "builder.h"

static const char *const VECTORS[] = {
    "golden/feddyn/worked-linear-paper.json",
    "golden/feddyn/worked-linear-h-literal.json",
    "golden/feddyn/worked-linear-official.json",
    "golden/feddyn/worked-d1-pfllib.json",
};

START_TEST(test_worked_vectors)
{
    /* req: feddyn.alg1.l5, feddyn.alg1.l10, feddyn.alg1.l11 */
    tu_assert_golden(VECTORS[_i]);
}
END_TEST

/* The two quadratic devices of the hand example (header), d = 1. */
static tb_case *hand_case(void)
{
    tb_case *c = tb_quadratic(1, 2);
    tb_quad(c, 0, (const double[]){2.5}, (const double[]){1.5}, 3);
    tb_quad(c, 1, (const double[]){0.75}, (const double[]){-2.0}, 5);
    c->hyper.eta = 0.25;
    c->hyper.feddyn.alpha = 0.375;
    return c;
}

/* The value of the `which`-th record (0-based) of kind and name in tj,
 * entry q; NAN when there is none. */
static double rec(const pflref_trajectory *tj, pflref_event_kind kind,
                  const char *name, long client, size_t which, size_t q)
{
    size_t seen = 0;
    for (size_t r = 0; r < tj->count; r++) {
        const pflref_record *rc = &tj->records[r];
        if (rc->kind != kind || strcmp(rc->name, name) != 0 ||
            (client != -2 && rc->client != client))
            continue;
        if (seen++ == which)
            return tj->values[rc->offset + q];
    }
    return NAN;
}

/* How many records of kind and name (client: −2 any) tj holds. */
static size_t count(const pflref_trajectory *tj, pflref_event_kind kind,
                    const char *name, long client)
{
    size_t n = 0;
    for (size_t r = 0; r < tj->count; r++)
        n += tj->records[r].kind == kind &&
             strcmp(tj->records[r].name, name) == 0 &&
             (client == -2 || tj->records[r].client == client);
    return n;
}

/* The hand example, every value exact; the device outside P_t keeps its
 * ∇L_k (no record, and h stays their mean). */
START_TEST(test_hand_example)
{
    /* req: feddyn.alg1.l1, feddyn.alg1.l5, feddyn.alg1.l6 */
    /* req: feddyn.alg1.l9, feddyn.alg1.l10, feddyn.alg1.l11 */
    /* req: feddyn.key_property */
    tb_case *c = hand_case();
    tb_round(c, "0", "0");
    tb_round(c, "1", "0");
    pflref_trajectory tj;
    pflref_run_result *res = tb_run_recorded(c, "feddyn", &tj);
    const pflref_event_kind N = PFLREF_EV_NOTE, S = PFLREF_EV_SERVER;
    ck_assert_double_eq(rec(&tj, PFLREF_EV_CLIENT_END, "theta_k", 0, 0, 0),
                        0.9375);
    ck_assert_double_eq(rec(&tj, N, "grad_L", 0, 0, 0), -0.3515625);
    ck_assert_double_eq(rec(&tj, N, "h", -1, 0, 0), -0.17578125);
    ck_assert_double_eq(rec(&tj, S, "w", -1, 0, 0), 1.40625);
    ck_assert_double_eq(rec(&tj, PFLREF_EV_CLIENT_END, "theta_k", 1, 0, 0),
                        0.767578125);
    ck_assert_double_eq(rec(&tj, N, "grad_L", 1, 0, 0), 0.239501953125);
    ck_assert_double_eq(rec(&tj, N, "h", -1, 1, 0), -0.0560302734375);
    ck_assert_double_eq(rec(&tj, S, "w", -1, 1, 0), 0.9169921875);
    ck_assert_double_eq(res->w[0], 0.9169921875);
    /* device 0 sat out round 1: one grad_L record, and h^1 is still the
     * mean of both states */
    ck_assert_uint_eq(count(&tj, N, "grad_L", 0), 1);
    ck_assert_double_eq(rec(&tj, N, "h", -1, 1, 0),
                        0.5 * (-0.3515625 + 0.239501953125));
    pflref_trajectory_free(&tj);
    pflref_run_result_free(res);
    tb_free(c);
}
END_TEST

/* l. 5's linear term: a device that comes back steps on
 * ∇f − ∇L_k(θ_k^{t−1}) + α(θ − θ^{t−1}); with one step from θ^{t−1} the
 * prox term is 0, so its first step is θ^{t−1} − η(∇f(θ^{t−1}) − ∇L_k). */
START_TEST(test_linear_term_on_return)
{
    /* req: feddyn.alg1.l4, feddyn.alg1.l5, feddyn.alg1.l8 */
    tb_case *c = hand_case();
    tb_round(c, "0", "0");
    tb_round(c, "1", "0");
    tb_round(c, "0", "0");
    pflref_trajectory tj;
    pflref_run_result *res = tb_run_recorded(c, "feddyn", &tj);
    const double w2 = 0.9169921875, grad_L0 = -0.3515625;
    const double want = w2 - 0.25 * (2.5 * (w2 - 1.5) - grad_L0);
    const double got = rec(&tj, PFLREF_EV_CLIENT_END, "theta_k", 0, 1, 0);
    ck_assert_msg(fabs(got - want) <= 1e-15, "θ_0 in round 2: %.17g, want "
                  "%.17g (the stale ∇L_0 as the linear term)", got, want);
    pflref_trajectory_free(&tj);
    pflref_run_result_free(res);
    tb_free(c);
}
END_TEST

/* feddyn.h_sum = literal subtracts θ^{t−1} once: with |P_t| = 2 of m = 2
 * its sum is the differences' plus θ^{t−1}, so in round 0
 * h_literal − h_differences = −α (1/m) θ⁰. */
START_TEST(test_h_sum_literal)
{
    /* req: feddyn.alg1.l10 */
    double h[2];
    for (int lit = 0; lit < 2; lit++) {
        tb_case *c = hand_case();
        tb_w0(c, (const double[]){0.5});
        c->hyper.feddyn.h_sum = lit ? PFLREF_FEDDYN_H_SUM_LITERAL
                                    : PFLREF_FEDDYN_H_SUM_DIFFERENCES;
        tb_round(c, "0 1", "0", "0");
        pflref_trajectory tj;
        pflref_run_result *res = tb_run_recorded(c, "feddyn", &tj);
        h[lit] = rec(&tj, PFLREF_EV_NOTE, "h", -1, 0, 0);
        pflref_trajectory_free(&tj);
        pflref_run_result_free(res);
        tb_free(c);
    }
    ck_assert_msg(fabs(h[1] - h[0] + 0.375 * 0.5 * 0.5) <= 1e-15,
                  "literal %.17g, differences %.17g", h[1], h[0]);
}
END_TEST

/* feddyn.prox = norm_half: no pull at a round's first step (θ = θ^{t−1}),
 * then (α/2) sign(θ − θ^{t−1}) in one dimension. */
START_TEST(test_prox_norm_half)
{
    /* req: feddyn.alg1.l5, feddyn.preset.pfllib */
    tb_case *c = hand_case();
    tb_preset(c, "feddyn", "pfllib");
    ck_assert_int_eq(c->hyper.feddyn.prox, PFLREF_FEDDYN_PROX_NORM_HALF);
    tb_round(c, "0", "0 | 0");
    pflref_trajectory tj;
    pflref_run_result *res = tb_run_recorded(c, "feddyn", &tj);
    const double eta = 0.25, alpha = 0.375;
    const double x1 = 0.0 - eta * 2.5 * (0.0 - 1.5);          /* 0.9375 */
    const double x2 = x1 - eta * (2.5 * (x1 - 1.5) + 0.5 * alpha);
    ck_assert_double_eq(rec(&tj, PFLREF_EV_STEP, "theta_k", 0, 0, 0), x1);
    ck_assert_msg(fabs(rec(&tj, PFLREF_EV_STEP, "theta_k", 0, 1, 0) - x2)
                      <= 1e-15, "second step: want %.17g", x2);
    pflref_trajectory_free(&tj);
    pflref_run_result_free(res);
    tb_free(c);
}
END_TEST

/* feddyn.alpha_k = size_scaled: α_k = α / (n_k m / Σ n_j) in l. 6
 * (n = 3, 5: α_0 = 4α/3, α_1 = 4α/5); the server's h keeps α. */
START_TEST(test_alpha_k_size_scaled)
{
    /* req: feddyn.alg1.l6, feddyn.preset.official */
    tb_case *c = hand_case();
    c->hyper.feddyn.alpha_k = PFLREF_FEDDYN_ALPHA_K_SIZE_SCALED;
    tb_round(c, "0 1", "0", "0");
    pflref_trajectory tj;
    pflref_run_result *res = tb_run_recorded(c, "feddyn", &tj);
    const double alpha = 0.375;
    const double a[2] = {alpha * 8.0 / 6.0, alpha * 8.0 / 10.0};
    double sum = 0.0;
    for (long k = 0; k < 2; k++) {
        const double x = rec(&tj, PFLREF_EV_CLIENT_END, "theta_k", k, 0, 0);
        const double g = rec(&tj, PFLREF_EV_NOTE, "grad_L", k, 0, 0);
        ck_assert_msg(fabs(g + a[k] * x) <= 1e-15, "device %ld: ∇L_k %.17g, "
                      "want −α_k θ_k = %.17g", k, g, -a[k] * x);
        sum += x;
    }
    ck_assert_msg(fabs(rec(&tj, PFLREF_EV_NOTE, "h", -1, 0, 0) +
                       alpha * 0.5 * sum) <= 1e-15, "h with α, not α_k");
    pflref_trajectory_free(&tj);
    pflref_run_result_free(res);
    tb_free(c);
    /* the official preset also sets the weight decay */
    c = hand_case();
    tb_preset(c, "feddyn", "official");
    ck_assert_int_eq(c->hyper.feddyn.alpha_k,
                     PFLREF_FEDDYN_ALPHA_K_SIZE_SCALED);
    ck_assert_double_eq(c->hyper.opt.weight_decay, 0.001);
    tb_free(c);
}
END_TEST

/* A loader that hands back a recorded run's records, with round 0's h
 * moved by DELTA (the candidate's state, pflref_state_loader). */
#define DELTA 0.0625
static int load_moved(void *ctx, pflref_event_kind kind, const char *what,
                      long round, long client, double *dst, size_t n)
{
    const pflref_trajectory *tj = ctx;
    const pflref_record *best = NULL;
    for (size_t r = 0; r < tj->count; r++) {
        const pflref_record *rc = &tj->records[r];
        if (rc->kind == kind && strcmp(rc->name, what) == 0 &&
            rc->round <= round && rc->len == n &&
            (client < 0 || rc->client == client) &&
            (kind == PFLREF_EV_SERVER ? rc->round == round
                                      : best == NULL ||
                                            rc->round >= best->round))
            best = rc;
    }
    if (best == NULL)
        return 0;
    memcpy(dst, tj->values + best->offset, n * sizeof *dst);
    if (strcmp(what, "h") == 0 && best->round == 0)
        dst[0] += DELTA;
    return 1;
}

/* check --resync reloads h (and every ∇L_k): a candidate whose h^0 is
 * off by δ gets round 1 recomputed from it, so round 1's h moves by δ and
 * its θ¹ by −δ/α while the devices' work does not change. */
START_TEST(test_resync_loads_state)
{
    /* req: feddyn.alg1.l9, feddyn.alg1.l10, feddyn.alg1.l11 */
    tb_case *c = hand_case();
    tb_round(c, "0", "0");
    tb_round(c, "1", "0");
    tb_round(c, "0 1", "0", "0");
    pflref_trajectory ref, again;
    pflref_run_result *res = tb_run_recorded(c, "feddyn", &ref);
    pflref_trajectory_init(&again, PFLREF_RECORD_STEP);
    const pflref_trace sink = {pflref_trajectory_emit, &again};
    pflref_error err;
    ck_assert_int_eq(pflref_run_resync(c->problem,
                                       pflref_algorithm_find("feddyn"),
                                       &c->hyper, c->schedule, c->w0,
                                       load_moved, &ref, &sink, &err),
                     PFLREF_OK);
    const pflref_event_kind N = PFLREF_EV_NOTE, S = PFLREF_EV_SERVER;
    ck_assert_double_eq(rec(&again, N, "h", -1, 1, 0),
                        rec(&ref, N, "h", -1, 1, 0) + DELTA);
    ck_assert_msg(fabs(rec(&again, S, "w", -1, 1, 0) -
                       (rec(&ref, S, "w", -1, 1, 0) - DELTA / 0.375)) <=
                      1e-15, "θ¹ must move by −δ/α");
    ck_assert_double_eq(rec(&again, N, "grad_L", 1, 0, 0),
                        rec(&ref, N, "grad_L", 1, 0, 0));
    /* round 2 restarts from the reference's own state after round 1, so
     * device 0 (its ∇L_0 loaded from round 0) computes the reference's
     * values */
    ck_assert_double_eq(rec(&again, N, "grad_L", 0, 1, 0),
                        rec(&ref, N, "grad_L", 0, 1, 0));
    pflref_trajectory_free(&again);
    pflref_trajectory_free(&ref);
    pflref_run_result_free(res);
    tb_free(c);
}
END_TEST

/* α must be given, finite and > 0 (l. 11 divides by it); η likewise. */
START_TEST(test_bad_hyperparameters)
{
    const double bad[] = {NAN, 0.0, -0.5, INFINITY};
    pflref_error err;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tb_case *c = hand_case();
        c->hyper.feddyn.alpha = bad[i];
        tb_round(c, "0", "0");
        tb_run_error(c, "feddyn", PFLREF_EINVAL, &err);
        ck_assert_str_eq(err.where, "algorithm.hyperparameters.feddyn.alpha");
        tb_free(c);
    }
    tb_case *c = hand_case();
    c->hyper.eta = NAN;
    tb_round(c, "0", "0");
    tb_run_error(c, "feddyn", PFLREF_EINVAL, &err);
    ck_assert_str_eq(err.where, "algorithm.hyperparameters.eta");
    tb_free(c);
}
END_TEST

Suite *feddyn_suite(void)
{
    Suite *s = suite_create("feddyn");
    TCase *tc = tcase_create("feddyn");
    tcase_add_loop_test(tc, test_worked_vectors, 0,
                        (int)(sizeof VECTORS / sizeof VECTORS[0]));
    tcase_add_test(tc, test_hand_example);
    tcase_add_test(tc, test_linear_term_on_return);
    tcase_add_test(tc, test_h_sum_literal);
    tcase_add_test(tc, test_prox_norm_half);
    tcase_add_test(tc, test_alpha_k_size_scaled);
    tcase_add_test(tc, test_resync_loads_state);
    tcase_add_test(tc, test_bad_hyperparameters);
    suite_add_tcase(s, tc);
    return s;
}
