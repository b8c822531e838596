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
 *   - bn.aggregate = parameters_only (PFLlib), worked by hand: the
 *     global's r_μ, r_v are the first participant's and its parameters the
 *     average bit for bit; a client that sits out a round starts the next
 *     from its own statistics; evaluation uses each client's own
 *     (the loss written out here); fedavg's preset pfllib sets it; check
 *     --resync reloads each client's own statistics from its records;
 *   - the refusal, with its exact message: apfl (paper variant),
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
#include <jansson.h>
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

/* bn.aggregate = parameters_only (PFLlib: clientbase.py:67-69,
 * serverbase.py:138-150).  Round 0 as in test_fedavg_average: client 0
 * leaves r_μ = 9/8, r_v = 11/4, client 1 leaves 1/8, 4; the global's are
 * the first participant's, client 0's: 9/8, 11/4 (not the average 3/4,
 * 103/32), its parameters the same average bit for bit.  Round 1, client 1
 * alone on {x = 3/2, −2, 1/2} again (W1, b1 have not moved: a = 7/2, −7/2,
 * 3/2, μ_B = 1/2, unbiased 13) starts from its OWN 1/8, 4:
 *   r_μ = (3/4)(1/8) + (1/4)(1/2) = 7/32,  r_v = (3/4)·4 + (1/4)·13 = 25/4,
 * where the state_dict reading starts from the global's 3/4, 103/32:
 *   r_μ = (3/4)(3/4) + 1/8 = 11/16,  r_v = (3/4)(103/32) + 13/4 = 725/128. */
#define KEEP_R0 "{\"clients\": [0, 1], \"batches\": [[[0, 1]], [[0, 1, 2]]]}"
#define KEEP_R1 KEEP_R0 ", {\"clients\": [1], \"batches\": [[[0, 1, 2]]]}"
#define KEEP_SW "\"bn.aggregate\": \"parameters_only\""

START_TEST(test_keep_first_uploader)
{
    pflref_spec *avg = bn_spec("fedavg", "\"eta\": 0.1", "", KEEP_R0);
    pflref_spec *keep = bn_spec("fedavg", "\"eta\": 0.1", KEEP_SW, KEEP_R0);
    pflref_run_result *a = tu_run(avg, NULL);
    pflref_run_result *k = tu_run(keep, NULL);
    ck_assert_msg(k->w[R_MU] == 9.0 / 8.0 && k->w[R_V] == 11.0 / 4.0,
                  "the global's r_μ = %.17g, r_v = %.17g; the first "
                  "uploader's are 9/8 and 11/4", k->w[R_MU], k->w[R_V]);
    static const int params[] = {W1, B1, GAMMA, BETA, W2, B2};
    for (size_t j = 0; j < sizeof params / sizeof params[0]; j++)
        ck_assert_msg(k->w[params[j]] == a->w[params[j]],
                      "parameter %d differs from the state_dict average "
                      "(%.17g, %.17g): parameters() must be averaged alike",
                      params[j], k->w[params[j]], a->w[params[j]]);
    ck_assert(a->w[R_MU] == 0.75);   /* the contrast: averaged there */
    pflref_run_result_free(a);
    pflref_run_result_free(k);
    pflref_spec_free(avg);
    pflref_spec_free(keep);
}
END_TEST

/* schedule.rounds[t].first_upload (PFLlib's uploaded_models[0], a random
 * uploader: serverbase.py:117-118, 141): round 0 of test_keep_first_uploader
 * with client 1 given as the first uploader takes client 1's statistics,
 * r_μ = 1/8, r_v = 4 (not client 0's 9/8, 11/4), the parameters the same
 * average bit for bit; the result writes the field back. */
START_TEST(test_keep_first_upload_given)
{
    pflref_spec *avg = bn_spec("fedavg", "\"eta\": 0.1", "", KEEP_R0);
    pflref_spec *keep = bn_spec(
        "fedavg", "\"eta\": 0.1", KEEP_SW,
        "{\"clients\": [0, 1], \"batches\": [[[0, 1]], [[0, 1, 2]]], "
        "\"first_upload\": 1}");
    pflref_run_result *a = tu_run(avg, NULL);
    pflref_run_result *k = tu_run(keep, NULL);
    ck_assert_msg(k->w[R_MU] == 1.0 / 8.0 && k->w[R_V] == 4.0,
                  "the global's r_μ = %.17g, r_v = %.17g; client 1's (the "
                  "given first uploader's) are 1/8 and 4", k->w[R_MU],
                  k->w[R_V]);
    static const int params[] = {W1, B1, GAMMA, BETA, W2, B2};
    for (size_t j = 0; j < sizeof params / sizeof params[0]; j++)
        ck_assert_msg(k->w[params[j]] == a->w[params[j]],
                      "parameter %d differs from the state_dict average "
                      "(%.17g, %.17g)", params[j], k->w[params[j]],
                      a->w[params[j]]);
    ck_assert_uint_eq(keep->schedule->rounds[0].has_first_upload, 1);
    ck_assert_uint_eq(keep->schedule->rounds[0].first_upload, 1);
    pflref_run_result_free(a);
    pflref_run_result_free(k);
    pflref_spec_free(avg);
    pflref_spec_free(keep);
}
END_TEST

/* Every round that takes the global's statistics from one uploader honours
 * first_upload (pflref_bn_first_upload): each algorithm's parameters_only
 * vector, with its last round's first uploader given as another of its
 * participants than the lowest (client 2 where the lowest is 1; FedRoD's
 * last round is {0, 1}: client 1), ends with another global w (a client
 * starts each round from its own statistics, so only the last round's
 * choice reaches the final w); SCAFFOLD under scaffold.bn_global =
 * first_upload (its preset's previous reads no uploader).  Per-FedAvg's
 * vector is not among them: its last round has one participant. */
static double *final_w(json_t *vec, int first, size_t *P)
{
    json_t *spec = json_deep_copy(json_object_get(vec, "spec"));
    json_t *alg = json_object_get(spec, "algorithm");
    if (strcmp(json_string_value(json_object_get(alg, "name")), "scaffold") == 0) {
        json_t *sw = json_object_get(alg, "switches");
        if (sw == NULL)
            json_object_set_new(alg, "switches", sw = json_object());
        json_object_set_new(sw, "scaffold.bn_global", json_string("first_upload"));
    }
    json_t *rounds = json_object_get(json_object_get(spec, "schedule"),
                                     "rounds");
    if (first >= 0)
        json_object_set_new(json_array_get(rounds, json_array_size(rounds) - 1),
                            "first_upload", json_integer(first));
    char *text = json_dumps(spec, JSON_COMPACT);
    pflref_spec *s = tu_spec(text);
    pflref_run_result *res = tu_run(s, NULL);
    *P = res->P;
    double *w = malloc(res->P * sizeof *w);
    ck_assert_ptr_nonnull(w);
    memcpy(w, res->w, res->P * sizeof *w);
    pflref_run_result_free(res);
    pflref_spec_free(s);
    free(text);
    json_decref(spec);
    return w;
}

