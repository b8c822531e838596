/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_fedfomo.c: FedFomo (ref/algorithms/fedfomo.c).
 *
 * Properties of Alg. 1 (Zhang et al., ICLR 2021, arXiv 2012.08565v3) as
 * shared/spec notes-fedbn-fedfomo.md §2.3-§2.6 reads it:
 *   - M = 0 with the own upload as candidate is local training (the own
 *     model improves on the anchor, gets w = 1, and training continues
 *     from it);
 *   - no candidate at all (M = 0, fedfomo.self = excluded) restarts every
 *     round from the anchor w⁰: each round is a pure local step from w⁰;
 *   - every candidate worse than the anchor: all weights 0, a pure local
 *     step from the anchor;
 *   - a candidate equal to the anchor (distance 0) gets weight 0, no NaN;
 *   - the affinity row is the running sum of the weights;
 *   - bad peer lists are refused before round 0, naming the entry.
 * The golden vectors' numbers come from golden/fedfomo/make_worked.py.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "suites.h"
#include "testutil.h"
#include <jansson.h>
#include "builder.h"
#include "algorithms/fedfomo.h"

static const char *const VECTORS[] = {
    "golden/fedfomo/worked-hand.json",
    "golden/fedfomo/worked-linear-val.json",
    "golden/fedfomo/worked-linear-val-l1.json",
    "golden/fedfomo/worked-linear-val-excl.json",
    "golden/fedfomo/worked-draws.json",
    "golden/fedfomo/worked-draws-nvlabs.json",
    "golden/fedfomo/worked-draws-pfllib.json",
    "golden/fedfomo/worked-draws-l2sq.json",
    "golden/fedfomo/worked-hand-raw.json",
    "golden/fedfomo/worked-linear-val-batches.json",
    "golden/fedfomo/worked-linear-val-keep.json",
    "golden/fedfomo/worked-draws-pfllib-run.json",
    "golden/fedfomo/worked-equal-rounding.json",
    "golden/fedfomo/worked-equal-rounding-x64.json",
    "golden/layers/fedfomo-bn1d-mlp-train.json",
    "golden/layers/fedfomo-bn1d-mlp-eval.json",
    "golden/layers/fedfomo-mlp-dropout-eval.json",
    "golden/layers/fedfomo-bn1d-mlp-pfllib-keep.json",
    "golden/fedfomo/worked-equal-rounding-on-tau.json",
    "golden/layers/fedfomo-bn1d-equal-rounding-on-tau.json",
};

START_TEST(test_worked_vectors)
{
    /* req: fedfomo.alg1.l3, fedfomo.alg1.l4, fedfomo.alg1.l5 */
    tu_assert_golden(VECTORS[_i]);
}
END_TEST

/* Round t's peer lists: "1 2 | | 0" gives participant 0 the peers 1, 2,
 * participant 1 none, participant 2 the peer 0 (one list per participant,
 * separated by '|'). */
static void set_peers(pflref_schedule *sch, size_t t, const char *lists)
{
    pflref_round_plan *r = &sch->rounds[t];
    size_t ids[64], off[17] = {0}, n = 0, j = 0;
    for (const char *p = lists; *p != '\0';) {
        if (*p == '|') {
            off[++j] = n;
            p++;
        } else if (*p == ' ') {
            p++;
        } else {
            char *end;
            ids[n++] = strtoul(p, &end, 10);
            p = end;
        }
    }
    off[++j] = n;
    ck_assert_uint_eq(j, r->m);
    pflref_error err;
    r->peers = calloc(1, sizeof *r->peers);
    ck_assert_ptr_nonnull(r->peers);
    ck_assert_int_eq(pflref_batches_alloc(r->peers, j, n, &err), PFLREF_OK);
    memcpy(r->peers->step_off, off, (j + 1) * sizeof *off);
    memcpy(r->peers->idx, ids, n * sizeof *ids);
}

/* Three quadratic clients f_i = ½ Σ a (θ − c_i)², a = (2, 1/2), d = 2,
 * η = 0.15, w⁰ = (0.25, −0.5); T rounds of one step, every client. */
static tb_case *quad_case(size_t T)
{
    static const double C[3][2] = {{-3.5, 2.25}, {1.75, -4.0}, {2.5, 3.0}};
    tb_case *c = tb_quadratic(2, 3);
    for (size_t i = 0; i < 3; i++)
        tb_quad(c, i, (const double[]){2.0, 0.5}, C[i], 1);
    tb_w0(c, (const double[]){0.25, -0.5});
    c->hyper.eta = 0.15;
    for (size_t t = 0; t < T; t++)
        tb_round(c, "0 1 2", "0 | 0", "0", "0 | 0 | 0");
    return c;
}

/* The NOTE records named `name` of client i in round t (first match). */
static size_t note_of(const pflref_trajectory *tj, const char *name, long t,
                      long i, double *out, size_t cap)
{
    for (size_t k = 0; k < tj->count; k++) {
        const pflref_record *rc = &tj->records[k];
        if (rc->kind != PFLREF_EV_NOTE || strcmp(rc->name, name) != 0 ||
            rc->round != t || rc->client != i)
            continue;
        size_t n = rc->len < cap ? rc->len : cap;
        memcpy(out, tj->values + rc->offset, n * sizeof *out);
        return n;
    }
    return 0;
}

