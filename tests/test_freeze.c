/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_freeze.c: pflref freeze and pflref_freeze_text (ref/io/
 * freeze.c): a vector of the reference's own output that verify reproduces,
 * whose content hashes golden/pflref_golden.py computes independently,
 * against which an independent NumPy FedAvg (docs/examples/fedavg_numpy.py)
 * passes and a tampered result fails; every random choice explicit; a
 * relative problem file re-rooted; bad options and inputs refused (exit 2),
 * naming the field, with no output left. */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "suites.h"
#include "testutil.h"

/* FedAvg on a drawn problem, drawn w⁰ and a drawn schedule: freeze must
 * make all three explicit.  η = 0.05, K = 4 clients, m = 2 per round. */
static const char FEDAVG[] =
    "{\"format\": \"pflref-spec/1\", \"name\": \"tilt fedavg\","
    " \"model\": {\"kind\": \"linear\", \"d\": 2, \"loss\": \"squared\"},"
    " \"problem\": {\"generator\": {\"kind\": \"tilt\", \"K\": 4, \"n_train\": 6,"
    "   \"n_test\": 10, \"seed\": 3}},"
    " \"init\": {\"kind\": \"uniform\", \"seed\": 9, \"scale\": 0.5},"
    " \"algorithm\": {\"name\": \"fedavg\", \"hyperparameters\": {\"eta\": 0.05}},"
    " \"schedule\": {\"kind\": \"generate\", \"rounds\": 5, \"clients_per_round\": 2,"
    "   \"batches\": \"reshuffle\", \"batch_seed\": 4, \"client_seed\": 11,"
    "   \"local\": {\"epochs\": 2, \"batch_size\": 4}}}";

static char *path_in(const char *dir, const char *name)
{
    char *p = malloc(1024);
    ck_assert_ptr_nonnull(p);
    snprintf(p, 1024, "%s/%s", dir, name);
    return p;
}

static json_t *load(const char *path)
{
    json_error_t je;
    json_t *v = json_load_file(path, 0, &je);
    ck_assert_msg(v != NULL, "%s: %s", path, je.text);
    return v;
}

/* Run a shell command; its exit status. */
static int sh(const char *cmd)
{
    int rc = system(cmd);
    ck_assert_msg(rc != -1 && WIFEXITED(rc), "could not run: %s", cmd);
    return WEXITSTATUS(rc);
}

/* Every random choice is explicit in the frozen spec, the envelope is a
 * reference vector's, and the defaults are the documented ones. */
static void assert_explicit(const json_t *v)
{
    const json_t *spec = json_object_get(v, "spec");
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(v, "provenance"), "kind")),
                     "reference");
    ck_assert_str_eq(json_string_value(json_array_get(
                         json_object_get(v, "flags"), 0)),
                     "reference-output");
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(spec, "schedule"), "kind")),
                     "given");
    ck_assert_int_eq(json_array_size(json_object_get(
                         json_object_get(spec, "schedule"), "rounds")), 5);
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(spec, "init"), "kind")),
                     "given");
    /* P = d = 2 (no bias); the tilt generator's K = 4 clients inline */
    ck_assert_int_eq(json_array_size(json_object_get(
                         json_object_get(spec, "init"), "w")), 2);
    ck_assert_int_eq(json_array_size(json_object_get(
                         json_object_get(spec, "problem"), "clients")), 4);
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(spec, "output"), "trajectory")),
                     "step");
    const json_t *tol = json_object_get(v, "tolerance");
    ck_assert(json_real_value(json_object_get(tol, "atol")) == 1e-10);
    ck_assert(json_real_value(json_object_get(tol, "rtol")) == 1e-10);
    ck_assert_msg(strncmp(json_string_value(json_object_get(v, "id")),
                          "reference/fedavg/", 17) == 0,
                  "default id %s", json_string_value(json_object_get(v, "id")));
}

/* Freeze, verify, the independent hashes, the NumPy candidate's pass and a
 * tampered candidate's failure. */
