/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_fedprox.c: FedProx (ref/algorithms/fedprox.c) against its
 * golden vectors (golden/fedprox/, exact fractions by
 * golden/pflref_exact_fedprox.py) and its properties: the weights c_k/K of
 * repeated draws, the uniform_weighted reading, μ = 0 against FedAvg, the
 * draws of a generated schedule, and every refusal of the draws. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "suites.h"
#include "testutil.h"
#include "builder.h"

static const char *const VECTORS[] = {
    "golden/fedprox/worked-paper-repeat.json",
    "golden/fedprox/worked-uniform-weighted.json",
    "golden/fedprox/worked-official-straggler.json",
    "golden/fedprox/worked-paper-straggler.json",
    "golden/fedprox/worked-mu0.json",
    "golden/fedprox/worked-momentum-client.json",
    "golden/fedprox/worked-pfllib-decay.json",
};

/* Every vector is reproduced: every expected quantity was emitted and is
 * within tolerance. */
START_TEST(test_worked_vectors)
{
    /* req: fedprox.alg2.l3, fedprox.alg2.l5, fedprox.alg2.l7 */
    tu_assert_golden(VECTORS[_i]);
}
END_TEST

/* Round t's draws := the K ids of ids (the schedule frees them). */
static void set_draws(pflref_schedule *s, size_t t, const size_t *ids,
                      size_t K)
{
    pflref_round_plan *r = &s->rounds[t];
    free(r->draws);
    r->draws = malloc(K * sizeof *r->draws);
    ck_assert_ptr_nonnull(r->draws);
    memcpy(r->draws, ids, K * sizeof *ids);
    r->n_draws = K;
}

/* Two quadratic devices f_k(w) = ½ a_k (w − c_k)², d = 1: a = (1.5, 0.75),
 * c = (2, −1), n = (3, 5); one round, each device two full-batch steps,
 * η = 0.2, μ = 0.6, w⁰ = 0.25. */
static tb_case *two_devices(void)
{
    tb_case *c = tb_quadratic(1, 2);
    tb_quad(c, 0, (const double[]){1.5}, (const double[]){2.0}, 3);
    tb_quad(c, 1, (const double[]){0.75}, (const double[]){-1.0}, 5);
    tb_w0(c, (const double[]){0.25});
    c->hyper.eta = 0.2;
    c->hyper.fedprox.mu = 0.6;
    tb_round(c, "0 1", "0 | 0", "0 | 0");
    return c;
}

/* Device k's two steps from w = w⁰ (the prox term is 0 at the first):
 *   w₁ = w⁰ − η a (w⁰ − c);  w₂ = w₁ − η (a (w₁ − c) + μ (w₁ − w⁰)). */
static double two_steps(double a, double cc, double w0, double eta, double mu)
{
    const double w1 = w0 - eta * (a * (w0 - cc));
    return w1 - eta * (a * (w1 - cc) + mu * (w1 - w0));
}

/* Draws [0, 0, 1]: device 0 trains once and weighs 2/3, device 1 1/3
 * (Alg. 2 l. 7 over the K = 3 draws), not n_k-weighted (3/8, 5/8) nor
 * 1/2 each. */
START_TEST(test_repeated_draw_weighs_twice)
{
    /* req: fedprox.alg2.l7 */
    tb_case *c = two_devices();
    pflref_schedule *s = tb_schedule(c, "fedprox");
    set_draws(s, 0, (const size_t[]){0, 0, 1}, 3);
    pflref_run_result *res = tb_run(c, "fedprox", NULL);
    const double w_0 = two_steps(1.5, 2.0, 0.25, 0.2, 0.6);
    const double w_1 = two_steps(0.75, -1.0, 0.25, 0.2, 0.6);
    const double want = (2.0 / 3.0) * w_0 + (1.0 / 3.0) * w_1;
    ck_assert_msg(fabs(res->w[0] - want) <= 1e-15,
                  "w¹ = %.17g, expected (2/3) w_0 + (1/3) w_1 = %.17g",
                  res->w[0], want);
    ck_assert_msg(fabs(res->w[0] - (0.5 * w_0 + 0.5 * w_1)) > 1e-3,
                  "the repeated draw was counted once");
    pflref_run_result_free(res);
    tb_free(c);
}
END_TEST

/* fedprox.sampling = uniform_weighted: weights n_k / Σ n_j = (3/8, 5/8),
 * and the round's draws (here a misleading [1, 1, 0]) are not read. */