/* --trace prints l. 2's C and a (intermediates, recorded at no level): on
 * golden/fedfomo/worked-linear-val.json's round 0 every anchor is
 * φ_i⁰ = w⁰ = (¼, −½, ⅛) and C the spec's peers S_i⁰ then i (self
 * included): client 0 (1) → (1, 0), client 1 (0, 2) → (0, 2, 1), client 2
 * none → (2), client 3 (2, 1) → (2, 1, 3). */
START_TEST(test_trace_candidates_and_anchor)
{
    /* req: fedfomo.alg1.l2 */
    char *dir = tu_tmpdir();
    char *vec = tu_repo_path("golden/fedfomo/worked-linear-val.json");
    char args[4096];
    snprintf(args, sizeof args, "run --trace '%s' -o '%s/r.json'", vec, dir);
    char *out = NULL, *errout = NULL;
    ck_assert_int_eq(tu_cli(args, &out, &errout), 0);
    const char *want[] = {"(client 0) C = [1.0, 0.0]",
                          "(client 1) C = [0.0, 2.0, 1.0]",
                          "(client 2) C = [2.0]",
                          "(client 3) C = [2.0, 1.0, 3.0]",
                          "(client 0) a = [0.25, -0.5, 0.125]",
                          "(client 3) a = [0.25, -0.5, 0.125]"};
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++)
        ck_assert_msg(strstr(errout, want[k]) != NULL,
                      "the trace lacks \"%s\"", want[k]);
    free(out);
    free(errout);
    free(vec);
    free(dir);
}
END_TEST

/* M = 0, own upload a candidate: FedFomo is local training. */
START_TEST(test_m0_is_local_training)
{
    /* req: fedfomo.alg1.l6 */
    tb_case *c = quad_case(4);
    pflref_run_result *local = tb_run(c, "local", NULL);
    pflref_run_result *fomo = tb_run(c, "fedfomo", NULL);
    for (size_t q = 0; q < 6; q++)
        ck_assert_msg(fabs(fomo->v[q] - local->v[q]) <=
                          1e-14 * (1.0 + fabs(local->v[q])),
                      "θ[%zu]: fedfomo %.17g, local %.17g", q, fomo->v[q],
                      local->v[q]);
    /* the runs differ from w⁰ (training happened) */
    ck_assert(fabs(local->v[0] - 0.25) > 0.1);
    pflref_run_result_free(fomo);
    pflref_run_result_free(local);
    tb_free(c);
}
END_TEST

/* No candidate at all: every round is a pure local step from w⁰. */
START_TEST(test_no_candidate_restarts_from_anchor)
{
    tb_case *one = quad_case(1);
    pflref_run_result *local = tb_run(one, "local", NULL);
    tb_case *c = quad_case(3);
    c->hyper.fedfomo.self = PFLREF_FEDFOMO_SELF_EXCLUDED;
    pflref_run_result *fomo = tb_run(c, "fedfomo", NULL);
    ck_assert_mem_eq(fomo->v, local->v, 6 * sizeof(double));
    pflref_run_result_free(fomo);
    pflref_run_result_free(local);
    tb_free(c);
    tb_free(one);
}
END_TEST

/* Every candidate worse than the anchor: all weights 0, φ = anchor, and
 * the round is a pure local step from it.  Client 2 (c = (2.5, 3)) is
 * offered client 0's upload, which moved towards (−3.5, 2.25); with the
 * own model excluded nothing improves on φ_2 = w⁰. */
START_TEST(test_no_better_peer_is_pure_local_step)
{
    /* req: fedfomo.alg1.l4 */
    tb_case *c = quad_case(2);
    c->hyper.fedfomo.self = PFLREF_FEDFOMO_SELF_EXCLUDED;
    pflref_schedule *sch = tb_schedule(c, "fedfomo");
    set_peers(sch, 1, "| | 0");
    pflref_trajectory tj;
    pflref_run_result *fomo = tb_run_recorded(c, "fedfomo", &tj);
    double w[3] = {-1, -1, -1}, phi[2] = {0, 0};
    ck_assert_uint_eq(note_of(&tj, "weights", 1, 2, w, 3), 3);
    ck_assert_msg(w[0] == 0.0 && w[1] == 0.0 && w[2] == 0.0,
                  "weights (%g, %g, %g), want all 0", w[0], w[1], w[2]);
    ck_assert_uint_eq(note_of(&tj, "phi", 1, 2, phi, 2), 2);
    ck_assert(phi[0] == 0.25 && phi[1] == -0.5);
    /* θ_2 = client 2's three local steps from w⁰: each step shrinks the
     * gap to c = (2.5, 3) by 1 − η a = (0.7, 0.925) */
    ck_assert_double_eq_tol(fomo->v[4], 2.5 - 2.25 * 0.7 * 0.7 * 0.7, 1e-14);
    ck_assert_double_eq_tol(fomo->v[5], 3.0 - 3.5 * 0.925 * 0.925 * 0.925,
                            1e-14);
    pflref_trajectory_free(&tj);
    pflref_run_result_free(fomo);
    tb_free(c);
}
END_TEST

/* Distance 0: in round 0 every upload equals every anchor (w⁰), so every
 * r_n is the documented 0, not 0/0; the weights are 0 and finite. */