START_TEST(test_freeze_verify_check)
{
    char *dir = tu_tmpdir();
    char *spec = path_in(dir, "spec.json"), *vec = path_in(dir, "v.json");
    char *cand = path_in(dir, "cand.json"), *bad = path_in(dir, "bad.json");
    ck_assert_int_eq(tu_write(spec, FEDAVG), 0);
    char args[4096], *out, *err;
    snprintf(args, sizeof args, "freeze '%s' -o '%s'", spec, vec);
    ck_assert_msg(tu_cli(args, NULL, &err) == 0, "%s", err);
    free(err);
    json_t *v = load(vec);
    assert_explicit(v);

    snprintf(args, sizeof args, "verify '%s'", vec);
    ck_assert_int_eq(tu_cli(args, &out, NULL), 0);
    ck_assert_msg(strstr(out, "1 vectors reproduced, 0 failed") != NULL, "%s",
                  out);
    free(out);

    /* the hashes as golden/pflref_golden.py computes them, in Python */
    char *golden = tu_repo_path("golden");
    snprintf(args, sizeof args,
             "/usr/bin/python3 -c 'import json, sys; sys.path.insert(0, "
             "\"%s\"); import pflref_golden as pg; v = json.load(open(\"%s\")); "
             "sys.exit(0 if pg.vector_hashes(v) == v[\"hash\"] else 1)'",
             golden, vec);
    ck_assert_msg(sh(args) == 0, "golden/pflref_golden.py hashes differ");

    /* an independent FedAvg in NumPy passes */
    char *numpy = tu_repo_path("docs/examples/fedavg_numpy.py");
    snprintf(args, sizeof args, "/usr/bin/python3 '%s' '%s' -o '%s'", numpy,
             vec, cand);
    ck_assert_int_eq(sh(args), 0);
    snprintf(args, sizeof args, "check '%s' '%s'", vec, cand);
    ck_assert_int_eq(tu_cli(args, &out, NULL), 0);
    ck_assert_msg(strstr(out, "1 passed") != NULL, "%s", out);
    free(out);

    /* the same result with w[1] moved by 1e-8 (relative ≫ 1e-10) fails */
    json_t *c = load(cand);
    json_t *w = json_object_get(json_object_get(c, "final"), "w");
    json_array_set_new(w, 1, json_real(json_real_value(json_array_get(w, 1))
                                       + 1e-8));
    ck_assert_int_eq(json_dump_file(c, bad, JSON_REAL_PRECISION(17)), 0);
    json_decref(c);
    snprintf(args, sizeof args, "check '%s' '%s'", vec, bad);
    ck_assert_int_eq(tu_cli(args, &out, NULL), 1);
    ck_assert_msg(strstr(out, "first divergence: w (final)[1]") != NULL, "%s",
                  out);
    free(out);

    json_decref(v);
    free(golden);
    free(numpy);
    free(spec);
    free(vec);
    free(cand);
    free(bad);
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

/* The C API: the defaults with opt NULL; a stated tolerance and id; the
 * vector verifies through pflref_golden_verify. */
START_TEST(test_freeze_api)
{
    char *text = NULL;
    size_t len = 0;
    pflref_error err;
    pflref_error_clear(&err);
    ck_assert_int_eq(pflref_freeze_text(FEDAVG, strlen(FEDAVG), NULL, NULL,
                                        &text, &len, &err), PFLREF_OK);
    ck_assert_uint_eq(len, strlen(text));
    pflref_golden_report rep;
    ck_assert_int_eq(pflref_golden_verify(text, len, NULL, &rep, &err),
                     PFLREF_OK);
    ck_assert_msg(rep.mismatches == 0 && rep.numbers > 0, "%s", err.message);
    free(text);

    const pflref_freeze_options opt = {
        .atol = 2.5e-13, .rtol = 3.75e-12, .basis = "pinned for a test",
        .id = "mine/fedavg-4clients", .vector_dir = NULL,
        .trajectory = "round"};
    ck_assert_int_eq(pflref_freeze_text(FEDAVG, strlen(FEDAVG), NULL, &opt,
                                        &text, &len, &err), PFLREF_OK);
    json_t *v = json_loadb(text, len, 0, NULL);
    ck_assert_ptr_nonnull(v);
    const json_t *tol = json_object_get(v, "tolerance");
    ck_assert(json_real_value(json_object_get(tol, "atol")) == 2.5e-13);
    ck_assert(json_real_value(json_object_get(tol, "rtol")) == 3.75e-12);
    ck_assert_str_eq(json_string_value(json_object_get(tol, "basis")),
                     "pinned for a test");
    ck_assert_str_eq(json_string_value(json_object_get(v, "id")),
                     "mine/fedavg-4clients");
    /* round level: no step records, the spec says so */
    const json_t *tr = json_object_get(json_object_get(v, "expected"),
                                       "trajectory");
    ck_assert_uint_gt(json_array_size(tr), 0);
    for (size_t i = 0; i < json_array_size(tr); i++)
        ck_assert_str_ne(json_string_value(json_object_get(
                             json_array_get(tr, i), "event")),
                         "step");
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(
                         json_object_get(v, "spec"), "output"), "trajectory")),
                     "round");
    ck_assert_int_eq(pflref_golden_verify(text, len, NULL, &rep, &err),
                     PFLREF_OK);
    ck_assert(rep.mismatches == 0 && rep.numbers > 0);
    json_decref(v);
    free(text);
}
END_TEST

