/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_io.c: spec reading and validation (ref/io/spec*.c,
 * ref/io/json.c), result writing (ref/io/result.c), files (ref/io/file.c).
 * Every invalid spec below must fail with the stated status and name the
 * JSON path of the offending value. */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "suites.h"
#include "testutil.h"

#define FMT "\"format\": \"pflref-spec/1\""
#define MODEL "\"model\": {\"kind\": \"linear\", \"d\": 2, \"loss\": \"squared\"}"
#define PROBLEM "\"problem\": {\"clients\": [{\"X\": [[1, 2], [3, 4]], \"y\": [1, 2]}," \
                " {\"X\": [[0.5, 1]], \"y\": [3]}]}"
#define ALG "\"algorithm\": {\"name\": \"fedavg\", \"hyperparameters\": {\"eta\": 0.1}}"
#define SCHED "\"schedule\": {\"kind\": \"generate\", \"rounds\": 2, \"local\": {\"epochs\": 1}}"
#define SPEC5(f, m, p, a, s) "{" f ", " m ", " p ", " a ", " s "}"
#define SPEC(m, p, a, s) SPEC5(FMT, m, p, a, s)
#define SPECX(x) "{" FMT ", " MODEL ", " PROBLEM ", " ALG ", " SCHED ", " x "}"

typedef struct {
    const char *text;
    pflref_status status;
    const char *where;
} bad_case;

