/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_freeze_files.c: golden vectors in files (issue 30; `pflref
 * freeze --arrays files`, pflref_freeze_write, ref/io/freeze_arrays.c;
 * the reading side ref/io/vector.c with ref/io/arrays.c; docs/formats.md,
 * "Golden vectors in files").  Part of the Check suite `freeze`.
 *
 * Each spec of five shipped vectors (APFL: final w, v, alpha; FedAvg, which
 * --resync re-runs; IFCA: init.cluster_models; pFedHN: init.hypernetwork;
 * lora: init.lora) is frozen inline and in files with --inline-max 2, so
 * that every array of more than two numbers goes to a file.  Then:
 *   - the files hold exactly the inline vector's numbers, each file is
 *     what np.save writes for them, byte for byte, and the manifest gives
 *     each file's size and SHA-256 (an independent reading, in NumPy and
 *     hashlib: FORMS below); the id is the same;
 *   - `verify` reproduces both, with the same count of numbers, and `run`
 *     of either writes the same result;
 *   - a passing and a failing candidate get the same exit status and the
 *     same `check --json` report from both (file names aside), with
 *     --resync too where the algorithm allows it, and the same diagnosis;
 *   - golden/lint.py and the JSON Schema take the vector in files.
 * Then the API's options, the command line's refusals (F10, F11 of
 * docs/bad-inputs.md), a failure half-way that leaves nothing, and the
 * .npy writer against np.save for shapes of every digit count.
 */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "io/npy_write.h"
#include "suites.h"
#include "testutil.h"

#define APFL "golden/apfl/worked-linear-adaptive-decay.json"

/* The specs frozen in both forms. */
static const char *const VECTORS[] = {
    APFL,
    "golden/fedavg/worked-lr-exponential.json",
    "golden/ifca/worked-given-models-linear.json",
    "golden/pfedhn/worked-linear-bias.json",
    "golden/lora/worked-hand-lora.json",
};

/* An independent reading of the two forms (argv: the folder, the inline
 * vector, the vector in files): the vector in files with every reference
 * and range replaced by NumPy's reading of its file is the inline vector
 * (hash, manifest and trajectory_values aside); every listed file has the
 * listed size and SHA-256 and is what np.save writes for its array; every
 * file of STEM.arrays/ is listed. */
static const char FORMS[] =
    "import hashlib, io, json, os, sys\n"
    "import numpy as np\n"
    "d, a, b = sys.argv[1:4]\n"
    "va = json.load(open(os.path.join(d, a)))\n"
    "vb = json.load(open(os.path.join(d, b)))\n"
    "arr = lambda ref: np.load(os.path.join(d, ref))\n"
    "listed = set()\n"
    "for e in vb['array_files']:\n"
    "    raw = open(os.path.join(d, e['path']), 'rb').read()\n"
    "    assert len(raw) == e['bytes'], e\n"
    "    assert hashlib.sha256(raw).hexdigest() == e['sha256'], e\n"
    "    buf = io.BytesIO(); np.save(buf, arr(e['path']))\n"
    "    assert buf.getvalue() == raw, e['path'] + ': not what np.save writes'\n"
    "    listed.add(e['path'])\n"
    "stem = b[:-5] + '.arrays'\n"
    "assert listed == {stem + '/' + f for f in os.listdir(os.path.join(d, stem))}\n"
    "init = vb['spec']['init']\n"
    "for o in (init, init.get('hypernetwork', {}), vb['expected']['final']):\n"
    "    for k, v in list(o.items()):\n"
    "        if isinstance(v, str) and v.endswith('.npy'):\n"
    "            o[k] = arr(v).tolist()\n"
    "values = arr(vb.pop('trajectory_values')).tolist()\n"
    "for r in vb['expected']['trajectory']:\n"
    "    if isinstance(r['value'], dict):\n"
    "        o, c = r['value']['offset'], r['value']['count']\n"
    "        r['value'] = values[o:o + c]\n"
    "for v in (va, vb):\n"
    "    v.pop('hash'); v.pop('array_files', None)\n"
    "sys.exit(0 if va == vb else 3)\n";

