/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_fedamp.c: FedAMP (ref/algorithms/fedamp.c) against its golden
 * vectors (golden/fedamp/, computed by golden/pflref_exact_fedamp.py) and
 * its properties: the message u_i^k in closed form with a stale peer, a
 * negative ξ_{i,i} allowed, the pfllib preset as local training, λ = 0 as
 * local training from u_i^k, the decay of η under lr.* counted by
 * rounds or by a client's own trainings, and every refusal of the
 * hyperparameters. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "suites.h"
#include "testutil.h"
#include "builder.h"

static const char *const VECTORS[] = {
    "golden/fedamp/worked-paper-partial.json",
    "golden/fedamp/worked-negative-self.json",
    "golden/fedamp/worked-peers-previous.json",
    "golden/fedamp/worked-start-own.json",
    "golden/fedamp/worked-detached.json",
    "golden/fedamp/worked-pfllib.json",
    "golden/fedamp/worked-pfllib-ld.json",
    "golden/fedamp/worked-paper-ld.json",
};

/* Every vector is reproduced: every expected quantity was emitted and is
 * within tolerance. */
START_TEST(test_worked_vectors)
{
    /* req: fedamp.alg1.l3, fedamp.alg1.l5, fedamp.eq_a */
    tu_assert_golden(VECTORS[_i]);
}
END_TEST

/* The NOTE record `name` of client i in round t (first match). */
static size_t note_of(const pflref_trajectory *tj, const char *name, long t,
                      long i, double *out, size_t cap)
{
    for (size_t k = 0; k < tj->count; k++) {
        const pflref_record *rc = &tj->records[k];
        if (rc->kind != PFLREF_EV_NOTE || strcmp(rc->name, name) != 0 ||
            rc->round != t || rc->client != i)
            continue;
        const size_t n = rc->len < cap ? rc->len : cap;
        memcpy(out, tj->values + rc->offset, n * sizeof *out);
        return n;
    }
    return 0;
}

/* Three quadratic clients f_i(w) = ½ a_i (w − c_i)², d = 1: a = (1.5,
 * 0.75, 1.25), c = (2, −1, 0.5), w⁰ = 0.25; α_k = 0.3, λ = 0.45, σ = 0.8,
 * η = 0.2.  Round 0: client 0 alone, two steps; round 1: client 1 alone,
 * two steps (client 2 never trains: its w_2 = w⁰ stays a peer). */
static tb_case *three_clients(void)
{
    tb_case *c = tb_quadratic(1, 3);
    tb_quad(c, 0, (const double[]){1.5}, (const double[]){2.0}, 3);
    tb_quad(c, 1, (const double[]){0.75}, (const double[]){-1.0}, 5);
    tb_quad(c, 2, (const double[]){1.25}, (const double[]){0.5}, 4);
    tb_w0(c, (const double[]){0.25});
    c->hyper.eta = 0.2;
    c->hyper.fedamp.alpha_k = 0.3;
    c->hyper.fedamp.lambda = 0.45;
    c->hyper.fedamp.sigma = 0.8;
    tb_round(c, "0", "0 | 0");
    tb_round(c, "1", "0 | 0");
    return c;
}

/* Two steps from u of w ← w − η (a (w − c) + μ (w − u)): the first has no
 * proximal pull (w = u). */
static double two_steps(double a, double cc, double u, double eta, double mu)
{
    const double w1 = u - eta * (a * (u - cc));
    return w1 - eta * (a * (w1 - cc) + mu * (w1 - u));
}

/* Round 0: every w_j = w⁰, so ξ_{0,j} = α/σ, ξ_{0,0} = 1 − 2α/σ and u_0 =
 * w⁰; round 1: client 1's message weighs w_0¹ (moved) and the stale w_2 =
 * w⁰ by α e^{−d/σ}/σ, the derivation of Alg. 1 l. 3 written out here. */
