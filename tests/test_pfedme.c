/* tests/test_pfedme.c: pFedMe (ref/pfedme.c).
 *
 * The worked example is shared/spec notes §2(g): f_i(θ) = ½(θ − c_i)²,
 * c = (4, −2), λ = 1, η_p = 1/4, K = 2, η = 1/2, R = 2, β = 1, w_0 = 0.
 * Every number in it is a dyadic rational with a small denominator, so
 * fp64 computes it exactly and the tests compare with ==.  The notes'
 * Appendix A script derives them in exact fractions.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "suites.h"
#include "testutil.h"

/* The notes' problem with extra algorithm fields (`alg`, JSON members after
 * the hyperparameters) and a schedule (JSON object). */
static pflref_spec *notes_spec(const char *clients, const char *hyper,
                               const char *alg, const char *schedule)
{
    char text[4096];
    snprintf(text, sizeof text,
             "{\"format\": \"pflref-spec/1\","
             " \"model\": {\"kind\": \"quadratic\", \"d\": 1},"
             " \"problem\": {\"clients\": %s},"
             " \"algorithm\": {\"name\": \"pfedme\", \"hyperparameters\":"
             " {\"lambda\": 1, \"eta_p\": 0.25, \"K\": 2, \"eta\": 0.5%s}%s},"
             " \"schedule\": %s}",
             clients != NULL ? clients
                             : "[{\"a\": [1], \"c\": [4]}, {\"a\": [1], \"c\": [-2]}]",
             hyper, alg,
             schedule != NULL ? schedule
                              : "{\"kind\": \"generate\", \"rounds\": 2,"
                                " \"local\": {\"steps\": 2}}");
    return tu_spec(text);
}

/* Run and return the final w (one parameter) and the final v of both
 * clients. */
static void run_notes(const char *hyper, const char *alg, const char *sched,
                      const char *clients, double *w, double v[2])
{
    pflref_spec *spec = notes_spec(clients, hyper, alg, sched);
    pflref_run_result *res = tu_run(spec, NULL);
    *w = res->w[0];
    v[0] = res->v[0];
    v[1] = res->v[1];
    pflref_run_result_free(res);
    pflref_spec_free(spec);
}

static const char *const ONE_ROUND =
    "{\"kind\": \"generate\", \"rounds\": 1, \"local\": {\"steps\": 2}}";

/* Paper reading (θ reset to w_{i,r}): w_1 = 87/256, w_2 = 36975/65536;
 * the personalised models are the last θ. */
START_TEST(test_notes_paper)
{
    double w, v[2];
    run_notes("", "", ONE_ROUND, NULL, &w, v);
    ck_assert_double_eq(w, 87.0 / 256.0);
    ck_assert_double_eq(v[0], 1.96875);
    ck_assert_double_eq(v[1], -0.984375);
    run_notes("", "", NULL, NULL, &w, v);
    ck_assert_double_eq(w, 36975.0 / 65536.0);
    /* PM (2.141326904, −0.8117980957): the θ recursion of round 2 */
    ck_assert_double_eq_tol(v[0], 2.141326904, 5e-10);
    ck_assert_double_eq_tol(v[1], -0.8117980957, 5e-11);
}
END_TEST

/* The official code's reading: θ warm-started, μ = 0: w_1 = 93/256,
 * w_2 = 38967/65536; the preset's μ = 0.001 gives the notes' row
 * 0.3631679893, 0.5943130991 (printed to 10 digits). */
START_TEST(test_notes_official)
{
    double w, v[2];
    run_notes(", \"pfedme.mu\": 0", ", \"preset\": \"official\"", ONE_ROUND,
              NULL, &w, v);
    ck_assert_double_eq(w, 93.0 / 256.0);
    /* personal_eval = local_w: the "personalised" models are w_{i,R} */
    ck_assert_double_eq(v[0], 1.453125);
    ck_assert_double_eq(v[1], -0.7265625);
    run_notes(", \"pfedme.mu\": 0", ", \"preset\": \"official\"", NULL, NULL,
              &w, v);
    ck_assert_double_eq(w, 38967.0 / 65536.0);
    run_notes("", ", \"preset\": \"official\"", ONE_ROUND, NULL, &w, v);
    ck_assert_double_eq_tol(w, 0.3631679893, 5e-11);
    run_notes("", ", \"preset\": \"official\"", NULL, NULL, &w, v);
    ck_assert_double_eq_tol(w, 0.5943130991, 5e-11);
}
END_TEST

/* β: w_{t+1} = (1 − β) w_t + β·avg; from w_0 = 0, β = 2 doubles the first
 * round's average (87/128); the notes' second round gives 0.8973999023. */
