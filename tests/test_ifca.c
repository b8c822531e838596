/* tests/test_ifca.c: IFCA (ref/ifca.c).
 *
 * The worked example is shared/spec notes-cfl-ifca-sampling-metrics.md
 * §2.3: F_i(θ) = (θ − c_i)² (the quadratic model with a = 2),
 * c = (0.8, 1.2, 2.9, 3.1), θ = (0.5, 2.5), γ = 0.1: Option I gives
 * (0.55, 2.55), Option II with τ = 2 gives (0.68, 2.68).
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "suites.h"
#include "testutil.h"

static const char *const VECTORS[] = {
    "golden/ifca/worked-notes-2.3-gradient.json",
    "golden/ifca/worked-notes-2.3-model.json",
    "golden/ifca/worked-partial-gradient.json",
    "golden/ifca/worked-partial-model.json",
};

START_TEST(test_worked_vectors)
{
    tu_assert_golden(VECTORS[_i]);
}
END_TEST

static const char *const NOTES_CLIENTS =
    "[{\"a\": [2], \"c\": [0.8]}, {\"a\": [2], \"c\": [1.2]},"
    " {\"a\": [2], \"c\": [2.9]}, {\"a\": [2], \"c\": [3.1]}]";

static pflref_spec *ifca_spec(const char *clients, const char *hyper,
                              const char *switches, const char *schedule)
{
    char text[8192];
    snprintf(text, sizeof text,
             "{\"format\": \"pflref-spec/1\","
             " \"model\": {\"kind\": \"quadratic\", \"d\": 1},"
             " \"problem\": {\"clients\": %s},"
             " \"init\": {\"kind\": \"given\", \"w\": [0.5]},"
             " \"algorithm\": {\"name\": \"ifca\", \"hyperparameters\": {%s},"
             " \"switches\": {%s}}, \"schedule\": %s}",
             clients, hyper, switches, schedule);
    return tu_spec(text);
}

/* The records named `name` of a run, concatenated (at most cap values). */
static size_t run_records(const pflref_spec *spec, const char *name,
                          double *out, size_t cap, pflref_run_result **res)
{
    pflref_trajectory tj;
    pflref_trajectory_init(&tj, PFLREF_RECORD_STEP);
    pflref_trace tr = {pflref_trajectory_emit, &tj};
    *res = tu_run(spec, &tr);
    size_t n = 0;
    for (size_t k = 0; k < tj.count; k++) {
        const pflref_record *rc = &tj.records[k];
        if (strcmp(rc->name, name) != 0 || rc->kind == PFLREF_EV_FINAL)
            continue;
        for (size_t q = 0; q < rc->len && n < cap; q++)
            out[n++] = tj.values[rc->offset + q];
    }
    pflref_trajectory_free(&tj);
    return n;
}

/* Notes §2.3 in both options; each client's reported model is the cluster
 * model of lowest loss at the new models. */
START_TEST(test_notes_example)
{
    const char *hp = "\"gamma\": 0.1, \"ifca.k\": 2, \"ifca.init_shift\": 2";
    const char *one = "{\"kind\": \"given\", \"rounds\": [{\"clients\": "
                      "[0, 1, 2, 3], \"batches\": [[[0]], [[0]], [[0]], [[0]]]}]}";
    const char *two = "{\"kind\": \"given\", \"rounds\": [{\"clients\": "
                      "[0, 1, 2, 3], \"batches\": [[[0], [0]], [[0], [0]],"
                      " [[0], [0]], [[0], [0]]]}]}";
    double theta[8], jhat[4];
    pflref_run_result *res;
    pflref_spec *spec = ifca_spec(NOTES_CLIENTS, hp, "", one);
    ck_assert_uint_eq(run_records(spec, "j_hat", jhat, 4, &res), 4);
    ck_assert(jhat[0] == 0 && jhat[1] == 0 && jhat[2] == 1 && jhat[3] == 1);
    pflref_run_result_free(res);
    /* round_begin and server records: (0.5, 2.5), then (0.55, 2.55) */
    ck_assert_uint_eq(run_records(spec, "theta", theta, 8, &res), 4);
    ck_assert(theta[0] == 0.5 && theta[1] == 2.5);
    ck_assert_msg(fabs(theta[2] - 0.55) < 1e-15 && fabs(theta[3] - 2.55) < 1e-15,
                  "θ = (%.17g, %.17g)", theta[2], theta[3]);
    ck_assert(res->v[0] == theta[2] && res->v[1] == theta[2] &&
              res->v[2] == theta[3] && res->v[3] == theta[3]);
    pflref_run_result_free(res);
    pflref_spec_free(spec);

    spec = ifca_spec(NOTES_CLIENTS, hp, "\"ifca.mode\": \"model\"", two);
    ck_assert_uint_eq(run_records(spec, "theta", theta, 8, &res), 4);
    ck_assert_msg(fabs(theta[2] - 0.68) < 1e-15 && fabs(theta[3] - 2.68) < 1e-15,
                  "θ = (%.17g, %.17g)", theta[2], theta[3]);
    pflref_run_result_free(res);
    pflref_spec_free(spec);
}
END_TEST