START_TEST(test_zero_distance_weight_zero)
{
    /* req: fedfomo.alg1.l3 */
    tb_case *c = quad_case(1);
    pflref_schedule *sch = tb_schedule(c, "fedfomo");
    set_peers(sch, 0, "1 2 | 0 2 | 0 1");
    pflref_trajectory tj;
    pflref_run_result *fomo = tb_run_recorded(c, "fedfomo", &tj);
    for (long i = 0; i < 3; i++) {
        double w[3] = {-1, -1, -1};
        ck_assert_uint_eq(note_of(&tj, "weights", 0, i, w, 3), 3);
        for (int n = 0; n < 3; n++)
            ck_assert_msg(w[n] == 0.0, "client %ld: w_%d = %g, want 0", i, n,
                          w[n]);
    }
    for (size_t q = 0; q < 6; q++)
        ck_assert(isfinite(fomo->v[q]));
    pflref_trajectory_free(&tj);
    pflref_run_result_free(fomo);
    tb_free(c);
}
END_TEST

/* The affinity row accumulates the weights: P_0 after round 2 is the sum
 * of client 0's weights of rounds 1 and 2, and each round's weights sum
 * to 1 once something improves. */
START_TEST(test_affinity_accumulates)
{
    /* req: fedfomo.alg1.l8 */
    tb_case *c = quad_case(3);
    pflref_schedule *sch = tb_schedule(c, "fedfomo");
    set_peers(sch, 1, "1 2 | 0 | ");
    set_peers(sch, 2, "2 | 2 | 0 1");
    pflref_trajectory tj;
    pflref_run_result *fomo = tb_run_recorded(c, "fedfomo", &tj);
    double w1[3], w2[3], P[3];
    ck_assert_uint_eq(note_of(&tj, "weights", 1, 0, w1, 3), 3);
    ck_assert_uint_eq(note_of(&tj, "weights", 2, 0, w2, 3), 3);
    ck_assert_uint_eq(note_of(&tj, "P", 2, 0, P, 3), 3);
    double s1 = 0, s2 = 0;
    for (int n = 0; n < 3; n++) {
        ck_assert_double_eq_tol(P[n], w1[n] + w2[n], 1e-15);
        ck_assert(w1[n] >= 0.0 && w2[n] >= 0.0);
        s1 += w1[n];
        s2 += w2[n];
    }
    ck_assert_double_eq_tol(s1, 1.0, 1e-15);
    ck_assert_double_eq_tol(s2, 1.0, 1e-15);
    ck_assert(w2[1] == 0.0);   /* client 1 was not offered in round 2 */
    pflref_trajectory_free(&tj);
    pflref_run_result_free(fomo);
    tb_free(c);
}
END_TEST

START_TEST(test_bad_peers)
{
    static const char *const cases[][3] = {
        {"0 | 1 | ", "schedule.rounds[0].peers[0][0]", "own peer"},
        {"1 2 1 | | ", "schedule.rounds[0].peers[0][2]", "listed twice"},
    };
    for (size_t k = 0; k < 2; k++) {
        tb_case *c = quad_case(1);
        pflref_schedule *sch = tb_schedule(c, "fedfomo");
        set_peers(sch, 0, cases[k][0]);
        pflref_error err;
        tb_run_error(c, "fedfomo", PFLREF_EINVAL, &err);
        ck_assert_str_eq(err.where, cases[k][1]);
        ck_assert_msg(strstr(err.message, cases[k][2]) != NULL,
                      "message \"%s\" lacks \"%s\"", err.message,
                      cases[k][2]);
        tb_free(c);
    }
}
END_TEST

/* The spec reader: "peers" for another algorithm, a count that does not
 * match the participants, and an id out of range are refused by path. */
START_TEST(test_spec_peers_errors)
{
    static const char *const fmt =
        "{\"format\": \"pflref-spec/1\", \"name\": \"x\","
        " \"model\": {\"kind\": \"quadratic\", \"d\": 1},"
        " \"problem\": {\"clients\": [{\"a\": [2], \"c\": [1]},"
        " {\"a\": [2], \"c\": [3]}]}, \"init\": {\"kind\": \"zeros\"},"
        " \"algorithm\": {\"name\": \"%s\", \"hyperparameters\":"
        " {\"eta\": 0.25}}, \"schedule\": {\"kind\": \"given\", \"rounds\":"
        " [{\"clients\": [0, 1], \"batches\": [[[0]], [[0]]],"
        " \"peers\": %s}]}}";
    static const char *const cases[][3] = {
        {"fedavg", "[[1], [0]]", "schedule.rounds[0].peers"},
        {"fedfomo", "[[1]]", "schedule.rounds[0].peers"},
        {"fedfomo", "[[1], [2]]", "schedule.rounds[0].peers[1][0]"},
        {"fedfomo", "[[1], 0]", "schedule.rounds[0].peers[1]"},
    };
    char text[1024];
    for (size_t k = 0; k < 4; k++) {
        snprintf(text, sizeof text, fmt, cases[k][0], cases[k][1]);
        pflref_spec *spec = NULL;
        pflref_error err;
        ck_assert_int_eq(tu_parse(text, &spec, &err), PFLREF_EINVAL);
        ck_assert_msg(strcmp(err.where, cases[k][2]) == 0,
                      "case %zu: where \"%s\", want \"%s\" (%s)", k,
                      err.where, cases[k][2], err.message);
    }
    /* and a good one parses and runs */
    snprintf(text, sizeof text, fmt, "fedfomo", "[[1], []]");
    pflref_spec *spec = tu_spec(text);
    pflref_run_result *res = tu_run(spec, NULL);
    ck_assert(isfinite(res->v[0]) && isfinite(res->v[1]));
    pflref_run_result_free(res);
    pflref_spec_free(spec);
}
END_TEST