static const bad_case BAD[] = {
    /* syntax and envelope */
    {"{\"format\": ", PFLREF_EINVAL, ""},
    {"{\"format\": \"pflref-spec/1\", \"format\": \"pflref-spec/1\"}", PFLREF_EINVAL, ""},
    {"[1, 2]", PFLREF_EINVAL, NULL},
    {SPECX("\"extra\": 1"), PFLREF_EINVAL, "extra"},
    {SPEC5("\"format\": \"pflref-spec/2\"", MODEL, PROBLEM, ALG, SCHED), PFLREF_EINVAL, "format"},
    {SPEC5("\"format\": 1", MODEL, PROBLEM, ALG, SCHED), PFLREF_EINVAL, "format"},
    {"{" FMT ", " PROBLEM ", " ALG ", " SCHED "}", PFLREF_EINVAL, "model"},
    {SPECX("\"name\": 3"), PFLREF_EINVAL, "name"},
    /* model */
    {SPEC("\"model\": {\"kind\": \"tree\", \"d\": 2}", PROBLEM, ALG, SCHED), PFLREF_EINVAL, "model.kind"},
    {SPEC("\"model\": {\"kind\": \"linear\", \"d\": 2}", PROBLEM, ALG, SCHED), PFLREF_EINVAL, "model.loss"},
    {SPEC("\"model\": {\"kind\": \"linear\", \"d\": 2, \"loss\": \"hinge\"}", PROBLEM, ALG, SCHED), PFLREF_EINVAL, "model.loss"},
    {SPEC("\"model\": {\"kind\": \"linear\", \"d\": 0, \"loss\": \"squared\"}", PROBLEM, ALG, SCHED), PFLREF_EINVAL, "model.d"},
    {SPEC("\"model\": {\"kind\": \"linear\", \"d\": -3, \"loss\": \"squared\"}", PROBLEM, ALG, SCHED), PFLREF_EINVAL, "model.d"},
    {SPEC("\"model\": {\"kind\": \"linear\", \"d\": 2.5, \"loss\": \"squared\"}", PROBLEM, ALG, SCHED), PFLREF_EINVAL, "model.d"},
    {SPEC("\"model\": {\"kind\": \"linear\", \"d\": 2, \"loss\": \"squared\", \"k\": 3}", PROBLEM, ALG, SCHED), PFLREF_EINVAL, "model.k"},
    {SPEC("\"model\": {\"kind\": \"softmax\", \"d\": 2, \"k\": 1}", PROBLEM, ALG, SCHED), PFLREF_EINVAL, "model.k"},
    {SPEC("\"model\": {\"kind\": \"softmax\", \"d\": 2, \"k\": 3, \"h\": 4}", PROBLEM, ALG, SCHED), PFLREF_EINVAL, "model.h"},
    {SPEC("\"model\": {\"kind\": \"mlp\", \"d\": 2, \"k\": 3}", PROBLEM, ALG, SCHED), PFLREF_EINVAL, "model.h"},
    {SPEC("\"model\": {\"kind\": \"mlp\", \"d\": 2, \"k\": 3, \"h\": 4, \"bias\": \"no\"}", PROBLEM, ALG, SCHED), PFLREF_EINVAL, "model.bias"},
    {SPEC("\"model\": {\"kind\": \"quadratic\", \"d\": 2, \"bias\": true}", PROBLEM, ALG, SCHED), PFLREF_EINVAL, "model.bias"},
    {SPEC("\"model\": {\"kind\": \"linear\", \"d\": 2, \"loss\": \"squared\", \"bias\": 1}", PROBLEM, ALG, SCHED), PFLREF_EINVAL, "model.bias"},
    {SPEC("\"model\": {\"kind\": \"linear\", \"d\": 2, \"loss\": \"squared\", \"width\": 1}", PROBLEM, ALG, SCHED), PFLREF_EINVAL, "model.width"},
    {SPEC("\"model\": {\"kind\": \"mlp\", \"d\": 100000, \"k\": 100000, \"h\": 100000}", PROBLEM, ALG, SCHED), PFLREF_ENOMEM, NULL},
    /* problem */
    {SPEC(MODEL, "\"problem\": {\"clients\": []}", ALG, SCHED), PFLREF_EINVAL, "problem.clients"},
    {SPEC(MODEL, "\"problem\": {\"clients\": [{\"X\": [[1, 2], [3]], \"y\": [1, 2]}]}", ALG, SCHED), PFLREF_EINVAL, "problem.clients[0].X[1]"},
    {SPEC(MODEL, "\"problem\": {\"clients\": [{\"X\": [[1, 2]], \"y\": [\"a\"]}]}", ALG, SCHED), PFLREF_EINVAL, "problem.clients[0].y[0]"},
    {SPEC(MODEL, "\"problem\": {\"clients\": [{\"X\": [[1, 2]], \"y\": [1, 2]}]}", ALG, SCHED), PFLREF_EINVAL, "problem.clients[0].y"},
    {SPEC(MODEL, "\"problem\": {\"clients\": [{\"X\": [[1, 2]]}]}", ALG, SCHED), PFLREF_EINVAL, "problem.clients[0].y"},
    {SPEC(MODEL, "\"problem\": {\"clients\": [{\"X\": [], \"y\": []}]}", ALG, SCHED), PFLREF_EINVAL, "problem.clients[0].X"},
    {SPEC(MODEL, "\"problem\": {\"clients\": [{\"X\": [[1, 2]], \"y\": [1], \"X_test\": [[1, 2]]}]}", ALG, SCHED), PFLREF_EINVAL, "problem.clients[0].y_test"},
    {SPEC(MODEL, "\"problem\": {\"clients\": [{\"X\": [[1, 2]], \"y\": [1], \"z\": 1}]}", ALG, SCHED), PFLREF_EINVAL, "problem.clients[0].z"},
    {SPEC(MODEL, "\"problem\": {\"clients\": [{\"X\": [[1, 1e400]], \"y\": [1]}]}", ALG, SCHED), PFLREF_EINVAL, ""},
    {SPEC(MODEL, "\"problem\": {\"clients\": [{\"X\": [[1, 2]], \"y\": [1], \"X_test\": [[1, 2]], \"y_test\": [1]},"
                 " {\"X\": [[1, 2]], \"y\": [1]}]}", ALG, SCHED), PFLREF_EINVAL, "problem.clients[1]"},
    {SPEC(MODEL, "\"problem\": {\"file\": \"no/such/problem.json\"}", ALG, SCHED), PFLREF_EIO, "problem.file"},
    {SPEC(MODEL, "\"problem\": {\"file\": \"x.json\", \"clients\": []}", ALG, SCHED), PFLREF_EINVAL, "problem"},
    {SPEC(MODEL, "\"problem\": {}", ALG, SCHED), PFLREF_EINVAL, "problem"},
    {SPEC(MODEL, "\"problem\": {\"generator\": {\"kind\": \"spiral\"}}", ALG, SCHED), PFLREF_EINVAL, "problem.generator.kind"},
    {SPEC(MODEL, "\"problem\": {\"generator\": {\"kind\": \"tilt\", \"K\": 0}}", ALG, SCHED), PFLREF_EINVAL, "problem.generator.K"},
    {SPEC(MODEL, "\"problem\": {\"generator\": {\"kind\": \"tilt\", \"alpha\": 1}}", ALG, SCHED), PFLREF_EINVAL, "problem.generator.alpha"},
    {SPEC(MODEL, "\"problem\": {\"generator\": 7}", ALG, SCHED), PFLREF_EINVAL, "problem.generator"},
    {SPEC("\"model\": {\"kind\": \"quadratic\", \"d\": 2}", "\"problem\": {\"clients\": [{\"a\": [1, 0], \"c\": [1, 2]}]}", ALG, SCHED), PFLREF_EINVAL, "problem.clients[0].a[1]"},
    {SPEC("\"model\": {\"kind\": \"quadratic\", \"d\": 2}", "\"problem\": {\"clients\": [{\"a\": [1, 2]}]}", ALG, SCHED), PFLREF_EINVAL, "problem.clients[0].c"},
    {SPEC("\"model\": {\"kind\": \"quadratic\", \"d\": 2}", "\"problem\": {\"clients\": [{\"a\": [1, 2], \"c\": [1, 2], \"n\": 0}]}", ALG, SCHED), PFLREF_EINVAL, "problem.clients[0].n"},
    {SPEC("\"model\": {\"kind\": \"softmax\", \"d\": 2, \"k\": 3}", "\"problem\": {\"clients\": [{\"X\": [[1, 2]], \"y\": [3]}]}", ALG, SCHED), PFLREF_EINVAL, "problem.clients[0].y[0]"},
    {SPEC("\"model\": {\"kind\": \"softmax\", \"d\": 2, \"k\": 3}", "\"problem\": {\"clients\": [{\"X\": [[1, 2]], \"y\": [1], \"X_test\": [[1, 2]], \"y_test\": [2.5]}]}", ALG, SCHED), PFLREF_EINVAL, "problem.clients[0].y_test[0]"},
    /* split */
    {SPECX("\"split\": {\"personal\": [\"W9\"]}"), PFLREF_EINVAL, "split.personal[0]"},
    {SPECX("\"split\": {\"personal\": \"b\"}"), PFLREF_EINVAL, "split.personal"},
    {SPECX("\"split\": {\"shared\": []}"), PFLREF_EINVAL, "split.shared"},
    /* algorithm */
    {SPEC(MODEL, PROBLEM, "\"algorithm\": {\"name\": \"fedunknown\"}", SCHED), PFLREF_EINVAL, "algorithm.name"},
    {SPEC(MODEL, PROBLEM, "\"algorithm\": {}", SCHED), PFLREF_EINVAL, "algorithm.name"},
    {SPEC(MODEL, PROBLEM, "\"algorithm\": {\"name\": \"fedavg\", \"preset\": \"official\"}", SCHED), PFLREF_EINVAL, "algorithm.preset"},
    {SPEC(MODEL, PROBLEM, "\"algorithm\": {\"name\": \"fedavg\", \"hyperparameters\": {\"lr\": 0.1}}", SCHED), PFLREF_EINVAL, "algorithm.hyperparameters.lr"},
    {SPEC(MODEL, PROBLEM, "\"algorithm\": {\"name\": \"fedavg\", \"hyperparameters\": {\"eta\": -0.1}}", SCHED), PFLREF_EINVAL, "algorithm.hyperparameters.eta"},
    {SPEC(MODEL, PROBLEM, "\"algorithm\": {\"name\": \"fedavg\", \"hyperparameters\": {\"eta\": 0}}", SCHED), PFLREF_EINVAL, "algorithm.hyperparameters.eta"},
    {SPEC(MODEL, PROBLEM, "\"algorithm\": {\"name\": \"fedavg\", \"hyperparameters\": {\"eta\": \"0.1\"}}", SCHED), PFLREF_EINVAL, "algorithm.hyperparameters.eta"},
    {SPEC(MODEL, PROBLEM, "\"algorithm\": {\"name\": \"fedavg\", \"hyperparameters\": {\"eta_ft\": 0.1}}", SCHED), PFLREF_EINVAL, "algorithm.hyperparameters.eta_ft"},
    {SPEC(MODEL, PROBLEM, "\"algorithm\": {\"name\": \"fedavg\", \"hyperparameters\": {\"fedavg.weights\": 1}}", SCHED), PFLREF_EINVAL, "algorithm.hyperparameters.fedavg.weights"},
    {SPEC(MODEL, PROBLEM, "\"algorithm\": {\"name\": \"fedavg\", \"switches\": {\"fedavg.weights\": \"median\"}}", SCHED), PFLREF_EINVAL, "algorithm.switches.fedavg.weights"},
    {SPEC(MODEL, PROBLEM, "\"algorithm\": {\"name\": \"fedavg\", \"switches\": {\"eta\": \"fast\"}}", SCHED), PFLREF_EINVAL, "algorithm.switches.eta"},
    {SPEC(MODEL, PROBLEM, "\"algorithm\": {\"name\": \"fedavg\", \"switches\": {\"finetune.scope\": \"full\"}}", SCHED), PFLREF_EINVAL, "algorithm.switches.finetune.scope"},
    {SPEC(MODEL, PROBLEM, "\"algorithm\": {\"name\": \"fedavg\", \"switches\": []}", SCHED), PFLREF_EINVAL, "algorithm.switches"},
    /* init */
    {SPECX("\"init\": {\"kind\": \"given\", \"w\": [1]}"), PFLREF_EINVAL, "init.w"},
    {SPECX("\"init\": {\"kind\": \"given\"}"), PFLREF_EINVAL, "init.w"},
    {SPECX("\"init\": {\"kind\": \"xavier\"}"), PFLREF_EINVAL, "init.kind"},
    {SPECX("\"init\": {\"kind\": \"zeros\", \"seed\": 3}"), PFLREF_EINVAL, "init.seed"},
    {SPECX("\"init\": {\"kind\": \"gaussian\", \"sd\": 0.1}"), PFLREF_EINVAL, "init.seed"},
    {SPECX("\"init\": {\"kind\": \"gaussian\", \"seed\": 0, \"sd\": 0.1}"), PFLREF_EINVAL, "init.seed"},
    {SPECX("\"init\": {\"kind\": \"uniform\", \"seed\": 2, \"scale\": -1}"), PFLREF_EINVAL, "init.scale"},
    {SPECX("\"init\": {\"kind\": \"uniform\", \"seed\": 2, \"sd\": 1}"), PFLREF_EINVAL, "init.sd"},
    /* schedule */
    {SPEC(MODEL, PROBLEM, ALG, "\"schedule\": {\"rounds\": 2}"), PFLREF_EINVAL, "schedule.kind"},
    {SPEC(MODEL, PROBLEM, ALG, "\"schedule\": {\"kind\": \"random\"}"), PFLREF_EINVAL, "schedule.kind"},
    {SPEC(MODEL, PROBLEM, ALG, "\"schedule\": []"), PFLREF_EINVAL, "schedule"},
    {SPEC(MODEL, PROBLEM, ALG, "\"schedule\": {\"kind\": \"generate\", \"rounds\": -1, \"local\": {\"epochs\": 1}}"), PFLREF_EINVAL, "schedule.rounds"},
    {SPEC(MODEL, PROBLEM, ALG, "\"schedule\": {\"kind\": \"generate\", \"rounds\": 1, \"clients_per_round\": 3, \"local\": {\"epochs\": 1}}"), PFLREF_EINVAL, "schedule.clients_per_round"},
    {SPEC(MODEL, PROBLEM, ALG, "\"schedule\": {\"kind\": \"generate\", \"rounds\": 1, \"clients_per_round\": 0, \"local\": {\"epochs\": 1}}"), PFLREF_EINVAL, "schedule.clients_per_round"},
    {SPEC(MODEL, PROBLEM, ALG, "\"schedule\": {\"kind\": \"generate\", \"rounds\": 1, \"local\": {\"epochs\": 1, \"steps\": 2}}"), PFLREF_EINVAL, "schedule.local"},
    {SPEC(MODEL, PROBLEM, ALG, "\"schedule\": {\"kind\": \"generate\", \"rounds\": 1, \"local\": {}}"), PFLREF_EINVAL, "schedule.local"},
    {SPEC(MODEL, PROBLEM, ALG, "\"schedule\": {\"kind\": \"generate\", \"rounds\": 1}"), PFLREF_EINVAL, "schedule.local"},
    {SPEC(MODEL, PROBLEM, ALG, "\"schedule\": {\"kind\": \"generate\", \"rounds\": 1, \"local\": {\"epochs\": 1}, \"sampler\": \"torch\"}"), PFLREF_EINVAL, "schedule.sampler"},
    {SPEC(MODEL, PROBLEM, ALG, "\"schedule\": {\"kind\": \"generate\", \"rounds\": 1, \"local\": {\"epochs\": 1}, \"batches\": \"random\"}"), PFLREF_EINVAL, "schedule.batches"},
    {SPEC(MODEL, PROBLEM, ALG, "\"schedule\": {\"kind\": \"generate\", \"rounds\": 1, \"local\": {\"epochs\": 1}, \"client_seed\": 0}"), PFLREF_EINVAL, "schedule.client_seed"},
    {SPEC(MODEL, PROBLEM, ALG, "\"schedule\": {\"kind\": \"generate\", \"rounds\": 1, \"local\": {\"epochs\": 1}, \"post\": {\"steps\": 1}}"), PFLREF_EINVAL, "schedule.post"},
    {SPEC(MODEL, PROBLEM, "\"algorithm\": {\"name\": \"finetune\", \"hyperparameters\": {\"eta\": 0.1, \"eta_ft\": 0.1}}", SCHED), PFLREF_EINVAL, "schedule.post"},
    {SPEC(MODEL, PROBLEM, ALG, "\"schedule\": {\"kind\": \"given\", \"rounds\": [{\"clients\": [2], \"batches\": [[[0]]]}]}"), PFLREF_EINVAL, "schedule.rounds[0].clients[0]"},
    {SPEC(MODEL, PROBLEM, ALG, "\"schedule\": {\"kind\": \"given\", \"rounds\": [{\"clients\": [0], \"batches\": []}]}"), PFLREF_EINVAL, "schedule.rounds[0].batches"},
    {SPEC(MODEL, PROBLEM, ALG, "\"schedule\": {\"kind\": \"given\", \"rounds\": [{\"clients\": [0], \"batches\": [[[]]]}]}"), PFLREF_EINVAL, "schedule.rounds[0].batches[0][0]"},
    {SPEC(MODEL, PROBLEM, ALG, "\"schedule\": {\"kind\": \"given\", \"rounds\": [{\"clients\": [0], \"batches\": [[[-1]]]}]}"), PFLREF_EINVAL, "schedule.rounds[0].batches[0][0][0]"},
    {SPEC(MODEL, PROBLEM, ALG, "\"schedule\": {\"kind\": \"given\", \"rounds\": [{\"clients\": [0], \"drawn\": [0, 1], \"batches\": [[[0]]]}]}"), PFLREF_EINVAL, "schedule.rounds[0].drawn"},
    {SPEC(MODEL, PROBLEM, ALG, "\"schedule\": {\"kind\": \"given\", \"rounds\": [{\"clients\": [0], \"batches\": [[[0]]], \"weights\": [1]}]}"), PFLREF_EINVAL, "schedule.rounds[0].weights"},
    {SPEC(MODEL, PROBLEM, ALG, "\"schedule\": {\"kind\": \"given\", \"rounds\": [{\"clients\": [0], \"selected\": [0, 1], \"batches\": [[[0]]]}]}"), PFLREF_EINVAL, "schedule.rounds[0].selected"},
    {SPEC(MODEL, PROBLEM, ALG, "\"schedule\": {\"kind\": \"given\", \"rounds\": [{\"clients\": [0], \"selected\": [1], \"batches\": [[[0]]]}]}"), PFLREF_EINVAL, "schedule.rounds[0].selected[0]"},
    {SPEC(MODEL, PROBLEM, ALG, "\"schedule\": {\"kind\": \"given\", \"rounds\": [], \"post\": []}"), PFLREF_EINVAL, "schedule.post"},
    /* output */
    {SPECX("\"output\": {\"trajectory\": \"all\"}"), PFLREF_EINVAL, "output.trajectory"},
    {SPECX("\"output\": {\"format\": \"csv\"}"), PFLREF_EINVAL, "output.format"},
};