static const char *const FIRST_UPLOAD_VECTORS[] = {
    "golden/layers/fedavg-bn1d-mlp-pfllib-keep.json",
    "golden/layers/ditto-bn1d-mlp-pfllib-keep.json",
    "golden/layers/fedalt-bn1d-mlp-fedrep-keep.json",
    "golden/layers/fedsim-bn1d-mlp-fedper-pfllib-keep.json",
    "golden/layers/fedprox-bn1d-mlp-pfllib-keep.json",
    "golden/layers/pfedme-bn1d-mlp-pfllib-keep.json",
    "golden/layers/scaffold-bn1d-mlp-pfllib-keep.json",
    "golden/layers/apfl-bn1d-mlp-pfllib-keep.json",
    "golden/layers/feddyn-bn1d-mlp-pfllib-keep.json",
    "golden/fedrod/layers-bn-pfllib-keep.json",
    "golden/fedala/layers-bn-pfllib.json",
    "golden/fedpac/layers-bn-pfllib.json",
    "golden/moon/layers-bn-pfllib.json",
};
/* The uploader given: the last participant of the vector's last round. */
static int last_participant(json_t *vec)
{
    json_t *rounds = json_object_get(
        json_object_get(json_object_get(vec, "spec"), "schedule"), "rounds");
    json_t *ids = json_object_get(
        json_array_get(rounds, json_array_size(rounds) - 1), "clients");
    ck_assert_uint_ge(json_array_size(ids), 2);
    return (int)json_integer_value(json_array_get(ids, json_array_size(ids) - 1));
}

START_TEST(test_first_upload_honoured)
{
    char *path = tu_repo_path(FIRST_UPLOAD_VECTORS[_i]);
    json_error_t jerr;
    json_t *vec = json_load_file(path, 0, &jerr);
    ck_assert_msg(vec != NULL, "%s: %s", path, jerr.text);
    size_t P0, P2;
    const int last = last_participant(vec);
    double *w0 = final_w(vec, -1, &P0), *w2 = final_w(vec, last, &P2);
    ck_assert_uint_eq(P0, P2);
    double gap = 0.0;
    for (size_t p = 0; p < P0; p++)
        gap = fmax(gap, fabs(w2[p] - w0[p]));
    ck_assert_msg(gap > 1e-9, "%s: first_upload = %d in the last round left "
                  "the final w unchanged (max gap %g): not honoured", path,
                  last, gap);
    free(w0);
    free(w2);
    json_decref(vec);
    free(path);
}
END_TEST

START_TEST(test_keep_own_statistics)
{
    pflref_spec *keep = bn_spec("fedavg", "\"eta\": 0.1", KEEP_SW, KEEP_R1);
    pflref_run_result *k = tu_run(keep, NULL);
    ck_assert_msg(fabs(k->w[R_MU] - 7.0 / 32.0) < 1e-13 &&
                      fabs(k->w[R_V] - 25.0 / 4.0) < 1e-13,
                  "client 1 did not start round 1 from its own running "
                  "statistics: r_μ = %.17g, r_v = %.17g, expected 7/32 and "
                  "25/4", k->w[R_MU], k->w[R_V]);
    pflref_spec *avg = bn_spec("fedavg", "\"eta\": 0.1", "", KEEP_R1);
    pflref_run_result *a = tu_run(avg, NULL);
    ck_assert_msg(fabs(a->w[R_MU] - 11.0 / 16.0) < 1e-13 &&
                      fabs(a->w[R_V] - 725.0 / 128.0) < 1e-13,
                  "average: r_μ = %.17g, r_v = %.17g, expected 11/16 and "
                  "725/128", a->w[R_MU], a->w[R_V]);
    pflref_run_result_free(a);
    pflref_spec_free(avg);
    pflref_run_result_free(k);
    pflref_spec_free(keep);
}
END_TEST

/* The mean squared loss of the mlp with bn in evaluation mode on client
 * i's training set, written out here: a = W1 x + b1, u = γ (a − r_μ)/√r_v
 * + β (ε = 0), ŷ = W2 max(u, 0) + b2, with w's parameters and the given
 * r_μ, r_v. */
static double eval_loss(const double *w, size_t i, double r_mu, double r_v)
{
    static const double X[2][5] = {{1, 3, 2, 6, 7}, {1.5, -2, 0.5}};
    static const double Y[2][5] = {{0.5, -1.25, 2, 0.75, -0.5},
                                   {1, 0.25, -0.75}};
    const size_t n = i == 0 ? 5 : 3;
    double sum = 0.0;
    for (size_t j = 0; j < n; j++) {
        const double a = w[W1] * X[i][j] + w[B1];
        const double u = w[GAMMA] * (a - r_mu) / sqrt(r_v) + w[BETA];
        const double y = w[W2] * (u > 0.0 ? u : 0.0) + w[B2];
        sum += (y - Y[i][j]) * (y - Y[i][j]);
    }
    return sum / (double)n;
}

/* PFLlib's evaluate() tests each client's own model: w's parameters with
 * the client's running statistics (client 0: 9/8, 11/4 from round 0;
 * client 1: 7/32, 25/4), not the global's (7/32, 25/4). */
START_TEST(test_keep_evaluation)
{
    pflref_spec *keep = bn_spec("fedavg", "\"eta\": 0.1", KEEP_SW, KEEP_R1);
    pflref_run_result *k = tu_run(keep, NULL);
    const double own0 = eval_loss(k->w, 0, 9.0 / 8.0, 11.0 / 4.0);
    const double glob0 = eval_loss(k->w, 0, k->w[R_MU], k->w[R_V]);
    const double own1 = eval_loss(k->w, 1, 7.0 / 32.0, 25.0 / 4.0);
    ck_assert_msg(fabs(own0 - glob0) > 1e-3, "client 0's own and the "
                  "global's statistics give the same loss: no contrast");
    ck_assert_msg(fabs(k->eval[0].train[0].loss - own0) < 1e-12 * (1 + own0),
                  "client 0's loss %.17g; with its own running statistics "
                  "%.17g, with the global's %.17g", k->eval[0].train[0].loss,
                  own0, glob0);
    ck_assert_msg(fabs(k->eval[0].train[1].loss - own1) < 1e-12 * (1 + own1),
                  "client 1's loss %.17g, expected %.17g",
                  k->eval[0].train[1].loss, own1);
    pflref_run_result_free(k);
    pflref_spec_free(keep);
}
END_TEST

/* FedAvg's preset pfllib sets bn.aggregate = parameters_only (bit for bit
 * the switch given), and on a model without batch normalisation it runs as
 * FedAvg (the explicit switch is refused there: docs/bad-inputs.md Z1). */
START_TEST(test_keep_preset)
{
    char text[4096];
    bn_text(text, sizeof text, "fedavg", "\"eta\": 0.1", KEEP_SW, KEEP_R1,
            NULL);
    pflref_spec *sw = tu_spec(text);
    char *at = strstr(text, "\"switches\"");
    ck_assert_ptr_nonnull(at);
    /* the same spec with the preset in place of the switch */
    char pre[4096];
    snprintf(pre, sizeof pre, "%.*s\"preset\": \"pfllib\"%s",
             (int)(at - text), text, strchr(at, '}') + 1);
    pflref_spec *ps = tu_spec(pre);
    pflref_run_result *a = tu_run(sw, NULL);
    pflref_run_result *b = tu_run(ps, NULL);
    ck_assert(memcmp(a->w, b->w, P_BN * sizeof *a->w) == 0);
    ck_assert(fabs(b->w[R_MU] - 7.0 / 32.0) < 1e-13);
    pflref_run_result_free(a);
    pflref_run_result_free(b);
    pflref_spec_free(sw);
    pflref_spec_free(ps);
    pflref_spec *lin = tu_spec(
        "{\"format\": \"pflref-spec/1\", \"model\": {\"kind\": \"linear\", "
        "\"d\": 1, \"loss\": \"squared\"}, \"problem\": {\"clients\": "
        "[{\"X\": [[1], [2]], \"y\": [1, 0]}, {\"X\": [[3], [1], [-1]], \"y\": [2, 1, 0]}]}, "
        "\"algorithm\": {\"name\": \"fedavg\", \"preset\": \"pfllib\", "
        "\"hyperparameters\": {\"eta\": 0.1}}, \"schedule\": {\"kind\": "
        "\"given\", \"rounds\": [" KEEP_R0 "]}}");
    ck_assert_int_eq(lin->hyper.bn_aggregate, PFLREF_BN_AGGREGATE_PARAMETERS);
    pflref_run_result *r = tu_run(lin, NULL);
    pflref_run_result_free(r);
    pflref_spec_free(lin);
}
END_TEST

