/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_fedala.c: FedALA (ref/algorithms/fedala.c) against its golden
 * vectors (golden/fedala/, computed by golden/pflref_exact_fedala.py) and
 * its properties on a hand example: no ALA in the first round, the start
 * phase's W_i steps and its stopping rule, the clip to [0, 1] both ways in
 * one start phase, one pass afterwards, the authors' early return
 * (fedala.skip = sum_first), the presets, and the refusals of bad input. */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "suites.h"
#include "builder.h"
#include "testutil.h"

static const char *const VECTORS[] = {
    "golden/fedala/worked-paper-partial.json",
    "golden/fedala/worked-p-tensors.json",
    "golden/fedala/worked-sum-first.json",
    "golden/fedala/worked-official.json",
    "golden/fedala/worked-paper-alone.json",
    "golden/fedala/worked-pfllib-alone.json",
    "golden/fedala/worked-stop-boundary.json",
    "golden/fedala/worked-partial-all.json",
    "golden/fedala/worked-pfllib-run.json",
    "golden/fedala/layers-bn-pfllib.json",
    "golden/fedala/layers-bn-pfllib-run.json",
    "golden/fedala/layers-bn-ala-mode.json",
};

/* Every vector is reproduced: every expected quantity was emitted and is
 * within tolerance. */
START_TEST(test_worked_vectors)
{
    /* req: fedala.alg1.l2, fedala.alg1.l8_11, fedala.alg1.l15, fedala.alg1.l16, fedala.eq5 */
    /* req: fedala.alg1.l18 */
    tu_assert_golden(VECTORS[_i]);
}
END_TEST

/* The hand example: ŷ = x w (P = 1, no bias), squared loss; client 0: x =
 * (1, 2), y = (2, 3); client 1: x = (2, 1, 1), y = (1, 0, 4); w⁰ = 0, α =
 * 0.25, s = 50 (|D_i^s| = 1), p = 1, k = 1.  Round 0 (both, full
 * batches): θ_0 = 2, θ_1 = 1, Θ = (2·2 + 3·1)/5 = 1.4.  Round 1: client 0
 * on D_0^s = {1} (x = 2, y = 3), diff = Θ − Θ_0 = −0.6; round 2: client 0
 * again (Θ = Θ_0: it trained alone). */
#define HAND_FMT                                                             \
    "{\"format\": \"pflref-spec/1\", "                                      \
    "\"model\": {\"kind\": \"linear\", \"d\": 1, \"loss\": \"squared\"}, "  \
    "\"problem\": {\"clients\": [{\"X\": [[1], [2]], \"y\": [2, 3]}, "      \
    "{\"X\": [[2], [1], [1]], \"y\": [1, 0, 4]}]}, "                        \
    "\"init\": {\"kind\": \"zeros\"}, "                                     \
    "\"algorithm\": {\"name\": \"fedala\", %s\"hyperparameters\": "         \
    "{\"eta\": 0.25, \"fedala.eta\": %s, \"fedala.s\": 50, \"fedala.p\": "  \
    "1, \"fedala.k\": 1, \"fedala.threshold\": 0.5}, \"switches\": {%s}}, " \
    "\"schedule\": {\"kind\": \"given\", \"rounds\": ["                     \
    "{\"clients\": [0, 1], \"batches\": [[[0, 1]], [[0, 1, 2]]]}, "         \
    "{\"clients\": [0], %s\"batches\": [[[0]]]}, "                       \
    "{\"clients\": [0], \"personal\": [[[0]]], \"batches\": [[[1]]]}]}, "   \
    "\"output\": {\"trajectory\": \"step\"}}"

/* Round 1's sample, D_0^s = {1}. */
#define SAMPLE "\"personal\": [[[1]]], "

/* Run the hand example with W's rate eta_w, the preset clause pre ("" or
 * "\"preset\": \"official\", ") and the switches sw; the trajectory in tj. */