/* Equal losses go to the lowest index: c = 1.5 is as far from 0.5 as from
 * 2.5 (losses 1 and 1, exact in fp64). */
START_TEST(test_tie_lowest_index)
{
    const char *one = "{\"kind\": \"given\", \"rounds\": [{\"clients\": [0, 1],"
                      " \"batches\": [[[0]], [[0]]]}]}";
    pflref_spec *spec = ifca_spec(
        "[{\"a\": [2], \"c\": [1.5]}, {\"a\": [2], \"c\": [1.5]}]",
        "\"gamma\": 0.1, \"ifca.k\": 2, \"ifca.init_shift\": 2", "", one);
    double loss[4], jhat[2];
    pflref_run_result *res;
    ck_assert_uint_eq(run_records(spec, "loss", loss, 4, &res), 4);
    ck_assert(loss[0] == 1.0 && loss[1] == 1.0);
    pflref_run_result_free(res);
    run_records(spec, "j_hat", jhat, 2, &res);
    ck_assert(jhat[0] == 0.0 && jhat[1] == 0.0);
    pflref_run_result_free(res);
    pflref_spec_free(spec);
}
END_TEST

/* Three of the notes' clients, k = 3, drawn initial models (δ = 0.25,
 * σ = 0.5, seed 42), one round of all three. */
static pflref_spec *drawn_spec(void)
{
    const char *one = "{\"kind\": \"given\", \"rounds\": [{\"clients\": [0, 1, 2],"
                      " \"batches\": [[[0]], [[0]], [[0]]]}]}";
    return ifca_spec("[{\"a\": [2], \"c\": [0.8]}, {\"a\": [2], \"c\": [1.2]},"
                     " {\"a\": [2], \"c\": [2.9]}]",
                     "\"gamma\": 0.1, \"ifca.k\": 3, \"ifca.init_shift\": 0.25, "
                     "\"ifca.init_sd\": 0.5, \"ifca.init_seed\": 42", "", one);
}

/* Drawn initial models: θ_j⁰ = w⁰ + j δ + σ ξ_j with ξ from
 * pflref_draw_gaussian(seed), recorded as NOTE theta0. */
START_TEST(test_drawn_init)
{
    pflref_spec *spec = drawn_spec();
    double theta0[3], xi[3];
    pflref_run_result *res;
    ck_assert_uint_eq(run_records(spec, "theta0", theta0, 3, &res), 3);
    pflref_error err;
    ck_assert_int_eq(pflref_draw_gaussian(42, 0.5, xi, 3, &err), PFLREF_OK);
    for (int j = 0; j < 3; j++)
        ck_assert_msg(theta0[j] == xi[j] + (0.5 + j * 0.25),
                      "θ_%d⁰ = %.17g", j, theta0[j]);
    pflref_run_result_free(res);
    pflref_spec_free(spec);
}
END_TEST

/* A spec with init.cluster_models and the given hyperparameters (the
 * schedule `one`, the notes' clients without the last). */