START_TEST(test_beta)
{
    double w1, w2, v[2];
    run_notes(", \"beta\": 2", "", ONE_ROUND, NULL, &w1, v);
    ck_assert_double_eq(w1, 2.0 * 87.0 / 256.0);
    run_notes(", \"beta\": 2", "", NULL, NULL, &w2, v);
    ck_assert_double_eq_tol(w2, 0.8973999023, 5e-11);
    run_notes(", \"beta\": 2, \"pfedme.mu\": 0", ", \"preset\": \"official\"",
              NULL, NULL, &w2, v);
    ck_assert_double_eq_tol(w2, 0.9252319336, 5e-11);
}
END_TEST

/* Sample weights with n = (1, 3) (official reading, μ = 0):
 * w_1 = (1.453125 − 3·0.7265625)/4 = −0.181640625. */
START_TEST(test_weights_samples)
{
    const char *clients =
        "[{\"a\": [1], \"c\": [4], \"n\": 1}, {\"a\": [1], \"c\": [-2], \"n\": 3}]";
    double w, v[2];
    run_notes(", \"pfedme.mu\": 0", ", \"preset\": \"official\"", ONE_ROUND,
              clients, &w, v);
    ck_assert_double_eq(w, -0.181640625);
    run_notes(", \"pfedme.mu\": 0", ", \"preset\": \"official\"", NULL,
              clients, &w, v);
    ck_assert_double_eq_tol(w, -0.2972946167, 5e-11);
    /* the paper's uniform weights ignore n */
    run_notes("", "", ONE_ROUND, clients, &w, v);
    ck_assert_double_eq(w, 87.0 / 256.0);
}
END_TEST

/* All clients train, only S^t is aggregated: S^1 = {0}, S^2 = {1} gives
 * w_1 = w_{1,R} = 1.359375 and w_2 = 0.2177124023 (notes §2(g)); both
 * clients' θ are updated every round. */
START_TEST(test_train_all_sampled_subset)
{
    const char *sched =
        "{\"kind\": \"given\", \"rounds\": ["
        " {\"clients\": [0, 1], \"selected\": [0], \"batches\": [[[0], [0]], [[0], [0]]]},"
        " {\"clients\": [0, 1], \"selected\": [1], \"batches\": [[[0], [0]], [[0], [0]]]}]}";
    double w, v[2];
    run_notes("", "", sched, NULL, &w, v);
    ck_assert_double_eq_tol(w, 0.2177124023, 5e-11);
    /* client 0's θ in round 2 starts from w_1 = 1.359375 ≠ 0 */
    ck_assert_double_ne(v[0], 1.96875);
    /* pfedme.train = all refuses a round in which not every client trains */
    const char *partial =
        "{\"kind\": \"given\", \"rounds\": ["
        " {\"clients\": [0], \"batches\": [[[0], [0]]]}]}";
    pflref_spec *spec = notes_spec(NULL, "", "", partial);
    pflref_error err;
    tu_run_error(spec, PFLREF_EINVAL, &err);
    ck_assert_str_eq(err.where, "schedule.rounds[0].clients");
    ck_assert_ptr_nonnull(strstr(err.message, "pfedme.train = all"));
    pflref_spec_free(spec);
}
END_TEST

/* pfedme.train = sampled: only S^t trains; a client outside it keeps its
 * personalised model (here the initial 0 for client 1). */
START_TEST(test_train_sampled)
{
    const char *sched =
        "{\"kind\": \"given\", \"rounds\": ["
        " {\"clients\": [0], \"batches\": [[[0], [0]]]}]}";
    double w, v[2];
    run_notes("", ", \"switches\": {\"pfedme.train\": \"sampled\"}", sched,
              NULL, &w, v);
    ck_assert_double_eq(w, 1.359375);
    ck_assert_double_eq(v[0], 1.96875);
    ck_assert_double_eq(v[1], 0.0);
}
END_TEST

/* pfedme.personal_eval: theta (last θ), local_w (w_{i,R}), global (w). */
START_TEST(test_personal_eval)
{
    double w, v[2];
    run_notes("", ", \"switches\": {\"pfedme.personal_eval\": \"local_w\"}",
              NULL, NULL, &w, v);
    ck_assert_double_eq(v[0], 103791.0 / 65536.0);
    ck_assert_double_eq(v[1], -29841.0 / 65536.0);
    run_notes("", ", \"switches\": {\"pfedme.personal_eval\": \"global\"}",
              NULL, NULL, &w, v);
    ck_assert_double_eq(v[0], 36975.0 / 65536.0);
    ck_assert_double_eq(v[1], 36975.0 / 65536.0);
}
END_TEST

/* The local update direction is λ(w − θ̂(w)), the gradient of the Moreau
 * envelope F_i(w) = min_θ f_i(θ) + (λ/2)‖θ − w‖².  For f = ½ a (θ − c)²
 * the envelope is (aλ / (2(a + λ))) (w − c)², so with the inner problem
 * solved to convergence (K = 200, η_p(a + λ) = 0.8), one local round
 * (R = 1) from w gives (w − w_{i,1})/η = aλ(w − c)/(a + λ). */