/* notes §2.7 Example C: P₀ = (1/2, −1/5, 1/2, 9/10) over peers 1..4, so
 * G = (4, 1, 3, 2) (1 and 3 tie: the lower id first); t = 1, ε = 1/4:
 * u = (0.12, 0.8), π = (3, 4, 2, 1) gives {3, 4}; u = (0.9, 0.1),
 * π = (4, 3, 2, 1) gives 4, then π's 4 is skipped and 3 taken; t = 6
 * (ε₀ − 6δ = 0) gives {4, 1}. */
START_TEST(test_example_c_selection)
{
    /* req: fedfomo.alg1.l1 */
    const double row[5] = {0.0, 0.5, -0.2, 0.5, 0.9};   /* client 0's row */
    const size_t pi1[4] = {3, 4, 2, 1}, pi2[4] = {4, 3, 2, 1};
    const double u1[2] = {0.12, 0.8}, u2[2] = {0.9, 0.1};
    size_t G[4], out[4];
    const double eps1 = 0.3 - 0.05 * 1.0, eps6 = 0.3 - 0.05 * 6.0;
    ck_assert_uint_eq(pflref_fedfomo_select(row, pi1, 4, u1, 2, eps1, 0, G,
                                            out), 2);
    ck_assert_uint_eq(G[0], 4);
    ck_assert_uint_eq(G[1], 1);
    ck_assert_uint_eq(G[2], 3);
    ck_assert_uint_eq(G[3], 2);
    ck_assert_uint_eq(out[0], 3);
    ck_assert_uint_eq(out[1], 4);
    ck_assert_uint_eq(pflref_fedfomo_select(row, pi2, 4, u2, 2, eps1, 0, G,
                                            out), 2);
    ck_assert_uint_eq(out[0], 4);
    ck_assert_uint_eq(out[1], 3);
    ck_assert_uint_eq(pflref_fedfomo_select(row, pi1, 4, u1, 2, eps6, 0, G,
                                            out), 2);
    ck_assert_uint_eq(out[0], 4);
    ck_assert_uint_eq(out[1], 1);
    /* topM ignores u: the two largest, whatever π and u say */
    ck_assert_uint_eq(pflref_fedfomo_select(row, pi1, 4, u1, 2, 1.0, 1, G,
                                            out), 2);
    ck_assert_uint_eq(out[0], 4);
    ck_assert_uint_eq(out[1], 1);
    /* fewer candidates than M: every candidate is sent */
    ck_assert_uint_eq(pflref_fedfomo_select(row, pi1, 2, (const double[]){
                                                0.9, 0.9, 0.9}, 3, eps1, 0,
                                            G, out), 2);
    ck_assert_uint_eq(out[0], 4);
    ck_assert_uint_eq(out[1], 3);
}
END_TEST

/* A generated schedule with schedule.peers = M: the run chooses the
 * downloads at run time and records them with their draws; the recorded
 * schedule, run as given (with the peers as data, and again with only the
 * draws), reproduces the final models and the schedule bit for bit. */