/* A shell command's exit status. */
static int sh(const char *cmd)
{
    const int rc = system(cmd);
    ck_assert_msg(rc != -1 && WIFEXITED(rc), "could not run: %s", cmd);
    return WEXITSTATUS(rc);
}

/* A fresh folder with s.json, the spec of the shipped vector `rel`. */
static char *spec_folder(const char *rel)
{
    char *dir = tu_tmpdir(), *vp = tu_repo_path(rel);
    json_t *vec = json_load_file(vp, 0, NULL);
    ck_assert_ptr_nonnull(vec);
    tu_json_save_in(dir, "s.json", json_object_get(vec, "spec"));
    json_decref(vec);
    free(vp);
    return dir;
}

/* `CMD $D/a.json $D/r.json OPTS` and the same with b.json: one exit
 * status, one output (for check --json, the report without file names);
 * returns the status. */
static int same_verdict(const char *dir, const char *cmd, const char *opts)
{
    char fa[512], fb[512], *o1, *o2, *e1, *e2;
    snprintf(fa, sizeof fa, "%s $D/a.json $D/r.json %s", cmd, opts);
    snprintf(fb, sizeof fb, "%s $D/b.json $D/r.json %s", cmd, opts);
    const int rc1 = tu_cli_in(dir, fa, &o1, &e1), rc2 = tu_cli_in(dir, fb, &o2, &e2);
    ck_assert_msg(rc1 == rc2, "%s %s: exit %d inline, %d in files (%s)", cmd,
                  opts, rc1, rc2, e2);
    ck_assert_msg(rc1 <= 1, "%s %s: exit %d: %s", cmd, opts, rc1, e1);
    const int json = strstr(opts, "--json") != NULL &&
                     strcmp(cmd, "check") == 0;
    char *r1 = json ? tu_report_without_paths(o1) : strdup(o1);
    char *r2 = json ? tu_report_without_paths(o2) : strdup(o2);
    ck_assert_msg(strcmp(r1, r2) == 0, "%s %s: the outputs differ:\ninline: "
                  "%s\nfiles:  %s", cmd, opts, r1, r2);
    free(r1);
    free(r2);
    free(o1);
    free(o2);
    free(e1);
    free(e2);
    return rc1;
}