START_TEST(test_moreau_gradient)
{
    const double a = 2.385, c = 1.5, lambda = 1.9, eta = 0.125, w0 = -0.75;
    char text[1024];
    snprintf(text, sizeof text,
             "{\"format\": \"pflref-spec/1\","
             " \"model\": {\"kind\": \"quadratic\", \"d\": 1},"
             " \"problem\": {\"clients\": [{\"a\": [%.17g], \"c\": [%.17g]}]},"
             " \"init\": {\"kind\": \"given\", \"w\": [%.17g]},"
             " \"algorithm\": {\"name\": \"pfedme\", \"hyperparameters\":"
             " {\"lambda\": %.17g, \"eta_p\": %.17g, \"K\": 200, \"eta\": %.17g}},"
             " \"schedule\": {\"kind\": \"generate\", \"rounds\": 1,"
             " \"local\": {\"steps\": 1}}}",
             a, c, w0, lambda, 0.8 / (a + lambda), eta);
    pflref_spec *spec;
    pflref_error err;
    ck_assert_int_eq(tu_parse(text, &spec, &err), PFLREF_OK);
    pflref_run_result *res = tu_run(spec, NULL);
    const double direction = (w0 - res->w[0]) / eta;
    const double envelope_grad = a * lambda * (w0 - c) / (a + lambda);
    ck_assert_msg(fabs(direction - envelope_grad) <= 1e-13,
                  "(w − w_{i,1})/η = %.17g, ∇F_i(w) = %.17g", direction,
                  envelope_grad);
    pflref_run_result_free(res);
    pflref_spec_free(spec);
}
END_TEST

/* Listing the clients in another order relabels them and nothing else:
 * with three clients of distinct data and sample weights, the global model
 * is the same up to the order of a three-term sum, and each client's θ is
 * the same. */
START_TEST(test_client_order)
{
    const char *fwd =
        "[{\"a\": [2.385], \"c\": [1.5], \"n\": 2},"
        " {\"a\": [0.75], \"c\": [-1.25], \"n\": 5},"
        " {\"a\": [1.3], \"c\": [0.7], \"n\": 3}]";
    const char *rev =
        "[{\"a\": [1.3], \"c\": [0.7], \"n\": 3},"
        " {\"a\": [0.75], \"c\": [-1.25], \"n\": 5},"
        " {\"a\": [2.385], \"c\": [1.5], \"n\": 2}]";
    const char *alg = ", \"switches\": {\"pfedme.weights\": \"samples\"}";
    pflref_spec *s1 = notes_spec(fwd, ", \"beta\": 1.5", alg, NULL);
    pflref_spec *s2 = notes_spec(rev, ", \"beta\": 1.5", alg, NULL);
    pflref_run_result *r1 = tu_run(s1, NULL), *r2 = tu_run(s2, NULL);
    tu_assert_relabelled(r1, r2, 4e-16, 1e-15);
    pflref_run_result_free(r1);
    pflref_run_result_free(r2);
    pflref_spec_free(s1);
    pflref_spec_free(s2);
}
END_TEST

/* Divergence is reported with round, client and step. */
START_TEST(test_divergence)
{
    /* η = 1e200: w_{i,1} = 1.5e200 is finite, w_{i,2} overflows */
    const char *text =
        "{\"format\": \"pflref-spec/1\","
        " \"model\": {\"kind\": \"quadratic\", \"d\": 1},"
        " \"problem\": {\"clients\": [{\"a\": [1], \"c\": [4]}]},"
        " \"algorithm\": {\"name\": \"pfedme\", \"hyperparameters\":"
        " {\"lambda\": 1, \"eta_p\": 0.25, \"K\": 2, \"eta\": 1e200}},"
        " \"schedule\": {\"kind\": \"generate\", \"rounds\": 1,"
        " \"local\": {\"steps\": 2}}}";
    pflref_spec *spec;
    pflref_error err;
    ck_assert_int_eq(tu_parse(text, &spec, &err), PFLREF_OK);
    tu_run_error(spec, PFLREF_EDIVERGE, &err);
    ck_assert_msg(strstr(err.message, "round 0, client 0, local step 2") !=
                          NULL &&
                      strstr(err.message, "w_local") != NULL,
                  "message: %s", err.message);
    pflref_spec_free(spec);
}
END_TEST

Suite *pfedme_suite(void)
{
    Suite *s = suite_create("pfedme");
    TCase *tc = tcase_create("pfedme");
    tcase_add_test(tc, test_notes_paper);
    tcase_add_test(tc, test_notes_official);
    tcase_add_test(tc, test_beta);
    tcase_add_test(tc, test_weights_samples);
    tcase_add_test(tc, test_train_all_sampled_subset);
    tcase_add_test(tc, test_train_sampled);
    tcase_add_test(tc, test_personal_eval);
    tcase_add_test(tc, test_moreau_gradient);
    tcase_add_test(tc, test_client_order);
    tcase_add_test(tc, test_divergence);
    suite_add_tcase(s, tc);
    return s;
}