START_TEST(test_generated_peers_replay)
{
    /* req: fedfomo.alg1.l1 */
    static const char *const spec_text =
        "{\"format\": \"pflref-spec/1\", \"name\": \"gen\","
        " \"model\": {\"kind\": \"quadratic\", \"d\": 2},"
        " \"problem\": {\"clients\": [{\"a\": [2, 0.5], \"c\": [-3.5, 2.25]},"
        " {\"a\": [2, 0.5], \"c\": [1.75, -4]}, {\"a\": [2, 0.5], \"c\": [2.5, 3]},"
        " {\"a\": [2, 0.5], \"c\": [-1, 1]}, {\"a\": [1, 1], \"c\": [0.5, -2]}]},"
        " \"init\": {\"kind\": \"zeros\"}, \"algorithm\": {\"name\": \"fedfomo\","
        " \"hyperparameters\": {\"eta\": 0.15, \"fedfomo.epsilon0\": 0.6,"
        " \"fedfomo.delta\": 0.1}}, \"schedule\": {\"kind\": \"generate\","
        " \"rounds\": 6, \"clients_per_round\": 4, \"local\": {\"steps\": 1,"
        " \"batch_size\": 1}, \"peers\": 2, \"peer_seed\": 7}}";
    char *dir = tu_tmpdir();
    char path[1024], cmd[4096], *out = NULL, *errout = NULL;
    snprintf(path, sizeof path, "%s/gen.json", dir);
    ck_assert_int_eq(tu_write(path, spec_text), 0);
    snprintf(cmd, sizeof cmd, "run %s -o %s/res.json", path, dir);
    ck_assert_int_eq(tu_cli(cmd, &out, &errout), 0);
    free(out);
    free(errout);
    snprintf(path, sizeof path, "%s/res.json", dir);
    char *res_text = tu_read(path);
    json_error_t jerr;
    json_t *res = json_loads(res_text, 0, &jerr), *spec =
        json_loads(spec_text, 0, &jerr);
    ck_assert_ptr_nonnull(res);
    ck_assert_ptr_nonnull(spec);
    json_t *sched = json_object_get(res, "schedule");
    json_t *r0 = json_array_get(json_object_get(sched, "rounds"), 0);
    ck_assert_uint_eq(json_array_size(json_object_get(r0, "peers")), 4);
    ck_assert_uint_eq(json_array_size(json_object_get(r0, "peer_draws")), 4);
    /* round 0: P = 0, so G is ascending; every recorded list holds 2 */
    for (size_t j = 0; j < 4; j++)
        ck_assert_uint_eq(
            json_array_size(json_array_get(json_object_get(r0, "peers"), j)),
            2);
    for (int with_peers = 1; with_peers >= 0; with_peers--) {
        json_t *s2 = json_deep_copy(spec);
        json_t *given = json_deep_copy(sched);
        for (size_t t = 0; !with_peers && t < 6; t++)
            json_object_del(
                json_array_get(json_object_get(given, "rounds"), t), "peers");
        json_object_set_new(s2, "schedule", given);
        char *text = json_dumps(s2, JSON_COMPACT);
        snprintf(path, sizeof path, "%s/replay.json", dir);
        ck_assert_int_eq(tu_write(path, text), 0);
        snprintf(cmd, sizeof cmd, "run %s -o %s/res2.json", path, dir);
        ck_assert_int_eq(tu_cli(cmd, &out, &errout), 0);
        free(out);
        free(errout);
        snprintf(path, sizeof path, "%s/res2.json", dir);
        char *t2 = tu_read(path);
        json_t *res2 = json_loads(t2, 0, &jerr);
        ck_assert_ptr_nonnull(res2);
        ck_assert(json_equal(json_object_get(res, "final"),
                             json_object_get(res2, "final")));
        ck_assert(json_equal(sched, json_object_get(res2, "schedule")));
        json_decref(res2);
        free(t2);
        free(text);
        json_decref(s2);
    }
    json_decref(res);
    json_decref(spec);
    free(res_text);
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

/* Refusals of the run-time choice, each naming its field: ε₀ > 1, a draw
 * order listing the client itself or a repeat, a uniform outside [0, 1),
 * "peers" in a generated schedule of another algorithm. */
START_TEST(test_draws_errors)
{
    static const char *const fmt =
        "{\"format\": \"pflref-spec/1\", \"name\": \"x\","
        " \"model\": {\"kind\": \"quadratic\", \"d\": 1},"
        " \"problem\": {\"clients\": [{\"a\": [2], \"c\": [1]},"
        " {\"a\": [2], \"c\": [3]}, {\"a\": [2], \"c\": [5]}]},"
        " \"init\": {\"kind\": \"zeros\"}, \"algorithm\": {\"name\": \"%s\","
        " \"hyperparameters\": {\"eta\": 0.25%s}}, \"schedule\": %s}";
    static const char *const given =
        "{\"kind\": \"given\", \"rounds\": [{\"clients\": [0, 1],"
        " \"batches\": [[[0]], [[0]]], \"peer_draws\": %s}]}";
    static const char *const cases[][4] = {
        {"fedfomo", ", \"fedfomo.epsilon0\": 1.5",
         "[{\"order\": [1, 2], \"u\": [0.5]}, {\"order\": [0], \"u\": []}]",
         "algorithm.hyperparameters.fedfomo.epsilon0"},
        {"fedfomo", "",
         "[{\"order\": [1, 0], \"u\": [0.5]}, {\"order\": [0], \"u\": []}]",
         "schedule.rounds[0].peer_draws[0].order[1]"},
        {"fedfomo", "",
         "[{\"order\": [1, 2], \"u\": [0.5]}, {\"order\": [2, 2], \"u\": []}]",
         "schedule.rounds[0].peer_draws[1].order[1]"},
        {"fedfomo", "",
         "[{\"order\": [1, 2], \"u\": [1.0]}, {\"order\": [0], \"u\": []}]",
         "schedule.rounds[0].peer_draws[0].u[0]"},
        {"fedfomo", "", "[{\"order\": [1, 2], \"u\": [0.5]}]",
         "schedule.rounds[0].peer_draws"},
        {"fedavg", "", "[{\"order\": [1], \"u\": [0.5]}, {\"order\": [0],"
         " \"u\": []}]", "schedule.rounds[0].peer_draws"},
    };
    char sched[512], text[2048];
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        snprintf(sched, sizeof sched, given, cases[k][2]);
        snprintf(text, sizeof text, fmt, cases[k][0], cases[k][1], sched);
        pflref_spec *spec = NULL;
        pflref_error err;
        pflref_status st = tu_parse(text, &spec, &err);
        if (st == PFLREF_OK) {   /* refused by the run's check */
            tu_run_error(spec, PFLREF_EINVAL, &err);
            pflref_spec_free(spec);
        }
        ck_assert_msg(strcmp(err.where, cases[k][3]) == 0,
                      "case %zu: where \"%s\", want \"%s\" (%s)", k,
                      err.where, cases[k][3], err.message);
    }
    snprintf(text, sizeof text, fmt, "fedavg", "",
             "{\"kind\": \"generate\", \"rounds\": 1, \"local\":"
             " {\"steps\": 1, \"batch_size\": 1}, \"peers\": 1}");
    pflref_spec *spec = NULL;
    pflref_error err;
    ck_assert_int_eq(tu_parse(text, &spec, &err), PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "schedule.peers");
}
END_TEST