/* The value at entry q of record (kind, name, round, client) of tj, NaN
 * when there is none. */
static double rec_at(const pflref_trajectory *tj, pflref_event_kind kind,
                     const char *name, long round, long client, size_t q)
{
    for (size_t r = 0; r < tj->count; r++) {
        const pflref_record *rc = &tj->records[r];
        if (rc->kind == kind && strcmp(rc->name, name) == 0 &&
            rc->round == round && rc->client == client)
            return tj->values[rc->offset + q];
    }
    return NAN;
}

/* A loader (pflref_state_loader) handing back a recorded run's records,
 * with client 1's round-0 w_local (its CLIENT_END: the model it keeps)
 * having r_μ moved by KEEP_DELTA: a candidate whose client 1 left other
 * running statistics. */
#define KEEP_DELTA 0.125
static int load_keep_moved(void *ctx, pflref_event_kind kind, const char *what,
                           long round, long client, double *dst, size_t n)
{
    const pflref_trajectory *tj = ctx;
    const pflref_record *best = NULL;
    for (size_t r = 0; r < tj->count; r++) {
        const pflref_record *rc = &tj->records[r];
        if (rc->kind == kind && strcmp(rc->name, what) == 0 &&
            rc->round >= 0 && rc->round <= round && rc->len == n &&
            strcmp(rc->phase, "train") == 0 &&
            (client < 0 || rc->client == client) &&
            (kind == PFLREF_EV_SERVER ? rc->round == round
                                      : best == NULL ||
                                            rc->round >= best->round))
            best = rc;
    }
    if (best == NULL)
        return 0;
    memcpy(dst, tj->values + best->offset, n * sizeof *dst);
    if (kind == PFLREF_EV_CLIENT_END && strcmp(what, "w_local") == 0 &&
        best->client == 1 && best->round == 0)
        dst[R_MU] += KEEP_DELTA;
    return 1;
}

/* check --resync under bn.aggregate = parameters_only reloads each
 * client's own running statistics from its last w_local record: client 1
 * sits out round 1 and starts round 2 from the r_μ it left in round 0 as
 * the candidate recorded it (moved by δ), while client 0, which trained in
 * round 1, starts from its own, unmoved. */
static void keep_resync_spec(pflref_spec *spec)
{
    pflref_trajectory ref, again;
    pflref_trajectory_init(&ref, PFLREF_RECORD_STEP);
    const pflref_trace rec = {pflref_trajectory_emit, &ref};
    pflref_run_result *res = tu_run(spec, &rec);
    pflref_trajectory_init(&again, PFLREF_RECORD_STEP);
    const pflref_trace sink = {pflref_trajectory_emit, &again};
    pflref_error err;
    ck_assert_int_eq(pflref_run_resync(spec->problem, spec->algorithm,
                                       &spec->hyper, spec->schedule, spec->w0,
                                       load_keep_moved, &ref, &sink, &err),
                     PFLREF_OK);
    const pflref_event_kind B = PFLREF_EV_CLIENT_BEGIN;
    const double r1 = rec_at(&ref, B, "w_local", 2, 1, R_MU);
    ck_assert(!isnan(r1));
    ck_assert_double_eq(rec_at(&again, B, "w_local", 2, 1, R_MU),
                        r1 + KEEP_DELTA);
    ck_assert_double_eq(rec_at(&again, B, "w_local", 1, 0, R_MU),
                        rec_at(&ref, B, "w_local", 1, 0, R_MU));
    /* the parameters come from w, not from the client's own model */
    ck_assert_double_eq(rec_at(&again, B, "w_local", 2, 1, GAMMA),
                        rec_at(&ref, B, "w_local", 2, 1, GAMMA));
    pflref_trajectory_free(&again);
    pflref_trajectory_free(&ref);
    pflref_run_result_free(res);
    pflref_spec_free(spec);
}

static void keep_resync(const char *alg, const char *hyp)
{
    keep_resync_spec(bn_spec(alg, hyp, KEEP_SW,
                             KEEP_R0 ", {\"clients\": [0], \"batches\": "
                             "[[[2, 3]]]}, {\"clients\": [1], \"batches\": "
                             "[[[0, 1, 2]]]}"));
}

/* The same under Per-FedAvg (perfedavg.c's load_state: pflref_bn_own_load),
 * FO, each participation one local step of three batches, and its post
 * phase. */
START_TEST(test_perfedavg_keep_resync_reloads)
{
    char text[4096];
    bn_text(text, sizeof text, "perfedavg", "\"alpha\": 0.1, \"beta\": 0.2",
            "\"perfedavg.variant\": \"fo\", " KEEP_SW,
            "{\"clients\": [0, 1], \"batches\": [[[0, 1], [0, 1], [0, 1]], "
            "[[0, 1, 2], [0, 1, 2], [0, 1, 2]]]}, {\"clients\": [0], "
            "\"batches\": [[[2, 3], [2, 3], [2, 3]]]}, {\"clients\": [1], "
            "\"batches\": [[[0, 1, 2], [0, 1, 2], [0, 1, 2]]]}",
            "[[0, 1]], [[0, 1, 2]]");
    keep_resync_spec(tu_spec(text));
}
END_TEST

/* The same under FedRoD's preset pfllib (fedrod.c's load_state reloads
 * φ_P,i and the own statistics), on BN_MODEL's inputs as a two-class
 * classifier. */
START_TEST(test_fedrod_keep_resync_reloads)
{
    keep_resync_spec(tu_spec(
        "{\"format\": \"pflref-spec/1\", \"model\": {\"kind\": \"mlp\", "
        "\"d\": 1, \"h\": 1, \"k\": 2, \"loss\": \"cross_entropy\", "
        "\"activation\": \"identity\", \"bn\": true, \"bn_eps\": 0, "
        "\"bn_momentum\": 0.25}, \"problem\": {\"clients\": [{\"X\": [[1], "
        "[3], [2], [6], [7]], \"y\": [0, 1, 1, 0, 1]}, {\"X\": [[1.5], [-2], "
        "[0.5]], \"y\": [1, 0, 0]}]}, \"init\": {\"kind\": \"given\", "
        "\"w\": [2, 0.5, 1, 0, 0, 1, 0.75, -0.5, 0.1, -0.2]}, "
        "\"algorithm\": {\"name\": \"fedrod\", \"preset\": \"pfllib\", "
        "\"hyperparameters\": {\"eta\": 0.3}}, \"schedule\": {\"kind\": "
        "\"given\", \"rounds\": [" KEEP_R0 ", {\"clients\": [0], "
        "\"batches\": [[[2, 3]]]}, {\"clients\": [1], \"batches\": "
        "[[[0, 1, 2]]]}]}}"));
}
END_TEST

START_TEST(test_keep_resync_reloads)
{
    keep_resync("fedavg", "\"eta\": 0.1");
}
END_TEST

