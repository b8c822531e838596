/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_fedrecon.c: FedRecon (ref/algorithms/fedrecon.c).
 *
 * The hand example: ŷ = g·x + l (split: l = b), ½(ŷ − y)², w⁰ = (0, 0);
 * client 0: x = (1, 2), y = (2, 3), support {0}, query {1}; client 1:
 * x = (2, 1, 1), y = (1, 0, 4), support {0}, query {1, 2}; η_r = ½,
 * η_u = ¼, η_s = ½.  Round 0, both clients, one reconstruction step on
 * their support sample and one update step on their query set:
 *   client 0: l = 0 − ½(0 + 0 − 2) = 1; g = 0 − ¼·2·(0 + 1 − 3) = 1
 *   client 1: l = 0 − ½(0 − 1) = ½; g = 0 − ¼·((½ − 0)·1 + (½ − 4)·1)/2
 *             = 0.375
 *   uniform: Δ = (1 + 0.375)/2 = 0.6875, g¹ = ½·0.6875 = 0.34375
 *   samples: Δ = (1·1 + 2·0.375)/3 = 7/12, g¹ = 7/24
 * Round 1, client 0 alone (uniform):
 *   given: l = 0 − ½(0.34375 − 2) = 0.828125; g = 0.34375 − ¼·2·(0.6875
 *          + 0.828125 − 3) = 1.0859375; g² = 0.34375 + ½·0.7421875
 *          = 0.71484375
 *   last:  l = 1 − ½(0.34375 + 1 − 2) = 1.328125; g = 0.34375 − ¼·2·
 *          (0.6875 + 1.328125 − 3) = 0.8359375; g² = 0.58984375
 * All dyadic except 7/24, so the tests compare with == there.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "suites.h"
#include <jansson.h>
#include "testutil.h"

/* The hand example's spec with `switches`, `init` extras (the support),
 * and `schedule` spliced in. */
static char *hand_spec(const char *switches, const char *support,
                       const char *schedule)
{
    static const char *const fmt =
        "{\"format\": \"pflref-spec/1\", \"model\": {\"kind\": \"linear\", "
        "\"d\": 1, \"loss\": \"half_squared\", \"bias\": true}, "
        "\"split\": {\"personal\": [\"b\"]}, "
        "\"problem\": {\"clients\": [{\"X\": [[1], [2]], \"y\": [2, 3]}, "
        "{\"X\": [[2], [1], [1]], \"y\": [1, 0, 4]}]}, "
        "\"init\": {\"kind\": \"zeros\"%s}, "
        "\"algorithm\": {\"name\": \"fedrecon\", \"hyperparameters\": "
        "{\"fedrecon.eta_r\": 0.5, \"fedrecon.eta_u\": 0.25, "
        "\"fedrecon.eta_s\": 0.5}, \"switches\": {%s}}, "
        "\"schedule\": %s}";
    size_t len = strlen(fmt) + strlen(switches) + strlen(support) +
                 strlen(schedule) + 1;
    char *text = malloc(len);
    ck_assert_ptr_nonnull(text);
    snprintf(text, len, fmt, support, switches, schedule);
    return text;
}

#define SUPPORT ", \"support\": [[0], [0]]"
#define KEPT "\"fedrecon.eval\": \"kept\""
#define R0 "{\"clients\": [0, 1], \"personal\": [[[0]], [[0]]], " \
           "\"batches\": [[[1]], [[1, 2]]]}"
#define R1 "{\"clients\": [0], \"personal\": [[[0]]], \"batches\": [[[1]]]}"
#define GIVEN(rounds) "{\"kind\": \"given\", \"rounds\": [" rounds "]}"

/* Run the hand example; r gets the result (free it). */
static pflref_run_result *run_hand(const char *switches, const char *sched)
{
    char *text = hand_spec(switches, SUPPORT, sched);
    pflref_spec *spec = tu_spec(text);
    pflref_run_result *r = tu_run(spec, NULL);
    pflref_spec_free(spec);
    free(text);
    return r;
}

/* Round 0 by hand (the header): l_i reconstructed on D_{i,s}, g on
 * D_{i,q}, the server's step η_s on the weighted Δ. */