/* golden/fedfomo/worked-equal-rounding's run, with τ = fedfomo.equal_rtol:
 * round 1 gives client 0 the one weight w_1 = 1, so its anchor φ_0 is
 * θ_1⁰ in exact arithmetic and one ulp off in fp64; client 1 sits out. */
static pflref_run_result *equal_rounding_run(double tau, pflref_trajectory *tj)
{
    static const double A[3][2] = {{1.5, 0.75}, {1.25, 2.5}, {0.5, 1.75}};
    static const double C[3][2] = {{-0.43, 4.81}, {-1.02, 8.96},
                                   {-1.27, 1.0}};
    tb_case *c = tb_quadratic(2, 3);
    for (size_t i = 0; i < 3; i++)
        tb_quad(c, i, A[i], C[i], 1);
    tb_w0(c, (const double[]){0.1, -0.6});
    c->hyper.eta = 0.25;
    c->hyper.fedfomo.self = PFLREF_FEDFOMO_SELF_EXCLUDED;
    c->hyper.fedfomo.p_update = PFLREF_FEDFOMO_P_UPDATE_RAW;
    c->hyper.fedfomo.equal_rtol = tau;
    tb_round(c, "0 1 2", "0", "0", "0");
    tb_round(c, "0 2", "0", "0");
    tb_round(c, "0 2", "0", "0");
    pflref_schedule *sch = tb_schedule(c, "fedfomo");
    set_peers(sch, 1, "1 | 0");
    set_peers(sch, 2, "1 | 1");
    pflref_run_result *res = tb_run_recorded(c, "fedfomo", tj);
    tb_free(c);
    return res;
}

/* l. 3's zero-distance rule up to rounding: with τ = 2⁻⁵⁰ (the default)
 * the candidate equal to the anchor in exact arithmetic gets r = 0 and
 * weight 0; with τ = 0 (bitwise equality) the one-ulp distance turns the
 * rounding of the losses into a ratio that takes weight 1 and adds to P
 * (the noise the tolerance is there to remove; the golden vector holds
 * the exact numbers). */
START_TEST(test_equal_up_to_rounding)
{
    /* req: fedfomo.alg1.l3, fedfomo.eq.zero_rounding */
    pflref_trajectory tj0, tj1;
    pflref_run_result *tol = equal_rounding_run(0x1p-50, &tj1);
    pflref_run_result *bit = equal_rounding_run(0.0, &tj0);
    double w1[3], phi[3], w[3], P1[3], P2[3];
    ck_assert_uint_eq(note_of(&tj1, "weights", 1, 0, w1, 3), 3);
    ck_assert_msg(w1[0] == 0.0 && w1[1] == 1.0 && w1[2] == 0.0,
                  "round 1: w = (%g, %g, %g), want (0, 1, 0)", w1[0], w1[1],
                  w1[2]);
    ck_assert_uint_eq(note_of(&tj1, "phi", 1, 0, phi, 2), 2);
    ck_assert_uint_eq(note_of(&tj1, "weights", 2, 0, w, 3), 3);
    ck_assert_msg(w[1] == 0.0, "τ = 2^-50: w_1 = %g, want 0 (θ_1 = φ_0 up "
                  "to rounding)", w[1]);
    ck_assert_uint_eq(note_of(&tj1, "P", 1, 0, P1, 3), 3);
    ck_assert_uint_eq(note_of(&tj1, "P", 2, 0, P2, 3), 3);
    ck_assert_msg(P2[1] == P1[1], "τ = 2^-50: P_{0,1} moved in round 2");
    ck_assert_uint_eq(note_of(&tj0, "weights", 2, 0, w, 3), 3);
    ck_assert_msg(w[1] == 1.0, "τ = 0: w_1 = %g; the ulp distance no longer "
                  "decides, so this case no longer shows the rule", w[1]);
    pflref_trajectory_free(&tj0);
    pflref_trajectory_free(&tj1);
    pflref_run_result_free(tol);
    pflref_run_result_free(bit);
}
END_TEST

/* golden/layers/fedfomo-bn1d-equal-rounding-on-tau's spec run with
 * fedfomo.equal_rtol = tau (bn.aggregate = parameters_only): client 0's
 * weights of rounds 1 and 2 and its row of P after each. */
static void bn_on_tau_run(double tau, double w1[3], double w2[3],
                          double P1[3], double P2[3])
{
    char *path = tu_repo_path(
        "golden/layers/fedfomo-bn1d-equal-rounding-on-tau.json");
    json_error_t jerr;
    json_t *vec = json_load_file(path, 0, &jerr);
    ck_assert_msg(vec != NULL, "%s: %s", path, jerr.text);
    json_t *spec = json_deep_copy(json_object_get(vec, "spec"));
    json_object_set_new(
        json_object_get(json_object_get(spec, "algorithm"), "hyperparameters"),
        "fedfomo.equal_rtol", json_real(tau));
    char *text = json_dumps(spec, JSON_COMPACT);
    pflref_spec *s = tu_spec(text);
    pflref_trajectory tj;
    pflref_trajectory_init(&tj, PFLREF_RECORD_STEP);
    const pflref_trace tr = {.emit = pflref_trajectory_emit, .ctx = &tj};
    pflref_run_result *res = tu_run(s, &tr);
    ck_assert(!tj.failed);
    ck_assert_uint_eq(note_of(&tj, "weights", 1, 0, w1, 3), 3);
    ck_assert_uint_eq(note_of(&tj, "weights", 2, 0, w2, 3), 3);
    ck_assert_uint_eq(note_of(&tj, "P", 1, 0, P1, 3), 3);
    ck_assert_uint_eq(note_of(&tj, "P", 2, 0, P2, 3), 3);
    pflref_trajectory_free(&tj);
    pflref_run_result_free(res);
    pflref_spec_free(s);
    free(text);
    json_decref(spec);
    json_decref(vec);
    free(path);
}