static pflref_spec *given_models_spec(const char *models, const char *hyper,
                                      const char *alg)
{
    char text[4096];
    snprintf(text, sizeof text,
             "{\"format\": \"pflref-spec/1\","
             " \"model\": {\"kind\": \"quadratic\", \"d\": 1},"
             " \"problem\": {\"clients\": [{\"a\": [2], \"c\": [0.8]},"
             " {\"a\": [2], \"c\": [1.2]}, {\"a\": [2], \"c\": [2.9]}]},"
             " \"init\": {\"kind\": \"given\", \"w\": [0.5],"
             " \"cluster_models\": %s},"
             " \"algorithm\": {\"name\": \"%s\", \"hyperparameters\": {%s}},"
             " \"schedule\": {\"kind\": \"given\", \"rounds\": [{\"clients\":"
             " [0, 1, 2], \"batches\": [[[0]], [[0]], [[0]]]}]}}",
             models, alg, hyper);
    pflref_spec *spec = NULL;
    pflref_error err;
    return tu_parse(text, &spec, &err) == PFLREF_OK ? spec : NULL;
}

/* Randomness is data: the drawn θ_j⁰ of a run (its result's theta0), given
 * back as init.cluster_models without δ and σ, replay the run bit for bit. */
START_TEST(test_given_init_replays)
{
    pflref_spec *spec = drawn_spec();
    pflref_run_result *drawn = tu_run(spec, NULL);
    ck_assert_uint_eq(drawn->n_theta0, 3);
    char models[256];
    snprintf(models, sizeof models, "[[%.17g], [%.17g], [%.17g]]",
             drawn->theta0[0], drawn->theta0[1], drawn->theta0[2]);
    pflref_spec *given =
        given_models_spec(models, "\"gamma\": 0.1, \"ifca.k\": 3", "ifca");
    ck_assert_ptr_nonnull(given);
    pflref_run_result *replay = tu_run(given, NULL);
    ck_assert_uint_eq(replay->n_theta0, 3);
    ck_assert_mem_eq(replay->theta0, drawn->theta0, 3 * sizeof(double));
    ck_assert_mem_eq(replay->v, drawn->v, 3 * sizeof(double));
    /* the models are not all equal, so dropping them would change v */
    ck_assert(drawn->theta0[0] != drawn->theta0[1]);
    pflref_run_result_free(replay);
    pflref_spec_free(given);
    pflref_run_result_free(drawn);
    pflref_spec_free(spec);
}
END_TEST

/* Two populations, c near 1 (clients 0..2) and near 4 (clients 3..5),
 * initial models 0 and 5: after 30 gradient rounds each cluster model is
 * its population's mean optimum and every client reports its own. */
START_TEST(test_recovers_populations)
{
    const char *clients =
        "[{\"a\": [2], \"c\": [0.9]}, {\"a\": [2], \"c\": [1.0]},"
        " {\"a\": [2], \"c\": [1.1]}, {\"a\": [2], \"c\": [3.8]},"
        " {\"a\": [2], \"c\": [4.0]}, {\"a\": [2], \"c\": [4.2]}]";
    char text[4096];
    snprintf(text, sizeof text,
             "{\"format\": \"pflref-spec/1\","
             " \"model\": {\"kind\": \"quadratic\", \"d\": 1},"
             " \"problem\": {\"clients\": %s},"
             " \"init\": {\"kind\": \"given\", \"w\": [0]},"
             " \"algorithm\": {\"name\": \"ifca\", \"hyperparameters\":"
             " {\"gamma\": 0.5, \"ifca.k\": 2, \"ifca.init_shift\": 5}},"
             " \"schedule\": {\"kind\": \"generate\", \"rounds\": 30,"
             " \"local\": {\"steps\": 1}}}", clients);
    pflref_spec *spec = tu_spec(text);
    pflref_run_result *res = tu_run(spec, NULL);
    for (int i = 0; i < 6; i++)
        ck_assert_msg(fabs(res->v[i] - (i < 3 ? 1.0 : 4.0)) < 1e-6,
                      "client %d: v = %.17g", i, res->v[i]);
    pflref_run_result_free(res);
    pflref_spec_free(spec);
}
END_TEST