static pflref_run_result *run_hand(const char *pre, const char *eta_w,
                                   const char *sw, pflref_trajectory *tj)
{
    char text[2048];
    snprintf(text, sizeof text, HAND_FMT, pre, eta_w, sw, SAMPLE);
    pflref_spec *spec = tu_spec(text);
    pflref_trajectory_init(tj, PFLREF_RECORD_STEP);
    const pflref_trace trace = {.emit = pflref_trajectory_emit, .ctx = tj};
    pflref_run_result *r = tu_run(spec, &trace);
    pflref_spec_free(spec);
    return r;
}

/* The NOTE or CLIENT_BEGIN record `name` of client i in round t: its first
 * value (NAN when absent). */
static double value_of(const pflref_trajectory *tj, pflref_event_kind kind,
                       const char *name, long t, long i)
{
    for (size_t q = 0; q < tj->count; q++) {
        const pflref_record *rc = &tj->records[q];
        if (rc->kind == kind && strcmp(rc->name, name) == 0 &&
            rc->round == t && rc->client == i)
            return tj->values[rc->offset];
    }
    return NAN;
}

/* η = 0.5.  Pass 1 at Θ̂ = 1.4: g = 2·2·(2.8 − 3) = −0.8, W = 1 − 0.5·
 * (−0.8)(−0.6) = 0.76, Θ̂ = 2 − 0.6·0.76 = 1.544; pass 2: g = 4·0.088 =
 * 0.352, W = 0.76 + 0.5·0.352·0.6 = 0.8656, Θ̂ = 1.48064; two losses (>
 * k = 1) and the std of the last one is 0 < 0.5: stop.  Local step from
 * Θ̂: 1.48064 − 0.25·2·(1.48064 − 2) = 1.74032.  No ALA in round 0. */
START_TEST(test_start_phase_by_hand)
{
    /* req: fedala.alg1.l2, fedala.alg1.l8_11, fedala.alg1.l15, fedala.eq5, fedala.alg1.l16 */
    pflref_trajectory tj;
    pflref_run_result *r = run_hand("", "0.5", "", &tj);
    ck_assert_double_eq(value_of(&tj, PFLREF_EV_NOTE, "ala_epochs", 0, 0),
                        0.0);
    ck_assert_double_eq(value_of(&tj, PFLREF_EV_NOTE, "W_i", 0, 0), 1.0);
    ck_assert_double_eq(value_of(&tj, PFLREF_EV_NOTE, "ala_epochs", 1, 0),
                        2.0);
    const double W = value_of(&tj, PFLREF_EV_NOTE, "W_i", 1, 0);
    ck_assert_msg(fabs(W - 0.8656) < 1e-14, "W_0 = %.17g", W);
    const double hat =
        value_of(&tj, PFLREF_EV_CLIENT_BEGIN, "theta_i", 1, 0);
    ck_assert_msg(fabs(hat - 1.48064) < 1e-14, "Θ̂_0 = %.17g", hat);
    const double theta =
        value_of(&tj, PFLREF_EV_CLIENT_END, "theta_i", 1, 0);
    ck_assert_msg(fabs(theta - 1.74032) < 1e-14, "Θ_0 = %.17g", theta);
    /* round 2: started, so one pass (Θ − Θ_0 = 0: W_0 unchanged) */
    /* req: fedala.alg1.l12_14 */
    ck_assert_double_eq(value_of(&tj, PFLREF_EV_NOTE, "ala_epochs", 2, 0),
                        1.0);
    ck_assert_double_eq(value_of(&tj, PFLREF_EV_NOTE, "W_i", 2, 0), W);
    /* client 1 never ALA'd: its W_1 stays 1, and the model reported for
     * it (l. 19: its latest Θ̂_1) is Θ_1⁰ = Θ⁰ = 0 (l. 1), not the Θ_1 = 1
     * it trained to in round 0 */
    ck_assert_double_eq(r->v[1], 0.0);
    pflref_trajectory_free(&tj);
    pflref_run_result_free(r);
}
END_TEST

/* Alg. 1 l. 19 returns Θ̂_i: the reported v_0 is client 0's Θ̂ of its last
 * round (round 2's CLIENT_BEGIN, after ALA and before the local step),
 * not its trained Θ_0 (round 2's CLIENT_END).  Round 2 of the hand
 * example: Θ = Θ_0 = 1.74032 (client 0 trained alone in round 1), so ALA
 * leaves Θ̂_0 = 1.74032, and the step on sample 1 (x = 2, y = 3) gives
 * 1.74032 − 0.25·2·2·(2·1.74032 − 3) = 1.25968. */