START_TEST(test_bad_spec)
{
    const bad_case *c = &BAD[_i];
    pflref_spec *spec = (pflref_spec *)1;
    pflref_error err;
    pflref_status st = tu_parse(c->text, &spec, &err);
    ck_assert_msg(st == c->status, "case %d: status %d (%s: %s), expected %d\n%s",
                  _i, st, err.where, err.message, c->status, c->text);
    ck_assert_msg(spec == NULL, "case %d: a spec was returned on failure", _i);
    ck_assert_msg(err.message[0] != '\0', "case %d: no message", _i);
    if (c->where != NULL)
        ck_assert_msg(strstr(err.where, c->where) != NULL &&
                          (c->where[0] != '\0' ||
                           strstr(err.message, "line") != NULL),
                      "case %d: where = \"%s\" (%s), expected \"%s\"", _i,
                      err.where, err.message, c->where);
}
END_TEST

/* A given schedule whose sample index exceeds the client's data: found by
 * the schedule validation with the round, client slot and step. */
START_TEST(test_schedule_index_out_of_range)
{
    const char *text = SPEC(MODEL, PROBLEM, ALG,
        "\"schedule\": {\"kind\": \"given\", \"rounds\": [{\"clients\": [0, 1],"
        " \"batches\": [[[0, 1]], [[0], [1]]]}]}");
    pflref_spec *spec;
    pflref_error err;
    ck_assert_int_eq(tu_parse(text, &spec, &err), PFLREF_EINVAL);
    ck_assert_msg(strstr(err.where, "schedule.rounds[0]") != NULL,
                  "where = %s", err.where);
    ck_assert_msg(strstr(err.message, "1") != NULL, "%s", err.message);
}
END_TEST