START_TEST(test_message_closed_form)
{
    /* req: fedamp.alg1.l3, fedamp.alg1.l5, fedamp.eq_a */
    tb_case *c = three_clients();
    pflref_trajectory tj;
    pflref_run_result *res = tb_run_recorded(c, "fedamp", &tj);
    const double a = 0.3, s = 0.8, w0 = 0.25, mu = 0.45 / 0.3;
    double xi[3], u;
    ck_assert_uint_eq(note_of(&tj, "xi", 0, 0, xi, 3), 3);
    ck_assert_double_eq_tol(xi[1], a / s, 1e-15);
    ck_assert_double_eq_tol(xi[0], 1.0 - 2.0 * a / s, 1e-15);
    const double w_0 = two_steps(1.5, 2.0, w0, 0.2, mu);
    ck_assert_double_eq_tol(res->v[0], w_0, 1e-15);
    /* round 1, client 1 (w_1 = w⁰ still) */
    const double x0 = a * exp(-(w0 - w_0) * (w0 - w_0) / s) / s;
    const double x2 = a / s;
    ck_assert_uint_eq(note_of(&tj, "xi", 1, 1, xi, 3), 3);
    ck_assert_double_eq_tol(xi[0], x0, 1e-15);
    ck_assert_double_eq_tol(xi[2], x2, 1e-15);
    ck_assert_double_eq_tol(xi[1], 1.0 - x0 - x2, 1e-15);
    const double u_1 = x0 * w_0 + (1.0 - x0 - x2) * w0 + x2 * w0;
    ck_assert_uint_eq(note_of(&tj, "u", 1, 1, &u, 1), 1);
    ck_assert_double_eq_tol(u, u_1, 1e-15);
    ck_assert_double_eq_tol(res->v[1], two_steps(0.75, -1.0, u_1, 0.2, mu),
                            1e-15);
    /* client 2 never trained: w_2 = w⁰, and client 0 kept its round-0 w */
    ck_assert(res->v[2] == w0);
    ck_assert_double_eq_tol(res->v[0], w_0, 1e-15);
    pflref_trajectory_free(&tj);
    pflref_run_result_free(res);
    tb_free(c);
}
END_TEST

/* α_k/σ = 0.9 with two peers: ξ_{i,i} = 1 − 1.8 < 0 in round 0, and the
 * run goes on (u_i^k the affine combination l. 3 writes). */
START_TEST(test_negative_self_weight_allowed)
{
    /* req: fedamp.alg1.l3 */
    tb_case *c = three_clients();
    c->hyper.fedamp.alpha_k = 0.72;
    pflref_trajectory tj;
    pflref_run_result *res = tb_run_recorded(c, "fedamp", &tj);
    double xi[3];
    ck_assert_uint_eq(note_of(&tj, "xi", 0, 0, xi, 3), 3);
    ck_assert_double_eq_tol(xi[0], 1.0 - 2.0 * 0.9, 1e-15);
    ck_assert_double_eq_tol(xi[0] + xi[1] + xi[2], 1.0, 1e-15);
    ck_assert(isfinite(res->v[0]) && isfinite(res->v[1]));
    pflref_trajectory_free(&tj);
    pflref_run_result_free(res);
    tb_free(c);
}
END_TEST

/* Preset pfllib (the term detached, the steps from w_i^{k−1}): the models
 * are local training's, bit for bit, whatever α_k, λ, σ. */
START_TEST(test_pfllib_is_local_training)
{
    /* req: fedamp.preset.pfllib */
    tb_case *c = three_clients();
    tb_round(c, "0 1 2", "0", "0 | 0", "0");
    pflref_run_result *local = tb_run(c, "local", NULL);
    tb_preset(c, "fedamp", "pfllib");
    pflref_run_result *amp = tb_run(c, "fedamp", NULL);
    ck_assert_mem_eq(amp->v, local->v, 3 * sizeof(double));
    ck_assert(fabs(amp->v[0] - 0.25) > 0.1);
    pflref_run_result_free(amp);
    /* the paper's reading is not */
    c->hyper.fedamp.start = PFLREF_FEDAMP_START_MESSAGE;
    c->hyper.fedamp.prox = PFLREF_FEDAMP_PROX_SQUARED;
    amp = tb_run(c, "fedamp", NULL);
    ck_assert(fabs(amp->v[1] - local->v[1]) > 1e-3);
    pflref_run_result_free(amp);
    pflref_run_result_free(local);
    tb_free(c);
}
END_TEST

/* lr.schedule = exponential, γ = 0.5, preset pfllib (plain steps from
 * w_i^{k−1}, lr.count = trainings): client 1 trains first in round 1, so
 * its η is undecayed (PFLlib steps a client's ExponentialLR after its own
 * train(), clientamp.py:50-51); counted by rounds it is η γ. */