/* The same under Ditto: its load_state reloads each client's r_k from the
 * buffers of its recorded global copy w_local (ref/engine/bn_own.c). */
START_TEST(test_ditto_keep_resync_reloads)
{
    keep_resync("ditto", "\"eta\": 0.1, \"lambda\": 0.5");
}
END_TEST

/* Ditto under bn.aggregate (ref/algorithms/ditto.c, ditto_round_keep):
 * its global copies w_k take plain steps from w^t and are averaged with
 * n_k/m_t as FedAvg's, and v_k never reaches them (prox_ref = round_start),
 * so Ditto's w is FedAvg's bit for bit under either value: with
 * parameters_only client 1 starts round 1 from its own r_μ, r_v (w's r_μ
 * = 7/32, r_v = 25/4, test_keep_own_statistics), with average from the
 * global's (11/16, 725/128).  Its preset pfllib sets parameters_only
 * (serverditto.py sends and aggregates through serverbase.py), harmless
 * on a model without batch normalisation. */
START_TEST(test_ditto_keep)
{
    static const char *const sws[] = {KEEP_SW, ""};
    static const double r_mu[] = {7.0 / 32.0, 11.0 / 16.0};
    for (size_t j = 0; j < 2; j++) {
        pflref_spec *f = bn_spec("fedavg", "\"eta\": 0.1", sws[j], KEEP_R1);
        pflref_spec *d = bn_spec("ditto", "\"eta\": 0.1, \"lambda\": 0.5",
                                 sws[j], KEEP_R1);
        pflref_run_result *a = tu_run(f, NULL);
        pflref_run_result *b = tu_run(d, NULL);
        ck_assert_msg(memcmp(a->w, b->w, P_BN * sizeof *a->w) == 0,
                      "ditto's w differs from fedavg's under bn.aggregate "
                      "= %s", j == 0 ? "parameters_only" : "average");
        ck_assert_msg(fabs(b->w[R_MU] - r_mu[j]) < 1e-13,
                      "ditto's r_μ = %.17g, expected %.17g", b->w[R_MU],
                      r_mu[j]);
        pflref_run_result_free(a);
        pflref_run_result_free(b);
        pflref_spec_free(f);
        pflref_spec_free(d);
    }
    pflref_spec *lin = tu_spec(
        "{\"format\": \"pflref-spec/1\", \"model\": {\"kind\": \"linear\", "
        "\"d\": 1, \"loss\": \"squared\"}, \"problem\": {\"clients\": "
        "[{\"X\": [[1], [2]], \"y\": [1, 0]}, {\"X\": [[3], [1], [-1]], \"y\": [2, 1, 0]}]}, "
        "\"algorithm\": {\"name\": \"ditto\", \"preset\": \"pfllib\", "
        "\"hyperparameters\": {\"eta\": 0.1, \"lambda\": 0.5}}, \"schedule\": {\"kind\": "
        "\"given\", \"rounds\": [{\"clients\": [0, 1], \"batches\": "
        "[[[0, 1]], [[0, 1, 2]]], \"personal\": [[[1]], [[2, 0]]]}]}}");
    ck_assert_int_eq(lin->hyper.bn_aggregate, PFLREF_BN_AGGREGATE_PARAMETERS);
    pflref_run_result *r = tu_run(lin, NULL);
    pflref_run_result_free(r);
    pflref_spec_free(lin);
}
END_TEST

/* FedSim under the preset fedper_pfllib (PFLlib's FedPer: the head W2, b2
 * personal, the body with bn shared), which sets bn.aggregate =
 * parameters_only (ref/algorithms/fedalt.c, pfl_round_keep).  In round 0
 * both heads start at w⁰'s, and with γ_u = γ_v = η the joint steps are
 * FedAvg's and the n_i weights on the body FedAvg's samples, so the body
 * (W1, b1, γ, β, r_μ, r_v) is FedAvg's bit for bit under either value
 * (r_μ = 9/8, the first uploader's, or 3/4, test_keep_first_uploader).
 * In round 1 (client 1 alone; W1, b1 never move, so its batch statistics
 * are those of round 0) client 1 starts from its own r_μ, r_v under
 * parameters_only: r_μ = 7/32, r_v = 25/4; from the server's under
 * average: 11/16, 725/128 (test_keep_own_statistics).  Under pfl.state =
 * stateless the switch is refused (docs/bad-inputs.md I11). */
START_TEST(test_fedsim_keep)
{
    static const char *const fedavg_sw[] = {KEEP_SW, ""};
    static const char *const fedsim_sw[] = {"", "\"bn.aggregate\": \"average\""};
    static const double r_mu[] = {7.0 / 32.0, 11.0 / 16.0};
    static const double r_v[] = {25.0 / 4.0, 725.0 / 128.0};
    static const char *const rounds[] = {KEEP_R0, KEEP_R1};
    for (size_t j = 0; j < 2; j++)
        for (size_t r = 0; r < 2; r++) {
            pflref_spec *f = bn_spec("fedavg", "\"eta\": 0.1", fedavg_sw[j],
                                     rounds[r]);
            char text[4096], pre[4096];
            bn_text(text, sizeof text, "fedsim",
                    "\"gamma_u\": 0.1, \"gamma_v\": 0.1", fedsim_sw[j],
                    rounds[r], NULL);
            char *at = strstr(text, "\"hyperparameters\"");
            ck_assert_ptr_nonnull(at);
            snprintf(pre, sizeof pre,
                     "%.*s\"preset\": \"fedper_pfllib\", %s",
                     (int)(at - text), text, at);
            pflref_spec *d = tu_spec(pre);
            ck_assert_int_eq(d->hyper.bn_aggregate,
                             j == 0 ? PFLREF_BN_AGGREGATE_PARAMETERS
                                    : PFLREF_BN_AGGREGATE_AVERAGE);
            pflref_run_result *a = tu_run(f, NULL);
            pflref_run_result *b = tu_run(d, NULL);
            if (r == 0)   /* one round: the body is FedAvg's */
                for (int p = W1; p <= R_V; p++)
                    ck_assert_msg(a->w[p] == b->w[p],
                                  "fedsim's body entry %d = %.17g, "
                                  "fedavg's %.17g (bn.aggregate %s)", p,
                                  b->w[p], a->w[p],
                                  j == 0 ? "parameters_only" : "average");
            else
                ck_assert_msg(fabs(b->w[R_MU] - r_mu[j]) < 1e-13 &&
                                  fabs(b->w[R_V] - r_v[j]) < 1e-13,
                              "fedsim's r_μ = %.17g, r_v = %.17g, "
                              "expected %.17g, %.17g", b->w[R_MU],
                              b->w[R_V], r_mu[j], r_v[j]);
            pflref_run_result_free(a);
            pflref_run_result_free(b);
            pflref_spec_free(f);
            pflref_spec_free(d);
        }
}
END_TEST

/* FedProx (ref/algorithms/fedprox.c) under bn.aggregate: with μ = 0 and
 * fedprox.sampling = uniform_weighted its steps and weights are FedAvg's,
 * so its w is FedAvg's bit for bit under either value (r_μ = 7/32 with
 * parameters_only, 11/16 with average, test_keep_own_statistics); its
 * preset pfllib sets parameters_only. */