START_TEST(test_reports_theta_hat)
{
    /* req: fedala.alg1.l19 */
    pflref_trajectory tj;
    pflref_run_result *r = run_hand("", "0.5", "", &tj);
    const double hat = value_of(&tj, PFLREF_EV_CLIENT_BEGIN, "theta_i", 2, 0);
    const double trained =
        value_of(&tj, PFLREF_EV_CLIENT_END, "theta_i", 2, 0);
    ck_assert_msg(fabs(hat - 1.74032) < 1e-14, "Θ̂_0 = %.17g", hat);
    ck_assert_msg(fabs(trained - 1.25968) < 1e-14, "Θ_0 = %.17g", trained);
    ck_assert_msg(r->v[0] == hat, "v_0 = %.17g, Θ̂_0 = %.17g", r->v[0], hat);
    /* the "personalized" evaluation is Θ̂_0's: client 0's squared loss on
     * x = (1, 2), y = (2, 3) at 1.74032: (0.25968² + 0.48064²)/2 */
    ck_assert_int_ge(r->n_eval, 2);
    ck_assert_str_eq(r->eval[1].label, "personalized");
    const double loss = (0.25968 * 0.25968 + 0.48064 * 0.48064) / 2.0;
    ck_assert_msg(fabs(r->eval[1].train[0].loss - loss) < 1e-14,
                  "personalized loss %.17g, expected %.17g",
                  r->eval[1].train[0].loss, loss);
    pflref_trajectory_free(&tj);
    pflref_run_result_free(r);
}
END_TEST

/* η = 5: pass 1 drives W to 1 − 5·0.48 = −1.4, clipped to 0 (Θ̂ = Θ_0 =
 * 2); pass 2: g = 4·(4 − 3) = 4, W = 0 + 5·4·0.6 = 12, clipped to 1 (Θ̂ =
 * Θ = 1.4); then Θ_0 = 1.4 + 0.25·2·0.6 = 1.7. */
START_TEST(test_clip_both_ways)
{
    /* req: fedala.eq5 */
    pflref_trajectory tj;
    pflref_run_result *r = run_hand("", "5", "", &tj);
    ck_assert_double_eq(value_of(&tj, PFLREF_EV_NOTE, "W_i", 1, 0), 1.0);
    const double hat =
        value_of(&tj, PFLREF_EV_CLIENT_BEGIN, "theta_i", 1, 0);
    ck_assert_msg(fabs(hat - 1.4) < 1e-15, "Θ̂_0 = %.17g", hat);
    const double theta =
        value_of(&tj, PFLREF_EV_CLIENT_END, "theta_i", 1, 0);
    ck_assert_msg(fabs(theta - 1.7) < 1e-15, "Θ_0 = %.17g", theta);
    pflref_trajectory_free(&tj);
    pflref_run_result_free(r);
    /* one pass only (k = 1 needs two losses): W stays at the clip to 0 */
    char text[2048];
    snprintf(text, sizeof text, HAND_FMT, "", "5", "", SAMPLE);
    char *one = strstr(text, "\"fedala.threshold\": 0.5");
    ck_assert_ptr_nonnull(one);
    memcpy(one, "\"fedala.max_epochs\": 1 ", 23);
    pflref_spec *spec = tu_spec(text);
    pflref_trajectory_init(&tj, PFLREF_RECORD_STEP);
    const pflref_trace trace = {.emit = pflref_trajectory_emit, .ctx = &tj};
    r = tu_run(spec, &trace);
    ck_assert_double_eq(value_of(&tj, PFLREF_EV_NOTE, "W_i", 1, 0), 0.0);
    ck_assert_double_eq(
        value_of(&tj, PFLREF_EV_CLIENT_BEGIN, "theta_i", 1, 0), 2.0);
    pflref_trajectory_free(&tj);
    pflref_run_result_free(r);
    pflref_spec_free(spec);
}
END_TEST

