/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_pfedhn.c: pFedHN (ref/algorithms/pfedhn.c).
 *
 * Properties of Alg. 1 (Shamsian et al., ICML 2021, arXiv 2103.04628v1)
 * with the linear hypernetwork of shared/spec notes-lora-pfedhn.md §4.1:
 *   - one-hot embeddings and θ_i = W_h v_i (no b_h) reduce to per-client
 *     models: a client's first round moves only its own column of W_h
 *     (no other client's model moves), and with α = 1 that column becomes
 *     exactly the client's locally trained model;
 *   - φ = (W_h, b_h) and the embeddings are state: the result's final
 *     state equals the last NOTE records, an unsampled client's embedding
 *     never moves, and every personal model is h(v_j; φ);
 *   - the sign: one round with a small step lowers the sampled client's
 *     loss at h(v_i; φ);
 *   - bad input (no initial hypernetwork, embedding dimension 0, a step
 *     size ≤ 0, a round of two clients, a client id out of range, b_h
 *     given or missing against pfedhn.hn_bias) is refused by path.
 * The golden vectors' numbers come from golden/pfedhn/make_worked.py.
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
    "golden/pfedhn/worked-notes-6-4.json",
    "golden/pfedhn/worked-linear-bias.json",
    "golden/pfedhn/worked-linear-nobias.json",
    "golden/pfedhn/worked-mlp.json",
    "golden/pfedhn/worked-notes-6-4-official.json",
    "golden/pfedhn/worked-linear-official.json",
    "golden/pfedhn/worked-linear-clip.json",
};

START_TEST(test_worked_vectors)
{
    /* req: pfedhn.alg1.l3, pfedhn.alg1.l4, pfedhn.alg1.l5, pfedhn.alg1.l8,
     * req: pfedhn.alg1.l9, pfedhn.alg1.l10, pfedhn.alg1.l11 */
    tu_assert_golden(VECTORS[_i]);
}
END_TEST

/* The NOTE record `name` of round t (first match), into out (cap). */
static size_t note_of(const pflref_trajectory *tj, const char *name, long t,
                      double *out, size_t cap)
{
    for (size_t k = 0; k < tj->count; k++) {
        const pflref_record *rc = &tj->records[k];
        if (rc->kind != PFLREF_EV_NOTE || strcmp(rc->name, name) != 0 ||
            rc->round != t)
            continue;
        size_t n = rc->len < cap ? rc->len : cap;
        memcpy(out, tj->values + rc->offset, n * sizeof *out);
        return n;
    }
    return 0;
}

/* Linear d = 2 with a bias (P = 3), half_squared, three clients of 4, 3
 * and 5 samples. */
static tb_case *linear_case(void)
{
    static const double X0[] = {1.0, 0.5, -0.5, 1.5, 2.0, -1.0, 0.25, 0.75};
    static const double y0[] = {1.25, 0.5, 2.0, -0.5};
    static const double X1[] = {0.5, 1.0, 1.5, 0.5, -1.0, -0.5};
    static const double y1[] = {-0.75, 0.25, 1.0};
    static const double X2[] = {2.0, 1.5, -1.5, 0.25, 0.75, -1.25,
                                1.0, 1.0, -0.5, 2.0};
    static const double y2[] = {1.75, -0.5, 0.25, 1.5, -1.0};
    pflref_model m = tb_model(PFLREF_MODEL_LINEAR, PFLREF_LOSS_HALF_SQUARED,
                              2, 1, 0, 1);
    tb_case *c = tb_new(&m, 3);
    tb_train(c, 0, 4, X0, y0);
    tb_train(c, 1, 3, X1, y1);
    tb_train(c, 2, 5, X2, y2);
    c->hyper.eta = 0.15;
    return c;
}

/* W_h (3×3, every column w⁰ = (0.25, −0.5, 0.125)), v_j = e_j, no b_h. */
static double ONE_HOT_W[9], ONE_HOT_V[9];