/* A missing required hyperparameter is reported by the run driver. */
START_TEST(test_missing_eta)
{
    const char *text = SPEC(MODEL, PROBLEM, "\"algorithm\": {\"name\": \"fedavg\"}", SCHED);
    pflref_spec *spec;
    pflref_error err;
    ck_assert_int_eq(tu_parse(text, &spec, &err), PFLREF_OK);
    pflref_run_result *res = NULL;
    ck_assert_int_eq(pflref_run(spec->problem, spec->algorithm, &spec->hyper,
                                spec->schedule, spec->w0, NULL, &res, &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "algorithm.hyperparameters.eta");
    pflref_spec_free(spec);
}
END_TEST

/* Defaults: zeros init, all clients, gsl sampler, split-once batches,
 * round-level trajectory; the result round-trips every double exactly. */
START_TEST(test_defaults_and_roundtrip)
{
    const char *text = SPECX("\"init\": {\"kind\": \"gaussian\", \"seed\": 5, \"sd\": 0.3}");
    pflref_spec *spec;
    pflref_error err;
    ck_assert_int_eq(tu_parse(text, &spec, &err), PFLREF_OK);
    ck_assert_int_eq(spec->schedule_cfg.m, 2);
    ck_assert_int_eq(spec->schedule_cfg.sampler, PFLREF_SAMPLER_GSL);
    ck_assert_int_eq(spec->record, PFLREF_RECORD_ROUND);
    ck_assert_int_eq(spec->hyper.fedavg.weights, PFLREF_FEDAVG_WEIGHTS_SAMPLES);
    ck_assert_msg(spec->w0[0] != 0.0 && spec->w0[1] != 0.0, "w0 not drawn");
    pflref_trajectory tj;
    pflref_trajectory_init(&tj, spec->record);
    pflref_trace tr = {pflref_trajectory_emit, &tj};
    pflref_run_result *res;
    ck_assert_int_eq(pflref_run(spec->problem, spec->algorithm, &spec->hyper,
                                spec->schedule, spec->w0, &tr, &res, &err),
                     PFLREF_OK);
    pflref_build_info bi;
    pflref_build_info_get(&bi);
    char *json;
    ck_assert_int_eq(pflref_result_to_json(spec, res, &tj, &bi, &json, &err),
                     PFLREF_OK);
    json_t *root = json_loads(json, 0, NULL);
    ck_assert_ptr_nonnull(root);
    json_t *w = json_object_get(json_object_get(root, "final"), "w");
    json_t *w0 = json_object_get(root, "w0");
    for (size_t p = 0; p < 2; p++) {
        ck_assert_msg(json_real_value(json_array_get(w, p)) == res->w[p],
                      "final w[%zu] does not round-trip", p);
        ck_assert_msg(json_real_value(json_array_get(w0, p)) == spec->w0[p],
                      "w0[%zu] does not round-trip", p);
    }
    /* The schedule is written in the replayable given form. */
    json_t *sched = json_object_get(root, "schedule");
    ck_assert_str_eq(json_string_value(json_object_get(sched, "kind")), "given");
    ck_assert_int_eq(json_array_size(json_object_get(sched, "rounds")), 2);
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(root, "init"), "kind")), "gaussian");
    /* round-level trajectory: 2 rounds × (2 client_end + 1 server) */
    ck_assert_int_eq(json_array_size(json_object_get(root, "trajectory")), 6);
    /* reading a metric back */
    double *vals;
    size_t N;
    pflref_summary sum;
    ck_assert_int_eq(pflref_result_read_metric(json, strlen(json), "global",
                                               "train_loss", &vals, &N, &sum,
                                               &err), PFLREF_OK);
    ck_assert_int_eq(N, 2);
    ck_assert_msg(vals[0] == res->eval[0].train[0].loss, "train_loss[0]");
    ck_assert_msg(sum.mean == res->eval[0].train_loss.mean, "mean");
    free(vals);
    ck_assert_int_eq(pflref_result_read_metric(json, strlen(json), "local",
                                               "train_loss", &vals, &N, &sum,
                                               &err), PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "metrics.local");
    ck_assert_int_eq(pflref_result_read_metric(json, strlen(json), "global",
                                               "test_mse", &vals, &N, &sum,
                                               &err), PFLREF_EINVAL);
    ck_assert_int_eq(pflref_result_read_metric("{}", 2, "global", "test_mse",
                                               &vals, &N, &sum, &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "format");
    json_decref(root);
    free(json);
    pflref_run_result_free(res);
    pflref_trajectory_free(&tj);
    pflref_spec_free(spec);
}
END_TEST