/* fedala.skip = sum_first (and the official preset): in round 2 client 0
 * finds Θ = Θ_0 (it trained alone in round 1) and ALA returns: no pass;
 * the paper's reading makes one pass that leaves W_0 as it was. */
START_TEST(test_sum_first_returns)
{
    /* req: fedala.alg1.l2, fedala.alg1.l8_11, fedala.preset.official */
    pflref_trajectory tj;
    pflref_run_result *r =
        run_hand("", "0.5", "\"fedala.skip\": \"sum_first\"", &tj);
    ck_assert_double_eq(value_of(&tj, PFLREF_EV_NOTE, "ala_epochs", 1, 0),
                        2.0);
    ck_assert_double_eq(value_of(&tj, PFLREF_EV_NOTE, "ala_epochs", 2, 0),
                        0.0);
    const double w_sum = r->w[0];
    pflref_trajectory_free(&tj);
    pflref_run_result_free(r);
    r = run_hand("\"preset\": \"official\", ", "0.5", "", &tj);
    ck_assert_double_eq(value_of(&tj, PFLREF_EV_NOTE, "ala_epochs", 2, 0),
                        0.0);
    ck_assert_double_eq(r->w[0], w_sum);
    pflref_trajectory_free(&tj);
    pflref_run_result_free(r);
}
END_TEST

/* The presets set the code's switches; the paper's are the defaults. */
START_TEST(test_presets)
{
    /* req: fedala.preset.official, fedala.preset.pfllib */
    static const char *const names[] = {"official", "pfllib"};
    for (size_t q = 0; q < 2; q++) {
        pflref_hyper h;
        pflref_hyper_defaults(&h);
        ck_assert_int_eq(h.fedala.skip, PFLREF_FEDALA_SKIP_FIRST_ROUND);
        ck_assert_int_eq(h.fedala.p_unit, PFLREF_FEDALA_P_LAYERS);
        pflref_error err = {0};
        ck_assert_int_eq(pflref_preset_apply(&h, "fedala", names[q],
                                                   "algorithm.preset", &err),
                         PFLREF_OK);
        ck_assert_int_eq(h.fedala.skip, PFLREF_FEDALA_SKIP_SUM_FIRST);
        ck_assert_int_eq(h.fedala.p_unit, PFLREF_FEDALA_P_TENSORS);
        /* serverALA.py:111-123, serverbase.py:138-150: parameters() */
        ck_assert_int_eq(h.bn_aggregate, PFLREF_BN_AGGREGATE_PARAMETERS);
    }
    pflref_hyper d;
    pflref_hyper_defaults(&d);
    ck_assert_int_eq(d.bn_aggregate, PFLREF_BN_AGGREGATE_AVERAGE);
}
END_TEST

/* fedala.ala_clients = all on the hand example's first two rounds:
 * round 1 trains client 0 alone, and client 1 (θ_1 = 1, Θ = 1.4, diff =
 * 0.4, W = 1) runs ALA on D_1^s = {2} (x = 1, y = 4): g = 2(1.4 − 4) =
 * −5.2, W = clip(1 + 0.5·5.2·0.4) = 1, Θ̂ = 1.4; a second pass (the start
 * phase needs more than k = 1 losses) the same; so θ_1 becomes Θ = 1.4
 * exactly, with NOTE theta_hat, while under participants it stays 1.  The
 * preset pfllib_run sets the switch on top of pfllib's. */
#define ALL_FMT                                                              \
    "{\"format\": \"pflref-spec/1\", "                                      \
    "\"model\": {\"kind\": \"linear\", \"d\": 1, \"loss\": \"squared\"}, "  \
    "\"problem\": {\"clients\": [{\"X\": [[1], [2]], \"y\": [2, 3]}, "      \
    "{\"X\": [[2], [1], [1]], \"y\": [1, 0, 4]}]}, "                        \
    "\"init\": {\"kind\": \"zeros\"}, "                                     \
    "\"algorithm\": {\"name\": \"fedala\", \"hyperparameters\": "           \
    "{\"eta\": 0.25, \"fedala.eta\": 0.5, \"fedala.s\": 50, \"fedala.p\": "  \
    "1, \"fedala.k\": 1, \"fedala.threshold\": 0.5}, \"switches\": {%s}}, " \
    "\"schedule\": {\"kind\": \"given\", \"rounds\": ["                     \
    "{\"clients\": [0, 1], \"batches\": [[[0, 1]], [[0, 1, 2]]]}, "         \
    "{\"clients\": [0], \"personal\": %s, \"batches\": [[[0]]]}]}, "       \
    "\"output\": {\"trajectory\": \"step\"}}"