static void one_hot(tb_case *c, double alpha)
{
    static const double w0[3] = {0.25, -0.5, 0.125};
    for (size_t p = 0; p < 3; p++)
        for (size_t j = 0; j < 3; j++) {
            ONE_HOT_W[p * 3 + j] = w0[p];
            ONE_HOT_V[p * 3 + j] = p == j ? 1.0 : 0.0;
        }
    c->hyper.pfedhn.e = 3;
    c->hyper.pfedhn.W0 = ONE_HOT_W;
    c->hyper.pfedhn.b0 = NULL;
    c->hyper.pfedhn.v0 = ONE_HOT_V;
    c->hyper.pfedhn.bias = PFLREF_PFEDHN_BIAS_OFF;
    c->hyper.pfedhn.alpha = alpha;
    c->hyper.pfedhn.alpha_v = 0.35;
    tb_w0(c, w0);
}

/* One-hot embeddings, linear h without bias: round t (client t, its first
 * visit) moves column t of W_h only, every other column (so every other
 * client's model) bit for bit unchanged. */
START_TEST(test_one_hot_touches_own_column)
{
    /* req: pfedhn.alg1.l10 */
    tb_case *c = linear_case();
    one_hot(c, 0.4);
    tb_round(c, "1", "0 1 | 2");
    tb_round(c, "0", "3 | 1 2");
    tb_round(c, "2", "4 0 | 1 | 3");
    pflref_trajectory tj;
    pflref_run_result *r = tb_run_recorded(c, "pfedhn", &tj);
    static const size_t order[3] = {1, 0, 2};
    double prev[9];
    memcpy(prev, ONE_HOT_W, sizeof prev);
    for (long t = 0; t < 3; t++) {
        double W[9];
        ck_assert_uint_eq(note_of(&tj, "W_h", t, W, 9), 9);
        for (size_t p = 0; p < 3; p++)
            for (size_t j = 0; j < 3; j++) {
                if (j == order[t])
                    continue;
                ck_assert_msg(W[p * 3 + j] == prev[p * 3 + j],
                              "round %ld (client %zu) moved W_h[%zu][%zu]: "
                              "%.17g -> %.17g", t, order[t], p, j,
                              prev[p * 3 + j], W[p * 3 + j]);
            }
        /* its own column moved */
        ck_assert(W[0 * 3 + order[t]] != prev[0 * 3 + order[t]]);
        memcpy(prev, W, sizeof prev);
    }
    pflref_trajectory_free(&tj);
    pflref_run_result_free(r);
    tb_free(c);
}
END_TEST

/* With α = 1 a client's first round sets its column to θ̃_i: the
 * hypernetwork holds each client's locally trained model, the per-client
 * models of local training (same batches, from the same w⁰). */
START_TEST(test_one_hot_alpha_one_is_local_training)
{
    /* req: pfedhn.alg1.l10, pfedhn.alg1.l8 */
    tb_case *c = linear_case();
    one_hot(c, 1.0);
    tb_round(c, "0", "3 | 1 2");
    tb_round(c, "1", "0 1 | 2");
    tb_round(c, "2", "4 0 | 1 | 3");
    pflref_run_result *hn = tb_run(c, "pfedhn", NULL);
    tb_case *l = linear_case();
    static const double w0[3] = {0.25, -0.5, 0.125};
    tb_w0(l, w0);
    tb_round(l, "0 1 2", "3 | 1 2", "0 1 | 2", "4 0 | 1 | 3");
    pflref_run_result *loc = tb_run(l, "local", NULL);
    ck_assert_uint_eq(hn->n_hn, 9 + 3 + 9);
    for (size_t j = 0; j < 3; j++)
        for (size_t p = 0; p < 3; p++) {
            const double col = hn->hn[p * 3 + j], want = loc->v[j * 3 + p];
            ck_assert_msg(fabs(col - want) <= 1e-15 * (1.0 + fabs(want)),
                          "W_h[%zu][%zu] = %.17g, local θ_%zu[%zu] = %.17g",
                          p, j, col, j, p, want);
        }
    /* local training moved the models (the check is not vacuous) */
    ck_assert(fabs(loc->v[0] - 0.25) > 1e-3);
    pflref_run_result_free(loc);
    pflref_run_result_free(hn);
    tb_free(l);
    tb_free(c);
}
END_TEST

/* A linear hypernetwork with bias, e = 2, on the case (the other pfedhn
 * settings stay at their defaults). */