START_TEST(test_fedprox_keep)
{
    static const char *const fedavg_sw[] = {KEEP_SW, ""};
    static const char *const fedprox_sw[] = {
        "\"fedprox.sampling\": \"uniform_weighted\", " KEEP_SW,
        "\"fedprox.sampling\": \"uniform_weighted\""};
    static const double r_mu[] = {7.0 / 32.0, 11.0 / 16.0};
    for (size_t j = 0; j < 2; j++) {
        pflref_spec *f = bn_spec("fedavg", "\"eta\": 0.1", fedavg_sw[j],
                                 KEEP_R1);
        pflref_spec *d = bn_spec("fedprox",
                                 "\"eta\": 0.1, \"fedprox.mu\": 0",
                                 fedprox_sw[j], KEEP_R1);
        pflref_run_result *a = tu_run(f, NULL);
        pflref_run_result *b = tu_run(d, NULL);
        ck_assert_msg(memcmp(a->w, b->w, P_BN * sizeof *a->w) == 0,
                      "fedprox's w differs from fedavg's under bn.aggregate "
                      "= %s", j == 0 ? "parameters_only" : "average");
        ck_assert(fabs(b->w[R_MU] - r_mu[j]) < 1e-13);
        pflref_run_result_free(a);
        pflref_run_result_free(b);
        pflref_spec_free(f);
        pflref_spec_free(d);
    }
}
END_TEST

/* bn.aggregate as the preset `preset` of `alg` sets it (no switch of the
 * spec's own; nothing is run). */
static int tu_spec_preset_aggregate(const char *alg, const char *hyp,
                                    const char *preset)
{
    char text[4096];
    bn_text(text, sizeof text, alg, hyp, "", KEEP_R1, NULL);
    char *at = strstr(text, "\"hyperparameters\"");
    ck_assert_ptr_nonnull(at);
    char pre[4096];
    snprintf(pre, sizeof pre, "%.*s\"preset\": \"%s\", %s", (int)(at - text),
             text, preset, at);
    pflref_spec *ps = tu_spec(pre);
    const int agg = ps->hyper.bn_aggregate;
    pflref_spec_free(ps);
    return agg;
}

/* SCAFFOLD (ref/algorithms/scaffold.c) under bn.aggregate on KEEP_R1 (η_l
 * = 0.1, η_g = 1, option II, c = c_i = 0 at the start).  ∂F/∂W1 = ∂F/∂b1
 * = 0 (test_keep_own_statistics), so x − y_i = 0 there, c_i⁺ = 0 there and
 * the training passes see the same a as FedAvg's: client 0 leaves r_μ =
 * 9/8, r_v = 11/4 in round 0, client 1 leaves 1/8, 4.
 *   parameters_only: round 1, client 1 from its own 1/8, 4 leaves 7/32,
 *     25/4, the first (only) participant's: x's.
 *   parameters_only with scaffold.bn_global = previous (PFLlib
 *     serverscaffold.py:124-129): x's r_μ, r_v
 *     never move: w⁰'s 0, 1 after both rounds (the preset pfllib's reading,
 *     bit for bit).
 *   average: x ← x + (1/2) Σ (y_i − x) on every entry: r_μ = (9/8 + 1/8)/2
 *     = 5/8, r_v = (11/4 + 4)/2 = 27/8; round 1, client 1 from those:
 *     r_μ = (3/4)(5/8) + 1/8 = 19/32, r_v = (3/4)(27/8) + 13/4 = 185/32. */
START_TEST(test_scaffold_keep)
{
    static const char *const sw[] = {
        KEEP_SW, KEEP_SW ", \"scaffold.bn_global\": \"previous\"", ""};
    static const double want[3][2] = {
        {7.0 / 32.0, 25.0 / 4.0}, {0.0, 1.0}, {19.0 / 32.0, 185.0 / 32.0}};
    pflref_run_result *r[3];
    pflref_spec *sp[3];
    for (size_t j = 0; j < 3; j++) {
        sp[j] = bn_spec("scaffold", "\"eta\": 0.1", sw[j], KEEP_R1);
        r[j] = tu_run(sp[j], NULL);
        ck_assert_msg(fabs(r[j]->w[R_MU] - want[j][0]) < 1e-13 &&
                          fabs(r[j]->w[R_V] - want[j][1]) < 1e-13,
                      "scaffold under %s: x's r_μ = %.17g, r_v = %.17g, "
                      "expected %.17g, %.17g", sw[j], r[j]->w[R_MU],
                      r[j]->w[R_V], want[j][0], want[j][1]);
    }
    /* parameters() alike under the three readings (the running statistics
     * never enter a training-mode forward) */
    static const int params[] = {W1, B1, GAMMA, BETA, W2, B2};
    for (size_t q = 0; q < sizeof params / sizeof params[0]; q++)
        ck_assert(r[0]->w[params[q]] == r[1]->w[params[q]] &&
                  r[0]->w[params[q]] == r[2]->w[params[q]]);
    /* the preset pfllib sets parameters_only and previous */
    char text[4096];
    bn_text(text, sizeof text, "scaffold", "\"eta\": 0.1", "", KEEP_R1,
            NULL);
    char *at = strstr(text, "\"switches\"");
    ck_assert_ptr_nonnull(at);
    char pre[4096];
    snprintf(pre, sizeof pre, "%.*s\"preset\": \"pfllib\"%s",
             (int)(at - text), text, strchr(at, '}') + 1);
    pflref_spec *ps = tu_spec(pre);
    ck_assert_int_eq(ps->hyper.bn_aggregate, PFLREF_BN_AGGREGATE_PARAMETERS);
    ck_assert_int_eq(ps->hyper.scaffold.bn_global,
                     PFLREF_SCAFFOLD_BN_GLOBAL_PREVIOUS);
    pflref_run_result *b = tu_run(ps, NULL);
    ck_assert(memcmp(b->w, r[1]->w, P_BN * sizeof *b->w) == 0);
    pflref_run_result_free(b);
    pflref_spec_free(ps);
    for (size_t j = 0; j < 3; j++) {
        pflref_run_result_free(r[j]);
        pflref_spec_free(sp[j]);
    }
}
END_TEST

/* pFedMe (ref/algorithms/pfedme.c) under bn.aggregate on KEEP_R1, only
 * S^t training (pfedme.train = sampled), η = η_p = 0.1, λ = 1, K = 1, β =
 * 1/2, uniform weights.  θ starts at w_{i,0} (θ − w_{i,r} = 0 on W1, b1,
 * whose loss gradient is 0: they never move), so each θ pass sees FedAvg's
 * a: round 0 leaves client 0's θ model 9/8, 11/4 and client 1's 1/8, 4
 * (w_{i,1} carries θ's).
 *   parameters_only: w_1's r_μ, r_v are client 0's (the first uploader),
 *     not β-mixed; round 1, client 1 from its own 1/8, 4: 7/32, 25/4, w_2's;
 *     personal_eval = global reports w_2's parameters with each client's
 *     own: client 0's 9/8 (its model since round 0), client 1's 7/32.
 *   average: w_1 = (1/2) w_0 + (1/2) mean: r_μ = 5/16, r_v = 1/2 + 27/16 =
 *     35/16; client 1 from those: (3/4)(5/16) + 1/8 = 23/64, (3/4)(35/16) +
 *     13/4 = 313/64; w_2: 43/128, 453/128. */