START_TEST(test_ala_on_every_client)
{
    /* req: fedala.preset.pfllib_run */
    char text[2048];
    snprintf(text, sizeof text, ALL_FMT,
             "\"fedala.ala_clients\": \"all\"", "[[[1]], [[2]]]");
    pflref_spec *spec = tu_spec(text);
    pflref_trajectory tj;
    pflref_trajectory_init(&tj, PFLREF_RECORD_STEP);
    const pflref_trace trace = {.emit = pflref_trajectory_emit, .ctx = &tj};
    pflref_run_result *r = tu_run(spec, &trace);
    pflref_spec_free(spec);
    ck_assert_double_eq_tol(r->v[1], 1.4, 1e-15);
    ck_assert_double_eq_tol(value_of(&tj, PFLREF_EV_NOTE, "theta_hat", 1, 1),
                            1.4, 1e-15);
    ck_assert(value_of(&tj, PFLREF_EV_NOTE, "ala_epochs", 1, 1) == 2.0);
    pflref_run_result_free(r);
    pflref_trajectory_free(&tj);
    /* participants: client 1 untouched, its list not given; it ran no
     * ALA, so its reported model is Θ⁰ = 0 (l. 1, l. 19) */
    snprintf(text, sizeof text, ALL_FMT, "", "[[[1]]]");
    spec = tu_spec(text);
    r = tu_run(spec, NULL);
    pflref_spec_free(spec);
    ck_assert(r->v[1] == 0.0);
    pflref_run_result_free(r);
    /* the preset */
    pflref_hyper h;
    pflref_hyper_defaults(&h);
    ck_assert_int_eq(h.fedala.ala_clients, PFLREF_FEDALA_ALA_PARTICIPANTS);
    ck_assert_int_eq(h.fedala.ala_mode, PFLREF_FEDALA_ALA_MODE_TRAIN);
    pflref_error err = {0};
    ck_assert_int_eq(pflref_preset_apply(&h, "fedala", "pfllib_run",
                                         "algorithm.preset", &err),
                     PFLREF_OK);
    ck_assert_int_eq(h.fedala.ala_clients, PFLREF_FEDALA_ALA_ALL);
    ck_assert_int_eq(h.fedala.ala_mode, PFLREF_FEDALA_ALA_MODE_PFLLIB);
    ck_assert_int_eq(h.fedala.skip, PFLREF_FEDALA_SKIP_SUM_FIRST);
    ck_assert_int_eq(h.lr.count, PFLREF_LR_COUNT_TRAININGS);
}
END_TEST

/* Bad input, refused before round 0 with the field's path. */
/* Batch normalisation under bn.aggregate = parameters_only, on the spec
 * of fedala/layers/bn-pfllib (layout: fc1 6 + 3, bn1 γ, β 3 + 3, r_μ at
 * 15, r_v at 18, out 3 + 1): whatever the values, Θ̂_i's running
 * statistics (CLIENT_BEGIN) are those client i's model last left (w⁰'s
 * before it first trains), never Θ's when they differ; W_i stays 1 on
 * them; Θ's (SERVER) are the round's first participant's CLIENT_END
 * ones. */