static void set_hn(tb_case *c, double alpha, double alpha_v, const double *W0,
                   const double *b0, const double *V0)
{
    c->hyper.pfedhn.alpha = alpha;
    c->hyper.pfedhn.alpha_v = alpha_v;
    c->hyper.pfedhn.bias = PFLREF_PFEDHN_BIAS_ON;
    c->hyper.pfedhn.e = 2;
    c->hyper.pfedhn.W0 = W0;
    c->hyper.pfedhn.b0 = b0;
    c->hyper.pfedhn.v0 = V0;
}

/* The state: the result's W_h, b_h and embeddings equal the last NOTE
 * records; client 2, never sampled, keeps v_2⁰; every personal model is
 * W_h v_j + b_h. */
START_TEST(test_state_recorded)
{
    /* req: pfedhn.alg1.l11 */
    static const double W0[6] = {0.3, -0.6, 0.45, 0.2, -0.15, 0.35};
    static const double b0[3] = {0.1, -0.25, 0.05};
    static const double V0[6] = {0.8, -0.3, -0.4, 0.7, 0.6, 0.9};
    tb_case *c = linear_case();
    set_hn(c, 0.3, 0.55, W0, b0, V0);
    tb_round(c, "0", "0 1 | 2");
    tb_round(c, "1", "2 | 0");
    tb_round(c, "0", "3 2");
    pflref_trajectory tj;
    pflref_run_result *r = tb_run_recorded(c, "pfedhn", &tj);
    double W[6], b[3], v0[2], v1[2];
    ck_assert_uint_eq(note_of(&tj, "W_h", 2, W, 6), 6);
    ck_assert_uint_eq(note_of(&tj, "b_h", 2, b, 3), 3);
    ck_assert_uint_eq(note_of(&tj, "embedding", 2, v0, 2), 2);
    ck_assert_uint_eq(note_of(&tj, "embedding", 1, v1, 2), 2);
    ck_assert_uint_eq(r->n_hn, 6 + 3 + 6);
    ck_assert_mem_eq(r->hn, W, sizeof W);
    ck_assert_mem_eq(r->hn + 6, b, sizeof b);
    ck_assert_mem_eq(r->hn + 9, v0, sizeof v0);
    ck_assert_mem_eq(r->hn + 11, v1, sizeof v1);
    ck_assert_mem_eq(r->hn + 13, V0 + 4, 2 * sizeof(double));
    for (size_t j = 0; j < 3; j++)
        for (size_t p = 0; p < 3; p++) {
            const double *v = r->hn + 9 + j * 2;
            const double want = (W[p * 2] * v[0] + W[p * 2 + 1] * v[1]) + b[p];
            ck_assert_double_eq(r->v[j * 3 + p], want);
        }
    pflref_trajectory_free(&tj);
    pflref_run_result_free(r);
    tb_free(c);
}
END_TEST

/* The sign (notes §4's flag): with small steps one round lowers the
 * sampled client's loss at its generated model h(v_i; φ). */
START_TEST(test_round_descends)
{
    /* req: pfedhn.alg1.l9, pfedhn.alg1.l10, pfedhn.alg1.l11 */
    static const double W0[6] = {0.3, -0.6, 0.45, 0.2, -0.15, 0.35};
    static const double b0[3] = {0.1, -0.25, 0.05};
    static const double V0[6] = {0.8, -0.3, -0.4, 0.7, 0.6, 0.9};
    tb_case *c = linear_case();
    c->hyper.eta = 0.05;
    set_hn(c, 0.1, 0.1, W0, b0, V0);
    tb_round(c, "2", "0 1 2 3 4");
    pflref_run_result *r = tb_run(c, "pfedhn", NULL);
    /* L_2 at θ = W v_2 + b before and after, on all 5 samples */
    static const double X2[] = {2.0, 1.5, -1.5, 0.25, 0.75, -1.25,
                                1.0, 1.0, -0.5, 2.0};
    static const double y2[] = {1.75, -0.5, 0.25, 1.5, -1.0};
    double th0[3], L0 = 0.0, L1 = 0.0;
    for (size_t p = 0; p < 3; p++)
        th0[p] = W0[p * 2] * V0[4] + W0[p * 2 + 1] * V0[5] + b0[p];
    const double *th1 = r->v + 2 * 3;
    for (size_t s = 0; s < 5; s++) {
        const double e0 = th0[0] * X2[2 * s] + th0[1] * X2[2 * s + 1] +
                          th0[2] - y2[s];
        const double e1 = th1[0] * X2[2 * s] + th1[1] * X2[2 * s + 1] +
                          th1[2] - y2[s];
        L0 += 0.5 * e0 * e0;
        L1 += 0.5 * e1 * e1;
    }
    ck_assert_msg(L1 < L0 - 1e-3, "L_2: %.17g before, %.17g after", L0, L1);
    pflref_run_result_free(r);
    tb_free(c);
}
END_TEST