START_TEST(test_lr_decay_counts_trainings)
{
    /* req: fedamp.preset.pfllib */
    tb_case *c = three_clients();
    tb_preset(c, "fedamp", "pfllib");
    c->hyper.lr.schedule = PFLREF_LR_EXPONENTIAL;
    c->hyper.lr.gamma = 0.5;
    pflref_run_result *res = tb_run(c, "fedamp", NULL);
    const double w0 = 0.25;
    ck_assert_double_eq_tol(res->v[0], two_steps(1.5, 2.0, w0, 0.2, 0.0),
                            1e-15);
    ck_assert_double_eq_tol(res->v[1], two_steps(0.75, -1.0, w0, 0.2, 0.0),
                            1e-15);
    pflref_run_result_free(res);
    c->hyper.lr.count = PFLREF_LR_COUNT_ROUNDS;
    res = tb_run(c, "fedamp", NULL);
    ck_assert_double_eq_tol(res->v[1], two_steps(0.75, -1.0, w0, 0.1, 0.0),
                            1e-15);
    pflref_run_result_free(res);
    tb_free(c);
}
END_TEST

/* λ = 0: plain steps from u_i^k (the proximal weight λ/α_k is 0). */
START_TEST(test_lambda0_plain_steps_from_message)
{
    /* req: fedamp.alg1.l5 */
    tb_case *c = three_clients();
    c->hyper.fedamp.lambda = 0.0;
    pflref_trajectory tj;
    pflref_run_result *res = tb_run_recorded(c, "fedamp", &tj);
    double u;
    ck_assert_uint_eq(note_of(&tj, "u", 1, 1, &u, 1), 1);
    ck_assert_double_eq_tol(res->v[1], two_steps(0.75, -1.0, u, 0.2, 0.0),
                            1e-15);
    pflref_trajectory_free(&tj);
    pflref_run_result_free(res);
    tb_free(c);
}
END_TEST

/* α_k, σ > 0 and λ ≥ 0, finite: the registry's setter refuses each bad
 * value naming the field; all three are required (NaN by default). */
START_TEST(test_hyper_refused)
{
    static const struct {
        const char *name;
        double value;
    } bad[] = {
        {"fedamp.sigma", 0.0},      {"fedamp.sigma", -0.5},
        {"fedamp.sigma", NAN},      {"fedamp.sigma", INFINITY},
        {"fedamp.alpha_k", 0.0},    {"fedamp.alpha_k", -0.1},
        {"fedamp.alpha_k", NAN},    {"fedamp.lambda", -0.25},
        {"fedamp.lambda", INFINITY},
    };
    for (size_t q = 0; q < sizeof bad / sizeof bad[0]; q++) {
        const pflref_param *p = pflref_param_find_for(bad[q].name, "fedamp");
        ck_assert_ptr_nonnull(p);
        char where[96];
        snprintf(where, sizeof where, "algorithm.hyperparameters.%s",
                 bad[q].name);
        pflref_hyper h;
        pflref_hyper_defaults(&h);
        pflref_error err = {0};
        ck_assert_int_eq(pflref_hyper_set_real(&h, p, bad[q].value, where,
                                               &err),
                         PFLREF_EINVAL);
        ck_assert_str_eq(err.where, where);
    }
    pflref_hyper h;
    pflref_hyper_defaults(&h);
    ck_assert(isnan(h.fedamp.alpha_k) && isnan(h.fedamp.lambda) &&
              isnan(h.fedamp.sigma));
    ck_assert_int_eq(h.fedamp.peers, PFLREF_FEDAMP_PEERS_ALL);
    ck_assert_int_eq(h.fedamp.start, PFLREF_FEDAMP_START_MESSAGE);
    ck_assert_int_eq(h.fedamp.prox, PFLREF_FEDAMP_PROX_SQUARED);
    /* a run without σ is refused before round 0 */
    tb_case *c = three_clients();
    c->hyper.fedamp.sigma = NAN;
    pflref_error err = {0};
    tb_run_error(c, "fedamp", PFLREF_EINVAL, &err);
    ck_assert(strstr(err.where, "fedamp.sigma") != NULL);
    tb_free(c);
}
END_TEST

Suite *fedamp_suite(void)
{
    Suite *s = suite_create("fedamp");
    TCase *tc = tcase_create("fedamp");
    tcase_add_loop_test(tc, test_worked_vectors, 0,
                        (int)(sizeof VECTORS / sizeof VECTORS[0]));
    tcase_add_test(tc, test_message_closed_form);
    tcase_add_test(tc, test_negative_self_weight_allowed);
    tcase_add_test(tc, test_pfllib_is_local_training);
    tcase_add_test(tc, test_lambda0_plain_steps_from_message);
    tcase_add_test(tc, test_lr_decay_counts_trainings);
    tcase_add_test(tc, test_hyper_refused);
    suite_add_tcase(s, tc);
    return s;
}