START_TEST(test_bn_statistics_kept)
{
    /* req: fedala.bn */
    enum { P = 25, R0 = 15, R1 = 21, N = 4 };
    char *path = tu_repo_path("golden/fedala/layers-bn-pfllib.json");
    json_error_t je;
    json_t *vec = json_load_file(path, 0, &je);
    ck_assert_ptr_nonnull(vec);
    char *text = json_dumps(json_object_get(vec, "spec"), JSON_COMPACT);
    pflref_spec *spec = tu_spec(text);
    pflref_trajectory tj;
    pflref_trajectory_init(&tj, PFLREF_RECORD_STEP);
    const pflref_trace trace = {.emit = pflref_trajectory_emit, .ctx = &tj};
    pflref_run_result *r = tu_run(spec, &trace);
    double own[N][P], w[P];
    long first = -1;          /* the round's first participant */
    size_t begins = 0, differ = 0, servers = 0;
    for (size_t q = 0; q < tj.count; q++) {
        const pflref_record *rc = &tj.records[q];
        const double *x = tj.values + rc->offset;
        if (rc->kind == PFLREF_EV_ROUND_BEGIN) {
            memcpy(w, x, sizeof w);
            if (rc->round == 0)
                for (size_t i = 0; i < N; i++)
                    memcpy(own[i], x, sizeof w);
            first = -1;
        } else if (rc->kind == PFLREF_EV_NOTE &&
                   strcmp(rc->name, "W_i") == 0) {
            for (size_t p = R0; p < R1; p++)
                ck_assert_double_eq(x[p], 1.0);
        } else if (rc->kind == PFLREF_EV_CLIENT_BEGIN) {
            const double *mine = own[rc->client];
            int other = 0;
            for (size_t p = R0; p < R1; p++) {
                ck_assert_msg(x[p] == mine[p], "round %ld client %ld "
                              "entry %zu: %.17g, its own %.17g", rc->round,
                              rc->client, p, x[p], mine[p]);
                other |= x[p] != w[p];
            }
            begins++;
            differ += (size_t)other;
        } else if (rc->kind == PFLREF_EV_CLIENT_END) {
            memcpy(own[rc->client], x, sizeof w);
            if (first < 0)
                first = rc->client;
        } else if (rc->kind == PFLREF_EV_SERVER) {
            ck_assert_int_ge(first, 0);
            for (size_t p = R0; p < R1; p++)
                ck_assert_double_eq(x[p], own[first][p]);
            servers++;
        }
    }
    ck_assert_uint_eq(begins, 11);
    ck_assert_uint_eq(servers, 4);
    ck_assert_uint_ge(differ, 6);   /* Θ's would have been another start */
    pflref_run_result_free(r);
    pflref_trajectory_free(&tj);
    pflref_spec_free(spec);
    free(text);
    json_decref(vec);
    free(path);
}
END_TEST

/* fedala.ala_mode = pfllib's gradient, pflref_model_grad_eval, on an mlp
 * with bn (mlp.c's evaluation-mode branch; the layer list's is read by
 * fedala/layers/bn-ala-mode): against central differences of its own
 * evaluation-mode loss, which normalises with the running statistics
 * (so r_μ, r_v have a loss but, as buffers, no gradient); w is not
 * written; without bn it is pflref_model_grad bit for bit. */