/* A spec of pfedhn on two one-sample linear clients (notes §6.4's), with
 * the hyperparameters, init and rounds given as text. */
static const char *const SPEC_FMT =
    "{\"format\": \"pflref-spec/1\", \"name\": \"x\","
    " \"model\": {\"kind\": \"linear\", \"d\": 2, \"bias\": false,"
    " \"loss\": \"half_squared\"},"
    " \"problem\": {\"clients\": [{\"X\": [[1, 2]], \"y\": [2]},"
    " {\"X\": [[2, -1]], \"y\": [1]}]},"
    " \"init\": {\"kind\": \"zeros\"%s},"
    " \"algorithm\": {\"name\": \"%s\", \"hyperparameters\": {%s}%s},"
    " \"schedule\": {\"kind\": \"given\", \"rounds\": [%s]}}";
static const char *const HN =
    ", \"hypernetwork\": {\"W\": [[0.5, 0], [0.25, 1]], \"b\": [0, 0.25],"
    " \"v\": [[1, 0], [0, 1]]}";
static const char *const HP = "\"eta\": 0.5, \"alpha\": 0.5";
static const char *const ROUNDS =
    "{\"clients\": [0], \"batches\": [[[0]]]},"
    " {\"clients\": [1], \"batches\": [[[0]]]}";

START_TEST(test_bad_input)
{
    static const struct {
        const char *init, *alg, *hp, *sw, *rounds, *where;
    } cases[] = {
        /* no initial hypernetwork */
        {"", "pfedhn", "\"eta\": 0.5, \"alpha\": 0.5", "", NULL,
         "init.hypernetwork"},
        /* embedding dimension 0 */
        {", \"hypernetwork\": {\"W\": [[], []], \"b\": [0, 0],"
         " \"v\": [[], []]}", "pfedhn", NULL, "", NULL,
         "init.hypernetwork.v[0]"},
        /* an embedding per client */
        {", \"hypernetwork\": {\"W\": [[1], [2]], \"b\": [0, 0],"
         " \"v\": [[1]]}", "pfedhn", NULL, "", NULL, "init.hypernetwork.v"},
        /* W_h of the wrong shape */
        {", \"hypernetwork\": {\"W\": [[1, 2]], \"b\": [0, 0],"
         " \"v\": [[1, 0], [0, 1]]}", "pfedhn", NULL, "", NULL,
         "init.hypernetwork.W"},
        /* b_h missing with hn_bias = on, given with off */
        {", \"hypernetwork\": {\"W\": [[1, 0], [0, 1]],"
         " \"v\": [[1, 0], [0, 1]]}", "pfedhn", NULL, "", NULL,
         "init.hypernetwork.b"},
        {NULL, "pfedhn", NULL, ", \"switches\": {\"pfedhn.hn_bias\": \"off\"}",
         NULL, "init.hypernetwork.b"},
        /* step sizes ≤ 0 */
        {NULL, "pfedhn", "\"eta\": 0.5, \"alpha\": 0", "", NULL,
         "algorithm.hyperparameters.alpha"},
        {NULL, "pfedhn", "\"eta\": -0.5, \"alpha\": 0.5", "", NULL,
         "algorithm.hyperparameters.eta"},
        {NULL, "pfedhn", "\"eta\": 0.5, \"alpha\": 0.5, \"pfedhn.alpha_v\": 0",
         "", NULL, "algorithm.hyperparameters.pfedhn.alpha_v"},
        {NULL, "pfedhn", "\"eta\": 0.5", "", NULL,
         "algorithm.hyperparameters.alpha"},
        /* a round names an unknown client, or two clients */
        {NULL, "pfedhn", NULL, "",
         "{\"clients\": [2], \"batches\": [[[0]]]}",
         "schedule.rounds[0].clients[0]"},
        {NULL, "pfedhn", NULL, "",
         "{\"clients\": [0, 1], \"batches\": [[[0]], [[0]]]}",
         "schedule.rounds[0].clients"},
        /* another algorithm takes no hypernetwork */
        {NULL, "fedavg", "\"eta\": 0.5", "", NULL, "init.hypernetwork"},
    };
    char text[2048];
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        snprintf(text, sizeof text, SPEC_FMT,
                 cases[k].init ? cases[k].init : HN, cases[k].alg,
                 cases[k].hp ? cases[k].hp : HP, cases[k].sw,
                 cases[k].rounds ? cases[k].rounds : ROUNDS);
        pflref_spec *spec = NULL;
        pflref_error err;
        pflref_status st = tu_parse(text, &spec, &err);
        if (st == PFLREF_OK) {   /* refused by the algorithm's check */
            tu_run_error(spec, PFLREF_EINVAL, &err);
            pflref_spec_free(spec);
        } else {
            ck_assert_int_eq(st, PFLREF_EINVAL);
        }
        ck_assert_msg(strcmp(err.where, cases[k].where) == 0,
                      "case %zu: where \"%s\", want \"%s\" (%s)", k,
                      err.where, cases[k].where, err.message);
    }
    /* and the good one parses and runs */
    snprintf(text, sizeof text, SPEC_FMT, HN, "pfedhn", HP, "", ROUNDS);
    pflref_spec *spec = tu_spec(text);
    pflref_run_result *res = tu_run(spec, NULL);
    ck_assert_double_eq(res->v[0], 143.0 / 64.0);
    pflref_run_result_free(res);
    pflref_spec_free(spec);
}
END_TEST