START_TEST(test_by_hand)
{
    /* req: fedrecon.alg1.l5, fedrecon.alg1.l6, fedrecon.alg1.l9 */
    /* req: fedrecon.alg1.l11, fedrecon.alg1.l12 */
    pflref_run_result *r =
        run_hand(KEPT ", \"fedrecon.weights\": \"uniform\"", GIVEN(R0));
    ck_assert_double_eq(r->w[0], 0.34375);
    ck_assert_double_eq(r->w[1], 0.0);          /* w keeps l⁰ */
    ck_assert_double_eq(r->v[0], 0.34375);      /* v_i = (g¹, l_i) */
    ck_assert_double_eq(r->v[1], 1.0);
    ck_assert_double_eq(r->v[2], 0.34375);
    ck_assert_double_eq(r->v[3], 0.5);
    pflref_run_result_free(r);
    /* n_i = |D_{i,q}| = 1, 2: g¹ = 7/24 */
    r = run_hand(KEPT, GIVEN(R0));
    ck_assert_msg(fabs(r->w[0] - 7.0 / 24.0) < 1e-16, "g¹ = %.17g", r->w[0]);
    pflref_run_result_free(r);
    /* examples: the update batches hold 1 and 2 examples, as n_i here */
    r = run_hand(KEPT ", \"fedrecon.weights\": \"examples\"", GIVEN(R0));
    ck_assert_msg(fabs(r->w[0] - 7.0 / 24.0) < 1e-16, "g¹ = %.17g", r->w[0]);
    pflref_run_result_free(r);
}
END_TEST

/* l_i ← l⁰ at every visit (given) or the kept l_i (last); a client that
 * skips the round keeps its l_i and follows g. */
START_TEST(test_local_init)
{
    /* req: fedrecon.alg1.l8 */
    pflref_run_result *r = run_hand(
        KEPT ", \"fedrecon.weights\": \"uniform\"", GIVEN(R0 ", " R1));
    ck_assert_double_eq(r->w[0], 0.71484375);
    ck_assert_double_eq(r->v[1], 0.828125);
    ck_assert_double_eq(r->v[2], 0.71484375);   /* client 1 skipped */
    ck_assert_double_eq(r->v[3], 0.5);
    pflref_run_result_free(r);
    r = run_hand(KEPT ", \"fedrecon.weights\": \"uniform\", "
                 "\"fedrecon.local_init\": \"last\"", GIVEN(R0 ", " R1));
    ck_assert_double_eq(r->w[0], 0.58984375);
    ck_assert_double_eq(r->v[1], 1.328125);
    ck_assert_double_eq(r->v[3], 0.5);
    pflref_run_result_free(r);
}
END_TEST

/* The evaluation reconstructs l on the post batches from g and l⁰:
 * client 0: l = 0 − ½(g¹ − 2) = 1 − g¹/2 = 0.828125; client 1 (post
 * [[0]]: x = 2, y = 1): l = 0 − ½(2g¹ − 1) = 0.15625. */
START_TEST(test_eval_reconstruct)
{
    /* req: fedrecon.eval */
    pflref_run_result *r = run_hand(
        "\"fedrecon.weights\": \"uniform\"",
        "{\"kind\": \"given\", \"rounds\": [" R0 "], \"post\": [[[0]], "
        "[[0]]]}");
    ck_assert_double_eq(r->v[1], 0.828125);
    ck_assert_double_eq(r->v[3], 0.15625);
    ck_assert_double_eq(r->v[2], 0.34375);
    pflref_run_result_free(r);
}
END_TEST

/* query = whole: no support; both lists draw from all of D_i and n_i =
 * |D_i| = 2, 3.  Round 0 with client 0's reconstruction on sample 1 and
 * its update on sample 1 (the lists overlap): l = 0 − ½(0 − 3) = 1.5,
 * g = 0 − ¼·2·(1.5 − 3) = 0.75; client 1 as above (0.375); Δ = (2·0.75
 * + 3·0.375)/5 = 0.525, g¹ = 0.2625. */