START_TEST(test_pfedme_keep)
{
    static const char *const hyp =
        "\"eta\": 0.1, \"lambda\": 1, \"eta_p\": 0.1, \"K\": 1, "
        "\"beta\": 0.5";
    pflref_spec *k = bn_spec("pfedme", hyp,
                             "\"pfedme.train\": \"sampled\", "
                             "\"pfedme.personal_eval\": \"global\", " KEEP_SW,
                             KEEP_R1);
    pflref_spec *a = bn_spec("pfedme", hyp,
                             "\"pfedme.train\": \"sampled\"", KEEP_R1);
    pflref_run_result *rk = tu_run(k, NULL), *ra = tu_run(a, NULL);
    ck_assert_msg(fabs(rk->w[R_MU] - 7.0 / 32.0) < 1e-13 &&
                      fabs(rk->w[R_V] - 25.0 / 4.0) < 1e-13,
                  "parameters_only: w's r_μ = %.17g, r_v = %.17g, expected "
                  "7/32, 25/4", rk->w[R_MU], rk->w[R_V]);
    ck_assert_msg(fabs(rk->v[R_MU] - 9.0 / 8.0) < 1e-13 &&
                      fabs(rk->v[P_BN + R_MU] - 7.0 / 32.0) < 1e-13,
                  "the global reported with each client's own r_μ: %.17g, "
                  "%.17g, expected 9/8, 7/32", rk->v[R_MU],
                  rk->v[P_BN + R_MU]);
    ck_assert_msg(rk->v[W2] == rk->w[W2], "v_0's parameters are w's");
    ck_assert_msg(fabs(ra->w[R_MU] - 43.0 / 128.0) < 1e-13 &&
                      fabs(ra->w[R_V] - 453.0 / 128.0) < 1e-13,
                  "average: w's r_μ = %.17g, r_v = %.17g, expected 43/128, "
                  "453/128", ra->w[R_MU], ra->w[R_V]);
    ck_assert_int_eq(tu_spec_preset_aggregate("pfedme", hyp, "pfllib"),
                     PFLREF_BN_AGGREGATE_PARAMETERS);
    ck_assert_int_eq(tu_spec_preset_aggregate("pfedme", hyp, "pfllib_run"),
                     PFLREF_BN_AGGREGATE_PARAMETERS);
    pflref_run_result_free(rk);
    pflref_run_result_free(ra);
    pflref_spec_free(k);
    pflref_spec_free(a);
}
END_TEST

/* APFL, apfl.variant = pfllib, α = 1/2 fixed, η = 0.1, on KEEP_R1 (uniform
 * weights).  W1, b1 never move (zero loss gradient), so w_i's and v_i's own
 * passes see FedAvg's a: round 0 leaves client 0's w_0 9/8, 11/4 and
 * client 1's w_1 and v_1 1/8, 4 each.
 *   parameters_only: round 1, w_1 from its model's own 1/8, 4: 7/32, 25/4,
 *     which w takes (the only participant); v_1 from its own 1/8 to 7/32,
 *     kept by the end mixture (parameters() only).
 *   average: w_1 from the averaged 5/8, 27/8: 19/32, 185/32; v_1's 7/32
 *     mixed with it: (1/2)(19/32) + (1/2)(7/32) = 13/32.
 * The "personalized" evaluation under parameters_only carries v_i's own
 * statistics (PFLlib evaluates model_per, clientapfl.py:80-96). */
START_TEST(test_apfl_keep)
{
    static const char *const hyp = "\"eta\": 0.1, \"alpha\": 0.5";
    pflref_spec *k = bn_spec("apfl", hyp,
                             "\"apfl.variant\": \"pfllib\", " KEEP_SW,
                             KEEP_R1);
    pflref_spec *a = bn_spec("apfl", hyp, "\"apfl.variant\": \"pfllib\"",
                             KEEP_R1);
    pflref_run_result *rk = tu_run(k, NULL), *ra = tu_run(a, NULL);
    ck_assert_msg(fabs(rk->w[R_MU] - 7.0 / 32.0) < 1e-13 &&
                      fabs(rk->w[R_V] - 25.0 / 4.0) < 1e-13 &&
                      fabs(rk->v[P_BN + R_MU] - 7.0 / 32.0) < 1e-13,
                  "parameters_only: w's r_μ = %.17g, r_v = %.17g, v_1's r_μ "
                  "= %.17g; expected 7/32, 25/4, 7/32", rk->w[R_MU],
                  rk->w[R_V], rk->v[P_BN + R_MU]);
    ck_assert_msg(fabs(ra->w[R_MU] - 19.0 / 32.0) < 1e-13 &&
                      fabs(ra->w[R_V] - 185.0 / 32.0) < 1e-13 &&
                      fabs(ra->v[P_BN + R_MU] - 13.0 / 32.0) < 1e-13,
                  "average: w's r_μ = %.17g, r_v = %.17g, v_1's r_μ = %.17g; "
                  "expected 19/32, 185/32, 13/32", ra->w[R_MU], ra->w[R_V],
                  ra->v[P_BN + R_MU]);
    ck_assert_int_eq(tu_spec_preset_aggregate("apfl", hyp, "pfllib"),
                     PFLREF_BN_AGGREGATE_PARAMETERS);
    /* "personalized" of client 0 (out of round 1) under parameters_only:
     * the parameters α v_0 + (1 − α) w, the running statistics v_0's own
     * (9/8, 11/4: PFLlib's model_per), not mixed with w's 7/32, 25/4 */
    const pflref_model *md = &k->problem->model;
    const pflref_data *D = &k->problem->clients[0].train;
    pflref_model_workspace *mws = pflref_model_workspace_alloc(md, D->n);
    ck_assert_ptr_nonnull(mws);
    double mine[P_BN], mixed[P_BN];
    for (size_t p = 0; p < P_BN; p++)
        mine[p] = mixed[p] = 0.5 * rk->v[p] + 0.5 * rk->w[p];
    ck_assert_msg(rk->v[R_MU] == 9.0 / 8.0 && rk->v[R_V] == 11.0 / 4.0,
                  "v_0's own r_μ = %.17g, r_v = %.17g; expected 9/8, 11/4",
                  rk->v[R_MU], rk->v[R_V]);
    mine[R_MU] = 9.0 / 8.0;
    mine[R_V] = 11.0 / 4.0;
    pflref_eval e_mine, e_mixed;
    ck_assert_int_eq(pflref_model_evaluate(md, mine, D, mws, &e_mine),
                     PFLREF_OK);
    ck_assert_int_eq(pflref_model_evaluate(md, mixed, D, mws, &e_mixed),
                     PFLREF_OK);
    ck_assert_str_eq(rk->eval[2].label, "personalized");
    ck_assert_msg(rk->eval[2].train[0].loss == e_mine.loss,
                  "personalized loss %.17g; with v_0's own statistics "
                  "%.17g (mixed with w's: %.17g)", rk->eval[2].train[0].loss,
                  e_mine.loss, e_mixed.loss);
    ck_assert_msg(e_mine.loss != e_mixed.loss,
                  "the two statistics give one loss: the check cannot fail");
    /* under bn.aggregate = average every entry mixes, buffers included */
    for (size_t p = 0; p < P_BN; p++)
        mixed[p] = 0.5 * ra->v[p] + 0.5 * ra->w[p];
    ck_assert_int_eq(pflref_model_evaluate(md, mixed, D, mws, &e_mixed),
                     PFLREF_OK);
    ck_assert_msg(ra->eval[2].train[0].loss == e_mixed.loss,
                  "average: personalized loss %.17g, the mixture's %.17g",
                  ra->eval[2].train[0].loss, e_mixed.loss);
    pflref_model_workspace_free(mws);
    pflref_run_result_free(rk);
    pflref_run_result_free(ra);
    pflref_spec_free(k);
    pflref_spec_free(a);
}
END_TEST