/* The two forms of one freeze: the same numbers, the same verdicts. */
START_TEST(test_freeze_files_roundtrip)
{
    const char *rel = VECTORS[_i];
    char *dir = spec_folder(rel), *err = NULL, *o1, *o2;
    ck_assert_int_eq(tu_cli_in(dir, "freeze $D/s.json -o $D/a.json", NULL,
                            NULL), 0);
    ck_assert_msg(tu_cli_in(dir, "freeze $D/s.json -o $D/b.json --arrays files "
                              "--inline-max 2", NULL, &err) == 0,
                  "%s: %s", rel, err);
    ck_assert_msg(strstr(err, "froze") != NULL, "%s", err);
    free(err);
    json_t *va = tu_json_load_in(dir, "a.json"), *vb = tu_json_load_in(dir, "b.json");
    ck_assert_str_eq(json_string_value(json_object_get(va, "id")),
                     json_string_value(json_object_get(vb, "id")));
    ck_assert_ptr_null(json_object_get(va, "array_files"));
    ck_assert_uint_ge(json_array_size(json_object_get(vb, "array_files")), 2);
    ck_assert_str_eq(json_string_value(json_object_get(vb,
                                                       "trajectory_values")),
                     "b.arrays/trajectory.npy");
    ck_assert_ptr_nonnull(json_object_get(json_object_get(vb, "hash"),
                                          "array_files"));
    json_decref(va);
    json_decref(vb);
    /* the numbers and the files, read independently */
    char *py = tu_join(dir, "forms.py"), cmd[4096];
    ck_assert_int_eq(tu_write(py, FORMS), 0);
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 '%s' '%s' a.json b.json",
             py, dir);
    ck_assert_msg(sh(cmd) == 0, "%s: the forms hold other numbers", rel);
    unlink(py);
    free(py);
    /* verify: both reproduced, the same numbers compared */
    ck_assert_int_eq(tu_cli_in(dir, "verify $D/a.json", &o1, NULL), 0);
    ck_assert_int_eq(tu_cli_in(dir, "verify $D/b.json", &o2, NULL), 0);
    ck_assert_str_eq(o1, o2);
    free(o1);
    free(o2);
    /* run VECTOR: one result from both forms, byte for byte but for the
     * files the files form's init arrays were read from (init.data_files,
     * in its result only); it is a passing candidate, then (perturbed) a
     * failing one */
    ck_assert_int_eq(tu_cli_in(dir, "run $D/a.json -o $D/r.json", NULL, NULL),
                     0);
    ck_assert_int_eq(tu_cli_in(dir, "run $D/b.json -o $D/rb.json", NULL, NULL),
                     0);
    char *ra = tu_join(dir, "r.json"), *rb = tu_join(dir, "rb.json");
    char *ta = tu_read(ra), *tb = tu_read(rb);
    json_t *ja = json_loads(ta, 0, NULL), *jb = json_loads(tb, 0, NULL);
    ck_assert_ptr_nonnull(ja);
    ck_assert_ptr_nonnull(jb);
    json_t *ib = json_object_get(jb, "init");
    ck_assert_msg(json_object_get(json_object_get(ja, "init"),
                                  "data_files") == NULL,
                  "%s: the inline vector's run names init files", rel);
    if (json_object_get(ib, "data_files") != NULL) {
        json_object_del(ib, "data_files");
        char *inlined = json_dumps(jb, JSON_COMPACT | JSON_PRESERVE_ORDER |
                                           JSON_REAL_PRECISION(17));
        char *want = json_dumps(ja, JSON_COMPACT | JSON_PRESERVE_ORDER |
                                        JSON_REAL_PRECISION(17));
        ck_assert_msg(strcmp(inlined, want) == 0,
                      "%s: run VECTOR differs by form", rel);
        free(inlined);
        free(want);
    } else {
        ck_assert_msg(strcmp(ta, tb) == 0, "%s: run VECTOR differs by form",
                      rel);
    }
    json_decref(ja);
    json_decref(jb);
    free(ta);
    free(tb);
    free(ra);
    free(rb);
    const int resync = strstr(rel, "fedavg") != NULL;
    for (int failing = 0; failing < 2; failing++) {
        if (failing)
            tu_result_perturb(dir, "r.json");
        ck_assert_int_eq(same_verdict(dir, "check", "--json"), failing);
        if (resync)
            ck_assert_int_eq(same_verdict(dir, "check", "--json --resync"),
                             failing);
    }
    if (strcmp(rel, APFL) == 0)
        same_verdict(dir, "diagnose", "--json --budget 20");
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

/* The independent readers take a vector in files: golden/lint.py on the
 * folder (with a flags.json; it checks the files against the manifest,
 * and refuses one that changed) and the JSON Schema. */
START_TEST(test_freeze_files_lint_and_schema)
{
    char *dir = spec_folder(APFL);
    ck_assert_int_eq(tu_cli_in(dir, "freeze $D/s.json -o $D/v.json --arrays "
                                 "files --inline-max 0", NULL, NULL), 0);
    char *reg_path = tu_repo_path("golden/flags.json");
    char *reg = tu_read(reg_path), *flags = tu_join(dir, "flags.json");
    ck_assert_int_eq(tu_write(flags, reg), 0);
    char *lint = tu_repo_path("golden/lint.py");
    char *schema = tu_repo_path("docs/schema/validate.py"), cmd[4096];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 '%s' '%s' >/dev/null 2>&1",
             lint, dir);
    ck_assert_msg(sh(cmd) == 0, "golden/lint.py refuses a vector in files");
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 -W ignore '%s' '%s/v.json' "
             ">/dev/null 2>&1", schema, dir);
    ck_assert_msg(sh(cmd) == 0, "the schema refuses a vector in files");
    /* a file changed: lint names it */
    char *f = tu_join(dir, "v.arrays/final.w.npy"), *text = tu_read(f);
    FILE *fp = fopen(f, "r+b");
    ck_assert_ptr_nonnull(fp);
    ck_assert_int_eq(fseek(fp, 128, SEEK_SET), 0);
    ck_assert_int_ne(fputc(0x5a, fp), EOF);
    ck_assert_int_eq(fclose(fp), 0);
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 '%s' '%s' 2>&1 | grep -q "
             "'v.arrays/final.w.npy is not the file listed'", lint, dir);
    ck_assert_msg(sh(cmd) == 0, "golden/lint.py misses a changed file");
    free(text);
    free(f);
    free(reg_path);
    free(reg);
    free(flags);
    free(lint);
    free(schema);
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