START_TEST(test_query_whole)
{
    /* req: fedrecon.alg1.l7 */
    char *text = hand_spec(
        KEPT ", \"fedrecon.query\": \"whole\"", "",
        GIVEN("{\"clients\": [0, 1], \"personal\": [[[1]], [[0]]], "
              "\"batches\": [[[1]], [[1, 2]]]}"));
    pflref_spec *spec = tu_spec(text);
    pflref_run_result *r = tu_run(spec, NULL);
    ck_assert_msg(fabs(r->w[0] - 0.2625) < 1e-16, "g¹ = %.17g", r->w[0]);
    ck_assert_double_eq(r->v[1], 1.5);
    pflref_run_result_free(r);
    pflref_spec_free(spec);
    free(text);
}
END_TEST

/* Each misuse is refused with the field named: by the reader (at_run 0)
 * or by FedRecon's check before round 0 (at_run 1). */
START_TEST(test_errors)
{
    static const struct {
        const char *switches, *support, *schedule, *where;
        int at_run;
    } cases[] = {
        /* no support under query = complement */
        {KEPT, "", GIVEN(R0), "init.support", 1},
        /* a support under query = whole */
        {KEPT ", \"fedrecon.query\": \"whole\"", SUPPORT, GIVEN(R0),
         "init.support", 1},
        /* one support list per client */
        {KEPT, ", \"support\": [[0]]", GIVEN(R0), "init.support", 0},
        /* an index out of the client's range */
        {KEPT, ", \"support\": [[2], [0]]", GIVEN(R0), "init.support[0][0]", 0},
        /* a repeat (the sets are not a partition) */
        {KEPT, ", \"support\": [[0], [0, 0]]", GIVEN(R0),
         "init.support[1][1]", 1},
        /* an empty support */
        {KEPT, ", \"support\": [[], [0]]", GIVEN(R0), "init.support[0]", 1},
        /* a support that leaves the query set empty */
        {KEPT, ", \"support\": [[0, 1], [0]]", GIVEN(R0),
         "init.support[0]", 1},
        /* no reconstruction lists */
        {KEPT, SUPPORT,
         GIVEN("{\"clients\": [0], \"batches\": [[[1]]]}"),
         "schedule.rounds[0].personal", 1},
        /* a reconstruction batch from the query set */
        {KEPT, SUPPORT,
         GIVEN("{\"clients\": [0], \"personal\": [[[1]]], \"batches\": "
               "[[[1]]]}"), "schedule.rounds[0].personal[0][0]", 1},
        /* an update batch from the support */
        {KEPT, SUPPORT,
         GIVEN("{\"clients\": [0], \"personal\": [[[0]]], \"batches\": "
               "[[[1], [0]]]}"), "schedule.rounds[0].batches[0][1]", 1},
        /* examples weights and a participant without update batches */
        {KEPT ", \"fedrecon.weights\": \"examples\"", SUPPORT,
         GIVEN("{\"clients\": [0, 1], \"personal\": [[[0]], [[0]]], "
               "\"batches\": [[[1]], []]}"),
         "schedule.rounds[0].batches[1]", 1},
        /* the evaluation with reconstruction needs the post phase */
        {"", SUPPORT, GIVEN(R0), "schedule.post", 1},
        /* kept has none */
        {KEPT, SUPPORT,
         "{\"kind\": \"given\", \"rounds\": [" R0 "], \"post\": [[[0]], "
         "[[0]]]}", "schedule.post", 1},
        /* an evaluation batch from the query set */
        {"", SUPPORT,
         "{\"kind\": \"given\", \"rounds\": [" R0 "], \"post\": [[[0]], "
         "[[2]]]}", "schedule.post[1][0]", 1},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char *text = hand_spec(cases[k].switches, cases[k].support,
                               cases[k].schedule);
        pflref_spec *spec = NULL;
        pflref_error err;
        pflref_status st = tu_parse(text, &spec, &err);
        if (cases[k].at_run) {
            ck_assert_msg(st == PFLREF_OK, "case %zu: %s: %s", k, err.where,
                          err.message);
            tu_run_error(spec, PFLREF_EINVAL, &err);
            pflref_spec_free(spec);
        } else {
            ck_assert_msg(st == PFLREF_EINVAL, "case %zu: status %d", k,
                          (int)st);
        }
        ck_assert_msg(strcmp(err.where, cases[k].where) == 0,
                      "case %zu: where %s, want %s (%s)", k, err.where,
                      cases[k].where, err.message);
        free(text);
    }
}
END_TEST