/* Per-FedAvg (ref/algorithms/perfedavg.c, perfedavg_round_keep and
 * perfedavg_finish_keep), FO (two training passes per local step: at w on
 * D, at w̃ on D′; W1, b1 never move, so each pass moves r_μ, r_v by the
 * batch statistics of a = 2x + 1/2), uniform weights, one local step with
 * D = D′ = D″.  Round 0: client 0 on {1, 3} (μ_B = 9/2, unbiased 8):
 * r_μ 0 → 9/8 → 63/32, r_v 1 → 11/4 → 65/16; client 1 on {3/2, −2, 1/2}
 * (μ_B = 1/2, unbiased 13): 1/8 → 7/32, 4 → 25/4.  Round 1, client 1 alone:
 *   parameters_only: w after round 0 the first participant's 63/32, 65/16;
 *     client 1 from its own 7/32, 25/4: 37/128 → 175/512, 127/16 → 589/64,
 *     which w takes; θ_0 from client 0's own 63/32, 65/16, one pass on
 *     {1, 3}: 333/128, 323/64;
 *   average: w after round 0 35/32, 165/32; round 1 from them: 121/128 →
 *     427/512, 911/128 → 4397/512.
 * Under bn.running = frozen the two values give the same run bit for bit. */
START_TEST(test_perfedavg_keep)
{
    static const char *const hyp = "\"alpha\": 0.1, \"beta\": 0.2";
    static const char *const rounds =
        "{\"clients\": [0, 1], \"batches\": [[[0, 1], [0, 1], [0, 1]], "
        "[[0, 1, 2], [0, 1, 2], [0, 1, 2]]]}, {\"clients\": [1], "
        "\"batches\": [[[0, 1, 2], [0, 1, 2], [0, 1, 2]]]}";
    static const char *const post = "[[0, 1]], [[0, 1, 2]]";
    char text[4096];
    bn_text(text, sizeof text, "perfedavg", hyp,
            "\"perfedavg.variant\": \"fo\", " KEEP_SW, rounds, post);
    pflref_spec *k = tu_spec(text);
    bn_text(text, sizeof text, "perfedavg", hyp,
            "\"perfedavg.variant\": \"fo\"", rounds, post);
    pflref_spec *a = tu_spec(text);
    pflref_run_result *rk = tu_run(k, NULL), *ra = tu_run(a, NULL);
    ck_assert_msg(fabs(rk->w[R_MU] - 175.0 / 512.0) < 1e-13 &&
                      fabs(rk->w[R_V] - 589.0 / 64.0) < 1e-13,
                  "parameters_only: w's r_μ = %.17g, r_v = %.17g; expected "
                  "175/512, 589/64 (client 1 from its own statistics)",
                  rk->w[R_MU], rk->w[R_V]);
    ck_assert_msg(fabs(rk->v[R_MU] - 333.0 / 128.0) < 1e-13 &&
                      fabs(rk->v[R_V] - 323.0 / 64.0) < 1e-13,
                  "parameters_only: θ_0's r_μ = %.17g, r_v = %.17g; expected "
                  "333/128, 323/64 (the personalisation from client 0's own)",
                  rk->v[R_MU], rk->v[R_V]);
    ck_assert_msg(fabs(ra->w[R_MU] - 427.0 / 512.0) < 1e-13 &&
                      fabs(ra->w[R_V] - 4397.0 / 512.0) < 1e-13,
                  "average: w's r_μ = %.17g, r_v = %.17g; expected 427/512, "
                  "4397/512", ra->w[R_MU], ra->w[R_V]);
    /* the preset pfllib sets parameters_only (a spec with its post phase,
     * which Per-FedAvg needs; nothing run) */
    bn_text(text, sizeof text, "perfedavg", hyp, "", rounds, post);
    char *at = strstr(text, "\"hyperparameters\"");
    ck_assert_ptr_nonnull(at);
    char pre[4096];
    snprintf(pre, sizeof pre, "%.*s\"preset\": \"pfllib\", %s",
             (int)(at - text), text, at);
    pflref_spec *ps = tu_spec(pre);
    ck_assert_int_eq(ps->hyper.bn_aggregate, PFLREF_BN_AGGREGATE_PARAMETERS);
    pflref_spec_free(ps);
    pflref_run_result_free(rk);
    pflref_run_result_free(ra);
    pflref_spec_free(k);
    pflref_spec_free(a);
    /* bn.running = frozen: no pass moves them, every model holds w⁰'s
     * r_μ, r_v under both values, so the runs agree bit for bit (the
     * uniform weights 1/2 sum two equal buffers exactly) */
    bn_text(text, sizeof text, "perfedavg", hyp,
            "\"perfedavg.variant\": \"fo\", \"bn.running\": \"frozen\", "
            KEEP_SW, rounds, post);
    k = tu_spec(text);
    bn_text(text, sizeof text, "perfedavg", hyp,
            "\"perfedavg.variant\": \"fo\", \"bn.running\": \"frozen\"",
            rounds, post);
    a = tu_spec(text);
    rk = tu_run(k, NULL);
    ra = tu_run(a, NULL);
    ck_assert(rk->w[R_MU] == 0.0 && rk->w[R_V] == 1.0);
    for (size_t p = 0; p < P_BN; p++)
        ck_assert_msg(rk->w[p] == ra->w[p] && rk->v[p] == ra->v[p] &&
                          rk->v[P_BN + p] == ra->v[P_BN + p],
                      "frozen: entry %zu differs between parameters_only "
                      "and average", p);
    pflref_run_result_free(rk);
    pflref_run_result_free(ra);
    pflref_spec_free(k);
    pflref_spec_free(a);
}
END_TEST

/* FedAMP (ref/algorithms/fedamp.c) under bn.aggregate = parameters_only
 * on KEEP_R1, paper switches, η = 0.1, λ = 0.5, α_k = 0.25, σ = 0.75.
 * Every model starts at w⁰ and W1, b1 have loss gradient 0
 * (test_keep_own_statistics): u_i^k, a ξ-mixture (weights summing to 1)
 * of models equal there, is w⁰ there and the proximal term is 0 there, so
 * the training passes see FedAvg's a.  Round 0: client 0 from u's
 * parameters with its own (w⁰'s) r_μ, r_v = 0, 1 leaves 9/8, 11/4;
 * client 1 leaves 1/8, 4.  Round 1: client 1 from its own 1/8, 4 leaves
 * 7/32, 25/4; client 0 keeps 9/8, 11/4.  Under bn.aggregate = average
 * the model is refused (fedamp_check). */
START_TEST(test_fedamp_keep)
{
    static const char *const hyp =
        "\"eta\": 0.1, \"fedamp.lambda\": 0.5, \"fedamp.alpha_k\": 0.25, "
        "\"fedamp.sigma\": 0.75";
    pflref_spec *sp = bn_spec("fedamp", hyp, KEEP_SW, KEEP_R1);
    pflref_run_result *r = tu_run(sp, NULL);
    ck_assert_msg(fabs(r->v[R_MU] - 9.0 / 8.0) < 1e-13 &&
                      fabs(r->v[R_V] - 11.0 / 4.0) < 1e-13 &&
                      fabs(r->v[P_BN + R_MU] - 7.0 / 32.0) < 1e-13 &&
                      fabs(r->v[P_BN + R_V] - 25.0 / 4.0) < 1e-13,
                  "fedamp: w_0's r_μ, r_v = %.17g, %.17g, w_1's = %.17g, "
                  "%.17g; expected 9/8, 11/4, 7/32, 25/4", r->v[R_MU],
                  r->v[R_V], r->v[P_BN + R_MU], r->v[P_BN + R_V]);
    pflref_run_result_free(r);
    pflref_spec_free(sp);
    /* average: refused, naming the switch to give */
    pflref_spec *avg = bn_spec("fedamp", hyp, "", KEEP_R1);
    pflref_run_result *none = NULL;
    pflref_error err;
    ck_assert_int_eq(pflref_run(avg->problem, avg->algorithm, &avg->hyper,
                                avg->schedule, avg->w0, NULL, &none, &err),
                     PFLREF_EINVAL);
    ck_assert_msg(strstr(err.message, "bn.aggregate = parameters_only") !=
                      NULL, "%s", err.message);
    pflref_spec_free(avg);
    ck_assert_int_eq(tu_spec_preset_aggregate("fedamp", hyp, "pfllib"),
                     PFLREF_BN_AGGREGATE_PARAMETERS);
}
END_TEST