/* Freezing again over a vector in files leaves no file of the earlier
 * vector that the new one does not list (docs/formats.md, "Golden vectors
 * in files"), keeps a file changed since, and removes the emptied folder
 * when the new vector is inline. */
START_TEST(test_freeze_files_refreeze_removes_stale)
{
    char *dir = spec_folder(APFL);
    char *alpha = tu_join(dir, "v.arrays/final.alpha.npy");
    char *traj = tu_join(dir, "v.arrays/trajectory.npy");
    char *w0 = tu_join(dir, "v.arrays/spec.init.w.npy");
    char *folder = tu_join(dir, "v.arrays");
    ck_assert_int_eq(tu_cli_in(dir, "freeze $D/s.json -o $D/v.json --arrays "
                                 "files --inline-max 0", NULL, NULL), 0);
    ck_assert(tu_exists(alpha) && tu_exists(traj) && tu_exists(w0));
    /* a limit at α's N numbers (one per client), below the trajectory's:
     * α inline */
    json_t *spec = tu_json_load_in(dir, "s.json");
    const size_t N = json_array_size(json_object_get(
        json_object_get(spec, "problem"), "clients"));
    json_decref(spec);
    ck_assert_uint_ge(N, 2);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "freeze $D/s.json -o $D/v.json --arrays files "
             "--inline-max %zu", N);
    ck_assert_int_eq(tu_cli_in(dir, cmd, NULL, NULL), 0);
    ck_assert_msg(!tu_exists(alpha), "final.alpha.npy left behind");
    ck_assert(tu_exists(traj));
    ck_assert_int_eq(tu_cli_in(dir, "verify $D/v.json", NULL, NULL), 0);
    /* a file changed since it was written is not the vector's: kept */
    FILE *fp = fopen(traj, "ab");
    ck_assert_ptr_nonnull(fp);
    ck_assert_int_ne(fputc(0x5a, fp), EOF);
    ck_assert_int_eq(fclose(fp), 0);
    ck_assert_int_eq(tu_cli_in(dir, "freeze $D/s.json -o $D/v.json", NULL,
                               NULL), 0);
    ck_assert(tu_exists(traj) && !tu_exists(w0));
    json_t *inl = tu_json_load_in(dir, "v.json");
    ck_assert_ptr_null(json_object_get(inl, "array_files"));
    json_decref(inl);
    ck_assert(tu_exists(folder));   /* the changed file is still in it */
    /* files form, then inline: the folder goes too */
    ck_assert_int_eq(unlink(traj), 0);
    ck_assert_int_eq(tu_cli_in(dir, "freeze $D/s.json -o $D/v.json --arrays "
                                 "files --inline-max 0", NULL, NULL), 0);
    ck_assert_int_eq(tu_cli_in(dir, "freeze $D/s.json -o $D/v.json", NULL,
                               NULL), 0);
    ck_assert_msg(!tu_exists(folder), "v.arrays/ left behind");
    free(alpha);
    free(traj);
    free(w0);
    free(folder);
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

/* A spec small enough to run in a moment: FedAvg, K = 3 clients in one
 * dimension, w⁰ given. */
static const char SMALL[] =
    "{\"format\": \"pflref-spec/1\","
    " \"model\": {\"kind\": \"linear\", \"d\": 1, \"loss\": \"squared\"},"
    " \"problem\": {\"clients\": [{\"X\": [[1.25], [2.5]], \"y\": [1.5, 3.25]},"
    "   {\"X\": [[0.5]], \"y\": [-2.0]}, {\"X\": [[1.75], [-0.5]], \"y\": [0.25, 1.0]}]},"
    " \"init\": {\"kind\": \"given\", \"w\": [0.375]},"
    " \"algorithm\": {\"name\": \"fedavg\", \"hyperparameters\": {\"eta\": 0.125}},"
    " \"schedule\": {\"kind\": \"generate\", \"rounds\": 2,"
    "   \"local\": {\"epochs\": 1, \"batch_size\": 2}}}";