/* The step sizes: refused by the reader when not > 0 or not finite, and
 * by the check when set otherwise (the library's API). */
START_TEST(test_step_sizes)
{
    char *text = hand_spec(KEPT, SUPPORT, GIVEN(R0));
    char *bad = malloc(strlen(text) + 8);
    ck_assert_ptr_nonnull(bad);
    const char *at = strstr(text, "\"fedrecon.eta_s\": 0.5");
    ck_assert_ptr_nonnull(at);
    size_t pre = (size_t)(at - text);
    snprintf(bad, strlen(text) + 8, "%.*s\"fedrecon.eta_s\": 0%s", (int)pre,
             text, at + strlen("\"fedrecon.eta_s\": 0.5"));
    pflref_spec *spec = NULL;
    pflref_error err;
    ck_assert_int_eq(tu_parse(bad, &spec, &err), PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "algorithm.hyperparameters.fedrecon.eta_s");
    free(bad);
    spec = tu_spec(text);
    static const char *const where[] = {
        "algorithm.hyperparameters.fedrecon.eta_r",
        "algorithm.hyperparameters.fedrecon.eta_u",
        "algorithm.hyperparameters.fedrecon.eta_s"};
    double *eta[] = {&spec->hyper.fedrecon.eta_r, &spec->hyper.fedrecon.eta_u,
                     &spec->hyper.fedrecon.eta_s};
    for (size_t k = 0; k < 3; k++) {
        const double keep = *eta[k];
        *eta[k] = k == 1 ? INFINITY : -0.5;
        tu_run_error(spec, PFLREF_EINVAL, &err);
        ck_assert_str_eq(err.where, where[k]);
        *eta[k] = keep;
    }
    pflref_spec_free(spec);
    free(text);
}
END_TEST

/* The result echoes the partition (init.support), `freeze` keeps it, and
 * `check --resync` restarts each round from a candidate's records (the
 * reference's own result passes; a perturbed one fails). */