/* The parameters()-only equality (bn.aggregate = parameters_only) at its
 * bound: round 1 gives client 0 the candidate θ_1⁰ with weight 1, whose
 * only moved parameter, fc2's bias, the fp64 mean leaves 2⁻⁵⁵ off; in
 * round 2 that difference is exactly τ max(|x|, |a|) = 2⁻⁵³ · ¼ while the
 * running statistics differ (left out of the test).  τ = 2⁻⁵³: the strict
 * "differs when > τ max" calls it equal, r = 0, P_{0,1} kept; τ = 2⁻⁵⁴:
 * the 2⁻⁵⁵ distance gives a ratio of size ~10¹⁶ that P_update = raw adds
 * to P. */
START_TEST(test_equal_params_only_on_tau)
{
    /* req: fedfomo.eq.zero_rounding */
    double w1[3], w2[3], P1[3], P2[3];
    bn_on_tau_run(0x1p-53, w1, w2, P1, P2);
    ck_assert_msg(w1[0] == 0.0 && w1[1] == 1.0 && w1[2] == 0.0,
                  "round 1: w = (%g, %g, %g), want (0, 1, 0)", w1[0], w1[1],
                  w1[2]);
    ck_assert_msg(w2[1] == 0.0 && P2[1] == P1[1],
                  "τ = 2^-53: w_1 = %g, P_{0,1} %g -> %g; the bound must "
                  "count the candidate equal", w2[1], P1[1], P2[1]);
    bn_on_tau_run(0x1p-54, w1, w2, P1, P2);
    ck_assert_msg(fabs(P2[1] - P1[1]) > 1e6,
                  "τ = 2^-54: P_{0,1} %g -> %g; the one-ulp distance no "
                  "longer decides, so the vector is off its bound", P1[1],
                  P2[1]);
}
END_TEST

/* The preset pfllib as PFLlib runs (serverfomo.py, clientfomo.py): the
 * anchor before training, the ranking of the whole row, the mean of batch
 * means, the per-client decay count, norm + 1e-5. */
START_TEST(test_preset_pfllib)
{
    /* req: fedfomo.preset.pfllib */
    pflref_hyper h;
    pflref_hyper_defaults(&h);
    pflref_error err;
    ck_assert_int_eq(pflref_preset_apply(&h, "fedfomo", "pfllib",
                                         "algorithm.preset", &err),
                     PFLREF_OK);
    ck_assert_int_eq(h.fedfomo.anchor, PFLREF_FEDFOMO_ANCHOR_PRE_TRAIN);
    ck_assert_int_eq(h.fedfomo.self, PFLREF_FEDFOMO_SELF_RANKED);
    ck_assert_int_eq(h.fedfomo.val_loss, PFLREF_FEDFOMO_VAL_BATCH_MEAN);
    ck_assert_int_eq(h.fedfomo.selection, PFLREF_FEDFOMO_SELECTION_TOPM);
    ck_assert_int_eq(h.fedfomo.no_positive, PFLREF_FEDFOMO_NO_POSITIVE_KEEP);
    ck_assert_int_eq(h.lr.count, PFLREF_LR_COUNT_TRAININGS);
    ck_assert(h.fedfomo.distance_eps == 1e-5);
    ck_assert(h.fedfomo.equal_rtol == 0x1p-50);   /* the registry default */
    /* clientfomo.py:106-109, :157-165: parameters() only */
    ck_assert_int_eq(h.bn_aggregate, PFLREF_BN_AGGREGATE_PARAMETERS);
}
END_TEST

/* fedfomo.val_mode on a model without batch normalisation or dropout (an
 * MLP 2 → 2 (relu) → 1, validation splits, peers in round 1): training and
 * evaluation passes are the same function, so both modes give the same
 * bits; the preset official sets eval (NVlabs federation.py:163-166). */
static tb_case *val_mode_case(int mode)
{
    const pflref_model m = tb_mlp(PFLREF_LOSS_SQUARED, 2, 1, 2,
                                  PFLREF_ACT_RELU, 1, 1);
    tb_case *c = tb_new(&m, 2);
    tb_train(c, 0, 3, (const double[]){0.5, -1.25, 1.5, 0.25, -0.75, 0.875},
             (const double[]){1.125, 2.25, -0.5});
    tb_train(c, 1, 4,
             (const double[]){1.0, 0.5, -0.5, 1.5, 0.25, -0.75, 1.25, 1.0},
             (const double[]){0.75, -1.0, 0.5, 1.5});
    tb_val(c, 0, 2, (const double[]){0.75, 0.5, -1.0, 1.25},
           (const double[]){0.5, 1.75});
    tb_val(c, 1, 2, (const double[]){-0.25, 1.0, 1.5, -0.5},
           (const double[]){-0.75, 1.0});
    tb_w0(c, (const double[]){0.375, -0.25, 0.125, 0.5, 0.0625, -0.125, 0.625,
                              -0.375, 0.25});
    tb_round(c, "0 1", "0 1 | 2", "0 1 | 2 3");
    tb_round(c, "0 1", "2 | 0 1", "2 3 | 1");
    tb_round(c, "0 1", "1 0", "3 0 | 2");
    c->hyper.eta = 0.125;
    c->hyper.fedfomo.val_mode = mode;
    pflref_schedule *sch = tb_schedule(c, "fedfomo");
    set_peers(sch, 1, "1 | 0");
    set_peers(sch, 2, "1 | 0");
    return c;
}