/* A problem file is read relative to the spec's folder. */
START_TEST(test_problem_file)
{
    char *dir = tu_tmpdir();
    char path[512];
    snprintf(path, sizeof path, "%s/p.json", dir);
    ck_assert_int_eq(tu_write(path, "{\"format\": \"pflref-problem/1\", "
                                    "\"provenance\": {\"kind\": \"hand\"}, "
                                    "\"clients\": [{\"X\": [[1, 2]], \"y\": [3]}]}"), 0);
    char spath[512];
    snprintf(spath, sizeof spath, "%s/s.json", dir);
    ck_assert_int_eq(tu_write(spath, SPEC(MODEL, "\"problem\": {\"file\": \"p.json\"}", ALG, SCHED)), 0);
    pflref_spec *spec;
    pflref_error err;
    ck_assert_int_eq(pflref_spec_read_file(spath, &spec, &err), PFLREF_OK);
    ck_assert_int_eq(spec->problem->N, 1);
    ck_assert_str_eq(spec->problem_source, "file:p.json");
    pflref_spec_free(spec);
    /* a malformed problem file names the file and the path inside it */
    ck_assert_int_eq(tu_write(path, "{\"format\": \"pflref-problem/1\", "
                                    "\"clients\": [{\"X\": [[1, 2]], \"y\": [null]}]}"), 0);
    ck_assert_int_eq(pflref_spec_read_file(spath, &spec, &err), PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "p.json:clients[0].y[0]");
    ck_assert_int_eq(tu_write(path, "{\"format\": \"pflref-spec/1\", \"clients\": []}"), 0);
    ck_assert_int_eq(pflref_spec_read_file(spath, &spec, &err), PFLREF_EINVAL);
    ck_assert_int_eq(tu_write(path, "{\"format\": \"pflref-problem/1\", "
                                    "\"provenance\": 3, \"clients\": []}"), 0);
    ck_assert_int_eq(pflref_spec_read_file(spath, &spec, &err), PFLREF_EINVAL);
    ck_assert_int_eq(tu_write(path, "{\"clients\": "), 0);
    ck_assert_int_eq(pflref_spec_read_file(spath, &spec, &err), PFLREF_EINVAL);
    unlink(path);
    unlink(spath);
    ck_assert_int_eq(pflref_spec_read_file(spath, &spec, &err), PFLREF_EIO);
    ck_assert_int_eq(pflref_spec_read_file(dir, &spec, &err), PFLREF_EIO);
    rmdir(dir);
    free(dir);
}
END_TEST

/* Atomic writing leaves nothing behind when the folder does not exist. */
START_TEST(test_atomic_write)
{
    pflref_error err;
    ck_assert_int_eq(pflref_write_file_atomic("/nonexistent-dir/x.json", "{}",
                                              &err), PFLREF_EIO);
    ck_assert_str_eq(err.where, "/nonexistent-dir/x.json");
    char *dir = tu_tmpdir();
    char path[512];
    snprintf(path, sizeof path, "%s/r.json", dir);
    ck_assert_int_eq(pflref_write_file_atomic(path, "{\"a\": 1}\n", &err),
                     PFLREF_OK);
    char *back = tu_read(path);
    ck_assert_str_eq(back, "{\"a\": 1}\n");
    free(back);
    /* through a symbolic link: the file it names is replaced, the link kept */
    char link[512];
    snprintf(link, sizeof link, "%s/link.json", dir);
    ck_assert_int_eq(symlink(path, link), 0);
    ck_assert_int_eq(pflref_write_file_atomic(link, "{\"b\": 2}\n", &err),
                     PFLREF_OK);
    struct stat sb;
    ck_assert_int_eq(lstat(link, &sb), 0);
    ck_assert_msg(S_ISLNK(sb.st_mode), "the link was replaced");
    back = tu_read(path);
    ck_assert_str_eq(back, "{\"b\": 2}\n");
    free(back);
    /* a FIFO (like a device) is never renamed over */
    char fifo[512];
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    ck_assert_int_eq(pflref_write_file_atomic(fifo, "{}", &err), PFLREF_EIO);
    ck_assert_str_eq(err.where, fifo);
    ck_assert_int_eq(stat(fifo, &sb), 0);
    ck_assert_msg(S_ISFIFO(sb.st_mode), "the FIFO was replaced");
    unlink(fifo);
    unlink(link);
    unlink(path);
    rmdir(dir);
    free(dir);
}
END_TEST

/* The generators are reachable from a spec. */
START_TEST(test_generators_from_spec)
{
    const char *tilt = SPEC("\"model\": {\"kind\": \"linear\", \"d\": 12, \"loss\": \"squared\"}",
                            "\"problem\": {\"generator\": {\"kind\": \"tilt\", \"K\": 3, \"n_test\": 5}}",
                            ALG, SCHED);
    const char *dir = SPEC("\"model\": {\"kind\": \"softmax\", \"d\": 8, \"k\": 4}",
                           "\"problem\": {\"generator\": {\"kind\": \"dirichlet\", \"K\": 4, \"n_min\": 5, \"n_max\": 9}}",
                           ALG, SCHED);
    pflref_spec *spec;
    pflref_error err;
    ck_assert_int_eq(tu_parse(tilt, &spec, &err), PFLREF_OK);
    ck_assert_int_eq(spec->problem->N, 3);
    ck_assert_str_eq(spec->problem_source, "generator:tilt");
    pflref_spec_free(spec);
    ck_assert_int_eq(tu_parse(dir, &spec, &err), PFLREF_OK);
    ck_assert_int_eq(spec->problem->N, 4);
    pflref_spec_free(spec);
}
END_TEST

/* ------------------------------------------------------------------------
 * The generalised mlp model: activation, hidden_bias, regression losses
 * ------------------------------------------------------------------------ */

/* One-feature regression clients (any real y) for the regression mlp. */
#define MLP_REG_PROBLEM "\"problem\": {\"clients\": [{\"X\": [[1], [2]], \"y\": [2, 3]}," \
                        " {\"X\": [[-0.5]], \"y\": [1.25]}]}"
/* One-feature classification clients (labels 0, 1). */
#define MLP_CLS_PROBLEM "\"problem\": {\"clients\": [{\"X\": [[2], [-1]], \"y\": [1, 0]}," \
                        " {\"X\": [[0.5]], \"y\": [1]}]}"
#define MLP_SPEC(model, problem) SPEC("\"model\": {" model "}", problem, ALG, SCHED)