START_TEST(test_uniform_weighted_reads_sizes)
{
    /* req: fedprox.eq1 */
    tb_case *c = two_devices();
    c->hyper.fedprox.sampling = PFLREF_FEDPROX_SAMPLING_UNIFORM_WEIGHTED;
    pflref_schedule *s = tb_schedule(c, "fedprox");
    set_draws(s, 0, (const size_t[]){1, 1, 0}, 3);
    pflref_run_result *res = tb_run(c, "fedprox", NULL);
    const double want = (3.0 / 8.0) * two_steps(1.5, 2.0, 0.25, 0.2, 0.6) +
                        (5.0 / 8.0) * two_steps(0.75, -1.0, 0.25, 0.2, 0.6);
    ck_assert_msg(fabs(res->w[0] - want) <= 1e-15, "w¹ = %.17g, want %.17g",
                  res->w[0], want);
    pflref_run_result_free(res);
    tb_free(c);
}
END_TEST

/* μ = 0 under uniform_weighted is FedAvg with weights n_k/m_t (McMahan et
 * al., Alg. 1): the same steps and the same sum in the same order, so the
 * same bits, round after round. */
START_TEST(test_mu0_uniform_weighted_is_fedavg)
{
    /* req: fedprox.alg2.l5 */
    tb_case *c = two_devices();
    tb_round(c, "1", "0 | 0 | 0");
    c->hyper.fedprox.mu = 0.0;
    c->hyper.fedprox.sampling = PFLREF_FEDPROX_SAMPLING_UNIFORM_WEIGHTED;
    pflref_run_result *prox = tb_run(c, "fedprox", NULL);
    pflref_run_result *avg = tb_run(c, "fedavg", NULL);
    ck_assert_msg(prox->w[0] == avg->w[0], "fedprox %.17g, fedavg %.17g",
                  prox->w[0], avg->w[0]);
    pflref_run_result_free(prox);
    pflref_run_result_free(avg);
    /* and μ > 0 moves it */
    c->hyper.fedprox.mu = 0.6;
    prox = tb_run(c, "fedprox", NULL);
    avg = tb_run(c, "fedavg", NULL);
    ck_assert(fabs(prox->w[0] - avg->w[0]) > 1e-3);
    pflref_run_result_free(prox);
    pflref_run_result_free(avg);
    tb_free(c);
}
END_TEST

/* Every refusal of the draws under paper sampling names its place. */
START_TEST(test_draws_refused)
{
    /* req: fedprox.alg2.l3 */
    static const struct {
        size_t K;
        size_t ids[3];
        const char *where;
        const char *says;
    } bad[] = {
        {0, {0}, "schedule.rounds[0].draws", "needs the round's K draws"},
        {3, {0, 0, 0}, "schedule.rounds[0].clients[1]",
         "participant 1 is not among the round's draws"},
    };
    for (size_t q = 0; q < sizeof bad / sizeof bad[0]; q++) {
        tb_case *c = two_devices();
        pflref_schedule *s = tb_schedule(c, "fedprox");
        if (bad[q].K > 0)
            set_draws(s, 0, bad[q].ids, bad[q].K);
        pflref_error err = {0};
        tb_run_error(c, "fedprox", PFLREF_EINVAL, &err);
        ck_assert_str_eq(err.where, bad[q].where);
        ck_assert_msg(strstr(err.message, bad[q].says) != NULL, "%s",
                      err.message);
        tb_free(c);
    }
    /* a drawn id that is no participant */
    tb_case *c = tb_quadratic(1, 3);
    for (size_t i = 0; i < 3; i++)
        tb_quad(c, i, (const double[]){1.5}, (const double[]){2.0}, i + 2);
    c->hyper.eta = 0.2;
    c->hyper.fedprox.mu = 0.6;
    tb_round(c, "0 1", "0", "0");
    tb_round(c, "0 1", "0", "0");
    pflref_schedule *s = tb_schedule(c, "fedprox");
    set_draws(s, 0, (const size_t[]){0, 1, 2}, 3);
    pflref_error err = {0};
    tb_run_error(c, "fedprox", PFLREF_EINVAL, &err);
    ck_assert_str_eq(err.where, "schedule.rounds[0].draws[2]");
    ck_assert(strstr(err.message, "drawn client 2 is not a participant"));
    /* K differs between rounds */
    set_draws(s, 0, (const size_t[]){0, 1, 1}, 3);
    set_draws(s, 1, (const size_t[]){1, 0}, 2);
    tb_run_error(c, "fedprox", PFLREF_EINVAL, &err);
    ck_assert_str_eq(err.where, "schedule.rounds[1].draws");
    ck_assert(strstr(err.message, "2 draws where round 0 has K = 3"));
    tb_free(c);
}
END_TEST