START_TEST(test_val_mode_without_bn_same)
{
    tb_case *ct = val_mode_case(PFLREF_FEDFOMO_VAL_MODE_TRAIN);
    tb_case *ce = val_mode_case(PFLREF_FEDFOMO_VAL_MODE_EVAL);
    pflref_trajectory tjt, tje;
    pflref_run_result *rt = tb_run_recorded(ct, "fedfomo", &tjt);
    pflref_run_result *re = tb_run_recorded(ce, "fedfomo", &tje);
    int decided = 0;   /* some client has a positive weight somewhere */
    for (long t = 1; t <= 2; t++)
        for (long i = 0; i < 2; i++) {
            double wt[2], we[2];
            ck_assert_uint_eq(note_of(&tjt, "weights", t, i, wt, 2), 2);
            ck_assert_uint_eq(note_of(&tje, "weights", t, i, we, 2), 2);
            decided |= wt[0] + wt[1] > 0.0;
            ck_assert_msg(memcmp(wt, we, sizeof wt) == 0,
                          "round %ld client %ld weights differ: (%.17g, "
                          "%.17g) vs (%.17g, %.17g)", t, i, wt[0], wt[1],
                          we[0], we[1]);
        }
    ck_assert_msg(decided, "no positive weight: the validation losses "
                  "decide nothing here");
    ck_assert_msg(memcmp(rt->v, re->v, 2 * 9 * sizeof *rt->v) == 0,
                  "final θ differ between val_mode train and eval");
    pflref_trajectory_free(&tjt);
    pflref_trajectory_free(&tje);
    pflref_run_result_free(rt);
    pflref_run_result_free(re);
    tb_free(ct);
    tb_free(ce);
    pflref_hyper h;
    pflref_hyper_defaults(&h);
    ck_assert_int_eq(h.fedfomo.val_mode, PFLREF_FEDFOMO_VAL_MODE_TRAIN);
    pflref_error err;
    ck_assert_int_eq(pflref_preset_apply(&h, "fedfomo", "official",
                                         "algorithm.preset", &err),
                     PFLREF_OK);
    ck_assert_int_eq(h.fedfomo.val_mode, PFLREF_FEDFOMO_VAL_MODE_EVAL);
}
END_TEST

/* fedfomo.self = ranked: a given peer list may name the client itself
 * (PFLlib's top-M can choose the own entry), and that candidate is then
 * scored once; under included the same list is refused. */
START_TEST(test_ranked_own_peer)
{
    tb_case *c = quad_case(2);
    c->hyper.fedfomo.self = PFLREF_FEDFOMO_SELF_RANKED;
    pflref_schedule *sch = tb_schedule(c, "fedfomo");
    set_peers(sch, 1, "0 1 | 1 | 0");
    pflref_trajectory tj;
    pflref_run_result *res = tb_run_recorded(c, "fedfomo", &tj);
    double w[3];
    ck_assert_uint_eq(note_of(&tj, "weights", 1, 1, w, 3), 3);
    ck_assert_msg(w[0] == 0.0 && w[2] == 0.0,
                  "client 1's only candidate is its own upload");
    pflref_trajectory_free(&tj);
    pflref_run_result_free(res);
    tb_free(c);
    c = quad_case(2);
    sch = tb_schedule(c, "fedfomo");
    set_peers(sch, 1, "0 1 | 1 | 0");
    pflref_error err;
    tb_run_error(c, "fedfomo", PFLREF_EINVAL, &err);
    ck_assert_str_eq(err.where, "schedule.rounds[1].peers[0][0]");
    tb_free(c);
}
END_TEST

Suite *fedfomo_suite(void)
{
    Suite *s = suite_create("fedfomo");
    TCase *tc = tcase_create("fedfomo");
    tcase_add_loop_test(tc, test_worked_vectors, 0,
                        (int)(sizeof VECTORS / sizeof VECTORS[0]));
    tcase_add_test(tc, test_m0_is_local_training);
    tcase_add_test(tc, test_no_candidate_restarts_from_anchor);
    tcase_add_test(tc, test_no_better_peer_is_pure_local_step);
    tcase_add_test(tc, test_zero_distance_weight_zero);
    tcase_add_test(tc, test_affinity_accumulates);
    tcase_add_test(tc, test_bad_peers);
    tcase_add_test(tc, test_spec_peers_errors);
    tcase_add_test(tc, test_example_c_selection);
    tcase_add_test(tc, test_generated_peers_replay);
    tcase_add_test(tc, test_trace_candidates_and_anchor);
    tcase_add_test(tc, test_draws_errors);
    tcase_add_test(tc, test_equal_up_to_rounding);
    tcase_add_test(tc, test_equal_params_only_on_tau);
    tcase_add_test(tc, test_preset_pfllib);
    tcase_add_test(tc, test_ranked_own_peer);
    tcase_add_test(tc, test_val_mode_without_bn_same);
    suite_add_tcase(s, tc);
    return s;
}