/* APPLE (ref/algorithms/apple.c) on KEEP_R1's model: under bn.aggregate =
 * average the model is refused, naming the switch to give; the presets
 * pfllib and pfllib_run set parameters_only.  The numbers of the
 * parameters_only reading are pinned by layers/apple/bn1d-mlp-pfllib-keep
 * (golden suite). */
START_TEST(test_apple_keep)
{
    static const char *const hyp =
        "\"eta\": 0.1, \"eta_p\": 0.1, \"apple.mu\": 0.5, \"apple.L\": 2";
    pflref_spec *avg = bn_spec("apple", hyp, "", KEEP_R1);
    pflref_run_result *none = NULL;
    pflref_error err;
    ck_assert_int_eq(pflref_run(avg->problem, avg->algorithm, &avg->hyper,
                                avg->schedule, avg->w0, NULL, &none, &err),
                     PFLREF_EINVAL);
    ck_assert_msg(strstr(err.message, "bn.aggregate = parameters_only") !=
                      NULL, "%s", err.message);
    pflref_spec_free(avg);
    ck_assert_int_eq(tu_spec_preset_aggregate("apple", hyp, "pfllib"),
                     PFLREF_BN_AGGREGATE_PARAMETERS);
    ck_assert_int_eq(tu_spec_preset_aggregate("apple", hyp, "pfllib_run"),
                     PFLREF_BN_AGGREGATE_PARAMETERS);
}
END_TEST

/* FedDyn (ref/algorithms/feddyn.c, reading e)) under bn.aggregate on
 * KEEP_R1, η = 0.1, α = 0.5, feddyn.prox = squared.  W1 and b1 have loss
 * gradient 0 (test_keep_own_statistics), ∇L_k = 0 and θ − θ^{t−1} = 0
 * there, so they never move and h stays 0 on them: the training passes see
 * FedAvg's a, client 0 leaving r_μ = 9/8, r_v = 11/4 in round 0, client 1
 * 1/8, 4 (h is 0 on the buffers under either value).
 *   parameters_only: θ^1's are client 0's (the first participant); round
 *     1, client 1 from its own 1/8, 4: 7/32, 25/4, θ^2's.
 *   average: θ^1 = mean − h/α, h = 0 on the buffers: 5/8, 27/8; round 1,
 *     client 1 from those: (3/4)(5/8) + 1/8 = 19/32, (3/4)(27/8) + 13/4 =
 *     185/32.
 * The preset pfllib sets parameters_only. */
START_TEST(test_feddyn_keep)
{
    static const char *const sw[] = {KEEP_SW, ""};
    static const double want[2][2] = {{7.0 / 32.0, 25.0 / 4.0},
                                      {19.0 / 32.0, 185.0 / 32.0}};
    pflref_run_result *r[2];
    pflref_spec *sp[2];
    for (size_t j = 0; j < 2; j++) {
        sp[j] = bn_spec("feddyn", "\"eta\": 0.1, \"feddyn.alpha\": 0.5", sw[j],
                        KEEP_R1);
        r[j] = tu_run(sp[j], NULL);
        ck_assert_msg(fabs(r[j]->w[R_MU] - want[j][0]) < 1e-13 &&
                          fabs(r[j]->w[R_V] - want[j][1]) < 1e-13,
                      "feddyn under \"%s\": θ's r_μ = %.17g, r_v = %.17g, "
                      "expected %.17g, %.17g", sw[j], r[j]->w[R_MU],
                      r[j]->w[R_V], want[j][0], want[j][1]);
    }
    /* parameters() alike under both readings (the running statistics never
     * enter a training-mode forward, nor ∇L_k or h) */
    static const int params[] = {W1, B1, GAMMA, BETA, W2, B2};
    for (size_t q = 0; q < sizeof params / sizeof params[0]; q++)
        ck_assert_msg(r[0]->w[params[q]] == r[1]->w[params[q]],
                      "feddyn: parameter entry %d differs between the "
                      "readings", params[q]);
    ck_assert_int_eq(tu_spec_preset_aggregate(
                         "feddyn", "\"eta\": 0.1, \"feddyn.alpha\": 0.5",
                         "pfllib"),
                     PFLREF_BN_AGGREGATE_PARAMETERS);
    for (size_t j = 0; j < 2; j++) {
        pflref_run_result_free(r[j]);
        pflref_spec_free(sp[j]);
    }
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
                     "bn.running = update: apfl.variant = paper steps v at "
                     "the mixture v̄ = α_i v + (1 − α_i) w_i (Alg. 1 l. 6), "
                     "a third model whose training pass has batch "
                     "statistics that belong to the buffers of neither v "
                     "nor w_i; give \"bn.running\": \"frozen\", or "
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
    bn_text(spec, sizeof spec, "apfl", "\"eta\": 0.1, \"alpha\": 0.25", "",
            "{\"clients\": [0, 1], \"batches\": [[[0, 1]], [[0, 1]]]}",
            NULL);
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
    tcase_add_test(tc, test_keep_first_uploader);
    tcase_add_test(tc, test_keep_first_upload_given);
    tcase_add_loop_test(tc, test_first_upload_honoured, 0,
                        (int)(sizeof FIRST_UPLOAD_VECTORS /
                              sizeof FIRST_UPLOAD_VECTORS[0]));
    tcase_add_test(tc, test_keep_own_statistics);
    tcase_add_test(tc, test_keep_evaluation);
    tcase_add_test(tc, test_keep_preset);
    tcase_add_test(tc, test_keep_resync_reloads);
    tcase_add_test(tc, test_ditto_keep);
    tcase_add_test(tc, test_ditto_keep_resync_reloads);
    tcase_add_test(tc, test_perfedavg_keep_resync_reloads);
    tcase_add_test(tc, test_fedrod_keep_resync_reloads);
    tcase_add_test(tc, test_fedsim_keep);
    tcase_add_test(tc, test_fedprox_keep);
    tcase_add_test(tc, test_scaffold_keep);
    tcase_add_test(tc, test_pfedme_keep);
    tcase_add_test(tc, test_apfl_keep);
    tcase_add_test(tc, test_perfedavg_keep);
    tcase_add_test(tc, test_feddyn_keep);
    tcase_add_test(tc, test_fedamp_keep);
    tcase_add_test(tc, test_apple_keep);
    tcase_add_test(tc, test_fedbn_switches);
    tcase_add_test(tc, test_fedbn_optimizer);
    tcase_add_test(tc, test_fedbn_momentum_vector);
    tcase_add_test(tc, test_apfl);
    tcase_add_test(tc, test_batch_of_one);
    tcase_add_test(tc, test_cli_exit);
    suite_add_tcase(s, tc);
    return s;
}