/* Each bad option or input: the status, the field named, no output. */
START_TEST(test_freeze_api_errors)
{
    static const struct {
        pflref_freeze_options opt;
        const char *where, *says;
    } cases[] = {
        {{.atol = 1e-12, .rtol = 0.0, .basis = NULL}, "opt.basis", "needs a basis"},
        {{.atol = 1e-12, .rtol = 1e-12, .basis = ""}, "opt.basis", "empty"},
        {{.atol = 1e-9, .rtol = 1e-12, .basis = "wide"}, "opt.atol", "1e-10"},
        {{.atol = 1e-12, .rtol = -1e-12, .basis = "negative"}, "opt.rtol", ">= 0"},
        {{.id = "Mine/Upper"}, "opt.id", "not an id"},
        {{.id = "a//b"}, "opt.id", "not an id"},
        {{.id = "trailing/"}, "opt.id", "not an id"},
        {{.trajectory = "all"}, "opt.trajectory", "not a trajectory level"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *text = (char *)"sentinel";
        size_t len = 7;
        pflref_error err;
        pflref_error_clear(&err);
        ck_assert_int_eq(pflref_freeze_text(FEDAVG, strlen(FEDAVG), NULL,
                                            &cases[i].opt, &text, &len, &err),
                         PFLREF_EINVAL);
        ck_assert_ptr_null(text);
        ck_assert_uint_eq(len, 0);
        ck_assert_str_eq(err.where, cases[i].where);
        ck_assert_msg(strstr(err.message, cases[i].says) != NULL
                      || (strcmp(cases[i].says, ">= 0") == 0 &&
                          strstr(err.message, "[0,") != NULL),
                      "case %zu: %s", i, err.message);
    }
    /* a golden vector is not a spec */
    char *vpath = tu_repo_path("golden/fedavg/worked-samples.json");
    char *vtext = tu_read(vpath), *text;
    size_t len;
    pflref_error err;
    ck_assert_int_eq(pflref_freeze_text(vtext, strlen(vtext), NULL, NULL,
                                        &text, &len, &err), PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "format");
    /* a malformed spec: its JSON path */
    const char *badspec = "{\"format\": \"pflref-spec/1\","
        " \"model\": {\"kind\": \"linear\", \"d\": 2, \"loss\": \"squared\"},"
        " \"problem\": {\"clients\": [{\"X\": [[1, 2]], \"y\": [\"x\"]}]},"
        " \"algorithm\": {\"name\": \"fedavg\", \"hyperparameters\": {\"eta\": 0.1}},"
        " \"schedule\": {\"kind\": \"generate\", \"rounds\": 1, \"local\": {\"epochs\": 1}}}";
    ck_assert_int_eq(pflref_freeze_text(badspec, strlen(badspec), NULL, NULL,
                                        &text, &len, &err), PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "problem.clients[0].y[0]");
    ck_assert_int_eq(pflref_freeze_text(NULL, 0, NULL, NULL, &text, &len,
                                        &err), PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "spec_text");
    free(vtext);
    free(vpath);
}
END_TEST

/* A spec beside its problem file, frozen into another folder: the vector
 * names the file relative to its own folder (../a/problem.json) and
 * verifies there; frozen beside it, the name stays problem.json. */
START_TEST(test_freeze_problem_file)
{
    char *dir = tu_tmpdir();
    char *a = path_in(dir, "a"), *b = path_in(dir, "b");
    ck_assert_int_eq(mkdir(a, 0700) | mkdir(b, 0700), 0);
    char *prob = path_in(a, "problem.json"), *spec = path_in(a, "spec.json");
    char *vb = path_in(b, "v.json"), *va = path_in(a, "v.json");
    ck_assert_int_eq(tu_write(prob,
        "{\"format\": \"pflref-problem/1\", \"clients\": ["
        " {\"X\": [[1.25], [2.5], [-0.75]], \"y\": [1.5, 3.25, -1.0]},"
        " {\"X\": [[0.5], [1.75]], \"y\": [-2.0, 0.25]}]}"), 0);
    ck_assert_int_eq(tu_write(spec,
        "{\"format\": \"pflref-spec/1\","
        " \"model\": {\"kind\": \"linear\", \"d\": 1, \"loss\": \"squared\"},"
        " \"problem\": {\"file\": \"problem.json\"},"
        " \"algorithm\": {\"name\": \"fedavg\", \"hyperparameters\": {\"eta\": 0.125}},"
        " \"schedule\": {\"kind\": \"generate\", \"rounds\": 2,"
        "   \"local\": {\"epochs\": 1, \"batch_size\": 2}}}"), 0);
    const char *outs[] = {vb, va};
    const char *names[] = {"../a/problem.json", "problem.json"};
    for (int k = 0; k < 2; k++) {
        char args[2048], *out, *err;
        snprintf(args, sizeof args, "freeze '%s' -o '%s'", spec, outs[k]);
        ck_assert_msg(tu_cli(args, NULL, &err) == 0, "%s", err);
        free(err);
        json_t *v = load(outs[k]);
        ck_assert_str_eq(json_string_value(json_object_get(json_object_get(
                             json_object_get(v, "spec"), "problem"), "file")),
                         names[k]);
        json_decref(v);
        snprintf(args, sizeof args, "verify '%s'", outs[k]);
        ck_assert_int_eq(tu_cli(args, &out, NULL), 0);
        free(out);
    }
    free(a); free(b); free(prob); free(spec); free(vb); free(va);
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

/* IFCA with drawn cluster models (δ, σ ≠ 0): the vector carries θ⁰ as
 * init.cluster_models with δ = σ = 0, and reproduces. */
START_TEST(test_freeze_ifca_drawn_models)
{
    const char *ifca =
        "{\"format\": \"pflref-spec/1\","
        " \"model\": {\"kind\": \"linear\", \"d\": 2, \"loss\": \"squared\"},"
        " \"problem\": {\"generator\": {\"kind\": \"tilt\", \"K\": 4, \"n_train\": 5,"
        "   \"n_test\": 0, \"seed\": 5}},"
        " \"algorithm\": {\"name\": \"ifca\", \"hyperparameters\": {\"gamma\": 0.05,"
        "   \"ifca.k\": 2, \"ifca.init_shift\": 1.5, \"ifca.init_sd\": 0.25,"
        "   \"ifca.init_seed\": 7}},"
        " \"schedule\": {\"kind\": \"generate\", \"rounds\": 2,"
        "   \"local\": {\"epochs\": 1, \"batch_size\": 0}}}";
    char *text;
    size_t len;
    pflref_error err;
    pflref_error_clear(&err);
    ck_assert_msg(pflref_freeze_text(ifca, strlen(ifca), NULL, NULL, &text,
                                     &len, &err) == PFLREF_OK,
                  "%s: %s", err.where, err.message);
    json_t *v = json_loadb(text, len, 0, NULL);
    const json_t *spec = json_object_get(v, "spec");
    const json_t *hp = json_object_get(json_object_get(spec, "algorithm"),
                                       "hyperparameters");
    ck_assert(json_real_value(json_object_get(hp, "ifca.init_shift")) == 0.0);
    ck_assert_ptr_null(json_object_get(hp, "ifca.init_seed"));
    ck_assert_int_eq(json_array_size(json_object_get(
                         json_object_get(spec, "init"), "cluster_models")), 2);
    pflref_golden_report rep;
    ck_assert_int_eq(pflref_golden_verify(text, len, NULL, &rep, &err),
                     PFLREF_OK);
    ck_assert(rep.mismatches == 0 && rep.numbers > 0);
    json_decref(v);
    free(text);
}
END_TEST

/* out := fmt with {S}, {V}, {B}, {G} replaced by s, v, b, g. */
static void expand(char *out, size_t size, const char *fmt, const char *s,
                   const char *v, const char *b, const char *g)
{
    out[0] = '\0';
    for (const char *p = fmt; *p != '\0';) {
        const char *with = strncmp(p, "{S}", 3) == 0   ? s
                           : strncmp(p, "{V}", 3) == 0 ? v
                           : strncmp(p, "{B}", 3) == 0 ? b
                           : strncmp(p, "{G}", 3) == 0 ? g
                                                       : NULL;
        if (with != NULL) {
            strncat(out, with, size - strlen(out) - 1);
            p += 3;
        } else {
            strncat(out, p++, 1 < size - strlen(out) ? 1 : 0);
        }
    }
}

/* The command line's refusals: exit 2, a message naming the argument or
 * field, and no vector written; the input untouched. */
START_TEST(test_freeze_cli_errors)
{
    char *dir = tu_tmpdir();
    char *spec = path_in(dir, "spec.json"), *vec = path_in(dir, "v.json");
    char *bad = path_in(dir, "bad.json");
    char *shipped = tu_repo_path("golden/fedavg/worked-samples.json");
    ck_assert_int_eq(tu_write(spec, FEDAVG), 0);
    ck_assert_int_eq(tu_write(bad, "{\"format\": \"pflref-spec/1\", \"model\": 3}"),
                     0);
    static const struct {
        const char *fmt, *says;
    } cases[] = {
        {"freeze '{S}'", "freeze needs -o"},
        {"freeze -o '{V}'", "freeze needs a spec"},
        {"freeze '{S}' -o '{S}'", "the vector would overwrite an input"},
        {"freeze '{B}' -o '{V}'", "model"},
        {"freeze '{S}' -o '{V}' --atol 1e-12", "--basis go together"},
        {"freeze '{S}' -o '{V}' --atol 1e-3 --rtol 0 --basis wide", "--atol"},
        {"freeze '{S}' -o '{V}' --atol x --rtol 0 --basis b", "--atol takes a number"},
        {"freeze '{S}' -o '{V}' --id 'Not An Id'", "--id"},
        {"freeze '{S}' -o '{V}' --frobnicate", "unknown option"},
        {"freeze '{S}' '{S}' -o '{V}'", "one spec"},
        {"freeze '{G}' -o '{V}'", "format: this is a golden vector"},
        {"freeze '{S}' -o '{V}' --trajectory steps", "--trajectory: \"steps\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char args[2048], *err;
        expand(args, sizeof args, cases[i].fmt, spec, vec, bad, shipped);
        ck_assert_int_eq(tu_cli(args, NULL, &err), 2);
        ck_assert_msg(strstr(err, cases[i].says) != NULL, "case %zu: %s", i,
                      err);
        ck_assert_msg(!tu_exists(vec), "case %zu left a vector", i);
        free(err);
    }
    char *kept = tu_read(spec);
    ck_assert_str_eq(kept, FEDAVG);
    free(kept);
    free(shipped);
    free(spec);
    free(vec);
    free(bad);
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

/* The independent readers take a frozen vector: golden/lint.py on a
 * user's folder (with a flags.json) and the JSON Schema
 * (docs/schema/validate.py), which both know provenance "reference". */
START_TEST(test_freeze_lint_and_schema)
{
    char *dir = tu_tmpdir();
    char *vec = path_in(dir, "v.json"), *flags = path_in(dir, "flags.json");
    char *text;
    size_t len;
    pflref_error err;
    ck_assert_int_eq(pflref_freeze_text(FEDAVG, strlen(FEDAVG), NULL, NULL,
                                        &text, &len, &err), PFLREF_OK);
    ck_assert_int_eq(tu_write(vec, text), 0);
    free(text);
    char *reg_path = tu_repo_path("golden/flags.json");
    char *reg = tu_read(reg_path);
    ck_assert_int_eq(tu_write(flags, reg), 0);
    char *lint = tu_repo_path("golden/lint.py");
    char *schema = tu_repo_path("docs/schema/validate.py");
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 '%s' '%s' >/dev/null", lint,
             dir);
    ck_assert_msg(sh(cmd) == 0, "golden/lint.py refuses a frozen vector");
    snprintf(cmd, sizeof cmd,
             "/usr/bin/python3 -W ignore '%s' '%s' >/dev/null 2>&1", schema,
             vec);
    ck_assert_msg(sh(cmd) == 0, "the schema refuses a frozen vector");
    free(reg_path);
    free(reg);
    free(lint);
    free(schema);
    free(vec);
    free(flags);
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

/* A vector of provenance "reference" must carry the flag reference-output
 * (ref/io/vector.c), as a "self" one must carry regression-only; with the
 * flag it is read. */
START_TEST(test_freeze_reference_needs_flag)
{
    char *path = tu_repo_path("golden/fedavg/worked-samples.json");
    json_t *v = json_load_file(path, 0, NULL);
    ck_assert_ptr_nonnull(v);
    json_object_set_new(v, "provenance", json_pack("{s:s}", "kind",
                                                   "reference"));
    json_object_set_new(v, "flags", json_pack("[s]", "prox-sign"));
    const char *flags[] = {"prox-sign", "reference-output"};
    const pflref_status want[] = {PFLREF_EINVAL, PFLREF_OK};
    for (int k = 0; k < 2; k++) {
        json_object_set_new(v, "flags", json_pack("[s]", flags[k]));
        char *raw = json_dumps(v, JSON_REAL_PRECISION(17));
        char *text = tu_vector_hashed(raw, 1);
        pflref_golden_report rep;
        pflref_error err;
        pflref_error_clear(&err);
        ck_assert_int_eq(pflref_golden_verify(text, strlen(text), NULL, &rep,
                                              &err), want[k]);
        if (k == 0) {
            ck_assert_str_eq(err.where, "flags");
            ck_assert_msg(strstr(err.message, "reference-output") != NULL,
                          "%s", err.message);
        }
        free(raw);
        free(text);
    }
    json_decref(v);
    free(path);
}
END_TEST

static const tu_catalogue_row CLASSES[] = {
    {"F1", "freeze: the output is an input", "test_freeze_cli_errors"},
    {"F2", "freeze: a golden vector as the spec", "test_freeze_cli_errors"},
    {"F3", "freeze: malformed spec", "test_freeze_api_errors"},
    {"F4", "freeze: a tolerance without its reason", "test_freeze_api_errors"},
    {"F5", "freeze: a tolerance bound out of range", "test_freeze_cli_errors"},
    {"F6", "freeze: an id that is not an id", "test_freeze_api_errors"},
    {"F7", "freeze: arguments missing or extra", "test_freeze_cli_errors"},
    {"F8", "vector: provenance reference without its flag",
     "test_freeze_reference_needs_flag"},
    {"F9", "freeze: an unknown trajectory level", "test_freeze_cli_errors"},
    {"F10", "freeze: arrays in files without a vector file",
     "test_freeze_files_cli_errors"},
    {"F11", "freeze: a bad --arrays or --inline-max",
     "test_freeze_files_cli_errors"},
};

/* docs/bad-inputs.md has a row "| Fn | class | ... `test` ... |" for every
 * class here, and no row beyond the last. */
START_TEST(test_freeze_catalogue)
{
    tu_assert_catalogue(CLASSES, sizeof CLASSES / sizeof CLASSES[0], 'F');
}
END_TEST

Suite *freeze_suite(void)
{
    Suite *s = suite_create("freeze");
    TCase *tc = tcase_create("freeze");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_freeze_verify_check);
    tcase_add_test(tc, test_freeze_api);
    tcase_add_test(tc, test_freeze_api_errors);
    tcase_add_test(tc, test_freeze_problem_file);
    tcase_add_test(tc, test_freeze_ifca_drawn_models);
    tcase_add_test(tc, test_freeze_cli_errors);
    tcase_add_test(tc, test_freeze_lint_and_schema);
    tcase_add_test(tc, test_freeze_reference_needs_flag);
    tcase_add_test(tc, test_freeze_catalogue);
    suite_add_tcase(s, tc);
    suite_add_tcase(s, freeze_files_tcase());   /* tests/test_freeze_files.c */
    return s;
}
