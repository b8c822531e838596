/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_bn_running.c: batch normalisation's running statistics in
 * every algorithm's local steps (bn.running, bn.running_var; the shared
 * local solver ref/engine/sgd.c, pflref_bn_running_move), FedBN's client
 * optimizer, and the refusals of the algorithms whose own solvers do not
 * move the statistics (ref/engine/run.c, apfl.c).
 *
 * What is checked, and against what (never the code's own output):
 *   - FedAvg on an mlp with bn, one client, two steps: r_μ and r_v after
 *     each step by PyTorch's rule, worked by hand below (ε = 0 makes the
 *     BN output independent of W1 and b1, so their gradient is 0 and the
 *     second batch's statistics are known in advance);
 *   - bn.running = frozen leaves r_μ, r_v at init.w's values and every
 *     parameter bit for bit as under update (the training forward reads
 *     the batch statistics only);
 *   - bn.running_var = biased (s²_B into r_v), worked by hand; FedBN's
 *     fedbn.running_var = biased is the same switch;
 *   - FedBN with a client optimizer: weight decay never reaches r_μ, r_v
 *     (buffers never step), and the golden vector
 *     golden/fedbn/worked-momentum-client.json (independent 60-digit
 *     generator through golden/pflref_exact_optim.py) reproduces;
 *   - the refusals, with their exact messages: pfedme, prox,
 *     pflego and apfl (paper variant) on a model with bn under
 *     bn.running = update; a batch of one under the unbiased r_v; the CLI
 *     exits 2 naming algorithm.switches.bn.running.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "suites.h"
#include "testutil.h"

/* The mlp with bn of the hand-worked runs: d = h = k = 1, squared loss,
 * ε = 0, ρ = 1/4; w = (W1, b1, γ, β, r_μ, r_v, W2, b2) = (2, 1/2, 1, 0,
 * 0, 1, 3/4, 1/10).  Client 0's x = 1, 3, 2, 6, 7. */
#define BN_MODEL                                                             \
    "\"model\": {\"kind\": \"mlp\", \"d\": 1, \"h\": 1, \"k\": 1, "        \
    "\"loss\": \"squared\", \"bn\": true, \"bn_eps\": 0, "                 \
    "\"bn_momentum\": 0.25}, "                                               \
    "\"problem\": {\"clients\": [{\"X\": [[1], [3], [2], [6], [7]], "       \
    "\"y\": [0.5, -1.25, 2, 0.75, -0.5]}, {\"X\": [[1.5], [-2], [0.5]], "   \
    "\"y\": [1, 0.25, -0.75]}]}, "                                          \
    "\"init\": {\"kind\": \"given\", \"w\": [2, 0.5, 1, 0, 0, 1, 0.75, "    \
    "0.1]}, "

enum { W1 = 0, B1 = 1, GAMMA = 2, BETA = 3, R_MU = 4, R_V = 5, W2 = 6,
       B2 = 7, P_BN = 8 };

/* The spec text of algorithm `alg` (its hyperparameters and switches
 * objects' insides) on BN_MODEL with the given schedule rounds and post
 * phase (the schedule's "post" list, or NULL for none). */
static void bn_text(char *text, size_t size, const char *alg,
                    const char *hyper, const char *switches,
                    const char *rounds, const char *post)
{
    snprintf(text, size,
             "{\"format\": \"pflref-spec/1\", " BN_MODEL
             "\"algorithm\": {\"name\": \"%s\", \"hyperparameters\": {%s}, "
             "\"switches\": {%s}}, \"schedule\": {\"kind\": \"given\", "
             "\"rounds\": [%s]%s%s%s}}",
             alg, hyper, switches, rounds, post != NULL ? ", \"post\": [" : "",
             post != NULL ? post : "", post != NULL ? "]" : "");
}

static pflref_spec *bn_spec(const char *alg, const char *hyper,
                            const char *switches, const char *rounds)
{
    char text[4096];
    bn_text(text, sizeof text, alg, hyper, switches, rounds, NULL);
    return tu_spec(text);
}

/* FedAvg, client 0 alone, batches {x = 1, 3} then {x = 2, 6, 7}. */
static pflref_run_result *fedavg_run(const char *switches, int steps)
{
    pflref_spec *spec = bn_spec(
        "fedavg", "\"eta\": 0.1", switches,
        steps == 1 ? "{\"clients\": [0], \"batches\": [[[0, 1]]]}"
                   : "{\"clients\": [0], \"batches\": [[[0, 1], [2, 3, 4]]]}");
    pflref_run_result *res = tu_run(spec, NULL);
    pflref_spec_free(spec);
    ck_assert_uint_eq(res->P, P_BN);
    return res;
}

/* Step 1 at θ⁰: a = 2x + 1/2 = 5/2, 13/2: μ_B = 9/2, s²_B = 4, the
 * unbiased 2/(2 − 1) · 4 = 8:
 *   r_μ = (3/4)·0 + (1/4)·(9/2) = 9/8,  r_v = (3/4)·1 + (1/4)·8 = 11/4
 * (exact in binary).  Step 2: W1, b1 have not moved (ε = 0: x̂ = (x −
 * μ_x)/σ_x whatever W1 > 0 and b1, so ∂F/∂W1 = ∂F/∂b1 = 0, up to the
 * rounding of a sum that is 0), a = 9/2, 25/2, 29/2: μ_B = 21/2, s²_B =
 * (36 + 4 + 16)/3 = 56/3, unbiased 3/2 · 56/3 = 28:
 *   r_μ = (3/4)(9/8) + (1/4)(21/2) = 111/32,
 *   r_v = (3/4)(11/4) + (1/4)·28 = 145/16. */
START_TEST(test_fedavg_update_by_hand)
{
    pflref_run_result *one = fedavg_run("", 1);
    ck_assert_msg(one->w[R_MU] == 9.0 / 8.0 && one->w[R_V] == 11.0 / 4.0,
                  "after one step r_μ = %.17g, r_v = %.17g; PyTorch's rule "
                  "gives 9/8 and 11/4", one->w[R_MU], one->w[R_V]);
    pflref_run_result_free(one);
    pflref_run_result *two = fedavg_run("", 2);
    ck_assert_msg(fabs(two->w[R_MU] - 111.0 / 32.0) < 1e-13 &&
                      fabs(two->w[R_V] - 145.0 / 16.0) < 1e-13,
                  "after two steps r_μ = %.17g, r_v = %.17g; PyTorch's rule "
                  "gives 111/32 and 145/16", two->w[R_MU], two->w[R_V]);
    /* the premise of the hand-working: W1 and b1 (gradient 0) stay */
    ck_assert(fabs(two->w[W1] - 2.0) < 1e-14 && fabs(two->w[B1] - 0.5) < 1e-14);
    pflref_run_result_free(two);
}
END_TEST

/* bn.running = frozen: r_μ = 0, r_v = 1 (init.w's) after both steps, and
 * every parameter is update's bit for bit. */
START_TEST(test_fedavg_frozen)
{
    pflref_run_result *upd = fedavg_run("", 2);
    pflref_run_result *frz = fedavg_run("\"bn.running\": \"frozen\"", 2);
    ck_assert_msg(frz->w[R_MU] == 0.0 && frz->w[R_V] == 1.0,
                  "frozen moved the running statistics: r_μ = %.17g, r_v = "
                  "%.17g", frz->w[R_MU], frz->w[R_V]);
    static const int params[] = {W1, B1, GAMMA, BETA, W2, B2};
    for (size_t j = 0; j < sizeof params / sizeof params[0]; j++)
        ck_assert_msg(frz->w[params[j]] == upd->w[params[j]],
                      "entry %d differs between frozen and update (%.17g, "
                      "%.17g): the training forward read r_μ, r_v",
                      params[j], frz->w[params[j]], upd->w[params[j]]);
    ck_assert_msg(upd->w[GAMMA] != 1.0 && upd->w[W2] != 0.75,
                  "the parameters did not move: the comparison is empty");
    pflref_run_result_free(upd);
    pflref_run_result_free(frz);
}
END_TEST

/* bn.running_var = biased: r_v = (3/4)·1 + (1/4)·4 = 7/4, then
 * (3/4)(7/4) + (1/4)(56/3) = 21/16 + 14/3 = 287/48; r_μ as under
 * unbiased. */
START_TEST(test_fedavg_biased)
{
    pflref_run_result *res =
        fedavg_run("\"bn.running_var\": \"biased\"", 2);
    ck_assert_msg(fabs(res->w[R_V] - 287.0 / 48.0) < 1e-13,
                  "r_v = %.17g, the biased rule gives 287/48", res->w[R_V]);
    ck_assert(fabs(res->w[R_MU] - 111.0 / 32.0) < 1e-13);
    pflref_run_result_free(res);
}
END_TEST

/* Two clients, the average of their moved statistics (a state_dict
 * average): client 1's batch {x = 3/2, −2, 1/2}: a = 7/2, −7/2, 3/2,
 * μ_B = 1/2, s²_B = (9 + 16 + 1)/3 = 26/3, unbiased 13; its r_μ = 1/8,
 * r_v = 3/4 + 13/4 = 4; client 0 after one step 9/8, 11/4; weights
 * n_k/m_t = 5/8 and 3/8: r_μ = (5/8)(9/8) + (3/8)(1/8) = 3/4, r_v =
 * (5/8)(11/4) + (3/8)·4 = 103/32. */
START_TEST(test_fedavg_average)
{
    pflref_spec *spec = bn_spec(
        "fedavg", "\"eta\": 0.1", "",
        "{\"clients\": [0, 1], \"batches\": [[[0, 1]], [[0, 1, 2]]]}");
    pflref_run_result *res = tu_run(spec, NULL);
    ck_assert_msg(fabs(res->w[R_MU] - 0.75) < 1e-15 &&
                      fabs(res->w[R_V] - 103.0 / 32.0) < 1e-14,
                  "averaged r_μ = %.17g, r_v = %.17g; expected 3/4, 103/32",
                  res->w[R_MU], res->w[R_V]);
    pflref_run_result_free(res);
    pflref_spec_free(spec);
}
END_TEST

/* FedBN: fedbn.running_var = biased and bn.running_var = biased are one
 * switch (bit for bit), and bn.running = frozen holds there too. */
START_TEST(test_fedbn_switches)
{
    static const char *const rounds =
        "{\"clients\": [0, 1], \"batches\": [[[0, 1], [2, 3, 4]], "
        "[[0, 1, 2]]]}";
    pflref_spec *a = bn_spec("fedbn", "\"eta\": 0.1",
                             "\"fedbn.running_var\": \"biased\"", rounds);
    pflref_spec *b = bn_spec("fedbn", "\"eta\": 0.1",
                             "\"bn.running_var\": \"biased\"", rounds);
    pflref_spec *c = bn_spec("fedbn", "\"eta\": 0.1", "", rounds);
    pflref_spec *f = bn_spec("fedbn", "\"eta\": 0.1",
                             "\"bn.running\": \"frozen\"", rounds);
    pflref_run_result *ra = tu_run(a, NULL), *rb = tu_run(b, NULL),
                      *rc = tu_run(c, NULL), *rf = tu_run(f, NULL);
    ck_assert_msg(memcmp(ra->v, rb->v, 2 * P_BN * sizeof *ra->v) == 0,
                  "fedbn.running_var = biased and bn.running_var = biased "
                  "differ");
    /* client 1 (one step), biased: r_v = 3/4 + (1/4)(26/3) = 35/12 */
    ck_assert_msg(fabs(rb->v[P_BN + R_V] - 35.0 / 12.0) < 1e-15,
                  "client 1's biased r_v = %.17g, expected 35/12",
                  rb->v[P_BN + R_V]);
    ck_assert_msg(fabs(rc->v[P_BN + R_V] - 4.0) < 1e-15, "client 1's "
                  "unbiased r_v = %.17g, expected 4", rc->v[P_BN + R_V]);
    for (size_t i = 0; i < 2; i++)
        ck_assert_msg(rf->v[i * P_BN + R_MU] == 0.0 &&
                          rf->v[i * P_BN + R_V] == 1.0,
                      "FedBN under bn.running = frozen moved client %zu's "
                      "running statistics", i);
    pflref_run_result_free(ra);
    pflref_run_result_free(rb);
    pflref_run_result_free(rc);
    pflref_run_result_free(rf);
    pflref_spec_free(a);
    pflref_spec_free(b);
    pflref_spec_free(c);
    pflref_spec_free(f);
}
END_TEST

/* FedBN with a client optimizer (coupled weight decay 0.5, momentum 0.9,
 * its state per client): the buffers never step, so under bn.running =
 * frozen r_μ, r_v stay exactly 0 and 1 while γ (decayed and stepped)
 * moves; with the optimizer's defaults the run is plain FedBN's, bit for
 * bit. */
START_TEST(test_fedbn_optimizer)
{
    static const char *const rounds =
        "{\"clients\": [0, 1], \"batches\": [[[0, 1], [2, 3, 4]], "
        "[[0, 1, 2]]]}, {\"clients\": [0, 1], \"batches\": [[[1, 3]], "
        "[[2, 0]]]}";
    pflref_spec *s = bn_spec(
        "fedbn", "\"eta\": 0.1, \"opt.momentum\": 0.9, "
        "\"opt.weight_decay\": 0.5",
        "\"bn.running\": \"frozen\", \"opt.state\": \"client\"", rounds);
    pflref_run_result *r = tu_run(s, NULL);
    for (size_t i = 0; i < 2; i++) {
        ck_assert_msg(r->v[i * P_BN + R_MU] == 0.0 &&
                          r->v[i * P_BN + R_V] == 1.0,
                      "the optimizer stepped client %zu's running "
                      "statistics: r_μ = %.17g, r_v = %.17g", i,
                      r->v[i * P_BN + R_MU], r->v[i * P_BN + R_V]);
        ck_assert(r->v[i * P_BN + GAMMA] != 1.0);
    }
    pflref_run_result_free(r);
    pflref_spec_free(s);
    pflref_spec *plain = bn_spec("fedbn", "\"eta\": 0.1", "", rounds);
    pflref_spec *dflt = bn_spec("fedbn", "\"eta\": 0.1, \"opt.momentum\": 0",
                                "\"opt.state\": \"client\"", rounds);
    pflref_run_result *rp = tu_run(plain, NULL), *rd = tu_run(dflt, NULL);
    ck_assert(memcmp(rp->v, rd->v, 2 * P_BN * sizeof *rp->v) == 0);
    ck_assert(memcmp(rp->w, rd->w, P_BN * sizeof *rp->w) == 0);
    pflref_run_result_free(rp);
    pflref_run_result_free(rd);
    pflref_spec_free(plain);
    pflref_spec_free(dflt);
}
END_TEST

/* The FedBN + momentum vector (independent 60-digit generator). */
START_TEST(test_fedbn_momentum_vector)
{
    tu_assert_golden("golden/fedbn/worked-momentum-client.json");
}
END_TEST

/* The algorithms whose own solvers do not move the statistics refuse a
 * model with bn under bn.running = update, with the exact message, and
 * run under bn.running = frozen. */
static const struct {
    const char *alg, *hyper, *rounds, *post, *why;
} REFUSED[] = {
    {"pfedme", "\"eta\": 0.1, \"lambda\": 2, \"eta_p\": 0.05, \"K\": 2",
     "{\"clients\": [0, 1], \"batches\": [[[0, 1]], [[0, 1]]]}", NULL,
     "pFedMe's inner loop (Alg. 1 l. 7-8: K steps on θ toward w_{i,r}) runs "
     "K training forward passes per batch whose running statistics would "
     "belong to neither θ nor w_{i,r} alone: it is not wired to move them"},
    {"prox", "\"lambda\": 2, \"eta_p\": 0.05, \"K\": 2",
     "{\"clients\": [0, 1], \"batches\": [[[0, 1]], [[0, 1]]]}", NULL,
     "the prox algorithm's inner loop (K steps on θ toward w) runs K "
     "training forward passes per batch whose running statistics would "
     "belong to neither θ nor w alone: it is not wired to move them"},
};

START_TEST(test_refusals)
{
    const size_t q = (size_t)_i;
    char text[4096];
    bn_text(text, sizeof text, REFUSED[q].alg, REFUSED[q].hyper, "",
            REFUSED[q].rounds, REFUSED[q].post);
    pflref_spec *spec = tu_spec(text);
    pflref_error err;
    tu_run_error(spec, PFLREF_EINVAL, &err);
    ck_assert_str_eq(err.where, "algorithm.switches.bn.running");
    char want[PFLREF_MESSAGE_MAX];
    snprintf(want, sizeof want,
             "bn.running = update: %s cannot move the batch-norm running "
             "statistics of this model (an mlp with \"bn\": true): %s; give "
             "\"bn.running\": \"frozen\" to run it with r_μ, r_v left as "
             "they are", REFUSED[q].alg, REFUSED[q].why);
    ck_assert_str_eq(err.message, want);
    pflref_spec_free(spec);
}
END_TEST

/* The paper's APFL (v through the mixture) refuses; PFLlib's runs and
 * moves both w_i's and v_i's statistics. */
START_TEST(test_apfl)
{
    static const char *const rounds =
        "{\"clients\": [0, 1], \"batches\": [[[0, 1]], [[0, 1]]]}";
    pflref_spec *paper = bn_spec("apfl", "\"eta\": 0.1, \"alpha\": 0.25", "",
                                 rounds);
    pflref_error err;
    tu_run_error(paper, PFLREF_EINVAL, &err);
    ck_assert_str_eq(err.where, "algorithm.switches.bn.running");
    ck_assert_str_eq(err.message,
                     "bn.running = update: apfl.variant = paper steps v "
                     "through the mixture v̄ (Alg. 1 l. 6), whose training "
                     "pass has running statistics of neither v nor w_i, and "
                     "is not wired to move them on a model with batch "
                     "normalisation; give \"bn.running\": \"frozen\", or "
                     "apfl.variant = pfllib (v and w_i each train on their "
                     "own passes, the shared local solver moves both)");
    pflref_spec_free(paper);
    pflref_spec *pfllib = bn_spec("apfl", "\"eta\": 0.1, \"alpha\": 0.25",
                                  "\"apfl.variant\": \"pfllib\"", rounds);
    pflref_run_result *res = tu_run(pfllib, NULL);
    /* client 0's v: its batch {x = 1, 3} as in the FedAvg run: 9/8 and
     * 11/4 before the PFLlib mix v ← (1 − α) w_i + α v, which mixes two
     * models whose statistics both moved the same way */
    ck_assert_msg(res->v[R_MU] == 9.0 / 8.0 && res->v[R_V] == 11.0 / 4.0,
                  "PFLlib APFL's v_0: r_μ = %.17g, r_v = %.17g, expected "
                  "9/8 and 11/4", res->v[R_MU], res->v[R_V]);
    pflref_run_result_free(res);
    pflref_spec_free(pfllib);
}
END_TEST

/* Under bn.running = frozen, the refused algorithms run. */
START_TEST(test_frozen_runs)
{
    const size_t q = (size_t)_i;
    char text[4096];
    bn_text(text, sizeof text, REFUSED[q].alg, REFUSED[q].hyper,
            "\"bn.running\": \"frozen\"", REFUSED[q].rounds,
            REFUSED[q].post);
    pflref_spec *spec = tu_spec(text);
    pflref_run_result *res = tu_run(spec, NULL);
    pflref_run_result_free(res);
    pflref_spec_free(spec);
}
END_TEST

/* A batch of one under the unbiased r_v: PFLREF_EINVAL at "schedule",
 * naming round, client and step, and the switches that take it. */
START_TEST(test_batch_of_one)
{
    static const char *const rounds =
        "{\"clients\": [0], \"batches\": [[[0, 1], [3]]]}";
    pflref_spec *spec = bn_spec("fedavg", "\"eta\": 0.1", "", rounds);
    pflref_error err;
    tu_run_error(spec, PFLREF_EINVAL, &err);
    ck_assert_str_eq(err.where, "schedule");
    ck_assert_msg(strstr(err.message, "running statistics at round 0, "
                                      "client 0, step 2: ") == err.message,
                  "%s", err.message);
    ck_assert_msg(strstr(err.message, "\"bn.running_var\": \"biased\"") !=
                      NULL, "%s", err.message);
    pflref_spec_free(spec);
}
END_TEST

/* The program: exit 2, the switch named, no result file. */
START_TEST(test_cli_exit)
{
    char *dir = tu_tmpdir();
    char spec[4096];
    snprintf(spec, sizeof spec,
             "{\"format\": \"pflref-spec/1\", " BN_MODEL
             "\"algorithm\": {\"name\": \"pfedme\", \"hyperparameters\": "
             "{%s}}, \"schedule\": {\"kind\": \"given\", \"rounds\": [%s]}}",
             REFUSED[0].hyper, REFUSED[0].rounds);
    tu_cli_refuses(dir, 0, spec, "algorithm.switches.bn.running");
    /* an unknown value of the switch */
    snprintf(spec, sizeof spec,
             "{\"format\": \"pflref-spec/1\", " BN_MODEL
             "\"algorithm\": {\"name\": \"fedavg\", \"hyperparameters\": "
             "{\"eta\": 0.1}, \"switches\": {\"bn.running\": \"eval\"}}, "
             "\"schedule\": {\"kind\": \"given\", \"rounds\": []}}");
    tu_cli_refuses(dir, 1, spec, "algorithm.switches.bn.running");
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

Suite *bn_running_suite(void)
{
    Suite *s = suite_create("bn_running");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_fedavg_update_by_hand);
    tcase_add_test(tc, test_fedavg_frozen);
    tcase_add_test(tc, test_fedavg_biased);
    tcase_add_test(tc, test_fedavg_average);
    tcase_add_test(tc, test_fedbn_switches);
    tcase_add_test(tc, test_fedbn_optimizer);
    tcase_add_test(tc, test_fedbn_momentum_vector);
    tcase_add_loop_test(tc, test_refusals, 0,
                        (int)(sizeof REFUSED / sizeof REFUSED[0]));
    tcase_add_test(tc, test_apfl);
    tcase_add_loop_test(tc, test_frozen_runs, 0,
                        (int)(sizeof REFUSED / sizeof REFUSED[0]));
    tcase_add_test(tc, test_batch_of_one);
    tcase_add_test(tc, test_cli_exit);
    suite_add_tcase(s, tc);
    return s;
}