START_TEST(test_grad_eval_fd)
{
    const size_t d = 2, h = 3, n = 4;
    pflref_model m = tb_mlp(PFLREF_LOSS_SQUARED, d, 1, h, PFLREF_ACT_IDENTITY,
                            1, 1);
    const pflref_model plain = tb_mlp(PFLREF_LOSS_SQUARED, d, 1, h,
                                      PFLREF_ACT_RELU, 1, 1);
    pflref_error err;
    ck_assert_int_eq(pflref_model_add_bn(&m, 0.03125, 0.25, &err),
                     PFLREF_OK);
    double X[8] = {0.62, -0.41, -0.35, 0.88, 0.91, 0.27, -0.74, -0.52};
    double y[4] = {0.83, -0.47, 1.12, -0.95};
    pflref_data D = {.n = n, .X = X, .y = y};
    double w[32] = {0}, w0[32], g[32], gt[32], wp[32];
    ck_assert_uint_le(m.P, 32);
    for (size_t p = 0; p < m.P; p++)
        w[p] = 0.3 + 0.17 * (double)p - 0.05 * (double)(p * p % 7);
    const int mi = pflref_model_block_index(&m, "bn_running_mean");
    const int vi = pflref_model_block_index(&m, "bn_running_var");
    for (size_t q = 0; q < h; q++) {
        w[m.blocks[mi].offset + q] = 0.1 * (double)q - 0.2;
        w[m.blocks[vi].offset + q] = 0.6 + 0.3 * (double)q;
    }
    memcpy(w0, w, sizeof w);
    const size_t idx[3] = {3, 0, 2};
    pflref_model_workspace *ws = pflref_model_workspace_alloc(&m, n);
    double F, Ft;
    ck_assert_int_eq(pflref_model_grad_eval(&m, w, &D, idx, 3, ws, g, &F),
                     PFLREF_OK);
    ck_assert(memcmp(w, w0, m.P * sizeof *w) == 0);   /* w not written */
    ck_assert_int_eq(pflref_model_grad(&m, w, &D, idx, 3, ws, gt, &Ft),
                     PFLREF_OK);
    ck_assert(F != Ft);   /* the two modes normalise differently */
    const double step = 1e-6;
    for (size_t p = 0; p < m.P; p++) {
        double fp, fm;
        memcpy(wp, w, sizeof wp);
        wp[p] = w[p] + step;
        ck_assert_int_eq(pflref_model_grad_eval(&m, wp, &D, idx, 3, ws, gt,
                                                &fp), PFLREF_OK);
        wp[p] = w[p] - step;
        ck_assert_int_eq(pflref_model_grad_eval(&m, wp, &D, idx, 3, ws, gt,
                                                &fm), PFLREF_OK);
        const double fd = (fp - fm) / (2.0 * step);
        const int buffer = (p >= m.blocks[mi].offset &&
                            p < m.blocks[mi].offset + h) ||
                           (p >= m.blocks[vi].offset &&
                            p < m.blocks[vi].offset + h);
        if (buffer) {
            ck_assert(g[p] == 0.0);
            continue;
        }
        ck_assert_msg(fabs(fd - g[p]) <= 1e-6 * (1.0 + fabs(fd)),
                      "dF/dw[%zu] = %.12g, finite difference %.12g", p,
                      g[p], fd);
    }
    pflref_model_workspace_free(ws);
    /* no bn: the training-mode gradient, bit for bit */
    ws = pflref_model_workspace_alloc(&plain, n);
    ck_assert_int_eq(pflref_model_grad_eval(&plain, w, &D, idx, 3, ws, g,
                                            &F), PFLREF_OK);
    ck_assert_int_eq(pflref_model_grad(&plain, w, &D, idx, 3, ws, gt, &Ft),
                     PFLREF_OK);
    ck_assert(memcmp(g, gt, plain.P * sizeof *g) == 0 && F == Ft);
    pflref_model_workspace_free(ws);
}
END_TEST

START_TEST(test_refusals)
{
    static const struct {
        const char *pre, *hyper, *where, *msg;
    } bad[] = {
        {"", "\"fedala.s\": 40", "algorithm.hyperparameters.fedala.s",
         "selects none"},
        {"", "\"fedala.s\": 120", "algorithm.hyperparameters.fedala.s",
         "must be <= 100"},
        {"", "\"fedala.p\": 2", "algorithm.hyperparameters.fedala.p",
         "layers"},
        {"", "\"fedala.p\": 0", "algorithm.hyperparameters.fedala.p",
         "must be in [1, 1]"},
        {"\"preset\": \"official\", ", "\"fedala.p\": 2",
         "algorithm.hyperparameters.fedala.p", "parameter tensors"},
    };
    for (size_t q = 0; q < sizeof bad / sizeof bad[0]; q++) {
        char text[2048];
        snprintf(text, sizeof text, HAND_FMT, bad[q].pre, "0.5", "", SAMPLE);
        /* replace s = 50 and p = 1 by the row's value */
        char *s = strstr(text, "\"fedala.s\": 50, \"fedala.p\": 1");
        ck_assert_ptr_nonnull(s);
        const char *keep = strstr(bad[q].hyper, "fedala.s") != NULL
                               ? "\"fedala.p\": 1"
                               : "\"fedala.s\": 50";
        char repl[128];
        snprintf(repl, sizeof repl, "%s, %s", bad[q].hyper, keep);
        char out[2048];
        snprintf(out, sizeof out, "%.*s%s%s", (int)(s - text), text, repl,
                 s + strlen("\"fedala.s\": 50, \"fedala.p\": 1"));
        pflref_spec *spec = tu_spec(out);
        pflref_error err = {0};
        tu_run_error(spec, PFLREF_EINVAL, &err);
        ck_assert_str_eq(err.where, bad[q].where);
        ck_assert_msg(strstr(err.message, bad[q].msg) != NULL, "row %zu: %s", q,
                      err.message);
        pflref_spec_free(spec);
    }
}
END_TEST