static const char GENERATED[] =
    "{\"format\": \"pflref-spec/1\", \"name\": \"draws\","
    " \"model\": {\"kind\": \"linear\", \"d\": 1, \"loss\": \"half_squared\","
    " \"bias\": false},"
    " \"problem\": {\"clients\": ["
    "  {\"X\": [[1.0], [1.0]], \"y\": [1.0, 3.0]},"
    "  {\"X\": [[1.0]], \"y\": [-2.0]},"
    "  {\"X\": [[1.0], [1.0], [1.0]], \"y\": [0.0, 4.0, 8.0]},"
    "  {\"X\": [[0.5]], \"y\": [1.5]}]},"
    " \"init\": {\"kind\": \"zeros\"},"
    " \"algorithm\": {\"name\": \"fedprox\", \"hyperparameters\":"
    "  {\"eta\": 0.3, \"fedprox.mu\": 0.7}},"
    " \"schedule\": {\"kind\": \"generate\", \"rounds\": 3,"
    "  \"clients_per_round\": 3, \"client_seed\": 5,"
    "  \"local\": {\"epochs\": 1, \"batch_size\": 1}},"
    " \"output\": {\"trajectory\": \"none\"}}";

/* A generated schedule under paper sampling draws K = 3 ids per round with
 * P(k) = n_k/n from client_seed (docs/sampling.md).  The draws below were
 * replayed with numpy, independently of the C: RandomState(5).randint(0,
 * 2**32, dtype=np.uint32) gives the raw outputs x, j = x // ⌊(2³² − 1)/7⌋
 * (redrawn while j ≥ 7) over the n = 2 + 1 + 3 + 1 samples, k the device
 * whose range holds j.  Each round keeps exactly its drawn devices, in
 * ascending order, with their batch lists (one epoch of batches of 1). */
START_TEST(test_generated_draws)
{
    /* req: fedprox.alg2.l3, fedprox.eq1 */
    static const size_t want[3][3] = {{0, 0, 3}, {2, 0, 1}, {3, 3, 2}};
    static const size_t clients[3][3] = {{0, 3}, {0, 1, 2}, {2, 3}};
    static const size_t m[3] = {2, 3, 2};
    static const size_t n[4] = {2, 1, 3, 1};
    pflref_spec *spec = tu_spec(GENERATED);
    const pflref_schedule *s = spec->schedule;
    ck_assert_uint_eq(s->T, 3);
    for (size_t t = 0; t < 3; t++) {
        const pflref_round_plan *r = &s->rounds[t];
        ck_assert_uint_eq(r->n_draws, 3);
        for (size_t q = 0; q < 3; q++)
            ck_assert_msg(r->draws[q] == want[t][q],
                          "round %zu draw %zu: %zu, numpy's %zu", t, q,
                          r->draws[q], want[t][q]);
        ck_assert_uint_eq(r->m, m[t]);
        ck_assert_uint_eq(r->n_selected, m[t]);
        for (size_t j = 0; j < m[t]; j++) {
            ck_assert_uint_eq(r->clients[j], clients[t][j]);
            ck_assert_uint_eq(r->batches[j].nsteps, n[clients[t][j]]);
        }
    }
    pflref_run_result *res = tu_run(spec, NULL);
    ck_assert(isfinite(res->w[0]));
    pflref_run_result_free(res);
    pflref_spec_free(spec);
}
END_TEST

/* μ must be finite and ≥ 0: the registry's setter refuses NaN, ∞ and a
 * negative value, naming the field (a spec cannot write NaN or ∞). */
START_TEST(test_mu_not_finite)
{
    const pflref_param *p = pflref_param_find_for("fedprox.mu", "fedprox");
    ck_assert_ptr_nonnull(p);
    const double bad[] = {NAN, INFINITY, -0.25};
    for (size_t q = 0; q < 3; q++) {
        pflref_hyper h;
        pflref_hyper_defaults(&h);
        pflref_error err = {0};
        ck_assert_int_eq(pflref_hyper_set_real(&h, p, bad[q],
                                               "algorithm.hyperparameters."
                                               "fedprox.mu", &err),
                         PFLREF_EINVAL);
        ck_assert_str_eq(err.where, "algorithm.hyperparameters.fedprox.mu");
        ck_assert(strstr(err.message, "fedprox.mu") != NULL);
    }
    pflref_hyper h;
    pflref_hyper_defaults(&h);
    ck_assert(isnan(h.fedprox.mu));   /* required: no default */
}
END_TEST

Suite *fedprox_suite(void)
{
    Suite *s = suite_create("fedprox");
    TCase *tc = tcase_create("fedprox");
    tcase_add_loop_test(tc, test_worked_vectors, 0,
                        (int)(sizeof VECTORS / sizeof VECTORS[0]));
    tcase_add_test(tc, test_repeated_draw_weighs_twice);
    tcase_add_test(tc, test_uniform_weighted_reads_sizes);
    tcase_add_test(tc, test_mu0_uniform_weighted_is_fedavg);
    tcase_add_test(tc, test_draws_refused);
    tcase_add_test(tc, test_generated_draws);
    tcase_add_test(tc, test_mu_not_finite);
    suite_add_tcase(s, tc);
    return s;
}