static const bad_case MLP_BAD[] = {
    /* activation: mlp only, relu or identity */
    {MLP_SPEC("\"kind\": \"mlp\", \"d\": 1, \"k\": 2, \"h\": 1, \"activation\": \"tanh\"", MLP_CLS_PROBLEM),
     PFLREF_EINVAL, "model.activation"},
    {MLP_SPEC("\"kind\": \"mlp\", \"d\": 1, \"k\": 2, \"h\": 1, \"activation\": 1", MLP_CLS_PROBLEM),
     PFLREF_EINVAL, "model.activation"},
    {MLP_SPEC("\"kind\": \"linear\", \"d\": 2, \"loss\": \"squared\", \"activation\": \"relu\"", PROBLEM),
     PFLREF_EINVAL, "model.activation"},
    /* hidden_bias: mlp only, a boolean */
    {MLP_SPEC("\"kind\": \"softmax\", \"d\": 2, \"k\": 4, \"hidden_bias\": true", PROBLEM),
     PFLREF_EINVAL, "model.hidden_bias"},
    {MLP_SPEC("\"kind\": \"mlp\", \"d\": 1, \"k\": 2, \"h\": 1, \"hidden_bias\": 1", MLP_CLS_PROBLEM),
     PFLREF_EINVAL, "model.hidden_bias"},
    /* the regression mlp has one output: k omitted or 1 */
    {MLP_SPEC("\"kind\": \"mlp\", \"d\": 1, \"h\": 1, \"loss\": \"half_squared\", \"k\": 2", MLP_REG_PROBLEM),
     PFLREF_EINVAL, "model.k"},
    {MLP_SPEC("\"kind\": \"mlp\", \"d\": 1, \"h\": 1, \"loss\": \"squared\", \"k\": 0", MLP_REG_PROBLEM),
     PFLREF_EINVAL, "model.k"},
    {MLP_SPEC("\"kind\": \"mlp\", \"d\": 1, \"h\": 1, \"loss\": \"squared\", \"k\": 1.0", MLP_REG_PROBLEM),
     PFLREF_EINVAL, "model.k"},
    /* the cross-entropy mlp still needs k >= 2 */
    {MLP_SPEC("\"kind\": \"mlp\", \"d\": 1, \"h\": 1", MLP_CLS_PROBLEM), PFLREF_EINVAL, "model.k"},
    {MLP_SPEC("\"kind\": \"mlp\", \"d\": 1, \"h\": 1, \"loss\": \"cross_entropy\", \"k\": 1", MLP_CLS_PROBLEM),
     PFLREF_EINVAL, "model.k"},
    {MLP_SPEC("\"kind\": \"mlp\", \"d\": 1, \"k\": 2, \"h\": 1, \"loss\": \"hinge\"", MLP_CLS_PROBLEM),
     PFLREF_EINVAL, "model.loss"},
    /* softmax keeps its one loss */
    {MLP_SPEC("\"kind\": \"softmax\", \"d\": 2, \"k\": 4, \"loss\": \"squared\"", PROBLEM),
     PFLREF_EINVAL, "model.loss"},
    /* a classifier mlp still wants class labels; a regression mlp does not */
    {MLP_SPEC("\"kind\": \"mlp\", \"d\": 1, \"k\": 2, \"h\": 1", MLP_REG_PROBLEM),
     PFLREF_EINVAL, "problem.clients[0].y[0]"},
};

START_TEST(test_mlp_bad_spec)
{
    const bad_case *c = &MLP_BAD[_i];
    pflref_spec *spec = (pflref_spec *)1;
    pflref_error err;
    pflref_status st = tu_parse(c->text, &spec, &err);
    ck_assert_msg(st == c->status, "mlp case %d: status %d (%s: %s), expected %d\n%s",
                  _i, st, err.where, err.message, c->status, c->text);
    ck_assert_msg(spec == NULL, "mlp case %d: a spec was returned on failure", _i);
    ck_assert_msg(strcmp(err.where, c->where) == 0,
                  "mlp case %d: where = \"%s\" (%s), expected \"%s\"", _i,
                  err.where, err.message, c->where);
}
END_TEST

typedef struct {
    const char *model;           /* the "model" object's members        */
    const char *problem;
    pflref_loss loss;
    size_t k;
    pflref_activation act;
    int hidden_bias, bias;
    size_t P;
    const char *blocks;          /* block names, space-separated        */
} mlp_good_case;

/* d = 1, h = 1: W1 1, b1 1, W2 k, b2 k. */
static const mlp_good_case MLP_GOOD[] = {
    /* the defaults: relu, both biases, cross-entropy */
    {"\"kind\": \"mlp\", \"d\": 1, \"k\": 2, \"h\": 1", MLP_CLS_PROBLEM,
     PFLREF_LOSS_CROSS_ENTROPY, 2, PFLREF_ACT_RELU, 1, 1, 6, "W1 b1 W2 b2"},
    /* ŷ = w·(θ·x): identity, no biases, one output */
    {"\"kind\": \"mlp\", \"d\": 1, \"h\": 1, \"loss\": \"half_squared\", \"activation\": \"identity\", "
     "\"bias\": false", MLP_REG_PROBLEM,
     PFLREF_LOSS_HALF_SQUARED, 1, PFLREF_ACT_IDENTITY, 0, 0, 2, "W1 W2"},
    /* z = W2·(θx) + b2: identity, output bias only, k = 2 */
    {"\"kind\": \"mlp\", \"d\": 1, \"k\": 2, \"h\": 1, \"activation\": \"identity\", "
     "\"hidden_bias\": false", MLP_CLS_PROBLEM,
     PFLREF_LOSS_CROSS_ENTROPY, 2, PFLREF_ACT_IDENTITY, 0, 1, 5, "W1 W2 b2"},
    /* hidden bias only, squared loss with k given as 1, relu */
    {"\"kind\": \"mlp\", \"d\": 1, \"h\": 1, \"k\": 1, \"loss\": \"squared\", \"bias\": false, "
     "\"hidden_bias\": true, \"activation\": \"relu\"", MLP_REG_PROBLEM,
     PFLREF_LOSS_SQUARED, 1, PFLREF_ACT_RELU, 1, 0, 3, "W1 b1 W2"},
};

/* Each accepted mlp spec gives the model it says, runs, and its result's
 * "model" object records activation and hidden_bias (and k = 1 for the
 * regression head). */