START_TEST(test_result_and_resync)
{
    char *dir = tu_tmpdir();
    char *vec = tu_repo_path("golden/fedrecon/worked-last-uniform.json");
    char args[4096];
    snprintf(args, sizeof args, "run '%s' -o $D/r.json", vec);
    ck_assert_int_eq(tu_cli_in(dir, args, NULL, NULL), 0);
    json_t *r = tu_json_load_in(dir, "r.json");
    json_t *sup = json_object_get(json_object_get(r, "init"), "support");
    ck_assert_int_eq((int)json_array_size(sup), 3);
    ck_assert_int_eq((int)json_integer_value(
                         json_array_get(json_array_get(sup, 1), 1)), 2);
    json_decref(r);
    snprintf(args, sizeof args, "check '%s' $D/r.json --resync", vec);
    ck_assert_int_eq(tu_cli_in(dir, args, NULL, NULL), 0);
    tu_result_perturb(dir, "r.json");
    ck_assert_int_eq(tu_cli_in(dir, args, NULL, NULL), 1);
    json_t *doc = json_load_file(vec, 0, NULL);
    ck_assert_ptr_nonnull(doc);
    tu_json_save_in(dir, "s.json", json_object_get(doc, "spec"));
    json_decref(doc);
    ck_assert_int_eq(tu_cli_in(dir, "freeze $D/s.json -o $D/v.json", NULL,
                               NULL), 0);
    json_t *v = tu_json_load_in(dir, "v.json");
    sup = json_object_get(json_object_get(json_object_get(v, "spec"), "init"),
                          "support");
    ck_assert_int_eq((int)json_array_size(sup), 3);
    json_decref(v);
    ck_assert_int_eq(tu_cli_in(dir, "verify $D/v.json", NULL, NULL), 0);
    free(vec);
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

/* The client optimizer (opt.*) steps g in the update (l. 11, TFF's
 * client_optimizer_fn); the reconstruction of l stays plain SGD.  Client 0
 * alone, two reconstruction steps on sample 0 (x = 1, y = 2) and two update
 * steps on sample 1 (x = 2, y = 3), uniform weights, from w⁰ = 0:
 *   reconstruction (plain, η_r = ½, d = g + l − 2): l = 1, then l = 1.5
 *   (through a momentum-½ optimizer it would be 1, then 2; with weight
 *   decay ½, 1 then 1.25)
 *   update (η_u = ¼, d = 2(2g + l − 3)):
 *     opt.momentum = ½: d = −3, b = −3, g = 0.75; d = 0, b = −1.5,
 *                       g = 1.125;  g¹ = ½ · 1.125 = 0.5625
 *     opt.weight_decay = ½: d = −3 + ½·0, g = 0.75; d = 0 + ½·0.75,
 *                       g = 0.65625;  g¹ = 0.328125
 *     plain: g = 0.75, 0.75;  g¹ = 0.375 */
START_TEST(test_optimizer)
{
    /* req: fedrecon.alg1.l9, fedrecon.alg1.l11 */
#define OPT_ROUND "{\"clients\": [0], \"personal\": [[[0], [0]]], " \
                  "\"batches\": [[[1], [1]]]}"
    static const struct {
        const char *extra;
        double g1, l;
    } cases[] = {
        {"", 0.375, 1.5},
        {", \"opt.momentum\": 0.5", 0.5625, 1.5},
        {", \"opt.weight_decay\": 0.5", 0.328125, 1.5},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const char *fmt =
            "{\"format\": \"pflref-spec/1\", \"model\": {\"kind\": "
            "\"linear\", \"d\": 1, \"loss\": \"half_squared\", \"bias\": "
            "true}, \"split\": {\"personal\": [\"b\"]}, \"problem\": "
            "{\"clients\": [{\"X\": [[1], [2]], \"y\": [2, 3]}, {\"X\": "
            "[[2], [1], [1]], \"y\": [1, 0, 4]}]}, \"init\": {\"kind\": "
            "\"zeros\"" SUPPORT "}, \"algorithm\": {\"name\": "
            "\"fedrecon\", \"hyperparameters\": {\"fedrecon.eta_r\": 0.5, "
            "\"fedrecon.eta_u\": 0.25, \"fedrecon.eta_s\": 0.5%s}, "
            "\"switches\": {" KEPT ", \"fedrecon.weights\": \"uniform\"}}, "
            "\"schedule\": " GIVEN(OPT_ROUND) "}";
        char text[2048];
        snprintf(text, sizeof text, fmt, cases[k].extra);
        pflref_spec *spec = tu_spec(text);
        pflref_run_result *r = tu_run(spec, NULL);
        pflref_spec_free(spec);
        ck_assert_msg(r->w[0] == cases[k].g1, "case %zu: g¹ = %.17g", k,
                      r->w[0]);
        ck_assert_msg(r->v[1] == cases[k].l, "case %zu: l_0 = %.17g", k,
                      r->v[1]);
        pflref_run_result_free(r);
    }
#undef OPT_ROUND
}
END_TEST

/* The golden vectors replay. */
static const char *const VECTORS[] = {
    "golden/fedrecon/worked-paper.json",
    "golden/fedrecon/worked-last-uniform.json",
    "golden/fedrecon/worked-examples-kept.json",
    "golden/fedrecon/worked-whole-last.json",
    "golden/optim/fedrecon-momentum-decay.json",
    "golden/optim/fedrecon-adam-client.json",
};

START_TEST(test_golden)
{
    /* req: fedrecon.alg1.l1, fedrecon.alg1.l2, fedrecon.alg1.l3 */
    /* req: fedrecon.alg1.l4, fedrecon.alg1.l10 */
    tu_assert_golden(VECTORS[_i]);
}
END_TEST

Suite *fedrecon_suite(void)
{
    Suite *s = suite_create("fedrecon");
    TCase *tc = tcase_create("fedrecon");
    tcase_add_test(tc, test_by_hand);
    tcase_add_test(tc, test_local_init);
    tcase_add_test(tc, test_eval_reconstruct);
    tcase_add_test(tc, test_query_whole);
    tcase_add_test(tc, test_errors);
    tcase_add_test(tc, test_step_sizes);
    tcase_add_test(tc, test_result_and_resync);
    tcase_add_test(tc, test_optimizer);
    tcase_add_loop_test(tc, test_golden, 0,
                        (int)(sizeof VECTORS / sizeof VECTORS[0]));
    suite_add_tcase(s, tc);
    return s;
}