START_TEST(test_errors)
{
    pflref_error err;
    const char *one = "{\"kind\": \"given\", \"rounds\": [{\"clients\": [0, 1],"
                      " \"batches\": [[[0], [0]], [[0]]]}]}";
    const char *cl = "[{\"a\": [2], \"c\": [0.8]}, {\"a\": [2], \"c\": [1.2]}]";
    /* Option I takes one batch per machine */
    pflref_spec *spec = ifca_spec(cl, "\"gamma\": 0.1, \"ifca.k\": 2", "", one);
    tu_run_error(spec, PFLREF_EINVAL, &err);
    ck_assert_str_eq(err.where, "schedule.rounds[0].batches[0]");
    pflref_spec_free(spec);
    /* ... Option II any number */
    spec = ifca_spec(cl, "\"gamma\": 0.1, \"ifca.k\": 2",
                     "\"ifca.mode\": \"model\"", one);
    pflref_run_result_free(tu_run(spec, NULL));
    pflref_spec_free(spec);
    /* k ≤ N */
    spec = ifca_spec(cl, "\"gamma\": 0.1, \"ifca.k\": 3",
                     "\"ifca.mode\": \"model\"", one);
    tu_run_error(spec, PFLREF_EINVAL, &err);
    ck_assert_str_eq(err.where, "algorithm.hyperparameters.ifca.k");
    pflref_spec_free(spec);
    /* k and γ are required */
    spec = ifca_spec(cl, "\"gamma\": 0.1", "\"ifca.mode\": \"model\"", one);
    tu_run_error(spec, PFLREF_EINVAL, &err);
    ck_assert_str_eq(err.where, "algorithm.hyperparameters.ifca.k");
    pflref_spec_free(spec);
    spec = ifca_spec(cl, "\"ifca.k\": 2", "\"ifca.mode\": \"model\"", one);
    tu_run_error(spec, PFLREF_EINVAL, &err);
    ck_assert_str_eq(err.where, "algorithm.hyperparameters.gamma");
    pflref_spec_free(spec);
    /* init.cluster_models: ifca only, k rows of P numbers, given k, and not
     * with δ or σ */
    static const struct {
        const char *models, *hyper, *alg, *where;
    } bad[] = {
        {"[[0], [1]]", "\"eta\": 0.1", "fedavg", "init.cluster_models"},
        {"[[0], [1]]", "\"gamma\": 0.1, \"ifca.k\": 3", "ifca",
         "init.cluster_models"},
        {"[[0], [1]]", "\"gamma\": 0.1", "ifca", "init.cluster_models"},
        {"[[0], [1, 2]]", "\"gamma\": 0.1, \"ifca.k\": 2", "ifca",
         "init.cluster_models[1]"},
        {"[[0], \"x\"]", "\"gamma\": 0.1, \"ifca.k\": 2", "ifca",
         "init.cluster_models[1]"},
        {"[]", "\"gamma\": 0.1, \"ifca.k\": 2", "ifca",
         "init.cluster_models"},
    };
    for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
        char text[4096];
        pflref_spec *s = NULL;
        snprintf(text, sizeof text,
                 "{\"format\": \"pflref-spec/1\","
                 " \"model\": {\"kind\": \"quadratic\", \"d\": 1},"
                 " \"problem\": {\"clients\": %s},"
                 " \"init\": {\"kind\": \"zeros\", \"cluster_models\": %s},"
                 " \"algorithm\": {\"name\": \"%s\", \"hyperparameters\":"
                 " {%s}}}", cl, bad[b].models, bad[b].alg, bad[b].hyper);
        ck_assert_int_eq(tu_parse(text, &s, &err), PFLREF_EINVAL);
        ck_assert_msg(strcmp(err.where, bad[b].where) == 0, "case %zu: %s: %s",
                      b, err.where, err.message);
        ck_assert_ptr_null(s);
    }
    spec = given_models_spec("[[0], [1]]",
                             "\"gamma\": 0.1, \"ifca.k\": 2, \"ifca.init_sd\": 1",
                             "ifca");
    tu_run_error(spec, PFLREF_EINVAL, &err);
    ck_assert_str_eq(err.where, "init.cluster_models");
    ck_assert_ptr_nonnull(strstr(err.message, "ifca.init_sd"));
    pflref_spec_free(spec);
}
END_TEST

Suite *ifca_suite(void)
{
    Suite *s = suite_create("ifca");
    TCase *tc = tcase_create("ifca");
    tcase_add_loop_test(tc, test_worked_vectors, 0,
                        (int)(sizeof VECTORS / sizeof VECTORS[0]));
    tcase_add_test(tc, test_notes_example);
    tcase_add_test(tc, test_tie_lowest_index);
    tcase_add_test(tc, test_drawn_init);
    tcase_add_test(tc, test_given_init_replays);
    tcase_add_test(tc, test_recovers_populations);
    tcase_add_test(tc, test_errors);
    suite_add_tcase(s, tc);
    return s;
}