START_TEST(test_mlp_spec_accepted)
{
    const mlp_good_case *c = &MLP_GOOD[_i];
    char text[1024];
    snprintf(text, sizeof text, "{" FMT ", \"model\": {%s}, %s, " ALG ", " SCHED "}",
             c->model, c->problem);
    pflref_spec *spec = tu_spec(text);
    const pflref_model *m = &spec->problem->model;
    ck_assert_msg(m->kind == PFLREF_MODEL_MLP && m->loss == c->loss && m->k == c->k &&
                      m->activation == c->act && m->hidden_bias == c->hidden_bias &&
                      m->bias == c->bias && m->P == c->P,
                  "mlp case %d: loss %d k %zu act %d hidden_bias %d bias %d P %zu; want "
                  "%d %zu %d %d %d %zu", _i, (int)m->loss, m->k, (int)m->activation,
                  m->hidden_bias, m->bias, m->P, (int)c->loss, c->k, (int)c->act,
                  c->hidden_bias, c->bias, c->P);
    char names[64] = "";
    for (size_t b = 0; b < m->nblocks; b++) {
        size_t len = strlen(names);
        snprintf(names + len, sizeof names - len, "%s%s", b ? " " : "", m->blocks[b].name);
    }
    ck_assert_msg(strcmp(names, c->blocks) == 0, "mlp case %d: blocks \"%s\", want \"%s\"",
                  _i, names, c->blocks);

    pflref_run_result *res = tu_run(spec, NULL);
    pflref_build_info bi;
    pflref_build_info_get(&bi);
    char *json;
    pflref_error err;
    ck_assert_int_eq(pflref_result_to_json(spec, res, NULL, &bi, &json, &err), PFLREF_OK);
    json_t *root = json_loads(json, 0, NULL);
    ck_assert_ptr_nonnull(root);
    json_t *mo = json_object_get(root, "model");
    ck_assert_str_eq(json_string_value(json_object_get(mo, "activation")),
                     pflref_activation_name(c->act));
    ck_assert_msg(json_is_boolean(json_object_get(mo, "hidden_bias")) &&
                      json_boolean_value(json_object_get(mo, "hidden_bias")) == c->hidden_bias,
                  "mlp case %d: result model.hidden_bias", _i);
    ck_assert_msg(json_boolean_value(json_object_get(mo, "bias")) == c->bias,
                  "mlp case %d: result model.bias", _i);
    ck_assert_int_eq(json_integer_value(json_object_get(mo, "k")), (json_int_t)c->k);
    ck_assert_int_eq(json_array_size(json_object_get(mo, "blocks")), m->nblocks);
    json_decref(root);
    free(json);
    pflref_run_result_free(res);
    pflref_spec_free(spec);
}
END_TEST

/* The other models' result objects have neither field. */
START_TEST(test_mlp_fields_only_for_mlp)
{
    pflref_spec *spec = tu_spec(SPEC(MODEL, PROBLEM, ALG, SCHED));
    pflref_run_result *res = tu_run(spec, NULL);
    pflref_build_info bi;
    pflref_build_info_get(&bi);
    char *json;
    pflref_error err;
    ck_assert_int_eq(pflref_result_to_json(spec, res, NULL, &bi, &json, &err), PFLREF_OK);
    json_t *root = json_loads(json, 0, NULL);
    json_t *mo = json_object_get(root, "model");
    ck_assert_ptr_null(json_object_get(mo, "activation"));
    ck_assert_ptr_null(json_object_get(mo, "hidden_bias"));
    json_decref(root);
    free(json);
    pflref_run_result_free(res);
    pflref_spec_free(spec);
}
END_TEST

/* ---- metrics of the training set (docs/formats.md, "Results") ---------- */

/* The result of spec text (no files), parsed; its metrics object. */
static json_t *run_metrics(const char *text, json_t **root)
{
    char *json = NULL;
    pflref_error err;
    ck_assert_msg(pflref_spec_run_text(text, strlen(text), NULL, NULL, &json,
                                       &err) == PFLREF_OK,
                  "%s: %s", err.where, err.message);
    *root = json_loads(json, 0, NULL);
    ck_assert_ptr_nonnull(*root);
    free(json);
    return json_object_get(*root, "metrics");
}

/* metrics.LABEL.per_client.NAME[i], which must be a number. */
static double per_client(const json_t *metrics, const char *label,
                         const char *name, size_t i)
{
    const json_t *v = json_array_get(json_object_get(json_object_get(
        json_object_get(metrics, label), "per_client"), name), i);
    ck_assert_msg(json_is_number(v), "metrics.%s.per_client.%s[%zu] is not "
                  "a number", label, name, i);
    return json_number_value(v);
}

/* metrics.LABEL.summary.NAME.FIELD, which must be a number. */
static double summary_of(const json_t *metrics, const char *label,
                         const char *name, const char *field)
{
    const json_t *v = json_object_get(json_object_get(json_object_get(
        json_object_get(metrics, label), "summary"), name), field);
    ck_assert_msg(json_is_number(v), "metrics.%s.summary.%s.%s is not a "
                  "number", label, name, field);
    return json_number_value(v);
}

/* 1 when metrics.LABEL.per_client and .summary both have NAME. */
static int has_metric(const json_t *metrics, const char *label,
                      const char *name)
{
    const json_t *m = json_object_get(metrics, label);
    return json_object_get(json_object_get(m, "per_client"), name) != NULL &&
           json_object_get(json_object_get(m, "summary"), name) != NULL;
}

/* A softmax classifier, d = 1, k = 2, no bias, W = (1, −1) given and no
 * round run, so the logits of x are z = (x, −x): argmax class 0 for
 * x ≥ 0 (a tie at 0 goes to the lower index), class 1 for x < 0.
 *   client 0 train x = 2, −1, 0.5, y = 0, 0, 0 → predicted 0, 1, 0: 2/3
 *            test  x = 1, y = 1              → predicted 0:      0
 *   client 1 train x = −3, y = 1             → predicted 1:      1
 *            test  x = −2, 3, y = 1, 1       → predicted 1, 0:   1/2
 * train_accuracy (2/3, 1): mean 5/6, weighted by n_train = (3, 1)
 * (2 + 1)/4 = 3/4, worst (the lower) 2/3, best 1; test_accuracy (0, 1/2)
 * is not the training set's; no train_mse. */