/* A personal list of the wrong size, or none in a round that needs one. */
START_TEST(test_sample_lists)
{
    static const struct {
        const char *personal, *where, *msg;
    } bad[] = {
        {"\"personal\": [[[0, 1]]], ", "schedule.rounds[1].personal[0]",
         "= 1 samples"},
        {"", "schedule.rounds[1].personal", "round 1 has none"},
    };
    for (size_t q = 0; q < 2; q++) {
        char text[2048];
        snprintf(text, sizeof text, HAND_FMT, "", "0.5", "", bad[q].personal);
        pflref_spec *spec = tu_spec(text);
        pflref_error err = {0};
        tu_run_error(spec, PFLREF_EINVAL, &err);
        ck_assert_str_eq(err.where, bad[q].where);
        ck_assert_msg(strstr(err.message, bad[q].msg) != NULL, "%s", err.message);
        pflref_spec_free(spec);
    }
}
END_TEST

/* The registry refuses η ≤ 0, s ≤ 0, threshold ≤ 0, k = 0, max_epochs =
 * 0 and non-finite values, naming the field; η, s and p are required. */
START_TEST(test_hyper_refused)
{
    static const struct {
        const char *name;
        double value;
    } bad[] = {
        {"fedala.eta", 0.0},       {"fedala.eta", NAN},
        {"fedala.s", 0.0},         {"fedala.s", INFINITY},
        {"fedala.threshold", 0.0}, {"fedala.threshold", -0.1},
        {"fedala.threshold", NAN}, {"eta", -0.5},
    };
    for (size_t q = 0; q < sizeof bad / sizeof bad[0]; q++) {
        const pflref_param *p = pflref_param_find_for(bad[q].name, "fedala");
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
    static const char *const counts[] = {"fedala.k", "fedala.max_epochs"};
    for (size_t q = 0; q < 2; q++) {
        const pflref_param *p = pflref_param_find_for(counts[q], "fedala");
        pflref_hyper h;
        pflref_hyper_defaults(&h);
        pflref_error err = {0};
        ck_assert_int_eq(pflref_hyper_set_int(&h, p, 0, "x", &err),
                         PFLREF_EINVAL);
    }
    pflref_hyper h;
    pflref_hyper_defaults(&h);
    ck_assert(isnan(h.fedala.eta) && isnan(h.fedala.s));
    ck_assert(h.fedala.p == PFLREF_INT_UNSET);
    ck_assert_double_eq(h.fedala.threshold, 0.1);
    ck_assert_uint_eq(h.fedala.k, 10);
}
END_TEST

Suite *fedala_suite(void)
{
    Suite *s = suite_create("fedala");
    TCase *tc = tcase_create("fedala");
    tcase_add_loop_test(tc, test_worked_vectors, 0,
                        (int)(sizeof VECTORS / sizeof VECTORS[0]));
    tcase_add_test(tc, test_start_phase_by_hand);
    tcase_add_test(tc, test_reports_theta_hat);
    tcase_add_test(tc, test_clip_both_ways);
    tcase_add_test(tc, test_sum_first_returns);
    tcase_add_test(tc, test_presets);
    tcase_add_test(tc, test_ala_on_every_client);
    tcase_add_test(tc, test_bn_statistics_kept);
    tcase_add_test(tc, test_grad_eval_fd);
    tcase_add_test(tc, test_refusals);
    tcase_add_test(tc, test_sample_lists);
    tcase_add_test(tc, test_hyper_refused);
    suite_add_tcase(s, tc);
    return s;
}
