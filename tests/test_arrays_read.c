/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_arrays_read.c: the reading side of arrays in files (issue 30;
 * ref/io/arrays.c, ref/io/records.c, ref/io/spec_hyper.c,
 * ref/io/result_read.c; docs/formats.md, "Arrays in files"): a spec's
 * init arrays, a candidate's final state, w0, theta0 and hypernetwork, its
 * ranged trajectory values and its "array_files" manifest; freeze of a
 * spec that names files; and the bad inputs R1-R27 of docs/bad-inputs.md
 * (R26, R27: a golden vector's references without its manifest; the
 * files form of vectors itself is tests/test_freeze_files.c).
 *
 * A candidate in the files form is made here from the inline one that
 * `pflref run VECTOR` writes: every array of numbers goes into its own
 * '<f8' .npy file (tests/test_npy.c's writer, the bytes np.save writes),
 * every trajectory value into one trajectory.npy as a range, and the
 * manifest lists each file with its SHA-256 (ref/io/sha256.c, itself
 * checked against FIPS 180-4's vectors in tests/test_golden.c) and size.
 * The two forms must give the same verdict and the same report, bit for
 * bit (`check --json` text, paths aside).
 */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>
#include <zip.h>
#include "io/sha256.h"
#include "pflref.h"
#include "suites.h"
#include "testutil.h"
#include "test_npy.h"

/* The vector of the bad-input rows: APFL, P = 3, N = 3, with final w, v
 * and alpha, w0 and 54 trajectory records of 142 numbers. */
#define APFL "golden/apfl/worked-linear-adaptive-decay.json"

/* ---- small helpers -------------------------------------------------- */

static char *in_dir(const char *dir, const char *name)
{
    char *p = malloc(1024);
    ck_assert_ptr_nonnull(p);
    snprintf(p, 1024, "%s/%s", dir, name);
    return p;
}

/* The SHA-256 and size of the file at path. */
static void digest_of(const char *path, char hex[65], long long *bytes)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot read %s", path);
    fseek(f, 0, SEEK_END);
    const long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc(n > 0 ? (size_t)n : 1);
    ck_assert_ptr_nonnull(b);
    ck_assert_uint_eq(fread(b, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    pflref_sha256_hex(b, (size_t)n, hex);
    free(b);
    *bytes = n;
}

/* The numbers of a JSON vector, or of a matrix of equal rows, flattened
 * (malloc'd); *rows, *cols (0 for a vector). */
static double *numbers_of(const json_t *v, size_t *rows, size_t *cols)
{
    *rows = json_array_size(v);
    const json_t *r0 = json_array_get(v, 0);
    *cols = json_is_array(r0) ? json_array_size(r0) : 0;
    const size_t n = *rows * (*cols ? *cols : 1);
    double *x = malloc((n ? n : 1) * sizeof *x);
    ck_assert_ptr_nonnull(x);
    for (size_t i = 0; i < *rows; i++) {
        const json_t *row = json_array_get(v, i);
        if (*cols == 0)
            x[i] = json_number_value(row);
        for (size_t j = 0; j < *cols; j++)
            x[i * *cols + j] = json_number_value(json_array_get(row, j));
    }
    return x;
}

/* ---- the files form ------------------------------------------------- */

typedef struct {
    const char *dir, *stem;
    json_t *manifest;
} files_form;

/* The manifest entry of the file rel (relative to the document's
 * folder). */
static void list_file(files_form *ff, const char *rel)
{
    char *full = in_dir(ff->dir, rel), hex[65];
    long long bytes;
    digest_of(full, hex, &bytes);
    json_array_append_new(ff->manifest,
                          json_pack("{s:s, s:s, s:I}", "path", rel, "sha256",
                                    hex, "bytes", (json_int_t)bytes));
    free(full);
}

/* obj.key, when numbers, into STEM.arrays/NAME.npy, replaced by its
 * reference. */
static void to_file(files_form *ff, json_t *obj, const char *key,
                    const char *name)
{
    json_t *v = json_object_get(obj, key);
    if (!json_is_array(v))
        return;
    size_t rows, cols;
    double *x = numbers_of(v, &rows, &cols);
    char rel[256];
    snprintf(rel, sizeof rel, "%s.arrays/%s.npy", ff->stem, name);
    char *full = in_dir(ff->dir, rel);
    tn_write_npy(full, "<f8", rows, cols, x, 8);
    free(full);
    free(x);
    json_object_set_new(obj, key, json_string(rel));
    list_file(ff, rel);
}

/* Every trajectory value of root into STEM.arrays/trajectory.npy, each
 * record's value its range. */
static void trajectory_to_file(files_form *ff, json_t *root)
{
    json_t *list = json_object_get(root, "trajectory");
    size_t total = 0;
    for (size_t r = 0; r < json_array_size(list); r++)
        total += json_array_size(json_object_get(json_array_get(list, r),
                                                 "value"));
    if (total == 0)
        return;
    double *x = malloc(total * sizeof *x);
    ck_assert_ptr_nonnull(x);
    size_t off = 0;
    for (size_t r = 0; r < json_array_size(list); r++) {
        json_t *rec = json_array_get(list, r);
        const json_t *v = json_object_get(rec, "value");
        const size_t n = json_array_size(v);
        for (size_t k = 0; k < n; k++)
            x[off + k] = json_number_value(json_array_get(v, k));
        json_object_set_new(rec, "value", json_pack("{s:I, s:I}", "offset",
                                                    (json_int_t)off, "count",
                                                    (json_int_t)n));
        off += n;
    }
    char rel[256];
    snprintf(rel, sizeof rel, "%s.arrays/trajectory.npy", ff->stem);
    char *full = in_dir(ff->dir, rel);
    tn_write_npy(full, "<f8", total, 0, x, 8);
    free(full);
    free(x);
    json_object_set_new(root, "trajectory_values", json_string(rel));
    list_file(ff, rel);
}

/* DIR/in (an inline result) in the files form: DIR/STEM.json and
 * DIR/STEM.arrays/. */
static void make_files_form(const char *dir, const char *in,
                            const char *stem)
{
    json_t *root = tu_json_load_in(dir, in);
    char sub[256];
    snprintf(sub, sizeof sub, "%s.arrays", stem);
    char *p = in_dir(dir, sub);
    ck_assert_int_eq(mkdir(p, 0755), 0);
    free(p);
    files_form ff = {.dir = dir, .stem = stem, .manifest = json_array()};
    json_t *fin = json_object_get(root, "final");
    json_t *hn = json_object_get(root, "hypernetwork");
    to_file(&ff, root, "w0", "w0");
    to_file(&ff, root, "theta0", "theta0");
    if (hn != NULL) {
        to_file(&ff, hn, "W", "hypernetwork.W");
        to_file(&ff, hn, "b", "hypernetwork.b");
        to_file(&ff, hn, "v", "hypernetwork.v");
    }
    to_file(&ff, fin, "w", "final.w");
    to_file(&ff, fin, "v", "final.v");
    to_file(&ff, fin, "alpha", "final.alpha");
    trajectory_to_file(&ff, root);
    json_object_set_new(root, "array_files", ff.manifest);
    char name[256];
    snprintf(name, sizeof name, "%s.json", stem);
    tu_json_save_in(dir, name, root);
    json_decref(root);
}

/* A fresh folder with DIR/r.json, the reference's result of the vector at
 * repo-relative `vector` (the inline candidate), and DIR/c.json (+
 * c.arrays/), the same in the files form. */
static char *candidate_pair(const char *vector)
{
    char *dir = tu_tmpdir(), *v = tu_repo_path(vector), args[2048];
    snprintf(args, sizeof args, "run '%s' -o '%s/r.json'", v, dir);
    ck_assert_int_eq(tu_cli(args, NULL, NULL), 0);
    make_files_form(dir, "r.json", "c");
    free(v);
    return dir;
}

/* `pflref CMD VECTOR D/r.json OPTS` and the same with D/c.json: one exit
 * status, one report (paths aside); returns the status. */
static int same_verdict(const char *dir, const char *cmd, const char *vector,
                        const char *opts)
{
    char *v = tu_repo_path(vector), args[2048], *o1, *o2, *e1, *e2;
    snprintf(args, sizeof args, "%s '%s' '%s/r.json' %s", cmd, v, dir, opts);
    const int rc1 = tu_cli(args, &o1, &e1);
    snprintf(args, sizeof args, "%s '%s' '%s/c.json' %s", cmd, v, dir, opts);
    const int rc2 = tu_cli(args, &o2, &e2);
    ck_assert_msg(rc1 == rc2, "%s %s %s: exit %d inline, %d from files (%s)",
                  cmd, vector, opts, rc1, rc2, e2);
    ck_assert_msg(rc1 <= 1, "%s %s %s: exit %d: %s", cmd, vector, opts, rc1,
                  e1);
    char *r1 = strstr(cmd, "check") != NULL ? tu_report_without_paths(o1)
                                             : strdup(o1);
    char *r2 = strstr(cmd, "check") != NULL ? tu_report_without_paths(o2)
                                             : strdup(o2);
    ck_assert_msg(strcmp(r1, r2) == 0,
                  "%s %s %s: the reports differ:\ninline: %s\nfiles:  %s",
                  cmd, vector, opts, r1, r2);
    free(r1);
    free(r2);
    free(o1);
    free(o2);
    free(e1);
    free(e2);
    free(v);
    return rc1;
}

/* ---- round trips ---------------------------------------------------- */

/* Vectors whose results carry every kind of array: APFL (final w, v,
 * alpha), FedAvg (re-synchronisable), IFCA (theta0), pFedHN (the
 * hypernetwork W, b, v). */
static const char *const ROUND_TRIP[] = {
    APFL,
    "golden/fedavg/worked-lr-exponential.json",
    "golden/ifca/worked-given-models-linear.json",
    "golden/pfedhn/worked-linear-bias.json",
};

/* The same candidate inline and in files: one verdict, one report, for a
 * passing and a failing candidate, with and without --resync. */
START_TEST(test_roundtrip_check)
{
    const char *vector = ROUND_TRIP[_i];
    char *dir = candidate_pair(vector);
    ck_assert_int_eq(same_verdict(dir, "check", vector, "--json"), 0);
    const int resync = strstr(vector, "fedavg") != NULL;
    if (resync)
        ck_assert_int_eq(same_verdict(dir, "check", vector,
                                      "--json --resync"), 0);
    /* a failing candidate, in both forms */
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "rm -rf '%s/c.json' '%s/c.arrays'", dir, dir);
    ck_assert_int_eq(system(cmd), 0);
    tu_result_perturb(dir, "r.json");
    make_files_form(dir, "r.json", "c");
    ck_assert_int_eq(same_verdict(dir, "check", vector, "--json"), 1);
    if (resync)
        ck_assert_int_eq(same_verdict(dir, "check", vector,
                                      "--json --resync"), 1);
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

/* diagnose reads the files form too: the same diagnosis. */
START_TEST(test_roundtrip_diagnose)
{
    char *dir = candidate_pair(APFL);
    tu_result_perturb(dir, "r.json");
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "rm -rf '%s/c.json' '%s/c.arrays'", dir, dir);
    ck_assert_int_eq(system(cmd), 0);
    make_files_form(dir, "r.json", "c");
    same_verdict(dir, "diagnose", APFL, "--json --budget 20");
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

/* pflref_result_inline gives back the inline result: every referenced
 * array and ranged value with its numbers, no manifest; and refuses a
 * manifest that disagrees, naming it. */
START_TEST(test_result_inline)
{
    char *dir = candidate_pair("golden/pfedhn/worked-linear-bias.json");
    char *cpath = in_dir(dir, "c.json"), *text = tu_read(cpath), *self;
    pflref_error err;
    ck_assert_int_eq(pflref_result_inline(text, strlen(text), dir, &self,
                                          &err), PFLREF_OK);
    json_t *got = json_loads(self, 0, NULL), *want = tu_json_load_in(dir, "r.json");
    ck_assert_ptr_nonnull(got);
    static const char *const keys[] = {"w0", "final", "hypernetwork",
                                       "trajectory", "metrics", "schedule"};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
        ck_assert_msg(json_equal(json_object_get(got, keys[k]),
                                 json_object_get(want, keys[k])),
                      "%s differs once inlined", keys[k]);
    ck_assert_ptr_null(json_object_get(got, "array_files"));
    ck_assert_ptr_null(json_object_get(got, "trajectory_values"));
    json_decref(got);
    json_decref(want);
    pflref_text_free(self);
    /* the manifest is checked: one byte more is refused */
    json_t *c = tu_json_load_in(dir, "c.json");
    json_t *e = json_array_get(json_object_get(c, "array_files"), 1);
    json_object_set_new(e, "bytes", json_integer(
        json_integer_value(json_object_get(e, "bytes")) + 1));
    char *bad = json_dumps(c, JSON_COMPACT);
    ck_assert_int_eq(pflref_result_inline(bad, strlen(bad), dir, &self,
                                          &err), PFLREF_EINVAL);
    ck_assert_ptr_null(self);
    ck_assert_str_eq(err.where, "array_files[1]");
    ck_assert_int_eq(pflref_result_inline(NULL, 0, dir, &self, &err),
                     PFLREF_EINVAL);
    free(bad);
    json_decref(c);
    free(text);
    free(cpath);
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

/* plot sweep draws an interp result in the files form as it draws the
 * inline one (gnuplot's picture, byte for byte). */
START_TEST(test_plot_sweep_files)
{
    if (system("command -v gnuplot >/dev/null 2>&1") != 0)
        return;   /* plot needs gnuplot (tests/test_plot.c says so) */
    char *dir =
        candidate_pair("golden/interp/worked-grid-validation-linear.json");
    ck_assert_int_eq(tu_cli_in(dir, "plot sweep -o $D/a.svg $D/r.json", NULL,
                            NULL), 0);
    char *err = NULL;
    ck_assert_msg(tu_cli_in(dir, "plot sweep -o $D/b.svg $D/c.json", NULL,
                         &err) == 0, "plot sweep from files: %s", err);
    char *a = in_dir(dir, "a.svg"), *b = in_dir(dir, "b.svg");
    char *ta = tu_read(a), *tb = tu_read(b);
    ck_assert_msg(ta != NULL && tb != NULL && strcmp(ta, tb) == 0,
                  "the two pictures differ");
    free(ta);
    free(tb);
    free(a);
    free(b);
    free(err);
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

/* References follow problem data's path rule: relative to the JSON's
 * folder, ".." and absolute paths allowed; an .npz member and '<f4' are
 * read as for problem data. */
START_TEST(test_reference_paths)
{
    char *dir = candidate_pair(APFL);
    char *sub = in_dir(dir, "sub");
    ck_assert_int_eq(mkdir(sub, 0755), 0);
    json_t *c = tu_json_load_in(dir, "c.json");
    json_t *fin = json_object_get(c, "final");
    /* final.v from above the candidate's folder, final.w by its absolute
     * path, w0 as a member of an archive */
    json_object_set_new(fin, "v", json_string("../c.arrays/final.v.npy"));
    json_object_set_new(fin, "alpha",
                        json_string("../c.arrays/final.alpha.npy"));
    char *absw = in_dir(dir, "c.arrays/final.w.npy");
    json_object_set_new(fin, "w", json_string(absw));
    json_object_set_new(c, "trajectory_values",
                        json_string("../c.arrays/trajectory.npy"));
    char *w0 = in_dir(dir, "c.arrays/w0.npy"), *zp = in_dir(sub, "a.npz");
    int zerr;
    zip_t *z = zip_open(zp, ZIP_CREATE | ZIP_TRUNCATE, &zerr);
    ck_assert_ptr_nonnull(z);
    zip_source_t *src = zip_source_file(z, w0, 0, -1);
    ck_assert_ptr_nonnull(src);
    ck_assert_int_ge(zip_file_add(z, "x.npy", src, 0), 0);
    ck_assert_int_eq(zip_close(z), 0);
    json_object_set_new(c, "w0", json_string("a.npz:x"));
    json_object_del(c, "array_files");
    tu_json_save_in(sub, "c.json", c);
    char args[4096], *v = tu_repo_path(APFL), *err = NULL;
    snprintf(args, sizeof args, "check '%s' '%s/c.json'", v, sub);
    ck_assert_msg(tu_cli(args, NULL, &err) == 0, "%s", err);
    free(err);
    /* final.v as float32: accepted, widened, held to the fp32 floor */
    json_t *r = tu_json_load_in(dir, "r.json");
    size_t rows, cols;
    double *x = numbers_of(json_object_get(json_object_get(r, "final"), "v"),
                           &rows, &cols);
    float *f = malloc(rows * cols * sizeof *f);
    ck_assert_ptr_nonnull(f);
    for (size_t i = 0; i < rows * cols; i++)
        f[i] = (float)x[i];
    char *fp = in_dir(sub, "v32.npy");
    tn_write_npy(fp, "<f4", rows, cols, f, 4);
    json_object_set_new(fin, "v", json_string("v32.npy"));
    tu_json_save_in(sub, "c.json", c);
    snprintf(args, sizeof args, "check '%s' '%s/c.json' "
             "--candidate-precision fp32", v, sub);
    ck_assert_msg(tu_cli(args, NULL, &err) == 0, "%s", err);
    free(err);
    free(fp);
    free(f);
    free(x);
    json_decref(r);
    free(v);
    free(w0);
    free(zp);
    free(absw);
    json_decref(c);
    free(sub);
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

/* ---- spec init arrays in files -------------------------------------- */

/* init arrays of four algorithms: the vector, and the init members to
 * write to files (a member "hypernetwork" stands for its W, b and v). */
static const struct {
    const char *vector;
    const char *members[3];
} INIT_CASES[] = {
    {APFL, {"w", NULL}},
    {"golden/ifca/worked-given-models-linear.json", {"cluster_models", NULL}},
    {"golden/lora/worked-hand-lora.json", {"w", "lora", NULL}},
    {"golden/pfedhn/worked-linear-bias.json", {"hypernetwork", NULL}},
};

/* DIR/s.json := the vector's spec; DIR/t.json := the same with the init
 * members in files (init.NAME.npy; the hypernetwork's v as a member of
 * hn.npz when zip is there). */
static void init_pair(const char *dir, size_t q)
{
    char *vp = tu_repo_path(INIT_CASES[q].vector);
    json_error_t je;
    json_t *vec = json_load_file(vp, 0, &je);
    ck_assert_ptr_nonnull(vec);
    json_t *spec = json_object_get(vec, "spec");
    tu_json_save_in(dir, "s.json", spec);
    files_form ff = {.dir = dir, .stem = "t", .manifest = json_array()};
    char *sub = in_dir(dir, "t.arrays");
    ck_assert_int_eq(mkdir(sub, 0755), 0);
    json_t *init = json_object_get(spec, "init");
    for (size_t k = 0; INIT_CASES[q].members[k] != NULL; k++) {
        const char *m = INIT_CASES[q].members[k];
        json_t *hn = json_object_get(init, "hypernetwork");
        if (strcmp(m, "hypernetwork") == 0) {
            to_file(&ff, hn, "W", "init.hypernetwork.W");
            to_file(&ff, hn, "b", "init.hypernetwork.b");
            to_file(&ff, hn, "v", "init.hypernetwork.v");
        } else {
            char name[64];
            snprintf(name, sizeof name, "init.%s", m);
            to_file(&ff, init, m, name);
        }
    }
    tu_json_save_in(dir, "t.json", spec);
    json_decref(ff.manifest);
    json_decref(vec);
    free(sub);
    free(vp);
}

/* A spec whose init arrays are files runs as the inline spec (the same
 * result, byte for byte), records each file's SHA-256 and size in
 * spec->init_files, and freezes into the same self-contained vector,
 * which verify reproduces. */
START_TEST(test_init_files)
{
    char *dir = tu_tmpdir();
    init_pair(dir, (size_t)_i);
    ck_assert_int_eq(tu_cli_in(dir, "run $D/s.json -o $D/a.json", NULL, NULL),
                     0);
    char *err = NULL;
    ck_assert_msg(tu_cli_in(dir, "run $D/t.json -o $D/b.json", NULL, &err) == 0,
                  "%s", err);
    free(err);
    /* the same result but for the files' record, init.data_files (its
     * entries, when the writer emits them, are the spec's: below) */
    json_t *ra = tu_json_load_in(dir, "a.json"), *rb = tu_json_load_in(dir, "b.json");
    json_t *recorded = json_incref(json_object_get(
        json_object_get(rb, "init"), "data_files"));
    json_object_del(json_object_get(rb, "init"), "data_files");
    char *ta = json_dumps(ra, JSON_PRESERVE_ORDER | JSON_COMPACT |
                                  JSON_REAL_PRECISION(17));
    char *tb = json_dumps(rb, JSON_PRESERVE_ORDER | JSON_COMPACT |
                                  JSON_REAL_PRECISION(17));
    ck_assert_msg(strcmp(ta, tb) == 0, "%s: the results differ",
                  INIT_CASES[_i].vector);
    /* the files, as the result's init.data_files records them */
    pflref_spec *spec = NULL;
    pflref_error e;
    char *t = in_dir(dir, "t.json");
    ck_assert_int_eq(pflref_spec_read_file(t, &spec, &e), PFLREF_OK);
    ck_assert_uint_ge(spec->n_init_files, 1);
    for (size_t i = 0; i < spec->n_init_files; i++) {
        char *full = in_dir(dir, spec->init_files[i].path), hex[65];
        long long bytes;
        digest_of(full, hex, &bytes);
        ck_assert_str_eq(spec->init_files[i].sha256, hex);
        ck_assert_int_eq((long long)spec->init_files[i].bytes, bytes);
        if (recorded != NULL) {
            json_t *r = json_array_get(recorded, i);
            ck_assert_str_eq(json_string_value(json_object_get(r, "path")),
                             spec->init_files[i].path);
            ck_assert_str_eq(json_string_value(json_object_get(r, "sha256")),
                             hex);
        }
        free(full);
    }
    pflref_spec_free(spec);
    json_decref(recorded);
    json_decref(ra);
    json_decref(rb);
    /* freeze: the same vector, numbers inline */
    ck_assert_int_eq(tu_cli_in(dir, "freeze $D/s.json -o $D/v1.json", NULL,
                            NULL), 0);
    ck_assert_int_eq(tu_cli_in(dir, "freeze $D/t.json -o $D/v2.json", NULL,
                            NULL), 0);
    char *v1 = in_dir(dir, "v1.json"), *v2 = in_dir(dir, "v2.json");
    char *t1 = tu_read(v1), *t2 = tu_read(v2);
    ck_assert_msg(strcmp(t1, t2) == 0, "%s: the frozen vectors differ",
                  INIT_CASES[_i].vector);
    ck_assert_ptr_null(strstr(t2, ".npy"));
    ck_assert_int_eq(tu_cli_in(dir, "verify $D/v2.json", NULL, NULL), 0);
    free(t1);
    free(t2);
    free(v1);
    free(v2);
    free(t);
    free(ta);
    free(tb);
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

/* ---- bad inputs R1-R27 ----------------------------------------------- */

/* DIR/c.arrays/NAME.npy := a header `dict` over nbytes of data. */
static void npy_raw(const char *dir, const char *name, const char *dict,
                    size_t nbytes)
{
    unsigned char buf[4096];
    double data[256];
    for (size_t i = 0; i < 256; i++)
        data[i] = 0.375 * (double)i - 2.5;
    char rel[256];
    snprintf(rel, sizeof rel, "c.arrays/%s.npy", name);
    char *p = in_dir(dir, rel);
    tn_write_bytes(p, buf, tn_npy_bytes(buf, sizeof buf, 1, dict, data,
                                        nbytes));
    free(p);
}

/* DIR/c.arrays/NAME.npy := rows × cols (0: 1-D) good '<f8' numbers. */
static void npy_good(const char *dir, const char *name, size_t rows,
                     size_t cols)
{
    double data[256];
    for (size_t i = 0; i < 256; i++)
        data[i] = 0.375 * (double)i - 2.5;
    char rel[256];
    snprintf(rel, sizeof rel, "c.arrays/%s.npy", name);
    char *p = in_dir(dir, rel);
    tn_write_npy(p, "<f8", rows, cols, data, 8);
    free(p);
}

static void r_truncated(const char *d)
{
    npy_raw(d, "final.w", "{'descr': '<f8', 'fortran_order': False, "
            "'shape': (3,), }", 16);
}
static void r_int_dtype(const char *d)
{
    int64_t v[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    char *p = in_dir(d, "c.arrays/final.v.npy");
    tn_write_npy(p, "<i8", 3, 3, v, 8);
    free(p);
}
static void r_big_endian(const char *d)
{
    npy_raw(d, "final.w", "{'descr': '>f8', 'fortran_order': False, "
            "'shape': (3,), }", 24);
}
static void r_rank(const char *d) { npy_good(d, "final.v", 9, 0); }
static void r_length(const char *d) { npy_good(d, "final.w", 4, 0); }
static void r_fortran(const char *d)
{
    npy_raw(d, "final.v", "{'descr': '<f8', 'fortran_order': True, "
            "'shape': (3, 3), }", 72);
}
static void r_infinite(const char *d)
{
    double a[3] = {0.25, INFINITY, 0.5};
    char *p = in_dir(d, "c.arrays/final.alpha.npy");
    tn_write_npy(p, "<f8", 3, 0, a, 8);
    free(p);
}
static void r_missing(const char *d)
{
    char *p = in_dir(d, "c.arrays/final.v.npy");
    ck_assert_int_eq(unlink(p), 0);
    free(p);
}
static void r_folder(const char *d)
{
    char *p = in_dir(d, "c.arrays/final.w.npy");
    ck_assert_int_eq(unlink(p), 0);
    ck_assert_int_eq(mkdir(p, 0755), 0);
    free(p);
}
static void r_fifo(const char *d)
{
    char *p = in_dir(d, "c.arrays/final.w.npy");
    ck_assert_int_eq(unlink(p), 0);
    ck_assert_int_eq(mkfifo(p, 0644), 0);
    free(p);
}

/* Edit c.json: the manifest entry of `path` (NULL: none), then the
 * trajectory record `rec`'s value (NULL: none). */
static void edit_candidate(const char *d, const char *path,
                           const char *field, json_t *value, long rec,
                           json_t *range)
{
    json_t *c = tu_json_load_in(d, "c.json");
    json_t *m = json_object_get(c, "array_files");
    for (size_t j = 0; path != NULL && j < json_array_size(m); j++) {
        json_t *e = json_array_get(m, j);
        if (strcmp(json_string_value(json_object_get(e, "path")), path) != 0)
            continue;
        if (field != NULL)
            json_object_set(e, field, value);
        else
            json_array_remove(m, j);
        break;
    }
    if (rec >= 0)
        json_object_set(json_array_get(json_object_get(c, "trajectory"),
                                       (size_t)rec), "value", range);
    tu_json_save_in(d, "c.json", c);
    json_decref(c);
    json_decref(value);
    json_decref(range);
}

static void r_bytes(const char *d)
{
    edit_candidate(d, "c.arrays/final.v.npy", "bytes", json_integer(1),
                   -1, NULL);
}
static void r_sha(const char *d)
{
    edit_candidate(d, "c.arrays/final.v.npy", "sha256",
                   json_string("0000000000000000000000000000000000000000"
                               "000000000000000000000000"), -1, NULL);
}
static void r_unreferenced(const char *d)
{
    npy_good(d, "extra", 2, 0);
    json_t *c = tu_json_load_in(d, "c.json");
    char *p = in_dir(d, "c.arrays/extra.npy"), hex[65];
    long long bytes;
    digest_of(p, hex, &bytes);
    json_array_append_new(json_object_get(c, "array_files"),
                          json_pack("{s:s, s:s, s:I}", "path",
                                    "c.arrays/extra.npy", "sha256", hex,
                                    "bytes", (json_int_t)bytes));
    tu_json_save_in(d, "c.json", c);
    json_decref(c);
    free(p);
}
static void r_unlisted(const char *d)
{
    edit_candidate(d, "c.arrays/trajectory.npy", NULL, NULL, -1, NULL);
}
static void r_beyond(const char *d)
{
    edit_candidate(d, NULL, NULL, NULL, 3,
                   json_pack("{s:i, s:i}", "offset", 140, "count", 5));
}
static void r_negative(const char *d)
{
    edit_candidate(d, NULL, NULL, NULL, 3,
                   json_pack("{s:i, s:i}", "offset", -1, "count", 3));
}
static void r_count0(const char *d)
{
    edit_candidate(d, NULL, NULL, NULL, 3,
                   json_pack("{s:i, s:i}", "offset", 0, "count", 0));
}
static void r_real(const char *d)
{
    edit_candidate(d, NULL, NULL, NULL, 3,
                   json_pack("{s:f, s:i}", "offset", 1.5, "count", 3));
}
static void r_no_values(const char *d)
{
    json_t *c = tu_json_load_in(d, "c.json");
    json_object_del(c, "trajectory_values");
    json_object_del(c, "array_files");
    tu_json_save_in(d, "c.json", c);
    json_decref(c);
}
static void r_values_2d(const char *d)
{
    npy_good(d, "trajectory", 2, 71);
}
static void r_bad_hex(const char *d)
{
    edit_candidate(d, "c.arrays/w0.npy", "sha256",
                   json_string("ABCDEF"), -1, NULL);
}
static void r_w0_shape(const char *d) { npy_good(d, "w0", 2, 0); }

/* A bad candidate row: `pflref check` of APFL's vector and DIR/c.json,
 * spoiled by make. */
typedef struct {
    const char *no, *name;
    void (*make)(const char *dir);
    const char *where;      /* the field after "candidate:"          */
    const char *file;       /* the file the message must name        */
    const char *phrase;     /* and what it must say                  */
} candidate_case;

static const candidate_case CANDIDATE_CASES[] = {
    {"R1", "truncated file", r_truncated, "final.w", "c.arrays/final.w.npy",
     "truncated: header field 'shape' promises 3 elements"},
    {"R2", "integer dtype", r_int_dtype, "final.v", "c.arrays/final.v.npy",
     "header field 'descr' is '<i8': final.v holds floats"},
    {"R3", "big-endian dtype", r_big_endian, "final.w",
     "c.arrays/final.w.npy", "header field 'descr' is '>f8'"},
    {"R4", "wrong rank", r_rank, "final.v", "c.arrays/final.v.npy",
     "header field 'shape' is (9,): final.v is (N, P) = (3, 3)"},
    {"R5", "wrong length", r_length, "final.w", "c.arrays/final.w.npy",
     "header field 'shape' is (4,): final.w is (P,) = (3,)"},
    {"R6", "Fortran order", r_fortran, "final.v", "c.arrays/final.v.npy",
     "header field 'fortran_order' is True"},
    {"R7", "a non-finite value", r_infinite, "final.alpha",
     "c.arrays/final.alpha.npy", "element 1 is inf: the data must be finite"},
    {"R8", "missing file", r_missing, "final.v", "c.arrays/final.v.npy",
     "cannot open"},
    {"R9", "a folder", r_folder, "final.w", "c.arrays/final.w.npy",
     "is not a regular file (a folder)"},
    {"R10", "a FIFO", r_fifo, "final.w", "c.arrays/final.w.npy",
     "is not a regular file (a FIFO (named pipe))"},
    {"R11", "manifest: size differs", r_bytes, "array_files[",
     "c.arrays/final.v.npy", "bytes, the manifest says 1"},
    {"R12", "manifest: SHA-256 differs", r_sha, "array_files[",
     "c.arrays/final.v.npy", ", the manifest says 0000"},
    {"R13", "manifest: a file listed but not referenced", r_unreferenced,
     "array_files[", "c.arrays/extra.npy",
     "which no field of the document references"},
    {"R14", "manifest: a file referenced but not listed", r_unlisted,
     "array_files", "c.arrays/trajectory.npy",
     "(named by trajectory_values) is not listed"},
    {"R15", "range beyond trajectory_values", r_beyond,
     "trajectory[3].value", "c.arrays/trajectory.npy",
     "{offset 140, count 5} reaches past the 142 numbers"},
    {"R16", "range with a negative offset", r_negative,
     "trajectory[3].value.offset", "c.arrays/trajectory.npy",
     "offset must be an integer >= 0, found -1"},
    {"R17", "range of count 0", r_count0, "trajectory[3].value.count",
     "c.arrays/trajectory.npy", "count must be an integer >= 1, found 0"},
    {"R18", "range of non-integers", r_real, "trajectory[3].value.offset",
     "c.arrays/trajectory.npy",
     "offset must be an integer >= 0, found a real number"},
    {"R19", "range without trajectory_values", r_no_values,
     "trajectory[0].value", "trajectory_values",
     "takes its numbers from the top-level \"trajectory_values\", which "
     "the document does not have"},
    {"R20", "trajectory_values not 1-D", r_values_2d, "trajectory_values",
     "c.arrays/trajectory.npy",
     "header field 'shape' is (2, 71): trajectory_values is (n,)"},
    {"R21", "manifest: malformed entry", r_bad_hex, "array_files[0].sha256",
     "c.arrays/w0.npy", "expected 64 lower-case hex digits"},
    {"R22", "a field not compared, wrong shape", r_w0_shape, "w0",
     "c.arrays/w0.npy", "header field 'shape' is (2,): w0 is (P,) = (3,)"},
};
enum { N_CANDIDATE_CASES = sizeof CANDIDATE_CASES / sizeof CANDIDATE_CASES[0] };

START_TEST(test_bad_candidate)
{
    const candidate_case *k = &CANDIDATE_CASES[_i];
    char *dir = candidate_pair(APFL);
    k->make(dir);
    size_t before_len, after_len;
    char *before = tu_tree(dir, &before_len);
    char *out = NULL, *err = NULL, *v = tu_repo_path(APFL), args[2048];
    snprintf(args, sizeof args, "check '%s' '%s/c.json'", v, dir);
    const int rc = tu_cli(args, &out, &err);
    ck_assert_msg(rc == 2, "%s (%s): exit %d, want 2; stderr: %s", k->no,
                  k->name, rc, err);
    char where[128];
    snprintf(where, sizeof where, "candidate:%s", k->where);
    ck_assert_msg(strstr(err, where) != NULL && strstr(err, k->file) != NULL &&
                      strstr(err, k->phrase) != NULL,
                  "%s (%s): stderr should name %s and %s and say \"%s\": %s",
                  k->no, k->name, where, k->file, k->phrase, err);
    ck_assert_msg(strstr(out, "1 malformed") != NULL, "%s: stdout: %s",
                  k->no, out);
    char *after = tu_tree(dir, &after_len);
    ck_assert_msg(before_len == after_len &&
                      memcmp(before, after, before_len) == 0,
                  "%s: the candidate's folder changed", k->no);
    free(before);
    free(after);
    free(out);
    free(err);
    free(v);
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

/* A bad spec or vector row: `ARGS` on a folder prepared by make. */
typedef struct {
    const char *no, *name;
    void (*make)(const char *dir);
    const char *args;        /* with $D for the folder               */
    const char *where, *file, *phrase;
    const char *absent;      /* an output that must not exist, or NULL */
} doc_case;

/* DIR/s.json: APFL's spec with init.w a file (w.npy, written by
 * write_w with n numbers of dtype descr, or not at all). */
static void spec_with_w(const char *d, const char *descr, size_t n)
{
    char *vp = tu_repo_path(APFL);
    json_t *vec = json_load_file(vp, 0, NULL);
    json_t *spec = json_object_get(vec, "spec");
    json_object_set_new(json_object_get(spec, "init"), "w",
                        json_string("w.npy"));
    tu_json_save_in(d, "s.json", spec);
    json_decref(vec);
    free(vp);
    if (descr != NULL) {
        double w[8] = {0.5, -0.25, 1.5, 2.0, 0.0, 1.0, 3.0, 4.0};
        int32_t wi[8] = {1, 2, 3, 4, 5, 6, 7, 8};
        char *p = in_dir(d, "w.npy");
        tn_write_npy(p, descr, n, 0, descr[1] == 'i' ? (void *)wi : (void *)w,
                     descr[2] == '4' ? 4 : 8);
        free(p);
    }
}
static void s_w_length(const char *d) { spec_with_w(d, "<f8", 4); }
static void s_w_missing(const char *d) { spec_with_w(d, NULL, 0); }
static void s_w_int(const char *d) { spec_with_w(d, "<i4", 3); }

/* DIR/v.json: APFL's vector with spec.init.w (init) or expected.final.w
 * (!init) a file reference, hashed again: without a manifest (init), or
 * with one that lists another file (!init). */
static void vector_with_ref(const char *d, int init)
{
    char *vp = tu_repo_path(APFL), *text = tu_read(vp);
    json_t *vec = json_loads(text, 0, NULL);
    json_t *obj = init ? json_object_get(json_object_get(vec, "spec"), "init")
                       : json_object_get(json_object_get(vec, "expected"),
                                         "final");
    json_object_set_new(obj, "w", json_string("w.npy"));
    if (!init)
        json_object_set_new(vec, "array_files",
                            json_pack("[{s:s, s:s, s:i}]", "path", "x.npy",
                                      "sha256",
                                      "00000000000000000000000000000000"
                                      "00000000000000000000000000000000",
                                      "bytes", 152));
    char *edited = json_dumps(vec, JSON_PRESERVE_ORDER | JSON_INDENT(1) |
                                       JSON_REAL_PRECISION(17));
    char *hashed = tu_vector_hashed(edited, 1), *p = in_dir(d, "v.json");
    ck_assert_int_eq(tu_write(p, hashed), 0);
    double w[3] = {0.5, -0.25, 1.5};
    char *wp = in_dir(d, "w.npy");
    tn_write_npy(wp, "<f8", 3, 0, w, 8);
    free(wp);
    free(p);
    free(hashed);
    free(edited);
    json_decref(vec);
    free(text);
    free(vp);
}
static void v_init_ref(const char *d) { vector_with_ref(d, 1); }
static void v_expected_ref(const char *d) { vector_with_ref(d, 0); }

static const doc_case DOC_CASES[] = {
    {"R23", "spec init: wrong length", s_w_length,
     "run $D/s.json -o $D/r.json", "init.w", "w.npy",
     "header field 'shape' is (4,): init.w is (P,) = (3,)", "r.json"},
    {"R24", "spec init: missing file", s_w_missing,
     "run $D/s.json -o $D/r.json", "init.w", "w.npy", "cannot open w.npy",
     "r.json"},
    {"R25", "spec init: integer dtype", s_w_int,
     "run $D/s.json -o $D/r.json", "init.w", "w.npy",
     "header field 'descr' is '<i4': init.w holds floats", "r.json"},
    {"R26", "vector: a file reference without array_files", v_init_ref,
     "verify $D/v.json", "spec.init.w", "w.npy",
     "is a file reference, and the vector has no \"array_files\"", NULL},
    {"R27", "vector: a file reference not listed in array_files",
     v_expected_ref, "verify $D/v.json", "expected.final.w", "w.npy",
     "w.npy is not listed in \"array_files\"", NULL},
};
enum { N_DOC_CASES = sizeof DOC_CASES / sizeof DOC_CASES[0] };

START_TEST(test_bad_document)
{
    const doc_case *k = &DOC_CASES[_i];
    char *dir = tu_tmpdir(), *out = NULL, *err = NULL;
    k->make(dir);
    const int rc = tu_cli_in(dir, k->args, &out, &err);
    ck_assert_msg(rc == 2, "%s (%s): exit %d, want 2; stderr: %s", k->no,
                  k->name, rc, err);
    ck_assert_msg(strstr(err, k->where) != NULL &&
                      strstr(err, k->file) != NULL &&
                      strstr(err, k->phrase) != NULL,
                  "%s (%s): stderr should name %s and %s and say \"%s\": %s",
                  k->no, k->name, k->where, k->file, k->phrase, err);
    if (k->absent != NULL) {
        char *p = in_dir(dir, k->absent);
        ck_assert_msg(!tu_exists(p), "%s: %s was written", k->no, k->absent);
        ck_assert_msg(out[0] == '\0', "%s: stdout: %s", k->no, out);
        free(p);
    }
    free(out);
    free(err);
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

/* Every row is in docs/bad-inputs.md with its class and test. */
START_TEST(test_arrays_catalogue)
{
    tu_catalogue_row rows[N_CANDIDATE_CASES + N_DOC_CASES];
    static char tests[N_CANDIDATE_CASES + N_DOC_CASES][48];
    for (size_t i = 0; i < N_CANDIDATE_CASES; i++) {
        snprintf(tests[i], sizeof tests[i], "test_bad_candidate:%zu", i);
        rows[i] = (tu_catalogue_row){CANDIDATE_CASES[i].no,
                                     CANDIDATE_CASES[i].name, tests[i]};
    }
    for (size_t i = 0; i < N_DOC_CASES; i++) {
        const size_t r = N_CANDIDATE_CASES + i;
        snprintf(tests[r], sizeof tests[r], "test_bad_document:%zu", i);
        rows[r] = (tu_catalogue_row){DOC_CASES[i].no, DOC_CASES[i].name,
                                     tests[r]};
    }
    tu_assert_catalogue(rows, N_CANDIDATE_CASES + N_DOC_CASES, 'R');
}
END_TEST

Suite *arrays_suite(void)
{
    Suite *s = suite_create("arrays");
    TCase *tc = tcase_create("roundtrip");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, test_roundtrip_check, 0,
                        sizeof ROUND_TRIP / sizeof ROUND_TRIP[0]);
    tcase_add_test(tc, test_roundtrip_diagnose);
    tcase_add_test(tc, test_result_inline);
    tcase_add_test(tc, test_plot_sweep_files);
    tcase_add_test(tc, test_reference_paths);
    tcase_add_loop_test(tc, test_init_files, 0,
                        sizeof INIT_CASES / sizeof INIT_CASES[0]);
    suite_add_tcase(s, tc);
    TCase *bad = tcase_create("bad");
    tcase_set_timeout(bad, 120);
    tcase_add_loop_test(bad, test_bad_candidate, 0, N_CANDIDATE_CASES);
    tcase_add_loop_test(bad, test_bad_document, 0, N_DOC_CASES);
    tcase_add_test(bad, test_arrays_catalogue);
    suite_add_tcase(s, bad);
    return s;
}