START_TEST(test_train_accuracy_hand_worked)
{
    static const char SPEC_TEXT[] =
        "{" FMT ", \"model\": {\"kind\": \"softmax\", \"d\": 1, \"k\": 2, "
        "\"bias\": false}, \"problem\": {\"clients\": ["
        "{\"X\": [[2.0], [-1.0], [0.5]], \"y\": [0, 0, 0], "
        "\"X_test\": [[1.0]], \"y_test\": [1]}, "
        "{\"X\": [[-3.0]], \"y\": [1], \"X_test\": [[-2.0], [3.0]], "
        "\"y_test\": [1, 1]}]}, \"init\": {\"kind\": \"given\", "
        "\"w\": [1.0, -1.0]}, " ALG ", \"schedule\": {\"kind\": \"given\", "
        "\"rounds\": []}}";
    json_t *root;
    const json_t *m = run_metrics(SPEC_TEXT, &root);
    ck_assert_msg(per_client(m, "global", "train_accuracy", 0) == 2.0 / 3.0,
                  "train_accuracy[0] = %.17g, not 2/3",
                  per_client(m, "global", "train_accuracy", 0));
    ck_assert_msg(per_client(m, "global", "train_accuracy", 1) == 1.0,
                  "train_accuracy[1] is not 1");
    ck_assert_msg(per_client(m, "global", "test_accuracy", 0) == 0.0 &&
                      per_client(m, "global", "test_accuracy", 1) == 0.5,
                  "test_accuracy is not (0, 1/2)");
    ck_assert_msg(fabs(summary_of(m, "global", "train_accuracy", "mean") -
                       5.0 / 6.0) <= 1e-15,
                  "train_accuracy mean %.17g, not 5/6",
                  summary_of(m, "global", "train_accuracy", "mean"));
    ck_assert_msg(summary_of(m, "global", "train_accuracy", "weighted_mean") ==
                      0.75,
                  "train_accuracy weighted_mean is not 3/4 (weights n_train)");
    ck_assert_msg(summary_of(m, "global", "train_accuracy", "worst") ==
                          2.0 / 3.0 &&
                      summary_of(m, "global", "train_accuracy", "best") == 1.0,
                  "train_accuracy: worst must be the lower value (2/3), best 1");
    ck_assert_msg(has_metric(m, "global", "train_loss") &&
                      !has_metric(m, "global", "train_mse"),
                  "a classifier has train_loss and no train_mse");
    /* `pflref table --metric train_accuracy` reads it back */
    char *text = json_dumps(root, JSON_COMPACT);
    double *vals;
    size_t N;
    pflref_summary sum;
    pflref_error err;
    ck_assert_int_eq(pflref_result_read_metric(text, strlen(text), "global",
                                               "train_accuracy", &vals, &N,
                                               &sum, &err), PFLREF_OK);
    ck_assert_msg(N == 2 && vals[0] == 2.0 / 3.0 && sum.weighted_mean == 0.75,
                  "train_accuracy read back: N %zu, %.17g, %.17g", N, vals[0],
                  sum.weighted_mean);
    free(vals);
    free(text);
    json_decref(root);
}
END_TEST

/* A linear model, d = 1, no bias, loss half_squared (ℓ = ½ r²), w = 0.75
 * given and no round run; r = 0.75 x − y:
 *   client 0 train x = 1, 2, y = 2.5, 0.5: r = −1.75, 1 → mse
 *            (3.0625 + 1)/2 = 2.03125, loss 1.015625;
 *            test x = 4, y = 1: r = 2 → test_mse 4
 *   client 1 train x = 1, y = 0.25: r = 0.5 → mse 0.25, loss 0.125;
 *            test x = 2, y = 2: r = −0.5 → test_mse 0.25
 * train_mse = 2 · train_loss for each client (exactly: halving is exact);
 * train_mse weighted by n_train = (2, 1): (4.0625 + 0.25)/3 = 1.4375,
 * mean 1.140625, worst (the larger) 2.03125; no train_accuracy. */
START_TEST(test_train_mse_hand_worked)
{
    static const char SPEC_TEXT[] =
        "{" FMT ", \"model\": {\"kind\": \"linear\", \"d\": 1, "
        "\"bias\": false, \"loss\": \"half_squared\"}, \"problem\": "
        "{\"clients\": [{\"X\": [[1.0], [2.0]], \"y\": [2.5, 0.5], "
        "\"X_test\": [[4.0]], \"y_test\": [1.0]}, "
        "{\"X\": [[1.0]], \"y\": [0.25], \"X_test\": [[2.0]], "
        "\"y_test\": [2.0]}]}, \"init\": {\"kind\": \"given\", "
        "\"w\": [0.75]}, " ALG ", \"schedule\": {\"kind\": \"given\", "
        "\"rounds\": []}}";
    static const double MSE[] = {2.03125, 0.25}, TEST_MSE[] = {4.0, 0.25};
    json_t *root;
    const json_t *m = run_metrics(SPEC_TEXT, &root);
    for (size_t i = 0; i < 2; i++) {
        const double mse = per_client(m, "global", "train_mse", i);
        const double loss = per_client(m, "global", "train_loss", i);
        ck_assert_msg(mse == MSE[i], "train_mse[%zu] = %.17g, not %.17g", i,
                      mse, MSE[i]);
        ck_assert_msg(mse == 2.0 * loss, "train_mse[%zu] = %.17g is not "
                      "2 · train_loss = %.17g under half_squared", i, mse,
                      2.0 * loss);
        ck_assert_msg(per_client(m, "global", "test_mse", i) == TEST_MSE[i],
                      "test_mse[%zu]", i);
    }
    ck_assert_msg(summary_of(m, "global", "train_mse", "weighted_mean") ==
                      1.4375,
                  "train_mse weighted_mean %.17g, not 1.4375 (weights n_train)",
                  summary_of(m, "global", "train_mse", "weighted_mean"));
    ck_assert_msg(summary_of(m, "global", "train_mse", "mean") == 1.140625 &&
                      summary_of(m, "global", "train_mse", "worst") == 2.03125,
                  "train_mse mean or worst (the larger value)");
    ck_assert_msg(!has_metric(m, "global", "train_accuracy"),
                  "a regression model has no train_accuracy");
    /* the member order: the training set's metrics, then the test set's */
    const char *const ORDER[] = {"train_loss", "train_mse", "test_loss",
                                 "test_mse"};
    const json_t *pc = json_object_get(json_object_get(m, "global"),
                                       "per_client");
    size_t k = 0;
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)pc, key, v) {
        (void)v;
        ck_assert_msg(k < 4 && strcmp(key, ORDER[k]) == 0,
                      "per_client member %zu is %s", k, key);
        k++;
    }
    ck_assert_uint_eq(k, 4);
    json_decref(root);
}
END_TEST

static void add_mlp_tests(Suite *s)
{
    TCase *tc = tcase_create("io_mlp");
    tcase_add_loop_test(tc, test_mlp_bad_spec, 0, (int)(sizeof MLP_BAD / sizeof MLP_BAD[0]));
    tcase_add_loop_test(tc, test_mlp_spec_accepted, 0,
                        (int)(sizeof MLP_GOOD / sizeof MLP_GOOD[0]));
    tcase_add_test(tc, test_mlp_fields_only_for_mlp);
    suite_add_tcase(s, tc);
}

Suite *io_suite(void)
{
    Suite *s = suite_create("io");
    TCase *tc = tcase_create("io");
    tcase_add_loop_test(tc, test_bad_spec, 0, (int)(sizeof BAD / sizeof BAD[0]));
    tcase_add_test(tc, test_schedule_index_out_of_range);
    tcase_add_test(tc, test_missing_eta);
    tcase_add_test(tc, test_defaults_and_roundtrip);
    tcase_add_test(tc, test_problem_file);
    tcase_add_test(tc, test_atomic_write);
    tcase_add_test(tc, test_generators_from_spec);
    tcase_add_test(tc, test_train_accuracy_hand_worked);
    tcase_add_test(tc, test_train_mse_hand_worked);
    suite_add_tcase(s, tc);
    add_mlp_tests(s);
    return s;
}