/* The C API: the files form only through pflref_freeze_write; arrays
 * other than inline and files refused; pflref_freeze_write inline, or in
 * files with nothing above inline_max, writes freeze_text's vector. */
START_TEST(test_freeze_files_api)
{
    char *dir = tu_tmpdir(), *v = tu_join(dir, "v.json");
    char *text = (char *)"sentinel";
    size_t len = 3;
    pflref_error err;
    pflref_freeze_options opt = {.arrays = "files", .inline_max = 0};
    ck_assert_int_eq(pflref_freeze_text(SMALL, strlen(SMALL), NULL, &opt,
                                        &text, &len, &err), PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "opt.arrays");
    ck_assert_ptr_null(text);
    opt.arrays = "npz";
    ck_assert_int_eq(pflref_freeze_write(SMALL, strlen(SMALL), NULL, &opt, v,
                                         &len, &err), PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "opt.arrays");
    ck_assert_msg(strstr(err.message, "known: inline, files") != NULL, "%s",
                  err.message);
    ck_assert_int_eq(pflref_freeze_write(SMALL, strlen(SMALL), NULL, &opt,
                                         NULL, &len, &err), PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "vector_path");
    ck_assert_int_eq(tu_entries(dir), 0);
    /* the inline text, as freeze_text gives it for this folder */
    const pflref_freeze_options in_dir = {.vector_dir = dir};
    ck_assert_int_eq(pflref_freeze_text(SMALL, strlen(SMALL), NULL, &in_dir,
                                         &text, &len, &err), PFLREF_OK);
    const pflref_freeze_options forms[] = {
        {.arrays = NULL}, {.arrays = "inline"},
        {.arrays = "files", .inline_max = 1000000}};
    for (size_t k = 0; k < sizeof forms / sizeof forms[0]; k++) {
        size_t wlen = 0;
        ck_assert_int_eq(pflref_freeze_write(SMALL, strlen(SMALL), NULL,
                                             &forms[k], v, &wlen, &err),
                         PFLREF_OK);
        char *got = tu_read(v);
        ck_assert_msg(strcmp(got, text) == 0 && wlen == len,
                      "form %zu: another vector than freeze_text's", k);
        ck_assert_int_eq(tu_entries(dir), 1);   /* no v.arrays/ */
        free(got);
    }
    /* every array in files: the w⁰ of one number too */
    opt = (pflref_freeze_options){.arrays = "files", .inline_max = 0};
    ck_assert_int_eq(pflref_freeze_write(SMALL, strlen(SMALL), NULL, &opt, v,
                                         NULL, &err), PFLREF_OK);
    char *w0 = tu_join(dir, "v.arrays/spec.init.w.npy");
    ck_assert_msg(tu_exists(w0), "init.w of one number not in a file");
    pflref_golden_report rep;
    char *vt = tu_read(v);
    ck_assert_int_eq(pflref_golden_verify(vt, strlen(vt), dir, &rep, &err),
                     PFLREF_OK);
    ck_assert(rep.mismatches == 0 && rep.numbers > 0);
    /* resolved from the vector's folder, not the current one (the
     * manifest's trajectory_values is read first) */
    ck_assert_int_eq(pflref_golden_verify(vt, strlen(vt), NULL, &rep, &err),
                     PFLREF_EIO);
    ck_assert_str_eq(err.where, "trajectory_values");
    free(vt);
    free(w0);
    free(text);
    free(v);
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

/* The command line's refusals of the files form (F10, F11): exit 2, the
 * option named, nothing written. */
START_TEST(test_freeze_files_cli_errors)
{
    char *dir = tu_tmpdir(), *s = tu_join(dir, "s.json");
    ck_assert_int_eq(tu_write(s, SMALL), 0);
    static const struct {
        const char *args, *says;
    } cases[] = {
        {"freeze $D/s.json -o - --arrays files", "--arrays files writes .npy "
                                                 "files beside the vector"},
        {"freeze $D/s.json -o /dev/stdout --arrays files", "not standard "
                                                          "output"},
        {"freeze $D/s.json -o $D/v.json --arrays npz", "--arrays is inline "
                                                       "or files: npz"},
        {"freeze $D/s.json -o $D/v.json --arrays files --inline-max -1",
         "--inline-max takes an integer >= 0"},
        {"freeze $D/s.json -o $D/v.json --arrays files --inline-max 2k",
         "--inline-max takes an integer >= 0"},
        {"freeze $D/s.json -o $D/v.json --inline-max 4",
         "--inline-max goes with --arrays files"},
        {"freeze $D/s.json -o $D/v.json --arrays", "the option needs a "
                                                   "value"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *out, *err;
        ck_assert_int_eq(tu_cli_in(dir, cases[i].args, &out, &err), 2);
        ck_assert_msg(strstr(err, cases[i].says) != NULL, "case %zu: %s", i,
                      err);
        ck_assert_msg(out[0] == '\0', "case %zu wrote to stdout", i);
        ck_assert_int_eq(tu_entries(dir), 1);
        free(out);
        free(err);
    }
    free(s);
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

/* A failure after some files were written removes them and the folder it
 * made, and leaves the vector that was there: STEM.arrays a regular file;
 * final.v.npy a folder, which the writer refuses after spec.init.w.npy,
 * trajectory.npy and final.w.npy are written. */
START_TEST(test_freeze_files_failure_leaves_nothing)
{
    char *dir = spec_folder(APFL), *err = NULL;
    char *v = tu_join(dir, "v.json"), *arrays = tu_join(dir, "v.arrays");
    ck_assert_int_eq(tu_write(v, "the vector before\n"), 0);
    ck_assert_int_eq(tu_write(arrays, "not a folder\n"), 0);
    ck_assert_int_eq(tu_cli_in(dir, "freeze $D/s.json -o $D/v.json --arrays "
                                 "files --inline-max 2", NULL, &err), 2);
    ck_assert_msg(strstr(err, "--arrays") != NULL &&
                      strstr(err, "exists and is not a folder") != NULL,
                  "%s", err);
    free(err);
    char *kept = tu_read(v);
    ck_assert_str_eq(kept, "the vector before\n");
    free(kept);
    unlink(arrays);
    /* the folder is made by freeze, final.v.npy taken by a folder */
    ck_assert_int_eq(mkdir(arrays, 0755), 0);
    char *blocker = tu_join(arrays, "final.v.npy");
    ck_assert_int_eq(mkdir(blocker, 0755), 0);
    size_t before_len, after_len;
    char *before = tu_tree(dir, &before_len);
    ck_assert_int_eq(tu_cli_in(dir, "freeze $D/s.json -o $D/v.json --arrays "
                                 "files --inline-max 2", NULL, &err), 2);
    ck_assert_msg(strstr(err, "final.v.npy") != NULL &&
                      strstr(err, "a folder") != NULL, "%s", err);
    char *after = tu_tree(dir, &after_len);
    ck_assert_msg(before_len == after_len &&
                      memcmp(before, after, before_len) == 0,
                  "a failed freeze left something: %s", err);
    free(err);
    free(before);
    free(after);
    /* the same with no folder before: the folder made is removed too */
    ck_assert_int_eq(rmdir(blocker), 0);
    ck_assert_int_eq(rmdir(arrays), 0);
    ck_assert_int_eq(chmod(dir, 0555), 0);   /* the folder cannot be made */
    const int rc = tu_cli_in(dir, "freeze $D/s.json -o $D/w.json --arrays files "
                               "--inline-max 2", NULL, &err);
    ck_assert_int_eq(chmod(dir, 0755), 0);
    if (geteuid() != 0) {       /* root writes a read-only folder anyway */
        ck_assert_int_eq(rc, 2);
        ck_assert_msg(strstr(err, "--arrays") != NULL, "%s", err);
    }
    free(err);
    free(blocker);
    free(arrays);
    free(v);
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

/* pflref_npy_write_f8 writes what np.save writes (shapes with first
 * dimensions of 1 to 6 digits, 1-D and 2-D), reports the file's SHA-256
 * and size, and refuses rows = 0 and NULL arguments. */
START_TEST(test_npy_write_like_numpy)
{
    static const size_t shapes[][2] = {{1, 0},  {3, 0},   {7, 0},
                                       {1, 1},  {2, 5},   {12, 3},
                                       {123, 7}, {1000, 2}, {4, 0},
                                       {100000, 0}, {3, 1234}};
    char *dir = tu_tmpdir(), cmd[8192];
    size_t used = 0;
    used += (size_t)snprintf(cmd, sizeof cmd,
                             "cd '%s' && /usr/bin/python3 -c '"
                             "import hashlib, io, sys\nimport numpy as np\n"
                             "for a in sys.argv[1:]:\n"
                             "    f, shape, sha, n = a.split(\"/\")\n"
                             "    raw = open(f, \"rb\").read()\n"
                             "    x = np.load(f); b = io.BytesIO()\n"
                             "    np.save(b, x)\n"
                             "    want = np.arange(x.size) * 0.375 - 2.5\n"
                             "    assert b.getvalue() == raw, f\n"
                             "    assert str(x.shape) == shape, (f, x.shape)\n"
                             "    assert (x.ravel() == want).all(), f\n"
                             "    assert hashlib.sha256(raw).hexdigest() == sha, f\n"
                             "    assert len(raw) == int(n), f\n"
                             "'", dir);
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        const size_t rows = shapes[k][0], cols = shapes[k][1];
        const size_t n = rows * (cols ? cols : 1);
        double *x = malloc(n * sizeof *x);
        ck_assert_ptr_nonnull(x);
        for (size_t i = 0; i < n; i++)
            x[i] = (double)i * 0.375 - 2.5;
        char name[64], path[1024], sha[65], shape[64];
        unsigned long long bytes;
        snprintf(name, sizeof name, "a%zu.npy", k);
        snprintf(path, sizeof path, "%s/%s", dir, name);
        pflref_error err;
        ck_assert_int_eq(pflref_npy_write_f8(path, x, rows, cols, sha,
                                             &bytes, &err), PFLREF_OK);
        free(x);
        if (cols == 0)
            snprintf(shape, sizeof shape, "(%zu,)", rows);
        else
            snprintf(shape, sizeof shape, "(%zu, %zu)", rows, cols);
        used += (size_t)snprintf(cmd + used, sizeof cmd - used,
                                 " '%s/%s/%s/%llu'", name, shape, sha, bytes);
        ck_assert_uint_lt(used, sizeof cmd);
    }
    ck_assert_msg(sh(cmd) == 0, "a file is not what np.save writes");
    const double one = 1.5;
    pflref_error err;
    char *p = tu_join(dir, "z.npy");
    ck_assert_int_eq(pflref_npy_write_f8(p, &one, 0, 0, NULL, NULL, &err),
                     PFLREF_EINVAL);
    ck_assert_int_eq(pflref_npy_write_f8(p, NULL, 1, 0, NULL, NULL, &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "data");
    ck_assert_int_eq(pflref_npy_write_f8(NULL, &one, 1, 0, NULL, NULL, &err),
                     PFLREF_EINVAL);
    ck_assert(!tu_exists(p));
    free(p);
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

TCase *freeze_files_tcase(void)
{
    TCase *tc = tcase_create("files");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, test_freeze_files_roundtrip, 0,
                        sizeof VECTORS / sizeof VECTORS[0]);
    tcase_add_test(tc, test_freeze_files_lint_and_schema);
    tcase_add_test(tc, test_freeze_files_refreeze_removes_stale);
    tcase_add_test(tc, test_freeze_files_api);
    tcase_add_test(tc, test_freeze_files_cli_errors);
    tcase_add_test(tc, test_freeze_files_failure_leaves_nothing);
    tcase_add_test(tc, test_npy_write_like_numpy);
    return tc;
}