/* The CLI: a bad field exits 2 and leaves no result file; the result of a
 * good run records the initial and final hypernetwork. */
START_TEST(test_cli)
{
    char *dir = tu_tmpdir();
    char path[512], out[512], args[1200], text[2048];
    snprintf(path, sizeof path, "%s/spec.json", dir);
    snprintf(out, sizeof out, "%s/result.json", dir);
    snprintf(text, sizeof text, SPEC_FMT, HN, "pfedhn",
             "\"eta\": 0.5, \"alpha\": -1", "", ROUNDS);
    ck_assert_int_eq(tu_write(path, text), 0);
    snprintf(args, sizeof args, "run %s -o %s", path, out);
    char *o = NULL, *e = NULL;
    ck_assert_int_eq(tu_cli(args, &o, &e), 2);
    ck_assert_msg(strstr(e, "algorithm.hyperparameters.alpha") != NULL,
                  "stderr: %s", e);
    ck_assert(!tu_exists(out));
    free(o);
    free(e);
    snprintf(text, sizeof text, SPEC_FMT, HN, "pfedhn", HP, "", ROUNDS);
    ck_assert_int_eq(tu_write(path, text), 0);
    ck_assert_int_eq(tu_cli(args, &o, &e), 0);
    char *res = tu_read(out);
    ck_assert_ptr_nonnull(res);
    /* final W_h = [[5/8, 9/8], [1/2, 7/16]] (notes §6.4) */
    ck_assert_msg(strstr(res, "\"hypernetwork\"") != NULL, "%s", res);
    ck_assert_msg(strstr(res, "0.4375") != NULL, "%s", res);
    free(res);
    free(o);
    free(e);
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

Suite *pfedhn_suite(void)
{
    Suite *s = suite_create("pfedhn");
    TCase *tc = tcase_create("pfedhn");
    tcase_add_loop_test(tc, test_worked_vectors, 0,
                        (int)(sizeof VECTORS / sizeof VECTORS[0]));
    tcase_add_test(tc, test_one_hot_touches_own_column);
    tcase_add_test(tc, test_one_hot_alpha_one_is_local_training);
    tcase_add_test(tc, test_state_recorded);
    tcase_add_test(tc, test_round_descends);
    tcase_add_test(tc, test_bad_input);
    tcase_add_test(tc, test_cli);
    suite_add_tcase(s, tc);
    return s;
}
